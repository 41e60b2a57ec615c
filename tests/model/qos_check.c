/*
 * Reservations under load: a queue with the QoS stage in front of the policy under test, four
 * clients that always have requests waiting, and a device that holds a few commands and takes
 * a fixed time (with some jitter) for each. Drawn from the seed: the device, the clients'
 * reservations, weights and limit, the clock's starting point. mClock must give each reserved
 * client its reservation and the limited one no more than its limit, whatever the policy
 * does with what the stage lets through; every request must come back at the end. Public
 * API only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elevator/policy.h" /* elv_time_after() */
#include "elevator/qos.h"
#include "qos_check.h"

#define QC_QUEUED 12u            /* requests each client keeps waiting or in flight */
#define QC_RQS (QOS_CHECK_CLIENTS * QC_QUEUED)
#define QC_WARM_NS 500000000ull  /* measured from here: tags and queues settle first */
#define QC_SPAN_NS 4000000000ull /* simulated time measured */
#define QC_TOL 0.02              /* a reservation may fall short by 2% (and two requests) */

struct qc_rq {
	struct elv_request rq;
	unsigned client;
	int in_flight;
	uint64_t done; /* completion time on the device, relative to the start */
};

struct qc {
	struct elv_queue *q;
	struct elv_qos qos;
	struct elv_stream st[QOS_CHECK_CLIENTS];
	struct elv_qos_client qc[QOS_CHECK_CLIENTS];
	struct qc_rq rq[QC_RQS];
	uint64_t x;      /* generator */
	uint64_t start;  /* host clock at time 0 */
	uint64_t sector;
	unsigned drained;
};

static uint64_t qc_next(uint64_t *x)
{
	uint64_t z = (*x += 0x9E3779B97F4A7C15ull);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static double qc_unit(uint64_t *x)
{
	return (double)(qc_next(x) >> 11) / 9007199254740992.0;
}

static void qc_drop(void *arg, struct elv_request *rq)
{
	struct qc *c = arg;

	(void)rq;
	c->drained++;
}

/* Give @r to its client's stream again: a fresh random read. */
static int qc_add(struct qc *c, struct qc_rq *r, uint64_t now)
{
	elv_request_init(&r->rq);
	c->sector = (c->sector + 1 + (qc_next(&c->x) % 100000u)) % 50000000u;
	r->rq.sector = c->sector * 8;
	r->rq.nr_sectors = 8;
	r->rq.op = ELV_OP_READ;
	r->rq.flags = ELV_RQ_SYNC;
	r->rq.stream = &c->st[r->client];
	r->in_flight = 0;
	return elv_add(c->q, &r->rq, c->start + now);
}

static int qc_fail(struct qos_check_result *res, const char *fmt, double a, double b)
{
	snprintf(res->err, sizeof(res->err), fmt, a, b);
	return -1;
}

/* The tunables with which policies idle on purpose. */
static const char *const qc_idle[] = { "antic_expire", "slice_idle", "group_idle" };

static int qc_setup(struct qc *c, const struct elv_policy *p, unsigned depth,
		    struct qos_check_result *res)
{
	struct elv_config cfg;
	struct elv_mclock_settings m;
	unsigned i;
	int64_t v;
	int r;

	memset(&cfg, 0, sizeof(cfg));
	cfg.dev.rotational = (uint8_t)(qc_next(&c->x) % 2u);
	cfg.dev.queue_depth = (uint16_t)depth;
	cfg.no_merges = 1; /* one completion per request: the counts are the service */
	r = elv_queue_create(&c->q, p, &cfg);
	if (r)
		return r;
	/* No idling: a policy that waits for the stream it served last, while mClock holds
	 * that stream's next request, leaves the device's capacity unused (docs/reliability.md). */
	for (i = 0; i < sizeof(qc_idle) / sizeof(qc_idle[0]); i++)
		if (elv_tunable_get(c->q, qc_idle[i], &v) == 0 &&
		    (r = elv_tunable_set(c->q, qc_idle[i], 0)) != 0)
			return r;
	r = elv_qos_attach(c->q, &c->qos, NULL, c->start);
	for (i = 0; !r && i < QOS_CHECK_CLIENTS; i++) {
		c->st[i].ioprio = 0;
		r = elv_stream_init(c->q, &c->st[i], c->start);
		if (!r)
			r = elv_qos_stream_attach(c->q, &c->st[i], &c->qc[i], c->start);
		if (r)
			break;
		memset(&m, 0, sizeof(m));
		m.reservation = (uint64_t)res->reservation[i];
		m.limit = (uint64_t)res->limit[i];
		/* The reserved client weighs little: without its reservation it would get
		 * about 1/150 of the device. */
		m.weight = i == 0 ? 1u : (uint32_t)(20u + qc_next(&c->x) % 181u);
		r = elv_qos_set_mclock(c->q, &c->qc[i], &m, c->start);
	}
	return r;
}

int qos_check_run(const struct elv_policy *p, uint64_t seed, struct qos_check_result *res)
{
	struct qc *c = calloc(1, sizeof(*c));
	uint64_t now = 0, svc, got[QOS_CHECK_CLIENTS] = { 0 };
	unsigned depth, i, inflight = 0, ended;
	struct elv_request *out;
	int r, ret = -1, drained;

	memset(res, 0, sizeof(*res));
	if (!c)
		return qc_fail(res, "no memory (%g %g)", 0, 0);
	c->x = seed * 0x2545F4914F6CDD1Dull + 17;
	/* The clock starts anywhere, near its wrap too. */
	c->start = qc_next(&c->x) % 2u ? qc_next(&c->x) : UINT64_MAX - qc_next(&c->x) % 2000000000u;
	depth = 1u + (unsigned)(qc_next(&c->x) % 4u);
	svc = 250000u + qc_next(&c->x) % 1750000u; /* 0.25 to 2 ms a command */
	res->capacity = (double)depth * 1e9 / (double)svc;
	res->reservation[0] = (double)(uint64_t)(res->capacity * (0.15 + 0.20 * qc_unit(&c->x)));
	res->reservation[1] = (double)(uint64_t)(res->capacity * 0.10 * qc_unit(&c->x));
	res->limit[2] = (double)(uint64_t)(res->capacity * (0.05 + 0.15 * qc_unit(&c->x))) + 1;
	r = qc_setup(c, p, depth, res);
	if (r) {
		snprintf(res->err, sizeof(res->err), "setting up the queue and its QoS failed: %d", r);
		goto out;
	}
	for (i = 0; i < QC_RQS; i++) {
		c->rq[i].client = i % QOS_CHECK_CLIENTS;
		if ((r = qc_add(c, &c->rq[i], 0)) != 0) {
			snprintf(res->err, sizeof(res->err), "elv_add returned %d", r);
			goto out;
		}
	}
	while (now < QC_WARM_NS + QC_SPAN_NS) {
		uint64_t next = UINT64_MAX, ev;

		while (inflight < depth && elv_dispatch(c->q, c->start + now, 0, &out) == 0) {
			struct qc_rq *d = elv_container_of(out, struct qc_rq, rq);
			uint64_t jitter = qc_next(&c->x) % (svc / 5u + 1u);

			d->in_flight = 1;
			d->done = now + svc - svc / 10u + jitter;
			inflight++;
			res->dispatches++;
		}
		for (i = 0; i < QC_RQS; i++)
			if (c->rq[i].in_flight && c->rq[i].done < next)
				next = c->rq[i].done;
		ev = elv_next_event(c->q);
		if (ev != ELV_TIME_NEVER && elv_time_after(ev, c->start + now) &&
		    ev - (c->start + now) < next - now)
			next = now + (ev - (c->start + now));
		if (next == UINT64_MAX) {
			ret = qc_fail(res, "stuck at %.3f s with nothing in flight and no event "
				      "(%g)", (double)now / 1e9, 0);
			goto out;
		}
		if (next == now && !inflight)
			next = now + 1000; /* an event due now that released nothing */
		now = next > now ? next : now;
		for (i = 0; i < QC_RQS; i++) {
			struct qc_rq *d = &c->rq[i];

			if (!d->in_flight || d->done > now)
				continue;
			if ((r = elv_complete(c->q, &d->rq, c->start + now)) != 0) {
				snprintf(res->err, sizeof(res->err), "elv_complete returned %d", r);
				goto out;
			}
			inflight--;
			if (now >= QC_WARM_NS)
				got[d->client]++;
			if ((r = qc_add(c, d, now)) != 0) {
				snprintf(res->err, sizeof(res->err), "elv_add returned %d", r);
				goto out;
			}
		}
	}
	res->seconds = (double)(now - QC_WARM_NS) / 1e9;
	for (i = 0; i < QOS_CHECK_CLIENTS; i++) {
		res->got[i] = (double)got[i] / res->seconds;
		res->delivered += res->got[i];
	}
	for (i = 0; i < QOS_CHECK_CLIENTS; i++) {
		double slack = 2.0 / res->seconds;

		if (res->reservation[i] > 0 &&
		    res->got[i] < res->reservation[i] * (1 - QC_TOL) - slack) {
			snprintf(res->err, sizeof(res->err), "client %u got %.1f requests/s, below "
				 "its reservation of %.0f (device %.0f/s, delivered %.0f/s)", i,
				 res->got[i], res->reservation[i], res->capacity, res->delivered);
			goto out;
		}
		if (res->limit[i] > 0 && res->got[i] > res->limit[i] * (1 + QC_TOL) + slack) {
			snprintf(res->err, sizeof(res->err), "client %u got %.1f requests/s, above "
				 "its limit of %.0f", i, res->got[i], res->limit[i]);
			goto out;
		}
	}
	/* Everything comes back: the device's, then what the queue and the stage hold. */
	ended = 0;
	for (i = 0; i < QC_RQS; i++)
		if (c->rq[i].in_flight && elv_complete(c->q, &c->rq[i].rq, c->start + now) == 0) {
			c->rq[i].in_flight = 0;
			ended++;
		}
	drained = elv_drain(c->q, qc_drop, c);
	if (drained < 0 || (unsigned)drained != c->drained || ended + c->drained != QC_RQS) {
		ret = qc_fail(res, "%g of the requests came back at the end, %g expected",
			      (double)(ended + c->drained), (double)QC_RQS);
		goto out;
	}
	ret = 0;
out:
	if (c->q) {
		for (i = 0; i < QC_RQS; i++)
			if (c->rq[i].in_flight)
				elv_complete(c->q, &c->rq[i].rq, c->start + now);
		elv_drain(c->q, qc_drop, c);
		for (i = 0; i < QOS_CHECK_CLIENTS; i++)
			elv_stream_exit(c->q, &c->st[i], c->start + now);
		elv_qos_detach(c->q, c->start + now);
		elv_queue_destroy(c->q);
	}
	free(c);
	return ret;
}
