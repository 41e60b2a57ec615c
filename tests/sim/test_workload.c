/*
 * Workload generators and the random generator: reproducible sequences, ranges, the tree
 * reader's dependent chain, the PostMark mix, and background streams that stop with the
 * foreground.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <string.h>

#include <cmocka.h>

#include "elevator/sim.h"
#include "support/sim_config.h"

#define assert_near(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) <= (eps))

static struct elv_sim_config cfg;

static void test_rng(void **state)
{
	struct elv_sim_rng a, b;
	double sum = 0;
	unsigned i;

	(void)state;
	elv_sim_rng_seed(&a, 42);
	elv_sim_rng_seed(&b, 42);
	for (i = 0; i < 1000; i++)
		assert_int_equal(elv_sim_rng_next(&a), elv_sim_rng_next(&b));
	/* Known first output of xoshiro256** seeded by splitmix64(0). */
	elv_sim_rng_seed(&a, 0);
	assert_int_equal(elv_sim_rng_next(&a), 0x99ec5f36cb75f2b4ULL);
	for (i = 0; i < 10000; i++) {
		uint64_t x = elv_sim_rng_below(&a, 7);
		double u = elv_sim_rng_unit(&a);

		assert_true(x < 7);
		assert_true(u >= 0 && u < 1);
		sum += elv_sim_rng_exp(&a, 3.0);
	}
	assert_near(sum / 10000, 3.0, 0.15);
	assert_int_equal(elv_sim_rng_below(&a, 0), 0);
}

static void test_tree_chain(void **state)
{
	struct elv_sim_result r;
	struct elv_sim_stream_spec *s;

	(void)state;
	/* Every read of the tree waits for the previous one plus 1 ms of thinking, so on a
	 * zero-time device the run lasts exactly (reads - 1) ms. */
	sim_config_base(&cfg, "null", "noop", 3);
	s = sim_config_one_stream(&cfg, ELV_SIM_TREE_READER);
	s->region_len = 1 << 22;
	s->count = 200;
	s->files_per_dir = 10;
	s->mean_file_kb = 12;
	s->think_ms = 1;
	assert_int_equal(elv_sim_run(&cfg, &r), 0);
	assert_int_equal(r.error, 0);
	assert_true(r.requests >= 200 + 2 * 200 / 19);
	assert_int_equal(r.write_lat.n, 0);
	assert_near(r.makespan_s, (double)(r.requests - 1) * 0.001, 1e-9);
	elv_sim_result_free(&r);
}

static void test_postmark(void **state)
{
	struct elv_sim_result r;
	struct elv_sim_stream_spec *s;

	(void)state;
	sim_config_base(&cfg, "usb-stick", "noop", 3);
	s = sim_config_one_stream(&cfg, ELV_SIM_POSTMARK);
	s->files = 20;
	s->count = 40;
	s->min_size = 500;
	s->max_size = 100000;
	s->burst = 10;
	s->depth = 16;
	assert_int_equal(elv_sim_run(&cfg, &r), 0);
	assert_int_equal(r.error, 0);
	assert_false(r.truncated);
	assert_true(r.read_lat.n > 0);
	assert_true(r.write_lat.n > 0);
	/* Creates and appends write at least the 20 initial files' data, 500 B each. */
	assert_true(r.write_mbps * r.makespan_s * 1e6 >= 20 * 500);
	/* Log-block merges happen when several areas (FAT, directories, data) are written. */
	assert_true(r.dev.full_merges + r.dev.partial_merges + r.dev.switch_merges > 0);
	elv_sim_result_free(&r);
}

static void test_background_stops(void **state)
{
	struct elv_sim_result r;
	struct elv_sim_stream_spec *w, *b;

	(void)state;
	sim_config_base(&cfg, "ide2003", "noop", 3);
	cfg.nr_streams = 2;
	w = &cfg.streams[0];
	w->kind = ELV_SIM_SYNC_READER;
	w->pattern = ELV_SIM_RANDOM;
	w->count = 50;
	b = &cfg.streams[1];
	b->kind = ELV_SIM_STREAMER;
	b->rq_sectors = 256;
	b->depth = 2;
	b->region_start = 1 << 24;
	b->region_len = 1 << 20;
	b->background = 1;
	assert_int_equal(elv_sim_run(&cfg, &r), 0);
	assert_int_equal(r.streams[0].requests, 50);
	assert_true(r.streams[1].requests > 0);
	/* The background stream is measured over the run, which ends with the reader. */
	assert_near(r.streams[1].done_s, r.makespan_s, 1e-12);
	assert_near(r.streams[0].done_s, r.makespan_s, 1e-12);
	elv_sim_result_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rng),
		cmocka_unit_test(test_tree_chain),
		cmocka_unit_test(test_postmark),
		cmocka_unit_test(test_background_stops),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
