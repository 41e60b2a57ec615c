/*
 * Back-merge hash: queued requests keyed by end sector, so a new request starting at S finds
 * the request it can extend in O(1). Buckets live in the queue's memory and are sized from the
 * expected queue depth, which keeps chains short at any depth.
 */
#include <string.h>

#include "elv_internal.h"

#if defined(__OPTIMIZE_SIZE__)
#include "hash_ops.h"
#endif

#define ELV_HASH_MIN_BUCKETS 64u

uint32_t elv_hash_buckets_for(uint32_t nr_requests)
{
	uint32_t n = ELV_HASH_MIN_BUCKETS;

	while (n < nr_requests && n < (1u << 30))
		n <<= 1;
	return n;
}

void elv_hash_init(struct elv_hash *h, struct elv_request **buckets, uint8_t *starts,
		   uint32_t nr)
{
	uint32_t i;

	h->buckets = buckets;
	h->starts = NULL;
	h->starts_mem = starts;
	h->mask = nr - 1;
	h->shift = 32;
	while (nr > 1) {
		nr >>= 1;
		h->shift--;
	}
	for (i = 0; i <= h->mask; i++)
		buckets[i] = NULL;
}

/* Keep the start filter or not; only while the hash is empty, so zeroed counters are exact. */
void elv_hash_use_starts(struct elv_hash *h, int on)
{
	h->starts = on ? h->starts_mem : NULL;
	if (on)
		memset(h->starts, 0, (size_t)(h->mask + 1) * ELV_HASH_STARTS);
}

/* Test hook for elv_queue_check(): is rq on the chain its end sector maps to? */
int elv_hash_contains(const struct elv_hash *h, const struct elv_request *rq)
{
	const struct elv_request *c = *elv_hash_bucket(h, elv_rq_end(rq));

	while (c && c != rq)
		c = c->hlink.next;
	return c != NULL;
}
