/*
 * Shared pieces of the trace readers: the parse context with its growing record array and
 * error buffer, a bounded line splitter for the text formats, strict number parsing and the
 * byte-to-sector rule. Never installed.
 */
#ifndef ELV_TRACE_INTERNAL_H
#define ELV_TRACE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "elevator/sim_trace.h"

#if defined(__GNUC__) || defined(__clang__)
#define ELV_TRACE_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define ELV_TRACE_PRINTF(a, b)
#endif

/* One reader run: where records go and where the first error is written. */
struct elv__trace_ctx {
	const char *name;          /* file name for messages */
	char *err;                 /* may be NULL */
	size_t errlen;
	struct elv_trace_rec *v;   /* records so far */
	size_t n;
	size_t cap;
};

/* Text input cut into lines, each copied into buf and NUL-terminated. */
struct elv__trace_lines {
	const char *p;             /* next unread byte */
	const char *end;
	unsigned long lineno;      /* number of the line last returned, from 1 */
	char buf[ELV_TRACE_LINE_MAX + 1];
};

/* Append one record; ELV_ENOMEM (with a message) when the array cannot grow. */
int elv__trace_push(struct elv__trace_ctx *c, const struct elv_trace_rec *r);

/* Write "name:line: field: message" and return ELV_EINVAL. */
int elv__trace_fail_line(struct elv__trace_ctx *c, unsigned long line, const char *field,
			const char *fmt, ...) ELV_TRACE_PRINTF(4, 5);

/* Write "name:record N: field: message" and return ELV_EINVAL. */
int elv__trace_fail_rec(struct elv__trace_ctx *c, uint64_t recno, const char *field,
		       const char *fmt, ...) ELV_TRACE_PRINTF(4, 5);

/* Start splitting [buf, buf + len) into lines; a leading UTF-8 byte order mark is skipped. */
void elv__trace_lines_init(struct elv__trace_lines *it, const void *buf, size_t len);

/*
 * Next line, without its "\n" or "\r\n", in it->buf. Returns 1 with *line set, 0 at the
 * end of input, or ELV_EINVAL for a line longer than ELV_TRACE_LINE_MAX or holding a NUL.
 */
int elv__trace_next_line(struct elv__trace_ctx *c, struct elv__trace_lines *it, char **line);

/* Results of elv__trace_parse_u64(). */
#define ELV__NUM_OK 0
#define ELV__NUM_BAD (-1)      /* empty, or not only decimal digits */
#define ELV__NUM_RANGE (-2)    /* above the allowed maximum */

/* Parse a whole string of decimal digits (no sign, no spaces) into a value <= max. */
int elv__trace_parse_u64(const char *s, uint64_t max, uint64_t *v);

/* Message text for a non-zero elv__trace_parse_u64() result. */
const char *elv__trace_num_msg(int rc);

/*
 * Byte range to sectors, rounded outward so every byte touched is covered: the first sector
 * is floor(off / 512), the end is ceil((off + len) / 512). Returns 0, ELV__NUM_RANGE when the
 * count exceeds UINT32_MAX sectors, or ELV__NUM_BAD when off + len passes 2^64.
 */
int elv__trace_bytes_to_sectors(uint64_t off, uint64_t len, uint64_t *sector, uint32_t *nr);

/* Split s in place at runs of blanks (space, tab); at most max tokens, returns the count or
 * max + 1 when more remain. */
int elv__trace_split(char *s, char **tok, int max);

/*
 * Parse word @w of line @ln (NULL when the line ended early) as a number up to @max into *v;
 * on failure the error names @field and the reason.
 */
int elv__trace_field_u64(struct elv__trace_ctx *c, unsigned long ln, const char *field,
			 const char *w, uint64_t max, uint64_t *v);

/* 1 for the blanks that separate words in the text formats: space and tab. */
int elv__trace_is_blank(char ch);
/* The first character of s that is not a blank. */
char *elv__trace_skip_blanks(char *s);
/* Cut the next word off *s in place and return it; NULL when the line has ended. */
char *elv__trace_next_word(char **s);

/* The readers: parse [buf, buf + len) and push records (times not yet made relative). */
int elv__trace_read_blktrace(struct elv__trace_ctx *c, const unsigned char *buf, size_t len);
int elv__trace_read_blkparse(struct elv__trace_ctx *c, const void *buf, size_t len);
int elv__trace_read_msr(struct elv__trace_ctx *c, const void *buf, size_t len);
int elv__trace_read_fio(struct elv__trace_ctx *c, const void *buf, size_t len);
int elv__trace_read_ftrace(struct elv__trace_ctx *c, const void *buf, size_t len);

#endif /* ELV_TRACE_INTERNAL_H */
