/*
 * Core queue tests with the noop policy: every error path leaves the queue unchanged,
 * barriers keep their place, requeue/cancel/drain/switch return every request exactly once.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "elevator/policy.h"
#include "support/request.h"

#define NRQ 64

struct fixture {
	uint64_t mem[2048];
	struct elv_queue *q;
	struct elv_config cfg;
	struct elv_request rq[NRQ];
	int merges[4];
	struct elv_request *absorbed[NRQ];
	int nr_absorbed;
	int veto;
};

static struct fixture fx;

static void on_merge(void *ctx, struct elv_request *into, struct elv_request *absorbed,
		     enum elv_merge_kind kind)
{
	struct fixture *f = ctx;

	(void)into;
	f->merges[kind]++;
	f->absorbed[f->nr_absorbed++] = absorbed;
}

static int allow(void *ctx, const struct elv_request *a, const struct elv_request *b,
		 enum elv_merge_kind kind)
{
	(void)a;
	(void)b;
	(void)kind;
	return !((struct fixture *)ctx)->veto;
}

static void check(void)
{
	assert_int_equal(elv_queue_check(fx.q), 0);
}

static int setup(void **state)
{
	(void)state;
	memset(&fx, 0, sizeof(fx));
	fx.cfg.merge = on_merge;
	fx.cfg.allow_merge = allow;
	fx.cfg.ctx = &fx;
	assert_int_equal(elv_queue_init(&fx.q, fx.mem, sizeof(fx.mem), elv_policy_find("noop"),
					&fx.cfg),
			 0);
	return 0;
}

static struct elv_request *mk(int i, uint64_t sector, uint32_t n, uint8_t op)
{
	return test_rq(&fx.rq[i], sector, n, op, 0);
}

static struct elv_request *take(uint64_t now)
{
	struct elv_request *rq = NULL;

	assert_int_equal(elv_dispatch(fx.q, now, 0, &rq), 0);
	check();
	return rq;
}

static void expect_empty(void)
{
	struct elv_request *rq = NULL;

	assert_int_equal(elv_dispatch(fx.q, 0, 0, &rq), ELV_EAGAIN);
	assert_null(rq);
}

static void test_init_errors(void **state)
{
	uint64_t small[8];
	struct elv_queue *q = NULL;
	const struct elv_policy *noop = elv_policy_find("noop");
	struct elv_config bad = { 0 };

	(void)state;
	assert_int_equal(elv_queue_init(NULL, small, sizeof(small), noop, NULL), ELV_EINVAL);
	assert_int_equal(elv_queue_init(&q, NULL, sizeof(small), noop, NULL), ELV_EINVAL);
	assert_int_equal(elv_queue_init(&q, small, sizeof(small), NULL, NULL), ELV_EINVAL);
	assert_int_equal(elv_queue_init(&q, (char *)small + 1, 32, noop, NULL), ELV_EINVAL);
	assert_int_equal(elv_queue_init(&q, small, sizeof(small), noop, NULL), ELV_ENOSPC);
	bad.no_merges = 7;
	assert_int_equal(elv_queue_init(&q, fx.mem, sizeof(fx.mem), noop, &bad), ELV_EINVAL);
	assert_null(q);
	assert_int_equal(elv_queue_size(noop, NULL) <= elv_queue_size_any(NULL), 1);
	assert_null(elv_policy_find("no-such-policy"));
	assert_null(elv_policy_find(NULL));
	assert_int_equal(elv_queue_exit(NULL), ELV_EINVAL);
}

/* A policy is refused when a hook is missing or a tunable cannot be stored or scaled. */
static void test_policy_validation(void **state)
{
	struct elv_policy p = *elv_policy_find("noop");
	struct elv_tunable t = { "x", "ms", "test", 5, -7, 9, 0, 1000000u };
	const int64_t lim = INT64_MAX / 1000000;
	struct elv_queue *q = NULL;

	(void)state;
	p.data_size = 64;
	p.tunables = &t;
	p.nr_tunables = 1;
	assert_int_not_equal(elv_queue_size(&p, NULL), 0);
	t.max = lim; /* lim * scale still fits */
	assert_int_not_equal(elv_queue_size(&p, NULL), 0);
	t.max = lim + 1;
	assert_int_equal(elv_queue_size(&p, NULL), 0);
	t.max = 9;
	t.min = -lim;
	assert_int_not_equal(elv_queue_size(&p, NULL), 0);
	t.min = -lim - 1;
	assert_int_equal(elv_queue_size(&p, NULL), 0);
	t.min = INT64_MIN;
	t.scale = 1;
	assert_int_equal(elv_queue_size(&p, NULL), 0); /* |INT64_MIN| is past INT64_MAX */
	t.min = -INT64_MAX;
	t.max = INT64_MAX;
	assert_int_not_equal(elv_queue_size(&p, NULL), 0);
	t.scale = 0;
	assert_int_equal(elv_queue_size(&p, NULL), 0);
	t.scale = 1;
	t.offset = 4; /* misaligned */
	assert_int_equal(elv_queue_size(&p, NULL), 0);
	t.offset = 64; /* past the state */
	assert_int_equal(elv_queue_size(&p, NULL), 0);
	t.offset = 56;
	t.def = INT64_MAX;
	t.max = 9; /* default out of range */
	assert_int_equal(elv_queue_size(&p, NULL), 0);
	t.def = 5;
	assert_int_not_equal(elv_queue_size(&p, NULL), 0);
	p.tunables = NULL;
	assert_int_equal(elv_queue_size(&p, NULL), 0);
	p.tunables = &t;
	p.dispatch = NULL;
	assert_int_equal(elv_queue_size(&p, NULL), 0);
	assert_int_equal(elv_queue_init(&q, fx.mem, sizeof(fx.mem), &p, NULL), ELV_EINVAL);
	assert_null(q);
}

static void test_add_errors_change_nothing(void **state)
{
	struct elv_stats before, after;
	struct elv_stream foreign;
	struct elv_request *rq;

	(void)state;
	memset(&foreign, 0, sizeof(foreign));
	elv_stats(fx.q, &before);
	assert_int_equal(elv_add(NULL, mk(0, 0, 8, ELV_OP_READ), 0), ELV_EINVAL);
	assert_int_equal(elv_add(fx.q, NULL, 0), ELV_EINVAL);
	assert_int_equal(elv_add(fx.q, mk(0, 0, 0, ELV_OP_READ), 0), ELV_EINVAL);
	assert_int_equal(elv_add(fx.q, mk(0, 0, 8, 9), 0), ELV_EINVAL);
	rq = mk(0, 0, 8, ELV_OP_READ);
	rq->flags = 0x80;
	assert_int_equal(elv_add(fx.q, rq, 0), ELV_EINVAL);
	rq = mk(0, 0, 8, ELV_OP_READ);
	rq->ioprio = 0xff;
	assert_int_equal(elv_add(fx.q, rq, 0), ELV_EINVAL);
	assert_int_equal(elv_add(fx.q, mk(0, UINT64_MAX - 3, 8, ELV_OP_READ), 0), ELV_EOVERFLOW);
	rq = mk(0, 0, 8, ELV_OP_READ);
	rq->stream = &foreign; /* never registered */
	assert_int_equal(elv_add(fx.q, rq, 0), ELV_EINVAL);
	elv_stats(fx.q, &after);
	assert_memory_equal(&before, &after, sizeof(before));
	check();

	/* Exactly at the end of the sector space is fine; added twice is not. */
	assert_int_equal(elv_add(fx.q, mk(1, UINT64_MAX - 8, 8, ELV_OP_READ), 0), 0);
	elv_stats(fx.q, &before);
	assert_int_equal(elv_add(fx.q, &fx.rq[1], 1), ELV_EBUSY);
	elv_stats(fx.q, &after);
	assert_memory_equal(&before, &after, sizeof(before));
	/* Completing or requeueing a queued request is misuse. */
	assert_int_equal(elv_complete(fx.q, &fx.rq[1], 2), ELV_EINVAL);
	assert_int_equal(elv_requeue(fx.q, &fx.rq[1], 2), ELV_EINVAL);
	assert_int_equal(elv_queue_exit(fx.q), ELV_EBUSY);
	check();
	rq = take(3);
	assert_ptr_equal(rq, &fx.rq[1]);
	/* Cancelling a dispatched one, or adding it again, is misuse too. */
	assert_int_equal(elv_cancel(fx.q, rq), ELV_EINVAL);
	assert_int_equal(elv_add(fx.q, rq, 3), ELV_EBUSY);
	assert_int_equal(elv_complete(fx.q, rq, 4), 0);
	assert_int_equal(elv_complete(fx.q, rq, 5), ELV_EINVAL);
	assert_int_equal(elv_dispatch(fx.q, 0, 0x10, &rq), ELV_EINVAL);
	assert_int_equal(elv_dispatch(fx.q, 0, 0, NULL), ELV_EINVAL);
	expect_empty();
	check();
	assert_int_equal(elv_queue_exit(fx.q), 0);
}

static void test_fifo_order_and_merges(void **state)
{
	struct elv_stats st;
	static const uint64_t order[] = { 100, 50, 200 };
	int i;

	(void)state;
	assert_int_equal(elv_add(fx.q, mk(0, 100, 8, ELV_OP_WRITE), 0), 0);
	check();
	assert_int_equal(elv_add(fx.q, mk(1, 108, 8, ELV_OP_WRITE), 1), 1); /* back */
	check();
	assert_int_equal(elv_add(fx.q, mk(2, 50, 8, ELV_OP_WRITE), 2), 0);
	assert_int_equal(elv_add(fx.q, mk(3, 42, 8, ELV_OP_WRITE), 3), 1); /* front onto last */
	assert_int_equal(elv_add(fx.q, mk(4, 116, 8, ELV_OP_READ), 4), 0); /* other op */
	check();
	assert_int_equal(elv_cancel(fx.q, &fx.rq[4]), 0);
	assert_int_equal(elv_add(fx.q, mk(5, 200, 8, ELV_OP_WRITE), 5), 0);
	check();
	elv_stats(fx.q, &st);
	assert_int_equal(st.merged_back, 1);
	assert_int_equal(st.merged_front, 1);
	assert_int_equal(fx.merges[ELV_MERGE_BACK], 1);
	assert_int_equal(fx.merges[ELV_MERGE_FRONT], 1);
	assert_ptr_equal(fx.absorbed[0], &fx.rq[1]);
	assert_ptr_equal(fx.absorbed[1], &fx.rq[3]);
	for (i = 0; i < 3; i++) {
		struct elv_request *rq = take(10);

		assert_int_equal(rq->sector, i == 1 ? 42 : order[i]);
		assert_int_equal(elv_complete(fx.q, rq, 11), 0);
		check();
	}
	assert_int_equal(fx.rq[0].nr_sectors, 16);
	assert_int_equal(fx.rq[2].nr_sectors, 16);
	expect_empty();
}

static void test_request_to_request_merge(void **state)
{
	struct elv_stats st;
	struct elv_request *rq;

	(void)state;
	/* 0..8 and 16..24 queued; 8..16 back-merges onto the first, which then joins the last. */
	assert_int_equal(elv_add(fx.q, mk(0, 16, 8, ELV_OP_WRITE), 0), 0);
	assert_int_equal(elv_add(fx.q, mk(1, 0, 8, ELV_OP_WRITE), 1), 0);
	/* noop's front lookup sees only the newest request, rq[1]: not contiguous with 16. */
	assert_int_equal(elv_add(fx.q, mk(2, 8, 8, ELV_OP_WRITE), 2), 1);
	check();
	elv_stats(fx.q, &st);
	assert_int_equal(st.merged_back, 1);
	assert_int_equal(st.merged_req, 0);
	/* Build the request-to-request case: newest request starts where the grown one ends. */
	assert_int_equal(elv_add(fx.q, mk(3, 40, 8, ELV_OP_WRITE), 3), 0);
	assert_int_equal(elv_add(fx.q, mk(4, 48, 8, ELV_OP_WRITE), 4), 1); /* back onto 40 */
	assert_int_equal(elv_add(fx.q, mk(5, 64, 8, ELV_OP_WRITE), 5), 0);
	assert_int_equal(elv_add(fx.q, mk(6, 56, 8, ELV_OP_WRITE), 6), 1); /* back onto 40, joins 64 */
	check();
	elv_stats(fx.q, &st);
	assert_int_equal(st.merged_req, 1);
	assert_int_equal(fx.merges[ELV_MERGE_REQ], 1);
	assert_int_equal(fx.rq[3].nr_sectors, 32);
	/* Dispatch order: 16(+0), then 0..24?  No: 16 and 0..16 are separate, 40..72 last. */
	rq = take(7);
	assert_int_equal(rq->sector, 16);
	elv_complete(fx.q, rq, 8);
	rq = take(8);
	assert_int_equal(rq->sector, 0);
	assert_int_equal(rq->nr_sectors, 16);
	elv_complete(fx.q, rq, 9);
	rq = take(9);
	assert_int_equal(rq->sector, 40);
	elv_complete(fx.q, rq, 10);
	expect_empty();
	check();
}

static void test_merge_limits(void **state)
{
	(void)state;
	fx.veto = 1;
	assert_int_equal(elv_add(fx.q, mk(0, 0, 8, ELV_OP_WRITE), 0), 0);
	assert_int_equal(elv_add(fx.q, mk(1, 8, 8, ELV_OP_WRITE), 0), 0); /* vetoed */
	fx.veto = 0;
	assert_int_equal(elv_add(fx.q, mk(2, 16, 8, ELV_OP_READ), 0), 0); /* op differs */
	assert_int_equal(elv_add(fx.q, mk(3, 24, 8, ELV_OP_READ), 0), 1);
	fx.rq[4] = *mk(4, 32, 8, ELV_OP_READ);
	fx.rq[4].flags = ELV_RQ_NOMERGE;
	assert_int_equal(elv_add(fx.q, &fx.rq[4], 0), 0);
	mk(5, 40, 8, ELV_OP_WRITE)->flags = ELV_RQ_SYNC;
	assert_int_equal(elv_add(fx.q, &fx.rq[5], 0), 0);
	mk(6, 48, 8, ELV_OP_WRITE); /* async after sync: sync class differs */
	assert_int_equal(elv_add(fx.q, &fx.rq[6], 0), 0);
	check();
	assert_int_equal(elv_drain(fx.q, NULL, NULL), ELV_EINVAL);
}

static void test_max_sectors(void **state)
{
	struct elv_config cfg = { 0 };
	struct elv_queue *q;

	(void)state;
	cfg.dev.max_sectors = 16;
	assert_int_equal(elv_queue_init(&q, fx.mem, sizeof(fx.mem), elv_policy_find("noop"), &cfg),
			 0);
	fx.q = q;
	assert_int_equal(elv_add(q, mk(0, 0, 8, ELV_OP_WRITE), 0), 0);
	assert_int_equal(elv_add(q, mk(1, 8, 8, ELV_OP_WRITE), 0), 1);
	assert_int_equal(elv_add(q, mk(2, 16, 8, ELV_OP_WRITE), 0), 0); /* would be 24 > 16 */
	check();
	assert_int_equal(fx.rq[0].nr_sectors, 16);
}

static void test_barrier_keeps_its_place(void **state)
{
	struct elv_request *b, *rq;
	int i;

	(void)state;
	assert_int_equal(elv_add(fx.q, mk(0, 100, 8, ELV_OP_WRITE), 0), 0);
	assert_int_equal(elv_add(fx.q, mk(1, 300, 8, ELV_OP_WRITE), 1), 0);
	b = mk(2, 0, 0, ELV_OP_FLUSH);
	b->flags = ELV_RQ_BARRIER;
	assert_int_equal(elv_add(fx.q, b, 2), 0);
	/* Contiguous with rq[1] but behind the barrier: must neither merge nor pass it. */
	assert_int_equal(elv_add(fx.q, mk(3, 308, 8, ELV_OP_WRITE), 3), 0);
	assert_int_equal(elv_add(fx.q, mk(4, 50, 8, ELV_OP_WRITE), 4), 0);
	check();
	for (i = 0; i < 2; i++) {
		rq = take(5);
		assert_true(rq == &fx.rq[0] || rq == &fx.rq[1]);
		elv_complete(fx.q, rq, 6);
	}
	assert_ptr_equal(take(7), b);
	elv_complete(fx.q, b, 8);
	rq = take(9);
	assert_ptr_equal(rq, &fx.rq[3]);
	elv_complete(fx.q, rq, 9);
	rq = take(9);
	assert_ptr_equal(rq, &fx.rq[4]);
	elv_complete(fx.q, rq, 9);
	expect_empty();
	check();
}

static void test_barrier_cancel_releases(void **state)
{
	struct elv_request *b, *rq;

	(void)state;
	assert_int_equal(elv_add(fx.q, mk(0, 100, 8, ELV_OP_WRITE), 0), 0);
	b = mk(1, 500, 8, ELV_OP_WRITE);
	b->flags = ELV_RQ_BARRIER;
	assert_int_equal(elv_add(fx.q, b, 1), 0);
	assert_int_equal(elv_add(fx.q, mk(2, 108, 8, ELV_OP_WRITE), 2), 0); /* held: no merge */
	check();
	assert_int_equal(elv_cancel(fx.q, b), 0);
	check();
	/* With the barrier gone the held request joined the queue (and merged). */
	rq = take(3);
	assert_ptr_equal(rq, &fx.rq[0]);
	assert_int_equal(rq->nr_sectors, 16);
	elv_complete(fx.q, rq, 4);
	expect_empty();
}

static void test_requeue_goes_first(void **state)
{
	struct elv_request *a, *c;
	struct elv_stats st;

	(void)state;
	assert_int_equal(elv_add(fx.q, mk(0, 10, 8, ELV_OP_READ), 0), 0);
	assert_int_equal(elv_add(fx.q, mk(1, 20, 8, ELV_OP_READ), 0), 0);
	a = take(1);
	assert_int_equal(elv_requeue(fx.q, a, 2), 0);
	check();
	assert_int_equal(elv_requeue(fx.q, a, 2), ELV_EINVAL);
	c = take(3);
	assert_ptr_equal(c, a);
	elv_complete(fx.q, c, 4);
	assert_int_equal(elv_add(fx.q, mk(2, 30, 8, ELV_OP_READ), 0), 0);
	c = take(5);
	assert_int_equal(elv_requeue(fx.q, c, 6), 0);
	assert_int_equal(elv_cancel(fx.q, c), 0); /* a requeued request may be withdrawn */
	check();
	elv_stats(fx.q, &st);
	assert_int_equal(st.requeued, 2);
	assert_int_equal(st.cancelled, 1);
	c = take(7);
	assert_ptr_equal(c, &fx.rq[2]);
	elv_complete(fx.q, c, 8);
	expect_empty();
}

static struct elv_request *drained[NRQ];
static int nr_drained;

static void on_drain(void *arg, struct elv_request *rq)
{
	(void)arg;
	drained[nr_drained++] = rq;
}

static void test_drain_returns_everything(void **state)
{
	struct elv_request *b, *rq;
	int i;

	(void)state;
	nr_drained = 0;
	for (i = 0; i < 5; i++)
		assert_int_equal(elv_add(fx.q, mk(i, (uint64_t)(1000 - 100 * i), 8, ELV_OP_READ),
					 (uint64_t)i),
				 0);
	rq = take(6); /* rq[0], in flight: drain leaves it */
	b = mk(5, 0, 0, ELV_OP_FLUSH);
	b->flags = ELV_RQ_BARRIER;
	assert_int_equal(elv_add(fx.q, b, 7), 0);
	assert_int_equal(elv_add(fx.q, mk(6, 5, 8, ELV_OP_READ), 8), 0);
	assert_int_equal(elv_drain(fx.q, on_drain, NULL), 6);
	check();
	for (i = 0; i < 4; i++)
		assert_ptr_equal(drained[i], &fx.rq[i + 1]);
	assert_ptr_equal(drained[4], b);
	assert_ptr_equal(drained[5], &fx.rq[6]);
	expect_empty();
	assert_int_equal(elv_complete(fx.q, rq, 9), 0);
	assert_int_equal(elv_queue_exit(fx.q), 0);
	/* Drained requests are the host's again and can be added anew. */
	assert_int_equal(elv_queue_init(&fx.q, fx.mem, sizeof(fx.mem), elv_policy_find("noop"),
					NULL),
			 0);
	assert_int_equal(elv_add(fx.q, &fx.rq[1], 10), 0);
	check();
}

static void test_streams(void **state)
{
	struct elv_stream s, t;
	struct elv_request *rq;

	(void)state;
	memset(&s, 0, sizeof(s));
	memset(&t, 0, sizeof(t));
	s.ioprio = ELV_PRIO(ELV_PRIO_RT, 2);
	assert_int_equal(elv_stream_init(fx.q, &s, 0), 0);
	assert_int_equal(elv_stream_init(fx.q, &s, 0), ELV_EBUSY);
	t.ioprio = 0xee;
	assert_int_equal(elv_stream_init(fx.q, &t, 0), ELV_EINVAL);
	assert_int_equal(elv_stream_exit(fx.q, &t, 0), ELV_EINVAL);
	rq = mk(0, 10, 8, ELV_OP_READ);
	rq->stream = &s;
	assert_int_equal(elv_rq_prio(rq), ELV_PRIO(ELV_PRIO_RT, 2));
	assert_int_equal(elv_add(fx.q, rq, 1), 0);
	assert_int_equal(elv_stream_exit(fx.q, &s, 2), ELV_EBUSY);
	assert_int_equal(elv_queue_exit(fx.q), ELV_EBUSY);
	rq = take(3);
	assert_int_equal(elv_stream_exit(fx.q, &s, 3), ELV_EBUSY);
	assert_int_equal(elv_stream_set_prio(fx.q, &s, ELV_PRIO(ELV_PRIO_IDLE, 0)), 0);
	assert_int_equal(elv_stream_set_prio(fx.q, &s, 0x40), ELV_EINVAL);
	elv_complete(fx.q, rq, 4);
	assert_int_equal(elv_stream_exit(fx.q, &s, 5), 0);
	assert_int_equal(elv_queue_exit(fx.q), 0);
}

static void test_tunables_and_stats_api(void **state)
{
	int64_t v = 42;
	const char *name;
	uint64_t val;
	unsigned nr = 99;

	(void)state;
	assert_int_equal(elv_tunable_get(fx.q, "read_expire", &v), ELV_ENOENT);
	assert_int_equal(v, 42);
	assert_int_equal(elv_tunable_set(fx.q, "read_expire", 1), ELV_ENOENT);
	assert_int_equal(elv_tunable_get(NULL, "x", &v), ELV_EINVAL);
	assert_int_equal(elv_tunable_set(fx.q, NULL, 1), ELV_EINVAL);
	assert_int_equal(elv_policy_stat(fx.q, 0, &name, &val), ELV_ENOENT);
	assert_int_equal(elv_stats(fx.q, NULL), ELV_EINVAL);
	assert_null(elv_policy_tunables(elv_policy_find("noop"), &nr));
	assert_int_equal(nr, 0);
	assert_string_equal(elv_policy_name(elv_policy_at(0)), "noop");
	assert_string_equal(elv_strerror(ELV_EINVAL), "invalid argument or request state");
	assert_int_equal(elv_version(), ELV_VERSION_NUMBER);
	assert_int_equal(elv_next_event(fx.q), ELV_TIME_NEVER);
	assert_int_equal(elv_next_event(NULL), ELV_TIME_NEVER);
}

static void test_switch_keeps_everything(void **state)
{
	const struct elv_policy *p;
	struct elv_request *rq, *inflight;
	unsigned i, j;
	int seen[NRQ] = { 0 };

	(void)state;
	for (i = 0; i < 10; i++)
		assert_int_equal(elv_add(fx.q, mk((int)i, 1000 - 50 * (uint64_t)i, 8, ELV_OP_READ),
					 i),
				 0);
	inflight = take(11);
	/* Round trip through every built-in policy with requests queued and in flight. */
	for (j = 0; (p = elv_policy_at(j)) != NULL; j++) {
		assert_int_equal(elv_switch(fx.q, p, 12 + j), 0);
		check();
	}
	assert_true(j >= 4); /* noop, deadline, anticipatory and cfq at least were visited */
	assert_int_equal(elv_switch(fx.q, elv_policy_find("noop"), 30), 0);
	assert_int_equal(elv_switch(fx.q, NULL, 30), ELV_EINVAL);
	assert_int_equal(elv_complete(fx.q, inflight, 31), 0);
	seen[inflight - fx.rq]++;
	/* noop again: arrival order survived all the switches. */
	for (i = 1; i < 10; i++) {
		rq = take(32);
		assert_ptr_equal(rq, &fx.rq[i]);
		seen[rq - fx.rq]++;
		elv_complete(fx.q, rq, 33);
	}
	for (i = 0; i < 10; i++)
		assert_int_equal(seen[i], 1);
	expect_empty();
}

static void test_switch_enospc(void **state)
{
	static uint64_t mem[512];
	struct elv_queue *q;
	const struct elv_policy *noop = elv_policy_find("noop");
	const struct elv_policy *p;
	size_t len = elv_queue_size(noop, NULL);
	unsigned i, refused;

	(void)state;
	assert_true(len <= sizeof(mem));
	assert_int_equal(elv_queue_init(&q, mem, len, noop, NULL), 0);
	for (i = 0, refused = 0; (p = elv_policy_at(i)) != NULL; i++)
		if (elv_queue_size(p, NULL) > len) {
			assert_int_equal(elv_switch(q, p, 0), ELV_ENOSPC);
			refused++;
		}
	assert_true(i >= 4);
	assert_true(refused > 0); /* some policy needs more than noop, or nothing was tested */
	assert_ptr_equal(elv_queue_policy(q), noop);
	assert_int_equal(elv_queue_check(q), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init_errors),
		cmocka_unit_test_setup(test_add_errors_change_nothing, setup),
		cmocka_unit_test_setup(test_fifo_order_and_merges, setup),
		cmocka_unit_test_setup(test_request_to_request_merge, setup),
		cmocka_unit_test_setup(test_merge_limits, setup),
		cmocka_unit_test_setup(test_max_sectors, setup),
		cmocka_unit_test_setup(test_barrier_keeps_its_place, setup),
		cmocka_unit_test_setup(test_barrier_cancel_releases, setup),
		cmocka_unit_test_setup(test_requeue_goes_first, setup),
		cmocka_unit_test_setup(test_drain_returns_everything, setup),
		cmocka_unit_test_setup(test_streams, setup),
		cmocka_unit_test_setup(test_tunables_and_stats_api, setup),
		cmocka_unit_test(test_policy_validation),
		cmocka_unit_test_setup(test_switch_keeps_everything, setup),
		cmocka_unit_test_setup(test_switch_enospc, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
