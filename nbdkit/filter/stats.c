/*
 * Latency histograms and the stats=FILE report of the elevator filter.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <nbdkit-filter.h>

#include "elvf.h"

/* Values below 8 ns have a bucket each; above, 8 buckets per power of two. */
static unsigned bucket_of(uint64_t v)
{
	unsigned msb;

	if (v < 8)
		return (unsigned)v;
	msb = 63u - (unsigned)__builtin_clzll(v);
	return 8u + (msb - 3u) * 8u + (unsigned)((v >> (msb - 3u)) & 7u);
}

static uint64_t bucket_top(unsigned b)
{
	unsigned msb, sub;

	if (b < 8)
		return b;
	msb = (b - 8u) / 8u + 3u;
	sub = (b - 8u) % 8u;
	return ((8u + (uint64_t)sub) << (msb - 3u)) + ((uint64_t)1 << (msb - 3u)) - 1u;
}

void elvf_hist_add(struct elvf_hist *h, uint64_t ns)
{
	h->bucket[bucket_of(ns)]++;
	h->count++;
	if (ns > h->max)
		h->max = ns;
}

uint64_t elvf_hist_quantile(const struct elvf_hist *h, double q)
{
	uint64_t want, seen = 0, top;
	unsigned b;

	if (!h->count)
		return 0;
	want = (uint64_t)(q * (double)h->count + 0.999999);
	if (want < 1)
		want = 1;
	for (b = 0; b < ELVF_HIST_BUCKETS; b++) {
		seen += h->bucket[b];
		if (seen >= want) {
			top = bucket_top(b);
			return top < h->max ? top : h->max;
		}
	}
	return h->max;
}

void elvf_counts_fold(struct elvf_counts *to, const struct elvf_counts *from)
{
	unsigned i;

	for (i = 0; i < ELVF_NR_KINDS; i++)
		to->ops[i] += from->ops[i];
	to->bytes[0] += from->bytes[0];
	to->bytes[1] += from->bytes[1];
	to->merged += from->merged;
	to->cancelled += from->cancelled;
	to->errors += from->errors;
	for (i = 0; i < ELVF_HIST_BUCKETS; i++)
		to->lat.bucket[i] += from->lat.bucket[i];
	to->lat.count += from->lat.count;
	if (from->lat.max > to->lat.max)
		to->lat.max = from->lat.max;
}

/* A JSON string: export names come from clients and may hold anything. */
static void put_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20 || ch >= 0x7f)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

static void put_counts(FILE *f, const struct elvf_counts *c)
{
	fprintf(f, "\"reads\": %" PRIu64 ", \"writes\": %" PRIu64 ", \"trims\": %" PRIu64
		", \"zeroes\": %" PRIu64 ", \"flushes\": %" PRIu64 ", \"read_bytes\": %" PRIu64
		", \"write_bytes\": %" PRIu64 ", \"merged\": %" PRIu64 ", \"cancelled\": %" PRIu64
		", \"errors\": %" PRIu64 ", \"latency_us\": {\"count\": %" PRIu64
		", \"p50\": %.1f, \"p99\": %.1f, \"max\": %.1f}",
		c->ops[ELVF_READ], c->ops[ELVF_WRITE], c->ops[ELVF_TRIM], c->ops[ELVF_ZERO],
		c->ops[ELVF_FLUSH], c->bytes[0], c->bytes[1], c->merged, c->cancelled, c->errors,
		c->lat.count, (double)elvf_hist_quantile(&c->lat, 0.50) / 1e3,
		(double)elvf_hist_quantile(&c->lat, 0.99) / 1e3, (double)c->lat.max / 1e3);
}

static void put_queue(FILE *f)
{
	struct elv_stats st;
	const char *name;
	uint64_t v;
	unsigned i;

	elv_stats(elvf.q, &st);
	fprintf(f, "  \"queue\": {\"added\": %" PRIu64 ", \"merged_back\": %" PRIu64
		", \"merged_front\": %" PRIu64 ", \"merged_req\": %" PRIu64
		", \"dispatched_read\": %" PRIu64 ", \"dispatched_write\": %" PRIu64
		", \"completed\": %" PRIu64 ", \"expired\": %" PRIu64 ", \"requeued\": %" PRIu64
		", \"cancelled\": %" PRIu64 ", \"idle_ns\": %" PRIu64 ", \"idle_count\": %" PRIu64
		", \"queued\": %u, \"in_flight\": %u,\n    \"policy_stats\": {",
		st.added, st.merged_back, st.merged_front, st.merged_req, st.dispatched[0],
		st.dispatched[1], st.completed, st.expired, st.requeued, st.cancelled, st.idle_ns,
		st.idle_count, st.queued, st.in_flight);
	for (i = 0; elv_policy_stat(elvf.q, i, &name, &v) == 0; i++)
		fprintf(f, "%s\"%s\": %" PRIu64, i ? ", " : "", name, v);
	fprintf(f, "}},\n");
}

/* A connection's QoS: the settings in force, what the stage did, what it holds now. */
static void put_conn_qos(FILE *f, const struct elvf_conn *c)
{
	struct elv_qos_client_stats st = c->qos.lib;
	unsigned k;
	int first = 1;

	if (c->has_qc)
		elv_qos_client_stats(elvf.q, &c->qc, &st);
	fprintf(f, ", \"qos\": {\"settings\": {");
	for (k = 0; k < ELVF_QOS_NR_KEYS; k++) {
		if (!c->qos.eff.v[k])
			continue;
		fprintf(f, "%s\"%s\": %" PRIu64, first ? "" : ", ", elvf_qos_key_name(k),
			c->qos.eff.v[k]);
		first = 0;
	}
	fprintf(f, "}, \"held\": %" PRIu64 ", \"held_ms\": %.3f, \"admitted\": %" PRIu64
		", \"throttled\": %" PRIu64 ", \"reservation_phase\": %" PRIu64
		", \"weight_phase\": %" PRIu64 ", \"over_limit\": %" PRIu64
		", \"held_now\": %u}", c->qos.held, (double)c->qos.held_ns / 1e6, st.admitted,
		st.throttled, st.reservation, st.weight, st.over_limit,
		st.held_throttle + st.held_mclock);
}

static void put_report(FILE *f)
{
	static const char *const modes[] = { "connection", "none" };
	const struct elvf_conn *c;
	struct elvf_counts all;
	int first = 1;

	memset(&all, 0, sizeof(all));
	fprintf(f, "{\n  \"policy\": \"%s\", \"depth\": %u, \"stream\": \"%s\", "
		"\"policy_switches\": %" PRIu64 ", \"control_applied\": %" PRIu64
		", \"control_rejected\": %" PRIu64 ", \"qos\": %s,\n",
		elv_policy_name(elv_queue_policy(elvf.q)), elvf.prm.depth,
		modes[elvf.prm.stream_mode], elvf.switches, elvf.control_applied,
		elvf.control_rejected, elvf.qos_on ? "true" : "false");
	put_queue(f);
	fprintf(f, "  \"connections\": [");
	for (c = elvf.conns; c; c = c->next) {
		fprintf(f, "%s\n    {\"id\": %" PRIu64 ", \"export\": ", first ? "" : ",", c->id);
		put_string(f, c->export ? c->export : "");
		fprintf(f, ", ");
		put_counts(f, &c->counts);
		if (elvf.qos_on)
			put_conn_qos(f, c);
		fprintf(f, "}");
		elvf_counts_fold(&all, &c->counts);
		first = 0;
	}
	elvf_counts_fold(&all, &elvf.earlier);
	fprintf(f, "\n  ],\n  \"earlier_connections\": %" PRIu64 ",\n  \"earlier\": {",
		elvf.nr_earlier);
	put_counts(f, &elvf.earlier);
	fprintf(f, "},\n  \"all\": {");
	put_counts(f, &all);
	fprintf(f, "}\n}\n");
}

int elvf_stats_write(void)
{
	const char *path = elvf.prm.stats_path;
	size_t n = strlen(path) + 5;
	char *tmp = malloc(n);
	FILE *f;
	int bad;

	if (!tmp) {
		nbdkit_error("stats=%s: out of memory", path);
		return -1;
	}
	snprintf(tmp, n, "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f) {
		nbdkit_error("stats=%s: %s", path, strerror(errno));
		free(tmp);
		return -1;
	}
	pthread_mutex_lock(&elvf.lock);
	put_report(f);
	pthread_mutex_unlock(&elvf.lock);
	bad = ferror(f);
	bad |= fclose(f);
	if (bad || rename(tmp, path) < 0) {
		nbdkit_error("stats=%s: cannot write it", path);
		remove(tmp);
		free(tmp);
		return -1;
	}
	free(tmp);
	return 0;
}
