/*
 * Test bench for the QoS stage (test_throttle, test_iomax, test_mclock): a queue with the stage
 * attached, up to QS_STREAMS streams and QS_GROUPS groups with clients, requests recycled
 * through a pool so that runs of minutes of simulated time fit, and two devices: an
 * infinitely fast one (every request completes where it is dispatched) for the throttle,
 * and one that completes exactly one request per period for mClock. Every step that changes
 * the queue is followed by elv_queue_check().
 *
 * Requests carry ELV_RQ_NOMERGE and lie apart on the disk: the fact sheet's vectors count
 * requests, which merges would change.
 */
#ifndef ELV_TEST_QOS_SIM_H
#define ELV_TEST_QOS_SIM_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "elv_internal.h"

#define QS_STREAMS 4
#define QS_GROUPS 2
#define QS_POOL 4096
#define QS_LOG 8192
#define QS_MEM_WORDS (1u << 16)
#define QS_MS ELV_NSEC_PER_MSEC
#define QS_SEC (1000u * QS_MS)

struct qs_io {
	struct elv_request rq;
	int stream;
	int used;
};

struct qsim {
	uint64_t mem[QS_MEM_WORDS];
	struct elv_queue *q;
	struct elv_qos qos;
	struct elv_stream s[QS_STREAMS];
	struct elv_group g[QS_GROUPS];
	struct elv_qos_client cs[QS_STREAMS], cg[QS_GROUPS];
	struct qs_io pool[QS_POOL];
	unsigned next_free;
	uint64_t now;
	uint64_t sector[QS_STREAMS];
	uint32_t backlog[QS_STREAMS]; /* continuous demand: requests kept waiting per stream */
	uint32_t bytes_each[QS_STREAMS];
	uint8_t op_each[QS_STREAMS];
	uint32_t waiting[QS_STREAMS];  /* added and not dispatched */
	uint64_t count[QS_STREAMS];    /* dispatched */
	uint64_t bytes[QS_STREAMS];
	uint64_t log_time[QS_LOG];     /* dispatch times, first QS_LOG dispatches */
	int log_stream[QS_LOG];
	uint64_t log_sector[QS_LOG];
	unsigned nr_log;
	struct elv_request *inflight;  /* the one-at-a-time device */
	unsigned drained;
};

static inline void qs_check(struct qsim *qs)
{
	assert_int_equal(elv_queue_check(qs->q), 0);
}

/* A queue running @p with the stage attached (@set NULL: defaults), its clock at @t0. */
static inline void qs_init_at(struct qsim *qs, const struct elv_policy *p,
			      const struct elv_qos_settings *set, uint64_t t0)
{
	size_t len = elv_queue_size_any(NULL);

	memset(qs, 0, sizeof(*qs));
	assert_true(len <= sizeof(qs->mem));
	assert_int_equal(elv_queue_init(&qs->q, qs->mem, sizeof(qs->mem), p, NULL), 0);
	qs->now = t0;
	assert_int_equal(elv_qos_attach(qs->q, &qs->qos, set, t0), 0);
	qs_check(qs);
}

static inline void qs_init(struct qsim *qs, const struct elv_policy *p,
			   const struct elv_qos_settings *set)
{
	qs_init_at(qs, p, set, 0);
}

/* Register stream @i, in group @g (-1: the root), with a client when @client. */
static inline void qs_stream(struct qsim *qs, int i, int g, int client)
{
	assert_int_equal(elv_stream_init(qs->q, &qs->s[i], qs->now), 0);
	if (g >= 0)
		assert_int_equal(elv_stream_set_group(qs->q, &qs->s[i], &qs->g[g]), 0);
	if (client)
		assert_int_equal(elv_qos_stream_attach(qs->q, &qs->s[i], &qs->cs[i], qs->now), 0);
	qs->sector[i] = (uint64_t)(i + 1) << 32;
	qs->bytes_each[i] = 4096;
	qs->op_each[i] = ELV_OP_READ;
	qs_check(qs);
}

/* Register group @g with a client. */
static inline void qs_group(struct qsim *qs, int g)
{
	assert_int_equal(elv_group_init(qs->q, &qs->g[g], qs->now), 0);
	assert_int_equal(elv_qos_group_attach(qs->q, &qs->g[g], &qs->cg[g], qs->now), 0);
	qs_check(qs);
}

/* A fresh bench under policy @p with one stream and its client, throttled by @t. */
static inline void qs_init_throttled(struct qsim *qs, const struct elv_policy *p,
				     const struct elv_throttle_settings *t)
{
	qs_init(qs, p, NULL);
	qs_stream(qs, 0, -1, 1);
	assert_int_equal(elv_qos_set_throttle(qs->q, &qs->cs[0], t, 0), 0);
	qs_check(qs);
}

static inline struct qs_io *qs_alloc(struct qsim *qs)
{
	unsigned i;

	for (i = 0; i < QS_POOL; i++) {
		struct qs_io *io = &qs->pool[(qs->next_free + i) % QS_POOL];

		if (!io->used) {
			qs->next_free = (qs->next_free + i + 1) % QS_POOL;
			memset(io, 0, sizeof(*io));
			io->used = 1;
			return io;
		}
	}
	fail_msg("request pool exhausted");
	return NULL;
}

static inline void qs_free(struct qs_io *io)
{
	io->used = 0;
}

/* Add a request of @bytes and @op for stream @i at qs->now; returns elv_add()'s result. */
static inline int qs_add_op(struct qsim *qs, int i, uint8_t op, uint32_t bytes)
{
	struct qs_io *io = qs_alloc(qs);
	int r;

	io->stream = i;
	io->rq.sector = qs->sector[i];
	io->rq.nr_sectors = bytes / 512u;
	io->rq.op = op;
	io->rq.flags = ELV_RQ_NOMERGE;
	io->rq.stream = &qs->s[i];
	qs->sector[i] += io->rq.nr_sectors + 64u; /* apart: nothing could merge anyway */
	r = elv_add(qs->q, &io->rq, qs->now);
	if (r != 0)
		qs_free(io);
	else
		qs->waiting[i]++;
	qs_check(qs);
	return r;
}

static inline int qs_add(struct qsim *qs, int i)
{
	return qs_add_op(qs, i, qs->op_each[i], qs->bytes_each[i]);
}

/* Keep every stream with a backlog at its backlog of waiting requests. */
static inline void qs_refill(struct qsim *qs)
{
	int i;

	for (i = 0; i < QS_STREAMS; i++)
		while (qs->backlog[i] && qs->waiting[i] < qs->backlog[i])
			assert_int_equal(qs_add(qs, i), 0);
}

static inline void qs_note(struct qsim *qs, struct elv_request *rq)
{
	struct qs_io *io = elv_container_of(rq, struct qs_io, rq);

	qs->waiting[io->stream]--;
	qs->count[io->stream]++;
	qs->bytes[io->stream] += (uint64_t)rq->nr_sectors << 9;
	if (qs->nr_log < QS_LOG) {
		qs->log_time[qs->nr_log] = qs->now;
		qs->log_stream[qs->nr_log] = io->stream;
		qs->log_sector[qs->nr_log] = rq->sector;
		qs->nr_log++;
	}
}

/* Infinitely fast device: dispatch everything that may go at qs->now, completing each. */
static inline unsigned qs_flush(struct qsim *qs)
{
	struct elv_request *rq;
	unsigned n = 0;

	while (elv_dispatch(qs->q, qs->now, ELV_DISPATCH_FORCE, &rq) == 0) {
		qs_check(qs);
		qs_note(qs, rq);
		assert_int_equal(elv_complete(qs->q, rq, qs->now), 0);
		qs_free(elv_container_of(rq, struct qs_io, rq));
		qs_check(qs);
		qs_refill(qs);
		n++;
	}
	return n;
}

/* Infinitely fast device until @end (or until nothing is pending): follows elv_next_event(). */
static inline void qs_run_fast(struct qsim *qs, uint64_t end)
{
	uint64_t t;

	qs_refill(qs);
	for (;;) {
		qs_flush(qs);
		t = elv_next_event(qs->q);
		if (t == ELV_TIME_NEVER || elv_time_after(t, end))
			break;
		assert_true(elv_time_after(t, qs->now)); /* the stage never asks for the past */
		qs->now = t;
	}
	qs->now = end;
}

/*
 * A device that completes one request per @period: at every tick the request in flight
 * completes and the next is dispatched. Runs @ticks ticks from qs->now.
 */
static inline void qs_run_server(struct qsim *qs, uint64_t period, unsigned ticks)
{
	struct elv_request *rq;
	unsigned k;

	qs_refill(qs);
	for (k = 0; k < ticks; k++, qs->now += period) {
		if (qs->inflight) {
			assert_int_equal(elv_complete(qs->q, qs->inflight, qs->now), 0);
			qs_free(elv_container_of(qs->inflight, struct qs_io, rq));
			qs->inflight = NULL;
			qs_check(qs);
		}
		if (elv_dispatch(qs->q, qs->now, ELV_DISPATCH_FORCE, &rq) == 0) {
			qs_note(qs, rq);
			qs->inflight = rq;
			qs_check(qs);
		}
		qs_refill(qs);
	}
}

static inline void qs_drain_fn(void *arg, struct elv_request *rq)
{
	struct qsim *qs = arg;
	struct qs_io *io = elv_container_of(rq, struct qs_io, rq);

	qs->waiting[io->stream]--;
	qs->drained++;
	qs_free(io);
}

/* Take everything back (drain), finish the request in flight, detach, tear down. */
static inline void qs_fini(struct qsim *qs)
{
	int i;

	memset(qs->backlog, 0, sizeof(qs->backlog));
	assert_true(elv_drain(qs->q, qs_drain_fn, qs) >= 0);
	qs_check(qs);
	if (qs->inflight) {
		assert_int_equal(elv_complete(qs->q, qs->inflight, qs->now), 0);
		qs_free(elv_container_of(qs->inflight, struct qs_io, rq));
		qs->inflight = NULL;
	}
	assert_int_equal(elv_qos_detach(qs->q, qs->now), 0);
	for (i = 0; i < QS_STREAMS; i++)
		if (qs->s[i].ELV_PRIVATE(flags))
			assert_int_equal(elv_stream_exit(qs->q, &qs->s[i], qs->now), 0);
	for (i = 0; i < QS_GROUPS; i++)
		if (qs->g[i].ELV_PRIVATE(flags))
			assert_int_equal(elv_group_exit(qs->q, &qs->g[i], qs->now), 0);
	assert_int_equal(elv_queue_exit(qs->q), 0);
}

/* Dispatches of stream @i (any stream for -1) with times in [from, to). */
static inline unsigned qs_logged(const struct qsim *qs, int i, uint64_t from, uint64_t to)
{
	unsigned k, n = 0;

	for (k = 0; k < qs->nr_log; k++)
		if ((i < 0 || qs->log_stream[k] == i) && qs->log_time[k] >= from &&
		    qs->log_time[k] < to)
			n++;
	return n;
}

/* The policies the stage is tried under. */
static const struct elv_policy *const qs_policies[] = {
	&elv_policy_noop, &elv_policy_deadline, &elv_policy_cfq, &elv_policy_anticipatory,
};
#define QS_NR_POLICIES (sizeof(qs_policies) / sizeof(qs_policies[0]))

#endif /* ELV_TEST_QOS_SIM_H */
