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
#include <stddef.h>

#include "elv_internal.h"

/* Rotating cases are kept out of line, so that the common paths need few registers. */
#if defined(__GNUC__)
#define RB_NOINLINE __attribute__((noinline))
#else
#define RB_NOINLINE
#endif

#define RB_RED ((uintptr_t)0)
#define RB_BLACK ((uintptr_t)1)

/* Children are reached by direction (0 left, 1 right), so mirrored cases share one body. */
_Static_assert(offsetof(struct elv_rb_node, right) ==
		       offsetof(struct elv_rb_node, left) + sizeof(struct elv_rb_node *),
	       "the children of a node must be adjacent, left first");

static inline struct elv_rb_node **rb_kid(struct elv_rb_node *n, unsigned dir)
{
	return (struct elv_rb_node **)(void *)((char *)n + offsetof(struct elv_rb_node, left) +
						dir * sizeof(struct elv_rb_node *));
}

/* NULL children are black leaves. */
static inline int rb_is_red(const struct elv_rb_node *n)
{
	return n != NULL && !(n->parent_color & RB_BLACK);
}

static inline void rb_set_parent(struct elv_rb_node *n, struct elv_rb_node *p)
{
	n->parent_color = (uintptr_t)p | (n->parent_color & RB_BLACK);
}

/* Point whatever referenced @old (its parent's child slot or the root) at @new. */
static void rb_replace_child(struct elv_rb_root *t, struct elv_rb_node *parent,
			     const struct elv_rb_node *old, struct elv_rb_node *new)
{
	if (parent == NULL)
		t->root = new;
	else
		*rb_kid(parent, parent->left != old) = new;
}

/*
 * Rotate @x down to side @dir: y, its child on the other side, takes x's place and colour,
 * and x becomes y's @dir child with colour @color. Every rotation of the erase fixup sets
 * those two colours, so they are set here with the links.
 */
static void rb_rotate(struct elv_rb_root *t, struct elv_rb_node *x, unsigned dir, uintptr_t color)
{
	struct elv_rb_node *y = *rb_kid(x, !dir);
	struct elv_rb_node *b = *rb_kid(y, dir);
	uintptr_t pc = x->parent_color;

	*rb_kid(x, !dir) = b;
	if (b)
		rb_set_parent(b, x);
	*rb_kid(y, dir) = x;
	y->parent_color = pc;
	x->parent_color = (uintptr_t)y | color;
	rb_replace_child(t, (struct elv_rb_node *)(pc & ~RB_BLACK), x, y);
}

/*
 * The end of an insertion: red @n below red @p, on side @dir of black @g, whose other child
 * is black. One or two rotations bring the middle one of the three up, black, with the other
 * two red below it. Out of line, so that the loop that calls it needs no stack frame.
 */
static RB_NOINLINE void rb_insert_rotate(struct elv_rb_root *t, struct elv_rb_node *n,
					 struct elv_rb_node *p, struct elv_rb_node *g, unsigned dir)
{
	uintptr_t gpc = g->parent_color; /* g's parent, and black */
	struct elv_rb_node *top = p, *c;

	/* Links are set directly rather than by rb_rotate(): every child that moves is a child
	 * of red p or n, hence black, so no colour has to be read. */
	if (n == *rb_kid(p, dir)) {
		/* Outer grandchild: p comes up, g goes down on its other side. */
		c = *rb_kid(p, !dir);
		*rb_kid(g, dir) = c;
		if (c)
			c->parent_color = (uintptr_t)g | RB_BLACK;
	} else {
		/* Inner grandchild: n comes up between p and g. */
		c = *rb_kid(n, dir);
		*rb_kid(p, !dir) = c;
		if (c)
			c->parent_color = (uintptr_t)p | RB_BLACK;
		c = *rb_kid(n, !dir);
		*rb_kid(g, dir) = c;
		if (c)
			c->parent_color = (uintptr_t)g | RB_BLACK;
		*rb_kid(n, dir) = p;
		p->parent_color = (uintptr_t)n;
		top = n;
	}
	*rb_kid(top, !dir) = g;
	/* top takes g's place and its black; g goes down red. */
	top->parent_color = gpc;
	g->parent_color = (uintptr_t)top;
	rb_replace_child(t, (struct elv_rb_node *)(gpc & ~RB_BLACK), g, top);
}

/*
 * Link @n, red, at @link below @parent, then restore the colour rules. A red node's
 * parent_color is its parent pointer as is, which saves masking on the way up.
 */
static void rb_link_fixup(struct elv_rb_root *t, struct elv_rb_node *n,
			  struct elv_rb_node *parent, struct elv_rb_node **link)
{
	struct elv_rb_node *p, *g, *u;
	unsigned dir;

	n->parent_color = (uintptr_t)parent;
	n->left = NULL;
	n->right = NULL;
	*link = n;
	while ((p = (struct elv_rb_node *)n->parent_color) != NULL) {
		if (p->parent_color & RB_BLACK)
			return;
		/* A red parent is never the root, so the grandparent exists. */
		g = (struct elv_rb_node *)p->parent_color;
		dir = p != g->left;
		u = *rb_kid(g, !dir);
		if (rb_is_red(u)) {
			/* Push the blackness down from g and retry two levels up. */
			p->parent_color |= RB_BLACK;
			u->parent_color |= RB_BLACK;
			g->parent_color &= ~RB_BLACK;
			n = g;
			continue;
		}
		rb_insert_rotate(t, n, p, g, dir);
		return;
	}
	n->parent_color = RB_BLACK; /* the root */
}

void elv_rb_insert(struct elv_rb_root *t, struct elv_rb_node *n, struct elv_rb_node *parent,
		   struct elv_rb_node **link, int leftmost)
{
	if (leftmost || t->first == NULL)
		t->first = n;
	rb_link_fixup(t, n, parent, link);
}

/*
 * Restore the black height after a black leaf was removed below @p: the emptied slot @x
 * (NULL at first) carries one "extra black" until it can be absorbed. The sibling exists
 * because that side has a black height of at least 1.
 */
static RB_NOINLINE void rb_erase_fixup(struct elv_rb_root *t, struct elv_rb_node *x,
				       struct elv_rb_node *p)
{
	struct elv_rb_node *w, *far;
	unsigned dir;

	for (;;) {
		dir = x != p->left;
		w = *rb_kid(p, !dir);
		if (!(w->parent_color & RB_BLACK)) {
			/* Red sibling: rotate it up (black, as p was) so x gets a black one. */
			rb_rotate(t, p, dir, RB_RED);
			w = *rb_kid(p, !dir);
		}
		far = *rb_kid(w, !dir);
		if (!rb_is_red(far)) {
			struct elv_rb_node *near = *rb_kid(w, dir);

			if (!rb_is_red(near)) {
				/* Both nephews black: move the extra black up. */
				w->parent_color &= ~RB_BLACK;
				if (!(p->parent_color & RB_BLACK)) {
					p->parent_color |= RB_BLACK;
					return;
				}
				x = p;
				p = elv_rb_parent(x);
				if (p == NULL)
					return;
				continue;
			}
			/* Only the near nephew is red: make it the (black) sibling, w its red
			 * far child. */
			rb_rotate(t, w, !dir, RB_RED);
			far = w;
		}
		/* Far nephew red: the sibling takes p's place and colour, p and far turn black. */
		far->parent_color |= RB_BLACK;
		rb_rotate(t, p, dir, RB_BLACK);
		return;
	}
}

/*
 * Unlink @n. With two children, n's place goes to its predecessor rather than to its
 * successor: elevators erase in ascending order, and a successor left where it was (low in
 * the tree, no left child) is cheap to erase next and has its own successor close by.
 */
void elv_rb_erase(struct elv_rb_root *t, struct elv_rb_node *n)
{
	struct elv_rb_node *child, *parent;

	if (t->first == n) /* no left child: the successor is the right child (a leaf) or parent */
		t->first = n->right ? n->right : elv_rb_parent(n);
	if (n->left == NULL || n->right == NULL) {
		child = n->left ? n->left : n->right;
		parent = elv_rb_parent(n);
		rb_replace_child(t, parent, n, child);
		if (child) {
			/* A lone child is a red leaf below a black n: it takes n's place and colour. */
			child->parent_color = n->parent_color;
			return;
		}
		if (!(n->parent_color & RB_BLACK))
			return;
	} else {
		/* r, the rightmost node on n's left, moves into n's place, taking n's colour. */
		struct elv_rb_node *r = n->left;
		uintptr_t r_color;

		while (r->right)
			r = r->right;
		r_color = r->parent_color & RB_BLACK;
		child = r->left;
		if (r == n->left) {
			parent = r;
		} else {
			parent = elv_rb_parent(r);
			parent->right = child;
			r->left = n->left;
			rb_set_parent(r->left, r);
		}
		r->right = n->right;
		rb_set_parent(r->right, r);
		rb_replace_child(t, elv_rb_parent(n), n, r);
		r->parent_color = n->parent_color;
		if (child) {
			/* Red leaf below a black r: it takes r's old place, black. */
			child->parent_color = (uintptr_t)parent | RB_BLACK;
			return;
		}
		if (!r_color)
			return;
	}
	if (parent != NULL)
		rb_erase_fixup(t, NULL, parent);
}

struct elv_rb_node *elv_rb_erase_next(struct elv_rb_root *t, struct elv_rb_node *n)
{
	struct elv_rb_node *s = elv_rb_next(n);

	elv_rb_erase(t, n);
	return s;
}

/* The in-order neighbour of @n on side @dir (0 predecessor, 1 successor), or NULL. */
static inline struct elv_rb_node *rb_step(const struct elv_rb_node *n, unsigned dir)
{
	struct elv_rb_node *c = *rb_kid((struct elv_rb_node *)n, dir), *p;

	if (c) {
		while ((p = *rb_kid(c, !dir)) != NULL)
			c = p;
		return c;
	}
	/* Climb until we leave a subtree on the other side. */
	while ((p = elv_rb_parent(n)) != NULL && n == *rb_kid(p, dir))
		n = p;
	return p;
}

struct elv_rb_node *elv_rb_next(const struct elv_rb_node *n)
{
	return rb_step(n, 1);
}

struct elv_rb_node *elv_rb_prev(const struct elv_rb_node *n)
{
	return rb_step(n, 0);
}

/* ---- sector-sorted requests ---------------------------------------------------------- */

static inline uint64_t rb_sector(const struct elv_rb_node *n)
{
	return elv_rb_rq(n)->sector;
}

void elv_sort_add(struct elv_rb_root *t, struct elv_request *rq)
{
	struct elv_rb_node *n = &rq->ELV_PRIVATE(rb), *p = t->root, *c;
	struct elv_rb_node **link = &t->root;
	uint64_t key = rq->sector;

	/* Equal keys go right so requests at one sector stay in arrival order. Two levels a
	 * turn, so that the node just left needs no copy. */
	if (p != NULL) {
		for (;;) {
			c = key < rb_sector(p) ? p->left : p->right;
			if (c == NULL)
				break;
			p = key < rb_sector(c) ? c->left : c->right;
			if (p == NULL) {
				p = c;
				break;
			}
		}
		link = rb_kid(p, key >= rb_sector(p));
		/* Only the first node's empty left slot makes a new first node. */
		if (link != &t->first->left)
			goto linked;
	}
	t->first = n;
linked:
	rb_link_fixup(t, n, p, link);
}

/* Leave no stale links to the tree behind. */
static void rb_clear(struct elv_rb_node *n)
{
	n->parent_color = 0;
	n->left = NULL;
	n->right = NULL;
}

void elv_sort_del(struct elv_rb_root *t, struct elv_request *rq)
{
	elv_rb_erase(t, &rq->ELV_PRIVATE(rb));
	rb_clear(&rq->ELV_PRIVATE(rb));
}

struct elv_request *elv_sort_del_next(struct elv_rb_root *t, struct elv_request *rq)
{
	struct elv_rb_node *s = elv_rb_erase_next(t, &rq->ELV_PRIVATE(rb));

	rb_clear(&rq->ELV_PRIVATE(rb));
	return elv_rb_rq(s);
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
	/* The ceiling is the earliest arrival among requests at @sector, if there are any. */
	struct elv_request *rq = elv_sort_ceil(t, sector);

	return rq && rq->sector == sector ? rq : NULL;
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
