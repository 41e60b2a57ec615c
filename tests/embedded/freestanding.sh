#!/bin/sh
# Freestanding build of libelevator (core and every policy in cmake/elv_sources.cmake) and a
# check of what the archive needs from outside: nothing beyond memset and memcpy, and no
# writable data (.data, .bss, thread-locals).
#
#   tests/embedded/freestanding.sh [--cc arm|host] [--opt -Os] [--no-assert] [--out DIR]
#                                  [--config HEADER] [-DOPTION...]
#
# --cc arm (default): arm-none-eabi-gcc -mcpu=cortex-m3 -mthumb; --cc host: the host's cc.
# Sources are compiled -ffreestanding -nostdinc against the compiler's own headers plus a
# string.h that declares only memset and memcpy (tests/embedded/freestanding/), with the
# user configuration tests/embedded/freestanding/elv_fw_config.h (ELV_NO_MALLOC, trapping
# ELV_ASSERT; --no-assert drops assertions; --config names another header of that directory,
# such as elv_min_config.h, every optional feature left out). Objects and libelevator.a are left in DIR
# (default build-embedded/freestanding-<cc>). Exits non-zero on a compile error, a symbol
# outside the allowed list, or writable data; prints which function references what.
set -eu

root=$(cd "$(dirname "$0")/../.." && pwd)
cc_kind=arm
opt=-Os
out=""
cfg_defs=""
config=elv_fw_config.h
while [ $# -gt 0 ]; do
	case $1 in
	--cc) cc_kind=$2; shift 2 ;;
	--opt) opt=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--config) config=$2; shift 2 ;;
	--no-assert) cfg_defs="$cfg_defs -DELV_FW_NO_ASSERT"; shift ;;
	-D*) cfg_defs="$cfg_defs $1"; shift ;;
	*) echo "usage: $0 [--cc arm|host] [--opt -Os] [--no-assert] [--out DIR] [--config HEADER] [-DOPTION...]" >&2
		exit 2 ;;
	esac
done

case $cc_kind in
arm)
	cc="arm-none-eabi-gcc"
	tool=arm-none-eabi-
	arch="-mcpu=cortex-m3 -mthumb"
	;;
host)
	cc=${CC:-cc}
	tool=""
	arch=""
	;;
*) echo "freestanding.sh: --cc arm or host" >&2; exit 2 ;;
esac
out=${out:-$root/build-embedded/freestanding-$cc_kind}
# ELV_FREESTANDING_ALLOW adds symbols to the allowed list (say, a compiler helper while its
# caller is being fixed); the default is the library's promise.
allowed="memset memcpy ${ELV_FREESTANDING_ALLOW:-}"

# The library's sources, read from the list foreign build systems use.
sources=$(sed -n '/^set(ELV_\(CORE\|POLICY\)_SOURCES/,/^)/p' "$root/cmake/elv_sources.cmake" |
	grep -o 'lib/[^ )]*\.c')
[ -n "$sources" ] || { echo "freestanding.sh: no sources in cmake/elv_sources.cmake" >&2; exit 1; }

gcc_inc=$($cc -print-file-name=include)
gcc_inc_fixed=$($cc -print-file-name=include-fixed)
fs=$root/tests/embedded/freestanding
rm -rf "$out"
mkdir -p "$out"

compile() { # compile SRC: its object in $out
	# shellcheck disable=SC2086
	$cc $arch $opt -std=c11 -ffreestanding -nostdinc -isystem "$gcc_inc" \
		-isystem "$gcc_inc_fixed" -isystem "$fs" -I"$root/include" -I"$root/lib/core" \
		-DELV_CONFIG_FILE="\"$config\"" $cfg_defs \
		-ffunction-sections -fdata-sections -fno-common \
		-Wall -Wextra -Wpedantic -Wshadow -Wconversion \
		-Werror=implicit-function-declaration -c "$root/$1" -o "$out/$(basename "$1" .c).o"
}
# ELV_JOBS (default 2) compilers at a time; any that fails fails the build.
jobs=${ELV_JOBS:-2}
pids="" n=0 cc_failed=0
for src in $sources; do
	compile "$src" &
	pids="$pids $!"
	n=$((n + 1))
	if [ "$n" -ge "$jobs" ]; then
		for p in $pids; do wait "$p" || cc_failed=1; done
		pids="" n=0
	fi
done
for p in $pids; do wait "$p" || cc_failed=1; done
[ "$cc_failed" -eq 0 ] || { echo "freestanding.sh: compilation failed" >&2; exit 1; }
rm -f "$out/libelevator.a"
${tool}ar rcs "$out/libelevator.a" "$out"/*.o

# External references: undefined in some object and defined in none.
${tool}nm -g --defined-only "$out"/*.o | awk 'NF == 3 { print $3 }' | sort -u >"$out/defined.txt"
${tool}nm -u "$out"/*.o | awk 'NF >= 2 && $1 == "U" { print $2 }' | sort -u >"$out/undefined.txt"
comm -23 "$out/undefined.txt" "$out/defined.txt" >"$out/external.txt"

status=0
echo "freestanding ($cc_kind $opt$cfg_defs): external symbols: $(tr '\n' ' ' <"$out/external.txt")"
for sym in $(cat "$out/external.txt"); do
	case " $allowed " in *" $sym "*) continue ;; esac
	status=1
	echo "  NOT ALLOWED: $sym, referenced from:"
	for obj in "$out"/*.o; do
		# With -ffunction-sections the relocation section names the function.
		${tool}objdump -r "$obj" | awk -v sym="$sym" -v obj="$(basename "$obj" .o).c" '
			/^RELOCATION RECORDS FOR/ { sec = $4; sub(/^\[/, "", sec); sub(/\]:$/, "", sec) }
			{ v = $NF; sub(/[-+]0x[0-9a-fA-F]+$/, "", v) }
			v == sym {
				f = sec
				sub(/^\.(text|rodata|data\.rel\.ro\.local|data\.rel\.ro|data)\./, "", f)
				seen[f] = 1
			}
			END { for (f in seen) printf "    %s: %s\n", obj, f }'
	done
done

# Writable data of the library itself: must be none (no global mutable state). Hosted PIC
# objects put relocated constants in .data.rel.ro, which is read-only after loading.
${tool}size -A "$out"/*.o | awk '
	/^[^ ]+\.o  *:/ || /:$/ { obj = $1 }
	$1 ~ /^\.(data|bss|tdata|tbss)(\.|$)/ && $1 !~ /^\.data\.rel\.ro/ && $2 > 0 { printf "  WRITABLE: %s %s %d bytes\n", obj, $1, $2; bad = 1 }
	$1 == "COMMON" && $2 > 0 { printf "  WRITABLE: %s COMMON %d bytes\n", obj, $2; bad = 1 }
	END { exit bad }' || status=1

if [ "$status" -eq 0 ]; then
	echo "freestanding ($cc_kind $opt$cfg_defs): ok, only {$allowed} needed, no writable data"
fi
exit "$status"
