/*
 * Decaying average: hand-computed steps of the 1/8 fixed-point rule, convergence, validity
 * and saturation of huge samples.
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

static void expect_state(const struct elv_avg *a, uint32_t samples, uint64_t total,
			 uint64_t mean)
{
	assert_int_equal(a->samples, samples);
	assert_int_equal(a->total, total);
	assert_int_equal(a->mean, mean);
}

static void test_first_three_constant(void **state)
{
	struct elv_avg a;

	(void)state;
	memset(&a, 0, sizeof(a));
	assert_false(elv_avg_valid(&a));
	/* samples 256/8 = 32, total 256*100/8 = 3200, mean (3200+128)/32 = 104 */
	elv_avg_add(&a, 100);
	expect_state(&a, 32, 3200, 104);
	assert_false(elv_avg_valid(&a));
	/* samples (224+256)/8 = 60, total (22400+25600)/8 = 6000, mean 6128/60 = 102 */
	elv_avg_add(&a, 100);
	expect_state(&a, 60, 6000, 102);
	assert_false(elv_avg_valid(&a));
	/* samples 676/8 = 84, total (42000+25600)/8 = 8450, mean 8578/84 = 102 */
	elv_avg_add(&a, 100);
	expect_state(&a, 84, 8450, 102);
	assert_true(elv_avg_valid(&a)); /* 84 > 80: trusted from the third sample */
}

static void test_first_three_mixed(void **state)
{
	struct elv_avg a;

	(void)state;
	memset(&a, 0, sizeof(a));
	elv_avg_add(&a, 0); /* total 0, mean 128/32 = 4 (the rounding term) */
	expect_state(&a, 32, 0, 4);
	elv_avg_add(&a, 1000); /* total 256000/8 = 32000, mean 32128/60 = 535 */
	expect_state(&a, 60, 32000, 535);
	elv_avg_add(&a, 10); /* total (224000+2560)/8 = 28320, mean 28448/84 = 338 */
	expect_state(&a, 84, 28320, 338);
}

static void test_samples_converge(void **state)
{
	static const uint32_t start[8] = { 32, 60, 84, 105, 123, 139, 153, 165 };
	struct elv_avg a;
	uint32_t prev = 0;
	int i;

	(void)state;
	memset(&a, 0, sizeof(a));
	for (i = 0; i < 400; i++) {
		elv_avg_add(&a, 1000);
		if (i < 8)
			assert_int_equal(a.samples, start[i]);
		assert_true(a.samples >= prev);
		assert_true(a.samples <= 256);
		assert_true(elv_avg_valid(&a) == (i >= 2));
		prev = a.samples;
	}
	/*
	 * Integer truncation stops the weight at 249 (floor((7 * 249 + 256) / 8) == 249), the
	 * fixed point next to 256, reached on the 31st sample.
	 */
	assert_int_equal(a.samples, 249);
	/* total settles 7 below 256 * 1000; the mean then reads (255993 + 128) / 249. */
	expect_state(&a, 249, 255993, 1028);
	/* A weight of exactly 256 is also a fixed point. */
	a.samples = 256;
	elv_avg_add(&a, 1000);
	assert_int_equal(a.samples, 256);
}

static void test_decay_to_new_level(void **state)
{
	struct elv_avg a;
	int i;

	(void)state;
	memset(&a, 0, sizeof(a));
	for (i = 0; i < 300; i++)
		elv_avg_add(&a, 1000);
	/* One sample of 0 takes 1/8 off: total 7 * 255993 / 8 = 223993. */
	elv_avg_add(&a, 0);
	expect_state(&a, 249, 223993, 900);
	for (i = 0; i < 300; i++)
		elv_avg_add(&a, 0);
	expect_state(&a, 249, 0, 0);
}

static void test_saturation(void **state)
{
	const uint64_t cap = (uint64_t)1 << 40;
	struct elv_avg a, b;
	int i;

	(void)state;
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	/* Anything above 2^40 counts as 2^40: total 256 * 2^40 / 8 = 2^45. */
	elv_avg_add(&a, UINT64_MAX);
	expect_state(&a, 32, (uint64_t)1 << 45, cap + 4);
	elv_avg_add(&b, cap);
	expect_state(&b, 32, (uint64_t)1 << 45, cap + 4);
	for (i = 0; i < 500; i++) {
		elv_avg_add(&a, UINT64_MAX - (uint64_t)i);
		elv_avg_add(&b, cap + 1);
		assert_true(a.total <= 256 * cap);
		assert_int_equal(a.total, b.total);
		assert_int_equal(a.mean, b.mean);
	}
	/* Settled like any constant stream: total 7 below 256 * cap. */
	expect_state(&a, 249, 256 * cap - 7, (256 * cap - 7 + 128) / 249);
	/* And it still comes back down without having wrapped. */
	elv_avg_add(&a, 0);
	assert_int_equal(a.total, (7 * (256 * cap - 7)) / 8);
}

static void test_null_is_ignored(void **state)
{
	(void)state;
	elv_avg_add(NULL, 5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_first_three_constant),
		cmocka_unit_test(test_first_three_mixed),
		cmocka_unit_test(test_samples_converge),
		cmocka_unit_test(test_decay_to_new_level),
		cmocka_unit_test(test_saturation),
		cmocka_unit_test(test_null_is_ignored),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
