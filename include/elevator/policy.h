/**
 * @file policy.h
 * @brief For policy authors: the policy vtable and the shared primitives every policy uses.
 *
 * A policy is a const struct elv_policy: a name, the size of its per-queue state, a tunables
 * table and hooks. The core owns the request lifecycle (validation, states, merges through the
 * back-merge hash, barriers, requeues, stats, tracing); the policy only orders requests.
 * Everything a policy needs is here: a policy built outside the library, against the
 * installed headers, can do what the built-in ones do (they include nothing else). Request
 * and stream members the library owns are read through the accessors below, never by name.
 */
#ifndef ELEVATOR_POLICY_H
#define ELEVATOR_POLICY_H

#include "elevator/elevator.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @defgroup elv_policy Policy authoring
 * @{
 */

/** @brief ABI word of struct elv_policy; bumped only when a hook's meaning changes. */
#define ELV_POLICY_ABI 1u

/**
 * @brief Assertion for the library and policies: assert() unless ELV_NO_ASSERT or NDEBUG is
 * defined, then nothing. Define ELV_ASSERT yourself to route it elsewhere.
 */
#if !defined(ELV_ASSERT) || defined(__DOXYGEN__)
#if defined(ELV_NO_ASSERT) || defined(NDEBUG)
#define ELV_ASSERT(x) ((void)0)
#else
#include <assert.h>
#define ELV_ASSERT(x) assert(x)
#endif
#endif

/** @brief Direction index used by policies: reads 0, everything else 1. */
#define ELV_DIR_READ 0
/** @brief Direction index of writes, discards and flushes. */
#define ELV_DIR_WRITE 1

/** @brief Request states (the private @c state member). */
enum elv_rq_state {
	ELV_RQ_IDLE = 0,      /**< The host's: never added, completed, cancelled or absorbed. */
	ELV_RQ_QUEUED = 1,    /**< Held by the policy. */
	ELV_RQ_HELD = 2,      /**< Behind a pending barrier, kept by the core. */
	ELV_RQ_REQUEUED = 3,  /**< Given back by the host, first in line. */
	ELV_RQ_DISPATCHED = 4 /**< In flight on the device. */
};

/**
 * @brief A scheduling policy. Hooks marked optional may be NULL.
 *
 * The struct only ever grows at its end; @c abi and @c struct_size let the core reject a
 * policy built against an incompatible header.
 */
struct elv_policy {
	uint32_t abi;         /**< ELV_POLICY_ABI. */
	uint32_t struct_size; /**< sizeof(struct elv_policy) the policy was built with. */
	const char *name;     /**< Short unique name. */
	const char *desc;     /**< One-line description. */
	size_t data_size;     /**< Per-queue state, reached with elv_queue_data(). */
	const struct elv_tunable *tunables; /**< Tunables table (values live in the state). */
	unsigned nr_tunables;               /**< Entries in @c tunables. */
	const char *const *stat_names;      /**< Names of policy counters, optional. */
	unsigned nr_stats;                  /**< Entries in @c stat_names. */
	/** Set up the zeroed state; tunables already hold their defaults. Optional. */
	void (*init)(struct elv_queue *q);
	/** Take a new request (its time and seq are set). */
	void (*add)(struct elv_queue *q, struct elv_request *rq, uint64_t now);
	/** Unlink a queued request (cancelled, drained, switched away or absorbed). */
	void (*remove)(struct elv_queue *q, struct elv_request *rq);
	/**
	 * A queued request grew by a merge. For ELV_MERGE_FRONT its sector changed (re-key it);
	 * for ELV_MERGE_REQ @p next (still queued) is about to be removed: inherit its place
	 * in time if it is older. Optional.
	 */
	void (*merged)(struct elv_queue *q, struct elv_request *rq, enum elv_merge_kind kind,
		       struct elv_request *next);
	/** A queued request of the same op whose first sector is @p sector, or NULL. Optional. */
	struct elv_request *(*find_start)(struct elv_queue *q, uint64_t sector, uint8_t op);
	/**
	 * Remove and return the next request to dispatch, or NULL (nothing, or idling).
	 * With @p force the policy must not idle while it holds requests.
	 */
	struct elv_request *(*dispatch)(struct elv_queue *q, uint64_t now, int force);
	/** The request that arrived first among those queued (for drain and switch). */
	struct elv_request *(*oldest)(struct elv_queue *q);
	/**
	 * A dispatched request came back from the device; the core keeps it on its requeue
	 * list and dispatches it again first, without asking the policy. Count it as no
	 * longer in flight: it may later complete (complete() is called) or be cancelled or
	 * drained (nothing is called). Like complete(), it may concern a request dispatched
	 * under a previous policy (after elv_switch()): tolerate requests you never
	 * dispatched. While a request is in flight or requeued the core does not use its
	 * @c rb link, so a policy may keep a stamp there. Optional.
	 */
	void (*requeue)(struct elv_queue *q, struct elv_request *rq, uint64_t now);
	/** A dispatched request completed. Optional. */
	void (*complete)(struct elv_queue *q, struct elv_request *rq, uint64_t now);
	/** When dispatch must be called again (idle end), or ELV_TIME_NEVER. Optional. */
	uint64_t (*next_event)(const struct elv_queue *q);
	/** A stream was registered (its private area is zeroed). Optional. */
	void (*stream_init)(struct elv_queue *q, struct elv_stream *s, uint64_t now);
	/** A stream is retired; forget it. Optional. */
	void (*stream_exit)(struct elv_queue *q, struct elv_stream *s, uint64_t now);
	/** A tunable changed (already stored). Optional. */
	void (*tunable_changed)(struct elv_queue *q, const struct elv_tunable *t);
	/** Fill @p vals with the @c nr_stats counters. Optional. */
	void (*stats)(const struct elv_queue *q, uint64_t *vals);
	/** Check the policy's invariants; 0 when consistent. Optional. */
	int (*check)(const struct elv_queue *q);
	/**
	 * Veto a merge the core found: non-zero allows joining @p next onto @p rq (both
	 * compatible by the core's rules; @p next may be a new request not yet added).
	 * CFQ uses it to keep streams' queues apart. Optional (NULL allows).
	 */
	int (*allow_merge)(const struct elv_queue *q, const struct elv_request *rq,
			   const struct elv_request *next);
	/**
	 * A queued request starting at elv_rq_end(@p rq) that @p rq could be joined with, or
	 * NULL. Preferred over find_start() when present: knowing the request (its op,
	 * priority and stream) lets a policy search only the one tree it could be in.
	 * @p rq is either a new request or a queued one that just grew. Optional.
	 */
	struct elv_request *(*find_next)(struct elv_queue *q, const struct elv_request *rq);
	/**
	 * A group was registered (elv_group_init(), or a policy switch carrying it over): its
	 * private area is zeroed. Runs before the stream_init hook of any stream in it. Optional.
	 */
	void (*group_init)(struct elv_queue *q, struct elv_group *g, uint64_t now);
	/** A group with no stream is retired, or the policy is switched away. Optional. */
	void (*group_exit)(struct elv_queue *q, struct elv_group *g, uint64_t now);
	/**
	 * A weight or a membership changed; the core has stored it already. With @p s non-NULL:
	 * the stream's weight changed (@p old equals elv_stream_group(@p s)), or the stream, which
	 * holds no request, moved from group @p old (NULL: the root) to its new group. With @p s
	 * NULL: the weight of group @p old changed. Optional: a policy reading weights afresh
	 * at each activation needs none.
	 */
	void (*reweight)(struct elv_queue *q, struct elv_stream *s, const struct elv_group *old);
};

/** @brief Policy state of a queue (data_size bytes, 8-byte aligned). */
ELV_API void *elv_queue_data(const struct elv_queue *q);
/** @brief The configuration the queue was built with (device traits, limits). */
ELV_API const struct elv_config *elv_queue_config(const struct elv_queue *q);
/** @brief Number of requests the policy holds now. */
ELV_API uint32_t elv_queue_nr_queued(const struct elv_queue *q);
/** @brief Number of requests dispatched and not completed (the device's queue). */
ELV_API uint32_t elv_queue_nr_in_flight(const struct elv_queue *q);
/** @brief Count a dispatch forced by an expired deadline (stats and trace). */
ELV_API void elv_note_expired(struct elv_queue *q, const struct elv_request *rq, uint64_t now);
/** @brief The policy starts idling at @p now (stats and trace). */
ELV_API void elv_idle_start(struct elv_queue *q, uint64_t now);
/** @brief The policy stops idling at @p now; adds the idle time to the stats. */
ELV_API void elv_idle_stop(struct elv_queue *q, uint64_t now);
/** @brief 1 while the policy idles (between elv_idle_start() and elv_idle_stop()). */
ELV_API int elv_is_idling(const struct elv_queue *q);

/* ---- queue access -------------------------------------------------------------------- */

/**
 * @brief The public head of every struct elv_queue, read by policies without a call.
 *
 * Every queue begins with these members, in this order, for as long as the ABI version
 * stays the same; the rest of the queue is private. They belong to the core: read them,
 * never write them. Functions give the same values to callers that cannot use the layout
 * (elv_queue_data(), elv_queue_nr_queued(), elv_queue_nr_in_flight(),
 * elv_queue_nr_requeued()).
 */
struct elv_queue_head {
	void *data;            /**< Policy state: data_size bytes, 8-byte aligned. */
	uint32_t nr_queued;    /**< Requests the policy holds. */
	uint32_t nr_in_flight; /**< Dispatched and not completed nor given back. */
	uint32_t nr_requeued;  /**< Given back by the device; dispatched again first. */
};

/** @brief The public head of queue @p q (not NULL). */
static inline const struct elv_queue_head *elv_queue_head(const struct elv_queue *q)
{
	return (const struct elv_queue_head *)(const void *)q;
}

/** @brief Number of requests the device gave back (elv_requeue()) and not yet redispatched. */
ELV_API uint32_t elv_queue_nr_requeued(const struct elv_queue *q);
/**
 * @brief Walk the requests the device gave back, in the order they will be dispatched again:
 * the first with @p rq NULL, then the one after @p rq. NULL at the end, or for a NULL @p q.
 */
ELV_API struct elv_request *elv_queue_requeued_next(const struct elv_queue *q,
						    const struct elv_request *rq);
/**
 * @brief Walk the streams registered with @p q (elv_stream_init()), oldest first: the first
 * with @p s NULL, then the one after @p s. NULL at the end, or for a NULL @p q.
 */
ELV_API struct elv_stream *elv_queue_stream_next(const struct elv_queue *q,
						 const struct elv_stream *s);
/**
 * @brief When the current idle period began (the @p now given to elv_idle_start()), for hooks
 * that get no time and must end one. 0 when @p q is NULL or not idling.
 */
ELV_API uint64_t elv_idle_since(const struct elv_queue *q);

/* ---- request and stream access ------------------------------------------------------- */

/**
 * @brief Lifecycle state of @p rq (enum elv_rq_state). A policy sees ELV_RQ_QUEUED in its
 * hooks for the requests it holds; its check hook may use it to verify that.
 */
static inline enum elv_rq_state elv_rq_state(const struct elv_request *rq)
{
	return (enum elv_rq_state)rq->ELV_PRIVATE(state);
}

/**
 * @brief Arrival time (ns) of @p rq: the host time of the elv_add() that queued it, or the
 * older time it inherited in a request merge (elv_rq_inherit_arrival()). Deadlines are
 * measured from it, with the elv_time_*() comparisons.
 */
static inline uint64_t elv_rq_time(const struct elv_request *rq)
{
	return rq->ELV_PRIVATE(time);
}

/** @brief Arrival sequence number of @p rq within its queue; compare with elv_rq_seq_cmp(). */
static inline uint32_t elv_rq_seq(const struct elv_request *rq)
{
	return rq->ELV_PRIVATE(seq);
}

/**
 * @brief Give @p rq the arrival time and sequence number of @p from, so that a request merge
 * never makes the survivor younger. The caller moves it in its own FIFOs (see
 * elv_fifo_inherit() for the case of one FIFO).
 */
static inline void elv_rq_inherit_arrival(struct elv_request *rq, const struct elv_request *from)
{
	rq->ELV_PRIVATE(time) = from->ELV_PRIVATE(time);
	rq->ELV_PRIVATE(seq) = from->ELV_PRIVATE(seq);
}

/**
 * @brief The list link of @p rq: the policy's own (for its FIFOs) from add() until the
 * request leaves it by remove() or dispatch(). Recover the request with elv_list_rq().
 * Returns a link the caller may change even for a const request, as strchr() does.
 */
static inline struct elv_list *elv_rq_fifo(const struct elv_request *rq)
{
	return (struct elv_list *)(uintptr_t)&rq->ELV_PRIVATE(fifo);
}

/**
 * @brief The tree link of @p rq: the policy's own while it holds the request (the sorted-tree
 * helpers below use it); while the request is in flight or requeued the core does not use
 * it either, so a policy may keep a stamp there (see the requeue hook). Recover the request
 * with elv_rb_rq(). Like elv_rq_fifo() for constness.
 */
static inline struct elv_rb_node *elv_rq_rb(const struct elv_request *rq)
{
	return (struct elv_rb_node *)(uintptr_t)&rq->ELV_PRIVATE(rb);
}

/** @brief Bytes in a stream's policy-private area. */
#define ELV_STREAM_PRIV_BYTES (ELV_STREAM_PRIV_WORDS * 8u)

/**
 * @brief The policy-private area of stream @p s: ELV_STREAM_PRIV_BYTES bytes, 8-byte aligned,
 * zeroed before the stream_init hook runs and the policy's alone while it is registered.
 */
static inline void *elv_stream_priv(const struct elv_stream *s)
{
	return (void *)(uintptr_t)(const void *)s->ELV_PRIVATE(priv).u64;
}

/** @brief Requests of stream @p s the library holds: queued, held back or in flight. */
static inline uint32_t elv_stream_nr_rq(const struct elv_stream *s)
{
	return s->ELV_PRIVATE(nr_rq);
}

/** @brief The queue stream @p s is registered with, or NULL. */
static inline struct elv_queue *elv_stream_queue(const struct elv_stream *s)
{
	return s->ELV_PRIVATE(q);
}

/** @brief The group of stream @p s, or NULL for the root. */
static inline struct elv_group *elv_stream_group(const struct elv_stream *s)
{
	return s->ELV_PRIVATE(group);
}

/**
 * @brief Weight Linux gives an I/O priority: (8 - level) * 10, so 80 (level 0) to 10; no
 * class means level 4 (40), and the idle class takes level 7 (10).
 */
static inline uint16_t elv_prio_weight(uint8_t ioprio)
{
	unsigned cls = ELV_PRIO_CLASS(ioprio);
	unsigned level = cls == ELV_PRIO_NONE   ? ELV_PRIO_DEFAULT_LEVEL
			 : cls == ELV_PRIO_IDLE ? 7u
						: ELV_PRIO_LEVEL(ioprio);

	return (uint16_t)((8u - level) * 10u);
}

/** @brief Weight of @p s: its @c weight, or when that is 0 the one of its I/O priority. */
static inline uint16_t elv_stream_weight(const struct elv_stream *s)
{
	return s->weight ? s->weight : elv_prio_weight(s->ioprio);
}

/** @brief Bytes in a group's policy-private area. */
#define ELV_GROUP_PRIV_BYTES (ELV_GROUP_PRIV_WORDS * 8u)

/**
 * @brief The policy-private area of group @p g: ELV_GROUP_PRIV_BYTES bytes, 8-byte aligned,
 * zeroed before the group_init hook runs and the policy's alone while it is registered.
 */
static inline void *elv_group_priv(const struct elv_group *g)
{
	return (void *)(uintptr_t)(const void *)g->ELV_PRIVATE(priv).u64;
}

/** @brief Number of streams in group @p g. */
static inline uint32_t elv_group_nr_streams(const struct elv_group *g)
{
	return g->ELV_PRIVATE(nr_streams);
}

/**
 * @brief Walk the groups registered with @p q (elv_group_init()), oldest first: the first
 * with @p g NULL, then the one after @p g. NULL at the end, or for a NULL @p q.
 */
ELV_API struct elv_group *elv_queue_group_next(const struct elv_queue *q,
					       const struct elv_group *g);

/* ---- request helpers ---------------------------------------------------------------- */

/** @brief First sector after the request. */
static inline uint64_t elv_rq_end(const struct elv_request *rq)
{
	return rq->sector + rq->nr_sectors;
}

/** @brief Direction index: ELV_DIR_READ for reads, ELV_DIR_WRITE otherwise. */
static inline int elv_rq_dir(const struct elv_request *rq)
{
	return rq->op == ELV_OP_READ ? ELV_DIR_READ : ELV_DIR_WRITE;
}

/** @brief 1 when somebody waits for the request: reads and writes marked ELV_RQ_SYNC. */
static inline int elv_rq_is_sync(const struct elv_request *rq)
{
	return rq->op == ELV_OP_READ || (rq->flags & ELV_RQ_SYNC) != 0;
}

/**
 * @brief 1 when the core may merge @p rq with another request at all: not a flush, barrier,
 * FUA, ELV_RQ_NOMERGE or zone append request (FUA never merges: the survivor would carry
 * another request's data without it; an append keeps its flag after the zone stage is
 * detached and never merges, as zone.h says). A find_next() or find_start() hook returns
 * only such requests.
 */
static inline int elv_rq_mergeable(const struct elv_request *rq)
{
#if defined(ELV_NO_MERGE)
	(void)rq; /* merging compiled out: nothing merges, nothing is hashed */
	return 0;
#else
	return rq->op != ELV_OP_FLUSH &&
	       !(rq->flags & (ELV_RQ_BARRIER | ELV_RQ_NOMERGE | ELV_RQ_FUA | ELV_RQ_ZONE_APPEND));
#endif
}

/** @brief Effective I/O priority: the request's, else its stream's, else BE level 4. */
static inline uint8_t elv_rq_prio(const struct elv_request *rq)
{
	if (ELV_PRIO_CLASS(rq->ioprio) != ELV_PRIO_NONE)
		return rq->ioprio;
	if (rq->stream && ELV_PRIO_CLASS(rq->stream->ioprio) != ELV_PRIO_NONE)
		return rq->stream->ioprio;
	return ELV_PRIO(ELV_PRIO_BE, ELV_PRIO_DEFAULT_LEVEL);
}

/* ---- intrusive list ------------------------------------------------------------------ */

/** @brief Make @p h an empty list. */
static inline void elv_list_init(struct elv_list *h)
{
	h->next = h;
	h->prev = h;
}

/** @brief 1 when the list is empty. */
static inline int elv_list_empty(const struct elv_list *h)
{
	return h->next == h;
}

/** @brief Insert @p n between @p prev and @p next. */
static inline void elv_list_insert(struct elv_list *n, struct elv_list *prev,
				   struct elv_list *next)
{
	n->prev = prev;
	n->next = next;
	prev->next = n;
	next->prev = n;
}

/** @brief Append @p n at the tail of @p h. */
static inline void elv_list_add_tail(struct elv_list *h, struct elv_list *n)
{
	elv_list_insert(n, h->prev, h);
}

/** @brief Insert @p n at the head of @p h. */
static inline void elv_list_add_head(struct elv_list *h, struct elv_list *n)
{
	elv_list_insert(n, h, h->next);
}

/** @brief Unlink @p n and make it an empty list of its own. */
static inline void elv_list_del(struct elv_list *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	elv_list_init(n);
}

/** @brief The request whose FIFO link is @p l. */
#define elv_list_rq(l) elv_container_of(l, struct elv_request, ELV_PRIVATE(fifo))

/** @brief First request on a request list, or NULL. */
static inline struct elv_request *elv_list_first_rq(const struct elv_list *h)
{
	return elv_list_empty(h) ? NULL : elv_list_rq(h->next);
}

/* ---- red-black tree ------------------------------------------------------------------ */

/** @brief A red-black tree with its leftmost node cached. Zero it to make it empty. */
struct elv_rb_root {
	struct elv_rb_node *root;  /**< Root node or NULL. */
	struct elv_rb_node *first; /**< Leftmost node or NULL. */
};

/** @brief The parent of a node (NULL for the root). */
static inline struct elv_rb_node *elv_rb_parent(const struct elv_rb_node *n)
{
	return (struct elv_rb_node *)(n->parent_color & ~(uintptr_t)1);
}

/**
 * @brief Link @p n below @p parent at @p *link (found by the caller's own search) and
 * rebalance. @p leftmost is non-zero when the search only went left (new first node).
 */
ELV_API void elv_rb_insert(struct elv_rb_root *t, struct elv_rb_node *n,
			   struct elv_rb_node *parent, struct elv_rb_node **link, int leftmost);
/** @brief Unlink @p n from @p t and rebalance. */
ELV_API void elv_rb_erase(struct elv_rb_root *t, struct elv_rb_node *n);
/**
 * @brief Unlink @p n from @p t and rebalance, like elv_rb_erase(), and return the node that
 * followed @p n in order (NULL if it was the last): where an ascending sweep goes on.
 */
ELV_API struct elv_rb_node *elv_rb_erase_next(struct elv_rb_root *t, struct elv_rb_node *n);
/** @brief In-order successor, or NULL. */
ELV_API struct elv_rb_node *elv_rb_next(const struct elv_rb_node *n);
/** @brief In-order predecessor, or NULL. */
ELV_API struct elv_rb_node *elv_rb_prev(const struct elv_rb_node *n);

/** @brief The request whose tree link is @p n (NULL-safe). */
static inline struct elv_request *elv_rb_rq(const struct elv_rb_node *n)
{
	return n ? elv_container_of(n, struct elv_request, ELV_PRIVATE(rb)) : NULL;
}

/** @brief Insert a request keyed by start sector; equal sectors go after existing ones. */
ELV_API void elv_sort_add(struct elv_rb_root *t, struct elv_request *rq);
/** @brief Remove a request from a sector-sorted tree. */
ELV_API void elv_sort_del(struct elv_rb_root *t, struct elv_request *rq);
/**
 * @brief Remove a request from a sector-sorted tree, like elv_sort_del(), and return the
 * request that followed it in sector order, or NULL.
 */
ELV_API struct elv_request *elv_sort_del_next(struct elv_rb_root *t, struct elv_request *rq);
/** @brief The first request (lowest sector) or NULL. */
static inline struct elv_request *elv_sort_first(const struct elv_rb_root *t)
{
	return elv_rb_rq(t->first);
}
/** @brief The request after @p rq in sector order, or NULL. */
static inline struct elv_request *elv_sort_next(const struct elv_request *rq)
{
	return elv_rb_rq(elv_rb_next(&rq->ELV_PRIVATE(rb)));
}
/** @brief The request before @p rq in sector order, or NULL. */
static inline struct elv_request *elv_sort_prev(const struct elv_request *rq)
{
	return elv_rb_rq(elv_rb_prev(&rq->ELV_PRIVATE(rb)));
}
/** @brief The first request whose start sector is >= @p sector (ceiling), or NULL. */
ELV_API struct elv_request *elv_sort_ceil(const struct elv_rb_root *t, uint64_t sector);
/** @brief The first request that starts exactly at @p sector, or NULL. */
ELV_API struct elv_request *elv_sort_find(const struct elv_rb_root *t, uint64_t sector);
/**
 * @brief Requests starting at one sector that a front-merge lookup examines at most.
 *
 * The lookup skips the requests at that sector that cannot take the merge (another operation
 * sharing the tree, or one that never merges); past this many it gives up and the merge is
 * missed, so a pile of requests at one sector cannot make every lookup walk the pile.
 */
#define ELV_SAME_SECTOR_SCAN 8u
/**
 * @brief Check the tree's structure: colours, black height, parent links and the cached first
 * node. Key order is not checked (the tree does not know the keys): callers compare
 * neighbours themselves.
 * @return 0 when consistent, ELV_EINVAL otherwise.
 */
ELV_API int elv_rb_check(const struct elv_rb_root *t);

/* ---- host time ----------------------------------------------------------------------- */

/**
 * @name Host time
 * Host time is a free-running 64-bit nanosecond counter that may start anywhere and wrap
 * past 2^64 to 0, so times are compared by their difference (serial-number arithmetic), never
 * with < or >: @p a is after @p b when a - b, read as a signed value, is positive. That holds
 * while the two are less than 2^63 ns (292 years) apart. A deadline is the plain wrapping sum
 * now + delta. The core never hands a policy a time earlier than one it already handed it.
 */
/** @{ */
/** @brief 1 when time @p a is later than time @p b (wraparound-safe). */
static inline int elv_time_after(uint64_t a, uint64_t b)
{
	return (int64_t)(a - b) > 0;
}
/** @brief 1 when time @p a is earlier than time @p b (wraparound-safe). */
static inline int elv_time_before(uint64_t a, uint64_t b)
{
	return (int64_t)(a - b) < 0;
}
/** @brief 1 when time @p a is @p b or later (wraparound-safe). */
static inline int elv_time_after_eq(uint64_t a, uint64_t b)
{
	return (int64_t)(a - b) >= 0;
}
/** @brief 1 when time @p a is @p b or earlier (wraparound-safe). */
static inline int elv_time_before_eq(uint64_t a, uint64_t b)
{
	return (int64_t)(a - b) <= 0;
}
/**
 * @brief Event time @p t as a next_event() hook reports it: ELV_TIME_NEVER means "no event",
 * so a real event that falls exactly on it is reported one nanosecond later (0, which
 * compares as later). Store timers through it when ELV_TIME_NEVER marks a disarmed one.
 */
static inline uint64_t elv_time_event(uint64_t t)
{
	return t == ELV_TIME_NEVER ? 0 : t;
}
/** @brief The earlier of two event times, where ELV_TIME_NEVER is later than any event. */
static inline uint64_t elv_time_first(uint64_t a, uint64_t b)
{
	if (a == ELV_TIME_NEVER)
		return b;
	if (b == ELV_TIME_NEVER)
		return a;
	return elv_time_before(b, a) ? b : a;
}
/** @} */

/* ---- FIFO with expiry ---------------------------------------------------------------- */

/** @brief Append @p rq (arrival time already in its time field) to a FIFO. */
static inline void elv_fifo_add(struct elv_list *fifo, struct elv_request *rq)
{
	elv_list_add_tail(fifo, &rq->ELV_PRIVATE(fifo));
}

/**
 * @brief Insert @p rq into a FIFO kept in arrival order (walks back from the tail; used when
 * requests are re-added after a switch or barrier, usually O(1)).
 */
ELV_API void elv_fifo_insert_sorted(struct elv_list *fifo, struct elv_request *rq);

/**
 * @brief 1 when the oldest request of @p fifo has waited @p expire ns or more at @p now.
 */
ELV_API int elv_fifo_expired(const struct elv_list *fifo, uint64_t now, uint64_t expire);

/** @brief Arrival order: negative when @p a arrived before @p b (wraparound-safe). */
static inline int32_t elv_rq_seq_cmp(const struct elv_request *a, const struct elv_request *b)
{
	return (int32_t)(a->ELV_PRIVATE(seq) - b->ELV_PRIVATE(seq));
}

/**
 * @brief Request-merge inheritance: if @p next (about to be absorbed) arrived before @p rq,
 * @p rq takes its FIFO place, arrival time and sequence number, so merging never makes a
 * request younger. Both must be on the same FIFO.
 * @return 1 when @p rq took @p next's place, else 0.
 */
static inline int elv_fifo_inherit(struct elv_request *rq, struct elv_request *next)
{
	if (elv_rq_seq_cmp(next, rq) >= 0)
		return 0;
	elv_list_del(&rq->ELV_PRIVATE(fifo));
	elv_list_insert(&rq->ELV_PRIVATE(fifo), &next->ELV_PRIVATE(fifo),
			next->ELV_PRIVATE(fifo).next);
	elv_rq_inherit_arrival(rq, next);
	return 1;
}

/* ---- seek scoring -------------------------------------------------------------------- */

/**
 * @brief The cost of reaching @p sector from head position @p last: the one seek rule.
 *
 * A forward seek costs its distance. A backward seek of at most @p back_max sectors costs
 * its distance times @p back_penalty, saturating at UINT64_MAX rather than wrapping past
 * 64 bits. Farther back is a "wrap" (sweep back to the start, then forward again): the
 * function returns 1 and the cost is the sector itself, so that among wraps the lower
 * sector goes first. Compare the returned flags first, then the costs.
 *
 * @param sector Start sector of the candidate.
 * @param last Head position (where the previous request ended).
 * @param back_max Farthest backward seek, in sectors, not treated as a wrap.
 * @param back_penalty Cost factor of a backward seek.
 * @param[out] cost The cost as described above.
 * @return 1 for a wrap, else 0.
 */
static inline int elv_seek_cost(uint64_t sector, uint64_t last, uint64_t back_max,
				uint32_t back_penalty, uint64_t *cost)
{
	uint64_t back = last - sector;

	if (sector >= last) {
		*cost = sector - last;
		return 0;
	}
	if (back > back_max) {
		*cost = sector;
		return 1;
	}
	/* Below 2^32 sectors back the product of two 32-bit numbers fits: no division. */
	if (back > UINT32_MAX && back_penalty != 0 && back > UINT64_MAX / back_penalty)
		*cost = UINT64_MAX;
	else
		*cost = back * back_penalty;
	return 0;
}

/**
 * @brief Of two distinct candidate requests, both non-NULL, the one cheaper to reach from
 * head position @p last by elv_seek_cost(): a wrap loses to any other seek, then the lower
 * cost wins, equal costs go to the higher sector (keep moving forward) and full ties to
 * @p r1. Inline for policies' hot paths; elv_seek_choose() is the same with NULL checks.
 */
static inline struct elv_request *elv_seek_pick(struct elv_request *r1, struct elv_request *r2,
						uint64_t last, uint64_t back_max,
						uint32_t back_penalty)
{
	uint64_t c1, c2;
	int w1 = elv_seek_cost(r1->sector, last, back_max, back_penalty, &c1);
	int w2 = elv_seek_cost(r2->sector, last, back_max, back_penalty, &c2);

	if (w1 != w2)
		return w1 ? r2 : r1;
	if (c1 != c2)
		return c2 < c1 ? r2 : r1;
	return r2->sector > r1->sector ? r2 : r1;
}

/**
 * @brief Of two candidate requests, the one cheaper to reach from head position @p last
 * (see elv_seek_pick() for the rule). Either may be NULL, or both the same request.
 */
ELV_API struct elv_request *elv_seek_choose(const struct elv_request *r1,
					    const struct elv_request *r2, uint64_t last,
					    uint64_t back_max, uint32_t back_penalty);

/**
 * @brief The host's estimate of the time the device needs to position for @p rq if it were
 * issued at @p now (elv_config::position_time), called the way every host callback is:
 * while it runs, calls that would change @p q return ELV_EBUSY.
 * @param q the queue (from a hook: the one being dispatched).
 * @param rq a request the policy holds.
 * @param now the time the hook was given.
 * @param[out] ns the estimate in ns; unchanged on error.
 * @retval 0 done; ELV_ENOSYS the host gave no estimator; ELV_EINVAL a NULL argument.
 */
ELV_API int elv_position_time(struct elv_queue *q, const struct elv_request *rq, uint64_t now,
			      uint64_t *ns);

/* ---- arithmetic ---------------------------------------------------------------------- */

/**
 * @brief @p n / @p d for 64-bit values without a 64-bit division call on 32-bit cores.
 *
 * 64-bit hosts divide natively. 32-bit targets (Cortex-M has no 64-bit divide, and
 * freestanding builds must not need libgcc's helpers) use a 32-bit division when both values
 * fit, else shift and subtract. Returns UINT64_MAX when @p d is 0.
 */
ELV_API uint64_t elv_div64_soft(uint64_t n, uint64_t d);

/** @brief @p n / @p d (UINT64_MAX when @p d is 0); see elv_div64_soft(). */
static inline uint64_t elv_div64(uint64_t n, uint64_t d)
{
#if UINTPTR_MAX > 0xffffffffu
	return d ? n / d : UINT64_MAX;
#else
	return elv_div64_soft(n, d); /* one shared copy instead of one per call site */
#endif
}

/* ---- decaying averages --------------------------------------------------------------- */

/** @brief Fixed-point decaying average (1.0 == 256) of think time or seek distance. */
struct elv_avg {
	uint64_t total;   /**< Decayed sum of samples, scaled by 256. */
	uint64_t mean;    /**< Current mean (same unit as the samples). */
	uint32_t samples; /**< Decayed sample weight; converges to 256. */
};

/** @brief Largest sample kept (2^40: about 18 minutes in ns, or 512 TiB in sectors). */
#define ELV_AVG_SAMPLE_MAX ((uint64_t)1 << 40)

/**
 * @brief Add sample @p x: weight 1/8 to the new sample, 7/8 to history.
 *
 * Samples above ELV_AVG_SAMPLE_MAX count as ELV_AVG_SAMPLE_MAX, so 256 * x fits in 48 bits
 * and 7 * total never overflows. Integer truncation makes the weight settle at 249 rather
 * than 256 under a steady stream; the mean carries the same small upward bias as the
 * schedulers this follows. Inline for hot paths; elv_avg_add() is the same as a call.
 */
static inline void elv_avg_update(struct elv_avg *a, uint64_t x)
{
	if (x > ELV_AVG_SAMPLE_MAX)
		x = ELV_AVG_SAMPLE_MAX;
	a->samples = (7u * a->samples + 256u) / 8u;
	a->total = (7u * a->total + 256u * x) / 8u;
	a->mean = elv_div64(a->total + 128u, a->samples); /* samples >= 32 here */
}

/** @brief elv_avg_update() as a function; does nothing when @p a is NULL. */
ELV_API void elv_avg_add(struct elv_avg *a, uint64_t x);
/** @brief 1 when enough samples were seen for the mean to be trusted (weight > 80). */
static inline int elv_avg_valid(const struct elv_avg *a)
{
	return a->samples > 80;
}

/* ---- tunables ------------------------------------------------------------------------ */

/** @brief Read tunable @p t from policy state @p data, in internal units. */
static inline int64_t elv_tunable_raw(const void *data, const struct elv_tunable *t)
{
	return *(const int64_t *)(const void *)((const char *)data + t->offset);
}

/** @brief Store every tunable's default into policy state @p data. */
ELV_API void elv_tunables_reset(void *data, const struct elv_tunable *t, unsigned n);

/** @} */

#ifdef __cplusplus
}
#endif

#endif /* ELEVATOR_POLICY_H */
