/* libFuzzer target: the fio reader on arbitrary bytes (see fuzz_trace_check.h). */
#define FUZZ_TRACE_FORMAT ELV_TRACE_FIO
#include "fuzz_trace_check.h"
