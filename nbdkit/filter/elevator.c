/*
 * nbdkit-elevator-filter: a libelevator policy in front of any nbdkit plugin.
 *
 *   nbdkit --filter=elevator PLUGIN [policy=NAME] [depth=N] [rotational=BOOL]
 *          [stream=connection|none] [ioprio=CLASS,LEVEL] [stats=FILE] [control=FILE]
 *          [TUNABLE=VALUE ...] [QoS settings ...] [plugin parameters]
 *
 * pread, pwrite, trim, zero and flush go through the queue; at most depth of them run in
 * the plugin at once, in the policy's order. Everything else (size, capabilities, extents,
 * cache) passes straight through. See docs/nbdkit.md.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nbdkit-filter.h>

#include "elvf.h"

static char help_text[2048];

/* The help text lists the built-in policies, which scripts read to iterate over them. */
static void elevator_load(void)
{
	const struct elv_policy *p;
	size_t used;
	unsigned i;

	used = (size_t)snprintf(help_text, sizeof(help_text), "%s",
		"policy=NAME             Scheduling policy (default: recommended for the device).\n"
		"depth=N                 Requests in the plugin at once (default 1 rotational, "
		"else 32).\n"
		"rotational=BOOL         The device seeks (default false).\n"
		"stream=connection|none  One stream per connection, or none (default connection).\n"
		"ioprio=CLASS[,LEVEL]    I/O priority of the connections: rt, be or idle, 0-7.\n"
		"stats=FILE              Write statistics as JSON at exit.\n"
		"control=FILE            Apply policy=, tunables and QoS from FILE when it "
		"changes.\n"
		"limit-iops=N limit-bps=N burst-iops=N burst-bps=N (also -read, -write)\n"
		"burst-length=S iops-size=BYTES  Throttle each connection (QEMU's rules).\n"
		"mclock-reservation=N mclock-weight=N mclock-limit=N  mClock per connection.\n"
		"export.NAME.KEY=V conn.N.KEY=V  QoS for one export name or connection.\n"
		"qos-at-limit=wait|allow  mClock at a connection's limit (default wait).\n"
		"TUNABLE=VALUE           Any tunable of the policy, by its sysfs name.\n"
		"Built-in policies:");
	for (i = 0; (p = elv_policy_at(i)) != NULL && used < sizeof(help_text); i++)
		used += (size_t)snprintf(help_text + used, sizeof(help_text) - used, " %s",
					 elv_policy_name(p));
}

static void elevator_unload(void)
{
	elvf_sched_fini();
}

static int elevator_config(nbdkit_next_config *next, nbdkit_backend *nxdata, const char *key,
			   const char *value)
{
	if (!elvf_param_is_ours(key))
		return next(nxdata, key, value);
	return elvf_param_set(&elvf.prm, key, value);
}

/* The directory of a file we will write (W_OK) or watch (R_OK) must be usable now, not only
 * at first use. */
static int check_dir(const char *key, const char *path, int mode)
{
	char *dir = strdup(path), *slash;
	struct stat st;
	int ok;

	if (!dir)
		return -1;
	slash = strrchr(dir, '/');
	*(slash == dir ? slash + 1 : slash) = '\0';
	ok = stat(dir, &st) == 0 && S_ISDIR(st.st_mode) && access(dir, mode | X_OK) == 0;
	if (!ok)
		nbdkit_error("%s=%s: directory %s is missing or not %s", key, path, dir,
			     mode == W_OK ? "writable" : "readable");
	free(dir);
	return ok ? 0 : -1;
}

static int elevator_config_complete(nbdkit_next_config_complete *next, nbdkit_backend *nxdata)
{
	if (elvf_params_finish(&elvf.prm) < 0)
		return -1;
	if (elvf.prm.stats_path && check_dir("stats", elvf.prm.stats_path, W_OK) < 0)
		return -1;
	if (elvf.prm.control_path && check_dir("control", elvf.prm.control_path, R_OK) < 0)
		return -1;
	if (elvf_sched_init() < 0 || elvf_control_load() < 0)
		return -1;
	return next(nxdata);
}

static int elevator_thread_model(void)
{
	return NBDKIT_THREAD_MODEL_PARALLEL;
}

/* Threads start after nbdkit has forked into the background. */
static int elevator_after_fork(nbdkit_backend *nxdata)
{
	(void)nxdata;
	if (elvf_sched_start() < 0 || elvf_control_start() < 0)
		return -1;
	nbdkit_debug("elevator: policy %s, depth %u, stream %s",
		     elv_policy_name(elv_queue_policy(elvf.q)), elvf.prm.depth,
		     elvf.prm.stream_mode == ELVF_STREAM_CONNECTION ? "connection" : "none");
	return 0;
}

static void elevator_cleanup(nbdkit_backend *nxdata)
{
	(void)nxdata;
	elvf_control_stop();
	elvf_sched_stop();
	if (elvf.prm.stats_path && elvf.q)
		elvf_stats_write();
}

static void *elevator_open(nbdkit_next_open *next, nbdkit_context *nxdata, int readonly,
			   const char *exportname, int is_tls)
{
	struct elvf_conn *c;

	(void)is_tls;
	if (next(nxdata, readonly, exportname) == -1)
		return NULL;
	c = calloc(1, sizeof(*c));
	if (c)
		c->export = strdup(exportname ? exportname : "");
	if (!c || !c->export) {
		nbdkit_error("calloc: %s", strerror(errno));
		free(c);
		return NULL;
	}
	if (elvf_conn_open(c) < 0) {
		free(c->export);
		free(c);
		return NULL;
	}
	return c;
}

/* The connection's record stays with the queue for the stats file. */
static void elevator_close(void *handle)
{
	elvf_conn_close(handle);
}

static int run(nbdkit_next *next, void *handle, enum elvf_kind kind, void *buf, uint32_t count,
	       uint64_t offset, uint32_t flags, int *err)
{
	struct elvf_io io;

	/* An empty command has nothing to order. */
	if (count == 0 && kind != ELVF_FLUSH)
		return 0;
	memset(&io, 0, sizeof(io));
	io.next = next;
	io.conn = handle;
	io.buf = buf;
	io.count = count;
	io.offset = offset;
	io.flags = flags;
	io.kind = (uint8_t)kind;
	return elvf_submit(&io, err);
}

static int elevator_pread(nbdkit_next *next, void *handle, void *buf, uint32_t count,
			  uint64_t offset, uint32_t flags, int *err)
{
	return run(next, handle, ELVF_READ, buf, count, offset, flags, err);
}

static int elevator_pwrite(nbdkit_next *next, void *handle, const void *buf, uint32_t count,
			   uint64_t offset, uint32_t flags, int *err)
{
	/* The buffer is only read from: run() hands it to pwrite or copies out of it. */
	return run(next, handle, ELVF_WRITE, (void *)(uintptr_t)buf, count, offset, flags, err);
}

static int elevator_trim(nbdkit_next *next, void *handle, uint32_t count, uint64_t offset,
			 uint32_t flags, int *err)
{
	return run(next, handle, ELVF_TRIM, NULL, count, offset, flags, err);
}

static int elevator_zero(nbdkit_next *next, void *handle, uint32_t count, uint64_t offset,
			 uint32_t flags, int *err)
{
	return run(next, handle, ELVF_ZERO, NULL, count, offset, flags, err);
}

static int elevator_flush(nbdkit_next *next, void *handle, uint32_t flags, int *err)
{
	return run(next, handle, ELVF_FLUSH, NULL, 0, 0, flags, err);
}

static struct nbdkit_filter filter = {
	.name = "elevator",
	.longname = "nbdkit elevator filter (libelevator I/O scheduling)",
	.description = "Orders I/O through a libelevator policy",
	.load = elevator_load,
	.unload = elevator_unload,
	.config = elevator_config,
	.config_complete = elevator_config_complete,
	.config_help = help_text,
	.thread_model = elevator_thread_model,
	.after_fork = elevator_after_fork,
	.cleanup = elevator_cleanup,
	.open = elevator_open,
	.close = elevator_close,
	.pread = elevator_pread,
	.pwrite = elevator_pwrite,
	.trim = elevator_trim,
	.zero = elevator_zero,
	.flush = elevator_flush,
};

NBDKIT_REGISTER_FILTER(filter)
