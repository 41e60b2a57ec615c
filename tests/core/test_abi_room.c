/*
 * Room to grow the public structs without breaking the ABI: a configuration with a reserved
 * word set is refused and changes nothing, elv_stats() leaves its reserved counters zero, and
 * every trace event carries its size and zero reserved bytes. Layout facts the host relies on
 * (struct sizes across the version) are pinned at compile time.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "elevator/elevator.h"

/* The trace event's size field lives in what used to be tail padding: the size is unchanged. */
_Static_assert(offsetof(struct elv_trace_event, size) + sizeof(uint32_t) <=
		       sizeof(struct elv_trace_event),
	       "size is inside the event");
_Static_assert(sizeof(struct elv_trace_event) == 2 * sizeof(uint64_t) + 2 * sizeof(void *) + 8,
	       "the trace event kept its size");
/* position_time took the first of four reserved words; the word stays 64 bits wide. */
_Static_assert(sizeof(((struct elv_config *)0)->reserved) == 3 * sizeof(uint64_t),
	       "three reserved configuration words");
_Static_assert(offsetof(struct elv_config, reserved) ==
		       offsetof(struct elv_config, reserved_position_time) + sizeof(uint64_t),
	       "position_time is one 64-bit word");
_Static_assert(sizeof(((struct elv_stats *)0)->reserved) == 6 * sizeof(uint64_t),
	       "six reserved counters");

struct seen {
	unsigned events;
	unsigned bad;
};

static void on_trace(void *ctx, const struct elv_trace_event *ev)
{
	struct seen *s = ctx;

	s->events++;
	if (ev->size != sizeof(*ev) || ev->reserved8[0] || ev->reserved8[1] || ev->reserved8[2])
		s->bad++;
}

static uint64_t mem[4096];

static void test_config_reserved_refused(void **state)
{
	struct elv_config cfg;
	struct elv_queue *q = NULL;
	unsigned i;

	(void)state;
	for (i = 0; i < sizeof(cfg.reserved) / sizeof(cfg.reserved[0]); i++) {
		memset(&cfg, 0, sizeof(cfg));
		cfg.reserved[i] = 1u << i;
		assert_int_equal(elv_queue_size(&elv_policy_noop, &cfg), 0);
		assert_int_equal(elv_queue_init(&q, mem, sizeof(mem), &elv_policy_noop, &cfg),
				 ELV_EINVAL);
		assert_null(q);
	}
	memset(&cfg, 0, sizeof(cfg));
	assert_int_equal(elv_queue_init(&q, mem, sizeof(mem), &elv_policy_noop, &cfg), 0);
	assert_int_equal(elv_queue_exit(q), 0);
}

static void test_stats_and_trace_room(void **state)
{
	struct seen seen = { 0, 0 };
	struct elv_config cfg;
	struct elv_queue *q;
	struct elv_request rq, *out = NULL;
	struct elv_stats st;
	unsigned i;

	(void)state;
	memset(&cfg, 0, sizeof(cfg));
	cfg.trace = on_trace;
	cfg.ctx = &seen;
	assert_int_equal(elv_queue_init(&q, mem, sizeof(mem), &elv_policy_deadline, &cfg), 0);
	elv_request_init(&rq);
	rq.sector = 800;
	rq.nr_sectors = 8;
	rq.op = ELV_OP_READ;
	assert_int_equal(elv_add(q, &rq, 10), 0);
	assert_int_equal(elv_dispatch(q, 20, 0, &out), 0);
	assert_ptr_equal(out, &rq);
	assert_int_equal(elv_complete(q, &rq, 30), 0);

	/* Insert, dispatch and complete: three events, each with its size. */
	assert_int_equal(seen.events, 3);
	assert_int_equal(seen.bad, 0);

	memset(&st, 0xa5, sizeof(st));
	assert_int_equal(elv_stats(q, &st), 0);
	assert_int_equal(st.added, 1);
	assert_int_equal(st.completed, 1);
	for (i = 0; i < 6; i++)
		assert_int_equal(st.reserved[i], 0);
	assert_int_equal(elv_queue_exit(q), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_config_reserved_refused),
		cmocka_unit_test(test_stats_and_trace_room),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
