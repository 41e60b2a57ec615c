/*
 * deadline: sector-ordered batches per direction with soft expiry deadlines and bounded write
 * starvation (the legacy Linux algorithm), over three I/O priority levels (RT, BE, IDLE) with
 * priority aging as in mq-deadline.
 *
 * Every queued request sits in two structures of its (level, direction): a tree sorted by
 * start sector and a FIFO in arrival order. A batch is up to fifo_batch requests taken in
 * ascending sector order from one level and direction; between batches the direction is
 * chosen (reads first, writes after writes_starved read batches) and the batch starts at the
 * oldest request when it has expired or the sweep ran off the top, else where the sweep left
 * off. Expiry is looked at only when a batch starts, so it never preempts a batch.
 *
 * The per-level "next in sector order" cache (next_rq) is the legacy one: it is set to the
 * successor of each dispatched request, so a request added behind the cached one in the middle
 * of a sweep waits for a later batch, exactly as in the original.
 *
 * Levels: a lower level is served only when every higher one is empty, except through the
 * aging pass: while two or more levels hold requests, BE and then IDLE are probed first and
 * served when the request they would dispatch arrived prio_aging_expire or longer ago. The
 * probe is side-effect free (unlike mq-deadline, a probe that finds nothing old enough does
 * not count a starved read batch or reset the batch).
 *
 * A request's level is fixed when it is added (a stream's priority may change later), and is
 * found again from the root of the tree the request sits in: O(log n), needed only on the
 * cancel, merge and switch paths; dispatch already knows it.
 *
 * The state is caller memory; every operation is O(log n) and allocation free.
 */
#include <stddef.h>

#include "elevator/policy.h"

/* The start of a batch and the aging pass are kept out of dl_dispatch(), whose common case
 * (the batch goes on) then needs no room for a pick. */
#if defined(__GNUC__)
#define DL_NOINLINE __attribute__((noinline))
#else
#define DL_NOINLINE
#endif

#define DL_NR_LEVELS 3
#define DL_NR_DIRS (2 * DL_NR_LEVELS)
#define DL_RT 0
#define DL_BE 1
#define DL_IDLE 2

/* One (level, direction) pair, at index level * 2 + direction: requests sorted by sector and
 * in arrival order. */
struct dl_dir {
	struct elv_rb_root sort;
	struct elv_list fifo;
	struct elv_request *next_rq; /* continues the sweep; NULL when it ran off the top */
	uint32_t nr;
};

enum dl_stat { DL_ST_BATCHES, DL_ST_WRITES_FORCED, DL_ST_AGED, DL_ST_INHERITED, DL_NR_STATS };

struct dl_data {
	/* Tunables, internal units (ns for times); the table below points at them. */
	int64_t expire[2]; /* read_expire, write_expire */
	int64_t writes_starved;
	int64_t fifo_batch;
	int64_t front_merges;
	int64_t prio_aging_expire;

	struct dl_dir dir[DL_NR_DIRS];
	uint32_t batching; /* requests dispatched in the current batch */
	uint32_t starved;  /* read batches chosen while writes waited */
	unsigned last_dir; /* direction of the current batch */
	unsigned busy;     /* bit per level holding requests */
	uint64_t stats[DL_NR_STATS];
};

/* What the next dispatch from one level would be, computed without changing anything. */
struct dl_pick {
	struct elv_request *rq;
	unsigned dir;
	uint8_t new_batch; /* starts a batch (direction chosen, batching reset) */
	uint8_t expired;   /* the batch starts at an expired FIFO head */
	uint8_t contended; /* reads and writes were both queued at the direction choice */
};

static const char *const dl_stat_names[DL_NR_STATS] = {
	"batches",              /* batches started */
	"write_starved_forced", /* write batches forced by writes_starved while reads waited */
	"aged",                 /* requests served by the priority aging pass */
	"fifo_inherited",       /* request merges where the survivor took an older FIFO place */
};

static inline struct dl_data *dl_data(const struct elv_queue *q)
{
	return elv_queue_head(q)->data;
}

/* The (level, direction) index of @rq by its priority now: none and best effort share BE. */
static unsigned dl_index(const struct elv_request *rq)
{
	static const uint8_t class_dir[4] = { DL_BE * 2, DL_RT * 2, DL_BE * 2, DL_IDLE * 2 };
	unsigned cls = ELV_PRIO_CLASS(rq->ioprio);

	if (cls == ELV_PRIO_NONE && rq->stream)
		cls = ELV_PRIO_CLASS(rq->stream->ioprio);
	return class_dir[cls] + (unsigned)elv_rq_dir(rq);
}

/*
 * The index of the tree holding @rq, or -1 if none does. A request's level is fixed when it
 * is added, so it is found from the root of its tree.
 */
static int dl_locate(const struct dl_data *d, const struct elv_request *rq)
{
	const struct elv_rb_node *n = elv_rq_rb(rq), *p;
	int i;

	while ((p = elv_rb_parent(n)) != NULL)
		n = p;
	for (i = elv_rq_dir(rq); i < DL_NR_DIRS; i += 2)
		if (d->dir[i].sort.root == n)
			return i;
	return -1;
}

static inline int dl_expired(const struct elv_request *rq, uint64_t now, int64_t expire)
{
	return elv_time_after_eq(now, elv_rq_time(rq) + (uint64_t)expire);
}

/* Did the oldest request of either FIFO of a level (@lv: its two dl_dir) arrive by @t? */
static inline int dl_head_arrived_by(const struct dl_dir *lv, uint64_t t)
{
	const struct elv_request *r = elv_list_first_rq(&lv[0].fifo);
	const struct elv_request *w = elv_list_first_rq(&lv[1].fifo);

	return (r && elv_time_before_eq(elv_rq_time(r), t)) ||
	       (w && elv_time_before_eq(elv_rq_time(w), t));
}

/* Take @rq out of tree @i and its FIFO; returns the request after it in sector order. */
static inline struct elv_request *dl_unlink(struct dl_data *d, unsigned i, struct elv_request *rq)
{
	struct dl_dir *dd = &d->dir[i];

	elv_list_del(elv_rq_fifo(rq));
	if (--dd->nr == 0 && d->dir[i ^ 1].nr == 0)
		d->busy &= ~(1u << (i >> 1));
	return elv_sort_del_next(&dd->sort, rq);
}

/* dl_unlink() for every path but the common dispatch, which has it inline. */
static DL_NOINLINE struct elv_request *dl_unlink_out(struct dl_data *d, unsigned i,
						    struct elv_request *rq)
{
	return dl_unlink(d, i, rq);
}

/* Dispatch @rq from tree @i: the sweep goes on after it, the other direction's stops. */
static inline struct elv_request *dl_take(struct dl_data *d, unsigned i, struct elv_request *rq,
					  int inline_unlink)
{
	d->batching++;
	d->dir[i ^ 1].next_rq = NULL;
	d->dir[i].next_rq = inline_unlink ? dl_unlink(d, i, rq) : dl_unlink_out(d, i, rq);
	return rq;
}

static void dl_init(struct elv_queue *q)
{
	struct dl_data *d = dl_data(q);
	unsigned i;

	for (i = 0; i < DL_NR_DIRS; i++)
		elv_list_init(&d->dir[i].fifo);
	d->last_dir = ELV_DIR_READ;
}

/* dl_add() for a request that arrived before the FIFO's tail (re-added after a switch or a
 * barrier): out of line, so that the common case needs no stack frame. */
static DL_NOINLINE void dl_add_unordered(struct dl_dir *dd, struct elv_request *rq)
{
	elv_fifo_insert_sorted(&dd->fifo, rq);
	elv_sort_add(&dd->sort, rq);
}

static void dl_add(struct elv_queue *q, struct elv_request *rq, uint64_t now)
{
	struct dl_data *d = dl_data(q);
	unsigned i = dl_index(rq);
	struct dl_dir *dd = &d->dir[i];
	struct elv_list *tail = dd->fifo.prev;

	(void)now;
	d->busy |= 1u << (i >> 1);
	dd->nr++;
	if (tail != &dd->fifo && elv_rq_seq_cmp(elv_list_rq(tail), rq) > 0) {
		dl_add_unordered(dd, rq);
		return;
	}
	elv_list_insert(elv_rq_fifo(rq), tail, &dd->fifo);
	/* Last, so that nothing has to survive the call. */
	elv_sort_add(&dd->sort, rq);
}

static void dl_remove(struct elv_queue *q, struct elv_request *rq)
{
	struct dl_data *d = dl_data(q);
	int i = dl_locate(d, rq);
	struct elv_request *next;

	ELV_ASSERT(i >= 0);
	if (i < 0)
		return;
	next = dl_unlink_out(d, (unsigned)i, rq);
	if (d->dir[i].next_rq == rq)
		d->dir[i].next_rq = next;
}

static void dl_merged(struct elv_queue *q, struct elv_request *rq, enum elv_merge_kind kind,
		      struct elv_request *next)
{
	struct dl_data *d = dl_data(q);
	int i;

	/* A back merge changes nothing here; the others need the tree (a climb to its root). */
	if (kind == ELV_MERGE_FRONT) {
		/* The start sector moved down: re-key. A cached next_rq keeps pointing at it. */
		i = dl_locate(d, rq);
		if (i >= 0) {
			elv_sort_del(&d->dir[i].sort, rq);
			elv_sort_add(&d->dir[i].sort, rq);
		}
		return;
	}
	if (kind != ELV_MERGE_REQ || next == NULL || elv_rq_seq_cmp(next, rq) >= 0)
		return;
	i = dl_locate(d, rq);
	if (i < 0)
		return;
	/* Take the place in time of the older @next, which is about to be removed. */
	d->stats[DL_ST_INHERITED]++;
	if (dl_locate(d, next) == i) {
		elv_fifo_inherit(rq, next);
		return;
	}
	elv_list_del(elv_rq_fifo(rq));
	elv_rq_inherit_arrival(rq, next);
	elv_fifo_insert_sorted(&d->dir[i].fifo, rq);
}

/*
 * A queued request that @rq could be joined with: same level and direction, starting where
 * @rq ends. A new request asks for a front merge, which front_merges may switch off; a queued
 * request that just grew asks for a request-to-request merge, which stays on as in Linux.
 */
static struct elv_request *dl_find_next(struct elv_queue *q, const struct elv_request *rq)
{
	const struct dl_data *d = dl_data(q);
	uint64_t sector = elv_rq_end(rq);
	struct elv_request *c;
	unsigned n;

	if (elv_rq_state(rq) != ELV_RQ_QUEUED && !d->front_merges)
		return NULL;
	c = elv_sort_find(&d->dir[dl_index(rq)].sort, sector);
	for (n = ELV_SAME_SECTOR_SCAN; c && c->sector == sector && n; c = elv_sort_next(c), n--)
		if (c->op == rq->op && elv_rq_mergeable(c))
			return c;
	return NULL;
}

/* The legacy per-batch decision for level @l, as a pure function of the state. */
static int dl_pick(const struct dl_data *d, unsigned l, uint64_t now, struct dl_pick *p)
{
	const struct dl_dir *lv = &d->dir[2 * l], *dd;
	struct elv_request *head;
	int reads, writes;

	p->expired = 0;
	p->contended = 0;
	p->rq = lv[d->last_dir].next_rq;
	if (p->rq && (int64_t)d->batching < d->fifo_batch) {
		p->dir = d->last_dir;
		p->new_batch = 0;
		return 1;
	}
	reads = lv[ELV_DIR_READ].nr != 0;
	writes = lv[ELV_DIR_WRITE].nr != 0;
	if (reads && !(writes && (int64_t)d->starved >= d->writes_starved))
		p->dir = ELV_DIR_READ;
	else if (writes)
		p->dir = ELV_DIR_WRITE;
	else
		return 0;
	dd = &lv[p->dir];
	head = elv_list_first_rq(&dd->fifo);
	p->new_batch = 1;
	p->contended = (uint8_t)(reads && writes);
	p->expired = (uint8_t)dl_expired(head, now, d->expire[p->dir]);
	p->rq = p->expired || dd->next_rq == NULL ? head : dd->next_rq;
	return 1;
}

/*
 * Everything but a batch going on at the only busy level: the aging pass (an old enough BE,
 * then IDLE, request goes before higher levels), else the highest busy level's pick; then
 * the picked request is dispatched, starting a batch if the pick said so.
 */
static DL_NOINLINE struct elv_request *dl_dispatch_slow(struct elv_queue *q, struct dl_data *d,
						     unsigned busy, uint64_t now)
{
	uint64_t aging = (uint64_t)d->prio_aging_expire, old;
	struct dl_pick p;
	unsigned l;

	/* Requests that arrived by now - prio_aging_expire have aged (wrapping difference). */
	if (busy & (busy - 1)) {
		old = now - aging;
		for (l = DL_BE; l < DL_NR_LEVELS; l++) {
			/* A FIFO's head is its oldest request: when neither head of the level has
			 * aged (or the level is empty), no pick of it can have, and the probe is
			 * skipped. */
			if (dl_head_arrived_by(&d->dir[2 * l], old) && dl_pick(d, l, now, &p) &&
			    elv_time_before_eq(elv_rq_time(p.rq), old)) {
				d->stats[DL_ST_AGED]++;
				goto commit;
			}
		}
	}
	l = (busy & 1u) ? DL_RT : (busy & 2u) ? DL_BE : DL_IDLE;
	if (!dl_pick(d, l, now, &p)) /* a busy level always has a pick */
		return NULL;
commit:
	if (p.new_batch) {
		if (p.dir == ELV_DIR_WRITE) {
			d->stats[DL_ST_WRITES_FORCED] += p.contended;
			d->starved = 0;
		} else if (p.contended) {
			d->starved++;
		}
		d->last_dir = p.dir;
		d->batching = 0;
		d->stats[DL_ST_BATCHES]++;
		if (p.expired)
			elv_note_expired(q, p.rq, now);
	}
	l = 2 * l + p.dir;
	return dl_take(d, l, p.rq, 0);
}

static struct elv_request *dl_dispatch(struct elv_queue *q, uint64_t now, int force)
{
	struct dl_data *d = dl_data(q);
	unsigned busy = d->busy, i;
	struct elv_request *rq;

	(void)force; /* deadline never idles */
	if (busy == 0)
		return NULL;
	/* The common case: one level busy, and its batch goes on in sector order. */
	if (!(busy & (busy - 1))) {
		i = (busy >> 1) * 2 + d->last_dir; /* busy is 1, 2 or 4: level 0, 1 or 2 */
		rq = d->dir[i].next_rq;
		if (rq && (int64_t)d->batching < d->fifo_batch)
			return dl_take(d, i, rq, 1);
	}
	return dl_dispatch_slow(q, d, busy, now);
}

static struct elv_request *dl_oldest(struct elv_queue *q)
{
	struct dl_data *d = dl_data(q);
	struct elv_request *best = NULL, *rq;
	unsigned i;

	for (i = 0; i < DL_NR_DIRS; i++) {
		rq = elv_list_first_rq(&d->dir[i].fifo);
		if (rq && (best == NULL || elv_rq_seq_cmp(rq, best) < 0))
			best = rq;
	}
	return best;
}

static void dl_stats(const struct elv_queue *q, uint64_t *vals)
{
	const struct dl_data *d = dl_data(q);
	unsigned i;

	for (i = 0; i < DL_NR_STATS; i++)
		vals[i] = d->stats[i];
}

/* ---- invariants ------------------------------------------------------------------------ */

/*
 * Tree @i: a valid tree in sector order and a FIFO in arrival order, each with exactly nr
 * entries, every FIFO entry queued and in this very tree (so both hold the same requests)
 * and, if it names its own class, at the level of that class; next_rq in the tree.
 */
static int dl_check_dir(const struct dl_data *d, unsigned i)
{
	const struct dl_dir *dd = &d->dir[i];
	const struct elv_list *pos = &dd->fifo;
	const struct elv_request *rq, *prev = NULL, *s = NULL, *t = elv_sort_first(&dd->sort);
	uint32_t n;

	if (elv_rb_check(&dd->sort) != 0)
		return ELV_EINVAL;
	for (n = 0; n < dd->nr; n++, prev = rq, s = t, t = elv_sort_next(t)) {
		pos = pos->next;
		if (pos == &dd->fifo || t == NULL || (s && s->sector > t->sector))
			return ELV_EINVAL;
		rq = elv_list_rq(pos);
		if (elv_rq_state(rq) != ELV_RQ_QUEUED || dl_locate(d, rq) != (int)i ||
		    (ELV_PRIO_CLASS(rq->ioprio) != ELV_PRIO_NONE && dl_index(rq) != i) ||
		    (prev && (elv_rq_seq_cmp(prev, rq) >= 0 ||
			      elv_time_after(elv_rq_time(prev), elv_rq_time(rq)))))
			return ELV_EINVAL;
	}
	if (pos->next != &dd->fifo || t != NULL ||
	    (dd->next_rq && dl_locate(d, dd->next_rq) != (int)i))
		return ELV_EINVAL;
	return 0;
}

static int dl_check(const struct elv_queue *q)
{
	const struct dl_data *d = dl_data(q);
	const struct elv_policy *p = elv_queue_policy(q);
	uint32_t total = 0;
	unsigned i;

	if (d->last_dir > 1 || (d->busy >> DL_NR_LEVELS) != 0)
		return ELV_EINVAL;
	for (i = 0; i < p->nr_tunables; i++) {
		const struct elv_tunable *t = &p->tunables[i];
		int64_t v = elv_tunable_raw(d, t);

		if (v < t->min * (int64_t)t->scale || v > t->max * (int64_t)t->scale)
			return ELV_EINVAL;
	}
	for (i = 0; i < DL_NR_DIRS; i++) {
		if (dl_check_dir(d, i) != 0)
			return ELV_EINVAL;
		total += d->dir[i].nr;
		/* A level's busy bit is set exactly when one of its two trees holds requests. */
		if ((i & 1) &&
		    !!(d->busy & (1u << (i >> 1))) != (d->dir[i - 1].nr + d->dir[i].nr != 0))
			return ELV_EINVAL;
	}
	return total == elv_queue_nr_queued(q) ? 0 : ELV_EINVAL;
}

/* ---- the policy -------------------------------------------------------------------------- */

#define DL_MS 1000000u /* user unit ms, stored as ns */
#define DL_MAX_MS 3600000 /* one hour */

static const struct elv_tunable dl_tunables[] = {
	{ "read_expire", "ms", "soft deadline of a read, from its arrival", 500, 0, DL_MAX_MS,
	  (uint32_t)offsetof(struct dl_data, expire[ELV_DIR_READ]), DL_MS },
	{ "write_expire", "ms", "soft deadline of a write, discard or flush, from its arrival",
	  5000, 0, DL_MAX_MS, (uint32_t)offsetof(struct dl_data, expire[ELV_DIR_WRITE]), DL_MS },
	{ "writes_starved", "batches", "read batches allowed while writes wait", 2, 0, 1024,
	  (uint32_t)offsetof(struct dl_data, writes_starved), 1 },
	{ "fifo_batch", "requests", "most requests in one sector-ordered batch", 16, 1, 4096,
	  (uint32_t)offsetof(struct dl_data, fifo_batch), 1 },
	{ "front_merges", "bool", "look up front merges in the sector tree", 1, 0, 1,
	  (uint32_t)offsetof(struct dl_data, front_merges), 1 },
	{ "prio_aging_expire", "ms", "wait after which BE and IDLE requests pass higher levels",
	  10000, 0, DL_MAX_MS, (uint32_t)offsetof(struct dl_data, prio_aging_expire), DL_MS },
};

const struct elv_policy elv_policy_deadline = {
	.abi = ELV_POLICY_ABI,
	.struct_size = sizeof(struct elv_policy),
	.name = "deadline",
	.desc = "sector-ordered batches with read and write deadlines and three priority levels",
	.data_size = sizeof(struct dl_data),
	.tunables = dl_tunables,
	.nr_tunables = sizeof(dl_tunables) / sizeof(dl_tunables[0]),
	.stat_names = dl_stat_names,
	.nr_stats = DL_NR_STATS,
	.init = dl_init,
	.add = dl_add,
	.remove = dl_remove,
	.merged = ELV_POLICY_MERGE(dl_merged),
	.find_next = ELV_POLICY_FRONT(dl_find_next),
	.dispatch = dl_dispatch,
	.oldest = dl_oldest,
	.stats = ELV_POLICY_STATS(dl_stats),
	.check = ELV_POLICY_CHECK(dl_check),
};
