/*
 * Sizes and member offsets of every public struct, as constants in one object file.
 * tests/embedded/layout.sh compiles this under each configuration option and requires
 * identical output: no option may change a public struct's layout.
 */
#define ELV_ALLOW_PRIVATE_ACCESS
#include "elevator/policy.h"

#define L(T, m) offsetof(struct T, m)

const size_t elv_layout[] = {
	sizeof(struct elv_list), sizeof(struct elv_rb_node), sizeof(struct elv_rb_root),
	sizeof(struct elv_request), L(elv_request, sector), L(elv_request, nr_sectors),
	L(elv_request, op), L(elv_request, flags), L(elv_request, ioprio), L(elv_request, state),
	L(elv_request, stream), L(elv_request, seq), L(elv_request, time), L(elv_request, rb),
	L(elv_request, fifo), L(elv_request, hlink),
	sizeof(struct elv_stream), L(elv_stream, ioprio), L(elv_stream, nr_rq), L(elv_stream, q),
	L(elv_stream, link), L(elv_stream, priv), L(elv_stream, weight), L(elv_stream, group),
	L(elv_stream, qos),
	sizeof(struct elv_group), L(elv_group, weight), L(elv_group, nr_streams), L(elv_group, q),
	L(elv_group, qos), L(elv_group, link), L(elv_group, priv),
	sizeof(struct elv_trace_event), sizeof(struct elv_device_traits),
	sizeof(struct elv_config), L(elv_config, nr_requests), L(elv_config, no_merges),
	L(elv_config, allow_merge), L(elv_config, merge), L(elv_config, trace), L(elv_config, ctx),
	sizeof(struct elv_stats), L(elv_stats, queued), L(elv_stats, in_flight),
	sizeof(struct elv_tunable), L(elv_tunable, offset), L(elv_tunable, scale),
	sizeof(struct elv_policy), L(elv_policy, data_size), L(elv_policy, init),
	L(elv_policy, check), L(elv_policy, reweight), sizeof(struct elv_avg),
};
