/* Heap allocation counter for elvbench: malloc and friends are interposed in the binary. */
#ifndef ELVBENCH_ALLOC_H
#define ELVBENCH_ALLOC_H

#include <stdint.h>

uint64_t bench_alloc_count(void);

#endif
