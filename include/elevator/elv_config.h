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

#endif /* ELEVATOR_ELV_CONFIG_H */
