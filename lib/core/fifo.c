/* FIFO lists of requests in arrival order, with expiry measured from arrival time. */
#include "elv_internal.h"

void elv_fifo_insert_sorted(struct elv_list *fifo, struct elv_request *rq)
{
	struct elv_list *pos = fifo->prev;

	/* Re-added requests are nearly always the youngest: walk back from the tail. */
	while (pos != fifo && elv_rq_seq_cmp(elv_list_rq(pos), rq) > 0)
		pos = pos->prev;
	elv_list_insert(&rq->fifo, pos, pos->next);
}

int elv_fifo_expired(const struct elv_list *fifo, uint64_t now, uint64_t expire)
{
	const struct elv_request *rq = elv_list_first_rq(fifo);

	return rq && elv_time_after_eq(now, rq->time + expire);
}
