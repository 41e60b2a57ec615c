/*
 * Job files: a small text format that describes a workload as streams, so a run is not tied
 * to the built-in scenarios. Lines are "key = value" with '#' comments; global keys come
 * before the first "[name]" section, and every section is one stream (docs/simulator.md).
 * The parser works on a buffer and stops at the first problem with "name:line: reason".
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"

#define JOB_LINE_MAX 1024
#define SECTOR 512u

/* Where the parser is, and where its first error goes. */
struct jp {
	const char *name;
	unsigned line;
	char *err;
	size_t errlen;
	struct elv_sim_job *job;
	int in_stream;
	uint32_t seen;          /* keys already given in this section (bit per key) */
	uint8_t has_count[ELV_SIM_MAX_STREAMS];
	uint16_t group_weight[ELV_SIM_MAX_STREAMS]; /* "group_weight =" of each stream, or 0 */
};

static int fail(struct jp *p, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (p->err && p->errlen) {
		n = snprintf(p->err, p->errlen, "%s:%u: ", p->name, p->line);
		if (n >= 0 && (size_t)n < p->errlen) {
			va_start(ap, fmt);
			vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
			va_end(ap);
		}
	}
	return ELV_EINVAL;
}

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t' || *s == '\r')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		e--;
	*e = 0;
	return s;
}

/* ---- values ------------------------------------------------------------------------------ */

/* A plain decimal number, all of s used. */
static int num(const char *s, double *v)
{
	char *end;

	if (!*s || isspace((unsigned char)*s))
		return -1;
	errno = 0;
	*v = strtod(s, &end);
	if (errno || end == s || !isfinite(*v))
		return -1;
	return *end ? (int)(end - s) : 0;
}

/* A number with its unit suffix split off. */
static int num_unit(const char *s, double *v, const char **unit)
{
	int at = num(s, v);

	if (at < 0)
		return -1;
	*unit = at ? s + at : "";
	return 0;
}

/* Bytes: a whole number with an optional k, m, g or t (powers of 1024). */
static int parse_bytes(struct jp *p, const char *key, const char *s, uint64_t *out)
{
	const char *u;
	double v, mul = 1;

	if (num_unit(s, &v, &u) || v < 0)
		return fail(p, "%s: '%s' is not a size (like 4096, 4k, 1m, 2g)", key, s);
	if (!strcmp(u, "k") || !strcmp(u, "K"))
		mul = 1024.0;
	else if (!strcmp(u, "m") || !strcmp(u, "M"))
		mul = 1048576.0;
	else if (!strcmp(u, "g") || !strcmp(u, "G"))
		mul = 1073741824.0;
	else if (!strcmp(u, "t") || !strcmp(u, "T"))
		mul = 1099511627776.0;
	else if (*u && strcmp(u, "b") && strcmp(u, "B"))
		return fail(p, "%s: unknown unit '%s' (k, m, g or t)", key, u);
	v *= mul;
	if (v != floor(v) || v >= 18446744073709551616.0)
		return fail(p, "%s: '%s' is not a whole number of bytes", key, s);
	*out = (uint64_t)v;
	return 0;
}

/* A request size: whole sectors, at least one, at most 2^32 - 1 sectors. */
static int parse_rq_size(struct jp *p, const char *key, const char *s, uint32_t *sectors)
{
	uint64_t b;
	int r = parse_bytes(p, key, s, &b);

	if (r)
		return r;
	if (!b || b % SECTOR || b / SECTOR > UINT32_MAX)
		return fail(p, "%s: '%s' is not a whole number of 512-byte sectors", key, s);
	*sectors = (uint32_t)(b / SECTOR);
	return 0;
}

/* A duration: a number with us, ms or s; no unit means milliseconds. */
static int parse_ms(struct jp *p, const char *key, const char *s, double *ms)
{
	const char *u;
	double v;

	if (num_unit(s, &v, &u) || v < 0)
		return fail(p, "%s: '%s' is not a duration (like 500us, 2ms, 1.5s)", key, s);
	if (!strcmp(u, "us"))
		v /= 1000.0;
	else if (!strcmp(u, "s"))
		v *= 1000.0;
	else if (*u && strcmp(u, "ms"))
		return fail(p, "%s: unknown unit '%s' (us, ms or s)", key, u);
	if (v > 1e12)
		return fail(p, "%s: '%s' is too long", key, s);
	*ms = v;
	return 0;
}

static int parse_uint(struct jp *p, const char *key, const char *s, uint64_t max,
		      uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!isdigit((unsigned char)*s))
		return fail(p, "%s: '%s' is not a whole number", key, s);
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return fail(p, "%s: '%s' is not a whole number", key, s);
	if (v > max)
		return fail(p, "%s: %llu is more than %llu", key, v, (unsigned long long)max);
	*out = v;
	return 0;
}

static int parse_bool(struct jp *p, const char *key, const char *s, uint8_t *out)
{
	if (!strcmp(s, "yes") || !strcmp(s, "true") || !strcmp(s, "1"))
		*out = 1;
	else if (!strcmp(s, "no") || !strcmp(s, "false") || !strcmp(s, "0"))
		*out = 0;
	else
		return fail(p, "%s: '%s' is neither yes nor no", key, s);
	return 0;
}

/* A share: a fraction in [0, 1] or a percentage. */
static int parse_share(struct jp *p, const char *key, const char *s, double *out)
{
	const char *u;
	double v;

	if (num_unit(s, &v, &u) || (*u && strcmp(u, "%")))
		return fail(p, "%s: '%s' is not a share (like 0.7 or 70%%)", key, s);
	if (*u)
		v /= 100.0;
	if (!(v >= 0 && v <= 1))
		return fail(p, "%s: '%s' is outside 0..1 (0%%..100%%)", key, s);
	*out = v;
	return 0;
}

/* A place on the device: bytes, or a percentage of its capacity. */
static int parse_place(struct jp *p, const char *key, const char *s, uint64_t *sectors,
		       double *pct)
{
	const char *u;
	double v;
	uint64_t b;
	int r;

	if (!num_unit(s, &v, &u) && !strcmp(u, "%")) {
		if (!(v >= 0 && v <= 100))
			return fail(p, "%s: '%s' is outside 0%%..100%%", key, s);
		*pct = v;
		*sectors = 0;
		return 0;
	}
	r = parse_bytes(p, key, s, &b);
	if (r)
		return r;
	if (b % SECTOR)
		return fail(p, "%s: '%s' is not a whole number of 512-byte sectors", key, s);
	*sectors = b / SECTOR;
	*pct = -1;
	return 0;
}

/* ---- keys -------------------------------------------------------------------------------- */

enum {
	K_PATTERN, K_SIZE, K_READS, K_THINK, K_THINK_DIST, K_DEPTH, K_COUNT, K_BYTES, K_OFFSET,
	K_SPAN, K_BACKGROUND, K_SYNC_WRITES, K_PRIO, K_BURST, K_WEIGHT, K_GROUP, K_GROUP_WEIGHT,
	K_START, NR_SKEYS
};

static const char *const skeys[NR_SKEYS] = {
	"pattern", "size", "read_share", "think", "think_dist", "depth", "count", "bytes",
	"offset", "span", "background", "sync_writes", "prio", "burst", "weight", "group",
	"group_weight", "start"
};

static int parse_prio(struct jp *p, const char *s, uint8_t *out)
{
	static const char *const cls[] = { "rt", "be", "idle" };
	unsigned c, level = 4;
	const char *slash = strchr(s, '/');
	size_t len = slash ? (size_t)(slash - s) : strlen(s);

	for (c = 0; c < 3; c++)
		if (strlen(cls[c]) == len && !strncmp(s, cls[c], len))
			break;
	if (c == 3)
		return fail(p, "prio: '%s' is not rt, be or idle (optionally /0../7)", s);
	if (slash) {
		if (slash[1] < '0' || slash[1] > '7' || slash[2])
			return fail(p, "prio: level '%s' is not 0..7", slash + 1);
		level = (unsigned)(slash[1] - '0');
	}
	*out = ELV_PRIO(c + 1, level);
	return 0;
}

/* size = 4k, or a range 4k-64k */
static int parse_sizes(struct jp *p, const char *s, struct elv_sim_stream_spec *sp)
{
	char buf[64];
	const char *dash = strchr(s, '-');
	int r;

	if (!dash) {
		r = parse_rq_size(p, "size", s, &sp->rq_sectors);
		sp->rq_sectors_max = sp->rq_sectors;
		return r;
	}
	if ((size_t)(dash - s) >= sizeof(buf))
		return fail(p, "size: '%s' is not a size or a range of sizes", s);
	memcpy(buf, s, (size_t)(dash - s));
	buf[dash - s] = 0;
	r = parse_rq_size(p, "size", trim(buf), &sp->rq_sectors);
	if (!r) {
		snprintf(buf, sizeof(buf), "%s", dash + 1);
		r = parse_rq_size(p, "size", trim(buf), &sp->rq_sectors_max);
	}
	if (!r && sp->rq_sectors_max < sp->rq_sectors)
		return fail(p, "size: the range '%s' runs backwards", s);
	if (!r && sp->rq_sectors % 8 == 0 && sp->rq_sectors_max % 8)
		return fail(p, "size: both ends of '%s' must be whole 4 KiB pages", s);
	return r;
}

/* A name made of letters, digits, '-', '_' and '.', shorter than 32 characters. */
static int plain_name(const char *name)
{
	size_t i;

	for (i = 0; name[i]; i++)
		if (!isalnum((unsigned char)name[i]) && !strchr("-_.", name[i]))
			return 0;
	return i > 0 && i < 32;
}

/* group = NAME: the stream joins that group, named here for the first time or before. */
static int parse_group(struct jp *p, const char *val, struct elv_sim_stream_spec *sp)
{
	struct elv_sim_job *j = p->job;
	uint32_t g;

	if (!plain_name(val))
		return fail(p, "group: '%s' is not a name (letters, digits, '-', '_', '.', at "
			    "most 31)", val);
	for (g = 0; g < j->nr_groups && strcmp(j->group_name[g], val); g++)
		;
	if (g == j->nr_groups) {
		if (g == ELV_SIM_MAX_GROUPS)
			return fail(p, "group: more than %d groups", ELV_SIM_MAX_GROUPS);
		memcpy(j->group_name[g], val, strlen(val) + 1);
		j->nr_groups++;
	}
	sp->group = (uint8_t)(g + 1);
	return 0;
}

static int stream_key(struct jp *p, const char *key, const char *val)
{
	struct elv_sim_job *j = p->job;
	uint32_t si = j->nr_streams - 1;
	struct elv_sim_stream_spec *sp = &j->streams[si];
	uint64_t v;
	unsigned k;

	for (k = 0; k < NR_SKEYS && strcmp(key, skeys[k]); k++)
		;
	if (k == NR_SKEYS)
		return fail(p, "unknown stream key '%s'", key);
	if (p->seen & (1u << k))
		return fail(p, "%s given twice in stream '%s'", key, sp->name);
	p->seen |= 1u << k;
	switch (k) {
	case K_PATTERN:
		if (!strcmp(val, "random"))
			sp->pattern = ELV_SIM_RANDOM;
		else if (!strcmp(val, "sequential"))
			sp->pattern = ELV_SIM_SEQUENTIAL;
		else if (!strcmp(val, "locality"))
			sp->pattern = ELV_SIM_LOCALITY;
		else
			return fail(p, "pattern: '%s' is not random, sequential or locality", val);
		return 0;
	case K_SIZE:
		return parse_sizes(p, val, sp);
	case K_READS:
		return parse_share(p, key, val, &sp->read_share);
	case K_THINK:
		return parse_ms(p, key, val, &sp->think_ms);
	case K_THINK_DIST:
		if (!strcmp(val, "fixed"))
			sp->exp_think = 0;
		else if (!strcmp(val, "exponential"))
			sp->exp_think = 1;
		else
			return fail(p, "think_dist: '%s' is not fixed or exponential", val);
		return 0;
	case K_DEPTH:
		if (parse_uint(p, key, val, 65536, &v))
			return ELV_EINVAL;
		if (!v)
			return fail(p, "depth: must be at least 1");
		sp->depth = (uint32_t)v;
		return 0;
	case K_COUNT:
		if (parse_uint(p, key, val, UINT64_MAX, &sp->count))
			return ELV_EINVAL;
		if (!sp->count)
			return fail(p, "count: must be at least 1 (leave it out for no end)");
		p->has_count[si] = 1;
		return 0;
	case K_BYTES:
		if (parse_bytes(p, key, val, &sp->bytes))
			return ELV_EINVAL;
		if (!sp->bytes)
			return fail(p, "bytes: must be at least 1 (leave it out for no end)");
		return 0;
	case K_OFFSET:
		return parse_place(p, key, val, &sp->region_start, &j->offset_pct[si]);
	case K_SPAN:
		if (parse_place(p, key, val, &sp->region_len, &j->span_pct[si]))
			return ELV_EINVAL;
		if (!sp->region_len && !(j->span_pct[si] > 0))
			return fail(p, "span: must be more than 0");
		return 0;
	case K_BACKGROUND:
		return parse_bool(p, key, val, &sp->background);
	case K_SYNC_WRITES:
		return parse_bool(p, key, val, &sp->sync_writes);
	case K_PRIO:
		return parse_prio(p, val, &sp->ioprio);
	case K_WEIGHT:
		if (parse_uint(p, key, val, ELV_WEIGHT_MAX, &v))
			return ELV_EINVAL;
		if (!v)
			return fail(p, "weight: must be at least 1");
		sp->weight = (uint16_t)v;
		return 0;
	case K_GROUP:
		return parse_group(p, val, sp);
	case K_GROUP_WEIGHT:
		if (parse_uint(p, key, val, ELV_GROUP_WEIGHT_MAX, &v))
			return ELV_EINVAL;
		if (!v)
			return fail(p, "group_weight: must be at least 1");
		p->group_weight[si] = (uint16_t)v;
		return 0;
	case K_START: {
		double ms;

		if (parse_ms(p, key, val, &ms))
			return ELV_EINVAL;
		if (ms != floor(ms) || ms > UINT32_MAX)
			return fail(p, "start: '%s' is not a whole number of milliseconds", val);
		sp->start_ms = (uint32_t)ms;
		return 0;
	}
	default: /* K_BURST */
		if (parse_uint(p, key, val, 1u << 20, &v))
			return ELV_EINVAL;
		if (!v)
			return fail(p, "burst: must be at least 1");
		sp->burst = (uint32_t)v;
		return 0;
	}
}

static int global_key(struct jp *p, const char *key, const char *val)
{
	struct elv_sim_job *j = p->job;
	unsigned bit;
	double ms;

	if (!strcmp(key, "device"))
		bit = 1;
	else if (!strcmp(key, "seed"))
		bit = 2;
	else if (!strcmp(key, "time_limit"))
		bit = 4;
	else
		return fail(p, "unknown global key '%s' (device, seed, time_limit; a stream "
			    "starts with [name])", key);
	if (p->seen & bit)
		return fail(p, "%s given twice", key);
	p->seen |= bit;
	if (bit == 1) {
		if (strlen(val) >= sizeof(j->device))
			return fail(p, "device: name too long");
		if (!*val)
			return fail(p, "device: empty");
		memcpy(j->device, val, strlen(val) + 1);
		return 0;
	}
	if (bit == 2) {
		if (parse_uint(p, key, val, UINT64_MAX, &j->seed))
			return ELV_EINVAL;
		j->has_seed = 1;
		return 0;
	}
	if (parse_ms(p, key, val, &ms))
		return ELV_EINVAL;
	if (!(ms > 0))
		return fail(p, "time_limit: must be more than 0");
	j->time_limit_ns = (uint64_t)(ms * 1e6);
	return 0;
}

/* "[name]" starts a stream. */
static int section(struct jp *p, char *s)
{
	struct elv_sim_job *j = p->job;
	struct elv_sim_stream_spec *sp;
	size_t len = strlen(s);
	char *name;
	uint32_t i;

	if (s[len - 1] != ']')
		return fail(p, "a section header ends with ']'");
	s[len - 1] = 0;
	name = trim(s + 1);
	if (!*name)
		return fail(p, "a stream needs a name: [name]");
	if (strlen(name) >= sizeof(sp->name))
		return fail(p, "stream name '%s' is longer than %zu characters", name,
			    sizeof(sp->name) - 1);
	for (i = 0; name[i]; i++)
		if (!isalnum((unsigned char)name[i]) && !strchr("-_.", name[i]))
			return fail(p, "stream name '%s': use letters, digits, '-', '_', '.'",
				    name);
	for (i = 0; i < j->nr_streams; i++)
		if (!strcmp(j->streams[i].name, name))
			return fail(p, "a second stream named '%s'", name);
	if (j->nr_streams == ELV_SIM_MAX_STREAMS)
		return fail(p, "more than %d streams", ELV_SIM_MAX_STREAMS);
	sp = &j->streams[j->nr_streams];
	memset(sp, 0, sizeof(*sp));
	memcpy(sp->name, name, strlen(name) + 1);
	sp->kind = ELV_SIM_MIXED;
	sp->rq_sectors = 8;
	sp->rq_sectors_max = 8;
	sp->read_share = 1.0;
	sp->depth = 1;
	j->offset_pct[j->nr_streams] = -1;
	j->span_pct[j->nr_streams] = -1;
	j->line[j->nr_streams] = p->line;
	j->nr_streams++;
	p->in_stream = 1;
	p->seen = 0;
	return 0;
}

/* What can only be judged once the file is read. */
static int finish(struct jp *p)
{
	struct elv_sim_job *j = p->job;
	uint32_t i, fg = 0;

	for (i = 0; i < j->nr_groups; i++)
		j->group_weight[i] = 0;
	for (i = 0; i < j->nr_streams; i++) {
		const struct elv_sim_stream_spec *sp = &j->streams[i];
		uint16_t gw = p->group_weight[i];

		p->line = j->line[i];
		if (gw && !sp->group)
			return fail(p, "stream '%s': group_weight without a group", sp->name);
		if (gw && j->group_weight[sp->group - 1] && j->group_weight[sp->group - 1] != gw)
			return fail(p, "stream '%s': group '%s' was given weight %u before", sp->name,
				    j->group_name[sp->group - 1], j->group_weight[sp->group - 1]);
		if (gw)
			j->group_weight[sp->group - 1] = gw;
		if (sp->count && sp->bytes)
			return fail(p, "stream '%s': give count or bytes, not both", sp->name);
		if (!sp->background && !sp->count && !sp->bytes && !j->time_limit_ns)
			return fail(p, "stream '%s' never ends: give count or bytes, make it "
				    "background, or set a time_limit", sp->name);
		if (!sp->background)
			fg++;
	}
	for (i = 0; i < j->nr_groups; i++)
		if (!j->group_weight[i])
			j->group_weight[i] = ELV_GROUP_WEIGHT_DEFAULT;
	if (!fg) {
		p->line = j->nr_streams ? j->line[0] : p->line;
		return fail(p, j->nr_streams ? "every stream is background: nothing ends the run"
				       : "no stream: a stream starts with [name]");
	}
	return 0;
}

int elv_sim_job_parse(const char *text, size_t len, const char *name, struct elv_sim_job *job,
		      char *err, size_t errlen)
{
	struct jp p;
	size_t at = 0;
	int r = 0;

	if (err && errlen)
		err[0] = 0;
	if (!text || !name || !job)
		return ELV_EINVAL;
	memset(&p, 0, sizeof(p));
	p.name = name;
	p.err = err;
	p.errlen = errlen;
	p.job = job;
	memset(job, 0, sizeof(*job));
	while (at < len && !r) {
		char line[JOB_LINE_MAX + 1], *s, *eq, *hash;
		size_t n = 0;

		p.line++;
		while (at < len && text[at] != '\n') {
			if (!text[at]) {
				r = fail(&p, "a NUL byte: not a text file");
				break;
			}
			if (n < JOB_LINE_MAX)
				line[n] = text[at];
			n++;
			at++;
		}
		at++;
		if (r)
			break;
		if (n > JOB_LINE_MAX) {
			r = fail(&p, "line longer than %d bytes", JOB_LINE_MAX);
			break;
		}
		line[n] = 0;
		hash = strchr(line, '#');
		if (hash)
			*hash = 0;
		s = trim(line);
		if (!*s)
			continue;
		if (*s == '[') {
			r = section(&p, s);
			continue;
		}
		eq = strchr(s, '=');
		if (!eq) {
			r = fail(&p, "expected 'key = value' or '[stream name]', got '%.40s'", s);
			break;
		}
		*eq = 0;
		if (!*trim(s)) {
			r = fail(&p, "a key is missing before '='");
			break;
		}
		if (!*trim(eq + 1)) {
			r = fail(&p, "%s: the value is missing", trim(s));
			break;
		}
		r = p.in_stream ? stream_key(&p, trim(s), trim(eq + 1)) :
				  global_key(&p, trim(s), trim(eq + 1));
	}
	if (!r)
		r = finish(&p);
	if (r)
		memset(job, 0, sizeof(*job));
	return r;
}

int elv_sim_job_load(const char *path, struct elv_sim_job *job, char *err, size_t errlen)
{
	FILE *f;
	char *buf = NULL;
	size_t len = 0, cap = 0;
	int r;

	if (err && errlen)
		err[0] = 0;
	if (!path || !job)
		return ELV_EINVAL;
	f = fopen(path, "rb");
	if (!f) {
		if (err && errlen)
			snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
		return ELV_ENOENT;
	}
	for (;;) {
		size_t got;

		if (len == cap) {
			char *nb;

			cap = cap ? cap * 2 : 4096;
			nb = cap > (16u << 20) ? NULL : realloc(buf, cap);
			if (!nb) {
				free(buf);
				fclose(f);
				if (err && errlen)
					snprintf(err, errlen, "%s: larger than 16 MiB or out of "
						 "memory", path);
				return ELV_ENOMEM;
			}
			buf = nb;
		}
		got = fread(buf + len, 1, cap - len, f);
		len += got;
		if (got == 0)
			break;
	}
	r = ferror(f) ? ELV_EINVAL : 0;
	fclose(f);
	if (r) {
		if (err && errlen)
			snprintf(err, errlen, "%s: read error", path);
	} else {
		r = elv_sim_job_parse(buf ? buf : "", len, path, job, err, errlen);
	}
	free(buf);
	return r;
}

int elv_sim_job_apply(const struct elv_sim_job *job, struct elv_sim_config *cfg)
{
	uint64_t cap;
	uint32_t i;

	if (!job || !cfg || !job->nr_streams || job->nr_streams > ELV_SIM_MAX_STREAMS ||
	    job->nr_groups > ELV_SIM_MAX_GROUPS ||
	    !cfg->dev.capacity)
		return ELV_EINVAL;
	cap = cfg->dev.capacity;
	for (i = 0; i < job->nr_streams; i++) {
		struct elv_sim_stream_spec *sp = &cfg->streams[i];
		uint64_t start, len;

		*sp = job->streams[i];
		start = job->offset_pct[i] >= 0 ?
			(uint64_t)floor(job->offset_pct[i] / 100.0 * (double)cap) / 8 * 8 :
			sp->region_start;
		len = job->span_pct[i] >= 0 ?
		      (uint64_t)floor(job->span_pct[i] / 100.0 * (double)cap) / 8 * 8 :
		      sp->region_len;
		if (!len && job->span_pct[i] < 0 && start < cap)
			len = cap - start; /* no span: to the end of the device */
		if (start >= cap || len > cap - start || len < sp->rq_sectors_max) {
			cfg->nr_streams = i; /* says which stream does not fit */
			return ELV_ERANGE;
		}
		sp->region_start = start;
		sp->region_len = len;
	}
	cfg->nr_streams = job->nr_streams;
	cfg->nr_groups = job->nr_groups;
	memcpy(cfg->group_weight, job->group_weight, sizeof(cfg->group_weight));
	if (job->has_seed)
		cfg->seed = job->seed;
	if (job->time_limit_ns && !cfg->time_limit_ns)
		cfg->time_limit_ns = job->time_limit_ns;
	return 0;
}
