/*
 * Parameters of the elevator filter and the control file's syntax. Every refusal is one
 * nbdkit_error() line that starts with the parameter as the user wrote it, then the reason.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <nbdkit-filter.h>

#include "elvf.h"

#define ELVF_DEPTH_MAX 65535u

/* The filter's own keys; any other key that names a built-in policy's tunable is also ours. */
static const char *const elvf_keys[] = {
	"policy", "depth", "rotational", "stream", "ioprio", "stats", "control", "qos-at-limit",
	NULL
};

static const struct elv_tunable *tunable_of(const struct elv_policy *p, const char *name)
{
	const struct elv_tunable *t;
	unsigned i, nr;

	t = elv_policy_tunables(p, &nr);
	for (i = 0; t && i < nr; i++)
		if (strcmp(t[i].name, name) == 0)
			return &t[i];
	return NULL;
}

static int is_any_tunable(const char *name)
{
	const struct elv_policy *p;
	unsigned i;

	for (i = 0; (p = elv_policy_at(i)) != NULL; i++)
		if (tunable_of(p, name))
			return 1;
	return 0;
}

int elvf_param_is_ours(const char *key)
{
	unsigned i;

	for (i = 0; elvf_keys[i]; i++)
		if (strcmp(key, elvf_keys[i]) == 0)
			return 1;
	return elvf_qos_is_key(key) || is_any_tunable(key);
}

/* A whole decimal integer, nothing before or after it. */
static int parse_i64(const char *s, int64_t *out)
{
	char *end;
	long long v;

	if (!*s || *s == ' ' || *s == '\t')
		return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

static void policy_names(char *buf, size_t len)
{
	const struct elv_policy *p;
	size_t used = 0;
	unsigned i;

	buf[0] = '\0';
	for (i = 0; (p = elv_policy_at(i)) != NULL && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? " " : "",
					 elv_policy_name(p));
}

static int set_policy(struct elvf_settings *s, const char *value, const char *where)
{
	char names[128];

	s->policy = elv_policy_find(value);
	if (s->policy)
		return 0;
	policy_names(names, sizeof(names));
	nbdkit_error("%spolicy=%s: unknown policy (built in: %s)", where, value, names);
	return -1;
}

static int add_tunable(struct elvf_settings *s, const char *key, const char *value,
		       const char *where)
{
	struct elvf_tunable_set *t;

	if (strlen(key) >= sizeof(s->tun[0].name)) {
		nbdkit_error("%s%s: name too long", where, key);
		return -1;
	}
	if (s->nr_tun == ELVF_MAX_TUNABLES) {
		nbdkit_error("%s%s=%s: more than %d tunables", where, key, value,
			     ELVF_MAX_TUNABLES);
		return -1;
	}
	t = &s->tun[s->nr_tun];
	if (parse_i64(value, &t->value) < 0) {
		nbdkit_error("%s%s=%s: not an integer", where, key, value);
		return -1;
	}
	strcpy(t->name, key);
	s->nr_tun++;
	return 0;
}

static int parse_depth(struct elvf_params *p, const char *value)
{
	int64_t v;

	if (parse_i64(value, &v) < 0 || v < 1 || v > (int64_t)ELVF_DEPTH_MAX) {
		nbdkit_error("depth=%s: must be an integer from 1 to %u", value, ELVF_DEPTH_MAX);
		return -1;
	}
	p->depth = (unsigned)v;
	return 0;
}

static int parse_rotational(struct elvf_params *p, const char *value)
{
	static const char *const yes[] = { "1", "true", "yes", "on", NULL };
	static const char *const no[] = { "0", "false", "no", "off", NULL };
	unsigned i;

	for (i = 0; yes[i]; i++)
		if (strcasecmp(value, yes[i]) == 0) {
			p->rotational = 1;
			return 0;
		}
	for (i = 0; no[i]; i++)
		if (strcasecmp(value, no[i]) == 0) {
			p->rotational = 0;
			return 0;
		}
	nbdkit_error("rotational=%s: must be true or false", value);
	return -1;
}

static int parse_stream(struct elvf_params *p, const char *value)
{
	if (strcmp(value, "connection") == 0)
		p->stream_mode = ELVF_STREAM_CONNECTION;
	else if (strcmp(value, "none") == 0)
		p->stream_mode = ELVF_STREAM_NONE;
	else {
		nbdkit_error("stream=%s: must be connection or none", value);
		return -1;
	}
	return 0;
}

/* ioprio=CLASS[,LEVEL]: CLASS rt, be or idle (or 1-3), LEVEL 0 (highest) to 7. */
static int parse_ioprio(struct elvf_params *p, const char *value)
{
	static const char *const cls[] = { "none", "rt", "be", "idle" };
	const char *comma = strchr(value, ',');
	size_t n = comma ? (size_t)(comma - value) : strlen(value);
	int64_t level = ELV_PRIO_DEFAULT_LEVEL;
	unsigned c;

	for (c = 1; c < 4; c++)
		if ((strlen(cls[c]) == n && strncasecmp(value, cls[c], n) == 0) ||
		    (n == 1 && value[0] == (char)('0' + c)))
			break;
	if (c == 4 || (comma && (parse_i64(comma + 1, &level) < 0 || level < 0 || level > 7))) {
		nbdkit_error("ioprio=%s: must be CLASS[,LEVEL] with CLASS rt, be or idle "
			     "and LEVEL 0 to 7", value);
		return -1;
	}
	p->ioprio = ELV_PRIO(c, (unsigned)level);
	return 0;
}

static int parse_at_limit(struct elvf_params *p, const char *value)
{
	if (strcmp(value, "wait") == 0)
		p->qos_at_limit = ELV_QOS_AT_LIMIT_WAIT;
	else if (strcmp(value, "allow") == 0)
		p->qos_at_limit = ELV_QOS_AT_LIMIT_ALLOW;
	else {
		nbdkit_error("qos-at-limit=%s: must be wait or allow", value);
		return -1;
	}
	return 0;
}

static int parse_path(char **dst, const char *key, const char *value)
{
	char *abs;

	if (!*value) {
		nbdkit_error("%s=: needs a file name", key);
		return -1;
	}
	abs = nbdkit_absolute_path(value);
	if (!abs)
		return -1;
	free(*dst);
	*dst = abs;
	return 0;
}

int elvf_param_set(struct elvf_params *p, const char *key, const char *value)
{
	if (strcmp(key, "policy") == 0)
		return set_policy(&p->set, value, "");
	if (strcmp(key, "depth") == 0)
		return parse_depth(p, value);
	if (strcmp(key, "rotational") == 0)
		return parse_rotational(p, value);
	if (strcmp(key, "stream") == 0)
		return parse_stream(p, value);
	if (strcmp(key, "ioprio") == 0)
		return parse_ioprio(p, value);
	if (strcmp(key, "qos-at-limit") == 0)
		return parse_at_limit(p, value);
	if (strcmp(key, "stats") == 0)
		return parse_path(&p->stats_path, key, value);
	if (strcmp(key, "control") == 0)
		return parse_path(&p->control_path, key, value);
	if (elvf_qos_is_key(key))
		return elvf_qos_parse(&p->set.qos, key, value, "");
	return add_tunable(&p->set, key, value, "");
}

int elvf_settings_check(const struct elvf_settings *s, const struct elv_policy *pol,
			const char *where)
{
	const struct elv_tunable *t;
	unsigned i;

	for (i = 0; i < s->nr_tun; i++) {
		t = tunable_of(pol, s->tun[i].name);
		if (!t) {
			nbdkit_error("%s%s=%" PRId64 ": not a tunable of policy %s", where,
				     s->tun[i].name, s->tun[i].value, elv_policy_name(pol));
			return -1;
		}
		if (s->tun[i].value < t->min || s->tun[i].value > t->max) {
			nbdkit_error("%s%s=%" PRId64 ": out of range %" PRId64 " to %" PRId64
				     " %s", where, s->tun[i].name, s->tun[i].value, t->min,
				     t->max, t->unit);
			return -1;
		}
	}
	return 0;
}

int elvf_params_finish(struct elvf_params *p)
{
	const struct elvf_qos_rules *layer = &p->set.qos;
	struct elv_device_traits dev = { 0 };

	if (!p->depth)
		p->depth = p->rotational ? 1 : 32;
	if (!p->set.policy) {
		dev.rotational = (uint8_t)p->rotational;
		dev.queue_depth = (uint16_t)p->depth;
		p->set.policy = elv_policy_recommend(&dev);
	}
	if (p->set.qos.nr && p->stream_mode != ELVF_STREAM_CONNECTION) {
		nbdkit_error("stream=none: QoS settings need stream=connection");
		return -1;
	}
	if (elvf_qos_check_layers(&layer, 1, "") < 0)
		return -1;
	return elvf_settings_check(&p->set, p->set.policy, "");
}

/* One "key=value" line of the control file, blanks around both trimmed. */
static int control_line(const char *path, unsigned lineno, char *line, struct elvf_settings *s)
{
	char where[512];
	char *eq, *key, *value, *end;

	(void)snprintf(where, sizeof(where), "control file %s line %u: ", path, lineno);
	key = line + strspn(line, " \t");
	if (!*key || *key == '#')
		return 0;
	eq = strchr(key, '=');
	if (!eq) {
		nbdkit_error("%s%s: expected NAME=VALUE", where, key);
		return -1;
	}
	for (end = eq; end > key && (end[-1] == ' ' || end[-1] == '\t'); end--)
		;
	*end = '\0';
	value = eq + 1 + strspn(eq + 1, " \t");
	for (end = value + strlen(value); end > value && strchr(" \t\r", end[-1]); end--)
		;
	*end = '\0';
	if (strcmp(key, "policy") == 0)
		return set_policy(s, value, where);
	if (elvf_qos_is_key(key))
		return elvf_qos_parse(&s->qos, key, value, where);
	if (!is_any_tunable(key)) {
		nbdkit_error("%s%s=%s: unknown tunable (only policy=, tunables and QoS "
			     "settings may change at run time)", where, key, value);
		return -1;
	}
	return add_tunable(s, key, value, where);
}

int elvf_control_parse(const char *path, const char *text, struct elvf_settings *s)
{
	char line[512];
	unsigned lineno = 0;
	const char *nl;
	size_t n;

	memset(s, 0, sizeof(*s));
	while (*text) {
		nl = strchr(text, '\n');
		n = nl ? (size_t)(nl - text) : strlen(text);
		lineno++;
		if (n >= sizeof(line)) {
			nbdkit_error("control file %s line %u: longer than %zu bytes", path, lineno,
				     sizeof(line) - 1);
			return -1;
		}
		memcpy(line, text, n);
		line[n] = '\0';
		if (control_line(path, lineno, line, s) < 0)
			return -1;
		text += n + (nl ? 1 : 0);
	}
	return 0;
}

void elvf_params_free(struct elvf_params *p)
{
	free(p->stats_path);
	free(p->control_path);
	p->stats_path = NULL;
	p->control_path = NULL;
}
