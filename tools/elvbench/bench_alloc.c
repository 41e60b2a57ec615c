/*
 * Count every heap allocation the process makes, so elvbench can prove the hot path makes
 * none. glibc lets an executable interpose malloc; the real work goes to its __libc_ entries.
 */
#include <stddef.h>
#include <stdint.h>

#include "bench_alloc.h"

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t m);
extern void *__libc_realloc(void *p, size_t n);
extern void *__libc_memalign(size_t a, size_t n);
extern void __libc_free(void *p);

static uint64_t allocs;

uint64_t bench_alloc_count(void)
{
	return allocs;
}

void *malloc(size_t n)
{
	allocs++;
	return __libc_malloc(n);
}

void *calloc(size_t n, size_t m)
{
	allocs++;
	return __libc_calloc(n, m);
}

void *realloc(void *p, size_t n)
{
	allocs++;
	return __libc_realloc(p, n);
}

void *aligned_alloc(size_t a, size_t n)
{
	allocs++;
	return __libc_memalign(a, n);
}

void free(void *p)
{
	__libc_free(p);
}
