/*
 * The back-merge hash: removal anywhere on a chain, the cap on chain length and what it
 * evicts, and queues that hold hundreds of times more requests than nr_requests: consistent
 * under elv_queue_check(), every request dispatched or cancelled exactly once, and the merges
 * the cap promises still made.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "elv_internal.h"

#define NB 64u /* buckets of the unit-level hashes */

struct bare {
	struct elv_hash h;
	struct elv_request *buckets[NB];
	uint8_t starts[NB * ELV_HASH_STARTS];
	uint32_t nr; /* requests held (chained or evicted) */
};

static void bare_init(struct bare *b)
{
	memset(b, 0, sizeof(*b));
	elv_hash_init(&b->h, b->buckets, b->starts, NB);
	elv_hash_use_starts(&b->h, 1);
}

/* The bucket that requests ending at sector 8 * @g hash to. */
static uint32_t bucket_of_granule(const struct bare *b, uint64_t g)
{
	return elv_hash_key(g * 8) >> b->h.shift;
}

/* @n granules > 0 whose end sectors all hash to the bucket of granule 1, in increasing order. */
static void colliding_granules(const struct bare *b, uint64_t *g, unsigned n)
{
	uint32_t want = bucket_of_granule(b, 1);
	uint64_t x;
	unsigned i = 0;

	for (x = 1; i < n; x++)
		if (bucket_of_granule(b, x) == want)
			g[i++] = x;
}

/* A queued, mergeable 4 KiB read that ends at sector 8 * @g. */
static void make_rq(struct elv_request *rq, uint64_t g)
{
	memset(rq, 0, sizeof(*rq));
	rq->sector = g * 8 - 8;
	rq->nr_sectors = 8;
	rq->op = ELV_OP_READ;
	rq->state = ELV_RQ_QUEUED;
}

static void bare_add(struct bare *b, struct elv_request *rq)
{
	elv_hash_add(&b->h, rq);
	b->nr++;
	assert_int_equal(elv_hash_check(&b->h, b->nr), 0);
}

static void bare_del(struct bare *b, struct elv_request *rq)
{
	elv_hash_del(&b->h, rq);
	b->nr--;
	assert_false(elv_hash_contains(&b->h, rq));
	assert_int_equal(elv_hash_check(&b->h, b->nr), 0);
}

/* The chain of @rq's bucket equals @want[0..n), head first. */
static void expect_chain(const struct bare *b, const struct elv_request *first_of_bucket,
			 struct elv_request *const *want, unsigned n)
{
	const struct elv_request *c = *elv_hash_bucket(&b->h, elv_rq_end(first_of_bucket));
	unsigned i;

	for (i = 0; i < n; i++, c = c->hlink.next) {
		assert_non_null(c);
		assert_ptr_equal(c, want[i]);
		assert_ptr_equal(elv_hash_find(&b->h, elv_rq_end(want[i])), want[i]);
		assert_true(elv_hash_contains(&b->h, want[i]));
	}
	assert_null(c);
}

static void del_head_middle_tail(void **state)
{
	static struct bare b;
	struct elv_request r[3];
	uint64_t g[3];

	(void)state;
	bare_init(&b);
	colliding_granules(&b, g, 3);
	make_rq(&r[0], g[0]);
	make_rq(&r[1], g[1]);
	make_rq(&r[2], g[2]);
	bare_add(&b, &r[0]);
	bare_add(&b, &r[1]);
	bare_add(&b, &r[2]);
	expect_chain(&b, &r[0], (struct elv_request *[]){ &r[2], &r[1], &r[0] }, 3);

	bare_del(&b, &r[1]); /* middle */
	expect_chain(&b, &r[0], (struct elv_request *[]){ &r[2], &r[0] }, 2);
	assert_null(elv_hash_find(&b.h, elv_rq_end(&r[1])));
	bare_del(&b, &r[2]); /* head */
	expect_chain(&b, &r[0], (struct elv_request *[]){ &r[0] }, 1);

	bare_add(&b, &r[1]);
	bare_add(&b, &r[2]);
	bare_del(&b, &r[0]); /* tail */
	expect_chain(&b, &r[1], (struct elv_request *[]){ &r[2], &r[1] }, 2);
	bare_del(&b, &r[2]);
	bare_del(&b, &r[1]);
	assert_null(b.buckets[bucket_of_granule(&b, g[0])]);
	assert_int_equal(b.h.nr_evicted, 0);
}

static void chain_bound_evicts_oldest(void **state)
{
	static struct bare b;
	enum { N = ELV_HASH_CHAIN_MAX + 3 };
	struct elv_request r[N], *want[ELV_HASH_CHAIN_MAX];
	uint64_t g[N];
	unsigned i;

	(void)state;
	bare_init(&b);
	colliding_granules(&b, g, N);
	for (i = 0; i < N; i++) {
		make_rq(&r[i], g[i]);
		bare_add(&b, &r[i]);
	}
	/* The newest ELV_HASH_CHAIN_MAX stay chained, newest first; the three oldest left. */
	for (i = 0; i < ELV_HASH_CHAIN_MAX; i++)
		want[i] = &r[N - 1 - i];
	expect_chain(&b, &r[0], want, ELV_HASH_CHAIN_MAX);
	assert_int_equal(b.h.nr_evicted, 3);
	for (i = 0; i < 3; i++) {
		assert_true(elv_hash_is_evicted(&r[i]));
		assert_true(elv_hash_contains(&b.h, &r[i]));
		assert_null(elv_hash_find(&b.h, elv_rq_end(&r[i])));
		/* Still counted by the start filter: a front merge may still find it. */
		assert_true(elv_hash_may_start(&b.h, r[i].sector));
	}

	/* Removing an evicted request walks nothing and keeps the counts exact. */
	bare_del(&b, &r[1]);
	assert_int_equal(b.h.nr_evicted, 2);
	/* Removing a chained one does not bring an evicted one back. */
	bare_del(&b, &r[N - 1]);
	expect_chain(&b, &r[0], want + 1, ELV_HASH_CHAIN_MAX - 1);
	/* Hashed again (as after a merge), an evicted request goes to the head. */
	elv_hash_del(&b.h, &r[0]);
	elv_hash_add(&b.h, &r[0]);
	assert_false(elv_hash_is_evicted(&r[0]));
	assert_int_equal(b.h.nr_evicted, 1);
	assert_int_equal(elv_hash_check(&b.h, b.nr), 0);
	want[0] = &r[0];
	expect_chain(&b, &r[0], want, ELV_HASH_CHAIN_MAX);
	assert_true(elv_hash_is_evicted(&r[2]));
}

/* An evicted request belongs to its own hash only: another queue's hash does not claim it. */
static void evicted_belongs_to_its_hash(void **state)
{
	static struct bare a, b;
	enum { N = ELV_HASH_CHAIN_MAX + 1 };
	struct elv_request r[N];
	uint64_t g[N];
	unsigned i;

	(void)state;
	bare_init(&a);
	bare_init(&b);
	colliding_granules(&a, g, N);
	for (i = 0; i < N; i++) {
		make_rq(&r[i], g[i]);
		bare_add(&a, &r[i]);
	}
	assert_true(elv_hash_is_evicted(&r[0]));
	assert_true(elv_hash_contains(&a.h, &r[0]));
	assert_false(elv_hash_contains(&b.h, &r[0]));
	assert_false(elv_hash_contains(&b.h, &r[N - 1]));
}

/* The checker refuses a chain longer than the cap and a count that does not add up. */
static void check_catches_long_chain(void **state)
{
	static struct bare b;
	enum { N = ELV_HASH_CHAIN_MAX + 1 };
	struct elv_request r[N];
	uint64_t g[N];
	uint32_t bk;
	unsigned i;

	(void)state;
	bare_init(&b);
	colliding_granules(&b, g, N);
	bk = bucket_of_granule(&b, g[0]);
	for (i = 0; i < N; i++) {
		make_rq(&r[i], g[i]);
		r[i].hlink.next = b.buckets[bk];
		b.buckets[bk] = &r[i]; /* linked by hand, past the cap */
		b.starts[elv_hash_key(r[i].sector) >> (b.h.shift - ELV_HASH_STARTS_SHIFT)]++;
	}
	assert_int_equal(elv_hash_check(&b.h, N), ELV_EINVAL);
	b.buckets[bk] = r[N - 1].hlink.next; /* back to the cap */
	b.starts[elv_hash_key(r[N - 1].sector) >> (b.h.shift - ELV_HASH_STARTS_SHIFT)]--;
	assert_int_equal(elv_hash_check(&b.h, N - 1), 0);
	assert_int_equal(elv_hash_check(&b.h, N - 2), ELV_EINVAL); /* more chained than queued */
}

/* ---- whole queues, nr_requests left at its default ------------------------------------ */

/*
 * Requests queued at once: about 780 times the default nr_requests on hosted targets; about
 * 125 times on a bare-metal board, whose few MiB of RAM cannot hold 100,000 requests.
 */
#ifndef DEEP
#if defined(__linux__) || defined(__APPLE__) || defined(_WIN32)
#define DEEP 100000u
#else
#define DEEP 16000u
#endif
#endif

static const char *const policies[] = { "noop", "deadline", "anticipatory", "cfq" };
#define NR_POLICIES (sizeof(policies) / sizeof(policies[0]))

struct deep {
	struct elv_queue *q;
	void *mem;
	struct elv_request *rq; /* DEEP random requests, then the sequential ones */
	uint8_t *seen;          /* per request: dispatched, cancelled or absorbed */
	unsigned merges[4];
	struct elv_request *last_into; /* survivor of the latest merge */
	uint64_t rng;
};

static struct deep dq;

static void on_merge(void *ctx, struct elv_request *into, struct elv_request *absorbed,
		     enum elv_merge_kind kind)
{
	struct deep *d = ctx;

	d->last_into = into;
	d->merges[kind]++;
	d->seen[absorbed - d->rq]++;
}

static uint64_t next_rand(struct deep *d)
{
	d->rng = d->rng * 6364136223846793005ull + 1442695040888963407ull;
	return d->rng >> 17;
}

static void deep_setup(const char *policy, unsigned extra)
{
	const struct elv_policy *p = elv_policy_find(policy);
	struct elv_config cfg;
	size_t len;

	assert_non_null(p);
	memset(&dq, 0, sizeof(dq));
	memset(&cfg, 0, sizeof(cfg)); /* nr_requests 0: the default */
	cfg.dev.rotational = 1;
	cfg.merge = on_merge;
	cfg.ctx = &dq;
	len = elv_queue_size(p, &cfg);
	assert_true(len > 0);
	dq.mem = aligned_alloc(8, (len + 7) & ~(size_t)7);
	dq.rq = calloc(DEEP + extra, sizeof(*dq.rq));
	dq.seen = calloc(DEEP + extra, 1);
	assert_non_null(dq.mem);
	assert_non_null(dq.rq);
	assert_non_null(dq.seen);
	assert_int_equal(elv_queue_init(&dq.q, dq.mem, len, p, &cfg), 0);
	assert_int_equal(dq.q->cfg.nr_requests, 128);
	dq.rng = 7;
}

static void deep_teardown(void)
{
	assert_int_equal(elv_queue_exit(dq.q), 0);
	free(dq.mem);
	free(dq.rq);
	free(dq.seen);
}

/* DEEP random 4 KiB reads and writes in the lower half of a 2^31-sector device. */
static void deep_fill(void)
{
	uint64_t now = 1000;
	unsigned i;

	for (i = 0; i < DEEP; i++) {
		struct elv_request *rq = &dq.rq[i];

		rq->sector = (next_rand(&dq) % (1u << 27)) * 8;
		rq->nr_sectors = 8;
		rq->op = (next_rand(&dq) & 3) ? ELV_OP_READ : ELV_OP_WRITE;
		assert_true(elv_add(dq.q, rq, now += 1000) >= 0);
		if (i % (DEEP / 4) == 0)
			assert_int_equal(elv_queue_check(dq.q), 0);
	}
	assert_int_equal(elv_queue_check(dq.q), 0);
	/* Far past nr_requests, most requests are out of the capped chains. */
	assert_true(dq.q->hash.nr_evicted > DEEP / 2);
}

/* Dispatch and complete everything; every request leaves exactly once. */
static void deep_drain_all(unsigned total)
{
	struct elv_request *rq;
	uint64_t now = 1ull << 40;
	unsigned i, n = 0;

	while (elv_dispatch(dq.q, now, ELV_DISPATCH_FORCE, &rq) == 0) {
		dq.seen[rq - dq.rq]++;
		assert_int_equal(elv_complete(dq.q, rq, now += 1000), 0);
		if (++n % (DEEP / 4) == 0)
			assert_int_equal(elv_queue_check(dq.q), 0);
	}
	assert_int_equal(elv_queue_check(dq.q), 0);
	assert_int_equal(dq.q->hash.nr_evicted, 0);
	for (i = 0; i < total; i++)
		assert_int_equal(dq.seen[i], 1);
}

static void deep_queue_consistent(void **state)
{
	unsigned k, i, cancelled_evicted = 0, cancelled;

	(void)state;
	for (k = 0; k < NR_POLICIES; k++) {
		deep_setup(policies[k], 0);
		deep_fill();
		/* Cancel every 97th request still queued, evicted or chained alike. */
		for (i = 0, cancelled = 0; i < DEEP; i += 97) {
			struct elv_request *rq = &dq.rq[i];

			if (dq.seen[i] || rq->state != ELV_RQ_QUEUED)
				continue;
			cancelled_evicted += elv_hash_is_evicted(rq) ? 1u : 0u;
			assert_int_equal(elv_cancel(dq.q, rq), 0);
			dq.seen[i]++;
			cancelled++;
		}
		assert_true(cancelled > DEEP / 97 / 2);
		assert_int_equal(elv_queue_check(dq.q), 0);
		deep_drain_all(DEEP);
		deep_teardown();
	}
	assert_true(cancelled_evicted > 0);
}

/*
 * The promise: the ELV_HASH_CHAIN_MAX requests hashed last are always found, so that many
 * interleaved sequential streams merge every request, with the queue far past nr_requests.
 */
static void deep_streams_still_merge(void **state)
{
	enum { STREAMS = ELV_HASH_CHAIN_MAX, ROUNDS = 12 };
	unsigned k, s, r, n, back0;
	uint64_t now = 1ull << 36;

	(void)state;
	for (k = 0; k < NR_POLICIES; k++) {
		deep_setup(policies[k], STREAMS * ROUNDS);
		deep_fill();
		back0 = dq.merges[ELV_MERGE_BACK];
		n = DEEP;
		for (r = 0; r < ROUNDS; r++) {
			for (s = 0; s < STREAMS; s++, n++) {
				struct elv_request *rq = &dq.rq[n];

				/* Upper half of the device, one region per stream, 4 KiB steps. */
				rq->sector = (1ull << 30) + (uint64_t)s * (1u << 20) + (uint64_t)r * 8;
				rq->nr_sectors = 8;
				rq->op = ELV_OP_WRITE;
				assert_int_equal(elv_add(dq.q, rq, now += 1000), r ? 1 : 0);
			}
		}
		assert_int_equal(dq.merges[ELV_MERGE_BACK] - back0, STREAMS * (ROUNDS - 1));
		assert_int_equal(elv_queue_check(dq.q), 0);
		/* Each stream's first request grew to cover all of its rounds. */
		for (s = 0; s < STREAMS; s++)
			assert_int_equal(dq.rq[DEEP + s].nr_sectors, ROUNDS * 8);
		deep_drain_all(DEEP + STREAMS * ROUNDS);
		deep_teardown();
	}
}

/* Is @i the only queued request that starts at its sector, with none ending 8 before it? */
static int lone_target(unsigned i)
{
	uint64_t at = dq.rq[i].sector;
	unsigned j;

	if (at < 8 || dq.seen[i])
		return 0;
	for (j = 0; j < DEEP; j++)
		if (j != i && !dq.seen[j] &&
		    (dq.rq[j].sector == at || elv_rq_end(&dq.rq[j]) == at - 8 ||
		     elv_rq_end(&dq.rq[j]) == at))
			return 0;
	return 1;
}

/*
 * Front merges do not depend on the chains: the tree policies still put a new request in front
 * of a queued one that the cap evicted from the hash.
 */
static void deep_front_merge_onto_evicted(void **state)
{
	static const char *const tree_policies[] = { "deadline", "anticipatory", "cfq" };
	unsigned k, i, tried = 0;

	(void)state;
	for (k = 0; k < 3; k++) {
		deep_setup(tree_policies[k], 1);
		deep_fill();
		for (i = 0; i < DEEP; i++)
			if (elv_hash_is_evicted(&dq.rq[i]) && lone_target(i))
				break;
		assert_true(i < DEEP);
		dq.rq[DEEP].sector = dq.rq[i].sector - 8;
		dq.rq[DEEP].nr_sectors = 8;
		dq.rq[DEEP].op = dq.rq[i].op;
		memset(dq.merges, 0, sizeof(dq.merges));
		assert_int_equal(elv_add(dq.q, &dq.rq[DEEP], 1ull << 36), 1);
		assert_int_equal(dq.merges[ELV_MERGE_FRONT], 1);
		assert_ptr_equal(dq.last_into, &dq.rq[i]);
		assert_int_equal(dq.rq[i].sector, dq.rq[DEEP].sector);
		assert_int_equal(dq.rq[i].nr_sectors, 16);
		assert_true(elv_hash_is_evicted(&dq.rq[i])); /* its end did not move */
		assert_int_equal(elv_queue_check(dq.q), 0);
		tried++;
		deep_drain_all(DEEP + 1);
		deep_teardown();
	}
	assert_int_equal(tried, 3);
}

/*
 * The policies' front-merge lookups skip requests at the same sector that cannot take the
 * merge, but at most ELV_SAME_SECTOR_SCAN of them: a write behind fewer discards at its sector
 * takes the front merge, one behind a pile of them is not looked for (the lookup stays short).
 */
static void same_sector_pile_is_bounded(void **state)
{
	static const char *const tree_policies[] = { "deadline", "anticipatory", "cfq" };
	static const unsigned piles[] = { ELV_SAME_SECTOR_SCAN - 1, 5000 };
	const uint64_t at = 1ull << 20;
	uint64_t now = 1000;
	unsigned k, p, i, runs = 0;

	(void)state;
	for (k = 0; k < 3; k++) {
		for (p = 0; p < 2; p++) {
			unsigned pile = piles[p];
			struct elv_request *w, *nw;

			deep_setup(tree_policies[k], pile + 2);
			for (i = 0; i < pile; i++) {
				dq.rq[i].sector = at;
				dq.rq[i].nr_sectors = 8;
				dq.rq[i].op = ELV_OP_DISCARD;
				assert_int_equal(elv_add(dq.q, &dq.rq[i], now += 1000), 0);
			}
			w = &dq.rq[pile];
			w->sector = at;
			w->nr_sectors = 8;
			w->op = ELV_OP_WRITE;
			assert_int_equal(elv_add(dq.q, w, now += 1000), 0);
			nw = &dq.rq[pile + 1];
			nw->sector = at - 8;
			nw->nr_sectors = 8;
			nw->op = ELV_OP_WRITE;
			assert_int_equal(elv_add(dq.q, nw, now += 1000), pile < ELV_SAME_SECTOR_SCAN);
			assert_int_equal(dq.merges[ELV_MERGE_FRONT], pile < ELV_SAME_SECTOR_SCAN);
			assert_int_equal(elv_queue_check(dq.q), 0);
			deep_drain_all(pile + 2);
			deep_teardown();
			runs++;
		}
	}
	assert_int_equal(runs, 6);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(del_head_middle_tail),
		cmocka_unit_test(chain_bound_evicts_oldest),
		cmocka_unit_test(evicted_belongs_to_its_hash),
		cmocka_unit_test(check_catches_long_chain),
		cmocka_unit_test(deep_queue_consistent),
		cmocka_unit_test(deep_streams_still_merge),
		cmocka_unit_test(deep_front_merge_onto_evicted),
		cmocka_unit_test(same_sector_pile_is_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
