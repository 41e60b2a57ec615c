/*
 * nbdkit-elvdisk-plugin: a disk you can feel.
 *
 * Stores data (sparse memory, or a backing file with file=) and completes every request after
 * the service time the simulator's device model gives it, in real time. The model runs in its
 * own clock, model time = (monotonic time - start) / timescale; one drive thread feeds it
 * commands in arrival order while it has free slots (its own queue depth), lets it pick among
 * the commands it holds the way the modelled drive does, and wakes each waiting request at its
 * modelled completion. Data is read and written before the wait, under its own lock, so what
 * a client reads never depends on timing.
 */
#define _GNU_SOURCE 1 /* fallocate */
#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <elevator/sim.h>

#define THREAD_MODEL NBDKIT_THREAD_MODEL_PARALLEL

#define SECTOR 512u
#define CHUNK_SHIFT 16u /* 64 KiB data chunks, allocated on first write */
#define CHUNK (1u << CHUNK_SHIFT)
#define L2_SHIFT 10u /* 1024 chunks (64 MiB) per second-level table */
#define L2_SIZE (1u << L2_SHIFT)
#define MAX_TIMESCALE 1000.0

/* ---- parameters ---------------------------------------------------------------------- */

static const char *model_name = "ide2003";
static char *backing_path;
static int64_t size_param = -1;
static double timescale = 1.0;
static char *report_path;
static struct elv_sim_dev_params params;

/* ---- data store ---------------------------------------------------------------------- */

static pthread_rwlock_t data_lock = PTHREAD_RWLOCK_INITIALIZER;
static uint8_t ***pages; /* pages[l1][l2] -> CHUNK bytes, or NULL while never written */
static size_t nr_l1;
static int backing_fd = -1;
static uint64_t disk_size;

/* ---- the modelled drive -------------------------------------------------------------- */

/* One NBD command on its way through the modelled drive. */
struct cmd {
	struct elv_sim_io io;
	uint64_t arrival; /* model time it reached the drive */
	struct cmd *next; /* arrival-order line of commands the drive has no slot for yet */
	pthread_cond_t done_cv;
	int done;
};

static pthread_mutex_t drive_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t drive_cv; /* wakes the drive thread (CLOCK_MONOTONIC) */
static struct elv_sim_dev *dev;
static struct cmd *line_head, **line_tail = &line_head;
static uint64_t t0_ns;    /* monotonic time of model time 0 */
static uint64_t clock_ns; /* latest model time the device was driven at */
static pthread_t drive_thread;
static int drive_running, drive_stop;

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t model_now(void)
{
	return (uint64_t)((double)(mono_ns() - t0_ns) / timescale);
}

static struct timespec real_deadline(uint64_t model_ns)
{
	double real = (double)t0_ns + (double)model_ns * timescale;
	struct timespec ts;
	uint64_t r = real >= 1.8e19 ? UINT64_MAX / 2 : (uint64_t)real;

	ts.tv_sec = (time_t)(r / 1000000000u);
	ts.tv_nsec = (long)(r % 1000000000u);
	return ts;
}

static void finish_cmd(struct cmd *c)
{
	c->done = 1;
	pthread_cond_signal(&c->done_cv);
}

/*
 * Run the model up to model time @now, one event at a time in time order: a command in the
 * line enters a free slot at its arrival (or when the slot freed up), and the device finishes
 * its current command at the time it named. Called with drive_lock held.
 */
static void advance(uint64_t now)
{
	int refused = 0;

	for (;;) {
		uint64_t next = elv_sim_dev_next(dev);

		if (line_head && !refused && elv_sim_dev_slots(dev) > 0) {
			struct cmd *c = line_head;
			uint64_t at = c->arrival > clock_ns ? c->arrival : clock_ns;

			if (next == ELV_TIME_NEVER || at < next || next > now) {
				if (elv_sim_dev_submit(dev, &c->io, at) == 0) {
					line_head = c->next;
					if (!line_head)
						line_tail = &line_head;
					clock_ns = at;
				} else {
					refused = 1; /* the drive answered BUSY: retry after a completion */
				}
				continue;
			}
		}
		if (next == ELV_TIME_NEVER || next > now)
			break;
		finish_cmd(elv_sim_dev_finish(dev, next)->ctx);
		if (next > clock_ns)
			clock_ns = next;
		refused = 0;
	}
}

static void *drive_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&drive_lock);
	while (!drive_stop) {
		uint64_t next;

		advance(model_now());
		next = elv_sim_dev_next(dev);
		if (next == ELV_TIME_NEVER) {
			pthread_cond_wait(&drive_cv, &drive_lock);
		} else {
			struct timespec ts = real_deadline(next);

			pthread_cond_timedwait(&drive_cv, &drive_lock, &ts);
		}
	}
	pthread_mutex_unlock(&drive_lock);
	return NULL;
}

/* Put one command through the modelled drive and wait for its modelled completion. */
static int model_io(uint8_t op, uint64_t offset, uint64_t count)
{
	struct cmd c;
	uint64_t first = offset / SECTOR;
	uint64_t end = (offset + count + SECTOR - 1) / SECTOR;

	memset(&c, 0, sizeof(c));
	if (pthread_cond_init(&c.done_cv, NULL)) {
		nbdkit_error("elvdisk: cannot create a condition variable");
		return -1;
	}
	c.io.sector = first;
	c.io.nr_sectors = (uint32_t)(end - first);
	c.io.op = op;
	c.io.ctx = &c;
	pthread_mutex_lock(&drive_lock);
	c.arrival = model_now();
	*line_tail = &c;
	line_tail = &c.next;
	pthread_cond_signal(&drive_cv);
	while (!c.done)
		pthread_cond_wait(&c.done_cv, &drive_lock);
	pthread_mutex_unlock(&drive_lock);
	pthread_cond_destroy(&c.done_cv);
	return 0;
}

/* ---- data ---------------------------------------------------------------------------- */

static uint8_t *chunk_at(uint64_t idx, int create)
{
	uint8_t **l2 = pages[idx >> L2_SHIFT];

	if (!l2) {
		if (!create)
			return NULL;
		l2 = calloc(L2_SIZE, sizeof(*l2));
		if (!l2)
			return NULL;
		pages[idx >> L2_SHIFT] = l2;
	}
	if (!l2[idx & (L2_SIZE - 1)] && create)
		l2[idx & (L2_SIZE - 1)] = calloc(1, CHUNK);
	return l2[idx & (L2_SIZE - 1)];
}

static int mem_read(void *buf, uint32_t count, uint64_t offset)
{
	uint8_t *out = buf;

	pthread_rwlock_rdlock(&data_lock);
	while (count) {
		uint32_t in = (uint32_t)(offset & (CHUNK - 1));
		uint32_t n = CHUNK - in < count ? CHUNK - in : count;
		const uint8_t *ch = chunk_at(offset >> CHUNK_SHIFT, 0);

		if (ch)
			memcpy(out, ch + in, n);
		else
			memset(out, 0, n);
		out += n;
		offset += n;
		count -= n;
	}
	pthread_rwlock_unlock(&data_lock);
	return 0;
}

/* Write @buf, or zeros when it is NULL (chunks wholly zeroed are given back). */
static int mem_write(const void *buf, uint32_t count, uint64_t offset)
{
	const uint8_t *in_buf = buf;
	int r = 0;

	pthread_rwlock_wrlock(&data_lock);
	while (count) {
		uint64_t idx = offset >> CHUNK_SHIFT;
		uint32_t in = (uint32_t)(offset & (CHUNK - 1));
		uint32_t n = CHUNK - in < count ? CHUNK - in : count;

		if (!in_buf && n == CHUNK) {
			uint8_t **l2 = pages[idx >> L2_SHIFT];

			if (l2) {
				free(l2[idx & (L2_SIZE - 1)]);
				l2[idx & (L2_SIZE - 1)] = NULL;
			}
		} else {
			uint8_t *ch = chunk_at(idx, in_buf != NULL);

			if (!ch && in_buf) {
				nbdkit_error("elvdisk: out of memory");
				r = ENOMEM;
				break;
			}
			if (ch && in_buf)
				memcpy(ch + in, in_buf, n);
			else if (ch)
				memset(ch + in, 0, n);
		}
		if (in_buf)
			in_buf += n;
		offset += n;
		count -= n;
	}
	pthread_rwlock_unlock(&data_lock);
	if (r)
		errno = r;
	return r ? -1 : 0;
}

static int file_read(void *buf, uint32_t count, uint64_t offset)
{
	uint8_t *p = buf;

	while (count) {
		ssize_t n = pread(backing_fd, p, count, (off_t)offset);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			nbdkit_error("elvdisk: pread: %m");
			return -1;
		}
		if (n == 0) { /* past the end of a file shorter than the disk: zeros */
			memset(p, 0, count);
			break;
		}
		p += n;
		offset += (uint64_t)n;
		count -= (uint32_t)n;
	}
	return 0;
}

static int file_write(const void *buf, uint32_t count, uint64_t offset)
{
	static const uint8_t zeros[CHUNK];
	const uint8_t *p = buf;

	while (count) {
		uint32_t len = buf ? count : (count < CHUNK ? count : CHUNK);
		ssize_t n = pwrite(backing_fd, buf ? p : zeros, len, (off_t)offset);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			nbdkit_error("elvdisk: pwrite: %m");
			return -1;
		}
		if (buf)
			p += n;
		offset += (uint64_t)n;
		count -= (uint32_t)n;
	}
	return 0;
}

/* Zero a range; a backing file gets a hole when the file system can make one. */
static int file_zero(uint32_t count, uint64_t offset)
{
#ifdef FALLOC_FL_PUNCH_HOLE
	if (fallocate(backing_fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)offset,
		      (off_t)count) == 0)
		return 0;
#endif
	return file_write(NULL, count, offset);
}

/* ---- nbdkit callbacks ---------------------------------------------------------------- */

/* Bytes, or K, M, G, T (powers of 1024, "KiB" spelling too); one error line from the caller. */
static int parse_size(const char *s, int64_t *out)
{
	static const char units[] = "KMGT";
	unsigned long long v;
	const char *u;
	char *end;
	unsigned shift = 0;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -1;
	if (*end) {
		u = strchr(units, end[0] >= 'a' ? end[0] - 'a' + 'A' : end[0]);
		if (!u || !*u)
			return -1;
		shift = 10u * (unsigned)(u - units + 1);
		end++;
		if (*end && strcmp(end, "iB") != 0 && strcmp(end, "B") != 0)
			return -1;
	}
	if (v == 0 || v > (unsigned long long)INT64_MAX >> shift)
		return -1;
	*out = (int64_t)(v << shift);
	return 0;
}

static int elvdisk_config(const char *key, const char *value)
{
	if (strcmp(key, "model") == 0) {
		model_name = value;
	} else if (strcmp(key, "file") == 0) {
		free(backing_path);
		backing_path = nbdkit_absolute_path(value);
		if (!backing_path)
			return -1;
	} else if (strcmp(key, "size") == 0) {
		if (parse_size(value, &size_param) < 0) {
			nbdkit_error("size=%s: not a positive size (bytes, or with K, M, G, T)",
				     value);
			return -1;
		}
	} else if (strcmp(key, "report") == 0) {
		free(report_path);
		report_path = nbdkit_absolute_path(value);
		if (!report_path)
			return -1;
	} else if (strcmp(key, "timescale") == 0) {
		char *end;

		errno = 0;
		timescale = strtod(value, &end);
		if (errno || end == value || *end || !(timescale > 0) ||
		    timescale > MAX_TIMESCALE) {
			nbdkit_error("timescale=%s: not a number in (0, %g]", value,
				     MAX_TIMESCALE);
			return -1;
		}
	} else {
		nbdkit_error("%s: unknown parameter", key);
		return -1;
	}
	return 0;
}

/* model= is a preset name, or else a parameter file. */
static int load_model(void)
{
	char err[256];
	int r;

	memset(&params, 0, sizeof(params));
	if (elv_sim_preset(model_name, &params) == 0) {
		r = elv_sim_param_finish(&params);
		if (r) {
			nbdkit_error("model=%s: %s", model_name, elv_strerror(r));
			return -1;
		}
		return 0;
	}
	if (access(model_name, R_OK) != 0) {
		nbdkit_error("model=%s: neither a preset (see elvsim list) nor a readable file",
			     model_name);
		return -1;
	}
	err[0] = '\0';
	r = elv_sim_param_load(model_name, &params, err, sizeof(err));
	if (r == 0)
		r = elv_sim_param_finish(&params);
	if (r) {
		nbdkit_error("model=%s: %s", model_name, err[0] ? err : elv_strerror(r));
		return -1;
	}
	return 0;
}

static int open_backing(void)
{
	struct stat st;

	backing_fd = open(backing_path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (backing_fd < 0 || fstat(backing_fd, &st) != 0) {
		nbdkit_error("file=%s: %m", backing_path);
		return -1;
	}
	if (size_param < 0) {
		if (st.st_size <= 0) {
			nbdkit_error("file=%s: empty file and no size= given", backing_path);
			return -1;
		}
		size_param = st.st_size;
	} else if (st.st_size < size_param && ftruncate(backing_fd, size_param) != 0) {
		nbdkit_error("file=%s: cannot extend to size=%" PRIi64 ": %m", backing_path,
			     size_param);
		return -1;
	}
	return 0;
}

static int elvdisk_config_complete(void)
{
	uint64_t cap;

	if (load_model() < 0)
		return -1;
	cap = params.capacity * SECTOR;
	if (backing_path && open_backing() < 0)
		return -1;
	disk_size = size_param < 0 ? cap : (uint64_t)size_param;
	if (disk_size > cap) {
		nbdkit_error("size=%" PRIu64 ": larger than the model's capacity (%" PRIu64
			     " bytes)", disk_size, cap);
		return -1;
	}
	if (disk_size % SECTOR) {
		nbdkit_error("size=%" PRIu64 ": not a multiple of %u", disk_size, SECTOR);
		return -1;
	}
	if (!backing_path) {
		nr_l1 = (size_t)(((disk_size + CHUNK - 1) >> CHUNK_SHIFT) + L2_SIZE - 1) >> L2_SHIFT;
		pages = calloc(nr_l1, sizeof(*pages));
		if (!pages) {
			nbdkit_error("size=%" PRIu64 ": out of memory", disk_size);
			return -1;
		}
	}
	return 0;
}

static int elvdisk_get_ready(void)
{
	int r = elv_sim_dev_create(&dev, &params);

	if (r) {
		nbdkit_error("model=%s: %s", model_name, elv_strerror(r));
		return -1;
	}
	return 0;
}

/* The drive thread starts after nbdkit has forked into the background. */
static int elvdisk_after_fork(void)
{
	pthread_condattr_t attr;
	int r;

	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	r = pthread_cond_init(&drive_cv, &attr);
	pthread_condattr_destroy(&attr);
	if (r) {
		nbdkit_error("elvdisk: cannot create a condition variable");
		return -1;
	}
	t0_ns = mono_ns();
	r = pthread_create(&drive_thread, NULL, drive_main, NULL);
	if (r) {
		errno = r;
		nbdkit_error("elvdisk: cannot start the drive thread: %m");
		return -1;
	}
	drive_running = 1;
	return 0;
}

static void elvdisk_cleanup(void)
{
	if (drive_running) {
		pthread_mutex_lock(&drive_lock);
		drive_stop = 1;
		pthread_cond_signal(&drive_cv);
		pthread_mutex_unlock(&drive_lock);
		pthread_join(drive_thread, NULL);
		pthread_cond_destroy(&drive_cv);
		drive_running = 0;
	}
}

/*
 * report=FILE: what the model did, next to the real time it took, so a test can check that
 * the plugin keeps to the model's clock.
 */
static void write_report(void)
{
	struct elv_sim_dev_stats st;
	FILE *f;

	if (!report_path || !dev)
		return;
	f = fopen(report_path, "w");
	if (!f)
		return;
	elv_sim_dev_get_stats(dev, &st);
	fprintf(f,
		"{\"model\": \"%s\", \"timescale\": %g, \"commands\": %" PRIu64
		", \"busy_ms\": %.3f, \"cache_hits\": %" PRIu64 "}\n",
		params.name, timescale, st.commands, (double)st.busy_ns / 1e6, st.cache_hits);
	fclose(f);
}

static void elvdisk_unload(void)
{
	size_t i, j;

	elvdisk_cleanup();
	write_report();
	free(report_path);
	report_path = NULL;
	elv_sim_dev_destroy(dev);
	dev = NULL;
	for (i = 0; pages && i < nr_l1; i++) {
		for (j = 0; pages[i] && j < L2_SIZE; j++)
			free(pages[i][j]);
		free(pages[i]);
	}
	free(pages);
	pages = NULL;
	if (backing_fd >= 0)
		close(backing_fd);
	backing_fd = -1;
	free(backing_path);
	backing_path = NULL;
}

static void *elvdisk_open(int readonly)
{
	static int handle;

	(void)readonly;
	return &handle;
}

static int64_t elvdisk_get_size(void *handle)
{
	(void)handle;
	return (int64_t)disk_size;
}

/* Clients (and filters in front) learn whether the modelled device seeks. */
static int elvdisk_is_rotational(void *handle)
{
	(void)handle;
	return params.kind == ELV_SIM_DEV_DISK;
}

static int elvdisk_can_multi_conn(void *handle)
{
	(void)handle;
	return 1; /* one store shared by every connection; flush covers all of them */
}

static int elvdisk_can_fua(void *handle)
{
	(void)handle;
	return NBDKIT_FUA_EMULATE;
}

static int elvdisk_pread(void *handle, void *buf, uint32_t count, uint64_t offset,
			 uint32_t flags)
{
	int r;

	(void)handle;
	(void)flags;
	r = backing_path ? file_read(buf, count, offset) : mem_read(buf, count, offset);
	return r < 0 ? r : model_io(ELV_OP_READ, offset, count);
}

static int elvdisk_pwrite(void *handle, const void *buf, uint32_t count, uint64_t offset,
			  uint32_t flags)
{
	int r;

	(void)handle;
	(void)flags;
	r = backing_path ? file_write(buf, count, offset) : mem_write(buf, count, offset);
	return r < 0 ? r : model_io(ELV_OP_WRITE, offset, count);
}

static int elvdisk_zero(void *handle, uint32_t count, uint64_t offset, uint32_t flags)
{
	int r;

	(void)handle;
	(void)flags;
	r = backing_path ? file_zero(count, offset) : mem_write(NULL, count, offset);
	/* The drive writes the zeros: a real disk without WRITE SAME pays for the transfer. */
	return r < 0 ? r : model_io(ELV_OP_WRITE, offset, count);
}

static int elvdisk_trim(void *handle, uint32_t count, uint64_t offset, uint32_t flags)
{
	int r;

	(void)handle;
	(void)flags;
	r = backing_path ? file_zero(count, offset) : mem_write(NULL, count, offset);
	return r < 0 ? r : model_io(ELV_OP_DISCARD, offset, count);
}

static int elvdisk_flush(void *handle, uint32_t flags)
{
	(void)handle;
	(void)flags;
	if (backing_path && fdatasync(backing_fd) != 0) {
		nbdkit_error("elvdisk: fdatasync: %m");
		return -1;
	}
	return model_io(ELV_OP_FLUSH, 0, 0);
}

static struct nbdkit_plugin plugin = {
	.name = "elvdisk",
	.longname = "libelevator emulated disk",
	.version = "0.1.0",
	.description = "A disk that completes requests after a device model's service time",
	.config = elvdisk_config,
	.config_complete = elvdisk_config_complete,
	.config_help = "model=PRESET|FILE      Device model: barracuda, ide2003 (default), ssd,\n"
		       "                       usb-stick, null, or a parameter file.\n"
		       "size=SIZE              Disk size (default: the model's capacity).\n"
		       "file=PATH              Keep the data in this file (default: memory).\n"
		       "timescale=X            Real time per modelled time (0.1: ten times\n"
		       "                       faster than the model; default 1).\n"
		       "report=FILE            At exit, write the model's counters (JSON).",
	.get_ready = elvdisk_get_ready,
	.after_fork = elvdisk_after_fork,
	.cleanup = elvdisk_cleanup,
	.unload = elvdisk_unload,
	.open = elvdisk_open,
	.get_size = elvdisk_get_size,
	.is_rotational = elvdisk_is_rotational,
	.can_multi_conn = elvdisk_can_multi_conn,
	.can_fua = elvdisk_can_fua,
	.pread = elvdisk_pread,
	.pwrite = elvdisk_pwrite,
	.zero = elvdisk_zero,
	.trim = elvdisk_trim,
	.flush = elvdisk_flush,
	.errno_is_preserved = 1,
};

NBDKIT_REGISTER_PLUGIN(plugin)
