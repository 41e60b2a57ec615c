/*
 * Helpers shared by the trace reader tests: load a sample or an in-memory text, compare
 * against expected records, and check the error message of malformed input.
 * Include after <cmocka.h>.
 */
#ifndef TEST_TRACE_UTIL_H
#define TEST_TRACE_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elevator/sim_trace.h"

#ifndef ELV_TEST_SOURCE_DIR
#define ELV_TEST_SOURCE_DIR "tests"
#endif

/* Path of a sample under tests/traces. */
#define TRACE_SAMPLE(name) ELV_TEST_SOURCE_DIR "/traces/" name

/* One expected record: time, sector, sectors, op, sync, pid (and no service time). */
#define REC(t, s, n, o, y, p) { (t), (s), (n), (uint8_t)(o), (y), 0, (p), 0 }

static inline void trace_expect_recs(const struct elv_trace_rec *got, size_t n,
				     const struct elv_trace_rec *want, size_t nwant)
{
	size_t i;

	assert_int_equal(n, nwant);
	for (i = 0; i < n; i++) {
		if (memcmp(&got[i], &want[i], sizeof(got[i])) != 0)
			print_error("record %zu: got t=%llu s=%llu n=%u op=%u sync=%u pad=%u "
				    "pid=%u\n", i, (unsigned long long)got[i].time_ns,
				    (unsigned long long)got[i].sector, got[i].nr_sectors,
				    got[i].op, got[i].sync, got[i].pad, got[i].pid);
		assert_memory_equal(&got[i], &want[i], sizeof(got[i]));
	}
}

/* A load that returned @rc and @err must have succeeded with the expected records. */
static inline void trace_expect_loaded(int rc, const char *err, struct elv_trace_rec *v,
				       size_t n, const struct elv_trace_rec *want, size_t nwant)
{
	if (rc)
		print_error("%s\n", err);
	assert_int_equal(rc, 0);
	trace_expect_recs(v, n, want, nwant);
	elv_trace_free(v);
}

/* Load a sample file and compare it with the expected records. */
static inline void trace_check_file(const char *path, enum elv_trace_format fmt,
				    const struct elv_trace_rec *want, size_t nwant)
{
	struct elv_trace_rec *v = NULL;
	char err[ELV_TRACE_ERR_MAX];
	size_t n = 0;
	int rc = elv_trace_load(path, fmt, &v, &n, err, sizeof(err));

	trace_expect_loaded(rc, err, v, n, want, nwant);
}

/* Load bytes from memory under the name "t" and compare. */
static inline void trace_check_mem(const void *buf, size_t len, enum elv_trace_format fmt,
				   const struct elv_trace_rec *want, size_t nwant)
{
	struct elv_trace_rec *v = NULL;
	char err[ELV_TRACE_ERR_MAX];
	size_t n = 0;
	int rc = elv_trace_load_mem(buf, len, "t", fmt, &v, &n, err, sizeof(err));

	trace_expect_loaded(rc, err, v, n, want, nwant);
}

/*
 * Malformed bytes: expect ELV_EINVAL, no records, and a message that starts with @p prefix
 * ("t:LINE: field: " or "t:record N: field: ").
 */
static inline void trace_check_err(const void *buf, size_t len, enum elv_trace_format fmt,
				   const char *prefix)
{
	struct elv_trace_rec *v = (struct elv_trace_rec *)(uintptr_t)1;
	char err[ELV_TRACE_ERR_MAX];
	size_t n = 99;
	int rc = elv_trace_load_mem(buf, len, "t", fmt, &v, &n, err, sizeof(err));

	if (rc != ELV_EINVAL || strncmp(err, prefix, strlen(prefix)) != 0)
		print_error("want '%s...', got rc %d '%s'\n", prefix, rc, err);
	assert_int_equal(rc, ELV_EINVAL);
	assert_null(v);
	assert_int_equal(n, 0);
	assert_true(strncmp(err, prefix, strlen(prefix)) == 0);
	/* Something follows the field name: the reason. */
	assert_true(strlen(err) > strlen(prefix));
}

#define TRACE_CHECK_TEXT_ERR(text, fmt, prefix) \
	trace_check_err((text), strlen(text), (fmt), (prefix))

/* A malformed line and the start of the message it must give. */
struct trace_bad_line {
	const char *line;
	const char *prefix;
};

/* Each of the @n @cases, as a line after the valid text @head, is refused with its message. */
static inline void trace_check_bad_lines(const char *head, const struct trace_bad_line *cases,
					 size_t n, enum elv_trace_format fmt)
{
	char text[512];
	size_t i;

	for (i = 0; i < n; i++) {
		int len = snprintf(text, sizeof(text), "%s%s\n", head, cases[i].line);

		assert_true(len > 0 && (size_t)len < sizeof(text));
		TRACE_CHECK_TEXT_ERR(text, fmt, cases[i].prefix);
	}
}

#endif /* TEST_TRACE_UTIL_H */
