/*
 * Seek scoring: every rule of elv_seek_choose() with hand-worked numbers.
 */
#ifndef ELV_ALLOW_PRIVATE_ACCESS
#define ELV_ALLOW_PRIVATE_ACCESS
#endif
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

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
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
