/**
 * @file elevator.h
 * @brief libelevator public API: requests, streams, queues, dispatch, tunables, stats.
 *
 * libelevator is a library of disk I/O scheduling ("elevator") policies. The host embeds a
 * struct elv_request in each of its own I/O descriptors, builds a queue in memory it owns,
 * and drives it with elv_add(), elv_dispatch(), elv_complete() and friends, passing the
 * current time (nanoseconds, any epoch) into every call that may depend on it. The library
 * never allocates (except elv_queue_create()), never reads a clock and keeps no global state.
 *
 * One queue is used under one lock, the host's. Separate queues need no coordination.
 *
 * @par Time
 * @c now is a free-running 64-bit nanosecond counter: it may start anywhere and wrap past
 * 2^64 to 0. The library compares times by their difference (serial-number arithmetic, the
 * elv_time_after() family in policy.h), so times it compares must be less than 2^63 ns (292
 * years) apart; a host comparing elv_next_event() with its clock does the same.
 *
 * Each queue keeps the latest time it has seen, and a call whose @c now is earlier works at
 * that latest time instead: policies never see time run backwards. A step back of up to
 * 10 ms (ELV_TIME_SKEW_MAX_NS at build time) is taken as skew between unsynchronised clocks:
 * the queue's time waits until the host's catches up. A larger step is a clock set back:
 * the queue's time goes on from where it was at the pace of the host's clock, so no request
 * waits for the size of the step; elv_next_event() and trace events stay in the host's
 * timeline (the step is subtracted). Calls that are refused do not move the clock.
 *
 * @par Callbacks
 * The host's callbacks (allow_merge, merge, trace and position_time in struct elv_config, and
 * the function given to elv_drain()) run inside a call on the queue. While one runs, every call on that
 * same queue that would change it (elv_add(), elv_dispatch(), elv_complete(), elv_requeue(),
 * elv_cancel(), elv_drain(), elv_switch(), elv_stream_init(), elv_stream_exit(),
 * elv_stream_set_prio(), elv_stream_set_weight(), elv_stream_set_group(), elv_group_init(),
 * elv_group_exit(), elv_group_set_weight(), elv_tunable_set(), elv_queue_exit(),
 * elv_queue_destroy()) returns
 * ELV_EBUSY and changes nothing. The getters elv_queue_policy(), elv_next_event(),
 * elv_stats(), elv_policy_stat() and elv_tunable_get() work; elv_queue_check() returns
 * ELV_EBUSY, since the queue may be between two steps of one call. Other queues may be used
 * freely, and a request handed back to the host (an absorbed one in the merge callback, a
 * drained one in elv_drain()'s function) may go to another queue at once.
 *
 * @par After elv_queue_exit()
 * Once elv_queue_exit() has succeeded, every call on that queue fails with ELV_EINVAL
 * (elv_next_event() returns ELV_TIME_NEVER, elv_queue_policy() NULL) and changes nothing,
 * until the host gives the memory to elv_queue_init() again or reuses it.
 */
#ifndef ELEVATOR_ELEVATOR_H
#define ELEVATOR_ELEVATOR_H

#include <stddef.h>
#include <stdint.h>

#include "elevator/elv_config.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @defgroup elv_api Public API
 * @{
 */

/**
 * @brief Major version. From 1.0 on the ABI breaks only when this moves, and the SONAME is
 * libelevator.so.MAJOR.
 */
#define ELV_VERSION_MAJOR 0
/**
 * @brief Minor version: new features. In 0.x the minor acts as the major: 0.1 and 0.2 may be
 * ABI-incompatible, and the SONAME is libelevator.so.0.MINOR. From 1.0 on, compatible within
 * a major version.
 */
#define ELV_VERSION_MINOR 3
/** @brief Patch version: fixes only. */
#define ELV_VERSION_PATCH 0
/** @brief The version as one number: MAJOR * 10000 + MINOR * 100 + PATCH. */
#define ELV_VERSION_NUMBER \
	(ELV_VERSION_MAJOR * 10000 + ELV_VERSION_MINOR * 100 + ELV_VERSION_PATCH)

/**
 * @brief Marks a library-private member of a public struct.
 *
 * The struct stays visible so the host can embed or allocate it, but private members are
 * renamed so that any use of them is visibly unsupported. The library's core defines
 * ELV_ALLOW_PRIVATE_ACCESS to use the plain names; policies, built in or not, read what they
 * need through the accessors of policy.h instead.
 */
#if defined(ELV_ALLOW_PRIVATE_ACCESS)
#define ELV_PRIVATE(m) m
#else
#define ELV_PRIVATE(m) elv__priv_##m
#endif

/** @brief Recover the host struct of type @p T that embeds member @p m at pointer @p p. */
#define elv_container_of(p, T, m) ((T *)(void *)((char *)(p) - offsetof(T, m)))

/** @name Error codes: 0 or one of these negative values, equal to the negative errno value. */
/** @{ */
#define ELV_OK 0            /**< Success. */
#define ELV_ENOENT (-2)     /**< No such tunable, policy or stats entry. */
#define ELV_EIO (-5)        /**< Zoned queue: the zone is unusable or its write pointer is lost. */
#define ELV_EAGAIN (-11)    /**< Nothing to dispatch now (queue empty or policy idling). */
#define ELV_ENOMEM (-12)    /**< Allocation failed (elv_queue_create() only). */
#define ELV_EBUSY (-16)     /**< Object in use: request already queued, stream with requests. */
#define ELV_EINVAL (-22)    /**< Invalid argument, or a request in the wrong state. */
#define ELV_ENOSPC (-28)    /**< Memory buffer too small for this queue or policy. */
#define ELV_ERANGE (-34)    /**< Tunable value outside its documented range. */
#define ELV_ENOSYS (-38)    /**< Operation not available in this build (for example no malloc). */
#define ELV_EOVERFLOW (-75) /**< Sector plus length would pass the end of the 64-bit sector space. */
/** @} */

/** @brief Size of a stream's policy-private area in 64-bit words (fixed: part of the ABI). */
#define ELV_STREAM_PRIV_WORDS 96

/** @brief Size of a group's policy-private area in 64-bit words (fixed: part of the ABI). */
#define ELV_GROUP_PRIV_WORDS 48

/** @name Weights of streams and groups */
/** @{ */
#define ELV_WEIGHT_MAX 1000u           /**< Largest stream weight (Linux BFQ's range 1..1000). */
#define ELV_GROUP_WEIGHT_MAX 10000u    /**< Largest group weight (Linux io.weight: 1..10000). */
#define ELV_GROUP_WEIGHT_DEFAULT 100u  /**< Weight of a group whose @c weight is 0 at init. */
/** @} */

/** @brief "Never": returned by elv_next_event() when no timed action is pending. */
#define ELV_TIME_NEVER UINT64_MAX

/** @brief Nanoseconds per millisecond, for hosts converting their clocks. */
#define ELV_NSEC_PER_MSEC 1000000ULL

/** @brief Operation of a request (struct elv_request::op). */
enum elv_op {
	ELV_OP_READ = 0,    /**< Read data from the device. */
	ELV_OP_WRITE = 1,   /**< Write data to the device. */
	ELV_OP_DISCARD = 2, /**< Discard (trim) a range; merges only with discards. */
	ELV_OP_FLUSH = 3    /**< Flush the device cache; never merges, may have zero length. */
};

/** @brief Request flags (struct elv_request::flags), OR-ed together. */
enum elv_rq_flags {
	ELV_RQ_SYNC = 1u << 0,      /**< Someone waits for it (reads are always treated as sync). */
	ELV_RQ_META = 1u << 1,      /**< File system metadata. */
	ELV_RQ_FUA = 1u << 2,       /**< Force unit access: data reaches media before completion;
				     *   never merged. */
	ELV_RQ_READAHEAD = 1u << 3, /**< Speculative read-ahead; nobody waits yet. */
	ELV_RQ_BARRIER = 1u << 4,   /**< Ordered: nothing added before it is dispatched after it,
				     *   nothing added after it is dispatched before it, never merged. */
	ELV_RQ_NOMERGE = 1u << 5    /**< Never merge this request with another. */
};

/** @brief I/O priority classes (the Linux ioprio model). */
enum elv_prio_class {
	ELV_PRIO_NONE = 0, /**< No class given: best effort, level derived from the stream. */
	ELV_PRIO_RT = 1,   /**< Real time: served before everything else. */
	ELV_PRIO_BE = 2,   /**< Best effort: the default. */
	ELV_PRIO_IDLE = 3  /**< Idle: served only when nothing else wants the device. */
};

/** @brief Pack an I/O priority: class (enum elv_prio_class) and level 0 (highest) to 7. */
#define ELV_PRIO(cls, level) ((uint8_t)((((unsigned)(cls) & 3u) << 3) | ((unsigned)(level) & 7u)))
/** @brief The class of a packed I/O priority. */
#define ELV_PRIO_CLASS(p) (((unsigned)(p) >> 3) & 3u)
/** @brief The level (0-7) of a packed I/O priority. */
#define ELV_PRIO_LEVEL(p) ((unsigned)(p) & 7u)
/** @brief Default level inside a class, as in Linux. */
#define ELV_PRIO_DEFAULT_LEVEL 4

struct elv_queue;
struct elv_stream;
struct elv_group;
struct elv_policy;

/** @brief Intrusive doubly linked list node (also a list head). Library-owned when embedded. */
struct elv_list {
	struct elv_list *next; /**< Next node, or the head when last. */
	struct elv_list *prev; /**< Previous node, or the head when first. */
};

/** @brief Intrusive red-black tree node. Library-owned when embedded in a request. */
struct elv_rb_node {
	uintptr_t parent_color; /**< Parent pointer with the colour in bit 0. */
	struct elv_rb_node *left;  /**< Left child (smaller keys). */
	struct elv_rb_node *right; /**< Right child (equal or larger keys). */
};

/**
 * @brief One I/O request, embedded by the host in its own I/O descriptor.
 *
 * The host zeroes it (or calls elv_request_init()) once, then sets the public fields before
 * each elv_add(). Public fields must not change while the library holds the request (from
 * elv_add() until the request is completed, cancelled, drained or absorbed by a merge),
 * except that the library itself grows a request when it merges another into it.
 * Members named through ELV_PRIVATE() belong to the library.
 */
struct elv_request {
	uint64_t sector;           /**< First sector (512-byte units). */
	uint32_t nr_sectors;       /**< Length in sectors; 0 only for ELV_OP_FLUSH. */
	uint8_t op;                /**< enum elv_op. */
	uint8_t flags;             /**< enum elv_rq_flags. */
	uint8_t ioprio;            /**< ELV_PRIO(class, level); 0 means "take the stream's". */
	uint8_t ELV_PRIVATE(state);   /**< Lifecycle state; lets the library reject misuse. */
	struct elv_stream *stream; /**< Issuer, or NULL for an anonymous (async-like) request. */
	uint32_t ELV_PRIVATE(seq);    /**< Arrival sequence number within the queue. */
	uint64_t ELV_PRIVATE(time);   /**< Arrival time (ns). */
	struct elv_rb_node ELV_PRIVATE(rb);   /**< Sector-sorted tree link. */
	struct elv_list ELV_PRIVATE(fifo);    /**< FIFO / core list link. */
	/**
	 * Back-merge hash chain while queued and mergeable (or, with bit 0 set, the hash of a
	 * queue that left it out of a full chain); otherwise the owning queue.
	 */
	union {
		struct elv_request *next;  /**< Next request on the same hash chain. */
		struct elv_queue *owner;   /**< Queue holding the request. */
		uintptr_t word;            /**< The link as a number: bit 0 marks "not chained". */
	} ELV_PRIVATE(hlink);
};

/**
 * @brief Per-issuer state (a process, thread, initiator or LUN), owned by the host.
 *
 * Anticipatory, CFQ and BFQ keep their per-stream statistics and queues here, so a stream is
 * large; it is registered with one queue by elv_stream_init() and retired with
 * elv_stream_exit(). Set @c ioprio and @c weight before init, or later through
 * elv_stream_set_prio() and elv_stream_set_weight(); put it in a group with
 * elv_stream_set_group().
 */
struct elv_stream {
	uint8_t ioprio;                  /**< ELV_PRIO(class, level) of this issuer. */
	uint8_t ELV_PRIVATE(flags);      /**< Library flags. */
	/**
	 * Share of the device against the other streams of its group, 1..ELV_WEIGHT_MAX, for the
	 * policies that honour weights (bfq); 0 derives it from the I/O priority as Linux does
	 * (elv_stream_weight()). Policies without weights ignore it.
	 */
	uint16_t weight;
	uint32_t ELV_PRIVATE(nr_rq);     /**< Requests held by the library (queued or in flight). */
	struct elv_queue *ELV_PRIVATE(q); /**< Queue it is registered with. */
	struct elv_group *ELV_PRIVATE(group); /**< Its group, NULL for the root. */
	void *ELV_PRIVATE(qos);          /**< The QoS stage's per-stream state; the core zeroes it. */
	struct elv_list ELV_PRIVATE(link); /**< On the queue's stream list. */
	/** Policy-private area (anticipation statistics, CFQ per-stream queue). */
	union {
		uint64_t u64[ELV_STREAM_PRIV_WORDS];
		void *ptr[ELV_STREAM_PRIV_WORDS];
	} ELV_PRIVATE(priv);
};

/**
 * @brief A group of streams sharing one weight, owned by the host (like a cgroup's
 * @c io.weight, one level below the root).
 *
 * The host zeroes it, sets @c weight and registers it with elv_group_init(); streams join it
 * with elv_stream_set_group(). Under a policy that honours weights, the streams of a group
 * share the group's part of the device; the groups, and the streams in no group (the root's
 * own, as the queues of the root cgroup in Linux), share the device by their weights. Other
 * policies ignore groups.
 */
struct elv_group {
	/** 1..ELV_GROUP_WEIGHT_MAX; 0 at elv_group_init() means ELV_GROUP_WEIGHT_DEFAULT. */
	uint16_t weight;
	uint8_t ELV_PRIVATE(flags);        /**< Library flags. */
	uint8_t ELV_PRIVATE(pad);          /**< Reserved, zero. */
	uint32_t ELV_PRIVATE(nr_streams);  /**< Streams in the group. */
	struct elv_queue *ELV_PRIVATE(q);  /**< Queue it is registered with. */
	void *ELV_PRIVATE(qos);            /**< The QoS stage's per-group state; the core zeroes it. */
	struct elv_list ELV_PRIVATE(link); /**< On the queue's group list. */
	/** Policy-private area (bfq's group entity and its service trees). */
	union {
		uint64_t u64[ELV_GROUP_PRIV_WORDS];
		void *ptr[ELV_GROUP_PRIV_WORDS];
	} ELV_PRIVATE(priv);
};

/** @brief Kinds of merge, as reported to the host's merge callbacks. */
enum elv_merge_kind {
	ELV_MERGE_BACK = 1,  /**< The new request extends a queued one at its end. */
	ELV_MERGE_FRONT = 2, /**< The new request extends a queued one at its start. */
	ELV_MERGE_REQ = 3    /**< Two queued requests became contiguous and were joined. */
};

/** @brief Events passed to the trace callback. */
enum elv_trace_type {
	ELV_TRACE_INSERT = 1,    /**< A request entered the queue. */
	ELV_TRACE_MERGE = 2,     /**< @c rq absorbed @c other (see enum elv_merge_kind in @c arg). */
	ELV_TRACE_DISPATCH = 3,  /**< A request was handed to the host for the device. */
	ELV_TRACE_COMPLETE = 4,  /**< The host reported completion. */
	ELV_TRACE_REQUEUE = 5,   /**< The host gave a dispatched request back. */
	ELV_TRACE_CANCEL = 6,    /**< A queued request was cancelled or drained (@c arg 0), or
				  *   given back by an admission stage (@c arg the positive error). */
	ELV_TRACE_IDLE_START = 7, /**< The policy started idling (anticipation, slice idle). */
	ELV_TRACE_IDLE_STOP = 8, /**< Idling ended; @c arg is the idle time in ns. */
	ELV_TRACE_EXPIRE = 9     /**< A deadline expired and forced FIFO order. */
};

/**
 * @brief One trace event. Pointers are valid only during the callback.
 *
 * The library builds the event and may grow it at its end in a later version; @c size says
 * how much of it this library filled in, so a host reads a field only when
 * @c size >= offsetof(struct elv_trace_event, field) + sizeof(field).
 */
struct elv_trace_event {
	uint64_t now;                    /**< Host time of the event (ns). */
	uint64_t arg;                    /**< Event-specific value (merge kind, idle ns). */
	const struct elv_request *rq;    /**< The request concerned, or NULL. */
	const struct elv_request *other; /**< Second request (merges), or NULL. */
	uint8_t type;                    /**< enum elv_trace_type. */
	uint8_t reserved8[3];            /**< Reserved, zero. */
	uint32_t size;                   /**< sizeof(struct elv_trace_event) in the library. */
};

/** @brief Device traits the host knows; policies adapt to them (all zero means "unknown"). */
struct elv_device_traits {
	uint8_t rotational;   /**< 1 for a rotating disk, 0 for flash or unknown. */
	uint8_t zoned;        /**< 1 when writes to sequential zones must be in order. */
	uint16_t queue_depth; /**< Commands the device accepts at once; 0 means 1. */
	uint32_t max_sectors; /**< Largest request after merging; 0 means no limit. */
	uint32_t mbps;        /**< Sustained throughput class in MB/s; 0 unknown. */
};

/**
 * @brief Queue configuration. Zero-initialise it; a zero field means "default".
 *
 * All callbacks are optional and receive @c ctx. They run inside a call on the queue: there
 * they may read it (elv_stats(), elv_next_event(), ...) and use other queues, but every call
 * on the same queue that would change it returns ELV_EBUSY (see "Callbacks" in elevator.h).
 */
struct elv_config {
	struct elv_device_traits dev; /**< What the device is like. */
	/**
	 * Expected peak of queued requests (default 128, at most 2^24); sizes the back-merge
	 * hash. Not a limit: a queue takes every request, and every operation stays O(log n) or
	 * better at any depth. With far more requests queued, some back merges are missed: no
	 * hash chain holds more than 8 requests, and a longer one forgets the request it got
	 * first. The 8 requests hashed last are always found, so up to 8 interleaved sequential
	 * streams merge every request at any depth; front merges are not affected.
	 */
	uint32_t nr_requests;
	/** 1 disables all merging (like Linux nomerges=2). */
	uint8_t no_merges;
	uint8_t reserved8[3]; /**< Reserved, zero. */
	/**
	 * Veto a merge: return non-zero to allow @p next to be joined onto @p rq
	 * (@p next follows @p rq on disk). Called before the library changes anything; it must
	 * not change @p rq or @p next, and calls that would change the queue return ELV_EBUSY.
	 */
	int (*allow_merge)(void *ctx, const struct elv_request *rq, const struct elv_request *next,
			   enum elv_merge_kind kind);
	/**
	 * Carry out a merge: join @p absorbed's payload into @p into. It runs after the
	 * library has finished with @p absorbed, so the host may reuse or free it at once;
	 * @p into still shows its extent before the merge (the library grows it right after).
	 * Completing @p into completes both. For
	 * ELV_MERGE_BACK and ELV_MERGE_REQ @p absorbed follows @p into on disk; for
	 * ELV_MERGE_FRONT it precedes it. Called after allow_merge() agreed. @p absorbed may go
	 * to another queue here; calls on this queue that would change it (adding @p absorbed
	 * again, say) return ELV_EBUSY, and @p into's public fields must stay as they are.
	 */
	void (*merge)(void *ctx, struct elv_request *into, struct elv_request *absorbed,
		      enum elv_merge_kind kind);
	/**
	 * Told every trace event; keep it short. NULL costs one branch per event. Calls on the
	 * queue that would change it return ELV_EBUSY here.
	 */
	void (*trace)(void *ctx, const struct elv_trace_event *ev);
	void *ctx; /**< Passed to every callback. */
	/** Carved out of the reserved room: one 64-bit word whatever the pointer size. */
	union {
		/**
		 * Estimate, in ns, the time the device would need to position for @p rq (seek
		 * plus rotational latency) if it were issued at @p now, from the head state the
		 * host's model of the drive keeps. Used by the sptf and asptf policies, which
		 * fall back to seek distance without it. Called during elv_dispatch() for a few
		 * queued requests; it must not change @p rq, and calls that would change the
		 * queue return ELV_EBUSY.
		 */
		uint64_t (*position_time)(void *ctx, const struct elv_request *rq, uint64_t now);
		uint64_t reserved_position_time; /**< Keeps the word 64 bits wide. */
	};
	/**
	 * Reserved room for later fields, zero. A later version carves new fields out of it
	 * (zero meaning their default), so the struct keeps its size; a queue refuses a
	 * configuration with a non-zero reserved word (ELV_EINVAL), so a host written for a
	 * newer version fails loudly on an older library instead of being ignored.
	 */
	uint64_t reserved[3];
};

/** @brief Counters kept by every queue, whatever its policy. */
struct elv_stats {
	uint64_t added;        /**< elv_add() calls that succeeded. */
	uint64_t merged_back;  /**< New requests merged at the end of a queued one. */
	uint64_t merged_front; /**< New requests merged at the start of a queued one. */
	uint64_t merged_req;   /**< Queued requests joined to another queued request. */
	uint64_t dispatched[2]; /**< Dispatched reads [0] and writes, discards, flushes [1]. */
	uint64_t completed;    /**< elv_complete() calls that succeeded. */
	uint64_t expired;      /**< Dispatches forced by an expired deadline. */
	uint64_t requeued;     /**< elv_requeue() calls that succeeded. */
	uint64_t cancelled;    /**< Requests returned by elv_cancel() or elv_drain(). */
	uint64_t idle_ns;      /**< Total time the policy idled on purpose. */
	uint64_t idle_count;   /**< Number of idle periods started. */
	uint32_t queued;       /**< Requests held now and not dispatched. */
	uint32_t in_flight;    /**< Requests dispatched and not completed now. */
	/**
	 * Reserved room for later counters; elv_stats() writes zero here. A later version
	 * takes new counters from it, so the struct keeps its size and a counter this library
	 * does not keep reads as zero.
	 */
	uint64_t reserved[6];
};

/** @brief Flags for elv_dispatch(). */
enum elv_dispatch_flags {
	ELV_DISPATCH_FORCE = 1u << 0 /**< Never idle: return a request if any is queued. */
};

/** @brief One tunable of a policy: name, unit, default and range, as shown to users. */
struct elv_tunable {
	const char *name;  /**< sysfs-style name, e.g. "read_expire". */
	const char *unit;  /**< "ms", "us", "requests", "bool", "sectors", ... */
	const char *desc;  /**< One line on what it does. */
	int64_t def;       /**< Default value (in @c unit). */
	int64_t min;       /**< Smallest accepted value. */
	int64_t max;       /**< Largest accepted value. */
	uint32_t offset;   /**< Where the value lives in the policy data (int64_t, internal). */
	uint32_t scale;    /**< Internal value = user value * scale (1e6 for ms stored as ns). */
};

/** @brief Called by elv_drain() once per returned request. */
typedef void (*elv_drain_fn)(void *arg, struct elv_request *rq);

/** @brief The library's version as ELV_VERSION_NUMBER at build time. */
ELV_API unsigned elv_version(void);
/** @brief The library's version as "MAJOR.MINOR.PATCH". */
ELV_API const char *elv_version_string(void);
/**
 * @brief A short message for an error code.
 * @param err 0 or a negative ELV_E* code.
 * @return a static string; "" when built with ELV_NO_STRERROR.
 */
ELV_API const char *elv_strerror(int err);

/**
 * @brief Reset a request to the state the library expects before its first elv_add().
 *
 * Call it once, when the host creates the descriptor that embeds @p rq (or zero the request
 * instead). Never call it on a request the library holds (added and not yet completed,
 * cancelled, drained or absorbed by a merge): that erases the links that keep the request
 * in the queue, the queue may then hand it out twice, and the library cannot detect it. To
 * submit a descriptor again, set its public fields and call elv_add(), which refuses a
 * request still held with ELV_EBUSY.
 * @param rq request to reset (all fields zeroed).
 */
ELV_API void elv_request_init(struct elv_request *rq);

/**
 * @name Built-in policies
 * Referenced directly, a policy links only its own code; elv_policy_find() and
 * elv_policy_at() link all of them (a firmware that needs one policy names it here).
 */
/** @{ */
ELV_API extern const struct elv_policy elv_policy_noop;         /**< FIFO with merging. */
ELV_API extern const struct elv_policy elv_policy_deadline;     /**< Deadline with priorities. */
ELV_API extern const struct elv_policy elv_policy_anticipatory; /**< Anticipatory. */
ELV_API extern const struct elv_policy elv_policy_cfq;          /**< Completely fair queueing. */
ELV_API extern const struct elv_policy elv_policy_kyber; /**< Token depths from latency targets. */
ELV_API extern const struct elv_policy elv_policy_bfq;   /**< Budget fair queueing, weights. */
ELV_API extern const struct elv_policy elv_policy_fcfs;  /**< Classic: first come, first served. */
ELV_API extern const struct elv_policy elv_policy_sstf;  /**< Classic: shortest seek first. */
ELV_API extern const struct elv_policy elv_policy_scan;  /**< Classic: SCAN (edge to edge). */
ELV_API extern const struct elv_policy elv_policy_look;  /**< Classic: LOOK. */
ELV_API extern const struct elv_policy elv_policy_cscan; /**< Classic: circular SCAN. */
ELV_API extern const struct elv_policy elv_policy_clook; /**< Classic: circular LOOK. */
ELV_API extern const struct elv_policy elv_policy_nscan; /**< Classic: N-step SCAN. */
ELV_API extern const struct elv_policy elv_policy_fscan; /**< Classic: FSCAN. */
ELV_API extern const struct elv_policy elv_policy_vr;    /**< Classic: V(R). */
ELV_API extern const struct elv_policy elv_policy_sptf;  /**< Classic: shortest positioning time. */
ELV_API extern const struct elv_policy elv_policy_asptf; /**< Classic: aged SPTF. */
/** @} */

/**
 * @brief A built-in policy by name ("noop", "deadline", "anticipatory", "cfq", ...).
 * @return the policy, or NULL when no built-in has that name.
 */
ELV_API const struct elv_policy *elv_policy_find(const char *name);
/**
 * @brief The i-th built-in policy (0-based), for listing them.
 * @return the policy, or NULL when @p i is past the last one.
 */
ELV_API const struct elv_policy *elv_policy_at(unsigned i);
/** @brief The name of a policy ("" for NULL). */
ELV_API const char *elv_policy_name(const struct elv_policy *p);
/** @brief The one-line description of a policy ("" for NULL). */
ELV_API const char *elv_policy_description(const struct elv_policy *p);
/**
 * @brief The tunables table of a policy.
 * @param p policy.
 * @param[out] nr number of entries (0 for NULL).
 * @return the table, or NULL when the policy has none.
 */
ELV_API const struct elv_tunable *elv_policy_tunables(const struct elv_policy *p, unsigned *nr);

/**
 * @brief Bytes of memory a queue running policy @p p needs.
 * @param p policy the queue starts with.
 * @param cfg configuration (NULL for defaults); its nr_requests sizes the merge hash.
 * @return the size, or 0 when @p p or @p cfg is NULL-policy or malformed.
 */
ELV_API size_t elv_queue_size(const struct elv_policy *p, const struct elv_config *cfg);
/**
 * @brief Bytes of memory a queue needs to run any built-in policy, so that elv_switch() to
 * each of them fits. Links every built-in policy; firmware that runs one policy sizes its
 * buffer with elv_queue_size() instead.
 * @param cfg configuration (NULL for defaults).
 * @return the size, or 0 when @p cfg is malformed.
 */
ELV_API size_t elv_queue_size_any(const struct elv_config *cfg);
/**
 * @brief Build a queue in caller memory.
 * @param[out] out the queue (points into @p mem).
 * @param mem memory aligned to 8 bytes, at least elv_queue_size() bytes, owned by the caller
 *            until elv_queue_exit().
 * @param len bytes available at @p mem.
 * @param p policy to start with.
 * @param cfg configuration, copied; NULL for defaults.
 * @retval 0 success.
 * @retval ELV_EINVAL NULL or misaligned argument, malformed policy or configuration.
 * @retval ELV_ENOSPC @p len is too small.
 * @retval ELV_ENOSYS @p cfg has a trace callback in a build with ELV_NO_TRACE, which could
 *         never call it.
 */
ELV_API int elv_queue_init(struct elv_queue **out, void *mem, size_t len,
			   const struct elv_policy *p, const struct elv_config *cfg);
/**
 * @brief Tear a queue down. It must hold no request, no stream and no group.
 *
 * Afterwards every call on @p q fails with ELV_EINVAL (see "After elv_queue_exit()" above)
 * until the memory is reused.
 * @retval 0 success; the memory is the caller's again.
 * @retval ELV_EBUSY requests are queued or in flight, or streams or groups are registered,
 *         or called from one of the queue's callbacks.
 * @retval ELV_EINVAL @p q is NULL or already torn down.
 */
ELV_API int elv_queue_exit(struct elv_queue *q);
/**
 * @brief Hosted convenience: allocate and build a queue large enough for any built-in policy.
 * @retval ELV_ENOSYS in builds with ELV_NO_MALLOC; otherwise as elv_queue_init() or ELV_ENOMEM.
 */
ELV_API int elv_queue_create(struct elv_queue **out, const struct elv_policy *p,
			     const struct elv_config *cfg);
/**
 * @brief Tear down and free a queue from elv_queue_create(); nothing is freed when the
 * teardown fails. After success @p q is gone: no call may use it.
 * @retval 0, ELV_EBUSY or ELV_EINVAL as elv_queue_exit(); ELV_ENOSYS without malloc.
 */
ELV_API int elv_queue_destroy(struct elv_queue *q);
/** @brief The policy a queue runs now (NULL for NULL or a torn-down queue). Usable in callbacks. */
ELV_API const struct elv_policy *elv_queue_policy(const struct elv_queue *q);

/**
 * @brief Register a stream with a queue.
 * @param q queue.
 * @param s stream, zeroed by the host before its first registration (a stream that looks
 *          registered is refused with ELV_EBUSY); its @c ioprio must already be set (0 means
 *          best effort, level 4) and its @c weight (0 derives it from the priority). It
 *          starts in the root group.
 * @param now host time (ns); one earlier than the queue has seen is clamped (see "Time").
 * @retval 0 success.
 * @retval ELV_EINVAL NULL argument or invalid priority, or @p q is torn down.
 * @retval ELV_ERANGE @c weight above ELV_WEIGHT_MAX.
 * @retval ELV_EBUSY @p s is registered already, or called from one of the queue's callbacks.
 */
ELV_API int elv_stream_init(struct elv_queue *q, struct elv_stream *s, uint64_t now);
/**
 * @brief Retire a stream. It must hold no queued or in-flight request; it leaves its group.
 * @param q queue.
 * @param s stream registered with @p q.
 * @param now host time (ns); one earlier than the queue has seen is clamped (see "Time").
 * @retval 0 success.
 * @retval ELV_EBUSY requests of this stream are still held by the library, or called from
 *         one of the queue's callbacks.
 * @retval ELV_EINVAL NULL argument, @p s is not registered with @p q, or @p q is torn down.
 */
ELV_API int elv_stream_exit(struct elv_queue *q, struct elv_stream *s, uint64_t now);
/**
 * @brief Change a registered stream's I/O priority; it applies to its next slice or request.
 * @retval 0 success; ELV_EINVAL bad argument or torn-down queue; ELV_EBUSY called from one of
 *         the queue's callbacks.
 */
ELV_API int elv_stream_set_prio(struct elv_queue *q, struct elv_stream *s, uint8_t ioprio);
/**
 * @brief Change a registered stream's weight; policies apply it at the stream's next
 * activation (bfq, as Linux, when its queue next becomes busy or is requeued).
 * @param q queue.
 * @param s stream registered with @p q.
 * @param weight 1..ELV_WEIGHT_MAX, or 0 to derive it from the I/O priority again.
 * @retval 0 success.
 * @retval ELV_ERANGE @p weight above ELV_WEIGHT_MAX; nothing changed.
 * @retval ELV_EINVAL NULL argument, @p s not registered with @p q, or @p q torn down.
 * @retval ELV_EBUSY called from one of the queue's callbacks.
 * @retval ELV_ENOSYS built with ELV_NO_STREAMS.
 */
ELV_API int elv_stream_set_weight(struct elv_queue *q, struct elv_stream *s, uint16_t weight);
/**
 * @brief Move a registered stream into group @p g, or back to the root with NULL.
 *
 * Only a stream the library holds no request of may move (its service so far stays with
 * the group it was earned in).
 * @param q queue.
 * @param s stream registered with @p q.
 * @param g group registered with @p q, or NULL for the root.
 * @retval 0 success (also when @p s is in @p g already).
 * @retval ELV_EBUSY @p s has queued or in-flight requests, or called from one of the queue's
 *         callbacks; nothing changed.
 * @retval ELV_EINVAL NULL @p q or @p s, @p s or @p g not registered with @p q, or @p q
 *         torn down.
 * @retval ELV_ENOSYS built with ELV_NO_STREAMS.
 */
ELV_API int elv_stream_set_group(struct elv_queue *q, struct elv_stream *s, struct elv_group *g);

/**
 * @brief Register a group with a queue.
 * @param q queue.
 * @param g group, zeroed by the host before its first registration (one that looks
 *          registered is refused with ELV_EBUSY); its @c weight set (0 means
 *          ELV_GROUP_WEIGHT_DEFAULT, stored back into @c weight).
 * @param now host time (ns); one earlier than the queue has seen is clamped (see "Time").
 * @retval 0 success.
 * @retval ELV_ERANGE @c weight above ELV_GROUP_WEIGHT_MAX; nothing changed.
 * @retval ELV_EINVAL NULL argument, or @p q torn down.
 * @retval ELV_EBUSY @p g is registered already, or called from one of the queue's callbacks.
 * @retval ELV_ENOSYS built with ELV_NO_STREAMS.
 */
ELV_API int elv_group_init(struct elv_queue *q, struct elv_group *g, uint64_t now);
/**
 * @brief Retire a group. It must hold no stream (move them out with elv_stream_set_group()
 * or retire them first).
 * @param q queue.
 * @param g group registered with @p q.
 * @param now host time (ns); one earlier than the queue has seen is clamped (see "Time").
 * @retval 0 success; @p g is the host's again.
 * @retval ELV_EBUSY streams are still in @p g, or called from one of the queue's callbacks.
 * @retval ELV_EINVAL NULL argument, @p g not registered with @p q, or @p q torn down.
 * @retval ELV_ENOSYS built with ELV_NO_STREAMS.
 */
ELV_API int elv_group_exit(struct elv_queue *q, struct elv_group *g, uint64_t now);
/**
 * @brief Change a group's weight; policies apply it when the group is next activated.
 * @param q queue.
 * @param g group registered with @p q.
 * @param weight 1..ELV_GROUP_WEIGHT_MAX.
 * @retval 0 success.
 * @retval ELV_ERANGE @p weight is 0 or above ELV_GROUP_WEIGHT_MAX; nothing changed.
 * @retval ELV_EINVAL NULL argument, @p g not registered with @p q, or @p q torn down.
 * @retval ELV_EBUSY called from one of the queue's callbacks.
 * @retval ELV_ENOSYS built with ELV_NO_STREAMS.
 */
ELV_API int elv_group_set_weight(struct elv_queue *q, struct elv_group *g, uint16_t weight);

/**
 * @brief Hand a request to the queue.
 * @param q queue.
 * @param rq request with its public fields set and not held by the library.
 * @param now host time (ns), the request's arrival time; one earlier than the queue has seen
 *        is clamped (see "Time").
 * @retval 0 queued.
 * @retval 1 merged into a queued request (the merge callback ran); @p rq is the host's again.
 * @retval ELV_EINVAL NULL, zero length, unknown op or flag, bad priority or stream, or @p q
 *         is torn down.
 * @retval ELV_EOVERFLOW sector + nr_sectors passes 2^64.
 * @retval ELV_EBUSY @p rq is already held by a queue, or called from one of the queue's
 *         callbacks.
 * @retval ELV_ENOSYS @p rq has ELV_RQ_BARRIER in a build with ELV_NO_BARRIER, which cannot
 *         order it.
 * @retval other a zone stage (zone.h) refuses writes and zone operations it cannot order
 *         (ELV_ERANGE, ELV_EINVAL, ELV_ENOSPC, ELV_EIO, ELV_EAGAIN, ELV_EBUSY; its table); a
 *         QoS stage (qos.h) refuses with ELV_EAGAIN at a limit set to reject.
 */
ELV_API int elv_add(struct elv_queue *q, struct elv_request *rq, uint64_t now);
/**
 * @brief Take the next request for the device.
 * @param q queue.
 * @param now host time (ns); one earlier than the queue has seen is clamped (see "Time").
 * @param flags enum elv_dispatch_flags.
 * @param[out] out the request, now in flight.
 * @retval 0 a request was returned.
 * @retval ELV_EAGAIN nothing now: the queue holds nothing to dispatch, or the policy idles on
 *         purpose (then elv_next_event() tells when to call again), or it waits for requests
 *         in flight to complete before it changes direction (then the next elv_complete()
 *         is the moment to call again).
 * @retval ELV_EINVAL NULL argument or unknown flag, or @p q is torn down.
 * @retval ELV_EBUSY called from one of the queue's callbacks.
 */
ELV_API int elv_dispatch(struct elv_queue *q, uint64_t now, unsigned flags,
			 struct elv_request **out);
/**
 * @brief When the host must call elv_dispatch() again even if nothing else happens.
 *
 * The time may wrap past 2^64: the host is due when (int64_t)(t - now) <= 0, not when
 * t <= now. An event that falls exactly on ELV_TIME_NEVER is reported as 0, one nanosecond
 * later. Usable in callbacks.
 * @return an absolute host time (ns), or ELV_TIME_NEVER when no timed action is pending, for
 *         NULL, and for a torn-down queue (the function has no error channel).
 */
ELV_API uint64_t elv_next_event(const struct elv_queue *q);
/**
 * @brief Report that the device finished a dispatched request; it is the host's again.
 * @param q queue.
 * @param rq request dispatched by @p q.
 * @param now host time (ns); one earlier than the queue has seen is clamped (see "Time").
 * @retval 0 success.
 * @retval ELV_EINVAL NULL, the request is not in flight from @p q, or @p q is torn down.
 * @retval ELV_EBUSY called from one of the queue's callbacks.
 */
ELV_API int elv_complete(struct elv_queue *q, struct elv_request *rq, uint64_t now);
/**
 * @brief elv_complete() with the outcome: elv_complete(q, rq, now) is
 * elv_complete_status(q, rq, 0, now).
 *
 * Policies see a failed request complete like any other; the zone stage (zone.h) needs the
 * outcome: a failed write leaves its zone's write pointer unknown. Traced as
 * ELV_TRACE_COMPLETE with @c arg = -@p status.
 * @param q queue.
 * @param rq request dispatched by @p q.
 * @param status 0 when the device did the request, else a negative error of the host's
 *        choosing (a negative errno value such as -5 for EIO).
 * @param now host time (ns); one earlier than the queue has seen is clamped (see "Time").
 * @retval 0 success.
 * @retval ELV_EINVAL @p status above 0, NULL, the request is not in flight from @p q, or
 *         @p q is torn down.
 * @retval ELV_EBUSY called from one of the queue's callbacks.
 */
ELV_API int elv_complete_status(struct elv_queue *q, struct elv_request *rq, int status,
				uint64_t now);
/**
 * @brief Give back a dispatched request the device refused (BUSY); it is dispatched again first.
 * @param q queue.
 * @param rq request dispatched by @p q.
 * @param now host time (ns); one earlier than the queue has seen is clamped (see "Time").
 * @retval 0 success.
 * @retval ELV_EINVAL NULL, the request is not in flight from @p q, or @p q is torn down.
 * @retval ELV_EBUSY called from one of the queue's callbacks.
 */
ELV_API int elv_requeue(struct elv_queue *q, struct elv_request *rq, uint64_t now);
/**
 * @brief Withdraw a request that was added and not dispatched; it is the host's again.
 * @retval 0 success.
 * @retval ELV_EINVAL NULL, the request is not queued in @p q (in flight, or not held), or
 *         @p q is torn down.
 * @retval ELV_EBUSY called from one of the queue's callbacks.
 */
ELV_API int elv_cancel(struct elv_queue *q, struct elv_request *rq);
/**
 * @brief Return every queued (not in flight) request through @p fn: first those the device
 * gave back (elv_requeue()), then the rest in arrival order, and last those an admission stage
 * holds (qos.h, zone.h), in slot order. Requests in flight stay in flight.
 * Each request is the host's again when @p fn sees it. @p fn runs as a callback: calls on
 * @p q that would change it return ELV_EBUSY (see "Callbacks" above); it may hand the
 * request to another queue.
 * @return the number of requests returned; ELV_EINVAL for a NULL argument or a torn-down
 *         queue; ELV_EBUSY when called from one of the queue's callbacks.
 */
ELV_API int elv_drain(struct elv_queue *q, elv_drain_fn fn, void *arg);
/**
 * @brief Change the policy of a live queue.
 *
 * Every queued request moves to the new policy in arrival order, barriers keep their place,
 * requests in flight complete through the new policy, registered streams are carried over.
 * @param q queue.
 * @param p policy to run from now on.
 * @param now host time (ns); one earlier than the queue has seen is clamped (see "Time").
 * @retval 0 success.
 * @retval ELV_EINVAL NULL or malformed policy, or @p q is torn down (it stays torn down).
 * @retval ELV_ENOSPC the queue's memory is too small for @p p (size it with
 *         elv_queue_size_any()); nothing changed.
 * @retval ELV_EBUSY called from one of the queue's callbacks.
 */
ELV_API int elv_switch(struct elv_queue *q, const struct elv_policy *p, uint64_t now);

/**
 * @brief Read a tunable of the queue's policy, in its documented unit. Usable in callbacks.
 * @retval 0 success; ELV_ENOENT unknown name; ELV_EINVAL NULL argument or torn-down queue.
 */
ELV_API int elv_tunable_get(const struct elv_queue *q, const char *name, int64_t *value);
/**
 * @brief Set a tunable of the queue's policy, in its documented unit.
 * @retval 0 success.
 * @retval ELV_ENOENT unknown name; ELV_ERANGE outside [min, max] (old value kept);
 *         ELV_EINVAL NULL argument or torn-down queue; ELV_EBUSY called from one of the
 *         queue's callbacks.
 */
ELV_API int elv_tunable_set(struct elv_queue *q, const char *name, int64_t value);

/**
 * @brief Copy the queue's counters. Usable in callbacks.
 * @retval 0 success; ELV_EINVAL NULL argument or torn-down queue.
 */
ELV_API int elv_stats(const struct elv_queue *q, struct elv_stats *st);
/**
 * @brief Read the i-th policy-specific counter (anticipation hits, slices, ...).
 * @param[out] name its name, static.
 * @param[out] value its value.
 * @retval 0 success; ELV_ENOENT past the last; ELV_EINVAL NULL argument or torn-down queue.
 * Usable in callbacks.
 */
ELV_API int elv_policy_stat(const struct elv_queue *q, unsigned i, const char **name,
			    uint64_t *value);

/**
 * @brief Check every invariant of the queue and its policy (tests call it after each step).
 * It walks every request, so it costs O(queued requests + hash buckets).
 * @return 0 when consistent, ELV_EINVAL at the first violation found (or for NULL or a
 * torn-down queue), ELV_EBUSY when called from one of the queue's callbacks (the queue may
 * be between two steps of one call), ELV_ENOSYS in builds with ELV_NO_CHECK.
 */
ELV_API int elv_queue_check(const struct elv_queue *q);

/**
 * @brief Pick the built-in policy that fits a device.
 * @param dev traits of the device (NULL means unknown: a rotating disk).
 * @return the policy to use (never NULL).
 */
ELV_API const struct elv_policy *elv_policy_recommend(const struct elv_device_traits *dev);

/** @} */

#ifdef __cplusplus
}
#endif

#include "elevator/qos.h"
#include "elevator/zone.h"

#endif /* ELEVATOR_ELEVATOR_H */
