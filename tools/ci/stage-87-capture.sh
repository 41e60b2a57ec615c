#!/usr/bin/env bash
# tools/capture/capture-trace.sh on this machine, as root: a tiny command on a loop device
# gives a trace that `elvsim replay --format ftrace` reads (arrivals and recorded service
# times); a failing command and a terminated capture leave nothing behind either. "Nothing
# behind" is checked against a snapshot taken before: loop devices, mounts, the block
# events' enable and filter files, the trace buffer size and tracing_on. Needs root, loop
# devices and tracefs; without them the stage fails with one line (it never skips).
source "$(dirname "$0")/common.sh"
[ "$(id -u)" -eq 0 ] || fail "stage-87 needs root (loop devices, mount, tracefs)"
[ -e /dev/loop-control ] || fail "stage-87 needs loop devices (/dev/loop-control is missing)"
grep -qw tracefs /proc/filesystems || fail "stage-87 needs tracefs in the kernel"
for tool in losetup mkfs.ext4 lsblk timeout xz; do
	command -v "$tool" >/dev/null || fail "$tool not found"
done

ci_configure capture -DCMAKE_BUILD_TYPE=RelWithDebInfo -DELV_BUILD_TESTS=OFF
ci_build capture --target elvsim
elvsim="$ELV_CI_DIR/capture/tools/elvsim/elvsim"
cap=tools/capture/capture-trace.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

tr=/sys/kernel/tracing
snapshot() {
	losetup -a | sort
	awk '{ print $2, $3 }' /proc/mounts | sort
	for e in block_rq_insert block_rq_issue block_rq_complete block_rq_requeue block_rq_merge; do
		[ -d "$tr/events/block/$e" ] || continue
		echo "$e $(cat "$tr/events/block/$e/enable") $(cat "$tr/events/block/$e/filter")"
	done
	mountpoint -q "$tr" && echo "buffer $(cat "$tr/buffer_size_kb") on $(cat "$tr/tracing_on")"
	ls -d /tmp/capture-trace.* 2>/dev/null || true
}
snapshot >"$tmp/before"
check_clean() {
	snapshot >"$tmp/after"
	diff -u "$tmp/before" "$tmp/after" >&2 || fail "$1 left something behind (diff above)"
}

# 1. A tiny read and write workload.
echo "+ $cap --size 128M --prepare ... OUT -- read 40 files, write 1 MiB direct"
timeout 120 "$cap" --size 128M --mount-opts sync \
	--prepare 'mkdir t; for i in $(seq 40); do head -c 6000 /dev/urandom >t/f$i; done' \
	"$tmp/run.trace" -- sh -c 'cat t/* >/dev/null && dd if=/dev/zero of=big bs=64k count=16 oflag=direct status=none'
check_clean "a capture"
for e in block_rq_insert block_rq_issue block_rq_complete; do
	grep -q ": $e: " "$tmp/run.trace" || fail "the trace has no $e event"
done
"$elvsim" replay "$tmp/run.trace" --format ftrace --device ide2003 --policy noop,deadline \
	--json "$tmp/run.json" >"$tmp/replay.out" 2>"$tmp/replay.err" ||
	{ cat "$tmp/replay.err" >&2; fail "elvsim cannot replay the captured trace"; }
python3 - "$tmp/run.json" <<'PY' || fail "the replay of the captured trace is empty"
import json, sys
rep = json.load(open(sys.argv[1]))
res = rep["results"] if "results" in rep else rep["policies"]
n = [r.get("requests", 0) for r in res]
print("replayed requests per policy:", n)
sys.exit(0 if n and min(n) >= 40 else 1)
PY
grep -q 'recorded in the trace' "$tmp/replay.err" || fail "no recorded service times in the replay"
grep 'service time' "$tmp/replay.err"

# The recorded traces in traces/ replay as scenarios (xz through the system's xz).
"$elvsim" run trace-write-bomb --policy noop,cfq --closed-loop --json "$tmp/wb.json" \
	>/dev/null 2>"$tmp/wb.err" || { cat "$tmp/wb.err" >&2; fail "elvsim run trace-write-bomb failed"; }
grep -q 'recorded in the trace (1358 requests)' "$tmp/wb.err" ||
	fail "trace-write-bomb did not replay its 1358 recorded requests"

# 2. A failing command: its exit status comes back, everything is restored.
rc=0
timeout 120 "$cap" --size 64M "$tmp/fail.trace" -- false || rc=$?
[ "$rc" -eq 1 ] || fail "a failing command gave exit status $rc, not 1"
check_clean "a failed capture"

# 3. A capture terminated half-way.
"$cap" --size 64M "$tmp/term.trace" -- sleep 60 &
pid=$!
for _ in $(seq 300); do
	grep -q ' /tmp/capture-trace\.[^ ]*/mnt ' /proc/mounts && break
	sleep 0.1
done
sleep 2
kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
[ "$rc" -eq 130 ] || fail "a terminated capture gave exit status $rc, not 130"
check_clean "a terminated capture"

# 3b. timeout(1) signals its whole process group, the restore included.
rc=0
timeout -s TERM 8 "$cap" --size 64M "$tmp/timeout.trace" -- sleep 60 || rc=$?
[ "$rc" -eq 124 ] || fail "a capture stopped by timeout gave exit status $rc, not 124"
check_clean "a capture stopped by timeout"

# 4. Without root: one line, status 2.
if id nobody >/dev/null 2>&1; then
	rc=0
	msg=$(runuser -u nobody -- "$cap" "$tmp/x" -- true 2>&1) || rc=$?
	[ "$rc" -eq 2 ] && [ "$(echo "$msg" | wc -l)" -eq 1 ] ||
		fail "without root: status $rc, message '$msg'"
fi
echo "stage-87: capture, replay, failure and termination all restored the machine"
