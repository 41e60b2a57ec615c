/*
 * The calling contract, for every built-in policy: calls from inside the host's callbacks
 * (merge, allow_merge, trace, the drain function) that would change the queue get ELV_EBUSY
 * and change nothing while getters still answer; every call on a torn-down queue gets
 * ELV_EINVAL and revives nothing; a request still held is refused by elv_add(), and a
 * descriptor initialised once can be submitted again after it completes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "elv_internal.h"
#include "support/request.h"

#define MS ELV_NSEC_PER_MSEC
#define HOUR (3600ull * 1000u * MS)

enum cb { CB_NONE, CB_MERGE, CB_ALLOW, CB_TRACE, CB_DRAIN };

struct ctx {
	uint64_t mem[65536]; /* room for any built-in policy */
	struct elv_queue *q;
	struct elv_config cfg;
	struct elv_stream st;   /* registered */
	struct elv_stream st2;  /* never registered */
	struct elv_request a, b, c;
	struct elv_request spare; /* never added */
	struct elv_request *inflight; /* dispatched, for complete and requeue */
	struct elv_request *queued;   /* queued, for cancel */
	enum cb which;  /* the callback that probes */
	unsigned probes; /* probes that ran */
	unsigned drained;
	uint64_t now;
};

static struct ctx C;

static void drain_count(void *arg, struct elv_request *rq)
{
	(void)rq;
	((struct ctx *)arg)->drained++;
}

/*
 * Inside a callback: every call that would change the queue is refused with ELV_EBUSY and
 * changes nothing (counters, clock, policy, the requests and streams involved); getters work.
 */
static void probe(struct ctx *c, struct elv_request *absorbed)
{
	struct elv_queue *q = c->q;
	struct elv_stats before, after;
	struct elv_request *out = &c->spare;
	const struct elv_policy *p = elv_queue_policy(q);
	const struct elv_policy *other = p == &elv_policy_noop ? &elv_policy_cfq : &elv_policy_noop;
	uint64_t clock = q->now, offset = q->time_offset, far = c->now + 5 * HOUR;
	uint8_t inflight_state = c->inflight->ELV_PRIVATE(state);
	uint8_t queued_state = c->queued->ELV_PRIVATE(state);
	uint32_t nr_rq = c->st.ELV_PRIVATE(nr_rq);
	const char *name;
	uint64_t value;
	int64_t v;
	int r;

	assert_non_null(p);
	assert_int_equal(elv_stats(q, &before), 0);
	assert_int_equal(elv_add(q, &c->spare, far), ELV_EBUSY);
	assert_int_equal(c->spare.ELV_PRIVATE(state), ELV_RQ_IDLE);
	if (absorbed) {
		/* The absorbed request is the host's again, but not for this queue yet. */
		assert_int_equal(absorbed->ELV_PRIVATE(state), ELV_RQ_IDLE);
		assert_int_equal(elv_add(q, absorbed, far), ELV_EBUSY);
		assert_int_equal(absorbed->ELV_PRIVATE(state), ELV_RQ_IDLE);
	}
	assert_int_equal(elv_dispatch(q, far, 0, &out), ELV_EBUSY);
	assert_ptr_equal(out, &c->spare);
	assert_int_equal(elv_dispatch(q, far, ELV_DISPATCH_FORCE, &out), ELV_EBUSY);
	assert_int_equal(elv_complete(q, c->inflight, far), ELV_EBUSY);
	assert_int_equal(elv_requeue(q, c->inflight, far), ELV_EBUSY);
	assert_int_equal(c->inflight->ELV_PRIVATE(state), inflight_state);
	assert_int_equal(elv_cancel(q, c->queued), ELV_EBUSY);
	assert_int_equal(c->queued->ELV_PRIVATE(state), queued_state);
	assert_int_equal(elv_drain(q, drain_count, c), ELV_EBUSY);
	assert_int_equal(elv_switch(q, other, far), ELV_EBUSY);
	assert_ptr_equal(elv_queue_policy(q), p);
	assert_int_equal(elv_stream_init(q, &c->st2, far), ELV_EBUSY);
	assert_int_equal(c->st2.ELV_PRIVATE(flags), 0);
	assert_int_equal(elv_stream_exit(q, &c->st, far), ELV_EBUSY);
	assert_int_equal(elv_stream_set_prio(q, &c->st, ELV_PRIO(ELV_PRIO_RT, 0)), ELV_EBUSY);
	assert_int_equal(c->st.ioprio, ELV_PRIO(ELV_PRIO_BE, 4));
	assert_int_equal(c->st.ELV_PRIVATE(nr_rq), nr_rq);
	assert_int_equal(elv_tunable_set(q, "no_such_tunable", 1), ELV_EBUSY);
	assert_int_equal(elv_queue_exit(q), ELV_EBUSY);
	/* Getters answer; the checker does not look at a queue between two steps. */
	assert_int_equal(elv_tunable_get(q, "no_such_tunable", &v), ELV_ENOENT);
	r = elv_policy_stat(q, 0, &name, &value);
	assert_true(r == 0 || r == ELV_ENOENT);
	(void)elv_next_event(q);
	assert_int_equal(elv_queue_check(q), ELV_EBUSY);
	assert_int_equal(elv_stats(q, &after), 0);
	assert_memory_equal(&before, &after, sizeof(before));
	assert_true(q->now == clock && q->time_offset == offset);
	assert_int_equal(c->drained, 0);
	c->probes++;
}

static void on_merge(void *ctx, struct elv_request *into, struct elv_request *absorbed,
		     enum elv_merge_kind kind)
{
	struct ctx *c = ctx;

	(void)into;
	(void)kind;
	if (c->which == CB_MERGE)
		probe(c, absorbed);
}

static int on_allow(void *ctx, const struct elv_request *rq, const struct elv_request *next,
		    enum elv_merge_kind kind)
{
	struct ctx *c = ctx;

	(void)rq;
	(void)next;
	(void)kind;
	if (c->which == CB_ALLOW)
		probe(c, NULL);
	return 1;
}

static void on_trace(void *ctx, const struct elv_trace_event *ev)
{
	struct ctx *c = ctx;

	(void)ev;
	if (c->which == CB_TRACE)
		probe(c, NULL);
}

static void on_drain(void *arg, struct elv_request *rq)
{
	struct ctx *c = arg;

	assert_int_equal(rq->ELV_PRIVATE(state), ELV_RQ_IDLE); /* the host's again */
	probe(c, NULL);
}

static void check(const struct ctx *c)
{
	assert_int_equal(elv_queue_check(c->q), 0);
}

static void mkrq(struct elv_request *rq, uint64_t sector, struct elv_stream *s)
{
	test_rq(rq, sector, 8, ELV_OP_READ, 0)->stream = s;
}

/*
 * A queue of policy @p with one request in flight (a), one queued (b), a registered stream
 * and a spare request; then (c), which joins (b) at its end, is added with @which probing.
 */
static void setup_q(struct ctx *c, const struct elv_policy *p)
{
	struct elv_request *out = NULL;

	memset(c, 0, sizeof(*c));
	c->cfg.merge = on_merge;
	c->cfg.allow_merge = on_allow;
	c->cfg.trace = on_trace;
	c->cfg.ctx = c;
	c->now = (uint64_t)0 - MS; /* close to the wrap, for good measure */
	assert_int_equal(elv_queue_init(&c->q, c->mem, sizeof(c->mem), p, &c->cfg), 0);
	c->st.ioprio = ELV_PRIO(ELV_PRIO_BE, 4);
	assert_int_equal(elv_stream_init(c->q, &c->st, c->now), 0);
	mkrq(&c->a, 100, &c->st);
	mkrq(&c->b, 1000, &c->st);
	mkrq(&c->c, 1008, &c->st);
	mkrq(&c->spare, 5000, &c->st);
	assert_int_equal(elv_add(c->q, &c->a, c->now), 0);
	assert_int_equal(elv_dispatch(c->q, c->now, ELV_DISPATCH_FORCE, &out), 0);
	assert_ptr_equal(out, &c->a);
	c->inflight = out;
	assert_int_equal(elv_add(c->q, &c->b, c->now), 0);
	c->queued = &c->b;
	check(c);
}

/*
 * Complete (a), then serve what is left: @expect more requests; (b), if among them, must come
 * out grown to 16 sectors exactly when (c) merged into it, and (c) then never comes out.
 */
static void finish(struct ctx *c, int merged, unsigned expect)
{
	struct elv_request *out = NULL;
	unsigned n = 0;

	c->which = CB_NONE;
	c->now += MS;
	assert_int_equal(elv_complete(c->q, c->inflight, c->now), 0);
	while (elv_dispatch(c->q, c->now, ELV_DISPATCH_FORCE, &out) == 0) {
		n++;
		if (out == &c->b)
			assert_int_equal(out->nr_sectors, merged ? 16 : 8);
		else
			assert_false(merged && out == &c->c);
		assert_int_equal(elv_complete(c->q, out, c->now), 0);
		check(c);
	}
	assert_int_equal(n, expect);
	assert_int_equal(elv_stream_exit(c->q, &c->st, c->now), 0);
	assert_int_equal(elv_queue_exit(c->q), 0);
}

/* Policies that merged (b) and (c) in the last reenter_*() run, and how many ran. */
static unsigned nr_merging, nr_run;

/*
 * Run @fn for every built-in policy and count them. Merging is the policy's choice (FCFS, say,
 * never merges), but the four elevators of the library must merge, so the merge and
 * allow_merge callbacks are reached at least through them.
 */
static unsigned for_every_policy(void (*fn)(const struct elv_policy *p))
{
	unsigned i;

	nr_merging = nr_run = 0;
	for (i = 0; elv_policy_at(i) != NULL; i++)
		fn(elv_policy_at(i));
	assert_true(i >= 4); /* noop, deadline, anticipatory, cfq at least */
	return i;
}

/* (c) was added to a queue of @p: 1 if it merged, which the library's elevators must do. */
static int merged(const struct elv_policy *p, int r)
{
	assert_true(r == 0 || r == 1);
	if (p == &elv_policy_noop || p == &elv_policy_deadline ||
	    p == &elv_policy_anticipatory || p == &elv_policy_cfq)
		assert_int_equal(r, 1);
	nr_merging += (unsigned)r;
	nr_run++;
	return r;
}

/* The merge callback: re-adding the absorbed request used to corrupt the survivor's extent. */
static void reenter_merge(const struct elv_policy *p)
{
	int m;

	setup_q(&C, p);
	C.which = CB_MERGE;
	m = merged(p, elv_add(C.q, &C.c, C.now));
	assert_int_equal(C.probes, (unsigned)m);
	check(&C);
	finish(&C, m, m ? 1u : 2u);
}

static void reenter_allow(const struct elv_policy *p)
{
	int m;

	setup_q(&C, p);
	C.which = CB_ALLOW;
	m = merged(p, elv_add(C.q, &C.c, C.now));
	assert_true(C.probes >= (unsigned)m);
	check(&C);
	finish(&C, m, m ? 1u : 2u);
}

/* Trace events come from adds, merges, dispatches, completions and idling. */
static void reenter_trace(const struct elv_policy *p)
{
	struct elv_request *out = NULL;
	unsigned probes;
	int m;

	setup_q(&C, p);
	C.which = CB_TRACE;
	m = merged(p, elv_add(C.q, &C.c, C.now));
	assert_true(C.probes >= 1u + (unsigned)m); /* insert, then merge */
	probes = C.probes;
	assert_int_equal(elv_dispatch(C.q, C.now, ELV_DISPATCH_FORCE, &out), 0);
	assert_true(out == &C.b || (!m && out == &C.c));
	assert_true(C.probes > probes);
	C.which = CB_NONE;
	assert_int_equal(out->nr_sectors, m ? 16 : 8);
	assert_int_equal(elv_complete(C.q, out, C.now), 0);
	check(&C);
	finish(&C, m, m ? 0u : 1u);
}

static void reenter_drain(const struct elv_policy *p)
{
	struct elv_request *out = NULL;

	setup_q(&C, p);
	mkrq(&C.c, 90000, &C.st); /* far away: no merge */
	assert_int_equal(elv_add(C.q, &C.c, C.now), 0);
	C.which = CB_DRAIN;
	C.queued = &C.spare; /* the drained ones change state; probe cancel with an idle one */
	assert_int_equal(elv_drain(C.q, on_drain, &C), 2);
	assert_int_equal(C.probes, 2);
	assert_int_equal(C.b.ELV_PRIVATE(state), ELV_RQ_IDLE);
	assert_int_equal(C.c.ELV_PRIVATE(state), ELV_RQ_IDLE);
	C.which = CB_NONE;
	check(&C);
	assert_int_equal(elv_dispatch(C.q, C.now, ELV_DISPATCH_FORCE, &out), ELV_EAGAIN);
	C.now += MS;
	assert_int_equal(elv_complete(C.q, &C.a, C.now), 0);
	assert_int_equal(elv_stream_exit(C.q, &C.st, C.now), 0);
	assert_int_equal(elv_queue_exit(C.q), 0);
}

/* @fn, run for every built-in policy, reached the merge step in each, and four merged. */
static void every_policy_merges(void (*fn)(const struct elv_policy *p))
{
	unsigned n = for_every_policy(fn);

	assert_int_equal(n, nr_run);
	assert_true(nr_merging >= 4);
}

static void test_reenter_merge(void **state)
{
	(void)state;
	every_policy_merges(reenter_merge);
}

static void test_reenter_allow_merge(void **state)
{
	(void)state;
	every_policy_merges(reenter_allow);
}

static void test_reenter_trace(void **state)
{
	(void)state;
	every_policy_merges(reenter_trace);
}

static void test_reenter_drain(void **state)
{
	(void)state;
	for_every_policy(reenter_drain);
}

/* ---- after elv_queue_exit() ------------------------------------------------------------ */

static void after_exit(const struct elv_policy *p)
{
	struct elv_request *out = &C.spare;
	unsigned i;
	const char *name = NULL;
	uint64_t value = 7;
	int64_t v = 7;
	struct elv_stats st;

	memset(&C, 0, sizeof(C));
	C.now = 12345;
	assert_int_equal(elv_queue_init(&C.q, C.mem, sizeof(C.mem), p, NULL), 0);
	assert_int_equal(elv_stream_init(C.q, &C.st, C.now), 0);
	mkrq(&C.a, 100, &C.st);
	assert_int_equal(elv_add(C.q, &C.a, C.now), 0);
	assert_int_equal(elv_dispatch(C.q, C.now, ELV_DISPATCH_FORCE, &out), 0);
	assert_int_equal(elv_complete(C.q, out, C.now), 0);
	assert_int_equal(elv_stream_exit(C.q, &C.st, C.now), 0);
	assert_int_equal(elv_queue_exit(C.q), 0);

	/* Everything is refused, nothing is touched, nothing crashes. */
	mkrq(&C.b, 1000, NULL);
	mkrq(&C.c, 2000, &C.st2);
	assert_int_equal(elv_add(C.q, &C.b, C.now), ELV_EINVAL);
	assert_int_equal(C.b.ELV_PRIVATE(state), ELV_RQ_IDLE);
	out = &C.spare;
	assert_int_equal(elv_dispatch(C.q, C.now, 0, &out), ELV_EINVAL);
	assert_int_equal(elv_dispatch(C.q, C.now, ELV_DISPATCH_FORCE, &out), ELV_EINVAL);
	assert_ptr_equal(out, &C.spare);
	assert_true(elv_next_event(C.q) == ELV_TIME_NEVER);
	assert_int_equal(elv_complete(C.q, &C.a, C.now), ELV_EINVAL);
	assert_int_equal(elv_requeue(C.q, &C.a, C.now), ELV_EINVAL);
	assert_int_equal(elv_cancel(C.q, &C.b), ELV_EINVAL);
	assert_int_equal(elv_drain(C.q, drain_count, &C), ELV_EINVAL);
	assert_int_equal(C.drained, 0);
	assert_int_equal(elv_stream_init(C.q, &C.st2, C.now), ELV_EINVAL);
	assert_int_equal(C.st2.ELV_PRIVATE(flags), 0);
	assert_int_equal(elv_stream_exit(C.q, &C.st, C.now), ELV_EINVAL);
	assert_int_equal(elv_stream_set_prio(C.q, &C.st, 0), ELV_EINVAL);
	for (i = 0; elv_policy_at(i) != NULL; i++) {
		unsigned nr = 0;
		const struct elv_tunable *t = elv_policy_tunables(elv_policy_at(i), &nr);

		/* elv_switch() must not revive it, whatever the policy. */
		assert_int_equal(elv_switch(C.q, elv_policy_at(i), C.now), ELV_EINVAL);
		assert_null(elv_queue_policy(C.q));
		if (nr) {
			assert_int_equal(elv_tunable_set(C.q, t[0].name, t[0].def), ELV_EINVAL);
			assert_int_equal(elv_tunable_get(C.q, t[0].name, &v), ELV_EINVAL);
		}
	}
	assert_true(i >= 4);
	assert_int_equal(elv_tunable_set(C.q, "x", 0), ELV_EINVAL);
	assert_int_equal(elv_tunable_get(C.q, "x", &v), ELV_EINVAL);
	assert_true(v == 7);
	assert_int_equal(elv_stats(C.q, &st), ELV_EINVAL);
	assert_int_equal(elv_policy_stat(C.q, 0, &name, &value), ELV_EINVAL);
	assert_null(name);
	assert_true(value == 7);
	assert_int_equal(elv_queue_check(C.q), ELV_EINVAL);
	assert_int_equal(elv_queue_exit(C.q), ELV_EINVAL);
	assert_null(elv_queue_policy(C.q));
	assert_int_equal(elv_add(C.q, &C.c, C.now), ELV_EINVAL); /* still refused after it all */
	assert_int_equal(C.c.ELV_PRIVATE(state), ELV_RQ_IDLE);

	/* The memory can be made a queue again. */
	assert_int_equal(elv_queue_init(&C.q, C.mem, sizeof(C.mem), p, NULL), 0);
	assert_int_equal(elv_add(C.q, &C.b, C.now), 0);
	assert_int_equal(elv_dispatch(C.q, C.now, ELV_DISPATCH_FORCE, &out), 0);
	assert_ptr_equal(out, &C.b);
	assert_int_equal(elv_complete(C.q, out, C.now), 0);
	assert_int_equal(elv_queue_check(C.q), 0);
	assert_int_equal(elv_queue_exit(C.q), 0);
}

static void test_after_exit(void **state)
{
	(void)state;
	for_every_policy(after_exit);
}

/* Teardown from inside a callback is refused; so is a second teardown. */
static void test_exit_refused_in_callback(void **state)
{
	(void)state;
	setup_q(&C, &elv_policy_deadline);
	C.which = CB_MERGE;
	assert_int_equal(elv_add(C.q, &C.c, C.now), 1); /* the probe tries elv_queue_exit() */
	assert_int_equal(C.probes, 1);
	assert_non_null(elv_queue_policy(C.q));
	finish(&C, 1, 1);
	assert_int_equal(elv_queue_exit(C.q), ELV_EINVAL);
}

/* ---- submitting a descriptor again ---------------------------------------------------- */

/*
 * elv_add() refuses a request the library still holds, whatever its state, and leaves the
 * queue as it was; once completed, the same descriptor (initialised once) can go again.
 */
static void resubmit(const struct elv_policy *p)
{
	struct elv_request *out = NULL;
	struct elv_stats before, after;
	unsigned round;

	memset(&C, 0, sizeof(C));
	C.now = (uint64_t)0 - 3 * MS;
	assert_int_equal(elv_queue_init(&C.q, C.mem, sizeof(C.mem), p, NULL), 0);
	elv_request_init(&C.a); /* once, when the descriptor is created */
	for (round = 0; round < 3; round++) {
		C.a.sector = 1000 + 64 * round;
		C.a.nr_sectors = 8;
		C.a.op = ELV_OP_WRITE;
		assert_int_equal(elv_add(C.q, &C.a, C.now), 0);
		assert_int_equal(elv_stats(C.q, &before), 0);
		assert_int_equal(elv_add(C.q, &C.a, C.now), ELV_EBUSY); /* queued */
		assert_int_equal(elv_stats(C.q, &after), 0);
		assert_memory_equal(&before, &after, sizeof(before));
		check(&C);
		assert_int_equal(elv_dispatch(C.q, C.now, ELV_DISPATCH_FORCE, &out), 0);
		assert_ptr_equal(out, &C.a);
		assert_int_equal(elv_add(C.q, &C.a, C.now), ELV_EBUSY); /* in flight */
		assert_int_equal(elv_requeue(C.q, &C.a, C.now), 0);
		assert_int_equal(elv_add(C.q, &C.a, C.now), ELV_EBUSY); /* requeued */
		assert_int_equal(elv_dispatch(C.q, C.now, ELV_DISPATCH_FORCE, &out), 0);
		C.now += MS;
		assert_int_equal(elv_complete(C.q, &C.a, C.now), 0);
		/* Nothing else comes out: the request was handed out once per submission. */
		assert_int_equal(elv_dispatch(C.q, C.now, ELV_DISPATCH_FORCE, &out), ELV_EAGAIN);
		check(&C);
	}
	assert_int_equal(elv_stats(C.q, &after), 0);
	assert_true(after.added == 3 && after.completed == 3);
	assert_int_equal(elv_queue_exit(C.q), 0);
}

static void test_resubmit(void **state)
{
	(void)state;
	for_every_policy(resubmit);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reenter_merge),
		cmocka_unit_test(test_reenter_allow_merge),
		cmocka_unit_test(test_reenter_trace),
		cmocka_unit_test(test_reenter_drain),
		cmocka_unit_test(test_after_exit),
		cmocka_unit_test(test_exit_refused_in_callback),
		cmocka_unit_test(test_resubmit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
