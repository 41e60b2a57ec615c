/*
 * Red-black tree and sector-sorted helpers, checked against a sorted-array model after
 * every single operation.
 */
#ifndef ELV_ALLOW_PRIVATE_ACCESS
#define ELV_ALLOW_PRIVATE_ACCESS
#endif
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "elevator/policy.h"

#define POOL 2048

/* Requests in the pool and a model of the tree: pointers in the order the tree must hold. */
struct fixture {
	struct elv_rb_root t;
	struct elv_request rq[POOL];
	int in_tree[POOL];
	struct elv_request *model[POOL];
	size_t n;
	uint64_t lcg;
};

static struct fixture fx;

static void fx_reset(uint64_t seed)
{
	memset(&fx, 0, sizeof(fx));
	fx.lcg = seed;
}

static uint32_t rnd(void)
{
	fx.lcg = fx.lcg * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t)(fx.lcg >> 33);
}

/* In-order walk equals the model; first is the minimum; sectors never decrease. */
static void verify(void)
{
	const struct elv_request *r;
	size_t i = 0;

	assert_int_equal(elv_rb_check(&fx.t), 0);
	assert_ptr_equal(elv_sort_first(&fx.t), fx.n ? fx.model[0] : NULL);
	for (r = elv_sort_first(&fx.t); r != NULL; r = elv_sort_next(r)) {
		assert_true(i < fx.n);
		assert_ptr_equal(r, fx.model[i]);
		if (i > 0)
			assert_true(fx.model[i - 1]->sector <= r->sector);
		i++;
	}
	assert_int_equal(i, fx.n);
	/* And backwards from the last. */
	if (fx.n) {
		r = fx.model[fx.n - 1];
		assert_null(elv_sort_next(r));
		for (i = fx.n; r != NULL; r = elv_sort_prev(r))
			assert_ptr_equal(r, fx.model[--i]);
		assert_int_equal(i, 0);
	}
}

/* Insert pool entry @idx at @sector into tree and model (after equal sectors). */
static void add(size_t idx, uint64_t sector)
{
	size_t pos = fx.n;

	assert_false(fx.in_tree[idx]);
	fx.rq[idx].sector = sector;
	fx.rq[idx].nr_sectors = 8;
	while (pos > 0 && fx.model[pos - 1]->sector > sector)
		pos--;
	memmove(&fx.model[pos + 1], &fx.model[pos], (fx.n - pos) * sizeof(fx.model[0]));
	fx.model[pos] = &fx.rq[idx];
	fx.n++;
	fx.in_tree[idx] = 1;
	elv_sort_add(&fx.t, &fx.rq[idx]);
}

static void del(size_t idx)
{
	size_t pos = 0;

	assert_true(fx.in_tree[idx]);
	while (fx.model[pos] != &fx.rq[idx])
		pos++;
	memmove(&fx.model[pos], &fx.model[pos + 1], (fx.n - pos - 1) * sizeof(fx.model[0]));
	fx.n--;
	fx.in_tree[idx] = 0;
	elv_sort_del(&fx.t, &fx.rq[idx]);
	/* Removed nodes keep no links into the tree. */
	assert_int_equal(fx.rq[idx].rb.parent_color, 0);
	assert_null(fx.rq[idx].rb.left);
	assert_null(fx.rq[idx].rb.right);
}

/* Like del(), through elv_sort_del_next(): it must hand back the model's next request. */
static void del_next(size_t idx)
{
	const struct elv_request *want;
	size_t pos = 0;

	assert_true(fx.in_tree[idx]);
	while (fx.model[pos] != &fx.rq[idx])
		pos++;
	want = pos + 1 < fx.n ? fx.model[pos + 1] : NULL;
	memmove(&fx.model[pos], &fx.model[pos + 1], (fx.n - pos - 1) * sizeof(fx.model[0]));
	fx.n--;
	fx.in_tree[idx] = 0;
	assert_ptr_equal(elv_sort_del_next(&fx.t, &fx.rq[idx]), want);
	assert_int_equal(fx.rq[idx].rb.parent_color, 0);
	assert_null(fx.rq[idx].rb.left);
	assert_null(fx.rq[idx].rb.right);
}

static const struct elv_request *model_ceil(uint64_t key)
{
	size_t i;

	for (i = 0; i < fx.n; i++)
		if (fx.model[i]->sector >= key)
			return fx.model[i];
	return NULL;
}

static const struct elv_request *model_find(uint64_t key)
{
	const struct elv_request *r = model_ceil(key);

	return (r != NULL && r->sector == key) ? r : NULL;
}

static void verify_lookups(uint64_t key)
{
	assert_ptr_equal(elv_sort_ceil(&fx.t, key), model_ceil(key));
	assert_ptr_equal(elv_sort_find(&fx.t, key), model_find(key));
}

static void test_empty(void **state)
{
	(void)state;
	fx_reset(1);
	verify();
	assert_null(elv_sort_first(&fx.t));
	assert_null(elv_sort_ceil(&fx.t, 0));
	assert_null(elv_sort_find(&fx.t, 0));
	assert_int_equal(elv_rb_check(NULL), ELV_EINVAL);
}

static void test_single(void **state)
{
	(void)state;
	fx_reset(1);
	add(0, 42);
	verify();
	assert_ptr_equal(elv_sort_find(&fx.t, 42), &fx.rq[0]);
	assert_ptr_equal(elv_sort_ceil(&fx.t, 0), &fx.rq[0]);
	assert_ptr_equal(elv_sort_ceil(&fx.t, 42), &fx.rq[0]);
	assert_null(elv_sort_ceil(&fx.t, 43));
	assert_null(elv_sort_find(&fx.t, 41));
	assert_null(elv_sort_prev(&fx.rq[0]));
	del(0);
	verify();
	assert_null(fx.t.root);
	assert_null(fx.t.first);
}

static void test_ascending(void **state)
{
	size_t i;

	(void)state;
	fx_reset(1);
	for (i = 0; i < 1000; i++) {
		add(i, 10 * i);
		verify();
	}
	/* Erase from the front: each erase moves first to the successor. */
	for (i = 0; i < 1000; i++) {
		assert_ptr_equal(elv_sort_first(&fx.t), &fx.rq[i]);
		del(i);
		verify();
	}
}

static void test_descending(void **state)
{
	size_t i;

	(void)state;
	fx_reset(1);
	for (i = 0; i < 1000; i++) {
		add(i, 10000 - 10 * i);
		verify(); /* each insert is a new leftmost */
		assert_ptr_equal(elv_sort_first(&fx.t), &fx.rq[i]);
	}
	/* Erase from the back (the first inserted is the highest sector). */
	for (i = 0; i < 1000; i++) {
		del(i);
		verify();
	}
}

static void test_random_with_duplicates(void **state)
{
	size_t i, order[POOL];

	(void)state;
	fx_reset(12345);
	for (i = 0; i < 1000; i++) {
		add(i, rnd() % 200); /* many equal keys */
		verify();
	}
	for (i = 0; i < 1000; i++)
		order[i] = i;
	for (i = 999; i > 0; i--) {
		size_t j = rnd() % (i + 1), tmp = order[i];

		order[i] = order[j];
		order[j] = tmp;
	}
	for (i = 0; i < 1000; i++) {
		del(order[i]);
		verify();
	}
}

/* Equal sectors keep arrival order; find returns the earliest arrival. */
static void test_duplicates_keep_arrival_order(void **state)
{
	const struct elv_request *r;
	size_t i;

	(void)state;
	fx_reset(1);
	add(0, 500);
	add(1, 100);
	add(2, 500);
	add(3, 900);
	add(4, 500);
	add(5, 500);
	add(6, 300);
	verify();
	assert_ptr_equal(elv_sort_find(&fx.t, 500), &fx.rq[0]);
	assert_ptr_equal(elv_sort_ceil(&fx.t, 301), &fx.rq[0]);
	r = elv_sort_find(&fx.t, 500);
	for (i = 0; i < 4; i++) {
		static const size_t want[4] = { 0, 2, 4, 5 };

		assert_ptr_equal(r, &fx.rq[want[i]]);
		r = elv_sort_next(r);
	}
	assert_ptr_equal(r, &fx.rq[3]);
	del(0);
	verify();
	assert_ptr_equal(elv_sort_find(&fx.t, 500), &fx.rq[2]);
	del(4);
	verify();
	assert_ptr_equal(elv_sort_find(&fx.t, 500), &fx.rq[2]);
	del(2);
	del(5);
	verify();
	assert_null(elv_sort_find(&fx.t, 500));
	assert_ptr_equal(elv_sort_ceil(&fx.t, 500), &fx.rq[3]);
}

static void test_ceil_find_brute_force(void **state)
{
	uint64_t key;
	size_t i;

	(void)state;
	fx_reset(777);
	for (i = 0; i < 600; i++)
		add(i, (uint64_t)(rnd() % 5000) * 3); /* multiples of 3: gaps and hits */
	for (i = 600; i < 620; i++)
		add(i, UINT64_MAX - (i - 600)); /* keys at the top of the range */
	verify();
	for (key = 0; key < 15100; key++)
		verify_lookups(key);
	for (key = UINT64_MAX - 40; key != 0; key++)
		verify_lookups(key);
	/* Thin the tree out and compare again. */
	for (i = 0; i < 620; i += 3) {
		del(i);
		verify();
	}
	for (key = 0; key < 15100; key += 7)
		verify_lookups(key);
	verify_lookups(UINT64_MAX);
}

/* Erase each structurally different position: first, last, root and interior nodes. */
static void test_erase_positions(void **state)
{
	size_t i, victim;

	(void)state;
	fx_reset(99);
	for (i = 0; i < 255; i++)
		add(i, 2 * i);
	verify();

	victim = (size_t)(elv_rb_rq(fx.t.root) - fx.rq);
	del(victim); /* root */
	verify();
	del(0); /* first */
	verify();
	assert_ptr_equal(elv_sort_first(&fx.t), &fx.rq[1]);
	del(254); /* last */
	verify();
	for (i = 0; i < 30; i++) { /* non-root interior nodes with two children */
		const struct elv_rb_node *n, *pick = NULL;
		size_t seen = 0;

		for (n = fx.t.first; n != NULL; n = elv_rb_next(n)) {
			if (n == fx.t.root || n->left == NULL || n->right == NULL)
				continue;
			if (pick == NULL || seen++ == i * 5 % 17)
				pick = n;
		}
		assert_non_null(pick);
		del((size_t)(elv_rb_rq(pick) - fx.rq));
		verify();
	}
	while (fx.n) { /* repeatedly erase the root until empty */
		del((size_t)(elv_rb_rq(fx.t.root) - fx.rq));
		verify();
	}
	assert_null(fx.t.first);
}

static void test_random_ops_10000(void **state)
{
	size_t live[POOL], nlive = 0, freelist[POOL], nfree = 0, i;
	int op;

	(void)state;
	fx_reset(20240601);
	for (i = POOL; i > 0; i--)
		freelist[nfree++] = i - 1;
	for (op = 0; op < 10000; op++) {
		uint32_t r = rnd();

		/* Lean towards inserts until the tree is a few hundred deep. */
		if (nlive == 0 || (nfree > 0 && r % 100 < (nlive < 400 ? 60u : 45u))) {
			size_t idx = freelist[--nfree];

			add(idx, (uint64_t)(rnd() % 1000));
			live[nlive++] = idx;
		} else {
			size_t k = rnd() % nlive;

			del(live[k]);
			freelist[nfree++] = live[k];
			live[k] = live[--nlive];
		}
		verify();
		if (op % 50 == 0)
			verify_lookups(rnd() % 1001);
	}
	assert_true(fx.n > 100);
}

/* elv_sort_del_next() on random trees with duplicate keys, at every kind of position. */
static void test_del_next_random(void **state)
{
	size_t live[POOL], nlive = 0, freelist[POOL], nfree = 0, i;
	int op;

	(void)state;
	fx_reset(777);
	for (i = POOL; i > 0; i--)
		freelist[nfree++] = i - 1;
	for (op = 0; op < 10000; op++) {
		uint32_t r = rnd();

		if (nlive == 0 || (nfree > 0 && r % 100 < (nlive < 300 ? 60u : 45u))) {
			size_t idx = freelist[--nfree];

			add(idx, (uint64_t)(rnd() % 500));
			live[nlive++] = idx;
		} else {
			size_t victim = live[rnd() % nlive];

			if (r % 4 == 0) /* also the first and the last node, often */
				victim = (size_t)((r % 8 == 0 ? fx.model[0] : fx.model[fx.n - 1]) -
						  fx.rq);
			for (i = 0; live[i] != victim; i++)
				;
			del_next(live[i]);
			freelist[nfree++] = live[i];
			live[i] = live[--nlive];
		}
		verify();
	}
	assert_true(fx.n > 100);
}

/* A sweep as an elevator does it: take a request, go on from the successor handed back. */
static void test_del_next_sweep(void **state)
{
	struct elv_request *rq;
	size_t i, next_idx = 600;
	uint64_t last = 0;

	(void)state;
	fx_reset(31);
	for (i = 0; i < 600; i++)
		add(i, (uint64_t)(rnd() % 2000));
	verify();
	rq = elv_sort_first(&fx.t);
	while (rq != NULL) {
		size_t idx = (size_t)(rq - fx.rq);
		struct elv_request *want = NULL;
		size_t pos;

		assert_true(rq->sector >= last);
		last = rq->sector;
		for (pos = 0; fx.model[pos] != rq; pos++)
			;
		if (pos + 1 < fx.n)
			want = fx.model[pos + 1];
		fx.in_tree[idx] = 0;
		memmove(&fx.model[pos], &fx.model[pos + 1], (fx.n - pos - 1) * sizeof(fx.model[0]));
		fx.n--;
		rq = elv_sort_del_next(&fx.t, rq);
		assert_ptr_equal(rq, want);
		verify();
		/* Arrivals behind and ahead of the sweep while it runs. */
		if (next_idx < POOL && idx % 3 == 0)
			add(next_idx++, (uint64_t)(rnd() % 2000));
	}
	assert_true(fx.n > 0); /* those that arrived behind the sweep */
	while (fx.n)
		del_next((size_t)(fx.model[0] - fx.rq));
	verify();
	assert_null(fx.t.root);
	assert_null(fx.t.first);
}

/* ---- the generic API with a caller-written search -------------------------------------- */

struct item {
	uint32_t key;
	struct elv_rb_node node;
};

static void item_insert(struct elv_rb_root *t, struct item *it)
{
	struct elv_rb_node **link = &t->root, *parent = NULL;
	int leftmost = 1;

	while (*link) {
		const struct item *cur = elv_container_of(*link, struct item, node);

		parent = *link;
		if (it->key < cur->key) {
			link = &parent->left;
		} else {
			link = &parent->right;
			leftmost = 0;
		}
	}
	elv_rb_insert(t, &it->node, parent, link, leftmost);
}

static void test_generic_nodes(void **state)
{
	static struct item items[300];
	struct elv_rb_root t = { NULL, NULL };
	const struct elv_rb_node *n;
	uint32_t i, prev;

	(void)state;
	for (i = 0; i < 300; i++) {
		items[i].key = (i * 7919u) % 300u; /* a permutation of 0..299 */
		item_insert(&t, &items[i]);
		assert_int_equal(elv_rb_check(&t), 0);
	}
	prev = 0;
	i = 0;
	for (n = t.first; n != NULL; n = elv_rb_next(n)) {
		uint32_t k = elv_container_of(n, struct item, node)->key;

		assert_int_equal(k, i == 0 ? 0 : prev + 1);
		prev = k;
		i++;
	}
	assert_int_equal(i, 300);
	for (i = 0; i < 300; i += 2) {
		elv_rb_erase(&t, &items[i].node);
		assert_int_equal(elv_rb_check(&t), 0);
	}
	for (i = 1; i < 300; i += 2)
		elv_rb_erase(&t, &items[i].node);
	assert_int_equal(elv_rb_check(&t), 0);
	assert_null(t.root);
	assert_null(t.first);
}

/* elv_rb_erase_next() with a caller-written search: the successor, then NULL after the last. */
static void test_generic_erase_next(void **state)
{
	static struct item items[257];
	struct elv_rb_root t = { NULL, NULL };
	struct elv_rb_node *n;
	uint32_t i;

	(void)state;
	for (i = 0; i < 257; i++) {
		items[i].key = (i * 101u) % 257u; /* a permutation of 0..256 */
		item_insert(&t, &items[i]);
	}
	/* Odd keys first, each handing back the even key above it (none after 255). */
	for (i = 0; i < 257; i++) {
		if (items[i].key % 2 == 0)
			continue;
		n = elv_rb_erase_next(&t, &items[i].node);
		assert_non_null(n);
		assert_int_equal(elv_container_of(n, struct item, node)->key, items[i].key + 1);
		assert_int_equal(elv_rb_check(&t), 0);
	}
	/* Then the even ones from the first: each successor is the next even key. */
	for (i = 0, n = t.first; n != NULL; i += 2) {
		assert_int_equal(elv_container_of(n, struct item, node)->key, i);
		n = elv_rb_erase_next(&t, n);
		assert_int_equal(elv_rb_check(&t), 0);
		assert_ptr_equal(t.first, n);
	}
	assert_int_equal(i, 258);
	assert_null(t.root);
	assert_null(t.first);
}

/* ---- elv_rb_check catches damage ------------------------------------------------------ */

static void build_tree(void)
{
	size_t i;

	fx_reset(5);
	for (i = 0; i < 100; i++)
		add(i, i);
	verify();
}

static struct elv_rb_node *find_red(void)
{
	struct elv_rb_node *n;

	for (n = fx.t.first; n != NULL; n = elv_rb_next(n))
		if (elv_rb_parent(n) != NULL && (n->parent_color & 1u) == 0)
			return n;
	return NULL;
}

static void test_check_detects_corruption(void **state)
{
	struct elv_rb_node *n, *saved_ptr;
	uintptr_t saved;

	(void)state;

	/* Red root. */
	build_tree();
	fx.t.root->parent_color &= ~(uintptr_t)1;
	assert_int_not_equal(elv_rb_check(&fx.t), 0);

	/* A red node turned black: black heights differ. */
	build_tree();
	n = find_red();
	assert_non_null(n);
	n->parent_color |= 1u;
	assert_int_not_equal(elv_rb_check(&fx.t), 0);

	/* A red node under a red parent. */
	build_tree();
	n = find_red();
	assert_non_null(n);
	if (n->left)
		n->left->parent_color &= ~(uintptr_t)1;
	else
		elv_rb_parent(n)->parent_color &= ~(uintptr_t)1;
	assert_int_not_equal(elv_rb_check(&fx.t), 0);

	/* Broken parent link. */
	build_tree();
	n = fx.t.root->left->right;
	saved = n->parent_color;
	n->parent_color = (uintptr_t)fx.t.root | (saved & 1u);
	assert_int_not_equal(elv_rb_check(&fx.t), 0);
	n->parent_color = saved;
	assert_int_equal(elv_rb_check(&fx.t), 0);

	/* Root with a parent. */
	fx.t.root->parent_color = (uintptr_t)&fx.rq[POOL - 1].rb | 1u;
	assert_int_not_equal(elv_rb_check(&fx.t), 0);

	/* Stale cached first. */
	build_tree();
	fx.t.first = elv_rb_next(fx.t.first);
	assert_int_not_equal(elv_rb_check(&fx.t), 0);
	fx.t.first = NULL;
	assert_int_not_equal(elv_rb_check(&fx.t), 0);

	/* Both children the same node (a loop back into the tree). */
	build_tree();
	n = fx.t.root->right;
	saved_ptr = n->left;
	n->left = n->right;
	assert_int_not_equal(elv_rb_check(&fx.t), 0);
	n->left = saved_ptr;
	assert_int_equal(elv_rb_check(&fx.t), 0);

	/* A child pointer back up to an ancestor. */
	n = fx.t.first;
	n->left = fx.t.root;
	assert_int_not_equal(elv_rb_check(&fx.t), 0);
	n->left = NULL;
	assert_int_equal(elv_rb_check(&fx.t), 0);

	/* Empty root with a cached first. */
	fx.t.root = NULL;
	assert_int_not_equal(elv_rb_check(&fx.t), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_single),
		cmocka_unit_test(test_ascending),
		cmocka_unit_test(test_descending),
		cmocka_unit_test(test_random_with_duplicates),
		cmocka_unit_test(test_duplicates_keep_arrival_order),
		cmocka_unit_test(test_ceil_find_brute_force),
		cmocka_unit_test(test_erase_positions),
		cmocka_unit_test(test_random_ops_10000),
		cmocka_unit_test(test_del_next_random),
		cmocka_unit_test(test_del_next_sweep),
		cmocka_unit_test(test_generic_nodes),
		cmocka_unit_test(test_generic_erase_next),
		cmocka_unit_test(test_check_detects_corruption),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
