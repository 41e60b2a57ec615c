/*
 * Replay never drops records silently: MSR traces with a 7-hour gap and one spanning a week
 * replay every record with no limit; a time limit that stops a run marks it cut, counts what
 * was left out, and every report format (table, JSON, CSV) carries the one-line message.
 * A foreground stream with no end is refused without a limit. Chosen percentiles follow the
 * nearest-rank rule.
 */
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
#include "support/sim_config.h"
#include "elevator/sim_trace.h"

#define HOUR_NS (3600ULL * 1000000000ULL)
/* Windows FILETIME ticks (100 ns) of an arbitrary start. */
#define T0 128166372000000000ULL
#define TICKS_PER_S 10000000ULL

static struct elv_sim_config cfg;

/* Load MSR text into replay records (the trace reader, then the conversion elvsim does). */
static struct elv_sim_replay_rec *load_msr(const char *text, size_t *n)
{
	struct elv_trace_rec *recs = NULL;
	struct elv_sim_replay_rec *rr;
	char err[ELV_TRACE_ERR_MAX];
	size_t i;

	assert_int_equal(elv_trace_load_mem(text, strlen(text), "mem.csv", ELV_TRACE_MSR, &recs,
					    n, err, sizeof(err)), 0);
	rr = calloc(*n, sizeof(*rr));
	assert_non_null(rr);
	for (i = 0; i < *n; i++) {
		rr[i].time_ns = recs[i].time_ns;
		rr[i].sector = recs[i].sector;
		rr[i].nr_sectors = recs[i].nr_sectors;
		rr[i].op = recs[i].op;
		rr[i].sync = recs[i].sync;
		rr[i].pid = recs[i].pid;
	}
	elv_trace_free(recs);
	return rr;
}

/* Replay all @n records @rr on preset @dev under @policy: the run must end cleanly, uncut. */
static void replay_whole(const char *dev, const char *policy, struct elv_sim_replay_rec *rr,
			 size_t n, struct elv_sim_result *r)
{
	sim_config_base(&cfg, dev, policy, 1);
	cfg.replay = rr;
	cfg.nr_replay = n;
	assert_int_equal(elv_sim_run(&cfg, r), 0);
	assert_int_equal(r->error, 0);
	assert_int_equal(r->truncated, ELV_SIM_CUT_NONE);
}

static char *gap_trace(void)
{
	char *t = malloc(512);

	assert_non_null(t);
	snprintf(t, 512,
		 "%llu,h,0,Read,4096,4096,0\n"
		 "%llu,h,0,Write,8192,4096,0\n"
		 "%llu,h,0,Read,1048576,4096,0\n",
		 T0, T0 + TICKS_PER_S, T0 + (7 * 3600 + 1) * TICKS_PER_S);
	return t;
}

static void test_seven_hour_gap(void **state)
{
	static const char *const pols[] = { "noop", "deadline", "anticipatory", "cfq" };
	struct elv_sim_result r;
	char *text = gap_trace(), cut[256];
	size_t n, i;
	struct elv_sim_replay_rec *rr = load_msr(text, &n);

	(void)state;
	assert_int_equal(n, 3);
	assert_int_equal(rr[2].time_ns, (7 * 3600 + 1) * 1000000000ULL);
	for (i = 0; i < 4; i++) {
		replay_whole("barracuda", pols[i], rr, n, &r);
		assert_int_equal(r.requests, 3);
		assert_int_equal(r.nr_records, 3);
		assert_int_equal(r.not_issued, 0);
		assert_true(r.makespan_s > 7 * 3600.0 + 1 && r.makespan_s < 7 * 3600.0 + 2);
		assert_int_equal(elv_sim_result_cut(&r, cut, sizeof(cut)), 0);
		assert_string_equal(cut, "");
		elv_sim_result_free(&r);
	}
	free(rr);
	free(text);
}

/* MSR Cambridge traces span a week: 337 records every half hour, 168 hours in all. */
static void test_week_long(void **state)
{
	size_t cap = 337 * 64, len = 0, n, i;
	char *text = malloc(cap);
	struct elv_sim_replay_rec *rr;
	struct elv_sim_result r;

	(void)state;
	assert_non_null(text);
	for (i = 0; i < 337; i++)
		len += (size_t)snprintf(text + len, cap - len, "%llu,h,1,%s,%zu,4096,0\n",
					T0 + (unsigned long long)i * 1800 * TICKS_PER_S,
					i % 3 ? "Read" : "Write", (i * 7919 % 100000) * 4096);
	rr = load_msr(text, &n);
	assert_int_equal(n, 337);
	assert_int_equal(rr[336].time_ns, 168 * HOUR_NS);
	replay_whole("ide2003", "cfq", rr, n, &r);
	assert_int_equal(r.requests, 337);
	assert_int_equal(r.read_lat.n + r.write_lat.n, 337);
	assert_true(r.makespan_s >= 168 * 3600.0 && r.makespan_s < 168 * 3600.0 + 1);
	elv_sim_result_free(&r);
	free(rr);
	free(text);
}

/* A trace may put any number of records at one instant: 120,000 at time 0 all replay. */
static void test_burst_at_one_instant(void **state)
{
	size_t n = 120000, i;
	struct elv_sim_replay_rec *rr = calloc(n, sizeof(*rr));
	struct elv_sim_result r;

	(void)state;
	assert_non_null(rr);
	for (i = 0; i < n; i++) {
		rr[i].sector = i * 16;
		rr[i].nr_sectors = 8;
		rr[i].op = i % 10 < 7 ? ELV_OP_READ : ELV_OP_WRITE;
		rr[i].sync = rr[i].op == ELV_OP_READ;
	}
	replay_whole("ssd", "deadline", rr, n, &r);
	assert_int_equal(r.requests, n);
	elv_sim_result_free(&r);
	free(rr);
}

static char *report_text(const struct elv_sim_report *rep, int fmt)
{
	FILE *f = tmpfile();
	long len;
	char *buf;

	assert_non_null(f);
	if (fmt == 0)
		elv_sim_report_table(f, rep);
	else if (fmt == 1)
		elv_sim_report_json(f, rep);
	else
		elv_sim_report_csv(f, rep);
	len = ftell(f);
	buf = calloc(1, (size_t)len + 1);
	assert_non_null(buf);
	rewind(f);
	assert_int_equal(fread(buf, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	return buf;
}

static unsigned count(const char *hay, const char *needle)
{
	unsigned n = 0;

	for (hay = strstr(hay, needle); hay; hay = strstr(hay + 1, needle))
		n++;
	return n;
}

/* A limit that stops the run: cut, counted, and said once in every format. */
static void test_limit_is_an_error(void **state)
{
	static const char msg[] = "deadline cut by the time limit at 3600.000 s: 1 of 3 trace "
				  "records never issued; 0 requests in flight not counted";
	struct elv_sim_report rep;
	char *text = gap_trace(), cut[256], *out;
	size_t n;
	struct elv_sim_replay_rec *rr = load_msr(text, &n);

	(void)state;
	memset(&rep, 0, sizeof(rep));
	rep.scenario = "replay";
	rep.res = calloc(1, sizeof(*rep.res));
	assert_non_null(rep.res);
	rep.nr = 1;
	snprintf(rep.device, sizeof(rep.device), "barracuda");
	sim_config_base(&cfg, "barracuda", "deadline", 1);
	cfg.replay = rr;
	cfg.nr_replay = n;
	cfg.time_limit_ns = HOUR_NS;
	assert_int_equal(elv_sim_run(&cfg, &rep.res[0].run), 0);
	assert_int_equal(rep.res[0].run.truncated, ELV_SIM_CUT_TIME_LIMIT);
	assert_int_equal(rep.res[0].run.requests, 2);
	assert_int_equal(rep.res[0].run.not_issued, 1);
	assert_int_equal(rep.res[0].run.unfinished, 0);
	assert_int_equal(rep.res[0].run.cut_ns, HOUR_NS);
	assert_int_equal(rep.res[0].run.time_limit_ns, HOUR_NS);
	assert_true(fabs(rep.res[0].run.makespan_s - 3600.0) < 1e-9);
	assert_int_equal(elv_sim_result_cut(&rep.res[0].run, cut, sizeof(cut)), 1);
	assert_string_equal(cut, msg);
	assert_null(strchr(cut, ','));
	assert_null(strchr(cut, '"'));
	/* A short buffer gets a terminated prefix. */
	assert_int_equal(elv_sim_result_cut(&rep.res[0].run, cut, 9), 1);
	assert_string_equal(cut, "deadline");
	assert_int_equal(elv_sim_result_cut(&rep.res[0].run, cut, 0), ELV_EINVAL);
	assert_int_equal(elv_sim_result_cut(NULL, cut, sizeof(cut)), ELV_EINVAL);

	out = report_text(&rep, 0);
	assert_int_equal(count(out, msg), 1);
	assert_non_null(strstr(out, "CUT: "));
	free(out);
	out = report_text(&rep, 1);
	assert_int_equal(count(out, msg), 1);
	assert_non_null(strstr(out, "\"truncated\": 1, \"cut\": \"deadline cut"));
	free(out);
	out = report_text(&rep, 2);
	assert_int_equal(count(out, msg), 1);
	assert_non_null(strstr(out, ",primary,cut\n"));
	assert_non_null(strstr(out, ",\"deadline cut by"));
	free(out);
	elv_sim_report_free(&rep);
	free(rr);
	free(text);
}

/* Closed-loop streams: an endless foreground stream needs a limit; with one it is cut. */
static void test_endless_stream(void **state)
{
	struct elv_sim_result r;
	char cut[256];

	(void)state;
	sim_config_base(&cfg, "barracuda", "noop", 1);
	cfg.nr_streams = 1;
	cfg.streams[0].kind = ELV_SIM_SYNC_READER;
	cfg.streams[0].count = 0; /* no end */
	assert_int_equal(elv_sim_run(&cfg, &r), ELV_EINVAL);
	cfg.streams[0].background = 1;
	cfg.nr_streams = 2;
	cfg.streams[1].kind = ELV_SIM_SYNC_READER;
	cfg.streams[1].count = 20;
	assert_int_equal(elv_sim_run(&cfg, &r), 0);
	assert_int_equal(r.truncated, ELV_SIM_CUT_NONE);
	elv_sim_result_free(&r);
	cfg.nr_streams = 1;
	cfg.streams[0].background = 0;
	cfg.time_limit_ns = 2000000000ULL;
	assert_int_equal(elv_sim_run(&cfg, &r), 0);
	assert_int_equal(r.truncated, ELV_SIM_CUT_TIME_LIMIT);
	assert_int_equal(r.streams_unfinished, 1);
	assert_int_equal(r.nr_records, 0);
	assert_int_equal(elv_sim_result_cut(&r, cut, sizeof(cut)), 1);
	assert_non_null(strstr(cut, "noop cut by the time limit at 2.000 s: 1 foreground "
				   "streams unfinished"));
	elv_sim_result_free(&r);
	/* Percentiles outside (0, 100] are refused. */
	cfg.nr_pct = 1;
	cfg.pct[0] = 0;
	assert_int_equal(elv_sim_run(&cfg, &r), ELV_EINVAL);
	cfg.pct[0] = 100.5;
	assert_int_equal(elv_sim_run(&cfg, &r), ELV_EINVAL);
	cfg.nr_pct = ELV_SIM_MAX_PCT + 1;
	cfg.pct[0] = 50;
	assert_int_equal(elv_sim_run(&cfg, &r), ELV_EINVAL);
}

/* Nearest rank on known latencies: 1000 reads, the i-th waiting for i - 1 others. */
static void test_percentiles(void **state)
{
	struct elv_sim_replay_rec *rr = calloc(1000, sizeof(*rr));
	struct elv_sim_result r;
	size_t i;

	(void)state;
	assert_non_null(rr);
	/* All at time 0 on a device serving one read in a fixed 65 us (the toy flash of
	 * test_engine): the k-th completion (k = 1..1000) waits k * 65 us. Distinct sectors
	 * far apart so nothing merges. */
	for (i = 0; i < 1000; i++) {
		rr[i].sector = i * 1024;
		rr[i].nr_sectors = 8;
		rr[i].op = ELV_OP_READ;
		rr[i].sync = 1;
	}
	memset(&cfg, 0, sizeof(cfg));
	cfg.policy = elv_policy_find("noop");
	cfg.dev.kind = ELV_SIM_DEV_USB;
	cfg.dev.capacity = 1 << 20;
	cfg.dev.flash.page_sectors = 8;
	cfg.dev.flash.pages_per_block = 64;
	cfg.dev.flash.log_blocks = 2;
	cfg.dev.flash.read_us = 10;
	cfg.dev.flash.prog_us = 100;
	cfg.dev.flash.erase_us = 1000;
	cfg.dev.flash.xfer_us = 5;
	cfg.dev.flash.cmd_us = 50;
	assert_int_equal(elv_sim_param_finish(&cfg.dev), 0);
	cfg.replay = rr;
	cfg.nr_replay = 1000;
	cfg.nr_pct = 4;
	cfg.pct[0] = 50;
	cfg.pct[1] = 90;
	cfg.pct[2] = 99.9;
	cfg.pct[3] = 100;
	assert_int_equal(elv_sim_run(&cfg, &r), 0);
	assert_int_equal(r.read_lat.n, 1000);
	assert_int_equal(r.nr_pct, 4);
	assert_true(fabs(r.read_lat.pct[0] - 500 * 0.065) < 1e-9);
	assert_true(fabs(r.read_lat.pct[1] - 900 * 0.065) < 1e-9);
	assert_true(fabs(r.read_lat.pct[2] - 999 * 0.065) < 1e-9);
	assert_true(fabs(r.read_lat.pct[3] - 1000 * 0.065) < 1e-9);
	assert_true(fabs(r.read_lat.p99 - 990 * 0.065) < 1e-9);
	assert_true(fabs(r.read_lat.max - 1000 * 0.065) < 1e-9);
	assert_true(fabs(r.streams[0].read_lat.pct[1] - 900 * 0.065) < 1e-9);
	/* The samples kept for plots are in order. */
	assert_int_equal(r.nr_read_samples, 1000);
	for (i = 1; i < r.nr_read_samples; i++)
		assert_true(r.read_samples_ms[i - 1] <= r.read_samples_ms[i]);
	elv_sim_result_free(&r);
	free(rr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_seven_hour_gap),
		cmocka_unit_test(test_week_long),
		cmocka_unit_test(test_burst_at_one_instant),
		cmocka_unit_test(test_limit_is_an_error),
		cmocka_unit_test(test_endless_stream),
		cmocka_unit_test(test_percentiles),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
