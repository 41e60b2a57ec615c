/*
 * blktrace binary reader: the four sample files (v7/v8, little/big endian) give the same
 * records; hand-built records check the event filter, payload skipping and every error.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "test_trace_util.h"

#define BT ELV_TRACE_BLKTRACE

/* Categories (action >> 16) and codes used below. */
#define C_READ 0x1u
#define C_WRITE 0x2u
#define C_FLUSH 0x4u
#define C_SYNC 0x8u
#define C_QUEUE 0x10u
#define C_PC 0x200u
#define C_NOTIFY 0x400u
#define C_DISCARD 0x2000u
#define ACT(cat, code) ((uint64_t)(cat) << 16 | (code))
#define A_QUEUE 1u
#define A_ISSUE 7u
#define CGROUP 0x100u

/* The same expected records for every sample file: see tests/traces/gen_blktrace.py. */
static const struct elv_trace_rec sample_want[] = {
	REC(0, 2048, 8, ELV_OP_READ, 1, 100),
	REC(400, 9000, 16, ELV_OP_WRITE, 1, 200),
	REC(450, 70000, 256, ELV_OP_READ, 1, 100),
	REC(600, 10000, 2048, ELV_OP_DISCARD, 0, 300),
	REC(700, 0, 0, ELV_OP_FLUSH, 1, 200),
	REC(800, 123, 2, ELV_OP_READ, 1, 300),
};

static void sample(const char *path)
{
	trace_check_file(path, BT, sample_want, sizeof(sample_want) / sizeof(sample_want[0]));
}

static void sample_v7_le(void **state)
{
	(void)state;
	sample(TRACE_SAMPLE("blktrace_v7_le.bin"));
}

static void sample_v7_be(void **state)
{
	(void)state;
	sample(TRACE_SAMPLE("blktrace_v7_be.bin"));
}

static void sample_v8_le(void **state)
{
	(void)state;
	sample(TRACE_SAMPLE("blktrace_v8_le.bin"));
}

static void sample_v8_be(void **state)
{
	(void)state;
	sample(TRACE_SAMPLE("blktrace_v8_be.bin"));
}

/* A record under construction. */
struct ev {
	unsigned version; /* 7 or 8 */
	int big;
	uint64_t time, sector, action;
	uint32_t bytes, pid;
	uint16_t pdu_len;
	uint32_t magic; /* 0: the right one for the version */
};

static void put(unsigned char *p, uint64_t v, unsigned len, int big)
{
	unsigned i;

	for (i = 0; i < len; i++)
		p[big ? len - 1 - i : i] = (unsigned char)(v >> (8 * i));
}

/* Append the header of e (payload zero-filled, pdu_len bytes) at buf + *len. */
static void emit(unsigned char *buf, size_t *len, const struct ev *e)
{
	unsigned char *p = buf + *len;
	unsigned hdr = e->version == 8 ? 64 : 48;

	memset(p, 0, hdr + e->pdu_len);
	put(p, e->magic ? e->magic : 0x65617400u | e->version, 4, e->big);
	put(p + 8, e->time, 8, e->big);
	put(p + 16, e->sector, 8, e->big);
	put(p + 24, e->bytes, 4, e->big);
	if (e->version == 8) {
		put(p + 28, e->pid, 4, e->big);
		put(p + 32, e->action, 8, e->big);
		put(p + 50, e->pdu_len, 2, e->big);
	} else {
		put(p + 28, e->action, 4, e->big);
		put(p + 32, e->pid, 4, e->big);
		put(p + 46, e->pdu_len, 2, e->big);
	}
	*len += hdr + e->pdu_len;
}

static void mixed_versions(void **state)
{
	unsigned char buf[512];
	size_t len = 0;
	struct ev e = { 7, 1, 5000, 64, ACT(C_QUEUE | C_READ, A_QUEUE), 512, 42, 0, 0 };
	static const struct elv_trace_rec want[] = {
		REC(0, 64, 1, ELV_OP_READ, 1, 42),
		REC(1000, 96, 2, ELV_OP_WRITE, 0, 43),
	};

	(void)state;
	emit(buf, &len, &e);
	e.version = 8;
	e.time = 6000;
	e.sector = 96;
	e.bytes = 1024;
	e.pid = 43;
	e.action = ACT(C_QUEUE | C_WRITE, A_QUEUE);
	emit(buf, &len, &e);
	trace_check_mem(buf, len, BT, want, 2);
}

static void filter_and_payloads(void **state)
{
	unsigned char buf[1024];
	size_t len = 0;
	struct ev e = { 8, 0, 10, 8, ACT(C_QUEUE | C_READ, A_ISSUE), 4096, 1, 0, 0 };
	static const struct elv_trace_rec want[] = {
		REC(0, 8, 8, ELV_OP_READ, 1, 1),
		REC(30, 0, 0, ELV_OP_FLUSH, 1, 1),
	};

	(void)state;
	emit(buf, &len, &e); /* issue: dropped */
	e.action = ACT(C_NOTIFY, 1); /* timestamp notify, code 1 like QUEUE: dropped */
	e.pdu_len = 16;
	emit(buf, &len, &e);
	e.action = ACT(C_QUEUE | C_READ | C_PC, A_QUEUE); /* passthrough: dropped */
	e.pdu_len = 6;
	emit(buf, &len, &e);
	e.action = ACT(C_QUEUE | C_READ, A_QUEUE) | CGROUP; /* cgroup id in the payload */
	e.time = 20;
	e.pdu_len = 8;
	emit(buf, &len, &e);
	e.action = ACT(C_QUEUE | C_WRITE, A_QUEUE); /* zero bytes, no flush: dropped */
	e.bytes = 0;
	e.pdu_len = 0;
	emit(buf, &len, &e);
	e.action = ACT(C_QUEUE | C_WRITE | C_FLUSH, A_QUEUE); /* empty preflush: a flush */
	e.time = 50;
	e.sector = 12345;
	emit(buf, &len, &e);
	e.action = ACT(C_QUEUE | C_WRITE, A_QUEUE) | (0x1ull << (16 + 17)); /* zone reset */
	e.bytes = 4096;
	emit(buf, &len, &e);
	trace_check_mem(buf, len, BT, want, 2);
}

static void v8_wide_categories(void **state)
{
	unsigned char buf[256];
	size_t len = 0;
	/* Zone append (category bit 16) and write-zeroes (bit 22) are writes. */
	struct ev e = { 8, 1, 0, 0, ACT(C_QUEUE | C_WRITE | (1u << 16), A_QUEUE), 512, 3, 0, 0 };
	static const struct elv_trace_rec want[] = {
		REC(0, 0, 1, ELV_OP_WRITE, 0, 3),
		REC(1, 8, 1, ELV_OP_WRITE, 1, 3),
	};

	(void)state;
	emit(buf, &len, &e);
	e.time = 1;
	e.sector = 8;
	e.action = ACT(C_QUEUE | C_WRITE | C_SYNC | (1u << 22), A_QUEUE);
	emit(buf, &len, &e);
	trace_check_mem(buf, len, BT, want, 2);
}

static void discard_beats_write(void **state)
{
	unsigned char buf[128];
	size_t len = 0;
	struct ev e = { 7, 0, 0, 0, ACT(C_QUEUE | C_WRITE | C_DISCARD | C_SYNC, A_QUEUE), 512, 3,
			0, 0 };
	static const struct elv_trace_rec want[] = { REC(0, 0, 1, ELV_OP_DISCARD, 1, 3) };

	(void)state;
	emit(buf, &len, &e);
	trace_check_mem(buf, len, BT, want, 1);
}

static void errors(void **state)
{
	unsigned char buf[512];
	size_t len;
	struct ev ok = { 7, 0, 1, 8, ACT(C_QUEUE | C_READ, A_QUEUE), 4096, 1, 0, 0 };
	struct ev e;

	(void)state;
	TRACE_CHECK_TEXT_ERR("hello, world: this is text, not a blktrace file at all", BT,
			     "t:record 1: magic: ");
	trace_check_err("eat", 3, BT, "t:record 1: magic: ");

	len = 0;
	e = ok;
	e.magic = 0x65617406u;
	emit(buf, &len, &e);
	trace_check_err(buf, len, BT, "t:record 1: version: ");

	len = 0;
	emit(buf, &len, &ok);
	emit(buf, &len, &ok);
	trace_check_err(buf, len - 20, BT, "t:record 2: header: ");
	trace_check_err(buf, len - 46, BT, "t:record 2: magic: ");

	len = 0;
	e = ok;
	e.version = 8;
	emit(buf, &len, &e);
	trace_check_err(buf, len - 1, BT, "t:record 1: header: ");

	len = 0;
	e = ok;
	e.pdu_len = 16;
	emit(buf, &len, &e);
	trace_check_err(buf, len - 1, BT, "t:record 1: pdu_len: ");

	len = 0;
	e = ok;
	e.action |= CGROUP;
	e.pdu_len = 4;
	emit(buf, &len, &e);
	trace_check_err(buf, len, BT, "t:record 1: pdu_len: ");

	len = 0;
	e = ok;
	e.sector = UINT64_MAX - 7;
	emit(buf, &len, &e);
	trace_check_err(buf, len, BT, "t:record 1: sector: ");

	/* The first record sets the byte order for the whole file. */
	len = 0;
	emit(buf, &len, &ok);
	e = ok;
	e.big = 1;
	emit(buf, &len, &e);
	trace_check_err(buf, len, BT, "t:record 2: magic: ");
}

static void sector_at_the_very_end(void **state)
{
	unsigned char buf[64];
	size_t len = 0;
	struct ev e = { 7, 0, 0, UINT64_MAX - 8, ACT(C_QUEUE | C_READ, A_QUEUE), 4096, 1, 0, 0 };
	static const struct elv_trace_rec want[] = {
		REC(0, UINT64_MAX - 8, 8, ELV_OP_READ, 1, 1),
	};

	(void)state;
	emit(buf, &len, &e);
	trace_check_mem(buf, len, BT, want, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sample_v7_le),
		cmocka_unit_test(sample_v7_be),
		cmocka_unit_test(sample_v8_le),
		cmocka_unit_test(sample_v8_be),
		cmocka_unit_test(mixed_versions),
		cmocka_unit_test(filter_and_payloads),
		cmocka_unit_test(v8_wide_categories),
		cmocka_unit_test(discard_beats_write),
		cmocka_unit_test(errors),
		cmocka_unit_test(sector_at_the_very_end),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
