/*
 * The QoS stage's mClock scheduler: the fact sheet's vectors A.3.9 on a device that completes
 * one request per ms with every client backlogged, the limit choices (wait, allow, reject),
 * the idle-client adjustment, settings rules and run-time changes, request cost, and held
 * requests through drain, cancel and switch, with elv_queue_check() after every step.
 */
#include "support/qos_sim.h"

static struct qsim S;

struct client {
	uint64_t r, w, l;
};

static const struct elv_policy *const policies[] = { &elv_policy_noop, &elv_policy_deadline };

/* Streams 0..n-1 as mClock clients (r, w, l) under @p, each keeping 4 requests waiting. */
static void clients(const struct elv_policy *p, const struct elv_qos_settings *set,
		    const struct client *c, int n)
{
	struct elv_mclock_settings m = { 0 };
	int i;

	qs_init(&S, p, set);
	for (i = 0; i < n; i++) {
		qs_stream(&S, i, -1, 1);
		m.reservation = c[i].r;
		m.weight = (uint32_t)c[i].w;
		m.limit = c[i].l;
		assert_int_equal(elv_qos_set_mclock(S.q, &S.cs[i], &m, 0), 0);
		S.backlog[i] = 4;
	}
	qs_check(&S);
}

/* Each client's dispatches over 10 s at 1000 per second are within 1 % of @want per s. */
static void expect_rates(const uint64_t *want, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		uint64_t got = S.count[i], exp = want[i] * 10;

		if (got * 100 < exp * 99 || got * 100 > exp * 101)
			fail_msg("client %d: %llu requests in 10 s, expected %llu", i,
				 (unsigned long long)got, (unsigned long long)exp);
	}
}

/* A.3.9, the table: the allocation each row predicts, within 1 %. */
static void test_vector_table(void **state)
{
	static const struct {
		struct client c[3];
		int n;
		uint64_t want[3];
	} rows[] = {
		{ { { 500, 1, 0 }, { 0, 1, 0 }, { 0, 1, 0 } }, 3, { 500, 250, 250 } },
		{ { { 250, 1, 0 }, { 0, 2, 0 }, { 0, 2, 0 } }, 3, { 250, 375, 375 } },
		{ { { 0, 1, 0 }, { 0, 1, 100 }, { 0, 1, 0 } }, 3, { 450, 100, 450 } },
		{ { { 0, 1, 0 }, { 0, 3, 0 } }, 2, { 250, 750 } },
		{ { { 300, 1, 0 }, { 300, 1, 0 }, { 0, 8, 0 } }, 3, { 300, 300, 400 } },
		{ { { 0, 1, 200 } }, 1, { 200 } },
	};
	unsigned r, p;

	(void)state;
	for (p = 0; p < sizeof(policies) / sizeof(policies[0]); p++) {
		for (r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
			clients(policies[p], NULL, rows[r].c, rows[r].n);
			qs_run_server(&S, QS_MS, 10000);
			expect_rates(rows[r].want, rows[r].n);
			qs_fini(&S);
		}
	}
}

/* A.3.9: one client (0, 1, 200) with ELV_QOS_AT_LIMIT_ALLOW gets the whole device. */
static void test_vector_allow(void **state)
{
	static const struct client c = { 0, 1, 200 };
	static const uint64_t want = 1000;
	struct elv_qos_settings set = { 0 };
	struct elv_qos_client_stats st;

	(void)state;
	set.at_limit = ELV_QOS_AT_LIMIT_ALLOW;
	clients(&elv_policy_cfq, &set, &c, 1);
	qs_run_server(&S, QS_MS, 10000);
	expect_rates(&want, 1);
	assert_int_equal(elv_qos_client_stats(S.q, &S.cs[0], &st), 0);
	/* Served past the limit, the limit tag keeps moving 5 ms per request while the clock
	 * moves 1 ms: after the first few, every request goes past the limit. */
	assert_int_equal(st.weight + st.over_limit + st.reservation, S.count[0]);
	assert_true(st.over_limit >= 9900);
	qs_fini(&S);
}

/*
 * A.3.9: (0, 1, 200) with ELV_QOS_AT_LIMIT_REJECT and threshold 0, ten offers at t0 = 100 s:
 * one admitted, nine refused with ELV_EAGAIN, each refusal still moving the limit tag 5 ms
 * on, so the next offer is admitted only from t0 + 50 ms.
 */
static void test_vector_reject(void **state)
{
	static const struct client c = { 0, 1, 200 };
	struct elv_qos_settings set = { 0 };
	struct elv_qos_client_stats st;
	uint64_t t0 = 100 * (uint64_t)QS_SEC, qnow;
	int late, k;

	(void)state;
	set.at_limit = ELV_QOS_AT_LIMIT_REJECT;
	for (late = 0; late < 2; late++) {
		clients(&elv_policy_deadline, &set, &c, 1);
		S.backlog[0] = 0;
		S.now = t0;
		assert_int_equal(qs_add(&S, 0), 0);
		qnow = S.q->now;
		for (k = 0; k < 9; k++) {
			S.now = t0 + (uint64_t)k; /* a refusal moves no clock either */
			assert_int_equal(qs_add(&S, 0), ELV_EAGAIN);
			assert_int_equal(S.q->now, qnow);
		}
		S.now = t0;
		assert_int_equal(elv_qos_client_stats(S.q, &S.cs[0], &st), 0);
		assert_int_equal(st.rejected, 9);
		assert_int_equal(qs_flush(&S), 1);
		S.now = t0 + 50 * QS_MS - (late ? 0 : 1);
		assert_int_equal(qs_add(&S, 0), late ? 0 : ELV_EAGAIN);
		qs_fini(&S);
	}
}

/*
 * A client that comes back after being idle starts level with the others: it neither waits
 * until its weight tags catch up nor takes the device until they do.
 */
static void test_idle_client(void **state)
{
	static const struct client c[2] = { { 0, 1, 0 }, { 0, 1, 0 } };
	struct elv_qos_settings set = { 0 };
	uint64_t a, b;

	(void)state;
	set.idle_age_ns = QS_SEC;
	clients(&elv_policy_noop, &set, c, 2);
	S.backlog[1] = 0;
	/* Client 0 alone for 5 s: its weight tag runs 5000 s ahead of the clock. */
	qs_run_server(&S, QS_MS, 5000);
	assert_int_equal(S.count[1], 0);
	a = S.count[0];
	S.backlog[1] = 4;
	qs_run_server(&S, QS_MS, 1000);
	b = S.count[0] - a;
	assert_true(b >= 495 && b <= 505);
	assert_true(S.count[1] >= 495 && S.count[1] <= 505);
	qs_fini(&S);
}

/* Weights changed at run time take effect from the next tags; bad settings change nothing. */
static void test_settings(void **state)
{
	static const struct client c[2] = { { 0, 1, 0 }, { 0, 1, 0 } };
	struct elv_mclock_settings m = { 0 }, got, good = { 0, 0, 3, 0 };
	uint64_t c0, c1;

	(void)state;
	clients(&elv_policy_deadline, NULL, c, 2);
	qs_run_server(&S, QS_MS, 2000);
	assert_true(S.count[0] >= 990 && S.count[0] <= 1010);
	assert_int_equal(elv_qos_set_mclock(S.q, &S.cs[1], &good, S.now), 0);
	/* The tags already given run out within a few requests; then 1:3. */
	qs_run_server(&S, QS_MS, 100);
	c0 = S.count[0];
	c1 = S.count[1];
	qs_run_server(&S, QS_MS, 4000);
	assert_true(S.count[0] - c0 >= 990 && S.count[0] - c0 <= 1010);
	assert_true(S.count[1] - c1 >= 2970 && S.count[1] - c1 <= 3030);

	m.weight = 0;
	assert_int_equal(elv_qos_set_mclock(S.q, &S.cs[1], &m, S.now), ELV_EINVAL);
	m.weight = 1;
	m.reservation = 200;
	m.limit = 100;
	assert_int_equal(elv_qos_set_mclock(S.q, &S.cs[1], &m, S.now), ELV_EINVAL);
	m.reservation = ELV_MCLOCK_RATE_MAX + 1;
	m.limit = 0;
	assert_int_equal(elv_qos_set_mclock(S.q, &S.cs[1], &m, S.now), ELV_ERANGE);
	m.reservation = 0;
	m.weight = ELV_MCLOCK_WEIGHT_MAX + 1;
	assert_int_equal(elv_qos_set_mclock(S.q, &S.cs[1], &m, S.now), ELV_ERANGE);
	m.weight = 1;
	m.reserved = 1;
	assert_int_equal(elv_qos_set_mclock(S.q, &S.cs[1], &m, S.now), ELV_EINVAL);
	assert_int_equal(elv_mclock_check(&m), ELV_EINVAL);
	assert_int_equal(elv_mclock_check(&good), 0);
	assert_int_equal(elv_qos_get_mclock(S.q, &S.cs[1], &got), 0);
	assert_memory_equal(&got, &good, sizeof(got));
	/* Not an mClock client any more while requests wait in its queue: refused. */
	assert_int_equal(elv_qos_set_mclock(S.q, &S.cs[1], NULL, S.now), ELV_EBUSY);
	qs_check(&S);
	qs_fini(&S);
}

/* A request costs 1 + bytes / cost_size: 8 KiB at cost_size 4096 is 3 units of a limit. */
static void test_cost(void **state)
{
	static const struct client c = { 0, 1, 300 };
	static const uint64_t want = 100;
	struct elv_qos_settings set = { 0 };
	struct elv_request rq = { 0 };

	(void)state;
	set.cost_size = 4096;
	clients(&elv_policy_noop, &set, &c, 1);
	rq.nr_sectors = 16;
	assert_int_equal(elv_qos_request_cost(S.q, &rq), 3);
	rq.nr_sectors = 1;
	assert_int_equal(elv_qos_request_cost(S.q, &rq), 1);
	S.bytes_each[0] = 8192;
	qs_run_server(&S, QS_MS, 10000);
	expect_rates(&want, 1);
	qs_fini(&S);
}

/* Throttle first, then mClock: a client capped at 100 IOPS leaves the rest to the other. */
static void test_throttle_then_mclock(void **state)
{
	static const struct client c[2] = { { 0, 1, 0 }, { 0, 1, 0 } };
	static const uint64_t want[2] = { 100, 900 };
	struct elv_throttle_settings t = { 0 };

	(void)state;
	clients(&elv_policy_deadline, NULL, c, 2);
	t.limit[ELV_THROTTLE_IOPS_TOTAL].avg = 100;
	assert_int_equal(elv_qos_set_throttle(S.q, &S.cs[0], &t, 0), 0);
	qs_run_server(&S, QS_MS, 10000);
	expect_rates(want, 2);
	qs_fini(&S);
}

/* The stage lets out at most depth requests into the policy and the device. */
static void test_depth(void **state)
{
	static const struct client c[2] = { { 0, 1, 0 }, { 0, 1, 0 } };
	struct elv_qos_settings set = { 0 };

	(void)state;
	set.depth = 4;
	clients(&elv_policy_cfq, &set, c, 2);
	S.backlog[0] = S.backlog[1] = 10;
	qs_refill(&S);
	assert_int_equal(elv_queue_nr_queued(S.q), 4);
	qs_run_server(&S, QS_MS, 100);
	assert_true(elv_queue_nr_queued(S.q) + elv_queue_nr_in_flight(S.q) <= 4);
	qs_fini(&S);
}

/*
 * A client alone, each request served before the next arrives (so none waits in mClock): its
 * phases follow the reservation tag R = max(t, R' + c / r) exactly, here kept in units of
 * 1 / r ns. Reservation 3 per second makes each step a third of a ns past a whole one;
 * requests cost 1 or 2 (cost_size 4096); a quarter of them arrive a ns before, at or after the
 * tag they would move to, the others after gaps, some longer than the idle age. Service
 * outside the reservation phase leaves R where it was. The phase counts survive the client
 * leaving mClock and coming back.
 */
static void test_direct_phases(void **state)
{
	static const struct client c = { 3, 1, 0 };
	static const uint64_t gaps[] = { 0, 1, 166666666, 166666667, 333333333,
					 333333334, 500000000, 3 * (uint64_t)QS_SEC };
	struct elv_mclock_settings m = { 3, 0, 1, 0 };
	struct elv_qos_settings set = { 0 };
	struct elv_qos_client_stats st, again;
	uint64_t r = c.r, tag = 0, next, lcg = 1, res = 0, wgt = 0;
	unsigned k;

	(void)state;
	set.cost_size = 4096;
	set.idle_age_ns = 2 * (uint64_t)QS_SEC;
	clients(&elv_policy_deadline, &set, &c, 1);
	S.backlog[0] = 0;
	for (k = 0; k < 20000; k++) {
		uint64_t cost;

		lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
		cost = 1 + ((lcg >> 40) & 1);
		next = tag + cost * QS_SEC;
		/* Every fourth request arrives a ns before, at or after its moved tag. */
		if (k && (lcg >> 33) % 4 == 0 && next / r + 1 >= S.now + (lcg >> 41) % 3)
			S.now = next / r + 1 - (lcg >> 41) % 3;
		else
			S.now += gaps[(lcg >> 35) % (sizeof(gaps) / sizeof(gaps[0]))];
		/* The first request is tagged t; then the tag moves on, never behind t. */
		if (!k)
			next = S.now * r;
		if (next / r < S.now)
			next = S.now * r;
		if (next / r <= S.now) {
			tag = next;
			res++;
		} else {
			wgt++;
		}
		assert_int_equal(qs_add_op(&S, 0, ELV_OP_READ, cost == 1 ? 2048 : 4096), 0);
		assert_int_equal(qs_flush(&S), 1);
	}
	assert_int_equal(elv_qos_client_stats(S.q, &S.cs[0], &st), 0);
	assert_int_equal(st.reservation, res);
	assert_int_equal(st.weight, wgt);
	assert_int_equal(st.over_limit, 0);
	assert_true(res > 1000 && wgt > 1000);
	assert_int_equal(elv_qos_set_mclock(S.q, &S.cs[0], NULL, S.now), 0);
	assert_int_equal(elv_qos_set_mclock(S.q, &S.cs[0], &m, S.now), 0);
	assert_int_equal(elv_qos_client_stats(S.q, &S.cs[0], &again), 0);
	assert_memory_equal(&again, &st, sizeof(st));
	qs_check(&S);
	qs_fini(&S);
}

/* Requests waiting in mClock: counted, kept over a switch, cancellable, back from drain. */
static void test_held_lifecycle(void **state)
{
	static const struct client c[2] = { { 100, 1, 0 }, { 0, 2, 0 } };
	struct elv_stats st;
	unsigned k, p;

	(void)state;
	for (p = 0; p < QS_NR_POLICIES; p++) {
		clients(qs_policies[p], NULL, c, 2);
		S.backlog[0] = S.backlog[1] = 6;
		qs_run_server(&S, QS_MS, 50);
		assert_int_equal(elv_stats(S.q, &st), 0);
		assert_int_equal(st.queued, 12);
		assert_int_equal(elv_switch(S.q, qs_policies[(p + 1) % QS_NR_POLICIES], S.now), 0);
		qs_check(&S);
		assert_int_equal(elv_stream_exit(S.q, &S.s[0], S.now), ELV_EBUSY);
		assert_int_equal(elv_qos_stream_detach(S.q, &S.s[1], S.now), ELV_EBUSY);
		for (k = 0; k < QS_POOL; k++) {
			struct qs_io *io = &S.pool[k];

			if (io->used && io->rq.ELV_PRIVATE(state) == ELV_RQ_HELD) {
				assert_int_equal(elv_cancel(S.q, &io->rq), 0);
				S.waiting[io->stream]--;
				qs_free(io);
				qs_check(&S);
				break;
			}
		}
		S.backlog[0] = S.backlog[1] = 0;
		S.drained = 0;
		assert_int_equal(elv_drain(S.q, qs_drain_fn, &S), 11);
		assert_int_equal(S.drained, 11);
		qs_check(&S);
		/* Afterwards the clients are served as before. */
		S.backlog[0] = S.backlog[1] = 4;
		qs_run_server(&S, QS_MS, 1000);
		qs_fini(&S);
	}
}

/*
 * A reservation given at run time to a client whose requests already wait in mClock counts
 * from its next release: (0, 1) and (0, 3) share 1:3, 250 and 750 a second; given a
 * reservation of 600, the first client gets its 600 (above its weight share) and the other
 * the remaining 400. Until then no client had a reservation, so no release looked at R.
 */
static void test_reservation_at_run_time(void **state)
{
	static const struct client c[2] = { { 0, 1, 0 }, { 0, 3, 0 } };
	static const uint64_t before[2] = { 250, 750 }, after[2] = { 600, 400 };
	struct elv_mclock_settings m = { 600, 0, 1, 0 };
	struct elv_qos_settings set = { 0 };
	struct elv_qos_client_stats st;

	(void)state;
	set.depth = 1;
	clients(&elv_policy_deadline, &set, c, 2);
	qs_run_server(&S, QS_MS, 10000);
	expect_rates(before, 2);
	assert_int_equal(elv_qos_client_stats(S.q, &S.cs[0], &st), 0);
	assert_int_equal(st.reservation, 0);
	assert_true(st.held_mclock > 0); /* given while its requests wait */
	assert_int_equal(elv_qos_set_mclock(S.q, &S.cs[0], &m, S.now), 0);
	qs_check(&S);
	S.count[0] = S.count[1] = 0;
	qs_run_server(&S, QS_MS, 10000);
	expect_rates(after, 2);
	assert_int_equal(elv_qos_client_stats(S.q, &S.cs[0], &st), 0);
	assert_true(st.reservation >= 5990);
	qs_fini(&S);
}

/*
 * A client with one request at a time, the next added as soon as the last one goes, leaves
 * mClock after each release. Released in the weight phase, its request still counts toward
 * the reservation (the credit, taken when the next request is tagged): so R moves on only
 * with reservation-phase releases, R' + c / r each, and those come at exactly the
 * reservation rate while the weight share is larger. Here (r, 1) against (0, 1): half the
 * device each, 500 a second, of which r / c (250) in the reservation phase; with requests of
 * 2 units (cost_size 4096, 4 KiB) and r = 500 units per second, the same. Then the
 * reservation drops to half while the client is between requests: 125 a second from there.
 */
static void test_credit_between_requests(void **state)
{
	struct client c[2] = { { 250, 1, 0 }, { 0, 1, 0 } };
	struct elv_qos_settings set = { 0 };
	struct elv_qos_client_stats st;
	struct elv_mclock_settings m = { 0, 0, 1, 0 };
	uint64_t res, all;
	int units;

	(void)state;
	set.depth = 1;
	for (units = 1; units <= 2; units++) {
		set.cost_size = units == 1 ? 0 : 4096;
		c[0].r = 250 * (uint64_t)units;
		clients(&elv_policy_deadline, &set, c, 2);
		S.backlog[0] = 1;
		qs_run_server(&S, QS_MS, 10000);
		assert_int_equal(elv_qos_client_stats(S.q, &S.cs[0], &st), 0);
		assert_true(S.count[0] >= 4990 && S.count[0] <= 5010);
		assert_true(st.reservation >= 2498 && st.reservation <= 2502);
		assert_int_equal(st.reservation + st.weight, S.count[0]);
		/* Between two requests: its last one gone, the next not yet added. */
		S.backlog[0] = 0;
		while (S.waiting[0])
			qs_run_server(&S, QS_MS, 1);
		m.reservation = 125 * (uint64_t)units;
		assert_int_equal(elv_qos_set_mclock(S.q, &S.cs[0], &m, S.now), 0);
		S.backlog[0] = 1;
		res = st.reservation;
		all = S.count[0];
		qs_run_server(&S, QS_MS, 10000);
		assert_int_equal(elv_qos_client_stats(S.q, &S.cs[0], &st), 0);
		assert_true(S.count[0] - all >= 4990 && S.count[0] - all <= 5010);
		assert_true(st.reservation - res >= 1248 && st.reservation - res <= 1252);
		qs_fini(&S);
	}
}

/*
 * The stage sends a stream's request straight to mClock only while nothing else applies,
 * and settings changed at run time change that: a throttle added holds requests (and those
 * behind them wait, in order, even once the throttle is gone); the queue switched to
 * refusing at the limit refuses; switched back, it holds them again.
 */
static void test_route_changes(void **state)
{
	static const struct client c = { 0, 1, 100 };
	struct elv_throttle_settings t = { 0 };
	struct elv_qos_settings set = { 0 };
	unsigned k;
	int i;

	(void)state;
	clients(&elv_policy_noop, NULL, &c, 1);
	S.backlog[0] = 0;
	t.limit[ELV_THROTTLE_IOPS_TOTAL].avg = 10;
	assert_int_equal(elv_qos_set_throttle(S.q, &S.cs[0], &t, S.now), 0);
	for (i = 0; i < 5; i++)
		assert_int_equal(qs_add(&S, 0), 0);
	/* The throttle lets one go at once; the others wait for it. */
	assert_int_equal(qs_flush(&S), 1);
	assert_int_equal(elv_qos_set_throttle(S.q, &S.cs[0], NULL, S.now), 0);
	for (i = 0; i < 3; i++)
		assert_int_equal(qs_add(&S, 0), 0);
	S.now += QS_SEC;
	qs_run_fast(&S, S.now + 10 * (uint64_t)QS_SEC);
	assert_int_equal(S.count[0], 8);
	for (k = 1; k < S.nr_log; k++)
		assert_true(S.log_sector[k] > S.log_sector[k - 1]);
	/* Refusing at the limit, threshold 0: of two at once, the second is refused. */
	set.at_limit = ELV_QOS_AT_LIMIT_REJECT;
	assert_int_equal(elv_qos_set(S.q, &set, S.now), 0);
	assert_int_equal(qs_add(&S, 0), 0);
	assert_int_equal(qs_add(&S, 0), ELV_EAGAIN);
	set.at_limit = ELV_QOS_AT_LIMIT_WAIT;
	assert_int_equal(elv_qos_set(S.q, &set, S.now), 0);
	assert_int_equal(qs_add(&S, 0), 0);
	qs_check(&S);
	qs_fini(&S);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vector_table),
		cmocka_unit_test(test_vector_allow),
		cmocka_unit_test(test_vector_reject),
		cmocka_unit_test(test_idle_client),
		cmocka_unit_test(test_settings),
		cmocka_unit_test(test_cost),
		cmocka_unit_test(test_throttle_then_mclock),
		cmocka_unit_test(test_depth),
		cmocka_unit_test(test_direct_phases),
		cmocka_unit_test(test_held_lifecycle),
		cmocka_unit_test(test_reservation_at_run_time),
		cmocka_unit_test(test_credit_between_requests),
		cmocka_unit_test(test_route_changes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
