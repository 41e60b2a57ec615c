/*
 * Body of the trace reader fuzz targets: define FUZZ_TRACE_FORMAT, then include this file.
 * Every input must either load, giving records that keep every documented promise, or fail
 * with ELV_EINVAL and a message in the "name:where: field: reason" shape. Anything else,
 * and any sanitizer report or leak, is a finding.
 */
#ifndef FUZZ_TRACE_CHECK_H
#define FUZZ_TRACE_CHECK_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "elevator/sim_trace.h"

#ifndef FUZZ_TRACE_FORMAT
#error "define FUZZ_TRACE_FORMAT before including fuzz_trace_check.h"
#endif

#define FUZZ_NAME "fuzz"

static void check_records(const struct elv_trace_rec *v, size_t n)
{
	size_t i;

	if ((n == 0) != (v == NULL))
		abort();
	if (n && v[0].time_ns != 0)
		abort();
	for (i = 0; i < n; i++) {
		const struct elv_trace_rec *r = &v[i];

		if (i && r->time_ns < v[i - 1].time_ns)
			abort();
		if (r->op > ELV_OP_FLUSH || r->sync > 1 || r->pad != 0)
			abort();
		if (r->op == ELV_OP_FLUSH && (r->nr_sectors != 0 || r->sector != 0 || !r->sync))
			abort();
		if (r->op != ELV_OP_FLUSH && r->nr_sectors == 0)
			abort();
		if (r->sector > UINT64_MAX - r->nr_sectors)
			abort();
		if (r->op == ELV_OP_READ && !r->sync)
			abort();
	}
}

/* "fuzz:" then a location, ": ", a field, ": " and a non-empty reason. */
static void check_message(const char *err)
{
	const char *p;

	if (strncmp(err, FUZZ_NAME ":", sizeof(FUZZ_NAME)) != 0)
		abort();
	p = strstr(err + sizeof(FUZZ_NAME), ": ");
	if (!p || !(p = strstr(p + 2, ": ")) || !p[2])
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct elv_trace_rec *v = NULL;
	char err[ELV_TRACE_ERR_MAX], small[8];
	size_t n = 0;
	int rc;

	rc = elv_trace_load_mem(data, size, FUZZ_NAME, FUZZ_TRACE_FORMAT, &v, &n, err,
				sizeof(err));
	if (rc == 0) {
		check_records(v, n);
		elv_trace_free(v);
		return 0;
	}
	if (rc != ELV_EINVAL || v || n)
		abort();
	if (strlen(err) >= sizeof(err))
		abort();
	check_message(err);
	/* A short buffer gets the same message, cut and terminated. */
	memset(small, 'x', sizeof(small));
	rc = elv_trace_load_mem(data, size, FUZZ_NAME, FUZZ_TRACE_FORMAT, &v, &n, small,
				sizeof(small) - 1);
	if (rc != ELV_EINVAL || small[sizeof(small) - 1] != 'x' ||
	    strncmp(small, err, sizeof(small) - 2) != 0)
		abort();
	return 0;
}

#endif /* FUZZ_TRACE_CHECK_H */
