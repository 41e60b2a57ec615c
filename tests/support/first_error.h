/*
 * The model checkers (tests/model/elv_model.h, elv_zmodel.h) report the first violation they
 * see: later ones are usually its consequences, and the first is what a reproducer must show.
 */
#ifndef ELV_TEST_FIRST_ERROR_H
#define ELV_TEST_FIRST_ERROR_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

/* Format the message into @err (@len bytes) and set *@failed, unless *@failed is already set. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 4, 0)))
#endif
static inline void elv_first_error(int *failed, char *err, size_t len, const char *fmt,
				   va_list ap)
{
	if (*failed)
		return;
	*failed = 1;
	vsnprintf(err, len, fmt, ap);
}

#endif
