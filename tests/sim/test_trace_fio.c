/* fio iolog reader: v2 and v3 samples, wait pacing, and malformed lines for every field. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "test_trace_util.h"

#define FIO ELV_TRACE_FIO
#define V2 "fio version 2 iolog\n"
#define V3 "fio version 3 iolog\n"

static void sample_v2(void **state)
{
	/* No timestamps: waits move the clock (the 50 us one is dropped); the zero-length
	 * read is dropped; 1000 + 100 bytes cover sectors 1 and 2. */
	static const struct elv_trace_rec want[] = {
		REC(0, 0, 8, ELV_OP_READ, 1, 0),
		REC(0, 8, 16, ELV_OP_WRITE, 0, 0),
		REC(1500000, 1, 2, ELV_OP_READ, 1, 0),
		REC(1500000, 0, 0, ELV_OP_FLUSH, 1, 0),
		REC(1750000, 2048, 128, ELV_OP_DISCARD, 0, 0),
	};

	(void)state;
	trace_check_file(TRACE_SAMPLE("sample_fio_v2.log"), FIO, want,
			 sizeof(want) / sizeof(want[0]));
}

static void sample_v3(void **state)
{
	/* Microsecond timestamps relative to the first I/O (878 us); 885 comes after 888 in
	 * the file and is sorted before it. */
	static const struct elv_trace_rec want[] = {
		REC(0, 0, 32, ELV_OP_WRITE, 0, 0),
		REC(7000, 64, 8, ELV_OP_READ, 1, 0),
		REC(10000, 32, 8, ELV_OP_READ, 1, 0),
		REC(22000, 0, 0, ELV_OP_FLUSH, 1, 0),
		REC(27000, 2048, 2048, ELV_OP_DISCARD, 0, 0),
	};

	(void)state;
	trace_check_file(TRACE_SAMPLE("sample_fio_v3.log"), FIO, want,
			 sizeof(want) / sizeof(want[0]));
}

static void header_only_and_blank_lines(void **state)
{
	struct elv_trace_rec *v = (struct elv_trace_rec *)(uintptr_t)1;
	size_t n = 3;
	static const char text[] = "fio version 3 iolog  \r\n\n   \n5 f add\n";

	(void)state;
	assert_int_equal(elv_trace_load_mem(text, strlen(text), "t", FIO, &v, &n, NULL, 0), 0);
	assert_null(v);
	assert_int_equal(n, 0);
}

static void waits_accumulate(void **state)
{
	static const char text[] = V2
		"f wait 99 0\n"
		"f read 0 512\n"
		"f wait 100 0\n"
		"f wait 18446744073709451 0\n"
		"f write 512 512\n";
	static const struct elv_trace_rec want[] = {
		REC(0, 0, 1, ELV_OP_READ, 1, 0),
		REC(18446744073709551000ull, 1, 1, ELV_OP_WRITE, 0, 0),
	};

	(void)state;
	trace_check_mem(text, strlen(text), FIO, want, sizeof(want) / sizeof(want[0]));
	/* One more wait would pass 2^64 ns. */
	TRACE_CHECK_TEXT_ERR(V2 "f wait 18446744073709551 0\nf wait 100 0\n", FIO,
			     "t:3: offset: ");
}

static void malformed_v2(void **state)
{
	static const struct trace_bad_line cases[] = {
		{ "f", "t:3: fields: " },
		{ "f read 0", "t:3: fields: " },
		{ "f read 0 1 2", "t:3: fields: " },
		{ "f read 0 1 2 3 4", "t:3: fields: " },
		{ "f frob", "t:3: action: " },
		{ "f read", "t:3: action: " },
		{ "f frob 0 1", "t:3: action: " },
		{ "f add 0 1", "t:3: action: " },
		{ "f read x 1", "t:3: offset: " },
		{ "f read -1 1", "t:3: offset: " },
		{ "f read 18446744073709551616 1", "t:3: offset: " },
		{ "f read 18446744073709551615 512", "t:3: offset: " },
		{ "f wait x 0", "t:3: offset: " },
		{ "f read 0 1k", "t:3: length: " },
		{ "f read 0 2199023255041", "t:3: length: " },
		{ "f sync 0 x", "t:3: length: " },
	};
	(void)state;
	trace_check_bad_lines(V2 "f read 0 512\n", cases, sizeof(cases) / sizeof(cases[0]), FIO);
}

static void malformed_v3(void **state)
{
	static const struct trace_bad_line cases[] = {
		{ "x f read 0 1", "t:3: timestamp: " },
		{ "f read 0 1", "t:3: timestamp: " },
		{ "18446744073709552 f read 0 1", "t:3: timestamp: " },
		{ "5 f wait 100 0", "t:3: action: " },
		{ "5 f read 0", "t:3: fields: " },
		{ "5 f", "t:3: fields: " },
		{ "5 f read 0 1 2", "t:3: fields: " },
		{ "5 f read x 1", "t:3: offset: " },
		{ "5 f read 0 -1", "t:3: length: " },
	};
	(void)state;
	trace_check_bad_lines(V3 "1 f read 0 512\n", cases, sizeof(cases) / sizeof(cases[0]), FIO);
	/* The largest timestamp that fits in nanoseconds. */
	{
		static const char text2[] = V3 "18446744073709551 f read 0 512\n0 f write 0 512\n";
		static const struct elv_trace_rec want[] = {
			REC(0, 0, 1, ELV_OP_WRITE, 0, 0),
			REC(18446744073709551000ull, 0, 1, ELV_OP_READ, 1, 0),
		};

		trace_check_mem(text2, strlen(text2), FIO, want, 2);
	}
}

static void bad_header(void **state)
{
	(void)state;
	TRACE_CHECK_TEXT_ERR("fio version 1 iolog\n", FIO, "t:1: header: ");
	TRACE_CHECK_TEXT_ERR("0,0,4096\n", FIO, "t:1: header: ");
	TRACE_CHECK_TEXT_ERR("\nfio version 2 iolog\n", FIO, "t:1: header: ");
	TRACE_CHECK_TEXT_ERR("fio version 2 iolog extra\n", FIO, "t:1: header: ");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sample_v2),
		cmocka_unit_test(sample_v3),
		cmocka_unit_test(header_only_and_blank_lines),
		cmocka_unit_test(waits_accumulate),
		cmocka_unit_test(malformed_v2),
		cmocka_unit_test(malformed_v3),
		cmocka_unit_test(bad_header),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
