/**
 * @file access.c
 * @brief What policy.h gives policies of the queue beyond its public head: the walks of the
 * requeue and stream lists and the idle start, all off the hot paths.
 */
#include "elv_internal.h"

uint32_t elv_queue_nr_requeued(const struct elv_queue *q)
{
	return q ? q->nr_requeued : 0;
}

struct elv_request *elv_queue_requeued_next(const struct elv_queue *q,
					    const struct elv_request *rq)
{
	const struct elv_list *l;

	if (q == NULL || (rq && (rq->state != ELV_RQ_REQUEUED || rq->hlink.owner != q)))
		return NULL;
	l = rq ? rq->fifo.next : q->requeue.next;
	return l == &q->requeue ? NULL : elv_list_rq(l);
}

struct elv_stream *elv_queue_stream_next(const struct elv_queue *q, const struct elv_stream *s)
{
	const struct elv_list *l;

	if (q == NULL || (s && s->q != q))
		return NULL;
	l = s ? s->link.next : q->streams.next;
	return l == &q->streams ? NULL : elv_container_of(l, struct elv_stream, link);
}

uint64_t elv_idle_since(const struct elv_queue *q)
{
	return q && q->idling ? q->idle_since : 0;
}
