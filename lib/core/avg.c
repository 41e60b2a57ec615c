/**
 * @file avg.c
 * @brief Fixed-point decaying average (1.0 == 256), as AS and CFQ keep think time and seek
 * distance.
 */
#include "elv_internal.h"

/*
 * Samples are capped at 2^40 (about 18 minutes in ns, or 512 TiB in sectors) so that
 * 256 * x fits in 48 bits and 7 * total never overflows: total stays below 256 * 2^40.
 */
#define ELV_AVG_SAMPLE_MAX ((uint64_t)1 << 40)

void elv_avg_add(struct elv_avg *a, uint64_t x)
{
	if (a == NULL)
		return;
	if (x > ELV_AVG_SAMPLE_MAX)
		x = ELV_AVG_SAMPLE_MAX;
	/*
	 * New weight 1/8, history 7/8. Integer truncation makes the weight settle at 249
	 * rather than 256 under a steady stream; the mean carries the same small upward bias
	 * as the schedulers this follows.
	 */
	a->samples = (7u * a->samples + 256u) / 8u;
	a->total = (7u * a->total + 256u * x) / 8u;
	a->mean = elv_div64(a->total + 128u, a->samples);
}
