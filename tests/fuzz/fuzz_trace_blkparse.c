/* libFuzzer target: the blkparse reader on arbitrary bytes (see fuzz_trace_check.h). */
#define FUZZ_TRACE_FORMAT ELV_TRACE_BLKPARSE
#include "fuzz_trace_check.h"
