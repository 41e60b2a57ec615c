/*
 * elvcheck: model-based checker of libelevator.
 *
 *   elvcheck --policy NAME|all --seed S --ops N    random calls, checked after every call
 *   elvcheck --replay FILE                          run a reproducer printed by a failure
 *   elvcheck --fairness NAME --seed S               only the fairness check (fair.c) on NAME
 *   elvcheck --qos NAME --seed S                    only the reservation check (qos_check.c)
 *   elvcheck --zoned --seed S --ops N               only the zoned model (zoned_check.c): the
 *                                                   zone stage in front of every policy
 *
 * A seeded generator issues any sequence of public calls (tests/model/elv_model.h has the
 * call language, the reference model and the checks). A run is cut into episodes, each with
 * its own queue configuration; an episode ends by taking every request back and tearing the
 * queue down. On a violation the episode's calls are shrunk (dropping calls while the same
 * violation still shows, bounded effort) and printed as a reproducer.
 *
 * Prints "N passed, M failed": N calls checked, M runs that found a violation. Exit status 1
 * on a violation (0 with --expect-fail, where finding none is the failure). A violation also
 * prints the one command that runs the same calls again (same policy, seed and call count).
 * A run long enough to cover them that never crossed 2^64, never stepped the clock back or
 * never called back into the queue from a callback is a failure too: the generator lost them.
 * The policies that promise proportional service (bfq) also get the fairness check of
 * fair.c after their random calls: two backlogged streams must stay within three budgets of
 * each other, in service divided by weight (one "fairness" line per policy and seed).
 */
#define _POSIX_C_SOURCE 199309L /* clock_gettime */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "elv_model.h"
#include "fair.h"
#include "qos_check.h"
#include "zoned_check.h"

#ifdef ELVCHECK_PLANTED
/* tests/model/plant.c: deliberately broken policies and core, for the checker's own test. */
unsigned plant_policies(const struct elv_policy **out, uint8_t *dl_bound, unsigned max);
void plant_core_bug(int bug);
#endif

#define EC_MAX_EPISODE 40000u

static uint64_t ec_qmem[1u << 17]; /* 1 MiB of queue memory, 8-byte aligned */
static struct em ec_m;
static struct em_call ec_calls[EC_MAX_EPISODE];
static struct em_call ec_work[EC_MAX_EPISODE];
static struct em_call ec_best[EC_MAX_EPISODE];

struct ec_opts {
	const char *policy;
	const char *fairness; /* --fairness NAME: only the fairness check, on that policy */
	const char *replay;
	uint64_t seed;
	uint64_t ops;
	unsigned episode;
	unsigned shrink_budget;
	double shrink_secs;
	int expect_fail;
	int verbose;
	int plant_core;
	const char *expect;
	const char *qos;      /* --qos NAME: only the reservation check, on that policy */
};

/* The first violation found, before shrinking (for --expect). */
static char ec_first_violation[EM_ERR_LEN];

static double ec_clock(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static const char *ec_exclude;
static const char *ec_only; /* --only: these policies and no others */
static int ec_zoned;         /* --zoned: the zoned model instead of the call language */

/* Is policy @name left out by --exclude or --only? */
static int ec_left_out(const char *name)
{
	return em_listed(ec_exclude, name) || (ec_only && !em_listed(ec_only, name));
}
static const char *ec_argv0 = "elvcheck";

/* Calls per policy from which every kind of episode is sure to have come up. */
#define EC_COVER_OPS 500000u

static void ec_setup_policies(struct em *m)
{
	const struct elv_policy *p;
	unsigned i;

	m->npols = 0;
	for (i = 0; (p = elv_policy_at(i)) != NULL; i++) {
		if (ec_left_out(p->name))
			continue;
		if (m->npols == EM_MAX_POLS) {
			/* Never check fewer policies than asked without a word. */
			fprintf(stderr, "elvcheck: more than %d policies; raise EM_MAX_POLS\n",
				EM_MAX_POLS);
			exit(2);
		}
		m->pols[m->npols].p = p;
		m->pols[m->npols].dl_bound = strcmp(p->name, "deadline") == 0;
		m->npols++;
	}
#ifdef ELVCHECK_PLANTED
	{
		const struct elv_policy *pp[EM_MAX_POLS];
		uint8_t dl[EM_MAX_POLS];
		unsigned n = plant_policies(pp, dl, EM_MAX_POLS - m->npols);

		for (i = 0; i < n; i++) {
			if (ec_left_out(pp[i]->name))
				continue;
			m->pols[m->npols].p = pp[i];
			m->pols[m->npols].dl_bound = dl[i];
			m->npols++;
		}
	}
#endif
	m->mem = ec_qmem;
	m->mem_cap = sizeof(ec_qmem);
}

static int ec_find_policy(const struct em *m, const char *name)
{
	unsigned i;

	for (i = 0; i < m->npols; i++)
		if (strcmp(m->pols[i].p->name, name) == 0)
			return (int)i;
	return -1;
}

/* Run @n calls (skipping none) on a fresh queue; returns the index of the failing call,
 * @n when the teardown failed, or -1 when everything held. */
static long ec_run(struct em *m, const struct em_config *c, const struct em_call *calls,
		   size_t n)
{
	size_t i;

	if (em_start(m, c) != 0)
		return 0;
	for (i = 0; i < n; i++) {
		em_exec(m, &calls[i]);
		if (m->failed)
			return (long)i;
	}
	em_finish(m);
	return m->failed ? (long)n : -1;
}

/* What a failure is about, without its numbers: shrinking keeps the same kind. */
static void ec_signature(const char *err, char *out, size_t len)
{
	size_t j = 0;

	for (; *err && j + 1 < len && j < 48; err++)
		if (!(*err >= '0' && *err <= '9'))
			out[j++] = *err;
	out[j] = 0;
}

/*
 * Drop calls while the same kind of violation still shows: chunks of halving size, down to
 * single calls, repeated while a round removes anything. Returns the new length.
 */
static size_t ec_shrink(struct em *m, const struct em_config *c, struct em_call *calls,
			size_t n, const struct ec_opts *o)
{
	char want[64], got[64];
	size_t chunk, start, k, tries = 0, before;
	double t0 = ec_clock();
	long f;

	ec_signature(m->err, want, sizeof(want));
	do {
		before = n;
		for (chunk = n / 2 ? n / 2 : 1; chunk >= 1; chunk /= 2) {
			start = 0;
			while (start < n) {
				size_t end = start + chunk < n ? start + chunk : n;

				if (tries++ >= o->shrink_budget || ec_clock() - t0 > o->shrink_secs)
					return n;
				memcpy(ec_work, calls, start * sizeof(*calls));
				k = start;
				memcpy(ec_work + k, calls + end, (n - end) * sizeof(*calls));
				k += n - end;
				f = ec_run(m, c, ec_work, k);
				ec_signature(m->err, got, sizeof(got));
				if (f >= 0 && strcmp(want, got) == 0) {
					n = (size_t)f < k ? (size_t)f + 1u : k;
					memcpy(calls, ec_work, n * sizeof(*calls));
				} else {
					start = end;
				}
			}
			if (chunk == 1)
				break;
		}
	} while (n < before && n > 1);
	return n;
}

static void ec_report(struct em *m, const struct em_config *c, struct em_call *calls, size_t n,
		      long f, const struct ec_opts *o, uint64_t episode)
{
	char first[EM_ERR_LEN];
	size_t i, len = f >= 0 && (size_t)f < n ? (size_t)f + 1u : n;

	snprintf(first, sizeof(first), "%s", m->err);
	if (!ec_first_violation[0])
		snprintf(ec_first_violation, sizeof(ec_first_violation), "%s", m->err);
	printf("VIOLATION (seed %llu, start policy %s) in episode %llu after %zu calls: %s\n",
	       (unsigned long long)o->seed, elv_policy_name(m->pols[c->policy % m->npols].p),
	       (unsigned long long)episode, len, first);
	memcpy(ec_best, calls, len * sizeof(*calls));
	len = ec_shrink(m, c, ec_best, len, o);
	/* Replay the shrunk sequence once more so the message matches it. */
	f = ec_run(m, c, ec_best, len);
	printf("reproduce: %s --policy %s --seed %llu --ops %llu --episode %u", ec_argv0,
	       m->pols[c->policy % m->npols].p->name, (unsigned long long)o->seed,
	       (unsigned long long)o->ops, o->episode);
	if (ec_exclude)
		printf(" --exclude %s", ec_exclude);
	if (ec_only)
		printf(" --only %s", ec_only);
	if (o->plant_core)
		printf(" --plant-core %d", o->plant_core);
	printf("\n");
	printf("minimal reproducer: %zu calls (replay: save the lines from 'config' to 'end' "
	       "and run elvcheck --replay FILE)\n", len);
	printf("  violation: %s\n", m->failed ? m->err : first);
	em_print_config(stdout, m, c);
	for (i = 0; i < len; i++)
		em_print_call(stdout, &ec_best[i]);
	printf("end\n");
	(void)f;
}

/* Policies that promise proportional service between backlogged streams (fair.c). */
static const char *const ec_fair_policies[] = { "bfq" };

static int ec_is_fair(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(ec_fair_policies) / sizeof(ec_fair_policies[0]); i++)
		if (strcmp(name, ec_fair_policies[i]) == 0)
			return 1;
	return 0;
}

#define EC_FAIR_RUNS 8u     /* settings drawn per seed */
#define EC_FAIR_ROUNDS 200u /* budgets of service per run */

#define EC_QOS_RUNS 4u /* settings drawn per seed for the reservation check */

/* Reservations and a limit under mClock in front of @p (qos_check.c). 0 when they held. */
static int ec_qos(const struct elv_policy *p, uint64_t seed)
{
	struct qos_check_result r;
	double worst = 1e9;
	uint64_t disp = 0;
	unsigned k;

	for (k = 0; k < EC_QOS_RUNS; k++) {
		if (qos_check_run(p, seed * EC_QOS_RUNS + k, &r) != 0) {
			printf("VIOLATION (seed %llu, qos run %u, policy %s): %s\n",
			       (unsigned long long)seed, k, elv_policy_name(p), r.err);
			printf("reproduce: %s --qos %s --seed %llu\n", ec_argv0, elv_policy_name(p),
			       (unsigned long long)seed);
			snprintf(ec_first_violation, sizeof(ec_first_violation), "qos: %s", r.err);
			return 1;
		}
		disp += r.dispatches;
		if (r.got[0] / r.reservation[0] < worst)
			worst = r.got[0] / r.reservation[0];
	}
	printf("qos %s seed %llu: %u runs, %llu dispatches, reservations met under load (the "
	       "closest at %.3f of its reservation), limits held\n", elv_policy_name(p),
	       (unsigned long long)seed, EC_QOS_RUNS, (unsigned long long)disp, worst);
	return 0;
}

/* The fairness check on @p, EC_FAIR_RUNS runs drawn from @seed. 0 when the bound held. */
static int ec_fairness(const struct elv_policy *p, uint64_t seed, int required, uint64_t *ops)
{
	struct fair_result r;
	uint64_t worst = 0, bound = 0, disp = 0;
	unsigned k;

	for (k = 0; k < EC_FAIR_RUNS; k++) {
		if (fair_run(p, seed * EC_FAIR_RUNS + k, EC_FAIR_ROUNDS, required, &r) != 0) {
			printf("VIOLATION (seed %llu, fairness run %u): %s\n", (unsigned long long)seed,
			       k, r.err);
			printf("reproduce: %s --fairness %s --seed %llu\n", ec_argv0,
			       elv_policy_name(p), (unsigned long long)seed);
			snprintf(ec_first_violation, sizeof(ec_first_violation), "fairness: %s",
				 r.err);
			*ops += disp + r.dispatches + 1u; /* the failing check counts too */
			return 1;
		}
		disp += r.dispatches;
		/* The closest call, as a share of its run's bound. */
		if (r.max_diff * (bound ? bound : 1) >= worst * r.bound) {
			worst = r.max_diff;
			bound = r.bound;
		}
	}
	*ops += disp;
	printf("fairness %s seed %llu: %u runs, %llu dispatches, two backlogged streams at most "
	       "%llu sectors apart at equal weight (bound %llu)\n", elv_policy_name(p),
	       (unsigned long long)seed, EC_FAIR_RUNS, (unsigned long long)disp,
	       (unsigned long long)worst, (unsigned long long)bound);
	return 0;
}

/* One policy: episodes of random length until @o->ops calls ran. 0 when all held. */
static int ec_policy_run(struct em *m, unsigned pol, const struct ec_opts *o, uint64_t *ops)
{
	struct em_src src;
	struct em_config c;
	uint64_t done = 0, episode = 0;
	double t0 = ec_clock(), dt;

	memset(&src, 0, sizeof(src));
	src.rng = 1;
	src.x = (o->seed + 1u) * 0x9E3779B97F4A7C15ull ^ ((uint64_t)pol << 32) ^ 0x5eed;
	if (src.x == 0)
		src.x = 1;
	m->bound_checks = m->waits = m->merges_due = 0;
	m->wraps = m->backsteps = m->reenters = m->joins = 0;
	m->qos_checks = m->qos_sets = 0;
	while (done < o->ops) {
		uint64_t len = o->episode / 4u + em_u32(&src) % (o->episode - o->episode / 4u + 1u);
		size_t i;

		if (len > o->ops - done)
			len = o->ops - done;
		em_gen_config(m, &src, &c);
		c.policy = (uint8_t)pol;
		if (em_start(m, &c) != 0) {
			ec_report(m, &c, ec_calls, 0, 0, o, episode);
			return 1;
		}
		for (i = 0; i < len; i++) {
			em_gen(m, &src, i, &ec_calls[i]);
			em_exec(m, &ec_calls[i]);
			if (m->failed)
				break;
		}
		if (!m->failed)
			em_finish(m);
		if (m->failed) {
			*ops += done + i;
			ec_report(m, &c, ec_calls, i < len ? i + 1u : len, (long)i, o, episode);
			return 1;
		}
		done += len;
		episode++;
	}
	*ops += done;
	dt = ec_clock() - t0;
	printf("policy %-14s seed %llu: %llu calls in %llu episodes, %.0f calls/s, %llu expired "
	       "reads within bound, %llu idle waits followed, %llu required back merges, "
	       "%llu clock wraps, %llu steps back, %llu re-entrant calls refused, %llu streams "
	       "moved into groups, %llu releases checked against a QoS cap, %llu QoS settings "
	       "changed under load\n",
	       m->pols[pol].p->name, (unsigned long long)o->seed, (unsigned long long)done,
	       (unsigned long long)episode, dt > 0 ? (double)done / dt : 0.0,
	       (unsigned long long)m->bound_checks, (unsigned long long)m->waits,
	       (unsigned long long)m->merges_due, (unsigned long long)m->wraps,
	       (unsigned long long)m->backsteps, (unsigned long long)m->reenters,
	       (unsigned long long)m->joins, (unsigned long long)m->qos_checks,
	       (unsigned long long)m->qos_sets);
	if (done >= EC_COVER_OPS && (!m->wraps || !m->backsteps || !m->reenters || !m->joins ||
				     !m->qos_checks || !m->qos_sets)) {
		printf("VIOLATION (seed %llu, start policy %s): the generator produced no %s in "
		       "%llu calls\n", (unsigned long long)o->seed, m->pols[pol].p->name,
		       !m->wraps ? "clock wrap" : !m->backsteps ? "step back" :
		       !m->reenters ? "call from a callback" : !m->joins ? "stream moved into a group" :
		       !m->qos_checks ? "release checked against a QoS cap" :
		       "QoS settings changed under load",
		       (unsigned long long)done);
		snprintf(ec_first_violation, sizeof(ec_first_violation), "generator coverage");
		return 1;
	}
	if (ec_is_fair(m->pols[pol].p->name)) {
		uint64_t fops = 0;

		if (ec_fairness(m->pols[pol].p, o->seed, 1, &fops))
			return 1;
	}
	/* Built-in policies only: a planted one is there for its own violation. */
	if (elv_policy_find(m->pols[pol].p->name) == m->pols[pol].p)
		return ec_qos(m->pols[pol].p, o->seed);
	return 0;
}

static int ec_replay(struct em *m, const char *path, uint64_t *ops)
{
	FILE *f = fopen(path, "r");
	char line[512];
	struct em_config c;
	size_t n = 0;
	int have_cfg = 0;
	long r;

	if (!f) {
		perror(path);
		exit(2);
	}
	while (fgets(line, sizeof(line), f)) {
		const char *p = line;

		while (*p == ' ' || *p == '\t')
			p++;
		if (!have_cfg) {
			have_cfg = em_parse_config(p, &c);
			continue;
		}
		if (strncmp(p, "end", 3) == 0)
			break;
		if (n < EC_MAX_EPISODE && em_parse_call(p, &ec_calls[n]))
			n++;
	}
	fclose(f);
	if (!have_cfg) {
		fprintf(stderr, "%s: no config line\n", path);
		exit(2);
	}
	m->verbose = 1;
	r = ec_run(m, &c, ec_calls, n);
	*ops += r >= 0 ? (uint64_t)r : n;
	if (r >= 0 && (size_t)r < n)
		printf("VIOLATION at call %ld of %zu: %s\n", r + 1, n, m->err);
	else if (r >= 0)
		printf("VIOLATION after all %zu calls (taking everything back): %s\n", n, m->err);
	else
		printf("replay of %zu calls: no violation\n", n);
	return r >= 0;
}

/* Does @s contain one of the comma-separated words of @words? */
static int ec_contains_any(const char *s, const char *words)
{
	char w[128];

	while (*words) {
		size_t n = strcspn(words, ",");

		if (n > 0 && n < sizeof(w)) {
			memcpy(w, words, n);
			w[n] = 0;
			if (strstr(s, w))
				return 1;
		}
		words += n;
		if (*words == ',')
			words++;
	}
	return 0;
}

/*
 * The zoned model (zoned_check.c, elv_zmodel.h) over every policy of the run, o->ops calls.
 * A run of 10^5 calls or more that never merged, never failed a write on the device or
 * never had the stage give one back did not exercise what it checks: that is a failure.
 */
static int ec_zoned_run(const struct em *m, const struct ec_opts *o, uint64_t *ops)
{
	const struct elv_policy *pols[EM_MAX_POLS];
	struct zoned_check_result r;
	unsigned i;
	int bad;

	for (i = 0; i < m->npols; i++)
		pols[i] = m->pols[i].p;
	bad = zoned_run(pols, m->npols, o->seed, o->ops, &r);
	*ops += r.calls;
	printf("zoned seed %llu: %llu calls in %llu episodes under %u policies, %llu merges, "
	       "%llu writes failed by the device, %llu given back by the stage, %llu adds "
	       "refused\n", (unsigned long long)o->seed, (unsigned long long)r.calls,
	       (unsigned long long)r.episodes, m->npols, (unsigned long long)r.merges,
	       (unsigned long long)r.failed_writes, (unsigned long long)r.given_back,
	       (unsigned long long)r.refused);
	if (!bad && r.calls >= 100000 && (!r.merges || !r.failed_writes || !r.given_back)) {
		snprintf(r.err, sizeof(r.err), "coverage: no merge, failed write or write given "
			 "back in %llu calls", (unsigned long long)r.calls);
		bad = -1;
	}
	if (!bad)
		return 0;
	printf("VIOLATION (seed %llu, zoned): %s\n", (unsigned long long)o->seed, r.err);
	printf("reproduce: %s --zoned --seed %llu --ops %llu (ELV_ZONED_LOG=1 prints the calls)\n",
	       ec_argv0, (unsigned long long)o->seed, (unsigned long long)o->ops);
	snprintf(ec_first_violation, sizeof(ec_first_violation), "zoned: %.500s", r.err);
	return 1;
}

static void ec_usage(void)
{
	fprintf(stderr,
		"usage: elvcheck [--policy NAME|all] [--seed S] [--ops N] [--episode N]\n"
		"                [--shrink-budget N] [--shrink-seconds S] [--expect-fail]\n"
		"                [--expect WORD,...]\n"
		"                [--replay FILE] [--fairness NAME] [--qos NAME] [--list]\n"
		"                [--exclude NAME,...]\n"
		"                [--only NAME,...] [--zoned]%s\n",
#ifdef ELVCHECK_PLANTED
		" [--plant-core N]"
#else
		""
#endif
	);
	exit(2);
}

int main(int argc, char **argv)
{
	struct ec_opts o = { "all", NULL, NULL, 1, 100000, 20000, 2000, 30.0, 0, 0, 0, NULL, NULL };
	struct em *m = &ec_m;
	uint64_t ops = 0;
	unsigned failed = 0, i;
	int a;

	ec_argv0 = argv[0];
	for (a = 1; a < argc; a++) {
		const char *v = a + 1 < argc ? argv[a + 1] : NULL;

		if (strcmp(argv[a], "--policy") == 0 && v) {
			o.policy = v;
			a++;
		} else if (strcmp(argv[a], "--seed") == 0 && v) {
			o.seed = strtoull(v, NULL, 0);
			a++;
		} else if (strcmp(argv[a], "--ops") == 0 && v) {
			o.ops = strtoull(v, NULL, 0);
			a++;
		} else if (strcmp(argv[a], "--episode") == 0 && v) {
			o.episode = (unsigned)strtoul(v, NULL, 0);
			a++;
		} else if (strcmp(argv[a], "--shrink-budget") == 0 && v) {
			o.shrink_budget = (unsigned)strtoul(v, NULL, 0);
			a++;
		} else if (strcmp(argv[a], "--shrink-seconds") == 0 && v) {
			o.shrink_secs = strtod(v, NULL);
			a++;
		} else if (strcmp(argv[a], "--exclude") == 0 && v) {
			ec_exclude = v;
			a++;
		} else if (strcmp(argv[a], "--only") == 0 && v) {
			ec_only = v;
			a++;
		} else if (strcmp(argv[a], "--qos") == 0 && v) {
			o.qos = v;
			a++;
		} else if (strcmp(argv[a], "--fairness") == 0 && v) {
			o.fairness = v;
			a++;
		} else if (strcmp(argv[a], "--zoned") == 0) {
			ec_zoned = 1;
		} else if (strcmp(argv[a], "--replay") == 0 && v) {
			o.replay = v;
			a++;
#ifdef ELVCHECK_PLANTED
		} else if (strcmp(argv[a], "--plant-core") == 0 && v) {
			o.plant_core = atoi(v);
			a++;
#endif
		} else if (strcmp(argv[a], "--expect-fail") == 0) {
			o.expect_fail = 1;
		} else if (strcmp(argv[a], "--expect") == 0 && v) {
			o.expect_fail = 1;
			o.expect = v;
			a++;
		} else if (strcmp(argv[a], "--verbose") == 0) {
			o.verbose = 1;
		} else if (strcmp(argv[a], "--list") == 0) {
			ec_setup_policies(m);
			for (i = 0; i < m->npols; i++)
				printf("%s\n", m->pols[i].p->name);
			return 0;
		} else {
			ec_usage();
		}
	}
	if (o.episode < 100u || o.episode > EC_MAX_EPISODE)
		o.episode = o.episode < 100u ? 100u : EC_MAX_EPISODE;
#ifdef ELVCHECK_PLANTED
	plant_core_bug(o.plant_core);
#endif
	ec_setup_policies(m);
	if (m->npols == 0) {
		fprintf(stderr, "elvcheck: --exclude/--only leave no policy to check\n");
		return 2;
	}
	m->verbose = o.verbose;
	if (o.qos) {
		int p = ec_find_policy(m, o.qos);

		if (p < 0) {
			fprintf(stderr, "elvcheck: no policy named %s (try --list)\n", o.qos);
			return 2;
		}
		failed = (unsigned)ec_qos(m->pols[p].p, o.seed);
		ops++;
	} else if (o.fairness) {
		int p = ec_find_policy(m, o.fairness);

		if (p < 0) {
			fprintf(stderr, "elvcheck: no policy named %s (try --list)\n", o.fairness);
			return 2;
		}
		/* Any policy may be put to the test; only the fair ones must have the tunables. */
		failed = (unsigned)ec_fairness(m->pols[p].p, o.seed, ec_is_fair(o.fairness), &ops);
	} else if (ec_zoned) {
		failed = (unsigned)ec_zoned_run(m, &o, &ops);
	} else if (o.replay) {
		failed = (unsigned)ec_replay(m, o.replay, &ops);
	} else if (strcmp(o.policy, "all") == 0) {
		/* Every built-in policy as the starting one; runs switch among all of them. */
		for (i = 0; i < m->npols; i++)
			if (ec_find_policy(m, elv_policy_name(m->pols[i].p)) == (int)i &&
			    elv_policy_find(elv_policy_name(m->pols[i].p)) == m->pols[i].p)
				failed += (unsigned)ec_policy_run(m, i, &o, &ops);
	} else {
		int p = ec_find_policy(m, o.policy);

		if (p < 0) {
			fprintf(stderr, "elvcheck: no policy named %s (try --list)\n", o.policy);
			return 2;
		}
		failed = (unsigned)ec_policy_run(m, (unsigned)p, &o, &ops);
	}
	printf("%llu passed, %u failed\n", (unsigned long long)(ops - failed), failed);
	if (o.expect_fail) {
		if (failed && o.expect && !ec_contains_any(ec_first_violation, o.expect)) {
			printf("expected a violation mentioning one of \"%s\", found another\n",
			       o.expect);
			return 1;
		}
		if (failed) {
			printf("expected a violation and found one\n");
			return 0;
		}
		printf("expected a violation, found none\n");
		return 1;
	}
	return failed ? 1 : 0;
}
