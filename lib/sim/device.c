/*
 * The device object: holds up to queue_depth commands, serves one at a time, and picks the
 * next one in FCFS, SSTF or SPTF order (SPTF estimates overhead + seek + rotational wait from
 * the angle at which the seek ends). An ordered tag, sent every ordered_tag_ms, keeps every
 * older command ahead of it and every newer one behind it, which bounds starvation.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"

int elv_sim_dev_create(struct elv_sim_dev **out, const struct elv_sim_dev_params *p)
{
	struct elv_sim_dev *d;
	int r;

	if (!out || !p)
		return ELV_EINVAL;
	*out = NULL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return ELV_ENOMEM;
	d->p = *p;
	r = elv_sim_param_finish(&d->p);
	if (r) {
		free(d);
		return r;
	}
	d->depth = d->p.queue_depth;
	d->wait = calloc(d->depth, sizeof(*d->wait));
	d->active = -1;
	if (!d->wait) {
		free(d);
		return ELV_ENOMEM;
	}
	if (d->p.kind == ELV_SIM_DEV_DISK)
		r = elv__disk_init(d);
	else if (elv__zoned_on(&d->p))
		r = 0; /* ZNS: zones map onto erase blocks, no FTL to build */
	else if (d->p.kind == ELV_SIM_DEV_SSD || d->p.kind == ELV_SIM_DEV_USB)
		r = elv__flash_init(d);
	if (!r)
		r = elv__zoned_init(d);
	if (r) {
		elv_sim_dev_destroy(d);
		return r;
	}
	*out = d;
	return 0;
}

void elv_sim_dev_destroy(struct elv_sim_dev *d)
{
	if (!d)
		return;
	elv__disk_exit(d);
	elv__flash_exit(d);
	elv__zoned_exit(d);
	free(d->wait);
	free(d);
}

unsigned elv_sim_dev_slots(const struct elv_sim_dev *d)
{
	return d->depth - d->nwait - (d->cur ? 1u : 0u);
}

const struct elv_sim_dev_params *elv_sim_dev_params(const struct elv_sim_dev *d)
{
	return &d->p;
}

void elv_sim_dev_get_stats(const struct elv_sim_dev *d, struct elv_sim_dev_stats *st)
{
	*st = d->st;
}

static double serve(struct elv_sim_dev *d, struct elv_sim_io *io, double ts, int commit,
		    double *pos)
{
	*pos = 0;
	switch (d->p.kind) {
	case ELV_SIM_DEV_DISK:
		return elv__disk_serve(d, io, ts, commit, pos);
	case ELV_SIM_DEV_SSD:
	case ELV_SIM_DEV_USB:
		if (d->wz)
			return elv__zns_serve(d, io, ts);
		return elv__flash_serve(d, io, ts);
	default:
		return ts;
	}
}

uint64_t elv__dev_position_ns(struct elv_sim_dev *d, const struct elv_request *rq, uint64_t now)
{
	struct elv_sim_io io;
	double pos;

	memset(&io, 0, sizeof(io));
	io.sector = rq->sector;
	io.nr_sectors = rq->nr_sectors;
	io.op = rq->op;
	/* Nothing is committed: the head, cache and clock stay as they are. */
	serve(d, &io, (double)now, 0, &pos);
	return pos > 0 ? (uint64_t)pos : 0;
}

/* Index of the command to serve next. */
static unsigned pick(struct elv_sim_dev *d, uint64_t now)
{
	uint64_t barrier = UINT64_MAX;
	unsigned i, best = UINT32_MAX;
	double best_cost = 0;
	uint32_t hc = 0;

	if (d->nwait == 1)
		return 0;
	for (i = 0; i < d->nwait; i++)
		if (d->wait[i]->ordered && d->wait[i]->seq < barrier)
			barrier = d->wait[i]->seq;
	if (d->p.drive_sched == ELV_SIM_DRIVE_SSTF && d->p.kind == ELV_SIM_DEV_DISK)
		hc = elv__disk_head_cyl(d, (double)now);
	for (i = 0; i < d->nwait; i++) {
		struct elv_sim_io *io = d->wait[i];
		double cost, pos;

		/* Behind an ordered tag only older commands may go; the tag itself goes last. */
		if (barrier != UINT64_MAX && io->seq > barrier)
			continue;
		if (barrier != UINT64_MAX && io->seq == barrier) {
			unsigned j, older = 0;

			for (j = 0; j < d->nwait; j++)
				older += d->wait[j]->seq < barrier;
			if (older)
				continue;
		}
		if ((cost = elv__zoned_pick_cost(d, io)) >= 0) {
			/* zoned: arrival order, or a ZNS device's own order */
		} else if (d->p.kind != ELV_SIM_DEV_DISK ||
			   d->p.drive_sched == ELV_SIM_DRIVE_FCFS) {
			cost = (double)io->seq;
		} else if (d->p.drive_sched == ELV_SIM_DRIVE_SSTF) {
			uint32_t z, c, h, s;

			if (elv__disk_locate(d, io->sector, &z, &c, &h, &s))
				c = hc;
			cost = c > hc ? c - hc : hc - c;
		} else {
			serve(d, io, (double)now, 0, &pos);
			cost = pos;
		}
		if (best == UINT32_MAX || cost < best_cost ||
		    (cost == best_cost && io->seq < d->wait[best]->seq)) {
			best = i;
			best_cost = cost;
		}
	}
	return best == UINT32_MAX ? 0 : best;
}

static void start(struct elv_sim_dev *d, uint64_t now)
{
	unsigned i = pick(d, now);
	struct elv_sim_io *io = d->wait[i];
	double pos, done;

	/* Keep arrival order in the array so ties stay deterministic. */
	d->nwait--;
	memmove(&d->wait[i], &d->wait[i + 1], (d->nwait - i) * sizeof(*d->wait));
	d->wait[d->nwait] = NULL;
	d->cur = io;
	io->start_ns = now;
	if (!elv__zoned_start(d, io, (double)now, &done))
		done = serve(d, io, (double)now, 1, &pos);
	done = floor(done + 0.5);
	io->done_ns = done > (double)now ? (uint64_t)done : now;
}

int elv_sim_dev_submit(struct elv_sim_dev *d, struct elv_sim_io *io, uint64_t now)
{
	if (!d || !io)
		return ELV_EINVAL;
	if (!elv_sim_dev_slots(d))
		return ELV_EBUSY;
	/* Some drives advertise more tags than they can hold and answer QUEUE FULL. */
	if (d->p.busy_depth && d->nwait + (d->cur ? 1u : 0u) >= d->p.busy_depth) {
		d->st.busy_refusals++;
		return ELV_EBUSY;
	}
	io->submit_ns = now;
	io->seq = d->seq++;
	io->ordered = 0;
	io->cache_hit = 0;
	io->status = 0;
	io->seek_sectors = 0;
	io->seek_ms = 0;
	if (d->p.ordered_tag_ms > 0 && d->depth > 1 && now >= d->next_ordered_ns) {
		io->ordered = 1;
		d->next_ordered_ns = now + (uint64_t)(d->p.ordered_tag_ms * 1e6);
	}
	d->wait[d->nwait++] = io;
	if (!d->cur)
		start(d, now);
	return 0;
}

uint64_t elv_sim_dev_next(const struct elv_sim_dev *d)
{
	return d && d->cur ? d->cur->done_ns : ELV_TIME_NEVER;
}

struct elv_sim_io *elv_sim_dev_finish(struct elv_sim_dev *d, uint64_t now)
{
	struct elv_sim_io *io;

	if (!d || !d->cur)
		return NULL;
	io = d->cur;
	d->cur = NULL;
	d->st.commands++;
	d->st.busy_ns += io->done_ns - io->start_ns;
	if (now < io->done_ns)
		now = io->done_ns;
	if (d->nwait)
		start(d, now);
	return io;
}
