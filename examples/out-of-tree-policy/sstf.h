/*
 * sstf: "shortest seek first", a scheduling policy for libelevator kept outside the library.
 */
#ifndef SSTF_H
#define SSTF_H

#include <elevator/policy.h>

/* Pass it to elv_queue_init() or elv_queue_create() like a built-in policy. */
extern const struct elv_policy sstf_policy;

#endif /* SSTF_H */
