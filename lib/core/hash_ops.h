/*
 * The per-request hash operations. Included by elv_internal.h as static inline functions
 * (every add and dispatch uses them), or, when optimising for size, once by hash.c as plain
 * functions that every caller shares.
 *
 * Every walk here is bounded by ELV_HASH_CHAIN_MAX, whatever the queue length: no chain is
 * ever longer (see elv_hash_insert_k()).
 */
#ifndef ELV_HASH_OPS_H
#define ELV_HASH_OPS_H

/* The start-filter counter of the granule whose key is @key. */
ELV_HASH_FN uint8_t *elv_hash_start_k(const struct elv_hash *h, uint32_t key)
{
	return &h->starts[key >> (h->shift - ELV_HASH_STARTS_SHIFT)];
}

/* The start-filter counter of the granule of @sector. */
ELV_HASH_FN uint8_t *elv_hash_start(const struct elv_hash *h, uint64_t sector)
{
	return elv_hash_start_k(h, elv_hash_key(sector));
}

ELV_HASH_FN void elv_hash_start_inc(struct elv_hash *h, uint64_t sector)
{
	uint8_t *c;

	if (!h->starts)
		return;
	c = elv_hash_start(h, sector);
	if (*c != UINT8_MAX)
		(*c)++;
}

ELV_HASH_FN void elv_hash_start_dec(struct elv_hash *h, uint64_t sector)
{
	uint8_t *c;

	if (!h->starts)
		return;
	c = elv_hash_start(h, sector);
	if (*c != UINT8_MAX)
		(*c)--;
}

/* 0 when no hashed request starts at @sector (a front merge there cannot happen). */
ELV_HASH_FN int elv_hash_may_start(const struct elv_hash *h, uint64_t sector)
{
	return !h->starts || *elv_hash_start(h, sector) != 0;
}

/*
 * Hash @rq whose start and end granules have the keys @ks and @ke, at the head of its chain.
 * A chain that grows past ELV_HASH_CHAIN_MAX loses its tail, the request hashed there the
 * longest ago. The walk that finds it is the bound itself, and while chains are as short as
 * nr_requests makes them it ends at once.
 */
ELV_HASH_FN void elv_hash_insert_k(struct elv_hash *h, struct elv_request *rq, uint32_t ks,
				   uint32_t ke)
{
	struct elv_request **b = &h->buckets[ke >> h->shift];
	struct elv_request *c = *b;
	uint32_t left = ELV_HASH_CHAIN_MAX - 2; /* links from the old head to the last kept */
	uint8_t *s;

	rq->hlink.next = c;
	*b = rq;
	if (c) {
		for (; c->hlink.next; c = c->hlink.next) {
			if (left-- == 0) {
				elv_hash_evict(h, c);
				break;
			}
		}
	}
	if (!h->starts)
		return;
	s = elv_hash_start_k(h, ks);
	if (*s != UINT8_MAX)
		(*s)++;
}

ELV_HASH_FN void elv_hash_add(struct elv_hash *h, struct elv_request *rq)
{
	elv_hash_insert_k(h, rq, elv_hash_key(rq->sector), elv_hash_key(elv_rq_end(rq)));
}

/*
 * Take @rq (queued and mergeable: chained, or evicted from its chain) out of the hash. Far past
 * nr_requests nearly every request is evicted, so that case is tested first and walks nothing.
 */
ELV_HASH_FN void elv_hash_del(struct elv_hash *h, struct elv_request *rq)
{
	struct elv_request **p;

	if (elv_hash_is_evicted(rq)) {
		elv_hash_forget(h, rq);
		return;
	}
	p = elv_hash_bucket(h, elv_rq_end(rq));
	while (*p && *p != rq)
		p = &(*p)->hlink.next;
	if (*p) {
		*p = rq->hlink.next;
		elv_hash_start_dec(h, rq->sector);
	}
}

/* The first hashed request that ends at @end, whose granule has the key @key. */
ELV_HASH_FN struct elv_request *elv_hash_find_k(const struct elv_hash *h, uint64_t end,
						uint32_t key)
{
	struct elv_request *rq = h->buckets[key >> h->shift];

	while (rq && elv_rq_end(rq) != end)
		rq = rq->hlink.next;
	return rq;
}

ELV_HASH_FN struct elv_request *elv_hash_find(const struct elv_hash *h, uint64_t end)
{
	return elv_hash_find_k(h, end, elv_hash_key(end));
}

#endif /* ELV_HASH_OPS_H */
