/*
 * blktrace binary reader: the relay records the kernel writes (version 7, 48-byte header, or
 * version 8, 64-byte header with a 64-bit action), each followed by pdu_len payload bytes.
 * The byte order is taken from the first record's magic and every later record must agree.
 * Only queue (Q) events become arrivals: they are the block-layer entry, before any
 * scheduler, so merges, issues and completions recorded by the traced system are not replayed.
 */
#include "trace_internal.h"

#define BT_MAGIC 0x65617400u
#define BT_MAGIC_MASK 0xffffff00u
#define BT_V7_HDR 48u
#define BT_V8_HDR 64u

/* Action code (low 16 bits of action) and its cgroup flag. */
#define BT_ACT_QUEUE 1u
#define BT_ACT_CGROUP 0x100u
#define BT_CGROUP_ID_LEN 8u

/* Categories: action >> 16. Bits from 16 on exist only in version 8 records. */
#define BT_TC_READ (1ull << 0)
#define BT_TC_WRITE (1ull << 1)
#define BT_TC_FLUSH (1ull << 2)
#define BT_TC_SYNC (1ull << 3)
#define BT_TC_PC (1ull << 9)
#define BT_TC_NOTIFY (1ull << 10)
#define BT_TC_DISCARD (1ull << 13)
#define BT_TC_DRV_DATA (1ull << 14)
#define BT_TC_ZONE_MGMT (0x1full << 17) /* zone reset, reset all, finish, open, close */

/* Where the fields sit in each header version. */
struct bt_layout {
	unsigned hdr;
	unsigned pid;
	unsigned action;
	unsigned action_len; /* 4 or 8 */
	unsigned pdu_len;
};

static const struct bt_layout bt_v7 = { BT_V7_HDR, 32, 28, 4, 46 };
static const struct bt_layout bt_v8 = { BT_V8_HDR, 28, 32, 8, 50 };

static uint64_t get_n(const unsigned char *p, unsigned len, int big)
{
	uint64_t v = 0;
	unsigned i;

	for (i = 0; i < len; i++)
		v |= (uint64_t)p[big ? i : len - 1 - i] << (8 * (len - 1 - i));
	return v;
}

static uint32_t get32(const unsigned char *p, int big)
{
	return (uint32_t)get_n(p, 4, big);
}

/* One decoded header. */
struct bt_rec {
	uint64_t time;
	uint64_t sector;
	uint64_t action;
	uint32_t bytes;
	uint32_t pid;
	uint32_t pdu_len;
};

/* Map a queue event to an operation; returns 0 to keep it, 1 to skip it (no data moved). */
static int bt_op(const struct bt_rec *r, struct elv_trace_rec *out)
{
	uint64_t cat = r->action >> 16;

	if (r->bytes == 0) {
		if (!(cat & BT_TC_FLUSH))
			return 1;
		out->op = ELV_OP_FLUSH;
	} else if (cat & BT_TC_DISCARD) {
		out->op = ELV_OP_DISCARD;
	} else if (cat & BT_TC_WRITE) {
		out->op = ELV_OP_WRITE;
	} else {
		out->op = ELV_OP_READ;
	}
	out->sync = (uint8_t)((cat & BT_TC_SYNC) || out->op == ELV_OP_READ ||
			      out->op == ELV_OP_FLUSH);
	return 0;
}

/* Keep Q events of file-system requests; drop notify, passthrough and driver-data records. */
static int bt_keep(const struct bt_rec *r)
{
	uint64_t cat = r->action >> 16;
	unsigned code = (unsigned)(r->action & 0xffffu) & ~BT_ACT_CGROUP;

	if (cat & (BT_TC_NOTIFY | BT_TC_PC | BT_TC_DRV_DATA | BT_TC_ZONE_MGMT))
		return 0;
	return code == BT_ACT_QUEUE;
}

static int bt_emit(struct elv__trace_ctx *c, uint64_t recno, const struct bt_rec *r)
{
	struct elv_trace_rec out = { 0 };

	if (!bt_keep(r) || bt_op(r, &out))
		return 0;
	out.time_ns = r->time;
	out.pid = r->pid;
	if (out.op != ELV_OP_FLUSH) {
		out.sector = r->sector;
		out.nr_sectors = r->bytes / 512 + (r->bytes % 512 != 0);
		if (out.sector > UINT64_MAX - out.nr_sectors)
			return elv__trace_fail_rec(c, recno, "sector",
						   "%llu + %u sectors passes 2^64",
						   (unsigned long long)out.sector,
						   out.nr_sectors);
	}
	return elv__trace_push(c, &out);
}

/* Check the magic at p and settle the byte order: *big is -1 until the first record. */
static int bt_magic(struct elv__trace_ctx *c, uint64_t recno, const unsigned char *p, int *big,
		    const struct bt_layout **lay)
{
	uint32_t le = get32(p, 0), be = get32(p, 1), m;
	unsigned ver;

	if (*big < 0 && (le & BT_MAGIC_MASK) == BT_MAGIC)
		*big = 0;
	else if (*big < 0 && (be & BT_MAGIC_MASK) == BT_MAGIC)
		*big = 1;
	m = *big == 1 ? be : le;
	if ((m & BT_MAGIC_MASK) != BT_MAGIC) {
		if (*big >= 0 && ((*big ? le : be) & BT_MAGIC_MASK) == BT_MAGIC)
			return elv__trace_fail_rec(c, recno, "magic",
						   "byte order differs from the first record");
		return elv__trace_fail_rec(c, recno, "magic",
					   "0x%08x is not a blktrace record", (unsigned)m);
	}
	ver = m & 0xffu;
	if (ver == 7)
		*lay = &bt_v7;
	else if (ver == 8)
		*lay = &bt_v8;
	else
		return elv__trace_fail_rec(c, recno, "version",
					   "%u not supported (7 and 8 are)", ver);
	return 0;
}

int elv__trace_read_blktrace(struct elv__trace_ctx *c, const unsigned char *buf, size_t len)
{
	const struct bt_layout *lay = NULL;
	size_t pos = 0;
	uint64_t recno = 0;
	int big = -1, rc;

	while (pos < len) {
		const unsigned char *p = buf + pos;
		size_t left = len - pos;
		struct bt_rec r;

		recno++;
		if (left < 4)
			return elv__trace_fail_rec(c, recno, "magic",
						   "truncated: %zu bytes left at offset %zu",
						   left, pos);
		rc = bt_magic(c, recno, p, &big, &lay);
		if (rc)
			return rc;
		if (left < lay->hdr)
			return elv__trace_fail_rec(c, recno, "header",
						   "truncated: %zu of %u bytes at offset %zu",
						   left, lay->hdr, pos);
		r.time = get_n(p + 8, 8, big);
		r.sector = get_n(p + 16, 8, big);
		r.bytes = get32(p + 24, big);
		r.pid = get32(p + lay->pid, big);
		r.action = get_n(p + lay->action, lay->action_len, big);
		r.pdu_len = (uint32_t)get_n(p + lay->pdu_len, 2, big);
		if (r.pdu_len > left - lay->hdr)
			return elv__trace_fail_rec(c, recno, "pdu_len",
						   "%u payload bytes run past the end (%zu left)",
						   (unsigned)r.pdu_len, left - lay->hdr);
		if ((r.action & BT_ACT_CGROUP) && r.pdu_len < BT_CGROUP_ID_LEN)
			return elv__trace_fail_rec(c, recno, "pdu_len",
						   "%u bytes cannot hold the cgroup id",
						   (unsigned)r.pdu_len);
		rc = bt_emit(c, recno, &r);
		if (rc)
			return rc;
		pos += lay->hdr + r.pdu_len;
	}
	return 0;
}
