/*
 * The five reference experiments as built-in scenarios. Layouts are fractions of the device
 * capacity so that a scenario also runs on another device; request counts stay modest so all
 * five under all policies finish in well under a minute. Nothing here is tuned to a target
 * number: streams follow the published workload descriptions, devices follow their sheets.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"

#define MB_SECTORS 2048ULL

struct scn_def {
	const char *name;
	const char *desc;
	const char *device;
	const struct elv_sim_published *pub;
	unsigned npub;
	const char *primary;
	int lower_is_better;
	void (*build)(struct elv_sim_config *c, double scale);
	int (*fits)(const struct elv_sim_dev_params *p);
	double (*primary_of)(const struct elv_sim_scn_result *r);
};

static uint64_t align8(uint64_t x)
{
	return x / 8 * 8;
}

static uint64_t scaled(double n, double scale)
{
	double x = floor(n * scale + 0.5);

	return x < 1 ? 1 : (uint64_t)x;
}

static struct elv_sim_stream_spec *add_stream(struct elv_sim_config *c, const char *name,
					      uint32_t kind)
{
	struct elv_sim_stream_spec *s = &c->streams[c->nr_streams++];

	memset(s, 0, sizeof(*s));
	snprintf(s->name, sizeof(s->name), "%s", name);
	s->kind = kind;
	return s;
}

static double prim_makespan(const struct elv_sim_scn_result *r)
{
	return r->run.makespan_s;
}

/* ---- seek-sort ------------------------------------------------------------------------- */

static const struct elv_sim_published pub_seek[] = {
	{ "unsorted (FIFO) mean seek distance", 320000, "sectors", "linux-scsi, March 1997" },
	{ "elevator-sorted mean seek distance", 67000, "sectors", "linux-scsi, March 1997" },
};

static void build_seek(struct elv_sim_config *c, double scale)
{
	uint64_t n = c->dev.capacity < 960000 ? c->dev.capacity : 960000;
	unsigned i;

	for (i = 0; i < 15; i++) {
		char name[16];
		struct elv_sim_stream_spec *s;

		snprintf(name, sizeof(name), "reader%u", i);
		s = add_stream(c, name, ELV_SIM_SYNC_READER);
		s->pattern = ELV_SIM_RANDOM;
		s->region_len = n;
		s->rq_sectors = 1;
		s->count = scaled(1000, scale);
	}
}


/* ---- tcq-depth ------------------------------------------------------------------------- */

static const struct elv_sim_published pub_tcq[] = {
	{ "QD 1 random 512-byte reads, parameter sheet", 71, "ops/s",
	  "device-models.md (Barracuda ST32171W)" },
};

static void build_tcq(struct elv_sim_config *c, double scale)
{
	struct elv_sim_stream_spec *s = add_stream(c, "qd-reader", ELV_SIM_FIXED_QD);

	s->pattern = ELV_SIM_RANDOM;
	s->rq_sectors = 1;
	s->depth = c->dev.queue_depth;
	s->count = scaled(1000, scale);
}

/* The same load from QD processes, each a dependent reader: what per-process policies see. */
static void build_tcq_procs(struct elv_sim_config *c, double scale)
{
	uint32_t i, qd = c->dev.queue_depth;

	for (i = 0; i < qd; i++) {
		char name[16];
		struct elv_sim_stream_spec *s;

		snprintf(name, sizeof(name), "reader%u", i);
		s = add_stream(c, name, ELV_SIM_SYNC_READER);
		s->pattern = ELV_SIM_RANDOM;
		s->rq_sectors = 1;
		s->count = scaled(1000.0 / qd, scale);
	}
}

static int fits_disk(const struct elv_sim_dev_params *p)
{
	return p->kind == ELV_SIM_DEV_DISK;
}

static double prim_tcq(const struct elv_sim_scn_result *r)
{
	return r->nr_curve ? r->curve[r->nr_curve - 1].iops : 0;
}

/* ---- write-bomb ------------------------------------------------------------------------ */

static const struct elv_sim_published pub_wb[] = {
	{ "bulk throughput with a read-preferring elevator (bonnie++ block)", 35, "MB/s",
	  "linux-kernel, May 2003" },
};

/* The file dd rewrites (1000 blocks of 1 MiB) and the turns of the shell loop simulated. */
#define WB_FILE_SECTORS (1000ULL * MB_SECTORS)
#define WB_PASSES 10

static void build_wb(struct elv_sim_config *c, double scale)
{
	uint64_t cap = c->dev.capacity;
	struct elv_sim_stream_spec *w = add_stream(c, "dd", ELV_SIM_WRITER);
	struct elv_sim_stream_spec *r = add_stream(c, "reader", ELV_SIM_SYNC_READER);

	/* dd bs=1M count=1000 conv=notrunc in an endless loop, through the page cache: the
	 * same 1000 MiB file rewritten in place, 128 KiB requests, the 128-request queue kept
	 * full by writeback. WB_PASSES turns of the loop give even noop's reader, which gets
	 * about one read through per 0.7 s, a few hundred reads, so p99 is a percentile and
	 * not the largest sample. */
	w->region_start = align8(cap / 20);
	w->region_len = align8(cap / 4 < WB_FILE_SECTORS ? cap / 4 : WB_FILE_SECTORS);
	w->rq_sectors = 256;
	w->depth = 128;
	w->bytes = scaled(WB_PASSES * 1000.0, scale) * 1048576;
	/* The interactive process: a few dependent 4 KiB reads close together, then the user
	 * thinks for about a second. */
	r->pattern = ELV_SIM_LOCALITY;
	r->region_start = align8(cap / 2);
	r->region_len = align8(cap / 4 < 4096 * MB_SECTORS ? cap / 4 : 4096 * MB_SECTORS);
	r->rq_sectors = 8;
	r->burst = 4;
	r->think_ms = 2;
	r->burst_think_ms = 1000;
	r->exp_think = 1;
	r->background = 1;
}

static double prim_wb(const struct elv_sim_scn_result *r)
{
	return r->run.read_lat.p99;
}

/* ---- stream-vs-small-files ---------------------------------------------------------------- */

static void build_svs(struct elv_sim_config *c, double scale)
{
	uint64_t cap = c->dev.capacity;
	struct elv_sim_stream_spec *st = add_stream(c, "cat-512M", ELV_SIM_STREAMER);
	struct elv_sim_stream_spec *t = add_stream(c, "tree", ELV_SIM_TREE_READER);

	/* cat of a 512 MB file in a loop: 128 KiB readahead, the next window in flight. */
	st->region_start = align8(cap * 2 / 5);
	st->region_len = 512 * MB_SECTORS;
	st->rq_sectors = 256;
	st->depth = 2;
	st->background = 1;
	/* find | xargs cat over a 2.4.19 tree: 13,000 files of 12 KiB on average, about 16
	 * to a directory; directory block, inode block, data; a little CPU between reads. */
	t->region_start = align8(cap / 10);
	t->region_len = align8(cap / 4);
	t->count = scaled(13000, scale);
	t->files_per_dir = 16;
	t->mean_file_kb = 12;
	t->think_ms = 0.2;
}

/* Background streams need time to pass: not on the null device. */
static int fits_timed(const struct elv_sim_dev_params *p)
{
	return p->kind != ELV_SIM_DEV_NULL && p->capacity >= 512 * MB_SECTORS;
}

static int fits_svs(const struct elv_sim_dev_params *p)
{
	return fits_timed(p) && p->capacity >= 4096 * MB_SECTORS;
}


/* ---- postmark-usb --------------------------------------------------------------------- */

static void build_pm(struct elv_sim_config *c, double scale)
{
	struct elv_sim_stream_spec *s = add_stream(c, "postmark", ELV_SIM_POSTMARK);

	/* PostMark 1.51: set size 500 500000, set subdirectories 1000, 500 files, 500
	 * transactions, on VFAT over the whole stick. */
	s->region_len = c->dev.capacity;
	s->files = (uint32_t)scaled(500, scale);
	s->count = scaled(500, scale);
	s->min_size = 500;
	s->max_size = 500000;
	s->burst = 1000;
	s->depth = 128; /* nr_requests: writeback keeps up to a full queue */
	s->think_ms = 0.05;
}

static int fits_any(const struct elv_sim_dev_params *p)
{
	return p->capacity >= 512 * MB_SECTORS;
}

/* ---- classic ---------------------------------------------------------------------------- */

/*
 * The setting of the classic comparisons (Teorey and Pinkerton; Geist and Daniel;
 * Worthington, Ganger and Patt): independent random reads arriving as a Poisson stream,
 * one command at the drive, response time against arrival rate. The rates straddle the
 * drive's FCFS capacity (about 70 reads/s on barracuda), where the algorithms part.
 */
static const double classic_rates[ELV_SIM_MAX_RATES] = { 20, 35, 50, 60, 70, 80, 95, 110 };
/* The headline point: below FCFS saturation, with queues long enough to reorder. */
#define CLASSIC_PRIMARY_RATE 60

static void build_classic(struct elv_sim_config *c, double scale)
{
	(void)c;
	(void)scale; /* run_classic() builds one open-loop trace per rate */
}

static double prim_classic(const struct elv_sim_scn_result *r)
{
	unsigned i;

	for (i = 0; i < r->nr_sweep; i++)
		if (r->sweep[i].rate == CLASSIC_PRIMARY_RATE)
			return r->sweep[i].mean_ms;
	return 0;
}

/* ---- ssd-write-flood ------------------------------------------------------------------- */

static void build_swf(struct elv_sim_config *c, double scale)
{
	uint64_t cap = c->dev.capacity;
	struct elv_sim_stream_spec *w = add_stream(c, "flood", ELV_SIM_WRITER);
	struct elv_sim_stream_spec *r = add_stream(c, "reader", ELV_SIM_SYNC_READER);

	/* Writeback of a large file: 128 KiB asynchronous writes, 128 of them queued (the
	 * request pool), until the reader is done. */
	w->region_start = align8(cap / 2);
	w->region_len = align8(cap / 4);
	w->rq_sectors = 256;
	w->depth = 128;
	w->background = 1;
	/* A latency-sensitive reader: dependent random 4 KiB reads, a millisecond of work
	 * between them. */
	r->pattern = ELV_SIM_RANDOM;
	r->region_start = 0;
	r->region_len = align8(cap / 4);
	r->rq_sectors = 8;
	r->think_ms = 1;
	r->exp_think = 1;
	r->count = scaled(2000, scale);
}

static int fits_ssd(const struct elv_sim_dev_params *p)
{
	return p->kind == ELV_SIM_DEV_SSD && p->capacity >= 512 * MB_SECTORS;
}

/* ---- startup and seq-readers: BFQ's published claims --------------------------------------- */

static const struct elv_sim_published pub_startup[] = {
	{ "BFQ: start-up time under load / on an idle disk", 1, "x",
	  "Documentation/block/bfq-iosched.rst (\"about the same time as if the storage "
	  "device was idle\")" },
};

static const struct elv_sim_published pub_seqr[] = {
	{ "BFQ over CFQ, sequential readers on an HDD (at most)", 30, "%",
	  "Documentation/block/bfq-iosched.rst" },
	{ "BFQ over deadline and noop, same workloads (at most)", 150, "%",
	  "Documentation/block/bfq-iosched.rst" },
};

#define SU_READERS 10
#define SU_START_MS 5000u  /* the program starts once the readers have run 5 s */

/* Ten `cat`s of large files, each with 128 KiB readahead and the next window in flight,
 * each file in its own place over the first half of the disk. */
static void add_seq_readers(struct elv_sim_config *c, uint64_t bytes, uint8_t background)
{
	uint64_t cap = c->dev.capacity;
	unsigned k;

	for (k = 0; k < SU_READERS; k++) {
		char name[16];
		struct elv_sim_stream_spec *s;

		snprintf(name, sizeof(name), "reader%u", k);
		s = add_stream(c, name, ELV_SIM_STREAMER);
		s->region_start = align8(cap / 2 * k / SU_READERS);
		s->region_len = align8(cap / 2 / SU_READERS);
		s->rq_sectors = 256;
		s->depth = 2;
		s->bytes = bytes;
		s->background = background;
	}
}

/* Starting a program: its binary read from one file in 32 KiB reads, each waited for, with a
 * little CPU work between them; 4 MiB in all, in the second half of the disk. */
static void add_app(struct elv_sim_config *c, double scale)
{
	uint64_t cap = c->dev.capacity;
	struct elv_sim_stream_spec *a = add_stream(c, "app", ELV_SIM_SYNC_READER);

	a->pattern = ELV_SIM_SEQUENTIAL;
	a->region_start = align8(cap * 3 / 4);
	a->region_len = 64 * MB_SECTORS;
	a->rq_sectors = 64;
	a->count = scaled(128, scale);
	a->think_ms = 0.2;
	a->start_ms = SU_START_MS;
}

static void build_startup(struct elv_sim_config *c, double scale)
{
	add_seq_readers(c, 0, 1);
	add_app(c, scale);
}

/* The idle-disk reference: the same program with nothing else running. */
static void build_startup_idle(struct elv_sim_config *c, double scale)
{
	add_app(c, scale);
}

/* Seconds from the program's first read to its last completion. */
static double startup_of(const struct elv_sim_result *r)
{
	unsigned i;

	for (i = 0; i < r->nr_streams; i++)
		if (strcmp(r->streams[i].name, "app") == 0 && r->streams[i].requests)
			return r->streams[i].done_s - SU_START_MS / 1000.0;
	return 0;
}

static double prim_startup(const struct elv_sim_scn_result *r)
{
	return startup_of(&r->run);
}

static void build_seqr(struct elv_sim_config *c, double scale)
{
	add_seq_readers(c, scaled(128, scale) * 1048576, 0);
}

/* Aggregate throughput: everything read over the time the last reader took. */
static double prim_seqr(const struct elv_sim_scn_result *r)
{
	return r->run.makespan_s > 0 ? r->run.read_mbps : 0;
}

static int fits_hdd(const struct elv_sim_dev_params *p)
{
	return p->kind == ELV_SIM_DEV_DISK && p->capacity >= 8192 * MB_SECTORS;
}

/* ---- zoned-writers ---------------------------------------------------------------------- */

#define ZW_WRITERS 4

/*
 * Writers filling zones sequentially through the page cache (32 KiB writes, 32 queued each)
 * in zones spread over the device, against a reader of random 4 KiB blocks anywhere. Each
 * writer writes its zone once from the start: a second pass would need a reset first.
 */
static void build_zw(struct elv_sim_config *c, double scale)
{
	const struct elv_sim_zone_params *zp = &c->dev.zone;
	uint64_t nz = c->dev.capacity / zp->zone_sectors, nseq = nz - zp->nr_conv;
	uint64_t bytes = scaled(32.0 * 1048576, scale), cap = zp->zone_capacity * 512;
	struct elv_sim_stream_spec *r;
	unsigned k;

	for (k = 0; k < ZW_WRITERS; k++) {
		char name[16];
		struct elv_sim_stream_spec *w;
		uint64_t zone = zp->nr_conv + (k + 1) * nseq / (ZW_WRITERS + 1);

		snprintf(name, sizeof(name), "writer%u", k);
		w = add_stream(c, name, ELV_SIM_WRITER);
		w->region_start = zone * zp->zone_sectors;
		w->region_len = zp->zone_capacity;
		w->rq_sectors = 64;
		w->depth = 32;
		w->bytes = bytes < cap ? bytes : cap;
	}
	r = add_stream(c, "reader", ELV_SIM_SYNC_READER);
	r->pattern = ELV_SIM_RANDOM;
	r->rq_sectors = 8;
	r->think_ms = 2;
	r->exp_think = 1;
	r->background = 1;
}

static int fits_zoned(const struct elv_sim_dev_params *p)
{
	return elv__zoned_on(p) &&
	       p->capacity / p->zone.zone_sectors >= p->zone.nr_conv + ZW_WRITERS + 1;
}

static double prim_zw(const struct elv_sim_scn_result *r)
{
	return (double)r->run.dev.zone_wp_errors;
}

/* ---- qos ------------------------------------------------------------------------------ */

/*
 * Four clients with different reservations, weights and limits share one device through
 * the QoS stage's mClock; every one keeps 32 random 4 KiB reads outstanding, so all are
 * backlogged and the device runs at capacity. Rates are fractions of the capacity measured
 * without QoS first, so the scenario means the same on any device. Then a throttled client
 * alone: a burst at five times its cap, allowed for as long as its burst bucket lasts, then
 * the cap.
 */
static const struct {
	const char *name;
	double r, w, l; /* reservation and limit as fractions of the capacity; weight */
} qos_clients[4] = {
	{ "reserved", 0.40, 1, 0 },
	{ "weight-1", 0, 1, 0 },
	{ "weight-3", 0, 3, 0 },
	{ "limited", 0.05, 4, 0.15 },
};
#define QOS_SECONDS 4.0       /* allocation run, scale 1 */
#define QOS_BURST_SECONDS 6.0 /* burst run */
#define QOS_BURST_AVG 0.05    /* the throttled client's cap, fraction of the capacity */
#define QOS_BURST_MAX 0.25    /* its burst rate */
#define QOS_BURST_LEN 2       /* seconds of burst at that rate */
#define QOS_BURST_POINTS 30   /* intervals of 200 ms */
/* A foreground reader that only marks time: one 4 KiB read every 100 ms, no QoS. */
#define QOS_TICK_MS 100.0

/* The allocation mClock aims at on capacity @cap: every client max(r, w * x) capped at l,
 * with x such that the shares add up to the capacity (or every client at its limit). */
static void qos_predict(const double *r, const double *w, const double *l, unsigned n,
			double cap, double *out)
{
	double lo = 0, hi = cap, x = 0, sum;
	unsigned i, it;

	for (it = 0; it < 200; it++) {
		x = (lo + hi) / 2;
		sum = 0;
		for (i = 0; i < n; i++) {
			double a = w[i] * x > r[i] ? w[i] * x : r[i];

			sum += l[i] > 0 && a > l[i] ? l[i] : a;
		}
		if (sum > cap)
			hi = x;
		else
			lo = x;
	}
	for (i = 0; i < n; i++) {
		double a = w[i] * lo > r[i] ? w[i] * lo : r[i];

		out[i] = l[i] > 0 && a > l[i] ? l[i] : a;
	}
	(void)x;
}

static void qos_stream(struct elv_sim_config *c, const char *name, unsigned slot)
{
	struct elv_sim_stream_spec *s = add_stream(c, name, ELV_SIM_FIXED_QD);
	uint64_t part = align8(c->dev.capacity / 8);

	s->pattern = ELV_SIM_RANDOM;
	s->rq_sectors = 8;
	s->depth = 32;
	s->region_start = part * slot;
	s->region_len = part;
	s->background = 1;
}

/* The foreground stream that ends the run after about @secs seconds. */
static void qos_tick(struct elv_sim_config *c, double secs)
{
	struct elv_sim_stream_spec *t = add_stream(c, "tick", ELV_SIM_SYNC_READER);
	uint64_t part = align8(c->dev.capacity / 8);

	t->pattern = ELV_SIM_RANDOM;
	t->rq_sectors = 8;
	t->region_start = part * 7;
	t->region_len = part;
	t->think_ms = QOS_TICK_MS;
	t->count = (uint64_t)(secs * 1000.0 / QOS_TICK_MS + 0.5);
}

/* The four clients, with mClock settings from capacity @cap (0: none). */
static void build_qos_with(struct elv_sim_config *c, double scale, double cap)
{
	unsigned i;

	for (i = 0; i < 4; i++) {
		qos_stream(c, qos_clients[i].name, i);
		if (cap > 0) {
			struct elv_mclock_settings *m = &c->streams[i].mclock;

			m->reservation = (uint64_t)(qos_clients[i].r * cap + 0.5);
			m->limit = (uint64_t)(qos_clients[i].l * cap + 0.5);
			m->weight = (uint32_t)qos_clients[i].w;
		}
	}
	c->qos = cap > 0;
	qos_tick(c, QOS_SECONDS * scale);
}

static void build_qos(struct elv_sim_config *c, double scale)
{
	build_qos_with(c, scale, 0);
}

/* Flash: the device's capacity for random reads holds steady, which the allocation is
 * measured against. */
static int fits_qos(const struct elv_sim_dev_params *p)
{
	return p->kind == ELV_SIM_DEV_SSD && p->capacity >= 512 * MB_SECTORS;
}

/* The largest gap between measured and predicted allocation, relative to the prediction. */
static double prim_qos(const struct elv_sim_scn_result *r)
{
	double worst = 0;
	unsigned i;

	for (i = 0; i < r->nr_qos; i++) {
		double p = r->qos[i].predicted_iops;
		double e = p > 0 ? fabs(r->qos[i].measured_iops - p) / p : 0;

		if (e > worst)
			worst = e;
	}
	return worst;
}

static const struct scn_def scns[] = {
	{ "seek-sort", "15 random 512-byte readers over 960,000 sectors: what sorting buys",
	  "barracuda", pub_seek, 2, "time_s", 1, build_seek, fits_any, prim_makespan },
	{ "tcq-depth", "random reads, QD 1..31 outstanding at the drive: drive-side reordering",
	  "barracuda", pub_tcq, 1, "iops_at_qd31", 0, build_tcq, fits_disk, prim_tcq },
	{ "write-bomb", "endless buffered dd writes against an interactive reader",
	  "ide2003", pub_wb, 1, "read_p99_ms", 1, build_wb, fits_timed, prim_wb },
	{ "stream-vs-small-files", "a 512 MB streaming cat against reading a source tree",
	  "ide2003", NULL, 0, "tree_time_s", 1, build_svs, fits_svs, prim_makespan },
	{ "postmark-usb", "PostMark file mix on a VFAT USB stick: flash wants no idling",
	  "usb-stick", NULL, 0, "total_time_s", 1, build_pm, fits_any, prim_makespan },
	{ "classic", "Poisson random reads at 20..110/s, one command at the drive: the classic "
	  "algorithms", "barracuda", NULL, 0, "mean_ms_at_60", 1, build_classic, fits_disk,
	  prim_classic },
	{ "ssd-write-flood", "a flood of buffered writes against a latency-sensitive reader",
	  "ssd", NULL, 0, "read_p99_ms", 1, build_swf, fits_ssd, prim_wb },
	{ "zoned-writers", "four sequential writers in four zones and a random reader, on a "
	  "zoned device", "smr", NULL, 0, "wp_errors", 1, build_zw, fits_zoned, prim_zw },
	{ "startup", "a program starting (4 MiB read in 32 KiB reads) against ten sequential "
	  "readers, and on an idle disk", "ide2003", pub_startup, 1, "startup_s", 1,
	  build_startup, fits_hdd, prim_startup },
	{ "seq-readers", "ten sequential readers of 128 MiB each: aggregate throughput",
	  "ide2003", pub_seqr, 2, "read_MBps", 0, build_seqr, fits_hdd, prim_seqr },
	{ "qos", "four mClock clients (reservation, weights, limit) on one device, and a "
	  "throttled burst", "ssd", NULL, 0, "max_alloc_error", 1, build_qos, fits_qos,
	  prim_qos },
};

#define NR_SCN (sizeof(scns) / sizeof(scns[0]))

unsigned elv_sim_scenario_count(void)
{
	return (unsigned)NR_SCN;
}

const char *elv_sim_scenario_name(unsigned i)
{
	return i < NR_SCN ? scns[i].name : NULL;
}

const char *elv_sim_scenario_desc(unsigned i)
{
	return i < NR_SCN ? scns[i].desc : NULL;
}

const char *elv_sim_scenario_device(unsigned i)
{
	return i < NR_SCN ? scns[i].device : NULL;
}

const struct elv_sim_published *elv_sim_scenario_published(unsigned i, unsigned *nr)
{
	if (nr)
		*nr = i < NR_SCN ? scns[i].npub : 0;
	return i < NR_SCN ? scns[i].pub : NULL;
}

int elv_sim_scenario_find(const char *name)
{
	unsigned i;

	for (i = 0; name && i < NR_SCN; i++)
		if (strcmp(scns[i].name, name) == 0)
			return (int)i;
	return -1;
}

/* A host-managed zoned device fails every write off a write pointer: only the scenarios
 * written for zones run on it. */
static int fits(const struct scn_def *sd, const struct elv_sim_dev_params *p)
{
	return sd->fits(p) && (sd->fits == fits_zoned || !elv__zoned_on(p));
}

int elv_sim_scenario_fits(unsigned i, const struct elv_sim_dev_params *p)
{
	return i < NR_SCN && p && fits(&scns[i], p);
}

/* The QD 1 rate the parameter set predicts: overhead + mean seek + half a turn + transfer. */
static double predict_qd1(const struct elv_sim_dev_params *p)
{
	const struct elv_sim_disk_params *dp = &p->disk;
	struct elv_sim_dev *d;
	struct elv_sim_rng r;
	double seek = 0, xfer = 0;
	unsigned i, n = 20000;

	if (p->kind != ELV_SIM_DEV_DISK || elv_sim_dev_create(&d, p))
		return 0;
	elv_sim_rng_seed(&r, 12345);
	for (i = 0; i < n; i++) {
		uint32_t c1, c2, h, s, spt;

		elv_sim_disk_locate(d, elv_sim_rng_below(&r, p->capacity), &c1, &h, &s, &spt);
		elv_sim_disk_locate(d, elv_sim_rng_below(&r, p->capacity), &c2, &h, &s, &spt);
		seek += elv_sim_disk_seek_ms(dp, d->cylinders, c1 > c2 ? c1 - c2 : c2 - c1);
		xfer += 60000.0 / dp->rpm / spt;
	}
	elv_sim_dev_destroy(d);
	return 1000.0 / (dp->ovh_read_miss + seek / n + 30000.0 / dp->rpm + xfer / n +
			 dp->bus_per_sector);
}

struct prog {
	const struct elv_sim_scn_opts *o;
	double base;
	double span;
};

static void prog_cb(void *ctx, double f)
{
	struct prog *p = ctx;

	if (p->o->progress)
		p->o->progress(p->o->progress_ctx, p->base + p->span * f);
}

static void base_config(struct elv_sim_config *c, const struct elv_sim_dev_params *dev,
			const struct elv_sim_scn_opts *o, const struct elv_policy *pol)
{
	memset(c, 0, sizeof(*c));
	c->dev = *dev;
	c->policy = pol;
	c->trace = o->trace;
	c->trace_ctx = o->trace_ctx;
	c->seed = o->seed;
	c->nr_sets = o->nr_sets;
	memcpy(c->sets, o->sets, sizeof(c->sets));
	c->time_limit_ns = o->time_limit_ns;
	c->nr_pct = o->nr_pct;
	memcpy(c->pct, o->pct, sizeof(c->pct));
	c->no_zone_stage = o->no_zone_stage;
}

static int run_tcq(const struct elv_sim_dev_params *dev, const struct elv_policy *pol,
		   const struct elv_sim_scn_opts *o, struct elv_sim_scn_result *sr,
		   struct prog *pg, double scale)
{
	static const uint8_t order[3] = { ELV_SIM_DRIVE_FCFS, ELV_SIM_DRIVE_SSTF,
					  ELV_SIM_DRIVE_SPTF };
	struct elv_sim_config *c = malloc(sizeof(*c));
	double base = pg->base, span = pg->span;
	unsigned k, qd;
	int r = 0;

	if (!c)
		return ELV_ENOMEM;
	for (k = 0; k < 4 && !r; k++) {
		for (qd = 1; qd <= ELV_SIM_MAX_QD && !r; qd++) {
			struct elv_sim_result res;
			struct elv_sim_qd_point *pt;

			base_config(c, dev, o, pol);
			c->dev.queue_depth = (uint16_t)qd;
			c->dev.drive_sched = order[k < 3 ? k : 2];
			/* An ordered tag every two seconds keeps the far requests from starving. */
			if (c->dev.ordered_tag_ms <= 0)
				c->dev.ordered_tag_ms = 2000;
			if (k < 3)
				build_tcq(c, scale);
			else
				build_tcq_procs(c, scale);
			pg->base = base + span * (k * ELV_SIM_MAX_QD + qd - 1) /
				   (4.0 * ELV_SIM_MAX_QD);
			pg->span = span / (4.0 * ELV_SIM_MAX_QD);
			c->progress = o->progress ? prog_cb : NULL;
			c->progress_ctx = pg;
			r = elv_sim_run(c, &res);
			if (r)
				break;
			pt = k == 0 ? sr->curve_fcfs : k == 1 ? sr->curve_sstf :
			     k == 2 ? sr->curve_sptf : sr->curve_procs;
			pt[qd - 1].qd = qd;
			pt[qd - 1].iops = res.makespan_s > 0 ? (double)res.requests /
					  res.makespan_s : 0;
			if (k == 2 && qd == ELV_SIM_MAX_QD) {
				sr->run = res;
			} else {
				elv_sim_result_free(&res);
			}
		}
	}
	sr->nr_curve = ELV_SIM_MAX_QD;
	memcpy(sr->curve, sr->curve_sptf, sizeof(sr->curve));
	free(c);
	return r;
}

/* Poisson arrivals of 512-byte reads uniform over the device, @n of them at @rate per s. */
static void classic_trace(struct elv_sim_replay_rec *rec, size_t n, double rate,
			  uint64_t capacity, uint64_t seed)
{
	struct elv_sim_rng g;
	double t = 0;
	size_t i;

	elv_sim_rng_seed(&g, seed);
	for (i = 0; i < n; i++) {
		t += elv_sim_rng_exp(&g, 1e9 / rate);
		memset(&rec[i], 0, sizeof(rec[i]));
		rec[i].time_ns = (uint64_t)t;
		rec[i].sector = elv_sim_rng_below(&g, capacity);
		rec[i].nr_sectors = 1;
		rec[i].op = ELV_OP_READ;
		rec[i].sync = 1;
		rec[i].pid = (uint32_t)(i % 16); /* 16 processes, requests independent */
	}
}

/* Mean, squared coefficient of variation, p99 and max of the sorted samples. */
static void classic_point(struct elv_sim_rate_point *pt, const struct elv_sim_result *res)
{
	const double *v = res->read_samples_ms;
	size_t i, n = res->nr_read_samples;
	double sum = 0, sq = 0, mean;

	for (i = 0; i < n; i++)
		sum += v[i];
	mean = n ? sum / (double)n : 0;
	for (i = 0; i < n; i++)
		sq += (v[i] - mean) * (v[i] - mean);
	pt->mean_ms = mean;
	pt->scv = n > 1 && mean > 0 ? sq / (double)(n - 1) / (mean * mean) : 0;
	pt->p99_ms = res->read_lat.p99;
	pt->max_ms = res->read_lat.max;
	pt->iops = res->makespan_s > 0 ? (double)res->requests / res->makespan_s : 0;
}

static int run_classic(const struct elv_sim_dev_params *dev, const struct elv_policy *pol,
		       const struct elv_sim_scn_opts *o, struct elv_sim_scn_result *sr,
		       struct prog *pg, double scale)
{
	size_t n = (size_t)scaled(2000, scale);
	struct elv_sim_config *c = malloc(sizeof(*c));
	struct elv_sim_replay_rec *rec = malloc(n * sizeof(*rec));
	double base = pg->base, span = pg->span;
	unsigned k;
	int r = 0;

	if (!c || !rec) {
		free(c);
		free(rec);
		return ELV_ENOMEM;
	}
	for (k = 0; k < ELV_SIM_MAX_RATES && !r; k++) {
		struct elv_sim_result res;

		base_config(c, dev, o, pol);
		/* The same arrivals for every policy at a rate: a paired comparison. */
		classic_trace(rec, n, classic_rates[k], dev->capacity, o->seed * 1000 + k);
		c->replay = rec;
		c->nr_replay = n;
		c->dev.queue_depth = 1; /* one command at the drive, as in the classic studies */
		pg->base = base + span * k / ELV_SIM_MAX_RATES;
		pg->span = span / ELV_SIM_MAX_RATES;
		c->progress = o->progress ? prog_cb : NULL;
		c->progress_ctx = pg;
		r = elv_sim_run(c, &res);
		if (r)
			break;
		sr->sweep[k].rate = classic_rates[k];
		classic_point(&sr->sweep[k], &res);
		sr->nr_sweep = k + 1;
		if (classic_rates[k] == CLASSIC_PRIMARY_RATE) {
			elv_sim_result_free(&sr->run);
			sr->run = res;
		} else {
			elv_sim_result_free(&res);
		}
	}
	free(rec);
	free(c);
	return r;
}

/* The program under load, then alone: sr->run is the loaded run, sr->reference the idle one. */
static int run_startup(const struct elv_sim_dev_params *dev, const struct elv_policy *pol,
		       const struct elv_sim_scn_opts *o, struct elv_sim_scn_result *sr,
		       struct prog *pg, double scale)
{
	struct elv_sim_config *c = malloc(sizeof(*c));
	struct elv_sim_result idle;
	double base = pg->base, span = pg->span;
	int r;

	if (!c)
		return ELV_ENOMEM;
	base_config(c, dev, o, pol);
	build_startup(c, scale);
	pg->span = span * 0.9;
	c->progress = o->progress ? prog_cb : NULL;
	c->progress_ctx = pg;
	r = elv_sim_run(c, &sr->run);
	if (!r && !sr->run.error) {
		base_config(c, dev, o, pol);
		build_startup_idle(c, scale);
		pg->base = base + span * 0.9;
		pg->span = span * 0.1;
		c->progress = o->progress ? prog_cb : NULL;
		c->progress_ctx = pg;
		r = elv_sim_run(c, &idle);
		if (!r) {
			if (idle.error)
				r = idle.error;
			else
				sr->reference = startup_of(&idle);
			elv_sim_result_free(&idle);
		}
	}
	free(c);
	return r;
}

/* Completions of the burst client per interval, from the command trace. */
struct qos_trace {
	uint64_t lo, hi;  /* its sectors */
	uint64_t step_ns;
	uint64_t count[ELV_SIM_MAX_BURST];
	const struct elv_sim_scn_opts *o;
};

static void qos_trace_cb(void *ctx, char ev, uint64_t now, const struct elv_sim_io *io)
{
	struct qos_trace *t = ctx;
	uint64_t k = now / t->step_ns;

	if (t->o->trace)
		t->o->trace(t->o->trace_ctx, ev, now, io);
	if (ev == 'C' && io->sector >= t->lo && io->sector < t->hi && k < ELV_SIM_MAX_BURST)
		t->count[k]++;
}

/* Units the throttle lets through by time t > 0 under continuous demand: a tenth of a
 * second's worth of the burst rate at once (the fresh meter's allowance), then the burst
 * rate until the bucket of max * length units is full (it fills at max - avg), then avg. */
static double qos_burst_admitted(double t, double avg, double max, double len)
{
	double tb = max > avg ? (max * len - max / 10) / (max - avg) : 0;

	return max / 10 + (t < tb ? t : tb) * max + (t > tb ? t - tb : 0) * avg;
}

/* What the throttle lets through in [a, b) on average, per second. */
static double qos_burst_cap(double a, double b, double avg, double max, double len)
{
	double before = a > 0 ? qos_burst_admitted(a, avg, max, len) : 0;

	return (qos_burst_admitted(b, avg, max, len) - before) / (b - a);
}

static int run_qos(const struct elv_sim_dev_params *dev, const struct elv_policy *pol,
		   const struct elv_sim_scn_opts *o, struct elv_sim_scn_result *sr,
		   struct prog *pg, double scale)
{
	struct elv_sim_config *c = malloc(sizeof(*c));
	struct elv_sim_result cal, burst;
	struct qos_trace tr;
	double base = pg->base, span = pg->span, cap = 0, total = 0, secs;
	double rr[4], ww[4], ll[4], pred[4];
	struct elv_throttle_limit *lim;
	unsigned i;
	int r;

	if (!c)
		return ELV_ENOMEM;
	memset(&cal, 0, sizeof(cal));
	memset(&burst, 0, sizeof(burst));
	/* 1. The device's capacity for this load, without QoS. */
	base_config(c, dev, o, pol);
	build_qos_with(c, scale, 0);
	pg->span = span / 3;
	c->progress = o->progress ? prog_cb : NULL;
	c->progress_ctx = pg;
	r = elv_sim_run(c, &cal);
	if (!r && cal.error)
		r = cal.error;
	if (!r) {
		for (i = 0; i < 4; i++)
			cap += (double)cal.streams[i].requests;
		cap = cal.makespan_s > 0 ? cap / cal.makespan_s : 0;
		r = cap > 0 ? 0 : ELV_EINVAL;
	}
	elv_sim_result_free(&cal);
	/* 2. The four mClock clients. */
	if (!r) {
		base_config(c, dev, o, pol);
		build_qos_with(c, scale, cap);
		pg->base = base + span / 3;
		r = elv_sim_run(c, &sr->run);
		if (!r && sr->run.error)
			r = sr->run.error;
	}
	if (!r) {
		secs = sr->run.makespan_s;
		sr->nr_qos = 4;
		for (i = 0; i < 4; i++) {
			struct elv_sim_qos_client *q = &sr->qos[i];

			snprintf(q->name, sizeof(q->name), "%s", qos_clients[i].name);
			q->reservation = rr[i] = (double)c->streams[i].mclock.reservation;
			q->weight = ww[i] = (double)c->streams[i].mclock.weight;
			q->limit = ll[i] = (double)c->streams[i].mclock.limit;
			q->measured_iops = secs > 0 ? (double)sr->run.streams[i].requests / secs : 0;
			total += q->measured_iops;
		}
		/* Predicted on the capacity the device delivered under QoS. */
		sr->qos_capacity = total;
		qos_predict(rr, ww, ll, 4, total, pred);
		for (i = 0; i < 4; i++)
			sr->qos[i].predicted_iops = pred[i];
	}
	/* 3. A throttled client alone: burst, then the cap. */
	if (!r) {
		base_config(c, dev, o, pol);
		qos_stream(c, "burst", 0);
		c->streams[0].depth = 8;
		lim = &c->streams[0].throttle.limit[ELV_THROTTLE_IOPS_TOTAL];
		lim->avg = (uint64_t)(QOS_BURST_AVG * cap + 0.5);
		lim->max = (uint64_t)(QOS_BURST_MAX * cap + 0.5);
		lim->max_length = QOS_BURST_LEN;
		c->qos = 1;
		qos_tick(c, QOS_BURST_SECONDS);
		memset(&tr, 0, sizeof(tr));
		tr.lo = c->streams[0].region_start;
		tr.hi = tr.lo + c->streams[0].region_len;
		/* Intervals a multiple of the 100 ms the meter's smoothing releases in. */
		tr.step_ns = (uint64_t)(QOS_BURST_SECONDS * 1e9 / QOS_BURST_POINTS);
		tr.o = o;
		c->trace = qos_trace_cb;
		c->trace_ctx = &tr;
		pg->base = base + span * 2 / 3;
		r = elv_sim_run(c, &burst);
		if (!r && burst.error)
			r = burst.error;
		for (i = 0; !r && i < QOS_BURST_POINTS; i++) {
			struct elv_sim_burst_point *bp = &sr->burst[i];
			double a = (double)(i * tr.step_ns) / 1e9, b = a + (double)tr.step_ns / 1e9;

			bp->t_s = a;
			bp->iops = (double)tr.count[i] / (b - a);
			bp->cap = qos_burst_cap(a, b, (double)lim->avg, (double)lim->max,
						QOS_BURST_LEN);
			sr->nr_burst = i + 1;
		}
		elv_sim_result_free(&burst);
	}
	pg->base = base;
	pg->span = span;
	free(c);
	return r;
}

int elv_sim_scenario_run(unsigned i, const struct elv_policy *const *policies, unsigned nr,
			 const struct elv_sim_scn_opts *o, struct elv_sim_report *rep)
{
	const struct scn_def *sd;
	struct elv_sim_dev_params dev;
	struct elv_sim_config *c;
	double scale;
	unsigned k;
	int r = 0;

	if (i >= NR_SCN || !policies || !nr || !o || !rep)
		return ELV_EINVAL;
	sd = &scns[i];
	memset(rep, 0, sizeof(*rep));
	if (o->dev)
		dev = *o->dev;
	else if ((r = elv_sim_preset(sd->device, &dev)) != 0)
		return r;
	if (elv_sim_param_finish(&dev) || !fits(sd, &dev))
		return ELV_EINVAL;
	scale = o->scale > 0 ? o->scale : 1.0;
	rep->scenario = sd->name;
	snprintf(rep->device, sizeof(rep->device), "%s", dev.name);
	rep->seed = o->seed;
	rep->primary_name = sd->primary;
	rep->lower_is_better = sd->lower_is_better;
	if (strcmp(sd->name, "tcq-depth") == 0)
		rep->expect_qd1_iops = predict_qd1(&dev);
	rep->res = calloc(nr, sizeof(*rep->res));
	c = malloc(sizeof(*c));
	if (!rep->res || !c) {
		free(c);
		return ELV_ENOMEM;
	}
	rep->nr = nr;
	for (k = 0; k < nr && !r; k++) {
		struct elv_sim_scn_result *sr = &rep->res[k];
		struct prog pg = { o, (double)k / nr, 1.0 / nr };

		if (sd->build == build_tcq) {
			r = run_tcq(&dev, policies[k], o, sr, &pg, scale);
		} else if (sd->build == build_classic) {
			r = run_classic(&dev, policies[k], o, sr, &pg, scale);
		} else if (sd->build == build_startup) {
			r = run_startup(&dev, policies[k], o, sr, &pg, scale);
		} else if (sd->build == build_qos) {
			r = run_qos(&dev, policies[k], o, sr, &pg, scale);
		} else {
			base_config(c, &dev, o, policies[k]);
			sd->build(c, scale);
			c->progress = o->progress ? prog_cb : NULL;
			c->progress_ctx = &pg;
			r = elv_sim_run(c, &sr->run);
		}
		if (!r && sr->run.error)
			r = sr->run.error;
		sr->primary = sd->primary_of(sr);
	}
	free(c);
	return r;
}

void elv_sim_report_free(struct elv_sim_report *rep)
{
	unsigned k;

	if (!rep || !rep->res)
		return;
	for (k = 0; k < rep->nr; k++)
		elv_sim_result_free(&rep->res[k].run);
	free(rep->res);
	rep->res = NULL;
	rep->nr = 0;
}
