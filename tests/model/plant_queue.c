/*
 * The planted build's copy of the core queue (lib/core/queue.c, compiled here instead of the
 * original) with core bugs that plant_core_bug() switches on:
 *   1  barriers are ignored: a barrier request enters the policy like any other;
 *   2  elv_stats() reports front merges as back merges and back merges as front merges;
 *   3  the stages are told every completion succeeded: a failed write never reaches the
 *      zone stage;
 *   4  after a staged dispatch or completion the gate is lowered even while a stage holds
 *      requests: later dispatches and completions take the plain paths and release nothing.
 * The library sources are not modified: the bugs are macros around an #include.
 */
#include "elv_internal.h"

void plant_core_bug(int bug);

static int plant_bug;

void plant_core_bug(int bug)
{
	plant_bug = bug;
}

/* Bit 6 is never set on an accepted request: with bug 1 the core sees no barrier at all. */
#define ELV_RQ_BARRIER (plant_bug == 1 ? 0x40u : 0x10u)
#define elv_stats(q, st) elv_stats_unplanted(q, st)
#define elv_stages_completed(q, rq, status, now)                                         \
	elv_stages_completed(q, rq, plant_bug == 3 && (status) < 0 ? 0 : (status), now)
#define elv_gate_settle(q)                                                               \
	(plant_bug == 4 && (q)->gate == ELV_GATE_STAGED ? (void)((q)->gate = ELV_GATE_STAGED_ADD) \
							 : (elv_gate_settle)(q))
#include "queue.c"
#undef elv_stats

int elv_stats(const struct elv_queue *q, struct elv_stats *st)
{
	int ret = elv_stats_unplanted(q, st);
	uint64_t t;

	if (ret == 0 && plant_bug == 2) {
		t = st->merged_back;
		st->merged_back = st->merged_front;
		st->merged_front = t;
	}
	return ret;
}
