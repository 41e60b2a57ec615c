/*
 * Groups and weights: registration, membership and weight changes are validated and change
 * nothing when refused; the policy hooks see each change once; a policy switch carries groups
 * over; calls from a callback are refused; a torn-down queue refuses everything.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "elevator/policy.h"
#include "support/request.h"

static uint64_t mem[16384];

/* A policy that records what the group hooks told it, on top of noop's ordering. */
struct rec {
	unsigned group_init, group_exit, reweight;
	const struct elv_stream *last_s;
	const struct elv_group *last_old;
	uint64_t last_now;
};
static struct rec rec;

static void rec_group_init(struct elv_queue *q, struct elv_group *g, uint64_t now)
{
	const uint64_t *p = elv_group_priv(g);
	unsigned i;

	(void)q;
	for (i = 0; i < ELV_GROUP_PRIV_WORDS; i++)
		assert_int_equal(p[i], 0); /* the core hands the area over zeroed */
	((uint64_t *)elv_group_priv(g))[0] = 0xabcdu;
	rec.group_init++;
	rec.last_now = now;
}

static void rec_group_exit(struct elv_queue *q, struct elv_group *g, uint64_t now)
{
	(void)q;
	assert_int_equal(((uint64_t *)elv_group_priv(g))[0], 0xabcdu);
	rec.group_exit++;
	rec.last_now = now;
}

static void rec_reweight(struct elv_queue *q, struct elv_stream *s, const struct elv_group *old)
{
	(void)q;
	rec.reweight++;
	rec.last_s = s;
	rec.last_old = old;
}

static struct elv_policy recorder;

static void make_recorder(void)
{
	recorder = elv_policy_noop;
	recorder.name = "recorder";
	recorder.group_init = rec_group_init;
	recorder.group_exit = rec_group_exit;
	recorder.reweight = rec_reweight;
	memset(&rec, 0, sizeof(rec));
}

static struct elv_queue *open_q(const struct elv_policy *p)
{
	struct elv_queue *q;

	assert_int_equal(elv_queue_init(&q, mem, sizeof(mem), p, NULL), 0);
	return q;
}

static void test_weights_derived(void **state)
{
	struct elv_stream s;

	(void)state;
	memset(&s, 0, sizeof(s));
	assert_int_equal(elv_stream_weight(&s), 40); /* no class: BE level 4 */
	s.ioprio = ELV_PRIO(ELV_PRIO_BE, 0);
	assert_int_equal(elv_stream_weight(&s), 80);
	s.ioprio = ELV_PRIO(ELV_PRIO_RT, 7);
	assert_int_equal(elv_stream_weight(&s), 10);
	s.ioprio = ELV_PRIO(ELV_PRIO_IDLE, 0);
	assert_int_equal(elv_stream_weight(&s), 10); /* the idle class takes level 7 */
	s.weight = 300;
	assert_int_equal(elv_stream_weight(&s), 300);
}

static void test_group_lifecycle(void **state)
{
	struct elv_queue *q;
	struct elv_group g, h;
	struct elv_stream s;

	(void)state;
	make_recorder();
	q = open_q(&recorder);
	memset(&g, 0, sizeof(g));
	memset(&h, 0, sizeof(h));
	memset(&s, 0, sizeof(s));
	assert_int_equal(elv_group_init(NULL, &g, 0), ELV_EINVAL);
	assert_int_equal(elv_group_init(q, NULL, 0), ELV_EINVAL);
	h.weight = ELV_GROUP_WEIGHT_MAX + 1;
	assert_int_equal(elv_group_init(q, &h, 0), ELV_ERANGE);
	assert_int_equal(rec.group_init, 0);
	assert_null(elv_queue_group_next(q, NULL));

	assert_int_equal(elv_group_init(q, &g, 100), 0);
	assert_int_equal(g.weight, ELV_GROUP_WEIGHT_DEFAULT);
	assert_int_equal(rec.group_init, 1);
	assert_int_equal(rec.last_now, 100);
	assert_int_equal(elv_group_init(q, &g, 100), ELV_EBUSY); /* registered already */
	h.weight = ELV_GROUP_WEIGHT_MAX;
	assert_int_equal(elv_group_init(q, &h, 50), 0);
	assert_int_equal(rec.last_now, 100); /* time never runs back */
	assert_ptr_equal(elv_queue_group_next(q, NULL), &g);
	assert_ptr_equal(elv_queue_group_next(q, &g), &h);
	assert_null(elv_queue_group_next(q, &h));
	assert_int_equal(elv_queue_check(q), 0);

	assert_int_equal(elv_stream_init(q, &s, 200), 0);
	assert_null(elv_stream_group(&s));
	assert_int_equal(elv_stream_set_group(q, &s, &g), 0);
	assert_int_equal(rec.reweight, 1);
	assert_ptr_equal(rec.last_s, &s);
	assert_null(rec.last_old);
	assert_ptr_equal(elv_stream_group(&s), &g);
	assert_int_equal(elv_group_nr_streams(&g), 1);
	assert_int_equal(elv_stream_set_group(q, &s, &g), 0); /* no move, no hook */
	assert_int_equal(rec.reweight, 1);
	assert_int_equal(elv_queue_check(q), 0);

	/* A queue with groups, or a group with streams, cannot be torn down. */
	assert_int_equal(elv_group_exit(q, &g, 300), ELV_EBUSY);
	assert_int_equal(rec.group_exit, 0);
	assert_int_equal(elv_stream_set_group(q, &s, &h), 0);
	assert_ptr_equal(rec.last_old, &g);
	assert_int_equal(elv_group_nr_streams(&g), 0);
	assert_int_equal(elv_group_nr_streams(&h), 1);
	assert_int_equal(elv_group_exit(q, &g, 300), 0);
	assert_int_equal(rec.group_exit, 1);
	assert_int_equal(elv_group_exit(q, &g, 300), ELV_EINVAL); /* not registered any more */
	assert_int_equal(elv_stream_set_group(q, &s, &g), ELV_EINVAL);
	assert_ptr_equal(elv_stream_group(&s), &h);

	/* A retired stream leaves its group. */
	assert_int_equal(elv_queue_exit(q), ELV_EBUSY);
	assert_int_equal(elv_stream_exit(q, &s, 400), 0);
	assert_int_equal(elv_group_nr_streams(&h), 0);
	assert_null(elv_stream_group(&s));
	assert_int_equal(elv_queue_exit(q), ELV_EBUSY); /* h is still registered */
	assert_int_equal(elv_group_exit(q, &h, 400), 0);
	assert_int_equal(elv_queue_exit(q), 0);
	/* Torn down: every call refused, nothing revived. */
	assert_int_equal(elv_group_init(q, &g, 500), ELV_EINVAL);
	assert_int_equal(elv_group_set_weight(q, &g, 10), ELV_EINVAL);
	assert_int_equal(elv_stream_set_weight(q, &s, 10), ELV_EINVAL);
	assert_int_equal(elv_stream_set_group(q, &s, NULL), ELV_EINVAL);
	assert_int_equal(rec.group_init, 2);
}

static void test_weights_validated(void **state)
{
	struct elv_queue *q;
	struct elv_group g, other;
	struct elv_stream s, t;

	(void)state;
	make_recorder();
	q = open_q(&recorder);
	memset(&g, 0, sizeof(g));
	memset(&other, 0, sizeof(other));
	memset(&s, 0, sizeof(s));
	memset(&t, 0, sizeof(t));
	g.weight = 200;
	assert_int_equal(elv_group_init(q, &g, 0), 0);
	assert_int_equal(g.weight, 200);

	assert_int_equal(elv_group_set_weight(q, &g, 0), ELV_ERANGE);
	assert_int_equal(elv_group_set_weight(q, &g, ELV_GROUP_WEIGHT_MAX + 1), ELV_ERANGE);
	assert_int_equal(elv_group_set_weight(q, &other, 10), ELV_EINVAL); /* not registered */
	assert_int_equal(elv_group_set_weight(NULL, &g, 10), ELV_EINVAL);
	assert_int_equal(elv_group_set_weight(q, NULL, 10), ELV_EINVAL);
	assert_int_equal(g.weight, 200);
	assert_int_equal(rec.reweight, 0);
	assert_int_equal(elv_group_set_weight(q, &g, 1), 0);
	assert_int_equal(g.weight, 1);
	assert_int_equal(rec.reweight, 1);
	assert_null(rec.last_s);
	assert_ptr_equal(rec.last_old, &g);

	t.weight = ELV_WEIGHT_MAX + 1;
	assert_int_equal(elv_stream_init(q, &t, 0), ELV_ERANGE);
	assert_int_equal(elv_queue_stream_next(q, NULL), NULL);
	s.weight = ELV_WEIGHT_MAX;
	assert_int_equal(elv_stream_init(q, &s, 0), 0);
	assert_int_equal(elv_stream_set_weight(q, &s, ELV_WEIGHT_MAX + 1), ELV_ERANGE);
	assert_int_equal(elv_stream_set_weight(q, &t, 5), ELV_EINVAL); /* not registered */
	assert_int_equal(elv_stream_set_weight(q, NULL, 5), ELV_EINVAL);
	assert_int_equal(s.weight, ELV_WEIGHT_MAX);
	assert_int_equal(rec.reweight, 1);
	assert_int_equal(elv_stream_set_weight(q, &s, 0), 0); /* back to the priority's */
	assert_int_equal(elv_stream_weight(&s), 40);
	assert_int_equal(rec.reweight, 2);
	assert_ptr_equal(rec.last_s, &s);
	assert_int_equal(elv_stream_set_group(q, NULL, &g), ELV_EINVAL);
	assert_int_equal(elv_stream_set_group(q, &t, &g), ELV_EINVAL);
	assert_int_equal(elv_group_nr_streams(&g), 0);
	assert_int_equal(elv_queue_check(q), 0);

	assert_int_equal(elv_stream_exit(q, &s, 0), 0);
	assert_int_equal(elv_group_exit(q, &g, 0), 0);
	assert_int_equal(elv_queue_exit(q), 0);
}

/* A stream the library holds requests of stays where it is. */
static void test_move_refused_with_requests(void **state)
{
	struct elv_queue *q;
	struct elv_group g;
	struct elv_stream s;
	struct elv_request r, *out;

	(void)state;
	q = open_q(&elv_policy_noop);
	memset(&g, 0, sizeof(g));
	memset(&s, 0, sizeof(s));
	assert_int_equal(elv_group_init(q, &g, 0), 0);
	assert_int_equal(elv_stream_init(q, &s, 0), 0);
	test_rq(&r, 100, 8, ELV_OP_READ, 0)->stream = &s;
	assert_int_equal(elv_add(q, &r, 10), 0);
	assert_int_equal(elv_stream_set_group(q, &s, &g), ELV_EBUSY);
	assert_null(elv_stream_group(&s));
	assert_int_equal(elv_dispatch(q, 20, 0, &out), 0);
	assert_int_equal(elv_stream_set_group(q, &s, &g), ELV_EBUSY); /* in flight */
	assert_int_equal(elv_stream_set_weight(q, &s, 500), 0);      /* weights may change */
	assert_int_equal(elv_complete(q, out, 30), 0);
	assert_int_equal(elv_stream_set_group(q, &s, &g), 0);
	assert_int_equal(elv_queue_check(q), 0);
	assert_int_equal(elv_stream_exit(q, &s, 40), 0);
	assert_int_equal(elv_group_exit(q, &g, 40), 0);
	assert_int_equal(elv_queue_exit(q), 0);
}

/* elv_switch() gives every group to the new policy: exit hooks, then zeroed init hooks. */
static void test_switch_carries_groups(void **state)
{
	struct elv_queue *q;
	struct elv_group g[2];
	struct elv_stream s;

	(void)state;
	make_recorder();
	q = open_q(&recorder);
	memset(g, 0, sizeof(g));
	memset(&s, 0, sizeof(s));
	assert_int_equal(elv_group_init(q, &g[0], 0), 0);
	assert_int_equal(elv_group_init(q, &g[1], 0), 0);
	assert_int_equal(elv_stream_init(q, &s, 0), 0);
	assert_int_equal(elv_stream_set_group(q, &s, &g[1]), 0);
	assert_int_equal(elv_switch(q, &elv_policy_deadline, 10), 0);
	assert_int_equal(rec.group_exit, 2);
	assert_ptr_equal(elv_stream_group(&s), &g[1]);
	assert_int_equal(elv_group_nr_streams(&g[1]), 1);
	assert_int_equal(elv_switch(q, &recorder, 20), 0);
	assert_int_equal(rec.group_init, 4); /* and each found its area zeroed */
	assert_int_equal(elv_queue_check(q), 0);
	assert_int_equal(elv_stream_exit(q, &s, 30), 0);
	assert_int_equal(elv_group_exit(q, &g[0], 30), 0);
	assert_int_equal(elv_group_exit(q, &g[1], 30), 0);
	assert_int_equal(rec.group_exit, 4);
	assert_int_equal(elv_queue_exit(q), 0);
}

/* Inside a host callback every call that changes groups or weights returns ELV_EBUSY. */
struct cb_ctx {
	struct elv_queue *q;
	struct elv_group *g;
	struct elv_group *fresh;
	struct elv_stream *s;
	unsigned calls;
};

static void on_trace(void *ctx, const struct elv_trace_event *ev)
{
	struct cb_ctx *c = ctx;

	(void)ev;
	c->calls++;
	assert_int_equal(elv_group_init(c->q, c->fresh, 0), ELV_EBUSY);
	assert_int_equal(elv_group_exit(c->q, c->g, 0), ELV_EBUSY);
	assert_int_equal(elv_group_set_weight(c->q, c->g, 7), ELV_EBUSY);
	assert_int_equal(elv_stream_set_weight(c->q, c->s, 7), ELV_EBUSY);
	assert_int_equal(elv_stream_set_group(c->q, c->s, NULL), ELV_EBUSY);
	/* Getters still answer. */
	assert_ptr_equal(elv_queue_group_next(c->q, NULL), c->g);
}

static void test_callback_gate(void **state)
{
	struct elv_config cfg;
	struct cb_ctx c;
	struct elv_group g, fresh;
	struct elv_stream s;
	struct elv_request r;
	struct elv_queue *q;

	(void)state;
	memset(&cfg, 0, sizeof(cfg));
	memset(&c, 0, sizeof(c));
	memset(&g, 0, sizeof(g));
	memset(&fresh, 0, sizeof(fresh));
	memset(&s, 0, sizeof(s));
	cfg.trace = on_trace;
	cfg.ctx = &c;
	assert_int_equal(elv_queue_init(&q, mem, sizeof(mem), &elv_policy_noop, &cfg), 0);
	assert_int_equal(elv_group_init(q, &g, 0), 0);
	assert_int_equal(elv_stream_init(q, &s, 0), 0);
	assert_int_equal(elv_stream_set_group(q, &s, &g), 0);
	c.q = q;
	c.g = &g;
	c.fresh = &fresh;
	c.s = &s;
	test_rq(&r, 8, 8, ELV_OP_READ, 0)->stream = &s;
	assert_int_equal(elv_add(q, &r, 5), 0);
	assert_true(c.calls > 0);
	assert_int_equal(g.weight, ELV_GROUP_WEIGHT_DEFAULT);
	assert_int_equal(s.weight, 0);
	assert_ptr_equal(elv_stream_group(&s), &g);
	assert_int_equal(fresh.flags, 0);
	assert_int_equal(elv_cancel(q, &r), 0);
	assert_int_equal(elv_stream_exit(q, &s, 6), 0);
	assert_int_equal(elv_group_exit(q, &g, 6), 0);
	assert_int_equal(elv_queue_exit(q), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_weights_derived),
		cmocka_unit_test(test_group_lifecycle),
		cmocka_unit_test(test_weights_validated),
		cmocka_unit_test(test_move_refused_with_requests),
		cmocka_unit_test(test_switch_carries_groups),
		cmocka_unit_test(test_callback_gate),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
