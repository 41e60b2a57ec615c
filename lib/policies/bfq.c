/*
 * bfq: budget fair queueing, after the Linux 6.x scheduler (the newer of the two kernel
 * snapshots read for it; where the older one differs, the comment says so).
 *
 * Every stream owns a sync queue and an async queue (both in its private area); requests of
 * no stream go to one async queue per priority class of the root. A queue is scheduled as an
 * entity by B-WF2Q+: it gets the device exclusively for a budget of sectors, and among the
 * eligible entities (virtual start <= virtual time) the one with the smallest virtual finish
 * time goes next. Virtual time advances by service / sum of weights, so over time each busy
 * queue is served in proportion to its weight, in sectors. Budgets adapt to how each queue
 * used its last one (budget feedback); a queue that takes too long for its budget is charged
 * the time it held the device instead (seeky streams get time fairness).
 *
 * RT, BE and IDLE classes are served in strict priority (the IDLE class is guaranteed one
 * pick every 200 ms). A sync queue that runs dry is kept in service for slice_idle when that
 * helps throughput or is needed for the weights to hold (the idling decision), and requests
 * of other queues may be injected meanwhile. Interactive and soft real-time streams have
 * their weight multiplied for a while (weight raising), with durations derived from the
 * measured peak rate of the device; queues created in a large burst are never raised.
 *
 * Groups (struct elv_group) are one level below the root: a group is an entity of the root
 * with its own service trees, as a cgroup in Linux.
 *
 * Early queue merging of cooperating streams (1.15) is done on rotational or non-queueing
 * devices only; a merge ends when the shared queue turns seeky or a stream exits or moves.
 * Not modelled: stable merging, multi-actuator devices, the admission depth limits (the core
 * has no request pool), and the out-of-memory queue.
 */
#include <stddef.h>
#include <stdint.h>

#include "elevator/policy.h"

#if defined(ELV_NO_STATS) && !defined(ELV_NO_SWITCH)
#error "bfq needs the core's counters to survive elv_switch(): define ELV_NO_SWITCH with ELV_NO_STATS"
#endif

#define BFQ_US 1000ULL
#define BFQ_MS 1000000ULL
#define BFQ_S 1000000000ULL
#define BFQ_JIFFY BFQ_MS /* one jiffy of the kernel's HZ=1000 */
#define BFQ_LONG_AGO (1ULL << 62) /* "minus infinity": far enough back, still comparable */

#define BFQ_SERVICE_SHIFT 22           /* delta(s, w) = (s << 22) / w */
#define BFQ_DEFAULT_MAX_BUDGET 16384ULL /* sectors, until budgets_assigned reaches 194 */
#define BFQ_STATS_MIN_BUDGETS 194u
#define BFQ_ASYNC_CHARGE 3u
#define BFQ_CL_IDLE_TIMEOUT (200 * BFQ_MS)
#define BFQ_MIN_TT (2 * BFQ_MS)
#define BFQ_SEEK_THR 800ULL
#define BFQ_CLOSE_THR 8192ULL            /* 1.15: cooperating streams are this close */
#define BFQ_COOP_AGE (100 * BFQ_MS)      /* 1.15: only a young queue is merged */
#define BFQ_SECT_THR_NONROT 64u
#define BFQ_SEEKY_BITS 19 /* seeky when more than 19 of the last 32 requests seeked */
#define BFQ_WR_COEFF 30u
#define BFQ_SOFTRT_FACTOR 100u
#define BFQ_WR_RT_MAX_TIME (300 * BFQ_MS)
#define BFQ_WR_MIN_IDLE (2000 * BFQ_MS)
#define BFQ_WR_MIN_INTER_ARR_ASYNC (500 * BFQ_MS)
#define BFQ_WR_MAX_SOFTRT_RATE 7000ULL /* sectors per second */
#define BFQ_WR_MAX_SERVICE 120000ULL    /* sectors of interactive raising */
#define BFQ_WR_MIN_DURATION (3000 * BFQ_MS)
#define BFQ_WR_MAX_DURATION (25000 * BFQ_MS)
#define BFQ_LARGE_BURST 8u
#define BFQ_BURST_INTERVAL (180 * BFQ_MS)
#define BFQ_RATE_SHIFT 16
#define BFQ_RATE_MIN_SAMPLES 32u
#define BFQ_RATE_MIN_INTERVAL (300 * BFQ_MS)
#define BFQ_RATE_REF_INTERVAL BFQ_S
#define BFQ_RATE_MAX (20ULL << BFQ_RATE_SHIFT)
#define BFQ_HW_TAG_THR 3u

enum { BFQ_RT = 0, BFQ_BE = 1, BFQ_IDLE = 2, BFQ_NR_CLASSES = 3 };
enum { BFQ_TREE_NONE = 0, BFQ_TREE_ACTIVE = 1, BFQ_TREE_IDLE = 2 };

/* Why a queue leaves service (1.10). */
enum bfq_reason {
	BFQ_TOO_IDLE,
	BFQ_BUDGET_TIMEOUT,
	BFQ_BUDGET_EXHAUSTED,
	BFQ_NO_MORE_REQUESTS,
	BFQ_PREEMPTED
};

/* Queue flags. */
#define BFQQ_BUSY            (1u << 0) /* counted busy: requests queued, or in service */
#define BFQQ_WAIT_REQUEST    (1u << 1) /* the idle timer runs for it */
#define BFQQ_NON_BLOCKING    (1u << 2) /* expired empty while it could go on: may back-shift */
#define BFQQ_FIFO_EXPIRE     (1u << 3) /* FIFO looked at in this service slot */
#define BFQQ_SHORT_TTIME     (1u << 4) /* thinks briefly between requests */
#define BFQQ_SYNC            (1u << 5) /* a stream's sync queue */
#define BFQQ_IO_BOUND        (1u << 6) /* rarely idle of its own accord */
#define BFQQ_LARGE_BURST     (1u << 7) /* created in a large burst: never raised */
#define BFQQ_JUST_CREATED    (1u << 8) /* no request seen yet */
#define BFQQ_SOFTRT_UPDATE   (1u << 9) /* compute soft_rt_next_start when it drains */
#define BFQQ_IN_WTREE        (1u << 10) /* in the weights multiset */
#define BFQQ_IN_BURST_LIST   (1u << 11) /* on the current burst list */
#define BFQQ_HAS_POS         (1u << 12) /* last_request_pos is meaningful */

enum bfq_stat {
	BFQ_ST_SLICES,
	BFQ_ST_EXP_TOO_IDLE,
	BFQ_ST_EXP_TIMEOUT,
	BFQ_ST_EXP_EXHAUSTED,
	BFQ_ST_EXP_NO_MORE,
	BFQ_ST_EXP_PREEMPTED,
	BFQ_ST_IDLE_WAITS,
	BFQ_ST_INJECTED,
	BFQ_ST_WR_INTERACTIVE,
	BFQ_ST_WR_SOFTRT,
	BFQ_ST_LARGE_BURSTS,
	BFQ_ST_FIFO_EXPIRED,
	BFQ_ST_PEAK_RATE_UPDATES,
	BFQ_NR_STATS
};

struct bfq_sched;

/* The schedulable part of a queue or a group (1.2). Virtual times wrap: compare by sign. */
struct bfq_entity {
	struct elv_rb_node node;   /* in its service tree's active or idle tree */
	uint64_t start;            /* S */
	uint64_t finish;           /* F */
	uint64_t budget;           /* sectors */
	uint64_t service;          /* sectors received in this slot */
	uint32_t weight;           /* orig_weight times the raising coefficient */
	uint32_t orig_weight;
	uint8_t tree;              /* BFQ_TREE_* */
	uint8_t cls;               /* class tree it is counted in */
	uint8_t on_st;             /* weight counted in its tree's wsum */
	uint8_t elig;              /* on the active side: in @elig (1) or @pend (0) */
	struct bfq_sched *sd;      /* the scheduler it is scheduled by (its parent's) */
	struct bfq_sched *child;   /* a group's own scheduler; NULL for a queue */
};

/* One service tree per class of a scheduler (1.2). */
struct bfq_st {
	struct elv_rb_root elig;   /* active and eligible (S <= V once seen so), by F */
	struct elv_rb_root pend;   /* active, not yet seen eligible, by S */
	struct elv_rb_root idle;   /* by F */
	struct bfq_entity *first_idle;
	struct bfq_entity *last_idle;
	uint64_t vtime;            /* V */
	uint64_t wsum;             /* W */
};

/* The scheduler of the root or of one group. */
struct bfq_sched {
	struct bfq_st st[BFQ_NR_CLASSES];
	struct bfq_entity *in_service;
	struct bfq_entity *owner;  /* the group's entity; NULL for the root */
	uint64_t class_idle_last_service;
};

struct bfq_queue;

/* What only a stream's sync queue keeps: think time, injection, waker, burst, soft-RT. */
struct bfq_sync_x {
	struct elv_avg ttime;
	uint64_t last_end_request;
	uint64_t io_start_time;
	uint64_t tot_idle_time;
	uint64_t last_serv_time_ns;  /* injection baseline */
	uint64_t decrease_time;
	uint64_t waker_detection_started;
	uint64_t soft_rt_next_start;
	uint64_t last_idle_bklogged;
	uint64_t service_from_backlogged;
	struct bfq_queue *waker;
	struct bfq_queue *tentative_waker;
	struct elv_list woken;       /* queues this one wakes */
	struct elv_list woken_link;  /* on its waker's woken list */
	struct elv_list burst_link;  /* on the burst list */
	uint32_t inject_limit;
	uint32_t num_waker_detections;
};

struct bfq_queue {
	struct bfq_entity e;
	struct elv_rb_root sort;     /* queued requests by sector */
	struct elv_list fifo;        /* the same, by arrival */
	struct elv_list busy_link;   /* on the device's busy list (injection scan order) */
	struct elv_rb_node wnode;    /* in the weights multiset, keyed by wkey */
	struct elv_request *next_rq;
	struct elv_stream *stream;   /* owner; NULL for the root's anonymous async queues */
	struct bfq_sync_x *x;        /* sync queues only */
	uint32_t flags;
	uint32_t queued;
	uint32_t dispatched;         /* in flight, stamped by this instance */
	uint32_t wkey;
	uint32_t wr_coeff;
	uint32_t seek_history;
	uint64_t max_budget;
	uint64_t budget_timeout;
	uint64_t last_request_pos;
	uint64_t wr_cur_max_time;
	uint64_t last_wr_start_finish;
	uint64_t wr_start_at_switch_to_srt;
	uint64_t service_from_wr;
	uint64_t first_io_time;
};

/* A stream's private area. */
struct bfq_stream {
	struct bfq_queue sync;
	struct bfq_queue async;
	struct bfq_sync_x x;
	struct bfq_stream *host;      /* merged: the stream whose sync queue serves our sync I/O */
	struct bfq_stream *guest;     /* the stream merged into our sync queue */
	const struct bfq_queue *old_host; /* stamp of our requests dispatched by a host; compared only */
	uint32_t host_inflight;       /* those still in flight (counted by our queue after a split) */
};

_Static_assert(sizeof(struct bfq_stream) <= ELV_STREAM_PRIV_BYTES,
	       "bfq stream state must fit in the stream's private area");

/* A group's private area. */
struct bfq_group {
	struct bfq_entity e;
	struct bfq_sched sd;
	struct elv_group *g;
	uint32_t pending; /* requests of its queues queued or in flight */
};

_Static_assert(sizeof(struct bfq_group) <= ELV_GROUP_PRIV_BYTES,
	       "bfq group state must fit in the group's private area");

struct bfq_data {
	struct bfq_sched root;
	struct bfq_queue *in_service;
	struct bfq_queue *last_completed; /* queue of the last completion, for waker detection */
	struct elv_request *waited_rq;    /* injection: the request whose service is timed */
	struct bfq_group *burst_parent;
	uint32_t busy_queues[BFQ_NR_CLASSES];
	uint32_t wr_busy_queues;
	uint32_t queued;
	uint32_t max_rq_in_driver;
	uint32_t burst_size;
	uint32_t num_groups_pending;
	uint32_t peak_rate_samples;
	uint32_t sequential_samples;
	uint32_t budgets_assigned;
	uint8_t nonrot;
	uint8_t hw_tag;
	uint8_t large_burst;
	uint8_t wait_dispatch;
	uint8_t rqs_injected;
	uint8_t clock_set;
	uint8_t strict_was_on;      /* strict_guarantees as last seen by tunable_changed */
	uint8_t pad;
	uint64_t now;               /* latest time seen */
	uint64_t idle_end;          /* idle timer, ELV_TIME_NEVER when not armed */
	uint64_t epoch;             /* tells our in-flight stamps from an earlier instance's */
	uint64_t last_position;     /* where the last dispatched request ended */
	uint64_t in_serv_last_pos;
	uint64_t peak_rate;         /* sectors/us << 16 */
	uint64_t rate_dur_prod;
	uint64_t tot_sectors_dispatched;
	uint64_t first_dispatch;
	uint64_t last_dispatch;
	uint64_t delta_from_first;
	uint64_t last_completion;
	uint64_t last_rq_max_size;
	uint64_t bfq_max_budget;    /* M */
	uint64_t last_budget_start;
	uint64_t last_idling_start;
	uint64_t last_ins_in_burst;
	uint64_t last_empty_occupied_ns;
	struct elv_list busy;       /* busy queues, in the order they became busy */
	struct elv_list burst_list;
	struct elv_rb_root wtree;   /* weights multiset of non-raised busy or in-flight queues */

	/* tunables (internal units: ns, sectors, KiB) */
	int64_t slice_idle;
	int64_t strict_guarantees;
	int64_t low_latency;
	int64_t timeout_sync;
	int64_t user_max_budget;
	int64_t fifo_expire_sync;
	int64_t fifo_expire_async;
	int64_t back_seek_max;
	int64_t back_seek_penalty;
	int64_t queue_merging;

	uint64_t stat[BFQ_NR_STATS];
	struct bfq_queue anon[BFQ_NR_CLASSES]; /* async requests of no stream, by class */
};

/* ---- small helpers ------------------------------------------------------------------- */

static struct bfq_data *bfq_data(const struct elv_queue *q)
{
	return elv_queue_head(q)->data;
}

static struct bfq_stream *bfq_stream(const struct elv_stream *s)
{
	return elv_stream_priv(s);
}

static struct bfq_group *bfq_group(const struct elv_group *g)
{
	return elv_group_priv(g);
}

/* Virtual times and times compare by the sign of their difference. */
static int bfq_gt(uint64_t a, uint64_t b)
{
	return (int64_t)(a - b) > 0;
}

static uint64_t bfq_min64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static uint64_t bfq_max64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

static void bfq_count(struct bfq_data *bd, unsigned stat)
{
	bd->stat[stat]++;
}

static uint64_t bfq_delta(uint64_t service, uint64_t weight)
{
	return elv_div64(service << BFQ_SERVICE_SHIFT, weight ? weight : 1);
}

static struct bfq_queue *bfq_entity_queue(struct bfq_entity *e)
{
	return e->child ? NULL : elv_container_of(e, struct bfq_queue, e);
}

static struct bfq_entity *bfq_node_entity(const struct elv_rb_node *n)
{
	return n ? elv_container_of(n, struct bfq_entity, node) : NULL;
}

static struct bfq_st *bfq_st_of(struct bfq_entity *e)
{
	return &e->sd->st[e->cls];
}

static int bfqq_sync(const struct bfq_queue *bfqq)
{
	return (bfqq->flags & BFQQ_SYNC) != 0;
}

static int bfqq_busy(const struct bfq_queue *bfqq)
{
	return (bfqq->flags & BFQQ_BUSY) != 0;
}

static int bfqq_seeky(const struct bfq_queue *bfqq)
{
	uint32_t v = bfqq->seek_history;
	int n = 0;

	while (v) { /* popcount without a builtin, for every compiler */
		v &= v - 1;
		n++;
	}
	return n > BFQ_SEEKY_BITS;
}

static int bfqq_totally_seeky(const struct bfq_queue *bfqq)
{
	return bfqq->seek_history == UINT32_MAX;
}

static unsigned bfq_class_of(uint8_t ioprio)
{
	switch (ELV_PRIO_CLASS(ioprio)) {
	case ELV_PRIO_RT:
		return BFQ_RT;
	case ELV_PRIO_IDLE:
		return BFQ_IDLE;
	default:
		return BFQ_BE;
	}
}

/* The group a queue's requests are counted in, or NULL for the root. */
static struct bfq_group *bfqq_group(const struct bfq_queue *bfqq)
{
	const struct bfq_entity *owner = bfqq->e.sd->owner;

	return owner ? elv_container_of(owner, struct bfq_group, e) : NULL;
}

/* 16384 sectors until enough budgets were assigned for the estimate to be trusted (1.10). */
static uint64_t bfq_dev_max_budget(const struct bfq_data *bd)
{
	return bd->budgets_assigned < BFQ_STATS_MIN_BUDGETS ? BFQ_DEFAULT_MAX_BUDGET
							     : bd->bfq_max_budget;
}

static uint64_t bfq_min_budget(const struct bfq_data *bd)
{
	return bfq_dev_max_budget(bd) >> 5;
}

static uint64_t bfq_wr_duration(const struct bfq_data *bd)
{
	uint64_t d = elv_div64(bd->rate_dur_prod, bd->peak_rate ? bd->peak_rate : 1);

	return d < BFQ_WR_MIN_DURATION ? BFQ_WR_MIN_DURATION
	       : d > BFQ_WR_MAX_DURATION ? BFQ_WR_MAX_DURATION : d;
}

static int bfqq_softrt_raised(const struct bfq_data *bd, const struct bfq_queue *bfqq)
{
	(void)bd;
	return bfqq->wr_coeff > 1 && bfqq->wr_cur_max_time == BFQ_WR_RT_MAX_TIME;
}

/* ---- service trees ------------------------------------------------------------------- */

/*
 * The active entities of a tree are kept in two trees: those known eligible (S <= V) by F,
 * and the others by S. V only grows while any entity is active, so an eligible entity stays
 * so, and each entity moves across once per activation: the eligible one with the smallest
 * F is then the first of one tree, with no augmented tree to keep.
 */
static void bfq_tree_insert(struct elv_rb_root *t, struct bfq_entity *e, int by_start)
{
	struct elv_rb_node **link = &t->root, *parent = NULL;
	uint64_t key = by_start ? e->start : e->finish;
	int leftmost = 1;

	while (*link) {
		const struct bfq_entity *p = bfq_node_entity(*link);

		parent = *link;
		/* an equal key goes right, so the entity inserted earlier wins a tie */
		if (bfq_gt(by_start ? p->start : p->finish, key)) {
			link = &parent->left;
		} else {
			link = &parent->right;
			leftmost = 0;
		}
	}
	elv_rb_insert(t, &e->node, parent, link, leftmost);
}

static void bfq_active_insert(struct bfq_st *st, struct bfq_entity *e)
{
	e->elig = !bfq_gt(e->start, st->vtime);
	bfq_tree_insert(e->elig ? &st->elig : &st->pend, e, !e->elig);
	e->tree = BFQ_TREE_ACTIVE;
}

static void bfq_active_extract(struct bfq_st *st, struct bfq_entity *e)
{
	elv_rb_erase(e->elig ? &st->elig : &st->pend, &e->node);
	e->tree = BFQ_TREE_NONE;
}

static int bfq_st_active(const struct bfq_st *st)
{
	return st->elig.root || st->pend.root;
}

/* Move every pending entity that is eligible at @vtime to the eligible tree. */
static void bfq_promote(struct bfq_st *st, uint64_t vtime)
{
	struct bfq_entity *e;

	while ((e = bfq_node_entity(st->pend.first)) && !bfq_gt(e->start, vtime)) {
		elv_rb_erase(&st->pend, &e->node);
		e->elig = 1;
		bfq_tree_insert(&st->elig, e, 0);
	}
}

static void bfq_idle_insert(struct bfq_st *st, struct bfq_entity *e)
{
	if (!st->first_idle || bfq_gt(st->first_idle->finish, e->finish))
		st->first_idle = e;
	if (!st->last_idle || !bfq_gt(st->last_idle->finish, e->finish))
		st->last_idle = e; /* an equal F is inserted after it */
	bfq_tree_insert(&st->idle, e, 0);
	e->tree = BFQ_TREE_IDLE;
}

static void bfq_idle_extract(struct bfq_st *st, struct bfq_entity *e)
{
	if (e == st->first_idle)
		st->first_idle = bfq_node_entity(elv_rb_next(&e->node));
	if (e == st->last_idle)
		st->last_idle = bfq_node_entity(elv_rb_prev(&e->node));
	elv_rb_erase(&st->idle, &e->node);
	e->tree = BFQ_TREE_NONE;
}

/* The entity no longer counts in its tree's weight sum. */
static void bfq_forget(struct bfq_st *st, struct bfq_entity *e)
{
	if (e->on_st) {
		st->wsum -= e->weight;
		e->on_st = 0;
	}
}

/* 1.5 step 9: pull V up to the last idle entity when nothing is active; drop the first. */
static void bfq_forget_idle(struct bfq_st *st)
{
	struct bfq_entity *first = st->first_idle, *last = st->last_idle;

	if (!bfq_st_active(st) && last && !bfq_gt(last->finish, st->vtime))
		st->vtime = last->finish;
	if (first && !bfq_gt(first->finish, st->vtime)) {
		bfq_idle_extract(st, first);
		bfq_forget(st, first);
	}
}

/* 1.5 step 3: the smallest S when no entity is eligible and it is ahead of V, else V. */
static uint64_t bfq_vtime_jump(struct bfq_st *st)
{
	const struct bfq_entity *p = bfq_node_entity(st->pend.first);

	bfq_promote(st, st->vtime);
	return !st->elig.root && p && bfq_gt(p->start, st->vtime) ? p->start : st->vtime;
}

/* The eligible entity (S <= @vtime) with the smallest F. */
static struct bfq_entity *bfq_first_eligible(struct bfq_st *st, uint64_t vtime)
{
	struct bfq_entity *e = bfq_node_entity(st->elig.first);

	if (e || !st->pend.first)
		return e;
	/* only on a jump (V not moved, in service or peeking): the earliest start goes next */
	e = bfq_node_entity(st->pend.first);
	return bfq_gt(e->start, vtime) ? NULL : e;
}

/*
 * 1.5 steps 2-4: the next entity of scheduler @sd. With @peek nothing changes (the budget a
 * group entity carries is its next child's); otherwise V jumps and the IDLE-class clock runs.
 */
static struct bfq_entity *bfq_lookup(struct bfq_data *bd, struct bfq_sched *sd, int peek)
{
	unsigned c = BFQ_RT;
	struct bfq_entity *e = NULL;

	if (elv_time_after(bd->now, sd->class_idle_last_service + BFQ_CL_IDLE_TIMEOUT) && !peek) {
		if (bfq_st_active(&sd->st[BFQ_IDLE]))
			c = BFQ_IDLE;
		sd->class_idle_last_service = bd->now;
	}
	for (; c < BFQ_NR_CLASSES && !e; c++) {
		struct bfq_st *st = &sd->st[c];
		uint64_t v;

		if (!bfq_st_active(st))
			continue;
		v = bfq_vtime_jump(st);
		if (!sd->in_service && !peek) {
			st->vtime = v;
			bfq_promote(st, v);
		}
		e = bfq_first_eligible(st, v);
	}
	return e;
}

static int bfq_sched_active(const struct bfq_sched *sd)
{
	return bfq_st_active(&sd->st[BFQ_RT]) || bfq_st_active(&sd->st[BFQ_BE]) ||
	       bfq_st_active(&sd->st[BFQ_IDLE]);
}

/* ---- weights ------------------------------------------------------------------------- */

static void bfq_wtree_del(struct bfq_data *bd, struct bfq_queue *bfqq)
{
	if (bfqq->flags & BFQQ_IN_WTREE) {
		elv_rb_erase(&bd->wtree, &bfqq->wnode);
		bfqq->flags &= ~BFQQ_IN_WTREE;
	}
}

static struct bfq_queue *bfq_wnode_queue(const struct elv_rb_node *n)
{
	return elv_container_of(n, struct bfq_queue, wnode);
}

/*
 * Keep the weights multiset right for @bfqq: it holds the weight of every queue that is
 * not raised and is busy or has requests in flight (1.3), for the symmetry test.
 */
static void bfq_wtree_sync(struct bfq_data *bd, struct bfq_queue *bfqq)
{
	int want = (bfqq_busy(bfqq) || bfqq->dispatched) && bfqq->wr_coeff == 1;
	struct elv_rb_node **link = &bd->wtree.root, *parent = NULL;
	int leftmost = 1;

	if ((bfqq->flags & BFQQ_IN_WTREE) && (!want || bfqq->wkey != bfqq->e.weight))
		bfq_wtree_del(bd, bfqq);
	if (!want || (bfqq->flags & BFQQ_IN_WTREE))
		return;
	bfqq->wkey = bfqq->e.weight;
	while (*link) {
		parent = *link;
		if (bfq_wnode_queue(parent)->wkey > bfqq->wkey) {
			link = &parent->left;
		} else {
			link = &parent->right;
			leftmost = 0;
		}
	}
	elv_rb_insert(&bd->wtree, &bfqq->wnode, parent, link, leftmost);
	bfqq->flags |= BFQQ_IN_WTREE;
}

/* The weight and class a queue or group entity should have now (1.5 step 8). */
static void bfq_target(const struct bfq_entity *e, uint32_t *w, unsigned *cls)
{
	struct bfq_queue *bfqq = bfq_entity_queue((struct bfq_entity *)(uintptr_t)e);

	if (!bfqq) {
		*w = elv_container_of(e, struct bfq_group, e)->g->weight;
		*cls = BFQ_BE; /* groups always sit in their parent's BE tree */
		return;
	}
	if (bfqq->stream) {
		*w = elv_stream_weight(bfqq->stream);
		*cls = bfq_class_of(bfqq->stream->ioprio);
	} else {
		const struct bfq_queue *anon = elv_container_of(bfqq->e.sd, struct bfq_data, root)->anon;

		*cls = bfqq == &anon[BFQ_RT] ? BFQ_RT : bfqq == &anon[BFQ_BE] ? BFQ_BE : BFQ_IDLE;
		*w = elv_prio_weight(ELV_PRIO(*cls + 1, ELV_PRIO_DEFAULT_LEVEL));
	}
	if (*w < 1)
		*w = 1;
	if (*w > ELV_WEIGHT_MAX)
		*w = ELV_WEIGHT_MAX;
}

/*
 * Apply a pending weight or class change: W moves with the weight, and an entity changing
 * class starts at the new tree's V. Returns the (possibly new) tree.
 */
static struct bfq_st *bfq_update_weight(struct bfq_data *bd, struct bfq_entity *e)
{
	struct bfq_queue *bfqq = bfq_entity_queue(e);
	struct bfq_st *old = bfq_st_of(e), *st;
	uint32_t w;
	unsigned cls;

	bfq_target(e, &w, &cls);
	e->orig_weight = w;
	w *= bfqq ? bfqq->wr_coeff : 1;
	if (w == e->weight && cls == e->cls)
		return old;
	if (e->on_st)
		old->wsum -= e->weight;
	if (bfqq && bfqq_busy(bfqq) && cls != e->cls) {
		bd->busy_queues[e->cls]--;
		bd->busy_queues[cls]++;
	}
	e->weight = w;
	e->cls = (uint8_t)cls;
	st = bfq_st_of(e);
	if (e->on_st)
		st->wsum += e->weight;
	if (st != old)
		e->start = st->vtime;
	if (bfqq)
		bfq_wtree_sync(bd, bfqq);
	return st;
}

/* ---- B-WF2Q+ entity operations (1.5) ------------------------------------------------- */

/* Step 5: charge @c sectors to @e and its ancestors, advancing each tree's V. */
static void bfq_served(struct bfq_entity *e, uint64_t c)
{
	for (; e; e = e->sd->owner) {
		struct bfq_st *st = bfq_st_of(e);

		e->service += c;
		st->vtime += bfq_delta(c, st->wsum);
		bfq_forget_idle(st);
	}
}

/* Step 6: put an entity that is on no active tree on one; @nb allows the back-shift. */
static void bfq_activate(struct bfq_data *bd, struct bfq_entity *e, int nb, uint32_t wr_coeff)
{
	struct bfq_st *st = bfq_st_of(e);
	uint64_t min_vstart = st->vtime;
	int backshifted = 0;

	if (nb && bfq_gt(st->vtime, e->finish)) {
		backshifted = 1;
		min_vstart = e->finish;
	}
	if (e->tree == BFQ_TREE_IDLE) {
		bfq_idle_extract(st, e);
		e->start = bfq_gt(min_vstart, e->finish) ? min_vstart : e->finish;
	} else {
		e->start = min_vstart;
		if (!e->on_st) {
			st->wsum += e->weight;
			e->on_st = 1;
		}
	}
	st = bfq_update_weight(bd, e);
	e->finish = e->start + bfq_delta(e->budget, e->weight);
	if (backshifted && bfq_gt(st->vtime, e->finish)) {
		uint64_t d = elv_div64(st->vtime - e->finish, wr_coeff ? wr_coeff : 1);

		e->start += d;
		e->finish += d;
	}
	bfq_active_insert(st, e);
}

/*
 * Step 7: the in-service entity goes back on its tree, charged for what it received; an
 * active one is re-keyed for a new budget from the same start.
 */
static void bfq_requeue_entity(struct bfq_data *bd, struct bfq_entity *e)
{
	struct bfq_st *st = bfq_st_of(e);

	if (e->sd->in_service == e) {
		e->finish = e->start + bfq_delta(e->service, e->weight);
		e->start = e->finish;
	} else if (e->tree == BFQ_TREE_ACTIVE) {
		bfq_active_extract(st, e);
	}
	st = bfq_update_weight(bd, e);
	e->finish = e->start + bfq_delta(e->budget, e->weight);
	bfq_active_insert(st, e);
}

/* Step 9: off the active tree (or out of service), onto the idle tree when it is ahead. */
static void bfq_deactivate(struct bfq_entity *e, int to_idle)
{
	struct bfq_st *st = bfq_st_of(e);

	if (e->sd->in_service == e) {
		e->finish = e->start + bfq_delta(e->service, e->weight);
		e->sd->in_service = NULL;
	} else if (e->tree == BFQ_TREE_ACTIVE) {
		bfq_active_extract(st, e);
	} else if (e->tree == BFQ_TREE_IDLE) {
		bfq_idle_extract(st, e);
	}
	if (!to_idle || !bfq_gt(e->finish, st->vtime))
		bfq_forget(st, e);
	else
		bfq_idle_insert(st, e);
}

/* A group entity's budget: that of the child it would serve next (1.5 step 10). */
static void bfq_group_budget(struct bfq_data *bd, struct bfq_entity *ge)
{
	struct bfq_entity *c = bfq_lookup(bd, ge->child, 1);

	if (c)
		ge->budget = c->budget;
}

/*
 * A child of group entity @ge became active or changed its budget: the group competes at the
 * root too, with the budget of the child it would serve next (a waiting group is re-keyed
 * when that budget changes, as Linux does when the group's next entity changes).
 */
static void bfq_group_activate(struct bfq_data *bd, struct bfq_entity *ge)
{
	if (!ge || ge->sd->in_service == ge)
		return;
	if (ge->tree == BFQ_TREE_ACTIVE) {
		uint64_t old = ge->budget;

		bfq_group_budget(bd, ge);
		if (ge->budget != old)
			bfq_requeue_entity(bd, ge);
		return;
	}
	bfq_group_budget(bd, ge);
	ge->service = 0;
	bfq_activate(bd, ge, 0, 1);
}

/*
 * A child of group entity @ge left service or went idle: the group is requeued with its
 * next child's budget while it has active children, else deactivated.
 */
static void bfq_group_settle(struct bfq_data *bd, struct bfq_entity *ge, int to_idle)
{
	if (!ge)
		return;
	if (ge->child->in_service)
		return; /* another child is being served: the group stays in service */
	if (bfq_sched_active(ge->child)) {
		if (ge->sd->in_service == ge) {
			bfq_group_budget(bd, ge);
			bfq_requeue_entity(bd, ge);
			ge->sd->in_service = NULL;
			ge->service = 0;
		}
		return;
	}
	if (ge->sd->in_service == ge || ge->tree == BFQ_TREE_ACTIVE)
		bfq_deactivate(ge, to_idle);
}

/* ---- idling decision (1.11) ---------------------------------------------------------- */

static uint32_t bfq_tot_busy(const struct bfq_data *bd)
{
	return bd->busy_queues[BFQ_RT] + bd->busy_queues[BFQ_BE] + bd->busy_queues[BFQ_IDLE];
}

static uint32_t bfq_in_flight(const struct elv_queue *q)
{
	return elv_queue_head(q)->nr_in_flight;
}

static int bfq_asymmetric(const struct bfq_data *bd, const struct bfq_queue *bfqq)
{
	const struct elv_rb_node *first = bd->wtree.first, *last = bd->wtree.root;
	int smallest, varied;

	while (last && last->right)
		last = last->right;
	smallest = bfqq && (bfqq->flags & BFQQ_IN_WTREE) && first &&
		   bfq_wnode_queue(first)->wkey == bfqq->wkey;
	varied = !smallest && first && bfq_wnode_queue(first)->wkey != bfq_wnode_queue(last)->wkey;
	return varied ||
	       (bd->busy_queues[BFQ_RT] && bd->busy_queues[BFQ_BE]) ||
	       (bd->busy_queues[BFQ_RT] && bd->busy_queues[BFQ_IDLE]) ||
	       (bd->busy_queues[BFQ_BE] && bd->busy_queues[BFQ_IDLE]) ||
	       bd->num_groups_pending > 1; /* the 5.8 snapshot: > 0 */
}

static int bfq_idling_boosts_thr(const struct bfq_data *bd, const struct bfq_queue *bfqq)
{
	int rot = !bd->nonrot;
	int seq_io = !bfqq_seeky(bfqq) && (bfqq->flags & BFQQ_IO_BOUND) &&
		     (bfqq->flags & BFQQ_SHORT_TTIME);
	int boosts = (rot && !bd->hw_tag) || ((rot || !bd->hw_tag) && seq_io);

	return boosts && bd->wr_busy_queues == 0;
}

static int bfq_idling_needed(const struct elv_queue *q, const struct bfq_data *bd,
			     const struct bfq_queue *bfqq)
{
	if (bfqq->wr_coeff > 1 && (bd->wr_busy_queues < bfq_tot_busy(bd) ||
				   bfq_in_flight(q) >= bfqq->dispatched + 4))
		return 1;
	return bfq_asymmetric(bd, bfqq) || bfq_tot_busy(bd) == 1;
}

static int bfq_better_to_idle(const struct elv_queue *q, const struct bfq_data *bd,
			      const struct bfq_queue *bfqq)
{
	if (bd->strict_guarantees)
		return 1;
	if (!bd->slice_idle || !bfqq_sync(bfqq) || bfqq->e.cls == BFQ_IDLE)
		return 0;
	return bfq_idling_boosts_thr(bd, bfqq) || bfq_idling_needed(q, bd, bfqq);
}

static int bfq_must_idle(const struct elv_queue *q, const struct bfq_data *bd,
			 const struct bfq_queue *bfqq)
{
	return !bfqq->queued && bfq_better_to_idle(q, bd, bfqq);
}

/* ---- requests of a queue ------------------------------------------------------------- */

/* 1.6: sync and META first, then the seek rule from @head (back_seek_max is in KiB). */
static struct elv_request *bfq_choose(const struct bfq_data *bd, struct elv_request *r1,
				      struct elv_request *r2, uint64_t head)
{
	int s1, s2;

	if (!r1 || r1 == r2)
		return r2;
	if (!r2)
		return r1;
	s1 = elv_rq_is_sync(r1);
	s2 = elv_rq_is_sync(r2);
	if (s1 != s2)
		return s1 ? r1 : r2;
	s1 = (r1->flags & ELV_RQ_META) != 0;
	s2 = (r2->flags & ELV_RQ_META) != 0;
	if (s1 != s2)
		return s1 ? r1 : r2;
	return elv_seek_pick(r1, r2, head, (uint64_t)bd->back_seek_max * 2u,
			     (uint32_t)bd->back_seek_penalty);
}

static uint64_t bfq_fifo_expire(const struct bfq_data *bd, const struct bfq_queue *bfqq)
{
	return (uint64_t)(bfqq_sync(bfqq) ? bd->fifo_expire_sync : bd->fifo_expire_async);
}

/*
 * The request to serve after @last left (1.6): the FIFO head once per slot if its deadline
 * passed, else the nearer of @last's neighbours in sector order.
 */
static struct elv_request *bfq_find_next(struct bfq_data *bd, struct bfq_queue *bfqq,
					 struct elv_request *last, struct elv_request *next,
					 struct elv_request *prev)
{
	struct elv_request *head;

	if (!bfqq->queued)
		return NULL;
	if (!(bfqq->flags & BFQQ_FIFO_EXPIRE)) {
		bfqq->flags |= BFQQ_FIFO_EXPIRE;
		head = elv_list_first_rq(&bfqq->fifo);
		if (head && head != last &&
		    !elv_time_before(bd->now, elv_rq_time(head) + bfq_fifo_expire(bd, bfqq))) {
			bfq_count(bd, BFQ_ST_FIFO_EXPIRED);
			return head;
		}
	}
	if (!next)
		next = elv_sort_first(&bfqq->sort);
	return bfq_choose(bd, next, prev, elv_rq_end(last));
}

/* 1.7: sectors charged for @rq: async requests of unraised queues cost 3x when symmetric. */
static uint64_t bfq_charge(const struct bfq_data *bd, const struct bfq_queue *bfqq,
			   const struct elv_request *rq)
{
	uint64_t c = rq->nr_sectors ? rq->nr_sectors : 1;

	if (!bfqq_sync(bfqq) && bfqq->wr_coeff == 1 && !bfq_asymmetric(bd, bfqq))
		c *= BFQ_ASYNC_CHARGE;
	return c;
}

static uint64_t bfq_budget_left(const struct bfq_queue *bfqq)
{
	return bfqq->e.budget > bfqq->e.service ? bfqq->e.budget - bfqq->e.service : 0;
}

/* ---- weight raising (1.12a) ---------------------------------------------------------- */

static void bfq_end_wr(struct bfq_data *bd, struct bfq_queue *bfqq, uint64_t now)
{
	if (bfqq->wr_coeff == 1)
		return;
	if (!bfqq_softrt_raised(bd, bfqq) && bfqq->x)
		bfqq->x->soft_rt_next_start = now;
	if (bfqq_busy(bfqq))
		bd->wr_busy_queues--;
	bfqq->wr_coeff = 1;
	bfqq->wr_cur_max_time = 0;
	bfqq->last_wr_start_finish = now;
	bfq_wtree_sync(bd, bfqq);
}

static void bfq_switch_back_to_interactive(struct bfq_data *bd, struct bfq_queue *bfqq)
{
	bfqq->wr_coeff = BFQ_WR_COEFF;
	bfqq->wr_cur_max_time = bfq_wr_duration(bd);
	bfqq->last_wr_start_finish = bfqq->wr_start_at_switch_to_srt;
}

/* Raise or re-raise at a change in coefficient; busy queues count in wr_busy_queues. */
static void bfq_set_wr(struct bfq_data *bd, struct bfq_queue *bfqq, uint32_t coeff,
		       uint64_t dur)
{
	if (bfqq_busy(bfqq) && (bfqq->wr_coeff > 1) != (coeff > 1))
		bd->wr_busy_queues += coeff > 1 ? 1u : (uint32_t)-1;
	bfqq->wr_coeff = coeff;
	bfqq->wr_cur_max_time = dur;
	bfq_wtree_sync(bd, bfqq);
	bfq_count(bd, coeff == BFQ_WR_COEFF ? BFQ_ST_WR_INTERACTIVE : BFQ_ST_WR_SOFTRT);
}

/* At dispatch from the in-service raised queue: end or step down the raising. */
static void bfq_update_wr_data(struct bfq_data *bd, struct bfq_queue *bfqq, uint64_t now)
{
	if (bfqq->wr_coeff > 1) {
		if (bfqq->flags & BFQQ_LARGE_BURST) {
			bfq_end_wr(bd, bfqq, now);
		} else if (elv_time_after(now, bfqq->last_wr_start_finish + bfqq->wr_cur_max_time)) {
			if (!bfqq_softrt_raised(bd, bfqq) ||
			    elv_time_after(now, bfqq->wr_start_at_switch_to_srt + bfq_wr_duration(bd)))
				bfq_end_wr(bd, bfqq, now);
			else
				bfq_switch_back_to_interactive(bd, bfqq);
		}
		if (bfqq->wr_coeff > 1 && !bfqq_softrt_raised(bd, bfqq) &&
		    bfqq->service_from_wr > BFQ_WR_MAX_SERVICE)
			bfq_end_wr(bd, bfqq, now);
	}
	/* the in-service entity is on no tree: its new weight applies at once */
	if ((bfqq->e.weight > bfqq->e.orig_weight) != (bfqq->wr_coeff > 1))
		bfq_update_weight(bd, &bfqq->e);
}

/* The earliest time the next batch of @bfqq may count as soft real-time (1.12a). */
static uint64_t bfq_softrt_next_start(const struct bfq_data *bd, const struct bfq_queue *bfqq,
				      uint64_t now)
{
	const struct bfq_sync_x *x = bfqq->x;
	uint64_t a = x->soft_rt_next_start;
	uint64_t served = bfq_min64(x->service_from_backlogged, 1ULL << 33); /* no overflow */
	uint64_t b = x->last_idle_bklogged + elv_div64(served * BFQ_S, BFQ_WR_MAX_SOFTRT_RATE);
	uint64_t c = now + (uint64_t)bd->slice_idle + 4 * BFQ_JIFFY;

	if (elv_time_after(b, a))
		a = b;
	return elv_time_after(c, a) ? c : a;
}

/* ---- busy queues --------------------------------------------------------------------- */

/* A group's count of pending requests, and the device's count of groups with some. */
static void bfq_group_pending(struct bfq_data *bd, struct bfq_queue *bfqq, int up)
{
	struct bfq_group *bg = bfqq_group(bfqq);

	if (!bg)
		return;
	if (up) {
		if (bg->pending++ == 0)
			bd->num_groups_pending++;
	} else if (--bg->pending == 0) {
		bd->num_groups_pending--;
	}
}

/* The queue has nothing to be served for: off its tree (1.5 step 9) and out of the counts. */
static void bfq_del_busy(struct bfq_data *bd, struct bfq_queue *bfqq, int to_idle)
{
	struct bfq_entity *ge = bfqq->e.sd->owner;

	bfqq->flags &= ~BFQQ_BUSY;
	bd->busy_queues[bfqq->e.cls]--;
	if (bfqq->wr_coeff > 1)
		bd->wr_busy_queues--;
	elv_list_del(&bfqq->busy_link);
	bfq_deactivate(&bfqq->e, to_idle);
	bfq_wtree_sync(bd, bfqq);
	bfq_group_settle(bd, ge, to_idle);
}

/* 1.10: expire the in-service queue. @compensate: it idled (charge up to the idle start). */
static void bfq_expire(struct elv_queue *q, struct bfq_data *bd, struct bfq_queue *bfqq,
		       int compensate, enum bfq_reason reason, uint64_t now);

/* 1.8: the queue gets its first request after being empty. */
static void bfq_add_busy(struct elv_queue *q, struct bfq_data *bd, struct bfq_queue *bfqq,
			 int *interactive, uint64_t now)
{
	struct bfq_sync_x *x = bfqq->x;
	struct bfq_queue *in_serv = bd->in_service;
	int idle_long, in_time, soft_rt = 0, deserves, nb, wants_preempt = 0;
	int default_weight = bfqq->stream && !bfqq->stream->weight &&
			     elv_stream_weight(bfqq->stream) == 40;
	uint32_t old_coeff = bfqq->wr_coeff;

	idle_long = bfqq->dispatched == 0 &&
		    elv_time_after(now, bfqq->budget_timeout + BFQ_WR_MIN_IDLE);
	in_time = x && !elv_time_after(now, x->last_end_request + 3u * (uint64_t)bd->slice_idle);
	if (x)
		soft_rt = !bfqq_totally_seeky(bfqq) && !(bfqq->flags & BFQQ_LARGE_BURST) &&
			  elv_time_after(now, x->soft_rt_next_start) && bfqq->dispatched == 0 &&
			  default_weight;
	*interactive = !(bfqq->flags & BFQQ_LARGE_BURST) && idle_long && default_weight;
	deserves = bd->low_latency &&
		   (bfqq->wr_coeff > 1 || (bfqq_sync(bfqq) && (*interactive || soft_rt)));

	/* step 6: resume the budget left if it went idle only briefly (back-shift) */
	nb = (bfqq->flags & BFQQ_NON_BLOCKING) != 0;
	if (nb && in_time && bfqq->e.budget > bfqq->e.service) {
		bfqq->e.budget = bfq_min64(bfqq->e.budget - bfqq->e.service, bfqq->max_budget);
		bfqq->e.service = 0;
		wants_preempt = 1;
	} else {
		bfqq->e.service = 0;
		bfqq->e.budget = bfq_max64(bfqq->max_budget, bfq_charge(bd, bfqq, bfqq->next_rq));
		bfqq->flags &= ~BFQQ_NON_BLOCKING;
		nb = 0;
	}
	/* step 7: a queue idle for long leaves the burst it was created in */
	if (x && !(bfqq->flags & BFQQ_JUST_CREATED) && idle_long &&
	    elv_time_after(now, bfqq->budget_timeout + 10 * BFQ_S)) {
		if (bfqq->flags & BFQQ_IN_BURST_LIST) {
			elv_list_del(&x->burst_link);
			bfqq->flags &= ~BFQQ_IN_BURST_LIST;
			if (bd->burst_size)
				bd->burst_size--;
		}
		bfqq->flags &= ~BFQQ_LARGE_BURST;
	}
	bfqq->flags &= ~BFQQ_JUST_CREATED;

	/* step 8: weight raising on arrival (no queue is split: split_time is long ago) */
	if (bd->low_latency) {
		if (old_coeff == 1 && deserves) {
			if (*interactive) {
				bfqq->service_from_wr = 0;
				bfq_set_wr(bd, bfqq, BFQ_WR_COEFF, bfq_wr_duration(bd));
			} else {
				bfqq->wr_start_at_switch_to_srt = now - BFQ_LONG_AGO;
				bfq_set_wr(bd, bfqq, BFQ_WR_COEFF * BFQ_SOFTRT_FACTOR,
					   BFQ_WR_RT_MAX_TIME);
			}
			bfqq->e.budget = bfq_min64(bfqq->e.budget, 2 * bfq_min_budget(bd));
		} else if (old_coeff > 1) {
			if (*interactive) {
				bfqq->wr_coeff = BFQ_WR_COEFF;
				bfqq->wr_cur_max_time = bfq_wr_duration(bd);
			} else if (bfqq->flags & BFQQ_LARGE_BURST) {
				bfq_end_wr(bd, bfqq, now); /* not busy yet: no count to fix */
			} else if (soft_rt) {
				if (!bfqq_softrt_raised(bd, bfqq)) {
					bfqq->wr_start_at_switch_to_srt = bfqq->last_wr_start_finish;
					bfq_set_wr(bd, bfqq, BFQ_WR_COEFF * BFQ_SOFTRT_FACTOR,
						   BFQ_WR_RT_MAX_TIME);
				}
				bfqq->last_wr_start_finish = now;
			}
		}
	}

	/* step 9: busy from now on */
	if (x) {
		x->last_idle_bklogged = now;
		x->service_from_backlogged = 0;
	}
	bfqq->flags &= ~BFQQ_SOFTRT_UPDATE;
	bfqq->flags |= BFQQ_BUSY;
	elv_list_add_tail(&bd->busy, &bfqq->busy_link);
	bd->busy_queues[bfqq->e.cls]++;
	if (bfqq->wr_coeff > 1)
		bd->wr_busy_queues++;
	if (bfqq->e.tree != BFQ_TREE_ACTIVE && bfqq->e.sd->in_service != &bfqq->e)
		bfq_activate(bd, &bfqq->e, nb, bfqq->wr_coeff);
	bfq_wtree_sync(bd, bfqq);
	bfq_group_activate(bd, bfqq->e.sd->owner);

	/* step 10: preemption of the in-service queue */
	if (in_serv && in_serv != bfqq) {
		const struct bfq_entity *pa = bfqq->e.sd->owner, *pb = in_serv->e.sd->owner;
		uint32_t wa = pa == pb || !pa ? bfqq->e.weight : pa->weight;
		uint32_t wb = pa == pb || !pb ? in_serv->e.weight : pb->weight;
		int higher = bfqq->e.cls < in_serv->e.cls || wa > wb;

		if (((wants_preempt && bfqq->wr_coeff >= in_serv->wr_coeff) || higher ||
		     !bfq_better_to_idle(q, bd, in_serv)) &&
		    bfq_sched_active(&bd->root)) {
			bfq_count(bd, BFQ_ST_EXP_PREEMPTED);
			bfq_expire(q, bd, in_serv, 0, BFQ_PREEMPTED, now);
		}
	}
}

/* ---- expiration (1.10) --------------------------------------------------------------- */

static void bfq_idle_clear(struct elv_queue *q, struct bfq_data *bd, uint64_t now)
{
	if (bd->idle_end == ELV_TIME_NEVER)
		return;
	bd->idle_end = ELV_TIME_NEVER;
	elv_idle_stop(q, now);
}

/* 1.10 step 1: did the queue use its slot slowly? @dms gets the slot length in ms. */
static int bfq_is_slow(const struct bfq_data *bd, const struct bfq_queue *bfqq,
		       int compensate, uint64_t now, uint64_t *dms)
{
	uint64_t end = compensate ? bd->last_idling_start : now;
	uint64_t d = elv_time_after(end, bd->last_budget_start) ? end - bd->last_budget_start : 0;
	int slow = bfqq_seeky(bfqq);

	*dms = 0;
	if (!bfqq_sync(bfqq))
		return 0;
	if (d < BFQ_MS) {
		*dms = bd->nonrot ? BFQ_MIN_TT / BFQ_MS : elv_div64((uint64_t)bd->slice_idle, BFQ_MS);
		return slow;
	}
	*dms = elv_div64(d, BFQ_MS);
	if (d > 20 * BFQ_MS)
		slow = bfqq->e.service < bd->bfq_max_budget >> 1;
	return slow;
}

/* 1.10 step 6: the queue's next max_budget from how it used this one. */
static void bfq_recalc_budget(struct bfq_data *bd, struct bfq_queue *bfqq,
			      enum bfq_reason reason, const struct elv_queue *q)
{
	uint64_t m = bfq_min_budget(bd), b = bfqq->max_budget, M = bd->bfq_max_budget;

	if (bfqq->wr_coeff > 1) {
		b = 2 * m;
	} else if (!bfqq_sync(bfqq)) {
		b = M;
	} else {
		switch (reason) {
		case BFQ_TOO_IDLE:
			if (bfqq->dispatched)
				b = bfq_min64(2 * b, M);
			else
				b = b > 5 * m ? b - 4 * m : m;
			break;
		case BFQ_BUDGET_TIMEOUT:
			b = bfq_min64(2 * b, M);
			break;
		case BFQ_BUDGET_EXHAUSTED:
			b = bfq_min64(4 * b, M);
			break;
		case BFQ_NO_MORE_REQUESTS:
			b = bfq_max64(bfqq->e.service, m);
			break;
		default: /* PREEMPTED: budget and max_budget stay */
			return;
		}
	}
	(void)q;
	if (bd->budgets_assigned >= BFQ_STATS_MIN_BUDGETS && !bd->user_max_budget)
		b = bfq_min64(b, M);
	bfqq->max_budget = b;
	if (bfqq->next_rq)
		bfqq->e.budget = bfq_max64(b, bfq_charge(bd, bfqq, bfqq->next_rq));
}

static void bfq_expire(struct elv_queue *q, struct bfq_data *bd, struct bfq_queue *bfqq,
		       int compensate, enum bfq_reason reason, uint64_t now)
{
	static const uint8_t stat[] = { BFQ_ST_EXP_TOO_IDLE, BFQ_ST_EXP_TIMEOUT,
					BFQ_ST_EXP_EXHAUSTED, BFQ_ST_EXP_NO_MORE, 0 };
	struct bfq_entity *e = &bfqq->e, *ge = e->sd->owner;
	uint64_t dms, T = elv_div64((uint64_t)bd->timeout_sync, BFQ_MS);
	int slow = bfq_is_slow(bd, bfqq, compensate, now, &dms);

	if (reason != BFQ_PREEMPTED)
		bfq_count(bd, stat[reason]);
	/* step 2: charge time to a slow queue (the fact sheet's rule: only below one timeout) */
	if (bfqq->wr_coeff == 1 &&
	    (slow || (reason == BFQ_BUDGET_TIMEOUT && bfq_budget_left(bfqq) >= elv_div64(e->budget, 3)))) {
		uint64_t target = e->service;

		if (dms > 0 && dms < T)
			target = elv_div64(bd->bfq_max_budget * dms, T);
		target = bfq_max64(target, e->service);
		if (target > e->budget)
			e->budget = target;
		if (target > e->service)
			bfq_served(e, target - e->service);
	}
	/* step 3 */
	if (bd->low_latency && bfqq->wr_coeff == 1)
		bfqq->last_wr_start_finish = now;
	/* step 4 */
	if (bd->low_latency && bfqq->x && !bfqq->queued) {
		if (!bfqq->dispatched)
			bfqq->x->soft_rt_next_start = bfq_softrt_next_start(bd, bfqq, now);
		else
			bfqq->flags |= BFQQ_SOFTRT_UPDATE;
	}
	/* step 5 */
	bd->rqs_injected = 0;
	bd->wait_dispatch = 0;
	bd->waited_rq = NULL;
	/* step 6 */
	bfq_recalc_budget(bd, bfqq, reason, q);
	/* steps 8-9 */
	bd->in_service = NULL;
	bfqq->flags &= ~BFQQ_WAIT_REQUEST;
	bfq_idle_clear(q, bd, now);
	if (!bfqq->queued &&
	    !(reason == BFQ_PREEMPTED && bfq_idling_needed(q, bd, bfqq))) {
		if (!bfqq->dispatched)
			bfqq->budget_timeout = now; /* when it went idle */
		bfq_del_busy(bd, bfqq, 1);
	} else {
		bfq_requeue_entity(bd, e);
		e->sd->in_service = NULL;
		bfq_group_settle(bd, ge, 1);
	}
	/* step 10: keep the service of a queue that may resume where it stopped */
	if (!bfqq_busy(bfqq) && reason != BFQ_BUDGET_TIMEOUT && reason != BFQ_BUDGET_EXHAUSTED)
		bfqq->flags |= BFQQ_NON_BLOCKING;
	else
		e->service = 0;
	if (ge)
		ge->service = 0;
}

/* ---- choosing the queue to serve (1.9) ----------------------------------------------- */

static void bfq_set_budget_timeout(struct bfq_data *bd, struct bfq_queue *bfqq, uint64_t now)
{
	uint64_t k = bfqq_softrt_raised(bd, bfqq) ? 1
						  : bfqq->e.weight / (bfqq->e.orig_weight ? bfqq->e.orig_weight : 1);

	bd->last_budget_start = now;
	bfqq->budget_timeout = now + (uint64_t)bd->timeout_sync * (k ? k : 1);
}

/* Step 4e: walk down from the root, putting the next entity of each level in service. */
static struct bfq_queue *bfq_set_in_service(struct bfq_data *bd, uint64_t now)
{
	struct bfq_sched *sd = &bd->root;
	struct bfq_entity *e;
	struct bfq_queue *bfqq;

	for (;;) {
		e = bfq_lookup(bd, sd, 0);
		if (!e)
			return NULL;
		bfq_active_extract(bfq_st_of(e), e);
		sd->in_service = e;
		e->service = 0;
		if (!e->child)
			break;
		sd = e->child;
	}
	bfqq = bfq_entity_queue(e);
	bd->in_service = bfqq;
	bfqq->flags &= ~BFQQ_FIFO_EXPIRE;
	bd->budgets_assigned = (bd->budgets_assigned * 7 + 256) / 8;
	/* a soft real-time queue does not lose raising time while it waited for service */
	if (bfqq_softrt_raised(bd, bfqq) && elv_time_before(bfqq->budget_timeout, now)) {
		if (elv_time_after(bfqq->budget_timeout, bfqq->last_wr_start_finish))
			bfqq->last_wr_start_finish += now - bfqq->budget_timeout;
		else
			bfqq->last_wr_start_finish = now;
	}
	bfq_set_budget_timeout(bd, bfqq, now);
	bfq_count(bd, BFQ_ST_SLICES);
	return bfqq;
}

static int bfq_budget_timed_out(const struct bfq_queue *bfqq, uint64_t now)
{
	return !elv_time_before(now, bfqq->budget_timeout);
}

static int bfq_may_expire_for_timeout(const struct bfq_queue *bfqq, uint64_t now)
{
	return (!(bfqq->flags & BFQQ_WAIT_REQUEST) ||
		bfq_budget_left(bfqq) >= elv_div64(bfqq->e.budget, 3)) &&
	       bfq_budget_timed_out(bfqq, now);
}

static int bfq_fits(const struct bfq_data *bd, const struct bfq_queue *c)
{
	return bfqq_busy(c) && c->next_rq && bfq_charge(bd, c, c->next_rq) <= bfq_budget_left(c);
}

/* 1.13: the first busy queue whose next request may be served while @in_serv idles. */
static struct bfq_queue *bfq_choose_injection(const struct elv_queue *q, struct bfq_data *bd,
					      struct bfq_queue *in_serv, uint64_t now)
{
	struct bfq_sync_x *x = in_serv->x;
	uint32_t limit = x ? x->inject_limit : 1;
	struct elv_list *l;

	if (x && limit == 0 && x->last_serv_time_ns == 0 &&
	    (in_serv->flags & BFQQ_WAIT_REQUEST) &&
	    !elv_time_before(now, bd->last_idling_start + (uint64_t)bd->slice_idle))
		limit = 1;
	if (bfq_in_flight(q) >= limit)
		return NULL;
	for (l = bd->busy.next; l != &bd->busy; l = l->next) {
		struct bfq_queue *c = elv_container_of(l, struct bfq_queue, busy_link);

		if (c == in_serv || !bfq_fits(bd, c))
			continue;
		if (!(in_serv->wr_coeff == 1 || !(in_serv->flags & BFQQ_SHORT_TTIME) ||
		      c->wr_coeff > 1))
			continue;
		if (bd->nonrot && c->next_rq->nr_sectors >= BFQ_SECT_THR_NONROT &&
		    bfq_in_flight(q) >= 1)
			continue;
		return c;
	}
	return NULL;
}

/* Step 4d: something to serve while the empty in-service queue keeps the device. */
static struct bfq_queue *bfq_inject(const struct elv_queue *q, struct bfq_data *bd,
				    struct bfq_queue *in_serv, uint64_t now)
{
	struct bfq_queue *c;

	if (in_serv->stream) {
		c = &bfq_stream(in_serv->stream)->async;
		if (c != in_serv && bfq_fits(bd, c))
			return c;
	}
	if (in_serv->x) {
		if ((c = in_serv->x->waker) && bfq_fits(bd, c))
			return c;
		if (!elv_list_empty(&in_serv->x->woken)) {
			struct bfq_sync_x *wx =
				elv_container_of(in_serv->x->woken.next, struct bfq_sync_x, woken_link);

			c = &elv_container_of(wx, struct bfq_stream, x)->sync;
			if (bfq_fits(bd, c))
				return c;
		}
	}
	if (!bfq_idling_boosts_thr(bd, in_serv) &&
	    (in_serv->wr_coeff == 1 || bd->wr_busy_queues > 1 ||
	     !(in_serv->flags & BFQQ_SHORT_TTIME)))
		return bfq_choose_injection(q, bd, in_serv, now);
	return NULL;
}

/* Step 4: the queue to dispatch from now, or NULL to leave the device alone (idling). */
static struct bfq_queue *bfq_select_queue(struct elv_queue *q, struct bfq_data *bd, uint64_t now,
					  int force)
{
	struct bfq_queue *bfqq = bd->in_service;
	enum bfq_reason reason;

	if (!bfqq)
		goto new_queue;
	if (bfq_may_expire_for_timeout(bfqq, now) && !bfq_must_idle(q, bd, bfqq)) {
		reason = BFQ_BUDGET_TIMEOUT;
		goto expire;
	}
check_queue:
	if (bfqq->next_rq) {
		uint64_t c = bfq_charge(bd, bfqq, bfqq->next_rq);

		if (c > bfq_budget_left(bfqq)) {
			/* a fresh slot always serves its first request (the charge may have grown
			 * by the symmetry test since the budget was set): no endless reselection */
			if (bfqq->e.service) {
				reason = BFQ_BUDGET_EXHAUSTED;
				goto expire;
			}
			bfqq->e.budget = c;
		}
		if (bfqq->flags & BFQQ_WAIT_REQUEST) {
			bfqq->flags &= ~BFQQ_WAIT_REQUEST;
			bfq_idle_clear(q, bd, now);
		}
		return bfqq;
	}
	if (!force && ((bfqq->flags & BFQQ_WAIT_REQUEST) ||
		       (bfqq->dispatched && bfq_better_to_idle(q, bd, bfqq)))) {
		struct bfq_queue *c = bfq_inject(q, bd, bfqq, now);

		if (c)
			bfq_count(bd, BFQ_ST_INJECTED);
		return c;
	}
	reason = BFQ_NO_MORE_REQUESTS;
expire:
	bfq_expire(q, bd, bfqq, 0, reason, now);
new_queue:
	bfqq = bfq_set_in_service(bd, now);
	if (bfqq)
		goto check_queue;
	return NULL;
}

/* ---- peak rate (1.13) ---------------------------------------------------------------- */

static void bfq_update_max_budget(struct bfq_data *bd)
{
	if (bd->user_max_budget) {
		bd->bfq_max_budget = (uint64_t)bd->user_max_budget;
		return;
	}
	/* sectors the device moves in one timeout at the peak rate */
	bd->bfq_max_budget = (bd->peak_rate * elv_div64((uint64_t)bd->timeout_sync, BFQ_US)) >>
			     BFQ_RATE_SHIFT;
	if (!bd->bfq_max_budget)
		bd->bfq_max_budget = 1;
}

static void bfq_reset_rate(struct bfq_data *bd, const struct elv_request *rq, uint64_t now)
{
	if (rq) {
		bd->peak_rate_samples = 1;
		bd->sequential_samples = 0;
		bd->tot_sectors_dispatched = rq->nr_sectors;
		bd->last_rq_max_size = rq->nr_sectors;
	} else {
		bd->peak_rate_samples = 0;
		bd->tot_sectors_dispatched = 0;
		bd->last_rq_max_size = 0;
	}
	bd->first_dispatch = now;
	bd->last_dispatch = now;
}

/* Close the window: fold its rate into the estimate if it is trustworthy (step 5). */
static void bfq_close_window(struct bfq_data *bd, const struct elv_request *rq, uint64_t now)
{
	uint64_t delta = bd->delta_from_first, rate, us, w;
	uint32_t div;

	if (bd->peak_rate_samples >= BFQ_RATE_MIN_SAMPLES && delta >= BFQ_RATE_MIN_INTERVAL) {
		if (elv_time_after(bd->last_completion, bd->first_dispatch) &&
		    bd->last_completion - bd->first_dispatch > delta)
			delta = bd->last_completion - bd->first_dispatch;
		us = elv_div64(delta, BFQ_US);
		rate = elv_div64(bfq_min64(bd->tot_sectors_dispatched, 1ULL << 40) << BFQ_RATE_SHIFT,
				 us ? us : 1);
		if (!((bd->sequential_samples < 3 * bd->peak_rate_samples / 4 &&
		       rate <= bd->peak_rate) ||
		      rate > BFQ_RATE_MAX)) {
			w = (9u * bd->sequential_samples) / bd->peak_rate_samples;
			w = bfq_min64(8, elv_div64(w * bfq_min64(delta, 100 * BFQ_S), BFQ_S));
			div = (uint32_t)(10 - w);
			bd->peak_rate = elv_div64(bd->peak_rate * (div - 1), div) + elv_div64(rate, div);
			if (!bd->peak_rate)
				bd->peak_rate = 1;
			bfq_update_max_budget(bd);
			bfq_count(bd, BFQ_ST_PEAK_RATE_UPDATES);
		}
	}
	bfq_reset_rate(bd, rq, now);
}

static int bfq_rq_seeky(const struct bfq_data *bd, uint64_t last, const struct elv_request *rq)
{
	uint64_t d = rq->sector > last ? rq->sector - last : last - rq->sector;

	return d > BFQ_SEEK_THR && (!bd->nonrot || rq->nr_sectors < BFQ_SECT_THR_NONROT);
}

static void bfq_update_peak_rate(const struct elv_queue *q, struct bfq_data *bd,
				 const struct bfq_queue *bfqq, const struct elv_request *rq,
				 uint64_t now)
{
	if (bd->peak_rate_samples == 0) {
		bfq_reset_rate(bd, rq, now);
	} else if (elv_time_after(now, bd->last_dispatch + 100 * BFQ_MS) && !bfq_in_flight(q)) {
		bfq_close_window(bd, rq, now);
	} else {
		bd->peak_rate_samples++;
		if ((bfq_in_flight(q) || elv_time_before(now, bd->last_completion + BFQ_MIN_TT)) &&
		    !bfq_rq_seeky(bd, bd->last_position, rq))
			bd->sequential_samples++;
		bd->tot_sectors_dispatched += rq->nr_sectors;
		if (bd->peak_rate_samples % 32 == 0)
			bd->last_rq_max_size = rq->nr_sectors;
		else
			bd->last_rq_max_size = bfq_max64(bd->last_rq_max_size, rq->nr_sectors);
		bd->delta_from_first = now - bd->first_dispatch;
		if (bd->delta_from_first >= BFQ_RATE_REF_INTERVAL)
			bfq_close_window(bd, rq, now);
	}
	bd->last_position = elv_rq_end(rq);
	if (bfqq == bd->in_service)
		bd->in_serv_last_pos = bd->last_position;
	bd->last_dispatch = now;
}

/* ---- requests ------------------------------------------------------------------------ */

/* The queue of @rq: its stream's sync or async queue, or the root's async one of its class. */
static struct bfq_queue *bfq_rq_queue(struct bfq_data *bd, const struct elv_request *rq)
{
	if (rq->stream) {
		struct bfq_stream *bs = bfq_stream(rq->stream);

		if (!elv_rq_is_sync(rq))
			return &bs->async;
		return bs->host ? &bs->host->sync : &bs->sync;
	}
	return &bd->anon[bfq_class_of(elv_rq_prio(rq))];
}

/*
 * In flight, a request's tree link is free: it carries a stamp naming this instance and the
 * queue, so that only requests this instance dispatched are counted down when they complete.
 */
static void bfq_stamp(const struct bfq_data *bd, struct bfq_queue *bfqq, struct elv_request *rq)
{
	struct elv_rb_node *n = elv_rq_rb(rq);

	n->parent_color = (uintptr_t)bd->epoch;
	n->left = (struct elv_rb_node *)(void *)bfqq;
	n->right = (struct elv_rb_node *)(void *)(uintptr_t)bd;
}

/* The queue that counts @rq in flight (clearing the stamp), or NULL if none does. */
static struct bfq_queue *bfq_unstamp(struct bfq_data *bd, struct elv_request *rq)
{
	struct elv_rb_node *n = elv_rq_rb(rq);
	struct bfq_queue *bfqq = bfq_rq_queue(bd, rq);
	struct bfq_stream *bs = rq->stream && elv_rq_is_sync(rq) ? bfq_stream(rq->stream) : NULL;
	int hosted = bs && bs->host_inflight && n->left == (const void *)bs->old_host;

	if (n->parent_color != (uintptr_t)bd->epoch || (n->left != (void *)bfqq && !hosted) ||
	    n->right != (const void *)bd || !bfqq->dispatched)
		return NULL;
	if (hosted)
		bs->host_inflight--;
	n->parent_color = 0;
	n->left = NULL;
	n->right = NULL;
	bfqq->dispatched--;
	bfq_group_pending(bd, bfqq, 0);
	return bfqq;
}

static void bfq_reset_inject_limit(struct bfq_data *bd, struct bfq_queue *bfqq, uint64_t now)
{
	struct bfq_sync_x *x = bfqq->x;

	x->last_serv_time_ns = 0;
	bd->waited_rq = NULL;
	x->inject_limit = (bfqq->flags & BFQQ_SHORT_TTIME) ? 0 : 1;
	x->decrease_time = now;
}

/* 1.7 step 6. */
static void bfq_update_short_ttime(struct bfq_data *bd, struct bfq_queue *bfqq, uint64_t now)
{
	struct bfq_sync_x *x = bfqq->x;
	int shrt, changed;

	if (!x || bfqq->e.cls == BFQ_IDLE || !bd->slice_idle)
		return;
	/* long beyond half of slice_idle (the 5.8 snapshot: beyond slice_idle) */
	shrt = !(elv_avg_valid(&x->ttime) && x->ttime.mean > ((uint64_t)bd->slice_idle >> 1));
	changed = shrt != ((bfqq->flags & BFQQ_SHORT_TTIME) != 0);
	if (shrt)
		bfqq->flags |= BFQQ_SHORT_TTIME;
	else
		bfqq->flags &= ~BFQQ_SHORT_TTIME;
	if (changed && x->last_serv_time_ns == 0 &&
	    (!elv_time_before(now, x->decrease_time + 100 * BFQ_MS) || !shrt))
		bfq_reset_inject_limit(bd, bfqq, now);
}

/*
 * 1.13: a queue woken three times running by the same queue's completions gets it as waker
 * (the 5.8 snapshot took two detections within 200 us).
 */
static void bfq_check_waker(struct bfq_data *bd, struct bfq_queue *bfqq, uint64_t now)
{
	struct bfq_queue *w = bd->last_completed;
	struct bfq_sync_x *x = bfqq->x;

	if (!w || w == bfqq || (bfqq->flags & BFQQ_SHORT_TTIME) ||
	    !elv_time_before(now, bd->last_completion + 4 * BFQ_MS) || w == x->waker)
		return;
	if (w != x->tentative_waker ||
	    elv_time_after(now, x->waker_detection_started + 128u * (uint64_t)bd->slice_idle)) {
		x->tentative_waker = w;
		x->num_waker_detections = 1;
		x->waker_detection_started = now;
		return;
	}
	if (++x->num_waker_detections != 3)
		return;
	if (x->waker)
		elv_list_del(&x->woken_link);
	x->waker = w;
	if (w->x)
		elv_list_add_tail(&w->x->woken, &x->woken_link);
}

/* 1.14: burst detection when a stream's sync queue gets its first request. */
static void bfq_handle_burst(struct bfq_data *bd, struct bfq_queue *bfqq, uint64_t now)
{
	struct bfq_sync_x *x = bfqq->x;

	if ((bfqq->flags & (BFQQ_IN_BURST_LIST | BFQQ_LARGE_BURST)))
		return;
	if (elv_time_after(now, bd->last_ins_in_burst + BFQ_BURST_INTERVAL) ||
	    bfqq_group(bfqq) != bd->burst_parent) {
		bd->large_burst = 0;
		while (!elv_list_empty(&bd->burst_list)) {
			struct bfq_sync_x *o =
				elv_container_of(bd->burst_list.next, struct bfq_sync_x, burst_link);

			elv_list_del(&o->burst_link);
			elv_container_of(o, struct bfq_stream, x)->sync.flags &= ~BFQQ_IN_BURST_LIST;
		}
		if (bfq_tot_busy(bd) == 0) {
			elv_list_add_tail(&bd->burst_list, &x->burst_link);
			bfqq->flags |= BFQQ_IN_BURST_LIST;
			bd->burst_size = 1;
		} else {
			bd->burst_size = 0;
		}
		bd->burst_parent = bfqq_group(bfqq);
	} else if (bd->large_burst) {
		bfqq->flags |= BFQQ_LARGE_BURST;
	} else if (++bd->burst_size == BFQ_LARGE_BURST) {
		bd->large_burst = 1;
		bfq_count(bd, BFQ_ST_LARGE_BURSTS);
		bfqq->flags |= BFQQ_LARGE_BURST;
		while (!elv_list_empty(&bd->burst_list)) {
			struct bfq_sync_x *o =
				elv_container_of(bd->burst_list.next, struct bfq_sync_x, burst_link);
			struct bfq_queue *oq = &elv_container_of(o, struct bfq_stream, x)->sync;

			elv_list_del(&o->burst_link);
			oq->flags &= ~BFQQ_IN_BURST_LIST;
			oq->flags |= BFQQ_LARGE_BURST;
		}
	} else {
		elv_list_add_tail(&bd->burst_list, &x->burst_link);
		bfqq->flags |= BFQQ_IN_BURST_LIST;
	}
	bd->last_ins_in_burst = now;
}

/* 1.7 steps 5-10 for a stream's sync queue, before @rq is filed. */
static void bfq_sync_arrival(struct bfq_data *bd, struct bfq_queue *bfqq,
			     const struct elv_request *rq, uint64_t now)
{
	struct bfq_sync_x *x = bfqq->x;
	int empty = !bfqq->queued && !bfqq->dispatched;
	uint64_t elapsed;

	if (!bfqq->dispatched && !bfqq_busy(bfqq)) {
		elapsed = bfq_min64(now - x->last_end_request, 2u * (uint64_t)bd->slice_idle);
		if ((int64_t)(now - x->last_end_request) < 0)
			elapsed = 0;
		elv_avg_update(&x->ttime, elapsed);
	}
	bfq_update_short_ttime(bd, bfqq, now);
	/* step 7 */
	bfqq->seek_history = (bfqq->seek_history << 1) |
			     (uint32_t)((bfqq->flags & BFQQ_HAS_POS) &&
					bfq_rq_seeky(bd, bfqq->last_request_pos, rq));
	if (bfqq_softrt_raised(bd, bfqq) && bfqq_totally_seeky(bfqq)) {
		if (elv_time_after(now, bfqq->wr_start_at_switch_to_srt + bfq_wr_duration(bd)))
			bfq_end_wr(bd, bfqq, now);
		else
			bfq_switch_back_to_interactive(bd, bfqq);
	}
	if (empty) {
		bfq_check_waker(bd, bfqq, now);
		if (!elv_time_before(now, x->decrease_time + BFQ_S))
			bfq_reset_inject_limit(bd, bfqq, now);
	}
	/* step 10: I/O boundness over a sliding window of about 200 ms */
	elapsed = now - x->io_start_time;
	if (empty)
		x->tot_idle_time += now - x->last_end_request;
	if (!(bfqq->flags & BFQQ_JUST_CREATED)) {
		if (x->tot_idle_time * 5 > elapsed)
			bfqq->flags &= ~BFQQ_IO_BOUND;
		else
			bfqq->flags |= BFQQ_IO_BOUND;
	}
	if (elapsed > 200 * BFQ_MS) {
		x->io_start_time = now - (elapsed >> 1);
		x->tot_idle_time >>= 1;
	}
}

/* Idle timer (1.12): armed when the in-service queue drains and idling pays. */
static void bfq_arm_idle(struct elv_queue *q, struct bfq_data *bd, struct bfq_queue *bfqq,
			 uint64_t now)
{
	uint64_t t = (uint64_t)bd->slice_idle;

	if (bfqq_seeky(bfqq) && bfqq->wr_coeff == 1 && !bfq_asymmetric(bd, bfqq))
		t = bfq_min64(t, BFQ_MIN_TT);
	else if (bfqq->wr_coeff > 1)
		t = bfq_max64(t, 20 * BFQ_MS);
	bfqq->flags |= BFQQ_WAIT_REQUEST;
	bd->last_idling_start = now;
	bd->idle_end = elv_time_event(now + t);
	elv_idle_start(q, now);
	bfq_count(bd, BFQ_ST_IDLE_WAITS);
}

/* The idle timer fired (1.12 on_timer), at its own time @t. */
static void bfq_idle_fired(struct elv_queue *q, struct bfq_data *bd, uint64_t t)
{
	struct bfq_queue *bfqq = bd->in_service;

	bfq_idle_clear(q, bd, t);
	if (!bfqq || !(bfqq->flags & BFQQ_WAIT_REQUEST))
		return;
	bfqq->flags &= ~BFQQ_WAIT_REQUEST;
	if (bfq_budget_timed_out(bfqq, t))
		bfq_expire(q, bd, bfqq, 1, BFQ_BUDGET_TIMEOUT, t);
	else if (!bfqq->queued)
		bfq_expire(q, bd, bfqq, 1, BFQ_TOO_IDLE, t);
}

/* Every hook starts here: the time, and an idle timer that ran out before @now. */
static void bfq_tick(struct elv_queue *q, struct bfq_data *bd, uint64_t now)
{
	if (!bd->clock_set) {
		unsigned i;

		bd->clock_set = 1;
		bd->root.class_idle_last_service = now;
		bd->last_completion = now;
		for (i = 0; i < BFQ_NR_CLASSES; i++) {
			bd->anon[i].budget_timeout = now - BFQ_LONG_AGO;
			bd->anon[i].last_wr_start_finish = now - BFQ_LONG_AGO;
		}
	}
	bd->now = now;
	if (bd->idle_end != ELV_TIME_NEVER && !elv_time_before(now, bd->idle_end))
		bfq_idle_fired(q, bd, bd->idle_end);
}

static void bfq_file_rq(struct bfq_data *bd, struct bfq_queue *bfqq, struct elv_request *rq)
{
	elv_sort_add(&bfqq->sort, rq);
	elv_fifo_insert_sorted(&bfqq->fifo, rq);
	bfqq->queued++;
	bd->queued++;
	bfqq->next_rq = bfq_choose(bd, bfqq->next_rq, rq, bd->last_position);
}

static void bfq_coop(struct elv_queue *q, struct bfq_data *bd, const struct elv_request *rq,
		     uint64_t now);

static void bfq_add(struct elv_queue *q, struct elv_request *rq, uint64_t now)
{
	struct bfq_data *bd = bfq_data(q);
	struct bfq_queue *bfqq;
	struct elv_request *old_next;
	uint32_t old_coeff;
	int interactive = 0;

	bfq_tick(q, bd, now);
	if (rq->stream && elv_rq_is_sync(rq))
		bfq_coop(q, bd, rq, now);
	bfqq = bfq_rq_queue(bd, rq);
	old_next = bfqq->next_rq;
	old_coeff = bfqq->wr_coeff;
	if (bfqq->x) {
		if ((bfqq->flags & BFQQ_JUST_CREATED) && (bd->burst_size || !bfq_tot_busy(bd)))
			bfq_handle_burst(bd, bfqq, now);
		bfq_sync_arrival(bd, bfqq, rq, now);
		/* step 9: time the service of the first request after the queue emptied */
		if (!bfqq->queued && bfqq == bd->in_service &&
		    (!bfq_in_flight(q) ||
		     (bfqq->x->last_serv_time_ns && bd->rqs_injected && bfq_in_flight(q))) &&
		    !elv_time_before(now, bfqq->x->decrease_time + 10 * BFQ_MS)) {
			bd->last_empty_occupied_ns = now;
			bd->wait_dispatch = 1;
			if (!bfq_in_flight(q))
				bd->rqs_injected = 0;
		}
	}
	bfqq->last_request_pos = elv_rq_end(rq);
	bfqq->flags |= BFQQ_HAS_POS;
	bfq_group_pending(bd, bfqq, 1);
	bfq_file_rq(bd, bfqq, rq);

	if (!bfqq_busy(bfqq)) {
		bfq_add_busy(q, bd, bfqq, &interactive, now);
	} else {
		if (bd->low_latency && old_coeff == 1 && !elv_rq_is_sync(rq) &&
		    elv_time_after(now, bfqq->last_wr_start_finish + BFQ_WR_MIN_INTER_ARR_ASYNC)) {
			bfqq->service_from_wr = 0;
			bfq_set_wr(bd, bfqq, BFQ_WR_COEFF, bfq_wr_duration(bd));
			bfq_wtree_sync(bd, bfqq);
		}
		if (bfqq->next_rq != old_next && bfqq != bd->in_service &&
		    bfqq->e.tree == BFQ_TREE_ACTIVE) {
			bfqq->e.budget = bfq_max64(bfq_max64(bfqq->max_budget,
							     bfq_charge(bd, bfqq, bfqq->next_rq)),
						   bfqq->e.service);
			bfq_requeue_entity(bd, &bfqq->e);
			bfq_group_activate(bd, bfqq->e.sd->owner);
		}
	}
	if (bd->low_latency && (old_coeff == 1 || bfqq->wr_coeff == 1 || interactive))
		bfqq->last_wr_start_finish = now;

	/* step 15: a request for the queue we idle for ends the wait, unless a merge is likely */
	if (bfqq == bd->in_service && (bfqq->flags & BFQQ_WAIT_REQUEST)) {
		int small = bfqq->queued == 1 && rq->nr_sectors < 32;

		if (small && bfq_idling_boosts_thr(bd, bfqq) && !bfq_budget_timed_out(bfqq, now))
			return;
		bfqq->flags &= ~BFQQ_WAIT_REQUEST;
		bfq_idle_clear(q, bd, now);
		if (bfq_budget_timed_out(bfqq, now))
			bfq_expire(q, bd, bfqq, 0, BFQ_BUDGET_TIMEOUT, now);
	}
}

/* Unlink a queued request; @next and @prev are its neighbours for the next_rq choice. */
static void bfq_unfile_rq(struct bfq_data *bd, struct bfq_queue *bfqq, struct elv_request *rq)
{
	struct elv_request *prev = elv_sort_prev(rq);
	struct elv_request *next = elv_sort_del_next(&bfqq->sort, rq);

	elv_list_del(elv_rq_fifo(rq));
	bfqq->queued--;
	bd->queued--;
	if (bfqq->next_rq == rq)
		bfqq->next_rq = bfq_find_next(bd, bfqq, rq, next, prev);
}

/* The queue emptied: unless it is in service (it may idle), it is no longer busy. */
static void bfq_emptied(struct bfq_data *bd, struct bfq_queue *bfqq)
{
	if (!bfqq->queued && bfqq_busy(bfqq) && bfqq != bd->in_service) {
		bfqq->e.budget = 0;
		bfqq->e.service = 0;
		bfq_del_busy(bd, bfqq, 1);
	}
}

/* ---- queue merging (1.15) ------------------------------------------------------------ */

/*
 * Split @host from its guest: the guest's queued requests go back to its own sync queue, in
 * their order, and its requests in flight are counted there from now on (their stamps still
 * name the host's queue, which old_host remembers).
 */
static void bfq_split(struct elv_queue *q, struct bfq_data *bd, struct bfq_stream *host,
		      uint64_t now)
{
	struct bfq_stream *guest = host->guest;
	struct elv_list *l, *nx;
	int interactive = 0;

	host->guest = NULL;
	guest->host = NULL;
	for (l = host->sync.fifo.next; l != &host->sync.fifo; l = nx) {
		struct elv_request *rq = elv_list_rq(l);

		nx = l->next;
		if (rq->stream != guest->sync.stream)
			continue;
		bfq_unfile_rq(bd, &host->sync, rq);
		bfq_file_rq(bd, &guest->sync, rq);
	}
	host->sync.dispatched -= guest->host_inflight;
	guest->sync.dispatched += guest->host_inflight;
	bfq_wtree_sync(bd, &host->sync);
	bfq_wtree_sync(bd, &guest->sync);
	bfq_emptied(bd, &host->sync);
	if (guest->sync.queued && !bfqq_busy(&guest->sync))
		bfq_add_busy(q, bd, &guest->sync, &interactive, now);
}

/* Whether @c's stream may take in the stream of @bfqq (1.15: both sync, alike, not seeky). */
static int bfq_may_host(const struct bfq_queue *bfqq, const struct bfq_queue *c)
{
	const struct bfq_stream *cs;

	if (!c || c == bfqq || !c->x || !c->stream || c->e.cls != bfqq->e.cls ||
	    c->e.cls == BFQ_IDLE || c->e.sd != bfqq->e.sd || bfqq_seeky(c))
		return 0;
	cs = bfq_stream(c->stream);
	return c == &cs->sync && !cs->host && !cs->guest;
}

static int bfq_close(uint64_t a, uint64_t b)
{
	return (a > b ? a - b : b - a) <= BFQ_CLOSE_THR;
}

/*
 * Before a sync request of a stream is filed: split a merged queue that turned seeky, or merge
 * the stream into the queue of a cooperating one (1.15 EQM), except on non-rotational devices
 * that queue commands. Only a stream whose own sync queue is idle and empty is merged.
 */
static void bfq_coop(struct elv_queue *q, struct bfq_data *bd, const struct elv_request *rq,
		     uint64_t now)
{
	struct bfq_stream *bs = bfq_stream(rq->stream);
	struct bfq_queue *bfqq = &bs->sync, *c = NULL;
	struct elv_list *l;

	if (bs->host || bs->guest) {
		struct bfq_stream *host = bs->host ? bs->host : bs;

		/* switched off since: the merge ends at the next arrival, as a seeky one does */
		if (!bd->queue_merging || bfqq_seeky(&host->sync))
			bfq_split(q, bd, host, now);
		return;
	}
	/* Off by default: streams are explicit, and merging them is the host's choice. */
	if (!bd->queue_merging)
		return;
	/* the cheap tests first: this runs for every sync arrival */
	if ((bd->nonrot && bd->hw_tag) || bfqq_busy(bfqq) || bfqq->dispatched ||
	    bs->host_inflight || bfqq->e.cls == BFQ_IDLE || !bfq_tot_busy(bd) ||
	    (bs->x.service_from_backlogged && bfqq->first_io_time &&
	     elv_time_after(now, bfqq->first_io_time + BFQ_COOP_AGE)) || bfqq_seeky(bfqq))
		return;
	if (bfq_may_host(bfqq, bd->in_service) && bfq_close(bd->in_serv_last_pos, rq->sector)) {
		c = bd->in_service;
	} else {
		for (l = bd->busy.next; l != &bd->busy && !c; l = l->next) {
			struct bfq_queue *o = elv_container_of(l, struct bfq_queue, busy_link);

			if (o->next_rq && bfq_close(o->next_rq->sector, rq->sector) &&
			    bfq_may_host(bfqq, o))
				c = o;
		}
	}
	if (!c)
		return;
	bs->host = bfq_stream(c->stream);
	bs->host->guest = bs;
	bs->old_host = c;
}

/* A stream leaves or changes group: its merge ends first, so every request keeps a queue. */
static void bfq_unmerge(struct elv_queue *q, struct bfq_data *bd, struct bfq_stream *bs)
{
	if (bs->guest)
		bfq_split(q, bd, bs, bd->now);
	if (bs->host) {
		bs->host->guest = NULL;
		bs->host = NULL;
	}
}

static void bfq_remove(struct elv_queue *q, struct elv_request *rq)
{
	struct bfq_data *bd = bfq_data(q);
	struct bfq_queue *bfqq = bfq_rq_queue(bd, rq);

	bfq_unfile_rq(bd, bfqq, rq);
	bfq_group_pending(bd, bfqq, 0);
	bfq_emptied(bd, bfqq);
}

static void bfq_merged(struct elv_queue *q, struct elv_request *rq, enum elv_merge_kind kind,
		       struct elv_request *next)
{
	struct bfq_data *bd = bfq_data(q);
	struct bfq_queue *bfqq = bfq_rq_queue(bd, rq);

	if (kind == ELV_MERGE_FRONT) {
		/* its start moved: re-file it in sector order */
		elv_sort_del(&bfqq->sort, rq);
		elv_sort_add(&bfqq->sort, rq);
		bfqq->next_rq = bfq_choose(bd, bfqq->next_rq, rq, bd->last_position);
	} else if (kind == ELV_MERGE_REQ && next) {
		elv_fifo_inherit(rq, next);
		if (bfqq->next_rq == next)
			bfqq->next_rq = rq;
	}
}

/* Merges stay within one queue (one stream, one direction of sync-ness). */
static int bfq_allow_merge(const struct elv_queue *q, const struct elv_request *rq,
			   const struct elv_request *next)
{
	struct bfq_data *bd = bfq_data(q);

	return bfq_rq_queue(bd, rq) == bfq_rq_queue(bd, next);
}

static struct elv_request *bfq_find_next_merge(struct elv_queue *q, const struct elv_request *rq)
{
	struct bfq_queue *bfqq = bfq_rq_queue(bfq_data(q), rq);
	struct elv_request *n = elv_sort_find(&bfqq->sort, elv_rq_end(rq));
	unsigned i;

	for (i = 0; n && i < ELV_SAME_SECTOR_SCAN && n->sector == elv_rq_end(rq);
	     i++, n = elv_sort_next(n))
		if (n != rq && n->op == rq->op && elv_rq_mergeable(n))
			return n;
	return NULL;
}

/* 1.9 steps 5-7. */
static struct elv_request *bfq_dispatch_from(struct elv_queue *q, struct bfq_data *bd,
					     struct bfq_queue *bfqq, uint64_t now)
{
	struct elv_request *rq = bfqq->next_rq;
	uint64_t c = bfq_charge(bd, bfqq, rq);

	bfq_served(&bfqq->e, c);
	if (bfqq->x)
		bfqq->x->service_from_backlogged += c;
	if (bfqq->wr_coeff > 1)
		bfqq->service_from_wr += c;
	if (!bfqq->first_io_time)
		bfqq->first_io_time = now;
	if (bfqq == bd->in_service && bd->wait_dispatch) {
		bd->wait_dispatch = 0;
		bd->waited_rq = rq;
	}
	if (bfqq != bd->in_service && bd->in_service)
		bd->rqs_injected = 1;
	bfq_update_peak_rate(q, bd, bfqq, rq, now);
	bfq_unfile_rq(bd, bfqq, rq);
	bfqq->dispatched++;
	bfq_stamp(bd, bfqq, rq);
	if (rq->stream && elv_rq_is_sync(rq) && bfq_stream(rq->stream)->host)
		bfq_stream(rq->stream)->host_inflight++;
	bfq_emptied(bd, bfqq);
	if (bfqq == bd->in_service) {
		bfq_update_wr_data(bd, bfqq, now);
		if (bfqq->e.cls == BFQ_IDLE && bfq_tot_busy(bd) > 1)
			bfq_expire(q, bd, bfqq, 0, BFQ_BUDGET_EXHAUSTED, now);
	}
	return rq;
}

static struct elv_request *bfq_dispatch(struct elv_queue *q, uint64_t now, int force)
{
	struct bfq_data *bd = bfq_data(q);
	struct bfq_queue *bfqq;

	bfq_tick(q, bd, now);
	if (!bd->queued)
		return NULL;
	if (bd->strict_guarantees && bfq_in_flight(q) && !force)
		return NULL;
	bfqq = bfq_select_queue(q, bd, now, force);
	if (!bfqq || !bfqq->next_rq)
		return NULL;
	return bfq_dispatch_from(q, bd, bfqq, now);
}

static struct elv_request *bfq_oldest(struct elv_queue *q)
{
	struct bfq_data *bd = bfq_data(q);
	struct elv_request *best = NULL, *rq;
	struct elv_list *l;

	for (l = bd->busy.next; l != &bd->busy; l = l->next) {
		rq = elv_list_first_rq(&elv_container_of(l, struct bfq_queue, busy_link)->fifo);
		if (rq && (!best || elv_rq_seq_cmp(rq, best) < 0))
			best = rq;
	}
	return best;
}

/* 1.13: adapt the injection limit from the service time of the timed request. */
static void bfq_update_inject_limit(struct bfq_data *bd, struct bfq_queue *bfqq,
				    uint32_t in_flight, uint64_t now)
{
	struct bfq_sync_x *x = bfqq->x;
	uint64_t tot = now - bd->last_empty_occupied_ns;
	uint32_t old = x->inject_limit;

	if (x->last_serv_time_ns > 0 && bd->rqs_injected) {
		uint64_t thr = (x->last_serv_time_ns * 3) >> 1;

		if (tot >= thr && old > 0) {
			x->inject_limit--;
			x->decrease_time = now;
		} else if (tot < thr && old <= bd->max_rq_in_driver) {
			x->inject_limit++;
		}
	}
	if ((x->last_serv_time_ns == 0 && in_flight == 1) || tot < x->last_serv_time_ns) {
		if (x->last_serv_time_ns == 0)
			x->inject_limit = old > 1 ? old : 1;
		x->last_serv_time_ns = tot;
	} else if (!bd->rqs_injected && in_flight == 1) {
		x->last_serv_time_ns = tot;
	}
	bd->waited_rq = NULL;
	bd->rqs_injected = 0;
}

static void bfq_requeue(struct elv_queue *q, struct elv_request *rq, uint64_t now)
{
	struct bfq_data *bd = bfq_data(q);
	struct bfq_queue *bfqq;

	bfq_tick(q, bd, now);
	if (bd->waited_rq == rq)
		bd->waited_rq = NULL;
	bfqq = bfq_unstamp(bd, rq);
	if (bfqq)
		bfq_wtree_sync(bd, bfqq);
}

static void bfq_complete(struct elv_queue *q, struct elv_request *rq, uint64_t now)
{
	struct bfq_data *bd = bfq_data(q);
	struct bfq_queue *bfqq;
	uint32_t in_flight = bfq_in_flight(q) + 1; /* the core counted this one out already */
	uint64_t since;

	bfq_tick(q, bd, now);
	if (in_flight > bd->max_rq_in_driver)
		bd->max_rq_in_driver = in_flight;
	bfqq = bfq_unstamp(bd, rq);
	if (!bfqq)
		return; /* dispatched by an earlier instance, or counted back on a requeue */
	if (rq == bd->waited_rq && bfqq->x)
		bfq_update_inject_limit(bd, bfqq, in_flight, now);
	if (!bfqq->dispatched && !bfqq_busy(bfqq))
		bfqq->budget_timeout = now;
	bfq_wtree_sync(bd, bfqq);
	if (bfqq->x)
		bfqq->x->last_end_request = now;
	/* step 4: a long gap with little moved closes the peak-rate window without a sample */
	since = now - bd->last_completion;
	if (since > BFQ_MIN_TT && bd->last_rq_max_size * 1024 < elv_div64(since, BFQ_US))
		bfq_close_window(bd, NULL, now);
	bd->last_completion = now;
	bd->last_completed = bfqq->x ? bfqq : NULL;
	/* step 5 */
	if ((bfqq->flags & BFQQ_SOFTRT_UPDATE) && !bfqq->queued && !bfqq->dispatched &&
	    (bfqq->wr_coeff == 1 || bfqq_softrt_raised(bd, bfqq)) && bfqq->x) {
		bfqq->x->soft_rt_next_start = bfq_softrt_next_start(bd, bfqq, now);
		bfqq->flags &= ~BFQQ_SOFTRT_UPDATE;
	}
	/* step 6 */
	if (bfqq != bd->in_service)
		return;
	if (bfq_must_idle(q, bd, bfqq)) {
		if (!bfqq->dispatched && !(bfqq->flags & BFQQ_WAIT_REQUEST))
			bfq_arm_idle(q, bd, bfqq, now);
	} else if (bfq_may_expire_for_timeout(bfqq, now)) {
		bfq_expire(q, bd, bfqq, 0, BFQ_BUDGET_TIMEOUT, now);
	} else if (!bfqq->queued &&
		   (!bfqq->dispatched || !bfq_better_to_idle(q, bd, bfqq))) {
		bfq_expire(q, bd, bfqq, 0, BFQ_NO_MORE_REQUESTS, now);
	}
}

static uint64_t bfq_next_event(const struct elv_queue *q)
{
	const struct bfq_data *bd = bfq_data(q);

	return bd->queued ? bd->idle_end : ELV_TIME_NEVER;
}

/* ---- setup, streams and groups ------------------------------------------------------- */

static void bfq_init_queue(struct bfq_data *bd, struct bfq_queue *bfqq, struct bfq_sched *sd,
			   struct elv_stream *s, struct bfq_sync_x *x, uint64_t now)
{
	uint32_t w;
	unsigned cls;

	elv_list_init(&bfqq->fifo);
	elv_list_init(&bfqq->busy_link);
	bfqq->e.sd = sd;
	bfqq->stream = s;
	bfqq->x = x;
	bfqq->wr_coeff = 1;
	bfqq->flags = BFQQ_IO_BOUND;
	bfqq->max_budget = elv_div64(2 * bfq_dev_max_budget(bd), 3);
	bfqq->budget_timeout = now - BFQ_LONG_AGO;
	bfqq->last_wr_start_finish = now - BFQ_LONG_AGO;
	bfqq->wr_start_at_switch_to_srt = now - BFQ_LONG_AGO;
	bfq_target(&bfqq->e, &w, &cls);
	bfqq->e.orig_weight = w;
	bfqq->e.weight = w;
	bfqq->e.cls = (uint8_t)cls;
	if (!x)
		return;
	bfqq->flags |= BFQQ_SYNC | BFQQ_JUST_CREATED;
	if (cls != BFQ_IDLE)
		bfqq->flags |= BFQQ_SHORT_TTIME;
	elv_list_init(&x->woken);
	elv_list_init(&x->woken_link);
	elv_list_init(&x->burst_link);
	x->last_end_request = now;
	x->io_start_time = now;
	x->soft_rt_next_start = now;
	x->decrease_time = now;
}

static void bfq_tunable_changed(struct elv_queue *q, const struct elv_tunable *t)
{
	struct bfq_data *bd = bfq_data(q);
	struct elv_stream *s;
	unsigned i;

	/* turning strict guarantees on raises idling to 8 ms; later slice_idle writes stand */
	if (bd->strict_guarantees && !bd->strict_was_on && bd->slice_idle < (int64_t)(8 * BFQ_MS))
		bd->slice_idle = (int64_t)(8 * BFQ_MS);
	bd->strict_was_on = bd->strict_guarantees != 0;
	bfq_update_max_budget(bd);
	if (bd->low_latency || !t)
		return;
	/* low_latency off ends every raising at once */
	for (s = elv_queue_stream_next(q, NULL); s; s = elv_queue_stream_next(q, s)) {
		bfq_end_wr(bd, &bfq_stream(s)->sync, bd->now);
		bfq_end_wr(bd, &bfq_stream(s)->async, bd->now);
		bfq_wtree_sync(bd, &bfq_stream(s)->sync);
		bfq_wtree_sync(bd, &bfq_stream(s)->async);
	}
	for (i = 0; i < BFQ_NR_CLASSES; i++) {
		bfq_end_wr(bd, &bd->anon[i], bd->now);
		bfq_wtree_sync(bd, &bd->anon[i]);
	}
}

static void bfq_init(struct elv_queue *q)
{
	struct bfq_data *bd = bfq_data(q);
	const struct elv_config *cfg = elv_queue_config(q);
	struct elv_stats st;
	unsigned i;

	elv_list_init(&bd->busy);
	elv_list_init(&bd->burst_list);
	bd->idle_end = ELV_TIME_NEVER;
	bd->nonrot = !cfg->dev.rotational;
	bd->hw_tag = cfg->dev.queue_depth > BFQ_HW_TAG_THR; /* the detector's threshold, static */
	/* reference rate and raising duration of the device kind (1.4), rate at 2/3 of it */
	bd->peak_rate = bd->nonrot ? 33000 : 14000;
	bd->rate_dur_prod = bd->peak_rate * (bd->nonrot ? 2500 : 7000) * BFQ_MS;
	bd->peak_rate = elv_div64(bd->peak_rate * 2, 3);
	for (i = 0; i < BFQ_NR_CLASSES; i++)
		bfq_init_queue(bd, &bd->anon[i], &bd->root, NULL, NULL, 0);
	/* grows with every add and dispatch, so an earlier instance's stamps never match */
	if (elv_stats(q, &st) == 0)
		bd->epoch = st.added + st.dispatched[0] + st.dispatched[1] + st.requeued + 1;
	else
		bd->epoch = 1; /* ELV_NO_STATS, hence no elv_switch(): the only instance */
	bfq_tunable_changed(q, NULL);
}

static struct bfq_sched *bfq_stream_sched(struct bfq_data *bd, const struct elv_stream *s)
{
	struct elv_group *g = elv_stream_group(s);

	return g ? &bfq_group(g)->sd : &bd->root;
}

static void bfq_stream_init(struct elv_queue *q, struct elv_stream *s, uint64_t now)
{
	struct bfq_data *bd = bfq_data(q);
	struct bfq_stream *bs = bfq_stream(s);
	struct bfq_sched *sd = bfq_stream_sched(bd, s);

	bfq_tick(q, bd, now);
	bfq_init_queue(bd, &bs->sync, sd, s, &bs->x, now);
	bfq_init_queue(bd, &bs->async, sd, s, NULL, now);
}

/* A queue is going away or moving: nothing may keep pointing at it or count it. */
static void bfq_queue_detach(struct elv_queue *q, struct bfq_data *bd, struct bfq_queue *bfqq)
{
	struct bfq_sync_x *x = bfqq->x;
	struct elv_stream *s;

	if (bd->in_service == bfqq)
		bfq_expire(q, bd, bfqq, 0, BFQ_NO_MORE_REQUESTS, bd->now);
	if (bfqq_busy(bfqq))
		bfq_del_busy(bd, bfqq, 0);
	if (bfqq->e.tree == BFQ_TREE_IDLE)
		bfq_idle_extract(bfq_st_of(&bfqq->e), &bfqq->e);
	bfq_forget(bfq_st_of(&bfqq->e), &bfqq->e);
	bfq_wtree_del(bd, bfqq);
	bfq_group_settle(bd, bfqq->e.sd->owner, 0);
	if (bd->last_completed == bfqq)
		bd->last_completed = NULL;
	if (!x)
		return;
	if (bfqq->flags & BFQQ_IN_BURST_LIST) {
		elv_list_del(&x->burst_link);
		bfqq->flags &= ~BFQQ_IN_BURST_LIST;
		if (bd->burst_size)
			bd->burst_size--;
	}
	if (x->waker) {
		elv_list_del(&x->woken_link);
		x->waker = NULL;
	}
	while (!elv_list_empty(&x->woken)) {
		struct bfq_sync_x *o = elv_container_of(x->woken.next, struct bfq_sync_x, woken_link);

		elv_list_del(&o->woken_link);
		o->waker = NULL;
	}
	for (s = elv_queue_stream_next(q, NULL); s; s = elv_queue_stream_next(q, s))
		if (bfq_stream(s)->x.tentative_waker == bfqq)
			bfq_stream(s)->x.tentative_waker = NULL;
}

static void bfq_stream_exit(struct elv_queue *q, struct elv_stream *s, uint64_t now)
{
	struct bfq_data *bd = bfq_data(q);

	bfq_tick(q, bd, now);
	bfq_unmerge(q, bd, bfq_stream(s));
	bfq_queue_detach(q, bd, &bfq_stream(s)->sync);
	bfq_queue_detach(q, bd, &bfq_stream(s)->async);
}

static void bfq_group_init(struct elv_queue *q, struct elv_group *g, uint64_t now)
{
	struct bfq_data *bd = bfq_data(q);
	struct bfq_group *bg = bfq_group(g);

	bfq_tick(q, bd, now);
	bg->g = g;
	bg->e.sd = &bd->root;
	bg->e.child = &bg->sd;
	bg->e.cls = BFQ_BE;
	bg->e.weight = g->weight;
	bg->e.orig_weight = g->weight;
	bg->sd.owner = &bg->e;
	bg->sd.class_idle_last_service = now;
}

static void bfq_group_exit(struct elv_queue *q, struct elv_group *g, uint64_t now)
{
	struct bfq_data *bd = bfq_data(q);
	struct bfq_group *bg = bfq_group(g);

	bfq_tick(q, bd, now);
	if (bg->e.tree == BFQ_TREE_ACTIVE || bg->e.sd->in_service == &bg->e)
		bfq_deactivate(&bg->e, 0);
	if (bg->e.tree == BFQ_TREE_IDLE)
		bfq_idle_extract(bfq_st_of(&bg->e), &bg->e);
	bfq_forget(bfq_st_of(&bg->e), &bg->e);
	if (bg->pending)
		bd->num_groups_pending--;
	bg->pending = 0;
	if (bd->burst_parent == bg)
		bd->burst_parent = NULL;
}

/*
 * A weight or membership changed. Weights apply lazily (at the next activation or requeue,
 * as in Linux); a stream that moved group (it holds no request) takes its queues along.
 */
static void bfq_reweight(struct elv_queue *q, struct elv_stream *s,
			 const struct elv_group *old)
{
	struct bfq_data *bd = bfq_data(q);
	struct bfq_stream *bs;
	struct bfq_sched *sd;

	if (!s || (old == elv_stream_group(s) && bfq_stream(s)->sync.e.sd == bfq_stream_sched(bd, s)))
		return;
	bs = bfq_stream(s);
	sd = bfq_stream_sched(bd, s);
	bfq_unmerge(q, bd, bs);
	bfq_queue_detach(q, bd, &bs->sync);
	bfq_queue_detach(q, bd, &bs->async);
	bs->sync.e.sd = sd;
	bs->async.e.sd = sd;
}

static void bfq_stats(const struct elv_queue *q, uint64_t *vals)
{
	const struct bfq_data *bd = bfq_data(q);
	unsigned i;

	for (i = 0; i < BFQ_NR_STATS; i++)
		vals[i] = bd->stat[i];
}

/* ---- invariants ---------------------------------------------------------------------- */

#define BFQ_CHECK(cond)                                                                    \
	do {                                                                               \
		if (!(cond))                                                               \
			return ELV_EINVAL;                                                 \
	} while (0)

/* The entities of one tree of @st, in key order, of this scheduler and class; adds W. */
static int bfq_check_tree(const struct bfq_sched *sd, const struct elv_rb_root *t, unsigned cls,
			  int kind, uint64_t vtime, uint64_t *w)
{
	const struct elv_rb_node *n;
	const struct bfq_entity *e, *prev = NULL;

	BFQ_CHECK(elv_rb_check(t) == 0);
	for (n = t->first; n; n = elv_rb_next(n), prev = e) {
		e = bfq_node_entity(n);
		BFQ_CHECK(e->on_st && e->sd == sd && e->cls == cls);
		if (kind == 0) /* eligible: by F, and S <= V */
			BFQ_CHECK(e->tree == BFQ_TREE_ACTIVE && e->elig && !bfq_gt(e->start, vtime) &&
				  (!prev || !bfq_gt(prev->finish, e->finish)));
		else if (kind == 1) /* pending: by S */
			BFQ_CHECK(e->tree == BFQ_TREE_ACTIVE && !e->elig &&
				  (!prev || !bfq_gt(prev->start, e->start)));
		else
			BFQ_CHECK(e->tree == BFQ_TREE_IDLE &&
				  (!prev || !bfq_gt(prev->finish, e->finish)));
		*w += e->weight;
	}
	return 0;
}

/* One service tree: its trees ordered, the idle ends known, W the sum of its weights. */
static int bfq_check_st(const struct bfq_sched *sd, const struct bfq_st *st, unsigned cls)
{
	uint64_t w = 0;

	BFQ_CHECK(bfq_check_tree(sd, &st->elig, cls, 0, st->vtime, &w) == 0);
	BFQ_CHECK(bfq_check_tree(sd, &st->pend, cls, 1, st->vtime, &w) == 0);
	BFQ_CHECK(bfq_check_tree(sd, &st->idle, cls, 2, st->vtime, &w) == 0);
	BFQ_CHECK(st->first_idle == bfq_node_entity(st->idle.first));
	BFQ_CHECK(!st->last_idle == !st->idle.root);
	if (sd->in_service && sd->in_service->cls == cls) {
		BFQ_CHECK(sd->in_service->on_st && sd->in_service->tree == BFQ_TREE_NONE);
		w += sd->in_service->weight;
	}
	BFQ_CHECK(w == st->wsum);
	return 0;
}

static int bfq_check_sched(const struct bfq_sched *sd)
{
	unsigned c;

	for (c = 0; c < BFQ_NR_CLASSES; c++)
		if (bfq_check_st(sd, &sd->st[c], c))
			return ELV_EINVAL;
	return 0;
}

/* One queue: requests in both orders, next_rq among them, busy when it holds some. */
static int bfq_check_queue(const struct bfq_data *bd, const struct bfq_queue *bfqq,
			   uint32_t *queued, uint32_t *busy)
{
	const struct elv_request *rq, *prev = NULL;
	const struct elv_list *l;
	uint32_t n = 0;
	int next_seen = 0;

	BFQ_CHECK(elv_rb_check(&bfqq->sort) == 0);
	for (rq = elv_sort_first(&bfqq->sort); rq; prev = rq, rq = elv_sort_next(rq), n++) {
		BFQ_CHECK(elv_rq_state(rq) == ELV_RQ_QUEUED && (!prev || prev->sector <= rq->sector));
		BFQ_CHECK(bfq_rq_queue((struct bfq_data *)(uintptr_t)bd, rq) == bfqq);
		next_seen |= rq == bfqq->next_rq;
	}
	BFQ_CHECK(n == bfqq->queued && (n ? next_seen : !bfqq->next_rq));
	prev = NULL;
	for (l = bfqq->fifo.next; l != &bfqq->fifo; l = l->next, n--) {
		rq = elv_list_rq(l);
		BFQ_CHECK(n && (!prev || elv_rq_seq_cmp(prev, rq) < 0));
		prev = rq;
	}
	BFQ_CHECK(n == 0);
	if (bfqq->queued)
		BFQ_CHECK(bfqq_busy(bfqq));
	if (bfqq_busy(bfqq)) {
		/* empty only in service, or preempted while idling was owed to it (1.10 step 8) */
		BFQ_CHECK(bfqq->e.tree == BFQ_TREE_ACTIVE || bfqq->e.sd->in_service == &bfqq->e);
		busy[bfqq->e.cls]++;
	} else {
		BFQ_CHECK(bfqq->e.tree != BFQ_TREE_ACTIVE && bfqq->e.sd->in_service != &bfqq->e);
	}
	BFQ_CHECK(!(bfqq->flags & BFQQ_IN_WTREE) == !((bfqq_busy(bfqq) || bfqq->dispatched) &&
						       bfqq->wr_coeff == 1) ||
		  bfqq->wkey != bfqq->e.weight);
	*queued += bfqq->queued;
	return 0;
}

static int bfq_check(const struct elv_queue *q)
{
	const struct bfq_data *bd = bfq_data(q);
	const struct elv_stream *s;
	const struct elv_group *g;
	uint32_t queued = 0, busy[BFQ_NR_CLASSES] = { 0, 0, 0 }, nb = 0;
	const struct elv_list *l;
	unsigned i;

	BFQ_CHECK(bfq_check_sched(&bd->root) == 0 && elv_rb_check(&bd->wtree) == 0);
	for (g = elv_queue_group_next(q, NULL); g; g = elv_queue_group_next(q, g)) {
		const struct bfq_group *bg = bfq_group(g);

		BFQ_CHECK(bfq_check_sched(&bg->sd) == 0 && bg->e.child == &bg->sd);
		/* a group competes at the root exactly while one of its queues does */
		BFQ_CHECK((bfq_sched_active(&bg->sd) || bg->sd.in_service) ==
			  (bg->e.tree == BFQ_TREE_ACTIVE || bd->root.in_service == &bg->e));
	}
	for (s = elv_queue_stream_next(q, NULL); s; s = elv_queue_stream_next(q, s)) {
		const struct bfq_stream *bs = bfq_stream(s);

		BFQ_CHECK(bs->sync.e.sd == bfq_stream_sched((struct bfq_data *)(uintptr_t)bd, s));
		if (bfq_check_queue(bd, &bs->sync, &queued, busy) ||
		    bfq_check_queue(bd, &bs->async, &queued, busy))
			return ELV_EINVAL;
	}
	for (i = 0; i < BFQ_NR_CLASSES; i++)
		if (bfq_check_queue(bd, &bd->anon[i], &queued, busy))
			return ELV_EINVAL;
	for (i = 0; i < BFQ_NR_CLASSES; i++)
		BFQ_CHECK(busy[i] == bd->busy_queues[i]);
	for (l = bd->busy.next; l != &bd->busy; l = l->next)
		nb++;
	BFQ_CHECK(nb == bfq_tot_busy(bd));
	BFQ_CHECK(queued == bd->queued && queued == elv_queue_head(q)->nr_queued);
	BFQ_CHECK(!bd->in_service || bfqq_busy(bd->in_service));
	BFQ_CHECK((bd->idle_end != ELV_TIME_NEVER) ==
		  (bd->in_service && (bd->in_service->flags & BFQQ_WAIT_REQUEST)));
	/* the core may end the idle period itself (a drain): then the timer only lingers */
	BFQ_CHECK(!elv_is_idling(q) || bd->idle_end != ELV_TIME_NEVER);
	return 0;
}

/* ---- policy -------------------------------------------------------------------------- */

#define BFQ_OFF(f) ((uint32_t)offsetof(struct bfq_data, f))
#define BFQ_INT_MAX 2147483647LL
/* slice_idle in ms stops where slice_idle_us, the same value, would leave its range */
#define BFQ_SLICE_IDLE_MS_MAX (BFQ_INT_MAX / 1000)

static const struct elv_tunable bfq_tunables[] = {
	{"slice_idle", "ms", "wait for a drained sync queue's next request; 0 disables idling", 8,
	 0, BFQ_SLICE_IDLE_MS_MAX, BFQ_OFF(slice_idle), (uint32_t)BFQ_MS},
	{"slice_idle_us", "us", "slice_idle in microseconds (the same setting)", 8000, 0,
	 BFQ_INT_MAX, BFQ_OFF(slice_idle), (uint32_t)BFQ_US},
	{"strict_guarantees", "bool",
	 "idle whenever a queue drains and keep one request in flight: guarantees over throughput",
	 0, 0, 1, BFQ_OFF(strict_guarantees), 1},
	{"low_latency", "bool", "raise the weight of interactive and soft real-time streams", 1, 0,
	 1, BFQ_OFF(low_latency), 1},
	{"timeout_sync", "ms", "longest a queue keeps the device for one budget", 125, 1,
	 BFQ_INT_MAX, BFQ_OFF(timeout_sync), (uint32_t)BFQ_MS},
	{"max_budget", "sectors", "largest budget; 0 derives it from the measured peak rate", 0, 0,
	 BFQ_INT_MAX, BFQ_OFF(user_max_budget), 1},
	{"fifo_expire_sync", "ms", "age at which a sync request is served out of sector order",
	 125, 1, BFQ_INT_MAX, BFQ_OFF(fifo_expire_sync), (uint32_t)BFQ_MS},
	{"fifo_expire_async", "ms", "age at which an async request is served out of sector order",
	 250, 1, BFQ_INT_MAX, BFQ_OFF(fifo_expire_async), (uint32_t)BFQ_MS},
	{"back_seek_max", "KiB", "farthest backward seek still taken in sweep order", 16384, 0,
	 BFQ_INT_MAX, BFQ_OFF(back_seek_max), 1},
	{"back_seek_penalty", "factor", "cost of a backward seek relative to a forward one", 2, 1,
	 BFQ_INT_MAX, BFQ_OFF(back_seek_penalty), 1},
	{"queue_merging", "bool",
	 "serve two streams doing interleaved sync I/O close together from one queue (1.15)", 0, 0,
	 1, BFQ_OFF(queue_merging), 1},
};

static const char *const bfq_stat_names[BFQ_NR_STATS] = {
	"slices",           "expired_too_idle", "expired_budget_timeout", "expired_budget_exhausted",
	"expired_no_more_requests", "preemptions", "idle_waits", "injections",
	"wr_interactive",   "wr_soft_rt",       "large_bursts",     "fifo_expired",
	"peak_rate_updates",
};

const struct elv_policy elv_policy_bfq = {
	.abi = ELV_POLICY_ABI,
	.struct_size = sizeof(struct elv_policy),
	.name = "bfq",
	.desc = "budget fair queueing: weighted shares of sectors, groups, weight raising",
	.data_size = sizeof(struct bfq_data),
	.tunables = bfq_tunables,
	.nr_tunables = sizeof(bfq_tunables) / sizeof(bfq_tunables[0]),
	.stat_names = bfq_stat_names,
	.nr_stats = BFQ_NR_STATS,
	.init = bfq_init,
	.tunable_changed = ELV_POLICY_TUNED(bfq_tunable_changed),
	.add = bfq_add,
	.remove = bfq_remove,
	.merged = ELV_POLICY_MERGE(bfq_merged),
	.dispatch = bfq_dispatch,
	.oldest = bfq_oldest,
	.requeue = bfq_requeue,
	.complete = bfq_complete,
	.next_event = bfq_next_event,
	.stream_init = bfq_stream_init,
	.stream_exit = bfq_stream_exit,
	.stats = ELV_POLICY_STATS(bfq_stats),
	.check = ELV_POLICY_CHECK(bfq_check),
	.allow_merge = ELV_POLICY_MERGE(bfq_allow_merge),
	.find_next = ELV_POLICY_FRONT(bfq_find_next_merge),
	.group_init = bfq_group_init,
	.group_exit = bfq_group_exit,
	.reweight = bfq_reweight,
};
