/**
 * @file seek.c
 * @brief Seek scoring between two candidate requests (the AS and CFQ rule).
 */
#include "elv_internal.h"

/* Cost of reaching a request: @wrapped when it lies more than back_max behind the head. */
struct seek_cost {
	uint64_t cost;
	int wrapped;
};

static struct seek_cost seek_cost(uint64_t sector, uint64_t last, uint64_t back_max,
				  uint32_t back_penalty)
{
	struct seek_cost c = { 0, 0 };
	uint64_t back;

	if (sector >= last) {
		c.cost = sector - last;
		return c;
	}
	back = last - sector;
	if (back > back_max) {
		c.wrapped = 1;
		return c;
	}
	/* Saturate rather than wrap when back_max * back_penalty exceeds 64 bits. */
	if (back_penalty != 0 && back > UINT64_MAX / back_penalty)
		c.cost = UINT64_MAX;
	else
		c.cost = back * back_penalty;
	return c;
}

/* The contract hands back one of the caller's own requests, so constness is the caller's. */
static struct elv_request *seek_unconst(const struct elv_request *rq)
{
	return (struct elv_request *)(uintptr_t)rq;
}

struct elv_request *elv_seek_choose(const struct elv_request *r1, const struct elv_request *r2,
				    uint64_t last, uint64_t back_max, uint32_t back_penalty)
{
	struct seek_cost c1, c2;
	const struct elv_request *win;

	if (r1 == NULL || r1 == r2)
		return seek_unconst(r2);
	if (r2 == NULL)
		return seek_unconst(r1);

	c1 = seek_cost(r1->sector, last, back_max, back_penalty);
	c2 = seek_cost(r2->sector, last, back_max, back_penalty);

	if (c1.wrapped != c2.wrapped) {
		win = c1.wrapped ? r2 : r1;
	} else if (c1.wrapped) {
		/* One long seek back to the lower one, then sweep forward over the other. */
		win = r2->sector < r1->sector ? r2 : r1;
	} else if (c1.cost != c2.cost) {
		win = c2.cost < c1.cost ? r2 : r1;
	} else {
		/* Equal cost: keep moving forward. Full ties keep r1. */
		win = r2->sector > r1->sector ? r2 : r1;
	}
	return seek_unconst(win);
}
