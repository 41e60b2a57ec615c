/*
 * Simulator runs from the cmocka suites (test_engine, test_replay_length, test_workload): a
 * configuration that starts from a device preset and a built-in policy, and nothing else.
 */
#ifndef ELV_TEST_SIM_CONFIG_H
#define ELV_TEST_SIM_CONFIG_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "elevator/sim.h"

/* Reset @cfg to preset device @dev under the built-in policy @policy, with @seed. */
static inline void sim_config_base(struct elv_sim_config *cfg, const char *dev,
				   const char *policy, uint64_t seed)
{
	memset(cfg, 0, sizeof(*cfg));
	assert_int_equal(elv_sim_preset(dev, &cfg->dev), 0);
	cfg->policy = elv_policy_find(policy);
	assert_non_null(cfg->policy);
	cfg->seed = seed;
}

/* @cfg runs one stream, of @kind; returns it for the test to fill in. */
static inline struct elv_sim_stream_spec *sim_config_one_stream(struct elv_sim_config *cfg,
								  uint32_t kind)
{
	cfg->nr_streams = 1;
	cfg->streams[0].kind = kind;
	return &cfg->streams[0];
}

#endif
