/*
 * cfq tests. A small closed-loop simulator drives a queue on a simulated clock: streams issue
 * dependent requests (the next one a think time after the previous completed), and a fake
 * device serves them, either one at a time with a seek cost (a disk) or many in parallel at a
 * fixed latency (flash with queueing). elv_queue_check() runs after every call.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "elevator/policy.h"
#include "support/harness.h"

#define MS 1000000ULL
#define US 1000ULL
#define NSTREAMS 6
#define NIO 512
#define NLOG 40000
#define NEVER ELV_TIME_NEVER

struct sim_io {
	struct elv_request rq;
	int stream;     /* index, or -1 */
	int busy;       /* held by the queue or the device */
	uint64_t start; /* service start on the device */
	uint64_t end;   /* completion time */
};

struct sim_stream {
	struct elv_stream s;
	int on;              /* issuing */
	int anonymous;       /* requests carry no stream */
	uint8_t op;
	uint8_t flags;
	uint32_t nr_sectors;
	uint64_t sector;     /* next sector */
	uint64_t stride;     /* sector step between requests */
	uint64_t think;
	uint64_t next_issue; /* NEVER while a request is out */
	uint64_t stop_at;    /* stop issuing at this time */
	uint64_t dev_ns;     /* device time received */
	uint64_t done;       /* requests completed */
	uint64_t first_dispatch;
	unsigned queued;     /* issued, not yet dispatched */
};

struct sim_rec {
	int stream;
	unsigned waiting; /* streams with a request queued at this dispatch (bit mask) */
	uint64_t dispatch;
	uint64_t end;
};

struct sim {
	struct elv_queue *q;
	struct elv_config cfg;
	uint64_t now;
	unsigned depth;
	uint64_t lat;     /* flash latency (depth > 1) */
	uint64_t head;    /* disk head position */
	uint64_t dev_free; /* disk: when the current request finishes */
	struct sim_io io[NIO];
	struct sim_io *inflight[64];
	unsigned nr_inflight;
	struct sim_stream st[NSTREAMS];
	unsigned nr_streams;
	struct sim_rec log[NLOG];
	unsigned nr_log;
	uint64_t max_idle;  /* longest idle period traced */
	uint64_t idle_stops;
	uint64_t mem[1u << 15];
};

static struct sim S;

static void check(void)
{
	assert_int_equal(elv_queue_check(S.q), 0);
}

static void trace_cb(void *ctx, const struct elv_trace_event *ev)
{
	(void)ctx;
	if (ev->type == ELV_TRACE_IDLE_STOP) {
		S.idle_stops++;
		if (ev->arg > S.max_idle)
			S.max_idle = ev->arg;
	}
}

/* A queue on a disk (depth 1, rotational) or on flash (depth > 1, non-rotational). */
static void sim_init(unsigned depth, int rotational)
{
	size_t len;

	memset(&S, 0, sizeof(S));
	S.depth = depth;
	S.lat = 200 * US;
	S.cfg.dev.rotational = (uint8_t)rotational;
	S.cfg.dev.queue_depth = (uint16_t)depth;
	S.cfg.trace = trace_cb;
	len = elv_queue_size(elv_policy_find("cfq"), &S.cfg);
	assert_true(len > 0 && len <= sizeof(S.mem));
	assert_int_equal(elv_queue_init(&S.q, S.mem, sizeof(S.mem), elv_policy_find("cfq"),
					&S.cfg),
			 0);
	check();
}

static void set_tunable(const char *name, int64_t v)
{
	assert_int_equal(elv_tunable_set(S.q, name, v), 0);
	check();
}

static uint64_t pstat(const char *name)
{
	return th_queue_stat(S.q, name);
}

static struct elv_stats qstats(void)
{
	struct elv_stats st;

	assert_int_equal(elv_stats(S.q, &st), 0);
	return st;
}

/* A sequential dependent reader in its own 10 GB region. */
static int add_stream(uint8_t ioprio, uint64_t think, uint64_t start)
{
	int i = (int)S.nr_streams++;
	struct sim_stream *ss = &S.st[i];

	assert_true(S.nr_streams <= NSTREAMS);
	ss->s.ioprio = ioprio;
	assert_int_equal(elv_stream_init(S.q, &ss->s, S.now), 0);
	check();
	ss->op = ELV_OP_READ;
	ss->nr_sectors = 8;
	ss->stride = 8;
	ss->sector = (uint64_t)(unsigned)(i + 1) * 20000000ULL;
	ss->think = think;
	ss->next_issue = start;
	ss->stop_at = NEVER;
	ss->first_dispatch = NEVER;
	ss->on = 1;
	return i;
}

static struct sim_io *io_get(void)
{
	unsigned i;

	for (i = 0; i < NIO; i++) {
		if (!S.io[i].busy) {
			memset(&S.io[i], 0, sizeof(S.io[i]));
			S.io[i].busy = 1;
			return &S.io[i];
		}
	}
	fail_msg("io pool exhausted");
	return NULL;
}

static void issue(int i)
{
	struct sim_stream *ss = &S.st[i];
	struct sim_io *io = io_get();

	io->stream = i;
	io->rq.sector = ss->sector;
	io->rq.nr_sectors = ss->nr_sectors;
	io->rq.op = ss->op;
	io->rq.flags = ss->flags;
	io->rq.stream = ss->anonymous ? NULL : &ss->s;
	ss->sector += ss->stride;
	ss->next_issue = NEVER;
	ss->queued++;
	assert_int_equal(elv_add(S.q, &io->rq, S.now), 0);
	check();
}

/* Disk: 1 ms per request plus a seek of 1-8 ms when the head moves. */
static uint64_t disk_time(const struct elv_request *rq)
{
	uint64_t d = rq->sector > S.head ? rq->sector - S.head : S.head - rq->sector;
	uint64_t seek = d == 0 ? 0 : 1 * MS + (d >> 20) * MS;

	return 1 * MS + (seek > 8 * MS ? 8 * MS : seek);
}

static int dispatch_one(void)
{
	struct elv_request *rq;
	struct sim_io *io;
	struct sim_stream *ss;
	unsigned i;
	int err;

	if (S.nr_inflight >= S.depth)
		return 0;
	err = elv_dispatch(S.q, S.now, 0, &rq);
	check();
	if (err == ELV_EAGAIN)
		return 0;
	assert_int_equal(err, 0);
	io = elv_container_of(rq, struct sim_io, rq);
	io->start = S.now > S.dev_free || S.depth > 1 ? S.now : S.dev_free;
	io->end = io->start + (S.depth > 1 ? S.lat : disk_time(rq));
	if (S.depth == 1) {
		S.head = elv_rq_end(rq);
		S.dev_free = io->end;
	}
	S.inflight[S.nr_inflight++] = io;
	if (io->stream >= 0) {
		ss = &S.st[io->stream];
		if (ss->first_dispatch == NEVER)
			ss->first_dispatch = S.now;
		ss->queued--;
	}
	if (S.nr_log < NLOG) {
		S.log[S.nr_log].waiting = 0;
		for (i = 0; i < S.nr_streams; i++)
			if (S.st[i].queued)
				S.log[S.nr_log].waiting |= 1u << i;
		S.log[S.nr_log].stream = io->stream;
		S.log[S.nr_log].dispatch = S.now;
		S.log[S.nr_log].end = io->end;
		S.nr_log++;
	}
	return 1;
}

static void complete_due(void)
{
	unsigned i = 0;
	struct sim_io *io;
	struct sim_stream *ss;

	while (i < S.nr_inflight) {
		io = S.inflight[i];
		if (io->end > S.now) {
			i++;
			continue;
		}
		S.inflight[i] = S.inflight[--S.nr_inflight];
		assert_int_equal(elv_complete(S.q, &io->rq, S.now), 0);
		check();
		io->busy = 0;
		if (io->stream >= 0) {
			ss = &S.st[io->stream];
			ss->dev_ns += io->end - io->start;
			ss->done++;
			ss->next_issue = S.now + ss->think;
		}
	}
}

/* Run the closed loop until @until (or until nothing can happen any more). */
static void sim_run(uint64_t until)
{
	unsigned i, spins = 0;
	uint64_t next, last = S.now;
	struct elv_stats st;

	for (;;) {
		spins = S.now == last ? spins + 1 : 0;
		last = S.now;
		if (spins > 10000)
			fail_msg("no progress at %llu: in flight %u, next event %llu, queued %u",
				 (unsigned long long)S.now, S.nr_inflight,
				 (unsigned long long)elv_next_event(S.q), qstats().queued);
		complete_due();
		for (i = 0; i < S.nr_streams; i++) {
			if (S.st[i].on && S.st[i].next_issue <= S.now) {
				if (S.now >= S.st[i].stop_at)
					S.st[i].on = 0;
				else
					issue((int)i);
			}
		}
		while (dispatch_one())
			;
		/* a full device calls back at its next completion anyway */
		next = S.nr_inflight < S.depth ? elv_next_event(S.q) : NEVER;
		for (i = 0; i < S.nr_inflight; i++)
			if (S.inflight[i]->end < next)
				next = S.inflight[i]->end;
		for (i = 0; i < S.nr_streams; i++)
			if (S.st[i].on && S.st[i].next_issue < next)
				next = S.st[i].next_issue;
		st = qstats();
		/* queued work is never stranded: something in flight or a timer pending */
		if (st.queued)
			assert_true(S.nr_inflight > 0 || elv_next_event(S.q) != NEVER);
		if (next == NEVER || next > until)
			break;
		if (next > S.now)
			S.now = next;
	}
	if (S.now < until)
		S.now = until;
}

static void stop_all(void)
{
	unsigned i;

	for (i = 0; i < S.nr_streams; i++)
		S.st[i].stop_at = S.now;
}

/* Finish everything, retire the streams and tear the queue down. */
static void sim_finish(void)
{
	struct elv_request *rq;
	unsigned i;

	stop_all();
	sim_run(S.now + 10000 * MS);
	while (elv_dispatch(S.q, S.now, ELV_DISPATCH_FORCE, &rq) == 0) {
		check();
		assert_int_equal(elv_complete(S.q, rq, S.now), 0);
		elv_container_of(rq, struct sim_io, rq)->busy = 0;
	}
	for (i = 0; i < S.nr_inflight; i++) {
		assert_int_equal(elv_complete(S.q, &S.inflight[i]->rq, S.now), 0);
		S.inflight[i]->busy = 0;
	}
	S.nr_inflight = 0;
	check();
	for (i = 0; i < S.nr_streams; i++) {
		assert_int_equal(elv_stream_exit(S.q, &S.st[i].s, S.now), 0);
		check();
	}
	assert_int_equal(elv_queue_exit(S.q), 0);
	/* with the default slice_idle and group_idle, no idle period ever passes 8 ms */
	assert_true(S.max_idle <= 8 * MS);
}

/* A run: consecutive dispatches of one stream. Its slice: first to last completion. */
struct run {
	int stream;
	uint64_t first_end;
	uint64_t last_end;
	unsigned n;
};

static unsigned runs(struct run *r, unsigned max)
{
	unsigned i, n = 0;

	for (i = 0; i < S.nr_log; i++) {
		if (n && r[n - 1].stream == S.log[i].stream) {
			r[n - 1].last_end = S.log[i].end;
			r[n - 1].n++;
			continue;
		}
		if (n == max)
			break;
		r[n].stream = S.log[i].stream;
		r[n].first_end = r[n].last_end = S.log[i].end;
		r[n].n = 1;
		n++;
	}
	return n;
}

/* ---- fairness and slices ------------------------------------------------------------ */

static void test_four_streams_share_equally(void **state)
{
	uint64_t total = 0;
	unsigned i;

	(void)state;
	sim_init(1, 1);
	for (i = 0; i < 4; i++)
		add_stream(ELV_PRIO(ELV_PRIO_BE, 4), 50 * US, 0);
	sim_run(10000 * MS);
	for (i = 0; i < 4; i++)
		total += S.st[i].dev_ns;
	for (i = 0; i < 4; i++) {
		double share = (double)S.st[i].dev_ns / (double)total;

		print_message("stream %u: %.2f%% of device time, %llu requests\n", i,
			      100.0 * share, (unsigned long long)S.st[i].done);
		assert_true(share >= 0.22 && share <= 0.28);
	}
	/* the device was kept busy: idling cost little */
	assert_true(total >= 9500 * MS);
	sim_finish();
}

static void test_slices_follow_levels(void **state)
{
	static struct run r[512];
	unsigned n, i, seen[2] = {0, 0};
	int hi;

	(void)state;
	sim_init(1, 1);
	hi = add_stream(ELV_PRIO(ELV_PRIO_BE, 0), 50 * US, 0);
	add_stream(ELV_PRIO(ELV_PRIO_BE, 7), 50 * US, 0);
	sim_run(3000 * MS);
	n = runs(r, 512);
	assert_true(n > 10);
	/* skip the first two turns, and the last (cut by the end of the run) */
	for (i = 2; i + 1 < n; i++) {
		uint64_t slice = r[i].last_end - r[i].first_end;
		uint64_t want = r[i].stream == hi ? 180 * MS : 40 * MS;

		if (i < 6)
			print_message("turn %u: stream %d slice %.2f ms (%u requests)\n", i,
				      r[i].stream, (double)slice / MS, r[i].n);
		assert_true(slice >= want && slice <= want + 2 * MS);
		seen[r[i].stream != hi]++;
	}
	assert_true(seen[0] >= 5 && seen[1] >= 5);
	/* turns alternate: each level 7 turn sits between two level 0 turns */
	for (i = 2; i + 1 < n; i++)
		assert_true(r[i].stream != r[i - 1].stream);
	sim_finish();
}

static void test_lone_stream_slices(void **state)
{
	int sync;

	(void)state;
	sim_init(1, 1);
	set_tunable("low_latency", 0);
	sync = add_stream(ELV_PRIO(ELV_PRIO_BE, 4), 50 * US, 0);
	sim_run(1000 * MS);
	/* a lone stream: its turns are slice_sync long, then it starts a new one */
	assert_true(pstat("slices") >= 9 && pstat("slices") <= 11);
	assert_true(S.st[sync].done > 900);
	sim_finish();
}

/* An async writer keeps 64 buffered writes queued; a sync reader competes with it. */
static void test_async_budget_and_sync_preemption(void **state)
{
	int rd, wr;
	unsigned i, k, contended = 0;
	uint64_t turns;

	(void)state;
	sim_init(1, 1);
	rd = add_stream(ELV_PRIO(ELV_PRIO_BE, 4), 50 * US, 0);
	wr = add_stream(ELV_PRIO(ELV_PRIO_BE, 4), 0, 0);
	S.st[wr].op = ELV_OP_WRITE;
	S.st[wr].stride = 16; /* not contiguous: no merging */
	S.st[wr].on = 0;
	for (k = 0; k < 64; k++)
		issue(wr);
	S.st[wr].on = 1;
	S.st[wr].next_issue = NEVER;
	sim_run(2000 * MS);
	/*
	 * While the reader waits, the writer's turns end at their budget of
	 * 2 x slice_async_rq x (8 - level) = 16 requests, or earlier when the reader's next
	 * request preempts them. (Several turns may follow each other within the async
	 * workload's share of target_latency.)
	 */
	for (i = 0; i < S.nr_log; i++)
		if (S.log[i].stream == wr && (S.log[i].waiting & (1u << rd)))
			contended++;
	turns = pstat("async_budget_expired") + pstat("preemptions") + 1;
	print_message("writer: %u requests while the reader waited, %llu budget expiries, "
		      "%llu preemptions; reader %llu requests, writer %llu\n",
		      contended, (unsigned long long)pstat("async_budget_expired"),
		      (unsigned long long)pstat("preemptions"), (unsigned long long)S.st[rd].done,
		      (unsigned long long)S.st[wr].done);
	assert_true(pstat("async_budget_expired") >= 1);
	assert_true(pstat("preemptions") >= 1);
	assert_true(contended <= 16 * turns);
	/* the writer never starves, and the sync reader still gets most of the device */
	assert_true(S.st[wr].done > 0);
	assert_true(S.st[rd].dev_ns > S.st[wr].dev_ns);
	sim_finish();
}

/* Two streams reading alternate chunks of one region: served back to back, no idling. */
static void run_interleaved(void)
{
	int a = add_stream(ELV_PRIO(ELV_PRIO_BE, 4), 50 * US, 0);
	int b = add_stream(ELV_PRIO(ELV_PRIO_BE, 4), 50 * US, 0);

	S.st[a].sector = 1000000;
	S.st[b].sector = 1000008;
	S.st[a].stride = S.st[b].stride = 16;
	sim_run(1000 * MS);
}

static void test_cooperating_streams(void **state)
{
	uint64_t together;

	(void)state;
	sim_init(1, 1);
	run_interleaved();
	together = S.st[0].done + S.st[1].done;
	print_message("interleaved readers: %llu requests in 1 s, %llu coop switches, "
		      "%llu idle waits\n",
		      (unsigned long long)together, (unsigned long long)pstat("coop_switches"),
		      (unsigned long long)qstats().idle_count);
	assert_true(pstat("coop_switches") > 800);
	assert_true(together > 900);
	assert_true(S.st[0].done >= together / 2 - 2 && S.st[1].done >= together / 2 - 2);
	sim_finish();
}

/* ---- classes ------------------------------------------------------------------------ */

static void test_rt_before_be(void **state)
{
	int rt, be;
	unsigned i, be_during = 0;
	uint64_t rt_first_dispatch = NEVER, be_dev = 0, be_resume = NEVER, rt_last_end = 0;

	(void)state;
	sim_init(1, 1);
	be = add_stream(ELV_PRIO(ELV_PRIO_BE, 0), 50 * US, 0);
	rt = add_stream(ELV_PRIO(ELV_PRIO_RT, 7), 50 * US, 500 * MS);
	S.st[rt].stop_at = 1500 * MS;
	sim_run(2000 * MS);
	/* the RT stream preempted the BE stream's slice at once ... */
	for (i = 0; i < S.nr_log && rt_first_dispatch == NEVER; i++)
		if (S.log[i].stream == rt)
			rt_first_dispatch = S.log[i].dispatch;
	print_message("RT arrives at 500 ms, first dispatched at %.3f ms\n",
		      (double)rt_first_dispatch / MS);
	assert_true(rt_first_dispatch <= 500 * MS + 10 * MS);
	assert_true(pstat("preemptions") >= 1);
	/*
	 * ... and BE was never dispatched while an RT request waited. It got only the request
	 * that slips in when an RT turn ends with the RT queue momentarily empty (the RT
	 * stream's next request then preempts it). After RT stopped, BE resumed once RT's
	 * idle wait (slice_idle) ran out.
	 */
	for (i = 0; i < S.nr_log; i++) {
		if (S.log[i].stream == rt)
			rt_last_end = S.log[i].end;
		if (S.log[i].stream != be)
			continue;
		assert_false(S.log[i].waiting & (1u << rt));
		if (S.log[i].dispatch >= rt_first_dispatch && S.log[i].dispatch < 1500 * MS) {
			be_during++;
			be_dev += S.log[i].end - S.log[i].dispatch;
			assert_true(i + 1 < S.nr_log && S.log[i + 1].stream == rt);
		}
		if (S.log[i].dispatch >= 1500 * MS && be_resume == NEVER)
			be_resume = S.log[i].dispatch;
	}
	print_message("BE during RT: %u requests (%.1f%% of device time); RT done at %.3f ms, "
		      "BE resumes at %.3f ms\n",
		      be_during, 100.0 * (double)be_dev / (double)(1000 * MS),
		      (double)rt_last_end / MS, (double)be_resume / MS);
	assert_true(be_during <= pstat("slices"));
	assert_int_equal(be_resume, rt_last_end + 8 * MS);
	sim_finish();
}

static void test_idle_class_only_when_others_idle(void **state)
{
	int idle, be;
	unsigned i;
	uint64_t first_idle = NEVER;

	(void)state;
	sim_init(1, 1);
	idle = add_stream(ELV_PRIO(ELV_PRIO_IDLE, 0), 0, 0);
	be = add_stream(ELV_PRIO(ELV_PRIO_BE, 4), 50 * US, 0);
	S.st[be].stop_at = 1000 * MS;
	sim_run(1500 * MS);
	for (i = 0; i < S.nr_log; i++) {
		if (S.log[i].stream == idle && first_idle == NEVER)
			first_idle = S.log[i].dispatch;
		/* nothing of the IDLE class while the BE stream was busy */
		if (S.log[i].stream == idle) {
			assert_true(S.log[i].dispatch >= 1000 * MS);
			assert_false(S.log[i].waiting & (1u << be));
		}
	}
	print_message("IDLE class first served at %.3f ms (BE stopped at 1000 ms)\n",
		      (double)first_idle / MS);
	/* after the grace period that follows the last BE completion */
	assert_true(first_idle >= 1000 * MS + 100 * MS && first_idle <= 1000 * MS + 120 * MS);
	assert_true(S.st[idle].done > 100);
	/* a BE request arriving while IDLE is served preempts it */
	S.st[be].stop_at = NEVER;
	S.st[be].next_issue = S.now;
	S.st[be].on = 1;
	i = S.nr_log;
	sim_run(S.now + 200 * MS);
	for (; i < S.nr_log; i++)
		if (S.log[i].stream == be)
			break;
	assert_true(i < S.nr_log && S.log[i].dispatch <= 1500 * MS + 10 * MS);
	sim_finish();
}

/* ---- idling -------------------------------------------------------------------------- */

static void test_idling_within_slice_idle(void **state)
{
	struct elv_stats st;
	static struct run r[512];
	unsigned n;

	(void)state;
	sim_init(1, 1);
	add_stream(ELV_PRIO(ELV_PRIO_BE, 4), 2 * MS, 0);
	add_stream(ELV_PRIO(ELV_PRIO_BE, 4), 2 * MS, 0);
	sim_run(2000 * MS);
	st = qstats();
	print_message("idle periods %llu, idle %.1f ms, longest %.3f ms, hits %llu\n",
		      (unsigned long long)st.idle_count, (double)st.idle_ns / MS,
		      (double)S.max_idle / MS, (unsigned long long)pstat("idle_hits"));
	assert_true(st.idle_count > 100);
	assert_true(st.idle_ns > 0);
	assert_true(S.max_idle <= 8 * MS);
	assert_true(pstat("idle_hits") > 100);
	/* idling keeps each stream's turn: long runs, not alternation */
	n = runs(r, 512);
	assert_true(n < 40);
	sim_finish();
}

static void test_no_idling_for_slow_thinkers(void **state)
{
	(void)state;
	sim_init(1, 1);
	add_stream(ELV_PRIO(ELV_PRIO_BE, 4), 20 * MS, 0);
	sim_run(2000 * MS);
	/* think time above slice_idle: the idle window closes once the mean is trusted */
	print_message("idle waits %llu of %llu requests\n",
		      (unsigned long long)pstat("idle_waits"), (unsigned long long)S.st[0].done);
	assert_true(pstat("idle_waits") <= 6);
	sim_finish();
}

static void run_two_thinkers(void)
{
	add_stream(ELV_PRIO(ELV_PRIO_BE, 4), 2 * MS, 0);
	add_stream(ELV_PRIO(ELV_PRIO_BE, 4), 2 * MS, 0);
	add_stream(ELV_PRIO(ELV_PRIO_BE, 4), 0, 0);
	sim_run(1000 * MS);
}

static void test_no_idling_on_queueing_flash(void **state)
{
	struct elv_stats st;

	(void)state;
	sim_init(32, 0);
	run_two_thinkers();
	st = qstats();
	assert_int_equal(st.idle_ns, 0);
	assert_int_equal(st.idle_count, 0);
	assert_true(S.st[0].done > 300 && S.st[2].done > 3000);
	sim_finish();

	/* forced on, the same device idles; a single-command flash device idles too */
	sim_init(32, 0);
	set_tunable("idle_mode", 1);
	run_two_thinkers();
	assert_true(qstats().idle_count > 0);
	sim_finish();
	sim_init(1, 0);
	run_two_thinkers();
	assert_true(qstats().idle_count > 0);
	sim_finish();
}

static void test_idling_switched_off(void **state)
{
	(void)state;
	sim_init(1, 1);
	set_tunable("idle_mode", 2);
	run_two_thinkers();
	assert_int_equal(qstats().idle_ns, 0);
	sim_finish();
	sim_init(1, 1);
	set_tunable("slice_idle", 0);
	set_tunable("group_idle", 0);
	run_two_thinkers();
	assert_int_equal(qstats().idle_ns, 0);
	sim_finish();
}

/* ---- lifecycle ---------------------------------------------------------------------- */

/* An 8-sector request of @stream (-1: none); elv_add must return @merged (1: merged away). */
static struct sim_io *add_io_as(int stream, uint8_t op, uint64_t sector, uint8_t flags, int merged)
{
	struct sim_io *io = io_get();

	io->stream = -1;
	io->rq.sector = sector;
	io->rq.nr_sectors = 8;
	io->rq.op = op;
	io->rq.flags = flags;
	io->rq.stream = stream >= 0 ? &S.st[stream].s : NULL;
	assert_int_equal(elv_add(S.q, &io->rq, S.now), merged);
	check();
	return io;
}

static struct sim_io *add_io(int stream, uint8_t op, uint64_t sector, uint8_t flags)
{
	return add_io_as(stream, op, sector, flags, 0);
}

/* A read of @stream that merges into a queued request; its slot is free again at once. */
static void add_merged_read(int stream, uint64_t sector)
{
	add_io_as(stream, ELV_OP_READ, sector, 0, 1)->busy = 0;
}

static struct sim_io *take(int force)
{
	struct elv_request *rq;
	int err = elv_dispatch(S.q, S.now, force ? ELV_DISPATCH_FORCE : 0, &rq);

	check();
	if (err)
		return NULL;
	return elv_container_of(rq, struct sim_io, rq);
}

static void done(struct sim_io *io)
{
	assert_int_equal(elv_complete(S.q, &io->rq, S.now), 0);
	check();
	io->busy = 0;
}

/* The next dispatch must be @want; it completes 1 ms later. */
static void serve(struct sim_io *want)
{
	struct sim_io *x = take(0);

	assert_ptr_equal(x, want);
	S.now += 1 * MS;
	done(x);
}

static int idle_stream(uint8_t prio)
{
	int i = add_stream(prio, 0, 0);

	S.st[i].on = 0;
	return i;
}

/* A fresh simulation with two idle best-effort streams of level 4. */
static void sim_idle_pair(int *s0, int *s1)
{
	sim_init(1, 1);
	*s0 = idle_stream(ELV_PRIO(ELV_PRIO_BE, 4));
	*s1 = idle_stream(ELV_PRIO(ELV_PRIO_BE, 4));
}

/*
 * Two waiting streams whose next requests start at the same sector, both close to the head:
 * when the active stream runs dry the cooperator is the one whose next request was filed
 * first. Re-filing (here: a nearer request added, then cancelled) makes a queue later.
 * Returns 'b' or 'c', the stream served as the cooperator.
 */
static char coop_tie_winner(int churn)
{
	struct sim_io *a, *b, *c, *b2, *x, *y;
	int sa, sb, sc;

	sim_idle_pair(&sa, &sb);
	sc = idle_stream(ELV_PRIO(ELV_PRIO_BE, 4));
	a = add_io(sa, ELV_OP_READ, 1000, 0);
	x = take(0);
	assert_ptr_equal(x, a);
	S.now += 1 * MS;
	b = add_io(sb, ELV_OP_READ, 5000, 0);
	c = add_io(sc, ELV_OP_READ, 5000, 0);
	if (churn) {
		/* nearer to the head: b's queue is filed under 4000, then again under 5000 */
		b2 = add_io(sb, ELV_OP_READ, 4000, 0);
		assert_int_equal(elv_cancel(S.q, &b2->rq), 0);
		check();
		b2->busy = 0;
	}
	S.now += 1 * MS;
	done(a);
	x = take(0);
	assert_true(x == b || x == c);
	assert_int_equal(pstat("coop_switches"), 1);
	S.now += 1 * MS;
	done(x);
	y = take(1);
	assert_true(y == (x == b ? c : b));
	done(y);
	sim_finish();
	return x == b ? 'b' : 'c';
}

static void test_cooperator_ties_go_to_first_filed(void **state)
{
	(void)state;
	assert_int_equal(coop_tie_winner(0), 'b');
	assert_int_equal(coop_tie_winner(1), 'c');
}

/*
 * Within a queue the head moves to the cheaper of the next request up and the one below
 * (backward seeks cost back_seek_penalty times their length, equal costs go up, farther back
 * than back_seek_max is a wrap that comes last), wherever in the sector space that happens.
 */
static void seek_order_from(uint64_t base)
{
	struct sim_io *x, *b, *f, *w, *g;
	uint64_t h = base + 8; /* the head once x is dispatched */
	int s;

	sim_init(1, 1);
	s = idle_stream(ELV_PRIO(ELV_PRIO_BE, 4));
	x = add_io(s, ELV_OP_READ, base, 0);
	assert_ptr_equal(take(0), x);
	b = add_io(s, ELV_OP_READ, h - 100, 0);   /* 100 back: costs 200 */
	f = add_io(s, ELV_OP_READ, h + 200, 0);   /* 200 forward: ties with b, goes first */
	w = add_io(s, ELV_OP_READ, h - 40000, 0); /* beyond 32768 sectors back: a wrap */
	g = add_io(s, ELV_OP_READ, h + 300, 0);
	S.now += 1 * MS;
	done(x);
	assert_ptr_equal(take(0), f);
	S.now += 1 * MS;
	done(f);
	assert_ptr_equal(take(0), g); /* 100 forward against 300 back */
	S.now += 1 * MS;
	done(g);
	assert_ptr_equal(take(0), b); /* 400 back against a wrap */
	S.now += 1 * MS;
	done(b);
	assert_ptr_equal(take(0), w);
	done(w);
	sim_finish();
}

static void test_seek_order_anywhere(void **state)
{
	(void)state;
	seek_order_from(1ULL << 20);
	seek_order_from(UINT64_MAX - 20000); /* backward costs near the end of the sector space */
}

static void test_requeue(void **state)
{
	struct sim_io *a, *b, *x, *y;
	int s0;

	(void)state;
	sim_init(1, 1);
	s0 = idle_stream(ELV_PRIO(ELV_PRIO_BE, 4));
	a = add_io(s0, ELV_OP_READ, 1000, 0);
	b = add_io(s0, ELV_OP_READ, 2000, 0);
	x = take(0);
	assert_ptr_equal(x, a);
	assert_int_equal(elv_requeue(S.q, &x->rq, S.now), 0);
	check();
	/* the requeued request goes out again first */
	S.now += 1 * MS;
	y = take(0);
	assert_ptr_equal(y, a);
	S.now += 1 * MS;
	done(y);
	y = take(0);
	assert_ptr_equal(y, b);
	S.now += 1 * MS;
	done(y);
	/*
	 * The queue idles for the stream's next request. With nothing queued the host need not
	 * call back (no next event); the wait that ran out is settled at the next call, at its
	 * own end time.
	 */
	assert_int_equal(qstats().idle_count, 1);
	assert_int_equal(elv_next_event(S.q), NEVER);
	S.now += 30 * MS;
	b = add_io(-1, ELV_OP_WRITE, 5000, 0);
	assert_int_equal(pstat("idle_timeouts"), 1);
	assert_int_equal(qstats().idle_ns, 8 * MS);
	y = take(0);
	assert_ptr_equal(y, b);
	done(y);
	assert_int_equal(qstats().requeued, 1);
	sim_finish();
}

static void drained(void *arg, struct elv_request *rq)
{
	(*(unsigned *)arg)++;
	elv_container_of(rq, struct sim_io, rq)->busy = 0;
}

/* A requeued request the host then drains never completes here: nothing may wait for it. */
static void test_requeue_then_drain(void **state)
{
	struct sim_io *a, *c, *x;
	unsigned n = 0;
	int s0;

	(void)state;
	sim_init(1, 1);
	s0 = idle_stream(ELV_PRIO(ELV_PRIO_BE, 4));
	a = add_io(s0, ELV_OP_READ, 1000, 0);
	add_io(s0, ELV_OP_READ, 2000, 0);
	x = take(0);
	assert_ptr_equal(x, a);
	assert_int_equal(elv_requeue(S.q, &x->rq, S.now), 0);
	check();
	assert_int_equal(elv_drain(S.q, drained, &n), 2);
	check();
	assert_int_equal(n, 2);
	S.now += 1 * MS;
	c = add_io(s0, ELV_OP_READ, 3000, 0);
	serve(c);
	sim_finish();
}

/* A stream that leaves while its queue idles for it: the wait ends, others go at once. */
static void test_stream_exit_while_idling(void **state)
{
	struct sim_io *a, *b;
	int s0, s1;

	(void)state;
	sim_idle_pair(&s0, &s1);
	a = add_io(s0, ELV_OP_READ, 1000, 0);
	b = add_io(s1, ELV_OP_READ, 900000, 0);
	serve(a);
	assert_null(take(0));
	assert_true(elv_is_idling(S.q));
	assert_int_equal(elv_stream_exit(S.q, &S.st[s0].s, S.now), 0);
	check();
	assert_false(elv_is_idling(S.q));
	serve(b);
	assert_int_equal(elv_stream_exit(S.q, &S.st[s1].s, S.now), 0);
	S.nr_streams = 0;
	sim_finish();
}

/* Barriers: nothing passes one, and the queue does not idle while one waits. */
static void test_barrier(void **state)
{
	struct sim_io *a, *b, *c, *d, *x;
	int s0, s1;

	(void)state;
	sim_idle_pair(&s0, &s1);
	a = add_io(s0, ELV_OP_READ, 1000, 0);
	b = add_io(s1, ELV_OP_READ, 900000, 0);
	c = add_io(-1, ELV_OP_WRITE, 5000, ELV_RQ_BARRIER);
	d = add_io(s0, ELV_OP_READ, 1008, 0);
	serve(a);
	/* stream 0 would be worth idling for, but the barrier must not wait */
	x = take(0);
	assert_ptr_equal(x, b);
	assert_false(elv_is_idling(S.q));
	S.now += 1 * MS;
	done(x);
	serve(c);
	/* with the barrier gone, stream 1's idle window runs its course before d */
	assert_null(take(0));
	assert_true(elv_next_event(S.q) <= S.now + 8 * MS);
	S.now = elv_next_event(S.q);
	serve(d);
	sim_finish();
}

static void test_cancel_and_anonymous(void **state)
{
	struct sim_io *io[12], *x;
	int s0, s1, seen = 0;
	unsigned i;

	(void)state;
	sim_init(1, 1);
	s0 = idle_stream(ELV_PRIO(ELV_PRIO_BE, 4));
	s1 = idle_stream(ELV_PRIO(ELV_PRIO_BE, 2));
	io[0] = add_io(s0, ELV_OP_READ, 100, 0);
	io[1] = add_io(s0, ELV_OP_READ, 300, 0);
	io[2] = add_io(s1, ELV_OP_READ, 900000, 0);
	io[3] = add_io(-1, ELV_OP_READ, 5000, 0);            /* anonymous read: async */
	io[4] = add_io(-1, ELV_OP_WRITE, 7000, 0);           /* anonymous write */
	io[5] = add_io(s1, ELV_OP_WRITE, 8000, 0);           /* a stream's async write */
	io[6] = add_io(s1, ELV_OP_WRITE, 9000, ELV_RQ_SYNC); /* sync write: its own queue */
	/* cancel from a waiting queue, from the shared async queue, and a whole queue */
	assert_int_equal(elv_cancel(S.q, &io[1]->rq), 0);
	check();
	assert_int_equal(elv_cancel(S.q, &io[4]->rq), 0);
	check();
	assert_int_equal(elv_cancel(S.q, &io[2]->rq), 0);
	check();
	assert_int_equal(elv_cancel(S.q, &io[6]->rq), 0);
	check();
	io[1]->busy = io[2]->busy = io[4]->busy = io[6]->busy = 0;
	/* the rest comes out, sync first, each exactly once */
	while ((x = take(0)) != NULL || elv_next_event(S.q) != NEVER) {
		if (!x) {
			S.now = elv_next_event(S.q);
			continue;
		}
		assert_true(x == io[0] || x == io[3] || x == io[5]);
		if (seen == 0)
			assert_ptr_equal(x, io[0]);
		seen++;
		S.now += 1 * MS;
		done(x);
	}
	assert_int_equal(seen, 3);
	assert_int_equal(qstats().queued, 0);
	/* the active queue emptied by a cancel while idling is handled too */
	io[7] = add_io(s0, ELV_OP_READ, 400, 0);
	x = take(0);
	S.now += 1 * MS;
	done(x);
	io[8] = add_io(s0, ELV_OP_READ, 408, 0);
	assert_int_equal(elv_cancel(S.q, &io[8]->rq), 0);
	check();
	io[8]->busy = 0;
	for (i = 0; i < 5 && elv_next_event(S.q) != NEVER; i++) {
		S.now = elv_next_event(S.q);
		assert_null(take(0));
	}
	assert_int_equal(elv_next_event(S.q), NEVER);
	sim_finish();
}

static void test_anonymous_stream_never_idles(void **state)
{
	int a;

	(void)state;
	sim_init(1, 1);
	a = add_stream(0, 50 * US, 0);
	S.st[a].anonymous = 1;
	sim_run(500 * MS);
	assert_true(S.st[a].done > 300);
	assert_int_equal(pstat("idle_waits"), 0);
	assert_int_equal(qstats().idle_ns, 0);
	sim_finish();
}

static void test_merges_stay_in_their_queue(void **state)
{
	struct sim_io *a, *b, *c, *d, *x;
	int s0, s1;

	(void)state;
	sim_idle_pair(&s0, &s1);
	a = add_io(s0, ELV_OP_READ, 1000, 0);
	/* another stream's contiguous read is not merged into a */
	b = add_io(s1, ELV_OP_READ, 1008, 0);
	assert_int_equal(qstats().merged_back, 0);
	/* the same stream's is */
	add_merged_read(s0, 992);
	assert_int_equal(qstats().merged_front, 1);
	assert_int_equal(a->rq.sector, 992);
	/* d (stream 0) right after b (stream 1) stays apart from b */
	d = add_io(s0, ELV_OP_READ, 1016, 0);
	assert_int_equal(qstats().merged_back, 0);
	/* e fills the gap in stream 0: back merge into a, then a and d become one */
	add_merged_read(s0, 1008);
	d->busy = 0;
	assert_int_equal(qstats().merged_back, 1);
	assert_int_equal(qstats().merged_req, 1);
	assert_int_equal(a->rq.sector, 992);
	assert_int_equal(a->rq.nr_sectors, 32);
	/* joined with an older request, the survivor takes its place in the FIFO */
	S.now += 1 * MS;
	d = add_io(s0, ELV_OP_READ, 3016, 0);
	S.now += 1 * MS;
	c = add_io(s0, ELV_OP_READ, 3000, 0);
	add_merged_read(s0, 3008);
	d->busy = 0;
	assert_int_equal(qstats().merged_req, 2);
	assert_int_equal(c->rq.nr_sectors, 24);
	assert_int_equal(c->rq.ELV_PRIVATE(time), S.now - 1 * MS);
	serve(a);
	serve(c);
	/* b starts near the head: its queue goes next instead of stream 0 idling (coop) */
	x = take(0);
	assert_ptr_equal(x, b);
	assert_int_equal(pstat("coop_switches"), 1);
	assert_int_equal(qstats().idle_count, 0);
	S.now += 1 * MS;
	done(x);
	sim_finish();
}

static void test_prio_change_next_slice(void **state)
{
	static struct run r[256];
	unsigned n, i;
	int s0;

	(void)state;
	sim_init(1, 1);
	set_tunable("low_latency", 0);
	s0 = add_stream(ELV_PRIO(ELV_PRIO_BE, 7), 50 * US, 0);
	add_stream(ELV_PRIO(ELV_PRIO_BE, 4), 50 * US, 0);
	sim_run(500 * MS);
	assert_int_equal(elv_stream_set_prio(S.q, &S.st[s0].s, ELV_PRIO(ELV_PRIO_BE, 0)), 0);
	S.nr_log = 0;
	sim_run(S.now + 1500 * MS);
	n = runs(r, 256);
	/* after the turn in progress, stream 0 runs 180 ms slices instead of 40 ms */
	for (i = 2; i + 1 < n; i++) {
		uint64_t slice = r[i].last_end - r[i].first_end;
		uint64_t want = r[i].stream == s0 ? 180 * MS : 100 * MS;

		assert_true(slice >= want && slice <= want + 2 * MS);
	}
	sim_finish();
}

static void test_switch_with_requests(void **state)
{
	struct sim_io *x;
	int s0;
	unsigned i, seen = 0;
	const struct elv_policy *p;

	(void)state;
	sim_init(1, 1);
	s0 = idle_stream(ELV_PRIO(ELV_PRIO_BE, 4));
	for (i = 0; i < 6; i++)
		add_io(i % 2 ? -1 : s0, i % 3 ? ELV_OP_READ : ELV_OP_WRITE, 10000 - 100 * i, 0);
	x = take(0);
	assert_non_null(x);
	/* through every policy and back, with one in flight */
	for (i = 0; (p = elv_policy_at(i)) != NULL; i++) {
		assert_int_equal(elv_switch(S.q, p, S.now), 0);
		check();
	}
	assert_true(i >= 4); /* noop, deadline, anticipatory and cfq at least were switched to */
	assert_int_equal(elv_switch(S.q, elv_policy_find("cfq"), S.now), 0);
	check();
	S.now += 1 * MS;
	done(x);
	seen++;
	while ((x = take(0)) != NULL || elv_next_event(S.q) != NEVER) {
		if (!x) {
			S.now = elv_next_event(S.q);
			continue;
		}
		seen++;
		S.now += 1 * MS;
		done(x);
	}
	assert_int_equal(seen, 6);
	sim_finish();
}

static void test_tunables(void **state)
{
	int64_t v;

	(void)state;
	sim_init(1, 1);
	assert_int_equal(elv_tunable_get(S.q, "slice_sync", &v), 0);
	assert_int_equal(v, 100);
	assert_int_equal(elv_tunable_get(S.q, "back_seek_max", &v), 0);
	assert_int_equal(v, 16384);
	assert_int_equal(elv_tunable_get(S.q, "target_latency", &v), 0);
	assert_int_equal(v, 300);
	assert_int_equal(elv_tunable_get(S.q, "quantum", &v), 0);
	assert_int_equal(v, 8);
	assert_int_equal(elv_tunable_set(S.q, "quantum", 0), ELV_ERANGE);
	assert_int_equal(elv_tunable_set(S.q, "idle_mode", 3), ELV_ERANGE);
	assert_int_equal(elv_tunable_get(S.q, "quantum", &v), 0);
	assert_int_equal(v, 8);
	check();
	sim_finish();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_four_streams_share_equally),
		cmocka_unit_test(test_slices_follow_levels),
		cmocka_unit_test(test_lone_stream_slices),
		cmocka_unit_test(test_async_budget_and_sync_preemption),
		cmocka_unit_test(test_cooperating_streams),
		cmocka_unit_test(test_cooperator_ties_go_to_first_filed),
		cmocka_unit_test(test_rt_before_be),
		cmocka_unit_test(test_idle_class_only_when_others_idle),
		cmocka_unit_test(test_idling_within_slice_idle),
		cmocka_unit_test(test_no_idling_for_slow_thinkers),
		cmocka_unit_test(test_no_idling_on_queueing_flash),
		cmocka_unit_test(test_idling_switched_off),
		cmocka_unit_test(test_seek_order_anywhere),
		cmocka_unit_test(test_requeue),
		cmocka_unit_test(test_requeue_then_drain),
		cmocka_unit_test(test_stream_exit_while_idling),
		cmocka_unit_test(test_barrier),
		cmocka_unit_test(test_cancel_and_anonymous),
		cmocka_unit_test(test_anonymous_stream_never_idles),
		cmocka_unit_test(test_merges_stay_in_their_queue),
		cmocka_unit_test(test_prio_change_next_slice),
		cmocka_unit_test(test_switch_with_requests),
		cmocka_unit_test(test_tunables),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
