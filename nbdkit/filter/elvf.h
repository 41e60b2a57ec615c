/*
 * nbdkit-elevator-filter: internal declarations shared by its source files.
 *
 * One queue per nbdkit process stands for the device behind the filter. Every I/O callback
 * runs in its own nbdkit worker thread: it embeds an elv_request in a descriptor on its
 * stack, adds it to the queue under the one mutex and sleeps on its own condition variable.
 * When the policy dispatches it, the same thread calls the plugin (so the plugin sees the
 * connection it expects), then completes the request and dispatches the next ones. A
 * request merged into another sleeps until the thread of the one that absorbed it has made
 * the single plugin call for both and copied its data.
 */
#ifndef ELVF_H
#define ELVF_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include <elevator/elevator.h>
#include <elevator/qos.h>

/** @brief Kinds of NBD command the filter queues. */
enum elvf_kind {
	ELVF_READ = 0,  /**< pread */
	ELVF_WRITE = 1, /**< pwrite */
	ELVF_TRIM = 2,  /**< trim */
	ELVF_ZERO = 3,  /**< zero */
	ELVF_FLUSH = 4, /**< flush */
	ELVF_NR_KINDS = 5
};

/** @brief Latency histogram: 8 sub-buckets per power of two, so a quantile is within 12.5%. */
#define ELVF_HIST_BUCKETS 512

/** @brief Latency distribution of completed requests, in nanoseconds. */
struct elvf_hist {
	uint64_t count;                      /**< Samples. */
	uint64_t max;                        /**< Largest sample (exact). */
	uint64_t bucket[ELVF_HIST_BUCKETS];  /**< Samples per bucket. */
};

/** @brief Per-connection QoS settings, by key (names in qos.c); 0 means not set. */
enum elvf_qos_key {
	ELVF_QOS_LIMIT_IOPS = 0,   /**< limit-iops: ops/s, reads and writes together. */
	ELVF_QOS_LIMIT_IOPS_READ,  /**< limit-iops-read. */
	ELVF_QOS_LIMIT_IOPS_WRITE, /**< limit-iops-write. */
	ELVF_QOS_LIMIT_BPS,        /**< limit-bps: bytes/s, reads and writes together. */
	ELVF_QOS_LIMIT_BPS_READ,   /**< limit-bps-read. */
	ELVF_QOS_LIMIT_BPS_WRITE,  /**< limit-bps-write. */
	ELVF_QOS_BURST_IOPS,       /**< burst-iops: rate allowed during a burst. */
	ELVF_QOS_BURST_IOPS_READ,  /**< burst-iops-read. */
	ELVF_QOS_BURST_IOPS_WRITE, /**< burst-iops-write. */
	ELVF_QOS_BURST_BPS,        /**< burst-bps. */
	ELVF_QOS_BURST_BPS_READ,   /**< burst-bps-read. */
	ELVF_QOS_BURST_BPS_WRITE,  /**< burst-bps-write. */
	ELVF_QOS_BURST_LENGTH,     /**< burst-length: seconds a burst may last. */
	ELVF_QOS_IOPS_SIZE,        /**< iops-size: bytes counted as one op. */
	ELVF_QOS_RESERVATION,      /**< mclock-reservation: ops/s guaranteed. */
	ELVF_QOS_WEIGHT,           /**< mclock-weight: share of the spare capacity. */
	ELVF_QOS_LIMIT,            /**< mclock-limit: ops/s at most. */
	ELVF_QOS_NR_KEYS
};

/** @brief What a QoS setting applies to. */
enum elvf_qos_sel {
	ELVF_QOS_SEL_ALL = 0,    /**< KEY=: every connection. */
	ELVF_QOS_SEL_EXPORT = 1, /**< export.NAME.KEY=: connections to export NAME. */
	ELVF_QOS_SEL_CONN = 2    /**< conn.N.KEY=: connection number N. */
};

struct elvf_qos_rule;

/** @brief One connection's QoS settings, and where each came from. */
struct elvf_qos {
	uint64_t v[ELVF_QOS_NR_KEYS];                  /**< Values, 0 when not set. */
	uint32_t set;                                  /**< Keys given (bit per key). */
	const struct elvf_qos_rule *from[ELVF_QOS_NR_KEYS]; /**< Rule each value came from. */
};

/** @brief Settings given for one selector. */
struct elvf_qos_rule {
	uint8_t sel;         /**< enum elvf_qos_sel. */
	uint64_t conn;       /**< Connection number (conn.N). */
	char export[64];     /**< Export name (export.NAME). */
	struct elvf_qos q;   /**< Values given under this selector (@c from unused). */
};

/** @brief Most selectors one parameter list or control file may hold. */
#define ELVF_MAX_QOS_RULES 32

/** @brief The QoS settings of a parameter list or control file. */
struct elvf_qos_rules {
	struct elvf_qos_rule r[ELVF_MAX_QOS_RULES]; /**< In order of first mention. */
	unsigned nr;                                /**< Entries in @c r. */
};

/** @brief What a connection did, kept after it closes for the stats file. */
struct elvf_counts {
	uint64_t ops[ELVF_NR_KINDS]; /**< Completed requests by kind. */
	uint64_t bytes[2];           /**< Bytes read [0] and written [1]. */
	uint64_t merged;             /**< Requests absorbed by another before dispatch. */
	uint64_t cancelled;          /**< Requests withdrawn because the client went away. */
	uint64_t errors;             /**< Requests the plugin failed. */
	struct elvf_hist lat;        /**< Time from arrival in the filter to completion. */
};

/** @brief QoS of one connection, as the stats file shows it. */
struct elvf_conn_qos {
	struct elvf_qos eff;        /**< Settings in force (from the layers). */
	int what;                   /**< ELVF_QOS_HAS_THROTTLE | ELVF_QOS_HAS_MCLOCK in force. */
	int drop_mclock;            /**< mClock to be removed once nothing waits in it. */
	uint64_t held;              /**< Requests the stage held when they arrived. */
	uint64_t held_ns;           /**< Their time from arrival to dispatch, summed. */
	struct elv_qos_client_stats lib; /**< The library's counters, kept at close. */
};

/** @brief One NBD connection (the filter's handle). */
struct elvf_conn {
	struct elv_stream stream;  /**< Its stream when stream=connection. */
	struct elv_qos_client qc;  /**< Its QoS state when the stage is attached. */
	uint64_t id;               /**< 1, 2, ... in order of opening. */
	char *export;              /**< Export name the client asked for. */
	int has_stream;            /**< stream is registered with the queue. */
	int has_qc;                /**< qc is attached to the stream. */
	int open;                  /**< Not closed yet. */
	struct elvf_counts counts; /**< Under the filter's lock. */
	struct elvf_conn_qos qos;  /**< Under the filter's lock. */
	struct elvf_conn *next;    /**< All connections, newest first. */
};

/** @brief States of an I/O descriptor. */
enum elvf_state {
	ELVF_QUEUED = 0,   /**< In the queue, its own request. */
	ELVF_MERGED = 1,   /**< Absorbed: rides in @c head's plugin call. */
	ELVF_RUNNING = 2,  /**< Dispatched: its thread calls the plugin. */
	ELVF_DONE = 3      /**< Finished (done, failed or cancelled): @c err says which. */
};

/** @brief One NBD command on its way through the queue (on its worker thread's stack). */
struct elvf_io {
	struct elv_request rq;    /**< Embedded request; the queue holds heads only. */
	void *next;               /**< The plugin context (nbdkit_next *). */
	struct elvf_conn *conn;   /**< Issuing connection. */
	void *buf;                /**< Caller's buffer (read into, or written from). */
	uint64_t offset;          /**< Byte offset of this command. */
	uint32_t count;           /**< Byte length of this command. */
	uint32_t flags;           /**< NBDKIT_FLAG_* of this command. */
	uint8_t kind;             /**< enum elvf_kind. */
	uint8_t state;            /**< enum elvf_state, under the filter's lock. */
	int err;                  /**< errno for the client, 0 on success. */
	uint64_t t_arrive;        /**< When the filter got it (ns). */
	uint8_t qos_held;         /**< The QoS stage held it at arrival. */
	/* Merge chain, in disk order; @c first and @c last are kept by the head only. */
	struct elvf_io *head;     /**< The head this one rides with (itself when queued). */
	struct elvf_io *first;    /**< Head: first member on disk. */
	struct elvf_io *last;     /**< Head: last member on disk. */
	struct elvf_io *chain;    /**< The member after this one on disk. */
	uint64_t span_off;        /**< Head: byte offset of the whole chain. */
	uint64_t span_len;        /**< Head: byte length of the whole chain. */
	pthread_cond_t cv;        /**< Signalled when @c state changes. */
};

/** @brief Stream mapping chosen with stream=. */
enum elvf_stream_mode { ELVF_STREAM_CONNECTION = 0, ELVF_STREAM_NONE = 1 };

/** @brief Largest tunable assignments one parameter list or control file may hold. */
#define ELVF_MAX_TUNABLES 32

/** @brief A tunable assignment, NAME=VALUE. */
struct elvf_tunable_set {
	char name[48];  /**< sysfs name. */
	int64_t value;  /**< value in the tunable's unit. */
};

/** @brief Settings: from the command line, or from one read of the control file. */
struct elvf_settings {
	const struct elv_policy *policy;  /**< NULL: recommend (command line) or keep (control). */
	struct elvf_tunable_set tun[ELVF_MAX_TUNABLES]; /**< In the order given. */
	unsigned nr_tun;                  /**< Entries in @c tun. */
	struct elvf_qos_rules qos;        /**< QoS settings. */
};

/** @brief Everything parsed from the command line. */
struct elvf_params {
	struct elvf_settings set;   /**< policy= and tunables. */
	unsigned depth;             /**< depth=, 0 until decided. */
	int rotational;             /**< rotational=, 0 or 1. */
	int stream_mode;            /**< enum elvf_stream_mode. */
	uint8_t ioprio;             /**< ioprio= as ELV_PRIO(), 0 for none. */
	int qos_at_limit;           /**< qos-at-limit= as enum elv_qos_at_limit. */
	char *stats_path;           /**< stats=, absolute, or NULL. */
	char *control_path;         /**< control=, absolute, or NULL. */
};

/* params.c */
/** @brief Is @p key a parameter of the filter (not of the plugin)? */
int elvf_param_is_ours(const char *key);
/**
 * @brief Take one KEY=VALUE of the command line.
 * @return 0, or -1 after nbdkit_error() naming the parameter.
 */
int elvf_param_set(struct elvf_params *p, const char *key, const char *value);
/**
 * @brief Fill in defaults and check the tunables against the chosen policy.
 * @return 0, or -1 after nbdkit_error() naming the parameter.
 */
int elvf_params_finish(struct elvf_params *p);
/**
 * @brief Check @p s's tunables against @p pol (exists, in range).
 * @param where prefix of the error message ("" or "control file FILE line N: ").
 * @return 0, or -1 after nbdkit_error().
 */
int elvf_settings_check(const struct elvf_settings *s, const struct elv_policy *pol,
			const char *where);
/**
 * @brief Parse a control file's text: lines "policy=NAME" or "TUNABLE=VALUE", '#' comments.
 * @return 0, or -1 after nbdkit_error() naming the file, line and parameter.
 */
int elvf_control_parse(const char *path, const char *text, struct elvf_settings *s);
/** @brief Free what elvf_param_set() allocated. */
void elvf_params_free(struct elvf_params *p);

/* qos.c */
/** @brief Is @p key a QoS setting (KEY, export.NAME.KEY or conn.N.KEY)? */
int elvf_qos_is_key(const char *key);
/** @brief Name of QoS key @p k, or NULL. */
const char *elvf_qos_key_name(unsigned k);
/**
 * @brief Take one QoS setting into @p rules.
 * @param where prefix of the error message ("" or "control file FILE line N: ").
 * @return 0, or -1 after nbdkit_error() naming the setting.
 */
int elvf_qos_parse(struct elvf_qos_rules *rules, const char *key, const char *value,
		   const char *where);
/**
 * @brief The settings of a connection: @p layers in order (NULL entries skipped), within
 *        each its plain keys, then export.NAME, then conn.N; later ones win key by key.
 * @param export the connection's export name, or NULL.
 * @param conn its number, or 0 for none.
 */
void elvf_qos_effective(const struct elvf_qos_rules *const *layers, unsigned nr_layers,
			const char *export, uint64_t conn, struct elvf_qos *out);
/**
 * @brief Check one connection's settings against each other (QEMU's throttling rules,
 *        reservation not above limit).
 * @return 0, or -1 after nbdkit_error() naming the setting as written.
 */
int elvf_qos_check(const struct elvf_qos *q, const char *where);
/**
 * @brief Check the settings every selector of @p layers would give a connection it matches.
 * @return 0, or -1 after nbdkit_error().
 */
int elvf_qos_check_layers(const struct elvf_qos_rules *const *layers, unsigned nr_layers,
			  const char *where);
/** @brief Does @p q set anything? */
int elvf_qos_any(const struct elvf_qos *q);
/** @brief elvf_qos_to_lib() found a throttle. */
#define ELVF_QOS_HAS_THROTTLE 1
/** @brief elvf_qos_to_lib() found mClock settings. */
#define ELVF_QOS_HAS_MCLOCK 2
/**
 * @brief The library's settings for @p q (an unset weight next to a reservation or limit is 1).
 * @return ELVF_QOS_HAS_THROTTLE and ELVF_QOS_HAS_MCLOCK for what is set.
 */
int elvf_qos_to_lib(const struct elvf_qos *q, struct elv_throttle_settings *t,
		    struct elv_mclock_settings *m);

/* sched.c */
/** @brief The filter's process-wide state. */
struct elvf {
	pthread_mutex_t lock;       /**< Guards everything below and every queued descriptor. */
	pthread_condattr_t cvattr;  /**< CLOCK_MONOTONIC condition variables. */
	struct elv_queue *q;        /**< The queue (in @c qmem). */
	void *qmem;                 /**< Its memory, sized for any built-in policy. */
	struct elvf_params prm;     /**< Parameters. */
	unsigned running;           /**< Requests in the plugin now. */
	uint64_t armed;             /**< Deadline the timer thread sleeps to (ELV_TIME_NEVER). */
	pthread_cond_t timer_cv;    /**< Wakes the timer thread. */
	pthread_t timer;            /**< Timer thread, for policies that idle. */
	int timer_started;          /**< @c timer runs. */
	int stopping;               /**< Threads are told to end. */
	uint64_t switches;          /**< Policy switches applied. */
	uint64_t control_applied;   /**< Control-file versions applied. */
	uint64_t control_rejected;  /**< Control-file versions refused. */
	uint64_t next_conn_id;      /**< Id of the next connection. */
	struct elvf_conn *conns;    /**< Every connection, newest first. */
	struct elv_qos qos;         /**< The QoS stage, when attached. */
	int qos_on;                 /**< @c qos is attached to the queue. */
	unsigned qos_dropping;      /**< Connections with drop_mclock set. */
	struct elvf_qos_rules ctl_qos; /**< QoS settings of the control file in force. */
	struct elvf_counts earlier; /**< Connections folded away to bound memory. */
	uint64_t nr_earlier;        /**< How many were folded into @c earlier. */
};

/** @brief The filter's state (one per nbdkit process). */
extern struct elvf elvf;

/** @brief Host time: CLOCK_MONOTONIC in nanoseconds. */
uint64_t elvf_now(void);
/** @brief Build the queue from elvf.prm. @return 0 or -1 after nbdkit_error(). */
int elvf_sched_init(void);
/** @brief Start the timer thread. @return 0 or -1 after nbdkit_error(). */
int elvf_sched_start(void);
/** @brief Stop the timer thread (idempotent). */
void elvf_sched_stop(void);
/** @brief Free the queue; every connection must be closed. */
void elvf_sched_fini(void);
/**
 * @brief Run one command through the queue (blocks until done).
 * @param io descriptor with next, conn, buf, offset, count, flags and kind set.
 * @param[out] err errno on failure.
 * @return 0 or -1.
 */
int elvf_submit(struct elvf_io *io, int *err);
/** @brief Apply settings to the live queue (caller holds the lock). @return 0 or -1. */
int elvf_apply_locked(const struct elvf_settings *s, const char *where);
/**
 * @brief Check @p ctl as the control file's QoS layer for every open connection, and with
 *        @p apply make it the layer in force and apply it (caller holds the lock).
 * @return 0 or -1 after nbdkit_error().
 */
int elvf_qos_apply_locked(const struct elvf_qos_rules *ctl, const char *where, int apply);
/**
 * @brief Register a new connection (c->export set or NULL).
 * @return 0 or -1 after nbdkit_error().
 */
int elvf_conn_open(struct elvf_conn *c);
/** @brief Retire a connection; its counts stay for the stats file. */
void elvf_conn_close(struct elvf_conn *c);
/** @brief Check the queue's invariants in debug builds (caller holds the lock). */
void elvf_debug_check(const char *after);

/* stats.c */
/** @brief Add one latency sample. */
void elvf_hist_add(struct elvf_hist *h, uint64_t ns);
/** @brief Fold @p from into @p to. */
void elvf_counts_fold(struct elvf_counts *to, const struct elvf_counts *from);
/** @brief Quantile @p q (0..1) of @p h in ns: the upper edge of the bucket it falls in. */
uint64_t elvf_hist_quantile(const struct elvf_hist *h, double q);
/** @brief Write the stats JSON to elvf.prm.stats_path. @return 0 or -1 after nbdkit_error(). */
int elvf_stats_write(void);

/* control.c */
/** @brief Read the control file once at start. @return 0 (missing is fine) or -1. */
int elvf_control_load(void);
/** @brief Start watching the control file. @return 0 or -1 after nbdkit_error(). */
int elvf_control_start(void);
/** @brief Stop watching (idempotent). */
void elvf_control_stop(void);

#endif /* ELVF_H */
