/*
 * Anticipatory policy: deterministic scenarios on a simulated clock and a fake disk of depth 1
 * (a seek costs seek_ns, a transfer xfer_ns, a request within 64 sectors of the head costs no
 * seek).
 * Readers are closed loops: each issues its next read think_ns after the previous completed.
 * elv_queue_check() runs after every step that changes the queue.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "elevator/policy.h"
#include "support/harness.h"

#define US 1000ull
#define MS 1000000ull
#define MAX_IO 20000
#define MAX_RD 4
#define MEM_WORDS 16384

enum io_state { IO_FREE, IO_QUEUED, IO_DEVICE, IO_DONE, IO_CANCELLED, IO_MERGED };

struct io {
	struct elv_request rq;
	int owner;      /* reader index, or -1 for the writer */
	int state;      /* enum io_state */
	uint64_t added; /* host time of elv_add() */
};

struct reader {
	struct elv_stream s;
	int registered;
	int anon;           /* submits without a stream */
	uint64_t sector;    /* next sector it reads */
	uint64_t think_ns;  /* pause between a completion and the next read */
	uint64_t next_submit;
	unsigned left;      /* reads still to issue */
	unsigned done;
	struct io *pending; /* its outstanding read */
};

struct writer {
	struct elv_stream s;
	uint64_t period, next_submit, sector;
	unsigned left;
	unsigned burst; /* writes per period; 3 exercises back, front and request merges */
	uint32_t stride; /* sectors between the writes of a burst (0: 16) */
};

struct sim {
	struct elv_queue *q;
	struct elv_config cfg;
	uint64_t now;
	struct reader rd[MAX_RD];
	unsigned nr_rd;
	struct writer wr;
	int has_writer;
	struct io ios[MAX_IO];
	unsigned nr_io;
	/* the device */
	struct io *dev;
	uint64_t dev_done, head, xfer_ns, seek_ns;
	/* host misbehaviour for the live scenario */
	unsigned requeue_every, cancel_every, nr_dispatch_calls, nr_writes_added;
	/* what the scenario saw */
	int last_owner;
	unsigned runs, reader_dispatches, writes_dispatched, requeues, cancels, merges;
	uint64_t max_write_wait, max_read_wait, max_idle, long_idles, idle_stops, eagain_waiting;
	uint64_t mem[MEM_WORDS];
};

static struct sim S;

static void chk(const struct sim *sm)
{
	assert_int_equal(elv_queue_check(sm->q), 0);
}

static struct io *io_of(struct elv_request *rq)
{
	return elv_container_of(rq, struct io, rq);
}

static void on_trace(void *ctx, const struct elv_trace_event *ev)
{
	struct sim *sm = ctx;

	if (ev->type == ELV_TRACE_IDLE_STOP) {
		sm->idle_stops++;
		/* Periods ended by the window's end are counted apart from the others. */
		if (ev->arg >= 1 * MS)
			sm->long_idles++;
		else if (ev->arg > sm->max_idle)
			sm->max_idle = ev->arg;
	}
}

static void on_merge(void *ctx, struct elv_request *into, struct elv_request *absorbed,
		     enum elv_merge_kind kind)
{
	struct sim *sm = ctx;

	(void)into;
	(void)kind;
	io_of(absorbed)->state = IO_MERGED;
	sm->merges++;
}

static uint64_t pstat(const struct sim *sm, const char *name)
{
	return th_queue_stat(sm->q, name);
}

static struct elv_stats qstats(const struct sim *sm)
{
	struct elv_stats st;

	assert_int_equal(elv_stats(sm->q, &st), 0);
	return st;
}

static void sim_init(struct sim *sm, int64_t antic_us)
{
	size_t need;

	memset(sm, 0, sizeof(*sm));
	sm->cfg.trace = on_trace;
	sm->cfg.merge = on_merge;
	sm->cfg.ctx = sm;
	sm->xfer_ns = 100 * US;
	sm->seek_ns = 4 * MS;
	sm->last_owner = -2;
	need = elv_queue_size_any(&sm->cfg);
	assert_true(need > 0 && need <= sizeof(sm->mem));
	assert_int_equal(elv_queue_init(&sm->q, sm->mem, sizeof(sm->mem),
					elv_policy_find("anticipatory"), &sm->cfg),
			 0);
	if (antic_us >= 0)
		assert_int_equal(elv_tunable_set(sm->q, "antic_expire", antic_us), 0);
	chk(sm);
}

static struct reader *sim_reader(struct sim *sm, uint64_t sector, uint64_t think_ns,
				 unsigned reads, int anon)
{
	struct reader *r = &sm->rd[sm->nr_rd++];

	r->sector = sector;
	r->think_ns = think_ns;
	r->left = reads;
	r->anon = anon;
	r->next_submit = sm->now;
	if (!anon) {
		assert_int_equal(elv_stream_init(sm->q, &r->s, sm->now), 0);
		r->registered = 1;
	}
	chk(sm);
	return r;
}

static struct io *sim_new(struct sim *sm, uint8_t op, uint64_t sector, int owner)
{
	struct io *io;

	assert_true(sm->nr_io < MAX_IO);
	io = &sm->ios[sm->nr_io++];
	elv_request_init(&io->rq);
	io->rq.op = op;
	io->rq.sector = sector;
	io->rq.nr_sectors = 8;
	io->owner = owner;
	return io;
}

/* elv_add() at the sim clock; returns 1 when the request merged into a queued one. */
static int sim_add(struct sim *sm, struct io *io)
{
	int ret = elv_add(sm->q, &io->rq, sm->now);

	assert_true(ret == 0 || ret == 1);
	io->added = sm->now;
	io->state = ret == 0 ? IO_QUEUED : IO_MERGED;
	chk(sm);
	return ret;
}

static void sim_submit_read(struct sim *sm, struct reader *r)
{
	int idx = (int)(r - sm->rd);
	struct io *io = sim_new(sm, ELV_OP_READ, r->sector, idx);

	io->rq.stream = r->anon ? NULL : &r->s;
	r->sector += 8;
	r->left--;
	r->pending = io;
	assert_int_equal(sim_add(sm, io), 0); /* a dependent reader has nothing to merge with */
}

static void sim_submit_writes(struct sim *sm)
{
	struct writer *w = &sm->wr;
	/* In a burst of 3 the order s+16, s, s+8 gives a front and then a request merge. */
	static const uint64_t order[3] = { 16, 0, 8 };
	uint64_t stride = w->stride ? w->stride : 16u;
	unsigned i;

	for (i = 0; i < w->burst && w->left; i++) {
		struct io *io = sim_new(sm, ELV_OP_WRITE,
					w->sector + (w->burst == 3 ? order[i] : stride * i), -1);

		io->rq.stream = &w->s;
		w->left--;
		sm->nr_writes_added++;
		sim_add(sm, io);
		/* The host withdraws some writes it no longer needs. */
		if (sm->cancel_every && sm->nr_writes_added % sm->cancel_every == 0 &&
		    io->state == IO_QUEUED) {
			assert_int_equal(elv_cancel(sm->q, &io->rq), 0);
			io->state = IO_CANCELLED;
			sm->cancels++;
			chk(sm);
		}
	}
	w->sector += stride * w->burst + 64u;
	w->next_submit += w->period;
}

static void sim_complete(struct sim *sm)
{
	struct io *io = sm->dev;

	sm->dev = NULL;
	assert_int_equal(io->state, IO_DEVICE);
	assert_int_equal(elv_complete(sm->q, &io->rq, sm->now), 0);
	io->state = IO_DONE;
	chk(sm);
	if (io->owner >= 0) {
		struct reader *r = &sm->rd[io->owner];

		assert_ptr_equal(r->pending, io);
		r->pending = NULL;
		r->done++;
		r->next_submit = sm->now + r->think_ns;
	}
}

/* One elv_dispatch() onto the idle device. 1 when a request went. */
static int sim_dispatch(struct sim *sm)
{
	struct elv_request *rq;
	struct io *io;
	int ret = elv_dispatch(sm->q, sm->now, 0, &rq);

	chk(sm);
	if (ret == ELV_EAGAIN) {
		if (elv_next_event(sm->q) != ELV_TIME_NEVER)
			sm->eagain_waiting++;
		return 0;
	}
	assert_int_equal(ret, 0);
	io = io_of(rq);
	assert_true(io->state == IO_QUEUED || io->state == IO_DEVICE);
	sm->nr_dispatch_calls++;
	if (sm->requeue_every && sm->nr_dispatch_calls % sm->requeue_every == 0) {
		/* The device is busy after all: it hands the request straight back. */
		assert_int_equal(elv_requeue(sm->q, rq, sm->now), 0);
		io->state = IO_DEVICE; /* still owed to the device */
		sm->requeues++;
		chk(sm);
		return 1;
	}
	io->state = IO_DEVICE;
	sm->dev = io;
	/* Within 64 sectors of the head the disk reaches a request without a seek. */
	sm->dev_done = sm->now + sm->xfer_ns +
		       (rq->sector - sm->head + 64u <= 128u ? 0 : sm->seek_ns);
	sm->head = elv_rq_end(rq);
	if (io->owner >= 0) {
		if (sm->now - io->added > sm->max_read_wait)
			sm->max_read_wait = sm->now - io->added;
		sm->reader_dispatches++;
		if (io->owner != sm->last_owner)
			sm->runs++;
		sm->last_owner = io->owner;
	} else {
		uint64_t wait = sm->now - io->added;

		sm->writes_dispatched++;
		if (wait > sm->max_write_wait)
			sm->max_write_wait = wait;
	}
	return 1;
}

static uint64_t min64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* Run the closed loop until nothing is left to do, or up to @until (the clock ends there). */
static void sim_run(struct sim *sm, uint64_t until)
{
	for (;;) {
		uint64_t next = ELV_TIME_NEVER;
		int progress = 1;
		unsigned i;

		while (progress) {
			progress = 0;
			if (sm->dev && sm->dev_done <= sm->now) {
				sim_complete(sm);
				progress = 1;
			}
			for (i = 0; i < sm->nr_rd; i++) {
				struct reader *r = &sm->rd[i];

				if (!r->pending && r->left && r->next_submit <= sm->now) {
					sim_submit_read(sm, r);
					progress = 1;
				}
			}
			if (sm->has_writer && sm->wr.left && sm->wr.next_submit <= sm->now) {
				sim_submit_writes(sm);
				progress = 1;
			}
			if (!sm->dev && sim_dispatch(sm))
				progress = 1;
		}
		if (sm->dev)
			next = sm->dev_done;
		for (i = 0; i < sm->nr_rd; i++)
			if (!sm->rd[i].pending && sm->rd[i].left)
				next = min64(next, sm->rd[i].next_submit);
		if (sm->has_writer && sm->wr.left)
			next = min64(next, sm->wr.next_submit);
		next = min64(next, elv_next_event(sm->q));
		if (next == ELV_TIME_NEVER || next > until) {
			/* The host's clock runs on to @until even when nothing happens. */
			if (until != ELV_TIME_NEVER && until > sm->now)
				sm->now = until;
			return;
		}
		assert_true(next > sm->now); /* the queue never asks to be called in the past */
		sm->now = next;
	}
}

static void sim_finish(struct sim *sm)
{
	unsigned i;

	assert_null(sm->dev);
	assert_int_equal(qstats(sm).queued, 0);
	for (i = 0; i < sm->nr_rd; i++)
		if (sm->rd[i].registered)
			assert_int_equal(elv_stream_exit(sm->q, &sm->rd[i].s, sm->now), 0);
	if (sm->has_writer)
		assert_int_equal(elv_stream_exit(sm->q, &sm->wr.s, sm->now), 0);
	chk(sm);
	assert_int_equal(elv_queue_exit(sm->q), 0);
}

static double mean_run(const struct sim *sm)
{
	return sm->runs ? (double)sm->reader_dispatches / sm->runs : 0.0;
}

/* Two dependent sequential readers far apart, 0.1 ms think time each. */
static void two_readers(struct sim *sm, int64_t antic_us)
{
	sim_init(sm, antic_us);
	sim_reader(sm, 0, 100 * US, 2000, 0);
	sim_reader(sm, 50000000, 100 * US, 2000, 0);
	sim_run(sm, ELV_TIME_NEVER);
	assert_int_equal(sm->rd[0].done, 2000);
	assert_int_equal(sm->rd[1].done, 2000);
}

/* ---- tests --------------------------------------------------------------------------- */

static void test_defaults_and_tunables(void **state)
{
	struct sim *sm = &S;
	int64_t v;
	unsigned n;

	(void)state;
	sim_init(sm, -1);
	assert_non_null(elv_policy_tunables(elv_policy_find("anticipatory"), &n));
	assert_int_equal(n, 5);
	assert_int_equal(elv_tunable_get(sm->q, "read_expire", &v), 0);
	assert_int_equal(v, 125);
	assert_int_equal(elv_tunable_get(sm->q, "write_expire", &v), 0);
	assert_int_equal(v, 250);
	assert_int_equal(elv_tunable_get(sm->q, "read_batch_expire", &v), 0);
	assert_int_equal(v, 500);
	assert_int_equal(elv_tunable_get(sm->q, "write_batch_expire", &v), 0);
	assert_int_equal(v, 125);
	assert_int_equal(elv_tunable_get(sm->q, "antic_expire", &v), 0);
	assert_int_equal(v, 6667);
	assert_int_equal(elv_tunable_set(sm->q, "antic_expire", -1), ELV_ERANGE);
	assert_int_equal(elv_tunable_get(sm->q, "antic_expire", &v), 0);
	assert_int_equal(v, 6667);
	assert_int_equal(pstat(sm, "write_batch_count"), 12);
	assert_int_equal(elv_next_event(sm->q), ELV_TIME_NEVER);
	sim_finish(sm);
}

static void test_two_readers_long_runs(void **state)
{
	struct sim *sm = &S;
	struct elv_stats st;
	uint64_t waits, hits;

	(void)state;
	two_readers(sm, -1);
	st = qstats(sm);
	waits = pstat(sm, "antic_waits");
	hits = pstat(sm, "antic_hits");
	print_message("two readers, anticipation: %u dispatches in %u runs (mean %.1f), waits %llu "
		      "hits %llu breaks %llu timeouts %llu, idle %llu us in %llu periods, "
		      "longest short one %llu us, %llu of 1 ms or more, %llu reads forced by "
		      "deadline, longest read wait %llu us, makespan %llu ms\n",
		      sm->reader_dispatches, sm->runs, mean_run(sm), (unsigned long long)waits,
		      (unsigned long long)hits,
		      (unsigned long long)pstat(sm, "antic_breaks"),
		      (unsigned long long)pstat(sm, "antic_timeouts"),
		      (unsigned long long)(st.idle_ns / US), (unsigned long long)st.idle_count,
		      (unsigned long long)(sm->max_idle / US), (unsigned long long)sm->long_idles,
		      (unsigned long long)st.expired, (unsigned long long)(sm->max_read_wait / US),
		      (unsigned long long)(sm->now / MS));
	assert_true(mean_run(sm) >= 8.0);
	/* Nearly every wait ends with the awaited stream's next read... */
	assert_true(hits * 100 >= waits * 95);
	assert_true(waits >= 3000);
	/*
	 * ...which comes after its 0.1 ms think time, well inside the 6.667 ms window. Only the
	 * last read of each reader is followed by a full window (a timeout).
	 */
	assert_true(sm->max_idle <= 200 * US);
	assert_true(sm->long_idles <= 2);
	assert_int_equal(sm->long_idles, pstat(sm, "antic_timeouts"));
	assert_true(sm->eagain_waiting > 0);
	/*
	 * The other reader is still served: its deadline forces it in now and then. The read FIFO
	 * is looked at once per read_expire, so a read may wait up to about twice that.
	 */
	assert_true(st.expired > 0);
	assert_true(sm->max_read_wait >= 125 * MS);
	assert_true(sm->max_read_wait <= 2 * 125 * MS + 6667 * US + 200 * US);
	sim_finish(sm);
}

static void test_antic_zero_no_idle(void **state)
{
	struct sim *sm = &S;
	struct elv_stats st;

	(void)state;
	two_readers(sm, 0);
	st = qstats(sm);
	print_message("two readers, antic_expire 0: %u dispatches in %u runs (mean %.2f), idle "
		      "%llu ns, makespan %llu ms\n",
		      sm->reader_dispatches, sm->runs, mean_run(sm),
		      (unsigned long long)st.idle_ns, (unsigned long long)(sm->now / MS));
	assert_int_equal(st.idle_ns, 0);
	assert_int_equal(st.idle_count, 0);
	assert_int_equal(pstat(sm, "antic_waits"), 0);
	assert_int_equal(sm->eagain_waiting, 0);
	/* Work-conserving: the two readers alternate. */
	assert_true(mean_run(sm) < 1.5);
	sim_finish(sm);
}

static void test_long_thinker_not_awaited(void **state)
{
	struct sim *sm = &S;
	uint64_t waits_warm;

	(void)state;
	sim_init(sm, -1);
	/* 10 ms between reads: longer than the 6.667 ms anyone would wait. */
	sim_reader(sm, 0, 10 * MS, 200, 0);
	sim_reader(sm, 50000000, 10 * MS, 200, 0);
	sim_run(sm, 100 * MS);
	waits_warm = pstat(sm, "antic_waits");
	sim_run(sm, ELV_TIME_NEVER);
	print_message("two 10 ms thinkers: waits %llu during the first 100 ms, %llu in all, "
		      "timeouts %llu, idle %llu us\n",
		      (unsigned long long)waits_warm, (unsigned long long)pstat(sm, "antic_waits"),
		      (unsigned long long)pstat(sm, "antic_timeouts"),
		      (unsigned long long)(qstats(sm).idle_ns / US));
	/* Only the first read of each, before any history, may be waited for. */
	assert_true(waits_warm <= 2);
	assert_int_equal(pstat(sm, "antic_waits"), waits_warm);
	assert_int_equal(sm->rd[0].done, 200);
	assert_int_equal(sm->rd[1].done, 200);
	sim_finish(sm);
}

/* Step one read of @r through the queue by hand: add at now, dispatch, complete after 0.1 ms. */
static struct io *step_read(struct sim *sm, struct reader *r)
{
	struct elv_request *rq;

	sim_submit_read(sm, r);
	assert_int_equal(elv_dispatch(sm->q, sm->now, 0, &rq), 0);
	chk(sm);
	assert_ptr_equal(rq, &r->pending->rq);
	sm->now += 100 * US;
	assert_int_equal(elv_complete(sm->q, rq, sm->now), 0);
	chk(sm);
	r->pending = NULL;
	return io_of(rq);
}

/* Reader A near sector 1000 with a history of six reads 0.1 ms apart; reader B far away. */
static void sim_two_readers(struct sim *sm, struct reader **a, struct reader **b)
{
	int i;

	sim_init(sm, -1);
	*a = sim_reader(sm, 1000, 0, 100, 0);
	*b = sim_reader(sm, 80000000, 0, 100, 0);
	for (i = 0; i < 6; i++) {
		step_read(sm, *a);
		sm->now += 100 * US;
	}
}

static void test_wait_times_out_then_other_stream(void **state)
{
	struct sim *sm = &S;
	struct reader *a, *b;
	struct elv_request *rq;
	struct io *bio;
	uint64_t end, t_done;

	(void)state;
	sim_two_readers(sm, &a, &b);
	/* One more read of A, and B's far read waits behind it. */
	sim_submit_read(sm, a);
	assert_int_equal(elv_dispatch(sm->q, sm->now, 0, &rq), 0);
	assert_ptr_equal(rq, &a->pending->rq);
	sim_submit_read(sm, b);
	bio = b->pending;
	/* While A's read is on the device the queue holds B back without a timer. */
	assert_int_equal(elv_dispatch(sm->q, sm->now, 0, &rq), ELV_EAGAIN);
	assert_int_equal(elv_next_event(sm->q), ELV_TIME_NEVER);
	chk(sm);
	sm->now += 100 * US;
	t_done = sm->now;
	assert_int_equal(elv_complete(sm->q, &a->pending->rq, sm->now), 0);
	a->pending = NULL;
	chk(sm);
	/* A does not come back: the window runs from A's completion. */
	end = t_done + 6667 * US;
	assert_int_equal(elv_dispatch(sm->q, sm->now, 0, &rq), ELV_EAGAIN);
	assert_int_equal(elv_next_event(sm->q), end);
	sm->now += 3 * MS;
	assert_int_equal(elv_dispatch(sm->q, sm->now, 0, &rq), ELV_EAGAIN);
	assert_int_equal(elv_next_event(sm->q), end);
	chk(sm);
	sm->now = end - 1;
	assert_int_equal(elv_dispatch(sm->q, sm->now, 0, &rq), ELV_EAGAIN);
	sm->now = end;
	assert_int_equal(elv_dispatch(sm->q, sm->now, 0, &rq), 0);
	assert_ptr_equal(rq, &bio->rq);
	chk(sm);
	assert_int_equal(elv_next_event(sm->q), ELV_TIME_NEVER);
	assert_int_equal(pstat(sm, "antic_timeouts"), 1);
	assert_int_equal(qstats(sm).idle_ns, 6667 * US);
	assert_int_equal(qstats(sm).idle_count, 1);
	assert_int_equal(elv_complete(sm->q, rq, sm->now + 100 * US), 0);
	b->pending = NULL;
	sm->now += 100 * US;
	chk(sm);

	sim_finish(sm);
}

static void test_wait_hit(void **state)
{
	struct sim *sm = &S;
	struct reader *a, *b;
	struct elv_request *rq;
	struct io *bio;

	(void)state;
	sim_two_readers(sm, &a, &b);
	sim_submit_read(sm, b);
	bio = b->pending;
	/* A's last read completed 0.1 ms ago; B's read would seek far: wait for A. */
	assert_int_equal(elv_dispatch(sm->q, sm->now, 0, &rq), ELV_EAGAIN);
	assert_int_equal(elv_next_event(sm->q), sm->now - 100 * US + 6667 * US);
	chk(sm);
	sm->now += 50 * US;
	sim_submit_read(sm, a);
	assert_int_equal(elv_next_event(sm->q), ELV_TIME_NEVER);
	assert_int_equal(pstat(sm, "antic_hits"), 1);
	assert_int_equal(qstats(sm).idle_ns, 50 * US);
	assert_int_equal(elv_dispatch(sm->q, sm->now, 0, &rq), 0);
	assert_ptr_equal(rq, &a->pending->rq);
	chk(sm);
	sm->now += 100 * US;
	assert_int_equal(elv_complete(sm->q, rq, sm->now), 0);
	a->pending = NULL;
	chk(sm);
	/* A forced dispatch never idles. */
	assert_int_equal(elv_dispatch(sm->q, sm->now, ELV_DISPATCH_FORCE, &rq), 0);
	assert_ptr_equal(rq, &bio->rq);
	chk(sm);
	sm->now += 100 * US;
	assert_int_equal(elv_complete(sm->q, rq, sm->now), 0);
	b->pending = NULL;
	chk(sm);
	sim_finish(sm);
}

static void test_writes_not_starved(void **state)
{
	struct sim *sm = &S;
	/* write_expire plus one read batch (read_batch_expire). */
	uint64_t bound = (250 + 500) * MS;
	unsigned i;

	(void)state;
	sim_init(sm, -1);
	sim_reader(sm, 0, 100 * US, 8000, 0);
	sim_reader(sm, 50000000, 100 * US, 8000, 0);
	sm->has_writer = 1;
	sm->wr.period = 50 * MS;
	sm->wr.sector = 90000000;
	sm->wr.left = 40;
	sm->wr.burst = 1;
	assert_int_equal(elv_stream_init(sm->q, &sm->wr.s, sm->now), 0);
	sim_run(sm, 2000 * MS);
	print_message("readers plus a write every 50 ms: %u writes dispatched, longest write "
		      "wait %llu ms (bound %llu ms), %llu read and %llu write batches, write "
		      "batch size now %llu, run mean %.1f\n",
		      sm->writes_dispatched, (unsigned long long)(sm->max_write_wait / MS),
		      (unsigned long long)(bound / MS),
		      (unsigned long long)pstat(sm, "read_batches"),
		      (unsigned long long)pstat(sm, "write_batches"),
		      (unsigned long long)pstat(sm, "write_batch_count"), mean_run(sm));
	assert_true(sm->writes_dispatched >= 30);
	assert_true(sm->max_write_wait <= bound);
	/* Nor is any write still queued older than that. */
	for (i = 0; i < sm->nr_io; i++)
		if (sm->ios[i].owner < 0 && sm->ios[i].state == IO_QUEUED)
			assert_true(sm->now - sm->ios[i].added <= bound);
	assert_true(pstat(sm, "write_batches") >= 3);
	/* Finish the remaining work without the clock limit. */
	sm->rd[0].left = 0;
	sm->rd[1].left = 0;
	sim_run(sm, ELV_TIME_NEVER);
	assert_int_equal(sm->writes_dispatched, 40);
	sim_finish(sm);
}

/* ---- hand-driven helpers ------------------------------------------------------------- */

static struct io *add_rq(struct sim *sm, uint8_t op, struct elv_stream *s, uint64_t sector)
{
	struct io *io = sim_new(sm, op, sector, -1);

	io->rq.stream = s;
	sim_add(sm, io);
	return io;
}

/* elv_dispatch() at the sim clock: the request, or NULL for ELV_EAGAIN. */
static struct io *disp(struct sim *sm, unsigned flags)
{
	struct elv_request *rq;
	int ret = elv_dispatch(sm->q, sm->now, flags, &rq);

	chk(sm);
	if (ret == ELV_EAGAIN)
		return NULL;
	assert_int_equal(ret, 0);
	io_of(rq)->state = IO_DEVICE;
	return io_of(rq);
}

static void done(struct sim *sm, struct io *io)
{
	assert_int_equal(elv_complete(sm->q, &io->rq, sm->now), 0);
	io->state = IO_DONE;
	chk(sm);
}

/* The next dispatch must be @want, which then completes at once. */
static void serve(struct sim *sm, struct io *want)
{
	assert_ptr_equal(disp(sm, 0), want);
	done(sm, want);
}

/* Stream @s reads sequentially from @sector: @n reads, 0.1 ms service and think time each. */
static uint64_t warm_up(struct sim *sm, struct elv_stream *s, uint64_t sector, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		struct io *io = add_rq(sm, ELV_OP_READ, s, sector);

		assert_ptr_equal(disp(sm, 0), io);
		sm->now += 100 * US;
		done(sm, io);
		sm->now += 100 * US;
		sector += 8;
	}
	return sector;
}

static void test_close_window_widens(void **state)
{
	struct sim *sm = &S;
	struct elv_stream a = { 0 }, t = { 0 };
	struct io *far, *near1, *near2;
	uint64_t head;

	(void)state;
	sim_init(sm, -1);
	assert_int_equal(elv_stream_init(sm->q, &a, sm->now), 0);
	assert_int_equal(elv_stream_init(sm->q, &t, sm->now), 0);
	head = warm_up(sm, &a, 1000000, 5);
	sm->now -= 100 * US; /* back to A's last completion */
	far = add_rq(sm, ELV_OP_READ, NULL, 90000000);
	assert_null(disp(sm, 0)); /* waiting for A */
	/* 0.5 ms in, the window is 8192 sectors: 20000 ahead is not close. */
	sm->now += 500 * US;
	near1 = add_rq(sm, ELV_OP_READ, &t, head + 20000);
	assert_null(disp(sm, 0));
	assert_int_equal(pstat(sm, "antic_breaks"), 0);
	/* 2.5 ms in, it has widened to 8192 << 2 sectors: close enough, the wait ends. */
	sm->now += 2 * MS;
	near2 = add_rq(sm, ELV_OP_READ, &t, head + 20016);
	assert_int_equal(pstat(sm, "antic_breaks"), 1);
	assert_int_equal(elv_next_event(sm->q), ELV_TIME_NEVER);
	assert_int_equal(qstats(sm).idle_ns, 2500 * US);
	/* The nearest request goes, then its neighbour, then the far one. */
	serve(sm, near1);
	assert_ptr_equal(disp(sm, ELV_DISPATCH_FORCE), near2);
	done(sm, near2);
	assert_ptr_equal(disp(sm, ELV_DISPATCH_FORCE), far);
	done(sm, far);
	assert_int_equal(elv_stream_exit(sm->q, &a, sm->now), 0);
	assert_int_equal(elv_stream_exit(sm->q, &t, sm->now), 0);
	sim_finish(sm);
}

static void test_exit_ends_wait(void **state)
{
	struct sim *sm = &S;
	struct elv_stream a = { 0 };
	struct io *far;

	(void)state;
	sim_init(sm, -1);
	assert_int_equal(elv_stream_init(sm->q, &a, sm->now), 0);
	warm_up(sm, &a, 0, 4);
	far = add_rq(sm, ELV_OP_READ, NULL, 90000000);
	assert_null(disp(sm, 0));
	assert_true(elv_next_event(sm->q) != ELV_TIME_NEVER);
	sm->now += 1 * MS;
	/* The awaited stream retires: it will never read again, so nothing is awaited. */
	assert_int_equal(elv_stream_exit(sm->q, &a, sm->now), 0);
	chk(sm);
	assert_int_equal(pstat(sm, "antic_exits"), 1);
	assert_int_equal(elv_next_event(sm->q), ELV_TIME_NEVER);
	serve(sm, far);
	sim_finish(sm);
}

static void test_cancel_during_wait(void **state)
{
	struct sim *sm = &S;
	struct elv_stream a = { 0 };
	struct io *far, *next;
	uint64_t sector;

	(void)state;
	sim_init(sm, -1);
	assert_int_equal(elv_stream_init(sm->q, &a, sm->now), 0);
	sector = warm_up(sm, &a, 0, 4);
	far = add_rq(sm, ELV_OP_READ, NULL, 90000000);
	assert_null(disp(sm, 0));
	assert_true(elv_next_event(sm->q) != ELV_TIME_NEVER);
	/* The only request held back is withdrawn: no timer is needed for an empty queue. */
	assert_int_equal(elv_cancel(sm->q, &far->rq), 0);
	far->state = IO_CANCELLED;
	chk(sm);
	assert_int_equal(elv_next_event(sm->q), ELV_TIME_NEVER);
	/* The awaited stream still comes back inside its window: a hit. */
	sm->now += 50 * US;
	next = add_rq(sm, ELV_OP_READ, &a, sector);
	assert_int_equal(pstat(sm, "antic_hits"), 1);
	serve(sm, next);
	assert_int_equal(elv_stream_exit(sm->q, &a, sm->now), 0);
	sim_finish(sm);
}

/* The awaited read is handed back by the device and then drained: nothing is left to wait for. */
static void drained_cb(void *arg, struct elv_request *rq)
{
	(void)arg;
	io_of(rq)->state = IO_CANCELLED;
}

static void test_awaited_read_taken_back(void **state)
{
	struct sim *sm = &S;
	struct elv_stream a = { 0 };
	struct io *io, *w;

	(void)state;
	sim_init(sm, -1);
	assert_int_equal(elv_stream_init(sm->q, &a, sm->now), 0);
	warm_up(sm, &a, 0, 4);
	io = add_rq(sm, ELV_OP_READ, &a, 32);
	assert_ptr_equal(disp(sm, 0), io);
	assert_int_equal(elv_requeue(sm->q, &io->rq, sm->now), 0);
	chk(sm);
	assert_int_equal(elv_drain(sm->q, drained_cb, NULL), 1);
	assert_int_equal(io->state, IO_CANCELLED);
	chk(sm);
	/* A's read will never complete, so the write must not wait for it. */
	w = add_rq(sm, ELV_OP_WRITE, NULL, 7000000);
	assert_ptr_equal(disp(sm, 0), w);
	assert_int_equal(pstat(sm, "antic_waits"), 0);
	done(sm, w);
	assert_int_equal(elv_stream_exit(sm->q, &a, sm->now), 0);
	sim_finish(sm);
}

/* Streams that read once and exit teach the queue not to wait for new streams. */
static void test_exit_estimates(void **state)
{
	struct sim *sm = &S;
	struct elv_stream s[12] = { { 0 } };
	struct io *io, *far;
	int i, waited_first = 0, waited_last = 0;

	(void)state;
	sim_init(sm, -1);
	for (i = 0; i < 12; i++) {
		uint64_t waits = pstat(sm, "antic_waits");

		assert_int_equal(elv_stream_init(sm->q, &s[i], sm->now), 0);
		io = add_rq(sm, ELV_OP_READ, &s[i], (uint64_t)i * 10000000);
		assert_ptr_equal(disp(sm, 0), io);
		/* Another stream's far read arrives while this one is on the device. */
		far = add_rq(sm, ELV_OP_READ, NULL, 500000000 + (uint64_t)i * 10000000);
		sm->now += 100 * US;
		done(sm, io);
		if (disp(sm, 0) == NULL) {
			/* Waiting for a stream that exits instead of reading again. */
			if (i == 0)
				waited_first = 1;
			if (i == 11)
				waited_last = 1;
			sm->now += 100 * US;
			assert_int_equal(elv_stream_exit(sm->q, &s[i], sm->now), 0);
			chk(sm);
			assert_ptr_equal(disp(sm, 0), far);
		} else {
			assert_int_equal(pstat(sm, "antic_waits"), waits);
			assert_int_equal(far->state, IO_DEVICE);
			assert_int_equal(elv_stream_exit(sm->q, &s[i], sm->now), 0);
		}
		sm->now += 100 * US;
		done(sm, far);
		sm->now += 1 * MS;
	}
	print_message("exit estimates after 12 one-read streams: exit_prob %llu/256, "
		      "exit_no_coop %llu/256, waits %llu\n",
		      (unsigned long long)pstat(sm, "exit_prob"),
		      (unsigned long long)pstat(sm, "exit_no_coop"),
		      (unsigned long long)pstat(sm, "antic_waits"));
	assert_true(waited_first);
	assert_false(waited_last);
	assert_true(pstat(sm, "exit_prob") * pstat(sm, "exit_no_coop") > 128u * 256u);
	sim_finish(sm);
}

/* New streams whose first think time was long make the queue stop waiting for new streams. */
static void test_new_stream_estimate(void **state)
{
	struct sim *sm = &S;
	struct elv_stream s[8] = { { 0 } };
	struct io *io, *far;
	int i;

	(void)state;
	sim_init(sm, -1);
	for (i = 0; i < 8; i++) {
		assert_int_equal(elv_stream_init(sm->q, &s[i], sm->now), 0);
		io = add_rq(sm, ELV_OP_READ, &s[i], (uint64_t)i * 10000000);
		assert_ptr_equal(disp(sm, ELV_DISPATCH_FORCE), io);
		sm->now += 100 * US;
		done(sm, io);
		sm->now += 30 * MS; /* thinks for longer than the 20 ms cap */
		io = add_rq(sm, ELV_OP_READ, &s[i], (uint64_t)i * 10000000 + 8);
		assert_ptr_equal(disp(sm, ELV_DISPATCH_FORCE), io);
		sm->now += 100 * US;
		done(sm, io);
		assert_int_equal(elv_stream_exit(sm->q, &s[i], sm->now), 0);
		chk(sm);
	}
	print_message("new-stream think time after 8 slow starters: %llu us\n",
		      (unsigned long long)(pstat(sm, "new_think_ns") / US));
	assert_true(pstat(sm, "new_think_ns") > 6667 * US);
	/* A brand-new stream has no history: the estimate says it will not be back soon. */
	assert_int_equal(elv_stream_init(sm->q, &s[0], sm->now), 0);
	io = add_rq(sm, ELV_OP_READ, &s[0], 1000);
	assert_ptr_equal(disp(sm, 0), io);
	far = add_rq(sm, ELV_OP_READ, NULL, 900000000);
	sm->now += 100 * US;
	done(sm, io);
	assert_ptr_equal(disp(sm, 0), far);
	assert_int_equal(pstat(sm, "antic_waits"), 0);
	done(sm, far);
	assert_int_equal(elv_stream_exit(sm->q, &s[0], sm->now), 0);
	sim_finish(sm);
}

static void test_drain_before_direction_switch(void **state)
{
	struct sim *sm = &S;
	struct io *r1, *r2, *r3, *r4, *w1;

	(void)state;
	sim_init(sm, 0);
	r1 = add_rq(sm, ELV_OP_READ, NULL, 1000);
	assert_ptr_equal(disp(sm, 0), r1);
	/* The read batch's clock starts when its first read completes. */
	sm->now += 500 * US;
	done(sm, r1);
	sm->now += 500 * US;
	w1 = add_rq(sm, ELV_OP_WRITE, NULL, 500000);
	r2 = add_rq(sm, ELV_OP_READ, NULL, 2000);
	r3 = add_rq(sm, ELV_OP_READ, NULL, 3000);
	/* The read batch has not expired: reads go on, two of them onto a deeper device. */
	assert_ptr_equal(disp(sm, 0), r2);
	assert_ptr_equal(disp(sm, 0), r3);
	/* Past read_batch_expire: the batch turns to writes, but only once the reads drained. */
	sm->now += 600 * MS;
	r4 = add_rq(sm, ELV_OP_READ, NULL, 4000);
	assert_null(disp(sm, 0));
	assert_int_equal(elv_next_event(sm->q), ELV_TIME_NEVER);
	done(sm, r2);
	assert_null(disp(sm, 0));
	sm->now += 1 * MS;
	done(sm, r3);
	serve(sm, w1);
	serve(sm, r4);
	assert_int_equal(pstat(sm, "write_batches"), 1);
	sim_finish(sm);
}

/* The read FIFO is looked at once per read_expire: an expired read can wait nearly twice that. */
static void test_fifo_checks_rate_limited(void **state)
{
	struct sim *sm = &S;
	struct io *far = NULL, *io;
	uint64_t served = 0;
	unsigned k;

	(void)state;
	sim_init(sm, -1);
	assert_int_equal(elv_tunable_set(sm->q, "read_expire", 10), 0);
	/* A sequential anonymous reader keeps the head busy, one read every 0.5 ms. */
	for (k = 0; k < 80 && !served; k++) {
		sm->now = k * 500 * US;
		add_rq(sm, ELV_OP_READ, NULL, 1000 + 8u * k);
		if (k == 21)
			far = add_rq(sm, ELV_OP_READ, NULL, 900000000); /* just after a check */
		io = disp(sm, 0);
		assert_non_null(io);
		if (io == far)
			served = sm->now;
		done(sm, io);
	}
	/* Checks at 10, 20 and 30 ms: it arrived at 10.5 ms, expired at 20.5, went at 30. */
	assert_int_equal(served, 30 * MS);
	assert_int_equal(qstats(sm).expired, 1);
	while (qstats(sm).queued)
		done(sm, disp(sm, 0));
	sim_finish(sm);
}

static void test_back_seek_scoring(void **state)
{
	struct sim *sm = &S;
	struct io *x, *back, *fwd;

	(void)state;
	sim_init(sm, 0);
	x = add_rq(sm, ELV_OP_READ, NULL, 999992);
	serve(sm, x); /* the head is at 1000000 */
	/* 100 back costs 200: beats 300 forward... */
	fwd = add_rq(sm, ELV_OP_READ, NULL, 1000300);
	back = add_rq(sm, ELV_OP_READ, NULL, 999900);
	serve(sm, back);
	serve(sm, fwd);
	/* ...but not 150 forward (the head is now at 1000308). */
	back = add_rq(sm, ELV_OP_READ, NULL, 1000208);
	fwd = add_rq(sm, ELV_OP_READ, NULL, 1000458);
	serve(sm, fwd);
	/* The one left behind is next (258 back); then a far one moves the head to 3000008. */
	serve(sm, back);
	x = add_rq(sm, ELV_OP_READ, NULL, 3000000);
	serve(sm, x);
	/* Farther back than 1 Mi sectors is a wrap: it loses to any forward request... */
	back = add_rq(sm, ELV_OP_READ, NULL, 1000000);
	x = add_rq(sm, ELV_OP_READ, NULL, 500);
	fwd = add_rq(sm, ELV_OP_READ, NULL, 900000000);
	serve(sm, fwd);
	/* ...and among wrapped requests the lowest goes first, then the sweep goes up. */
	serve(sm, x);
	serve(sm, back);
	sim_finish(sm);
}

/*
 * The same rules with the head in the last sectors of the 64-bit sector space: a short seek
 * back still beats a wrap to sector 0, and a wrap ranks by its own sector, not by how far
 * past the end of the space it lies.
 */
static void test_back_seek_near_top(void **state)
{
	struct sim *sm = &S;
	struct io *x, *back, *low, *wrap;

	(void)state;
	sim_init(sm, 0);
	x = add_rq(sm, ELV_OP_READ, NULL, UINT64_MAX - 17);
	serve(sm, x); /* the head is at 2^64 - 10 */
	low = add_rq(sm, ELV_OP_READ, NULL, 0);
	back = add_rq(sm, ELV_OP_READ, NULL, UINT64_MAX - 1009);
	serve(sm, back); /* 1000 back beats the wrap */
	/* The head is at 2^64 - 1002: two wraps, the lower sector first, whichever came first. */
	wrap = add_rq(sm, ELV_OP_READ, NULL, UINT64_MAX - 3000000);
	serve(sm, low);
	serve(sm, wrap);
	sim_finish(sm);
}

static void test_merges_and_find_start(void **state)
{
	struct sim *sm = &S;
	struct io *d, *w, *front, *gapfill, *r;
	struct elv_stats st;

	(void)state;
	sim_init(sm, -1);
	/* A discard and a write both start at 108; a write ending at 108 joins the write. */
	d = sim_new(sm, ELV_OP_DISCARD, 108, -1);
	sim_add(sm, d);
	w = add_rq(sm, ELV_OP_WRITE, NULL, 108);
	front = add_rq(sm, ELV_OP_WRITE, NULL, 100);
	assert_int_equal(front->state, IO_MERGED);
	assert_int_equal(w->rq.sector, 100);
	/* A read at 124 and one at 116 then fill the gap: back merge, then a request merge. */
	r = add_rq(sm, ELV_OP_READ, NULL, 124);
	sm->now += 1 * MS;
	add_rq(sm, ELV_OP_READ, NULL, 108);
	gapfill = add_rq(sm, ELV_OP_READ, NULL, 116);
	assert_int_equal(gapfill->state, IO_MERGED);
	st = qstats(sm);
	assert_int_equal(st.merged_front, 1);
	assert_int_equal(st.merged_back, 1);
	assert_int_equal(st.merged_req, 1);
	assert_int_equal(st.queued, 3);
	(void)r;
	/* Everything still comes out, once. */
	while (qstats(sm).queued) {
		struct io *io = disp(sm, ELV_DISPATCH_FORCE);

		assert_non_null(io);
		done(sm, io);
	}
	assert_int_equal(d->state, IO_DONE);
	assert_int_equal(w->state, IO_DONE);
	sim_finish(sm);
}

/* Quick write batches that use up their size grow; slow ones shrink. */
static void run_write_tuning(struct sim *sm, int64_t wbe_ms, uint32_t stride)
{
	sim_init(sm, -1);
	assert_int_equal(elv_tunable_set(sm->q, "write_batch_expire", wbe_ms), 0);
	sim_reader(sm, 0, 100 * US, 6000, 0);
	sm->has_writer = 1;
	sm->wr.period = 100 * MS;
	sm->wr.sector = 90000000;
	sm->wr.left = 400;
	sm->wr.burst = 40;
	sm->wr.stride = stride;
	assert_int_equal(elv_stream_init(sm->q, &sm->wr.s, sm->now), 0);
	sim_run(sm, 1500 * MS);
}

static void test_write_batch_tuning(void **state)
{
	struct sim *sm = &S;
	uint64_t grown, shrunk;

	(void)state;
	run_write_tuning(sm, 125, 16);
	grown = pstat(sm, "write_batch_count");
	sm->rd[0].left = 0;
	sm->wr.left = 0;
	sim_run(sm, ELV_TIME_NEVER);
	sim_finish(sm);

	/* Writes far apart (a seek each) against a 2 ms target. */
	run_write_tuning(sm, 2, 1000);
	shrunk = pstat(sm, "write_batch_count");
	sm->rd[0].left = 0;
	sm->wr.left = 0;
	sim_run(sm, ELV_TIME_NEVER);
	print_message("write batch size from 12: %llu with quick writes and a 125 ms target, "
		      "%llu against a 2 ms target\n",
		      (unsigned long long)grown, (unsigned long long)shrunk);
	assert_true(grown > 12);
	assert_true(shrunk < 12);
	sim_finish(sm);
}

/* Everything the host did in the live scenario came back exactly once. */
static void check_accounting(const struct sim *sm)
{
	struct elv_stats st = qstats(sm);
	unsigned i, done = 0, cancelled = 0, merged = 0;

	for (i = 0; i < sm->nr_io; i++) {
		switch (sm->ios[i].state) {
		case IO_DONE:
			done++;
			break;
		case IO_CANCELLED:
			cancelled++;
			break;
		case IO_MERGED:
			merged++;
			break;
		default:
			fail_msg("request %u never came back (state %d)", i, sm->ios[i].state);
		}
	}
	assert_int_equal(done, st.completed);
	assert_int_equal(cancelled, st.cancelled);
	assert_int_equal(merged, st.merged_back + st.merged_front + st.merged_req);
	assert_int_equal(st.added, sm->nr_io);
	assert_int_equal(st.requeued, sm->requeues);
	assert_int_equal(st.dispatched[0] + st.dispatched[1], st.completed + st.requeued);
}

static void test_live_requeue_cancel_switch(void **state)
{
	struct sim *sm = &S;
	struct reader *c;

	(void)state;
	sim_init(sm, -1);
	sm->requeue_every = 7;
	sm->cancel_every = 5;
	sim_reader(sm, 0, 100 * US, 400, 0);
	sim_reader(sm, 30000000, 3 * MS, 150, 0);
	c = sim_reader(sm, 60000000, 12 * MS, 60, 0);
	sim_reader(sm, 70000000, 500 * US, 150, 1); /* anonymous */
	sm->has_writer = 1;
	sm->wr.period = 5 * MS;
	sm->wr.sector = 90000000;
	sm->wr.left = 300;
	sm->wr.burst = 3;
	assert_int_equal(elv_stream_init(sm->q, &sm->wr.s, sm->now), 0);

	sim_run(sm, 150 * MS);
	/* Anticipation off and on again while things are queued. */
	assert_int_equal(elv_tunable_set(sm->q, "antic_expire", 0), 0);
	chk(sm);
	sim_run(sm, 250 * MS);
	assert_int_equal(elv_tunable_set(sm->q, "antic_expire", 6667), 0);
	chk(sm);
	sim_run(sm, 350 * MS);
	/* Live switch away and back with requests queued and on the device. */
	assert_int_equal(elv_switch(sm->q, elv_policy_find("deadline"), sm->now), 0);
	chk(sm);
	sim_run(sm, 400 * MS);
	assert_int_equal(elv_switch(sm->q, elv_policy_find("anticipatory"), sm->now), 0);
	chk(sm);
	sim_run(sm, 500 * MS);
	/* A stream retires between two reads and registers again. */
	while (c->pending)
		sim_run(sm, sm->now + 100 * US);
	assert_int_equal(elv_stream_exit(sm->q, &c->s, sm->now), 0);
	assert_int_equal(elv_next_event(sm->q) == ELV_TIME_NEVER || elv_is_idling(sm->q), 1);
	chk(sm);
	assert_int_equal(elv_stream_init(sm->q, &c->s, sm->now), 0);
	chk(sm);
	sim_run(sm, ELV_TIME_NEVER);
	print_message("live: %u requests in %llu ms, %u requeued, %u cancelled, %u merged, "
		      "%llu/%llu read/write batches, waits %llu hits %llu breaks %llu timeouts "
		      "%llu exits %llu\n",
		      sm->nr_io, (unsigned long long)(sm->now / MS), sm->requeues, sm->cancels,
		      sm->merges, (unsigned long long)pstat(sm, "read_batches"),
		      (unsigned long long)pstat(sm, "write_batches"),
		      (unsigned long long)pstat(sm, "antic_waits"),
		      (unsigned long long)pstat(sm, "antic_hits"),
		      (unsigned long long)pstat(sm, "antic_breaks"),
		      (unsigned long long)pstat(sm, "antic_timeouts"),
		      (unsigned long long)pstat(sm, "antic_exits"));
	assert_true(sm->requeues > 0 && sm->cancels > 0 && sm->merges > 0);
	check_accounting(sm);
	sim_finish(sm);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults_and_tunables),
		cmocka_unit_test(test_two_readers_long_runs),
		cmocka_unit_test(test_antic_zero_no_idle),
		cmocka_unit_test(test_long_thinker_not_awaited),
		cmocka_unit_test(test_wait_times_out_then_other_stream),
		cmocka_unit_test(test_wait_hit),
		cmocka_unit_test(test_writes_not_starved),
		cmocka_unit_test(test_close_window_widens),
		cmocka_unit_test(test_exit_ends_wait),
		cmocka_unit_test(test_cancel_during_wait),
		cmocka_unit_test(test_awaited_read_taken_back),
		cmocka_unit_test(test_exit_estimates),
		cmocka_unit_test(test_new_stream_estimate),
		cmocka_unit_test(test_drain_before_direction_switch),
		cmocka_unit_test(test_fifo_checks_rate_limited),
		cmocka_unit_test(test_back_seek_scoring),
		cmocka_unit_test(test_back_seek_near_top),
		cmocka_unit_test(test_merges_and_find_start),
		cmocka_unit_test(test_write_batch_tuning),
		cmocka_unit_test(test_live_requeue_cancel_switch),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
