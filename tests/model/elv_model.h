/*
 * Model-based checking of libelevator through its public API: a call language, a generator
 * that turns a byte source (a seeded PRNG, or a fuzzer's input) into calls, a reference model
 * of every request's state kept in plain arrays, and the checks run after every library call.
 *
 * Shared by tests/model/elvcheck.c and tests/fuzz/fuzz_queue.c; everything here is static.
 * Only public headers are used: the library is treated as a black box.
 *
 * The model: a pool of EM_SLOTS host I/O descriptors, each host-owned (EM_HOST), queued
 * (EM_QUEUED: in the policy or waiting behind a barrier), requeued (EM_REQUEUED) or on the
 * fake device (EM_FLIGHT). Every transition the library reports (a dispatch, a merge callback
 * naming an absorbed request, a drain callback, a return code) must match a transition the
 * model allows; anything else is a violation. See docs/reliability.md for the list.
 *
 * Time follows the library's contract: a free-running 64-bit nanosecond clock that may start
 * anywhere and wrap past 2^64 (episodes start near 2^64, near 2^63 or anywhere), compared by
 * serial-number arithmetic, and that may step back. The checks on time hold whether the
 * queue clamps a step back to the latest time it saw or carries on from there at the host's
 * pace: next events lie after the host's time, the queue's time advances no more than the
 * host's did forwards, and a request has waited at least what the host's clock says, less
 * how far behind its latest time the host was when it was added. Some episodes call back into the queue from every callback: each such call that would
 * change the queue must return ELV_EBUSY and change nothing, while read-only getters work. *
 * A third of the episodes put the QoS stage (qos.h) in front of the policy: every stream gets
 * a client when it registers, and calls set, change and remove throttles and mClock settings
 * (valid or not) under load. Then every request must still come out exactly once (dispatch,
 * cancel, drain), settings must be refused exactly when elv_throttle_check() or
 * elv_mclock_check() refuse them and change nothing then, held requests must show in
 * elv_next_event(), and a stream with an operations cap may have no more requests
 * dispatched than the leaky bucket lets through since its buckets last started empty (no
 * request released before its time). Checks that assume the policy sees every queued request
 * (the deadline bound, barrier order, due merges, drain order) are off in those episodes.
 */
#ifndef ELV_MODEL_H
#define ELV_MODEL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "elevator/elevator.h"
#include "../support/first_error.h"
#include "elevator/policy.h" /* public: struct elv_policy for names and counter counts */
#include "elevator/qos.h"

#if defined(__GNUC__) || defined(__clang__)
#define EM_MAYBE_UNUSED __attribute__((unused))
#else
#define EM_MAYBE_UNUSED
#endif

#ifndef EM_SLOTS
#define EM_SLOTS 64         /* host request descriptors (the fuzz target uses fewer) */
#endif
#define EM_STREAMS 6        /* host streams */
#define EM_GROUPS 3         /* host groups */
#define EM_MAX_POLS 32      /* policies a run may switch between (more is an error) */
#define EM_ERR_LEN 512
#define EM_SETTLE_WAITS 4096 /* idle periods a settle may sit through before "stuck" */

enum em_rq_state { EM_HOST = 0, EM_QUEUED, EM_REQUEUED, EM_FLIGHT };

/* Deadline levels, as documented for the deadline policy (none and best effort share BE). */
enum { EM_LVL_RT = 0, EM_LVL_BE = 1, EM_LVL_IDLE = 2, EM_LVL_UNKNOWN = 0xff };

/* The call language. Arguments a call does not use are zero. */
enum em_kind {
	EK_ADD,       /* slot, op, flags, prio, stream, sector, nr: set fields (host-owned), add */
	EK_DISPATCH,  /* aux: bit0 force, bit1 device busy (requeue at once) */
	EK_COMPLETE,  /* slot */
	EK_REQUEUE,   /* slot */
	EK_CANCEL,    /* slot */
	EK_DRAIN,     /* */
	EK_SWITCH,    /* aux: policy index (== count: NULL policy) */
	EK_TUN_SET,   /* aux: tunable index (== n: unknown name, n + 1: NULL name), val */
	EK_TUN_GET,   /* aux: tunable index (== n: unknown name) */
	EK_ST_INIT,   /* slot: stream, prio */
	EK_ST_EXIT,   /* slot: stream */
	EK_ST_PRIO,   /* slot: stream, prio */
	EK_TIME,      /* val: nanoseconds to advance */
	EK_WAIT,      /* advance to elv_next_event() if it is in the future, then dispatch */
	EK_SETTLE,    /* complete everything, dispatch everything without force, waiting */
	EK_BAD,       /* aux: which bad call (NULL arguments and friends) */
	EK_RECYCLE,   /* aux: policy; elv_queue_exit(), and if it succeeded a fresh init */
	EK_ST_WEIGHT, /* slot: stream, val: weight */
	EK_GROUP,     /* aux: 0 init, 1 exit, 2 set weight (slot: group, val: weight), 3 move
		       * stream slot into group prio - 1 (prio 0: the root) */
	EK_QOS,       /* aux: what (em_do_qos); slot: stream; the rest: settings */
	EK_NR
};

static const char *const em_kind_names[EK_NR] = {
	"add",     "dispatch", "complete", "requeue", "cancel",   "drain",  "switch",  "tunset",
	"tunget",  "stinit",   "stexit",   "stprio",  "time",     "wait",   "settle",  "bad",
	"recycle", "stweight", "group", "qos",
};

struct em_call {
	uint8_t kind;
	uint8_t slot;
	uint8_t aux;
	uint8_t op;
	uint8_t flags;
	uint8_t prio;
	uint8_t stream; /* 0: none, 1..EM_STREAMS: that stream, EM_STREAMS + 1: never registered */
	uint8_t pad;
	uint32_t nr;
	uint64_t sector;
	int64_t val;
};

/* Per-run configuration, chosen once from the byte source. */
struct em_config {
	uint8_t policy;    /* index into the policy list to start with */
	uint8_t depth;     /* fake device queue depth, 1..8 */
	uint8_t no_merges;
	uint8_t veto;      /* host allow_merge vetoes some merges */
	uint8_t tight;     /* queue memory sized for the start policy only */
	uint8_t prio_mix;  /* requests and streams use every class (else NONE/BE only) */
	uint8_t flash;     /* device traits: non-rotational (bit 0), zoned (bit 1) */
	uint8_t reenter;   /* every callback calls back into the queue */
	uint32_t max_sectors;
	uint32_t nr_requests;
	uint64_t start;    /* host clock when the queue is built */
	uint8_t qos;       /* QoS stage: 0 none; else attached, bits 1-3 depth, bit 4 allow */
};

struct em_slot {
	struct elv_request rq;   /* what the library sees (first: slot pointers are rq pointers) */
	struct elv_request snap; /* host-owned: copy the library must leave alone */
	uint8_t st;              /* enum em_rq_state */
	uint8_t level;           /* deadline level when it entered the queue */
	uint8_t direct;          /* entered the policy at elv_add() (no barrier in the way) */
	uint8_t tracked;         /* deadline bound: expired read being counted */
	uint8_t op, flags, prio; /* public fields it was added with */
	uint8_t absorbed_now;    /* absorbed during the current call */
	struct elv_stream *sp;
	uint64_t sector;         /* expected range (grows with merges) */
	uint64_t nr;
	uint64_t seq;            /* model arrival number */
	uint64_t lo_seq, hi_seq; /* arrival numbers of everything merged into it */
	uint64_t eff_seq;        /* place in time (older places are inherited by request merges) */
	uint64_t eff_time;       /* host time of that place */
	uint64_t eff_slack;      /* how far the host was behind its latest time then */
	uint32_t epoch;          /* deadline epoch when it entered the policy */
	uint64_t trk_budget, trk_used;
	uint8_t crowded;         /* may have left the back-merge hash (see em_mark_crowded()) */
};

struct em_policy {
	const struct elv_policy *p;
	uint8_t dl_bound; /* check the deadline expiry bound on it */
};

struct em {
	/* set up by the driver */
	struct em_policy pols[EM_MAX_POLS];
	unsigned npols;
	void *mem;         /* queue memory, 8-byte aligned */
	size_t mem_cap;    /* bytes at mem */
	int verbose;

	struct em_config c;
	struct elv_config cfg;
	struct elv_queue *q;
	size_t mem_len; /* bytes handed to elv_queue_init() */
	unsigned cur;   /* current policy */
	uint64_t now;
	/* Since the queue was built: the latest host time (serial order), and the sum of every
	 * forward step of the host's clock (the most the queue's time can have advanced). */
	uint64_t t_hi, t_fwd;
	uint64_t seq;
	struct em_slot s[EM_SLOTS];
	struct elv_stream streams[EM_STREAMS];
	struct elv_stream ssnap[EM_STREAMS];
	struct elv_stream ghost; /* never registered */
	uint8_t sreg[EM_STREAMS];
	struct elv_group groups[EM_GROUPS];
	uint8_t greg[EM_GROUPS];  /* registered */
	uint8_t sgrp[EM_STREAMS]; /* group + 1 of each registered stream, 0: the root */

	/* model counters, compared with elv_stats() after every call */
	uint64_t added, merged[4], disp[2], completed, requeued, cancelled, expired_seen;
	uint64_t t_insert, t_merge, t_disp, t_complete, t_requeue, t_cancel, t_expire;
	uint64_t t_idle_start, t_idle_stop;
	const struct elv_request *t_last[16]; /* request of the last event of each type */
	uint8_t t_idling;

	/* the call in progress */
	int adding;             /* slot being added, or -1 */
	int in_kind;            /* em_kind of the call in progress */
	int release_excl;       /* slot of the barrier whose release a merge may belong to, or -1 */
	int release_merges;     /* merges of held requests seen during this call */
	uint64_t drain_last;    /* drain order */
	int drain_phase;
	int drain_n;
	uint64_t pending_ev;

	/* deadline bound */
	uint32_t dl_epoch;
	int64_t dl_fb, dl_ws, dl_rexp;
	uint8_t dl_valid;

	uint64_t ops;
	uint64_t bound_checks; /* expired reads whose bound was verified */
	uint64_t waits;        /* idle periods followed through elv_next_event() */
	uint64_t merges_due;   /* adds that had to back-merge (and did) */
	uint64_t wraps;        /* times the host clock crossed 2^64 */
	uint64_t backsteps;    /* times the host clock stepped back */
	uint64_t reenters;     /* calls from inside a callback refused with ELV_EBUSY */
	uint64_t joins;        /* streams moved into a group */
	unsigned reenter_n;    /* which call the next callback tries */
	int in_reenter;
	struct elv_request reent_rq, reent_snap; /* a valid request a callback tries to add */
	/* the QoS stage (em_config::qos): a client per stream, attached at elv_stream_init() */
	struct elv_qos qos;
	uint8_t qos_on;
	struct elv_qos_client qc[EM_STREAMS];
	uint8_t qc_on[EM_STREAMS];
	/* A stream with an operations cap (bucket mode): since its buckets last started empty
	 * (t_fwd then), requests dispatched, and those already past the throttle then. */
	double thr_avg[EM_STREAMS], thr_cap[EM_STREAMS];
	uint64_t thr_fwd0[EM_STREAMS], thr_n[EM_STREAMS], thr_slack[EM_STREAMS];
	uint64_t qos_checks;   /* dispatches checked against a cap */
	uint64_t qos_sets;     /* settings changed with requests held */

	int failed;
	char err[EM_ERR_LEN];
};

/* ---- failures -------------------------------------------------------------------------- */

#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 2, 3)))
#endif
static void em_fail(struct em *m, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	elv_first_error(&m->failed, m->err, sizeof(m->err), fmt, ap);
	va_end(ap);
}

/* Is @name in the comma-separated list @list (NULL: an empty one)? */
static int em_listed(const char *list, const char *name)
{
	size_t n = strlen(name);

	while (list && *list) {
		if (strncmp(list, name, n) == 0 && (list[n] == ',' || list[n] == 0))
			return 1;
		list = strchr(list, ',');
		if (list)
			list++;
	}
	return 0;
}

/* ---- time ------------------------------------------------------------------------------ */

/* Serial-number order of 64-bit times: @a is later than @b. */
static int em_after(uint64_t a, uint64_t b)
{
	return (int64_t)(a - b) > 0;
}

static uint64_t em_tmax(uint64_t a, uint64_t b)
{
	return em_after(a, b) ? a : b;
}

/* The host clock moves to @t (forwards, backwards, or across 2^64). */
static void em_set_now(struct em *m, uint64_t t)
{
	if (em_after(t, m->now)) {
		m->wraps += t < m->now;
		m->t_fwd += t - m->now;
	} else if (t != m->now) {
		m->backsteps++;
	}
	m->now = t;
	m->t_hi = em_tmax(m->t_hi, t);
}

/* A fresh queue: it has seen no time yet. */
static void em_clock_reset(struct em *m)
{
	m->t_hi = m->now;
	m->t_fwd = 0;
}

/* ---- small helpers --------------------------------------------------------------------- */

static struct em_slot *em_slot_of(struct em *m, const void *p)
{
	uintptr_t a = (uintptr_t)p, base = (uintptr_t)(void *)m->s;
	size_t off;

	if (a < base || a >= base + sizeof(m->s))
		return NULL;
	off = (size_t)(a - base);
	if (off % sizeof(struct em_slot) != 0)
		return NULL;
	return &m->s[off / sizeof(struct em_slot)];
}

static int em_idx(const struct em *m, const struct em_slot *s)
{
	return (int)(s - m->s);
}

static int em_barrier(const struct em_slot *s)
{
	return (s->flags & ELV_RQ_BARRIER) != 0;
}

static int em_mergeable(const struct em_slot *s)
{
	return s->op != ELV_OP_FLUSH &&
	       !(s->flags & (ELV_RQ_BARRIER | ELV_RQ_NOMERGE | ELV_RQ_FUA));
}

static int em_sync(const struct em_slot *s)
{
	return s->op == ELV_OP_READ || (s->flags & ELV_RQ_SYNC) != 0;
}

static uint8_t em_eff_prio(uint8_t prio, const struct elv_stream *sp)
{
	if (ELV_PRIO_CLASS(prio) != ELV_PRIO_NONE)
		return prio;
	if (sp && ELV_PRIO_CLASS(sp->ioprio) != ELV_PRIO_NONE)
		return sp->ioprio;
	return ELV_PRIO(ELV_PRIO_BE, ELV_PRIO_DEFAULT_LEVEL);
}

static uint8_t em_level(uint8_t prio, const struct elv_stream *sp)
{
	static const uint8_t map[4] = { EM_LVL_BE, EM_LVL_RT, EM_LVL_BE, EM_LVL_IDLE };

	return map[ELV_PRIO_CLASS(em_eff_prio(prio, sp))];
}

static const struct elv_policy *em_policy(const struct em *m)
{
	return m->pols[m->cur].p;
}

/* A pending barrier: added, neither dispatched nor withdrawn. */
static int em_pending_barrier(const struct em_slot *s)
{
	return s->st == EM_QUEUED && em_barrier(s);
}

/* Is @s waiting behind a barrier (or a pending barrier itself)? @excl is ignored. */
static int em_held_excl(const struct em *m, const struct em_slot *s, int excl)
{
	int i;

	if (s->st != EM_QUEUED)
		return 0;
	if (em_barrier(s))
		return 1;
	for (i = 0; i < EM_SLOTS; i++)
		if (i != excl && em_pending_barrier(&m->s[i]) && m->s[i].seq < s->seq)
			return 1;
	return 0;
}

static int em_any_pending_barrier(const struct em *m)
{
	int i;

	for (i = 0; i < EM_SLOTS; i++)
		if (em_pending_barrier(&m->s[i]))
			return 1;
	return 0;
}

static unsigned em_count(const struct em *m, int st)
{
	unsigned i, n = 0;

	for (i = 0; i < EM_SLOTS; i++)
		n += m->s[i].st == st;
	return n;
}

static unsigned em_nr_queued(const struct em *m)
{
	return em_count(m, EM_QUEUED) + em_count(m, EM_REQUEUED);
}

/* The request goes back to the host: scribble on its public fields (as a host may), then
 * remember every byte; the library must not write it again until it is added. */
static void em_to_host(struct em *m, struct em_slot *s)
{
	s->st = EM_HOST;
	s->tracked = 0;
	s->absorbed_now = 0;
	s->rq.sector = 0xdead000000000000ull ^ s->seq;
	s->rq.nr_sectors = 0xdeadu;
	s->rq.op = 0xee;
	s->rq.flags = 0xff;
	s->rq.ioprio = 0xff;
	s->rq.stream = &m->ghost;
	memcpy(&s->snap, &s->rq, sizeof(s->rq));
}

/* ---- calls back into the queue from a callback ------------------------------------------ */

static void em_drain_noop(void *arg, struct elv_request *rq)
{
	(void)arg;
	(void)rq;
}

/* A slot in state @st other than @x and @y (the callback's own requests), or NULL. */
static struct em_slot *em_other(struct em *m, int st, const void *x, const void *y)
{
	int i;

	for (i = 0; i < EM_SLOTS; i++) {
		struct em_slot *s = &m->s[i];

		if (s->st == st && (const void *)&s->rq != x && (const void *)&s->rq != y &&
		    i != m->adding && !s->absorbed_now)
			return s;
	}
	return NULL;
}

/*
 * From inside a callback (@x, @y: the requests it names): one call that would change the
 * queue, in turn, must return ELV_EBUSY and change nothing; the read-only getters answer.
 */
static void em_reenter(struct em *m, const void *x, const void *y)
{
	struct elv_stats before, after;
	struct elv_request *out = NULL;
	const struct elv_policy *pol;
	const struct elv_tunable *t;
	struct em_slot *s;
	unsigned nt = 0, kind, i;
	int64_t v = 0;
	int ret = ELV_EBUSY;
	const char *what = NULL;

	if (!m->c.reenter || m->in_reenter || m->failed)
		return;
	m->in_reenter = 1;
	pol = elv_queue_policy(m->q);
	if (elv_stats(m->q, &before) != 0 || pol == NULL) {
		em_fail(m, "read-only getters fail inside a callback");
		m->in_reenter = 0;
		return;
	}
	(void)elv_next_event(m->q);
	kind = m->reenter_n++ % 12u;
	switch (kind) {
	case 0:
		ret = elv_add(m->q, &m->reent_rq, m->now);
		what = "elv_add";
		break;
	case 1:
		ret = elv_dispatch(m->q, m->now, 0, &out);
		what = "elv_dispatch";
		if (out != NULL)
			em_fail(m, "elv_dispatch from a callback handed out a request");
		break;
	case 2:
	case 3:
		s = em_other(m, EM_FLIGHT, x, y);
		if (s && kind == 2) {
			ret = elv_complete(m->q, &s->rq, m->now);
			what = "elv_complete";
		} else if (s) {
			ret = elv_requeue(m->q, &s->rq, m->now);
			what = "elv_requeue";
		}
		break;
	case 4:
		s = em_other(m, EM_QUEUED, x, y);
		if (!s)
			s = em_other(m, EM_REQUEUED, x, y);
		if (s) {
			ret = elv_cancel(m->q, &s->rq);
			what = "elv_cancel";
		}
		break;
	case 5:
		ret = elv_drain(m->q, em_drain_noop, m);
		what = "elv_drain";
		break;
	case 6:
		ret = elv_switch(m->q, pol, m->now);
		what = "elv_switch";
		break;
	case 7:
		t = elv_policy_tunables(pol, &nt);
		if (nt > 0) {
			if (elv_tunable_get(m->q, t[0].name, &v) != 0)
				em_fail(m, "elv_tunable_get fails inside a callback");
			ret = elv_tunable_set(m->q, t[0].name, v);
			what = "elv_tunable_set";
		}
		break;
	case 8:
	case 9:
		for (i = 0; i < EM_STREAMS && m->sreg[i] == (kind == 8); i++)
			;
		if (i < EM_STREAMS && kind == 8) {
			ret = elv_stream_init(m->q, &m->streams[i], m->now);
			what = "elv_stream_init";
		} else if (i < EM_STREAMS) {
			ret = elv_stream_set_prio(m->q, &m->streams[i], m->streams[i].ioprio);
			what = "elv_stream_set_prio";
		}
		break;
	case 10:
		ret = elv_queue_exit(m->q);
		what = "elv_queue_exit";
		break;
	default:
		for (i = 0; i < EM_STREAMS && !m->sreg[i]; i++)
			;
		if (i < EM_STREAMS) {
			ret = elv_stream_exit(m->q, &m->streams[i], m->now);
			what = "elv_stream_exit";
		}
		break;
	}
	if (what && ret != ELV_EBUSY)
		em_fail(m, "%s from inside a callback returned %d, not ELV_EBUSY", what, ret);
	if (elv_stats(m->q, &after) != 0 || memcmp(&before, &after, sizeof(after)) != 0)
		em_fail(m, "%s from inside a callback changed the queue's counters",
			what ? what : "a read-only getter");
	if (memcmp(&m->reent_rq, &m->reent_snap, sizeof(m->reent_rq)) != 0)
		em_fail(m, "elv_add from inside a callback wrote the request it refused");
	if (what)
		m->reenters++;
	m->in_reenter = 0;
}

/* ---- library callbacks ----------------------------------------------------------------- */

static int em_veto_allows(const struct em *m, uint64_t lo_sector, uint64_t hi_sector)
{
	if (!m->c.veto)
		return 1;
	return ((lo_sector ^ hi_sector) >> 3) % 5u != 0;
}

static int em_cb_allow(void *ctx, const struct elv_request *rq, const struct elv_request *next,
		       enum elv_merge_kind kind)
{
	struct em *m = ctx;
	struct em_slot *a = em_slot_of(m, rq), *b = em_slot_of(m, next);

	if (!a || !b || a == b || kind < ELV_MERGE_BACK || kind > ELV_MERGE_REQ) {
		em_fail(m, "allow_merge: bad arguments (rq %p next %p kind %d)", (const void *)rq,
			(const void *)next, (int)kind);
		return 0;
	}
	em_reenter(m, rq, next);
	return em_veto_allows(m, rq->sector, next->sector);
}

/*
 * The host's positioning-time estimate (sptf, asptf): asked only about requests the policy
 * holds, it calls back into the queue like every callback, and answers a figure that depends
 * on the sector and the time but not monotonically on distance, so that SPTF's choices differ
 * from SSTF's.
 */
static uint64_t em_cb_position(void *ctx, const struct elv_request *rq, uint64_t now)
{
	struct em *m = ctx;
	struct em_slot *s = em_slot_of(m, rq);

	if (!s || s->st != EM_QUEUED) {
		em_fail(m, "position_time: asked about a request the policy does not hold");
		return 0;
	}
	em_reenter(m, rq, NULL);
	return (rq->sector * 2654435761u + now) % 20000000u;
}

static int em_release_held(const struct em *m, const struct em_slot *s)
{
	/* A held request may enter the policy (and merge) only while its barrier goes. */
	return m->release_excl >= 0 && s->st == EM_QUEUED && !em_barrier(s) &&
	       em_held_excl(m, s, -1) && !em_held_excl(m, s, m->release_excl);
}

static void em_check_merge(struct em *m, struct em_slot *into, struct em_slot *ab, int kind)
{
	const struct em_slot *lo = kind == ELV_MERGE_FRONT ? ab : into;
	const struct em_slot *hi = kind == ELV_MERGE_FRONT ? into : ab;
	uint64_t len = into->nr + ab->nr, smin, smax;
	int i, ia = em_idx(m, ab), ii = em_idx(m, into);

	if (m->c.no_merges)
		em_fail(m, "merge %d<-%d while merging is disabled", ii, ia);
	if (!em_mergeable(into) || !em_mergeable(ab))
		em_fail(m, "merge %d<-%d of an unmergeable request (flush, barrier, FUA, nomerge)",
			ii, ia);
	if (into->op != ab->op || em_sync(into) != em_sync(ab))
		em_fail(m, "merge %d<-%d across operations or sync classes", ii, ia);
	if (lo->sector + lo->nr != hi->sector)
		em_fail(m, "merge %d<-%d (kind %d) of non-contiguous ranges %llu+%llu, %llu+%llu",
			ii, ia, kind, (unsigned long long)lo->sector, (unsigned long long)lo->nr,
			(unsigned long long)hi->sector, (unsigned long long)hi->nr);
	if (len > UINT32_MAX || (m->cfg.dev.max_sectors && len > m->cfg.dev.max_sectors))
		em_fail(m, "merge %d<-%d makes %llu sectors (max_sectors %u)", ii, ia,
			(unsigned long long)len, m->cfg.dev.max_sectors);
	if (em_eff_prio(into->prio, into->sp) != em_eff_prio(ab->prio, ab->sp))
		em_fail(m, "merge %d<-%d across I/O priorities", ii, ia);
	if (!em_veto_allows(m, lo->sector, hi->sector))
		em_fail(m, "merge %d<-%d that the host's allow_merge refused", ii, ia);
	if (into->rq.sector != into->sector || into->rq.nr_sectors != into->nr)
		em_fail(m, "merge into %d whose range is %llu+%u, expected %llu+%llu", ii,
			(unsigned long long)into->rq.sector, into->rq.nr_sectors,
			(unsigned long long)into->sector, (unsigned long long)into->nr);
	/* Nothing may merge across a barrier that is still pending. */
	smin = into->lo_seq < ab->lo_seq ? into->lo_seq : ab->lo_seq;
	smax = into->hi_seq > ab->hi_seq ? into->hi_seq : ab->hi_seq;
	for (i = 0; i < EM_SLOTS; i++) {
		const struct em_slot *b = &m->s[i];

		/* (With the QoS stage, barrier order starts when a request leaves it.) */
		if (i != m->release_excl && em_pending_barrier(b) && b->seq > smin &&
		    b->seq < smax && !m->qos_on)
			em_fail(m, "merge %d<-%d across pending barrier %d", ii, ia, i);
	}
}

static void em_cb_merge(void *ctx, struct elv_request *rq, struct elv_request *absorbed,
			enum elv_merge_kind kind)
{
	struct em *m = ctx;
	struct em_slot *into = em_slot_of(m, rq), *ab = em_slot_of(m, absorbed);
	int k = (int)kind, ab_ok, into_ok;

	if (!into || !ab || into == ab || k < ELV_MERGE_BACK || k > ELV_MERGE_REQ) {
		em_fail(m, "merge callback: bad arguments (into %p absorbed %p kind %d)",
			(void *)rq, (void *)absorbed, k);
		return;
	}
	em_reenter(m, rq, absorbed);
	/* (A barrier the QoS stage holds keeps nothing behind it: its order starts when it
	 * leaves the stage.) */
	into_ok = into->st == EM_QUEUED && (!em_held_excl(m, into, -1) || em_release_held(m, into) ||
					    m->qos_on);
	if (k == ELV_MERGE_REQ)
		ab_ok = ab->st == EM_QUEUED &&
			(!em_held_excl(m, ab, m->release_excl) || m->qos_on);
	else
		ab_ok = em_idx(m, ab) == m->adding || em_release_held(m, ab) ||
			/* released by the QoS stage, which merges it on its way out */
			(m->qos_on && ab->st == EM_QUEUED);
	if (!into_ok || !ab_ok) {
		em_fail(m, "merge %d<-%d (kind %d): survivor state %d, absorbed state %d not "
			   "allowed here", em_idx(m, into), em_idx(m, ab), k, into->st, ab->st);
		return;
	}
	if (k != ELV_MERGE_REQ && em_idx(m, ab) != m->adding)
		m->release_merges++;
	em_check_merge(m, into, ab, k);
	if (k == ELV_MERGE_FRONT)
		into->sector = ab->sector;
	into->nr += ab->nr;
	if (ab->lo_seq < into->lo_seq)
		into->lo_seq = ab->lo_seq;
	if (ab->hi_seq > into->hi_seq)
		into->hi_seq = ab->hi_seq;
	if (k == ELV_MERGE_REQ && ab->eff_seq < into->eff_seq) {
		into->eff_seq = ab->eff_seq;
		into->eff_time = ab->eff_time;
		into->eff_slack = ab->eff_slack;
	}
	m->merged[k]++;
	/* The library is done with it before the callback: the host may scribble on it now,
	 * and the library must not touch it again. */
	em_to_host(m, ab);
	ab->absorbed_now = 1;
}

static void em_cb_trace(void *ctx, const struct elv_trace_event *ev)
{
	struct em *m = ctx;
	int needs_rq = ev->type != ELV_TRACE_IDLE_START && ev->type != ELV_TRACE_IDLE_STOP;

	if (needs_rq && !em_slot_of(m, ev->rq)) {
		em_fail(m, "trace event %u without a valid request", ev->type);
		return;
	}
	em_reenter(m, ev->rq, ev->other);
	if (ev->type < 16u)
		m->t_last[ev->type] = ev->rq;
	switch (ev->type) {
	case ELV_TRACE_INSERT: m->t_insert++; break;
	case ELV_TRACE_MERGE:
		m->t_merge++;
		if (!em_slot_of(m, ev->other))
			em_fail(m, "merge trace event without the absorbed request");
		break;
	case ELV_TRACE_DISPATCH: m->t_disp++; break;
	case ELV_TRACE_COMPLETE: m->t_complete++; break;
	case ELV_TRACE_REQUEUE: m->t_requeue++; break;
	case ELV_TRACE_CANCEL: m->t_cancel++; break;
	case ELV_TRACE_EXPIRE: m->t_expire++; break;
	case ELV_TRACE_IDLE_START:
		if (m->t_idling)
			em_fail(m, "idle start while idling");
		m->t_idling = 1;
		m->t_idle_start++;
		break;
	case ELV_TRACE_IDLE_STOP:
		if (!m->t_idling)
			em_fail(m, "idle stop while not idling");
		m->t_idling = 0;
		m->t_idle_stop++;
		break;
	default: em_fail(m, "unknown trace event type %u", ev->type); break;
	}
}

static void em_cb_drain(void *arg, struct elv_request *rq)
{
	struct em *m = arg;
	struct em_slot *s = em_slot_of(m, rq);

	if (!s || (s->st != EM_QUEUED && s->st != EM_REQUEUED)) {
		em_fail(m, "drain returned %p, which is not a queued request (state %d)",
			(void *)rq, s ? s->st : -1);
		return;
	}
	em_reenter(m, rq, NULL);
	/*
	 * Queued requests in arrival order. Requeued ones are not ordered here: the core returns
	 * them first, the header promises arrival order for all (see docs/reliability.md).
	 */
	/* The stage's held requests come back after the policy's, in their own order. */
	if (s->st != EM_REQUEUED && !m->qos_on) {
		if (m->drain_phase && s->eff_seq <= m->drain_last)
			em_fail(m, "drain returned request %d out of arrival order", em_idx(m, s));
		m->drain_phase = 1;
		m->drain_last = s->eff_seq;
	}
	m->drain_n++;
	m->cancelled++;
	em_to_host(m, s);
}


/* ---- checks after every library call --------------------------------------------------- */

static void em_check_stats(struct em *m)
{
	struct elv_stats st;
	uint64_t merged = m->merged[1] + m->merged[2] + m->merged[3];
	uint64_t disp = m->disp[0] + m->disp[1];
	unsigned queued = em_nr_queued(m), flight = em_count(m, EM_FLIGHT);

	if (elv_stats(m->q, &st) != 0) {
		em_fail(m, "elv_stats failed on a live queue");
		return;
	}
	if (st.added != m->added || st.merged_back != m->merged[1] ||
	    st.merged_front != m->merged[2] || st.merged_req != m->merged[3] ||
	    st.dispatched[0] != m->disp[0] || st.dispatched[1] != m->disp[1] ||
	    st.completed != m->completed || st.requeued != m->requeued ||
	    st.cancelled != m->cancelled || st.queued != queued || st.in_flight != flight) {
		em_fail(m, "stats disagree with the model: added %llu/%llu merged %llu,%llu,%llu/"
			   "%llu,%llu,%llu dispatched %llu,%llu/%llu,%llu completed %llu/%llu "
			   "requeued %llu/%llu cancelled %llu/%llu queued %u/%u in_flight %u/%u "
			   "(library/model)",
			(unsigned long long)st.added, (unsigned long long)m->added,
			(unsigned long long)st.merged_back, (unsigned long long)st.merged_front,
			(unsigned long long)st.merged_req, (unsigned long long)m->merged[1],
			(unsigned long long)m->merged[2], (unsigned long long)m->merged[3],
			(unsigned long long)st.dispatched[0], (unsigned long long)st.dispatched[1],
			(unsigned long long)m->disp[0], (unsigned long long)m->disp[1],
			(unsigned long long)st.completed, (unsigned long long)m->completed,
			(unsigned long long)st.requeued, (unsigned long long)m->requeued,
			(unsigned long long)st.cancelled, (unsigned long long)m->cancelled,
			st.queued, queued, st.in_flight, flight);
		return;
	}
	/* Nothing lost: every request added is absorbed, withdrawn, done, or still held. */
	if (st.added != st.merged_back + st.merged_front + st.merged_req + st.cancelled +
				st.completed + st.queued + st.in_flight)
		em_fail(m, "stats do not add up: added %llu != merged + cancelled + completed + "
			   "queued + in_flight", (unsigned long long)st.added);
	if (st.expired < m->expired_seen || st.expired > disp || st.expired != m->t_expire)
		em_fail(m, "expired count %llu inconsistent (dispatched %llu, traced %llu)",
			(unsigned long long)st.expired, (unsigned long long)disp,
			(unsigned long long)m->t_expire);
	m->expired_seen = st.expired;
	/* Idle periods never overlap: together they cannot outlast the queue's time, which
	 * advances no more than the host's clock went forwards. */
	if (st.idle_ns > m->t_fwd)
		em_fail(m, "idle_ns %llu exceeds the %llu ns the queue has existed",
			(unsigned long long)st.idle_ns, (unsigned long long)m->t_fwd);
	if (st.idle_count != m->t_idle_start)
		em_fail(m, "idle_count %llu but %llu idle-start events",
			(unsigned long long)st.idle_count, (unsigned long long)m->t_idle_start);
	if (m->t_insert != m->added || m->t_merge != merged || m->t_disp != disp ||
	    m->t_complete != m->completed || m->t_requeue != m->requeued ||
	    m->t_cancel != m->cancelled)
		em_fail(m, "trace events disagree with the counters");
}

static void em_check_slots(struct em *m)
{
	int i;

	for (i = 0; i < EM_SLOTS; i++) {
		struct em_slot *s = &m->s[i];

		s->absorbed_now = 0;
		if (s->st == EM_HOST) {
			if (memcmp(&s->rq, &s->snap, sizeof(s->rq)) != 0)
				em_fail(m, "request %d changed while the host owned it", i);
		} else if (s->rq.sector != s->sector || s->rq.nr_sectors != s->nr ||
			   s->rq.op != s->op || s->rq.flags != s->flags ||
			   s->rq.ioprio != s->prio || s->rq.stream != s->sp) {
			em_fail(m, "request %d (state %d) has fields %llu+%u op %u flags 0x%x prio "
				   "0x%x, expected %llu+%llu op %u flags 0x%x prio 0x%x", i, s->st,
				(unsigned long long)s->rq.sector, s->rq.nr_sectors, s->rq.op,
				s->rq.flags, s->rq.ioprio, (unsigned long long)s->sector,
				(unsigned long long)s->nr, s->op, s->flags, s->prio);
		}
	}
	for (i = 0; i < EM_STREAMS; i++)
		if (!m->sreg[i] && memcmp(&m->streams[i], &m->ssnap[i], sizeof(m->ssnap[i])) != 0)
			em_fail(m, "stream %d changed while not registered", i);
}

/* After every library call. */
static void em_post(struct em *m)
{
	int rc = elv_queue_check(m->q);

	if (rc != 0)
		em_fail(m, "elv_queue_check() returned %d", rc);
	em_check_slots(m);
	em_check_stats(m);
}

/* ---- deadline expiry bound ------------------------------------------------------------- */

static void em_dl_clear(struct em *m)
{
	int i;

	for (i = 0; i < EM_SLOTS; i++)
		m->s[i].tracked = 0;
}

/* The policy or its tunables changed: requests queued now entered under other rules. */
static void em_dl_reload(struct em *m)
{
	int64_t v[3];

	m->dl_epoch++;
	em_dl_clear(m);
	m->dl_valid = 0;
	if (!m->pols[m->cur].dl_bound)
		return;
	if (elv_tunable_get(m->q, "read_expire", &v[0]) != 0 ||
	    elv_tunable_get(m->q, "fifo_batch", &v[1]) != 0 ||
	    elv_tunable_get(m->q, "writes_starved", &v[2]) != 0)
		return;
	m->dl_rexp = v[0] * (int64_t)ELV_NSEC_PER_MSEC;
	m->dl_fb = v[1];
	m->dl_ws = v[2];
	/* With writes_starved 0 a steady stream of writes may starve reads: no bound. */
	m->dl_valid = v[1] >= 1 && v[2] >= 1;
}

/* The bound is sound with one priority level queued (no aging pass, no preemption). */
static int em_dl_active(const struct em *m)
{
	unsigned i, lvl = EM_LVL_UNKNOWN;

	/* The policy never saw what the QoS stage holds: its deadlines run from the release. */
	if (!m->dl_valid || m->qos_on)
		return 0;
	for (i = 0; i < EM_SLOTS; i++) {
		const struct em_slot *s = &m->s[i];

		if (s->st == EM_HOST || s->st == EM_FLIGHT)
			continue;
		if (s->level == EM_LVL_UNKNOWN || (lvl != EM_LVL_UNKNOWN && s->level != lvl))
			return 0;
		lvl = s->level;
	}
	return 1;
}

/*
 * Start counting for the read at the head of the read FIFO once it has expired: it must be
 * dispatched within 2 * fifo_batch + 1 dispatches from the policy. Expiry is looked at when
 * a batch starts, so the batch running goes on (at most fifo_batch more), then at most one
 * write batch that writes_starved forces, then a read batch that starts at the expired head
 * (docs/reliability.md derives the bound). Reads behind it are counted when they become the
 * head: a deadline without expiry sweeps in sector order and misses this bound.
 */
static void em_dl_before(struct em *m)
{
	struct em_slot *head = NULL;
	unsigned i;

	if (!em_dl_active(m)) {
		em_dl_clear(m);
		return;
	}
	for (i = 0; i < EM_SLOTS; i++) {
		struct em_slot *s = &m->s[i];

		/* Reads in the policy: the rules have not changed since counting started
		 * (em_dl_reload() stops every count when they do). */
		if (s->st != EM_QUEUED || s->op != ELV_OP_READ || em_held_excl(m, s, -1))
			continue;
		if (!head || s->eff_seq < head->eff_seq)
			head = s;
	}
	if (!head || head->tracked)
		return;
	/* The least it can have waited in the queue's time (see the top of this file). */
	if ((int64_t)(m->now - head->eff_time) < 0 ||
	    (uint64_t)(m->now - head->eff_time) - head->eff_slack < (uint64_t)m->dl_rexp ||
	    (uint64_t)(m->now - head->eff_time) < head->eff_slack)
		return;
	head->tracked = 1;
	head->trk_used = 0;
	head->trk_budget = 2u * (uint64_t)m->dl_fb + 1u;
}

static void em_dl_after(struct em *m, const struct em_slot *out)
{
	int i;

	for (i = 0; i < EM_SLOTS; i++) {
		struct em_slot *s = &m->s[i];

		if (!s->tracked)
			continue;
		s->trk_used++;
		if (s == out) {
			s->tracked = 0;
			m->bound_checks++;
		} else if (s->trk_used >= s->trk_budget) {
			em_fail(m, "expired read %d at the head of the FIFO (waiting %lld ns, "
				   "read_expire %lld ns) not dispatched within %llu dispatches", i,
				(long long)(m->now - s->eff_time), (long long)m->dl_rexp,
				(unsigned long long)s->trk_budget);
			s->tracked = 0;
		}
	}
}

/* ---- executing calls ------------------------------------------------------------------- */

static struct elv_stream *em_stream_ptr(struct em *m, unsigned code)
{
	if (code == 0)
		return NULL;
	if (code <= EM_STREAMS)
		return &m->streams[code - 1];
	return &m->ghost;
}

static int em_stream_registered(const struct em *m, const struct elv_stream *sp)
{
	int i;

	for (i = 0; i < EM_STREAMS; i++)
		if (sp == &m->streams[i])
			return m->sreg[i];
	return 0;
}

static int em_add_expect(const struct em *m, const struct em_slot *s)
{
	const struct elv_request *rq = &s->rq;

	if (s->st != EM_HOST)
		return ELV_EBUSY;
	if (rq->op > ELV_OP_FLUSH || (rq->flags & ~0x3fu) || rq->ioprio >= 32u)
		return ELV_EINVAL;
	if (rq->nr_sectors == 0 && rq->op != ELV_OP_FLUSH)
		return ELV_EINVAL;
	if (rq->nr_sectors > UINT64_MAX - rq->sector)
		return ELV_EOVERFLOW;
	if (rq->stream && !em_stream_registered(m, rq->stream))
		return ELV_EINVAL;
	return 0;
}

/* The last trace event of @type must name @rq (the call just made was traced). */
static void em_traced(struct em *m, unsigned type, const struct em_slot *s)
{
	if (m->t_last[type] != &s->rq)
		em_fail(m, "trace event %u names %p, not request %d", type,
			(const void *)m->t_last[type], em_idx(m, s));
}

/* Run a call that must fail with @want and change nothing. */
static void em_expect_nochange(struct em *m, const struct elv_stats *before, const char *what)
{
	struct elv_stats after;

	if (elv_stats(m->q, &after) != 0 || memcmp(before, &after, sizeof(after)) != 0)
		em_fail(m, "%s failed but changed the queue's counters", what);
}

static void em_ret(struct em *m, int got, int want, const char *what)
{
	if (got != want)
		em_fail(m, "%s returned %d, expected %d", what, got, want);
}

/*
 * The library keeps at most 8 requests on a chain of its back-merge hash and forgets the one it
 * got first when a chain grows longer (elevator.h, nr_requests): a request it forgot is no
 * longer found for a back merge. Which requests share a chain is not public, so once 9 could
 * be hashed at once (the request being added and 8 queued), every queued request is marked as
 * possibly forgotten until it leaves the queue; a back merge onto it is then allowed, not due.
 */
static void em_mark_crowded(struct em *m)
{
	int i, n = 1;

	for (i = 0; i < EM_SLOTS; i++)
		n += m->s[i].st == EM_QUEUED;
	if (n <= 8)
		return;
	for (i = 0; i < EM_SLOTS; i++)
		if (m->s[i].st == EM_QUEUED)
			m->s[i].crowded = 1;
}

/*
 * Must adding @s back-merge? The core looks up every queued request ending where @s starts;
 * when one may take it by every rule (and the policy has no veto of its own), it merges,
 * unless the cap on hash chains may have made the library forget it (em_mark_crowded()).
 */
static int em_back_merge_due(const struct em *m, const struct em_slot *s)
{
	int i;

	/* A request the QoS stage holds (the new one, or the one before it) merges with none. */
	if (m->c.no_merges || !em_mergeable(s) || em_any_pending_barrier(m) ||
	    em_policy(m)->allow_merge || m->qos_on)
		return 0;
	for (i = 0; i < EM_SLOTS; i++) {
		const struct em_slot *x = &m->s[i];
		uint64_t len = x->nr + s->nr;

		if (x == s || x->st != EM_QUEUED || !em_mergeable(x) || x->crowded ||
		    x->sector + x->nr != s->sector)
			continue;
		if (x->op != s->op || em_sync(x) != em_sync(s) || len > UINT32_MAX ||
		    (m->cfg.dev.max_sectors && len > m->cfg.dev.max_sectors) ||
		    em_eff_prio(x->prio, x->sp) != em_eff_prio(s->prio, s->sp) ||
		    !em_veto_allows(m, x->sector, s->sector))
			continue;
		return 1;
	}
	return 0;
}

static void em_do_add(struct em *m, const struct em_call *c)
{
	struct em_slot *s = &m->s[c->slot % EM_SLOTS];
	int i = em_idx(m, s), want, ret, due = 0;
	struct elv_stats before;

	if (s->st == EM_HOST) {
		s->rq.sector = c->sector;
		s->rq.nr_sectors = c->nr;
		s->rq.op = c->op;
		s->rq.flags = c->flags;
		s->rq.ioprio = c->prio;
		s->rq.stream = em_stream_ptr(m, c->stream);
		memcpy(&s->snap, &s->rq, sizeof(s->rq));
	}
	want = em_add_expect(m, s);
	elv_stats(m->q, &before);
	if (want == 0) {
		s->op = c->op;
		s->flags = c->flags;
		s->prio = c->prio;
		s->sp = s->rq.stream;
		s->sector = c->sector;
		s->nr = c->nr;
		s->seq = s->lo_seq = s->hi_seq = s->eff_seq = m->seq++;
		s->eff_time = m->now;
		s->eff_slack = m->t_hi - m->now;
		s->level = em_level(c->prio, s->sp);
		s->direct = !em_barrier(s) && !em_any_pending_barrier(m);
		s->epoch = m->dl_epoch;
		s->tracked = 0;
		s->crowded = 0;
		s->st = EM_HOST;
		em_mark_crowded(m);
		due = em_back_merge_due(m, s);
		s->st = EM_QUEUED;
		m->added++;
	}
	m->adding = i;
	ret = elv_add(m->q, &s->rq, m->now);
	m->adding = -1;
	if (want != 0) {
		em_ret(m, ret, want, "elv_add");
		em_expect_nochange(m, &before, "elv_add");
	} else if (ret == 1) {
		if (!s->absorbed_now)
			em_fail(m, "elv_add of %d returned 1 but no merge absorbed it", i);
	} else if (ret == 0) {
		if (s->st != EM_QUEUED)
			em_fail(m, "elv_add of %d returned 0 but it was absorbed", i);
		else if (due)
			em_fail(m, "elv_add of %d missed a back merge onto a queued request", i);
	} else {
		em_fail(m, "elv_add of valid request %d returned %d", i, ret);
	}
	if (want == 0 && ret == 1 && due)
		m->merges_due++;
	if (want == 0 && (ret == 0 || ret == 1))
		em_traced(m, ELV_TRACE_INSERT, s);
	em_post(m);
}

static int em_min_pending_barrier(const struct em *m)
{
	int i, best = -1;

	for (i = 0; i < EM_SLOTS; i++)
		if (em_pending_barrier(&m->s[i]) && (best < 0 || m->s[i].seq < m->s[best].seq))
			best = i;
	return best;
}

/* Barriers are never passed, in either direction, by a first dispatch. */
static void em_check_barrier_order(struct em *m, const struct em_slot *out)
{
	int i, o = em_idx(m, out);

	/* Barrier order starts when a request leaves the stages (lib/core/stage.c). */
	if (m->qos_on)
		return;
	for (i = 0; i < EM_SLOTS; i++) {
		const struct em_slot *x = &m->s[i];

		if (x == out || x->st != EM_QUEUED)
			continue;
		if (em_barrier(out) && x->lo_seq < out->seq)
			em_fail(m, "barrier %d dispatched before request %d added ahead of it", o,
				i);
		if (em_barrier(x) && x->seq < out->hi_seq)
			em_fail(m, "request %d dispatched before barrier %d added ahead of it", o,
				i);
	}
}

static void em_do_requeue_slot(struct em *m, struct em_slot *s);

static unsigned em_stream_holds(const struct em *m, const struct elv_stream *sp);

static int em_stream_idx(const struct em *m, const struct elv_stream *sp)
{
	return sp >= m->streams && sp < m->streams + EM_STREAMS ? (int)(sp - m->streams) : -1;
}

/* Requests the QoS stage holds now, by its clients' counters (@mclock: those in mClock
 * only, else the throttles' only). */
static unsigned em_qos_held(struct em *m, int i, int mclock)
{
	struct elv_qos_client_stats st;
	unsigned n = 0, k;

	for (k = 0; k < EM_STREAMS; k++) {
		if (!m->qc_on[k] || (i >= 0 && (unsigned)i != k))
			continue;
		if (elv_qos_client_stats(m->q, &m->qc[k], &st) != 0) {
			em_fail(m, "elv_qos_client_stats of stream %u failed", k);
			continue;
		}
		if (st.held_throttle + st.held_mclock > em_stream_holds(m, &m->streams[k]))
			em_fail(m, "stream %u: the stage holds %u requests, the stream has %u", k,
				st.held_throttle + st.held_mclock,
				em_stream_holds(m, &m->streams[k]));
		n += mclock ? st.held_mclock : st.held_throttle;
	}
	return n;
}

/* No request of a capped stream goes before its time: a leaky bucket of capacity cap
 * draining at avg lets at most cap + 1 + avg * t requests through in t seconds (one more
 * for rounding), counted from when its buckets started empty. */
static void em_qos_check_release(struct em *m, const struct em_slot *s)
{
	int i = em_stream_idx(m, s->sp);
	double t, allowed;

	if (i < 0 || !m->qc_on[i] || m->thr_avg[i] <= 0 || s->op == ELV_OP_FLUSH)
		return;
	m->thr_n[i]++;
	m->qos_checks++;
	t = (double)(m->t_fwd - m->thr_fwd0[i]) / 1e9;
	allowed = m->thr_cap[i] + 2 + m->thr_avg[i] * t + (double)m->thr_slack[i];
	if ((double)m->thr_n[i] > allowed)
		em_fail(m, "stream %d: %llu requests released in %.9f s under a cap of %.0f/s "
			   "(burst %.1f, %llu already past it): released before their time", i,
			(unsigned long long)m->thr_n[i], t, m->thr_avg[i], m->thr_cap[i],
			(unsigned long long)m->thr_slack[i]);
}

/* Returns the dispatched slot, or NULL. */
static struct em_slot *em_do_dispatch(struct em *m, unsigned flags, int busy)
{
	struct elv_request *out = NULL;
	struct em_slot *s;
	unsigned queued = em_nr_queued(m), requeued = em_count(m, EM_REQUEUED);
	int ret, force = (flags & ELV_DISPATCH_FORCE) != 0;

	em_dl_before(m);
	m->release_excl = em_min_pending_barrier(m);
	m->release_merges = 0;
	ret = elv_dispatch(m->q, m->now, flags, &out);
	if (ret == ELV_EAGAIN) {
		m->release_excl = -1;
		if (m->release_merges && !m->qos_on)
			em_fail(m, "requests behind a barrier merged while nothing was dispatched");
		if (requeued)
			em_fail(m, "dispatch idled with %u requeued requests", requeued);
		else if (m->qos_on && queued && em_qos_held(m, -1, 0) + em_qos_held(m, -1, 1))
			; /* held by the stage: it says when in elv_next_event() (checked below) */
		else if (queued && force)
			em_fail(m, "forced dispatch returned EAGAIN with %u queued", queued);
		else if (queued && em_any_pending_barrier(m))
			em_fail(m, "dispatch idled while a barrier waits");
		if (queued && !em_count(m, EM_FLIGHT)) {
			uint64_t ev = elv_next_event(m->q);

			if (ev == ELV_TIME_NEVER || !em_after(ev, m->now))
				em_fail(m, "dispatch idles with %u queued and nothing in flight, "
					   "but the next event is %llu (now %llu)", queued,
					(unsigned long long)ev, (unsigned long long)m->now);
			m->pending_ev = ev;
		}
		em_post(m);
		return NULL;
	}
	if (ret != 0) {
		m->release_excl = -1;
		em_fail(m, "elv_dispatch returned %d", ret);
		em_post(m);
		return NULL;
	}
	s = em_slot_of(m, out);
	if (!s || (s->st != EM_QUEUED && s->st != EM_REQUEUED)) {
		m->release_excl = -1;
		em_fail(m, "dispatch returned %p, not a queued request (state %d)", (void *)out,
			s ? s->st : -1);
		em_post(m);
		return NULL;
	}
	if (requeued && s->st != EM_REQUEUED)
		em_fail(m, "dispatch returned %d ahead of %u requeued requests", em_idx(m, s),
			requeued);
	if (m->release_merges && em_idx(m, s) != m->release_excl && !m->qos_on)
		em_fail(m, "held requests merged, but barrier %d was not the one dispatched",
			m->release_excl);
	m->release_excl = -1;
	if (s->st == EM_QUEUED) {
		em_check_barrier_order(m, s);
		em_dl_after(m, s);
		em_qos_check_release(m, s);
	}
	s->st = EM_FLIGHT;
	s->tracked = 0;
	m->disp[s->op == ELV_OP_READ ? 0 : 1]++;
	em_traced(m, ELV_TRACE_DISPATCH, s);
	em_post(m);
	if (busy && !m->failed)
		em_do_requeue_slot(m, s);
	return s;
}

static void em_do_complete_slot(struct em *m, struct em_slot *s)
{
	int want = s->st == EM_FLIGHT ? 0 : ELV_EINVAL, ret;
	struct elv_stats before;

	elv_stats(m->q, &before);
	ret = elv_complete(m->q, &s->rq, m->now);
	em_ret(m, ret, want, "elv_complete");
	if (want == 0) {
		m->completed++;
		em_traced(m, ELV_TRACE_COMPLETE, s);
		em_to_host(m, s);
	} else {
		em_expect_nochange(m, &before, "elv_complete");
	}
	em_post(m);
}

static void em_do_requeue_slot(struct em *m, struct em_slot *s)
{
	int want = s->st == EM_FLIGHT ? 0 : ELV_EINVAL, ret;
	struct elv_stats before;

	elv_stats(m->q, &before);
	ret = elv_requeue(m->q, &s->rq, m->now);
	em_ret(m, ret, want, "elv_requeue");
	if (want == 0) {
		m->requeued++;
		s->st = EM_REQUEUED;
		em_traced(m, ELV_TRACE_REQUEUE, s);
	} else {
		em_expect_nochange(m, &before, "elv_requeue");
	}
	em_post(m);
}

static void em_do_cancel(struct em *m, struct em_slot *s)
{
	int ok = s->st == EM_QUEUED || s->st == EM_REQUEUED, ret;
	struct elv_stats before;

	elv_stats(m->q, &before);
	m->release_excl = em_pending_barrier(s) ? em_idx(m, s) : -1;
	m->release_merges = 0;
	ret = elv_cancel(m->q, &s->rq);
	m->release_excl = -1;
	em_ret(m, ret, ok ? 0 : ELV_EINVAL, "elv_cancel");
	if (ok) {
		m->cancelled++;
		if (!m->release_merges)
			em_traced(m, ELV_TRACE_CANCEL, s);
		em_to_host(m, s);
	} else {
		em_expect_nochange(m, &before, "elv_cancel");
	}
	em_post(m);
}

static void em_do_drain(struct em *m)
{
	int want = (int)em_nr_queued(m), ret, i;

	m->drain_phase = 0;
	m->drain_n = 0;
	m->drain_last = 0;
	ret = elv_drain(m->q, em_cb_drain, m);
	if (ret != want || m->drain_n != want)
		em_fail(m, "elv_drain returned %d and called back %d times, expected %d", ret,
			m->drain_n, want);
	for (i = 0; i < EM_SLOTS; i++)
		if (m->s[i].st == EM_QUEUED || m->s[i].st == EM_REQUEUED)
			em_fail(m, "elv_drain did not return queued request %d", i);
	em_post(m);
}

static void em_do_switch(struct em *m, unsigned aux)
{
	const struct elv_policy *p = aux < m->npols ? m->pols[aux].p : NULL;
	int want, ret;
	struct elv_stats before;

	if (!p)
		want = ELV_EINVAL;
	else
		want = elv_queue_size(p, &m->cfg) > m->mem_len ? ELV_ENOSPC : 0;
	elv_stats(m->q, &before);
	ret = elv_switch(m->q, p, m->now);
	em_ret(m, ret, want, "elv_switch");
	if (ret == 0 && want == 0) {
		m->cur = aux;
		em_dl_reload(m);
	} else if (want != 0) {
		em_expect_nochange(m, &before, "elv_switch");
	}
	if (elv_queue_policy(m->q) != em_policy(m))
		em_fail(m, "elv_queue_policy() is not the policy switched to");
	em_post(m);
}

static void em_do_tunset(struct em *m, unsigned aux, int64_t val)
{
	unsigned n = 0, idx;
	const struct elv_tunable *t = elv_policy_tunables(em_policy(m), &n);
	int64_t old = 0, now_v = 0;
	int want, ret;

	idx = aux % (n + 2u);
	if (idx == n + 1u) {
		em_ret(m, elv_tunable_set(m->q, NULL, val), ELV_EINVAL, "elv_tunable_set(NULL)");
	} else if (idx == n) {
		em_ret(m, elv_tunable_set(m->q, "no_such_tunable", val), ELV_ENOENT,
		       "elv_tunable_set(unknown)");
	} else {
		if (elv_tunable_get(m->q, t[idx].name, &old) != 0)
			em_fail(m, "tunable %s of the table is unknown to the queue", t[idx].name);
		want = val < t[idx].min || val > t[idx].max ? ELV_ERANGE : 0;
		ret = elv_tunable_set(m->q, t[idx].name, val);
		em_ret(m, ret, want, "elv_tunable_set");
		if (elv_tunable_get(m->q, t[idx].name, &now_v) != 0 ||
		    now_v != (want == 0 ? val : old))
			em_fail(m, "tunable %s reads %lld after setting %lld (ret %d, old %lld)",
				t[idx].name, (long long)now_v, (long long)val, ret, (long long)old);
		if (want == 0)
			em_dl_reload(m);
	}
	em_post(m);
}

static void em_do_tunget(struct em *m, unsigned aux)
{
	unsigned n = 0, idx;
	const struct elv_tunable *t = elv_policy_tunables(em_policy(m), &n);
	int64_t v = 0;

	idx = aux % (n + 1u);
	if (idx == n) {
		em_ret(m, elv_tunable_get(m->q, "no_such_tunable", &v), ELV_ENOENT,
		       "elv_tunable_get(unknown)");
	} else {
		em_ret(m, elv_tunable_get(m->q, t[idx].name, &v), 0, "elv_tunable_get");
		if (v < t[idx].min || v > t[idx].max)
			em_fail(m, "tunable %s = %lld outside [%lld, %lld]", t[idx].name,
				(long long)v, (long long)t[idx].min, (long long)t[idx].max);
	}
	em_post(m);
}

static unsigned em_stream_holds(const struct em *m, const struct elv_stream *sp)
{
	unsigned i, n = 0;

	for (i = 0; i < EM_SLOTS; i++)
		n += m->s[i].st != EM_HOST && m->s[i].sp == sp;
	return n;
}

static void em_do_stream(struct em *m, const struct em_call *c)
{
	unsigned i = c->slot % EM_STREAMS, j;
	struct elv_stream *sp = &m->streams[i];
	int ret, want;

	switch (c->kind) {
	case EK_ST_INIT:
		if (m->sreg[i]) {
			em_ret(m, elv_stream_init(m->q, sp, m->now), ELV_EBUSY, "elv_stream_init");
			break;
		}
		sp->ioprio = c->prio;
		m->ssnap[i] = *sp;
		want = c->prio >= 32u ? ELV_EINVAL : 0;
		ret = elv_stream_init(m->q, sp, m->now);
		em_ret(m, ret, want, "elv_stream_init");
		if (ret == 0)
			m->sreg[i] = 1;
		if (ret == 0 && m->qos_on) {
			memset(&m->qc[i], 0, sizeof(m->qc[i]));
			em_ret(m, elv_qos_stream_attach(m->q, sp, &m->qc[i], m->now), 0,
			       "elv_qos_stream_attach of a new stream");
			m->qc_on[i] = 1;
			m->thr_avg[i] = 0;
		}
		break;
	case EK_ST_EXIT:
		want = !m->sreg[i] ? ELV_EINVAL : em_stream_holds(m, sp) ? ELV_EBUSY : 0;
		ret = elv_stream_exit(m->q, sp, m->now);
		em_ret(m, ret, want, "elv_stream_exit");
		if (ret == 0) {
			m->sreg[i] = 0;
			m->sgrp[i] = 0; /* a retired stream leaves its group */
			m->qc_on[i] = 0; /* and its QoS client */
			m->thr_avg[i] = 0;
			m->ssnap[i] = *sp;
		}
		break;
	default: /* EK_ST_PRIO */
		want = m->sreg[i] && c->prio < 32u ? 0 : ELV_EINVAL;
		ret = elv_stream_set_prio(m->q, sp, c->prio);
		em_ret(m, ret, want, "elv_stream_set_prio");
		if (ret == 0 && sp->ioprio != c->prio)
			em_fail(m, "stream %u priority not changed", i);
		if (ret == 0) {
			/* Queued requests without their own class may now sit at another level. */
			for (j = 0; j < EM_SLOTS; j++)
				if (m->s[j].st != EM_HOST && m->s[j].sp == sp &&
				    ELV_PRIO_CLASS(m->s[j].prio) == ELV_PRIO_NONE)
					m->s[j].level = EM_LVL_UNKNOWN;
			em_dl_clear(m);
		}
		break;
	}
	em_post(m);
}

/* Is @ret one of the two codes the documentation allows when two rules apply at once? */
static void em_ret2(struct em *m, int ret, int a, int b, const char *what)
{
	if (ret != a && ret != b)
		em_fail(m, "%s returned %d, expected %d or %d", what, ret, a, b);
}

static unsigned em_group_streams(const struct em *m, unsigned g)
{
	unsigned i, n = 0;

	for (i = 0; i < EM_STREAMS; i++)
		n += m->sreg[i] && m->sgrp[i] == g + 1u;
	return n;
}

/* Weights and groups: every return code as documented, membership as the model keeps it. */
static void em_do_group(struct em *m, const struct em_call *c)
{
	unsigned i = c->slot % EM_STREAMS, g = c->slot % EM_GROUPS, to;
	struct elv_stream *sp = &m->streams[i];
	struct elv_group *gp = &m->groups[g];
	uint16_t w = (uint16_t)c->val;
	int ret, busy;

	if (c->kind == EK_ST_WEIGHT) {
		ret = elv_stream_set_weight(m->q, sp, w);
		if (!m->sreg[i] && w > ELV_WEIGHT_MAX)
			em_ret2(m, ret, ELV_EINVAL, ELV_ERANGE, "elv_stream_set_weight");
		else
			em_ret(m, ret, !m->sreg[i] ? ELV_EINVAL : w > ELV_WEIGHT_MAX ? ELV_ERANGE : 0,
			       "elv_stream_set_weight");
		if (ret == 0 && sp->weight != w)
			em_fail(m, "stream %u weight %u after setting %u", i, sp->weight, w);
		em_post(m);
		return;
	}
	switch (c->aux % 4u) {
	case 0:
		if (m->greg[g]) {
			em_ret(m, elv_group_init(m->q, gp, m->now), ELV_EBUSY, "elv_group_init");
			break;
		}
		memset(gp, 0, sizeof(*gp)); /* the host zeroes a group before it registers it */
		gp->weight = w;
		ret = elv_group_init(m->q, gp, m->now);
		em_ret(m, ret, w > ELV_GROUP_WEIGHT_MAX ? ELV_ERANGE : 0, "elv_group_init");
		if (ret == 0 && gp->weight != (w ? w : ELV_GROUP_WEIGHT_DEFAULT))
			em_fail(m, "group %u weight %u after init with %u", g, gp->weight, w);
		m->greg[g] = ret == 0;
		break;
	case 1:
		ret = elv_group_exit(m->q, gp, m->now);
		em_ret(m, ret, !m->greg[g] ? ELV_EINVAL : em_group_streams(m, g) ? ELV_EBUSY : 0,
		       "elv_group_exit");
		if (ret == 0)
			m->greg[g] = 0;
		break;
	case 2:
		ret = elv_group_set_weight(m->q, gp, w);
		if (!m->greg[g] && (!w || w > ELV_GROUP_WEIGHT_MAX))
			em_ret2(m, ret, ELV_EINVAL, ELV_ERANGE, "elv_group_set_weight");
		else
			em_ret(m, ret, !m->greg[g] ? ELV_EINVAL :
				       !w || w > ELV_GROUP_WEIGHT_MAX ? ELV_ERANGE : 0,
			       "elv_group_set_weight");
		break;
	default:
		to = c->prio % (EM_GROUPS + 1u); /* 0: the root, else group to - 1 */
		ret = elv_stream_set_group(m->q, sp, to ? &m->groups[to - 1u] : NULL);
		busy = em_stream_holds(m, sp) != 0;
		if (!m->sreg[i] || (to && !m->greg[to - 1u])) {
			if (busy && m->sreg[i])
				em_ret2(m, ret, ELV_EINVAL, ELV_EBUSY, "elv_stream_set_group");
			else
				em_ret(m, ret, ELV_EINVAL, "elv_stream_set_group");
		} else {
			em_ret(m, ret, busy && m->sgrp[i] != to ? ELV_EBUSY : 0,
			       "elv_stream_set_group");
		}
		if (ret == 0 && to && m->sgrp[i] != to)
			m->joins++;
		if (ret == 0)
			m->sgrp[i] = (uint8_t)to;
		break;
	}
	em_post(m);
}

/* Throttle settings from a call's fields: operation caps only (checked against every
 * dispatch), any mix, io.max, or values the library must refuse. */
static void em_qos_throttle_of(const struct em_call *c, struct elv_throttle_settings *t)
{
	uint64_t v = (uint64_t)c->val, x = c->sector;
	unsigned k;

	memset(t, 0, sizeof(*t));
	switch (c->op % 4u) {
	case 0:
		t->limit[ELV_THROTTLE_IOPS_TOTAL].avg = 1 + v % 2000u;
		if (c->flags & 1u) {
			t->limit[ELV_THROTTLE_IOPS_TOTAL].max = 1 + v % 2000u + x % 5000u;
			t->limit[ELV_THROTTLE_IOPS_TOTAL].max_length = 1u + c->prio % 4u;
		}
		if (c->flags & 2u)
			t->limit[ELV_THROTTLE_BPS_TOTAL].avg = 4096 + x % 10000000u;
		break;
	case 1:
		for (k = 0; k < ELV_THROTTLE_NR; k++) {
			if (!((x >> k) & 1u))
				continue;
			t->limit[k].avg = 1 + (v >> (8 * k)) % 4096u * (k < 3 ? 512u : 1u);
			if ((x >> (k + 8)) & 1u) {
				t->limit[k].max = t->limit[k].avg * (1 + (x >> 16) % 5u);
				t->limit[k].max_length = (uint32_t)((x >> 20) % 4u);
			}
		}
		if (c->flags & 4u)
			t->iops_size = 512u * (1u + c->prio % 16u);
		break;
	case 2:
		t->mode = ELV_THROTTLE_IOMAX;
		for (k = 0; k < ELV_THROTTLE_NR; k++)
			if (k % 3u && ((x >> k) & 1u))
				t->limit[k].avg = 1 + (v >> (8 * k)) % 4096u * (k < 3 ? 4096u : 1u);
		break;
	default:
		t->limit[c->prio % ELV_THROTTLE_NR].avg = c->flags & 1u ? ELV_THROTTLE_RATE_MAX + 1 :
			1 + v % 100u;
		t->limit[c->prio % ELV_THROTTLE_NR].max = c->flags & 2u ? 1 : 0;
		t->limit[(c->prio + 1u) % ELV_THROTTLE_NR].max_length =
			c->flags & 4u ? ELV_THROTTLE_LENGTH_MAX + 1u : 2u;
		t->reserved[0] = c->flags & 8u;
		t->mode = (uint8_t)(c->flags & 16u ? 7u : c->flags & 32u ? 1u : 0u);
		break;
	}
}

static void em_qos_mclock_of(const struct em_call *c, struct elv_mclock_settings *mc)
{
	uint64_t v = (uint64_t)c->val;

	memset(mc, 0, sizeof(*mc));
	mc->reservation = v & 1u ? 0 : (v >> 1) % 3000u;
	mc->limit = c->flags & 2u ? 0 : c->sector % 5000u;
	mc->weight = c->nr % 1002u;
	if (c->flags & 4u)
		mc->weight = ELV_MCLOCK_WEIGHT_MAX + 1u;
	if (c->flags & 8u)
		mc->reservation = ELV_MCLOCK_RATE_MAX + 1u;
	mc->reserved = c->flags & 16u ? 1u : 0u;
}

/* The stage's calls: settings set and refused as documented, nothing lost or released early. */
static void em_do_qos(struct em *m, const struct em_call *c)
{
	unsigned i = c->slot % EM_STREAMS;
	struct elv_stream *sp = &m->streams[i];
	struct elv_throttle_settings t, t0, t1;
	struct elv_mclock_settings mc, mc0, mc1;
	struct elv_qos_settings set;
	int ret, want, on = m->qc_on[i];

	if (!m->qos_on) {
		em_ret(m, elv_qos_set(m->q, NULL, m->now), ELV_EINVAL, "elv_qos_set without a stage");
		em_post(m);
		return;
	}
	switch (c->aux % 6u) {
	case 0: /* a throttle */
		em_qos_throttle_of(c, &t);
		want = elv_throttle_check(&t);
		if (on)
			em_ret(m, elv_qos_get_throttle(m->q, &m->qc[i], &t0), 0,
			       "elv_qos_get_throttle");
		ret = elv_qos_set_throttle(m->q, &m->qc[i], &t, m->now);
		if (!on && want)
			em_ret2(m, ret, ELV_EINVAL, want, "elv_qos_set_throttle (no client)");
		else
			em_ret(m, ret, on ? want : ELV_EINVAL, "elv_qos_set_throttle");
		if (!on)
			break;
		em_ret(m, elv_qos_get_throttle(m->q, &m->qc[i], &t1), 0, "elv_qos_get_throttle");
		if (memcmp(&t1, ret ? &t0 : &t, sizeof(t1)) != 0)
			em_fail(m, "stream %u: the throttle read back is not the one %s", i,
				ret ? "in force before a refused change" : "set");
		if (ret)
			break;
		m->qos_sets += em_stream_holds(m, sp) != 0;
		m->thr_avg[i] = t.mode == ELV_THROTTLE_BUCKET ?
			(double)t.limit[ELV_THROTTLE_IOPS_TOTAL].avg : 0;
		m->thr_cap[i] = t.limit[ELV_THROTTLE_IOPS_TOTAL].max ?
			(double)t.limit[ELV_THROTTLE_IOPS_TOTAL].max *
			(t.limit[ELV_THROTTLE_IOPS_TOTAL].max_length > 1 ?
			 t.limit[ELV_THROTTLE_IOPS_TOTAL].max_length : 1) :
			m->thr_avg[i] / 10;
		m->thr_fwd0[i] = m->t_fwd;
		m->thr_n[i] = 0;
		/* Already past the throttle: the stream's requests it does not hold. */
		m->thr_slack[i] = em_stream_holds(m, sp) - em_qos_held(m, (int)i, 0);
		break;
	case 1: /* mClock settings */
		em_qos_mclock_of(c, &mc);
		want = elv_mclock_check(&mc);
		if (on)
			em_ret(m, elv_qos_get_mclock(m->q, &m->qc[i], &mc0), 0,
			       "elv_qos_get_mclock");
		ret = elv_qos_set_mclock(m->q, &m->qc[i], &mc, m->now);
		if (!on && want)
			em_ret2(m, ret, ELV_EINVAL, want, "elv_qos_set_mclock (no client)");
		else if (on && !want && em_stream_holds(m, sp))
			/* becoming an mClock client with requests already out may wait */
			em_ret2(m, ret, 0, ELV_EBUSY, "elv_qos_set_mclock");
		else
			em_ret(m, ret, on ? want : ELV_EINVAL, "elv_qos_set_mclock");
		if (!on)
			break;
		em_ret(m, elv_qos_get_mclock(m->q, &m->qc[i], &mc1), 0, "elv_qos_get_mclock");
		if (memcmp(&mc1, ret ? &mc0 : &mc, sizeof(mc1)) != 0)
			em_fail(m, "stream %u: the mClock settings read back are not the ones %s", i,
				ret ? "in force before a refused change" : "set");
		m->qos_sets += !ret && em_stream_holds(m, sp) != 0;
		break;
	case 2: /* no throttle */
		ret = elv_qos_set_throttle(m->q, &m->qc[i], NULL, m->now);
		em_ret(m, ret, on ? 0 : ELV_EINVAL, "elv_qos_set_throttle(NULL)");
		if (ret == 0)
			m->thr_avg[i] = 0;
		break;
	case 3: /* no mClock: refused while requests wait in it (or are out of it) */
		want = !on ? ELV_EINVAL : em_qos_held(m, (int)i, 1) ? ELV_EBUSY : 0;
		ret = elv_qos_set_mclock(m->q, &m->qc[i], NULL, m->now);
		if (!want && em_stream_holds(m, sp))
			em_ret2(m, ret, 0, ELV_EBUSY, "elv_qos_set_mclock(NULL)");
		else
			em_ret(m, ret, want, "elv_qos_set_mclock(NULL)");
		break;
	case 4: /* the client goes, or comes */
		if (on) {
			want = em_qos_held(m, (int)i, 0) + em_qos_held(m, (int)i, 1) ? ELV_EBUSY : 0;
			ret = elv_qos_stream_detach(m->q, sp, m->now);
			if (!want && em_stream_holds(m, sp))
				em_ret2(m, ret, 0, ELV_EBUSY, "elv_qos_stream_detach");
			else
				em_ret(m, ret, want, "elv_qos_stream_detach");
			if (ret == 0)
				m->qc_on[i] = 0;
		} else {
			want = !m->sreg[i] ? ELV_EINVAL : em_stream_holds(m, sp) ? ELV_EBUSY : 0;
			memset(&m->qc[i], 0, sizeof(m->qc[i]));
			ret = elv_qos_stream_attach(m->q, sp, &m->qc[i], m->now);
			em_ret(m, ret, want, "elv_qos_stream_attach");
			if (ret == 0) {
				m->qc_on[i] = 1;
				m->thr_avg[i] = 0;
			}
		}
		break;
	default: /* the stage's own settings */
		memset(&set, 0, sizeof(set));
		set.depth = c->flags & 4u ? 70000u : (uint32_t)((uint64_t)c->val % 10u);
		set.at_limit = (uint8_t)(c->flags & 8u ? 5u : c->op % 2u);
		set.cost_size = c->flags & 1u ? 4096u : 0u;
		want = c->flags & 4u ? ELV_ERANGE : c->flags & 8u ? ELV_EINVAL : 0;
		if (c->flags & 12u)
			em_ret2(m, elv_qos_set(m->q, &set, m->now), ELV_EINVAL, ELV_ERANGE,
				"elv_qos_set");
		else
			em_ret(m, elv_qos_set(m->q, &set, m->now), want, "elv_qos_set");
		break;
	}
	em_post(m);
}

/* Attach the stage as the configuration says, with no client yet. */
static void em_qos_start(struct em *m)
{
	struct elv_qos_settings set;

	m->qos_on = 0;
	memset(m->qc, 0, sizeof(m->qc)); /* a client's memory is zeroed before it is attached */
	memset(m->qc_on, 0, sizeof(m->qc_on));
	memset(m->thr_avg, 0, sizeof(m->thr_avg));
	if (!m->c.qos)
		return;
	memset(&set, 0, sizeof(set));
	set.depth = (m->c.qos >> 1) % 8u;
	set.at_limit = (uint8_t)((m->c.qos >> 4) & 1u);
	memset(&m->qos, 0, sizeof(m->qos));
	em_ret(m, elv_qos_attach(m->q, &m->qos, &set, m->now), 0, "elv_qos_attach");
	m->qos_on = !m->failed;
}

/* Complete everything, then dispatch everything without force, waiting for the policy. */
static void em_do_settle(struct em *m)
{
	unsigned waits = 0, i;

	while (!m->failed) {
		for (i = 0; i < EM_SLOTS && !m->failed; i++)
			if (m->s[i].st == EM_FLIGHT)
				em_do_complete_slot(m, &m->s[i]);
		if (m->failed || em_nr_queued(m) == 0)
			return;
		m->pending_ev = ELV_TIME_NEVER;
		if (em_do_dispatch(m, 0, 0))
			continue;
		if (m->failed)
			return;
		if (++waits > EM_SETTLE_WAITS) {
			em_fail(m, "queue stuck: %u requests never dispatched after %u waits",
				em_nr_queued(m), waits - 1u);
			return;
		}
		m->waits++;
		em_set_now(m, m->pending_ev); /* finite and later: checked by the dispatch */
	}
}

/* Requests of this queue handed to another one: refused, and neither queue changes. */
static void em_do_foreign(struct em *m)
{
	struct elv_queue *q2 = NULL;
	struct elv_stats a, b;
	unsigned i;

	if (elv_queue_create(&q2, em_policy(m), NULL) != 0)
		return; /* no malloc in this build */
	elv_stats(q2, &a);
	for (i = 0; i < EM_SLOTS; i++) {
		struct em_slot *s = &m->s[i];

		if (s->st == EM_FLIGHT) {
			em_ret(m, elv_complete(q2, &s->rq, m->now), ELV_EINVAL,
			       "elv_complete(another queue's request)");
			em_ret(m, elv_requeue(q2, &s->rq, m->now), ELV_EINVAL,
			       "elv_requeue(another queue's request)");
		} else if (s->st == EM_QUEUED || s->st == EM_REQUEUED) {
			em_ret(m, elv_cancel(q2, &s->rq), ELV_EINVAL,
			       "elv_cancel(another queue's request)");
		}
	}
	elv_stats(q2, &b);
	if (memcmp(&a, &b, sizeof(a)) != 0)
		em_fail(m, "refusing another queue's requests changed the other queue");
	em_ret(m, elv_queue_destroy(q2), 0, "elv_queue_destroy(other queue)");
}

/* Calls with bad arguments: each returns its documented error and changes nothing. */
static void em_do_bad(struct em *m, unsigned aux)
{
	struct elv_stats before, st;
	struct elv_request *out = NULL;
	struct em_slot *s = &m->s[aux % EM_SLOTS];
	struct elv_stream *sp = &m->streams[aux % EM_STREAMS];
	const char *name = NULL;
	uint64_t v = 0;
	int64_t t = 0;
	unsigned i, nst;
	int ret;
	struct elv_queue *tmpq = NULL;

	elv_stats(m->q, &before);
	switch (aux % 13u) {
	case 0:
		em_ret(m, elv_add(NULL, &s->rq, m->now), ELV_EINVAL, "elv_add(NULL q)");
		em_ret(m, elv_add(m->q, NULL, m->now), ELV_EINVAL, "elv_add(NULL rq)");
		break;
	case 1:
		em_ret(m, elv_dispatch(NULL, m->now, 0, &out), ELV_EINVAL, "elv_dispatch(NULL)");
		em_ret(m, elv_dispatch(m->q, m->now, 0, NULL), ELV_EINVAL,
		       "elv_dispatch(out NULL)");
		em_ret(m, elv_dispatch(m->q, m->now, 2u, &out), ELV_EINVAL, "elv_dispatch(flag 2)");
		em_ret(m, elv_dispatch(m->q, m->now, 0x80000000u, &out), ELV_EINVAL,
		       "elv_dispatch(flag 1<<31)");
		break;
	case 2:
		em_ret(m, elv_complete(NULL, &s->rq, m->now), ELV_EINVAL, "elv_complete(NULL q)");
		em_ret(m, elv_complete(m->q, NULL, m->now), ELV_EINVAL, "elv_complete(NULL rq)");
		em_ret(m, elv_requeue(NULL, &s->rq, m->now), ELV_EINVAL, "elv_requeue(NULL q)");
		em_ret(m, elv_requeue(m->q, NULL, m->now), ELV_EINVAL, "elv_requeue(NULL rq)");
		break;
	case 3:
		em_ret(m, elv_cancel(NULL, &s->rq), ELV_EINVAL, "elv_cancel(NULL q)");
		em_ret(m, elv_cancel(m->q, NULL), ELV_EINVAL, "elv_cancel(NULL rq)");
		em_ret(m, elv_drain(m->q, NULL, m), ELV_EINVAL, "elv_drain(NULL fn)");
		em_ret(m, elv_drain(NULL, em_drain_noop, m), ELV_EINVAL, "elv_drain(NULL q)");
		break;
	case 4:
		em_ret(m, elv_switch(m->q, NULL, m->now), ELV_EINVAL, "elv_switch(NULL)");
		em_ret(m, elv_switch(NULL, em_policy(m), m->now), ELV_EINVAL,
		       "elv_switch(NULL q)");
		break;
	case 5:
		em_ret(m, elv_tunable_set(NULL, "read_expire", 1), ELV_EINVAL,
		       "elv_tunable_set(NULL)");
		em_ret(m, elv_tunable_get(m->q, "read_expire", NULL), ELV_EINVAL,
		       "elv_tunable_get(NULL value)");
		em_ret(m, elv_tunable_get(m->q, NULL, &t), ELV_EINVAL,
		       "elv_tunable_get(NULL name)");
		em_ret(m, elv_tunable_get(NULL, "x", &t), ELV_EINVAL, "elv_tunable_get(NULL q)");
		break;
	case 6:
		em_ret(m, elv_stats(m->q, NULL), ELV_EINVAL, "elv_stats(NULL)");
		em_ret(m, elv_stats(NULL, &st), ELV_EINVAL, "elv_stats(NULL q)");
		break;
	case 7:
		nst = em_policy(m)->nr_stats;
		for (i = 0; i < nst; i++)
			em_ret(m, elv_policy_stat(m->q, i, &name, &v), 0, "elv_policy_stat");
		em_ret(m, elv_policy_stat(m->q, nst, &name, &v), ELV_ENOENT,
		       "elv_policy_stat(past the end)");
		em_ret(m, elv_policy_stat(m->q, 0, NULL, &v), ELV_EINVAL, "elv_policy_stat(NULL)");
		break;
	case 8:
		em_ret(m, elv_stream_init(NULL, sp, m->now), ELV_EINVAL, "elv_stream_init(NULL q)");
		em_ret(m, elv_stream_init(m->q, NULL, m->now), ELV_EINVAL, "elv_stream_init(NULL)");
		em_ret(m, elv_stream_exit(m->q, NULL, m->now), ELV_EINVAL, "elv_stream_exit(NULL)");
		em_ret(m, elv_stream_exit(m->q, &m->ghost, m->now), ELV_EINVAL,
		       "elv_stream_exit(unregistered)");
		em_ret(m, elv_stream_set_prio(NULL, sp, 0), ELV_EINVAL,
		       "elv_stream_set_prio(NULL)");
		em_ret(m, elv_stream_set_prio(m->q, &m->ghost, 0), ELV_EINVAL,
		       "elv_stream_set_prio(unregistered)");
		em_ret(m, elv_stream_set_weight(NULL, sp, 100), ELV_EINVAL,
		       "elv_stream_set_weight(NULL)");
		em_ret(m, elv_stream_set_weight(m->q, &m->ghost, 100), ELV_EINVAL,
		       "elv_stream_set_weight(unregistered)");
		em_ret(m, elv_stream_set_group(m->q, NULL, NULL), ELV_EINVAL,
		       "elv_stream_set_group(NULL)");
		em_ret(m, elv_stream_set_group(m->q, &m->ghost, NULL), ELV_EINVAL,
		       "elv_stream_set_group(unregistered)");
		em_ret(m, elv_group_init(NULL, &m->groups[0], m->now), ELV_EINVAL,
		       "elv_group_init(NULL q)");
		em_ret(m, elv_group_init(m->q, NULL, m->now), ELV_EINVAL, "elv_group_init(NULL)");
		em_ret(m, elv_group_exit(m->q, NULL, m->now), ELV_EINVAL, "elv_group_exit(NULL)");
		em_ret(m, elv_group_set_weight(m->q, NULL, 100), ELV_EINVAL,
		       "elv_group_set_weight(NULL)");
		break;
	case 9:
		em_ret(m, elv_queue_check(NULL), ELV_EINVAL, "elv_queue_check(NULL)");
		if (elv_next_event(NULL) != ELV_TIME_NEVER || elv_queue_policy(NULL) != NULL)
			em_fail(m, "NULL queue accessors misbehave");
		em_ret(m, elv_queue_exit(NULL), ELV_EINVAL, "elv_queue_exit(NULL)");
		break;
	case 10:
		/* Building a queue elsewhere with bad arguments must not touch this one. */
		em_ret(m, elv_queue_init(NULL, m->mem, m->mem_cap, em_policy(m), &m->cfg),
		       ELV_EINVAL, "elv_queue_init(NULL out)");
		em_ret(m, elv_queue_init(&tmpq, NULL, m->mem_cap, em_policy(m), &m->cfg),
		       ELV_EINVAL, "elv_queue_init(NULL mem)");
		em_ret(m, elv_queue_init(&tmpq, m->mem, m->mem_cap, NULL, &m->cfg), ELV_EINVAL,
		       "elv_queue_init(NULL policy)");
		em_ret(m, elv_queue_init(&tmpq, (char *)m->mem + 1, m->mem_cap - 8u, em_policy(m),
					 &m->cfg), ELV_EINVAL, "elv_queue_init(misaligned)");
		em_ret(m, elv_queue_init(&tmpq, m->mem, 8u, em_policy(m), &m->cfg), ELV_ENOSPC,
		       "elv_queue_init(8 bytes)");
		if (tmpq != NULL)
			em_fail(m, "failed elv_queue_init wrote its out pointer");
		if (elv_queue_size(NULL, &m->cfg) != 0)
			em_fail(m, "elv_queue_size(NULL policy) is not 0");
		break;
	case 11:
		/* The hosted convenience API on a queue of its own, and lookups. */
		ret = elv_queue_create(&tmpq, em_policy(m), &m->cfg);
		if (ret == 0) {
			em_ret(m, elv_queue_check(tmpq), 0, "elv_queue_check(created)");
			em_ret(m, elv_queue_destroy(tmpq), 0, "elv_queue_destroy");
		} else if (ret != ELV_ENOSYS) {
			em_fail(m, "elv_queue_create returned %d", ret);
		}
		ret = elv_queue_destroy(NULL);
		if (ret != ELV_EINVAL && ret != ELV_ENOSYS)
			em_fail(m, "elv_queue_destroy(NULL) returned %d", ret);
		em_do_foreign(m);
		{
			struct elv_config bad = m->cfg;

			bad.nr_requests = (1u << 24) + 1u;
			em_ret(m, elv_queue_init(&tmpq, m->mem, m->mem_cap, em_policy(m), &bad),
			       ELV_EINVAL, "elv_queue_init(nr_requests 2^24 + 1)");
			bad = m->cfg;
			bad.reserved8[1] = 1;
			em_ret(m, elv_queue_init(&tmpq, m->mem, m->mem_cap, em_policy(m), &bad),
			       ELV_EINVAL, "elv_queue_init(reserved byte set)");
		}
		for (i = 0; elv_policy_at(i) != NULL; i++)
			if (elv_policy_find(elv_policy_name(elv_policy_at(i))) != elv_policy_at(i))
				em_fail(m, "elv_policy_find(\"%s\") does not find it",
					elv_policy_name(elv_policy_at(i)));
		if (elv_policy_find(NULL) != NULL || elv_policy_find("no-such-policy") != NULL ||
		    elv_policy_recommend(NULL) == NULL || elv_strerror(ELV_EINVAL) == NULL ||
		    elv_version() != ELV_VERSION_NUMBER)
			em_fail(m, "policy lookups or version/strerror misbehave");
		break;
	default:
		/* Completing, requeueing and cancelling what the host owns. */
		for (i = 0; i < EM_SLOTS; i++) {
			s = &m->s[i];
			if (s->st != EM_HOST)
				continue;
			em_ret(m, elv_complete(m->q, &s->rq, m->now), ELV_EINVAL,
			       "elv_complete(host-owned)");
			em_ret(m, elv_requeue(m->q, &s->rq, m->now), ELV_EINVAL,
			       "elv_requeue(host-owned)");
			em_ret(m, elv_cancel(m->q, &s->rq), ELV_EINVAL, "elv_cancel(host-owned)");
			break;
		}
		break;
	}
	em_expect_nochange(m, &before, "a call with bad arguments");
	em_post(m);
}

/* ---- queue setup and teardown ---------------------------------------------------------- */

static void em_reset_counters(struct em *m)
{
	m->added = m->completed = m->requeued = m->cancelled = m->expired_seen = 0;
	memset(m->merged, 0, sizeof(m->merged));
	memset(m->disp, 0, sizeof(m->disp));
	m->t_insert = m->t_merge = m->t_disp = m->t_complete = m->t_requeue = m->t_cancel = 0;
	m->t_expire = m->t_idle_start = m->t_idle_stop = 0;
	m->t_idling = 0;
}

static size_t em_size_for(const struct em *m, unsigned pol)
{
	return elv_queue_size(m->pols[pol].p, &m->cfg);
}

/* Build the queue for configuration @c. 0 on success. */
static int em_start(struct em *m, const struct em_config *c)
{
	unsigned i;
	size_t need = 0, any;
	int ret;

	m->c = *c;
	m->c.policy = (uint8_t)(c->policy % m->npols);
	memset(&m->cfg, 0, sizeof(m->cfg));
	m->cfg.dev.rotational = (m->c.flash & 1u) ? 0 : 1;
	m->cfg.dev.zoned = (m->c.flash & 2u) ? 1 : 0;
	m->cfg.dev.queue_depth = m->c.depth;
	m->cfg.dev.max_sectors = m->c.max_sectors;
	m->cfg.nr_requests = m->c.nr_requests;
	m->cfg.no_merges = m->c.no_merges;
	m->cfg.allow_merge = em_cb_allow;
	m->cfg.merge = em_cb_merge;
	m->cfg.trace = em_cb_trace;
	/* Episodes with an odd device depth give a positioning estimate, the others none. */
	if (m->c.depth & 1u)
		m->cfg.position_time = em_cb_position;
	m->cfg.ctx = m;
	m->failed = 0;
	m->err[0] = 0;
	m->now = m->c.start; /* any epoch, near 2^64 and 2^63 too */
	em_clock_reset(m);
	m->reenter_n = 0;
	m->in_reenter = 0;
	elv_request_init(&m->reent_rq);
	m->reent_rq.sector = 4096;
	m->reent_rq.nr_sectors = 8;
	m->reent_rq.op = ELV_OP_READ;
	memcpy(&m->reent_snap, &m->reent_rq, sizeof(m->reent_rq));
	m->seq = 1;
	m->adding = -1;
	m->release_excl = -1;
	m->pending_ev = ELV_TIME_NEVER;
	em_reset_counters(m);
	for (i = 0; i < m->npols; i++)
		if (em_size_for(m, i) > need)
			need = em_size_for(m, i);
	any = elv_queue_size_any(&m->cfg);
	for (i = 0; i < m->npols; i++)
		if (em_size_for(m, i) == 0)
			em_fail(m, "elv_queue_size(%s) is 0", m->pols[i].p->name);
	for (i = 0; elv_policy_at(i) != NULL; i++)
		if (elv_queue_size(elv_policy_at(i), &m->cfg) > any)
			em_fail(m, "elv_queue_size_any() smaller than for %s",
				elv_policy_name(elv_policy_at(i)));
	m->mem_len = m->c.tight ? em_size_for(m, m->c.policy) : need;
	if (m->mem_len > m->mem_cap) {
		em_fail(m, "queue needs %zu bytes, the checker has %zu", m->mem_len, m->mem_cap);
		return -1;
	}
	for (i = 0; i < EM_SLOTS; i++) {
		memset(&m->s[i], 0, sizeof(m->s[i]));
		elv_request_init(&m->s[i].rq);
		m->s[i].level = EM_LVL_BE;
		em_to_host(m, &m->s[i]);
	}
	memset(m->streams, 0, sizeof(m->streams));
	memcpy(m->ssnap, m->streams, sizeof(m->streams));
	memset(m->sreg, 0, sizeof(m->sreg));
	memset(m->groups, 0, sizeof(m->groups));
	memset(m->greg, 0, sizeof(m->greg));
	memset(m->sgrp, 0, sizeof(m->sgrp));
	memset(&m->ghost, 0x5a, sizeof(m->ghost));
	m->ghost.ioprio = ELV_PRIO(ELV_PRIO_BE, 1);
	m->cur = m->c.policy;
	ret = elv_queue_init(&m->q, m->mem, m->mem_len, em_policy(m), &m->cfg);
	if (ret != 0) {
		em_fail(m, "elv_queue_init returned %d", ret);
		return -1;
	}
	em_dl_reload(m);
	em_qos_start(m);
	em_post(m);
	return m->failed ? -1 : 0;
}

static void em_do_recycle(struct em *m, unsigned aux)
{
	unsigned i, busy = 0, pol = aux % m->npols;
	int ret, want;

	for (i = 0; i < EM_SLOTS; i++)
		busy += m->s[i].st != EM_HOST;
	for (i = 0; i < EM_STREAMS; i++)
		busy += m->sreg[i];
	for (i = 0; i < EM_GROUPS; i++)
		busy += m->greg[i];
	/* The stage goes first when nothing is left; it comes back with the new queue. */
	if (!busy && m->qos_on) {
		em_ret(m, elv_qos_detach(m->q, m->now), 0, "elv_qos_detach before elv_queue_exit");
		m->qos_on = 0;
	}
	ret = elv_queue_exit(m->q);
	em_ret(m, ret, busy ? ELV_EBUSY : 0, "elv_queue_exit");
	if (ret != 0) {
		if (!m->failed)
			em_post(m);
		return;
	}
	want = em_size_for(m, pol) > m->mem_len ? ELV_ENOSPC : 0;
	ret = elv_queue_init(&m->q, m->mem, m->mem_len, m->pols[pol].p, &m->cfg);
	em_ret(m, ret, want, "elv_queue_init after exit");
	if (ret != 0) {
		pol = m->c.policy;
		ret = elv_queue_init(&m->q, m->mem, m->mem_len, m->pols[pol].p, &m->cfg);
		em_ret(m, ret, 0, "elv_queue_init after exit");
	}
	m->cur = pol;
	em_reset_counters(m);
	em_clock_reset(m);
	em_dl_reload(m);
	em_qos_start(m);
	em_post(m);
}

/* End of a run: everything must come back, every stream retire, the queue exit cleanly. */
static void em_finish(struct em *m)
{
	unsigned i;

	if (!m->failed)
		em_do_settle(m);
	if (!m->failed)
		em_do_drain(m);
	for (i = 0; i < EM_STREAMS && !m->failed; i++) {
		if (!m->sreg[i])
			continue;
		em_ret(m, elv_stream_exit(m->q, &m->streams[i], m->now), 0, "elv_stream_exit");
		m->sreg[i] = 0;
		m->sgrp[i] = 0;
		m->ssnap[i] = m->streams[i];
		em_post(m);
	}
	for (i = 0; i < EM_GROUPS && !m->failed; i++) {
		if (!m->greg[i])
			continue;
		em_ret(m, elv_group_exit(m->q, &m->groups[i], m->now), 0, "elv_group_exit");
		m->greg[i] = 0;
		em_post(m);
	}
	for (i = 0; i < EM_SLOTS && !m->failed; i++)
		if (m->s[i].st != EM_HOST)
			em_fail(m, "request %d never came back (state %d)", i, m->s[i].st);
	if (!m->failed && m->qos_on) {
		em_ret(m, elv_qos_detach(m->q, m->now), 0, "elv_qos_detach at the end");
		m->qos_on = 0;
	}
	if (!m->failed)
		em_ret(m, elv_queue_exit(m->q), 0, "elv_queue_exit at the end");
}

/* ---- one call -------------------------------------------------------------------------- */

static void em_exec(struct em *m, const struct em_call *c)
{
	m->in_kind = c->kind;
	switch (c->kind) {
	case EK_ADD: em_do_add(m, c); break;
	case EK_DISPATCH:
		em_do_dispatch(m, (c->aux & 1u) ? ELV_DISPATCH_FORCE : 0, (c->aux & 2u) != 0);
		break;
	case EK_COMPLETE: em_do_complete_slot(m, &m->s[c->slot % EM_SLOTS]); break;
	case EK_REQUEUE: em_do_requeue_slot(m, &m->s[c->slot % EM_SLOTS]); break;
	case EK_CANCEL: em_do_cancel(m, &m->s[c->slot % EM_SLOTS]); break;
	case EK_DRAIN: em_do_drain(m); break;
	case EK_SWITCH: em_do_switch(m, c->aux); break;
	case EK_TUN_SET: em_do_tunset(m, c->aux, c->val); break;
	case EK_TUN_GET: em_do_tunget(m, c->aux); break;
	case EK_ST_INIT:
	case EK_ST_EXIT:
	case EK_ST_PRIO: em_do_stream(m, c); break;
	case EK_TIME: em_set_now(m, m->now + (uint64_t)c->val); break;
	case EK_WAIT: {
		uint64_t ev = elv_next_event(m->q);

		if (ev != ELV_TIME_NEVER && em_after(ev, m->now)) {
			em_set_now(m, ev);
			m->waits++;
		}
		em_do_dispatch(m, 0, 0);
		break;
	}
	case EK_SETTLE: em_do_settle(m); break;
	case EK_BAD: em_do_bad(m, c->aux); break;
	case EK_RECYCLE: em_do_recycle(m, c->aux); break;
	case EK_ST_WEIGHT:
	case EK_GROUP: em_do_group(m, c); break;
	case EK_QOS: em_do_qos(m, c); break;
	default: break;
	}
	m->in_kind = -1;
	m->ops++;
}

/* ---- the generator --------------------------------------------------------------------- */

/* Bytes from a seeded PRNG (checker) or from a buffer (fuzzer; zeroes once it runs out). */
struct em_src {
	const uint8_t *p;
	size_t n, i;
	uint64_t x;
	int rng;
	int eof;
};

static uint64_t em_rng_next(uint64_t *x)
{
	/* xorshift64* */
	*x ^= *x >> 12;
	*x ^= *x << 25;
	*x ^= *x >> 27;
	return *x * 0x2545F4914F6CDD1Dull;
}

static uint8_t em_u8(struct em_src *s)
{
	if (s->rng)
		return (uint8_t)(em_rng_next(&s->x) >> 56);
	if (s->i < s->n)
		return s->p[s->i++];
	s->eof = 1;
	return 0;
}

static uint32_t em_u32(struct em_src *s)
{
	uint32_t v = 0;
	int i;

	if (s->rng)
		return (uint32_t)(em_rng_next(&s->x) >> 32);
	for (i = 0; i < 4; i++)
		v = (v << 8) | em_u8(s);
	return v;
}

static uint64_t em_u64(struct em_src *s)
{
	uint64_t hi = em_u32(s);

	return (hi << 32) | em_u32(s);
}

static void em_gen_config(struct em *m, struct em_src *s, struct em_config *c)
{
	uint8_t r;

	memset(c, 0, sizeof(*c));
	c->policy = (uint8_t)(em_u8(s) % m->npols);
	c->depth = (uint8_t)(1u + em_u8(s) % 8u);
	c->no_merges = em_u8(s) % 16u == 0;
	c->veto = em_u8(s) % 4u == 0;
	c->tight = em_u8(s) % 8u == 0;
	c->prio_mix = em_u8(s) % 2u;
	r = em_u8(s);
	c->max_sectors = r % 4u == 1 ? 64u + em_u8(s) : r % 4u == 2 ? 1024u : 0u;
	r = em_u8(s);
	c->nr_requests = r % 4u == 1 ? 1u : r % 4u == 2 ? 64u + em_u8(s) :
		         r % 16u == 3 ? 4096u : 0u;
	r = em_u8(s);
	c->flash = (uint8_t)(r % 4u == 0 ? 1u : r % 8u == 1 ? 3u : 0u);
	c->reenter = em_u8(s) % 4u == 0;
	/* A third of the episodes put the QoS stage in front of the policy. */
	r = em_u8(s);
	c->qos = (uint8_t)(r % 3u == 0 ? (r & 0xfeu) | 1u : 0u);
	/* The clock starts anywhere: an ordinary epoch, within 20 s of 2^64 (every episode of
	 * some length crosses the wrap), within 20 s of 2^63 (where a signed reading of the
	 * time changes sign), or at a random 64-bit value. */
	r = em_u8(s);
	if (r % 8u < 3u)
		c->start = 1000000000ull;
	else if (r % 8u < 6u)
		c->start = UINT64_MAX - em_u64(s) % 20000000000ull;
	else if (r % 8u < 7u)
		c->start = (uint64_t)INT64_MAX - em_u64(s) % 20000000000ull;
	else
		c->start = em_u64(s);
}

/* A slot in state @st, starting the search at a random place; -1 if none. */
static int em_pick(const struct em *m, struct em_src *s, int st)
{
	unsigned start = em_u8(s) % EM_SLOTS, i;

	for (i = 0; i < EM_SLOTS; i++) {
		unsigned j = (start + i) % EM_SLOTS;

		if (m->s[j].st == st)
			return (int)j;
	}
	return -1;
}

/* A slot the library holds (queued or requeued), -1 if none. */
static int em_pick_held(const struct em *m, struct em_src *s)
{
	int a = em_pick(m, s, EM_QUEUED);

	return a >= 0 ? a : em_pick(m, s, EM_REQUEUED);
}

static uint8_t em_gen_prio(const struct em *m, struct em_src *s)
{
	uint8_t r = em_u8(s), lvl = (uint8_t)(em_u8(s) % 8u);

	if (m->c.prio_mix)
		return ELV_PRIO(r % 4u, lvl);
	return ELV_PRIO(r % 2u ? ELV_PRIO_BE : ELV_PRIO_NONE, lvl);
}

/* The stream code (see struct em_call) of a stream pointer. */
static uint8_t em_stream_code(const struct em *m, const struct elv_stream *sp)
{
	if (!sp)
		return 0;
	if (sp >= m->streams && sp < m->streams + EM_STREAMS)
		return (uint8_t)(1 + (sp - m->streams));
	return EM_STREAMS + 1u;
}

/*
 * Make the new request look like queued request @x (op, sync, priority, stream), so that the
 * merge it was placed for can happen; sometimes fill the gap from @x to the next queued
 * request of the same op exactly, so that two queued requests become one (request merge).
 */
static void em_gen_like(const struct em *m, struct em_src *s, struct em_call *c,
			const struct em_slot *x)
{
	unsigned i;

	c->op = x->op == ELV_OP_FLUSH ? ELV_OP_WRITE : x->op;
	c->flags = (uint8_t)((c->flags & ~ELV_RQ_SYNC) | (x->flags & ELV_RQ_SYNC));
	c->prio = x->prio;
	c->stream = em_stream_code(m, x->sp);
	if (em_u8(s) % 3u)
		return;
	for (i = 0; i < EM_SLOTS; i++) {
		const struct em_slot *y = &m->s[i];
		uint64_t end = x->sector + x->nr;

		if (y != x && y->st == EM_QUEUED && y->op == c->op && y->sector > end &&
		    y->sector - end <= 4096u) {
			c->sector = end;
			c->nr = (uint32_t)(y->sector - end);
			return;
		}
	}
}

static void em_gen_add(struct em *m, struct em_src *s, struct em_call *c, int bad)
{
	uint8_t r = em_u8(s);
	int slot = em_pick(m, s, EM_HOST), x;
	uint64_t span;

	c->kind = EK_ADD;
	if (slot < 0 || bad == 6) {
		/* Nothing free, or on purpose: add a request the library holds. */
		x = em_pick_held(m, s);
		c->slot = (uint8_t)(x >= 0 ? x : em_pick(m, s, EM_FLIGHT) >= 0 ?
						 em_pick(m, s, EM_FLIGHT) : 0);
		return;
	}
	c->slot = (uint8_t)slot;
	c->op = r < 110 ? ELV_OP_READ : r < 220 ? ELV_OP_WRITE : r < 240 ? ELV_OP_DISCARD :
								   ELV_OP_FLUSH;
	r = em_u8(s);
	if (c->op == ELV_OP_FLUSH)
		c->nr = r % 2u ? 0u : 1u + r % 8u;
	else if (r < 80)
		c->nr = 1u + em_u8(s) % 8u;
	else if (r < 200)
		c->nr = 8u + em_u8(s) % 121u;
	else if (r < 245)
		c->nr = 128u + em_u32(s) % 1921u;
	else
		c->nr = 65536u + em_u32(s) % (1u << 22);
	r = em_u8(s);
	x = em_pick_held(m, s);
	if (r < 90 || x < 0) {
		c->sector = (uint64_t)(em_u32(s) % 8192u) * 8u;
	} else if (r < 160) {
		c->sector = m->s[x].sector + m->s[x].nr; /* back-mergeable */
	} else if (r < 210) {
		span = m->s[x].sector;               /* front-mergeable */
		c->sector = span >= c->nr ? span - c->nr : 0;
	} else if (r < 240) {
		c->sector = m->s[x].sector;          /* same start */
	} else if (r < 250) {
		c->sector = em_u64(s) >> (em_u8(s) % 64u);
		if (c->sector > UINT64_MAX - c->nr)
			c->sector = UINT64_MAX - c->nr;
	} else {
		c->sector = UINT64_MAX - c->nr;      /* ends exactly at 2^64 - 1 */
	}
	r = em_u8(s);
	c->flags = (uint8_t)((r < 80 ? ELV_RQ_SYNC : 0) | (r % 19u == 0 ? ELV_RQ_META : 0) |
			     (r % 23u == 0 ? ELV_RQ_FUA : 0) |
			     (r % 29u == 0 ? ELV_RQ_READAHEAD : 0));
	r = em_u8(s);
	if (r < 5)
		c->flags |= ELV_RQ_BARRIER;
	else if (r < 18)
		c->flags |= ELV_RQ_NOMERGE;
	r = em_u8(s);
	c->prio = r < 180 ? 0 : em_gen_prio(m, s);
	r = em_u8(s);
	c->stream = (uint8_t)(r < 80 ? 0u : 1u + r % EM_STREAMS);
	if (c->stream && !m->sreg[c->stream - 1u] && r % 4u)
		c->stream = 0; /* mostly registered streams or none */
	if (x >= 0 && em_u8(s) < 150)
		em_gen_like(m, s, c, &m->s[x]);
	switch (bad) {
	case 1: c->op = c->op == ELV_OP_FLUSH ? ELV_OP_READ : c->op; c->nr = 0; break;
	case 2:
		if (c->nr == 0)
			c->nr = 1;
		c->sector = UINT64_MAX - c->nr + 1u + em_u8(s) % 8u;
		if (c->sector < 8u)
			c->sector = UINT64_MAX;
		break;
	case 3: c->op = (uint8_t)(4u + em_u8(s) % 252u); break;
	case 4: c->flags |= (uint8_t)(em_u8(s) % 2u ? 0x40u : 0x80u); break;
	case 5: c->prio = (uint8_t)(32u + em_u8(s) % 224u); break;
	case 7: c->stream = EM_STREAMS + 1u; break;
	default: break;
	}
}

static int64_t em_gen_tunval(const struct em *m, struct em_src *s, unsigned idx)
{
	unsigned n = 0;
	const struct elv_tunable *t = elv_policy_tunables(em_policy(m), &n);
	uint8_t r = em_u8(s);
	uint64_t span;

	if (idx >= n)
		return (int64_t)em_u32(s);
	span = (uint64_t)(t[idx].max - t[idx].min);
	switch (r % 8u) {
	case 0: return t[idx].min;
	case 1: return t[idx].max;
	case 2: return t[idx].def;
	case 3: return t[idx].min > INT64_MIN ? t[idx].min - 1 : t[idx].min;
	case 4: return t[idx].max < INT64_MAX ? t[idx].max + 1 : t[idx].max;
	case 5: return (int64_t)em_u64(s);
	case 6: return t[idx].min + (int64_t)(em_u32(s) % (span < 64u ? span + 1u : 64u));
	default: return t[idx].min + (int64_t)(em_u64(s) % (span + 1u == 0 ? span : span + 1u));
	}
}

/*
 * Call weights for a filling phase, an emptying phase and a backlog phase (sums <= 256). In
 * the backlog the device is slow to take requests, so queues grow deep while time passes:
 * requests expire behind others, and the order the policy keeps among many matters.
 */
static const uint8_t em_weights[3][EK_NR + 1] = {
	/* add dis com req can dra swi tse tge sti ste stp tim wai set bad rec wgt grp addbad;
	 * weight and group calls come from half the stp draws (em_gen), not from here */
	{ 80, 50, 40, 5, 8, 1, 2, 4, 1, 3, 2, 2, 25, 8, 1, 4, 1, 0, 0, 5 },
	{ 35, 80, 70, 5, 6, 1, 2, 3, 1, 3, 3, 2, 25, 10, 1, 3, 2, 0, 0, 2 },
	{ 90, 30, 30, 2, 3, 0, 1, 1, 1, 2, 1, 1, 40, 2, 0, 2, 0, 0, 0, 2 },
};

static void em_gen(struct em *m, struct em_src *s, uint64_t n, struct em_call *c)
{
	const uint8_t *w = em_weights[(n >> 7) % 3u];
	unsigned total = 0, r, k;
	int x;

	memset(c, 0, sizeof(*c));
	/* Half the runs on a deadline-like policy start with short deadlines and batches, so
	 * that reads expire and the expiry bound gets checked often. */
	if (n < 2 && m->pols[m->cur].dl_bound && em_u8(s) % 4u) {
		unsigned nt = 0, i;
		const struct elv_tunable *t = elv_policy_tunables(em_policy(m), &nt);
		const char *want = n == 0 ? "read_expire" : "fifo_batch";

		for (i = 0; i < nt; i++) {
			if (strcmp(t[i].name, want) != 0)
				continue;
			c->kind = EK_TUN_SET;
			c->aux = (uint8_t)i;
			/* Batches of one to three requests half the time: the expiry bound is then
			 * a few dispatches, which a sector sweep without expiry overruns. */
			if (n == 0)
				c->val = 1 + em_u8(s) % 100;
			else
				c->val = em_u8(s) % 2u ? 1 + em_u8(s) % 3 : 1 + em_u8(s) % 16;
			return;
		}
	}
	for (k = 0; k <= EK_NR; k++)
		total += w[k];
	r = em_u8(s) % total;
	for (k = 0; k < EK_NR && r >= w[k]; k++)
		r -= w[k];
	if (k == EK_NR) {
		em_gen_add(m, s, c, 1 + em_u8(s) % 7u);
		return;
	}
	c->kind = (uint8_t)k;
	switch (k) {
	case EK_ADD: em_gen_add(m, s, c, 0); break;
	case EK_DISPATCH:
		c->aux = (uint8_t)(em_u8(s) % 5u == 0 ? 1u : 0u);
		/* The fake device is full: it refuses what it is given. */
		if (em_count(m, EM_FLIGHT) >= m->c.depth) {
			if (em_u8(s) % 2u) {
				c->aux |= 2u;
			} else {
				c->kind = EK_COMPLETE;
				x = em_pick(m, s, EM_FLIGHT);
				c->slot = (uint8_t)(x < 0 ? 0 : x);
			}
		}
		break;
	case EK_COMPLETE:
	case EK_REQUEUE:
		x = em_u8(s) < 245 ? em_pick(m, s, EM_FLIGHT) : -1;
		c->slot = (uint8_t)(x < 0 ? em_u8(s) % EM_SLOTS : (unsigned)x);
		break;
	case EK_CANCEL:
		x = em_u8(s) < 230 ? em_pick_held(m, s) : -1;
		c->slot = (uint8_t)(x < 0 ? em_u8(s) % EM_SLOTS : (unsigned)x);
		break;
	case EK_SWITCH: c->aux = (uint8_t)(em_u8(s) % (m->npols + 1u)); break;
	case EK_TUN_SET:
		c->aux = em_u8(s);
		{
			unsigned n2 = 0;

			elv_policy_tunables(em_policy(m), &n2);
			c->val = em_gen_tunval(m, s, c->aux % (n2 + 2u));
		}
		break;
	case EK_TUN_GET:
		c->aux = em_u8(s);
		if (m->qos_on && c->aux % 2u) {
			/* With the stage on, half of these are QoS calls: settings of every kind
			 * on a stream, mostly a registered one, changed under load. */
			c->kind = EK_QOS;
			c->aux = (uint8_t)(em_u8(s) % 16u < 8u ? 0u : em_u8(s) % 6u);
			c->slot = (uint8_t)(em_u8(s) % EM_STREAMS);
			c->op = em_u8(s);
			c->flags = em_u8(s) % 4u ? em_u8(s) & 3u : em_u8(s);
			c->prio = em_u8(s);
			c->nr = em_u32(s);
			c->sector = em_u64(s);
			c->val = (int64_t)(em_u64(s) >> 1);
		}
		break;
	case EK_ST_INIT:
	case EK_ST_EXIT:
	case EK_ST_PRIO:
		c->slot = (uint8_t)(em_u8(s) % EM_STREAMS);
		c->prio = em_u8(s) < 12 ? (uint8_t)(32u + em_u8(s) % 224u) : em_gen_prio(m, s);
		if (k == EK_ST_PRIO && (c->slot + c->prio) % 2u) {
			/* Weights and groups: the usual values, the limits, and beyond them. */
			static const uint16_t wv[8] = { 0, 1, 40, 100, 300, 1000, 1001, 10001 };

			r = em_u8(s);
			c->kind = (uint8_t)(r % 3u ? EK_GROUP : EK_ST_WEIGHT);
			c->aux = (uint8_t)(r / 3u % 4u);
			c->prio = (uint8_t)(em_u8(s) % (EM_GROUPS + 1u));
			c->val = r % 5u ? wv[(r >> 5) % 8u] : (int64_t)(em_u32(s) % 10002u);
			if (c->kind == EK_GROUP && c->aux == 3u && em_u8(s) % 4u) {
				/* Mostly a move that can succeed: an idle stream, a live group. */
				unsigned j, g2;

				for (j = 0; j < EM_STREAMS; j++) {
					unsigned y = (c->slot + j) % EM_STREAMS;

					if (m->sreg[y] && !em_stream_holds(m, &m->streams[y])) {
						c->slot = (uint8_t)y;
						break;
					}
				}
				for (g2 = 0; g2 < EM_GROUPS; g2++)
					if (m->greg[(c->prio + g2) % EM_GROUPS]) {
						c->prio = (uint8_t)((c->prio + g2) % EM_GROUPS + 1u);
						break;
					}
			}
		}
		break;
	case EK_TIME:
		r = em_u8(s);
		if (r < 196)
			c->val = (int64_t)(em_u32(s) % 2000000u);
		else if (r < 244)
			c->val = (int64_t)(em_u32(s) % 200000000u);
		else if (r < 250)
			c->val = (int64_t)(em_u64(s) % 20000000000ull);
		else if (r < 254) /* the host's clock steps back a little... */
			c->val = -(int64_t)(em_u32(s) % 200000000u);
		else              /* ...or by up to an hour */
			c->val = -(int64_t)(em_u64(s) % 3600000000000ull);
		break;
	case EK_BAD: c->aux = em_u8(s); break;
	case EK_RECYCLE: c->aux = em_u8(s); break;
	default: break;
	}
}

/* ---- printing and parsing calls (reproducers) ------------------------------------------ */

EM_MAYBE_UNUSED static void em_print_config(FILE *f, const struct em *m, const struct em_config *c)
{
	fprintf(f, "config %u %u %u %u %u %u %u %u %u %u %llu %u   # start policy %s, depth %u\n",
		c->policy, c->depth, c->no_merges, c->veto, c->tight, c->prio_mix, c->max_sectors,
		c->nr_requests, c->flash, c->reenter, (unsigned long long)c->start, c->qos,
		elv_policy_name(m->pols[c->policy % m->npols].p), c->depth);
}

EM_MAYBE_UNUSED static void em_print_call(FILE *f, const struct em_call *c)
{
	fprintf(f, "%s %u %u %u 0x%02x 0x%02x %u %llu %u %lld\n",
		c->kind < EK_NR ? em_kind_names[c->kind] : "?", c->slot, c->aux, c->op, c->flags,
		c->prio, c->stream, (unsigned long long)c->sector, c->nr, (long long)c->val);
}

/* Parse one line printed by em_print_call(); 1 on success. */
EM_MAYBE_UNUSED static int em_parse_call(const char *line, struct em_call *c)
{
	char name[32];
	unsigned slot, aux, op, flags, prio, stream, nr, k;
	unsigned long long sector;
	long long val;

	if (sscanf(line, "%31s %u %u %u %x %x %u %llu %u %lld", name, &slot, &aux, &op, &flags,
		   &prio, &stream, &sector, &nr, &val) != 10)
		return 0;
	for (k = 0; k < EK_NR; k++)
		if (strcmp(name, em_kind_names[k]) == 0)
			break;
	if (k == EK_NR)
		return 0;
	memset(c, 0, sizeof(*c));
	c->kind = (uint8_t)k;
	c->slot = (uint8_t)slot;
	c->aux = (uint8_t)aux;
	c->op = (uint8_t)op;
	c->flags = (uint8_t)flags;
	c->prio = (uint8_t)prio;
	c->stream = (uint8_t)stream;
	c->sector = sector;
	c->nr = nr;
	c->val = val;
	return 1;
}

EM_MAYBE_UNUSED static int em_parse_config(const char *line, struct em_config *c)
{
	unsigned v[10] = { 0 }, qos = 0;
	unsigned long long start = 1000000000ull;

	/* The fields after the eighth (device traits, re-entering callbacks, start of the
	 * clock, the QoS stage) are optional: older reproducers have eight or nine. */
	if (sscanf(line, "config %u %u %u %u %u %u %u %u %u %u %llu %u", &v[0], &v[1], &v[2],
		   &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9], &start, &qos) < 8)
		return 0;
	memset(c, 0, sizeof(*c));
	c->policy = (uint8_t)v[0];
	c->depth = (uint8_t)(v[1] ? v[1] : 1u);
	c->no_merges = (uint8_t)(v[2] != 0);
	c->veto = (uint8_t)(v[3] != 0);
	c->tight = (uint8_t)(v[4] != 0);
	c->prio_mix = (uint8_t)(v[5] != 0);
	c->max_sectors = v[6];
	c->nr_requests = v[7];
	c->flash = (uint8_t)(v[8] & 3u);
	c->reenter = (uint8_t)(v[9] != 0);
	c->start = start;
	c->qos = (uint8_t)qos;
	return 1;
}

#endif /* ELV_MODEL_H */
