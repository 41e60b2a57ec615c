/*
 * Runs the sstf policy (sstf.c, built outside libelevator) through a few requests in a queue
 * placed in static memory, on a device that holds one command at a time, and checks the
 * order in which they come out. Exit status 0 when every order is the expected one.
 */
#include <elevator/elevator.h>

#include <stdio.h>

#include "sstf.h"

static uint64_t mem[4096]; /* the queue: 8-byte aligned caller memory */
static struct elv_request rqs[16];
static unsigned nr_rqs, merges, failures;
static uint64_t now = 1000;

static void on_merge(void *ctx, struct elv_request *into, struct elv_request *absorbed,
		     enum elv_merge_kind kind)
{
	(void)ctx;
	(void)into;
	(void)absorbed;
	(void)kind;
	merges++;
}

/* Add a read of 8 sectors at @sector; returns what elv_add() returned. */
static int add(struct elv_queue *q, uint64_t sector)
{
	struct elv_request *rq = &rqs[nr_rqs++];

	elv_request_init(rq);
	rq->sector = sector;
	rq->nr_sectors = 8;
	rq->op = ELV_OP_READ;
	return elv_add(q, rq, now++);
}

/* Dispatch and complete until the queue is empty; compare the start sectors with @want. */
static void expect_order(struct elv_queue *q, const char *what, const uint64_t *want,
			 unsigned n)
{
	struct elv_request *rq;
	unsigned i = 0, ok = 1;

	printf("%-34s", what);
	while (elv_dispatch(q, now++, 0, &rq) == 0) {
		printf(" %llu", (unsigned long long)rq->sector);
		ok &= i < n && rq->sector == want[i];
		i++;
		if (elv_complete(q, rq, now++) != 0 || elv_queue_check(q) != 0)
			ok = 0;
	}
	ok &= i == n;
	printf("  %s\n", ok ? "as expected" : "WRONG");
	failures += !ok;
}

int main(void)
{
	static const uint64_t first[] = {1000};
	static const uint64_t nearest[] = {1020, 1100, 900, 3000, 5000};
	static const uint64_t tie[] = {5018, 4998};
	static const uint64_t merged[] = {7000};
	struct elv_config cfg = {0};
	struct elv_queue *q;
	size_t need;
	int err;

	cfg.merge = on_merge;
	need = elv_queue_size(&sstf_policy, &cfg);
	if (need == 0 || need > sizeof(mem)) {
		fprintf(stderr, "out-of-tree-policy: queue needs %zu bytes\n", need);
		return 1;
	}
	err = elv_queue_init(&q, mem, sizeof(mem), &sstf_policy, &cfg);
	if (err != 0) {
		fprintf(stderr, "out-of-tree-policy: elv_queue_init: %s\n", elv_strerror(err));
		return 1;
	}
	printf("policy \"%s\" with libelevator %s\n", elv_policy_name(elv_queue_policy(q)),
	       elv_version_string());

	/* The head starts at sector 0; after this request it is at 1008. */
	add(q, 1000);
	expect_order(q, "one request:", first, 1);

	/* Each time the nearest to where the previous one ended, up or down. */
	add(q, 5000);
	add(q, 1100);
	add(q, 900);
	add(q, 3000);
	add(q, 1020);
	expect_order(q, "nearest first from 1008:", nearest, 5);

	/* The head is at 5008: 10 sectors either way is a tie, and forward wins. */
	add(q, 4998);
	add(q, 5018);
	expect_order(q, "tie from 5008:", tie, 2);

	/* The core merges a request that continues a queued one (its back-merge hash). */
	add(q, 7000);
	err = add(q, 7008);
	if (err != 1 || merges != 1) {
		printf("the second request was not merged (elv_add returned %d)\n", err);
		failures++;
	}
	expect_order(q, "merged 7000+7008:", merged, 1);
	if (rqs[nr_rqs - 2].nr_sectors != 16) {
		printf("the merged request has %u sectors, not 16\n",
		       (unsigned)rqs[nr_rqs - 2].nr_sectors);
		failures++;
	}

	if (elv_queue_exit(q) != 0) {
		printf("the queue is not empty at the end\n");
		failures++;
	}
	printf("%s\n", failures ? "FAILED" : "sstf ran outside the library: every order as expected");
	return failures ? 1 : 0;
}
