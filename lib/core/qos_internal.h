/*
 * Library-internal declarations of the QoS stage: the throttle meters (throttle.c), the mClock
 * tag scheduler (mclock.c) and the stage that holds requests for them (qos.c). Never installed.
 *
 * Both algorithms are pure: they keep integer state in the memory the host gave, take the
 * time as an argument, never allocate and never read a clock. Times are queue times compared
 * by their difference (elv_time_after() and friends), so they may wrap past 2^64.
 */
#ifndef ELV_QOS_INTERNAL_H
#define ELV_QOS_INTERNAL_H

#include "elv_internal.h"
#include "elevator/qos.h"

#define ELV_NSEC_PER_SEC 1000000000ULL
/* Longest wait or tag lead the algorithms produce: keeps every difference below 2^63. */
#define ELV_QOS_HORIZON (1ULL << 62)

/* Kept out of line (ELV_APART, elv_internal.h). */
#define ELV_QOS_APART ELV_APART

/* floor(a * b / d) with the remainder in *rem, for d in 1..2^63-1; UINT64_MAX when it
 * does not fit (then *rem is 0). */
uint64_t elv_qos_muldiv(uint64_t a, uint64_t b, uint64_t d, uint64_t *rem);

/* ---- throttle.c ---------------------------------------------------------------------- */

/* What a request adds to one level: ns + rem / den (sizes repeat, divisions are dear). */
struct elv_thr_cost {
	uint64_t ns, rem;
};

/*
 * One level of a leaky bucket (A.1 of the fact sheet), kept as a time: its content, in units,
 * is the time it takes to drain at its rate, so the level is empty from @tat on and holds
 * (tat - now + frac / den) ns worth of units before that. Draining costs nothing; filling
 * with n units adds n * 1e9 / den ns, exactly (the remainder is kept in @frac).
 */
struct elv_thr_level {
	/* Drains to zero at tat (+ frac / den ns). The two are apart: side by side, compilers
	 * fill them in vector registers, which takes more instructions than it saves. */
	uint64_t tat;
	uint64_t allow;     /* what it may hold (ns) before a request waits */
	uint64_t frac;
	uint64_t den;       /* rate times the operation size (1 for bytes and plain ops) */
	/* What a request of elv_thr.size[s] bytes adds, in c[s]. Here, a fill finds them at a
	 * fixed distance from the level. */
	struct elv_thr_cost c[2];
};

/* One leaky bucket: its average level and, with a burst length, its burst level. A request
 * counts as units: its bytes in a bytes bucket; in an operations bucket one operation, or
 * with an operation size (op_size) that size when it is no larger, else its bytes (the rate
 * is then in units of 1 / op_size operations). */
struct elv_thr_bucket {
	struct elv_thr_level lv[2]; /* average, burst (lv[1].den 0: no burst level) */
};

/* io.max state of one direction (A.2): what was dispatched in the current slice. */
struct elv_iomax_dir {
	uint64_t bps, iops;          /* limits, 0 = unlimited */
	uint64_t bytes_disp, io_disp;
	uint64_t start, end;         /* slice */
	int64_t carry_bytes, carry_ios;
};

struct elv_thr {
	uint8_t on;      /* any limit set */
	uint8_t mode;    /* enum elv_throttle_mode */
	uint8_t used;    /* bit i: bucket i limits */
	uint8_t leaky;   /* on, with ELV_THROTTLE_BUCKET */
	uint32_t op_size; /* iops_size */
	/* Leaky buckets: the buckets a request of each direction meets, and their levels (at
	 * most two buckets, QEMU's rules, of two levels each), where they are: byte offsets
	 * from the throttle, which address one in an addition where an index would take a
	 * multiplication at each use. */
	uint8_t nr_dir[2], nr_lv[2];
	uint16_t dir_off[2][4], lv_off[2][4];
	uint8_t cur; /* leaky buckets: the slot of size[] met last */
	uint64_t slice, tick; /* io.max slice and clock tick (ns) */
	/* Leaky buckets: every level is below its allowance at any queue time after this one
	 * (the latest level minus its allowance, kept as levels fill), so one comparison clears a
	 * request of every bucket it meets. */
	uint64_t calm_from;
	/* Leaky buckets: the largest allowance of a level, so that every level is empty at any
	 * queue time after calm_from + drain_cap. */
	uint64_t drain_cap;
	/* Leaky buckets: the two request sizes met last, either direction, whose costs the
	 * levels hold (elv_thr_level.c). Real workloads have few sizes, and two in turn should
	 * not work costs out each time. A size is kept only when its costs cannot carry a level
	 * from below its allowance past the horizon (so a fill from there needs no horizon
	 * test); 0: none. */
	uint64_t size[2];
	union {
		struct elv_thr_bucket b[ELV_THROTTLE_NR];
		struct elv_iomax_dir d[2];
	} u;
};

int elv_thr_validate(const struct elv_throttle_settings *t);
/* Apply valid settings at @now; @queued[d]: requests waiting in direction d (io.max carries
 * the credit of the old limits over when some are). @t NULL: no limits. */
void elv_thr_apply(struct elv_thr *th, const struct elv_throttle_settings *t, uint64_t now,
		   const uint32_t queued[2], uint64_t slice, uint64_t tick);

/*
 * Leaky buckets (th->leaky): is every level below its allowance at @now (calm_from passed)?
 * Then a request of any size may go at once. Inline, so that the stage's usual paths test
 * it and reach the meter in one jump, or not at all.
 */
static inline int elv_thr_calm(const struct elv_thr *th, uint64_t now)
{
	return elv_time_before(th->calm_from, now);
}

/* elv_thr_wait() without its inline answer for calm levels. */
uint64_t elv_thr_wait_any(struct elv_thr *th, int dir, uint64_t bytes, uint64_t now, int queued);

/*
 * How long a request of @bytes in direction @dir must wait at @now (0: it may go). @queued:
 * this client has requests waiting in @dir (io.max starts no new slice then). A request
 * tried when its wait is over mostly finds every level calm: answered here, without a call.
 */
static inline uint64_t elv_thr_wait(struct elv_thr *th, int dir, uint64_t bytes, uint64_t now,
				    int queued)
{
	if (th->leaky && elv_thr_calm(th, now))
		return 0;
	return elv_thr_wait_any(th, dir, bytes, now, queued);
}

/* Count a request that goes at @now. */
void elv_thr_charge(struct elv_thr *th, int dir, uint64_t bytes, uint64_t now);
/* elv_thr_charge() of a request that goes at @now while elv_thr_calm(): returns 0 (its
 * wait, and ELV_STAGE_PASS), so that a caller may end with the call. */
int elv_thr_charge_calm(struct elv_thr *th, int dir, uint64_t bytes, uint64_t now);
/* elv_thr_charge() of a request of @bytes that may go at @now (elv_thr_wait() found 0) as
 * it leaves the head of its FIFO, then elv_thr_wait() of the one of @next bytes behind it
 * (queued): the same results, in one walk through the levels. */
uint64_t elv_thr_charge_wait(struct elv_thr *th, int dir, uint64_t bytes, uint64_t next,
			     uint64_t now);
/* elv_thr_wait() with nothing waiting, then elv_thr_charge() when the wait is 0. */
uint64_t elv_thr_take(struct elv_thr *th, int dir, uint64_t bytes, uint64_t now);
/* Internal consistency for elv_queue_check(): 0 or ELV_EINVAL. */
int elv_thr_check(const struct elv_thr *th);

/* ---- mclock.c ------------------------------------------------------------------------ */

/* Release phases (struct elv_qos_client_stats), indices of elv_mc_client.served. */
#define ELV_MC_RESERVATION 0
#define ELV_MC_WEIGHT 1
#define ELV_MC_OVER 2

/* elv_mc_client.tagged: tags held; tags held, and R owes the credit of the last request
 * served (one unit, taken when the next request is tagged). */
#define ELV_MC_TAGGED 1
#define ELV_MC_OWED 2

/* One mClock client: its requests in arrival order and the tags of the first one. */
struct elv_mc_client {
	struct elv_list fifo;   /* its requests, through rq->fifo */
	struct elv_list active; /* on the scheduler's list while it has requests */
	uint64_t r, p, l;       /* tags of the first request (or of the last one tagged) */
	uint64_t r_rem, p_rem, l_rem; /* fractions of a ns of those tags */
	uint64_t xl, xl_rem;    /* reject mode: limit tag of the last request offered */
	uint64_t delta;         /* added to p when comparing (idle-client adjustment) */
	uint64_t last;          /* last time it had a request added or served */
	uint64_t cost;          /* cost of the first request */
	uint64_t res, lim;      /* reservation and limit, units per second (0 = none) */
	/* What one unit of cost adds to each tag (ns and remainder): most requests cost 1. */
	uint64_t r1, r1_rem, p1, p1_rem, l1, l1_rem;
	uint64_t served[3];     /* requests released in each phase; kept when it leaves mClock */
	uint32_t weight;
	uint32_t id;            /* ties go to the lower id */
	uint32_t nr;            /* requests queued */
	uint8_t ready;          /* the first request is within the limit */
	uint8_t idle;           /* no request for idle_age: starts level with the others */
	uint8_t tagged;         /* r, p, l hold tags: ELV_MC_TAGGED or ELV_MC_OWED, else 0 */
	uint8_t xtagged;        /* xl holds a tag */
};

struct elv_mc {
	struct elv_list active; /* clients with requests */
	/*
	 * Every mClock client, one after another (the first for NULL): the clients live in the
	 * host's streams and groups, which may go away without telling the scheduler while they
	 * hold no request, so the scheduler keeps no list of them.
	 */
	struct elv_mc_client *(*next_client)(const void *ctx, const struct elv_mc_client *c);
	const void *ctx;
	uint64_t idle_age;
	uint64_t reject_ns;     /* ELV_QOS_AT_LIMIT_REJECT: threshold */
	/*
	 * No active client with a reservation has its R tag before this one: while it is
	 * after the time of a release, no R is due and the release looks at weight tags only.
	 * Lowered as R tags are given, worked out again when it comes due.
	 */
	uint64_t r_low;
	uint32_t cost_size;
	uint32_t next_id;
	uint32_t nr;            /* requests queued, all clients */
	uint8_t at_limit;
};

void elv_mc_init(struct elv_mc *mc);
/* The cost of @rq in units: 1 + bytes / cost_size, or 1. */
uint64_t elv_mc_cost(const struct elv_mc *mc, const struct elv_request *rq);
void elv_mc_client_join(struct elv_mc *mc, struct elv_mc_client *c,
			const struct elv_mclock_settings *m, uint64_t now);
/* New settings @m for @c at @now (the next release looks at every R tag again). */
void elv_mc_client_set(struct elv_mc *mc, struct elv_mc_client *c,
		       const struct elv_mclock_settings *m);
int elv_mc_validate(const struct elv_mclock_settings *m);
/* Reject mode: may @c take a request of @cost at @now? Refusing advances its limit tag. */
int elv_mc_offer(struct elv_mc *mc, struct elv_mc_client *c, uint64_t cost, uint64_t now);
/* @rq joins @c's queue at @now; returns ELV_STAGE_HELD. */
int elv_mc_add(struct elv_mc *mc, struct elv_mc_client *c, struct elv_request *rq,
	       uint64_t now);
/* @rq of @c, which has no request queued, while no client has: served at once in its phase
 * when its tags allow (ELV_STAGE_PASS), else queued as elv_mc_add() would (ELV_STAGE_HELD). */
int elv_mc_direct(struct elv_mc *mc, struct elv_mc_client *c, struct elv_request *rq,
		  uint64_t now);
/* The next request to release at @now, counted in its client's phase, or NULL (then
 * elv_mc_next() tells when one will be due). */
struct elv_request *elv_mc_pull(struct elv_mc *mc, uint64_t now);
/* When, seen at @now, the next request will be due (ELV_TIME_NEVER: none). */
uint64_t elv_mc_next(const struct elv_mc *mc, uint64_t now);
/* Take @rq out of @c's queue unserved (cancel, drain). */
void elv_mc_remove(struct elv_mc *mc, struct elv_mc_client *c, struct elv_request *rq,
		   uint64_t now);
int elv_mc_check(const struct elv_mc *mc);

#endif /* ELV_QOS_INTERNAL_H */
