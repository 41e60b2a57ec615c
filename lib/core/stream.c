/**
 * @file stream.c
 * @brief Streams: registration with a queue, retirement, and priority changes.
 *
 * A stream is the host's handle for one submitter (a process, a cgroup member, a tenant).
 * The core keeps it on the queue's list and tells the policy through its stream_init and
 * stream_exit hooks; weights and group membership are in group.c.
 */
#include <string.h>

#include "elv_internal.h"

int elv_stream_init(struct elv_queue *q, struct elv_stream *s, uint64_t now)
{
#if defined(ELV_NO_STREAMS)
	(void)q;
	(void)s;
	(void)now;
	return ELV_ENOSYS;
#else
	int err = elv_gate_err(q);

	if (err)
		return err;
	if (!s || !elv_prio_ok(s->ioprio))
		return ELV_EINVAL;
	if (s->flags & ELV_STREAM_REGISTERED)
		return ELV_EBUSY; /* registered here or with another queue */
	if (s->weight > ELV_WEIGHT_MAX)
		return ELV_ERANGE;
	now = elv_queue_clock(q, now);
	s->flags = ELV_STREAM_REGISTERED;
	s->nr_rq = 0;
	s->q = q;
	s->group = NULL;
	s->qos = NULL;
	memset(&s->priv, 0, sizeof(s->priv));
	elv_list_add_tail(&q->streams, &s->link);
	if (q->policy->stream_init)
		q->policy->stream_init(q, s, now);
	return 0;
#endif
}

int elv_stream_exit(struct elv_queue *q, struct elv_stream *s, uint64_t now)
{
#if defined(ELV_NO_STREAMS)
	(void)q;
	(void)s;
	(void)now;
	return ELV_ENOSYS;
#else
	int err = elv_gate_err(q);

	if (err)
		return err;
	if (!s || !elv_stream_of(q, s))
		return ELV_EINVAL;
	if (s->nr_rq)
		return ELV_EBUSY;
	/* Its QoS client goes with it, as qos.h says (the stage holds none of its requests);
	 * given the host's time, which the detach turns into queue time itself. */
	if (s->qos)
		(void)elv_qos_stream_detach(q, s, now);
	now = elv_queue_clock(q, now);
	if (q->policy->stream_exit)
		q->policy->stream_exit(q, s, now);
	elv_group_stream_gone(s);
	elv_list_del(&s->link);
	s->flags = 0;
	s->q = NULL;
	return 0;
#endif
}

int elv_stream_set_prio(struct elv_queue *q, struct elv_stream *s, uint8_t ioprio)
{
#if defined(ELV_NO_STREAMS)
	(void)q;
	(void)s;
	(void)ioprio;
	return ELV_ENOSYS;
#else
	int err = elv_gate_err(q);

	if (err)
		return err;
	if (!s || !elv_stream_of(q, s) || !elv_prio_ok(ioprio))
		return ELV_EINVAL;
	s->ioprio = ioprio;
	return 0;
#endif
}
