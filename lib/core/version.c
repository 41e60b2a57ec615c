/* Version queries, error strings and request reset. */
#include <string.h>

#include "elv_internal.h"

#define ELV_STR2(x) #x
#define ELV_STR(x) ELV_STR2(x)

unsigned elv_version(void)
{
	return ELV_VERSION_NUMBER;
}

const char *elv_version_string(void)
{
	return ELV_STR(ELV_VERSION_MAJOR) "." ELV_STR(ELV_VERSION_MINOR) "." ELV_STR(
		ELV_VERSION_PATCH);
}

const char *elv_strerror(int err)
{
#if defined(ELV_NO_STRERROR)
	(void)err;
	return "";
#else
	switch (err) {
	case ELV_OK: return "success";
	case ELV_ENOENT: return "no such tunable, policy or entry";
	case ELV_EAGAIN: return "nothing to dispatch now";
	case ELV_ENOMEM: return "out of memory";
	case ELV_EBUSY: return "object in use";
	case ELV_EINVAL: return "invalid argument or request state";
	case ELV_ENOSPC: return "memory buffer too small";
	case ELV_ERANGE: return "value out of range";
	case ELV_ENOSYS: return "not available in this build";
	case ELV_EOVERFLOW: return "sector range past the end of the address space";
	case ELV_EIO: return "zone unusable or its write pointer unknown";
	default: return "unknown error";
	}
#endif
}

void elv_request_init(struct elv_request *rq)
{
	if (rq)
		memset(rq, 0, sizeof(*rq));
}
