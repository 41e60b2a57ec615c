/*
 * Reference scenarios from the cmocka suites (test_scenarios, test_bfq_scenarios): one report
 * at a time, run under named policies that must all be built in, and its results looked up by
 * policy name. A policy missing from the build or from the report fails the test, so that a
 * suite never passes by checking less.
 */
#ifndef ELV_TEST_SCN_RUN_H
#define ELV_TEST_SCN_RUN_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "elevator/sim.h"

/* The last report of scn_run(); the test frees it with elv_sim_report_free(). */
static struct elv_sim_report scn_rep;

/* Run scenario @scn under the NULL-terminated @names at @scale, seed 1; returns how many. */
static inline unsigned scn_run(const char *scn, const char *const *names, double scale)
{
	const struct elv_policy *p[8];
	struct elv_sim_scn_opts o;
	unsigned n = 0;
	int idx = elv_sim_scenario_find(scn);

	for (; *names; names++) {
		assert_true(n < sizeof(p) / sizeof(p[0]));
		p[n] = elv_policy_find(*names);
		if (!p[n])
			fail_msg("policy %s is not built in", *names);
		n++;
	}
	assert_true(n > 0);
	assert_true(idx >= 0);
	memset(&o, 0, sizeof(o));
	o.seed = 1;
	o.scale = scale;
	assert_int_equal(elv_sim_scenario_run((unsigned)idx, p, n, &o, &scn_rep), 0);
	assert_int_equal(scn_rep.nr, n);
	return n;
}

/* The result of @policy in the last report. */
static inline const struct elv_sim_scn_result *scn_res(const char *policy)
{
	unsigned i;

	for (i = 0; i < scn_rep.nr; i++)
		if (strcmp(scn_rep.res[i].run.policy, policy) == 0)
			return &scn_rep.res[i];
	fail_msg("no result for policy %s", policy);
	return NULL;
}

#endif
