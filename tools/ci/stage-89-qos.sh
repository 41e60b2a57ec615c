#!/usr/bin/env bash
# QoS of the nbdkit elevator filter with two real fio clients at once, over a Unix socket:
# - a cap: the connections to export "capped" get limit-iops=200 while a client of another
#   export runs unthrottled; the capped client's measured IOPS must lie within 10% of 200
#   and the other's far above it;
# - a reservation: on a device of limited capacity (nbdkit's delay filter, 1 ms a read, two
#   at once), a client with mclock-reservation=400 and weight 1 against a flood with weight
#   100 must get its reservation (95% of it as fio measures: mClock's reservation tags do
#   not save up time a release comes late by) and five times what the same two get without
#   the reservation, which is what the flood leaves it;
# - a cap lowered through control=FILE while a client runs takes effect, and a bad version
#   is refused whole;
# - bad QoS settings stop nbdkit with one line naming the setting.
# Release build (the rates are measured). Every server is killed by pid on exit, every wait
# is bounded; a missing tool or a check that measured nothing fails the stage.
source "$(dirname "$0")/common.sh"

for tool in nbdkit fio python3 timeout; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "FAIL: $tool is missing (tools/ci/packages/nbdkit.txt)" >&2
		exit 1
	fi
done
if ! fio --enghelp=nbd >/dev/null 2>&1; then
	echo "FAIL: this fio has no nbd ioengine" >&2
	exit 1
fi
if ! nbdkit --dump-config >/dev/null 2>&1 || ! nbdkit --filter=delay null --help >/dev/null 2>&1; then
	echo "FAIL: nbdkit or its delay filter is missing" >&2
	exit 1
fi

# gcc by name, as stage 10 builds Release: the compiler cache then holds these objects.
ci_configure qos -DCMAKE_C_COMPILER=gcc -DCMAKE_BUILD_TYPE=Release -DELV_BUILD_NBDKIT=ON \
	-DELV_BUILD_TESTS=OFF -DELV_BUILD_EXAMPLES=OFF -DELV_BUILD_TOOLS=OFF -DELV_BUILD_SIM=OFF
ci_build qos --target nbdkit-elevator-filter
filter="$ELV_CI_DIR/qos/nbdkit/nbdkit-elevator-filter.so"
[ -f "$filter" ] || { echo "FAIL: $filter was not built" >&2; exit 1; }

source "$ELV_ROOT/tools/ci/nbdkit.sh"
nbd_init qos

# two_clients NAME EXPORT-A EXPORT-B SECONDS: one fio process, two jobs at once (4 KiB random
# reads, 16 in flight each), one per export; JSON in $tmp/NAME.json.
two_clients() {
	local name=$1 a=$2 b=$3 secs=$4 j
	cat >"$tmp/$name.fio" <<EOF
[global]
ioengine=nbd
rw=randread
bs=4k
iodepth=16
size=64m
time_based=1
runtime=$secs
ramp_time=1
[$a]
uri=nbd+unix:///$a?socket=$sock
[$b]
uri=nbd+unix:///$b?socket=$sock
EOF
	timeout $((secs + 60)) fio --output-format=json --output="$tmp/$name.json" "$tmp/$name.fio" ||
		{ cat "$tmp/$name.json" >&2 || true; fail "fio $name"; }
	for j in "$a" "$b"; do
		iops["$name.$j"]=$(python3 - "$tmp/$name.json" "$j" <<'PY'
import json, sys
for job in json.load(open(sys.argv[1]))["jobs"]:
    if job["jobname"] == sys.argv[2]:
        assert job["error"] == 0, ("fio error", job["error"])
        ios = job["read"]["total_ios"]
        assert ios > 0, "no I/O"
        print("%.1f" % (ios / (job["read"]["runtime"] / 1000.0)))
        break
else:
    sys.exit("no job " + sys.argv[2])
PY
) || fail "fio $name: no result for $j"
	done
}

# stats_check FILE PYTHON-EXPRESSION: on the filter's stats JSON (d; c(EXPORT) = the
# connection that moved data for EXPORT).
stats_check() {
	python3 - "$1" "$2" <<'PY' || fail "stats check '$2' on $1"
import json, sys
d = json.load(open(sys.argv[1]))
def c(export):
    cs = [x for x in d["connections"] if x["export"] == export and x["reads"] > 0]
    assert len(cs) == 1, ("connections of", export, cs)
    return cs[0]
ok = eval("(" + sys.argv[2] + ")")
if not ok:
    print(json.dumps(d, indent=1), file=sys.stderr)
sys.exit(0 if ok else 1)
PY
}

declare -A iops
within() { # within VALUE TARGET FRACTION
	python3 -c "import sys; v,t,f=map(float,sys.argv[1:]); sys.exit(0 if abs(v-t) <= f*t else 1)" "$@"
}
atleast() { # atleast VALUE BOUND
	python3 -c "import sys; v,b=map(float,sys.argv[1:]); sys.exit(0 if v >= b else 1)" "$@"
}
ran=0

# ---- a cap: 200 IOPS on one export, the other client unthrottled -------------------------
start_server cap --filter="$filter" memory 256M policy=deadline \
	export.capped.limit-iops=200 stats="$tmp/cap.stats.json"
two_clients cap capped free 5
stop_server
within "${iops[cap.capped]}" 200 0.10 ||
	fail "capped client: ${iops[cap.capped]} IOPS, not within 10% of 200"
atleast "${iops[cap.free]}" 2000 ||
	fail "unthrottled client: ${iops[cap.free]} IOPS, expected far above the cap"
stats_check "$tmp/cap.stats.json" "d['qos'] and c('capped')['qos']['settings'] ==
	{'limit-iops': 200} and c('capped')['qos']['throttled'] > 0 and
	c('capped')['qos']['held_ms'] > 0 and c('free')['qos']['throttled'] == 0 and
	c('free')['qos']['settings'] == {}"
echo "cap: export capped at limit-iops=200 measured ${iops[cap.capped]} IOPS (within 10%)" \
	"while export free ran ${iops[cap.free]} IOPS at the same time"
ran=$((ran + 1))

# ---- a reservation against a flood, on a device of limited capacity ----------------------
# delay-read=1ms under the elevator filter, depth=2: about 2000 reads/s at most.
dev=(--filter="$filter" --filter=delay memory 256M delay-read=1ms policy=noop depth=2)
start_server nores "${dev[@]}" export.flood.mclock-weight=100 export.small.mclock-weight=1 \
	stats="$tmp/nores.stats.json"
two_clients nores small flood 5
stop_server
start_server res "${dev[@]}" export.flood.mclock-weight=100 export.small.mclock-weight=1 \
	export.small.mclock-reservation=400 stats="$tmp/res.stats.json"
two_clients res small flood 5
stop_server
atleast "${iops[res.small]}" 380 ||
	fail "reserved client: ${iops[res.small]} IOPS, below 95% of its reservation of 400" \
		"(the flood: ${iops[res.flood]})"
atleast "${iops[res.small]}" "$(python3 -c "print(5 * ${iops[nores.small]})")" ||
	fail "reserved client: ${iops[res.small]} IOPS, not five times the" \
		"${iops[nores.small]} it gets without a reservation"
atleast "${iops[res.flood]}" 400 ||
	fail "the flood got ${iops[res.flood]} IOPS: the device did not run at capacity"
stats_check "$tmp/res.stats.json" "c('small')['qos']['reservation_phase'] > 0 and
	c('small')['qos']['settings'] == {'mclock-reservation': 400, 'mclock-weight': 1}"
echo "reservation: with mclock-reservation=400 the small client got ${iops[res.small]} IOPS" \
	"against a weight-100 flood (${iops[res.flood]} IOPS); without it ${iops[nores.small]}" \
	"IOPS (flood ${iops[nores.flood]})"
ran=$((ran + 1))

# ---- a cap changed through the control file while the client runs -----------------------
ctl="$tmp/control"
printf 'export.c.limit-iops=1000\n' >"$ctl"
start_server ctl --filter="$filter" memory 64M control="$ctl" stats="$tmp/ctl.stats.json"
timeout 60 fio --name=c --ioengine=nbd --uri="nbd+unix:///c?socket=$sock" --rw=randread \
	--bs=4k --iodepth=8 --size=16m --time_based=1 --runtime=4 --output-format=json \
	--output="$tmp/ctl.json" &
fiopid=$!
# 1.5 s into the run (fio is connected and reading by then), the cap goes down to 100.
sleep 1.5
printf 'export.c.limit-iops=100\n' >"$ctl.new" && mv "$ctl.new" "$ctl"
sleep 0.5
# Refused whole: the burst is below the cap it would go with.
printf 'export.c.limit-iops=100\nexport.c.burst-iops=5\n' >"$ctl"
wait "$fiopid" || fail "fio under the control file"
stop_server
grep -q "burst-iops=5: is lower than" "$srvlog" || { cat "$srvlog" >&2; fail "bad control file not reported"; }
ctl_iops=$(python3 -c "import json,sys; j=json.load(open(sys.argv[1]))['jobs'][0]; print('%.1f' % (j['read']['total_ios'] / (j['read']['runtime'] / 1000.0)))" "$tmp/ctl.json")
# At most 1.5 s at 1000/s (fio starts reading a little after it is started), then 2.5 s
# at 100/s: well under 1000, well over 100.
atleast "$ctl_iops" 150 && ! atleast "$ctl_iops" 600 ||
	fail "under a cap lowered from 1000 to 100 IOPS 1.5 s into 4: $ctl_iops IOPS"
stats_check "$tmp/ctl.stats.json" "d['control_applied'] == 2 and d['control_rejected'] == 1 and
	c('c')['qos']['settings'] == {'limit-iops': 100}"
echo "control file: cap lowered from 1000 to 100 IOPS 1.5 s into a 4 s run: $ctl_iops IOPS on" \
	"average; a version with a burst below the cap refused whole"
ran=$((ran + 1))

# ---- bad QoS settings: nbdkit refuses to start, naming the setting ------------------------
bad_cases=(
	"limit-iops=fast|limit-iops=fast"
	"limit-iops=100 burst-iops=50|burst-iops=50: is lower than limit-iops=100"
	"export.e.limit-iops=100 export.e.limit-iops-read=5|export.e.limit-iops-read=5"
	"mclock-reservation=10 mclock-limit=5|mclock-reservation=10: is above"
	"conn.0.mclock-weight=1|conn.0.mclock-weight=1"
	"qos-at-limit=never|qos-at-limit=never"
)
for c in "${bad_cases[@]}"; do
	args=${c%%|*}
	want=${c#*|}
	rc=0
	# shellcheck disable=SC2086
	timeout 20 nbdkit -U - --filter="$filter" memory 1M $args --run true 2>"$tmp/bad.log" || rc=$?
	[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || fail "'$args' was accepted (rc $rc)"
	grep -qF -- "$want" "$tmp/bad.log" || { cat "$tmp/bad.log" >&2; fail "'$args': message lacks '$want'"; }
	[ "$(grep -c error "$tmp/bad.log")" -eq 1 ] || { cat "$tmp/bad.log" >&2; fail "'$args': not one line"; }
done
echo "bad QoS settings: ${#bad_cases[@]} cases refused, each naming its setting"
ran=$((ran + 1))
[ "$ran" -eq 4 ] || fail "ran $ran of 4 checks"
