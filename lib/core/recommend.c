/*
 * Which built-in policy fits a device. A pure function of the traits: no state, no malloc.
 *
 * Flash and other non-rotating devices gain nothing from sorting or idling: there is no seek
 * to save, and every idle wait of an anticipating policy is lost device time, so they get
 * noop. Zoned devices need writes kept in order per zone, which deadline's FIFO-per-direction
 * batches preserve without idling. A rotating disk that queues several commands reorders
 * them itself, and a policy that holds reads back one at a time (anticipation) would starve
 * its queue, so it gets deadline. A rotating disk with one command at a time is where
 * deceptive idleness costs most: anticipation keeps a dependent reader's next request
 * nearby, so it gets anticipatory.
 */
#include "elv_internal.h"

/* Preference lists, best first; the first one built in wins. */
static const char *const pick_flash[] = { "noop", "deadline", NULL };
static const char *const pick_zoned[] = { "deadline", "noop", NULL };
static const char *const pick_tcq[] = { "deadline", "noop", NULL };
static const char *const pick_single[] = { "anticipatory", "cfq", "deadline", "noop", NULL };

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
		return first_built_in(pick_flash);
	if (dev->queue_depth > 1)
		return first_built_in(pick_tcq);
	return first_built_in(pick_single);
}
