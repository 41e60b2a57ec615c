/*
 * The compile-time options (ELV_NO_* in elevator/elv_config.h), whichever of them this build
 * has: every built-in policy schedules with them, each API of a feature left out answers
 * ELV_ENOSYS and changes nothing, and each feature kept still works. Built and run by
 * tests/embedded/options.sh for each option alone, for the minimal configuration
 * (tests/embedded/freestanding/elv_min_config.h) and for none, on the host and on a
 * Cortex-M3 under QEMU. The last line says how many checks ran, so a run that checked
 * nothing cannot pass.
 */
#include <stdio.h>
#include <string.h>

#include "elevator/elevator.h"
#include "elevator/policy.h"
#include "elevator/qos.h"
#include "elevator/zone.h"

static uint64_t mem[4096];
static unsigned checks;

#define EXPECT(c)                                                                            \
	do {                                                                                   \
		checks++;                                                                      \
		if (!(c)) {                                                                    \
			printf("options: failed: %s (line %d, policy %s)\n", #c, __LINE__,     \
			       cur ? cur->name : "-");                                         \
			return 1;                                                              \
		}                                                                              \
	} while (0)

struct seen {
	unsigned merges[4]; /* by enum elv_merge_kind */
	unsigned events;
};

static const struct elv_policy *cur;
static uint64_t now_ns = 1000;

static void on_merge(void *ctx, struct elv_request *into, struct elv_request *gone,
		     enum elv_merge_kind kind)
{
	(void)into;
	(void)gone;
	((struct seen *)ctx)->merges[kind]++;
}

static void on_trace(void *ctx, const struct elv_trace_event *ev)
{
	(void)ev;
	((struct seen *)ctx)->events++;
}

static void on_drain(void *arg, struct elv_request *rq)
{
	(void)rq;
	(*(unsigned *)arg)++;
}

static void rq_set(struct elv_request *rq, uint64_t sector, uint32_t n)
{
	elv_request_init(rq);
	rq->sector = sector;
	rq->nr_sectors = n;
	rq->op = ELV_OP_READ;
}

/* Dispatch and complete everything queued: how many requests, and their sectors in total. */
static unsigned run_out(struct elv_queue *q, uint64_t *sectors)
{
	struct elv_request *out;
	unsigned n = 0;

	*sectors = 0;
	while (elv_dispatch(q, now_ns++, ELV_DISPATCH_FORCE, &out) == 0) {
		*sectors += out->nr_sectors;
		if (elv_complete(q, out, now_ns++) != 0)
			return 1000;
		n++;
	}
	return n;
}

/* Is the policy one of the four whose merges this test knows exactly? */
static int known_policy(const struct elv_policy *p)
{
	static const char *const four[] = { "noop", "deadline", "anticipatory", "cfq" };
	unsigned k;
	const char *x, *y;

	for (k = 0; k < 4; k++) {
		for (x = p->name, y = four[k]; *x && *x == *y; x++, y++)
			;
		if (*x == *y)
			return 1;
	}
	return 0;
}

static int merges(struct elv_queue *q, struct seen *seen)
{
	struct elv_request a, b, c, d, e;
	uint64_t sectors;
	unsigned n, bk, rq, fr;
	int r;
	/* Front and request-to-request merges look requests up by start through the policy. */
	unsigned lookup = cur->find_next != NULL || cur->find_start != NULL;
	int known = known_policy(cur);

	/* a [0, 8), c [16, 24), then b [8, 16): back merge of b onto a, then a and c meet. */
	rq_set(&a, 0, 8);
	rq_set(&b, 8, 8);
	rq_set(&c, 16, 8);
	EXPECT(elv_add(q, &a, now_ns++) == 0);
	EXPECT(elv_add(q, &c, now_ns++) == 0);
	r = elv_add(q, &b, now_ns++);
	n = run_out(q, &sectors);
	bk = seen->merges[ELV_MERGE_BACK];
	rq = seen->merges[ELV_MERGE_REQ];
	/* Whatever merged, every sector went out once, in as many requests as merges left. */
	EXPECT(sectors == 24 && n == 3 - bk - rq && r == (int)bk);
#if defined(ELV_NO_MERGE)
	EXPECT(bk == 0 && rq == 0);
#elif defined(ELV_NO_REQ_MERGE)
	EXPECT(rq == 0 && (!known || bk == 1));
#else
	EXPECT(!known || (bk == 1 && rq == lookup));
#endif

	/* d [100, 108), then e [92, 100) right in front of it. */
	rq_set(&d, 100, 8);
	rq_set(&e, 92, 8);
	EXPECT(elv_add(q, &d, now_ns++) == 0);
	r = elv_add(q, &e, now_ns++);
	n = run_out(q, &sectors);
	fr = seen->merges[ELV_MERGE_FRONT];
	EXPECT(sectors == 16 && n == 2 - fr && r == (int)fr);
#if defined(ELV_NO_FRONT_MERGE)
	EXPECT(fr == 0);
#else
	EXPECT(!known || fr == lookup);
#endif
	(void)lookup;
	(void)known;
	return 0;
}

static int lifecycle(struct elv_queue *q)
{
	struct elv_request f, g, h, i, j, *out;
	uint64_t sectors;
	unsigned drained = 0;

	/* An ordered request. */
	rq_set(&f, 5000, 8);
	f.flags = ELV_RQ_BARRIER;
#if defined(ELV_NO_BARRIER)
	EXPECT(elv_add(q, &f, now_ns++) == ELV_ENOSYS);
	EXPECT(elv_queue_nr_queued(q) == 0);
	f.flags = 0; /* refused without a change: the same request goes in unordered */
#endif
	EXPECT(elv_add(q, &f, now_ns++) == 0);
	EXPECT(run_out(q, &sectors) == 1 && sectors == 8);

	/* The device gives one back. */
	rq_set(&g, 6000, 8);
	EXPECT(elv_add(q, &g, now_ns++) == 0);
	EXPECT(elv_dispatch(q, now_ns++, ELV_DISPATCH_FORCE, &out) == 0 && out == &g);
#if defined(ELV_NO_REQUEUE)
	EXPECT(elv_requeue(q, &g, now_ns++) == ELV_ENOSYS);
	EXPECT(elv_queue_nr_in_flight(q) == 1);
	EXPECT(elv_complete(q, &g, now_ns++) == 0);
#else
	EXPECT(elv_requeue(q, &g, now_ns++) == 0);
	EXPECT(run_out(q, &sectors) == 1 && sectors == 8);
#endif

	/* Cancel one, drain two. */
	rq_set(&h, 7000, 8);
	rq_set(&i, 8000, 8);
	rq_set(&j, 9000, 8);
	EXPECT(elv_add(q, &h, now_ns++) == 0);
	EXPECT(elv_add(q, &i, now_ns++) == 0);
	EXPECT(elv_add(q, &j, now_ns++) == 0);
#if defined(ELV_NO_CANCEL)
	EXPECT(elv_cancel(q, &h) == ELV_ENOSYS);
	EXPECT(elv_drain(q, on_drain, &drained) == ELV_ENOSYS && drained == 0);
	EXPECT(run_out(q, &sectors) == 3 && sectors == 24);
#else
	EXPECT(elv_cancel(q, &h) == 0);
	EXPECT(elv_drain(q, on_drain, &drained) == 2 && drained == 2);
	EXPECT(run_out(q, &sectors) == 0);
#endif
	EXPECT(elv_queue_nr_queued(q) == 0 && elv_queue_nr_in_flight(q) == 0);
	return 0;
}

static void on_zone_fail(void *ctx, struct elv_request *rq, int err)
{
	(void)ctx;
	(void)rq;
	(void)err;
}

#if defined(ELV_NO_BARRIER) && !defined(ELV_NO_STAGES)
/*
 * A queue with a stage adds through its own path: an ordered request is refused there too,
 * before any stage sees it, and the queue (counters, clock-driven state) is as it was.
 */
static int staged_barrier(struct elv_queue *q, struct elv_qos *qos)
{
	struct elv_request b;
	uint64_t sectors;
#if !defined(ELV_NO_STATS)
	struct elv_stats before, after;
#endif

	EXPECT(elv_qos_attach(q, qos, NULL, now_ns++) == 0);
	rq_set(&b, 50000, 8);
	b.flags = ELV_RQ_BARRIER;
#if !defined(ELV_NO_STATS)
	EXPECT(elv_stats(q, &before) == 0);
#endif
	EXPECT(elv_add(q, &b, now_ns++) == ELV_ENOSYS);
	EXPECT(elv_queue_nr_queued(q) == 0 && elv_queue_nr_in_flight(q) == 0);
#if !defined(ELV_NO_STATS)
	EXPECT(elv_stats(q, &after) == 0);
	EXPECT(memcmp(&before, &after, sizeof(before)) == 0);
#endif
#if !defined(ELV_NO_CHECK)
	EXPECT(elv_queue_check(q) == 0);
#endif
	b.flags = 0; /* the same request goes in unordered, through the stage */
	EXPECT(elv_add(q, &b, now_ns++) == 0);
	EXPECT(run_out(q, &sectors) == 1 && sectors == 8);
	EXPECT(elv_qos_detach(q, now_ns++) == 0);
	return 0;
}
#endif

/* The admission stages (zone write plugging, QoS) and the completion status they hear. */
static int stages(struct elv_queue *q)
{
	static uint64_t zmem[512];
	static struct elv_qos qos;
	const struct elv_zone_geometry geo = { .nr_sectors = 1u << 20, .zone_sectors = 1u << 16 };
	struct elv_request r, *out;

	EXPECT(elv_zone_size(&geo) != 0 && elv_zone_size(&geo) <= sizeof(zmem));
	rq_set(&r, 30000, 8);
	EXPECT(elv_add(q, &r, now_ns++) == 0);
	EXPECT(elv_dispatch(q, now_ns++, ELV_DISPATCH_FORCE, &out) == 0 && out == &r);
#if defined(ELV_NO_STAGES)
	EXPECT(elv_complete_status(q, &r, -5, now_ns++) == ELV_ENOSYS);
	EXPECT(elv_queue_nr_in_flight(q) == 1);
	EXPECT(elv_complete(q, &r, now_ns++) == 0);
	EXPECT(elv_zone_attach(q, &geo, zmem, sizeof(zmem), on_zone_fail, NULL) == ELV_ENOSYS);
	EXPECT(elv_zone_detach(q) != 0);
	EXPECT(elv_qos_attach(q, &qos, NULL, now_ns++) == ELV_ENOSYS);
	EXPECT(elv_qos_detach(q, now_ns++) != 0);
#else
	EXPECT(elv_complete_status(q, &r, -5, now_ns++) == 0);
	EXPECT(elv_queue_nr_in_flight(q) == 0);
	EXPECT(elv_zone_attach(q, &geo, zmem, sizeof(zmem), on_zone_fail, NULL) == 0);
	EXPECT(elv_qos_attach(q, &qos, NULL, now_ns++) == 0);
	rq_set(&r, 40000, 8); /* through both stages and back */
	EXPECT(elv_add(q, &r, now_ns++) == 0);
	EXPECT(elv_dispatch(q, now_ns++, ELV_DISPATCH_FORCE, &out) == 0 && out == &r);
	EXPECT(elv_complete_status(q, &r, 0, now_ns++) == 0);
	EXPECT(elv_qos_detach(q, now_ns++) == 0);
	EXPECT(elv_zone_detach(q) == 0);
#if defined(ELV_NO_BARRIER)
	if (staged_barrier(q, &qos))
		return 1;
#endif
#endif
	EXPECT(elv_queue_nr_in_flight(q) == 0 && elv_queue_nr_queued(q) == 0);
	return 0;
}

static int streams(struct elv_queue *q)
{
	struct elv_stream s;
	struct elv_request k;
#if defined(ELV_NO_STREAMS)
	struct elv_group g;
#else
	uint64_t sectors;
#endif

	memset(&s, 0, sizeof(s));
	rq_set(&k, 10000, 8);
	k.stream = &s;
#if defined(ELV_NO_STREAMS)
	EXPECT(elv_stream_init(q, &s, now_ns++) == ELV_ENOSYS);
	EXPECT(elv_stream_set_prio(q, &s, ELV_PRIO(2, 0)) == ELV_ENOSYS);
	EXPECT(elv_add(q, &k, now_ns++) == ELV_EINVAL); /* an unregistered stream */
	EXPECT(elv_stream_exit(q, &s, now_ns++) == ELV_ENOSYS);
	/* The weight and group calls are compiled out with them. */
	memset(&g, 0, sizeof(g));
	EXPECT(elv_stream_set_weight(q, &s, 100) == ELV_ENOSYS);
	EXPECT(elv_stream_set_group(q, &s, &g) == ELV_ENOSYS);
	EXPECT(elv_group_init(q, &g, now_ns++) == ELV_ENOSYS);
	EXPECT(elv_group_set_weight(q, &g, 100) == ELV_ENOSYS);
	EXPECT(elv_group_exit(q, &g, now_ns++) == ELV_ENOSYS);
#else
	EXPECT(elv_stream_init(q, &s, now_ns++) == 0);
	EXPECT(elv_stream_set_prio(q, &s, ELV_PRIO(2, 0)) == 0);
	EXPECT(elv_add(q, &k, now_ns++) == 0);
	EXPECT(run_out(q, &sectors) == 1 && sectors == 8);
	EXPECT(elv_stream_exit(q, &s, now_ns++) == 0);
#endif
	return 0;
}

static int knobs(struct elv_queue *q, const struct seen *seen)
{
	struct elv_stats st;
	const struct elv_tunable *t;
	const char *name = NULL;
	uint64_t val = 0;
	int64_t v = 0;
	unsigned nr = 0;

#if defined(ELV_NO_STATS)
	EXPECT(elv_stats(q, &st) == ELV_ENOSYS);
	EXPECT(elv_policy_stat(q, 0, &name, &val) == ELV_ENOSYS);
#else
	EXPECT(elv_stats(q, &st) == 0 && st.added > 0 && st.completed > 0 && st.queued == 0);
	EXPECT(st.merged_back == seen->merges[ELV_MERGE_BACK] &&
	       st.merged_front == seen->merges[ELV_MERGE_FRONT] &&
	       st.merged_req == seen->merges[ELV_MERGE_REQ]);
	EXPECT(elv_policy_stat(q, cur->nr_stats, &name, &val) == ELV_ENOENT);
	if (cur->nr_stats)
		EXPECT(elv_policy_stat(q, 0, &name, &val) == 0 && name != NULL);
#endif
#if defined(ELV_NO_TRACE)
	EXPECT(seen->events == 0);
#else
	EXPECT(seen->events > 0);
#endif
	t = elv_policy_tunables(cur, &nr);
#if defined(ELV_NO_TUNABLES)
	EXPECT(elv_tunable_get(q, nr ? t[0].name : "none", &v) == ELV_ENOSYS);
	EXPECT(elv_tunable_set(q, nr ? t[0].name : "none", 0) == ELV_ENOSYS);
#else
	EXPECT(elv_tunable_get(q, "none", &v) == ELV_ENOENT);
	if (nr) {
		EXPECT(elv_tunable_get(q, t[0].name, &v) == 0 && v == t[0].def);
		EXPECT(elv_tunable_set(q, t[0].name, t[0].def) == 0);
	}
#endif
	(void)t;
	(void)v;
#if defined(ELV_NO_CHECK)
	EXPECT(elv_queue_check(q) == ELV_ENOSYS);
#else
	EXPECT(elv_queue_check(q) == 0);
#endif
	return 0;
}

static int one_policy(const struct elv_policy *p, const struct elv_policy *next)
{
	struct elv_config cfg;
	struct seen seen;
	struct elv_queue *q;
	struct elv_request l;
	uint64_t sectors;

	cur = p;
	memset(&cfg, 0, sizeof(cfg));
	memset(&seen, 0, sizeof(seen));
	cfg.nr_requests = 32;
	cfg.dev.rotational = 1;
	cfg.merge = on_merge;
	cfg.trace = on_trace;
	cfg.ctx = &seen;
	EXPECT(elv_queue_size_any(&cfg) <= sizeof(mem));
#if defined(ELV_NO_TRACE)
	EXPECT(elv_queue_init(&q, mem, sizeof(mem), p, &cfg) == ELV_ENOSYS);
	cfg.trace = NULL;
#endif
	EXPECT(elv_queue_init(&q, mem, sizeof(mem), p, &cfg) == 0);
	if (merges(q, &seen) || lifecycle(q) || stages(q) || streams(q) || knobs(q, &seen))
		return 1;

	/* Another policy takes over a queued request. */
	rq_set(&l, 20000, 8);
	EXPECT(elv_add(q, &l, now_ns++) == 0);
#if defined(ELV_NO_SWITCH)
	EXPECT(elv_switch(q, next, now_ns++) == ELV_ENOSYS);
	EXPECT(elv_queue_policy(q) == p);
#else
	EXPECT(elv_switch(q, next, now_ns++) == 0);
	EXPECT(elv_queue_policy(q) == next);
#endif
	EXPECT(run_out(q, &sectors) == 1 && sectors == 8);
	EXPECT(elv_queue_exit(q) == 0);
	return 0;
}

int main(void)
{
	const struct elv_policy *p;
	struct elv_queue *q = NULL;
	unsigned i, named = 0;

	cur = NULL;
	for (i = 0; (p = elv_policy_at(i)) != NULL; i++) {
		if (one_policy(p, elv_policy_at(i + 1) ? elv_policy_at(i + 1) : elv_policy_at(0)))
			return 1;
		named += (unsigned)known_policy(p);
	}
	cur = NULL;
	/* Every built-in ran, the four of the size budgets among them. */
	EXPECT(named == 4 && i >= 4);
#if defined(ELV_NO_STRERROR)
	EXPECT(elv_strerror(ELV_EINVAL)[0] == '\0');
#else
	EXPECT(elv_strerror(ELV_EINVAL)[0] != '\0');
#endif
#if defined(ELV_NO_MALLOC)
	EXPECT(elv_queue_create(&q, &elv_policy_noop, NULL) == ELV_ENOSYS);
	EXPECT(elv_queue_destroy(NULL) == ELV_ENOSYS); /* compiled out: not even NULL is looked at */
#else
	EXPECT(elv_queue_create(&q, &elv_policy_noop, NULL) == 0);
	EXPECT(elv_queue_destroy(q) == 0);
#endif
	printf("options: ok: %u policies, %u checks\n", i, checks);
	return 0;
}
