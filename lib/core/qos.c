/*
 * The QoS stage: throttling, then mClock, between elv_add() and the policy (stage.c).
 *
 * Who holds a request. A request of stream s (in group g, or none) meets the throttle of
 * s's client cs and that of g's client cg; it may go when both allow it, and then counts in
 * both. While it waits it sits in the FIFO of its "holder" (cs, or cg for a stream without a
 * client of its own), one FIFO per direction, so requests of one stream and direction keep
 * their order. Waiting holders hang under their "top" (cg when the stream's group has a
 * client, else cs): a group's members wait there in turn order, and after a member's request
 * goes the turn passes to the next member waiting in that direction. Each top waiting in a
 * direction is on the stage's list for that direction with the time it may next try.
 * A request that passes the throttle goes to its mClock client (cs if it has mClock
 * settings, else cg if it has) or, without one, straight on.
 *
 * Which requests the library holds, and where, depends only on streams, groups and clients
 * that cannot change while they hold requests (attaching and detaching a client, moving a
 * stream to another group are refused then), so the structure stays put while requests wait;
 * settings may change at any time.
 *
 * The stage keeps no list of its clients: they live in the host's streams and groups, which
 * may be retired (once they hold nothing) without telling it. It finds them through the
 * queue's lists of streams and groups.
 */
#include <string.h>

#include "qos_internal.h"

/* The stage's state, in struct elv_qos. */
struct elv_qstate {
	struct elv_mc mc;        /* first, as in struct elv_qclient (see elv_qos_enter_mc()) */
	struct elv_queue *q;
	struct elv_qos_settings set; /* as given */
	struct elv_list wait[2]; /* tops with throttled requests, per direction */
	uint64_t slice, tick;    /* io.max, defaults resolved */
	uint32_t depth;          /* mClock, default resolved */
	uint32_t nr_held;        /* by the throttles (mClock counts its own: mc.nr) */
	/* While nr_held: the earliest ready[] of the waiting tops, either direction, so that a
	 * release before it and elv_qos_next_event() need not look at them. */
	uint64_t first;
};

/* A client's state, in struct elv_qos_client. */
struct elv_qclient {
	struct elv_mc_client mc; /* first, as in struct elv_qstate (see elv_qos_enter_mc()) */
	struct elv_qstate *qs;   /* NULL: not attached */
	void *owner;             /* the stream or group */
	uint8_t group;           /* owner is a group */
	uint8_t has_thr, has_mc;
	/* Where a request of its own stream goes first (enum elv_qos_route), so that
	 * elv_qos_admit() tells the usual cases apart in one test. Kept by elv_qos_reroute()
	 * as the things it depends on change. */
	uint8_t route;
	uint32_t nr_hold[2];     /* as holder: requests in held[d] */
	uint32_t nr_wait[2];     /* as top: requests waiting under it in direction d */
	struct elv_list held[2]; /* as holder: throttled requests in arrival order */
	struct elv_list rr[2];   /* as top of a group: members waiting in d, in turn order */
	struct elv_list member[2]; /* as holder in a group: on the top's rr[d] */
	struct elv_list wait[2]; /* as top: on the stage's wait[d] */
	uint64_t ready[2];       /* as top: when to try its first request(s) again */
	struct elv_throttle_settings thr_set;
	struct elv_mclock_settings mc_set;
	struct elv_thr thr;
	struct elv_qos_client_stats st; /* but the phase counts, which mClock keeps (mc.served) */
};

_Static_assert(sizeof(struct elv_qstate) <= sizeof(struct elv_qos), "struct elv_qos too small");
_Static_assert(sizeof(struct elv_qclient) <= sizeof(struct elv_qos_client),
	       "struct elv_qos_client too small");
/* elv_qos_admit_bucket() ends with the meter's charge, whose 0 is the stage's pass. */
_Static_assert(ELV_STAGE_PASS == 0, "ELV_STAGE_PASS is not 0");

#define ELV_QOS_DEPTH_MAX 65536u
#define ELV_QOS_SLICE_MAX (10u * ELV_NSEC_PER_SEC)
#define ELV_QOS_IDLE_AGE (300u * ELV_NSEC_PER_SEC)

static const struct elv_stage_ops elv_qos_ops;

static struct elv_qstate *elv_qs(const struct elv_queue *q)
{
	return q->stage[ELV_STAGE_QOS].ops == &elv_qos_ops ? q->stage[ELV_STAGE_QOS].data : NULL;
}

static struct elv_qclient *elv_qc(const void *p)
{
	return (struct elv_qclient *)(uintptr_t)p;
}

static struct elv_qclient *elv_mc_owner(const struct elv_mc_client *m)
{
	return elv_container_of(m, struct elv_qclient, mc);
}

/* ---- routing ------------------------------------------------------------------------- */

/* The clients of @rq's stream and of its group (either may be NULL). */
static void elv_qos_route(const struct elv_request *rq, struct elv_qclient **cs,
			  struct elv_qclient **cg)
{
	const struct elv_stream *s = rq->stream;

	*cs = elv_qc(s->qos);
	*cg = s->group ? elv_qc(s->group->qos) : NULL;
}

/* The mClock client of a request whose stream and group have clients @cs and @cg. */
static struct elv_qclient *elv_qos_mclient(struct elv_qclient *cs, struct elv_qclient *cg)
{
	if (cs && cs->has_mc)
		return cs;
	return cg && cg->has_mc ? cg : NULL;
}

/* The routes of a request of a stream whose own client is its only one (elv_qclient.route).
 * Each but the last needs nothing waiting under the client, in either direction. */
enum elv_qos_route {
	ELV_QOS_ROUTE_NONE,   /* no settings: it passes */
	ELV_QOS_ROUTE_BUCKET, /* leaky-bucket throttle, no mClock: the meter alone */
	ELV_QOS_ROUTE_MC,     /* mClock, no throttle, none refused at the limit: mClock alone */
	ELV_QOS_ROUTE_ANY     /* anything else: every rule in turn */
};

/* The route of a request of client @c's own stream (enum elv_qos_route). */
static uint8_t elv_qos_route_of(const struct elv_qstate *qs, const struct elv_qclient *c)
{
	if (c->nr_wait[0] | c->nr_wait[1])
		return ELV_QOS_ROUTE_ANY;
	if (c->has_mc)
		return !c->has_thr && qs->mc.at_limit != ELV_QOS_AT_LIMIT_REJECT ? ELV_QOS_ROUTE_MC
										 : ELV_QOS_ROUTE_ANY;
	if (!c->has_thr)
		return ELV_QOS_ROUTE_NONE;
	return c->thr.leaky ? ELV_QOS_ROUTE_BUCKET : ELV_QOS_ROUTE_ANY;
}

/* Work out c->route again, after one of the things it depends on changed. */
static void elv_qos_reroute(const struct elv_qstate *qs, struct elv_qclient *c)
{
	c->route = elv_qos_route_of(qs, c);
}

/* Does the stage deal with @rq at all? Flushes and anonymous requests pass untouched. */
static int elv_qos_concerns(const struct elv_request *rq)
{
	const struct elv_stream *s = rq->stream;

	return s && rq->op <= ELV_OP_DISCARD && (s->qos || (s->group && s->group->qos));
}

/* Bytes a request counts for a throttle: io.max counts a discard as one sector. */
static uint64_t elv_qos_bytes(const struct elv_thr *th, const struct elv_request *rq)
{
	if (rq->op == ELV_OP_DISCARD && th->mode == ELV_THROTTLE_IOMAX)
		return 512u;
	return (uint64_t)rq->nr_sectors << 9;
}

/* How long @rq must wait for the throttles of @cs and @cg at @now (0: it may go). */
static uint64_t elv_qos_thr_wait(struct elv_qclient *cs, struct elv_qclient *cg,
				 const struct elv_request *rq, int dir, uint64_t now)
{
	uint64_t w = 0, x;

	if (cs && cs->has_thr)
		w = elv_thr_wait(&cs->thr, dir, elv_qos_bytes(&cs->thr, rq), now,
				 cs->nr_hold[dir] != 0);
	if (cg && cg->has_thr) {
		x = elv_thr_wait(&cg->thr, dir, elv_qos_bytes(&cg->thr, rq), now,
				 cg->nr_wait[dir] != 0);
		if (x > w)
			w = x;
	}
	return w;
}

/* @rq passes the throttle of @c: its counters (@waited: it was held). */
static ELV_SPEED_INLINE void elv_qos_thr_stats(struct elv_qclient *c, const struct elv_request *rq,
					       int waited)
{
	c->st.admitted++;
	c->st.throttled += (uint64_t)waited;
	c->st.bytes += (uint64_t)rq->nr_sectors << 9;
}

/* @rq passes the throttle of @c (which has one) at @now: count it. */
static ELV_SPEED_INLINE void elv_qos_thr_count(struct elv_qclient *c, const struct elv_request *rq,
					       int dir, uint64_t now, int waited)
{
	elv_thr_charge(&c->thr, dir, elv_qos_bytes(&c->thr, rq), now);
	elv_qos_thr_stats(c, rq, waited);
}

/* @rq passes the throttles of @cs and @cg at @now: count it in both. */
static void elv_qos_thr_charge(struct elv_qclient *cs, struct elv_qclient *cg,
			       const struct elv_request *rq, int dir, uint64_t now, int waited)
{
	if (cs && cs->has_thr)
		elv_qos_thr_count(cs, rq, dir, now, waited);
	if (cg && cg->has_thr)
		elv_qos_thr_count(cg, rq, dir, now, waited);
}

/* ---- throttle FIFOs ------------------------------------------------------------------ */

/* The stage's bound for the pump (struct elv_stage full_out): without throttled requests,
 * which time alone may let go, only mClock may release one, and only with room. Kept
 * whenever the throttled requests or the depth change. */
static void elv_qos_bound(struct elv_qstate *qs)
{
	qs->q->stage[ELV_STAGE_QOS].full_out = qs->nr_held ? 0 : qs->depth;
}

/* elv_qos_hold() when holder @h has no request waiting in @rq's direction yet: ELV_STAGE_HELD.
 * Few arguments, so that the usual path hands on to it in one jump. */
static ELV_QOS_APART int elv_qos_hold_first(struct elv_qclient *h, struct elv_qclient *t,
					    struct elv_request *rq, uint64_t now, uint64_t w)
{
	struct elv_qstate *qs = t->qs;
	int dir = elv_rq_dir(rq);

	h->nr_hold[dir] = 1;
	if (t->group) {
		elv_list_add_tail(&t->rr[dir], &h->member[dir]);
		/* A new member may be allowed sooner than those already waiting. */
		if (t->nr_wait[dir] && (w = elv_qos_thr_wait(h == t ? NULL : h, t, rq, dir, now),
					elv_time_before(now + w, t->ready[dir])))
			t->ready[dir] = now + w;
	}
	if (t->nr_wait[dir]++ == 0) {
		elv_list_add_tail(&qs->wait[dir], &t->wait[dir]);
		t->ready[dir] = now + w;
		elv_qos_reroute(qs, t); /* something waits under it */
	}
	/* Only a top's ready time that came or moved sooner can be the new first. */
	if (!qs->nr_held++ || elv_time_before(t->ready[dir], qs->first))
		qs->first = t->ready[dir];
	elv_qos_bound(qs);
	return ELV_STAGE_HELD;
}

/*
 * @rq waits in holder @h under top @t (@dir its direction): @w is its wait if it is the first
 * to wait. ELV_STAGE_HELD. Behind another request of @h, the usual case while the throttles
 * hold requests, nothing but the counts changes: @t waits already, at the same time, and so
 * does the stage.
 */
static int elv_qos_hold(struct elv_qstate *qs, struct elv_qclient *h, struct elv_qclient *t,
			struct elv_request *rq, int dir, uint64_t now, uint64_t w)
{
	elv_list_add_tail(&h->held[dir], &rq->fifo);
	if (!h->nr_hold[dir])
		return elv_qos_hold_first(h, t, rq, now, w);
	h->nr_hold[dir]++;
	t->nr_wait[dir]++;
	qs->nr_held++;
	return ELV_STAGE_HELD;
}

/* Top @t has no request left waiting in @dir: off the stage's wait list, and mClock may
 * take its requests straight again if nothing else stops it. */
static void elv_qos_top_leaves(struct elv_qclient *t, int dir)
{
	elv_list_del(&t->wait[dir]);
	elv_qos_reroute(t->qs, t);
}

/* @rq leaves holder @h's FIFO under top @t (released or cancelled). */
static void elv_qos_unhold(struct elv_qclient *h, struct elv_qclient *t, struct elv_request *rq,
			   int dir)
{
	elv_list_del(&rq->fifo);
	if (--h->nr_hold[dir] == 0 && t->group)
		elv_list_del(&h->member[dir]);
	if (--t->nr_wait[dir] == 0)
		elv_qos_top_leaves(t, dir);
}

/* The holder and top of a throttled request: its stream's client and its group's. */
static void elv_qos_roles(const struct elv_request *rq, struct elv_qclient **h,
			  struct elv_qclient **t)
{
	struct elv_qclient *cs, *cg;

	elv_qos_route(rq, &cs, &cg);
	*h = cs ? cs : cg;
	*t = cg ? cg : cs;
}

/*
 * How long the first requests of the members of group top @t in direction @dir must wait at
 * @now, each in turn order until one may go: 0 with *@hp the holder of that one, else the
 * shortest wait.
 */
static uint64_t elv_qos_wait_group(struct elv_qclient *t, int dir, uint64_t now,
				   struct elv_qclient **hp)
{
	struct elv_list *l;
	uint64_t w, best = ELV_QOS_HORIZON;

	for (l = t->rr[dir].next; l != &t->rr[dir]; l = l->next) {
		struct elv_qclient *h = elv_container_of(l, struct elv_qclient, member[dir]);

		w = elv_qos_thr_wait(h == t ? NULL : h, t, elv_list_first_rq(&h->held[dir]), dir,
				     now);
		if (!w) {
			*hp = h;
			return 0;
		}
		if (w < best)
			best = w;
	}
	return best;
}

/* Is top @t due in the direction other than @dir at @now? Then its try there may count a
 * request in its throttles before its next try in @dir. */
static int elv_qos_other_due(const struct elv_qclient *t, int dir, uint64_t now)
{
	return t->nr_wait[!dir] && !elv_time_after(t->ready[!dir], now);
}

/*
 * elv_qos_try() for a group top: each member's first request in turn order; the first that
 * may go leaves, and the turn passes on. Apart: groups are the rarer case.
 */
static ELV_QOS_APART struct elv_request *elv_qos_try_group(struct elv_qclient *t, int dir,
							   uint64_t now, struct elv_qclient **mp)
{
	struct elv_qclient *h = NULL, *own; /* set when the wait is 0 (GCC cannot see it) */
	struct elv_request *rq;
	uint64_t w = elv_qos_wait_group(t, dir, now, &h);

	if (w) {
		t->ready[dir] = now + w;
		return NULL;
	}
	rq = elv_list_first_rq(&h->held[dir]);
	own = h == t ? NULL : h;
	elv_qos_thr_charge(own, t, rq, dir, now, 1);
	elv_qos_unhold(h, t, rq, dir);
	/* The turn passes on: this member goes to the back of the line. */
	if (h->nr_hold[dir]) {
		elv_list_del(&h->member[dir]);
		elv_list_add_tail(&t->rr[dir], &h->member[dir]);
	}
	if (t->nr_wait[dir])
		t->ready[dir] = elv_qos_other_due(t, dir, now)
					? now
					: now + elv_qos_wait_group(t, dir, now, &h);
	*mp = elv_qos_mclient(own, t);
	return rq;
}

/* How long @rq, first in the FIFO of top @t that is no group's, must wait at @now: as
 * elv_qos_thr_wait() with @t the stream's client (which holds @rq: requests wait). */
static ELV_SPEED_INLINE uint64_t elv_qos_wait_own(struct elv_qclient *t,
						  const struct elv_request *rq, int dir,
						  uint64_t now)
{
	return t->has_thr ? elv_thr_wait(&t->thr, dir, elv_qos_bytes(&t->thr, rq), now, 1) : 0;
}

/*
 * Top @t, due at @now, tries its first request in direction @dir (a group: each member's
 * first, in turn order): the one that may go leaves, counted, with *@mp its mClock client
 * (or NULL); else @t waits for the earliest.
 *
 * After a request goes, the top's next try would come later in this release (it is due at
 * @now), after the tops due before it, whose throttles are other clients'; so it is made at
 * once, without counting, and its wait gives the top's ready time. Only the top's own other
 * direction, when due, may count a request in its throttles first: then the top tries again
 * at @now as before. A try that finds a wait changes nothing but the ready time (io.max moves
 * its slice on the first such call only), so a second one finds the same.
 */
static ELV_SPEED_INLINE struct elv_request *elv_qos_try(struct elv_qclient *t, int dir,
							 uint64_t now, struct elv_qclient **mp)
{
	struct elv_request *rq;
	uint64_t w;

	if (t->group)
		return elv_qos_try_group(t, dir, now, mp);
	rq = elv_list_rq(t->held[dir].next); /* it waits: its FIFO holds some */
	w = elv_qos_wait_own(t, rq, dir, now);
	if (w) {
		t->ready[dir] = now + w;
		return NULL;
	}
	if (t->has_thr) {
		/* Charged, and the wait of the request behind it (which gives the top's ready
		 * time) worked out in the same meter call; none to work out when it is the last,
		 * or when the other direction is due. */
		if (t->nr_wait[dir] > 1 && !elv_qos_other_due(t, dir, now)) {
			w = elv_thr_charge_wait(&t->thr, dir, elv_qos_bytes(&t->thr, rq),
						elv_qos_bytes(&t->thr, elv_list_rq(rq->fifo.next)),
						now);
			elv_qos_thr_stats(t, rq, 1);
		} else {
			elv_qos_thr_count(t, rq, dir, now, 1);
		}
	}
	/* elv_qos_unhold() for a top that holds its own requests only. */
	elv_list_del(&rq->fifo);
	t->nr_hold[dir]--;
	if (--t->nr_wait[dir] == 0)
		elv_qos_top_leaves(t, dir);
	else
		t->ready[dir] = now + w; /* w 0 when no wait was worked out: it tries again now */
	*mp = t->has_mc ? t : NULL;
	return rq;
}

/*
 * The top whose turn it is, in direction *@dir: the first, reads before writes and each in
 * the order the tops started waiting, of those whose ready time is the earliest (qs->first;
 * some top waits).
 */
static struct elv_qclient *elv_qos_first_top(const struct elv_qstate *qs, int *dir)
{
	const struct elv_list *l;
	int d;

	for (d = 0; d < 2; d++) {
		for (l = qs->wait[d].next; l != &qs->wait[d]; l = l->next) {
			struct elv_qclient *c = elv_container_of(l, struct elv_qclient, wait[d]);

			if (c->ready[d] == qs->first) {
				*dir = d;
				return c;
			}
		}
	}
	return NULL; /* none waits: mClock took the last one */
}

/* The earlier of @m and the ready time of every waiting top. */
static uint64_t elv_qos_min_ready(const struct elv_qstate *qs, uint64_t m)
{
	const struct elv_list *l;
	int d;

	for (d = 0; d < 2; d++) {
		for (l = qs->wait[d].next; l != &qs->wait[d]; l = l->next) {
			uint64_t r = elv_container_of(l, struct elv_qclient, wait[d])->ready[d];

			if (elv_time_before(r, m))
				m = r;
		}
	}
	return m;
}

/* The earliest ready time of the tops waiting in either direction (@now when none waits). */
static uint64_t elv_qos_first_of(const struct elv_qstate *qs, uint64_t now)
{
	int d;

	for (d = 0; d < 2; d++)
		if (!elv_list_empty(&qs->wait[d]))
			return elv_qos_min_ready(qs, elv_container_of(qs->wait[d].next,
								      struct elv_qclient,
								      wait[d])->ready[d]);
	return now;
}

/* One throttled request that may go at @now, counted and unlinked, with *@mp its mClock
 * client (or NULL); or NULL. A try changes its top's ready time only: the new first is the
 * earlier of that and the others'. */
static struct elv_request *elv_qos_thr_release(struct elv_qstate *qs, uint64_t now,
						struct elv_qclient **mp)
{
	struct elv_qclient *t;
	struct elv_request *rq;
	int dir;

	while (!elv_time_after(qs->first, now)) {
		t = elv_qos_first_top(qs, &dir);
		if (!t)
			return NULL;
		rq = elv_qos_try(t, dir, now, mp);
		/* The others are ready at first or later: a top ready again at first stays it. */
		if (!t->nr_wait[dir])
			qs->first = elv_qos_first_of(qs, now);
		else if (t->ready[dir] != qs->first)
			qs->first = elv_qos_min_ready(qs, t->ready[dir]);
		if (rq)
			return rq;
	}
	return NULL;
}

/* ---- mClock -------------------------------------------------------------------------- */

/* Is there room for mClock to let a request out: fewer than depth requests past the stages
 * (the QoS stage is the last one: the zone stage, in front of it, holds requests that have
 * not reached it yet)? */
static int elv_qos_room(const struct elv_queue *q, const struct elv_qstate *qs)
{
	return elv_past_stages(q) < qs->depth;
}

/* The next request mClock releases at @now, or NULL. */
static struct elv_request *elv_qos_mc_release(struct elv_queue *q, struct elv_qstate *qs,
					      uint64_t now)
{
	if (!qs->mc.nr || !elv_qos_room(q, qs))
		return NULL;
	return elv_mc_pull(&qs->mc, now);
}

/* Every mClock client on the queue after @c (the first for NULL): streams, then groups. */
static struct elv_mc_client *elv_qos_next_mc(const void *ctx, const struct elv_mc_client *m)
{
	const struct elv_qstate *qs = ctx;
	const struct elv_queue *q = qs->q;
	const struct elv_list *l = q->streams.next;
	struct elv_qclient *c;
	int groups = 0;

	if (m) {
		c = elv_mc_owner(m);
		groups = c->group;
		l = groups ? ((struct elv_group *)c->owner)->link.next
			   : ((struct elv_stream *)c->owner)->link.next;
	}
	for (;;) {
		if (!groups && l == &q->streams) {
			groups = 1;
			l = q->groups.next;
		}
		if (groups && l == &q->groups)
			return NULL;
		c = groups ? elv_qc(elv_container_of(l, struct elv_group, link)->qos)
			   : elv_qc(elv_container_of(l, struct elv_stream, link)->qos);
		if (c && c->has_mc)
			return &c->mc;
		l = l->next;
	}
}

/* ---- stage hooks --------------------------------------------------------------------- */

/* A request that passed its throttles goes to its mClock client @m. Apart, and called with
 * the arguments elv_mc_direct() takes in the same places (the stage and the client begin
 * with their mClock parts), so that it hands on in one jump. */
static ELV_QOS_APART int elv_qos_enter_mc(struct elv_qstate *qs, struct elv_qclient *m,
					  struct elv_request *rq, uint64_t now)
{
	/* Alone in mClock with room below: it goes at once when its tags allow. */
	if (!qs->mc.nr && elv_qos_room(qs->q, qs))
		return elv_mc_direct(&qs->mc, &m->mc, rq, now);
	return elv_mc_add(&qs->mc, &m->mc, rq, now);
}

/* @rq of a stream whose client @cs is its only one waits in it for @w (0: behind others).
 * It finds the stage and the direction itself, so that its callers keep fewer values. */
static ELV_QOS_APART int elv_qos_hold_own(struct elv_qclient *cs, struct elv_request *rq,
					  uint64_t now, uint64_t w)
{
	return elv_qos_hold(cs->qs, cs, cs, rq, elv_rq_dir(rq), now, w);
}

/* elv_qos_admit() for a stream whose own client, its only one, has a throttle and nothing
 * waiting in @dir: PASS counted, or HELD for the time the throttle asks. */
static ELV_QOS_APART int elv_qos_admit_own_thr(struct elv_qclient *cs, struct elv_request *rq,
					       int dir, uint64_t now)
{
	uint64_t w = elv_thr_take(&cs->thr, dir, elv_qos_bytes(&cs->thr, rq), now);

	if (w)
		return elv_qos_hold_own(cs, rq, now, w);
	elv_qos_thr_stats(cs, rq, 0);
	return ELV_STAGE_PASS;
}

/*
 * elv_qos_admit() for a request on ELV_QOS_ROUTE_BUCKET: while every level is calm it goes,
 * counted first so that the meter's charge ends the path (ELV_STAGE_PASS is the meter's
 * 0); else elv_qos_admit_own_thr() asks the meter how long it waits.
 */
static ELV_SPEED_INLINE int elv_qos_admit_bucket(struct elv_qclient *cs, struct elv_request *rq,
						 uint64_t now)
{
	int dir = elv_rq_dir(rq);

	if (ELV_LIKELY(elv_thr_calm(&cs->thr, now))) {
		elv_qos_thr_stats(cs, rq, 0);
		return elv_thr_charge_calm(&cs->thr, dir, elv_qos_bytes(&cs->thr, rq), now);
	}
	return elv_qos_admit_own_thr(cs, rq, dir, now);
}

/*
 * A request of a stream whose own client is its only one (no group client) meets that
 * client's throttle: PASS, or HELD behind the client's waiting requests or for the time the
 * throttle asks.
 */
static ELV_SPEED_INLINE int elv_qos_own_thr(struct elv_qclient *cs, struct elv_request *rq,
					    int dir, uint64_t now)
{
	if (cs->nr_wait[dir])
		return elv_qos_hold_own(cs, rq, now, 0);
	if (cs->has_thr)
		return elv_qos_admit_own_thr(cs, rq, dir, now);
	return ELV_STAGE_PASS;
}

/* Does mClock client @m refuse @rq at its limit (ELV_QOS_AT_LIMIT_REJECT)? Counted if so. */
static int elv_qos_refuses(struct elv_qstate *qs, struct elv_qclient *m,
			   const struct elv_request *rq, uint64_t now)
{
	/* Only at elv_add(): a write the zone stage releases (still ELV_RQ_HELD) was ordered in
	 * its zone already, and refusing it would fail the zone's later writes; it waits. */
	if (ELV_LIKELY(qs->mc.at_limit != ELV_QOS_AT_LIMIT_REJECT) ||
	    rq->state == ELV_RQ_HELD ||
	    !elv_mc_offer(&qs->mc, &m->mc, elv_mc_cost(&qs->mc, rq), now))
		return 0;
	m->st.rejected++;
	return 1;
}

/* elv_qos_admit() for a stream whose own client, its only one, has mClock settings. */
static ELV_QOS_APART int elv_qos_admit_own_mc(struct elv_queue *q, struct elv_qclient *cs,
					      struct elv_request *rq, int dir, uint64_t now)
{
	struct elv_qstate *qs = q->stage[ELV_STAGE_QOS].data;

	if (elv_qos_refuses(qs, cs, rq, now))
		return ELV_EAGAIN;
	if (elv_qos_own_thr(cs, rq, dir, now) == ELV_STAGE_HELD)
		return ELV_STAGE_HELD;
	return elv_qos_enter_mc(qs, cs, rq, now);
}

/* elv_qos_admit() for a request whose stream's group has a client. */
static ELV_QOS_APART int elv_qos_admit_group(struct elv_queue *q, struct elv_request *rq,
					     uint64_t now)
{
	struct elv_qstate *qs = q->stage[ELV_STAGE_QOS].data;
	const struct elv_stream *s = rq->stream;
	struct elv_qclient *cs = elv_qc(s->qos), *cg = elv_qc(s->group->qos), *t = cg, *m;
	uint64_t w = 0, x;
	int dir;

	m = elv_qos_mclient(cs, cg);
	if (m && elv_qos_refuses(qs, m, rq, now))
		return ELV_EAGAIN;
	dir = rq->op != ELV_OP_READ;
	/* Behind requests already waiting under the group (any member's), or held by a
	 * throttle. Nothing waits under the top, so nothing waits in the stream's FIFO either. */
	if (t->nr_wait[dir])
		goto hold;
	if (cs && cs->has_thr)
		w = elv_thr_wait(&cs->thr, dir, elv_qos_bytes(&cs->thr, rq), now, 0);
	if (cg->has_thr) {
		x = elv_thr_wait(&cg->thr, dir, elv_qos_bytes(&cg->thr, rq), now, 0);
		w = x > w ? x : w;
	}
	if (w)
		goto hold;
	if (cs && cs->has_thr)
		elv_qos_thr_count(cs, rq, dir, now, 0);
	if (cg->has_thr)
		elv_qos_thr_count(cg, rq, dir, now, 0);
	return m ? elv_qos_enter_mc(qs, m, rq, now) : ELV_STAGE_PASS;
hold:
	return elv_qos_hold(qs, cs ? cs : cg, t, rq, dir, now, w);
}

static int elv_qos_admit(struct elv_queue *q, struct elv_request *rq, uint64_t now)
{
	const struct elv_stream *s = rq->stream;
	struct elv_qclient *cs;

	/* Flushes (and zone operations) and anonymous requests pass untouched. */
	if (!s || rq->op > ELV_OP_DISCARD)
		return ELV_STAGE_PASS;
	if (s->group && s->group->qos)
		return elv_qos_admit_group(q, rq, now);
	cs = elv_qc(s->qos);
	if (!cs)
		return ELV_STAGE_PASS;
	/* The usual cases: the stream's own client alone, its route set. Every branch but the
	 * plain pass is a tail call, so the pass saves no registers. */
	if (cs->route == ELV_QOS_ROUTE_MC) {
		struct elv_qstate *qs = cs->qs;

		/* Behind requests mClock holds already, it waits with them. */
		if (qs->mc.nr)
			return elv_mc_add(&qs->mc, &cs->mc, rq, now);
		return elv_qos_enter_mc(qs, cs, rq, now);
	}
	if (cs->route == ELV_QOS_ROUTE_BUCKET)
		return elv_qos_admit_bucket(cs, rq, now);
	if (cs->route == ELV_QOS_ROUTE_NONE)
		return ELV_STAGE_PASS;
	if (!cs->has_mc)
		return elv_qos_own_thr(cs, rq, rq->op != ELV_OP_READ, now);
	return elv_qos_admit_own_mc(q, cs, rq, rq->op != ELV_OP_READ, now);
}

/* elv_qos_release_thr() when a top is due at @now: the throttled requests that may go
 * first. It takes the queue from the stage (qs->q), one value fewer to keep across the
 * meter's call. */
static ELV_QOS_APART struct elv_request *elv_qos_release_due(struct elv_qstate *qs, uint64_t now)
{
	struct elv_qclient *m;
	struct elv_request *rq;

	while ((rq = elv_qos_thr_release(qs, now, &m)) != NULL) {
		qs->nr_held--;
		if (!m)
			break;
		elv_mc_add(&qs->mc, &m->mc, rq, now); /* still held, now by mClock */
	}
	/* The bound changes only when the last throttled request leaves. */
	if (!qs->nr_held)
		elv_qos_bound(qs);
	return rq ? rq : elv_qos_mc_release(qs->q, qs, now);
}

/* elv_qos_release() while the throttles hold requests. Most calls come before the first top
 * is due (every dispatch that finds the policy empty, every completion): mClock's turn at
 * once, without the registers the due path takes. */
static ELV_SPEED_INLINE struct elv_request *elv_qos_release_thr(struct elv_queue *q,
								 struct elv_qstate *qs,
								 uint64_t now)
{
	if (elv_time_before(now, qs->first))
		return elv_qos_mc_release(q, qs, now);
	return elv_qos_release_due(qs, now);
}

static struct elv_request *elv_qos_release(struct elv_queue *q, uint64_t now)
{
	struct elv_qstate *qs = q->stage[ELV_STAGE_QOS].data;

	if (qs->nr_held)
		return elv_qos_release_thr(q, qs, now);
	/* Without throttled requests mClock holds every request of the stage, and the bound
	 * (elv_qos_bound()) is its depth: the core asks only while it holds one and there is
	 * room. */
	ELV_ASSERT(qs->mc.nr && elv_qos_room(q, qs));
	return elv_mc_pull(&qs->mc, now);
}

/* elv_qos_next_event()'s throttle time when the first is ELV_TIME_NEVER, which stands for
 * none: the earliest of the others, each taken as the earliest so far after a NEVER. */
static ELV_COLD uint64_t elv_qos_thr_next_never(const struct elv_qstate *qs)
{
	const struct elv_list *l;
	uint64_t t = ELV_TIME_NEVER;
	int dir;

	for (dir = 0; dir < 2; dir++) {
		for (l = qs->wait[dir].next; l != &qs->wait[dir]; l = l->next) {
			const struct elv_qclient *c = elv_container_of(l, struct elv_qclient, wait[dir]);

			if (t == ELV_TIME_NEVER || elv_time_before(c->ready[dir], t))
				t = c->ready[dir];
		}
	}
	return t;
}

static uint64_t elv_qos_next_event(const struct elv_queue *q)
{
	const struct elv_qstate *qs = q->stage[ELV_STAGE_QOS].data;
	uint64_t t = qs->nr_held ? qs->first : ELV_TIME_NEVER;

	/* A top due at exactly ELV_TIME_NEVER reads as none: the next top's time, if any. */
	if (ELV_UNLIKELY(t == ELV_TIME_NEVER && qs->nr_held))
		t = elv_qos_thr_next_never(qs);
	/* mClock has a timer only while it may let a request out. */
	if (qs->mc.nr && elv_qos_room(q, qs)) {
		uint64_t m = elv_mc_next(&qs->mc, q->now);

		if (m != ELV_TIME_NEVER && (t == ELV_TIME_NEVER || elv_time_before(m, t)))
			t = m;
	}
	return t;
}

/* Is @rq on list @h? */
static int elv_qos_on(const struct elv_list *h, const struct elv_request *rq)
{
	const struct elv_list *l;

	for (l = h->next; l != h; l = l->next)
		if (l == &rq->fifo)
			return 1;
	return 0;
}

static int elv_qos_cancel(struct elv_queue *q, struct elv_request *rq)
{
	struct elv_qstate *qs = q->stage[ELV_STAGE_QOS].data;
	struct elv_qclient *cs, *cg, *h, *t, *c[2];
	int dir, i;

	if (!elv_qos_concerns(rq))
		return ELV_ENOENT;
	dir = elv_rq_dir(rq);
	elv_qos_roles(rq, &h, &t);
	if (elv_qos_on(&h->held[dir], rq)) {
		int first = elv_list_first_rq(&h->held[dir]) == rq;

		elv_qos_unhold(h, t, rq, dir);
		/* The request behind it may be allowed sooner: let it try. */
		if (first && t->nr_wait[dir])
			t->ready[dir] = q->now;
		qs->nr_held--;
		qs->first = elv_qos_first_of(qs, q->now);
		elv_qos_bound(qs);
		return 0;
	}
	elv_qos_route(rq, &cs, &cg);
	c[0] = cs;
	c[1] = cg;
	for (i = 0; i < 2; i++) {
		if (c[i] && c[i]->has_mc && elv_qos_on(&c[i]->mc.fifo, rq)) {
			elv_mc_remove(&qs->mc, &c[i]->mc, rq, q->now);
			return 0;
		}
	}
	return ELV_ENOENT;
}

/* Every client on the queue after @c (the first for NULL). */
static struct elv_qclient *elv_qos_next_client(const struct elv_queue *q,
					       const struct elv_qclient *c)
{
	const struct elv_list *l = q->streams.next;
	struct elv_qclient *n;
	int groups = 0;

	if (c) {
		groups = c->group;
		l = groups ? ((struct elv_group *)c->owner)->link.next
			   : ((struct elv_stream *)c->owner)->link.next;
	}
	for (;; l = l->next) {
		if (!groups && l == &q->streams) {
			groups = 1;
			l = q->groups.next;
		}
		if (groups && l == &q->groups)
			return NULL;
		n = groups ? elv_qc(elv_container_of(l, struct elv_group, link)->qos)
			   : elv_qc(elv_container_of(l, struct elv_stream, link)->qos);
		if (n)
			return n;
	}
}

/* The oldest first request of @c's lists (throttle FIFOs, mClock queue), or NULL. */
static struct elv_list *elv_qos_oldest(struct elv_qclient *c)
{
	struct elv_list *lists[3] = { &c->held[0], &c->held[1], &c->mc.fifo };
	struct elv_list *best = NULL;
	int i;

	for (i = 0; i < 3; i++) {
		if (i == 2 && !c->has_mc)
			break;
		if (elv_list_empty(lists[i]))
			continue;
		if (!best || elv_rq_seq_cmp(elv_list_first_rq(lists[i]), elv_list_first_rq(best)) < 0)
			best = lists[i];
	}
	return best;
}

/* Forget every request: the lists were emptied by the caller. */
static void elv_qos_reset_client(struct elv_qclient *c)
{
	int dir;

	for (dir = 0; dir < 2; dir++) {
		elv_list_init(&c->held[dir]);
		elv_list_init(&c->rr[dir]);
		elv_list_init(&c->member[dir]);
		elv_list_init(&c->wait[dir]);
		c->nr_hold[dir] = c->nr_wait[dir] = 0;
	}
	if (c->has_mc) {
		elv_list_init(&c->mc.fifo);
		elv_list_init(&c->mc.active);
		c->mc.nr = 0;
	}
	elv_qos_reroute(c->qs, c);
}

static void elv_qos_take_all(struct elv_queue *q, struct elv_list *list)
{
	struct elv_qstate *qs = q->stage[ELV_STAGE_QOS].data;
	struct elv_qclient *c, *best;
	struct elv_list *l, *bl;

	/* Oldest first across all clients: few clients, and draining is rare. */
	for (;;) {
		best = NULL;
		bl = NULL;
		for (c = elv_qos_next_client(q, NULL); c; c = elv_qos_next_client(q, c)) {
			l = elv_qos_oldest(c);
			if (l && (!bl || elv_rq_seq_cmp(elv_list_first_rq(l), elv_list_first_rq(bl)) < 0))
				best = c, bl = l;
		}
		if (!best)
			break;
		l = bl->next;
		elv_list_del(l);
		elv_list_add_tail(list, l);
	}
	for (c = elv_qos_next_client(q, NULL); c; c = elv_qos_next_client(q, c))
		elv_qos_reset_client(c);
	elv_list_init(&qs->wait[0]);
	elv_list_init(&qs->wait[1]);
	elv_list_init(&qs->mc.active);
	qs->mc.nr = 0;
	qs->nr_held = 0;
	elv_qos_bound(qs);
}

/*
 * Requests on @h held by @q: a holder's in direction @dir are of that direction and in the
 * order they reached the stage (elv_add() order, unless the zone stage in front held some of
 * them); an mClock queue's (@dir -1) are in the order they passed the throttles, which may
 * put a read before an older write, or one member of a group before another.
 */
static int elv_qos_check_fifo(const struct elv_queue *q, const struct elv_list *h, int dir,
			      uint32_t nr)
{
	const struct elv_list *l;
	const struct elv_request *prev = NULL;
	uint32_t n = 0;

	for (l = h->next; l != h; l = l->next, n++) {
		const struct elv_request *rq = elv_list_rq(l);

		if (rq->state != ELV_RQ_HELD || rq->hlink.owner != q ||
		    (dir >= 0 && (elv_rq_dir(rq) != dir ||
				  (prev && !q->stage[ELV_STAGE_ZONE].ops &&
				   elv_rq_seq_cmp(prev, rq) > 0))))
			return ELV_EINVAL;
		prev = rq;
	}
	return n == nr ? 0 : ELV_EINVAL;
}

/* The throttle side of client @c: FIFOs, turn lists and waiting tops agree. */
static int elv_qos_check_client(const struct elv_queue *q, const struct elv_qclient *c)
{
	const struct elv_list *l;
	int dir;

	if (c->qs != elv_qs(q) || elv_thr_check(&c->thr) ||
	    c->route != elv_qos_route_of(c->qs, c))
		return ELV_EINVAL;
	if (c->has_mc && elv_qos_check_fifo(q, &c->mc.fifo, -1, c->mc.nr))
		return ELV_EINVAL;
	for (dir = 0; dir < 2; dir++) {
		uint32_t sum = 0;

		if (elv_qos_check_fifo(q, &c->held[dir], dir, c->nr_hold[dir]))
			return ELV_EINVAL;
		/* A stream's client is either the top of its requests or a member of its group. */
		if (!c->group) {
			if (c->nr_wait[dir] && c->nr_wait[dir] != c->nr_hold[dir])
				return ELV_EINVAL;
			continue;
		}
		for (l = c->rr[dir].next; l != &c->rr[dir]; l = l->next) {
			const struct elv_qclient *h =
				elv_container_of(l, struct elv_qclient, member[dir]);

			if (!h->nr_hold[dir])
				return ELV_EINVAL;
			sum += h->nr_hold[dir];
		}
		if (sum != c->nr_wait[dir])
			return ELV_EINVAL;
	}
	return 0;
}

static int elv_qos_check(const struct elv_queue *q)
{
	const struct elv_qstate *qs = q->stage[ELV_STAGE_QOS].data;
	const struct elv_qclient *c;
	uint32_t n = 0, tops[2] = { 0, 0 };
	int dir;

	if (!qs || qs->q != q || elv_mc_check(&qs->mc) ||
	    q->stage[ELV_STAGE_QOS].full_out != (qs->nr_held ? 0 : qs->depth))
		return ELV_EINVAL;
	for (c = elv_qos_next_client(q, NULL); c; c = elv_qos_next_client(q, c)) {
		if (elv_qos_check_client(q, c))
			return ELV_EINVAL;
		n += c->nr_hold[0] + c->nr_hold[1] + (c->has_mc ? c->mc.nr : 0);
		tops[0] += c->nr_wait[0] != 0;
		tops[1] += c->nr_wait[1] != 0;
	}
	/* Exactly the tops with waiting requests are on the stage's lists. */
	for (dir = 0; dir < 2; dir++) {
		const struct elv_list *l;

		for (l = qs->wait[dir].next; l != &qs->wait[dir]; l = l->next, tops[dir]--)
			if (!tops[dir] ||
			    !elv_container_of(l, struct elv_qclient, wait[dir])->nr_wait[dir])
				return ELV_EINVAL;
		if (tops[dir])
			return ELV_EINVAL;
	}
	if (qs->nr_held && qs->first != elv_qos_first_of(qs, ~qs->first))
		return ELV_EINVAL;
	return n == qs->nr_held + qs->mc.nr ? (int)n : ELV_EINVAL;
}

/* No completed hook: mClock's depth is counted from the queue's own counters. */
static const struct elv_stage_ops elv_qos_ops = {
	.admit = elv_qos_admit,
	.next_event = elv_qos_next_event,
	.release = elv_qos_release,
	.take_all = elv_qos_take_all,
	.cancel = elv_qos_cancel,
	.check = elv_qos_check,
};

/* ---- public calls -------------------------------------------------------------------- */

static int elv_qos_settings_ok(const struct elv_qos_settings *s)
{
	unsigned i;

	for (i = 0; i < sizeof(s->reserved8); i++)
		if (s->reserved8[i])
			return ELV_EINVAL;
	if (s->reserved[0] | s->reserved[1] || s->at_limit > ELV_QOS_AT_LIMIT_REJECT)
		return ELV_EINVAL;
	if (s->depth > ELV_QOS_DEPTH_MAX || s->iomax_slice_ns > ELV_QOS_SLICE_MAX ||
	    s->reject_threshold_ns > ELV_QOS_HORIZON || s->idle_age_ns > ELV_QOS_HORIZON)
		return ELV_ERANGE;
	if (s->iomax_tick_ns > (s->iomax_slice_ns ? s->iomax_slice_ns : ELV_NSEC_PER_SEC / 10))
		return ELV_ERANGE;
	return 0;
}

/* Take settings already checked: defaults resolved, every client's throttle told. */
static void elv_qos_use(struct elv_queue *q, struct elv_qstate *qs,
			const struct elv_qos_settings *s)
{
	struct elv_qclient *c;

	qs->set = *s;
	qs->depth = s->depth ? s->depth : (q->cfg.dev.queue_depth ? q->cfg.dev.queue_depth : 1u);
	qs->slice = s->iomax_slice_ns ? s->iomax_slice_ns : ELV_NSEC_PER_SEC / 10;
	qs->tick = s->iomax_tick_ns ? s->iomax_tick_ns : ELV_NSEC_PER_MSEC;
	qs->mc.at_limit = s->at_limit;
	qs->mc.cost_size = s->cost_size;
	qs->mc.reject_ns = s->reject_threshold_ns;
	qs->mc.idle_age = s->idle_age_ns ? s->idle_age_ns : ELV_QOS_IDLE_AGE;
	for (c = elv_qos_next_client(q, NULL); c; c = elv_qos_next_client(q, c)) {
		c->thr.slice = qs->slice;
		c->thr.tick = qs->tick;
		elv_qos_reroute(qs, c); /* at_limit */
	}
	elv_qos_bound(qs);
}

/* The stage of @q for a call that changes it, or an error. */
static int elv_qos_of(struct elv_queue *q, struct elv_qstate **qs)
{
	int err = elv_gate_err(q);

	if (err)
		return err;
	*qs = elv_qs(q);
	return *qs ? 0 : ELV_EINVAL;
}

int elv_qos_attach(struct elv_queue *q, struct elv_qos *qos, const struct elv_qos_settings *set,
		   uint64_t now)
{
	static const struct elv_qos_settings defaults;
	struct elv_qstate *qs = (struct elv_qstate *)(void *)qos;
	int err = elv_stage_gate_err(q); /* ELV_ENOSYS when stages are compiled out */

	if (err)
		return err;
	if (!qos)
		return ELV_EINVAL;
	if (!set)
		set = &defaults;
	err = elv_qos_settings_ok(set);
	if (err)
		return err;
	if (q->stage[ELV_STAGE_QOS].ops)
		return ELV_EBUSY;
	memset(qos, 0, sizeof(*qos));
	qs->q = q;
	elv_list_init(&qs->wait[0]);
	elv_list_init(&qs->wait[1]);
	elv_mc_init(&qs->mc);
	qs->mc.next_client = elv_qos_next_mc;
	qs->mc.ctx = qs;
	err = elv_stage_attach(q, ELV_STAGE_QOS, &elv_qos_ops, qs);
	if (err)
		return err;
	elv_queue_clock(q, now);
	elv_qos_use(q, qs, set);
	return 0;
}

/* @c leaves its owner: its memory is the host's again. */
static void elv_qos_forget(struct elv_qclient *c)
{
	if (c->group)
		((struct elv_group *)c->owner)->qos = NULL;
	else
		((struct elv_stream *)c->owner)->qos = NULL;
	c->qs = NULL;
	c->owner = NULL;
}

int elv_qos_detach(struct elv_queue *q, uint64_t now)
{
	struct elv_qstate *qs;
	struct elv_qclient *c, *n;
	int err = elv_qos_of(q, &qs);

	if (err)
		return err;
	if (qs->nr_held || qs->mc.nr)
		return ELV_EBUSY;
	err = elv_stage_detach(q, ELV_STAGE_QOS);
	if (err)
		return err;
	elv_queue_clock(q, now);
	for (c = elv_qos_next_client(q, NULL); c; c = n) {
		n = elv_qos_next_client(q, c);
		elv_qos_forget(c);
	}
	qs->q = NULL;
	return 0;
}

int elv_qos_set(struct elv_queue *q, const struct elv_qos_settings *set, uint64_t now)
{
	struct elv_qstate *qs;
	int err = elv_qos_of(q, &qs);

	if (err)
		return err;
	if (!set)
		return ELV_EINVAL;
	err = elv_qos_settings_ok(set);
	if (err)
		return err;
	elv_queue_clock(q, now);
	elv_qos_use(q, qs, set);
	return 0;
}

int elv_qos_get(const struct elv_queue *q, struct elv_qos_settings *set)
{
	const struct elv_qstate *qs;

	if (!q || !set || q->gate == ELV_GATE_EXITED || !(qs = elv_qs(q)))
		return ELV_EINVAL;
	*set = qs->set;
	set->depth = qs->depth;
	set->iomax_slice_ns = qs->slice;
	set->iomax_tick_ns = qs->tick;
	set->idle_age_ns = qs->mc.idle_age;
	return 0;
}

/* Give owner @owner client @mem. */
static void elv_qos_adopt(struct elv_qstate *qs, struct elv_qclient *c, void *owner, int group)
{
	int dir;

	memset(c, 0, sizeof(struct elv_qos_client));
	c->qs = qs;
	c->owner = owner;
	c->group = (uint8_t)group;
	for (dir = 0; dir < 2; dir++) {
		elv_list_init(&c->held[dir]);
		elv_list_init(&c->rr[dir]);
		elv_list_init(&c->member[dir]);
		elv_list_init(&c->wait[dir]);
	}
	c->thr.slice = qs->slice;
	c->thr.tick = qs->tick;
}

int elv_qos_stream_attach(struct elv_queue *q, struct elv_stream *s, struct elv_qos_client *c,
			  uint64_t now)
{
	struct elv_qstate *qs;
	int err = elv_qos_of(q, &qs);

	if (err)
		return err;
	if (!s || !c || !(s->flags & ELV_STREAM_REGISTERED) || s->q != q)
		return ELV_EINVAL;
	if (s->qos || s->nr_rq || elv_qc(c)->qs)
		return ELV_EBUSY;
	elv_queue_clock(q, now);
	elv_qos_adopt(qs, elv_qc(c), s, 0);
	s->qos = c;
	return 0;
}

int elv_qos_group_attach(struct elv_queue *q, struct elv_group *g, struct elv_qos_client *c,
			 uint64_t now)
{
	struct elv_qstate *qs;
	const struct elv_list *l;
	int err = elv_qos_of(q, &qs);

	if (err)
		return err;
	if (!g || !c || !(g->flags & ELV_GROUP_REGISTERED) || g->q != q)
		return ELV_EINVAL;
	if (g->qos || elv_qc(c)->qs)
		return ELV_EBUSY;
	/* Requests of its streams would change holder under way. */
	for (l = q->streams.next; l != &q->streams; l = l->next) {
		const struct elv_stream *s = elv_container_of(l, struct elv_stream, link);

		if (s->group == g && s->nr_rq)
			return ELV_EBUSY;
	}
	elv_queue_clock(q, now);
	elv_qos_adopt(qs, elv_qc(c), g, 1);
	g->qos = c;
	return 0;
}

/* @c holds requests, as holder, top or mClock client. */
static int elv_qos_busy(const struct elv_qclient *c)
{
	return (c->nr_hold[0] | c->nr_hold[1] | c->nr_wait[0] | c->nr_wait[1]) ||
	       (c->has_mc && c->mc.nr);
}

/*
 * The stage's state for the detach calls, which elv_stream_exit() and elv_group_exit() make:
 * found without naming the stage's hooks, so that firmware using streams but not the stage
 * links none of it. Only this file puts a client on a stream or group, and only while its
 * stage is in the slot.
 */
static int elv_qos_slot(struct elv_queue *q, struct elv_qstate **qs)
{
	int err = elv_gate_err(q);

	if (err)
		return err;
	*qs = q->stage[ELV_STAGE_QOS].data;
	return *qs ? 0 : ELV_EINVAL;
}

int elv_qos_stream_detach(struct elv_queue *q, struct elv_stream *s, uint64_t now)
{
	struct elv_qstate *qs;
	int err = elv_qos_slot(q, &qs);

	if (err)
		return err;
	if (!s || !s->qos || s->q != q || elv_qc(s->qos)->qs != qs)
		return ELV_EINVAL;
	if (elv_qos_busy(elv_qc(s->qos)))
		return ELV_EBUSY;
	elv_queue_clock(q, now);
	elv_qos_forget(elv_qc(s->qos));
	return 0;
}

int elv_qos_group_detach(struct elv_queue *q, struct elv_group *g, uint64_t now)
{
	struct elv_qstate *qs;
	int err = elv_qos_slot(q, &qs);

	if (err)
		return err;
	if (!g || !g->qos || g->q != q || elv_qc(g->qos)->qs != qs)
		return ELV_EINVAL;
	if (elv_qos_busy(elv_qc(g->qos)))
		return ELV_EBUSY;
	elv_queue_clock(q, now);
	elv_qos_forget(elv_qc(g->qos));
	return 0;
}

/* The client @c of queue @q for a call that changes it, or an error. */
static int elv_qos_client_of(struct elv_queue *q, struct elv_qos_client *c,
			     struct elv_qstate **qs)
{
	int err = elv_qos_of(q, qs);

	if (err)
		return err;
	return c && elv_qc(c)->qs == *qs ? 0 : ELV_EINVAL;
}

int elv_qos_set_throttle(struct elv_queue *q, struct elv_qos_client *cl,
			 const struct elv_throttle_settings *t, uint64_t now)
{
	struct elv_qstate *qs;
	struct elv_qclient *c = elv_qc(cl);
	struct elv_list *l;
	uint32_t queued[2];
	int err = elv_qos_client_of(q, cl, &qs), dir;

	if (err)
		return err;
	if (t && (err = elv_thr_validate(t)) != 0)
		return err;
	now = elv_queue_clock(q, now);
	queued[0] = c->nr_hold[0] + c->nr_wait[0];
	queued[1] = c->nr_hold[1] + c->nr_wait[1];
	elv_thr_apply(&c->thr, t, now, queued, qs->slice, qs->tick);
	c->has_thr = c->thr.on;
	elv_qos_reroute(qs, c);
	if (t)
		c->thr_set = *t;
	else
		memset(&c->thr_set, 0, sizeof(c->thr_set));
	/* Waiting requests are judged by the new limits from now on. */
	for (dir = 0; dir < 2; dir++)
		for (l = qs->wait[dir].next; l != &qs->wait[dir]; l = l->next)
			elv_container_of(l, struct elv_qclient, wait[dir])->ready[dir] = now;
	qs->first = now;
	return 0;
}

int elv_qos_get_throttle(const struct elv_queue *q, const struct elv_qos_client *c,
			 struct elv_throttle_settings *t)
{
	if (!q || !c || !t || q->gate == ELV_GATE_EXITED || !elv_qs(q) ||
	    elv_qc(c)->qs != elv_qs(q))
		return ELV_EINVAL;
	*t = elv_qc(c)->thr_set;
	return 0;
}

int elv_qos_set_mclock(struct elv_queue *q, struct elv_qos_client *cl,
		       const struct elv_mclock_settings *m, uint64_t now)
{
	struct elv_qstate *qs;
	struct elv_qclient *c = elv_qc(cl);
	int err = elv_qos_client_of(q, cl, &qs);

	if (err)
		return err;
	if (m && (err = elv_mc_validate(m)) != 0)
		return err;
	if (!m && c->has_mc && c->mc.nr)
		return ELV_EBUSY; /* its queued requests would have nowhere to go in order */
	/* A stream's requests may sit in its group's mClock queue: new ones must not pass them. */
	if (m && !c->has_mc && !c->group && ((struct elv_stream *)c->owner)->nr_rq)
		return ELV_EBUSY;
	now = elv_queue_clock(q, now);
	if (!m) {
		c->has_mc = 0;
	} else if (c->has_mc) {
		elv_mc_client_set(&qs->mc, &c->mc, m);
	} else {
		elv_mc_client_join(&qs->mc, &c->mc, m, now);
		c->has_mc = 1;
	}
	elv_qos_reroute(qs, c);
	if (m)
		c->mc_set = *m;
	else
		memset(&c->mc_set, 0, sizeof(c->mc_set));
	return 0;
}

int elv_qos_get_mclock(const struct elv_queue *q, const struct elv_qos_client *c,
		       struct elv_mclock_settings *m)
{
	if (!q || !c || !m || q->gate == ELV_GATE_EXITED || !elv_qs(q) ||
	    elv_qc(c)->qs != elv_qs(q))
		return ELV_EINVAL;
	*m = elv_qc(c)->mc_set;
	return 0;
}

int elv_qos_client_stats(const struct elv_queue *q, const struct elv_qos_client *c,
			 struct elv_qos_client_stats *st)
{
	const struct elv_qclient *qc = elv_qc(c);

	if (!q || !c || !st || q->gate == ELV_GATE_EXITED || !elv_qs(q) || qc->qs != elv_qs(q))
		return ELV_EINVAL;
	*st = qc->st;
	st->reservation = qc->mc.served[ELV_MC_RESERVATION];
	st->weight = qc->mc.served[ELV_MC_WEIGHT];
	st->over_limit = qc->mc.served[ELV_MC_OVER];
	st->held_throttle = qc->nr_hold[0] + qc->nr_hold[1];
	st->held_mclock = qc->has_mc ? qc->mc.nr : 0;
	return 0;
}

uint64_t elv_qos_request_cost(const struct elv_queue *q, const struct elv_request *rq)
{
	const struct elv_qstate *qs;

	if (!q || !rq || q->gate == ELV_GATE_EXITED || !(qs = elv_qs(q)))
		return 0;
	return elv_mc_cost(&qs->mc, rq);
}
