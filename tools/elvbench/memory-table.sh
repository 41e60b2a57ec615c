#!/usr/bin/env bash
# Bytes per request, stream and queue on x86-64 and, when arm-linux-gnueabihf-gcc and
# qemu-arm are installed, on 32-bit ARM: prints a Markdown table (tools/elvbench/sizes.c).
#
#   tools/elvbench/memory-table.sh [BUILD_DIR]    (default build-bench)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
build=${1:-build-bench}
cmake --build "$build" -j2 --target elvbench-sizes >/dev/null
"$build/tools/elvbench/elvbench-sizes" >"$build/sizes-x86-64.txt"
arm="n/a"
if command -v arm-linux-gnueabihf-gcc >/dev/null && command -v qemu-arm >/dev/null; then
	srcs=$(sed -n '/^set(ELV_\(CORE\|POLICY\)_SOURCES/,/^)/p' cmake/elv_sources.cmake |
		grep -o 'lib/[^ )]*\.c')
	# shellcheck disable=SC2086
	arm-linux-gnueabihf-gcc -std=c11 -O2 -static -Iinclude $srcs tools/elvbench/sizes.c \
		-o "$build/elvbench-sizes-arm"
	qemu-arm "$build/elvbench-sizes-arm" >"$build/sizes-arm.txt"
	arm="$build/sizes-arm.txt"
fi
echo "| what | x86-64 bytes | 32-bit ARM bytes |"
echo "|---|---:|---:|"
if [ "$arm" = "n/a" ]; then
	awk -F'|' '{ printf "|%s|%s| n/a |\n", $2, $3 }' "$build/sizes-x86-64.txt"
else
	paste -d'\t' "$build/sizes-x86-64.txt" "$arm" |
		awk -F'\t' '{ split($1, a, "|"); split($2, b, "|"); printf "|%s|%s|%s|\n", a[2], a[3], b[3] }'
fi
