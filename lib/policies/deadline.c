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

#include "../core/elv_internal.h"

/* The start of a batch, taken once per fifo_batch requests: kept out of dl_dispatch(), whose
 * common case (the batch goes on) then needs no room for a pick. */
#if defined(__GNUC__)
#define DL_NOINLINE __attribute__((noinline))
#else
#define DL_NOINLINE
#endif

#define DL_NR_LEVELS 3
#define DL_RT 0
#define DL_BE 1
#define DL_IDLE 2

/* One (level, direction) pair: requests sorted by sector and in arrival order. */
struct dl_dir {
	struct elv_rb_root sort;
	struct elv_list fifo;
	struct elv_request *next_rq; /* continues the sweep; NULL when it ran off the top */
	uint32_t nr;
};

struct dl_level {
	struct dl_dir dir[2];
};

enum dl_stat { DL_ST_BATCHES, DL_ST_WRITES_FORCED, DL_ST_AGED, DL_ST_INHERITED, DL_NR_STATS };

struct dl_data {
	/* Tunables, internal units (ns for times); the table below points at them. */
	int64_t expire[2]; /* read_expire, write_expire */
	int64_t writes_starved;
	int64_t fifo_batch;
	int64_t front_merges;
	int64_t prio_aging_expire;

	struct dl_level lvl[DL_NR_LEVELS];
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

/* I/O priority class to level: none and best effort share BE. */
static const uint8_t dl_class_level[4] = { DL_BE, DL_RT, DL_BE, DL_IDLE };

static const char *const dl_stat_names[DL_NR_STATS] = {
	"batches",              /* batches started */
	"write_starved_forced", /* write batches forced by writes_starved while reads waited */
	"aged",                 /* requests served by the priority aging pass */
	"fifo_inherited",       /* request merges where the survivor took an older FIFO place */
};

static inline struct dl_data *dl_data(const struct elv_queue *q)
{
	return q->data;
}

static unsigned dl_level_of(const struct elv_request *rq)
{
	return dl_class_level[ELV_PRIO_CLASS(elv_rq_prio(rq))];
}

/* The (level, direction) whose tree holds @rq, or NULL if none does. Sets @*lvl. */
static struct dl_dir *dl_locate(struct dl_data *d, const struct elv_request *rq, unsigned *lvl)
{
	const struct elv_rb_node *n = &rq->rb, *p;
	int dir = elv_rq_dir(rq);
	unsigned l;

	while ((p = elv_rb_parent(n)) != NULL)
		n = p;
	for (l = 0; l < DL_NR_LEVELS; l++) {
		if (d->lvl[l].dir[dir].sort.root == n) {
			*lvl = l;
			return &d->lvl[l].dir[dir];
		}
	}
	return NULL;
}

static inline int dl_expired(const struct elv_request *rq, uint64_t now, int64_t expire)
{
	return now >= rq->time && now - rq->time >= (uint64_t)expire;
}

/* Take @rq out of its tree and FIFO (level @l, direction entry @dd). */
static void dl_unlink(struct dl_data *d, unsigned l, struct dl_dir *dd, struct elv_request *rq)
{
	struct dl_level *lv = &d->lvl[l];

	elv_list_del(&rq->fifo);
	elv_sort_del(&dd->sort, rq);
	dd->nr--;
	if ((lv->dir[0].nr | lv->dir[1].nr) == 0)
		d->busy &= ~(1u << l);
}

static void dl_init(struct elv_queue *q)
{
	struct dl_data *d = dl_data(q);
	unsigned l;

	for (l = 0; l < DL_NR_LEVELS; l++) {
		elv_list_init(&d->lvl[l].dir[0].fifo);
		elv_list_init(&d->lvl[l].dir[1].fifo);
	}
	d->last_dir = ELV_DIR_READ;
}

static void dl_add(struct elv_queue *q, struct elv_request *rq, uint64_t now)
{
	struct dl_data *d = dl_data(q);
	unsigned l = dl_level_of(rq);
	struct dl_dir *dd = &d->lvl[l].dir[elv_rq_dir(rq)];
	struct elv_list *tail = dd->fifo.prev;

	(void)now;
	d->busy |= 1u << l;
	dd->nr++;
	/* Arrivals come in order; re-adds after a switch or a barrier may not. */
	if (ELV_LIKELY(tail == &dd->fifo || elv_rq_seq_cmp(elv_list_rq(tail), rq) <= 0))
		elv_list_insert(&rq->fifo, tail, &dd->fifo);
	else
		elv_fifo_insert_sorted(&dd->fifo, rq);
	/* Last, so that nothing has to survive the call. */
	elv_sort_add(&dd->sort, rq);
}

static void dl_remove(struct elv_queue *q, struct elv_request *rq)
{
	struct dl_data *d = dl_data(q);
	unsigned l = 0;
	struct dl_dir *dd = dl_locate(d, rq, &l);

	ELV_ASSERT(dd != NULL);
	if (dd == NULL)
		return;
	if (dd->next_rq == rq)
		dd->next_rq = elv_sort_next(rq);
	dl_unlink(d, l, dd, rq);
}

/* Take the place in time of @older, which is about to be removed, if it came first. */
static void dl_inherit(struct dl_data *d, struct elv_request *rq, struct elv_request *older)
{
	unsigned l = 0, lo = 0;
	struct dl_dir *dd = dl_locate(d, rq, &l);
	struct dl_dir *od = dl_locate(d, older, &lo);

	if (dd == NULL || elv_rq_seq_cmp(older, rq) >= 0)
		return;
	elv_list_del(&rq->fifo);
	rq->time = older->time;
	rq->seq = older->seq;
	if (od == dd)
		elv_list_insert(&rq->fifo, older->fifo.prev, &older->fifo);
	else
		elv_fifo_insert_sorted(&dd->fifo, rq);
	d->stats[DL_ST_INHERITED]++;
}

static void dl_merged(struct elv_queue *q, struct elv_request *rq, enum elv_merge_kind kind,
		      struct elv_request *next)
{
	struct dl_data *d = dl_data(q);
	unsigned l = 0;
	struct dl_dir *dd;

	if (kind == ELV_MERGE_REQ && next != NULL) {
		dl_inherit(d, rq, next);
	} else if (kind == ELV_MERGE_FRONT) {
		/* The start sector moved down: re-key. A cached next_rq keeps pointing at it. */
		dd = dl_locate(d, rq, &l);
		if (dd == NULL)
			return;
		elv_sort_del(&dd->sort, rq);
		elv_sort_add(&dd->sort, rq);
	}
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

	if (rq->state != ELV_RQ_QUEUED && !d->front_merges)
		return NULL;
	c = elv_sort_find(&d->lvl[dl_level_of(rq)].dir[elv_rq_dir(rq)].sort, sector);
	for (; c && c->sector == sector; c = elv_sort_next(c))
		if (c->op == rq->op && elv_rq_mergeable(c))
			return c;
	return NULL;
}

/* The legacy per-batch decision for level @lv, as a pure function of the state. */
static int dl_pick(const struct dl_data *d, const struct dl_level *lv, uint64_t now,
		   struct dl_pick *p)
{
	const struct dl_dir *dd;
	struct elv_request *head;
	int reads, writes;

	p->expired = 0;
	p->contended = 0;
	p->rq = lv->dir[d->last_dir].next_rq;
	if (p->rq && (int64_t)d->batching < d->fifo_batch) {
		p->dir = d->last_dir;
		p->new_batch = 0;
		return 1;
	}
	reads = lv->dir[ELV_DIR_READ].nr != 0;
	writes = lv->dir[ELV_DIR_WRITE].nr != 0;
	if (reads && !(writes && (int64_t)d->starved >= d->writes_starved))
		p->dir = ELV_DIR_READ;
	else if (writes)
		p->dir = ELV_DIR_WRITE;
	else
		return 0;
	dd = &lv->dir[p->dir];
	head = elv_list_first_rq(&dd->fifo);
	p->new_batch = 1;
	p->contended = (uint8_t)(reads && writes);
	p->expired = (uint8_t)dl_expired(head, now, d->expire[p->dir]);
	p->rq = p->expired || dd->next_rq == NULL ? head : dd->next_rq;
	return 1;
}

/* Dispatch @rq from (level @l, direction @dir): the sweep moves on past it. */
static inline struct elv_request *dl_take(struct dl_data *d, unsigned l, unsigned dir,
					  struct elv_request *rq)
{
	struct dl_level *lv = &d->lvl[l];

	d->batching++;
	lv->dir[dir ^ 1].next_rq = NULL;
	lv->dir[dir].next_rq = elv_sort_next(rq);
	dl_unlink(d, l, &lv->dir[dir], rq);
	return rq;
}

/* Dispatch the picked request of level @l, starting a batch if the pick said so. */
static struct elv_request *dl_commit(struct elv_queue *q, struct dl_data *d, unsigned l,
				     const struct dl_pick *p, uint64_t now)
{
	if (p->new_batch) {
		if (p->dir == ELV_DIR_WRITE) {
			d->stats[DL_ST_WRITES_FORCED] += p->contended;
			d->starved = 0;
		} else if (p->contended) {
			d->starved++;
		}
		d->last_dir = p->dir;
		d->batching = 0;
		d->stats[DL_ST_BATCHES]++;
		if (p->expired)
			elv_note_expired(q, p->rq, now);
	}
	return dl_take(d, l, p->dir, p->rq);
}

/* Highest priority level in a non-zero busy mask. */
static inline unsigned dl_first_level(unsigned busy)
{
	static const uint8_t first[1u << DL_NR_LEVELS] = { DL_IDLE, DL_RT, DL_BE, DL_RT,
							   DL_IDLE, DL_RT, DL_BE, DL_RT };

	return first[busy & ((1u << DL_NR_LEVELS) - 1u)];
}

/* Aging pass: an old enough BE, then IDLE, request goes before higher levels. */
static struct elv_request *dl_dispatch_aged(struct elv_queue *q, struct dl_data *d,
					    unsigned busy, uint64_t now)
{
	struct dl_pick p;
	unsigned l;

	for (l = DL_BE; l < DL_NR_LEVELS; l++) {
		if (!(busy & (1u << l)) || !dl_pick(d, &d->lvl[l], now, &p))
			continue;
		if (dl_expired(p.rq, now, d->prio_aging_expire)) {
			d->stats[DL_ST_AGED]++;
			return dl_commit(q, d, l, &p, now);
		}
	}
	return NULL;
}

/* A new batch (or the first request after the sweep ran off the top) from level @l. */
static DL_NOINLINE struct elv_request *dl_dispatch_batch(struct elv_queue *q, struct dl_data *d,
						      unsigned l, uint64_t now)
{
	struct dl_pick p;

	if (!dl_pick(d, &d->lvl[l], now, &p)) /* a busy level always has a pick */
		return NULL;
	return dl_commit(q, d, l, &p, now);
}

static struct elv_request *dl_dispatch(struct elv_queue *q, uint64_t now, int force)
{
	struct dl_data *d = dl_data(q);
	unsigned busy = d->busy, l;
	struct elv_request *rq;

	(void)force; /* deadline never idles */
	if (busy & (busy - 1)) {
		rq = dl_dispatch_aged(q, d, busy, now);
		if (rq)
			return rq;
	} else if (busy == 0) {
		return NULL;
	}
	l = dl_first_level(busy);
	/* The common case: the batch goes on in sector order. */
	rq = d->lvl[l].dir[d->last_dir].next_rq;
	if (ELV_LIKELY(rq && (int64_t)d->batching < d->fifo_batch))
		return dl_take(d, l, d->last_dir, rq);
	return dl_dispatch_batch(q, d, l, now);
}

static struct elv_request *dl_oldest(struct elv_queue *q)
{
	struct dl_data *d = dl_data(q);
	struct elv_request *best = NULL, *rq;
	unsigned l;
	int dir;

	for (l = 0; l < DL_NR_LEVELS; l++) {
		for (dir = 0; dir < 2; dir++) {
			rq = elv_list_first_rq(&d->lvl[l].dir[dir].fifo);
			if (rq && (best == NULL || elv_rq_seq_cmp(rq, best) < 0))
				best = rq;
		}
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

static int dl_check_tunables(const struct elv_queue *q, const struct dl_data *d)
{
	const struct elv_policy *p = q->policy;
	unsigned i;

	for (i = 0; i < p->nr_tunables; i++) {
		const struct elv_tunable *t = &p->tunables[i];
		int64_t v = elv_tunable_raw(d, t);

		if (v < t->min * (int64_t)t->scale || v > t->max * (int64_t)t->scale)
			return ELV_EINVAL;
	}
	return 0;
}

/* Is @rq in exactly this (level @l, direction @dir) tree? */
static int dl_in_tree(struct dl_data *d, const struct elv_request *rq, unsigned l, int dir)
{
	unsigned found = 0;

	return elv_rq_dir(rq) == dir && dl_locate(d, rq, &found) == &d->lvl[l].dir[dir] &&
	       found == l;
}

static int dl_check_dir(struct dl_data *d, unsigned l, int dir)
{
	const struct dl_dir *dd = &d->lvl[l].dir[dir];
	const struct elv_list *pos;
	const struct elv_request *rq, *prev = NULL;
	uint32_t n = 0;

	if (elv_rb_check(&dd->sort) != 0)
		return ELV_EINVAL;
	for (pos = dd->fifo.next; pos != &dd->fifo; pos = pos->next) {
		rq = elv_list_rq(pos);
		if (++n > dd->nr || rq->state != ELV_RQ_QUEUED || !dl_in_tree(d, rq, l, dir))
			return ELV_EINVAL;
		if (prev && (elv_rq_seq_cmp(prev, rq) >= 0 || prev->time > rq->time))
			return ELV_EINVAL;
		/* A request that names its own class cannot change level while queued. */
		if (ELV_PRIO_CLASS(rq->ioprio) != ELV_PRIO_NONE && dl_level_of(rq) != l)
			return ELV_EINVAL;
		prev = rq;
	}
	if (n != dd->nr)
		return ELV_EINVAL;
	/* Tree in sector order with as many nodes as the FIFO, each also on the FIFO above. */
	n = 0;
	prev = NULL;
	for (rq = elv_sort_first(&dd->sort); rq; rq = elv_sort_next(rq)) {
		if (++n > dd->nr || (prev && prev->sector > rq->sector))
			return ELV_EINVAL;
		prev = rq;
	}
	if (n != dd->nr)
		return ELV_EINVAL;
	if (dd->next_rq && !dl_in_tree(d, dd->next_rq, l, dir))
		return ELV_EINVAL;
	return 0;
}

static int dl_check(const struct elv_queue *q)
{
	struct dl_data *d = dl_data(q);
	uint32_t total = 0;
	unsigned l;
	int dir;

	if (d->last_dir > 1 || dl_check_tunables(q, d) != 0)
		return ELV_EINVAL;
	for (l = 0; l < DL_NR_LEVELS; l++) {
		for (dir = 0; dir < 2; dir++) {
			if (dl_check_dir(d, l, dir) != 0)
				return ELV_EINVAL;
			total += d->lvl[l].dir[dir].nr;
		}
		if (!!(d->busy & (1u << l)) != (d->lvl[l].dir[0].nr + d->lvl[l].dir[1].nr != 0))
			return ELV_EINVAL;
	}
	if ((d->busy >> DL_NR_LEVELS) != 0 || total != elv_queue_nr_queued(q))
		return ELV_EINVAL;
	return 0;
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
	.merged = dl_merged,
	.find_next = dl_find_next,
	.dispatch = dl_dispatch,
	.oldest = dl_oldest,
	.stats = dl_stats,
	.check = dl_check,
};
