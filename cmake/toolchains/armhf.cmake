# Cross toolchain: 32-bit ARM Linux, hard float (arm-linux-gnueabihf-gcc), run under qemu-arm.
# Debian packages: gcc-arm-linux-gnueabihf, libc6-dev-armhf-cross, qemu-user.
#
#   cmake -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/armhf.cmake ...
#
# ctest runs executables through CMAKE_CROSSCOMPILING_EMULATOR: qemu-arm with the cross libc
# as its library prefix (no multiarch libc6:armhf needed; with one installed, drop the -L).
# tests/embedded links its test programs statically, which needs no prefix at all.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR arm)
set(CMAKE_LIBRARY_ARCHITECTURE arm-linux-gnueabihf)

set(CMAKE_C_COMPILER arm-linux-gnueabihf-gcc)
set(CMAKE_FIND_ROOT_PATH /usr/arm-linux-gnueabihf)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-arm -L /usr/arm-linux-gnueabihf)

set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
