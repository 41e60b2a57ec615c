/*
 * sstf: "shortest seek first" against libelevator's installed headers, using only
 * <elevator/policy.h>. Each dispatch takes the queued request nearest to where the previous
 * one ended, in either direction; a tie goes forward. No deadlines: a request far from a
 * busy area can wait for ever, which is why the library's own policies do more.
 *
 * The core does the rest: it validates requests, merges them through its back-merge hash
 * (and asks find_start() for front merges), holds barriers, keeps requeued requests and
 * counts statistics. The policy keeps its requests in a sector tree and a FIFO.
 */
#include "sstf.h"

struct sstf_data {
	struct elv_rb_root sort; /* queued requests by start sector */
	struct elv_list fifo;    /* the same requests in arrival order, for oldest() */
	uint64_t head;           /* where the last dispatched request ended */
};

static struct sstf_data *sstf_of(const struct elv_queue *q)
{
	return elv_queue_head(q)->data; /* data_size bytes, zeroed before init() */
}

static void sstf_init(struct elv_queue *q)
{
	elv_list_init(&sstf_of(q)->fifo); /* a zeroed tree is already empty */
}

static void sstf_add(struct elv_queue *q, struct elv_request *rq, uint64_t now)
{
	struct sstf_data *d = sstf_of(q);

	(void)now;
	elv_sort_add(&d->sort, rq);
	/* New requests go at the tail; requests re-added after a barrier or a policy switch
	 * may be older, and take their place by arrival. */
	elv_fifo_insert_sorted(&d->fifo, rq);
}

static void sstf_remove(struct elv_queue *q, struct elv_request *rq)
{
	elv_sort_del(&sstf_of(q)->sort, rq);
	elv_list_del(elv_rq_fifo(rq));
}

/* A queued request of operation @op starting at @sector that a new request may join. */
static struct elv_request *sstf_find_start(struct elv_queue *q, uint64_t sector, uint8_t op)
{
	struct elv_request *c = elv_sort_find(&sstf_of(q)->sort, sector);

	for (; c && c->sector == sector; c = elv_sort_next(c))
		if (c->op == op && elv_rq_mergeable(c))
			return c;
	return NULL;
}

static void sstf_merged(struct elv_queue *q, struct elv_request *rq, enum elv_merge_kind kind,
			struct elv_request *next)
{
	struct sstf_data *d = sstf_of(q);

	if (kind == ELV_MERGE_FRONT) { /* its start sector moved: file it again */
		elv_sort_del(&d->sort, rq);
		elv_sort_add(&d->sort, rq);
	} else if (kind == ELV_MERGE_REQ && next) {
		elv_fifo_inherit(rq, next); /* the survivor keeps the older place in line */
	}
}

/* The request with the highest start sector, or NULL. */
static struct elv_request *sstf_last(const struct elv_rb_root *t)
{
	const struct elv_rb_node *n = t->root;

	while (n && n->right)
		n = n->right;
	return elv_rb_rq(n);
}

static struct elv_request *sstf_dispatch(struct elv_queue *q, uint64_t now, int force)
{
	struct sstf_data *d = sstf_of(q);
	struct elv_request *up = elv_sort_ceil(&d->sort, d->head);
	struct elv_request *down = up ? elv_sort_prev(up) : sstf_last(&d->sort);
	struct elv_request *rq = up ? up : down;

	(void)now;
	(void)force; /* never idles */
	/* The library's seek rule with an unlimited reach at penalty 1: plain distance, ties
	 * to the higher sector. */
	if (up && down)
		rq = elv_seek_pick(up, down, d->head, UINT64_MAX, 1);
	if (rq) {
		sstf_remove(q, rq);
		d->head = elv_rq_end(rq);
	}
	return rq;
}

static struct elv_request *sstf_oldest(struct elv_queue *q)
{
	return elv_list_first_rq(&sstf_of(q)->fifo);
}

/* Tree and FIFO hold the same requests, all queued, sorted and in arrival order. */
static int sstf_check(const struct elv_queue *q)
{
	const struct sstf_data *d = sstf_of(q);
	const struct elv_request *rq, *prev = NULL;
	const struct elv_list *l;
	uint32_t in_tree = 0, in_fifo = 0;

	if (elv_rb_check(&d->sort) != 0)
		return ELV_EINVAL;
	for (rq = elv_sort_first(&d->sort); rq; prev = rq, rq = elv_sort_next(rq), in_tree++)
		if (elv_rq_state(rq) != ELV_RQ_QUEUED || (prev && prev->sector > rq->sector))
			return ELV_EINVAL;
	for (l = d->fifo.next, prev = NULL; l != &d->fifo; l = l->next, in_fifo++) {
		rq = elv_list_rq(l);
		if (prev && elv_rq_seq_cmp(prev, rq) > 0)
			return ELV_EINVAL;
		prev = rq;
	}
	return in_tree == in_fifo && in_tree == elv_queue_head(q)->nr_queued ? 0 : ELV_EINVAL;
}

const struct elv_policy sstf_policy = {
	.abi = ELV_POLICY_ABI,
	.struct_size = sizeof(struct elv_policy),
	.name = "sstf",
	.desc = "shortest seek first (example built outside the library)",
	.data_size = sizeof(struct sstf_data),
	.init = sstf_init,
	.add = sstf_add,
	.remove = sstf_remove,
	.merged = sstf_merged,
	.find_start = sstf_find_start,
	.dispatch = sstf_dispatch,
	.oldest = sstf_oldest,
	.check = sstf_check,
};
