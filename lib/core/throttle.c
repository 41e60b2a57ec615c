/*
 * Throttle meters of the QoS stage, in integers: the leaky bucket used as a meter (QEMU's
 * block throttling, with bursts and size-normalised operations) and Linux io.max's slices.
 *
 * Leaky bucket. A bucket's level, in bytes or operations, drains at its average rate. Kept
 * as the time it takes to drain (ns), draining is free and filling exact: n units add
 * n * 1e9 / rate ns, the remainder of the division kept apart, so no rounding accumulates.
 * A request may go while every bucket it touches is at most at its burst allowance
 * (max * length units, or 100 ms worth of the average when no burst is set) and, with a
 * burst longer than a second, while the burst level (draining at the burst rate) is at most
 * 100 ms worth of the burst rate. It is judged before it is counted, so one request may
 * overshoot; later ones pay for it.
 *
 * io.max. Each direction grants bps * elapsed bytes and iops * elapsed operations per slice,
 * elapsed rounded up to whole slices (a slice's worth passes at once); a request that does
 * not fit waits for the time its excess needs, in clock ticks, at least one. Slices are
 * trimmed as they pass, and changed limits carry the old credit (or debt) over.
 */
#include "qos_internal.h"

/* What the burst level may hold before a request waits: 100 ms worth of the burst rate. */
#define ELV_THR_BURST_ALLOW (ELV_NSEC_PER_SEC / 10)

/*
 * The most an average level may hold before a request waits: 2^60 ns, 36 years, which no
 * real burst setting comes near (max * length / avg may come to far more). Times are compared
 * by their difference, which must stay below 2^63. A level lies at most the horizon (2^62)
 * past the time it was last filled, and calm_from is the latest level minus its allowance:
 * a level that has not moved lies up to 2^62 + its allowance (plus the time since) before
 * calm_from, and calm_from + drain_cap (the largest allowance) up to 2^62 + drain_cap past
 * the queue time. Allowances of 2^60 keep both below 2^63, with 3 * 2^60 ns (over 100 years)
 * left for the time that passes.
 */
#define ELV_THR_ALLOW_MAX (1ull << 60)

/* 64 x 64 -> 128-bit product as two words, with 32-bit pieces (no compiler helpers). */
static void elv_mul128(uint64_t a, uint64_t b, uint64_t *hi, uint64_t *lo)
{
	uint64_t a0 = (uint32_t)a, a1 = a >> 32, b0 = (uint32_t)b, b1 = b >> 32;
	uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
	uint64_t mid = (p00 >> 32) + (uint32_t)p01 + (uint32_t)p10;

	*lo = (mid << 32) | (uint32_t)p00;
	*hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
}

/* elv_qos_muldiv() of two factors below 2^32, whose product a 64-bit word holds. */
static ELV_SPEED_INLINE uint64_t elv_muldiv_small(uint64_t a, uint64_t b, uint64_t d,
						  uint64_t *rem)
{
	uint64_t p = a * b, q = elv_div64(p, d);

	*rem = p - q * d;
	return q;
}

uint64_t elv_qos_muldiv(uint64_t a, uint64_t b, uint64_t d, uint64_t *rem)
{
	uint64_t hi, lo, q = 0, r;
	int i;

	if (!((a | b) >> 32))
		return elv_muldiv_small(a, b, d, rem);
	elv_mul128(a, b, &hi, &lo);
	if (hi >= d) {
		*rem = 0;
		return UINT64_MAX;
	}
	/* Long division, one bit at a time: r < d < 2^63, so r << 1 never overflows. */
	r = hi;
	for (i = 63; i >= 0; i--) {
		r = (r << 1) | ((lo >> i) & 1u);
		q <<= 1;
		if (r >= d) {
			r -= d;
			q |= 1u;
		}
	}
	*rem = r;
	return q;
}

/* ---- settings ------------------------------------------------------------------------ */

/* The buckets a request of direction @dir meets: total and its direction, bytes and ops. */
static unsigned elv_bucket_mask(int dir)
{
	return dir == ELV_DIR_READ
		       ? (1u << ELV_THROTTLE_BPS_TOTAL) | (1u << ELV_THROTTLE_BPS_READ) |
				 (1u << ELV_THROTTLE_IOPS_TOTAL) | (1u << ELV_THROTTLE_IOPS_READ)
		       : (1u << ELV_THROTTLE_BPS_TOTAL) | (1u << ELV_THROTTLE_BPS_WRITE) |
				 (1u << ELV_THROTTLE_IOPS_TOTAL) | (1u << ELV_THROTTLE_IOPS_WRITE);
}

static int elv_thr_is_ops(int k)
{
	return k >= ELV_THROTTLE_IOPS_TOTAL;
}

/* io.max: only the per-direction averages. */
static int elv_iomax_validate(const struct elv_throttle_settings *t)
{
	int k;

	if (t->iops_size)
		return ELV_EINVAL;
	for (k = 0; k < ELV_THROTTLE_NR; k++) {
		const struct elv_throttle_limit *l = &t->limit[k];

		if (l->max || l->max_length ||
		    ((k == ELV_THROTTLE_BPS_TOTAL || k == ELV_THROTTLE_IOPS_TOTAL) && l->avg))
			return ELV_EINVAL;
		if (l->avg > (elv_thr_is_ops(k) ? UINT32_MAX : ELV_THROTTLE_RATE_MAX))
			return ELV_ERANGE;
	}
	return 0;
}

/* Rates and lengths within range, and the operation size times a rate kept below 2^62. */
static int elv_bucket_ranges(const struct elv_throttle_settings *t)
{
	int k;

	for (k = 0; k < ELV_THROTTLE_NR; k++) {
		const struct elv_throttle_limit *l = &t->limit[k];
		uint64_t top = l->max > l->avg ? l->max : l->avg;

		if (top > ELV_THROTTLE_RATE_MAX || l->max_length > ELV_THROTTLE_LENGTH_MAX)
			return ELV_ERANGE;
		if (elv_thr_is_ops(k) && t->iops_size && top > elv_div64(ELV_QOS_HORIZON, t->iops_size))
			return ELV_ERANGE;
	}
	return 0;
}

/* QEMU's rules: no total beside a per-direction limit of one kind, bursts need averages. */
static int elv_bucket_rules(const struct elv_throttle_settings *t)
{
	const struct elv_throttle_limit *l = t->limit;
	int k, iops = 0;

	for (k = 0; k < ELV_THROTTLE_NR; k += 3) {
		if (l[k].avg && (l[k + 1].avg || l[k + 2].avg))
			return ELV_EINVAL;
		if (l[k].max && (l[k + 1].max || l[k + 2].max))
			return ELV_EINVAL;
	}
	for (k = 0; k < ELV_THROTTLE_NR; k++) {
		if (l[k].max && (!l[k].avg || l[k].max < l[k].avg))
			return ELV_EINVAL;
		if (l[k].max_length > 1 && !l[k].max)
			return ELV_EINVAL;
		if (elv_thr_is_ops(k) && l[k].avg)
			iops = 1;
	}
	return t->iops_size && !iops ? ELV_EINVAL : 0;
}

int elv_thr_validate(const struct elv_throttle_settings *t)
{
	int k, err;

	if (!t || t->mode > ELV_THROTTLE_IOMAX || (t->reserved8[0] | t->reserved8[1] |
						   t->reserved8[2]) ||
	    (t->reserved[0] | t->reserved[1]))
		return ELV_EINVAL;
	for (k = 0; k < ELV_THROTTLE_NR; k++)
		if (t->limit[k].reserved)
			return ELV_EINVAL;
	if (t->mode == ELV_THROTTLE_IOMAX)
		return elv_iomax_validate(t);
	err = elv_bucket_ranges(t);
	return err ? err : elv_bucket_rules(t);
}

int elv_throttle_check(const struct elv_throttle_settings *t)
{
	return elv_thr_validate(t);
}

/* An empty level at @now draining at @den per second, allowed to hold @allow ns. */
static void elv_level_setup(struct elv_thr_level *lv, uint64_t den, uint64_t allow, uint64_t now)
{
	lv->tat = now;
	lv->frac = 0;
	lv->den = den;
	lv->allow = allow;
}

/* Bucket @k from limit @l: its rates scaled to operation size, its allowances in ns. */
static void elv_bucket_setup(struct elv_thr_bucket *b, const struct elv_throttle_limit *l,
			     uint32_t size, uint64_t now)
{
	uint64_t len = l->max_length > 1 ? l->max_length : 1, rem;
	/* Without a burst rate, 100 ms worth of the average may stand in the bucket. */
	uint64_t allow = ELV_NSEC_PER_SEC / 10;

	if (l->max) {
		allow = elv_qos_muldiv(l->max, len * ELV_NSEC_PER_SEC, l->avg, &rem);
		if (allow > ELV_THR_ALLOW_MAX)
			allow = ELV_THR_ALLOW_MAX;
	}
	elv_level_setup(&b->lv[0], l->avg * size, allow, now);
	elv_level_setup(&b->lv[1], len > 1 ? l->max * size : 0, ELV_THR_BURST_ALLOW, now);
}

/*
 * The costs of one operation in both slots of operations bucket @b, which counts every
 * request as one (no operation size): set once, whatever the sizes met. A second at most,
 * they fit any level below the horizon (allowances are at most ELV_THR_ALLOW_MAX).
 */
static void elv_bucket_one_op(struct elv_thr_bucket *b)
{
	int j;

	for (j = 0; j < 2 && b->lv[j].den; j++) {
		struct elv_thr_level *lv = &b->lv[j];

		lv->c[0].ns = elv_div64(ELV_NSEC_PER_SEC, lv->den);
		lv->c[0].rem = ELV_NSEC_PER_SEC - lv->c[0].ns * lv->den;
		lv->c[1] = lv->c[0];
	}
}

/* The larger allowance of bucket @b's levels. */
static uint64_t elv_bucket_top_allow(const struct elv_thr_bucket *b)
{
	return b->lv[1].den && b->lv[1].allow > b->lv[0].allow ? b->lv[1].allow : b->lv[0].allow;
}

/* The later of @calm_from and @t (a level minus its allowance). Equal, either will do:
 * testing "not before" lets the compiler use the comparison's sign flag alone. */
static inline uint64_t elv_calm_after(uint64_t calm_from, uint64_t t)
{
	return elv_time_before(t, calm_from) ? calm_from : t;
}

/* The latest of @from and every level minus its allowance: from then on every level is
 * below its allowance. */
static uint64_t elv_thr_calm_of(const struct elv_thr *th, uint64_t from)
{
	int k;

	for (k = 0; k < ELV_THROTTLE_NR; k++) {
		const struct elv_thr_bucket *b = &th->u.b[k];

		if (!(th->used & (1u << k)))
			continue;
		from = elv_calm_after(from, b->lv[0].tat - b->lv[0].allow);
		if (b->lv[1].den)
			from = elv_calm_after(from, b->lv[1].tat - b->lv[1].allow);
	}
	return from;
}

/* List bucket @k, and its levels, among those a request of direction @dir meets. */
static void elv_thr_list_bucket(struct elv_thr *th, int dir, int k)
{
	const struct elv_thr_bucket *b = &th->u.b[k];
	size_t off = offsetof(struct elv_thr, u.b) + (unsigned)k * sizeof(*b);

	th->dir_off[dir][th->nr_dir[dir]++] = (uint16_t)off;
	th->lv_off[dir][th->nr_lv[dir]++] = (uint16_t)(off + offsetof(struct elv_thr_bucket, lv));
	if (b->lv[1].den)
		th->lv_off[dir][th->nr_lv[dir]++] =
			(uint16_t)(off + offsetof(struct elv_thr_bucket, lv) + sizeof(b->lv[0]));
}

/* io.max: a new slice from @now; @keep keeps the carried-over credit. */
static void elv_iomax_new_slice(struct elv_iomax_dir *d, uint64_t now, uint64_t slice, int keep)
{
	d->bytes_disp = d->io_disp = 0;
	d->start = now;
	d->end = now + slice;
	if (!keep)
		d->carry_bytes = d->carry_ios = 0;
}

/* bps * el / 1 s, at most 2^62. */
static uint64_t elv_iomax_allowed(uint64_t rate, uint64_t el)
{
	uint64_t rem, v = elv_qos_muldiv(rate, el, ELV_NSEC_PER_SEC, &rem);

	return v > ELV_QOS_HORIZON ? ELV_QOS_HORIZON : v;
}

/* Credit (or debt) of the limits in force over the current slice, carried into the next. */
static void elv_iomax_carry(struct elv_iomax_dir *d, uint64_t now)
{
	uint64_t el = elv_time_after(now, d->start) ? now - d->start : 0;

	if (d->bps)
		d->carry_bytes += (int64_t)elv_iomax_allowed(d->bps, el) - (int64_t)d->bytes_disp;
	if (d->iops)
		d->carry_ios += (int64_t)elv_iomax_allowed(d->iops, el) - (int64_t)d->io_disp;
}

void elv_thr_apply(struct elv_thr *th, const struct elv_throttle_settings *t, uint64_t now,
		   const uint32_t queued[2], uint64_t slice, uint64_t tick)
{
	static const uint8_t kind[2][2] = {
		{ ELV_THROTTLE_BPS_READ, ELV_THROTTLE_IOPS_READ },
		{ ELV_THROTTLE_BPS_WRITE, ELV_THROTTLE_IOPS_WRITE },
	};
	int k, dir, same = th->on && t && th->mode == ELV_THROTTLE_IOMAX &&
			  t->mode == ELV_THROTTLE_IOMAX;

	th->slice = slice;
	th->tick = tick;
	th->used = 0;
	th->on = 0;
	th->leaky = 0;
	th->size[0] = th->size[1] = 0; /* no request has 0 bytes: no costs yet */
	th->cur = 0;
	if (!t)
		return;
	th->mode = t->mode;
	th->op_size = t->iops_size;
	for (k = 0; k < ELV_THROTTLE_NR; k++)
		if (t->limit[k].avg)
			th->used |= (uint8_t)(1u << k);
	th->on = th->used != 0;
	th->leaky = th->on && t->mode == ELV_THROTTLE_BUCKET;
	if (t->mode == ELV_THROTTLE_IOMAX) {
		for (dir = 0; dir < 2; dir++) {
			struct elv_iomax_dir *d = &th->u.d[dir];

			if (!same) {
				d->carry_bytes = d->carry_ios = 0;
			} else if (queued[dir]) {
				elv_iomax_carry(d, now);
			}
			d->bps = t->limit[kind[dir][0]].avg;
			d->iops = t->limit[kind[dir][1]].avg;
			elv_iomax_new_slice(d, now, slice, 1);
		}
		return;
	}
	th->nr_dir[0] = th->nr_dir[1] = th->nr_lv[0] = th->nr_lv[1] = 0;
	th->drain_cap = 0;
	for (k = 0; k < ELV_THROTTLE_NR; k++) {
		if (!(th->used & (1u << k)))
			continue;
		elv_bucket_setup(&th->u.b[k], &t->limit[k],
				 elv_thr_is_ops(k) && t->iops_size ? t->iops_size : 1, now);
		if (elv_thr_is_ops(k) && !t->iops_size)
			elv_bucket_one_op(&th->u.b[k]);
		if (elv_bucket_top_allow(&th->u.b[k]) > th->drain_cap)
			th->drain_cap = elv_bucket_top_allow(&th->u.b[k]);
		for (dir = 0; dir < 2; dir++)
			if (elv_bucket_mask(dir) & (1u << k))
				elv_thr_list_bucket(th, dir, k);
	}
	/* Every level empty from now: below its allowance after now minus that allowance. */
	th->calm_from = elv_thr_calm_of(th, now - th->drain_cap);
}

/* ---- leaky bucket -------------------------------------------------------------------- */

/* Time level @lv must drain at @now to hold at most its allowance: ceil. */
static ELV_SPEED_INLINE uint64_t elv_level_wait(const struct elv_thr_level *lv, uint64_t now)
{
	uint64_t lvl;

	if (!elv_time_after(lv->tat, now))
		return 0; /* empty (a fraction past tat counts as drained: under 1 ns) */
	lvl = lv->tat - now;
	if (lvl < lv->allow || (lvl == lv->allow && !lv->frac))
		return 0;
	return lvl - lv->allow + (lv->frac != 0);
}

/* A bucket's wait is its average level's, @w, or else its burst level's (QEMU's order). */
static ELV_SPEED_INLINE uint64_t elv_bucket_wait_from(const struct elv_thr_bucket *b, uint64_t w,
						      uint64_t now)
{
	if (!w && b->lv[1].den)
		w = elv_level_wait(&b->lv[1], now);
	return w;
}

static uint64_t elv_bucket_wait(const struct elv_thr_bucket *b, uint64_t now)
{
	return elv_bucket_wait_from(b, elv_level_wait(&b->lv[0], now), now);
}

/*
 * Fill level @lv with cost @c at @now. Unless @clip is 0 (the caller knows the cost cannot
 * carry the level past the horizon), a level that would reach past the horizon stops there:
 * differences must stay below 2^63.
 */
static ELV_SPEED_INLINE void elv_level_fill(struct elv_thr_level *lv,
					    const struct elv_thr_cost *c, uint64_t now, int clip)
{
	uint64_t t = lv->tat, f;

	if (ELV_UNLIKELY(elv_time_before(t, now))) {
		/* Drained: empty, so it holds the cost from now (rem < den, no carry). Seldom on
		 * this path, elv_thr_fill_empty()'s for the most part. */
		t = now + c->ns;
		f = c->rem;
	} else {
		t += c->ns;
		f = lv->frac + c->rem;
		if (f >= lv->den) {
			f -= lv->den;
			t++;
		}
	}
	if (clip && ELV_UNLIKELY(t - now > ELV_QOS_HORIZON)) {
		t = now + ELV_QOS_HORIZON;
		f = 0;
	}
	lv->tat = t;
	lv->frac = f;
}

/* elv_drain_ns() of 2^32 units or more: apart, so that its callers need not keep registers
 * across a call they seldom make. */
static ELV_COLD uint64_t elv_drain_ns_large(uint64_t n, uint64_t den, uint64_t *rem)
{
	uint64_t ns = elv_qos_muldiv(n, ELV_NSEC_PER_SEC, den, rem);

	if (ns <= ELV_QOS_HORIZON)
		return ns;
	*rem = 0;
	return ELV_QOS_HORIZON;
}

/* The time @n units take to drain at @den per second: ns, remainder in *@rem; at most the
 * horizon. */
static uint64_t elv_drain_ns(uint64_t n, uint64_t den, uint64_t *rem)
{
	/* Below 2^32 units (a request under 4 GiB), the product fits a word and the time is
	 * below 2^32 * 1e9 ns < 2^62, within the horizon: no call, no clip. */
	if (ELV_LIKELY(!(n >> 32)))
		return elv_muldiv_small(n, ELV_NSEC_PER_SEC, den, rem);
	return elv_drain_ns_large(n, den, rem);
}

/* Does cost @c keep level @lv within the horizon when it fills from below its allowance?
 * It holds less than allow then, and a fill adds at most ns and one for the remainders. */
static int elv_level_cost_fits(const struct elv_thr_level *lv, const struct elv_thr_cost *c)
{
	return c->ns <= ELV_QOS_HORIZON - lv->allow;
}

/* The units a request of @bytes counts for in bucket @k: bytes, one op, or op size units up
 * to op size bytes (ops in units of 1 / op size) and its bytes above. */
static uint64_t elv_bucket_units(const struct elv_thr *th, int k, uint64_t bytes)
{
	if (!elv_thr_is_ops(k))
		return bytes;
	if (!th->op_size)
		return 1;
	return bytes <= th->op_size ? th->op_size : bytes;
}

/* The bucket at byte offset @off from @th (th->dir_off). */
static ELV_SPEED_INLINE struct elv_thr_bucket *elv_thr_bucket_at(const struct elv_thr *th,
								 unsigned off)
{
	return (struct elv_thr_bucket *)(uintptr_t)((const char *)th + off);
}

/* The level at byte offset @off from @th (th->lv_off). */
static ELV_SPEED_INLINE struct elv_thr_level *elv_thr_level_at(const struct elv_thr *th,
							       unsigned off)
{
	return (struct elv_thr_level *)(uintptr_t)((const char *)th + off);
}

/* The cost of a request of @bytes for level @j of bucket @k in *@c; 1 when it cannot carry
 * the level from below its allowance past the horizon. */
static int elv_level_cost_of(const struct elv_thr *th, int k, int j, uint64_t bytes,
			     struct elv_thr_cost *c)
{
	const struct elv_thr_level *lv = &th->u.b[k].lv[j];

	c->ns = elv_drain_ns(elv_bucket_units(th, k, bytes), lv->den, &c->rem);
	return elv_level_cost_fits(lv, c);
}

/*
 * The slot whose costs the levels hold for a request of @bytes: the size met last, else the
 * other one, which becomes the one met last; -1 for neither.
 */
static ELV_SPEED_INLINE int elv_thr_slot(struct elv_thr *th, uint64_t bytes)
{
	unsigned s = th->cur;

	if (bytes != th->size[s]) {
		s ^= 1u;
		if (bytes != th->size[s])
			return -1;
		th->cur = (uint8_t)s;
	}
	return (int)s;
}

/*
 * The costs in slot @s of a request of @bytes for the levels direction @dir meets, totals
 * left out when @apart (the other direction worked them out); 1 when they all fit below
 * the horizon. Operations levels without an operation size count one operation whatever
 * the size, whose costs elv_thr_apply() set for good. @small: @bytes is below 2^32, and so
 * is every level's units (an operation size is a 32-bit value), so each cost is one word's
 * division (elv_drain_ns()) and the loop makes no call.
 */
static ELV_SPEED_INLINE int elv_thr_costs_in(struct elv_thr *th, int dir, unsigned s,
					     uint64_t bytes, int apart, int small)
{
	const uint16_t *off = th->lv_off[dir], *end = off + th->nr_lv[dir];
	uint64_t op = th->op_size, n;
	int fits = 1;

	for (; off != end; off++) {
		struct elv_thr_level *lv = elv_thr_level_at(th, *off);
		unsigned k = (unsigned)(*off - offsetof(struct elv_thr, u.b)) /
			     (unsigned)sizeof(struct elv_thr_bucket);

		if (apart && (k == ELV_THROTTLE_BPS_TOTAL || k == ELV_THROTTLE_IOPS_TOTAL))
			continue;
		n = bytes;
		if (elv_thr_is_ops((int)k)) {
			if (!op)
				continue;
			n = bytes <= op ? op : bytes;
		}
		if (small)
			lv->c[s].ns = elv_muldiv_small(n, ELV_NSEC_PER_SEC, lv->den, &lv->c[s].rem);
		else
			lv->c[s].ns = elv_drain_ns(n, lv->den, &lv->c[s].rem);
		fits &= elv_level_cost_fits(lv, &lv->c[s]);
	}
	return fits;
}

/* The buckets of one direction only (th->used bits). */
#define ELV_THR_SPLIT_MASK                                                                     \
	((1u << ELV_THROTTLE_BPS_READ) | (1u << ELV_THROTTLE_BPS_WRITE) |                      \
	 (1u << ELV_THROTTLE_IOPS_READ) | (1u << ELV_THROTTLE_IOPS_WRITE))

/* elv_thr_resize()'s slot @s becomes the one met last with size @bytes when its costs
 * @fit; else its size is 0. */
static ELV_SPEED_INLINE int elv_thr_resized(struct elv_thr *th, unsigned s, uint64_t bytes,
					    int fits)
{
	th->size[s] = fits ? bytes : 0;
	if (fits)
		th->cur = (uint8_t)s;
	return (int)s;
}

/* elv_thr_resize() for a request of 4 GiB or more, or with buckets of one direction only:
 * the other direction's own levels too. Apart, so that the usual case keeps no registers
 * across a call. */
static ELV_COLD int elv_thr_resize_any(struct elv_thr *th, int dir, uint64_t bytes)
{
	unsigned s = th->cur ^ 1u;
	int fits = elv_thr_costs_in(th, dir, s, bytes, 0, 0);

	fits &= elv_thr_costs_in(th, dir ^ 1, s, bytes, 1, 0);
	return elv_thr_resized(th, s, bytes, fits);
}

/*
 * The costs of a request of @bytes in direction @dir, for a size not kept: worked out for
 * every level in the slot of the size met longer ago, which becomes the one met last with
 * size @bytes when they fit. Else its size is 0 and it stays the other slot: such costs
 * serve one request, and the next size of that kind takes the same slot, not the kept
 * size's. The levels come from the directions' lists, so that only buckets in use take a
 * turn; with totals alone, those of @dir are all.
 */
static ELV_SPEED_INLINE int elv_thr_resize_in(struct elv_thr *th, int dir, uint64_t bytes)
{
	unsigned s = th->cur ^ 1u;

	if (ELV_UNLIKELY((bytes >> 32) || (th->used & ELV_THR_SPLIT_MASK)))
		return elv_thr_resize_any(th, dir, bytes);
	return elv_thr_resized(th, s, bytes, elv_thr_costs_in(th, dir, s, bytes, 0, 1));
}

/* elv_thr_resize_in() as a call, for elv_thr_charge(). */
static int elv_thr_resize(struct elv_thr *th, int dir, uint64_t bytes)
{
	return elv_thr_resize_in(th, dir, bytes);
}

/* Fill the levels a request of direction @dir meets with their costs in slot @s (@clip: as
 * for elv_level_fill()), and move calm_from past every level's allowance. */
static ELV_SPEED_INLINE void elv_thr_fill(struct elv_thr *th, int dir, int s, uint64_t now,
					  int clip)
{
	const uint16_t *off = th->lv_off[dir], *end = off + th->nr_lv[dir];
	uint64_t calm_from = th->calm_from;

	for (; off != end; off++) {
		struct elv_thr_level *lv = elv_thr_level_at(th, *off);

		elv_level_fill(lv, &lv->c[s], now, clip);
		calm_from = elv_calm_after(calm_from, lv->tat - lv->allow);
	}
	th->calm_from = calm_from;
}

/*
 * elv_thr_fill() when every level is empty (@now is past calm_from + drain_cap): as
 * elv_level_fill() fills an empty level, each level holds its cost from @now (the remainder
 * is below its denominator, the cost within the horizon).
 */
static ELV_SPEED_INLINE void elv_thr_fill_empty(struct elv_thr *th, int dir, int s,
						uint64_t now)
{
	const uint16_t *off = th->lv_off[dir], *end = off + th->nr_lv[dir];
	uint64_t calm_from = th->calm_from;

	for (; off != end; off++) {
		struct elv_thr_level *lv = elv_thr_level_at(th, *off);

		lv->tat = now + lv->c[s].ns;
		lv->frac = lv->c[s].rem;
		calm_from = elv_calm_after(calm_from, lv->tat - lv->allow);
	}
	th->calm_from = calm_from;
}

/* ---- io.max -------------------------------------------------------------------------- */

/* @x rounded up to a multiple of @m (m > 0). */
static uint64_t elv_roundup(uint64_t x, uint64_t m)
{
	return elv_div64(x + m - 1, m) * m;
}

static uint64_t elv_iomax_wait(struct elv_thr *th, int dir, uint64_t bytes, uint64_t now,
			       int queued)
{
	struct elv_iomax_dir *d = &th->u.d[dir];
	uint64_t el, sub, el_r, allowed, rem, bw = 0, iw = 0, w;
	int64_t a;

	if (!d->bps && !d->iops)
		return 0;
	if ((elv_time_before(now, d->start) || elv_time_after(now, d->end)) && !queued)
		elv_iomax_new_slice(d, now, th->slice, 0);
	else if (elv_time_before(d->end, now + th->slice))
		d->end = d->start + elv_roundup(now + th->slice - d->start, th->slice);
	/* Elapsed time in whole ticks, as a kernel counting jiffies sees it. */
	el = now - d->start;
	sub = el - elv_div64(el, th->tick) * th->tick;
	el -= sub;
	if (d->bps) {
		el_r = elv_roundup(el ? el : th->slice, th->slice);
		a = (int64_t)elv_iomax_allowed(d->bps, el_r) + d->carry_bytes;
		a = (int64_t)(d->bytes_disp + bytes) - a; /* the excess; all terms below 2^62 */
		if (a > 0) {
			w = elv_qos_muldiv((uint64_t)a, ELV_NSEC_PER_SEC, d->bps, &rem);
			w = w > ELV_QOS_HORIZON ? ELV_QOS_HORIZON : w;
			w -= w - elv_div64(w, th->tick) * th->tick;
			bw = (w ? w : th->tick) + (el_r - el);
		}
	}
	if (d->iops) {
		el_r = elv_roundup(el + th->tick, th->slice);
		allowed = elv_iomax_allowed(d->iops, el_r);
		a = (int64_t)allowed + d->carry_ios;
		if (a <= 0 || d->io_disp + 1 > (uint64_t)a)
			iw = el_r - el;
	}
	w = bw > iw ? bw : iw;
	if (!w)
		return 0;
	if (elv_time_before(d->end, now + w))
		d->end = d->start + elv_roundup(now + w - d->start, th->slice);
	return w - sub; /* w is at least a tick, sub less than one */
}

/* After a dispatch: drop the whole slices that have passed, with what they granted. */
static void elv_iomax_trim(struct elv_iomax_dir *d, uint64_t now, uint64_t slice)
{
	uint64_t el, n;
	int64_t bt, it;

	if (!elv_time_before(now, d->end))
		return;
	d->end = d->start + elv_roundup(now + slice - d->start, slice);
	el = now - d->start;
	n = elv_div64(el, slice) * slice;
	if (!n)
		return;
	bt = d->bps ? (int64_t)elv_iomax_allowed(d->bps, n) + d->carry_bytes : INT64_MAX;
	it = d->iops ? (int64_t)elv_iomax_allowed(d->iops, n) + d->carry_ios : INT64_MAX;
	if (bt <= 0 && it <= 0)
		return;
	d->carry_bytes = d->carry_ios = 0;
	if (bt >= 0)
		d->bytes_disp = d->bytes_disp >= (uint64_t)bt ? d->bytes_disp - (uint64_t)bt : 0;
	else
		d->bytes_disp += (uint64_t)(-bt);
	if (it >= 0)
		d->io_disp = d->io_disp >= (uint64_t)it ? d->io_disp - (uint64_t)it : 0;
	else
		d->io_disp += (uint64_t)(-it);
	d->start += n;
}

/* ---- the meter ----------------------------------------------------------------------- */

static ELV_SPEED_INLINE uint64_t elv_thr_wait_in(struct elv_thr *th, int dir, uint64_t bytes,
						 uint64_t now, int queued)
{
	uint64_t w = 0, x;
	unsigned i;

	if (!th->on)
		return 0;
	if (th->mode == ELV_THROTTLE_IOMAX)
		return elv_iomax_wait(th, dir, bytes, now, queued);
	for (i = 0; i < th->nr_dir[dir]; i++) {
		const struct elv_thr_bucket *b = elv_thr_bucket_at(th, th->dir_off[dir][i]);

		/* Nearly always below the allowance: one comparison per level. */
		if (elv_time_before(b->lv[0].tat, now + b->lv[0].allow) &&
		    (!b->lv[1].den || elv_time_before(b->lv[1].tat, now + b->lv[1].allow)))
			continue;
		x = elv_bucket_wait(b, now);
		if (x > w)
			w = x;
	}
	return w;
}

static ELV_SPEED_INLINE void elv_thr_charge_in(struct elv_thr *th, int dir, uint64_t bytes,
					       uint64_t now)
{
	int s;

	if (!th->on)
		return;
	if (th->mode == ELV_THROTTLE_IOMAX) {
		struct elv_iomax_dir *io = &th->u.d[dir];

		if (!io->bps && !io->iops)
			return;
		io->bytes_disp += bytes;
		io->io_disp++;
		elv_iomax_trim(io, now, th->slice);
		return;
	}
	s = elv_thr_slot(th, bytes);
	if (ELV_UNLIKELY(s < 0))
		s = elv_thr_resize(th, dir, bytes);
	elv_thr_fill(th, dir, s, now, 1);
}

uint64_t elv_thr_wait_any(struct elv_thr *th, int dir, uint64_t bytes, uint64_t now,
			  int queued)
{
	return elv_thr_wait_in(th, dir, bytes, now, queued);
}

void elv_thr_charge(struct elv_thr *th, int dir, uint64_t bytes, uint64_t now)
{
	elv_thr_charge_in(th, dir, bytes, now);
}

/*
 * elv_thr_fill() of slot @s, then elv_thr_wait() of direction @dir at @now, in one walk
 * through its buckets: each bucket's levels (those elv_thr_fill() takes from lv_off[dir]),
 * filled, then judged by the values just stored. @clip as for elv_level_fill().
 */
static ELV_SPEED_INLINE uint64_t elv_thr_fill_wait(struct elv_thr *th, int dir, int s,
						   uint64_t now, int clip)
{
	const uint16_t *off = th->dir_off[dir], *end = off + th->nr_dir[dir];
	uint64_t calm_from = th->calm_from, w = 0, x;

	for (; off != end; off++) {
		struct elv_thr_bucket *b = elv_thr_bucket_at(th, *off);

		elv_level_fill(&b->lv[0], &b->lv[0].c[s], now, clip);
		calm_from = elv_calm_after(calm_from, b->lv[0].tat - b->lv[0].allow);
		x = elv_level_wait(&b->lv[0], now);
		if (b->lv[1].den) {
			elv_level_fill(&b->lv[1], &b->lv[1].c[s], now, clip);
			calm_from = elv_calm_after(calm_from, b->lv[1].tat - b->lv[1].allow);
		}
		x = elv_bucket_wait_from(b, x, now);
		if (x > w)
			w = x;
	}
	th->calm_from = calm_from;
	return w;
}

/* elv_thr_charge_wait() for what its usual path leaves: a leaky-bucket size not kept (its
 * costs worked out, filled clipped), or io.max. */
static ELV_QOS_APART uint64_t elv_thr_charge_wait_any(struct elv_thr *th, int dir,
						      uint64_t bytes, uint64_t next, uint64_t now)
{
	if (th->leaky)
		return elv_thr_fill_wait(th, dir, elv_thr_resize(th, dir, bytes), now, 1);
	elv_thr_charge_in(th, dir, bytes, now);
	return elv_thr_wait_in(th, dir, next, now, 1);
}

uint64_t elv_thr_charge_wait(struct elv_thr *th, int dir, uint64_t bytes, uint64_t next,
			     uint64_t now)
{
	int s;

	/* Leaky buckets judge a request before they count it, whatever its size: @next matters
	 * to io.max alone. A request that may go finds every level within its allowance, from
	 * where a kept size's costs stay within the horizon: no clip. (A leaky wait has no side
	 * effect, so the assertion may ask it.) */
	ELV_ASSERT(!th->leaky || !elv_thr_wait_in(th, dir, bytes, now, 1));
	if (th->leaky && (s = elv_thr_slot(th, bytes)) >= 0)
		return elv_thr_fill_wait(th, dir, s, now, 0);
	return elv_thr_charge_wait_any(th, dir, bytes, next, now);
}

/* elv_thr_take() in general: kept apart so that the usual case saves no registers. */
static ELV_QOS_APART uint64_t elv_thr_take_any(struct elv_thr *th, int dir, uint64_t bytes,
					       uint64_t now)
{
	uint64_t w = elv_thr_wait_in(th, dir, bytes, now, 0);

	if (!w)
		elv_thr_charge_in(th, dir, bytes, now);
	return w;
}

/*
 * Fill the levels of direction @dir with their costs in slot @s, which keep a level filled
 * from below its allowance within the horizon, while every level is calm (elv_thr_calm()):
 * each is below its allowance, and every one is empty past calm_from + drain_cap.
 */
static ELV_SPEED_INLINE void elv_thr_fill_calm(struct elv_thr *th, int dir, int s, uint64_t now)
{
	if (elv_time_before(th->calm_from + th->drain_cap, now))
		elv_thr_fill_empty(th, dir, s, now);
	else
		elv_thr_fill(th, dir, s, now, 0);
}

/* elv_thr_charge_calm() for a request of neither size met last: its costs in the slot of
 * the size met longer ago, filled as usual when they fit below the horizon, else clipped.
 * Out of line: a workload of many sizes comes here often, the usual one seldom. */
static ELV_QOS_APART int elv_thr_charge_calm_resized(struct elv_thr *th, int dir,
						     uint64_t bytes, uint64_t now)
{
	int s = elv_thr_resize_in(th, dir, bytes);

	if (th->size[s])
		elv_thr_fill_calm(th, dir, s, now);
	else
		elv_thr_fill(th, dir, s, now, 1);
	return 0;
}

int elv_thr_charge_calm(struct elv_thr *th, int dir, uint64_t bytes, uint64_t now)
{
	/* Each slot its own path, which knows where the costs lie; marking the one met last
	 * costs less than finding which it is. */
	if (bytes == th->size[0]) {
		th->cur = 0;
		elv_thr_fill_calm(th, dir, 0, now);
	} else if (bytes == th->size[1]) {
		th->cur = 1;
		elv_thr_fill_calm(th, dir, 1, now);
	} else {
		return elv_thr_charge_calm_resized(th, dir, bytes, now);
	}
	return 0;
}

uint64_t elv_thr_take(struct elv_thr *th, int dir, uint64_t bytes, uint64_t now)
{
	/* As a request nearly always finds them: leaky buckets, every level calm. */
	if (ELV_LIKELY(th->leaky && elv_thr_calm(th, now)))
		return (uint64_t)elv_thr_charge_calm(th, dir, bytes, now);
	return elv_thr_take_any(th, dir, bytes, now);
}

/* Do the levels hold the costs of the kept sizes (0: none to check), within the horizon from
 * below their allowances? */
static int elv_thr_costs_right(const struct elv_thr *th)
{
	struct elv_thr_cost c;
	int s, k, j;

	for (s = 0; s < 2; s++) {
		for (k = 0; th->size[s] && k < ELV_THROTTLE_NR; k++) {
			for (j = 0; j < 2 && (th->used & (1u << k)) && th->u.b[k].lv[j].den; j++) {
				const struct elv_thr_cost *kept = &th->u.b[k].lv[j].c[s];

				if (!elv_level_cost_of(th, k, j, th->size[s], &c) || c.ns != kept->ns ||
				    c.rem != kept->rem)
					return 0;
			}
		}
	}
	return th->cur < 2;
}

int elv_thr_check(const struct elv_thr *th)
{
	int k;

	if (!th->on)
		return 0;
	if (th->mode > ELV_THROTTLE_IOMAX || (th->used >> ELV_THROTTLE_NR) || !th->slice ||
	    !th->tick || th->tick > th->slice || th->leaky != (th->mode == ELV_THROTTLE_BUCKET))
		return ELV_EINVAL;
	if (th->mode == ELV_THROTTLE_IOMAX)
		return 0;
	if (!elv_thr_costs_right(th))
		return ELV_EINVAL;
	for (k = 0; k < ELV_THROTTLE_NR; k++) {
		const struct elv_thr_bucket *b = &th->u.b[k];

		if (!(th->used & (1u << k)))
			continue;
		if (!b->lv[0].den || b->lv[0].frac >= b->lv[0].den ||
		    (b->lv[1].den && b->lv[1].frac >= b->lv[1].den))
			return ELV_EINVAL;
		if (elv_bucket_top_allow(b) > th->drain_cap)
			return ELV_EINVAL;
	}
	/* No level may be above its allowance after calm_from. */
	return elv_thr_calm_of(th, th->calm_from) == th->calm_from ? 0 : ELV_EINVAL;
}
