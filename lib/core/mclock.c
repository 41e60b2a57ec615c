/*
 * mClock tag scheduler of the QoS stage (Gulati, Merchant and Varman, OSDI 2010, as dmClock
 * runs it on one server), in integers and without allocation.
 *
 * Each client has a reservation r, a weight w and a limit l. The first request of a client
 * carries three tags, computed when it becomes first ("delayed" tagging, which needs tags for
 * one request per client only) from the tags of the request before it:
 *     R = max(t, R' + c / r)   P = max(t, P' + c / w)   L = max(t, L' + c / l)
 * in ns, exact (each tag keeps the remainder of its division). A release at t serves, in
 * order: the smallest R that is due (reservation phase); else the smallest P + delta among
 * clients whose L is due (weight phase), and then lowers that client's R by c / r, since
 * service in the weight phase counts toward the reservation; else, when the queue allows
 * going past the limit, the smallest P + delta of all. Ties go to the client that joined
 * first. A client that comes back after idle_age without requests gets delta so that its
 * weight tags start level with the smallest of the others' instead of far behind them.
 * Clients are few; a release looks at each client with requests once, at its R tag only
 * when one may be due (struct elv_mc r_low).
 */
#include "qos_internal.h"

void elv_mc_init(struct elv_mc *mc)
{
	elv_list_init(&mc->active);
	mc->next_id = 0;
	mc->nr = 0;
	mc->r_low = 0;
}

uint64_t elv_mc_cost(const struct elv_mc *mc, const struct elv_request *rq)
{
	uint64_t bytes = (uint64_t)rq->nr_sectors << 9;

	return mc->cost_size ? 1u + elv_div64(bytes, mc->cost_size) : 1u;
}

int elv_mc_validate(const struct elv_mclock_settings *m)
{
	if (!m || m->reserved || !m->weight)
		return ELV_EINVAL;
	if (m->reservation > ELV_MCLOCK_RATE_MAX || m->limit > ELV_MCLOCK_RATE_MAX ||
	    m->weight > ELV_MCLOCK_WEIGHT_MAX)
		return ELV_ERANGE;
	if (m->limit && m->reservation > m->limit)
		return ELV_EINVAL;
	return 0;
}

int elv_mclock_check(const struct elv_mclock_settings *m)
{
	return elv_mc_validate(m);
}

/* What @cost units add to a tag at @rate per second: ns in *q, remainder (of @rate) in *r. */
static void elv_mc_step(uint64_t cost, uint64_t rate, uint64_t *q, uint64_t *r)
{
	*q = elv_qos_muldiv(cost, ELV_NSEC_PER_SEC, rate, r);
	if (*q > ELV_QOS_HORIZON) {
		*q = ELV_QOS_HORIZON;
		*r = 0;
	}
}

/* Take @q ns and @r / res of a ns off @c's R tag. */
static ELV_SPEED_INLINE void elv_mc_take(struct elv_mc_client *c, uint64_t q, uint64_t r)
{
	if (c->r_rem < r) {
		c->r_rem += c->res;
		c->r--;
	}
	c->r_rem -= r;
	c->r -= q;
}

/* A credit @c's R tag owes (ELV_MC_OWED) is taken now. */
static void elv_mc_settle(struct elv_mc_client *c)
{
	if (c->tagged == ELV_MC_OWED) {
		elv_mc_take(c, c->r1, c->r1_rem);
		c->tagged = ELV_MC_TAGGED;
	}
}

void elv_mc_client_set(struct elv_mc *mc, struct elv_mc_client *c,
		       const struct elv_mclock_settings *m)
{
	elv_mc_settle(c); /* at the old rate */
	c->res = m->reservation;
	c->lim = m->limit;
	c->weight = m->weight;
	c->r1 = c->r1_rem = c->l1 = c->l1_rem = 0;
	if (c->res)
		elv_mc_step(1, c->res, &c->r1, &c->r1_rem);
	if (c->lim)
		elv_mc_step(1, c->lim, &c->l1, &c->l1_rem);
	elv_mc_step(1, c->weight, &c->p1, &c->p1_rem);
	/* Fractions of a ns are in units of the old rates. */
	c->r_rem = c->p_rem = c->l_rem = c->xl_rem = 0;
	/* Only a limited client waits for its limit tag. */
	if (!c->lim)
		c->ready = 1;
	/* An active client given a reservation brings its R tag under the bound. */
	if (c->nr && c->res && elv_time_before(c->r, mc->r_low))
		mc->r_low = c->r;
}

void elv_mc_client_join(struct elv_mc *mc, struct elv_mc_client *c,
			const struct elv_mclock_settings *m, uint64_t now)
{
	elv_list_init(&c->fifo);
	elv_list_init(&c->active);
	c->r = c->p = c->l = c->xl = now;
	c->r_rem = c->p_rem = c->l_rem = c->xl_rem = 0;
	c->delta = 0;
	c->last = now;
	c->cost = 0;
	c->nr = 0;
	c->id = mc->next_id++;
	c->ready = 0;
	c->idle = 1;
	c->tagged = c->xtagged = 0;
	elv_mc_client_set(mc, c, m);
}

/*
 * tag = max(t, tag + cost / rate): @q ns and @r / @rate of a ns (elv_mc_step()), the
 * fraction kept in *rem. The first tag of a client is t.
 */
static ELV_SPEED_INLINE void elv_tag_next(uint64_t *tag, uint64_t *rem, uint64_t q, uint64_t r,
					  uint64_t rate, uint64_t t, int has_prev)
{
	if (!has_prev) {
		*tag = t;
		*rem = 0;
		return;
	}
	*tag += q;
	*rem += r;
	if (*rem >= rate) {
		*rem -= rate;
		(*tag)++;
	}
	if (elv_time_before(*tag, t)) {
		*tag = t;
		*rem = 0;
	}
	/* A tag never leads t by more than the horizon: differences stay below 2^63. */
	if (*tag - t > ELV_QOS_HORIZON) {
		*tag = t + ELV_QOS_HORIZON;
		*rem = 0;
	}
}

/* Tag @tag (remainder @rem) moves on by @cost units at @rate, whose one unit is @q1, @r1. */
static ELV_SPEED_INLINE void elv_mc_advance(uint64_t *tag, uint64_t *rem, uint64_t cost,
					    uint64_t rate, uint64_t q1, uint64_t r1, uint64_t t,
					    int prev)
{
	uint64_t q = q1, r = r1;

	if (cost != 1)
		elv_mc_step(cost, rate, &q, &r);
	elv_tag_next(tag, rem, q, r, rate, t, prev);
}

/* The weight and limit tags of @c's first request, of @cost units, at @t (@prev: c->tagged). */
static ELV_SPEED_INLINE void elv_mc_tag_pl(struct elv_mc *mc, struct elv_mc_client *c,
					   uint64_t cost, uint64_t t, int prev)
{
	elv_mc_advance(&c->p, &c->p_rem, cost, c->weight, c->p1, c->p1_rem, t, prev);
	if (c->lim)
		elv_mc_advance(&c->l, &c->l_rem, cost, c->lim, c->l1, c->l1_rem, t, prev);
	/* Under ELV_QOS_AT_LIMIT_REJECT the limit was enforced at the door. */
	c->ready = !c->lim || mc->at_limit == ELV_QOS_AT_LIMIT_REJECT || !elv_time_after(c->l, t);
}

/* The tags of @c's first request, of @cost units, at @t. */
static ELV_SPEED_INLINE void elv_mc_tag_units(struct elv_mc *mc, struct elv_mc_client *c,
					      uint64_t cost, uint64_t t)
{
	int prev = c->tagged;

	if (c->res) {
		/* A unit owed and a unit on cancel out: R only comes up to t. */
		if (prev == ELV_MC_OWED && cost == 1) {
			if (elv_time_before(c->r, t)) {
				c->r = t;
				c->r_rem = 0;
			}
			if (c->r - t > ELV_QOS_HORIZON) {
				c->r = t + ELV_QOS_HORIZON;
				c->r_rem = 0;
			}
		} else {
			elv_mc_settle(c);
			elv_mc_advance(&c->r, &c->r_rem, cost, c->res, c->r1, c->r1_rem, t, prev);
		}
		if (elv_time_before(c->r, mc->r_low))
			mc->r_low = c->r;
	}
	elv_mc_tag_pl(mc, c, cost, t, prev);
	c->tagged = ELV_MC_TAGGED;
}

/* elv_mc_tag() for a request of more than one unit: each step takes a division. Returns
 * ELV_STAGE_HELD, for elv_mc_add() to hand on. */
static ELV_QOS_APART int elv_mc_tag_dear(struct elv_mc *mc, struct elv_mc_client *c, uint64_t t)
{
	elv_mc_tag_units(mc, c, c->cost, t);
	return ELV_STAGE_HELD;
}

/* Request @rq became the first of @c at @t: give it its tags. Most requests cost one unit,
 * whose steps are kept in the client: those take no division and no call. */
static ELV_SPEED_INLINE void elv_mc_tag(struct elv_mc *mc, struct elv_mc_client *c,
					const struct elv_request *rq, uint64_t t)
{
	c->cost = elv_mc_cost(mc, rq);
	if (c->cost == 1)
		elv_mc_tag_units(mc, c, 1, t);
	else
		elv_mc_tag_dear(mc, c, t);
}

int elv_mc_offer(struct elv_mc *mc, struct elv_mc_client *c, uint64_t cost, uint64_t now)
{
	if (!c->lim)
		return 0;
	elv_mc_advance(&c->xl, &c->xl_rem, cost, c->lim, c->l1, c->l1_rem, now, c->xtagged);
	c->xtagged = 1;
	return elv_time_after(c->xl, now + mc->reject_ns) ? ELV_EAGAIN : 0;
}

/* Is @c idle at @t: never active, or without a request for idle_age? */
static int elv_mc_is_idle(const struct elv_mc *mc, const struct elv_mc_client *c, uint64_t t)
{
	return c->idle || (t - c->last >= mc->idle_age && !c->nr);
}

/* @c comes back from idle at @t: its weight tags start at the smallest of the others'. */
static void elv_mc_wake(struct elv_mc *mc, struct elv_mc_client *c, uint64_t t)
{
	const struct elv_mc_client *o = NULL;
	uint64_t m = 0;
	int found = 0;

	while ((o = mc->next_client(mc->ctx, o)) != NULL) {
		uint64_t v = o->p + o->delta;

		if (o == c || !o->tagged || elv_mc_is_idle(mc, o, t))
			continue;
		if (!found || elv_time_before(v, m))
			m = v;
		found = 1;
	}
	if (found)
		c->delta = m - t;
	c->idle = 0;
}

/* @rq becomes the first request of @c, awake, at @now: @c joins the active clients and @rq
 * gets its tags. */
static ELV_SPEED_INLINE int elv_mc_start(struct elv_mc *mc, struct elv_mc_client *c,
					 struct elv_request *rq, uint64_t now)
{
	/* The first active client: its R tag, if any, is the only one. */
	if (!mc->nr)
		mc->r_low = now + ELV_QOS_HORIZON;
	elv_list_add_tail(&c->fifo, &rq->fifo);
	c->last = now;
	c->nr = 1;
	mc->nr++;
	elv_list_add_tail(&mc->active, &c->active);
	c->cost = elv_mc_cost(mc, rq);
	if (c->cost != 1)
		return elv_mc_tag_dear(mc, c, now);
	elv_mc_tag_units(mc, c, 1, now);
	return ELV_STAGE_HELD;
}

/* elv_mc_add() for a client without requests. */
static ELV_QOS_APART int elv_mc_add_first(struct elv_mc *mc, struct elv_mc_client *c,
					  struct elv_request *rq, uint64_t now)
{
	return elv_mc_start(mc, c, rq, now);
}

/* elv_mc_add() for a client back from idle. */
static ELV_QOS_APART int elv_mc_add_woken(struct elv_mc *mc, struct elv_mc_client *c,
					  struct elv_request *rq, uint64_t now)
{
	elv_mc_wake(mc, c, now);
	return elv_mc_start(mc, c, rq, now);
}

int elv_mc_add(struct elv_mc *mc, struct elv_mc_client *c, struct elv_request *rq,
	       uint64_t now)
{
	/* Behind others of its client, a request takes no tags: the usual add is a few
	 * stores. The others are apart, so that it saves no registers. */
	if (ELV_UNLIKELY(!c->nr)) {
		if (ELV_UNLIKELY(elv_mc_is_idle(mc, c, now)))
			return elv_mc_add_woken(mc, c, rq, now);
		return elv_mc_add_first(mc, c, rq, now);
	}
	elv_list_add_tail(&c->fifo, &rq->fifo);
	c->last = now;
	c->nr++;
	mc->nr++;
	return ELV_STAGE_HELD;
}

/* @rq left @c's queue; a new first request gets its tags at @t. */
static void elv_mc_unlink(struct elv_mc *mc, struct elv_mc_client *c, struct elv_request *rq,
			  uint64_t t)
{
	int first = elv_list_first_rq(&c->fifo) == rq;

	elv_list_del(&rq->fifo);
	c->last = t;
	mc->nr--;
	if (--c->nr == 0) {
		elv_list_del(&c->active);
		return;
	}
	if (first)
		elv_mc_tag(mc, c, elv_list_first_rq(&c->fifo), t);
}

/* elv_mc_credit() for a request of more than one unit. */
static ELV_QOS_APART void elv_mc_credit_dear(struct elv_mc_client *c)
{
	uint64_t q, r;

	elv_mc_step(c->cost, c->res, &q, &r);
	elv_mc_take(c, q, r);
}

/* Weight-phase service counts toward the reservation: take it off the R tag. */
static ELV_SPEED_INLINE void elv_mc_credit(struct elv_mc_client *c)
{
	if (!c->res)
		return;
	if (c->cost != 1)
		elv_mc_credit_dear(c);
	else
		elv_mc_take(c, c->r1, c->r1_rem);
}

/* elv_mc_direct() once @c has its tags: served at once in its phase, or queued. */
static int elv_mc_direct_phase(struct elv_mc *mc, struct elv_mc_client *c,
			       struct elv_request *rq, uint64_t now)
{
	if (c->res && !elv_time_after(c->r, now)) {
		c->served[ELV_MC_RESERVATION]++;
	} else if (c->ready || mc->at_limit == ELV_QOS_AT_LIMIT_ALLOW) {
		c->served[c->ready ? ELV_MC_WEIGHT : ELV_MC_OVER]++;
		elv_mc_credit(c);
	} else {
		/* Not yet: it waits, tagged, as the first of its client, alone in mClock. */
		elv_list_add_tail(&c->fifo, &rq->fifo);
		c->nr = 1;
		mc->nr++;
		elv_list_add_tail(&mc->active, &c->active);
		mc->r_low = c->res ? c->r : now + ELV_QOS_HORIZON;
		return ELV_STAGE_HELD;
	}
	return ELV_STAGE_PASS;
}

/* elv_mc_direct() the long way: wake @c if idle, tag @rq as elv_mc_add() would, then serve
 * it at once in its phase or queue it. */
static ELV_QOS_APART int elv_mc_direct_tag(struct elv_mc *mc, struct elv_mc_client *c,
					   struct elv_request *rq, uint64_t now)
{
	if (elv_mc_is_idle(mc, c, now))
		elv_mc_wake(mc, c, now);
	c->last = now;
	elv_mc_tag(mc, c, rq, now);
	return elv_mc_direct_phase(mc, c, rq, now);
}

int elv_mc_direct(struct elv_mc *mc, struct elv_mc_client *c, struct elv_request *rq,
		  uint64_t now)
{
	uint64_t t;

	/* The usual client is awake, tagged before, has a reservation and a request of cost 1:
	 * the steps below need no division and no call, so they take few registers to save. */
	if (ELV_UNLIKELY(elv_mc_is_idle(mc, c, now) || c->tagged != ELV_MC_TAGGED || !c->res ||
			 elv_mc_cost(mc, rq) != 1))
		return elv_mc_direct_tag(mc, c, rq, now);
	c->last = now;
	c->cost = 1;
	/*
	 * Its reservation tag moves on by one unit, and a request served outside the
	 * reservation phase takes the same step back (the credit), exactly, remainder included.
	 * So when the moved tag is not due, and not so far ahead that the horizon would cut it,
	 * a request served at once leaves the tag where it was: work out the moved tag, and
	 * store it only when it stays.
	 */
	t = c->r + c->r1 + (c->r_rem + c->r1_rem >= c->res); /* the carry of the remainders */
	elv_mc_tag_pl(mc, c, 1, now, 1);
	if (!elv_time_after(t, now) || t - now > ELV_QOS_HORIZON ||
	    !(c->ready || mc->at_limit == ELV_QOS_AT_LIMIT_ALLOW)) {
		/* Due, cut by the horizon, or waiting: the tag as elv_mc_tag() gives it. */
		elv_tag_next(&c->r, &c->r_rem, c->r1, c->r1_rem, c->res, now, 1);
		return elv_mc_direct_phase(mc, c, rq, now);
	}
	c->served[c->ready ? ELV_MC_WEIGHT : ELV_MC_OVER]++;
	return ELV_STAGE_PASS;
}

/* Is tag @a (of client @ca) before tag @b (of @cb), ties to the lower id? */
static int elv_mc_less(uint64_t a, const struct elv_mc_client *ca, uint64_t b,
		       const struct elv_mc_client *cb)
{
	return a != b ? elv_time_before(a, b) : ca->id < cb->id;
}

/* The client with requests whose weight tag (P + delta) comes first. */
static struct elv_mc_client *elv_mc_first_by_weight(struct elv_mc *mc)
{
	struct elv_mc_client *any = NULL, *c;
	struct elv_list *l;

	for (l = mc->active.next; l != &mc->active; l = l->next) {
		c = elv_container_of(l, struct elv_mc_client, active);
		if (!any || elv_mc_less(c->p + c->delta, c, any->p + any->delta, any))
			any = c;
	}
	return any;
}

/*
 * The reservation phase at @now: the client whose R is due and first, or NULL. On the way
 * it works the bound on the R tags out again: they pass it as clients are served.
 */
static ELV_QOS_APART struct elv_mc_client *elv_mc_first_due(struct elv_mc *mc, uint64_t now)
{
	struct elv_mc_client *res = NULL, *c;
	struct elv_list *l;
	uint64_t low = now + ELV_QOS_HORIZON; /* no R tag leads further */

	for (l = mc->active.next; l != &mc->active; l = l->next) {
		c = elv_container_of(l, struct elv_mc_client, active);
		if (!c->res)
			continue;
		if (elv_time_before(c->r, low))
			low = c->r;
		if (!elv_time_after(c->r, now) && (!res || elv_mc_less(c->r, c, res->r, res)))
			res = c;
	}
	mc->r_low = low;
	return res;
}

/* Serve the first request of @c at @now in @phase: counted, taken out, the next one tagged. */
static ELV_QOS_APART struct elv_request *elv_mc_serve(struct elv_mc *mc, struct elv_mc_client *c,
						      uint64_t now, int phase)
{
	struct elv_request *rq = elv_list_first_rq(&c->fifo);

	if (phase != ELV_MC_RESERVATION)
		elv_mc_credit(c);
	c->served[phase]++;
	elv_mc_unlink(mc, c, rq, now);
	return rq;
}

/* No client is due or within its limit at @now: past the limit when the queue allows it. */
static ELV_QOS_APART struct elv_request *elv_mc_pull_over(struct elv_mc *mc, uint64_t now)
{
	struct elv_mc_client *c;

	if (mc->at_limit != ELV_QOS_AT_LIMIT_ALLOW || (c = elv_mc_first_by_weight(mc)) == NULL)
		return NULL;
	return elv_mc_serve(mc, c, now, ELV_MC_OVER);
}

/* Is @c's first request within its limit at @now? Once it is, it stays so until served. */
static ELV_SPEED_INLINE int elv_mc_within(struct elv_mc_client *c, uint64_t now)
{
	if (ELV_LIKELY(c->ready))
		return 1;
	if (elv_time_after(c->l, now))
		return 0;
	c->ready = 1;
	return 1;
}

/* elv_mc_pull() in the weight phase, no R tag being due at @now. */
static ELV_SPEED_INLINE struct elv_request *elv_mc_pull_weight(struct elv_mc *mc, uint64_t now)
{
	struct elv_mc_client *c, *o;
	struct elv_list *l;
	struct elv_request *rq;
	uint64_t best, key;

	/* The smallest P + delta within its limit, ties to the lower id. */
	for (l = mc->active.next;; l = l->next) {
		if (ELV_UNLIKELY(l == &mc->active))
			return elv_mc_pull_over(mc, now);
		if (elv_mc_within(elv_container_of(l, struct elv_mc_client, active), now))
			break;
	}
	c = elv_container_of(l, struct elv_mc_client, active);
	best = c->p + c->delta;
	for (l = l->next; l != &mc->active; l = l->next) {
		o = elv_container_of(l, struct elv_mc_client, active);
		if (!elv_mc_within(o, now))
			continue;
		key = o->p + o->delta;
		if (elv_time_before(key, best) || (key == best && o->id < c->id)) {
			c = o;
			best = key;
		}
	}
	/*
	 * The weight phase. No R tag is due, so a request served here takes one unit off R
	 * (the credit) that the next one's tag, one unit on from a tag after now, puts back
	 * exactly: when both cost one unit the R tag stays, and only P (and L) move on.
	 */
	if (ELV_UNLIKELY(c->cost != 1))
		return elv_mc_serve(mc, c, now, ELV_MC_WEIGHT);
	rq = elv_list_rq(c->fifo.next);
	if (c->nr == 1) {
		/* Its last request: R owes the credit to the next one's tag, which mostly cancels
		 * it (elv_mc_tag_units()). Without a reservation it owes nothing (r1 is 0). */
		c->tagged = ELV_MC_OWED;
		elv_list_del(&c->active);
	} else if (ELV_UNLIKELY(elv_mc_cost(mc, elv_list_rq(rq->fifo.next)) != 1)) {
		return elv_mc_serve(mc, c, now, ELV_MC_WEIGHT);
	} else {
		elv_mc_tag_pl(mc, c, 1, now, 1);
	}
	c->served[ELV_MC_WEIGHT]++;
	elv_list_del(&rq->fifo);
	c->last = now;
	c->nr--;
	mc->nr--;
	return rq;
}

/* elv_mc_pull() when an R tag may be due at @now. */
static ELV_QOS_APART struct elv_request *elv_mc_pull_due(struct elv_mc *mc, uint64_t now)
{
	struct elv_mc_client *c = elv_mc_first_due(mc, now);

	if (c)
		return elv_mc_serve(mc, c, now, ELV_MC_RESERVATION);
	return elv_mc_pull_weight(mc, now);
}

struct elv_request *elv_mc_pull(struct elv_mc *mc, uint64_t now)
{
	if (ELV_UNLIKELY(!elv_time_after(mc->r_low, now)))
		return elv_mc_pull_due(mc, now);
	return elv_mc_pull_weight(mc, now);
}

uint64_t elv_mc_next(const struct elv_mc *mc, uint64_t now)
{
	const struct elv_list *l;
	uint64_t t = ELV_TIME_NEVER;

	for (l = mc->active.next; l != &mc->active; l = l->next) {
		const struct elv_mc_client *c = elv_container_of(l, struct elv_mc_client, active);

		if (c->ready || mc->at_limit == ELV_QOS_AT_LIMIT_ALLOW)
			return now;
		if (c->res && (t == ELV_TIME_NEVER || elv_time_before(c->r, t)))
			t = c->r;
		if (t == ELV_TIME_NEVER || elv_time_before(c->l, t))
			t = c->l;
	}
	return t != ELV_TIME_NEVER && elv_time_before(t, now) ? now : t;
}

void elv_mc_remove(struct elv_mc *mc, struct elv_mc_client *c, struct elv_request *rq,
		   uint64_t now)
{
	elv_mc_unlink(mc, c, rq, now);
}

/* How many times @c is on the active list. */
static uint32_t elv_mc_listed(const struct elv_mc *mc, const struct elv_mc_client *c)
{
	const struct elv_list *l;
	uint32_t n = 0;

	for (l = mc->active.next; l != &mc->active; l = l->next)
		n += elv_container_of(l, struct elv_mc_client, active) == c;
	return n;
}

int elv_mc_check(const struct elv_mc *mc)
{
	const struct elv_mc_client *c = NULL;
	const struct elv_list *l, *r;
	uint32_t n = 0;

	while ((c = mc->next_client(mc->ctx, c)) != NULL) {
		uint32_t k = 0;

		for (r = c->fifo.next; r != &c->fifo; r = r->next)
			k++;
		/* A client leaving the active list keeps stale links: only the list tells. */
		if (k != c->nr || elv_mc_listed(mc, c) != (c->nr != 0) || !c->weight ||
		    (c->res && c->r_rem >= c->res) || c->p_rem >= c->weight ||
		    (c->lim && c->l_rem >= c->lim))
			return ELV_EINVAL;
		n += k;
	}
	if (n != mc->nr)
		return ELV_EINVAL;
	for (l = mc->active.next; l != &mc->active; l = l->next) {
		c = elv_container_of(l, struct elv_mc_client, active);
		/* Only clients with requests, and no R tag before the bound a release trusts. */
		if (!c->nr || (c->res && elv_time_before(c->r, mc->r_low)))
			return ELV_EINVAL;
		n -= c->nr;
	}
	/* Every client on the active list is a client of the queue. */
	return n == 0 ? 0 : ELV_EINVAL;
}
