#!/bin/sh
# Cross-build libelevator and its whole cmocka suite for TARGET and run it under QEMU.
#
#   tests/embedded/run.sh cortex-m3   bare-metal Cortex-M3 (QEMU mps2-an385, semihosting,
#                                     picolibc); library built -ffreestanding, ELV_NO_MALLOC
#   tests/embedded/run.sh armhf       32-bit ARM Linux, hard float, under qemu-arm
#   tests/embedded/run.sh s390x       64-bit big-endian Linux under qemu-s390x
#
# Installs the target's Debian packages when missing (needs root then), fetches cmocka's
# source from Debian into the build directory (never into the tree) and builds it for the
# target, then runs every tests/<area>/test_<unit>.c except tests/sim through ctest. Exits
# non-zero when anything fails to build or any test fails.
#
# Environment: ELV_EMBEDDED_BUILD (default <repo>/build-embedded), ELV_JOBS (default 2).
set -eu

target=${1:-}
root=$(cd "$(dirname "$0")/../.." && pwd)
build_root=${ELV_EMBEDDED_BUILD:-$root/build-embedded}
jobs=${ELV_JOBS:-2}

case $target in
cortex-m3)
	pkgs="gcc-arm-none-eabi binutils-arm-none-eabi picolibc-arm-none-eabi qemu-system-arm"
	# What firmware ships: no malloc, no hosted assumptions in the library objects, and
	# optimised for size (the -Os code paths, such as the shared hash operations, get tested).
	lib_defs="ELV_NO_MALLOC"
	lib_flags="-ffreestanding;-Os"
	;;
armhf)
	pkgs="gcc-arm-linux-gnueabihf libc6-dev-armhf-cross qemu-user"
	lib_defs=""
	lib_flags=""
	;;
s390x)
	pkgs="gcc-s390x-linux-gnu libc6-dev-s390x-cross qemu-user"
	lib_defs=""
	lib_flags=""
	;;
*)
	echo "usage: $0 cortex-m3|armhf|s390x" >&2
	exit 2
	;;
esac
pkgs="$pkgs cmake make xz-utils"

# Install only what is missing (waiting for another apt run to finish if there is one).
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' ||
		missing="$missing $p"
done
if [ -n "$missing" ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "run.sh: missing Debian packages:$missing (run as root to install them)" >&2
		exit 1
	fi
	echo "run.sh: installing$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get -o DPkg::Lock::Timeout=600 update -qq
	# shellcheck disable=SC2086
	apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends $missing >/dev/null
fi

cmocka=$("$root/tests/embedded/fetch-cmocka.sh" "$build_root/_cmocka")
build=$build_root/$target

cmake -S "$root/tests/embedded" -B "$build" \
	-DCMAKE_TOOLCHAIN_FILE="$root/cmake/toolchains/$target.cmake" \
	-DCMOCKA_SOURCE_DIR="$cmocka" \
	-DELV_LIB_DEFINITIONS="$lib_defs" -DELV_LIB_OPTIONS="$lib_flags" >"$build_root/$target.configure.log" ||
	{ cat "$build_root/$target.configure.log"; exit 1; }
cmake --build "$build" -j "$jobs"
# Every tests/<area>/test_<unit>.c outside tests/sim must be registered: one lost from the
# build would otherwise shrink the suite without a word.
want=$(find "$root/tests" -mindepth 2 -maxdepth 2 -name 'test_*.c' ! -path "$root/tests/sim/*" | wc -l)
have=$(ctest --test-dir "$build" -N | grep -c '^ *Test *#' || true)
if [ "$have" -ne "$want" ]; then
	echo "run.sh: $have tests registered for $target, expected $want" >&2
	exit 1
fi
echo "run.sh: running the suite on $target ($have tests)"
ctest --test-dir "$build" -j "$jobs" --output-on-failure --no-tests=error
