/*
 * The classic disk-scheduling algorithms, for comparison with the Linux elevators: FCFS, SSTF,
 * SCAN, LOOK, C-SCAN, C-LOOK, N-step SCAN, FSCAN, V(R), SPTF and aged SPTF.
 *
 * All of them share one state and one sorted structure: a red-black tree of the candidates
 * keyed by (position, arrival), where a position is the start sector divided by the
 * sectors-per-cylinder figure (1 by default: the LBN space). Keying ties by arrival means the
 * first request met at a position is the one that arrived first there, which is tie rule (3)
 * for free. Every seek-reducing choice is then "the nearest candidate ahead of the head and
 * the nearest behind it, and a penalty for turning round": SSTF is a penalty of zero, V(R) a
 * penalty of R times the number of positions, LOOK and SCAN an infinite one. N-step SCAN and
 * FSCAN hold arrivals in a second tree keyed by arrival and move the oldest of them into the
 * candidate tree when it runs dry. Each operation is O(log n) (a refill moves each request
 * once: O(log n) amortised per request); SPTF looks at a bounded window around the head.
 *
 * Tie rule everywhere: lower cost, then a request ahead of the head (in its direction of
 * travel, a request at the head counting as ahead), then the earlier arrival.
 */
#include "elevator/policy.h"

enum cl_kind {
	CL_FCFS,
	CL_SSTF,
	CL_SCAN,
	CL_LOOK,
	CL_CSCAN,
	CL_CLOOK,
	CL_NSCAN,
	CL_FSCAN,
	CL_VR,
	CL_SPTF,
	CL_ASPTF
};

/* Stats, in the order of cl_stat_names. */
enum { CL_ST_TRAVEL, CL_ST_TURNS, CL_ST_ESTIMATES, CL_ST_FALLBACKS, CL_NR_STATS };

static const char *const cl_stat_names[CL_NR_STATS] = {
	"travel", "reversals", "estimates", "fallbacks"
};

struct cl_data {
	struct elv_rb_root cand; /* candidates, keyed by (position, arrival) */
	struct elv_rb_root wait; /* N-step SCAN and FSCAN: later sweeps, keyed by arrival */
	struct elv_list fifo;    /* every held request in arrival order (oldest(), FCFS) */
	uint64_t head;           /* start sector of the last dispatched request */
	uint64_t max_pos;        /* highest position ever seen (sizes the disk when unknown) */
	uint64_t stat[CL_NR_STATS];
	/* tunables (int64_t, see the tables at the end) */
	int64_t cyl_sectors;
	int64_t positions;
	int64_t up;
	int64_t count_return;
	int64_t n;
	int64_t r;
	int64_t weight;
	int64_t window;
	uint32_t kind;
	int32_t dir; /* +1 up, -1 down */
};

static struct cl_data *cl_of(const struct elv_queue *q)
{
	return elv_queue_head(q)->data;
}

static uint64_t cl_pos(const struct cl_data *d, const struct elv_request *rq)
{
	return d->cyl_sectors > 1 ? elv_div64(rq->sector, (uint64_t)d->cyl_sectors) : rq->sector;
}

static uint64_t cl_head(const struct cl_data *d)
{
	return d->cyl_sectors > 1 ? elv_div64(d->head, (uint64_t)d->cyl_sectors) : d->head;
}

/* Positions on the disk: the host's figure, grown to cover every position seen. */
static uint64_t cl_nr_pos(const struct cl_data *d)
{
	uint64_t seen = d->max_pos == UINT64_MAX ? UINT64_MAX : d->max_pos + 1;

	return (uint64_t)d->positions > seen ? (uint64_t)d->positions : seen;
}

/* ---- the sorted structure: one insert, one ceiling, one floor ------------------------- */

/* Order of two requests in a tree: by position then arrival (cand), or by arrival (wait). */
static int cl_before(const struct cl_data *d, const struct elv_request *a,
		     const struct elv_request *b, int by_pos)
{
	if (by_pos) {
		uint64_t pa = cl_pos(d, a), pb = cl_pos(d, b);

		if (pa != pb)
			return pa < pb;
	}
	return elv_rq_seq_cmp(a, b) < 0;
}

static void cl_insert(struct cl_data *d, struct elv_rb_root *t, struct elv_request *rq,
		      int by_pos)
{
	struct elv_rb_node **link = &t->root, *parent = NULL;
	int leftmost = 1;

	while (*link) {
		parent = *link;
		if (cl_before(d, rq, elv_rb_rq(parent), by_pos)) {
			link = &parent->left;
		} else {
			link = &parent->right;
			leftmost = 0;
		}
	}
	elv_rb_insert(t, elv_rq_rb(rq), parent, link, leftmost);
}

/* The first candidate at a position >= @pos: the earliest arrival at the nearest one. */
static struct elv_request *cl_ceil(const struct cl_data *d, uint64_t pos)
{
	struct elv_rb_node *n = d->cand.root, *best = NULL;

	while (n) {
		if (cl_pos(d, elv_rb_rq(n)) >= pos) {
			best = n;
			n = n->left;
		} else {
			n = n->right;
		}
	}
	return elv_rb_rq(best);
}

/* The earliest arrival at the highest position <= @pos, or NULL. */
static struct elv_request *cl_floor(const struct cl_data *d, uint64_t pos)
{
	struct elv_rb_node *n = d->cand.root, *best = NULL;

	while (n) {
		if (cl_pos(d, elv_rb_rq(n)) <= pos) {
			best = n;
			n = n->right;
		} else {
			n = n->left;
		}
	}
	return best ? cl_ceil(d, cl_pos(d, elv_rb_rq(best))) : NULL;
}

/* The tree @rq is linked in (its root), found by walking up: O(log n). */
static const struct elv_rb_node *cl_root_of(const struct elv_request *rq)
{
	const struct elv_rb_node *n = elv_rq_rb(rq), *p;

	while ((p = elv_rb_parent(n)) != NULL)
		n = p;
	return n;
}

static int cl_waiting(const struct cl_data *d, const struct elv_request *rq)
{
	return d->wait.root && cl_root_of(rq) == d->wait.root;
}

static int cl_batched(const struct cl_data *d)
{
	return d->kind == CL_NSCAN || d->kind == CL_FSCAN;
}

/* ---- hooks ------------------------------------------------------------------------------ */

static void cl_init(struct elv_queue *q, uint32_t kind)
{
	struct cl_data *d = cl_of(q);

	elv_list_init(&d->fifo);
	d->kind = kind;
	if (kind == CL_FCFS || kind == CL_CSCAN || kind == CL_CLOOK)
		d->up = 1; /* no direction tunable: they start (and C-SCAN, C-LOOK stay) going up */
	d->dir = d->up ? 1 : -1;
	if (d->cyl_sectors < 1)
		d->cyl_sectors = 1;
}

static void cl_add(struct elv_queue *q, struct elv_request *rq, uint64_t now)
{
	struct cl_data *d = cl_of(q);
	uint64_t pos = cl_pos(d, rq);

	(void)now;
	/* New requests are the youngest; a switch or barrier release may re-add older ones. */
	elv_fifo_insert_sorted(&d->fifo, rq);
	if (pos > d->max_pos)
		d->max_pos = pos;
	if (d->kind == CL_FCFS)
		return;
	if (cl_batched(d))
		cl_insert(d, &d->wait, rq, 0); /* arrivals never join the sweep under way */
	else
		cl_insert(d, &d->cand, rq, 1);
}

static void cl_remove(struct elv_queue *q, struct elv_request *rq)
{
	struct cl_data *d = cl_of(q);

	elv_list_del(elv_rq_fifo(rq));
	if (d->kind == CL_FCFS)
		return;
	if (cl_waiting(d, rq))
		elv_rb_erase(&d->wait, elv_rq_rb(rq));
	else
		elv_rb_erase(&d->cand, elv_rq_rb(rq));
}

static struct elv_request *cl_oldest(struct elv_queue *q)
{
	return elv_list_first_rq(&cl_of(q)->fifo);
}

/* FCFS never merges: the classic studies serve each request as it was issued. */
static int cl_no_merge(const struct elv_queue *q, const struct elv_request *rq,
		       const struct elv_request *next)
{
	(void)q;
	(void)rq;
	(void)next;
	return 0;
}

static void cl_merged(struct elv_queue *q, struct elv_request *rq, enum elv_merge_kind kind,
		      struct elv_request *next)
{
	struct cl_data *d = cl_of(q);
	struct elv_rb_root *t;
	int by_pos;

	/* Back merges keep the start; only a request merge can make the survivor older. */
	if (kind != ELV_MERGE_REQ || elv_rq_seq_cmp(next, rq) >= 0)
		return;
	if (d->kind == CL_FCFS) {
		elv_fifo_inherit(rq, next);
		return;
	}
	by_pos = !cl_waiting(d, rq);
	t = by_pos ? &d->cand : &d->wait;
	elv_rb_erase(t, elv_rq_rb(rq));
	elv_fifo_inherit(rq, next);
	cl_insert(d, t, rq, by_pos);
}

/* N-step SCAN and FSCAN: the next sweep takes the n oldest held requests (FSCAN: all). */
static void cl_refill(struct cl_data *d)
{
	uint64_t k = d->kind == CL_NSCAN ? (uint64_t)d->n : UINT64_MAX;

	while (k-- && d->wait.first) {
		struct elv_request *rq = elv_rb_rq(d->wait.first);

		elv_rb_erase(&d->wait, elv_rq_rb(rq));
		cl_insert(d, &d->cand, rq, 1);
	}
}

/*
 * floor(r * n / 1000) without overflow: the turn-round penalty of V(R) with r in thousandths
 * (r <= 1000).
 */
static uint64_t cl_penalty(uint64_t r, uint64_t n)
{
	uint64_t hi = elv_div64(n, 1000u);

	return hi * r + elv_div64((n - hi * 1000u) * r, 1000u);
}

/*
 * The nearest candidate ahead and the nearest behind, and the cheaper of the two when turning
 * round costs @penalty on top of the distance. Ahead wins a tie (the canonical rule), so a
 * behind request wins only when it is nearer by more than the penalty. SSTF is penalty 0,
 * V(R) floor(R * positions), LOOK UINT64_MAX (turn only when nothing is ahead).
 */
static struct elv_request *cl_pick_near(const struct cl_data *d, uint64_t penalty)
{
	uint64_t h = cl_head(d);
	struct elv_request *ahead, *behind = NULL;
	uint64_t da, db;

	if (d->dir > 0) {
		ahead = cl_ceil(d, h);
		if (h > 0)
			behind = cl_floor(d, h - 1);
	} else {
		ahead = cl_floor(d, h);
		if (h < UINT64_MAX)
			behind = cl_ceil(d, h + 1);
	}
	if (!ahead || !behind)
		return ahead ? ahead : behind;
	da = cl_pos(d, ahead) > h ? cl_pos(d, ahead) - h : h - cl_pos(d, ahead);
	db = cl_pos(d, behind) > h ? cl_pos(d, behind) - h : h - cl_pos(d, behind);
	return da > db && da - db > penalty ? behind : ahead;
}

/* C-SCAN and C-LOOK: the nearest at or above the head, else the lowest (the wrap). */
static struct elv_request *cl_pick_up(const struct cl_data *d)
{
	struct elv_request *rq = cl_ceil(d, cl_head(d));

	return rq ? rq : elv_rb_rq(d->cand.first);
}

/* @a * @b / 1000, saturating at INT64_MAX. */
static int64_t cl_scale_sat(uint64_t a, uint64_t b)
{
	uint64_t hi = elv_div64(a, 1000u), lo = a - hi * 1000u, v;

	if (b && hi > elv_div64((uint64_t)INT64_MAX, b))
		return INT64_MAX;
	v = hi * b + elv_div64(lo * b, 1000u);
	return v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v;
}

struct cl_cand {
	struct elv_request *rq;
	int64_t cost;
	int ahead;
};

/* Canonical order: lower cost, then ahead, then earlier arrival. */
static int cl_better(const struct cl_cand *a, const struct cl_cand *b)
{
	if (a->cost != b->cost)
		return a->cost < b->cost;
	if (a->ahead != b->ahead)
		return a->ahead;
	return elv_rq_seq_cmp(a->rq, b->rq) < 0;
}

/*
 * The SPTF cost of @rq: the host's positioning-time estimate (ns), or the seek distance in
 * positions when the host gave none; ASPTF subtracts weight/1000 times the time waited.
 */
static void cl_sptf_cost(struct elv_queue *q, struct cl_data *d, struct elv_request *rq,
			 uint64_t now, struct cl_cand *c)
{
	uint64_t h = cl_head(d), p = cl_pos(d, rq), t;

	c->rq = rq;
	c->ahead = d->dir > 0 ? p >= h : p <= h;
	if (elv_position_time(q, rq, now, &t) == 0) {
		d->stat[CL_ST_ESTIMATES]++;
	} else {
		d->stat[CL_ST_FALLBACKS]++;
		t = p > h ? p - h : h - p;
	}
	c->cost = t > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)t;
	if (d->kind == CL_ASPTF && elv_time_after(now, elv_rq_time(rq)))
		c->cost -= cl_scale_sat(now - elv_rq_time(rq), (uint64_t)d->weight);
}

static void cl_sptf_try(struct elv_queue *q, struct cl_data *d, struct elv_request *rq,
			uint64_t now, struct cl_cand *best)
{
	struct cl_cand c;

	if (!rq || rq == best->rq)
		return;
	cl_sptf_cost(q, d, rq, now, &c);
	if (!best->rq || cl_better(&c, best))
		*best = c;
}

/*
 * SPTF: the cheapest of the @window nearest candidates on each side of the head and of the
 * oldest request (so that aging always sees the one that waited longest). Exact while the
 * queue holds at most 2 * window requests; beyond, a far request wins only through aging.
 */
static struct elv_request *cl_pick_sptf(struct elv_queue *q, struct cl_data *d, uint64_t now)
{
	struct cl_cand best = { NULL, 0, 0 };
	struct elv_request *up = cl_ceil(d, cl_head(d)), *down;
	struct elv_rb_node *n;
	int64_t i;

	if (up) {
		down = elv_sort_prev(up);
	} else {
		for (n = d->cand.root; n && n->right; n = n->right)
			;
		down = elv_rb_rq(n);
	}
	for (i = 0; i < d->window && up; i++, up = elv_sort_next(up))
		cl_sptf_try(q, d, up, now, &best);
	for (i = 0; i < d->window && down; i++, down = elv_sort_prev(down))
		cl_sptf_try(q, d, down, now, &best);
	cl_sptf_try(q, d, elv_list_first_rq(&d->fifo), now, &best);
	return best.rq;
}

static struct elv_request *cl_pick(struct elv_queue *q, struct cl_data *d, uint64_t now)
{
	switch (d->kind) {
	case CL_FCFS:
		return elv_list_first_rq(&d->fifo);
	case CL_SSTF:
		return cl_pick_near(d, 0);
	case CL_VR:
		return cl_pick_near(d, cl_penalty((uint64_t)d->r, cl_nr_pos(d)));
	case CL_CSCAN:
	case CL_CLOOK:
		return cl_pick_up(d);
	case CL_SPTF:
	case CL_ASPTF:
		return cl_pick_sptf(q, d, now);
	default: /* SCAN, LOOK, and the sweeps of N-step SCAN and FSCAN */
		if (cl_batched(d) && !d->cand.root)
			cl_refill(d);
		return cl_pick_near(d, UINT64_MAX);
	}
}

/*
 * Move the head to @rq: count the travel each algorithm specifies (SCAN goes on to the edge
 * before turning, C-SCAN to the top and back to 0, C-LOOK jumps) and update the direction.
 */
static void cl_move(struct cl_data *d, const struct elv_request *rq)
{
	uint64_t h = cl_head(d), c = cl_pos(d, rq), edge = cl_nr_pos(d) - 1, dist;
	int behind = d->dir > 0 ? c < h : c > h;

	if (d->kind == CL_SCAN && behind)
		dist = d->dir > 0 ? (edge - h) + (edge - c) : h + c;
	else if (d->kind == CL_CSCAN && c < h)
		dist = (edge - h) + (d->count_return ? edge : 0) + c;
	else if (d->kind == CL_CLOOK && c < h)
		dist = d->count_return ? h - c : 0;
	else
		dist = c > h ? c - h : h - c;
	d->stat[CL_ST_TRAVEL] += dist;
	if (d->kind != CL_CSCAN && d->kind != CL_CLOOK && c != h) {
		int dir = c > h ? 1 : -1;

		if (dir != d->dir)
			d->stat[CL_ST_TURNS]++;
		d->dir = dir;
	}
	d->head = rq->sector;
}

static struct elv_request *cl_dispatch(struct elv_queue *q, uint64_t now, int force)
{
	struct cl_data *d = cl_of(q);
	struct elv_request *rq;

	(void)force; /* never idles */
	rq = cl_pick(q, d, now);
	if (!rq)
		return NULL;
	cl_move(d, rq);
	cl_remove(q, rq);
	return rq;
}

/* A new sectors-per-cylinder figure changes every key: rebuild the candidate tree. */
static void cl_rekey(struct cl_data *d)
{
	struct elv_list *l;

	d->cand.root = d->cand.first = NULL;
	d->max_pos = cl_head(d); /* the edge stays at or beyond the head */
	for (l = d->fifo.next; l != &d->fifo; l = l->next) {
		struct elv_request *rq = elv_list_rq(l);
		uint64_t pos = cl_pos(d, rq);

		if (pos > d->max_pos)
			d->max_pos = pos;
		/* Waiting requests' tree is keyed by arrival only and stays as it is. */
		if (d->kind != CL_FCFS && !cl_waiting(d, rq))
			cl_insert(d, &d->cand, rq, 1);
	}
}

static void cl_tunable_changed(struct elv_queue *q, const struct elv_tunable *t)
{
	struct cl_data *d = cl_of(q);

	if (t->offset == (uint32_t)offsetof(struct cl_data, up))
		d->dir = d->up ? 1 : -1;
	else if (t->offset == (uint32_t)offsetof(struct cl_data, cyl_sectors))
		cl_rekey(d);
}

static void cl_stats(const struct elv_queue *q, uint64_t *vals)
{
	const struct cl_data *d = cl_of(q);
	unsigned i;

	for (i = 0; i < CL_NR_STATS; i++)
		vals[i] = d->stat[i];
}

/* Keys ascend through tree @t and every node is a queued request; the count in @n. */
static int cl_check_tree(const struct cl_data *d, const struct elv_rb_root *t, int by_pos,
			 uint32_t *n)
{
	const struct elv_rb_node *x;
	const struct elv_request *prev = NULL;

	if (elv_rb_check(t))
		return ELV_EINVAL;
	for (x = t->first; x; x = elv_rb_next(x)) {
		const struct elv_request *rq = elv_rb_rq(x);

		if (elv_rq_state(rq) != ELV_RQ_QUEUED || (prev && cl_before(d, rq, prev, by_pos)))
			return ELV_EINVAL;
		prev = rq;
		(*n)++;
	}
	return 0;
}

static int cl_check(const struct elv_queue *q)
{
	const struct cl_data *d = cl_of(q);
	const struct elv_list *l;
	const struct elv_request *prev = NULL;
	uint32_t n = 0, in_trees = 0;

	for (l = d->fifo.next; l != &d->fifo; l = l->next) {
		const struct elv_request *rq = elv_list_rq(l);

		if (elv_rq_state(rq) != ELV_RQ_QUEUED || (prev && elv_rq_seq_cmp(prev, rq) > 0) ||
		    cl_pos(d, rq) > d->max_pos)
			return ELV_EINVAL;
		prev = rq;
		n++;
	}
	if (n != elv_queue_nr_queued(q) || (d->dir != 1 && d->dir != -1) ||
	    cl_head(d) > d->max_pos)
		return ELV_EINVAL;
	if (cl_check_tree(d, &d->cand, 1, &in_trees) || cl_check_tree(d, &d->wait, 0, &in_trees))
		return ELV_EINVAL;
	if (!cl_batched(d) && d->wait.root)
		return ELV_EINVAL;
	return in_trees == (d->kind == CL_FCFS ? 0 : n) ? 0 : ELV_EINVAL;
}

/* ---- tunables and policies ------------------------------------------------------------- */

#define CL_OFF(m) ((uint32_t)offsetof(struct cl_data, m))
#define CL_T_CYL                                                                               \
	{ "cylinder_sectors", "sectors", "sectors per position (1: plain LBN order)", 1, 1,    \
	  (int64_t)1 << 32, CL_OFF(cyl_sectors), 1 }
#define CL_T_POS                                                                               \
	{ "positions", "positions", "positions on the disk; 0: the highest seen plus one", 0,  \
	  0, INT64_MAX, CL_OFF(positions), 1 }
#define CL_T_UP                                                                                \
	{ "direction_up", "bool", "direction of travel: 1 up, 0 down (setting it turns)", 1,  \
	  0, 1, CL_OFF(up), 1 }
#define CL_T_RETURN                                                                            \
	{ "count_return", "bool", "count the return stroke in the travel statistic", 1, 0, 1, \
	  CL_OFF(count_return), 1 }
#define CL_T_WINDOW                                                                            \
	{ "window", "requests", "nearest requests examined on each side of the head", 16, 1,  \
	  4096, CL_OFF(window), 1 }

static const struct elv_tunable cl_t_sstf[] = { CL_T_CYL, CL_T_UP };
static const struct elv_tunable cl_t_scan[] = { CL_T_CYL, CL_T_POS, CL_T_UP };
static const struct elv_tunable cl_t_circ[] = { CL_T_CYL, CL_T_POS, CL_T_RETURN };
static const struct elv_tunable cl_t_nscan[] = {
	{ "n", "requests", "requests per sweep, taken in arrival order", 16, 1, (int64_t)1 << 24,
	  CL_OFF(n), 1 },
	CL_T_CYL, CL_T_UP,
};
static const struct elv_tunable cl_t_vr[] = {
	{ "r", "thousandths", "turn-round penalty as a fraction of the disk (0: SSTF, 1000: LOOK)",
	  200, 0, 1000, CL_OFF(r), 1 },
	CL_T_CYL, CL_T_POS, CL_T_UP,
};
static const struct elv_tunable cl_t_sptf[] = { CL_T_WINDOW, CL_T_CYL, CL_T_UP };
static const struct elv_tunable cl_t_asptf[] = {
	{ "weight", "thousandths", "aging: time waited subtracted from the cost, per 1000", 10,
	  0, 1000000, CL_OFF(weight), 1 },
	CL_T_WINDOW, CL_T_CYL, CL_T_UP,
};

#define CL_NR(t) (unsigned)(sizeof(t) / sizeof((t)[0]))

#define CL_POLICY(id, kind, nm, text, tun, nt)                                                 \
	static void cl_init_##id(struct elv_queue *q)                                          \
	{                                                                                      \
		cl_init(q, kind);                                                              \
	}                                                                                      \
	const struct elv_policy elv_policy_##id = {                                            \
		.abi = ELV_POLICY_ABI,                                                         \
		.struct_size = sizeof(struct elv_policy),                                      \
		.name = (nm),                                                                  \
		.desc = (text),                                                                \
		.data_size = sizeof(struct cl_data),                                           \
		.tunables = (tun),                                                             \
		.nr_tunables = (nt),                                                           \
		.stat_names = cl_stat_names,                                                   \
		.nr_stats = CL_NR_STATS,                                                       \
		.init = cl_init_##id,                                                          \
		.add = cl_add,                                                                 \
		.remove = cl_remove,                                                           \
		.merged = ELV_POLICY_MERGE(cl_merged),                                         \
		.dispatch = cl_dispatch,                                                       \
		.oldest = cl_oldest,                                                           \
		.tunable_changed = ELV_POLICY_TUNED(cl_tunable_changed),                       \
		.stats = ELV_POLICY_STATS(cl_stats),                                           \
		.check = ELV_POLICY_CHECK(cl_check),                                           \
		.allow_merge = (kind) == CL_FCFS ? ELV_POLICY_MERGE(cl_no_merge) : NULL,       \
	}

CL_POLICY(fcfs, CL_FCFS, "fcfs", "first come, first served: arrival order, no merging",
	  NULL, 0);
CL_POLICY(sstf, CL_SSTF, "sstf", "shortest seek first: the nearest request either way",
	  cl_t_sstf, CL_NR(cl_t_sstf));
CL_POLICY(scan, CL_SCAN, "scan", "elevator to the disk's edges (travel counted to the edge)",
	  cl_t_scan, CL_NR(cl_t_scan));
CL_POLICY(look, CL_LOOK, "look", "elevator that turns at the last request either way",
	  cl_t_scan, CL_NR(cl_t_scan));
CL_POLICY(cscan, CL_CSCAN, "cscan", "one-way elevator up to the edge, return to 0",
	  cl_t_circ, CL_NR(cl_t_circ));
CL_POLICY(clook, CL_CLOOK, "clook", "one-way elevator, jump back to the lowest request",
	  cl_t_circ, CL_NR(cl_t_circ));
CL_POLICY(nscan, CL_NSCAN, "nscan", "N-step SCAN: LOOK sweeps over n requests at a time",
	  cl_t_nscan, CL_NR(cl_t_nscan));
CL_POLICY(fscan, CL_FSCAN, "fscan", "LOOK sweeps over what was queued when each began",
	  cl_t_sstf, CL_NR(cl_t_sstf));
CL_POLICY(vr, CL_VR, "vr", "V(R): SSTF with a turn-round penalty of R times the disk",
	  cl_t_vr, CL_NR(cl_t_vr));
CL_POLICY(sptf, CL_SPTF, "sptf", "shortest positioning time first (host estimate, or seek)",
	  cl_t_sptf, CL_NR(cl_t_sptf));
CL_POLICY(asptf, CL_ASPTF, "asptf", "SPTF aged by time waited: bounded starvation",
	  cl_t_asptf, CL_NR(cl_t_asptf));
