/*
 * Zone write plugging (zone.h): the fact sheet's tests of the block layer's zone write
 * plugging, every refused input with nothing changed, appends, resets and finishes as
 * barriers, open and active zone limits, ordered transports, cancel, drain, requeue and
 * policy switches with held writes. The generic ones run under every built-in policy;
 * elv_queue_check() runs after every step.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "elevator/policy.h"
#include "support/request.h"

#define ZS 64u    /* zone size in sectors */
#define NZ 20u    /* zones */
#define NCONV 2u  /* conventional zones 0 and 1 */
#define Z 2u      /* the first sequential zone */
#define NRQ 160

struct zfx {
	struct elv_queue *q;
	struct elv_config cfg;
	struct elv_zone_geometry geo;
	struct elv_request rq[NRQ];
	struct elv_request *failed[NRQ];
	int failed_err[NRQ];
	int nr_failed;
	int nr_merged;
	int nr_drained;
	struct elv_request *drained[NRQ];
	uint64_t now;
};

static struct zfx fx;
static uint64_t qmem[8192]; /* 64 KiB: any built-in policy (about 5 KiB today) */
static uint64_t zmem[4096];

static void on_fail(void *ctx, struct elv_request *rq, int err)
{
	struct zfx *f = ctx;

	assert_int_equal(elv_add(f->q, rq, f->now), ELV_EBUSY); /* inside a callback */
	f->failed_err[f->nr_failed] = err;
	f->failed[f->nr_failed++] = rq;
}

static void on_merge(void *ctx, struct elv_request *into, struct elv_request *gone,
		     enum elv_merge_kind kind)
{
	(void)into;
	(void)gone;
	(void)kind;
	((struct zfx *)ctx)->nr_merged++;
}

static void on_drain(void *arg, struct elv_request *rq)
{
	struct zfx *f = arg;

	f->drained[f->nr_drained++] = rq;
}

static void chk(void)
{
	assert_int_equal(elv_queue_check(fx.q), 0);
}

static void geo_default(void)
{
	memset(&fx.geo, 0, sizeof(fx.geo));
	fx.geo.nr_sectors = (uint64_t)NZ * ZS;
	fx.geo.zone_sectors = ZS;
	fx.geo.nr_conv = NCONV;
}

/* A queue running @p with the zone stage of fx.geo (fx.cfg as set by the caller). */
static void zup(const struct elv_policy *p)
{
	size_t need = elv_queue_size_any(&fx.cfg);

	assert_true(need > 0 && need <= sizeof(qmem));
	fx.cfg.merge = on_merge;
	fx.cfg.ctx = &fx;
	assert_int_equal(elv_queue_init(&fx.q, qmem, sizeof(qmem), p, &fx.cfg), 0);
	assert_true(elv_zone_size(&fx.geo) <= sizeof(zmem));
	assert_int_equal(elv_zone_attach(fx.q, &fx.geo, zmem, sizeof(zmem), on_fail, &fx), 0);
	fx.nr_failed = fx.nr_merged = fx.nr_drained = 0;
	fx.now = 1000;
	chk();
}

/* Everything came back: the stage and the queue come apart cleanly. */
static void zdown(void)
{
	chk();
	assert_int_equal(elv_zone_detach(fx.q), 0);
	assert_int_equal(elv_queue_exit(fx.q), 0);
}

static int setup(void **state)
{
	(void)state;
	memset(&fx, 0, sizeof(fx));
	geo_default();
	return 0;
}

static struct elv_request *mk(int i, uint64_t sector, uint32_t n, uint8_t op, uint8_t flags)
{
	return test_rq(&fx.rq[i], sector, n, op, flags);
}

/* Write @i of @n sectors at offset @off of zone @z. */
static struct elv_request *W(int i, uint32_t z, uint32_t off, uint32_t n)
{
	return mk(i, (uint64_t)z * ZS + off, n, ELV_OP_WRITE, 0);
}

static int add(struct elv_request *rq)
{
	int r = elv_add(fx.q, rq, fx.now += 10);

	chk();
	return r;
}

static struct elv_request *disp(void)
{
	struct elv_request *rq = NULL;
	int r = elv_dispatch(fx.q, fx.now += 10, ELV_DISPATCH_FORCE, &rq);

	chk();
	if (r == ELV_EAGAIN)
		return NULL;
	assert_int_equal(r, 0);
	return rq;
}

static void fin(struct elv_request *rq, int status)
{
	assert_int_equal(elv_complete_status(fx.q, rq, status, fx.now += 10), 0);
	chk();
}

/* The next dispatch must be @rq; it completes with success. */
static void serve(struct elv_request *rq)
{
	assert_ptr_equal(disp(), rq);
	fin(rq, 0);
}

/* @rq is added, dispatched next and completed with success. */
static void through(struct elv_request *rq)
{
	assert_int_equal(add(rq), 0);
	serve(rq);
}

static struct elv_zone_info zi(uint32_t z)
{
	struct elv_zone_info i;

	assert_int_equal(elv_zone_get(fx.q, z, &i), 0);
	return i;
}

/* Everything the host can see of the queue, to prove a refused call changed nothing. */
struct snap {
	struct elv_stats st;
	struct elv_zone_info z[NZ];
	uint64_t next;
};

static void snap(struct snap *s)
{
	uint32_t i;

	memset(s, 0, sizeof(*s));
	assert_int_equal(elv_stats(fx.q, &s->st), 0);
	for (i = 0; i < NZ; i++)
		s->z[i] = zi(i);
	s->next = elv_next_event(fx.q);
}

/* @rq is refused with @err and nothing changes. */
static void refused(struct elv_request *rq, int err)
{
	struct snap a, b;
	struct elv_request copy = *rq;

	snap(&a);
	assert_int_equal(elv_add(fx.q, rq, fx.now + 5), err);
	chk();
	snap(&b);
	assert_memory_equal(&a, &b, sizeof(a));
	assert_int_equal(rq->sector, copy.sector);
	assert_int_equal(rq->state, ELV_RQ_IDLE);
}

/* Write @n sectors at zone @z's pointer and complete it. */
static void fill(int i, uint32_t z, uint32_t n)
{
	struct elv_request *rq = W(i, z, zi(z).wp, n);

	through(rq);
}

#define FOR_EACH_POLICY(p, i) for ((i) = 0; ((p) = elv_policy_at(i)) != NULL; (i)++)

/* ---- fact sheet 4.7 ------------------------------------------------------------------ */

/* 4.7.1: one write of Z on its way at a time, the next issued at each completion. */
static void test_47_1_one_in_flight(void **state)
{
	const struct elv_policy *p;
	unsigned i;
	struct elv_request *w1, *w2, *w3;

	(void)state;
	fx.cfg.no_merges = 1; /* units as the fact sheet counts them */
	FOR_EACH_POLICY(p, i) {
		zup(p);
		w1 = W(0, Z, 0, 8);
		assert_int_equal(add(w1), 0);
		assert_ptr_equal(disp(), w1);
		w2 = W(1, Z, 8, 8);
		w3 = W(2, Z, 16, 8);
		assert_int_equal(add(w2), 0);
		assert_int_equal(add(w3), 0);
		assert_int_equal(zi(Z).nr_held, 2);
		assert_int_equal(zi(Z).nr_out, 1);
		assert_null(disp());
		fin(w1, 0);
		assert_int_equal(zi(Z).nr_out, 1);
		assert_ptr_equal(disp(), w2);
		assert_null(disp());
		fin(w2, 0);
		assert_ptr_equal(disp(), w3);
		assert_int_equal(zi(Z).nr_out, 1);
		fin(w3, 0);
		assert_int_equal(zi(Z).wp, 24);
		assert_int_equal(zi(Z).cond, ELV_ZONE_CLOSED); /* partly written: still active */
		assert_int_equal(fx.nr_failed, 0);
		zdown();
	}
}

/* 4.7.2: a write off the pointer of an idle zone fails at once; the pointer stays. */
static void test_47_2_off_pointer(void **state)
{
	(void)state;
	zup(elv_policy_find("deadline"));
	fill(0, Z, 24);
	refused(W(1, Z, 32, 8), ELV_EINVAL);
	refused(W(1, Z, 16, 8), ELV_EINVAL);
	assert_int_equal(zi(Z).wp, 24);
	zdown();
}

/* 4.7.3: an emulated append goes to the pointer and says where it went. */
static void test_47_3_append(void **state)
{
	const struct elv_policy *p;
	unsigned i;
	struct elv_request *a, *w, *b;

	(void)state;
	FOR_EACH_POLICY(p, i) {
		zup(p);
		fill(0, Z, 24);
		a = mk(1, (uint64_t)Z * ZS, 8, ELV_OP_WRITE, ELV_RQ_ZONE_APPEND);
		assert_int_equal(add(a), 0);
		assert_ptr_equal(disp(), a);
		assert_int_equal(a->sector, Z * ZS + 24);
		assert_int_equal(a->op, ELV_OP_WRITE);
		fin(a, 0);
		assert_int_equal(a->sector, Z * ZS + 24);
		assert_true(a->flags & ELV_RQ_ZONE_APPEND);
		assert_int_equal(zi(Z).wp, 32);
		/* Behind a write in flight: held, then placed after it; never merged. */
		w = W(2, Z, 32, 8);
		assert_int_equal(add(w), 0);
		b = mk(3, (uint64_t)Z * ZS, 8, ELV_OP_WRITE, ELV_RQ_ZONE_APPEND);
		assert_int_equal(add(b), 0);
		assert_ptr_equal(disp(), w);
		assert_int_equal(w->nr_sectors, 8);
		assert_null(disp());
		fin(w, 0);
		assert_ptr_equal(disp(), b);
		assert_int_equal(b->sector, Z * ZS + 40);
		fin(b, 0);
		assert_int_equal(zi(Z).wp, 48);
		zdown();
	}
}

/* 4.7.4: a failed write fails the held ones; the zone refuses writes until reset/report. */
static void test_47_4_failure(void **state)
{
	const struct elv_policy *p;
	unsigned i;
	struct elv_request *w4, *w5, *w6, *r;

	(void)state;
	FOR_EACH_POLICY(p, i) {
		zup(p);
		fill(0, Z, 24);
		w4 = W(1, Z, 24, 8);
		assert_int_equal(add(w4), 0);
		assert_ptr_equal(disp(), w4);
		w5 = W(2, Z, 32, 8);
		w6 = W(3, Z, 40, 8);
		assert_int_equal(add(w5), 0);
		assert_int_equal(add(w6), 0);
		fin(w4, -5);
		assert_int_equal(fx.nr_failed, 2);
		assert_ptr_equal(fx.failed[0], w5);
		assert_ptr_equal(fx.failed[1], w6);
		assert_int_equal(fx.failed_err[0], ELV_EIO);
		assert_int_equal(w5->state, ELV_RQ_IDLE);
		assert_int_equal(zi(Z).need_wp_update, 1);
		assert_int_equal(zi(Z).nr_held, 0);
		refused(W(4, Z, 32, 8), ELV_EIO);
		refused(W(4, Z, 24, 8), ELV_EIO);
		/* A reset resynchronises the pointer: a write at offset 0 then works. */
		r = mk(5, (uint64_t)Z * ZS, ZS, ELV_OP_ZONE_RESET, 0);
		through(r);
		assert_int_equal(zi(Z).need_wp_update, 0);
		assert_int_equal(zi(Z).cond, ELV_ZONE_EMPTY);
		fill(6, Z, 8);
		assert_int_equal(zi(Z).wp, 8);
		/* So does a report of the pointer. */
		w4 = W(7, Z, 8, 8);
		assert_int_equal(add(w4), 0);
		assert_ptr_equal(disp(), w4);
		assert_int_equal(elv_zone_report(fx.q, Z, ELV_ZONE_CLOSED, 8), ELV_EBUSY);
		fin(w4, -5);
		assert_int_equal(elv_zone_report(fx.q, Z, ELV_ZONE_CLOSED, 16), 0);
		chk();
		fill(8, Z, 8);
		assert_int_equal(zi(Z).wp, 24);
		zdown();
	}
}

/* 4.7.5: 16 zones, 4 units each, noop, 32 slots: one write per zone in flight, reads pass. */
static void test_47_5_sixteen_zones(void **state)
{
	struct elv_request *rq, *inflight[32];
	uint32_t z, u, n = 0, writes = 0, reads = 0, done = 0;
	uint32_t next_off[NZ] = { 0 };

	(void)state;
	fx.cfg.no_merges = 1;
	zup(elv_policy_find("noop"));
	for (u = 0; u < 4; u++)
		for (z = Z; z < Z + 16; z++)
			assert_int_equal(add(W((int)(u * 16 + z - Z), z, u * 8, 8)), 0);
	for (z = 0; z < 4; z++)
		assert_int_equal(add(mk((int)(64 + z), (uint64_t)(Z + z) * ZS, 8, ELV_OP_READ, 0)),
				 0);
	while (n < 32 && (rq = disp()) != NULL) {
		inflight[n++] = rq;
		if (rq->op == ELV_OP_WRITE)
			writes++;
		else
			reads++;
	}
	assert_int_equal(writes, 16);
	assert_int_equal(reads, 4);
	for (z = Z; z < Z + 16; z++) {
		assert_int_equal(zi(z).nr_out, 1);
		assert_int_equal(zi(z).nr_held, 3);
	}
	/* Complete everything, always refilling: each zone's writes in LBA order. */
	while (n) {
		rq = inflight[--n];
		if (rq->op == ELV_OP_WRITE) {
			z = (uint32_t)(rq->sector / ZS);
			assert_int_equal(rq->sector, (uint64_t)z * ZS + next_off[z]);
			next_off[z] += 8;
			done++;
		}
		fin(rq, 0);
		while (n < 32 && (rq = disp()) != NULL)
			inflight[n++] = rq;
		for (z = Z; z < Z + 16; z++)
			assert_true(zi(z).nr_out <= 1);
	}
	assert_int_equal(done, 64);
	for (z = Z; z < Z + 16; z++)
		assert_int_equal(zi(z).wp, 32);
	zdown();
}

/* 4.7.6: a zone filled to its capacity closes; a further write fails: the zone is full. */
static void test_47_6_full(void **state)
{
	const struct elv_policy *p;
	unsigned i, k;

	(void)state;
	fx.geo.zone_capacity = 48;
	FOR_EACH_POLICY(p, i) {
		zup(p);
		for (k = 0; k < 6; k++)
			fill((int)k, Z, 8);
		assert_int_equal(zi(Z).cond, ELV_ZONE_FULL);
		assert_int_equal(zi(Z).wp, 48);
		assert_int_equal(zi(Z).nr_out, 0);
		refused(W(7, Z, 48, 8), ELV_ENOSPC);
		refused(W(7, Z, 0, 8), ELV_ENOSPC);
		refused(mk(7, (uint64_t)Z * ZS, 8, ELV_OP_WRITE, ELV_RQ_ZONE_APPEND), ELV_ENOSPC);
		/* Past the capacity of an empty zone. */
		refused(W(7, Z + 1, 0, 56), ELV_ENOSPC);
		zdown();
	}
}

/* Fact sheet 3.8 test 4 (zone write locking), which plugging keeps under deadline. */
static void test_38_4_locking(void **state)
{
	struct elv_request *w1, *w2, *w3, *a, *b;

	(void)state;
	fx.cfg.no_merges = 1;
	zup(elv_policy_find("deadline"));
	w1 = W(0, Z, 0, 8);
	w2 = W(1, Z, 8, 8);
	w3 = W(2, Z + 1, 0, 8);
	assert_int_equal(add(w1), 0);
	assert_int_equal(add(w2), 0);
	assert_int_equal(add(w3), 0);
	a = disp();
	b = disp();
	assert_true((a == w1 && b == w3) || (a == w3 && b == w1));
	assert_null(disp());
	fin(w1, 0);
	serve(w2);
	fin(w3, 0);
	zdown();
}

/*
 * Fact sheet 3.8 test 5 is where plugging differs from locking on purpose (4.8): a run of
 * writes across Z's end and Z + 1's start does not wait for Z's last write.
 */
static void test_38_5_next_zone_not_held(void **state)
{
	struct elv_request *a, *b;

	(void)state;
	fx.cfg.dev.rotational = 1;
	zup(elv_policy_find("deadline"));
	fill(0, Z, ZS - 8);
	a = W(1, Z, ZS - 8, 8);
	b = W(2, Z + 1, 0, 8);
	assert_int_equal(add(a), 0);
	assert_ptr_equal(disp(), a);
	assert_int_equal(add(b), 0);
	assert_ptr_equal(disp(), b); /* while a is in flight */
	fin(a, 0);
	fin(b, 0);
	zdown();
}

/* ---- merges ----------------------------------------------------------------------------- */

/* Writes waiting behind a queued write at the pointer join it; nothing crosses a zone. */
static void test_merge_at_pointer_only(void **state)
{
	const struct elv_policy *p;
	unsigned i;
	struct elv_request *w1, *c, *s, *a, *b;

	(void)state;
	FOR_EACH_POLICY(p, i) {
		zup(p);
		/* A conventional zone's write ending at the boundary, and the next zone's first. */
		c = W(3, NCONV - 1, ZS - 8, 8);
		s = W(4, NCONV, 0, 8);
		assert_int_equal(add(c), 0);
		assert_int_equal(add(s), 0);
		for (int k = 0; k < 2; k++) {
			struct elv_request *rq = disp();

			assert_non_null(rq);
			assert_int_equal(rq->nr_sectors, 8);
			fin(rq, 0);
		}
		/* The end of one sequential zone and the start of the next. */
		fill(5, Z + 1, ZS - 8);
		a = W(6, Z + 1, ZS - 8, 8);
		b = W(7, Z + 2, 0, 8);
		assert_int_equal(add(a), 0);
		assert_int_equal(add(b), 0);
		assert_int_equal(fx.nr_merged, 0);
		for (int k = 0; k < 2; k++) {
			struct elv_request *rq = disp();

			assert_non_null(rq);
			assert_int_equal(rq->nr_sectors, 8);
			fin(rq, 0);
		}
		assert_null(disp());
		assert_int_equal(zi(Z + 1).cond, ELV_ZONE_FULL);
		/* Writes held behind a queued write at the pointer join it. */
		w1 = W(0, Z, 8, 8);
		assert_int_equal(add(w1), 0);
		assert_int_equal(add(W(1, Z, 16, 8)), 0);
		assert_int_equal(add(W(2, Z, 24, 8)), 0);
		assert_ptr_equal(disp(), w1);
		if (strcmp(elv_policy_name(p), "fcfs") != 0) { /* fcfs never merges */
			assert_int_equal(w1->nr_sectors, 24);
			assert_int_equal(fx.nr_merged, 2);
			assert_int_equal(zi(Z).wp, 32);
			assert_int_equal(zi(Z).nr_held, 0);
		} else {
			assert_int_equal(zi(Z).nr_held, 2);
			fin(w1, 0);
			assert_ptr_equal(disp(), &fx.rq[1]);
			fin(&fx.rq[1], 0);
			w1 = disp();
			assert_ptr_equal(w1, &fx.rq[2]);
		}
		fin(w1, 0);
		assert_int_equal(zi(Z).wp, 32);
		zdown();
	}
}

/* ---- bad input -------------------------------------------------------------------------- */

static void test_bad_geometry(void **state)
{
	struct elv_zone_geometry g;
	uint64_t small[4];
	int k;

	(void)state;
	for (k = 0; k < 11; k++) {
		geo_default();
		g = fx.geo;
		switch (k) {
		case 0: g.zone_sectors = 0; break;
		case 1: g.zone_sectors = 96; break;     /* not a power of two */
		case 2: g.zone_sectors = 4; break;      /* below 8 */
		case 3: g.zone_capacity = ZS + 8; break;
		case 4: g.nr_sectors = 0; break;
		case 5: g.nr_conv = NZ + 1; break;
		case 6: g.max_open = 4; g.max_active = 2; break;
		case 7: g.reserved[1] = 1; break;
		case 8: g.reserved8[0] = 1; break;
		case 9: g.ordered = 2; break;
		default: g.nr_sectors = (uint64_t)ZS << 33; break; /* 2^33 zones */
		}
		assert_int_equal(elv_zone_size(&g), 0);
		fx.geo = g;
		assert_int_equal(elv_queue_init(&fx.q, qmem, sizeof(qmem), elv_policy_find("noop"),
						NULL),
				 0);
		assert_int_equal(elv_zone_attach(fx.q, &g, zmem, sizeof(zmem), on_fail, &fx),
				 ELV_EINVAL);
		assert_int_equal(elv_zone_detach(fx.q), ELV_EINVAL);
		assert_int_equal(elv_queue_exit(fx.q), 0);
	}
	assert_int_equal(elv_zone_size(NULL), 0);
	geo_default();
	g = fx.geo;
	g.nr_conv = NZ; /* all conventional: fine */
	assert_int_not_equal(elv_zone_size(&g), 0);
	assert_int_equal(elv_queue_init(&fx.q, qmem, sizeof(qmem), elv_policy_find("noop"), NULL),
			 0);
	assert_int_equal(elv_zone_attach(fx.q, &fx.geo, small, sizeof(small), on_fail, &fx),
			 ELV_ENOSPC);
	assert_int_equal(elv_zone_attach(fx.q, &fx.geo, (char *)zmem + 4, sizeof(zmem) - 8,
					 on_fail, &fx),
			 ELV_EINVAL);
	assert_int_equal(elv_zone_attach(fx.q, &fx.geo, zmem, sizeof(zmem), NULL, &fx),
			 ELV_EINVAL);
	assert_int_equal(elv_zone_attach(NULL, &fx.geo, zmem, sizeof(zmem), on_fail, &fx),
			 ELV_EINVAL);
	/* Without a zone stage, zone operations and the append flag are unknown. */
	assert_int_equal(elv_add(fx.q, mk(0, 0, ZS, ELV_OP_ZONE_RESET, 0), 1), ELV_EINVAL);
	assert_int_equal(elv_add(fx.q, mk(0, 0, 8, ELV_OP_WRITE, ELV_RQ_ZONE_APPEND), 1),
			 ELV_EINVAL);
	assert_int_equal(elv_zone_report(fx.q, Z, ELV_ZONE_EMPTY, 0), ELV_EINVAL);
	{
		struct elv_zone_info info;
		uint32_t zn;

		assert_int_equal(elv_zone_get(fx.q, Z, &info), ELV_EINVAL);
		assert_int_equal(elv_zone_of(fx.q, 0, &zn), ELV_EINVAL);
	}
	/* A queued or in-flight request: the stage would not know it. */
	assert_int_equal(elv_add(fx.q, mk(0, 0, 8, ELV_OP_READ, 0), 1), 0);
	assert_int_equal(elv_zone_attach(fx.q, &fx.geo, zmem, sizeof(zmem), on_fail, &fx),
			 ELV_EBUSY);
	{
		struct elv_request *rq;

		assert_int_equal(elv_dispatch(fx.q, 2, 0, &rq), 0);
		assert_int_equal(elv_zone_attach(fx.q, &fx.geo, zmem, sizeof(zmem), on_fail, &fx),
				 ELV_EBUSY);
		assert_int_equal(elv_complete(fx.q, rq, 3), 0);
	}
	assert_int_equal(elv_zone_attach(fx.q, &fx.geo, zmem, sizeof(zmem), on_fail, &fx), 0);
	assert_int_equal(elv_zone_attach(fx.q, &fx.geo, zmem, sizeof(zmem), on_fail, &fx),
			 ELV_EBUSY);
	assert_int_equal(elv_zone_detach(fx.q), 0);
	assert_int_equal(elv_zone_detach(fx.q), ELV_EINVAL);
	assert_int_equal(elv_queue_exit(fx.q), 0);
	assert_int_equal(elv_zone_detach(fx.q), ELV_EINVAL); /* torn down */
}

/* Each refused request leaves the queue and every zone as they were. */
static void test_bad_requests(void **state)
{
	struct elv_request *w, *r;

	(void)state;
	zup(elv_policy_find("cfq"));
	fill(0, Z, 16);
	refused(W(1, Z, ZS - 8, 16), ELV_EINVAL);               /* crosses into Z + 1 */
	refused(W(1, 0, ZS - 8, 16), ELV_EINVAL);               /* crosses conventional zones */
	refused(W(1, NZ, 0, 8), ELV_ERANGE);                    /* past the last zone */
	refused(mk(1, (uint64_t)NZ * ZS, ZS, ELV_OP_ZONE_RESET, 0), ELV_ERANGE);
	refused(mk(1, (uint64_t)Z * ZS + 8, 8, ELV_OP_WRITE, ELV_RQ_ZONE_APPEND), ELV_EINVAL);
	refused(mk(1, 0, 8, ELV_OP_WRITE, ELV_RQ_ZONE_APPEND), ELV_EINVAL); /* conventional */
	refused(mk(1, (uint64_t)Z * ZS, 8, ELV_OP_READ, ELV_RQ_ZONE_APPEND), ELV_EINVAL);
	refused(mk(1, 0, ZS, ELV_OP_ZONE_RESET, 0), ELV_EINVAL);            /* conventional */
	refused(mk(1, 0, ZS, ELV_OP_ZONE_FINISH, 0), ELV_EINVAL);
	refused(mk(1, (uint64_t)Z * ZS, ZS - 8, ELV_OP_ZONE_RESET, 0), ELV_EINVAL); /* not whole */
	refused(mk(1, (uint64_t)Z * ZS + 8, ZS - 8, ELV_OP_ZONE_FINISH, 0), ELV_EINVAL);
	refused(mk(1, 0, 8, 6, 0), ELV_EINVAL);                /* no such operation */
	/* Read-only and offline zones. */
	assert_int_equal(elv_zone_report(fx.q, Z + 1, ELV_ZONE_READONLY, 0), 0);
	assert_int_equal(elv_zone_report(fx.q, Z + 2, ELV_ZONE_OFFLINE, 0), 0);
	chk();
	refused(W(1, Z + 1, 0, 8), ELV_EIO);
	refused(W(1, Z + 2, 0, 8), ELV_EIO);
	refused(mk(1, (uint64_t)(Z + 2) * ZS, ZS, ELV_OP_ZONE_RESET, 0), ELV_EIO);
	assert_int_equal(zi(Z + 1).cond, ELV_ZONE_READONLY);
	r = mk(2, (uint64_t)(Z + 2) * ZS, 8, ELV_OP_READ, 0); /* reads are not the stage's */
	through(r);
	/* Reset or finish with writes of the zone on their way or held. */
	w = W(3, Z, 16, 8);
	assert_int_equal(add(w), 0);
	refused(mk(4, (uint64_t)Z * ZS, ZS, ELV_OP_ZONE_RESET, 0), ELV_EBUSY);
	assert_ptr_equal(disp(), w);
	refused(mk(4, (uint64_t)Z * ZS, ZS, ELV_OP_ZONE_RESET, 0), ELV_EBUSY);
	refused(mk(4, (uint64_t)Z * ZS, ZS, ELV_OP_ZONE_FINISH, 0), ELV_EBUSY);
	assert_int_equal(add(W(5, Z, 24, 8)), 0);
	fin(w, 0);
	refused(mk(4, (uint64_t)Z * ZS, ZS, ELV_OP_ZONE_RESET, 0), ELV_EBUSY); /* 5 queued */
	w = disp();
	assert_ptr_equal(w, &fx.rq[5]);
	fin(w, 0);
	/* A second reset while one is under way. */
	r = mk(6, (uint64_t)Z * ZS, ZS, ELV_OP_ZONE_RESET, 0);
	assert_int_equal(add(r), 0);
	refused(mk(7, (uint64_t)Z * ZS, ZS, ELV_OP_ZONE_RESET, 0), ELV_EBUSY);
	serve(r);
	/* Reports that do not fit. */
	assert_int_equal(elv_zone_report(fx.q, NZ, ELV_ZONE_EMPTY, 0), ELV_ERANGE);
	assert_int_equal(elv_zone_report(fx.q, 0, ELV_ZONE_EMPTY, 0), ELV_EINVAL);
	assert_int_equal(elv_zone_report(fx.q, 0, ELV_ZONE_NOT_WP, 0), 0);
	assert_int_equal(elv_zone_report(fx.q, Z, ELV_ZONE_NOT_WP, 0), ELV_EINVAL);
	assert_int_equal(elv_zone_report(fx.q, Z, ELV_ZONE_EMPTY, 8), ELV_EINVAL);
	assert_int_equal(elv_zone_report(fx.q, Z, ELV_ZONE_CLOSED, 0), ELV_EINVAL);
	assert_int_equal(elv_zone_report(fx.q, Z, ELV_ZONE_CLOSED, ZS), ELV_EINVAL);
	assert_int_equal(elv_zone_report(fx.q, Z, 9, 0), ELV_EINVAL);
	assert_int_equal(elv_zone_report(NULL, Z, ELV_ZONE_EMPTY, 0), ELV_EINVAL);
	assert_int_equal(zi(Z).cond, ELV_ZONE_EMPTY);
	assert_int_equal(elv_zone_get(fx.q, NZ, &(struct elv_zone_info){ 0 }), ELV_ERANGE);
	assert_int_equal(elv_zone_get(fx.q, Z, NULL), ELV_EINVAL);
	{
		uint32_t zn = 0;

		assert_int_equal(elv_zone_of(fx.q, (uint64_t)NZ * ZS, &zn), ELV_ERANGE);
		assert_int_equal(elv_zone_of(fx.q, (uint64_t)Z * ZS + 5, &zn), 0);
		assert_int_equal(zn, Z);
	}
	/* A completion status above 0 is not an outcome. */
	w = W(8, Z, 0, 8);
	assert_int_equal(add(w), 0);
	assert_ptr_equal(disp(), w);
	assert_int_equal(elv_complete_status(fx.q, w, 1, fx.now), ELV_EINVAL);
	chk();
	fin(w, 0);
	assert_int_equal(fx.nr_failed, 0);
	zdown();
}

/* A smaller last zone: its size and capacity are its own. */
static void test_partial_last_zone(void **state)
{
	struct elv_request *r;

	(void)state;
	fx.geo.nr_sectors = (uint64_t)NZ * ZS - 24;
	zup(elv_policy_find("deadline"));
	assert_int_equal(zi(NZ - 1).nr_sectors, 40);
	assert_int_equal(zi(NZ - 1).capacity, 40);
	refused(W(0, NZ - 1, 32, 16), ELV_ERANGE);
	refused(mk(0, (uint64_t)(NZ - 1) * ZS, ZS, ELV_OP_ZONE_FINISH, 0), ELV_ERANGE);
	refused(mk(0, (uint64_t)(NZ - 1) * ZS, 32, ELV_OP_ZONE_FINISH, 0), ELV_EINVAL);
	r = mk(0, (uint64_t)(NZ - 1) * ZS, 40, ELV_OP_ZONE_FINISH, 0);
	through(r);
	assert_int_equal(zi(NZ - 1).cond, ELV_ZONE_FULL);
	zdown();
}

/* ---- zone operations, limits, transports ------------------------------------------------ */

/* Writes added after a reset or finish wait for it, or see the zone it leaves. */
static void test_reset_finish_barriers(void **state)
{
	const struct elv_policy *p;
	unsigned i;
	struct elv_request *r, *w, *rd;

	(void)state;
	FOR_EACH_POLICY(p, i) {
		zup(p);
		fill(0, Z, 16);
		r = mk(1, (uint64_t)Z * ZS, ZS, ELV_OP_ZONE_RESET, 0);
		assert_int_equal(add(r), 0);
		assert_int_equal(zi(Z).busy, 1);
		w = W(2, Z, 0, 8);
		assert_int_equal(add(w), 0); /* at the pointer the reset leaves */
		assert_ptr_equal(disp(), r);
		rd = mk(4, (uint64_t)Z * ZS, 8, ELV_OP_READ, 0);
		assert_int_equal(add(rd), 0);
		assert_ptr_equal(disp(), rd); /* reads pass the held write */
		assert_null(disp());
		assert_int_equal(zi(Z).nr_held, 1);
		fin(rd, 0);
		fin(r, 0);
		serve(w);
		assert_int_equal(zi(Z).wp, 8);
		/* Finish: the zone is full for every write added after it. */
		r = mk(5, (uint64_t)Z * ZS, ZS, ELV_OP_ZONE_FINISH, 0);
		assert_int_equal(add(r), 0);
		refused(W(6, Z, 8, 8), ELV_ENOSPC);
		serve(r);
		assert_int_equal(zi(Z).cond, ELV_ZONE_FULL);
		/* A failed reset leaves the pointer unknown. */
		r = mk(7, (uint64_t)Z * ZS, ZS, ELV_OP_ZONE_RESET, 0);
		assert_int_equal(add(r), 0);
		assert_ptr_equal(disp(), r);
		fin(r, -5);
		assert_int_equal(zi(Z).need_wp_update, 1);
		refused(W(8, Z, 0, 8), ELV_EIO);
		assert_int_equal(elv_zone_report(fx.q, Z, ELV_ZONE_EMPTY, 0), 0);
		fill(9, Z, 8);
		zdown();
	}
}

/* A zone past max_open waits for an open zone to close; past max_active is refused. */
static void test_open_active_limits(void **state)
{
	struct elv_request *a, *b, *c, *f;

	(void)state;
	fx.geo.max_open = 2;
	fx.geo.max_active = 3;
	zup(elv_policy_find("deadline"));
	a = W(0, Z, 0, 8);
	b = W(1, Z + 1, 0, 8);
	c = W(2, Z + 2, 0, 8);
	assert_int_equal(add(a), 0);
	assert_int_equal(add(b), 0);
	assert_int_equal(add(c), 0);
	assert_int_equal(zi(Z + 2).waiting, 1);
	assert_int_equal(zi(Z + 2).nr_held, 1);
	refused(W(3, Z + 3, 0, 8), ELV_EAGAIN); /* a, b, c make three active */
	assert_non_null(disp());
	assert_non_null(disp());
	assert_null(disp());
	fin(a, 0);
	assert_int_equal(zi(Z + 2).waiting, 0);
	assert_ptr_equal(disp(), c);
	fin(b, 0);
	fin(c, 0);
	/* Three zones partly written: active, though none is open. */
	assert_int_equal(zi(Z).cond, ELV_ZONE_CLOSED);
	refused(W(3, Z + 3, 0, 8), ELV_EAGAIN);
	assert_int_equal(add(W(4, Z, 8, 8)), 0); /* an active zone takes writes */
	fin(disp(), 0);
	/* Finishing one frees an active slot. */
	f = mk(5, (uint64_t)(Z + 1) * ZS, ZS, ELV_OP_ZONE_FINISH, 0);
	through(f);
	fill(6, Z + 3, 8);
	/* A waiting write can be cancelled; its zone stops waiting. */
	a = W(7, Z, 16, 8);
	b = W(8, Z + 2, 8, 8);
	c = W(9, Z + 3, 8, 8);
	assert_int_equal(add(a), 0);
	assert_int_equal(add(b), 0);
	assert_int_equal(add(c), 0);
	assert_int_equal(zi(Z + 3).waiting, 1);
	assert_int_equal(elv_cancel(fx.q, c), 0);
	chk();
	assert_int_equal(zi(Z + 3).waiting, 0);
	fin(disp(), 0);
	fin(disp(), 0);
	assert_null(disp());
	zdown();
}

/* An ordered transport: several writes of a zone in flight, never two in the policy. */
static void test_ordered_transport(void **state)
{
	const struct elv_policy *p;
	unsigned i;
	struct elv_request *w[3];

	(void)state;
	fx.geo.ordered = 1;
	fx.cfg.no_merges = 1;
	FOR_EACH_POLICY(p, i) {
		zup(p);
		w[0] = W(0, Z, 0, 8);
		w[1] = W(1, Z, 8, 8);
		w[2] = W(2, Z, 16, 8);
		assert_int_equal(add(w[0]), 0);
		assert_int_equal(add(w[1]), 0);
		assert_int_equal(add(w[2]), 0);
		assert_int_equal(zi(Z).nr_out, 1);
		assert_int_equal(zi(Z).nr_held, 2);
		assert_ptr_equal(disp(), w[0]);
		assert_ptr_equal(disp(), w[1]);
		assert_ptr_equal(disp(), w[2]);
		assert_int_equal(zi(Z).nr_out, 3);
		fin(w[0], 0);
		fin(w[1], 0);
		fin(w[2], 0);
		assert_int_equal(zi(Z).wp, 24);
		zdown();
	}
}

/* ---- cancel, drain, requeue, switch -------------------------------------------------------- */

static void test_cancel_drain_requeue(void **state)
{
	const struct elv_policy *p;
	unsigned i;
	struct elv_request *w1, *w2, *w3, *a;
	struct elv_stats st;

	(void)state;
	fx.cfg.no_merges = 1;
	FOR_EACH_POLICY(p, i) {
		zup(p);
		/* Held writes count as queued, and cancel returns them. */
		w1 = W(0, Z, 0, 8);
		w2 = W(1, Z, 8, 8);
		assert_int_equal(add(w1), 0);
		assert_ptr_equal(disp(), w1);
		assert_int_equal(add(w2), 0);
		assert_int_equal(elv_stats(fx.q, &st), 0);
		assert_int_equal(st.queued, 1);
		assert_int_equal(elv_cancel(fx.q, w2), 0);
		chk();
		assert_int_equal(elv_cancel(fx.q, w2), ELV_EINVAL);
		assert_int_equal(zi(Z).nr_held, 0);
		/* Requeue keeps the zone's order. */
		assert_int_equal(add(w2), 0);
		assert_int_equal(elv_requeue(fx.q, w1, fx.now += 10), 0);
		chk();
		serve(w1);
		serve(w2);
		/* A write passed on but still queued, cancelled: the pointer goes back. */
		w1 = W(2, Z, 16, 8);
		w2 = W(3, Z, 24, 8);
		assert_int_equal(add(w1), 0);
		assert_int_equal(add(w2), 0);
		assert_int_equal(zi(Z).wp, 24);
		assert_int_equal(elv_cancel(fx.q, w1), 0);
		chk();
		assert_int_equal(zi(Z).wp, 16);
		assert_null(disp()); /* w2 is off the pointer now */
		assert_int_equal(fx.nr_failed, 1);
		assert_ptr_equal(fx.failed[0], w2);
		assert_int_equal(fx.failed_err[0], ELV_EINVAL);
		/* Drain: the policy's, then the held ones; an append gets its zone start back. */
		a = mk(4, (uint64_t)Z * ZS, 8, ELV_OP_WRITE, ELV_RQ_ZONE_APPEND);
		w2 = W(5, Z, 24, 8);
		w3 = W(6, Z, 32, 8);
		assert_int_equal(add(a), 0);
		assert_int_equal(a->sector, Z * ZS + 16);
		assert_int_equal(add(w2), 0);
		assert_int_equal(add(w3), 0);
		assert_int_equal(elv_drain(fx.q, on_drain, &fx), 3);
		chk();
		assert_ptr_equal(fx.drained[0], a);
		assert_ptr_equal(fx.drained[1], w2);
		assert_ptr_equal(fx.drained[2], w3);
		assert_int_equal(a->sector, Z * ZS);
		assert_int_equal(zi(Z).wp, 16);
		assert_int_equal(zi(Z).nr_out, 0);
		assert_int_equal(zi(Z).nr_held, 0);
		fill(7, Z, 8);
		zdown();
	}
}

/* Held writes stay with the stage when the policy changes, under every pair. */
static void test_switch_keeps_held(void **state)
{
	const struct elv_policy *p, *to;
	unsigned i, j;
	struct elv_request *w1, *w2;

	(void)state;
	FOR_EACH_POLICY(p, i) {
		zup(p);
		w1 = W(0, Z, 0, 2);
		assert_int_equal(add(w1), 0);
		assert_ptr_equal(disp(), w1);
		for (j = 0; (to = elv_policy_at(j)) != NULL; j++) {
			assert_true(2 * (j + 2) <= ZS);
			w2 = W((int)j + 1, Z, 2 * (j + 1), 2);
			assert_int_equal(add(w2), 0);
			assert_int_equal(zi(Z).nr_held, 1);
			assert_int_equal(elv_switch(fx.q, to, fx.now += 10), 0);
			chk();
			assert_int_equal(zi(Z).nr_held, 1);
			fin(w1, 0);
			assert_ptr_equal(disp(), w2);
			w1 = w2;
		}
		fin(w1, 0);
		assert_int_equal(elv_switch(fx.q, p, fx.now), 0);
		zdown();
	}
}

/* Nothing the zone stage holds waits for time. */
static void test_no_timed_events(void **state)
{
	(void)state;
	zup(elv_policy_find("noop"));
	fill(0, Z, 8);
	assert_int_equal(add(W(1, Z, 8, 8)), 0);
	assert_int_equal(add(W(2, Z, 16, 8)), 0);
	assert_int_equal(elv_next_event(fx.q), ELV_TIME_NEVER);
	fin(disp(), 0);
	zdown();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_47_1_one_in_flight, setup),
		cmocka_unit_test_setup(test_47_2_off_pointer, setup),
		cmocka_unit_test_setup(test_47_3_append, setup),
		cmocka_unit_test_setup(test_47_4_failure, setup),
		cmocka_unit_test_setup(test_47_5_sixteen_zones, setup),
		cmocka_unit_test_setup(test_47_6_full, setup),
		cmocka_unit_test_setup(test_38_4_locking, setup),
		cmocka_unit_test_setup(test_38_5_next_zone_not_held, setup),
		cmocka_unit_test_setup(test_merge_at_pointer_only, setup),
		cmocka_unit_test_setup(test_bad_geometry, setup),
		cmocka_unit_test_setup(test_bad_requests, setup),
		cmocka_unit_test_setup(test_partial_last_zone, setup),
		cmocka_unit_test_setup(test_reset_finish_barriers, setup),
		cmocka_unit_test_setup(test_open_active_limits, setup),
		cmocka_unit_test_setup(test_ordered_transport, setup),
		cmocka_unit_test_setup(test_cancel_drain_requeue, setup),
		cmocka_unit_test_setup(test_switch_keeps_held, setup),
		cmocka_unit_test_setup(test_no_timed_events, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
