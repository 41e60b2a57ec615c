/*
 * The QoS stage's io.max throttle (Linux blk-throttle semantics, 100 ms slices, 1 ms tick):
 * the fact sheet's vectors A.2.7, its settings rules, and held requests through drain,
 * cancel and switch, under several policies, with elv_queue_check() after every step.
 */
#include "support/qos_sim.h"

static struct qsim S;

static void iomax(struct elv_throttle_settings *t, uint64_t rbps, uint64_t wbps, uint64_t riops,
		  uint64_t wiops)
{
	memset(t, 0, sizeof(*t));
	t->mode = ELV_THROTTLE_IOMAX;
	t->limit[ELV_THROTTLE_BPS_READ].avg = rbps;
	t->limit[ELV_THROTTLE_BPS_WRITE].avg = wbps;
	t->limit[ELV_THROTTLE_IOPS_READ].avg = riops;
	t->limit[ELV_THROTTLE_IOPS_WRITE].avg = wiops;
}

/*
 * A.2.7 #1: rbps=1048576, 4 KiB reads all queued at t=0: 25 pass at once (102400 <= 104857
 * allowed in the first slice), the next group at t = 101 ms (1 tick for the excess plus the
 * rest of the slice), then groups about every 100 ms; 255-256 reads per second.
 */
static void test_vector_rbps(void **state)
{
	struct elv_throttle_settings t;
	unsigned p, n;

	(void)state;
	iomax(&t, 1048576, 0, 0, 0);
	for (p = 0; p < QS_NR_POLICIES; p++) {
		qs_init_throttled(&S, qs_policies[p], &t);
		S.backlog[0] = 40;
		qs_run_fast(&S, 11 * (uint64_t)QS_SEC);
		assert_int_equal(qs_logged(&S, 0, 0, 1), 25);
		assert_int_equal(S.log_time[25], 101 * QS_MS);
		assert_true(qs_logged(&S, 0, 101 * QS_MS, 101 * QS_MS + 1) >= 25);
		/* Grants come in slice-sized steps: nothing between two slice boundaries. */
		assert_int_equal(qs_logged(&S, 0, 1, 101 * QS_MS), 0);
		n = qs_logged(&S, 0, QS_SEC, 11 * (uint64_t)QS_SEC);
		assert_true(n >= 2550 && n <= 2566);
		qs_fini(&S);
	}
}

/* A.2.7 #2: riops=100: 10 reads at t=0, 10 more at 100 ms, ...; exactly 100 per second. */
static void test_vector_riops(void **state)
{
	struct elv_throttle_settings t;
	unsigned p, k;

	(void)state;
	iomax(&t, 0, 0, 100, 0);
	for (p = 0; p < QS_NR_POLICIES; p++) {
		qs_init_throttled(&S, qs_policies[p], &t);
		S.backlog[0] = 30;
		qs_run_fast(&S, 10 * (uint64_t)QS_SEC);
		for (k = 0; k < 100; k++)
			assert_int_equal(qs_logged(&S, 0, k * 100 * QS_MS, k * 100 * QS_MS + 1), 10);
		assert_int_equal(qs_logged(&S, 0, 0, 10 * (uint64_t)QS_SEC), 1000);
		assert_int_equal(qs_logged(&S, 0, QS_SEC, 2 * (uint64_t)QS_SEC), 100);
		qs_fini(&S);
	}
}

/*
 * A.2.7 #3: a group with wbps=1 MiB/s and two unlimited member streams writing
 * continuously: together at most 1 MiB/s (plus the first slice's grant), taking turns, so
 * each gets about half.
 */
static void test_vector_parent_wbps(void **state)
{
	struct elv_throttle_settings t;
	uint64_t sum;
	unsigned p;

	(void)state;
	iomax(&t, 0, 1048576, 0, 0);
	for (p = 0; p < QS_NR_POLICIES; p++) {
		qs_init(&S, qs_policies[p], NULL);
		qs_group(&S, 0);
		qs_stream(&S, 0, 0, 1);
		qs_stream(&S, 1, 0, 0);
		S.op_each[0] = S.op_each[1] = ELV_OP_WRITE;
		S.backlog[0] = S.backlog[1] = 20;
		assert_int_equal(elv_qos_set_throttle(S.q, &S.cg[0], &t, 0), 0);
		qs_run_fast(&S, 10 * (uint64_t)QS_SEC);
		sum = S.bytes[0] + S.bytes[1];
		assert_true(sum <= 10 * 1048576ull + 104858 + 4096);
		assert_true(sum >= 10 * 1048576ull - 2 * 104858);
		assert_true(S.bytes[0] * 100 >= sum * 49 && S.bytes[0] * 100 <= sum * 51);
		qs_fini(&S);
	}
}

/* A.2.7 #4: a stream with riops=50 in a group with riops=100: at most 50 IOPS, even alone. */
static void test_vector_child_under_parent(void **state)
{
	struct elv_throttle_settings t;
	unsigned n;

	(void)state;
	qs_init(&S, &elv_policy_deadline, NULL);
	qs_group(&S, 0);
	qs_stream(&S, 0, 0, 1);
	iomax(&t, 0, 0, 100, 0);
	assert_int_equal(elv_qos_set_throttle(S.q, &S.cg[0], &t, 0), 0);
	iomax(&t, 0, 0, 50, 0);
	assert_int_equal(elv_qos_set_throttle(S.q, &S.cs[0], &t, 0), 0);
	S.backlog[0] = 20;
	qs_run_fast(&S, 10 * (uint64_t)QS_SEC);
	n = qs_logged(&S, 0, 0, 10 * (uint64_t)QS_SEC);
	assert_int_equal(n, 500);
	qs_fini(&S);
}

/*
 * A.2.7 #5: lower riops from 100 to 10 with 50 reads queued, 50 ms into the slice in which
 * 10 went: the 5 ops of debt earned at the old rate (5 allowed by 50 ms, 10 dispatched) are
 * carried over, not charged again at the new rate. The next read goes when 10 IOPS have
 * paid the debt and granted one more: 500 ms later (t = 550 ms). Recharging the 10 at 10
 * IOPS would give 1000 ms; forgetting them, 50 ms.
 */
static void test_vector_lower_limit(void **state)
{
	struct elv_throttle_settings t;
	unsigned p, k;

	(void)state;
	for (p = 0; p < QS_NR_POLICIES; p++) {
		iomax(&t, 0, 0, 100, 0);
		qs_init_throttled(&S, qs_policies[p], &t);
		for (k = 0; k < 60; k++)
			assert_int_equal(qs_add(&S, 0), 0);
		assert_int_equal(qs_flush(&S), 10);
		S.now = 50 * QS_MS;
		iomax(&t, 0, 0, 10, 0);
		assert_int_equal(elv_qos_set_throttle(S.q, &S.cs[0], &t, S.now), 0);
		qs_check(&S);
		qs_run_fast(&S, 2 * (uint64_t)QS_SEC);
		assert_int_equal(S.log_time[10], 550 * QS_MS);
		assert_int_equal(S.log_time[11], 650 * QS_MS);
		/* 10 per second from there on. */
		assert_int_equal(qs_logged(&S, 0, 550 * QS_MS, 1550 * QS_MS), 10);
		qs_fini(&S);
	}
}

/* Settings rules of the io.max mode: only the four per-direction averages. */
static void test_settings(void **state)
{
	struct elv_throttle_settings t, got;

	(void)state;
	iomax(&t, 1000, 0, 0, 0);
	qs_init_throttled(&S, &elv_policy_noop, &t);
	iomax(&t, 0, 0, 0, 0);
	t.limit[ELV_THROTTLE_BPS_TOTAL].avg = 10;
	assert_int_equal(elv_qos_set_throttle(S.q, &S.cs[0], &t, 0), ELV_EINVAL);
	iomax(&t, 10, 0, 0, 0);
	t.limit[ELV_THROTTLE_BPS_READ].max = 20;
	assert_int_equal(elv_qos_set_throttle(S.q, &S.cs[0], &t, 0), ELV_EINVAL);
	iomax(&t, 0, 0, 10, 0);
	t.iops_size = 4096;
	assert_int_equal(elv_qos_set_throttle(S.q, &S.cs[0], &t, 0), ELV_EINVAL);
	iomax(&t, 0, 0, (uint64_t)UINT32_MAX + 1, 0);
	assert_int_equal(elv_qos_set_throttle(S.q, &S.cs[0], &t, 0), ELV_ERANGE);
	iomax(&t, 0, ELV_THROTTLE_RATE_MAX + 1, 0, 0);
	assert_int_equal(elv_qos_set_throttle(S.q, &S.cs[0], &t, 0), ELV_ERANGE);
	assert_int_equal(elv_qos_get_throttle(S.q, &S.cs[0], &got), 0);
	iomax(&t, 1000, 0, 0, 0);
	assert_memory_equal(&got, &t, sizeof(t));
	qs_fini(&S);
}

/* A discard counts as one sector of write bytes; flushes pass untouched. */
static void test_discard_and_flush(void **state)
{
	struct elv_throttle_settings t;
	unsigned k;

	(void)state;
	iomax(&t, 0, 10240, 0, 0);
	qs_init_throttled(&S, &elv_policy_deadline, &t);
	for (k = 0; k < 3; k++)
		assert_int_equal(qs_add_op(&S, 0, ELV_OP_DISCARD, 1 << 20), 0);
	assert_int_equal(qs_flush(&S), 2); /* 512 bytes each: two fill the slice's 1024 */
	for (k = 0; k < 3; k++)
		assert_int_equal(qs_add_op(&S, 0, ELV_OP_FLUSH, 0), 0);
	assert_int_equal(qs_flush(&S), 3); /* flushes are not throttled */
	qs_fini(&S);
}

/* Held requests: counted, back from drain, cancellable, kept over a switch. */
static void test_held_lifecycle(void **state)
{
	struct elv_throttle_settings t;
	struct elv_stats st;
	unsigned p, k;

	(void)state;
	iomax(&t, 0, 0, 100, 0);
	for (p = 0; p < QS_NR_POLICIES; p++) {
		qs_init_throttled(&S, qs_policies[p], &t);
		for (k = 0; k < 30; k++)
			assert_int_equal(qs_add(&S, 0), 0);
		assert_int_equal(qs_flush(&S), 10);
		assert_int_equal(elv_next_event(S.q), 100 * QS_MS);
		assert_int_equal(elv_switch(S.q, qs_policies[(p + 1) % QS_NR_POLICIES], S.now), 0);
		qs_check(&S);
		assert_int_equal(elv_stats(S.q, &st), 0);
		assert_int_equal(st.queued, 20);
		assert_int_equal(elv_cancel(S.q, &S.pool[15].rq), 0);
		S.waiting[0]--;
		qs_free(&S.pool[15]);
		qs_check(&S);
		S.now = 100 * QS_MS;
		assert_int_equal(qs_flush(&S), 10);
		for (k = 1; k < S.nr_log; k++)
			if (qs_policies[(p + 1) % QS_NR_POLICIES] == &elv_policy_noop)
				assert_true(S.log_sector[k] > S.log_sector[k - 1]);
		S.drained = 0;
		assert_int_equal(elv_drain(S.q, qs_drain_fn, &S), 9);
		assert_int_equal(S.drained, 9);
		qs_check(&S);
		qs_fini(&S);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vector_rbps),
		cmocka_unit_test(test_vector_riops),
		cmocka_unit_test(test_vector_parent_wbps),
		cmocka_unit_test(test_vector_child_under_parent),
		cmocka_unit_test(test_vector_lower_limit),
		cmocka_unit_test(test_settings),
		cmocka_unit_test(test_discard_and_flush),
		cmocka_unit_test(test_held_lifecycle),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
