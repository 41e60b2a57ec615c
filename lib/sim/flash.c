/*
 * Flash models. SSD: page-mapped FTL with greedy garbage collection. USB stick: hybrid
 * log-block FTL (BAST-like) with a few open log blocks; a log block that filled in order is
 * switched into place (one erase), one written in order but not to the end is completed from
 * the data block (partial merge), anything else costs a full merge.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"

#define INV UINT32_MAX

static int ssd_init(struct elv_sim_dev *d)
{
	const struct elv_sim_flash_params *fp = &d->p.flash;
	uint32_t ppb = fp->pages_per_block;
	uint64_t np;
	uint32_t i;

	d->nr_lpages = d->p.capacity / fp->page_sectors;
	d->nr_lblocks = d->nr_lpages / ppb;
	d->nr_pblocks = (uint32_t)ceil((double)d->nr_lblocks * (1.0 + fp->spare)) + 2;
	np = (uint64_t)d->nr_pblocks * ppb;
	d->l2p = malloc(d->nr_lpages * sizeof(uint32_t));
	d->p2l = malloc(np * sizeof(uint32_t));
	d->valid = calloc(d->nr_pblocks, sizeof(uint32_t));
	d->state = calloc(d->nr_pblocks, 1);
	if (!d->l2p || !d->p2l || !d->valid || !d->state)
		return ELV_ENOMEM;
	memset(d->l2p, 0xff, d->nr_lpages * sizeof(uint32_t));
	memset(d->p2l, 0xff, np * sizeof(uint32_t));
	d->nr_free = d->nr_pblocks;
	for (i = 0; i < d->nr_pblocks; i++)
		d->state[i] = 0;
	d->active_blk = 0;
	d->state[0] = 1;
	d->nr_free--;
	d->active_next = 0;
	return 0;
}

static int usb_init(struct elv_sim_dev *d)
{
	const struct elv_sim_flash_params *fp = &d->p.flash;
	uint32_t i;

	d->nr_lpages = d->p.capacity / fp->page_sectors;
	d->nr_lblocks = d->nr_lpages / fp->pages_per_block;
	d->logs = calloc(fp->log_blocks, sizeof(*d->logs));
	if (!d->logs)
		return ELV_ENOMEM;
	for (i = 0; i < fp->log_blocks; i++)
		d->logs[i].lblk = -1;
	return 0;
}

int elv__flash_init(struct elv_sim_dev *d)
{
	return d->p.kind == ELV_SIM_DEV_SSD ? ssd_init(d) : usb_init(d);
}

void elv__flash_exit(struct elv_sim_dev *d)
{
	free(d->l2p);
	free(d->p2l);
	free(d->valid);
	free(d->state);
	free(d->logs);
	d->l2p = d->p2l = d->valid = NULL;
	d->state = NULL;
	d->logs = NULL;
}

/* ---- SSD ------------------------------------------------------------------------------ */

static uint32_t ssd_take_free(struct elv_sim_dev *d)
{
	uint32_t i;

	for (i = 0; i < d->nr_pblocks; i++) {
		uint32_t b = (d->active_blk + 1 + i) % d->nr_pblocks;

		if (d->state[b] == 0) {
			d->state[b] = 1;
			d->nr_free--;
			return b;
		}
	}
	return INV;
}

/* Place logical page lp in the active block (no cost here). */
static void ssd_place(struct elv_sim_dev *d, uint32_t lp)
{
	uint32_t ppb = d->p.flash.pages_per_block, pp;

	if (d->active_next == ppb) {
		d->state[d->active_blk] = 2;
		d->active_blk = ssd_take_free(d);
		d->active_next = 0;
	}
	pp = d->active_blk * ppb + d->active_next++;
	d->l2p[lp] = pp;
	d->p2l[pp] = lp;
	d->valid[d->active_blk]++;
}

/* Greedy collection of the full block with the fewest valid pages; returns its cost (us). */
static double ssd_gc(struct elv_sim_dev *d)
{
	const struct elv_sim_flash_params *fp = &d->p.flash;
	uint32_t ppb = fp->pages_per_block, v = INV, i, best = INV;
	double cost;

	for (i = 0; i < d->nr_pblocks; i++)
		if (d->state[i] == 2 && d->valid[i] < best) {
			best = d->valid[i];
			v = i;
		}
	if (v == INV)
		return 0;
	for (i = 0; i < ppb; i++) {
		uint32_t lp = d->p2l[v * ppb + i];

		if (lp == INV)
			continue;
		d->p2l[v * ppb + i] = INV;
		d->valid[v]--;
		ssd_place(d, lp);
	}
	d->state[v] = 0;
	d->nr_free++;
	d->st.gc_blocks++;
	d->st.gc_copies += best;
	d->st.erases++;
	cost = best * (fp->read_us + fp->prog_us) + fp->erase_us;
	return cost;
}

static double ssd_write_page(struct elv_sim_dev *d, uint32_t lp)
{
	const struct elv_sim_flash_params *fp = &d->p.flash;
	uint32_t ppb = fp->pages_per_block, old = d->l2p[lp];
	uint32_t low = (uint32_t)(fp->gc_free * d->nr_pblocks);
	double cost = 0;

	if (low < 2)
		low = 2;
	if (old != INV) {
		d->p2l[old] = INV;
		d->valid[old / ppb]--;
	}
	while (d->nr_free < low) {
		double c = ssd_gc(d);

		if (c == 0)
			break;
		cost += c;
	}
	ssd_place(d, lp);
	return cost;
}

static double ssd_serve(struct elv_sim_dev *d, struct elv_sim_io *io)
{
	const struct elv_sim_flash_params *fp = &d->p.flash;
	uint64_t first = io->sector / fp->page_sectors;
	uint64_t last = (io->sector + io->nr_sectors - 1) / fp->page_sectors;
	uint64_t np = last - first + 1, p;
	double ways = fp->ways ? fp->ways : 1, batches = ceil((double)np / ways);
	double us = fp->cmd_us, gc = 0;

	if (io->op == ELV_OP_READ)
		return us + batches * (fp->read_us + fp->xfer_us);
	if (io->op != ELV_OP_WRITE)
		return us;
	for (p = first; p <= last; p++)
		gc += ssd_write_page(d, (uint32_t)p);
	/* Edge pages not wholly overwritten are read first (read-modify-write). */
	if (io->sector % fp->page_sectors)
		us += fp->read_us;
	if ((io->sector + io->nr_sectors) % fp->page_sectors && (first != last ||
	    !(io->sector % fp->page_sectors)))
		us += fp->read_us;
	return us + batches * (fp->prog_us + fp->xfer_us) + gc;
}

/* ---- USB stick (log-block FTL) ------------------------------------------------------------ */

static uint64_t us_to_ns(double us)
{
	return (uint64_t)(us * 1000.0 + 0.5);
}

static double usb_merge(struct elv_sim_dev *d, struct elv__logblk *lb)
{
	const struct elv_sim_flash_params *fp = &d->p.flash;
	uint32_t ppb = fp->pages_per_block;
	double rw = fp->read_us + fp->prog_us, cost;

	if (lb->seq && lb->next == ppb) {
		cost = fp->erase_us; /* the log block becomes the data block */
		d->st.switch_merges++;
		d->st.switch_merge_ns += us_to_ns(cost);
		d->st.erases++;
	} else if (lb->seq) {
		cost = (ppb - lb->next) * rw + fp->erase_us;
		d->st.partial_merges++;
		d->st.partial_merge_ns += us_to_ns(cost);
		d->st.erases++;
	} else {
		cost = ppb * rw + 2 * fp->erase_us;
		d->st.full_merges++;
		d->st.full_merge_ns += us_to_ns(cost);
		d->st.erases += 2;
	}
	lb->lblk = -1;
	lb->next = 0;
	lb->seq = 0;
	return cost;
}

static double usb_write_page(struct elv_sim_dev *d, uint64_t lp)
{
	const struct elv_sim_flash_params *fp = &d->p.flash;
	uint32_t ppb = fp->pages_per_block, off = (uint32_t)(lp % ppb), i;
	int64_t lblk = (int64_t)(lp / ppb);
	struct elv__logblk *lb = NULL, *victim = NULL;
	double cost = fp->prog_us + fp->xfer_us;

	for (i = 0; i < fp->log_blocks && !lb; i++)
		if (d->logs[i].lblk == lblk)
			lb = &d->logs[i];
	/* No log block yet: take a free one, else merge the least recently written. */
	for (i = 0; i < fp->log_blocks && !lb; i++) {
		struct elv__logblk *x = &d->logs[i];

		if (!victim || (victim->lblk >= 0 && (x->lblk < 0 || x->lru < victim->lru)))
			victim = x;
	}
	if (!lb) {
		if (!victim)
			return cost; /* no log blocks: refused by elv_sim_param_finish() */
		lb = victim;
		if (lb->lblk >= 0)
			cost += usb_merge(d, lb);
		lb->lblk = lblk;
		lb->next = 0;
		lb->seq = 1;
	}
	if (off != lb->next)
		lb->seq = 0;
	lb->next++;
	lb->lru = ++d->lru_clock;
	if (lb->next == ppb)
		cost += usb_merge(d, lb);
	return cost;
}

static double usb_serve(struct elv_sim_dev *d, struct elv_sim_io *io)
{
	const struct elv_sim_flash_params *fp = &d->p.flash;
	uint64_t first = io->sector / fp->page_sectors;
	uint64_t last = (io->sector + io->nr_sectors - 1) / fp->page_sectors, p;
	double us = fp->cmd_us;

	if (io->op == ELV_OP_READ)
		return us + (double)(last - first + 1) * (fp->read_us + fp->xfer_us);
	if (io->op != ELV_OP_WRITE)
		return us;
	if (io->sector % fp->page_sectors)
		us += fp->read_us;
	if ((io->sector + io->nr_sectors) % fp->page_sectors && (first != last ||
	    !(io->sector % fp->page_sectors)))
		us += fp->read_us;
	for (p = first; p <= last; p++)
		us += usb_write_page(d, p);
	return us;
}

double elv__flash_serve(struct elv_sim_dev *d, struct elv_sim_io *io, double ts)
{
	double us = d->p.kind == ELV_SIM_DEV_SSD ? ssd_serve(d, io) : usb_serve(d, io);

	return ts + us * 1000.0;
}
