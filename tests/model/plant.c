/*
 * Bugs planted on purpose, for the checker's own test (tests/model/CMakeLists.txt): the
 * planted build of elvcheck must find every one of them.
 *
 * Policy bugs wrap the built-in deadline policy through its public vtable and are offered to
 * the checker as extra policies:
 *   bug-lose     every 50th dispatch silently drops a request it took from deadline;
 *   bug-dup      every 50th dispatch hands out the previously dispatched request again;
 *   bug-nobound  deadline that never sees a deadline expire (its clock stands still) and
 *                serves writes in huge batches;
 *   bug-noexpire deadline that never sees a deadline expire, its batches untouched: only
 *                the expiry bound of the model (about one batch after expiry) can tell.
 * The wrappers have no check hook, so elv_queue_check() cannot see the damage: only the
 * model can. Core bugs are compiled into the planted build's copy of the core
 * (tests/model/plant_queue.c) and chosen with plant_core_bug().
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "elevator/policy.h"

unsigned plant_policies(const struct elv_policy **out, uint8_t *dl_bound, unsigned max);

#define PLANT_EVERY 50u

struct plant_state {
	uint32_t n;
	struct elv_request *last;
};

static const struct elv_policy *plant_dl;
static struct elv_policy plant_lose, plant_dup, plant_nobound, plant_noexpire;

static size_t plant_off(void)
{
	return (plant_dl->data_size + 7u) & ~(size_t)7u;
}

static struct plant_state *plant_of(struct elv_queue *q)
{
	return (struct plant_state *)(void *)((char *)elv_queue_data(q) + plant_off());
}

static void plant_init(struct elv_queue *q)
{
	struct plant_state *ps = plant_of(q);

	ps->n = 0;
	ps->last = NULL;
	if (plant_dl->init)
		plant_dl->init(q);
}

static struct elv_request *lose_dispatch(struct elv_queue *q, uint64_t now, int force)
{
	struct plant_state *ps = plant_of(q);
	struct elv_request *rq = plant_dl->dispatch(q, now, force);

	if (rq && ++ps->n % PLANT_EVERY == 0)
		rq = plant_dl->dispatch(q, now, force); /* the first one is gone for good */
	return rq;
}

static struct elv_request *dup_dispatch(struct elv_queue *q, uint64_t now, int force)
{
	struct plant_state *ps = plant_of(q);

	if (ps->last && ++ps->n % PLANT_EVERY == 0)
		return ps->last;
	ps->last = plant_dl->dispatch(q, now, force);
	return ps->last;
}

/* The internal value of deadline's tunable @name, through the public tunables table. */
static int64_t *plant_tunable(struct elv_queue *q, const char *name)
{
	unsigned i;

	for (i = 0; i < plant_dl->nr_tunables; i++)
		if (strcmp(plant_dl->tunables[i].name, name) == 0)
			return (int64_t *)(void *)((char *)elv_queue_data(q) +
						   plant_dl->tunables[i].offset);
	return NULL;
}

/*
 * Deadline whose clock stands still (nothing ever expires) and which, behind the back of
 * its tunables, serves writes whenever any are queued in batches of up to 4096.
 */
static struct elv_request *nobound_dispatch(struct elv_queue *q, uint64_t now, int force)
{
	int64_t *ws = plant_tunable(q, "writes_starved"), *fb = plant_tunable(q, "fifo_batch");
	int64_t ws0 = ws ? *ws : 0, fb0 = fb ? *fb : 0;
	struct elv_request *rq;

	if (ws && fb) {
		*ws = 0;
		*fb = 4096;
	}
	/* A time 2^62 ns in the past, whatever the epoch: nothing has expired or aged then. */
	rq = plant_dl->dispatch(q, now - (UINT64_C(1) << 62), force);
	if (ws && fb) {
		*ws = ws0;
		*fb = fb0;
	}
	return rq;
}

/* Deadline with expiry switched off: its clock is always 2^62 ns behind. */
static struct elv_request *noexpire_dispatch(struct elv_queue *q, uint64_t now, int force)
{
	return plant_dl->dispatch(q, now - (UINT64_C(1) << 62), force);
}

static void plant_make(struct elv_policy *p, const char *name,
		       struct elv_request *(*dispatch)(struct elv_queue *, uint64_t, int))
{
	*p = *plant_dl;
	p->name = name;
	p->desc = "deadline with a bug planted on purpose (checker self-test)";
	p->data_size = plant_off() + sizeof(struct plant_state);
	p->init = plant_init;
	p->dispatch = dispatch;
	p->check = NULL;
}

unsigned plant_policies(const struct elv_policy **out, uint8_t *dl_bound, unsigned max)
{
	plant_dl = elv_policy_find("deadline");
	if (!plant_dl || max < 4u)
		return 0;
	plant_make(&plant_lose, "bug-lose", lose_dispatch);
	plant_make(&plant_dup, "bug-dup", dup_dispatch);
	plant_make(&plant_nobound, "bug-nobound", nobound_dispatch);
	plant_make(&plant_noexpire, "bug-noexpire", noexpire_dispatch);
	out[0] = &plant_lose;
	out[1] = &plant_dup;
	out[2] = &plant_nobound;
	out[3] = &plant_noexpire;
	dl_bound[0] = 0;
	dl_bound[1] = 0;
	dl_bound[2] = 1;
	dl_bound[3] = 1;
	return 4;
}
