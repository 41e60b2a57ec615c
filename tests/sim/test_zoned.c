/*
 * Zoned device models (lib/sim/zoned.c): the zone rules of the smr and zns presets (writes
 * at the write pointer only, full zones, zone capacity, boundaries, conventional zones, the
 * open and active limits, device order), the geometry checks, and the zoned-writers scenario
 * with and without the zone write plugging stage.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "elevator/sim.h"

/* Serve one command on an idle device at *now; returns its status. */
static int run1(struct elv_sim_dev *d, uint64_t *now, uint8_t op, uint64_t sector, uint32_t nr)
{
	struct elv_sim_io io;
	struct elv_sim_io *done;

	memset(&io, 0, sizeof(io));
	io.sector = sector;
	io.nr_sectors = nr;
	io.op = op;
	assert_int_equal(elv_sim_dev_submit(d, &io, *now), 0);
	*now = elv_sim_dev_next(d);
	assert_true(*now != ELV_TIME_NEVER);
	done = elv_sim_dev_finish(d, *now);
	assert_ptr_equal(done, &io);
	return io.status;
}

static struct elv_sim_zone_info zone(const struct elv_sim_dev *d, uint32_t z)
{
	struct elv_sim_zone_info zi;

	assert_int_equal(elv_sim_dev_zone_report(d, z, &zi), 0);
	return zi;
}

static struct elv_sim_dev *make(const char *preset, const char *key, const char *val)
{
	struct elv_sim_dev_params p;
	struct elv_sim_dev *d;

	assert_int_equal(elv_sim_preset(preset, &p), 0);
	if (key)
		assert_int_equal(elv_sim_param_set(&p, key, val), 0);
	assert_int_equal(elv_sim_dev_create(&d, &p), 0);
	return d;
}

static void test_presets(void **state)
{
	struct elv_sim_dev_params p;
	struct elv_device_traits t;
	struct elv_sim_dev *d;
	struct elv_sim_zone_info zi;

	(void)state;
	assert_int_equal(elv_sim_preset("smr", &p), 0);
	assert_int_equal(p.kind, ELV_SIM_DEV_DISK);
	assert_int_equal(p.zone.zone_sectors, 256 * 2048);
	assert_int_equal(p.zone.zone_capacity, p.zone.zone_sectors);
	assert_int_equal(p.capacity % p.zone.zone_sectors, 0);
	elv_sim_dev_traits(&p, &t);
	assert_int_equal(t.zoned, 1);
	assert_int_equal(elv_sim_dev_create(&d, &p), 0);
	assert_int_equal(elv_sim_dev_nr_zones(d), p.capacity / p.zone.zone_sectors);
	assert_int_equal(zone(d, 3).cond, ELV_SIM_ZONE_CONV);
	zi = zone(d, 4);
	assert_int_equal(zi.cond, ELV_SIM_ZONE_EMPTY);
	assert_int_equal(zi.start, 4 * p.zone.zone_sectors);
	assert_int_equal(zi.wp, 0);
	assert_int_equal(elv_sim_dev_zone_report(d, elv_sim_dev_nr_zones(d), &zi), ELV_ERANGE);
	assert_int_equal(elv_sim_dev_zone_report(d, 0, NULL), ELV_EINVAL);
	elv_sim_dev_destroy(d);

	assert_int_equal(elv_sim_preset("zns", &p), 0);
	assert_int_equal(p.kind, ELV_SIM_DEV_SSD);
	assert_true(p.zone.zone_capacity < p.zone.zone_sectors);
	assert_int_equal(p.zone.max_open, 14);
	assert_int_equal(p.zone.max_active, 14);
	assert_int_equal(elv_sim_dev_create(&d, &p), 0);
	assert_int_equal(elv_sim_dev_nr_zones(d), 64);
	assert_int_equal(zone(d, 0).cond, ELV_SIM_ZONE_EMPTY);
	elv_sim_dev_destroy(d);

	/* Not zoned: no zones. */
	assert_int_equal(elv_sim_preset("ssd", &p), 0);
	assert_int_equal(elv_sim_dev_create(&d, &p), 0);
	assert_int_equal(elv_sim_dev_nr_zones(d), 0);
	assert_int_equal(elv_sim_dev_zone_report(d, 0, &zi), ELV_ERANGE);
	elv_sim_dev_destroy(d);
}

/* Zone geometry that does not add up is refused. */
static void test_bad_geometry(void **state)
{
	static const struct {
		const char *preset, *key, *val;
	} bad[] = {
		{ "zns", "zone_capacity", "262144" },   /* capacity above the zone size */
		{ "zns", "zone_max_open", "15" },       /* more open than active */
		{ "zns", "zone_conv", "64" },           /* every zone conventional */
		{ "zns", "zone_sectors", "1000" },      /* not whole erase blocks */
		{ "zns", "zone_capacity", "1000" },     /* capacity not whole erase blocks */
		{ "zns", "zone_sectors", "17179869184" }, /* larger than the device */
		{ "zns", "zone_ordered", "2" },
		{ "usb-stick", "zone_sectors", "2048" }, /* a model that cannot enforce zones */
	};
	struct elv_sim_dev_params p;
	struct elv_sim_dev *d;
	unsigned i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(elv_sim_preset(bad[i].preset, &p), 0);
		if (strcmp(bad[i].preset, "usb-stick") == 0)
			p.zoned = 1;
		assert_int_equal(elv_sim_param_set(&p, bad[i].key, bad[i].val), 0);
		assert_int_equal(elv_sim_param_finish(&p), ELV_EINVAL);
		assert_int_equal(elv_sim_dev_create(&d, &p), ELV_EINVAL);
	}
}

/* Writes at the write pointer go in; any other write fails, is counted, changes nothing. */
static void test_write_pointer(void **state)
{
	struct elv_sim_dev *d = make("zns", NULL, NULL);
	const struct elv_sim_dev_params *p = elv_sim_dev_params(d);
	uint64_t zs = p->zone.zone_sectors, z1 = zs, now = 0, t0;
	struct elv_sim_dev_stats st;

	(void)state;
	assert_int_equal(run1(d, &now, ELV_OP_WRITE, z1, 64), ELV_SIM_IO_OK);
	assert_int_equal(zone(d, 1).wp, 64);
	assert_int_equal(zone(d, 1).cond, ELV_SIM_ZONE_OPEN);
	assert_int_equal(run1(d, &now, ELV_OP_WRITE, z1 + 64, 64), ELV_SIM_IO_OK);
	/* Ahead of the write pointer, then behind it. */
	t0 = now;
	assert_int_equal(run1(d, &now, ELV_OP_WRITE, z1 + 256, 64), ELV_SIM_IO_WP);
	/* A failed command costs the command overhead only (20 us on zns). */
	assert_int_equal(now - t0, 20000);
	assert_int_equal(run1(d, &now, ELV_OP_WRITE, z1, 64), ELV_SIM_IO_WP);
	assert_int_equal(zone(d, 1).wp, 128);
	/* Crossing into the next zone; reads go anywhere. */
	assert_int_equal(run1(d, &now, ELV_OP_WRITE, 2 * zs - 8, 16), ELV_SIM_IO_BOUNDARY);
	assert_int_equal(run1(d, &now, ELV_OP_READ, z1 + 1000, 8), ELV_SIM_IO_OK);
	assert_int_equal(zone(d, 1).wp, 128);
	assert_int_equal(zone(d, 2).cond, ELV_SIM_ZONE_EMPTY);
	elv_sim_dev_get_stats(d, &st);
	assert_int_equal(st.zone_wp_errors, 2);
	assert_int_equal(st.zone_other_errors, 1);
	assert_int_equal(st.commands, 6);
	elv_sim_dev_destroy(d);
}

/* A zone fills at its capacity (below its size on zns); then every write to it fails. */
static void test_full_zone(void **state)
{
	struct elv_sim_dev *d = make("zns", NULL, NULL);
	const struct elv_sim_dev_params *p = elv_sim_dev_params(d);
	uint64_t cap = p->zone.zone_capacity, now = 0, off;
	struct elv_sim_dev_stats st;

	(void)state;
	for (off = 0; off + 256 <= cap - 256; off += 256)
		assert_int_equal(run1(d, &now, ELV_OP_WRITE, off, 256), ELV_SIM_IO_OK);
	/* Past the capacity, though still inside the zone. */
	assert_int_equal(run1(d, &now, ELV_OP_WRITE, off, 512), ELV_SIM_IO_FULL);
	assert_int_equal(zone(d, 0).cond, ELV_SIM_ZONE_OPEN);
	assert_int_equal(run1(d, &now, ELV_OP_WRITE, off, 256), ELV_SIM_IO_OK);
	assert_int_equal(zone(d, 0).wp, cap);
	assert_int_equal(zone(d, 0).cond, ELV_SIM_ZONE_FULL);
	assert_int_equal(run1(d, &now, ELV_OP_WRITE, cap, 8), ELV_SIM_IO_FULL);
	assert_int_equal(run1(d, &now, ELV_OP_WRITE, 0, 8), ELV_SIM_IO_FULL);
	elv_sim_dev_get_stats(d, &st);
	assert_int_equal(st.zone_full_errors, 3);
	assert_int_equal(st.zone_wp_errors, 0);
	elv_sim_dev_destroy(d);
}

/* Reset takes the write pointer back (on ZNS at the cost of the erases); finish fills the
 * zone; neither applies to a conventional zone or anywhere but a zone start. */
static void test_reset_finish(void **state)
{
	struct elv_sim_dev *d = make("zns", NULL, NULL);
	const struct elv_sim_dev_params *p = elv_sim_dev_params(d);
	uint64_t zs = p->zone.zone_sectors, now = 0, t0;
	struct elv_sim_dev_stats st;
	unsigned k;

	(void)state;
	/* 4 MiB written: 16 erase blocks of 256 KiB, erased 8 at a time. */
	for (k = 0; k < 32; k++)
		assert_int_equal(run1(d, &now, ELV_OP_WRITE, zs + 256u * k, 256), 0);
	assert_int_equal(zone(d, 1).wp, 8192);
	t0 = now;
	assert_int_equal(run1(d, &now, ELV_OP_ZONE_RESET, zs, (uint32_t)zs), 0);
	assert_int_equal(now - t0, 20000 + 2 * 1500000);
	assert_int_equal(zone(d, 1).wp, 0);
	assert_int_equal(zone(d, 1).cond, ELV_SIM_ZONE_EMPTY);
	/* Nothing lost: the zone takes writes from its start again. */
	assert_int_equal(run1(d, &now, ELV_OP_WRITE, zs + 256, 8), ELV_SIM_IO_WP);
	assert_int_equal(run1(d, &now, ELV_OP_WRITE, zs, 8), 0);
	assert_int_equal(run1(d, &now, ELV_OP_ZONE_FINISH, zs, (uint32_t)zs), 0);
	assert_int_equal(zone(d, 1).cond, ELV_SIM_ZONE_FULL);
	assert_int_equal(zone(d, 1).wp, p->zone.zone_capacity);
	assert_int_equal(run1(d, &now, ELV_OP_WRITE, zs + 8, 8), ELV_SIM_IO_FULL);
	/* An empty zone finishes too, and a full one resets. */
	assert_int_equal(run1(d, &now, ELV_OP_ZONE_FINISH, 2 * zs, (uint32_t)zs), 0);
	assert_int_equal(zone(d, 2).cond, ELV_SIM_ZONE_FULL);
	assert_int_equal(run1(d, &now, ELV_OP_ZONE_RESET, 2 * zs, (uint32_t)zs), 0);
	assert_int_equal(zone(d, 2).cond, ELV_SIM_ZONE_EMPTY);
	assert_int_equal(run1(d, &now, ELV_OP_ZONE_RESET, zs + 8, 8), ELV_SIM_IO_ZONE_OP);
	elv_sim_dev_get_stats(d, &st);
	assert_int_equal(st.zone_resets, 2);
	assert_int_equal(st.zone_finishes, 2);
	assert_int_equal(st.zone_other_errors, 1);
	elv_sim_dev_destroy(d);

	d = make("smr", NULL, NULL);
	zs = elv_sim_dev_params(d)->zone.zone_sectors;
	assert_int_equal(run1(d, &now, ELV_OP_ZONE_RESET, 0, (uint32_t)zs), ELV_SIM_IO_ZONE_OP);
	assert_int_equal(run1(d, &now, ELV_OP_WRITE, 4 * zs, 8), 0);
	t0 = now;
	assert_int_equal(run1(d, &now, ELV_OP_ZONE_RESET, 4 * zs, (uint32_t)zs), 0);
	/* A disk keeps the write pointer in its metadata: the command overhead only. */
	assert_int_equal(now - t0, 15000);
	assert_int_equal(zone(d, 4).wp, 0);
	elv_sim_dev_destroy(d);
}

/* Conventional zones take writes anywhere, but not into the first sequential zone. */
static void test_conventional(void **state)
{
	struct elv_sim_dev *d = make("smr", NULL, NULL);
	uint64_t zs = elv_sim_dev_params(d)->zone.zone_sectors, now = 0;

	(void)state;
	assert_int_equal(run1(d, &now, ELV_OP_WRITE, 3 * zs + 4096, 8), ELV_SIM_IO_OK);
	assert_int_equal(run1(d, &now, ELV_OP_WRITE, 12345, 8), ELV_SIM_IO_OK);
	assert_int_equal(run1(d, &now, ELV_OP_WRITE, 4 * zs - 8, 16), ELV_SIM_IO_BOUNDARY);
	assert_int_equal(run1(d, &now, ELV_OP_WRITE, 4 * zs + 8, 8), ELV_SIM_IO_WP);
	assert_int_equal(run1(d, &now, ELV_OP_WRITE, 4 * zs, 8), ELV_SIM_IO_OK);
	assert_int_equal(zone(d, 3).cond, ELV_SIM_ZONE_CONV);
	assert_int_equal(zone(d, 4).wp, 8);
	elv_sim_dev_destroy(d);
}

/* max_open: the least recently written open zone is closed; max_active: opening fails. */
static void test_open_active(void **state)
{
	struct elv_sim_dev_params p;
	struct elv_sim_dev *d;
	struct elv_sim_dev_stats st;
	uint64_t zs, now = 0;

	(void)state;
	assert_int_equal(elv_sim_preset("zns", &p), 0);
	p.zone.max_open = 2;
	p.zone.max_active = 3;
	assert_int_equal(elv_sim_dev_create(&d, &p), 0);
	zs = p.zone.zone_sectors;
	assert_int_equal(run1(d, &now, ELV_OP_WRITE, 0, 8), 0);
	assert_int_equal(run1(d, &now, ELV_OP_WRITE, zs, 8), 0);
	assert_int_equal(run1(d, &now, ELV_OP_WRITE, 8, 8), 0); /* zone 0 written last */
	assert_int_equal(run1(d, &now, ELV_OP_WRITE, 2 * zs, 8), 0);
	assert_int_equal(zone(d, 1).cond, ELV_SIM_ZONE_CLOSED);
	assert_int_equal(zone(d, 0).cond, ELV_SIM_ZONE_OPEN);
	assert_int_equal(zone(d, 2).cond, ELV_SIM_ZONE_OPEN);
	/* A fourth active zone is refused; a closed one may open again. */
	assert_int_equal(run1(d, &now, ELV_OP_WRITE, 3 * zs, 8), ELV_SIM_IO_LIMIT);
	assert_int_equal(zone(d, 3).cond, ELV_SIM_ZONE_EMPTY);
	assert_int_equal(run1(d, &now, ELV_OP_WRITE, zs + 8, 8), 0);
	assert_int_equal(zone(d, 1).cond, ELV_SIM_ZONE_OPEN);
	elv_sim_dev_get_stats(d, &st);
	assert_int_equal(st.zone_closes, 2);
	assert_int_equal(st.zone_other_errors, 1);
	elv_sim_dev_destroy(d);
}

/*
 * A device that keeps order serves several writes to one zone in arrival order; zns without
 * it serves them in its own order, so some of 32 sequential writes in flight fail.
 */
static void test_order(void **state)
{
	struct elv_sim_io io[32];
	struct elv_sim_dev_stats st;
	unsigned k, pass;

	(void)state;
	for (pass = 0; pass < 2; pass++) {
		struct elv_sim_dev *d = make("zns", "zone_ordered", pass ? "0" : "1");
		uint64_t now = 0;

		for (k = 0; k < 32; k++) {
			memset(&io[k], 0, sizeof(io[k]));
			io[k].sector = 64 * k;
			io[k].nr_sectors = 64;
			io[k].op = ELV_OP_WRITE;
			assert_int_equal(elv_sim_dev_submit(d, &io[k], 0), 0);
		}
		for (k = 0; k < 32; k++) {
			now = elv_sim_dev_next(d);
			assert_non_null(elv_sim_dev_finish(d, now));
		}
		elv_sim_dev_get_stats(d, &st);
		if (pass == 0) {
			assert_int_equal(st.zone_wp_errors, 0);
			assert_int_equal(zone(d, 0).wp, 32 * 64);
		} else {
			assert_true(st.zone_wp_errors > 0);
			assert_true(zone(d, 0).wp < 32 * 64);
		}
		elv_sim_dev_destroy(d);
	}
}

/* zoned-writers under the policies @pol[0..n) on @preset, with or without the stage. */
static void zoned_writers(const char *preset, const struct elv_policy *const *pol, unsigned n,
			  int no_stage, struct elv_sim_report *rep)
{
	struct elv_sim_dev_params dev;
	struct elv_sim_scn_opts o;
	int si = elv_sim_scenario_find("zoned-writers");

	assert_true(si >= 0);
	assert_int_equal(elv_sim_preset(preset, &dev), 0);
	assert_true(elv_sim_scenario_fits((unsigned)si, &dev));
	memset(&o, 0, sizeof(o));
	o.dev = &dev;
	o.seed = 1;
	o.scale = 0.25;
	o.no_zone_stage = (uint8_t)no_stage;
	assert_int_equal(elv_sim_scenario_run((unsigned)si, pol, n, &o, rep), 0);
	assert_int_equal(rep->nr, n);
}

/* Without the stage a sorting policy on a device that reorders breaks the write pointer. */
static void test_scenario_without_stage(void **state)
{
	const struct elv_policy *pol[1];
	struct elv_sim_report rep;
	const char *dev[2] = { "smr", "zns" };
	unsigned d;

	(void)state;
	pol[0] = elv_policy_find("deadline");
	assert_non_null(pol[0]);
	for (d = 0; d < 2; d++) {
		const struct elv_sim_result *r;

		zoned_writers(dev[d], pol, 1, 1, &rep);
		r = &rep.res[0].run;
		assert_int_equal(r->zone_stage, 0);
		assert_true(r->dev.zone_wp_errors > 0);
		assert_true(r->failed >= r->dev.zone_wp_errors);
		assert_true(rep.res[0].primary > 0);
		elv_sim_report_free(&rep);
	}
}

/* With the stage: no failed write under any policy of the registry, on either device. */
static void test_scenario_with_stage(void **state)
{
	const struct elv_policy *pol[64];
	struct elv_sim_report rep;
	const char *dev[2] = { "smr", "zns" };
	unsigned n = 0, d, k;

	(void)state;
	while (n < 64 && elv_policy_at(n))
		n++, pol[n - 1] = elv_policy_at(n - 1);
	assert_true(n >= 5);
	for (d = 0; d < 2; d++) {
		zoned_writers(dev[d], pol, n, 0, &rep);
		for (k = 0; k < n; k++) {
			const struct elv_sim_result *r = &rep.res[k].run;

			print_message("%s %-12s wp errors %llu, failed %llu, %.3f s\n", dev[d],
				      r->policy, (unsigned long long)r->dev.zone_wp_errors,
				      (unsigned long long)r->failed, r->makespan_s);
			assert_int_equal(r->error, 0);
			assert_int_equal(r->truncated, 0);
			assert_int_equal(r->zone_stage, 1);
			assert_int_equal(r->dev.zone_wp_errors, 0);
			assert_int_equal(r->dev.zone_full_errors + r->dev.zone_other_errors, 0);
			assert_int_equal(r->failed, 0);
			/* Four writers of 8 MiB in 32 KiB requests: everything written. */
			assert_true(r->requests >= 4 * 256);
		}
		elv_sim_report_free(&rep);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_presets),
		cmocka_unit_test(test_bad_geometry),
		cmocka_unit_test(test_write_pointer),
		cmocka_unit_test(test_full_zone),
		cmocka_unit_test(test_conventional),
		cmocka_unit_test(test_reset_finish),
		cmocka_unit_test(test_open_active),
		cmocka_unit_test(test_order),
		cmocka_unit_test(test_scenario_without_stage),
		cmocka_unit_test(test_scenario_with_stage),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
