/**
 * @file seek.c
 * @brief Seek scoring between two candidate requests (the AS and CFQ rule).
 */
#include "elv_internal.h"

/* Optimising for size, one copy of the cost for both candidates; for speed, inline. */
#if defined(__OPTIMIZE_SIZE__) && defined(__GNUC__)
#define SEEK_COST_FN static __attribute__((noinline))
#else
#define SEEK_COST_FN static ELV_SPEED_INLINE
#endif

/*
 * How far @sector is from head @last: the forward distance, or a backward one of at most
 * @back_max sectors times @back_penalty (saturating rather than wrapping past 64 bits).
 * Farther back is a wrap: returns 1, with the sector itself as the rank (lower first).
 */
SEEK_COST_FN int seek_cost(uint64_t sector, uint64_t last, uint64_t back_max, uint32_t back_penalty,
		     uint64_t *cost)
{
	uint64_t back = last - sector;

	*cost = sector - last;
	if (sector >= last)
		return 0;
	if (back > back_max) {
		*cost = sector;
		return 1;
	}
	*cost = back_penalty != 0 && back > UINT64_MAX / back_penalty ? UINT64_MAX
								    : back * back_penalty;
	return 0;
}

struct elv_request *elv_seek_choose(const struct elv_request *r1, const struct elv_request *r2,
				    uint64_t last, uint64_t back_max, uint32_t back_penalty)
{
	const struct elv_request *win = r1;
	uint64_t c1, c2;
	int w1, w2;

	if (r1 == NULL || r1 == r2)
		win = r2;
	else if (r2 != NULL) {
		w1 = seek_cost(r1->sector, last, back_max, back_penalty, &c1);
		w2 = seek_cost(r2->sector, last, back_max, back_penalty, &c2);
		/* A wrap loses to any other; then the lower cost (among wraps the lower sector)
		 * wins; equal costs keep moving forward, full ties keep r1. */
		if (w1 != w2 ? w1 : c1 != c2 ? c2 < c1 : r2->sector > r1->sector)
			win = r2;
	}
	/* The contract hands back one of the caller's own requests: constness is theirs. */
	return (struct elv_request *)(uintptr_t)win;
}
