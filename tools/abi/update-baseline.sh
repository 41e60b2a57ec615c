#!/usr/bin/env bash
# Record the ABI of libelevator.so as a baseline: tools/abi/libelevator-<abi>.xml, where <abi>
# is the ABI version of the source (see abi-lib.sh: "0.MINOR" in 0.x, MAJOR from 1.0 on).
#
#   tools/abi/update-baseline.sh            the working tree
#   tools/abi/update-baseline.sh v0.1.0     a commit or tag (exported with git archive)
#
# Run it when the version moved to a new ABI, and again whenever that ABI changes before the
# release is tagged; tools/ci/stage-56-abi.sh compares every build against the baseline of
# the version it claims. Commit the file it writes.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=abi-lib.sh
source "$root/tools/abi/abi-lib.sh"
elv_abi_tools_present

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ $# -ge 1 ]; then
	mkdir "$work/src"
	git -C "$root" archive --format=tar "$1" | tar -x -C "$work/src"
	src="$work/src"
	what="$1 ($(git -C "$root" rev-parse --short "$1^{commit}"))"
else
	src="$root"
	what="the working tree"
fi

key=$(elv_abi_key "$src/include/elevator/elevator.h")
out="$root/tools/abi/libelevator-$key.xml"
so=$(elv_abi_build "$src" "$work/build")
elv_abi_dump "$so" "$src/include/elevator" "$out"
echo "abi: $(elv_abi_count "$out" func) functions and $(elv_abi_count "$out" object)" \
	"variables of $(basename "$so") from $what"
echo "abi: wrote ${out#"$root"/}"
