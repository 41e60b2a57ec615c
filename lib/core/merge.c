/*
 * Merge rules and the merge step of elv_add(): back merges through the end-sector hash, front
 * merges through the policy's start-sector lookup, then a request-to-request merge when the
 * grown request became contiguous with a queued neighbour. The host carries out every merge
 * of payloads through its callback and is told which request was absorbed.
 */
#include "elv_internal.h"

/* May @b (following @a on disk) be joined onto @a? @b may be a new request not yet queued. */
static int elv_can_merge(const struct elv_queue *q, const struct elv_request *a,
			 const struct elv_request *b, enum elv_merge_kind kind)
{
	uint32_t max = q->cfg.dev.max_sectors;
	uint64_t len = (uint64_t)a->nr_sectors + b->nr_sectors;

	if (!elv_rq_mergeable(a) || !elv_rq_mergeable(b))
		return 0;
	if (a->op != b->op || elv_rq_is_sync(a) != elv_rq_is_sync(b))
		return 0;
	if (elv_rq_end(a) != b->sector || len > UINT32_MAX || (max && len > max))
		return 0;
	if (elv_rq_prio(a) != elv_rq_prio(b))
		return 0;
	if (q->policy->allow_merge && !q->policy->allow_merge(q, a, b))
		return 0;
	return !q->cfg.allow_merge || q->cfg.allow_merge(q->cfg.ctx, a, b, kind);
}

/* A queued request whose end is @end and onto which @b may be joined. */
static struct elv_request *elv_find_back(struct elv_queue *q, const struct elv_request *b,
					 enum elv_merge_kind kind)
{
	struct elv_request *c = elv_hash_find(&q->hash, b->sector);

	for (; c; c = c->hlink.next)
		if (c != b && elv_rq_end(c) == b->sector && elv_can_merge(q, c, b, kind))
			return c;
	return NULL;
}

/* A queued request starting at end(@a) that may be joined onto @a. */
static struct elv_request *elv_find_front(struct elv_queue *q, const struct elv_request *a,
					  enum elv_merge_kind kind)
{
	struct elv_request *c = elv_policy_find_next(q, a);

	return c && c != a && elv_can_merge(q, a, c, kind) ? c : NULL;
}

static void elv_count_merge(struct elv_queue *q, struct elv_request *into,
			    struct elv_request *absorbed, enum elv_merge_kind kind, uint64_t now)
{
	if (kind == ELV_MERGE_BACK)
		q->stats.merged_back++;
	else if (kind == ELV_MERGE_FRONT)
		q->stats.merged_front++;
	else
		q->stats.merged_req++;
	elv_trace(q, ELV_TRACE_MERGE, into, absorbed, (uint64_t)kind, now);
}

/*
 * Hand the absorbed request back and let the host join the payloads. The library has finished
 * with @absorbed before the callback runs (the host may reuse or free it from then on), and
 * @into still has its old extent, so the host sees both requests as they were.
 */
static void elv_give_back(struct elv_queue *q, struct elv_request *into,
			  struct elv_request *absorbed, enum elv_merge_kind kind)
{
	elv_rq_release(q, absorbed);
	if (q->cfg.merge)
		q->cfg.merge(q->cfg.ctx, into, absorbed, kind);
}

/* Join queued @b onto queued @a (contiguous); @b goes back to the host. */
static void elv_merge_requests(struct elv_queue *q, struct elv_request *a, struct elv_request *b,
			       uint64_t now)
{
	uint32_t n = b->nr_sectors;

	if (q->policy->merged)
		q->policy->merged(q, a, ELV_MERGE_REQ, b);
	elv_hash_del(&q->hash, b);
	q->policy->remove(q, b);
	q->nr_queued--;
	elv_count_merge(q, a, b, ELV_MERGE_REQ, now);
	elv_give_back(q, a, b, ELV_MERGE_REQ);
	elv_hash_del(&q->hash, a);
	a->nr_sectors += n;
	elv_hash_add(&q->hash, a);
}

static void elv_back_merge(struct elv_queue *q, struct elv_request *prev, struct elv_request *rq,
			   uint64_t now)
{
	struct elv_request *next;
	uint32_t n = rq->nr_sectors;

	elv_count_merge(q, prev, rq, ELV_MERGE_BACK, now);
	elv_give_back(q, prev, rq, ELV_MERGE_BACK);
	elv_hash_del(&q->hash, prev);
	prev->nr_sectors += n;
	elv_hash_add(&q->hash, prev);
	if (q->policy->merged)
		q->policy->merged(q, prev, ELV_MERGE_BACK, NULL);
	next = elv_find_front(q, prev, ELV_MERGE_REQ);
	if (next)
		elv_merge_requests(q, prev, next, now);
}

static void elv_front_merge(struct elv_queue *q, struct elv_request *next, struct elv_request *rq,
			    uint64_t now)
{
	struct elv_request *prev;
	uint64_t sector = rq->sector;
	uint32_t n = rq->nr_sectors;

	elv_count_merge(q, next, rq, ELV_MERGE_FRONT, now);
	elv_give_back(q, next, rq, ELV_MERGE_FRONT);
	elv_hash_start_dec(&q->hash, next->sector);
	next->sector = sector;
	next->nr_sectors += n; /* end unchanged: hash entry stays valid */
	elv_hash_start_inc(&q->hash, next->sector);
	if (q->policy->merged)
		q->policy->merged(q, next, ELV_MERGE_FRONT, NULL);
	prev = elv_find_back(q, next, ELV_MERGE_REQ);
	if (prev)
		elv_merge_requests(q, prev, next, now);
}

/* The back-merge candidate chain starting at @c (from the hash): merge @rq if any allows. */
int elv_merge_back_from(struct elv_queue *q, struct elv_request *c, struct elv_request *rq,
			uint64_t now)
{
	for (; c; c = c->hlink.next) {
		if (elv_rq_end(c) == rq->sector && elv_can_merge(q, c, rq, ELV_MERGE_BACK)) {
			elv_back_merge(q, c, rq, now);
			return 1;
		}
	}
	return 0;
}

/* @c starts where @rq ends: merge @rq in front of it if the rules allow. */
int elv_merge_front_into(struct elv_queue *q, struct elv_request *c, struct elv_request *rq,
			 uint64_t now)
{
	if (c == rq || !elv_can_merge(q, rq, c, ELV_MERGE_FRONT))
		return 0;
	elv_front_merge(q, c, rq, now);
	return 1;
}
