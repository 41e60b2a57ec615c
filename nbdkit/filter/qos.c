/*
 * Per-connection QoS settings of the elevator filter: throttling (IOPS and bytes per second
 * with bursts) and mClock (reservation, weight, limit), each for every connection, for the
 * connections of one NBD export name, or for one connection by number.
 *
 * A setting is KEY=VALUE with an optional selector in front: "export.NAME.KEY" or
 * "conn.N.KEY". The settings of a connection are layered, later layers winning key by key:
 * the command line's plain keys, then its export.NAME keys, then the control file's plain,
 * export.NAME and conn.N keys. Every refusal is one nbdkit_error() line that starts with
 * the setting as written.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <nbdkit-filter.h>

#include "elvf.h"

/* The library's bounds (qos.h). */
#define ELVF_QOS_VALUE_MAX ELV_THROTTLE_RATE_MAX
#define ELVF_QOS_BURST_LENGTH_MAX ELV_THROTTLE_LENGTH_MAX

struct elvf_qos_keydef {
	const char *name;
	uint64_t min;  /* smallest value other than 0 (0 always means "not set") */
	uint64_t max;
	const char *unit;
};

static const struct elvf_qos_keydef keydefs[ELVF_QOS_NR_KEYS] = {
	[ELVF_QOS_LIMIT_IOPS] = { "limit-iops", 1, ELVF_QOS_VALUE_MAX, "ops/s" },
	[ELVF_QOS_LIMIT_IOPS_READ] = { "limit-iops-read", 1, ELVF_QOS_VALUE_MAX, "ops/s" },
	[ELVF_QOS_LIMIT_IOPS_WRITE] = { "limit-iops-write", 1, ELVF_QOS_VALUE_MAX, "ops/s" },
	[ELVF_QOS_LIMIT_BPS] = { "limit-bps", 1, ELVF_QOS_VALUE_MAX, "bytes/s" },
	[ELVF_QOS_LIMIT_BPS_READ] = { "limit-bps-read", 1, ELVF_QOS_VALUE_MAX, "bytes/s" },
	[ELVF_QOS_LIMIT_BPS_WRITE] = { "limit-bps-write", 1, ELVF_QOS_VALUE_MAX, "bytes/s" },
	[ELVF_QOS_BURST_IOPS] = { "burst-iops", 1, ELVF_QOS_VALUE_MAX, "ops/s" },
	[ELVF_QOS_BURST_IOPS_READ] = { "burst-iops-read", 1, ELVF_QOS_VALUE_MAX, "ops/s" },
	[ELVF_QOS_BURST_IOPS_WRITE] = { "burst-iops-write", 1, ELVF_QOS_VALUE_MAX, "ops/s" },
	[ELVF_QOS_BURST_BPS] = { "burst-bps", 1, ELVF_QOS_VALUE_MAX, "bytes/s" },
	[ELVF_QOS_BURST_BPS_READ] = { "burst-bps-read", 1, ELVF_QOS_VALUE_MAX, "bytes/s" },
	[ELVF_QOS_BURST_BPS_WRITE] = { "burst-bps-write", 1, ELVF_QOS_VALUE_MAX, "bytes/s" },
	[ELVF_QOS_BURST_LENGTH] = { "burst-length", 1, ELVF_QOS_BURST_LENGTH_MAX, "s" },
	[ELVF_QOS_IOPS_SIZE] = { "iops-size", 1, UINT32_MAX, "bytes" },
	[ELVF_QOS_RESERVATION] = { "mclock-reservation", 1, ELV_MCLOCK_RATE_MAX, "ops/s" },
	[ELVF_QOS_WEIGHT] = { "mclock-weight", 1, ELV_MCLOCK_WEIGHT_MAX, "" },
	[ELVF_QOS_LIMIT] = { "mclock-limit", 1, ELV_MCLOCK_RATE_MAX, "ops/s" },
};

const char *elvf_qos_key_name(unsigned k)
{
	return k < ELVF_QOS_NR_KEYS ? keydefs[k].name : NULL;
}

static int key_index(const char *name)
{
	unsigned k;

	for (k = 0; k < ELVF_QOS_NR_KEYS; k++)
		if (strcmp(keydefs[k].name, name) == 0)
			return (int)k;
	return -1;
}

/* Split "export.NAME.KEY" / "conn.N.KEY" / "KEY"; NULL key when it is no QoS setting. */
struct sel {
	unsigned kind;      /* enum elvf_qos_sel */
	const char *name;   /* export name (not terminated: name_len) */
	size_t name_len;
	const char *conn;   /* connection number text (not terminated: conn_len) */
	size_t conn_len;
	int key;            /* key index, or -1 */
};

static void split(const char *s, struct sel *o)
{
	const char *dot;

	memset(o, 0, sizeof(*o));
	o->key = -1;
	if (strncmp(s, "export.", 7) == 0 && (dot = strrchr(s + 7, '.')) != NULL &&
	    dot >= s + 7) {
		o->kind = ELVF_QOS_SEL_EXPORT;
		o->name = s + 7;
		o->name_len = (size_t)(dot - (s + 7));
		o->key = key_index(dot + 1);
	} else if (strncmp(s, "conn.", 5) == 0 && (dot = strchr(s + 5, '.')) != NULL) {
		o->kind = ELVF_QOS_SEL_CONN;
		o->conn = s + 5;
		o->conn_len = (size_t)(dot - (s + 5));
		o->key = key_index(dot + 1);
	} else {
		o->kind = ELVF_QOS_SEL_ALL;
		o->key = key_index(s);
	}
}

int elvf_qos_is_key(const char *key)
{
	struct sel s;

	split(key, &s);
	return s.key >= 0;
}

/* A whole non-negative decimal integer. */
static int parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

/* The rule of @rules for selector @s, created if missing. */
static struct elvf_qos_rule *rule_for(struct elvf_qos_rules *rules, const struct sel *s,
				      uint64_t conn, const char *where, const char *key,
				      const char *value)
{
	struct elvf_qos_rule *r;
	unsigned i;

	for (i = 0; i < rules->nr; i++) {
		r = &rules->r[i];
		if (r->sel != s->kind)
			continue;
		if (s->kind == ELVF_QOS_SEL_ALL ||
		    (s->kind == ELVF_QOS_SEL_CONN && r->conn == conn) ||
		    (s->kind == ELVF_QOS_SEL_EXPORT && strlen(r->export) == s->name_len &&
		     memcmp(r->export, s->name, s->name_len) == 0))
			return r;
	}
	if (rules->nr == ELVF_MAX_QOS_RULES) {
		nbdkit_error("%s%s=%s: more than %d selectors", where, key, value,
			     ELVF_MAX_QOS_RULES);
		return NULL;
	}
	r = &rules->r[rules->nr++];
	memset(r, 0, sizeof(*r));
	r->sel = (uint8_t)s->kind;
	r->conn = conn;
	if (s->kind == ELVF_QOS_SEL_EXPORT)
		memcpy(r->export, s->name, s->name_len);
	return r;
}

int elvf_qos_parse(struct elvf_qos_rules *rules, const char *key, const char *value,
		   const char *where)
{
	const struct elvf_qos_keydef *kd;
	struct elvf_qos_rule *r;
	struct sel s;
	uint64_t v, conn = 0;
	char num[24];

	split(key, &s);
	if (s.key < 0) {
		nbdkit_error("%s%s=%s: not a QoS setting", where, key, value);
		return -1;
	}
	kd = &keydefs[s.key];
	if (s.kind == ELVF_QOS_SEL_EXPORT && s.name_len >= sizeof(rules->r[0].export)) {
		nbdkit_error("%s%s=%s: export name longer than %zu bytes", where, key, value,
			     sizeof(rules->r[0].export) - 1);
		return -1;
	}
	if (s.kind == ELVF_QOS_SEL_CONN) {
		if (s.conn_len == 0 || s.conn_len >= sizeof(num)) {
			nbdkit_error("%s%s=%s: conn.N needs a connection number", where, key,
				     value);
			return -1;
		}
		memcpy(num, s.conn, s.conn_len);
		num[s.conn_len] = '\0';
		if (parse_u64(num, &conn) < 0 || conn == 0) {
			nbdkit_error("%s%s=%s: conn.N needs a connection number from 1", where,
				     key, value);
			return -1;
		}
	}
	if (parse_u64(value, &v) < 0 || (v != 0 && (v < kd->min || v > kd->max))) {
		nbdkit_error("%s%s=%s: must be 0 (unset) or an integer from %" PRIu64
			     " to %" PRIu64 "%s%s", where, key, value, kd->min, kd->max,
			     *kd->unit ? " " : "", kd->unit);
		return -1;
	}
	r = rule_for(rules, &s, conn, where, key, value);
	if (!r)
		return -1;
	r->q.v[s.key] = v;
	r->q.set |= 1u << s.key;
	return 0;
}

/* Does rule @r apply to a connection numbered @conn with export name @export? */
static int applies(const struct elvf_qos_rule *r, const char *export, uint64_t conn)
{
	switch (r->sel) {
	case ELVF_QOS_SEL_ALL:
		return 1;
	case ELVF_QOS_SEL_EXPORT:
		return export && strcmp(r->export, export) == 0;
	default:
		return conn && r->conn == conn;
	}
}

static void overlay(struct elvf_qos *out, const struct elvf_qos_rule *r)
{
	unsigned k;

	for (k = 0; k < ELVF_QOS_NR_KEYS; k++)
		if (r->q.set & (1u << k)) {
			out->v[k] = r->q.v[k];
			out->set |= 1u << k;
			out->from[k] = r;
		}
}

void elvf_qos_effective(const struct elvf_qos_rules *const *layers, unsigned nr_layers,
			const char *export, uint64_t conn, struct elvf_qos *out)
{
	static const uint8_t order[] = { ELVF_QOS_SEL_ALL, ELVF_QOS_SEL_EXPORT,
					 ELVF_QOS_SEL_CONN };
	unsigned l, o, i;

	memset(out, 0, sizeof(*out));
	for (l = 0; l < nr_layers; l++) {
		if (!layers[l])
			continue;
		for (o = 0; o < sizeof(order); o++)
			for (i = 0; i < layers[l]->nr; i++)
				if (layers[l]->r[i].sel == order[o] &&
				    applies(&layers[l]->r[i], export, conn))
					overlay(out, &layers[l]->r[i]);
	}
}

/* The setting as the user wrote it: selector prefix and key. */
static void written(const struct elvf_qos *q, unsigned k, char *buf, size_t len)
{
	const struct elvf_qos_rule *r = q->from[k];

	if (!r || r->sel == ELVF_QOS_SEL_ALL)
		(void)snprintf(buf, len, "%s=%" PRIu64, keydefs[k].name, q->v[k]);
	else if (r->sel == ELVF_QOS_SEL_EXPORT)
		(void)snprintf(buf, len, "export.%s.%s=%" PRIu64, r->export, keydefs[k].name,
			       q->v[k]);
	else
		(void)snprintf(buf, len, "conn.%" PRIu64 ".%s=%" PRIu64, r->conn,
			       keydefs[k].name, q->v[k]);
}

static int refuse(const struct elvf_qos *q, unsigned k, const char *where, const char *why,
		  unsigned other)
{
	char a[160], b[160];

	written(q, k, a, sizeof(a));
	if (other < ELVF_QOS_NR_KEYS) {
		written(q, other, b, sizeof(b));
		nbdkit_error("%s%s: %s %s", where, a, why, b);
	} else {
		nbdkit_error("%s%s: %s", where, a, why);
	}
	return -1;
}

/* @k is set but the setting it builds on, @need, is not. */
static int refuse_needs(const struct elvf_qos *q, unsigned k, unsigned need, const char *where)
{
	char a[160];

	written(q, k, a, sizeof(a));
	nbdkit_error("%s%s: needs %s as well", where, a, keydefs[need].name);
	return -1;
}

/* Settings kinds in the library's order, with the keys of their average and burst. */
static const struct {
	uint8_t lib, avg, burst;
} lib_map[ELV_THROTTLE_NR] = {
	{ ELV_THROTTLE_BPS_TOTAL, ELVF_QOS_LIMIT_BPS, ELVF_QOS_BURST_BPS },
	{ ELV_THROTTLE_BPS_READ, ELVF_QOS_LIMIT_BPS_READ, ELVF_QOS_BURST_BPS_READ },
	{ ELV_THROTTLE_BPS_WRITE, ELVF_QOS_LIMIT_BPS_WRITE, ELVF_QOS_BURST_BPS_WRITE },
	{ ELV_THROTTLE_IOPS_TOTAL, ELVF_QOS_LIMIT_IOPS, ELVF_QOS_BURST_IOPS },
	{ ELV_THROTTLE_IOPS_READ, ELVF_QOS_LIMIT_IOPS_READ, ELVF_QOS_BURST_IOPS_READ },
	{ ELV_THROTTLE_IOPS_WRITE, ELVF_QOS_LIMIT_IOPS_WRITE, ELVF_QOS_BURST_IOPS_WRITE },
};

int elvf_qos_to_lib(const struct elvf_qos *q, struct elv_throttle_settings *t,
		    struct elv_mclock_settings *m)
{
	int what = 0;
	unsigned i;

	memset(t, 0, sizeof(*t));
	memset(m, 0, sizeof(*m));
	t->mode = ELV_THROTTLE_BUCKET;
	t->iops_size = (uint32_t)q->v[ELVF_QOS_IOPS_SIZE];
	for (i = 0; i < ELV_THROTTLE_NR; i++) {
		struct elv_throttle_limit *l = &t->limit[lib_map[i].lib];

		l->avg = q->v[lib_map[i].avg];
		l->max = q->v[lib_map[i].burst];
		if (l->max)
			l->max_length = (uint32_t)q->v[ELVF_QOS_BURST_LENGTH];
		if (l->avg)
			what |= ELVF_QOS_HAS_THROTTLE;
	}
	if (q->v[ELVF_QOS_RESERVATION] || q->v[ELVF_QOS_LIMIT] || q->v[ELVF_QOS_WEIGHT]) {
		m->reservation = q->v[ELVF_QOS_RESERVATION];
		m->limit = q->v[ELVF_QOS_LIMIT];
		m->weight = q->v[ELVF_QOS_WEIGHT] ? (uint32_t)q->v[ELVF_QOS_WEIGHT] : 1u;
		what |= ELVF_QOS_HAS_MCLOCK;
	}
	return what;
}

/* The first key set, to name in a message about the settings as a whole. */
static unsigned first_set(const struct elvf_qos *q, unsigned from, unsigned to)
{
	unsigned k;

	for (k = from; k < to; k++)
		if (q->v[k])
			return k;
	return from;
}

/* The library's own checks, after ours: a refusal here names the first setting involved. */
static int lib_check(const struct elvf_qos *q, const char *where)
{
	struct elv_throttle_settings t;
	struct elv_mclock_settings m;
	int what = elvf_qos_to_lib(q, &t, &m), r;

	if ((what & ELVF_QOS_HAS_THROTTLE) && (r = elv_throttle_check(&t)) < 0)
		return refuse(q, first_set(q, 0, ELVF_QOS_RESERVATION), where,
			      elv_strerror(r), ELVF_QOS_NR_KEYS);
	if ((what & ELVF_QOS_HAS_MCLOCK) && (r = elv_mclock_check(&m)) < 0)
		return refuse(q, first_set(q, ELVF_QOS_RESERVATION, ELVF_QOS_NR_KEYS), where,
			      elv_strerror(r), ELVF_QOS_NR_KEYS);
	return 0;
}

int elvf_qos_check(const struct elvf_qos *q, const char *where)
{
	unsigned kind, dir, lim, bur;
	int any_burst = 0;

	for (kind = 0; kind < 2; kind++) {
		lim = ELVF_QOS_LIMIT_IOPS + 3 * kind;
		bur = ELVF_QOS_BURST_IOPS + 3 * kind;
		/* A total and a per-direction limit of the same kind exclude each other. */
		for (dir = 1; dir < 3; dir++) {
			if (q->v[lim] && q->v[lim + dir])
				return refuse(q, lim + dir, where, "cannot be combined with",
					      lim);
			if (q->v[bur] && q->v[bur + dir])
				return refuse(q, bur + dir, where, "cannot be combined with",
					      bur);
		}
		for (dir = 0; dir < 3; dir++) {
			if (!q->v[bur + dir])
				continue;
			any_burst = 1;
			if (!q->v[lim + dir])
				return refuse_needs(q, bur + dir, lim + dir, where);
			if (q->v[bur + dir] < q->v[lim + dir])
				return refuse(q, bur + dir, where, "is lower than", lim + dir);
		}
	}
	if (q->v[ELVF_QOS_BURST_LENGTH] > 1 && !any_burst)
		return refuse(q, ELVF_QOS_BURST_LENGTH, where,
			      "needs a burst-iops or burst-bps setting", ELVF_QOS_NR_KEYS);
	if (q->v[ELVF_QOS_IOPS_SIZE] && !q->v[ELVF_QOS_LIMIT_IOPS] &&
	    !q->v[ELVF_QOS_LIMIT_IOPS_READ] && !q->v[ELVF_QOS_LIMIT_IOPS_WRITE])
		return refuse(q, ELVF_QOS_IOPS_SIZE, where, "needs a limit-iops setting",
			      ELVF_QOS_NR_KEYS);
	if (q->v[ELVF_QOS_RESERVATION] && q->v[ELVF_QOS_LIMIT] &&
	    q->v[ELVF_QOS_RESERVATION] > q->v[ELVF_QOS_LIMIT])
		return refuse(q, ELVF_QOS_RESERVATION, where, "is above", ELVF_QOS_LIMIT);
	return lib_check(q, where);
}

int elvf_qos_any(const struct elvf_qos *q)
{
	unsigned k;

	for (k = 0; k < ELVF_QOS_NR_KEYS; k++)
		if (q->v[k])
			return 1;
	return 0;
}

int elvf_qos_check_layers(const struct elvf_qos_rules *const *layers, unsigned nr_layers,
			  const char *where)
{
	const struct elvf_qos_rule *r;
	struct elvf_qos q;
	unsigned l, i;

	for (l = 0; l < nr_layers; l++)
		for (i = 0; layers[l] && i < layers[l]->nr; i++) {
			r = &layers[l]->r[i];
			elvf_qos_effective(layers, nr_layers,
					   r->sel == ELVF_QOS_SEL_EXPORT ? r->export : NULL,
					   r->sel == ELVF_QOS_SEL_CONN ? r->conn : 0, &q);
			if (elvf_qos_check(&q, where) < 0)
				return -1;
		}
	return 0;
}
