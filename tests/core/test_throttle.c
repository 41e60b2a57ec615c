/*
 * The QoS stage's leaky-bucket throttle (QEMU's semantics): the fact sheet's vectors A.1.7,
 * its validation rules, groups sharing one bucket in turns, settings changed at run time, and
 * held requests through drain, cancel and switch, under several policies, with
 * elv_queue_check() after every step.
 */
#include "support/qos_sim.h"
#include "qos_internal.h"

static struct qsim S;

static void set_limit(struct elv_throttle_settings *t, int k, uint64_t avg, uint64_t max,
		      uint32_t len)
{
	t->limit[k].avg = avg;
	t->limit[k].max = max;
	t->limit[k].max_length = len;
}

/*
 * A.1.7 #1: bps-total=1000000, 4096-byte requests all submitted at t=0: 25 pass at once
 * (the level, 102400, is then above the 100000 allowance), the 26th at 2.4 ms, the 27th at
 * 6.496 ms, then one every 4.096 ms.
 */
static void test_vector_bps_total(void **state)
{
	struct elv_throttle_settings t = { 0 };
	unsigned p, k;

	(void)state;
	set_limit(&t, ELV_THROTTLE_BPS_TOTAL, 1000000, 0, 0);
	for (p = 0; p < QS_NR_POLICIES; p++) {
		qs_init_throttled(&S, qs_policies[p], &t);
		for (k = 0; k < 40; k++)
			assert_int_equal(qs_add(&S, 0), 0);
		qs_run_fast(&S, QS_SEC);
		assert_int_equal(S.nr_log, 40);
		for (k = 0; k < 25; k++)
			assert_int_equal(S.log_time[k], 0);
		assert_int_equal(S.log_time[25], 2400000);
		assert_int_equal(S.log_time[26], 6496000);
		for (k = 27; k < 40; k++)
			assert_int_equal(S.log_time[k] - S.log_time[k - 1], 4096000);
		qs_fini(&S);
	}
}

/*
 * A.1.7 #2: iops-total=100, max 2000 for 60 s, continuous demand: about 2000 IOPS until the
 * 120000-op bucket fills at 1900/s (t = 63.0-63.2 s), then 100 IOPS.
 */
static void test_vector_burst(void **state)
{
	struct elv_throttle_settings t = { 0 };
	uint64_t end_burst = 0, last = 0;
	struct elv_request *rq;

	(void)state;
	set_limit(&t, ELV_THROTTLE_IOPS_TOTAL, 100, 2000, 60);
	qs_init_throttled(&S, &elv_policy_deadline, &t);
	S.backlog[0] = 4;
	qs_refill(&S);
	/* Follow the dispatches one by one to find where the gaps turn from 0.5 to 10 ms. */
	while (S.now < 80 * (uint64_t)QS_SEC) {
		while (elv_dispatch(S.q, S.now, ELV_DISPATCH_FORCE, &rq) == 0) {
			qs_note(&S, rq);
			assert_int_equal(elv_complete(S.q, rq, S.now), 0);
			qs_free(elv_container_of(rq, struct qs_io, rq));
			qs_check(&S);
			if (!end_burst && last && S.now - last > 5 * QS_MS)
				end_burst = last;
			last = S.now;
			qs_refill(&S);
		}
		S.now = elv_next_event(S.q);
	}
	assert_true(end_burst >= 63000 * QS_MS && end_burst <= 63200 * QS_MS);
	/* 2000 IOPS during the burst: t = 0 .. 63.1 s admits about 126200. */
	assert_true(S.count[0] >= 125000 && S.count[0] <= 128500);
	qs_fini(&S);
}

/* Dispatches of stream 0 in [from, to) with a continuous demand: the meter's rate. */
static uint64_t rate_between(uint64_t from, uint64_t to)
{
	uint64_t c0;

	qs_run_fast(&S, from);
	c0 = S.count[0];
	qs_run_fast(&S, to);
	return S.count[0] - c0;
}

/* Same vector, steady state: 2000 IOPS in [10 s, 20 s), 100 IOPS in [70 s, 80 s). */
static void test_vector_burst_rates(void **state)
{
	struct elv_throttle_settings t = { 0 };
	uint64_t n;

	(void)state;
	set_limit(&t, ELV_THROTTLE_IOPS_TOTAL, 100, 2000, 60);
	qs_init_throttled(&S, &elv_policy_noop, &t);
	S.backlog[0] = 2;
	n = rate_between(10 * (uint64_t)QS_SEC, 20 * (uint64_t)QS_SEC);
	assert_true(n >= 19800 && n <= 20200);
	n = rate_between(70 * (uint64_t)QS_SEC, 80 * (uint64_t)QS_SEC);
	assert_true(n >= 990 && n <= 1010);
	qs_fini(&S);
}

/*
 * A.1.7 #3: iops-total=100 with iops-size=4096: an 8 KiB request counts 2 ops, 6 KiB 1.5,
 * 1 KiB 1 (the bucket's level after one request, in ns at 100 ops/s); 100 s of back-to-back
 * 8 KiB requests admit about 5000.
 */
static void test_vector_iops_size(void **state)
{
	static const struct {
		uint64_t bytes, level_ns;
	} v[] = { { 8192, 20000000 }, { 6144, 15000000 }, { 1024, 10000000 } };
	struct elv_throttle_settings t = { 0 };
	static const uint32_t none[2];
	struct elv_thr th;
	unsigned k;
	uint64_t n;

	(void)state;
	set_limit(&t, ELV_THROTTLE_IOPS_TOTAL, 100, 0, 0);
	t.iops_size = 4096;
	for (k = 0; k < sizeof(v) / sizeof(v[0]); k++) {
		memset(&th, 0, sizeof(th));
		elv_thr_apply(&th, &t, 1000, none, 100 * QS_MS, QS_MS);
		assert_int_equal(elv_thr_wait(&th, ELV_DIR_READ, v[k].bytes, 1000, 0), 0);
		elv_thr_charge(&th, ELV_DIR_READ, v[k].bytes, 1000);
		assert_int_equal(th.u.b[ELV_THROTTLE_IOPS_TOTAL].lv[0].tat - 1000, v[k].level_ns);
		assert_int_equal(elv_thr_check(&th), 0);
	}
	qs_init_throttled(&S, &elv_policy_cfq, &t);
	S.bytes_each[0] = 8192;
	S.backlog[0] = 4;
	qs_run_fast(&S, 100 * (uint64_t)QS_SEC);
	n = S.count[0];
	assert_true(n >= 4995 && n <= 5010);
	qs_fini(&S);
}

/*
 * Sizes that change from one request to the next, in either direction, each fill the buckets
 * with their own cost, remainders carried exactly: at 3 bytes/s, 512, 1024 and 512 bytes are
 * 2048 e9 / 3 ns (682666666666 ns and 2/3), and at 7 ops/s three operations 3 e9 / 7 ns
 * (428571428 ns and 4/7), whatever their sizes.
 */
static void test_size_changes(void **state)
{
	static const uint64_t bytes[] = { 512, 1024, 512 };
	struct elv_throttle_settings t = { 0 };
	static const uint32_t none[2];
	const struct elv_thr_bucket *b;
	struct elv_thr th;
	unsigned k;

	(void)state;
	set_limit(&t, ELV_THROTTLE_BPS_TOTAL, 3, 0, 0);
	set_limit(&t, ELV_THROTTLE_IOPS_TOTAL, 7, 0, 0);
	memset(&th, 0, sizeof(th));
	elv_thr_apply(&th, &t, 0, none, 100 * QS_MS, QS_MS);
	for (k = 0; k < 3; k++) {
		elv_thr_charge(&th, k % 2 ? ELV_DIR_WRITE : ELV_DIR_READ, bytes[k], 0);
		assert_int_equal(elv_thr_check(&th), 0);
	}
	b = &th.u.b[ELV_THROTTLE_BPS_TOTAL];
	assert_int_equal(b->lv[0].tat, 682666666666ull);
	assert_int_equal(b->lv[0].frac, 2);
	b = &th.u.b[ELV_THROTTLE_IOPS_TOTAL];
	assert_int_equal(b->lv[0].tat, 428571428ull);
	assert_int_equal(b->lv[0].frac, 4);
}

/* A throttle applied at @now with 3 MB/s and 70 ops/s (both directions), its two buckets. */
static void take_setup(struct elv_thr *th, uint64_t now, const struct elv_thr_bucket **bps,
		       const struct elv_thr_bucket **ops)
{
	struct elv_throttle_settings t = { 0 };
	static const uint32_t none[2];

	set_limit(&t, ELV_THROTTLE_BPS_TOTAL, 3000000, 0, 0);
	set_limit(&t, ELV_THROTTLE_IOPS_TOTAL, 70, 0, 0);
	memset(th, 0, sizeof(*th));
	elv_thr_apply(th, &t, now, none, 100 * QS_MS, QS_MS);
	*bps = &th->u.b[ELV_THROTTLE_BPS_TOTAL];
	*ops = &th->u.b[ELV_THROTTLE_IOPS_TOTAL];
}

/*
 * Back-to-back 4 KiB requests, reads and writes in turn, at 3 MB/s and 70 ops/s: after i
 * of them the levels hold exactly i * 4096 e9 / 3e6 and i * 1e9 / 70 ns (remainders in
 * units of 1 / rate ns), whether a request finds the levels empty or partly full; the 8th
 * brings the operations level to 114285714 ns and 2/7, so the 9th waits 14285715 ns. Each
 * round starts a second later, with every level empty again.
 */
static void test_take_exact(void **state)
{
	const struct elv_thr_bucket *bps, *ops;
	struct elv_thr th;
	uint64_t now = 1000, i, w;
	unsigned round;

	(void)state;
	take_setup(&th, now, &bps, &ops);
	for (round = 0; round < 3; round++) {
		for (i = 1;; i++) {
			w = elv_thr_take(&th, i % 2 ? ELV_DIR_READ : ELV_DIR_WRITE, 4096, now);
			assert_int_equal(elv_thr_check(&th), 0);
			if (w)
				break;
			assert_int_equal(bps->lv[0].tat, now + i * 4096000000000ull / 3000000);
			assert_int_equal(bps->lv[0].frac, i * 4096000000000ull % 3000000);
			assert_int_equal(ops->lv[0].tat, now + i * 1000000000ull / 70);
			assert_int_equal(ops->lv[0].frac, i * 1000000000ull % 70);
		}
		assert_int_equal(i, 9);
		assert_int_equal(w, 14285715);
		now += QS_SEC;
	}
}

/*
 * As test_take_exact() with sizes that change from one request to the next (512, 1024,
 * 4096, 512, 8192, 1024 bytes), in both directions: the bytes level holds exactly their sum
 * times 1e9 / 3e6 ns, the operations level i * 1e9 / 70, on empty and on partly full levels.
 */
static void test_take_sizes(void **state)
{
	static const uint64_t bytes[] = { 512, 1024, 4096, 512, 8192, 1024 };
	const struct elv_thr_bucket *bps, *ops;
	uint64_t now = 1000, sum;
	struct elv_thr th;
	unsigned round, i;

	(void)state;
	take_setup(&th, now, &bps, &ops);
	for (round = 0; round < 3; round++) {
		for (i = 0, sum = 0; i < 6; i++) {
			sum += bytes[(i + round) % 6];
			assert_int_equal(elv_thr_take(&th, (i + round) % 3 ? ELV_DIR_READ
								       : ELV_DIR_WRITE,
						      bytes[(i + round) % 6], now),
					 0);
			assert_int_equal(elv_thr_check(&th), 0);
			assert_int_equal(bps->lv[0].tat, now + sum * 1000000000ull / 3000000);
			assert_int_equal(bps->lv[0].frac, sum * 1000000000ull % 3000000);
			assert_int_equal(ops->lv[0].tat, now + (i + 1) * 1000000000ull / 70);
			assert_int_equal(ops->lv[0].frac, (i + 1) * 1000000000ull % 70);
		}
		now += QS_SEC;
	}
}

/*
 * Three sizes in turn (4, 8, 16 KiB), reads and writes in turn, with a bytes limit per
 * direction (3 MB/s reads, 2 MB/s writes) and 70 ops/s in all: every request is a size not
 * kept, whose costs the read bucket needs when a write met it first, and the other way
 * round. Each level holds exactly its direction's bytes (or all the operations) so far.
 */
static void test_take_three_sizes(void **state)
{
	static const uint32_t none[2];
	struct elv_throttle_settings t = { 0 };
	const struct elv_thr_bucket *rd, *wr, *ops;
	uint64_t now = 1000, sum[2] = { 0, 0 }, b;
	struct elv_thr th;
	unsigned i;
	int dir;

	(void)state;
	set_limit(&t, ELV_THROTTLE_BPS_READ, 3000000, 0, 0);
	set_limit(&t, ELV_THROTTLE_BPS_WRITE, 2000000, 0, 0);
	set_limit(&t, ELV_THROTTLE_IOPS_TOTAL, 70, 0, 0);
	memset(&th, 0, sizeof(th));
	elv_thr_apply(&th, &t, now, none, 100 * QS_MS, QS_MS);
	rd = &th.u.b[ELV_THROTTLE_BPS_READ];
	wr = &th.u.b[ELV_THROTTLE_BPS_WRITE];
	ops = &th.u.b[ELV_THROTTLE_IOPS_TOTAL];
	for (i = 0; i < 7; i++) {
		dir = i % 2 ? ELV_DIR_WRITE : ELV_DIR_READ;
		b = 4096u << (i % 3);
		sum[dir == ELV_DIR_WRITE] += b;
		assert_int_equal(elv_thr_take(&th, dir, b, now), 0);
		assert_int_equal(elv_thr_check(&th), 0);
		assert_int_equal(rd->lv[0].tat, now + sum[0] * 1000000000ull / 3000000);
		assert_int_equal(rd->lv[0].frac, sum[0] * 1000000000ull % 3000000);
		assert_int_equal(wr->lv[0].tat, now + sum[1] * 1000000000ull / 2000000);
		assert_int_equal(wr->lv[0].frac, sum[1] * 1000000000ull % 2000000);
		assert_int_equal(ops->lv[0].tat, now + (i + 1) * 1000000000ull / 70);
		assert_int_equal(ops->lv[0].frac, (i + 1) * 1000000000ull % 70);
	}
}

/* Slot @s holds @size, with these costs in bucket @b's average level. */
static void assert_slot(const struct elv_thr *th, int s, uint64_t size,
			const struct elv_thr_bucket *b, uint64_t ns, uint64_t rem)
{
	assert_int_equal(th->size[s], size);
	assert_int_equal(b->lv[0].c[s].ns, ns);
	assert_int_equal(b->lv[0].c[s].rem, rem);
}

/*
 * The two sizes met last, either direction, keep their costs in the levels, at 3 MB/s and
 * 70 ops/s. One operation costs 1e9 / 70 = 14285714 ns and 20/70 whatever its size; bytes
 * cost 4096 e9 / 3e6 = 1365333 ns and 1e6/3e6 for 4 KiB, 2730666 and 2e6 for 8 KiB, 170666
 * and 2e6 for 512. Slot 0 is the one met last at first, so a read of 4 KiB takes slot 1, a
 * read of 8 KiB slot 0; a write of 4 KiB finds its costs in slot 1, which becomes the one met
 * last; a read of 512 then takes slot 0 (8 KiB, met longer ago), a write of 8 KiB slot 1 (4
 * KiB), and a read of 512 finds slot 0. The levels hold the sums exactly, all requests at
 * one instant.
 */
static void test_size_slots(void **state)
{
	static const struct {
		int dir;
		uint64_t bytes;
		uint8_t cur;
		uint64_t size[2];
	} rq[] = {
		{ ELV_DIR_READ, 4096, 1, { 0, 4096 } },	   { ELV_DIR_READ, 8192, 0, { 8192, 4096 } },
		{ ELV_DIR_WRITE, 4096, 1, { 8192, 4096 } }, { ELV_DIR_READ, 512, 0, { 512, 4096 } },
		{ ELV_DIR_WRITE, 8192, 1, { 512, 8192 } },  { ELV_DIR_READ, 512, 0, { 512, 8192 } },
	};
	static const uint64_t bns[3] = { 170666, 1365333, 2730666 }, brem[3] = { 2000000, 1000000,
										2000000 };
	const struct elv_thr_bucket *bps, *ops;
	uint64_t now = 5000, sum = 0;
	struct elv_thr th;
	unsigned i, s, n;

	(void)state;
	take_setup(&th, now, &bps, &ops);
	for (i = 0; i < 6; i++) {
		sum += rq[i].bytes;
		assert_int_equal(elv_thr_take(&th, rq[i].dir, rq[i].bytes, now), 0);
		assert_int_equal(elv_thr_check(&th), 0);
		assert_int_equal(bps->lv[0].tat, now + sum * 1000000000ull / 3000000);
		assert_int_equal(bps->lv[0].frac, sum * 1000000000ull % 3000000);
		assert_int_equal(ops->lv[0].tat, now + (i + 1) * 1000000000ull / 70);
		assert_int_equal(ops->lv[0].frac, (i + 1) * 1000000000ull % 70);
		assert_int_equal(th.cur, rq[i].cur);
		for (s = 0; s < 2; s++) {
			if (!rq[i].size[s]) {
				assert_int_equal(th.size[s], 0);
				continue;
			}
			n = rq[i].size[s] == 512 ? 0 : rq[i].size[s] == 4096 ? 1 : 2;
			assert_slot(&th, (int)s, rq[i].size[s], bps, bns[n], brem[n]);
			assert_slot(&th, (int)s, rq[i].size[s], ops, 14285714, 20);
		}
	}
}

/*
 * A size whose costs could carry a level past the horizon from below its allowance is not
 * kept, and does not push out a size that is: at 1000 bytes/s (allowance 100 ms) a read of
 * 4611686018427 bytes costs 4611686018427000000 ns, more than 2^62 - 100 ms. After reads of
 * 4 KiB (slot 1) and 8 KiB (slot 0) 20 s apart, each finding the level empty, the large read
 * 20 s later goes (the level is empty, it holds its cost exactly), its costs in slot 1 with
 * size 0; 8 KiB stays the size met last, and a read of it then waits for the large one's cost
 * less the allowance, 4611686018327000000 ns.
 */
static void test_size_too_large(void **state)
{
	static const uint32_t none[2];
	const uint64_t big = 4611686018427ull;
	struct elv_throttle_settings t = { 0 };
	const struct elv_thr_level *lv;
	uint64_t now = 1000;
	struct elv_thr th;

	(void)state;
	set_limit(&t, ELV_THROTTLE_BPS_TOTAL, 1000, 0, 0);
	memset(&th, 0, sizeof(th));
	elv_thr_apply(&th, &t, now, none, 100 * QS_MS, QS_MS);
	lv = &th.u.b[ELV_THROTTLE_BPS_TOTAL].lv[0];
	assert_int_equal(elv_thr_take(&th, ELV_DIR_READ, 4096, now), 0);
	now += 20 * QS_SEC;
	assert_int_equal(elv_thr_take(&th, ELV_DIR_READ, 8192, now), 0);
	now += 20 * QS_SEC;
	assert_int_equal(elv_thr_take(&th, ELV_DIR_READ, big, now), 0);
	assert_int_equal(elv_thr_check(&th), 0);
	assert_int_equal(lv->tat, now + big * 1000000);
	assert_int_equal(lv->frac, 0);
	assert_int_equal(th.cur, 0);
	assert_int_equal(th.size[0], 8192);
	assert_int_equal(lv->c[0].ns, 8192000000ull);
	assert_int_equal(th.size[1], 0);
	assert_int_equal(lv->c[1].ns, big * 1000000);
	assert_int_equal(elv_thr_take(&th, ELV_DIR_READ, 8192, now), 4611686018327000000ull);
	assert_int_equal(th.cur, 0);
	assert_int_equal(th.size[0], 8192);
	assert_int_equal(elv_thr_check(&th), 0);
}

/*
 * A bucket with a burst level, through elv_thr_take(): 3 MB/s on average, 6 MB/s for 2 s.
 * Back-to-back 4 KiB requests fill the average level by 4096 e9 / 3e6 ns each and the burst
 * level by 4096 e9 / 6e6 ns (remainders exact), the first from empty levels, the others from
 * partly full ones; the burst level passes its 100 ms allowance first: the 147th request
 * brings it to 100352000 ns exactly (it went at 99669333 ns and 1/3), so the 148th waits
 * 352000 ns, while the average level (200704000 ns) is far below its 4 s.
 */
static void test_take_burst(void **state)
{
	struct elv_throttle_settings t = { 0 };
	static const uint32_t none[2];
	const struct elv_thr_level *avg, *burst;
	struct elv_thr th;
	uint64_t now = 7000, i, w;

	(void)state;
	set_limit(&t, ELV_THROTTLE_BPS_TOTAL, 3000000, 6000000, 2);
	memset(&th, 0, sizeof(th));
	elv_thr_apply(&th, &t, now, none, 100 * QS_MS, QS_MS);
	avg = &th.u.b[ELV_THROTTLE_BPS_TOTAL].lv[0];
	burst = &th.u.b[ELV_THROTTLE_BPS_TOTAL].lv[1];
	for (i = 1;; i++) {
		w = elv_thr_take(&th, i % 2 ? ELV_DIR_READ : ELV_DIR_WRITE, 4096, now);
		assert_int_equal(elv_thr_check(&th), 0);
		if (w)
			break;
		assert_int_equal(avg->tat, now + i * 4096000000000ull / 3000000);
		assert_int_equal(avg->frac, i * 4096000000000ull % 3000000);
		assert_int_equal(burst->tat, now + i * 4096000000000ull / 6000000);
		assert_int_equal(burst->frac, i * 4096000000000ull % 6000000);
	}
	assert_int_equal(i, 148);
	assert_int_equal(w, 352000);
	assert_int_equal(burst->tat, now + 100352000);
	assert_int_equal(avg->tat, now + 200704000);
}

/*
 * A level stops at the horizon (H = 2^62 ns ahead) however large the request. At 1000
 * bytes/s a request of H / 1e6 bytes (rounded down) costs less than H but more than H - 100
 * ms, so a second one that finds the level 1 ns below its 100 ms allowance passes and would
 * carry it past the horizon: it stops there, and the next request waits H - 100 ms.
 */
static void test_horizon(void **state)
{
	const uint64_t horizon = 1ull << 62, cap = 100 * QS_MS;
	const uint64_t bytes = horizon / 1000000, cost = bytes * 1000000;
	struct elv_throttle_settings t = { 0 };
	static const uint32_t none[2];
	struct elv_thr th;
	uint64_t now = 5;

	(void)state;
	assert_true(cost > horizon - cap && cost <= horizon);
	set_limit(&t, ELV_THROTTLE_BPS_TOTAL, 1000, 0, 0);
	memset(&th, 0, sizeof(th));
	elv_thr_apply(&th, &t, now, none, 100 * QS_MS, QS_MS);
	assert_int_equal(elv_thr_take(&th, ELV_DIR_READ, bytes, now), 0);
	assert_int_equal(elv_thr_check(&th), 0);
	assert_int_equal(th.u.b[ELV_THROTTLE_BPS_TOTAL].lv[0].tat, now + cost);
	now += cost - cap + 1;
	assert_int_equal(elv_thr_take(&th, ELV_DIR_READ, bytes, now), 0);
	assert_int_equal(elv_thr_check(&th), 0);
	assert_int_equal(th.u.b[ELV_THROTTLE_BPS_TOTAL].lv[0].tat, now + horizon);
	assert_int_equal(elv_thr_take(&th, ELV_DIR_WRITE, 512, now), horizon - cap);
	assert_int_equal(elv_thr_check(&th), 0);
}

/*
 * A burst allowance stops at 2^60 ns, so that levels compare by difference. Reads at 1 B/s
 * with a burst of 1e15 B/s for a second may hold 1e24 ns, cut to 2^60; writes at 1000 B/s
 * hold 100 ms. A write of 2^43 bytes a second after the settings fills its level to the
 * horizon, H = 2^62 ns ahead, and calm_from to H - 100 ms ahead, while the read level, empty
 * since the settings, lies a second more than H + 2^60 behind it. With an allowance of H
 * that was more than 2^63 and the state seemed wrong; now a read still goes at once and a
 * write waits for the write level alone.
 */
static void test_allow_bound(void **state)
{
	const uint64_t horizon = 1ull << 62, cap = 100 * QS_MS;
	struct elv_throttle_settings t = { 0 };
	static const uint32_t none[2];
	static struct elv_thr thr;
	struct elv_thr *th = &thr;
	const struct elv_thr_level *rd = &thr.u.b[ELV_THROTTLE_BPS_READ].lv[0];
	uint64_t now = 5, filled;

	(void)state;
	set_limit(&t, ELV_THROTTLE_BPS_READ, 1, ELV_THROTTLE_RATE_MAX, 1);
	set_limit(&t, ELV_THROTTLE_BPS_WRITE, 1000, 0, 0);
	assert_int_equal(elv_thr_validate(&t), 0);
	memset(th, 0, sizeof(*th));
	elv_thr_apply(th, &t, now, none, 100 * QS_MS, QS_MS);
	assert_int_equal(rd->allow, 1ull << 60);
	assert_int_equal(th->drain_cap, 1ull << 60);
	now += QS_SEC;
	filled = now;
	assert_int_equal(elv_thr_take(th, ELV_DIR_WRITE, 1ull << 43, now), 0);
	assert_int_equal(th->u.b[ELV_THROTTLE_BPS_WRITE].lv[0].tat, filled + horizon);
	assert_int_equal(th->calm_from, filled + horizon - cap);
	assert_int_equal(elv_thr_check(th), 0);
	now += QS_SEC;
	assert_int_equal(elv_thr_check(th), 0);
	assert_int_equal(elv_thr_take(th, ELV_DIR_READ, 4096, now), 0);
	assert_int_equal(rd->tat, now + 4096ull * QS_SEC);
	assert_int_equal(elv_thr_check(th), 0);
	assert_int_equal(elv_thr_take(th, ELV_DIR_WRITE, 512, now),
			 filled + horizon - cap - now);
	assert_int_equal(elv_thr_check(th), 0);
}

/* A.1.7 #4: bps-read leaves writes alone; bps-total puts reads and writes in one bucket. */
static void test_vector_directions(void **state)
{
	struct elv_throttle_settings t = { 0 };
	unsigned p, k;

	(void)state;
	for (p = 0; p < QS_NR_POLICIES; p++) {
		memset(&t, 0, sizeof(t));
		set_limit(&t, ELV_THROTTLE_BPS_READ, 1000000, 0, 0);
		qs_init_throttled(&S, qs_policies[p], &t);
		for (k = 0; k < 40; k++)
			assert_int_equal(qs_add_op(&S, 0, ELV_OP_WRITE, 4096), 0);
		assert_int_equal(qs_flush(&S), 40); /* writes: no cap */
		for (k = 0; k < 40; k++)
			assert_int_equal(qs_add_op(&S, 0, ELV_OP_READ, 4096), 0);
		assert_int_equal(qs_flush(&S), 25); /* reads: 100000 bytes of allowance */
		qs_fini(&S);

		memset(&t, 0, sizeof(t));
		set_limit(&t, ELV_THROTTLE_BPS_TOTAL, 1000000, 0, 0);
		qs_init_throttled(&S, qs_policies[p], &t);
		for (k = 0; k < 20; k++)
			assert_int_equal(qs_add_op(&S, 0, ELV_OP_WRITE, 4096), 0);
		for (k = 0; k < 20; k++)
			assert_int_equal(qs_add_op(&S, 0, ELV_OP_READ, 4096), 0);
		assert_int_equal(qs_flush(&S), 25); /* 20 writes, 5 reads share the allowance */
		assert_int_equal(S.waiting[0], 15);
		qs_fini(&S);
	}
}

/* A.1.7 #5: every validation rule of A.1.2 refuses, and the old settings stay. */
static void test_vector_validation(void **state)
{
	struct elv_throttle_settings good = { 0 }, t, got;
	struct {
		int k;
		uint64_t avg, max;
		uint32_t len, iops_size;
		int k2;
		uint64_t avg2, max2;
		int err;
	} v[] = {
		/* total and per-direction of one kind */
		{ ELV_THROTTLE_BPS_TOTAL, 100, 0, 0, 0, ELV_THROTTLE_BPS_READ, 100, 0, ELV_EINVAL },
		{ ELV_THROTTLE_IOPS_TOTAL, 100, 0, 0, 0, ELV_THROTTLE_IOPS_WRITE, 100, 0, ELV_EINVAL },
		{ ELV_THROTTLE_IOPS_TOTAL, 100, 200, 0, 0, ELV_THROTTLE_IOPS_READ, 0, 200,
		  ELV_EINVAL },
		/* iops-size without an iops limit */
		{ ELV_THROTTLE_BPS_TOTAL, 100, 0, 0, 4096, -1, 0, 0, ELV_EINVAL },
		/* out of [0, 1e15] */
		{ ELV_THROTTLE_BPS_TOTAL, 1000000000000001ULL, 0, 0, 0, -1, 0, 0, ELV_ERANGE },
		{ ELV_THROTTLE_IOPS_READ, 100, 1000000000000001ULL, 0, 0, -1, 0, 0, ELV_ERANGE },
		/* max-length > 1 needs max; max needs avg; max >= avg */
		{ ELV_THROTTLE_IOPS_TOTAL, 100, 0, 2, 0, -1, 0, 0, ELV_EINVAL },
		{ ELV_THROTTLE_IOPS_TOTAL, 0, 100, 0, 0, -1, 0, 0, ELV_EINVAL },
		{ ELV_THROTTLE_IOPS_TOTAL, 100, 50, 0, 0, -1, 0, 0, ELV_EINVAL },
		{ ELV_THROTTLE_IOPS_TOTAL, 100, 200, ELV_THROTTLE_LENGTH_MAX + 1, 0, -1, 0, 0,
		  ELV_ERANGE },
	};
	unsigned k;

	(void)state;
	set_limit(&good, ELV_THROTTLE_IOPS_READ, 300, 600, 5);
	assert_int_equal(elv_throttle_check(&good), 0);
	qs_init_throttled(&S, &elv_policy_deadline, &good);
	for (k = 0; k < sizeof(v) / sizeof(v[0]); k++) {
		memset(&t, 0, sizeof(t));
		set_limit(&t, v[k].k, v[k].avg, v[k].max, v[k].len);
		if (v[k].k2 >= 0)
			set_limit(&t, v[k].k2, v[k].avg2, v[k].max2, 0);
		t.iops_size = v[k].iops_size;
		assert_int_equal(elv_throttle_check(&t), v[k].err);
		assert_int_equal(elv_qos_set_throttle(S.q, &S.cs[0], &t, 0), v[k].err);
		assert_int_equal(elv_qos_get_throttle(S.q, &S.cs[0], &got), 0);
		assert_memory_equal(&got, &good, sizeof(got));
		qs_check(&S);
	}
	/* Reserved fields and an unknown mode. */
	t = good;
	t.mode = 7;
	assert_int_equal(elv_qos_set_throttle(S.q, &S.cs[0], &t, 0), ELV_EINVAL);
	t = good;
	t.reserved[1] = 1;
	assert_int_equal(elv_qos_set_throttle(S.q, &S.cs[0], &t, 0), ELV_EINVAL);
	t = good;
	t.limit[2].reserved = 1;
	assert_int_equal(elv_qos_set_throttle(S.q, &S.cs[0], &t, 0), ELV_EINVAL);
	/* iops-size times an iops rate past 2^62 */
	memset(&t, 0, sizeof(t));
	set_limit(&t, ELV_THROTTLE_IOPS_TOTAL, 1000000000000000ULL, 0, 0);
	t.iops_size = 1u << 20;
	assert_int_equal(elv_qos_set_throttle(S.q, &S.cs[0], &t, 0), ELV_ERANGE);
	assert_int_equal(elv_qos_set_throttle(S.q, &S.cs[0], NULL, 0), 0);
	assert_int_equal(elv_qos_get_throttle(S.q, &S.cs[0], &got), 0);
	memset(&t, 0, sizeof(t));
	assert_memory_equal(&got, &t, sizeof(got));
	qs_fini(&S);
}

/*
 * A.1.5: two streams of one group share the group's bucket and take turns; a stream's own
 * limit applies too.
 */
static void test_group_turns(void **state)
{
	struct elv_throttle_settings t = { 0 };
	unsigned p, k;

	(void)state;
	set_limit(&t, ELV_THROTTLE_IOPS_TOTAL, 100, 0, 0);
	for (p = 0; p < QS_NR_POLICIES; p++) {
		qs_init(&S, qs_policies[p], NULL);
		qs_group(&S, 0);
		qs_stream(&S, 0, 0, 0);
		qs_stream(&S, 1, 0, 1);
		assert_int_equal(elv_qos_set_throttle(S.q, &S.cg[0], &t, 0), 0);
		S.backlog[0] = S.backlog[1] = 3;
		qs_run_fast(&S, 10 * (uint64_t)QS_SEC);
		/* 100 IOPS together (plus the 10-op allowance), half each. */
		assert_true(S.count[0] + S.count[1] >= 1000 && S.count[0] + S.count[1] <= 1011);
		assert_true(S.count[0] >= 498 && S.count[0] <= 508);
		/* Turns alternate once both wait. */
		for (k = 20; k < 60; k++)
			assert_int_not_equal(S.log_stream[k], S.log_stream[k + 1]);
		qs_fini(&S);
	}
	/* A stream's own cap below the group's. */
	qs_init(&S, &elv_policy_deadline, NULL);
	qs_group(&S, 0);
	qs_stream(&S, 0, 0, 1);
	assert_int_equal(elv_qos_set_throttle(S.q, &S.cg[0], &t, 0), 0);
	set_limit(&t, ELV_THROTTLE_IOPS_TOTAL, 20, 0, 0);
	assert_int_equal(elv_qos_set_throttle(S.q, &S.cs[0], &t, 0), 0);
	S.backlog[0] = 3;
	qs_run_fast(&S, 10 * (uint64_t)QS_SEC);
	assert_true(S.count[0] >= 200 && S.count[0] <= 203);
	qs_fini(&S);
}

/*
 * Settings changed with requests held: they stay, in order, and go at the new rate; the
 * buckets start empty (QEMU applies a configuration that way).
 */
static void test_runtime_change(void **state)
{
	struct elv_throttle_settings t = { 0 };
	struct elv_qos_client_stats st;
	unsigned k;

	(void)state;
	set_limit(&t, ELV_THROTTLE_IOPS_READ, 10, 0, 0);
	qs_init_throttled(&S, &elv_policy_noop, &t);
	for (k = 0; k < 30; k++)
		assert_int_equal(qs_add(&S, 0), 0);
	/* One op is 100 ms of level, the allowance 100 ms: the second still fits (not above). */
	assert_int_equal(qs_flush(&S), 2);
	assert_int_equal(elv_next_event(S.q), 0 + 100 * QS_MS);
	S.now = 50 * QS_MS;
	set_limit(&t, ELV_THROTTLE_IOPS_READ, 1000, 0, 0);
	assert_int_equal(elv_qos_set_throttle(S.q, &S.cs[0], &t, S.now), 0);
	qs_check(&S);
	assert_int_equal(elv_next_event(S.q), S.now); /* judged again at once */
	/* An empty bucket holds 100 ms worth of 1000 IOPS: all 28 go at once. */
	assert_int_equal(qs_flush(&S), 28);
	assert_int_equal(elv_qos_client_stats(S.q, &S.cs[0], &st), 0);
	assert_int_equal(st.admitted, 30);
	assert_int_equal(st.throttled, 28);
	assert_int_equal(st.held_throttle, 0);
	/* Arrival order kept: noop dispatches in the order the throttle let them go. */
	for (k = 1; k < S.nr_log; k++)
		assert_true(S.log_sector[k] > S.log_sector[k - 1]);
	/* Lower again with requests held: the next waits at the new rate from an empty bucket. */
	set_limit(&t, ELV_THROTTLE_IOPS_READ, 5, 0, 0);
	assert_int_equal(elv_qos_set_throttle(S.q, &S.cs[0], &t, S.now), 0);
	for (k = 0; k < 5; k++)
		assert_int_equal(qs_add(&S, 0), 0);
	assert_int_equal(qs_flush(&S), 1);
	assert_int_equal(elv_next_event(S.q), S.now + 100 * QS_MS);
	qs_fini(&S);
}

/* Held requests: in the counts, back from drain in order, cancellable, kept over a switch. */
static void test_held_lifecycle(void **state)
{
	struct elv_throttle_settings t = { 0 };
	struct elv_stats st;
	struct qs_io *io;
	unsigned p, k;

	(void)state;
	set_limit(&t, ELV_THROTTLE_BPS_TOTAL, 1000000, 0, 0);
	for (p = 0; p < QS_NR_POLICIES; p++) {
		qs_init_throttled(&S, qs_policies[p], &t);
		for (k = 0; k < 40; k++)
			assert_int_equal(qs_add(&S, 0), 0);
		assert_int_equal(elv_stats(S.q, &st), 0);
		assert_int_equal(st.queued, 40);
		assert_int_equal(qs_flush(&S), 25);
		assert_int_equal(elv_stats(S.q, &st), 0);
		assert_int_equal(st.queued, 15);
		/* The stream cannot go while it has held requests; neither can the client. */
		assert_int_equal(elv_stream_exit(S.q, &S.s[0], S.now), ELV_EBUSY);
		assert_int_equal(elv_qos_stream_detach(S.q, &S.s[0], S.now), ELV_EBUSY);
		assert_int_equal(elv_qos_detach(S.q, S.now), ELV_EBUSY);
		/* Switch: nothing lost, the held ones still wait for their time. */
		assert_int_equal(elv_switch(S.q, qs_policies[(p + 1) % QS_NR_POLICIES], S.now), 0);
		qs_check(&S);
		assert_int_equal(elv_stats(S.q, &st), 0);
		assert_int_equal(st.queued, 15);
		assert_int_equal(elv_next_event(S.q), 2400000);
		/* Cancel the head and one in the middle: the next one takes the head's time. */
		io = NULL;
		for (k = 0; k < QS_POOL; k++)
			if (S.pool[k].used && S.pool[k].rq.ELV_PRIVATE(state) == ELV_RQ_HELD) {
				io = &S.pool[k];
				break;
			}
		assert_non_null(io);
		assert_int_equal(elv_cancel(S.q, &io->rq), 0);
		S.waiting[0]--;
		qs_free(io);
		qs_check(&S);
		assert_int_equal(elv_cancel(S.q, &io->rq), ELV_EINVAL);
		assert_int_equal(elv_cancel(S.q, &S.pool[30].rq), 0);
		S.waiting[0]--;
		qs_free(&S.pool[30]);
		qs_check(&S);
		S.now = 2400000;
		assert_int_equal(qs_flush(&S), 1);
		/* Drain returns the 12 still held. */
		S.drained = 0;
		assert_int_equal(elv_drain(S.q, qs_drain_fn, &S), 12);
		assert_int_equal(S.drained, 12);
		qs_check(&S);
		assert_int_equal(elv_next_event(S.q), ELV_TIME_NEVER);
		qs_fini(&S);
	}
}

/* The held request of stream @i that is first in its FIFO (the oldest one held). */
static struct qs_io *first_held(int i)
{
	struct qs_io *best = NULL;
	unsigned k;

	for (k = 0; k < QS_POOL; k++) {
		struct qs_io *io = &S.pool[k];

		if (io->used && io->stream == i && io->rq.ELV_PRIVATE(state) == ELV_RQ_HELD &&
		    (!best || io->rq.sector < best->rq.sector))
			best = io;
	}
	assert_non_null(best);
	return best;
}

static void cancel_io(struct qs_io *io)
{
	assert_int_equal(elv_cancel(S.q, &io->rq), 0);
	S.waiting[io->stream]--;
	qs_free(io);
	qs_check(&S);
}

/*
 * Tops due at the same time all go then, not a nanosecond before; a client due in both
 * directions at once tries its read first, which here leaves its write (the same total
 * level) waiting for another op's time.
 */
static void test_due_order(void **state)
{
	struct elv_throttle_settings t = { 0 };
	const uint64_t base = (uint64_t)1 << 32; /* stream 0's first sector */
	int i, k;

	(void)state;
	set_limit(&t, ELV_THROTTLE_IOPS_TOTAL, 10, 0, 0);
	qs_init(&S, &elv_policy_noop, NULL);
	for (i = 0; i < 3; i++) {
		qs_stream(&S, i, -1, 1);
		assert_int_equal(elv_qos_set_throttle(S.q, &S.cs[i], &t, 0), 0);
	}
	S.op_each[1] = ELV_OP_WRITE;
	/* Two of each stream fit in the 100 ms allowance; the third waits 100 ms. */
	for (i = 0; i < 3; i++)
		for (k = 0; k < 3; k++)
			assert_int_equal(qs_add(&S, i), 0);
	assert_int_equal(qs_flush(&S), 6);
	assert_int_equal(elv_next_event(S.q), 100 * QS_MS);
	S.now = 100 * QS_MS - 1;
	assert_int_equal(qs_flush(&S), 0);
	S.now = 100 * QS_MS;
	assert_int_equal(qs_flush(&S), 3);
	assert_int_equal(elv_next_event(S.q), ELV_TIME_NEVER);
	qs_fini(&S);

	/* One client, a read and a write due at 100 ms (each request 8 sectors, 64 apart). */
	qs_init_throttled(&S, &elv_policy_noop, &t);
	assert_int_equal(qs_add_op(&S, 0, ELV_OP_READ, 4096), 0);
	assert_int_equal(qs_add_op(&S, 0, ELV_OP_WRITE, 4096), 0);
	assert_int_equal(qs_add_op(&S, 0, ELV_OP_READ, 4096), 0);
	assert_int_equal(qs_add_op(&S, 0, ELV_OP_WRITE, 4096), 0);
	assert_int_equal(qs_flush(&S), 2);
	assert_int_equal(elv_next_event(S.q), 100 * QS_MS);
	S.now = 100 * QS_MS;
	assert_int_equal(qs_flush(&S), 1);
	assert_int_equal(S.log_sector[2], base + 2 * 72);
	assert_int_equal(elv_next_event(S.q), 200 * QS_MS);
	S.now = 200 * QS_MS;
	assert_int_equal(qs_flush(&S), 1);
	assert_int_equal(S.log_sector[3], base + 3 * 72);
	qs_fini(&S);
}

/*
 * A client waiting in both directions, its levels shared (bytes in total) and its own per
 * direction (operations): a write waits for the total (25 ms), a read for its own level
 * (400 ms). At 500 ms both are due: the write goes, then the read, and only then does the
 * next write learn its wait, from the levels both filled: 25 ms (the read's share of the
 * total), not the 11 ms its own write level alone would ask.
 */
static void test_both_directions_due(void **state)
{
	struct elv_throttle_settings t = { 0 };
	const uint64_t base = (uint64_t)1 << 32; /* stream 0's first sector */

	(void)state;
	set_limit(&t, ELV_THROTTLE_BPS_TOTAL, 65536, 0, 0); /* 62.5 ms per 4 KiB */
	set_limit(&t, ELV_THROTTLE_IOPS_READ, 2, 0, 0);     /* 500 ms per read */
	set_limit(&t, ELV_THROTTLE_IOPS_WRITE, 9, 0, 0);    /* 111.1 ms per write */
	qs_init_throttled(&S, &elv_policy_noop, &t);
	assert_int_equal(qs_add_op(&S, 0, ELV_OP_READ, 4096), 0);
	assert_int_equal(qs_add_op(&S, 0, ELV_OP_READ, 4096), 0);
	assert_int_equal(qs_add_op(&S, 0, ELV_OP_WRITE, 4096), 0);
	assert_int_equal(qs_add_op(&S, 0, ELV_OP_WRITE, 4096), 0);
	assert_int_equal(qs_add_op(&S, 0, ELV_OP_WRITE, 4096), 0);
	assert_int_equal(qs_flush(&S), 2);
	assert_int_equal(elv_next_event(S.q), 25 * QS_MS);
	S.now = 500 * QS_MS;
	assert_int_equal(qs_flush(&S), 2);
	/* The second read and the second write (each request 8 sectors, 64 apart). */
	assert_true(S.log_sector[2] == base + 72 || S.log_sector[2] == base + 3 * 72);
	assert_int_equal(S.log_sector[2] + S.log_sector[3], 2 * base + 4 * 72);
	assert_int_equal(elv_next_event(S.q), 525 * QS_MS);
	qs_fini(&S);
}

/*
 * A top that lets a request go while its other direction is due tries again at once: its
 * ready time stays the stage's first, and another top, due later, keeps its turn after the
 * top's next wait.
 */
static void test_first_stays(void **state)
{
	struct elv_throttle_settings t = { 0 };
	int k;

	(void)state;
	set_limit(&t, ELV_THROTTLE_IOPS_TOTAL, 10, 0, 0);
	qs_init_throttled(&S, &elv_policy_noop, &t);
	qs_stream(&S, 1, -1, 1);
	assert_int_equal(elv_qos_set_throttle(S.q, &S.cs[1], &t, 0), 0);
	/* Stream 0: a read and a write go, two reads and a write wait for 100 ms. */
	assert_int_equal(qs_add_op(&S, 0, ELV_OP_READ, 4096), 0);
	assert_int_equal(qs_add_op(&S, 0, ELV_OP_WRITE, 4096), 0);
	assert_int_equal(qs_add_op(&S, 0, ELV_OP_READ, 4096), 0);
	assert_int_equal(qs_add_op(&S, 0, ELV_OP_READ, 4096), 0);
	assert_int_equal(qs_add_op(&S, 0, ELV_OP_WRITE, 4096), 0);
	assert_int_equal(qs_flush(&S), 2);
	/* Stream 1: two go, the third waits until 150 ms. */
	S.now = 50 * QS_MS;
	for (k = 0; k < 3; k++)
		assert_int_equal(qs_add(&S, 1), 0);
	assert_int_equal(qs_flush(&S), 2);
	assert_int_equal(elv_next_event(S.q), 100 * QS_MS);
	/* The read goes; the write, due too, fills the level no further: it waits again. */
	S.now = 100 * QS_MS;
	assert_int_equal(qs_flush(&S), 1);
	assert_int_equal(S.log_stream[S.nr_log - 1], 0);
	qs_check(&S);
	assert_int_equal(elv_next_event(S.q), 150 * QS_MS);
	S.now = 150 * QS_MS;
	assert_int_equal(qs_flush(&S), 1);
	assert_int_equal(S.log_stream[S.nr_log - 1], 1);
	qs_check(&S);
	assert_int_equal(elv_next_event(S.q), 200 * QS_MS);
	qs_fini(&S);
}

/*
 * The stage's earliest ready time through everything that moves a top's: a top that stops
 * waiting (cancel), one that starts waiting sooner, a cancelled head whose follower tries at
 * once, a try that finds its request must wait, and new settings (every top tries again).
 */
static void test_first_ready(void **state)
{
	struct elv_throttle_settings t = { 0 };
	int i, k;

	(void)state;
	set_limit(&t, ELV_THROTTLE_IOPS_TOTAL, 10, 0, 0);
	qs_init(&S, &elv_policy_deadline, NULL);
	for (i = 0; i < 2; i++) {
		qs_stream(&S, i, -1, 1);
		assert_int_equal(elv_qos_set_throttle(S.q, &S.cs[i], &t, 0), 0);
	}
	for (k = 0; k < 3; k++)
		assert_int_equal(qs_add(&S, 0), 0);
	assert_int_equal(qs_flush(&S), 2);
	S.now = 50 * QS_MS;
	for (k = 0; k < 3; k++)
		assert_int_equal(qs_add(&S, 1), 0);
	assert_int_equal(qs_flush(&S), 2);
	assert_int_equal(elv_next_event(S.q), 100 * QS_MS);
	/* Stream 0 stops waiting: stream 1's time is the first. */
	cancel_io(first_held(0));
	assert_int_equal(elv_next_event(S.q), 150 * QS_MS);
	/* Stream 0 waits again, sooner than stream 1 (its level: 200 ms at 0, 140 at 60). */
	S.now = 60 * QS_MS;
	assert_int_equal(qs_add(&S, 0), 0);
	assert_int_equal(elv_next_event(S.q), 100 * QS_MS);
	assert_int_equal(qs_add(&S, 0), 0);
	/* Its head cancelled, the one behind tries at once, and must wait as the head did. */
	cancel_io(first_held(0));
	assert_int_equal(elv_next_event(S.q), 60 * QS_MS);
	assert_int_equal(qs_flush(&S), 0);
	assert_int_equal(elv_next_event(S.q), 100 * QS_MS);
	/* New settings for one client: every waiting top tries again at once. */
	S.now = 70 * QS_MS;
	set_limit(&t, ELV_THROTTLE_IOPS_TOTAL, 20, 0, 0);
	assert_int_equal(elv_qos_set_throttle(S.q, &S.cs[1], &t, S.now), 0);
	qs_check(&S);
	assert_int_equal(elv_next_event(S.q), 70 * QS_MS);
	/* Stream 1's bucket starts empty: its request goes; stream 0's still waits. */
	assert_int_equal(qs_flush(&S), 1);
	assert_int_equal(S.log_stream[S.nr_log - 1], 1);
	assert_int_equal(elv_next_event(S.q), 100 * QS_MS);
	S.now = 100 * QS_MS;
	assert_int_equal(qs_flush(&S), 1);
	assert_int_equal(elv_next_event(S.q), ELV_TIME_NEVER);
	qs_fini(&S);
}

/* Attaching and detaching: idle queue only, one stage, clients on registered owners. */
static void test_attach_rules(void **state)
{
	struct elv_qos other;
	struct elv_qos_settings set = { 0 };
	struct elv_qos_client spare;
	struct elv_stream lone;

	(void)state;
	qs_init(&S, &elv_policy_noop, NULL);
	assert_int_equal(elv_qos_attach(S.q, &other, NULL, 0), ELV_EBUSY);
	assert_int_equal(elv_qos_attach(S.q, NULL, NULL, 0), ELV_EINVAL);
	qs_stream(&S, 0, -1, 1);
	memset(&lone, 0, sizeof(lone));
	memset(&spare, 0, sizeof(spare));
	assert_int_equal(elv_qos_stream_attach(S.q, &lone, &spare, 0), ELV_EINVAL);
	assert_int_equal(elv_qos_stream_attach(S.q, &S.s[0], &spare, 0), ELV_EBUSY);
	assert_int_equal(elv_qos_stream_detach(S.q, &S.s[0], 0), 0);
	assert_int_equal(elv_qos_stream_detach(S.q, &S.s[0], 0), ELV_EINVAL);
	assert_int_equal(elv_qos_stream_attach(S.q, &S.s[0], &S.cs[0], 0), 0);
	/* Bad stage settings change nothing. */
	set.depth = 70000;
	assert_int_equal(elv_qos_set(S.q, &set, 0), ELV_ERANGE);
	set.depth = 0;
	set.at_limit = 3;
	assert_int_equal(elv_qos_set(S.q, &set, 0), ELV_EINVAL);
	set.at_limit = 0;
	set.iomax_tick_ns = 200 * QS_MS;
	assert_int_equal(elv_qos_set(S.q, &set, 0), ELV_ERANGE);
	assert_int_equal(elv_qos_get(S.q, &set), 0);
	assert_int_equal(set.depth, 1);
	assert_int_equal(set.iomax_slice_ns, 100 * QS_MS);
	assert_int_equal(set.iomax_tick_ns, QS_MS);
	/* A request on the queue blocks attaching to it. */
	assert_int_equal(elv_qos_detach(S.q, 0), 0);
	assert_null(S.s[0].ELV_PRIVATE(qos));
	assert_int_equal(elv_qos_set(S.q, &set, 0), ELV_EINVAL);
	assert_int_equal(qs_add(&S, 0), 0);
	assert_int_equal(elv_qos_attach(S.q, &S.qos, NULL, 0), ELV_EBUSY);
	assert_int_equal(qs_flush(&S), 1);
	assert_int_equal(elv_qos_attach(S.q, &S.qos, NULL, 0), 0);
	qs_fini(&S);
}

static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* Random settings, valid or not, of either flavour. */
static void random_throttle(uint64_t *x, struct elv_throttle_settings *t)
{
	static const uint64_t rates[] = { 0, 0, 1, 10, 100, 5000, 1000000, 1ull << 40 };
	int k;

	memset(t, 0, sizeof(*t));
	t->mode = (uint8_t)(rnd(x) % 2);
	for (k = 0; k < ELV_THROTTLE_NR; k++) {
		if (rnd(x) % 3)
			continue;
		t->limit[k].avg = rates[rnd(x) % 8];
		if (t->mode == ELV_THROTTLE_BUCKET && rnd(x) % 2) {
			t->limit[k].max = t->limit[k].avg * (1 + rnd(x) % 20);
			t->limit[k].max_length = (uint32_t)(rnd(x) % 5);
		}
	}
	if (t->mode == ELV_THROTTLE_BUCKET && rnd(x) % 4 == 0)
		t->iops_size = 4096;
}

/* Settings for test_meter_fused(): each kind of level, then random ones (valid only). */
static void fused_settings(uint64_t *x, unsigned round, struct elv_throttle_settings *t)
{
	memset(t, 0, sizeof(*t));
	switch (round) {
	case 0: /* bytes and operations, in all */
		set_limit(t, ELV_THROTTLE_BPS_TOTAL, 3000000, 0, 0);
		set_limit(t, ELV_THROTTLE_IOPS_TOTAL, 70, 0, 0);
		return;
	case 1: /* bursts, and an operation size */
		set_limit(t, ELV_THROTTLE_BPS_TOTAL, 3000000, 12000000, 3);
		set_limit(t, ELV_THROTTLE_IOPS_TOTAL, 70, 700, 2);
		t->iops_size = 4096;
		return;
	case 2: /* per direction */
		set_limit(t, ELV_THROTTLE_BPS_READ, 3000000, 6000000, 2);
		set_limit(t, ELV_THROTTLE_BPS_WRITE, 2000000, 0, 0);
		set_limit(t, ELV_THROTTLE_IOPS_TOTAL, 90, 0, 0);
		return;
	case 3: /* io.max */
		t->mode = ELV_THROTTLE_IOMAX;
		set_limit(t, ELV_THROTTLE_BPS_READ, 3000000, 0, 0);
		set_limit(t, ELV_THROTTLE_IOPS_WRITE, 50, 0, 0);
		return;
	default:
		do
			random_throttle(x, t);
		while (elv_thr_validate(t) || !(t->limit[0].avg | t->limit[1].avg | t->limit[2].avg |
						  t->limit[3].avg | t->limit[4].avg | t->limit[5].avg));
	}
}

/*
 * The meter's combined calls give what the separate ones give, state included: of two meters
 * run side by side, A charges a head that may go and then asks the wait of the request
 * behind it (elv_thr_charge(), elv_thr_wait()), B does both in elv_thr_charge_wait(); A
 * takes an arriving request with elv_thr_take() (elv_thr_charge_calm() while the levels are
 * calm), B with elv_thr_wait() then elv_thr_charge(). Sizes of several kinds (kept, new,
 * above 4 GiB), both directions, the clock moved to the ready time or short of it, settings
 * changed between, from just before the clock wraps.
 */
static void test_meter_fused(void **state)
{
	static const uint64_t sizes[] = { 512, 4096, 4096, 4096, 8192, 65536, 1u << 20,
					  5ull << 30 };
	static const uint32_t queued[2] = { 1, 1 };
	struct elv_throttle_settings t;
	uint64_t x = 0x243f6a8885a308d3ull, head[2][2], now, wa, wb;
	struct elv_thr a, b;
	unsigned round, i;
	int d;

	(void)state;
	for (round = 0; round < 24; round++) {
		now = round % 2 ? (uint64_t)-3 * QS_SEC : 1000;
		fused_settings(&x, round, &t);
		memset(&a, 0, sizeof(a));
		memset(&b, 0, sizeof(b));
		elv_thr_apply(&a, &t, now, queued, 100 * QS_MS, QS_MS);
		elv_thr_apply(&b, &t, now, queued, 100 * QS_MS, QS_MS);
		for (d = 0; d < 2; d++)
			head[d][0] = head[d][1] = 4096;
		for (i = 0; i < 4000; i++) {
			uint64_t r = rnd(&x), size = sizes[rnd(&x) % 8];

			d = (int)((r >> 8) % 2);
			if (r % 64 == 0) {
				/* New settings of the same kind, the levels starting over. */
				fused_settings(&x, round < 4 ? round : 4, &t);
				elv_thr_apply(&a, &t, now, queued, 100 * QS_MS, QS_MS);
				elv_thr_apply(&b, &t, now, queued, 100 * QS_MS, QS_MS);
			} else if (r % 8 == 1) {
				/* An arrival with nothing waiting in its direction. */
				wa = elv_thr_take(&a, d, size, now);
				wb = elv_thr_wait(&b, d, size, now, 0);
				if (!wb)
					elv_thr_charge(&b, d, size, now);
				assert_int_equal(wa, wb);
			} else {
				/* The head of direction d tries; if it goes, the next one's wait. */
				wa = elv_thr_wait(&a, d, head[d][0], now, 1);
				assert_int_equal(elv_thr_wait(&b, d, head[d][0], now, 1), wa);
				if (!wa) {
					elv_thr_charge(&a, d, head[d][0], now);
					wa = elv_thr_wait(&a, d, head[d][1], now, 1);
					wb = elv_thr_charge_wait(&b, d, head[d][0], head[d][1], now);
					assert_int_equal(wa, wb);
					head[d][0] = head[d][1];
					head[d][1] = size;
				}
				/* To the ready time, or short of it; at most 1000 s on: differences
				 * of times stay below 2^63 only while far less than a century passes
				 * between two fills (ELV_THR_ALLOW_MAX in throttle.c), and waits of
				 * these rates reach the 2^62 ns horizon. */
				wa = r % 4 ? wa : wa / (1 + r % 5);
				now += wa < 1000 * QS_SEC ? wa : 1000 * QS_SEC;
			}
			assert_memory_equal(&a, &b, sizeof(a));
			assert_int_equal(elv_thr_check(&a), 0);
			now += r % 3 == 0 ? rnd(&x) % (20 * QS_MS) : 0;
		}
	}
}

/*
 * Every call in random order on streams in and out of a group, with and without clients,
 * both throttle flavours and mClock switched on and off under way, the clock starting just
 * before it wraps: elv_queue_check() holds after every step, no request is lost (the library
 * holds exactly those it accepted and has not handed back), every call answers as documented,
 * and everything comes back out at the end.
 */
static void test_random_ops(void **state)
{
	struct elv_request *inflight[64], *rq;
	struct elv_throttle_settings t;
	struct elv_mclock_settings m;
	struct elv_qos_settings set;
	struct elv_qos_client *cl;
	struct elv_stats st;
	unsigned nr_inflight, p, step, k, held, saw_thr, saw_mc, saw_group;
	struct elv_qos_client_stats cst;
	uint64_t x;
	int r, err, i;

	(void)state;
	for (p = 0; p < QS_NR_POLICIES; p++) {
		x = 0x9E3779B97F4A7C15ull + p;
		qs_init_at(&S, qs_policies[p], NULL, UINT64_MAX - 3 * (uint64_t)QS_SEC);
		qs_group(&S, 0);
		qs_stream(&S, 0, 0, 1);
		qs_stream(&S, 1, 0, 0);
		qs_stream(&S, 2, -1, 1);
		qs_stream(&S, 3, -1, 0);
		nr_inflight = 0;
		saw_thr = saw_mc = saw_group = 0;
		for (step = 0; step < 6000; step++) {
			unsigned op = (unsigned)(rnd(&x) % 100);

			if (op < 40) {
				static const uint8_t ops[] = { ELV_OP_READ, ELV_OP_WRITE,
							       ELV_OP_DISCARD, ELV_OP_FLUSH };
				uint8_t o = ops[rnd(&x) % 4];

				r = qs_add_op(&S, (int)(rnd(&x) % 4), o,
					      o == ELV_OP_FLUSH ? 0 : 512u << (rnd(&x) % 8));
				assert_true(r == 0 || r == ELV_EAGAIN);
			} else if (op < 60) {
				if (nr_inflight < 64 &&
				    elv_dispatch(S.q, S.now, (unsigned)(rnd(&x) % 2), &rq) == 0) {
					qs_note(&S, rq);
					inflight[nr_inflight++] = rq;
				}
			} else if (op < 72) {
				if (nr_inflight) {
					k = (unsigned)(rnd(&x) % nr_inflight);
					rq = inflight[k];
					inflight[k] = inflight[--nr_inflight];
					assert_int_equal(elv_complete(S.q, rq, S.now), 0);
					qs_free(elv_container_of(rq, struct qs_io, rq));
				}
			} else if (op < 78) {
				k = (unsigned)(rnd(&x) % QS_POOL);
				if (S.pool[k].used && (S.pool[k].rq.ELV_PRIVATE(state) == ELV_RQ_HELD ||
						       S.pool[k].rq.ELV_PRIVATE(state) == ELV_RQ_QUEUED)) {
					assert_int_equal(elv_cancel(S.q, &S.pool[k].rq), 0);
					S.waiting[S.pool[k].stream]--;
					qs_free(&S.pool[k]);
				}
			} else if (op < 79) {
				assert_true(elv_drain(S.q, qs_drain_fn, &S) >= 0);
			} else if (op < 80) {
				assert_int_equal(
					elv_switch(S.q, qs_policies[rnd(&x) % QS_NR_POLICIES], S.now), 0);
			} else if (op < 87) {
				cl = rnd(&x) % 3 == 0 ? &S.cg[0] : &S.cs[rnd(&x) % 2 ? 0 : 2];
				random_throttle(&x, &t);
				err = elv_throttle_check(&t);
				r = elv_qos_set_throttle(S.q, cl, rnd(&x) % 5 ? &t : NULL, S.now);
				assert_true(r == 0 || r == err);
			} else if (op < 92) {
				cl = rnd(&x) % 3 == 0 ? &S.cg[0] : &S.cs[rnd(&x) % 2 ? 0 : 2];
				memset(&m, 0, sizeof(m));
				m.reservation = rnd(&x) % 3 ? 0 : 1 + rnd(&x) % 500;
				m.weight = (uint32_t)(rnd(&x) % 8);
				m.limit = rnd(&x) % 2 ? 0 : rnd(&x) % 1000;
				err = elv_mclock_check(&m);
				r = elv_qos_set_mclock(S.q, cl, rnd(&x) % 4 ? &m : NULL, S.now);
				assert_true(r == 0 || r == err || r == ELV_EBUSY);
			} else if (op < 94) {
				memset(&set, 0, sizeof(set));
				set.at_limit = (uint8_t)(rnd(&x) % 3);
				set.depth = (uint32_t)(rnd(&x) % 6);
				set.cost_size = rnd(&x) % 2 ? 0 : 4096;
				assert_int_equal(elv_qos_set(S.q, &set, S.now), 0);
			} else if (op < 97) {
				S.now += rnd(&x) % (20 * QS_MS);
			} else {
				uint64_t next = elv_next_event(S.q);

				if (next != ELV_TIME_NEVER && elv_time_after(next, S.now))
					S.now = next;
			}
			qs_check(&S);
			/* The library holds exactly what it accepted and has not given back. */
			for (k = 0, held = 0; k < QS_POOL; k++)
				held += S.pool[k].used ? 1u : 0u;
			assert_int_equal(elv_stats(S.q, &st), 0);
			assert_int_equal(st.queued + st.in_flight, held);
			assert_int_equal(st.in_flight, nr_inflight);
			/* What the run reached: throttled and mClock-queued requests, a group's. */
			for (i = 0; i < 3; i++) {
				assert_int_equal(elv_qos_client_stats(S.q, i == 2 ? &S.cg[0] : &S.cs[i * 2],
								      &cst), 0);
				saw_thr += cst.held_throttle != 0;
				saw_mc += cst.held_mclock != 0;
				saw_group += i == 2 && cst.held_throttle + cst.held_mclock != 0;
			}
		}
		assert_true(saw_thr > 100 && saw_mc > 100 && saw_group > 10);
		/* Everything comes out: complete what is in flight, dispatch the rest. */
		for (i = 0; i < 100000 && (nr_inflight || elv_stats(S.q, &st) == 0); i++) {
			while (nr_inflight) {
				rq = inflight[--nr_inflight];
				assert_int_equal(elv_complete(S.q, rq, S.now), 0);
				qs_free(elv_container_of(rq, struct qs_io, rq));
			}
			assert_int_equal(elv_stats(S.q, &st), 0);
			if (!st.queued)
				break;
			if (elv_dispatch(S.q, S.now, ELV_DISPATCH_FORCE, &rq) == 0) {
				qs_note(&S, rq);
				inflight[nr_inflight++] = rq;
			} else {
				uint64_t next = elv_next_event(S.q);

				assert_true(next != ELV_TIME_NEVER); /* held requests have a time */
				S.now = elv_time_after(next, S.now) ? next : S.now + QS_MS;
			}
			qs_check(&S);
		}
		assert_int_equal(elv_stats(S.q, &st), 0);
		assert_int_equal(st.queued + st.in_flight, 0);
		qs_fini(&S);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vector_bps_total),
		cmocka_unit_test(test_vector_burst),
		cmocka_unit_test(test_vector_burst_rates),
		cmocka_unit_test(test_vector_iops_size),
		cmocka_unit_test(test_vector_directions),
		cmocka_unit_test(test_size_changes),
		cmocka_unit_test(test_take_exact),
		cmocka_unit_test(test_take_burst),
		cmocka_unit_test(test_take_sizes),
		cmocka_unit_test(test_take_three_sizes),
		cmocka_unit_test(test_size_slots),
		cmocka_unit_test(test_size_too_large),
		cmocka_unit_test(test_horizon),
		cmocka_unit_test(test_allow_bound),
		cmocka_unit_test(test_vector_validation),
		cmocka_unit_test(test_group_turns),
		cmocka_unit_test(test_runtime_change),
		cmocka_unit_test(test_held_lifecycle),
		cmocka_unit_test(test_due_order),
		cmocka_unit_test(test_both_directions_due),
		cmocka_unit_test(test_first_ready),
		cmocka_unit_test(test_first_stays),
		cmocka_unit_test(test_attach_rules),
		cmocka_unit_test(test_random_ops),
		cmocka_unit_test(test_meter_fused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
