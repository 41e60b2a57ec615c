# Sourced by the stages that serve through nbdkit (85, 86, 89), after common.sh: a private
# directory and nbdkit servers on Unix sockets in it. Each server runs in the foreground of a
# background job, so that its stderr and exit status are kept; every server still running is
# killed by pid when the stage exits, and every wait is bounded.
# shellcheck shell=bash

# nbd_init NAME: $tmp, a new directory /tmp/elv-NAME.XXXXXX, removed on exit together with
# every server started by start_server. A stage with its own EXIT trap calls nbd_cleanup from it.
servers=()
wrap=()
nbd_init() {
	tmp=$(mktemp -d "/tmp/elv-$1.XXXXXX")
	trap nbd_cleanup EXIT
}
nbd_cleanup() {
	nbd_kill_servers
	rm -rf "${tmp:?}"
}
# nbd_kill_servers: kill -9 every server start_server started in this shell.
nbd_kill_servers() {
	local p
	for p in "${servers[@]}"; do
		kill -9 "$p" 2>/dev/null || true
	done
}

# start_server NAME ARGS...: nbdkit -f on $tmp/NAME.sock with ARGS, run under "${wrap[@]}"
# when that is set (valgrind, say); waits up to 30 s for the socket. Sets $pid, $sock, $uri
# and $srvlog (the server's stderr).
start_server() {
	local name=$1
	shift
	sock="$tmp/$name.sock"
	srvlog="$tmp/$name.log"
	rm -f "$sock"
	"${wrap[@]}" nbdkit -f -U "$sock" "$@" 2>"$srvlog" &
	pid=$!
	servers+=("$pid")
	# shellcheck disable=SC2034 # for the stage that sourced this
	uri="nbd+unix:///?socket=$sock"
	for _ in $(seq 1 300); do
		[ -S "$sock" ] && return 0
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	cat "$srvlog" >&2
	fail "nbdkit $name did not start"
}

# stop_server: SIGTERM to $pid, then wait (60 s at most) for it to write its stats and exit;
# any exit status but 0 fails the stage after showing $srvlog.
stop_server() {
	local rc=0
	kill "$pid"
	timeout 60 tail --pid="$pid" -f /dev/null || { kill -9 "$pid"; fail "nbdkit $pid did not exit"; }
	wait "$pid" || rc=$?
	if [ "$rc" -ne 0 ]; then
		cat "$srvlog" >&2
		fail "nbdkit $pid exited with $rc"
	fi
}
