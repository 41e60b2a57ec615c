/**
 * @file elv_config.h
 * @brief Build configuration: defaults for every option, overridable by a user config header.
 *
 * Define ELV_CONFIG_FILE (for example -DELV_CONFIG_FILE='"my_elv_config.h"') to include a
 * header of your own first; everything it defines wins over the defaults below. No option
 * here changes the layout of a public struct.
 */
#ifndef ELEVATOR_ELV_CONFIG_H
#define ELEVATOR_ELV_CONFIG_H

#if defined(ELV_CONFIG_FILE)
#include ELV_CONFIG_FILE
#endif

/**
 * @def ELV_API
 * @brief Marks an exported function; the shared library hides everything else.
 */
#if !defined(ELV_API) || defined(__DOXYGEN__)
#if defined(_WIN32) && defined(ELV_BUILDING_SHARED)
#define ELV_API __declspec(dllexport)
#elif defined(_WIN32) && defined(ELV_USING_SHARED)
#define ELV_API __declspec(dllimport)
#elif defined(__GNUC__) || defined(__clang__)
#define ELV_API __attribute__((visibility("default")))
#else
#define ELV_API
#endif
#endif

/**
 * @def ELV_NO_MALLOC
 * @brief Define to compile out elv_queue_create()/elv_queue_destroy() (they return ELV_ENOSYS).
 */
#if defined(__DOXYGEN__)
#define ELV_NO_MALLOC
#endif

/**
 * @def ELV_NO_STRERROR
 * @brief Define to make elv_strerror() return "" and drop the message table.
 */
#if defined(__DOXYGEN__)
#define ELV_NO_STRERROR
#endif

/**
 * @def ELV_NO_CHECK
 * @brief Define to leave the invariant checkers out: elv_queue_check() returns ELV_ENOSYS and
 * the built-in policies have no @c check hook. For firmware that never calls the checker
 * (it is a test and debug aid); nothing else changes.
 */
#if defined(__DOXYGEN__)
#define ELV_NO_CHECK
#endif

/*
 * Features a firmware can leave out, in the manner of lwIP's opt.h: each ELV_NO_<feature>
 * defined in the user config header removes that code. An API whose feature is left out still
 * exists and returns ELV_ENOSYS, so hosts link unchanged; no option changes a public struct.
 * By default every feature is in. tests/embedded/freestanding/elv_min_config.h defines all of
 * them; docs/embedded.md lists what each one saves on a Cortex-M3.
 */

/**
 * @def ELV_NO_MERGE
 * @brief Define to leave out merging altogether: requests are never joined (as with
 * elv_config::no_merges set), the back-merge hash is neither kept nor allocated, and the
 * merge callbacks are never called. Implies ELV_NO_FRONT_MERGE and ELV_NO_REQ_MERGE.
 */
#if defined(__DOXYGEN__)
#define ELV_NO_MERGE
#endif

/**
 * @def ELV_NO_FRONT_MERGE
 * @brief Define to leave out front merges (a new request joined at the start of a queued
 * one): only back merges through the hash remain, and the start-sector filter is not kept.
 */
#if defined(__DOXYGEN__)
#define ELV_NO_FRONT_MERGE
#endif

/**
 * @def ELV_NO_REQ_MERGE
 * @brief Define to leave out request-to-request merges (two queued requests joined once a
 * merge made them contiguous).
 */
#if defined(__DOXYGEN__)
#define ELV_NO_REQ_MERGE
#endif

#if defined(ELV_NO_MERGE)
#if !defined(ELV_NO_FRONT_MERGE)
#define ELV_NO_FRONT_MERGE 1
#endif
#if !defined(ELV_NO_REQ_MERGE)
#define ELV_NO_REQ_MERGE 1
#endif
#endif

/**
 * @def ELV_NO_CANCEL
 * @brief Define to leave out elv_cancel() and elv_drain() (they return ELV_ENOSYS).
 */
#if defined(__DOXYGEN__)
#define ELV_NO_CANCEL
#endif

/**
 * @def ELV_NO_REQUEUE
 * @brief Define to leave out elv_requeue() (it returns ELV_ENOSYS) and the requeue list.
 */
#if defined(__DOXYGEN__)
#define ELV_NO_REQUEUE
#endif

/**
 * @def ELV_NO_BARRIER
 * @brief Define to leave out ordered requests: elv_add() of a request with ELV_RQ_BARRIER
 * returns ELV_ENOSYS and changes nothing.
 */
#if defined(__DOXYGEN__)
#define ELV_NO_BARRIER
#endif

/**
 * @def ELV_NO_SWITCH
 * @brief Define to leave out elv_switch() (it returns ELV_ENOSYS).
 */
#if defined(__DOXYGEN__)
#define ELV_NO_SWITCH
#endif

/**
 * @def ELV_NO_STREAMS
 * @brief Define to leave out streams: elv_stream_init(), elv_stream_exit() and
 * elv_stream_set_prio() return ELV_ENOSYS, so every request has no stream (elv_add() refuses
 * one with ELV_EINVAL, as for any unregistered stream). Every built-in policy works without
 * streams; anticipatory and CFQ then lose what they do per issuer (anticipation, per-issuer
 * time slices) and handle every request as one without a stream.
 */
#if defined(__DOXYGEN__)
#define ELV_NO_STREAMS
#endif

/**
 * @def ELV_NO_STATS
 * @brief Define to leave out statistics: elv_stats() and elv_policy_stat() return ELV_ENOSYS,
 * the core keeps no counters and the built-in policies have no @c stats hook.
 */
#if defined(__DOXYGEN__)
#define ELV_NO_STATS
#endif

/**
 * @def ELV_NO_TRACE
 * @brief Define to leave out tracing: elv_queue_init() with a elv_config::trace callback
 * returns ELV_ENOSYS, and no event is ever emitted.
 */
#if defined(__DOXYGEN__)
#define ELV_NO_TRACE
#endif

/**
 * @def ELV_NO_TUNABLES
 * @brief Define to leave out tunables by name: elv_tunable_get() and elv_tunable_set()
 * return ELV_ENOSYS. Policies still start with every tunable at its default.
 */
#if defined(__DOXYGEN__)
#define ELV_NO_TUNABLES
#endif

/**
 * @def ELV_POLICY_CHECK
 * @brief The value of a policy's @c check hook: @p fn, or NULL when ELV_NO_CHECK is defined
 * (then @p fn is neither called nor linked, and no unused-function warning is raised).
 */
#if defined(ELV_NO_CHECK)
#define ELV_POLICY_CHECK(fn) (1 ? NULL : (fn))
#else
#define ELV_POLICY_CHECK(fn) (fn)
#endif

/**
 * @def ELV_POLICY_STATS
 * @brief The value of a policy's @c stats hook: @p fn, or NULL when ELV_NO_STATS is defined.
 */
#if defined(ELV_NO_STATS)
#define ELV_POLICY_STATS(fn) (1 ? NULL : (fn))
#else
#define ELV_POLICY_STATS(fn) (fn)
#endif

/**
 * @def ELV_POLICY_MERGE
 * @brief The value of a policy's @c merged or @c allow_merge hook: @p fn, or NULL when
 * ELV_NO_MERGE is defined (nothing is ever merged).
 */
#if defined(ELV_NO_MERGE)
#define ELV_POLICY_MERGE(fn) (1 ? NULL : (fn))
#else
#define ELV_POLICY_MERGE(fn) (fn)
#endif

/**
 * @def ELV_POLICY_FRONT
 * @brief The value of a policy's @c find_next or @c find_start hook: @p fn, or NULL when
 * ELV_NO_FRONT_MERGE and ELV_NO_REQ_MERGE are both defined (the core then never looks a
 * request up by its start).
 */
#if defined(ELV_NO_FRONT_MERGE) && defined(ELV_NO_REQ_MERGE)
#define ELV_POLICY_FRONT(fn) (1 ? NULL : (fn))
#else
#define ELV_POLICY_FRONT(fn) (fn)
#endif

/**
 * @def ELV_POLICY_TUNED
 * @brief The value of a policy's @c tunable_changed hook: @p fn, or NULL when ELV_NO_TUNABLES
 * is defined (no tunable changes after the policy starts).
 */
#if defined(ELV_NO_TUNABLES)
#define ELV_POLICY_TUNED(fn) (1 ? NULL : (fn))
#else
#define ELV_POLICY_TUNED(fn) (fn)
#endif

#endif /* ELEVATOR_ELV_CONFIG_H */
