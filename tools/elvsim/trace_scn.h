/*
 * Real traces as elvsim scenarios: block traces recorded on Linux with
 * tools/capture/capture-trace.sh, committed compressed under traces/, replayed by name with
 * `elvsim run NAME` on any device model. Also reads compressed trace files for
 * `elvsim replay`.
 */
#ifndef ELVSIM_TRACE_SCN_H
#define ELVSIM_TRACE_SCN_H

#include <stddef.h>

#include "elevator/sim_trace.h"

/** One recorded trace that elvsim runs by name. */
struct trace_scn {
	const char *name;   /**< Scenario name, "trace-..." */
	const char *file;   /**< File under the trace directory (xz-compressed ftrace text). */
	const char *device; /**< Device model it is set against. */
	const char *desc;   /**< One line for elvsim list. */
};

/** The i-th trace scenario, or NULL past the end. */
const struct trace_scn *trace_scn_at(unsigned i);

/** The trace scenario called @p name, or NULL. */
const struct trace_scn *trace_scn_find(const char *name);

/**
 * Path of a scenario's trace: $ELV_TRACE_DIR/file when that variable is set, else the
 * traces/ folder of the source tree elvsim was built from. 0, or -1 when it does not fit.
 */
int trace_scn_path(const struct trace_scn *s, char *buf, size_t len);

/**
 * elv_trace_load() that also reads files ending in .xz or .gz, through "xz -dc" or
 * "gzip -dc" (the decompressor must be installed). Same results and messages.
 */
int trace_read_any(const char *path, enum elv_trace_format fmt, struct elv_trace_rec **recs,
		   size_t *n, char *err, size_t errlen);

#endif /* ELVSIM_TRACE_SCN_H */
