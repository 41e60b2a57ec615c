/*
 * Requests for the core suites (test_api_edges, test_contract, test_group, test_policy_access,
 * test_queue, test_stage, test_zone): a host request filled in one way wherever one is built.
 */
#ifndef ELV_TEST_REQUEST_H
#define ELV_TEST_REQUEST_H

#include <stdint.h>

#include "elevator/elevator.h"

/* @rq, reset by elv_request_init(), for @n sectors at @sector with @op and @flags; returns @rq. */
static inline struct elv_request *test_rq(struct elv_request *rq, uint64_t sector, uint32_t n,
					  uint8_t op, uint8_t flags)
{
	elv_request_init(rq);
	rq->sector = sector;
	rq->nr_sectors = n;
	rq->op = op;
	rq->flags = flags;
	return rq;
}

#endif
