#!/usr/bin/env bash
# ABI hygiene of the shared library: it exports exactly the functions and data declared
# ELV_API in the installed library headers (elevator.h, policy.h) - no helper is exported that
# the headers do not promise, and nothing promised is missing -, its SONAME is the ABI version
# (libelevator.so.0.MINOR in 0.x, libelevator.so.MAJOR from 1.0), no library object calls a
# clock, and an ELV_NO_MALLOC build calls no allocator. The ABI itself is checked against its
# baseline by stage-56-abi.sh.
source "$(dirname "$0")/common.sh"
source tools/abi/abi-lib.sh
# gcc by name, as stage 10 builds Release: the compiler cache then holds these objects.
ci_configure symbols -DCMAKE_C_COMPILER=gcc -DCMAKE_BUILD_TYPE=Release \
	-DELV_BUILD_TESTS=OFF -DELV_BUILD_EXAMPLES=OFF -DELV_BUILD_TOOLS=OFF
ci_build symbols --target elevator
so=$(find "$ELV_CI_DIR/symbols" -maxdepth 1 -type f -name 'libelevator.so.*' | head -n1)
test -n "$so" || { echo "no libelevator.so built" >&2; exit 1; }

abi=$(elv_abi_key include/elevator/elevator.h)
soname=$(objdump -p "$so" | awk '$1 == "SONAME" { print $2 }')
if [ "$soname" != "libelevator.so.$abi" ]; then
	echo "SONAME is '$soname', expected libelevator.so.$abi" >&2
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

# What the headers promise: the name declared after ELV_API on each declaration line.
# The library's headers: elevator.h and policy.h, and the stage headers elevator.h includes.
declared=$(grep -h '^ELV_API' include/elevator/elevator.h include/elevator/policy.h \
	include/elevator/qos.h include/elevator/zone.h |
	sed 's/^\(ELV_API[^(;]*\).*/\1/' | grep -o '[A-Za-z_][A-Za-z0-9_]*$' | LC_ALL=C sort -u)
ndeclared=$(echo "$declared" | grep -c . || true)
unpromised=$(LC_ALL=C comm -13 <(echo "$declared") <(echo "$exported" | grep '^elv_'))
missing=$(LC_ALL=C comm -23 <(echo "$declared") <(echo "$exported" | grep '^elv_'))
if [ -n "$unpromised" ]; then
	echo "exported but not declared ELV_API in elevator.h or policy.h (hide them, or" >&2
	echo "declare them there as supported API):" >&2
	echo "$unpromised" | sed 's/^/  /' >&2
	exit 1
fi
if [ -n "$missing" ]; then
	echo "declared ELV_API in elevator.h or policy.h but not exported:" >&2
	echo "$missing" | sed 's/^/  /' >&2
	exit 1
fi
if [ "$ndeclared" -ne "$count" ]; then
	echo "$ndeclared declarations against $count exported symbols" >&2
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
echo "symbols: $soname exports the $count elv_* symbols its headers declare and nothing else;"
echo "symbols: no clock reads;"
echo "symbols: the ELV_NO_MALLOC build calls no allocator"
