/*
 * Library-internal declarations: the queue layout, the back-merge hash, merge rules and the
 * built-in policy table. Never installed.
 */
#ifndef ELV_INTERNAL_H
#define ELV_INTERNAL_H

#ifndef ELV_ALLOW_PRIVATE_ACCESS
#define ELV_ALLOW_PRIVATE_ACCESS
#endif
#include "elevator/policy.h"

/*
 * Back-merge hash keyed by end sector; singly linked chains through rq->hlink.next, new
 * requests at the head. No chain holds more than ELV_HASH_CHAIN_MAX requests: when one more
 * arrives, the request at the tail (hashed there the longest ago) is evicted, so every
 * lookup, insertion and removal walks at most that many links however far the queue outgrows
 * nr_requests. An evicted request stays queued and may still take a front merge; it is no
 * longer found for a back merge, and its hlink holds the hash's address with bit 0 set, so
 * that removing it costs no walk. The ELV_HASH_CHAIN_MAX requests most recently hashed are
 * always in the hash (fewer than that came after them into any chain).
 *
 * Beside it, a counting filter of the start sectors of the same requests, evicted ones
 * included (ELV_HASH_STARTS per bucket): a zero counter proves that no mergeable queued
 * request starts in that 4 KiB granule, so a front-merge lookup there would find nothing and
 * is skipped. Counters stick at 255 (then they only cost a lookup that finds nothing).
 * @starts is NULL while the policy's own lookup is cheaper than keeping the filter (noop looks
 * at one request); elv_policy_start() decides, when the hash is empty.
 */
#define ELV_HASH_STARTS 4u
#define ELV_HASH_STARTS_SHIFT 2u /* log2(ELV_HASH_STARTS) */
#define ELV_HASH_CHAIN_MAX 8u    /* longest chain: bounds every walk */
struct elv_hash {
	struct elv_request **buckets;
	uint8_t *starts;     /* the filter in use, or NULL */
	uint8_t *starts_mem; /* its memory: ELV_HASH_STARTS bytes per bucket */
	uint32_t mask;  /* buckets - 1 */
	uint32_t shift; /* 32 - log2(buckets): the top bits of the product pick the bucket */
	uint32_t nr_evicted; /* queued mergeable requests left out of full chains */
};

/* Stream flags (private). */
#define ELV_STREAM_REGISTERED 1u
/* Group flags (private). */
#define ELV_GROUP_REGISTERED 1u

struct elv_queue {
	/* The public head, struct elv_queue_head in policy.h: the same members in that order. */
	void *data;              /* policy state, inside the queue's memory */
	uint32_t nr_queued;      /* held by the policy */
	uint32_t nr_in_flight;
	uint32_t nr_requeued;    /* on the requeue list */
	const struct elv_policy *policy;
	/* The policy's per-request hooks, resolved once by elv_policy_start(): one load less
	 * per call, and no struct_size test for find_next on every add. */
	void (*add)(struct elv_queue *q, struct elv_request *rq, uint64_t now);
	struct elv_request *(*dispatch)(struct elv_queue *q, uint64_t now, int force);
	void (*complete)(struct elv_queue *q, struct elv_request *rq, uint64_t now);
	struct elv_request *(*find_next)(struct elv_queue *q, const struct elv_request *rq);
	struct elv_request *(*find_start)(struct elv_queue *q, uint64_t sector, uint8_t op);
	size_t mem_len;         /* bytes the host gave us: bounds elv_switch() */
	size_t data_room;       /* bytes available for policy state */
	struct elv_config cfg;
	struct elv_stats stats;
	struct elv_hash hash;
	struct elv_list requeue; /* given back by the device: dispatched first */
	struct elv_list held;    /* a pending barrier and everything added after it */
	struct elv_list streams; /* registered streams */
	struct elv_list groups;  /* registered groups (group.c) */
	uint32_t nr_held;        /* on the held list */
	uint32_t nr_barriers;    /* barriers on the held list */
	uint32_t seq;            /* next arrival sequence number */
	uint64_t idle_since;     /* valid while idling */
	uint64_t now;            /* the queue's time: latest seen, never runs back (once clock_set) */
	uint64_t time_offset;    /* queue time - host time, grown by each large step back */
	uint8_t idling;
	uint8_t clock_set;       /* a call has brought a host time */
	uint8_t gate;            /* ELV_GATE_*: whether calls that change the queue may run */
	/* Admission stages (stage.c): one bit per attached slot; 0 keeps every path as without. */
	uint8_t stages;
	uint8_t merge_veto;      /* policy, host or a stage may refuse merges (merge.c) */
	uint8_t stage_hear;      /* slots whose stage has a dispatched or completed hook */
	uint8_t stage_one;       /* 1 + the slot of the only stage when it has no validate hook */
	uint8_t stage_sole;      /* 1 + the slot of the only stage (none after it to admit) */
	uint32_t nr_staged;      /* held by stages, all slots */
	struct elv_stage {
		const struct elv_stage_ops *ops; /* NULL: slot empty */
		void *data;                      /* the stage's own state, caller memory */
		uint32_t nr_held;                /* requests this stage holds */
		/* The stage releases nothing while elv_past_stages() is at least this (0: no
		 * such bound); kept by the stage, tested by the pump before asking it. */
		uint32_t full_out;
	} stage[2];              /* ELV_STAGE_NR, in pipeline order */
	const struct elv_stage_vt *stage_vt; /* stage.c's entry points, set by an attach */
	/* Hands back a request a stage failed or a later stage refused on release. */
	void (*stage_fail)(void *ctx, struct elv_request *rq, int err);
	void *stage_fail_ctx;
};

/* Policies read the head through struct elv_queue_head: the layouts must agree. */
_Static_assert(offsetof(struct elv_queue, data) == offsetof(struct elv_queue_head, data) &&
		       offsetof(struct elv_queue, nr_queued) ==
			       offsetof(struct elv_queue_head, nr_queued) &&
		       offsetof(struct elv_queue, nr_in_flight) ==
			       offsetof(struct elv_queue_head, nr_in_flight) &&
		       offsetof(struct elv_queue, nr_requeued) ==
			       offsetof(struct elv_queue_head, nr_requeued),
	       "struct elv_queue must begin with struct elv_queue_head");

/* group.c: carry groups over a policy switch (exit under the old, init under the new
 * policy), a stream leaving its group when retired, and the group part of elv_queue_check(). */
uint64_t elv_queue_clock(struct elv_queue *q, uint64_t now); /* queue.c: elv_clock() */
void elv_groups_exit(struct elv_queue *q, uint64_t now);
void elv_groups_start(struct elv_queue *q, uint64_t now);
void elv_group_stream_gone(struct elv_stream *s);
int elv_groups_check(const struct elv_queue *q);

/*
 * Queue gate: open; open with admission stages attached (the entry points test the gate
 * anyway, so stages cost a queue without them nothing: one with them takes the slow path);
 * inside a host callback (changes refused); or torn down (all refused). With stages, only
 * elv_add() needs its staged path while no stage holds a request or listens to dispatches
 * and completions (ELV_GATE_STAGED_ADD, the usual state of a QoS stage): elv_dispatch() and
 * elv_complete() test for a gate above it, and theirs would do just what the plain ones do.
 */
#define ELV_GATE_OPEN 0u
#define ELV_GATE_STAGED_ADD 1u
#define ELV_GATE_STAGED 2u
#define ELV_GATE_CALLBACK 3u
#define ELV_GATE_EXITED 4u

/* hash.c; the per-request operations are inline because every add and dispatch uses them. */
void elv_hash_init(struct elv_hash *h, struct elv_request **buckets, uint8_t *starts,
		   uint32_t nr);
void elv_hash_use_starts(struct elv_hash *h, int on);
uint32_t elv_hash_buckets_for(uint32_t nr_requests);
int elv_hash_contains(const struct elv_hash *h, const struct elv_request *rq);
int elv_hash_check(const struct elv_hash *h, uint32_t nr_queued); /* not with ELV_NO_CHECK */
/* The rare steps, out of line: a chain overflows past @last, an evicted request leaves. */
void elv_hash_evict(struct elv_hash *h, struct elv_request *last);
void elv_hash_forget(struct elv_hash *h, struct elv_request *rq);

/* Was @rq evicted from a full chain (queued and mergeable, but not findable by its end)? */
static inline int elv_hash_is_evicted(const struct elv_request *rq)
{
	return (rq->hlink.word & 1u) != 0;
}

/* Key of the 4 KiB granule of @sector: Fibonacci hashing of 32 bits (cheap on 32-bit cores). */
static inline uint32_t elv_hash_key(uint64_t sector)
{
	return (uint32_t)(sector >> 3) * 0x9E3779B1u;
}

static inline struct elv_request **elv_hash_bucket(const struct elv_hash *h, uint64_t end)
{
	return &h->buckets[elv_hash_key(end) >> h->shift];
}

/*
 * The per-request operations (start filter, add, del, find): inline for speed, one shared
 * copy in hash.c when optimising for size.
 */
#if defined(__OPTIMIZE_SIZE__)
#define ELV_HASH_FN
uint8_t *elv_hash_start_k(const struct elv_hash *h, uint32_t key);
uint8_t *elv_hash_start(const struct elv_hash *h, uint64_t sector);
void elv_hash_insert_k(struct elv_hash *h, struct elv_request *rq, uint32_t ks, uint32_t ke);
struct elv_request *elv_hash_find_k(const struct elv_hash *h, uint64_t end, uint32_t key);
void elv_hash_start_inc(struct elv_hash *h, uint64_t sector);
void elv_hash_start_dec(struct elv_hash *h, uint64_t sector);
int elv_hash_may_start(const struct elv_hash *h, uint64_t sector);
void elv_hash_add(struct elv_hash *h, struct elv_request *rq);
void elv_hash_del(struct elv_hash *h, struct elv_request *rq);
struct elv_request *elv_hash_find(const struct elv_hash *h, uint64_t end);
#else
#define ELV_HASH_FN static inline
#include "hash_ops.h"
#endif

/* tunables.c */
int elv__streq(const char *a, const char *b);

/* merge.c (elv_rq_mergeable() is in policy.h: policies ask it too) */
int elv_merge_back_from(struct elv_queue *q, struct elv_request *c, struct elv_request *rq);
int elv_merge_front_into(struct elv_queue *q, struct elv_request *c, struct elv_request *rq);

/* A queued request that starts where @rq ends, through whichever lookup the policy has. */
static inline struct elv_request *elv_policy_find_next(struct elv_queue *q,
						       const struct elv_request *rq)
{
	/* Only a hashed (mergeable, queued) request could be joined: none starts there. */
	if (!elv_hash_may_start(&q->hash, elv_rq_end(rq)))
		return NULL;
	if (q->find_next)
		return q->find_next(q, rq);
	return q->find_start ? q->find_start(q, elv_rq_end(rq), rq->op) : NULL;
}

#if defined(__GNUC__)
#define ELV_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define ELV_ALWAYS_INLINE inline
#endif

/* Kept out of line: a path the usual case skips, whose registers it should not pay for. */
#if defined(__GNUC__)
#define ELV_APART __attribute__((noinline))
#else
#define ELV_APART
#endif

/*
 * For a helper with several callers on a hot path: inlined into each when optimising for
 * speed, one shared copy when optimising for size (-Os, as firmware builds do).
 */
#if defined(__OPTIMIZE_SIZE__)
#define ELV_SPEED_INLINE inline
#else
#define ELV_SPEED_INLINE ELV_ALWAYS_INLINE
#endif

#if defined(__GNUC__)
#define ELV_COLD __attribute__((cold, noinline))
#define ELV_LIKELY(x) __builtin_expect(!!(x), 1)
#define ELV_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define ELV_COLD
#define ELV_LIKELY(x) (x)
#define ELV_UNLIKELY(x) (x)
#endif

/* Emit a trace event if the host asked for them; the test stays inline, the work does not. */
#if defined(ELV_NO_TRACE)
#define elv_trace(q, type, rq, other, arg, now)                                              \
	do {                                                                                   \
		(void)(q);                                                                     \
		(void)(rq);                                                                    \
		(void)(other);                                                                 \
		(void)(arg);                                                                   \
		(void)(now);                                                                   \
	} while (0)
#else
#define elv_trace(q, type, rq, other, arg, now)                                              \
	do {                                                                                   \
		if (ELV_UNLIKELY((q)->cfg.trace != NULL))                                      \
			elv_trace_emit(q, type, rq, other, arg, now);                          \
	} while (0)
#endif

/* Add @n to the queue's counter @field (nothing with ELV_NO_STATS). */
#if defined(ELV_NO_STATS)
#define ELV_STAT_ADD(q, field, n) ((void)(n))
#else
#define ELV_STAT_ADD(q, field, n) ((void)((q)->stats.field += (n)))
#endif

/* Defines public call @name, of three arguments, as compiled out by an ELV_NO_* option: it
 * returns ELV_ENOSYS whatever its arguments, as the headers document. */
#define ELV_NOSYS_CALL3(name, t1, t2, t3)                                                      \
	int name(t1 a1, t2 a2, t3 a3)                                                          \
	{                                                                                      \
		(void)a1;                                                                      \
		(void)a2;                                                                      \
		(void)a3;                                                                      \
		return ELV_ENOSYS;                                                             \
	}

/*
 * The error for a call that would change @q, or 0 when it may go ahead: ELV_EINVAL for NULL or
 * a queue torn down by elv_queue_exit(), ELV_EBUSY while one of its host callbacks runs.
 */
static inline int elv_gate_err(const struct elv_queue *q)
{
	if (!q || q->gate == ELV_GATE_EXITED)
		return ELV_EINVAL;
	return q->gate > ELV_GATE_STAGED ? ELV_EBUSY : 0;
}

/* @s is registered with @q (queue.c checks a request's stream, stream.c the stream calls). */
static inline int elv_stream_of(const struct elv_queue *q, const struct elv_stream *s)
{
	return (s->flags & ELV_STREAM_REGISTERED) && s->q == q;
}

static inline int elv_prio_ok(uint8_t p)
{
	return p < 32u; /* class in bits 3-4, level in bits 0-2 */
}

/* The argument check of every call on a registered stream (stream.c, group.c): the
 * elv_gate_err() of @q, else ELV_EINVAL unless @s is registered with @q, else 0. */
int elv_stream_err(const struct elv_queue *q, const struct elv_stream *s);

/* elv_gate_err(), or ELV_ENOSYS on an open queue when stages are compiled out (queue.c). */
int elv_stage_gate_err(const struct elv_queue *q);

/* Bracket a call into the host (merge, allow_merge, trace, drain fn): calls back are refused. */
#define ELV_CALLBACK(q, call)                                                                  \
	do {                                                                                   \
		uint8_t elv_gate_saved_ = (q)->gate;                                           \
		(q)->gate = ELV_GATE_CALLBACK;                                                 \
		call;                                                                          \
		(q)->gate = elv_gate_saved_;                                                   \
	} while (0)

/* queue.c helpers shared with merge.c */
void elv_rq_release(struct elv_queue *q, struct elv_request *rq);
ELV_COLD void elv_trace_emit(struct elv_queue *q, uint8_t type, const struct elv_request *rq,
			      const struct elv_request *other, uint64_t arg, uint64_t now);

/* queue.c: the size of a queue whose policy state is @data_size bytes (0: bad config). */
size_t elv_queue_size_data(size_t data_size, const struct elv_config *cfg);

/*
 * ---- Admission stages (stage.c; the design is described at the top of that file) ----
 * A stage sits between elv_add() and the policy and may hold requests back. Slots run in
 * pipeline order: a write the zone stage lets go is admitted by the QoS stage next. The zone
 * stage comes first so that a write the QoS stage holds counts as issued for its zone, and
 * the QoS stage never holds two unsent writes of one zone that it could reorder.
 */
#define ELV_STAGE_ZONE 0u
#define ELV_STAGE_QOS 1u
#define ELV_STAGE_NR 2u

/* Requests that left the stages and have not come back: behind a barrier, in the policy,
 * requeued or on the device. */
static inline uint32_t elv_past_stages(const struct elv_queue *q)
{
	return q->nr_queued + q->nr_held + q->nr_requeued + q->nr_in_flight;
}

/*
 * Does the bound of stage @s (full_out) leave it room to release a request? Not while the
 * requests past the stages reach it: a stage that waits for room (the QoS stage at its depth)
 * is then not asked, at a dispatch (which frees no room) or once a completion's room is taken.
 */
static inline int elv_stage_has_room(const struct elv_queue *q, const struct elv_stage *s)
{
	return !(s->full_out && elv_past_stages(q) >= s->full_out);
}

/* May the stage @s of @q have a request to release: one held, and room by its bound? */
static inline int elv_stage_may_release(const struct elv_queue *q, const struct elv_stage *s)
{
	return s->nr_held && elv_stage_has_room(q, s);
}

/* admit() verdicts; a negative ELV_E* refuses the request. */
#define ELV_STAGE_PASS 0
#define ELV_STAGE_HELD 1
/* completed() status for a request a stage passed on that left unserved (cancel, drain). */
#define ELV_STAGE_WITHDRAWN 1

struct elv_stage_ops {
	/* Would admit() refuse @rq? Called for every attached stage before any admit() at
	 * elv_add(), so that a refusal leaves no stage changed. Optional. */
	int (*validate)(const struct elv_queue *q, const struct elv_request *rq);
	/* PASS (hand on), HELD (the stage took @rq, linked through its fifo), or a negative
	 * ELV_E* having changed nothing. */
	int (*admit)(struct elv_queue *q, struct elv_request *rq, uint64_t now);
	/* Earliest queue time at which a held request becomes releasable, or ELV_TIME_NEVER. */
	uint64_t (*next_event)(const struct elv_queue *q);
	/* One held request that may go on at @now (unlinked), or NULL. */
	struct elv_request *(*release)(struct elv_queue *q, uint64_t now);
	/* @rq, which this stage passed on, was dispatched. Optional. */
	void (*dispatched)(struct elv_queue *q, struct elv_request *rq, uint64_t now);
	/* @rq, which this stage passed on, came back: 0 done, < 0 failed, or
	 * ELV_STAGE_WITHDRAWN (cancelled or drained unserved, also while a later stage held it,
	 * or refused by a later stage). Every stage is told. Optional. */
	void (*completed)(struct elv_queue *q, struct elv_request *rq, int status, uint64_t now);
	/* Move every held request onto @list (through fifo), oldest first, for elv_drain(). */
	void (*take_all)(struct elv_queue *q, struct elv_list *list);
	/* 0 when the stage held @rq (now unlinked), else ELV_ENOENT. */
	int (*cancel)(struct elv_queue *q, struct elv_request *rq);
	/* May @b (following @a on disk) join @a? Optional; 1 yes. */
	int (*allow_merge)(const struct elv_queue *q, const struct elv_request *a,
			   const struct elv_request *b);
	/* Number of requests held (>= 0), or ELV_EINVAL when the stage's state is broken. */
	int (*check)(const struct elv_queue *q);
};

/* The earlier of @t (queue time or ELV_TIME_NEVER) and the next event of the attached stage
 * @s, which has none while it holds nothing (stage.c's walk over the slots, and queue.c's
 * elv_next_event() for a lone stage). */
static inline uint64_t elv_stage_next_event(const struct elv_queue *q, const struct elv_stage *s,
					    uint64_t t)
{
	uint64_t e;

	if (!s->nr_held)
		return t;
	e = s->ops->next_event(q);
	return e != ELV_TIME_NEVER && (t == ELV_TIME_NEVER || elv_time_before(e, t)) ? e : t;
}

int elv_stage_attach(struct elv_queue *q, unsigned slot, const struct elv_stage_ops *ops,
		     void *data);
int elv_stage_detach(struct elv_queue *q, unsigned slot);
void elv_stage_set_fail(struct elv_queue *q, void (*fn)(void *, struct elv_request *, int),
			void *ctx);
/* The stage of @slot failed @rq, which it held (@held) or was admitting: it goes back. */
void elv_stage_fail(struct elv_queue *q, unsigned slot, struct elv_request *rq, int err,
		    int held);
int elv_stage_merge(struct elv_queue *q, unsigned slot, struct elv_request *c,
		    struct elv_request *rq);

/*
 * The queue's paths through the stages, in stage.c, reached through q->stage_vt (which
 * elv_stage_attach() sets) and only while q->stages is non-zero: a firmware that never
 * attaches a stage links none of stage.c.
 */
struct elv_stage_vt {
	/* elv_add() after the core's checks: validate, admit, accept, hand on. */
	int (*add)(struct elv_queue *q, struct elv_request *rq, uint64_t now);
	/* @rq went to the device at queue time @now: the stages in q->stage_hear. */
	void (*dispatched)(struct elv_queue *q, struct elv_request *rq, uint64_t now);
	/* A request the stages passed on came back (or ELV_STAGE_WITHDRAWN): every stage. */
	void (*completed)(struct elv_queue *q, struct elv_request *rq, int status, uint64_t now);
	/* Let every releasable request go on. */
	void (*pump)(struct elv_queue *q, uint64_t now);
	/* 0 when a stage held @rq (now unlinked and uncounted). */
	int (*cancel)(struct elv_queue *q, struct elv_request *rq);
	/* Every held request onto @list, slot by slot. */
	void (*take_all)(struct elv_queue *q, struct elv_list *list);
	/* The earlier of @t and every stage's next event (queue time). */
	uint64_t (*next_event)(const struct elv_queue *q, uint64_t t);
	int (*allow_merge)(const struct elv_queue *q, const struct elv_request *a,
			   const struct elv_request *b);
	/* elv_queue_check(): each stage's check, and the counts agree. */
	int (*check)(const struct elv_queue *q);
};
/* queue.c, for stage.c: an admitted request is accepted (counted, traced). */
void elv_add_accept(struct elv_queue *q, struct elv_request *rq, uint64_t now);
/* queue.c: recompute q->merge_veto after the policy or a stage changed. */
void elv_merge_veto_update(struct elv_queue *q);
/* queue.c: a request that left the stages goes on: behind a barrier, or to the policy
 * (merge-on-add included); 1 when it was merged away. */
int elv_stage_enqueue(struct elv_queue *q, struct elv_request *rq, uint64_t now);
/* The stage in @slot holds @rq after its admit said ELV_STAGE_HELD (stage.c, and queue.c's
 * add for a single stage). */
static inline void elv_stage_took(struct elv_queue *q, unsigned slot, struct elv_request *rq)
{
	rq->state = ELV_RQ_HELD;
	rq->hlink.owner = q;
	q->stage[slot].nr_held++;
	q->nr_staged++;
	q->gate = ELV_GATE_STAGED; /* dispatch and complete must now release it */
}
/* The gate of a queue with stages (ELV_GATE_STAGED_ADD or ELV_GATE_STAGED), from what they
 * hold and whether one listens. */
static inline uint8_t elv_stage_gate(const struct elv_queue *q)
{
	return q->nr_staged || q->stage_hear ? ELV_GATE_STAGED : ELV_GATE_STAGED_ADD;
}
/* merge.c: join @rq (not queued) onto the end of the queued @c if the rules allow; 1 done. */
int elv_merge_back_into(struct elv_queue *q, struct elv_request *c, struct elv_request *rq);

/* registry.c */
/* The built-in policies are declared in elevator.h (exported, so firmware can name one). */

#endif /* ELV_INTERNAL_H */
