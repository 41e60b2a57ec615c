/*
 * Back-merge hash: queued requests keyed by end sector, so a new request starting at S finds
 * the request it can extend in O(1). Buckets live in the queue's memory and are sized from
 * nr_requests; chains are capped at ELV_HASH_CHAIN_MAX, so a queue that grows far past
 * nr_requests costs a bounded walk per operation (and may miss some back merges) rather than a
 * walk that grows with the queue.
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
	h->nr_evicted = 0;
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

/* What an evicted request's link holds: this hash's address, tagged (never a chain link). */
static uintptr_t elv_hash_tag(const struct elv_hash *h)
{
	return (uintptr_t)h | 1u;
}

/*
 * The chain through @last is one longer than ELV_HASH_CHAIN_MAX: its tail, the request hashed
 * there the longest ago, leaves the chain. Its start stays counted in the filter, since the
 * policy's front-merge lookup still finds it.
 */
void elv_hash_evict(struct elv_hash *h, struct elv_request *last)
{
	struct elv_request *gone = last->hlink.next;

	ELV_ASSERT(gone && !gone->hlink.next);
	last->hlink.next = NULL;
	gone->hlink.word = elv_hash_tag(h);
	h->nr_evicted++;
}

/* An evicted request leaves the queue or is about to be hashed again: no chain to walk. */
void elv_hash_forget(struct elv_hash *h, struct elv_request *rq)
{
	ELV_ASSERT(rq->hlink.word == elv_hash_tag(h) && h->nr_evicted);
	rq->hlink.next = NULL;
	h->nr_evicted--;
	elv_hash_start_dec(h, rq->sector);
}

/* Is @rq queued in this hash: on the chain its end sector maps to, or evicted from it? */
int elv_hash_contains(const struct elv_hash *h, const struct elv_request *rq)
{
	const struct elv_request *c;

	if (elv_hash_is_evicted(rq))
		return rq->hlink.word == elv_hash_tag(h);
	for (c = *elv_hash_bucket(h, elv_rq_end(rq)); c && c != rq; c = c->hlink.next)
		;
	return c != NULL;
}

#if !defined(ELV_NO_CHECK)
/*
 * elv_queue_check() of the hash: every chained request is queued, mergeable and on the chain
 * its end maps to, no chain is longer than the cap, the filter never denies a chained start,
 * and unless a counter stuck at its maximum the counters add up to the chained and evicted
 * requests. O(buckets + chained requests).
 */
int elv_hash_check(const struct elv_hash *h, uint32_t nr_queued)
{
	uint32_t i, len, n = 0, counted = 0, sticky = 0;
	const struct elv_request *rq;

	for (i = 0; i <= h->mask; i++) {
		len = 0;
		for (rq = h->buckets[i]; rq; rq = rq->hlink.next) {
			if (rq->state != ELV_RQ_QUEUED || !elv_rq_mergeable(rq) ||
			    (elv_hash_key(elv_rq_end(rq)) >> h->shift) != i ||
			    ++len > ELV_HASH_CHAIN_MAX || ++n > nr_queued)
				return ELV_EINVAL;
			if (!elv_hash_may_start(h, rq->sector))
				return ELV_EINVAL;
		}
	}
	if (n + h->nr_evicted > nr_queued || n + h->nr_evicted < n)
		return ELV_EINVAL;
	for (i = 0; h->starts && i < (h->mask + 1) * ELV_HASH_STARTS; i++) {
		counted += h->starts[i];
		sticky |= h->starts[i] == UINT8_MAX;
	}
	return !h->starts || sticky || counted == n + h->nr_evicted ? 0 : ELV_EINVAL;
}
#endif /* ELV_NO_CHECK */
