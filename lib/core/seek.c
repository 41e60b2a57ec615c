/**
 * @file seek.c
 * @brief The seek choice between two candidate requests, for callers that hold NULLs or
 * cannot inline: the rule itself is elv_seek_pick() in policy.h, shared with the policies.
 * And the host's positioning-time estimate, for the policies that schedule by it.
 */
#include "elv_internal.h"

struct elv_request *elv_seek_choose(const struct elv_request *r1, const struct elv_request *r2,
				    uint64_t last, uint64_t back_max, uint32_t back_penalty)
{
	/* The contract hands back one of the caller's own requests: constness is theirs. */
	struct elv_request *a = (struct elv_request *)(uintptr_t)r1;
	struct elv_request *b = (struct elv_request *)(uintptr_t)r2;

	if (a == NULL || a == b)
		return b;
	if (b == NULL)
		return a;
	return elv_seek_pick(a, b, last, back_max, back_penalty);
}

int elv_position_time(struct elv_queue *q, const struct elv_request *rq, uint64_t now,
		      uint64_t *ns)
{
	uint64_t t = 0;

	if (!q || !rq || !ns)
		return ELV_EINVAL;
	if (!q->cfg.position_time) /* no model of the head to ask: sptf falls back on seeks */
		return ELV_ENOSYS;
	ELV_CALLBACK(q, t = q->cfg.position_time(q->cfg.ctx, rq, now));
	*ns = t;
	return 0;
}
