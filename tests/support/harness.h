/*
 * Test harness shared by the policy and core suites: a fake clock, a fake device that holds up
 * to N requests in flight and completes them in dispatch order, requests taken from a static
 * pool, add/dispatch/complete loops that record the dispatch order, and a merge callback that
 * records every merge. Every step that changes the queue is followed by an assertion that
 * elv_queue_check() returns 0.
 *
 * Usage: a test keeps one `static struct th h;`, calls th_setup(), adds requests with
 * th_add_new() at th->now, drives them with th_dispatch() or th_run(), compares the recorded
 * order with th_expect_sectors() or th_expect_ids(), and ends with th_teardown().
 */
#ifndef ELV_TEST_HARNESS_H
#define ELV_TEST_HARNESS_H

#include <stddef.h>
#include <stdint.h>

#include "elevator/elevator.h"

#define TH_POOL 1024       /* requests in the static pool of one harness */
#define TH_MAX_DEPTH 256   /* largest fake device queue depth */
#define TH_MAX_LOG 2048    /* dispatches and merges recorded */
#define TH_MEM_BYTES (512u * 1024u) /* queue memory of one harness */
#define TH_NONE UINT32_MAX /* "no request" in ids */

/** A host I/O descriptor: the embedded request and its pool index. */
struct th_io {
	struct elv_request rq;
	uint32_t id;          /* index in the pool, stable for the whole test */
	uint32_t merged_into; /* id of the request that absorbed it, or TH_NONE */
};

/** One merge as reported through the queue's merge callback. */
struct th_merge {
	uint32_t into;     /* id of the surviving request */
	uint32_t absorbed; /* id of the request joined onto it */
	enum elv_merge_kind kind;
};

/** A queue under test with its clock, device, request pool and logs. */
struct th {
	struct elv_queue *q;
	struct elv_config cfg;
	uint64_t now;        /* fake clock (ns), passed to every call */
	uint64_t service_ns; /* added to the clock by each completion th_run() performs */
	unsigned depth;      /* fake device queue depth */
	int veto_merges;     /* non-zero: the allow_merge callback refuses every merge */

	struct th_io *inflight[TH_MAX_DEPTH]; /* on the device, in dispatch order */
	unsigned nr_inflight;

	struct th_io pool[TH_POOL];
	unsigned nr_pool;

	uint32_t order_id[TH_MAX_LOG];     /* dispatched requests' ids, in order */
	uint64_t order_sector[TH_MAX_LOG]; /* their start sectors when dispatched */
	uint64_t order_time[TH_MAX_LOG];   /* the clock when each was dispatched */
	unsigned nr_order;

	struct th_merge merges[TH_MAX_LOG];
	unsigned nr_merges;
	uint64_t trace_count[16]; /* trace events seen, by enum elv_trace_type */

	uint64_t mem[TH_MEM_BYTES / sizeof(uint64_t)]; /* the queue lives here */
};

/**
 * Build a queue of policy @p policy ("deadline", ...) in the harness memory. @p cfg may be
 * NULL; its merge, allow_merge and trace callbacks are replaced by recording ones. @p depth 0
 * means 1. The memory is sized by elv_queue_size_any(cfg) so elv_switch() always fits.
 */
void th_setup(struct th *h, const char *policy, const struct elv_config *cfg, unsigned depth);
/** Complete everything in flight, check that nothing is queued and tear the queue down. */
void th_teardown(struct th *h);
/** Assert elv_queue_check() == 0. */
void th_check(const struct th *h);

/** Set the fake clock (never backwards). */
void th_set_time(struct th *h, uint64_t now);
/** Advance the fake clock by @p ns. */
void th_advance(struct th *h, uint64_t ns);
/** Milliseconds to ns. */
static inline uint64_t th_ms(uint64_t ms)
{
	return ms * ELV_NSEC_PER_MSEC;
}

/** A fresh request from the pool (not added): op, sector, length, no flags, ioprio 0. */
struct th_io *th_new(struct th *h, uint8_t op, uint64_t sector, uint32_t nr_sectors);
/** elv_add() of @p io at the harness clock, then the invariant check. Returns elv_add()'s value. */
int th_add(struct th *h, struct th_io *io);
/** th_new() + th_add(), asserting the add succeeded (queued or merged). */
struct th_io *th_add_new(struct th *h, uint8_t op, uint64_t sector, uint32_t nr_sectors);
/** As th_add_new() with an I/O priority (ELV_PRIO(class, level)). */
struct th_io *th_add_prio(struct th *h, uint8_t op, uint64_t sector, uint32_t nr_sectors,
			  uint8_t ioprio);

/**
 * One elv_dispatch() at the harness clock if the device has room; records the request.
 * @return the request, or NULL when the device is full or the queue returned ELV_EAGAIN.
 */
struct th_io *th_dispatch(struct th *h, unsigned flags);
/** Complete the oldest request on the device (advancing the clock by nothing). 0 if none. */
int th_complete_one(struct th *h);
/** Give in-flight @p io back with elv_requeue() (a device BUSY); asserts success. */
void th_requeue(struct th *h, struct th_io *io);
/** Complete every request on the device. */
void th_complete_all(struct th *h);
/**
 * Dispatch up to @p max requests, completing the oldest in flight (and advancing the clock by
 * service_ns) whenever the device is full; stops early when dispatch returns nothing. Leaves
 * requests in flight. @return the number dispatched.
 */
unsigned th_run(struct th *h, unsigned max, unsigned flags);

/** Assert the recorded dispatch order, by start sector, is exactly @p sectors[0..n). */
void th_expect_sectors(const struct th *h, const uint64_t *sectors, unsigned n);
/** Assert the recorded dispatch order, by request id, is exactly @p ids[0..n). */
void th_expect_ids(const struct th *h, const uint32_t *ids, unsigned n);
/** Forget the recorded dispatch order (not the merges). */
void th_clear_order(struct th *h);

/** Counters of the queue. */
struct elv_stats th_stats(const struct th *h);
/** A policy counter by name; fails the test when the policy has no such counter. */
uint64_t th_policy_stat(const struct th *h, const char *name);
/** The policy counter @p name of any queue @p q; fails the test when there is none. */
uint64_t th_queue_stat(struct elv_queue *q, const char *name);
/** A tunable's value; fails the test when the get fails. */
int64_t th_tunable(const struct th *h, const char *name);

#define TH_LEN(a) ((unsigned)(sizeof(a) / sizeof((a)[0])))

#endif /* ELV_TEST_HARNESS_H */
