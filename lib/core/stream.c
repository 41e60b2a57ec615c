/**
 * @file stream.c
 * @brief Streams: registration with a queue, retirement, and priority changes.
 *
 * A stream is the host's handle for one submitter (a process, a cgroup member, a tenant).
 * The core keeps it on the queue's list and tells the policy through its stream_init and
 * stream_exit hooks; weights and group membership are in group.c.
 *
 * Built with ELV_NO_STREAMS, every stream and group call refuses with ELV_ENOSYS through
 * ELV_NOSYS_CALL3 here, whatever its arguments (checked by tests/embedded/options.c), and
 * group.c keeps only what the rest of the core calls.
 */
#include <string.h>

#include "elv_internal.h"

#if defined(ELV_NO_STREAMS)

ELV_NOSYS_CALL3(elv_stream_init, struct elv_queue *, struct elv_stream *, uint64_t)
ELV_NOSYS_CALL3(elv_stream_exit, struct elv_queue *, struct elv_stream *, uint64_t)
ELV_NOSYS_CALL3(elv_stream_set_prio, struct elv_queue *, struct elv_stream *, uint8_t)
ELV_NOSYS_CALL3(elv_stream_set_weight, struct elv_queue *, struct elv_stream *, uint16_t)
ELV_NOSYS_CALL3(elv_stream_set_group, struct elv_queue *, struct elv_stream *, struct elv_group *)
ELV_NOSYS_CALL3(elv_group_init, struct elv_queue *, struct elv_group *, uint64_t)
ELV_NOSYS_CALL3(elv_group_exit, struct elv_queue *, struct elv_group *, uint64_t)
ELV_NOSYS_CALL3(elv_group_set_weight, struct elv_queue *, struct elv_group *, uint16_t)

#else

int elv_stream_err(const struct elv_queue *q, const struct elv_stream *s)
{
	int err = elv_gate_err(q);

	if (err)
		return err;
	return s && elv_stream_of(q, s) ? 0 : ELV_EINVAL;
}

int elv_stream_init(struct elv_queue *q, struct elv_stream *s, uint64_t now)
{
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
}

int elv_stream_exit(struct elv_queue *q, struct elv_stream *s, uint64_t now)
{
	int err = elv_stream_err(q, s);

	if (err)
		return err;
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
}

int elv_stream_set_prio(struct elv_queue *q, struct elv_stream *s, uint8_t ioprio)
{
	int err = elv_stream_err(q, s);

	if (err)
		return err;
	if (!elv_prio_ok(ioprio))
		return ELV_EINVAL;
	s->ioprio = ioprio;
	return 0;
}

#endif
