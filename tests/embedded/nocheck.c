/*
 * The ELV_NO_CHECK build (tests/embedded/nocheck.sh): the checker answers ELV_ENOSYS, no
 * built-in policy has a check hook, and the queue still schedules as usual.
 */
#include <stdio.h>
#include <string.h>

#include "elevator/elevator.h"
#include "elevator/policy.h"

static uint64_t mem[4096];

#define EXPECT(c)                                                                            \
	do {                                                                                   \
		if (!(c)) {                                                                    \
			fprintf(stderr, "nocheck: failed: %s (line %d)\n", #c, __LINE__);      \
			return 1;                                                              \
		}                                                                              \
	} while (0)

int main(void)
{
	struct elv_request rq[4], *out;
	struct elv_queue *q;
	const struct elv_policy *p;
	unsigned i, named = 0;
	int n;

	for (i = 0; (p = elv_policy_at(i)) != NULL; i++) {
		EXPECT(p->check == NULL);
		named += p == elv_policy_find("noop") || p == elv_policy_find("deadline") ||
			 p == elv_policy_find("anticipatory") || p == elv_policy_find("cfq");
	}
	/* Every built-in was looked at, the four original policies among them. */
	EXPECT(named == 4 && i >= 4);
	EXPECT(elv_queue_check(NULL) == ELV_EINVAL);
	EXPECT(elv_queue_init(&q, mem, sizeof(mem), elv_policy_find("deadline"), NULL) == 0);
	EXPECT(elv_queue_check(q) == ELV_ENOSYS);
	for (i = 0; i < 4; i++) {
		elv_request_init(&rq[i]);
		rq[i].sector = 1000u - 100u * i;
		rq[i].nr_sectors = 8;
		rq[i].op = ELV_OP_READ;
		EXPECT(elv_add(q, &rq[i], i) == 0);
	}
	for (n = 0; elv_dispatch(q, 10, 0, &out) == 0; n++) {
		/* each sweep runs off the top and restarts at the oldest: arrival order here */
		EXPECT(out == &rq[n]);
		EXPECT(elv_complete(q, out, 20) == 0);
	}
	EXPECT(n == 4);
	EXPECT(elv_queue_exit(q) == 0);
	puts("nocheck: ok");
	return 0;
}
