# Source lists of libelevator, relative to the repository root.
#
# Plain lists on purpose: firmware build systems (Zephyr, ESP-IDF, a vendor Makefile) read
# them and make their own targets. lib/core and lib/policies need only
#   cc -std=c11 -Iinclude -c <file>
# Add one line per new file to the matching list.

# Core: queue, primitives, tunables, version. No malloc, no clock, no global state.
set(ELV_CORE_SOURCES
	lib/core/access.c
	lib/core/avg.c
	lib/core/check.c
	lib/core/div64.c
	lib/core/fifo.c
	lib/core/group.c
	lib/core/hash.c
	lib/core/hosted.c
	lib/core/mclock.c
	lib/core/merge.c
	lib/core/qos.c
	lib/core/queue.c
	lib/core/rbtree.c
	lib/core/recommend.c
	lib/core/seek.c
	lib/core/stage.c
	lib/core/stream.c
	lib/core/throttle.c
	lib/core/tunables.c
	lib/core/version.c
	lib/core/zone.c
)

# Built-in policies, one file each. Same rules as the core.
set(ELV_POLICY_SOURCES
	lib/policies/anticipatory.c
	lib/policies/bfq.c
	lib/policies/cfq.c
	lib/policies/classic.c
	lib/policies/deadline.c
	lib/policies/kyber.c
	lib/policies/noop.c
	lib/policies/registry.c
)

# The hosted simulator (libelevator-sim); may use malloc and stdio.
set(ELV_SIM_SOURCES
	lib/sim/trace_blkparse.c
	lib/sim/trace_blktrace.c
	lib/sim/trace_common.c
	lib/sim/trace_fio.c
	lib/sim/trace_ftrace.c
	lib/sim/trace_msr.c
	lib/sim/device.c
	lib/sim/disk.c
	lib/sim/engine.c
	lib/sim/flash.c
	lib/sim/job.c
	lib/sim/params.c
	lib/sim/report.c
	lib/sim/rng.c
	lib/sim/scenario.c
	lib/sim/workload.c
	lib/sim/zoned.c
)
