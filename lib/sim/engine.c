/*
 * The discrete-event engine. It plays the host: streams add requests to a real elv_queue,
 * the engine dispatches while the device has free slots, completes requests when the device
 * says so, and calls elv_dispatch() again at elv_next_event() when the policy idles. Events
 * at the same time run in a fixed order (device completion, then stream wake-ups by time and
 * sequence, then the policy timer), so a seed fully determines a run.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"

struct srq {
	struct elv_request rq;
	struct elv_sim_io io;
	struct elv__stream *st;
	struct elv__desc d;     /* as issued, before any merge */
	uint64_t issue_ns;
	struct srq *chain;      /* requests merged into this one */
	struct srq *tail;
	struct srq *next_free;
};

struct ev {
	uint64_t t;
	uint64_t seq;
	uint32_t stream;
};

struct eng {
	const struct elv_sim_config *cfg;
	struct elv_queue *q;
	struct elv_sim_dev *dev;
	struct elv__stream *s;
	uint32_t ns;
	struct ev *heap;
	size_t nheap, capheap;
	uint64_t evseq;
	struct srq *free_rq;
	struct srq **blocks;
	size_t nblocks;
	uint64_t now;
	int err;
	int draining;
	uint32_t fg_left;
	uint64_t end_ns;
	double queued_sum;
	uint64_t dispatches;
	struct elv__vec rlat, wlat;
	uint64_t rbytes, wbytes, requests;
	uint64_t failed;        /* requests completed with an error */
	int zone_on;            /* the zone stage is attached */
	void *zmem;             /* its memory */
	uint8_t *zresync;       /* per zone: tell the stage the device's write pointer */
	struct srq *zfailed;    /* requests it refused or gave back, to account as failed */
	uint64_t last_timer;
	uint32_t timer_repeat;
	uint64_t same_time;     /* steps in a row without the clock moving */
	int refused;            /* the device said BUSY: wait for a completion */
	uint64_t requeues;
	int cut;                /* enum elv_sim_cut */
	struct elv_group grp[ELV_SIM_MAX_GROUPS]; /* the run's groups (elv_sim_config) */
	uint32_t ngrp;          /* of them registered with the queue */
	struct elv_qos qos;     /* the QoS stage (elv_sim_config::qos) */
	int qos_on;             /* attached */
};

/* ---- event heap ----------------------------------------------------------------------- */

static int ev_less(const struct ev *a, const struct ev *b)
{
	return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static int ev_push(struct eng *e, uint64_t t, uint32_t stream)
{
	size_t i;

	if (e->nheap == e->capheap) {
		size_t cap = e->capheap ? e->capheap * 2 : 64;
		struct ev *nv = realloc(e->heap, cap * sizeof(*nv));

		if (!nv)
			return ELV_ENOMEM;
		e->heap = nv;
		e->capheap = cap;
	}
	i = e->nheap++;
	e->heap[i].t = t;
	e->heap[i].seq = e->evseq++;
	e->heap[i].stream = stream;
	while (i && ev_less(&e->heap[i], &e->heap[(i - 1) / 2])) {
		struct ev tmp = e->heap[i];

		e->heap[i] = e->heap[(i - 1) / 2];
		e->heap[(i - 1) / 2] = tmp;
		i = (i - 1) / 2;
	}
	return 0;
}

static struct ev ev_pop(struct eng *e)
{
	struct ev top = e->heap[0];
	size_t i = 0;

	e->heap[0] = e->heap[--e->nheap];
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		struct ev tmp;

		if (l < e->nheap && ev_less(&e->heap[l], &e->heap[m]))
			m = l;
		if (r < e->nheap && ev_less(&e->heap[r], &e->heap[m]))
			m = r;
		if (m == i)
			break;
		tmp = e->heap[i];
		e->heap[i] = e->heap[m];
		e->heap[m] = tmp;
		i = m;
	}
	return top;
}

/* ---- request pool ------------------------------------------------------------------------ */

static struct srq *rq_alloc(struct eng *e)
{
	struct srq *r;

	if (!e->free_rq) {
		size_t i, n = 256;
		struct srq *blk = calloc(n, sizeof(*blk));
		struct srq **nb = realloc(e->blocks, (e->nblocks + 1) * sizeof(*nb));

		if (!blk || !nb) {
			free(blk);
			if (nb)
				e->blocks = nb;
			return NULL;
		}
		e->blocks = nb;
		e->blocks[e->nblocks++] = blk;
		for (i = 0; i < n; i++) {
			blk[i].next_free = e->free_rq;
			e->free_rq = &blk[i];
		}
	}
	r = e->free_rq;
	e->free_rq = r->next_free;
	memset(r, 0, sizeof(*r));
	return r;
}

static void rq_free(struct eng *e, struct srq *r)
{
	r->next_free = e->free_rq;
	e->free_rq = r;
}

/* Merge callback: the absorbed request (and whatever it had absorbed) rides along. */
/* The drive model's positioning-time estimate, for the policies that schedule by it. */
static uint64_t on_position_time(void *ctx, const struct elv_request *rq, uint64_t now)
{
	struct eng *e = ctx;

	return elv__dev_position_ns(e->dev, rq, now);
}

static void on_merge(void *ctx, struct elv_request *into, struct elv_request *absorbed,
		     enum elv_merge_kind kind)
{
	struct srq *a = elv_container_of(into, struct srq, rq);
	struct srq *b = elv_container_of(absorbed, struct srq, rq);

	(void)ctx;
	(void)kind;
	if (a->tail)
		a->tail->chain = b;
	else
		a->chain = b;
	a->tail = b->tail ? b->tail : b;
}

/* ---- streams ------------------------------------------------------------------------------ */

static void stream_done_check(struct eng *e, struct elv__stream *s)
{
	if (s->finished == 1 && !s->inflight) {
		s->finished = 2;
		/* The run ends with the last completion of a foreground stream, not with
		 * the think time a generator spent finding out it had nothing left. */
		if (!s->sp.background && e->fg_left) {
			e->fg_left--;
			if (s->done_ns > e->end_ns)
				e->end_ns = s->done_ns;
		}
	}
}

static int any_set(const void *p, size_t n)
{
	const unsigned char *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		if (b[i])
			return 1;
	return 0;
}

/* Make a registered stream a client of the QoS stage with its settings. */
static int stream_qos(struct eng *e, struct elv__stream *s, struct elv_stream *es,
		      struct elv_qos_client *qc)
{
	const struct elv_sim_stream_spec *sp = &s->sp;
	int thr = any_set(&sp->throttle, sizeof(sp->throttle));
	int mc = any_set(&sp->mclock, sizeof(sp->mclock));
	int r;

	if (!e->qos_on || (!thr && !mc))
		return 0;
	memset(qc, 0, sizeof(*qc));
	r = elv_qos_stream_attach(e->q, es, qc, e->now);
	if (!r && thr)
		r = elv_qos_set_throttle(e->q, qc, &sp->throttle, e->now);
	if (!r && mc)
		r = elv_qos_set_mclock(e->q, qc, &sp->mclock, e->now);
	return r;
}

/* Register a stream (and its writeback thread) with the queue, with its weight and group. */
static int stream_register(struct eng *e, struct elv__stream *s)
{
	struct elv_stream *es[2] = { &s->es, &s->es_wb };
	unsigned k, n = s->has_wb ? 2 : 1;
	int r;

	for (k = 0; k < n; k++) {
		es[k]->ioprio = s->sp.ioprio;
		r = elv_stream_init(e->q, es[k], e->now);
		if (r)
			return r;
		s->registered = (uint8_t)(k + 1);
		if (s->sp.weight && (r = elv_stream_set_weight(e->q, es[k], s->sp.weight)) != 0)
			return r;
		if (s->sp.group &&
		    (r = elv_stream_set_group(e->q, es[k], &e->grp[s->sp.group - 1])) != 0)
			return r;
		if ((r = stream_qos(e, s, es[k], &s->qc[k])) != 0)
			return r;
	}
	return 0;
}

static int issue(struct eng *e, struct elv__stream *s, const struct elv__desc *d)
{
	struct srq *r = rq_alloc(e);
	int ret;

	if (!r)
		return ELV_ENOMEM;
	/* A stream that starts late joins the queue when it starts, as a new process would. */
	if (!s->registered && (ret = stream_register(e, s)) != 0) {
		rq_free(e, r);
		return ret;
	}
	r->st = s;
	r->d = *d;
	r->issue_ns = e->now;
	r->rq.sector = d->sector;
	r->rq.nr_sectors = d->nr;
	r->rq.op = d->op;
	r->rq.flags = d->flags;
	/* Buffered writes reach the queue from the writeback thread, not the process. */
	r->rq.stream = s->has_wb && d->op == ELV_OP_WRITE ? &s->es_wb : &s->es;
	ret = elv_add(e->q, &r->rq, e->now);
	/* The zone stage refuses what a zoned device would fail: the write fails at once. */
	if (ret < 0 && !(e->zone_on && ret != ELV_ENOMEM && ret != ELV_EBUSY)) {
		rq_free(e, r);
		return ret;
	}
	if (ret < 0) {
		r->next_free = e->zfailed;
		e->zfailed = r;
	}
	s->issued++;
	s->inflight++;
	if (d->op == ELV_OP_WRITE)
		s->inflight_wr++;
	if (d->op == ELV_OP_READ || (d->flags & ELV_RQ_SYNC))
		s->inflight_sync++;
	return 0;
}

/* Let a stream issue whatever it can at e->now. */
static void stream_run(struct eng *e, struct elv__stream *s)
{
	int guard = 0;

	while (!s->finished && !e->err && !e->draining) {
		struct elv__desc d;
		uint64_t wake = ELV_TIME_NEVER;
		int r = elv__gen_next(s, e->now, &d, &wake);

		if (r == ELV__GEN_REQ) {
			int ir = issue(e, s, &d);

			if (ir)
				e->err = ir;
			/* A generator that never blocks; a trace may hold any number of records
			 * at one instant, each issued once. */
			if (++guard > 100000 && s->sp.kind != ELV__REPLAY)
				e->err = ELV_EINVAL;
			continue;
		}
		if (r == ELV__GEN_SLEEP) {
			if (wake < s->wake_at) {
				s->wake_at = wake;
				if (ev_push(e, wake, s->idx))
					e->err = ELV_ENOMEM;
			}
		} else if (r == ELV__GEN_DONE) {
			s->finished = 1;
			stream_done_check(e, s);
		} else if (r < 0) {
			e->err = r;
		}
		break;
	}
}

static void account(struct eng *e, struct srq *r)
{
	struct elv__stream *s = r->st;
	double ms = (double)(e->now - r->issue_ns) / 1e6;
	uint64_t bytes = (uint64_t)r->d.nr * 512;

	s->inflight--;
	if (r->d.op == ELV_OP_WRITE)
		s->inflight_wr--;
	if (r->d.op == ELV_OP_READ || (r->d.flags & ELV_RQ_SYNC))
		s->inflight_sync--;
	elv__gen_complete(s, &r->d, e->now);
	if (e->draining)
		return;
	s->completed++;
	s->bytes += bytes;
	s->done_ns = e->now;
	e->requests++;
	if (r->d.op == ELV_OP_READ) {
		e->rbytes += bytes;
		if (elv__vec_push(&s->rlat, ms) || elv__vec_push(&e->rlat, ms))
			e->err = ELV_ENOMEM;
	} else if (r->d.op == ELV_OP_WRITE) {
		e->wbytes += bytes;
		if (elv__vec_push(&s->wlat, ms) || elv__vec_push(&e->wlat, ms))
			e->err = ELV_ENOMEM;
	}
}

static void kick(struct eng *e);

/* ---- the zone stage ----------------------------------------------------------------------- */

/* The stage gave a request back unserved (behind a failed write, off the write pointer). */
static void on_zone_fail(void *ctx, struct elv_request *rq, int err)
{
	struct eng *e = ctx;
	struct srq *r = elv_container_of(rq, struct srq, rq);

	(void)err;
	r->next_free = e->zfailed;
	e->zfailed = r;
}

/* Account the requests the stage refused or gave back as failed, and let their streams go
 * on; 1 when there were any. */
static int zone_settle(struct eng *e)
{
	struct srq *list = e->zfailed, *r;

	if (!list)
		return 0;
	e->zfailed = NULL;
	while ((r = list) != NULL) {
		struct elv__stream *s = r->st;

		list = r->next_free;
		if (!e->draining)
			e->failed++;
		account(e, r);
		rq_free(e, r);
		stream_run(e, s);
		stream_done_check(e, s);
	}
	return 1;
}

/* After failed writes: report the device's write pointers to the stage (as a host reads
 * them with a zone report), once the zone has nothing held or in flight. */
static void zone_resync(struct eng *e)
{
	static const uint8_t cond[] = { ELV_ZONE_EMPTY, ELV_ZONE_OPEN, ELV_ZONE_CLOSED,
					ELV_ZONE_FULL, ELV_ZONE_NOT_WP };
	uint32_t z, n = elv_sim_dev_nr_zones(e->dev);
	struct elv_sim_zone_info zi;

	for (z = 0; e->zresync && z < n; z++) {
		if (!e->zresync[z] || elv_sim_dev_zone_report(e->dev, z, &zi))
			continue;
		if (elv_zone_report(e->q, z, cond[zi.cond], (uint32_t)zi.wp) != ELV_EBUSY)
			e->zresync[z] = 0;
	}
}

static int zone_setup(struct eng *e)
{
	struct elv_zone_geometry g;
	size_t len;
	int r;

	if (e->cfg->no_zone_stage ||
	    elv_sim_dev_zone_geometry(elv_sim_dev_params(e->dev), &g) != 0)
		return 0;
	len = elv_zone_size(&g);
	e->zmem = len ? malloc(len) : NULL;
	e->zresync = calloc(elv_sim_dev_nr_zones(e->dev), 1);
	if (!e->zmem || !e->zresync)
		return ELV_ENOMEM;
	r = elv_zone_attach(e->q, &g, e->zmem, len, on_zone_fail, e);
	if (r)
		return r;
	e->zone_on = 1;
	return 0;
}

static void complete(struct eng *e, struct elv_sim_io *io)
{
	struct srq *r = io->ctx, *x, *next;
	uint32_t i;

	if (e->cfg->trace)
		e->cfg->trace(e->cfg->trace_ctx, 'C', e->now, io);
	/* A command the device failed completes with an error: the zone stage then fails
	 * the writes it holds for the zone, whose write pointer is reported to it again. */
	if (elv_complete_status(e->q, &r->rq, io->status ? ELV_EIO : 0, e->now)) {
		e->err = ELV_EINVAL;
		return;
	}
	if (io->status && e->zresync && io->sector < elv_sim_dev_params(e->dev)->capacity)
		e->zresync[io->sector / elv_sim_dev_params(e->dev)->zone.zone_sectors] = 1;
	if (e->zresync)
		zone_resync(e);
	for (x = r; x; x = next) {
		next = x->chain;
		/* The device failed the command (a zoned device's rule): every request in it. */
		if (io->status && !e->draining)
			e->failed++;
		account(e, x);
	}
	/* The driver starts the next command from its completion handler, before any process
	 * the completion woke can run and submit more: dispatch first, then wake. */
	kick(e);
	/* Wake the streams involved, in stream order, after all accounting. */
	for (i = 0; i < e->ns; i++) {
		struct elv__stream *s = &e->s[i];
		int hit = 0;

		for (x = r; x && !hit; x = x->chain)
			hit = x->st == s;
		if (hit) {
			stream_run(e, s);
			stream_done_check(e, s);
		}
	}
	for (x = r; x; x = next) {
		next = x->chain;
		rq_free(e, x);
	}
}

/* Dispatch while the device has room. */
static void kick_once(struct eng *e);

static void kick(struct eng *e)
{
	/* Requests the zone stage failed let their streams issue more: dispatch those too. */
	do
		kick_once(e);
	while (zone_settle(e) && !e->err);
}

static void kick_once(struct eng *e)
{
	while (!e->err && !e->refused && elv_sim_dev_slots(e->dev)) {
		struct elv_request *rq;
		uint32_t queued = elv_queue_nr_queued(e->q);
		struct srq *r;
		int ret;

		ret = elv_dispatch(e->q, e->now, e->draining ? ELV_DISPATCH_FORCE : 0, &rq);
		if (ret == ELV_EAGAIN)
			break;
		if (ret) {
			e->err = ret;
			break;
		}
		if (!e->draining) {
			e->queued_sum += queued;
			e->dispatches++;
		}
		r = elv_container_of(rq, struct srq, rq);
		memset(&r->io, 0, sizeof(r->io));
		r->io.sector = rq->sector;
		r->io.nr_sectors = rq->nr_sectors;
		r->io.op = rq->op;
		r->io.ctx = r;
		ret = elv_sim_dev_submit(e->dev, &r->io, e->now);
		if (ret == ELV_EBUSY) {
			/* Give it back: it goes first once the device has room again. */
			if (elv_requeue(e->q, rq, e->now))
				e->err = ELV_EINVAL;
			e->refused = 1;
			e->requeues++;
			if (!e->draining) {
				e->queued_sum -= queued;
				e->dispatches--;
			}
		} else if (ret) {
			e->err = ret;
		} else if (e->cfg->trace) {
			e->cfg->trace(e->cfg->trace_ctx, 'D', e->now, &r->io);
		}
	}
}

/* ---- results ------------------------------------------------------------------------------ */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Latencies are never negative, and the bit patterns of non-negative doubles sort as
 * unsigned integers: an LSD radix sort puts a million samples in order in a few linear
 * passes. Passes where every sample has the same byte are skipped. */
static int radix_sort(double *v, size_t n)
{
	uint64_t *a = (uint64_t *)(void *)v, *b, *src, *dst, *t;
	size_t i, cnt[256];
	unsigned pass;

	for (i = 0; i < n; i++)
		if (!(v[i] >= 0))
			return -1; /* negative or NaN: not for this sort */
	b = malloc(n * sizeof(*b));
	if (!b)
		return -1;
	src = a;
	dst = b;
	for (pass = 0; pass < 8; pass++) {
		unsigned sh = pass * 8;
		size_t sum = 0;

		memset(cnt, 0, sizeof(cnt));
		for (i = 0; i < n; i++)
			cnt[(src[i] >> sh) & 0xff]++;
		if (cnt[(src[0] >> sh) & 0xff] == n)
			continue;
		for (i = 0; i < 256; i++) {
			size_t c = cnt[i];

			cnt[i] = sum;
			sum += c;
		}
		for (i = 0; i < n; i++)
			dst[cnt[(src[i] >> sh) & 0xff]++] = src[i];
		t = src;
		src = dst;
		dst = t;
	}
	if (src != a)
		memcpy(a, src, n * sizeof(*a));
	free(b);
	return 0;
}

/* Nearest rank: the smallest sample with at least p percent of the samples at or below. */
static double rank_of(const double *v, size_t n, double p)
{
	double r = ceil(p / 100.0 * (double)n - 1e-9);

	if (r < 1)
		r = 1;
	if (r > (double)n)
		r = (double)n;
	return v[(size_t)r - 1];
}

void elv__lat_summary(double *v, size_t n, const double *pct, unsigned npct,
		      struct elv_sim_lat *out)
{
	size_t i;
	double sum = 0;

	memset(out, 0, sizeof(*out));
	if (!n)
		return;
	if (n > 1 && radix_sort(v, n))
		qsort(v, n, sizeof(*v), cmp_double);
	for (i = 0; i < n; i++)
		sum += v[i];
	out->n = n;
	out->p50 = rank_of(v, n, 50);
	out->p99 = rank_of(v, n, 99);
	out->max = v[n - 1];
	out->mean = sum / (double)n;
	for (i = 0; i < npct && i < ELV_SIM_MAX_PCT; i++)
		out->pct[i] = rank_of(v, n, pct[i]);
}

static void collect(struct eng *e, struct elv_sim_result *res)
{
	struct elv_stats st;
	double span;
	unsigned i;

	span = (double)e->end_ns / 1e9;
	res->makespan_s = span;
	res->requests = e->requests;
	res->failed = e->failed;
	res->zone_stage = (uint8_t)e->zone_on;
	res->dispatched = e->dispatches;
	elv_sim_dev_get_stats(e->dev, &res->dev);
	if (res->dev.media_accesses) {
		res->mean_seek_sectors = res->dev.seek_sectors / (double)res->dev.media_accesses;
		res->mean_seek_ms = res->dev.seek_ms / (double)res->dev.media_accesses;
	}
	res->mean_queued = e->dispatches ? e->queued_sum / (double)e->dispatches : 0;
	res->nr_pct = e->cfg->nr_pct;
	memcpy(res->pct, e->cfg->pct, sizeof(res->pct));
	elv__lat_summary(e->rlat.v, e->rlat.n, res->pct, res->nr_pct, &res->read_lat);
	elv__lat_summary(e->wlat.v, e->wlat.n, res->pct, res->nr_pct, &res->write_lat);
	res->read_samples_ms = e->rlat.v;
	res->nr_read_samples = e->rlat.n;
	e->rlat.v = NULL;
	e->rlat.n = e->rlat.cap = 0;
	if (span > 0) {
		res->read_mbps = (double)e->rbytes / 1e6 / span;
		res->write_mbps = (double)e->wbytes / 1e6 / span;
	}
	res->busy_s = (double)res->dev.busy_ns / 1e9;
	elv_stats(e->q, &st);
	res->idle_s = (double)st.idle_ns / 1e9;
	res->idle_count = st.idle_count;
	res->expired = st.expired;
	for (i = 0; i < ELV_SIM_MAX_PSTATS; i++) {
		const char *name;
		uint64_t v;

		if (elv_policy_stat(e->q, i, &name, &v))
			break;
		snprintf(res->pstat_name[i], sizeof(res->pstat_name[i]), "%s", name);
		res->pstat_value[i] = v;
		res->nr_pstats = i + 1;
	}
	res->nr_streams = e->ns < ELV_SIM_MAX_STREAMS ? e->ns : ELV_SIM_MAX_STREAMS;
	for (i = 0; i < res->nr_streams; i++) {
		struct elv__stream *s = &e->s[i];
		struct elv_sim_stream_result *sr = &res->streams[i];
		double t;

		memcpy(sr->name, s->sp.name, sizeof(sr->name));
		sr->name[sizeof(sr->name) - 1] = 0;
		/* A background stream counts until the run ended. */
		t = (double)(s->sp.background ? e->end_ns : s->done_ns) / 1e9;
		sr->done_s = t;
		sr->requests = s->completed;
		sr->bytes = s->bytes;
		sr->mbps = t > 0 ? (double)s->bytes / 1e6 / t : 0;
		if (e->ns == 1) {
			/* One stream holds every sample: its summary is the run's. */
			sr->read_lat = res->read_lat;
			sr->write_lat = res->write_lat;
		} else {
			elv__lat_summary(s->rlat.v, s->rlat.n, res->pct, res->nr_pct,
					 &sr->read_lat);
			elv__lat_summary(s->wlat.v, s->wlat.n, res->pct, res->nr_pct,
					 &sr->write_lat);
		}
	}
}

/* ---- setup and the loop ---------------------------------------------------------------- */

static int setup_replay(struct eng *e)
{
	const struct elv_sim_config *c = e->cfg;
	uint32_t pids[ELV_SIM_MAX_STREAMS];
	size_t counts[ELV_SIM_MAX_STREAMS] = { 0 }, i;
	uint32_t n = 0, k;
	uint32_t *map = malloc(c->nr_replay * sizeof(*map));

	if (!map)
		return ELV_ENOMEM;
	/* One stream per process in order of first appearance; extra processes share. */
	for (i = 0; i < c->nr_replay; i++) {
		uint32_t pid = c->replay[i].pid;

		for (k = 0; k < n && pids[k] != pid; k++)
			;
		if (k == n) {
			if (n < ELV_SIM_MAX_STREAMS)
				pids[n++] = pid;
			else
				k = pid % ELV_SIM_MAX_STREAMS;
		}
		map[i] = k;
		counts[k]++;
	}
	e->ns = n;
	e->s = calloc(n ? n : 1, sizeof(*e->s));
	if (!e->s) {
		free(map);
		return ELV_ENOMEM;
	}
	for (k = 0; k < n; k++) {
		struct elv__stream *s = &e->s[k];
		uint32_t *idx = malloc((counts[k] ? counts[k] : 1) * sizeof(*idx));
		size_t j = 0;

		if (!idx) {
			free(map);
			return ELV_ENOMEM;
		}
		for (i = 0; i < c->nr_replay; i++)
			if (map[i] == k)
				idx[j++] = (uint32_t)i;
		s->idx = k;
		s->sp.kind = ELV__REPLAY;
		snprintf(s->sp.name, sizeof(s->sp.name), "pid %u", pids[k]);
		s->wake_at = ELV_TIME_NEVER;
		if (elv__gen_replay(s, c->replay, idx, j, c->closed_loop, c->dev.capacity)) {
			free(idx);
			free(map);
			return ELV_ENOMEM;
		}
	}
	free(map);
	return 0;
}

static int setup(struct eng *e)
{
	const struct elv_sim_config *c = e->cfg;
	struct elv_config qc;
	uint32_t i;
	int r;

	r = elv_sim_dev_create(&e->dev, &c->dev);
	if (r)
		return r;
	memset(&qc, 0, sizeof(qc));
	elv_sim_dev_traits(elv_sim_dev_params(e->dev), &qc.dev);
	qc.dev.max_sectors = c->max_sectors ? c->max_sectors : 256;
	qc.nr_requests = 256;
	qc.merge = on_merge;
	if (c->dev.kind == ELV_SIM_DEV_DISK)
		qc.position_time = on_position_time;
	qc.ctx = e;
	r = elv_queue_create(&e->q, c->policy, &qc);
	if (r)
		return r;
	for (i = 0; i < c->nr_sets; i++) {
		r = elv_tunable_set(e->q, c->sets[i].name, c->sets[i].value);
		if (r)
			return r;
	}
	if (c->qos) {
		r = elv_qos_attach(e->q, &e->qos, &c->qos_set, 0);
		if (r)
			return r;
		e->qos_on = 1;
	}
	r = zone_setup(e);
	if (r)
		return r;
	for (i = 0; i < c->nr_groups; i++) {
		e->grp[i].weight = c->group_weight[i];
		r = elv_group_init(e->q, &e->grp[i], 0);
		if (r)
			return r;
		e->ngrp = i + 1;
	}
	if (c->replay) {
		r = setup_replay(e);
		if (r)
			return r;
	} else {
		e->ns = c->nr_streams;
		e->s = calloc(e->ns ? e->ns : 1, sizeof(*e->s));
		if (!e->s)
			return ELV_ENOMEM;
		for (i = 0; i < e->ns; i++) {
			struct elv__stream *s = &e->s[i];

			s->sp = c->streams[i];
			s->idx = i;
			/* Each stream draws from its own sequence: adding one changes no other. */
			elv_sim_rng_seed(&s->rng, c->seed * 0x100000001b3ULL + i + 1);
			r = elv__gen_init(s, elv_sim_dev_params(e->dev)->capacity);
			if (r)
				return r;
		}
	}
	for (i = 0; i < e->ns; i++) {
		struct elv__stream *s = &e->s[i];

		if (!s->sp.start_ms && (r = stream_register(e, s)) != 0)
			return r;
		if (!s->sp.background)
			e->fg_left++;
	}
	return e->fg_left ? 0 : ELV_EINVAL;
}

static double progress_of(const struct eng *e)
{
	double f = 1.0;
	uint32_t i;

	for (i = 0; i < e->ns; i++) {
		const struct elv__stream *s = &e->s[i];

		if (!s->sp.background && s->units_total) {
			double x = (double)s->units_done / (double)s->units_total;

			if (x < f)
				f = x;
		}
	}
	return f;
}

/* One step: the earliest of device completion, stream wake-up and policy timer. */
static int step(struct eng *e, uint64_t limit)
{
	uint64_t td = elv_sim_dev_next(e->dev);
	uint64_t te = e->nheap ? e->heap[0].t : ELV_TIME_NEVER;
	/* The policy's timer asks for a dispatch, which a host makes only when the device can
	 * take a command: with every slot taken, the next completion comes first. Requests the
	 * QoS stage holds are not the policy's: with the stage on, its time counts too. */
	uint64_t tq = (elv_queue_nr_queued(e->q) || e->qos_on) && elv_sim_dev_slots(e->dev) ?
		      elv_next_event(e->q) : ELV_TIME_NEVER;
	uint64_t t = td < te ? td : te;

	if (tq < t)
		t = tq;
	if (t == ELV_TIME_NEVER) {
		e->cut = ELV_SIM_CUT_STALL; /* nothing can happen any more */
		return 0;
	}
	if (t < e->now)
		t = e->now; /* a timer in the past means "now" */
	if (limit && t > limit) {
		e->cut = ELV_SIM_CUT_TIME_LIMIT;
		e->now = limit;
		return 0;
	}
	/* Zero-time devices can let a background stream spin at one instant for ever. */
	if (t == e->now && ++e->same_time > 20000000) {
		e->cut = ELV_SIM_CUT_STALL;
		return 0;
	}
	if (t != e->now)
		e->same_time = 0;
	e->now = t;
	if (td == t) {
		struct elv_sim_io *io = elv_sim_dev_finish(e->dev, t);

		e->refused = 0;
		if (io)
			complete(e, io);
	} else if (te == t) {
		struct ev ev = ev_pop(e);
		struct elv__stream *s = &e->s[ev.stream];

		if (s->wake_at == ev.t)
			s->wake_at = ELV_TIME_NEVER;
		stream_run(e, s);
	} else if (t == e->last_timer && ++e->timer_repeat > 1000) {
		e->err = ELV_EAGAIN; /* the policy keeps asking for a timer it does not use */
	} else if (t != e->last_timer) {
		e->last_timer = t;
		e->timer_repeat = 0;
	}
	kick(e);
	return 1;
}

static void drain(struct eng *e)
{
	uint64_t guard = 0;

	/* Stop issuing, force out what is queued, let the device finish. */
	e->draining = 1;
	kick(e);
	while (!e->err && (elv_sim_dev_next(e->dev) != ELV_TIME_NEVER ||
			   elv_queue_nr_queued(e->q)) && guard++ < 100000000) {
		uint64_t td = elv_sim_dev_next(e->dev);

		if (td != ELV_TIME_NEVER) {
			struct elv_sim_io *io;

			e->now = td > e->now ? td : e->now;
			io = elv_sim_dev_finish(e->dev, e->now);
			e->refused = 0;
			if (io)
				complete(e, io);
		}
		kick(e);
		/* An idle device and a queue that gives nothing even when forced: stop. */
		if (td == ELV_TIME_NEVER && elv_sim_dev_next(e->dev) == ELV_TIME_NEVER)
			break;
	}
}

static void drop(void *arg, struct elv_request *rq)
{
	(void)arg;
	(void)rq; /* pool memory, freed with its block */
}

static void teardown(struct eng *e)
{
	uint32_t i;
	size_t b;

	if (e->q) {
		/* Anything a policy still holds after a forced drain goes back unserved. */
		elv_drain(e->q, drop, e);
		for (i = 0; i < e->ns; i++)
			if (e->s[i].registered) {
				elv_stream_exit(e->q, &e->s[i].es, e->now);
				if (e->s[i].registered == 2)
					elv_stream_exit(e->q, &e->s[i].es_wb, e->now);
			}
		for (i = 0; i < e->ngrp; i++)
			elv_group_exit(e->q, &e->grp[i], e->now);
		/* Retired streams took their QoS clients with them. */
		if (e->qos_on)
			elv_qos_detach(e->q, e->now);
		elv_queue_destroy(e->q);
	}
	for (i = 0; e->s && i < e->ns; i++)
		elv__gen_exit(&e->s[i]);
	free(e->s);
	elv_sim_dev_destroy(e->dev);
	free(e->zmem);
	free(e->zresync);
	free(e->heap);
	for (b = 0; b < e->nblocks; b++)
		free(e->blocks[b]);
	free(e->blocks);
	elv__vec_free(&e->rlat);
	elv__vec_free(&e->wlat);
}

/* A foreground stream with no end of its own needs a time limit to stop the run. */
static int endless(const struct elv_sim_stream_spec *sp)
{
	if (sp->background)
		return 0;
	switch (sp->kind) {
	case ELV_SIM_SYNC_READER:
	case ELV_SIM_FIXED_QD:
		return !sp->count;
	case ELV_SIM_STREAMER:
	case ELV_SIM_WRITER:
		return !sp->bytes;
	case ELV_SIM_MIXED:
		return !sp->count && !sp->bytes;
	default:
		return 0;
	}
}

static int config_ok(const struct elv_sim_config *cfg)
{
	uint32_t i;

	if (!cfg->policy || (!cfg->replay && !cfg->nr_streams) ||
	    cfg->nr_streams > ELV_SIM_MAX_STREAMS || cfg->nr_sets > ELV_SIM_MAX_SETS ||
	    cfg->nr_pct > ELV_SIM_MAX_PCT)
		return 0;
	for (i = 0; i < cfg->nr_pct; i++)
		if (!(cfg->pct[i] > 0 && cfg->pct[i] <= 100))
			return 0;
	if (cfg->nr_groups > ELV_SIM_MAX_GROUPS)
		return 0;
	for (i = 0; i < cfg->nr_groups; i++)
		if (!cfg->group_weight[i] || cfg->group_weight[i] > ELV_GROUP_WEIGHT_MAX)
			return 0;
	for (i = 0; !cfg->replay && i < cfg->nr_streams; i++)
		if (cfg->streams[i].group > cfg->nr_groups ||
		    cfg->streams[i].weight > ELV_WEIGHT_MAX)
			return 0;
	for (i = 0; !cfg->replay && !cfg->time_limit_ns && i < cfg->nr_streams; i++)
		if (endless(&cfg->streams[i]))
			return 0;
	return 1;
}

/* What a cut run left out, counted before the drain completes what was in flight. */
static void count_cut(struct eng *e, struct elv_sim_result *res)
{
	uint32_t i;

	res->truncated = e->cut ? e->cut : ELV_SIM_CUT_STALL;
	res->cut_ns = e->now;
	for (i = 0; i < e->ns; i++) {
		const struct elv__stream *s = &e->s[i];

		res->unfinished += s->issued - s->completed;
		res->not_issued += elv__gen_unissued(s);
		if (!s->sp.background && s->finished != 2)
			res->streams_unfinished++;
	}
}

int elv_sim_run(const struct elv_sim_config *cfg, struct elv_sim_result *res)
{
	struct eng e;
	uint64_t limit, steps = 0;
	uint32_t i;
	int r;

	if (!cfg || !res || !config_ok(cfg))
		return ELV_EINVAL;
	memset(res, 0, sizeof(*res));
	snprintf(res->policy, sizeof(res->policy), "%s", elv_policy_name(cfg->policy));
	memset(&e, 0, sizeof(e));
	e.cfg = cfg;
	r = setup(&e);
	if (r) {
		teardown(&e);
		return r;
	}
	limit = cfg->time_limit_ns;
	res->time_limit_ns = limit;
	res->nr_records = cfg->replay ? cfg->nr_replay : 0;
	for (i = 0; i < e.ns; i++)
		stream_run(&e, &e.s[i]);
	kick(&e);
	while (!e.err && e.fg_left) {
		if (!step(&e, limit))
			break;
		if (cfg->progress && (++steps & 0x3fff) == 0)
			cfg->progress(cfg->progress_ctx, progress_of(&e));
	}
	if (e.fg_left && !e.err) {
		/* Time limit, or a deadlock (nothing pending while streams wait). */
		count_cut(&e, res);
		e.end_ns = e.now;
	} else if (e.fg_left) {
		e.end_ns = e.now; /* an error stopped the run: res->error says which */
	}
	res->error = e.err;
	collect(&e, res);
	drain(&e);
	teardown(&e);
	return 0;
}

int elv_sim_result_cut(const struct elv_sim_result *res, char *buf, size_t len)
{
	char what[96];

	if (!res || !buf || !len)
		return ELV_EINVAL;
	buf[0] = 0;
	if (!res->truncated)
		return 0;
	if (res->nr_records)
		snprintf(what, sizeof(what), "%llu of %llu trace records never issued",
			 (unsigned long long)res->not_issued,
			 (unsigned long long)res->nr_records);
	else
		snprintf(what, sizeof(what), "%u foreground streams unfinished",
			 res->streams_unfinished);
	if (res->truncated == ELV_SIM_CUT_TIME_LIMIT)
		snprintf(buf, len, "%s cut by the time limit at %.3f s: %s; %llu requests in "
			 "flight not counted", res->policy, (double)res->cut_ns / 1e9, what,
			 (unsigned long long)res->unfinished);
	else
		snprintf(buf, len, "%s stalled at %.3f s with nothing left to happen: %s; "
			 "%llu requests in flight not counted", res->policy,
			 (double)res->cut_ns / 1e9, what, (unsigned long long)res->unfinished);
	return 1;
}

void elv_sim_result_free(struct elv_sim_result *res)
{
	if (!res)
		return;
	free(res->read_samples_ms);
	res->read_samples_ms = NULL;
	res->nr_read_samples = 0;
}
