/*
 * driver-loop: the skeleton of a userspace block driver built on libelevator, run against a
 * fake rotating disk under a simulated clock.
 *
 * Everything is static: the queue lives in a static buffer, every I/O descriptor embeds its
 * struct elv_request, and the "device" takes one command at a time with a service time that
 * grows with the seek distance. The same small workload (two dependent sequential readers
 * and a writer flushing bursts of adjacent blocks) runs through every built-in policy, and
 * a table compares them; its last line says which policy finished first and why, from the
 * figures of the run.
 */
#include <elevator/elevator.h>

#include <stdio.h>
#include <string.h>

#define DISK_SECTORS (1ull << 24) /* an 8 GiB disk */
#define NR_READERS 2
#define READS_EACH 96
#define READ_SECTORS 16
#define THINK_NS 300000ull /* a reader needs 0.3 ms between its reads */
#define NR_BURSTS 16
#define BURST_LEN 8
#define WRITE_SECTORS 32
#define BURST_EVERY_NS 12000000ull
#define NR_IOS (NR_READERS * READS_EACH + NR_BURSTS * BURST_LEN)

/* The driver's own descriptor for one I/O. */
struct io {
	struct elv_request rq; /* what the library sees */
	uint64_t issued;       /* host time it was handed to the queue */
	struct io *joined;     /* payloads merged into this one; they finish with it */
	int reader;            /* reader index, or -1 for the writer */
};

struct reader {
	struct elv_stream stream;
	uint64_t next_sector;
	uint64_t next_at; /* when it issues its next read, or ELV_TIME_NEVER while it waits */
	unsigned left;
};

struct disk {
	uint64_t head;       /* sector under the head */
	uint64_t busy_until; /* end of the current command */
	struct io *active;   /* the command being served, or NULL */
	uint64_t seek_sectors;
};

struct result {
	unsigned finished;
	uint64_t merges;
	uint64_t seek_sectors;
	uint64_t latency_sum[2]; /* reads [0], writes [1] */
	unsigned count[2];
	uint64_t makespan;
	uint64_t idle_count, idle_ns; /* the policy's own idling (elv_stats()) */
};

/* One row of the table, kept for the closing line. */
struct row {
	const char *name;
	struct result res;
};

/* All state is static: nothing is allocated at run time. */
static uint64_t queue_mem[16384];
static struct io ios[NR_IOS];
static struct reader readers[NR_READERS];
static struct disk disk;
static unsigned nr_used, bursts_done;
static uint64_t write_rng;
static struct result res;

static uint64_t rng_next(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return *s >> 33;
}

/* Fake disk: command overhead, then a seek that grows with distance, then the transfer. */
static uint64_t service_ns(uint64_t head, const struct elv_request *rq)
{
	uint64_t dist = rq->sector > head ? rq->sector - head : head - rq->sector;
	uint64_t t = 100000 + (uint64_t)rq->nr_sectors * 5120; /* ~100 MB/s */

	if (dist != 0)
		t += 1000000 + dist * 7000000 / DISK_SECTORS + 4000000; /* + half a turn */
	return t;
}

/* The library joined @absorbed into @into: chain the payloads so both finish together. */
static void on_merge(void *ctx, struct elv_request *into, struct elv_request *absorbed,
		     enum elv_merge_kind kind)
{
	struct io *a = elv_container_of(absorbed, struct io, rq);
	struct io **tail = &elv_container_of(into, struct io, rq)->joined;

	(void)ctx;
	(void)kind;
	while (*tail)
		tail = &(*tail)->joined;
	*tail = a;
}

static int submit(struct elv_queue *q, uint64_t sector, uint32_t len, uint8_t op,
		  struct elv_stream *s, int reader, uint64_t now)
{
	struct io *io = &ios[nr_used++];
	int err;

	elv_request_init(&io->rq);
	io->rq.sector = sector;
	io->rq.nr_sectors = len;
	io->rq.op = op;
	io->rq.flags = op == ELV_OP_READ ? ELV_RQ_SYNC : 0;
	io->rq.stream = s;
	io->issued = now;
	io->joined = NULL;
	io->reader = reader;
	err = elv_add(q, &io->rq, now);
	return err < 0 ? err : 0;
}

/* Hand the queue every request whose time has come. */
static int issue_due(struct elv_queue *q, uint64_t now)
{
	unsigned r, i;
	int err = 0;

	for (r = 0; r < NR_READERS && !err; r++) {
		struct reader *rd = &readers[r];

		if (rd->left == 0 || rd->next_at > now)
			continue;
		err = submit(q, rd->next_sector, READ_SECTORS, ELV_OP_READ, &rd->stream, (int)r,
			     now);
		rd->next_sector += READ_SECTORS;
		rd->next_at = ELV_TIME_NEVER;
		rd->left--;
	}
	if (!err && bursts_done < NR_BURSTS && bursts_done * BURST_EVERY_NS <= now) {
		uint64_t base = rng_next(&write_rng) % (DISK_SECTORS / 64 - 8) * 64;

		for (i = 0; i < BURST_LEN && !err; i++)
			err = submit(q, base + i * WRITE_SECTORS, WRITE_SECTORS, ELV_OP_WRITE,
				     NULL, -1, now);
		bursts_done++;
	}
	return err;
}

static uint64_t next_arrival(void)
{
	uint64_t t = ELV_TIME_NEVER;
	unsigned r;

	for (r = 0; r < NR_READERS; r++)
		if (readers[r].left != 0 && readers[r].next_at < t)
			t = readers[r].next_at;
	if (bursts_done < NR_BURSTS && bursts_done * BURST_EVERY_NS < t)
		t = bursts_done * BURST_EVERY_NS;
	return t;
}

/* The device finished its command: complete it and every payload merged into it. */
static int finish(struct elv_queue *q, uint64_t now)
{
	struct io *io = disk.active;
	int err = elv_complete(q, &io->rq, now);

	disk.active = NULL;
	for (; io; io = io->joined) {
		int w = io->reader < 0;

		res.finished++;
		res.latency_sum[w] += now - io->issued;
		res.count[w]++;
		if (io->reader >= 0)
			readers[io->reader].next_at = now + THINK_NS;
	}
	res.makespan = now;
	return err;
}

static void start(struct elv_request *rq, uint64_t now)
{
	uint64_t dist = rq->sector > disk.head ? rq->sector - disk.head : disk.head - rq->sector;

	disk.seek_sectors += dist;
	disk.busy_until = now + service_ns(disk.head, rq);
	disk.head = rq->sector + rq->nr_sectors;
	disk.active = elv_container_of(rq, struct io, rq);
}

static void reset_workload(void)
{
	unsigned r;

	memset(ios, 0, sizeof(ios));
	memset(&disk, 0, sizeof(disk));
	memset(&res, 0, sizeof(res));
	nr_used = 0;
	bursts_done = 0;
	write_rng = 42;
	for (r = 0; r < NR_READERS; r++) {
		memset(&readers[r], 0, sizeof(readers[r]));
		readers[r].stream.ioprio = ELV_PRIO(ELV_PRIO_BE, ELV_PRIO_DEFAULT_LEVEL);
		readers[r].next_sector = DISK_SECTORS / 8 + r * (DISK_SECTORS / 2);
		readers[r].next_at = r * 1000000ull;
		readers[r].left = READS_EACH;
	}
}

/* The driver's main loop: arrivals, completions and dispatch, until all I/O finished. */
static int drive(struct elv_queue *q)
{
	uint64_t now = 0;
	int err = 0;

	while (!err && res.finished < NR_IOS) {
		struct elv_request *rq;
		uint64_t next, wake;

		if (disk.active && disk.busy_until <= now)
			err = finish(q, now);
		if (!err)
			err = issue_due(q, now);
		if (!err && !disk.active) {
			err = elv_dispatch(q, now, 0, &rq);
			if (err == 0)
				start(rq, now);
			else if (err == ELV_EAGAIN)
				err = 0;
		}
		next = disk.active ? disk.busy_until : ELV_TIME_NEVER;
		if (next_arrival() < next)
			next = next_arrival();
		wake = elv_next_event(q);
		if (!disk.active && wake < next)
			next = wake;
		if (!err && res.finished < NR_IOS && (next == ELV_TIME_NEVER || next <= now)) {
			/* The policy holds work but names no time to come back: insist. */
			err = disk.active ? ELV_EINVAL
					  : elv_dispatch(q, now, ELV_DISPATCH_FORCE, &rq);
			if (err == 0)
				start(rq, now);
			next = disk.active ? disk.busy_until : now;
		}
		now = next;
	}
	return err;
}

static int run_policy(const struct elv_policy *p, const struct elv_config *cfg)
{
	struct elv_queue *q;
	struct elv_stats st;
	unsigned r;
	int err;

	reset_workload();
	err = elv_queue_init(&q, queue_mem, sizeof(queue_mem), p, cfg);
	if (err)
		return err;
	for (r = 0; r < NR_READERS && !err; r++)
		err = elv_stream_init(q, &readers[r].stream, 0);
	if (!err)
		err = drive(q);
	if (!err)
		err = elv_stats(q, &st);
	if (!err) {
		res.merges = st.merged_back + st.merged_front + st.merged_req;
		res.idle_count = st.idle_count;
		res.idle_ns = st.idle_ns;
	}
	res.seek_sectors = disk.seek_sectors;
	for (r = 0; r < NR_READERS; r++)
		elv_stream_exit(q, &readers[r].stream, res.makespan);
	if (!err)
		err = elv_queue_exit(q);
	return err;
}

static double ms(uint64_t ns)
{
	return (double)ns / 1e6;
}

static double mean_ms(const struct result *r, int w)
{
	return r->count[w] ? ms(r->latency_sum[w]) / r->count[w] : 0.0;
}

/* Head travel in GiB of disk crossed. */
static double travel_gib(const struct result *r)
{
	return (double)r->seek_sectors * 512.0 / (double)(1ull << 30);
}

static void print_legend(void)
{
	printf("columns: requests  requests finished, merged ones included\n"
	       "         merged    requests joined into a queued neighbour before dispatch\n"
	       "         travel    total head movement, in GiB of disk crossed\n"
	       "         read      mean time from submitting a read to its completion, in ms\n"
	       "         write     the same for a write, in ms\n"
	       "         idled     times the policy kept the disk idle on purpose\n"
	       "         done      simulated time until the last request finished, in ms\n\n");
}

/* The closing line: what the table showed, from its own figures. */
static void print_verdict(const struct row *rows, unsigned n)
{
	const struct row *best = &rows[0], *worst = &rows[0];
	unsigned i;

	for (i = 1; i < n; i++) {
		if (rows[i].res.makespan < best->res.makespan)
			best = &rows[i];
		if (rows[i].res.makespan > worst->res.makespan)
			worst = &rows[i];
	}
	printf("\n%s finished first: %.1f ms", best->name, ms(best->res.makespan));
	if (worst != best) {
		printf(", %.1fx sooner than %s", ms(worst->res.makespan) / ms(best->res.makespan),
		       worst->name);
		if (best->res.seek_sectors > 0 && best->res.seek_sectors < worst->res.seek_sectors)
			printf(", with %.1fx less head travel",
			       travel_gib(&worst->res) / travel_gib(&best->res));
	}
	if (best->res.idle_count > 0)
		printf(", having idled %llu times (%.1f ms) for a reader's next nearby read",
		       (unsigned long long)best->res.idle_count, ms(best->res.idle_ns));
	printf(".\n");
}

int main(void)
{
	struct elv_config cfg;
	const struct elv_policy *p;
	static struct row rows[64];
	unsigned i, nr_rows = 0, failed = 0;

	memset(&cfg, 0, sizeof(cfg));
	cfg.dev.rotational = 1;
	cfg.dev.queue_depth = 1;
	cfg.dev.max_sectors = 256;
	cfg.merge = on_merge;

	printf("libelevator %s: %u requests (%u dependent reads from %u readers, %u writes in "
	       "bursts) on a fake %llu GiB disk\n\n",
	       elv_version_string(), NR_IOS, NR_READERS * READS_EACH, NR_READERS,
	       NR_BURSTS * BURST_LEN, DISK_SECTORS * 512 >> 30);
	print_legend();
	printf("%-14s %8s %6s %12s %10s %11s %7s %10s\n", "policy", "requests", "merged",
	       "travel (GiB)", "read (ms)", "write (ms)", "idled", "done (ms)");
	for (i = 0; (p = elv_policy_at(i)) != NULL; i++) {
		int err;

		if (elv_queue_size(p, &cfg) > sizeof(queue_mem)) {
			printf("%-14s needs %zu bytes of queue memory, have %zu\n",
			       elv_policy_name(p), elv_queue_size(p, &cfg), sizeof(queue_mem));
			failed++;
			continue;
		}
		err = run_policy(p, &cfg);
		if (err || res.finished != NR_IOS) {
			printf("%-14s failed: %s (%u of %u finished)\n", elv_policy_name(p),
			       elv_strerror(err), res.finished, NR_IOS);
			failed++;
			continue;
		}
		printf("%-14s %8u %6llu %12.1f %10.2f %11.2f %7llu %10.1f\n", elv_policy_name(p),
		       res.finished, (unsigned long long)res.merges, travel_gib(&res),
		       mean_ms(&res, 0), mean_ms(&res, 1), (unsigned long long)res.idle_count,
		       ms(res.makespan));
		if (nr_rows < sizeof(rows) / sizeof(rows[0])) {
			rows[nr_rows].name = elv_policy_name(p);
			rows[nr_rows++].res = res;
		}
	}
	if (i == 0) {
		printf("no built-in policies\n");
		return 1;
	}
	if (nr_rows > 0)
		print_verdict(rows, nr_rows);
	return failed ? 1 : 0;
}
