/*
 * What policy.h gives a policy of the queue, the request and the stream: the public head of
 * the queue agrees with the functions that report the same counts, the walks of the requeue
 * and stream lists, the idle start, and the request and stream accessors. Written without
 * ELV_ALLOW_PRIVATE_ACCESS, as a policy outside the library would be.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "elevator/policy.h"
#include "support/request.h"

static uint64_t mem[8192];
static struct elv_request rq[4];
static struct elv_stream st[3];

static struct elv_queue *open_noop(void)
{
	struct elv_queue *q;

	assert_true(elv_queue_size(&elv_policy_noop, NULL) <= sizeof(mem));
	assert_int_equal(elv_queue_init(&q, mem, sizeof(mem), &elv_policy_noop, NULL), 0);
	return q;
}

static void add_read(struct elv_queue *q, struct elv_request *r, uint64_t sector, uint64_t now)
{
	assert_int_equal(elv_add(q, test_rq(r, sector, 8, ELV_OP_READ, ELV_RQ_NOMERGE), now), 0);
}

static void test_null_queue(void **state)
{
	(void)state;
	assert_int_equal(elv_queue_nr_requeued(NULL), 0);
	assert_null(elv_queue_requeued_next(NULL, NULL));
	assert_null(elv_queue_stream_next(NULL, NULL));
	assert_int_equal(elv_idle_since(NULL), 0);
}

/* The head and the functions report the same numbers at every step of a request's life. */
static void test_head_and_requeue_walk(void **state)
{
	struct elv_queue *q = open_noop();
	const struct elv_queue_head *h = elv_queue_head(q);
	struct elv_request *a, *b;

	(void)state;
	assert_ptr_equal(h->data, elv_queue_data(q));
	add_read(q, &rq[0], 1000, 10);
	add_read(q, &rq[1], 2000, 20);
	add_read(q, &rq[2], 3000, 30);
	assert_int_equal(h->nr_queued, 3);
	assert_int_equal(h->nr_queued, elv_queue_nr_queued(q));
	assert_int_equal(elv_dispatch(q, 40, 0, &a), 0);
	assert_int_equal(elv_dispatch(q, 40, 0, &b), 0);
	assert_int_equal(h->nr_in_flight, 2);
	assert_int_equal(h->nr_in_flight, elv_queue_nr_in_flight(q));
	assert_null(elv_queue_requeued_next(q, NULL));

	/* Requeued requests: first the one given back last (it goes out first). */
	assert_int_equal(elv_requeue(q, a, 50), 0);
	assert_int_equal(elv_requeue(q, b, 60), 0);
	assert_int_equal(h->nr_requeued, 2);
	assert_int_equal(elv_queue_nr_requeued(q), 2);
	assert_int_equal(h->nr_in_flight, 0);
	assert_ptr_equal(elv_queue_requeued_next(q, NULL), b);
	assert_ptr_equal(elv_queue_requeued_next(q, b), a);
	assert_null(elv_queue_requeued_next(q, a));
	/* A request that is not requeued has no "next" on that list. */
	assert_null(elv_queue_requeued_next(q, &rq[2]));

	while (elv_dispatch(q, 70, ELV_DISPATCH_FORCE, &a) == 0)
		assert_int_equal(elv_complete(q, a, 80), 0);
	assert_int_equal(h->nr_queued + h->nr_in_flight + h->nr_requeued, 0);
	assert_int_equal(elv_queue_exit(q), 0);
}

static void test_request_accessors(void **state)
{
	struct elv_queue *q = open_noop();
	struct elv_request *out;

	(void)state;
	elv_request_init(&rq[3]);
	assert_int_equal(elv_rq_state(&rq[3]), ELV_RQ_IDLE);
	add_read(q, &rq[0], 1000, 100);
	add_read(q, &rq[1], 5000, 200);
	assert_int_equal(elv_rq_state(&rq[0]), ELV_RQ_QUEUED);
	assert_int_equal(elv_rq_time(&rq[0]), 100);
	assert_int_equal(elv_rq_time(&rq[1]), 200);
	assert_int_equal(elv_rq_seq(&rq[1]) - elv_rq_seq(&rq[0]), 1);
	assert_true(elv_rq_seq_cmp(&rq[0], &rq[1]) < 0);
	/* The links are inside the request, and lead back to it. */
	assert_ptr_equal(elv_list_rq(elv_rq_fifo(&rq[0])), &rq[0]);
	assert_ptr_equal(elv_rb_rq(elv_rq_rb(&rq[1])), &rq[1]);
	/* Arrival inheritance copies time and sequence, nothing else. */
	rq[3].sector = 77;
	elv_rq_inherit_arrival(&rq[3], &rq[0]);
	assert_int_equal(elv_rq_time(&rq[3]), 100);
	assert_int_equal(elv_rq_seq(&rq[3]), elv_rq_seq(&rq[0]));
	assert_int_equal(rq[3].sector, 77);
	assert_int_equal(elv_rq_state(&rq[3]), ELV_RQ_IDLE);

	assert_int_equal(elv_dispatch(q, 300, 0, &out), 0);
	assert_int_equal(elv_rq_state(out), ELV_RQ_DISPATCHED);
	assert_int_equal(elv_complete(q, out, 310), 0);
	assert_int_equal(elv_rq_state(out), ELV_RQ_IDLE);
	assert_int_equal(elv_dispatch(q, 320, 0, &out), 0);
	assert_int_equal(elv_complete(q, out, 330), 0);
	assert_int_equal(elv_queue_exit(q), 0);
}

static void test_streams(void **state)
{
	struct elv_queue *q = open_noop();
	struct elv_stream other = {0};
	struct elv_request *out;
	const char *p0;

	(void)state;
	assert_int_equal(elv_stream_init(q, &st[0], 1), 0);
	assert_int_equal(elv_stream_init(q, &st[1], 2), 0);
	/* Oldest first; a stream that is not registered here has no "next". */
	assert_ptr_equal(elv_queue_stream_next(q, NULL), &st[0]);
	assert_ptr_equal(elv_queue_stream_next(q, &st[0]), &st[1]);
	assert_null(elv_queue_stream_next(q, &st[1]));
	assert_null(elv_queue_stream_next(q, &other));
	assert_ptr_equal(elv_stream_queue(&st[0]), q);
	assert_null(elv_stream_queue(&other));

	/* The private area lies inside the stream, 8-byte aligned. */
	p0 = elv_stream_priv(&st[0]);
	assert_true(p0 > (const char *)&st[0]);
	assert_true(p0 + ELV_STREAM_PRIV_BYTES <= (const char *)(&st[0] + 1));
	assert_int_equal((uintptr_t)p0 % 8u, 0);

	/* The stream's count follows its request from add to completion. */
	assert_int_equal(elv_stream_nr_rq(&st[1]), 0);
	elv_request_init(&rq[0]);
	rq[0].sector = 64;
	rq[0].nr_sectors = 8;
	rq[0].op = ELV_OP_READ;
	rq[0].stream = &st[1];
	assert_int_equal(elv_add(q, &rq[0], 3), 0);
	assert_int_equal(elv_stream_nr_rq(&st[1]), 1);
	assert_int_equal(elv_dispatch(q, 4, 0, &out), 0);
	assert_int_equal(elv_stream_nr_rq(&st[1]), 1);
	assert_int_equal(elv_complete(q, out, 5), 0);
	assert_int_equal(elv_stream_nr_rq(&st[1]), 0);

	assert_int_equal(elv_stream_exit(q, &st[0], 6), 0);
	assert_ptr_equal(elv_queue_stream_next(q, NULL), &st[1]);
	assert_null(elv_stream_queue(&st[0]));
	assert_int_equal(elv_stream_exit(q, &st[1], 7), 0);
	assert_null(elv_queue_stream_next(q, NULL));
	assert_int_equal(elv_queue_exit(q), 0);
}

static void test_idle_since(void **state)
{
	struct elv_queue *q = open_noop();

	(void)state;
	assert_int_equal(elv_idle_since(q), 0);
	elv_idle_start(q, 12345);
	assert_true(elv_is_idling(q));
	assert_int_equal(elv_idle_since(q), 12345);
	elv_idle_stop(q, 12400);
	assert_false(elv_is_idling(q));
	assert_int_equal(elv_idle_since(q), 0);
	assert_int_equal(elv_queue_exit(q), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_null_queue),
		cmocka_unit_test(test_head_and_requeue_walk),
		cmocka_unit_test(test_request_accessors),
		cmocka_unit_test(test_streams),
		cmocka_unit_test(test_idle_since),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
