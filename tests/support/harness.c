/* Test harness: fake clock, fake device, request pool, recorded orders and merges. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "harness.h"

static struct th_io *th_io_of(const struct elv_request *rq)
{
	return elv_container_of(rq, struct th_io, rq);
}

static int th_allow_merge(void *ctx, const struct elv_request *rq,
			  const struct elv_request *next, enum elv_merge_kind kind)
{
	const struct th *h = ctx;

	(void)rq;
	(void)next;
	(void)kind;
	return !h->veto_merges;
}

static void th_merge_cb(void *ctx, struct elv_request *into, struct elv_request *absorbed,
			enum elv_merge_kind kind)
{
	struct th *h = ctx;
	struct th_io *a = th_io_of(absorbed);

	assert_true(h->nr_merges < TH_MAX_LOG);
	h->merges[h->nr_merges].into = th_io_of(into)->id;
	h->merges[h->nr_merges].absorbed = a->id;
	h->merges[h->nr_merges].kind = kind;
	h->nr_merges++;
	a->merged_into = th_io_of(into)->id;
}

static void th_trace_cb(void *ctx, const struct elv_trace_event *ev)
{
	struct th *h = ctx;

	if (ev->type < TH_LEN(h->trace_count))
		h->trace_count[ev->type]++;
}

void th_check(const struct th *h)
{
	assert_int_equal(elv_queue_check(h->q), 0);
}

void th_setup(struct th *h, const char *policy, const struct elv_config *cfg, unsigned depth)
{
	const struct elv_policy *p = elv_policy_find(policy);
	size_t need;

	memset(h, 0, sizeof(*h));
	assert_non_null(p);
	if (cfg)
		h->cfg = *cfg;
	h->cfg.allow_merge = th_allow_merge;
	h->cfg.merge = th_merge_cb;
	h->cfg.trace = th_trace_cb;
	h->cfg.ctx = h;
	h->depth = depth ? depth : 1;
	assert_true(h->depth <= TH_MAX_DEPTH);
	need = elv_queue_size_any(&h->cfg);
	assert_true(need > 0);
	assert_true(need <= sizeof(h->mem));
	assert_true(elv_queue_size(p, &h->cfg) <= need);
	assert_int_equal(elv_queue_init(&h->q, h->mem, sizeof(h->mem), p, &h->cfg), 0);
	assert_ptr_equal(elv_queue_policy(h->q), p);
	th_check(h);
}

void th_teardown(struct th *h)
{
	struct elv_stats st;

	th_complete_all(h);
	assert_int_equal(elv_stats(h->q, &st), 0);
	assert_int_equal(st.queued, 0);
	assert_int_equal(st.in_flight, 0);
	th_check(h);
	assert_int_equal(elv_queue_exit(h->q), 0);
	h->q = NULL;
}

void th_set_time(struct th *h, uint64_t now)
{
	assert_true(now >= h->now);
	h->now = now;
}

void th_advance(struct th *h, uint64_t ns)
{
	h->now += ns;
}

struct th_io *th_new(struct th *h, uint8_t op, uint64_t sector, uint32_t nr_sectors)
{
	struct th_io *io;

	assert_true(h->nr_pool < TH_POOL);
	io = &h->pool[h->nr_pool];
	elv_request_init(&io->rq);
	io->id = h->nr_pool++;
	io->merged_into = TH_NONE;
	io->rq.op = op;
	io->rq.sector = sector;
	io->rq.nr_sectors = nr_sectors;
	return io;
}

int th_add(struct th *h, struct th_io *io)
{
	int rc = elv_add(h->q, &io->rq, h->now);

	th_check(h);
	return rc;
}

struct th_io *th_add_prio(struct th *h, uint8_t op, uint64_t sector, uint32_t nr_sectors,
			  uint8_t ioprio)
{
	struct th_io *io = th_new(h, op, sector, nr_sectors);
	int rc;

	io->rq.ioprio = ioprio;
	rc = th_add(h, io);
	assert_true(rc == 0 || rc == 1);
	return io;
}

struct th_io *th_add_new(struct th *h, uint8_t op, uint64_t sector, uint32_t nr_sectors)
{
	return th_add_prio(h, op, sector, nr_sectors, 0);
}

struct th_io *th_dispatch(struct th *h, unsigned flags)
{
	struct elv_request *rq = NULL;
	struct th_io *io;
	int rc;

	if (h->nr_inflight >= h->depth)
		return NULL;
	rc = elv_dispatch(h->q, h->now, flags, &rq);
	th_check(h);
	if (rc == ELV_EAGAIN)
		return NULL;
	assert_int_equal(rc, 0);
	assert_non_null(rq);
	io = th_io_of(rq);
	assert_true(io >= h->pool && io < h->pool + h->nr_pool);
	assert_true(h->nr_order < TH_MAX_LOG);
	h->order_id[h->nr_order] = io->id;
	h->order_sector[h->nr_order] = rq->sector;
	h->order_time[h->nr_order] = h->now;
	h->nr_order++;
	h->inflight[h->nr_inflight++] = io;
	return io;
}

int th_complete_one(struct th *h)
{
	struct th_io *io;

	if (h->nr_inflight == 0)
		return 0;
	io = h->inflight[0];
	memmove(&h->inflight[0], &h->inflight[1], (h->nr_inflight - 1) * sizeof(h->inflight[0]));
	h->nr_inflight--;
	assert_int_equal(elv_complete(h->q, &io->rq, h->now), 0);
	th_check(h);
	return 1;
}

void th_requeue(struct th *h, struct th_io *io)
{
	unsigned i;

	for (i = 0; i < h->nr_inflight && h->inflight[i] != io; i++)
		;
	assert_true(i < h->nr_inflight);
	memmove(&h->inflight[i], &h->inflight[i + 1],
		(h->nr_inflight - i - 1) * sizeof(h->inflight[0]));
	h->nr_inflight--;
	assert_int_equal(elv_requeue(h->q, &io->rq, h->now), 0);
	th_check(h);
}

void th_complete_all(struct th *h)
{
	while (th_complete_one(h))
		;
}

unsigned th_run(struct th *h, unsigned max, unsigned flags)
{
	unsigned n = 0;

	while (n < max) {
		if (h->nr_inflight >= h->depth) {
			th_advance(h, h->service_ns);
			th_complete_one(h);
		}
		if (!th_dispatch(h, flags))
			break;
		n++;
	}
	return n;
}

static void th_print_order(const struct th *h)
{
	unsigned i;

	print_message("dispatched (sector/id):");
	for (i = 0; i < h->nr_order; i++)
		print_message(" %llu/%u", (unsigned long long)h->order_sector[i], h->order_id[i]);
	print_message("\n");
}

/* @same leading dispatches matched the @n expected: fail unless all did and none came more. */
static void th_expect_matched(const struct th *h, unsigned same, unsigned n)
{
	if (same != n || h->nr_order != n) {
		th_print_order(h);
		print_error("first difference at position %u of %u (got %u dispatches)\n", same,
			    n, h->nr_order);
		fail();
	}
}

void th_expect_sectors(const struct th *h, const uint64_t *sectors, unsigned n)
{
	unsigned i;

	for (i = 0; i < n && i < h->nr_order; i++)
		if (h->order_sector[i] != sectors[i])
			break;
	th_expect_matched(h, i, n);
}

void th_expect_ids(const struct th *h, const uint32_t *ids, unsigned n)
{
	unsigned i;

	for (i = 0; i < n && i < h->nr_order; i++)
		if (h->order_id[i] != ids[i])
			break;
	th_expect_matched(h, i, n);
}

void th_clear_order(struct th *h)
{
	h->nr_order = 0;
}

struct elv_stats th_stats(const struct th *h)
{
	struct elv_stats st;

	assert_int_equal(elv_stats(h->q, &st), 0);
	return st;
}

uint64_t th_queue_stat(struct elv_queue *q, const char *name)
{
	const char *n;
	uint64_t v;
	unsigned i;

	for (i = 0; elv_policy_stat(q, i, &n, &v) == 0; i++)
		if (strcmp(n, name) == 0)
			return v;
	print_error("policy has no counter named %s\n", name);
	fail();
	return 0;
}

uint64_t th_policy_stat(const struct th *h, const char *name)
{
	return th_queue_stat(h->q, name);
}

int64_t th_tunable(const struct th *h, const char *name)
{
	int64_t v = -1;

	assert_int_equal(elv_tunable_get(h->q, name, &v), 0);
	return v;
}
