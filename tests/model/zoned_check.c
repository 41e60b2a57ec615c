/*
 * elvcheck --zoned: episodes of the zoned model (elv_zmodel.h) on seeds derived from one
 * run seed. Episode k of seed S draws its bytes from S * 0x9e3779b97f4a7c15 + k, so the
 * same --seed and --ops give the same calls.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elv_zmodel.h"
#include "zoned_check.h"

#define ZC_EPISODE 3000u /* calls per episode */

static struct ez zc_m;

int zoned_run(const struct elv_policy *const *pols, unsigned npols, uint64_t seed, uint64_t ops,
	      struct zoned_check_result *res)
{
	struct ez *m = &zc_m;
	uint64_t k;

	memset(res, 0, sizeof(*res));
	if (npols == 0 || npols > EZ_MAX_POLS) {
		snprintf(res->err, sizeof(res->err), "no policy to check");
		return -1;
	}
	memcpy(m->pols, pols, npols * sizeof(*pols));
	m->npols = npols;
	for (k = 0; res->calls < ops; k++) {
		struct ez_src src;
		uint64_t n = ops - res->calls < ZC_EPISODE ? ops - res->calls : ZC_EPISODE;

		memset(&src, 0, sizeof(src));
		src.rng = 1;
		src.x = (seed * 0x9e3779b97f4a7c15ull + k) | 1u;
		m->log = getenv("ELV_ZONED_LOG") ? stderr : NULL;
		ez_episode(m, &src, n);
		res->calls += m->ops;
		res->episodes++;
		res->merges += m->merges;
		res->failed_writes += m->failed_writes;
		res->given_back += m->given_back;
		res->refused += m->refused;
		if (m->failed) {
			res->bad_episode = k;
			snprintf(res->err, sizeof(res->err), "%.500s (episode %llu, policy %s)",
				 m->err, (unsigned long long)k, elv_policy_name(m->pols[m->cur]));
			return -1;
		}
		if (m->ops == 0)
			break; /* cannot happen with a PRNG source; never loop for ever */
	}
	return 0;
}
