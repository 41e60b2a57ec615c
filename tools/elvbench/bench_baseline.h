/*
 * Reference baselines for elvbench, written here and not in the library: a FIFO list, the
 * classic one-way elevator that inserts into a sorted linked list (BSD disksort): requests at
 * or above the head position in ascending order, then those below it, ascending; a floor
 * reference for noop and a bare legacy deadline (both below).
 */
#ifndef ELVBENCH_BASELINE_H
#define ELVBENCH_BASELINE_H

#include <stdint.h>
#include <string.h>

#include "elevator/policy.h"

struct bnode {
	struct bnode *next;
	uint64_t sector;
};

struct baseline {
	int sorted;
	unsigned nr;
	struct bnode *head, *tail;
	uint64_t pos; /* head position: start of the last dispatched request */
};

static inline int baseline_init(struct baseline *b, const char *name)
{
	memset(b, 0, sizeof(*b));
	if (!strcmp(name, "baseline-fifo"))
		return 0;
	if (!strcmp(name, "baseline-sorted-list")) {
		b->sorted = 1;
		return 0;
	}
	return -1;
}

/* Order of n in the current sweep: first those at or past pos, then the wrapped ones. */
static inline int baseline_before(const struct baseline *b, uint64_t x, uint64_t y)
{
	int xw = x < b->pos, yw = y < b->pos;

	return xw != yw ? !xw : x < y;
}

static __attribute__((noinline, unused)) void baseline_add(struct baseline *b, struct bnode *n)
{
	struct bnode **p = &b->head;

	n->next = NULL;
	b->nr++;
	if (!b->sorted) {
		if (b->tail)
			b->tail->next = n;
		else
			b->head = n;
		b->tail = n;
		return;
	}
	while (*p && !baseline_before(b, n->sector, (*p)->sector))
		p = &(*p)->next;
	n->next = *p;
	*p = n;
}

static __attribute__((noinline, unused)) struct bnode *baseline_dispatch(struct baseline *b)
{
	struct bnode *n = b->head;

	if (!n)
		return NULL;
	b->head = n->next;
	if (!b->head)
		b->tail = NULL;
	b->nr--;
	b->pos = n->sector;
	return n;
}

/*
 * The floor reference for noop ("baseline-hash-fifo"): the least a FIFO with back merging can
 * do behind validating entry points. Arrival order, a back-merge hash on the end sector
 * (singly linked chains, as a 56-byte request on 32-bit leaves no room for more), argument and
 * state checks on every call, queued and in-flight counts. No front merge, barrier, requeue,
 * stream, statistic, trace, tunable or policy vtable: what the library adds is measured
 * against this.
 */
/* Kept apart from the bench loop like a library entry point: no inlining, and no
 * interprocedural shortcut that drops a check because the caller never passes NULL. */
#if defined(__GNUC__) && !defined(__clang__)
#define FLOOR_ENTRY __attribute__((noipa, unused))
#else
#define FLOOR_ENTRY __attribute__((noinline, unused))
#endif

struct fnode {
	struct fnode *next;  /* arrival order */
	struct fnode *hnext; /* hash chain of the end sector's granule */
	uint64_t sector;
	uint32_t nr_sectors;
	uint8_t op, flags, state;
};

enum { FNODE_IDLE, FNODE_QUEUED, FNODE_DISPATCHED };

struct floor_q {
	struct fnode *head, *tail;
	struct fnode **buckets;
	uint32_t shift; /* 32 - log2(buckets) */
	uint32_t max_sectors;
	uint32_t nr_queued, nr_in_flight;
};

static inline struct fnode **floor_bucket(const struct floor_q *q, uint64_t end)
{
	return &q->buckets[((uint32_t)(end >> 3) * 0x9E3779B1u) >> q->shift];
}

static inline void floor_unhash(struct floor_q *q, struct fnode *n)
{
	struct fnode **p = floor_bucket(q, n->sector + n->nr_sectors);

	while (*p != n)
		p = &(*p)->hnext;
	*p = n->hnext;
}

static inline void floor_hash(struct floor_q *q, struct fnode *n)
{
	struct fnode **b = floor_bucket(q, n->sector + n->nr_sectors);

	n->hnext = *b;
	*b = n;
}

/* 0 queued, 1 merged into a queued request (@n is free again), -22 invalid. */
static FLOOR_ENTRY int floor_add(struct floor_q *q, struct fnode *n)
{
	struct fnode *c;

	if (!q || !n || n->state != FNODE_IDLE || n->op > 3 || (n->flags & ~0x3fu) ||
	    n->nr_sectors == 0 || n->sector + n->nr_sectors < n->sector)
		return -22;
	for (c = *floor_bucket(q, n->sector); c; c = c->hnext) {
		if (c->sector + c->nr_sectors != n->sector)
			continue;
		if (c->op != n->op || c->nr_sectors + n->nr_sectors > q->max_sectors)
			break;
		floor_unhash(q, c);
		c->nr_sectors += n->nr_sectors;
		floor_hash(q, c);
		return 1;
	}
	n->state = FNODE_QUEUED;
	n->next = NULL;
	if (q->tail)
		q->tail->next = n;
	else
		q->head = n;
	q->tail = n;
	floor_hash(q, n);
	q->nr_queued++;
	return 0;
}

/* 0 and *@out, or -11 when nothing is queued, -22 invalid. */
static FLOOR_ENTRY int floor_dispatch(struct floor_q *q, struct fnode **out)
{
	struct fnode *n;

	if (!q || !out)
		return -22;
	n = q->head;
	if (!n)
		return -11;
	q->head = n->next;
	if (!q->head)
		q->tail = NULL;
	floor_unhash(q, n);
	n->state = FNODE_DISPATCHED;
	q->nr_queued--;
	q->nr_in_flight++;
	*out = n;
	return 0;
}

static FLOOR_ENTRY int floor_complete(struct floor_q *q, struct fnode *n)
{
	if (!q || !n || n->state != FNODE_DISPATCHED)
		return -22;
	n->state = FNODE_IDLE;
	q->nr_in_flight--;
	return 0;
}

/*
 * "baseline-rbtree-fifo": the bare algorithm of the legacy (single-queue) deadline scheduler,
 * to price what libelevator's deadline adds around it. Per direction (reads, writes) a
 * sector-sorted red-black tree and a FIFO with an expiry time (500 ms and 5 s); requests are
 * dispatched in ascending sector order in batches of at most 16 in one direction, reads before
 * writes unless writes were passed over twice (writes_starved), and a batch starts at the
 * FIFO head when that request has expired. Nothing else: no argument or state check, no
 * merging (so no merge hash), no I/O priority levels, no barrier, requeue, stream, statistic,
 * trace or tunable, no in-flight bookkeeping (a completion costs nothing).
 *
 * The tree is the library's red-black tree, reached through the primitives an out-of-tree
 * policy uses (elv_rb_insert(), elv_rb_erase_next() in policy.h); the search, the FIFOs and
 * the dispatch logic are written here. With the same tree on both sides, the difference to
 * the deadline policy is the cost of the API, validation, merging and priorities, not of a
 * different tree.
 */
struct rnode {
	struct elv_rb_node rb;        /* in the sector tree of its direction */
	struct rnode *fnext, *fprev;  /* in the FIFO of its direction */
	uint64_t sector;
	uint64_t expire;              /* arrival time + read or write expiry (ns) */
	uint32_t nr_sectors;
	uint8_t dir;                  /* 0 read, 1 write */
};

struct rbf_q {
	struct elv_rb_root tree[2];
	struct rnode *fhead[2], *ftail[2];
	struct rnode *next[2];        /* where the current batch's sweep goes on */
	uint64_t fifo_expire[2];      /* ns */
	unsigned batching;            /* requests dispatched in the current batch */
	unsigned fifo_batch;
	unsigned starved;             /* read batches started while writes waited */
	unsigned writes_starved;
};

static inline void rbf_init(struct rbf_q *q)
{
	memset(q, 0, sizeof(*q));
	q->fifo_expire[0] = 500 * ELV_NSEC_PER_MSEC;
	q->fifo_expire[1] = 5000 * ELV_NSEC_PER_MSEC;
	q->fifo_batch = 16;
	q->writes_starved = 2;
}

static inline struct rnode *rbf_node(struct elv_rb_node *n)
{
	return n ? elv_container_of(n, struct rnode, rb) : NULL;
}

static FLOOR_ENTRY void rbf_add(struct rbf_q *q, struct rnode *n, uint64_t now)
{
	struct elv_rb_root *t = &q->tree[n->dir];
	struct elv_rb_node **link = &t->root, *parent = NULL;
	int leftmost = 1;

	while (*link) {
		parent = *link;
		if (n->sector < rbf_node(parent)->sector) {
			link = &parent->left;
		} else {
			link = &parent->right;
			leftmost = 0;
		}
	}
	elv_rb_insert(t, &n->rb, parent, link, leftmost);
	n->expire = now + q->fifo_expire[n->dir];
	n->fnext = NULL;
	n->fprev = q->ftail[n->dir];
	if (n->fprev)
		n->fprev->fnext = n;
	else
		q->fhead[n->dir] = n;
	q->ftail[n->dir] = n;
}

/* Take @n out of its tree and FIFO; the batch goes on with its successor in sector order. */
static inline struct rnode *rbf_take(struct rbf_q *q, struct rnode *n)
{
	unsigned d = n->dir;

	q->next[0] = q->next[1] = NULL;
	q->next[d] = rbf_node(elv_rb_erase_next(&q->tree[d], &n->rb));
	if (n->fprev)
		n->fprev->fnext = n->fnext;
	else
		q->fhead[d] = n->fnext;
	if (n->fnext)
		n->fnext->fprev = n->fprev;
	else
		q->ftail[d] = n->fprev;
	q->batching++;
	return n;
}

/* The next request for the device, or NULL when nothing is queued. */
static FLOOR_ENTRY struct rnode *rbf_dispatch(struct rbf_q *q, uint64_t now)
{
	struct rnode *n = q->next[1] ? q->next[1] : q->next[0];
	unsigned d;

	if (n && q->batching < q->fifo_batch)
		return rbf_take(q, n);
	if (q->fhead[0] && !(q->fhead[1] && q->starved++ >= q->writes_starved)) {
		d = 0;
	} else if (q->fhead[1]) {
		q->starved = 0;
		d = 1;
	} else {
		return NULL;
	}
	/* A new batch: from the oldest request when it has expired, else where the sweep was. */
	n = q->next[d];
	if (!n || (int64_t)(now - q->fhead[d]->expire) >= 0)
		n = q->fhead[d];
	q->batching = 0;
	return rbf_take(q, n);
}

#endif
