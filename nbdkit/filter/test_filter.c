/*
 * cmocka tests of the elevator filter's parts that need no nbdkit process: parameter and
 * control-file parsing with their messages, and the latency histogram. nbdkit's own
 * functions are replaced by stubs that keep the last error message.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <nbdkit-filter.h>

#include "elvf.h"

static char last_error[1024];
static int nr_errors;

void nbdkit_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	nr_errors++;
}

void nbdkit_debug(const char *fmt, ...)
{
	(void)fmt;
}

char *nbdkit_absolute_path(const char *path)
{
	return strdup(path);
}

int nbdkit_nanosleep(unsigned sec, unsigned nsec)
{
	(void)sec;
	(void)nsec;
	return 0;
}

static int reset(void **state)
{
	(void)state;
	last_error[0] = '\0';
	nr_errors = 0;
	return 0;
}

/* Parse "key=value" pairs into a fresh parameter set, then finish it. */
static int parse(struct elvf_params *p, const char *const *kv)
{
	char buf[128];
	char *eq;

	memset(p, 0, sizeof(*p));
	for (; *kv; kv++) {
		(void)snprintf(buf, sizeof(buf), "%s", *kv);
		eq = strchr(buf, '=');
		assert_non_null(eq);
		*eq = '\0';
		assert_true(elvf_param_is_ours(buf));
		if (elvf_param_set(p, buf, eq + 1) < 0)
			return -1;
	}
	return elvf_params_finish(p);
}

static void expect_refused(const char *const *kv, const char *msg_start)
{
	struct elvf_params p;

	reset(NULL);
	assert_int_equal(parse(&p, kv), -1);
	assert_int_equal(nr_errors, 1);
	assert_true(strncmp(last_error, msg_start, strlen(msg_start)) == 0);
	assert_null(strchr(last_error, '\n'));
	elvf_params_free(&p);
}

static void test_defaults(void **state)
{
	static const char *const none[] = { NULL };
	static const char *const rot[] = { "rotational=yes", NULL };
	struct elv_device_traits dev = { .rotational = 1, .queue_depth = 1 };
	struct elvf_params p;

	(void)state;
	assert_int_equal(parse(&p, none), 0);
	assert_int_equal(p.depth, 32);
	assert_int_equal(p.stream_mode, ELVF_STREAM_CONNECTION);
	assert_ptr_equal(p.set.policy, elv_policy_recommend(&(struct elv_device_traits){
						.queue_depth = 32 }));
	assert_int_equal(parse(&p, rot), 0);
	assert_int_equal(p.depth, 1);
	assert_ptr_equal(p.set.policy, elv_policy_recommend(&dev));
	assert_int_equal(nr_errors, 0);
}

static void test_good_parameters(void **state)
{
	static const char *const kv[] = { "policy=deadline", "depth=4", "read_expire=100",
					  "fifo_batch=8", "stream=none", "ioprio=rt,2",
					  "stats=/tmp/s.json", NULL };
	struct elvf_params p;

	(void)state;
	assert_int_equal(parse(&p, kv), 0);
	assert_ptr_equal(p.set.policy, elv_policy_find("deadline"));
	assert_int_equal(p.depth, 4);
	assert_int_equal(p.set.nr_tun, 2);
	assert_string_equal(p.set.tun[0].name, "read_expire");
	assert_int_equal(p.set.tun[0].value, 100);
	assert_int_equal(p.stream_mode, ELVF_STREAM_NONE);
	assert_int_equal(p.ioprio, ELV_PRIO(ELV_PRIO_RT, 2));
	assert_string_equal(p.stats_path, "/tmp/s.json");
	elvf_params_free(&p);
	assert_false(elvf_param_is_ours("size"));
	assert_false(elvf_param_is_ours("model"));
	assert_true(elvf_param_is_ours("slice_idle"));
}

static void test_bad_parameters(void **state)
{
	static const char *const unknown[] = { "policy=nosuch", NULL };
	static const char *const other[] = { "policy=noop", "read_expire=5", NULL };
	static const char *const range[] = { "policy=cfq", "slice_idle=1001", NULL };
	static const char *const nonint[] = { "policy=deadline", "fifo_batch=8x", NULL };
	static const char *const depth0[] = { "depth=0", NULL };
	static const char *const depthbig[] = { "depth=65536", NULL };
	static const char *const stream[] = { "stream=thread", NULL };
	static const char *const prio[] = { "ioprio=be,8", NULL };
	static const char *const prio2[] = { "ioprio=urgent", NULL };
	static const char *const rot[] = { "rotational=maybe", NULL };

	(void)state;
	expect_refused(unknown, "policy=nosuch: unknown policy");
	expect_refused(other, "read_expire=5: not a tunable of policy noop");
	expect_refused(range, "slice_idle=1001: out of range 0 to 1000 ms");
	expect_refused(nonint, "fifo_batch=8x: not an integer");
	expect_refused(depth0, "depth=0: ");
	expect_refused(depthbig, "depth=65536: ");
	expect_refused(stream, "stream=thread: ");
	expect_refused(prio, "ioprio=be,8: ");
	expect_refused(prio2, "ioprio=urgent: ");
	expect_refused(rot, "rotational=maybe: ");
}

static void test_control_file(void **state)
{
	struct elvf_settings s;

	(void)state;
	assert_int_equal(elvf_control_parse("/c", "# comment\n\n  policy = cfq \nslice_idle=0\r\n"
					    "quantum= 4", &s), 0);
	assert_ptr_equal(s.policy, elv_policy_find("cfq"));
	assert_int_equal(s.nr_tun, 2);
	assert_string_equal(s.tun[1].name, "quantum");
	assert_int_equal(s.tun[1].value, 4);
	assert_int_equal(elvf_settings_check(&s, s.policy, ""), 0);
	assert_int_equal(elvf_control_parse("/c", "", &s), 0);
	assert_null(s.policy);
	assert_int_equal(s.nr_tun, 0);

	reset(NULL);
	assert_int_equal(elvf_control_parse("/c", "policy=cfq\nsize=4\n", &s), -1);
	assert_string_equal(last_error, "control file /c line 2: size=4: unknown tunable "
			    "(only policy=, tunables and QoS settings may change at run time)");
	reset(NULL);
	assert_int_equal(elvf_control_parse("/c", "policy=cfq\nslice_idle\n", &s), -1);
	assert_string_equal(last_error, "control file /c line 2: slice_idle: expected "
			    "NAME=VALUE");
	/* Parsed, but the tunable is not the new policy's: refused when checked. */
	assert_int_equal(elvf_control_parse("/c", "policy=noop\nread_expire=1\n", &s), 0);
	reset(NULL);
	assert_int_equal(elvf_settings_check(&s, s.policy, "control=/c: "), -1);
	assert_string_equal(last_error, "control=/c: read_expire=1: not a tunable of policy noop");
}

static void test_qos_parameters(void **state)
{
	static const char *const kv[] = { "limit-iops=500", "burst-iops=2000", "burst-length=60",
					  "export.gold.mclock-reservation=300",
					  "export.gold.mclock-weight=4", "export.gold.limit-iops=0",
					  "export.gold.burst-iops=0", "export.gold.burst-length=0",
					  "export.a.b.mclock-limit=900", "conn.3.limit-bps-read=1048576",
					  NULL };
	const struct elvf_qos_rules *layer;
	struct elvf_params p;
	struct elvf_qos q;

	(void)state;
	assert_true(elvf_param_is_ours("limit-iops"));
	assert_true(elvf_param_is_ours("export.x.burst-bps-write"));
	assert_true(elvf_param_is_ours("conn.7.mclock-weight"));
	assert_false(elvf_param_is_ours("export.x.size"));
	assert_false(elvf_param_is_ours("limit-iops-total"));
	assert_int_equal(parse(&p, kv), 0);
	layer = &p.set.qos;
	assert_int_equal(layer->nr, 4);
	/* Every connection: the plain keys. */
	elvf_qos_effective(&layer, 1, "other", 1, &q);
	assert_int_equal(q.v[ELVF_QOS_LIMIT_IOPS], 500);
	assert_int_equal(q.v[ELVF_QOS_BURST_IOPS], 2000);
	assert_int_equal(q.v[ELVF_QOS_BURST_LENGTH], 60);
	assert_int_equal(q.v[ELVF_QOS_RESERVATION], 0);
	/* Export "gold": its own keys on top, 0 lifting the cap again. */
	elvf_qos_effective(&layer, 1, "gold", 2, &q);
	assert_int_equal(q.v[ELVF_QOS_LIMIT_IOPS], 0);
	assert_int_equal(q.v[ELVF_QOS_BURST_IOPS], 0);
	assert_int_equal(q.v[ELVF_QOS_RESERVATION], 300);
	assert_int_equal(q.v[ELVF_QOS_WEIGHT], 4);
	/* A name with dots: the key is what follows the last one. */
	elvf_qos_effective(&layer, 1, "a.b", 2, &q);
	assert_int_equal(q.v[ELVF_QOS_LIMIT], 900);
	/* Connection 3, whatever its export. */
	elvf_qos_effective(&layer, 1, "gold", 3, &q);
	assert_int_equal(q.v[ELVF_QOS_LIMIT_BPS_READ], 1048576);
	assert_int_equal(q.v[ELVF_QOS_RESERVATION], 300);
	assert_int_equal(nr_errors, 0);
	elvf_params_free(&p);
}

static void test_qos_layers(void **state)
{
	struct elvf_settings cmd, ctl;
	const struct elvf_qos_rules *layers[2];
	struct elvf_qos q;

	(void)state;
	memset(&cmd, 0, sizeof(cmd));
	assert_int_equal(elvf_qos_parse(&cmd.qos, "limit-iops", "100", ""), 0);
	assert_int_equal(elvf_qos_parse(&cmd.qos, "export.x.limit-iops", "50", ""), 0);
	assert_int_equal(elvf_control_parse("/c", "mclock-weight=2\nconn.2.limit-iops=7\n"
					    "export.x.mclock-reservation = 10\n", &ctl), 0);
	assert_null(ctl.policy);
	assert_int_equal(ctl.nr_tun, 0);
	assert_int_equal(ctl.qos.nr, 3);
	layers[0] = &cmd.qos;
	layers[1] = &ctl.qos;
	/* The control file's plain key beats the command line's export key. */
	elvf_qos_effective(layers, 2, "x", 1, &q);
	assert_int_equal(q.v[ELVF_QOS_LIMIT_IOPS], 50);
	assert_int_equal(q.v[ELVF_QOS_WEIGHT], 2);
	assert_int_equal(q.v[ELVF_QOS_RESERVATION], 10);
	elvf_qos_effective(layers, 2, "y", 2, &q);
	assert_int_equal(q.v[ELVF_QOS_LIMIT_IOPS], 7);
	assert_int_equal(q.v[ELVF_QOS_RESERVATION], 0);
	assert_int_equal(elvf_qos_check_layers(layers, 2, ""), 0);
	/* A reservation above the limit it meets only in one export. */
	assert_int_equal(elvf_control_parse("/c", "export.x.mclock-limit=5\n"
					    "export.x.mclock-reservation=10\n", &ctl), 0);
	reset(NULL);
	assert_int_equal(elvf_qos_check_layers(layers, 2, "control=/c: "), -1);
	assert_string_equal(last_error, "control=/c: export.x.mclock-reservation=10: is above "
			    "export.x.mclock-limit=5");
	reset(NULL);
	assert_int_equal(elvf_control_parse("/c", "conn.0.limit-iops=1\n", &ctl), -1);
	assert_string_equal(last_error, "control file /c line 1: conn.0.limit-iops=1: conn.N "
			    "needs a connection number from 1");
}

static void test_qos_bad(void **state)
{
	static const char *const notnum[] = { "limit-iops=fast", NULL };
	static const char *const neg[] = { "limit-bps=-1", NULL };
	static const char *const big[] = { "limit-bps=1000000000000001", NULL };
	static const char *const weight[] = { "mclock-weight=1000001", NULL };
	static const char *const resbig[] = { "mclock-reservation=1000000001", NULL };
	static const char *const both[] = { "limit-iops=100", "limit-iops-read=50", NULL };
	static const char *const bboth[] = { "limit-bps=100", "burst-bps=200",
					     "burst-bps-write=300", "limit-bps-write=10", NULL };
	static const char *const nolimit[] = { "burst-iops=100", NULL };
	static const char *const low[] = { "limit-iops=100", "burst-iops=50", NULL };
	static const char *const len[] = { "limit-iops=100", "burst-length=5", NULL };
	static const char *const len0[] = { "burst-length=86401", NULL };
	static const char *const size[] = { "limit-bps=100", "iops-size=4096", NULL };
	static const char *const res[] = { "mclock-limit=100", "mclock-reservation=200", NULL };
	static const char *const exp[] = { "limit-iops=100", "export.e.burst-iops=10", NULL };
	static const char *const conn[] = { "conn.x.limit-iops=10", NULL };
	static const char *const nostream[] = { "stream=none", "limit-iops=10", NULL };

	(void)state;
	expect_refused(notnum, "limit-iops=fast: must be 0 (unset) or an integer from 1 to ");
	expect_refused(neg, "limit-bps=-1: must be 0 (unset)");
	expect_refused(big, "limit-bps=1000000000000001: must be 0 (unset)");
	expect_refused(weight, "mclock-weight=1000001: must be 0 (unset) or an integer from 1 "
		       "to 1000000");
	expect_refused(resbig, "mclock-reservation=1000000001: must be 0 (unset) or an integer "
		       "from 1 to 1000000000 ops/s");
	expect_refused(both, "limit-iops-read=50: cannot be combined with limit-iops=100");
	expect_refused(bboth, "limit-bps-write=10: cannot be combined with limit-bps=100");
	expect_refused(nolimit, "burst-iops=100: needs limit-iops as well");
	expect_refused(low, "burst-iops=50: is lower than limit-iops=100");
	expect_refused(len, "burst-length=5: needs a burst-iops or burst-bps setting");
	expect_refused(len0, "burst-length=86401: must be 0 (unset)");
	expect_refused(size, "iops-size=4096: needs a limit-iops setting");
	expect_refused(res, "mclock-reservation=200: is above mclock-limit=100");
	expect_refused(exp, "export.e.burst-iops=10: is lower than limit-iops=100");
	expect_refused(conn, "conn.x.limit-iops=10: conn.N needs a connection number");
	expect_refused(nostream, "stream=none: QoS settings need stream=connection");
}

static void test_histogram(void **state)
{
	struct elvf_hist *h = calloc(1, sizeof(*h));
	uint64_t v;

	(void)state;
	assert_non_null(h);
	assert_int_equal(elvf_hist_quantile(h, 0.5), 0);
	for (v = 1; v <= 1000; v++)
		elvf_hist_add(h, v * 1000);
	assert_int_equal(h->count, 1000);
	assert_int_equal(h->max, 1000000);
	/* Within one bucket (12.5%) above the true quantile, never above the maximum. */
	v = elvf_hist_quantile(h, 0.5);
	assert_true(v >= 500000 && v <= 500000 + 500000 / 8);
	v = elvf_hist_quantile(h, 0.99);
	assert_true(v >= 990000 && v <= 1000000);
	assert_int_equal(elvf_hist_quantile(h, 1.0), 1000000);
	elvf_hist_add(h, 3);
	elvf_hist_add(h, UINT64_MAX);
	assert_int_equal(h->max, UINT64_MAX);
	free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_defaults, reset),
		cmocka_unit_test_setup(test_good_parameters, reset),
		cmocka_unit_test_setup(test_bad_parameters, reset),
		cmocka_unit_test_setup(test_control_file, reset),
		cmocka_unit_test_setup(test_qos_parameters, reset),
		cmocka_unit_test_setup(test_qos_layers, reset),
		cmocka_unit_test_setup(test_qos_bad, reset),
		cmocka_unit_test_setup(test_histogram, reset),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
