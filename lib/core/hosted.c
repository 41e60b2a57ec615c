/*
 * Hosted convenience: queues on the heap. A build with ELV_NO_MALLOC has no heap: both calls
 * then refuse every call with ELV_ENOSYS (documented in elevator.h, checked by
 * tests/embedded/options.c), and the host gives elv_queue_init() memory of its own.
 */
#include "elv_internal.h"

#if !defined(ELV_NO_MALLOC)
#include <stdlib.h>
#endif

int elv_queue_create(struct elv_queue **out, const struct elv_policy *p,
		     const struct elv_config *cfg)
{
#if defined(ELV_NO_MALLOC)
	(void)out;
	(void)p;
	(void)cfg;
	return ELV_ENOSYS; /* no heap in this build: elv_queue_init() on the host's memory */
#else
	size_t len;
	void *mem;
	int err;

	if (!out || !p)
		return ELV_EINVAL;
	len = elv_queue_size_any(cfg); /* room for any built-in, so elv_switch() always fits */
	if (len < elv_queue_size(p, cfg))
		len = elv_queue_size(p, cfg);
	if (len == 0)
		return ELV_EINVAL;
	mem = malloc(len);
	if (!mem)
		return ELV_ENOMEM;
	err = elv_queue_init(out, mem, len, p, cfg);
	if (err)
		free(mem);
	return err;
#endif
}

int elv_queue_destroy(struct elv_queue *q)
{
#if defined(ELV_NO_MALLOC)
	(void)q;
	return ELV_ENOSYS; /* no heap, so no queue of elv_queue_create()'s to free */
#else
	int err = elv_queue_exit(q);

	if (err)
		return err;
	free(q); /* the queue header starts the block elv_queue_create() allocated */
	return 0;
#endif
}
