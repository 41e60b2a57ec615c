/*
 * The firmware's libelevator configuration, included first by elevator/elv_config.h because
 * the build passes -DELV_CONFIG_FILE='"elv_user_config.h"' to the library and to main.c.
 * None of these options changes a public struct, so objects built with and without them
 * agree on every layout.
 */
#ifndef ELV_USER_CONFIG_H
#define ELV_USER_CONFIG_H

/* No heap on this board: elv_queue_create()/destroy() become ELV_ENOSYS stubs. */
#define ELV_NO_MALLOC 1

/* Assertions report through the firmware's own handler instead of <assert.h>. */
void fw_assert_failed(const char *file, int line);
#define ELV_ASSERT(x) ((x) ? (void)0 : fw_assert_failed(__FILE__, __LINE__))

#endif /* ELV_USER_CONFIG_H */
