/* Tunables: per-policy tables of named int64 values with units, defaults and ranges. */
#include "elv_internal.h"

int elv__streq(const char *a, const char *b)
{
	while (*a && *a == *b) {
		a++;
		b++;
	}
	return *a == *b;
}

void elv_tunables_reset(void *data, const struct elv_tunable *t, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++)
		*(int64_t *)(void *)((char *)data + t[i].offset) = t[i].def * (int64_t)t[i].scale;
}

#if defined(ELV_NO_TUNABLES)
ELV_NOSYS_CALL3(elv_tunable_get, const struct elv_queue *, const char *, int64_t *)
ELV_NOSYS_CALL3(elv_tunable_set, struct elv_queue *, const char *, int64_t)
#else
static const struct elv_tunable *elv_tunable_lookup(const struct elv_queue *q, const char *name)
{
	const struct elv_policy *p = q->policy;
	unsigned i;

	for (i = 0; i < p->nr_tunables; i++)
		if (elv__streq(p->tunables[i].name, name))
			return &p->tunables[i];
	return NULL;
}

int elv_tunable_get(const struct elv_queue *q, const char *name, int64_t *value)
{
	const struct elv_tunable *t;
	int64_t raw;

	if (!q || !name || !value || q->gate == ELV_GATE_EXITED)
		return ELV_EINVAL;
	t = elv_tunable_lookup(q, name);
	if (!t)
		return ELV_ENOENT;
	raw = elv_tunable_raw(q->data, t);
	/* elv_div64 keeps 32-bit builds free of libgcc's 64-bit division */
	*value = raw < 0 ? -(int64_t)elv_div64((uint64_t)-raw, t->scale)
			 : (int64_t)elv_div64((uint64_t)raw, t->scale);
	return 0;
}

int elv_tunable_set(struct elv_queue *q, const char *name, int64_t value)
{
	const struct elv_tunable *t;
	int err = elv_gate_err(q); /* torn down, or inside one of its callbacks */

	if (err)
		return err;
	if (!name)
		return ELV_EINVAL;
	t = elv_tunable_lookup(q, name);
	if (!t)
		return ELV_ENOENT;
	if (value < t->min || value > t->max)
		return ELV_ERANGE;
	*(int64_t *)(void *)((char *)q->data + t->offset) = value * (int64_t)t->scale;
	if (q->policy->tunable_changed)
		q->policy->tunable_changed(q, t);
	return 0;
}
#endif
