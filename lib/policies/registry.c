/* The built-in policies, looked up by name or index. */
#include "../core/elv_internal.h"

/* Grouped for listings: the Linux elevators, then the classic algorithms of the literature. */
static const struct elv_policy *const elv_builtin[] = {
	/* Linux elevators */
	&elv_policy_noop,
	&elv_policy_deadline,
	&elv_policy_anticipatory,
	&elv_policy_cfq,
	&elv_policy_kyber,
	&elv_policy_bfq,
	/* classic algorithms */
	&elv_policy_fcfs,
	&elv_policy_sstf,
	&elv_policy_scan,
	&elv_policy_look,
	&elv_policy_cscan,
	&elv_policy_clook,
	&elv_policy_nscan,
	&elv_policy_fscan,
	&elv_policy_vr,
	&elv_policy_sptf,
	&elv_policy_asptf,
};

#define ELV_NR_BUILTIN (sizeof(elv_builtin) / sizeof(elv_builtin[0]))

const struct elv_policy *elv_policy_at(unsigned i)
{
	return i < ELV_NR_BUILTIN ? elv_builtin[i] : NULL;
}

size_t elv_queue_size_any(const struct elv_config *cfg)
{
	size_t data = 0;
	unsigned i;

	for (i = 0; i < ELV_NR_BUILTIN; i++)
		if (elv_builtin[i]->data_size > data)
			data = elv_builtin[i]->data_size;
	return elv_queue_size_data(data, cfg);
}

const struct elv_policy *elv_policy_find(const char *name)
{
	unsigned i;

	if (!name)
		return NULL;
	for (i = 0; i < ELV_NR_BUILTIN; i++)
		if (elv__streq(elv_builtin[i]->name, name))
			return elv_builtin[i];
	return NULL;
}

const char *elv_policy_name(const struct elv_policy *p)
{
	return p ? p->name : "";
}

const char *elv_policy_description(const struct elv_policy *p)
{
	return p && p->desc ? p->desc : "";
}

const struct elv_tunable *elv_policy_tunables(const struct elv_policy *p, unsigned *nr)
{
	if (nr)
		*nr = p ? p->nr_tunables : 0;
	return p ? p->tunables : NULL;
}
