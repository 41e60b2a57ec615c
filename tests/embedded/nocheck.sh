#!/bin/sh
# Build the library with ELV_NO_CHECK on the host and run tests/embedded/nocheck.c against it.
# One object per source, with the flags of options.sh's host "check" build: under the CI's
# compiler cache (tools/ci/common.sh) the library objects are that build's.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${ELV_EMBEDDED_BUILD:-$root/build-embedded}/nocheck
rm -rf "$out"
mkdir -p "$out/objs"
srcs=$(sed -n '/^set(ELV_\(CORE\|POLICY\)_SOURCES/,/^)/p' "$root/cmake/elv_sources.cmake" |
	grep -o 'lib/[^ )]*\.c' | sed "s|^|$root/|")
objs=""
for src in $srcs "$root/tests/embedded/nocheck.c"; do
	obj=$out/objs/$(basename "$src" .c).o
	cc -std=c11 -O2 -Wall -Wextra -Werror -DELV_NO_CHECK -I"$root/include" -I"$root/lib/core" \
		-c "$src" -o "$obj"
	objs="$objs $obj"
done
# shellcheck disable=SC2086
cc -std=c11 -O2 -Wall -Wextra -Werror $objs -o "$out/nocheck"
"$out/nocheck"
