/*
 * Host time at its edges, for every built-in policy: a clock that starts a few milliseconds
 * before 2^64 and wraps to 0 while requests wait, idle (CFQ and BFQ slice_idle) and anticipation
 * (antic_expire) windows that end across the wrap, and a host clock that steps back by an
 * hour or jitters back by a little. Nothing may hang, every request is dispatched exactly
 * once, no request waits for the size of a step back, and elv_queue_check() is clean after
 * every call.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "elevator/policy.h"

#define NR_IO 512
#define NR_STREAMS 3
#define MAX_DEPTH 4
#define MS ELV_NSEC_PER_MSEC
#define HOUR (3600ull * 1000u * MS)
#define WRAP_AT(before) ((uint64_t)0 - (uint64_t)(before)) /* @before ns ahead of 2^64 */

struct io {
	struct elv_request rq;
	unsigned dispatched; /* times handed out by elv_dispatch() */
	unsigned absorbed;   /* times handed back through the merge callback */
	unsigned completed;
	uint64_t added_at;   /* real time of elv_add() */
};

struct host {
	uint64_t mem[65536]; /* 512 KiB: room for any built-in policy */
	struct elv_queue *q;
	struct elv_config cfg;
	struct elv_stream st[NR_STREAMS];
	struct io io[NR_IO];
	unsigned nr_io;
	struct io *inflight[MAX_DEPTH];
	unsigned nr_inflight, depth;
	uint64_t now;  /* the host's clock, passed to every call; it may step back */
	uint64_t real; /* time that really passed (ns), for measuring waits */
	uint64_t rng;
	uint64_t max_wait; /* longest real time from elv_add() to dispatch */
};

static struct host H;
static void (*trace_hook)(void *ctx, const struct elv_trace_event *ev); /* for setup_q() */
static int no_raising; /* for setup_q(): bfq with low_latency off (no weight raising) */

static void on_merge(void *ctx, struct elv_request *into, struct elv_request *absorbed,
		     enum elv_merge_kind kind)
{
	(void)ctx;
	(void)into;
	(void)kind;
	elv_container_of(absorbed, struct io, rq)->absorbed++;
}

/* Time passes: the host's clock and the real one move together. */
static void advance(struct host *h, uint64_t ns)
{
	h->now += ns;
	h->real += ns;
}

static uint64_t rnd(struct host *h)
{
	h->rng ^= h->rng << 13;
	h->rng ^= h->rng >> 7;
	h->rng ^= h->rng << 17;
	return h->rng;
}

static void check(const struct host *h)
{
	assert_int_equal(elv_queue_check(h->q), 0);
}

static void setup_q(struct host *h, const struct elv_policy *p, uint64_t start, unsigned depth)
{
	unsigned i;

	memset(h, 0, sizeof(*h));
	h->cfg.dev.rotational = 1;
	h->cfg.dev.queue_depth = (uint16_t)depth;
	h->cfg.merge = on_merge;
	h->cfg.trace = trace_hook;
	h->cfg.ctx = h;
	h->depth = depth;
	h->now = start;
	h->rng = 0x9E3779B97F4A7C15ull;
	assert_non_null(p);
	assert_true(elv_queue_size(p, &h->cfg) <= sizeof(h->mem));
	assert_int_equal(elv_queue_init(&h->q, h->mem, sizeof(h->mem), p, &h->cfg), 0);
	if (no_raising)
		assert_int_equal(elv_tunable_set(h->q, "low_latency", 0), 0);
	for (i = 0; i < NR_STREAMS; i++) {
		h->st[i].ioprio = ELV_PRIO(ELV_PRIO_BE, ELV_PRIO_DEFAULT_LEVEL);
		assert_int_equal(elv_stream_init(h->q, &h->st[i], h->now), 0);
		check(h);
	}
}

static struct io *add(struct host *h, uint8_t op, uint64_t sector, uint32_t n, int stream)
{
	struct io *io;
	int r;

	assert_true(h->nr_io < NR_IO);
	io = &h->io[h->nr_io++];
	elv_request_init(&io->rq);
	io->rq.sector = sector;
	io->rq.nr_sectors = n;
	io->rq.op = op;
	io->rq.flags = op == ELV_OP_READ ? ELV_RQ_SYNC : 0;
	io->rq.stream = stream >= 0 ? &h->st[stream] : NULL;
	io->added_at = h->real;
	r = elv_add(h->q, &io->rq, h->now);
	assert_true(r == 0 || r == 1);
	assert_int_equal(io->absorbed, (unsigned)r);
	check(h);
	return io;
}

/* One elv_dispatch() if the device has room: the request, or NULL. */
static struct io *dispatch(struct host *h)
{
	struct elv_request *rq = NULL;
	struct io *io;
	int r;

	if (h->nr_inflight >= h->depth)
		return NULL;
	r = elv_dispatch(h->q, h->now, 0, &rq);
	check(h);
	if (r == ELV_EAGAIN)
		return NULL;
	assert_int_equal(r, 0);
	io = elv_container_of(rq, struct io, rq);
	assert_int_equal(io->absorbed, 0);
	assert_int_equal(++io->dispatched, 1);
	if (h->real - io->added_at > h->max_wait)
		h->max_wait = h->real - io->added_at;
	h->inflight[h->nr_inflight++] = io;
	return io;
}

static void complete_one(struct host *h)
{
	struct io *io = h->inflight[0];

	assert_true(h->nr_inflight > 0);
	memmove(h->inflight, h->inflight + 1, --h->nr_inflight * sizeof(h->inflight[0]));
	assert_int_equal(elv_complete(h->q, &io->rq, h->now), 0);
	io->completed++;
	check(h);
}

static uint32_t queued(const struct host *h)
{
	struct elv_stats st;

	assert_int_equal(elv_stats(h->q, &st), 0);
	return st.queued;
}

/*
 * Serve until nothing is queued or in flight: fill the device, complete one request per
 * @service ns, and when the policy idles with nothing in flight, sleep until elv_next_event(),
 * which must lie ahead within @max_idle ns (serial arithmetic on the host's clock).
 */
static void settle(struct host *h, uint64_t service, uint64_t max_idle)
{
	unsigned guard = 0;
	uint64_t ev;

	while (queued(h) || h->nr_inflight) {
		assert_true(++guard < 100000);
		while (dispatch(h))
			;
		if (h->nr_inflight) {
			advance(h, service);
			complete_one(h);
			continue;
		}
		if (!queued(h))
			break;
		ev = elv_next_event(h->q);
		assert_true(ev != ELV_TIME_NEVER);
		assert_true(elv_time_after(ev, h->now));
		assert_true(ev - h->now <= max_idle);
		advance(h, ev - h->now);
	}
}

/* Every request was dispatched and completed once, or absorbed once; then tear down. */
static void finish(struct host *h)
{
	unsigned i;

	assert_int_equal(queued(h), 0);
	assert_int_equal(h->nr_inflight, 0);
	for (i = 0; i < h->nr_io; i++) {
		const struct io *io = &h->io[i];

		assert_int_equal(io->dispatched + io->absorbed, 1);
		assert_int_equal(io->completed, io->dispatched);
	}
	for (i = 0; i < NR_STREAMS; i++)
		assert_int_equal(elv_stream_exit(h->q, &h->st[i], h->now), 0);
	assert_int_equal(elv_queue_exit(h->q), 0);
}

/*
 * A mixed load for @steps host steps of 0.2-1 ms: two sequential sync readers, an async
 * writer and anonymous reads, with the device completing as it goes; idles are followed
 * through elv_next_event(). @jitter > 0 makes the host pass a clock up to @jitter ns behind
 * its own now and then (unsynchronised clocks).
 */
static void mixed_load(struct host *h, unsigned steps, uint64_t jitter)
{
	uint64_t next_sector[2] = { 1000, 5000000 };
	uint64_t skew = 0;
	unsigned i, k;
	uint64_t ev;

	for (i = 0; i < steps && h->nr_io + 4 < NR_IO; i++) {
		if (jitter && rnd(h) % 4 == 0) {
			skew = rnd(h) % jitter; /* this step reads a clock that lags */
			h->now -= skew;
		}
		k = (unsigned)(rnd(h) % 8);
		if (k < 4) {
			add(h, ELV_OP_READ, next_sector[k & 1], 8, (int)(k & 1));
			next_sector[k & 1] += 8;
		} else if (k < 6) {
			add(h, ELV_OP_WRITE, (rnd(h) % 100000) * 8, 8, 2);
		} else if (k == 6) {
			add(h, ELV_OP_READ, (rnd(h) % 100000) * 8, 16, -1);
		}
		while (dispatch(h))
			;
		if (h->nr_inflight && rnd(h) % 2)
			complete_one(h);
		if (!h->nr_inflight && queued(h)) {
			/* The policy idles: its timer must be ahead and near. */
			ev = elv_next_event(h->q);
			if (ev != ELV_TIME_NEVER && elv_time_after(ev, h->now)) {
				assert_true(ev - h->now <= 1000u * MS);
				advance(h, ev - h->now);
				while (dispatch(h))
					;
			}
		}
		h->now += skew;
		skew = 0;
		advance(h, 200000u + rnd(h) % 800000u);
	}
}

/* Every built-in policy, counted: the four of this library and nothing silently missing. */
static unsigned nr_policies(void)
{
	static const char *const names[] = { "noop", "deadline", "anticipatory", "cfq", "bfq" };
	unsigned i, j, seen = 0;

	for (i = 0; elv_policy_at(i) != NULL; i++)
		for (j = 0; j < 5; j++)
			seen += strcmp(elv_policy_name(elv_policy_at(i)), names[j]) == 0;
	assert_int_equal(seen, 5);
	assert_true(i >= 5);
	return i;
}

/* ---- the clock wraps ------------------------------------------------------------------ */

static void test_wrap_mixed_every_policy(void **state)
{
	static const uint64_t before[] = { 1, 3 * MS, 20 * MS, 100 * MS };
	unsigned n = nr_policies(), i, b, runs = 0;

	(void)state;
	for (i = 0; i < n; i++) {
		for (b = 0; b < 4; b++) {
			setup_q(&H, elv_policy_at(i), WRAP_AT(before[b]), 2);
			mixed_load(&H, 400, 0);
			settle(&H, 300000u, 1000u * MS);
			/* The run went past 2^64: the clock reads small again. */
			assert_true(H.now < WRAP_AT(before[b]));
			assert_true(H.max_wait < 3000u * MS);
			finish(&H);
			runs++;
		}
	}
	assert_int_equal(runs, 4 * n);
}

/* Around 2^63 the sign of a difference flips: nothing special may happen there either. */
static void test_half_range_every_policy(void **state)
{
	unsigned n = nr_policies(), i;

	(void)state;
	for (i = 0; i < n; i++) {
		setup_q(&H, elv_policy_at(i), ((uint64_t)1 << 63) - 2 * MS, 2);
		mixed_load(&H, 300, 0);
		settle(&H, 300000u, 1000u * MS);
		assert_true(H.now > ((uint64_t)1 << 63));
		finish(&H);
	}
}

/* A policy's default for tunable @name, in its documented unit. */
static int64_t tunable_default(const struct elv_policy *p, const char *name)
{
	unsigned nr = 0, i;
	const struct elv_tunable *t = elv_policy_tunables(p, &nr);

	for (i = 0; i < nr; i++)
		if (strcmp(t[i].name, name) == 0)
			return t[i].def;
	fail_msg("%s has no tunable %s", elv_policy_name(p), name);
	return 0;
}

/*
 * A sync reader's request completes at @done; another stream's read waits. The policy idles
 * for the reader until @done + @window, which lies past 2^64: before it dispatch answers
 * EAGAIN, elv_next_event() says exactly when, and at that time the waiting read goes.
 */
static void idle_across_wrap(const char *policy, uint64_t done, uint64_t window)
{
	struct io *a, *b;
	uint64_t end = done + window;

	setup_q(&H, elv_policy_find(policy), done - 2 * MS, 1);
	a = add(&H, ELV_OP_READ, 1000, 8, 0);
	assert_ptr_equal(dispatch(&H), a);
	H.now = done;
	complete_one(&H);
	b = add(&H, ELV_OP_READ, 90000000, 8, 1);
	assert_null(dispatch(&H));
	assert_true(elv_is_idling(H.q));
	assert_int_equal(elv_next_event(H.q), elv_time_event(end));
	H.now = end - 1; /* one nanosecond early: still waiting */
	assert_null(dispatch(&H));
	H.now = elv_time_event(end);
	assert_ptr_equal(dispatch(&H), b);
	H.now += MS;
	complete_one(&H);
	finish(&H);
}

static void test_cfq_slice_idle_across_wrap(void **state)
{
	uint64_t idle;

	(void)state;
	idle = (uint64_t)tunable_default(&elv_policy_cfq, "slice_idle") * MS;
	assert_true(idle > 2 * MS);
	idle_across_wrap("cfq", WRAP_AT(idle / 2), idle);
	idle_across_wrap("cfq", WRAP_AT(1), idle);
	/* The idle end lands on UINT64_MAX itself: reported one nanosecond later, as 0. */
	idle_across_wrap("cfq", UINT64_MAX - idle, idle);
}

/*
 * bfq idles slice_idle for a drained sync queue on a rotating disk without command queueing
 * (idling boosts throughput there). With low_latency off no stream is weight-raised: a raised
 * queue would idle at least 20 ms, and the second reader, raised too, would end the wait.
 */
static void test_bfq_slice_idle_across_wrap(void **state)
{
	uint64_t idle;

	(void)state;
	idle = (uint64_t)tunable_default(&elv_policy_bfq, "slice_idle") * MS;
	assert_true(idle > 2 * MS);
	no_raising = 1;
	idle_across_wrap("bfq", WRAP_AT(idle / 2), idle);
	idle_across_wrap("bfq", WRAP_AT(1), idle);
	idle_across_wrap("bfq", UINT64_MAX - idle, idle);
	no_raising = 0;
}

static void test_anticipatory_window_across_wrap(void **state)
{
	uint64_t antic;

	(void)state;
	antic = (uint64_t)tunable_default(&elv_policy_anticipatory, "antic_expire") * 1000u; /* us */
	assert_true(antic > 2 * MS);
	idle_across_wrap("anticipatory", WRAP_AT(antic / 2), antic);
	idle_across_wrap("anticipatory", WRAP_AT(1), antic);
	idle_across_wrap("anticipatory", UINT64_MAX - antic, antic);
}

/* The awaited reader comes back inside a window that spans the wrap: it is served at once. */
static void test_idle_hit_across_wrap(void **state)
{
	static const char *const policies[] = { "anticipatory", "cfq" };
	struct io *a, *b, *c;
	unsigned i;

	(void)state;
	for (i = 0; i < 2; i++) {
		setup_q(&H, elv_policy_find(policies[i]), WRAP_AT(3 * MS), 1);
		a = add(&H, ELV_OP_READ, 1000, 8, 0);
		assert_ptr_equal(dispatch(&H), a);
		advance(&H, MS); /* 2 ms before 2^64 */
		complete_one(&H);
		b = add(&H, ELV_OP_READ, 90000000, 8, 1);
		assert_null(dispatch(&H));
		advance(&H, 3 * MS); /* 1 ms past the wrap, inside the window */
		c = add(&H, ELV_OP_READ, 1008, 8, 0);
		assert_ptr_equal(dispatch(&H), c);
		advance(&H, MS);
		complete_one(&H);
		settle(&H, MS, 1000u * MS);
		assert_int_equal(b->dispatched, 1);
		finish(&H);
	}
}

/*
 * FIFO expiry across the wrap: a far read arrives just before 2^64 while a sequential reader
 * keeps the head busy below it. The library's elevators bound every wait (noop by its FIFO,
 * the others by read deadlines or slices): the far read must go within a second. (Classic
 * seek-first policies such as SSTF may starve it by design, so they are not asked.)
 */
static void test_expiry_across_wrap(void **state)
{
	static const char *const bounded[] = { "noop", "deadline", "anticipatory", "cfq", "bfq" };
	unsigned i, k;
	struct io *far;
	uint64_t seq = 1000, t0;

	(void)state;
	for (i = 0; i < 5; i++) {
		setup_q(&H, elv_policy_find(bounded[i]), WRAP_AT(50 * MS), 1);
		t0 = H.now;
		far = add(&H, ELV_OP_READ, 800000000, 8, 1);
		for (k = 0; k < 3000 && !far->dispatched; k++) {
			add(&H, ELV_OP_READ, seq, 8, 0);
			seq += 8;
			while (dispatch(&H))
				;
			advance(&H, MS / 2);
			if (H.nr_inflight)
				complete_one(&H);
			if (H.nr_io + 2 >= NR_IO)
				break;
		}
		assert_int_equal(far->dispatched, 1);
		/* Served within a second of its arrival, across the wrap. */
		assert_true(H.now - t0 < 1000u * MS);
		settle(&H, MS / 2, 1000u * MS);
		finish(&H);
		seq = 1000;
	}
}

/* ---- the clock steps back -------------------------------------------------------------- */

/*
 * The host's clock is set back an hour while a reader's idle window is open and another
 * stream's read waits, and again in the middle of a mixed load: no request waits anywhere
 * near an hour, elv_next_event() stays in the host's timeline, nothing is lost.
 */
static void step_back(const struct elv_policy *p, uint64_t start)
{
	struct io *a, *b;
	uint64_t t;

	setup_q(&H, p, start, 1);
	a = add(&H, ELV_OP_READ, 1000, 8, 0);
	assert_ptr_equal(dispatch(&H), a);
	advance(&H, MS);
	complete_one(&H);
	b = add(&H, ELV_OP_READ, 90000000, 8, 1);
	dispatch(&H); /* may idle for the reader */
	H.now -= HOUR;
	t = H.now;
	settle(&H, MS, 1000u * MS);
	assert_int_equal(b->dispatched, 1);
	assert_true(H.now - t < 1000u * MS);
	mixed_load(&H, 150, 0);
	H.now -= HOUR;
	mixed_load(&H, 150, 0);
	settle(&H, 300000u, 1000u * MS);
	assert_true(H.max_wait < 3000u * MS);
	finish(&H);
}

static void test_step_back_hour_every_policy(void **state)
{
	unsigned n = nr_policies(), i;

	(void)state;
	for (i = 0; i < n; i++) {
		step_back(elv_policy_at(i), 5000u * HOUR);
		step_back(elv_policy_at(i), WRAP_AT(2 * MS)); /* the window spans the wrap too */
		step_back(elv_policy_at(i), HOUR / 2);        /* back past 0 */
	}
}

/* A host clock that jitters back by up to 5 ms (several unsynchronised clocks). */
static void test_jitter_every_policy(void **state)
{
	unsigned n = nr_policies(), i;

	(void)state;
	for (i = 0; i < n; i++) {
		setup_q(&H, elv_policy_at(i), WRAP_AT(30 * MS), 2);
		mixed_load(&H, 450, 5 * MS);
		settle(&H, 300000u, 1000u * MS);
		assert_true(H.max_wait < 3000u * MS);
		finish(&H);
	}
}

/*
 * What a step back does to the queue's time, seen through arrival times and trace events: a
 * small step (skew) is clamped to the latest time seen; a large one keeps the queue's time
 * going from there while the trace reports the host's own clock.
 */
static uint64_t last_trace_now;

static void on_trace(void *ctx, const struct elv_trace_event *ev)
{
	(void)ctx;
	last_trace_now = ev->now;
}

static void test_step_back_clamps(void **state)
{
	unsigned n = nr_policies(), i;
	struct io *a, *b, *c;
	uint64_t t = WRAP_AT(MS);

	(void)state;
	trace_hook = on_trace;
	for (i = 0; i < n; i++) {
		setup_q(&H, elv_policy_at(i), t, 1);
		a = add(&H, ELV_OP_WRITE, 1000, 8, -1);
		assert_true(a->rq.ELV_PRIVATE(time) == t);
		/* 1 ms back: skew, clamped to the latest time seen. */
		H.now = t - MS;
		b = add(&H, ELV_OP_WRITE, 5000, 8, -1);
		assert_true(b->rq.ELV_PRIVATE(time) == t);
		assert_true(last_trace_now == t);
		/* An hour back: the queue goes on from t at the host's pace. */
		H.now = t - HOUR;
		c = add(&H, ELV_OP_WRITE, 9000, 8, -1);
		assert_true(c->rq.ELV_PRIVATE(time) == t);
		assert_true(last_trace_now == H.now);
		advance(&H, 2 * MS);
		assert_non_null(dispatch(&H));
		assert_true(last_trace_now == H.now);
		settle(&H, MS, 1000u * MS);
		finish(&H);
	}
	trace_hook = NULL;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wrap_mixed_every_policy),
		cmocka_unit_test(test_half_range_every_policy),
		cmocka_unit_test(test_cfq_slice_idle_across_wrap),
		cmocka_unit_test(test_bfq_slice_idle_across_wrap),
		cmocka_unit_test(test_anticipatory_window_across_wrap),
		cmocka_unit_test(test_idle_hit_across_wrap),
		cmocka_unit_test(test_expiry_across_wrap),
		cmocka_unit_test(test_step_back_hour_every_policy),
		cmocka_unit_test(test_jitter_every_policy),
		cmocka_unit_test(test_step_back_clamps),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
