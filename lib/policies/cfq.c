/*
 * cfq: completely fair queueing, modelled on the mature 2.6/3.x Linux scheduler.
 *
 * Every stream owns a sync queue (kept in its private area); async work is pooled in queues
 * shared per priority class and level. Queues take turns at the device in time slices whose
 * length follows their priority. Busy queues wait on service trees, one per class (RT, BE)
 * and workload type (async, sync-noidle, sync) plus one for the IDLE class, keyed by the time
 * they should next run. The single (root) group serves one class/type workload for a share
 * of target_latency, then picks the workload whose leftmost queue is most overdue.
 *
 * A sync queue that runs dry is kept for slice_idle in the hope that its stream's next,
 * nearby request arrives (the host gets nothing meanwhile and elv_next_event() tells it when
 * to come back). Think time and seekiness decide whether that pays off.
 *
 * The IDLE class is served only once no RT or BE request has completed for CFQ_IDLE_GRACE
 * (as in the 2.6.2x scheduler), so it never slips in between two requests of a busy stream.
 *
 * Cooperating streams (interleaved readers of one region) are served back to back: when the
 * active sync queue runs dry and another sync queue's next request starts near the head, that
 * queue goes next instead of idling (the 2.6.30-2.6.32 behaviour; queues are not merged).
 *
 * Not modelled: cgroups (there is one group), merging cooperating queues, NCQ depth probing
 * (the device traits give the depth), request allocation limits (may_queue).
 */
#include <stddef.h>
#include <stdint.h>

#include "elevator/policy.h"

/* The epoch that tells an earlier instance's in-flight requests (after elv_switch()) from
 * this one's comes from the core's counters. */
#if defined(ELV_NO_STATS) && !defined(ELV_NO_SWITCH)
#error "cfq needs the core's counters to survive elv_switch(): define ELV_NO_SWITCH with ELV_NO_STATS"
#endif

#define CFQ_MS 1000000LL
#define CFQ_IDLE_DELAY (200 * CFQ_MS) /* IDLE-class queues queue up this far behind */
#define CFQ_IDLE_GRACE (100 * CFQ_MS) /* IDLE class waits this long after RT/BE work */
#define CFQ_MIN_TT (2 * CFQ_MS)       /* shortest workload slice */
#define CFQ_FRONT_OFFSET (1000 * CFQ_MS) /* preempting queue is keyed this far ahead */
#define CFQ_SLICE_SCALE 5
#define CFQ_SEEK_THR 800ULL      /* sectors: farther than this counts as a seek */
#define CFQ_CLOSE_THR 8192ULL    /* sectors: "close" to the head for preemption */
#define CFQ_SECT_THR_NONROT 64u  /* sectors: smaller requests count as seeky on flash */
#define CFQ_PAGE_SECTORS 8u      /* a request larger than this ends an idle wait at once */
#define CFQ_DEEP_QUEUED 4u
#define CFQ_LEVELS 8u
#define CFQ_NR_ST 7u                       /* service trees */
#define CFQ_NR_ASYNC (2u * CFQ_LEVELS + 1u) /* shared async queues */

enum { CFQ_RT = 0, CFQ_BE = 1, CFQ_IDLE = 2 };             /* class index */
enum { CFQ_ASYNC = 0, CFQ_SYNC_NOIDLE = 1, CFQ_SYNC = 2 };  /* workload type */
enum { CFQ_IDLE_AUTO = 0, CFQ_IDLE_ALWAYS = 1, CFQ_IDLE_NEVER = 2 }; /* idle_mode */

enum cfqq_flags {
	CFQQ_ON_RR = 1u << 0,         /* busy: on a service tree */
	CFQQ_WAIT_REQUEST = 1u << 1,  /* idle timer armed for this queue */
	CFQQ_MUST_DISPATCH = 1u << 2, /* a request arrived while idling: serve it */
	CFQQ_FIFO_EXPIRE = 1u << 3,   /* FIFO already looked at this slice */
	CFQQ_IDLE_WINDOW = 1u << 4,   /* worth idling for (think time, seekiness) */
	CFQQ_SLICE_NEW = 1u << 5,     /* slice starts at the first completion */
	CFQQ_SYNC = 1u << 6,          /* a stream's sync queue */
	CFQQ_DEEP = 1u << 7,          /* has had CFQ_DEEP_QUEUED requests queued */
	CFQQ_WAIT_BUSY = 1u << 8,     /* slice stretched to wait for one more request */
	CFQQ_HAS_POS = 1u << 9,       /* last_request_pos is meaningful */
	CFQQ_POS_DIRTY = 1u << 10     /* on the position trees' dirty list */
};

enum cfq_stat {
	CFQ_ST_SLICES,
	CFQ_ST_IDLE_WAITS,
	CFQ_ST_IDLE_HITS,
	CFQ_ST_IDLE_TIMEOUTS,
	CFQ_ST_PREEMPTIONS,
	CFQ_ST_FIFO_EXPIRED,
	CFQ_ST_ASYNC_BUDGET,
	CFQ_ST_WORKLOAD_SWITCHES,
	CFQ_ST_FORCED,
	CFQ_ST_WAIT_BUSY,
	CFQ_ST_COOP,
	CFQ_NR_STATS
};

/*
 * Think time: decaying average of the gap between a completion and the next request. Only
 * avg.total and avg.samples are kept up to date; the mean is worked out when it is read
 * (cfq_ttime_mean()), as most of the averages are sampled far more often than read.
 */
struct cfq_ttime {
	struct elv_avg avg;
	uint64_t last_end;
};

/* A service tree; its index in cfq_data.st is cls * 3 + type (the IDLE class has one). */
struct cfq_st {
	struct elv_rb_root rb;  /* queues by rb_key */
	uint32_t count;
	struct cfq_ttime ttime; /* think time of the tree (service-tree idling) */
};

/* Small, often-used members first: short load and store encodings on Thumb-2. */
struct cfq_queue {
	struct elv_rb_node st_node;   /* link in its service tree */
	uint16_t flags;
	uint8_t cls;
	uint8_t level;
	uint32_t queued;
	uint32_t dispatched;          /* in flight, requeued ones included */
	uint32_t slice_dispatch;
	uint32_t prio_pending;        /* queued metadata requests */
	uint32_t seek_history;        /* one bit per request: 1 for a seek */
	struct elv_request *next_rq;  /* where the head would go next within this queue */
	struct cfq_st *st;            /* tree it is on, NULL when not busy */
	struct elv_stream *stream;    /* owner of a sync queue, NULL for shared async queues */
	struct elv_rb_root sort_list; /* queued requests by sector */
	struct elv_list fifo;         /* queued requests by arrival */
	uint64_t rb_key;
	uint64_t slice_start;
	uint64_t slice_end;
	int64_t slice_resid;          /* unused (positive) or overrun slice carried to the key */
	uint64_t last_request_pos;
};

/* Filing in a position tree: only streams' (sync) queues are filed, so it is per stream. */
struct cfq_pos {
	struct elv_rb_node node;    /* link in a position tree */
	struct elv_rb_root *root;   /* the tree the queue belongs in, or NULL */
	struct elv_rb_root *linked; /* the tree it is linked in (differs while dirty) */
	struct cfq_stream *next;    /* next on the dirty list */
	uint64_t key;               /* sector of the queue's next request */
	uint64_t seq;               /* filing order: ties on the key go to the earlier */
};

/* What CFQ keeps in a stream's private area. */
struct cfq_stream {
	uint32_t async_held; /* async requests of this stream held (queued or in flight) */
	uint8_t async_prio;  /* priority its async requests were filed under */
	struct cfq_queue sq;
	struct cfq_ttime ttime;
	struct cfq_pos pos;
};

_Static_assert(sizeof(struct cfq_stream) <= ELV_STREAM_PRIV_BYTES,
	       "cfq stream state must fit in the stream's private area");

/* Small, often-used members first (short encodings on Thumb-2), the big arrays last. */
struct cfq_data {
	struct cfq_queue *active;
	uint8_t serving_class;
	uint8_t serving_type;
	uint8_t clock_set;
	uint8_t quiet;   /* clock known, no timer armed: cfq_tick() has nothing to do */
	uint8_t idle_ok; /* idling allowed at all (idle_mode and the device) */
	uint8_t nonrot;  /* the device does not seek (its traits, copied at init) */
	uint8_t pad[2];
	uint32_t busy_queues;
	uint32_t busy_sync_queues;
	uint32_t rq_queued;
	uint32_t rq_in_flight[2]; /* [0] async queues, [1] sync queues */
	uint32_t busy_avg[2];     /* sticky average of busy RT / BE queues */
	struct cfq_stream *pos_dirty; /* streams whose position-tree link is out of date */
	uint64_t idle_end; /* idle timer, ELV_TIME_NEVER when not armed */
	uint64_t grace_end; /* IDLE class held back until then, or ELV_TIME_NEVER */
	uint64_t last_position;
	uint64_t workload_expires;
	uint64_t last_delayed_sync;
	uint64_t last_end_busy; /* last completion of an RT or BE request */
	uint64_t epoch; /* tells our in-flight stamps from those of an earlier instance */
	uint64_t pos_seq; /* next position-tree filing number */
	uint64_t ttime_cap[2]; /* think-time sample cap for slice_idle, group_idle */

	/* tunables (internal units: ns, requests, KiB) */
	int64_t quantum;
	int64_t fifo_expire_sync;
	int64_t fifo_expire_async;
	int64_t back_seek_max;
	int64_t back_seek_penalty;
	int64_t slice_sync;
	int64_t slice_async;
	int64_t slice_async_rq;
	int64_t slice_idle;
	int64_t group_idle;
	int64_t low_latency;
	int64_t target_latency;
	int64_t idle_mode;

	struct cfq_ttime grp_ttime;
	uint64_t stat[CFQ_NR_STATS];
	struct cfq_st st[CFQ_NR_ST]; /* RT and BE by workload type, then IDLE: scan order */
	struct elv_rb_root pos_tree[CFQ_LEVELS]; /* sync queues by next request, per level */
	struct cfq_queue async_q[CFQ_NR_ASYNC]; /* RT and BE by level, then IDLE */
};

/* ---- small helpers ------------------------------------------------------------------- */

/*
 * Hot helpers with several callers are inlined into each when optimising for speed: that
 * saves 2% of the instructions per request (tools/elvbench/profile.sh, cfq 1024 64 random:
 * 1013.8 with plain inline). Optimising for size, helpers with several callers stay one
 * shared copy each (smaller code on Cortex-M3). Neither changes what the code does.
 */
#if defined(__OPTIMIZE_SIZE__) && defined(__GNUC__)
#define CFQ_HOT inline
#define CFQ_SHARED __attribute__((noinline))
#define CFQ_SHARED_HOT __attribute__((noinline))
#elif defined(__GNUC__)
#define CFQ_HOT inline __attribute__((always_inline))
#define CFQ_SHARED
#define CFQ_SHARED_HOT CFQ_HOT
#else
#define CFQ_HOT inline
#define CFQ_SHARED
#define CFQ_SHARED_HOT
#endif

/*
 * A tunable whose whole range (see cfq_tunables) fits 32 bits, read as such: the same value,
 * with shorter code on 32-bit cores.
 */
#define CFQ_SMALL(cd, f) ((uint32_t)(cd)->f)

static struct cfq_data *cfq_data(const struct elv_queue *q)
{
	return elv_queue_head(q)->data;
}

static struct cfq_stream *cfq_stream(struct elv_stream *s)
{
	return elv_stream_priv(s);
}

static int cfq_before(uint64_t a, uint64_t b)
{
	return elv_time_before(a, b);
}

static CFQ_SHARED int64_t cfq_left(uint64_t end, uint64_t now)
{
	return (int64_t)(end - now);
}

static int64_t cfq_max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

static int64_t cfq_min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

static CFQ_SHARED void cfq_count(struct cfq_data *cd, unsigned stat)
{
	cd->stat[stat]++;
}

/* a * b / c for non-negative values; falls back to microseconds if the product overflows. */
static int64_t cfq_muldiv(int64_t a, int64_t b, int64_t c)
{
	if (c <= 0 || a <= 0 || b <= 0)
		return 0;
	/* elv_div64: no 64-bit division helper call on 32-bit cores */
	if ((uint64_t)a <= elv_div64(INT64_MAX, (uint64_t)b))
		return (int64_t)elv_div64((uint64_t)(a * b), (uint64_t)c);
	if (c >= 1000)
		return cfq_muldiv((int64_t)elv_div64((uint64_t)a, 1000),
				  b, (int64_t)elv_div64((uint64_t)c, 1000));
	return INT64_MAX;
}

static int cfqq_sync(const struct cfq_queue *cq)
{
	return (cq->flags & CFQQ_SYNC) != 0;
}

static int cfqq_seeky(const struct cfq_queue *cq)
{
	uint32_t x = cq->seek_history;
	unsigned i;

	/* more than 32 / 8 seeks among the last 32 requests: clear four set bits, look for more */
	for (i = 0; i < 32 / 8 && x; i++)
		x &= x - 1;
	return x != 0;
}

static unsigned cfqq_type(const struct cfq_queue *cq)
{
	if (!cfqq_sync(cq))
		return CFQ_ASYNC;
	return (cq->flags & CFQQ_IDLE_WINDOW) ? CFQ_SYNC : CFQ_SYNC_NOIDLE;
}

static CFQ_SHARED struct cfq_st *cfq_st_for(struct cfq_data *cd, unsigned cls, unsigned type)
{
	return &cd->st[cls * 3 + (cls == CFQ_IDLE ? 0 : type)];
}

static unsigned cfq_st_idx(const struct cfq_data *cd, const struct cfq_st *st)
{
	return (unsigned)(st - cd->st);
}

static struct cfq_queue *cfq_st_queue(const struct elv_rb_node *n)
{
	return n ? elv_container_of(n, struct cfq_queue, st_node) : NULL;
}

static CFQ_SHARED uint32_t cfq_class_busy(const struct cfq_data *cd, unsigned cls)
{
	const struct cfq_st *st = &cd->st[cls * 3];

	return cls == CFQ_IDLE ? st->count : st[0].count + st[1].count + st[2].count;
}

/* Normalised priority: no class means BE level 4 (as elv_rq_prio()), IDLE is level 7. */
static uint8_t cfq_norm_prio(uint8_t p)
{
	unsigned cls = ELV_PRIO_CLASS(p), lvl = ELV_PRIO_LEVEL(p);

	if (cls == ELV_PRIO_NONE)
		return ELV_PRIO(ELV_PRIO_BE, ELV_PRIO_DEFAULT_LEVEL);
	if (cls == ELV_PRIO_IDLE)
		lvl = CFQ_LEVELS - 1;
	return ELV_PRIO(cls, lvl);
}

static uint8_t cfq_prio_cls(uint8_t norm)
{
	switch (ELV_PRIO_CLASS(norm)) {
	case ELV_PRIO_RT:
		return CFQ_RT;
	case ELV_PRIO_IDLE:
		return CFQ_IDLE;
	default:
		return CFQ_BE;
	}
}

static int cfq_idle_allowed(const struct elv_queue *q, const struct cfq_data *cd)
{
	(void)q;
	return cd->idle_ok;
}

/* A think-time sample's cap: twice the idle time, and no more than an average takes. */
static CFQ_SHARED uint64_t cfq_ttime_cap(int64_t idle)
{
	uint64_t cap = (uint64_t)(2 * idle);

	return cap < ELV_AVG_SAMPLE_MAX ? cap : ELV_AVG_SAMPLE_MAX;
}

/* What the hot paths derive from tunables and the device, worked out once: whether idling is
 * allowed at all (idle_mode or the device), whether the device seeks, think-time caps. */
static void cfq_tunable_changed(struct elv_queue *q, const struct elv_tunable *t)
{
	struct cfq_data *cd = cfq_data(q);
	const struct elv_device_traits *dev = &elv_queue_config(q)->dev;
	uint32_t mode = CFQ_SMALL(cd, idle_mode);

	(void)t;
	cd->idle_ok = (uint8_t)(mode == CFQ_IDLE_ALWAYS ||
				(mode != CFQ_IDLE_NEVER &&
				 (dev->rotational || dev->queue_depth <= 1)));
	cd->nonrot = !dev->rotational;
	cd->ttime_cap[0] = cfq_ttime_cap(cd->slice_idle);
	cd->ttime_cap[1] = cfq_ttime_cap(cd->group_idle);
}


/* ---- slices ------------------------------------------------------------------------- */

/* base + base/5 * (4 - level): 180 ms at level 0 down to 40 ms at level 7 for 100 ms. */
static CFQ_SHARED int64_t cfq_prio_slice(const struct cfq_data *cd, int sync, unsigned level)
{
	int64_t base = sync ? cd->slice_sync : cd->slice_async;

	return base + (int64_t)elv_div64((uint64_t)base, CFQ_SLICE_SCALE) * (4 - (int64_t)level);
}

static int64_t cfqq_prio_slice(const struct cfq_data *cd, const struct cfq_queue *cq)
{
	return cfq_prio_slice(cd, cfqq_sync(cq), cq->level);
}

/* Sticky average of busy queues of a class: rises at once, decays slowly. */
static uint32_t cfq_avg_queues(struct cfq_data *cd, int rt)
{
	unsigned i = rt ? CFQ_RT : CFQ_BE;
	uint32_t busy = cfq_class_busy(cd, i), avg = cd->busy_avg[i];
	uint32_t lo = avg < busy ? avg : busy, hi = avg < busy ? busy : avg;

	cd->busy_avg[i] = (3 * hi + lo + 2) / 4;
	return cd->busy_avg[i];
}

/* low_latency: shrink slices so every busy queue of the class runs within target_latency. */
static int64_t cfq_scaled_slice(struct cfq_data *cd, const struct cfq_queue *cq)
{
	int64_t slice = cfqq_prio_slice(cd, cq);
	int64_t iq, expect, low;

	if (!CFQ_SMALL(cd, low_latency))
		return slice;
	iq = cfq_avg_queues(cd, cq->cls == CFQ_RT);
	expect = cd->slice_sync > 0 &&
			 (uint64_t)iq > elv_div64(INT64_MAX, (uint64_t)cd->slice_sync)
		 ? INT64_MAX
		 : cd->slice_sync * iq;
	if (expect <= cd->target_latency)
		return slice;
	low = cfq_min64(slice, cfq_muldiv(2 * cd->slice_idle, slice, cd->slice_sync));
	return cfq_max64(cfq_muldiv(slice, cd->target_latency, expect), low);
}

static int cfq_slice_used(const struct cfq_queue *cq, uint64_t now)
{
	if (cq->flags & CFQQ_SLICE_NEW)
		return 0;
	return !cfq_before(now, cq->slice_end);
}

/* ---- think time and seeks ------------------------------------------------------------- */

/* elv_avg_update(), but the mean, of the gap since the last completion (capped). */
static CFQ_SHARED_HOT void cfq_ttime_sample(struct cfq_ttime *t, uint64_t now, uint64_t cap)
{
	uint64_t gap = now - t->last_end;

	if (cfq_before(now, t->last_end))
		gap = 0;
	if (gap > cap)
		gap = cap;
	t->avg.samples = (7u * t->avg.samples + 256u) / 8u;
	t->avg.total = (7u * t->avg.total + 256u * gap) / 8u;
}

/* The mean elv_avg_update() would have stored; read only once the average is valid. */
static CFQ_SHARED uint64_t cfq_ttime_mean(const struct cfq_ttime *t)
{
	return elv_div64(t->avg.total + 128u, t->avg.samples);
}

static CFQ_SHARED int cfq_ttime_big(const struct cfq_data *cd, const struct cfq_ttime *t, int group)
{
	int64_t lim = group ? cd->group_idle : cd->slice_idle;

	if (!elv_avg_valid(&t->avg))
		return 0;
	return cfq_ttime_mean(t) > (uint64_t)lim;
}

static void cfq_update_seek(const struct cfq_data *cd, struct cfq_queue *cq,
			    const struct elv_request *rq)
{
	uint64_t d = 0;
	uint32_t bit;

	if (cq->flags & CFQQ_HAS_POS)
		d = rq->sector > cq->last_request_pos ? rq->sector - cq->last_request_pos
						      : cq->last_request_pos - rq->sector;
	if (cd->nonrot)
		bit = rq->nr_sectors < CFQ_SECT_THR_NONROT;
	else
		bit = d > CFQ_SEEK_THR;
	cq->seek_history = (cq->seek_history << 1) | bit;
}

/* Sync queues idle while their stream thinks briefly and reads near where it was. */
static CFQ_SHARED void cfq_update_idle_window(struct cfq_data *cd, struct cfq_queue *cq)
{
	const struct cfq_stream *cs;
	int enable;

	if (!cq->stream || cq->cls == CFQ_IDLE)
		return;
	cs = cfq_stream(cq->stream);
	enable = (cq->flags & CFQQ_IDLE_WINDOW) != 0;
	if (cq->queued >= CFQ_DEEP_QUEUED)
		cq->flags |= CFQQ_DEEP;
	if (!cd->slice_idle || (!(cq->flags & CFQQ_DEEP) && cfqq_seeky(cq)))
		enable = 0;
	else if (elv_avg_valid(&cs->ttime.avg))
		enable = cfq_ttime_mean(&cs->ttime) <= (uint64_t)cd->slice_idle;
	if (enable)
		cq->flags |= CFQQ_IDLE_WINDOW;
	else
		cq->flags &= (uint16_t)~CFQQ_IDLE_WINDOW;
}

/* ---- cooperating queues ------------------------------------------------------------- */

/* The stream owning a sync queue. */
static struct cfq_stream *cfq_owner(struct cfq_queue *cq)
{
	return elv_container_of(cq, struct cfq_stream, sq);
}

static struct cfq_stream *cfq_pos_stream(const struct elv_rb_node *n)
{
	return elv_container_of(n, struct cfq_stream, pos.node);
}

/*
 * Position trees hold sync queues by (next request's sector, filing order), and are only
 * looked at when a non-seeky active queue runs dry. So they are brought up to date lazily:
 * a queue whose next request changed gets its new key and filing number (pos.root, pos.key,
 * pos.seq) and its stream goes on a dirty list; the trees are fixed up from that list just
 * before a lookup. Filing numbers order equal keys, so the trees come out as if kept eagerly.
 */
static void cfq_pos_link(struct cfq_stream *cs)
{
	struct cfq_pos *p = &cs->pos;
	struct elv_rb_node **link = &p->root->root, *parent = NULL;
	const struct cfq_pos *o;
	int leftmost = 1;

	while (*link) {
		parent = *link;
		o = &cfq_pos_stream(parent)->pos;
		if (p->key < o->key || (p->key == o->key && p->seq < o->seq)) {
			link = &parent->left;
		} else {
			link = &parent->right;
			leftmost = 0;
		}
	}
	elv_rb_insert(p->root, &p->node, parent, link, leftmost);
	p->linked = p->root;
}

/* Unlink every dirty stream first: linked ones may carry keys newer than their place. */
static void cfq_pos_flush(struct cfq_data *cd)
{
	struct cfq_stream *cs;

	for (cs = cd->pos_dirty; cs; cs = cs->pos.next) {
		if (cs->pos.linked)
			elv_rb_erase(cs->pos.linked, &cs->pos.node);
		cs->pos.linked = NULL;
	}
	for (cs = cd->pos_dirty; cs; cs = cs->pos.next) {
		cs->sq.flags &= (uint16_t)~CFQQ_POS_DIRTY;
		if (cs->pos.root)
			cfq_pos_link(cs);
	}
	cd->pos_dirty = NULL;
}

/* File a sync queue in its level's position tree under its next request's sector. */
static CFQ_HOT void cfq_pos_sync(struct cfq_data *cd, struct cfq_queue *cq)
{
	struct elv_rb_root *root = NULL;
	struct cfq_stream *cs;

	if (!cfqq_sync(cq))
		return;
	cs = cfq_owner(cq);
	if (cq->next_rq && cq->cls != CFQ_IDLE)
		root = &cd->pos_tree[cq->level];
	if (cs->pos.root == root && (!root || cs->pos.key == cq->next_rq->sector))
		return;
	cs->pos.root = root;
	if (root) {
		cs->pos.key = cq->next_rq->sector;
		cs->pos.seq = cd->pos_seq++;
	}
	if (cq->flags & CFQQ_POS_DIRTY)
		return;
	cq->flags |= CFQQ_POS_DIRTY;
	cs->pos.next = cd->pos_dirty;
	cd->pos_dirty = cs;
}

/* The queue whose next request starts nearest to @sector, if within CFQ_CLOSE_THR. */
static struct cfq_queue *cfq_pos_closest(const struct elv_rb_root *root, uint64_t sector)
{
	const struct elv_rb_node *n = root->root;
	struct cfq_stream *ceil = NULL, *floor = NULL, *o;

	while (n) {
		o = cfq_pos_stream(n);
		if (o->pos.key >= sector) {
			ceil = o;
			n = n->left;
		} else {
			floor = o;
			n = n->right;
		}
	}
	if (ceil && (!floor || ceil->pos.key - sector <= sector - floor->pos.key))
		return ceil->pos.key - sector <= CFQ_CLOSE_THR ? &ceil->sq : NULL;
	return floor && sector - floor->pos.key <= CFQ_CLOSE_THR ? &floor->sq : NULL;
}

/*
 * Another sync queue of the same level and RT-ness whose next request is close to the head:
 * its stream reads where @cur's has just been, so serving it beats idling for @cur.
 */
static struct cfq_queue *cfq_close_cooperator(struct cfq_data *cd, const struct cfq_queue *cur)
{
	struct cfq_queue *cq;

	if (!cfqq_sync(cur) || cur->cls == CFQ_IDLE || cfqq_seeky(cur) || cd->busy_queues < 2)
		return NULL;
	cfq_pos_flush(cd);
	cq = cfq_pos_closest(&cd->pos_tree[cur->level], cd->last_position);
	if (!cq || cq == cur || cfqq_seeky(cq) || (cq->cls == CFQ_RT) != (cur->cls == CFQ_RT))
		return NULL;
	return cq;
}

/* ---- service trees ------------------------------------------------------------------ */

static struct cfq_queue *cfq_st_last(const struct cfq_st *st)
{
	struct elv_rb_node *n = st->rb.root;

	while (n && n->right)
		n = n->right;
	return cfq_st_queue(n);
}

/* A stream's new priority takes effect when its queue is next filed, never mid-slice. */
static void cfq_refresh_prio(struct cfq_queue *cq)
{
	uint8_t p = cfq_norm_prio(cq->stream->ioprio);
	uint8_t cls = cfq_prio_cls(p), lvl = (uint8_t)ELV_PRIO_LEVEL(p);

	if (cls == cq->cls && lvl == cq->level)
		return;
	if (cls == CFQ_IDLE)
		cq->flags &= (uint16_t)~CFQQ_IDLE_WINDOW;
	else if (cq->cls == CFQ_IDLE)
		cq->flags |= CFQQ_IDLE_WINDOW;
	cq->cls = cls;
	cq->level = lvl;
}

/* Lower priorities are filed further in the future; a leftover slice files earlier. */
static int64_t cfq_slice_offset(const struct cfq_data *cd, const struct cfq_queue *cq)
{
	int64_t others = cd->busy_queues ? (int64_t)cd->busy_queues - 1 : 0;

	return others * (cfq_prio_slice(cd, 1, 0) - cfqq_prio_slice(cd, cq));
}

static void cfq_st_erase(struct cfq_queue *cq)
{
	elv_rb_erase(&cq->st->rb, &cq->st_node);
	cq->st->count--;
	cq->st = NULL;
}

static void cfq_st_insert(struct cfq_st *st, struct cfq_queue *cq)
{
	struct elv_rb_node **link = &st->rb.root, *parent = NULL;
	int leftmost = 1;

	while (*link) {
		parent = *link;
		if (cfq_before(cq->rb_key, cfq_st_queue(parent)->rb_key)) {
			link = &parent->left;
		} else {
			link = &parent->right;
			leftmost = 0;
		}
	}
	elv_rb_insert(&st->rb, &cq->st_node, parent, link, leftmost);
	st->count++;
	cq->st = st;
}

static void cfq_service_tree_add(struct cfq_data *cd, struct cfq_queue *cq, int add_front,
				 uint64_t now)
{
	struct cfq_st *st;
	struct cfq_queue *o;
	uint64_t key;

	if (cq->stream && cq != cd->active) {
		cfq_refresh_prio(cq);
		cfq_pos_sync(cd, cq);
	}
	st = cfq_st_for(cd, cq->cls, cfqq_type(cq));
	key = now;
	if (cq->cls != CFQ_IDLE && !add_front) {
		key += (uint64_t)cfq_slice_offset(cd, cq) - (uint64_t)cq->slice_resid;
		cq->slice_resid = 0;
	} else {
		/* IDLE: behind the last queue; to the front: ahead of the first */
		o = cq->cls == CFQ_IDLE ? cfq_st_last(st) : cfq_st_queue(st->rb.first);
		if (o && (o != cq || cq->cls != CFQ_IDLE))
			key = o->rb_key;
		key += cq->cls == CFQ_IDLE ? (uint64_t)CFQ_IDLE_DELAY
					   : (uint64_t)0 - (uint64_t)CFQ_FRONT_OFFSET;
	}
	if (cq->st) {
		if (key == cq->rb_key && cq->st == st)
			return;
		cfq_st_erase(cq);
	}
	cq->rb_key = key;
	cfq_st_insert(st, cq);
}

static void cfq_add_rr(struct cfq_data *cd, struct cfq_queue *cq, uint64_t now)
{
	cq->flags |= CFQQ_ON_RR;
	cd->busy_queues++;
	if (cfqq_sync(cq))
		cd->busy_sync_queues++;
	cfq_service_tree_add(cd, cq, 0, now);
}

static void cfq_del_rr(struct cfq_data *cd, struct cfq_queue *cq)
{
	cfq_st_erase(cq);
	cq->flags &= (uint16_t)~CFQQ_ON_RR;
	cd->busy_queues--;
	if (cfqq_sync(cq))
		cd->busy_sync_queues--;
}

/* ---- requests within a queue ---------------------------------------------------------- */

/* A request's own class wins; else its stream's, as it was when the stream's async run began. */
static CFQ_SHARED uint8_t cfq_async_prio(const struct elv_request *rq)
{
	const struct cfq_stream *cs;

	if (ELV_PRIO_CLASS(rq->ioprio) != ELV_PRIO_NONE)
		return rq->ioprio;
	if (!rq->stream)
		return 0;
	cs = cfq_stream(rq->stream);
	return cs->async_held ? cs->async_prio : rq->stream->ioprio;
}

static struct cfq_queue *cfq_async_queue(struct cfq_data *cd, uint8_t prio)
{
	uint8_t p = cfq_norm_prio(prio);
	unsigned i = cfq_prio_cls(p) * CFQ_LEVELS + ELV_PRIO_LEVEL(p);

	return &cd->async_q[i < CFQ_NR_ASYNC ? i : CFQ_NR_ASYNC - 1];
}

/* The queue a held request lives in: its stream's sync queue, or a shared async one. */
static inline struct cfq_queue *cfq_rq_queue(struct cfq_data *cd, const struct elv_request *rq)
{
	if (rq->stream && elv_rq_is_sync(rq))
		return &cfq_stream(rq->stream)->sq;
	return cfq_async_queue(cd, cfq_async_prio(rq));
}

/* A stream's async requests are filed by its priority of the moment they started. */
static void cfq_async_hold(struct elv_request *rq)
{
	struct cfq_stream *cs;

	if (!rq->stream || elv_rq_is_sync(rq))
		return;
	cs = cfq_stream(rq->stream);
	if (cs->async_held++ == 0)
		cs->async_prio = rq->stream->ioprio;
}

static void cfq_async_release(const struct elv_request *rq)
{
	struct cfq_stream *cs;

	if (!rq->stream || elv_rq_is_sync(rq))
		return;
	cs = cfq_stream(rq->stream);
	if (cs->async_held)
		cs->async_held--;
}

/* Sync over async, metadata over data, then the cheaper seek from @last. */
static int cfq_rq_rank(const struct elv_request *rq)
{
	return 2 * elv_rq_is_sync(rq) + ((rq->flags & ELV_RQ_META) != 0);
}

static CFQ_HOT struct elv_request *cfq_choose_req(const struct cfq_data *cd,
							   struct elv_request *r1,
							   struct elv_request *r2, uint64_t last)
{
	int rank;

	if (!r1 || r1 == r2)
		return r2;
	if (!r2)
		return r1;
	rank = cfq_rq_rank(r1) - cfq_rq_rank(r2);
	if (rank)
		return rank > 0 ? r1 : r2;
	/* back_seek_max is in KiB: twice as many sectors */
	return elv_seek_pick(r1, r2, last, CFQ_SMALL(cd, back_seek_max) * 2u,
			     CFQ_SMALL(cd, back_seek_penalty));
}

/*
 * Unlink @rq from its queue. If it was the next request, the next one is its neighbour in
 * sector order (the successor wrapping to the lowest sector) cheaper to reach from its start.
 */
static CFQ_HOT void cfq_del_rq(struct cfq_data *cd, struct cfq_queue *cq,
					struct elv_request *rq)
{
	struct elv_request *prev = NULL, *next;
	int advance = cq->next_rq == rq;

	if (advance)
		prev = elv_sort_prev(rq);
	next = elv_sort_del_next(&cq->sort_list, rq);
	if (advance)
		cq->next_rq = cfq_choose_req(cd, next ? next : elv_sort_first(&cq->sort_list), prev,
					     rq->sector);
	elv_list_del(elv_rq_fifo(rq));
	cq->queued--;
	cd->rq_queued--;
	if (rq->flags & ELV_RQ_META)
		cq->prio_pending--;
}

/* ---- idling ------------------------------------------------------------------------ */

/* Call after changing clock_set, idle_end or grace_end. */
static CFQ_SHARED void cfq_timers_changed(struct cfq_data *cd)
{
	cd->quiet = cd->clock_set && (cd->grace_end & cd->idle_end) == ELV_TIME_NEVER;
}

/* Disarm the idle timer (the core's idling state is the caller's business). */
static void cfq_timer_clear(struct cfq_data *cd)
{
	cd->idle_end = ELV_TIME_NEVER;
	cfq_timers_changed(cd);
	if (cd->active)
		cd->active->flags &= (uint16_t)~CFQQ_WAIT_REQUEST;
}

static void cfq_timer_cancel(struct elv_queue *q, struct cfq_data *cd, uint64_t now)
{
	if (cd->idle_end == ELV_TIME_NEVER)
		return;
	cfq_timer_clear(cd);
	elv_idle_stop(q, now);
}

static int cfq_should_idle(const struct elv_queue *q, const struct cfq_data *cd,
			   const struct cfq_queue *cq)
{
	if (!cd->slice_idle || !cfq_idle_allowed(q, cd) || cq->cls == CFQ_IDLE || !cq->st)
		return 0;
	if (cq->flags & CFQQ_IDLE_WINDOW)
		return 1;
	/* service-tree idling: the last sync-noidle queue keeps its tree's turn */
	return cq->st->count == 1 && cfqq_sync(cq) && !cfq_ttime_big(cd, &cq->st->ttime, 0);
}

/* The stream's think time runs past the end of the slice: idling for it would not pay. */
static CFQ_SHARED int cfq_thinks_past_slice(const struct cfq_queue *cq, uint64_t now)
{
	const struct cfq_stream *cs;

	if (!cq->stream)
		return 0;
	cs = cfq_stream(cq->stream);
	return elv_avg_valid(&cs->ttime.avg) &&
	       cfq_left(cq->slice_end, now) < (int64_t)cfq_ttime_mean(&cs->ttime);
}

static void cfq_arm_slice_timer(struct elv_queue *q, struct cfq_data *cd, uint64_t now)
{
	struct cfq_queue *cq = cd->active;
	int group = 0;

	if (!cfq_idle_allowed(q, cd) || !cq->stream)
		return;
	if (!cfq_should_idle(q, cd, cq)) {
		if (!cd->group_idle)
			return;
		group = 1;
	}
	if (cq->dispatched || cfq_thinks_past_slice(cq, now))
		return;
	if (group && (cd->busy_queues > 1 || cfq_ttime_big(cd, &cq->st->ttime, 1)))
		return;
	cq->flags |= CFQQ_WAIT_REQUEST;
	cd->idle_end = elv_time_event(now + (uint64_t)(group ? cd->group_idle : cd->slice_idle));
	cd->quiet = 0;
	cfq_count(cd, CFQ_ST_IDLE_WAITS);
	elv_idle_start(q, now);
}

/* ---- active queue --------------------------------------------------------------------- */

static CFQ_SHARED void cfq_set_active(struct cfq_data *cd, struct cfq_queue *cq)
{
	cq->slice_start = 0;
	cq->slice_end = 0;
	cq->slice_dispatch = 0;
	cq->flags &= (uint16_t)~(CFQQ_WAIT_REQUEST | CFQQ_MUST_DISPATCH | CFQQ_FIFO_EXPIRE);
	cq->flags |= CFQQ_SLICE_NEW;
	cd->active = cq;
	cfq_count(cd, CFQ_ST_SLICES);
}

static void cfq_set_prio_slice(struct cfq_data *cd, struct cfq_queue *cq, uint64_t now)
{
	int64_t slice = cfq_scaled_slice(cd, cq);

	cq->slice_start = now;
	cq->slice_end = now + (uint64_t)slice;
}

/* End the active queue's turn; @timed_out keeps what is left of the slice for its key. */
static void cfq_expire(struct elv_queue *q, struct cfq_data *cd, int timed_out, uint64_t now)
{
	struct cfq_queue *cq = cd->active;

	if (!cq)
		return;
	cfq_timer_cancel(q, cd, now);
	cq->flags &= (uint16_t)~(CFQQ_WAIT_REQUEST | CFQQ_WAIT_BUSY);
	if (timed_out) {
		if (cq->flags & CFQQ_SLICE_NEW)
			cq->slice_resid = cfq_scaled_slice(cd, cq);
		else
			cq->slice_resid = cfq_left(cq->slice_end, now);
	}
	cd->active = NULL;
	if (!(cq->flags & CFQQ_ON_RR))
		return;
	if (!cq->queued)
		cfq_del_rr(cd, cq);
	else
		cfq_service_tree_add(cd, cq, 0, now);
}

/* Which class and workload type to serve, and for how long. */
static void cfq_choose_workload(struct cfq_data *cd, uint64_t now)
{
	unsigned cls, type, t;
	const struct cfq_queue *best = NULL, *o;
	int64_t slice, busy, tmp;

	cls = cfq_class_busy(cd, CFQ_RT) ? CFQ_RT : cfq_class_busy(cd, CFQ_BE) ? CFQ_BE : CFQ_IDLE;
	if (cls == CFQ_IDLE) {
		cd->serving_class = CFQ_IDLE;
		cd->workload_expires = now + 1;
		return;
	}
	if (cd->serving_class == cls && cd->st[cls * 3 + cd->serving_type].count &&
	    cfq_before(now, cd->workload_expires))
		return;
	type = CFQ_SYNC_NOIDLE;
	for (t = 0; t < 3; t++) {
		o = cfq_st_queue(cd->st[cls * 3 + t].rb.first);
		if (o && (!best || cfq_before(o->rb_key, best->rb_key))) {
			best = o;
			type = t;
		}
	}
	if (cd->serving_class != cls || cd->serving_type != type)
		cfq_count(cd, CFQ_ST_WORKLOAD_SWITCHES);
	cd->serving_class = (uint8_t)cls;
	cd->serving_type = (uint8_t)type;

	/* a share of target_latency proportional to the queues of this type */
	busy = cfq_max64(cd->busy_avg[cls], cfq_class_busy(cd, cls));
	slice = cfq_muldiv(cd->target_latency, cd->st[cls * 3 + type].count, busy);
	if (type == CFQ_ASYNC) {
		tmp = cfq_muldiv(cd->target_latency,
				 cd->st[CFQ_RT * 3 + CFQ_ASYNC].count +
					 cd->st[CFQ_BE * 3 + CFQ_ASYNC].count,
				 cd->busy_queues);
		slice = cfq_muldiv(cfq_min64(slice, tmp), cd->slice_async, cd->slice_sync);
	} else {
		slice = cfq_max64(slice, 2 * cd->slice_idle);
	}
	slice = cfq_max64(slice, CFQ_MIN_TT);
	cd->workload_expires = now + (uint64_t)slice;
}

static struct cfq_queue *cfq_get_next_queue(struct cfq_data *cd, uint64_t now)
{
	uint64_t grace;

	if (!cd->rq_queued)
		return NULL;
	cfq_choose_workload(cd, now);
	cd->grace_end = ELV_TIME_NEVER;
	if (cd->serving_class == CFQ_IDLE) {
		grace = cd->last_end_busy + (uint64_t)CFQ_IDLE_GRACE;
		if (cfq_before(now, grace)) {
			cd->grace_end = elv_time_event(grace);
			cd->quiet = 0;
			return NULL;
		}
	}
	cfq_timers_changed(cd);
	return cfq_st_queue(cfq_st_for(cd, cd->serving_class, cd->serving_type)->rb.first);
}

static int cfq_group_should_wait(const struct elv_queue *q, const struct cfq_data *cd)
{
	return cd->group_idle && cfq_idle_allowed(q, cd) && cd->busy_queues == 1 &&
	       cd->rq_in_flight[0] + cd->rq_in_flight[1] &&
	       !cfq_ttime_big(cd, &cd->grp_ttime, 1);
}

/* Keep the active queue, wait for it, or switch to the next one. NULL means wait. */
static struct cfq_queue *cfq_select_queue(struct elv_queue *q, struct cfq_data *cd, uint64_t now)
{
	struct cfq_queue *cq = cd->active, *coop;
	int64_t left;

	if (!cd->rq_queued)
		return NULL;
	if (!cq)
		goto new_queue;
	if ((cq->flags & CFQQ_WAIT_BUSY) && cq->queued)
		goto expire;
	if (cfq_slice_used(cq, now) && !(cq->flags & CFQQ_MUST_DISPATCH)) {
		/* a lone queue waits for its in-flight requests so its stream stays busy */
		if (cd->busy_queues == 1 && !cq->queued && cq->dispatched &&
		    cfq_should_idle(q, cd, cq))
			return NULL;
		goto group_idle;
	}
	if (cq->queued)
		return cq;
	coop = cfq_close_cooperator(cd, cq);
	if (coop) {
		cfq_count(cd, CFQ_ST_COOP);
		cfq_expire(q, cd, 0, now);
		cfq_set_active(cd, coop);
		return coop;
	}
	if (cd->idle_end != ELV_TIME_NEVER)
		return NULL;
	/* a seeky queue with most of its slice left: the device is faster than it thinks */
	left = cfq_left(cq->slice_end, now);
	if (cfqq_seeky(cq) && (cq->flags & CFQQ_IDLE_WINDOW) &&
	    ((cq->flags & CFQQ_SLICE_NEW) || left > cfq_left(cq->slice_end, cq->slice_start) / 2))
		cq->flags &= (uint16_t)~(CFQQ_DEEP | CFQQ_IDLE_WINDOW);
	if (cq->dispatched && cfq_should_idle(q, cd, cq))
		return NULL;
group_idle:
	if (cfq_group_should_wait(q, cd))
		return NULL;
expire:
	cfq_expire(q, cd, 0, now);
new_queue:
	cq = cfq_get_next_queue(cd, now);
	if (cq)
		cfq_set_active(cd, cq);
	return cq;
}

/* Slice nearly over: more requests now would overrun it. */
static int cfq_slice_used_soon(const struct cfq_data *cd, const struct cfq_queue *cq,
			       uint64_t now)
{
	if (cq->flags & CFQQ_SLICE_NEW)
		return 1;
	return cfq_before(cq->slice_end, now + (uint64_t)(cd->slice_idle * cq->dispatched));
}

static CFQ_SHARED int cfq_may_dispatch(const struct elv_queue *q, const struct cfq_data *cd,
			    const struct cfq_queue *cq, uint64_t now)
{
	int64_t max_dispatch, depth;
	int promote;

	/* drain async before sync starts; async waits while sync is in flight */
	if (cd->rq_in_flight[0] && cfq_should_idle(q, cd, cq))
		return 0;
	if (cd->rq_in_flight[1] && !cfqq_sync(cq))
		return 0;
	max_dispatch = cq->cls == CFQ_IDLE ? 1 : cfq_max64(CFQ_SMALL(cd, quantum) / 2, 1);
	if (cq->dispatched >= max_dispatch) {
		if (cq->cls == CFQ_IDLE)
			return 0;
		promote = cfqq_sync(cq) && cd->busy_sync_queues == 1;
		if (cd->busy_queues > 1 && cfq_slice_used_soon(cd, cq, now) && !promote)
			return 0;
		max_dispatch = cd->busy_queues == 1 || promote ? INT64_MAX : CFQ_SMALL(cd, quantum);
	}
	/* low_latency: async depth ramps up with the time since sync I/O was last late */
	if (!cfqq_sync(cq) && CFQ_SMALL(cd, low_latency)) {
		depth = cd->slice_sync ? (int64_t)elv_div64(now - cd->last_delayed_sync,
							     (uint64_t)cd->slice_sync)
				       : max_dispatch;
		if (!depth && !cq->dispatched)
			depth = 1;
		max_dispatch = cfq_min64(max_dispatch, depth);
	}
	return (int64_t)cq->dispatched < max_dispatch;
}

/* At most one FIFO look per slice; an expired head is served out of sector order. */
static struct elv_request *cfq_check_fifo(struct cfq_data *cd, struct cfq_queue *cq,
					  uint64_t now)
{
	int64_t expire = cfqq_sync(cq) ? cd->fifo_expire_sync : cd->fifo_expire_async;

	if (cq->flags & CFQQ_FIFO_EXPIRE)
		return NULL;
	cq->flags |= CFQQ_FIFO_EXPIRE;
	if (!elv_fifo_expired(&cq->fifo, now, (uint64_t)expire))
		return NULL;
	return elv_list_first_rq(&cq->fifo);
}

/*
 * In flight, a request's sort-tree link is free: it is stamped with its queue so that only
 * requests this instance dispatched (and the core did not take back on a requeue) are
 * counted down when they complete.
 */
static void cfq_stamp(const struct cfq_data *cd, struct cfq_queue *cq, struct elv_request *rq)
{
	struct elv_rb_node *n = elv_rq_rb(rq);

	n->parent_color = (uintptr_t)cd->epoch;
	n->left = (struct elv_rb_node *)(void *)cq;
	n->right = (struct elv_rb_node *)(void *)(uintptr_t)cd;
}

/* A request leaves our in-flight count (completed, or taken back by the core). */
static void cfq_rq_gone(struct cfq_data *cd, struct cfq_queue *cq,
				    const struct elv_request *rq)
{
	cq->dispatched--;
	cd->rq_in_flight[cfqq_sync(cq)]--;
	cfq_async_release(rq);
}

/*
 * The queue of a dispatched request. If this instance counts it as in flight (its stamp is
 * ours), it stops counting it and clears the stamp.
 */
static struct cfq_queue *cfq_unstamp(struct cfq_data *cd, struct elv_request *rq)
{
	struct elv_rb_node *n = elv_rq_rb(rq);
	struct cfq_queue *cq = cfq_rq_queue(cd, rq);

	if (n->parent_color == (uintptr_t)cd->epoch && n->left == (void *)cq &&
	    n->right == (const void *)cd && cq->dispatched) {
		n->parent_color = 0;
		n->left = NULL;
		n->right = NULL;
		cfq_rq_gone(cd, cq, rq);
	}
	return cq;
}


static CFQ_HOT void cfq_dispatch_insert(struct cfq_data *cd, struct cfq_queue *cq,
						 struct elv_request *rq)
{
	/* the head moves on from @rq, even when the FIFO chose it */
	cq->next_rq = rq;
	cfq_del_rq(cd, cq, rq);
	cfq_pos_sync(cd, cq);
	cfq_stamp(cd, cq, rq);
	cq->dispatched++;
	cd->rq_in_flight[cfqq_sync(cq)]++;
	cd->last_position = elv_rq_end(rq);
	cq->slice_dispatch++;
	cq->flags &= (uint16_t)~CFQQ_MUST_DISPATCH;
}

static CFQ_SHARED struct cfq_queue *cfq_iter_next(const struct cfq_data *cd,
						 const struct cfq_queue *cq);

static struct elv_request *cfq_forced_dispatch(struct elv_queue *q, struct cfq_data *cd,
					       uint64_t now)
{
	struct cfq_queue *cq = cd->active;
	struct elv_request *rq;

	cfq_timer_cancel(q, cd, now);
	if (cq && !cq->queued) {
		cfq_expire(q, cd, 0, now);
		cq = NULL;
	}
	if (!cq) {
		/* drain order: RT, BE, IDLE; async, sync-noidle, sync */
		cq = cfq_iter_next(cd, NULL);
		if (!cq)
			return NULL;
		cfq_set_active(cd, cq);
	}
	rq = cq->next_rq;
	cfq_dispatch_insert(cd, cq, rq);
	cfq_count(cd, CFQ_ST_FORCED);
	return rq;
}

/* The idle timer went off at cd->idle_end (the host calls in at or after it). */
static void cfq_idle_timer(struct elv_queue *q, struct cfq_data *cd)
{
	uint64_t t = cd->idle_end;
	struct cfq_queue *cq = cd->active;
	int timed_out = 0;

	cfq_timer_cancel(q, cd, t);
	if (!cq || (cq->flags & CFQQ_MUST_DISPATCH))
		return;
	cfq_count(cd, CFQ_ST_IDLE_TIMEOUTS);
	/* slice over: expire; else the stream did not come back: keep the rest of its slice */
	if (!cfq_slice_used(cq, t)) {
		if (!cd->busy_queues || cq->queued)
			return;
		cq->flags &= (uint16_t)~CFQQ_DEEP;
		timed_out = 1;
	}
	cfq_expire(q, cd, timed_out, t);
}

/* Bring the policy up to @now: first-call setup and an idle timer that has gone off. */
static void cfq_tick_slow(struct elv_queue *q, struct cfq_data *cd, uint64_t now)
{
	if (!cd->clock_set) {
		cd->clock_set = 1;
		cd->last_delayed_sync = now - (uint64_t)(1000 * CFQ_MS);
		cd->last_end_busy = now - (uint64_t)CFQ_IDLE_GRACE;
	}
	if (cd->grace_end != ELV_TIME_NEVER && !cfq_before(now, cd->grace_end))
		cd->grace_end = ELV_TIME_NEVER;
	/* elv_drain() ends idling behind our back: the wait is over */
	if (cd->idle_end != ELV_TIME_NEVER && !elv_is_idling(q))
		cfq_timer_clear(cd);
	if (cd->idle_end != ELV_TIME_NEVER && !cfq_before(now, cd->idle_end))
		cfq_idle_timer(q, cd);
	cfq_timers_changed(cd);
}

/* Usually there is nothing to do: no timer armed, clock known. */
static inline void cfq_tick(struct elv_queue *q, struct cfq_data *cd, uint64_t now)
{
	if (!cd->quiet)
		cfq_tick_slow(q, cd, now);
}

/* ---- preemption --------------------------------------------------------------------- */

static int cfq_rq_close(const struct cfq_data *cd, const struct elv_request *rq)
{
	uint64_t p = cd->last_position;
	uint64_t d = rq->sector > p ? rq->sector - p : p - rq->sector;

	return d <= CFQ_CLOSE_THR;
}

static int cfq_should_preempt(const struct elv_queue *q, const struct cfq_data *cd,
			      const struct cfq_queue *nq, const struct elv_request *rq,
			      uint64_t now)
{
	const struct cfq_queue *cq = cd->active;

	if (!cq || nq == cq || nq->cls == CFQ_IDLE)
		return 0;
	if (cq->cls == CFQ_IDLE)
		return 1;
	if (cq->cls == CFQ_RT && nq->cls != CFQ_RT)
		return 0;
	if (cfqq_sync(nq) && !cfqq_sync(cq))
		return 1;
	if (cfq_slice_used(cq, now))
		return 1;
	if (cd->serving_type == CFQ_SYNC_NOIDLE && cfqq_type(nq) == CFQ_SYNC_NOIDLE &&
	    nq->st && nq->st->count == 2 && !cq->queued)
		return 1;
	if ((rq->flags & ELV_RQ_META) && !cq->prio_pending)
		return 1;
	if (nq->cls == CFQ_RT && cq->cls != CFQ_RT)
		return 1;
	if (!cq->queued && !cfq_should_idle(q, cd, cq))
		return 1;
	return (cq->flags & CFQQ_WAIT_REQUEST) && cfq_rq_close(cd, rq);
}

static void cfq_preempt(struct elv_queue *q, struct cfq_data *cd, struct cfq_queue *nq,
			uint64_t now)
{
	unsigned old_type = cfqq_type(cd->active);

	cfq_expire(q, cd, 1, now);
	if (old_type != cfqq_type(nq))
		cd->workload_expires = now;
	cfq_service_tree_add(cd, nq, 1, now);
	nq->slice_end = 0;
	nq->flags |= CFQQ_SLICE_NEW;
	cfq_count(cd, CFQ_ST_PREEMPTIONS);
}

/* Statistics and reactions once @rq is filed in @cq. */
static void cfq_rq_enqueued(struct elv_queue *q, struct cfq_data *cd, struct cfq_queue *cq,
			    struct elv_request *rq, uint64_t now)
{
	if (cq->stream) {
		cfq_ttime_sample(&cfq_stream(cq->stream)->ttime, now, cd->ttime_cap[0]);
		cfq_ttime_sample(&cq->st->ttime, now, cd->ttime_cap[0]);
	}
	cfq_ttime_sample(&cd->grp_ttime, now, cd->ttime_cap[1]);
	cfq_update_seek(cd, cq, rq);
	cfq_update_idle_window(cd, cq);
	cq->last_request_pos = elv_rq_end(rq);
	cq->flags |= CFQQ_HAS_POS;

	if (cq == cd->active) {
		if (!(cq->flags & CFQQ_WAIT_REQUEST))
			return;
		/* the awaited request came: stop idling; a lone small one must go next */
		cfq_count(cd, CFQ_ST_IDLE_HITS);
		cfq_timer_cancel(q, cd, now);
		if (rq->nr_sectors <= CFQ_PAGE_SECTORS && cd->busy_queues == 1)
			cq->flags |= CFQQ_MUST_DISPATCH;
	} else if (cfq_should_preempt(q, cd, cq, rq, now)) {
		cfq_preempt(q, cd, cq, now);
	}
}

/* ---- hooks -------------------------------------------------------------------------- */

static void cfq_init_queue(struct cfq_queue *cq, uint8_t prio, int sync)
{
	uint8_t p = cfq_norm_prio(prio);

	elv_list_init(&cq->fifo);
	cq->cls = cfq_prio_cls(p);
	cq->level = (uint8_t)ELV_PRIO_LEVEL(p);
	if (sync) {
		cq->flags = CFQQ_SYNC;
		if (cq->cls != CFQ_IDLE)
			cq->flags |= CFQQ_IDLE_WINDOW;
	}
}

static void cfq_init(struct elv_queue *q)
{
	struct cfq_data *cd = cfq_data(q);
	struct elv_stats st;
	unsigned i;

	/* RT levels 0-7, BE levels 0-7, then IDLE (level 7, as cfq_norm_prio() has it) */
	for (i = 0; i < CFQ_NR_ASYNC; i++) {
		elv_list_init(&cd->async_q[i].fifo);
		cd->async_q[i].cls = (uint8_t)(i / CFQ_LEVELS);
		cd->async_q[i].level = (uint8_t)(i < CFQ_NR_ASYNC - 1 ? i % CFQ_LEVELS
								     : CFQ_LEVELS - 1);
	}
	cd->idle_end = ELV_TIME_NEVER;
	cd->grace_end = ELV_TIME_NEVER;
	cd->serving_class = CFQ_BE;
	/* grows with every add and dispatch, so an earlier instance's stamps never match */
	if (elv_stats(q, &st) == 0)
		cd->epoch = st.added + st.dispatched[0] + st.dispatched[1] + st.requeued + 1;
	else
		cd->epoch = 1; /* ELV_NO_STATS, hence no elv_switch(): the only instance */
	cd->serving_type = CFQ_SYNC_NOIDLE;
	cfq_tunable_changed(q, NULL);
}

static void cfq_add(struct elv_queue *q, struct elv_request *rq, uint64_t now)
{
	struct cfq_data *cd = cfq_data(q);
	struct cfq_queue *cq;
	struct elv_request *next;

	cfq_tick(q, cd, now);
	cfq_async_hold(rq);
	cq = cfq_rq_queue(cd, rq);
	elv_fifo_insert_sorted(&cq->fifo, rq);
	elv_sort_add(&cq->sort_list, rq);
	cq->queued++;
	cd->rq_queued++;
	if (rq->flags & ELV_RQ_META)
		cq->prio_pending++;
	if (!(cq->flags & CFQQ_ON_RR))
		cfq_add_rr(cd, cq, now);
	next = cfq_choose_req(cd, cq->next_rq, rq, cd->last_position);
	if (next != cq->next_rq) {
		cq->next_rq = next;
		cfq_pos_sync(cd, cq);
	}
	cfq_rq_enqueued(q, cd, cq, rq, now);
}

static void cfq_remove(struct elv_queue *q, struct elv_request *rq)
{
	struct cfq_data *cd = cfq_data(q);
	struct cfq_queue *cq = cfq_rq_queue(cd, rq);

	cfq_del_rq(cd, cq, rq);
	cfq_pos_sync(cd, cq);
	cfq_async_release(rq);
	/* an emptied waiting queue leaves its tree; the active one is dealt with at dispatch */
	if ((cq->flags & CFQQ_ON_RR) && !cq->queued && cq != cd->active)
		cfq_del_rr(cd, cq);
}

static void cfq_merged(struct elv_queue *q, struct elv_request *rq, enum elv_merge_kind kind,
		       struct elv_request *next)
{
	struct cfq_data *cd = cfq_data(q);
	struct cfq_queue *cq = cfq_rq_queue(cd, rq);

	if (kind == ELV_MERGE_FRONT) {
		elv_sort_del(&cq->sort_list, rq);
		elv_sort_add(&cq->sort_list, rq);
		cq->next_rq = cfq_choose_req(cd, cq->next_rq, rq, cd->last_position);
	} else {
		if (kind != ELV_MERGE_REQ || !next || cfq_rq_queue(cd, next) != cq)
			return;
		/* the survivor takes the absorbed request's place in the FIFO if that was older */
		elv_fifo_inherit(rq, next);
		if (cq->next_rq != next)
			return;
		cq->next_rq = rq;
	}
	cfq_pos_sync(cd, cq);
}

/* Busy queues in tree order, the active one included (it stays on its tree). */
static struct cfq_queue *cfq_iter_next(const struct cfq_data *cd,
						 const struct cfq_queue *cq)
{
	unsigned i;
	const struct cfq_st *st;
	struct elv_rb_node *n = cq ? elv_rb_next(&cq->st_node) : NULL;

	if (n)
		return cfq_st_queue(n);
	for (i = cq ? cfq_st_idx(cd, cq->st) + 1u : 0u; i < CFQ_NR_ST; i++) {
		st = &cd->st[i];
		if (st->rb.first)
			return cfq_st_queue(st->rb.first);
	}
	return NULL;
}

static struct elv_request *cfq_find_in(const struct cfq_queue *cq, uint64_t sector, uint8_t op)
{
	struct elv_request *rq;
	unsigned n = ELV_SAME_SECTOR_SCAN;

	for (rq = elv_sort_find(&cq->sort_list, sector); rq && rq->sector == sector && n;
	     rq = elv_sort_next(rq), n--)
		if (rq->op == op)
			return rq;
	return NULL;
}

/*
 * Front and request-to-request merges: a request starting where @rq ends, searched only in
 * the queue @rq is in (or, for a new request, would go to).
 */
static struct elv_request *cfq_find_next(struct elv_queue *q, const struct elv_request *rq)
{
	struct cfq_data *cd = cfq_data(q);

	return cfq_find_in(cfq_rq_queue(cd, rq), elv_rq_end(rq), rq->op);
}

/* Merge only within one queue: a stream's sync requests never join another's. */
static int cfq_allow_merge(const struct elv_queue *q, const struct elv_request *rq,
			   const struct elv_request *next)
{
	struct cfq_data *cd = cfq_data(q);

	return cfq_rq_queue(cd, rq) == cfq_rq_queue(cd, next);
}

static struct elv_request *cfq_dispatch(struct elv_queue *q, uint64_t now, int force)
{
	struct cfq_data *cd = cfq_data(q);
	struct cfq_queue *cq;
	struct elv_request *rq;

	cfq_tick(q, cd, now);
	if (!cd->busy_queues)
		return NULL;
	if (force)
		return cfq_forced_dispatch(q, cd, now);
	cq = cfq_select_queue(q, cd, now);
	if (!cq || !cfq_may_dispatch(q, cd, cq, now))
		return NULL;
	rq = cfq_check_fifo(cd, cq, now);
	if (rq) {
		cfq_count(cd, CFQ_ST_FIFO_EXPIRED);
		elv_note_expired(q, rq, now);
	} else {
		rq = cq->next_rq;
	}
	cfq_dispatch_insert(cd, cq, rq);
	/* async queues get a request budget; IDLE queues one request per turn */
	if (cd->busy_queues > 1 &&
	    ((!cfqq_sync(cq) && cq->slice_dispatch >= 2u * CFQ_SMALL(cd, slice_async_rq) *
							   (CFQ_LEVELS - cq->level)) ||
	     cq->cls == CFQ_IDLE)) {
		cq->slice_end = now + 1;
		if (cq->cls != CFQ_IDLE)
			cfq_count(cd, CFQ_ST_ASYNC_BUDGET);
		cfq_expire(q, cd, 0, now);
	}
	return rq;
}

static struct elv_request *cfq_oldest(struct elv_queue *q)
{
	const struct cfq_data *cd = cfq_data(q);
	const struct cfq_queue *cq;
	struct elv_request *best = NULL, *rq;

	for (cq = cfq_iter_next(cd, NULL); cq; cq = cfq_iter_next(cd, cq)) {
		rq = elv_list_first_rq(&cq->fifo);
		if (rq && (!best || elv_rq_seq_cmp(rq, best) < 0))
			best = rq;
	}
	return best;
}

/*
 * The core keeps a requeued request and hands it out again itself (or returns it to the host
 * on cancel or drain without telling the policy), so it stops counting as in flight here.
 */
static void cfq_requeue(struct elv_queue *q, struct elv_request *rq, uint64_t now)
{
	struct cfq_data *cd = cfq_data(q);

	cfq_tick(q, cd, now);
	cfq_unstamp(cd, rq);
}

/* A lone queue at the end of its slice waits for one more request rather than expiring. */
static int cfq_should_wait_busy(const struct elv_queue *q, const struct cfq_data *cd,
				const struct cfq_queue *cq, uint64_t now)
{
	/* the usual answer first: other queues or requests are waiting */
	if (cd->busy_queues > 1 || cq->queued)
		return 0;
	if (!cfq_idle_allowed(q, cd) || (!cd->slice_idle && !cd->group_idle))
		return 0;
	if (cfq_ttime_big(cd, &cd->grp_ttime, 1))
		return 0;
	if (cfq_slice_used(cq, now) || cfq_thinks_past_slice(cq, now))
		return 1;
	return cfq_left(cq->slice_end, now) <= CFQ_MS;
}

static void cfq_complete(struct elv_queue *q, struct elv_request *rq, uint64_t now)
{
	struct cfq_data *cd = cfq_data(q);
	struct cfq_queue *cq;
	int sync;

	cfq_tick(q, cd, now);
	/* if dispatched before a switch, or again after a requeue, it was not counted here */
	cq = cfq_unstamp(cd, rq);
	sync = cfqq_sync(cq);
	if (cq->cls != CFQ_IDLE)
		cd->last_end_busy = now;
	if (sync) {
		cfq_stream(cq->stream)->ttime.last_end = now;
		(cq->st ? cq->st : cfq_st_for(cd, cq->cls, cfqq_type(cq)))->ttime.last_end = now;
		if (!cfq_before(now, elv_rq_time(rq) + (uint64_t)cd->fifo_expire_sync))
			cd->last_delayed_sync = now;
	}
	cd->grp_ttime.last_end = now;
	if (cq != cd->active)
		return;
	/* the slice starts with the first completion, when the device has settled on it */
	if (cq->flags & CFQQ_SLICE_NEW) {
		cfq_set_prio_slice(cd, cq, now);
		cq->flags &= (uint16_t)~CFQQ_SLICE_NEW;
	}
	if (cfq_should_wait_busy(q, cd, cq, now)) {
		cq->slice_end = now + (uint64_t)(cd->slice_idle ? cd->slice_idle : cd->group_idle);
		cq->flags |= CFQQ_WAIT_BUSY;
		cfq_count(cd, CFQ_ST_WAIT_BUSY);
	}
	if (cfq_slice_used(cq, now) || cq->cls == CFQ_IDLE)
		cfq_expire(q, cd, 1, now);
	else if (sync && !cq->queued && !cfq_close_cooperator(cd, cq))
		cfq_arm_slice_timer(q, cd, now);
}

/*
 * Timers matter only while requests wait: with nothing queued the core does not call
 * dispatch, and an idle wait that ran out is settled (at its own end time) on the next call.
 */
static uint64_t cfq_next_event(const struct elv_queue *q)
{
	const struct cfq_data *cd = cfq_data(q);

	if (!cd->rq_queued)
		return ELV_TIME_NEVER;
	return elv_time_first(cd->idle_end, cd->grace_end);
}

static void cfq_stream_init(struct elv_queue *q, struct elv_stream *s, uint64_t now)
{
	struct cfq_data *cd = cfq_data(q);
	struct cfq_stream *cs = cfq_stream(s);

	cfq_tick(q, cd, now);
	cfq_init_queue(&cs->sq, s->ioprio, 1);
	cs->sq.stream = s;
	cs->ttime.last_end = now;
	cs->async_prio = s->ioprio;
}

static void cfq_stream_exit(struct elv_queue *q, struct elv_stream *s, uint64_t now)
{
	struct cfq_data *cd = cfq_data(q);
	struct cfq_queue *cq = &cfq_stream(s)->sq;

	cfq_tick(q, cd, now);
	if (cd->active == cq)
		cfq_expire(q, cd, 0, now);
	if (cq->flags & CFQQ_ON_RR)
		cfq_del_rr(cd, cq);
	cfq_pos_sync(cd, cq);
	/* its memory goes back to the host: no list or tree may keep it */
	if (cq->flags & CFQQ_POS_DIRTY)
		cfq_pos_flush(cd);
}

static void cfq_stats(const struct elv_queue *q, uint64_t *vals)
{
	const struct cfq_data *cd = cfq_data(q);
	unsigned i;

	for (i = 0; i < CFQ_NR_STATS; i++)
		vals[i] = cd->stat[i];
}

/* ---- invariants --------------------------------------------------------------------- */

#define CFQ_CHECK(cond)                                                                    \
	do {                                                                               \
		if (!(cond))                                                               \
			return ELV_EINVAL;                                                 \
	} while (0)

/*
 * A busy queue found on tree @i: its place, its requests in sector and arrival order, and its
 * position-tree filing. Returns 1 when it should be linked in a position tree now, 0 when not.
 */
static int cfq_check_queue(const struct cfq_data *cd, const struct cfq_queue *cq, unsigned i)
{
	const struct elv_request *rq, *prev = NULL;
	const struct elv_list *l;
	const struct cfq_pos *p;
	uint32_t n = 0, meta = 0;
	int next_seen = 0, want;

	/* the idle window may flip on a tree; the queue moves at its next re-sort */
	CFQ_CHECK(cq->st == &cd->st[i] && (cq->flags & CFQQ_ON_RR) && i / 3 == cq->cls &&
		  (i == CFQ_NR_ST - 1 || (i % 3 == CFQ_ASYNC) == !cfqq_sync(cq)));
	CFQ_CHECK((cq->queued || cq == cd->active) && elv_rb_check(&cq->sort_list) == 0);
	for (rq = elv_sort_first(&cq->sort_list); rq; rq = elv_sort_next(rq)) {
		CFQ_CHECK((!prev || prev->sector <= rq->sector) &&
			  cfq_rq_queue((struct cfq_data *)(uintptr_t)cd, rq) == cq);
		next_seen |= rq == cq->next_rq;
		meta += (rq->flags & ELV_RQ_META) != 0;
		prev = rq;
		n++;
	}
	CFQ_CHECK(n == cq->queued && meta == cq->prio_pending && (n ? next_seen : !cq->next_rq));
	prev = NULL;
	for (l = cq->fifo.next; l != &cq->fifo; l = l->next, n--) {
		rq = elv_list_rq(l);
		CFQ_CHECK(n &&
			  (!prev || !cfq_before(elv_rq_time(rq), elv_rq_time(prev))));
		prev = rq;
	}
	CFQ_CHECK(!n);
	/* filed where its next request says; a dirty one is linked before the next lookup */
	if (!cfqq_sync(cq))
		return 0; /* shared async queues are never filed */
	p = &cfq_owner((struct cfq_queue *)(uintptr_t)cq)->pos;
	want = cq->cls != CFQ_IDLE && cq->next_rq;
	CFQ_CHECK(p->root == (want ? &cd->pos_tree[cq->level] : NULL) &&
		  (!want || p->key == cq->next_rq->sector));
	return want && !(cq->flags & CFQQ_POS_DIRTY);
}

static int cfq_check(const struct elv_queue *q)
{
	const struct cfq_data *cd = cfq_data(q);
	const struct cfq_queue *cq = NULL, *prev;
	const struct cfq_stream *cs;
	const struct elv_rb_node *n;
	uint32_t busy = 0, sync = 0, queued = 0, inflight = 0, filed = 0, cnt;
	unsigned i;
	int r;

	for (i = 0; i < CFQ_NR_ST; i++) {
		CFQ_CHECK(elv_rb_check(&cd->st[i].rb) == 0);
		for (n = cd->st[i].rb.first, prev = NULL, cnt = 0; n; n = elv_rb_next(n), cnt++) {
			cq = cfq_st_queue(n);
			CFQ_CHECK(!prev || !cfq_before(cq->rb_key, prev->rb_key));
			if ((r = cfq_check_queue(cd, cq, i)) < 0)
				return r;
			filed += (uint32_t)r;
			sync += (uint32_t)cfqq_sync(cq);
			queued += cq->queued;
			prev = cq;
		}
		CFQ_CHECK(cnt == cd->st[i].count);
		busy += cnt;
	}
	CFQ_CHECK(busy == cd->busy_queues && sync == cd->busy_sync_queues &&
		  queued == cd->rq_queued);
	/* every clean queue linked in a position tree is one expected there */
	for (i = 0; i < CFQ_LEVELS; i++) {
		CFQ_CHECK(elv_rb_check(&cd->pos_tree[i]) == 0);
		for (n = cd->pos_tree[i].first; n; n = elv_rb_next(n)) {
			cs = cfq_pos_stream(n);
			cq = &cs->sq;
			CFQ_CHECK(cs->pos.linked == &cd->pos_tree[i] && (cq->flags & CFQQ_SYNC));
			if (cq->flags & CFQQ_POS_DIRTY)
				continue;
			CFQ_CHECK(cs->pos.root == cs->pos.linked && cq->level == i &&
				  (cq->flags & CFQQ_ON_RR) && cq->next_rq);
			filed--;
		}
	}
	CFQ_CHECK(filed == 0);
	for (cs = cd->pos_dirty; cs; cs = cs->pos.next)
		CFQ_CHECK(cs->sq.flags & CFQQ_POS_DIRTY);
	for (i = 0; i < CFQ_NR_ASYNC; i++) {
		CFQ_CHECK(cd->async_q[i].st || !cd->async_q[i].queued);
		inflight += cd->async_q[i].dispatched;
	}
	cq = cd->active;
	CFQ_CHECK(inflight == cd->rq_in_flight[0] && (!cq || (cq->flags & CFQQ_ON_RR)));
	CFQ_CHECK((cd->idle_end != ELV_TIME_NEVER) == (cq && (cq->flags & CFQQ_WAIT_REQUEST)));
	CFQ_CHECK(!elv_is_idling(q) || cd->idle_end != ELV_TIME_NEVER);
	CFQ_CHECK(cd->quiet == (cd->clock_set && (cd->grace_end & cd->idle_end) == ELV_TIME_NEVER));
	return 0;
}

/* ---- policy ------------------------------------------------------------------------- */

#define CFQ_OFF(f) ((uint32_t)offsetof(struct cfq_data, f))

static const struct elv_tunable cfq_tunables[] = {
	{"quantum", "requests", "requests a queue may have in flight before it is throttled", 8,
	 1, 1024, CFQ_OFF(quantum), 1},
	{"fifo_expire_sync", "ms", "age at which a sync request is served out of order", 125, 1,
	 10000, CFQ_OFF(fifo_expire_sync), CFQ_MS},
	{"fifo_expire_async", "ms", "age at which an async request is served out of order", 250,
	 1, 10000, CFQ_OFF(fifo_expire_async), CFQ_MS},
	{"back_seek_max", "KiB", "farthest backward seek still taken in sweep order", 16384, 0,
	 1LL << 30, CFQ_OFF(back_seek_max), 1},
	{"back_seek_penalty", "factor", "cost of a backward seek relative to a forward one", 2, 1,
	 1024, CFQ_OFF(back_seek_penalty), 1},
	{"slice_sync", "ms", "base time slice of a sync queue (level 4)", 100, 1, 10000,
	 CFQ_OFF(slice_sync), CFQ_MS},
	{"slice_async", "ms", "base time slice of an async queue (level 4)", 40, 1, 10000,
	 CFQ_OFF(slice_async), CFQ_MS},
	{"slice_async_rq", "requests", "base request budget of an async slice", 2, 1, 1024,
	 CFQ_OFF(slice_async_rq), 1},
	{"slice_idle", "ms", "wait for a sync queue's next request; 0 disables queue idling", 8,
	 0, 1000, CFQ_OFF(slice_idle), CFQ_MS},
	{"group_idle", "ms", "wait for the last busy queue's next request; 0 disables", 8, 0,
	 1000, CFQ_OFF(group_idle), CFQ_MS},
	{"low_latency", "bool", "shrink slices so all queues run within target_latency", 1, 0, 1,
	 CFQ_OFF(low_latency), 1},
	{"target_latency", "ms", "time in which every busy queue should get a turn", 300, 1,
	 10000, CFQ_OFF(target_latency), CFQ_MS},
	{"idle_mode", "mode",
	 "0 idle unless the device is non-rotational with queueing, 1 always, 2 never", 0, 0, 2,
	 CFQ_OFF(idle_mode), 1},
};

static const char *const cfq_stat_names[CFQ_NR_STATS] = {
	"slices",          "idle_waits",        "idle_hits",   "idle_timeouts",
	"preemptions",     "fifo_expired",      "async_budget_expired",
	"workload_switches", "forced_dispatches", "wait_busy",       "coop_switches",
};

const struct elv_policy elv_policy_cfq = {
	.abi = ELV_POLICY_ABI,
	.struct_size = sizeof(struct elv_policy),
	.name = "cfq",
	.desc = "completely fair queueing: per-stream time slices by I/O priority",
	.data_size = sizeof(struct cfq_data),
	.tunables = cfq_tunables,
	.nr_tunables = sizeof(cfq_tunables) / sizeof(cfq_tunables[0]),
	.stat_names = cfq_stat_names,
	.nr_stats = CFQ_NR_STATS,
	.init = cfq_init,
	.tunable_changed = ELV_POLICY_TUNED(cfq_tunable_changed),
	.add = cfq_add,
	.remove = cfq_remove,
	.merged = ELV_POLICY_MERGE(cfq_merged),
	.dispatch = cfq_dispatch,
	.oldest = cfq_oldest,
	.requeue = cfq_requeue,
	.complete = cfq_complete,
	.next_event = cfq_next_event,
	.stream_init = cfq_stream_init,
	.stream_exit = cfq_stream_exit,
	.stats = ELV_POLICY_STATS(cfq_stats),
	.check = ELV_POLICY_CHECK(cfq_check),
	.allow_merge = ELV_POLICY_MERGE(cfq_allow_merge),
	.find_next = ELV_POLICY_FRONT(cfq_find_next),
};
