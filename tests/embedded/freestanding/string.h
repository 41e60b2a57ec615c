/*
 * The whole C library as the freestanding check sees it: memset and memcpy, nothing else.
 * tests/embedded/freestanding.sh compiles the library with -nostdinc against this directory
 * and the compiler's own freestanding headers, so any other libc header or function is a
 * compile error rather than a surprise at link time in somebody's firmware.
 */
#ifndef ELV_FREESTANDING_STRING_H
#define ELV_FREESTANDING_STRING_H

#include <stddef.h>

void *memset(void *s, int c, size_t n);
void *memcpy(void *restrict dst, const void *restrict src, size_t n);

#endif /* ELV_FREESTANDING_STRING_H */
