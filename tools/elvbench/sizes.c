/*
 * elvbench-sizes: the memory a host gives libelevator, per request, per stream and per queue
 * (elv_queue_size() for each built-in policy at a few queue depths), as one Markdown table
 * row per figure. tools/elvbench/make-table.sh builds it natively and, when a cross compiler
 * and qemu-arm are installed, for 32-bit ARM.
 */
#include <stdio.h>

#include "elevator/elevator.h"

int main(void)
{
	static const unsigned nrs[] = { 0, 32, 1024, 65536 };
	struct elv_config cfg = { 0 };
	const struct elv_policy *p;
	unsigned i, k;

	printf("| `struct elv_request` | %zu |\n", sizeof(struct elv_request));
	printf("| `struct elv_stream` | %zu |\n", sizeof(struct elv_stream));
	for (i = 0; (p = elv_policy_at(i)) != NULL; i++) {
		for (k = 0; k < sizeof(nrs) / sizeof(nrs[0]); k++) {
			cfg.nr_requests = nrs[k];
			printf("| queue, %s, nr_requests = %u%s | %zu |\n", elv_policy_name(p),
			       nrs[k] ? nrs[k] : 128u, nrs[k] ? "" : " (default)",
			       elv_queue_size(p, &cfg));
		}
	}
	cfg.nr_requests = 0;
	printf("| queue, any built-in policy (elv_switch), default | %zu |\n",
	       elv_queue_size_any(&cfg));
	return 0;
}
