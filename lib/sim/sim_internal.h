/*
 * Private pieces of libelevator-sim shared by its sources: the device object and the disk and
 * flash model entry points. Never installed.
 */
#ifndef ELV_SIM_INTERNAL_H
#define ELV_SIM_INTERNAL_H

#ifndef ELV_ALLOW_PRIVATE_ACCESS
#define ELV_ALLOW_PRIVATE_ACCESS
#endif

#include <stddef.h>
#include <stdint.h>

#include "elevator/policy.h"
#include "elevator/sim.h"

/* Geometry of one zone, derived from the parameter set. */
struct elv__zgeo {
	uint64_t first_lbn;
	uint64_t nr_lbn;
	uint32_t first_cyl;
	uint32_t cyls;
	uint32_t spt;
	uint32_t hskew;       /* sectors the next track on the same cylinder is shifted by */
	uint32_t cskew;       /* sectors the next cylinder's first track is shifted by */
	double sector_ns;     /* one sector passing under the head */
	double stream_ns;     /* per sector over a long transfer, switches included */
};

/* One read cache segment: sectors [lo, hi); while prefetching, hi grows with time. */
struct elv__seg {
	uint64_t lo;
	uint64_t hi;
	uint64_t lru;
	uint8_t pf;           /* prefetch running (only the segment last read by the media) */
	double pf_t0;         /* prefetch position was pf_lbn0 at this time (ns) */
	uint64_t pf_lbn0;
	uint64_t pf_lim;      /* prefetch stops here */
};

/* A run of dirty sectors in the write-back buffer. */
struct elv__extent {
	uint64_t lo;
	uint32_t n;
};

/* Log block of the hybrid FTL. */
struct elv__logblk {
	int64_t lblk;         /* logical block it logs, or -1 when free */
	uint32_t next;        /* next free page */
	uint8_t seq;          /* page i holds logical page i for every i < next */
	uint64_t lru;
};

/* One write zone of a zoned device. */
struct elv__wzone {
	uint64_t wp;          /* sectors written from the zone start */
	uint64_t last;        /* write sequence of its latest write (implicit close picks LRU) */
	uint8_t cond;         /* enum elv_sim_zone_cond */
};

struct elv_sim_dev {
	struct elv_sim_dev_params p;
	unsigned depth;
	struct elv_sim_io **wait;   /* commands held and not started */
	unsigned nwait;
	struct elv_sim_io *cur;     /* command in service */
	uint64_t seq;
	uint64_t next_ordered_ns;
	struct elv_sim_dev_stats st;

	/* disk */
	double trev_ns;
	uint32_t nzones;
	uint32_t cylinders;
	struct elv__zgeo zg[ELV_SIM_MAX_ZONES];
	uint32_t head_cyl;
	uint32_t head_head;
	uint64_t head_lbn;
	struct elv__seg *segs;
	int active;                 /* segment prefetching or last read, or -1 */
	uint64_t lru_clock;
	/* write-back buffer: dirty extents in arrival order, written back while the arm is free */
	struct elv__extent *dirty;
	uint32_t dirty_head;
	uint32_t dirty_n;
	uint32_t dirty_cap;
	uint64_t dirty_sectors;
	uint64_t run_end;           /* sector after the last write taken into the buffer */
	double mech_free;           /* the arm is free from this time on (ns) */

	/* flash */
	uint64_t nr_lpages;         /* logical pages */
	uint64_t nr_lblocks;        /* logical blocks */
	/* SSD page map */
	uint32_t *l2p;              /* logical page -> physical page, UINT32_MAX unmapped */
	uint32_t *p2l;              /* physical page -> logical page, UINT32_MAX invalid */
	uint32_t *valid;            /* valid pages per physical block */
	uint8_t *state;             /* 0 free, 1 active, 2 full */
	uint32_t nr_pblocks;
	uint32_t nr_free;
	uint32_t active_blk;
	uint32_t active_next;
	/* USB log blocks */
	struct elv__logblk *logs;

	/* write zones (zoned.c) */
	struct elv__wzone *wz;      /* NULL when the device enforces no zone rules */
	uint32_t nr_wz;
	uint32_t nr_open;
	uint32_t nr_active;
	uint64_t wseq;
	struct elv_sim_rng zrng;    /* the order an unordered ZNS device serves commands in */
};

/* Disk model (disk.c). */
int elv__disk_init(struct elv_sim_dev *d);
void elv__disk_exit(struct elv_sim_dev *d);
/* Serve io from time ts; with commit 0 only estimate. Returns completion time in ns;
 * *pos gets the positioning time (overhead, seek, rotational wait). */
double elv__disk_serve(struct elv_sim_dev *d, struct elv_sim_io *io, double ts, int commit,
		       double *pos);
/* Positioning time (ns) the device would need for rq issued at now, from its current state
 * (the elv_config::position_time estimate the engine gives the policies of disks). */
uint64_t elv__dev_position_ns(struct elv_sim_dev *d, const struct elv_request *rq, uint64_t now);
/* Cylinder the head would be on if a command started at ts. */
uint32_t elv__disk_head_cyl(const struct elv_sim_dev *d, double ts);
int elv__disk_locate(const struct elv_sim_dev *d, uint64_t lbn, uint32_t *zone, uint32_t *cyl,
		     uint32_t *head, uint32_t *sect);

/* Flash models (flash.c). */
int elv__flash_init(struct elv_sim_dev *d);
void elv__flash_exit(struct elv_sim_dev *d);
double elv__flash_serve(struct elv_sim_dev *d, struct elv_sim_io *io, double ts);

/* Zoned devices (zoned.c). Zone commands a host sends as a request's op. */
enum { ELV__ZCMD_NONE = 0, ELV__ZCMD_RESET, ELV__ZCMD_FINISH };
int elv__zone_cmd(uint8_t op);
int elv__zoned_on(const struct elv_sim_dev_params *p);
int elv__zoned_finish(struct elv_sim_dev_params *p);
int elv__zoned_init(struct elv_sim_dev *d);
void elv__zoned_exit(struct elv_sim_dev *d);
/* At service start: apply the zone rules to io. Returns 1 when the command is settled here
 * (failed, or a zone command) with its completion time in *done; 0 to serve it as usual. */
int elv__zoned_start(struct elv_sim_dev *d, struct elv_sim_io *io, double ts, double *done);
double elv__zns_serve(struct elv_sim_dev *d, struct elv_sim_io *io, double ts);
/* Order cost of a waiting command on a zoned device, or -1 for the usual drive order. */
double elv__zoned_pick_cost(struct elv_sim_dev *d, const struct elv_sim_io *io);

/* ---- workloads (workload.c) and the engine (engine.c) ------------------------------------- */

/* Stream kind used internally for trace replay (one stream per process). */
#define ELV__REPLAY 100

/* What a stream wants to issue next. */
struct elv__desc {
	uint64_t sector;
	uint32_t nr;
	uint8_t op;
	uint8_t flags;
};

enum { ELV__GEN_REQ, ELV__GEN_WAIT, ELV__GEN_SLEEP, ELV__GEN_DONE };

struct elv__vec {
	double *v;
	size_t n;
	size_t cap;
};

struct elv__stream {
	struct elv_sim_stream_spec sp;
	struct elv_stream es;
	struct elv_stream es_wb;    /* writeback thread issuing this stream's buffered writes */
	uint8_t has_wb;
	struct elv_sim_rng rng;
	uint32_t idx;
	uint32_t inflight;
	uint32_t inflight_wr;
	uint32_t inflight_sync;
	uint64_t issued;
	uint64_t completed;
	uint64_t bytes;
	uint64_t done_ns;
	uint8_t finished;       /* generator said DONE */
	uint8_t registered;
	struct elv_qos_client qc[2]; /* QoS clients of es and es_wb (elv_sim_config::qos) */
	uint64_t wake_at;       /* pending wake-up event, or ELV_TIME_NEVER */
	struct elv__vec rlat;
	struct elv__vec wlat;
	/* generator state */
	uint64_t pos;
	uint64_t left;
	uint64_t next_at;
	uint32_t burst_left;
	uint64_t units_total;
	uint64_t units_done;
	void *priv;
};

int elv__vec_push(struct elv__vec *v, double x);
void elv__vec_free(struct elv__vec *v);

int elv__gen_init(struct elv__stream *s, uint64_t capacity);
/* Next action at now: a request in *d, a wake-up time in *wake, wait, or done. */
int elv__gen_next(struct elv__stream *s, uint64_t now, struct elv__desc *d, uint64_t *wake);
/* One of the stream's requests completed at now. */
void elv__gen_complete(struct elv__stream *s, const struct elv__desc *d, uint64_t now);
void elv__gen_exit(struct elv__stream *s);
/* Replay: give stream s the records idx[0..n) of recs. */
int elv__gen_replay(struct elv__stream *s, const struct elv_sim_replay_rec *recs,
		    uint32_t *idx, size_t n, int closed, uint64_t capacity);

/* Sort v and summarise it, with the chosen percentiles pct[0..npct) (engine.c). */
void elv__lat_summary(double *v, size_t n, const double *pct, unsigned npct,
		      struct elv_sim_lat *out);
/* Replay records a stream has not issued yet (0 for other kinds). */
uint64_t elv__gen_unissued(const struct elv__stream *s);

#endif /* ELV_SIM_INTERNAL_H */
