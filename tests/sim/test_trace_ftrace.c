/* The Linux block tracepoint text reader: tracefs, perf script and trace-cmd report lines. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "test_trace_util.h"

#define FT ELV_TRACE_FTRACE

/* Expected record with a recorded service time. */
#define RECS(t, s, n, o, y, p, svc) { (t), (s), (n), (uint8_t)(o), (y), 0, (p), (svc) }

#define HDR "# tracer: nop\n#\n#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION\n"
#define INS "jbd2/loop0-8-21621   [001] d..1.   361.441268: block_rq_insert: "
#define ISS "jbd2/loop0-8-21621   [001] .....   361.441270: block_rq_issue: "
#define CPL "ksoftirqd/0-14       [000] ..s..   361.441300: block_rq_complete: "

static void format_name(void **state)
{
	enum elv_trace_format f = ELV_TRACE_MSR;

	(void)state;
	assert_int_equal(elv_trace_parse_format("ftrace", &f), 0);
	assert_int_equal(f, FT);
	assert_string_equal(elv_trace_format_name(FT), "ftrace");
}

/* Insert, issue and complete of one write; a flush issued without an insert; a read that
 * bypassed the scheduler. Times are relative to the first arrival. */
static void tracefs_lines(void **state)
{
	static const char text[] =
		HDR
		"jbd2/loop0-8-21621   [001] d..1.   361.441268: block_rq_insert: 7,0 WSM 7168 () "
		"229716 + 14 be,0,3 [jbd2/loop0-8]\n"
		"postmark-12047       [000] .....   361.441270: block_rq_issue: 7,0 RM 4096 () "
		"67848 + 8 be,0,4 [postmark]\n"
		"kworker/u4:2-99      [001] .....   361.441280: block_rq_issue: 7,0 WSM 7168 () "
		"229716 + 14 be,0,3 [kworker/u4:2]\n"
		"ksoftirqd/0-14       [000] ..s..   361.441300: block_rq_complete: 7,0 RM () "
		"67848 + 8 be,0,4 [0]\n"
		"ksoftirqd/0-14       [000] ..s..   361.441580: block_rq_complete: 7,0 WSM () "
		"229716 + 14 be,0,3 [0]\n"
		"kworker/0:1H-58      [000] .....   361.442000: block_rq_issue: 7,0 FF 0 () "
		"0 + 0 none,0,0 [kworker/0:1H]\n"
		"<idle>-0             [000] d.h1.   361.442100: block_rq_complete: 7,0 FF () "
		"18446744073709551615 + 0 none,0,0 [0]\n";
	static const struct elv_trace_rec want[] = {
		RECS(0, 229716, 14, ELV_OP_WRITE, 1, 21621, 300000),
		RECS(2000, 67848, 8, ELV_OP_READ, 1, 12047, 30000),
		RECS(732000, 0, 0, ELV_OP_FLUSH, 1, 58, 100000),
	};

	(void)state;
	trace_check_mem(text, strlen(text), FT, want, 3);
}

/* perf script ("comm pid [cpu] time: block:event:") and trace-cmd report, old kernels
 * without the I/O priority column, and "pid/tid". */
static void perf_and_trace_cmd(void **state)
{
	static const char text[] =
		"cpus=2\n"
		"        postmark 12047 [000]  2082.958805: block:block_rq_insert: 7,0 RM 4096 () "
		"67848 + 8 [postmark]\n"
		"        postmark 12047/12048 [000]  2082.958806: block:block_rq_issue: 7,0 RM 4096 () "
		"67848 + 8 [postmark]\n"
		"     ksoftirqd/0-14    [000]  2082.959208: block_rq_complete:    7,0 RM () 67848 + 8 "
		"[0]\n"
		"             cat-77    [001]  2082.959300123: block_rq_insert: 7,0 RA 65536 () "
		"100 + 128 [cat]\n";
	static const struct elv_trace_rec want[] = {
		RECS(0, 67848, 8, ELV_OP_READ, 1, 12047, 402000),
		RECS(495123, 100, 128, ELV_OP_READ, 1, 77, 0),
	};

	(void)state;
	trace_check_mem(text, strlen(text), FT, want, 2);
}

/* Two requests at one sector pair first in, first out; a requeued request keeps its
 * arrival; a merged-away request keeps its arrival and leaves the queue. */
static void pairing(void **state)
{
	static const char text[] =
		"a-1 [000] ..... 1.000000: block_rq_insert: 7,0 W 4096 () 8 + 8 be,0,4 [a]\n"
		"b-2 [000] ..... 1.000001: block_rq_insert: 7,0 W 4096 () 8 + 8 be,0,4 [b]\n"
		"k-3 [000] ..... 1.000010: block_rq_issue: 7,0 W 4096 () 8 + 8 be,0,4 [k]\n"
		"k-3 [000] ..... 1.000011: block_rq_requeue: 7,0 W () 8 + 8 be,0,4 [0]\n"
		"k-3 [000] ..... 1.000020: block_rq_issue: 7,0 W 4096 () 8 + 8 be,0,4 [k]\n"
		"k-3 [000] ..... 1.000030: block_rq_issue: 7,0 W 4096 () 8 + 8 be,0,4 [k]\n"
		"i-0 [000] ..... 1.000100: block_rq_complete: 7,0 W () 8 + 8 be,0,4 [0]\n"
		"i-0 [000] ..... 1.000200: block_rq_complete: 7,0 W () 8 + 8 be,0,4 [0]\n"
		"c-4 [000] ..... 1.000300: block_rq_insert: 7,0 W 4096 () 64 + 8 be,0,4 [c]\n"
		"c-4 [000] ..... 1.000301: block_rq_merge: 7,0 W 4096 () 64 + 8 be,0,4 [c]\n"
		"c-4 [000] ..... 1.000400: block_rq_issue: 7,0 W 4096 () 64 + 16 be,0,4 [c]\n"
		"i-0 [000] ..... 1.000500: block_rq_complete: 7,0 W () 64 + 16 be,0,4 [0]\n"
		"i-0 [000] ..... 1.000600: block_rq_complete: 7,0 W () 999 + 8 be,0,4 [0]\n";
	static const struct elv_trace_rec want[] = {
		RECS(0, 8, 8, ELV_OP_WRITE, 0, 1, 80000),
		RECS(1000, 8, 8, ELV_OP_WRITE, 0, 2, 170000),
		RECS(300000, 64, 8, ELV_OP_WRITE, 0, 4, 0),
		RECS(400000, 64, 16, ELV_OP_WRITE, 0, 4, 100000),
	};

	(void)state;
	trace_check_mem(text, strlen(text), FT, want, 4);
}

/* Comments, headers, other events and bio events are skipped; nothing kept is no error. */
static void skipped_lines(void **state)
{
	static const char text[] =
		HDR "\n"
		"CPU 1 is empty\n"
		"cat-77 [001] ..... 5.000000: block_bio_queue: 7,0 R 100 + 8 [cat]\n"
		"cat-77 [001] ..... 5.000001: block_getrq: 7,0 R 100 + 8 [cat]\n"
		"cat-77 [001] ..... 5.000002: sched_switch: prev_comm=cat prev_pid=77\n";
	struct elv_trace_rec *v = (struct elv_trace_rec *)(uintptr_t)1;
	size_t n = 5;

	(void)state;
	assert_int_equal(elv_trace_load_mem(text, strlen(text), "t", FT, &v, &n, NULL, 0), 0);
	assert_null(v);
	assert_int_equal(n, 0);
}

/* RWBS letters: D and DE discard, N with a range is a zeroing write, F flags, sync. */
static void rwbs_kinds(void **state)
{
	static const char text[] =
		"a-1 [000] ..... 1.000000: block_rq_insert: 7,0 D 4096 () 8 + 8 be,0,4 [a]\n"
		"a-1 [000] ..... 1.000001: block_rq_insert: 7,0 DE 4096 () 16 + 8 be,0,4 [a]\n"
		"a-1 [000] ..... 1.000002: block_rq_insert: 7,0 NS 0 () 1234 + 3984 be,0,4 [a]\n"
		"a-1 [000] ..... 1.000003: block_rq_insert: 7,0 FWFS 4096 () 24 + 8 be,0,4 [a]\n"
		"a-1 [000] ..... 1.000004: block_rq_insert: 7,0 WA 4096 () 32 + 8 be,0,4 [a]\n";
	static const struct elv_trace_rec want[] = {
		REC(0, 8, 8, ELV_OP_DISCARD, 0, 1),
		REC(1000, 16, 8, ELV_OP_DISCARD, 0, 1),
		REC(2000, 1234, 3984, ELV_OP_WRITE, 1, 1),
		REC(3000, 24, 8, ELV_OP_WRITE, 1, 1),
		REC(4000, 32, 8, ELV_OP_WRITE, 0, 1),
	};

	(void)state;
	trace_check_mem(text, strlen(text), FT, want, 5);
}

static void malformed_fields(void **state)
{
	static const struct trace_bad_line cases[] = {
		{ "a-1 ..... 1.0: block_rq_insert: 7,0 W 4096 () 8 + 8 be,0,4 [a]", "t:2: cpu: " },
		{ "[000] 1.0: block_rq_insert: 7,0 W 4096 () 8 + 8 be,0,4 [a]", "t:2: pid: " },
		{ "a-x [000] 1.0: block_rq_insert: 7,0 W 4096 () 8 + 8 be,0,4 [a]", "t:2: pid: " },
		{ "a-4294967296 [000] 1.0: block_rq_insert: 7,0 W 4096 () 8 + 8 [a]", "t:2: pid: " },
		{ "a-1 [000] 1.1234567890: block_rq_insert: 7,0 W 4096 () 8 + 8 [a]", "t:2: time: " },
		{ "a-1 [000] 18446744073.1: block_rq_insert: 7,0 W 4096 () 8 + 8 [a]", "t:2: time: " },
		{ "a-1 [000] 1.0 block_rq_insert: 7,0 W 4096 () 8 + 8 [a]", "t:2: time: " },
		{ "a-1 [000] 1.0: block_rq_insert:", "t:2: device: " },
		{ "a-1 [000] 1.0: block_rq_insert: 7x0 W 4096 () 8 + 8 [a]", "t:2: device: " },
		{ "a-1 [000] 1.0: block_rq_insert: 4096,0 W 4096 () 8 + 8 [a]", "t:2: device: " },
		{ "a-1 [000] 1.0: block_rq_insert: 7,0", "t:2: rwbs: " },
		{ "a-1 [000] 1.0: block_rq_insert: 7,0 X 4096 () 8 + 8 [a]", "t:2: rwbs: " },
		{ "a-1 [000] 1.0: block_rq_insert: 7,0 WZ 4096 () 8 + 8 [a]", "t:2: rwbs: " },
		{ "a-1 [000] 1.0: block_rq_insert: 7,0 W () 8 + 8 [a]", "t:2: bytes: " },
		{ "a-1 [000] 1.0: block_rq_insert: 7,0 W 4096 8 + 8 [a]", "t:2: cmd: " },
		{ "a-1 [000] 1.0: block_rq_insert: 7,0 W 4096 (12 34 8 + 8 [a]", "t:2: cmd: " },
		{ "a-1 [000] 1.0: block_rq_insert: 7,0 W 4096 () x + 8 [a]", "t:2: sector: " },
		{ "a-1 [000] 1.0: block_rq_insert: 7,0 W 4096 () 8 - 8 [a]", "t:2: nr_sectors: " },
		{ "a-1 [000] 1.0: block_rq_insert: 7,0 W 4096 () 8 + [a]", "t:2: nr_sectors: " },
		{ "a-1 [000] 1.0: block_rq_insert: 7,0 W 4096 () 8 + 4294967296 [a]",
		  "t:2: nr_sectors: " },
		{ "a-1 [000] 1.0: block_rq_insert: 7,0 W 4096 () 8 + 0 [a]", "t:2: nr_sectors: " },
		{ "a-1 [000] 1.0: block_rq_insert: 7,0 W 4096 () 18446744073709551615 + 8 [a]",
		  "t:2: sector: " },
		{ "a-1 [000] 1.0: block_rq_insert: 7,0 W 4096 () 8 + 8 0,0,4 [a]", "t:2: ioprio: " },
		{ "a-1 [000] 1.0: block_rq_insert: 7,0 W 4096 () 8 + 8 be,0,4", "t:2: comm: " },
		{ "a-1 [000] 1.0: block_rq_insert: 7,0 W 4096 () 8 + 8 be,0,4 [a", "t:2: comm: " },
		{ "garbage block_rq_insert: 7,0 W 4096 () 8 + 8 [a]", "t:2: time: " },
		{ "CPU:1 [LOST 1234 EVENTS]", "t:2: events: " },
	};
	(void)state;
	trace_check_bad_lines("# tracer: nop\n", cases, sizeof(cases) / sizeof(cases[0]), FT);
}

static void long_line_and_nul(void **state)
{
	size_t len = ELV_TRACE_LINE_MAX + 2;
	char *text = malloc(len + 1);
	static const char nul[] = "a-1 [000] 1.0: block_rq_insert: 7,0 W\0 4096 () 8 + 8 [a]\n";

	(void)state;
	assert_non_null(text);
	memset(text, 'x', len);
	text[len - 1] = '\n';
	text[len] = '\0';
	trace_check_err(text, len, FT, "t:1: ");
	free(text);
	trace_check_err(nul, sizeof(nul) - 1, FT, "t:1: ");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(format_name),
		cmocka_unit_test(tracefs_lines),
		cmocka_unit_test(perf_and_trace_cmd),
		cmocka_unit_test(pairing),
		cmocka_unit_test(skipped_lines),
		cmocka_unit_test(rwbs_kinds),
		cmocka_unit_test(malformed_fields),
		cmocka_unit_test(long_line_and_nul),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
