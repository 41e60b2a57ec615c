/*
 * noop: one FIFO, dispatch in arrival order. Merges still happen: back merges through the
 * core's hash, front merges against the most recently added request (the one-request cache
 * that catches a stream written backwards). For devices that reorder by themselves.
 */
#include "elevator/policy.h"

struct noop_data {
	struct elv_list fifo;
};

static struct noop_data *noop_of(const struct elv_queue *q)
{
	return elv_queue_head(q)->data;
}

static void noop_init(struct elv_queue *q)
{
	elv_list_init(&noop_of(q)->fifo);
}

static void noop_add(struct elv_queue *q, struct elv_request *rq, uint64_t now)
{
	(void)now;
	/* New requests are the youngest; only a switch or barrier release may re-add older ones. */
	elv_fifo_insert_sorted(&noop_of(q)->fifo, rq);
}

static void noop_remove(struct elv_queue *q, struct elv_request *rq)
{
	(void)q;
	elv_list_del(elv_rq_fifo(rq));
}

static struct elv_request *noop_find_start(struct elv_queue *q, uint64_t sector, uint8_t op)
{
	struct noop_data *d = noop_of(q);
	struct elv_request *last;

	if (elv_list_empty(&d->fifo))
		return NULL;
	last = elv_list_rq(d->fifo.prev);
	return last->sector == sector && last->op == op ? last : NULL;
}

static struct elv_request *noop_oldest(struct elv_queue *q)
{
	return elv_list_first_rq(&noop_of(q)->fifo);
}

static struct elv_request *noop_dispatch(struct elv_queue *q, uint64_t now, int force)
{
	struct elv_request *rq = noop_oldest(q);

	(void)now;
	(void)force;
	if (rq)
		noop_remove(q, rq);
	return rq;
}

static void noop_merged(struct elv_queue *q, struct elv_request *rq, enum elv_merge_kind kind,
			struct elv_request *next)
{
	(void)q;
	/* The survivor takes the older request's place in line. */
	if (kind == ELV_MERGE_REQ)
		elv_fifo_inherit(rq, next);
}

static int noop_check(const struct elv_queue *q)
{
	const struct noop_data *d = noop_of(q);
	const struct elv_list *l;
	const struct elv_request *prev = NULL;
	uint32_t n = 0;

	for (l = d->fifo.next; l != &d->fifo; l = l->next) {
		const struct elv_request *rq = elv_list_rq(l);

		if (elv_rq_state(rq) != ELV_RQ_QUEUED || (prev && elv_rq_seq_cmp(prev, rq) > 0))
			return ELV_EINVAL;
		prev = rq;
		n++;
	}
	return n == elv_queue_nr_queued(q) ? 0 : ELV_EINVAL;
}

const struct elv_policy elv_policy_noop = {
	.abi = ELV_POLICY_ABI,
	.struct_size = sizeof(struct elv_policy),
	.name = "noop",
	.desc = "FIFO order with merging; for devices that schedule themselves",
	.data_size = sizeof(struct noop_data),
	.init = noop_init,
	.add = noop_add,
	.remove = noop_remove,
	.merged = ELV_POLICY_MERGE(noop_merged),
	.find_start = ELV_POLICY_FRONT(noop_find_start),
	.dispatch = noop_dispatch,
	.oldest = noop_oldest,
	.check = ELV_POLICY_CHECK(noop_check),
};
