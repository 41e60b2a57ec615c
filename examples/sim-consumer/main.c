/*
 * sim-consumer: the simulator library (libelevator-sim) of an installed libelevator, found
 * through its CMake target or its pkg-config file. Four readers issue 100 random 4 KiB reads
 * each, one at a time, to the "barracuda" disk model, once under noop and once under
 * deadline; every read must complete and the run must not be cut short. Exit status 0 when
 * all is well, 1 otherwise.
 */
#include <elevator/sim.h>

#include <stdio.h>
#include <string.h>

#define NR_READERS 4
#define READS_EACH 100

static int run_one(const char *policy, struct elv_sim_config *cfg)
{
	struct elv_sim_result res;
	unsigned i;
	int ret;

	memset(cfg, 0, sizeof(*cfg));
	if (elv_sim_preset("barracuda", &cfg->dev) != 0) {
		fprintf(stderr, "sim-consumer: no barracuda preset\n");
		return -1;
	}
	cfg->policy = elv_policy_find(policy);
	cfg->seed = 1;
	cfg->nr_streams = NR_READERS;
	for (i = 0; i < NR_READERS; i++) {
		struct elv_sim_stream_spec *s = &cfg->streams[i];

		snprintf(s->name, sizeof(s->name), "reader%u", i);
		s->kind = ELV_SIM_SYNC_READER;
		s->pattern = ELV_SIM_RANDOM;
		s->rq_sectors = 8;
		s->count = READS_EACH;
	}
	memset(&res, 0, sizeof(res));
	ret = elv_sim_run(cfg, &res);
	if (ret != 0 || res.error != 0 || res.truncated != 0 ||
	    res.requests != NR_READERS * READS_EACH) {
		fprintf(stderr, "sim-consumer: %s: run %d, error %d, cut %d, %llu reads\n", policy,
			ret, res.error, res.truncated, (unsigned long long)res.requests);
		elv_sim_result_free(&res);
		return -1;
	}
	printf("sim-consumer: %-8s %llu random reads in %.2f s of simulated time, "
	       "mean read latency %.2f ms\n",
	       policy, (unsigned long long)res.requests, res.makespan_s, res.read_lat.mean);
	elv_sim_result_free(&res);
	return 0;
}

int main(void)
{
	static struct elv_sim_config cfg; /* large: kept out of the stack */

	if (run_one("noop", &cfg) != 0 || run_one("deadline", &cfg) != 0)
		return 1;
	printf("sim-consumer: libelevator %s, simulator linked and working\n",
	       elv_version_string());
	return 0;
}
