/*
 * anticipatory: deadline-style FIFOs and read/write batches, a one-way elevator that accepts
 * short backward seeks, and anticipation: after a stream's read completes, the device may
 * stay idle for a few milliseconds when that stream's statistics say its next read will come
 * soon and land close by. Waiting beats seeking away and back for dependent readers.
 *
 * Requests are kept per direction (reads; everything else) in a sector tree and a FIFO.
 * Per-stream history (think time, seek distance) lives in the stream's private area. Every
 * hook is O(log n); the state machine advances only when the host calls in with its time.
 */
#include "../core/elv_internal.h"

#define AS_NSEC_PER_MS 1000000ull
#define AS_MAX_BACK (1024u * 1024u)    /* farthest backward seek not treated as a wrap */
#define AS_BACK_PENALTY 2u             /* a backward sector costs as much as two forward */
#define AS_MAX_THINK (20u * AS_NSEC_PER_MS) /* think-time samples are capped below this */
#define AS_CLOSE_BASE 8192u            /* "close" window before any waiting, in sectors */
#define AS_CLOSE_MAX_MS 20u            /* the window stops widening after this long */
#define AS_SEEK_CLAMP_EARLY (2u * 1024u * 1024u) /* seek sample clamp for the first samples */
#define AS_SEEK_CLAMP_LATE (2u * 1024u * 64u)    /* ...and once a few samples are in */
#define AS_SEEK_EARLY_SAMPLES 60u
#define AS_NEW_SEEK_CAP ((uint64_t)1 << 40) /* keeps the new-stream seek sum from overflowing */
#define AS_HALF 128u                   /* 50% in the 256-based fixed point */

/* Anticipation states. */
enum as_antic {
	AS_ANTIC_OFF = 0,       /* not anticipating */
	AS_ANTIC_WAIT_REQ = 1,  /* the awaited stream's read is still on the device */
	AS_ANTIC_WAIT_NEXT = 2, /* it completed; idle until its next request or the window ends */
	AS_ANTIC_FINISHED = 3   /* the wait just ended; dispatch without waiting again */
};

/* How a wait ended (for the counters). */
enum as_end { AS_END_HIT, AS_END_BREAK, AS_END_TIMEOUT, AS_END_EXIT };

/* Stream history flags. */
#define AS_ST_STARTED 1u /* it has queued a sync request */
#define AS_ST_RUNNING 2u /* one of its sync requests has completed */

/* Per-stream state in the stream's private area. */
struct as_stream {
	struct elv_avg ttime;  /* think time (ns) between a completion and the next request */
	struct elv_avg seek;   /* seek distance (sectors) between its sync requests */
	uint64_t last_end;     /* when its last sync request completed */
	uint64_t last_pos;     /* end sector of its last sync request */
	uint32_t nr_queued;    /* requests of it held by this policy */
	uint32_t flags;        /* AS_ST_* */
};

_Static_assert(sizeof(struct as_stream) <= ELV_STREAM_PRIV_WORDS * sizeof(uint64_t),
	       "anticipatory stream state must fit the stream's private area");

enum as_stat {
	AS_STAT_WAITS,
	AS_STAT_HITS,
	AS_STAT_BREAKS,
	AS_STAT_TIMEOUTS,
	AS_STAT_EXITS,
	AS_STAT_READ_BATCHES,
	AS_STAT_WRITE_BATCHES,
	AS_STAT_WBATCH_COUNT,
	AS_STAT_EXIT_PROB,
	AS_STAT_EXIT_NO_COOP,
	AS_STAT_NEW_TTIME,
	AS_STAT_NEW_SEEK,
	AS_NR_STATS
};

struct as_data {
	/* Tunables, ns (first so that the table's offsets are small). */
	int64_t read_expire;
	int64_t write_expire;
	int64_t read_batch_expire;
	int64_t write_batch_expire;
	int64_t antic_expire;

	struct elv_rb_root sort[2];
	struct elv_list fifo[2];
	struct elv_request *next_rq[2]; /* best next request per direction */
	uint64_t last_sector[2];        /* end of the last request dispatched, per direction */
	uint32_t nr_queued[2];

	/* Batches. */
	int batch_dir;
	uint8_t changed_batch;     /* switching: the old batch must drain first */
	uint8_t new_batch;         /* read batch clock starts at its first completion */
	uint8_t write_batch_idled; /* the write batch ran out of work: do not tune on it */
	uint64_t batch_expires;
	uint64_t write_batch_start;
	int64_t write_batch_count;   /* self-tuned requests per write batch */
	int64_t current_write_count; /* left in this write batch */
	uint64_t last_check_fifo[2];

	/* Anticipation. */
	int antic_status;
	uint8_t ioc_finished;        /* a request of the awaited stream completed */
	uint8_t ghost;               /* the awaited stream exited; judge the next request */
	struct elv_stream *antic_stream; /* issuer of the last read dispatched, or NULL */
	uint64_t antic_start;        /* completion that opened the window */
	uint64_t ghost_time;

	/* Estimates for streams without history (256 == 100%). */
	uint64_t exit_prob;
	uint64_t exit_no_coop;
	uint64_t new_ttime_total;
	uint64_t new_ttime_mean;
	uint64_t new_seek_total;
	uint64_t new_seek_mean;

	uint64_t stat[AS_NR_STATS];
};

static const char *const as_stat_names[AS_NR_STATS] = {
	"antic_waits",       "antic_hits",         "antic_breaks",      "antic_timeouts",
	"antic_exits",       "read_batches",       "write_batches",     "write_batch_count",
	"exit_prob",         "exit_no_coop",       "new_think_ns",      "new_seek_sectors",
};

/* ---- small helpers ------------------------------------------------------------------- */

static struct as_data *as_of(const struct elv_queue *q)
{
	return elv__data(q);
}

static struct as_stream *as_st(struct elv_stream *s)
{
	return s ? (struct as_stream *)(void *)s->ELV_PRIVATE(priv).u64 : NULL;
}

static const struct as_stream *as_cst(const struct elv_stream *s)
{
	return (const struct as_stream *)(const void *)s->ELV_PRIVATE(priv).u64;
}

static uint64_t as_fifo_expire(const struct as_data *ad, int dir)
{
	return (uint64_t)(dir == ELV_DIR_READ ? ad->read_expire : ad->write_expire);
}

static uint64_t as_batch_expire(const struct as_data *ad, int dir)
{
	return (uint64_t)(dir == ELV_DIR_READ ? ad->read_batch_expire : ad->write_batch_expire);
}

/* 7/8 history, 1/8 new sample; the 256-based estimates of AS. */
static uint64_t as_decay(uint64_t old, uint64_t sample)
{
	return (7u * old + sample) / 8u;
}

/* Requests the device holds or will get back first: the old batch is drained when 0. */
static uint32_t as_busy(const struct elv_queue *q)
{
	return q->nr_in_flight + q->nr_requeued;
}

/*
 * Does @s have a request the device handed back, waiting to be sent again? The core's requeue
 * list is walked: it holds at most what the device had in flight, and is nearly always empty.
 * (Requests requeued and then cancelled or drained never complete, so no counter is kept.)
 */
static int as_has_requeued(const struct elv_queue *q, const struct elv_stream *s)
{
	const struct elv_list *l;

	for (l = q->requeue.next; l != &q->requeue; l = l->next)
		if (elv_list_rq(l)->stream == s)
			return 1;
	return 0;
}

static int as_waiting(const struct as_data *ad)
{
	return ad->antic_status == AS_ANTIC_WAIT_REQ || ad->antic_status == AS_ANTIC_WAIT_NEXT;
}

static uint64_t as_window_end(const struct as_data *ad)
{
	return ad->antic_start + (uint64_t)ad->antic_expire;
}

/* ---- elevator order ------------------------------------------------------------------ */

static struct elv_request *as_choose(const struct as_data *ad, int dir, struct elv_request *a,
				     struct elv_request *b)
{
	return elv_seek_choose(a, b, ad->last_sector[dir], AS_MAX_BACK, AS_BACK_PENALTY);
}

/* The best request after @rq leaves: its successor (or the lowest, wrapping) or predecessor. */
static struct elv_request *as_find_next(const struct as_data *ad, const struct elv_request *rq)
{
	int dir = elv_rq_dir(rq);
	struct elv_request *next = elv_sort_next(rq);
	struct elv_request *prev = elv_sort_prev(rq);

	if (!next) {
		next = elv_sort_first(&ad->sort[dir]);
		if (next == rq)
			next = NULL;
	}
	return as_choose(ad, dir, next, prev);
}

static struct elv_request *as_fifo_head(const struct as_data *ad, int dir)
{
	return elv_list_first_rq(&ad->fifo[dir]);
}

/*
 * Has the oldest request of @dir passed its deadline? Looked at no more often than once per
 * expiry period, so a burst of expired requests cannot turn into a storm of seeks.
 */
static int as_fifo_expired(struct as_data *ad, int dir, uint64_t now)
{
	uint64_t expire = as_fifo_expire(ad, dir);
	uint64_t last = ad->last_check_fifo[dir];
	uint64_t since = now >= last ? now - last : last - now;

	if (since < expire)
		return 0;
	ad->last_check_fifo[dir] = now;
	return elv_fifo_expired(&ad->fifo[dir], now, expire);
}

static int as_batch_expired(const struct as_data *ad, uint64_t now)
{
	if (ad->changed_batch || ad->new_batch)
		return 0;
	if (ad->batch_dir == ELV_DIR_READ)
		return now > ad->batch_expires;
	return now > ad->batch_expires || ad->current_write_count == 0;
}

/* ---- per-stream history -------------------------------------------------------------- */

static void as_update_thinktime(struct as_data *ad, struct as_stream *st, uint64_t ttime)
{
	if (st->ttime.samples == 0) {
		/* A stream's first sample also teaches what new streams look like. */
		ad->new_ttime_total = as_decay(ad->new_ttime_total, 256u * ttime);
		ad->new_ttime_mean = ad->new_ttime_total / 256u;
		ad->exit_prob = as_decay(ad->exit_prob, 0);
	}
	elv_avg_add(&st->ttime, ttime);
}

static void as_update_seekdist(struct as_data *ad, struct as_stream *st, uint64_t dist)
{
	uint64_t cap;

	if (st->seek.samples == 0) {
		uint64_t d = dist < AS_NEW_SEEK_CAP ? dist : AS_NEW_SEEK_CAP;

		ad->new_seek_total = as_decay(ad->new_seek_total, 256u * d);
		ad->new_seek_mean = ad->new_seek_total / 256u;
	}
	/* One odd far request (a page-in, a fragment) must not make every seek look close. */
	if (st->seek.samples <= AS_SEEK_EARLY_SAMPLES)
		cap = 4u * st->seek.mean + AS_SEEK_CLAMP_EARLY;
	else
		cap = 4u * st->seek.mean + AS_SEEK_CLAMP_LATE;
	elv_avg_add(&st->seek, dist < cap ? dist : cap);
}

/* Learn from a sync request of (or, for cooperators, near) stream @st arriving at @now. */
static void as_update_iohist(const struct elv_queue *q, struct as_data *ad,
			     struct elv_stream *s, const struct elv_request *rq, uint64_t now)
{
	struct as_stream *st = as_st(s);

	if (!elv_rq_is_sync(rq))
		return;
	if (st->flags & (AS_ST_STARTED | AS_ST_RUNNING)) {
		uint64_t ttime = 0;

		/* Only a stream with nothing outstanding was thinking; otherwise it streams. */
		if ((st->flags & AS_ST_RUNNING) && st->nr_queued == 0 && now > st->last_end &&
		    !as_has_requeued(q, s)) {
			ttime = now - st->last_end;
			if (ttime >= AS_MAX_THINK)
				ttime = AS_MAX_THINK - 1u;
		}
		as_update_thinktime(ad, st, ttime);
		as_update_seekdist(ad, st,
				   rq->sector >= st->last_pos ? rq->sector - st->last_pos
							      : st->last_pos - rq->sector);
	}
	st->last_pos = elv_rq_end(rq);
	st->flags |= AS_ST_STARTED;
}

/* ---- anticipation -------------------------------------------------------------------- */

/*
 * Is @rq close to the head? The window starts at 4 MiB and doubles every millisecond waited;
 * after 20 ms (or the whole antic_expire) anything counts. Failing that, a request nearer than
 * the awaited stream's mean seek distance is close too.
 */
static int as_close_req(const struct as_data *ad, const struct as_stream *st,
			const struct elv_request *rq, uint64_t now)
{
	uint64_t last = ad->last_sector[ad->batch_dir];
	uint64_t next = rq->sector;
	uint64_t delay = 0, delay_ms, delta, dist;

	if (ad->antic_status != AS_ANTIC_OFF && ad->ioc_finished && now > ad->antic_start)
		delay = now - ad->antic_start;
	delay_ms = elv_div64(delay, AS_NSEC_PER_MS);
	if (delay_ms == 0)
		delta = AS_CLOSE_BASE;
	else if (delay_ms <= AS_CLOSE_MAX_MS && delay <= (uint64_t)ad->antic_expire)
		delta = (uint64_t)AS_CLOSE_BASE << delay_ms;
	else
		return 1;

	/* Asymmetric: half the window behind the head, the whole window ahead of it. */
	if ((next >= last || last - next <= delta / 2u) && (next <= last || next - last <= delta))
		return 1;
	dist = next >= last ? next - last : last - next;
	if (st->seek.samples == 0)
		return ad->new_seek_mean > dist;
	return st->seek.mean > dist;
}

/*
 * Should the wait for the awaited stream end (or not begin) because of @rq (which may be
 * NULL when only the stream's own statistics are asked)? 1 means dispatch now. @hit is set
 * when @rq is the awaited stream's own request.
 */
static int as_can_break(const struct elv_queue *q, struct as_data *ad,
			const struct elv_request *rq, uint64_t now, int *hit)
{
	struct elv_stream *s = ad->antic_stream;
	struct as_stream *st = as_st(s);

	*hit = 0;
	if (!st)
		return 1;
	if (rq && rq->stream == s) {
		*hit = 1;
		return 1;
	}
	/* The window has run out (the host has not called at its end yet). */
	if (ad->ioc_finished && now >= as_window_end(ad))
		return 1;
	/* The stream has more work already, queued or handed back by the device. */
	if (st->nr_queued > 0 || as_has_requeued(q, s))
		return 1;
	if (rq && elv_rq_is_sync(rq) && as_close_req(ad, st, rq, now)) {
		/* A cooperating stream works the same area: count its request as ours. */
		as_update_iohist(q, ad, s, rq, now);
		return 1;
	}
	if (st->ttime.samples == 0) {
		/* No history: go by what new streams did, and by how often they exit at once. */
		if (ad->new_ttime_mean > (uint64_t)ad->antic_expire)
			return 1;
		if (ad->exit_prob * ad->exit_no_coop > AS_HALF * 256u)
			return 1;
	} else if (st->ttime.mean > (uint64_t)ad->antic_expire) {
		/* It thinks longer than we would wait. */
		return 1;
	}
	return 0;
}

static void as_wait_next(struct elv_queue *q, struct as_data *ad, uint64_t now);

/* End a wait in progress. */
static void as_antic_stop(struct elv_queue *q, struct as_data *ad, uint64_t now, enum as_end why)
{
	uint64_t end;

	if (!as_waiting(ad))
		return;
	if (ad->antic_status == AS_ANTIC_WAIT_NEXT) {
		end = as_window_end(ad);
		elv_idle_stop(q, now < end ? now : end);
	}
	ad->antic_status = AS_ANTIC_FINISHED;
	switch (why) {
	case AS_END_HIT:
		ad->stat[AS_STAT_HITS]++;
		break;
	case AS_END_BREAK:
		ad->stat[AS_STAT_BREAKS]++;
		break;
	case AS_END_TIMEOUT:
		ad->stat[AS_STAT_TIMEOUTS]++;
		/* A stream without history that never came back looks like one that exited. */
		if (ad->antic_stream && as_st(ad->antic_stream)->ttime.samples == 0)
			ad->exit_prob = as_decay(ad->exit_prob, 256u);
		break;
	case AS_END_EXIT:
		ad->stat[AS_STAT_EXITS]++;
		break;
	}
}

/* Host time moves on: a window that has passed is a timeout. */
static void as_tick(struct elv_queue *q, struct as_data *ad, uint64_t now)
{
	if (ad->antic_status == AS_ANTIC_WAIT_NEXT && now >= as_window_end(ad))
		as_antic_stop(q, ad, now, AS_END_TIMEOUT);
}

/* The awaited read completed: idle until its stream's next request or the window's end. */
static void as_wait_next(struct elv_queue *q, struct as_data *ad, uint64_t now)
{
	ad->antic_status = AS_ANTIC_WAIT_NEXT;
	if (now >= as_window_end(ad)) {
		as_antic_stop(q, ad, now, AS_END_TIMEOUT);
		return;
	}
	elv_idle_start(q, now);
}

/*
 * Has the awaited stream's read left without completing (requeued, then cancelled or drained)?
 * Then no completion will ever open the window.
 */
static int as_awaited_gone(const struct elv_queue *q, const struct as_data *ad)
{
	const struct elv_stream *s = ad->antic_stream;

	if (!s || ad->ioc_finished)
		return 0;
	return as_busy(q) == 0 || s->ELV_PRIVATE(nr_rq) == as_cst(s)->nr_queued;
}

/* Begin anticipating (from OFF): wait for the read on the device, or idle right away. */
static void as_wait_req(struct elv_queue *q, struct as_data *ad, uint64_t now)
{
	if (ad->antic_status != AS_ANTIC_OFF)
		return;
	if (as_awaited_gone(q, ad)) {
		ad->antic_status = AS_ANTIC_FINISHED;
		return;
	}
	ad->stat[AS_STAT_WAITS]++;
	if (!ad->antic_stream || ad->ioc_finished)
		as_wait_next(q, ad, now);
	else
		ad->antic_status = AS_ANTIC_WAIT_REQ;
}

/* 1 when dispatch should hold back for the awaited stream rather than send @rq. */
static int as_can_anticipate(const struct elv_queue *q, struct as_data *ad,
			     const struct elv_request *rq, uint64_t now)
{
	int hit;

	if (!ad->antic_stream || ad->antic_status == AS_ANTIC_FINISHED)
		return 0;
	return !as_can_break(q, ad, rq, now, &hit);
}

/*
 * The awaited stream exited earlier: did somebody else carry on in its area within the
 * window (a cooperator), or not? Feeds the exit estimate used for streams without history.
 */
static void as_judge_ghost(struct as_data *ad, const struct elv_request *rq, uint64_t now)
{
	uint64_t last = ad->last_sector[ELV_DIR_READ];
	uint64_t dist = rq->sector >= last ? rq->sector - last : last - rq->sector;

	ad->ghost = 0;
	if (now - ad->ghost_time <= (uint64_t)ad->antic_expire && dist <= AS_CLOSE_BASE)
		ad->exit_no_coop = as_decay(ad->exit_no_coop, 0);
	else
		ad->exit_no_coop = as_decay(ad->exit_no_coop, 256u);
}

/* ---- batches ------------------------------------------------------------------------- */

/* At the first read completion after a write batch: size write batches to their target time. */
static void as_update_write_batch(struct as_data *ad, uint64_t now)
{
	uint64_t target = (uint64_t)ad->write_batch_expire;
	uint64_t wtime = now > ad->write_batch_start ? now - ad->write_batch_start : 0;

	if (wtime > target && !ad->write_batch_idled) {
		if (wtime > 3u * target)
			ad->write_batch_count /= 2;
		else
			ad->write_batch_count--;
	} else if (wtime < target && ad->current_write_count == 0) {
		if (target > 3u * wtime)
			ad->write_batch_count *= 2;
		else
			ad->write_batch_count++;
	}
	if (ad->write_batch_count < 1)
		ad->write_batch_count = 1;
}

/* The previous batch drained: the new one's clock starts. */
static void as_start_batch_clock(struct as_data *ad, uint64_t now)
{
	if (ad->batch_dir == ELV_DIR_WRITE) {
		ad->batch_expires = now + (uint64_t)ad->write_batch_expire;
		ad->write_batch_start = now;
	} else {
		ad->new_batch = 1;
	}
	ad->changed_batch = 0;
}

/* ---- queue hooks --------------------------------------------------------------------- */

static void as_init(struct elv_queue *q)
{
	struct as_data *ad = as_of(q);
	int d;

	for (d = 0; d < 2; d++)
		elv_list_init(&ad->fifo[d]);
	/* Begin in a read batch timed from its first completion; nothing to tune yet. */
	ad->batch_dir = ELV_DIR_READ;
	ad->new_batch = 1;
	ad->write_batch_idled = 1;
	/* A tenth of the target in milliseconds, as the jiffy-based original at HZ=1000. */
	ad->write_batch_count = (int64_t)elv_div64((uint64_t)ad->write_batch_expire,
						   10u * AS_NSEC_PER_MS);
	if (ad->write_batch_count < 2)
		ad->write_batch_count = 2;
}

static void as_link(struct as_data *ad, struct elv_request *rq)
{
	int dir = elv_rq_dir(rq);

	elv_sort_add(&ad->sort[dir], rq);
	elv_fifo_insert_ordered(&ad->fifo[dir], rq);
	ad->nr_queued[dir]++;
	if (rq->stream)
		as_st(rq->stream)->nr_queued++;
	ad->next_rq[dir] = as_choose(ad, dir, rq, ad->next_rq[dir]);
}

static void as_add(struct elv_queue *q, struct elv_request *rq, uint64_t now)
{
	struct as_data *ad = as_of(q);
	int hit;

	as_tick(q, ad, now);
	/* Learn only from fresh arrivals, not from requests moved in by a switch or barrier. */
	if (rq->stream && rq->ELV_PRIVATE(time) == now) {
		as_update_iohist(q, ad, rq->stream, rq, now);
		if (ad->ghost && elv_rq_is_sync(rq))
			as_judge_ghost(ad, rq, now);
	}
	as_link(ad, rq);
	if (as_waiting(ad) && as_can_break(q, ad, rq, now, &hit))
		as_antic_stop(q, ad, now, hit ? AS_END_HIT : AS_END_BREAK);
}

static void as_unlink(struct as_data *ad, struct elv_request *rq)
{
	int dir = elv_rq_dir(rq);

	if (ad->next_rq[dir] == rq)
		ad->next_rq[dir] = as_find_next(ad, rq);
	elv_sort_del(&ad->sort[dir], rq);
	elv_list_del(&rq->ELV_PRIVATE(fifo));
	ad->nr_queued[dir]--;
	if (rq->stream)
		as_st(rq->stream)->nr_queued--;
}

static void as_remove(struct elv_queue *q, struct elv_request *rq)
{
	as_unlink(as_of(q), rq);
}

static void as_merged(struct elv_queue *q, struct elv_request *rq, enum elv_merge_kind kind,
		      struct elv_request *next)
{
	struct as_data *ad = as_of(q);
	int dir = elv_rq_dir(rq);

	if (kind == ELV_MERGE_FRONT) {
		/* The start moved: re-key, and let it compete for the next slot again. */
		elv_sort_del(&ad->sort[dir], rq);
		elv_sort_add(&ad->sort[dir], rq);
		ad->next_rq[dir] = as_choose(ad, dir, rq, ad->next_rq[dir]);
	} else if (kind == ELV_MERGE_REQ && next) {
		/* The survivor keeps the older deadline and FIFO place. */
		elv_fifo_inherit(rq, next);
	}
}

/* A queued request of @rq's op that starts where @rq ends (front and request merges). */
static struct elv_request *as_find_follower(struct elv_queue *q, const struct elv_request *next)
{
	struct as_data *ad = as_of(q);
	struct elv_request *rq;
	uint64_t sector = elv_rq_end(next);
	uint8_t op = next->op;
	int dir = elv_rq_dir(next);

	/* Writes, discards and flushes share a tree: skip same-sector requests of another op. */
	for (rq = elv_sort_find(&ad->sort[dir], sector); rq && rq->sector == sector;
	     rq = elv_sort_next(rq))
		if (rq->op == op)
			return rq;
	return NULL;
}

static struct elv_request *as_oldest(struct elv_queue *q)
{
	struct as_data *ad = as_of(q);
	struct elv_request *r = as_fifo_head(ad, ELV_DIR_READ);
	struct elv_request *w = as_fifo_head(ad, ELV_DIR_WRITE);

	if (!r || !w)
		return r ? r : w;
	return elv_rq_seq_cmp(r, w) <= 0 ? r : w;
}

/* Hand @rq to the device: remember the head, who to anticipate, and the next candidate. */
static void as_move_to_dispatch(struct elv_queue *q, struct as_data *ad, struct elv_request *rq,
				uint64_t now)
{
	int dir = elv_rq_dir(rq);

	as_antic_stop(q, ad, now, AS_END_BREAK);
	ad->antic_status = AS_ANTIC_OFF;
	ad->last_sector[dir] = elv_rq_end(rq);
	if (dir == ELV_DIR_READ) {
		ad->antic_stream = rq->stream;
	} else {
		ad->antic_stream = NULL;
		if (ad->current_write_count > 0)
			ad->current_write_count--;
	}
	ad->ioc_finished = 0;
	ad->next_rq[dir] = as_find_next(ad, rq);
	as_unlink(ad, rq);
}

/*
 * One dispatch decision. Returns the request, or NULL with *wait set when anticipation should
 * begin, or NULL alone when nothing may go now (empty, waiting, or draining a batch).
 */
static struct elv_request *as_select(struct elv_queue *q, struct as_data *ad, uint64_t now,
				     int force, int *wait)
{
	int reads = ad->nr_queued[ELV_DIR_READ] > 0;
	int writes = ad->nr_queued[ELV_DIR_WRITE] > 0;
	int expired = 0;
	struct elv_request *rq;

	*wait = 0;
	/* The old batch left without completing (requeued, then cancelled or drained). */
	if (ad->changed_batch && as_busy(q) == 0)
		as_start_batch_clock(ad, now);
	/* A write batch with nothing competing cannot be timed meaningfully. */
	if (ad->batch_dir == ELV_DIR_WRITE && !reads &&
	    (ad->current_write_count == 0 || !writes))
		ad->write_batch_idled = 1;
	if (!reads && !writes)
		return NULL;
	if (!force && (as_waiting(ad) || ad->changed_batch))
		return NULL;

	if (!(reads && writes && as_batch_expired(ad, now))) {
		/* The batch goes on. */
		rq = ad->next_rq[ad->batch_dir];
		if (ad->batch_dir == ELV_DIR_READ && ad->antic_expire > 0) {
			if (as_fifo_expired(ad, ELV_DIR_READ, now)) {
				rq = as_fifo_head(ad, ELV_DIR_READ);
				expired = 1;
				goto dispatch;
			}
			if (!force && as_can_anticipate(q, ad, rq, now)) {
				*wait = 1;
				return NULL;
			}
		}
		if (rq) {
			/* With no writes waiting the read batch never runs out. */
			if (reads && !writes)
				ad->batch_expires = now + (uint64_t)ad->read_batch_expire;
			goto dispatch;
		}
	}

	/* A new batch: reads unless the last batch was reads and writes wait. */
	if (reads && !(writes && ad->batch_dir == ELV_DIR_READ)) {
		if (ad->batch_dir == ELV_DIR_WRITE)
			ad->changed_batch = 1;
		ad->batch_dir = ELV_DIR_READ;
		ad->stat[AS_STAT_READ_BATCHES]++;
	} else {
		if (ad->batch_dir == ELV_DIR_READ) {
			ad->changed_batch = 1;
			ad->new_batch = 0;
		}
		ad->batch_dir = ELV_DIR_WRITE;
		ad->current_write_count = ad->write_batch_count;
		ad->write_batch_idled = 0;
		ad->stat[AS_STAT_WRITE_BATCHES]++;
	}
	rq = as_fifo_head(ad, ad->batch_dir);
	ad->last_check_fifo[ad->batch_dir] = now;

dispatch:
	if (!expired && as_fifo_expired(ad, ad->batch_dir, now)) {
		rq = as_fifo_head(ad, ad->batch_dir);
		expired = 1;
	}
	if (ad->changed_batch) {
		/* Nothing of the new direction goes while the old batch is on the device. */
		if (as_busy(q) && !force)
			return NULL;
		as_start_batch_clock(ad, now);
	}
	if (expired)
		elv_note_expired(q, rq, now);
	as_move_to_dispatch(q, ad, rq, now);
	return rq;
}

static struct elv_request *as_dispatch(struct elv_queue *q, uint64_t now, int force)
{
	struct as_data *ad = as_of(q);
	struct elv_request *rq;
	int wait;

	as_tick(q, ad, now);
	if (force || (ad->antic_status == AS_ANTIC_WAIT_REQ && as_awaited_gone(q, ad)))
		as_antic_stop(q, ad, now, AS_END_BREAK);
	for (;;) {
		rq = as_select(q, ad, now, force, &wait);
		if (!wait)
			return rq;
		as_wait_req(q, ad, now);
		/* The wait ended as it began (window already over, read taken back): go on. */
		if (ad->antic_status != AS_ANTIC_FINISHED)
			return NULL;
	}
}

static void as_complete(struct elv_queue *q, struct elv_request *rq, uint64_t now)
{
	struct as_data *ad = as_of(q);
	struct as_stream *st = as_st(rq->stream);

	as_tick(q, ad, now);
	/* The last request of the old batch is done: the new batch starts now. */
	if (ad->changed_batch && as_busy(q) == 0) {
		as_start_batch_clock(ad, now);
		ad->batch_expires = now + as_batch_expire(ad, ad->batch_dir);
	}
	/* A read batch is timed from its first completed read. */
	if (ad->new_batch && ad->batch_dir == elv_rq_dir(rq)) {
		as_update_write_batch(ad, now);
		ad->batch_expires = now + (uint64_t)ad->read_batch_expire;
		ad->new_batch = 0;
	}
	if (st && elv_rq_is_sync(rq)) {
		st->flags |= AS_ST_RUNNING;
		st->last_end = now;
	}
	if (ad->antic_stream && rq->stream == ad->antic_stream) {
		ad->antic_start = now;
		ad->ioc_finished = 1;
		if (ad->antic_status == AS_ANTIC_WAIT_REQ)
			as_wait_next(q, ad, now);
	}
}

static void as_requeue(struct elv_queue *q, struct elv_request *rq, uint64_t now)
{
	/* The core re-sends it first; until then its stream counts as not thinking. */
	(void)rq;
	as_tick(q, as_of(q), now);
}

static uint64_t as_next_event(const struct elv_queue *q)
{
	const struct as_data *ad = as_of(q);

	/*
	 * With nothing queued the core does not call dispatch, so a timer would only spin the
	 * host; the next add or completion ends a stale wait instead.
	 */
	if (ad->antic_status != AS_ANTIC_WAIT_NEXT || ad->nr_queued[0] + ad->nr_queued[1] == 0)
		return ELV_TIME_NEVER;
	return as_window_end(ad);
}

static void as_stream_init(struct elv_queue *q, struct elv_stream *s, uint64_t now)
{
	struct as_stream *st = as_st(s);

	(void)q;
	(void)now;
	*st = (struct as_stream){ 0 };
}

/*
 * A retired stream never issues again: stop waiting for it at once, and remember that it
 * exited so that the next request tells whether a cooperator carries on in its area.
 */
static void as_stream_exit(struct elv_queue *q, struct elv_stream *s, uint64_t now)
{
	struct as_data *ad = as_of(q);

	if (s != ad->antic_stream)
		return;
	if (as_st(s)->ttime.samples == 0)
		ad->exit_prob = as_decay(ad->exit_prob, 256u);
	as_antic_stop(q, ad, now, AS_END_EXIT);
	ad->antic_stream = NULL;
	if (ad->antic_expire > 0) {
		ad->ghost = 1;
		ad->ghost_time = now;
	}
}

static void as_tunable_changed(struct elv_queue *q, const struct elv_tunable *t)
{
	struct as_data *ad = as_of(q);

	/* Anticipation switched off: a wait in progress must not outlive it. */
	if (t->offset == offsetof(struct as_data, antic_expire) && ad->antic_expire == 0 &&
	    as_waiting(ad)) {
		/* No clock here: the idle period is closed where it began. */
		as_antic_stop(q, ad, q->idle_since, AS_END_BREAK);
	}
}

static void as_stats(const struct elv_queue *q, uint64_t *vals)
{
	const struct as_data *ad = as_of(q);
	unsigned i;

	for (i = 0; i < AS_NR_STATS; i++)
		vals[i] = ad->stat[i];
	vals[AS_STAT_WBATCH_COUNT] = (uint64_t)ad->write_batch_count;
	vals[AS_STAT_EXIT_PROB] = ad->exit_prob;
	vals[AS_STAT_EXIT_NO_COOP] = ad->exit_no_coop;
	vals[AS_STAT_NEW_TTIME] = ad->new_ttime_mean;
	vals[AS_STAT_NEW_SEEK] = ad->new_seek_mean;
}

/* ---- invariants ---------------------------------------------------------------------- */

/* Tree and FIFO of @dir hold the same @nr requests of that direction; next_rq is among them. */
static int as_check_dir(const struct as_data *ad, int dir)
{
	const struct elv_list *l;
	const struct elv_request *rq, *prev = NULL;
	uint32_t n = 0, nt = 0;
	int next_found = ad->next_rq[dir] == NULL;

	if (elv_rb_check(&ad->sort[dir]))
		return ELV_EINVAL;
	for (l = ad->fifo[dir].next; l != &ad->fifo[dir]; l = l->next) {
		rq = elv_list_rq(l);
		if (l->next->prev != l || rq->ELV_PRIVATE(state) != ELV_RQ_QUEUED ||
		    elv_rq_dir(rq) != dir || (prev && elv_rq_seq_cmp(prev, rq) > 0))
			return ELV_EINVAL;
		prev = rq;
		n++;
	}
	for (rq = elv_sort_first(&ad->sort[dir]); rq; rq = elv_sort_next(rq)) {
		if (rq->ELV_PRIVATE(state) != ELV_RQ_QUEUED || elv_rq_dir(rq) != dir)
			return ELV_EINVAL;
		next_found |= rq == ad->next_rq[dir];
		nt++;
	}
	if (n != ad->nr_queued[dir] || nt != n || !next_found)
		return ELV_EINVAL;
	return (n == 0) == (ad->next_rq[dir] == NULL) ? 0 : ELV_EINVAL;
}

/* Per-stream queued counts add up to the requests that carry a stream. */
static int as_check_streams(const struct elv_queue *q, const struct as_data *ad)
{
	const struct elv_list *l;
	uint64_t with_stream = 0, counted = 0;
	int dir;

	for (dir = 0; dir < 2; dir++)
		for (l = ad->fifo[dir].next; l != &ad->fifo[dir]; l = l->next)
			with_stream += elv_list_rq(l)->stream != NULL;
	for (l = q->streams.next; l != &q->streams; l = l->next) {
		struct elv_stream *s = elv_container_of(l, struct elv_stream, link);
		const struct as_stream *st = as_st(s);

		if (st->nr_queued > s->ELV_PRIVATE(nr_rq) || st->ttime.samples > 256u ||
		    st->seek.samples > 256u)
			return ELV_EINVAL;
		counted += st->nr_queued;
	}
	return counted == with_stream ? 0 : ELV_EINVAL;
}

static int as_check_antic(const struct elv_queue *q, const struct as_data *ad)
{
	const uint64_t *st = ad->stat;
	uint64_t ended = st[AS_STAT_HITS] + st[AS_STAT_BREAKS] + st[AS_STAT_TIMEOUTS] +
			 st[AS_STAT_EXITS];

	if (ad->antic_status < AS_ANTIC_OFF || ad->antic_status > AS_ANTIC_FINISHED)
		return ELV_EINVAL;
	/* Only this policy idles, and only while waiting for the next request. */
	if (elv_is_idling(q) && ad->antic_status != AS_ANTIC_WAIT_NEXT)
		return ELV_EINVAL;
	if (as_waiting(ad) && (ad->antic_expire == 0 || ended + 1u != st[AS_STAT_WAITS]))
		return ELV_EINVAL;
	if (!as_waiting(ad) && ended != st[AS_STAT_WAITS])
		return ELV_EINVAL;
	if (ad->antic_status == AS_ANTIC_WAIT_REQ && (!ad->antic_stream || ad->ioc_finished))
		return ELV_EINVAL;
	if (ad->antic_status == AS_ANTIC_WAIT_NEXT && !ad->ioc_finished && ad->antic_stream)
		return ELV_EINVAL;
	if (ad->antic_stream && ad->antic_stream->ELV_PRIVATE(q) != q)
		return ELV_EINVAL;
	return 0;
}

static int as_check(const struct elv_queue *q)
{
	const struct as_data *ad = as_of(q);

	if (as_check_dir(ad, ELV_DIR_READ) || as_check_dir(ad, ELV_DIR_WRITE))
		return ELV_EINVAL;
	if (ad->nr_queued[0] + ad->nr_queued[1] != elv_queue_nr_queued(q))
		return ELV_EINVAL;
	if (as_check_streams(q, ad) || as_check_antic(q, ad))
		return ELV_EINVAL;
	if (ad->batch_dir != ELV_DIR_READ && ad->batch_dir != ELV_DIR_WRITE)
		return ELV_EINVAL;
	if ((ad->changed_batch && ad->new_batch) || ad->write_batch_count < 1 ||
	    ad->current_write_count < 0 || ad->exit_prob > 256u || ad->exit_no_coop > 256u)
		return ELV_EINVAL;
	return 0;
}

/* ---- the policy ---------------------------------------------------------------------- */

#define AS_MAX_MS 3600000    /* one hour: the longest deadline or batch */
#define AS_MAX_ANTIC_US 1000000 /* one second: far past any useful wait */

#define AS_MS(field, def, text)                                                              \
	{ #field, "ms", text, def, 0, AS_MAX_MS, (uint32_t)offsetof(struct as_data, field),  \
	  (uint32_t)AS_NSEC_PER_MS }

static const struct elv_tunable as_tunables[] = {
	AS_MS(read_expire, 125, "deadline of a read, from its arrival"),
	AS_MS(write_expire, 250, "deadline of a write, discard or flush, from its arrival"),
	AS_MS(read_batch_expire, 500, "length of a read batch while writes wait"),
	AS_MS(write_batch_expire, 125, "target length of a write batch (tunes its size)"),
	{ "antic_expire", "us", "longest wait for the last reader's next request; 0 disables",
	  6667, 0, AS_MAX_ANTIC_US, (uint32_t)offsetof(struct as_data, antic_expire), 1000u },
};

const struct elv_policy elv_policy_anticipatory = {
	.abi = ELV_POLICY_ABI,
	.struct_size = sizeof(struct elv_policy),
	.name = "anticipatory",
	.desc = "Deadline batches plus a short wait for the last reader's next nearby read",
	.data_size = sizeof(struct as_data),
	.tunables = as_tunables,
	.nr_tunables = sizeof(as_tunables) / sizeof(as_tunables[0]),
	.stat_names = as_stat_names,
	.nr_stats = AS_NR_STATS,
	.init = as_init,
	.add = as_add,
	.remove = as_remove,
	.merged = as_merged,
	.find_next = as_find_follower,
	.dispatch = as_dispatch,
	.oldest = as_oldest,
	.requeue = as_requeue,
	.complete = as_complete,
	.next_event = as_next_event,
	.stream_init = as_stream_init,
	.stream_exit = as_stream_exit,
	.tunable_changed = as_tunable_changed,
	.stats = as_stats,
	.check = as_check,
};
