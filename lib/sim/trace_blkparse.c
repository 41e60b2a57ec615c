/*
 * blkparse text reader, default output format:
 *   "maj,min cpu sequence seconds.nanoseconds pid action rwbs <tail>"
 * An event line is one whose first word starts with a digit and holds a comma; every other
 * line (the per-CPU and total summaries, "Input file ... added", blank lines) is ignored.
 * The header of every event line is checked; only Q (queue) lines are kept, as for blktrace.
 */
#include "trace_internal.h"

#include <string.h>

#define NSEC_PER_SEC 1000000000ull
#define MAJOR_MAX 0xfffu    /* kernel dev_t: 12-bit major, 20-bit minor */
#define MINOR_MAX 0xfffffu

/* What an RWBS column says. */
struct rwbs {
	char kind;    /* 'R', 'W', 'D', 'N', or 'F' for a flush request of its own ("FF") */
	int preflush; /* leading F */
	int sync;     /* S flag */
};

static int parse_device(struct elv__trace_ctx *c, unsigned long ln, char *w)
{
	char *comma = strchr(w, ',');
	uint64_t v;

	*comma = '\0';
	if (elv__trace_parse_u64(w, MAJOR_MAX, &v) ||
	    elv__trace_parse_u64(comma + 1, MINOR_MAX, &v)) {
		*comma = ',';
		return elv__trace_fail_line(c, ln, "device",
					    "'%.40s' is not major,minor (at most %u,%u)", w,
					    MAJOR_MAX, MINOR_MAX);
	}
	return 0;
}

/* "S.N": seconds, a dot and 1 to 9 digits of fraction. */
static int parse_time(struct elv__trace_ctx *c, unsigned long ln, char *w, uint64_t *ns)
{
	char *dot = w ? strchr(w, '.') : NULL;
	uint64_t s, frac;
	size_t digits;

	if (!w)
		return elv__trace_fail_line(c, ln, "time", "missing");
	if (!dot)
		return elv__trace_fail_line(c, ln, "time", "'%.40s' is not seconds.nanoseconds",
					    w);
	*dot = '\0';
	digits = strlen(dot + 1);
	if (elv__trace_parse_u64(w, (UINT64_MAX - NSEC_PER_SEC) / NSEC_PER_SEC, &s) ||
	    digits < 1 || digits > 9 || elv__trace_parse_u64(dot + 1, UINT64_MAX, &frac)) {
		*dot = '.';
		return elv__trace_fail_line(c, ln, "time",
					    "'%.40s' is not seconds.nanoseconds in range", w);
	}
	for (; digits < 9; digits++)
		frac *= 10;
	*ns = s * NSEC_PER_SEC + frac;
	return 0;
}

/* "FF" is a flush request; otherwise an optional F (preflush), one of R W D N,
 * then flags F A S M B E (E follows D for secure erase). */
static int parse_rwbs(struct elv__trace_ctx *c, unsigned long ln, const char *w,
		      struct rwbs *out)
{
	const char *p = w;

	if (!w)
		return elv__trace_fail_line(c, ln, "rwbs", "missing");
	out->preflush = 0;
	out->sync = 0;
	if (p[0] == 'F' && p[1] == 'F') {
		out->kind = 'F';
		p += 2;
	} else {
		if (p[0] == 'F' && p[1] && strchr("RWDN", p[1])) {
			out->preflush = 1;
			p++;
		}
		if (!*p || !strchr("RWDN", *p))
			return elv__trace_fail_line(c, ln, "rwbs",
						    "'%.16s' does not start with R, W, D, N or FF", w);
		out->kind = *p++;
	}
	for (; *p; p++) {
		if (!strchr("FASMBE", *p))
			return elv__trace_fail_line(c, ln, "rwbs", "'%.16s' has unknown flag '%c'",
						    w, *p);
		if (*p == 'S')
			out->sync = 1;
	}
	return 0;
}

/* After "sector + n": nothing, "(elapsed)" and/or "[command]". */
static int check_rest(struct elv__trace_ctx *c, unsigned long ln, char *rest)
{
	rest = elv__trace_skip_blanks(rest);
	if (*rest && *rest != '(' && *rest != '[')
		return elv__trace_fail_line(c, ln, "command",
					    "'%.40s' is not (elapsed) or [command]", rest);
	return 0;
}

static int make_rec(struct elv__trace_ctx *c, unsigned long ln, const struct rwbs *rw,
		    uint64_t sector, uint64_t nr, struct elv_trace_rec *r)
{
	if (nr == 0 || rw->kind == 'F') {
		if (!rw->preflush && rw->kind != 'F')
			return 1;
		r->op = ELV_OP_FLUSH; /* a flush has no range, whatever sector it shows */
		r->sync = 1;
		return 0;
	}
	/* N with a range is a write of zeroes (ext4 zeroing extents): replayed as a write, which
	 * is what the block layer sends to a device that cannot zero by itself. */
	r->op = rw->kind == 'D' ? ELV_OP_DISCARD : rw->kind == 'R' ? ELV_OP_READ : ELV_OP_WRITE;
	r->sync = (uint8_t)(rw->sync || r->op == ELV_OP_READ);
	if (sector > UINT64_MAX - nr)
		return elv__trace_fail_line(c, ln, "sector", "%llu + %llu sectors passes 2^64",
					    (unsigned long long)sector,
					    (unsigned long long)nr);
	r->sector = sector;
	r->nr_sectors = (uint32_t)nr;
	return 0;
}

/* The tail of a Q line: "sector + n ...", "[command]", "(elapsed) [command]" or, for SCSI
 * passthrough, "bytes (cdb) [command]", which is skipped. Returns 1 to skip. */
static int parse_queue_tail(struct elv__trace_ctx *c, unsigned long ln, char *s,
			    const struct rwbs *rw, struct elv_trace_rec *r)
{
	uint64_t sector = 0, nr = 0;
	char *w;
	int rc;

	s = elv__trace_skip_blanks(s);
	if (*s == '[' || *s == '(')
		return make_rec(c, ln, rw, 0, 0, r);
	w = elv__trace_next_word(&s);
	if (!w)
		return elv__trace_fail_line(c, ln, "sector", "missing");
	rc = elv__trace_field_u64(c, ln, "sector", w, UINT64_MAX, &sector);
	if (rc)
		return rc;
	w = elv__trace_next_word(&s);
	if (!w)
		return elv__trace_fail_line(c, ln, "nsectors", "missing '+ count'");
	if (w[0] == '(' || w[0] == '[')
		return 1; /* passthrough: a byte count, no sector */
	if (strcmp(w, "+") != 0)
		return elv__trace_fail_line(c, ln, "nsectors", "'%.40s' where '+' was expected",
					    w);
	rc = elv__trace_field_u64(c, ln, "nsectors", elv__trace_next_word(&s), UINT32_MAX, &nr);
	if (rc)
		return rc;
	rc = check_rest(c, ln, s);
	if (rc)
		return rc;
	return make_rec(c, ln, rw, sector, nr, r);
}

static int is_event_line(const char *s)
{
	while (elv__trace_is_blank(*s))
		s++;
	if (*s < '0' || *s > '9')
		return 0;
	while (*s && !elv__trace_is_blank(*s) && *s != ',')
		s++;
	return *s == ',';
}

static int parse_line(struct elv__trace_ctx *c, unsigned long ln, char *s)
{
	struct elv_trace_rec r = { 0 };
	struct rwbs rw = { 0 };
	uint64_t v, pid;
	char *act;
	int rc;

	rc = parse_device(c, ln, elv__trace_next_word(&s));
	if (!rc)
		rc = elv__trace_field_u64(c, ln, "cpu", elv__trace_next_word(&s), UINT32_MAX, &v);
	if (!rc)
		rc = elv__trace_field_u64(c, ln, "sequence", elv__trace_next_word(&s), UINT64_MAX, &v);
	if (!rc)
		rc = parse_time(c, ln, elv__trace_next_word(&s), &r.time_ns);
	if (!rc)
		rc = elv__trace_field_u64(c, ln, "pid", elv__trace_next_word(&s), UINT32_MAX, &pid);
	if (rc)
		return rc;
	act = elv__trace_next_word(&s);
	if (!act)
		return elv__trace_fail_line(c, ln, "action", "missing");
	if (strlen(act) > 2)
		return elv__trace_fail_line(c, ln, "action", "'%.16s' is not an action", act);
	if (strcmp(act, "Q") != 0)
		return 0;
	rc = parse_rwbs(c, ln, elv__trace_next_word(&s), &rw);
	if (rc)
		return rc;
	rc = parse_queue_tail(c, ln, s, &rw, &r);
	if (rc)
		return rc < 0 ? rc : 0;
	r.pid = (uint32_t)pid;
	return elv__trace_push(c, &r);
}

int elv__trace_read_blkparse(struct elv__trace_ctx *c, const void *buf, size_t len)
{
	struct elv__trace_lines it;
	char *line;
	int rc;

	elv__trace_lines_init(&it, buf, len);
	while ((rc = elv__trace_next_line(c, &it, &line)) > 0) {
		if (!is_event_line(line))
			continue;
		rc = parse_line(c, it.lineno, line);
		if (rc)
			return rc;
	}
	return rc;
}
