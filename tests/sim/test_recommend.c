/*
 * elv_policy_recommend(): the policy for each kind of device, never NULL.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "elevator/elevator.h"

static const char *rec(uint8_t rot, uint8_t zoned, uint16_t qd, uint32_t mbps)
{
	struct elv_device_traits t;

	memset(&t, 0, sizeof(t));
	t.rotational = rot;
	t.zoned = zoned;
	t.queue_depth = qd;
	t.mbps = mbps;
	return elv_policy_name(elv_policy_recommend(&t));
}

/* The first built-in of a preference list, as the library resolves it. */
static const char *first(const char *a, const char *b)
{
	return elv_policy_find(a) ? a : b;
}

static void test_devices(void **state)
{
	(void)state;
	assert_non_null(elv_policy_recommend(NULL));
	assert_string_equal(elv_policy_name(elv_policy_recommend(NULL)),
			    first("cfq", first("anticipatory", "deadline")));
	/* All-zero traits mean "unknown": the same as NULL. */
	assert_string_equal(rec(0, 0, 0, 0), first("cfq", first("anticipatory", "deadline")));
	assert_string_equal(rec(1, 0, 1, 40), first("cfq", first("anticipatory", "deadline")));
	assert_string_equal(rec(1, 0, 0, 40), first("cfq", first("anticipatory", "deadline")));
	assert_string_equal(rec(1, 0, 32, 40), "deadline");
	assert_string_equal(rec(0, 0, 32, 250), "noop");
	assert_string_equal(rec(0, 0, 1, 20), "deadline");
	assert_string_equal(rec(1, 1, 1, 200), "deadline");
	assert_string_equal(rec(0, 1, 64, 200), "deadline");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_devices),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
