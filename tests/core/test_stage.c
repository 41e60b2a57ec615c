/*
 * The admission-stage mechanism (lib/core/stage.c) with a test stage: attach and detach
 * rules, held requests counted, released at dispatch and after completions, reported by
 * elv_next_event(), cancelled, drained, kept across elv_switch(); refusals change nothing
 * (the clock included); completions and withdrawals reach the stage; a stage's merge veto;
 * the zone stage in front of another stage, which holds a write the zone counts as issued.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "elv_internal.h"
#include "support/request.h"

#define NRQ 32
#define DELAY 1000u      /* the test stage holds ELV_RQ_META requests this long */
#define BAD_VALIDATE 666 /* sectors the test stage refuses in validate() */
#define BAD_ADMIT 777    /* ... and in admit(), having changed nothing */

/* The test stage: holds META requests for DELAY ns, in arrival order. */
struct tstage {
	struct elv_list held;
	uint32_t nr;
	int last_status;
	struct elv_request *last_completed;
	int nr_completed;
	int nr_dispatched;
	int nr_release; /* release() calls */
	int nr_next; /* next_event() calls */
	int veto;
};

static struct {
	struct elv_queue *q;
	struct tstage ts;
	struct elv_request rq[NRQ];
	struct elv_request *out[NRQ];
	int nr_out;
	struct elv_request *failed[NRQ];
	int failed_err[NRQ];
	int nr_failed;
	int nr_merged;
} fx;

static uint64_t qmem[8192]; /* 64 KiB: any built-in policy */
static uint64_t zmem[1024];

static struct tstage *ts(const struct elv_queue *q)
{
	return q->stage[ELV_STAGE_QOS].data;
}

static int t_validate(const struct elv_queue *q, const struct elv_request *rq)
{
	(void)q;
	return rq->sector == BAD_VALIDATE ? ELV_ERANGE : 0;
}

static int t_admit(struct elv_queue *q, struct elv_request *rq, uint64_t now)
{
	(void)now;
	if (rq->sector == BAD_ADMIT)
		return ELV_ENOSPC;
	if (!(rq->flags & ELV_RQ_META))
		return ELV_STAGE_PASS;
	elv_list_add_tail(&ts(q)->held, &rq->ELV_PRIVATE(fifo));
	ts(q)->nr++;
	return ELV_STAGE_HELD;
}

static uint64_t t_next_event(const struct elv_queue *q)
{
	const struct elv_request *rq = elv_list_first_rq(&ts(q)->held);

	ts(q)->nr_next++;

	return rq ? rq->ELV_PRIVATE(time) + DELAY : ELV_TIME_NEVER;
}

static struct elv_request *t_release(struct elv_queue *q, uint64_t now)
{
	struct elv_request *rq = elv_list_first_rq(&ts(q)->held);

	ts(q)->nr_release++;
	if (!rq || elv_time_before(now, rq->ELV_PRIVATE(time) + DELAY))
		return NULL;
	elv_list_del(&rq->ELV_PRIVATE(fifo));
	ts(q)->nr--;
	return rq;
}

static void t_dispatched(struct elv_queue *q, struct elv_request *rq, uint64_t now)
{
	(void)rq;
	(void)now;
	ts(q)->nr_dispatched++;
}

static void t_completed(struct elv_queue *q, struct elv_request *rq, int status, uint64_t now)
{
	(void)now;
	ts(q)->last_status = status;
	ts(q)->last_completed = rq;
	ts(q)->nr_completed++;
}

static void t_take_all(struct elv_queue *q, struct elv_list *list)
{
	struct elv_request *rq;

	while ((rq = elv_list_first_rq(&ts(q)->held)) != NULL) {
		elv_list_del(&rq->ELV_PRIVATE(fifo));
		elv_list_add_tail(list, &rq->ELV_PRIVATE(fifo));
	}
	ts(q)->nr = 0;
}

static int t_cancel(struct elv_queue *q, struct elv_request *rq)
{
	struct elv_list *l;

	for (l = ts(q)->held.next; l != &ts(q)->held; l = l->next)
		if (l == &rq->ELV_PRIVATE(fifo)) {
			elv_list_del(l);
			ts(q)->nr--;
			return 0;
		}
	return ELV_ENOENT;
}

static int t_allow_merge(const struct elv_queue *q, const struct elv_request *a,
			 const struct elv_request *b)
{
	(void)a;
	(void)b;
	return !ts(q)->veto;
}

static int t_check(const struct elv_queue *q)
{
	const struct elv_list *l;
	uint32_t n = 0;

	for (l = ts(q)->held.next; l != &ts(q)->held; l = l->next) {
		if (elv_list_rq(l)->state != ELV_RQ_HELD)
			return ELV_EINVAL;
		n++;
	}
	return n == ts(q)->nr ? (int)n : ELV_EINVAL;
}

static const struct elv_stage_ops t_ops = {
	.validate = t_validate,
	.admit = t_admit,
	.next_event = t_next_event,
	.release = t_release,
	.dispatched = t_dispatched,
	.completed = t_completed,
	.take_all = t_take_all,
	.cancel = t_cancel,
	.allow_merge = t_allow_merge,
	.check = t_check,
};

static void on_merge(void *ctx, struct elv_request *into, struct elv_request *gone,
		     enum elv_merge_kind kind)
{
	(void)ctx;
	(void)into;
	(void)gone;
	(void)kind;
	fx.nr_merged++;
}

static void on_drain(void *arg, struct elv_request *rq)
{
	(void)arg;
	fx.out[fx.nr_out++] = rq;
}

static void on_fail(void *ctx, struct elv_request *rq, int err)
{
	(void)ctx;
	fx.failed_err[fx.nr_failed] = err;
	fx.failed[fx.nr_failed++] = rq;
}

static void chk(void)
{
	assert_int_equal(elv_queue_check(fx.q), 0);
}

static void up(const char *policy)
{
	struct elv_config cfg;

	memset(&cfg, 0, sizeof(cfg));
	cfg.merge = on_merge;
	assert_int_equal(elv_queue_init(&fx.q, qmem, sizeof(qmem), elv_policy_find(policy), &cfg),
			 0);
	memset(&fx.ts, 0, sizeof(fx.ts));
	elv_list_init(&fx.ts.held);
	assert_int_equal(elv_stage_attach(fx.q, ELV_STAGE_QOS, &t_ops, &fx.ts), 0);
	fx.nr_out = fx.nr_failed = fx.nr_merged = 0;
	chk();
}

static void down(void)
{
	chk();
	assert_int_equal(elv_stage_detach(fx.q, ELV_STAGE_QOS), 0);
	assert_int_equal(fx.q->gate, ELV_GATE_OPEN);
	assert_int_equal(elv_queue_exit(fx.q), 0);
}

static int setup(void **state)
{
	(void)state;
	memset(&fx, 0, sizeof(fx));
	return 0;
}

static struct elv_request *mk(int i, uint64_t sector, uint8_t op, uint8_t flags)
{
	return test_rq(&fx.rq[i], sector, 8, op, flags);
}

static struct elv_request *disp(uint64_t now)
{
	struct elv_request *rq = NULL;
	int r = elv_dispatch(fx.q, now, ELV_DISPATCH_FORCE, &rq);

	chk();
	return r == 0 ? rq : NULL;
}

static uint32_t queued(void)
{
	struct elv_stats st;

	assert_int_equal(elv_stats(fx.q, &st), 0);
	return st.queued;
}

static void test_attach_rules(void **state)
{
	struct elv_stage_ops partial = t_ops;
	struct elv_request *rq;

	(void)state;
	assert_int_equal(elv_queue_init(&fx.q, qmem, sizeof(qmem), elv_policy_find("noop"), NULL),
			 0);
	elv_list_init(&fx.ts.held);
	assert_int_equal(elv_stage_attach(fx.q, ELV_STAGE_NR, &t_ops, &fx.ts), ELV_EINVAL);
	assert_int_equal(elv_stage_attach(fx.q, ELV_STAGE_QOS, NULL, &fx.ts), ELV_EINVAL);
	partial.take_all = NULL;
	assert_int_equal(elv_stage_attach(fx.q, ELV_STAGE_QOS, &partial, &fx.ts), ELV_EINVAL);
	assert_int_equal(elv_stage_detach(fx.q, ELV_STAGE_QOS), ELV_EINVAL);
	/* Not while a request is queued or in flight. */
	assert_int_equal(elv_add(fx.q, mk(0, 0, ELV_OP_READ, 0), 1), 0);
	assert_int_equal(elv_stage_attach(fx.q, ELV_STAGE_QOS, &t_ops, &fx.ts), ELV_EBUSY);
	assert_int_equal(elv_dispatch(fx.q, 2, 0, &rq), 0);
	assert_int_equal(elv_stage_attach(fx.q, ELV_STAGE_QOS, &t_ops, &fx.ts), ELV_EBUSY);
	assert_int_equal(elv_complete(fx.q, rq, 3), 0);
	assert_int_equal(fx.q->gate, ELV_GATE_OPEN);
	assert_int_equal(elv_stage_attach(fx.q, ELV_STAGE_QOS, &t_ops, &fx.ts), 0);
	assert_int_equal(fx.q->gate, ELV_GATE_STAGED);
	chk();
	assert_int_equal(elv_stage_attach(fx.q, ELV_STAGE_QOS, &t_ops, &fx.ts), ELV_EBUSY);
	/* Not detached while it holds a request; the queue cannot exit either. */
	assert_int_equal(elv_add(fx.q, mk(1, 8, ELV_OP_READ, ELV_RQ_META), 10), 0);
	chk();
	assert_int_equal(elv_stage_detach(fx.q, ELV_STAGE_QOS), ELV_EBUSY);
	assert_int_equal(elv_queue_exit(fx.q), ELV_EBUSY);
	assert_int_equal(elv_cancel(fx.q, &fx.rq[1]), 0);
	assert_int_equal(elv_stage_detach(fx.q, ELV_STAGE_QOS), 0);
	assert_int_equal(fx.q->gate, ELV_GATE_OPEN);
	chk();
	assert_int_equal(elv_queue_exit(fx.q), 0);
	assert_int_equal(elv_stage_attach(fx.q, ELV_STAGE_QOS, &t_ops, &fx.ts), ELV_EINVAL);
}

/* Held requests: counted, released by time at dispatch, reported by elv_next_event(). */
static void test_hold_and_release(void **state)
{
	struct elv_stream s;
	struct elv_request *a, *b;

	(void)state;
	up("noop");
	memset(&s, 0, sizeof(s));
	assert_int_equal(elv_stream_init(fx.q, &s, 0), 0);
	a = mk(0, 100, ELV_OP_READ, ELV_RQ_META);
	a->stream = &s;
	b = mk(1, 500, ELV_OP_READ, 0);
	assert_int_equal(elv_add(fx.q, a, 100), 0);
	chk();
	assert_int_equal(a->ELV_PRIVATE(state), ELV_RQ_HELD);
	assert_int_equal(queued(), 1);
	assert_int_equal(elv_queue_nr_queued(fx.q), 0); /* the policy has not seen it */
	assert_int_equal(elv_stream_exit(fx.q, &s, 100), ELV_EBUSY);
	assert_int_equal(elv_next_event(fx.q), 100 + DELAY);
	assert_int_equal(elv_add(fx.q, b, 200), 0);
	assert_ptr_equal(disp(300), b); /* a waits; b does not */
	assert_int_equal(fx.ts.nr_dispatched, 1);
	assert_null(disp(100 + DELAY - 1));
	assert_ptr_equal(disp(100 + DELAY), a);
	assert_int_equal(elv_next_event(fx.q), ELV_TIME_NEVER);
	assert_int_equal(elv_complete(fx.q, b, 2000), 0);
	chk();
	assert_int_equal(fx.ts.last_status, 0);
	assert_int_equal(elv_complete_status(fx.q, a, -5, 2001), 0);
	chk();
	assert_int_equal(fx.ts.last_status, -5);
	assert_ptr_equal(fx.ts.last_completed, a);
	assert_int_equal(elv_stream_exit(fx.q, &s, 2002), 0);
	down();
}

/*
 * A stage's bound (full_out): while that many requests are past the stages it is not asked
 * to release, at a dispatch nor after the request a completion let go; the completion that
 * brings the count below the bound asks it again.
 */
static void test_bound_skips_release(void **state)
{
	struct elv_request *a, *b;

	(void)state;
	up("noop");
	fx.q->stage[ELV_STAGE_QOS].full_out = 1; /* as a stage of depth 1 keeps it */
	b = mk(1, 500, ELV_OP_READ, 0);
	a = mk(0, 100, ELV_OP_READ, ELV_RQ_META);
	assert_int_equal(elv_add(fx.q, b, 100), 0);
	assert_int_equal(elv_add(fx.q, a, 100), 0);
	/* a's time has come, but b is past the stages: the stage is not asked. */
	assert_ptr_equal(disp(100 + DELAY), b);
	assert_null(disp(100 + DELAY + 1));
	assert_int_equal(fx.ts.nr_release, 0);
	assert_int_equal(a->ELV_PRIVATE(state), ELV_RQ_HELD);
	/* b's completion makes room: asked once, a goes, and the room is taken again. */
	assert_int_equal(elv_complete(fx.q, b, 100 + DELAY + 2), 0);
	chk();
	assert_int_equal(fx.ts.nr_release, 1);
	assert_ptr_equal(disp(100 + DELAY + 3), a);
	assert_int_equal(fx.ts.nr_release, 1);
	assert_int_equal(elv_complete(fx.q, a, 100 + DELAY + 4), 0);
	/* Without a bound the stage is asked at every dispatch while it holds a request. */
	fx.q->stage[ELV_STAGE_QOS].full_out = 0;
	assert_int_equal(elv_add(fx.q, mk(2, 900, ELV_OP_READ, ELV_RQ_META), 200 + DELAY), 0);
	assert_null(disp(200 + DELAY));
	assert_int_equal(fx.ts.nr_release, 2);
	assert_ptr_equal(disp(200 + 2 * DELAY), &fx.rq[2]);
	assert_int_equal(fx.ts.nr_release, 3);
	assert_int_equal(elv_complete(fx.q, &fx.rq[2], 200 + 2 * DELAY + 1), 0);
	down();
}

/*
 * A stage that does not listen to dispatches and completions: while it holds nothing,
 * dispatch and complete keep their plain paths (the gate lets only elv_add() through the
 * stages); once it holds a request they release it, by time at dispatch or after a
 * completion, and go plain again when it holds nothing. elv_queue_check() checks the gate
 * against what is held after every step.
 */
static void test_gate_follows_held(void **state)
{
	struct elv_stage_ops quiet = t_ops;
	struct elv_request *a, *b, *c;

	(void)state;
	quiet.dispatched = NULL;
	quiet.completed = NULL;
	assert_int_equal(elv_queue_init(&fx.q, qmem, sizeof(qmem), elv_policy_find("fcfs"), NULL),
			 0);
	elv_list_init(&fx.ts.held);
	assert_int_equal(elv_stage_attach(fx.q, ELV_STAGE_QOS, &quiet, &fx.ts), 0);
	assert_int_equal(fx.q->gate, ELV_GATE_STAGED_ADD);
	chk();
	a = mk(0, 100, ELV_OP_READ, 0);
	assert_int_equal(elv_add(fx.q, a, 10), 0);
	assert_int_equal(fx.q->gate, ELV_GATE_STAGED_ADD); /* passed: nothing held */
	b = mk(1, 200, ELV_OP_READ, ELV_RQ_META);
	assert_int_equal(elv_add(fx.q, b, 20), 0);
	assert_int_equal(fx.q->gate, ELV_GATE_STAGED);
	chk();
	assert_ptr_equal(disp(30), a);
	assert_int_equal(fx.q->gate, ELV_GATE_STAGED); /* b is still held */
	/* A completion after b's time releases it to the policy. */
	assert_int_equal(elv_complete(fx.q, a, 20 + DELAY), 0);
	chk();
	assert_int_equal(fx.q->gate, ELV_GATE_STAGED_ADD);
	assert_int_equal(elv_queue_nr_queued(fx.q), 1);
	assert_ptr_equal(disp(21 + DELAY), b);
	/* Released by time at dispatch. */
	c = mk(2, 300, ELV_OP_READ, ELV_RQ_META);
	assert_int_equal(elv_add(fx.q, c, 40 + DELAY), 0);
	assert_int_equal(fx.q->gate, ELV_GATE_STAGED);
	assert_null(disp(39 + 2 * DELAY));
	assert_ptr_equal(disp(40 + 2 * DELAY), c);
	assert_int_equal(fx.q->gate, ELV_GATE_STAGED_ADD);
	assert_int_equal(elv_complete(fx.q, b, 41 + 2 * DELAY), 0);
	assert_int_equal(elv_complete(fx.q, c, 42 + 2 * DELAY), 0);
	/* A cancelled held request leaves the gate raised until the next dispatch settles it. */
	assert_int_equal(elv_add(fx.q, mk(3, 400, ELV_OP_READ, ELV_RQ_META), 50 + 2 * DELAY), 0);
	assert_int_equal(elv_cancel(fx.q, &fx.rq[3]), 0);
	chk();
	assert_null(disp(51 + 2 * DELAY));
	assert_int_equal(fx.q->gate, ELV_GATE_STAGED_ADD);
	assert_int_equal(elv_stage_detach(fx.q, ELV_STAGE_QOS), 0);
	assert_int_equal(fx.q->gate, ELV_GATE_OPEN);
	chk();
	assert_int_equal(elv_queue_exit(fx.q), 0);
}

/* A refusal by validate() or admit() changes nothing, not even the queue's clock. */
static void test_refusal_changes_nothing(void **state)
{
	struct elv_stats before, after;
	uint64_t now;

	(void)state;
	up("deadline");
	assert_int_equal(elv_add(fx.q, mk(0, 8, ELV_OP_READ, 0), 50), 0);
	elv_stats(fx.q, &before);
	now = fx.q->now;
	assert_int_equal(elv_add(fx.q, mk(1, BAD_VALIDATE, ELV_OP_READ, 0), 5000000), ELV_ERANGE);
	assert_int_equal(elv_add(fx.q, mk(1, BAD_ADMIT, ELV_OP_READ, ELV_RQ_META), 6000000),
			 ELV_ENOSPC);
	assert_int_equal(fx.q->now, now);
	assert_int_equal(fx.rq[1].ELV_PRIVATE(state), ELV_RQ_IDLE);
	elv_stats(fx.q, &after);
	assert_memory_equal(&before, &after, sizeof(before));
	chk();
	/* A request the core refuses never reaches the stage. */
	assert_int_equal(elv_add(fx.q, mk(1, 8, 9, 0), 60), ELV_EINVAL);
	assert_int_equal(elv_add(fx.q, &fx.rq[0], 60), ELV_EBUSY);
	assert_int_equal(elv_complete_status(fx.q, &fx.rq[0], -5, 61), ELV_EINVAL); /* queued */
	assert_int_equal(elv_dispatch(fx.q, 70, 8, &fx.out[0]), ELV_EINVAL);
	assert_int_equal(elv_dispatch(NULL, 70, 0, &fx.out[0]), ELV_EINVAL);
	assert_int_equal(elv_complete(NULL, &fx.rq[0], 70), ELV_EINVAL);
	assert_ptr_equal(disp(100), &fx.rq[0]);
	assert_int_equal(elv_complete(fx.q, &fx.rq[0], 200), 0);
	down();
}

/* Cancel a held request; one the stage passed on and that is cancelled is withdrawn. */
static void test_cancel(void **state)
{
	struct elv_request *a, *b;

	(void)state;
	up("cfq");
	a = mk(0, 100, ELV_OP_WRITE, ELV_RQ_META);
	b = mk(1, 900, ELV_OP_WRITE, 0);
	assert_int_equal(elv_add(fx.q, a, 10), 0);
	assert_int_equal(elv_add(fx.q, b, 20), 0);
	assert_int_equal(elv_cancel(fx.q, a), 0);
	chk();
	assert_int_equal(a->ELV_PRIVATE(state), ELV_RQ_IDLE);
	assert_int_equal(elv_cancel(fx.q, a), ELV_EINVAL);
	assert_int_equal(fx.ts.nr, 0);
	assert_int_equal(fx.ts.nr_completed, 0);
	assert_int_equal(elv_cancel(fx.q, b), 0);
	chk();
	assert_int_equal(fx.ts.last_status, ELV_STAGE_WITHDRAWN);
	assert_ptr_equal(fx.ts.last_completed, b);
	assert_int_equal(queued(), 0);
	down();
}

/* Drain: requeued, the policy's, behind a barrier, then the stage's, each once. */
static void test_drain_order(void **state)
{
	struct elv_request *r, *p, *bar, *after, *h1, *h2;

	(void)state;
	up("deadline");
	r = mk(0, 10, ELV_OP_READ, 0);
	assert_int_equal(elv_add(fx.q, r, 1), 0);
	assert_ptr_equal(disp(2), r);
	assert_int_equal(elv_requeue(fx.q, r, 3), 0);
	h1 = mk(1, 1000, ELV_OP_READ, ELV_RQ_META);
	assert_int_equal(elv_add(fx.q, h1, 4), 0);
	p = mk(2, 50, ELV_OP_READ, 0);
	assert_int_equal(elv_add(fx.q, p, 5), 0);
	bar = mk(3, 70, ELV_OP_WRITE, ELV_RQ_BARRIER);
	assert_int_equal(elv_add(fx.q, bar, 6), 0);
	after = mk(4, 90, ELV_OP_READ, 0);
	assert_int_equal(elv_add(fx.q, after, 7), 0);
	h2 = mk(5, 2000, ELV_OP_READ, ELV_RQ_META);
	assert_int_equal(elv_add(fx.q, h2, 8), 0);
	chk();
	assert_int_equal(queued(), 6);
	assert_int_equal(elv_drain(fx.q, on_drain, NULL), 6);
	chk();
	assert_int_equal(fx.nr_out, 6);
	assert_ptr_equal(fx.out[0], r);
	assert_ptr_equal(fx.out[1], p);
	assert_ptr_equal(fx.out[2], bar);
	assert_ptr_equal(fx.out[3], after);
	assert_ptr_equal(fx.out[4], h1);
	assert_ptr_equal(fx.out[5], h2);
	assert_int_equal(queued(), 0);
	assert_int_equal(fx.ts.nr, 0);
	assert_int_equal(elv_next_event(fx.q), ELV_TIME_NEVER);
	down();
}

/* Held requests stay with the stage across every policy switch. */
static void test_switch_keeps_held(void **state)
{
	const struct elv_policy *p;
	unsigned i;

	(void)state;
	up("noop");
	assert_int_equal(elv_add(fx.q, mk(0, 100, ELV_OP_READ, ELV_RQ_META), 10), 0);
	assert_int_equal(elv_add(fx.q, mk(1, 300, ELV_OP_READ, 0), 11), 0);
	for (i = 0; (p = elv_policy_at(i)) != NULL; i++) {
		assert_int_equal(elv_switch(fx.q, p, 20 + i), 0);
		chk();
		assert_int_equal(fx.ts.nr, 1);
		assert_int_equal(queued(), 2);
		assert_true(elv_next_event(fx.q) == 10 + DELAY ||
			    elv_time_before(elv_next_event(fx.q), 10 + DELAY));
	}
	assert_ptr_equal(disp(100), &fx.rq[1]);
	assert_ptr_equal(disp(10 + DELAY), &fx.rq[0]);
	assert_int_equal(elv_complete(fx.q, &fx.rq[1], 2000), 0);
	assert_int_equal(elv_complete(fx.q, &fx.rq[0], 2001), 0);
	down();
}

/* A stage may veto merges; a held request takes no part in merge-on-add. */
static void test_merge_veto(void **state)
{
	(void)state;
	up("noop");
	fx.ts.veto = 1;
	assert_int_equal(elv_add(fx.q, mk(0, 0, ELV_OP_READ, 0), 1), 0);
	assert_int_equal(elv_add(fx.q, mk(1, 8, ELV_OP_READ, 0), 2), 0);
	assert_int_equal(fx.nr_merged, 0);
	fx.ts.veto = 0;
	assert_int_equal(elv_add(fx.q, mk(2, 16, ELV_OP_READ, 0), 3), 1);
	assert_int_equal(fx.nr_merged, 1);
	assert_int_equal(elv_add(fx.q, mk(3, 24, ELV_OP_READ, ELV_RQ_META), 4), 0); /* held */
	assert_int_equal(elv_add(fx.q, mk(4, 32, ELV_OP_READ, 0), 5), 0); /* 3 is not queued */
	assert_int_equal(fx.nr_merged, 1);
	chk();
	assert_int_equal(elv_drain(fx.q, on_drain, NULL), 4);
	down();
}

/*
 * Two stages: the zone stage first, the test stage after it. A write the test stage holds
 * was issued for its zone: the next write of the zone waits behind it (it is not refused as
 * off the pointer), and goes on once the first has completed. A cancelled or drained write
 * the test stage held is withdrawn from the zone stage too (its pointer moves back).
 */
static void test_two_stages(void **state)
{
	struct elv_zone_geometry g;
	struct elv_zone_info zi;
	struct elv_request *w0, *w1, *rq;

	(void)state;
	up("deadline");
	memset(&g, 0, sizeof(g));
	g.nr_sectors = 8 * 64;
	g.zone_sectors = 64;
	g.zone_capacity = 16;
	assert_int_equal(elv_zone_attach(fx.q, &g, zmem, sizeof(zmem), on_fail, NULL), 0);
	chk();
	/* Passed on by the zone stage, held by the test stage. */
	w0 = mk(0, 128, ELV_OP_WRITE, ELV_RQ_META);
	assert_int_equal(elv_add(fx.q, w0, 10), 0);
	assert_int_equal(fx.ts.nr, 1);
	/* The zone's next write is held by the zone stage behind it. */
	w1 = mk(1, 136, ELV_OP_WRITE, 0);
	assert_int_equal(elv_add(fx.q, w1, 11), 0);
	assert_int_equal(elv_zone_get(fx.q, 2, &zi), 0);
	assert_int_equal(zi.wp, 8);
	assert_int_equal(zi.nr_out, 1);
	assert_int_equal(zi.nr_held, 1);
	chk();
	assert_null(disp(12)); /* the test stage still holds w0 */
	assert_ptr_equal(disp(10 + DELAY), w0);
	assert_null(disp(11 + DELAY));
	assert_int_equal(elv_complete(fx.q, w0, 12 + DELAY), 0);
	assert_ptr_equal(disp(13 + DELAY), w1);
	assert_int_equal(elv_complete(fx.q, w1, 14 + DELAY), 0);
	assert_int_equal(fx.nr_failed, 0);
	assert_int_equal(elv_zone_get(fx.q, 2, &zi), 0);
	assert_int_equal(zi.wp, 16);
	assert_int_equal(zi.nr_out, 0);
	chk();
	/* Cancelled while the test stage holds it: the zone's pointer moves back. */
	w0 = mk(2, 192, ELV_OP_WRITE, ELV_RQ_META);
	assert_int_equal(elv_add(fx.q, w0, 2000), 0);
	assert_int_equal(elv_cancel(fx.q, w0), 0);
	assert_int_equal(elv_zone_get(fx.q, 3, &zi), 0);
	assert_int_equal(zi.wp, 0);
	assert_int_equal(zi.nr_out, 0);
	assert_int_equal(fx.ts.nr, 0);
	chk();
	/* Drained while the test stage holds it: the same. */
	assert_int_equal(elv_add(fx.q, w0, 2001), 0);
	assert_int_equal(elv_drain(fx.q, on_drain, NULL), 1);
	assert_int_equal(elv_zone_get(fx.q, 3, &zi), 0);
	assert_int_equal(zi.wp, 0);
	assert_int_equal(zi.nr_out, 0);
	chk();
	/* Both stages pass a read. */
	rq = mk(3, 200, ELV_OP_READ, 0);
	assert_int_equal(elv_add(fx.q, rq, 3000), 0);
	assert_ptr_equal(disp(3001), rq);
	assert_int_equal(elv_complete(fx.q, rq, 3002), 0);
	assert_int_equal(elv_zone_detach(fx.q), 0);
	assert_int_equal(fx.q->gate, ELV_GATE_STAGED); /* the test stage is still there */
	down();
}

/*
 * A queue with one stage takes shortcuts (q->stage_one for elv_add(), q->stage_sole for the
 * pump) that follow its slots; elv_queue_check() notices one that does not. The lone stage's
 * pump asks it again after each request it lets go, while it holds one and has room, and not
 * once it holds none.
 */
static void test_one_stage_shortcuts(void **state)
{
	struct elv_zone_geometry g;
	struct elv_request *a;

	(void)state;
	up("noop");
	assert_int_equal(fx.q->stage_sole, ELV_STAGE_QOS + 1);
	assert_int_equal(fx.q->stage_one, 0); /* the test stage has a validate hook */
	fx.q->stage_sole = 0;
	assert_int_equal(elv_queue_check(fx.q), ELV_EINVAL);
	fx.q->stage_sole = ELV_STAGE_QOS + 1;
	fx.q->stage_one = ELV_STAGE_QOS + 1;
	assert_int_equal(elv_queue_check(fx.q), ELV_EINVAL);
	fx.q->stage_one = 0;
	chk();
	memset(&g, 0, sizeof(g));
	g.nr_sectors = 8 * 64;
	g.zone_sectors = 64;
	assert_int_equal(elv_zone_attach(fx.q, &g, zmem, sizeof(zmem), on_fail, NULL), 0);
	assert_int_equal(fx.q->stage_sole, 0); /* two stages: the pump's loop admits */
	chk();
	assert_int_equal(elv_zone_detach(fx.q), 0);
	assert_int_equal(fx.q->stage_sole, ELV_STAGE_QOS + 1);
	chk();
	/* One completion lets both held requests go, asking the stage once for each. */
	a = mk(0, 100, ELV_OP_READ, 0);
	assert_int_equal(elv_add(fx.q, a, 10), 0);
	assert_int_equal(elv_add(fx.q, mk(1, 300, ELV_OP_READ, ELV_RQ_META), 11), 0);
	assert_int_equal(elv_add(fx.q, mk(2, 500, ELV_OP_READ, ELV_RQ_META), 12), 0);
	assert_ptr_equal(disp(13), a);
	assert_int_equal(fx.ts.nr_release, 1); /* asked at the dispatch: too early */
	assert_int_equal(elv_complete(fx.q, a, 12 + DELAY), 0);
	chk();
	assert_int_equal(fx.ts.nr_release, 3);
	assert_int_equal(fx.ts.nr, 0);
	assert_int_equal(elv_queue_nr_queued(fx.q), 2);
	assert_ptr_equal(disp(13 + DELAY), &fx.rq[1]);
	assert_ptr_equal(disp(14 + DELAY), &fx.rq[2]);
	assert_int_equal(fx.ts.nr_release, 3);
	assert_int_equal(elv_complete(fx.q, &fx.rq[1], 15 + DELAY), 0);
	assert_int_equal(elv_complete(fx.q, &fx.rq[2], 16 + DELAY), 0);
	down();
}

/*
 * elv_next_event() asks only a stage that holds requests, through the lone stage's shortcut
 * or the walk over two slots alike, and reports the earlier of its time and the policy's. A
 * dispatch at that time lets every due request go at once, asking the lone stage once for
 * each (the last ask finds it empty, so none follows), and the policy hands them out in turn.
 */
static void test_next_event_and_dispatch_release(void **state)
{
	struct elv_zone_geometry g;
	int i;

	(void)state;
	up("deadline");
	assert_int_equal(elv_next_event(fx.q), ELV_TIME_NEVER); /* deadline has no timer */
	assert_int_equal(fx.ts.nr_next, 0); /* holds nothing: not asked */
	assert_int_equal(elv_add(fx.q, mk(0, 100, ELV_OP_READ, ELV_RQ_META), 10), 0);
	assert_int_equal(elv_add(fx.q, mk(1, 300, ELV_OP_READ, ELV_RQ_META), 11), 0);
	assert_int_equal(elv_next_event(fx.q), 10 + DELAY);
	assert_int_equal(fx.ts.nr_next, 1);
	fx.ts.nr_release = 0;
	assert_null(disp(9 + DELAY));
	assert_int_equal(fx.ts.nr_release, 1);
	assert_ptr_equal(disp(11 + DELAY), &fx.rq[0]);
	assert_int_equal(fx.ts.nr_release, 3); /* one ask for each: none after the last */
	assert_int_equal(fx.ts.nr, 0);
	assert_int_equal(fx.q->nr_staged, 0);
	assert_int_equal(fx.q->gate, ELV_GATE_STAGED); /* the test stage listens */
	assert_ptr_equal(disp(12 + DELAY), &fx.rq[1]);
	assert_int_equal(fx.ts.nr_release, 3);
	for (i = 0; i < 2; i++)
		assert_int_equal(elv_complete(fx.q, &fx.rq[i], 20 + DELAY), 0);
	fx.ts.nr_next = 0;
	assert_int_equal(elv_next_event(fx.q), ELV_TIME_NEVER);
	assert_int_equal(fx.ts.nr_next, 0);
	/* With the zone stage in front, which holds nothing: the walk over the slots asks the
	 * test stage only, and its time comes back. */
	memset(&g, 0, sizeof(g));
	g.nr_sectors = 8 * 64;
	g.zone_sectors = 64;
	assert_int_equal(elv_zone_attach(fx.q, &g, zmem, sizeof(zmem), on_fail, NULL), 0);
	assert_int_equal(fx.q->stage_sole, 0);
	assert_int_equal(elv_add(fx.q, mk(2, 500, ELV_OP_READ, ELV_RQ_META), 30 + DELAY), 0);
	assert_int_equal(elv_next_event(fx.q), 30 + 2 * DELAY);
	assert_int_equal(fx.ts.nr_next, 1);
	assert_null(disp(29 + 2 * DELAY));
	assert_ptr_equal(disp(30 + 2 * DELAY), &fx.rq[2]);
	assert_int_equal(elv_complete(fx.q, &fx.rq[2], 31 + 2 * DELAY), 0);
	assert_int_equal(elv_zone_detach(fx.q), 0);
	down();
}

/*
 * The entry points' verdicts with a stage attached: bad pointers and flags are refused before
 * the staged paths (which then test only the gate), a host callback's gate and a torn-down
 * queue as without stages.
 */
static void test_staged_verdicts(void **state)
{
	struct elv_request *rq = NULL;
	struct elv_request *a;

	(void)state;
	up("deadline");
	a = mk(0, 100, ELV_OP_READ, ELV_RQ_META);
	assert_int_equal(elv_add(NULL, a, 10), ELV_EINVAL);
	assert_int_equal(elv_add(fx.q, NULL, 10), ELV_EINVAL);
	assert_int_equal(elv_add(fx.q, a, 10), 0);
	assert_int_equal(elv_add(fx.q, a, 11), ELV_EBUSY); /* held already */
	assert_int_equal(elv_dispatch(NULL, 12, 0, &rq), ELV_EINVAL);
	assert_int_equal(elv_dispatch(fx.q, 12, 0, NULL), ELV_EINVAL);
	assert_int_equal(elv_dispatch(fx.q, 12, 2, &rq), ELV_EINVAL);
	assert_int_equal(elv_dispatch(fx.q, 12, ~0u, &rq), ELV_EINVAL);
	assert_int_equal(elv_complete(NULL, a, 12), ELV_EINVAL);
	assert_int_equal(elv_complete(fx.q, NULL, 12), ELV_EINVAL);
	/* Inside a host callback: changes refused, bad arguments still named as such. */
	fx.q->gate = ELV_GATE_CALLBACK;
	assert_int_equal(elv_add(fx.q, mk(1, 300, ELV_OP_READ, 0), 13), ELV_EBUSY);
	assert_int_equal(fx.rq[1].ELV_PRIVATE(state), ELV_RQ_IDLE);
	assert_int_equal(elv_add(fx.q, NULL, 13), ELV_EINVAL);
	assert_int_equal(elv_dispatch(fx.q, 13, 0, &rq), ELV_EBUSY);
	assert_int_equal(elv_dispatch(fx.q, 13, 2, &rq), ELV_EINVAL);
	assert_int_equal(elv_dispatch(fx.q, 13, 0, NULL), ELV_EINVAL);
	fx.q->gate = ELV_GATE_STAGED;
	chk();
	assert_int_equal(elv_dispatch(fx.q, 14, 0, &rq), ELV_EAGAIN);
	assert_int_equal(elv_cancel(fx.q, a), 0);
	down();
	/* Torn down: every call refused with ELV_EINVAL. */
	assert_int_equal(elv_add(fx.q, mk(2, 500, ELV_OP_READ, 0), 15), ELV_EINVAL);
	assert_int_equal(elv_dispatch(fx.q, 15, 0, &rq), ELV_EINVAL);
	assert_int_equal(elv_dispatch(fx.q, 15, 2, &rq), ELV_EINVAL);
}

/*
 * A dispatch while the stage holds every request and none is due answers ELV_EAGAIN without
 * asking the policy; a requeued request, or a barrier the stage passed on, still goes out
 * while the stage holds another, and the stage is asked once at each dispatch.
 */
static void test_dispatch_nothing_past_stages(void **state)
{
	struct elv_request *rq = NULL;
	struct elv_request *a, *b, *c;

	(void)state;
	up("deadline");
	a = mk(0, 100, ELV_OP_READ, ELV_RQ_META);
	b = mk(1, 300, ELV_OP_READ, 0);
	c = mk(2, 500, ELV_OP_WRITE, ELV_RQ_BARRIER);
	assert_int_equal(elv_add(fx.q, a, 10), 0);
	fx.ts.nr_release = 0;
	assert_int_equal(elv_dispatch(fx.q, 11, 0, &rq), ELV_EAGAIN);
	assert_null(rq);
	assert_int_equal(elv_dispatch(fx.q, 12, ELV_DISPATCH_FORCE, &rq), ELV_EAGAIN);
	assert_int_equal(fx.ts.nr_release, 2);
	assert_int_equal(fx.ts.nr_dispatched, 0);
	chk();
	/* A requeued request goes out first, the stage still holding a. */
	assert_int_equal(elv_add(fx.q, b, 13), 0);
	assert_ptr_equal(disp(14), b);
	assert_int_equal(elv_requeue(fx.q, b, 15), 0);
	assert_int_equal(elv_queue_nr_queued(fx.q), 0);
	assert_ptr_equal(disp(16), b);
	assert_int_equal(elv_dispatch(fx.q, 17, 0, &rq), ELV_EAGAIN);
	/* A barrier the stage passed on waits on the held list, the policy empty: it goes. */
	assert_int_equal(elv_add(fx.q, c, 18), 0);
	assert_int_equal(fx.q->nr_held, 1);
	assert_ptr_equal(disp(19), c);
	assert_int_equal(elv_dispatch(fx.q, 20, 0, &rq), ELV_EAGAIN);
	assert_int_equal(fx.ts.nr_release, 7);
	assert_int_equal(fx.ts.nr_dispatched, 3);
	/* At its time a goes out; then nothing is left anywhere. */
	assert_ptr_equal(disp(10 + DELAY), a);
	assert_int_equal(elv_dispatch(fx.q, 11 + DELAY, 0, &rq), ELV_EAGAIN);
	assert_int_equal(elv_complete(fx.q, a, 12 + DELAY), 0);
	assert_int_equal(elv_complete(fx.q, b, 12 + DELAY), 0);
	assert_int_equal(elv_complete(fx.q, c, 12 + DELAY), 0);
	down();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_attach_rules, setup),
		cmocka_unit_test_setup(test_hold_and_release, setup),
		cmocka_unit_test_setup(test_bound_skips_release, setup),
		cmocka_unit_test_setup(test_gate_follows_held, setup),
		cmocka_unit_test_setup(test_refusal_changes_nothing, setup),
		cmocka_unit_test_setup(test_cancel, setup),
		cmocka_unit_test_setup(test_drain_order, setup),
		cmocka_unit_test_setup(test_switch_keeps_held, setup),
		cmocka_unit_test_setup(test_merge_veto, setup),
		cmocka_unit_test_setup(test_two_stages, setup),
		cmocka_unit_test_setup(test_one_stage_shortcuts, setup),
		cmocka_unit_test_setup(test_next_event_and_dispatch_release, setup),
		cmocka_unit_test_setup(test_staged_verdicts, setup),
		cmocka_unit_test_setup(test_dispatch_nothing_past_stages, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
