/*
 * Model-based checking of a zoned queue: the zone write plugging stage (zone.h) in front of
 * every policy, driven through the public API by a host model with a fake zoned device.
 * Shared by elvcheck --zoned (zoned_check.c) and the queue fuzzer; it takes its bytes from
 * a seeded PRNG or from a buffer. Everything here is static.
 *
 * One episode: a random zone geometry (zone size, capacity, conventional zones, open and
 * active limits, whether the transport keeps write order), a random starting policy and
 * device depth; then calls: writes at the host's write pointer, writes elsewhere, emulated
 * appends, reads, zone resets and finishes, dispatches (sometimes refused by the device and
 * requeued), completions in any order (sometimes failing a write, after which the host
 * reports the zone), cancels, drains, policy switches and time steps. At the end everything
 * is dispatched and completed.
 *
 * The invariants, checked on every request the library hands out and after every call:
 *   Z1 never two writes (or a write and a reset or finish) of one sequential zone in
 *      flight, unless the transport keeps order (elv_zone_geometry::ordered);
 *   Z2 never a write dispatched anywhere but at its zone's write pointer (the device's,
 *      plus what the writes in flight before it will add), appends included;
 *   Z3 never a reset or finish dispatched with a write of its zone queued or in flight, and
 *      no write of a zone dispatched while a reset or finish of it is pending;
 *   Z4 no dispatched request crosses a zone boundary (merges included);
 *   Z5 nothing lost: every request added comes back exactly once (completed, given back by
 *      the fail callback, cancelled, drained), the queue's count agrees with the model's,
 *      elv_queue_check() is clean, and the final settle empties the queue;
 *   Z6 the calls answer as zone.h documents for the cases the host can know: valid writes,
 *      appends, reads and zone operations on an idle zone are taken, zone operations on a
 *      zone with writes outstanding are refused with ELV_EBUSY, malformed ones with
 *      ELV_EINVAL, and nothing changes when a call is refused.
 *
 * Left out on purpose: with an ordered transport, a write the device refused and the host
 * requeued is never cancelled or drained. The stage let the zone's next write go on when
 * the first was dispatched and is not told of the requeue, so withdrawing the first leaves
 * the next one in the policy off the write pointer (Z2 breaks; the stage needs to hear of
 * requeues to hold the next write back).
 */
#ifndef ELV_ZMODEL_H
#define ELV_ZMODEL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "elevator/elevator.h"
#include "../support/first_error.h"

#if defined(__GNUC__) || defined(__clang__)
#define EZ_MAYBE_UNUSED __attribute__((unused))
#else
#define EZ_MAYBE_UNUSED
#endif

#define EZ_MAX_POLS 32
#define EZ_ERR_LEN 512
#define EZ_SLOTS 40
#define EZ_MAX_ZONES 16
#define EZ_MEM_WORDS (1u << 16)

/* Bytes from a seeded PRNG (checker) or from a buffer (fuzzer; zeroes once it runs out). */
struct ez_src {
	const uint8_t *p;
	size_t n, i;
	uint64_t x;
	int rng;
	int eof;
};

static uint8_t ez_u8(struct ez_src *s)
{
	if (s->rng) { /* xorshift64* */
		s->x ^= s->x >> 12;
		s->x ^= s->x << 25;
		s->x ^= s->x >> 27;
		return (uint8_t)((s->x * 0x2545F4914F6CDD1Dull) >> 56);
	}
	if (s->i < s->n)
		return s->p[s->i++];
	s->eof = 1;
	return 0;
}

static uint64_t ez_u64(struct ez_src *s)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < 8; i++)
		v = (v << 8) | ez_u8(s);
	return v;
}

enum { EZ_HOST = 0, EZ_QUEUED, EZ_FLIGHT, EZ_MERGED };

struct ez_slot {
	struct elv_request rq;
	uint8_t st;
	uint8_t op;        /* as added */
	uint8_t append;
	uint8_t bad;       /* added off the host's write pointer: any outcome will do */
	uint8_t requeued;  /* dispatched, refused by the device, requeued */
	uint32_t zone;
	int parent;        /* EZ_MERGED: the slot it was merged into */
};

struct ez_zone {
	uint64_t dev_wp;   /* device write pointer: everything dispatched so far applied */
	uint64_t host_wp;  /* where the host's next write goes (appends included) */
	uint32_t wr_flight; /* writes in flight */
	uint8_t mgmt;      /* a reset or finish added and not completed */
	uint8_t mgmt_flight;
	uint8_t need_report; /* report the zone once it is idle */
	uint8_t wp_lost;   /* a write of it failed: the stage refuses writes until a report */
	uint8_t dirty;     /* host_wp unknown (cancel, drain, failure): resync when idle */
};

struct ez {
	const struct elv_policy *pols[EZ_MAX_POLS];
	unsigned npols, cur;
	struct elv_zone_geometry g;
	uint32_t nz;
	unsigned depth;
	struct elv_config cfg;
	struct elv_queue *q;
	uint64_t now;
	struct ez_slot s[EZ_SLOTS];
	struct ez_zone z[EZ_MAX_ZONES];
	int flight[EZ_SLOTS];   /* in flight, in dispatch order */
	unsigned nflight;
	uint64_t ops, failed_writes, refused, given_back, merges;
	int failed;
	FILE *log;              /* every call, when set (elvcheck --verbose) */
	char err[EZ_ERR_LEN];
	uint64_t qmem[EZ_MEM_WORDS];
	uint64_t zmem[64 + 8 * EZ_MAX_ZONES];
};

#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 2, 3)))
#endif
static void ez_fail(struct ez *m, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	elv_first_error(&m->failed, m->err, sizeof(m->err), fmt, ap);
	va_end(ap);
}

#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 2, 3)))
#endif
static void ez_log(struct ez *m, const char *fmt, ...)
{
	va_list ap;

	if (!m->log)
		return;
	va_start(ap, fmt);
	vfprintf(m->log, fmt, ap);
	va_end(ap);
	fputc('\n', m->log);
}

static struct ez_slot *ez_slot_of(struct ez *m, const struct elv_request *rq)
{
	uintptr_t a = (uintptr_t)(const void *)rq, base = (uintptr_t)(void *)m->s;

	if (a < base || a >= base + sizeof(m->s) || (a - base) % sizeof(struct ez_slot))
		return NULL;
	return &m->s[(a - base) / sizeof(struct ez_slot)];
}

static int ez_idx(const struct ez *m, const struct ez_slot *s)
{
	return (int)(s - m->s);
}

static uint64_t ez_zstart(const struct ez *m, uint32_t z)
{
	return (uint64_t)z * m->g.zone_sectors;
}

static uint32_t ez_cap(const struct ez *m)
{
	return m->g.zone_capacity ? m->g.zone_capacity : m->g.zone_sectors;
}

static int ez_seq(const struct ez *m, uint32_t z)
{
	return z >= m->g.nr_conv;
}

static int ez_is_write(const struct ez_slot *s)
{
	return s->op == ELV_OP_WRITE;
}

static int ez_is_mgmt(const struct ez_slot *s)
{
	return s->op == ELV_OP_ZONE_RESET || s->op == ELV_OP_ZONE_FINISH;
}

/* Writes of zone @z the library holds, queues or has in flight. */
static unsigned ez_writes_out(const struct ez *m, uint32_t z)
{
	unsigned i, n = 0;

	for (i = 0; i < EZ_SLOTS; i++)
		n += m->s[i].st != EZ_HOST && ez_is_write(&m->s[i]) && m->s[i].zone == z;
	return n;
}

/* A request (and whatever was merged into it) goes back to the host; @served: done by the
 * device. */
static void ez_to_host(struct ez *m, struct ez_slot *s, int served)
{
	unsigned i;

	for (i = 0; i < EZ_SLOTS; i++)
		if (m->s[i].st == EZ_MERGED && m->s[i].parent == ez_idx(m, s))
			ez_to_host(m, &m->s[i], served);
	if (ez_is_mgmt(s) && m->z[s->zone].mgmt)
		m->z[s->zone].mgmt--;
	/* It never reached the device: the host must find out where the zone stands, and the
	 * stage may have lost the write pointer (a write or zone operation it had passed on
	 * came back unserved): report the zone once it is idle. */
	if ((ez_is_write(s) || ez_is_mgmt(s)) && ez_seq(m, s->zone) && !served) {
		m->z[s->zone].dirty = 1;
		m->z[s->zone].need_report = 1;
	}
	s->st = EZ_HOST;
	s->rq.sector = 0xdead0000ull;
	s->rq.nr_sectors = 0;
}

/* ---- callbacks ---------------------------------------------------------------------------- */

static void ez_cb_merge(void *ctx, struct elv_request *into, struct elv_request *absorbed,
			enum elv_merge_kind kind)
{
	struct ez *m = ctx;
	struct ez_slot *a = ez_slot_of(m, into), *b = ez_slot_of(m, absorbed);

	(void)kind;
	m->merges++;
	if (!a || !b || a == b || a->st != EZ_QUEUED || b->st != EZ_QUEUED)
		ez_fail(m, "merge callback names a request that is not queued");
	if (!m->failed && (a->append || b->append))
		ez_fail(m, "an append was merged");
	if (!m->failed && a->zone != b->zone)
		ez_fail(m, "Z4: merge across a zone boundary (zones %u and %u)", a->zone, b->zone);
	if (m->failed)
		return;
	b->st = EZ_MERGED;
	b->parent = ez_idx(m, a);
	ez_log(m, "  merge slot %d into %d", ez_idx(m, b), ez_idx(m, a));
}

static void ez_cb_fail(void *ctx, struct elv_request *rq, int err)
{
	struct ez *m = ctx;
	struct ez_slot *s = ez_slot_of(m, rq);

	if (!s || s->st != EZ_QUEUED || !ez_is_write(s)) {
		ez_fail(m, "Z5: fail callback names a request that is not a queued write");
		return;
	}
	if (err != ELV_EIO && err != ELV_EINVAL && err != ELV_ENOSPC)
		ez_fail(m, "fail callback with error %d", err);
	m->given_back++;
	ez_log(m, "  fail callback slot %d err %d", ez_idx(m, s), err);
	ez_to_host(m, s, 0);
}

static void ez_cb_drain(void *arg, struct elv_request *rq)
{
	struct ez *m = arg;
	struct ez_slot *s = ez_slot_of(m, rq);

	if (!s || s->st != EZ_QUEUED) {
		ez_fail(m, "Z5: drain hands back a request that is not queued");
		return;
	}
	ez_to_host(m, s, 0);
}

/* ---- checks ------------------------------------------------------------------------------- */

/* Requests the queue holds (stages, policy, barrier and requeue lists). */
static unsigned ez_nr_queued(const struct ez *m)
{
	struct elv_stats st;

	if (elv_stats(m->q, &st) != 0)
		return ~0u;
	return (unsigned)st.queued;
}

static void ez_post(struct ez *m, const char *what)
{
	unsigned i, queued = 0;
	int r;

	if (m->failed)
		return;
	for (i = 0; i < EZ_SLOTS; i++)
		queued += m->s[i].st == EZ_QUEUED;
	r = elv_queue_check(m->q);
	if (r != 0)
		ez_fail(m, "elv_queue_check() = %d after %s", r, what);
	else if (ez_nr_queued(m) != queued)
		ez_fail(m, "Z5: the queue holds %u requests, the model %u, after %s",
			ez_nr_queued(m), queued, what);
}

/* The device takes @s: the zoned invariants, then the write is applied. */
static void ez_device_take(struct ez *m, struct ez_slot *s)
{
	const struct elv_request *rq = &s->rq;
	uint64_t zs = m->g.zone_sectors, end = rq->sector + rq->nr_sectors;
	uint32_t z = (uint32_t)(rq->sector / zs);
	struct ez_zone *zz = &m->z[z < EZ_MAX_ZONES ? z : 0];

	if (z >= m->nz || (ez_is_mgmt(s) ? rq->sector % zs != 0 : end > ez_zstart(m, z) + zs)) {
		ez_fail(m, "Z4: dispatched %u+%u crosses a zone boundary or the end",
			(unsigned)rq->sector, rq->nr_sectors);
		return;
	}
	if (z != s->zone) {
		ez_fail(m, "request of zone %u dispatched in zone %u", s->zone, z);
		return;
	}
	if (!ez_seq(m, z))
		return;
	if (ez_is_mgmt(s)) {
		if (zz->wr_flight || zz->mgmt_flight)
			ez_fail(m, "Z3: %s of zone %u dispatched with writes of it outstanding",
				s->op == ELV_OP_ZONE_RESET ? "reset" : "finish", z);
		zz->mgmt_flight = 1;
		return;
	}
	if (!ez_is_write(s))
		return;
	if (zz->mgmt)
		ez_fail(m, "Z3: write of zone %u dispatched while a reset or finish of it is pending",
			z);
	else if (zz->wr_flight && !m->g.ordered)
		ez_fail(m, "Z1: a second write of zone %u in flight (transport keeps no order)", z);
	else if (rq->sector != ez_zstart(m, z) + zz->dev_wp)
		ez_fail(m, "Z2: write %u+%u dispatched off the write pointer %u of zone %u%s",
			(unsigned)(rq->sector - ez_zstart(m, z)), rq->nr_sectors,
			(unsigned)zz->dev_wp, z, s->append ? " (append)" : "");
	else if (zz->dev_wp + rq->nr_sectors > ez_cap(m))
		ez_fail(m, "write past the capacity of zone %u dispatched", z);
	if (m->failed)
		return;
	zz->dev_wp += rq->nr_sectors;
	zz->wr_flight++;
}

/* The device completes (or gives back) @s: undo or finish what ez_device_take() did. */
static void ez_device_done(struct ez *m, struct ez_slot *s, int failed)
{
	uint32_t z = s->zone;
	struct ez_zone *zz = &m->z[z];

	if (!ez_seq(m, z))
		return;
	if (ez_is_mgmt(s)) {
		zz->mgmt_flight = 0;
		if (!failed) {
			zz->dev_wp = s->op == ELV_OP_ZONE_RESET ? 0 : ez_cap(m);
			zz->need_report = 0; /* the stage knows where the pointer is again */
			zz->wp_lost = 0;
		}
		return;
	}
	if (!ez_is_write(s))
		return;
	zz->wr_flight--;
	if (failed) /* only the last write of the zone is ever failed or given back */
		zz->dev_wp -= s->rq.nr_sectors;
}

/* ---- host calls --------------------------------------------------------------------------- */

static int ez_free_slot(const struct ez *m, uint8_t pick)
{
	unsigned i;

	for (i = 0; i < EZ_SLOTS; i++) {
		unsigned k = (pick + i) % EZ_SLOTS;

		if (m->s[k].st == EZ_HOST)
			return (int)k;
	}
	return -1;
}

/* Resynchronise the host's view of idle zones; with @report, report the zones that need it
 * (the host reads the device's write pointers). */
static void ez_host_sync(struct ez *m, int report)
{
	uint32_t z;

	for (z = 0; z < m->nz; z++) {
		struct ez_zone *zz = &m->z[z];
		unsigned cond;
		int r;

		if (!ez_seq(m, z) || ez_writes_out(m, z) || zz->mgmt)
			continue;
		if (zz->need_report && report) {
			cond = zz->dev_wp == 0 ? ELV_ZONE_EMPTY :
			       zz->dev_wp >= ez_cap(m) ? ELV_ZONE_FULL : ELV_ZONE_CLOSED;
			r = elv_zone_report(m->q, z, cond, (uint32_t)zz->dev_wp);
			ez_log(m, "report zone %u cond %u wp %u -> %d", z, cond, (unsigned)zz->dev_wp, r);
			if (r != 0) {
				ez_fail(m, "Z6: elv_zone_report of idle zone %u = %d", z, r);
				return;
			}
			zz->need_report = 0;
			zz->wp_lost = 0;
		}
		if (zz->dirty && !zz->need_report) {
			zz->host_wp = zz->dev_wp;
			zz->dirty = 0;
		}
	}
}

static void ez_add(struct ez *m, struct ez_src *src)
{
	uint8_t kind = ez_u8(src), pick = ez_u8(src);
	uint32_t z = ez_u8(src) % m->nz, nr = 8u * (1u + ez_u8(src) % 4u);
	int k = ez_free_slot(m, pick);
	struct ez_slot *s;
	struct ez_zone *zz = &m->z[z];
	uint64_t zs0 = ez_zstart(m, z);
	unsigned before;
	int ret, want = 0, any = 0, full = 0;

	if (k < 0)
		return;
	s = &m->s[k];
	memset(&s->rq, 0, sizeof(s->rq));
	elv_request_init(&s->rq);
	s->zone = z;
	s->append = 0;
	s->bad = 0;
	s->rq.nr_sectors = nr;
	kind %= 16;
	if (kind < 7) { /* a write at the host's write pointer */
		s->op = ELV_OP_WRITE;
		if (ez_seq(m, z) && zz->host_wp < ez_cap(m)) {
			s->rq.sector = zs0 + zz->host_wp;
			if (zz->host_wp + nr > ez_cap(m))
				nr = s->rq.nr_sectors = (uint32_t)(ez_cap(m) - zz->host_wp);
		} else if (ez_seq(m, z)) {
			/* Full: past the capacity inside the zone, or the last sectors again. */
			nr = s->rq.nr_sectors = 8;
			s->rq.sector = zs0 + ez_cap(m) - (ez_cap(m) < m->g.zone_sectors ? 0 : 8);
			full = 1;
		} else {
			s->rq.sector = zs0 + 8u * (ez_u8(src) % (m->g.zone_sectors / 8u - 3u));
		}
	} else if (kind < 9) { /* an emulated append */
		s->op = ELV_OP_WRITE;
		s->append = 1;
		s->rq.flags = ELV_RQ_ZONE_APPEND;
		s->rq.sector = zs0;
	} else if (kind < 12) { /* a read */
		s->op = ELV_OP_READ;
		s->rq.sector = zs0 + 8u * (ez_u8(src) % (m->g.zone_sectors / 8u - 3u));
	} else if (kind < 14) { /* a write anywhere in the zone */
		s->op = ELV_OP_WRITE;
		s->bad = 1;
		s->rq.sector = zs0 + 8u * (ez_u8(src) % (m->g.zone_sectors / 8u - 3u));
	} else { /* reset or finish */
		s->op = kind == 14 ? ELV_OP_ZONE_RESET : ELV_OP_ZONE_FINISH;
		s->rq.sector = zs0;
		s->rq.nr_sectors = m->g.zone_sectors;
		if (ez_u8(src) < 16) /* malformed: not the whole zone */
			s->rq.nr_sectors = 8;
	}
	s->rq.op = s->op;
	/* What zone.h promises for the cases the host can know. */
	if (s->op == ELV_OP_READ) {
		want = 0;
	} else if (ez_is_mgmt(s)) {
		if (!ez_seq(m, z) || s->rq.nr_sectors != m->g.zone_sectors)
			want = ELV_EINVAL;
		else if (ez_writes_out(m, z) || zz->mgmt)
			want = ELV_EBUSY;
		else if (zz->need_report)
			any = 1;
	} else if (!ez_seq(m, z)) {
		want = s->append ? ELV_EINVAL : 0;
	} else if (zz->wp_lost && !zz->mgmt) {
		want = ELV_EIO; /* until the host reports the zone or resets it */
	} else if (s->bad || zz->dirty || zz->need_report || zz->mgmt) {
		any = 1;
	} else if ((s->append || full) && ez_writes_out(m, z)) {
		/* The stage judges appends and overlaps against the writes it has passed on;
		 * held ones that do not fit come back through the fail callback later. */
		any = 1;
	} else if (full && ez_cap(m) == m->g.zone_sectors) {
		any = 2; /* below what is written and in a full zone: ELV_EINVAL or ELV_ENOSPC */
	} else if (full || zz->host_wp + nr > ez_cap(m)) {
		want = ELV_ENOSPC;
	} else if (m->g.max_active && zz->host_wp == 0) {
		any = 1; /* may be ELV_EAGAIN: the stage counts the active zones */
	}
	before = ez_nr_queued(m);
	s->st = EZ_QUEUED; /* callbacks during the add may already name it */
	ret = elv_add(m->q, &s->rq, m->now);
	ez_log(m, "add slot %d op %u%s zone %u +%u len %u -> %d (want %d%s)", k, s->op,
	       s->append ? " append" : s->bad ? " bad" : "", z,
	       (unsigned)(s->rq.sector - zs0), s->rq.nr_sectors, ret, want, any ? ", any" : "");
	if (ret == 1 && s->st != EZ_MERGED)
		ez_fail(m, "elv_add said merged, the merge callback did not name it");
	if (ret < 0) {
		s->st = EZ_HOST;
		if (ez_nr_queued(m) != before)
			ez_fail(m, "Z6: refused add changed the queue");
		if (!any && ret != want)
			ez_fail(m, "Z6: add of %s to zone %u (wp %u, %u+%u) returned %d, expected %d",
				s->op == ELV_OP_READ ? "a read" : ez_is_mgmt(s) ? "a zone op" :
				s->append ? "an append" : "a write", z, (unsigned)zz->host_wp,
				(unsigned)(s->rq.sector - zs0), s->rq.nr_sectors, ret, want);
		if (any && ret != ELV_EINVAL && ret != ELV_EIO && ret != ELV_ENOSPC &&
		    ret != ELV_EAGAIN && ret != ELV_EBUSY)
			ez_fail(m, "Z6: add returned %d", ret);
		m->refused++;
		return;
	}
	if (any == 2) {
		ez_fail(m, "Z6: write to full zone %u taken", z);
		return;
	}
	if (!any && want != 0) {
		ez_fail(m, "Z6: add to zone %u succeeded, expected %d", z, want);
		return;
	}
	if (ez_is_mgmt(s)) {
		zz->mgmt++;
		/* Writes added from now on are judged against the zone it leaves. */
		zz->host_wp = s->op == ELV_OP_ZONE_RESET ? 0 : ez_cap(m);
		zz->dirty = 0;
	}
	if (ez_is_write(s) && ez_seq(m, z) && !s->bad && !zz->dirty)
		zz->host_wp += nr;
	if (s->bad && ez_seq(m, z))
		zz->dirty = 1;
}

static void ez_dispatch(struct ez *m, unsigned flags, int busy)
{
	struct elv_request *out = NULL;
	struct ez_slot *s;
	int ret = elv_dispatch(m->q, m->now, flags, &out);

	if (ret == ELV_EAGAIN)
		return;
	if (ret != 0 || !out) {
		ez_fail(m, "elv_dispatch returned %d", ret);
		return;
	}
	s = ez_slot_of(m, out);
	ez_log(m, "dispatch%s slot %d %u+%u", busy ? " (busy)" : "", s ? ez_idx(m, s) : -1,
	       (unsigned)out->sector, out->nr_sectors);
	if (!s || s->st != EZ_QUEUED) {
		ez_fail(m, "Z5: dispatched a request that is not queued");
		return;
	}
	ez_device_take(m, s);
	if (m->failed)
		return;
	s->requeued = (uint8_t)busy;
	if (busy) { /* the device answers BUSY: it goes back first */
		ez_device_done(m, s, 1);
		ret = elv_requeue(m->q, out, m->now);
		if (ret != 0)
			ez_fail(m, "elv_requeue returned %d", ret);
		return;
	}
	s->st = EZ_FLIGHT;
	m->flight[m->nflight++] = ez_idx(m, s);
}

static void ez_complete(struct ez *m, uint8_t pick, int fail)
{
	unsigned i = pick % m->nflight, k;
	struct ez_slot *s = &m->s[m->flight[i]];
	uint32_t z = s->zone;
	int ret;

	/* A write fails only when it is the zone's last write in flight (the device would fail
	 * the ones after it as well). */
	if (fail && (!ez_is_write(s) || !ez_seq(m, z) || m->z[z].wr_flight != 1))
		fail = 0;
	if (fail)
		for (k = 0; k < EZ_SLOTS; k++)
			if (&m->s[k] != s && m->s[k].st != EZ_HOST && ez_is_write(&m->s[k]) &&
			    m->s[k].zone == z && m->s[k].st != EZ_MERGED && m->g.ordered)
				fail = 0;
	for (k = i; k + 1 < m->nflight; k++)
		m->flight[k] = m->flight[k + 1];
	m->nflight--;
	ez_device_done(m, s, fail);
	if (fail) {
		m->z[z].need_report = 1;
		m->z[z].wp_lost = 1;
		m->z[z].dirty = 1;
		m->failed_writes++;
	}
	ret = elv_complete_status(m->q, &s->rq, fail ? ELV_EIO : 0, m->now);
	ez_log(m, "complete slot %d%s -> %d", ez_idx(m, s), fail ? " failed" : "", ret);
	if (ret != 0) {
		ez_fail(m, "elv_complete_status returned %d", ret);
		return;
	}
	ez_to_host(m, s, !fail);
	/* The writes the stage held behind the failed one come back at once (with an ordered
	 * transport later ones may already be in the policy, out of its reach). */
	if (fail && !m->g.ordered && ez_writes_out(m, z))
		ez_fail(m, "Z2: %u writes of zone %u still queued after a write of it failed",
			ez_writes_out(m, z), z);
}

/* A requeued write of a sequential zone behind an ordered transport (see the top). */
static int ez_requeued_ordered(const struct ez *m, const struct ez_slot *s)
{
	return m->g.ordered && s->requeued && ez_is_write(s) && ez_seq(m, s->zone);
}

static void ez_cancel(struct ez *m, uint8_t pick)
{
	unsigned i;

	for (i = 0; i < EZ_SLOTS; i++) {
		struct ez_slot *s = &m->s[(pick + i) % EZ_SLOTS];

		if (s->st == EZ_QUEUED && !ez_requeued_ordered(m, s)) {
			int ret = elv_cancel(m->q, &s->rq);

			ez_log(m, "cancel slot %d -> %d", ez_idx(m, s), ret);
			/* A queued request merged away is gone from the queue's view: only the
			 * one it went into can be cancelled. */
			if (ret != 0)
				ez_fail(m, "Z5: elv_cancel of a queued request returned %d", ret);
			else
				ez_to_host(m, s, 0);
			return;
		}
	}
}

/* Dispatch and complete everything; the queue must end empty. */
static void ez_settle(struct ez *m)
{
	unsigned rounds = 0;

	while (!m->failed && rounds++ < 100000) {
		unsigned before = ez_nr_queued(m);

		if (!before && !m->nflight)
			return;
		while (!m->failed && m->nflight < m->depth && ez_nr_queued(m)) {
			unsigned n = m->nflight;

			ez_dispatch(m, ELV_DISPATCH_FORCE, 0);
			if (m->nflight == n)
				break;
		}
		if (m->nflight)
			ez_complete(m, 0, 0);
		else if (!m->failed && ez_nr_queued(m) == before)
			ez_fail(m, "Z5: %u requests queued, none dispatched with force and none in "
				"flight", ez_nr_queued(m));
		ez_host_sync(m, 1);
		ez_post(m, "settle");
	}
	if (!m->failed)
		ez_fail(m, "Z5: settle does not end");
}

/* ---- episodes ----------------------------------------------------------------------------- */

/* Geometry, policy and depth from the byte source; 0 when the queue is built. */
static int ez_start(struct ez *m, struct ez_src *src)
{
	size_t need, zneed;
	uint8_t b = ez_u8(src);
	int ret;

	memset(&m->g, 0, sizeof(m->g));
	m->nz = 3u + ez_u8(src) % (EZ_MAX_ZONES - 2u);
	m->g.zone_sectors = 64u << (ez_u8(src) % 4u);
	m->g.zone_capacity = (b & 1u) ? m->g.zone_sectors - 8u * (ez_u8(src) % 4u) : 0;
	m->g.nr_conv = (b >> 1) % 3u;
	m->g.max_open = (b & 8u) ? 1u + ez_u8(src) % 3u : 0;
	m->g.max_active = (b & 16u) ? m->g.max_open + ez_u8(src) % 3u : 0;
	if (m->g.max_active && !m->g.max_open)
		m->g.max_active = 1u + m->g.max_active;
	m->g.ordered = (b >> 5) & 1u;
	m->g.nr_sectors = (uint64_t)m->nz * m->g.zone_sectors;
	m->depth = 1u + ez_u8(src) % 8u;
	m->cur = ez_u8(src) % m->npols;
	m->now = ez_u64(src);
	memset(m->s, 0, sizeof(m->s));
	memset(m->z, 0, sizeof(m->z));
	m->nflight = 0;
	m->ops = m->failed_writes = m->refused = m->given_back = m->merges = 0;
	m->failed = 0;
	m->err[0] = 0;
	memset(&m->cfg, 0, sizeof(m->cfg));
	m->cfg.dev.rotational = (b >> 6) & 1u;
	m->cfg.dev.queue_depth = (uint16_t)m->depth;
	m->cfg.dev.max_sectors = (b & 128u) ? 64 : 0;
	m->cfg.merge = ez_cb_merge;
	m->cfg.ctx = m;
	need = elv_queue_size_any(&m->cfg);
	zneed = elv_zone_size(&m->g);
	if (!need || need > sizeof(m->qmem) || !zneed || zneed > sizeof(m->zmem)) {
		ez_fail(m, "queue (%zu bytes) or zone stage (%zu) does not fit", need, zneed);
		return -1;
	}
	ret = elv_queue_init(&m->q, m->qmem, need, m->pols[m->cur], &m->cfg);
	if (ret == 0)
		ret = elv_zone_attach(m->q, &m->g, m->zmem, zneed, ez_cb_fail, m);
	if (ret != 0) {
		ez_fail(m, "queue or zone stage setup returned %d", ret);
		return -1;
	}
	ez_log(m, "episode: %u zones of %u (capacity %u), %u conventional, open %u, active %u, "
	       "%sordered, depth %u, %s", m->nz, m->g.zone_sectors, ez_cap(m), m->g.nr_conv,
	       m->g.max_open, m->g.max_active, m->g.ordered ? "" : "not ", m->depth,
	       elv_policy_name(m->pols[m->cur]));
	ez_post(m, "attach");
	return m->failed ? -1 : 0;
}

/* One call from the byte source. */
static void ez_step(struct ez *m, struct ez_src *src)
{
	uint8_t c = ez_u8(src), a = ez_u8(src);
	int ret;

	m->ops++;
	switch (c % 16u) {
	case 0: case 1: case 2: case 3: case 4:
		ez_add(m, src);
		break;
	case 5: case 6: case 7:
		if (m->nflight < m->depth)
			ez_dispatch(m, a & 1u ? ELV_DISPATCH_FORCE : 0, a > 240);
		break;
	case 8: case 9: case 10:
		if (m->nflight)
			ez_complete(m, a, ez_u8(src) < 12);
		break;
	case 11:
		if (a & 1u)
			ez_cancel(m, a);
		else
			ez_host_sync(m, 1);
		break;
	case 12:
		for (ret = 0; ret < EZ_SLOTS; ret++)
			if (m->s[ret].st == EZ_QUEUED && ez_requeued_ordered(m, &m->s[ret]))
				a = 0xff;
		if (a < 16) {
			ret = elv_drain(m->q, ez_cb_drain, m);
			ez_log(m, "drain -> %d", ret);
			if (ret < 0)
				ez_fail(m, "elv_drain returned %d", ret);
		}
		break;
	case 13:
		m->cur = a % m->npols;
		ret = elv_switch(m->q, m->pols[m->cur], m->now);
		ez_log(m, "switch %s -> %d", elv_policy_name(m->pols[m->cur]), ret);
		if (ret != 0 && ret != ELV_ENOSPC)
			ez_fail(m, "elv_switch(%s) returned %d", elv_policy_name(m->pols[m->cur]), ret);
		break;
	default:
		m->now += (uint64_t)a * 100000u * (1u + c % 3u);
		break;
	}
	if (!m->failed)
		ez_host_sync(m, 0);
	ez_post(m, "a call");
}

/* Settle, then tear down: every request must be the host's again. */
static void ez_finish(struct ez *m)
{
	unsigned i;
	int ret;

	ez_settle(m);
	for (i = 0; !m->failed && i < EZ_SLOTS; i++)
		if (m->s[i].st != EZ_HOST)
			ez_fail(m, "Z5: slot %u never came back", i);
	ret = elv_zone_detach(m->q);
	if (!m->failed && ret != 0)
		ez_fail(m, "elv_zone_detach of an idle queue returned %d", ret);
	elv_queue_exit(m->q);
	m->q = NULL;
}

/* A whole episode of @calls calls; 0 when no invariant broke. */
EZ_MAYBE_UNUSED static int ez_episode(struct ez *m, struct ez_src *src, uint64_t calls)
{
	uint64_t i;

	if (ez_start(m, src) != 0)
		return -1;
	for (i = 0; i < calls && !m->failed && !src->eof; i++)
		ez_step(m, src);
	if (m->q)
		ez_finish(m);
	return m->failed ? -1 : 0;
}

#endif /* ELV_ZMODEL_H */
