/*
 * deadline policy: golden dispatch orders worked out by hand from the algorithm (one-way
 * ascending batches, FIFO head on expiry, bounded write starvation, priority levels and
 * aging), merges, tunables and invariants. elv_queue_check() runs after every step inside the
 * harness.
 *
 * Unless a test says otherwise: reads of 8 sectors, device depth 1 (each request completes
 * before the next dispatch), the clock does not move, default tunables (read_expire 500 ms,
 * write_expire 5000 ms, writes_starved 2, fifo_batch 16, front_merges 1,
 * prio_aging_expire 10000 ms).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "elevator/policy.h"
#include "support/harness.h"

#define R ELV_OP_READ
#define W ELV_OP_WRITE

static struct th h;

static void setup_deadline(void)
{
	th_setup(&h, "deadline", NULL, 1);
}

static void set_tunable(const char *name, int64_t v)
{
	assert_int_equal(elv_tunable_set(h.q, name, v), 0);
	assert_int_equal(th_tunable(&h, name), v);
	th_check(&h);
}

/* fifo_batch 3; a read at 50 arrives at t=0, reads at 10..90 (but 50) at 1 ms; now 2 ms. */
static void setup_two_waves(void)
{
	static const uint64_t later[] = { 10, 20, 30, 40, 60, 70, 80, 90 };
	unsigned i;

	setup_deadline();
	set_tunable("fifo_batch", 3);
	th_add_new(&h, R, 50, 8);
	th_set_time(&h, th_ms(1));
	for (i = 0; i < TH_LEN(later); i++)
		th_add_new(&h, R, later[i], 8);
	th_set_time(&h, th_ms(2));
}

/* Dispatch until the queue gives nothing more: exactly the @n sectors of @expect, in order. */
static void run_expect(const uint64_t *expect, unsigned n)
{
	assert_int_equal(th_run(&h, 100, 0), n);
	th_expect_sectors(&h, expect, n);
}

/* ---- sweep and batches ------------------------------------------------------------------- */

static void test_sweep_one_way(void **state)
{
	/*
	 * All five arrive at t=0 in the order 500,100,900,300,700; nothing expires.
	 * 1st batch: no sweep position yet -> FIFO head 500, then ascending 700, 900; the sweep
	 *            runs off the top (no successor of 900).
	 * 2nd batch: no next request -> FIFO head again, the oldest left: 100, then 300.
	 * It never goes back to the lowest sector while sweeping upwards.
	 */
	static const uint64_t expect[] = { 500, 700, 900, 100, 300 };
	static const uint64_t sectors[] = { 500, 100, 900, 300, 700 };
	struct elv_stats st;
	unsigned i;

	(void)state;
	setup_deadline();
	for (i = 0; i < TH_LEN(sectors); i++)
		th_add_new(&h, R, sectors[i], 8);
	run_expect(expect, TH_LEN(expect));
	assert_int_equal(th_policy_stat(&h, "batches"), 2);
	st = th_stats(&h);
	assert_int_equal(st.dispatched[0], 5);
	assert_int_equal(st.dispatched[1], 0);
	assert_int_equal(st.expired, 0);
	th_teardown(&h);
}

/*
 * fifo_batch 3. t=0: 50; t=1 ms: 10,20,30,40,60,70,80,90. Dispatch at t=2 ms (no expiry).
 * batch 1: FIFO head 50, then 60, 70 (three).
 * batch 2: the sweep position 80 exists and the FIFO head (10, arrived 1 ms) has not expired
 *          -> keep sweeping: 80, 90; off the top.
 * batch 3: no next request -> FIFO head 10, then 20, 30.
 * batch 4: continue at 40.
 */
static void test_batch_continues_sweep(void **state)
{
	static const uint64_t expect[] = { 50, 60, 70, 80, 90, 10, 20, 30, 40 };

	(void)state;
	setup_two_waves();
	run_expect(expect, TH_LEN(expect));
	assert_int_equal(th_policy_stat(&h, "batches"), 4);
	assert_int_equal(th_stats(&h).expired, 0);
	th_teardown(&h);
}

/*
 * Same arrivals, fifo_batch 3, but the clock jumps to 600 ms after the first batch.
 * batch 1 (t=2 ms): 50, 60, 70.
 * batch 2 (t=600 ms): FIFO head 10 arrived at 1 ms and expired at 501 ms -> start at the
 *          FIFO head instead of the sweep position 80: 10, 20, 30.
 * batch 3: FIFO head 40 (1 ms) also expired -> 40, then ascending 80, 90.
 * Two batches started at an expired head.
 */
static void test_batch_then_expired_fifo_head(void **state)
{
	static const uint64_t expect[] = { 50, 60, 70, 10, 20, 30, 40, 80, 90 };

	(void)state;
	setup_two_waves();
	assert_int_equal(th_run(&h, 3, 0), 3);
	th_set_time(&h, th_ms(600));
	assert_int_equal(th_run(&h, 100, 0), 6);
	th_expect_sectors(&h, expect, TH_LEN(expect));
	assert_int_equal(th_stats(&h).expired, 2);
	assert_int_equal(th_policy_stat(&h, "batches"), 3);
	th_teardown(&h);
}

/*
 * An expired read is dispatched within one batch (fifo_batch 16).
 * t=0: A=1000, X=10, then B1..B40 at 1010, 1020, ..., 1400 (Bi = 1000 + 10 i).
 * t=1 ms: batch 1 = FIFO head A, B1..B15 (16). Batch 2 starts: the head X has not expired,
 * so the sweep goes on: B16..B19 (4 dispatched so far in batch 2).
 * t=600 ms: X has expired, but expiry is looked at only when a batch starts: batch 2
 * finishes with B20..B31 (12 more), then batch 3 starts at the expired FIFO head X, and
 * continues upwards from X's successor: B32..B40.
 * X waited 13 dispatches after expiring: no more than one batch.
 */
static void test_expired_read_within_one_batch(void **state)
{
	static const uint64_t expect[] = {
		1000, 1010, 1020, 1030, 1040, 1050, 1060, 1070, 1080, 1090, 1100, 1110, 1120,
		1130, 1140, 1150,			/* batch 1: A, B1..B15 */
		1160, 1170, 1180, 1190,			/* batch 2 before the clock jump */
		1200, 1210, 1220, 1230, 1240, 1250, 1260, 1270, 1280, 1290, 1300, 1310,
		10,					/* batch 3: expired head X */
		1320, 1330, 1340, 1350, 1360, 1370, 1380, 1390, 1400,
	};
	unsigned i, after;

	(void)state;
	setup_deadline();
	th_add_new(&h, R, 1000, 8);
	th_add_new(&h, R, 10, 8);
	for (i = 1; i <= 40; i++)
		th_add_new(&h, R, 1000 + 10 * i, 8);
	th_set_time(&h, th_ms(1));
	assert_int_equal(th_run(&h, 20, 0), 20);
	th_set_time(&h, th_ms(600));
	assert_int_equal(th_run(&h, 100, 0), 22);
	th_expect_sectors(&h, expect, TH_LEN(expect));
	for (after = 0, i = 20; h.order_sector[i] != 10; i++)
		after++;
	assert_true(after + 1 <= 16);
	assert_int_equal(th_stats(&h).expired, 1);
	th_teardown(&h);
}

/* ---- directions ----------------------------------------------------------------------------- */

/*
 * Writes wait at most writes_starved (2) read batches. fifo_batch 2.
 * t=0 arrivals: W1=1000, W2=1010, R1..R10 = 10, 20, ..., 100, W3=1020, W4=1030.
 * b1: reads and writes queued, starved 0 < 2 -> READ (starved 1): FIFO head 10, then 20.
 * b2: starved 1 < 2 -> READ (starved 2): sweep 30, 40.
 * b3: starved 2 >= 2 -> WRITE forced (starved 0): no write sweep yet -> FIFO head 1000, 1010.
 * b4: READ (starved 1): the read sweep position was dropped by the write batch -> FIFO
 *     head 50, then 60.
 * b5: READ (starved 2): 70, 80.
 * b6: WRITE forced again: the write sweep position was dropped by b4 -> FIFO head 1020, 1030.
 * b7: only reads are left: 90, 100.
 */
static void test_writes_starved(void **state)
{
	static const uint64_t expect[] = { 10, 20, 30, 40, 1000, 1010, 50, 60, 70, 80,
					   1020, 1030, 90, 100 };
	struct elv_stats st;
	unsigned i;

	(void)state;
	setup_deadline();
	set_tunable("fifo_batch", 2);
	th_add_new(&h, W, 1000, 8);
	th_add_new(&h, W, 1010, 8);
	for (i = 1; i <= 10; i++)
		th_add_new(&h, R, 10 * i, 8);
	th_add_new(&h, W, 1020, 8);
	th_add_new(&h, W, 1030, 8);
	run_expect(expect, TH_LEN(expect));
	assert_int_equal(th_policy_stat(&h, "batches"), 7);
	assert_int_equal(th_policy_stat(&h, "write_starved_forced"), 2);
	st = th_stats(&h);
	assert_int_equal(st.dispatched[0], 10);
	assert_int_equal(st.dispatched[1], 4);
	th_teardown(&h);
}

/*
 * writes_starved 0: writes win every direction choice while any is queued. Discards and
 * flushes travel in the write direction. t=0 arrivals: read 10, discard 500, write 300,
 * flush at 0 (no length).
 * b1: WRITE: FIFO head = discard 500; nothing above it.
 * b2: WRITE: FIFO head = write 300; nothing above it (500 is gone).
 * b3: WRITE: FIFO head = flush at 0.
 * b4: only the read is left: 10.
 */
static void test_discard_flush_write_direction(void **state)
{
	static const uint64_t expect[] = { 500, 300, 0, 10 };
	struct elv_stats st;

	(void)state;
	setup_deadline();
	set_tunable("writes_starved", 0);
	th_add_new(&h, R, 10, 8);
	th_add_new(&h, ELV_OP_DISCARD, 500, 64);
	th_add_new(&h, W, 300, 8);
	th_add_new(&h, ELV_OP_FLUSH, 0, 0);
	run_expect(expect, TH_LEN(expect));
	st = th_stats(&h);
	assert_int_equal(st.dispatched[0], 1);
	assert_int_equal(st.dispatched[1], 3);
	assert_int_equal(th_policy_stat(&h, "write_starved_forced"), 3);
	th_teardown(&h);
}

/* ---- merges ----------------------------------------------------------------------------------- */

/*
 * A=[100,108) C=[116,124) D=[200,208) queued. B=[108,116) back-merges into A (hash on A's
 * end), which makes A=[100,116) touch C: request-to-request merge, A=[100,124).
 * E=[192,200) front-merges into D (tree lookup of a request starting at 200): D=[192,208).
 * Dispatch: FIFO head A (sector 100, 24 sectors), then D (sector 192, 16 sectors).
 */
static void test_merges(void **state)
{
	static const uint64_t expect[] = { 100, 192 };
	struct th_io *a, *c, *d, *b, *e;
	struct elv_stats st;

	(void)state;
	setup_deadline();
	a = th_add_new(&h, R, 100, 8);
	c = th_add_new(&h, R, 116, 8);
	d = th_add_new(&h, R, 200, 8);
	b = th_new(&h, R, 108, 8);
	assert_int_equal(th_add(&h, b), 1);
	e = th_new(&h, R, 192, 8);
	assert_int_equal(th_add(&h, e), 1);

	assert_int_equal(h.nr_merges, 3);
	assert_int_equal(h.merges[0].into, a->id);
	assert_int_equal(h.merges[0].absorbed, b->id);
	assert_int_equal(h.merges[0].kind, ELV_MERGE_BACK);
	assert_int_equal(h.merges[1].into, a->id);
	assert_int_equal(h.merges[1].absorbed, c->id);
	assert_int_equal(h.merges[1].kind, ELV_MERGE_REQ);
	assert_int_equal(h.merges[2].into, d->id);
	assert_int_equal(h.merges[2].absorbed, e->id);
	assert_int_equal(h.merges[2].kind, ELV_MERGE_FRONT);
	assert_int_equal(a->rq.sector, 100);
	assert_int_equal(a->rq.nr_sectors, 24);
	assert_int_equal(d->rq.sector, 192);
	assert_int_equal(d->rq.nr_sectors, 16);

	st = th_stats(&h);
	assert_int_equal(st.merged_back, 1);
	assert_int_equal(st.merged_front, 1);
	assert_int_equal(st.merged_req, 1);
	assert_int_equal(st.queued, 2);

	run_expect(expect, TH_LEN(expect));
	assert_int_equal(h.order_id[0], a->id);
	assert_int_equal(h.order_id[1], d->id);
	th_teardown(&h);
}

/*
 * front_merges 0: E=[192,200) stays separate from D=[200,208). A request-to-request merge
 * after a back merge still happens (as in Linux): A=[100,108), C=[116,124), then
 * B=[108,116) joins A and A joins C.
 * FIFO: D, E, A. b1: head D (200), nothing above. b2: head E (192), nothing above (D gone).
 * b3: head A (100).
 */
static void test_front_merges_off(void **state)
{
	static const uint64_t expect[] = { 200, 192, 100 };
	struct elv_stats st;
	struct th_io *e, *b;

	(void)state;
	setup_deadline();
	set_tunable("front_merges", 0);
	th_add_new(&h, R, 200, 8);
	e = th_new(&h, R, 192, 8);
	assert_int_equal(th_add(&h, e), 0);
	th_add_new(&h, R, 100, 8);
	th_add_new(&h, R, 116, 8);
	b = th_new(&h, R, 108, 8);
	assert_int_equal(th_add(&h, b), 1);
	st = th_stats(&h);
	assert_int_equal(st.merged_front, 0);
	assert_int_equal(st.merged_back, 1);
	assert_int_equal(st.merged_req, 1);
	assert_int_equal(st.queued, 3);
	run_expect(expect, TH_LEN(expect));
	th_teardown(&h);
}

/*
 * FIFO inheritance: C=[116,124) at t=0, X=[50,58) at 1 ms, A=[100,108) at 2 ms; at 3 ms
 * B=[108,116) back-merges into A and A absorbs C. C was older, so A takes C's FIFO place and
 * arrival time (0): read FIFO = A, X.
 * Dispatch at t=500 ms: b1 starts at FIFO head A, which has expired (0 + 500 ms); nothing
 * above sector 100 -> b2 starts at FIFO head X (1 ms + 500 ms > 500 ms: not expired).
 * Without inheritance the order would be X then A, and nothing would have expired.
 */
static void test_fifo_inheritance(void **state)
{
	static const uint64_t expect[] = { 100, 50 };
	struct th_io *a, *c;

	(void)state;
	setup_deadline();
	c = th_add_new(&h, R, 116, 8);
	th_set_time(&h, th_ms(1));
	th_add_new(&h, R, 50, 8);
	th_set_time(&h, th_ms(2));
	a = th_add_new(&h, R, 100, 8);
	th_set_time(&h, th_ms(3));
	assert_int_equal(th_add(&h, th_new(&h, R, 108, 8)), 1);
	assert_int_equal(c->merged_into, a->id);
	assert_int_equal(th_policy_stat(&h, "fifo_inherited"), 1);
	th_set_time(&h, th_ms(500));
	run_expect(expect, TH_LEN(expect));
	assert_int_equal(th_stats(&h).expired, 1);
	th_teardown(&h);
}

/* The survivor of a request merge that is itself the older one keeps its own place. */
static void test_no_inheritance_when_survivor_older(void **state)
{
	(void)state;
	setup_deadline();
	th_add_new(&h, R, 100, 8);
	th_set_time(&h, th_ms(1));
	th_add_new(&h, R, 116, 8);
	assert_int_equal(th_add(&h, th_new(&h, R, 108, 8)), 1);
	assert_int_equal(th_stats(&h).merged_req, 1);
	assert_int_equal(th_policy_stat(&h, "fifo_inherited"), 0);
	assert_int_equal(th_run(&h, 100, 0), 1);
	th_teardown(&h);
}

/* ---- tunables --------------------------------------------------------------------------------- */

static void test_tunables(void **state)
{
	static const struct {
		const char *name;
		const char *unit;
		int64_t def, min, max;
	} table[] = {
		{ "read_expire", "ms", 500, 0, 3600000 },
		{ "write_expire", "ms", 5000, 0, 3600000 },
		{ "writes_starved", "batches", 2, 0, 1024 },
		{ "fifo_batch", "requests", 16, 1, 4096 },
		{ "front_merges", "bool", 1, 0, 1 },
		{ "prio_aging_expire", "ms", 10000, 0, 3600000 },
	};
	const struct elv_tunable *t;
	unsigned i, nr = 0;
	int64_t v;

	(void)state;
	setup_deadline();
	t = elv_policy_tunables(elv_queue_policy(h.q), &nr);
	assert_non_null(t);
	assert_int_equal(nr, TH_LEN(table));
	for (i = 0; i < nr; i++) {
		assert_string_equal(t[i].name, table[i].name);
		assert_string_equal(t[i].unit, table[i].unit);
		assert_int_equal(t[i].def, table[i].def);
		assert_int_equal(t[i].min, table[i].min);
		assert_int_equal(t[i].max, table[i].max);
		assert_non_null(t[i].desc);
		/* defaults are in place, and both ends of the range are refused one step out */
		assert_int_equal(th_tunable(&h, table[i].name), table[i].def);
		assert_int_equal(elv_tunable_set(h.q, table[i].name, table[i].min - 1), ELV_ERANGE);
		assert_int_equal(elv_tunable_set(h.q, table[i].name, table[i].max + 1), ELV_ERANGE);
		assert_int_equal(th_tunable(&h, table[i].name), table[i].def);
		th_check(&h);
		/* both ends are accepted */
		set_tunable(table[i].name, table[i].max);
		set_tunable(table[i].name, table[i].min);
		set_tunable(table[i].name, table[i].def);
	}
	assert_int_equal(elv_tunable_set(h.q, "read_expire", -1), ELV_ERANGE);
	assert_int_equal(elv_tunable_set(h.q, "read_expire", INT64_MAX), ELV_ERANGE);
	assert_int_equal(elv_tunable_set(h.q, "fifo_batch", 0), ELV_ERANGE);
	assert_int_equal(elv_tunable_set(h.q, "front_merges", 2), ELV_ERANGE);
	set_tunable("read_expire", 250);
	assert_int_equal(elv_tunable_set(h.q, "read_expire", 3600001), ELV_ERANGE);
	assert_int_equal(th_tunable(&h, "read_expire"), 250);

	assert_int_equal(elv_tunable_set(h.q, "read_expiry", 100), ELV_ENOENT);
	assert_int_equal(elv_tunable_set(h.q, "write_starved", 1), ELV_ENOENT); /* doc typo */
	assert_int_equal(elv_tunable_set(h.q, "", 1), ELV_ENOENT);
	assert_int_equal(elv_tunable_get(h.q, "quantum", &v), ELV_ENOENT);
	assert_int_equal(elv_tunable_set(h.q, NULL, 1), ELV_EINVAL);
	assert_int_equal(elv_tunable_get(h.q, "fifo_batch", NULL), ELV_EINVAL);
	assert_int_equal(th_tunable(&h, "writes_starved"), 2);
	assert_int_equal(th_tunable(&h, "fifo_batch"), 16);
	th_check(&h);
	th_teardown(&h);
}

/*
 * A lowered read_expire is used at once. read_expire 10 ms; t=0: 500, t=1 ms: 100; dispatch
 * at t=20 ms. b1: FIFO head 500, expired (0 + 10 ms <= 20 ms); nothing above it.
 * b2: FIFO head 100, expired too (1 + 10 ms <= 20 ms). Same order as with 500 ms, but both
 * batches now count as started by an expired deadline (with 500 ms: none).
 */
static void test_tunable_takes_effect(void **state)
{
	static const uint64_t expect[] = { 500, 100 };

	(void)state;
	setup_deadline();
	set_tunable("read_expire", 10);
	th_add_new(&h, R, 500, 8);
	th_set_time(&h, th_ms(1));
	th_add_new(&h, R, 100, 8);
	th_set_time(&h, th_ms(20));
	run_expect(expect, TH_LEN(expect));
	/* both batches started at a FIFO head older than 10 ms */
	assert_int_equal(th_stats(&h).expired, 2);
	th_teardown(&h);
}

/* ---- priority levels ------------------------------------------------------------------------- */

/*
 * t=0 arrivals: IDLE read 100, BE read 200, RT read 300, read 400 without a class (-> BE),
 * BE write 50. Nothing is old enough for aging (10 s).
 * 1: RT is served first: 300.
 * 2: BE batch: reads win the direction choice (starved 0 -> 1): FIFO head 200.
 * 3: the BE batch continues upwards: 400.
 * 4: BE: only the write is left there: 50.
 * 5: IDLE last: 100.
 */
static void test_priority_levels(void **state)
{
	static const uint64_t expect[] = { 300, 200, 400, 50, 100 };

	(void)state;
	setup_deadline();
	th_add_prio(&h, R, 100, 8, ELV_PRIO(ELV_PRIO_IDLE, 7));
	th_add_prio(&h, R, 200, 8, ELV_PRIO(ELV_PRIO_BE, 4));
	th_add_prio(&h, R, 300, 8, ELV_PRIO(ELV_PRIO_RT, 0));
	th_add_new(&h, R, 400, 8);
	th_add_prio(&h, W, 50, 8, ELV_PRIO(ELV_PRIO_BE, 0));
	run_expect(expect, TH_LEN(expect));
	assert_int_equal(th_policy_stat(&h, "aged"), 0);
	th_teardown(&h);
}

/*
 * Aging. t=0: BE read 100. t=T: RT reads 500 and 600.
 * T = 10 s: the BE read arrived prio_aging_expire ago -> the aging pass serves it before
 *           the newer RT reads: 100, 500, 600.
 * T = 10 s - 1 ns: not old enough -> strict priority: 500, 600, 100.
 */
static void run_aging(uint64_t t, const uint64_t *expect, uint64_t aged)
{
	setup_deadline();
	th_add_new(&h, R, 100, 8);
	th_set_time(&h, t);
	th_add_prio(&h, R, 500, 8, ELV_PRIO(ELV_PRIO_RT, 0));
	th_add_prio(&h, R, 600, 8, ELV_PRIO(ELV_PRIO_RT, 0));
	assert_int_equal(th_run(&h, 100, 0), 3);
	th_expect_sectors(&h, expect, 3);
	assert_int_equal(th_policy_stat(&h, "aged"), aged);
	th_teardown(&h);
}

static void test_aging_be_before_rt(void **state)
{
	static const uint64_t aged[] = { 100, 500, 600 };
	static const uint64_t young[] = { 500, 600, 100 };

	(void)state;
	run_aging(th_ms(10000), aged, 1);
	run_aging(th_ms(10000) - 1, young, 0);
}

/*
 * prio_aging_expire 1000 ms. t=0: IDLE read 200. t=1 s: BE read 300, RT read 400.
 * Aging pass: BE 300 arrived 0 ms ago (too young); IDLE 200 arrived 1 s ago -> served.
 * Then strict priority: RT 400, BE 300.
 */
static void test_aging_idle(void **state)
{
	static const uint64_t expect[] = { 200, 400, 300 };

	(void)state;
	setup_deadline();
	set_tunable("prio_aging_expire", 1000);
	th_add_prio(&h, R, 200, 8, ELV_PRIO(ELV_PRIO_IDLE, 0));
	th_set_time(&h, th_ms(1000));
	th_add_prio(&h, R, 300, 8, ELV_PRIO(ELV_PRIO_BE, 4));
	th_add_prio(&h, R, 400, 8, ELV_PRIO(ELV_PRIO_RT, 4));
	run_expect(expect, TH_LEN(expect));
	assert_int_equal(th_policy_stat(&h, "aged"), 1);
	th_teardown(&h);
}

/*
 * The aging pass judges the request a level would dispatch, not the level's oldest one.
 * prio_aging_expire 1000 ms. t=0: IDLE write 900. t=999 ms: IDLE reads 100 and 300; one
 * dispatch: only IDLE is busy, reads win the direction choice -> FIFO head 100, and the sweep
 * goes on at 300. t=1000 ms: BE read 500. Aging pass: BE 500 is new; IDLE's oldest request
 * (the write 900) has waited 1000 ms, but IDLE would dispatch 300 (its read batch goes on),
 * which has waited 1 ms -> nothing aged. BE is served: 500. Then IDLE alone: 300, then the
 * write 900.
 */
static void test_aging_judges_the_pick(void **state)
{
	static const uint64_t expect[] = { 100, 500, 300, 900 };

	(void)state;
	setup_deadline();
	set_tunable("prio_aging_expire", 1000);
	th_add_prio(&h, W, 900, 8, ELV_PRIO(ELV_PRIO_IDLE, 0));
	th_set_time(&h, th_ms(999));
	th_add_prio(&h, R, 100, 8, ELV_PRIO(ELV_PRIO_IDLE, 0));
	th_add_prio(&h, R, 300, 8, ELV_PRIO(ELV_PRIO_IDLE, 0));
	assert_non_null(th_dispatch(&h, 0));
	assert_int_equal(th_complete_one(&h), 1);
	th_set_time(&h, th_ms(1000));
	th_add_prio(&h, R, 500, 8, ELV_PRIO(ELV_PRIO_BE, 4));
	assert_int_equal(th_run(&h, 100, 0), 3);
	th_expect_sectors(&h, expect, TH_LEN(expect));
	assert_int_equal(th_policy_stat(&h, "aged"), 0);
	th_teardown(&h);
}

/* ---- dispatch variants, cancel, drain, switch ------------------------------------------------ */

/* Forced dispatch never idles and gives the same order as test_sweep_one_way. */
static void test_forced_dispatch(void **state)
{
	static const uint64_t expect[] = { 500, 700, 900, 100, 300 };
	static const uint64_t sectors[] = { 500, 100, 900, 300, 700 };
	struct elv_request *rq = NULL;
	unsigned i;

	(void)state;
	th_setup(&h, "deadline", NULL, 8);
	assert_int_equal(elv_dispatch(h.q, 0, ELV_DISPATCH_FORCE, &rq), ELV_EAGAIN);
	assert_null(rq);
	for (i = 0; i < TH_LEN(sectors); i++)
		th_add_new(&h, R, sectors[i], 8);
	assert_int_equal(elv_next_event(h.q), ELV_TIME_NEVER);
	/* depth 8: all five go to the device without completions in between */
	assert_int_equal(th_run(&h, 100, ELV_DISPATCH_FORCE), 5);
	th_expect_sectors(&h, expect, TH_LEN(expect));
	assert_int_equal(elv_dispatch(h.q, 0, ELV_DISPATCH_FORCE, &rq), ELV_EAGAIN);
	assert_int_equal(th_stats(&h).in_flight, 5);
	th_teardown(&h);
}

/*
 * Cancelling the cached sweep position moves it on; a request added below the sweep waits
 * for the next batch (the legacy next-request cache).
 * t=0: 100, 200, 300, 400. Dispatch 100 (next 200). Cancel 200 -> next 300. Dispatch 300
 * (next 400). Add 250. Dispatch 400 (the sweep), then 250 (new batch at the FIFO head).
 */
static void test_cancel_and_sweep_cache(void **state)
{
	static const uint64_t expect[] = { 100, 300, 400, 250 };
	struct th_io *r200;

	(void)state;
	setup_deadline();
	th_add_new(&h, R, 100, 8);
	r200 = th_add_new(&h, R, 200, 8);
	th_add_new(&h, R, 300, 8);
	th_add_new(&h, R, 400, 8);
	assert_int_equal(th_run(&h, 1, 0), 1);
	assert_int_equal(elv_cancel(h.q, &r200->rq), 0);
	th_check(&h);
	assert_int_equal(elv_cancel(h.q, &r200->rq), ELV_EINVAL);
	assert_int_equal(th_run(&h, 1, 0), 1);
	th_add_new(&h, R, 250, 8);
	assert_int_equal(th_run(&h, 100, 0), 2);
	th_expect_sectors(&h, expect, TH_LEN(expect));
	assert_int_equal(th_stats(&h).cancelled, 1);
	th_teardown(&h);
}

static uint32_t drained[16];
static unsigned nr_drained;

static void drain_cb(void *arg, struct elv_request *rq)
{
	(void)arg;
	assert_true(nr_drained < TH_LEN(drained));
	drained[nr_drained++] = elv_container_of(rq, struct th_io, rq)->id;
}

/* Drain returns requests of every level and direction in arrival order (ids 0..5). */
static void test_drain_arrival_order(void **state)
{
	static const uint32_t expect[] = { 0, 1, 2, 3, 4, 5 };
	unsigned i;

	(void)state;
	setup_deadline();
	th_add_prio(&h, W, 900, 8, ELV_PRIO(ELV_PRIO_IDLE, 0));
	th_add_prio(&h, R, 800, 8, ELV_PRIO(ELV_PRIO_RT, 0));
	th_add_new(&h, R, 100, 8);
	th_add_prio(&h, W, 50, 8, ELV_PRIO(ELV_PRIO_RT, 0));
	th_add_new(&h, ELV_OP_DISCARD, 4000, 8);
	th_add_prio(&h, R, 10, 8, ELV_PRIO(ELV_PRIO_IDLE, 0));
	nr_drained = 0;
	assert_int_equal(elv_drain(h.q, drain_cb, NULL), 6);
	th_check(&h);
	assert_int_equal(nr_drained, TH_LEN(expect));
	for (i = 0; i < nr_drained; i++)
		assert_int_equal(drained[i], expect[i]);
	th_teardown(&h);
}

/* Switching to noop hands the queued requests over in arrival order (noop is FIFO). */
static void test_switch_to_noop(void **state)
{
	static const uint64_t expect[] = { 500, 100, 900, 300 };
	static const uint64_t sectors[] = { 500, 100, 900, 300 };
	unsigned i;

	(void)state;
	setup_deadline();
	for (i = 0; i < TH_LEN(sectors); i++)
		th_add_new(&h, R, sectors[i], 8);
	assert_int_equal(elv_switch(h.q, elv_policy_find("noop"), h.now), 0);
	th_check(&h);
	run_expect(expect, TH_LEN(expect));
	th_teardown(&h);
}

/*
 * Barriers and requeues are the core's business; deadline just sees requests come and go.
 * t=0: reads 500, 100; barrier write at 300; read 50 (held behind the barrier).
 * 500 (FIFO head, nothing above) is given back by the device and comes first again; then
 * 100; the policy is empty, so the barrier goes; then 50 reaches the policy and goes.
 */
static void test_barrier_and_requeue(void **state)
{
	static const uint64_t expect[] = { 500, 500, 100, 300, 50 };
	struct th_io *io, *barrier;

	(void)state;
	th_setup(&h, "deadline", NULL, 2);
	th_add_new(&h, R, 500, 8);
	th_add_new(&h, R, 100, 8);
	barrier = th_new(&h, W, 300, 8);
	barrier->rq.flags = ELV_RQ_BARRIER;
	assert_int_equal(th_add(&h, barrier), 0);
	th_add_new(&h, R, 50, 8);
	io = th_dispatch(&h, 0);
	assert_non_null(io);
	th_requeue(&h, io);
	assert_int_equal(th_run(&h, 100, 0), 4);
	th_expect_sectors(&h, expect, TH_LEN(expect));
	assert_int_equal(th_stats(&h).requeued, 1);
	th_teardown(&h);
}

/* ---- counters and invariants ------------------------------------------------------------------ */

static void test_policy_stat_names(void **state)
{
	static const char *const names[] = { "batches", "write_starved_forced", "aged",
					     "fifo_inherited" };
	const char *name;
	uint64_t v;
	unsigned i;

	(void)state;
	setup_deadline();
	for (i = 0; i < TH_LEN(names); i++) {
		assert_int_equal(elv_policy_stat(h.q, i, &name, &v), 0);
		assert_string_equal(name, names[i]);
		assert_int_equal(v, 0);
	}
	assert_int_equal(elv_policy_stat(h.q, i, &name, &v), ELV_ENOENT);
	th_teardown(&h);
}

/* The invariant check notices a queued request moved out of sector order or level. */
static void test_check_detects_corruption(void **state)
{
	struct th_io *a, *b;

	(void)state;
	setup_deadline();
	a = th_add_new(&h, R, 100, 8);
	b = th_add_prio(&h, R, 300, 8, ELV_PRIO(ELV_PRIO_BE, 4));
	a->rq.sector = 1000; /* now out of order in the sorted tree */
	assert_int_not_equal(elv_queue_check(h.q), 0);
	a->rq.sector = 100;
	th_check(&h);
	b->rq.ioprio = ELV_PRIO(ELV_PRIO_RT, 0); /* its tree is the BE one */
	assert_int_not_equal(elv_queue_check(h.q), 0);
	b->rq.ioprio = ELV_PRIO(ELV_PRIO_BE, 4);
	th_check(&h);
	assert_int_equal(th_run(&h, 100, 0), 2);
	th_teardown(&h);
}

/*
 * Soak: 1500 pseudo-random requests (all ops, classes, lengths, some contiguous), the clock
 * moving, device depth 4. Every request comes back exactly once: dispatched, or absorbed by a
 * merge into one that is dispatched. The invariant check runs after every step.
 */
static uint32_t lcg(uint32_t *s)
{
	*s = *s * 1664525u + 1013904223u;
	return *s >> 8;
}

static void test_soak(void **state)
{
	static const uint8_t classes[] = { ELV_PRIO_NONE, ELV_PRIO_RT, ELV_PRIO_BE, ELV_PRIO_IDLE };
	static uint8_t seen[TH_POOL];
	struct elv_stats st;
	uint32_t s = 12345;
	unsigned i, n = 1000;
	struct th_io *io;

	(void)state;
	th_setup(&h, "deadline", NULL, 4);
	h.service_ns = th_ms(3);
	set_tunable("fifo_batch", 4);
	set_tunable("read_expire", 50);
	set_tunable("prio_aging_expire", 200);
	for (i = 0; i < n; i++) {
		uint32_t r = lcg(&s);
		uint8_t op = (uint8_t)(r % 10 < 5 ? R : r % 10 < 8 ? W : r % 10 < 9 ? ELV_OP_DISCARD :
							      ELV_OP_FLUSH);
		uint64_t sector = (lcg(&s) % 64) * 8;
		uint32_t len = op == ELV_OP_FLUSH ? 0 : 8;

		io = th_new(&h, op, sector, len);
		io->rq.ioprio = ELV_PRIO(classes[lcg(&s) % 4], 4);
		if (io->rq.ioprio == ELV_PRIO(ELV_PRIO_NONE, 4))
			io->rq.ioprio = 0;
		assert_true(th_add(&h, io) >= 0);
		th_advance(&h, lcg(&s) % 2000000);
		if (lcg(&s) % 3 == 0)
			th_run(&h, 1 + lcg(&s) % 3, lcg(&s) % 2 ? ELV_DISPATCH_FORCE : 0);
	}
	while (th_run(&h, 1000, 0) != 0)
		;
	th_complete_all(&h);
	memset(seen, 0, sizeof(seen));
	for (i = 0; i < h.nr_order; i++) {
		assert_int_equal(seen[h.order_id[i]], 0);
		seen[h.order_id[i]] = 1;
	}
	for (i = 0; i < n; i++) {
		io = &h.pool[i];
		if (io->merged_into == TH_NONE)
			assert_int_equal(seen[i], 1);
		else
			assert_int_equal(seen[i], 0);
	}
	st = th_stats(&h);
	assert_int_equal(st.added, n);
	/* the run went through every path at least once */
	assert_true(st.merged_back > 0 && st.merged_front > 0 && st.merged_req > 0);
	assert_true(st.expired > 0);
	assert_true(th_policy_stat(&h, "aged") > 0);
	assert_true(th_policy_stat(&h, "write_starved_forced") > 0);
	assert_true(th_policy_stat(&h, "fifo_inherited") > 0);
	th_teardown(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sweep_one_way),
		cmocka_unit_test(test_batch_continues_sweep),
		cmocka_unit_test(test_batch_then_expired_fifo_head),
		cmocka_unit_test(test_expired_read_within_one_batch),
		cmocka_unit_test(test_writes_starved),
		cmocka_unit_test(test_discard_flush_write_direction),
		cmocka_unit_test(test_merges),
		cmocka_unit_test(test_front_merges_off),
		cmocka_unit_test(test_fifo_inheritance),
		cmocka_unit_test(test_no_inheritance_when_survivor_older),
		cmocka_unit_test(test_tunables),
		cmocka_unit_test(test_tunable_takes_effect),
		cmocka_unit_test(test_priority_levels),
		cmocka_unit_test(test_aging_be_before_rt),
		cmocka_unit_test(test_aging_idle),
		cmocka_unit_test(test_aging_judges_the_pick),
		cmocka_unit_test(test_forced_dispatch),
		cmocka_unit_test(test_cancel_and_sweep_cache),
		cmocka_unit_test(test_drain_arrival_order),
		cmocka_unit_test(test_switch_to_noop),
		cmocka_unit_test(test_barrier_and_requeue),
		cmocka_unit_test(test_policy_stat_names),
		cmocka_unit_test(test_check_detects_corruption),
		cmocka_unit_test(test_soak),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
