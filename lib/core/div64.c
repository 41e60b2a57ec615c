/*
 * 64-bit division for 32-bit cores without a call into the compiler's runtime library:
 * freestanding firmware builds must link without libgcc's 64-bit helpers.
 */
#include "elv_internal.h"

uint64_t elv_div64_soft(uint64_t n, uint64_t d)
{
	uint64_t q = 0, bit = 1;

	if (!d)
		return UINT64_MAX;
	if (!(n >> 32) && !(d >> 32))
		return (uint32_t)n / (uint32_t)d;
	while (d < n && !(d >> 63)) {
		d <<= 1;
		bit <<= 1;
	}
	for (; bit; d >>= 1, bit >>= 1) {
		if (n >= d) {
			n -= d;
			q |= bit;
		}
	}
	return q;
}
