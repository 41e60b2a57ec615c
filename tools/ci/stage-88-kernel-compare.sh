#!/usr/bin/env bash
# A short tools/kernel-compare/kernel-compare.sh run: the Morton job (a streaming reader
# against small dependent reads) on the emulated 2003 IDE disk through Linux (loop device
# over nbdfuse over nbdkit, schedulers none, mq-deadline, kyber and bfq) and through the
# elevator filter (noop, deadline, anticipatory, cfq), 3 s each. Checks that every run did
# I/O and that nothing is left behind: loop devices, FUSE mounts, nbdkit and nbdfuse
# processes (kernel-compare stops its own by pid; this stage checks none of them survive),
# also when kernel-compare is terminated in the middle of a run.
# Needs root, loop devices and /dev/fuse; without them it fails with one line, never skips.
source "$(dirname "$0")/common.sh"
[ "$(id -u)" -eq 0 ] || fail "stage-88 needs root (loop devices, FUSE, kernel schedulers)"
[ -e /dev/loop-control ] || fail "stage-88 needs loop devices (/dev/loop-control is missing)"
[ -c /dev/fuse ] || fail "stage-88 needs FUSE (/dev/fuse is missing)"
for tool in nbdkit nbdfuse fio python3 timeout; do
	command -v "$tool" >/dev/null || fail "$tool not found (tools/ci/packages)"
done

# The filter and the plugin as stage 86 builds them (same configuration: its tree is shared).
ci_shared elvdisk -DCMAKE_BUILD_TYPE=RelWithDebInfo -DELV_BUILD_TESTS=OFF \
	-DELV_BUILD_NBDKIT=ON -DELV_URING=ON
ci_build elvdisk --target nbdkit-elevator-filter nbdkit-elvdisk-plugin
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
snapshot() {
	losetup -a | sort
	awk '$3 ~ /fuse/ { print $2, $3 }' /proc/mounts | sort
}
snapshot >"$tmp/before"

rc=0
timeout 300 tools/kernel-compare/kernel-compare.sh --build "$ELV_CI_DIR/elvdisk" \
	--runtime 3 --jobs morton --json "$tmp/kc.json" || rc=$?
snapshot >"$tmp/after"
diff -u "$tmp/before" "$tmp/after" >&2 || fail "kernel-compare left loop devices or FUSE mounts behind"
if pgrep -f -- "$tmp|/tmp/kernel-compare\\." >/dev/null; then
	pgrep -af -- "/tmp/kernel-compare\\." >&2
	fail "kernel-compare left processes behind"
fi
[ "$rc" -eq 0 ] || fail "kernel-compare exited with $rc"

# Terminated in the middle of a run: it stops at once and still removes everything.
tools/kernel-compare/kernel-compare.sh --build "$ELV_CI_DIR/elvdisk" --runtime 30 \
	--jobs morton --schedulers none --policies noop >/dev/null 2>"$tmp/term.err" &
pid=$!
for _ in $(seq 100); do
	grep -q 'on Linux none' "$tmp/term.err" && break
	sleep 0.1
done
sleep 3
kill -TERM "$pid"
for _ in $(seq 150); do
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.1
done
kill -0 "$pid" 2>/dev/null && { kill -9 "$pid"; fail "kernel-compare did not stop within 15 s of SIGTERM"; }
rc=0
wait "$pid" || rc=$?
[ "$rc" -eq 130 ] || fail "a terminated kernel-compare exited with $rc, not 130"
snapshot >"$tmp/after"
diff -u "$tmp/before" "$tmp/after" >&2 || fail "a terminated kernel-compare left loop devices or FUSE mounts"
if pgrep -f -- "/tmp/kernel-compare\\." >/dev/null; then
	fail "a terminated kernel-compare left processes behind"
fi
python3 - "$tmp/kc.json" <<'PY' || fail "a kernel-compare run did no I/O"
import json, sys
doc = json.load(open(sys.argv[1]))
runs = doc["runs"]
assert len(runs) == 8, "want 8 runs (4 schedulers, 4 policies), got %d" % len(runs)
for r in runs:
    for j in r["fio_jobs"]:
        assert j["read"] and j["read"]["ios"] > 0, (r["side"], r["scheduler"], j["fio_job"])
print("stage-88: %d runs, every fio job did I/O" % len(runs))
PY
