/*
 * Reservations met under load (tests/model/qos_check.c), run by elvcheck for every policy:
 * the QoS stage's mClock in front of the policy, backlogged clients, a device of fixed
 * capacity.
 */
#ifndef ELV_QOS_CHECK_H
#define ELV_QOS_CHECK_H

#include <stdint.h>

#include "elevator/elevator.h"

#define QOS_CHECK_CLIENTS 4

struct qos_check_result {
	double capacity;                       /* device capacity, requests per second */
	double delivered;                      /* requests per second completed, all clients */
	double seconds;                        /* measured span */
	double reservation[QOS_CHECK_CLIENTS]; /* requests per second, 0: none */
	double limit[QOS_CHECK_CLIENTS];       /* requests per second, 0: none */
	double got[QOS_CHECK_CLIENTS];         /* requests per second completed */
	uint64_t dispatches;
	char err[320];                         /* the violation, when there is one */
};

/*
 * One run with the settings drawn from @seed: the reserved clients must get their
 * reservation (within 2% and two requests), a limited client no more than its limit, and
 * every request must come back. Returns 0 when that held, -1 with res->err set otherwise.
 */
int qos_check_run(const struct elv_policy *p, uint64_t seed, struct qos_check_result *res);

#endif /* ELV_QOS_CHECK_H */
