/**
 * @file zone.h
 * @brief Zoned devices: zone write plugging in front of any policy.
 *
 * Included by elevator.h; see @ref elv_zone.
 */
#ifndef ELEVATOR_ZONE_H
#define ELEVATOR_ZONE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @defgroup elv_zone Zoned devices
 * @brief Zone write plugging: writes reach a sequential zone in order, under every policy.
 *
 * A host-managed SMR disk or a ZNS SSD divides its sectors into zones. A conventional zone
 * is written anywhere. A sequential zone is written only at its write pointer, which each
 * write moves on; writing elsewhere fails, and a reset takes the pointer back to the start.
 * A sorting policy reorders writes and so breaks this; the zone stage keeps it intact in
 * front of whichever policy the queue runs:
 *
 * - At most one write per sequential zone is between the stage and the end of its
 *   completion (held by the QoS stage, in the policy, in flight); later writes to that zone
 *   are held by the stage, in LBA order, and the next goes on when the previous completes.
 *   With elv_zone_geometry::ordered (the transport keeps the order of writes it is given)
 *   the next goes on as soon as the previous is dispatched: several writes of a zone may
 *   then be in flight, never two in the QoS stage or the policy.
 * - The zone stage is the first stage: elv_add() -> zone stage -> QoS stage (qos.h) ->
 *   policy. A write the QoS stage holds has been issued for its zone (the write pointer
 *   has moved past it), and since the QoS stage never holds two writes of one zone it
 *   cannot reorder them, whatever its throttles and mClock do.
 * - A write the stage holds merges only at the write pointer, onto the zone's write that
 *   is still queued; no merge ever crosses a zone boundary, reads included.
 * - Zone append is emulated: a write with ELV_RQ_ZONE_APPEND names its zone by its start
 *   sector; the stage rewrites @c sector to the write pointer when it lets the write go on,
 *   so at completion @c sector is where the data went. The flag stays set; an append never
 *   merges.
 * - ELV_OP_ZONE_RESET and ELV_OP_ZONE_FINISH are requests like writes. They are refused
 *   while writes of their zone are held or not yet completed; writes added after them
 *   are judged against the zone they leave (empty, or full) and wait until they complete.
 * - A write that would open one zone too many waits (elv_zone_geometry::max_open); one
 *   that would make one zone too many active is refused (max_active).
 * - When a write to a sequential zone fails (elv_complete_status() with an error), the
 *   writes held for that zone fail with ELV_EIO through the fail callback and the zone's
 *   write pointer is unknown: writes to it fail with ELV_EIO until the host reports the
 *   zone (elv_zone_report()) or resets it.
 * - Reads, discards and flushes are never held.
 *
 * Requests the stage holds count in elv_stats().queued, come back from elv_drain() and can
 * be cancelled; the stage is kept across elv_switch(). Held writes that fail later (behind
 * a failed write, or found off the write pointer when their turn comes: see
 * elv_zone_fail_fn) go back to the host through the fail callback given to
 * elv_zone_attach(), counted in
 * elv_stats::cancelled and traced as ELV_TRACE_CANCEL with @c arg the positive error.
 *
 * @par Errors of elv_add() on a zoned queue (nothing is changed)
 * | case | code |
 * |---|---|
 * | write or zone operation starting past the last zone, or ending past the end of the device | ELV_ERANGE |
 * | write crossing a zone boundary | ELV_EINVAL |
 * | write to a sequential zone not at its write pointer when the zone could take it now, or below what is already written | ELV_EINVAL |
 * | append whose sector is not its zone's start, append to a conventional zone, append flag on another operation | ELV_EINVAL |
 * | write to a full zone, or past the zone's capacity | ELV_ENOSPC |
 * | write to a read-only or offline zone, or to a zone whose write pointer is unknown after a failed write | ELV_EIO |
 * | write to an empty zone while max_active zones are active | ELV_EAGAIN |
 * | reset or finish not naming a whole sequential zone (sector = its start, nr_sectors = its size) | ELV_EINVAL |
 * | reset or finish while writes of the zone are held or not yet completed, or another reset or finish of it is | ELV_EBUSY |
 * | reset or finish of a read-only or offline zone | ELV_EIO |
 * | a zone operation or the append flag on a queue without a zone stage | ELV_EINVAL |
 * @{
 */

/** @brief Zone management operations (struct elv_request::op), on a queue with a zone stage. */
enum elv_zone_op {
	/**
	 * Reset a sequential zone: its write pointer goes back to its start. @c sector is the
	 * zone's start, @c nr_sectors its size.
	 */
	ELV_OP_ZONE_RESET = 4,
	/** Finish a sequential zone: it becomes full. @c sector and @c nr_sectors as for reset. */
	ELV_OP_ZONE_FINISH = 5
};

/**
 * @brief Request flag (struct elv_request::flags) of an emulated zone append: an
 * ELV_OP_WRITE whose @c sector is its zone's start; the zone stage writes the sector it
 * chose into @c sector before the request reaches the policy.
 */
#define ELV_RQ_ZONE_APPEND (1u << 6)

/** @brief Condition of a zone (struct elv_zone_info::cond, elv_zone_report()). */
enum elv_zone_cond {
	ELV_ZONE_NOT_WP = 0,   /**< Conventional: no write pointer, written anywhere. */
	ELV_ZONE_EMPTY = 1,    /**< Sequential, nothing written. */
	ELV_ZONE_OPEN = 2,     /**< Sequential, writes held or under way (implicitly open). */
	ELV_ZONE_CLOSED = 3,   /**< Sequential, partly written, nothing under way. */
	ELV_ZONE_FULL = 4,     /**< Sequential, written up to its capacity (or finished). */
	ELV_ZONE_READONLY = 5, /**< Readable only: writes fail with ELV_EIO. */
	ELV_ZONE_OFFLINE = 6   /**< Unusable: writes fail with ELV_EIO. */
};

/**
 * @brief Zone geometry of a device, given to elv_zone_attach().
 *
 * It completes struct elv_device_traits, whose @c zoned the attach call sets; zero the
 * struct, then fill it in. Zones are numbered from 0 at sector 0; zone @c i starts at
 * @c i * zone_sectors.
 */
struct elv_zone_geometry {
	uint64_t nr_sectors;    /**< Device size in sectors; the last zone may be smaller. */
	uint32_t zone_sectors;  /**< Zone size in sectors: a power of two, 8 or more. */
	/** Writable sectors at the start of each zone, 1 to zone_sectors; 0 means zone_sectors. */
	uint32_t zone_capacity;
	uint32_t nr_conv;       /**< Conventional zones, the first ones of the device. */
	uint32_t max_open;      /**< Zones being written at once; 0 means no limit. */
	/** Zones open or partly written at once; 0 means no limit, else at least max_open. */
	uint32_t max_active;
	/**
	 * 1 when the transport delivers writes in the order they are dispatched (one
	 * submission queue, no reordering): a zone may then have several writes in flight.
	 */
	uint8_t ordered;
	uint8_t reserved8[3];   /**< Reserved, zero. */
	uint64_t reserved[2];   /**< Reserved, zero. */
};

/**
 * @brief Told of a request the zone stage gives back unserved: @p rq is the host's again,
 * @p err says why (ELV_EIO behind a failed write or in a zone turned read-only or offline,
 * ELV_EINVAL found off the write pointer, ELV_ENOSPC past the zone's capacity). Runs as a
 * callback: calls on the queue that would change it return ELV_EBUSY.
 */
typedef void (*elv_zone_fail_fn)(void *ctx, struct elv_request *rq, int err);

/** @brief What elv_zone_get() reports about one zone. */
struct elv_zone_info {
	uint64_t start;       /**< First sector. */
	uint32_t nr_sectors;  /**< Size (the last zone may be smaller). */
	uint32_t capacity;    /**< Writable sectors from the start. */
	/** Write pointer, sectors from the start, counting writes passed on (to the QoS stage or
	 * the policy) and not completed. */
	uint32_t wp;
	uint32_t nr_held;     /**< Writes the stage holds for this zone. */
	/** Writes passed on (to the QoS stage, the policy or the device), not completed. */
	uint32_t nr_out;
	uint8_t cond;         /**< enum elv_zone_cond. */
	uint8_t need_wp_update; /**< 1 after a failed write, until elv_zone_report() or a reset. */
	uint8_t busy;         /**< 1 while a reset or finish of the zone is under way. */
	uint8_t waiting;      /**< 1 while its writes wait for a zone to close (max_open). */
};

/**
 * @brief Bytes of memory the zone stage needs for @p geo (a header and one entry per zone).
 * @return the size, or 0 when @p geo is NULL or does not add up (see elv_zone_attach()), or
 *         when the size does not fit a size_t (billions of zones on a 32-bit target; then
 *         elv_zone_attach() refuses the geometry with ELV_EINVAL).
 */
ELV_API size_t elv_zone_size(const struct elv_zone_geometry *geo);

/**
 * @brief Put a zone write plugging stage in front of the queue's policy.
 *
 * Every sequential zone starts empty and every conventional one as ELV_ZONE_NOT_WP; the
 * host tells the real state of the zones with elv_zone_report().
 * @param q queue, with nothing queued, held or in flight.
 * @param geo geometry, copied.
 * @param mem memory aligned to 8 bytes, elv_zone_size() bytes, the caller's again after
 *        elv_zone_detach() or elv_queue_exit().
 * @param len bytes at @p mem.
 * @param fail told of every request the stage gives back unserved; required.
 * @param ctx passed to @p fail.
 * @retval 0 attached.
 * @retval ELV_EINVAL NULL argument, misaligned @p mem, torn-down queue, or geometry that
 *         does not add up: zone_sectors not a power of two of 8 or more, zone_capacity
 *         above zone_sectors, nr_sectors 0 or needing 2^32 - 1 zones or more, nr_conv above
 *         the number of zones, max_active below max_open, ordered above 1, a reserved
 *         field not zero.
 * @retval ELV_ENOSPC @p len is below elv_zone_size().
 * @retval ELV_EBUSY the queue holds or has in flight a request, a zone stage is attached
 *         already, or called from one of the queue's callbacks.
 */
ELV_API int elv_zone_attach(struct elv_queue *q, const struct elv_zone_geometry *geo, void *mem,
			    size_t len, elv_zone_fail_fn fail, void *ctx);

/**
 * @brief Remove the zone stage; its memory is the caller's again.
 * @retval 0 detached; ELV_EINVAL NULL, torn-down queue or no zone stage; ELV_EBUSY the stage
 *         holds writes, or called from one of the queue's callbacks.
 */
ELV_API int elv_zone_detach(struct elv_queue *q);

/**
 * @brief Tell the stage a zone's state as the device reports it: at start, after a failed
 * write (it clears the unknown write pointer), or when a zone turns read-only or offline.
 * @param q queue with a zone stage.
 * @param zone zone number.
 * @param cond ELV_ZONE_EMPTY, ELV_ZONE_OPEN or ELV_ZONE_CLOSED (partly written: both mean
 *        closed to the stage, which opens zones as it writes them), ELV_ZONE_FULL,
 *        ELV_ZONE_READONLY, ELV_ZONE_OFFLINE; ELV_ZONE_NOT_WP for a conventional zone.
 * @param wp write pointer, sectors from the zone start: 0 for EMPTY, 1 to capacity - 1 for
 *        OPEN and CLOSED, ignored otherwise.
 * @retval 0 recorded.
 * @retval ELV_EINVAL NULL, torn-down queue, no zone stage, or a condition that does not
 *         fit the zone (NOT_WP for a sequential zone or another one for a conventional one,
 *         unknown value, wp not fitting the condition).
 * @retval ELV_ERANGE @p zone past the last zone.
 * @retval ELV_EBUSY writes of the zone are held or not completed, a reset or finish of it
 *         is under way, or called from one of the queue's callbacks.
 */
ELV_API int elv_zone_report(struct elv_queue *q, uint32_t zone, unsigned cond, uint32_t wp);

/**
 * @brief Read one zone's state. Usable in callbacks.
 * @retval 0 done; ELV_EINVAL NULL, torn-down queue or no zone stage; ELV_ERANGE @p zone
 *         past the last zone.
 */
ELV_API int elv_zone_get(const struct elv_queue *q, uint32_t zone, struct elv_zone_info *info);

/**
 * @brief The zone holding @p sector.
 * @retval 0 done; ELV_EINVAL NULL, torn-down queue or no zone stage; ELV_ERANGE past the
 *         end of the device.
 */
ELV_API int elv_zone_of(const struct elv_queue *q, uint64_t sector, uint32_t *zone);

/** @} */

#ifdef __cplusplus
}
#endif

#endif /* ELEVATOR_ZONE_H */
