/*
 * A firmware-shaped user of the library for tools/size-table.sh: linked with --gc-sections
 * and no C library, it keeps exactly the library code such a firmware pulls in.
 *
 * -DELV_PROBE_POLICY=elv_policy_<name>: a product with one policy, using the run-time API
 * (queue and stream life cycle, add, dispatch, complete, requeue, cancel, drain, stats);
 * -DELV_PROBE_FOUR: noop, deadline, anticipatory and CFQ named directly, with every public
 * call that does not go through the table of built-ins (switching, tunables, policy stats,
 * the checker); without either: everything public, including lookup by name, listing and
 * recommendation, which pull in every built-in policy.
 */
#include "elv_internal.h"

void elv_probe_entry(void);
void *memset(void *s, int c, size_t n);
void *memcpy(void *restrict dst, const void *restrict src, size_t n);

/* Stand-ins so the link needs no C library; their size is not counted. "used": with -flto the
 * compiler emits calls to them after deciding which symbols the image keeps. */
__attribute__((used)) void *memset(void *s, int c, size_t n)
{
	unsigned char *p = s;

	while (n--)
		*p++ = (unsigned char)c;
	return s;
}

__attribute__((used)) void *memcpy(void *restrict dst, const void *restrict src, size_t n)
{
	unsigned char *d = dst;
	const unsigned char *s = src;

	while (n--)
		*d++ = *s++;
	return dst;
}

static void elv_probe_drained(void *arg, struct elv_request *rq)
{
	(void)arg;
	(void)rq;
}

/* Volatile sinks keep every call and result alive without needing a device. */
static volatile uintptr_t elv_probe_sink;

void elv_probe_entry(void)
{
	static uint64_t mem[4096];
	static struct elv_request rq;
	static struct elv_stream s;
	struct elv_request *out = NULL;
	struct elv_queue *q = NULL;
	struct elv_stats st;
#if defined(ELV_PROBE_POLICY)
	const struct elv_policy *p = &ELV_PROBE_POLICY;
#elif defined(ELV_PROBE_FOUR)
	static const struct elv_policy *const four[] = { &elv_policy_noop, &elv_policy_deadline,
							 &elv_policy_anticipatory, &elv_policy_cfq };
	const struct elv_policy *p = four[elv_probe_sink & 3u];
	int64_t v = 0;
	const char *name = NULL;
	uint64_t val = 0;
	unsigned nr = 0;
#else
	const struct elv_policy *p = elv_policy_find((const char *)elv_probe_sink);
	int64_t v = 0;
	const char *name = NULL;
	uint64_t val = 0;
	unsigned nr = 0;
#endif

	elv_probe_sink = elv_queue_size(p, NULL);
	elv_probe_sink = (uintptr_t)elv_queue_init(&q, mem, sizeof(mem), p, NULL);
	elv_probe_sink = (uintptr_t)elv_stream_init(q, &s, 0);
	elv_probe_sink = (uintptr_t)elv_add(q, &rq, 1);
	elv_probe_sink = (uintptr_t)elv_dispatch(q, 2, 0, &out);
	elv_probe_sink = (uintptr_t)elv_requeue(q, out, 3);
	elv_probe_sink = (uintptr_t)elv_complete(q, out, 4);
	elv_probe_sink = (uintptr_t)elv_cancel(q, &rq);
	elv_probe_sink = (uintptr_t)elv_drain(q, elv_probe_drained, NULL);
	elv_probe_sink = (uintptr_t)elv_next_event(q);
	elv_probe_sink = (uintptr_t)elv_stats(q, &st);
	elv_probe_sink = (uintptr_t)elv_stream_exit(q, &s, 5);
#if defined(ELV_PROBE_FOUR)
	elv_probe_sink = (uintptr_t)elv_switch(q, four[(elv_probe_sink + 1u) & 3u], 6);
	elv_probe_sink = (uintptr_t)elv_tunable_set(q, "x", 1);
	elv_probe_sink = (uintptr_t)elv_tunable_get(q, "x", &v);
	elv_probe_sink = (uintptr_t)elv_policy_stat(q, 0, &name, &val);
	elv_probe_sink = (uintptr_t)elv_stream_set_prio(q, &s, 0);
	elv_probe_sink = (uintptr_t)elv_queue_check(q);
	elv_probe_sink = (uintptr_t)elv_policy_tunables(p, &nr);
	elv_probe_sink = (uintptr_t)elv_policy_description(p);
	elv_probe_sink = (uintptr_t)elv_strerror(-22);
	elv_probe_sink = (uintptr_t)elv_version_string();
	elv_request_init(&rq);
#elif !defined(ELV_PROBE_POLICY)
	elv_probe_sink = elv_queue_size_any(NULL);
	elv_probe_sink = (uintptr_t)elv_switch(q, elv_policy_at(1), 6);
	elv_probe_sink = (uintptr_t)elv_tunable_set(q, "x", 1);
	elv_probe_sink = (uintptr_t)elv_tunable_get(q, "x", &v);
	elv_probe_sink = (uintptr_t)elv_policy_stat(q, 0, &name, &val);
	elv_probe_sink = (uintptr_t)elv_stream_set_prio(q, &s, 0);
	elv_probe_sink = (uintptr_t)elv_queue_check(q);
	elv_probe_sink = (uintptr_t)elv_policy_recommend(NULL);
	elv_probe_sink = (uintptr_t)elv_policy_tunables(p, &nr);
	elv_probe_sink = (uintptr_t)elv_policy_description(p);
	elv_probe_sink = (uintptr_t)elv_strerror(-22);
	elv_probe_sink = (uintptr_t)elv_version_string();
	elv_request_init(&rq);
#endif
	elv_probe_sink = (uintptr_t)elv_queue_exit(q);
}
