/**
 * @file elv_internal.h
 * @brief Library-internal header: grants access to private members, never installed.
 *
 * Every source file under lib/ includes this first. Internal names use the elv__ prefix.
 */
#ifndef ELEVATOR_ELV_INTERNAL_H
#define ELEVATOR_ELV_INTERNAL_H

#ifndef ELV_ALLOW_PRIVATE_ACCESS
#define ELV_ALLOW_PRIVATE_ACCESS
#endif

#include "elevator/policy.h"

#endif /* ELEVATOR_ELV_INTERNAL_H */
