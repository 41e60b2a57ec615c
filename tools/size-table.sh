#!/bin/sh
# Code size and memory of libelevator on Cortex-M3, as documented in docs/embedded.md.
#
#   tools/size-table.sh            print the tables (Markdown)
#   tools/size-table.sh --update   also rewrite them in docs/embedded.md (between the markers)
#   tools/size-table.sh --check    also exit non-zero when a limit of tools/size-budget.txt
#                                  is passed: a minimal row over its budget, a full row more
#                                  than 2% over its recorded figure
#   tools/size-table.sh --record   rewrite the recorded figures in tools/size-budget.txt
#
# Objects come from tests/embedded/freestanding.sh (arm-none-eabi-gcc -mcpu=cortex-m3 -mthumb
# -Os -ffunction-sections, ELV_NO_MALLOC, ELV_NO_ASSERT); sizes are the library's own
# sections, not a linked image. Struct and queue sizes come from tests/embedded/sizes.c run
# under qemu-system-arm. Limits: tools/size-budget.txt (the minimal configuration's budgets,
# the full configuration's recorded figures); also .data + .bss 0 and
# sizeof(struct elv_request) <= 56.
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
update=0
check=0
record=0
for a in "$@"; do
	case $a in
	--update) update=1 ;;
	--check) check=1 ;;
	--record) record=1 ;;
	*) echo "usage: $0 [--update] [--check] [--record]" >&2; exit 2 ;;
	esac
done
budgets=$root/tools/size-budget.txt
[ -f "$budgets" ] || { echo "size-table: $budgets missing" >&2; exit 1; }

work=${ELV_EMBEDDED_BUILD:-$root/build-embedded}/size
mkdir -p "$work"
objs=$work/objs
# The symbol check is freestanding.sh's job; here only the objects matter.
"$root/tests/embedded/freestanding.sh" --cc arm --opt -Os --no-assert --out "$objs" \
	>"$work/freestanding.log" 2>&1 || true
nsrc=$(sed -n '/^set(ELV_\(CORE\|POLICY\)_SOURCES/,/^)/p' "$root/cmake/elv_sources.cmake" |
	grep -c 'lib/[^ )]*\.c')
nobj=$(ls "$objs"/*.o 2>/dev/null | wc -l)
if [ "$nobj" -ne "$nsrc" ]; then
	cat "$work/freestanding.log" >&2
	echo "size-table: $nobj of $nsrc sources compiled" >&2
	exit 1
fi
core=$(sed -n '/^set(ELV_CORE_SOURCES/,/^)/p' "$root/cmake/elv_sources.cmake" |
	grep -o 'lib/[^ )]*\.c' | sed 's|.*/||; s|\.c$||')
policies=$(sed -n '/^set(ELV_POLICY_SOURCES/,/^)/p' "$root/cmake/elv_sources.cmake" |
	grep -o 'lib/[^ )]*\.c' | sed 's|.*/||; s|\.c$||' | grep -v '^registry$' || true)
# Budgeted policies first, then the others in list order.
policies=$(for p in $policies; do case $p in noop) echo "0 $p" ;; deadline) echo "1 $p" ;;
	*) echo "2 $p" ;; esac; done | sort -s -k1,1n | cut -d' ' -f2)
has_registry=$(sed -n '/^set(ELV_POLICY_SOURCES/,/^)/p' "$root/cmake/elv_sources.cmake" |
	grep -c 'registry\.c' || true)

# objects DIR: object text rodata data bss, one line per object of DIR.
objects() {
	for o in "$1"/*.o; do
		arm-none-eabi-size -A "$o" | awk -v name="$(basename "$o" .o)" '
			$1 ~ /^\.text/ { t += $2 } $1 ~ /^\.rodata/ { r += $2 }
			$1 ~ /^\.(data|tdata)/ { d += $2 }
			$1 ~ /^\.(bss|tbss)/ || $1 == "COMMON" { b += $2 }
			END { printf "%s %d %d %d %d\n", name, t, r, d, b }'
	done
}
objects "$objs" >"$work/objects.txt"
# Rows of one policy each: the policy files that define elv_policy_<file name>.
single=$(for p in $policies; do
	if arm-none-eabi-nm "$objs/$p.o" 2>/dev/null | grep -q " [A-Z] elv_policy_$p\$"; then
		echo "$p"
	fi
done)
four="noop deadline anticipatory cfq"
# classic.c defines eleven policies that share their code: one row, linked through sstf.
[ ! -f "$objs/classic.o" ] || single="$single classic"

# The minimal configuration: every optional feature left out (elv_min_config.h).
"$root/tests/embedded/freestanding.sh" --cc arm --opt -Os --no-assert --config elv_min_config.h \
	--out "$work/objs-min" >"$work/freestanding-min.log" 2>&1 || true
[ -f "$work/objs-min/libelevator.a" ] || {
	cat "$work/freestanding-min.log" >&2
	echo "size-table: the minimal configuration did not build" >&2
	exit 1
}
objects "$work/objs-min" >"$work/objects-min.txt"
# The minimal configuration keeping back merges (ELV_MIN_BACK_MERGES), for comparison.
"$root/tests/embedded/freestanding.sh" --cc arm --opt -Os --no-assert --config elv_min_config.h \
	-DELV_MIN_BACK_MERGES --out "$work/objs-minback" >"$work/freestanding-minback.log" 2>&1 || true

# Each option alone (ELV_NO_STATS with ELV_NO_SWITCH, which CFQ needs), for what it saves.
opt_list="ELV_NO_MERGE ELV_NO_FRONT_MERGE ELV_NO_REQ_MERGE ELV_NO_CANCEL ELV_NO_REQUEUE
ELV_NO_BARRIER ELV_NO_SWITCH ELV_NO_STREAMS ELV_NO_STATS+ELV_NO_SWITCH ELV_NO_TRACE
ELV_NO_TUNABLES ELV_NO_STAGES ELV_NO_CHECK ELV_NO_STRERROR"
for o in $opt_list; do
	# shellcheck disable=SC2046
	"$root/tests/embedded/freestanding.sh" --cc arm --opt -Os --no-assert \
		$(echo "$o" | tr '+' '\n' | sed 's/^/-D/') --out "$work/objs-opt-$o" \
		>"$work/freestanding-opt-$o.log" 2>&1 || true
done

# Without the invariant checkers (ELV_NO_CHECK), for the firmware rows.
"$root/tests/embedded/freestanding.sh" --cc arm --opt -Os --no-assert -DELV_NO_CHECK \
	--out "$work/objs-nocheck" >"$work/freestanding-nocheck.log" 2>&1 || true

# Built for link-time optimisation, for the rows of a firmware that links with -flto.
"$root/tests/embedded/freestanding.sh" --cc arm --opt "-Os -flto -ffat-lto-objects" --no-assert \
	--out "$work/objs-lto" >"$work/freestanding-lto.log" 2>&1 || true
"$root/tests/embedded/freestanding.sh" --cc arm --opt "-Os -flto -ffat-lto-objects" --no-assert \
	-DELV_NO_CHECK --out "$work/objs-lto-nocheck" >"$work/freestanding-lto-nocheck.log" 2>&1 || true

# Same with assertions on (trapping ELV_ASSERT), for one comparison line.
"$root/tests/embedded/freestanding.sh" --cc arm --opt -Os --out "$work/objs-assert" \
	>"$work/freestanding-assert.log" 2>&1 || true
text_assert=$(arm-none-eabi-size -A "$work/objs-assert"/*.o 2>/dev/null |
	awk '$1 ~ /^\.text/ { t += $2 } END { print t + 0 }')

# Struct and queue sizes on the target itself.
qemu_ok=1
arm-none-eabi-gcc -mcpu=cortex-m3 -mthumb -Os --specs=picolibc.specs --oslib=semihost \
	--crt0=semihost -Wl,--defsym=__flash=0 -Wl,--defsym=__flash_size=0x400000 \
	-Wl,--defsym=__ram=0x20000000 -Wl,--defsym=__ram_size=0x400000 \
	-I"$root/include" "$root/tests/embedded/sizes.c" "$objs/libelevator.a" \
	-o "$work/sizes.elf" 2>"$work/sizes.log" || qemu_ok=0
if [ "$qemu_ok" -eq 1 ]; then
	timeout 60 qemu-system-arm -M mps2-an385 -nographic -monitor none -serial none \
		-semihosting-config enable=on,target=native -kernel "$work/sizes.elf" \
		>"$work/sizes.txt" 2>&1 || qemu_ok=0
fi
if [ "$qemu_ok" -ne 1 ]; then
	cat "$work/sizes.log" "$work/sizes.txt" >&2 2>/dev/null || true
	echo "size-table: sizes.elf did not build or run" >&2
fi

gccver=$(arm-none-eabi-gcc -dumpfullversion)
sum() { # sum OBJECT... -> "text rodata data bss" (of $objs_txt, default the full build)
	awk -v want=" $* " 'index(want, " " $1 " ") { t += $2; r += $3; d += $4; b += $5 }
		END { printf "%d %d %d %d\n", t, r, d, b }' "${objs_txt:-$work/objects.txt}"
}

# The limit of a row from tools/size-budget.txt: "budget N" lines are the limit, "recorded N"
# lines allow 2% growth. limit_of CONFIG ROW -> bytes, or nothing.
limit_of() {
	awk -v c="$1" -v r="$2" '$1 !~ /^#/ && $2 == c && $3 == r {
		if ($1 == "budget") print $4; else if ($1 == "recorded") print int($4 * 102 / 100) }' \
		"$budgets" | head -n 1
}
: >"$work/measured.txt"
base="$core"
[ "$has_registry" -eq 0 ] || base="$base registry"

# What the probe uses: one policy ($policy), the four of the budget ("four"), or everything
# public, every built-in policy through the table (empty).
probe_def() {
	case ${policy:-} in
	"") ;;
	four) echo -DELV_PROBE_FOUR ;;
	classic) echo "-DELV_PROBE_POLICY=elv_policy_sstf" ;; # the file's policies share its code
	*) echo "-DELV_PROBE_POLICY=elv_policy_$policy" ;;
	esac
}

# link_probe ELF LIBRARY... : link tests/embedded/size_probe.c as a firmware would (gc-sections,
# no C library) for policy $policy (every policy when empty), $lto added to the compile flags.
link_probe() {
	elf=$1
	shift
	# shellcheck disable=SC2086
	arm-none-eabi-gcc -mcpu=cortex-m3 -mthumb -Os $lto -std=c11 -ffreestanding \
		-ffunction-sections -fdata-sections -I"$root/include" -I"$root/lib/core" \
		-I"$root/tests/embedded/freestanding" -DELV_CONFIG_FILE="\"${pcfg:-elv_fw_config.h}\"" \
		-DELV_FW_NO_ASSERT $(probe_def) -nostdlib \
		-Wl,--gc-sections -Wl,-e,elv_probe_entry "$root/tests/embedded/size_probe.c" \
		"$@" -lgcc -o "$elf" -Wl,-Map="$elf.map" >>"$work/probe.log" 2>&1
}

# image [plain|lto|lto-nocheck] [POLICY] -> .text of the whole probe image (the probe's own
# calls included, its memset/memcpy stand-ins not): with -flto the library's code is inlined
# into the probe, so only whole images compare.
image() {
	elf=$work/image-$1-${2:-all}.elf
	policy=${2:-}
	case $1 in
	plain) lto= && link_probe "$elf" "$objs/libelevator.a" ;;
	*) lto=-flto && link_probe "$elf" "$work/objs-$1"/*.o ;;
	esac || { echo n/a; return 0; }
	arm-none-eabi-nm -S -t d "$elf" | awk '
		$4 ~ /^(memset|memcpy)$/ || $4 ~ /^__/ { next }
		$3 ~ /^[tT]$/ { t += $2 } END { print t + 0 }'
}

# probe [POLICY] -> "text rodata helpers" of the library code a firmware links (gc-sections,
# no C library; tests/embedded/size_probe.c), or "n/a n/a n/a" when the link fails. The
# archive is $pobjs/libelevator.a (default: the full build), its configuration header $pcfg,
# the image's name tag $ptag.
probe() {
	elf=$work/probe-${1:-all}${ptag:-}.elf
	policy=${1:-} lto=
	if link_probe "$elf" "${pobjs:-$objs}/libelevator.a"; then
		arm-none-eabi-nm -S -t d "$elf" | awk '
			$4 ~ /^(elv_probe|memset$|memcpy$)/ { next }
			$3 ~ /^[tT]$/ && $4 ~ /^__/ { h += $2; next }
			$3 ~ /^[tT]$/ { t += $2 } $3 ~ /^[rR]$/ { r += $2 }
			END { printf "%d %d %d\n", t, r, h }'
	else
		echo "n/a n/a n/a"
	fi
}
: >"$work/probe.log"

{
	echo "<!-- size-table: begin (generated by tools/size-table.sh --update; do not edit) -->"
	echo "Cortex-M3, arm-none-eabi-gcc $gccver, \`-mcpu=cortex-m3 -mthumb -Os -ffunction-sections"
	echo "-fdata-sections\`, \`ELV_NO_MALLOC\`, \`ELV_NO_ASSERT\`; the library's own sections in bytes"
	echo "(\`arm-none-eabi-size -A\`), not a linked image. \"core\" is every file of"
	echo "\`ELV_CORE_SOURCES\` plus \`registry.c\` (the built-in policy table)."
	echo
	echo "Linked: what a firmware using that policy links (\`tests/embedded/size_probe.c\`,"
	echo "\`--gc-sections\`, the run-time API; \"the four\" names noop, deadline, anticipatory and"
	echo "CFQ and also switches, sets tunables, reads policy stats and runs the checker; \"every"
	echo "built-in policy\" also looks policies up by name, which links all of them). Objects: the"
	echo "sum of the objects, whatever is used. Helpers: libgcc routines pulled in (64-bit"
	echo "division), counted apart from .text."
	echo
	echo "Full: every feature in (\`tests/embedded/freestanding/elv_fw_config.h\`). Minimal:"
	echo "every \`ELV_NO_*\` option (\`tests/embedded/freestanding/elv_min_config.h\`); \"minimal"
	echo "with back merges\": the same keeping back merges (\`ELV_MIN_BACK_MERGES\`). Limit (from"
	echo "\`tools/size-budget.txt\`, checked in CI): a minimal row's budget; for a full row, 2% over"
	echo "the figure recorded there (recorded + 2%)."
	echo
	echo "| configuration | .text linked | limit | .rodata linked | helpers | .text objects | .data + .bss |"
	echo "|---|---:|---:|---:|---:|---:|---:|"
	set -- $(sum $base)
	echo "| core alone | | | | | $1 | $(($3 + $4)) |"
	for cfg in full min minback; do
		for p in $single four all; do
			[ "$cfg" != minback ] || case $p in noop | deadline | four) ;; *) continue ;; esac
			case $p in
			all) pp="" sel="$policies" label="every built-in policy, lookup by name" ;;
			four) pp=four sel=$four label="noop, deadline, anticipatory and cfq" ;;
			classic) pp=sstf sel=classic label="sstf (any classic algorithm: one file)" ;;
			*) pp=$p sel=$p label=$p ;;
			esac
			if [ "$cfg" = full ]; then
				set -- $(sum $base $sel) $(probe $pp)
				label="core + $label"
			elif [ "$cfg" = min ]; then
				set -- $(objs_txt=$work/objects-min.txt sum $base $sel) \
					$(pobjs=$work/objs-min pcfg=elv_min_config.h ptag=-min probe $pp)
				label="core + $label, minimal"
			else
				set -- "" "" 0 0 $(pobjs=$work/objs-minback pcfg=elv_min_config.h \
					ptag=-minback probe $pp)
				label="core + $label, minimal with back merges"
			fi
			echo "$cfg $p $5" >>"$work/measured.txt"
			db=""
			[ "$cfg" = minback ] || db=$(($3 + $4))
			echo "| $label | $5 | $(limit_of "$cfg" "$p") | $6 | $7 | $1 | $db |"
		done
	done
	echo
	echo "What each option saves alone, against the full configuration (linked .text, bytes;"
	echo "\`ELV_NO_STATS\` is measured with \`ELV_NO_SWITCH\`, which CFQ needs with it):"
	echo
	echo "| option | core + noop | core + deadline | core + the four |"
	echo "|---|---:|---:|---:|"
	for o in $opt_list; do
		row="| \`$(echo "$o" | sed 's/+/` + `/g')\` |"
		for p in noop deadline four; do
			f=$(awk -v r="$p" '$1 == "full" && $2 == r { print $3 }' "$work/measured.txt")
			set -- $(pobjs=$work/objs-opt-$o ptag=-opt-$o probe $p)
			case $1 in n/a) row="$row n/a |" ;; *) row="$row $((f - $1)) |" ;; esac
		done
		echo "$row"
	done
	echo
	# Why a one-policy image holds more than its policy: the archive members the linker
	# pulled in for another policy, with the reference that pulled them.
	first=$(echo "$policies" | head -n 1)
	if [ -n "$first" ] && [ -f "$work/probe-$first.elf.map" ]; then
		sed -n '1,/^Discarded input sections/p' "$work/probe-$first.elf.map" |
			awk -v first="$first" '
				/libelevator\.a\([a-z_]+\.o\)$/ { m = $1; sub(/.*\(/, "", m); sub(/\.o\)$/, "", m); next }
				m != "" && /libelevator\.a\(/ {
					by = $1; sub(/.*\(/, "", by); sub(/\.o\)$/, "", by)
					sym = $2; gsub(/[()]/, "", sym)
					if (m == "registry" || (by == "registry" && m != first))
						printf "- core + %s also links `%s.c`: `%s.c` uses `%s`\n", first, m, by, sym
				}
				{ m = "" }'
		echo
	fi
	echo "A firmware that links with \`-flto\` (library built \`-Os -flto -ffat-lto-objects\`):"
	echo "whole-image \`.text\` of the probe, its own calls included, since link-time inlining"
	echo "moves library code into them."
	echo
	echo "| configuration | image .text | image .text, \`-flto\` | change | \`-flto\` and \`ELV_NO_CHECK\` |"
	echo "|---|---:|---:|---:|---:|"
	for p in $single four; do
		a=$(image plain "$p") l=$(image lto "$p") n=$(image lto-nocheck "$p")
		if [ "$a" = n/a ] || [ "$l" = n/a ]; then c=n/a; else
			c=$(awk -v a="$a" -v l="$l" 'BEGIN { printf "%+.1f%%", 100 * (l - a) / a }'); fi
		[ "$p" = four ] && lab="the four" || lab=$p
		echo "| core + $lab | $a | $l | $c | $n |"
	done
	echo
	echo "With assertions on (\`ELV_ASSERT\` trapping), core + all policies: .text $text_assert."
	echo
	echo "| object | .text | .rodata | .data | .bss |"
	echo "|---|---:|---:|---:|---:|"
	sort "$work/objects.txt" | awk '{ printf "| %s.c | %d | %d | %d | %d |\n", $1, $2, $3, $4, $5 }'
	echo
	echo "External symbols of the archive (\`tests/embedded/freestanding.sh\`, allowed: memset, memcpy):"
	echo
	sed -n 's/^freestanding ([^)]*): external symbols: \(.*\)$/\1/p' "$work/freestanding.log" |
		awk '{ printf "- all: "; for (i = 1; i <= NF; i++) printf "%s`%s`", (i > 1 ? ", " : ""), $i; print "" }'
	awk '/NOT ALLOWED:/ { sym = $3; sub(/,$/, "", sym); next }
		/^    [^ ]+\.c: / && sym != "" { printf "- `%s` from %s `%s`\n", sym, $1, $2 }' \
		"$work/freestanding.log" | sed 's/\.c: `/.c `/; s/\(\.c\):/\1/'
	echo
	echo "Largest functions (.text bytes):"
	echo
	echo "| function | file | bytes |"
	echo "|---|---|---:|"
	for o in "$objs"/*.o; do
		arm-none-eabi-nm -S --size-sort -t d "$o" |
			awk -v f="$(basename "$o" .o).c" '$3 ~ /^[tT]$/ { printf "%d %s %s\n", $2, $4, f }'
	done | sort -rn | head -n 15 | awk '{ printf "| %s | %s | %d |\n", $2, $3, $1 }'
	echo
	echo "Memory on 32-bit ARM (Cortex-M3, from \`tests/embedded/sizes.c\` under QEMU), bytes:"
	echo
	echo "| what | bytes |"
	echo "|---|---:|"
	if [ "$qemu_ok" -eq 1 ]; then
		awk '$1 == "sizeof" { printf "| `%s %s` | %d |\n", $2, $3, $4 }' "$work/sizes.txt"
		awk '$1 == "queue" { n = ($2 == "any") ? "any built-in (elv_switch to all)" : $2
			printf "| queue, %s, default config | %d |\n", n, $4
			printf "| queue, %s, nr_requests = 32 | %d |\n", n, $6 }' "$work/sizes.txt"
	else
		echo "| (sizes.c did not run) | |"
	fi
	echo "<!-- size-table: end -->"
} >"$work/table.md"
cat "$work/table.md"

if [ "$update" -eq 1 ]; then
	doc=$root/docs/embedded.md
	grep -q '^<!-- size-table: begin' "$doc" || { echo "size-table: no markers in $doc" >&2; exit 1; }
	awk -v table="$work/table.md" '
		/^<!-- size-table: begin/ { while ((getline l < table) > 0) print l; skip = 1; next }
		/^<!-- size-table: end/ { skip = 0; next }
		!skip { print }' "$doc" >"$doc.tmp" && mv "$doc.tmp" "$doc"
	echo "size-table: updated $doc"
fi

if [ "$record" -eq 1 ]; then
	# Keep the budgets and comments, write this run's full rows as the recorded figures.
	if grep -q ' n/a$' "$work/measured.txt"; then
		echo "size-table: a row did not link; nothing recorded" >&2
		exit 1
	fi
	{
		grep -v '^recorded ' "$budgets"
		awk '$1 == "full" && $2 != "all" { printf "recorded full %s %d\n", $2, $3 }' \
			"$work/measured.txt"
	} >"$budgets.tmp" && mv "$budgets.tmp" "$budgets"
	echo "size-table: recorded the full rows in $budgets"
fi

if [ "$check" -eq 1 ]; then
	fail=0
	over() { # over LABEL VALUE LIMIT
		if [ "$2" -gt "$3" ]; then echo "size-table: OVER LIMIT: $1 = $2 > $3"; fail=1
		else echo "size-table: ok: $1 = $2 <= $3"; fi
	}
	nlimits=0
	# shellcheck disable=SC2034
	while read -r kind cfg row bytes; do
		case $kind in budget | recorded) ;; *) continue ;; esac
		nlimits=$((nlimits + 1))
		got=$(awk -v c="$cfg" -v r="$row" '$1 == c && $2 == r { print $3 }' "$work/measured.txt")
		case $got in
		"" | n/a) echo "size-table: $cfg $row: not measured (see $work/probe.log)"; fail=1 ;;
		*) over "$cfg core + $row .text (linked, $kind $bytes)" "$got" "$(limit_of "$cfg" "$row")" ;;
		esac
	done <"$budgets"
	# The three budgets, and a recorded figure for each of the four policies and for the four.
	for r in "budget min noop" "budget min deadline" "budget min four" "recorded full noop" \
		"recorded full deadline" "recorded full anticipatory" "recorded full cfq" \
		"recorded full four"; do
		grep -q "^$r [0-9]" "$budgets" || {
			echo "size-table: no '$r' line in $budgets (tools/size-table.sh --record)"
			fail=1
		}
	done
	set -- $(sum $base $policies)
	over "library .data + .bss" $(($3 + $4)) 0
	set -- $(objs_txt=$work/objects-min.txt sum $base $policies)
	over "library .data + .bss, minimal" $(($3 + $4)) 0
	if [ "$qemu_ok" -eq 1 ]; then
		over "sizeof(struct elv_request)" "$(awk '$3 == "elv_request" { print $4 }' "$work/sizes.txt")" 56
	else
		fail=1
	fi
	exit "$fail"
fi
