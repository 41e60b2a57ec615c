/*
 * The reference scenarios at reduced scale, as regression tests of the models: FIFO seeks a
 * third of the span, the drive's QD 1 rate matches its sheet and SPTF beats SSTF, a
 * read-preferring policy bounds read latency under a write flood, anticipation reads the tree
 * far faster than deadline, and noop wins PostMark on the USB stick.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <string.h>

#include <cmocka.h>

#include "elevator/sim.h"
#include "support/scn_run.h"

static void test_seek_sort(void **state)
{
	static const char *const pol[] = { "noop", "anticipatory", NULL };
	const struct elv_sim_scn_result *r;
	double d, t;

	(void)state;
	scn_run("seek-sort", pol, 0.5);
	r = scn_res("noop");
	assert_true(fabs(r->run.mean_seek_sectors / 320000.0 - 1) < 0.03);
	/* Seek time falls far less than seek distance. */
	r = scn_res("anticipatory");
	d = r->run.mean_seek_sectors / scn_res("noop")->run.mean_seek_sectors;
	t = r->run.mean_seek_ms / scn_res("noop")->run.mean_seek_ms;
	assert_true(fabs(r->run.mean_seek_sectors * (r->run.mean_queued + 1) / 960000 - 1) < 0.10);
	assert_true(t > 2 * d);
	elv_sim_report_free(&scn_rep);
}

static void test_tcq_depth(void **state)
{
	static const char *const pol[] = { "noop", NULL };
	const struct elv_sim_scn_result *r;

	(void)state;
	scn_run("tcq-depth", pol, 0.3);
	r = scn_res("noop");
	assert_int_equal(r->nr_curve, 31);
	assert_true(fabs(r->curve[0].iops / scn_rep.expect_qd1_iops - 1) < 0.06);
	assert_true(fabs(scn_rep.expect_qd1_iops / 71 - 1) < 0.05);
	/* Rising, concave, and SPTF well above SSTF and FCFS. */
	assert_true(r->curve[7].iops > r->curve[0].iops * 1.3);
	assert_true(r->curve[30].iops > r->curve[7].iops);
	assert_true((r->curve[7].iops - r->curve[0].iops) / 7 >
		    (r->curve[30].iops - r->curve[7].iops) / 23);
	assert_true(r->curve_sptf[30].iops - r->curve_sptf[0].iops >
		    1.3 * (r->curve_sstf[30].iops - r->curve_sstf[0].iops));
	assert_true(fabs(r->curve_fcfs[30].iops / r->curve_fcfs[0].iops - 1) < 0.06);
	elv_sim_report_free(&scn_rep);
}

static void test_write_bomb(void **state)
{
	static const char *const pol[] = { "noop", "deadline", NULL };
	const struct elv_sim_scn_result *n, *d;

	(void)state;
	scn_run("write-bomb", pol, 0.5);
	n = scn_res("noop");
	d = scn_res("deadline");
	assert_true(n->run.write_mbps > 30 && n->run.write_mbps < 45);
	assert_true(d->run.read_lat.p99 * 3 < n->run.read_lat.p99);
	assert_true(d->run.write_mbps > 0.85 * n->run.write_mbps);
	elv_sim_report_free(&scn_rep);
}

/* CFQ sends the read at once; the drive then writes back at most its one dirty run (a
 * segment, 256 KiB, about 7 ms) before the read, so the read waits tens of ms, not the
 * whole write queue. */
static void test_write_bomb_cfq(void **state)
{
	static const char *const pol[] = { "noop", "cfq", NULL };
	const struct elv_sim_scn_result *n, *c;

	(void)state;
	scn_run("write-bomb", pol, 0.2);
	n = scn_res("noop");
	c = scn_res("cfq");
	assert_true(c->run.read_lat.p99 * 10 < n->run.read_lat.p99);
	assert_true(c->run.write_mbps > 0.85 * n->run.write_mbps);
	elv_sim_report_free(&scn_rep);
}

static void test_stream_vs_small_files(void **state)
{
	static const char *const pol[] = { "deadline", "anticipatory", NULL };
	const struct elv_sim_scn_result *d, *a;

	(void)state;
	scn_run("stream-vs-small-files", pol, 0.05);
	d = scn_res("deadline");
	a = scn_res("anticipatory");
	assert_true(a->run.makespan_s * 5 < d->run.makespan_s);
	/* The streamer's throughput while the tree is read is no worse under anticipation:
	 * deadline's alternation costs it two seeks per small read. */
	assert_string_equal(a->run.streams[0].name, "cat-512M");
	assert_true(a->run.streams[0].mbps >= d->run.streams[0].mbps);
	elv_sim_report_free(&scn_rep);
}

static void test_postmark_usb(void **state)
{
	static const char *const pol[] = { "noop", "deadline", "anticipatory", "cfq", NULL };
	unsigned i, n;

	(void)state;
	n = scn_run("postmark-usb", pol, 1);
	assert_int_equal(n, 4);
	assert_string_equal(scn_rep.res[0].run.policy, "noop");
	for (i = 1; i < n; i++)
		assert_true(scn_rep.res[0].run.makespan_s <= scn_rep.res[i].run.makespan_s);
	assert_true(scn_rep.res[0].run.dev.switch_merges > 0);
	elv_sim_report_free(&scn_rep);
}

/*
 * classic at a fifth of the reads: every rate point is there, the open-loop reads complete at
 * the offered rate while the drive keeps up, FCFS saturates near the drive's QD 1 rate
 * (about 70/s) while SPTF, with the drive model's positioning estimate, keeps up at 110/s
 * and has the lower mean there.
 */
static void test_classic(void **state)
{
	static const char *const pol[] = { "fcfs", "sptf", NULL };
	const struct elv_sim_scn_result *f, *s;
	unsigned k, last = ELV_SIM_MAX_RATES - 1;

	(void)state;
	scn_run("classic", pol, 0.2);
	f = scn_res("fcfs");
	s = scn_res("sptf");
	assert_int_equal(f->nr_sweep, ELV_SIM_MAX_RATES);
	assert_int_equal(s->nr_sweep, ELV_SIM_MAX_RATES);
	for (k = 0; k < ELV_SIM_MAX_RATES; k++) {
		assert_true(f->sweep[k].rate == s->sweep[k].rate);
		assert_true(s->sweep[k].mean_ms > 0 && s->sweep[k].scv > 0);
		assert_true(s->sweep[k].p99_ms <= s->sweep[k].max_ms);
	}
	assert_true(fabs(f->sweep[0].iops / f->sweep[0].rate - 1) < 0.15);
	assert_true(f->sweep[last].iops < 80);
	assert_true(s->sweep[last].iops > 95);
	assert_true(s->sweep[last].mean_ms < f->sweep[last].mean_ms);
	/* The drive model answered SPTF's estimates: no fallback to seek distance. */
	for (k = 0; k < s->run.nr_pstats; k++)
		if (strcmp(s->run.pstat_name[k], "fallbacks") == 0)
			assert_int_equal(s->run.pstat_value[k], 0);
	assert_true(s->primary > 0);
	elv_sim_report_free(&scn_rep);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_seek_sort),
		cmocka_unit_test(test_tcq_depth),
		cmocka_unit_test(test_write_bomb),
		cmocka_unit_test(test_write_bomb_cfq),
		cmocka_unit_test(test_stream_vs_small_files),
		cmocka_unit_test(test_postmark_usb),
		cmocka_unit_test(test_classic),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
