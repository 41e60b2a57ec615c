#!/usr/bin/env bash
# ABI hygiene of the shared library: it exports only elv_* functions and data, its SONAME
# follows the major version, no library object calls a clock, and an ELV_NO_MALLOC build
# calls no allocator.
source "$(dirname "$0")/common.sh"
ci_configure symbols -DCMAKE_BUILD_TYPE=Release \
	-DELV_BUILD_TESTS=OFF -DELV_BUILD_EXAMPLES=OFF -DELV_BUILD_TOOLS=OFF
ci_build symbols --target elevator
so=$(find "$ELV_CI_DIR/symbols" -maxdepth 1 -name 'libelevator.so.*.*' | head -n1)
test -n "$so" || { echo "no libelevator.so built" >&2; exit 1; }

major=$(sed -n 's/^#define ELV_VERSION_MAJOR \([0-9]*\)$/\1/p' include/elevator/elevator.h)
soname=$(objdump -p "$so" | awk '$1 == "SONAME" { print $2 }')
if [ "$soname" != "libelevator.so.$major" ]; then
	echo "SONAME is '$soname', expected libelevator.so.$major" >&2
	exit 1
fi

exported=$(nm -D --defined-only "$so" | awk '{ print $NF }' | LC_ALL=C sort)
stray=$(echo "$exported" | grep -Ev '^(elv_[A-Za-z0-9_]+|_init|_fini|__bss_start|_edata|_end)$' || true)
count=$(echo "$exported" | grep -c '^elv_' || true)
if [ -n "$stray" ]; then
	echo "symbols exported besides elv_*:" >&2
	echo "$stray" | sed 's/^/  /' >&2
	exit 1
fi
if [ "$count" -eq 0 ]; then
	echo "no elv_* symbol is exported" >&2
	exit 1
fi

clock=$(nm -D --undefined-only "$so" |
	grep -Ew '(clock_gettime|gettimeofday|time|clock|timespec_get)' || true)
if [ -n "$clock" ]; then
	echo "the library reads a clock:" >&2
	echo "$clock" >&2
	exit 1
fi
ci_configure nomalloc -DCMAKE_BUILD_TYPE=Release -DELV_NO_MALLOC=ON -DELV_BUILD_SHARED=OFF \
	-DELV_BUILD_SIM=OFF -DELV_BUILD_TESTS=OFF -DELV_BUILD_EXAMPLES=OFF -DELV_BUILD_TOOLS=OFF
ci_build nomalloc --target elevator_static
alloc=$(nm -u "$ELV_CI_DIR/nomalloc/libelevator.a" |
	grep -Ew '(malloc|calloc|realloc|free|aligned_alloc|posix_memalign)' || true)
if [ -n "$alloc" ]; then
	echo "ELV_NO_MALLOC build still calls the allocator:" >&2
	echo "$alloc" >&2
	exit 1
fi
echo "symbols: $soname exports $count elv_* symbols and nothing else; no clock reads;"
echo "symbols: the ELV_NO_MALLOC build calls no allocator"
