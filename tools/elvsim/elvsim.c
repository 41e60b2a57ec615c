/*
 * elvsim: the research command line of libelevator. Runs the reference scenarios or a job
 * file under any set of policies on any device model, replays block traces, shows how the
 * recommended policy ranks on every device preset, and writes tables, JSON, CSV and gnuplot
 * charts. A run cut short (time limit, or nothing left to happen) is an error: exit status 3
 * and one line on stderr, besides the line every report format carries.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "elevator/elevator.h"
#include "elevator/sim.h"
#include "elevator/sim_trace.h"
#include "trace_scn.h"

#define MAX_POL 32

/* The classic algorithms of the literature; every other built-in is a Linux elevator. */
static const char *const classic_names[] = { "fcfs", "sstf", "scan", "look", "cscan", "clook",
					      "nscan", "fscan", "vr", "sptf", "asptf" };

static int is_classic(const struct elv_policy *p)
{
	size_t i;

	for (i = 0; i < sizeof(classic_names) / sizeof(classic_names[0]); i++)
		if (strcmp(elv_policy_name(p), classic_names[i]) == 0)
			return 1;
	return 0;
}

struct opts {
	const struct elv_policy *pol[MAX_POL];
	unsigned npol;
	struct elv_sim_dev_params dev;
	int have_dev;
	uint64_t seed;
	const char *json;
	const char *csv;
	const char *plot;
	double scale;
	int quiet;
	int closed_loop;
	int no_zone_stage;
	const char *format;
	struct elv_sim_set sets[ELV_SIM_MAX_SETS];
	unsigned nsets;
	const char *trace;
	int have_seed;
	uint64_t time_limit_ns;
	uint32_t nr_pct;
	double pct[ELV_SIM_MAX_PCT];
};

/* Exit statuses: 0 complete, 1 failed, 2 bad command line, 3 a run was cut short. */
enum { EXIT_CUT = 3 };

/* Where --trace writes, and the policy whose run is going on. */
struct tracer {
	FILE *f;
	const char *policy;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: elvsim list\n"
		"       elvsim run SCENARIO [options]\n"
		"       elvsim job JOBFILE [options]\n"
		"       elvsim replay TRACE --format blktrace|blkparse|msr|fio|ftrace [--closed-loop]"
		" [options]\n"
		"       elvsim recommend [--seed N] [--scale X] [--json FILE]\n"
		"       elvsim --help | --version\n"
		"options:\n"
		"  --policy P[,P...]|linux|classic|all\n"
		"                          policies to compare: named, the Linux elevators (the\n"
		"                          default), the classic algorithms, or every one\n"
		"  --device PRESET|FILE    device model (default: the scenario's)\n"
		"  --dev-set KEY=VALUE     change one device parameter (repeatable)\n"
		"  --seed N                random seed (default 1)\n"
		"  --set TUNABLE=VALUE     policy tunable for every run (repeatable)\n"
		"  --json FILE|-           JSON report\n"
		"  --csv FILE|-            CSV report\n"
		"  --plot DIR              SVG charts through gnuplot\n"
		"  --scale X               multiply the work of a scenario (default 1)\n"
		"  --trace FILE|-          every command given to and completed by the device\n"
		"  --time-limit SECONDS    stop every run at this simulated time (default: none);\n"
		"                          a run it stops is reported as cut and exits 3\n"
		"  --percentiles P[,P...]  latency percentiles to report (e.g. 50,90,99,99.9)\n"
		"  --no-zone-stage         zoned devices run without the zone write plugging\n"
		"                          stage, to show the writes that fail without it\n"
		"  --quiet                 no table, no progress bar\n"
		"exit status: 0 done, 1 failed, 2 bad usage, 3 a run was cut short\n"
		"job files and everything else: docs/simulator.md\n");
}

/* ---- progress bar (stderr, only on a terminal and only for long runs) ------------------- */

struct bar {
	struct timespec t0;
	int tty;
	int shown;
	const char *label;
};

static double since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

static void bar_cb(void *ctx, double f)
{
	struct bar *b = ctx;
	int i, n;

	if (!b->tty || since(&b->t0) < 2.0)
		return;
	if (f < 0)
		f = 0;
	if (f > 1)
		f = 1;
	n = (int)(f * 40);
	fprintf(stderr, "\r%-24.24s [", b->label);
	for (i = 0; i < 40; i++)
		fputc(i < n ? '#' : '.', stderr);
	fprintf(stderr, "] %3d%%", (int)(f * 100));
	b->shown = 1;
}

static void bar_init(struct bar *b, const char *label, int quiet)
{
	memset(b, 0, sizeof(*b));
	clock_gettime(CLOCK_MONOTONIC, &b->t0);
	b->tty = !quiet && isatty(2);
	b->label = label;
}

static void bar_done(struct bar *b)
{
	if (b->shown)
		fprintf(stderr, "\r%-80s\r", "");
}

/* ---- options --------------------------------------------------------------------------- */

static int add_policies(struct opts *o, const char *list)
{
	char buf[256], *tok, *save = NULL;

	if (strcmp(list, "all") == 0 || strcmp(list, "linux") == 0 ||
	    strcmp(list, "classic") == 0) {
		/* Groups: a classic algorithm may starve a stream for good (SSTF behind a
		 * streamer), so the default is the Linux elevators, whose runs always end. */
		int want = strcmp(list, "all") == 0 ? -1 : strcmp(list, "classic") == 0;
		unsigned i;

		o->npol = 0;
		for (i = 0; elv_policy_at(i); i++) {
			if (want >= 0 && is_classic(elv_policy_at(i)) != want)
				continue;
			if (o->npol == MAX_POL) {
				fprintf(stderr, "elvsim: more than %d policies; raise MAX_POL\n",
					MAX_POL);
				return -1;
			}
			o->pol[o->npol++] = elv_policy_at(i);
		}
		return 0;
	}
	snprintf(buf, sizeof(buf), "%s", list);
	o->npol = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		const struct elv_policy *p = elv_policy_find(tok);

		if (!p) {
			fprintf(stderr, "elvsim: no policy '%s' (see elvsim list)\n", tok);
			return -1;
		}
		if (o->npol < MAX_POL)
			o->pol[o->npol++] = p;
	}
	return o->npol ? 0 : -1;
}

static int load_device(struct opts *o, const char *arg)
{
	char err[512];
	int r;

	if (elv_sim_preset(arg, &o->dev) == 0) {
		o->have_dev = 1;
		return 0;
	}
	r = elv_sim_param_load(arg, &o->dev, err, sizeof(err));
	if (r) {
		if (r == ELV_ENOENT && !strchr(arg, '/') && access(arg, F_OK) != 0)
			fprintf(stderr, "elvsim: '%s' is neither a device preset nor a file\n",
				arg);
		else
			fprintf(stderr, "elvsim: %s\n", err);
		return -1;
	}
	o->have_dev = 1;
	return 0;
}

static int split_kv(const char *arg, char *key, size_t klen, const char **val)
{
	const char *eq = strchr(arg, '=');

	if (!eq || eq == arg || (size_t)(eq - arg) >= klen)
		return -1;
	memcpy(key, arg, (size_t)(eq - arg));
	key[eq - arg] = 0;
	*val = eq + 1;
	return 0;
}

static int parse_pct(struct opts *o, const char *list)
{
	char buf[256], *tok, *save = NULL;

	snprintf(buf, sizeof(buf), "%s", list);
	o->nr_pct = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *end;
		double v = strtod(tok, &end);

		if (*end || end == tok || !(v > 0 && v <= 100)) {
			fprintf(stderr, "elvsim: percentile '%s' is not in (0, 100]\n", tok);
			return -1;
		}
		if (o->nr_pct == ELV_SIM_MAX_PCT) {
			fprintf(stderr, "elvsim: at most %d percentiles\n", ELV_SIM_MAX_PCT);
			return -1;
		}
		o->pct[o->nr_pct++] = v;
	}
	if (!o->nr_pct) {
		fprintf(stderr, "elvsim: --percentiles wants a list like 50,90,99,99.9\n");
		return -1;
	}
	return 0;
}

static int parse_opts(struct opts *o, int argc, char **argv, int start, const char *dflt_dev)
{
	int i;
	struct { char key[64]; const char *val; } ds[32];
	unsigned nds = 0, k;

	o->seed = 1;
	o->scale = 1;
	if (add_policies(o, "linux"))
		return -1;
	for (i = start; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(a, "--quiet") == 0) {
			o->quiet = 1;
			continue;
		}
		if (strcmp(a, "--closed-loop") == 0) {
			o->closed_loop = 1;
			continue;
		}
		if (strcmp(a, "--no-zone-stage") == 0) {
			o->no_zone_stage = 1;
			continue;
		}
		if (!v || strncmp(a, "--", 2) != 0) {
			fprintf(stderr, "elvsim: unexpected or incomplete argument '%s'\n", a);
			return -1;
		}
		i++;
		if (strcmp(a, "--policy") == 0) {
			if (add_policies(o, v))
				return -1;
		} else if (strcmp(a, "--device") == 0) {
			if (load_device(o, v))
				return -1;
		} else if (strcmp(a, "--dev-set") == 0) {
			if (nds == 32 || split_kv(v, ds[nds].key, sizeof(ds[nds].key),
						  &ds[nds].val)) {
				fprintf(stderr, "elvsim: --dev-set wants KEY=VALUE\n");
				return -1;
			}
			nds++;
		} else if (strcmp(a, "--seed") == 0) {
			char *end;

			errno = 0;
			o->seed = strtoull(v, &end, 0);
			if (*end || errno || *v == '-') {
				fprintf(stderr, "elvsim: bad seed '%s'\n", v);
				return -1;
			}
			o->have_seed = 1;
		} else if (strcmp(a, "--time-limit") == 0) {
			char *end;
			double sec = strtod(v, &end);

			if (*end || end == v || !(sec > 0 && sec < 1.8e10)) {
				fprintf(stderr, "elvsim: bad time limit '%s' (simulated seconds)\n",
					v);
				return -1;
			}
			o->time_limit_ns = (uint64_t)llround(sec * 1e9);
		} else if (strcmp(a, "--percentiles") == 0) {
			if (parse_pct(o, v))
				return -1;
		} else if (strcmp(a, "--set") == 0) {
			struct elv_sim_set *s = &o->sets[o->nsets];
			const char *val;
			char *end;

			if (o->nsets == ELV_SIM_MAX_SETS ||
			    split_kv(v, s->name, sizeof(s->name), &val)) {
				fprintf(stderr, "elvsim: --set wants TUNABLE=VALUE\n");
				return -1;
			}
			errno = 0;
			s->value = strtoll(val, &end, 0);
			if (*end || errno || !*val) {
				fprintf(stderr, "elvsim: bad tunable value '%s'\n", val);
				return -1;
			}
			o->nsets++;
		} else if (strcmp(a, "--json") == 0) {
			o->json = v;
		} else if (strcmp(a, "--csv") == 0) {
			o->csv = v;
		} else if (strcmp(a, "--plot") == 0) {
			o->plot = v;
		} else if (strcmp(a, "--format") == 0) {
			o->format = v;
		} else if (strcmp(a, "--trace") == 0) {
			o->trace = v;
		} else if (strcmp(a, "--scale") == 0) {
			char *end;

			o->scale = strtod(v, &end);
			if (*end || !(o->scale > 0 && o->scale <= 100)) {
				fprintf(stderr, "elvsim: bad scale '%s'\n", v);
				return -1;
			}
		} else {
			fprintf(stderr, "elvsim: unknown option '%s'\n", a);
			return -1;
		}
	}
	if (!o->have_dev && dflt_dev && load_device(o, dflt_dev))
		return -1;
	for (k = 0; k < nds; k++) {
		int r = elv_sim_param_set(&o->dev, ds[k].key, ds[k].val);

		if (r) {
			fprintf(stderr, "elvsim: --dev-set %s: %s\n", ds[k].key,
				r == ELV_ENOENT ? "unknown parameter" : "bad value");
			return -1;
		}
	}
	if (nds && elv_sim_param_finish(&o->dev)) {
		fprintf(stderr, "elvsim: the device parameters are inconsistent\n");
		return -1;
	}
	return 0;
}

/* ---- tunable check: a clear message before anything runs ------------------------------- */

static int check_sets(const struct opts *o)
{
	unsigned i, k, t;

	for (i = 0; i < o->nsets; i++) {
		int known = 0;

		for (k = 0; k < o->npol; k++) {
			unsigned nt;
			const struct elv_tunable *tt = elv_policy_tunables(o->pol[k], &nt);

			for (t = 0; t < nt; t++) {
				if (strcmp(tt[t].name, o->sets[i].name) != 0)
					continue;
				known = 1;
				if (o->sets[i].value < tt[t].min || o->sets[i].value > tt[t].max) {
					fprintf(stderr, "elvsim: %s: %s must be within %lld..%lld %s\n",
						elv_policy_name(o->pol[k]), tt[t].name,
						(long long)tt[t].min, (long long)tt[t].max,
						tt[t].unit);
					return -1;
				}
			}
		}
		if (!known) {
			fprintf(stderr, "elvsim: no selected policy has a tunable '%s'\n",
				o->sets[i].name);
			return -1;
		}
	}
	return 0;
}

/* Policies that lack a --set tunable run without it: keep only the sets each one has. */
static unsigned sets_for(const struct opts *o, const struct elv_policy *p,
			 struct elv_sim_set *out)
{
	unsigned i, t, n = 0, nt;
	const struct elv_tunable *tt = elv_policy_tunables(p, &nt);

	for (i = 0; i < o->nsets; i++)
		for (t = 0; t < nt; t++)
			if (strcmp(tt[t].name, o->sets[i].name) == 0)
				out[n++] = o->sets[i];
	return n;
}

/* ---- output ------------------------------------------------------------------------------ */

static FILE *open_out(const char *path)
{
	FILE *f;

	if (strcmp(path, "-") == 0)
		return stdout;
	f = fopen(path, "w");
	if (!f)
		fprintf(stderr, "elvsim: cannot write %s: %s\n", path, strerror(errno));
	return f;
}

static void close_out(FILE *f)
{
	if (f && f != stdout)
		fclose(f);
}

/* One line per device event: policy, D(ispatch) or C(omplete), ms, op, sector, sectors. */
static void trace_cb(void *ctx, char ev, uint64_t now, const struct elv_sim_io *io)
{
	static const char ops[] = "RWDF";
	const struct tracer *t = ctx;

	fprintf(t->f, "%s %c %.6f %c %llu %u\n", t->policy, ev, (double)now / 1e6,
		io->op < 4 ? ops[io->op] : '?', (unsigned long long)io->sector, io->nr_sectors);
}

static int have_gnuplot(void)
{
	return system("command -v gnuplot >/dev/null 2>&1") == 0;
}

static int write_plots(const struct elv_sim_report *rep, const char *dir)
{
	char path[1024];
	FILE *gp;
	unsigned i, k;
	int r;

	if (mkdir(dir, 0777) && errno != EEXIST) {
		fprintf(stderr, "elvsim: cannot create %s: %s\n", dir, strerror(errno));
		return -1;
	}
	/* Data files: one read-latency CDF per policy, and the queue-depth curves. */
	for (i = 0; i < rep->nr; i++) {
		const struct elv_sim_result *res = &rep->res[i].run;
		size_t n = res->nr_read_samples, j, step = n > 2000 ? n / 2000 : 1;
		FILE *f;

		snprintf(path, sizeof(path), "%s/%s-%s-cdf.dat", dir, rep->scenario, res->policy);
		f = fopen(path, "w");
		if (!f)
			return -1;
		for (j = 0; j < n; j += step)
			fprintf(f, "%.6g %.6g\n", res->read_samples_ms[j],
				(double)(j + 1) / (double)n);
		if (n)
			fprintf(f, "%.6g 1\n", res->read_samples_ms[n - 1]);
		fclose(f);
		if (rep->res[i].nr_curve) {
			snprintf(path, sizeof(path), "%s/%s-%s-qd.dat", dir, rep->scenario,
				 res->policy);
			f = fopen(path, "w");
			if (!f)
				return -1;
			for (k = 0; k < rep->res[i].nr_curve; k++)
				fprintf(f, "%u %.6g %.6g %.6g\n", k + 1,
					rep->res[i].curve_sptf[k].iops,
					rep->res[i].curve_sstf[k].iops,
					rep->res[i].curve_fcfs[k].iops);
			fclose(f);
		}
	}
	snprintf(path, sizeof(path), "%s/%s.gp", dir, rep->scenario);
	gp = fopen(path, "w");
	if (!gp)
		return -1;
	fprintf(gp, "set terminal svg size 800,500 dynamic\nset key bottom right\n"
		"set grid\ncd '%s'\n", dir);
	fprintf(gp, "set output '%s-read-cdf.svg'\nset title '%s on %s: read latency CDF'\n"
		"set xlabel 'read latency (ms)'\nset ylabel 'fraction'\nset logscale x\nplot ",
		rep->scenario, rep->scenario, rep->device);
	for (i = 0; i < rep->nr; i++)
		fprintf(gp, "%s'%s-%s-cdf.dat' using 1:2 with lines lw 2 title '%s'",
			i ? ", " : "", rep->scenario, rep->res[i].run.policy,
			rep->res[i].run.policy);
	fprintf(gp, "\nunset logscale x\n");
	if (rep->nr && rep->res[0].nr_curve) {
		fprintf(gp, "set output '%s-qd.svg'\nset title 'tcq-depth on %s: random reads'\n"
			"set xlabel 'commands outstanding at the drive'\nset ylabel 'ops/s'\n"
			"set key top left\nplot ", rep->scenario, rep->device);
		for (i = 0; i < rep->nr; i++)
			fprintf(gp, "'%s-%s-qd.dat' using 1:2 with linespoints title '%s, drive "
				"SPTF', ", rep->scenario, rep->res[i].run.policy,
				rep->res[i].run.policy);
		fprintf(gp, "'%s-%s-qd.dat' using 1:3 with linespoints title '%s, drive SSTF', "
			"'%s-%s-qd.dat' using 1:4 with linespoints title '%s, drive FCFS'\n",
			rep->scenario, rep->res[0].run.policy, rep->res[0].run.policy,
			rep->scenario, rep->res[0].run.policy, rep->res[0].run.policy);
	}
	fclose(gp);
	if (!have_gnuplot()) {
		fprintf(stderr, "elvsim: gnuplot is not installed: wrote the data and %s, but no "
			"SVG charts (install gnuplot and run: gnuplot %s)\n", path, path);
		return 0;
	}
	{
		char cmd[1200];

		snprintf(cmd, sizeof(cmd), "gnuplot '%s'", path);
		r = system(cmd);
	}
	if (r) {
		fprintf(stderr, "elvsim: gnuplot failed on %s\n", path);
		return -1;
	}
	fprintf(stderr, "elvsim: charts in %s\n", dir);
	return 0;
}

static int emit(const struct opts *o, const struct elv_sim_report *rep)
{
	FILE *f;

	if (!o->quiet && !(o->json && strcmp(o->json, "-") == 0) &&
	    !(o->csv && strcmp(o->csv, "-") == 0))
		elv_sim_report_table(stdout, rep);
	if (o->json) {
		f = open_out(o->json);
		if (!f)
			return -1;
		elv_sim_report_json(f, rep);
		close_out(f);
	}
	if (o->csv) {
		f = open_out(o->csv);
		if (!f)
			return -1;
		elv_sim_report_csv(f, rep);
		close_out(f);
	}
	if (o->plot && write_plots(rep, o->plot))
		return -1;
	return 0;
}

/* One line on stderr per cut run; 1 when there was any. */
static int report_cuts(const struct elv_sim_report *rep)
{
	char cut[256];
	unsigned i;
	int any = 0;

	for (i = 0; i < rep->nr; i++)
		if (elv_sim_result_cut(&rep->res[i].run, cut, sizeof(cut)) == 1) {
			fprintf(stderr, "elvsim: %s: %s\n", rep->scenario, cut);
			any = 1;
		}
	return any;
}

/* Write the reports, then say whether anything was cut: the exit status. */
/*
 * Run policy @k of a replay or job report; its makespan is the figure compared. A failed run
 * (or one whose result carries an error) leaves nothing behind in the report.
 */
static int run_makespan(struct elv_sim_config *c, struct elv_sim_report *rep, unsigned k)
{
	int r = elv_sim_run(c, &rep->res[k].run);

	if (!r && rep->res[k].run.error)
		r = rep->res[k].run.error;
	if (r) {
		elv_sim_result_free(&rep->res[k].run);
		return r;
	}
	rep->res[k].primary = rep->res[k].run.makespan_s;
	rep->nr++;
	return 0;
}

static int finish(const struct opts *o, const struct elv_sim_report *rep)
{
	if (emit(o, rep))
		return 1;
	return report_cuts(rep) ? EXIT_CUT : 0;
}

/* ---- commands ------------------------------------------------------------------------------ */

static int cmd_list(void)
{
	unsigned i, t;

	printf("scenarios:\n");
	for (i = 0; i < elv_sim_scenario_count(); i++)
		printf("  %-22s [%s] %s\n", elv_sim_scenario_name(i), elv_sim_scenario_device(i),
		       elv_sim_scenario_desc(i));
	printf("recorded traces (open loop; --closed-loop for per-process dependencies):\n");
	for (i = 0; trace_scn_at(i); i++)
		printf("  %-22s [%s] %s\n", trace_scn_at(i)->name, trace_scn_at(i)->device,
		       trace_scn_at(i)->desc);
	printf("device presets (or a parameter file, see docs/simulator.md):\n");
	for (i = 0; elv_sim_preset_at(i); i++) {
		struct elv_sim_dev_params p;
		struct elv_device_traits tr;

		elv_sim_preset(elv_sim_preset_at(i), &p);
		elv_sim_dev_traits(&p, &tr);
		printf("  %-22s %s; recommended policy: %s\n", elv_sim_preset_at(i),
		       elv_sim_preset_desc(i), elv_policy_name(elv_policy_recommend(&tr)));
	}
	for (i = 0; elv_policy_at(i); i++) {
		const struct elv_policy *p = elv_policy_at(i);
		unsigned nt;
		const struct elv_tunable *tt = elv_policy_tunables(p, &nt);

		/* One heading per group; each starts "policies:" for scripts that read the list. */
		if (i == 0 || is_classic(p) != is_classic(elv_policy_at(i - 1)))
			printf("policies: %s\n", is_classic(p) ? "classic algorithms (--policy classic)" :
			       "Linux elevators (--policy linux)");
		printf("  %-22s %s\n", elv_policy_name(p), elv_policy_description(p));
		for (t = 0; t < nt; t++)
			printf("    %-20s %lld %s (%lld..%lld) %s\n", tt[t].name,
			       (long long)tt[t].def, tt[t].unit, (long long)tt[t].min,
			       (long long)tt[t].max, tt[t].desc);
	}
	return 0;
}

static int run_scenario(const struct opts *o, unsigned si, struct elv_sim_report *rep,
			struct bar *b)
{
	struct elv_sim_scn_opts so;
	struct tracer tr = { NULL, NULL };
	unsigned k;
	int r = 0;

	if (o->trace && !(tr.f = open_out(o->trace)))
		return ELV_EINVAL;

	/* One policy at a time, so each gets only the tunables it has. */
	memset(rep, 0, sizeof(*rep));
	for (k = 0; k < o->npol && !r; k++) {
		struct elv_sim_report one;

		memset(&so, 0, sizeof(so));
		so.dev = o->have_dev ? &o->dev : NULL;
		so.seed = o->seed;
		so.scale = o->scale;
		so.nr_sets = sets_for(o, o->pol[k], so.sets);
		so.time_limit_ns = o->time_limit_ns;
		so.no_zone_stage = (uint8_t)o->no_zone_stage;
		so.nr_pct = o->nr_pct;
		memcpy(so.pct, o->pct, sizeof(so.pct));
		so.progress = bar_cb;
		so.progress_ctx = b;
		if (tr.f) {
			tr.policy = elv_policy_name(o->pol[k]);
			so.trace = trace_cb;
			so.trace_ctx = &tr;
		}
		r = elv_sim_scenario_run(si, &o->pol[k], 1, &so, &one);
		if (r) {
			elv_sim_report_free(&one);
			break;
		}
		if (!rep->res) {
			*rep = one;
			rep->res = calloc(o->npol, sizeof(*rep->res));
			if (!rep->res)
				return ELV_ENOMEM;
			rep->nr = 0;
		}
		rep->res[rep->nr++] = one.res[0];
		free(one.res);
	}
	close_out(tr.f);
	return r;
}

static int run_trace_scn(const struct trace_scn *ts, int argc, char **argv);

static int cmd_run(int argc, char **argv)
{
	struct opts o;
	struct elv_sim_report rep;
	struct bar b;
	int si, r;

	if (argc < 3) {
		usage(stderr);
		return 2;
	}
	si = elv_sim_scenario_find(argv[2]);
	if (si < 0 && trace_scn_find(argv[2]))
		return run_trace_scn(trace_scn_find(argv[2]), argc, argv);
	if (si < 0) {
		fprintf(stderr, "elvsim: no scenario '%s' (see elvsim list)\n", argv[2]);
		return 2;
	}
	memset(&o, 0, sizeof(o));
	if (parse_opts(&o, argc, argv, 3, elv_sim_scenario_device((unsigned)si)) ||
	    check_sets(&o))
		return 2;
	if (!elv_sim_scenario_fits((unsigned)si, &o.dev)) {
		fprintf(stderr, "elvsim: scenario %s does not fit device %s\n", argv[2],
			o.dev.name);
		return 2;
	}
	bar_init(&b, argv[2], o.quiet);
	r = run_scenario(&o, (unsigned)si, &rep, &b);
	bar_done(&b);
	if (r) {
		fprintf(stderr, "elvsim: %s failed: %s\n", argv[2], elv_strerror(r));
		elv_sim_report_free(&rep);
		return 1;
	}
	r = finish(&o, &rep);
	elv_sim_report_free(&rep);
	return r;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/*
 * The service time the trace recorded (issue to completion, ftrace) beside the simulated
 * mean (device busy time per dispatched request), on stderr so every report format stays
 * as it is. Nothing when the trace holds no service times.
 */
static void print_service(const struct elv_trace_rec *recs, size_t n,
			  const struct elv_sim_report *rep)
{
	uint64_t *v = malloc(n * sizeof(*v));
	double sum = 0;
	size_t i, k = 0;

	for (i = 0; v && i < n; i++)
		if (recs[i].service_ns)
			sum += (double)(v[k++] = recs[i].service_ns);
	if (k) {
		qsort(v, k, sizeof(*v), cmp_u64);
		fprintf(stderr, "service time per request, recorded in the trace (%zu requests): "
			"mean %.3f ms, p50 %.3f ms, p99 %.3f ms\n", k, sum / (double)k / 1e6,
			(double)v[k / 2] / 1e6, (double)v[k * 99 / 100] / 1e6);
		fprintf(stderr, "service time per request, simulated (busy / dispatched):");
		for (i = 0; i < rep->nr; i++)
			fprintf(stderr, " %s %.3f ms%s", rep->res[i].run.policy,
				rep->res[i].run.dispatched ? rep->res[i].run.busy_s * 1e3 /
				(double)rep->res[i].run.dispatched : 0.0, i + 1 < rep->nr ? "," : "");
		fprintf(stderr, "\n");
	}
	free(v);
}

/* Replay a trace file (plain, .xz or .gz) under every chosen policy; @p label names it. */
static int replay_file(const struct opts *opt, const char *path, enum elv_trace_format fmt,
		       const char *label)
{
	struct opts o = *opt;
	struct elv_trace_rec *recs = NULL;
	struct elv_sim_replay_rec *rr;
	struct elv_sim_report rep;
	struct elv_sim_config *c;
	struct tracer tr = { NULL, NULL };
	char err[ELV_TRACE_ERR_MAX];
	size_t n = 0, i;
	unsigned k;
	int r;

	r = trace_read_any(path, fmt, &recs, &n, err, sizeof(err));
	if (r) {
		fprintf(stderr, "elvsim: %s\n", err);
		return 1;
	}
	if (!n) {
		fprintf(stderr, "elvsim: %s holds no I/O to replay\n", path);
		elv_trace_free(recs);
		return 1;
	}
	rr = malloc(n * sizeof(*rr));
	c = calloc(1, sizeof(*c));
	memset(&rep, 0, sizeof(rep));
	rep.res = calloc(o.npol, sizeof(*rep.res));
	if (!rr || !c || !rep.res) {
		free(rr);
		free(c);
		free(rep.res);
		elv_trace_free(recs);
		return 1;
	}
	for (i = 0; i < n; i++) {
		rr[i].time_ns = recs[i].time_ns;
		rr[i].sector = recs[i].sector;
		rr[i].nr_sectors = recs[i].nr_sectors;
		rr[i].op = recs[i].op;
		rr[i].sync = recs[i].sync;
		rr[i].pad = 0;
		rr[i].pid = recs[i].pid;
	}
	rep.scenario = label;
	snprintf(rep.device, sizeof(rep.device), "%s", o.dev.name);
	rep.seed = o.seed;
	rep.primary_name = "makespan_s";
	rep.lower_is_better = 1;
	r = 0;
	if (o.trace && !(tr.f = open_out(o.trace)))
		r = ELV_EINVAL;
	for (k = 0; k < o.npol && !r; k++) {
		memset(c, 0, sizeof(*c));
		c->dev = o.dev;
		c->policy = o.pol[k];
		c->seed = o.seed;
		c->nr_sets = sets_for(&o, o.pol[k], c->sets);
		c->replay = rr;
		c->nr_replay = n;
		c->closed_loop = (uint8_t)o.closed_loop;
		c->time_limit_ns = o.time_limit_ns;
		c->no_zone_stage = (uint8_t)o.no_zone_stage;
		c->nr_pct = o.nr_pct;
		memcpy(c->pct, o.pct, sizeof(c->pct));
		if (tr.f) {
			tr.policy = elv_policy_name(o.pol[k]);
			c->trace = trace_cb;
			c->trace_ctx = &tr;
		}
		r = run_makespan(c, &rep, k);
	}
	close_out(tr.f);
	if (r) {
		fprintf(stderr, "elvsim: replay failed: %s\n", elv_strerror(r));
	} else {
		r = finish(&o, &rep);
		if (!o.quiet)
			print_service(recs, n, &rep);
	}
	elv_sim_report_free(&rep);
	elv_trace_free(recs);
	free(rr);
	free(c);
	return r < 0 ? 1 : r;
}

static int cmd_replay(int argc, char **argv)
{
	struct opts o;
	enum elv_trace_format fmt;

	if (argc < 3) {
		usage(stderr);
		return 2;
	}
	memset(&o, 0, sizeof(o));
	if (parse_opts(&o, argc, argv, 3, "ide2003") || check_sets(&o))
		return 2;
	if (!o.format || elv_trace_parse_format(o.format, &fmt)) {
		fprintf(stderr, "elvsim: replay needs --format blktrace|blkparse|msr|fio|ftrace\n");
		return 2;
	}
	return replay_file(&o, argv[2], fmt, "replay");
}

/* elvsim run on a recorded trace (traces/, see trace_scn.h). */
static int run_trace_scn(const struct trace_scn *ts, int argc, char **argv)
{
	struct opts o;
	char path[4096];

	memset(&o, 0, sizeof(o));
	if (parse_opts(&o, argc, argv, 3, ts->device) || check_sets(&o))
		return 2;
	if (trace_scn_path(ts, path, sizeof(path))) {
		fprintf(stderr, "elvsim: the trace directory path is too long\n");
		return 1;
	}
	return replay_file(&o, path, ELV_TRACE_FTRACE, ts->name);
}

/* A workload from a job file, under every chosen policy. */
static int cmd_job(int argc, char **argv)
{
	struct opts o;
	struct elv_sim_job *job;
	struct elv_sim_config *c;
	struct elv_sim_report rep;
	struct tracer tr = { NULL, NULL };
	char err[512];
	const char *dflt = "ide2003";
	unsigned k;
	int r;

	if (argc < 3) {
		usage(stderr);
		return 2;
	}
	job = calloc(1, sizeof(*job));
	c = calloc(1, sizeof(*c));
	memset(&rep, 0, sizeof(rep));
	if (!job || !c) {
		free(job);
		free(c);
		return 1;
	}
	r = elv_sim_job_load(argv[2], job, err, sizeof(err));
	if (r) {
		fprintf(stderr, "elvsim: %s\n", err);
		free(job);
		free(c);
		return r == ELV_EINVAL ? 2 : 1;
	}
	memset(&o, 0, sizeof(o));
	if (job->device[0])
		dflt = job->device;
	/* A device the job names goes through the same lookup as --device. */
	if (parse_opts(&o, argc, argv, 3, dflt) || check_sets(&o)) {
		free(job);
		free(c);
		return 2;
	}
	rep.res = calloc(o.npol, sizeof(*rep.res));
	if (!rep.res) {
		free(job);
		free(c);
		return 1;
	}
	rep.scenario = argv[2];
	snprintf(rep.device, sizeof(rep.device), "%s", o.dev.name);
	rep.seed = o.have_seed || !job->has_seed ? o.seed : job->seed;
	rep.primary_name = "makespan_s";
	rep.lower_is_better = 1;
	if (o.trace && !(tr.f = open_out(o.trace)))
		r = ELV_EINVAL;
	for (k = 0; k < o.npol && !r; k++) {
		memset(c, 0, sizeof(*c));
		c->dev = o.dev;
		c->policy = o.pol[k];
		c->nr_sets = sets_for(&o, o.pol[k], c->sets);
		c->time_limit_ns = o.time_limit_ns;
		c->no_zone_stage = (uint8_t)o.no_zone_stage;
		c->nr_pct = o.nr_pct;
		memcpy(c->pct, o.pct, sizeof(c->pct));
		r = elv_sim_job_apply(job, c);
		if (r == ELV_ERANGE) {
			fprintf(stderr, "elvsim: %s: stream '%s': its offset, span or size does "
				"not fit %s\n", argv[2], job->streams[c->nr_streams].name, o.dev.name);
			break;
		}
		c->seed = rep.seed;
		if (tr.f) {
			tr.policy = elv_policy_name(o.pol[k]);
			c->trace = trace_cb;
			c->trace_ctx = &tr;
		}
		if (!r)
			r = run_makespan(c, &rep, k);
		else
			elv_sim_result_free(&rep.res[k].run);
	}
	close_out(tr.f);
	if (r && r != ELV_ERANGE)
		fprintf(stderr, "elvsim: %s failed: %s\n", argv[2], elv_strerror(r));
	if (!r)
		r = finish(&o, &rep);
	else
		r = r == ELV_ERANGE ? 2 : 1; /* a job that does not fit the device is bad input */
	elv_sim_report_free(&rep);
	free(job);
	free(c);
	return r;
}

/* For every preset: the recommended policy's rank on every scenario that fits it. */
static int cmd_recommend(int argc, char **argv)
{
	struct opts o;
	FILE *jf = NULL;
	unsigned d, s, k, worst_fail = 0;
	int any_cut = 0;
	struct bar b;

	memset(&o, 0, sizeof(o));
	if (parse_opts(&o, argc, argv, 2, NULL))
		return 2;
	if (o.json && !(jf = open_out(o.json)))
		return 1;
	if (jf)
		fprintf(jf, "{\"seed\": %llu, \"devices\": [\n", (unsigned long long)o.seed);
	printf("%-10s %-22s %-13s %-13s %5s %10s %10s %s\n", "device", "scenario", "recommended",
	       "best", "rank", "rec", "best", "metric");
	for (d = 0; elv_sim_preset_at(d); d++) {
		struct elv_sim_dev_params p;
		struct elv_device_traits tr;
		const struct elv_policy *rec;
		int first = 1;

		elv_sim_preset(elv_sim_preset_at(d), &p);
		elv_sim_dev_traits(&p, &tr);
		rec = elv_policy_recommend(&tr);
		if (jf)
			fprintf(jf, "%s  {\"device\": \"%s\", \"recommended\": \"%s\", "
				"\"scenarios\": [",
				d ? ",\n" : "", p.name, elv_policy_name(rec));
		for (s = 0; s < elv_sim_scenario_count(); s++) {
			struct elv_sim_report rep;
			unsigned best = 0, ri = 0, rank = 1;
			double rv, bv, gap;
			int r;

			if (!elv_sim_scenario_fits(s, &p))
				continue;
			o.have_dev = 1;
			o.dev = p;
			bar_init(&b, elv_sim_scenario_name(s), o.quiet);
			r = run_scenario(&o, s, &rep, &b);
			bar_done(&b);
			if (r) {
				fprintf(stderr, "elvsim: %s on %s failed: %s\n",
					elv_sim_scenario_name(s), p.name, elv_strerror(r));
				elv_sim_report_free(&rep);
				continue;
			}
			if (report_cuts(&rep))
				any_cut = 1; /* ranked all the same, and the exit status says so */
			for (k = 0; k < rep.nr; k++) {
				double v = rep.res[k].primary, bvv = rep.res[best].primary;

				if (rep.lower_is_better ? v < bvv : v > bvv)
					best = k;
				if (o.pol[k] == rec)
					ri = k;
			}
			rv = rep.res[ri].primary;
			bv = rep.res[best].primary;
			for (k = 0; k < rep.nr; k++)
				if (rep.lower_is_better ? rep.res[k].primary < rv :
				    rep.res[k].primary > rv)
					rank++;
			gap = bv != 0 ? (rep.lower_is_better ? rv / bv - 1 : 1 - rv / bv) : 0;
			if (gap > 0.05)
				worst_fail++;
			printf("%-10s %-22s %-13s %-13s %2u/%-2u %10.4g %10.4g %s%s\n", p.name,
			       elv_sim_scenario_name(s), elv_policy_name(rec),
			       rep.res[best].run.policy, rank, rep.nr, rv, bv, rep.primary_name,
			       gap > 0.05 ? "  (more than 5% from the best)" : "");
			fflush(stdout);
			if (jf)
				fprintf(jf, "%s\n    {\"scenario\": \"%s\", \"metric\": \"%s\", "
					"\"rank\": %u, \"of\": %u, \"recommended_value\": %.6g, "
					"\"best\": \"%s\", \"best_value\": %.6g, \"gap\": %.6g}",
					first ? "" : ",", elv_sim_scenario_name(s),
					rep.primary_name, rank, rep.nr, rv,
					rep.res[best].run.policy,
					bv, gap);
			first = 0;
			elv_sim_report_free(&rep);
		}
		if (jf)
			fprintf(jf, "]}");
	}
	if (jf) {
		fprintf(jf, "\n]}\n");
		close_out(jf);
	}
	printf("%u scenario/device pairs where the recommendation is more than 5%% from the "
	       "best\n", worst_fail);
	return any_cut ? EXIT_CUT : 0;
}

int main(int argc, char **argv)
{
	int i;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	/* Help wins wherever it is asked for; the version only as the command. */
	for (i = 1; i < argc; i++)
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			usage(stdout);
			return 0;
		}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
		printf("elvsim %s\n", elv_version_string());
		return 0;
	}
	if (strcmp(argv[1], "list") == 0)
		return cmd_list();
	if (strcmp(argv[1], "run") == 0)
		return cmd_run(argc, argv);
	if (strcmp(argv[1], "replay") == 0)
		return cmd_replay(argc, argv);
	if (strcmp(argv[1], "job") == 0)
		return cmd_job(argc, argv);
	if (strcmp(argv[1], "recommend") == 0)
		return cmd_recommend(argc, argv);
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return 0;
	}
	fprintf(stderr, "elvsim: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
