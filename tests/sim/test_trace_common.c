/*
 * What every reader shares: format names, argument checks, empty input, missing files,
 * error buffers of any size, and the stable sort by time on a large shuffled input.
 */
#define _POSIX_C_SOURCE 200809L /* mkstemp, fdopen */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "test_trace_util.h"
#include "support/temp_text.h"

static const enum elv_trace_format all_formats[] = {
	ELV_TRACE_BLKTRACE, ELV_TRACE_BLKPARSE, ELV_TRACE_MSR, ELV_TRACE_FIO, ELV_TRACE_FTRACE
};
#define NR_FORMATS (sizeof(all_formats) / sizeof(all_formats[0]))

static void format_names(void **state)
{
	static const char *const names[] = { "blktrace", "blkparse", "msr", "fio", "ftrace" };
	enum elv_trace_format f = ELV_TRACE_MSR;
	size_t i;

	(void)state;
	for (i = 0; i < NR_FORMATS; i++) {
		assert_int_equal(elv_trace_parse_format(names[i], &f), 0);
		assert_int_equal(f, all_formats[i]);
		assert_string_equal(elv_trace_format_name(all_formats[i]), names[i]);
	}
	f = ELV_TRACE_MSR;
	assert_int_equal(elv_trace_parse_format("BLKTRACE", &f), ELV_EINVAL);
	assert_int_equal(elv_trace_parse_format("", &f), ELV_EINVAL);
	assert_int_equal(elv_trace_parse_format("fio2", &f), ELV_EINVAL);
	assert_int_equal(f, ELV_TRACE_MSR);
	assert_int_equal(elv_trace_parse_format(NULL, &f), ELV_EINVAL);
	assert_int_equal(elv_trace_parse_format("fio", NULL), ELV_EINVAL);
	assert_string_equal(elv_trace_format_name((enum elv_trace_format)42), "?");
}

static void record_layout(void **state)
{
	/* The simulator copies these records as they are: keep the layout fixed. */
	(void)state;
	assert_int_equal(sizeof(struct elv_trace_rec), 40);
	assert_int_equal(offsetof(struct elv_trace_rec, time_ns), 0);
	assert_int_equal(offsetof(struct elv_trace_rec, sector), 8);
	assert_int_equal(offsetof(struct elv_trace_rec, nr_sectors), 16);
	assert_int_equal(offsetof(struct elv_trace_rec, op), 20);
	assert_int_equal(offsetof(struct elv_trace_rec, sync), 21);
	assert_int_equal(offsetof(struct elv_trace_rec, pad), 22);
	assert_int_equal(offsetof(struct elv_trace_rec, pid), 24);
	assert_int_equal(offsetof(struct elv_trace_rec, service_ns), 32);
}

static void empty_input(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < NR_FORMATS; i++) {
		struct elv_trace_rec *v = (struct elv_trace_rec *)(uintptr_t)1;
		char err[64] = "x";
		size_t n = 5;

		assert_int_equal(elv_trace_load_mem("", 0, "e", all_formats[i], &v, &n, err,
						    sizeof(err)), 0);
		assert_null(v);
		assert_int_equal(n, 0);
		assert_string_equal(err, "");
		n = 5;
		assert_int_equal(elv_trace_load_mem(NULL, 0, NULL, all_formats[i], &v, &n, NULL,
						    0), 0);
		assert_int_equal(n, 0);
	}
	elv_trace_free(NULL);
}

static void bad_arguments(void **state)
{
	struct elv_trace_rec *v;
	char err[ELV_TRACE_ERR_MAX];
	size_t n;

	(void)state;
	assert_int_equal(elv_trace_load_mem(NULL, 1, "t", ELV_TRACE_FIO, &v, &n, err, sizeof(err)),
			 ELV_EINVAL);
	assert_int_equal(elv_trace_load_mem("", 0, "t", ELV_TRACE_FIO, NULL, &n, err, sizeof(err)),
			 ELV_EINVAL);
	assert_int_equal(elv_trace_load_mem("", 0, "t", ELV_TRACE_FIO, &v, NULL, err, sizeof(err)),
			 ELV_EINVAL);
	assert_int_equal(elv_trace_load_mem("x", 1, "t", (enum elv_trace_format)9, &v, &n, err,
					    sizeof(err)), ELV_EINVAL);
	assert_null(v);
	assert_string_equal(err, "t: unknown trace format 9");
	assert_int_equal(elv_trace_load(NULL, ELV_TRACE_FIO, &v, &n, err, sizeof(err)),
			 ELV_EINVAL);
	assert_int_equal(elv_trace_load("x", ELV_TRACE_FIO, NULL, &n, err, sizeof(err)),
			 ELV_EINVAL);
}

static void missing_file(void **state)
{
	struct elv_trace_rec *v = (struct elv_trace_rec *)(uintptr_t)1;
	char err[ELV_TRACE_ERR_MAX];
	size_t n = 1;
	const char *path = TRACE_SAMPLE("no-such-trace.csv");

	(void)state;
	assert_int_equal(elv_trace_load(path, ELV_TRACE_MSR, &v, &n, err, sizeof(err)),
			 ELV_ENOENT);
	assert_null(v);
	assert_int_equal(n, 0);
	assert_true(strncmp(err, path, strlen(path)) == 0);
	assert_non_null(strstr(err, "cannot open"));
	/* A directory opens but cannot be read. */
	assert_int_equal(elv_trace_load(ELV_TEST_SOURCE_DIR "/traces", ELV_TRACE_MSR, &v, &n, err,
					sizeof(err)), ELV_EINVAL);
	assert_null(v);
}

static void file_errors_name_the_file(void **state)
{
	static const char text[] = "fio version 3 iolog\n1 f read 0 512\n2 f read zero 512\n";
	char path[] = "/tmp/elv-trace-test-XXXXXX";
	struct elv_trace_rec *v;
	char err[ELV_TRACE_ERR_MAX], want[ELV_TRACE_ERR_MAX];
	size_t n;

	(void)state;
	temp_text(path, text);
	assert_int_equal(elv_trace_load(path, ELV_TRACE_FIO, &v, &n, err, sizeof(err)), ELV_EINVAL);
	snprintf(want, sizeof(want), "%s:3: offset: 'zero': not an unsigned decimal number", path);
	assert_string_equal(err, want);
	remove(path);
}

static void small_error_buffers(void **state)
{
	static const char text[] = "1,hm,1,Read,0,512,1\n2,hm,1,Frob,0,512,1\n";
	struct elv_trace_rec *v;
	char err[ELV_TRACE_ERR_MAX];
	size_t n, len;

	(void)state;
	assert_int_equal(elv_trace_load_mem(text, strlen(text), "name", ELV_TRACE_MSR, &v, &n, err,
					    sizeof(err)), ELV_EINVAL);
	assert_string_equal(err, "name:2: Type: 'Frob' is neither Read nor Write");
	for (len = 1; len < strlen(err) + 2; len++) {
		char small[64];

		memset(small, '#', sizeof(small));
		assert_int_equal(elv_trace_load_mem(text, strlen(text), "name", ELV_TRACE_MSR, &v,
						    &n, small, len), ELV_EINVAL);
		assert_int_equal(strlen(small), len - 1 < strlen(err) ? len - 1 : strlen(err));
		assert_true(strncmp(small, err, strlen(small)) == 0);
		assert_int_equal(small[len], '#');
	}
	assert_int_equal(elv_trace_load_mem(text, strlen(text), "name", ELV_TRACE_MSR, &v, &n,
					    NULL, 100), ELV_EINVAL);
	assert_int_equal(elv_trace_load_mem(text, strlen(text), "name", ELV_TRACE_MSR, &v, &n, err,
					    0), ELV_EINVAL);
}

/* xorshift64: a fixed pseudo-random sequence for the shuffled input. */
static uint64_t next_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void large_input_is_sorted_stably(void **state)
{
	enum { N = 20000 };
	size_t cap = (size_t)N * 48 + 32, len, i;
	char *text = malloc(cap);
	struct elv_trace_rec *v;
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	size_t n;

	(void)state;
	assert_non_null(text);
	len = (size_t)snprintf(text, cap, "fio version 3 iolog\n");
	/* Few distinct times, so that many records tie; the sector is the line index. */
	for (i = 0; i < N; i++)
		len += (size_t)snprintf(text + len, cap - len, "%llu f write %zu 512\n",
					(unsigned long long)(1000 + next_rand(&seed) % 97),
					i * 512);
	assert_int_equal(elv_trace_load_mem(text, len, "big", ELV_TRACE_FIO, &v, &n, NULL, 0), 0);
	assert_int_equal(n, N);
	assert_int_equal(v[0].time_ns, 0);
	for (i = 1; i < n; i++) {
		assert_true(v[i - 1].time_ns <= v[i].time_ns);
		if (v[i - 1].time_ns == v[i].time_ns)
			assert_true(v[i - 1].sector < v[i].sector);
	}
	elv_trace_free(v);
	free(text);
}

static void sorts_every_small_permutation(void **state)
{
	/* Every order of 1..6 distinct timestamps (720 inputs) comes back sorted. */
	int perm[6] = { 0, 1, 2, 3, 4, 5 };
	unsigned count = 0;

	(void)state;
	for (;;) {
		char text[256];
		size_t len = (size_t)snprintf(text, sizeof(text), "fio version 3 iolog\n"), i, n;
		struct elv_trace_rec *v;
		int k, l;

		for (i = 0; i < 6; i++)
			len += (size_t)snprintf(text + len, sizeof(text) - len,
						"%d f read %d 512\n", 10 + perm[i], perm[i] * 512);
		assert_int_equal(elv_trace_load_mem(text, len, "p", ELV_TRACE_FIO, &v, &n, NULL, 0),
				 0);
		assert_int_equal(n, 6);
		for (i = 0; i < n; i++) {
			assert_int_equal(v[i].time_ns, i * 1000);
			assert_int_equal(v[i].sector, i);
		}
		elv_trace_free(v);
		count++;
		/* next permutation */
		for (k = 4; k >= 0 && perm[k] > perm[k + 1]; k--)
			;
		if (k < 0)
			break;
		for (l = 5; perm[l] < perm[k]; l--)
			;
		{
			int t = perm[k];

			perm[k] = perm[l];
			perm[l] = t;
		}
		for (k++, l = 5; k < l; k++, l--) {
			int t = perm[k];

			perm[k] = perm[l];
			perm[l] = t;
		}
	}
	assert_int_equal(count, 720);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(format_names),
		cmocka_unit_test(record_layout),
		cmocka_unit_test(empty_input),
		cmocka_unit_test(bad_arguments),
		cmocka_unit_test(missing_file),
		cmocka_unit_test(file_errors_name_the_file),
		cmocka_unit_test(small_error_buffers),
		cmocka_unit_test(large_input_is_sorted_stably),
		cmocka_unit_test(sorts_every_small_permutation),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
