/*
 * Zoned devices: a host-managed SMR disk (the rotating-disk model underneath) and a ZNS SSD
 * (flash timings, no FTL: a zone maps onto erase blocks, so there is no garbage collection).
 *
 * The device is cut into zones of zone_sectors; the first nr_conv are conventional, every
 * other one keeps a write pointer. The rules are applied when a command starts on the media,
 * which is where a real drive applies them: a device that reorders the commands it holds
 * (SPTF on the disk, any order on ZNS unless the transport keeps order) turns two writes to
 * one zone in flight into a write off the write pointer. A write that breaks a rule fails:
 * it costs the command overhead, changes nothing, is counted, and completes with a status
 * the host sees. Zones open implicitly on their first write; when max_open zones are open
 * the least recently written one is closed, and opening a zone beyond max_active fails.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"

int elv__zone_cmd(uint8_t op)
{
	switch (op) {
	case ELV_OP_ZONE_RESET:
		return ELV__ZCMD_RESET;
	case ELV_OP_ZONE_FINISH:
		return ELV__ZCMD_FINISH;
	default:
		return ELV__ZCMD_NONE;
	}
}

int elv__zoned_on(const struct elv_sim_dev_params *p)
{
	return p->zoned && p->zone.zone_sectors &&
	       (p->kind == ELV_SIM_DEV_DISK || p->kind == ELV_SIM_DEV_SSD);
}

/* Check a zoned parameter set and round the capacity down to whole zones. */
int elv__zoned_finish(struct elv_sim_dev_params *p)
{
	struct elv_sim_zone_params *z = &p->zone;
	uint64_t nz;

	if (!elv__zoned_on(p)) {
		/* Zone geometry on a device that cannot enforce it would be silently ignored. */
		return z->zone_sectors && p->zoned ? ELV_EINVAL : 0;
	}
	/* What the zone stage accepts: a power of two of 8 sectors or more, below 2^32. */
	if (z->zone_sectors < 8 || z->zone_sectors > UINT32_MAX ||
	    (z->zone_sectors & (z->zone_sectors - 1)))
		return ELV_EINVAL;
	if (!z->zone_capacity)
		z->zone_capacity = z->zone_sectors;
	if (z->zone_capacity > z->zone_sectors || z->ordered > 1)
		return ELV_EINVAL;
	if (z->max_open && z->max_active && z->max_open > z->max_active)
		return ELV_EINVAL;
	if (p->kind == ELV_SIM_DEV_SSD) {
		uint64_t blk = (uint64_t)p->flash.page_sectors * p->flash.pages_per_block;

		/* A ZNS zone is made of whole erase blocks. */
		if (!blk || z->zone_sectors % blk || z->zone_capacity % blk)
			return ELV_EINVAL;
	}
	nz = p->capacity / z->zone_sectors;
	if (nz == 0 || nz > UINT32_MAX || z->nr_conv >= nz)
		return ELV_EINVAL;
	p->capacity = nz * z->zone_sectors;
	return 0;
}

int elv__zoned_init(struct elv_sim_dev *d)
{
	uint32_t i;

	if (!elv__zoned_on(&d->p))
		return 0;
	d->nr_wz = (uint32_t)(d->p.capacity / d->p.zone.zone_sectors);
	d->wz = calloc(d->nr_wz, sizeof(*d->wz));
	if (!d->wz)
		return ELV_ENOMEM;
	for (i = 0; i < d->p.zone.nr_conv; i++)
		d->wz[i].cond = ELV_SIM_ZONE_CONV;
	/* Fixed seed: the same device serves the same commands in the same order. */
	elv_sim_rng_seed(&d->zrng, 0x7a6e73);
	return 0;
}

void elv__zoned_exit(struct elv_sim_dev *d)
{
	free(d->wz);
	d->wz = NULL;
	d->nr_wz = 0;
}

int elv_sim_dev_zone_geometry(const struct elv_sim_dev_params *p, struct elv_zone_geometry *g)
{
	if (!p || !g || !elv__zoned_on(p) || !p->zone.zone_sectors ||
	    p->capacity % p->zone.zone_sectors)
		return ELV_EINVAL;
	memset(g, 0, sizeof(*g));
	g->nr_sectors = p->capacity;
	g->zone_sectors = (uint32_t)p->zone.zone_sectors;
	g->zone_capacity = (uint32_t)(p->zone.zone_capacity ? p->zone.zone_capacity :
				      p->zone.zone_sectors);
	g->nr_conv = p->zone.nr_conv;
	g->max_open = p->zone.max_open;
	g->max_active = p->zone.max_active;
	g->ordered = p->zone.ordered;
	return 0;
}

uint32_t elv_sim_dev_nr_zones(const struct elv_sim_dev *d)
{
	return d ? d->nr_wz : 0;
}

int elv_sim_dev_zone_report(const struct elv_sim_dev *d, uint32_t zone,
			    struct elv_sim_zone_info *zi)
{
	if (!d || !zi)
		return ELV_EINVAL;
	if (zone >= d->nr_wz)
		return ELV_ERANGE;
	memset(zi, 0, sizeof(*zi));
	zi->start = (uint64_t)zone * d->p.zone.zone_sectors;
	zi->wp = d->wz[zone].wp;
	zi->capacity = d->wz[zone].cond == ELV_SIM_ZONE_CONV ? d->p.zone.zone_sectors :
		       d->p.zone.zone_capacity;
	zi->cond = d->wz[zone].cond;
	return 0;
}

/* ---- conditions ----------------------------------------------------------------------- */

/* An open zone leaves the open set (closed, or full, or reset). */
static void zone_unopen(struct elv_sim_dev *d, struct elv__wzone *z, uint8_t cond)
{
	if (z->cond == ELV_SIM_ZONE_OPEN)
		d->nr_open--;
	if ((z->cond == ELV_SIM_ZONE_OPEN || z->cond == ELV_SIM_ZONE_CLOSED) &&
	    (cond == ELV_SIM_ZONE_EMPTY || cond == ELV_SIM_ZONE_FULL))
		d->nr_active--;
	z->cond = cond;
}

/* Close the least recently written open zone to make room for another. */
static void close_lru(struct elv_sim_dev *d)
{
	struct elv__wzone *best = NULL;
	uint32_t i;

	for (i = 0; i < d->nr_wz; i++)
		if (d->wz[i].cond == ELV_SIM_ZONE_OPEN && (!best || d->wz[i].last < best->last))
			best = &d->wz[i];
	if (best) {
		zone_unopen(d, best, ELV_SIM_ZONE_CLOSED);
		d->st.zone_closes++;
	}
}

/* Make z open for a write; ELV_SIM_IO_LIMIT when max_active forbids it. */
static int zone_open(struct elv_sim_dev *d, struct elv__wzone *z)
{
	const struct elv_sim_zone_params *zp = &d->p.zone;

	if (z->cond == ELV_SIM_ZONE_OPEN)
		return 0;
	if (z->cond == ELV_SIM_ZONE_EMPTY && zp->max_active && d->nr_active >= zp->max_active)
		return ELV_SIM_IO_LIMIT;
	if (zp->max_open && d->nr_open >= zp->max_open)
		close_lru(d);
	if (z->cond == ELV_SIM_ZONE_EMPTY)
		d->nr_active++;
	d->nr_open++;
	z->cond = ELV_SIM_ZONE_OPEN;
	return 0;
}

/* ---- the rules ------------------------------------------------------------------------ */

/* A write. 0 or a status. */
static int zone_write(struct elv_sim_dev *d, struct elv_sim_io *io)
{
	const struct elv_sim_zone_params *zp = &d->p.zone;
	uint64_t zs = zp->zone_sectors, end = io->sector + io->nr_sectors;
	uint32_t zn;
	struct elv__wzone *z;
	int r;

	if (io->sector >= d->p.capacity || end > d->p.capacity || end < io->sector)
		return ELV_SIM_IO_BOUNDARY;
	zn = (uint32_t)(io->sector / zs);
	z = &d->wz[zn];
	if (z->cond == ELV_SIM_ZONE_CONV) {
		/* Conventional zones take any write, but not one that runs into a sequential one. */
		if (end > (uint64_t)zp->nr_conv * zs)
			return ELV_SIM_IO_BOUNDARY;
		return 0;
	}
	if (end > (uint64_t)(zn + 1) * zs)
		return ELV_SIM_IO_BOUNDARY;
	if (z->cond == ELV_SIM_ZONE_FULL)
		return ELV_SIM_IO_FULL;
	if (io->sector != (uint64_t)zn * zs + z->wp)
		return ELV_SIM_IO_WP;
	if (z->wp + io->nr_sectors > zp->zone_capacity)
		return ELV_SIM_IO_FULL;
	r = zone_open(d, z);
	if (r)
		return r;
	z->wp += io->nr_sectors;
	z->last = ++d->wseq;
	if (z->wp == zp->zone_capacity)
		zone_unopen(d, z, ELV_SIM_ZONE_FULL);
	return 0;
}

/* Reset (@finish 0) or finish the zone starting at io->sector. 0 or a status. */
static int zone_mgmt(struct elv_sim_dev *d, const struct elv_sim_io *io, int finish)
{
	uint64_t zs = d->p.zone.zone_sectors;
	struct elv__wzone *z;

	if (io->sector >= d->p.capacity || io->sector % zs)
		return ELV_SIM_IO_ZONE_OP;
	z = &d->wz[io->sector / zs];
	if (z->cond == ELV_SIM_ZONE_CONV)
		return ELV_SIM_IO_ZONE_OP;
	if (finish) {
		zone_unopen(d, z, ELV_SIM_ZONE_FULL);
		z->wp = d->p.zone.zone_capacity;
		d->st.zone_finishes++;
	} else {
		zone_unopen(d, z, ELV_SIM_ZONE_EMPTY);
		z->wp = 0;
		d->st.zone_resets++;
	}
	return 0;
}

/* What one command costs when the device only looks at it (a failure, a zone command). */
static double overhead_ns(const struct elv_sim_dev *d)
{
	if (d->p.kind == ELV_SIM_DEV_DISK)
		return d->p.disk.ovh_write * 1e6;
	return d->p.flash.cmd_us * 1e3;
}

/* Erasing the blocks a ZNS zone had written: the whole zone's worth, in parallel ways. */
static double zns_reset_ns(const struct elv_sim_dev *d, uint64_t written)
{
	const struct elv_sim_flash_params *fp = &d->p.flash;
	uint64_t blk = (uint64_t)fp->page_sectors * fp->pages_per_block;
	double ways = fp->ways ? fp->ways : 1, blocks = ceil((double)written / (double)blk);

	return ceil(blocks / ways) * fp->erase_us * 1e3;
}

static void count_failure(struct elv_sim_dev *d, int status)
{
	if (status == ELV_SIM_IO_WP)
		d->st.zone_wp_errors++;
	else if (status == ELV_SIM_IO_FULL)
		d->st.zone_full_errors++;
	else
		d->st.zone_other_errors++;
}

int elv__zoned_start(struct elv_sim_dev *d, struct elv_sim_io *io, double ts, double *done)
{
	int status = 0, kind = elv__zone_cmd(io->op);
	uint64_t written = 0;

	io->status = 0;
	if (!d->wz)
		return 0;
	if (kind == ELV__ZCMD_NONE && io->op != ELV_OP_WRITE)
		return 0;
	if (kind == ELV__ZCMD_RESET && io->sector < d->p.capacity)
		written = d->wz[io->sector / d->p.zone.zone_sectors].wp;
	if (kind == ELV__ZCMD_RESET || kind == ELV__ZCMD_FINISH)
		status = zone_mgmt(d, io, kind == ELV__ZCMD_FINISH);
	else
		status = zone_write(d, io);
	if (status) {
		io->status = (uint8_t)status;
		count_failure(d, status);
		*done = ts + overhead_ns(d);
		return 1;
	}
	if (kind == ELV__ZCMD_RESET || kind == ELV__ZCMD_FINISH) {
		/* SMR keeps the write pointer in drive metadata; ZNS erases on reset. */
		*done = ts + overhead_ns(d);
		if (kind == ELV__ZCMD_RESET && d->p.kind == ELV_SIM_DEV_SSD)
			*done += zns_reset_ns(d, written);
		return 1;
	}
	return 0;
}

/* ZNS service: pages programmed or read across the parallel ways; no FTL, no GC. */
double elv__zns_serve(struct elv_sim_dev *d, struct elv_sim_io *io, double ts)
{
	const struct elv_sim_flash_params *fp = &d->p.flash;
	uint64_t first, last;
	double ways = fp->ways ? fp->ways : 1, batches;

	if ((io->op != ELV_OP_READ && io->op != ELV_OP_WRITE) || !io->nr_sectors)
		return ts + fp->cmd_us * 1e3;
	first = io->sector / fp->page_sectors;
	last = (io->sector + io->nr_sectors - 1) / fp->page_sectors;
	batches = ceil((double)(last - first + 1) / ways);
	if (io->op == ELV_OP_READ)
		return ts + (fp->cmd_us + batches * (fp->read_us + fp->xfer_us)) * 1e3;
	return ts + (fp->cmd_us + batches * (fp->prog_us + fp->xfer_us)) * 1e3;
}

double elv__zoned_pick_cost(struct elv_sim_dev *d, const struct elv_sim_io *io)
{
	if (!d->wz)
		return -1;
	if (d->p.zone.ordered)
		return (double)io->seq;
	if (d->p.kind == ELV_SIM_DEV_SSD)
		return (double)elv_sim_rng_below(&d->zrng, 1u << 30);
	return -1;
}
