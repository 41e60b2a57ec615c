# Cross toolchain: bare-metal Cortex-M3 (arm-none-eabi-gcc + picolibc), run under QEMU's
# mps2-an385 board with semihosting (stdout, exit status). Debian packages: gcc-arm-none-eabi,
# picolibc-arm-none-eabi, qemu-system-arm.
#
#   cmake -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/cortex-m3.cmake ...
#
# Executables link picolibc's semihosting crt0 and linker script, laid out for the board
# (4 MiB of code at 0, 4 MiB of RAM at 0x20000000, 256 KiB of stack). ctest runs each one
# through CMAKE_CROSSCOMPILING_EMULATOR: main's return value becomes QEMU's exit status.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)

set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_AR arm-none-eabi-ar CACHE FILEPATH "")
set(CMAKE_RANLIB arm-none-eabi-ranlib CACHE FILEPATH "")
set(CMAKE_SIZE arm-none-eabi-size CACHE FILEPATH "")
# No OS to run a test program on while configuring.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

set(CMAKE_C_FLAGS_INIT "-mcpu=cortex-m3 -mthumb --specs=picolibc.specs")
set(CMAKE_EXE_LINKER_FLAGS_INIT
	"--oslib=semihost --crt0=semihost -Wl,--defsym=__flash=0 -Wl,--defsym=__flash_size=0x400000 -Wl,--defsym=__ram=0x20000000 -Wl,--defsym=__ram_size=0x400000 -Wl,--defsym=__stack_size=0x40000")

# -monitor/-serial none: CI runs with stdin closed. Target stdout arrives on QEMU's stderr.
set(CMAKE_CROSSCOMPILING_EMULATOR
	qemu-system-arm -M mps2-an385 -nographic -monitor none -serial none
	-semihosting-config enable=on,target=native -kernel)

set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
