/*
 * config.h for building cmocka's src/cmocka.c (fetched from Debian, never committed) with a
 * cross compiler, in place of the one cmocka's own CMake would generate.
 *
 * Two kinds of target: a Linux libc (armhf, s390x under qemu-user) and a bare-metal picolibc
 * (Cortex-M3 under QEMU with semihosting). Bare metal has no sigsetjmp, no clock and no
 * thread-local storage, so those stay undefined there; everything else is standard C.
 */
#ifndef ELV_EMBEDDED_CMOCKA_CONFIG_H
#define ELV_EMBEDDED_CMOCKA_CONFIG_H

#define PACKAGE "cmocka"
#define VERSION "1.1.5"

#define HAVE_ASSERT_H 1
#define HAVE_INTTYPES_H 1
#define HAVE_MALLOC_H 1
#define HAVE_SETJMP_H 1
#define HAVE_SIGNAL_H 1
#define HAVE_STDARG_H 1
#define HAVE_STDDEF_H 1
#define HAVE_STDINT_H 1
#define HAVE_STDIO_H 1
#define HAVE_STDLIB_H 1
#define HAVE_STRING_H 1
#define HAVE_STRINGS_H 1
#define HAVE_TIME_H 1

#define HAVE_CALLOC 1
#define HAVE_EXIT 1
#define HAVE_FPRINTF 1
#define HAVE_SNPRINTF 1
#define HAVE_VSNPRINTF 1
#define HAVE_FREE 1
#define HAVE_LONGJMP 1
#define HAVE_MALLOC 1
#define HAVE_MEMCPY 1
#define HAVE_MEMSET 1
#define HAVE_PRINTF 1
#define HAVE_SETJMP 1
#define HAVE_SIGNAL 1
#define HAVE_STRCMP 1
#define HAVE_STRCPY 1

#if defined(__linux__)
#define HAVE_DLFCN_H 1
#define HAVE_MEMORY_H 1
#define HAVE_SYS_STAT_H 1
#define HAVE_SYS_TYPES_H 1
#define HAVE_UNISTD_H 1
#define HAVE_STRUCT_TIMESPEC 1
#define HAVE_SIGLONGJMP 1
#define HAVE_STRSIGNAL 1
#define HAVE_CLOCK_GETTIME 1
#define HAVE_CLOCK_REALTIME 1
#define HAVE_GCC_THREAD_LOCAL_STORAGE 1
#endif

#define WORDS_SIZEOF_VOID_P __SIZEOF_POINTER__
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define WORDS_BIGENDIAN 1
#endif

#endif /* ELV_EMBEDDED_CMOCKA_CONFIG_H */
