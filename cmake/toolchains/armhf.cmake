# Cross toolchain: 32-bit ARM Linux, hard float (arm-linux-gnueabihf-gcc), run under qemu-arm.
# Debian packages: gcc-arm-linux-gnueabihf, libc6-dev-armhf-cross, qemu-user.
#
#   cmake -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/armhf.cmake ...
#
# Executables are linked statically, so qemu-arm needs neither -L nor a multiarch libc, and
# ctest runs them through CMAKE_CROSSCOMPILING_EMULATOR.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR arm)
set(CMAKE_LIBRARY_ARCHITECTURE arm-linux-gnueabihf)

set(CMAKE_C_COMPILER arm-linux-gnueabihf-gcc)
set(CMAKE_FIND_ROOT_PATH /usr/arm-linux-gnueabihf)
set(CMAKE_EXE_LINKER_FLAGS_INIT "-static")
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-arm)

set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
