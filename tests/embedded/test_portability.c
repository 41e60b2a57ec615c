/*
 * What embedded and foreign targets care about, checked wherever the suite runs (host,
 * Cortex-M3, armhf, big-endian s390x): the no-malloc build's stubs, struct layout on 32-bit
 * targets, queues in static memory for every built-in policy, and 64-bit sectors and times
 * that do not fit in 32 bits (a truncation on a 32-bit target, or a byte-order slip on a
 * big-endian one, reorders or loses requests here).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "elevator/policy.h"

#define NRQ 48

static uint64_t mem[4096]; /* 32 KiB: enough for any built-in policy on 64-bit hosts */

/* The built-in policies, in elv_policy_at() order: every target must have all of them. */
static const char *const builtin[] = { "noop", "deadline", "anticipatory", "cfq",
					"kyber", "bfq", "fcfs", "sstf", "scan", "look", "cscan",
					"clook", "nscan", "fscan", "vr", "sptf", "asptf" };
#define NR_BUILTIN (sizeof(builtin) / sizeof(builtin[0]))
static struct elv_request rq[NRQ];
static struct elv_stream streams[3];
static unsigned seen[NRQ];

/* elv_queue_create() allocates, or reports ELV_ENOSYS when the build has no malloc. */
static void test_queue_create_matches_build(void **state)
{
	struct elv_queue *q = NULL;
	const struct elv_policy *p = elv_policy_find("noop");
	int err;

	(void)state;
	assert_non_null(p);
	err = elv_queue_create(&q, p, NULL);
#if defined(ELV_NO_MALLOC)
	assert_int_equal(err, ELV_ENOSYS);
	assert_int_equal(elv_queue_destroy(q), ELV_ENOSYS);
#else
	assert_int_equal(err, 0);
	assert_non_null(q);
	assert_ptr_equal(elv_queue_policy(q), p);
	assert_int_equal(elv_queue_check(q), 0);
	assert_int_equal(elv_queue_destroy(q), 0);
#endif
}

/* The request is designed to be 56 bytes wherever pointers are 32 bits wide. */
static void test_layout_on_32_bit(void **state)
{
	(void)state;
	if (sizeof(void *) == 4) {
		assert_int_equal(sizeof(struct elv_request), 56);
		assert_int_equal(sizeof(struct elv_stream), 32 + 8 * ELV_STREAM_PRIV_WORDS);
	}
	assert_int_equal(offsetof(struct elv_request, sector), 0);
	assert_int_equal(offsetof(struct elv_request, nr_sectors), 8);
	assert_true(sizeof(struct elv_request) <= 88);
}

/* Requests hand back by dispatch must be exactly the ones added, each once. */
static void drain_all(struct elv_queue *q, uint64_t now, unsigned expect)
{
	struct elv_request *out;
	unsigned n = 0, i;

	memset(seen, 0, sizeof(seen));
	while (elv_dispatch(q, now, ELV_DISPATCH_FORCE, &out) == 0) {
		ptrdiff_t idx = out - rq;

		assert_true(idx >= 0 && idx < NRQ);
		seen[idx]++;
		assert_int_equal(elv_complete(q, out, now), 0);
		assert_int_equal(elv_queue_check(q), 0);
		now += 1000;
		n++;
	}
	assert_int_equal(n, expect);
	for (i = 0; i < expect; i++)
		assert_int_equal(seen[i], 1);
}

/* The registry holds exactly the built-in policies, in order, on every target. */
static void test_every_policy_registered(void **state)
{
	unsigned i;

	(void)state;
	for (i = 0; i < NR_BUILTIN; i++) {
		assert_non_null(elv_policy_at(i));
		assert_string_equal(elv_policy_name(elv_policy_at(i)), builtin[i]);
		assert_ptr_equal(elv_policy_find(builtin[i]), elv_policy_at(i));
	}
	assert_null(elv_policy_at(NR_BUILTIN));
}

/*
 * Every policy, in a static buffer, with sectors around 2^32 and near the end of the 64-bit
 * space and a clock far past 2^32 ns: reads in one direction must come out in ascending
 * sector order within a sweep for the sorting policies, and every request exactly once.
 */
static void test_every_policy_static_64bit_sectors(void **state)
{
	static const uint64_t sectors[] = {
		0xfffffff0ull,          0x100000010ull,         0x0ull,
		0x100000000ull,         0xffffffffffff0000ull,  0x1ffffffffull,
		0x7fffffffffffff00ull,  0x80000000ull,          0x100000008ull,
		0x123456789abcull,      0xfffffffeull,          0x200000000ull,
	};
	const unsigned nr = (unsigned)(sizeof(sectors) / sizeof(sectors[0]));
	const struct elv_policy *p;
	unsigned i, k;

	(void)state;
	for (k = 0; (p = elv_policy_at(k)) != NULL; k++) {
		struct elv_config cfg;
		struct elv_queue *q;
		uint64_t now = 5000000000000ull; /* 5000 s: far past 2^32 ns */

		memset(&cfg, 0, sizeof(cfg));
		cfg.nr_requests = 32;
		cfg.no_merges = 1;
		assert_true(elv_queue_size(p, &cfg) <= sizeof(mem));
		assert_int_equal(elv_queue_init(&q, mem, sizeof(mem), p, &cfg), 0);
		memset(streams, 0, sizeof(streams));
		for (i = 0; i < 3; i++)
			assert_int_equal(elv_stream_init(q, &streams[i], now), 0);
		memset(rq, 0, sizeof(rq));
		for (i = 0; i < nr; i++) {
			rq[i].sector = sectors[i];
			rq[i].nr_sectors = 8;
			rq[i].op = (i % 3) ? ELV_OP_READ : ELV_OP_WRITE;
			rq[i].stream = &streams[i % 3];
			assert_int_equal(elv_add(q, &rq[i], now + i), 0);
			assert_int_equal(elv_queue_check(q), 0);
		}
		drain_all(q, now + 100, nr);
		for (i = 0; i < 3; i++)
			assert_int_equal(elv_stream_exit(q, &streams[i], now + 1000000), 0);
		assert_int_equal(elv_queue_exit(q), 0);
	}
	assert_int_equal(k, NR_BUILTIN); /* every policy above was checked, none skipped */
}

/*
 * Sorting policies sweep reads queued at once in ascending 64-bit order. The lowest is also
 * the oldest, so deadline's new batch (which starts at the oldest) sweeps the same way.
 */
static void test_sorted_order_across_2_32(void **state)
{
	static const uint64_t sectors[] = {
		0x1000ull, 0x300000000ull, 0x100000000ull, 0xffffff00ull, 0x200000000ull,
	};
	static const char *const sorting[] = { "deadline", "anticipatory", "cfq" };
	const unsigned nr = (unsigned)(sizeof(sectors) / sizeof(sectors[0]));
	unsigned i, k;

	(void)state;
	for (k = 0; k < sizeof(sorting) / sizeof(sorting[0]); k++) {
		const struct elv_policy *p = elv_policy_find(sorting[k]);
		struct elv_request *out;
		struct elv_queue *q;
		uint64_t prev = 0;

		assert_non_null(p);
		assert_int_equal(elv_queue_init(&q, mem, sizeof(mem), p, NULL), 0);
		memset(rq, 0, sizeof(rq));
		/* The first request starts the device; the rest queue up behind it. */
		rq[0].sector = 0;
		rq[0].nr_sectors = 8;
		rq[0].op = ELV_OP_READ;
		assert_int_equal(elv_add(q, &rq[0], 1000), 0);
		assert_int_equal(elv_dispatch(q, 1000, ELV_DISPATCH_FORCE, &out), 0);
		for (i = 0; i < nr; i++) {
			rq[i + 1].sector = sectors[i];
			rq[i + 1].nr_sectors = 8;
			rq[i + 1].op = ELV_OP_READ;
			assert_int_equal(elv_add(q, &rq[i + 1], 2000 + i), 0);
		}
		assert_int_equal(elv_complete(q, out, 3000), 0);
		for (i = 0; i < nr; i++) {
			assert_int_equal(elv_dispatch(q, 4000 + i, ELV_DISPATCH_FORCE, &out), 0);
			assert_true(out->sector > prev);
			prev = out->sector;
			assert_int_equal(elv_complete(q, out, 4000 + i), 0);
			assert_int_equal(elv_queue_check(q), 0);
		}
		assert_int_equal(elv_queue_exit(q), 0);
	}
	assert_int_equal(k, 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_queue_create_matches_build),
		cmocka_unit_test(test_layout_on_32_bit),
		cmocka_unit_test(test_every_policy_registered),
		cmocka_unit_test(test_every_policy_static_64bit_sectors),
		cmocka_unit_test(test_sorted_order_across_2_32),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
