/*
 * The queue: request lifecycle, validation, barriers, requeues, streams, stats and tracing.
 * Policies only order requests; everything that must hold whatever the policy lives here.
 *
 * Memory layout inside the host's buffer:
 * [struct elv_queue][hash buckets][start filter][policy state].
 */
#include <string.h>

#include "elv_internal.h"

#define ELV_ALIGN8(x) (((x) + 7u) & ~(size_t)7u)
#define ELV_DEFAULT_NR_REQUESTS 128u
#define ELV_RQ_FLAGS_ALL 0x3fu
/* The flags elv_add_suspect() lets through without a closer look: all of them, but the barrier
 * in a build without barriers, which elv_add_check() refuses. */
#if defined(ELV_NO_BARRIER)
#define ELV_RQ_FLAGS_PLAIN (ELV_RQ_FLAGS_ALL & ~(unsigned)ELV_RQ_BARRIER)
#else
#define ELV_RQ_FLAGS_PLAIN ELV_RQ_FLAGS_ALL
#endif

/* ---- small helpers ------------------------------------------------------------------- */

#if !defined(ELV_NO_TRACE)
void elv_trace_emit(struct elv_queue *q, uint8_t type, const struct elv_request *rq,
		    const struct elv_request *other, uint64_t arg, uint64_t now)
{
	struct elv_trace_event ev;

	ev.now = now - q->time_offset; /* the host's timeline */
	ev.arg = arg;
	ev.rq = rq;
	ev.other = other;
	ev.type = type;
	ev.reserved8[0] = ev.reserved8[1] = ev.reserved8[2] = 0;
	ev.size = (uint32_t)sizeof(ev);
	ELV_CALLBACK(q, q->cfg.trace(q->cfg.ctx, &ev));
}
#endif

/*
 * Steps back of the host's clock up to this many ns are taken as skew between unsynchronised
 * clocks: the queue's time waits for the host's to catch up. A larger step is a clock set
 * back: waiting for it would hold requests for the whole step, so the queue's time goes on
 * from where it was at the pace of the host's clock.
 */
#ifndef ELV_TIME_SKEW_MAX_NS
#define ELV_TIME_SKEW_MAX_NS (10u * ELV_NSEC_PER_MSEC)
#endif

/*
 * Queue time @t is before q->now: the host's clock went back (see ELV_TIME_SKEW_MAX_NS), or
 * this is the first time the queue sees, which nothing comes before.
 */
static ELV_COLD uint64_t elv_clock_back(struct elv_queue *q, uint64_t t)
{
	if (!q->clock_set) {
		q->clock_set = 1;
		q->now = t;
		return t;
	}
	if (q->now - t > ELV_TIME_SKEW_MAX_NS)
		q->time_offset += q->now - t;
	return q->now;
}

/*
 * The queue time a call works at, for host time @now: never earlier than any time the queue
 * has seen, so policies never see time run backwards. Call it once the call's arguments are
 * known to be valid: a refused call changes nothing.
 */
static inline uint64_t elv_clock(struct elv_queue *q, uint64_t now)
{
	uint64_t t = now + q->time_offset;

	if (ELV_UNLIKELY(elv_time_before(t, q->now)))
		return elv_clock_back(q, t);
	q->now = t;
	q->clock_set = 1; /* a store, cheaper than testing it on every call */
	return t;
}

/*
 * The gate's verdict for attaching an admission stage (zone.c, qos.c, stage.c): ELV_ENOSYS
 * on an open queue where the core was built without stage paths. Out of line, so that a
 * build with ELV_NO_STAGES keeps the attach calls' code whole (and checked) behind it.
 */
int elv_stage_gate_err(const struct elv_queue *q)
{
	int err = elv_gate_err(q);

#if defined(ELV_NO_STAGES)
	if (!err)
		err = ELV_ENOSYS;
#endif
	return err;
}

/* elv_clock() for the rest of the core (group.c, stream.c). */
uint64_t elv_queue_clock(struct elv_queue *q, uint64_t now)
{
	return elv_clock(q, now);
}

/* The request leaves the library: the host owns it again. */
void elv_rq_release(struct elv_queue *q, struct elv_request *rq)
{
	(void)q;
	if (rq->stream)
		rq->stream->nr_rq--;
	rq->state = ELV_RQ_IDLE;
}

/* Hash buckets of a queue built with @cfg. */
static uint32_t elv_cfg_buckets(const struct elv_config *cfg)
{
	return elv_hash_buckets_for(cfg && cfg->nr_requests ? cfg->nr_requests
							    : ELV_DEFAULT_NR_REQUESTS);
}

/* Bytes before the policy state: the queue, its hash buckets and the start filter. */
static size_t elv_header_size(uint32_t nr_buckets)
{
#if defined(ELV_NO_MERGE)
	(void)nr_buckets; /* no merges: no hash */
	return ELV_ALIGN8(sizeof(struct elv_queue));
#else
	return ELV_ALIGN8(sizeof(struct elv_queue)) +
	       ELV_ALIGN8((size_t)nr_buckets * sizeof(struct elv_request *)) +
	       ELV_ALIGN8((size_t)nr_buckets * ELV_HASH_STARTS);
#endif
}

/* 1 when @mag * @scale does not fit an int64 (without a 64-bit division where possible). */
static int elv_scale_overflows(uint64_t mag, uint32_t scale)
{
#if defined(__GNUC__)
	uint64_t r;

	return __builtin_mul_overflow(mag, (uint64_t)scale, &r) || r > (uint64_t)INT64_MAX;
#else
	return mag > elv_div64((uint64_t)INT64_MAX, scale);
#endif
}

/* Every entry must fit in the state, scale without overflow and hold its default. */
static int elv_tunables_ok(const struct elv_policy *p)
{
	const struct elv_tunable *t = p->tunables;
	const struct elv_tunable *end;
	uint64_t lo, hi;

	if (!p->nr_tunables)
		return 1;
	if (!t)
		return 0;
	for (end = t + p->nr_tunables; t < end; t++) {
		/* The largest |value| accepted is the larger of |min| and |max|. */
		lo = t->min < 0 ? 0 - (uint64_t)t->min : 0;
		hi = t->max > 0 ? (uint64_t)t->max : 0;
		if (!t->name || t->scale == 0 || (t->offset & 7u) ||
		    (size_t)t->offset + sizeof(int64_t) > p->data_size || t->min > t->def ||
		    t->def > t->max || elv_scale_overflows(lo > hi ? lo : hi, t->scale))
			return 0;
	}
	return 1;
}

/* A policy built against this header (all hooks present in its struct) and well formed. */
static int elv_policy_ok(const struct elv_policy *p)
{
	return p && p->abi == ELV_POLICY_ABI && p->struct_size >= sizeof(struct elv_policy) &&
	       p->name && p->add && p->remove && p->dispatch && p->oldest &&
	       (p->nr_stats == 0 || p->stat_names) && elv_tunables_ok(p);
}

/* nr_requests sizes the hash; past this the buffer arithmetic could wrap on 32-bit. */
#define ELV_MAX_NR_REQUESTS (1u << 24)

static int elv_config_ok(const struct elv_config *cfg)
{
	return !cfg || ((cfg->no_merges | cfg->dev.rotational | cfg->dev.zoned) <= 1 &&
			(cfg->reserved8[0] | cfg->reserved8[1] | cfg->reserved8[2]) == 0 &&
			(cfg->reserved[0] | cfg->reserved[1] | cfg->reserved[2]) == 0 &&
			cfg->nr_requests <= ELV_MAX_NR_REQUESTS);
}

/* ---- queue lifecycle ----------------------------------------------------------------- */

size_t elv_queue_size(const struct elv_policy *p, const struct elv_config *cfg)
{
	return elv_policy_ok(p) ? elv_queue_size_data(p->data_size, cfg) : 0;
}

/* Header, merge hash and @data_size bytes of policy state. */
size_t elv_queue_size_data(size_t data_size, const struct elv_config *cfg)
{
	return elv_config_ok(cfg) ? elv_header_size(elv_cfg_buckets(cfg)) + ELV_ALIGN8(data_size)
				  : 0;
}

/* Whether a merge must ask anyone: the policy, the host or an attached stage. */
void elv_merge_veto_update(struct elv_queue *q)
{
	q->merge_veto = (uint8_t)(q->policy->allow_merge != NULL || q->cfg.allow_merge != NULL
#if !defined(ELV_NO_STAGES)
				  || q->stages != 0
#endif
	);
}

/* Give the policy fresh state: zeroed, tunables at their defaults, then its init hook. */
static void elv_policy_start(struct elv_queue *q, const struct elv_policy *p)
{
	q->policy = p;
	q->add = p->add;
	q->dispatch = p->dispatch;
	q->complete = p->complete;
	q->find_next = p->find_next;
	q->find_start = p->find_start;
	/*
	 * The start filter pays off for tree searches (find_next); a find_start such as noop's
	 * looks at one request, which costs less than keeping the filter.
	 */
#if !defined(ELV_NO_FRONT_MERGE)
	elv_hash_use_starts(&q->hash, p->find_next != NULL);
#endif
	elv_merge_veto_update(q);
	memset(q->data, 0, p->data_size);
	elv_tunables_reset(q->data, p->tunables, p->nr_tunables);
	if (p->init)
		p->init(q);
}

int elv_queue_init(struct elv_queue **out, void *mem, size_t len, const struct elv_policy *p,
		   const struct elv_config *cfg)
{
	size_t need = elv_queue_size(p, cfg); /* 0: bad policy or configuration */
	uint32_t nr = elv_cfg_buckets(cfg);
	size_t hdr = elv_header_size(nr);
	struct elv_queue *q = mem;
	char *buckets;

	if (!out || !mem || ((uintptr_t)mem & 7u) || !need)
		return ELV_EINVAL;
	if (len < need)
		return ELV_ENOSPC;
#if defined(ELV_NO_TRACE)
	/* Built without tracing, a trace callback would never be called: refused, not ignored. */
	if (cfg && cfg->trace)
		return ELV_ENOSYS;
#endif
	buckets = (char *)mem + ELV_ALIGN8(sizeof(struct elv_queue));
	memset(q, 0, sizeof(*q));
	if (cfg)
		q->cfg = *cfg;
	if (!q->cfg.nr_requests)
		q->cfg.nr_requests = ELV_DEFAULT_NR_REQUESTS;
#if defined(ELV_NO_MERGE)
	(void)buckets;
#else
	elv_hash_init(&q->hash, (struct elv_request **)(void *)buckets,
		      (uint8_t *)buckets + ELV_ALIGN8((size_t)nr * sizeof(struct elv_request *)),
		      nr);
#endif
	q->mem_len = len;
	q->data = (char *)mem + hdr;
	q->data_room = len - hdr;
	elv_list_init(&q->requeue);
	elv_list_init(&q->held);
	elv_list_init(&q->streams);
	elv_list_init(&q->groups);
	elv_policy_start(q, p);
	*out = q;
	return 0;
}

int elv_queue_exit(struct elv_queue *q)
{
	int err = elv_gate_err(q);

	if (err)
		return err;
	if (q->nr_queued || q->nr_held || q->nr_requeued || q->nr_in_flight || q->nr_staged ||
	    !elv_list_empty(&q->streams) || !elv_list_empty(&q->groups))
		return ELV_EBUSY;
	if (q->idling)
		elv_idle_stop(q, q->idle_since);
	q->policy = NULL;
	q->gate = ELV_GATE_EXITED; /* every later call is refused until the memory is reused */
	return 0;
}

const struct elv_policy *elv_queue_policy(const struct elv_queue *q)
{
	return q ? q->policy : NULL;
}

void *elv_queue_data(const struct elv_queue *q)
{
	return q->data;
}

const struct elv_config *elv_queue_config(const struct elv_queue *q)
{
	return &q->cfg;
}

uint32_t elv_queue_nr_queued(const struct elv_queue *q)
{
	return q->nr_queued;
}

uint32_t elv_queue_nr_in_flight(const struct elv_queue *q)
{
	return q->nr_in_flight;
}

/* ---- adding -------------------------------------------------------------------------- */

/* The zone operations and the zone-append flag exist only on a queue with a zone stage. */
static int elv_zone_rq_ok(const struct elv_queue *q, const struct elv_request *rq)
{
#if defined(ELV_NO_STAGES)
	(void)q;
	(void)rq;
	return 0; /* no zone stage can be attached */
#else
	return q->stage[ELV_STAGE_ZONE].ops && rq->op <= ELV_OP_ZONE_FINISH &&
	       !(rq->flags & ~(ELV_RQ_FLAGS_ALL | ELV_RQ_ZONE_APPEND));
#endif
}

/* The exact verdict on a request elv_add_suspect() flagged (rare: nearly always an error). */
static ELV_COLD int elv_add_check(const struct elv_queue *q, const struct elv_request *rq)
{
	if (rq->state != ELV_RQ_IDLE)
		return rq->state <= ELV_RQ_DISPATCHED ? ELV_EBUSY : ELV_EINVAL;
	if ((rq->op > ELV_OP_FLUSH || (rq->flags & ~ELV_RQ_FLAGS_ALL)) && !elv_zone_rq_ok(q, rq))
		return ELV_EINVAL;
	if (!elv_prio_ok(rq->ioprio))
		return ELV_EINVAL;
	if (rq->nr_sectors == 0 && rq->op != ELV_OP_FLUSH)
		return ELV_EINVAL;
	if (rq->nr_sectors > UINT64_MAX - rq->sector)
		return ELV_EOVERFLOW;
	if (rq->stream && !elv_stream_of(q, rq->stream))
		return ELV_EINVAL;
#if defined(ELV_NO_BARRIER)
	/* A build without barriers cannot keep a barrier's order: it refuses the request whole
	 * rather than pass it on unordered (elevator.h, ELV_NO_BARRIER). */
	if (rq->flags & ELV_RQ_BARRIER)
		return ELV_ENOSYS;
#endif
	return 0;
}

_Static_assert(offsetof(struct elv_request, flags) == offsetof(struct elv_request, op) + 1 &&
		       offsetof(struct elv_request, ioprio) == offsetof(struct elv_request, op) + 2 &&
		       offsetof(struct elv_request, state) == offsetof(struct elv_request, op) + 3,
	       "op, flags, ioprio and state must be adjacent bytes");

/*
 * Could @rq be invalid for elv_add()? One load covers op, flags, ioprio and state: the mask
 * has the bits no valid new request has (op above ELV_OP_FLUSH, an unknown flag or, built
 * without barriers, the barrier flag, a priority of 32 or more, any state but idle), byte by byte, so it holds on either byte order. A zero
 * length (valid only for flushes) and a sum past 2^64 are suspect too; elv_add_check() then
 * gives the exact verdict, so no invalid request gets through and no valid one is refused.
 */
static inline int elv_add_suspect(const struct elv_queue *q, const struct elv_request *rq)
{
	static const union {
		uint8_t b[4]; /* cppcheck-suppress unusedStructMember */
		uint32_t w;
	} bad = { { 0xfcu, (uint8_t)~ELV_RQ_FLAGS_PLAIN, 0xe0u, 0xffu } };
	const struct elv_stream *s = rq->stream;
	uint32_t w;

	memcpy(&w, (const char *)rq + offsetof(struct elv_request, op), sizeof(w));
	return (w & bad.w) != 0 || rq->nr_sectors == 0 || rq->sector + rq->nr_sectors < rq->sector ||
	       (s && (s->q != q || !(s->flags & ELV_STREAM_REGISTERED)));
}

/* Hand a request to the policy (new, released from behind a barrier, or switched over). */
static inline void elv_policy_add(struct elv_queue *q, struct elv_request *rq, uint64_t now)
{
	rq->state = ELV_RQ_QUEUED;
	if (elv_rq_mergeable(rq))
		elv_hash_add(&q->hash, rq);
	else
		rq->hlink.owner = q;
	q->nr_queued++;
	q->add(q, rq, now);
}

#if !defined(ELV_NO_CANCEL) || !defined(ELV_NO_SWITCH)
static void elv_policy_remove(struct elv_queue *q, struct elv_request *rq)
{
	q->policy->remove(q, rq);
	if (elv_rq_mergeable(rq))
		elv_hash_del(&q->hash, rq);
	q->nr_queued--;
}
#endif

/*
 * A mergeable request meets the queued ones: back merge through the hash (key @ks of its start
 * granule), else front merge through the policy's lookup unless the start filter proves that
 * nothing starts where it ends. 1 when it was absorbed; else *@ke is the key of its end granule.
 */
static ELV_SPEED_INLINE int elv_merge_on_add(struct elv_queue *q, struct elv_request *rq,
					     uint32_t ks, uint32_t *ke)
{
	struct elv_request *c = elv_hash_find_k(&q->hash, rq->sector, ks);

	if (c && elv_merge_back_from(q, c, rq))
		return 1;
	*ke = elv_hash_key(elv_rq_end(rq));
#if defined(ELV_NO_FRONT_MERGE)
	return 0;
#else
	if (q->hash.starts && *elv_hash_start_k(&q->hash, *ke) == 0)
		return 0;
	if (q->find_next)
		c = q->find_next(q, rq);
	else
		c = q->find_start ? q->find_start(q, elv_rq_end(rq), rq->op) : NULL;
	return c && elv_merge_front_into(q, c, rq);
#endif
}

/*
 * A new request, or one released from behind a barrier, joins a queued one if it can, else
 * goes to the policy: 1 when it was absorbed (and already handed back through the merge
 * callback). The keys of its start and end granules serve the lookups and the insertion.
 */
static ELV_SPEED_INLINE int elv_enqueue(struct elv_queue *q, struct elv_request *rq,
					uint64_t now)
{
	uint32_t ks, ke;

	if (!elv_rq_mergeable(rq)) {
		elv_policy_add(q, rq, now);
		return 0;
	}
	ks = elv_hash_key(rq->sector);
	if (!q->cfg.no_merges) {
		if (elv_merge_on_add(q, rq, ks, &ke))
			return 1;
	} else {
		ke = elv_hash_key(elv_rq_end(rq));
	}
	rq->state = ELV_RQ_QUEUED;
	elv_hash_insert_k(&q->hash, rq, ks, ke);
	q->nr_queued++;
	q->add(q, rq, now);
	return 0;
}

#if !defined(ELV_NO_BARRIER)
/* Ordered: wait on the held list until everything added before it has gone. */
static ELV_COLD int elv_add_held(struct elv_queue *q, struct elv_request *rq)
{
	rq->state = ELV_RQ_HELD;
	rq->hlink.owner = q;
	elv_list_add_tail(&q->held, &rq->fifo);
	q->nr_held++;
	q->nr_barriers += (rq->flags & ELV_RQ_BARRIER) ? 1u : 0u;
	return 0;
}
#endif

/* A request leaving the stages goes on: behind a pending barrier, or to the policy. */
static ELV_SPEED_INLINE int elv_stage_enqueue_in(struct elv_queue *q, struct elv_request *rq,
						 uint64_t now)
{
#if !defined(ELV_NO_BARRIER)
	if (ELV_UNLIKELY((rq->flags & ELV_RQ_BARRIER) || q->nr_held))
		return elv_add_held(q, rq);
#endif
	return elv_enqueue(q, rq, now);
}

int elv_stage_enqueue(struct elv_queue *q, struct elv_request *rq, uint64_t now)
{
	return elv_stage_enqueue_in(q, rq, now);
}

#if !defined(ELV_NO_STAGES) && !defined(__OPTIMIZE_SIZE__)
/*
 * The pump of a queue with one stage, @s, once it may release a request: no later stage
 * admits what it lets go, which goes straight on (stage.c's elv_stages_release() for that
 * case, with the hand-over inlined). For speed only: a size build calls stage.c's pump.
 */
static ELV_ALWAYS_INLINE void elv_stage_release_sole(struct elv_queue *q, struct elv_stage *s,
						     uint64_t now)
{
	struct elv_request *rq;

	while ((rq = s->ops->release(q, now)) != NULL) {
		s->nr_held--;
		q->nr_staged--;
		elv_stage_enqueue_in(q, rq, now);
		if (!elv_stage_may_release(q, s))
			break;
	}
}
#endif

#if !defined(ELV_NO_STAGES)
/*
 * Stages hold requests: let those they may release go on. With one stage the test comes
 * first, so that a dispatch while it waits for room makes no call. The release is inlined at
 * a dispatch too: a stage that waits for time (a throttle) lets its requests go at the
 * dispatch the host makes at elv_next_event()'s time, where a call would cost more than the
 * register the inlined loop takes from a dispatch that finds no room.
 */
static ELV_SPEED_INLINE void elv_stages_pump(struct elv_queue *q, uint64_t now)
{
#if !defined(__OPTIMIZE_SIZE__) /* a copy of stage.c's pump for one stage: for speed */
	if (q->stage_sole) {
		struct elv_stage *s = &q->stage[q->stage_sole - 1u];

		if (!elv_stage_has_room(q, s)) /* it holds every staged request: some */
			return;
		elv_stage_release_sole(q, s, now);
		return;
	}
#endif
	q->stage_vt->pump(q, now);
}
#endif

/*
 * The stages hear how a request they passed on came back. Defined with its name in
 * parentheses so that a test build may wrap the calls in a macro (tests/model/plant_queue.c
 * drops failures on their way, to prove the model checker notices).
 */
static inline void(elv_stages_completed)(struct elv_queue *q, struct elv_request *rq, int status,
					 uint64_t now)
{
	q->stage_vt->completed(q, rq, status, now);
}

/* The stages admitted @rq (rq->time and rq->seq set): it is the library's from now on. */
static ELV_SPEED_INLINE void elv_add_accept_in(struct elv_queue *q, struct elv_request *rq,
					       uint64_t now)
{
	q->seq++;
	ELV_STAT_ADD(q, added, 1);
	if (rq->stream)
		rq->stream->nr_rq++;
	elv_trace(q, ELV_TRACE_INSERT, rq, NULL, 0, now);
}

void elv_add_accept(struct elv_queue *q, struct elv_request *rq, uint64_t now)
{
	elv_add_accept_in(q, rq, now);
}

/*
 * The paths past the gate's test that a queue with stages takes on every call: out of line,
 * so that the plain paths save no registers for them, but optimised for speed. Without
 * stage paths only errors reach them.
 */
#if defined(ELV_NO_STAGES) || !defined(__GNUC__)
#define ELV_STAGED_PATH ELV_COLD
#else
#define ELV_STAGED_PATH __attribute__((noinline))
#endif

/*
 * 1 when elv_add() and elv_dispatch() answer a NULL queue or request pointer themselves, so
 * that their staged paths, entered with both set, do not test them again: speed builds (the
 * plain path runs as many tests, with two targets instead of one). Size builds keep one test
 * with one target, and the staged paths tell the cases apart.
 */
#if defined(__OPTIMIZE_SIZE__)
#define ELV_ENTRY_PTRS 0
#else
#define ELV_ENTRY_PTRS 1
#endif

#if !defined(ELV_NO_STAGES) && !defined(__OPTIMIZE_SIZE__)
/*
 * elv_add() on a queue with one stage, in @slot, that has no validate hook (the usual QoS
 * set-up): its admit is the only step that may refuse, and a refusal there changes nothing.
 * The queue's clock moves only once admit has taken the request (admit works at the time it
 * is given, stage.c), so a refusal leaves nothing to put back; a host time that runs back
 * takes stage.c's add, which saves the clock. No validate pass, no loop over the slots.
 */
static ELV_SPEED_INLINE int elv_add_one_stage(struct elv_queue *q, struct elv_request *rq,
					      uint64_t now, unsigned slot)
{
	uint64_t t = now + q->time_offset;
	int r;

	if (ELV_UNLIKELY(elv_time_before(t, q->now)))
		return q->stage_vt->add(q, rq, now);
	rq->time = t;
	rq->seq = q->seq;
	r = q->stage[slot].ops->admit(q, rq, t);
	if (ELV_UNLIKELY(r < 0))
		return r;
	q->now = t; /* elv_clock() at t, now that the call succeeds */
	q->clock_set = 1;
	now = t;
	if (r == ELV_STAGE_HELD)
		elv_stage_took(q, slot, rq);
	elv_add_accept_in(q, rq, now);
	return r == ELV_STAGE_HELD ? 0 : elv_stage_enqueue_in(q, rq, now);
}
#endif

/* elv_add() past the gate's test: a bad argument (size builds only, see ELV_ENTRY_PTRS), a
 * closed gate, or stages attached. */
static ELV_STAGED_PATH int elv_add_slow(struct elv_queue *q, struct elv_request *rq, uint64_t now)
{
#if defined(ELV_NO_STAGES)
	/* No stage is ever attached, so the gate is open or refuses: only errors come here. */
	(void)now;
	return rq ? elv_gate_err(q) : ELV_EINVAL;
#else
	int err;

#if defined(__OPTIMIZE_SIZE__)
	err = rq ? elv_gate_err(q) : ELV_EINVAL;
	if (err)
		return err;
#else
	/* The same verdicts, for speed: @q and @rq are set (elv_add() tested them), so only a
	 * closed gate is left to refuse. */
	if (ELV_UNLIKELY(q->gate > ELV_GATE_STAGED))
		return elv_gate_err(q);
#endif
	if (elv_add_suspect(q, rq) && (err = elv_add_check(q, rq)) != 0)
		return err;
#if !defined(__OPTIMIZE_SIZE__) /* a copy of the add path: for speed, not for size */
	if (q->stage_one)
		return elv_add_one_stage(q, rq, now, q->stage_one - 1u);
#endif
	return q->stage_vt->add(q, rq, now);
#endif
}

int elv_add(struct elv_queue *q, struct elv_request *rq, uint64_t now)
{
	int err;

#if ELV_ENTRY_PTRS
	if (ELV_UNLIKELY(!q || !rq))
		return ELV_EINVAL;
	if (ELV_UNLIKELY(q->gate != ELV_GATE_OPEN))
#else
	if (ELV_UNLIKELY(!q || !rq || q->gate != ELV_GATE_OPEN))
#endif
		return elv_add_slow(q, rq, now);
	if (ELV_UNLIKELY(elv_add_suspect(q, rq))) {
		err = elv_add_check(q, rq);
		if (err)
			return err;
	}
	now = elv_clock(q, now);
	rq->time = now;
	rq->seq = q->seq++;
	ELV_STAT_ADD(q, added, 1);
	if (rq->stream)
		rq->stream->nr_rq++;
	elv_trace(q, ELV_TRACE_INSERT, rq, NULL, 0, now);
#if !defined(ELV_NO_BARRIER)
	if (ELV_UNLIKELY((rq->flags & ELV_RQ_BARRIER) || q->nr_held))
		return elv_add_held(q, rq);
#endif
	return elv_enqueue(q, rq, now);
}

#if !defined(ELV_NO_BARRIER)
/* The head barrier left: let the requests behind it, up to the next barrier, reach the policy. */
static void elv_release_held(struct elv_queue *q)
{
	struct elv_request *rq;

	while ((rq = elv_list_first_rq(&q->held)) && !(rq->flags & ELV_RQ_BARRIER)) {
		elv_list_del(&rq->fifo);
		q->nr_held--;
		elv_enqueue(q, rq, q->now);
	}
}
#endif

/* ---- dispatch and completion --------------------------------------------------------- */

/* Ask the policy; a waiting barrier must not be held up by idling. */
static inline struct elv_request *elv_pick_policy(struct elv_queue *q, uint64_t now, int force)
{
	struct elv_request *rq = q->dispatch(q, now, force | (q->nr_held != 0));

	if (rq) {
		if (elv_rq_mergeable(rq))
			elv_hash_del(&q->hash, rq);
		rq->hlink.owner = q; /* lets complete/requeue refuse another queue's request */
		q->nr_queued--;
	}
	return rq;
}

/* The uncommon sources: a requeued request first, else a barrier once the policy is empty. */
static ELV_COLD struct elv_request *elv_pick_slow(struct elv_queue *q, uint64_t now, int force)
{
#if !defined(ELV_NO_REQUEUE) || !defined(ELV_NO_BARRIER)
	struct elv_request *rq;
#endif

#if !defined(ELV_NO_REQUEUE)
	rq = elv_list_first_rq(&q->requeue);
	if (rq) {
		elv_list_del(&rq->fifo);
		q->nr_requeued--;
		return rq;
	}
#endif
	if (q->nr_queued)
		return elv_pick_policy(q, now, force);
#if defined(ELV_NO_BARRIER)
	return NULL;
#else
	rq = elv_list_first_rq(&q->held);
	if (rq) {
		/* The policy is empty: the barrier at the head may go, then what follows it. */
		elv_list_del(&rq->fifo);
		q->nr_held--;
		q->nr_barriers--;
		elv_release_held(q);
	}
	return rq;
#endif
}

/* The next request: a requeued one or a barrier through the slow path, else the policy's. */
static ELV_SPEED_INLINE struct elv_request *elv_pick(struct elv_queue *q, uint64_t now,
						      unsigned flags)
{
	if (ELV_LIKELY(elv_list_empty(&q->requeue) && q->nr_queued))
		return elv_pick_policy(q, now, (int)(flags & ELV_DISPATCH_FORCE));
	return elv_pick_slow(q, now, (int)(flags & ELV_DISPATCH_FORCE));
}

/* @rq (NULL: nothing now) goes to the device. */
static ELV_SPEED_INLINE int elv_dispatch_out(struct elv_queue *q, struct elv_request *rq,
					      uint64_t now, struct elv_request **out)
{
	if (!rq)
		return ELV_EAGAIN;
	rq->state = ELV_RQ_DISPATCHED;
	q->nr_in_flight++;
	ELV_STAT_ADD(q, dispatched[elv_rq_dir(rq)], 1);
	elv_trace(q, ELV_TRACE_DISPATCH, rq, NULL, 0, now);
	*out = rq;
	return 0;
}

#if !defined(ELV_NO_STAGES)
/* The stages hold nothing now and none listens: dispatch and complete may go plain again.
 * Named in parentheses so that the model checker's planted build can wrap it in a macro. */
static ELV_ALWAYS_INLINE void(elv_gate_settle)(struct elv_queue *q)
{
	if (!q->nr_staged && q->gate == ELV_GATE_STAGED) /* while they hold some, it stays */
		q->gate = elv_stage_gate(q);
}
#endif

/* elv_dispatch() past the gate's test: a bad argument (a pointer in size builds only, see
 * ELV_ENTRY_PTRS), a closed gate, or stages that hold requests or listen. */
static ELV_STAGED_PATH int elv_dispatch_slow(struct elv_queue *q, uint64_t now, unsigned flags,
					     struct elv_request **out)
{
#if defined(ELV_NO_STAGES)
	/* No stage is ever attached, so the gate is open or refuses: only errors come here. */
	(void)now;
	return out && !(flags & ~(unsigned)ELV_DISPATCH_FORCE) ? elv_gate_err(q) : ELV_EINVAL;
#else
	int err;

#if defined(__OPTIMIZE_SIZE__)
	err = out && !(flags & ~(unsigned)ELV_DISPATCH_FORCE) ? elv_gate_err(q) : ELV_EINVAL;
	if (err)
		return err;
#else
	/* The same verdicts, for speed: @q and @out are set (elv_dispatch() tested them), and
	 * good flags come here only with the gate closed or stages at work. */
	if (ELV_UNLIKELY((flags & ~(unsigned)ELV_DISPATCH_FORCE) || q->gate != ELV_GATE_STAGED))
		return (flags & ~(unsigned)ELV_DISPATCH_FORCE) ? ELV_EINVAL : elv_gate_err(q);
#endif
	/* Stages attached: what they may release joins the policy first. */
	now = elv_clock(q, now);
	if (q->nr_staged)
		elv_stages_pump(q, now);
	elv_gate_settle(q);
#if !defined(__OPTIMIZE_SIZE__) /* elv_pick()'s verdict, early: for speed, not for size */
	/* Nothing past the stages to give (a throttle holds every request until its time, and
	 * the host asks before elv_next_event()'s time): elv_pick() would find nothing, at the
	 * cost of its slow path's call. */
	if (!q->nr_queued && elv_list_empty(&q->requeue) && elv_list_empty(&q->held))
		return ELV_EAGAIN;
#endif
	err = elv_dispatch_out(q, elv_pick(q, now, flags), now, out);
	if (err == 0 && q->stage_hear)
		q->stage_vt->dispatched(q, *out, now);
	return err;
#endif
}

int elv_dispatch(struct elv_queue *q, uint64_t now, unsigned flags, struct elv_request **out)
{
#if ELV_ENTRY_PTRS
	if (ELV_UNLIKELY(!q || !out))
		return ELV_EINVAL;
	if (ELV_UNLIKELY((flags & ~(unsigned)ELV_DISPATCH_FORCE) || q->gate > ELV_GATE_STAGED_ADD))
#else
	if (ELV_UNLIKELY(!q || !out || (flags & ~(unsigned)ELV_DISPATCH_FORCE) ||
			 q->gate > ELV_GATE_STAGED_ADD))
#endif
		return elv_dispatch_slow(q, now, flags, out);
	now = elv_clock(q, now); /* requests released from behind a barrier are added at it */
	return elv_dispatch_out(q, elv_pick(q, now, flags), now, out);
}

/* The host's time of queue time @t (ELV_TIME_NEVER stays): policies and stages keep the
 * queue's time. */
static inline uint64_t elv_host_event(const struct elv_queue *q, uint64_t t)
{
	return t == ELV_TIME_NEVER ? t : elv_time_event(t - q->time_offset);
}

#if !defined(ELV_NO_STAGES) && !defined(__OPTIMIZE_SIZE__)
/*
 * elv_next_event() on a queue with stages, from the policy's time @t: a lone stage is asked
 * through elv_stage_next_event() directly, without the call to stage.c's walk over the slots
 * (for speed; a size build calls the walk). Out of line, so that the plain path saves no
 * register for it.
 */
static ELV_APART uint64_t elv_next_event_staged(const struct elv_queue *q, uint64_t t)
{
	if (q->stage_sole)
		t = elv_stage_next_event(q, &q->stage[q->stage_sole - 1u], t);
	else
		t = q->stage_vt->next_event(q, t);
	return elv_host_event(q, t);
}
#endif

uint64_t elv_next_event(const struct elv_queue *q)
{
	uint64_t t;

	if (!q || q->gate == ELV_GATE_EXITED)
		return ELV_TIME_NEVER;
	t = q->policy->next_event ? q->policy->next_event(q) : ELV_TIME_NEVER;
#if !defined(ELV_NO_STAGES)
	if (ELV_UNLIKELY(q->stages)) {
#if !defined(__OPTIMIZE_SIZE__)
		return elv_next_event_staged(q, t);
#else
		t = q->stage_vt->next_event(q, t);
#endif
	}
#endif
	return elv_host_event(q, t);
}

/*
 * @rq came back from the device (completed or requeued): it must be in flight from @q. On
 * success *@now is the time the call works at.
 */
static ELV_SPEED_INLINE int elv_back_from_device(struct elv_queue *q, struct elv_request *rq,
						 uint64_t *now)
{
	if (ELV_UNLIKELY(!q || q->gate > ELV_GATE_STAGED))
		return elv_gate_err(q);
	if (ELV_UNLIKELY(!rq || rq->state != ELV_RQ_DISPATCHED || rq->hlink.owner != q))
		return ELV_EINVAL;
	*now = elv_clock(q, *now);
	q->nr_in_flight--;
	return 0;
}

#if !defined(ELV_NO_STAGES)
/*
 * Completion with a status, or on a queue with stages: the stages learn the outcome, then
 * what they may release joins the policy.
 */
static ELV_STAGED_PATH int elv_complete_slow(struct elv_queue *q, struct elv_request *rq,
					     int status, uint64_t now)
{
	int err = elv_back_from_device(q, rq, &now);

	if (err)
		return err;
	ELV_STAT_ADD(q, completed, 1);
	if (q->complete)
		q->complete(q, rq, now);
	elv_trace(q, ELV_TRACE_COMPLETE, rq, NULL, (uint64_t)(-(int64_t)status), now);
	if (q->stage_hear)
		elv_stages_completed(q, rq, status, now);
	elv_rq_release(q, rq);
	if (q->nr_staged) /* only a stage that holds requests may release one */
		elv_stages_pump(q, now);
	elv_gate_settle(q);
	return 0;
}

#endif

int elv_complete_status(struct elv_queue *q, struct elv_request *rq, int status, uint64_t now)
{
#if defined(ELV_NO_STAGES)
	/* A status is for the stages (a zone's write pointer): there are none. */
	(void)q;
	(void)rq;
	(void)status;
	(void)now;
	return ELV_ENOSYS;
#else
	if (status > 0)
		return ELV_EINVAL;
	return elv_complete_slow(q, rq, status, now);
#endif
}

int elv_complete(struct elv_queue *q, struct elv_request *rq, uint64_t now)
{
	if (ELV_UNLIKELY(!q || q->gate > ELV_GATE_STAGED_ADD)) /* closed, or stages at work */
#if defined(ELV_NO_STAGES)
		return elv_gate_err(q);
#else
		return elv_complete_slow(q, rq, 0, now);
#endif
	if (ELV_UNLIKELY(!rq || rq->state != ELV_RQ_DISPATCHED || rq->hlink.owner != q))
		return ELV_EINVAL;
	now = elv_clock(q, now);
	q->nr_in_flight--;
	ELV_STAT_ADD(q, completed, 1);
	if (q->complete)
		q->complete(q, rq, now);
	elv_trace(q, ELV_TRACE_COMPLETE, rq, NULL, 0, now);
	elv_rq_release(q, rq);
	return 0;
}

int elv_requeue(struct elv_queue *q, struct elv_request *rq, uint64_t now)
{
#if defined(ELV_NO_REQUEUE)
	(void)q;
	(void)rq;
	(void)now;
	return ELV_ENOSYS;
#else
	int err = elv_back_from_device(q, rq, &now);

	if (err)
		return err;
	ELV_STAT_ADD(q, requeued, 1);
	if (q->policy->requeue)
		q->policy->requeue(q, rq, now);
	rq->state = ELV_RQ_REQUEUED;
	elv_list_add_head(&q->requeue, &rq->fifo);
	q->nr_requeued++;
	elv_trace(q, ELV_TRACE_REQUEUE, rq, NULL, 0, now);
	return 0;
#endif
}

/* ---- cancel, drain, switch ----------------------------------------------------------- */

#if !defined(ELV_NO_CANCEL)
/* Is @rq queued, held or requeued in @q (not in flight, not another queue's)? */
static int elv_owns_pending(const struct elv_queue *q, const struct elv_request *rq)
{
	switch (rq->state) {
	case ELV_RQ_QUEUED:
		return elv_rq_mergeable(rq) ? elv_hash_contains(&q->hash, rq) : rq->hlink.owner == q;
	case ELV_RQ_HELD:
	case ELV_RQ_REQUEUED:
		return rq->hlink.owner == q;
	default:
		return 0;
	}
}

/* Unlink a request that is held, requeued or queued; it is not yet released. */
static void elv_unlink_pending(struct elv_queue *q, struct elv_request *rq)
{
	switch (rq->state) {
	case ELV_RQ_QUEUED:
		elv_policy_remove(q, rq);
		if (q->stage_hear)
			elv_stages_completed(q, rq, ELV_STAGE_WITHDRAWN, q->now);
		break;
	case ELV_RQ_REQUEUED:
		elv_list_del(&rq->fifo);
		q->nr_requeued--;
		if (q->stage_hear)
			elv_stages_completed(q, rq, ELV_STAGE_WITHDRAWN, q->now);
		break;
	default: /* ELV_RQ_HELD: by a stage, or behind a barrier */
		if (q->stages && q->stage_vt->cancel(q, rq) == 0)
			break;
#if !defined(ELV_NO_BARRIER)
	{
		int head_barrier = elv_list_first_rq(&q->held) == rq;

		elv_list_del(&rq->fifo);
		q->nr_held--;
		if (rq->flags & ELV_RQ_BARRIER) {
			q->nr_barriers--;
			/* Nothing orders the requests behind a cancelled head barrier any more. */
			if (head_barrier)
				elv_release_held(q);
		}
		if (q->stage_hear)
			elv_stages_completed(q, rq, ELV_STAGE_WITHDRAWN, q->now);
	}
#endif
		break;
	}
}

/* An unlinked pending request goes back to the host unserved. */
static void elv_cancelled(struct elv_queue *q, struct elv_request *rq)
{
	ELV_STAT_ADD(q, cancelled, 1);
	elv_trace(q, ELV_TRACE_CANCEL, rq, NULL, 0, q->now);
	elv_rq_release(q, rq);
}
#endif

int elv_cancel(struct elv_queue *q, struct elv_request *rq)
{
#if defined(ELV_NO_CANCEL)
	(void)q;
	(void)rq;
	return ELV_ENOSYS;
#else
	int err = elv_gate_err(q);

	if (err)
		return err;
	if (!rq || !elv_owns_pending(q, rq))
		return ELV_EINVAL;
	elv_unlink_pending(q, rq);
	elv_cancelled(q, rq);
	return 0;
#endif
}

#if !defined(ELV_NO_CANCEL) || !defined(ELV_NO_SWITCH)
/* Take every request from the policy, oldest first, onto @list (through the FIFO link). */
static void elv_policy_take_all(struct elv_queue *q, struct elv_list *list)
{
	struct elv_request *rq;

	while (q->nr_queued && (rq = q->policy->oldest(q)) != NULL) {
		elv_policy_remove(q, rq);
		elv_list_add_tail(list, &rq->fifo);
	}
}
#endif

#if !defined(ELV_NO_CANCEL)
/*
 * Cancel every request on @list, in order, handing each to @fn; returns how many. @passed:
 * the stages passed them on (requeued, the policy's, behind a barrier) and must hear of it.
 */
static int elv_drain_list(struct elv_queue *q, struct elv_list *list, elv_drain_fn fn, void *arg,
			  int passed)
{
	struct elv_request *rq;
	int n = 0;

	while ((rq = elv_list_first_rq(list)) != NULL) {
		elv_list_del(&rq->fifo);
		/* One the stages passed on leaves unserved: they must know (a zone's pointer). */
		if (passed && q->stage_hear)
			elv_stages_completed(q, rq, ELV_STAGE_WITHDRAWN, q->now);
		elv_cancelled(q, rq);
		ELV_CALLBACK(q, fn(arg, rq));
		n++;
	}
	return n;
}
#endif

int elv_drain(struct elv_queue *q, elv_drain_fn fn, void *arg)
{
#if defined(ELV_NO_CANCEL)
	(void)q;
	(void)fn;
	(void)arg;
	return ELV_ENOSYS;
#else
	int n = elv_gate_err(q);

	if (n)
		return n;
	if (!fn)
		return ELV_EINVAL;
	/* Requeued first, then the policy's requests oldest first, then the held ones. */
	elv_policy_take_all(q, &q->requeue);
	q->nr_requeued = 0;
	q->nr_held = 0;
	q->nr_barriers = 0;
	n = elv_drain_list(q, &q->requeue, fn, arg, 1);
	n += elv_drain_list(q, &q->held, fn, arg, 1);
	if (q->stages) {
		struct elv_list staged;

		elv_list_init(&staged);
		q->stage_vt->take_all(q, &staged);
		n += elv_drain_list(q, &staged, fn, arg, 0);
	}
	if (q->idling)
		elv_idle_stop(q, q->now);
	return n;
#endif
}

int elv_switch(struct elv_queue *q, const struct elv_policy *p, uint64_t now)
{
#if defined(ELV_NO_SWITCH)
	(void)q;
	(void)p;
	(void)now;
	return ELV_ENOSYS;
#else
	struct elv_list tmp;
	struct elv_list *l;
	struct elv_request *rq;
	int err = elv_gate_err(q);

	if (err)
		return err;
	if (!elv_policy_ok(p))
		return ELV_EINVAL;
	if (ELV_ALIGN8(p->data_size) > q->data_room)
		return ELV_ENOSPC;
	now = elv_clock(q, now);
	elv_list_init(&tmp);
	elv_policy_take_all(q, &tmp);
	if (q->idling)
		elv_idle_stop(q, now);
	for (l = q->streams.next; l != &q->streams; l = l->next)
		if (q->policy->stream_exit)
			q->policy->stream_exit(q, elv_container_of(l, struct elv_stream, link),
					       now);
	elv_groups_exit(q, now);
	elv_policy_start(q, p);
	elv_groups_start(q, now);
	for (l = q->streams.next; l != &q->streams; l = l->next) {
		struct elv_stream *s = elv_container_of(l, struct elv_stream, link);

		memset(&s->priv, 0, sizeof(s->priv));
		if (p->stream_init)
			p->stream_init(q, s, now);
	}
	while ((rq = elv_list_first_rq(&tmp)) != NULL) {
		elv_list_del(&rq->fifo);
		elv_policy_add(q, rq, now);
	}
	return 0;
#endif
}

/* ---- stats and idling ---------------------------------------------------------------- */

int elv_stats(const struct elv_queue *q, struct elv_stats *st)
{
#if defined(ELV_NO_STATS)
	(void)q;
	(void)st;
	return ELV_ENOSYS;
#else
	if (!q || !st || q->gate == ELV_GATE_EXITED)
		return ELV_EINVAL;
	*st = q->stats;
	st->queued = q->nr_queued + q->nr_held + q->nr_requeued + q->nr_staged;
	st->in_flight = q->nr_in_flight;
	return 0;
#endif
}

int elv_policy_stat(const struct elv_queue *q, unsigned i, const char **name, uint64_t *value)
{
#if defined(ELV_NO_STATS)
	(void)q;
	(void)i;
	(void)name;
	(void)value;
	return ELV_ENOSYS;
#else
	uint64_t vals[32];

	if (!q || !name || !value || q->gate == ELV_GATE_EXITED)
		return ELV_EINVAL;
	if (i >= q->policy->nr_stats || !q->policy->stats || q->policy->nr_stats > 32)
		return ELV_ENOENT;
	q->policy->stats(q, vals);
	*name = q->policy->stat_names[i];
	*value = vals[i];
	return 0;
#endif
}

void elv_note_expired(struct elv_queue *q, const struct elv_request *rq, uint64_t now)
{
	ELV_STAT_ADD(q, expired, 1);
	elv_trace(q, ELV_TRACE_EXPIRE, rq, NULL, 0, now);
}

void elv_idle_start(struct elv_queue *q, uint64_t now)
{
	if (q->idling)
		return;
	q->idling = 1;
	q->idle_since = now;
	ELV_STAT_ADD(q, idle_count, 1);
	elv_trace(q, ELV_TRACE_IDLE_START, NULL, NULL, 0, now);
}

void elv_idle_stop(struct elv_queue *q, uint64_t now)
{
	uint64_t d;

	if (!q->idling)
		return;
	q->idling = 0;
	d = elv_time_after(now, q->idle_since) ? now - q->idle_since : 0;
	ELV_STAT_ADD(q, idle_ns, d);
	elv_trace(q, ELV_TRACE_IDLE_STOP, NULL, NULL, d, now);
}

int elv_is_idling(const struct elv_queue *q)
{
	return q->idling;
}
