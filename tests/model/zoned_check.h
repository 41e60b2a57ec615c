/*
 * The zoned mode of elvcheck (tests/model/zoned_check.c): the zone write plugging stage in
 * front of every policy, checked against the zoned invariants of elv_zmodel.h.
 */
#ifndef ELV_ZONED_CHECK_H
#define ELV_ZONED_CHECK_H

#include <stdint.h>

#include "elevator/elevator.h"

struct zoned_check_result {
	uint64_t calls;        /* calls checked */
	uint64_t episodes;     /* queues built, run and torn down */
	uint64_t merges;       /* merges seen */
	uint64_t failed_writes; /* writes the fake device failed on purpose */
	uint64_t given_back;   /* writes the stage gave back through the fail callback */
	uint64_t refused;      /* adds the stage refused */
	uint64_t bad_episode;  /* the episode that broke an invariant */
	char err[640];         /* the violation, when there is one */
};

/*
 * Episodes of random calls drawn from @seed, starting under the policies @pols[0..npols)
 * in turn and switching among them, until @ops calls have been checked. Returns 0 when no
 * invariant broke, -1 with res->err set otherwise.
 */
int zoned_run(const struct elv_policy *const *pols, unsigned npols, uint64_t seed, uint64_t ops,
	      struct zoned_check_result *res);

#endif /* ELV_ZONED_CHECK_H */
