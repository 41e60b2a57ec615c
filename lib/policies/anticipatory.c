/*
 * anticipatory: deadline-style FIFOs and read/write batches, a one-way elevator that accepts
 * short backward seeks, and anticipation: after a stream's read completes, the device may
 * stay idle for a few milliseconds when that stream's statistics say its next read will come
 * soon and land close by. Waiting beats seeking away and back for dependent readers.
 *
 * Requests are kept per direction (reads; everything else) in a sector tree and a FIFO.
 * Per-stream history (think time, seek distance) lives in the stream's private area. Every
 * hook is O(log n); the state machine advances only when the host calls in with its time.
 *
 * Per-stream averages are kept as elv_avg_add() keeps them but share one sample weight, and
 * means are compared by multiplying rather than dividing. The common cases (no wait in
 * progress or ending, the batch goes on, a plain history update) take exact fast paths when
 * optimising for speed; the general paths handle everything, and alone make up the code
 * when optimising for size.
 */
#include <stddef.h>

#include "elevator/policy.h"

#if defined(__GNUC__)
#define AS_NOINLINE __attribute__((noinline))
#else
#define AS_NOINLINE
#endif

/*
 * Fast paths: exact shortcuts for the three commonest cases (an add with no wait in
 * progress, a dispatch that goes on with its batch, a completion outside a wait), each of
 * which hands over to the general path before it has changed anything. Each saves 2% to 9%
 * of the instructions per request (tools/elvbench/profile.sh); builds that optimise for size
 * leave them out, and the results are the same either way. Optimising for size, helpers
 * with several callers also stay one shared copy each (AS_SHARED: smaller code on
 * Cortex-M3); otherwise the compiler decides what to inline.
 */
#if defined(__OPTIMIZE_SIZE__)
#define AS_FAST 0
#define AS_SHARED AS_NOINLINE /* helpers with several callers: one copy, smaller code */
#else
#define AS_FAST 1
#define AS_SHARED inline
#endif

#define AS_NSEC_PER_MS 1000000ull
#define AS_MAX_BACK (1024u * 1024u)    /* farthest backward seek not treated as a wrap */
#define AS_BACK_PENALTY 2u             /* a backward sector costs as much as two forward */
#define AS_MAX_THINK (20u * AS_NSEC_PER_MS) /* think-time samples are capped below this */
#define AS_CLOSE_BASE 8192u            /* "close" window before any waiting, in sectors */
#define AS_CLOSE_MAX_MS 20u            /* the window stops widening after this long */
#define AS_SEEK_CLAMP_EARLY (2u * 1024u * 1024u) /* seek sample clamp for the first samples */
#define AS_SEEK_CLAMP_LATE (2u * 1024u * 64u)    /* ...and once a few samples are in */
#define AS_SEEK_EARLY_SAMPLES 60u
#define AS_SAMPLE_MAX ((uint64_t)1 << 40) /* samples are capped here, as elv_avg_add() does */
#define AS_HALF 128u                   /* 50% in the 256-based fixed point */
#define AS_WRITE_BATCH_MS 125          /* default write_batch_expire */

/* Anticipation states. */
enum as_antic {
	AS_ANTIC_OFF = 0,       /* not anticipating */
	AS_ANTIC_WAIT_REQ = 1,  /* the awaited stream's read is still on the device */
	AS_ANTIC_WAIT_NEXT = 2, /* it completed; idle until its next request or the window ends */
	AS_ANTIC_FINISHED = 3   /* the wait just ended; dispatch without waiting again */
};

/* Policy counters. A wait's end is counted at the index of its reason (HITS..EXITS). */
enum as_stat {
	AS_STAT_WAITS,
	AS_STAT_HITS,
	AS_STAT_BREAKS,
	AS_STAT_TIMEOUTS,
	AS_STAT_EXITS,
	AS_STAT_READ_BATCHES,
	AS_STAT_WRITE_BATCHES,
	AS_STAT_WBATCH_COUNT, /* this one and the rest are read from the state */
	AS_STAT_EXIT_PROB,
	AS_STAT_EXIT_NO_COOP,
	AS_STAT_NEW_TTIME,
	AS_STAT_NEW_SEEK,
	AS_NR_STATS
};

/* Stream history flags. */
#define AS_ST_STARTED 1u /* it has queued a sync request */
#define AS_ST_RUNNING 2u /* one of its sync requests has completed */

/*
 * Per-stream state in the stream's private area. Think time (ns) and seek distance (sectors)
 * are decaying averages as elv_avg_add() keeps them (1/8 new sample, 7/8 history, sums scaled
 * by 256, mean (total + 128) / samples). Both are always sampled together, so they share
 * one sample weight, and the means are compared without dividing (as_mean_above()).
 */
struct as_stream {
	uint64_t ttime_total;
	uint64_t seek_total;
	uint64_t last_end;  /* when its last sync request completed */
	uint64_t last_pos;  /* end sector of its last sync request */
	uint32_t samples;   /* decayed weight of both averages; 0: no history yet */
	uint32_t nr_queued; /* requests of it held by this policy */
	uint32_t flags;     /* AS_ST_* */
};

_Static_assert(sizeof(struct as_stream) <= ELV_STREAM_PRIV_WORDS * sizeof(uint64_t),
	       "anticipatory stream state must fit the stream's private area");

/* One direction: reads, or everything else. */
struct as_dir {
	struct elv_rb_root sort;
	struct elv_list fifo;
	struct elv_request *next_rq; /* the elevator's next choice */
	uint64_t last_sector;        /* end of the last request dispatched */
	uint64_t last_check_fifo;    /* when the FIFO's deadline was last looked at */
	uint32_t nr_queued;
};

/* Batch flags. */
#define AS_CHANGED_BATCH 1u /* switching: the old batch must drain first */
#define AS_NEW_BATCH 2u     /* the read batch clock starts at its first completion */
#define AS_WB_IDLED 4u      /* the write batch ran out of work: do not tune on it */

struct as_data {
	/* State first: small offsets make short instructions on 32-bit cores. */
	uint8_t batch_dir;
	uint8_t batch_flags;  /* AS_CHANGED_BATCH, AS_NEW_BATCH, AS_WB_IDLED */
	uint8_t antic_status; /* enum as_antic */
	uint8_t ioc_finished; /* a request of the awaited stream completed */
	uint8_t ghost;        /* the awaited stream exited; judge the next request */
	struct elv_stream *antic_stream; /* issuer of the last read dispatched, or NULL */
	/* Estimates for streams without history (256 == 100%; totals scaled by 256). */
	uint32_t exit_prob;
	uint32_t exit_no_coop;
	uint64_t antic_start; /* completion that opened the window */
	uint64_t batch_expires;
	uint64_t write_batch_start;
	int64_t write_batch_count;   /* self-tuned requests per write batch */
	int64_t current_write_count; /* left in this write batch */

	/* Tunables, ns, indexed by direction where they come in pairs. */
	int64_t expire[2];       /* read_expire, write_expire */
	int64_t batch_expire[2]; /* read_batch_expire, write_batch_expire */
	int64_t antic_expire;

	struct as_dir dir[2];
	uint64_t ghost_time;
	uint64_t new_ttime_total;
	uint64_t new_seek_total;
	uint64_t stat[AS_STAT_WBATCH_COUNT];
};

static const char *const as_stat_names[AS_NR_STATS] = {
	"antic_waits",       "antic_hits",         "antic_breaks",      "antic_timeouts",
	"antic_exits",       "read_batches",       "write_batches",     "write_batch_count",
	"exit_prob",         "exit_no_coop",       "new_think_ns",      "new_seek_sectors",
};

/* ---- small helpers ------------------------------------------------------------------- */

static struct as_data *as_of(const struct elv_queue *q)
{
	return elv_queue_head(q)->data;
}

static struct as_stream *as_st(const struct elv_stream *s)
{
	return elv_stream_priv(s);
}

/* A decaying sum scaled by 256 after sample @x: 7/8 history, 1/8 new sample. */
static AS_SHARED uint64_t as_decay(uint64_t total, uint64_t x)
{
	return (7u * total + 256u * x) / 8u;
}

/* The same for the exit estimates, which stay within 0..256. */
static void as_decay_prob(uint32_t *p, uint32_t sample)
{
	*p = (7u * *p + sample) / 8u;
}

static AS_SHARED uint64_t as_dist(uint64_t a, uint64_t b)
{
	return a >= b ? a - b : b - a;
}

/*
 * Is the mean (@total + 128) / @samples greater than @x? @samples > 0. Exact without a
 * division: no 64-bit divide on 32-bit cores. (@x + 1) * @samples cannot overflow once
 * @x < @total + 128, since totals stay below 2^48 and @samples below 256.
 */
static AS_SHARED int as_mean_above(uint64_t total, uint32_t samples, uint64_t x)
{
	uint64_t n = total + 128u;

	return x < n && n >= (x + 1u) * samples;
}

/* Requests the device holds or will get back first: the old batch is drained when 0. */
static uint32_t as_busy(const struct elv_queue *q)
{
	return elv_queue_head(q)->nr_in_flight + elv_queue_head(q)->nr_requeued;
}

/*
 * Does @s have a request the device handed back, waiting to be sent again? The core's requeue
 * list is walked: it holds at most what the device had in flight, and is nearly always empty.
 * (Requests requeued and then cancelled or drained never complete, so no counter is kept.)
 */
static AS_NOINLINE int as_has_requeued_slow(const struct elv_queue *q, const struct elv_stream *s)
{
	const struct elv_request *rq;

	for (rq = elv_queue_requeued_next(q, NULL); rq; rq = elv_queue_requeued_next(q, rq))
		if (rq->stream == s)
			return 1;
	return 0;
}

static int as_has_requeued(const struct elv_queue *q, const struct elv_stream *s)
{
	return elv_queue_head(q)->nr_requeued != 0 && as_has_requeued_slow(q, s);
}

static int as_waiting(const struct as_data *ad)
{
	return (unsigned)ad->antic_status - AS_ANTIC_WAIT_REQ <= 1u;
}

static uint64_t as_window_end(const struct as_data *ad)
{
	return ad->antic_start + (uint64_t)ad->antic_expire;
}

/* ---- elevator order ------------------------------------------------------------------ */

/* The better next request of @a and @b (either may be NULL) seen from head @last: the
 * library's seek rule, backward seeks of up to AS_MAX_BACK sectors at AS_BACK_PENALTY. */
static AS_SHARED struct elv_request *as_choose(uint64_t last, struct elv_request *a,
					       struct elv_request *b)
{
	if (!a || a == b)
		return b;
	return b ? elv_seek_pick(a, b, last, AS_MAX_BACK, AS_BACK_PENALTY) : a;
}

/*
 * Take @rq out of its tree, and make the next choice the better of its successor (or the
 * lowest request, wrapping) and its predecessor, seen from the head. Returns @rq.
 */
static struct elv_request *as_take_next(struct as_dir *d, struct elv_request *rq)
{
	struct elv_request *prev = elv_sort_prev(rq);
	struct elv_request *next = elv_sort_del_next(&d->sort, rq);

	if (!next)
		next = elv_sort_first(&d->sort);
	d->next_rq = as_choose(d->last_sector, next, prev);
	return rq;
}

static struct elv_request *as_fifo_head(const struct as_data *ad, int dir)
{
	return elv_list_first_rq(&ad->dir[dir].fifo);
}

/*
 * The oldest request of @dir if it has passed its deadline, else NULL. Looked at no more often
 * than once per expiry period, so a burst of expired requests cannot turn into a storm of seeks.
 */
static AS_SHARED struct elv_request *as_fifo_expired(struct as_data *ad, int dir, uint64_t now)
{
	struct as_dir *d = &ad->dir[dir];
	uint64_t expire = (uint64_t)ad->expire[dir];
	struct elv_request *rq;

	if (now - d->last_check_fifo < expire)
		return NULL;
	d->last_check_fifo = now;
	rq = elv_list_first_rq(&d->fifo);
	return rq && elv_time_after_eq(now, elv_rq_time(rq) + expire) ? rq : NULL;
}

/* ---- per-stream history -------------------------------------------------------------- */

/* Samples are capped at 2^40, as elv_avg_add() caps them. */
static AS_SHARED uint64_t as_capped(uint64_t x)
{
	return x < AS_SAMPLE_MAX ? x : AS_SAMPLE_MAX;
}

/* A stream's first sample also teaches what new streams look like. */
static void as_learn_new(struct as_data *ad, uint64_t ttime, uint64_t dist)
{
	ad->new_ttime_total = as_decay(ad->new_ttime_total, ttime);
	as_decay_prob(&ad->exit_prob, 0);
	ad->new_seek_total = as_decay(ad->new_seek_total, as_capped(dist));
}

/* The clamp of the seek sample (see as_seek_sample()). */
static uint64_t as_seek_cap(const struct as_stream *st, uint64_t clamp)
{
	return st->samples ? clamp + 4u * elv_div64(st->seek_total + 128u, st->samples) : clamp;
}

/*
 * The seek sample: @dist, clamped to 4 * mean + a margin so that one odd far request (a
 * page-in, a fragment) cannot make every seek look close.
 */
static inline uint64_t as_seek_sample(const struct as_stream *st, uint64_t dist)
{
	uint64_t clamp = st->samples <= AS_SEEK_EARLY_SAMPLES ? AS_SEEK_CLAMP_EARLY
							      : AS_SEEK_CLAMP_LATE;

	/* dist < 4 * mean + clamp, tested as mean > (dist - clamp) / 4 */
	if (dist >= clamp && (st->samples == 0 ||
			      !as_mean_above(st->seek_total, st->samples, (dist - clamp) / 4u)))
		dist = as_seek_cap(st, clamp);
	return as_capped(dist);
}

/* Think time: only a stream with nothing outstanding was thinking; otherwise it streams. */
static inline uint64_t as_think_time(const struct elv_queue *q,
					       const struct elv_stream *s,
					       const struct as_stream *st, uint64_t now)
{
	uint64_t ttime;

	if (!(st->flags & AS_ST_RUNNING) || st->nr_queued != 0 ||
	    elv_time_before_eq(now, st->last_end) || as_has_requeued(q, s))
		return 0;
	ttime = now - st->last_end;
	return ttime < AS_MAX_THINK ? ttime : AS_MAX_THINK - 1u;
}

/* One sample of both averages. */
static inline void as_sample(struct as_stream *st, uint64_t ttime, uint64_t seek)
{
	st->samples = (7u * st->samples + 256u) / 8u;
	st->ttime_total = as_decay(st->ttime_total, ttime);
	st->seek_total = as_decay(st->seek_total, seek);
}

/* Learn from a sync request @rq of (or, for cooperators, near) stream @s arriving at @now. */
static void as_update_iohist(const struct elv_queue *q, struct as_data *ad, struct elv_stream *s,
			     const struct elv_request *rq, uint64_t now)
{
	struct as_stream *st = as_st(s);

	if (st->flags) {
		uint64_t ttime = as_think_time(q, s, st, now), dist = as_dist(rq->sector, st->last_pos);

		if (st->samples == 0)
			as_learn_new(ad, ttime, dist);
		as_sample(st, ttime, as_seek_sample(st, dist));
	}
	st->last_pos = elv_rq_end(rq);
	st->flags |= AS_ST_STARTED;
}

/*
 * as_update_iohist() for the usual case, a stream past its first few samples whose seek is
 * within the clamp: 1 when done, 0 (having changed nothing) for the general path.
 */
static inline int as_update_iohist_fast(const struct elv_queue *q,
						  struct elv_stream *s,
						  const struct elv_request *rq, uint64_t now)
{
	struct as_stream *st = as_st(s);

	if (st->flags) {
		uint64_t dist = as_dist(rq->sector, st->last_pos);

		if (st->samples <= AS_SEEK_EARLY_SAMPLES || dist >= AS_SAMPLE_MAX ||
		    (dist >= AS_SEEK_CLAMP_LATE &&
		     !as_mean_above(st->seek_total, st->samples,
				    (dist - AS_SEEK_CLAMP_LATE) / 4u)))
			return 0;
		as_sample(st, as_think_time(q, s, st, now), dist);
	}
	st->last_pos = elv_rq_end(rq);
	st->flags |= AS_ST_STARTED;
	return 1;
}

/* ---- anticipation -------------------------------------------------------------------- */

/* A stream without history that never came back looks like one that exited. */
static void as_note_gone(struct as_data *ad, const struct elv_stream *s)
{
	if (s && as_st(s)->samples == 0)
		as_decay_prob(&ad->exit_prob, 256u);
}

/*
 * Is @rq close to the head? The window starts at 4 MiB and doubles every millisecond waited;
 * after 20 ms (or the whole antic_expire) anything counts. Failing that, a request nearer than
 * the awaited stream's mean seek distance is close too.
 */
static int as_close_req(const struct as_data *ad, const struct as_stream *st,
			const struct elv_request *rq, uint64_t now)
{
	uint64_t last = ad->dir[ad->batch_dir].last_sector;
	uint64_t delay = 0, delta, dist = as_dist(rq->sector, last);

	if (ad->antic_status != AS_ANTIC_OFF && ad->ioc_finished &&
	    elv_time_after(now, ad->antic_start))
		delay = now - ad->antic_start;
	/* Whole milliseconds waited; below 21 ms the division fits 32 bits. */
	if (delay < AS_NSEC_PER_MS)
		delta = AS_CLOSE_BASE;
	else if (delay < (AS_CLOSE_MAX_MS + 1u) * AS_NSEC_PER_MS &&
		 delay <= (uint64_t)ad->antic_expire)
		delta = (uint64_t)AS_CLOSE_BASE << ((uint32_t)delay / (uint32_t)AS_NSEC_PER_MS);
	else
		return 1;

	/* Asymmetric: half the window behind the head, the whole window ahead of it. */
	if (dist <= (rq->sector >= last ? delta : delta / 2u))
		return 1;
	if (st->samples == 0)
		return (ad->new_seek_total / 256u) > dist;
	return as_mean_above(st->seek_total, st->samples, dist);
}

/* as_can_break() once the quick answers are out of the way: @s has nothing queued. */
static unsigned as_can_break_slow(const struct elv_queue *q, struct as_data *ad,
					      const struct elv_request *rq, uint64_t now)
{
	struct elv_stream *s = ad->antic_stream;
	const struct as_stream *st = as_st(s);

	/* The window has run out (the host has not called at its end yet), or the device
	 * handed a request of the stream back. */
	if ((ad->ioc_finished && elv_time_after_eq(now, as_window_end(ad))) ||
	    as_has_requeued(q, s))
		return AS_STAT_BREAKS;
	if (rq && elv_rq_is_sync(rq) && as_close_req(ad, st, rq, now)) {
		/* A cooperating stream works the same area: count its request as ours. */
		as_update_iohist(q, ad, s, rq, now);
		return AS_STAT_BREAKS;
	}
	if (st->samples == 0) {
		/* No history: go by what new streams did, and by how often they exit at once. */
		if (ad->new_ttime_total / 256u > (uint64_t)ad->antic_expire ||
		    ad->exit_prob * ad->exit_no_coop > AS_HALF * 256u)
			return AS_STAT_BREAKS;
	} else if (as_mean_above(st->ttime_total, st->samples, (uint64_t)ad->antic_expire)) {
		/* It thinks longer than we would wait. */
		return AS_STAT_BREAKS;
	}
	return 0;
}

/*
 * Should the wait for the awaited stream end (or not begin) because of @rq (which may be
 * NULL when only the stream's own statistics are asked)? 0: keep waiting; AS_STAT_HITS: @rq
 * is the awaited stream's own request; AS_STAT_BREAKS: dispatch now for another reason, the
 * commonest being that the stream has more work queued already.
 */
static inline unsigned as_can_break(const struct elv_queue *q, struct as_data *ad,
					      const struct elv_request *rq, uint64_t now)
{
	struct elv_stream *s = ad->antic_stream;

	if (!s)
		return AS_STAT_BREAKS;
	if (rq && rq->stream == s)
		return AS_STAT_HITS;
	if (as_st(s)->nr_queued > 0)
		return AS_STAT_BREAKS;
	return as_can_break_slow(q, ad, rq, now);
}

/* End a wait in progress; @why is the counter of its reason (AS_STAT_HITS..AS_STAT_EXITS). */
static void as_antic_stop(struct elv_queue *q, struct as_data *ad, uint64_t now, unsigned why)
{
	uint64_t end;

	if (!as_waiting(ad))
		return;
	if (ad->antic_status == AS_ANTIC_WAIT_NEXT) {
		end = as_window_end(ad);
		elv_idle_stop(q, elv_time_before(now, end) ? now : end);
	}
	ad->antic_status = AS_ANTIC_FINISHED;
	ad->stat[why]++;
	if (why == AS_STAT_TIMEOUTS)
		as_note_gone(ad, ad->antic_stream);
}

/* Host time moves on: a window that has passed is a timeout. */
static void as_tick_wait(struct elv_queue *q, struct as_data *ad, uint64_t now)
{
	if (elv_time_after_eq(now, as_window_end(ad)))
		as_antic_stop(q, ad, now, AS_STAT_TIMEOUTS);
}

static void as_tick(struct elv_queue *q, struct as_data *ad, uint64_t now)
{
	if (ad->antic_status == AS_ANTIC_WAIT_NEXT)
		as_tick_wait(q, ad, now);
}

/* The awaited read completed: idle until its stream's next request or the window's end. */
static void as_wait_next(struct elv_queue *q, struct as_data *ad, uint64_t now)
{
	ad->antic_status = AS_ANTIC_WAIT_NEXT;
	if (elv_time_after_eq(now, as_window_end(ad)))
		as_antic_stop(q, ad, now, AS_STAT_TIMEOUTS);
	else
		elv_idle_start(q, now);
}

/*
 * Has the awaited stream's read left without completing (requeued, then cancelled or drained)?
 * Then no completion will ever open the window.
 */
static AS_SHARED int as_awaited_gone(const struct elv_queue *q, const struct as_data *ad)
{
	const struct elv_stream *s = ad->antic_stream;

	if (!s || ad->ioc_finished)
		return 0;
	return as_busy(q) == 0 || elv_stream_nr_rq(s) == as_st(s)->nr_queued;
}

/* Begin anticipating the awaited stream (dispatch decided to, from OFF). */
static void as_wait_req(struct elv_queue *q, struct as_data *ad, uint64_t now)
{
	if (as_awaited_gone(q, ad)) {
		ad->antic_status = AS_ANTIC_FINISHED;
		return;
	}
	ad->stat[AS_STAT_WAITS]++;
	if (ad->ioc_finished)
		as_wait_next(q, ad, now);
	else
		ad->antic_status = AS_ANTIC_WAIT_REQ;
}

/*
 * The awaited stream exited earlier: did somebody else carry on in its area within the
 * window (a cooperator), or not? Feeds the exit estimate used for streams without history.
 */
static void as_judge_ghost(struct as_data *ad, const struct elv_request *rq,
				       uint64_t now)
{
	int coop = now - ad->ghost_time <= (uint64_t)ad->antic_expire &&
		   as_dist(rq->sector, ad->dir[ELV_DIR_READ].last_sector) <= AS_CLOSE_BASE;

	ad->ghost = 0;
	as_decay_prob(&ad->exit_no_coop, coop ? 0 : 256u);
}

/* ---- batches ------------------------------------------------------------------------- */

/* At the first read completion after a write batch: size write batches to their target time. */
static void as_update_write_batch(struct as_data *ad, uint64_t now)
{
	uint64_t target = (uint64_t)ad->batch_expire[ELV_DIR_WRITE];
	uint64_t wtime = elv_time_after(now, ad->write_batch_start) ? now - ad->write_batch_start
								     : 0;

	if (wtime > target && !(ad->batch_flags & AS_WB_IDLED)) {
		if (wtime > 3u * target)
			ad->write_batch_count >>= 1; /* halved: it is never negative */
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

/*
 * The previous batch drained: the new one's clock starts. (A read batch's end is set again
 * at its first completion; until then it is not looked at.)
 */
static void as_start_batch_clock(struct as_data *ad, uint64_t now)
{
	ad->batch_expires = now + (uint64_t)ad->batch_expire[ad->batch_dir];
	if (ad->batch_dir == ELV_DIR_WRITE)
		ad->write_batch_start = now;
	else
		ad->batch_flags |= AS_NEW_BATCH;
	ad->batch_flags &= (uint8_t)~AS_CHANGED_BATCH;
}

static int as_batch_expired(const struct as_data *ad, uint64_t now)
{
	if (ad->batch_flags & (AS_CHANGED_BATCH | AS_NEW_BATCH))
		return 0;
	return elv_time_after(now, ad->batch_expires) ||
	       (ad->batch_dir == ELV_DIR_WRITE && ad->current_write_count == 0);
}

/* A new batch: reads unless the last batch was reads and writes wait. Returns its direction. */
static int as_new_batch(struct as_data *ad, int reads, int writes, uint64_t now)
{
	int dir = reads && !(writes && ad->batch_dir == ELV_DIR_READ) ? ELV_DIR_READ
								       : ELV_DIR_WRITE;

	/* A change of direction waits for the old batch to drain; a write batch has no read
	 * batch clock to start, and its size is counted down from the tuned one. */
	if (dir != ad->batch_dir)
		ad->batch_flags = (uint8_t)((ad->batch_flags | AS_CHANGED_BATCH) &
					    ~(dir == ELV_DIR_WRITE ? AS_NEW_BATCH : 0u));
	if (dir == ELV_DIR_WRITE) {
		ad->current_write_count = ad->write_batch_count;
		ad->batch_flags &= (uint8_t)~AS_WB_IDLED;
	}
	ad->batch_dir = (uint8_t)dir;
	ad->stat[AS_STAT_READ_BATCHES + dir]++;
	ad->dir[dir].last_check_fifo = now;
	return dir;
}

/* A completion while a batch changes: the old batch drained, or a read batch's clock starts. */
static void as_complete_batch(struct elv_queue *q, struct as_data *ad,
					  const struct elv_request *rq, uint64_t now)
{
	/* The last request of the old batch is done: the new batch starts now. */
	if ((ad->batch_flags & AS_CHANGED_BATCH) && as_busy(q) == 0)
		as_start_batch_clock(ad, now);
	/* A read batch is timed from its first completed read. */
	if ((ad->batch_flags & AS_NEW_BATCH) && ad->batch_dir == elv_rq_dir(rq)) {
		as_update_write_batch(ad, now);
		ad->batch_expires = now + (uint64_t)ad->batch_expire[ELV_DIR_READ];
		ad->batch_flags &= (uint8_t)~AS_NEW_BATCH;
	}
}

/* ---- queue hooks --------------------------------------------------------------------- */

static void as_init(struct elv_queue *q)
{
	struct as_data *ad = as_of(q);

	elv_list_init(&ad->dir[ELV_DIR_READ].fifo);
	elv_list_init(&ad->dir[ELV_DIR_WRITE].fifo);
	/* Begin in a read batch timed from its first completion; nothing to tune yet. */
	ad->batch_flags = AS_NEW_BATCH | AS_WB_IDLED;
	/* A tenth of the target in milliseconds, as the jiffy-based original at HZ=1000 (the
	 * tunables hold their defaults here). */
	ad->write_batch_count = AS_WRITE_BATCH_MS / 10;
}

_Static_assert(AS_WRITE_BATCH_MS / 10 >= 2, "a write batch starts with 2 requests or more");

/* The general add. */
static void as_add_slow(struct elv_queue *q, struct elv_request *rq, uint64_t now)
{
	struct as_data *ad = as_of(q);
	struct as_dir *d = &ad->dir[elv_rq_dir(rq)];
	struct elv_stream *s = rq->stream;
	unsigned why;

	as_tick(q, ad, now);
	if (s) {
		/* Learn only from fresh arrivals, not from requests moved in by a switch or
		 * barrier. */
		if (elv_rq_time(rq) == now && elv_rq_is_sync(rq)) {
			as_update_iohist(q, ad, s, rq, now);
			if (ad->ghost)
				as_judge_ghost(ad, rq, now);
		}
		as_st(s)->nr_queued++;
	}
	elv_sort_add(&d->sort, rq);
	elv_fifo_insert_sorted(&d->fifo, rq);
	d->nr_queued++;
	d->next_rq = as_choose(d->last_sector, rq, d->next_rq);
	if (as_waiting(ad) && (why = as_can_break(q, ad, rq, now)) != 0)
		as_antic_stop(q, ad, now, why);
}

/* The fast add's own part of linking @rq into @d, ending in the tree's insertion. */
static void as_link_fast(struct as_dir *d, struct elv_request *rq)
{
	elv_list_add_tail(&d->fifo, elv_rq_fifo(rq));
	d->nr_queued++;
	d->next_rq = as_choose(d->last_sector, rq, d->next_rq);
	elv_sort_add(&d->sort, rq);
}

/*
 * The common case inline: no wait in progress, no exited stream to judge, a new arrival
 * (youngest in its FIFO), a plain history update. The link goes last, so that it and the
 * tree's insertion are tail calls.
 */
static void as_add(struct elv_queue *q, struct elv_request *rq, uint64_t now)
{
	struct as_data *ad = as_of(q);
	struct as_dir *d = &ad->dir[elv_rq_dir(rq)];
	struct elv_stream *s = rq->stream;
	struct elv_list *tail = d->fifo.prev;

	if (!AS_FAST || as_waiting(ad) || ad->ghost ||
	    (tail != &d->fifo && elv_rq_seq_cmp(elv_list_rq(tail), rq) > 0)) {
		as_add_slow(q, rq, now);
		return;
	}
	if (s) {
		if (elv_rq_time(rq) == now && elv_rq_is_sync(rq) &&
		    !as_update_iohist_fast(q, s, rq, now)) {
			as_add_slow(q, rq, now);
			return;
		}
		as_st(s)->nr_queued++;
	}
	as_link_fast(d, rq);
}

/* The rest of taking @rq out (its tree link is gone already). */
static void as_unlink(struct as_dir *d, struct elv_request *rq)
{
	elv_list_del(elv_rq_fifo(rq));
	d->nr_queued--;
	if (rq->stream)
		as_st(rq->stream)->nr_queued--;
}

static void as_remove(struct elv_queue *q, struct elv_request *rq)
{
	struct as_dir *d = &as_of(q)->dir[elv_rq_dir(rq)];

	if (d->next_rq == rq)
		(void)as_take_next(d, rq);
	else
		elv_sort_del(&d->sort, rq);
	as_unlink(d, rq);
}

static void as_merged(struct elv_queue *q, struct elv_request *rq, enum elv_merge_kind kind,
		      struct elv_request *next)
{
	struct as_dir *d = &as_of(q)->dir[elv_rq_dir(rq)];

	if (kind == ELV_MERGE_FRONT) {
		/* The start moved: re-key, and let it compete for the next slot again. */
		elv_sort_del(&d->sort, rq);
		elv_sort_add(&d->sort, rq);
		d->next_rq = as_choose(d->last_sector, rq, d->next_rq);
	} else if (kind == ELV_MERGE_REQ && next) {
		/* The survivor keeps the older deadline and FIFO place. */
		elv_fifo_inherit(rq, next);
	}
}

/* A queued request of @rq's op that starts where @rq ends (front and request merges). */
static struct elv_request *as_find_follower(struct elv_queue *q, const struct elv_request *next)
{
	struct as_dir *d = &as_of(q)->dir[elv_rq_dir(next)];
	struct elv_request *rq;
	uint64_t sector = elv_rq_end(next);
	unsigned n = ELV_SAME_SECTOR_SCAN;

	/* Writes, discards and flushes share a tree: skip same-sector requests of another op. */
	for (rq = elv_sort_find(&d->sort, sector); rq && rq->sector == sector && n;
	     rq = elv_sort_next(rq), n--)
		if (rq->op == next->op)
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

/* Hand @rq (of direction @dir) to the device: remember the head, who to anticipate, and the
 * next candidate. */
static void as_move_to_dispatch(struct as_data *ad, struct elv_request *rq, int dir)
{
	struct as_dir *d = &ad->dir[dir];

	/* No wait is in progress: forced dispatches end it first, others wait with it. */
	ELV_ASSERT(!as_waiting(ad));
	ad->antic_status = AS_ANTIC_OFF;
	d->last_sector = elv_rq_end(rq);
	if (dir == ELV_DIR_READ) {
		ad->antic_stream = rq->stream;
	} else {
		ad->antic_stream = NULL;
		if (ad->current_write_count > 0)
			ad->current_write_count--;
	}
	ad->ioc_finished = 0;
	(void)as_take_next(d, rq);
	as_unlink(d, rq);
}

/*
 * One dispatch decision. Returns the request, or NULL with *wait set when anticipation should
 * begin, or NULL alone when nothing may go now (empty, waiting, or draining a batch).
 */
static struct elv_request *as_select(struct elv_queue *q, struct as_data *ad, uint64_t now,
				     int force, int *wait)
{
	int reads = ad->dir[ELV_DIR_READ].nr_queued > 0;
	int writes = ad->dir[ELV_DIR_WRITE].nr_queued > 0;
	int dir;
	struct elv_request *rq, *expired = NULL;

	*wait = 0;
	/* The old batch left without completing (requeued, then cancelled or drained). */
	if ((ad->batch_flags & AS_CHANGED_BATCH) && as_busy(q) == 0)
		as_start_batch_clock(ad, now);
	dir = ad->batch_dir;
	/* A write batch with nothing competing cannot be timed meaningfully. */
	if (dir == ELV_DIR_WRITE && !reads && (ad->current_write_count == 0 || !writes))
		ad->batch_flags |= AS_WB_IDLED;
	if (!reads && !writes)
		return NULL;
	if (!force && (as_waiting(ad) || (ad->batch_flags & AS_CHANGED_BATCH)))
		return NULL;

	if (!(reads && writes && as_batch_expired(ad, now))) {
		/* The batch goes on, unless a read is overdue or the last reader is awaited. */
		rq = ad->dir[dir].next_rq;
		if (dir == ELV_DIR_READ && ad->antic_expire > 0 &&
		    !(expired = as_fifo_expired(ad, ELV_DIR_READ, now)) && !force &&
		    ad->antic_stream && ad->antic_status != AS_ANTIC_FINISHED &&
		    !as_can_break(q, ad, rq, now)) {
			*wait = 1;
			return NULL;
		}
		if (expired)
			rq = expired;
		else if (rq && !writes)
			/* With no writes waiting the read batch never runs out. */
			ad->batch_expires = now + (uint64_t)ad->batch_expire[ELV_DIR_READ];
		if (rq)
			goto dispatch;
	}
	dir = as_new_batch(ad, reads, writes, now);
	rq = as_fifo_head(ad, dir);

dispatch:
	if (!expired && (expired = as_fifo_expired(ad, dir, now)) != NULL)
		rq = expired;
	if (ad->batch_flags & AS_CHANGED_BATCH) {
		/* Nothing of the new direction goes while the old batch is on the device. */
		if (as_busy(q) && !force)
			return NULL;
		as_start_batch_clock(ad, now);
	}
	if (expired)
		elv_note_expired(q, rq, now);
	as_move_to_dispatch(ad, rq, dir);
	return rq;
}

/* The dispatch decision in general. */
static struct elv_request *as_dispatch_slow(struct elv_queue *q, struct as_data *ad,
							uint64_t now, int force)
{
	struct elv_request *rq;
	int wait;

	as_tick(q, ad, now);
	if (force || (ad->antic_status == AS_ANTIC_WAIT_REQ && as_awaited_gone(q, ad)))
		as_antic_stop(q, ad, now, AS_STAT_BREAKS);
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

/* The end of a fast dispatch: @rq of batch direction @d goes to the device. */
static inline struct elv_request *as_dispatch_go(struct as_data *ad, struct as_dir *d,
							   struct elv_request *rq)
{
	d->last_sector = elv_rq_end(rq);
	ad->ioc_finished = 0;
	as_unlink(d, rq);
	return as_take_next(d, rq);
}

/* A fast dispatch in a read batch that goes on. */
static inline struct elv_request *as_dispatch_read(struct as_data *ad,
							     struct as_dir *d,
							     struct elv_request *rq, uint64_t now)
{
	/* With no writes waiting the read batch never runs out. */
	if (!ad->dir[ELV_DIR_WRITE].nr_queued)
		ad->batch_expires = now + (uint64_t)ad->batch_expire[ELV_DIR_READ];
	ad->antic_stream = rq->stream;
	return as_dispatch_go(ad, d, rq);
}

/*
 * The fast dispatch when the last reader has nothing queued: the full anticipation test. It
 * changes nothing when it says wait (the general path then finds things as they were), and
 * may learn from a cooperator's request when it says go.
 */
static struct elv_request *as_dispatch_antic(struct elv_queue *q, struct as_data *ad,
						     struct as_dir *d, struct elv_request *rq,
						     uint64_t now)
{
	if (!as_can_break_slow(q, ad, rq, now))
		return as_dispatch_slow(q, ad, now, 0);
	return as_dispatch_read(ad, d, rq, now);
}

/*
 * The common case, decided inline: no wait in progress or ending, no batch change, the batch
 * goes on, its FIFO is not due for a look, and the wait for the last reader (if any) would
 * not begin. Anything else goes to the general path, which finds things as they were: this
 * one only skips the steps that would do nothing.
 */
static struct elv_request *as_dispatch(struct elv_queue *q, uint64_t now, int force)
{
	struct as_data *ad = as_of(q);
	struct as_dir *d = &ad->dir[ad->batch_dir];
	struct elv_request *rq = d->next_rq;
	struct elv_stream *s;

	if (!AS_FAST || force || ad->antic_status != AS_ANTIC_OFF ||
	    (ad->batch_flags & AS_CHANGED_BATCH) || !rq ||
	    now - d->last_check_fifo >= (uint64_t)ad->expire[ad->batch_dir])
		return as_dispatch_slow(q, ad, now, force);
	if (ad->batch_dir == ELV_DIR_READ) {
		if (ad->dir[ELV_DIR_WRITE].nr_queued && as_batch_expired(ad, now))
			return as_dispatch_slow(q, ad, now, force);
		/* The anticipation test last, since it may learn from @rq. */
		s = ad->antic_stream;
		if (ad->antic_expire > 0 && s && rq->stream != s && as_st(s)->nr_queued == 0)
			return as_dispatch_antic(q, ad, d, rq, now);
		return as_dispatch_read(ad, d, rq, now);
	}
	if (ad->dir[ELV_DIR_READ].nr_queued) {
		if (as_batch_expired(ad, now))
			return as_dispatch_slow(q, ad, now, force);
	} else if (ad->current_write_count == 0) {
		/* A write batch with nothing competing cannot be timed meaningfully. */
		ad->batch_flags |= AS_WB_IDLED;
	}
	ad->antic_stream = NULL;
	if (ad->current_write_count > 0)
		ad->current_write_count--;
	return as_dispatch_go(ad, d, rq);
}

/* What a completion tells about its stream. */
static inline void as_complete_stream(struct elv_queue *q, struct as_data *ad,
						const struct elv_request *rq, uint64_t now)
{
	struct elv_stream *s = rq->stream;

	if (!s)
		return;
	if (elv_rq_is_sync(rq)) {
		as_st(s)->flags |= AS_ST_RUNNING;
		as_st(s)->last_end = now;
	}
	if (s == ad->antic_stream) {
		ad->antic_start = now;
		ad->ioc_finished = 1;
		if (ad->antic_status == AS_ANTIC_WAIT_REQ)
			as_wait_next(q, ad, now);
	}
}

/* A completion in general. */
static void as_complete_slow(struct elv_queue *q, struct as_data *ad,
				     const struct elv_request *rq, uint64_t now)
{
	as_tick(q, ad, now);
	if (ad->batch_flags & (AS_CHANGED_BATCH | AS_NEW_BATCH))
		as_complete_batch(q, ad, rq, now);
	as_complete_stream(q, ad, rq, now);
}

/* The common case inline: no window to time out, no batch change. */
static void as_complete(struct elv_queue *q, struct elv_request *rq, uint64_t now)
{
	struct as_data *ad = as_of(q);

	if (AS_FAST && ad->antic_status != AS_ANTIC_WAIT_NEXT &&
	    !(ad->batch_flags & (AS_CHANGED_BATCH | AS_NEW_BATCH)))
		as_complete_stream(q, ad, rq, now);
	else
		as_complete_slow(q, ad, rq, now);
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
	if (ad->antic_status != AS_ANTIC_WAIT_NEXT ||
	    ad->dir[ELV_DIR_READ].nr_queued + ad->dir[ELV_DIR_WRITE].nr_queued == 0)
		return ELV_TIME_NEVER;
	return elv_time_event(as_window_end(ad));
}

static void as_stream_init(struct elv_queue *q, struct elv_stream *s, uint64_t now)
{
	(void)q;
	(void)now;
	*as_st(s) = (struct as_stream){ 0 };
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
	as_note_gone(ad, s);
	as_antic_stop(q, ad, now, AS_STAT_EXITS);
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
	if (t->offset == offsetof(struct as_data, antic_expire) && ad->antic_expire == 0) {
		/* No clock here: the idle period is closed where it began. */
		as_antic_stop(q, ad, elv_idle_since(q), AS_STAT_BREAKS);
	}
}

static void as_stats(const struct elv_queue *q, uint64_t *vals)
{
	const struct as_data *ad = as_of(q);
	unsigned i;

	for (i = 0; i < AS_STAT_WBATCH_COUNT; i++)
		vals[i] = ad->stat[i];
	vals[AS_STAT_WBATCH_COUNT] = (uint64_t)ad->write_batch_count;
	vals[AS_STAT_EXIT_PROB] = ad->exit_prob;
	vals[AS_STAT_EXIT_NO_COOP] = ad->exit_no_coop;
	vals[AS_STAT_NEW_TTIME] = ad->new_ttime_total / 256u;
	vals[AS_STAT_NEW_SEEK] = ad->new_seek_total / 256u;
}

/* ---- invariants ---------------------------------------------------------------------- */

/* A request the policy holds: queued, in the tree and FIFO of its direction @dir. */
static AS_SHARED int as_check_rq(const struct elv_request *rq, int dir)
{
	return elv_rq_state(rq) != ELV_RQ_QUEUED || elv_rq_dir(rq) != dir;
}

/*
 * Per direction: the tree is sound; tree and FIFO hold the same nr_queued requests of that
 * direction, all queued, the FIFO in arrival order; next_rq is among them (NULL only when
 * there are none). Per stream: its queued count is within what it holds, the queued counts
 * add up to the requests that carry a stream, its averages' weight is sane. Anticipation: a
 * known state; only this policy idles, and only while waiting for the next request; every
 * wait begun has ended but the one in progress; a wait for the read on the device has a
 * stream and no completion yet; idling after a completion has either; the awaited stream is
 * ours. Batches and estimates in range.
 */
static int as_check(const struct elv_queue *q)
{
	const struct as_data *ad = as_of(q);
	uint64_t ended = 0;
	int waiting = as_waiting(ad), status = ad->antic_status, dir, i;
	uint32_t total = 0, with_stream = 0;
	const struct elv_list *l;
	const struct elv_stream *s;

	for (dir = 0; dir < 2; dir++) {
		const struct as_dir *d = &ad->dir[dir];
		const struct elv_request *rq, *prev = NULL;
		uint32_t n = 0, nt = 0;
		int found = 0;

		if (elv_rb_check(&d->sort))
			return ELV_EINVAL;
		for (l = d->fifo.next; l != &d->fifo; l = l->next, n++) {
			rq = elv_list_rq(l);
			if (l->next->prev != l || as_check_rq(rq, dir) ||
			    (prev && elv_rq_seq_cmp(prev, rq) > 0))
				return ELV_EINVAL;
			with_stream += rq->stream != NULL;
			prev = rq;
		}
		for (rq = elv_sort_first(&d->sort); rq; rq = elv_sort_next(rq), nt++) {
			if (as_check_rq(rq, dir))
				return ELV_EINVAL;
			found |= rq == d->next_rq;
		}
		if (n != d->nr_queued || nt != n || found != (n != 0) || (!n && d->next_rq))
			return ELV_EINVAL;
		total += n;
	}
	if (total != elv_queue_nr_queued(q))
		return ELV_EINVAL;
	for (s = elv_queue_stream_next(q, NULL); s; s = elv_queue_stream_next(q, s)) {
		const struct as_stream *as = as_st(s);

		if (as->nr_queued > elv_stream_nr_rq(s) || as->samples > 256u)
			return ELV_EINVAL;
		with_stream -= as->nr_queued;
	}
	for (i = AS_STAT_HITS; i <= AS_STAT_EXITS; i++)
		ended += ad->stat[i];
	if (with_stream || status > AS_ANTIC_FINISHED ||
	    (elv_is_idling(q) && status != AS_ANTIC_WAIT_NEXT) ||
	    (waiting && ad->antic_expire == 0) || ended + (uint64_t)waiting != ad->stat[AS_STAT_WAITS] ||
	    (status == AS_ANTIC_WAIT_REQ && (!ad->antic_stream || ad->ioc_finished)) ||
	    (status == AS_ANTIC_WAIT_NEXT && !ad->ioc_finished && ad->antic_stream) ||
	    (ad->antic_stream && elv_stream_queue(ad->antic_stream) != q) ||
	    ad->batch_dir > ELV_DIR_WRITE ||
	    (ad->batch_flags & (AS_CHANGED_BATCH | AS_NEW_BATCH)) ==
		    (AS_CHANGED_BATCH | AS_NEW_BATCH) ||
	    ad->write_batch_count < 1 || ad->current_write_count < 0 || ad->exit_prob > 256u ||
	    ad->exit_no_coop > 256u)
		return ELV_EINVAL;
	return 0;
}

/* ---- the policy ---------------------------------------------------------------------- */

#define AS_MAX_MS 3600000    /* one hour: the longest deadline or batch */
#define AS_MAX_ANTIC_US 1000000 /* one second: far past any useful wait */

#define AS_MS(name, field, def, text)                                                        \
	{ name, "ms", text, def, 0, AS_MAX_MS, (uint32_t)offsetof(struct as_data, field),    \
	  (uint32_t)AS_NSEC_PER_MS }

static const struct elv_tunable as_tunables[] = {
	AS_MS("read_expire", expire[ELV_DIR_READ], 125, "deadline of a read, from its arrival"),
	AS_MS("write_expire", expire[ELV_DIR_WRITE], 250,
	      "deadline of a write, discard or flush, from its arrival"),
	AS_MS("read_batch_expire", batch_expire[ELV_DIR_READ], 500,
	      "length of a read batch while writes wait"),
	AS_MS("write_batch_expire", batch_expire[ELV_DIR_WRITE], AS_WRITE_BATCH_MS,
	      "target length of a write batch (tunes its size)"),
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
	.merged = ELV_POLICY_MERGE(as_merged),
	.find_next = ELV_POLICY_FRONT(as_find_follower),
	.dispatch = as_dispatch,
	.oldest = as_oldest,
	.requeue = as_requeue,
	.complete = as_complete,
	.next_event = as_next_event,
	.stream_init = as_stream_init,
	.stream_exit = as_stream_exit,
	.tunable_changed = ELV_POLICY_TUNED(as_tunable_changed),
	.stats = ELV_POLICY_STATS(as_stats),
	.check = ELV_POLICY_CHECK(as_check),
};
