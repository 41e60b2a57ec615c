# Cross toolchain: 64-bit big-endian IBM Z Linux (s390x-linux-gnu-gcc), run under qemu-s390x.
# Debian packages: gcc-s390x-linux-gnu, libc6-dev-s390x-cross, qemu-user.
#
#   cmake -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/s390x.cmake ...
#
# ctest runs executables through CMAKE_CROSSCOMPILING_EMULATOR: qemu-s390x with the cross libc
# as its library prefix (no multiarch libc6:s390x needed; with one installed, drop the -L).
# tests/embedded links its test programs statically, which needs no prefix at all.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR s390x)
set(CMAKE_LIBRARY_ARCHITECTURE s390x-linux-gnu)

set(CMAKE_C_COMPILER s390x-linux-gnu-gcc)
set(CMAKE_FIND_ROOT_PATH /usr/s390x-linux-gnu)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-s390x -L /usr/s390x-linux-gnu)

set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
