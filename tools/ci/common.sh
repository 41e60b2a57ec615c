# Sourced by the stage scripts: repository root, build directories, helpers.
# shellcheck shell=bash
set -euo pipefail
ELV_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ELV_ROOT"
ELV_CI_DIR="${ELV_CI_DIR:-$ELV_ROOT/build-ci}"
ELV_JOBS=${ELV_JOBS:-2}
mkdir -p "$ELV_CI_DIR"

# Compilers through ccache (tools/ci/packages/ccache.txt) when it is installed: stages and steps
# compile the same source with the same flags (the Release library in stages 10, 50, 52, 55, 60
# and 89, the RelWithDebInfo one in 65, 86 and 87; a library file an option leaves untouched in
# each of the 40 builds of tests/embedded/options.sh and the 21 of tools/size-table.sh). The
# cache lives in the CI directory, so a run starts empty and can only reuse what it compiled
# itself; ccache hashes the preprocessed source and every flag, so a hit is the object the
# compiler would produce. Paths are absolute in every compile line (CMake's, the embedded
# scripts'), so the working directory, which only names the debug info's compilation
# directory, is left out of the hash (hash_dir), and trees share debug builds too. A stage
# whose flags no other uses sets ELV_NO_CCACHE: a miss costs a preprocessor run more.
if [ -z "${ELV_NO_CCACHE:-}" ] && command -v ccache >/dev/null && [ -d /usr/lib/ccache ]; then
	case ":$PATH:" in
	*:/usr/lib/ccache:*) ;;
	*) export PATH="/usr/lib/ccache:$PATH" ;;
	esac
	export CCACHE_DIR="$ELV_CI_DIR/ccache" CCACHE_NOHASHDIR=1 CCACHE_NOCOMPRESS=1
fi

# fail MESSAGE...: the stage fails with MESSAGE, in one line.
fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# ci_configure <name> [cmake args...]: a fresh build tree build-ci/<name>.
ci_configure() {
	local name=$1
	shift
	rm -rf "${ELV_CI_DIR:?}/$name"
	echo "+ cmake -S . -B build-ci/$name $*"
	rm -f "$ELV_CI_DIR/$name.args"
	cmake -S "$ELV_ROOT" -B "$ELV_CI_DIR/$name" -DELV_WERROR=ON "$@" >"$ELV_CI_DIR/$name.configure.log" ||
		{ cat "$ELV_CI_DIR/$name.configure.log"; return 1; }
	echo "$*" >"$ELV_CI_DIR/$name.args"
}

# ci_pair LOG FN1 FN2: FN1 and FN2 (commands without arguments, functions say) side by side,
# one a core, when ELV_JOBS >= 2, their outputs in LOG-1.log and LOG-2.log shown whole when
# both have ended; one after the other otherwise. Both always run to the end; fails if either
# failed.
ci_pair() {
	local one two status=0
	if [ "$ELV_JOBS" -ge 2 ]; then
		"$2" >"$1-1.log" 2>&1 &
		one=$!
		"$3" >"$1-2.log" 2>&1 &
		two=$!
		wait "$one" || status=1
		wait "$two" || status=1
		cat "$1-1.log" "$1-2.log"
	else
		"$2" || status=1
		"$3" || status=1
	fi
	return "$status"
}

# A pool of background jobs, ELV_JOBS at a time, for a stage's independent steps:
#   ci_pool_start CMD...  runs CMD in the background, first waiting for a job to end when
#                         ELV_JOBS already run ($! is CMD's pid afterwards);
#   ci_pool_drain         waits for every job.
# Each job that ends is handed to the stage's ci_pool_done PID STATUS, which reports it.
# Ended jobs are found by pid (those the pool started that `jobs -r` no longer lists) and their
# status taken with `wait PID`, which bash keeps for a reaped child: `wait -n -p` was seen to
# return with no pid for a job that had already ended.
ci_pool_pids=()
ci_pool_start() {
	[ "${#ci_pool_pids[@]}" -lt "$ELV_JOBS" ] || ci_pool_wait_one
	"$@" &
	ci_pool_pids+=("$!")
}
# ci_pool_wait_one: hand every job of the pool that has ended to ci_pool_done, after waiting
# for one to end if none has.
ci_pool_wait_one() {
	local p rc running left=()
	while :; do
		running=" $(jobs -rp | tr '\n' ' ') "
		left=()
		for p in "${ci_pool_pids[@]}"; do
			case $running in *" $p "*) left+=("$p") ;; esac
		done
		[ "${#left[@]}" -lt "${#ci_pool_pids[@]}" ] && break
		wait -n || true
	done
	for p in "${ci_pool_pids[@]}"; do
		case " ${left[*]} " in *" $p "*) continue ;; esac
		rc=0
		wait "$p" || rc=$?
		ci_pool_done "$p" "$rc"
	done
	ci_pool_pids=("${left[@]}")
}
ci_pool_drain() {
	while [ "${#ci_pool_pids[@]}" -gt 0 ]; do
		ci_pool_wait_one
	done
}

# ci_logged DIR NAME CMD...: CMD with its output in DIR/NAME.log and its exit status in
# DIR/NAME.rc, for pool jobs whose verdicts are read from those files once all have ended.
ci_logged() {
	local dir=$1 name=$2 rc=0
	shift 2
	"$@" >"$dir/$name.log" 2>&1 || rc=$?
	echo "$rc" >"$dir/$name.rc"
}

# ci_shared <name> [cmake args...]: build-ci/<name> as an earlier stage of this run configured
# it with exactly these arguments (its ci_build then only compiles what it lacks); a fresh
# ci_configure when there is no such tree, as when the stage runs alone.
ci_shared() {
	local name=$1
	shift
	if [ -f "$ELV_CI_DIR/$name/CMakeCache.txt" ] &&
		[ "$(cat "$ELV_CI_DIR/$name.args" 2>/dev/null)" = "$*" ]; then
		echo "+ build-ci/$name, configured with the same arguments by an earlier stage: shared"
		return 0
	fi
	ci_configure "$name" "$@"
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

# ci_expect_suite <name>: every tests/<area>/test_<unit>.c is registered with ctest in
# build-ci/<name>, so that a test lost from the build fails CI instead of shrinking it.
ci_expect_suite() {
	local name=$1 listed missing=() src unit
	listed=$(cd "$ELV_CI_DIR/$name" && ctest -N | sed -n 's/^ *Test *#[0-9]*: //p')
	for src in tests/*/test_*.c; do
		unit=$(basename "$src" .c)
		grep -qx "$unit" <<<"$listed" || missing+=("$unit")
	done
	if [ "${#missing[@]}" -ne 0 ]; then
		echo "ctest in build-ci/$name lacks: ${missing[*]}" >&2
		return 1
	fi
	echo "ctest in build-ci/$name: $(wc -l <<<"$listed") tests, every tests/*/test_*.c among them"
}
