/*
 * The per-request hash operations. Included by elv_internal.h as static inline functions
 * (every add and dispatch uses them), or, when optimising for size, once by hash.c as plain
 * functions that every caller shares.
 */
#ifndef ELV_HASH_OPS_H
#define ELV_HASH_OPS_H

ELV_HASH_FN uint8_t *elv_hash_start(const struct elv_hash *h, uint64_t sector)
{
	uint32_t x = (uint32_t)(sector >> 3) * 0x9E3779B1u;

	return &h->starts[x >> (h->shift - ELV_HASH_STARTS_SHIFT)];
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

ELV_HASH_FN void elv_hash_add(struct elv_hash *h, struct elv_request *rq)
{
	struct elv_request **b = elv_hash_bucket(h, elv_rq_end(rq));

	rq->hlink.next = *b;
	*b = rq;
	elv_hash_start_inc(h, rq->sector);
}

ELV_HASH_FN void elv_hash_del(struct elv_hash *h, struct elv_request *rq)
{
	struct elv_request **p = elv_hash_bucket(h, elv_rq_end(rq));

	while (*p && *p != rq)
		p = &(*p)->hlink.next;
	if (*p) {
		*p = rq->hlink.next;
		elv_hash_start_dec(h, rq->sector);
	}
}

ELV_HASH_FN struct elv_request *elv_hash_find(const struct elv_hash *h, uint64_t end)
{
	struct elv_request *rq = *elv_hash_bucket(h, end);

	while (rq && elv_rq_end(rq) != end)
		rq = rq->hlink.next;
	return rq;
}

#endif /* ELV_HASH_OPS_H */
