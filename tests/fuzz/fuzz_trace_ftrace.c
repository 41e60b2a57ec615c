/* libFuzzer target: the Linux block tracepoint text reader on arbitrary bytes (see
 * fuzz_trace_check.h). */
#define FUZZ_TRACE_FORMAT ELV_TRACE_FTRACE
#include "fuzz_trace_check.h"
