/*
 * Zone write plugging: the admission stage in slot ELV_STAGE_ZONE (see stage.c) that keeps
 * writes to each sequential zone at its write pointer whatever the later stages and the
 * policy do with them. It is the first stage: a write it passed on may still be held by the
 * QoS stage, and counts as issued all the same (in nr_out, and as @last until dispatched).
 *
 * Per zone (struct elv_zst, in the host's memory after the stage header):
 *   wp      sectors from the zone start written or passed on: where the next write must
 *           start. It moves when a write is passed on (or merged), not when it completes,
 *           so that writes held behind it are judged against the pointer they will meet.
 *   nr_out  writes passed on and not completed. Without an ordered transport at most one;
 *           with one, several, but @last (passed on, not yet dispatched) is at most one, so
 *           neither the QoS stage nor the policy ever holds two writes of a zone, and
 *           neither can reorder them.
 *   held    writes waiting for their turn, in LBA order (appends, which have no LBA yet,
 *           stay in arrival order at the tail). The head goes on when nr_out allows, if it
 *           is at wp; when it is not, it fails (ELV_EINVAL) and the next one is tried.
 *   flags   NEED_WP (a write failed: the pointer is unknown until a report or a reset),
 *           MGMT (a reset or finish is under way: later writes wait for it), WAITING (on
 *           the waiting list for an open zone), READY (on the ready list: its head may go
 *           on, or merge), OPEN and ACTIVE (counted in nr_open, nr_active; kept only
 *           when max_open or max_active is set, the only readers).
 *
 * The ready list is where release() looks; a zone goes there when something that lets its
 * head go on happens (a completion, a dispatch with an ordered transport, an open zone
 * freed, a write arriving at the pointer while the zone's last write is still queued and
 * may take it as a merge). So release() costs O(1) per request it lets go.
 *
 * Open and active zones follow the device's rules as the stage sees them: a zone is open
 * while writes of it are held or under way, active while open or partly written (or
 * waiting to open). A write that would open a zone past max_open waits on the waiting
 * list (FIFO of zones) until an open zone closes; one that would make a zone active past
 * max_active is refused with ELV_EAGAIN: only the host can free an active zone (fill it,
 * finish it or reset it), so waiting could last for ever.
 */
#include <string.h>

#include "elv_internal.h"

#define ZF_NEED_WP 0x01u
#define ZF_MGMT 0x02u
#define ZF_WAITING 0x04u
#define ZF_READY 0x08u
#define ZF_OPEN 0x10u
#define ZF_ACTIVE 0x20u

struct elv_zst {
	struct elv_list held;      /* held writes (fifo links), LBA order */
	struct elv_list link;      /* on the ready or the waiting list */
	struct elv_request *last;  /* passed on, not yet dispatched: merges go onto it */
	uint32_t wp;
	uint32_t nr_out;
	uint32_t nr_held;
	uint8_t bad;               /* ELV_ZONE_READONLY, ELV_ZONE_OFFLINE, or 0 */
	uint8_t flags;
};

struct elv_zstage {
	struct elv_zone_geometry geo;
	uint32_t nr_zones;
	uint32_t shift;      /* log2(zone_sectors) */
	uint32_t cap;        /* zone capacity */
	uint32_t last_len;   /* size of the last zone */
	uint32_t nr_open;
	uint32_t nr_active;
	uint8_t was_zoned;   /* q->cfg.dev.zoned before attach, restored at detach */
	struct elv_list ready;
	struct elv_list waiting;
	struct elv_zst zones[];
};

/* Out of line when optimising for speed: rare paths of hooks that run for every write. */
#if defined(__GNUC__) && !defined(__OPTIMIZE_SIZE__)
#define ZONE_OUTLINE __attribute__((noinline))
#else
#define ZONE_OUTLINE
#endif

/* What zone_check() decided for a write or zone operation of a sequential zone. */
#define ZV_ISSUE 0 /* pass it on now */
#define ZV_HOLD 1  /* hold it behind the zone's writes */
#define ZV_WAIT 2  /* hold it until a zone closes (max_open) */

static inline struct elv_zstage *zs(const struct elv_queue *q)
{
	return q->stage[ELV_STAGE_ZONE].data;
}

static inline uint64_t zone_start(const struct elv_zstage *st, uint32_t n)
{
	return (uint64_t)n << st->shift;
}

static inline uint32_t zone_len(const struct elv_zstage *st, uint32_t n)
{
	return n + 1 == st->nr_zones ? st->last_len : st->geo.zone_sectors;
}

static inline uint32_t zone_cap(const struct elv_zstage *st, uint32_t n)
{
	uint32_t len = zone_len(st, n);

	return st->cap < len ? st->cap : len;
}

static inline int is_mgmt(const struct elv_request *rq)
{
	return rq->op == ELV_OP_ZONE_RESET || rq->op == ELV_OP_ZONE_FINISH;
}

static inline int is_append(const struct elv_request *rq)
{
	return (rq->flags & ELV_RQ_ZONE_APPEND) != 0;
}

/*
 * The zone of a write or zone operation the stage must order, in *@n: 1. 0 when the stage
 * has nothing to do with @rq (reads, discards, flushes, writes to conventional zones);
 * a negative ELV_E* for a request no zoned device can take.
 */
static int zone_classify(const struct elv_zstage *st, const struct elv_request *rq, uint32_t *n)
{
	uint64_t z, end;

	if (rq->op != ELV_OP_WRITE && !is_mgmt(rq))
		return is_append(rq) ? ELV_EINVAL : 0;
	if (is_append(rq) && rq->op != ELV_OP_WRITE)
		return ELV_EINVAL;
	z = rq->sector >> st->shift;
	if (z >= st->nr_zones)
		return ELV_ERANGE;
	end = elv_rq_end(rq);
	if (((end - 1) >> st->shift) != z)
		return ELV_EINVAL;
	if (end > st->geo.nr_sectors)
		return ELV_ERANGE;
	*n = (uint32_t)z;
	if (is_mgmt(rq) && (rq->sector != zone_start(st, *n) || rq->nr_sectors != zone_len(st, *n)))
		return ELV_EINVAL;
	if (*n < st->geo.nr_conv)
		return is_append(rq) || is_mgmt(rq) ? ELV_EINVAL : 0;
	if (is_append(rq) && rq->sector != zone_start(st, *n))
		return ELV_EINVAL;
	return 1;
}

/* Could the zone's next write go on now, as far as the zone itself is concerned? */
static inline int zone_can_issue(const struct elv_zstage *st, const struct elv_zst *z)
{
	return !(z->flags & (ZF_MGMT | ZF_WAITING)) &&
	       (!z->nr_out || (st->geo.ordered && !z->last));
}

/* The verdict on a new write or zone operation @rq of sequential zone @n; changes nothing. */
static int zone_check(const struct elv_zstage *st, uint32_t n, const struct elv_request *rq)
{
	const struct elv_zst *z = &st->zones[n];
	uint32_t cap = zone_cap(st, n);
	uint64_t off = rq->sector - zone_start(st, n);
	int now;

	if (z->bad)
		return ELV_EIO;
	if (is_mgmt(rq))
		return z->nr_out || z->nr_held || (z->flags & ZF_MGMT) ? ELV_EBUSY : ZV_ISSUE;
	if (z->flags & ZF_NEED_WP)
		return ELV_EIO;
	if (z->wp >= cap)
		return ELV_ENOSPC;
	if (is_append(rq)) {
		if (rq->nr_sectors > cap - z->wp)
			return ELV_ENOSPC;
	} else {
		if (off < z->wp)
			return ELV_EINVAL;
		if (off + rq->nr_sectors > cap)
			return ELV_ENOSPC;
	}
	now = !z->nr_held && zone_can_issue(st, z);
	if (now && !is_append(rq) && off != z->wp)
		return ELV_EINVAL;
	if (!(z->flags & ZF_ACTIVE) && st->geo.max_active && st->nr_active >= st->geo.max_active)
		return ELV_EAGAIN;
	if (!(z->flags & (ZF_OPEN | ZF_WAITING)) && st->geo.max_open &&
	    st->nr_open >= st->geo.max_open)
		return ZV_WAIT;
	return now ? ZV_ISSUE : ZV_HOLD;
}

/* Is zone @z open: writes of it held or under way, and not waiting to open? */
static inline int zone_is_open(const struct elv_zst *z)
{
	return !(z->flags & ZF_WAITING) && (z->nr_out || z->nr_held);
}

/* Recount whether zone @n is open and active after a change. */
static void zone_recount(struct elv_zstage *st, uint32_t n)
{
	struct elv_zst *z = &st->zones[n];
	uint8_t f = 0;

	if (n >= st->geo.nr_conv && !z->bad) {
		if (zone_is_open(z))
			f |= ZF_OPEN;
		if ((f & ZF_OPEN) || (z->flags & ZF_WAITING) ||
		    (z->wp > 0 && z->wp < zone_cap(st, n)))
			f |= ZF_ACTIVE;
	}
	st->nr_open = st->nr_open + ((f & ZF_OPEN) ? 1u : 0u) - ((z->flags & ZF_OPEN) ? 1u : 0u);
	st->nr_active =
		st->nr_active + ((f & ZF_ACTIVE) ? 1u : 0u) - ((z->flags & ZF_ACTIVE) ? 1u : 0u);
	z->flags = (uint8_t)((z->flags & ~(ZF_OPEN | ZF_ACTIVE)) | f);
}

/*
 * After a change to zone @n. Only max_open and max_active read the counts and the OPEN and
 * ACTIVE flags (elv_zone_get() works its condition out from the zone itself), so without
 * either limit they are never kept: nr_open, nr_active and the flags stay 0.
 */
static inline void zone_update(struct elv_zstage *st, uint32_t n)
{
	if (st->geo.max_open | st->geo.max_active)
		zone_recount(st, n);
}

static void zone_ready(struct elv_zstage *st, struct elv_zst *z)
{
	if (z->flags & (ZF_READY | ZF_WAITING))
		return;
	z->flags |= ZF_READY;
	elv_list_add_tail(&st->ready, &z->link);
}

static void zone_unready(struct elv_zst *z)
{
	if (!(z->flags & ZF_READY))
		return;
	elv_list_del(&z->link);
	z->flags &= (uint8_t)~ZF_READY;
}

/* Off the ready and waiting lists when nothing is held any more. */
static void zone_settle(struct elv_zst *z)
{
	if (z->nr_held || !(z->flags & (ZF_READY | ZF_WAITING)))
		return;
	elv_list_del(&z->link);
	z->flags &= (uint8_t)~(ZF_READY | ZF_WAITING);
}

/* Open zones closed: let waiting zones open, oldest first. */
static void zone_open_waiting(struct elv_zstage *st)
{
	while (!elv_list_empty(&st->waiting) &&
	       (!st->geo.max_open || st->nr_open < st->geo.max_open)) {
		struct elv_zst *z = elv_container_of(st->waiting.next, struct elv_zst, link);

		elv_list_del(&z->link);
		z->flags &= (uint8_t)~ZF_WAITING;
		zone_update(st, (uint32_t)(z - st->zones));
		zone_ready(st, z);
	}
}

/* After anything that may close a zone; the waiting list is empty unless max_open is set. */
static inline void zone_grant(struct elv_zstage *st)
{
	if (!elv_list_empty(&st->waiting))
		zone_open_waiting(st);
}

/* @rq goes on to the policy: the write pointer moves past it (an append learns its sector). */
static void zone_issue(struct elv_zstage *st, uint32_t n, struct elv_request *rq)
{
	struct elv_zst *z = &st->zones[n];

	if (is_mgmt(rq)) {
		z->flags = (uint8_t)((z->flags | ZF_MGMT) & ~ZF_NEED_WP);
		z->wp = rq->op == ELV_OP_ZONE_RESET ? 0 : zone_cap(st, n);
	} else {
		if (is_append(rq))
			rq->sector = zone_start(st, n) + z->wp;
		z->wp += rq->nr_sectors;
		z->nr_out++;
		z->last = rq;
	}
	zone_update(st, n);
}

/* Hold @rq in LBA order among the zone's regular writes, never ahead of an append. */
static void zone_hold(struct elv_zst *z, struct elv_request *rq)
{
	struct elv_list *pos = z->held.prev;

	if (!is_append(rq))
		while (pos != &z->held && !is_append(elv_list_rq(pos)) &&
		       elv_list_rq(pos)->sector > rq->sector)
			pos = pos->prev;
	elv_list_insert(&rq->fifo, pos, pos->next);
	z->nr_held++;
}

/* Every held write of the zone fails with @err; the zone leaves the lists. */
static void zone_fail_held(struct elv_queue *q, struct elv_zstage *st, uint32_t n, int err)
{
	struct elv_zst *z = &st->zones[n];
	struct elv_request *rq;

	while ((rq = elv_list_first_rq(&z->held)) != NULL) {
		elv_list_del(&rq->fifo);
		z->nr_held--;
		zone_settle(z);
		zone_update(st, n);
		elv_stage_fail(q, ELV_STAGE_ZONE, rq, err, 1);
	}
}

/* zone_admit() when @rq must wait (@verdict ZV_HOLD or ZV_WAIT). Left inline: out of line it
 * saves 8 instructions per write at depth 1 but costs 6 from depth 64 on, where most wait. */
static int zone_admit_hold(struct elv_zstage *st, uint32_t n, struct elv_request *rq,
			   int verdict)
{
	struct elv_zst *z = &st->zones[n];

	zone_hold(z, rq);
	if (verdict == ZV_WAIT) {
		zone_unready(z);
		z->flags |= ZF_WAITING;
		elv_list_add_tail(&st->waiting, &z->link);
	} else if (z->last && z->last->state == ELV_RQ_QUEUED && !is_append(rq) &&
		   rq->sector == zone_start(st, n) + z->wp) {
		zone_ready(st, z); /* it may join the queued write at the pointer */
	}
	zone_update(st, n);
	return ELV_STAGE_HELD;
}

/*
 * No validate hook: this stage is in the first slot, so when its admit refuses a request
 * (before changing anything) no stage has seen it yet, and the refusal is the one a
 * validate pass would have given first. Judging each write once, here, is half the work of
 * judging it at validate and again at admit, and leaves a queue with only this stage on the
 * core's single-stage add.
 */
static int zone_admit(struct elv_queue *q, struct elv_request *rq, uint64_t now)
{
	struct elv_zstage *st = zs(q);
	uint32_t n;
	int r = zone_classify(st, rq, &n);

	(void)now;
	if (r <= 0)
		return r; /* 0: ELV_STAGE_PASS */
	r = zone_check(st, n, rq);
	if (r < 0)
		return r;
	if (r == ZV_ISSUE) {
		zone_issue(st, n, rq);
		return ELV_STAGE_PASS;
	}
	return zone_admit_hold(st, n, rq, r);
}

/* Why the head write @rq of zone @n cannot go on at the pointer, or 0. */
static int zone_prepare_err(const struct elv_zstage *st, uint32_t n, const struct elv_request *rq)
{
	const struct elv_zst *z = &st->zones[n];
	uint32_t cap = zone_cap(st, n);

	if (z->bad || (z->flags & ZF_NEED_WP))
		return ELV_EIO;
	if (z->wp >= cap || rq->nr_sectors > cap - z->wp)
		return ELV_ENOSPC;
	if (!is_append(rq) && rq->sector != zone_start(st, n) + z->wp)
		return ELV_EINVAL;
	return 0;
}

/* The next write of zone @n that may go on now, or NULL; joins what merges at the pointer. */
static struct elv_request *zone_next(struct elv_queue *q, struct elv_zstage *st, uint32_t n)
{
	struct elv_zst *z = &st->zones[n];
	struct elv_request *rq;
	int err;

	while ((rq = elv_list_first_rq(&z->held)) != NULL && !(z->flags & (ZF_MGMT | ZF_WAITING))) {
		if (z->last && !is_append(rq) && !is_append(z->last) &&
		    rq->sector == zone_start(st, n) + z->wp) {
			uint32_t len = rq->nr_sectors;

			elv_list_del(&rq->fifo);
			z->nr_held--;
			if (elv_stage_merge(q, ELV_STAGE_ZONE, z->last, rq)) {
				z->wp += len;
				zone_update(st, n);
				continue;
			}
			elv_list_add_head(&z->held, &rq->fifo);
			z->nr_held++;
		}
		if (!zone_can_issue(st, z))
			return NULL;
		elv_list_del(&rq->fifo);
		z->nr_held--;
		err = zone_prepare_err(st, n, rq);
		if (err) {
			zone_update(st, n);
			elv_stage_fail(q, ELV_STAGE_ZONE, rq, err, 1);
			continue;
		}
		zone_issue(st, n, rq);
		return rq;
	}
	return NULL;
}

static struct elv_request *zone_release(struct elv_queue *q, uint64_t now)
{
	struct elv_zstage *st = zs(q);
	struct elv_request *rq;

	(void)now;
	while (!elv_list_empty(&st->ready)) {
		struct elv_zst *z = elv_container_of(st->ready.next, struct elv_zst, link);

		rq = zone_next(q, st, (uint32_t)(z - st->zones));
		if (rq)
			return rq;
		zone_unready(z);
		zone_grant(st); /* failed writes may have closed the zone */
	}
	return NULL;
}

static uint64_t zone_next_event(const struct elv_queue *q)
{
	(void)q;
	return ELV_TIME_NEVER; /* nothing here waits for time */
}

/* The zone of a write or zone operation this stage passed on, or UINT32_MAX. */
static uint32_t zone_of_passed(const struct elv_zstage *st, const struct elv_request *rq)
{
	uint64_t n;

	if (rq->op != ELV_OP_WRITE && !is_mgmt(rq))
		return UINT32_MAX;
	n = rq->sector >> st->shift;
	return n < st->geo.nr_conv || n >= st->nr_zones ? UINT32_MAX : (uint32_t)n;
}

static void zone_dispatched(struct elv_queue *q, struct elv_request *rq, uint64_t now)
{
	struct elv_zstage *st = zs(q);
	uint32_t n = zone_of_passed(st, rq);

	(void)now;
	if (n == UINT32_MAX || st->zones[n].last != rq)
		return;
	st->zones[n].last = NULL;
	if (st->geo.ordered && st->zones[n].nr_held)
		zone_ready(st, &st->zones[n]);
}

/* A zone operation came back: done, failed, or withdrawn before the device saw it. */
static ZONE_OUTLINE void zone_mgmt_done(struct elv_queue *q, struct elv_zstage *st, uint32_t n,
					int status)
{
	struct elv_zst *z = &st->zones[n];

	z->flags &= (uint8_t)~ZF_MGMT;
	if (status) {
		z->flags |= ZF_NEED_WP; /* the zone may or may not have been reset */
		zone_fail_held(q, st, n, ELV_EIO);
	}
	zone_update(st, n);
}

/* A write of zone @n failed (@status < 0) or was withdrawn before the device saw it. */
static ZONE_OUTLINE void zone_write_undone(struct elv_queue *q, struct elv_zstage *st, uint32_t n,
					   struct elv_request *rq, int status)
{
	struct elv_zst *z = &st->zones[n];

	if (status == ELV_STAGE_WITHDRAWN && elv_rq_end(rq) == zone_start(st, n) + z->wp) {
		z->wp -= rq->nr_sectors; /* the last write passed on never happened */
	} else {
		z->flags |= ZF_NEED_WP;
		zone_fail_held(q, st, n, ELV_EIO);
	}
	if (status == ELV_STAGE_WITHDRAWN && is_append(rq))
		rq->sector = zone_start(st, n); /* back as the host submitted it */
}

static void zone_completed(struct elv_queue *q, struct elv_request *rq, int status, uint64_t now)
{
	struct elv_zstage *st = zs(q);
	uint32_t n = zone_of_passed(st, rq);
	struct elv_zst *z;

	(void)now;
	if (n == UINT32_MAX)
		return;
	z = &st->zones[n];
	if (is_mgmt(rq)) {
		zone_mgmt_done(q, st, n, status);
	} else {
		z->nr_out--;
		if (z->last == rq)
			z->last = NULL;
		if (status != 0)
			zone_write_undone(q, st, n, rq, status);
		zone_update(st, n);
	}
	if (z->nr_held)
		zone_ready(st, z);
	zone_grant(st);
}

static void zone_take_all(struct elv_queue *q, struct elv_list *list)
{
	struct elv_zstage *st = zs(q);
	uint32_t n;

	elv_list_init(&st->ready);
	elv_list_init(&st->waiting);
	for (n = st->geo.nr_conv; n < st->nr_zones; n++) {
		struct elv_zst *z = &st->zones[n];
		struct elv_request *rq;

		if (!z->nr_held && !(z->flags & (ZF_READY | ZF_WAITING)))
			continue;
		while ((rq = elv_list_first_rq(&z->held)) != NULL) {
			elv_list_del(&rq->fifo);
			elv_list_add_tail(list, &rq->fifo);
		}
		z->nr_held = 0;
		z->flags &= (uint8_t)~(ZF_READY | ZF_WAITING);
		elv_list_init(&z->link); /* the lists were emptied above */
		zone_update(st, n);
	}
}

/* A cancelled append joined the run of regular writes after it to the one before: move each
 * of them back to its place in LBA order. */
static void zone_resort(struct elv_zst *z, struct elv_list *l)
{
	while (l != &z->held && !is_append(elv_list_rq(l))) {
		struct elv_list *next = l->next, *pos = l->prev;
		const struct elv_request *rq = elv_list_rq(l);

		while (pos != &z->held && !is_append(elv_list_rq(pos)) &&
		       elv_list_rq(pos)->sector > rq->sector)
			pos = pos->prev;
		if (pos != l->prev) {
			elv_list_del(l);
			elv_list_insert(l, pos, pos->next);
		}
		l = next;
	}
}

static int zone_cancel(struct elv_queue *q, struct elv_request *rq)
{
	struct elv_zstage *st = zs(q);
	uint32_t n = zone_of_passed(st, rq);
	struct elv_list *l;

	if (n == UINT32_MAX)
		return ELV_ENOENT;
	for (l = st->zones[n].held.next; l != &st->zones[n].held; l = l->next) {
		struct elv_list *next = l->next;

		if (l != &rq->fifo)
			continue;
		elv_list_del(l);
		st->zones[n].nr_held--;
		if (is_append(rq))
			zone_resort(&st->zones[n], next);
		zone_settle(&st->zones[n]);
		zone_update(st, n);
		if (st->zones[n].nr_held)
			zone_ready(st, &st->zones[n]); /* its new head may go on */
		zone_grant(st);
		return 0;
	}
	return ELV_ENOENT;
}

/* Merges stay inside one zone, never touch appends or zone operations, and a sequential
 * zone's writes merge only onto its write at the pointer. */
static int zone_allow_merge(const struct elv_queue *q, const struct elv_request *a,
			    const struct elv_request *b)
{
	const struct elv_zstage *st = zs(q);
	uint64_t n = a->sector >> st->shift;

	if (((elv_rq_end(b) - 1) >> st->shift) != n || is_append(a) || is_append(b) ||
	    is_mgmt(a) || is_mgmt(b))
		return 0;
	if (a->op == ELV_OP_WRITE && n >= st->geo.nr_conv && n < st->nr_zones)
		return st->zones[n].last == a;
	return 1;
}

/* One zone's held list: in the zone, held by @q, regular writes in LBA order between
 * appends. */
static int zone_check_held(const struct elv_queue *q, const struct elv_zstage *st, uint32_t n)
{
	const struct elv_zst *z = &st->zones[n];
	const struct elv_list *l;
	uint32_t count = 0;
	uint64_t prev = 0;

	for (l = z->held.next; l != &z->held; l = l->next) {
		const struct elv_request *rq = elv_list_rq(l);

		if (l->next->prev != l || rq->state != ELV_RQ_HELD || rq->hlink.owner != q ||
		    zone_of_passed(st, rq) != n || is_mgmt(rq))
			return ELV_EINVAL;
		if (is_append(rq)) {
			prev = 0; /* regular writes after an append are sorted among themselves */
		} else {
			if (rq->sector < prev)
				return ELV_EINVAL;
			prev = rq->sector;
		}
		count++;
	}
	return count == z->nr_held ? 0 : ELV_EINVAL;
}

/* One zone's counters and flags agree with each other and with the zone's rules. */
static int zone_check_one(const struct elv_queue *q, const struct elv_zstage *st, uint32_t n)
{
	const struct elv_zst *z = &st->zones[n];

	if (n < st->geo.nr_conv)
		return z->nr_held || z->nr_out || z->flags || z->wp ? ELV_EINVAL : 0;
	if (zone_check_held(q, st, n))
		return ELV_EINVAL;
	/* Never two writes of a zone on their way unless the transport keeps their order. */
	if (z->nr_out > 1 && !st->geo.ordered)
		return ELV_EINVAL;
	if (z->wp > zone_cap(st, n) || (z->last && !z->nr_out))
		return ELV_EINVAL;
	if (z->last && z->last->state != ELV_RQ_QUEUED && z->last->state != ELV_RQ_HELD)
		return ELV_EINVAL;
	if ((z->flags & ZF_WAITING) && (!z->nr_held || (z->flags & ZF_READY)))
		return ELV_EINVAL;
	if ((z->flags & (ZF_MGMT | ZF_NEED_WP)) == (ZF_MGMT | ZF_NEED_WP))
		return ELV_EINVAL;
	return 0;
}

static int zone_stage_check(const struct elv_queue *q)
{
	const struct elv_zstage *st = zs(q);
	const struct elv_list *l;
	uint32_t n, held = 0, open = 0, active = 0, ready = 0, waiting = 0, out = 0;

	for (n = 0; n < st->nr_zones; n++) {
		const struct elv_zst *z = &st->zones[n];

		if (zone_check_one(q, st, n))
			return ELV_EINVAL;
		held += z->nr_held;
		out += z->nr_out;
		open += (z->flags & ZF_OPEN) ? 1u : 0u;
		active += (z->flags & ZF_ACTIVE) ? 1u : 0u;
		ready += (z->flags & ZF_READY) ? 1u : 0u;
		waiting += (z->flags & ZF_WAITING) ? 1u : 0u;
	}
	for (l = st->ready.next; l != &st->ready; l = l->next)
		ready--;
	for (l = st->waiting.next; l != &st->waiting; l = l->next)
		waiting--;
	if (ready || waiting || open != st->nr_open || active != st->nr_active ||
	    (st->geo.max_open && open > st->geo.max_open))
		return ELV_EINVAL;
	/* What was passed on is somewhere between the later stages and the device. */
	if (out > elv_past_stages(q) + (q->nr_staged - q->stage[ELV_STAGE_ZONE].nr_held))
		return ELV_EINVAL;
	return (int)held;
}

static const struct elv_stage_ops elv_zone_ops = {
	.admit = zone_admit,
	.next_event = zone_next_event,
	.release = zone_release,
	.dispatched = zone_dispatched,
	.completed = zone_completed,
	.take_all = zone_take_all,
	.cancel = zone_cancel,
	.allow_merge = zone_allow_merge,
	.check = zone_stage_check,
};

/* ---- public calls -------------------------------------------------------------------- */

/* Zones of @geo, or 0 when it does not add up. */
static uint32_t zone_count(const struct elv_zone_geometry *geo)
{
	uint64_t nr;
	unsigned shift = 0;

	if (!geo || geo->zone_sectors < 8 || (geo->zone_sectors & (geo->zone_sectors - 1)) ||
	    geo->zone_capacity > geo->zone_sectors || !geo->nr_sectors || geo->ordered > 1 ||
	    (geo->reserved8[0] | geo->reserved8[1] | geo->reserved8[2]) ||
	    (geo->reserved[0] | geo->reserved[1]) ||
	    (geo->max_active && geo->max_active < geo->max_open))
		return 0;
	/* A power of two: shifts, so Cortex-M builds need no 64-bit division helper. */
	while ((1u << shift) < geo->zone_sectors)
		shift++;
	nr = (geo->nr_sectors >> shift) + ((geo->nr_sectors & (geo->zone_sectors - 1u)) != 0);
	if (nr > UINT32_MAX - 1u || geo->nr_conv > nr)
		return 0;
	return (uint32_t)nr;
}

size_t elv_zone_size(const struct elv_zone_geometry *geo)
{
	uint64_t nr = zone_count(geo);

	/* On 32-bit targets a huge device may not fit the address space. */
	if (!nr || nr > (uint64_t)((SIZE_MAX - sizeof(struct elv_zstage)) / sizeof(struct elv_zst)))
		return 0;
	return sizeof(struct elv_zstage) + (size_t)nr * sizeof(struct elv_zst);
}

int elv_zone_attach(struct elv_queue *q, const struct elv_zone_geometry *geo, void *mem,
		    size_t len, elv_zone_fail_fn fail, void *ctx)
{
	size_t need = elv_zone_size(geo);
	struct elv_zstage *st = mem;
	uint32_t n;
	int err = elv_stage_gate_err(q); /* ELV_ENOSYS when stages are compiled out */

	if (err)
		return err;
	if (!mem || ((uintptr_t)mem & 7u) || !fail || !need)
		return ELV_EINVAL;
	if (len < need)
		return ELV_ENOSPC;
	if (q->stage[ELV_STAGE_ZONE].ops || q->nr_queued || q->nr_held || q->nr_requeued ||
	    q->nr_staged || q->nr_in_flight)
		return ELV_EBUSY;
	memset(st, 0, need);
	st->geo = *geo;
	st->nr_zones = zone_count(geo);
	for (st->shift = 0; (1u << st->shift) < geo->zone_sectors; st->shift++)
		;
	st->cap = geo->zone_capacity ? geo->zone_capacity : geo->zone_sectors;
	st->last_len = (uint32_t)(geo->nr_sectors - zone_start(st, st->nr_zones - 1));
	elv_list_init(&st->ready);
	elv_list_init(&st->waiting);
	for (n = 0; n < st->nr_zones; n++) {
		elv_list_init(&st->zones[n].held);
		elv_list_init(&st->zones[n].link);
	}
	err = elv_stage_attach(q, ELV_STAGE_ZONE, &elv_zone_ops, st);
	if (err)
		return err;
	st->was_zoned = q->cfg.dev.zoned;
	q->cfg.dev.zoned = 1;
	elv_stage_set_fail(q, fail, ctx);
	return 0;
}

int elv_zone_detach(struct elv_queue *q)
{
	struct elv_zstage *st;
	int err = elv_gate_err(q);

	if (err)
		return err;
	st = zs(q);
	if (!q->stage[ELV_STAGE_ZONE].ops)
		return ELV_EINVAL;
	err = elv_stage_detach(q, ELV_STAGE_ZONE);
	if (err)
		return err;
	q->cfg.dev.zoned = st->was_zoned;
	elv_stage_set_fail(q, NULL, NULL);
	return 0;
}

/* The stage of @q for a getter, or NULL. */
static const struct elv_zstage *zone_stage_of(const struct elv_queue *q)
{
	if (!q || q->gate == ELV_GATE_EXITED || !q->stage[ELV_STAGE_ZONE].ops)
		return NULL;
	return zs(q);
}

/* Condition and write pointer a report sets on sequential zone @n, or ELV_EINVAL. */
static int zone_report_apply(struct elv_zstage *st, uint32_t n, unsigned cond, uint32_t wp)
{
	struct elv_zst *z = &st->zones[n];
	uint32_t cap = zone_cap(st, n);

	switch (cond) {
	case ELV_ZONE_EMPTY:
		if (wp)
			return ELV_EINVAL;
		break;
	case ELV_ZONE_OPEN:
	case ELV_ZONE_CLOSED:
		if (!wp || wp >= cap)
			return ELV_EINVAL;
		break;
	case ELV_ZONE_FULL:
		wp = cap;
		break;
	case ELV_ZONE_READONLY:
	case ELV_ZONE_OFFLINE:
		wp = 0;
		break;
	default:
		return ELV_EINVAL;
	}
	z->bad = cond == ELV_ZONE_READONLY || cond == ELV_ZONE_OFFLINE ? (uint8_t)cond : 0u;
	z->wp = wp;
	z->flags &= (uint8_t)~ZF_NEED_WP;
	zone_update(st, n);
	return 0;
}

int elv_zone_report(struct elv_queue *q, uint32_t zone, unsigned cond, uint32_t wp)
{
	struct elv_zstage *st;
	struct elv_zst *z;
	int err = elv_gate_err(q);

	if (err)
		return err;
	if (!q->stage[ELV_STAGE_ZONE].ops)
		return ELV_EINVAL;
	st = zs(q);
	if (zone >= st->nr_zones)
		return ELV_ERANGE;
	if (zone < st->geo.nr_conv)
		return cond == ELV_ZONE_NOT_WP ? 0 : ELV_EINVAL;
	z = &st->zones[zone];
	if (z->nr_out || z->nr_held || (z->flags & ZF_MGMT))
		return ELV_EBUSY;
	err = zone_report_apply(st, zone, cond, wp);
	zone_grant(st);
	return err;
}

int elv_zone_get(const struct elv_queue *q, uint32_t zone, struct elv_zone_info *info)
{
	const struct elv_zstage *st = zone_stage_of(q);
	const struct elv_zst *z;

	if (!st || !info)
		return ELV_EINVAL;
	if (zone >= st->nr_zones)
		return ELV_ERANGE;
	z = &st->zones[zone];
	memset(info, 0, sizeof(*info));
	info->start = zone_start(st, zone);
	info->nr_sectors = zone_len(st, zone);
	info->capacity = zone < st->geo.nr_conv ? info->nr_sectors : zone_cap(st, zone);
	info->wp = z->wp;
	info->nr_held = z->nr_held;
	info->nr_out = z->nr_out;
	info->need_wp_update = (z->flags & ZF_NEED_WP) ? 1u : 0u;
	info->busy = (z->flags & ZF_MGMT) ? 1u : 0u;
	info->waiting = (z->flags & ZF_WAITING) ? 1u : 0u;
	if (zone < st->geo.nr_conv)
		info->cond = ELV_ZONE_NOT_WP;
	else if (z->bad)
		info->cond = z->bad;
	else if (zone_is_open(z))
		info->cond = ELV_ZONE_OPEN;
	else if (!z->wp)
		info->cond = ELV_ZONE_EMPTY;
	else if (z->wp >= zone_cap(st, zone))
		info->cond = ELV_ZONE_FULL;
	else
		info->cond = ELV_ZONE_CLOSED;
	return 0;
}

int elv_zone_of(const struct elv_queue *q, uint64_t sector, uint32_t *zone)
{
	const struct elv_zstage *st = zone_stage_of(q);

	if (!st || !zone)
		return ELV_EINVAL;
	if (sector >= st->geo.nr_sectors)
		return ELV_ERANGE;
	*zone = (uint32_t)(sector >> st->shift);
	return 0;
}
