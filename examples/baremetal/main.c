/*
 * baremetal: libelevator the way firmware uses it. No heap, no OS, no clock of its own.
 *
 * Every object is a fixed array: the queue's memory, the I/O descriptors (each embeds its
 * struct elv_request) and the streams. A tick counter stands in for a hardware timer
 * (1 tick = 100 us of host time), and a fake single-command disk completes each request
 * after a service time that grows with the seek distance. The main loop is the usual
 * firmware shape: on each tick, take new I/O from the issuers, complete what the device
 * finished, and when the device is free ask the queue for the next request, sleeping until
 * elv_next_event() while a policy idles on purpose.
 *
 * The same workload runs through every built-in policy and the dispatch order is printed.
 * Only integers are printed, so the output is identical on the host and on the Cortex-M3
 * under QEMU (examples/baremetal/run.sh compares them). Exit status 0 means every request
 * came back exactly once under every policy.
 */
#include <stdio.h>
#include <stdlib.h>

#include "elevator/elevator.h"

#define TICK_NS 100000ull    /* one timer tick: 100 us */
#define MAX_TICKS 200000u    /* 20 s of device time: far more than the workload needs */
#define NR_READERS 2         /* dependent sequential readers */
#define READS_EACH 12
#define READ_SECTORS 8
#define THINK_TICKS 3        /* a reader computes 0.3 ms between reads */
#define NR_WRITES 16         /* one writer: a burst of scattered and adjacent writes */
#define WRITE_SECTORS 16
#define NR_IOS (NR_READERS * READS_EACH + NR_WRITES)
#define DISK_SECTORS 4000000ull

/* The firmware's own I/O descriptor. */
struct io {
	struct elv_request rq; /* what the library sees */
	struct io *joined;     /* descriptors merged into this one; they finish with it */
	unsigned id;
	unsigned done;         /* completions seen: must end at exactly 1 */
};

struct reader {
	struct elv_stream stream;
	uint64_t next_sector;
	uint32_t next_tick; /* when it issues its next read; UINT32_MAX while it waits */
	unsigned left;
};

struct disk {
	uint64_t head;        /* sector under the head */
	uint32_t busy_until;  /* tick at which the current command completes */
	struct io *active;    /* the command in service, or NULL */
};

/* Static memory only. The queue buffer is checked against elv_queue_size() at start. */
static uint64_t queue_mem[1024];
static struct io ios[NR_IOS];
static struct reader readers[NR_READERS];
static struct elv_stream writer;
static struct disk disk;
static unsigned nr_ios, nr_dispatched, nr_merged, nr_done;

/* Called by ELV_ASSERT (see elv_user_config.h): a real board would log and reset. */
void fw_assert_failed(const char *file, int line)
{
	printf("assertion failed at %s:%d\n", file, line);
	exit(2);
}

static uint64_t ns(uint32_t tick)
{
	return (uint64_t)tick * TICK_NS;
}

/* Service time in ticks: command overhead, a seek growing with distance, the transfer. */
static uint32_t service_ticks(uint64_t head, const struct elv_request *rq)
{
	uint64_t dist = rq->sector > head ? rq->sector - head : head - rq->sector;
	uint32_t t = 1 + rq->nr_sectors / 16u;

	if (dist != 0)
		t += 10 + (uint32_t)(dist >> 14);
	return t;
}

/* Merge callback: the absorbed descriptor rides along and completes with its new owner. */
static void on_merge(void *ctx, struct elv_request *into, struct elv_request *absorbed,
		     enum elv_merge_kind kind)
{
	struct io *a = elv_container_of(absorbed, struct io, rq);
	struct io *i = elv_container_of(into, struct io, rq);
	struct io *tail = i;

	(void)ctx;
	while (tail->joined)
		tail = tail->joined;
	tail->joined = a;
	nr_merged++;
	printf("    merge io %u into io %u (%s)\n", a->id, i->id,
	       kind == ELV_MERGE_FRONT ? "front" : kind == ELV_MERGE_BACK ? "back" : "request");
}

static struct io *new_io(uint64_t sector, uint32_t len, uint8_t op, struct elv_stream *s)
{
	struct io *io = &ios[nr_ios];

	elv_request_init(&io->rq);
	io->rq.sector = sector;
	io->rq.nr_sectors = len;
	io->rq.op = op;
	io->rq.stream = s;
	io->joined = NULL;
	io->id = nr_ios++;
	io->done = 0;
	return io;
}

static int submit(struct elv_queue *q, struct io *io, uint32_t tick)
{
	int err = elv_add(q, &io->rq, ns(tick));

	if (err < 0) {
		printf("elv_add(io %u): %s (%d)\n", io->id, elv_strerror(err), err);
		return err;
	}
	return 0;
}

/*
 * The issuers: readers wait for their previous read; the writer dumps its burst at tick 5.
 * Returns how many requests were added, or -1.
 */
static int issue(struct elv_queue *q, uint32_t tick)
{
	/* Two runs of adjacent blocks (they merge) among scattered ones. */
	static const uint32_t write_blocks[NR_WRITES] = {
		9000, 120, 9001, 9002, 52000, 121, 9003, 122,
		700, 123, 31000, 9004, 124, 18000, 125, 9005,
	};
	unsigned i;
	int added = 0;

	for (i = 0; i < NR_READERS; i++) {
		struct reader *r = &readers[i];

		if (r->left == 0 || r->next_tick != tick)
			continue;
		r->left--;
		r->next_tick = UINT32_MAX;
		if (submit(q, new_io(r->next_sector, READ_SECTORS, ELV_OP_READ, &r->stream), tick))
			return -1;
		r->next_sector += READ_SECTORS;
		added++;
	}
	if (tick == 5) {
		for (i = 0; i < NR_WRITES; i++) {
			uint64_t sector = (uint64_t)write_blocks[i] * WRITE_SECTORS;

			if (submit(q, new_io(sector, WRITE_SECTORS, ELV_OP_WRITE, &writer), tick))
				return -1;
			added++;
		}
	}
	return added;
}

/* The device finished its command: complete it and every descriptor merged into it. */
static int finish(struct elv_queue *q, uint32_t tick)
{
	struct io *io = disk.active;
	struct io *j;
	unsigned i;

	if (elv_complete(q, &io->rq, ns(tick)) != 0)
		return -1;
	for (j = io; j; j = j->joined) {
		j->done++;
		nr_done++;
		for (i = 0; i < NR_READERS; i++)
			if (j->rq.stream == &readers[i].stream)
				readers[i].next_tick = tick + THINK_TICKS;
	}
	disk.active = NULL;
	return 0;
}

static void start(struct io *io, uint32_t tick)
{
	disk.busy_until = tick + service_ticks(disk.head, &io->rq);
	disk.head = io->rq.sector + io->rq.nr_sectors;
	disk.active = io;
	nr_dispatched++;
	printf("  %3u.%u ms  io %2u  %-5s sector %7lu +%u\n", (unsigned)(tick / 10),
	       (unsigned)(tick % 10), io->id, io->rq.op == ELV_OP_READ ? "read" : "write",
	       (unsigned long)io->rq.sector, (unsigned)io->rq.nr_sectors);
}

static int all_done(void)
{
	return nr_done == NR_IOS;
}

/* One complete run of the workload under policy @p p. Returns 0 when nothing was lost. */
static int run(const struct elv_policy *p)
{
	struct elv_config cfg = { 0 };
	struct elv_queue *q;
	struct elv_stats st;
	uint32_t tick, wake = 0;
	unsigned i, lost = 0;
	int err;

	cfg.dev.rotational = 1;
	cfg.dev.queue_depth = 1;
	cfg.nr_requests = 32;
	cfg.merge = on_merge;
	if (elv_queue_size(p, &cfg) > sizeof(queue_mem)) {
		printf("queue_mem too small for %s\n", elv_policy_name(p));
		return -1;
	}
	err = elv_queue_init(&q, queue_mem, sizeof(queue_mem), p, &cfg);
	if (err)
		return err;

	nr_ios = nr_dispatched = nr_merged = nr_done = 0;
	disk.head = 0;
	disk.active = NULL;
	writer.ioprio = 0;
	if (elv_stream_init(q, &writer, 0))
		return -1;
	for (i = 0; i < NR_READERS; i++) {
		readers[i].stream.ioprio = 0;
		readers[i].next_sector = 200000u + i * 1500000u;
		readers[i].next_tick = 0;
		readers[i].left = READS_EACH;
		if (elv_stream_init(q, &readers[i].stream, 0))
			return -1;
	}

	printf("policy %s\n", elv_policy_name(p));
	for (tick = 0; tick < MAX_TICKS && !all_done(); tick++) {
		int added = issue(q, tick);

		if (added < 0)
			return -1;
		if (added)
			wake = tick; /* new I/O may end an idle period early */
		if (disk.active && tick >= disk.busy_until) {
			if (finish(q, tick))
				return -1;
			wake = tick;
		}
		if (!disk.active && tick >= wake) {
			struct elv_request *rq;

			err = elv_dispatch(q, ns(tick), 0, &rq);
			if (err == 0) {
				start(elv_container_of(rq, struct io, rq), tick);
			} else if (err == ELV_EAGAIN) {
				/* Idling on purpose, or empty: sleep until the next timed event. */
				uint64_t next = elv_next_event(q);

				wake = next == ELV_TIME_NEVER ? tick + 1
							      : (uint32_t)((next + TICK_NS - 1) / TICK_NS);
			} else {
				return err;
			}
		}
	}

	for (i = 0; i < nr_ios; i++)
		if (ios[i].done != 1)
			lost++;
	elv_stats(q, &st);
	printf("  %u ios, %u dispatched, %u merged, %u idle periods, %u lost, %u.%u ms\n",
	       nr_ios, nr_dispatched, nr_merged, (unsigned)st.idle_count, lost,
	       (unsigned)(tick / 10), (unsigned)(tick % 10));
	for (i = 0; i < NR_READERS; i++)
		if (elv_stream_exit(q, &readers[i].stream, ns(tick)))
			return -1;
	if (elv_stream_exit(q, &writer, ns(tick)) || elv_queue_exit(q))
		return -1;
	return lost || tick >= MAX_TICKS ? -1 : 0;
}

int main(void)
{
	const struct elv_policy *p;
	unsigned i;
	int failed = 0;

	printf("libelevator %s bare-metal loop: %u readers x %u reads, %u writes\n",
	       elv_version_string(), NR_READERS, READS_EACH, NR_WRITES);
	for (i = 0; (p = elv_policy_at(i)) != NULL; i++)
		if (run(p) != 0) {
			printf("policy %s: FAILED\n", elv_policy_name(p));
			failed = 1;
		}
	printf(failed ? "FAILED\n" : "ok\n");
	return failed;
}
