/*
 * The qos scenario: four mClock clients on one device get the allocation mClock predicts
 * (reservation first, the rest by weight, capped by the limit), under more than one policy;
 * a throttled client alone bursts at its burst rate while its bucket lasts, then runs at its
 * cap. The report carries both, in JSON too.
 */
#define _POSIX_C_SOURCE 200809L /* open_memstream */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "elevator/sim.h"

/* Relative tolerance of a measured allocation against the prediction. */
#define TOL 0.05

static struct elv_sim_report rep;

static void run_qos(const char *const *names)
{
	const struct elv_policy *p[4];
	struct elv_sim_scn_opts o;
	unsigned n = 0;
	int idx = elv_sim_scenario_find("qos");

	assert_true(idx >= 0);
	for (; *names; names++) {
		p[n] = elv_policy_find(*names);
		if (!p[n])
			fail_msg("policy %s is not built in", *names);
		n++;
	}
	memset(&o, 0, sizeof(o));
	o.seed = 1;
	o.scale = 0.5;
	assert_int_equal(elv_sim_scenario_run((unsigned)idx, p, n, &o, &rep), 0);
	assert_int_equal(rep.nr, n);
}

static const struct elv_sim_qos_client *client(const struct elv_sim_scn_result *r,
					       const char *name)
{
	unsigned i;

	for (i = 0; i < r->nr_qos; i++)
		if (strcmp(r->qos[i].name, name) == 0)
			return &r->qos[i];
	fail_msg("no client %s", name);
	return NULL;
}

static void test_allocation(void **state)
{
	static const char *const pol[] = { "noop", "deadline", "cfq", NULL };
	unsigned k, i;

	(void)state;
	run_qos(pol);
	for (k = 0; k < rep.nr; k++) {
		const struct elv_sim_scn_result *r = &rep.res[k];
		const struct elv_sim_qos_client *res = client(r, "reserved");
		const struct elv_sim_qos_client *w1 = client(r, "weight-1");
		const struct elv_sim_qos_client *w3 = client(r, "weight-3");
		const struct elv_sim_qos_client *lim = client(r, "limited");
		double sum = 0;

		assert_int_equal(r->nr_qos, 4);
		assert_true(r->qos_capacity > 1000);
		for (i = 0; i < 4; i++) {
			const struct elv_sim_qos_client *q = &r->qos[i];

			sum += q->predicted_iops;
			if (fabs(q->measured_iops / q->predicted_iops - 1) > TOL)
				fail_msg("%s: %s measured %.1f/s, predicted %.1f/s", r->run.policy,
					 q->name, q->measured_iops, q->predicted_iops);
		}
		/* The prediction shares out exactly the capacity measured. */
		assert_true(fabs(sum / r->qos_capacity - 1) < 1e-6);
		/* Each mechanism shows: the reservation holds above the weight share, weights
		 * divide the rest 1:3, the limit caps a client whose weight is the largest. */
		assert_true(res->measured_iops >= res->reservation * (1 - TOL));
		assert_true(res->predicted_iops > w1->predicted_iops * 2);
		assert_true(fabs(w3->measured_iops / w1->measured_iops - 3) < 3 * TOL * 2);
		assert_true(lim->measured_iops <= lim->limit * 1.01);
		assert_true(lim->predicted_iops == lim->limit);
		assert_true(fabs(r->primary - 0) <= TOL);
	}
	elv_sim_report_free(&rep);
}

static void test_burst(void **state)
{
	static const char *const pol[] = { "deadline", NULL };
	const struct elv_sim_scn_result *r;
	double peak, avg, step, tb = 0;
	unsigned i, n;

	(void)state;
	run_qos(pol);
	r = &rep.res[0];
	n = r->nr_burst;
	assert_true(n >= 20);
	step = r->burst[1].t_s - r->burst[0].t_s;
	peak = r->burst[1].cap;
	avg = r->burst[n - 1].cap;
	assert_true(peak >= 4 * avg);
	/* The interval in which the bucket fills up, by the meter's arithmetic. */
	for (i = 0; i < n; i++)
		if (r->burst[i].cap < peak && r->burst[i].cap > avg)
			tb = r->burst[i].t_s;
	assert_true(tb > 1.0 && tb < r->burst[n - 1].t_s - 1.0);
	/* Every interval but the last (which ends with the run) gets what the meter's
	 * arithmetic allows: the fresh meter's allowance and the burst rate first, the cap
	 * once the bucket is full; within 3% and one request. */
	for (i = 0; i + 1 < n; i++) {
		const struct elv_sim_burst_point *b = &r->burst[i];

		if (fabs(b->iops - b->cap) > 0.03 * b->cap + 1 / step)
			fail_msg("at %.2f s: %.1f/s, the meter allows %.1f/s", b->t_s, b->iops,
				 b->cap);
	}
	elv_sim_report_free(&rep);
}

static void test_json(void **state)
{
	static const char *const pol[] = { "noop", NULL };
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	run_qos(pol);
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	elv_sim_report_json(f, &rep);
	elv_sim_report_table(f, &rep);
	fclose(f);
	assert_non_null(strstr(buf, "\"qos_capacity_iops\""));
	assert_non_null(strstr(buf, "\"name\": \"reserved\""));
	assert_non_null(strstr(buf, "\"predicted_iops\""));
	assert_non_null(strstr(buf, "\"burst\": [{\"t_s\": 0,"));
	assert_non_null(strstr(buf, "mClock on"));
	free(buf);
	elv_sim_report_free(&rep);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_allocation),
		cmocka_unit_test(test_burst),
		cmocka_unit_test(test_json),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
