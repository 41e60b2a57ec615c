/*
 * Trace readers: the entry points, file loading, the stable time sort and the helpers every
 * reader shares (record array, error messages, line splitting, number parsing).
 */
#include "trace_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Growth step of the file buffer while reading; it doubles from here. */
#define TRACE_READ_CHUNK (64u * 1024u)

static const char *const format_names[] = { "blktrace", "blkparse", "msr", "fio", "ftrace" };

int elv_trace_parse_format(const char *name, enum elv_trace_format *fmt)
{
	unsigned i;

	if (!name || !fmt)
		return ELV_EINVAL;
	for (i = 0; i < sizeof(format_names) / sizeof(format_names[0]); i++) {
		if (strcmp(name, format_names[i]) == 0) {
			*fmt = (enum elv_trace_format)i;
			return 0;
		}
	}
	return ELV_EINVAL;
}

const char *elv_trace_format_name(enum elv_trace_format fmt)
{
	unsigned i = (unsigned)fmt;

	return i < sizeof(format_names) / sizeof(format_names[0]) ? format_names[i] : "?";
}

void elv_trace_free(struct elv_trace_rec *recs)
{
	free(recs);
}

int elv__trace_push(struct elv__trace_ctx *c, const struct elv_trace_rec *r)
{
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 256;
		struct elv_trace_rec *v;

		if (cap < c->cap || cap > SIZE_MAX / sizeof(*v))
			v = NULL;
		else
			v = realloc(c->v, cap * sizeof(*v));
		if (!v) {
			if (c->err && c->errlen)
				snprintf(c->err, c->errlen, "%s: out of memory after %zu records",
					 c->name, c->n);
			return ELV_ENOMEM;
		}
		c->v = v;
		c->cap = cap;
	}
	c->v[c->n++] = *r;
	return 0;
}

/* "name:where: field: message", where is already formatted by the caller. */
static int fail_v(struct elv__trace_ctx *c, const char *where, const char *field,
		  const char *fmt, va_list ap)
{
	int k;

	if (!c->err || !c->errlen)
		return ELV_EINVAL;
	k = snprintf(c->err, c->errlen, "%s:%s: %s: ", c->name, where, field);
	if (k >= 0 && (size_t)k < c->errlen)
		vsnprintf(c->err + k, c->errlen - (size_t)k, fmt, ap);
	return ELV_EINVAL;
}

int elv__trace_fail_line(struct elv__trace_ctx *c, unsigned long line, const char *field,
			 const char *fmt, ...)
{
	char where[32];
	va_list ap;
	int rc;

	snprintf(where, sizeof(where), "%lu", line);
	va_start(ap, fmt);
	rc = fail_v(c, where, field, fmt, ap);
	va_end(ap);
	return rc;
}

int elv__trace_fail_rec(struct elv__trace_ctx *c, uint64_t recno, const char *field,
			const char *fmt, ...)
{
	char where[48];
	va_list ap;
	int rc;

	snprintf(where, sizeof(where), "record %llu", (unsigned long long)recno);
	va_start(ap, fmt);
	rc = fail_v(c, where, field, fmt, ap);
	va_end(ap);
	return rc;
}

void elv__trace_lines_init(struct elv__trace_lines *it, const void *buf, size_t len)
{
	const char *p = buf ? buf : "";

	if (!buf)
		len = 0;
	it->p = p;
	it->end = p + len;
	it->lineno = 0;
	it->buf[0] = '\0';
	if (len >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0)
		it->p += 3;
}

int elv__trace_next_line(struct elv__trace_ctx *c, struct elv__trace_lines *it, char **line)
{
	const char *nl, *next;
	size_t len;

	if (it->p >= it->end)
		return 0;
	it->lineno++;
	nl = memchr(it->p, '\n', (size_t)(it->end - it->p));
	if (nl) {
		next = nl + 1;
	} else {
		nl = it->end;
		next = it->end;
	}
	len = (size_t)(nl - it->p);
	if (len && it->p[len - 1] == '\r')
		len--;
	if (len > ELV_TRACE_LINE_MAX)
		return elv__trace_fail_line(c, it->lineno, "line", "longer than %u bytes",
					    (unsigned)ELV_TRACE_LINE_MAX);
	if (memchr(it->p, '\0', len))
		return elv__trace_fail_line(c, it->lineno, "line", "contains a NUL byte");
	memcpy(it->buf, it->p, len);
	it->buf[len] = '\0';
	it->p = next;
	*line = it->buf;
	return 1;
}

int elv__trace_parse_u64(const char *s, uint64_t max, uint64_t *v)
{
	uint64_t x = 0;

	if (!*s)
		return ELV__NUM_BAD;
	for (; *s; s++) {
		unsigned d;

		if (*s < '0' || *s > '9')
			return ELV__NUM_BAD;
		d = (unsigned)(*s - '0');
		if (x > (max - d) / 10)
			return ELV__NUM_RANGE;
		x = x * 10 + d;
	}
	*v = x;
	return ELV__NUM_OK;
}

const char *elv__trace_num_msg(int rc)
{
	return rc == ELV__NUM_RANGE ? "value out of range" : "not an unsigned decimal number";
}

int elv__trace_bytes_to_sectors(uint64_t off, uint64_t len, uint64_t *sector, uint32_t *nr)
{
	uint64_t end, first, last;

	if (len > UINT64_MAX - off)
		return ELV__NUM_BAD;
	end = off + len;
	first = off / 512;
	last = end / 512 + (end % 512 != 0);
	if (last - first > UINT32_MAX)
		return ELV__NUM_RANGE;
	*sector = first;
	*nr = (uint32_t)(last - first);
	return 0;
}

int elv__trace_field_u64(struct elv__trace_ctx *c, unsigned long ln, const char *field,
			 const char *w, uint64_t max, uint64_t *v)
{
	int rc;

	if (!w)
		return elv__trace_fail_line(c, ln, field, "missing");
	rc = elv__trace_parse_u64(w, max, v);
	if (rc)
		return elv__trace_fail_line(c, ln, field, "'%.40s': %s", w,
					    elv__trace_num_msg(rc));
	return 0;
}

int elv__trace_is_blank(char ch)
{
	return ch == ' ' || ch == '\t';
}

char *elv__trace_skip_blanks(char *s)
{
	while (elv__trace_is_blank(*s))
		s++;
	return s;
}

char *elv__trace_next_word(char **s)
{
	char *w = elv__trace_skip_blanks(*s), *e = w;

	if (!*w)
		return NULL;
	while (*e && !elv__trace_is_blank(*e))
		e++;
	*s = *e ? e + 1 : e;
	*e = '\0';
	return w;
}

int elv__trace_split(char *s, char **tok, int max)
{
	int n = 0;

	for (;;) {
		while (elv__trace_is_blank(*s))
			s++;
		if (!*s)
			return n;
		if (n == max)
			return max + 1;
		tok[n++] = s;
		while (*s && !elv__trace_is_blank(*s))
			s++;
		if (*s)
			*s++ = '\0';
	}
}

/* Stable merge of runs [lo, mid) and [mid, hi) of src into dst, ordered by time. */
static void merge_runs(const struct elv_trace_rec *src, struct elv_trace_rec *dst, size_t lo,
		       size_t mid, size_t hi)
{
	size_t i = lo, j = mid, k = lo;

	while (i < mid && j < hi)
		dst[k++] = src[j].time_ns < src[i].time_ns ? src[j++] : src[i++];
	while (i < mid)
		dst[k++] = src[i++];
	while (j < hi)
		dst[k++] = src[j++];
}

static int is_sorted(const struct elv_trace_rec *v, size_t n)
{
	size_t i;

	for (i = 1; i < n; i++)
		if (v[i].time_ns < v[i - 1].time_ns)
			return 0;
	return 1;
}

/* Bottom-up merge sort: stable, O(n log n), no recursion. Traces are often already sorted. */
static int sort_by_time(struct elv__trace_ctx *c)
{
	struct elv_trace_rec *a = c->v, *b, *t;
	size_t width, lo;

	if (is_sorted(a, c->n))
		return 0;
	b = malloc(c->n * sizeof(*b));
	if (!b) {
		if (c->err && c->errlen)
			snprintf(c->err, c->errlen, "%s: out of memory sorting %zu records",
				 c->name, c->n);
		return ELV_ENOMEM;
	}
	for (width = 1; width < c->n; width = width > c->n / 2 ? c->n : width * 2) {
		for (lo = 0; lo < c->n; lo += 2 * width) {
			size_t mid = lo + width < c->n ? lo + width : c->n;
			size_t hi = mid + width < c->n ? mid + width : c->n;

			merge_runs(a, b, lo, mid, hi);
			if (c->n - lo <= 2 * width)
				break;
		}
		t = a;
		a = b;
		b = t;
	}
	if (a != c->v) {
		memcpy(c->v, a, c->n * sizeof(*a));
		b = a;
	}
	free(b);
	return 0;
}

int elv_trace_load_mem(const void *buf, size_t len, const char *name,
		       enum elv_trace_format fmt, struct elv_trace_rec **recs, size_t *n,
		       char *err, size_t errlen)
{
	struct elv__trace_ctx c = { 0 };
	uint64_t t0;
	size_t i;
	int rc;

	if (err && errlen)
		err[0] = '\0';
	if (!recs || !n || (!buf && len))
		return ELV_EINVAL;
	*recs = NULL;
	*n = 0;
	c.name = name ? name : "<memory>";
	c.err = err;
	c.errlen = errlen;
	switch (fmt) {
	case ELV_TRACE_BLKTRACE:
		rc = elv__trace_read_blktrace(&c, buf, len);
		break;
	case ELV_TRACE_BLKPARSE:
		rc = elv__trace_read_blkparse(&c, buf, len);
		break;
	case ELV_TRACE_MSR:
		rc = elv__trace_read_msr(&c, buf, len);
		break;
	case ELV_TRACE_FIO:
		rc = elv__trace_read_fio(&c, buf, len);
		break;
	case ELV_TRACE_FTRACE:
		rc = elv__trace_read_ftrace(&c, buf, len);
		break;
	default:
		if (err && errlen)
			snprintf(err, errlen, "%s: unknown trace format %d", c.name, (int)fmt);
		return ELV_EINVAL;
	}
	if (rc == 0 && c.n)
		rc = sort_by_time(&c);
	if (rc) {
		free(c.v);
		return rc;
	}
	if (c.n == 0) {
		free(c.v);
		return 0;
	}
	t0 = c.v[0].time_ns;
	for (i = 0; i < c.n; i++)
		c.v[i].time_ns -= t0;
	*recs = c.v;
	*n = c.n;
	return 0;
}

/* Read a whole stream into a malloc'ed buffer; pipes work too (no size is asked for). */
static int slurp(FILE *f, const char *path, unsigned char **out, size_t *outlen, char *err,
		 size_t errlen)
{
	unsigned char *buf = NULL, *nb;
	size_t len = 0, cap = 0, got;

	for (;;) {
		if (len == cap) {
			size_t ncap = cap ? cap * 2 : TRACE_READ_CHUNK;

			nb = ncap > cap ? realloc(buf, ncap) : NULL;
			if (!nb) {
				free(buf);
				if (err && errlen)
					snprintf(err, errlen, "%s: out of memory reading the file",
						 path);
				return ELV_ENOMEM;
			}
			buf = nb;
			cap = ncap;
		}
		got = fread(buf + len, 1, cap - len, f);
		len += got;
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		int e = errno;

		free(buf);
		if (err && errlen)
			snprintf(err, errlen, "%s: cannot read: %s", path, strerror(e));
		return ELV_EINVAL;
	}
	*out = buf;
	*outlen = len;
	return 0;
}

int elv_trace_load(const char *path, enum elv_trace_format fmt, struct elv_trace_rec **recs,
		   size_t *n, char *err, size_t errlen)
{
	unsigned char *buf;
	size_t len;
	FILE *f;
	int rc;

	if (err && errlen)
		err[0] = '\0';
	if (recs)
		*recs = NULL;
	if (n)
		*n = 0;
	if (!path || !recs || !n)
		return ELV_EINVAL;
	f = fopen(path, "rb");
	if (!f) {
		int e = errno;

		if (err && errlen)
			snprintf(err, errlen, "%s: cannot open: %s", path, strerror(e));
		return e == ENOENT ? ELV_ENOENT : e == ENOMEM ? ELV_ENOMEM : ELV_EINVAL;
	}
	errno = 0;
	rc = slurp(f, path, &buf, &len, err, errlen);
	fclose(f);
	if (rc)
		return rc;
	rc = elv_trace_load_mem(buf, len, path, fmt, recs, n, err, errlen);
	free(buf);
	return rc;
}
