/* SNIA MSR Cambridge CSV reader: the sample trace, byte rounding, and every column malformed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "test_trace_util.h"

#define MSR ELV_TRACE_MSR
#define OK_LINE "128166372003061629,hm,1,Read,0,512,10\n"

static void sample_file(void **state)
{
	/* CRLF line ends; FILETIME ticks of 100 ns relative to the earliest; equal times keep
	 * their file order; the zero-size line is dropped; 1000 + 600 bytes cover sectors 1-3. */
	static const struct elv_trace_rec want[] = {
		REC(0, 6160408, 8, ELV_OP_READ, 1, 0),
		REC(693837100, 0, 1, ELV_OP_READ, 1, 0),
		REC(1332052600, 5511920, 16, ELV_OP_WRITE, 0, 0),
		REC(1332052600, 1, 3, ELV_OP_WRITE, 0, 0),
		REC(1693837200, 8, 128, ELV_OP_WRITE, 0, 0),
	};

	(void)state;
	trace_check_file(TRACE_SAMPLE("sample_msr.csv"), MSR, want,
			 sizeof(want) / sizeof(want[0]));
}

static void header_blanks_and_spaces(void **state)
{
	static const char text[] =
		"\xEF\xBB\xBF" "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n"
		"\n"
		" 20 , web , 3 , write , 511 , 2 , 7 \n"
		"   \t\n"
		"10,web,3,read,1024,1536,7";
	static const struct elv_trace_rec want[] = {
		REC(0, 2, 3, ELV_OP_READ, 1, 0),
		/* bytes 511-512 straddle sectors 0 and 1 */
		REC(1000, 0, 2, ELV_OP_WRITE, 0, 0),
	};

	(void)state;
	trace_check_mem(text, strlen(text), MSR, want, sizeof(want) / sizeof(want[0]));
}

static void limits(void **state)
{
	/* The largest timestamp that fits in nanoseconds and the largest size in sectors. */
	static const char text[] =
		"184467440737095516,h,0,Read,0,2199023255040,0\n"
		"0,h,0,Write,18446744073709551104,511,0\n";
	static const struct elv_trace_rec want[] = {
		REC(0, 36028797018963967ull, 1, ELV_OP_WRITE, 0, 0),
		REC(18446744073709551600ull, 0, 4294967295u, ELV_OP_READ, 1, 0),
	};

	(void)state;
	trace_check_mem(text, strlen(text), MSR, want, sizeof(want) / sizeof(want[0]));
}

static void malformed_columns(void **state)
{
	static const struct trace_bad_line cases[] = {
		{ "1,hm,1,Read,0,512", "t:2: columns: " },
		{ "1,hm,1,Read,0,512,1,9", "t:2: columns: " },
		{ "garbage", "t:2: columns: " },
		{ "x,hm,1,Read,0,512,1", "t:2: Timestamp: " },
		{ ",hm,1,Read,0,512,1", "t:2: Timestamp: " },
		{ "184467440737095517,hm,1,Read,0,512,1", "t:2: Timestamp: " },
		{ "1,,1,Read,0,512,1", "t:2: Hostname: " },
		{ "1,hm,-1,Read,0,512,1", "t:2: DiskNumber: " },
		{ "1,hm,4294967296,Read,0,512,1", "t:2: DiskNumber: " },
		{ "1,hm,1,Erase,0,512,1", "t:2: Type: " },
		{ "1,hm,1,,0,512,1", "t:2: Type: " },
		{ "1,hm,1,Read,0x10,512,1", "t:2: Offset: " },
		{ "1,hm,1,Read,18446744073709551616,512,1", "t:2: Offset: " },
		{ "1,hm,1,Read,18446744073709551615,512,1", "t:2: Offset: " },
		{ "1,hm,1,Read,0,4k,1", "t:2: Size: " },
		{ "1,hm,1,Read,0,2199023255041,1", "t:2: Size: " },
		{ "1,hm,1,Read,0,512,1.5", "t:2: ResponseTime: " },
		{ "1,hm,1,Read,0,512,", "t:2: ResponseTime: " },
	};
	(void)state;
	trace_check_bad_lines(OK_LINE, cases, sizeof(cases) / sizeof(cases[0]), MSR);
	/* A header is only recognised on the first line. */
	TRACE_CHECK_TEXT_ERR(OK_LINE
			     "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n",
			     MSR, "t:2: Timestamp: ");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sample_file),
		cmocka_unit_test(header_blanks_and_spaces),
		cmocka_unit_test(limits),
		cmocka_unit_test(malformed_columns),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
