/*
 * Prints the memory libelevator needs on the target it runs on: the public structs the host
 * embeds and elv_queue_size() of every built-in policy. tools/size-table.sh runs it on the
 * Cortex-M3 under QEMU for docs/embedded.md.
 */
#include <stdio.h>

#include "elevator/elevator.h"

int main(void)
{
	struct elv_config cfg = { 0 };
	unsigned i;

	printf("sizeof struct elv_request %u\n", (unsigned)sizeof(struct elv_request));
	printf("sizeof struct elv_stream %u\n", (unsigned)sizeof(struct elv_stream));
	printf("sizeof struct elv_config %u\n", (unsigned)sizeof(struct elv_config));
	for (i = 0; elv_policy_at(i) != NULL; i++) {
		const struct elv_policy *p = elv_policy_at(i);

		cfg.nr_requests = 0;
		printf("queue %s default %u", elv_policy_name(p), (unsigned)elv_queue_size(p, &cfg));
		cfg.nr_requests = 32;
		printf(" nr_requests=32 %u\n", (unsigned)elv_queue_size(p, &cfg));
	}
	cfg.nr_requests = 0;
	printf("queue any default %u", (unsigned)elv_queue_size_any(&cfg));
	cfg.nr_requests = 32;
	printf(" nr_requests=32 %u\n", (unsigned)elv_queue_size_any(&cfg));
	return 0;
}
