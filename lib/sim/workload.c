/*
 * Workload generators: closed-loop streams that decide what to issue next from their own
 * state and their own random generator. Synchronous readers (random, sequential, bursts with
 * locality), a streaming reader with a readahead window, a buffered writer with a bounded
 * backlog, a fixed-depth random reader, a small-files tree reader (directory, inode, data),
 * a PostMark-like file mix over a FAT-like allocator, a mixed read/write stream of varied sizes
 * (what job files describe), and per-process trace replay.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"

#define SECTOR 512u
#define MS 1000000.0

int elv__vec_push(struct elv__vec *v, double x)
{
	if (v->n == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 256;
		double *nv = realloc(v->v, cap * sizeof(*nv));

		if (!nv)
			return ELV_ENOMEM;
		v->v = nv;
		v->cap = cap;
	}
	v->v[v->n++] = x;
	return 0;
}

void elv__vec_free(struct elv__vec *v)
{
	free(v->v);
	memset(v, 0, sizeof(*v));
}

static uint64_t think_ns(struct elv__stream *s, double ms)
{
	double x = s->sp.exp_think ? elv_sim_rng_exp(&s->rng, ms) : ms;

	return (uint64_t)(x * MS);
}

/* A random request-aligned start inside the region. */
static uint64_t rand_pos(struct elv__stream *s)
{
	uint64_t slots = s->sp.region_len / s->sp.rq_sectors;

	return s->sp.region_start + elv_sim_rng_below(&s->rng, slots ? slots : 1) *
	       s->sp.rq_sectors;
}

/* ---- tree of small files ------------------------------------------------------------------ */

struct tree_file {
	uint64_t sector;
	uint32_t sectors;
};

struct tree_dir {
	uint64_t dir_sector;   /* directory block, then the inode table block */
	uint32_t first;        /* first file */
	uint32_t nfiles;
};

struct tree {
	struct tree_dir *dirs;
	struct tree_file *files;
	uint32_t ndirs;
	uint32_t nfiles;
	uint32_t dir;      /* current directory */
	uint32_t file;     /* next file in it */
	uint32_t phase;    /* 0 directory block, 1 inode block, 2 data */
	uint32_t off;      /* sectors of the current file already read */
};

/* Lay the tree out like an untarred source tree: per directory its directory block, its
 * inode table block, then its files' data in readdir order; small gaps between directories. */
static int tree_init(struct elv__stream *s)
{
	const struct elv_sim_stream_spec *sp = &s->sp;
	uint32_t fpd = sp->files_per_dir ? sp->files_per_dir : 16;
	double kb = sp->mean_file_kb ? sp->mean_file_kb : 12;
	uint64_t cur = sp->region_start, end = sp->region_start + sp->region_len;
	struct tree *t = calloc(1, sizeof(*t));
	uint32_t n = (uint32_t)sp->count, i = 0;

	if (!t)
		return ELV_ENOMEM;
	s->priv = t;
	t->files = calloc(n ? n : 1, sizeof(*t->files));
	t->dirs = calloc(n ? n : 1, sizeof(*t->dirs));
	if (!t->files || !t->dirs)
		return ELV_ENOMEM;
	while (i < n) {
		struct tree_dir *d = &t->dirs[t->ndirs++];
		uint32_t k = 1 + (uint32_t)elv_sim_rng_below(&s->rng, 2 * fpd - 1);

		cur += elv_sim_rng_below(&s->rng, 2048) / 8 * 8;
		d->dir_sector = cur;
		d->first = i;
		cur += 16;
		for (; k && i < n; k--, i++) {
			double f = elv_sim_rng_exp(&s->rng, kb);
			uint32_t sec = (uint32_t)ceil((f < 1 ? 1 : f) * 2.0 / 8.0) * 8;

			if (sec > 8192)
				sec = 8192;
			t->files[i].sector = cur;
			t->files[i].sectors = sec;
			cur += sec;
			d->nfiles++;
		}
		if (cur >= end)
			return ELV_ENOSPC;
	}
	t->nfiles = n;
	s->units_total = n;
	return 0;
}

static int tree_next(struct elv__stream *s, struct elv__desc *d)
{
	struct tree *t = s->priv;
	struct tree_dir *dir;
	struct tree_file *f;
	uint32_t left;

	while (t->dir < t->ndirs && t->file >= t->dirs[t->dir].nfiles) {
		t->dir++;
		t->file = 0;
		t->phase = 0;
	}
	if (t->dir >= t->ndirs)
		return ELV__GEN_DONE;
	dir = &t->dirs[t->dir];
	d->op = ELV_OP_READ;
	d->flags = ELV_RQ_SYNC;
	if (t->phase < 2) {
		d->sector = dir->dir_sector + 8 * t->phase;
		d->nr = 8;
		d->flags |= ELV_RQ_META;
		t->phase++;
		return ELV__GEN_REQ;
	}
	f = &t->files[dir->first + t->file];
	left = f->sectors - t->off;
	d->sector = f->sector + t->off;
	d->nr = left > 256 ? 256 : left;
	t->off += d->nr;
	if (t->off == f->sectors) {
		t->off = 0;
		t->file++;
		s->units_done++;
	}
	return ELV__GEN_REQ;
}

static void tree_exit(struct elv__stream *s)
{
	struct tree *t = s->priv;

	if (t) {
		free(t->dirs);
		free(t->files);
	}
}

/* ---- PostMark-like file mix ------------------------------------------------------------ */

#define PM_CLUSTER 8u    /* 4 KiB clusters */
#define PM_CHUNK 128u    /* largest data request, sectors */

struct pm_run {
	uint32_t start;
	uint32_t n;
};

struct pm_file {
	uint32_t dir;
	uint32_t size;      /* bytes */
	uint32_t nruns;
	uint32_t cap;
	struct pm_run *runs;
};

struct pm_ring {
	struct elv__desc *v;
	size_t head;
	size_t n;
	size_t cap;
};

struct postmark {
	uint64_t fat_start;     /* FAT: 4 bytes per cluster */
	uint64_t data_start;
	uint32_t nclusters;
	uint8_t *used;
	uint32_t cursor;        /* next-fit allocation */
	uint32_t ndirs;
	uint32_t *dir_cluster;
	struct pm_file *files;
	uint32_t nfiles;        /* slots used */
	uint32_t *live;         /* live file indices */
	uint32_t nlive;
	uint32_t cap;
	uint64_t creates_left;
	uint64_t tx_left;
	struct pm_ring ring;
	/* FAT and directory sectors live in the buffer cache: dirtied in place, written back
	 * together every 5 s (and at the final sync), as the kernel's periodic writeback does. */
	uint64_t meta_lo;
	uint64_t meta_hi;
	uint8_t *meta_dirty;
	uint64_t meta_count;
	uint64_t next_meta;
};

static int ring_push(struct pm_ring *r, uint64_t sector, uint32_t nr, uint8_t op,
		     uint8_t flags)
{
	struct elv__desc *d;

	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 64, i;
		struct elv__desc *nv = malloc(cap * sizeof(*nv));

		if (!nv)
			return ELV_ENOMEM;
		for (i = 0; i < r->n; i++)
			nv[i] = r->v[(r->head + i) % r->cap];
		free(r->v);
		r->v = nv;
		r->head = 0;
		r->cap = cap;
	}
	d = &r->v[(r->head + r->n) % r->cap];
	r->n++;
	d->sector = sector;
	d->nr = nr;
	d->op = op;
	d->flags = flags;
	return 0;
}

static uint64_t clu_sector(const struct postmark *pm, uint32_t c)
{
	return pm->data_start + (uint64_t)c * PM_CLUSTER;
}

static void meta_mark(struct postmark *pm, uint64_t sector)
{
	if (sector < pm->meta_lo || sector >= pm->meta_hi)
		return;
	if (!pm->meta_dirty[sector - pm->meta_lo]) {
		pm->meta_dirty[sector - pm->meta_lo] = 1;
		pm->meta_count++;
	}
}

/* Dirty the FAT sectors covering clusters [c, c + n). */
static int pm_fat_writes(struct postmark *pm, uint32_t c, uint32_t n)
{
	uint64_t first = pm->fat_start + (uint64_t)c * 4 / SECTOR;
	uint64_t last = pm->fat_start + ((uint64_t)c + n - 1) * 4 / SECTOR, x;

	for (x = first; x <= last; x++)
		meta_mark(pm, x);
	return 0;
}

/* Dirty the directory sector holding file f's entry. */
static int pm_dir_write(struct postmark *pm, uint32_t f)
{
	meta_mark(pm, clu_sector(pm, pm->dir_cluster[pm->files[f].dir]) + f % PM_CLUSTER);
	return 0;
}

/* Write back every dirty metadata sector, ascending, contiguous ones in one request. */
static int pm_meta_flush(struct postmark *pm)
{
	uint64_t i = 0, n = pm->meta_hi - pm->meta_lo;

	while (i < n && pm->meta_count) {
		uint64_t j;

		if (!pm->meta_dirty[i]) {
			i++;
			continue;
		}
		for (j = i; j < n && pm->meta_dirty[j] && j - i < PM_CHUNK; j++) {
			pm->meta_dirty[j] = 0;
			pm->meta_count--;
		}
		if (ring_push(&pm->ring, pm->meta_lo + i, (uint32_t)(j - i), ELV_OP_WRITE,
			      0))
			return ELV_ENOMEM;
		i = j;
	}
	return 0;
}

static int pm_add_run(struct pm_file *f, uint32_t start, uint32_t n)
{
	if (f->nruns && f->runs[f->nruns - 1].start + f->runs[f->nruns - 1].n == start) {
		f->runs[f->nruns - 1].n += n;
		return 0;
	}
	if (f->nruns == f->cap) {
		uint32_t cap = f->cap ? f->cap * 2 : 4;
		struct pm_run *nv = realloc(f->runs, cap * sizeof(*nv));

		if (!nv)
			return ELV_ENOMEM;
		f->runs = nv;
		f->cap = cap;
	}
	f->runs[f->nruns].start = start;
	f->runs[f->nruns].n = n;
	f->nruns++;
	return 0;
}

/* Data writes for clusters [c, c + n) in chunks. */
static int pm_data(struct postmark *pm, uint32_t c, uint32_t n, uint8_t op, uint8_t flags)
{
	uint64_t s = clu_sector(pm, c), left = (uint64_t)n * PM_CLUSTER;

	while (left) {
		uint32_t k = left > PM_CHUNK ? PM_CHUNK : (uint32_t)left;

		if (ring_push(&pm->ring, s, k, op, flags))
			return ELV_ENOMEM;
		s += k;
		left -= k;
	}
	return 0;
}

/* Next-fit: take free clusters from the cursor on, in runs, write data and FAT for them. */
static int pm_alloc(struct postmark *pm, uint32_t f, uint32_t need)
{
	uint32_t scanned = 0;

	while (need && scanned < pm->nclusters) {
		uint32_t c = pm->cursor, n = 0;

		while (pm->used[c] && scanned < pm->nclusters) {
			c = (c + 1) % pm->nclusters;
			scanned++;
		}
		while (n < need && c + n < pm->nclusters && !pm->used[c + n]) {
			pm->used[c + n] = 1;
			n++;
		}
		if (!n)
			break;
		pm->cursor = (c + n) % pm->nclusters;
		scanned += n;
		need -= n;
		if (pm_add_run(&pm->files[f], c, n) || pm_data(pm, c, n, ELV_OP_WRITE, 0) ||
		    pm_fat_writes(pm, c, n))
			return ELV_ENOMEM;
	}
	return need ? ELV_ENOSPC : 0;
}

static uint32_t pm_size(struct elv__stream *s)
{
	uint32_t lo = s->sp.min_size ? s->sp.min_size : 500;
	uint32_t hi = s->sp.max_size > lo ? s->sp.max_size : lo;

	return lo + (uint32_t)elv_sim_rng_below(&s->rng, (uint64_t)hi - lo + 1);
}

static uint32_t clusters_of(uint32_t bytes)
{
	return (bytes + PM_CLUSTER * SECTOR - 1) / (PM_CLUSTER * SECTOR);
}

static int pm_create(struct elv__stream *s)
{
	struct postmark *pm = s->priv;
	uint32_t f = pm->nfiles++;
	struct pm_file *pf = &pm->files[f];

	pf->dir = (uint32_t)elv_sim_rng_below(&s->rng, pm->ndirs);
	pf->size = pm_size(s);
	pm->live[pm->nlive++] = f;
	if (pm_alloc(pm, f, clusters_of(pf->size)))
		return ELV_ENOSPC;
	return pm_dir_write(pm, f);
}

static int pm_delete(struct elv__stream *s, uint32_t li)
{
	struct postmark *pm = s->priv;
	uint32_t f = pm->live[li], i, c;
	struct pm_file *pf = &pm->files[f];

	for (i = 0; i < pf->nruns; i++) {
		for (c = 0; c < pf->runs[i].n; c++)
			pm->used[pf->runs[i].start + c] = 0;
		if (pm_fat_writes(pm, pf->runs[i].start, pf->runs[i].n))
			return ELV_ENOMEM;
	}
	if (pm_dir_write(pm, f))
		return ELV_ENOMEM;
	free(pf->runs);
	pf->runs = NULL;
	pf->nruns = pf->cap = 0;
	pm->live[li] = pm->live[--pm->nlive];
	return 0;
}

static int pm_read(struct postmark *pm, uint32_t f)
{
	struct pm_file *pf = &pm->files[f];
	uint32_t i;

	for (i = 0; i < pf->nruns; i++)
		if (pm_data(pm, pf->runs[i].start, pf->runs[i].n, ELV_OP_READ, ELV_RQ_SYNC))
			return ELV_ENOMEM;
	return 0;
}

static int pm_append(struct elv__stream *s, uint32_t f)
{
	struct postmark *pm = s->priv;
	struct pm_file *pf = &pm->files[f];
	uint32_t add = pm_size(s), have = clusters_of(pf->size), want;
	uint32_t max = s->sp.max_size ? s->sp.max_size : 500000;

	if (pf->size + add > max)
		add = max > pf->size ? max - pf->size : 0;
	if (!add)
		return pm_read(pm, f);
	want = clusters_of(pf->size + add);
	/* The partly filled last cluster is rewritten, then new clusters follow. */
	if (pf->size % (PM_CLUSTER * SECTOR) && pf->nruns) {
		struct pm_run *r = &pf->runs[pf->nruns - 1];

		if (pm_data(pm, r->start + r->n - 1, 1, ELV_OP_WRITE, 0))
			return ELV_ENOMEM;
	}
	pf->size += add;
	if (want > have && pm_alloc(pm, f, want - have))
		return ELV_ENOSPC;
	return pm_dir_write(pm, f);
}

/* Queue the requests of the next file-system operation. */
static int pm_op(struct elv__stream *s)
{
	struct postmark *pm = s->priv;

	if (pm->creates_left) {
		pm->creates_left--;
		return pm_create(s);
	}
	if (pm->tx_left) {
		int r;

		pm->tx_left--;
		s->units_done++;
		if (elv_sim_rng_below(&s->rng, 2) || !pm->nlive)
			r = pm_create(s);
		else
			r = pm_delete(s, (uint32_t)elv_sim_rng_below(&s->rng, pm->nlive));
		if (r || !pm->nlive)
			return r;
		if (elv_sim_rng_below(&s->rng, 2))
			return pm_read(pm, pm->live[elv_sim_rng_below(&s->rng, pm->nlive)]);
		return pm_append(s, pm->live[elv_sim_rng_below(&s->rng, pm->nlive)]);
	}
	if (pm->nlive)
		return pm_delete(s, pm->nlive - 1);
	return 1; /* nothing left */
}

static int pm_init(struct elv__stream *s)
{
	const struct elv_sim_stream_spec *sp = &s->sp;
	struct postmark *pm = calloc(1, sizeof(*pm));
	uint64_t fat_sectors;
	uint32_t i;

	if (!pm)
		return ELV_ENOMEM;
	s->priv = pm;
	/* FAT32-like: a FAT at the start of the area, then 4 KiB clusters. */
	pm->nclusters = (uint32_t)(sp->region_len / PM_CLUSTER);
	fat_sectors = ((uint64_t)pm->nclusters * 4 + SECTOR - 1) / SECTOR;
	fat_sectors = (fat_sectors + PM_CLUSTER - 1) / PM_CLUSTER * PM_CLUSTER;
	pm->nclusters -= (uint32_t)(fat_sectors / PM_CLUSTER) + 1;
	pm->fat_start = sp->region_start + 32; /* reserved sectors */
	pm->data_start = pm->fat_start + fat_sectors;
	pm->used = calloc(pm->nclusters, 1);
	pm->ndirs = sp->burst ? sp->burst : 1000; /* subdirectories */
	pm->dir_cluster = calloc(pm->ndirs, sizeof(*pm->dir_cluster));
	pm->cap = (uint32_t)(sp->files + sp->count + 1);
	pm->files = calloc(pm->cap, sizeof(*pm->files));
	pm->live = calloc(pm->cap, sizeof(*pm->live));
	if (!pm->used || !pm->dir_cluster || !pm->files || !pm->live)
		return ELV_ENOMEM;
	for (i = 0; i < pm->ndirs && i < pm->nclusters; i++) {
		pm->dir_cluster[i] = i;
		pm->used[i] = 1;
	}
	pm->cursor = i;
	pm->meta_lo = pm->fat_start;
	pm->meta_hi = clu_sector(pm, pm->ndirs);
	pm->meta_dirty = calloc(pm->meta_hi - pm->meta_lo, 1);
	if (!pm->meta_dirty)
		return ELV_ENOMEM;
	pm->next_meta = 5000 * (uint64_t)MS;
	pm->creates_left = sp->files ? sp->files : 500;
	pm->tx_left = sp->count;
	s->units_total = pm->creates_left + pm->tx_left;
	return 0;
}

static int pm_next(struct elv__stream *s, uint64_t now, struct elv__desc *d, uint64_t *wake)
{
	struct postmark *pm = s->priv;
	uint32_t depth = s->sp.depth ? s->sp.depth : 32;

	if (now >= pm->next_meta) {
		if (pm_meta_flush(pm))
			return ELV_ENOMEM;
		pm->next_meta = now + 5000 * (uint64_t)MS;
	}
	for (;;) {
		struct elv__desc *h;

		if (!pm->ring.n) {
			int r;

			if (now < s->next_at) {
				*wake = s->next_at;
				return ELV__GEN_SLEEP;
			}
			r = pm_op(s);
			if (r == 1 && pm->meta_count) {
				/* the final sync */
				if (pm_meta_flush(pm))
					return ELV_ENOMEM;
				continue;
			}
			if (r == 1)
				return ELV__GEN_DONE;
			if (r < 0)
				return r;
			if (pm->creates_left == 0 && pm->tx_left == 0)
				s->units_done = s->units_total;
			s->next_at = now + think_ns(s, s->sp.think_ms);
			continue;
		}
		/* A read is dependent: nothing else goes until it completes. */
		if (s->inflight_sync)
			return ELV__GEN_WAIT;
		h = &pm->ring.v[pm->ring.head];
		if (h->op == ELV_OP_WRITE && s->inflight_wr >= depth)
			return ELV__GEN_WAIT;
		*d = *h;
		pm->ring.head = (pm->ring.head + 1) % pm->ring.cap;
		pm->ring.n--;
		return ELV__GEN_REQ;
	}
}

static void pm_exit(struct elv__stream *s)
{
	struct postmark *pm = s->priv;
	uint32_t i;

	if (!pm)
		return;
	for (i = 0; pm->files && i < pm->nfiles; i++)
		free(pm->files[i].runs);
	free(pm->files);
	free(pm->live);
	free(pm->used);
	free(pm->dir_cluster);
	free(pm->ring.v);
	free(pm->meta_dirty);
}

/* ---- trace replay --------------------------------------------------------------------- */

struct replay {
	const struct elv_sim_replay_rec *recs;
	uint32_t *idx;
	size_t n;
	size_t cur;
	int closed;
	uint64_t cap;
};

int elv__gen_replay(struct elv__stream *s, const struct elv_sim_replay_rec *recs, uint32_t *idx,
		    size_t n, int closed, uint64_t capacity)
{
	struct replay *r = calloc(1, sizeof(*r));

	if (!r)
		return ELV_ENOMEM;
	r->recs = recs;
	r->idx = idx;
	r->n = n;
	r->closed = closed;
	r->cap = capacity;
	s->priv = r;
	s->units_total = n;
	return 0;
}

static int replay_next(struct elv__stream *s, uint64_t now, struct elv__desc *d,
		       uint64_t *wake)
{
	struct replay *r = s->priv;
	const struct elv_sim_replay_rec *x;
	uint64_t t;

	if (r->cur == r->n)
		return ELV__GEN_DONE;
	x = &r->recs[r->idx[r->cur]];
	if (r->closed) {
		if (s->inflight)
			return ELV__GEN_WAIT;
		t = r->cur ? s->next_at : x->time_ns;
	} else {
		t = x->time_ns;
	}
	if (now < t) {
		*wake = t;
		return ELV__GEN_SLEEP;
	}
	d->op = x->op;
	d->flags = x->sync ? ELV_RQ_SYNC : 0;
	d->nr = x->nr_sectors;
	/* Fold addresses beyond the simulated device back onto it. */
	d->sector = x->sector % r->cap;
	if (d->nr > r->cap - d->sector)
		d->nr = (uint32_t)(r->cap - d->sector);
	if (x->op != ELV_OP_FLUSH && !d->nr)
		d->nr = 1, d->sector = r->cap - 1;
	if (x->op == ELV_OP_FLUSH)
		d->sector = 0, d->nr = 0;
	r->cur++;
	s->units_done = r->cur;
	return ELV__GEN_REQ;
}

uint64_t elv__gen_unissued(const struct elv__stream *s)
{
	const struct replay *r = s->priv;

	return s->sp.kind == ELV__REPLAY && r ? r->n - r->cur : 0;
}

/* ---- mixed reads and writes ------------------------------------------------------------- */

/* Sizes and offsets move in 4 KiB steps when the smallest size is whole pages. */
static uint32_t mixed_step(const struct elv_sim_stream_spec *sp)
{
	return sp->rq_sectors % 8 == 0 ? 8 : 1;
}

static int mixed_init(struct elv__stream *s)
{
	struct elv_sim_stream_spec *sp = &s->sp;

	if (!sp->rq_sectors_max)
		sp->rq_sectors_max = sp->rq_sectors;
	if (sp->rq_sectors_max < sp->rq_sectors || sp->rq_sectors_max > sp->region_len ||
	    !(sp->read_share >= 0 && sp->read_share <= 1) || sp->pattern > ELV_SIM_LOCALITY ||
	    !(sp->think_ms >= 0))
		return ELV_EINVAL;
	s->left = sp->count ? sp->count : sp->bytes;
	s->units_total = s->left;
	s->burst_left = 0;
	return 0;
}

static int mixed_next(struct elv__stream *s, uint64_t now, struct elv__desc *d,
		      uint64_t *wake)
{
	const struct elv_sim_stream_spec *sp = &s->sp;
	uint64_t end = sp->region_start + sp->region_len, slots;
	uint32_t step = mixed_step(sp), depth = sp->depth ? sp->depth : 1;
	uint32_t nr = sp->rq_sectors;

	if ((sp->count || sp->bytes) && !s->left)
		return ELV__GEN_DONE;
	if (s->inflight >= depth)
		return ELV__GEN_WAIT;
	if (now < s->next_at) {
		*wake = s->next_at;
		return ELV__GEN_SLEEP;
	}
	if (sp->rq_sectors_max > nr)
		nr += (uint32_t)elv_sim_rng_below(&s->rng, (sp->rq_sectors_max - nr) / step + 1) *
		      step;
	slots = (sp->region_len - nr) / step + 1;
	if (sp->pattern == ELV_SIM_SEQUENTIAL) {
		if (s->pos + nr > end)
			s->pos = sp->region_start;
		d->sector = s->pos;
		s->pos += nr;
	} else if (sp->pattern == ELV_SIM_LOCALITY && s->burst_left &&
		   s->pos + (uint64_t)nr * 4 <= end) {
		s->pos += (uint64_t)nr * (1 + elv_sim_rng_below(&s->rng, 4));
		if (s->pos + nr > end)
			s->pos = end - nr;
		s->burst_left--;
		d->sector = s->pos;
	} else {
		s->pos = sp->region_start + elv_sim_rng_below(&s->rng, slots) * step;
		s->burst_left = sp->pattern == ELV_SIM_LOCALITY ? (sp->burst ? sp->burst : 8) - 1
								 : 0;
		d->sector = s->pos;
	}
	d->nr = nr;
	if (elv_sim_rng_unit(&s->rng) < sp->read_share) {
		d->op = ELV_OP_READ;
		d->flags = ELV_RQ_SYNC;
	} else {
		d->op = ELV_OP_WRITE;
		d->flags = sp->sync_writes ? ELV_RQ_SYNC : 0;
	}
	if (sp->count) {
		s->left--;
	} else if (sp->bytes) {
		uint64_t b = (uint64_t)nr * SECTOR;

		s->left = s->left > b ? s->left - b : 0;
	}
	return ELV__GEN_REQ;
}

/* ---- dispatch by kind ---------------------------------------------------------------------- */

int elv__gen_init(struct elv__stream *s, uint64_t capacity)
{
	struct elv_sim_stream_spec *sp = &s->sp;

	if (!sp->region_len || sp->region_start >= capacity)
		sp->region_start = 0, sp->region_len = capacity;
	if (sp->region_len > capacity - sp->region_start)
		sp->region_len = capacity - sp->region_start;
	if (!sp->rq_sectors)
		sp->rq_sectors = 8;
	if (sp->rq_sectors > sp->region_len)
		return ELV_EINVAL;
	s->pos = sp->region_start;
	s->wake_at = ELV_TIME_NEVER;
	switch (sp->kind) {
	case ELV_SIM_SYNC_READER:
	case ELV_SIM_FIXED_QD:
		s->left = sp->count;
		s->units_total = sp->count;
		s->burst_left = 0;
		return 0;
	case ELV_SIM_STREAMER:
	case ELV_SIM_WRITER:
		s->left = sp->bytes;
		s->units_total = sp->bytes;
		return 0;
	case ELV_SIM_TREE_READER:
		return tree_init(s);
	case ELV_SIM_POSTMARK:
		s->has_wb = 1;
		return pm_init(s);
	case ELV_SIM_MIXED:
		return mixed_init(s);
	default:
		return ELV_EINVAL;
	}
}

static int reader_next(struct elv__stream *s, uint64_t now, struct elv__desc *d,
		       uint64_t *wake)
{
	const struct elv_sim_stream_spec *sp = &s->sp;
	uint64_t end = sp->region_start + sp->region_len;

	if (s->inflight)
		return ELV__GEN_WAIT;
	if (sp->count && !s->left)
		return ELV__GEN_DONE;
	if (now < s->next_at) {
		*wake = s->next_at;
		return ELV__GEN_SLEEP;
	}
	if (sp->pattern == ELV_SIM_RANDOM) {
		d->sector = rand_pos(s);
	} else if (sp->pattern == ELV_SIM_SEQUENTIAL) {
		if (s->pos + sp->rq_sectors > end)
			s->pos = sp->region_start;
		d->sector = s->pos;
		s->pos += sp->rq_sectors;
	} else {
		if (!s->burst_left) {
			s->pos = rand_pos(s);
			s->burst_left = sp->burst ? sp->burst : 8;
		} else {
			s->pos += sp->rq_sectors * (1 + elv_sim_rng_below(&s->rng, 4));
			if (s->pos + sp->rq_sectors > end)
				s->pos = sp->region_start;
		}
		s->burst_left--;
		d->sector = s->pos;
	}
	d->nr = sp->rq_sectors;
	d->op = ELV_OP_READ;
	d->flags = ELV_RQ_SYNC;
	if (sp->count)
		s->left--;
	return ELV__GEN_REQ;
}

static int window_next(struct elv__stream *s, struct elv__desc *d)
{
	const struct elv_sim_stream_spec *sp = &s->sp;
	uint64_t end = sp->region_start + sp->region_len;
	uint32_t depth = sp->depth ? sp->depth : 1;

	if (sp->kind == ELV_SIM_FIXED_QD ? (sp->count && !s->left) : (sp->bytes && !s->left))
		return ELV__GEN_DONE;
	if (s->inflight >= depth)
		return ELV__GEN_WAIT;
	d->nr = sp->rq_sectors;
	if (sp->kind == ELV_SIM_FIXED_QD) {
		d->sector = rand_pos(s);
		d->op = ELV_OP_READ;
		d->flags = ELV_RQ_SYNC;
		if (sp->count)
			s->left--;
		return ELV__GEN_REQ;
	}
	if (s->pos + sp->rq_sectors > end)
		s->pos = sp->region_start;
	d->sector = s->pos;
	s->pos += sp->rq_sectors;
	if (sp->kind == ELV_SIM_WRITER) {
		d->op = ELV_OP_WRITE;
		d->flags = 0;
	} else {
		d->op = ELV_OP_READ;
		d->flags = ELV_RQ_SYNC;
	}
	if (sp->bytes) {
		uint64_t b = (uint64_t)d->nr * SECTOR;

		s->left = s->left > b ? s->left - b : 0;
	}
	return ELV__GEN_REQ;
}

int elv__gen_next(struct elv__stream *s, uint64_t now, struct elv__desc *d, uint64_t *wake)
{
	uint64_t start = (uint64_t)s->sp.start_ms * 1000000u;

	/* Nothing before the stream's start; from then on its kind decides. */
	if (now < start) {
		*wake = start;
		return ELV__GEN_SLEEP;
	}
	switch (s->sp.kind) {
	case ELV_SIM_SYNC_READER:
		return reader_next(s, now, d, wake);
	case ELV_SIM_STREAMER:
	case ELV_SIM_WRITER:
	case ELV_SIM_FIXED_QD:
		return window_next(s, d);
	case ELV_SIM_TREE_READER:
		if (s->inflight)
			return ELV__GEN_WAIT;
		if (now < s->next_at) {
			*wake = s->next_at;
			return ELV__GEN_SLEEP;
		}
		return tree_next(s, d);
	case ELV_SIM_POSTMARK:
		return pm_next(s, now, d, wake);
	case ELV_SIM_MIXED:
		return mixed_next(s, now, d, wake);
	case ELV__REPLAY:
		return replay_next(s, now, d, wake);
	default:
		return ELV_EINVAL;
	}
}

void elv__gen_complete(struct elv__stream *s, const struct elv__desc *d, uint64_t now)
{
	const struct elv_sim_stream_spec *sp = &s->sp;

	(void)d;
	switch (sp->kind) {
	case ELV_SIM_SYNC_READER:
		if (sp->pattern == ELV_SIM_LOCALITY && !s->burst_left)
			s->next_at = now + think_ns(s, sp->burst_think_ms);
		else
			s->next_at = now + think_ns(s, sp->think_ms);
		if (sp->count)
			s->units_done++;
		break;
	case ELV_SIM_TREE_READER:
		s->next_at = now + think_ns(s, sp->think_ms);
		break;
	case ELV_SIM_STREAMER:
	case ELV_SIM_WRITER:
		s->units_done += (uint64_t)d->nr * SECTOR;
		break;
	case ELV_SIM_FIXED_QD:
		s->units_done++;
		break;
	case ELV_SIM_MIXED:
		s->units_done += sp->count ? 1 : (uint64_t)d->nr * SECTOR;
		if (sp->think_ms > 0)
			s->next_at = now + think_ns(s, sp->think_ms);
		break;
	case ELV__REPLAY: {
		struct replay *r = s->priv;

		if (r->closed && r->cur < r->n)
			s->next_at = now + (r->recs[r->idx[r->cur]].time_ns -
					    r->recs[r->idx[r->cur - 1]].time_ns);
		break;
	}
	default:
		break;
	}
}

void elv__gen_exit(struct elv__stream *s)
{
	if (s->sp.kind == ELV_SIM_TREE_READER)
		tree_exit(s);
	else if (s->sp.kind == ELV_SIM_POSTMARK)
		pm_exit(s);
	else if (s->sp.kind == ELV__REPLAY && s->priv)
		free(((struct replay *)s->priv)->idx);
	free(s->priv);
	s->priv = NULL;
	elv__vec_free(&s->rlat);
	elv__vec_free(&s->wlat);
}
