/*
 * SNIA IOTTA MSR Cambridge reader: headerless CSV lines of
 *   Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime
 * with the timestamp and response time in Windows FILETIME ticks (100 ns) and the offset and
 * size in bytes. A first line naming the columns is tolerated; blank lines are skipped.
 */
#include "trace_internal.h"

#include <string.h>

#define MSR_COLUMNS 7
#define MSR_TICK_NS 100u

static const char *const msr_col[MSR_COLUMNS] = {
	"Timestamp", "Hostname", "DiskNumber", "Type", "Offset", "Size", "ResponseTime"
};

enum { COL_TS, COL_HOST, COL_DISK, COL_TYPE, COL_OFF, COL_SIZE, COL_RESP };

static int is_space(char ch)
{
	return ch == ' ' || ch == '\t';
}

/* Trim blanks around s in place. */
static char *trim(char *s)
{
	char *e;

	while (is_space(*s))
		s++;
	e = s + strlen(s);
	while (e > s && is_space(e[-1]))
		e--;
	*e = '\0';
	return s;
}

/* Cut at commas; returns the number of columns found (up to MSR_COLUMNS + 1). */
static int split_csv(char *s, char **col)
{
	int n = 0;

	for (;;) {
		char *comma = strchr(s, ',');

		if (n == MSR_COLUMNS)
			return n + 1;
		if (comma)
			*comma = '\0';
		col[n++] = trim(s);
		if (!comma)
			return n;
		s = comma + 1;
	}
}

static int col_u64(struct elv__trace_ctx *c, unsigned long ln, char **col, int i, uint64_t max,
		   uint64_t *v)
{
	int rc = elv__trace_parse_u64(col[i], max, v);

	if (rc)
		return elv__trace_fail_line(c, ln, msr_col[i], "'%.40s': %s", col[i],
					    elv__trace_num_msg(rc));
	return 0;
}

static int parse_type(struct elv__trace_ctx *c, unsigned long ln, const char *s, uint8_t *op)
{
	if (strcmp(s, "Read") == 0 || strcmp(s, "read") == 0) {
		*op = ELV_OP_READ;
		return 0;
	}
	if (strcmp(s, "Write") == 0 || strcmp(s, "write") == 0) {
		*op = ELV_OP_WRITE;
		return 0;
	}
	return elv__trace_fail_line(c, ln, "Type", "'%.40s' is neither Read nor Write", s);
}

static int parse_line(struct elv__trace_ctx *c, unsigned long ln, char *line)
{
	struct elv_trace_rec r = { 0 };
	uint64_t ts, v, off, size;
	char *col[MSR_COLUMNS + 1];
	int n, rc;

	n = split_csv(line, col);
	if (n > MSR_COLUMNS)
		return elv__trace_fail_line(c, ln, "columns", "more than %d", MSR_COLUMNS);
	if (n < MSR_COLUMNS)
		return elv__trace_fail_line(c, ln, "columns", "%d, expected %d", n, MSR_COLUMNS);
	rc = col_u64(c, ln, col, COL_TS, UINT64_MAX / MSR_TICK_NS, &ts);
	if (rc)
		return rc;
	if (!col[COL_HOST][0])
		return elv__trace_fail_line(c, ln, "Hostname", "empty");
	rc = col_u64(c, ln, col, COL_DISK, UINT32_MAX, &v);
	if (!rc)
		rc = parse_type(c, ln, col[COL_TYPE], &r.op);
	if (!rc)
		rc = col_u64(c, ln, col, COL_OFF, UINT64_MAX, &off);
	if (!rc)
		rc = col_u64(c, ln, col, COL_SIZE, UINT64_MAX, &size);
	if (!rc)
		rc = col_u64(c, ln, col, COL_RESP, UINT64_MAX, &v);
	if (rc)
		return rc;
	if (size == 0)
		return 0;
	rc = elv__trace_bytes_to_sectors(off, size, &r.sector, &r.nr_sectors);
	if (rc == ELV__NUM_RANGE)
		return elv__trace_fail_line(c, ln, "Size", "%llu bytes is more than 2^32 sectors",
					    (unsigned long long)size);
	if (rc)
		return elv__trace_fail_line(c, ln, "Offset", "%llu + %llu bytes passes 2^64",
					    (unsigned long long)off, (unsigned long long)size);
	r.time_ns = ts * MSR_TICK_NS;
	r.sync = r.op == ELV_OP_READ;
	return elv__trace_push(c, &r);
}

/* The optional first line naming the columns. */
static int is_header(const char *line)
{
	while (is_space(*line))
		line++;
	return strncmp(line, "Timestamp", 9) == 0;
}

int elv__trace_read_msr(struct elv__trace_ctx *c, const void *buf, size_t len)
{
	struct elv__trace_lines it;
	char *line;
	int rc;

	elv__trace_lines_init(&it, buf, len);
	while ((rc = elv__trace_next_line(c, &it, &line)) > 0) {
		if (!*trim(line) || (it.lineno == 1 && is_header(line)))
			continue;
		rc = parse_line(c, it.lineno, line);
		if (rc)
			return rc;
	}
	return rc;
}
