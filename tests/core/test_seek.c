/*
 * Seek scoring: every rule of elv_seek_cost() and elv_seek_choose() with hand-worked numbers,
 * at the edges of each rule, and the same edges through the two policies that order their
 * queues by it (anticipatory and CFQ), so that a policy handing the rule the wrong reach or
 * penalty fails here too.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "elevator/policy.h"

static struct elv_request a, b;

/* Place the two candidates and return the choice both ways round. */
static const struct elv_request *pick(uint64_t sa, uint64_t sb, uint64_t last, uint64_t back_max,
				      uint32_t penalty, const struct elv_request **swapped)
{
	a.sector = sa;
	b.sector = sb;
	a.nr_sectors = b.nr_sectors = 8;
	*swapped = elv_seek_choose(&b, &a, last, back_max, penalty);
	return elv_seek_choose(&a, &b, last, back_max, penalty);
}

/* The choice must not depend on argument order (except full ties). */
static void expect(uint64_t sa, uint64_t sb, uint64_t last, uint64_t back_max, uint32_t penalty,
		   const struct elv_request *want)
{
	const struct elv_request *swapped;

	assert_ptr_equal(pick(sa, sb, last, back_max, penalty, &swapped), want);
	assert_ptr_equal(swapped, want);
}

static void test_nulls(void **state)
{
	(void)state;
	a.sector = 10;
	assert_null(elv_seek_choose(NULL, NULL, 0, 100, 2));
	assert_ptr_equal(elv_seek_choose(&a, NULL, 0, 100, 2), &a);
	assert_ptr_equal(elv_seek_choose(NULL, &a, 0, 100, 2), &a);
	assert_ptr_equal(elv_seek_choose(&a, &a, 1000, 0, 2), &a);
}

static void test_forward(void **state)
{
	(void)state;
	/* Head at 1000: 1050 is 50 ahead, 1100 is 100 ahead. */
	expect(1100, 1050, 1000, 0, 2, &b);
	expect(1050, 1100, 1000, 0, 2, &a);
	/* A request exactly at the head costs nothing. */
	expect(1000, 1001, 1000, 0, 2, &a);
	/* Head at 0, far apart at the top of the range: no overflow. */
	expect(UINT64_MAX, UINT64_MAX - 1, 0, 0, 2, &b);
}

static void test_backward_with_penalty(void **state)
{
	(void)state;
	/* Head 1000, back_max 1000, penalty 2: 960 costs 40 * 2 = 80 < 100 for 1100. */
	expect(1100, 960, 1000, 1000, 2, &b);
	/* 940 costs 60 * 2 = 120 > 100: forward wins. */
	expect(1100, 940, 1000, 1000, 2, &a);
	/* Penalty 1: 940 costs 60 < 100, backward wins. */
	expect(1100, 940, 1000, 1000, 1, &b);
	/* Penalty 3: 970 costs 90 < 100, 960 costs 120 > 100. */
	expect(1100, 970, 1000, 1000, 3, &b);
	expect(1100, 960, 1000, 1000, 3, &a);
	/* One sector back (cost 2) loses to one sector ahead (cost 1). */
	expect(999, 1001, 1000, 1000, 2, &b);
	/* Two backward candidates: the nearer one. */
	expect(990, 900, 1000, 1000, 2, &a);
	/* Penalty 0 makes a short backward seek free: it ties with the head position. */
	expect(1000, 900, 1000, 1000, 0, &a);
	expect(1001, 900, 1000, 1000, 0, &b);
}

static void test_back_max_boundary(void **state)
{
	(void)state;
	/* Head 1000, back_max 100: 900 is exactly at the limit (cost 200), not wrapped. */
	expect(900, 2000, 1000, 100, 2, &a);
	/* 899 is one past the limit: wrapped, loses even to a request 1000 ahead. */
	expect(899, 2000, 1000, 100, 2, &b);
	/* back_max 0: any backward request wraps. */
	expect(999, 5000, 1000, 0, 2, &b);
}

static void test_wrapped(void **state)
{
	(void)state;
	/* Non-wrapped beats wrapped whatever the forward distance. */
	expect(0, UINT64_MAX, 1000000, 10, 2, &b);
	/* Both wrapped: the lower sector (one long seek back, then sweep forward). */
	expect(5000, 3000, 1000000, 100, 2, &b);
	expect(3000, 5000, 1000000, 100, 2, &a);
	expect(0, 1, UINT64_MAX, 0, 2, &a);
}

static void test_ties_go_forward(void **state)
{
	(void)state;
	/* Head 1000, penalty 2: 950 costs 100, as does 1100: take the higher sector. */
	expect(950, 1100, 1000, 1000, 2, &b);
	expect(1100, 950, 1000, 1000, 2, &a);
	/* Equal forward cost means the same sector: the first argument is kept. */
	a.sector = b.sector = 1234;
	assert_ptr_equal(elv_seek_choose(&a, &b, 1000, 1000, 2), &a);
	assert_ptr_equal(elv_seek_choose(&b, &a, 1000, 1000, 2), &b);
	/* Both wrapped at the same sector: also the first argument. */
	assert_ptr_equal(elv_seek_choose(&a, &b, 100000, 10, 2), &a);
}

static void test_no_overflow(void **state)
{
	(void)state;
	/* back * penalty would pass 2^64: saturated, still not wrapped, and loses to 0 cost. */
	expect(0, UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT32_MAX, &b);
	/* 2^63 back at penalty 4 is 2^65: wrapping would make it free; saturated it loses. */
	expect(0, ((uint64_t)1 << 63) + 5, (uint64_t)1 << 63, UINT64_MAX, 4, &b);
	/* Both saturate to the same cost: the tie goes to the higher sector. */
	expect(0, 1, UINT64_MAX, UINT64_MAX, UINT32_MAX, &b);
	/* Just below saturation the exact products still order correctly. */
	expect(UINT64_MAX - 2, UINT64_MAX - 3, UINT64_MAX, UINT64_MAX, UINT32_MAX, &a);
}

/* The cost itself at each edge: the reach, the penalty, saturation, the end of the space. */
static void test_cost_edges(void **state)
{
	uint64_t c = 7;

	(void)state;
	/* Forward, and at the head itself. */
	assert_int_equal(elv_seek_cost(1500, 1000, 100, 2, &c), 0);
	assert_int_equal(c, 500);
	assert_int_equal(elv_seek_cost(1000, 1000, 0, 2, &c), 0);
	assert_int_equal(c, 0);
	/* Exactly back_max back: a backward seek at the penalty. One more sector: a wrap. */
	assert_int_equal(elv_seek_cost(900, 1000, 100, 3, &c), 0);
	assert_int_equal(c, 300);
	assert_int_equal(elv_seek_cost(899, 1000, 100, 3, &c), 1);
	assert_int_equal(c, 899);
	/* back_max 0: one sector back is already a wrap. */
	assert_int_equal(elv_seek_cost(999, 1000, 0, 2, &c), 1);
	assert_int_equal(c, 999);
	/* Penalty 0 and 1. */
	assert_int_equal(elv_seek_cost(900, 1000, 100, 0, &c), 0);
	assert_int_equal(c, 0);
	assert_int_equal(elv_seek_cost(900, 1000, 100, 1, &c), 0);
	assert_int_equal(c, 100);
	/* Products of 32-bit numbers are exact: (2^32 - 1) back at penalty 2^32 - 1. */
	assert_int_equal(elv_seek_cost(0, UINT32_MAX, UINT64_MAX, UINT32_MAX, &c), 0);
	assert_int_equal(c, (uint64_t)UINT32_MAX * UINT32_MAX);
	/* The largest product that fits is exact; one sector more saturates. */
	assert_int_equal(elv_seek_cost(0, UINT64_MAX / 3, UINT64_MAX, 3, &c), 0);
	assert_int_equal(c, UINT64_MAX / 3 * 3);
	assert_int_equal(elv_seek_cost(0, UINT64_MAX / 3 + 1, UINT64_MAX, 3, &c), 0);
	assert_int_equal(c, UINT64_MAX);
	/* Far back at penalty 0 stays free, with no division by zero. */
	assert_int_equal(elv_seek_cost(0, UINT64_MAX, UINT64_MAX, 0, &c), 0);
	assert_int_equal(c, 0);
	/* The end of the sector space: the head at its last sector, a request at sector 0. */
	assert_int_equal(elv_seek_cost(0, UINT64_MAX, 1 << 20, 2, &c), 1);
	assert_int_equal(c, 0);
	assert_int_equal(elv_seek_cost(UINT64_MAX, 0, 0, 2, &c), 0);
	assert_int_equal(c, UINT64_MAX);
}

/* The choice at the edges, both ways round: the reach, penalty ties, equal distances. */
static void test_choice_edges(void **state)
{
	(void)state;
	/* Head 1000, reach 100, penalty 2: 900 costs 200; 1201 costs 201, 1200 ties and wins. */
	expect(900, 1201, 1000, 100, 2, &a);
	expect(900, 1200, 1000, 100, 2, &b);
	/* One sector past the reach: a wrap, behind even a far forward request. */
	expect(899, UINT64_MAX, 1000, 100, 2, &b);
	/* Equal distances either way: forward wins at any penalty but 0 ... */
	expect(950, 1050, 1000, 100, 1, &b);
	expect(950, 1050, 1000, 100, 2, &b);
	/* ... and at penalty 0 the backward one is free. */
	expect(950, 1050, 1000, 100, 0, &a);
	/* Penalty 3: 10 back (30) against 29, 30 and 31 forward. */
	expect(990, 1029, 1000, 100, 3, &b);
	expect(990, 1030, 1000, 100, 3, &b);
	expect(990, 1031, 1000, 100, 3, &a);
	/* The head at the end of the sector space: a short seek back beats the wrap to 0, and
	 * of two wraps the lower sector goes first. */
	expect(UINT64_MAX - 100, 0, UINT64_MAX, 1000, 2, &a);
	expect(5, 0, UINT64_MAX, 1000, 2, &b);
	/* The head at sector 0: nothing is behind it. */
	expect(UINT64_MAX, 1, 0, UINT64_MAX, 2, &b);
}

/*
 * The rule written out plainly, as the documentation states it (saturation by a division),
 * for comparing with the library's elv_seek_choose() on values near every edge.
 */
static const struct elv_request *model_choose(const struct elv_request *r1,
					      const struct elv_request *r2, uint64_t last,
					      uint64_t back_max, uint32_t pen)
{
	uint64_t c[2], back;
	int w[2], i;

	for (i = 0; i < 2; i++) {
		uint64_t s = (i ? r2 : r1)->sector;

		back = last - s;
		w[i] = s < last && back > back_max;
		if (s >= last)
			c[i] = s - last;
		else if (w[i])
			c[i] = s;
		else
			c[i] = pen && back > UINT64_MAX / pen ? UINT64_MAX : back * pen;
	}
	if (w[0] != w[1])
		return w[0] ? r2 : r1;
	if (c[0] != c[1])
		return c[1] < c[0] ? r2 : r1;
	return r2->sector > r1->sector ? r2 : r1;
}

static void test_matches_model(void **state)
{
	static const uint64_t base[] = {0, 1, 2, 99, 100, 101, 1000, UINT32_MAX, 1ull << 32,
					UINT64_MAX / 3, (1ull << 63) - 1, 1ull << 63,
					UINT64_MAX - 1, UINT64_MAX};
	const unsigned nb = sizeof(base) / sizeof(base[0]);
	static const uint32_t pen[] = {0, 1, 2, 3, UINT32_MAX};
	uint64_t x = 0x9E3779B97F4A7C15ull;
	unsigned i, n = 0;

	(void)state;
	for (i = 0; i < 20000; i++) {
		uint64_t v[4];
		unsigned k;

		for (k = 0; k < 4; k++) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			v[k] = base[(x >> 33) % nb] + (uint64_t)((int64_t)(x >> 61) - 3);
		}
		a.sector = v[0];
		b.sector = v[1];
		assert_ptr_equal(elv_seek_choose(&a, &b, v[2], v[3], pen[i % 5]),
				 model_choose(&a, &b, v[2], v[3], pen[i % 5]));
		n++;
	}
	assert_int_equal(n, 20000);
}

/* ---- the same edges through the policies ------------------------------------------------ */

#define H (1ull << 30) /* head position of the policy scenarios */
static uint64_t qmem[32768];
static struct elv_queue *pq;
static struct elv_request prq[4];
static uint64_t pnow;

/* A queue of @name whose head is at H: one request ending there was dispatched and done. */
static void pq_open(const char *name)
{
	struct elv_request *out;

	memset(prq, 0, sizeof(prq));
	pnow = 1000000;
	assert_true(elv_queue_size(elv_policy_find(name), NULL) <= sizeof(qmem));
	assert_int_equal(elv_queue_init(&pq, qmem, sizeof(qmem), elv_policy_find(name), NULL), 0);
	prq[0].sector = H - 8;
	prq[0].nr_sectors = 8;
	prq[0].op = ELV_OP_READ;
	assert_int_equal(elv_add(pq, &prq[0], pnow), 0);
	assert_int_equal(elv_dispatch(pq, pnow, ELV_DISPATCH_FORCE, &out), 0);
	assert_ptr_equal(out, &prq[0]);
	assert_int_equal(elv_complete(pq, out, ++pnow), 0);
}

/* Queue reads at @s1 then @s2 and return the sector the policy sends first. */
static uint64_t pq_first(uint64_t s1, uint64_t s2)
{
	struct elv_request *out, *first;
	unsigned i, n = 0;

	for (i = 1; i <= 2; i++) {
		prq[i].sector = i == 1 ? s1 : s2;
		prq[i].nr_sectors = 8;
		prq[i].op = ELV_OP_READ;
		assert_int_equal(elv_add(pq, &prq[i], pnow), 0);
	}
	assert_int_equal(elv_dispatch(pq, pnow, ELV_DISPATCH_FORCE, &first), 0);
	out = first;
	do {
		assert_int_equal(elv_complete(pq, out, ++pnow), 0);
		n++;
	} while (elv_dispatch(pq, pnow, ELV_DISPATCH_FORCE, &out) == 0);
	assert_int_equal(n, 2);
	assert_int_equal(elv_queue_check(pq), 0);
	assert_int_equal(elv_queue_exit(pq), 0);
	return first->sector;
}

/* Which of @s1 and @s2 (added in both orders) @name sends first from head H. */
static uint64_t pq_choice(const char *name, const char *tun1, int64_t v1, const char *tun2,
			  int64_t v2, uint64_t s1, uint64_t s2)
{
	uint64_t one, other;

	pq_open(name);
	if (tun1) {
		assert_int_equal(elv_tunable_set(pq, tun1, v1), 0);
		assert_int_equal(elv_tunable_set(pq, tun2, v2), 0);
	}
	one = pq_first(s1, s2);
	pq_open(name);
	if (tun1) {
		assert_int_equal(elv_tunable_set(pq, tun1, v1), 0);
		assert_int_equal(elv_tunable_set(pq, tun2, v2), 0);
	}
	other = pq_first(s2, s1);
	assert_int_equal(one, other);
	return one;
}

/* The edges of a policy whose reach is @reach sectors at penalty @pen. */
static void policy_edges(const char *name, const char *tun1, int64_t v1, const char *tun2,
			 int64_t v2, uint64_t reach, uint64_t pen)
{
	/* Exactly the reach back costs reach * pen: beats one sector farther forward, and
	 * loses the tie to the forward request at the same cost. */
	assert_int_equal(pq_choice(name, tun1, v1, tun2, v2, H - reach, H + reach * pen + 1),
			 H - reach);
	assert_int_equal(pq_choice(name, tun1, v1, tun2, v2, H - reach, H + reach * pen),
			 H + reach * pen);
	/* One sector past the reach is a wrap: it loses to a request far ahead. */
	assert_int_equal(pq_choice(name, tun1, v1, tun2, v2, H - reach - 1, H + (1ull << 40)),
			 H + (1ull << 40));
	/* Two wraps: the lower sector first. */
	assert_int_equal(pq_choice(name, tun1, v1, tun2, v2, H - reach - 1, H - reach - 2),
			 H - reach - 2);
	/* One sector back against just under and just over its penalty forward. */
	assert_int_equal(pq_choice(name, tun1, v1, tun2, v2, H - 1, H + pen - 1), H + pen - 1);
	assert_int_equal(pq_choice(name, tun1, v1, tun2, v2, H - 1, H + pen + 1), H - 1);
}

static void test_anticipatory_edges(void **state)
{
	(void)state;
	/* anticipatory: backward seeks of up to 1 Mi sectors at twice the cost. */
	policy_edges("anticipatory", NULL, 0, NULL, 0, 1u << 20, 2);
}

static void test_cfq_edges(void **state)
{
	(void)state;
	/* cfq: back_seek_max is in KiB (16 MiB, 32768 sectors, by default), penalty 2. */
	policy_edges("cfq", NULL, 0, NULL, 0, 32768, 2);
	policy_edges("cfq", "back_seek_max", 8, "back_seek_penalty", 3, 16, 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nulls),
		cmocka_unit_test(test_forward),
		cmocka_unit_test(test_backward_with_penalty),
		cmocka_unit_test(test_back_max_boundary),
		cmocka_unit_test(test_wrapped),
		cmocka_unit_test(test_ties_go_forward),
		cmocka_unit_test(test_no_overflow),
		cmocka_unit_test(test_cost_edges),
		cmocka_unit_test(test_choice_edges),
		cmocka_unit_test(test_matches_model),
		cmocka_unit_test(test_anticipatory_edges),
		cmocka_unit_test(test_cfq_edges),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
