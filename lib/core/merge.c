/*
 * Merge rules and the merge step of elv_add(): back merges through the end-sector hash, front
 * merges through the policy's start-sector lookup, then a request-to-request merge when the
 * grown request became contiguous with a queued neighbour. The host carries out every merge
 * of payloads through its callback and is told which request was absorbed.
 */
#include "elv_internal.h"

/*
 * The policy's and the host's vetoes, which few queues have: out of the common path. The host's
 * runs as a callback: calls back into @q that would change it are refused meanwhile.
 */
static int elv_merge_allowed(struct elv_queue *q, const struct elv_request *a,
			     const struct elv_request *b, enum elv_merge_kind kind)
{
	const struct elv_policy *p = q->policy;
	int ok = 1;

	if (p->allow_merge && !p->allow_merge(q, a, b))
		return 0;
	if (q->stages && !q->stage_vt->allow_merge(q, a, b))
		return 0;
	if (q->cfg.allow_merge)
		ELV_CALLBACK(q, ok = q->cfg.allow_merge(q->cfg.ctx, a, b, kind));
	return ok;
}

/* May @b (following @a on disk) be joined onto @a? @b may be a new request not yet queued. */
static ELV_SPEED_INLINE int elv_can_merge(struct elv_queue *q, const struct elv_request *a,
					  const struct elv_request *b, enum elv_merge_kind kind)
{
	uint64_t len = (uint64_t)a->nr_sectors + b->nr_sectors;
	uint32_t max = q->cfg.dev.max_sectors ? q->cfg.dev.max_sectors : UINT32_MAX;

	/* Same op, so only a write's sync flag can make the classes differ. */
	if (elv_rq_end(a) != b->sector || a->op != b->op || len > max ||
	    !elv_rq_mergeable(a) || !elv_rq_mergeable(b) ||
	    (a->op != ELV_OP_READ && ((a->flags ^ b->flags) & ELV_RQ_SYNC)))
		return 0;
	/* Same own priority and issuer: same effective priority, without resolving it. */
	if ((a->ioprio != b->ioprio || a->stream != b->stream) &&
	    elv_rq_prio(a) != elv_rq_prio(b))
		return 0;
	return !q->merge_veto || elv_merge_allowed(q, a, b, kind);
}

/* A queued request that @b (other than itself) may be joined onto: one ending at @b's start. */
static struct elv_request *elv_find_back(struct elv_queue *q, const struct elv_request *b,
					 struct elv_request *c, enum elv_merge_kind kind)
{
	for (; c; c = c->hlink.next)
		if (c != b && elv_can_merge(q, c, b, kind))
			return c;
	return NULL;
}

/*
 * Join @gone onto @keep, which it follows on disk (BACK, REQ) or precedes (FRONT); @gone
 * leaves the library before the host's callback runs, and @keep still shows its old extent
 * to the callback. Then @keep grows and is re-keyed in the hash, and the policy is told.
 */
static ELV_SPEED_INLINE void elv_join(struct elv_queue *q, struct elv_request *keep,
				       struct elv_request *gone, enum elv_merge_kind kind)
{
	const struct elv_policy *p = q->policy;
	uint64_t sector = gone->sector;
	uint32_t n = gone->nr_sectors;

#if !defined(ELV_NO_REQ_MERGE)
	if (kind == ELV_MERGE_REQ) {
		/* The policy inherits @gone's place in time while it is still queued. */
		if (p->merged)
			p->merged(q, keep, kind, gone);
		elv_hash_del(&q->hash, gone);
		p->remove(q, gone);
		q->nr_queued--;
	}
#endif
	if (kind == ELV_MERGE_BACK)
		ELV_STAT_ADD(q, merged_back, 1);
	else if (kind == ELV_MERGE_FRONT)
		ELV_STAT_ADD(q, merged_front, 1);
	else
		ELV_STAT_ADD(q, merged_req, 1);
	elv_trace(q, ELV_TRACE_MERGE, keep, gone, (uint64_t)kind, q->now);
	elv_rq_release(q, gone);
	if (q->cfg.merge)
		ELV_CALLBACK(q, q->cfg.merge(q->cfg.ctx, keep, gone, kind));
	if (kind == ELV_MERGE_FRONT) {
		/* The end is unchanged: the hash entry stays, only the start filter moves. */
		elv_hash_start_dec(&q->hash, keep->sector);
		keep->sector = sector;
		keep->nr_sectors += n;
		elv_hash_start_inc(&q->hash, sector);
	} else {
		elv_hash_del(&q->hash, keep);
		keep->nr_sectors += n;
		elv_hash_add(&q->hash, keep);
	}
	if (kind != ELV_MERGE_REQ && p->merged)
		p->merged(q, keep, kind, NULL);
}

/*
 * @rq absorbed a new request at its end (BACK) or start (FRONT): it may now touch a queued
 * neighbour on that side; join the two if the rules allow.
 */
static void elv_merge_neighbour(struct elv_queue *q, struct elv_request *rq,
				enum elv_merge_kind grew)
{
#if defined(ELV_NO_REQ_MERGE)
	(void)q;
	(void)rq;
	(void)grew;
#else
	struct elv_request *c;

	if (grew == ELV_MERGE_BACK) {
		c = elv_policy_find_next(q, rq);
		if (c && c != rq && elv_can_merge(q, rq, c, ELV_MERGE_REQ))
			elv_join(q, rq, c, ELV_MERGE_REQ);
	} else {
		c = elv_find_back(q, rq, elv_hash_find(&q->hash, rq->sector), ELV_MERGE_REQ);
		if (c)
			elv_join(q, c, rq, ELV_MERGE_REQ);
	}
#endif
}

/* The back-merge candidate chain starting at @c (from the hash): merge @rq if any allows. */
int elv_merge_back_from(struct elv_queue *q, struct elv_request *c, struct elv_request *rq)
{
	c = elv_find_back(q, rq, c, ELV_MERGE_BACK);
	if (!c)
		return 0;
	elv_join(q, c, rq, ELV_MERGE_BACK);
	elv_merge_neighbour(q, c, ELV_MERGE_BACK);
	return 1;
}

/*
 * A stage releasing @rq joins it onto the end of the queued @c alone, if the rules allow. No
 * neighbour is looked for: the stage merges at a zone's write pointer, past which nothing
 * is queued (and a second caller would stop elv_merge_neighbour() being inlined).
 */
int elv_merge_back_into(struct elv_queue *q, struct elv_request *c, struct elv_request *rq)
{
	if (c == rq || !elv_can_merge(q, c, rq, ELV_MERGE_BACK))
		return 0;
	elv_join(q, c, rq, ELV_MERGE_BACK);
	return 1;
}

/* @c starts where @rq ends: merge @rq in front of it if the rules allow. */
int elv_merge_front_into(struct elv_queue *q, struct elv_request *c, struct elv_request *rq)
{
	if (c == rq || !elv_can_merge(q, rq, c, ELV_MERGE_FRONT))
		return 0;
	elv_join(q, c, rq, ELV_MERGE_FRONT);
	elv_merge_neighbour(q, c, ELV_MERGE_FRONT);
	return 1;
}
