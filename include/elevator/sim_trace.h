/**
 * @file sim_trace.h
 * @brief Trace readers of the research harness: blktrace, blkparse, SNIA MSR, fio iologs and
 *        the Linux block tracepoints as text (ftrace).
 *
 * Each reader turns a recorded block-I/O trace into one array of normalized arrival records,
 * sorted by time and relative to the earliest one, ready for open-loop replay. Malformed input
 * never crashes a reader: it returns ELV_EINVAL and a message that names the file, the line
 * (or binary record) and the field. Hosted code: the readers use malloc and stdio.
 * docs/traces.md describes every format, which events are kept and how bytes become sectors.
 */
#ifndef ELEVATOR_SIM_TRACE_H
#define ELEVATOR_SIM_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "elevator/elevator.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @defgroup elv_trace Trace readers
 * @{
 */

/** @brief Longest text line the readers accept, in bytes, without its line ending. */
#define ELV_TRACE_LINE_MAX 4096

/** @brief A buffer of this many bytes holds any error message of the readers in full. */
#define ELV_TRACE_ERR_MAX 512

/**
 * @brief One arrival of a replayed trace.
 *
 * A flush has @c nr_sectors 0 and @c sector 0; every other record has at least one sector,
 * and @c sector + @c nr_sectors never passes 2^64.
 */
struct elv_trace_rec {
	uint64_t time_ns;    /**< Arrival, nanoseconds after the earliest record of the trace. */
	uint64_t sector;     /**< First sector (512-byte units). */
	uint32_t nr_sectors; /**< Length in sectors. */
	uint8_t op;          /**< enum elv_op. */
	uint8_t sync;        /**< 1 when someone waits for it: reads, flushes, SYNC-marked I/O. */
	uint16_t pad;        /**< Zero. */
	uint32_t pid;        /**< Issuing process, or 0 when the format does not record one. */
	uint64_t service_ns; /**< Recorded service time (issue to completion), or 0 when the
				  trace does not hold both (ftrace only, for now). */
};

/** @brief Trace file formats the readers understand. */
enum elv_trace_format {
	ELV_TRACE_BLKTRACE, /**< blktrace binary records, versions 7 and 8, either byte order. */
	ELV_TRACE_BLKPARSE, /**< blkparse text in its default output format. */
	ELV_TRACE_MSR,      /**< SNIA IOTTA MSR Cambridge CSV. */
	ELV_TRACE_FIO,      /**< fio iolog, versions 2 and 3. */
	ELV_TRACE_FTRACE    /**< Linux block tracepoints as text: tracefs, perf script, trace-cmd. */
};

/**
 * @brief Look a format up by name.
 * @param name "blktrace", "blkparse", "msr", "fio" or "ftrace".
 * @param[out] fmt the format.
 * @retval 0 found.
 * @retval ELV_EINVAL NULL argument or unknown name (@p fmt untouched).
 */
ELV_API int elv_trace_parse_format(const char *name, enum elv_trace_format *fmt);

/**
 * @brief The name of a format, as elv_trace_parse_format() accepts it.
 * @return a static string, or "?" for a value outside the enum.
 */
ELV_API const char *elv_trace_format_name(enum elv_trace_format fmt);

/**
 * @brief Read a whole trace file.
 *
 * Records come back sorted by time (stable: equal times keep their order in the file), with
 * the earliest at time 0. An input without any kept event gives @p n 0 and @p recs NULL.
 * @param path file to read.
 * @param fmt its format.
 * @param[out] recs a malloc'ed array to release with elv_trace_free(); NULL on error.
 * @param[out] n number of records.
 * @param[out] err on error, "file:line: field: message" (text formats) or
 *             "file:record N: field: message" (blktrace); may be NULL. ELV_TRACE_ERR_MAX
 *             bytes hold any message; shorter buffers get a truncated one.
 * @param errlen bytes at @p err.
 * @retval 0 success.
 * @retval ELV_EINVAL malformed input, unreadable file or bad argument.
 * @retval ELV_ENOENT @p path does not exist.
 * @retval ELV_ENOMEM out of memory.
 */
ELV_API int elv_trace_load(const char *path, enum elv_trace_format fmt,
			   struct elv_trace_rec **recs, size_t *n, char *err, size_t errlen);

/**
 * @brief Read a trace held in memory (fuzzers and tests use it); as elv_trace_load().
 * @param buf the trace bytes (need not be NUL-terminated; NULL only when @p len is 0).
 * @param len bytes at @p buf.
 * @param name file name used in error messages (NULL gives "<memory>").
 */
ELV_API int elv_trace_load_mem(const void *buf, size_t len, const char *name,
			       enum elv_trace_format fmt, struct elv_trace_rec **recs, size_t *n,
			       char *err, size_t errlen);

/** @brief Release records from elv_trace_load() or elv_trace_load_mem(); NULL is fine. */
ELV_API void elv_trace_free(struct elv_trace_rec *recs);

/** @} */

#ifdef __cplusplus
}
#endif

#endif /* ELEVATOR_SIM_TRACE_H */
