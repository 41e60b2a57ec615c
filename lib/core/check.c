/*
 * elv_queue_check(): walks every structure the core owns and asks the policy to check its
 * own. Meant for tests and debug builds: it is O(n + hash buckets).
 */
#include "elv_internal.h"

#if defined(ELV_NO_CHECK)
int elv_queue_check(const struct elv_queue *q)
{
	return q && q->gate != ELV_GATE_EXITED ? ELV_ENOSYS : ELV_EINVAL;
}
#else

static int elv_check_list(const struct elv_list *h, uint8_t state, uint32_t *n)
{
	const struct elv_list *l;

	*n = 0;
	for (l = h->next; l != h; l = l->next) {
		if (l->next->prev != l || l->prev->next != l)
			return ELV_EINVAL;
		if (elv_list_rq(l)->state != state)
			return ELV_EINVAL;
		(*n)++;
	}
	return 0;
}

static int elv_check_held(const struct elv_queue *q)
{
	const struct elv_list *l;
	uint32_t n, barriers = 0;
	const struct elv_request *first = elv_list_first_rq(&q->held);

	if (elv_check_list(&q->held, ELV_RQ_HELD, &n) || n != q->nr_held)
		return ELV_EINVAL;
	/* The held list exists only because of a barrier at its head. */
	if (first && !(first->flags & ELV_RQ_BARRIER))
		return ELV_EINVAL;
	for (l = q->held.next; l != &q->held; l = l->next)
		barriers += (elv_list_rq(l)->flags & ELV_RQ_BARRIER) ? 1u : 0u;
	return barriers == q->nr_barriers ? 0 : ELV_EINVAL;
}

static int elv_check_hash(const struct elv_queue *q)
{
#if defined(ELV_NO_MERGE)
	(void)q; /* no hash: nothing is mergeable */
	return 0;
#else
	return elv_hash_check(&q->hash, q->nr_queued);
#endif
}

static int elv_check_streams(const struct elv_queue *q)
{
	const struct elv_list *l;

	for (l = q->streams.next; l != &q->streams; l = l->next) {
		const struct elv_stream *s = elv_container_of(l, struct elv_stream, link);

		if (!(s->flags & ELV_STREAM_REGISTERED) || s->q != q)
			return ELV_EINVAL;
	}
	return 0;
}

int elv_queue_check(const struct elv_queue *q)
{
	uint32_t n;

	if (!q || !q->policy || q->gate == ELV_GATE_EXITED)
		return ELV_EINVAL;
	/* Inside a callback the queue may be between two steps of one call. */
	if (q->gate > ELV_GATE_STAGED)
		return ELV_EBUSY;
	/* Time never runs back: an idle period cannot have begun after the latest time seen. */
	if (q->idling && (!q->clock_set || elv_time_after(q->idle_since, q->now)))
		return ELV_EINVAL;
	if (elv_check_list(&q->requeue, ELV_RQ_REQUEUED, &n) || n != q->nr_requeued)
		return ELV_EINVAL;
	if (elv_check_held(q) || elv_check_hash(q) || elv_check_streams(q) || elv_groups_check(q))
		return ELV_EINVAL;
	if ((q->gate != ELV_GATE_OPEN) != (q->stages != 0) || (q->stages && q->stage_vt->check(q)))
		return ELV_EINVAL;
	/* The plain dispatch and complete would neither release nor tell a stage anything. */
	if (q->gate == ELV_GATE_STAGED_ADD && elv_stage_gate(q) != ELV_GATE_STAGED_ADD)
		return ELV_EINVAL;
#if !defined(ELV_NO_STATS)
	if (q->stats.completed + q->nr_in_flight != q->stats.dispatched[0] +
							 q->stats.dispatched[1] -
							 q->stats.requeued)
		return ELV_EINVAL;
#endif
	return q->policy->check ? q->policy->check(q) : 0;
}
#endif /* ELV_NO_CHECK */
