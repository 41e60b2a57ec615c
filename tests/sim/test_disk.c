/*
 * Rotating disk model against hand computations: seek curves, sector location with zones,
 * rotational waits from the absolute phase, skewed multi-track transfers, cache hits and
 * prefetch streaming, write invalidation, and drive-side FCFS / SSTF / SPTF order.
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

/* 6000 rpm (10 ms a turn), 2 heads, zone 0: 10 cyl x 100 spt, zone 1: 10 cyl x 50 spt.
 * Seek is 2 ms for any distance; no overheads, no bus time, no cache unless asked. */
static void toy(struct elv_sim_dev_params *p, unsigned segs)
{
	struct elv_sim_disk_params *dp = &p->disk;

	memset(p, 0, sizeof(*p));
	p->kind = ELV_SIM_DEV_DISK;
	p->queue_depth = 4;
	dp->rpm = 6000;
	dp->surfaces = 2;
	dp->nr_zones = 2;
	dp->zones[0].cylinders = 10;
	dp->zones[0].spt = 100;
	dp->zones[1].cylinders = 10;
	dp->zones[1].spt = 50;
	dp->seek_kind = ELV_SIM_SEEK_TWO_PIECE;
	dp->seek_a = 2.0;
	dp->seek_boundary = 1000000;
	dp->head_switch = 0.1;  /* 1 sector of skew */
	dp->cyl_switch = 0.25;  /* 2.5 sectors: 3 of skew */
	if (segs) {
		dp->cache_segments = segs;
		dp->segment_sectors = 100;
		dp->readahead_max = 100;
		dp->ovh_read_hit = 0.1;
	}
	assert_int_equal(elv_sim_param_finish(p), 0);
}

/* A device on the toy disk (@segs cache segments), with a write buffer of @wbuf sectors and
 * @bus ms of interface time a sector. */
static struct elv_sim_dev *toy_dev(unsigned segs, uint32_t wbuf, double bus)
{
	struct elv_sim_dev_params p;
	struct elv_sim_dev *d;

	toy(&p, segs);
	p.disk.write_buffer = wbuf;
	p.disk.bus_per_sector = bus;
	assert_int_equal(elv_sim_dev_create(&d, &p), 0);
	return d;
}

/* Serve one command submitted at now on an otherwise idle device; returns its done time. */
static uint64_t one(struct elv_sim_dev *d, uint64_t sector, uint32_t n, uint8_t op,
		    uint64_t now, struct elv_sim_io *io)
{
	memset(io, 0, sizeof(*io));
	io->sector = sector;
	io->nr_sectors = n;
	io->op = op;
	assert_int_equal(elv_sim_dev_submit(d, io, now), 0);
	assert_int_equal(elv_sim_dev_next(d), io->done_ns);
	assert_ptr_equal(elv_sim_dev_finish(d, io->done_ns), io);
	return io->done_ns;
}

static void test_seek_curves(void **state)
{
	struct elv_sim_dev_params p;

	(void)state;
	assert_int_equal(elv_sim_preset("barracuda", &p), 0);
	assert_true(elv_sim_disk_seek_ms(&p.disk, 5172, 0) == 0);
	/* 2.014 + 0.1944 * sqrt(1) and sqrt(100) = 10; 5.975 + 0.00215 * 1300 */
	assert_near(elv_sim_disk_seek_ms(&p.disk, 5172, 1), 2.2084, 1e-9);
	assert_near(elv_sim_disk_seek_ms(&p.disk, 5172, 100), 3.958, 1e-9);
	assert_near(elv_sim_disk_seek_ms(&p.disk, 5172, 1300), 8.77, 1e-9);
	assert_int_equal(elv_sim_preset("ide2003", &p), 0);
	/* 1 + 14 * sqrt(d / N): full stroke 15 ms, a quarter stroke 1 + 14 / 2 = 8 ms */
	assert_near(elv_sim_disk_seek_ms(&p.disk, 51420, 51420), 15.0, 1e-9);
	assert_near(elv_sim_disk_seek_ms(&p.disk, 51420, 12855), 8.0, 1e-9);
	/* Table: flat before the first point, linear between, extrapolated after. */
	assert_int_equal(elv_sim_param_set(&p, "seek_table", "1:1.0,11:2.0,111:7.0"), 0);
	assert_near(elv_sim_disk_seek_ms(&p.disk, 1000, 1), 1.0, 1e-9);
	assert_near(elv_sim_disk_seek_ms(&p.disk, 1000, 6), 1.5, 1e-9);
	assert_near(elv_sim_disk_seek_ms(&p.disk, 1000, 61), 4.5, 1e-9);
	assert_near(elv_sim_disk_seek_ms(&p.disk, 1000, 211), 12.0, 1e-9);
	assert_int_equal(elv_sim_param_set(&p, "seek_table", "5:1.0,3:2.0"), ELV_EINVAL);
}

static void test_geometry(void **state)
{
	struct elv_sim_dev_params p;
	struct elv_sim_dev *d;
	uint32_t c, h, s, spt;

	(void)state;
	toy(&p, 0);
	assert_int_equal(p.capacity, 10 * 2 * 100 + 10 * 2 * 50);
	assert_int_equal(elv_sim_dev_create(&d, &p), 0);
	assert_int_equal(elv_sim_disk_locate(d, 250, &c, &h, &s, &spt), 0);
	assert_int_equal(c, 1);
	assert_int_equal(h, 0);
	assert_int_equal(s, 50);
	assert_int_equal(spt, 100);
	assert_int_equal(elv_sim_disk_locate(d, 2000, &c, &h, &s, &spt), 0);
	assert_int_equal(c, 10);
	assert_int_equal(s, 0);
	assert_int_equal(spt, 50);
	assert_int_equal(elv_sim_disk_locate(d, 2075, &c, &h, &s, &spt), 0);
	assert_int_equal(c, 10);
	assert_int_equal(h, 1);
	assert_int_equal(s, 25);
	assert_int_equal(elv_sim_disk_locate(d, 3000, &c, &h, &s, &spt), ELV_EINVAL);
	elv_sim_dev_destroy(d);
}

static void test_rotation(void **state)
{
	struct elv_sim_dev *d = toy_dev(0, 0, 0);
	struct elv_sim_io io;

	(void)state;
	/* Sector 0 is under the head at time 0: one sector, 0.1 ms. */
	assert_int_equal(one(d, 0, 1, ELV_OP_READ, 0, &io), 100000);
	/* Sector 50 at angle 0.5, head at 0.01: wait 4.9 ms, read 0.1 ms. */
	assert_int_equal(one(d, 50, 1, ELV_OP_READ, 100000, &io), 5100000);
	/* Back to sector 0 from angle 0.51: 4.9 ms more. The phase is carried, not drawn. */
	assert_int_equal(one(d, 0, 1, ELV_OP_READ, 5100000, &io), 10100000);
	/* Cylinder 1, head 0, sector 50: seek 2 ms to 12.1 ms (angle 0.21); skew 1 head + 3
	 * cylinder sectors puts the target at 0.54: wait 3.3 ms, read 0.1 ms. */
	assert_int_equal(one(d, 250, 1, ELV_OP_READ, 10100000, &io), 15500000);
	assert_int_equal(io.seek_sectors, 249);
	assert_near(io.seek_ms, 2.0, 1e-12);
	elv_sim_dev_destroy(d);
}

static void test_skewed_transfer(void **state)
{
	struct elv_sim_dev *d = toy_dev(0, 0, 0);
	struct elv_sim_io io;

	(void)state;
	/* Sectors 90..109: wait 9 ms for sector 90, 10 sectors (1 ms), head switch 0.1 ms, and
	 * the skewed track 1 starts right under the head: 10 more sectors. 11.1 ms in all. */
	assert_int_equal(one(d, 90, 20, ELV_OP_READ, 0, &io), 11100000);
	elv_sim_dev_destroy(d);
	/* Crossing a cylinder: sectors 190..209 end track (0,1) and start (1,0). Track (0,1)
	 * has skew 1, so sector 190 is at angle 0.91: head switch 0.1 ms, wait 9.0 ms, 1 ms,
	 * cylinder switch 0.25 ms; track (1,0) starts at angle (1 + 3) / 100 = 0.04 and the
	 * head is at 0.035: wait 0.05 ms, then 1 ms. */
	d = toy_dev(0, 0, 0);
	assert_int_equal(one(d, 190, 20, ELV_OP_READ, 0, &io), 11400000);
	elv_sim_dev_destroy(d);
}

/* One command as one() serves it must be done at @done and hit the cache exactly if @hit. */
static void served(struct elv_sim_dev *d, uint64_t sector, uint32_t n, uint8_t op, uint64_t now,
		   uint64_t done, int hit)
{
	struct elv_sim_io io;

	assert_int_equal(one(d, sector, n, op, now, &io), done);
	assert_int_equal(io.cache_hit != 0, hit);
}

static void test_cache(void **state)
{
	struct elv_sim_dev *d = toy_dev(2, 0, 0);
	struct elv_sim_io io;
	struct elv_sim_dev_stats st;

	(void)state;
	/* Miss at sector 0: 0.1 ms; prefetch then streams at 0.102 ms a sector (200 sectors
	 * of a cylinder take 204 sector times with the skews). */
	served(d, 0, 1, ELV_OP_READ, 0, 100000, 0);
	/* At 1.1 ms the prefetch holds 1 + floor(1.0 / 0.102) = 10 sectors: sector 5 hits and
	 * costs the hit overhead, 0.1 ms. */
	served(d, 5, 1, ELV_OP_READ, 1100000, 1200000, 1);
	/* Sectors 15..19 at 2 ms: the prefetch is at sector 19, the last one arrives at
	 * 0.1 + 19 * 0.102 = 2.038 ms, later than the 2.1 ms overhead. */
	served(d, 15, 5, ELV_OP_READ, 2000000, 2100000, 1);
	/* A write over cached sectors invalidates them: the next read goes to the media. */
	one(d, 5, 1, ELV_OP_WRITE, 3000000, &io);
	one(d, 5, 1, ELV_OP_READ, 20000000, &io);
	assert_false(io.cache_hit);
	elv_sim_dev_get_stats(d, &st);
	assert_int_equal(st.cache_hits, 2);
	assert_int_equal(st.media_accesses, 3);
	elv_sim_dev_destroy(d);
}

static void test_write_back(void **state)
{
	struct elv_sim_dev *d = toy_dev(0, 4, 0.01);
	struct elv_sim_dev_stats st;

	(void)state;
	/* Absorbed: only the bus time of 2 sectors. */
	served(d, 0, 2, ELV_OP_WRITE, 0, 20000, 1);
	/* Meanwhile the arm writes sectors 0-1 back (0 to 0.2 ms); sectors 2-3 append to the
	 * dirty run, so they are taken at once. */
	served(d, 2, 2, ELV_OP_WRITE, 20000, 40000, 1);
	/* Sectors 50-51 do not append: the run (2-3, at angle 0.02 when the arm is free at
	 * 0.2 ms, so 0.2 to 0.4 ms) reaches the media first, then the bus: 0.42 ms. */
	served(d, 50, 2, ELV_OP_WRITE, 40000, 420000, 1);
	/* A read miss waits for the write-back of sectors 50-51: from 0.4 ms, angle 0.04 to
	 * 0.5 is 4.6 ms, then 0.2 ms; sector 10 (angle 0.1) from 5.2 ms (angle 0.52) is 5.8 ms
	 * more, the sector 0.1 ms and the bus 0.01 ms: 11.11 ms. */
	served(d, 10, 1, ELV_OP_READ, 420000, 11110000, 0);
	elv_sim_dev_get_stats(d, &st);
	assert_int_equal(st.write_hits, 3);
	/* 0.2 + 0.2 + (4.6 + 0.2) ms of write-back */
	assert_int_equal(st.destage_ns, 5200000);
	elv_sim_dev_destroy(d);
}

/* A sequential run larger than the buffer waits only for room, one extent at a time. */
static void test_write_back_room(void **state)
{
	struct elv_sim_dev *d = toy_dev(0, 4, 0);
	struct elv_sim_io io;

	(void)state;
	/* No bus time: 0-3 fill the buffer at once; the arm writes them from 0 to 0.4 ms. */
	assert_int_equal(one(d, 0, 4, ELV_OP_WRITE, 0, &io), 0);
	/* 4-5 append but need room: the extent 0-3 must be on the media (0.4 ms). */
	assert_int_equal(one(d, 4, 2, ELV_OP_WRITE, 0, &io), 400000);
	/* 6-7 fit beside 4-5, which the arm writes from 0.4 to 0.6 ms. */
	assert_int_equal(one(d, 6, 2, ELV_OP_WRITE, 400000, &io), 400000);
	elv_sim_dev_destroy(d);
}

static void submit3(struct elv_sim_dev *d, struct elv_sim_io io[3], uint64_t s1, uint64_t s2)
{
	memset(io, 0, 3 * sizeof(*io));
	io[0].sector = 0;
	io[1].sector = s1;
	io[2].sector = s2;
	for (int i = 0; i < 3; i++) {
		io[i].nr_sectors = 1;
		io[i].op = ELV_OP_READ;
		assert_int_equal(elv_sim_dev_submit(d, &io[i], 0), 0);
	}
}

/* The command the device finishes next is @want. */
static void finishes_next(struct elv_sim_dev *d, const struct elv_sim_io *want)
{
	assert_ptr_equal(elv_sim_dev_finish(d, elv_sim_dev_next(d)), want);
}

static void test_drive_order(void **state)
{
	struct elv_sim_dev_params p;
	struct elv_sim_dev *d;
	struct elv_sim_io io[3];

	(void)state;
	/* After sector 0 (done at 0.1 ms, angle 0.01), sector 80 needs 7.9 ms of rotation and
	 * sector 20 only 1.9 ms: FCFS serves 80 first, SPTF 20 first. */
	toy(&p, 0);
	assert_int_equal(elv_sim_dev_create(&d, &p), 0);
	submit3(d, io, 80, 20);
	assert_int_equal(elv_sim_dev_slots(d), 1);
	finishes_next(d, &io[0]);
	finishes_next(d, &io[1]);
	assert_int_equal(io[1].done_ns, 8100000);
	finishes_next(d, &io[2]);
	elv_sim_dev_destroy(d);

	p.drive_sched = ELV_SIM_DRIVE_SPTF;
	assert_int_equal(elv_sim_dev_create(&d, &p), 0);
	submit3(d, io, 80, 20);
	finishes_next(d, &io[0]);
	finishes_next(d, &io[2]);
	assert_int_equal(io[2].done_ns, 2100000);
	finishes_next(d, &io[1]);
	assert_int_equal(io[1].done_ns, 8100000);
	elv_sim_dev_destroy(d);

	/* SSTF looks at cylinders only: cylinder 9 (sector 1800) loses to cylinder 2 (400). */
	p.drive_sched = ELV_SIM_DRIVE_SSTF;
	assert_int_equal(elv_sim_dev_create(&d, &p), 0);
	submit3(d, io, 1800, 400);
	finishes_next(d, &io[0]);
	finishes_next(d, &io[2]);
	finishes_next(d, &io[1]);
	elv_sim_dev_destroy(d);
}

static void test_ordered_tag(void **state)
{
	struct elv_sim_dev_params p;
	struct elv_sim_dev *d;
	struct elv_sim_io io[3];

	(void)state;
	/* With an ordered tag on the first command of the run, SPTF cannot reorder it; the
	 * later ones are free again (the next tag is due 1 s later). */
	toy(&p, 0);
	p.drive_sched = ELV_SIM_DRIVE_SPTF;
	p.ordered_tag_ms = 1000;
	assert_int_equal(elv_sim_dev_create(&d, &p), 0);
	submit3(d, io, 80, 20);
	assert_true(io[0].ordered);
	assert_false(io[1].ordered);
	finishes_next(d, &io[0]);
	finishes_next(d, &io[2]);
	elv_sim_dev_finish(d, elv_sim_dev_next(d));
	elv_sim_dev_destroy(d);
}

static void test_barracuda_qd1(void **state)
{
	struct elv_sim_dev_params p;
	struct elv_sim_dev *d;
	struct elv_sim_rng r;
	struct elv_sim_io io;
	uint64_t now = 0;
	unsigned i, n = 3000;
	double ms;

	(void)state;
	/* The sheet predicts about 71 random 512-byte reads per second at QD 1: 9.2 ms of
	 * seek, 4.17 ms of rotation and the rest overhead and transfer. */
	assert_int_equal(elv_sim_preset("barracuda", &p), 0);
	assert_int_equal(elv_sim_dev_create(&d, &p), 0);
	elv_sim_rng_seed(&r, 1);
	for (i = 0; i < n; i++)
		now = one(d, elv_sim_rng_below(&r, p.capacity), 1, ELV_OP_READ, now, &io);
	ms = (double)now / 1e6 / n;
	assert_true(ms > 12.8 && ms < 14.8);
	elv_sim_dev_destroy(d);
}

static void test_param_file_errors(void **state)
{
	struct elv_sim_dev_params p;
	char err[256];
	const char *path = "test_disk_params.tmp";
	FILE *f = fopen(path, "w");

	(void)state;
	assert_non_null(f);
	fputs("# toy\npreset = barracuda\nqueue_depth = 8\ndrive_sched = sptf\nrpm = fast\n", f);
	fclose(f);
	assert_int_equal(elv_sim_param_load(path, &p, err, sizeof(err)), ELV_EINVAL);
	assert_non_null(strstr(err, ":5: rpm"));
	f = fopen(path, "w");
	fputs("preset = barracuda\nqueue_depth = 8\ndrive_sched = sptf\n", f);
	fclose(f);
	assert_int_equal(elv_sim_param_load(path, &p, err, sizeof(err)), 0);
	assert_int_equal(p.queue_depth, 8);
	assert_int_equal(p.drive_sched, ELV_SIM_DRIVE_SPTF);
	assert_int_equal(p.kind, ELV_SIM_DEV_DISK);
	remove(path);
	assert_int_equal(elv_sim_preset("nonesuch", &p), ELV_ENOENT);
	assert_int_equal(elv_sim_param_set(&p, "nonesuch", "1"), ELV_ENOENT);
	assert_int_equal(elv_sim_param_set(&p, "zones", "10:100,x"), ELV_EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_seek_curves),
		cmocka_unit_test(test_geometry),
		cmocka_unit_test(test_rotation),
		cmocka_unit_test(test_skewed_transfer),
		cmocka_unit_test(test_cache),
		cmocka_unit_test(test_write_back),
		cmocka_unit_test(test_write_back_room),
		cmocka_unit_test(test_drive_order),
		cmocka_unit_test(test_ordered_tag),
		cmocka_unit_test(test_barracuda_qd1),
		cmocka_unit_test(test_param_file_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
