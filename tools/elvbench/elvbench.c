/*
 * elvbench: CPU cost per request of every policy at queue depths from 1 to 65536.
 *
 * Each case is a steady-state loop: add one request, then dispatch and complete until fewer
 * than `depth` are queued, so every dispatch chooses among `depth` requests. Time is virtual
 * (the library never reads a clock): the harness advances `now`. CPU time of this thread is
 * measured around the loop only; ns per request is the median of the runs. Two baselines
 * written here, a FIFO list and the classic one-way elevator inserting into a sorted list
 * ("disksort"), see the same request stream, so ratios come from one run; so do a floor
 * reference for noop, a validating FIFO with a back-merge hash and nothing else, and a bare
 * legacy deadline (sector trees and FIFOs with expiry and batching, no validation, no
 * merging) that prices what the deadline policy adds over its algorithm.
 *
 * Patterns: "random" reads at random 4 KiB-aligned sectors of a 2^31-sector device (one
 * operation, so a one-way elevator and the policies sort the same set), "mixed" the same with
 * half writes, "sequential" interleaved sequential writers whose requests merge, "prio"
 * random reads and writes in the RT, BE and IDLE classes.
 *
 *   elvbench [--quick] [--instr] [--json FILE] [--policy P] [--runs N]
 *   elvbench --help | --version
 *   elvbench --count IMPL DEPTH STREAMS PATTERN OPS [NR_REQUESTS]
 *       one run (what --instr runs under callgrind); nr_requests is DEPTH unless given,
 *       and 0 leaves the library's default (a queue that outgrows its nr_requests)
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "elevator/elevator.h"

#include "bench_alloc.h"
#include "bench_baseline.h"

#define DEVICE_SECTORS (1ull << 31)

struct bench_case {
	const char *impl;    /* policy name or baseline name */
	unsigned depth;
	unsigned streams;    /* issuers: registered streams for policies that use them */
	const char *pattern; /* "random", "mixed", "sequential", "prio" */
};

struct bench_result {
	double ns_per_req;    /* median over the runs */
	double ns_min, ns_max;
	double instr_per_req; /* < 0: not measured */
	double mean_seek;
	uint64_t allocs;
	uint64_t requests;    /* requests added in the measured loop */
	uint64_t merged;      /* of which merged into queued ones */
	size_t queue_bytes;   /* elv_queue_size() of the case's policy and configuration */
};

struct io {
	struct elv_request rq;
	struct bnode bn; /* baseline links */
	int counted;     /* elv_add() took it (it counts in nr_queued until served or merged) */
};

struct bench_state {
	const struct bench_case *c;
	struct elv_queue *q;
	struct io *ios;
	struct io **free_ios;
	unsigned nr_free;
	unsigned nr_queued;    /* tracked here, so the loop never asks the library */
	struct elv_stream *streams;
	uint64_t *stream_next; /* next sector of each stream (sequential pattern) */
	uint64_t *stream_nr;   /* requests each stream has made */
	int sizes_vary;        /* "+throttle-mixed": a stream's request sizes alternate */
	uint64_t rng;
	uint64_t now;
	uint64_t head;         /* where the last dispatched request ended */
	uint64_t seek_sum;
	uint64_t nr_seeks;
	uint64_t added, merged;
	uint64_t refused;      /* requests elv_add() or a stage gave back: the case is invalid */
	struct baseline base;
	int is_baseline;
	struct floor_q fq;     /* baseline-hash-fifo */
	struct fnode *fnodes;  /* its nodes, one per io (same index) */
	struct rbf_q rbf;      /* baseline-rbtree-fifo */
	struct rnode *rnodes;  /* its nodes, one per io (same index) */
	int pattern;
	struct elv_qos qos;             /* "<policy>+throttle" and "<policy>+mclock" rows */
	struct elv_qos_client *clients; /* one per stream */
	void *zone_mem;                 /* "<policy>+zone": the zone stage's memory */
};

enum { PAT_RANDOM, PAT_MIXED, PAT_SEQUENTIAL, PAT_PRIO };

static int pattern_of(const char *name)
{
	static const char *const names[] = { "random", "mixed", "sequential", "prio" };
	int i;

	for (i = 0; i < 4; i++)
		if (!strcmp(name, names[i]))
			return i;
	return -1;
}

static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ull);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static void fill_request(struct bench_state *b, struct io *io)
{
	const struct bench_case *c = b->c;
	unsigned s = c->streams ? (unsigned)(rng_next(&b->rng) % c->streams) : 0;

	elv_request_init(&io->rq);
	io->rq.nr_sectors = 8;
	io->rq.op = ELV_OP_READ;
	switch (b->pattern) {
	case PAT_SEQUENTIAL:
		io->rq.sector = b->stream_next[s];
		b->stream_next[s] += 8;
		io->rq.op = ELV_OP_WRITE;
		break;
	case PAT_RANDOM:
		io->rq.sector = (rng_next(&b->rng) % (DEVICE_SECTORS - 8)) & ~7ull;
		break;
	default: /* mixed, prio */
		io->rq.sector = (rng_next(&b->rng) % (DEVICE_SECTORS - 8)) & ~7ull;
		if (rng_next(&b->rng) & 1)
			io->rq.op = ELV_OP_WRITE;
		break;
	}
	if (b->sizes_vary && b->stream_nr[s] % 2)
		io->rq.nr_sectors = 16;
	b->stream_nr[s]++;
	if (b->pattern == PAT_PRIO)
		io->rq.ioprio = ELV_PRIO(1 + rng_next(&b->rng) % 3, 4);
	if (b->streams)
		io->rq.stream = &b->streams[s];
	if (io->rq.op == ELV_OP_WRITE && c->streams)
		io->rq.flags = ELV_RQ_SYNC;
}

static struct io *get_io(struct bench_state *b)
{
	return b->nr_free ? b->free_ios[--b->nr_free] : NULL;
}

static void put_io(struct bench_state *b, struct io *io)
{
	b->free_ios[b->nr_free++] = io;
}

/* Seek distance from where the previous request ended to where this one starts. */
static void note_seek(struct bench_state *b, uint64_t sector, uint32_t len)
{
	uint64_t d = sector > b->head ? sector - b->head : b->head - sector;

	b->seek_sum += d;
	b->nr_seeks++;
	b->head = sector + len;
}

static void on_merge(void *ctx, struct elv_request *into, struct elv_request *absorbed,
		     enum elv_merge_kind kind)
{
	struct bench_state *b = ctx;
	struct io *io = elv_container_of(absorbed, struct io, rq);

	(void)into;
	/* A back or front merge inside elv_add() absorbs the new request before it counts
	 * (elv_add() returns 1). A request merge absorbs one the policy had; a stage's merge
	 * one that elv_add() took and the stage held, which is a merged arrival all the same. */
	if (io->counted) {
		b->nr_queued--;
		b->merged += kind != ELV_MERGE_REQ;
	}
	put_io(b, io);
}

static void finish(struct bench_state *b, struct elv_request *rq)
{
	note_seek(b, rq->sector, rq->nr_sectors);
	b->nr_queued--;
	b->now += 100;
	elv_complete(b->q, rq, b->now);
	put_io(b, elv_container_of(rq, struct io, rq));
}

/* Dispatch and complete one request; idling policies are moved on by virtual time. */
static void serve_one(struct bench_state *b)
{
	struct elv_request *rq;
	uint64_t t;
	int tries;

	for (tries = 0; tries < 4; tries++) {
		if (elv_dispatch(b->q, b->now, 0, &rq) == 0) {
			finish(b, rq);
			return;
		}
		t = elv_next_event(b->q);
		b->now = t != ELV_TIME_NEVER && t > b->now ? t : b->now + 1000;
	}
	if (elv_dispatch(b->q, b->now, ELV_DISPATCH_FORCE, &rq) == 0)
		finish(b, rq);
}

/* The floor reference sees the same request through its own node. */
static void add_floor(struct bench_state *b, struct io *io)
{
	struct fnode *n = &b->fnodes[io - b->ios];

	n->sector = io->rq.sector;
	n->nr_sectors = io->rq.nr_sectors;
	n->op = io->rq.op;
	n->flags = io->rq.flags;
	if (floor_add(&b->fq, n) == 0) {
		b->nr_queued++;
	} else {
		b->merged++;
		put_io(b, io);
	}
}

static void serve_floor(struct bench_state *b)
{
	struct fnode *n;
	struct io *io;

	if (floor_dispatch(&b->fq, &n) != 0)
		return;
	io = &b->ios[n - b->fnodes];
	note_seek(b, n->sector, n->nr_sectors);
	b->nr_queued--;
	floor_complete(&b->fq, n);
	put_io(b, io);
}

/* The bare legacy deadline sees the same request through its own node; it never merges. */
static void add_rbf(struct bench_state *b, struct io *io)
{
	struct rnode *n = &b->rnodes[io - b->ios];

	n->sector = io->rq.sector;
	n->nr_sectors = io->rq.nr_sectors;
	n->dir = io->rq.op == ELV_OP_READ ? 0 : 1;
	rbf_add(&b->rbf, n, b->now);
	b->nr_queued++;
}

static void serve_rbf(struct bench_state *b)
{
	struct rnode *n = rbf_dispatch(&b->rbf, b->now);

	if (!n)
		return;
	note_seek(b, n->sector, n->nr_sectors);
	b->nr_queued--;
	b->now += 100;
	put_io(b, &b->ios[n - b->rnodes]);
}

static void add_one(struct bench_state *b)
{
	struct io *io = get_io(b);
	int err;

	if (!io)
		return;
	fill_request(b, io);
	b->now += 1000;
	b->added++;
	if (b->fnodes) {
		add_floor(b, io);
		return;
	}
	if (b->rnodes) {
		add_rbf(b, io);
		return;
	}
	if (b->is_baseline) {
		io->bn.sector = io->rq.sector;
		baseline_add(&b->base, &io->bn);
		b->nr_queued++;
		return;
	}
	/* 1: absorbed by a merge, and the merge callback recycled it already. */
	io->counted = 0;
	err = elv_add(b->q, &io->rq, b->now);
	if (err == 0) {
		io->counted = 1;
		b->nr_queued++;
	} else if (err == 1) {
		b->merged++;
	} else {
		b->refused++;
		put_io(b, io);
	}
}

static void serve(struct bench_state *b)
{
	struct bnode *n;
	struct io *io;

	if (b->fnodes) {
		serve_floor(b);
		return;
	}
	if (b->rnodes) {
		serve_rbf(b);
		return;
	}
	if (!b->is_baseline) {
		serve_one(b);
		return;
	}
	n = baseline_dispatch(&b->base);
	if (n) {
		io = elv_container_of(n, struct io, bn);
		note_seek(b, io->rq.sector, io->rq.nr_sectors);
		b->nr_queued--;
		put_io(b, io);
	}
}

/* The measured loop: every dispatch chooses among `depth` queued requests. */
static void __attribute__((noinline)) bench_loop(struct bench_state *b, unsigned ops)
{
	unsigned i;

	for (i = 0; i < ops; i++) {
		add_one(b);
		while (b->nr_queued >= b->c->depth)
			serve(b);
	}
}

/* nr_requests of a --count run: the depth, unless given (0 leaves the library's default). */
static int nr_requests_given;
static unsigned nr_requests_arg;

static struct elv_config bench_config(struct bench_state *b)
{
	struct elv_config cfg;

	memset(&cfg, 0, sizeof(cfg));
	cfg.nr_requests = nr_requests_given ? nr_requests_arg : b->c->depth;
	cfg.dev.rotational = 1;
	cfg.dev.max_sectors = 256;
	cfg.merge = on_merge;
	cfg.ctx = b;
	return cfg;
}

/* The floor reference: buckets as the library sizes them (a power of two >= depth, >= 64). */
static int floor_setup(struct bench_state *b, size_t nr_ios)
{
	uint32_t nb = 64, shift = 26;

	while (nb < b->c->depth) {
		nb <<= 1;
		shift--;
	}
	b->is_baseline = 1;
	b->fnodes = calloc(nr_ios, sizeof(*b->fnodes));
	b->fq.buckets = calloc(nb, sizeof(*b->fq.buckets));
	b->fq.shift = shift;
	b->fq.max_sectors = 256;
	return b->fnodes && b->fq.buckets ? 0 : -1;
}

/*
 * A policy with an admission stage attached, "<policy>+<stage>":
 *   "+throttle"  every stream capped by a leaky-bucket throttle (bytes and operations) it
 *                never reaches, so each request is metered and passes;
 *   "+throttle-mixed"  the "+throttle" buckets, each stream's requests 4 KiB and 8 KiB in
 *                turn, so that a request's costs are worked out again each time;
 *   "+throttle-busy"  the same buckets with caps 4% above each stream's offered rate (a
 *                request every 1,100 ns, add_one() and finish(), its stream drawn at random):
 *                a request mostly finds its levels partly full, never over their allowance;
 *   "+throttle-wait"  the same buckets with caps at 5% of each stream's offered rate: once
 *                the levels reach their allowance (100 ms, within the first 5,000 requests;
 *                the steady state measured is past it), every request waits in the stage
 *                for its time and the host comes back at the time elv_next_event() gives
 *                (the policy sees one request at a time);
 *   "+mclock"    every stream an mClock client (reservation, weight), the stage letting
 *                `depth` requests out;
 *   "+mclock-busy"  the same clients, the stage letting 16 requests out: the others wait
 *                in mClock, which picks each one as a completion makes room;
 *   "+none"      the QoS stage attached and every stream a client without settings (the
 *                stage mechanism alone);
 *   "+zone"      the zone stage on a device of ZONE_SECTORS-sector sequential zones; the
 *                sequential pattern's writers start at zone boundaries, so each write is at
 *                its zone's write pointer.
 * A stage's cost is the difference from the plain policy's figures with the same streams
 * and pattern (--count <policy> DEPTH STREAMS PATTERN OPS).
 */
#define ZONE_SECTORS (1u << 19) /* 256 MiB zones: 4096 on the bench's device */

static const char *stage_kind(const char *impl)
{
	static const char *const kinds[] = { "throttle", "throttle-busy", "throttle-mixed",
					     "throttle-wait", "mclock", "mclock-busy", "none",
					     "zone" };
	const char *plus = strchr(impl, '+');
	unsigned i;

	for (i = 0; plus && i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (!strcmp(plus + 1, kinds[i]))
			return kinds[i];
	return NULL;
}

static int is_zone_kind(const char *kind)
{
	return kind && !strcmp(kind, "zone");
}

static const struct elv_policy *impl_policy(const char *impl)
{
	char name[32];
	size_t n = strcspn(impl, "+");

	if (n >= sizeof(name))
		return NULL;
	memcpy(name, impl, n);
	name[n] = 0;
	return elv_policy_find(name);
}

/* A write the zone stage gives back: the harness broke a zone's rules, the case is void. */
static void on_zone_fail(void *ctx, struct elv_request *rq, int err)
{
	struct bench_state *b = ctx;

	(void)err;
	b->refused++;
	b->nr_queued--;
	put_io(b, elv_container_of(rq, struct io, rq));
}

static int zone_setup(struct bench_state *b)
{
	struct elv_zone_geometry geo;
	size_t len;

	memset(&geo, 0, sizeof(geo));
	geo.nr_sectors = DEVICE_SECTORS;
	geo.zone_sectors = ZONE_SECTORS;
	len = elv_zone_size(&geo);
	/* Writers must start on zone boundaries (see fill_request()'s sequential pattern). */
	if (!len || b->pattern != PAT_SEQUENTIAL ||
	    (DEVICE_SECTORS / (b->c->streams ? b->c->streams : 1)) % ZONE_SECTORS)
		return -1;
	b->zone_mem = aligned_alloc(8, (len + 7) & ~(size_t)7);
	return b->zone_mem ? elv_zone_attach(b->q, &geo, b->zone_mem, len, on_zone_fail, b) : -1;
}

static int qos_setup(struct bench_state *b, const char *kind)
{
	struct elv_qos_settings set = { 0 };
	struct elv_throttle_settings t = { 0 };
	struct elv_mclock_settings m = { 0 };
	unsigned i;

	set.depth = !strcmp(kind, "mclock-busy") && b->c->depth > 16 ? 16 : b->c->depth;
	b->clients = calloc(b->c->streams, sizeof(*b->clients));
	if (!b->clients || elv_qos_attach(b->q, &b->qos, &set, 0))
		return -1;
	t.limit[ELV_THROTTLE_BPS_TOTAL].avg = 1000000000000ull;
	t.limit[ELV_THROTTLE_IOPS_TOTAL].avg = 100000000;
	b->sizes_vary = !strcmp(kind, "throttle-mixed");
	if (!strcmp(kind, "throttle-busy")) {
		/* Offered: 1e9 / 1,100 ns / streams requests per second each, of 4 KiB. */
		t.limit[ELV_THROTTLE_IOPS_TOTAL].avg = 945455 / b->c->streams;
		t.limit[ELV_THROTTLE_BPS_TOTAL].avg = 4096ull * (945455 / b->c->streams);
	}
	if (!strcmp(kind, "throttle-wait")) {
		t.limit[ELV_THROTTLE_IOPS_TOTAL].avg = 45455 / b->c->streams;
		t.limit[ELV_THROTTLE_BPS_TOTAL].avg = 4096ull * (45455 / b->c->streams);
	}
	for (i = 0; i < b->c->streams; i++) {
		m.reservation = 1000;
		m.weight = 1 + i % 4;
		if (elv_qos_stream_attach(b->q, &b->streams[i], &b->clients[i], 0))
			return -1;
		if (!strncmp(kind, "throttle", 8) ? elv_qos_set_throttle(b->q, &b->clients[i], &t, 0)
		    : !strncmp(kind, "mclock", 6) ? elv_qos_set_mclock(b->q, &b->clients[i], &m, 0)
					      : 0)
			return -1;
	}
	return 0;
}

static int bench_setup(struct bench_state *b, const struct bench_case *c, void **mem,
		       size_t *len)
{
	struct elv_config cfg;
	size_t n = (size_t)c->depth + 2, i, ns = c->streams ? c->streams : 1;
	const struct elv_policy *p = NULL;

	memset(b, 0, sizeof(*b));
	*mem = NULL;
	b->c = c;
	b->rng = 42;
	b->pattern = pattern_of(c->pattern);
	b->ios = calloc(n, sizeof(*b->ios));
	b->free_ios = calloc(n, sizeof(*b->free_ios));
	b->stream_next = calloc(ns, sizeof(uint64_t));
	b->stream_nr = calloc(ns, sizeof(uint64_t));
	if (b->pattern < 0 || !b->ios || !b->free_ios || !b->stream_next || !b->stream_nr)
		return -1;
	for (i = 0; i < n; i++)
		put_io(b, &b->ios[n - 1 - i]);
	for (i = 0; i < ns; i++)
		b->stream_next[i] = (uint64_t)i * (DEVICE_SECTORS / ns);
	if (!strcmp(c->impl, "baseline-hash-fifo"))
		return floor_setup(b, n);
	if (!strcmp(c->impl, "baseline-rbtree-fifo")) {
		b->is_baseline = 1;
		rbf_init(&b->rbf);
		b->rnodes = calloc(n, sizeof(*b->rnodes));
		return b->rnodes ? 0 : -1;
	}
	b->is_baseline = baseline_init(&b->base, c->impl) == 0;
	if (b->is_baseline)
		return 0;
	p = impl_policy(c->impl);
	if (!p)
		return -1;
	cfg = bench_config(b);
	*len = elv_queue_size(p, &cfg);
	*mem = aligned_alloc(64, (*len + 63) & ~(size_t)63);
	if (!*mem || elv_queue_init(&b->q, *mem, *len, p, &cfg))
		return -1;
	if (c->streams) {
		b->streams = calloc(c->streams, sizeof(*b->streams));
		if (!b->streams)
			return -1;
		for (i = 0; i < c->streams; i++) {
			b->streams[i].ioprio = ELV_PRIO(ELV_PRIO_BE, 4);
			if (elv_stream_init(b->q, &b->streams[i], 0))
				return -1;
		}
	}
	if (is_zone_kind(stage_kind(c->impl)))
		return zone_setup(b);
	if (stage_kind(c->impl))
		return c->streams ? qos_setup(b, stage_kind(c->impl)) : -1;
	return 0;
}

static void bench_teardown(struct bench_state *b, void *mem)
{
	struct elv_request *rq;
	unsigned i;

	if (b->q) {
		while (elv_dispatch(b->q, b->now, ELV_DISPATCH_FORCE, &rq) == 0)
			elv_complete(b->q, rq, b->now);
		for (i = 0; b->streams && i < b->c->streams; i++)
			elv_stream_exit(b->q, &b->streams[i], b->now);
		if (b->clients)
			elv_qos_detach(b->q, b->now);
		if (b->zone_mem)
			elv_zone_detach(b->q);
		elv_queue_exit(b->q);
	}
	free(mem);
	free(b->zone_mem);
	free(b->streams);
	free(b->clients);
	free(b->ios);
	free(b->free_ios);
	free(b->stream_next);
	free(b->stream_nr);
	free(b->fnodes);
	free(b->fq.buckets);
	free(b->rnodes);
}

static unsigned ops_for(const struct bench_case *c, int quick)
{
	unsigned base = quick ? 10000 : 200000;

	/* The sorted-list baseline is O(depth) per request: keep its long runs short. */
	if (strcmp(c->impl, "baseline-sorted-list") == 0 && c->depth > 64)
		base = quick ? 1000 : 20000;
	return base;
}

/* CPU time of this thread: other work on a shared machine does not count. */
static double cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* One run; fills ns per request, seek and allocation figures. */
static int run_once(const struct bench_case *c, unsigned ops, struct bench_result *r)
{
	struct bench_state b;
	void *mem = NULL;
	size_t len = 0;
	double t0, t1;
	uint64_t a0;

	if (bench_setup(&b, c, &mem, &len)) {
		bench_teardown(&b, mem);
		return -1;
	}
	/* Fill to depth first (not measured); merging patterns need more adds than depth. */
	while (b.nr_queued + 1 < c->depth && b.nr_free > 1)
		add_one(&b);
	b.seek_sum = 0;
	b.nr_seeks = 0;
	b.added = 0;
	b.merged = 0;
	a0 = bench_alloc_count();
	t0 = cpu_ns();
	bench_loop(&b, ops);
	t1 = cpu_ns();
	r->allocs = bench_alloc_count() - a0;
	if (b.refused) {
		fprintf(stderr, "elvbench: %s: %" PRIu64 " requests refused\n", c->impl, b.refused);
		bench_teardown(&b, mem);
		return -1;
	}
	r->ns_per_req = (t1 - t0) / ops;
	r->mean_seek = b.nr_seeks ? (double)b.seek_sum / (double)b.nr_seeks : 0;
	r->requests = b.added;
	r->merged = b.merged;
	r->queue_bytes = b.is_baseline ? 0 : len;
	bench_teardown(&b, mem);
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * Instructions the library (or baseline) spends: callgrind counts only inside the entry points
 * named below and what they call, so the harness's own work (random numbers, bookkeeping) is
 * excluded.
 */
static double collected_instr(const char *self, const struct bench_case *c, unsigned ops)
{
	char cmd[1024], line[512];
	FILE *f;
	double ir = -1;

	snprintf(cmd, sizeof(cmd),
		 "valgrind --tool=callgrind --collect-atstart=no --callgrind-out-file=/dev/null "
		 "--toggle-collect=elv_add --toggle-collect=elv_dispatch "
		 "--toggle-collect=elv_complete --toggle-collect=elv_next_event "
		 "--toggle-collect=baseline_add --toggle-collect=baseline_dispatch "
		 "--toggle-collect=floor_add --toggle-collect=floor_dispatch "
		 "--toggle-collect=floor_complete "
		 "--toggle-collect=rbf_add --toggle-collect=rbf_dispatch "
		 "%s --count %s %u %u %s %u 2>&1",
		 self, c->impl, c->depth, c->streams, c->pattern, ops);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, "Collected :");

		if (p)
			ir = strtod(p + 11, NULL);
	}
	if (pclose(f) != 0)
		return -1;
	return ir;
}

/* Per request in steady state: the difference of two run lengths cancels fill and teardown. */
static double count_instr(const char *self, const struct bench_case *c, unsigned ops)
{
	double a = collected_instr(self, c, ops), b = collected_instr(self, c, 2 * ops);

	return a < 0 || b < 0 ? -1 : (b - a) / ops;
}

static const unsigned depths[] = { 1, 16, 64, 256, 512, 1024, 4096, 65536 };
static const unsigned stream_counts[] = { 1, 64, 1024 };

static void add_case(struct bench_case *out, unsigned *n, const char *impl, unsigned depth,
		     unsigned streams, const char *pattern)
{
	out[(*n)++] = (struct bench_case){ impl, depth, streams, pattern };
}

static unsigned build_cases(struct bench_case *out, const char *only, int quick)
{
	static const char *const impls[] = { "noop", "deadline", "anticipatory", "cfq", "kyber",
					     "bfq", "deadline+throttle", "deadline+mclock",
					     "deadline+zone",
					     "baseline-fifo", "baseline-sorted-list",
					     "baseline-hash-fifo", "baseline-rbtree-fifo",
					     /* the classic algorithms: random reads only */
					     "fcfs", "sstf", "scan", "look", "cscan", "clook",
					     "nscan", "fscan", "vr", "sptf", "asptf" };
	unsigned n = 0, i, d, s;
	int in_classic = 0;

	for (i = 0; i < sizeof(impls) / sizeof(impls[0]); i++) {
		const char *impl = impls[i];
		int per_stream = !strcmp(impl, "anticipatory") || !strcmp(impl, "cfq") ||
				 !strcmp(impl, "bfq");
		int baseline = !strncmp(impl, "baseline", 8);
		int classic;

		in_classic |= !strcmp(impl, "fcfs"); /* the list ends with the classic ones */
		classic = in_classic;
		if (only && strcmp(only, impl))
			continue;
		if (!baseline && !impl_policy(impl))
			continue;
		for (d = 0; d < sizeof(depths) / sizeof(depths[0]); d++) {
			unsigned depth = depths[d];

			if (quick && depth > 4096)
				continue;
			if (!strcmp(impl, "baseline-sorted-list") && depth > 4096)
				continue;
			if (is_zone_kind(stage_kind(impl))) { /* the writers of deadline's rows */
				add_case(out, &n, impl, depth, 16, "sequential");
				continue;
			}
			if (stage_kind(impl)) { /* four tenants; compare with --count deadline D 4 */
				add_case(out, &n, impl, depth, 4, "random");
				add_case(out, &n, impl, depth, 4, "mixed");
				continue;
			}
			if (per_stream) {
				for (s = 0; s < 3; s++)
					add_case(out, &n, impl, depth, stream_counts[s], "random");
			} else {
				add_case(out, &n, impl, depth, 0, "random");
			}
			if (!strcmp(impl, "baseline-hash-fifo"))
				add_case(out, &n, impl, depth, 16, "sequential");
			/* Priced against deadline: its two patterns without merges. */
			if (!strcmp(impl, "baseline-rbtree-fifo"))
				add_case(out, &n, impl, depth, 0, "mixed");
			if (baseline || classic)
				continue;
			add_case(out, &n, impl, depth, per_stream ? 64 : 0, "mixed");
			add_case(out, &n, impl, depth, per_stream ? 64 : 16, "sequential");
			if (!strcmp(impl, "deadline"))
				add_case(out, &n, impl, depth, 0, "prio");
		}
	}
	return n;
}

static void print_json(FILE *f, const struct bench_case *c, const struct bench_result *r,
		       unsigned n, int runs)
{
	unsigned i;

	fprintf(f,
		"{\"runs\": %d, \"sizeof_request\": %zu, \"sizeof_stream\": %zu, "
		"\"results\": [\n",
		runs, sizeof(struct elv_request), sizeof(struct elv_stream));
	for (i = 0; i < n; i++) {
		fprintf(f,
			"  {\"impl\": \"%s\", \"depth\": %u, \"streams\": %u, \"pattern\": \"%s\", "
			"\"ns_per_req\": %.1f, \"instr_per_req\": ",
			c[i].impl, c[i].depth, c[i].streams, c[i].pattern, r[i].ns_per_req);
		if (r[i].instr_per_req < 0)
			fprintf(f, "null");
		else
			fprintf(f, "%.1f", r[i].instr_per_req);
		fprintf(f,
			", \"mean_seek_sectors\": %.0f, \"allocs\": %" PRIu64
			", \"ns_min\": %.1f, \"ns_max\": %.1f, \"requests\": %" PRIu64
			", \"merged\": %" PRIu64 ", \"bytes_per_request\": %zu"
			", \"queue_bytes\": %zu, \"bytes_per_stream\": %zu}%s\n",
			r[i].mean_seek, r[i].allocs, r[i].ns_min, r[i].ns_max, r[i].requests,
			r[i].merged,
			!strncmp(c[i].impl, "baseline-hash", 13)     ? sizeof(struct fnode)
			: !strncmp(c[i].impl, "baseline-rbtree", 15) ? sizeof(struct rnode)
			: strncmp(c[i].impl, "baseline", 8)          ? sizeof(struct elv_request)
								     : sizeof(struct bnode),
			r[i].queue_bytes, c[i].streams ? sizeof(struct elv_stream) : (size_t)0,
			i + 1 < n ? "," : "");
	}
	fprintf(f, "]}\n");
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: elvbench [--quick] [--instr] [--runs N] [--policy P] [--json FILE]\n"
		"       elvbench --count IMPL DEPTH STREAMS PATTERN OPS [NR_REQUESTS]\n"
		"       elvbench --help | --version\n");
}

static void help(void)
{
	usage(stdout);
	printf("\nCPU cost per request of every libelevator policy and of reference baselines,\n"
	       "at queue depths 1 to 65536 (see docs/performance.md).\n\n"
	       "  --quick       fewer requests per run, depths up to 4096 (the CI smoke check)\n"
	       "  --instr       also count instructions per request under callgrind (valgrind)\n"
	       "  --runs N      runs per case, 5 to 99; ns/req is their median (default 5)\n"
	       "  --policy P    only the cases of P (a policy or a baseline name)\n"
	       "  --json FILE   write every result as JSON\n"
	       "  --count ...   one run of one case, then one line with its figures; IMPL is a\n"
	       "                policy, a policy with a stage or a baseline, PATTERN random,\n"
	       "                mixed, sequential or prio; NR_REQUESTS is DEPTH unless given,\n"
	       "                0 the library's default\n\n"
	       "stages: POLICY+throttle, POLICY+throttle-busy, POLICY+throttle-mixed,\n"
	       "        POLICY+throttle-wait,\n"
	       "        POLICY+mclock, POLICY+mclock-busy, POLICY+none (QoS, STREAMS > 0),\n"
	       "        POLICY+zone (256 MiB zones, sequential pattern, writers on zone starts)\n"
	       "baselines: baseline-fifo, baseline-sorted-list, baseline-hash-fifo,\n"
	       "           baseline-rbtree-fifo\n");
}

static int count_mode(int argc, char **argv)
{
	struct bench_case c;
	struct bench_result r;
	unsigned ops;

	if (argc != 7 && argc != 8) {
		usage(stderr);
		return 2;
	}
	if (argc == 8) {
		nr_requests_given = 1;
		nr_requests_arg = (unsigned)strtoul(argv[7], NULL, 10);
	}
	c.impl = argv[2];
	c.depth = (unsigned)strtoul(argv[3], NULL, 10);
	c.streams = (unsigned)strtoul(argv[4], NULL, 10);
	c.pattern = argv[5];
	ops = (unsigned)strtoul(argv[6], NULL, 10);
	if (c.depth == 0 || ops == 0) {
		fprintf(stderr, "elvbench: --count needs DEPTH and OPS above 0\n");
		return 2;
	}
	if (run_once(&c, ops, &r)) {
		fprintf(stderr, "elvbench: cannot run %s depth %u streams %u pattern %s\n", c.impl,
			c.depth, c.streams, c.pattern);
		return 1;
	}
	/* After the measured loop: printing costs nothing that callgrind counts. */
	printf("%s depth %u streams %u %s: %" PRIu64 " requests (%" PRIu64
	       " merged) in %.1f ns/req, mean seek %.0f sectors, %" PRIu64 " heap allocations\n",
	       c.impl, c.depth, c.streams, c.pattern, r.requests, r.merged, r.ns_per_req,
	       r.mean_seek, r.allocs);
	return 0;
}

/* The allocation counter must see allocations, or "0 allocations" would prove nothing. */
static int alloc_counter_works(void)
{
	void *(*volatile alloc)(size_t) = malloc;
	uint64_t a0 = bench_alloc_count();
	void *p = alloc(16);

	free(p);
	return bench_alloc_count() == a0 + 1;
}

int main(int argc, char **argv)
{
	static struct bench_case cases[1024];
	static struct bench_result res[512];
	const char *json = NULL, *only = NULL;
	int quick = 0, instr = 0, runs = 5, i, bad = 0;
	unsigned n, k;

	if (argc > 1 && !strcmp(argv[1], "--count"))
		return count_mode(argc, argv);
	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		help();
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "--version")) {
		printf("elvbench (libelevator) %s\n", elv_version_string());
		return 0;
	}
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--quick"))
			quick = 1;
		else if (!strcmp(argv[i], "--instr"))
			instr = 1;
		else if (!strcmp(argv[i], "--json") && i + 1 < argc)
			json = argv[++i];
		else if (!strcmp(argv[i], "--policy") && i + 1 < argc)
			only = argv[++i];
		else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
			runs = atoi(argv[++i]);
		else {
			usage(stderr);
			return 2;
		}
	}
	if (runs < 5 || runs > 99) {
		fprintf(stderr, "elvbench: --runs must be 5 to 99 (the median needs 5)\n");
		return 2;
	}
	if (!alloc_counter_works()) {
		fprintf(stderr, "elvbench: the allocation counter is not interposed\n");
		return 1;
	}
	n = build_cases(cases, only, quick);
	if (n == 0) {
		fprintf(stderr, "elvbench: no such policy: %s\n", only ? only : "");
		return 2;
	}
	printf("%-20s %6s %7s %-10s %9s %10s %13s %6s\n", "impl", "depth", "streams", "pattern",
	       "ns/req", "instr/req", "mean seek", "allocs");
	for (k = 0; k < n; k++) {
		double ns[99];
		unsigned ops = ops_for(&cases[k], quick);
		uint64_t allocs = 0;

		for (i = 0; i < runs; i++) {
			if (run_once(&cases[k], ops, &res[k])) {
				fprintf(stderr, "elvbench: case %s %u %s failed\n", cases[k].impl,
					cases[k].depth, cases[k].pattern);
				return 1;
			}
			ns[i] = res[k].ns_per_req;
			allocs += res[k].allocs;
		}
		qsort(ns, (size_t)runs, sizeof(double), cmp_double);
		res[k].ns_per_req = ns[runs / 2];
		res[k].ns_min = ns[0];
		res[k].ns_max = ns[runs - 1];
		res[k].allocs = allocs;
		res[k].instr_per_req =
			instr ? count_instr(argv[0], &cases[k], ops / 4 < 10000 ? ops / 4 : 10000) : -1;
		printf("%-20s %6u %7u %-10s %9.1f ", cases[k].impl, cases[k].depth,
		       cases[k].streams, cases[k].pattern, res[k].ns_per_req);
		if (res[k].instr_per_req < 0)
			printf("%10s", "-");
		else
			printf("%10.1f", res[k].instr_per_req);
		printf(" %13.0f %6" PRIu64 "\n", res[k].mean_seek, res[k].allocs);
		fflush(stdout);
		if (res[k].allocs) {
			fprintf(stderr, "elvbench: %s depth %u %s: %" PRIu64
					" heap allocations in the measured loop\n",
				cases[k].impl, cases[k].depth, cases[k].pattern, res[k].allocs);
			bad = 1;
		}
		if (instr && res[k].instr_per_req < 0) {
			fprintf(stderr, "elvbench: callgrind failed for %s depth %u\n",
				cases[k].impl, cases[k].depth);
			bad = 1;
		}
	}
	printf("sizeof(struct elv_request) = %zu, sizeof(struct elv_stream) = %zu, "
	       "ns/req: median of %d runs (thread CPU time)\n",
	       sizeof(struct elv_request), sizeof(struct elv_stream), runs);
	if (json) {
		FILE *f = fopen(json, "w");

		if (!f) {
			fprintf(stderr, "elvbench: %s: %s\n", json, strerror(errno));
			return 1;
		}
		print_json(f, cases, res, n, runs);
		if (fclose(f)) {
			fprintf(stderr, "elvbench: %s: %s\n", json, strerror(errno));
			return 1;
		}
	}
	return bad;
}
