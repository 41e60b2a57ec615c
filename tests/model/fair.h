/*
 * Bounded unfairness between two backlogged equal-weight streams (tests/model/fair.c), run
 * by elvcheck for the policies that promise proportional service.
 */
#ifndef ELV_FAIR_H
#define ELV_FAIR_H

#include <stdint.h>

#include "elevator/elevator.h"

struct fair_result {
	uint64_t budget;     /* largest budget the policy can grant in this run (sectors) */
	uint64_t bound;      /* allowed difference of service: 3 budgets */
	uint64_t max_diff;   /* largest difference seen after any dispatch, at equal weight:
			      * |Sa * wb - Sb * wa| / ((wa + wb) / 2) */
	uint64_t dispatches;
	uint64_t served[2];  /* sectors given to each stream */
	uint64_t w[2];       /* their weights (1 and 1: both the default) */
	char err[320];       /* the violation, when there is one */
};

/*
 * One run with the settings drawn from @seed, until the two streams have been given
 * @rounds budgets of service together. @required: the policy must have the tunables
 * low_latency and max_budget (else their absence is ignored). Returns 0 when the bound held,
 * -1 with res->err set otherwise.
 */
int fair_run(const struct elv_policy *p, uint64_t seed, uint64_t rounds, int required,
	     struct fair_result *res);

#endif /* ELV_FAIR_H */
