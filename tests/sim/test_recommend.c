/*
 * elv_policy_recommend(): the policy for each kind of device, never NULL, and on every device
 * preset the simulator measures it as the fastest on the PostMark-like workload, or within 5%
 * of the fastest; on the USB stick, where a real PostMark trace replayed on the model has noop
 * clearly ahead, the fastest outright.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "elevator/elevator.h"
#include "elevator/sim.h"

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
	/* A single-command flash device (USB stick) keeps the file system's write order. */
	assert_string_equal(rec(0, 0, 1, 20), "noop");
	assert_string_equal(rec(0, 0, 0, 20), "noop");
	assert_string_equal(rec(1, 1, 1, 200), "deadline");
	assert_string_equal(rec(0, 1, 64, 200), "deadline");
}

/* Total time of postmark-usb on one preset under every built-in policy. */
static void postmark_on(const char *preset, const char *rec_name)
{
	const struct elv_policy *pol[8];
	struct elv_sim_dev_params dev;
	struct elv_sim_scn_opts o;
	struct elv_sim_report rep;
	unsigned n = 0, k, best = 0, ri = 8;
	int si = elv_sim_scenario_find("postmark-usb");

	assert_true(si >= 0);
	assert_int_equal(elv_sim_preset(preset, &dev), 0);
	assert_true(elv_sim_scenario_fits((unsigned)si, &dev));
	for (k = 0; elv_policy_at(k) && n < 8; k++)
		pol[n++] = elv_policy_at(k);
	assert_true(n >= 4);
	memset(&o, 0, sizeof(o));
	o.dev = &dev;
	o.seed = 1;
	assert_int_equal(elv_sim_scenario_run((unsigned)si, pol, n, &o, &rep), 0);
	assert_int_equal(rep.nr, n);
	for (k = 0; k < n; k++) {
		assert_int_equal(rep.res[k].run.truncated, 0);
		assert_true(rep.res[k].primary > 0);
		if (rep.res[k].primary < rep.res[best].primary)
			best = k;
		if (strcmp(rep.res[k].run.policy, rec_name) == 0)
			ri = k;
	}
	assert_true(ri < n);
	print_message("%-10s recommended %-9s %8.3f s, fastest %-12s %8.3f s\n", preset, rec_name,
		      rep.res[ri].primary, rep.res[best].run.policy, rep.res[best].primary);
	assert_true(rep.res[ri].primary <= rep.res[best].primary * 1.05);
	if (strcmp(preset, "usb-stick") == 0)
		assert_int_equal(ri, best);
	elv_sim_report_free(&rep);
}

static void test_presets_postmark(void **state)
{
	unsigned i, ran = 0;

	(void)state;
	for (i = 0; elv_sim_preset_at(i); i++) {
		struct elv_sim_dev_params p;
		struct elv_device_traits t;

		assert_int_equal(elv_sim_preset(elv_sim_preset_at(i), &p), 0);
		/* Zoned presets take sequential writes only: not postmark's. */
		if (!elv_sim_scenario_fits((unsigned)elv_sim_scenario_find("postmark-usb"), &p))
			continue;
		elv_sim_dev_traits(&p, &t);
		postmark_on(p.name, elv_policy_name(elv_policy_recommend(&t)));
		ran++;
	}
	/* barracuda, ide2003, ssd, usb-stick, null: every one fits postmark-usb. */
	assert_int_equal(ran, 5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_devices),
		cmocka_unit_test(test_presets_postmark),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
