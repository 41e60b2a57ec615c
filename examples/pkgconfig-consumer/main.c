/*
 * pkgconfig-consumer: pushes 1,000 random requests through the "deadline" policy of an
 * installed libelevator and a fake device that holds 4 commands at once, then checks that
 * every request came back exactly once (dispatched and completed, or absorbed by a merge)
 * and that the library's own counters agree with the program's. Exit status 0 when all is
 * well, 1 otherwise. Build it with nothing but pkg-config:
 *
 *   cc -std=c11 -o pkgconfig-consumer main.c $(pkg-config --cflags --libs libelevator)
 *
 * The queue lives in static memory (elv_queue_init()), as it would in firmware.
 * examples/cmake-consumer builds this same file through the CMake package with
 * CONSUMER_HOSTED defined: its queue comes from the hosted elv_queue_create() instead, so
 * that both ways of making a queue are linked against an installed library.
 */
#include <elevator/elevator.h>

#include <stdio.h>

#ifdef CONSUMER_HOSTED
#define PROG "cmake-consumer"
#else
#define PROG "pkgconfig-consumer"
#endif

#define NR_IOS 1000
#define DEPTH 4

/* The host's I/O descriptor, with the library's request embedded in it. */
struct io {
	struct elv_request rq;
	uint32_t len;        /* length when it was added, before any merge grew it */
	unsigned dispatched; /* times elv_dispatch() returned it */
	unsigned completed;  /* times it was completed */
	unsigned absorbed;   /* times the merge callback reported it absorbed */
};

static struct io ios[NR_IOS];

#ifndef CONSUMER_HOSTED
/* Queue memory: static, 8-byte aligned, checked against elv_queue_size() at start-up. */
static uint64_t queue_mem[8192];
#endif

struct run {
	unsigned merge_calls;
	int merge_misuse; /* the callback got something it should not have */
};

/* Small deterministic generator (numbers from Numerical Recipes); no libc rand(). */
static uint32_t lcg(uint32_t *state)
{
	*state = *state * 1664525u + 1013904223u;
	return *state >> 8;
}

static void on_merge(void *ctx, struct elv_request *into, struct elv_request *absorbed,
		     enum elv_merge_kind kind)
{
	struct run *run = ctx;
	struct io *a = elv_container_of(absorbed, struct io, rq);

	(void)kind;
	run->merge_calls++;
	if (into == absorbed || a < ios || a >= ios + NR_IOS)
		run->merge_misuse = 1;
	else
		a->absorbed++;
}

static void make_request(struct io *io, uint32_t *seed)
{
	uint32_t r = lcg(seed);

	elv_request_init(&io->rq);
	/* A narrow disk so that neighbours meet often and merges happen. */
	io->rq.sector = (uint64_t)(lcg(seed) % 4096u) * 8u;
	io->rq.nr_sectors = 8u * (1u + r % 2u);
	io->rq.op = (r & 0x30u) == 0 ? ELV_OP_WRITE : ELV_OP_READ;
	io->rq.flags = (r & 0x40u) != 0 ? ELV_RQ_SYNC : 0;
	io->len = io->rq.nr_sectors;
}

/* The device finishes one of its commands, not necessarily the oldest. */
static int complete_one(struct elv_queue *q, struct io **slots, unsigned *nr, uint32_t *seed,
			uint64_t now, uint64_t *sectors_done)
{
	unsigned i = lcg(seed) % *nr;
	struct io *io = slots[i];

	if (elv_complete(q, &io->rq, now) != 0)
		return -1;
	io->completed++;
	*sectors_done += io->rq.nr_sectors;
	slots[i] = slots[--*nr];
	return 0;
}

#ifdef CONSUMER_HOSTED
/* The hosted way: the library allocates the queue. */
static int queue_open(struct elv_queue **q, const struct elv_policy *p,
		      const struct elv_config *cfg)
{
	return elv_queue_create(q, p, cfg);
}

static int queue_close(struct elv_queue *q)
{
	return elv_queue_destroy(q);
}
#else
/* The firmware way: the queue in queue_mem, after checking that it fits. */
static int queue_open(struct elv_queue **q, const struct elv_policy *p,
		      const struct elv_config *cfg)
{
	if (elv_queue_size(p, cfg) > sizeof(queue_mem)) {
		fprintf(stderr, PROG ": the queue needs %zu bytes, have %zu\n",
			elv_queue_size(p, cfg), sizeof(queue_mem));
		return ELV_ENOMEM;
	}
	return elv_queue_init(q, queue_mem, sizeof(queue_mem), p, cfg);
}

static int queue_close(struct elv_queue *q)
{
	return elv_queue_exit(q);
}
#endif

int main(void)
{
	struct run run = { 0, 0 };
	struct elv_config cfg = { 0 };
	struct elv_stats st;
	struct elv_queue *q = NULL;
	struct io *slots[DEPTH];
	unsigned nr_slots = 0, next = 0, i, bad = 0, nr_dispatched = 0;
	uint64_t now = 0, sectors_added = 0, sectors_done = 0;
	uint32_t seed = 20260101u;
	const struct elv_policy *deadline = elv_policy_find("deadline");
	int err;

	if (!deadline) {
		fprintf(stderr, PROG ": no \"deadline\" policy in libelevator %s\n",
			elv_version_string());
		return 1;
	}
	cfg.dev.rotational = 1;
	cfg.dev.queue_depth = DEPTH;
	cfg.dev.max_sectors = 128;
	cfg.merge = on_merge;
	cfg.ctx = &run;
	err = queue_open(&q, deadline, &cfg);
	if (err != 0) {
		fprintf(stderr, PROG ": making the queue: %s\n", elv_strerror(err));
		return 1;
	}

	for (;;) {
		struct elv_request *rq;
		unsigned burst = lcg(&seed) % 4u;

		/* A few arrivals, then fill the device, then it finishes one command. */
		while (burst-- > 0 && next < NR_IOS) {
			struct io *io = &ios[next++];

			make_request(io, &seed);
			sectors_added += io->len;
			err = elv_add(q, &io->rq, now);
			if (err < 0 || (err == 1) != (io->absorbed == 1)) {
				fprintf(stderr, PROG ": elv_add returned %d\n", err);
				bad++;
			}
		}
		while (nr_slots < DEPTH) {
			err = elv_dispatch(q, now, next == NR_IOS ? ELV_DISPATCH_FORCE : 0u, &rq);
			if (err != 0)
				break;
			slots[nr_slots] = elv_container_of(rq, struct io, rq);
			slots[nr_slots++]->dispatched++;
			nr_dispatched++;
		}
		if (err != 0 && err != ELV_EAGAIN) {
			fprintf(stderr, PROG ": elv_dispatch: %s\n",
				elv_strerror(err));
			bad++;
			break;
		}
		if (elv_queue_check(q) != 0) {
			fprintf(stderr, PROG ": queue check failed at t=%llu\n",
				(unsigned long long)now);
			bad++;
			break;
		}
		if (nr_slots == 0 && next == NR_IOS)
			break;
		if (nr_slots > 0 && complete_one(q, slots, &nr_slots, &seed, now, &sectors_done)) {
			fprintf(stderr, PROG ": elv_complete failed\n");
			bad++;
			break;
		}
		now += 250000; /* 0.25 ms per step */
	}

	for (i = 0; i < NR_IOS; i++) {
		const struct io *io = &ios[i];
		int served = io->dispatched == 1 && io->completed == 1 && io->absorbed == 0;
		int merged = io->absorbed == 1 && io->dispatched == 0 && io->completed == 0;

		if (!served && !merged) {
			if (bad < 10)
				fprintf(stderr, PROG ": request %u: dispatched %u, "
					"completed %u, absorbed %u\n", i, io->dispatched,
					io->completed, io->absorbed);
			bad++;
		}
	}
	if (run.merge_misuse || sectors_done != sectors_added) {
		fprintf(stderr, PROG ": %llu sectors added, %llu completed%s\n",
			(unsigned long long)sectors_added, (unsigned long long)sectors_done,
			run.merge_misuse ? ", bad merge callback" : "");
		bad++;
	}
	if (elv_stats(q, &st) != 0 || st.added != NR_IOS ||
	    st.merged_back + st.merged_front + st.merged_req != run.merge_calls ||
	    st.dispatched[0] + st.dispatched[1] != nr_dispatched ||
	    st.completed != nr_dispatched || st.queued != 0 || st.in_flight != 0) {
		fprintf(stderr, PROG ": library counters disagree: added %llu, "
			"merged %llu/%llu/%llu, dispatched %llu, completed %llu\n",
			(unsigned long long)st.added, (unsigned long long)st.merged_back,
			(unsigned long long)st.merged_front, (unsigned long long)st.merged_req,
			(unsigned long long)(st.dispatched[0] + st.dispatched[1]),
			(unsigned long long)st.completed);
		bad++;
	}
	err = queue_close(q);
	if (err != 0) {
		fprintf(stderr, PROG ": closing the queue: %s\n", elv_strerror(err));
		bad++;
	}

	printf(PROG ": libelevator %s, deadline, %u requests: %u merged, "
	       "%u dispatched, %s\n", elv_version_string(), NR_IOS, run.merge_calls, nr_dispatched,
	       bad ? "MISMATCH" : "each came back exactly once");
	return bad ? 1 : 0;
}
