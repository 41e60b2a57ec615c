/**
 * @file avg.c
 * @brief Fixed-point decaying average (1.0 == 256), as AS and CFQ keep think time and seek
 * distance. The arithmetic is elv_avg_update() in policy.h.
 */
#include "elv_internal.h"

void elv_avg_add(struct elv_avg *a, uint64_t x)
{
	if (a != NULL)
		elv_avg_update(a, x);
}
