#!/usr/bin/env bash
# ABI check of libelevator.so against the recorded baseline of the version the tree claims.
#
# tools/abi/libelevator-<abi>.xml holds the ABI of each released (or about to be released)
# ABI version, written by tools/abi/update-baseline.sh; <abi> is "0.MINOR" in 0.x, where the
# minor acts as the major, and MAJOR from 1.0 on. The stage:
#   - fails when abidw or abidiff is missing (never skipped);
#   - with a baseline for the tree's version: fails on any change but added functions and
#     variables (removed or changed functions, types that changed size or layout);
#   - when the version moved past the newest baseline: fails until the new ABI is recorded
#     (tools/abi/update-baseline.sh, then commit the file), and shows what changed since;
#   - fails when the tree's version is older than the newest baseline.
# So an incompatible change passes only together with a new ABI version and its baseline.
source "$(dirname "$0")/common.sh"
source tools/abi/abi-lib.sh
elv_abi_tools_present

key=$(elv_abi_key include/elevator/elevator.h)
mapfile -t baselines < <(find tools/abi -maxdepth 1 -name 'libelevator-*.xml' -printf '%f\n' |
	sed 's/^libelevator-\(.*\)\.xml$/\1/' | sort -V)
if [ "${#baselines[@]}" -eq 0 ]; then
	echo "abi: no baseline in tools/abi (run tools/abi/update-baseline.sh on the last release)" >&2
	exit 1
fi
newest=${baselines[${#baselines[@]} - 1]}
echo "abi: the tree is ABI $key; baselines: ${baselines[*]}"

so=$(elv_abi_build "$ELV_ROOT" "$ELV_CI_DIR/abi")
current="$ELV_CI_DIR/abi.xml"
elv_abi_dump "$so" include/elevator "$current"
echo "abi: $(basename "$so"): $(elv_abi_count "$current" func) functions," \
	"$(elv_abi_count "$current" object) variables"

# The SONAME is the ABI version: a library that claims one ABI and carries another name
# would be loaded by programs built for the wrong one.
soname=$(objdump -p "$so" | awk '$1 == "SONAME" { print $2 }')
if [ "$soname" != "libelevator.so.$key" ]; then
	echo "abi: SONAME is '$soname', expected libelevator.so.$key" >&2
	exit 1
fi

# abidiff's status is a bit mask: 1 error, 2 usage, 4 ABI change, 8 incompatible change.
# --no-added-syms leaves added functions and variables out, and out of the status too.
compare() {
	local rc=0
	abidiff --no-added-syms "$1" "$2" >"$ELV_CI_DIR/abi.diff" 2>&1 || rc=$?
	sed 's/^/  /' "$ELV_CI_DIR/abi.diff"
	return "$rc"
}

# Canary: the tree's ABI with elv_add's symbol taken out must fail as incompatible, or this
# abidiff compares nothing and every verdict below would be empty.
grep -v "<elf-symbol name='elv_add' " "$current" >"$ELV_CI_DIR/abi-canary.xml"
rc=0
abidiff --no-added-syms "$current" "$ELV_CI_DIR/abi-canary.xml" >/dev/null 2>&1 || rc=$?
if [ $((rc & 8)) -eq 0 ]; then
	echo "abi: abidiff did not flag a removed elv_add (status $rc): the check is blind" >&2
	exit 1
fi
echo "abi: canary ok (a removed elv_add is flagged as incompatible, status $rc)"

if [ "$(printf '%s\n%s\n' "$key" "$newest" | sort -V | tail -n1)" != "$key" ]; then
	echo "abi: the tree claims ABI $key, older than the newest baseline $newest" >&2
	exit 1
fi
if [ "$key" != "$newest" ]; then
	echo "abi: changes since ABI $newest (informational):"
	compare "tools/abi/libelevator-$newest.xml" "$current" || true
	echo "abi: the version moved to ABI $key and it has no baseline: record it with" >&2
	echo "  tools/abi/update-baseline.sh && git add tools/abi/libelevator-$key.xml" >&2
	exit 1
fi

echo "+ abidiff --no-added-syms tools/abi/libelevator-$key.xml build-ci/abi.xml"
if ! compare "tools/abi/libelevator-$key.xml" "$current"; then
	echo "abi: the library breaks ABI $key. Either keep the ABI, or move to a new ABI" >&2
	echo "  version (ELV_VERSION_MINOR in 0.x, ELV_VERSION_MAJOR from 1.0; elevator.h and" >&2
	echo "  CMakeLists.txt) and record it with tools/abi/update-baseline.sh. Before the" >&2
	echo "  version is released, re-recording the baseline of the same version is the fix." >&2
	exit 1
fi
added=$( (abidiff "tools/abi/libelevator-$key.xml" "$current" || true) |
	sed -n 's/.* \([0-9][0-9]*\) Added .*/\1/p' | awk '{ n += $1 } END { print n + 0 }')
echo "abi: $soname is compatible with the ABI $key baseline ($added symbols added)"
