/*
 * Job files: every key and unit of the format, the streams they make, percentages resolved
 * against a device, a run of a parsed job, and malformed input: each gives ELV_EINVAL, a zeroed
 * job and one message "name:line: reason" naming the right line.
 */
#define _POSIX_C_SOURCE 200809L
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
#include "support/temp_text.h"

static struct elv_sim_job job;

static int parse(const char *text, char *err, size_t errlen)
{
	return elv_sim_job_parse(text, strlen(text), "t.job", &job, err, errlen);
}

static void test_full_file(void **state)
{
	static const char text[] =
		"# two tenants\n"
		"device = barracuda   # a preset\n"
		"seed = 42\n"
		"time_limit = 1.5s\n"
		"\n"
		"[oltp]\n"
		"pattern = random\n"
		"size = 4k-64k\n"
		"read_share = 70%\n"
		"think = 500us\n"
		"think_dist = exponential\n"
		"depth = 4\n"
		"count = 1000\n"
		"offset = 10%\n"
		"span = 1g\n"
		"prio = rt/2\n"
		"sync_writes = yes\n"
		"[backup]\r\n"
		"  pattern = sequential  \r\n"
		"size = 1m\n"
		"read_share = 0.25\n"
		"bytes = 2g\n"
		"background = yes\n"
		"burst = 3\n"
		"[browse]\n"
		"pattern = locality\n"
		"think = 2\n"
		"count = 10";
	char err[256];
	const struct elv_sim_stream_spec *s;

	(void)state;
	assert_int_equal(parse(text, err, sizeof(err)), 0);
	assert_string_equal(err, "");
	assert_string_equal(job.device, "barracuda");
	assert_int_equal(job.has_seed, 1);
	assert_int_equal(job.seed, 42);
	assert_int_equal(job.time_limit_ns, 1500000000ULL);
	assert_int_equal(job.nr_streams, 3);
	s = &job.streams[0];
	assert_string_equal(s->name, "oltp");
	assert_int_equal(s->kind, ELV_SIM_MIXED);
	assert_int_equal(s->pattern, ELV_SIM_RANDOM);
	assert_int_equal(s->rq_sectors, 8);
	assert_int_equal(s->rq_sectors_max, 128);
	assert_true(fabs(s->read_share - 0.7) < 1e-12);
	assert_true(fabs(s->think_ms - 0.5) < 1e-12);
	assert_int_equal(s->exp_think, 1);
	assert_int_equal(s->depth, 4);
	assert_int_equal(s->count, 1000);
	assert_int_equal(s->bytes, 0);
	assert_true(fabs(job.offset_pct[0] - 10) < 1e-12);
	assert_true(job.span_pct[0] < 0);
	assert_int_equal(s->region_len, 2097152);
	assert_int_equal(s->ioprio, ELV_PRIO(ELV_PRIO_RT, 2));
	assert_int_equal(s->sync_writes, 1);
	assert_int_equal(s->background, 0);
	assert_int_equal(job.line[0], 6);
	s = &job.streams[1];
	assert_string_equal(s->name, "backup");
	assert_int_equal(s->pattern, ELV_SIM_SEQUENTIAL);
	assert_int_equal(s->rq_sectors, 2048);
	assert_int_equal(s->rq_sectors_max, 2048);
	assert_true(fabs(s->read_share - 0.25) < 1e-12);
	assert_int_equal(s->bytes, 2147483648ULL);
	assert_int_equal(s->background, 1);
	assert_int_equal(s->burst, 3);
	assert_int_equal(s->depth, 1);
	assert_int_equal(job.line[1], 18);
	/* Defaults: 4 KiB reads only, one at a time, fixed think time in ms. */
	s = &job.streams[2];
	assert_int_equal(s->pattern, ELV_SIM_LOCALITY);
	assert_int_equal(s->rq_sectors, 8);
	assert_true(s->read_share == 1.0);
	assert_true(fabs(s->think_ms - 2) < 1e-12);
	assert_int_equal(s->exp_think, 0);
	assert_int_equal(s->ioprio, 0);
	assert_true(job.offset_pct[2] < 0 && job.span_pct[2] < 0);
}

static void test_apply_and_run(void **state)
{
	static const char text[] =
		"[mix]\nsize = 4k\nread_share = 60%\ndepth = 8\ncount = 2000\n"
		"offset = 50%\nspan = 25%\n"
		"[seq]\npattern = sequential\nsize = 64k\nread_share = 0\nbytes = 8m\n"
		"think = 1ms\n";
	struct elv_sim_config *c = calloc(1, sizeof(*c));
	struct elv_sim_result r;
	uint64_t cap;

	(void)state;
	assert_non_null(c);
	assert_int_equal(parse(text, NULL, 0), 0);
	assert_int_equal(job.has_seed, 0);
	assert_int_equal(elv_sim_preset("ide2003", &c->dev), 0);
	cap = c->dev.capacity;
	c->policy = elv_policy_find("deadline");
	c->seed = 9;
	assert_int_equal(elv_sim_job_apply(&job, c), 0);
	assert_int_equal(c->nr_streams, 2);
	assert_int_equal(c->seed, 9);
	assert_int_equal(c->time_limit_ns, 0);
	assert_int_equal(c->streams[0].region_start, cap / 2 / 8 * 8);
	assert_int_equal(c->streams[0].region_len, cap / 4 / 8 * 8);
	/* No place given: the whole device. */
	assert_int_equal(c->streams[1].region_start, 0);
	assert_int_equal(c->streams[1].region_len, cap);
	assert_int_equal(elv_sim_run(c, &r), 0);
	assert_int_equal(r.error, 0);
	assert_int_equal(r.truncated, 0);
	assert_int_equal(r.nr_streams, 2);
	assert_int_equal(r.streams[0].requests, 2000);
	/* 60% reads, give or take what 2000 draws allow. */
	assert_true(r.streams[0].read_lat.n > 1100 && r.streams[0].read_lat.n < 1300);
	assert_int_equal(r.streams[0].read_lat.n + r.streams[0].write_lat.n, 2000);
	/* 8 MiB of 64 KiB writes, no reads; write latency is kept per stream. */
	assert_int_equal(r.streams[1].requests, 128);
	assert_int_equal(r.streams[1].write_lat.n, 128);
	assert_int_equal(r.streams[1].read_lat.n, 0);
	assert_true(r.streams[1].write_lat.p50 > 0);
	/* One think time of 1 ms after each of 128 writes at least. */
	assert_true(r.streams[1].done_s > 0.128);
	elv_sim_result_free(&r);
	/* A place off the device, or a request larger than the region. */
	assert_int_equal(parse("[a]\ncount = 1\noffset = 100%\n", NULL, 0), 0);
	assert_int_equal(elv_sim_job_apply(&job, c), ELV_ERANGE);
	assert_int_equal(parse("[a]\ncount = 1\nsize = 1m\nspan = 512k\n", NULL, 0), 0);
	assert_int_equal(elv_sim_job_apply(&job, c), ELV_ERANGE);
	/* A region that runs past the end of the device is refused, not cut down. */
	assert_int_equal(parse("[a]\ncount = 1\noffset = 50%\nspan = 60%\n", NULL, 0), 0);
	assert_int_equal(elv_sim_job_apply(&job, c), ELV_ERANGE);
	assert_int_equal(parse("[a]\ncount = 1\n[b]\ncount = 1\nspan = 1t\n", NULL, 0), 0);
	assert_int_equal(elv_sim_job_apply(&job, c), ELV_ERANGE);
	assert_int_equal(c->nr_streams, 1); /* the stream that does not fit */
	assert_int_equal(parse("[a]\ncount = 1\noffset = 50%\nspan = 50%\n", NULL, 0), 0);
	assert_int_equal(elv_sim_job_apply(&job, c), 0);
	assert_int_equal(c->streams[0].region_start + c->streams[0].region_len <= cap, 1);
	/* The job's seed and time limit. */
	assert_int_equal(parse("seed = 5\ntime_limit = 2s\n[a]\n", NULL, 0), 0);
	assert_int_equal(elv_sim_job_apply(&job, c), 0);
	assert_int_equal(c->seed, 5);
	assert_int_equal(c->time_limit_ns, 2000000000ULL);
	assert_int_equal(elv_sim_run(c, &r), 0);
	assert_int_equal(r.truncated, ELV_SIM_CUT_TIME_LIMIT);
	elv_sim_result_free(&r);
	assert_int_equal(elv_sim_job_apply(NULL, c), ELV_EINVAL);
	assert_int_equal(elv_sim_job_apply(&job, NULL), ELV_EINVAL);
	c->dev.capacity = 0;
	assert_int_equal(elv_sim_job_apply(&job, c), ELV_EINVAL);
	free(c);
}

struct bad {
	const char *text;
	const char *msg; /* the whole message */
};

static const struct bad bads[] = {
	{ "[a]\ncount = 1\nfoo = 1\n", "t.job:3: unknown stream key 'foo'" },
	{ "colour = red\n[a]\ncount = 1\n",
	  "t.job:1: unknown global key 'colour' (device, seed, time_limit; a stream starts "
	  "with [name])" },
	{ "[a]\ncount = 1\njust words\n",
	  "t.job:3: expected 'key = value' or '[stream name]', got 'just words'" },
	{ "[a]\n= 4\n", "t.job:2: a key is missing before '='" },
	{ "[a]\nsize =\n", "t.job:2: size: the value is missing" },
	{ "[a\ncount = 1\n", "t.job:1: a section header ends with ']'" },
	{ "[ ]\n", "t.job:1: a stream needs a name: [name]" },
	{ "[a b]\ncount = 1\n", "t.job:1: stream name 'a b': use letters, digits, '-', '_', '.'" },
	{ "[a]\ncount = 1\n[a]\ncount = 1\n", "t.job:3: a second stream named 'a'" },
	{ "[a]\ncount = 1\ncount = 2\n", "t.job:3: count given twice in stream 'a'" },
	{ "seed = 1\nseed = 2\n[a]\ncount = 1\n", "t.job:2: seed given twice" },
	{ "[a]\npattern = zigzag\n",
	  "t.job:2: pattern: 'zigzag' is not random, sequential or locality" },
	{ "[a]\nsize = 1000\n", "t.job:2: size: '1000' is not a whole number of 512-byte sectors" },
	{ "[a]\nsize = 4q\n", "t.job:2: size: unknown unit 'q' (k, m, g or t)" },
	{ "[a]\nsize = 0\n", "t.job:2: size: '0' is not a whole number of 512-byte sectors" },
	{ "[a]\nsize = -4k\n", "t.job:2: size: '' is not a size (like 4096, 4k, 1m, 2g)" },
	{ "[a]\nsize = 64k-4k\n", "t.job:2: size: the range '64k-4k' runs backwards" },
	{ "[a]\nsize = 4k-6656\n", "t.job:2: size: both ends of '4k-6656' must be whole 4 KiB pages" },
	{ "[a]\nread_share = 1.5\n", "t.job:2: read_share: '1.5' is outside 0..1 (0%..100%)" },
	{ "[a]\nread_share = lots\n", "t.job:2: read_share: 'lots' is not a share (like 0.7 or 70%)" },
	{ "[a]\nthink = 3h\n", "t.job:2: think: unknown unit 'h' (us, ms or s)" },
	{ "[a]\nthink = -1ms\n", "t.job:2: think: '-1ms' is not a duration (like 500us, 2ms, 1.5s)" },
	{ "[a]\nthink_dist = normal\n", "t.job:2: think_dist: 'normal' is not fixed or exponential" },
	{ "[a]\ndepth = 0\n", "t.job:2: depth: must be at least 1" },
	{ "[a]\ndepth = 4.5\n", "t.job:2: depth: '4.5' is not a whole number" },
	{ "[a]\ndepth = 100000\n", "t.job:2: depth: 100000 is more than 65536" },
	{ "[a]\ncount = 0\n", "t.job:2: count: must be at least 1 (leave it out for no end)" },
	{ "[a]\ncount = 99999999999999999999\n",
	  "t.job:2: count: '99999999999999999999' is not a whole number" },
	{ "[a]\noffset = 101%\n", "t.job:2: offset: '101%' is outside 0%..100%" },
	{ "[a]\nspan = 0\n", "t.job:2: span: must be more than 0" },
	{ "[a]\nbackground = maybe\n", "t.job:2: background: 'maybe' is neither yes nor no" },
	{ "[a]\nprio = high\n", "t.job:2: prio: 'high' is not rt, be or idle (optionally /0../7)" },
	{ "[a]\nprio = be/9\n", "t.job:2: prio: level '9' is not 0..7" },
	{ "time_limit = 0\n[a]\n", "t.job:1: time_limit: must be more than 0" },
	{ "[a]\ncount = 1\nbytes = 1m\n", "t.job:1: stream 'a': give count or bytes, not both" },
	{ "\n\n[a]\nsize = 8k\n",
	  "t.job:3: stream 'a' never ends: give count or bytes, make it background, or set a "
	  "time_limit" },
	{ "[a]\nbackground = yes\n", "t.job:1: every stream is background: nothing ends the run" },
	{ "# nothing\n", "t.job:1: no stream: a stream starts with [name]" },
	{ "", "t.job:0: no stream: a stream starts with [name]" },
};

static void test_malformed(void **state)
{
	char err[256];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
		memset(&job, 0x5a, sizeof(job));
		if (parse(bads[i].text, err, sizeof(err)) != ELV_EINVAL ||
		    strcmp(err, bads[i].msg) != 0)
			print_error("case %zu: got '%s'\n", i, err);
		assert_int_equal(parse(bads[i].text, err, sizeof(err)), ELV_EINVAL);
		assert_string_equal(err, bads[i].msg);
		assert_int_equal(job.nr_streams, 0);
		assert_int_equal(job.device[0], 0);
	}
	assert_int_equal(i, 39);
}

static void test_limits(void **state)
{
	char err[256], *big;
	size_t i, len = 0, cap = 80 * 32;

	(void)state;
	/* A NUL byte inside, and a line past 1024 bytes. */
	assert_int_equal(elv_sim_job_parse("[a]\n\0count = 1\n", 15, "t.job", &job, err,
					   sizeof(err)), ELV_EINVAL);
	assert_string_equal(err, "t.job:2: a NUL byte: not a text file");
	big = malloc(cap);
	assert_non_null(big);
	memset(big, ' ', 1100);
	big[1100] = '\n';
	big[1101] = 0;
	assert_int_equal(parse(big, err, sizeof(err)), ELV_EINVAL);
	assert_string_equal(err, "t.job:1: line longer than 1024 bytes");
	/* Exactly 64 streams parse; the 65th does not. */
	for (i = 0; i < 65; i++)
		len += (size_t)snprintf(big + len, cap - len, "[s%zu]\ncount = 1\n", i);
	assert_int_equal(parse(big, err, sizeof(err)), ELV_EINVAL);
	assert_string_equal(err, "t.job:129: more than 64 streams");
	big[len - strlen("[s64]\ncount = 1\n")] = 0;
	assert_int_equal(parse(big, err, sizeof(err)), 0);
	assert_int_equal(job.nr_streams, 64);
	free(big);
	/* A 31-character name is the longest. */
	assert_int_equal(parse("[abcdefghijklmnopqrstuvwxyz01234]\ncount=1\n", err,
			       sizeof(err)), 0);
	assert_int_equal(parse("[abcdefghijklmnopqrstuvwxyz012345]\ncount=1\n", err,
			       sizeof(err)), ELV_EINVAL);
	assert_string_equal(err, "t.job:1: stream name 'abcdefghijklmnopqrstuvwxyz012345' is "
			    "longer than 31 characters");
	/* A short message buffer is cut, never overrun. */
	assert_int_equal(parse("[a]\nfoo = 1\n", err, 12), ELV_EINVAL);
	assert_string_equal(err, "t.job:2: un");
	/* Arguments. */
	assert_int_equal(elv_sim_job_parse(NULL, 0, "x", &job, err, sizeof(err)), ELV_EINVAL);
	assert_int_equal(elv_sim_job_parse("", 0, NULL, &job, err, sizeof(err)), ELV_EINVAL);
	assert_int_equal(elv_sim_job_parse("", 0, "x", NULL, err, sizeof(err)), ELV_EINVAL);
	assert_int_equal(elv_sim_job_load("/nonexistent/dir/x.job", &job, err, sizeof(err)),
			 ELV_ENOENT);
	assert_non_null(strstr(err, "/nonexistent/dir/x.job: cannot open"));
	assert_int_equal(elv_sim_job_load(NULL, &job, err, sizeof(err)), ELV_EINVAL);
}

static void test_load_file(void **state)
{
	char path[] = "/tmp/elv-job-XXXXXX", err[256];

	(void)state;
	temp_text(path, "device = ssd\n[r]\ncount = 3\nsize = 8k\n");
	assert_int_equal(elv_sim_job_load(path, &job, err, sizeof(err)), 0);
	assert_string_equal(job.device, "ssd");
	assert_int_equal(job.streams[0].rq_sectors, 16);
	put_text(fopen(path, "w"), "[r]\ncount = 3\nsize = 8x\n");
	assert_int_equal(elv_sim_job_load(path, &job, err, sizeof(err)), ELV_EINVAL);
	assert_true(strncmp(err, path, strlen(path)) == 0);
	assert_string_equal(err + strlen(path), ":3: size: unknown unit 'x' (k, m, g or t)");
	remove(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full_file),
		cmocka_unit_test(test_apply_and_run),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_load_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
