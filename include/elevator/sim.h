/**
 * @file sim.h
 * @brief libelevator-sim: a deterministic discrete-event harness for scheduling research.
 *
 * The simulator drives a real struct elv_queue exactly as a host driver does (add, dispatch
 * while the device has free slots, complete, requeue, a timer at elv_next_event()) against a
 * device model (rotating disk, page-mapped SSD, log-block USB stick, null device) under
 * closed-loop workload streams. Time is simulated in nanoseconds; the same seed gives the
 * same results bit for bit. Hosted code: it uses malloc, stdio and libm.
 */
#ifndef ELEVATOR_SIM_H
#define ELEVATOR_SIM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "elevator/elevator.h"
#include "elevator/qos.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @defgroup elv_sim Research harness
 * @{
 */

/* ---- random numbers ------------------------------------------------------------------ */

/** @brief xoshiro256** generator state, seeded through splitmix64. */
struct elv_sim_rng {
	uint64_t s[4]; /**< State words; never all zero. */
};

/** @brief Seed a generator; equal seeds give equal sequences on every platform. */
ELV_API void elv_sim_rng_seed(struct elv_sim_rng *r, uint64_t seed);
/** @brief Next 64 random bits. */
ELV_API uint64_t elv_sim_rng_next(struct elv_sim_rng *r);
/** @brief Uniform integer in [0, n) without modulo bias (0 when @p n is 0). */
ELV_API uint64_t elv_sim_rng_below(struct elv_sim_rng *r, uint64_t n);
/** @brief Uniform double in [0, 1). */
ELV_API double elv_sim_rng_unit(struct elv_sim_rng *r);
/** @brief Exponentially distributed double with the given mean. */
ELV_API double elv_sim_rng_exp(struct elv_sim_rng *r, double mean);

/* ---- device parameters --------------------------------------------------------------- */

/** @brief Most zones a disk parameter set may have. */
#define ELV_SIM_MAX_ZONES 64
/** @brief Most points of a tabulated seek curve. */
#define ELV_SIM_MAX_SEEK_POINTS 32

/** @brief Kinds of device model. */
enum elv_sim_dev_kind {
	ELV_SIM_DEV_NULL = 0, /**< Completes everything at once (pure CPU runs). */
	ELV_SIM_DEV_DISK = 1, /**< Rotating disk. */
	ELV_SIM_DEV_SSD = 2,  /**< Flash with a page-mapped FTL. */
	ELV_SIM_DEV_USB = 3   /**< Flash stick with a log-block (hybrid) FTL. */
};

/** @brief Seek curve shapes of a disk. */
enum elv_sim_seek_kind {
	ELV_SIM_SEEK_TWO_PIECE = 0, /**< a + b*sqrt(d) below the boundary, c + e*d from it. */
	ELV_SIM_SEEK_SQRT = 1,      /**< t1 + (full - t1) * sqrt(d / cylinders). */
	ELV_SIM_SEEK_TABLE = 2      /**< Measured (distance, ms) points, linear in between. */
};

/** @brief Ordering the device applies to the commands it holds. */
enum elv_sim_drive_sched {
	ELV_SIM_DRIVE_FCFS = 0, /**< Arrival order. */
	ELV_SIM_DRIVE_SSTF = 1, /**< Shortest seek (cylinder distance) first. */
	ELV_SIM_DRIVE_SPTF = 2  /**< Shortest positioning time (seek + rotation) first. */
};

/** @brief One recording zone: a run of cylinders with the same sectors per track. */
struct elv_sim_zone {
	uint32_t cylinders; /**< Cylinders in the zone. */
	uint32_t spt;       /**< Sectors per track. */
};

/** @brief Parameters of a rotating disk (times in ms unless named otherwise). */
struct elv_sim_disk_params {
	double rpm;                   /**< Spindle speed. */
	uint32_t surfaces;            /**< Heads (tracks per cylinder). */
	uint32_t nr_zones;            /**< Zones used in @c zones, outermost first. */
	struct elv_sim_zone zones[ELV_SIM_MAX_ZONES]; /**< Zone table. */
	uint32_t seek_kind;           /**< enum elv_sim_seek_kind. */
	double seek_a;                /**< Short-seek constant (ms). */
	double seek_b;                /**< Short-seek multiplier of sqrt(distance). */
	double seek_c;                /**< Long-seek constant (ms). */
	double seek_e;                /**< Long-seek multiplier per cylinder. */
	uint32_t seek_boundary;       /**< First distance (cylinders) on the linear piece. */
	double seek_t1;               /**< Single-cylinder seek time, ms (SQRT kind). */
	double seek_full;             /**< Full-stroke seek time, ms (SQRT kind). */
	uint32_t nr_seek_points;      /**< Points used in the table (TABLE kind). */
	uint32_t seek_dist[ELV_SIM_MAX_SEEK_POINTS]; /**< Table distances, increasing. */
	double seek_ms[ELV_SIM_MAX_SEEK_POINTS];     /**< Table times. */
	double head_switch;           /**< Head switch inside a cylinder. */
	double cyl_switch;            /**< Switch to the next cylinder in a transfer. */
	double write_settle;          /**< Extra settle time before writing. */
	double ovh_read_miss;         /**< Command overhead of a read served by the media. */
	double ovh_read_hit;          /**< Command overhead of a read served from the cache. */
	double ovh_write;             /**< Command overhead of a write. */
	double bus_per_sector;        /**< Interface time per sector (overlapped with media). */
	uint32_t cache_segments;      /**< Read cache segments (0 disables the cache). */
	uint32_t segment_sectors;     /**< Size of one segment. */
	uint32_t readahead_max;       /**< Most sectors prefetched past a request. */
	uint32_t write_buffer;        /**< Write-back buffer in sectors (0: write-through). */
};

/** @brief Parameters of a flash device (times in microseconds). */
struct elv_sim_flash_params {
	uint32_t page_sectors;    /**< Flash page size in sectors. */
	uint32_t pages_per_block; /**< Pages per erase block. */
	uint32_t log_blocks;      /**< Open log blocks of the hybrid FTL (USB). */
	uint32_t ways;            /**< Pages served in parallel inside one command (SSD). */
	double spare;             /**< Over-provisioned fraction of physical blocks (SSD). */
	double gc_free;           /**< Collect garbage below this fraction of free blocks (SSD). */
	double read_us;           /**< Page read (array to register). */
	double prog_us;           /**< Page program. */
	double erase_us;          /**< Block erase. */
	double xfer_us;           /**< Moving one page over the channel and interface. */
	double cmd_us;            /**< Per-command overhead (protocol, firmware). */
};

/**
 * @brief Write zones of a zoned device: a host-managed SMR disk (kind DISK) or a ZNS SSD
 *        (kind SSD), with elv_sim_dev_params::zoned set and @c zone_sectors non-zero.
 *
 * The device is cut into zones of @c zone_sectors from sector 0 (a tail shorter than a zone
 * is not used: the capacity is rounded down). The first @c nr_conv zones are conventional
 * (written anywhere); every other zone must be written sequentially at its write pointer.
 * elv_sim_param_finish() and elv_sim_dev_create() return ELV_EINVAL when the zone size is
 * not a power of two from 8 to 2^31 sectors (what the zone stage takes), the capacity is
 * above the zone size, max_open is above a non-zero max_active, every zone would be
 * conventional or the device holds no whole zone, a ZNS zone or its capacity is not whole
 * erase blocks, @c ordered is not 0 or 1, or the geometry is set on a model that cannot
 * enforce it (the USB stick, the null device).
 */
struct elv_sim_zone_params {
	uint64_t zone_sectors;  /**< Zone size in sectors. */
	uint64_t zone_capacity; /**< Writable sectors from each zone's start (0: the zone size). */
	uint32_t nr_conv;       /**< Conventional zones at the start of the device. */
	uint32_t max_open;      /**< Most zones open at once (0: no limit). */
	uint32_t max_active;    /**< Most zones open or closed at once (0: no limit). */
	/** 1: the device serves commands in arrival order, so a host may keep several writes
	 *  to one zone in flight; 0: it reorders them (SPTF on a disk, any order on ZNS). */
	uint8_t ordered;
	uint8_t pad[3];         /**< Zero. */
};

/** @brief Conditions of a write zone (elv_sim_dev_zone_report()). */
enum elv_sim_zone_cond {
	ELV_SIM_ZONE_EMPTY = 0,  /**< Write pointer at the zone start. */
	ELV_SIM_ZONE_OPEN = 1,   /**< Written, open (counts against max_open and max_active). */
	ELV_SIM_ZONE_CLOSED = 2, /**< Written, closed by the device (counts against max_active). */
	ELV_SIM_ZONE_FULL = 3,   /**< Write pointer at the zone capacity, or finished. */
	ELV_SIM_ZONE_CONV = 4    /**< Conventional zone: no write pointer. */
};

/** @brief A complete device parameter set. Zero it, then fill or load it. */
struct elv_sim_dev_params {
	char name[48];            /**< Preset or file name, shown in reports. */
	uint32_t kind;            /**< enum elv_sim_dev_kind. */
	uint16_t queue_depth;     /**< Commands the device holds at once (0 means 1). */
	uint8_t drive_sched;      /**< enum elv_sim_drive_sched. */
	/** 1: zoned. With zone.zone_sectors the device enforces the zone rules (host-managed
	 *  SMR or ZNS); without, it is reported as a trait only. */
	uint8_t zoned;
	double ordered_tag_ms;    /**< Host sends an ordered tag this often (0: never). */
	uint16_t busy_depth;      /**< Answer BUSY when holding this many (0: never). */
	uint64_t capacity;        /**< Sectors; derived from the geometry for disks. */
	struct elv_sim_disk_params disk;   /**< Disk parameters (kind DISK). */
	struct elv_sim_flash_params flash; /**< Flash parameters (kinds SSD and USB). */
	struct elv_sim_zone_params zone;   /**< Write zones (zoned DISK and SSD). */
};

/**
 * @brief Load a built-in parameter set.
 * @param name "barracuda" (Seagate ST32171W, 1997 SCSI), "ide2003" (generic 2003 7200 rpm
 *             IDE), "ssd", "usb-stick", "null"; see elv_sim_preset_at().
 * @retval 0 found; ELV_ENOENT unknown name; ELV_EINVAL NULL argument.
 */
ELV_API int elv_sim_preset(const char *name, struct elv_sim_dev_params *p);
/** @brief Name of the i-th preset, or NULL past the last. */
ELV_API const char *elv_sim_preset_at(unsigned i);
/** @brief One-line description of the i-th preset, or NULL past the last. */
ELV_API const char *elv_sim_preset_desc(unsigned i);
/**
 * @brief Set one parameter by name ("rpm", "surfaces", "zones" = "cyl:spt,cyl:spt,...",
 *        "seek" = "two-piece|sqrt|table", "seek_table" = "d:ms,d:ms,...", ...).
 * @retval 0 set; ELV_ENOENT unknown key; ELV_EINVAL bad value.
 */
ELV_API int elv_sim_param_set(struct elv_sim_dev_params *p, const char *key, const char *val);
/**
 * @brief Load a parameter file: "key = value" lines, '#' comments; "preset = NAME" first
 *        starts from a preset. Errors name the file, the line and the key.
 * @retval 0 loaded; a negative ELV_E* code with @p err filled otherwise.
 */
ELV_API int elv_sim_param_load(const char *path, struct elv_sim_dev_params *p, char *err,
			       size_t errlen);
/** @brief Derive the capacity and check a parameter set; ELV_EINVAL when inconsistent. */
ELV_API int elv_sim_param_finish(struct elv_sim_dev_params *p);
/** @brief Device traits as a host would report them to elv_queue_init(). */
ELV_API void elv_sim_dev_traits(const struct elv_sim_dev_params *p,
				struct elv_device_traits *t);

/* ---- device model -------------------------------------------------------------------- */

/** @brief One command at the device. The host fills the first four fields. */
struct elv_sim_io {
	uint64_t sector;      /**< First sector. */
	uint32_t nr_sectors;  /**< Length. */
	uint8_t op;           /**< enum elv_op. */
	uint8_t ordered;      /**< Set by the device: it carried an ordered tag. */
	uint8_t cache_hit;    /**< Set by the device: served from the drive cache. */
	uint8_t status;       /**< Set by the device: 0, or why it failed (elv_sim_io_status). */
	void *ctx;            /**< Host pointer, untouched. */
	uint64_t submit_ns;   /**< When the device received it. */
	uint64_t start_ns;    /**< When the device started serving it. */
	uint64_t done_ns;     /**< When it completes. */
	uint64_t seq;         /**< Arrival number at the device. */
	uint64_t seek_sectors; /**< Distance from the head's position (disks, media accesses). */
	double seek_ms;       /**< Seek time paid (disks). */
};

/** @brief Why a zoned device failed a command (elv_sim_io::status); 0 is success. */
enum elv_sim_io_status {
	ELV_SIM_IO_OK = 0,         /**< Done. */
	ELV_SIM_IO_WP = 1,         /**< Write not at the zone's write pointer. */
	ELV_SIM_IO_FULL = 2,       /**< Write to a full zone, or past the zone capacity. */
	ELV_SIM_IO_LIMIT = 3,      /**< Opening the zone would exceed max_active. */
	ELV_SIM_IO_BOUNDARY = 4,   /**< Write crossing a zone boundary, or past the device. */
	ELV_SIM_IO_ZONE_OP = 5     /**< Zone command on a conventional zone or not at a zone start. */
};

/** @brief Counters of a device model. */
struct elv_sim_dev_stats {
	uint64_t commands;       /**< Commands completed. */
	uint64_t busy_ns;        /**< Time spent serving commands. */
	uint64_t media_accesses; /**< Disk commands that moved the arm or waited for the media. */
	uint64_t cache_hits;     /**< Disk reads served from the cache. */
	double seek_sectors;     /**< Sum of seek distances of media accesses. */
	double seek_ms;          /**< Sum of seek times of media accesses. */
	uint64_t full_merges;    /**< Flash: log-block full merges. */
	uint64_t partial_merges; /**< Flash: log-block partial merges. */
	uint64_t switch_merges;  /**< Flash: log-block switch merges. */
	uint64_t gc_blocks;      /**< Flash: blocks reclaimed by garbage collection. */
	uint64_t gc_copies;      /**< Flash: valid pages copied by garbage collection. */
	uint64_t erases;         /**< Flash: block erases. */
	uint64_t destage_ns;     /**< Disk: media time spent writing back cached writes. */
	uint64_t write_hits;     /**< Disk: writes absorbed by the write-back buffer. */
	uint64_t busy_refusals;  /**< Commands refused with BUSY (the host requeued them). */
	uint64_t full_merge_ns;    /**< Flash: time spent in full merges. */
	uint64_t partial_merge_ns; /**< Flash: time spent in partial merges. */
	uint64_t switch_merge_ns;  /**< Flash: time spent in switch merges. */
	uint64_t zone_wp_errors;    /**< Zoned: writes failed off the write pointer. */
	uint64_t zone_full_errors;  /**< Zoned: writes failed on a full zone or past capacity. */
	uint64_t zone_other_errors; /**< Zoned: other failed commands (limits, boundaries). */
	uint64_t zone_resets;       /**< Zoned: zones reset. */
	uint64_t zone_finishes;     /**< Zoned: zones finished. */
	uint64_t zone_closes;       /**< Zoned: open zones the device closed to open another. */
};

struct elv_sim_dev;

/** @brief Build a device (malloc). @retval 0, ELV_EINVAL or ELV_ENOMEM. */
ELV_API int elv_sim_dev_create(struct elv_sim_dev **out, const struct elv_sim_dev_params *p);
/** @brief Free a device. */
ELV_API void elv_sim_dev_destroy(struct elv_sim_dev *d);
/** @brief Free command slots now. */
ELV_API unsigned elv_sim_dev_slots(const struct elv_sim_dev *d);
/**
 * @brief Hand a command to the device at @p now.
 * @retval 0 accepted; ELV_EBUSY no free slot, or the device answered BUSY (busy_depth).
 */
ELV_API int elv_sim_dev_submit(struct elv_sim_dev *d, struct elv_sim_io *io, uint64_t now);
/** @brief Time of the next completion, or ELV_TIME_NEVER. */
ELV_API uint64_t elv_sim_dev_next(const struct elv_sim_dev *d);
/** @brief Take the command completing at elv_sim_dev_next() (call with that time). */
ELV_API struct elv_sim_io *elv_sim_dev_finish(struct elv_sim_dev *d, uint64_t now);
/** @brief The device's counters. */
ELV_API void elv_sim_dev_get_stats(const struct elv_sim_dev *d, struct elv_sim_dev_stats *st);
/** @brief The parameters the device was built from (capacity derived). */
ELV_API const struct elv_sim_dev_params *elv_sim_dev_params(const struct elv_sim_dev *d);

/** @brief State of one write zone (elv_sim_dev_zone_report()). */
struct elv_sim_zone_info {
	uint64_t start;    /**< First sector. */
	uint64_t wp;       /**< Write pointer as an offset from @c start (sectors written). */
	uint64_t capacity; /**< Writable sectors. */
	uint8_t cond;      /**< enum elv_sim_zone_cond. */
	uint8_t pad[7];    /**< Zero. */
};

/**
 * @brief The zone geometry a host gives elv_zone_attach() for a finished zoned parameter
 *        set (elv_sim_dev_traits() reports the device as zoned).
 * @retval 0 filled; ELV_EINVAL NULL argument, or the set enforces no zone rules.
 */
ELV_API int elv_sim_dev_zone_geometry(const struct elv_sim_dev_params *p,
				      struct elv_zone_geometry *g);
/** @brief Write zones of a device (0 when it enforces no zone rules). */
ELV_API uint32_t elv_sim_dev_nr_zones(const struct elv_sim_dev *d);
/**
 * @brief Report a zone's condition and write pointer, as a zone report command would.
 * @retval 0 filled; ELV_EINVAL NULL argument; ELV_ERANGE no such zone (or not zoned).
 */
ELV_API int elv_sim_dev_zone_report(const struct elv_sim_dev *d, uint32_t zone,
				    struct elv_sim_zone_info *zi);

/**
 * @brief Disk arithmetic for tests and tools: seek time for a distance in cylinders (ms).
 */
ELV_API double elv_sim_disk_seek_ms(const struct elv_sim_disk_params *dp, uint32_t cylinders,
				    uint64_t distance);
/** @brief Cylinder, head and sector of a disk sector, and its zone's sectors per track. */
ELV_API int elv_sim_disk_locate(const struct elv_sim_dev *d, uint64_t sector, uint32_t *cyl,
				uint32_t *head, uint32_t *sect, uint32_t *spt);

/* ---- workloads and runs -------------------------------------------------------------- */

/** @brief Kinds of workload stream. */
enum elv_sim_stream_kind {
	ELV_SIM_SYNC_READER = 0, /**< Dependent synchronous reads, one at a time. */
	ELV_SIM_STREAMER = 1,    /**< Sequential reader keeping a readahead window in flight. */
	ELV_SIM_WRITER = 2,      /**< Buffered writer: asynchronous writes, bounded backlog. */
	ELV_SIM_POSTMARK = 3,    /**< PostMark-like file mix over a FAT-like allocator. */
	ELV_SIM_TREE_READER = 4, /**< Reads every file of a tree: directory, inode, data. */
	ELV_SIM_FIXED_QD = 5,    /**< Random reads keeping exactly @c depth in flight. */
	ELV_SIM_MIXED = 6        /**< Reads and writes (@c read_share) of sizes between
				      @c rq_sectors and @c rq_sectors_max, up to @c depth in
				      flight, @c think_ms after each completion before the next
				      issue; @c count requests, or @c bytes, or until the run ends. */
};

/** @brief Access patterns of a synchronous reader. */
enum elv_sim_pattern {
	ELV_SIM_RANDOM = 0,     /**< Uniform over the region. */
	ELV_SIM_SEQUENTIAL = 1, /**< Consecutive, wrapping at the region end. */
	ELV_SIM_LOCALITY = 2    /**< Bursts of nearby reads, then a jump. */
};

/** @brief Description of one workload stream (zero fields take defaults). */
struct elv_sim_stream_spec {
	char name[32];          /**< Shown in reports. */
	uint32_t kind;          /**< enum elv_sim_stream_kind. */
	uint32_t pattern;       /**< enum elv_sim_pattern (readers). */
	uint64_t region_start;  /**< First sector of the stream's area. */
	uint64_t region_len;    /**< Sectors in the area. */
	uint32_t rq_sectors;    /**< Request size. */
	uint32_t depth;         /**< In flight: streamer window, writer or postmark backlog. */
	double think_ms;        /**< Mean think time between dependent requests. */
	double burst_think_ms;  /**< Pause between locality bursts (LOCALITY). */
	uint32_t burst;         /**< Reads per burst (LOCALITY); subdirectories (postmark). */
	uint64_t count;         /**< Requests (readers), files (tree), transactions (postmark). */
	uint64_t bytes;         /**< Bytes to move (streamer, writer); 0: until the run ends. */
	uint8_t background;     /**< 1: the run does not wait for this stream to finish. */
	uint8_t ioprio;         /**< ELV_PRIO(...) or 0. */
	uint8_t exp_think;      /**< 1: think times are exponential, 0: fixed. */
	uint8_t pad;            /**< Zero. */
	uint32_t files;         /**< Initial files (postmark). */
	uint32_t min_size;      /**< Smallest file in bytes (postmark). */
	uint32_t max_size;      /**< Largest file in bytes (postmark). */
	uint32_t files_per_dir; /**< Files per directory (tree). */
	uint32_t mean_file_kb;  /**< Mean file size in KiB (tree). */
	uint32_t rq_sectors_max; /**< Largest request (MIXED): sizes uniform in whole pages
				      between @c rq_sectors and this; 0 means @c rq_sectors. */
	double read_share;      /**< Fraction of reads in [0, 1] (MIXED). */
	uint8_t sync_writes;    /**< 1: writes are synchronous, someone waits (MIXED). */
	/** 1..ELV_SIM_MAX_GROUPS: member of that group of the run (elv_sim_config::group_weight);
	 *  0: in no group (the root). Only policies that honour groups (bfq) look at it. */
	uint8_t group;
	/** Weight 1..ELV_WEIGHT_MAX for the policies that honour weights (bfq); 0: derived
	 *  from the I/O priority. */
	uint16_t weight;
	uint32_t start_ms;      /**< Simulated time (ms) before which it issues nothing. */
	/** Its throttle when the run has the QoS stage (elv_sim_config::qos); all zero: none. */
	struct elv_throttle_settings throttle;
	/** Its mClock settings when the run has the QoS stage; all zero: not an mClock client. */
	struct elv_mclock_settings mclock;
};

/** @brief Most chosen latency percentiles of one run. */
#define ELV_SIM_MAX_PCT 8

/** @brief Most streams in one run. */
#define ELV_SIM_MAX_STREAMS 64
/** @brief Most stream groups in one run (elv_sim_config::group_weight). */
#define ELV_SIM_MAX_GROUPS 8
/** @brief Most tunable overrides in one run. */
#define ELV_SIM_MAX_SETS 16

/** @brief A tunable override ("name", value). */
struct elv_sim_set {
	char name[32]; /**< Tunable name. */
	int64_t value; /**< Value in the tunable's unit. */
};

/** @brief Open-loop record to replay (trace replay); same layout idea as the trace readers. */
struct elv_sim_replay_rec {
	uint64_t time_ns;    /**< Issue time. */
	uint64_t sector;     /**< First sector. */
	uint32_t nr_sectors; /**< Length. */
	uint8_t op;          /**< enum elv_op. */
	uint8_t sync;        /**< 1 when somebody waits for it. */
	uint16_t pad;        /**< Zero. */
	uint32_t pid;        /**< Issuer. */
};

/** @brief Everything one simulated run needs. */
struct elv_sim_config {
	struct elv_sim_dev_params dev;   /**< Device (finished parameters). */
	const struct elv_policy *policy; /**< Host policy. */
	uint64_t seed;                   /**< Random seed. */
	uint32_t nr_streams;             /**< Streams used. */
	struct elv_sim_stream_spec streams[ELV_SIM_MAX_STREAMS]; /**< Streams. */
	uint32_t nr_sets;                /**< Tunable overrides used. */
	struct elv_sim_set sets[ELV_SIM_MAX_SETS]; /**< Overrides, applied after init. */
	uint32_t max_sectors;            /**< Largest merged request (0: 256 sectors). */
	/** Stop the run at this simulated time (0: no limit, the run goes on until every
	 *  foreground stream has finished). A run the limit stops is reported as cut
	 *  (elv_sim_result::truncated); with no limit a foreground stream must have an end. */
	uint64_t time_limit_ns;
	const struct elv_sim_replay_rec *replay; /**< Records to replay, or NULL. */
	size_t nr_replay;                /**< Records in @c replay. */
	uint8_t closed_loop;             /**< Replay: per-pid dependencies with original gaps. */
	/** Zoned devices (elv_sim_zone_params): 0 attaches the zone write plugging stage
	 *  (elv_zone_attach()) with the device's geometry, 1 runs without it, so that the
	 *  writes a policy or the device reorders fail off the write pointer. */
	uint8_t no_zone_stage;
	void (*progress)(void *ctx, double fraction); /**< Optional progress report. */
	void *progress_ctx;              /**< Passed to @c progress. */
	/** Optional command trace: @p ev is 'D' when the device is given a command (after
	 *  merging), 'C' when it completes; @p now in ns. */
	void (*trace)(void *ctx, char ev, uint64_t now, const struct elv_sim_io *io);
	void *trace_ctx;                 /**< Passed to @c trace. */
	uint32_t nr_pct;                 /**< Chosen latency percentiles in @c pct. */
	double pct[ELV_SIM_MAX_PCT];     /**< Percentiles to report, each in (0, 100]. */
	/** Groups of the run (elv_group): group k (1-based, elv_sim_stream_spec::group) has
	 *  weight group_weight[k - 1], 1..ELV_GROUP_WEIGHT_MAX. */
	uint32_t nr_groups;
	uint16_t group_weight[ELV_SIM_MAX_GROUPS]; /**< Weight of each group. */
	/** 1: attach the QoS stage with @c qos_set; each stream with throttle or mClock settings
	 *  (elv_sim_stream_spec) becomes one of its clients (its writeback thread another). */
	uint8_t qos;
	struct elv_qos_settings qos_set; /**< Settings of the QoS stage. */
};

/** @brief Latency summary in milliseconds (nearest-rank percentiles). */
struct elv_sim_lat {
	uint64_t n;  /**< Samples. */
	double p50;  /**< Median. */
	double p99;  /**< 99th percentile. */
	double max;  /**< Maximum. */
	double mean; /**< Mean. */
	double pct[ELV_SIM_MAX_PCT]; /**< The run's chosen percentiles (elv_sim_result::pct). */
};

/** @brief Why a run stopped before every foreground stream finished. */
enum elv_sim_cut {
	ELV_SIM_CUT_NONE = 0,       /**< The run is complete. */
	ELV_SIM_CUT_TIME_LIMIT = 1, /**< elv_sim_config::time_limit_ns was reached. */
	ELV_SIM_CUT_STALL = 2       /**< Nothing could happen any more while a stream waited. */
};

/** @brief Per-stream results. */
struct elv_sim_stream_result {
	char name[32];         /**< Stream name. */
	double done_s;         /**< Completion time of its last request (s). */
	double mbps;           /**< Bytes moved / done_s, MB/s (1e6 bytes). */
	uint64_t requests;     /**< Requests completed. */
	uint64_t bytes;        /**< Bytes moved. */
	struct elv_sim_lat read_lat;  /**< Read latency. */
	struct elv_sim_lat write_lat; /**< Write latency. */
};

/** @brief Most policy counters kept in a result. */
#define ELV_SIM_MAX_PSTATS 24

/** @brief Results of one run. */
struct elv_sim_result {
	char policy[32];           /**< Policy name. */
	int error;                 /**< 0, or the negative code that stopped the run. */
	int truncated;             /**< enum elv_sim_cut: why the run stopped early, or 0. */
	double makespan_s;         /**< Time until the last foreground stream finished. */
	uint64_t requests;         /**< Requests completed (before merging). */
	uint64_t dispatched;       /**< Requests sent to the device (after merging). */
	double mean_seek_sectors;  /**< Mean seek distance of media accesses. */
	double mean_seek_ms;       /**< Mean seek time of media accesses. */
	double mean_queued;        /**< Mean requests held by the policy at each dispatch. */
	struct elv_sim_lat read_lat;  /**< All reads. */
	struct elv_sim_lat write_lat; /**< All writes. */
	double read_mbps;          /**< Read throughput over the makespan (MB/s). */
	double write_mbps;         /**< Write throughput over the makespan (MB/s). */
	double busy_s;             /**< Device busy time (s). */
	double idle_s;             /**< Idle time the policy injected (s). */
	uint64_t idle_count;       /**< Idle periods the policy started. */
	uint64_t expired;          /**< Deadline-forced dispatches. */
	struct elv_sim_dev_stats dev;  /**< Device counters. */
	uint32_t nr_pstats;            /**< Policy counters used. */
	char pstat_name[ELV_SIM_MAX_PSTATS][32]; /**< Their names. */
	uint64_t pstat_value[ELV_SIM_MAX_PSTATS]; /**< Their values. */
	uint32_t nr_streams;           /**< Streams reported. */
	struct elv_sim_stream_result streams[ELV_SIM_MAX_STREAMS]; /**< Per stream. */
	double *read_samples_ms;  /**< Sorted read latencies (malloc'ed; for CDF plots). */
	size_t nr_read_samples;   /**< Entries in @c read_samples_ms. */
	uint32_t nr_pct;          /**< Chosen percentiles (copied from the configuration). */
	double pct[ELV_SIM_MAX_PCT]; /**< Their values in percent, as in every elv_sim_lat. */
	uint64_t time_limit_ns;   /**< The limit the run had (0: none). */
	uint64_t cut_ns;          /**< When cut: the simulated time it stopped at. */
	uint64_t nr_records;      /**< Replay: records in the trace. */
	uint64_t not_issued;      /**< When cut: replay records never issued. */
	uint64_t unfinished;      /**< When cut: requests issued and not completed. */
	uint32_t streams_unfinished; /**< When cut: foreground streams not finished. */
	uint8_t zone_stage;       /**< 1: the run had the zone write plugging stage attached. */
	/** Requests that completed with an error (a zoned device's failed writes, each
	 *  request of a merged command counted); they count in @c requests too. */
	uint64_t failed;
};

/**
 * @brief Run one simulation.
 * @retval 0 success (see also @c res->error); ELV_EINVAL bad configuration; ELV_ENOMEM.
 */
ELV_API int elv_sim_run(const struct elv_sim_config *cfg, struct elv_sim_result *res);
/** @brief Free what a result holds (the sample array). */
ELV_API void elv_sim_result_free(struct elv_sim_result *res);
/**
 * @brief One line (no newline) saying what a cut run left out, for every report format.
 * @param res a result.
 * @param buf where to write; an empty string when the run is complete.
 * @param len size of @p buf (256 bytes hold any message).
 * @retval 1 the run was cut; 0 it is complete; ELV_EINVAL NULL argument or @p len 0.
 */
ELV_API int elv_sim_result_cut(const struct elv_sim_result *res, char *buf, size_t len);

/* ---- job files ----------------------------------------------------------------------- */

/**
 * @brief A workload read from a job file: global settings and one ELV_SIM_MIXED stream per
 *        "[name]" section (format in docs/simulator.md).
 */
struct elv_sim_job {
	char device[256];        /**< "device =": a preset or parameter file, or empty. */
	uint64_t seed;           /**< "seed =" when @c has_seed. */
	uint8_t has_seed;        /**< 1 when the file gives a seed. */
	uint64_t time_limit_ns;  /**< "time_limit =", or 0. */
	uint32_t nr_streams;     /**< Streams in @c streams. */
	struct elv_sim_stream_spec streams[ELV_SIM_MAX_STREAMS]; /**< The streams. */
	double offset_pct[ELV_SIM_MAX_STREAMS]; /**< "offset = N%", or -1 when in bytes. */
	double span_pct[ELV_SIM_MAX_STREAMS];   /**< "span = N%", or -1 when in bytes. */
	unsigned line[ELV_SIM_MAX_STREAMS];     /**< Line of each stream's section header. */
	uint32_t nr_groups;                     /**< Groups named by "group =" keys. */
	char group_name[ELV_SIM_MAX_GROUPS][32]; /**< Their names, in order of appearance. */
	uint16_t group_weight[ELV_SIM_MAX_GROUPS]; /**< Their weights ("group_weight =", 100). */
};

/**
 * @brief Parse a job file held in memory.
 * @param text the file's bytes (need not end in NUL).
 * @param len their number.
 * @param name shown in messages ("name:line: reason").
 * @param[out] job the workload; zeroed on error.
 * @param err receives one line naming the file, the line and the reason; may be NULL.
 * @param errlen size of @p err (200 bytes hold any message).
 * @retval 0 parsed; ELV_EINVAL malformed input or NULL argument.
 */
ELV_API int elv_sim_job_parse(const char *text, size_t len, const char *name,
			      struct elv_sim_job *job, char *err, size_t errlen);
/**
 * @brief Read and parse a job file.
 * @retval 0 parsed; ELV_ENOENT cannot open; ELV_ENOMEM larger than 16 MiB or no memory;
 *         ELV_EINVAL malformed (message in @p err).
 */
ELV_API int elv_sim_job_load(const char *path, struct elv_sim_job *job, char *err,
			     size_t errlen);
/**
 * @brief Put a job's streams into a run configuration whose device is already set:
 *        percentages become sectors of that device; the job's seed replaces @c seed, and its
 *        time limit is used when @c cfg has none.
 * @retval 0 done; ELV_EINVAL NULL argument, empty job or no device capacity; ELV_ERANGE a
 *         stream's region runs past the end of the device or is smaller than its largest
 *         request; @c cfg->nr_streams is then that stream's index (@p cfg partly written).
 */
ELV_API int elv_sim_job_apply(const struct elv_sim_job *job, struct elv_sim_config *cfg);

/* ---- scenarios and reports ----------------------------------------------------------- */

/** @brief A published figure printed beside the simulated one. */
struct elv_sim_published {
	const char *what;  /**< What was measured. */
	double value;      /**< The number. */
	const char *unit;  /**< Its unit. */
	const char *source; /**< Where it was published. */
};

/** @brief One point of the tcq-depth curve. */
struct elv_sim_qd_point {
	uint32_t qd;  /**< Commands outstanding at the drive. */
	double iops;  /**< Completed reads per second. */
};

/** @brief Most points of a queue-depth curve. */
#define ELV_SIM_MAX_QD 31

/** @brief One point of the classic scenario's arrival-rate sweep (open-loop random reads). */
struct elv_sim_rate_point {
	double rate;    /**< Offered arrivals per second. */
	double iops;    /**< Reads completed per second over the run. */
	double mean_ms; /**< Mean response time (arrival to completion). */
	double scv;     /**< Squared coefficient of variation of the response time: var / mean^2. */
	double p99_ms;  /**< 99th percentile (nearest rank). */
	double max_ms;  /**< Maximum. */
};

/** @brief Most points of an arrival-rate sweep. */
#define ELV_SIM_MAX_RATES 8

/** @brief Most clients of the qos scenario's allocation. */
#define ELV_SIM_MAX_QOS_CLIENTS 8
/** @brief Most points of the qos scenario's burst timeline. */
#define ELV_SIM_MAX_BURST 40

/** @brief One mClock client of the qos scenario: settings, prediction and measurement. */
struct elv_sim_qos_client {
	char name[32];          /**< Stream name. */
	double reservation;     /**< Requests per second reserved (0: none). */
	double weight;          /**< Weight. */
	double limit;           /**< Requests per second at most (0: none). */
	double predicted_iops;  /**< What mClock should give it on the measured capacity. */
	double measured_iops;   /**< What it got. */
};

/** @brief One interval of the qos scenario's throttled client. */
struct elv_sim_burst_point {
	double t_s;     /**< Start of the interval (s). */
	double iops;    /**< Its requests completed per second in the interval. */
	double cap;     /**< What the throttle allows in the interval on average (ops/s). */
};

/** @brief Results of one scenario under one policy. */
struct elv_sim_scn_result {
	struct elv_sim_result run;           /**< The run (for tcq-depth: the deepest point). */
	uint32_t nr_curve;                   /**< Points in the curves (tcq-depth). */
	struct elv_sim_qd_point curve[ELV_SIM_MAX_QD];      /**< With the device's own order. */
	struct elv_sim_qd_point curve_fcfs[ELV_SIM_MAX_QD]; /**< Drive FCFS. */
	struct elv_sim_qd_point curve_sstf[ELV_SIM_MAX_QD]; /**< Drive SSTF. */
	struct elv_sim_qd_point curve_sptf[ELV_SIM_MAX_QD]; /**< Drive SPTF. */
	/** Drive SPTF, the QD reads issued by QD processes with one read each. */
	struct elv_sim_qd_point curve_procs[ELV_SIM_MAX_QD];
	double primary;                      /**< The scenario's headline metric. */
	uint32_t nr_sweep;                   /**< Points in @c sweep (classic). */
	struct elv_sim_rate_point sweep[ELV_SIM_MAX_RATES]; /**< Arrival-rate sweep (classic). */
	/** The headline metric measured again with the scenario's background streams left out
	 *  (startup: the start-up time on an idle disk); 0 for the other scenarios. */
	double reference;
	/** qos: the device's measured capacity in requests per second (all clients together). */
	double qos_capacity;
	uint32_t nr_qos;                     /**< Clients in @c qos (qos scenario). */
	struct elv_sim_qos_client qos[ELV_SIM_MAX_QOS_CLIENTS]; /**< Allocation per client. */
	uint32_t nr_burst;                   /**< Points in @c burst (qos scenario). */
	struct elv_sim_burst_point burst[ELV_SIM_MAX_BURST]; /**< The throttled client over time. */
};

/** @brief A scenario's report across policies. */
struct elv_sim_report {
	const char *scenario;      /**< Scenario name. */
	char device[48];           /**< Device parameter set name. */
	uint64_t seed;             /**< Seed. */
	unsigned nr;               /**< Policies run. */
	struct elv_sim_scn_result *res; /**< One per policy (malloc'ed). */
	const char *primary_name;  /**< What @c primary measures. */
	int lower_is_better;       /**< Orientation of @c primary. */
	double expect_qd1_iops;    /**< tcq-depth: QD1 iops the parameter sheet predicts. */
};

/** @brief Options of a scenario run. */
struct elv_sim_scn_opts {
	const struct elv_sim_dev_params *dev; /**< Device override, or NULL for the default. */
	uint64_t seed;                        /**< Seed. */
	uint32_t nr_sets;                     /**< Tunable overrides. */
	struct elv_sim_set sets[ELV_SIM_MAX_SETS]; /**< Overrides. */
	double scale;                         /**< Work scale factor (0 means 1). */
	void (*progress)(void *ctx, double fraction); /**< Optional progress report. */
	void *progress_ctx;                   /**< Passed to @c progress. */
	/** Optional command trace of every run (see elv_sim_config). */
	void (*trace)(void *ctx, char ev, uint64_t now, const struct elv_sim_io *io);
	void *trace_ctx;                      /**< Passed to @c trace. */
	uint64_t time_limit_ns;               /**< Time limit of every run (0: none). */
	uint32_t nr_pct;                      /**< Chosen latency percentiles in @c pct. */
	double pct[ELV_SIM_MAX_PCT];          /**< Percentiles to report, each in (0, 100]. */
	uint8_t no_zone_stage; /**< 1: zoned devices run without the zone stage (elv_sim_config). */
};

/** @brief Number of built-in scenarios. */
ELV_API unsigned elv_sim_scenario_count(void);
/** @brief Name of scenario @p i, or NULL. */
ELV_API const char *elv_sim_scenario_name(unsigned i);
/** @brief One-line description of scenario @p i, or NULL. */
ELV_API const char *elv_sim_scenario_desc(unsigned i);
/** @brief Default device preset of scenario @p i, or NULL. */
ELV_API const char *elv_sim_scenario_device(unsigned i);
/** @brief Published figures of scenario @p i (count in @p nr). */
ELV_API const struct elv_sim_published *elv_sim_scenario_published(unsigned i, unsigned *nr);
/** @brief Index of a scenario by name, or -1. */
ELV_API int elv_sim_scenario_find(const char *name);
/** @brief 1 when scenario @p i makes sense on device @p p (size, queueing). */
ELV_API int elv_sim_scenario_fits(unsigned i, const struct elv_sim_dev_params *p);
/**
 * @brief Run scenario @p i under each of @p policies.
 * @retval 0 success; ELV_EINVAL bad argument; ELV_ENOMEM.
 */
ELV_API int elv_sim_scenario_run(unsigned i, const struct elv_policy *const *policies,
				 unsigned nr, const struct elv_sim_scn_opts *opts,
				 struct elv_sim_report *rep);
/** @brief Free a report's results. */
ELV_API void elv_sim_report_free(struct elv_sim_report *rep);
/** @brief Write the report as JSON (the documented contract). */
ELV_API void elv_sim_report_json(FILE *f, const struct elv_sim_report *rep);
/** @brief Write one CSV row per policy (and per stream). */
ELV_API void elv_sim_report_csv(FILE *f, const struct elv_sim_report *rep);
/** @brief Write a terminal table with the published figures beside. */
ELV_API void elv_sim_report_table(FILE *f, const struct elv_sim_report *rep);

/** @} */

#ifdef __cplusplus
}
#endif

#endif /* ELEVATOR_SIM_H */
