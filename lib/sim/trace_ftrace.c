/*
 * Linux block tracepoints as text: the tracefs "trace" file, "perf script" and "trace-cmd
 * report" all print one event per line,
 *   "<comm>-<pid> [cpu] flags secs.usecs: block_rq_issue: maj,min RWBS bytes () sector + n
 *    class,hint,level [comm]"
 * (perf writes "comm pid [cpu] secs.usecs: block:block_rq_issue: ..."). Only the request
 * events matter: insert gives the arrival, an issue without an insert (flushes, requests that
 * bypass the scheduler) arrives when issued, and the completion that follows an issue gives
 * the recorded service time. Lines of other events, comments and report headers are skipped;
 * a line that names a block_rq_ event but cannot be read is an error.
 *
 * Events are read in file order (the tools print them sorted by time), then grouped by
 * device, start sector and kind of operation, and paired in first-in first-out order inside
 * each group: that is how the block layer keeps them, and it needs no request identity,
 * which the text does not carry.
 */
#include "trace_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NSEC_PER_SEC 1000000000ull
#define MAJOR_MAX 0xfffu
#define MINOR_MAX 0xfffffu
#define NONE ((size_t)-1)

enum ev_type { EV_INSERT, EV_ISSUE, EV_COMPLETE, EV_REQUEUE, EV_MERGE };

/* One request event as read. */
struct ev {
	uint64_t t_ns;
	uint64_t sector;
	uint32_t nr;
	uint32_t dev;
	uint32_t pid;
	uint8_t type;   /* enum ev_type */
	uint8_t op;     /* enum elv_op */
	uint8_t sync;
	uint8_t arrive; /* 1: this event is a request's arrival */
	size_t link;    /* next event in a pairing queue */
	size_t owner;   /* the arrival event of the request this event belongs to */
	uint64_t issue_ns;
	uint64_t svc_ns;
};

struct evs {
	struct ev *v;
	size_t n;
	size_t cap;
};

struct event_name {
	const char *name;
	enum ev_type type;
	int has_bytes; /* insert, issue and merge print a byte count after RWBS */
};

static const struct event_name event_names[] = {
	{ "block_rq_insert", EV_INSERT, 1 },   { "block_rq_issue", EV_ISSUE, 1 },
	{ "block_rq_complete", EV_COMPLETE, 0 }, { "block_rq_requeue", EV_REQUEUE, 0 },
	{ "block_rq_merge", EV_MERGE, 1 },
};

static int is_digit(char ch)
{
	return ch >= '0' && ch <= '9';
}

static int all_digits(const char *s, size_t len)
{
	size_t i;

	if (!len)
		return 0;
	for (i = 0; i < len; i++)
		if (!is_digit(s[i]))
			return 0;
	return 1;
}

/* "digits.digits:" exactly, the time column. */
static int is_time_word(const char *w, size_t len)
{
	const char *dot = memchr(w, '.', len);

	return len >= 4 && w[len - 1] == ':' && dot && all_digits(w, (size_t)(dot - w)) &&
	       all_digits(dot + 1, len - 1 - (size_t)(dot + 1 - w));
}

static size_t word_len(const char *w)
{
	size_t k = 0;

	while (w[k] && !elv__trace_is_blank(w[k]))
		k++;
	return k;
}

/* "S.F:" with 1 to 9 fraction digits, in nanoseconds. */
static int parse_time(struct elv__trace_ctx *c, unsigned long ln, char *w, size_t len,
		      uint64_t *ns)
{
	char *dot = memchr(w, '.', len);
	size_t digits = len - 1 - (size_t)(dot + 1 - w);
	uint64_t s, frac;

	w[len - 1] = '\0';
	*dot = '\0';
	if (digits > 9 ||
	    elv__trace_parse_u64(w, (UINT64_MAX - NSEC_PER_SEC) / NSEC_PER_SEC, &s) ||
	    elv__trace_parse_u64(dot + 1, UINT64_MAX, &frac)) {
		*dot = '.';
		return elv__trace_fail_line(c, ln, "time", "'%.40s' is not seconds.fraction in range",
					    w);
	}
	for (; digits < 9; digits++)
		frac *= 10;
	*ns = s * NSEC_PER_SEC + frac;
	return 0;
}

/* The word before "[cpu]": "comm-pid" (tracefs, trace-cmd), "pid" or "pid/tid" (perf). */
static int parse_pid(struct elv__trace_ctx *c, unsigned long ln, char *w, size_t len,
		     uint32_t *pid)
{
	char *p = w, *e = w + len;
	uint64_t v;
	char *slash = memchr(w, '/', len), *dash;

	if (!all_digits(w, len)) {
		if (slash && all_digits(w, (size_t)(slash - w)) &&
		    all_digits(slash + 1, (size_t)(e - slash - 1))) {
			e = slash;
		} else {
			for (dash = e; dash > w && dash[-1] != '-'; dash--)
				;
			if (dash == w || !all_digits(dash, (size_t)(e - dash)))
				return elv__trace_fail_line(c, ln, "pid",
							    "'%.40s' is not comm-pid", w);
			p = dash;
		}
	}
	*e = '\0';
	if (elv__trace_parse_u64(p, UINT32_MAX, &v))
		return elv__trace_fail_line(c, ln, "pid", "'%.40s' is not a 32-bit pid", p);
	*pid = (uint32_t)v;
	return 0;
}

static int parse_device(struct elv__trace_ctx *c, unsigned long ln, char *w, uint32_t *dev)
{
	char *comma = w ? strchr(w, ',') : NULL;
	uint64_t ma, mi;

	if (!w)
		return elv__trace_fail_line(c, ln, "device", "missing");
	if (comma) {
		*comma = '\0';
		if (!elv__trace_parse_u64(w, MAJOR_MAX, &ma) &&
		    !elv__trace_parse_u64(comma + 1, MINOR_MAX, &mi)) {
			*dev = (uint32_t)(ma << 20 | mi);
			return 0;
		}
		*comma = ',';
	}
	return elv__trace_fail_line(c, ln, "device", "'%.40s' is not major,minor (at most %u,%u)",
				    w, MAJOR_MAX, MINOR_MAX);
}

/*
 * RWBS: "FF" alone is a flush request; otherwise an optional F (preflush), one of W R D E N,
 * then flags F (FUA), A, S, M, and E after D (secure erase). N with data is a write of
 * zeroes, replayed as a write.
 */
static int parse_rwbs(struct elv__trace_ctx *c, unsigned long ln, const char *w,
		      struct ev *e)
{
	const char *p = w;

	if (!w)
		return elv__trace_fail_line(c, ln, "rwbs", "missing");
	e->sync = 0;
	if (p[0] == 'F' && (p[1] == 'F' || p[1] == '\0')) {
		e->op = ELV_OP_FLUSH;
		p += p[1] ? 2 : 1;
	} else {
		if (p[0] == 'F')
			p++;
		if (!*p || !strchr("WRDEN", *p))
			return elv__trace_fail_line(c, ln, "rwbs",
						    "'%.16s' does not start with W, R, D, E, N or FF",
						    w);
		e->op = *p == 'R' ? ELV_OP_READ : *p == 'D' || *p == 'E' ? ELV_OP_DISCARD :
			ELV_OP_WRITE;
		p++;
	}
	for (; *p; p++) {
		if (!strchr("FASME", *p))
			return elv__trace_fail_line(c, ln, "rwbs", "'%.16s' has unknown flag '%c'",
						    w, *p);
		if (*p == 'S')
			e->sync = 1;
	}
	if (e->op == ELV_OP_READ || e->op == ELV_OP_FLUSH)
		e->sync = 1;
	return 0;
}

/* "(cmd)": possibly empty, possibly with blanks inside. */
static int skip_cmd(struct elv__trace_ctx *c, unsigned long ln, char **s)
{
	char *p = elv__trace_skip_blanks(*s), *close;

	if (*p != '(')
		return elv__trace_fail_line(c, ln, "cmd", "'%.40s' where '(command)' was expected",
					    p);
	close = strchr(p, ')');
	if (!close)
		return elv__trace_fail_line(c, ln, "cmd", "no closing ')'");
	*s = close + 1;
	return 0;
}

/* After "sector + n": an optional "class,hint,level", then "[comm]" or "[error]". */
static int check_tail(struct elv__trace_ctx *c, unsigned long ln, char *s)
{
	char *w;

	s = elv__trace_skip_blanks(s);
	if (*s && *s != '[') {
		w = elv__trace_next_word(&s);
		if (!strchr(w, ',') || !strchr("nrbi", w[0]))
			return elv__trace_fail_line(c, ln, "ioprio", "'%.40s' is not class,hint,level",
						    w);
		s = elv__trace_skip_blanks(s);
	}
	if (*s != '[' || s[strlen(s) - 1] != ']')
		return elv__trace_fail_line(c, ln, "comm", "'%.40s' is not [name] or [error]", s);
	return 0;
}

static int parse_fields(struct elv__trace_ctx *c, unsigned long ln, char *s,
			const struct event_name *en, struct ev *e)
{
	uint64_t v, sector, nr;
	char *w;
	int rc;

	rc = parse_device(c, ln, elv__trace_next_word(&s), &e->dev);
	if (!rc)
		rc = parse_rwbs(c, ln, elv__trace_next_word(&s), e);
	if (!rc && en->has_bytes)
		rc = elv__trace_field_u64(c, ln, "bytes", elv__trace_next_word(&s), UINT32_MAX, &v);
	if (!rc)
		rc = skip_cmd(c, ln, &s);
	if (!rc)
		rc = elv__trace_field_u64(c, ln, "sector", elv__trace_next_word(&s), UINT64_MAX, &sector);
	if (rc)
		return rc;
	w = elv__trace_next_word(&s);
	if (!w || strcmp(w, "+") != 0)
		return elv__trace_fail_line(c, ln, "nr_sectors", "missing '+ count'");
	rc = elv__trace_field_u64(c, ln, "nr_sectors", elv__trace_next_word(&s), UINT32_MAX, &nr);
	if (!rc)
		rc = check_tail(c, ln, s);
	if (rc)
		return rc;
	if (e->op == ELV_OP_FLUSH) {
		sector = 0; /* a flush carries no range, whatever position the request had */
		nr = 0;
	} else if (nr == 0 && (e->type == EV_INSERT || e->type == EV_ISSUE)) {
		return elv__trace_fail_line(c, ln, "nr_sectors", "0 sectors in a data request");
	} else if (sector > UINT64_MAX - nr) {
		return elv__trace_fail_line(c, ln, "sector", "%llu + %llu sectors passes 2^64",
					    (unsigned long long)sector, (unsigned long long)nr);
	}
	e->sector = sector;
	e->nr = (uint32_t)nr;
	return 0;
}

static int push_ev(struct elv__trace_ctx *c, struct evs *es, const struct ev *e)
{
	if (es->n == es->cap) {
		size_t cap = es->cap ? es->cap * 2 : 256;
		struct ev *v = cap > es->cap && cap <= SIZE_MAX / sizeof(*v) ?
			       realloc(es->v, cap * sizeof(*v)) : NULL;

		if (!v) {
			if (c->err && c->errlen)
				snprintf(c->err, c->errlen, "%s: out of memory after %zu events",
					 c->name, es->n);
			return ELV_ENOMEM;
		}
		es->v = v;
		es->cap = cap;
	}
	es->v[es->n++] = *e;
	return 0;
}

/* Find "secs.frac:" followed by an event word; the words before it are the header. */
static char *find_time(char *line, char **event)
{
	char *p = line;

	for (;;) {
		size_t k;

		p = elv__trace_skip_blanks(p);
		if (!*p)
			return NULL;
		k = word_len(p);
		if (is_time_word(p, k)) {
			char *ev = elv__trace_skip_blanks(p + k);
			size_t ek = word_len(ev);

			if (ek > 1 && ev[ek - 1] == ':') {
				*event = ev;
				return p;
			}
		}
		p += k;
	}
}

static const struct event_name *lookup_event(char *w)
{
	size_t i, k = word_len(w);

	w[k - 1] = '\0';
	if (strncmp(w, "block:", 6) == 0)
		w += 6;
	for (i = 0; i < sizeof(event_names) / sizeof(event_names[0]); i++)
		if (strcmp(w, event_names[i].name) == 0)
			return &event_names[i];
	return NULL;
}

/* The header before the time: words, the last "[digits]" is the CPU, the one before it
 * carries the pid. */
static int parse_header(struct elv__trace_ctx *c, unsigned long ln, char *line, char *time,
			uint32_t *pid)
{
	char *p = line, *cpu = NULL, *prev = NULL, *who = NULL;

	while (p < time) {
		size_t k;

		p = elv__trace_skip_blanks(p);
		if (p >= time)
			break;
		k = word_len(p);
		if (k >= 3 && p[0] == '[' && p[k - 1] == ']' && all_digits(p + 1, k - 2)) {
			cpu = p;
			who = prev;
		}
		prev = p;
		p += k;
	}
	if (!cpu)
		return elv__trace_fail_line(c, ln, "cpu", "no [cpu] column before the time");
	if (!who)
		return elv__trace_fail_line(c, ln, "pid", "no comm-pid before [cpu]");
	return parse_pid(c, ln, who, word_len(who), pid);
}

static int parse_line(struct elv__trace_ctx *c, struct evs *es, unsigned long ln, char *line)
{
	const struct event_name *en;
	struct ev e;
	char *time, *event, *s;
	int rc;

	s = elv__trace_skip_blanks(line);
	if (!*s || *s == '#')
		return 0;
	if (strstr(s, "LOST") && strstr(s, "EVENTS"))
		return elv__trace_fail_line(c, ln, "events",
					    "the tracer lost events; record with a larger buffer");
	time = find_time(s, &event);
	if (!time) {
		if (strstr(s, "block_rq_"))
			return elv__trace_fail_line(c, ln, "time",
						    "no 'seconds.fraction: event:' columns");
		return 0;
	}
	s = event + word_len(event);
	if (*s)
		*s++ = '\0';
	en = lookup_event(event);
	if (!en)
		return 0;
	memset(&e, 0, sizeof(e));
	e.type = (uint8_t)en->type;
	rc = parse_header(c, ln, line, time, &e.pid);
	if (!rc)
		rc = parse_time(c, ln, time, word_len(time), &e.t_ns);
	if (!rc)
		rc = parse_fields(c, ln, s, en, &e);
	if (rc)
		return rc;
	e.link = NONE;
	e.owner = NONE;
	return push_ev(c, es, &e);
}

/* ---- pairing ------------------------------------------------------------------------- */

/* Sort entry: the pairing key and the event's place in the file. */
struct key {
	uint64_t sector;
	uint32_t dev;
	uint32_t op;
	size_t i;
};

static int cmp_key(const void *pa, const void *pb)
{
	const struct key *a = pa, *b = pb;

	if (a->dev != b->dev)
		return a->dev < b->dev ? -1 : 1;
	if (a->sector != b->sector)
		return a->sector < b->sector ? -1 : 1;
	if (a->op != b->op)
		return a->op < b->op ? -1 : 1;
	return (a->i > b->i) - (a->i < b->i); /* file order inside a group */
}

static int same_group(const struct key *a, const struct key *b)
{
	return a->dev == b->dev && a->sector == b->sector && a->op == b->op;
}

/* A first-in first-out queue threaded through the events' link fields. */
struct fifo {
	size_t head;
	size_t tail;
};

static void fifo_push(struct ev *v, struct fifo *q, size_t i)
{
	v[i].link = NONE;
	if (q->tail == NONE)
		q->head = i;
	else
		v[q->tail].link = i;
	q->tail = i;
}

static void fifo_push_front(struct ev *v, struct fifo *q, size_t i)
{
	v[i].link = q->head;
	q->head = i;
	if (q->tail == NONE)
		q->tail = i;
}

static size_t fifo_pop(struct ev *v, struct fifo *q)
{
	size_t i = q->head;

	if (i != NONE) {
		q->head = v[i].link;
		if (q->head == NONE)
			q->tail = NONE;
	}
	return i;
}

/* One event of a group: queued holds inserted requests, issued those at the device. */
static void pair_one(struct ev *v, size_t i, struct fifo *queued, struct fifo *issued)
{
	struct ev *e = &v[i];
	size_t j;

	switch (e->type) {
	case EV_INSERT:
		e->arrive = 1;
		e->owner = i;
		fifo_push(v, queued, i);
		break;
	case EV_ISSUE:
		j = fifo_pop(v, queued);
		if (j == NONE) {
			e->arrive = 1; /* bypassed the scheduler, or a flush */
			e->owner = i;
		} else {
			e->owner = v[j].owner;
		}
		v[e->owner].issue_ns = e->t_ns;
		fifo_push(v, issued, i);
		break;
	case EV_COMPLETE:
		j = fifo_pop(v, issued);
		if (j != NONE && e->t_ns >= v[v[j].owner].issue_ns)
			v[v[j].owner].svc_ns = e->t_ns - v[v[j].owner].issue_ns;
		break;
	case EV_REQUEUE:
		j = fifo_pop(v, issued);
		if (j != NONE) {
			e->owner = v[j].owner;
			fifo_push_front(v, queued, i);
		}
		break;
	default: /* EV_MERGE: the request was merged into another and will not be issued */
		(void)fifo_pop(v, queued);
		break;
	}
}

static void pair_all(struct ev *v, const struct key *keys, size_t n)
{
	size_t g = 0, k;

	while (g < n) {
		struct fifo queued = { NONE, NONE }, issued = { NONE, NONE };

		for (k = g; k < n && same_group(&keys[k], &keys[g]); k++)
			pair_one(v, keys[k].i, &queued, &issued);
		g = k;
	}
}

static int emit(struct elv__trace_ctx *c, const struct ev *v, size_t n)
{
	size_t i;
	int rc;

	for (i = 0; i < n; i++) {
		struct elv_trace_rec r;

		if (!v[i].arrive)
			continue;
		memset(&r, 0, sizeof(r));
		r.time_ns = v[i].t_ns;
		r.sector = v[i].sector;
		r.nr_sectors = v[i].nr;
		r.op = v[i].op;
		r.sync = v[i].sync;
		r.pid = v[i].pid;
		r.service_ns = v[i].svc_ns;
		rc = elv__trace_push(c, &r);
		if (rc)
			return rc;
	}
	return 0;
}

int elv__trace_read_ftrace(struct elv__trace_ctx *c, const void *buf, size_t len)
{
	struct elv__trace_lines it;
	struct evs es = { NULL, 0, 0 };
	struct key *keys = NULL;
	size_t i;
	char *line;
	int rc;

	elv__trace_lines_init(&it, buf, len);
	while ((rc = elv__trace_next_line(c, &it, &line)) > 0) {
		rc = parse_line(c, &es, it.lineno, line);
		if (rc)
			break;
	}
	if (!rc && es.n) {
		keys = malloc(es.n * sizeof(*keys));
		if (!keys) {
			if (c->err && c->errlen)
				snprintf(c->err, c->errlen, "%s: out of memory pairing %zu events",
					 c->name, es.n);
			rc = ELV_ENOMEM;
		} else {
			for (i = 0; i < es.n; i++) {
				keys[i].sector = es.v[i].sector;
				keys[i].dev = es.v[i].dev;
				keys[i].op = es.v[i].op;
				keys[i].i = i;
			}
			qsort(keys, es.n, sizeof(*keys), cmp_key);
			pair_all(es.v, keys, es.n);
			rc = emit(c, es.v, es.n);
		}
	}
	free(keys);
	free(es.v);
	return rc;
}
