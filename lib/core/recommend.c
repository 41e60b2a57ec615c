/*
 * Which built-in policy fits a device. A pure function of the traits: no state, no malloc.
 * The choice is the policy that finishes a PostMark-like file workload first (or within 5% of
 * the first) on the simulator's model of that kind of device; docs/simulator.md names the
 * measurements and the command that repeats them.
 *
 * - Non-rotating devices have no seek to save, so no policy should idle on them: every wait
 *   for a process's next request is lost device time (the PostMark-on-USB result). An NCQ SSD
 *   orders what it queues itself: noop. A device that serves one command at a time through a
 *   log-block FTL (a USB stick) gets noop as well: it keeps writes in the order the file system
 *   issued them, and any reordering (deadline's sector sort and read-first batches) splits
 *   runs of writes across log blocks and costs erase-block merges. The price is read latency
 *   under a flood of writes, which deadline bounds and noop does not.
 * - Zoned devices need the writes of a zone kept in order: deadline, without idling.
 * - A rotating disk with tagged queueing reorders by itself, and an idling policy that holds
 *   reads back one at a time would keep its queue empty: deadline.
 * - A rotating disk with one command at a time suffers most from deceptive idleness: cfq
 *   idles for a dependent reader's next request and also lets reads preempt buffered writes,
 *   which bounds read latency under a write flood better than anticipation's write batches.
 */
#include "elv_internal.h"

/* Preference lists, best first; the first one built in wins. */
static const char *const pick_flash_mq[] = { "noop", "deadline", NULL };
static const char *const pick_flash_sq[] = { "noop", "deadline", NULL };
static const char *const pick_zoned[] = { "deadline", "noop", NULL };
static const char *const pick_tcq[] = { "deadline", "noop", NULL };
static const char *const pick_single[] = { "cfq", "anticipatory", "deadline", "noop", NULL };

static const struct elv_policy *first_built_in(const char *const *names)
{
	const struct elv_policy *p;

	for (; *names; names++) {
		p = elv_policy_find(*names);
		if (p)
			return p;
	}
	return elv_policy_at(0);
}

const struct elv_policy *elv_policy_recommend(const struct elv_device_traits *dev)
{
	/* Nothing known (NULL or all zero): assume a plain disk. */
	if (!dev || (!dev->rotational && !dev->zoned && !dev->queue_depth && !dev->mbps &&
		     !dev->max_sectors))
		return first_built_in(pick_single);
	if (dev->zoned)
		return first_built_in(pick_zoned);
	if (!dev->rotational)
		return first_built_in(dev->queue_depth > 1 ? pick_flash_mq : pick_flash_sq);
	if (dev->queue_depth > 1)
		return first_built_in(pick_tcq);
	return first_built_in(pick_single);
}
