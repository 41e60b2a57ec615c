/**
 * @file rbtree.c
 * @brief Intrusive red-black tree with a cached leftmost node, and the sector-sorted helpers.
 *
 * Colour lives in bit 0 of parent_color: 0 is red, 1 is black. Nodes are pointer aligned,
 * so the bit is free, and a node freshly linked with parent_color = parent is already red,
 * which is what insertion wants. Empty children are NULL and count as black.
 *
 * Everything is iterative: no recursion, no allocation, O(log n) per update.
 */
#include "elv_internal.h"

#define RB_RED ((uintptr_t)0)
#define RB_BLACK ((uintptr_t)1)

static inline uintptr_t rb_color(const struct elv_rb_node *n)
{
	return n->parent_color & 1u;
}

/* NULL children are black leaves. */
static inline int rb_is_red(const struct elv_rb_node *n)
{
	return n != NULL && rb_color(n) == RB_RED;
}

static inline void rb_set_black(struct elv_rb_node *n)
{
	n->parent_color |= RB_BLACK;
}

static inline void rb_set_red(struct elv_rb_node *n)
{
	n->parent_color &= ~(uintptr_t)1;
}

static inline void rb_set_parent(struct elv_rb_node *n, struct elv_rb_node *p)
{
	n->parent_color = (uintptr_t)p | rb_color(n);
}

static inline void rb_set_parent_color(struct elv_rb_node *n, struct elv_rb_node *p,
				       uintptr_t color)
{
	n->parent_color = (uintptr_t)p | color;
}

/* Point whatever referenced @old (its parent's child slot or the root) at @new. */
static void rb_replace_child(struct elv_rb_root *t, struct elv_rb_node *parent,
			     const struct elv_rb_node *old, struct elv_rb_node *new)
{
	if (parent == NULL)
		t->root = new;
	else if (parent->left == old)
		parent->left = new;
	else
		parent->right = new;
}

/*
 * Rotate left around @x: its right child y takes its place and x becomes y's left child.
 * Colours are untouched; callers recolour.
 */
static void rb_rotate_left(struct elv_rb_root *t, struct elv_rb_node *x)
{
	struct elv_rb_node *y = x->right;
	struct elv_rb_node *p = elv_rb_parent(x);

	x->right = y->left;
	if (y->left)
		rb_set_parent(y->left, x);
	y->left = x;
	rb_set_parent(y, p);
	rb_replace_child(t, p, x, y);
	rb_set_parent(x, y);
}

/* Mirror image of rb_rotate_left(). */
static void rb_rotate_right(struct elv_rb_root *t, struct elv_rb_node *x)
{
	struct elv_rb_node *y = x->left;
	struct elv_rb_node *p = elv_rb_parent(x);

	x->left = y->right;
	if (y->right)
		rb_set_parent(y->right, x);
	y->right = x;
	rb_set_parent(y, p);
	rb_replace_child(t, p, x, y);
	rb_set_parent(x, y);
}

/* Restore the colour rules after linking the red node @n. */
static void rb_insert_fixup(struct elv_rb_root *t, struct elv_rb_node *n)
{
	struct elv_rb_node *p;

	while ((p = elv_rb_parent(n)) != NULL && rb_is_red(p)) {
		/* A red parent is never the root, so the grandparent exists. */
		struct elv_rb_node *g = elv_rb_parent(p);
		struct elv_rb_node *u = (p == g->left) ? g->right : g->left;

		if (rb_is_red(u)) {
			/* Push the blackness down from g and retry two levels up. */
			rb_set_black(p);
			rb_set_black(u);
			rb_set_red(g);
			n = g;
			continue;
		}
		if (p == g->left) {
			if (n == p->right) {
				rb_rotate_left(t, p);
				p = n;
			}
			rb_rotate_right(t, g);
		} else {
			if (n == p->left) {
				rb_rotate_right(t, p);
				p = n;
			}
			rb_rotate_left(t, g);
		}
		/* p now heads the subtree where g was. */
		rb_set_black(p);
		rb_set_red(g);
		break;
	}
	rb_set_black(t->root);
}

void elv_rb_insert(struct elv_rb_root *t, struct elv_rb_node *n, struct elv_rb_node *parent,
		   struct elv_rb_node **link, int leftmost)
{
	rb_set_parent_color(n, parent, RB_RED);
	n->left = NULL;
	n->right = NULL;
	*link = n;
	if (leftmost || t->first == NULL)
		t->first = n;
	rb_insert_fixup(t, n);
}

/*
 * Restore the black height after a black node was removed above @x (possibly NULL), whose
 * parent is @parent: x carries one "extra black" until it can be absorbed.
 */
static void rb_erase_fixup(struct elv_rb_root *t, struct elv_rb_node *x,
			   struct elv_rb_node *parent)
{
	while (x != t->root && !rb_is_red(x)) {
		struct elv_rb_node *w;

		if (x == parent->left) {
			w = parent->right; /* non-NULL: that side has a black height >= 1 */
			if (rb_is_red(w)) {
				rb_set_black(w);
				rb_set_red(parent);
				rb_rotate_left(t, parent);
				w = parent->right;
			}
			if (!rb_is_red(w->left) && !rb_is_red(w->right)) {
				rb_set_red(w);
				x = parent;
				parent = elv_rb_parent(x);
				continue;
			}
			if (!rb_is_red(w->right)) {
				rb_set_black(w->left);
				rb_set_red(w);
				rb_rotate_right(t, w);
				w = parent->right;
			}
			rb_set_parent_color(w, elv_rb_parent(w), rb_color(parent));
			rb_set_black(parent);
			rb_set_black(w->right);
			rb_rotate_left(t, parent);
		} else {
			w = parent->left;
			if (rb_is_red(w)) {
				rb_set_black(w);
				rb_set_red(parent);
				rb_rotate_right(t, parent);
				w = parent->left;
			}
			if (!rb_is_red(w->left) && !rb_is_red(w->right)) {
				rb_set_red(w);
				x = parent;
				parent = elv_rb_parent(x);
				continue;
			}
			if (!rb_is_red(w->left)) {
				rb_set_black(w->right);
				rb_set_red(w);
				rb_rotate_left(t, w);
				w = parent->left;
			}
			rb_set_parent_color(w, elv_rb_parent(w), rb_color(parent));
			rb_set_black(parent);
			rb_set_black(w->left);
			rb_rotate_right(t, parent);
		}
		x = t->root;
		break;
	}
	if (x)
		rb_set_black(x);
}

void elv_rb_erase(struct elv_rb_root *t, struct elv_rb_node *n)
{
	struct elv_rb_node *child, *parent;
	uintptr_t removed_color;

	/* The successor must be found while n is still linked. */
	if (t->first == n)
		t->first = elv_rb_next(n);

	if (n->left == NULL || n->right == NULL) {
		/* At most one child: it takes n's place. */
		child = n->left ? n->left : n->right;
		parent = elv_rb_parent(n);
		removed_color = rb_color(n);
		rb_replace_child(t, parent, n, child);
		if (child)
			rb_set_parent(child, parent);
	} else {
		/* Two children: n's successor s (no left child) moves into n's place. */
		struct elv_rb_node *s = n->right;

		while (s->left)
			s = s->left;
		child = s->right;
		removed_color = rb_color(s);
		if (s == n->right) {
			parent = s;
		} else {
			parent = elv_rb_parent(s);
			parent->left = child;
			if (child)
				rb_set_parent(child, parent);
			s->right = n->right;
			rb_set_parent(s->right, s);
		}
		s->left = n->left;
		rb_set_parent(s->left, s);
		rb_replace_child(t, elv_rb_parent(n), n, s);
		s->parent_color = n->parent_color; /* n's parent and n's colour */
	}
	if (removed_color == RB_BLACK)
		rb_erase_fixup(t, child, parent);
}

struct elv_rb_node *elv_rb_next(const struct elv_rb_node *n)
{
	struct elv_rb_node *p;

	if (n->right) {
		n = n->right;
		while (n->left)
			n = n->left;
		return (struct elv_rb_node *)n;
	}
	/* Climb until we leave a left subtree. */
	while ((p = elv_rb_parent(n)) != NULL && n == p->right)
		n = p;
	return p;
}

struct elv_rb_node *elv_rb_prev(const struct elv_rb_node *n)
{
	struct elv_rb_node *p;

	if (n->left) {
		n = n->left;
		while (n->right)
			n = n->right;
		return (struct elv_rb_node *)n;
	}
	while ((p = elv_rb_parent(n)) != NULL && n == p->left)
		n = p;
	return p;
}

/* ---- sector-sorted requests ---------------------------------------------------------- */

static inline uint64_t rb_sector(const struct elv_rb_node *n)
{
	return elv_rb_rq(n)->sector;
}

void elv_sort_add(struct elv_rb_root *t, struct elv_request *rq)
{
	struct elv_rb_node **link = &t->root;
	struct elv_rb_node *parent = NULL;
	int leftmost = 1;

	while (*link) {
		parent = *link;
		/* Equal keys go right so requests at one sector stay in arrival order. */
		if (rq->sector < rb_sector(parent)) {
			link = &parent->left;
		} else {
			link = &parent->right;
			leftmost = 0;
		}
	}
	elv_rb_insert(t, &rq->ELV_PRIVATE(rb), parent, link, leftmost);
}

void elv_sort_del(struct elv_rb_root *t, struct elv_request *rq)
{
	struct elv_rb_node *n = &rq->ELV_PRIVATE(rb);

	elv_rb_erase(t, n);
	/* Leave no stale links to the tree behind. */
	n->parent_color = 0;
	n->left = NULL;
	n->right = NULL;
}

struct elv_request *elv_sort_ceil(const struct elv_rb_root *t, uint64_t sector)
{
	const struct elv_rb_node *n = t->root, *best = NULL;

	while (n) {
		if (rb_sector(n) >= sector) {
			best = n; /* a candidate; anything smaller is to its left */
			n = n->left;
		} else {
			n = n->right;
		}
	}
	return elv_rb_rq(best);
}

struct elv_request *elv_sort_find(const struct elv_rb_root *t, uint64_t sector)
{
	const struct elv_rb_node *n = t->root, *found = NULL;

	while (n) {
		uint64_t s = rb_sector(n);

		if (sector < s) {
			n = n->left;
		} else if (sector > s) {
			n = n->right;
		} else {
			/* Keep going left: an earlier arrival at this sector may sit there. */
			found = n;
			n = n->left;
		}
	}
	return elv_rb_rq(found);
}

/* ---- invariant checks ---------------------------------------------------------------- */

/*
 * Check one node on arrival: distinct children that point back at it, no red-red edge,
 * and every empty child slot at the same black height @bh (black nodes root..n).
 */
static int rb_check_node(const struct elv_rb_node *n, unsigned bh, unsigned *ref)
{
	const struct elv_rb_node *kid[2] = { n->left, n->right };
	int i;

	if (kid[0] != NULL && kid[0] == kid[1])
		return ELV_EINVAL;
	for (i = 0; i < 2; i++) {
		if (kid[i] == NULL) {
			if (*ref == 0)
				*ref = bh;
			else if (*ref != bh)
				return ELV_EINVAL;
			continue;
		}
		if (elv_rb_parent(kid[i]) != n)
			return ELV_EINVAL;
		if (rb_is_red(n) && rb_is_red(kid[i]))
			return ELV_EINVAL;
	}
	return 0;
}

int elv_rb_check(const struct elv_rb_root *t)
{
	const struct elv_rb_node *n, *c, *leftmost;
	unsigned bh = 1, ref = 0;

	if (t == NULL)
		return ELV_EINVAL;
	if (t->root == NULL)
		return t->first == NULL ? 0 : ELV_EINVAL;
	if (elv_rb_parent(t->root) != NULL || rb_is_red(t->root))
		return ELV_EINVAL;

	/*
	 * Pre-order walk through parent links. A child is entered only after rb_check_node()
	 * saw that it points back at its parent, so the walk stays on a tree and ends even
	 * when the structure is damaged.
	 */
	n = t->root;
	for (;;) {
		if (rb_check_node(n, bh, &ref) != 0)
			return ELV_EINVAL;
		c = n->left ? n->left : n->right;
		if (c == NULL) {
			/* Climb to the nearest ancestor whose right subtree is still unseen. */
			for (;;) {
				c = n;
				n = elv_rb_parent(c);
				bh -= rb_is_red(c) ? 0u : 1u;
				if (n == NULL)
					goto walked;
				if (c == n->left && n->right != NULL) {
					c = n->right;
					break;
				}
			}
		}
		n = c;
		bh += rb_is_red(n) ? 0u : 1u;
	}
walked:
	leftmost = t->root;
	while (leftmost->left)
		leftmost = leftmost->left;
	return t->first == leftmost ? 0 : ELV_EINVAL;
}
