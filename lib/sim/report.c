/*
 * Reports of a scenario across policies: the JSON contract scripts rely on, CSV rows, and a
 * terminal table with the published figures beside the simulated ones. Only simulated values
 * are printed, never addresses or wall-clock times, so equal seeds give equal bytes.
 */
#include <math.h>
#include <string.h>

#include "sim_internal.h"

/* A finite number, or 0: JSON has no NaN. */
static double fin(double x)
{
	return isfinite(x) ? x : 0;
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

/* A chosen percentile's name: p90, p99.9, p99.99 */
static void pct_name(char *buf, size_t len, double pct)
{
	snprintf(buf, len, "p%.10g", pct);
}

static void json_lat(FILE *f, const char *key, const struct elv_sim_lat *l,
		     const struct elv_sim_result *r)
{
	unsigned i;

	fprintf(f, "\"%s\": {\"n\": %llu, \"p50\": %.6g, \"p99\": %.6g, \"max\": %.6g, "
		"\"mean\": %.6g", key, (unsigned long long)l->n, fin(l->p50), fin(l->p99),
		fin(l->max), fin(l->mean));
	if (r->nr_pct) {
		fprintf(f, ", \"percentiles\": {");
		for (i = 0; i < r->nr_pct; i++) {
			char name[32];

			pct_name(name, sizeof(name), r->pct[i]);
			fprintf(f, "%s\"%s\": %.6g", i ? ", " : "", name, fin(l->pct[i]));
		}
		fputc('}', f);
	}
	fputc('}', f);
}

static void json_curve(FILE *f, const char *key, const struct elv_sim_qd_point *c, unsigned n)
{
	unsigned i;

	fprintf(f, ",\n      \"%s\": [", key);
	for (i = 0; i < n; i++)
		fprintf(f, "%s{\"qd\": %u, \"iops\": %.6g}", i ? ", " : "", c[i].qd,
			fin(c[i].iops));
	fputc(']', f);
}

static void json_sweep(FILE *f, const struct elv_sim_scn_result *sr)
{
	unsigned i;

	fprintf(f, ",\n      \"sweep\": [");
	for (i = 0; i < sr->nr_sweep; i++) {
		const struct elv_sim_rate_point *p = &sr->sweep[i];

		fprintf(f, "%s{\"rate\": %.6g, \"iops\": %.6g, \"mean_ms\": %.6g, \"scv\": %.6g, "
			"\"p99_ms\": %.6g, \"max_ms\": %.6g}", i ? ", " : "", fin(p->rate),
			fin(p->iops), fin(p->mean_ms), fin(p->scv), fin(p->p99_ms), fin(p->max_ms));
	}
	fputc(']', f);
}

/* qos: each client's settings, predicted and measured rate; the burst over time. */
static void json_qos(FILE *f, const struct elv_sim_scn_result *sr)
{
	unsigned i;

	fprintf(f, ",\n      \"qos_capacity_iops\": %.6g, \"qos\": [", fin(sr->qos_capacity));
	for (i = 0; i < sr->nr_qos; i++) {
		const struct elv_sim_qos_client *q = &sr->qos[i];

		fprintf(f, "%s{\"name\": ", i ? ", " : "");
		json_str(f, q->name);
		fprintf(f, ", \"reservation\": %.6g, \"weight\": %.6g, \"limit\": %.6g, "
			"\"predicted_iops\": %.6g, \"measured_iops\": %.6g}", fin(q->reservation),
			fin(q->weight), fin(q->limit), fin(q->predicted_iops), fin(q->measured_iops));
	}
	fprintf(f, "],\n      \"burst\": [");
	for (i = 0; i < sr->nr_burst; i++)
		fprintf(f, "%s{\"t_s\": %.6g, \"iops\": %.6g, \"cap_iops\": %.6g}", i ? ", " : "",
			fin(sr->burst[i].t_s), fin(sr->burst[i].iops), fin(sr->burst[i].cap));
	fputc(']', f);
}

static void table_qos(FILE *f, const struct elv_sim_report *rep)
{
	unsigned i, k;

	for (i = 0; i < rep->nr; i++) {
		const struct elv_sim_scn_result *sr = &rep->res[i];

		if (!sr->nr_qos)
			continue;
		fprintf(f, "  %s: mClock on %.0f requests/s (measured)\n", sr->run.policy,
			sr->qos_capacity);
		fprintf(f, "    %-10s %11s %7s %9s %11s %11s %7s\n", "client", "reservation",
			"weight", "limit", "predicted", "measured", "error");
		for (k = 0; k < sr->nr_qos; k++) {
			const struct elv_sim_qos_client *q = &sr->qos[k];
			double p = q->predicted_iops;

			fprintf(f, "    %-10s %11.0f %7.0f %9.0f %11.1f %11.1f %6.1f%%\n", q->name,
				q->reservation, q->weight, q->limit, p, q->measured_iops,
				p > 0 ? 100.0 * (q->measured_iops - p) / p : 0.0);
		}
		if (!sr->nr_burst)
			continue;
		fprintf(f, "    throttled client alone, requests/s per %.2f s (allowed on "
			"average):\n", sr->nr_burst > 1 ? sr->burst[1].t_s - sr->burst[0].t_s : 0);
		for (k = 0; k < sr->nr_burst; k++)
			fprintf(f, "    %6.2f s %9.1f (%.1f)\n", sr->burst[k].t_s, sr->burst[k].iops,
				sr->burst[k].cap);
	}
}

static double sorted_seek_expect(const struct elv_sim_report *rep, const struct elv_sim_result *r)
{
	(void)rep;
	return 960000.0 / (r->mean_queued + 1.0);
}

static void json_result(FILE *f, const struct elv_sim_report *rep,
			const struct elv_sim_scn_result *sr)
{
	const struct elv_sim_result *r = &sr->run;
	char cut[256];
	unsigned i;

	fprintf(f, "    {\"policy\": ");
	json_str(f, r->policy);
	fprintf(f, ", \"makespan_s\": %.6f, \"requests\": %llu, \"dispatched\": %llu,\n",
		fin(r->makespan_s), (unsigned long long)r->requests,
		(unsigned long long)r->dispatched);
	fprintf(f, "      \"mean_seek_sectors\": %.6g, \"mean_seek_ms\": %.6g, "
		"\"mean_queued\": %.6g,\n", fin(r->mean_seek_sectors), fin(r->mean_seek_ms),
		fin(r->mean_queued));
	fprintf(f, "      ");
	json_lat(f, "read_lat_ms", &r->read_lat, r);
	fprintf(f, ",\n      ");
	json_lat(f, "write_lat_ms", &r->write_lat, r);
	fprintf(f, ",\n      \"read_MBps\": %.6g, \"write_MBps\": %.6g, \"busy_s\": %.6g, "
		"\"device_idle_s\": %.6g, \"idle_s\": %.6g, \"idle_count\": %llu, "
		"\"expired\": %llu,\n", fin(r->read_mbps), fin(r->write_mbps), fin(r->busy_s),
		fin(r->makespan_s > r->busy_s ? r->makespan_s - r->busy_s : 0), fin(r->idle_s),
		(unsigned long long)r->idle_count, (unsigned long long)r->expired);
	fprintf(f, "      \"truncated\": %d, \"cut\": ", r->truncated);
	if (elv_sim_result_cut(r, cut, sizeof(cut)) == 1)
		json_str(f, cut);
	else
		fprintf(f, "null");
	fprintf(f, ", \"error\": %d, \"primary\": %.6g,\n", r->error, fin(sr->primary));
	fprintf(f, "      \"streams\": [");
	for (i = 0; i < r->nr_streams; i++) {
		const struct elv_sim_stream_result *s = &r->streams[i];

		fprintf(f, "%s\n        {\"name\": ", i ? "," : "");
		json_str(f, s->name);
		fprintf(f, ", \"done_s\": %.6f, \"MBps\": %.6g, \"requests\": %llu, ",
			fin(s->done_s), fin(s->mbps), (unsigned long long)s->requests);
		json_lat(f, "read_lat_ms", &s->read_lat, r);
		fprintf(f, ", ");
		json_lat(f, "write_lat_ms", &s->write_lat, r);
		fputc('}', f);
	}
	fprintf(f, "],\n      \"policy_stats\": {");
	for (i = 0; i < r->nr_pstats; i++) {
		fprintf(f, "%s", i ? ", " : "");
		json_str(f, r->pstat_name[i]);
		fprintf(f, ": %llu", (unsigned long long)r->pstat_value[i]);
	}
	fprintf(f, "},\n      \"flash\": {\"full_merges\": %llu, \"switch_merges\": %llu, "
		"\"partial_merges\": %llu, \"gc_blocks\": %llu, \"gc_copies\": %llu, "
		"\"erases\": %llu, \"full_merge_s\": %.6f, \"partial_merge_s\": %.6f, "
		"\"switch_merge_s\": %.6f},\n", (unsigned long long)r->dev.full_merges,
		(unsigned long long)r->dev.switch_merges,
		(unsigned long long)r->dev.partial_merges, (unsigned long long)r->dev.gc_blocks,
		(unsigned long long)r->dev.gc_copies, (unsigned long long)r->dev.erases,
		(double)r->dev.full_merge_ns / 1e9, (double)r->dev.partial_merge_ns / 1e9,
		(double)r->dev.switch_merge_ns / 1e9);
	fprintf(f, "      \"device\": {\"commands\": %llu, \"media_accesses\": %llu, "
		"\"cache_hits\": %llu, \"write_hits\": %llu, \"destage_s\": %.6g, "
		"\"busy_refusals\": %llu}",
		(unsigned long long)r->dev.commands, (unsigned long long)r->dev.media_accesses,
		(unsigned long long)r->dev.cache_hits, (unsigned long long)r->dev.write_hits,
		(double)r->dev.destage_ns / 1e9, (unsigned long long)r->dev.busy_refusals);
	fprintf(f, ",\n      \"zones\": {\"stage\": %s, \"wp_errors\": %llu, \"full_errors\": %llu, "
		"\"other_errors\": %llu, \"failed_requests\": %llu, \"resets\": %llu, "
		"\"finishes\": %llu, \"closes\": %llu}", r->zone_stage ? "true" : "false",
		(unsigned long long)r->dev.zone_wp_errors,
		(unsigned long long)r->dev.zone_full_errors,
		(unsigned long long)r->dev.zone_other_errors, (unsigned long long)r->failed,
		(unsigned long long)r->dev.zone_resets, (unsigned long long)r->dev.zone_finishes,
		(unsigned long long)r->dev.zone_closes);
	if (strcmp(rep->scenario, "seek-sort") == 0)
		fprintf(f, ",\n      \"expected_sorted_seek_sectors\": %.6g",
			fin(sorted_seek_expect(rep, r)));
	if (sr->nr_curve) {
		json_curve(f, "curve", sr->curve, sr->nr_curve);
		json_curve(f, "curve_fcfs", sr->curve_fcfs, sr->nr_curve);
		json_curve(f, "curve_sstf", sr->curve_sstf, sr->nr_curve);
		json_curve(f, "curve_sptf", sr->curve_sptf, sr->nr_curve);
		json_curve(f, "curve_procs", sr->curve_procs, sr->nr_curve);
	}
	if (sr->nr_sweep)
		json_sweep(f, sr);
	if (sr->reference > 0)
		fprintf(f, ",\n      \"reference\": %.6g", fin(sr->reference));
	if (sr->nr_qos)
		json_qos(f, sr);
	fprintf(f, "}");
}

void elv_sim_report_json(FILE *f, const struct elv_sim_report *rep)
{
	const struct elv_sim_published *pub;
	unsigned i, np = 0;
	int si = elv_sim_scenario_find(rep->scenario);

	fprintf(f, "{\"scenario\": ");
	json_str(f, rep->scenario);
	fprintf(f, ", \"device\": ");
	json_str(f, rep->device);
	fprintf(f, ", \"seed\": %llu,\n  \"primary\": ", (unsigned long long)rep->seed);
	json_str(f, rep->primary_name ? rep->primary_name : "makespan_s");
	fprintf(f, ", \"lower_is_better\": %s", rep->lower_is_better ? "true" : "false");
	if (rep->expect_qd1_iops > 0)
		fprintf(f, ", \"sheet_qd1_iops\": %.6g", rep->expect_qd1_iops);
	fprintf(f, ",\n  \"published\": [");
	pub = si >= 0 ? elv_sim_scenario_published((unsigned)si, &np) : NULL;
	for (i = 0; i < np; i++) {
		fprintf(f, "%s{\"what\": ", i ? ", " : "");
		json_str(f, pub[i].what);
		fprintf(f, ", \"value\": %.6g, \"unit\": ", pub[i].value);
		json_str(f, pub[i].unit);
		fprintf(f, ", \"source\": ");
		json_str(f, pub[i].source);
		fputc('}', f);
	}
	fprintf(f, "],\n  \"results\": [\n");
	for (i = 0; i < rep->nr; i++) {
		json_result(f, rep, &rep->res[i]);
		fprintf(f, "%s\n", i + 1 < rep->nr ? "," : "");
	}
	fprintf(f, "  ]}\n");
}

/* The run a row belongs to: its cut message and its chosen percentiles. */
struct csv_ctx {
	const char *cut;
	const struct elv_sim_result *r;
};

static void csv_row(FILE *f, const struct elv_sim_report *rep, const char *policy,
		    const char *stream, double done, uint64_t requests, double seek, double seek_ms,
		    const struct elv_sim_lat *rl, const struct elv_sim_lat *wl, double rmb,
		    double wmb, double idle, double primary, const struct elv_sim_dev_stats *ds,
		    const struct csv_ctx *cx)
{
	unsigned i;

	fprintf(f, "%s,%s,%llu,%s,%s,%.6f,%llu,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,"
		"%.6g,%.6g,%llu,%llu,%llu,%.6g,", rep->scenario, rep->device,
		(unsigned long long)rep->seed, policy, stream, fin(done),
		(unsigned long long)requests, fin(seek), fin(seek_ms), fin(rl->p50),
		fin(rl->p99), fin(rl->max), fin(wl->p50), fin(wl->p99), fin(wl->max), fin(rmb),
		fin(wmb), fin(idle), ds ? (unsigned long long)ds->full_merges : 0ULL,
		ds ? (unsigned long long)ds->switch_merges : 0ULL,
		ds ? (unsigned long long)ds->zone_wp_errors : 0ULL, fin(primary));
	/* The cut message never holds a comma or a quote; quoted all the same. */
	if (cx->cut && *cx->cut)
		fprintf(f, "\"%s\"", cx->cut);
	for (i = 0; i < cx->r->nr_pct; i++)
		fprintf(f, ",%.6g,%.6g", fin(rl->pct[i]), fin(wl->pct[i]));
	fputc('\n', f);
}

void elv_sim_report_csv(FILE *f, const struct elv_sim_report *rep)
{
	static const struct elv_sim_lat zero;
	unsigned i, k;
	char cut[256];

	fprintf(f, "scenario,device,seed,policy,stream,time_s,requests,mean_seek_sectors,"
		"mean_seek_ms,read_p50_ms,read_p99_ms,read_max_ms,write_p50_ms,write_p99_ms,"
		"write_max_ms,read_MBps,write_MBps,idle_s,full_merges,switch_merges,wp_errors,primary,"
		"cut");
	for (i = 0; rep->nr && i < rep->res[0].run.nr_pct; i++) {
		char name[32];

		pct_name(name, sizeof(name), rep->res[0].run.pct[i]);
		fprintf(f, ",read_%s_ms,write_%s_ms", name, name);
	}
	fputc('\n', f);
	for (i = 0; i < rep->nr; i++) {
		const struct elv_sim_scn_result *sr = &rep->res[i];
		const struct elv_sim_result *r = &sr->run;
		struct csv_ctx cx = { cut, r }, none = { NULL, r };

		elv_sim_result_cut(r, cut, sizeof(cut));
		csv_row(f, rep, r->policy, "*", r->makespan_s, r->requests, r->mean_seek_sectors,
			r->mean_seek_ms, &r->read_lat, &r->write_lat, r->read_mbps, r->write_mbps,
			r->idle_s, sr->primary, &r->dev, &cx);
		for (k = 0; k < r->nr_streams; k++) {
			const struct elv_sim_stream_result *s = &r->streams[k];

			csv_row(f, rep, r->policy, s->name, s->done_s, s->requests, 0, 0,
				&s->read_lat, &s->write_lat, s->mbps, 0, 0, 0, NULL, &none);
		}
		for (k = 0; k < sr->nr_curve; k++) {
			char name[16];

			snprintf(name, sizeof(name), "qd%u", sr->curve[k].qd);
			csv_row(f, rep, r->policy, name, 0, 0, 0, 0, &zero, &zero, 0, 0, 0,
				sr->curve[k].iops, NULL, &none);
		}
	}
}

static void table_pct_row(FILE *f, const struct elv_sim_result *r, const char *pol,
			  const char *stream, const char *op, const struct elv_sim_lat *l)
{
	unsigned i;

	if (!l->n)
		return;
	fprintf(f, "    %-13s %-10s %-5s %8llu", pol, stream, op, (unsigned long long)l->n);
	for (i = 0; i < r->nr_pct; i++)
		fprintf(f, " %9.2f", l->pct[i]);
	fputc('\n', f);
}

/* The chosen percentiles, for the whole run and per stream, reads and writes apart. */
static void table_pct(FILE *f, const struct elv_sim_report *rep)
{
	const struct elv_sim_result *r0 = &rep->res[0].run;
	unsigned i, k;

	fprintf(f, "  latency percentiles (ms, nearest rank):\n    %-13s %-10s %-5s %8s", "policy",
		"stream", "op", "n");
	for (i = 0; i < r0->nr_pct; i++) {
		char name[32];

		pct_name(name, sizeof(name), r0->pct[i]);
		fprintf(f, " %9s", name);
	}
	fputc('\n', f);
	for (i = 0; i < rep->nr; i++) {
		const struct elv_sim_result *r = &rep->res[i].run;

		table_pct_row(f, r, r->policy, "*", "read", &r->read_lat);
		table_pct_row(f, r, r->policy, "*", "write", &r->write_lat);
		for (k = 0; r->nr_streams > 1 && k < r->nr_streams && k < 8; k++) {
			table_pct_row(f, r, "", r->streams[k].name, "read",
				      &r->streams[k].read_lat);
			table_pct_row(f, r, "", r->streams[k].name, "write",
				      &r->streams[k].write_lat);
		}
	}
}

static void table_pub(FILE *f, const struct elv_sim_report *rep)
{
	const struct elv_sim_published *pub;
	unsigned i, np = 0;
	int si = elv_sim_scenario_find(rep->scenario);

	pub = si >= 0 ? elv_sim_scenario_published((unsigned)si, &np) : NULL;
	for (i = 0; i < np; i++)
		fprintf(f, "  published: %s = %g %s (%s)\n", pub[i].what, pub[i].value,
			pub[i].unit, pub[i].source);
}

static void table_tcq(FILE *f, const struct elv_sim_report *rep)
{
	unsigned i, k;

	fprintf(f, "  ops/s by commands outstanding at the drive (drive order SPTF unless "
		"named); 'procs': the same\n  reads from QD processes, one read each\n  %4s",
		"QD");
	for (i = 0; i < rep->nr; i++)
		fprintf(f, " %12s", rep->res[i].run.policy);
	for (i = 0; i < rep->nr; i++)
		fprintf(f, " %12.12s", rep->res[i].run.policy);
	fprintf(f, " %12s %12s\n  %4s", "fcfs(1st)", "sstf(1st)", "");
	for (i = 0; i < rep->nr; i++)
		fprintf(f, " %12s", "");
	for (i = 0; i < rep->nr; i++)
		fprintf(f, " %12s", "procs");
	fprintf(f, "\n");
	for (k = 0; k < rep->res[0].nr_curve; k++) {
		if (!(k < 8 || k % 4 == 3 || k + 1 == rep->res[0].nr_curve))
			continue;
		fprintf(f, "  %4u", k + 1);
		for (i = 0; i < rep->nr; i++)
			fprintf(f, " %12.1f", rep->res[i].curve[k].iops);
		for (i = 0; i < rep->nr; i++)
			fprintf(f, " %12.1f", rep->res[i].curve_procs[k].iops);
		fprintf(f, " %12.1f %12.1f\n", rep->res[0].curve_fcfs[k].iops,
			rep->res[0].curve_sstf[k].iops);
	}
	if (rep->expect_qd1_iops > 0)
		fprintf(f, "  parameter set predicts %.1f ops/s at QD 1\n", rep->expect_qd1_iops);
}

/* The classic sweep: one row per policy and rate. */
static void table_sweep(FILE *f, const struct elv_sim_report *rep)
{
	unsigned i, k;

	fprintf(f, "  open-loop random reads, response time (ms) by arrival rate; scv = "
		"variance / mean^2\n  %-13s %7s %8s %9s %7s %9s %9s\n", "policy", "rate/s",
		"done/s", "mean", "scv", "p99", "max");
	for (i = 0; i < rep->nr; i++)
		for (k = 0; k < rep->res[i].nr_sweep; k++) {
			const struct elv_sim_rate_point *p = &rep->res[i].sweep[k];

			fprintf(f, "  %-13s %7.0f %8.1f %9.1f %7.3f %9.1f %9.1f\n",
				k ? "" : rep->res[i].run.policy, p->rate, p->iops, p->mean_ms,
				p->scv, p->p99_ms, p->max_ms);
		}
}

/* "p50 x p99 y" of a stream's latency, or dashes when it had no such request. */
static void lat_cell(char *buf, size_t len, const struct elv_sim_lat *l)
{
	if (l->n)
		snprintf(buf, len, "p50 %8.1f p99 %8.1f", l->p50, l->p99);
	else
		snprintf(buf, len, "p50 %8s p99 %8s", "-", "-");
}

void elv_sim_report_table(FILE *f, const struct elv_sim_report *rep)
{
	unsigned i, k;

	fprintf(f, "%s on %s, seed %llu\n", rep->scenario, rep->device,
		(unsigned long long)rep->seed);
	fprintf(f, "  %-13s %9s %8s %10s %7s %8s %8s %8s %8s %8s %8s %7s\n", "policy", "time_s",
		"reqs", "seek_sect", "seek_ms", "rd_p50", "rd_p99", "rd_max", "rd_MB/s", "wr_MB/s",
		"idle_s", "merges");
	for (i = 0; i < rep->nr; i++) {
		const struct elv_sim_result *r = &rep->res[i].run;
		char merges[32];

		snprintf(merges, sizeof(merges), "%llu/%llu",
			 (unsigned long long)r->dev.full_merges,
			 (unsigned long long)r->dev.switch_merges);
		fprintf(f, "  %-13s %9.2f %8llu %10.0f %7.2f %8.1f %8.1f %8.1f %8.2f %8.2f %8.2f "
			"%7s%s\n", r->policy, r->makespan_s, (unsigned long long)r->requests,
			r->mean_seek_sectors, r->mean_seek_ms, r->read_lat.p50, r->read_lat.p99,
			r->read_lat.max, r->read_mbps, r->write_mbps, r->idle_s, merges,
			r->truncated ? "  (cut)" : "");
	}
	for (i = 0; i < rep->nr; i++) {
		char cut[256];

		if (elv_sim_result_cut(&rep->res[i].run, cut, sizeof(cut)) == 1)
			fprintf(f, "  CUT: %s\n", cut);
	}
	fprintf(f, "  per stream (latency in ms):\n");
	for (i = 0; i < rep->nr; i++) {
		const struct elv_sim_result *r = &rep->res[i].run;

		for (k = 0; k < r->nr_streams && k < 4; k++) {
			const struct elv_sim_stream_result *s = &r->streams[k];

			char rd[40], wr[40];

			lat_cell(rd, sizeof(rd), &s->read_lat);
			lat_cell(wr, sizeof(wr), &s->write_lat);
			fprintf(f, "    %-13s %-10s done %9.2f s %8.2f MB/s  read %s  write %s\n",
				k ? "" : r->policy, s->name, s->done_s, s->mbps, rd, wr);
		}
		if (r->nr_streams > 4)
			fprintf(f, "    %-13s (%u more streams)\n", "", r->nr_streams - 4);
		for (k = 0; k < r->nr_pstats; k++)
			if (r->pstat_value[k])
				fprintf(f, "    %-13s %s = %llu\n", "", r->pstat_name[k],
					(unsigned long long)r->pstat_value[k]);
	}
	for (i = 0; i < rep->nr; i++) {
		const struct elv_sim_result *r = &rep->res[i].run;
		const struct elv_sim_dev_stats *ds = &r->dev;

		if (r->zone_stage || ds->zone_wp_errors || ds->zone_full_errors ||
		    ds->zone_other_errors || ds->zone_resets || ds->zone_finishes)
			fprintf(f, "  %-13s zones: %s stage, %llu write-pointer errors, %llu full, "
				"%llu other; %llu requests failed\n", r->policy,
				r->zone_stage ? "with the" : "without the",
				(unsigned long long)ds->zone_wp_errors,
				(unsigned long long)ds->zone_full_errors,
				(unsigned long long)ds->zone_other_errors,
				(unsigned long long)r->failed);
	}
	if (strcmp(rep->scenario, "seek-sort") == 0)
		for (i = 0; i < rep->nr; i++)
			fprintf(f, "  %-13s held %.2f requests on average: "
				"N/(Q+1) = %.0f sectors\n",
				rep->res[i].run.policy, rep->res[i].run.mean_queued,
				sorted_seek_expect(rep, &rep->res[i].run));
	if (rep->nr && rep->res[0].run.nr_pct)
		table_pct(f, rep);
	if (rep->nr && rep->res[0].nr_curve)
		table_tcq(f, rep);
	if (rep->nr && rep->res[0].nr_sweep)
		table_sweep(f, rep);
	for (i = 0; i < rep->nr; i++)
		if (rep->res[i].reference > 0)
			fprintf(f, "  %-13s %s %.3f under load, %.3f with the background left out "
				"(%.1fx)\n", rep->res[i].run.policy, rep->primary_name,
				rep->res[i].primary, rep->res[i].reference,
				rep->res[i].primary / rep->res[i].reference);
	table_qos(f, rep);
	table_pub(f, rep);
}
