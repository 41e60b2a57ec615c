#!/usr/bin/env bash
# Linux's I/O schedulers and libelevator's policies on the same emulated disk, same fio jobs:
#
#   tools/kernel-compare/kernel-compare.sh [--build DIR] [--model M] [--size S] [--runtime SEC]
#       (--size: default the model's whole capacity, so random I/O seeks as on the real disk)
#       [--schedulers none,mq-deadline,kyber,bfq] [--policies noop,deadline,anticipatory,cfq|all]
#       [--jobs morton,writeflood,prio,randdepth] [--json FILE] [--keep DIR]
#
# (a) Linux: nbdkit serves the elvdisk plugin (model M, real time) on a Unix socket; nbdfuse
#     makes it a file on FUSE; a loop device with direct I/O sits on that file, with the kernel
#     scheduler under test; fio runs on the loop device (libaio, O_DIRECT).
# (b) libelevator: the same nbdkit and elvdisk with the elevator filter in front (policy under
#     test, depth 1 for a rotational model, one stream per connection); fio talks NBD to it.
# Every run gets a fresh nbdkit. Prints one table (per job file, scheduler and fio job:
# throughput, read and write completion latency p50/p99/max) and writes the same as JSON.
# Needs root, loop devices and /dev/fuse; fails with one line otherwise. Everything started
# is stopped by pid and every loop device and FUSE mount removed, also on failure or Ctrl-C;
# every wait is bounded. docs/kernel-compare.md explains the rig and its limits.
set -euo pipefail

me=kernel-compare
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
die() {
	echo "$me: $*" >&2
	exit 2
}

build=$root/build
model=ide2003
size=
runtime=10
scheds=none,mq-deadline,kyber,bfq
policies=noop,deadline,anticipatory,cfq
jobs=morton,writeflood,prio,randdepth
json=
keep=
while [ $# -gt 0 ]; do
	[ $# -ge 2 ] || die "option $1 needs a value"
	case $1 in
	--build) build=$2 ;;
	--model) model=$2 ;;
	--size) size=$2 ;;
	--runtime) runtime=$2 ;;
	--schedulers) scheds=$2 ;;
	--policies) policies=$2 ;;
	--jobs) jobs=$2 ;;
	--json) json=$2 ;;
	--keep) keep=$2 ;;
	*) die "unknown option $1 (see the header of $0)" ;;
	esac
	shift 2
done
case $runtime in '' | *[!0-9]* | 0) die "--runtime must be whole seconds, at least 1" ;; esac

[ "$(id -u)" -eq 0 ] || die "needs root (loop devices, FUSE mounts, kernel schedulers)"
[ -e /dev/loop-control ] || die "needs loop devices (/dev/loop-control is missing)"
[ -c /dev/fuse ] || die "needs FUSE (/dev/fuse is missing)"
for t in nbdkit nbdfuse fio losetup python3 timeout mountpoint; do
	command -v "$t" >/dev/null || die "$t is missing (Debian: nbdkit libnbd-bin fio)"
done
fio --enghelp 2>/dev/null | grep -qx '[[:space:]]*nbd' || die "this fio has no nbd ioengine"
plugin=$build/nbdkit/nbdkit-elvdisk-plugin.so
filter=$build/nbdkit/nbdkit-elevator-filter.so
[ -f "$plugin" ] && [ -f "$filter" ] ||
	die "no nbdkit modules in $build/nbdkit (build with -DELV_BUILD_NBDKIT=ON, or --build DIR)"
if [ "$policies" = all ]; then
	policies=$(nbdkit --filter="$filter" null --help 2>&1 |
		sed -n 's/^Built-in policies: //p' | tr ' ' ',')
	[ -n "$policies" ] || die "cannot list the filter's policies"
fi
IFS=, read -r -a sched_list <<<"$scheds"
IFS=, read -r -a pol_list <<<"$policies"
IFS=, read -r -a job_list <<<"$jobs"
for j in "${job_list[@]}"; do
	[ -f "$here/jobs/$j.fio" ] || die "no job file $here/jobs/$j.fio"
done

work=$(mktemp -d /tmp/kernel-compare.XXXXXX)
srv=
loop=
fused=0
cleanup_run() {
	set +e
	if [ -n "${fio_pid:-}" ]; then
		kill "$fio_pid" 2>/dev/null # timeout(1) passes it on to fio
		wait "$fio_pid" 2>/dev/null
		fio_pid=
	fi
	if [ -n "$loop" ]; then
		losetup -d "$loop"
		loop=
	fi
	if [ "$fused" -eq 1 ]; then
		timeout 10 umount "$work/mnt" || umount -l "$work/mnt"
		fused=0
	fi
	if [ -n "$srv" ]; then
		kill "$srv" 2>/dev/null
		for _ in $(seq 50); do
			kill -0 "$srv" 2>/dev/null || break
			sleep 0.1
		done
		kill -9 "$srv" 2>/dev/null
		wait "$srv" 2>/dev/null
		srv=
	fi
	[ -n "${fpid:-}" ] && kill -0 "$fpid" 2>/dev/null && kill -9 "$fpid"
	fpid=
	set -e
}
cleanup() {
	trap '' INT TERM
	trap - EXIT
	cleanup_run
	if [ -n "$keep" ]; then
		mkdir -p "$keep" && cp "$work"/*.json "$keep"/ 2>/dev/null
	fi
	rm -rf "$work"
}
trap cleanup EXIT
trap 'echo "$me: interrupted" >&2; exit 130' INT TERM

# start_nbdkit ARGS...: nbdkit in the foreground of a background job on $work/d.sock.
start_nbdkit() {
	rm -f "$work/d.sock"
	nbdkit -f -t 128 -U "$work/d.sock" "$@" 2>>"$work/nbdkit.log" &
	srv=$!
	for _ in $(seq 100); do
		[ -S "$work/d.sock" ] && return 0
		kill -0 "$srv" 2>/dev/null || break
		sleep 0.05
	done
	cat "$work/nbdkit.log" >&2
	die "nbdkit did not start"
}

# run_fio JOB OUT ENGINE-OPTIONS...: the job file with the engine's global options first.
run_fio() {
	local job=$1 out=$2
	shift 2
	{
		echo "[global]"
		printf '%s\n' "$@"
		cat "$here/jobs/$job.fio"
	} >"$work/job.fio"
	# In the background and waited for, so that a signal is handled at once.
	KC_RUNTIME=$runtime KC_RUNTIME_QUARTER=$(((runtime + 3) / 4)) \
		timeout $((runtime * 2 + 60)) fio --output-format=json --output="$out" \
		"$work/job.fio" >/dev/null 2>"$work/fio.err" &
	fio_pid=$!
	wait "$fio_pid" || { fio_pid=; cat "$work/fio.err" >&2; die "fio failed on $job (see above)"; }
	fio_pid=
}

case $model in ssd | null | usb-stick) rot=0 ;; *) rot=1 ;; esac
mkdir "$work/mnt"
results=()
echo "$me: model $model, size ${size:-the whole model}, ${runtime}s per job file and scheduler; kernel $(uname -r)" >&2
for job in "${job_list[@]}"; do
	for s in "${sched_list[@]}"; do
		echo "$me: $job on Linux $s" >&2
		start_nbdkit "$plugin" model="$model" ${size:+size="$size"}
		nbdfuse "$work/mnt/disk" --unix "$work/d.sock" &
		fpid=$!
		for _ in $(seq 100); do
			[ -e "$work/mnt/disk" ] && break
			sleep 0.05
		done
		[ -e "$work/mnt/disk" ] || die "nbdfuse did not come up"
		fused=1
		loop=$(losetup -f --show --direct-io=on "$work/mnt/disk")
		q=/sys/block/$(basename "$loop")/queue
		grep -qw -- "$s" "$q/scheduler" || die "the kernel has no scheduler $s ($(cat "$q/scheduler"))"
		echo "$s" >"$q/scheduler"
		# The loop device is rotational when the modelled disk is: BFQ idles (anticipates)
		# only on rotational devices, as libelevator's anticipatory and cfq do.
		echo "$rot" >"$q/rotational"
		out=$work/$job.linux.$s.json
		run_fio "$job" "$out" "filename=$loop" ioengine=libaio direct=1
		results+=("$job" "linux" "$s" "$out")
		cleanup_run
	done
	for p in "${pol_list[@]}"; do
		echo "$me: $job on libelevator $p" >&2
		start_nbdkit --filter="$filter" "$plugin" model="$model" ${size:+size="$size"} \
			policy="$p" rotational=$([ "$rot" -eq 1 ] && echo true || echo false)
		out=$work/$job.elv.$p.json
		run_fio "$job" "$out" ioengine=nbd "uri=nbd+unix:///?socket=$work/d.sock"
		results+=("$job" "libelevator" "$p" "$out")
		cleanup_run
	done
done

python3 "$here/summarize.py" --model "$model" --runtime "$runtime" --kernel "$(uname -r)" \
	${json:+--json "$json"} "${results[@]}"
