/* Random numbers of the simulator: xoshiro256** seeded by splitmix64, so runs are portable. */
#include <math.h>

#include "sim_internal.h"

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

void elv_sim_rng_seed(struct elv_sim_rng *r, uint64_t seed)
{
	uint64_t x = seed;
	int i;

	for (i = 0; i < 4; i++)
		r->s[i] = splitmix64(&x);
}

uint64_t elv_sim_rng_next(struct elv_sim_rng *r)
{
	uint64_t *s = r->s;
	uint64_t res = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return res;
}

uint64_t elv_sim_rng_below(struct elv_sim_rng *r, uint64_t n)
{
	uint64_t x, lim;

	if (n == 0)
		return 0;
	/* Reject the top sliver that would bias the remainder. */
	lim = UINT64_MAX - UINT64_MAX % n;
	do {
		x = elv_sim_rng_next(r);
	} while (x >= lim);
	return x % n;
}

double elv_sim_rng_unit(struct elv_sim_rng *r)
{
	return (double)(elv_sim_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

double elv_sim_rng_exp(struct elv_sim_rng *r, double mean)
{
	return -mean * log(1.0 - elv_sim_rng_unit(r));
}
