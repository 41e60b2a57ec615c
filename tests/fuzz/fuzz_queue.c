/*
 * libFuzzer target: the fuzzer's bytes drive the call language of the model checker
 * (tests/model/elv_model.h). The first bytes choose the queue configuration, every further
 * call takes a few bytes; when they run out, everything is taken back and the queue torn
 * down. Any violation of the model prints the call sequence and aborts, so libFuzzer keeps
 * the input; sanitizers catch what the model cannot see.
 *
 * A third of the configurations put the QoS stage in front of the policy, with the stage's
 * depth and choice at the limit from the input; then some calls set, change and remove
 * streams' throttles and mClock settings (fuzzed values, valid or not) while requests are
 * queued, among adds, cancels, drains and switches (qos_*.bin in the corpus start so).
 *
 * An input whose first byte is 'Z' drives the zoned model instead (tests/model/elv_zmodel.h):
 * a queue with the zone write plugging stage attached, zone operations among the calls, and
 * the zoned invariants checked after every call.
 *
 * ELV_FUZZ_EXCLUDE (environment, comma-separated policy names) leaves policies out, for
 * example one whose known bug would otherwise stop every run. A name that is no built-in
 * policy, or a list that leaves none, stops the fuzzer at once: it never runs empty.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EM_SLOTS 24 /* fewer descriptors: full queues and reuse come sooner */
#include "../model/elv_model.h"
#include "../model/elv_zmodel.h"

#define FQ_MAX_CALLS 2048u

static uint64_t fq_mem[1u << 17];
static struct em fq_m;
static struct em_call fq_calls[FQ_MAX_CALLS];
static int fq_ready;
static struct ez fq_z;

/* Every name in @list must be a built-in policy: a typo would fuzz the wrong set. */
static void fq_check_names(const char *list)
{
	char name[64];

	while (list && *list) {
		size_t n = strcspn(list, ",");

		if (n == 0 || n >= sizeof(name)) {
			fprintf(stderr, "ELV_FUZZ_EXCLUDE: bad list \"%s\"\n", list);
			abort();
		}
		memcpy(name, list, n);
		name[n] = 0;
		if (!elv_policy_find(name)) {
			fprintf(stderr, "ELV_FUZZ_EXCLUDE: no policy named \"%s\"\n", name);
			abort();
		}
		list += n;
		if (*list == ',')
			list++;
	}
}

static void fq_setup(struct em *m)
{
	const char *ex = getenv("ELV_FUZZ_EXCLUDE");
	const struct elv_policy *p;
	unsigned i;

	fq_check_names(ex);
	m->npols = 0;
	for (i = 0; (p = elv_policy_at(i)) != NULL; i++) {
		if (em_listed(ex, elv_policy_name(p)))
			continue;
		if (m->npols == EM_MAX_POLS) {
			fprintf(stderr, "fuzz_queue: more than %d policies; raise EM_MAX_POLS\n",
				EM_MAX_POLS);
			abort();
		}
		m->pols[m->npols].p = p;
		m->pols[m->npols].dl_bound = strcmp(elv_policy_name(p), "deadline") == 0;
		m->npols++;
	}
	m->mem = fq_mem;
	m->mem_cap = sizeof(fq_mem);
	if (m->npols == 0) {
		fprintf(stderr, "fuzz_queue: ELV_FUZZ_EXCLUDE leaves no policy to fuzz\n");
		abort();
	}
}

static void fq_die(struct em *m, const struct em_config *c, size_t n)
{
	size_t i;

	fprintf(stderr, "VIOLATION after %zu calls: %s\nreproducer (elvcheck --replay):\n", n,
		m->err);
	em_print_config(stderr, m, c);
	for (i = 0; i < n; i++)
		em_print_call(stderr, &fq_calls[i]);
	fprintf(stderr, "end\n");
	abort();
}

/* The zoned model on the bytes after the 'Z'. */
static void fq_zoned(const uint8_t *data, size_t size)
{
	struct ez *z = &fq_z;
	struct ez_src src;
	unsigned i;

	for (i = 0; i < fq_m.npols; i++)
		z->pols[i] = fq_m.pols[i].p;
	z->npols = fq_m.npols;
	memset(&src, 0, sizeof(src));
	src.p = data;
	src.n = size;
	if (ez_episode(z, &src, FQ_MAX_CALLS) != 0) {
		fprintf(stderr, "ZONED VIOLATION after %llu calls: %s\n(rerun the input with "
			"ELV_ZONED_LOG=1 to print the calls)\n", (unsigned long long)z->ops, z->err);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct em *m = &fq_m;
	struct em_src src;
	struct em_config c;
	size_t n = 0;

	if (!fq_ready) {
		fq_setup(m);
		fq_z.log = getenv("ELV_ZONED_LOG") ? stderr : NULL;
		fq_ready = 1;
	}
	if (size > 0 && data[0] == 'Z') {
		fq_zoned(data + 1, size - 1);
		return 0;
	}
	memset(&src, 0, sizeof(src));
	src.p = data;
	src.n = size;
	em_gen_config(m, &src, &c);
	if (em_start(m, &c) != 0)
		fq_die(m, &c, 0);
	while (n < FQ_MAX_CALLS) {
		em_gen(m, &src, n, &fq_calls[n]);
		if (src.eof)
			break;
		em_exec(m, &fq_calls[n++]);
		if (m->failed)
			fq_die(m, &c, n);
	}
	em_finish(m);
	if (m->failed)
		fq_die(m, &c, n);
	return 0;
}
