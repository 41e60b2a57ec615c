/*
 * Rotating disk model: zoned geometry with track and cylinder skew, a seek curve, the
 * absolute rotational phase (angle = time mod T_rev, never a random latency), head and
 * cylinder switches inside transfers, command overheads, and a segmented read cache whose
 * active segment keeps prefetching while the drive is idle.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"

#define NS_PER_MS 1e6

double elv_sim_disk_seek_ms(const struct elv_sim_disk_params *dp, uint32_t cylinders,
			    uint64_t dist)
{
	double d = (double)dist;
	uint32_t i, n;

	if (dist == 0)
		return 0;
	switch (dp->seek_kind) {
	case ELV_SIM_SEEK_TWO_PIECE:
		if (dist < dp->seek_boundary)
			return dp->seek_a + dp->seek_b * sqrt(d);
		return dp->seek_c + dp->seek_e * d;
	case ELV_SIM_SEEK_SQRT:
		return dp->seek_t1 + (dp->seek_full - dp->seek_t1) *
		       sqrt(d / (cylinders ? cylinders : 1));
	default:
		break;
	}
	/* Table: flat below the first point, linear between, extrapolated past the last. */
	n = dp->nr_seek_points;
	if (n == 0)
		return 0;
	if (dist <= dp->seek_dist[0] || n == 1)
		return dp->seek_ms[0];
	for (i = 1; i < n - 1 && dist > dp->seek_dist[i]; i++)
		;
	return dp->seek_ms[i - 1] + (dp->seek_ms[i] - dp->seek_ms[i - 1]) *
	       (d - dp->seek_dist[i - 1]) / (double)(dp->seek_dist[i] - dp->seek_dist[i - 1]);
}

int elv__disk_init(struct elv_sim_dev *d)
{
	const struct elv_sim_disk_params *dp = &d->p.disk;
	uint64_t lbn = 0;
	uint32_t cyl = 0, i, s = dp->surfaces;

	d->trev_ns = 60.0e9 / dp->rpm;
	d->nzones = dp->nr_zones;
	for (i = 0; i < dp->nr_zones; i++) {
		struct elv__zgeo *z = &d->zg[i];
		double per_cyl;

		z->first_lbn = lbn;
		z->first_cyl = cyl;
		z->cyls = dp->zones[i].cylinders;
		z->spt = dp->zones[i].spt;
		z->nr_lbn = (uint64_t)z->cyls * s * z->spt;
		z->sector_ns = d->trev_ns / z->spt;
		/* Skew just covers the switch, so a long transfer loses only the switch time. */
		z->hskew = (uint32_t)ceil(dp->head_switch * NS_PER_MS / z->sector_ns - 1e-9);
		z->cskew = (uint32_t)ceil(dp->cyl_switch * NS_PER_MS / z->sector_ns - 1e-9);
		per_cyl = (double)s * z->spt + (double)(s - 1) * z->hskew + z->cskew;
		z->stream_ns = z->sector_ns * per_cyl / ((double)s * z->spt);
		lbn += z->nr_lbn;
		cyl += z->cyls;
	}
	d->cylinders = cyl;
	d->active = -1;
	if (dp->write_buffer) {
		d->dirty_cap = dp->write_buffer + 1;
		d->dirty = calloc(d->dirty_cap, sizeof(*d->dirty));
		if (!d->dirty)
			return ELV_ENOMEM;
	}
	if (dp->cache_segments) {
		d->segs = calloc(dp->cache_segments, sizeof(*d->segs));
		if (!d->segs)
			return ELV_ENOMEM;
	}
	return 0;
}

void elv__disk_exit(struct elv_sim_dev *d)
{
	free(d->segs);
	free(d->dirty);
	d->segs = NULL;
	d->dirty = NULL;
}

static uint32_t zone_of(const struct elv_sim_dev *d, uint64_t lbn)
{
	uint32_t lo = 0, hi = d->nzones - 1;

	while (lo < hi) {
		uint32_t mid = (lo + hi + 1) / 2;

		if (d->zg[mid].first_lbn <= lbn)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

int elv__disk_locate(const struct elv_sim_dev *d, uint64_t lbn, uint32_t *zone, uint32_t *cyl,
		     uint32_t *head, uint32_t *sect)
{
	const struct elv__zgeo *z;
	uint64_t off, track;
	uint32_t zi;

	if (lbn >= d->p.capacity)
		return ELV_EINVAL;
	zi = zone_of(d, lbn);
	z = &d->zg[zi];
	off = lbn - z->first_lbn;
	track = off / z->spt;
	*zone = zi;
	*sect = (uint32_t)(off % z->spt);
	*cyl = z->first_cyl + (uint32_t)(track / d->p.disk.surfaces);
	*head = (uint32_t)(track % d->p.disk.surfaces);
	return 0;
}

int elv_sim_disk_locate(const struct elv_sim_dev *d, uint64_t sector, uint32_t *cyl,
			uint32_t *head, uint32_t *sect, uint32_t *spt)
{
	uint32_t z;
	int r;

	if (!d || d->p.kind != ELV_SIM_DEV_DISK || !cyl || !head || !sect || !spt)
		return ELV_EINVAL;
	r = elv__disk_locate(d, sector, &z, cyl, head, sect);
	if (!r)
		*spt = d->zg[z].spt;
	return r;
}

/* Angular position (fraction of a turn) of sector s of track (c, h) in zone z. */
static double sector_angle(const struct elv_sim_dev *d, uint32_t z, uint32_t c, uint32_t h,
			   uint32_t s)
{
	const struct elv__zgeo *g = &d->zg[z];
	uint64_t nc = c - g->first_cyl;
	uint64_t nh = nc * (d->p.disk.surfaces - 1) + h;
	uint64_t off = (nh * g->hskew + nc * g->cskew + s) % g->spt;

	return (double)off / g->spt;
}

static double rot_wait(const struct elv_sim_dev *d, double t, double target)
{
	double cur = fmod(t, d->trev_ns) / d->trev_ns;
	double w = target - cur;

	if (w < 0)
		w += 1.0;
	if (w > 1.0 - 1e-9) /* already there: rounding, not a missed turn */
		w = 0;
	return w * d->trev_ns;
}

static uint64_t pf_hi(const struct elv_sim_dev *d, const struct elv__seg *sg, double t)
{
	double n;
	uint64_t hi;

	if (!sg->pf)
		return sg->hi;
	if (t <= sg->pf_t0)
		return sg->pf_lbn0;
	n = (t - sg->pf_t0) / d->zg[zone_of(d, sg->pf_lbn0)].stream_ns;
	hi = sg->pf_lbn0 + (uint64_t)n;
	return hi < sg->pf_lim ? hi : sg->pf_lim;
}

uint32_t elv__disk_head_cyl(const struct elv_sim_dev *d, double ts)
{
	uint32_t z, c, h, s;

	if (d->segs && d->active >= 0 && d->segs[d->active].pf) {
		uint64_t hi = pf_hi(d, &d->segs[d->active], ts);

		if (hi >= d->p.capacity)
			hi = d->p.capacity - 1;
		if (!elv__disk_locate(d, hi, &z, &c, &h, &s))
			return c;
	}
	return d->head_cyl;
}

static void seg_touch(struct elv_sim_dev *d, struct elv__seg *sg)
{
	sg->lru = ++d->lru_clock;
}

/* Keep the active segment full: it may hold up to a segment ahead of what was just read. */
static void seg_slide(struct elv_sim_dev *d, struct elv__seg *sg, uint64_t from, uint64_t end)
{
	const struct elv_sim_disk_params *dp = &d->p.disk;
	uint64_t lim = from + dp->segment_sectors;

	if (end + dp->readahead_max < lim)
		lim = end + dp->readahead_max;
	if (lim > d->p.capacity)
		lim = d->p.capacity;
	if (lim > sg->pf_lim)
		sg->pf_lim = lim;
	sg->lo = from;
}

static double bus_ns(const struct elv_sim_dev *d, uint32_t n)
{
	return d->p.disk.bus_per_sector * NS_PER_MS * n;
}

/* Reads served without the arm: wholly cached, or just ahead of a running prefetch. */
static int serve_cached(struct elv_sim_dev *d, struct elv_sim_io *io, double ts, int commit,
			double *pos, double *done)
{
	const struct elv_sim_disk_params *dp = &d->p.disk;
	uint64_t end = io->sector + io->nr_sectors;
	double ovh = dp->ovh_read_hit * NS_PER_MS;
	struct elv__seg *as = d->active >= 0 ? &d->segs[d->active] : NULL;
	uint32_t i;

	for (i = 0; i < dp->cache_segments; i++) {
		struct elv__seg *sg = &d->segs[i];
		uint64_t hi = pf_hi(d, sg, ts);

		if (hi <= sg->lo || io->sector < sg->lo || end > hi)
			continue;
		*pos = ovh;
		*done = ts + ovh + bus_ns(d, io->nr_sectors);
		if (commit) {
			seg_touch(d, sg);
			if (sg->pf)
				seg_slide(d, sg, io->sector, end);
		}
		return 1;
	}
	if (as && as->pf) {
		uint64_t hi = pf_hi(d, as, ts);
		double reach;

		if (io->sector < as->lo || io->sector > hi ||
		    end > io->sector + dp->segment_sectors)
			return 0;
		/* The media keeps streaming into the segment; wait for the last sector. */
		reach = as->pf_t0 + (double)(end - as->pf_lbn0) *
			d->zg[zone_of(d, as->pf_lbn0)].stream_ns;
		*pos = reach - ts > ovh ? reach - ts : ovh;
		*done = fmax(ts + ovh + bus_ns(d, io->nr_sectors), reach + bus_ns(d, 1));
		if (commit) {
			seg_touch(d, as);
			seg_slide(d, as, io->sector, end);
			if (as->pf_lim < end)
				as->pf_lim = end;
		}
		return 1;
	}
	return 0;
}

/* After a media read: the segment holding it starts prefetching behind it. */
static void cache_fill(struct elv_sim_dev *d, const struct elv_sim_io *io, double media_end)
{
	const struct elv_sim_disk_params *dp = &d->p.disk;
	uint64_t end = io->sector + io->nr_sectors;
	struct elv__seg *sg = NULL;
	uint32_t i;

	for (i = 0; i < dp->cache_segments; i++) /* continue a sequential run in place */
		if (d->segs[i].hi > d->segs[i].lo && d->segs[i].hi == io->sector)
			sg = &d->segs[i];
	if (!sg) {
		sg = &d->segs[0];
		for (i = 1; i < dp->cache_segments; i++)
			if (d->segs[i].lru < sg->lru)
				sg = &d->segs[i];
	}
	sg->lo = io->nr_sectors > dp->segment_sectors ? end - dp->segment_sectors : io->sector;
	sg->hi = end;
	sg->pf_t0 = media_end;
	sg->pf_lbn0 = end;
	sg->pf_lim = end;
	seg_slide(d, sg, sg->lo, end);
	sg->pf = sg->pf_lim > end;
	seg_touch(d, sg);
	d->active = (int)(sg - d->segs);
}

static void cache_stop_prefetch(struct elv_sim_dev *d, double ts)
{
	struct elv__seg *as;

	if (d->active < 0)
		return;
	as = &d->segs[d->active];
	if (as->pf) {
		as->hi = pf_hi(d, as, ts);
		as->pf = 0;
		if (as->hi > as->lo + d->p.disk.segment_sectors)
			as->lo = as->hi - d->p.disk.segment_sectors;
		d->head_lbn = as->hi < d->p.capacity ? as->hi : d->p.capacity - 1;
		{
			uint32_t z, c, h, s;

			if (!elv__disk_locate(d, d->head_lbn, &z, &c, &h, &s)) {
				d->head_cyl = c;
				d->head_head = h;
			}
		}
	}
}

static void cache_invalidate(struct elv_sim_dev *d, uint64_t lo, uint64_t hi)
{
	uint32_t i;

	for (i = 0; i < d->p.disk.cache_segments; i++) {
		struct elv__seg *sg = &d->segs[i];

		if (sg->hi > lo && sg->lo < hi) {
			sg->lo = sg->hi = 0;
			sg->pf = 0;
			if ((int)i == d->active)
				d->active = -1;
		}
	}
}

/* Where the head is when a command starts at ts (a running prefetch has moved it). */
static void head_at(const struct elv_sim_dev *d, double ts, uint32_t *cyl, uint32_t *head,
		    uint64_t *lbn)
{
	*cyl = d->head_cyl;
	*head = d->head_head;
	*lbn = d->head_lbn;
	if (d->segs && d->active >= 0 && d->segs[d->active].pf) {
		uint64_t hi = pf_hi(d, &d->segs[d->active], ts);
		uint32_t z, s;

		if (hi >= d->p.capacity)
			hi = d->p.capacity - 1;
		if (!elv__disk_locate(d, hi, &z, cyl, head, &s))
			*lbn = hi;
	}
}

/*
 * Move the arm from track (hc, hh) to [lbn, lbn + n) starting at t and transfer. Returns the
 * time the last sector has passed; *first is when the first one arrived under the head.
 */
static double mech(const struct elv_sim_dev *d, uint64_t lbn, uint32_t n, int wr, double t,
		   uint32_t hc, uint32_t hh, double *seek_ms, double *first, uint32_t *endc,
		   uint32_t *endh)
{
	const struct elv_sim_disk_params *dp = &d->p.disk;
	uint32_t z, c, h, s, started = 0;
	uint64_t dist;
	double seek;

	*first = t;
	*seek_ms = 0;
	*endc = hc;
	*endh = hh;
	if (elv__disk_locate(d, lbn, &z, &c, &h, &s))
		return t;
	dist = c > hc ? c - hc : hc - c;
	seek = elv_sim_disk_seek_ms(dp, d->cylinders, dist);
	if (dist == 0 && h != hh && seek < dp->head_switch)
		seek = dp->head_switch;
	/* Writes settle longer after the arm moved. */
	if (wr && (dist || h != hh))
		seek += dp->write_settle;
	*seek_ms = seek;
	t += seek * NS_PER_MS;
	while (n) {
		const struct elv__zgeo *g = &d->zg[z];
		uint32_t k = g->spt - s < n ? g->spt - s : n;

		t += rot_wait(d, t, sector_angle(d, z, c, h, s));
		if (!started) {
			*first = t;
			started = 1;
		}
		t += k * g->sector_ns;
		n -= k;
		if (!n)
			break;
		s = 0;
		if (++h == dp->surfaces) {
			h = 0;
			c++;
			t += dp->cyl_switch * NS_PER_MS;
			if (c >= g->first_cyl + g->cyls && ++z >= d->nzones)
				break; /* ran off the end: the request was bounds-checked */
		} else {
			t += dp->head_switch * NS_PER_MS;
		}
	}
	*endc = c;
	*endh = h;
	return t;
}

/* ---- write-back buffer ------------------------------------------------------------------ */

/* Write the oldest dirty extent back, starting when the arm is free but not before tmin. */
static void destage_one(struct elv_sim_dev *d, double tmin)
{
	struct elv__extent *x = &d->dirty[d->dirty_head];
	double start = d->mech_free > tmin ? d->mech_free : tmin, first, seek, end;
	uint32_t c, h;

	if (d->segs)
		cache_stop_prefetch(d, start);
	end = mech(d, x->lo, x->n, 1, start, d->head_cyl, d->head_head, &seek, &first, &c, &h);
	d->head_cyl = c;
	d->head_head = h;
	d->head_lbn = x->lo + x->n;
	d->mech_free = end;
	d->st.destage_ns += (uint64_t)(end - start);
	d->dirty_sectors -= x->n;
	d->dirty_head = (d->dirty_head + 1) % d->dirty_cap;
	d->dirty_n--;
}

/* Catch up on write-back the arm did while the drive had nothing else to do before ts. */
static void destage_until(struct elv_sim_dev *d, double ts)
{
	while (d->dirty_n && d->mech_free < ts)
		destage_one(d, d->mech_free);
}

static void dirty_add(struct elv_sim_dev *d, uint64_t lo, uint32_t n)
{
	if (d->dirty_n) {
		struct elv__extent *last = &d->dirty[(d->dirty_head + d->dirty_n - 1) %
						      d->dirty_cap];

		if (last->lo + last->n == lo && last->n + n <= 256) {
			last->n += n;
			d->dirty_sectors += n;
			return;
		}
	}
	d->dirty[(d->dirty_head + d->dirty_n) % d->dirty_cap].lo = lo;
	d->dirty[(d->dirty_head + d->dirty_n) % d->dirty_cap].n = n;
	d->dirty_n++;
	d->dirty_sectors += n;
}

/*
 * A write absorbed by the buffer. Write-back level 2 keeps one sequential run dirty: a write
 * that does not append to the run waits until the run is on the media and starts a new one;
 * an appending write waits only for room.
 */
static double accept_write(struct elv_sim_dev *d, struct elv_sim_io *io, double ts)
{
	const struct elv_sim_disk_params *dp = &d->p.disk;
	double t = ts;

	destage_until(d, ts);
	if ((d->dirty_n || d->mech_free > ts) && io->sector != d->run_end) {
		while (d->dirty_n)
			destage_one(d, ts);
		t = d->mech_free > ts ? d->mech_free : ts;
	} else if (d->dirty_sectors + io->nr_sectors > dp->write_buffer) {
		while (d->dirty_n && d->dirty_sectors + io->nr_sectors > dp->write_buffer)
			destage_one(d, ts);
		t = d->mech_free > ts ? d->mech_free : ts;
	}
	dirty_add(d, io->sector, io->nr_sectors);
	d->run_end = io->sector + io->nr_sectors;
	if (d->segs)
		cache_invalidate(d, io->sector, io->sector + io->nr_sectors);
	io->cache_hit = 1;
	d->st.write_hits++;
	return t + dp->ovh_write * NS_PER_MS + bus_ns(d, io->nr_sectors);
}

static int wb_on(const struct elv_sim_dev *d, uint32_t nr)
{
	return d->p.disk.write_buffer && nr <= d->p.disk.write_buffer;
}

double elv__disk_serve(struct elv_sim_dev *d, struct elv_sim_io *io, double ts, int commit,
		       double *pos)
{
	const struct elv_sim_disk_params *dp = &d->p.disk;
	uint32_t hc, hh, c, h;
	uint64_t hl;
	double t, seek, first, done;
	int rd = io->op == ELV_OP_READ;

	if (io->op != ELV_OP_READ && io->op != ELV_OP_WRITE) {
		*pos = dp->ovh_write * NS_PER_MS;
		if (!commit || !d->dirty_n)
			return ts + *pos;
		while (d->dirty_n) /* a flush empties the write-back buffer */
			destage_one(d, ts);
		return d->mech_free + *pos;
	}
	if (rd && d->segs && serve_cached(d, io, ts, commit, pos, &done)) {
		if (commit) {
			io->cache_hit = 1;
			d->st.cache_hits++;
		}
		return done;
	}
	if (!rd && wb_on(d, io->nr_sectors)) {
		*pos = dp->ovh_write * NS_PER_MS;
		return commit ? accept_write(d, io, ts) : ts + *pos + bus_ns(d, io->nr_sectors);
	}
	t = ts + (rd ? dp->ovh_read_miss : dp->ovh_write) * NS_PER_MS;
	if (commit && d->dirty_n) {
		/* Dirty data is written back before the arm serves anything else. */
		destage_until(d, ts);
		while (d->dirty_n)
			destage_one(d, ts);
		if (d->mech_free > t)
			t = d->mech_free;
	}
	head_at(d, ts, &hc, &hh, &hl);
	if (commit && d->segs)
		cache_stop_prefetch(d, ts);
	t = mech(d, io->sector, io->nr_sectors, !rd, t, hc, hh, &seek, &first, &c, &h);
	*pos = first - ts;
	done = fmax(t + bus_ns(d, 1), first + bus_ns(d, io->nr_sectors));
	if (!commit)
		return done;
	io->seek_sectors = io->sector > hl ? io->sector - hl : hl - io->sector;
	io->seek_ms = seek;
	d->st.media_accesses++;
	d->st.seek_sectors += (double)io->seek_sectors;
	d->st.seek_ms += seek;
	d->head_cyl = c;
	d->head_head = h;
	d->head_lbn = io->sector + io->nr_sectors;
	d->mech_free = t;
	if (d->segs) {
		if (rd)
			cache_fill(d, io, t);
		else
			cache_invalidate(d, io->sector, io->sector + io->nr_sectors);
	}
	return done;
}
