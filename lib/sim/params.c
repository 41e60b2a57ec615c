/*
 * Device parameter sets: the built-in presets (from the published parameter sheets), the
 * key = value setter behind parameter files and --device, and the consistency check.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"

/* Seagate Barracuda ST32171W (1997, 7200 rpm SCSI): DiskSim's validated model data. */
static void preset_barracuda(struct elv_sim_dev_params *p)
{
	static const uint32_t spt[] = { 186, 185, 177, 170, 163, 157, 148, 141, 135, 126, 119 };
	struct elv_sim_disk_params *dp = &p->disk;
	uint32_t i, cyl = 5172, n = (uint32_t)(sizeof(spt) / sizeof(spt[0]));

	p->kind = ELV_SIM_DEV_DISK;
	p->queue_depth = 1;
	p->drive_sched = ELV_SIM_DRIVE_FCFS;
	dp->rpm = 7200;
	dp->surfaces = 5;
	/* The sheet gives the spt per zone but not the zone widths: split the cylinders evenly. */
	dp->nr_zones = n;
	for (i = 0; i < n; i++) {
		dp->zones[i].cylinders = cyl / n + (i < cyl % n ? 1 : 0);
		dp->zones[i].spt = spt[i];
	}
	dp->seek_kind = ELV_SIM_SEEK_TWO_PIECE;
	dp->seek_a = 2.014;
	dp->seek_b = 0.1944;
	dp->seek_c = 5.975;
	dp->seek_e = 0.00215;
	dp->seek_boundary = 1300;
	dp->head_switch = 0.10;
	/* Cylinder skew of 33 sectors on the 186-sector outer tracks: about 1.5 ms. */
	dp->cyl_switch = 1.5;
	dp->write_settle = 0;
	/* Controller overhead is not on the sheet; 0.5 ms is typical of 1990s SCSI firmware. */
	dp->ovh_read_miss = 0.5;
	dp->ovh_read_hit = 0.1;
	dp->ovh_write = 0.5;
	dp->bus_per_sector = 0.134;
	dp->cache_segments = 3;
	dp->segment_sectors = 281;
	dp->readahead_max = 281;
}

/* Generic 2003 7200 rpm IDE drive from the IBM Deskstar 120GXP / 60GXP sheets. */
static void preset_ide2003(struct elv_sim_dev_params *p)
{
	struct elv_sim_disk_params *dp = &p->disk;
	uint32_t i, n = 30;

	p->kind = ELV_SIM_DEV_DISK;
	p->queue_depth = 1;
	p->drive_sched = ELV_SIM_DRIVE_FCFS;
	dp->rpm = 7200;
	dp->surfaces = 4;
	/* 30 zones, spt falling linearly from 760 to 380; about 60 GB in all. */
	dp->nr_zones = n;
	for (i = 0; i < n; i++) {
		dp->zones[i].cylinders = 1714;
		dp->zones[i].spt = 760 - (380 * i + (n - 1) / 2) / (n - 1);
	}
	dp->seek_kind = ELV_SIM_SEEK_SQRT;
	dp->seek_t1 = 1.0;
	dp->seek_full = 15.0;
	dp->head_switch = 1.4;
	dp->cyl_switch = 1.8;
	/* Write seeks average 9.2 ms against 8.2 ms for reads: about 1 ms more settle. */
	dp->write_settle = 1.0;
	dp->ovh_read_miss = 0.3;
	dp->ovh_read_hit = 0.1;
	dp->ovh_write = 0.015;
	dp->bus_per_sector = 0.005;
	dp->cache_segments = 8;
	dp->segment_sectors = 512;
	dp->readahead_max = 512;
	/* IDE drives shipped with write-back caching on. Write-back level 2 keeps one
	 * sequential run dirty, in one segment of the cache: 256 KiB of the 2 MB. */
	dp->write_buffer = 512;
}

/* Page-mapped SSD with the NAND timings of the DiskSim SSD extension. */
static void preset_ssd(struct elv_sim_dev_params *p)
{
	struct elv_sim_flash_params *fp = &p->flash;

	p->kind = ELV_SIM_DEV_SSD;
	p->queue_depth = 32;
	p->capacity = 8ULL * 1024 * 1024; /* 4 GiB */
	fp->page_sectors = 8;
	fp->pages_per_block = 64;
	fp->ways = 8;
	fp->spare = 0.15;
	fp->gc_free = 0.05;
	fp->read_us = 25;
	fp->prog_us = 200;
	fp->erase_us = 1500;
	fp->xfer_us = 102.4; /* 0.025 us per byte */
	fp->cmd_us = 20;
}

/* Cheap 1 GB USB 2.0 stick, SLC-era NAND, log-block FTL with two open log blocks. */
static void preset_usb(struct elv_sim_dev_params *p)
{
	struct elv_sim_flash_params *fp = &p->flash;

	p->kind = ELV_SIM_DEV_USB;
	p->queue_depth = 1;
	p->capacity = 2ULL * 1024 * 1024; /* 1 GiB */
	fp->page_sectors = 4;
	fp->pages_per_block = 64;
	fp->log_blocks = 2;
	fp->ways = 1;
	fp->read_us = 25;
	fp->prog_us = 200;
	fp->erase_us = 1500;
	fp->xfer_us = 68; /* 2 KiB at about 30 MB/s of USB payload */
	fp->cmd_us = 500;
}

/*
 * Host-managed SMR disk: the mechanics of the ide2003 preset with NCQ (32 commands, SPTF),
 * no write-back cache, 256 MiB zones of which the first 4 are conventional, 128 zones open
 * at most. The drive reorders what it holds, so the transport does not keep write order.
 */
static void preset_smr(struct elv_sim_dev_params *p)
{
	preset_ide2003(p);
	p->queue_depth = 32;
	p->drive_sched = ELV_SIM_DRIVE_SPTF;
	p->disk.write_buffer = 0;
	p->zoned = 1;
	p->zone.zone_sectors = 256 * 2048;
	p->zone.nr_conv = 4;
	p->zone.max_open = 128;
}

/*
 * ZNS SSD: the NAND timings of the ssd preset, 4 GiB in 64 MiB zones of 48 MiB capacity
 * (zone capacity below zone size, as on shipping ZNS drives), at most 14 zones open and 14
 * active. NVMe does not keep the order of the commands in flight.
 */
static void preset_zns(struct elv_sim_dev_params *p)
{
	preset_ssd(p);
	p->zoned = 1;
	p->zone.zone_sectors = 64 * 2048;
	p->zone.zone_capacity = 48 * 2048;
	p->zone.max_open = 14;
	p->zone.max_active = 14;
}

static void preset_null(struct elv_sim_dev_params *p)
{
	p->kind = ELV_SIM_DEV_NULL;
	p->queue_depth = 32;
	p->capacity = 1ULL << 31;
}

struct preset {
	const char *name;
	const char *desc;
	void (*fill)(struct elv_sim_dev_params *p);
};

static const struct preset presets[] = {
	{ "barracuda", "Seagate Barracuda ST32171W, 1997 SCSI, 7200 rpm, 2.1 GB",
	  preset_barracuda },
	{ "ide2003", "generic 2003 7200 rpm IDE drive (Deskstar 120GXP sheet), 60 GB, QD 1",
	  preset_ide2003 },
	{ "ssd", "SSD, page-mapped FTL, 8-way, 4 GiB, NCQ 32", preset_ssd },
	{ "usb-stick", "1 GB USB 2.0 flash stick, log-block FTL, 2 log blocks, QD 1",
	  preset_usb },
	{ "smr", "host-managed SMR disk: ide2003 mechanics, NCQ 32 SPTF, 256 MiB zones, 4 "
	  "conventional", preset_smr },
	{ "zns", "ZNS SSD: ssd timings, 4 GiB, 64 MiB zones of 48 MiB, 14 open/active, NCQ 32",
	  preset_zns },
	{ "null", "null device: zero service time", preset_null },
};

#define NR_PRESETS (sizeof(presets) / sizeof(presets[0]))

const char *elv_sim_preset_at(unsigned i)
{
	return i < NR_PRESETS ? presets[i].name : NULL;
}

const char *elv_sim_preset_desc(unsigned i)
{
	return i < NR_PRESETS ? presets[i].desc : NULL;
}

int elv_sim_preset(const char *name, struct elv_sim_dev_params *p)
{
	unsigned i;

	if (!name || !p)
		return ELV_EINVAL;
	for (i = 0; i < NR_PRESETS; i++) {
		if (strcmp(presets[i].name, name) == 0) {
			memset(p, 0, sizeof(*p));
			snprintf(p->name, sizeof(p->name), "%s", name);
			presets[i].fill(p);
			return elv_sim_param_finish(p);
		}
	}
	return ELV_ENOENT;
}

/* ---- key = value ------------------------------------------------------------------- */

enum ptype { T_DBL, T_U32, T_U16, T_U8, T_U64 };

struct pkey {
	const char *key;
	enum ptype type;
	size_t off;
};

#define DK(k, t, f) { k, t, offsetof(struct elv_sim_dev_params, disk) + \
		      offsetof(struct elv_sim_disk_params, f) }
#define FK(k, t, f) { k, t, offsetof(struct elv_sim_dev_params, flash) + \
		      offsetof(struct elv_sim_flash_params, f) }
#define PK(k, t, f) { k, t, offsetof(struct elv_sim_dev_params, f) }
#define ZK(k, t, f) { k, t, offsetof(struct elv_sim_dev_params, zone) + \
		      offsetof(struct elv_sim_zone_params, f) }

static const struct pkey pkeys[] = {
	PK("queue_depth", T_U16, queue_depth),
	PK("zoned", T_U8, zoned),
	PK("ordered_tag_ms", T_DBL, ordered_tag_ms),
	PK("busy_depth", T_U16, busy_depth),
	PK("capacity", T_U64, capacity),
	DK("rpm", T_DBL, rpm),
	DK("surfaces", T_U32, surfaces),
	DK("seek_a", T_DBL, seek_a),
	DK("seek_b", T_DBL, seek_b),
	DK("seek_c", T_DBL, seek_c),
	DK("seek_e", T_DBL, seek_e),
	DK("seek_boundary", T_U32, seek_boundary),
	DK("seek_t1", T_DBL, seek_t1),
	DK("seek_full", T_DBL, seek_full),
	DK("head_switch_ms", T_DBL, head_switch),
	DK("cyl_switch_ms", T_DBL, cyl_switch),
	DK("write_settle_ms", T_DBL, write_settle),
	DK("ovh_read_miss_ms", T_DBL, ovh_read_miss),
	DK("ovh_read_hit_ms", T_DBL, ovh_read_hit),
	DK("ovh_write_ms", T_DBL, ovh_write),
	DK("bus_ms_per_sector", T_DBL, bus_per_sector),
	DK("cache_segments", T_U32, cache_segments),
	DK("segment_sectors", T_U32, segment_sectors),
	DK("readahead_max", T_U32, readahead_max),
	DK("write_buffer_sectors", T_U32, write_buffer),
	FK("page_sectors", T_U32, page_sectors),
	FK("pages_per_block", T_U32, pages_per_block),
	FK("log_blocks", T_U32, log_blocks),
	FK("ways", T_U32, ways),
	FK("spare", T_DBL, spare),
	FK("gc_free", T_DBL, gc_free),
	FK("read_us", T_DBL, read_us),
	FK("prog_us", T_DBL, prog_us),
	FK("erase_us", T_DBL, erase_us),
	FK("xfer_us", T_DBL, xfer_us),
	FK("cmd_us", T_DBL, cmd_us),
	ZK("zone_sectors", T_U64, zone_sectors),
	ZK("zone_capacity", T_U64, zone_capacity),
	ZK("zone_conv", T_U32, nr_conv),
	ZK("zone_max_open", T_U32, max_open),
	ZK("zone_max_active", T_U32, max_active),
	ZK("zone_ordered", T_U8, ordered),
};

static int parse_double(const char *s, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	if (end == s || *end || errno || !isfinite(*v) || *v < 0)
		return ELV_EINVAL;
	return 0;
}

static int parse_u64(const char *s, uint64_t *v)
{
	char *end;
	unsigned long long x;

	if (*s == '-' || *s == '+')
		return ELV_EINVAL;
	errno = 0;
	x = strtoull(s, &end, 10);
	if (end == s || *end || errno)
		return ELV_EINVAL;
	*v = x;
	return 0;
}

/* "cyl:spt,cyl:spt,..." */
static int parse_zones(struct elv_sim_disk_params *dp, const char *s)
{
	uint32_t n = 0;

	while (*s) {
		char *end;
		unsigned long c, spt;

		if (n == ELV_SIM_MAX_ZONES)
			return ELV_ERANGE;
		c = strtoul(s, &end, 10);
		if (end == s || *end != ':' || c == 0 || c > 1000000)
			return ELV_EINVAL;
		s = end + 1;
		spt = strtoul(s, &end, 10);
		if (end == s || spt == 0 || spt > 100000 || (*end && *end != ','))
			return ELV_EINVAL;
		dp->zones[n].cylinders = (uint32_t)c;
		dp->zones[n].spt = (uint32_t)spt;
		n++;
		s = *end ? end + 1 : end;
	}
	if (n == 0)
		return ELV_EINVAL;
	dp->nr_zones = n;
	return 0;
}

/* "d:ms,d:ms,..." with increasing distances. */
static int parse_seek_table(struct elv_sim_disk_params *dp, const char *s)
{
	uint32_t n = 0;

	while (*s) {
		char *end;
		unsigned long dist;
		double ms;

		if (n == ELV_SIM_MAX_SEEK_POINTS)
			return ELV_ERANGE;
		dist = strtoul(s, &end, 10);
		if (end == s || *end != ':' || dist == 0 || dist > 10000000)
			return ELV_EINVAL;
		s = end + 1;
		ms = strtod(s, &end);
		if (end == s || !(ms >= 0 && ms < 1000) || (*end && *end != ','))
			return ELV_EINVAL;
		if (n && dist <= dp->seek_dist[n - 1])
			return ELV_EINVAL;
		dp->seek_dist[n] = (uint32_t)dist;
		dp->seek_ms[n] = ms;
		n++;
		s = *end ? end + 1 : end;
	}
	if (n < 2)
		return ELV_EINVAL;
	dp->nr_seek_points = n;
	dp->seek_kind = ELV_SIM_SEEK_TABLE;
	return 0;
}

static int set_named(struct elv_sim_dev_params *p, const char *key, const char *val)
{
	if (strcmp(key, "kind") == 0) {
		static const char *const kinds[] = { "null", "disk", "ssd", "usb" };
		uint32_t i;

		for (i = 0; i < 4; i++)
			if (strcmp(val, kinds[i]) == 0) {
				p->kind = i;
				return 0;
			}
		return ELV_EINVAL;
	}
	if (strcmp(key, "drive_sched") == 0) {
		static const char *const s[] = { "fcfs", "sstf", "sptf" };
		uint8_t i;

		for (i = 0; i < 3; i++)
			if (strcmp(val, s[i]) == 0) {
				p->drive_sched = i;
				return 0;
			}
		return ELV_EINVAL;
	}
	if (strcmp(key, "seek") == 0) {
		if (strcmp(val, "two-piece") == 0)
			p->disk.seek_kind = ELV_SIM_SEEK_TWO_PIECE;
		else if (strcmp(val, "sqrt") == 0)
			p->disk.seek_kind = ELV_SIM_SEEK_SQRT;
		else if (strcmp(val, "table") == 0)
			p->disk.seek_kind = ELV_SIM_SEEK_TABLE;
		else
			return ELV_EINVAL;
		return 0;
	}
	if (strcmp(key, "zones") == 0)
		return parse_zones(&p->disk, val);
	if (strcmp(key, "seek_table") == 0)
		return parse_seek_table(&p->disk, val);
	if (strcmp(key, "name") == 0) {
		snprintf(p->name, sizeof(p->name), "%s", val);
		return 0;
	}
	return ELV_ENOENT;
}

int elv_sim_param_set(struct elv_sim_dev_params *p, const char *key, const char *val)
{
	size_t i;
	int r;

	if (!p || !key || !val)
		return ELV_EINVAL;
	r = set_named(p, key, val);
	if (r != ELV_ENOENT)
		return r;
	for (i = 0; i < sizeof(pkeys) / sizeof(pkeys[0]); i++) {
		const struct pkey *k = &pkeys[i];
		char *dst = (char *)p + k->off;
		double d;
		uint64_t u;

		if (strcmp(k->key, key) != 0)
			continue;
		if (k->type == T_DBL) {
			if (parse_double(val, &d))
				return ELV_EINVAL;
			memcpy(dst, &d, sizeof(d));
			return 0;
		}
		if (parse_u64(val, &u))
			return ELV_EINVAL;
		if (k->type == T_U64) {
			memcpy(dst, &u, sizeof(u));
		} else if (k->type == T_U32) {
			uint32_t v = (uint32_t)u;

			if (u > UINT32_MAX)
				return ELV_ERANGE;
			memcpy(dst, &v, sizeof(v));
		} else if (k->type == T_U16) {
			uint16_t v = (uint16_t)u;

			if (u > UINT16_MAX)
				return ELV_ERANGE;
			memcpy(dst, &v, sizeof(v));
		} else {
			uint8_t v = (uint8_t)u;

			if (u > UINT8_MAX)
				return ELV_ERANGE;
			memcpy(dst, &v, sizeof(v));
		}
		return 0;
	}
	return ELV_ENOENT;
}

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r'))
		*--e = 0;
	return s;
}

int elv_sim_param_load(const char *path, struct elv_sim_dev_params *p, char *err, size_t errlen)
{
	char line[1024];
	FILE *f;
	unsigned lineno = 0;
	int r = 0, started = 0;

	if (!path || !p)
		return ELV_EINVAL;
	f = fopen(path, "r");
	if (!f) {
		if (err)
			snprintf(err, errlen, "%s: cannot open", path);
		return ELV_ENOENT;
	}
	memset(p, 0, sizeof(*p));
	while (fgets(line, sizeof(line), f)) {
		char *eq, *key, *val, *hash;

		lineno++;
		hash = strchr(line, '#');
		if (hash)
			*hash = 0;
		key = trim(line);
		if (!*key)
			continue;
		eq = strchr(key, '=');
		if (!eq) {
			r = ELV_EINVAL;
			if (err)
				snprintf(err, errlen, "%s:%u: %s: expected key = value", path,
					 lineno, key);
			break;
		}
		*eq = 0;
		val = trim(eq + 1);
		key = trim(key);
		if (strcmp(key, "preset") == 0) {
			if (started) {
				r = ELV_EINVAL;
				if (err)
					snprintf(err, errlen, "%s:%u: preset: must come first",
						 path, lineno);
				break;
			}
			r = elv_sim_preset(val, p);
		} else {
			r = elv_sim_param_set(p, key, val);
		}
		started = 1;
		if (r) {
			if (err)
				snprintf(err, errlen, "%s:%u: %s: %s '%s'", path, lineno, key,
					 r == ELV_ENOENT ? "unknown key or preset" :
					 "bad value", val);
			break;
		}
	}
	fclose(f);
	if (r)
		return r;
	if (!p->name[0]) {
		const char *b = strrchr(path, '/');

		snprintf(p->name, sizeof(p->name), "%s", b ? b + 1 : path);
	}
	r = elv_sim_param_finish(p);
	if (r && err)
		snprintf(err, errlen, "%s: inconsistent parameters", path);
	return r;
}

static int finish_disk(struct elv_sim_dev_params *p)
{
	struct elv_sim_disk_params *dp = &p->disk;
	uint64_t cap = 0;
	uint32_t i;

	if (!(dp->rpm > 0) || dp->surfaces == 0 || dp->nr_zones == 0 ||
	    dp->nr_zones > ELV_SIM_MAX_ZONES)
		return ELV_EINVAL;
	for (i = 0; i < dp->nr_zones; i++) {
		if (!dp->zones[i].cylinders || !dp->zones[i].spt)
			return ELV_EINVAL;
		cap += (uint64_t)dp->zones[i].cylinders * dp->surfaces * dp->zones[i].spt;
	}
	if (dp->seek_kind == ELV_SIM_SEEK_TABLE && dp->nr_seek_points < 2)
		return ELV_EINVAL;
	if (dp->seek_kind > ELV_SIM_SEEK_TABLE)
		return ELV_EINVAL;
	if (dp->cache_segments && !dp->segment_sectors)
		return ELV_EINVAL;
	p->capacity = cap;
	return 0;
}

static int finish_kind(struct elv_sim_dev_params *p);

int elv_sim_param_finish(struct elv_sim_dev_params *p)
{
	int r;

	if (!p)
		return ELV_EINVAL;
	r = finish_kind(p);
	return r ? r : elv__zoned_finish(p);
}

static int finish_kind(struct elv_sim_dev_params *p)
{
	if (!p)
		return ELV_EINVAL;
	if (p->queue_depth == 0)
		p->queue_depth = 1;
	if (p->drive_sched > ELV_SIM_DRIVE_SPTF)
		return ELV_EINVAL;
	switch (p->kind) {
	case ELV_SIM_DEV_NULL:
		if (!p->capacity)
			p->capacity = 1ULL << 31;
		return 0;
	case ELV_SIM_DEV_DISK:
		return finish_disk(p);
	case ELV_SIM_DEV_SSD:
	case ELV_SIM_DEV_USB: {
		const struct elv_sim_flash_params *fp = &p->flash;
		uint64_t blk = (uint64_t)fp->page_sectors * fp->pages_per_block;

		if (!fp->page_sectors || !fp->pages_per_block || !p->capacity ||
		    p->capacity % blk)
			return ELV_EINVAL;
		if (p->kind == ELV_SIM_DEV_USB && !fp->log_blocks)
			return ELV_EINVAL;
		if (p->kind == ELV_SIM_DEV_SSD &&
		    (double)(p->capacity / fp->page_sectors) * (1.0 + fp->spare) > 4.0e9)
			return ELV_ERANGE;
		return 0;
	}
	default:
		return ELV_EINVAL;
	}
}

void elv_sim_dev_traits(const struct elv_sim_dev_params *p, struct elv_device_traits *t)
{
	memset(t, 0, sizeof(*t));
	t->rotational = p->kind == ELV_SIM_DEV_DISK;
	t->zoned = p->zoned;
	t->queue_depth = p->queue_depth;
	if (p->kind == ELV_SIM_DEV_DISK) {
		const struct elv_sim_disk_params *dp = &p->disk;

		/* Outer-zone media rate, MB/s. */
		t->mbps = (uint32_t)(dp->zones[0].spt * 512.0 * dp->rpm / 60.0 / 1e6);
	} else if (p->kind == ELV_SIM_DEV_SSD || p->kind == ELV_SIM_DEV_USB) {
		const struct elv_sim_flash_params *fp = &p->flash;
		double per_page = fp->read_us + fp->xfer_us;
		double ways = fp->ways ? fp->ways : 1;

		t->mbps = (uint32_t)(fp->page_sectors * 512.0 * ways / per_page);
	}
}
