#!/bin/sh
# Build examples/baremetal for the host and for Cortex-M3, run both (the latter under
# qemu-system-arm, mps2-an385) and require identical output and exit status 0.
#
#   examples/baremetal/run.sh        (build directories under build-embedded/)
set -eu

root=$(cd "$(dirname "$0")/../.." && pwd)
out=${ELV_EMBEDDED_BUILD:-$root/build-embedded}
src=$root/examples/baremetal
jobs=${ELV_JOBS:-2}

cmake -S "$src" -B "$out/baremetal-host" >"$out/baremetal-host.configure.log" 2>&1 ||
	{ cat "$out/baremetal-host.configure.log"; exit 1; }
cmake --build "$out/baremetal-host" -j "$jobs" >/dev/null
cmake -S "$src" -B "$out/baremetal-cortex-m3" \
	-DCMAKE_TOOLCHAIN_FILE="$root/cmake/toolchains/cortex-m3.cmake" \
	>"$out/baremetal-cortex-m3.configure.log" 2>&1 ||
	{ cat "$out/baremetal-cortex-m3.configure.log"; exit 1; }
cmake --build "$out/baremetal-cortex-m3" -j "$jobs" >/dev/null

status=0
"$out/baremetal-host/baremetal" >"$out/baremetal-host.txt" 2>&1 || {
	echo "baremetal: host run failed"; status=1; }
# Semihosted stdout arrives on QEMU's stderr; main's return value is QEMU's exit status.
timeout 120 qemu-system-arm -M mps2-an385 -nographic -monitor none -serial none \
	-semihosting-config enable=on,target=native \
	-kernel "$out/baremetal-cortex-m3/baremetal" >"$out/baremetal-cortex-m3.txt" 2>&1 || {
	echo "baremetal: Cortex-M3 run failed"; status=1; }
cat "$out/baremetal-cortex-m3.txt"
if diff -u "$out/baremetal-host.txt" "$out/baremetal-cortex-m3.txt"; then
	echo "baremetal: host and Cortex-M3 outputs match ($(wc -l <"$out/baremetal-host.txt") lines)"
else
	echo "baremetal: host and Cortex-M3 outputs differ"
	status=1
fi
arm-none-eabi-size "$out/baremetal-cortex-m3/baremetal"
exit "$status"
