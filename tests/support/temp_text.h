/*
 * Files on disk for the loaders' tests (test_job, test_trace_common): a fresh temporary file
 * holding a given text. The caller removes it, and defines _POSIX_C_SOURCE 200809L (mkstemp,
 * fdopen) before its first include.
 */
#ifndef ELV_TEST_TEMP_TEXT_H
#define ELV_TEST_TEMP_TEXT_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* Write @text to the open stream @f, which is then closed. */
static inline void put_text(FILE *f, const char *text)
{
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
	assert_int_equal(fclose(f), 0);
}

/* Create a file from the mkstemp() template @path (rewritten to its name) holding @text. */
static inline void temp_text(char *path, const char *text)
{
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	put_text(fdopen(fd, "w"), text);
}

#endif
