#!/bin/sh
# Build the library with ELV_NO_CHECK on the host and run tests/embedded/nocheck.c against it.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${ELV_EMBEDDED_BUILD:-$root/build-embedded}/nocheck
mkdir -p "$out"
srcs=$(sed -n '/^set(ELV_\(CORE\|POLICY\)_SOURCES/,/^)/p' "$root/cmake/elv_sources.cmake" |
	grep -o 'lib/[^ )]*\.c' | sed "s|^|$root/|")
# shellcheck disable=SC2086
cc -std=c11 -O2 -Wall -Wextra -Werror -DELV_NO_CHECK -I"$root/include" -I"$root/lib/core" \
	$srcs "$root/tests/embedded/nocheck.c" -o "$out/nocheck"
"$out/nocheck"
