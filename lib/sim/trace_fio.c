/*
 * fio iolog reader, versions 2 and 3. The first line names the version; then
 *   v2: "file add|open|close" and "file read|write|trim|sync|datasync|wait offset length"
 *   v3: the same with a leading timestamp in microseconds, and no "wait".
 * Offsets and lengths are bytes. Version 2 has no timestamps: its clock starts at 0 and only
 * "wait" lines move it (offset = microseconds after the previous wait, under 100 ignored).
 */
#include "trace_internal.h"

#include <string.h>

#define NSEC_PER_USEC 1000u
#define WAIT_MIN_USEC 100u
#define MAX_WORDS 5

static const char fio_v2[] = "fio version 2 iolog";
static const char fio_v3[] = "fio version 3 iolog";

/* State of one pass over a log. */
struct fio_state {
	int version;      /* 2 or 3 */
	uint64_t clock_us; /* v2: sum of the waits so far */
};

static int read_header(struct elv__trace_ctx *c, char *line, int *version)
{
	char *e = line + strlen(line);

	while (e > line && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	*e = '\0';
	if (strcmp(line, fio_v2) == 0)
		*version = 2;
	else if (strcmp(line, fio_v3) == 0)
		*version = 3;
	else
		return elv__trace_fail_line(c, 1, "header",
					    "expected '%s' or '%s' (version 1 is not read)", fio_v2,
					    fio_v3);
	return 0;
}

static int word_u64(struct elv__trace_ctx *c, unsigned long ln, const char *field,
		    const char *w, uint64_t max, uint64_t *v)
{
	int rc = elv__trace_parse_u64(w, max, v);

	if (rc)
		return elv__trace_fail_line(c, ln, field, "'%.40s': %s", w,
					    elv__trace_num_msg(rc));
	return 0;
}

static int file_action(struct elv__trace_ctx *c, unsigned long ln, const char *act)
{
	if (strcmp(act, "add") && strcmp(act, "open") && strcmp(act, "close"))
		return elv__trace_fail_line(c, ln, "action",
					    "'%.40s' is not a file action (add, open, close)", act);
	return 0;
}

/* v2 "wait": move the clock; small waits are dropped as fio drops them. */
static int do_wait(struct elv__trace_ctx *c, unsigned long ln, struct fio_state *st,
		   uint64_t us)
{
	if (us < WAIT_MIN_USEC)
		return 0;
	if (us > UINT64_MAX / NSEC_PER_USEC - st->clock_us)
		return elv__trace_fail_line(c, ln, "offset",
					    "wait of %llu us pushes the clock past 2^64 ns",
					    (unsigned long long)us);
	st->clock_us += us;
	return 0;
}

/* Map an I/O action; returns 1 for wait, 0 for a request, ELV_EINVAL when unknown. */
static int io_op(struct elv__trace_ctx *c, unsigned long ln, const struct fio_state *st,
		 const char *act, struct elv_trace_rec *r)
{
	if (strcmp(act, "read") == 0) {
		r->op = ELV_OP_READ;
		r->sync = 1;
	} else if (strcmp(act, "write") == 0) {
		r->op = ELV_OP_WRITE;
	} else if (strcmp(act, "trim") == 0) {
		r->op = ELV_OP_DISCARD;
	} else if (strcmp(act, "sync") == 0 || strcmp(act, "datasync") == 0) {
		r->op = ELV_OP_FLUSH;
		r->sync = 1;
	} else if (strcmp(act, "wait") == 0 && st->version == 2) {
		return 1;
	} else if (strcmp(act, "wait") == 0) {
		return elv__trace_fail_line(c, ln, "action", "wait is not allowed in version 3");
	} else {
		return elv__trace_fail_line(c, ln, "action",
					    "'%.40s' is not an I/O action (read, write, trim, "
					    "sync, datasync%s)", act, st->version == 2 ? ", wait" : "");
	}
	return 0;
}

/* "file action offset length" with the record's time already set. */
static int io_line(struct elv__trace_ctx *c, unsigned long ln, struct fio_state *st,
		   char **w, struct elv_trace_rec *r)
{
	uint64_t off, len;
	int kind, rc;

	kind = io_op(c, ln, st, w[1], r);
	if (kind < 0)
		return kind;
	if (word_u64(c, ln, "offset", w[2], UINT64_MAX, &off) ||
	    word_u64(c, ln, "length", w[3], UINT64_MAX, &len))
		return ELV_EINVAL;
	if (kind == 1)
		return do_wait(c, ln, st, off);
	if (r->op == ELV_OP_FLUSH)
		return elv__trace_push(c, r);
	if (len == 0)
		return 0;
	rc = elv__trace_bytes_to_sectors(off, len, &r->sector, &r->nr_sectors);
	if (rc == ELV__NUM_RANGE)
		return elv__trace_fail_line(c, ln, "length", "%llu bytes is more than 2^32 sectors",
					    (unsigned long long)len);
	if (rc)
		return elv__trace_fail_line(c, ln, "offset", "%llu + %llu bytes passes 2^64",
					    (unsigned long long)off, (unsigned long long)len);
	return elv__trace_push(c, r);
}

static int parse_line(struct elv__trace_ctx *c, unsigned long ln, struct fio_state *st,
		      char *line)
{
	struct elv_trace_rec r = { 0 };
	char *w[MAX_WORDS + 1];
	int n = elv__trace_split(line, w, MAX_WORDS), first = 0;
	uint64_t ts;

	if (n == 0)
		return 0;
	if (st->version == 3) {
		if (word_u64(c, ln, "timestamp", w[0], UINT64_MAX / NSEC_PER_USEC, &ts))
			return ELV_EINVAL;
		r.time_ns = ts * NSEC_PER_USEC;
		first = 1;
	} else {
		r.time_ns = st->clock_us * NSEC_PER_USEC;
	}
	if (n - first == 2)
		return file_action(c, ln, w[first + 1]);
	if (n - first == 4)
		return io_line(c, ln, st, w + first, &r);
	if (n > MAX_WORDS)
		return elv__trace_fail_line(c, ln, "fields", "more than %d words", MAX_WORDS);
	return elv__trace_fail_line(c, ln, "fields", "%d words, expected %d or %d", n, 2 + first,
				    4 + first);
}

int elv__trace_read_fio(struct elv__trace_ctx *c, const void *buf, size_t len)
{
	struct elv__trace_lines it;
	struct fio_state st = { 0, 0 };
	char *line;
	int rc;

	elv__trace_lines_init(&it, buf, len);
	rc = elv__trace_next_line(c, &it, &line);
	if (rc <= 0)
		return rc;
	rc = read_header(c, line, &st.version);
	if (rc)
		return rc;
	while ((rc = elv__trace_next_line(c, &it, &line)) > 0) {
		rc = parse_line(c, it.lineno, &st, line);
		if (rc)
			return rc;
	}
	return rc;
}
