/**
 * @file group.c
 * @brief Groups of streams and weights: registration, membership, weight changes, and the
 * policy hooks that tell a policy about them.
 *
 * A group is one level below the root, like a cgroup's io.weight. The core only keeps the
 * bookkeeping (which queue, how many streams, the weights); what a weight means is the
 * policy's business, told through its group_init, group_exit and reweight hooks. Policies
 * built against an older struct elv_policy never see the hooks (struct_size says so).
 */
#include <string.h>

#include "elv_internal.h"

/* The hooks are at the end of struct elv_policy: reach them only if the policy has them. */
#define ELV_HOOK(p, h) \
	((p)->struct_size >= offsetof(struct elv_policy, h) + sizeof((p)->h) ? (p)->h : NULL)

#if !defined(ELV_NO_STREAMS) || !defined(ELV_NO_CHECK)
static int elv_group_of(const struct elv_queue *q, const struct elv_group *g)
{
	return (g->flags & ELV_GROUP_REGISTERED) && g->q == q;
}
#endif

static void elv_group_hook_init(struct elv_queue *q, struct elv_group *g, uint64_t now)
{
	void (*fn)(struct elv_queue *, struct elv_group *, uint64_t) =
		ELV_HOOK(q->policy, group_init);

	memset(&g->priv, 0, sizeof(g->priv));
	if (fn)
		fn(q, g, now);
}

/* Built with ELV_NO_STREAMS, the calls below are stream.c's ELV_ENOSYS refusals. */
#if !defined(ELV_NO_STREAMS)
/* The argument check of every call on a registered group, as elv_stream_err() for streams. */
static int elv_group_err(const struct elv_queue *q, const struct elv_group *g)
{
	int err = elv_gate_err(q);

	if (err)
		return err;
	return g && elv_group_of(q, g) ? 0 : ELV_EINVAL;
}

static void elv_reweight(struct elv_queue *q, struct elv_stream *s, const struct elv_group *old)
{
	void (*fn)(struct elv_queue *, struct elv_stream *, const struct elv_group *) =
		ELV_HOOK(q->policy, reweight);

	if (fn)
		fn(q, s, old);
}

int elv_group_init(struct elv_queue *q, struct elv_group *g, uint64_t now)
{
	int err = elv_gate_err(q);

	if (err)
		return err;
	if (!g)
		return ELV_EINVAL;
	if (g->flags & ELV_GROUP_REGISTERED)
		return ELV_EBUSY; /* registered here or with another queue */
	if (g->weight > ELV_GROUP_WEIGHT_MAX)
		return ELV_ERANGE;
	now = elv_queue_clock(q, now);
	if (!g->weight)
		g->weight = ELV_GROUP_WEIGHT_DEFAULT;
	g->flags = ELV_GROUP_REGISTERED;
	g->pad = 0;
	g->nr_streams = 0;
	g->q = q;
	g->qos = NULL;
	elv_list_add_tail(&q->groups, &g->link);
	elv_group_hook_init(q, g, now);
	return 0;
}

int elv_group_exit(struct elv_queue *q, struct elv_group *g, uint64_t now)
{
	void (*fn)(struct elv_queue *, struct elv_group *, uint64_t);
	int err = elv_group_err(q, g);

	if (err)
		return err;
	if (g->nr_streams)
		return ELV_EBUSY;
	/* Its QoS client goes with it (no stream left, so it holds no request); given the
	 * host's time, which the detach turns into queue time itself. */
	if (g->qos)
		(void)elv_qos_group_detach(q, g, now);
	now = elv_queue_clock(q, now);
	fn = ELV_HOOK(q->policy, group_exit);
	if (fn)
		fn(q, g, now);
	elv_list_del(&g->link);
	g->flags = 0;
	g->q = NULL;
	return 0;
}

int elv_group_set_weight(struct elv_queue *q, struct elv_group *g, uint16_t weight)
{
	int err = elv_group_err(q, g);

	if (err)
		return err;
	if (weight == 0 || weight > ELV_GROUP_WEIGHT_MAX)
		return ELV_ERANGE;
	g->weight = weight;
	elv_reweight(q, NULL, g);
	return 0;
}

int elv_stream_set_weight(struct elv_queue *q, struct elv_stream *s, uint16_t weight)
{
	int err = elv_stream_err(q, s);

	if (err)
		return err;
	if (weight > ELV_WEIGHT_MAX)
		return ELV_ERANGE;
	s->weight = weight;
	elv_reweight(q, s, s->group);
	return 0;
}

int elv_stream_set_group(struct elv_queue *q, struct elv_stream *s, struct elv_group *g)
{
	struct elv_group *old;
	int err = elv_stream_err(q, s);

	if (err)
		return err;
	if (g && !elv_group_of(q, g))
		return ELV_EINVAL;
	if (s->group == g)
		return 0;
	/* Requests in the policy were counted in the old group's share: let them finish. */
	if (s->nr_rq)
		return ELV_EBUSY;
	old = s->group;
	if (old)
		old->nr_streams--;
	if (g)
		g->nr_streams++;
	s->group = g;
	elv_reweight(q, s, old);
	return 0;
}
#endif

struct elv_group *elv_queue_group_next(const struct elv_queue *q, const struct elv_group *g)
{
	const struct elv_list *l;

	if (q == NULL || (g && g->q != q))
		return NULL;
	l = g ? g->link.next : q->groups.next;
	return l == &q->groups ? NULL : elv_container_of(l, struct elv_group, link);
}

/* ---- for the rest of the core -------------------------------------------------------- */

void elv_group_stream_gone(struct elv_stream *s)
{
	if (s->group)
		s->group->nr_streams--;
	s->group = NULL;
}

void elv_groups_exit(struct elv_queue *q, uint64_t now)
{
	void (*fn)(struct elv_queue *, struct elv_group *, uint64_t) =
		ELV_HOOK(q->policy, group_exit);
	struct elv_list *l;

	for (l = q->groups.next; fn && l != &q->groups; l = l->next)
		fn(q, elv_container_of(l, struct elv_group, link), now);
}

void elv_groups_start(struct elv_queue *q, uint64_t now)
{
	struct elv_list *l;

	for (l = q->groups.next; l != &q->groups; l = l->next)
		elv_group_hook_init(q, elv_container_of(l, struct elv_group, link), now);
}

#if !defined(ELV_NO_CHECK)
/* Every group is registered here with a weight in range, and the streams' memberships add
 * up to the groups' counts. O(groups * streams) at worst: a check, not a hot path. */
int elv_groups_check(const struct elv_queue *q)
{
	const struct elv_list *l, *m;

	for (l = q->groups.next; l != &q->groups; l = l->next) {
		const struct elv_group *g = elv_container_of(l, struct elv_group, link);
		uint32_t n = 0;

		if (!elv_group_of(q, g) || g->weight == 0 || g->weight > ELV_GROUP_WEIGHT_MAX)
			return ELV_EINVAL;
		for (m = q->streams.next; m != &q->streams; m = m->next)
			n += elv_container_of(m, struct elv_stream, link)->group == g;
		if (n != g->nr_streams)
			return ELV_EINVAL;
	}
	for (m = q->streams.next; m != &q->streams; m = m->next) {
		const struct elv_stream *s = elv_container_of(m, struct elv_stream, link);

		if (s->weight > ELV_WEIGHT_MAX || (s->group && !elv_group_of(q, s->group)))
			return ELV_EINVAL;
	}
	return 0;
}
#endif
