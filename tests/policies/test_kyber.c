/*
 * kyber policy: the batching order, the depth adaptation worked out by hand from the rules
 * (congestion from the I/O p90, scaling by the total p99, the 500-sample and one-second gate
 * shared by a domain's two histograms), the async share of the admission pool, tokens across
 * requeues, tunables, and host time that wraps past 2^64. elv_queue_check() runs after every
 * call that changes the queue.
 *
 * The latency scenarios run on a grid of 0.3 ms steps. A step first completes every request
 * due at it, then adds the step's requests and dispatches until the queue says EAGAIN; a
 * request's service time is fixed by its operation, and the device takes any number at once
 * (Kyber's tokens are the only limit). Reads come in waves exactly as large as the read
 * depth, so no read ever waits in the queue: a read's total latency equals its I/O latency.
 *
 * Bucket widths with the default targets: reads 2 ms / 4 = 0.5 ms, writes 10 ms / 4 =
 * 2.5 ms. A latency L > 0 falls in bucket min((L - 1) / width, 7):
 *   reads 0.3 ms -> 0,  0.6 ms -> 1,  2.7 ms -> 5;  writes 0.9 ms -> 0,  30 ms -> 7.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "elevator/policy.h"
#include "support/harness.h"

#define R ELV_OP_READ
#define W ELV_OP_WRITE
#define MS 1000000ull
#define STEP 300000ull /* 0.3 ms */
#define KPOOL 1200

/* ---- a small host: request pool, device with fixed service times ------------------------- */

struct kio {
	struct elv_request rq;
	uint64_t done_at;
	int in_flight;
	int used;
};

static struct kio kpool[KPOOL];
static uint64_t kmem[65536];
static struct elv_queue *kq;
static uint64_t know, kserial;
static uint64_t kservice[4]; /* by op */

static int kcheck_each = 1; /* 0: the wave scenarios check once per step instead */

static void k_check(void)
{
	assert_int_equal(elv_queue_check(kq), 0);
}

static void k_check_call(void)
{
	if (kcheck_each)
		k_check();
}

static void k_setup(uint32_t nr_requests, uint64_t start)
{
	struct elv_config cfg;
	const struct elv_policy *p = elv_policy_find("kyber");

	assert_non_null(p);
	memset(&cfg, 0, sizeof(cfg));
	cfg.nr_requests = nr_requests;
	memset(kpool, 0, sizeof(kpool));
	assert_true(elv_queue_size(p, &cfg) <= sizeof(kmem));
	assert_int_equal(elv_queue_init(&kq, kmem, sizeof(kmem), p, &cfg), 0);
	know = start;
	kserial = 1;
	kcheck_each = 1;
	kservice[R] = STEP;
	kservice[W] = 100 * STEP;
	kservice[ELV_OP_DISCARD] = STEP;
	kservice[ELV_OP_FLUSH] = STEP;
	k_check();
}

static struct kio *k_add(uint8_t op, uint8_t flags)
{
	unsigned i;

	for (i = 0; i < KPOOL; i++) {
		struct kio *io = &kpool[i];

		if (io->used)
			continue;
		memset(io, 0, sizeof(*io));
		io->used = 1;
		io->rq.op = op;
		io->rq.flags = flags;
		/* 8 sectors every 16: never adjacent, so nothing merges */
		io->rq.sector = op == ELV_OP_FLUSH ? 0 : (kserial++) * 16;
		io->rq.nr_sectors = op == ELV_OP_FLUSH ? 0 : 8;
		assert_int_equal(elv_add(kq, &io->rq, know), 0);
		k_check_call();
		return io;
	}
	fail_msg("request pool exhausted");
	return NULL;
}

/* @n requests of @op with @flags, each added as k_add() does. */
static void k_add_n(unsigned n, uint8_t op, uint8_t flags)
{
	while (n--)
		k_add(op, flags);
}

/* Dispatch until EAGAIN; returns the number dispatched. */
static unsigned k_dispatch(unsigned flags)
{
	struct elv_request *rq;
	unsigned n = 0;
	int err;

	while ((err = elv_dispatch(kq, know, flags, &rq)) == 0) {
		struct kio *io = elv_container_of(rq, struct kio, rq);

		io->in_flight = 1;
		io->done_at = know + kservice[rq->op];
		n++;
		k_check_call();
	}
	assert_int_equal(err, ELV_EAGAIN);
	return n;
}

static void k_complete(struct kio *io)
{
	assert_int_equal(elv_complete(kq, &io->rq, know), 0);
	io->in_flight = 0;
	io->used = 0;
	k_check_call();
}

/* Complete, in pool order, every request in flight due by now (wrap-safe). */
static void k_complete_due(void)
{
	unsigned i;

	for (i = 0; i < KPOOL; i++)
		if (kpool[i].in_flight && elv_time_before_eq(kpool[i].done_at, know))
			k_complete(&kpool[i]);
}

static uint64_t k_stat(const char *name)
{
	return th_queue_stat(kq, name);
}

/* Complete, in order of their due times and each at its own, the requests in flight due by
 * @t; then the clock reads @t. */
static void k_advance(uint64_t t)
{
	for (;;) {
		struct kio *first = NULL;
		unsigned i;

		for (i = 0; i < KPOOL; i++)
			if (kpool[i].in_flight && elv_time_before_eq(kpool[i].done_at, t) &&
			    (!first || elv_time_before(kpool[i].done_at, first->done_at)))
				first = &kpool[i];
		if (!first)
			break;
		know = first->done_at;
		k_complete(first);
	}
	know = t;
}

/* Complete what is in flight and dispatch what is left until the queue is empty. */
static void k_teardown(void)
{
	unsigned i, rounds = 0;

	do {
		for (i = 0; i < KPOOL; i++)
			if (kpool[i].in_flight)
				k_complete(&kpool[i]);
		k_dispatch(0);
	} while ((elv_queue_nr_queued(kq) || elv_queue_nr_in_flight(kq)) && ++rounds < 1000);
	assert_int_equal(elv_queue_nr_queued(kq), 0);
	assert_int_equal(elv_queue_nr_in_flight(kq), 0);
	k_check();
	assert_int_equal(elv_queue_exit(kq), 0);
}

/* The wave load: reads every read_steps steps (as many as the read depth), write_wave writes
 * every write_steps steps (none when 0), each served in exactly that many steps. */
struct wave {
	unsigned read_steps;
	unsigned write_steps;
	unsigned write_wave;
};

static void k_step(const struct wave *w, uint64_t base, uint64_t s)
{
	unsigned i, n = 0;

	know = base + s * STEP;
	kservice[R] = w->read_steps * STEP;
	kservice[W] = w->write_steps * STEP;
	k_complete_due();
	if (w->write_steps && s % w->write_steps == 0)
		for (i = 0; i < w->write_wave; i++, n++)
			k_add(W, 0);
	if (w->read_steps && s % w->read_steps == 0)
		for (i = 0; i < k_stat("read_depth"); i++, n++)
			k_add(R, 0);
	assert_int_equal(k_dispatch(0), n);
	assert_int_equal(elv_queue_nr_queued(kq), 0); /* nothing waits: latency = service */
	/* Thousands of requests a step: the invariants are checked once per step. */
	kcheck_each = 0;
	k_check();
}

/* ---- 1. batching ratio ------------------------------------------------------------------- */

/*
 * 100 reads then 100 writes at t=0, device depth 1 (each request completes before the next
 * dispatch, so tokens never run out). Dispatch starts at READ with an empty batch: 16 reads
 * fill the batch, the 17th call moves on to WRITE, 8 writes, then DISCARD and OTHER are empty
 * and READ comes round again. Six such rounds are 96 reads and 48 writes; then the last 4
 * reads (the READ batch is not full), then the 52 writes that are left.
 */
static void test_batching_ratio(void **state)
{
	static struct th h;
	unsigned i, r = 0, w = 0;

	(void)state;
	th_setup(&h, "kyber", NULL, 1);
	for (i = 0; i < 100; i++)
		th_add_new(&h, R, i * 16, 8);
	for (i = 0; i < 100; i++)
		th_add_new(&h, W, 100000 + i * 16, 8);
	assert_int_equal(th_run(&h, 1000, 0), 200);
	for (i = 0; i < 200; i++) {
		int is_read = h.order_sector[i] < 100000;
		unsigned pos = i % 24;

		if (i < 144)
			assert_int_equal(is_read, pos < 16);
		else if (i < 148)
			assert_true(is_read);
		else
			assert_false(is_read);
		if (i < 144) {
			r += (unsigned)is_read;
			w += (unsigned)!is_read;
		}
	}
	assert_int_equal(r, 96);
	assert_int_equal(w, 48);
	/* arrival order inside each domain */
	for (i = 1; i < 200; i++)
		if ((h.order_sector[i] < 100000) == (h.order_sector[i - 1] < 100000))
			assert_true(h.order_sector[i] > h.order_sector[i - 1]);
	th_teardown(&h);
}

/* ---- 2. throttling the good domain under congestion -------------------------------------- */

/*
 * Reads 0.3 ms (bucket 0), writes 30 ms (bucket 7): waves of 128 writes every 100 steps,
 * read waves every step. nr_requests 1024 so admission never binds.
 *
 * The first completion is read wave 0 at step 1 (0.3 ms): tick 1 is due at 100.3 ms and
 * runs in the first hook at or after it, step 335 (100.5 ms), as of 100.3 ms. By then writes
 * completed at steps 100, 200, 300: 384 samples < 500, so the write I/O percentile opens the
 * write window (until 1100.3 ms) and returns -1; reads have 334 waves of 256 samples: p90
 * bucket 0. Not congested: read p99 0 is remembered, nothing resized.
 * The completion at step 335 arms tick 2 at 200.5 ms, run at step 669 (200.7 ms): writes
 * completed at steps 400, 500, 600 too, 768 samples >= 500: write p90 bucket 7, congested.
 * Read p99 bucket 0: depth 256 * 1 >> 2 = 64. Write p99 bucket 7: 128 * 8 >> 2 = 256,
 * clamped to 128.
 * Later ticks alternate between congested ones (>= 500 write samples) and ones where the
 * writes are still gathering; each congested one quarters the read depth: 16, 4, then 1,
 * the floor (1 * 1 >> 2 = 0 -> 1). The write depth never leaves 128.
 */
static void congestion_run(uint64_t base)
{
	static const uint64_t expect[] = { 64, 16, 4, 1 };
	const struct wave w = { 1, 100, 128 };
	uint64_t s, last = 256;
	unsigned seen = 0;

	k_setup(1024, base);
	for (s = 0; s < 669; s++)
		k_step(&w, base, s);
	assert_int_equal(k_stat("ticks"), 1);
	assert_int_equal(k_stat("read_depth"), 256);
	assert_int_equal(k_stat("resizes"), 0);
	k_step(&w, base, 669);
	assert_int_equal(k_stat("ticks"), 2);
	assert_int_equal(k_stat("read_depth"), 64);
	assert_int_equal(k_stat("write_depth"), 128);
	assert_int_equal(k_stat("resizes"), 1);
	last = 64;
	seen = 1;
	for (s = 670; s < 4000; s++) { /* to 1.2 s */
		uint64_t d;

		k_step(&w, base, s);
		d = k_stat("read_depth");
		assert_int_equal(k_stat("write_depth"), 128);
		if (d != last) {
			assert_true(seen < TH_LEN(expect));
			assert_int_equal(d, expect[seen]);
			seen++;
			last = d;
		}
	}
	assert_int_equal(seen, TH_LEN(expect));
	assert_int_equal(k_stat("read_depth"), 1);
	assert_int_equal(k_stat("discard_depth"), 64);
	assert_int_equal(k_stat("other_depth"), 16);
	k_teardown();
}

static void test_congestion_throttles_good_domain(void **state)
{
	(void)state;
	congestion_run(0);
}

/* The same run with host time crossing 2^64 between ticks 1 and 2: the same depths. */
static void test_congestion_across_wrap(void **state)
{
	(void)state;
	congestion_run((uint64_t)0 - 150 * MS);
}

/* ---- 3. no congestion, no change --------------------------------------------------------- */

/*
 * Reads 0.3 ms (bucket 0), writes 0.9 ms (bucket 0) in waves of 128 every 3 steps: every
 * p90 and p99 is within target, so no tick resizes anything over 1.2 s (11 ticks: the first
 * at 100.3 ms, then about every 100.3 ms).
 */
static void test_no_congestion_no_change(void **state)
{
	const struct wave w = { 1, 3, 128 };
	uint64_t s;

	(void)state;
	k_setup(1024, 5 * MS);
	for (s = 0; s < 4000; s++)
		k_step(&w, 5 * MS, s);
	assert_true(k_stat("ticks") >= 10);
	assert_int_equal(k_stat("resizes"), 0);
	assert_int_equal(k_stat("read_depth"), 256);
	assert_int_equal(k_stat("write_depth"), 128);
	k_teardown();
}

/* ---- 4. growth --------------------------------------------------------------------------- */

/*
 * To get READ to 32: congestion as in scenario 2 until the read depth is 64; then reads of
 * 0.6 ms (bucket 1) under the same write load: the next congested tick gives 64 * 2 >> 2 =
 * 32. (That tick's read histogram holds at most one wave of 0.3 ms reads, 64 samples, against
 * thousands of 0.6 ms ones: p99 bucket 1.)
 * 30 ms without new requests let everything in flight finish (a tick there sees under 500
 * samples of either domain: no change). Then reads take 2.7 ms (bucket 5, 1.25-1.5 x
 * target), no writes. The reads' own p90 is bad, and with p99 in bucket 5 the depth grows
 * either way: 32 * 6 >> 2 = 48. Every write sample left is slow (bucket 7), so the write
 * depth can only grow, and it is at its cap of 128.
 */
static void test_growth(void **state)
{
	const struct wave a = { 1, 100, 128 }, b = { 2, 100, 128 }, c = { 9, 0, 0 };
	const struct wave idle = { 0, 0, 0 };
	uint64_t s = 0, end;

	(void)state;
	k_setup(1024, 0);
	for (; k_stat("read_depth") == 256; s++)
		k_step(&a, 0, s);
	assert_int_equal(k_stat("read_depth"), 64);
	/* every step is run, so each completion happens exactly when due */
	for (; k_stat("read_depth") == 64 && s < 100000; s++)
		k_step(&b, 0, s);
	assert_int_equal(k_stat("read_depth"), 32);
	for (end = s + 100; s < end; s++)
		k_step(&idle, 0, s);
	assert_int_equal(elv_queue_nr_in_flight(kq), 0);
	assert_int_equal(k_stat("read_depth"), 32);
	for (; k_stat("read_depth") == 32 && s < 200000; s++)
		k_step(&c, 0, s);
	assert_int_equal(k_stat("read_depth"), 48);
	assert_int_equal(k_stat("write_depth"), 128);
	k_teardown();
}

/* ---- 5. the sample gate ------------------------------------------------------------------ */

static void k_one(uint8_t op, uint64_t at, uint64_t service)
{
	struct kio *io;

	know = at;
	io = k_add(op, 0);
	assert_int_equal(k_dispatch(0), 1);
	know = at + service;
	k_complete(io);
}

/*
 * Times in ms.
 * 0-4: 500 writes of 1 ms (4 waves of 125): tick at 1 + 100 = 101 (run at the read added at
 *   200). Write I/O p90 bucket 0 with 500 samples, not congested; write p99 bucket 0 is
 *   remembered.
 * 200-398: read i (0..99) at 200 + 2i; the first 89 take 0.3 ms (bucket 0), the last 11
 *   2.7 ms (bucket 5). The first read completion (200.3) arms a tick at 300.3: 50 read samples,
 *   under 500 and the read window is unset, so it opens until 1300.3 and the percentile is
 *   -1. The completion at 300.3 arms the next at 400.3, run by the completion of read 99 at
 *   400.7 (398 + 2.7) before its own sample: 99 samples, -1. That completion arms a tick at
 *   500.7, run by a flush at 1000 (flushes arm none): 100 samples, before 1300.3, -1.
 *   Four ticks, nothing changed: write depth 128.
 * 1200: a write of 1 ms completes at 1201, tick at 1301 (run by a flush at 1301.5): 1301 >=
 *   1300.3, so the read I/O percentile is read with exactly the 100 samples: want = 90,
 *   bucket 0 holds 89 < 90, the rest is in bucket 5: p90 = 5, congested. The read total
 *   percentile finds the window just cleared, opens a new one and returns -1 (the shared
 *   window), so reads keep their depth. The write I/O and total percentiles have 1 sample:
 *   -1; the remembered write p99 0 stands in: 128 * 1 >> 2 = 32.
 * Had the tick come before 1300.3 (first test below), nothing would have moved; and with
 * only 10 slow reads of 100 the p90 would have been bucket 0 (second test).
 */
static void gate_run(unsigned slow_reads, uint64_t late_write_at, uint64_t expect_write_depth)
{
	unsigned i, j;

	k_setup(1024, 0);
	for (j = 0; j < 4; j++) {
		know = j * MS;
		k_add_n(125, W, 0);
		kservice[W] = MS;
		assert_int_equal(k_dispatch(0), 125);
		know = (j + 1) * MS;
		k_complete_due();
	}
	/* a slow read is still in flight when the next one comes: completions in time order */
	for (i = 0; i < 100; i++) {
		k_advance(200 * MS + 2 * i * MS);
		k_add(R, 0);
		kservice[R] = i < 100 - slow_reads ? 3 * MS / 10 : 27 * MS / 10;
		assert_int_equal(k_dispatch(0), 1);
	}
	k_advance(401 * MS);
	assert_int_equal(k_stat("ticks"), 3); /* 101, 300.3 and 400.3 */
	k_one(ELV_OP_FLUSH, 1000 * MS, MS); /* runs the tick of 500.7 */
	assert_int_equal(k_stat("ticks"), 4);
	assert_int_equal(k_stat("write_depth"), 128);
	assert_int_equal(k_stat("read_depth"), 256);
	k_one(W, late_write_at, MS);
	k_one(ELV_OP_FLUSH, late_write_at + 101 * MS + MS / 2, MS);
	assert_int_equal(k_stat("ticks"), 5);
	assert_int_equal(k_stat("write_depth"), expect_write_depth);
	assert_int_equal(k_stat("read_depth"), 256);
	k_teardown();
}

static void test_sample_gate(void **state)
{
	(void)state;
	gate_run(11, 1200 * MS, 32);
}

/* The late write at 1190 ms: its tick at 1291 is before 1300.3, the reads still gather. */
static void test_sample_gate_not_yet(void **state)
{
	(void)state;
	gate_run(11, 1190 * MS, 128);
}

/* 10 slow reads of 100: bucket 0 holds 90 >= 90, p90 = 0, nothing congested. */
static void test_sample_gate_percentile_edge(void **state)
{
	(void)state;
	gate_run(10, 1200 * MS, 128);
}

/* ---- 6. async reservation ---------------------------------------------------------------- */

/*
 * nr_requests 64: async requests may have 64 * 75 / 100 = 48 in flight, all requests 64.
 * 100 async writes: 48 go (six WRITE batches of 8), the 49th call finds the async share
 * used up and no sync write behind: EAGAIN. Then 10 sync writes and 100 reads: the WRITE
 * batch restarts with the sync writes behind the capped async head (8, a full batch), then
 * READ: 8 reads, and the pool of 64 is full: sync requests found their 16 slots.
 */
static void test_async_reservation(void **state)
{
	unsigned i, reads = 0, sync_w = 0;

	(void)state;
	k_setup(64, 0);
	k_add_n(100, W, 0);
	assert_int_equal(k_dispatch(0), 48);
	assert_int_equal(k_stat("admission_waits"), 1);
	k_add_n(10, W, ELV_RQ_SYNC);
	k_add_n(100, R, 0);
	assert_int_equal(k_dispatch(0), 16);
	for (i = 0; i < KPOOL; i++) {
		if (!kpool[i].in_flight)
			continue;
		reads += kpool[i].rq.op == R;
		sync_w += kpool[i].rq.op == W && (kpool[i].rq.flags & ELV_RQ_SYNC);
	}
	assert_int_equal(reads, 8);
	assert_int_equal(sync_w, 8);
	assert_int_equal(elv_queue_nr_in_flight(kq), 64);
	/* nothing is waiting on a tick: no event */
	assert_int_equal(elv_next_event(kq), ELV_TIME_NEVER);
	/* a forced dispatch (a drain) passes the pool and is counted */
	assert_int_equal(k_dispatch(ELV_DISPATCH_FORCE), 52 + 2 + 92);
	assert_true(k_stat("forced_over") > 0);
	k_teardown();
}

/* ---- tokens ------------------------------------------------------------------------------ */

/*
 * OTHER has 16 tokens. 17 flushes: 16 go, the 17th waits (a token wait). A requeue returns
 * its token; the core sends the requeued flush again first without asking the policy, and the
 * next dispatch lets the 17th through on the returned token. 17 in flight on 16 tokens, then
 * all complete and every token is back (checked by elv_queue_check: tokens <= in flight).
 */
static void test_requeue_returns_token(void **state)
{
	struct kio *first = NULL;
	struct elv_request *rq;
	unsigned i;

	(void)state;
	k_setup(1024, 0);
	k_add_n(17, ELV_OP_FLUSH, 0);
	assert_int_equal(k_dispatch(0), 16);
	assert_int_equal(k_stat("token_waits"), 1);
	for (i = 0; i < KPOOL && !first; i++)
		if (kpool[i].in_flight)
			first = &kpool[i];
	assert_non_null(first);
	assert_int_equal(elv_requeue(kq, &first->rq, know), 0);
	first->in_flight = 0;
	k_check();
	assert_int_equal(elv_dispatch(kq, know, 0, &rq), 0);
	assert_ptr_equal(rq, &first->rq);
	first->in_flight = 1;
	k_check();
	assert_int_equal(k_dispatch(0), 1);
	assert_int_equal(elv_queue_nr_in_flight(kq), 17);
	k_teardown();
}

/* Requests dispatched by noop complete under kyber after a switch: no token is returned
 * that was never taken, and the queue stays consistent. */
static void test_switch_in_flight(void **state)
{
	(void)state;
	k_setup(1024, 0);
	assert_int_equal(elv_switch(kq, elv_policy_find("noop"), know), 0);
	k_add_n(20, R, 0);
	assert_int_equal(k_dispatch(0), 20);
	k_add_n(5, W, 0);
	assert_int_equal(elv_switch(kq, elv_policy_find("kyber"), know), 0);
	k_check();
	assert_int_equal(k_dispatch(0), 5);
	know += 100 * STEP;
	k_complete_due();
	assert_int_equal(elv_queue_nr_in_flight(kq), 0);
	k_teardown();
}

/*
 * Merges: a write ending where the youngest queued write starts joins it at the front
 * (find_start looks at the FIFO's tail); one ending at a request that is no longer the
 * youngest is not found (Kyber keeps no sector order), and a read never joins a write.
 * Back merges are the core's and work at any depth.
 */
static void test_merges(void **state)
{
	static struct th h;
	static const uint64_t expect[] = { 492, 92, 292, 500, 84 };

	(void)state;
	th_setup(&h, "kyber", NULL, 1);
	th_add_new(&h, W, 100, 8);
	assert_int_equal(th_add(&h, th_new(&h, W, 92, 8)), 1);   /* front: 92-107 */
	assert_int_equal(th_add(&h, th_new(&h, W, 108, 8)), 1);  /* back: 92-115 */
	th_add_new(&h, W, 300, 8);
	assert_int_equal(th_add(&h, th_new(&h, W, 116, 8)), 1);  /* back, not the youngest */
	assert_int_equal(th_add(&h, th_new(&h, W, 292, 8)), 1);  /* front of the youngest */
	th_add_new(&h, W, 500, 8);
	assert_int_equal(th_add(&h, th_new(&h, W, 84, 8)), 0);   /* 92 is not the youngest */
	assert_int_equal(th_add(&h, th_new(&h, R, 492, 8)), 0);  /* a read: its own domain */
	assert_int_equal(h.nr_merges, 4);
	assert_int_equal(th_run(&h, 100, 0), 5);
	/* the read first (the current domain), then the writes in arrival order; a merged
	 * request keeps its place */
	th_expect_sectors(&h, expect, TH_LEN(expect));
	th_teardown(&h);
}

/* ---- tunables ------------------------------------------------------------------------------ */

static void test_tunable_ranges(void **state)
{
	static const char *const names[] = { "read_lat_nsec", "write_lat_nsec" };
	static const int64_t defaults[] = { 2000000, 10000000 };
	unsigned i;

	(void)state;
	k_setup(0, 0);
	for (i = 0; i < 2; i++) {
		int64_t v;

		assert_int_equal(elv_tunable_get(kq, names[i], &v), 0);
		assert_int_equal(v, defaults[i]);
		assert_int_equal(elv_tunable_set(kq, names[i], 0), ELV_ERANGE);
		assert_int_equal(elv_tunable_set(kq, names[i], -1), ELV_ERANGE);
		assert_int_equal(elv_tunable_set(kq, names[i], 3600000000001ll), ELV_ERANGE);
		assert_int_equal(elv_tunable_get(kq, names[i], &v), 0);
		assert_int_equal(v, defaults[i]);
		assert_int_equal(elv_tunable_set(kq, names[i], 1), 0);
		assert_int_equal(elv_tunable_set(kq, names[i], 3600000000000ll), 0);
		assert_int_equal(elv_tunable_get(kq, names[i], &v), 0);
		assert_int_equal(v, 3600000000000ll);
		k_check();
	}
	assert_int_equal(elv_tunable_set(kq, "discard_lat_nsec", 1), ELV_ENOENT);
	k_teardown();
}

/*
 * read_lat_nsec 100 us: buckets 25 us wide, a 0.3 ms read is bucket min(299999 / 25000, 7)
 * = 7. The load of scenario 3 (nothing slow for the default targets) is now congested by
 * its own reads, and the good writes (p99 bucket 0) are cut at the first tick (100.3 ms,
 * run at step 335, both domains with >= 500 samples): 128 * 1 >> 2 = 32. The reads, p99
 * bucket 7, would double but are at their cap.
 */
static void test_read_target_moves_buckets(void **state)
{
	const struct wave w = { 1, 3, 128 };
	uint64_t s;

	(void)state;
	k_setup(1024, 0);
	assert_int_equal(elv_tunable_set(kq, "read_lat_nsec", 100000), 0);
	for (s = 0; s < 400 && k_stat("write_depth") == 128; s++)
		k_step(&w, 0, s);
	assert_int_equal(k_stat("write_depth"), 32);
	assert_int_equal(k_stat("read_depth"), 256);
	k_teardown();
}

/* ---- time near 2^64 ------------------------------------------------------------------------ */

/*
 * A tick due exactly at 2^64 - 1 is reported as 0 (one nanosecond later), only while a
 * dispatch waits for tokens. A hook at 2^64 - 2 does not run it; dispatch at 0 (after the
 * wrap) does.
 */
static void test_tick_at_wrap(void **state)
{
	const uint64_t top = UINT64_MAX;
	struct kio *io = NULL;
	unsigned i;

	(void)state;
	k_setup(1024, top - 200 * MS);
	k_add_n(257, R, 0);
	assert_int_equal(k_dispatch(0), 256);
	assert_int_equal(elv_next_event(kq), ELV_TIME_NEVER); /* waiting, but no tick armed */
	know = top - 100 * MS;
	for (i = 0; i < KPOOL && !io; i++)
		if (kpool[i].in_flight)
			io = &kpool[i];
	k_complete(io); /* arms the tick at top - 100 ms + 100 ms = 2^64 - 1 */
	assert_int_equal(elv_next_event(kq), 0); /* still held back since the last dispatch */
	assert_int_equal(k_dispatch(0), 1);
	k_add(R, 0);
	assert_int_equal(k_dispatch(0), 0);
	assert_int_equal(elv_next_event(kq), 0);
	know = top - 1;
	assert_int_equal(k_dispatch(0), 0);
	assert_int_equal(k_stat("ticks"), 0);
	assert_int_equal(elv_next_event(kq), 0);
	know = 0;
	assert_int_equal(k_dispatch(0), 0);
	assert_int_equal(k_stat("ticks"), 1);
	assert_int_equal(elv_next_event(kq), ELV_TIME_NEVER);
	k_teardown();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_batching_ratio),
		cmocka_unit_test(test_congestion_throttles_good_domain),
		cmocka_unit_test(test_congestion_across_wrap),
		cmocka_unit_test(test_no_congestion_no_change),
		cmocka_unit_test(test_growth),
		cmocka_unit_test(test_sample_gate),
		cmocka_unit_test(test_sample_gate_not_yet),
		cmocka_unit_test(test_sample_gate_percentile_edge),
		cmocka_unit_test(test_async_reservation),
		cmocka_unit_test(test_requeue_returns_token),
		cmocka_unit_test(test_switch_in_flight),
		cmocka_unit_test(test_merges),
		cmocka_unit_test(test_tunable_ranges),
		cmocka_unit_test(test_read_target_moves_buckets),
		cmocka_unit_test(test_tick_at_wrap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
