/*
 * Back-merge hash: queued requests keyed by end sector, so a new request starting at S finds
 * the request it can extend in O(1). Buckets live in the queue's memory and are sized from the
 * expected queue depth, which keeps chains short at any depth.
 */
#include "elv_internal.h"

#define ELV_HASH_MIN_BUCKETS 64u

static uint32_t elv_hash_slot(const struct elv_hash *h, uint64_t end)
{
	/* 4 KiB granularity, then a multiplicative mix of both halves (no 64-bit multiply). */
	uint64_t k = end >> 3;
	uint32_t x = (uint32_t)k ^ (uint32_t)(k >> 32);

	x *= 0x9E3779B1u;
	return (x ^ (x >> 16)) & h->mask;
}

uint32_t elv_hash_buckets_for(uint32_t nr_requests)
{
	uint32_t n = ELV_HASH_MIN_BUCKETS;

	while (n < nr_requests && n < (1u << 30))
		n <<= 1;
	return n;
}

void elv_hash_init(struct elv_hash *h, struct elv_request **buckets, uint32_t nr)
{
	uint32_t i;

	h->buckets = buckets;
	h->mask = nr - 1;
	for (i = 0; i < nr; i++)
		buckets[i] = NULL;
}

void elv_hash_add(struct elv_hash *h, struct elv_request *rq)
{
	struct elv_request **b = &h->buckets[elv_hash_slot(h, elv_rq_end(rq))];

	rq->hnext = *b;
	*b = rq;
}

void elv_hash_del(struct elv_hash *h, struct elv_request *rq)
{
	struct elv_request **p = &h->buckets[elv_hash_slot(h, elv_rq_end(rq))];

	while (*p && *p != rq)
		p = &(*p)->hnext;
	if (*p)
		*p = rq->hnext;
	rq->hnext = NULL;
}

struct elv_request *elv_hash_find(const struct elv_hash *h, uint64_t end)
{
	struct elv_request *rq = h->buckets[elv_hash_slot(h, end)];

	while (rq && elv_rq_end(rq) != end)
		rq = rq->hnext;
	return rq;
}

/* Test hook for elv_queue_check(): is rq on the chain its end sector maps to? */
int elv_hash_contains(const struct elv_hash *h, const struct elv_request *rq)
{
	const struct elv_request *c = h->buckets[elv_hash_slot(h, elv_rq_end(rq))];

	while (c && c != rq)
		c = c->hnext;
	return c != NULL;
}
