/*
 * Flash models against hand computations: the log-block FTL of the USB stick (switch,
 * partial and full merges, LRU choice of the log block to merge, read cost) and the
 * page-mapped SSD (page costs, parallel ways, read-modify-write, greedy garbage collection).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <string.h>

#include <cmocka.h>

/* Doubles compared without cmocka's float conversion. */
#define assert_near(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) <= (eps))

#include "elevator/sim.h"

/* Pages of 4 sectors, 4 pages a block; read 10, program 100, erase 1000, transfer 5 and
 * command 50 microseconds. */
static void toy(struct elv_sim_dev_params *p, uint32_t kind)
{
	struct elv_sim_flash_params *fp = &p->flash;

	memset(p, 0, sizeof(*p));
	p->kind = kind;
	p->queue_depth = 1;
	fp->page_sectors = 4;
	fp->pages_per_block = 4;
	fp->log_blocks = 2;
	fp->ways = 1;
	fp->read_us = 10;
	fp->prog_us = 100;
	fp->erase_us = 1000;
	fp->xfer_us = 5;
	fp->cmd_us = 50;
	p->capacity = 16 * 4 * 4;
	if (kind == ELV_SIM_DEV_SSD) {
		fp->page_sectors = 8;
		p->capacity = 8 * 4 * 8;
		fp->spare = 0.5; /* 8 * 1.5 + 2 = 14 physical blocks */
		fp->gc_free = 0.2; /* collect below 2 free blocks */
	}
	assert_int_equal(elv_sim_param_finish(p), 0);
}

/* Cost in microseconds of one command on an idle device. */
static double cost(struct elv_sim_dev *d, uint64_t sector, uint32_t n, uint8_t op)
{
	static uint64_t now;
	struct elv_sim_io io;

	memset(&io, 0, sizeof(io));
	io.sector = sector;
	io.nr_sectors = n;
	io.op = op;
	assert_int_equal(elv_sim_dev_submit(d, &io, now), 0);
	assert_ptr_equal(elv_sim_dev_finish(d, elv_sim_dev_next(d)), &io);
	now = io.done_ns;
	return (double)(io.done_ns - io.start_ns) / 1000.0;
}

static void test_usb_merges(void **state)
{
	struct elv_sim_dev_params p;
	struct elv_sim_dev *d;
	struct elv_sim_dev_stats st;

	(void)state;
	toy(&p, ELV_SIM_DEV_USB);
	assert_int_equal(elv_sim_dev_create(&d, &p), 0);
	/* A whole block written in order: 4 * (100 + 5), then the switch merge (one erase). */
	assert_near(cost(d, 0, 16, ELV_OP_WRITE), 50 + 4 * 105 + 1000, 1e-6);
	/* Block 1 page 2 opens a log block out of order; block 2 page 0 opens the other. */
	assert_near(cost(d, 24, 4, ELV_OP_WRITE), 50 + 105, 1e-6);
	assert_near(cost(d, 32, 4, ELV_OP_WRITE), 50 + 105, 1e-6);
	/* Block 3 needs a log block: the least recent (block 1, out of order) gets a full
	 * merge: 4 * (10 + 100) copies and two erases. */
	assert_near(cost(d, 48, 4, ELV_OP_WRITE), 50 + 105 + 4 * 110 + 2000, 1e-6);
	assert_near(cost(d, 52, 4, ELV_OP_WRITE), 50 + 105, 1e-6);
	/* Block 4 evicts block 2's log (in order, one page): a partial merge copies the 3
	 * missing pages and erases once. */
	assert_near(cost(d, 64, 4, ELV_OP_WRITE), 50 + 105 + 3 * 110 + 1000, 1e-6);
	/* A sub-page write reads the page first. */
	assert_near(cost(d, 69, 2, ELV_OP_WRITE), 50 + 10 + 105, 1e-6);
	/* Reads: per page, no positional cost. */
	assert_near(cost(d, 100, 8, ELV_OP_READ), 50 + 2 * 15, 1e-6);
	assert_near(cost(d, 102, 4, ELV_OP_READ), 50 + 2 * 15, 1e-6);
	elv_sim_dev_get_stats(d, &st);
	assert_int_equal(st.switch_merges, 1);
	assert_int_equal(st.full_merges, 1);
	assert_int_equal(st.partial_merges, 1);
	assert_int_equal(st.erases, 4);
	/* Time in each kind of merge: one erase; 4 * 110 + 2000; 3 * 110 + 1000 (ns). */
	assert_int_equal(st.switch_merge_ns, 1000000);
	assert_int_equal(st.full_merge_ns, 2440000);
	assert_int_equal(st.partial_merge_ns, 1330000);
	elv_sim_dev_destroy(d);
}

static void test_usb_random_vs_sequential(void **state)
{
	struct elv_sim_dev_params p;
	struct elv_sim_dev *d;
	double seq = 0, rnd = 0;
	uint64_t b;

	(void)state;
	/* The spec's SLC stick: a random 4 KiB write costs about e + (P-1)(r+w), some 30 times
	 * a sequential one. */
	assert_int_equal(elv_sim_preset("usb-stick", &p), 0);
	assert_int_equal(elv_sim_dev_create(&d, &p), 0);
	for (b = 0; b < 64; b++)
		seq += cost(d, b * 8, 8, ELV_OP_WRITE);
	for (b = 0; b < 64; b++)
		rnd += cost(d, 100000 + b * 4096 + 16, 8, ELV_OP_WRITE);
	assert_true(rnd / seq > 10);
	elv_sim_dev_destroy(d);
}

static void test_ssd_costs_and_gc(void **state)
{
	struct elv_sim_dev_params p;
	struct elv_sim_dev *d;
	struct elv_sim_dev_stats st;
	uint64_t lp;
	double c;

	(void)state;
	toy(&p, ELV_SIM_DEV_SSD);
	assert_int_equal(elv_sim_dev_create(&d, &p), 0);
	assert_near(cost(d, 0, 16, ELV_OP_READ), 50 + 2 * 15, 1e-6);
	/* Fill all 32 logical pages: each costs program + transfer, blocks 0..7 fill up. */
	for (lp = 0; lp < 32; lp++)
		assert_near(cost(d, lp * 8, 8, ELV_OP_WRITE), 50 + 105, 1e-6);
	/* Overwrite pages 0..16 in order: blocks 8..12 are taken, 6 free blocks become 1.
	 * Page 17 finds one free block: greedy GC picks block 0, all of whose pages were
	 * overwritten: no copies, one erase. */
	for (lp = 0; lp < 17; lp++)
		assert_near(cost(d, lp * 8, 8, ELV_OP_WRITE), 50 + 105, 1e-6);
	c = cost(d, 17 * 8, 8, ELV_OP_WRITE);
	assert_near(c, 50 + 105 + 1000, 1e-6);
	/* A partial page is read before it is rewritten. */
	assert_near(cost(d, 18 * 8 + 2, 4, ELV_OP_WRITE), 50 + 10 + 105, 1e-6);
	elv_sim_dev_get_stats(d, &st);
	assert_int_equal(st.gc_blocks, 1);
	assert_int_equal(st.gc_copies, 0);
	elv_sim_dev_destroy(d);

	/* Eight ways serve 16 pages in 2 batches. */
	p.flash.ways = 8;
	assert_int_equal(elv_sim_dev_create(&d, &p), 0);
	assert_near(cost(d, 0, 128, ELV_OP_READ), 50 + 2 * 15, 1e-6);
	elv_sim_dev_destroy(d);
}

static void test_ssd_gc_accounting(void **state)
{
	struct elv_sim_dev_params p;
	struct elv_sim_dev *d;
	struct elv_sim_dev_stats st;
	struct elv_sim_rng r;
	double total = 0;
	unsigned i, n = 2000;

	(void)state;
	/* Random overwrites: the time spent is exactly commands + programs + GC copies and
	 * erases, with write amplification above 1. */
	toy(&p, ELV_SIM_DEV_SSD);
	assert_int_equal(elv_sim_dev_create(&d, &p), 0);
	elv_sim_rng_seed(&r, 7);
	for (i = 0; i < n; i++)
		total += cost(d, elv_sim_rng_below(&r, 32) * 8, 8, ELV_OP_WRITE);
	elv_sim_dev_get_stats(d, &st);
	assert_true(st.gc_blocks > 0);
	assert_true(st.gc_copies > 0);
	assert_near(total, n * 155.0 + (double)st.gc_copies * 110 +
			   (double)st.gc_blocks * 1000, 1e-3);
	elv_sim_dev_destroy(d);
}

static void test_null(void **state)
{
	struct elv_sim_dev_params p;
	struct elv_sim_dev *d;

	(void)state;
	assert_int_equal(elv_sim_preset("null", &p), 0);
	assert_int_equal(elv_sim_dev_create(&d, &p), 0);
	assert_near(cost(d, 12345, 8, ELV_OP_WRITE), 0, 1e-9);
	assert_int_equal(elv_sim_dev_slots(d), 32);
	elv_sim_dev_destroy(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_usb_merges),
		cmocka_unit_test(test_usb_random_vs_sequential),
		cmocka_unit_test(test_ssd_costs_and_gc),
		cmocka_unit_test(test_ssd_gc_accounting),
		cmocka_unit_test(test_null),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
