#!/bin/sh
# Every compile-time option, on the host and on a Cortex-M3 under QEMU: the library and
# tests/embedded/options.c are built with no option, with each option alone, with back merges
# only, with the minimal configuration (tests/embedded/freestanding/elv_min_config.h) and with
# it keeping back merges; each build must run every check for every built-in policy (noop,
# deadline, anticipatory and CFQ among them). A build that must not compile (ELV_NO_STATS
# without ELV_NO_SWITCH: CFQ's #error) is checked to fail with its message.
#
#   tests/embedded/options.sh [host|cortex-m3|all]     (default all)
#
# Host builds use -Wall -Wextra -Werror. Exits non-zero when a build or a run fails, or when a
# run does not report its checks.
set -eu

root=$(cd "$(dirname "$0")/../.." && pwd)
which=${1:-all}
out=${ELV_EMBEDDED_BUILD:-$root/build-embedded}/options
mkdir -p "$out"
srcs=$(sed -n '/^set(ELV_\(CORE\|POLICY\)_SOURCES/,/^)/p' "$root/cmake/elv_sources.cmake" |
	grep -o 'lib/[^ )]*\.c' | sed "s|^|$root/|")
fs=$root/tests/embedded/freestanding

# name:definitions (space-separated, without -D); "min" is the minimal configuration file.
configs="none:
merge:ELV_NO_MERGE
front:ELV_NO_FRONT_MERGE
req:ELV_NO_REQ_MERGE
back-only:ELV_NO_FRONT_MERGE ELV_NO_REQ_MERGE
cancel:ELV_NO_CANCEL
requeue:ELV_NO_REQUEUE
barrier:ELV_NO_BARRIER
switch:ELV_NO_SWITCH
streams:ELV_NO_STREAMS
stats:ELV_NO_STATS ELV_NO_SWITCH
trace:ELV_NO_TRACE
tunables:ELV_NO_TUNABLES
stages:ELV_NO_STAGES
check:ELV_NO_CHECK
strerror:ELV_NO_STRERROR
malloc:ELV_NO_MALLOC
min:
min-back:ELV_MIN_BACK_MERGES"

# Runs report through files: the loops below run in subshells.
rm -f "$out/passed" "$out/failed"
: >"$out/passed"

# build KIND NAME DEFS -> builds $out/KIND-NAME (.elf for cortex-m3); returns non-zero when a
# compilation or the link failed, every compiler message in $out/KIND-NAME.log. One object per
# source, then a link: the flags are the same as one compiler call over every source, and a
# compiler cache (tools/ci/common.sh) reuses the objects of files the option leaves untouched.
build() {
	kind=$1 name=$2
	shift 2
	defs=""
	for d in "$@"; do defs="$defs -D$d"; done
	case $name in
	min*)
		# The quotes are meant literally: they become part of the macro's value.
		# shellcheck disable=SC2089
		defs="$defs -I$fs -DELV_CONFIG_FILE=\"elv_min_config.h\""
		;;
	esac
	case $kind in
	host)
		cc=${CC:-cc} exe=$out/$kind-$name
		flags="-std=c11 -O2 -Wall -Wextra -Werror"
		;;
	cortex-m3)
		cc=arm-none-eabi-gcc exe=$out/$kind-$name.elf
		flags="-mcpu=cortex-m3 -mthumb -Os -std=c11 -Wall -Wextra -Werror --specs=picolibc.specs
			--oslib=semihost --crt0=semihost"
		;;
	esac
	objdir=$out/$kind-$name.objs
	rm -rf "$objdir" "$exe"
	mkdir -p "$objdir"
	: >"$out/$kind-$name.log"
	status=0 objs=""
	# Every source is compiled even after a failure, so that the log holds every message.
	for src in $srcs "$root/tests/embedded/options.c"; do
		obj=$objdir/$(basename "$src" .c).o
		objs="$objs $obj"
		# shellcheck disable=SC2086,SC2090
		$cc $flags $defs -I"$root/include" -I"$root/lib/core" -c "$src" -o "$obj" \
			2>>"$out/$kind-$name.log" || status=1
	done
	[ "$status" -eq 0 ] || return 1
	case $kind in
	host)
		# shellcheck disable=SC2086
		$cc $flags $objs -o "$exe" 2>>"$out/$kind-$name.log"
		;;
	cortex-m3)
		# shellcheck disable=SC2086
		$cc $flags -Wl,--defsym=__flash=0 -Wl,--defsym=__flash_size=0x400000 \
			-Wl,--defsym=__ram=0x20000000 -Wl,--defsym=__ram_size=0x400000 \
			$objs -o "$exe" 2>>"$out/$kind-$name.log"
		;;
	esac
}

run() { # run KIND NAME
	case $1 in
	host) timeout 60 "$out/$1-$2" ;;
	cortex-m3)
		timeout 120 qemu-system-arm -M mps2-an385 -nographic -monitor none -serial none \
			-semihosting-config enable=on,target=native -kernel "$out/$1-$2.elf" 2>&1 ;;
	esac
}

config() { # config KIND NAME DEFS...: build and run one configuration, record the verdict
	kind=$1 name=$2
	shift 2
	defs=$*
	# shellcheck disable=SC2086,SC2090
	if ! build "$kind" "$name" $defs; then
		echo "options: $kind $name ($defs): build FAILED"
		cat "$out/$kind-$name.log"
		echo x >>"$out/failed"
		return 0
	fi
	if run "$kind" "$name" >"$out/$kind-$name.txt" 2>&1 &&
		grep -q '^options: ok: \([4-9]\|[1-9][0-9][0-9]*\) policies, [1-9][0-9]* checks$' "$out/$kind-$name.txt"; then
		echo "$kind $name (${defs:-${name}}): $(tail -n 1 "$out/$kind-$name.txt")"
		echo x >>"$out/passed"
	else
		echo "options: $kind $name ($defs): run FAILED"
		cat "$out/$kind-$name.txt"
		echo x >>"$out/failed"
	fi
}

# Each build is one compiler process: ELV_JOBS (default 2) configurations at a time.
jobs=${ELV_JOBS:-2}
for kind in host cortex-m3; do
	case $which in all | "$kind") ;; *) continue ;; esac
	echo "$configs" | {
		n=0
		while IFS=: read -r name defs; do
			# shellcheck disable=SC2086
			config "$kind" "$name" $defs &
			n=$((n + 1))
			[ "$n" -lt "$jobs" ] || { wait; n=0; }
		done
		wait
	}
	# ELV_NO_STATS with elv_switch() kept must stop at CFQ's #error, not build.
	if build "$kind" stats-only ELV_NO_STATS; then
		echo "options: $kind: ELV_NO_STATS without ELV_NO_SWITCH built; expected CFQ's #error"
		echo x >>"$out/failed"
	elif grep -q 'error: #error "cfq needs' "$out/$kind-stats-only.log"; then
		echo "$kind ELV_NO_STATS alone: refused by cfq.c's #error, as documented"
		echo x >>"$out/passed"
	else
		echo "options: $kind: ELV_NO_STATS alone failed for another reason:"
		cat "$out/$kind-stats-only.log"
		echo x >>"$out/failed"
	fi
done

passed=$(wc -l <"$out/passed")
failed=0
[ ! -f "$out/failed" ] || failed=$(wc -l <"$out/failed")
# Each kind: one run per configuration, plus the refused build.
want=0
n=$(echo "$configs" | wc -l)
case $which in all) want=$((2 * (n + 1))) ;; *) want=$((n + 1)) ;; esac
echo "options: $passed of $want passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -eq "$want" ]
