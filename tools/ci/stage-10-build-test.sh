#!/usr/bin/env bash
# gcc, Release, warnings as errors: build everything and run the test suite, which must hold
# every tests/*/test_*.c. Then the same configuration with cmocka hidden must stop with an
# error naming cmocka: tests asked for never turn into a build without tests.
source "$(dirname "$0")/common.sh"
ci_configure gcc -DCMAKE_C_COMPILER=gcc -DCMAKE_BUILD_TYPE=Release
ci_build gcc
ci_expect_suite gcc
ci_ctest gcc
# README's demonstration must keep working.
"$ELV_CI_DIR/gcc/examples/driver-loop/driver-loop"

command -v pkg-config >/dev/null && pkg-config --exists cmocka ||
	{ echo "cmocka's pkg-config file is missing" >&2; exit 1; }
# Where cmocka lives, from its .pc (-I and -L directories), hidden from every find_*() call.
hide=$(PKG_CONFIG_ALLOW_SYSTEM_CFLAGS=1 PKG_CONFIG_ALLOW_SYSTEM_LIBS=1 \
	pkg-config --cflags-only-I --libs-only-L cmocka | tr ' ' '\n' | sed -n 's/^-[IL]//p' |
	paste -sd';')
[ -n "$hide" ] || { echo "cmocka's pkg-config file names no directory" >&2; exit 1; }
log="$ELV_CI_DIR/no-cmocka.configure.log"
rm -rf "$ELV_CI_DIR/no-cmocka"
echo "+ cmake -S . -B build-ci/no-cmocka (pkg-config off, CMAKE_IGNORE_PATH=$hide): must fail"
if cmake -S "$ELV_ROOT" -B "$ELV_CI_DIR/no-cmocka" -DCMAKE_DISABLE_FIND_PACKAGE_PkgConfig=ON \
	"-DCMAKE_IGNORE_PATH=$hide" >"$log" 2>&1; then
	echo "configuring with tests on and cmocka hidden succeeded" >&2
	exit 1
fi
grep -q "cmocka not found" "$log" || { cat "$log"; echo "configure failed, but not over cmocka" >&2; exit 1; }
echo "no cmocka, tests on: configure stops with \"$(grep -o 'cmocka not found[^:]*' "$log" | head -n1)\""
