/*
 * The simulation engine: closed-loop timing against hand computations on zero-time and toy
 * flash devices, open and closed-loop replay, merges carried back to every issuer, BUSY
 * answers requeued, the time limit, and determinism (equal seeds give equal JSON bytes).
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

#define assert_near(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) <= (eps))

static struct elv_sim_config cfg;

/* A flash device whose 1-page read costs 50 + 10 + 5 = 65 us. */
static void toy_flash(void)
{
	struct elv_sim_flash_params *fp = &cfg.dev.flash;

	memset(&cfg.dev, 0, sizeof(cfg.dev));
	cfg.dev.kind = ELV_SIM_DEV_USB;
	cfg.dev.capacity = 1 << 20;
	fp->page_sectors = 8;
	fp->pages_per_block = 64;
	fp->log_blocks = 2;
	fp->read_us = 10;
	fp->prog_us = 100;
	fp->erase_us = 1000;
	fp->xfer_us = 5;
	fp->cmd_us = 50;
	assert_int_equal(elv_sim_param_finish(&cfg.dev), 0);
}

static void test_think_time(void **state)
{
	struct elv_sim_result r;
	struct elv_sim_stream_spec *s;

	(void)state;
	/* Zero service time: ten dependent reads 2 ms of thinking apart end at 18 ms. */
	sim_config_base(&cfg, "null", "noop", 1);
	s = sim_config_one_stream(&cfg, ELV_SIM_SYNC_READER);
	s->pattern = ELV_SIM_SEQUENTIAL;
	s->count = 10;
	s->think_ms = 2;
	assert_int_equal(elv_sim_run(&cfg, &r), 0);
	assert_int_equal(r.error, 0);
	assert_int_equal(r.requests, 10);
	assert_near(r.makespan_s, 0.018, 1e-12);
	assert_int_equal(r.read_lat.n, 10);
	assert_near(r.read_lat.max, 0, 1e-12);
	elv_sim_result_free(&r);

	/* On the toy flash each read takes 65 us: 10 * 0.065 + 9 * 2 ms. */
	toy_flash();
	assert_int_equal(elv_sim_run(&cfg, &r), 0);
	assert_near(r.makespan_s, 0.01865, 1e-12);
	assert_near(r.read_lat.p50, 0.065, 1e-9);
	assert_near(r.busy_s, 0.00065, 1e-12);
	elv_sim_result_free(&r);
}

static void test_replay(void **state)
{
	static const struct elv_sim_replay_rec recs[] = {
		{ 0, 0, 8, ELV_OP_READ, 1, 0, 7 },
		{ 1000000, 800, 8, ELV_OP_READ, 1, 0, 7 },
		{ 1010000, 1600, 8, ELV_OP_READ, 1, 0, 7 },
	};
	struct elv_sim_result r;

	(void)state;
	sim_config_base(&cfg, "null", "noop", 1);
	toy_flash();
	cfg.replay = recs;
	cfg.nr_replay = 3;
	/* Open loop: issued at 0, 1 and 1.01 ms; the last waits for the second: 1.13 ms. */
	assert_int_equal(elv_sim_run(&cfg, &r), 0);
	assert_int_equal(r.requests, 3);
	assert_near(r.makespan_s, 0.00113, 1e-12);
	assert_int_equal(r.nr_streams, 1);
	assert_string_equal(r.streams[0].name, "pid 7");
	elv_sim_result_free(&r);
	/* Closed loop: each waits for the previous one, then the original gap. 0.065 + 1 +
	 * 0.065 + 0.01 + 0.065 = 1.205 ms. */
	cfg.closed_loop = 1;
	assert_int_equal(elv_sim_run(&cfg, &r), 0);
	assert_near(r.makespan_s, 0.001205, 1e-12);
	elv_sim_result_free(&r);
}

struct trace_rec {
	char ev;
	uint64_t now;
	uint64_t sector;
};

struct tracebuf {
	struct trace_rec r[16];
	unsigned n;
};

static void trace_cb(void *ctx, char ev, uint64_t now, const struct elv_sim_io *io)
{
	struct tracebuf *t = ctx;

	assert_true(t->n < 16);
	t->r[t->n].ev = ev;
	t->r[t->n].now = now;
	t->r[t->n].sector = io->sector;
	t->n++;
}

/* The command trace sees every command given to the device and its completion, in order. */
static void test_trace_hook(void **state)
{
	static const struct elv_sim_replay_rec recs[] = {
		{ 0, 0, 8, ELV_OP_READ, 1, 0, 7 },
		{ 1000000, 800, 8, ELV_OP_READ, 1, 0, 7 },
		{ 1010000, 1600, 8, ELV_OP_READ, 1, 0, 7 },
	};
	/* 65 us per read; the third arrives while the second is served and follows it. */
	static const struct trace_rec want[] = {
		{ 'D', 0, 0 }, { 'C', 65000, 0 }, { 'D', 1000000, 800 }, { 'C', 1065000, 800 },
		{ 'D', 1065000, 1600 }, { 'C', 1130000, 1600 },
	};
	struct tracebuf t;
	struct elv_sim_result r;
	unsigned i;

	(void)state;
	sim_config_base(&cfg, "null", "noop", 1);
	toy_flash();
	cfg.replay = recs;
	cfg.nr_replay = 3;
	memset(&t, 0, sizeof(t));
	cfg.trace = trace_cb;
	cfg.trace_ctx = &t;
	assert_int_equal(elv_sim_run(&cfg, &r), 0);
	elv_sim_result_free(&r);
	assert_int_equal(t.n, 6);
	for (i = 0; i < 6; i++) {
		assert_int_equal(t.r[i].ev, want[i].ev);
		assert_int_equal(t.r[i].now, want[i].now);
		assert_int_equal(t.r[i].sector, want[i].sector);
	}
}

static void test_completion_dispatches_first(void **state)
{
	struct elv_sim_result r;
	struct elv_sim_stream_spec *st, *rd;

	(void)state;
	/* A streamer keeping two 128 KiB reads in flight high on the toy flash (530 us each)
	 * and a dependent 4 KiB reader low on it, under deadline. The driver starts the next
	 * command from the completion, before the streamer can queue its next read, so the
	 * sweep finds nothing above it and the batch restarts at the oldest read: the reader
	 * waits for at most one streamer read in service and one queued, never for its
	 * 500 ms deadline. */
	sim_config_base(&cfg, "null", "deadline", 1);
	toy_flash();
	cfg.nr_streams = 2;
	st = &cfg.streams[0];
	st->kind = ELV_SIM_STREAMER;
	st->region_start = 1 << 19;
	st->region_len = 1 << 18;
	st->rq_sectors = 256;
	st->depth = 2;
	st->background = 1;
	rd = &cfg.streams[1];
	rd->kind = ELV_SIM_SYNC_READER;
	rd->pattern = ELV_SIM_RANDOM;
	rd->region_len = 1 << 18;
	rd->count = 50;
	rd->think_ms = 0.1;
	assert_int_equal(elv_sim_run(&cfg, &r), 0);
	assert_int_equal(r.error, 0);
	assert_int_equal(r.streams[1].read_lat.n, 50);
	assert_true(r.streams[1].read_lat.max <= 2 * 0.530 + 0.065 + 1e-9);
	assert_true(r.streams[0].bytes > 0);
	elv_sim_result_free(&r);
}

static void test_merges_reach_every_issuer(void **state)
{
	struct elv_sim_result r;
	struct elv_sim_stream_spec *s;

	(void)state;
	/* 4 KiB sequential buffered writes, 64 in flight, on a QD 1 disk: the queue merges
	 * them into 128 KiB requests, and every original write is completed and counted. */
	sim_config_base(&cfg, "ide2003", "noop", 1);
	s = sim_config_one_stream(&cfg, ELV_SIM_WRITER);
	s->rq_sectors = 8;
	s->depth = 64;
	s->bytes = 4 << 20;
	assert_int_equal(elv_sim_run(&cfg, &r), 0);
	assert_int_equal(r.error, 0);
	assert_int_equal(r.requests, 1024);
	assert_int_equal(r.write_lat.n, 1024);
	assert_true(r.dispatched < 200);
	assert_int_equal(r.streams[0].bytes, 4 << 20);
	elv_sim_result_free(&r);
}

static void test_busy_requeue(void **state)
{
	struct elv_sim_result r, r2;
	struct elv_sim_stream_spec *s;

	(void)state;
	/* A drive advertising 8 tags but holding only 4 answers BUSY; every refused command
	 * is requeued and still completes. */
	sim_config_base(&cfg, "barracuda", "deadline", 1);
	cfg.dev.queue_depth = 8;
	cfg.dev.drive_sched = ELV_SIM_DRIVE_SPTF;
	s = sim_config_one_stream(&cfg, ELV_SIM_FIXED_QD);
	s->rq_sectors = 1;
	s->depth = 8;
	s->count = 300;
	assert_int_equal(elv_sim_run(&cfg, &r), 0);
	cfg.dev.busy_depth = 4;
	assert_int_equal(elv_sim_run(&cfg, &r2), 0);
	assert_int_equal(r.dev.busy_refusals, 0);
	assert_true(r2.dev.busy_refusals > 0);
	assert_int_equal(r2.requests, 300);
	assert_int_equal(r2.dev.commands, 300);
	/* Four commands to choose from instead of eight: slower. */
	assert_true(r2.makespan_s > r.makespan_s);
	elv_sim_result_free(&r);
	elv_sim_result_free(&r2);
}

static void test_time_limit(void **state)
{
	struct elv_sim_result r;

	(void)state;
	sim_config_base(&cfg, "barracuda", "noop", 1);
	cfg.nr_streams = 1;
	cfg.streams[0].kind = ELV_SIM_SYNC_READER;
	cfg.streams[0].count = 100000;
	cfg.time_limit_ns = 1000000000ULL;
	assert_int_equal(elv_sim_run(&cfg, &r), 0);
	assert_true(r.truncated);
	assert_true(r.makespan_s <= 1.0);
	assert_true(r.requests > 10 && r.requests < 200);
	elv_sim_result_free(&r);
}

static char *scenario_json(const char *name, uint64_t seed, const char *policy)
{
	const struct elv_policy *p = elv_policy_find(policy);
	struct elv_sim_scn_opts o;
	struct elv_sim_report rep;
	FILE *f = tmpfile();
	long len;
	char *buf;

	assert_non_null(f);
	memset(&o, 0, sizeof(o));
	o.seed = seed;
	o.scale = 0.05;
	assert_int_equal(elv_sim_scenario_run((unsigned)elv_sim_scenario_find(name), &p, 1, &o,
					      &rep), 0);
	elv_sim_report_json(f, &rep);
	elv_sim_report_free(&rep);
	len = ftell(f);
	buf = calloc(1, (size_t)len + 1);
	rewind(f);
	assert_int_equal(fread(buf, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	return buf;
}

static void test_determinism(void **state)
{
	static const char *const names[] = { "seek-sort", "write-bomb", "postmark-usb" };
	unsigned i;

	(void)state;
	for (i = 0; i < 3; i++) {
		char *a = scenario_json(names[i], 7, "deadline");
		char *b = scenario_json(names[i], 7, "deadline");
		char *c = scenario_json(names[i], 8, "deadline");

		assert_string_equal(a, b);
		assert_true(strcmp(a, c) != 0);
		assert_non_null(strstr(a, "\"results\": ["));
		assert_non_null(strstr(a, "\"read_lat_ms\": {"));
		free(a);
		free(b);
		free(c);
	}
}

static void test_report_formats(void **state)
{
	const struct elv_policy *p[2] = { elv_policy_find("noop"), elv_policy_find("deadline") };
	struct elv_sim_scn_opts o;
	struct elv_sim_report rep;
	char buf[8192];
	FILE *f;
	size_t n;

	(void)state;
	memset(&o, 0, sizeof(o));
	o.seed = 1;
	o.scale = 0.02;
	assert_int_equal(elv_sim_scenario_run((unsigned)elv_sim_scenario_find("seek-sort"), p, 2,
					      &o, &rep), 0);
	assert_int_equal(rep.nr, 2);
	assert_string_equal(rep.res[1].run.policy, "deadline");
	/* The table puts the published figures beside the simulated ones. */
	f = tmpfile();
	elv_sim_report_table(f, &rep);
	rewind(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	assert_non_null(strstr(buf, "published: unsorted (FIFO) mean seek distance = 320000"));
	assert_non_null(strstr(buf, "N/(Q+1)"));
	/* CSV: a header, one row per policy and one per stream. */
	f = tmpfile();
	elv_sim_report_csv(f, &rep);
	rewind(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	assert_true(strncmp(buf, "scenario,device,seed,policy,stream,", 35) == 0);
	assert_non_null(strstr(buf, "seek-sort,barracuda,1,deadline,*,"));
	assert_non_null(strstr(buf, "seek-sort,barracuda,1,noop,reader14,"));
	elv_sim_report_free(&rep);
	/* Scenario metadata. */
	assert_int_equal(elv_sim_scenario_count(), 11);
	assert_int_equal(elv_sim_scenario_find("nonesuch"), -1);
	assert_string_equal(elv_sim_scenario_device((unsigned)elv_sim_scenario_find("tcq-depth")),
			    "barracuda");
}

static void test_bad_config(void **state)
{
	struct elv_sim_result r;

	(void)state;
	sim_config_base(&cfg, "null", "noop", 1);
	assert_int_equal(elv_sim_run(&cfg, &r), ELV_EINVAL); /* no stream */
	cfg.nr_streams = 1;
	cfg.streams[0].kind = 99;
	assert_int_equal(elv_sim_run(&cfg, &r), ELV_EINVAL);
	cfg.streams[0].kind = ELV_SIM_SYNC_READER;
	cfg.streams[0].count = 1;
	cfg.nr_sets = 1;
	snprintf(cfg.sets[0].name, sizeof(cfg.sets[0].name), "nonesuch");
	assert_int_equal(elv_sim_run(&cfg, &r), ELV_ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_think_time),
		cmocka_unit_test(test_replay),
		cmocka_unit_test(test_trace_hook),
		cmocka_unit_test(test_completion_dispatches_first),
		cmocka_unit_test(test_merges_reach_every_issuer),
		cmocka_unit_test(test_busy_requeue),
		cmocka_unit_test(test_time_limit),
		cmocka_unit_test(test_determinism),
		cmocka_unit_test(test_report_formats),
		cmocka_unit_test(test_bad_config),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
