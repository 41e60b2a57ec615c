/*
 * kyber: a latency controller for fast devices that queue many commands. It never sorts by
 * position. Requests go to one of four domains by operation (reads, writes, discards, and
 * everything else: flushes), each a FIFO; a domain may have at most `depth` requests on the
 * device (its tokens), and the depths of reads, writes and discards follow their completion
 * latencies against per-domain targets.
 *
 * Dispatch serves the current domain for up to its batch size (16 reads, 8 writes, 1 discard,
 * 1 other), then moves round to the next domain with a request and a free token. A domain
 * whose tokens are all out waits for a completion; a dispatch that finds nothing to send
 * returns NULL with requests in flight, never with an idle device.
 *
 * Every completion adds two samples to its domain's histograms: total latency (from arrival)
 * and I/O latency (from dispatch). A histogram has eight buckets a quarter of the target
 * wide; the last takes everything above 1.75 targets. The first completion after a tick arms
 * the next tick 100 ms later. A tick reads the p90 of the I/O latencies: one domain above
 * its target means the device is congested. Then, per domain, the p99 of the total
 * latencies scales the depth by (bucket + 1) / 4, shrinking domains that are fast only under
 * congestion and growing slow ones always. A percentile is read once 500 samples are in,
 * or one second after the domain's first attempt of the window; it empties the histogram.
 * The one-second window is per domain, shared by its two histograms (as in Linux): when a
 * slow domain's I/O percentile is read by the window, its total percentile starts a new one.
 *
 * The library reads no clock: the tick is a time, and the first dispatch or completion at or
 * after it does the tick's work as of that time (not as of its own), so a host that calls
 * late gets the same depths. next_event() reports the tick only while a dispatch is held back by
 * tokens or admission with requests queued, the one case where a tick may let a request go
 * without a completion.
 *
 * Admission (the kernel's scheduler tags): the queue's nr_requests is the pool. The library
 * takes every request, so the pool is applied where it still bites: at most nr_requests
 * requests in flight, async ones at most 75 % of them (at least one), so a flood of async
 * writes leaves sync requests room. Within a domain, sync and async requests keep separate
 * FIFOs, and the older head goes first unless async ones are at their share.
 *
 * A forced dispatch (a drain, or a barrier waiting behind the queue) ignores tokens and
 * admission: the request is charged to its domain all the same.
 *
 * In flight, a request's tree link carries a stamp: its dispatch time and a tag naming this
 * instance, its domain, whether it holds a token and whether it is async. Requests dispatched
 * by an earlier policy (before elv_switch()) carry no such tag and only complete. A request the
 * device gives back returns its token; the core sends it again without asking the policy,
 * and its completion still counts its latency.
 *
 * The state is caller memory. Every hook is O(1) in the number of queued requests, but for
 * re-adding requests older than a FIFO's tail (after a switch or a barrier), which walks
 * back from the tail as noop does.
 */
#include "elevator/policy.h"

#define KY_READ 0
#define KY_WRITE 1
#define KY_DISCARD 2
#define KY_OTHER 3
#define KY_NR_DOMAINS 4
#define KY_NR_LAT 3 /* domains with latency targets and histograms: all but OTHER */

#define KY_TOTAL 0 /* histogram of the latency from arrival */
#define KY_IO 1    /* histogram of the latency from dispatch */

#define KY_BUCKETS 8
#define KY_GOOD_BUCKETS 4 /* buckets 0-3: at or under the target */

#define KY_MSEC 1000000ull
#define KY_TICK_NS (100u * KY_MSEC)       /* a tick at most this long after a completion */
#define KY_WINDOW_NS (1000u * KY_MSEC)    /* a percentile waits at most this long */
#define KY_MIN_SAMPLES 500u               /* ... or for this many samples */
#define KY_DISCARD_LAT_NS (5000u * KY_MSEC) /* fixed target of discards */
#define KY_ASYNC_PERCENT 75u
#define KY_LAT_MAX_NS 3600000000000ll /* one hour */

/* The stamp in an in-flight request's tree link: bytes 0-7 dispatch time, 8-11 the tag. */
#define KY_TAG_TOKEN 4u /* holds a token of its domain */
#define KY_TAG_ASYNC 8u /* counts against the async share */
#define KY_TAG_SHIFT 4  /* the instance's identity sits above these bits */

static const uint16_t ky_max_depth[KY_NR_DOMAINS] = { 256, 128, 64, 16 };
static const uint8_t ky_batch[KY_NR_DOMAINS] = { 16, 8, 1, 1 };

struct ky_domain {
	struct elv_list fifo[2]; /* [0] sync, [1] async; each in arrival order */
	uint32_t depth;          /* tokens */
	uint32_t in_use;         /* tokens held by requests in flight */
	uint32_t stamp;          /* tag of a sync request taking one of its tokens */
	uint32_t max_depth;      /* most tokens */
	/* Latency histograms (not for OTHER). edge[j] = j quarter-targets: a latency L > 0 is
	 * in the last bucket j with L - 1 >= edge[j]. */
	uint64_t edge[KY_BUCKETS];
	uint32_t hist[2][KY_BUCKETS]; /* [KY_TOTAL], [KY_IO] */
	/* 192 bytes in all: indexing is a multiply by 3 and a shift */
	uint64_t pad[2]; /* cppcheck-suppress unusedStructMember */
};

enum ky_stat {
	KY_ST_READ_DEPTH,
	KY_ST_WRITE_DEPTH,
	KY_ST_DISCARD_DEPTH,
	KY_ST_OTHER_DEPTH,
	KY_ST_TICKS,
	KY_ST_RESIZES,
	KY_ST_TOKEN_WAITS,
	KY_ST_ADMIT_WAITS,
	KY_ST_FORCED,
	KY_NR_STATS
};

struct ky_data {
	/* Tunables (ns); the table below points at them. */
	int64_t lat_target[2]; /* read_lat_nsec, write_lat_nsec */

	struct ky_domain dom[KY_NR_DOMAINS];
	uint64_t window_end[KY_NR_LAT]; /* percentile deadline of the domain's window */
	uint8_t window_open[KY_NR_LAT]; /* window_end is set */
	int32_t p99[KY_NR_LAT];         /* remembered p99 bucket, -1 none */
	uint8_t tick_armed;
	uint8_t waiting;  /* the last dispatch held requests back; next_event() reports the tick */
	uint8_t cur;      /* domain being served */
	uint8_t batch_left; /* requests it may still dispatch in this batch */
	/* When the next tick is due, while tick_armed; else a time the hooks' clocks will not
	 * reach for 2^63 ns, so that one comparison tells whether a tick is due. */
	uint64_t tick;
	uint32_t pool;      /* nr_requests: most requests in flight */
	uint32_t async_cap; /* most async requests in flight */
	uint32_t async_in_flight;
	uint32_t tag;     /* this instance's identity, above KY_TAG_SHIFT */
	uint64_t stats[KY_NR_STATS];
};

static const char *const ky_stat_names[KY_NR_STATS] = {
	"read_depth",      /* tokens of reads now */
	"write_depth",     /* tokens of writes now */
	"discard_depth",   /* tokens of discards now */
	"other_depth",     /* tokens of flushes now (fixed) */
	"ticks",           /* depth adjustment ticks run */
	"resizes",         /* depth changes made by ticks */
	"token_waits",     /* dispatch attempts of a domain with requests and no free token */
	"admission_waits", /* dispatches held back by nr_requests or the async share */
	"forced_over",     /* forced dispatches past a domain's tokens or the admission pool */
};

static inline struct ky_data *ky_of(const struct elv_queue *q)
{
	return elv_queue_head(q)->data;
}

static inline unsigned ky_domain_of(const struct elv_request *rq)
{
	return rq->op <= ELV_OP_DISCARD ? rq->op : KY_OTHER;
}

/* Async as the kernel's admission sees it: not a read, not marked sync, FUA or a flush. */
static inline unsigned ky_async(const struct elv_request *rq)
{
	return !elv_rq_is_sync(rq) && rq->op != ELV_OP_FLUSH && !(rq->flags & ELV_RQ_FUA);
}

static inline struct elv_list *ky_fifo_of(struct ky_data *d, const struct elv_request *rq)
{
	return &d->dom[ky_domain_of(rq)].fifo[ky_async(rq)];
}

/* ---- the in-flight stamp ------------------------------------------------------------------ */

/*
 * The link is the library's struct (12 bytes at least, 24 with 64-bit pointers): the stamp
 * is copied in and out as bytes, which needs no assumption on its layout and is allowed
 * whatever the link's type. GCC and Clang make each copy one load or store.
 */
#if defined(__GNUC__)
#define KY_COPY(dst, src, n) __builtin_memcpy(dst, src, n)
#else
static void ky_copy(void *dst, const void *src, unsigned n)
{
	unsigned char *o = dst;
	const unsigned char *i = src;

	while (n--)
		*o++ = *i++;
}
#define KY_COPY(dst, src, n) ky_copy(dst, src, n)
#endif

#if defined(__GNUC__)
#define KY_COLD __attribute__((noinline, cold))
#define KY_NOINLINE __attribute__((noinline))
#define KY_UNLIKELY(x) ((int)__builtin_expect(!!(x), 0))
#else
#define KY_COLD
#define KY_NOINLINE
#define KY_UNLIKELY(x) (x)
#endif

#define KY_STAMP_TAG 8 /* offset of the tag; the dispatch time is at 0 */

static inline void ky_stamp(struct elv_request *rq, uint64_t t, uint32_t tag)
{
	unsigned char *p = (unsigned char *)elv_rq_rb(rq);

	KY_COPY(p, &t, 8);
	KY_COPY(p + KY_STAMP_TAG, &tag, 4);
}

static inline void ky_stamp_set_tag(struct elv_request *rq, uint32_t tag)
{
	KY_COPY((unsigned char *)elv_rq_rb(rq) + KY_STAMP_TAG, &tag, 4);
}

static inline uint32_t ky_stamp_tag(const struct elv_request *rq)
{
	uint32_t tag;

	KY_COPY(&tag, (const unsigned char *)elv_rq_rb(rq) + KY_STAMP_TAG, 4);
	return tag;
}

static inline uint64_t ky_stamp_time(const struct elv_request *rq)
{
	uint64_t t;

	KY_COPY(&t, (const unsigned char *)elv_rq_rb(rq), 8);
	return t;
}

/* ---- latency histograms and the tick ------------------------------------------------------ */

static void ky_set_edges(struct ky_data *d)
{
	unsigned dom, j;

	for (dom = 0; dom < KY_NR_LAT; dom++) {
		uint64_t target = dom == KY_DISCARD ? KY_DISCARD_LAT_NS
						    : (uint64_t)d->lat_target[dom];
		uint64_t width = target / 4 ? target / 4 : 1;

		for (j = 0; j < KY_BUCKETS; j++)
			d->dom[dom].edge[j] = width * j;
	}
}

/*
 * min((lat - 1) / width, 7), and 0 for 0, by comparisons instead of a division: one by one
 * up to the target, where a controlled domain's samples mostly fall, then by halves. For
 * lat > 0, lat - 1 >= edge[j] is lat > edge[j]; 0 is above no edge, so it needs no case.
 */
static inline unsigned ky_bucket(const uint64_t *edge, uint64_t lat)
{
	unsigned b;

	if (lat <= edge[1])
		return 0;
	if (lat <= edge[2])
		return 1;
	if (lat <= edge[3])
		return 2;
	if (lat <= edge[4])
		return 3;
	b = lat > edge[6] ? 6u : 4u;
	return b + (lat > edge[b + 1]);
}

/*
 * The bucket holding percentile @pct of histogram @type of domain @dom, emptying it, or -1
 * while the window still gathers samples (fewer than KY_MIN_SAMPLES and before its end) or
 * has none. The window opens at the first attempt with samples.
 */
static int ky_percentile(struct ky_data *d, unsigned dom, unsigned type, unsigned pct,
			 uint64_t now)
{
	uint32_t *h = d->dom[dom].hist[type];
	uint64_t n = 0, want;
	unsigned b;

	for (b = 0; b < KY_BUCKETS; b++)
		n += h[b];
	if (n == 0)
		return -1;
	if (!d->window_open[dom]) {
		d->window_end[dom] = now + KY_WINDOW_NS;
		d->window_open[dom] = 1;
	}
	if (n < KY_MIN_SAMPLES && elv_time_before(now, d->window_end[dom]))
		return -1;
	d->window_open[dom] = 0;
	want = elv_div64(n * pct + 99, 100); /* no 64-bit divide call on 32-bit cores */
	for (b = 0; b < KY_BUCKETS - 1 && h[b] < want; b++)
		want -= h[b];
	for (n = 0; n < KY_BUCKETS; n++)
		h[n] = 0;
	return (int)b;
}

static void ky_resize(struct ky_data *d, unsigned dom, int p99)
{
	uint32_t depth = (d->dom[dom].depth * (uint32_t)(p99 + 1)) >> 2;

	if (depth < 1)
		depth = 1;
	if (depth > d->dom[dom].max_depth)
		depth = d->dom[dom].max_depth;
	if (depth != d->dom[dom].depth) {
		d->dom[dom].depth = depth;
		d->stats[KY_ST_RESIZES]++;
	}
}


/* The tick due at @t: congestion from the I/O p90s, then each depth from its total p99. */
static KY_COLD void ky_tick_run(struct ky_data *d, uint64_t t)
{
	int bad = 0, p;
	unsigned dom;

	d->tick_armed = 0;
	d->waiting = 0; /* the host calls dispatch again after a tick; it sets this anew */
	d->stats[KY_ST_TICKS]++;
	for (dom = 0; dom < KY_NR_LAT; dom++)
		if (ky_percentile(d, dom, KY_IO, 90, t) >= KY_GOOD_BUCKETS)
			bad = 1;
	for (dom = 0; dom < KY_NR_LAT; dom++) {
		p = ky_percentile(d, dom, KY_TOTAL, 99, t);
		/* A domain may not have enough samples in the window that sees congestion: its
		 * last p99 stands in, once. */
		if (bad) {
			if (p < 0)
				p = d->p99[dom];
			d->p99[dom] = -1;
		} else if (p >= 0) {
			d->p99[dom] = p;
		}
		if (p >= 0 && (bad || p >= KY_GOOD_BUCKETS))
			ky_resize(d, dom, p);
	}
}

/* The tick time passed: run the tick if one is armed, and put the time out of reach. */
static KY_COLD void ky_tick_pass(struct ky_data *d, uint64_t now)
{
	if (d->tick_armed)
		ky_tick_run(d, d->tick);
	d->tick = now + (uint64_t)INT64_MAX;
}

static inline int ky_tick_passed(const struct ky_data *d, uint64_t now)
{
	return KY_UNLIKELY(elv_time_after_eq(now, d->tick));
}

/*
 * dispatch() and complete() first do the work of a tick that fell due, as of its due time:
 * the tick reads only the histograms, which only complete() changes, and it changes only
 * the depths, which only dispatch() reads, so add() and requeue() need not look.
 */
static inline void ky_catch_up(struct ky_data *d, uint64_t now)
{
	if (ky_tick_passed(d, now))
		ky_tick_pass(d, now);
}

/* ---- hooks -------------------------------------------------------------------------------- */

static void ky_init(struct elv_queue *q)
{
	struct ky_data *d = ky_of(q);
	const struct elv_config *cfg = elv_queue_config(q);
	struct elv_stats st;
	uint32_t id;
	unsigned i;

	for (i = 0; i < KY_NR_DOMAINS; i++) {
		elv_list_init(&d->dom[i].fifo[0]);
		elv_list_init(&d->dom[i].fifo[1]);
		d->dom[i].depth = ky_max_depth[i];
		d->dom[i].max_depth = ky_max_depth[i];
	}
	for (i = 0; i < KY_NR_LAT; i++)
		d->p99[i] = -1;
	d->cur = KY_READ;
	d->batch_left = ky_batch[KY_READ];
	d->pool = cfg && cfg->nr_requests ? cfg->nr_requests : 128u;
	d->async_cap = d->pool * KY_ASYNC_PERCENT / 100u;
	if (d->async_cap == 0)
		d->async_cap = 1;
	/* Grows with every add and dispatch, so an earlier instance's stamps do not match (for
	 * 2^28 calls: the identity keeps 28 bits; every bit of them, since one dispatch apart
	 * is enough to tell two instances apart); the state's address tells queues apart.
	 * Never zero, so a cleared stamp never matches. */
	id = elv_stats(q, &st) == 0 ? (uint32_t)(st.added + st.dispatched[0] + st.dispatched[1] +
						  st.requeued)
				     : 0u;
	id ^= (uint32_t)((uintptr_t)d >> 3) * 0x9e3779b1u;
	id &= UINT32_MAX >> KY_TAG_SHIFT;
	d->tag = (id ? id : 1u) << KY_TAG_SHIFT;
	for (i = 0; i < KY_NR_DOMAINS; i++)
		d->dom[i].stamp = d->tag | KY_TAG_TOKEN | i;
	ky_set_edges(d);
}

static void ky_tunable_changed(struct elv_queue *q, const struct elv_tunable *t)
{
	(void)t;
	ky_set_edges(ky_of(q));
}

static KY_COLD void ky_add_unordered(struct elv_list *fifo, struct elv_request *rq)
{
	elv_fifo_insert_sorted(fifo, rq);
}

static void ky_add(struct elv_queue *q, struct elv_request *rq, uint64_t now)
{
	struct ky_data *d = ky_of(q);
	struct elv_list *fifo = rq->op == ELV_OP_READ ? &d->dom[KY_READ].fifo[0] : ky_fifo_of(d, rq);
	struct elv_list *tail = fifo->prev;

	(void)now;
	/* New requests are the youngest; a switch or barrier release may re-add older ones. */
	if (KY_UNLIKELY(tail != fifo && elv_rq_seq_cmp(elv_list_rq(tail), rq) > 0))
		ky_add_unordered(fifo, rq);
	else
		elv_list_insert(elv_rq_fifo(rq), tail, fifo);
}

static void ky_remove(struct elv_queue *q, struct elv_request *rq)
{
	(void)q;
	elv_list_del(elv_rq_fifo(rq));
}

/* Dispatch @rq, the head of FIFO @async of domain @kd: it takes a token and is stamped. */
static inline void ky_take(struct ky_data *d, struct ky_domain *kd, unsigned async,
			   struct elv_request *rq, uint64_t now)
{
	elv_list_del(elv_rq_fifo(rq));
	kd->in_use++;
	d->async_in_flight += async;
	d->batch_left--;
	ky_stamp(rq, now, kd->stamp | (async ? KY_TAG_ASYNC : 0u));
}

/* Take a request from domain @dom if it has one and a token; NULL otherwise. */
static struct elv_request *ky_try(struct ky_data *d, unsigned dom, uint64_t now, int force)
{
	struct ky_domain *kd = &d->dom[dom];
	struct elv_request *s = elv_list_first_rq(&kd->fifo[0]);
	struct elv_request *a = elv_list_first_rq(&kd->fifo[1]);
	unsigned async;

	if (!s && !a)
		return NULL;
	if (kd->in_use >= kd->depth) {
		if (!force) {
			d->stats[KY_ST_TOKEN_WAITS]++;
			return NULL;
		}
		d->stats[KY_ST_FORCED]++;
	}
	async = a && (!s || elv_rq_seq_cmp(a, s) < 0);
	if (async && d->async_in_flight >= d->async_cap) {
		if (force) {
			d->stats[KY_ST_FORCED]++;
		} else if (s) {
			async = 0; /* async at its share: the sync one behind goes first */
		} else {
			d->stats[KY_ST_ADMIT_WAITS]++;
			return NULL;
		}
	}
	ky_take(d, kd, async, async ? a : s, now);
	return async ? a : s;
}

/* 1 when every domain but @dom holds no request. */
static inline int ky_others_empty(const struct ky_data *d, unsigned dom)
{
	unsigned i;

	for (i = 0; i < KY_NR_DOMAINS; i++)
		if (i != dom && (!elv_list_empty(&d->dom[i].fifo[0]) ||
				 !elv_list_empty(&d->dom[i].fifo[1])))
			return 0;
	return 1;
}

/* Every case of dispatch() but a batch going on with sync requests only (ky_dispatch()). */
static KY_NOINLINE struct elv_request *ky_dispatch_slow(struct elv_queue *q, struct ky_data *d,
						       uint64_t now, int force)
{
	struct elv_request *rq;
	unsigned i;

	ky_catch_up(d, now);
	if (elv_queue_head(q)->nr_in_flight >= d->pool) {
		if (!force) {
			d->stats[KY_ST_ADMIT_WAITS]++;
			d->waiting = 1;
			return NULL;
		}
		d->stats[KY_ST_FORCED]++;
	}
	if (d->batch_left) {
		rq = ky_try(d, d->cur, now, force);
		if (rq)
			goto out;
	}
	/* Round the domains once, ending with the one just served; each starts a batch. */
	for (i = 0; i < KY_NR_DOMAINS; i++) {
		d->cur = (uint8_t)((d->cur + 1) & (KY_NR_DOMAINS - 1));
		d->batch_left = ky_batch[d->cur];
		rq = ky_try(d, d->cur, now, force);
		if (rq)
			goto out;
	}
	d->waiting = 1; /* called only with requests queued: all are held back */
	return NULL;
out:
	d->waiting = 0;
	return rq;
}

static struct elv_request *ky_dispatch(struct elv_queue *q, uint64_t now, int force)
{
	struct ky_data *d = ky_of(q);
	unsigned dom = d->cur;
	struct ky_domain *kd = &d->dom[dom];
	struct elv_request *rq = elv_list_first_rq(&kd->fifo[0]);

	/* The common case: no tick due, room in the pool, the batch goes on, a token free and
	 * only sync requests in the domain (no async share to weigh). */
	if (ky_tick_passed(d, now) || !rq || kd->in_use >= kd->depth ||
	    !elv_list_empty(&kd->fifo[1]) || elv_queue_head(q)->nr_in_flight >= d->pool)
		return ky_dispatch_slow(q, d, now, force);
	/* The batch is over, and the round would come back here: every other domain is empty. */
	if (KY_UNLIKELY(!d->batch_left)) {
		if (!ky_others_empty(d, dom))
			return ky_dispatch_slow(q, d, now, force);
		d->batch_left = ky_batch[dom];
	}
	ky_take(d, kd, 0, rq, now);
	d->waiting = 0;
	return rq;
}

/*
 * @rq leaves the device (@done: completed, else given back). A request this instance
 * stamped returns its token; a completed one adds its samples and arms the tick.
 */
static inline void ky_back(struct ky_data *d, struct elv_request *rq, uint64_t now, int done)
{
	uint32_t tag = ky_stamp_tag(rq);
	struct ky_domain *kd = &d->dom[tag & 3u];
	uint64_t io_start;

	if ((tag ^ d->tag) >> KY_TAG_SHIFT)
		return;
	/* The counts guard against a stale stamp of an earlier instance that matched. */
	if (tag & KY_TAG_TOKEN) {
		kd->in_use -= kd->in_use != 0;
		if (tag & KY_TAG_ASYNC)
			d->async_in_flight -= d->async_in_flight != 0;
	}
	io_start = ky_stamp_time(rq);
	if (!done) {
		/* The core sends it again by itself: keep the dispatch time, drop the token. */
		ky_stamp_set_tag(rq, tag & ~(uint32_t)(KY_TAG_TOKEN | KY_TAG_ASYNC));
		return;
	}
	ky_stamp_set_tag(rq, 0);
	if ((tag & 3u) == KY_OTHER)
		return;
	kd->hist[KY_TOTAL][ky_bucket(kd->edge, now - elv_rq_time(rq))]++;
	kd->hist[KY_IO][ky_bucket(kd->edge, now - io_start)]++;
	/* Only ever earlier: an armed tick is due by now + KY_TICK_NS already. */
	if (!d->tick_armed) {
		d->tick = now + KY_TICK_NS;
		d->tick_armed = 1;
	}
}

static KY_NOINLINE void ky_complete_due(struct ky_data *d, struct elv_request *rq, uint64_t now)
{
	ky_catch_up(d, now);
	ky_back(d, rq, now, 1);
}

static void ky_complete(struct elv_queue *q, struct elv_request *rq, uint64_t now)
{
	struct ky_data *d = ky_of(q);

	if (ky_tick_passed(d, now))
		ky_complete_due(d, rq, now);
	else
		ky_back(d, rq, now, 1);
}

static void ky_requeue(struct elv_queue *q, struct elv_request *rq, uint64_t now)
{
	ky_back(ky_of(q), rq, now, 0);
}

static uint64_t ky_next_event(const struct elv_queue *q)
{
	const struct ky_data *d = ky_of(q);

	/* Nothing queued (drained, cancelled, or every request still held by a stage in front):
	 * no dispatch can be held back, and a past tick would name a time with nothing to do. */
	return d->tick_armed && d->waiting && elv_queue_head(q)->nr_queued ?
		       elv_time_event(d->tick) : ELV_TIME_NEVER;
}

static struct elv_request *ky_oldest(struct elv_queue *q)
{
	struct ky_data *d = ky_of(q);
	struct elv_request *best = NULL, *rq;
	unsigned i;

	for (i = 0; i < 2 * KY_NR_DOMAINS; i++) {
		rq = elv_list_first_rq(&d->dom[i >> 1].fifo[i & 1]);
		if (rq && (!best || elv_rq_seq_cmp(rq, best) < 0))
			best = rq;
	}
	return best;
}

/*
 * A queued request of operation @op starting at @sector: Kyber keeps no sector order, so
 * only the youngest request of each FIFO of the domain is looked at (a stream written
 * backwards, or two requests that met), as noop does. Being this cheap, it spares the core
 * the filter it keeps for find_next() lookups.
 */
/* The youngest request of @fifo if it starts at @sector (the core then applies its merge
 * rules, as for every candidate). */
static inline struct elv_request *ky_tail_at(const struct elv_list *fifo, uint64_t sector)
{
	struct elv_request *last = elv_list_rq(fifo->prev);

	return fifo->prev != fifo && last->sector == sector ? last : NULL;
}

static struct elv_request *ky_find_start(struct elv_queue *q, uint64_t sector, uint8_t op)
{
	struct ky_data *d = ky_of(q);
	struct ky_domain *kd;
	struct elv_request *rq;

	/* A domain holds one operation; reads have no async FIFO. */
	if (op == ELV_OP_READ)
		return ky_tail_at(&d->dom[KY_READ].fifo[0], sector);
	kd = &d->dom[op <= ELV_OP_DISCARD ? op : KY_OTHER];
	rq = ky_tail_at(&kd->fifo[0], sector);
	return rq ? rq : ky_tail_at(&kd->fifo[1], sector);
}

static void ky_merged(struct elv_queue *q, struct elv_request *rq, enum elv_merge_kind kind,
		      struct elv_request *next)
{
	struct ky_data *d = ky_of(q);
	struct elv_list *fifo;

	/* The survivor takes the older request's place in line. */
	if (kind != ELV_MERGE_REQ || !next || elv_rq_seq_cmp(next, rq) >= 0)
		return;
	fifo = ky_fifo_of(d, rq);
	if (ky_fifo_of(d, next) == fifo) {
		elv_fifo_inherit(rq, next);
		return;
	}
	elv_list_del(elv_rq_fifo(rq));
	elv_rq_inherit_arrival(rq, next);
	elv_fifo_insert_sorted(fifo, rq);
}

static void ky_stats(const struct elv_queue *q, uint64_t *vals)
{
	const struct ky_data *d = ky_of(q);
	unsigned i;

	for (i = 0; i < KY_NR_STATS; i++)
		vals[i] = d->stats[i];
	for (i = 0; i < KY_NR_DOMAINS; i++)
		vals[KY_ST_READ_DEPTH + i] = d->dom[i].depth;
}

/* ---- invariants ------------------------------------------------------------------------ */

/* One FIFO: queued requests of this domain and kind, in arrival order; returns the count, or
 * -1 on a violation. */
static int64_t ky_check_fifo(const struct elv_list *fifo, unsigned dom, unsigned async)
{
	const struct elv_list *l;
	const struct elv_request *prev = NULL;
	int64_t n = 0;

	for (l = fifo->next; l != fifo; l = l->next) {
		const struct elv_request *rq = elv_list_rq(l);

		if (elv_rq_state(rq) != ELV_RQ_QUEUED || ky_domain_of(rq) != dom ||
		    ky_async(rq) != async || (prev && elv_rq_seq_cmp(prev, rq) >= 0))
			return -1;
		prev = rq;
		n++;
	}
	return n;
}

static int ky_check(const struct elv_queue *q)
{
	const struct ky_data *d = ky_of(q);
	const struct elv_policy *p = elv_queue_policy(q);
	uint32_t tokens = 0, total = 0;
	unsigned i;

	if (d->cur >= KY_NR_DOMAINS || d->batch_left > ky_batch[d->cur] || d->pool == 0 ||
	    d->async_cap == 0 || d->async_cap > d->pool)
		return ELV_EINVAL;
	for (i = 0; i < p->nr_tunables; i++) {
		const struct elv_tunable *t = &p->tunables[i];
		int64_t v = elv_tunable_raw(d, t);

		if (v < t->min * (int64_t)t->scale || v > t->max * (int64_t)t->scale)
			return ELV_EINVAL;
	}
	for (i = 0; i < KY_NR_DOMAINS; i++) {
		const struct ky_domain *kd = &d->dom[i];
		int64_t s = ky_check_fifo(&kd->fifo[0], i, 0);
		int64_t a = ky_check_fifo(&kd->fifo[1], i, 1);

		if (s < 0 || a < 0 || kd->max_depth != ky_max_depth[i] || kd->depth < 1 ||
		    kd->depth > kd->max_depth)
			return ELV_EINVAL;
		total += (uint32_t)(s + a);
		tokens += kd->in_use;
	}
	for (i = 0; i < KY_NR_LAT; i++)
		if (d->p99[i] < -1 || d->p99[i] >= KY_BUCKETS)
			return ELV_EINVAL;
	/* Tokens and the async share are held only by requests on the device. */
	if (tokens > elv_queue_nr_in_flight(q) || d->async_in_flight > tokens)
		return ELV_EINVAL;
	return total == elv_queue_nr_queued(q) ? 0 : ELV_EINVAL;
}

/* ---- the policy -------------------------------------------------------------------------- */

static const struct elv_tunable ky_tunables[] = {
	{ "read_lat_nsec", "ns", "target latency of reads; sets the read depth", 2000000, 1,
	  KY_LAT_MAX_NS, (uint32_t)offsetof(struct ky_data, lat_target[KY_READ]), 1 },
	{ "write_lat_nsec", "ns", "target latency of writes; sets the write depth", 10000000, 1,
	  KY_LAT_MAX_NS, (uint32_t)offsetof(struct ky_data, lat_target[KY_WRITE]), 1 },
};

const struct elv_policy elv_policy_kyber = {
	.abi = ELV_POLICY_ABI,
	.struct_size = sizeof(struct elv_policy),
	.name = "kyber",
	.desc = "per-operation token depths scaled from latency percentiles; for fast devices",
	.data_size = sizeof(struct ky_data),
	.tunables = ky_tunables,
	.nr_tunables = sizeof(ky_tunables) / sizeof(ky_tunables[0]),
	.stat_names = ky_stat_names,
	.nr_stats = KY_NR_STATS,
	.init = ky_init,
	.add = ky_add,
	.remove = ky_remove,
	.merged = ELV_POLICY_MERGE(ky_merged),
	.find_start = ELV_POLICY_FRONT(ky_find_start),
	.dispatch = ky_dispatch,
	.oldest = ky_oldest,
	.requeue = ky_requeue,
	.complete = ky_complete,
	.next_event = ky_next_event,
	.tunable_changed = ELV_POLICY_TUNED(ky_tunable_changed),
	.stats = ELV_POLICY_STATS(ky_stats),
	.check = ELV_POLICY_CHECK(ky_check),
};
