/* blkparse text reader: the sample trace, and one malformed line per field. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "test_trace_util.h"

#define BP ELV_TRACE_BLKPARSE

/* A valid first line, so that the line under test is line 2. */
#define OK_LINE "  8,0    0        1     0.000000000    10  Q   R 8 + 8 [a]\n"

static void sample_file(void **state)
{
	/* Relative to the first Q at 0.000100000; the 0.002 line comes before 0.0011 in the
	 * file; the passthrough Q, the message and every non-Q event are dropped. */
	static const struct elv_trace_rec want[] = {
		REC(0, 223490, 8, ELV_OP_READ, 1, 4162),
		REC(250000, 223498, 8, ELV_OP_READ, 1, 4162),
		REC(1000000, 1000, 16, ELV_OP_WRITE, 1, 697),
		REC(1900000, 64, 8, ELV_OP_WRITE, 0, 697),
		REC(2000000, 0, 0, ELV_OP_FLUSH, 1, 697),
		REC(2500000, 300000, 256, ELV_OP_READ, 1, 4162),
		REC(3000000, 5000, 2048, ELV_OP_DISCARD, 0, 812),
		REC(3500000, 777, 8, ELV_OP_WRITE, 0, 812),
		REC(999900000, 4096, 8, ELV_OP_WRITE, 1, 555),
	};

	(void)state;
	trace_check_file(TRACE_SAMPLE("sample.blkparse"), BP, want,
			 sizeof(want) / sizeof(want[0]));
}

static void fractions_and_blanks(void **state)
{
	/* Fewer than nine fraction digits are a decimal fraction; tabs separate too. */
	static const char text[] =
		"8,0 0 1 2.5 7 Q R 100 + 1 [x]\n"
		"\t8,0\t1\t2\t2.000000001\t8\tQ\tW\t200 + 2 [a b c]\r\n"
		"8,0 0 3 3.25 9 Q RSM 300 + 3\n";
	static const struct elv_trace_rec want[] = {
		REC(0, 200, 2, ELV_OP_WRITE, 0, 8),
		REC(499999999, 100, 1, ELV_OP_READ, 1, 7),
		REC(1249999999, 300, 3, ELV_OP_READ, 1, 9),
	};

	(void)state;
	trace_check_mem(text, strlen(text), BP, want, sizeof(want) / sizeof(want[0]));
}

static void only_summary_is_empty(void **state)
{
	static const char text[] = "CPU0 (sda):\n Reads Queued: 0, 0KiB\nEvents (sda): 0 entries\n";
	struct elv_trace_rec *v = (struct elv_trace_rec *)(uintptr_t)1;
	size_t n = 7;

	(void)state;
	assert_int_equal(elv_trace_load_mem(text, strlen(text), "t", BP, &v, &n, NULL, 0), 0);
	assert_null(v);
	assert_int_equal(n, 0);
}

static void non_queue_lines_are_checked_up_to_action(void **state)
{
	(void)state;
	/* A bad pid on a completion line is still an error... */
	TRACE_CHECK_TEXT_ERR(OK_LINE "8,0 0 2 0.1 x C R 8 + 8 [0]\n", BP, "t:2: pid: ");
	/* ...but the tail of a non-Q line is free-form. */
	{
		static const char text[] = OK_LINE "8,0 0 2 0.1 5 m N any text ][ at all\n";
		static const struct elv_trace_rec want[] = { REC(0, 8, 8, ELV_OP_READ, 1, 10) };

		trace_check_mem(text, strlen(text), BP, want, 1);
	}
}

/* What real blkparse prints for flushes and zeroing: FF, FWS, FWFS, and N with a range. */
static void flushes_and_zeroing(void **state)
{
	static const char text[] =
		"7,0 0 1 0.000000001 9 Q FF 0 + 0 [kworker]\n"
		"7,0 0 2 0.000000002 9 Q FWS 100 + 8 [jbd2]\n"
		"7,0 0 3 0.000000003 9 Q FWFS 200 + 8 [jbd2]\n"
		"7,0 0 4 0.000000004 9 Q NS 1234 + 3984 [ext4]\n"
		"7,0 0 5 0.000000005 9 Q FF 77 + 0 [kworker]\n"
		"7,0 0 6 0.000000006 9 Q N 0 + 0 [x]\n";
	static const struct elv_trace_rec want[] = {
		REC(0, 0, 0, ELV_OP_FLUSH, 1, 9),
		REC(1, 100, 8, ELV_OP_WRITE, 1, 9),
		REC(2, 200, 8, ELV_OP_WRITE, 1, 9),
		REC(3, 1234, 3984, ELV_OP_WRITE, 1, 9),
		REC(4, 0, 0, ELV_OP_FLUSH, 1, 9),
	};

	(void)state;
	trace_check_mem(text, strlen(text), BP, want, 5);
}

static void malformed_fields(void **state)
{
	static const struct trace_bad_line cases[] = {
		{ "8,x 0 2 0.1 5 Q R 1 + 8 [a]", "t:2: device: " },
		{ "8,1048576 0 2 0.1 5 Q R 1 + 8 [a]", "t:2: device: " },
		{ "4096,0 0 2 0.1 5 Q R 1 + 8 [a]", "t:2: device: " },
		{ "8,0", "t:2: cpu: " },
		{ "8,0 c 2 0.1 5 Q R 1 + 8 [a]", "t:2: cpu: " },
		{ "8,0 0 -2 0.1 5 Q R 1 + 8 [a]", "t:2: sequence: " },
		{ "8,0 0 2 5 5 Q R 1 + 8 [a]", "t:2: time: " },
		{ "8,0 0 2 0.1234567890 5 Q R 1 + 8 [a]", "t:2: time: " },
		{ "8,0 0 2 0. 5 Q R 1 + 8 [a]", "t:2: time: " },
		{ "8,0 0 2 .5 5 Q R 1 + 8 [a]", "t:2: time: " },
		{ "8,0 0 2 18446744073.1 5 Q R 1 + 8 [a]", "t:2: time: " },
		{ "8,0 0 2 0.1", "t:2: pid: " },
		{ "8,0 0 2 0.1 4294967296 Q R 1 + 8 [a]", "t:2: pid: " },
		{ "8,0 0 2 0.1 5", "t:2: action: " },
		{ "8,0 0 2 0.1 5 QQQ R 1 + 8 [a]", "t:2: action: " },
		{ "8,0 0 2 0.1 5 Q", "t:2: rwbs: " },
		{ "8,0 0 2 0.1 5 Q X 1 + 8 [a]", "t:2: rwbs: " },
		{ "8,0 0 2 0.1 5 Q RZ 1 + 8 [a]", "t:2: rwbs: " },
		{ "8,0 0 2 0.1 5 Q F 1 + 8 [a]", "t:2: rwbs: " },
		{ "8,0 0 2 0.1 5 Q NX 1 + 8 [a]", "t:2: rwbs: " },
		{ "8,0 0 2 0.1 5 Q R", "t:2: sector: " },
		{ "8,0 0 2 0.1 5 Q R x + 8 [a]", "t:2: sector: " },
		{ "8,0 0 2 0.1 5 Q R 18446744073709551615 + 8 [a]", "t:2: sector: " },
		{ "8,0 0 2 0.1 5 Q R 1", "t:2: nsectors: " },
		{ "8,0 0 2 0.1 5 Q R 1 - 8 [a]", "t:2: nsectors: " },
		{ "8,0 0 2 0.1 5 Q R 1 +", "t:2: nsectors: " },
		{ "8,0 0 2 0.1 5 Q R 1 + 8x [a]", "t:2: nsectors: " },
		{ "8,0 0 2 0.1 5 Q R 1 + 4294967296 [a]", "t:2: nsectors: " },
		{ "8,0 0 2 0.1 5 Q R 1 + 8 junk", "t:2: command: " },
	};
	(void)state;
	trace_check_bad_lines(OK_LINE, cases, sizeof(cases) / sizeof(cases[0]), BP);
}

static void long_line_and_nul(void **state)
{
	size_t len = strlen(OK_LINE) + ELV_TRACE_LINE_MAX + 2;
	char *text = malloc(len + 1);

	(void)state;
	assert_non_null(text);
	strcpy(text, OK_LINE);
	memset(text + strlen(OK_LINE), 'x', ELV_TRACE_LINE_MAX + 1);
	text[len - 1] = '\n';
	text[len] = '\0';
	TRACE_CHECK_TEXT_ERR(text, BP, "t:2: line: ");
	/* Exactly the limit is fine (and ignored: not an event line). */
	text[len - 2] = '\n';
	{
		struct elv_trace_rec *v = NULL;
		size_t n = 0;

		assert_int_equal(elv_trace_load_mem(text, len - 1, "t", BP, &v, &n, NULL, 0), 0);
		assert_int_equal(n, 1);
		elv_trace_free(v);
	}
	free(text);
	{
		static const char nul[] = OK_LINE "8,0 0 2 0.1 5 Q R 1\0 + 8 [a]\n";

		trace_check_err(nul, sizeof(nul) - 1, BP, "t:2: line: ");
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sample_file),
		cmocka_unit_test(fractions_and_blanks),
		cmocka_unit_test(only_summary_is_empty),
		cmocka_unit_test(non_queue_lines_are_checked_up_to_action),
		cmocka_unit_test(flushes_and_zeroing),
		cmocka_unit_test(malformed_fields),
		cmocka_unit_test(long_line_and_nul),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
