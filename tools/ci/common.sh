# Sourced by the stage scripts: repository root, build directories, helpers.
# shellcheck shell=bash
set -euo pipefail
ELV_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ELV_ROOT"
ELV_CI_DIR="$ELV_ROOT/build-ci"
ELV_JOBS=${ELV_JOBS:-2}
mkdir -p "$ELV_CI_DIR"

# ci_configure <name> [cmake args...]: a fresh build tree build-ci/<name>.
ci_configure() {
	local name=$1
	shift
	rm -rf "${ELV_CI_DIR:?}/$name"
	echo "+ cmake -S . -B build-ci/$name $*"
	cmake -S "$ELV_ROOT" -B "$ELV_CI_DIR/$name" -DELV_WERROR=ON "$@" >"$ELV_CI_DIR/$name.configure.log" ||
		{ cat "$ELV_CI_DIR/$name.configure.log"; return 1; }
}

# ci_build <name> [cmake --build args...]
ci_build() {
	local name=$1
	shift
	echo "+ cmake --build build-ci/$name -j$ELV_JOBS $*"
	cmake --build "$ELV_CI_DIR/$name" -j"$ELV_JOBS" "$@"
}

# ci_ctest <name> [ctest args...]: every test, output shown for failures, none found = failure.
ci_ctest() {
	local name=$1
	shift
	(cd "$ELV_CI_DIR/$name" && ctest --output-on-failure --no-tests=error -j"$ELV_JOBS" "$@")
}
