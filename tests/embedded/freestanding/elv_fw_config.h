/*
 * A firmware-style user configuration, passed with -DELV_CONFIG_FILE='"elv_fw_config.h"' by
 * tests/embedded/freestanding.sh and tools/size-table.sh: no heap, and assertions that stop
 * the core without calling anything (a real product would log and reset instead).
 * ELV_FW_NO_ASSERT selects release-style builds without assertions (used for the size table).
 */
#ifndef ELV_FW_CONFIG_H
#define ELV_FW_CONFIG_H

#define ELV_NO_MALLOC 1

#if defined(ELV_FW_NO_ASSERT)
#define ELV_NO_ASSERT 1
#else
#define ELV_ASSERT(x) ((x) ? (void)0 : __builtin_trap())
#endif

#endif /* ELV_FW_CONFIG_H */
