# Cross toolchain: 64-bit big-endian IBM Z Linux (s390x-linux-gnu-gcc), run under qemu-s390x.
# Debian packages: gcc-s390x-linux-gnu, libc6-dev-s390x-cross, qemu-user.
#
#   cmake -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/s390x.cmake ...
#
# Executables are linked statically, so qemu-s390x needs neither -L nor a multiarch libc, and
# ctest runs them through CMAKE_CROSSCOMPILING_EMULATOR.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR s390x)
set(CMAKE_LIBRARY_ARCHITECTURE s390x-linux-gnu)

set(CMAKE_C_COMPILER s390x-linux-gnu-gcc)
set(CMAKE_FIND_ROOT_PATH /usr/s390x-linux-gnu)
set(CMAKE_EXE_LINKER_FLAGS_INIT "-static")
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-s390x)

set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
