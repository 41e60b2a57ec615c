/* libFuzzer target: the blktrace reader on arbitrary bytes (see fuzz_trace_check.h). */
#define FUZZ_TRACE_FORMAT ELV_TRACE_BLKTRACE
#include "fuzz_trace_check.h"
