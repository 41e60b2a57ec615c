/*
 * elv_div64: the division policies use on 64-bit values. On 32-bit targets it calls
 * elv_div64_soft(), the shift-and-subtract path, which these cases also call directly on every
 * host and check against the compiler's own division.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "elevator/policy.h"

static uint64_t next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void test_edges(void **state)
{
	(void)state;
	assert_int_equal(elv_div64(0, 1), 0);
	assert_int_equal(elv_div64(100, 7), 14);
	assert_int_equal(elv_div64(UINT64_MAX, 1), UINT64_MAX);
	assert_int_equal(elv_div64(UINT64_MAX, UINT64_MAX), 1);
	assert_int_equal(elv_div64(UINT64_MAX - 1, UINT64_MAX), 0);
	assert_int_equal(elv_div64(1ull << 63, 3), (1ull << 63) / 3);
	assert_int_equal(elv_div64(5000000000ull, 1000000ull), 5000);
	assert_int_equal(elv_div64(42, 0), UINT64_MAX);
	assert_int_equal(elv_div64_soft(42, 0), UINT64_MAX);
	assert_int_equal(elv_div64_soft(UINT64_MAX, UINT64_MAX), 1);
	assert_int_equal(elv_div64_soft(UINT64_MAX - 1, UINT64_MAX), 0);
	assert_int_equal(elv_div64_soft(1ull << 63, 3), (1ull << 63) / 3);
	assert_int_equal(elv_div64_soft(100, 7), 14);
}

static void test_random_against_native(void **state)
{
	uint64_t s = 0x9E3779B97F4A7C15ull;
	int i;

	(void)state;
	for (i = 0; i < 100000; i++) {
		uint64_t n = next(&s) >> (next(&s) % 64);
		uint64_t d = next(&s) >> (next(&s) % 64);

		if (d == 0)
			d = 1;
		assert_int_equal(elv_div64(n, d), n / d);
		assert_int_equal(elv_div64_soft(n, d), n / d); /* the 32-bit path, on any host */
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_edges),
		cmocka_unit_test(test_random_against_native),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
