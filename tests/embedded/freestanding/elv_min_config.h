/*
 * The smallest firmware configuration: every feature that can be left out is, as a product
 * that only adds, dispatches and completes would build the library. Passed with
 * -DELV_CONFIG_FILE='"elv_min_config.h"' by tools/size-table.sh (the "minimal" rows and their
 * budgets) and tests/embedded/options.sh (on the host and on the Cortex-M3).
 * ELV_FW_NO_ASSERT drops assertions, as for elv_fw_config.h. ELV_MIN_BACK_MERGES keeps back
 * merges (front and request-to-request merges stay out), for the size table's rows of that
 * variant.
 */
#ifndef ELV_MIN_CONFIG_H
#define ELV_MIN_CONFIG_H

#include "elv_fw_config.h"

#define ELV_NO_STRERROR 1
#define ELV_NO_CHECK 1
#if defined(ELV_MIN_BACK_MERGES)
#define ELV_NO_FRONT_MERGE 1
#define ELV_NO_REQ_MERGE 1
#else
#define ELV_NO_MERGE 1
#endif
#define ELV_NO_CANCEL 1
#define ELV_NO_REQUEUE 1
#define ELV_NO_BARRIER 1
#define ELV_NO_SWITCH 1
#define ELV_NO_STREAMS 1
#define ELV_NO_STATS 1
#define ELV_NO_TRACE 1
#define ELV_NO_TUNABLES 1
#define ELV_NO_STAGES 1

#endif /* ELV_MIN_CONFIG_H */
