/* libFuzzer target: the msr reader on arbitrary bytes (see fuzz_trace_check.h). */
#define FUZZ_TRACE_FORMAT ELV_TRACE_MSR
#include "fuzz_trace_check.h"
