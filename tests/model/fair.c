/*
 * Bounded unfairness between backlogged streams, for the policies that promise proportional
 * service (bfq). Two sync streams of one class each keep K sequential reads of random sizes
 * outstanding, over a device of one to four slots whose service time grows with the request
 * size; after every dispatch the sectors each stream has been given are compared. B-WF2Q+
 * serves a queue a budget at a time and picks the smallest virtual finish time, so two
 * equal-weight queues that never empty can drift apart by about one budget each way: the
 * check allows three of the largest budget the policy can grant (docs/reliability.md derives
 * it). With weights wa and wb the service divided by the weight is what stays close:
 * |Sa * wb - Sb * wa| <= 3/2 * budget * (wa + wb), which is the same bound for equal weights.
 * Weight raising is switched off (low_latency 0): it exists to break this fairness for a
 * while on purpose.
 *
 * Only the public API is used. A run prints one line; a violation prints the numbers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elevator/elevator.h"
#include "elevator/policy.h"
#include "fair.h"

#define FR_K 16            /* requests each stream keeps outstanding */
#define FR_SLOTS (2 * FR_K)
#define FR_WARMUP_BUDGET 10922 /* 2/3 of 16384: a queue's first budget before warm-up ends */

struct fr_rq {
	struct elv_request rq; /* first: request pointers are slot pointers */
	int who;               /* stream 0 or 1 */
	int busy;              /* held by the queue or the device */
	uint64_t done_at;      /* completion time once on the device */
};

struct fr {
	struct elv_queue *q;
	struct elv_stream st[2];
	struct fr_rq r[FR_SLOTS];
	struct fr_rq *dev[4];
	unsigned ndev, depth;
	uint64_t now, seed, pos[2], served[2], held[2];
	uint64_t w[2];         /* weights, for the normalised difference */
	uint32_t max_rq;
};

static uint64_t fr_rand(struct fr *f)
{
	/* splitmix64: one stream of numbers per seed */
	uint64_t z = (f->seed += 0x9E3779B97F4A7C15ull);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* Top both streams up to FR_K outstanding requests, each the next piece of its file. */
static int fr_fill(struct fr *f, char *err, size_t len)
{
	unsigned i;

	for (i = 0; i < FR_SLOTS; i++) {
		struct fr_rq *x = &f->r[i];
		int who = (int)(i % 2u), ret;

		if (x->busy || f->held[who] >= FR_K)
			continue;
		elv_request_init(&x->rq);
		x->who = who;
		x->rq.op = ELV_OP_READ;
		x->rq.flags = ELV_RQ_SYNC;
		x->rq.stream = &f->st[who];
		x->rq.nr_sectors = 8u * (1u + (uint32_t)(fr_rand(f) % (f->max_rq / 8u)));
		x->rq.sector = f->pos[who];
		/* A gap between requests: they stay separate (no merge) yet sequential. */
		f->pos[who] += x->rq.nr_sectors + 8u;
		ret = elv_add(f->q, &x->rq, f->now);
		if (ret != 0) {
			snprintf(err, len, "elv_add returned %d", ret);
			return -1;
		}
		x->busy = 1;
		f->held[who]++;
	}
	return 0;
}

/* |Sa * wb - Sb * wa| / ((wa + wb) / 2): how far apart the two are, in sectors at equal
 * weights. */
static uint64_t fr_diff(const struct fr *f)
{
	uint64_t a = f->served[0] * f->w[1], b = f->served[1] * f->w[0];

	return (a > b ? a - b : b - a) * 2u / (f->w[0] + f->w[1]);
}

/* Complete the device's first command (it serves in order). */
static int fr_complete(struct fr *f, char *err, size_t len)
{
	struct fr_rq *x = f->dev[0];
	int ret;

	if (x->done_at > f->now)
		f->now = x->done_at;
	memmove(f->dev, f->dev + 1, (f->ndev - 1u) * sizeof(f->dev[0]));
	f->ndev--;
	if (f->ndev)
		f->dev[0]->done_at = f->now + 20000u + 2000u * f->dev[0]->rq.nr_sectors;
	ret = elv_complete(f->q, &x->rq, f->now);
	if (ret != 0) {
		snprintf(err, len, "elv_complete returned %d", ret);
		return -1;
	}
	x->busy = 0;
	f->held[x->who]--;
	return 0;
}

static int fr_tune(struct elv_queue *q, const char *name, int64_t v, int required, char *err,
		   size_t len)
{
	int ret = elv_tunable_set(q, name, v);

	if (ret != 0 && (required || ret != ELV_ENOENT)) {
		snprintf(err, len, "elv_tunable_set(%s, %lld) returned %d", name, (long long)v, ret);
		return -1;
	}
	return 0;
}

int fair_run(const struct elv_policy *p, uint64_t seed, uint64_t rounds, int required,
	     struct fair_result *res)
{
	static const int64_t budgets[4] = { 512, 2048, 4096, 16384 };
	struct elv_config cfg;
	struct fr *f = calloc(1, sizeof(*f));
	void *mem = NULL;
	size_t need;
	uint64_t dispatches = 0, target, stalls = 0;
	int64_t mb;
	unsigned i;
	int ret = -1;

	memset(res, 0, sizeof(*res));
	if (!f) {
		snprintf(res->err, sizeof(res->err), "out of memory");
		return -1;
	}
	f->seed = seed * 0x2545F4914F6CDD1Dull + 1u;
	f->depth = 1u + (unsigned)(fr_rand(f) % 4u);
	f->max_rq = 8u * (1u + (uint32_t)(fr_rand(f) % 32u));
	mb = budgets[fr_rand(f) % 4u];
	memset(&cfg, 0, sizeof(cfg));
	cfg.dev.rotational = 1;
	cfg.dev.queue_depth = (uint16_t)f->depth;
	cfg.dev.max_sectors = 256;
	cfg.no_merges = 1;
	need = elv_queue_size(p, &cfg);
	mem = need ? aligned_alloc(64, (need + 63u) / 64u * 64u) : NULL;
	if (!mem || elv_queue_init(&f->q, mem, need, p, &cfg) != 0) {
		snprintf(res->err, sizeof(res->err), "no queue of %zu bytes", need);
		goto out;
	}
	f->now = fr_rand(f); /* any epoch: the clock may wrap during the run */
	if (fr_tune(f->q, "low_latency", 0, required, res->err, sizeof(res->err)) ||
	    fr_tune(f->q, "max_budget", mb, required, res->err, sizeof(res->err)))
		goto out;
	for (i = 0; i < 2; i++) {
		f->st[i].ioprio = ELV_PRIO(ELV_PRIO_BE, 4);
		if (elv_stream_init(f->q, &f->st[i], f->now) != 0) {
			snprintf(res->err, sizeof(res->err), "elv_stream_init failed");
			goto out;
		}
		f->pos[i] = (uint64_t)i << 40;
	}
	/* The default weight for both, one weight chosen for both, or two weights 1:1 to 1:8. */
	f->w[0] = f->w[1] = 0;
	switch (fr_rand(f) % 3u) {
	case 1:
		f->w[0] = f->w[1] = 1u + fr_rand(f) % 1000u;
		break;
	case 2:
		f->w[0] = 10u + fr_rand(f) % 116u;
		f->w[1] = f->w[0] * (1u + fr_rand(f) % 8u);
		break;
	default:
		break;
	}
	for (i = 0; i < 2 && f->w[i]; i++)
		if (elv_stream_set_weight(f->q, &f->st[i], (uint16_t)f->w[i]) != 0) {
			snprintf(res->err, sizeof(res->err), "elv_stream_set_weight failed");
			goto out;
		}
	if (!f->w[0])
		f->w[0] = f->w[1] = 1; /* equal: the ioprio-derived default of both */
	res->w[0] = f->w[0];
	res->w[1] = f->w[1];
	/* The largest budget a queue can be granted: the warm-up one or the ceiling. */
	res->budget = (uint64_t)(mb > FR_WARMUP_BUDGET ? mb : FR_WARMUP_BUDGET);
	res->bound = 3u * res->budget;
	target = rounds * res->budget;
	while (f->served[0] + f->served[1] < target) {
		struct elv_request *rq = NULL;
		uint64_t d;

		if (fr_fill(f, res->err, sizeof(res->err)))
			goto out;
		if (f->ndev < f->depth) {
			ret = elv_dispatch(f->q, f->now, 0, &rq);
			if (ret == 0) {
				struct fr_rq *x = (struct fr_rq *)(void *)rq;

				x->done_at = f->now + 20000u + 2000u * rq->nr_sectors;
				f->dev[f->ndev++] = x;
				f->served[x->who] += rq->nr_sectors;
				dispatches++;
				stalls = 0;
				d = fr_diff(f);
				if (d > res->max_diff)
					res->max_diff = d;
				if (d > res->bound) {
					snprintf(res->err, sizeof(res->err),
						 "%s: after %llu dispatches stream 0 (weight %llu) has "
						 "%llu sectors, stream 1 (weight %llu) %llu: %llu apart "
						 "at equal weight, more than the bound %llu "
						 "(3 budgets of %llu; depth %u, requests up to %u "
						 "sectors)", elv_policy_name(p),
						 (unsigned long long)dispatches,
						 (unsigned long long)f->w[0],
						 (unsigned long long)f->served[0],
						 (unsigned long long)f->w[1],
						 (unsigned long long)f->served[1],
						 (unsigned long long)d, (unsigned long long)res->bound,
						 (unsigned long long)res->budget, f->depth, f->max_rq);
					ret = -1;
					goto out;
				}
				continue;
			}
			if (ret != ELV_EAGAIN) {
				snprintf(res->err, sizeof(res->err), "elv_dispatch returned %d", ret);
				ret = -1;
				goto out;
			}
		}
		/* Nothing to dispatch now: the next completion or the policy's timer. */
		if (f->ndev) {
			uint64_t ev = elv_next_event(f->q);

			stalls = 0;
			if (ev != ELV_TIME_NEVER && elv_time_after(ev, f->now) &&
			    elv_time_before(ev, f->dev[0]->done_at))
				f->now = ev;
			else if (fr_complete(f, res->err, sizeof(res->err)))
				goto out;
		} else {
			uint64_t ev = elv_next_event(f->q);

			if (ev == ELV_TIME_NEVER || ++stalls > 100000u) {
				snprintf(res->err, sizeof(res->err), "%s: nothing in flight, %llu "
					 "requests queued, no dispatch and no timer",
					 elv_policy_name(p), (unsigned long long)(f->held[0] + f->held[1]));
				ret = -1;
				goto out;
			}
			if (elv_time_after(ev, f->now))
				f->now = ev;
			else
				f->now += 1000u;
		}
	}
	ret = 0;
out:
	res->dispatches = dispatches;
	res->served[0] = f->served[0];
	res->served[1] = f->served[1];
	if (f->q) {
		while (f->ndev)
			if (fr_complete(f, res->err, sizeof(res->err)))
				break;
		for (i = 0; i < FR_SLOTS; i++)
			if (f->r[i].busy)
				elv_cancel(f->q, &f->r[i].rq);
		for (i = 0; i < 2; i++)
			elv_stream_exit(f->q, &f->st[i], f->now);
		elv_queue_exit(f->q);
	}
	free(mem);
	free(f);
	return ret;
}
