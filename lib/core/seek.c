/**
 * @file seek.c
 * @brief The seek choice between two candidate requests, for callers that hold NULLs or
 * cannot inline: the rule itself is elv_seek_pick() in policy.h, shared with the policies.
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
