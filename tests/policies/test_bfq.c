/*
 * bfq: the behavioural scenarios of its fact sheet (weighted sharing, budget growth and
 * warm-up, interactive and soft real-time weight raising, large bursts, the IDLE class,
 * merging of cooperating streams), weights of streams and groups, tunable validation and
 * the policy's invariants.
 *
 * A small simulated host drives the queue: a device that serves one request at a time (or
 * @depth) at a constant transfer rate, greedy sequential readers that always keep a number
 * of requests queued, and periodic readers. elv_queue_check() runs after every call that
 * changes the queue. Expected figures are worked out from the rules in the comments.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "elevator/policy.h"
#include "support/harness.h"

#define MS 1000000ULL
#define S (1000u * MS)
#define NR_ST 12
#define NR_IO 4096
#define MAX_DEPTH 8

enum kind { IDLE_ST = 0, GREEDY, PERIODIC };

struct sst {
	struct elv_stream s;
	enum kind kind;
	unsigned backlog;      /* GREEDY: requests kept queued */
	uint32_t size;         /* sectors per request */
	uint64_t period;       /* PERIODIC: ns between arrivals */
	uint64_t next_arrival; /* PERIODIC */
	uint64_t next_sector;
	unsigned queued;       /* added and not dispatched */
	unsigned outstanding;  /* added and not completed */
	uint64_t served;       /* sectors dispatched */
	uint64_t window;       /* sectors dispatched since sim_mark() */
	unsigned dispatches;
	uint64_t last_dispatch;
	uint64_t min_gap;      /* shortest time between two of its dispatches */
};

struct sio {
	struct elv_request rq;
	struct sst *st;
	uint64_t done; /* completion time once dispatched */
	int used;
};

struct sim {
	uint64_t mem[32768];
	struct elv_queue *q;
	struct elv_config cfg;
	uint64_t now;
	uint64_t ns_per_sector;
	uint64_t device_free;
	unsigned depth;
	struct sst st[NR_ST];
	unsigned nr_st;
	struct sio io[NR_IO];
	struct sio *inflight[MAX_DEPTH];
	unsigned nr_inflight;
	struct elv_group grp[4];
};

static struct sim SIM;

static void check(const struct sim *m)
{
	assert_int_equal(elv_queue_check(m->q), 0);
}

static int64_t stat_of(const struct sim *m, const char *name)
{
	return (int64_t)th_queue_stat(m->q, name);
}

static void set_tunable(struct sim *m, const char *name, int64_t v)
{
	assert_int_equal(elv_tunable_set(m->q, name, v), 0);
	check(m);
}

/* A queue running bfq on a device moving one sector per @ns_per_sector ns. */
static void sim_setup(struct sim *m, int rotational, unsigned depth, uint64_t ns_per_sector,
		      uint64_t start)
{
	memset(m, 0, sizeof(*m));
	m->cfg.dev.rotational = (uint8_t)rotational;
	m->cfg.dev.queue_depth = (uint16_t)depth;
	m->cfg.no_merges = 1; /* every request is served as it was added */
	m->depth = depth;
	m->ns_per_sector = ns_per_sector;
	m->now = start;
	m->device_free = start;
	assert_true(elv_queue_size(&elv_policy_bfq, &m->cfg) <= sizeof(m->mem));
	assert_int_equal(elv_queue_init(&m->q, m->mem, sizeof(m->mem), &elv_policy_bfq, &m->cfg),
			 0);
	check(m);
}

static struct sst *sim_stream(struct sim *m, enum kind kind, uint16_t weight, uint8_t ioprio,
			      struct elv_group *g)
{
	struct sst *t;

	assert_true(m->nr_st < NR_ST);
	t = &m->st[m->nr_st];
	memset(t, 0, sizeof(*t));
	t->kind = kind;
	t->backlog = 16;
	t->size = 128;
	t->s.weight = weight;
	t->s.ioprio = ioprio;
	t->next_sector = 1000000ULL * (m->nr_st + 1) * 64; /* streams far apart on the disk */
	t->min_gap = UINT64_MAX;
	assert_int_equal(elv_stream_init(m->q, &t->s, m->now), 0);
	if (g)
		assert_int_equal(elv_stream_set_group(m->q, &t->s, g), 0);
	m->nr_st++;
	check(m);
	return t;
}

static void sim_add(struct sim *m, struct sst *t)
{
	unsigned i;

	for (i = 0; i < NR_IO && m->io[i].used; i++)
		;
	assert_true(i < NR_IO);
	memset(&m->io[i], 0, sizeof(m->io[i]));
	m->io[i].used = 1;
	m->io[i].st = t;
	m->io[i].rq.sector = t->next_sector;
	m->io[i].rq.nr_sectors = t->size;
	m->io[i].rq.op = ELV_OP_READ;
	m->io[i].rq.stream = &t->s;
	t->next_sector += t->size;
	assert_int_equal(elv_add(m->q, &m->io[i].rq, m->now), 0);
	t->queued++;
	t->outstanding++;
	check(m);
}

static void sim_arrivals(struct sim *m)
{
	unsigned i;

	for (i = 0; i < m->nr_st; i++) {
		struct sst *t = &m->st[i];

		if (t->kind == GREEDY)
			while (t->queued < t->backlog)
				sim_add(m, t);
		if (t->kind == PERIODIC && !t->outstanding && !elv_time_before(m->now, t->next_arrival)) {
			sim_add(m, t);
			t->next_arrival += t->period;
		}
	}
}

static void sim_dispatch(struct sim *m)
{
	struct elv_request *rq;

	while (m->nr_inflight < m->depth && elv_dispatch(m->q, m->now, 0, &rq) == 0) {
		struct sio *io = elv_container_of(rq, struct sio, rq);
		struct sst *t = io->st;

		check(m);
		t->queued--;
		t->served += rq->nr_sectors;
		t->window += rq->nr_sectors;
		if (t->dispatches && m->now - t->last_dispatch < t->min_gap)
			t->min_gap = m->now - t->last_dispatch;
		t->dispatches++;
		t->last_dispatch = m->now;
		if (elv_time_before(m->device_free, m->now))
			m->device_free = m->now;
		m->device_free += rq->nr_sectors * m->ns_per_sector;
		io->done = m->device_free;
		m->inflight[m->nr_inflight++] = io;
	}
	check(m);
}

/* Complete, in order, everything the device has finished by now. */
static void sim_complete(struct sim *m)
{
	while (m->nr_inflight && !elv_time_before(m->now, m->inflight[0]->done)) {
		struct sio *io = m->inflight[0];

		memmove(&m->inflight[0], &m->inflight[1], --m->nr_inflight * sizeof(m->inflight[0]));
		assert_int_equal(elv_complete(m->q, &io->rq, m->now), 0);
		io->st->outstanding--;
		io->used = 0;
		check(m);
	}
}

/* Run the host until @until: arrivals, dispatches, completions, timers. */
static void sim_run(struct sim *m, uint64_t until)
{
	while (elv_time_before(m->now, until)) {
		uint64_t next = until, ev;
		unsigned i;

		sim_arrivals(m);
		sim_dispatch(m);
		if (m->nr_inflight && elv_time_before(m->inflight[0]->done, next))
			next = m->inflight[0]->done;
		ev = elv_next_event(m->q);
		if (ev != ELV_TIME_NEVER && elv_time_after(ev, m->now) && elv_time_before(ev, next))
			next = ev;
		for (i = 0; i < m->nr_st; i++)
			if (m->st[i].kind == PERIODIC && !m->st[i].outstanding &&
			    elv_time_after(m->st[i].next_arrival, m->now) &&
			    elv_time_before(m->st[i].next_arrival, next))
				next = m->st[i].next_arrival;
		if (!elv_time_after(next, m->now))
			next = m->now + 1000; /* a due timer: let a microsecond pass */
		m->now = next;
		sim_complete(m);
	}
}

static void sim_mark(struct sim *m)
{
	unsigned i;

	for (i = 0; i < m->nr_st; i++)
		m->st[i].window = 0;
}

/* Count every stream's dispatched sectors afresh over the next @ns of simulated time. */
static void sim_window(struct sim *m, uint64_t ns)
{
	sim_mark(m);
	sim_run(m, m->now + ns);
}

/* Stop arrivals, serve everything, retire streams and groups, tear the queue down. */
static void sim_finish(struct sim *m)
{
	struct elv_request *rq;
	unsigned i;

	for (i = 0; i < m->nr_st; i++)
		m->st[i].kind = IDLE_ST;
	while (m->nr_inflight || elv_dispatch(m->q, m->now, ELV_DISPATCH_FORCE, &rq) == 0) {
		if (!m->nr_inflight) {
			struct sio *io = elv_container_of(rq, struct sio, rq);

			io->st->queued--;
			io->done = m->now + rq->nr_sectors * m->ns_per_sector;
			m->inflight[m->nr_inflight++] = io;
		}
		m->now = m->inflight[0]->done;
		sim_complete(m);
	}
	for (i = 0; i < m->nr_st; i++)
		assert_int_equal(elv_stream_exit(m->q, &m->st[i].s, m->now), 0);
	for (i = 0; i < 4; i++)
		if (elv_queue_group_next(m->q, NULL) == &m->grp[i])
			assert_int_equal(elv_group_exit(m->q, &m->grp[i], m->now), 0);
	for (i = 0; i < 4; i++)
		if (elv_queue_group_next(m->q, NULL) == &m->grp[i])
			assert_int_equal(elv_group_exit(m->q, &m->grp[i], m->now), 0);
	check(m);
	assert_int_equal(elv_queue_exit(m->q), 0);
}

static double ratio(uint64_t a, uint64_t b)
{
	return (double)a / (double)b;
}

/* 200 MB/s: one sector in 2.56 us, so a 16384-sector budget takes 42 ms, within 125 ms. */
#define FAST_NS 2560u

/*
 * 1.18 test 1. Two always-backlogged sequential readers, weights 100 and 300, low_latency
 * off. B-WF2Q+ charges each slot's sectors to its queue's virtual finish time as
 * sectors / weight, so over many slots each queue's sectors are proportional to its weight:
 * 1 : 3. Both budgets fit in one timeout on this device, so every slot ends with its budget
 * exhausted and no time is charged. Over 10 s that is about 4 million sectors, some 250
 * slots: the ratio is within 5%.
 */
static void test_weights_1_to_3(void **state)
{
	struct sst *a, *b;
	double r;

	(void)state;
	sim_setup(&SIM, 1, 1, FAST_NS, 5 * S);
	set_tunable(&SIM, "low_latency", 0);
	a = sim_stream(&SIM, GREEDY, 100, 0, NULL);
	b = sim_stream(&SIM, GREEDY, 300, 0, NULL);
	sim_run(&SIM, SIM.now + 10 * S);
	r = ratio(b->served, a->served);
	assert_true(r > 3.0 * 0.95 && r < 3.0 * 1.05);
	assert_true(stat_of(&SIM, "expired_budget_exhausted") > 100);
	assert_int_equal(stat_of(&SIM, "expired_budget_timeout"), 0);
	sim_finish(&SIM);
}

/*
 * Groups: a group of weight 200 and one of 100, three default-weight streams in each. At the
 * root the two group entities share the device 2 : 1; inside each group its three streams
 * share its part equally. Over 10 s: 2 : 1 within 5%, and within the heavier group no
 * stream is far from a third of it.
 */
static void test_groups_2_to_1(void **state)
{
	struct sst *t[6];
	uint64_t g1 = 0, g2 = 0;
	unsigned i;
	double r;

	(void)state;
	sim_setup(&SIM, 1, 1, FAST_NS, 0);
	set_tunable(&SIM, "low_latency", 0);
	SIM.grp[0].weight = 200;
	SIM.grp[1].weight = 100;
	assert_int_equal(elv_group_init(SIM.q, &SIM.grp[0], SIM.now), 0);
	assert_int_equal(elv_group_init(SIM.q, &SIM.grp[1], SIM.now), 0);
	for (i = 0; i < 6; i++)
		t[i] = sim_stream(&SIM, GREEDY, 0, 0, &SIM.grp[i / 3]);
	sim_run(&SIM, SIM.now + 10 * S);
	for (i = 0; i < 3; i++) {
		g1 += t[i]->served;
		g2 += t[i + 3]->served;
	}
	r = ratio(g1, g2);
	assert_true(r > 2.0 * 0.95 && r < 2.0 * 1.05);
	for (i = 0; i < 3; i++)
		assert_true(ratio(t[i]->served * 3, g1) > 0.8 && ratio(t[i]->served * 3, g1) < 1.2);
	/* a group weight change applies from the group's next activation: 1 : 1 then */
	assert_int_equal(elv_group_set_weight(SIM.q, &SIM.grp[0], 100), 0);
	sim_run(&SIM, SIM.now + 1 * S);
	sim_window(&SIM, 5 * S);
	for (i = 0, g1 = g2 = 0; i < 3; i++) {
		g1 += t[i]->window;
		g2 += t[i + 3]->window;
	}
	r = ratio(g1, g2);
	assert_true(r > 0.95 && r < 1.05);
	sim_finish(&SIM);
}

/*
 * 1.18 test 2, budget growth. One sequential reader, max_budget 16384, low_latency off, a
 * device moving 16384 sectors well within one 125 ms timeout. The queue's first budget is
 * 2/3 of 16384 = 10922 sectors: 85 requests of 128 (85 * 128 = 10880; the 86th would pass
 * it), then BUDGET_EXHAUSTED sets min(4 * 10922, 16384) = 16384: 128 requests per slot from
 * then on. The "slices" counter marks each new slot.
 */
static void test_budget_growth(void **state)
{
	struct sst *a;
	unsigned per_slot[4] = { 0, 0, 0, 0 }, slot = 0;
	int64_t slices;

	(void)state;
	sim_setup(&SIM, 1, 1, FAST_NS, 0);
	set_tunable(&SIM, "low_latency", 0);
	set_tunable(&SIM, "max_budget", 16384);
	a = sim_stream(&SIM, GREEDY, 0, 0, NULL);
	a->backlog = 200;
	sim_arrivals(&SIM);
	slices = stat_of(&SIM, "slices");
	while (slot < 4) {
		struct elv_request *rq;

		assert_int_equal(elv_dispatch(SIM.q, SIM.now, 0, &rq), 0);
		check(&SIM);
		if (stat_of(&SIM, "slices") != slices) {
			slices = stat_of(&SIM, "slices");
			if (per_slot[0])
				slot++;
		}
		if (slot < 4)
			per_slot[slot]++;
		SIM.now += 128 * FAST_NS;
		assert_int_equal(elv_complete(SIM.q, rq, SIM.now), 0);
		elv_container_of(rq, struct sio, rq)->used = 0;
		a->queued--;
		a->outstanding--;
		check(&SIM);
		sim_arrivals(&SIM);
	}
	assert_int_equal(per_slot[0], 85);
	assert_int_equal(per_slot[1], 128);
	assert_int_equal(per_slot[2], 128);
	assert_int_equal(per_slot[3], 128);
	sim_finish(&SIM);
}

/*
 * 1.18 test 2, second half, and test 3 (the warm-up of budgets_assigned). slice_idle 0, so
 * a queue that empties expires with NO_MORE_REQUESTS and its next budget is
 * max(service, min_budget). min_budget is dev_max_budget / 32: 16384 / 32 = 512 while
 * budgets_assigned < 194, then max_budget / 32 (max_budget set to 4096: 128).
 * budgets_assigned runs b <- (7b + 256) / 8 at each selection: 32, 60, 84, 105, 123, 139,
 * 153, 165, 176, 186, 194: the 11th selection reaches 194.
 * Each round: one 32-sector read alone (a selection of its own; it expires with
 * NO_MORE_REQUESTS after 32 sectors, so max_budget = max(32, min_budget)), then 40 reads of
 * 32 sectors at once, added at the completion: the queue resumes its slot's budget capped
 * by max_budget (1.8 step 6), so the first slot serves min_budget / 32 of them, 16 before
 * the warm-up and 4 after.
 */
static void test_budget_warm_up(void **state)
{
	struct sst *a;
	unsigned counts[8], k;
	int64_t before;

	(void)state;
	sim_setup(&SIM, 1, 1, FAST_NS, 0);
	set_tunable(&SIM, "low_latency", 0);
	set_tunable(&SIM, "slice_idle", 0);
	set_tunable(&SIM, "max_budget", 4096);
	a = sim_stream(&SIM, IDLE_ST, 0, 0, NULL);
	a->size = 32;
	for (k = 0; k < 8; k++) {
		struct elv_request *rq;
		unsigned n = 0, i;

		before = stat_of(&SIM, "slices");
		/* the lone read: selection number before + 1 */
		sim_add(&SIM, a);
		assert_int_equal(elv_dispatch(SIM.q, SIM.now, 0, &rq), 0);
		SIM.now += MS;
		assert_int_equal(elv_complete(SIM.q, rq, SIM.now), 0);
		elv_container_of(rq, struct sio, rq)->used = 0;
		a->queued = a->outstanding = 0;
		check(&SIM);
		assert_int_equal(stat_of(&SIM, "expired_no_more_requests") > 0, 1);
		/* the batch: count the first slot's dispatches */
		for (i = 0; i < 40; i++)
			sim_add(&SIM, a);
		before = stat_of(&SIM, "slices");
		while (elv_dispatch(SIM.q, SIM.now, 0, &rq) == 0) {
			if (stat_of(&SIM, "slices") == before + 1)
				n++;
			SIM.now += MS;
			assert_int_equal(elv_complete(SIM.q, rq, SIM.now), 0);
			elv_container_of(rq, struct sio, rq)->used = 0;
			check(&SIM);
		}
		a->queued = a->outstanding = 0;
		counts[k] = n;
		SIM.now += 10 * MS;
	}
	/*
	 * Selections: round k's lone read is selection 1 + the selections of the earlier rounds.
	 * Round 0: lone read = selection 1 (min 512): batch slot 1 serves 16, later slots 4*16,
	 * all 40 in 2 slots (16, then budget min(4*512, 4096) = 2048 covers 24). So each round
	 * takes 3 selections: rounds 0-2 have their lone read at selections 1, 4, 7 (min 512:
	 * 16); round 3's at 10 (512: 16); round 4's at 13 and on (>= 11: min 128: 4 reads).
	 */
	assert_int_equal(counts[0], 16);
	assert_int_equal(counts[1], 16);
	assert_int_equal(counts[2], 16);
	assert_int_equal(counts[3], 16);
	assert_int_equal(counts[4], 4);
	assert_int_equal(counts[5], 4);
	sim_finish(&SIM);
}

/*
 * Rates for the weight-raising tests: 22000 / 2^16 sectors per microsecond, the initial
 * peak-rate guess on a non-rotational device (2/3 of the reference 33000), so the estimate
 * stays where it starts and the raising duration is 2500 ms * 3/2 = 3.75 s.
 */
#define NONROT_NS 2979u

/*
 * 1.18 test 4. A greedy reader A has run for 4 s, past its own creation-time raising (it
 * ends after 120000 sectors, about 0.37 s here); its budget has grown to the device's
 * max_budget, the sectors moved in one 125 ms timeout at the peak rate: 22000 * 125000 >> 16
 * = 41961. Reader B then starts: new, default weight, so interactive: weight 40 * 30 = 1200
 * against 40, and, with the larger weight, it preempts A at once. B's raised budget is
 * 2 * min_budget (2622 sectors); after B's first slot A is still eligible (preempted, it had
 * not received its due: S_A = V), so A gets the one slot it is owed, at most 41961 sectors,
 * and from then on B, whose virtual finish grows 30 times slower, is served alone: the
 * 30/31 share of B-WF2Q+ over the raising period. So in B's first 300 ms (100700 sectors at
 * this rate) A gets at most one budget and B the rest. B's raising ends once it has received
 * 120000 sectors (well before 3.75 s); then the two share 50/50 within 5% over 10 s.
 */
static void test_interactive_raising(void **state)
{
	struct sst *a, *b;
	int64_t raised;
	double r;

	(void)state;
	sim_setup(&SIM, 0, 1, NONROT_NS, 0);
	a = sim_stream(&SIM, GREEDY, 0, 0, NULL);
	sim_run(&SIM, 4 * S);
	raised = stat_of(&SIM, "wr_interactive");
	assert_int_equal(raised, 1); /* A, at its creation */
	b = sim_stream(&SIM, GREEDY, 0, 0, NULL);
	sim_window(&SIM, 300 * MS);
	assert_int_equal(stat_of(&SIM, "wr_interactive"), 2);
	assert_int_equal(stat_of(&SIM, "preemptions"), 1);
	assert_true(a->window <= 41961 + 128);
	assert_true(b->window + a->window >= 100000);
	/* after A's one slot, B alone until its raising ends */
	sim_window(&SIM, 100 * MS);
	assert_int_equal(a->window, 0);
	/* raising over (120000 sectors): even shares over 10 s */
	sim_run(&SIM, SIM.now + 600 * MS);
	sim_window(&SIM, 10 * S);
	r = ratio(b->window, a->window);
	assert_true(r > 0.95 && r < 1.05);
	sim_finish(&SIM);
}

/*
 * 1.18 test 5. C reads 128 sectors every 100 ms, one at a time. Its first activation is
 * interactive (coefficient 30). It then drains, idles 20 ms (raised: at least 20 ms) and
 * expires too idle; its earliest soft real-time start is max(last_idle_bklogged + 128 / 7000
 * s = +18 ms, expiry + slice_idle + 4 ms): well before the next read 100 ms on, which thus
 * switches it to soft real-time (coefficient 3000, 300 ms, renewed at each activation).
 * D reads every 10 ms: each read comes while the queue still idles for it, so it never goes
 * idle to busy again and is never soft real-time.
 */
static void test_soft_rt(void **state)
{
	struct sst *c, *d;

	(void)state;
	sim_setup(&SIM, 0, 1, NONROT_NS, 0);
	c = sim_stream(&SIM, PERIODIC, 0, 0, NULL);
	c->period = 100 * MS;
	sim_run(&SIM, 2 * S);
	assert_int_equal(stat_of(&SIM, "wr_interactive"), 1);
	assert_true(stat_of(&SIM, "wr_soft_rt") >= 1);
	assert_true(c->dispatches >= 19);
	sim_finish(&SIM);

	sim_setup(&SIM, 0, 1, NONROT_NS, 0);
	d = sim_stream(&SIM, PERIODIC, 0, 0, NULL);
	d->period = 10 * MS;
	sim_run(&SIM, 2 * S);
	assert_int_equal(stat_of(&SIM, "wr_soft_rt"), 0);
	assert_true(d->dispatches >= 190);
	sim_finish(&SIM);
}

/*
 * 1.18 test 6. Eight new streams, 20 ms apart, each reading once: the first starts a burst
 * (no queue busy: list of one), the next seven join it; the 8th makes eight and marks them
 * all as a large burst. The first seven were raised at their first activation (7 interactive
 * raisings), the 8th is not. A ninth 100 ms later joins the large burst at creation and is
 * not raised. A tenth 300 ms after the ninth is past the 180 ms burst interval: a new burst,
 * and it is raised (8 raisings in all). One large burst in all.
 */
static void test_large_burst(void **state)
{
	struct sst *t;
	unsigned i;

	(void)state;
	sim_setup(&SIM, 1, 1, FAST_NS, 0);
	for (i = 0; i < 8; i++) {
		t = sim_stream(&SIM, IDLE_ST, 0, 0, NULL);
		sim_add(&SIM, t);
		sim_run(&SIM, SIM.now + 20 * MS);
	}
	assert_int_equal(stat_of(&SIM, "large_bursts"), 1);
	assert_int_equal(stat_of(&SIM, "wr_interactive"), 7);
	sim_run(&SIM, SIM.now + 80 * MS);
	t = sim_stream(&SIM, IDLE_ST, 0, 0, NULL);
	sim_add(&SIM, t);
	sim_run(&SIM, SIM.now + 300 * MS);
	assert_int_equal(stat_of(&SIM, "wr_interactive"), 7);
	t = sim_stream(&SIM, IDLE_ST, 0, 0, NULL);
	sim_add(&SIM, t);
	sim_run(&SIM, SIM.now + 20 * MS);
	assert_int_equal(stat_of(&SIM, "wr_interactive"), 8);
	assert_int_equal(stat_of(&SIM, "large_bursts"), 1);
	sim_finish(&SIM);
}

/*
 * 1.18 test 7. An always-backlogged BE reader and an always-backlogged IDLE-class reader:
 * the IDLE queue is picked only when 200 ms have passed since the last look at the IDLE
 * class, and expires after each of its dispatches while the BE queue is busy. So its
 * dispatches are at least 200 ms apart, and it is not starved: in 4 s it is served at
 * least 10 times (a pick every 200 ms plus at most one BE slot of 42 ms of delay).
 */
static void test_idle_class(void **state)
{
	struct sst *be, *idle;

	(void)state;
	sim_setup(&SIM, 1, 1, FAST_NS, 0);
	set_tunable(&SIM, "low_latency", 0);
	be = sim_stream(&SIM, GREEDY, 0, ELV_PRIO(ELV_PRIO_BE, 4), NULL);
	idle = sim_stream(&SIM, GREEDY, 0, ELV_PRIO(ELV_PRIO_IDLE, 0), NULL);
	sim_run(&SIM, 4 * S);
	assert_true(idle->dispatches >= 10 && idle->dispatches <= 21);
	assert_true(idle->min_gap >= 200 * MS);
	assert_true(be->served > 40 * idle->served);
	sim_finish(&SIM);
}

/* RT before BE: a backlogged RT reader leaves a BE reader nothing while it is busy. */
static void test_rt_before_be(void **state)
{
	struct sst *rt, *be;

	(void)state;
	sim_setup(&SIM, 1, 1, FAST_NS, 0);
	set_tunable(&SIM, "low_latency", 0);
	be = sim_stream(&SIM, GREEDY, 0, ELV_PRIO(ELV_PRIO_BE, 0), NULL);
	sim_run(&SIM, 100 * MS); /* BE got going first */
	rt = sim_stream(&SIM, GREEDY, 0, ELV_PRIO(ELV_PRIO_RT, 7), NULL);
	sim_run(&SIM, SIM.now + 50 * MS); /* at most one BE slot of 42 ms after the RT arrival */
	sim_window(&SIM, 1 * S);
	assert_int_equal(be->window, 0);
	assert_true(rt->window > 0);
	sim_finish(&SIM);
}

/* Every tunable under its sysfs name, unit and default; ranges refused without a change. */
static void test_tunables(void **state)
{
	static const struct {
		const char *name, *unit;
		int64_t def, min, max;
	} want[] = {
		{ "slice_idle", "ms", 8, 0, 2147483 },
		{ "slice_idle_us", "us", 8000, 0, 2147483647 },
		{ "strict_guarantees", "bool", 0, 0, 1 },
		{ "low_latency", "bool", 1, 0, 1 },
		{ "timeout_sync", "ms", 125, 1, 2147483647 },
		{ "max_budget", "sectors", 0, 0, 2147483647 },
		{ "fifo_expire_sync", "ms", 125, 1, 2147483647 },
		{ "fifo_expire_async", "ms", 250, 1, 2147483647 },
		{ "back_seek_max", "KiB", 16384, 0, 2147483647 },
		{ "back_seek_penalty", "factor", 2, 1, 2147483647 },
		{ "queue_merging", "bool", 0, 0, 1 },
	};
	const struct elv_tunable *t;
	unsigned nr, i, j;
	int64_t v;

	(void)state;
	assert_ptr_equal(elv_policy_find("bfq"), &elv_policy_bfq);
	t = elv_policy_tunables(&elv_policy_bfq, &nr);
	assert_int_equal(nr, sizeof(want) / sizeof(want[0]));
	sim_setup(&SIM, 1, 1, FAST_NS, 0);
	for (i = 0; i < nr; i++) {
		for (j = 0; j < nr && strcmp(t[j].name, want[i].name); j++)
			;
		assert_true(j < nr);
		assert_string_equal(t[j].unit, want[i].unit);
		assert_int_equal(t[j].def, want[i].def);
		assert_int_equal(t[j].min, want[i].min);
		assert_int_equal(t[j].max, want[i].max);
		assert_int_equal(elv_tunable_get(SIM.q, want[i].name, &v), 0);
		assert_int_equal(v, want[i].def);
		assert_int_equal(elv_tunable_set(SIM.q, want[i].name, want[i].min - 1), ELV_ERANGE);
		assert_int_equal(elv_tunable_set(SIM.q, want[i].name, want[i].max + 1), ELV_ERANGE);
		assert_int_equal(elv_tunable_get(SIM.q, want[i].name, &v), 0);
		assert_int_equal(v, want[i].def);
	}
	/* slice_idle and slice_idle_us are one setting */
	set_tunable(&SIM, "slice_idle_us", 2500);
	assert_int_equal(elv_tunable_get(SIM.q, "slice_idle", &v), 0);
	assert_int_equal(v, 2);
	set_tunable(&SIM, "slice_idle", 3);
	assert_int_equal(elv_tunable_get(SIM.q, "slice_idle_us", &v), 0);
	assert_int_equal(v, 3000);
	/* either end of either range reads back within the other's */
	set_tunable(&SIM, "slice_idle", 2147483);
	assert_int_equal(elv_tunable_get(SIM.q, "slice_idle_us", &v), 0);
	assert_int_equal(v, 2147483000);
	set_tunable(&SIM, "slice_idle_us", 2147483647);
	assert_int_equal(elv_tunable_get(SIM.q, "slice_idle", &v), 0);
	assert_int_equal(v, 2147483);
	assert_int_equal(elv_tunable_get(SIM.q, "slice_idle_us", &v), 0);
	assert_int_equal(v, 2147483647);
	set_tunable(&SIM, "slice_idle_us", 999);
	assert_int_equal(elv_tunable_get(SIM.q, "slice_idle", &v), 0);
	assert_int_equal(v, 0);
	set_tunable(&SIM, "slice_idle", 3);
	/* turning strict_guarantees on raises slice_idle to at least 8 ms; later writes stand */
	set_tunable(&SIM, "strict_guarantees", 1);
	assert_int_equal(elv_tunable_get(SIM.q, "slice_idle", &v), 0);
	assert_int_equal(v, 8);
	set_tunable(&SIM, "slice_idle_us", 35);
	assert_int_equal(elv_tunable_get(SIM.q, "slice_idle_us", &v), 0);
	assert_int_equal(v, 35);
	set_tunable(&SIM, "strict_guarantees", 1); /* already on: nothing raised */
	assert_int_equal(elv_tunable_get(SIM.q, "slice_idle_us", &v), 0);
	assert_int_equal(v, 35);
	assert_int_equal(elv_tunable_set(SIM.q, "no_such_tunable", 1), ELV_ENOENT);
	sim_finish(&SIM);
}

/* low_latency written 0 ends every raising at once: weights are even again at once. */
static void test_low_latency_off_ends_raising(void **state)
{
	struct sst *a, *b;
	double r;

	(void)state;
	sim_setup(&SIM, 0, 1, NONROT_NS, 0);
	a = sim_stream(&SIM, GREEDY, 0, 0, NULL);
	sim_run(&SIM, 4 * S);
	b = sim_stream(&SIM, GREEDY, 0, 0, NULL);
	sim_run(&SIM, SIM.now + 20 * MS); /* B is raised now */
	set_tunable(&SIM, "low_latency", 0);
	sim_run(&SIM, SIM.now + 100 * MS);
	sim_window(&SIM, 2 * S);
	r = ratio(b->window, a->window);
	assert_true(r > 0.9 && r < 1.1);
	sim_finish(&SIM);
}

/*
 * Idling: a sync reader that thinks 1 ms between requests keeps the disk: while it idles a
 * second reader's request waits, elv_next_event() names the end of the wait (slice_idle; 20
 * ms for a raised queue), and the waiting read goes when the window ends. A read of the
 * first stream inside the window is served at once.
 */
static void test_idle_window(void **state)
{
	struct sst *a, *b;
	struct elv_request *rq, *r2;
	uint64_t ev;

	(void)state;
	sim_setup(&SIM, 1, 1, FAST_NS, 0);
	set_tunable(&SIM, "low_latency", 0);
	a = sim_stream(&SIM, IDLE_ST, 0, 0, NULL);
	b = sim_stream(&SIM, IDLE_ST, 0, 0, NULL);
	sim_add(&SIM, a);
	assert_int_equal(elv_dispatch(SIM.q, SIM.now, 0, &rq), 0);
	SIM.now += MS;
	assert_int_equal(elv_complete(SIM.q, rq, SIM.now), 0);
	check(&SIM);
	sim_add(&SIM, b);
	assert_int_equal(elv_dispatch(SIM.q, SIM.now, 0, &r2), ELV_EAGAIN);
	assert_true(elv_is_idling(SIM.q));
	ev = elv_next_event(SIM.q);
	assert_int_equal(ev, SIM.now + 8 * MS);
	SIM.now += 2 * MS;
	sim_add(&SIM, a); /* a's next read, within the window: served before b's */
	assert_int_equal(elv_dispatch(SIM.q, SIM.now, 0, &r2), 0);
	assert_ptr_equal(r2->stream, &a->s);
	SIM.now += MS;
	assert_int_equal(elv_complete(SIM.q, r2, SIM.now), 0);
	check(&SIM);
	/* idle again; at the end of the window b's read goes */
	assert_int_equal(elv_dispatch(SIM.q, SIM.now, 0, &r2), ELV_EAGAIN);
	ev = elv_next_event(SIM.q);
	SIM.now = ev - 1;
	assert_int_equal(elv_dispatch(SIM.q, SIM.now, 0, &r2), ELV_EAGAIN);
	SIM.now = ev;
	assert_int_equal(elv_dispatch(SIM.q, SIM.now, 0, &r2), 0);
	assert_ptr_equal(r2->stream, &b->s);
	SIM.now += MS;
	assert_int_equal(elv_complete(SIM.q, r2, SIM.now), 0);
	check(&SIM);
	a->queued = a->outstanding = b->queued = b->outstanding = 0;
	sim_finish(&SIM);
}

/*
 * Injection while idling. Flash with command queueing (depth 4): idling does not boost
 * throughput there, but reader A (weight 200, one 8-sector read at a time, 1 ms apart)
 * against greedy B (weight 100) makes the scenario asymmetric, so the device idles for A
 * whenever A drains. A's injection limit starts at 0 (short think time); the service time of
 * A's first request after it emptied, measured alone on the device, becomes the baseline and
 * lifts the limit to 1: from then on one of B's requests is injected while A idles. So B is
 * served all along, and the counter of injections grows.
 */
static void test_injection(void **state)
{
	struct sst *a, *b;

	(void)state;
	sim_setup(&SIM, 0, 4, FAST_NS, 0);
	set_tunable(&SIM, "low_latency", 0);
	a = sim_stream(&SIM, PERIODIC, 200, 0, NULL);
	a->period = MS;
	a->size = 8;
	b = sim_stream(&SIM, GREEDY, 100, 0, NULL);
	b->backlog = 4;
	sim_run(&SIM, 2 * S);
	assert_true(stat_of(&SIM, "idle_waits") > 10);
	assert_true(stat_of(&SIM, "injections") > 10);
	assert_true(a->dispatches > 1000);
	assert_true(b->served > 0);
	sim_finish(&SIM);
}

/* Streams move between groups only without requests; weights change at any time. */
static void test_group_moves(void **state)
{
	struct sst *a, *b;

	(void)state;
	sim_setup(&SIM, 1, 1, FAST_NS, 0);
	assert_int_equal(elv_group_init(SIM.q, &SIM.grp[0], SIM.now), 0);
	a = sim_stream(&SIM, GREEDY, 0, 0, &SIM.grp[0]);
	b = sim_stream(&SIM, GREEDY, 0, 0, NULL);
	sim_run(&SIM, 200 * MS);
	assert_int_equal(elv_stream_set_group(SIM.q, &a->s, NULL), ELV_EBUSY);
	assert_int_equal(elv_stream_set_weight(SIM.q, &b->s, 700), 0);
	check(&SIM);
	sim_run(&SIM, SIM.now + 200 * MS);
	/* drain a, then move it to the root and back while the other one runs on */
	a->kind = IDLE_ST;
	sim_run(&SIM, SIM.now + 300 * MS);
	assert_int_equal(a->outstanding, 0);
	assert_int_equal(elv_stream_set_group(SIM.q, &a->s, NULL), 0);
	check(&SIM);
	assert_int_equal(elv_group_exit(SIM.q, &SIM.grp[0], SIM.now), 0);
	check(&SIM);
	a->kind = GREEDY;
	sim_run(&SIM, SIM.now + 200 * MS);
	assert_true(a->window > 0 && b->window > 0);
	/* the queue may switch to another policy and back, groups and all */
	assert_int_equal(elv_group_init(SIM.q, &SIM.grp[1], SIM.now), 0);
	assert_int_equal(elv_switch(SIM.q, &elv_policy_cfq, SIM.now), 0);
	check(&SIM);
	sim_run(&SIM, SIM.now + 50 * MS);
	assert_int_equal(elv_switch(SIM.q, &elv_policy_bfq, SIM.now), 0);
	check(&SIM);
	sim_run(&SIM, SIM.now + 100 * MS);
	sim_finish(&SIM);
}

/* A clock near 2^64 that wraps during the run changes nothing: 1 : 3 still holds. */
static void test_weights_across_wrap(void **state)
{
	struct sst *a, *b;
	double r;

	(void)state;
	sim_setup(&SIM, 1, 1, FAST_NS, (uint64_t)0 - 3 * S);
	set_tunable(&SIM, "low_latency", 0);
	a = sim_stream(&SIM, GREEDY, 100, 0, NULL);
	b = sim_stream(&SIM, GREEDY, 300, 0, NULL);
	sim_run(&SIM, SIM.now + 10 * S);
	assert_true(SIM.now < 8 * S); /* wrapped */
	r = ratio(b->served, a->served);
	assert_true(r > 3.0 * 0.95 && r < 3.0 * 1.05);
	sim_finish(&SIM);
}

/*
 * A busy async queue is raised by a second write more than 500 ms after the first; the raised
 * weight applies at its next requeue, which never comes: the raising ends at its first
 * dispatch, 20 s on (past the longest raising on this disk), with the weight never changed.
 * Ending it must still put the queue back in the weights multiset, now that it has a request
 * in flight and is no longer raised (elv_queue_check() after the dispatch).
 */
static void test_async_raising_ends_unapplied(void **state)
{
	struct sst *t;
	unsigned i;

	(void)state;
	sim_setup(&SIM, 1, 1, FAST_NS, 5 * S);
	t = sim_stream(&SIM, IDLE_ST, 0, 0, NULL);
	for (i = 0; i < 2; i++) {
		struct sio *io = &SIM.io[i];

		memset(io, 0, sizeof(*io));
		io->used = 1;
		io->st = t;
		io->rq.sector = t->next_sector + 1000u * i;
		io->rq.nr_sectors = 8;
		io->rq.op = ELV_OP_WRITE; /* no ELV_RQ_SYNC: the stream's async queue */
		io->rq.stream = &t->s;
		assert_int_equal(elv_add(SIM.q, &io->rq, SIM.now), 0);
		t->queued++;
		t->outstanding++;
		check(&SIM);
		SIM.now += 1 * S;
	}
	assert_int_equal(stat_of(&SIM, "wr_interactive"), 1);
	SIM.now += 20 * S;
	sim_dispatch(&SIM);
	assert_int_equal(SIM.nr_inflight, 1);
	sim_finish(&SIM);
}


/* ---- queue merging (1.15) ---- */

static void coop_add(struct sim *m, struct sst *t, uint64_t sector)
{
	t->next_sector = sector;
	sim_add(m, t);
}

/* Dispatch one request (depth 1: the previous one completed first); its stream's index. */
static int coop_next(struct sim *m)
{
	struct elv_request *rq;
	struct sio *io;

	m->now += MS;
	sim_complete(m);
	if (m->nr_inflight) {
		m->now = m->inflight[0]->done;
		sim_complete(m);
	}
	if (elv_dispatch(m->q, m->now, ELV_DISPATCH_FORCE, &rq) != 0)
		return -1;
	check(m);
	io = elv_container_of(rq, struct sio, rq);
	io->st->queued--;
	io->done = m->now + rq->nr_sectors * m->ns_per_sector;
	m->inflight[m->nr_inflight++] = io;
	return (int)(io->st - m->st);
}

/*
 * Two readers interleave 128-sector requests 256 sectors apart (A at 10000, 10256, ...; B at
 * 10128, 10384, ...). A is in service when B's first request arrives next to A's last one.
 */
static void coop_start(struct sim *m, int rotational, unsigned depth, int merging)
{
	struct sst *a, *b;

	sim_setup(m, rotational, depth, 100, 5 * S);
	if (merging)
		set_tunable(m, "queue_merging", 1);
	a = sim_stream(m, IDLE_ST, 0, 0, NULL);
	b = sim_stream(m, IDLE_ST, 0, 0, NULL);
	a->size = b->size = 128;
	coop_add(m, a, 10000);
	assert_int_equal(coop_next(m), 0);
	coop_add(m, b, 10128);
	coop_add(m, a, 10256);
	coop_add(m, b, 10384);
	coop_add(m, a, 10512);
	coop_add(m, b, 10640);
}

/* After coop_start(), the five queued requests come from the streams in @order (A 0, B 1). */
static void coop_expect(int rotational, unsigned depth, int merging, const int order[5])
{
	struct sim *m = &SIM;
	unsigned i;

	coop_start(m, rotational, depth, merging);
	for (i = 0; i < 5; i++)
		assert_int_equal(coop_next(m), order[i]);
	assert_int_equal(coop_next(m), -1);
	sim_finish(m);
}

/* Merged on a rotational disk: one queue serves both streams in sector order. */
static void test_coop_merge(void **state)
{
	static const int order[] = { 1, 0, 1, 0, 1 };

	(void)state;
	coop_expect(1, 1, 1, order);
}

/* Not merged on a non-rotational queueing device: A's own queue keeps being served first. */
static void test_coop_nonrot(void **state)
{
	static const int order[] = { 0, 0, 1, 1, 1 };

	(void)state;
	coop_expect(0, 32, 1, order);
}

/* Merging is off unless the host asks for it: on the same rotational disk nothing merges. */
static void test_coop_off_by_default(void **state)
{
	static const int order[] = { 0, 0, 1, 1, 1 };

	(void)state;
	coop_expect(1, 1, 0, order);
}

/*
 * The host stream exits while the guest's requests sit in its queue (the host has none left):
 * the exit succeeds, the guest gets them back in its own queue and all of them are served.
 * Then the guest exits in a second pair while merged, holding nothing.
 */
static void test_coop_split_on_exit(void **state)
{
	struct sim *m = &SIM;
	struct sst *a = &m->st[0], *b = &m->st[1];
	static const int order[] = { 1, 0, 1, 0 };
	unsigned i;
	int n = 0;

	(void)state;
	coop_start(m, 1, 1, 1);
	for (i = 0; i < 4; i++)
		assert_int_equal(coop_next(m), order[i]);
	m->now = m->inflight[0]->done;
	sim_complete(m);
	assert_int_equal(a->outstanding, 0);
	assert_true(b->queued > 0);
	assert_int_equal(elv_stream_exit(m->q, &a->s, m->now), 0);
	check(m);
	while (b->queued) {
		assert_int_equal(coop_next(m), 1);
		n++;
	}
	assert_true(n > 0);
	m->now = m->nr_inflight ? m->inflight[0]->done : m->now;
	sim_complete(m);
	assert_int_equal(b->outstanding, 0);
	assert_int_equal(elv_stream_exit(m->q, &b->s, m->now), 0);
	check(m);
	assert_int_equal(elv_queue_exit(m->q), 0);
}

/* The host moves to a group while the guest's requests are queued: they get their own queue. */
static void test_coop_split_on_move(void **state)
{
	static const int order[] = { 1, 0, 1, 0 };
	struct sim *m = &SIM;
	struct sst *a = &m->st[0], *b = &m->st[1];
	unsigned i;

	(void)state;
	coop_start(m, 1, 1, 1);
	m->grp[0].weight = 100;
	assert_int_equal(elv_group_init(m->q, &m->grp[0], m->now), 0);
	for (i = 0; i < 4; i++)
		assert_int_equal(coop_next(m), order[i]);
	m->now = m->inflight[0]->done;
	sim_complete(m);
	assert_int_equal(a->outstanding, 0);
	assert_int_equal(b->queued, 1);
	assert_int_equal(elv_stream_set_group(m->q, &a->s, &m->grp[0]), 0);
	check(m);
	assert_int_equal(coop_next(m), 1);
	assert_int_equal(coop_next(m), -1);
	sim_finish(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_weights_1_to_3),
		cmocka_unit_test(test_groups_2_to_1),
		cmocka_unit_test(test_budget_growth),
		cmocka_unit_test(test_budget_warm_up),
		cmocka_unit_test(test_interactive_raising),
		cmocka_unit_test(test_soft_rt),
		cmocka_unit_test(test_large_burst),
		cmocka_unit_test(test_idle_class),
		cmocka_unit_test(test_rt_before_be),
		cmocka_unit_test(test_tunables),
		cmocka_unit_test(test_low_latency_off_ends_raising),
		cmocka_unit_test(test_idle_window),
		cmocka_unit_test(test_injection),
		cmocka_unit_test(test_group_moves),
		cmocka_unit_test(test_weights_across_wrap),
		cmocka_unit_test(test_async_raising_ends_unapplied),
		cmocka_unit_test(test_coop_merge),
		cmocka_unit_test(test_coop_nonrot),
		cmocka_unit_test(test_coop_off_by_default),
		cmocka_unit_test(test_coop_split_on_exit),
		cmocka_unit_test(test_coop_split_on_move),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
