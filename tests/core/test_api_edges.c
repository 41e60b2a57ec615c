/*
 * The public calls of the zone stage (zone.h), the QoS stage (qos.h), streams and groups
 * (weights, membership) and elv_complete_status(), attacked at their edges: NULL arguments,
 * a torn-down queue, streams, groups and clients of another queue, weights and settings out
 * of range, zone geometries that do not add up, every refused write and zone operation,
 * attach and detach at the wrong moment, and calls from inside every host callback. Each
 * refused call must return the documented code and leave the queue exactly as it was: its
 * counters, its queued count, its invariants, its next event, every zone's state, every
 * weight and group, every QoS setting, and its clock. bfq's tunables are refused outside
 * their ranges and run at both ends of them. Last, long random runs under bfq with both
 * stages (which come and go, as do streams, groups and QoS clients), where every request
 * handed to the queue must come back exactly once.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "elevator/policy.h"
#include "support/request.h"

#define ZS 64u   /* zone size in sectors */
#define NZ 16u   /* zones */
#define NCONV 2u /* conventional zones 0 and 1 */
#define Z 2u     /* the first sequential zone */
#define NS 6     /* streams */
#define NG 3     /* groups */
#define NC (NS + NG) /* QoS clients: one per stream, one per group */
#define NRQ 256  /* requests */
#define DEPTH 8  /* fake device queue depth */
#ifndef SEEDS
#define SEEDS 4 /* random runs */
#endif
#define LEN(a) ((unsigned)(sizeof(a) / sizeof((a)[0])))

/* Where each request is, as the host sees it. */
enum { H_FREE = 0, H_ADDING, H_LIB, H_FLIGHT };

struct fix {
	struct elv_queue *q, *q2;
	struct elv_config cfg;
	struct elv_zone_geometry geo;
	struct elv_stream s[NS], s2;
	struct elv_group g[NG], g2;
	struct elv_qos_client c[NC], c2;
	/* churned by the random run: a spare stream and group, both stages on and off */
	struct elv_stream sx;
	struct elv_group gx;
	struct elv_qos_client cx, cgx; /* the spare stream's and the spare group's */
	int sx_on, gx_on, zone_on, qos_on;
	struct elv_request rq[NRQ];
	uint8_t hs[NRQ];
	uint64_t now;
	/* what came back, and how */
	uint64_t accepted, completed, cancelled, drained, failed, merged;
	int probe_on;        /* non-zero: the callbacks probe the queue */
	uint8_t probe_trace; /* trace event type that triggers a probe */
	unsigned probes;     /* probes run */
	struct elv_request *inflight[NRQ];
	unsigned nr_inflight;
	unsigned err_mask; /* bit -err of every error the zone stage gave a request back with */
	uint64_t complete_arg; /* arg of the last ELV_TRACE_COMPLETE */
	unsigned cancel_args;  /* bit arg of every ELV_TRACE_CANCEL with an error */
	int no_switch;         /* the random run keeps its policy */
	int veto;              /* allow_merge refuses every other merge */
	unsigned veto_count;
};

static struct fix fx;
static uint64_t qmem[1u << 17], qmem2[1u << 17]; /* 1 MiB each: any built-in policy */
static uint64_t zmem[2048], zmem2[2048];
static struct elv_qos qos, qos2;

/* ---- state snapshots ------------------------------------------------------------------ */

struct snap {
	struct elv_stats st;
	uint32_t nr_queued;
	int check;
	uint64_t next;
	int zrc;
	struct elv_zone_info zi[NZ];
	uint16_t sw[NS];
	const struct elv_group *sg[NS];
	uint16_t gw[NG];
	int qrc;
	struct elv_qos_settings qset;
	int crc[NC];
	struct elv_throttle_settings thr[NC];
	struct elv_mclock_settings mc[NC];
	struct elv_qos_client_stats cst[NC];
};

static struct elv_qos_client *cl_of(int i)
{
	return &fx.c[i];
}

/* Everything a refused call must leave as it was. */
static void snap_take(const struct elv_queue *q, struct snap *sn)
{
	unsigned i;

	memset(sn, 0, sizeof(*sn));
	assert_int_equal(elv_stats(q, &sn->st), 0);
	sn->nr_queued = elv_queue_nr_queued(q);
	sn->check = elv_queue_check(q);
	sn->next = elv_next_event(q);
	sn->zrc = 0;
	for (i = 0; i < NZ; i++) {
		int r = elv_zone_get(q, i, &sn->zi[i]);

		sn->zrc |= r ? 1 << (i & 15) : 0;
	}
	for (i = 0; i < NS; i++) {
		sn->sw[i] = fx.s[i].weight;
		sn->sg[i] = elv_stream_group(&fx.s[i]);
	}
	for (i = 0; i < NG; i++)
		sn->gw[i] = fx.g[i].weight;
	sn->qrc = elv_qos_get(q, &sn->qset);
	for (i = 0; i < NC; i++) {
		sn->crc[i] = elv_qos_get_throttle(q, cl_of((int)i), &sn->thr[i]);
		if (sn->crc[i] == 0) {
			assert_int_equal(elv_qos_get_mclock(q, cl_of((int)i), &sn->mc[i]), 0);
			assert_int_equal(elv_qos_client_stats(q, cl_of((int)i), &sn->cst[i]), 0);
		}
	}
}

static void snap_same(const struct snap *a, const struct snap *b)
{
	assert_memory_equal(&a->st, &b->st, sizeof(a->st));
	assert_int_equal(a->nr_queued, b->nr_queued);
	assert_int_equal(a->check, b->check);
	assert_true(a->next == b->next);
	assert_int_equal(a->zrc, b->zrc);
	assert_memory_equal(a->zi, b->zi, sizeof(a->zi));
	assert_memory_equal(a->sw, b->sw, sizeof(a->sw));
	assert_memory_equal(a->sg, b->sg, sizeof(a->sg));
	assert_memory_equal(a->gw, b->gw, sizeof(a->gw));
	assert_int_equal(a->qrc, b->qrc);
	assert_memory_equal(&a->qset, &b->qset, sizeof(a->qset));
	assert_memory_equal(a->crc, b->crc, sizeof(a->crc));
	assert_memory_equal(a->thr, b->thr, sizeof(a->thr));
	assert_memory_equal(a->mc, b->mc, sizeof(a->mc));
	assert_memory_equal(a->cst, b->cst, sizeof(a->cst));
}

/* @call must return @want and change nothing on fx.q. */
#define REFUSED(want, call)                                                                   \
	do {                                                                                  \
		struct snap before_, after_;                                                  \
		snap_take(fx.q, &before_);                                                    \
		assert_int_equal((call), (want));                                             \
		snap_take(fx.q, &after_);                                                     \
		snap_same(&before_, &after_);                                                 \
	} while (0)

static void chk(void)
{
	assert_int_equal(elv_queue_check(fx.q), 0);
}

/* Requests the queue holds and has not dispatched: the policy's, and the stages' too. */
static uint32_t queued(void)
{
	struct elv_stats st;

	assert_int_equal(elv_stats(fx.q, &st), 0);
	return st.queued;
}

/* ---- host callbacks ------------------------------------------------------------------- */

static void set_hs(struct elv_request *rq, uint8_t from, uint8_t to)
{
	long i = rq - fx.rq;

	assert_true(i >= 0 && i < NRQ);
	assert_int_equal(fx.hs[i], from);
	fx.hs[i] = to;
}

static void probe(void);

/* A request handed back inside a callback may go to another queue at once. */
static void bounce(struct elv_request *rq)
{
	struct elv_stream *s = rq->stream;
	uint8_t flags = rq->flags;

	if (rq->op > ELV_OP_FLUSH)
		return; /* a zone operation: fx.q2 has no zone stage */
	rq->stream = NULL; /* fx.q's streams are not fx.q2's */
	rq->flags &= (uint8_t)~ELV_RQ_ZONE_APPEND;
	assert_int_equal(elv_add(fx.q2, rq, fx.now), 0);
	assert_int_equal(elv_queue_check(fx.q2), 0);
	assert_int_equal(elv_cancel(fx.q2, rq), 0);
	rq->stream = s;
	rq->flags = flags;
}

static void on_fail(void *ctx, struct elv_request *rq, int err)
{
	(void)ctx;
	assert_true(err == ELV_EIO || err == ELV_EINVAL || err == ELV_ENOSPC || err == ELV_EAGAIN);
	fx.err_mask |= 1u << (-err & 31);
	set_hs(rq, H_LIB, H_FREE);
	fx.failed++;
	if (fx.probe_on) {
		probe();
		bounce(rq);
	}
}

static void on_merge(void *ctx, struct elv_request *into, struct elv_request *gone,
		     enum elv_merge_kind kind)
{
	long i = gone - fx.rq;

	(void)ctx;
	(void)kind;
	assert_true(i >= 0 && i < NRQ);
	assert_int_equal(fx.hs[into - fx.rq], H_LIB);
	assert_true(fx.hs[i] == H_LIB || fx.hs[i] == H_ADDING);
	fx.hs[i] = H_FREE;
	fx.merged++;
	if (fx.probe_on) {
		probe();
		bounce(gone);
	}
}

static int on_allow(void *ctx, const struct elv_request *rq, const struct elv_request *next,
		    enum elv_merge_kind kind)
{
	(void)ctx;
	(void)rq;
	(void)next;
	(void)kind;
	if (fx.probe_on)
		probe();
	return !fx.veto || (++fx.veto_count & 1);
}

static void on_trace(void *ctx, const struct elv_trace_event *ev)
{
	(void)ctx;
	if (ev->type == ELV_TRACE_COMPLETE)
		fx.complete_arg = ev->arg;
	if (ev->type == ELV_TRACE_CANCEL && ev->arg)
		fx.cancel_args |= 1u << (ev->arg & 31);
	if (fx.probe_on && ev->type == fx.probe_trace)
		probe();
}

static void on_drain(void *arg, struct elv_request *rq)
{
	(void)arg;
	set_hs(rq, H_LIB, H_FREE);
	fx.drained++;
	if (fx.probe_on) {
		probe();
		bounce(rq);
	}
}

/* ---- queues --------------------------------------------------------------------------- */

static void geo_default(struct elv_zone_geometry *g)
{
	memset(g, 0, sizeof(*g));
	g->nr_sectors = (uint64_t)NZ * ZS;
	g->zone_sectors = ZS;
	g->nr_conv = NCONV;
}

/*
 * fx.q runs @p with NS streams (the last two in group 0, stream 3 in group 1) and NG groups;
 * with @zone the zone stage of fx.geo, with @qosw the QoS stage and a client on every stream
 * and group. fx.q2 is a second queue with a stream, a group and a QoS client of its own.
 */
static struct elv_zone_geometry geo_next; /* used by up() when its nr_sectors is set */
static uint64_t start_next;                 /* the clock up() starts at when set */
static uint8_t no_merges_next;              /* the no_merges up() configures */

static void up(const struct elv_policy *p, int zone, int qosw)
{
	int i;

	memset(&fx, 0, sizeof(fx));
	geo_default(&fx.geo);
	if (geo_next.nr_sectors)
		fx.geo = geo_next;
	fx.cfg.dev.queue_depth = DEPTH;
	fx.cfg.merge = on_merge;
	fx.cfg.allow_merge = on_allow;
	fx.cfg.no_merges = no_merges_next;
	fx.cfg.trace = on_trace;
	fx.cfg.ctx = &fx;
	assert_true(elv_queue_size_any(&fx.cfg) <= sizeof(qmem));
	assert_int_equal(elv_queue_init(&fx.q, qmem, sizeof(qmem), p, &fx.cfg), 0);
	assert_int_equal(elv_queue_init(&fx.q2, qmem2, sizeof(qmem2), p, &fx.cfg), 0);
	fx.now = start_next ? start_next : 1000;
	for (i = 0; i < NS; i++) {
		fx.s[i].ioprio = ELV_PRIO(ELV_PRIO_BE, i % 8);
		fx.s[i].weight = (uint16_t)(i * 100);
		assert_int_equal(elv_stream_init(fx.q, &fx.s[i], fx.now), 0);
	}
	for (i = 0; i < NG; i++) {
		fx.g[i].weight = (uint16_t)(100 * (i + 1));
		assert_int_equal(elv_group_init(fx.q, &fx.g[i], fx.now), 0);
	}
	assert_int_equal(elv_stream_set_group(fx.q, &fx.s[NS - 1], &fx.g[0]), 0);
	assert_int_equal(elv_stream_set_group(fx.q, &fx.s[NS - 2], &fx.g[0]), 0);
	assert_int_equal(elv_stream_set_group(fx.q, &fx.s[3], &fx.g[1]), 0);
	assert_int_equal(elv_stream_init(fx.q2, &fx.s2, fx.now), 0);
	assert_int_equal(elv_group_init(fx.q2, &fx.g2, fx.now), 0);
	if (zone)
		assert_int_equal(elv_zone_attach(fx.q, &fx.geo, zmem, sizeof(zmem), on_fail, &fx), 0);
	fx.zone_on = zone;
	fx.qos_on = qosw;
	if (qosw) {
		assert_int_equal(elv_qos_attach(fx.q, &qos, NULL, fx.now), 0);
		for (i = 0; i < NS; i++)
			assert_int_equal(elv_qos_stream_attach(fx.q, &fx.s[i], &fx.c[i], fx.now), 0);
		for (i = 0; i < NG; i++)
			assert_int_equal(elv_qos_group_attach(fx.q, &fx.g[i], &fx.c[NS + i], fx.now),
					 0);
		assert_int_equal(elv_qos_attach(fx.q2, &qos2, NULL, fx.now), 0);
		assert_int_equal(elv_qos_stream_attach(fx.q2, &fx.s2, &fx.c2, fx.now), 0);
	}
	chk();
}

/* Nothing is left anywhere: everything comes apart and every request came back once. */
static void down(void)
{
	int i;

	chk();
	assert_int_equal(queued(), 0);
	assert_int_equal(elv_queue_nr_queued(fx.q), 0);
	for (i = 0; i < NRQ; i++)
		assert_int_equal(fx.hs[i], H_FREE);
	assert_true(fx.accepted ==
		    fx.completed + fx.cancelled + fx.drained + fx.failed + fx.merged);
	for (i = 0; i < NS; i++)
		assert_int_equal(elv_stream_exit(fx.q, &fx.s[i], fx.now), 0);
	if (fx.sx_on)
		assert_int_equal(elv_stream_exit(fx.q, &fx.sx, fx.now), 0);
	for (i = 0; i < NG; i++)
		assert_int_equal(elv_group_exit(fx.q, &fx.g[i], fx.now), 0);
	if (fx.gx_on)
		assert_int_equal(elv_group_exit(fx.q, &fx.gx, fx.now), 0);
	assert_int_equal(elv_stream_exit(fx.q2, &fx.s2, fx.now), 0);
	assert_int_equal(elv_group_exit(fx.q2, &fx.g2, fx.now), 0);
	/* Stages may stay attached through elv_queue_exit(): their memory is the host's again. */
	assert_int_equal(elv_queue_exit(fx.q), 0);
	assert_int_equal(elv_queue_exit(fx.q2), 0);
}

static struct elv_request *mk(int i, uint64_t sector, uint32_t n, uint8_t op, uint8_t flags,
			      struct elv_stream *s)
{
	struct elv_request *rq;

	assert_int_equal(fx.hs[i], H_FREE);
	rq = test_rq(&fx.rq[i], sector, n, op, flags);
	rq->stream = s;
	return rq;
}

/* elv_add() with the host's bookkeeping: 0 queued or held, 1 merged, or the refusal. */
static int add(struct elv_request *rq)
{
	long i = rq - fx.rq;
	int r;

	set_hs(rq, H_FREE, H_ADDING);
	r = elv_add(fx.q, rq, fx.now);
	if (r == 0) {
		set_hs(rq, H_ADDING, H_LIB);
		fx.accepted++;
	} else if (r == 1) {
		assert_int_equal(fx.hs[i], H_FREE); /* the merge callback gave it back */
		fx.accepted++;
	} else {
		assert_true(r < 0);
		set_hs(rq, H_ADDING, H_FREE);
	}
	return r;
}

static void add_ok(struct elv_request *rq)
{
	assert_int_equal(add(rq), 0);
	chk();
}

static struct elv_request *dispatch(unsigned flags)
{
	struct elv_request *rq = NULL;
	int r;

	if (fx.nr_inflight >= DEPTH)
		return NULL;
	r = elv_dispatch(fx.q, fx.now, flags, &rq);
	if (r == ELV_EAGAIN)
		return NULL;
	assert_int_equal(r, 0);
	set_hs(rq, H_LIB, H_FLIGHT);
	fx.inflight[fx.nr_inflight++] = rq;
	return rq;
}

/* Complete in-flight request number @k with @status. */
static void complete_at(unsigned k, int status)
{
	struct elv_request *rq = fx.inflight[k];

	fx.inflight[k] = fx.inflight[--fx.nr_inflight];
	set_hs(rq, H_FLIGHT, H_FREE);
	fx.completed++;
	assert_int_equal(elv_complete_status(fx.q, rq, status, fx.now), 0);
}

static void complete_rq(struct elv_request *rq, int status)
{
	unsigned k;

	for (k = 0; k < fx.nr_inflight; k++)
		if (fx.inflight[k] == rq) {
			complete_at(k, status);
			return;
		}
	fail_msg("request not in flight");
}

/* Dispatch and complete everything, moving the clock on to every timed release. */
static void run_all(void)
{
	unsigned guard;

	for (guard = 0; guard < 100000; guard++) {
		while (dispatch(ELV_DISPATCH_FORCE))
			;
		if (fx.nr_inflight) {
			complete_at(0, 0);
			chk();
			continue;
		}
		if (!queued())
			return;
		{
			uint64_t t = elv_next_event(fx.q);

			fx.now = t != ELV_TIME_NEVER && elv_time_after(t, fx.now) ? t : fx.now + 1000;
		}
	}
	fail_msg("the queue never emptied");
}

static uint32_t zwp(uint32_t zone)
{
	struct elv_zone_info zi;

	assert_int_equal(elv_zone_get(fx.q, zone, &zi), 0);
	return zi.wp;
}

static uint64_t zstart(uint32_t zone)
{
	return (uint64_t)zone * ZS;
}

/*
 * Inside a callback of fx.q: every call that would change it is refused with ELV_EBUSY and
 * changes nothing; the getters work.
 */
static void probe(void)
{
	static struct elv_group gfree;
	static struct elv_qos_client cfree;
	struct elv_throttle_settings t;
	struct elv_mclock_settings m;
	struct elv_qos_settings set;
	struct elv_zone_info zi;
	struct elv_qos_client_stats cst;
	struct snap before, after;
	struct elv_request *any = NULL;
	uint32_t zone;
	int i;

	fx.probes++;
	snap_take(fx.q, &before);
	assert_int_equal(before.check, ELV_EBUSY);
	memset(&t, 0, sizeof(t));
	memset(&m, 0, sizeof(m));
	memset(&set, 0, sizeof(set));
	memset(&gfree, 0, sizeof(gfree));
	memset(&cfree, 0, sizeof(cfree));
	t.limit[ELV_THROTTLE_IOPS_TOTAL].avg = 10;
	m.weight = 1;

	assert_int_equal(elv_zone_attach(fx.q, &fx.geo, zmem2, sizeof(zmem2), on_fail, &fx),
			 ELV_EBUSY);
	assert_int_equal(elv_zone_detach(fx.q), ELV_EBUSY);
	assert_int_equal(elv_zone_report(fx.q, NZ - 1, ELV_ZONE_EMPTY, 0), ELV_EBUSY);
	assert_int_equal(elv_qos_attach(fx.q, &qos2, NULL, fx.now), ELV_EBUSY);
	assert_int_equal(elv_qos_detach(fx.q, fx.now), ELV_EBUSY);
	assert_int_equal(elv_qos_set(fx.q, &set, fx.now), ELV_EBUSY);
	assert_int_equal(elv_qos_stream_attach(fx.q, &fx.s[0], &cfree, fx.now), ELV_EBUSY);
	assert_int_equal(elv_qos_stream_detach(fx.q, &fx.s[0], fx.now), ELV_EBUSY);
	assert_int_equal(elv_qos_group_attach(fx.q, &fx.g[0], &cfree, fx.now), ELV_EBUSY);
	assert_int_equal(elv_qos_group_detach(fx.q, &fx.g[0], fx.now), ELV_EBUSY);
	assert_int_equal(elv_qos_set_throttle(fx.q, &fx.c[0], &t, fx.now), ELV_EBUSY);
	assert_int_equal(elv_qos_set_throttle(fx.q, &fx.c[0], NULL, fx.now), ELV_EBUSY);
	assert_int_equal(elv_qos_set_mclock(fx.q, &fx.c[0], &m, fx.now), ELV_EBUSY);
	assert_int_equal(elv_qos_set_mclock(fx.q, &fx.c[0], NULL, fx.now), ELV_EBUSY);
	assert_int_equal(elv_group_init(fx.q, &gfree, fx.now), ELV_EBUSY);
	assert_int_equal(elv_group_exit(fx.q, &fx.g[NG - 1], fx.now), ELV_EBUSY);
	assert_int_equal(elv_group_set_weight(fx.q, &fx.g[0], 5), ELV_EBUSY);
	assert_int_equal(elv_stream_set_weight(fx.q, &fx.s[0], 7), ELV_EBUSY);
	assert_int_equal(elv_stream_set_group(fx.q, &fx.s[0], &fx.g[2]), ELV_EBUSY);
	assert_int_equal(elv_stream_set_group(fx.q, &fx.s[NS - 1], NULL), ELV_EBUSY);
	for (i = 0; i < NRQ; i++)
		if (fx.hs[i] == H_LIB || fx.hs[i] == H_FLIGHT)
			any = &fx.rq[i];
	if (fx.nr_inflight) {
		assert_int_equal(elv_complete_status(fx.q, fx.inflight[0], 0, fx.now), ELV_EBUSY);
		assert_int_equal(elv_complete_status(fx.q, fx.inflight[0], -5, fx.now), ELV_EBUSY);
	}
	if (any) {
		assert_int_equal(elv_cancel(fx.q, any), ELV_EBUSY);
		assert_int_equal(elv_add(fx.q, any, fx.now), ELV_EBUSY);
	}
	/* the getters */
	assert_int_equal(elv_zone_get(fx.q, Z, &zi), before.zrc & (1 << Z) ? ELV_EINVAL : 0);
	assert_int_equal(elv_zone_of(fx.q, zstart(Z), &zone), before.zrc ? ELV_EINVAL : 0);
	assert_int_equal(elv_qos_get(fx.q, &set), before.qrc);
	if (before.qrc == 0) {
		assert_int_equal(elv_qos_get_throttle(fx.q, &fx.c[0], &t), 0);
		assert_int_equal(elv_qos_get_mclock(fx.q, &fx.c[0], &m), 0);
		assert_int_equal(elv_qos_client_stats(fx.q, &fx.c[0], &cst), 0);
		if (any)
			assert_true(elv_qos_request_cost(fx.q, any) >= 1);
	}
	snap_take(fx.q, &after);
	snap_same(&before, &after);
	/* the other queue is free to use */
	assert_int_equal(elv_stream_set_weight(fx.q2, &fx.s2, 9), 0);
	assert_int_equal(elv_stream_set_weight(fx.q2, &fx.s2, 0), 0);
}

/* ---- NULL and torn-down queues ------------------------------------------------------------ */

/*
 * Every stage, group and weight call on @q, NULL or torn down, is refused and writes nothing
 * back; @s and @g are the stream and group handed to the calls that take a fresh one.
 */
static void refused_without_queue(struct elv_queue *q, struct elv_stream *s, struct elv_group *g)
{
	struct elv_throttle_settings t;
	struct elv_mclock_settings m;
	struct elv_qos_settings set;
	struct elv_zone_info zi;
	struct elv_qos_client_stats cst;
	struct elv_qos_client cfree;
	struct elv_group gfree;
	uint32_t zone;

	memset(&t, 0, sizeof(t));
	memset(&m, 0, sizeof(m));
	memset(&set, 0, sizeof(set));
	memset(&cfree, 0, sizeof(cfree));
	memset(&gfree, 0, sizeof(gfree));
	memset(&zi, 0x5a, sizeof(zi));
	m.weight = 1;
	assert_int_equal(elv_zone_attach(q, &fx.geo, zmem2, sizeof(zmem2), on_fail, &fx),
			 ELV_EINVAL);
	assert_int_equal(elv_zone_detach(q), ELV_EINVAL);
	assert_int_equal(elv_zone_report(q, Z, ELV_ZONE_EMPTY, 0), ELV_EINVAL);
	assert_int_equal(elv_zone_get(q, Z, &zi), ELV_EINVAL);
	assert_int_equal(zi.wp, 0x5a5a5a5au); /* untouched */
	assert_int_equal(elv_zone_of(q, 0, &zone), ELV_EINVAL);
	assert_int_equal(elv_qos_attach(q, &qos2, NULL, 0), ELV_EINVAL);
	assert_int_equal(elv_qos_detach(q, 0), ELV_EINVAL);
	assert_int_equal(elv_qos_set(q, &set, 0), ELV_EINVAL);
	assert_int_equal(elv_qos_get(q, &set), ELV_EINVAL);
	assert_int_equal(elv_qos_stream_attach(q, s, &cfree, 0), ELV_EINVAL);
	assert_int_equal(elv_qos_stream_detach(q, &fx.s[0], 0), ELV_EINVAL);
	assert_int_equal(elv_qos_group_attach(q, g, &cfree, 0), ELV_EINVAL);
	assert_int_equal(elv_qos_group_detach(q, &fx.g[0], 0), ELV_EINVAL);
	assert_int_equal(elv_qos_set_throttle(q, &fx.c[0], &t, 0), ELV_EINVAL);
	assert_int_equal(elv_qos_get_throttle(q, &fx.c[0], &t), ELV_EINVAL);
	assert_int_equal(elv_qos_set_mclock(q, &fx.c[0], &m, 0), ELV_EINVAL);
	assert_int_equal(elv_qos_get_mclock(q, &fx.c[0], &m), ELV_EINVAL);
	assert_int_equal(elv_qos_client_stats(q, &fx.c[0], &cst), ELV_EINVAL);
	assert_int_equal(elv_qos_request_cost(q, &fx.rq[0]), 0);
	assert_int_equal(elv_group_init(q, &gfree, 0), ELV_EINVAL);
	assert_int_equal(gfree.weight, 0); /* not even the default stored back */
	assert_int_equal(elv_group_exit(q, &fx.g[0], 0), ELV_EINVAL);
	assert_int_equal(elv_group_set_weight(q, &fx.g[0], 5), ELV_EINVAL);
	assert_int_equal(elv_stream_set_weight(q, s, 5), ELV_EINVAL);
	assert_int_equal(elv_stream_set_group(q, s, NULL), ELV_EINVAL);
	assert_int_equal(elv_complete_status(q, &fx.rq[0], 0, 0), ELV_EINVAL);
}

static void test_null_arguments(void **state)
{
	struct elv_throttle_settings t;
	struct elv_mclock_settings m;
	struct elv_qos_client_stats cst;
	struct elv_qos_client cfree;

	(void)state;
	up(&elv_policy_bfq, 1, 1);
	memset(&t, 0, sizeof(t));
	memset(&m, 0, sizeof(m));
	memset(&cfree, 0, sizeof(cfree));
	m.weight = 1;

	/* NULL queue */
	refused_without_queue(NULL, &fx.s[0], &fx.g[0]);
	assert_int_equal(elv_zone_size(NULL), 0);
	assert_int_equal(elv_throttle_check(NULL), ELV_EINVAL);
	assert_int_equal(elv_mclock_check(NULL), ELV_EINVAL);

	/* NULL everything else, on a live queue with both stages: nothing changes */
	REFUSED(ELV_EINVAL, elv_zone_attach(fx.q, NULL, zmem2, sizeof(zmem2), on_fail, &fx));
	REFUSED(ELV_EINVAL, elv_zone_get(fx.q, Z, NULL));
	REFUSED(ELV_EINVAL, elv_zone_of(fx.q, 0, NULL));
	REFUSED(ELV_EINVAL, elv_qos_attach(fx.q, NULL, NULL, fx.now));
	REFUSED(ELV_EINVAL, elv_qos_set(fx.q, NULL, fx.now));
	REFUSED(ELV_EINVAL, elv_qos_get(fx.q, NULL));
	REFUSED(ELV_EINVAL, elv_qos_stream_attach(fx.q, NULL, &cfree, fx.now));
	REFUSED(ELV_EINVAL, elv_qos_stream_attach(fx.q, &fx.s[0], NULL, fx.now));
	REFUSED(ELV_EINVAL, elv_qos_stream_detach(fx.q, NULL, fx.now));
	REFUSED(ELV_EINVAL, elv_qos_group_attach(fx.q, NULL, &cfree, fx.now));
	REFUSED(ELV_EINVAL, elv_qos_group_attach(fx.q, &fx.g[0], NULL, fx.now));
	REFUSED(ELV_EINVAL, elv_qos_group_detach(fx.q, NULL, fx.now));
	REFUSED(ELV_EINVAL, elv_qos_set_throttle(fx.q, NULL, &t, fx.now));
	REFUSED(ELV_EINVAL, elv_qos_get_throttle(fx.q, NULL, &t));
	REFUSED(ELV_EINVAL, elv_qos_get_throttle(fx.q, &fx.c[0], NULL));
	REFUSED(ELV_EINVAL, elv_qos_set_mclock(fx.q, NULL, &m, fx.now));
	REFUSED(ELV_EINVAL, elv_qos_get_mclock(fx.q, NULL, &m));
	REFUSED(ELV_EINVAL, elv_qos_get_mclock(fx.q, &fx.c[0], NULL));
	REFUSED(ELV_EINVAL, elv_qos_client_stats(fx.q, NULL, &cst));
	REFUSED(ELV_EINVAL, elv_qos_client_stats(fx.q, &fx.c[0], NULL));
	REFUSED(0, (int)elv_qos_request_cost(fx.q, NULL));
	REFUSED(ELV_EINVAL, elv_group_init(fx.q, NULL, fx.now));
	REFUSED(ELV_EINVAL, elv_group_exit(fx.q, NULL, fx.now));
	REFUSED(ELV_EINVAL, elv_group_set_weight(fx.q, NULL, 5));
	REFUSED(ELV_EINVAL, elv_stream_set_weight(fx.q, NULL, 5));
	REFUSED(ELV_EINVAL, elv_stream_set_group(fx.q, NULL, &fx.g[0]));
	REFUSED(ELV_EINVAL, elv_complete_status(fx.q, NULL, 0, fx.now));
	REFUSED(ELV_EINVAL, elv_complete_status(fx.q, NULL, -5, fx.now));
	/* a request not in flight, and a status above 0 for one that is */
	REFUSED(ELV_EINVAL, elv_complete_status(fx.q, mk(0, 0, 8, ELV_OP_READ, 0, NULL), 0,
						fx.now));
	add_ok(mk(0, 0, 8, ELV_OP_READ, 0, NULL));
	REFUSED(ELV_EINVAL, elv_complete_status(fx.q, &fx.rq[0], 0, fx.now)); /* queued */
	assert_ptr_equal(dispatch(0), &fx.rq[0]);
	REFUSED(ELV_EINVAL, elv_complete_status(fx.q, &fx.rq[0], 1, fx.now));
	REFUSED(ELV_EINVAL, elv_complete_status(fx.q, &fx.rq[0], 5, fx.now));
	REFUSED(ELV_EINVAL, elv_complete_status(fx.q, &fx.rq[0], INT32_MAX, fx.now));
	REFUSED(ELV_EINVAL, elv_complete_status(fx.q2, &fx.rq[0], 0, fx.now));
	complete_rq(&fx.rq[0], INT32_MIN); /* any negative status is the host's to choose */
	assert_true(fx.complete_arg == (uint64_t)1 << 31);
	chk();
	down();
}

static void test_torn_down(void **state)
{
	struct elv_group gfree;
	struct elv_stream sfree;
	struct elv_queue *q;

	(void)state;
	up(&elv_policy_bfq, 1, 1);
	fx.nr_inflight = 0;
	down(); /* both stages still attached when the queue went */
	q = fx.q;
	memset(&gfree, 0, sizeof(gfree));
	memset(&sfree, 0, sizeof(sfree));
	refused_without_queue(q, &sfree, &gfree);
	assert_int_equal(elv_stream_init(q, &sfree, 0), ELV_EINVAL);
	assert_int_equal(elv_add(q, mk(0, 0, 8, ELV_OP_READ, 0, NULL), 0), ELV_EINVAL);
	assert_true(elv_next_event(q) == ELV_TIME_NEVER);
	assert_int_equal(elv_queue_check(q), ELV_EINVAL);
	/* nothing was revived: still torn down */
	assert_int_equal(elv_queue_exit(q), ELV_EINVAL);
}

/* ---- streams, groups and clients of another queue; weights out of range ----------------- */

static void test_foreign_objects(void **state)
{
	struct elv_throttle_settings t;
	struct elv_mclock_settings m;
	struct elv_qos_client_stats cst;
	struct elv_qos_client cfree;
	struct elv_request *other;

	(void)state;
	up(&elv_policy_bfq, 1, 1);
	memset(&t, 0, sizeof(t));
	memset(&m, 0, sizeof(m));
	memset(&cfree, 0, sizeof(cfree));
	m.weight = 1;
	REFUSED(ELV_EINVAL, elv_stream_set_weight(fx.q, &fx.s2, 5));
	REFUSED(ELV_EINVAL, elv_stream_set_group(fx.q, &fx.s2, NULL));
	REFUSED(ELV_EINVAL, elv_stream_set_group(fx.q, &fx.s2, &fx.g[0]));
	REFUSED(ELV_EINVAL, elv_stream_set_group(fx.q, &fx.s[0], &fx.g2));
	REFUSED(ELV_EINVAL, elv_stream_set_group(fx.q2, &fx.s2, &fx.g[0]));
	REFUSED(ELV_EINVAL, elv_group_set_weight(fx.q, &fx.g2, 5));
	REFUSED(ELV_EINVAL, elv_group_exit(fx.q, &fx.g2, fx.now));
	REFUSED(ELV_EBUSY, elv_group_init(fx.q, &fx.g2, fx.now)); /* registered with q2 */
	REFUSED(ELV_EBUSY, elv_stream_init(fx.q, &fx.s2, fx.now));
	REFUSED(ELV_EINVAL, elv_stream_exit(fx.q, &fx.s2, fx.now));
	REFUSED(ELV_EINVAL, elv_qos_stream_attach(fx.q, &fx.s2, &cfree, fx.now));
	REFUSED(ELV_EINVAL, elv_qos_stream_detach(fx.q, &fx.s2, fx.now));
	REFUSED(ELV_EINVAL, elv_qos_group_attach(fx.q, &fx.g2, &cfree, fx.now));
	REFUSED(ELV_EINVAL, elv_qos_group_detach(fx.q, &fx.g2, fx.now));
	REFUSED(ELV_EINVAL, elv_qos_set_throttle(fx.q, &fx.c2, &t, fx.now));
	REFUSED(ELV_EINVAL, elv_qos_set_mclock(fx.q, &fx.c2, &m, fx.now));
	REFUSED(ELV_EINVAL, elv_qos_get_throttle(fx.q, &fx.c2, &t));
	REFUSED(ELV_EINVAL, elv_qos_get_mclock(fx.q, &fx.c2, &m));
	REFUSED(ELV_EINVAL, elv_qos_client_stats(fx.q, &fx.c2, &cst));
	REFUSED(ELV_EINVAL, elv_qos_set_throttle(fx.q, &cfree, &t, fx.now)); /* attached nowhere */
	/* a client attached on q2 cannot be given to a stream of q */
	assert_int_equal(elv_qos_stream_detach(fx.q, &fx.s[0], fx.now), 0);
	REFUSED(ELV_EBUSY, elv_qos_stream_attach(fx.q, &fx.s[0], &fx.c2, fx.now));
	REFUSED(ELV_EBUSY, elv_qos_stream_attach(fx.q, &fx.s[0], &fx.c[1], fx.now)); /* s[1]'s */
	REFUSED(ELV_EBUSY, elv_qos_stream_attach(fx.q, &fx.s[1], &cfree, fx.now)); /* has one */
	assert_int_equal(elv_qos_stream_attach(fx.q, &fx.s[0], &fx.c[0], fx.now), 0);
	/* a request of another queue's stream, and a request in flight from another queue */
	REFUSED(ELV_EINVAL, add(mk(1, 0, 8, ELV_OP_READ, 0, &fx.s2)));
	other = mk(2, 0, 8, ELV_OP_READ, 0, NULL);
	assert_int_equal(elv_add(fx.q2, other, fx.now), 0);
	REFUSED(ELV_EBUSY, elv_add(fx.q, other, fx.now)); /* held by q2 */
	REFUSED(ELV_EINVAL, elv_cancel(fx.q, other));
	{
		struct elv_request *got;

		assert_int_equal(elv_dispatch(fx.q2, fx.now, 0, &got), 0);
		assert_ptr_equal(got, other);
	}
	REFUSED(ELV_EINVAL, elv_complete_status(fx.q, other, 0, fx.now));
	REFUSED(ELV_EINVAL, elv_complete_status(fx.q, other, -5, fx.now));
	assert_int_equal(elv_complete_status(fx.q2, other, 0, fx.now), 0);
	down();
}

static void test_weights(void **state)
{
	struct elv_stream s;
	struct elv_group g;
	const uint16_t bad_group[] = {0, ELV_GROUP_WEIGHT_MAX + 1, 65535};
	const uint16_t bad_stream[] = {ELV_WEIGHT_MAX + 1, 65535};
	unsigned i;

	(void)state;
	up(&elv_policy_bfq, 1, 1);
	for (i = 0; i < LEN(bad_stream); i++) {
		REFUSED(ELV_ERANGE, elv_stream_set_weight(fx.q, &fx.s[1], bad_stream[i]));
		REFUSED(ELV_ERANGE, elv_stream_set_weight(fx.q, &fx.s[NS - 1], bad_stream[i]));
	}
	for (i = 0; i < LEN(bad_group); i++)
		REFUSED(ELV_ERANGE, elv_group_set_weight(fx.q, &fx.g[0], bad_group[i]));
	/* the edges that are valid */
	assert_int_equal(elv_stream_set_weight(fx.q, &fx.s[1], ELV_WEIGHT_MAX), 0);
	assert_int_equal(fx.s[1].weight, ELV_WEIGHT_MAX);
	assert_int_equal(elv_stream_set_weight(fx.q, &fx.s[1], 1), 0);
	assert_int_equal(elv_stream_set_weight(fx.q, &fx.s[1], 0), 0);
	assert_int_equal(elv_stream_weight(&fx.s[1]), elv_prio_weight(fx.s[1].ioprio));
	assert_int_equal(elv_group_set_weight(fx.q, &fx.g[0], 1), 0);
	assert_int_equal(elv_group_set_weight(fx.q, &fx.g[0], ELV_GROUP_WEIGHT_MAX), 0);
	memset(&g, 0, sizeof(g));
	assert_int_equal(elv_group_init(fx.q, &g, fx.now), 0);
	assert_int_equal(g.weight, ELV_GROUP_WEIGHT_DEFAULT); /* 0 means the default */
	REFUSED(ELV_EBUSY, elv_group_init(fx.q, &g, fx.now));
	REFUSED(ELV_EBUSY, elv_group_init(fx.q2, &g, fx.now));
	assert_int_equal(elv_group_exit(fx.q, &g, fx.now), 0);
	REFUSED(ELV_EINVAL, elv_group_exit(fx.q, &g, fx.now));
	chk();
	/* registration with a weight out of range registers nothing */
	for (i = 0; i < LEN(bad_stream); i++) {
		memset(&s, 0, sizeof(s));
		s.weight = bad_stream[i];
		REFUSED(ELV_ERANGE, elv_stream_init(fx.q, &s, fx.now));
		assert_null(elv_stream_group(&s));
		assert_int_equal(elv_stream_exit(fx.q, &s, fx.now), ELV_EINVAL);
	}
	for (i = 1; i < LEN(bad_group); i++) {
		memset(&g, 0, sizeof(g));
		g.weight = bad_group[i];
		REFUSED(ELV_ERANGE, elv_group_init(fx.q, &g, fx.now));
		assert_int_equal(g.weight, bad_group[i]);
		assert_int_equal(elv_group_exit(fx.q, &g, fx.now), ELV_EINVAL);
		assert_null(elv_queue_group_next(fx.q, &fx.g[NG - 1]));
	}
	/* a stream with requests cannot move, whatever the target; a weight change is fine */
	add_ok(mk(0, 0, 8, ELV_OP_READ, 0, &fx.s[0]));
	REFUSED(ELV_EBUSY, elv_stream_set_group(fx.q, &fx.s[0], &fx.g[1]));
	assert_int_equal(elv_stream_set_group(fx.q, &fx.s[0], NULL), 0); /* already there */
	assert_int_equal(elv_stream_set_weight(fx.q, &fx.s[0], 700), 0);
	REFUSED(ELV_EBUSY, elv_stream_exit(fx.q, &fx.s[0], fx.now));
	/* a group with streams cannot go */
	REFUSED(ELV_EBUSY, elv_group_exit(fx.q, &fx.g[0], fx.now));
	run_all();
	chk();
	down();
}

/* ---- zone geometry -------------------------------------------------------------------- */

/* A geometry that does not add up: no size, and attach refuses it with nothing changed. */
static void geo_bad(const struct elv_zone_geometry *g)
{
	assert_int_equal(elv_zone_size(g), 0);
	REFUSED(ELV_EINVAL, elv_zone_attach(fx.q, g, zmem2, sizeof(zmem2), on_fail, &fx));
	assert_int_equal(elv_zone_detach(fx.q), ELV_EINVAL); /* nothing was attached */
}

static void test_zone_geometry(void **state)
{
	struct elv_zone_geometry g;
	struct elv_zone_info zi;
	size_t need;

	(void)state;
	up(&elv_policy_bfq, 0, 1);
	geo_default(&g);
	g.zone_sectors = 0;
	geo_bad(&g);
	g.zone_sectors = 4; /* a power of two below 8 */
	geo_bad(&g);
	g.zone_sectors = 96; /* not a power of two */
	geo_bad(&g);
	g.zone_sectors = UINT32_MAX;
	geo_bad(&g);
	geo_default(&g);
	g.zone_capacity = ZS + 1;
	geo_bad(&g);
	geo_default(&g);
	g.nr_conv = NZ + 1;
	geo_bad(&g);
	g.nr_conv = UINT32_MAX;
	geo_bad(&g);
	geo_default(&g);
	g.nr_sectors = 0;
	geo_bad(&g);
	g.nr_sectors = UINT64_MAX; /* 2^58 zones of 64 sectors */
	geo_bad(&g);
	g.zone_sectors = 1u << 31;
	g.nr_sectors = (uint64_t)1 << 63; /* 2^32 zones: one too many */
	g.nr_conv = 0;
	geo_bad(&g);
	g.nr_sectors = ((uint64_t)1 << 63) - ((uint64_t)1 << 31) - 1; /* 2^32 - 1 zones */
	geo_bad(&g);
	g.nr_sectors = ((uint64_t)1 << 63) - ((uint64_t)1 << 32) - 1; /* 2^32 - 2, the last short */
	need = elv_zone_size(&g);
	if (sizeof(size_t) < 8) { /* 2^32 - 2 zones do not fit a 32-bit address space */
		assert_int_equal(need, 0);
		REFUSED(ELV_EINVAL, elv_zone_attach(fx.q, &g, zmem2, sizeof(zmem2), on_fail, &fx));
	} else {
		assert_true(need > sizeof(zmem2));
		REFUSED(ELV_ENOSPC, elv_zone_attach(fx.q, &g, zmem2, sizeof(zmem2), on_fail, &fx));
	}
	geo_default(&g);
	g.max_open = 4;
	g.max_active = 3;
	geo_bad(&g);
	geo_default(&g);
	g.ordered = 2;
	geo_bad(&g);
	geo_default(&g);
	g.reserved8[2] = 1;
	geo_bad(&g);
	geo_default(&g);
	g.reserved[1] = 1;
	geo_bad(&g);

	/* the other refusals of attach */
	geo_default(&g);
	need = elv_zone_size(&g);
	assert_true(need > 0 && need <= sizeof(zmem2));
	REFUSED(ELV_ENOSPC, elv_zone_attach(fx.q, &g, zmem2, need - 1, on_fail, &fx));
	REFUSED(ELV_EINVAL, elv_zone_attach(fx.q, &g, (char *)zmem2 + 4, need, on_fail, &fx));
	REFUSED(ELV_EINVAL, elv_zone_attach(fx.q, &g, NULL, need, on_fail, &fx));
	REFUSED(ELV_EINVAL, elv_zone_attach(fx.q, &g, zmem2, need, NULL, &fx));
	REFUSED(ELV_EINVAL, elv_zone_report(fx.q, Z, ELV_ZONE_EMPTY, 0)); /* no zone stage */
	REFUSED(ELV_EINVAL, add(mk(0, zstart(Z), ZS, ELV_OP_ZONE_RESET, 0, NULL)));
	REFUSED(ELV_EINVAL, add(mk(0, zstart(Z), ZS, ELV_OP_ZONE_FINISH, 0, &fx.s[0])));
	REFUSED(ELV_EINVAL, add(mk(0, zstart(Z), 8, ELV_OP_WRITE, ELV_RQ_ZONE_APPEND, NULL)));
	REFUSED(ELV_EINVAL, elv_zone_get(fx.q, Z, &zi));
	/* with requests queued, and with one in flight */
	add_ok(mk(0, 0, 8, ELV_OP_READ, 0, NULL));
	REFUSED(ELV_EBUSY, elv_zone_attach(fx.q, &g, zmem2, need, on_fail, &fx));
	assert_non_null(dispatch(0));
	REFUSED(ELV_EBUSY, elv_zone_attach(fx.q, &g, zmem2, need, on_fail, &fx));
	complete_at(0, 0);
	chk();

	/* the edges that add up: every zone conventional, capacity 1, a short last zone, limits
	 * above the number of zones (no limit then) */
	g.nr_conv = NZ;
	assert_int_equal(elv_zone_attach(fx.q, &g, zmem2, need, on_fail, &fx), 0);
	REFUSED(ELV_EBUSY, elv_zone_attach(fx.q, &g, zmem2, need, on_fail, &fx)); /* twice */
	assert_int_equal(elv_zone_detach(fx.q), 0);
	geo_default(&g);
	g.zone_capacity = 1;
	g.nr_sectors = (uint64_t)NZ * ZS - 3;
	g.max_open = NZ + 5;
	g.max_active = UINT32_MAX;
	assert_int_equal(elv_zone_attach(fx.q, &g, zmem2, sizeof(zmem2), on_fail, &fx), 0);
	assert_int_equal(elv_zone_get(fx.q, NZ - 1, &zi), 0);
	assert_int_equal(zi.nr_sectors, ZS - 3);
	assert_int_equal(zi.capacity, 1);
	REFUSED(ELV_ERANGE, elv_zone_get(fx.q, NZ, &zi));
	REFUSED(ELV_ERANGE, elv_zone_get(fx.q, UINT32_MAX, &zi));
	{
		uint32_t zone = 77;

		REFUSED(ELV_ERANGE, elv_zone_of(fx.q, (uint64_t)NZ * ZS - 3, &zone));
		REFUSED(ELV_ERANGE, elv_zone_of(fx.q, UINT64_MAX, &zone));
		assert_int_equal(zone, 77);
		assert_int_equal(elv_zone_of(fx.q, (uint64_t)NZ * ZS - 4, &zone), 0);
		assert_int_equal(zone, NZ - 1);
	}
	/* capacity 1: one sector per zone, the second is ENOSPC */
	add_ok(mk(1, zstart(Z), 1, ELV_OP_WRITE, 0, NULL));
	REFUSED(ELV_ENOSPC, add(mk(2, zstart(Z) + 1, 1, ELV_OP_WRITE, 0, NULL)));
	REFUSED(ELV_ENOSPC, add(mk(2, zstart(Z + 1), 2, ELV_OP_WRITE, 0, NULL)));
	REFUSED(ELV_ENOSPC, add(mk(2, zstart(Z + 1), 2, ELV_OP_WRITE, ELV_RQ_ZONE_APPEND, NULL)));
	run_all();
	assert_int_equal(zwp(Z), 1);
	/* the short last zone: a reset names its real size; one sized for a full zone ends
	 * past the device */
	REFUSED(ELV_ERANGE, add(mk(3, zstart(NZ - 1), ZS, ELV_OP_ZONE_RESET, 0, NULL)));
	REFUSED(ELV_EINVAL, add(mk(3, zstart(NZ - 1), ZS - 4, ELV_OP_ZONE_RESET, 0, NULL)));
	REFUSED(ELV_ERANGE, add(mk(3, zstart(NZ - 1), ZS - 2, ELV_OP_WRITE, 0, NULL)));
	add_ok(mk(3, zstart(NZ - 1), ZS - 3, ELV_OP_ZONE_RESET, 0, NULL));
	run_all();
	assert_int_equal(elv_zone_detach(fx.q), 0);
	REFUSED(ELV_EINVAL, elv_zone_detach(fx.q));
	down();
}

/* ---- every refused write and zone operation -------------------------------------------- */

static void test_zone_refusals(void **state)
{
	struct elv_request *w;
	struct elv_zone_info zi;

	(void)state;
	up(&elv_policy_bfq, 1, 1);
	/* past the device, across a boundary, off the pointer */
	REFUSED(ELV_ERANGE, add(mk(0, zstart(NZ), 8, ELV_OP_WRITE, 0, NULL)));
	REFUSED(ELV_ERANGE, add(mk(0, UINT64_MAX - 8, 8, ELV_OP_WRITE, 0, NULL)));
	REFUSED(ELV_ERANGE, add(mk(0, zstart(NZ), ZS, ELV_OP_ZONE_RESET, 0, NULL)));
	REFUSED(ELV_EOVERFLOW, add(mk(0, UINT64_MAX - 2, 8, ELV_OP_WRITE, 0, NULL)));
	REFUSED(ELV_EINVAL, add(mk(0, zstart(Z) + ZS - 4, 8, ELV_OP_WRITE, 0, NULL)));
	REFUSED(ELV_EINVAL, add(mk(0, zstart(1) + ZS - 4, 8, ELV_OP_WRITE, 0, NULL))); /* conv */
	REFUSED(ELV_EINVAL, add(mk(0, zstart(NCONV) - 4, 8, ELV_OP_WRITE, 0, NULL)));  /* conv|seq */
	REFUSED(ELV_EINVAL, add(mk(0, zstart(Z) + 8, 8, ELV_OP_WRITE, 0, NULL)));
	REFUSED(ELV_EINVAL, add(mk(0, zstart(Z), 0, ELV_OP_WRITE, 0, NULL)));
	/* appends: not at the zone start, to a conventional zone, on another operation */
	REFUSED(ELV_EINVAL, add(mk(0, zstart(Z) + 8, 8, ELV_OP_WRITE, ELV_RQ_ZONE_APPEND, NULL)));
	REFUSED(ELV_EINVAL, add(mk(0, zstart(0), 8, ELV_OP_WRITE, ELV_RQ_ZONE_APPEND, NULL)));
	REFUSED(ELV_EINVAL, add(mk(0, zstart(1), 8, ELV_OP_WRITE, ELV_RQ_ZONE_APPEND, NULL)));
	REFUSED(ELV_EINVAL, add(mk(0, zstart(Z), 8, ELV_OP_READ, ELV_RQ_ZONE_APPEND, NULL)));
	REFUSED(ELV_EINVAL, add(mk(0, zstart(Z), 8, ELV_OP_DISCARD, ELV_RQ_ZONE_APPEND, NULL)));
	REFUSED(ELV_EINVAL, add(mk(0, zstart(Z), ZS, ELV_OP_ZONE_RESET, ELV_RQ_ZONE_APPEND, NULL)));
	REFUSED(ELV_EINVAL, add(mk(0, zstart(Z), 0, ELV_OP_FLUSH, ELV_RQ_ZONE_APPEND, NULL)));
	REFUSED(ELV_EINVAL, add(mk(0, zstart(Z), ZS + 8, ELV_OP_WRITE, ELV_RQ_ZONE_APPEND, NULL)));
	/* zone operations not naming a whole sequential zone, unknown operations */
	REFUSED(ELV_EINVAL, add(mk(0, zstart(Z) + 8, ZS - 8, ELV_OP_ZONE_RESET, 0, NULL)));
	REFUSED(ELV_EINVAL, add(mk(0, zstart(Z), ZS - 8, ELV_OP_ZONE_FINISH, 0, NULL)));
	REFUSED(ELV_EINVAL, add(mk(0, zstart(Z), 2 * ZS, ELV_OP_ZONE_RESET, 0, NULL)));
	REFUSED(ELV_EINVAL, add(mk(0, zstart(Z), 0, ELV_OP_ZONE_RESET, 0, NULL)));
	REFUSED(ELV_EINVAL, add(mk(0, zstart(0), ZS, ELV_OP_ZONE_RESET, 0, NULL)));
	REFUSED(ELV_EINVAL, add(mk(0, zstart(1), ZS, ELV_OP_ZONE_FINISH, 0, NULL)));
	REFUSED(ELV_EINVAL, add(mk(0, zstart(Z), ZS, ELV_OP_ZONE_FINISH + 1, 0, NULL)));
	REFUSED(ELV_EINVAL, add(mk(0, zstart(Z), ZS, 255, 0, NULL)));
	REFUSED(ELV_EINVAL, add(mk(0, zstart(Z), 8, ELV_OP_WRITE, 0x80, NULL)));

	/* reads and discards are never held, and never merge across a zone boundary */
	add_ok(mk(10, zstart(Z) - 8, 8, ELV_OP_READ, 0, NULL));
	add_ok(mk(11, zstart(Z), 8, ELV_OP_READ, 0, NULL));
	assert_int_equal(add(mk(12, zstart(Z) + 8, 8, ELV_OP_READ, 0, NULL)), 1); /* same zone */
	add_ok(mk(13, zstart(Z + 1) - 8, 8, ELV_OP_DISCARD, 0, NULL));
	add_ok(mk(14, zstart(Z + 1), 8, ELV_OP_DISCARD, 0, NULL));
	assert_int_equal(fx.merged, 1);
	run_all();

	/* below what is written, and at the pointer while the zone's write is out */
	w = mk(1, zstart(Z), 16, ELV_OP_WRITE, 0, NULL);
	add_ok(w);
	assert_int_equal(zwp(Z), 16);
	REFUSED(ELV_EINVAL, add(mk(0, zstart(Z), 8, ELV_OP_WRITE, 0, NULL)));
	REFUSED(ELV_EINVAL, add(mk(0, zstart(Z) + 8, 16, ELV_OP_WRITE, 0, NULL)));
	/* resets and finishes with a write queued, in flight, or held */
	REFUSED(ELV_EBUSY, add(mk(0, zstart(Z), ZS, ELV_OP_ZONE_RESET, 0, NULL)));
	assert_ptr_equal(dispatch(0), w);
	REFUSED(ELV_EBUSY, add(mk(0, zstart(Z), ZS, ELV_OP_ZONE_RESET, 0, NULL)));
	REFUSED(ELV_EBUSY, add(mk(0, zstart(Z), ZS, ELV_OP_ZONE_FINISH, 0, NULL)));
	REFUSED(ELV_EBUSY, elv_zone_report(fx.q, Z, ELV_ZONE_EMPTY, 0));
	add_ok(mk(2, zstart(Z) + 24, 8, ELV_OP_WRITE, 0, NULL)); /* held, not at the pointer yet */
	add_ok(mk(3, zstart(Z) + 16, 8, ELV_OP_WRITE, 0, NULL)); /* held, sorted before it */
	assert_int_equal(elv_zone_get(fx.q, Z, &zi), 0);
	assert_int_equal(zi.nr_held, 2);
	assert_int_equal(zi.nr_out, 1);
	assert_int_equal(zi.cond, ELV_ZONE_OPEN);
	REFUSED(ELV_EBUSY, elv_zone_detach(fx.q)); /* it holds writes */
	complete_rq(w, 0);
	chk();
	REFUSED(ELV_EBUSY, add(mk(0, zstart(Z), ZS, ELV_OP_ZONE_RESET, 0, NULL))); /* still held */
	run_all();
	assert_int_equal(zwp(Z), 32);

	/* full, past the capacity */
	add_ok(mk(4, zstart(Z), ZS, ELV_OP_ZONE_FINISH, 0, NULL));
	REFUSED(ELV_EBUSY, add(mk(0, zstart(Z), ZS, ELV_OP_ZONE_RESET, 0, NULL))); /* finishing */
	run_all();
	assert_int_equal(elv_zone_get(fx.q, Z, &zi), 0);
	assert_int_equal(zi.cond, ELV_ZONE_FULL);
	REFUSED(ELV_ENOSPC, add(mk(0, zstart(Z) + ZS - 8, 8, ELV_OP_WRITE, 0, NULL)));
	REFUSED(ELV_ENOSPC, add(mk(0, zstart(Z), 8, ELV_OP_WRITE, ELV_RQ_ZONE_APPEND, NULL)));
	add_ok(mk(5, zstart(Z + 1) + 0, 56, ELV_OP_WRITE, 0, NULL));
	REFUSED(ELV_EINVAL, add(mk(0, zstart(Z + 1) + 56, 16, ELV_OP_WRITE, 0, NULL))); /* crosses */
	REFUSED(ELV_ENOSPC, add(mk(0, zstart(Z + 1), 16, ELV_OP_WRITE, ELV_RQ_ZONE_APPEND, NULL)));
	run_all();

	/* read-only and offline zones: writes and zone operations fail with EIO */
	assert_int_equal(elv_zone_report(fx.q, Z + 2, ELV_ZONE_READONLY, 0), 0);
	assert_int_equal(elv_zone_report(fx.q, Z + 3, ELV_ZONE_OFFLINE, 0), 0);
	REFUSED(ELV_EIO, add(mk(0, zstart(Z + 2), 8, ELV_OP_WRITE, 0, NULL)));
	REFUSED(ELV_EIO, add(mk(0, zstart(Z + 3), 8, ELV_OP_WRITE, ELV_RQ_ZONE_APPEND, NULL)));
	REFUSED(ELV_EIO, add(mk(0, zstart(Z + 2), ZS, ELV_OP_ZONE_RESET, 0, NULL)));
	REFUSED(ELV_EIO, add(mk(0, zstart(Z + 3), ZS, ELV_OP_ZONE_FINISH, 0, NULL)));
	add_ok(mk(6, zstart(Z + 2), 8, ELV_OP_READ, 0, NULL)); /* reads are never held */
	run_all();

	/* a failed write: the held ones fail with EIO, new ones too until a report or a reset */
	w = mk(7, zstart(Z + 4), 8, ELV_OP_WRITE, 0, NULL);
	add_ok(w);
	assert_ptr_equal(dispatch(0), w);
	add_ok(mk(8, zstart(Z + 4) + 8, 8, ELV_OP_WRITE, 0, NULL));
	add_ok(mk(9, zstart(Z + 4), 8, ELV_OP_WRITE, ELV_RQ_ZONE_APPEND, NULL));
	complete_rq(w, ELV_EIO);
	chk();
	assert_int_equal(fx.failed, 2);
	assert_int_equal(elv_zone_get(fx.q, Z + 4, &zi), 0);
	assert_int_equal(zi.need_wp_update, 1);
	assert_int_equal(zi.nr_held, 0);
	REFUSED(ELV_EIO, add(mk(0, zstart(Z + 4) + 8, 8, ELV_OP_WRITE, 0, NULL)));
	REFUSED(ELV_EIO, add(mk(0, zstart(Z + 4), 8, ELV_OP_WRITE, ELV_RQ_ZONE_APPEND, NULL)));
	assert_int_equal(elv_zone_report(fx.q, Z + 4, ELV_ZONE_CLOSED, 8), 0);
	add_ok(mk(8, zstart(Z + 4) + 8, 8, ELV_OP_WRITE, 0, NULL));
	run_all();
	assert_int_equal(zwp(Z + 4), 16);
	down();
}

/* elv_zone_report(): every refused report changes nothing. */
static void test_zone_report(void **state)
{
	struct elv_request *w;

	(void)state;
	up(&elv_policy_bfq, 1, 0);
	REFUSED(ELV_ERANGE, elv_zone_report(fx.q, NZ, ELV_ZONE_EMPTY, 0));
	REFUSED(ELV_ERANGE, elv_zone_report(fx.q, UINT32_MAX, ELV_ZONE_EMPTY, 0));
	REFUSED(ELV_EINVAL, elv_zone_report(fx.q, Z, ELV_ZONE_NOT_WP, 0));
	REFUSED(ELV_EINVAL, elv_zone_report(fx.q, 0, ELV_ZONE_EMPTY, 0));
	REFUSED(ELV_EINVAL, elv_zone_report(fx.q, 1, ELV_ZONE_FULL, 0));
	REFUSED(ELV_EINVAL, elv_zone_report(fx.q, Z, ELV_ZONE_OFFLINE + 1, 0));
	REFUSED(ELV_EINVAL, elv_zone_report(fx.q, Z, UINT32_MAX, 0));
	REFUSED(ELV_EINVAL, elv_zone_report(fx.q, Z, ELV_ZONE_EMPTY, 1));
	REFUSED(ELV_EINVAL, elv_zone_report(fx.q, Z, ELV_ZONE_OPEN, 0));
	REFUSED(ELV_EINVAL, elv_zone_report(fx.q, Z, ELV_ZONE_CLOSED, ZS));
	REFUSED(ELV_EINVAL, elv_zone_report(fx.q, Z, ELV_ZONE_CLOSED, UINT32_MAX));
	assert_int_equal(elv_zone_report(fx.q, 0, ELV_ZONE_NOT_WP, 0), 0);
	assert_int_equal(elv_zone_report(fx.q, Z, ELV_ZONE_OPEN, ZS - 1), 0);
	assert_int_equal(zwp(Z), ZS - 1);
	w = mk(0, zstart(Z) + ZS - 1, 1, ELV_OP_WRITE, 0, NULL);
	add_ok(w);
	REFUSED(ELV_EBUSY, elv_zone_report(fx.q, Z, ELV_ZONE_EMPTY, 0)); /* queued */
	assert_ptr_equal(dispatch(0), w);
	REFUSED(ELV_EBUSY, elv_zone_report(fx.q, Z, ELV_ZONE_EMPTY, 0)); /* in flight */
	complete_rq(w, 0);
	assert_int_equal(elv_zone_report(fx.q, Z, ELV_ZONE_EMPTY, 0), 0);
	add_ok(mk(1, zstart(Z), ZS, ELV_OP_ZONE_RESET, 0, NULL));
	REFUSED(ELV_EBUSY, elv_zone_report(fx.q, Z, ELV_ZONE_EMPTY, 0)); /* reset under way */
	run_all();
	down();
}

/* ---- QoS settings, attach and detach ------------------------------------------------------ */

/* Throttle settings @t are refused with @want by the check and on a client, changing nothing. */
static void thr_bad(const struct elv_throttle_settings *t, int want)
{
	assert_int_equal(elv_throttle_check(t), want);
	REFUSED(want, elv_qos_set_throttle(fx.q, &fx.c[0], t, fx.now));
	REFUSED(want, elv_qos_set_throttle(fx.q, &fx.c[NS], t, fx.now));
}

static void mc_bad(const struct elv_mclock_settings *m, int want)
{
	assert_int_equal(elv_mclock_check(m), want);
	REFUSED(want, elv_qos_set_mclock(fx.q, &fx.c[1], m, fx.now));
	REFUSED(want, elv_qos_set_mclock(fx.q, &fx.c[NS + 1], m, fx.now));
}

/* The stage's settings @s are refused by elv_qos_set() and by elv_qos_attach() alike. */
static void qset_bad(const struct elv_qos_settings *s, int want)
{
	static uint64_t mem3[1u << 14];
	static struct elv_qos spare;
	struct elv_qos_settings got;
	struct elv_queue *q3;

	REFUSED(want, elv_qos_set(fx.q, s, fx.now));
	assert_true(elv_queue_size(&elv_policy_noop, NULL) <= sizeof(mem3));
	assert_int_equal(elv_queue_init(&q3, mem3, sizeof(mem3), &elv_policy_noop, NULL), 0);
	assert_int_equal(elv_qos_attach(q3, &spare, s, fx.now), want);
	assert_int_equal(elv_qos_get(q3, &got), ELV_EINVAL); /* not attached */
	assert_int_equal(elv_qos_detach(q3, fx.now), ELV_EINVAL);
	assert_int_equal(elv_queue_exit(q3), 0);
}

static void test_qos_settings(void **state)
{
	struct elv_throttle_settings t, good;
	struct elv_mclock_settings m;
	struct elv_qos_settings s;
	const uint64_t huge[] = {ELV_THROTTLE_RATE_MAX + 1, (uint64_t)1 << 63, UINT64_MAX};
	unsigned i, k;

	(void)state;
	up(&elv_policy_bfq, 0, 1);
	/* give client 0 settings that must survive every refusal */
	memset(&good, 0, sizeof(good));
	good.limit[ELV_THROTTLE_BPS_READ].avg = 1000000;
	good.limit[ELV_THROTTLE_BPS_READ].max = 2000000;
	good.limit[ELV_THROTTLE_BPS_READ].max_length = 3;
	assert_int_equal(elv_qos_set_throttle(fx.q, &fx.c[0], &good, fx.now), 0);
	memset(&m, 0, sizeof(m));
	m.weight = 10;
	m.reservation = 5;
	m.limit = 50;
	assert_int_equal(elv_qos_set_mclock(fx.q, &fx.c[1], &m, fx.now), 0);

	for (k = 0; k < ELV_THROTTLE_NR; k++)
		for (i = 0; i < LEN(huge); i++) {
			memset(&t, 0, sizeof(t));
			t.limit[k].avg = huge[i];
			thr_bad(&t, ELV_ERANGE);
			t.limit[k].avg = 1;
			t.limit[k].max = huge[i];
			thr_bad(&t, ELV_ERANGE);
		}
	memset(&t, 0, sizeof(t));
	t.limit[ELV_THROTTLE_BPS_TOTAL].avg = 1000;
	t.limit[ELV_THROTTLE_BPS_TOTAL].max = 999; /* burst below the rate */
	thr_bad(&t, ELV_EINVAL);
	t.limit[ELV_THROTTLE_BPS_TOTAL].max = 2000;
	t.limit[ELV_THROTTLE_BPS_TOTAL].max_length = ELV_THROTTLE_LENGTH_MAX + 1;
	thr_bad(&t, ELV_ERANGE);
	t.limit[ELV_THROTTLE_BPS_TOTAL].max_length = UINT32_MAX;
	thr_bad(&t, ELV_ERANGE);
	t.limit[ELV_THROTTLE_BPS_TOTAL].max_length = ELV_THROTTLE_LENGTH_MAX; /* the longest */
	assert_int_equal(elv_throttle_check(&t), 0);
	memset(&t, 0, sizeof(t));
	t.limit[ELV_THROTTLE_IOPS_READ].max = 10; /* a burst without an average */
	thr_bad(&t, ELV_EINVAL);
	memset(&t, 0, sizeof(t));
	t.limit[ELV_THROTTLE_IOPS_READ].avg = 10;
	t.limit[ELV_THROTTLE_IOPS_READ].max_length = 2; /* a length without a burst */
	thr_bad(&t, ELV_EINVAL);
	memset(&t, 0, sizeof(t));
	t.limit[ELV_THROTTLE_IOPS_TOTAL].avg = 10;
	t.limit[ELV_THROTTLE_IOPS_WRITE].avg = 10; /* total beside a direction */
	thr_bad(&t, ELV_EINVAL);
	memset(&t, 0, sizeof(t));
	t.limit[ELV_THROTTLE_BPS_TOTAL].avg = 10;
	t.limit[ELV_THROTTLE_BPS_TOTAL].max = 20;
	t.limit[ELV_THROTTLE_BPS_READ].avg = 10;
	thr_bad(&t, ELV_EINVAL);
	memset(&t, 0, sizeof(t));
	t.iops_size = 4096; /* without an operations limit */
	t.limit[ELV_THROTTLE_BPS_TOTAL].avg = 10;
	thr_bad(&t, ELV_EINVAL);
	memset(&t, 0, sizeof(t));
	t.iops_size = UINT32_MAX; /* times the rate passes 2^62 */
	t.limit[ELV_THROTTLE_IOPS_TOTAL].avg = ((uint64_t)1 << 62) / UINT32_MAX + 1;
	thr_bad(&t, ELV_ERANGE);
	t.limit[ELV_THROTTLE_IOPS_TOTAL].avg = 1;
	t.limit[ELV_THROTTLE_IOPS_TOTAL].max = ((uint64_t)1 << 62) / UINT32_MAX + 1;
	thr_bad(&t, ELV_ERANGE);
	t.limit[ELV_THROTTLE_IOPS_TOTAL].max = ((uint64_t)1 << 62) / UINT32_MAX;
	assert_int_equal(elv_throttle_check(&t), 0);
	memset(&t, 0, sizeof(t));
	t.mode = 2;
	thr_bad(&t, ELV_EINVAL);
	t.mode = 255;
	thr_bad(&t, ELV_EINVAL);
	memset(&t, 0, sizeof(t));
	t.reserved8[1] = 1;
	thr_bad(&t, ELV_EINVAL);
	memset(&t, 0, sizeof(t));
	t.reserved[0] = 1;
	thr_bad(&t, ELV_EINVAL);
	memset(&t, 0, sizeof(t));
	t.limit[ELV_THROTTLE_IOPS_WRITE].reserved = 1;
	thr_bad(&t, ELV_EINVAL);
	/* io.max: per-direction averages only */
	memset(&t, 0, sizeof(t));
	t.mode = ELV_THROTTLE_IOMAX;
	t.limit[ELV_THROTTLE_BPS_TOTAL].avg = 10;
	thr_bad(&t, ELV_EINVAL);
	memset(&t, 0, sizeof(t));
	t.mode = ELV_THROTTLE_IOMAX;
	t.limit[ELV_THROTTLE_BPS_READ].avg = 10;
	t.limit[ELV_THROTTLE_BPS_READ].max = 10;
	thr_bad(&t, ELV_EINVAL);
	t.limit[ELV_THROTTLE_BPS_READ].max = 0;
	t.limit[ELV_THROTTLE_BPS_READ].max_length = 1;
	thr_bad(&t, ELV_EINVAL);
	t.limit[ELV_THROTTLE_BPS_READ].max_length = 0;
	t.iops_size = 512;
	thr_bad(&t, ELV_EINVAL);
	t.iops_size = 0;
	t.limit[ELV_THROTTLE_IOPS_WRITE].avg = (uint64_t)UINT32_MAX + 1;
	thr_bad(&t, ELV_ERANGE);
	t.limit[ELV_THROTTLE_IOPS_WRITE].avg = UINT32_MAX;
	t.limit[ELV_THROTTLE_BPS_WRITE].avg = UINT64_MAX;
	thr_bad(&t, ELV_ERANGE);
	/* zero lengths are the defaults */
	memset(&t, 0, sizeof(t));
	t.limit[ELV_THROTTLE_BPS_WRITE].avg = 1;
	t.limit[ELV_THROTTLE_BPS_WRITE].max = 1;
	assert_int_equal(elv_throttle_check(&t), 0);

	/* mClock */
	memset(&m, 0, sizeof(m));
	mc_bad(&m, ELV_EINVAL); /* weight 0 */
	m.weight = ELV_MCLOCK_WEIGHT_MAX + 1;
	mc_bad(&m, ELV_ERANGE);
	m.weight = UINT32_MAX;
	mc_bad(&m, ELV_ERANGE);
	m.weight = 1;
	m.reservation = ELV_MCLOCK_RATE_MAX + 1;
	mc_bad(&m, ELV_ERANGE);
	m.reservation = UINT64_MAX;
	mc_bad(&m, ELV_ERANGE);
	m.reservation = 0;
	m.limit = UINT64_MAX;
	mc_bad(&m, ELV_ERANGE);
	m.limit = 10;
	m.reservation = 11;
	mc_bad(&m, ELV_EINVAL);
	m.reservation = 10;
	m.reserved = 1;
	mc_bad(&m, ELV_EINVAL);
	m.reserved = 0;
	m.weight = ELV_MCLOCK_WEIGHT_MAX;
	m.reservation = m.limit = ELV_MCLOCK_RATE_MAX;
	assert_int_equal(elv_mclock_check(&m), 0);

	/* the stage's settings */
	memset(&s, 0, sizeof(s));
	s.depth = 65537;
	qset_bad(&s, ELV_ERANGE);
	s.depth = UINT32_MAX;
	qset_bad(&s, ELV_ERANGE);
	memset(&s, 0, sizeof(s));
	s.at_limit = ELV_QOS_AT_LIMIT_REJECT + 1;
	qset_bad(&s, ELV_EINVAL);
	memset(&s, 0, sizeof(s));
	s.reject_threshold_ns = ((uint64_t)1 << 62) + 1;
	qset_bad(&s, ELV_ERANGE);
	s.reject_threshold_ns = UINT64_MAX;
	qset_bad(&s, ELV_ERANGE);
	memset(&s, 0, sizeof(s));
	s.idle_age_ns = UINT64_MAX;
	qset_bad(&s, ELV_ERANGE);
	memset(&s, 0, sizeof(s));
	s.iomax_slice_ns = 10 * 1000000000ULL + 1;
	qset_bad(&s, ELV_ERANGE);
	s.iomax_slice_ns = UINT64_MAX;
	qset_bad(&s, ELV_ERANGE);
	memset(&s, 0, sizeof(s));
	s.iomax_slice_ns = 1000000;
	s.iomax_tick_ns = 1000001; /* a tick longer than the slice */
	qset_bad(&s, ELV_ERANGE);
	memset(&s, 0, sizeof(s));
	s.iomax_tick_ns = 100 * ELV_NSEC_PER_MSEC + 1; /* longer than the default slice */
	qset_bad(&s, ELV_ERANGE);
	memset(&s, 0, sizeof(s));
	s.reserved8[6] = 1;
	qset_bad(&s, ELV_EINVAL);
	memset(&s, 0, sizeof(s));
	s.reserved[1] = 1;
	qset_bad(&s, ELV_EINVAL);
	/* the largest values in range are taken */
	memset(&s, 0, sizeof(s));
	s.depth = 65536;
	s.reject_threshold_ns = s.idle_age_ns = (uint64_t)1 << 62;
	s.iomax_slice_ns = s.iomax_tick_ns = 10 * 1000000000ULL;
	assert_int_equal(elv_qos_set(fx.q, &s, fx.now), 0);
	chk();
	down();
}

static const struct elv_qos_settings qos_defaults;

/* Attach with requests queued or in flight, detach and membership changes with held ones. */
static void test_qos_busy(void **state)
{
	struct elv_throttle_settings t;
	struct elv_mclock_settings m;
	struct elv_qos_client_stats cst;
	int i, n;

	(void)state;
	up(&elv_policy_bfq, 1, 0);
	/* no stage yet */
	memset(&t, 0, sizeof(t));
	memset(&m, 0, sizeof(m));
	m.weight = 1;
	REFUSED(ELV_EINVAL, elv_qos_detach(fx.q, fx.now));
	REFUSED(ELV_EINVAL, elv_qos_set(fx.q, &qos_defaults, fx.now));
	REFUSED(ELV_EINVAL, elv_qos_stream_attach(fx.q, &fx.s[0], &fx.c[0], fx.now));
	REFUSED(ELV_EINVAL, elv_qos_stream_detach(fx.q, &fx.s[0], fx.now));
	REFUSED(ELV_EINVAL, elv_qos_group_attach(fx.q, &fx.g[0], &fx.c[NS], fx.now));
	REFUSED(ELV_EINVAL, elv_qos_group_detach(fx.q, &fx.g[0], fx.now));
	REFUSED(ELV_EINVAL, elv_qos_set_throttle(fx.q, &fx.c[0], &t, fx.now));
	REFUSED(ELV_EINVAL, elv_qos_set_mclock(fx.q, &fx.c[0], &m, fx.now));
	REFUSED(ELV_EINVAL, elv_qos_client_stats(fx.q, &fx.c[0], &cst));
	REFUSED(0, (int)elv_qos_request_cost(fx.q, mk(0, 0, 8, ELV_OP_READ, 0, NULL)));
	add_ok(mk(0, 0, 8, ELV_OP_READ, 0, &fx.s[0]));
	REFUSED(ELV_EBUSY, elv_qos_attach(fx.q, &qos, NULL, fx.now));
	assert_non_null(dispatch(0));
	REFUSED(ELV_EBUSY, elv_qos_attach(fx.q, &qos, NULL, fx.now));
	complete_at(0, 0);
	assert_int_equal(elv_qos_attach(fx.q, &qos, NULL, fx.now), 0);
	REFUSED(ELV_EBUSY, elv_qos_attach(fx.q, &qos2, NULL, fx.now)); /* twice */
	for (i = 0; i < NS; i++)
		assert_int_equal(elv_qos_stream_attach(fx.q, &fx.s[i], &fx.c[i], fx.now), 0);
	REFUSED(ELV_EBUSY, elv_qos_stream_attach(fx.q, &fx.s[0], &fx.c[NS], fx.now));
	assert_int_equal(elv_qos_group_attach(fx.q, &fx.g[1], &fx.c[NS + 1], fx.now), 0);
	REFUSED(ELV_EBUSY, elv_qos_group_attach(fx.q, &fx.g[0], &fx.c[NS + 1], fx.now));
	REFUSED(ELV_EINVAL, elv_qos_group_detach(fx.q, &fx.g[0], fx.now)); /* has none */

	/* one operation per second: the first passes, the others wait */
	memset(&t, 0, sizeof(t));
	t.limit[ELV_THROTTLE_IOPS_TOTAL].avg = 1;
	assert_int_equal(elv_qos_set_throttle(fx.q, &fx.c[0], &t, fx.now), 0);
	for (i = 1; i <= 4; i++)
		add_ok(mk(i, (uint64_t)i * 64, 8, ELV_OP_READ, 0, &fx.s[0]));
	assert_int_equal(elv_qos_client_stats(fx.q, &fx.c[0], &cst), 0);
	assert_true(cst.held_throttle >= 3);
	REFUSED(ELV_EBUSY, elv_qos_detach(fx.q, fx.now));
	REFUSED(ELV_EBUSY, elv_qos_stream_detach(fx.q, &fx.s[0], fx.now));
	REFUSED(ELV_EBUSY, elv_stream_set_group(fx.q, &fx.s[0], &fx.g[1]));
	REFUSED(ELV_EBUSY, elv_stream_exit(fx.q, &fx.s[0], fx.now));
	REFUSED(ELV_EBUSY, elv_queue_exit(fx.q));
	m.reservation = 0;
	m.limit = 0;
	m.weight = 1;
	m.reserved = 0;
	REFUSED(ELV_EBUSY, elv_qos_set_mclock(fx.q, &fx.c[0], &m, fx.now));
	/* a group client cannot come while a member stream holds requests */
	assert_int_equal(elv_qos_group_detach(fx.q, &fx.g[1], fx.now), 0);
	add_ok(mk(10, 4096, 8, ELV_OP_READ, 0, &fx.s[3])); /* s[3] is in g[1] */
	REFUSED(ELV_EBUSY, elv_qos_group_attach(fx.q, &fx.g[1], &fx.c[NS + 1], fx.now));

	/* mClock at its limit: removing it with requests queued is refused */
	m.limit = 1;
	assert_int_equal(elv_qos_set_mclock(fx.q, &fx.c[1], &m, fx.now), 0);
	for (i = 20; i < 24; i++)
		add_ok(mk(i, (uint64_t)i * 64, 8, ELV_OP_READ, 0, &fx.s[1]));
	while (dispatch(ELV_DISPATCH_FORCE))
		;
	assert_int_equal(elv_qos_client_stats(fx.q, &fx.c[1], &cst), 0);
	assert_true(cst.held_mclock >= 1);
	REFUSED(ELV_EBUSY, elv_qos_set_mclock(fx.q, &fx.c[1], NULL, fx.now));
	REFUSED(ELV_EBUSY, elv_qos_stream_detach(fx.q, &fx.s[1], fx.now));
	REFUSED(ELV_EBUSY, elv_qos_detach(fx.q, fx.now));

	/* held requests can be cancelled and drained; then everything may go */
	assert_int_equal(elv_cancel(fx.q, &fx.rq[4]), 0);
	set_hs(&fx.rq[4], H_LIB, H_FREE);
	fx.cancelled++;
	chk();
	n = elv_drain(fx.q, on_drain, &fx);
	assert_true(n >= 5);
	chk();
	while (fx.nr_inflight)
		complete_at(0, 0);
	assert_int_equal(queued(), 0);
	assert_int_equal(elv_qos_set_mclock(fx.q, &fx.c[1], NULL, fx.now), 0);
	assert_int_equal(elv_qos_detach(fx.q, fx.now), 0);
	REFUSED(ELV_EINVAL, elv_qos_detach(fx.q, fx.now));
	REFUSED(ELV_EINVAL, elv_qos_set_throttle(fx.q, &fx.c[0], &t, fx.now)); /* no stage */
	assert_null(fx.s[0].qos); /* clients went with the stage */
	down();
}

/*
 * A refused call does not move the queue's clock, whatever time it names: a request the
 * throttle holds until T stays held when the queue is asked at its own time afterwards.
 */
static void test_refusals_keep_clock(void **state)
{
	struct elv_throttle_settings t, bad;
	struct elv_mclock_settings m;
	struct elv_qos_settings qs;
	struct elv_stream s;
	struct elv_group g;
	struct elv_request *rq = NULL;
	uint64_t later, ev;
	int k;

	(void)state;
	up(&elv_policy_bfq, 1, 1);
	memset(&t, 0, sizeof(t));
	t.limit[ELV_THROTTLE_IOPS_TOTAL].avg = 1;
	assert_int_equal(elv_qos_set_throttle(fx.q, &fx.c[0], &t, fx.now), 0);
	add_ok(mk(0, 0, 8, ELV_OP_READ, 0, &fx.s[0]));
	add_ok(mk(1, 64, 8, ELV_OP_READ, 0, &fx.s[0])); /* held by the throttle */
	assert_ptr_equal(dispatch(0), &fx.rq[0]);
	assert_null(dispatch(0));
	ev = elv_next_event(fx.q);
	assert_true(ev != ELV_TIME_NEVER && elv_time_after(ev, fx.now));
	later = ev + 10 * ELV_NSEC_PER_MSEC * 1000;
	memset(&bad, 0, sizeof(bad));
	bad.limit[ELV_THROTTLE_IOPS_TOTAL].avg = UINT64_MAX;
	memset(&m, 0, sizeof(m));
	memset(&qs, 0, sizeof(qs));
	qs.depth = UINT32_MAX;
	memset(&s, 0, sizeof(s));
	s.weight = ELV_WEIGHT_MAX + 1;
	memset(&g, 0, sizeof(g));
	g.weight = ELV_GROUP_WEIGHT_MAX + 1;
	for (k = 0; k < 16; k++) {
		switch (k) {
		case 0: REFUSED(ELV_ERANGE, elv_qos_set_throttle(fx.q, &fx.c[0], &bad, later)); break;
		case 1: REFUSED(ELV_EINVAL, elv_qos_set_mclock(fx.q, &fx.c[0], &m, later)); break;
		case 2: REFUSED(ELV_ERANGE, elv_qos_set(fx.q, &qs, later)); break;
		case 3: REFUSED(ELV_EBUSY, elv_qos_attach(fx.q, &qos2, NULL, later)); break;
		case 4: REFUSED(ELV_EBUSY, elv_qos_stream_attach(fx.q, &fx.s[0], &fx.c[1], later));
			break;
		case 5: REFUSED(ELV_EBUSY, elv_qos_stream_detach(fx.q, &fx.s[0], later)); break;
		case 6: REFUSED(ELV_EINVAL, elv_qos_group_detach(fx.q, &fx.g2, later)); break;
		case 7: REFUSED(ELV_EBUSY, elv_qos_detach(fx.q, later)); break;
		case 8: REFUSED(ELV_ERANGE, elv_group_init(fx.q, &g, later)); break;
		case 9: REFUSED(ELV_EBUSY, elv_group_exit(fx.q, &fx.g[0], later)); break;
		case 10: REFUSED(ELV_ERANGE, elv_stream_init(fx.q, &s, later)); break;
		case 11: REFUSED(ELV_EBUSY, elv_stream_exit(fx.q, &fx.s[0], later)); break;
		case 12: REFUSED(ELV_EINVAL, elv_complete_status(fx.q, &fx.rq[0], 1, later)); break;
		case 13: REFUSED(ELV_ERANGE, elv_add(fx.q, mk(2, zstart(NZ), 8, ELV_OP_WRITE, 0,
							 &fx.s[1]), later));
			break;
		case 14: REFUSED(ELV_EBUSY, elv_qos_group_attach(fx.q, &fx.g[0], &fx.c[1], later));
			break;
		default: REFUSED(ELV_EINVAL, elv_add(fx.q, mk(2, zstart(Z) + 8, 8, ELV_OP_WRITE, 0,
							 &fx.s[1]), later));
			break;
		}
		/* asked at its own time, the queue still holds the request */
		assert_int_equal(elv_dispatch(fx.q, fx.now, 0, &rq), ELV_EAGAIN);
		assert_true(elv_next_event(fx.q) == ev);
	}
	fx.now = ev;
	assert_ptr_equal(dispatch(0), &fx.rq[1]);
	while (fx.nr_inflight)
		complete_at(0, 0);
	down();
}

/* ---- calls from inside every callback ---------------------------------------------------- */

static void test_callbacks(void **state)
{
	struct elv_request *w;
	unsigned before;
	int i;

	(void)state;
	up(&elv_policy_bfq, 1, 1);
	assert_non_null(mk(0, zstart(0), 8, ELV_OP_READ, 0, NULL));
	add_ok(&fx.rq[0]);
	assert_ptr_equal(dispatch(0), &fx.rq[0]); /* one stays in flight throughout */
	fx.probe_on = 1;
	/* trace: every kind of event the queue sends */
	fx.probe_trace = ELV_TRACE_INSERT;
	before = fx.probes;
	add_ok(mk(1, zstart(Z), 8, ELV_OP_WRITE, 0, &fx.s[0]));
	assert_int_equal(fx.probes, before + 1);
	fx.probe_trace = ELV_TRACE_DISPATCH;
	assert_ptr_equal(dispatch(ELV_DISPATCH_FORCE), &fx.rq[1]);
	assert_int_equal(fx.probes, before + 2);
	fx.probe_trace = ELV_TRACE_REQUEUE;
	assert_int_equal(elv_requeue(fx.q, &fx.rq[1], fx.now), 0);
	set_hs(&fx.rq[1], H_FLIGHT, H_LIB);
	fx.inflight[--fx.nr_inflight] = NULL;
	assert_int_equal(fx.probes, before + 3);
	assert_ptr_equal(dispatch(ELV_DISPATCH_FORCE), &fx.rq[1]);
	fx.probe_trace = ELV_TRACE_COMPLETE;
	complete_rq(&fx.rq[1], 0);
	assert_int_equal(fx.probes, before + 4);
	fx.probe_trace = ELV_TRACE_CANCEL;
	add_ok(mk(2, 40, 8, ELV_OP_READ, 0, NULL));
	assert_int_equal(elv_cancel(fx.q, &fx.rq[2]), 0);
	set_hs(&fx.rq[2], H_LIB, H_FREE);
	fx.cancelled++;
	assert_int_equal(fx.probes, before + 5);
	/* merge: a back merge into a queued read */
	fx.probe_trace = 0;
	add_ok(mk(3, 64, 8, ELV_OP_READ, 0, NULL));
	assert_int_equal(add(mk(4, 72, 8, ELV_OP_READ, 0, NULL)), 1);
	assert_int_equal(fx.probes, before + 7); /* allow_merge, then merge */
	/* zone fail: writes held behind a failed one */
	w = mk(5, zstart(Z) + 8, 8, ELV_OP_WRITE, 0, NULL);
	add_ok(w);
	while (dispatch(ELV_DISPATCH_FORCE))
		;
	add_ok(mk(6, zstart(Z) + 16, 8, ELV_OP_WRITE, 0, NULL));
	add_ok(mk(7, zstart(Z) + 24, 8, ELV_OP_WRITE, 0, NULL));
	before = fx.probes;
	complete_rq(w, -5);
	assert_int_equal(fx.failed, 2);
	assert_int_equal(fx.probes, before + 2);
	chk();
	/* drain */
	for (i = 8; i < 12; i++)
		add_ok(mk(i, 300 + (uint64_t)i * 16, 8, ELV_OP_READ, 0, &fx.s[i % NS]));
	before = fx.probes;
	assert_int_equal(elv_drain(fx.q, on_drain, &fx), 4);
	assert_int_equal(fx.probes, before + 4);
	fx.probe_on = 0;
	chk();
	while (fx.nr_inflight)
		complete_at(0, 0);
	run_all();
	down();
}

/* ELV_QOS_AT_LIMIT_REJECT: the refusal is ELV_EAGAIN; only the client's limit tag and its
 * count of refusals move (as documented), the queue does not. */
static void test_qos_reject(void **state)
{
	struct elv_qos_settings set;
	struct elv_mclock_settings m;
	struct elv_qos_client_stats a, b;
	struct snap before, after;
	int i, r, refused = 0;

	(void)state;
	up(&elv_policy_bfq, 1, 1);
	memset(&set, 0, sizeof(set));
	set.at_limit = ELV_QOS_AT_LIMIT_REJECT;
	assert_int_equal(elv_qos_set(fx.q, &set, fx.now), 0);
	memset(&m, 0, sizeof(m));
	m.weight = 1;
	m.limit = 1;
	assert_int_equal(elv_qos_set_mclock(fx.q, &fx.c[2], &m, fx.now), 0);
	for (i = 0; i < 6; i++) {
		assert_int_equal(elv_qos_client_stats(fx.q, &fx.c[2], &a), 0);
		snap_take(fx.q, &before);
		r = add(mk(i, 200 + (uint64_t)i * 8, 8, ELV_OP_READ, 0, &fx.s[2]));
		assert_true(r == 0 || r == ELV_EAGAIN);
		if (r == ELV_EAGAIN) {
			refused++;
			snap_take(fx.q, &after);
			/* the client's counters are in the snapshot: compare the rest */
			memcpy(after.cst, before.cst, sizeof(after.cst));
			snap_same(&before, &after);
			assert_int_equal(elv_qos_client_stats(fx.q, &fx.c[2], &b), 0);
			assert_true(b.rejected == a.rejected + 1);
			assert_int_equal(fx.rq[i].state, 0); /* the host's, reusable */
		}
		chk();
	}
	assert_true(refused >= 4);
	/* A zone write refused leaves its zone as it was (the snapshot has every zone). */
	snap_take(fx.q, &before);
	assert_int_equal(add(mk(6, zstart(Z + 5), 8, ELV_OP_WRITE, 0, &fx.s[2])), ELV_EAGAIN);
	snap_take(fx.q, &after);
	memcpy(after.cst, before.cst, sizeof(after.cst));
	snap_same(&before, &after);
	chk();
	/* Two writes of a zone once the limit allows one: the second, held by the zone stage,
	 * reaches mClock after elv_add() returned and is not refused there (its zone ordered
	 * it already). */
	fx.now += 100000000000ULL; /* 100 s */
	add_ok(mk(7, zstart(Z + 5), 8, ELV_OP_WRITE, 0, &fx.s[2]));
	while (dispatch(ELV_DISPATCH_FORCE))
		;
	assert_int_equal(fx.rq[7].state, ELV_RQ_DISPATCHED); /* so the next cannot merge */
	add_ok(mk(8, zstart(Z + 5) + 8, 8, ELV_OP_WRITE, 0, &fx.s[2]));
	complete_rq(&fx.rq[7], 0);
	assert_int_equal(fx.failed, 0); /* let go by the zone stage: not refused */
	assert_true(fx.rq[8].state == ELV_RQ_HELD || fx.rq[8].state == ELV_RQ_QUEUED);
	run_all();
	assert_int_equal(fx.failed, 0);
	assert_int_equal(zwp(Z + 5), 16);
	down();
}

/*
 * Writes of a zone in LBA order, some of them held by the QoS stage: each must reach the
 * zone in order, none may fail. The zone stage comes first, so a write the QoS stage holds
 * was issued for its zone. (1) Two writes of a throttled stream to an empty zone: both are
 * taken. (2) W0 of stream b in flight, W1 of throttled stream a and W2 of stream b held by
 * the zone stage: when W0 completes W1 goes on to the throttle, and W2 waits for it.
 * (3) mClock prefers a client over another with a lower limit: it never sees two writes of
 * one zone, so it cannot put the later one first.
 */
static void test_zone_behind_throttle(void **state)
{
	struct elv_throttle_settings t;
	struct elv_mclock_settings m;

	(void)state;
	up(&elv_policy_bfq, 1, 1);
	memset(&t, 0, sizeof(t));
	t.limit[ELV_THROTTLE_IOPS_TOTAL].avg = 1;
	assert_int_equal(elv_qos_set_throttle(fx.q, &fx.c[0], &t, fx.now), 0);
	memset(&m, 0, sizeof(m));
	m.weight = 1;
	m.limit = 1;
	assert_int_equal(elv_qos_set_mclock(fx.q, &fx.c[2], &m, fx.now), 0);
	m.limit = 0;
	m.weight = 100;
	assert_int_equal(elv_qos_set_mclock(fx.q, &fx.c[3], &m, fx.now), 0);
	add_ok(mk(0, 0, 8, ELV_OP_READ, 0, &fx.s[0])); /* takes the allowance */
	add_ok(mk(6, 8, 8, ELV_OP_READ, 0, &fx.s[2])); /* takes the limit's first unit */
	/* (1) */
	add_ok(mk(1, zstart(Z), 8, ELV_OP_WRITE, 0, &fx.s[0]));
	add_ok(mk(2, zstart(Z) + 8, 8, ELV_OP_WRITE, 0, &fx.s[0]));
	/* (2) */
	add_ok(mk(3, zstart(Z + 1), 8, ELV_OP_WRITE, 0, &fx.s[1]));
	while (dispatch(ELV_DISPATCH_FORCE))
		;
	assert_int_equal(fx.rq[3].state, ELV_RQ_DISPATCHED);
	add_ok(mk(4, zstart(Z + 1) + 8, 8, ELV_OP_WRITE, 0, &fx.s[0]));
	add_ok(mk(5, zstart(Z + 1) + 16, 8, ELV_OP_WRITE, 0, &fx.s[1]));
	complete_rq(&fx.rq[3], 0);
	chk();
	assert_int_equal(fx.failed, 0);
	/* (3) */
	add_ok(mk(7, zstart(Z + 2), 8, ELV_OP_WRITE, 0, &fx.s[2]));
	add_ok(mk(8, zstart(Z + 2) + 8, 8, ELV_OP_WRITE, 0, &fx.s[3]));
	add_ok(mk(9, zstart(Z + 2) + 16, 8, ELV_OP_WRITE, 0, &fx.s[2]));
	add_ok(mk(10, zstart(Z + 2) + 24, 8, ELV_OP_WRITE, 0, &fx.s[3]));
	run_all();
	assert_int_equal(fx.failed, 0);
	assert_int_equal(zwp(Z), 16);
	assert_int_equal(zwp(Z + 1), 24);
	assert_int_equal(zwp(Z + 2), 32);
	down();
}

/*
 * The zone stage judges a write at elv_add(), before the QoS stage may hold it: a write a
 * throttle holds has opened its zone already. With two active zones at most, a third empty
 * zone is refused at once with ELV_EAGAIN, throttled or not; the held writes then go in
 * order and none comes back through the fail callback. A zone whose write the throttle
 * holds cannot be reported (the write is on its way).
 */
static void test_zone_after_throttle(void **state)
{
	struct elv_throttle_settings t;
	struct elv_request *w;

	(void)state;
	geo_default(&geo_next);
	geo_next.max_open = geo_next.max_active = 2;
	up(&elv_policy_bfq, 1, 1);
	memset(&geo_next, 0, sizeof(geo_next));
	memset(&t, 0, sizeof(t));
	t.limit[ELV_THROTTLE_IOPS_TOTAL].avg = 2;
	assert_int_equal(elv_qos_set_throttle(fx.q, &fx.c[0], &t, fx.now), 0);
	add_ok(mk(0, 0, 8, ELV_OP_READ, 0, &fx.s[0])); /* takes the allowance */
	add_ok(mk(1, zstart(Z), 8, ELV_OP_WRITE, 0, &fx.s[0]));      /* Z is empty */
	add_ok(mk(2, zstart(Z + 3), 8, ELV_OP_WRITE, 0, &fx.s[0]));  /* Z + 3 is empty */
	w = mk(3, zstart(Z + 4), 8, ELV_OP_WRITE, 0, &fx.s[0]);
	assert_int_equal(add(w), ELV_EAGAIN); /* Z and Z + 3 are active */
	w = mk(4, zstart(Z + 1), 8, ELV_OP_WRITE, 0, NULL);
	assert_int_equal(add(w), ELV_EAGAIN); /* not throttled: the same */
	assert_int_equal(elv_zone_report(fx.q, Z + 3, ELV_ZONE_READONLY, 0), ELV_EBUSY);
	add_ok(mk(5, zstart(Z) + 8, 8, ELV_OP_WRITE, 0, NULL));     /* behind rq 1 */
	chk();
	run_all();
	assert_int_equal(fx.failed, 0);
	assert_int_equal(fx.err_mask, 0);
	assert_int_equal(zwp(Z), 16);
	assert_int_equal(zwp(Z + 3), 8);
	assert_int_equal(zwp(Z + 4), 0);
	chk();
	down();
}

/*
 * An append still queued in the policy when the zone stage is detached keeps its flag, and
 * never merges (zone.h): a later write just after it or just before it is queued apart,
 * under every policy.
 */
static void test_zone_append_after_detach(void **state)
{
	const struct elv_policy *pols[] = { &elv_policy_noop, &elv_policy_deadline,
					    &elv_policy_cfq, &elv_policy_bfq };
	struct elv_request *a;
	unsigned k;

	(void)state;
	for (k = 0; k < LEN(pols); k++) {
		up(pols[k], 1, 0);
		a = mk(0, zstart(Z), 8, ELV_OP_WRITE, ELV_RQ_ZONE_APPEND, NULL);
		add_ok(a);
		assert_int_equal(a->sector, zstart(Z)); /* the zone was empty */
		assert_int_equal(elv_zone_detach(fx.q), 0);
		fx.zone_on = 0;
		chk();
		add_ok(mk(1, zstart(Z) + 8, 8, ELV_OP_WRITE, 0, NULL));  /* just after it */
		add_ok(mk(2, zstart(Z) - 8, 8, ELV_OP_WRITE, 0, NULL));  /* just before it */
		assert_int_equal(elv_queue_nr_queued(fx.q), 3);
		run_all();
		assert_int_equal(fx.merged, 0);
		assert_int_equal(fx.completed, 3);
		assert_true(a->flags & ELV_RQ_ZONE_APPEND);
		down();
	}
}

/*
 * A request the QoS stage holds has a time in elv_next_event() or goes on in a later
 * elv_complete() (qos.h). A throttled request while another is in flight: its time, and the
 * host that dispatches then gets it. mClock at its depth: no time, and the completion that
 * makes room lets it into the policy.
 */
static void test_qos_held_event(void **state)
{
	struct elv_qos_settings set;
	struct elv_throttle_settings t;
	struct elv_mclock_settings m;
	struct elv_request *a, *b;
	uint64_t ev;

	(void)state;
	up(&elv_policy_noop, 0, 1);
	memset(&set, 0, sizeof(set));
	set.depth = 1;
	set.at_limit = ELV_QOS_AT_LIMIT_ALLOW;
	assert_int_equal(elv_qos_set(fx.q, &set, fx.now), 0);
	memset(&t, 0, sizeof(t));
	t.limit[ELV_THROTTLE_IOPS_TOTAL].avg = 424;
	t.limit[ELV_THROTTLE_BPS_TOTAL].avg = 3055713;
	assert_int_equal(elv_qos_set_throttle(fx.q, &fx.c[0], &t, fx.now), 0);
	a = mk(0, 23048, 2863283, ELV_OP_WRITE, 0, &fx.s[0]); /* ~1.4 GB: 480 s of the cap */
	add_ok(a);
	assert_ptr_equal(dispatch(ELV_DISPATCH_FORCE), a);
	b = mk(1, 2264, 14, ELV_OP_WRITE, 0, &fx.s[0]);
	add_ok(b);
	ev = elv_next_event(fx.q);
	assert_true(ev != ELV_TIME_NEVER && elv_time_after(ev, fx.now));
	complete_rq(a, 0);
	assert_int_equal(elv_next_event(fx.q), ev); /* a completion does not free a throttle */
	assert_null(dispatch(0));
	fx.now = ev;
	assert_ptr_equal(dispatch(0), b);
	complete_rq(b, 0);
	assert_int_equal(elv_next_event(fx.q), ELV_TIME_NEVER);
	/* mClock, depth 1: the second request has no time while the first is out. */
	memset(&m, 0, sizeof(m));
	m.weight = 1;
	assert_int_equal(elv_qos_set_mclock(fx.q, &fx.c[1], &m, fx.now), 0);
	a = mk(2, 100, 8, ELV_OP_READ, 0, &fx.s[1]);
	b = mk(3, 200, 8, ELV_OP_READ, 0, &fx.s[1]);
	add_ok(a);
	add_ok(b);
	assert_int_equal(b->state, ELV_RQ_HELD);
	assert_ptr_equal(dispatch(0), a);
	assert_int_equal(elv_next_event(fx.q), ELV_TIME_NEVER);
	assert_null(dispatch(0));
	complete_rq(a, 0);
	assert_int_equal(b->state, ELV_RQ_QUEUED); /* released inside elv_complete() */
	assert_ptr_equal(dispatch(0), b);
	complete_rq(b, 0);
	down();
}

/* ---- a long random run under bfq: every request comes back exactly once ------------------- */

static uint64_t rng_state;

static uint32_t rnd(uint32_t n)
{
	rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t)((rng_state >> 33) % n);
}

/* @call, then: a refusal changed nothing. Yields the call's value. */
#define TRY(r, call)                                                                          \
	do {                                                                                  \
		struct snap b_, a_;                                                           \
		snap_take(fx.q, &b_);                                                         \
		(r) = (call);                                                                 \
		if ((r) < 0) {                                                                \
			snap_take(fx.q, &a_);                                                 \
			snap_same(&b_, &a_);                                                  \
		}                                                                             \
	} while (0)

static int free_rq(void)
{
	int i, start = (int)rnd(NRQ);

	for (i = 0; i < NRQ; i++)
		if (fx.hs[(start + i) % NRQ] == H_FREE)
			return (start + i) % NRQ;
	return -1;
}

static int lib_rq(void)
{
	int i, start = (int)rnd(NRQ);

	for (i = 0; i < NRQ; i++)
		if (fx.hs[(start + i) % NRQ] == H_LIB)
			return (start + i) % NRQ;
	return -1;
}

static uint32_t next_off[NZ]; /* where the host writes next in each sequential zone */
static uint32_t zone_cap;     /* writable sectors of a zone */

static void random_add(void)
{
	int i = free_rq(), r;
	uint32_t z = NCONV + rnd(NZ - NCONV), len = 1 + rnd(16);
	struct elv_stream *s = rnd(4) ? &fx.s[rnd(NS)] : NULL;
	struct elv_request *rq;
	unsigned kind = rnd(100);

	if (fx.sx_on && !rnd(6))
		s = &fx.sx;
	static const uint8_t some[] = {ELV_RQ_SYNC, ELV_RQ_META, ELV_RQ_FUA, ELV_RQ_READAHEAD,
				       ELV_RQ_NOMERGE, ELV_RQ_BARRIER};
	uint8_t flags = rnd(3) ? 0 : some[rnd(rnd(8) ? LEN(some) - 1 : LEN(some))];

	if (i < 0)
		return;
	if (kind < 25) {
		rq = mk(i, rnd(NZ * ZS - 16), len, ELV_OP_READ, flags, s);
	} else if (kind < 60) {
		if (next_off[z] + len > zone_cap)
			len = next_off[z] < zone_cap ? zone_cap - next_off[z] : 8;
		rq = mk(i, zstart(z) + next_off[z], len, ELV_OP_WRITE, flags, s);
	} else if (kind < 70) {
		rq = mk(i, zstart(z), len, ELV_OP_WRITE, flags | ELV_RQ_ZONE_APPEND, s);
	} else if (kind < 80) {
		rq = mk(i, rnd(NCONV * ZS - 16), len, ELV_OP_WRITE, flags, s);
	} else if (kind < 85) {
		rq = mk(i, zstart(z), ZS, rnd(2) ? ELV_OP_ZONE_RESET : ELV_OP_ZONE_FINISH, 0, s);
	} else if (kind < 89) {
		rq = mk(i, rnd(NZ * ZS - 16), len, ELV_OP_DISCARD, 0, s);
	} else if (kind < 92) {
		rq = mk(i, 0, 0, ELV_OP_FLUSH, 0, s);
	} else {
		/* anything: mostly refused */
		rq = mk(i, rnd(NZ * ZS + 64), rnd(ZS + 8),
			(uint8_t)rnd(7), (uint8_t)(rnd(4) ? 0 : 1u << rnd(8)), s);
	}
	TRY(r, add(rq));
	chk();
	if (kind >= 25 && kind < 60) {
		if (r == 0 || r == 1) {
			next_off[z] += len;
		} else if (fx.zone_on) {
			struct elv_zone_info zi;

			assert_int_equal(elv_zone_get(fx.q, z, &zi), 0);
			if (!zi.nr_held)
				next_off[z] = zi.wp;
		}
	} else if (kind >= 80 && kind < 85 && r == 0) {
		next_off[z] = rq->op == ELV_OP_ZONE_RESET ? 0 : zone_cap;
	}
}

/* The spare group comes and goes; streams move in and out of it. */
static void churn_group(void)
{
	int r;

	if (!fx.gx_on) {
		memset(&fx.gx, 0, sizeof(fx.gx));
		fx.gx.weight = (uint16_t)rnd(300);
		TRY(r, elv_group_init(fx.q, &fx.gx, fx.now));
		assert_int_equal(r, 0);
		fx.gx_on = 1;
		if (fx.qos_on && rnd(2)) {
			memset(&fx.cgx, 0, sizeof(fx.cgx));
			TRY(r, elv_qos_group_attach(fx.q, &fx.gx, &fx.cgx, fx.now));
			assert_int_equal(r, 0);
		}
	} else if (rnd(3)) {
		struct elv_stream *s = fx.sx_on && rnd(2) ? &fx.sx : &fx.s[rnd(NS)];

		TRY(r, elv_stream_set_group(fx.q, s, rnd(2) ? &fx.gx : NULL));
		assert_true(r == 0 || r == ELV_EBUSY);
	} else {
		TRY(r, elv_group_exit(fx.q, &fx.gx, fx.now));
		assert_true(r == 0 || r == ELV_EBUSY);
		fx.gx_on = r != 0;
	}
}

/* The spare stream comes and goes, with a QoS client of its own at times. */
static void churn_stream(void)
{
	int r;

	if (!fx.sx_on) {
		memset(&fx.sx, 0, sizeof(fx.sx));
		fx.sx.ioprio = (uint8_t)ELV_PRIO(rnd(4), rnd(8));
		fx.sx.weight = (uint16_t)rnd(ELV_WEIGHT_MAX + 100);
		TRY(r, elv_stream_init(fx.q, &fx.sx, fx.now));
		assert_int_equal(r, fx.sx.weight > ELV_WEIGHT_MAX ? ELV_ERANGE : 0);
		fx.sx_on = r == 0;
		if (fx.sx_on && fx.qos_on && rnd(2)) {
			memset(&fx.cx, 0, sizeof(fx.cx));
			TRY(r, elv_qos_stream_attach(fx.q, &fx.sx, &fx.cx, fx.now));
			assert_int_equal(r, 0);
		}
	} else {
		TRY(r, elv_stream_exit(fx.q, &fx.sx, fx.now));
		assert_true(r == 0 || r == ELV_EBUSY);
		fx.sx_on = r != 0;
	}
}

/* A stream's or a group's QoS client goes, or comes back. */
static void churn_client(int k)
{
	struct elv_stream *s = k < NS ? &fx.s[k] : NULL;
	struct elv_group *g = k < NS ? NULL : &fx.g[k - NS];
	void *has = s ? s->qos : g->qos;
	int r;

	if (has) {
		TRY(r, s ? elv_qos_stream_detach(fx.q, s, fx.now)
			 : elv_qos_group_detach(fx.q, g, fx.now));
		assert_true(r == 0 || r == ELV_EBUSY);
	} else {
		if (elv_qos_get_throttle(fx.q, &fx.c[k], &(struct elv_throttle_settings){0}) != 0)
			memset(&fx.c[k], 0, sizeof(fx.c[k])); /* not attached: the host's again */
		TRY(r, s ? elv_qos_stream_attach(fx.q, s, &fx.c[k], fx.now)
			 : elv_qos_group_attach(fx.q, g, &fx.c[k], fx.now));
		assert_true(r == 0 || r == ELV_EBUSY || (!fx.qos_on && r == ELV_EINVAL));
	}
}

/* Either stage goes, or comes back (only onto a queue with nothing anywhere). */
static void churn_stages(void)
{
	int r, i;

	if (rnd(2)) {
		if (fx.zone_on) {
			if (rnd(16))
				return; /* mostly attached: the zone stage has much to do */
			TRY(r, elv_zone_detach(fx.q));
			assert_true(r == 0 || r == ELV_EBUSY);
			fx.zone_on = r != 0;
		} else {
			TRY(r, elv_zone_attach(fx.q, &fx.geo, zmem, sizeof(zmem), on_fail, &fx));
			assert_true(r == 0 || r == ELV_EBUSY);
			fx.zone_on = r == 0;
			for (i = 0; r == 0 && i < (int)NZ; i++)
				next_off[i] = 0; /* every zone starts empty */
		}
	} else {
		if (fx.qos_on) {
			TRY(r, elv_qos_detach(fx.q, fx.now));
			assert_true(r == 0 || r == ELV_EBUSY);
			fx.qos_on = r != 0;
		} else {
			TRY(r, elv_qos_attach(fx.q, &qos, NULL, fx.now));
			assert_true(r == 0 || r == ELV_EBUSY);
			fx.qos_on = r == 0;
		}
	}
}

static void random_settings(void)
{
	struct elv_throttle_settings t;
	struct elv_mclock_settings m;
	int r, k = (int)rnd(NC);

	memset(&t, 0, sizeof(t));
	memset(&m, 0, sizeof(m));
	switch (rnd(11)) {
	case 0:
		TRY(r, elv_stream_set_weight(fx.q, &fx.s[rnd(NS)], (uint16_t)rnd(1100)));
		assert_true(r == 0 || r == ELV_ERANGE);
		break;
	case 1:
		TRY(r, elv_group_set_weight(fx.q, &fx.g[rnd(NG)], (uint16_t)rnd(11000)));
		assert_true(r == 0 || r == ELV_ERANGE);
		break;
	case 2:
		TRY(r, elv_stream_set_group(fx.q, &fx.s[rnd(NS)], rnd(4) ? &fx.g[rnd(NG)] : NULL));
		assert_true(r == 0 || r == ELV_EBUSY);
		break;
	case 3:
		if (rnd(2))
			t.limit[ELV_THROTTLE_IOPS_TOTAL].avg = 200 + rnd(2000);
		else
			t.limit[ELV_THROTTLE_BPS_READ].avg = 100000 + rnd(1000000);
		t.mode = rnd(3) ? ELV_THROTTLE_BUCKET : ELV_THROTTLE_IOMAX;
		if (t.mode == ELV_THROTTLE_IOMAX && t.limit[ELV_THROTTLE_IOPS_TOTAL].avg) {
			t.limit[ELV_THROTTLE_IOPS_READ].avg = t.limit[ELV_THROTTLE_IOPS_TOTAL].avg;
			t.limit[ELV_THROTTLE_IOPS_TOTAL].avg = 0;
		}
		TRY(r, elv_qos_set_throttle(fx.q, &fx.c[k], rnd(4) ? &t : NULL, fx.now));
		assert_true(r == 0 || r == ELV_EINVAL); /* EINVAL: no stage, or no client */
		break;
	case 4:
		m.weight = 1 + rnd(100);
		m.reservation = rnd(3) ? 0 : rnd(500);
		m.limit = rnd(3) ? 0 : 500 + rnd(5000);
		TRY(r, elv_qos_set_mclock(fx.q, &fx.c[k], rnd(3) ? &m : NULL, fx.now));
		assert_true(r == 0 || r == ELV_EBUSY || r == ELV_EINVAL);
		break;
	case 6:
		churn_group();
		break;
	case 7:
		churn_stream();
		break;
	case 8:
		churn_client(k);
		break;
	case 9:
		churn_stages();
		break;
	default: {
		uint32_t z = NCONV + rnd(NZ - NCONV);
		struct elv_zone_info zi;

		if (!fx.zone_on) {
			TRY(r, elv_zone_report(fx.q, z, ELV_ZONE_EMPTY, 0));
			assert_int_equal(r, ELV_EINVAL);
			break;
		}
		assert_int_equal(elv_zone_get(fx.q, z, &zi), 0);
		TRY(r, elv_zone_report(fx.q, z, ELV_ZONE_EMPTY, 0));
		assert_int_equal(r, zi.nr_held || zi.nr_out || zi.busy ? ELV_EBUSY : 0);
		if (r == 0)
			next_off[z] = 0;
		break;
	}
	}
	chk();
}

static void random_step(void)
{
	static const struct elv_policy *const pol[] = {
		&elv_policy_bfq, &elv_policy_deadline, &elv_policy_cfq, &elv_policy_kyber,
		&elv_policy_noop, &elv_policy_anticipatory, &elv_policy_sstf,
	};
	unsigned op = rnd(100);
	int r, i;

	if (op < 38) {
		random_add();
	} else if (op < 58) {
		(void)dispatch(rnd(3) ? 0 : ELV_DISPATCH_FORCE);
		chk();
	} else if (op < 74) {
		if (fx.nr_inflight)
			complete_at(rnd(fx.nr_inflight), rnd(12) ? 0 : -5);
		chk();
	} else if (op < 76) {
		if (fx.nr_inflight) {
			unsigned k = rnd(fx.nr_inflight);
			struct elv_request *rq = fx.inflight[k];

			assert_int_equal(elv_requeue(fx.q, rq, fx.now), 0);
			fx.inflight[k] = fx.inflight[--fx.nr_inflight];
			set_hs(rq, H_FLIGHT, H_LIB);
		}
		chk();
	} else if (op < 80) {
		i = lib_rq();
		if (i >= 0) {
			assert_int_equal(elv_cancel(fx.q, &fx.rq[i]), 0);
			set_hs(&fx.rq[i], H_LIB, H_FREE);
			fx.cancelled++;
		}
		chk();
	} else if (op < 81) {
		r = elv_drain(fx.q, on_drain, &fx);
		assert_true(r >= 0);
		assert_int_equal(queued(), 0);
		chk();
		if (!fx.zone_on || !fx.qos_on) {
			/* idle: a stage that went may come back, and must */
			while (fx.nr_inflight)
				complete_at(0, 0);
			if (queued() == 0 && !fx.zone_on) {
				assert_int_equal(elv_zone_attach(fx.q, &fx.geo, zmem, sizeof(zmem),
								 on_fail, &fx), 0);
				fx.zone_on = 1;
				for (i = 0; i < (int)NZ; i++)
					next_off[i] = 0;
			}
			if (queued() == 0 && !fx.qos_on) {
				assert_int_equal(elv_qos_attach(fx.q, &qos, NULL, fx.now), 0);
				fx.qos_on = 1;
			}
			chk();
		}
	} else if (op < 83) {
		const struct elv_policy *p = rnd(2) ? &elv_policy_bfq : pol[rnd(LEN(pol))];

		if (!fx.no_switch)
			assert_int_equal(elv_switch(fx.q, p, fx.now), 0);
		chk();
	} else if (op < 92) {
		random_settings();
	} else {
		fx.now += rnd(4) ? rnd(2000000) : 50000000;
	}
}

/* Run @steps random steps, then take everything back: every request came back once. */
static void random_run(unsigned steps)
{
	struct elv_stats st;
	unsigned step;
	int i;

	for (i = (int)NCONV; i < (int)NZ; i++)
		next_off[i] = zwp((uint32_t)i);
	zone_cap = fx.geo.zone_capacity ? fx.geo.zone_capacity : ZS;
	for (step = 0; step < steps; step++)
		random_step();
	i = elv_drain(fx.q, on_drain, &fx);
	assert_true(i >= 0);
	while (fx.nr_inflight)
		complete_at(0, 0);
	chk();
	run_all();
	assert_int_equal(elv_stats(fx.q, &st), 0);
	assert_true(st.added == fx.accepted);
	assert_true(st.completed == fx.completed);
	assert_true(st.cancelled == fx.cancelled + fx.drained + fx.failed);
	assert_true(st.merged_back + st.merged_front + st.merged_req == fx.merged);
	assert_int_equal(st.queued, 0);
	assert_int_equal(st.in_flight, 0);
}

/*
 * bfq's tunables: a value outside the range is refused and changes nothing; at either end
 * of every range the queue keeps its invariants and gives every request back once.
 */
static void test_bfq_tunables(void **state)
{
	const struct elv_tunable *tt;
	unsigned nr, i, end;
	int64_t v, w;

	(void)state;
	tt = elv_policy_tunables(&elv_policy_bfq, &nr);
	assert_non_null(tt);
	assert_true(nr >= 10);
	for (end = 0; end < 2; end++) {
		up(&elv_policy_bfq, 1, 1);
		fx.no_switch = 1;
		rng_state = 77 + end;
		for (i = 0; i < nr; i++) {
			assert_int_equal(elv_tunable_get(fx.q, tt[i].name, &v), 0);
			if (tt[i].min > INT64_MIN)
				REFUSED(ELV_ERANGE, elv_tunable_set(fx.q, tt[i].name, tt[i].min - 1));
			if (tt[i].max < INT64_MAX)
				REFUSED(ELV_ERANGE, elv_tunable_set(fx.q, tt[i].name, tt[i].max + 1));
			REFUSED(ELV_ERANGE, elv_tunable_set(fx.q, tt[i].name, INT64_MIN));
			REFUSED(ELV_ERANGE, elv_tunable_set(fx.q, tt[i].name, INT64_MAX));
			assert_int_equal(elv_tunable_get(fx.q, tt[i].name, &w), 0);
			assert_true(v == w);
		}
		REFUSED(ELV_ENOENT, elv_tunable_set(fx.q, "no_such_tunable", 1));
		for (i = 0; i < nr; i++)
			assert_int_equal(elv_tunable_set(fx.q, tt[i].name, end ? tt[i].max : tt[i].min),
					 0);
		chk();
		random_run(3000);
		assert_true(fx.accepted > 500 && fx.completed > 100);
		down();
	}
}

static void test_random_bfq(void **state)
{
	uint64_t seed;
	int i;

	(void)state;
	for (seed = 1; seed <= SEEDS; seed++) {
		/* by seed: open and active zone limits; an ordered transport, zones with a
		 * smaller capacity; the clock wrapping past 2^64 under way; no merges; every
		 * other merge vetoed */
		geo_default(&geo_next);
		geo_next.max_open = seed % 4 == 2 ? 2 : 0;
		geo_next.max_active = seed % 4 == 2 ? 3 : 0;
		geo_next.ordered = seed % 4 == 3;
		geo_next.zone_capacity = seed % 4 == 3 ? ZS - 8 : 0;
		start_next = seed % 4 == 0 ? UINT64_MAX - 2000000000ULL : 0;
		no_merges_next = seed % 3 == 0;
		up(&elv_policy_bfq, 1, 1);
		fx.veto = seed % 3 == 1;
		memset(&geo_next, 0, sizeof(geo_next));
		start_next = 0;
		no_merges_next = 0;
		rng_state = seed;
		memset(next_off, 0, sizeof(next_off));
		for (i = 0; i < (int)NZ; i++)
			if (i >= (int)NCONV && rnd(3) == 0)
				assert_int_equal(elv_zone_report(fx.q, (uint32_t)i, ELV_ZONE_CLOSED,
								 8 * (1 + rnd(6))), 0);
		random_run(6000);
		assert_true(fx.accepted > 1000);
		assert_true(fx.completed > 300);
		assert_true(fx.failed > 0);
		down();
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_null_arguments),
		cmocka_unit_test(test_torn_down),
		cmocka_unit_test(test_foreign_objects),
		cmocka_unit_test(test_weights),
		cmocka_unit_test(test_zone_geometry),
		cmocka_unit_test(test_zone_refusals),
		cmocka_unit_test(test_zone_report),
		cmocka_unit_test(test_qos_settings),
		cmocka_unit_test(test_qos_busy),
		cmocka_unit_test(test_qos_reject),
		cmocka_unit_test(test_zone_behind_throttle),
		cmocka_unit_test(test_zone_after_throttle),
		cmocka_unit_test(test_zone_append_after_detach),
		cmocka_unit_test(test_qos_held_event),
		cmocka_unit_test(test_refusals_keep_clock),
		cmocka_unit_test(test_callbacks),
		cmocka_unit_test(test_bfq_tunables),
		cmocka_unit_test(test_random_bfq),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
