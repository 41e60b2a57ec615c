#!/bin/sh
# No configuration option may change the layout of a public struct: compile
# tests/embedded/layout/layout.c (sizes and offsets of every public struct) under each option
# and compare the generated constants with the default build, for Cortex-M3, the host, armhf
# and s390x. A missing compiler fails the check (tools/ci/deps.sh installs all four). Cortex-M3
# takes its C headers from picolibc (--specs=picolibc.specs, as options.sh does): the public
# headers include <assert.h>, and picolibc is the C library tools/ci/packages/embedded.txt names.
#
#   tests/embedded/layout.sh
set -eu

root=$(cd "$(dirname "$0")/../.." && pwd)
work=${ELV_EMBEDDED_BUILD:-$root/build-embedded}/layout
mkdir -p "$work"
src=$root/tests/embedded/layout/layout.c
options="-DELV_NO_MALLOC -DELV_NO_STRERROR -DELV_NO_CHECK -DELV_NO_ASSERT -DNDEBUG -DELV_ASSERT(x)=((void)(x))
	-DELV_NO_MERGE -DELV_NO_FRONT_MERGE -DELV_NO_REQ_MERGE -DELV_NO_CANCEL -DELV_NO_REQUEUE
	-DELV_NO_BARRIER -DELV_NO_SWITCH -DELV_NO_STREAMS -DELV_NO_STATS -DELV_NO_TRACE -DELV_NO_TUNABLES -DELV_NO_STAGES"
status=0

check() { # check NAME CC [FLAGS...]
	name=$1
	shift
	if ! command -v "$1" >/dev/null 2>&1; then
		echo "layout: $name: $1 not installed" >&2
		status=1
		return 0
	fi
	"$@" -std=c11 -I"$root/include" -S -o "$work/$name.ref.s" "$src"
	for opt in $options "-DELV_NO_MALLOC -DELV_NO_STRERROR -DELV_NO_CHECK -DELV_NO_ASSERT"; do
		# shellcheck disable=SC2086
		"$@" -std=c11 -I"$root/include" $opt -S -o "$work/$name.opt.s" "$src"
		if ! cmp -s "$work/$name.ref.s" "$work/$name.opt.s"; then
			echo "layout: $name: $opt changes a public struct"
			diff "$work/$name.ref.s" "$work/$name.opt.s" | head -n 20
			status=1
		fi
	done
	# User configuration files: the firmware one used by freestanding.sh, the minimal one.
	for cfgh in elv_fw_config.h elv_min_config.h; do
		"$@" -std=c11 -I"$root/include" -I"$root/tests/embedded/freestanding" \
			"-DELV_CONFIG_FILE=\"$cfgh\"" -S -o "$work/$name.opt.s" "$src"
		if ! cmp -s "$work/$name.ref.s" "$work/$name.opt.s"; then
			echo "layout: $name: ELV_CONFIG_FILE $cfgh changes a public struct"
			status=1
		fi
	done
	n=$(grep -c '\.\(word\|long\|quad\|4byte\|8byte\)' "$work/$name.ref.s" || true)
	# An empty reference would compare equal to every option: it must hold the constants.
	if [ "$n" -lt 10 ]; then
		echo "layout: $name: only $n constants in the reference build" >&2
		status=1
		return 0
	fi
	echo "layout: $name: $n sizes and offsets identical under every option"
}

check cortex-m3 arm-none-eabi-gcc -mcpu=cortex-m3 -mthumb -ffreestanding --specs=picolibc.specs
check host "${CC:-cc}"
check armhf arm-linux-gnueabihf-gcc
check s390x s390x-linux-gnu-gcc
exit "$status"
