/**
 * @file qos.h
 * @brief Quality of service in front of any policy: throttling (rate caps with bursts) and
 * mClock (reservation, weight, limit).
 *
 * The QoS stage sits between elv_add() and the queue's policy:
 *
 *     elv_add -> (zone stage) -> [throttle] -> [mClock] -> policy -> device
 *
 * On a zoned queue (zone.h) the zone stage comes first: a write reaches the QoS stage once
 * its zone has taken it, and the QoS stage never holds two writes of one zone, so it cannot
 * reorder them.
 *
 * The host attaches it to a queue with elv_qos_attach(), in memory it owns (struct elv_qos),
 * and gives each stream or group that has settings a struct elv_qos_client of its own memory
 * (elv_qos_stream_attach(), elv_qos_group_attach()). A queue without the stage, and a
 * request whose stream and group have no settings, pay nothing.
 *
 * @par Throttling
 * Caps on bytes per second and operations per second, for all I/O or per direction, set on
 * a stream or a group (then the streams of the group share it, and the request of a stream
 * in a group must pass both). Two flavours, chosen per client by
 * elv_throttle_settings::mode:
 * - ELV_THROTTLE_BUCKET: leaky bucket used as a meter, as QEMU's block throttling: averages,
 *   bursts (a burst rate @c max held for @c max_length seconds) and size-normalised
 *   operations (@c iops_size). A request passes when each of its buckets is below its
 *   burst allowance, then fills them: one request may overshoot, later ones pay for it.
 * - ELV_THROTTLE_IOMAX: Linux @c io.max: read and write bytes and operations per second,
 *   granted in time slices (100 ms by default) with a slice's worth passing at once.
 *
 * A throttled request waits, in order, in a first-in first-out list per direction of its
 * client: the throttle never reorders requests of one stream (or group) and direction. The
 * members of a group that wait in one direction take turns (round robin). elv_next_event()
 * tells when the first waiting request may go; the host calls elv_dispatch() then.
 * Discards count as writes (as one 512-byte sector in ELV_THROTTLE_IOMAX, as Linux does).
 * Flushes, zone operations and requests without a stream pass the whole stage untouched.
 *
 * @par mClock
 * A client (a stream, or a group) with elv_mclock_settings gets a reservation (cost units
 * per second it receives even under load), a weight (its share of what the reservations
 * leave) and a limit (units per second it never exceeds, unless the queue allows it). Each
 * request's tags are computed when it becomes its client's first (the "delayed" tagging of
 * dmClock, on one server); the stage releases, while fewer than @c depth of its requests
 * are in the policy or on the device, the request whose reservation tag is due, else the one
 * with the smallest weight tag among the clients within their limit. A client that comes back
 * after @c idle_age_ns without requests starts level with the others (no saved-up credit).
 * At the limit the queue waits (ELV_QOS_AT_LIMIT_WAIT), serves anyway when the device would
 * otherwise idle (ELV_QOS_AT_LIMIT_ALLOW), or refuses the request in elv_add() with
 * ELV_EAGAIN (ELV_QOS_AT_LIMIT_REJECT). A request's mClock client is its stream's client
 * if that has mClock settings, else its group's client if that has, else it has none and
 * passes straight on.
 *
 * @par Cost of a request
 * Throttling counts a request's bytes (nr_sectors * 512; 512 for a discard under io.max) and
 * one operation, or with @c iops_size > 0 and more bytes than that, bytes / iops_size
 * operations (a fraction). mClock counts 1 + bytes / elv_qos_settings::cost_size units, or
 * 1 unit per request when @c cost_size is 0; elv_qos_request_cost() computes it.
 *
 * @par Held requests
 * A request the stage holds counts as queued in elv_stats() (not in elv_queue_nr_queued(),
 * which counts the policy's requests: the policy never sees a held one), comes
 * back from elv_drain() (after the policy's requests, in arrival order per client),
 * may be withdrawn with elv_cancel(), stays held across elv_switch(), and does not take part
 * in merges until it is released. A held request always either has a time in
 * elv_next_event() or goes on in a later elv_complete(): the throttle names the time each
 * waiting request may go; mClock names the time its next request's tags become due while
 * fewer than @c depth of the requests it let out are still in the queue or on the device,
 * and otherwise (depth full) has no event: the completion that makes room releases its next
 * request inside elv_complete(). Changing a client's settings at run time keeps its held
 * requests, in order; they are judged by the new settings from then on (see
 * elv_qos_set_throttle() and elv_qos_set_mclock() for what becomes of credit earned so far).
 *
 * Every function here that would change the queue is refused with ELV_EBUSY inside one of
 * the queue's host callbacks (the getters work there), and every one that takes a queue
 * fails on a torn-down one (ELV_EINVAL; elv_qos_request_cost() returns 0), like the calls
 * of elevator.h. Bad settings are
 * refused with ELV_EINVAL (inconsistent) or ELV_ERANGE (a value out of range), and nothing
 * changes.
 */
#ifndef ELEVATOR_QOS_H
#define ELEVATOR_QOS_H

#include <stdint.h>

#include "elevator/elevator.h"

#ifdef __cplusplus
extern "C" {
#endif

struct elv_group;

/**
 * @defgroup elv_qos QoS stage: throttling and mClock
 * @{
 */

/** @brief Size of the library's part of struct elv_qos in 64-bit words (part of the ABI). */
#define ELV_QOS_WORDS 64
/** @brief Size of the library's part of struct elv_qos_client in 64-bit words (ABI). */
#define ELV_QOS_CLIENT_WORDS 192

/** @brief Largest throttle rate (bytes or operations per second, average or burst). */
#define ELV_THROTTLE_RATE_MAX 1000000000000000ULL
/** @brief Largest burst length, in seconds. */
#define ELV_THROTTLE_LENGTH_MAX 86400u
/** @brief Largest mClock reservation or limit, in cost units per second. */
#define ELV_MCLOCK_RATE_MAX 1000000000ULL
/** @brief Largest mClock weight. */
#define ELV_MCLOCK_WEIGHT_MAX 1000000u

/** @brief Throttling flavour (elv_throttle_settings::mode). */
enum elv_throttle_mode {
	/** Leaky bucket as a meter with bursts, as QEMU's block throttling. */
	ELV_THROTTLE_BUCKET = 0,
	/** Linux cgroup @c io.max: per-direction caps granted in time slices, no bursts. */
	ELV_THROTTLE_IOMAX = 1
};

/** @brief The six limits of a throttle (index of elv_throttle_settings::limit). */
enum elv_throttle_kind {
	ELV_THROTTLE_BPS_TOTAL = 0,  /**< Bytes per second, reads and writes together. */
	ELV_THROTTLE_BPS_READ = 1,   /**< Bytes per second of reads. */
	ELV_THROTTLE_BPS_WRITE = 2,  /**< Bytes per second of writes and discards. */
	ELV_THROTTLE_IOPS_TOTAL = 3, /**< Operations per second, reads and writes together. */
	ELV_THROTTLE_IOPS_READ = 4,  /**< Operations per second of reads. */
	ELV_THROTTLE_IOPS_WRITE = 5, /**< Operations per second of writes and discards. */
	ELV_THROTTLE_NR = 6          /**< Number of limits. */
};

/**
 * @brief One limit: an average rate and its burst.
 *
 * All zero means unlimited. With ELV_THROTTLE_BUCKET: @c max is the burst rate (0 lets
 * 100 ms worth of @c avg through at once, reported back as 0), held at most @c max_length
 * seconds (0 or 1 means 1). With ELV_THROTTLE_IOMAX only @c avg is used; @c max and
 * @c max_length must be 0.
 */
struct elv_throttle_limit {
	uint64_t avg;        /**< Average rate, units per second; 0 = unlimited. */
	uint64_t max;        /**< Burst rate, units per second, >= avg; 0 = unset. */
	uint32_t max_length; /**< Burst length in seconds; 0 = 1. */
	uint32_t reserved;   /**< Reserved, zero. */
};

/**
 * @brief Throttle settings of a stream or group. Zero-initialise it: all zero is "no cap".
 *
 * Rules (ELV_EINVAL when broken, as QEMU's): a total limit and a per-direction limit of the
 * same kind (bytes, operations) cannot both be set, nor their bursts; @c iops_size needs an
 * operations limit; a burst rate needs an average; @c max >= @c avg; @c max_length > 1
 * needs @c max. ELV_ERANGE: a rate above ELV_THROTTLE_RATE_MAX, a length above
 * ELV_THROTTLE_LENGTH_MAX, @c iops_size times an operations rate above 2^62, and under
 * ELV_THROTTLE_IOMAX an operations rate above UINT32_MAX. Under ELV_THROTTLE_IOMAX only the four per-direction averages may be set
 * (@c iops_size, totals and bursts are ELV_EINVAL).
 */
struct elv_throttle_settings {
	uint8_t mode;          /**< enum elv_throttle_mode. */
	uint8_t reserved8[3];  /**< Reserved, zero. */
	/** Bytes that count as one operation for the operations limits; 0 = every request is one. */
	uint32_t iops_size;
	struct elv_throttle_limit limit[ELV_THROTTLE_NR]; /**< Indexed by enum elv_throttle_kind. */
	uint64_t reserved[2];  /**< Reserved, zero. */
};

/**
 * @brief mClock settings of a stream or group (a "client").
 *
 * Rates are in cost units per second (see "Cost of a request" above). ELV_EINVAL: @c weight 0,
 * a reservation above a non-zero limit, a non-zero reserved word. ELV_ERANGE: a rate above
 * ELV_MCLOCK_RATE_MAX, a weight above ELV_MCLOCK_WEIGHT_MAX.
 */
struct elv_mclock_settings {
	uint64_t reservation; /**< Units per second guaranteed under load; 0 = none. */
	uint64_t limit;       /**< Units per second never exceeded (see at_limit); 0 = none. */
	/**
	 * Share of the capacity left after reservations, 1..ELV_MCLOCK_WEIGHT_MAX. Its inverse is
	 * a time: a request advances its client's weight tag by cost / weight seconds, so keep
	 * weights well below the clients' request rates.
	 */
	uint32_t weight;
	uint32_t reserved;    /**< Reserved, zero. */
};

/** @brief What mClock does with a client at its limit (elv_qos_settings::at_limit). */
enum elv_qos_at_limit {
	ELV_QOS_AT_LIMIT_WAIT = 0,  /**< Hold its requests until the limit allows (default). */
	/** Serve it anyway when no client within its limit has a request (work conserving). */
	ELV_QOS_AT_LIMIT_ALLOW = 1,
	/**
	 * Refuse, in elv_add() with ELV_EAGAIN, a request whose limit tag would be later than
	 * now + reject_threshold_ns. As dmClock, a refused request still advances the client's
	 * limit tag, so a client that keeps offering too fast keeps being refused.
	 */
	ELV_QOS_AT_LIMIT_REJECT = 2
};

/**
 * @brief Settings of the stage on one queue. Zero-initialise it: zero fields mean defaults.
 */
struct elv_qos_settings {
	/**
	 * mClock: how many requests the stage lets out into the policy and the device at once
	 * (counting every request the policy holds or the device has); 0 = the device's
	 * queue_depth from struct elv_config (at least 1). Throttled requests of clients without
	 * mClock are released whatever the depth. At most 65536 (ELV_ERANGE).
	 */
	uint32_t depth;
	/** mClock cost unit in bytes: a request costs 1 + bytes / cost_size; 0 = 1 per request. */
	uint32_t cost_size;
	uint8_t at_limit;         /**< enum elv_qos_at_limit. */
	uint8_t reserved8[7];     /**< Reserved, zero. */
	/**
	 * ELV_QOS_AT_LIMIT_REJECT: how far past now a limit tag may be (ns); 0 = not at all.
	 * At most 2^62 (ELV_ERANGE).
	 */
	uint64_t reject_threshold_ns;
	/** mClock: a client without requests for this long is idle (ns); 0 = 300 s. <= 2^62. */
	uint64_t idle_age_ns;
	/** ELV_THROTTLE_IOMAX: slice length (ns); 0 = 100 ms. At most 10 s (ELV_ERANGE). */
	uint64_t iomax_slice_ns;
	/** ELV_THROTTLE_IOMAX: the clock tick waits are rounded to (ns); 0 = 1 ms. <= slice. */
	uint64_t iomax_tick_ns;
	uint64_t reserved[2];     /**< Reserved, zero. */
};

/** @brief The stage's state on one queue, in host memory. Only the library touches it. */
struct elv_qos {
	uint64_t ELV_PRIVATE(priv)[ELV_QOS_WORDS]; /**< Library-private. */
};

/**
 * @brief The QoS state of one stream or group (its throttle, its mClock tags and the requests
 * it holds), in host memory. Zero it before elv_qos_stream_attach() or
 * elv_qos_group_attach(); only the library touches it while attached.
 */
struct elv_qos_client {
	uint64_t ELV_PRIVATE(priv)[ELV_QOS_CLIENT_WORDS]; /**< Library-private. */
};

/** @brief Counters of one client (elv_qos_client_stats()). */
struct elv_qos_client_stats {
	uint64_t admitted;       /**< Requests that passed this client's throttle. */
	uint64_t throttled;      /**< Of those, requests that had to wait for it. */
	uint64_t bytes;          /**< Bytes that passed this client's throttle. */
	uint64_t reservation;    /**< Requests mClock released in its reservation phase. */
	uint64_t weight;         /**< Requests mClock released in its weight phase. */
	uint64_t over_limit;     /**< Requests released past the limit (ELV_QOS_AT_LIMIT_ALLOW). */
	uint64_t rejected;       /**< Requests refused at the limit (ELV_QOS_AT_LIMIT_REJECT). */
	uint32_t held_throttle;  /**< Requests waiting in this client's throttle now. */
	uint32_t held_mclock;    /**< Requests waiting in mClock as this client's now. */
};

/**
 * @brief Check throttle settings without applying them (for hosts parsing a configuration).
 * @retval 0 valid; ELV_EINVAL inconsistent or NULL; ELV_ERANGE a value out of range.
 */
ELV_API int elv_throttle_check(const struct elv_throttle_settings *t);
/**
 * @brief Check mClock settings without applying them.
 * @retval 0 valid; ELV_EINVAL inconsistent or NULL; ELV_ERANGE a value out of range.
 */
ELV_API int elv_mclock_check(const struct elv_mclock_settings *m);

/**
 * @brief Attach the QoS stage to a queue.
 * @param q queue holding no request (queued, held or in flight).
 * @param qos stage state in host memory, owned by the library until elv_qos_detach().
 * @param set settings, copied; NULL for defaults.
 * @param now host time (ns); one earlier than the queue has seen is clamped.
 * @retval 0 success.
 * @retval ELV_EBUSY the queue holds requests, has a QoS stage already, or called from a
 *         callback.
 * @retval ELV_EINVAL NULL @p q or @p qos, torn-down queue, a bad field in @p set.
 * @retval ELV_ERANGE a field of @p set out of range.
 */
ELV_API int elv_qos_attach(struct elv_queue *q, struct elv_qos *qos,
			   const struct elv_qos_settings *set, uint64_t now);
/**
 * @brief Detach the QoS stage; every client is detached with it. The queue runs as before.
 * @retval 0 success: @p qos and the clients' memory are the host's again.
 * @retval ELV_EBUSY the stage holds requests, or called from a callback.
 * @retval ELV_EINVAL NULL or torn-down queue, or no stage attached.
 */
ELV_API int elv_qos_detach(struct elv_queue *q, uint64_t now);
/**
 * @brief Change the stage's settings at run time. Held requests stay, in order; a smaller
 * depth only slows later releases (nothing already released comes back).
 * @retval 0 success; ELV_EINVAL / ELV_ERANGE bad settings (nothing changed), no stage, NULL
 *         or torn-down queue; ELV_EBUSY called from a callback.
 */
ELV_API int elv_qos_set(struct elv_queue *q, const struct elv_qos_settings *set, uint64_t now);
/**
 * @brief Read the stage's settings (defaults filled in). Usable in callbacks.
 * @retval 0 success; ELV_EINVAL NULL argument, torn-down queue or no stage.
 */
ELV_API int elv_qos_get(const struct elv_queue *q, struct elv_qos_settings *set);

/**
 * @brief Give a registered stream its QoS state (no throttle, no mClock until set).
 * @param q queue with the stage attached.
 * @param s stream registered with @p q, holding no request.
 * @param c zeroed client memory, the library's until elv_qos_stream_detach() (or
 *          elv_qos_detach(), or elv_stream_exit()).
 * @param now host time (ns).
 * @retval 0 success.
 * @retval ELV_EBUSY @p s holds requests or has a client already, @p c is attached
 *         elsewhere, or called from a callback.
 * @retval ELV_EINVAL NULL argument, @p s not registered with @p q, no stage, torn-down queue.
 */
ELV_API int elv_qos_stream_attach(struct elv_queue *q, struct elv_stream *s,
				  struct elv_qos_client *c, uint64_t now);
/**
 * @brief Take a stream's QoS state away; its memory is the host's again.
 * @retval 0 success; ELV_EBUSY the client holds requests (throttle or mClock) or called from
 *         a callback; ELV_EINVAL NULL argument, no client on @p s, no stage, torn-down queue.
 */
ELV_API int elv_qos_stream_detach(struct elv_queue *q, struct elv_stream *s, uint64_t now);
/**
 * @brief Give a registered group its QoS state: a throttle shared by its streams and, with
 * mClock settings, one mClock client for the streams that have none of their own.
 * @retval as elv_qos_stream_attach(), for group @p g registered with @p q (and its streams:
 *         ELV_EBUSY while any of them holds requests).
 */
ELV_API int elv_qos_group_attach(struct elv_queue *q, struct elv_group *g,
				 struct elv_qos_client *c, uint64_t now);
/**
 * @brief Take a group's QoS state away.
 * @retval as elv_qos_stream_detach().
 */
ELV_API int elv_qos_group_detach(struct elv_queue *q, struct elv_group *g, uint64_t now);

/**
 * @brief Set (or with NULL remove) the throttle of an attached client, at run time too.
 *
 * Requests it holds stay, in order, and are judged by the new settings from @p now on.
 * ELV_THROTTLE_BUCKET: as QEMU, the buckets start empty (burst allowance available again).
 * ELV_THROTTLE_IOMAX: as Linux, the credit or debt earned under the old limits in the
 * current slices is carried over, and new slices start at @p now. A change of mode starts
 * from empty buckets and fresh slices.
 * @retval 0 success.
 * @retval ELV_EINVAL / ELV_ERANGE bad settings (see struct elv_throttle_settings): nothing
 *         changed; ELV_EINVAL also for a NULL @p q or @p c, a client not attached to @p q,
 *         no stage, a torn-down queue.
 * @retval ELV_EBUSY called from a callback.
 */
ELV_API int elv_qos_set_throttle(struct elv_queue *q, struct elv_qos_client *c,
				 const struct elv_throttle_settings *t, uint64_t now);
/**
 * @brief Read the throttle settings of a client as given (all zero when it has none).
 * @retval 0 success; ELV_EINVAL bad argument.
 */
ELV_API int elv_qos_get_throttle(const struct elv_queue *q, const struct elv_qos_client *c,
				 struct elv_throttle_settings *t);
/**
 * @brief Make an attached client an mClock client with settings @p m (or, with NULL, no
 * longer one), at run time too.
 *
 * Changing the settings keeps the client's queued requests and tags: the new rates apply
 * from its next request's tags. Removing mClock from a client with queued requests is
 * refused (ELV_EBUSY), since they would have nowhere to go in order; so is making a
 * stream's client an mClock client while the library holds requests of that stream (they
 * may wait in its group's mClock queue, and new ones must not pass them).
 * @retval 0 success; ELV_EINVAL / ELV_ERANGE bad settings (nothing changed) or bad
 *         argument; ELV_EBUSY see above, or called from a callback.
 */
ELV_API int elv_qos_set_mclock(struct elv_queue *q, struct elv_qos_client *c,
			       const struct elv_mclock_settings *m, uint64_t now);
/**
 * @brief Read the mClock settings of a client (all zero when it is not an mClock client).
 * @retval 0 success; ELV_EINVAL bad argument.
 */
ELV_API int elv_qos_get_mclock(const struct elv_queue *q, const struct elv_qos_client *c,
			       struct elv_mclock_settings *m);
/**
 * @brief Read a client's counters. Usable in callbacks.
 * @retval 0 success; ELV_EINVAL bad argument.
 */
ELV_API int elv_qos_client_stats(const struct elv_queue *q, const struct elv_qos_client *c,
				 struct elv_qos_client_stats *st);
/**
 * @brief mClock cost of a request under the queue's settings: 1 + bytes / cost_size, or 1.
 * @return the cost (>= 1), or 0 for a NULL argument or a queue without the stage.
 */
ELV_API uint64_t elv_qos_request_cost(const struct elv_queue *q, const struct elv_request *rq);

/** @} */

#ifdef __cplusplus
}
#endif

#endif /* ELEVATOR_QOS_H */
