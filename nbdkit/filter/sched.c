/*
 * The queue engine of the elevator filter: submission, dispatch at most depth requests at a
 * time, merged plugin calls, completion, cancellation and the idling timer.
 *
 * Locking: elvf.lock guards the queue, the counters and every descriptor's state and merge
 * chain. A descriptor is only touched by other threads while it is queued or merged, and its
 * own thread only leaves elvf_submit() after it is DONE, which is set under the lock; so a
 * thread may read and signal other descriptors for as long as it holds the lock.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <nbdkit-filter.h>

#include <elevator/policy.h>

#include "elvf.h"

/* Largest merged plugin call (bytes); larger chains are not built. */
#define ELVF_MAX_SPAN (4u << 20)
/* How often a waiting request asks nbdkit whether its client is still there. */
#define ELVF_LIVENESS_NS (100u * ELV_NSEC_PER_MSEC)
/* Connections kept one by one in the stats file; older closed ones are summed. */
#define ELVF_KEEP_CLOSED 256u

struct elvf elvf = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.armed = ELV_TIME_NEVER,
};

static unsigned nr_closed;
static int cv_ready;

uint64_t elvf_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static struct timespec to_timespec(uint64_t ns)
{
	struct timespec ts;

	ts.tv_sec = (time_t)(ns / 1000000000u);
	ts.tv_nsec = (long)(ns % 1000000000u);
	return ts;
}

static struct elvf_io *io_of(const struct elv_request *rq)
{
	return elv_container_of(rq, struct elvf_io, rq);
}

void elvf_debug_check(const char *after)
{
#ifndef NDEBUG
	int r = elv_queue_check(elvf.q);

	if (r != 0 && r != ELV_ENOSYS) {
		nbdkit_error("elv_queue_check() failed after %s: %s", after, elv_strerror(r));
		abort();
	}
#else
	(void)after;
#endif
}

/* Only byte-adjacent commands of one connection merge: an NBD command need not be
 * sector-aligned, and another connection's plugin context is not ours to call. */
static int allow_merge(void *ctx, const struct elv_request *rq, const struct elv_request *nx,
		       enum elv_merge_kind kind)
{
	const struct elvf_io *a = io_of(rq), *b = io_of(nx);

	(void)ctx;
	(void)kind;
	return a->next == b->next && a->kind == b->kind &&
	       a->span_off + a->span_len == b->span_off &&
	       a->span_len + b->span_len <= ELVF_MAX_SPAN;
}

/* Chain @absorbed's members onto @into's, keeping disk order. */
static void merge(void *ctx, struct elv_request *into, struct elv_request *absorbed,
		  enum elv_merge_kind kind)
{
	struct elvf_io *h = io_of(into), *a = io_of(absorbed), *m;

	(void)ctx;
	for (m = a->first;; m = m->chain) {
		m->head = h;
		m->state = ELVF_MERGED;
		if (m == a->last)
			break;
	}
	if (kind == ELV_MERGE_FRONT) {
		a->last->chain = h->first;
		h->first = a->first;
		h->span_off = a->span_off;
	} else {
		h->last->chain = a->first;
		h->last = a->last;
	}
	h->span_len += a->span_len;
}

static void qos_drop_pending(uint64_t now);

/* Dispatch while the plugin has room, then arm the timer for an idling policy. */
static void kick(uint64_t now)
{
	struct elv_request *rq;
	struct elvf_io *io, *m;
	uint64_t ev, old = elvf.armed;

	if (elvf.qos_dropping)
		qos_drop_pending(now);
	while (elvf.running < elvf.prm.depth && elv_dispatch(elvf.q, now, 0, &rq) == 0) {
		io = io_of(rq);
		io->state = ELVF_RUNNING;
		elvf.running++;
		for (m = io->first; m; m = m->chain)
			if (m->qos_held)
				m->conn->qos.held_ns += now - m->t_arrive;
		pthread_cond_signal(&io->cv);
	}
	elvf_debug_check("dispatch");
	/* With the plugin full, the next completion calls again: no timer needed. */
	ev = elvf.running < elvf.prm.depth ? elv_next_event(elvf.q) : ELV_TIME_NEVER;
	if (ev != ELV_TIME_NEVER && !elv_time_after(ev, now))
		ev = now + ELV_NSEC_PER_MSEC; /* never spin on an event already due */
	elvf.armed = ev;
	if (ev != ELV_TIME_NEVER && (old == ELV_TIME_NEVER || elv_time_before(ev, old)))
		pthread_cond_signal(&elvf.timer_cv);
}

static void *timer_main(void *arg)
{
	struct timespec ts;
	uint64_t now;

	(void)arg;
	pthread_mutex_lock(&elvf.lock);
	while (!elvf.stopping) {
		if (elvf.armed == ELV_TIME_NEVER) {
			pthread_cond_wait(&elvf.timer_cv, &elvf.lock);
			continue;
		}
		ts = to_timespec(elvf.armed);
		pthread_cond_timedwait(&elvf.timer_cv, &elvf.lock, &ts);
		now = elvf_now();
		if (elvf.armed != ELV_TIME_NEVER && elv_time_after_eq(now, elvf.armed))
			kick(now);
	}
	pthread_mutex_unlock(&elvf.lock);
	return NULL;
}

static uint8_t op_of(unsigned kind)
{
	static const uint8_t ops[ELVF_NR_KINDS] = {
		[ELVF_READ] = ELV_OP_READ, [ELVF_WRITE] = ELV_OP_WRITE,
		[ELVF_TRIM] = ELV_OP_DISCARD, [ELVF_ZERO] = ELV_OP_WRITE,
		[ELVF_FLUSH] = ELV_OP_FLUSH,
	};
	return ops[kind];
}

/* Fill in the embedded request: sectors cover every byte of the command. */
static void io_prepare(struct elvf_io *io)
{
	struct elv_request *rq = &io->rq;

	elv_request_init(rq);
	rq->op = op_of(io->kind);
	if (io->kind != ELVF_FLUSH) {
		rq->sector = io->offset >> 9;
		rq->nr_sectors = (uint32_t)(((io->offset + io->count + 511) >> 9) - rq->sector);
	}
	/* Every NBD command has a client waiting for its reply. */
	rq->flags = ELV_RQ_SYNC;
	if (io->flags & NBDKIT_FLAG_FUA)
		rq->flags |= ELV_RQ_FUA;
	if (io->kind == ELVF_ZERO || (io->kind != ELVF_READ && io->flags))
		rq->flags |= ELV_RQ_NOMERGE;
	if (io->conn->has_stream)
		rq->stream = &io->conn->stream;
	else
		rq->ioprio = elvf.prm.ioprio;
	io->head = io->first = io->last = io;
	io->chain = NULL;
	io->span_off = io->offset;
	io->span_len = io->count;
	io->state = ELVF_QUEUED;
	io->err = 0;
}

/* One command on its own. */
static int call_one(struct elvf_io *io)
{
	nbdkit_next *next = io->next;
	int e = 0, r = -1;

	switch (io->kind) {
	case ELVF_READ:
		r = next->pread(next, io->buf, io->count, io->offset, io->flags, &e);
		break;
	case ELVF_WRITE:
		r = next->pwrite(next, io->buf, io->count, io->offset, io->flags, &e);
		break;
	case ELVF_TRIM:
		r = next->trim(next, io->count, io->offset, io->flags, &e);
		break;
	case ELVF_ZERO:
		r = next->zero(next, io->count, io->offset, io->flags, &e);
		break;
	case ELVF_FLUSH:
		r = next->flush(next, io->flags, &e);
		break;
	}
	return r < 0 ? (e ? e : EIO) : 0;
}

static void set_err(struct elvf_io *h, int err)
{
	struct elvf_io *m;

	for (m = h->first; m; m = m->chain)
		m->err = err;
}

/* A merged chain: one plugin call for the whole span, data split or gathered. */
static void call_chain(struct elvf_io *h)
{
	nbdkit_next *next = h->next;
	struct elvf_io *m;
	char *bounce;
	int e = 0, r;

	if (h->kind == ELVF_TRIM) {
		r = next->trim(next, (uint32_t)h->span_len, h->span_off, 0, &e);
		set_err(h, r < 0 ? (e ? e : EIO) : 0);
		return;
	}
	bounce = malloc(h->span_len);
	if (!bounce) {
		/* No memory for the joined buffer: serve the members one by one. */
		for (m = h->first; m; m = m->chain)
			m->err = call_one(m);
		return;
	}
	if (h->kind == ELVF_WRITE) {
		for (m = h->first; m; m = m->chain)
			memcpy(bounce + (m->offset - h->span_off), m->buf, m->count);
		r = next->pwrite(next, bounce, (uint32_t)h->span_len, h->span_off, 0, &e);
	} else {
		r = next->pread(next, bounce, (uint32_t)h->span_len, h->span_off, 0, &e);
		for (m = h->first; r == 0 && m; m = m->chain)
			memcpy(m->buf, bounce + (m->offset - h->span_off), m->count);
	}
	free(bounce);
	set_err(h, r < 0 ? (e ? e : EIO) : 0);
}

static void count_done(struct elvf_io *m, uint64_t now)
{
	struct elvf_counts *c = &m->conn->counts;

	if (m->err) {
		c->errors++;
	} else {
		c->ops[m->kind]++;
		if (m->kind == ELVF_READ || m->kind == ELVF_WRITE)
			c->bytes[m->kind] += m->count;
	}
	if (m != m->head)
		c->merged++;
	elvf_hist_add(&c->lat, now - m->t_arrive);
}

/* Called with the lock held and @h dispatched to us; returns with the lock held. */
static void run_head(struct elvf_io *h)
{
	struct elvf_io *m, *nx;
	uint64_t now;
	int r;

	pthread_mutex_unlock(&elvf.lock);
	if (h->first == h->last)
		h->err = call_one(h);
	else
		call_chain(h);
	pthread_mutex_lock(&elvf.lock);
	now = elvf_now();
	r = elv_complete(elvf.q, &h->rq, now);
	if (r < 0)
		nbdkit_error("elv_complete: %s", elv_strerror(r));
	elvf.running--;
	for (m = h->first; m; m = nx) {
		nx = m->chain;
		count_done(m, now);
		m->state = ELVF_DONE;
		if (m != h)
			pthread_cond_signal(&m->cv);
	}
	elvf_debug_check("complete");
	kick(now);
}

/* The client went away: withdraw the chain @io rides in, unless it is already running. */
static void cancel_chain(struct elvf_io *io)
{
	struct elvf_io *h = io->head, *m, *nx;
	int r;

	if (h->state != ELVF_QUEUED)
		return;
	r = elv_cancel(elvf.q, &h->rq);
	if (r < 0) {
		nbdkit_error("elv_cancel: %s", elv_strerror(r));
		return;
	}
	for (m = h->first; m; m = nx) {
		nx = m->chain;
		m->conn->counts.cancelled++;
		m->err = ESHUTDOWN;
		m->state = ELVF_DONE;
		pthread_cond_signal(&m->cv);
	}
	elvf_debug_check("cancel");
	kick(elvf_now());
}

/* Sleep until dispatched, done or cancelled; the client is checked now and then. */
static void wait_turn(struct elvf_io *io)
{
	struct timespec ts;
	int gone;

	while (io->state == ELVF_QUEUED || io->state == ELVF_MERGED) {
		ts = to_timespec(elvf_now() + ELVF_LIVENESS_NS);
		if (pthread_cond_timedwait(&io->cv, &elvf.lock, &ts) != ETIMEDOUT)
			continue;
		if (io->state != ELVF_QUEUED && io->state != ELVF_MERGED)
			break;
		/* A zero sleep returns at once, with ESHUTDOWN when the client has gone. */
		pthread_mutex_unlock(&elvf.lock);
		gone = nbdkit_nanosleep(0, 0) < 0;
		pthread_mutex_lock(&elvf.lock);
		if (gone)
			cancel_chain(io);
	}
}

/* Requests the connection's QoS client holds now (0 without one). */
static uint64_t qos_held_now(const struct elvf_conn *c)
{
	struct elv_qos_client_stats st;

	if (!c->has_qc || !c->qos.what ||
	    elv_qos_client_stats(elvf.q, &c->qc, &st) < 0)
		return 0;
	return (uint64_t)st.held_throttle + st.held_mclock;
}

int elvf_submit(struct elvf_io *io, int *err)
{
	uint64_t now, held;
	int r;

	io_prepare(io);
	pthread_cond_init(&io->cv, &elvf.cvattr);
	pthread_mutex_lock(&elvf.lock);
	now = elvf_now();
	io->t_arrive = now;
	held = qos_held_now(io->conn);
	r = elv_add(elvf.q, &io->rq, now);
	if (r == 0 && qos_held_now(io->conn) > held) {
		io->qos_held = 1;
		io->conn->qos.held++;
	}
	if (r < 0) {
		pthread_mutex_unlock(&elvf.lock);
		pthread_cond_destroy(&io->cv);
		nbdkit_error("elv_add: %s", elv_strerror(r));
		*err = r == ELV_EOVERFLOW ? EINVAL : -r;
		return -1;
	}
	elvf_debug_check("add");
	kick(now);
	wait_turn(io);
	if (io->state == ELVF_RUNNING)
		run_head(io);
	pthread_mutex_unlock(&elvf.lock);
	pthread_cond_destroy(&io->cv);
	if (io->err) {
		*err = io->err;
		return -1;
	}
	return 0;
}

int elvf_apply_locked(const struct elvf_settings *s, const char *where)
{
	const struct elv_policy *pol = s->policy ? s->policy : elv_queue_policy(elvf.q);
	uint64_t now = elvf_now();
	unsigned i;
	int r;

	if (elvf_settings_check(s, pol, where) < 0)
		return -1;
	if (pol != elv_queue_policy(elvf.q)) {
		r = elv_switch(elvf.q, pol, now);
		if (r < 0) {
			nbdkit_error("%spolicy=%s: %s", where, elv_policy_name(pol),
				     elv_strerror(r));
			return -1;
		}
		elvf.switches++;
	}
	for (i = 0; i < s->nr_tun; i++) {
		r = elv_tunable_set(elvf.q, s->tun[i].name, s->tun[i].value);
		if (r < 0) {
			nbdkit_error("%s%s: %s", where, s->tun[i].name, elv_strerror(r));
			return -1;
		}
	}
	elvf_debug_check("policy change");
	if (elvf.timer_started)
		kick(now);
	return 0;
}

/* ---- QoS ------------------------------------------------------------------------------ */

/* The layers a connection's settings come from: command line, then the control file. */
static void qos_layers(const struct elvf_qos_rules *ctl, const struct elvf_qos_rules **out)
{
	out[0] = &elvf.prm.set.qos;
	out[1] = ctl;
}

static void qos_effective(const struct elvf_qos_rules *ctl, const struct elvf_conn *c,
			  struct elvf_qos *eff)
{
	const struct elvf_qos_rules *layers[2];

	qos_layers(ctl, layers);
	elvf_qos_effective(layers, 2, c->export, c->id, eff);
}

/* Hand @eff to the library for connection @c (checked already). */
static int qos_apply_conn(struct elvf_conn *c, const struct elvf_qos *eff, uint64_t now,
			  const char *where)
{
	static const struct elv_mclock_settings plain = { .weight = 1 };
	struct elv_throttle_settings t;
	struct elv_mclock_settings m;
	int what = elvf_qos_to_lib(eff, &t, &m), r;

	r = elv_qos_set_throttle(elvf.q, &c->qc, (what & ELVF_QOS_HAS_THROTTLE) ? &t : NULL,
				 now);
	if (r == 0 && (what & ELVF_QOS_HAS_MCLOCK)) {
		r = elv_qos_set_mclock(elvf.q, &c->qc, &m, now);
		if (r == 0 && c->qos.drop_mclock) {
			c->qos.drop_mclock = 0;
			elvf.qos_dropping--;
		}
	} else if (r == 0 && (c->qos.what & ELVF_QOS_HAS_MCLOCK)) {
		/* Requests waiting in mClock keep the client until they are out: meanwhile
		 * it has no reservation and no limit. */
		r = elv_qos_set_mclock(elvf.q, &c->qc, NULL, now);
		if (r == ELV_EBUSY) {
			r = elv_qos_set_mclock(elvf.q, &c->qc, &plain, now);
			if (r == 0 && !c->qos.drop_mclock) {
				c->qos.drop_mclock = 1;
				elvf.qos_dropping++;
			}
		}
	}
	if (r < 0) {
		nbdkit_error("%sconnection %" PRIu64 ": QoS settings: %s", where, c->id,
			     elv_strerror(r));
		return -1;
	}
	c->qos.eff = *eff;
	c->qos.what = what | (c->qos.drop_mclock ? ELVF_QOS_HAS_MCLOCK : 0);
	return 0;
}

/* Take mClock away from connections whose last request waiting in it has gone. */
static void qos_drop_pending(uint64_t now)
{
	struct elv_qos_client_stats st;
	struct elvf_conn *c;

	for (c = elvf.conns; c && elvf.qos_dropping; c = c->next) {
		if (!c->qos.drop_mclock || !c->has_qc ||
		    elv_qos_client_stats(elvf.q, &c->qc, &st) < 0 || st.held_mclock)
			continue;
		if (elv_qos_set_mclock(elvf.q, &c->qc, NULL, now) == 0) {
			c->qos.drop_mclock = 0;
			c->qos.what &= ~ELVF_QOS_HAS_MCLOCK;
			elvf.qos_dropping--;
		}
	}
}

int elvf_qos_apply_locked(const struct elvf_qos_rules *ctl, const char *where, int apply)
{
	const struct elvf_qos_rules *layers[2];
	struct elvf_qos eff;
	struct elvf_conn *c;
	char who[600];
	uint64_t now = elvf_now();
	int r = 0;

	if (ctl->nr && !elvf.qos_on) {
		nbdkit_error("%sQoS settings need stream=connection", where);
		return -1;
	}
	qos_layers(ctl, layers);
	if (elvf_qos_check_layers(layers, 2, where) < 0)
		return -1;
	/* Every open connection's new settings must pass before any is applied. */
	for (c = elvf.conns; c; c = c->next) {
		if (!c->has_qc)
			continue;
		qos_effective(ctl, c, &eff);
		(void)snprintf(who, sizeof(who), "%sconnection %" PRIu64 ": ", where, c->id);
		if (elvf_qos_check(&eff, who) < 0)
			return -1;
	}
	if (!apply || !elvf.qos_on)
		return 0;
	elvf.ctl_qos = *ctl;
	for (c = elvf.conns; c; c = c->next) {
		if (!c->has_qc)
			continue;
		qos_effective(&elvf.ctl_qos, c, &eff);
		if (qos_apply_conn(c, &eff, now, where) < 0)
			r = -1;
	}
	elvf_debug_check("QoS change");
	if (elvf.timer_started)
		kick(now);
	return r;
}

/* The stage goes on the queue when QoS settings are given or may come from a control file. */
static int qos_init(void)
{
	struct elv_qos_settings set = { 0 };
	int r;

	if (elvf.prm.stream_mode != ELVF_STREAM_CONNECTION ||
	    (!elvf.prm.set.qos.nr && !elvf.prm.control_path))
		return 0;
	set.at_limit = (uint8_t)elvf.prm.qos_at_limit;
	r = elv_qos_attach(elvf.q, &elvf.qos, &set, elvf_now());
	if (r < 0) {
		nbdkit_error("elv_qos_attach: %s", elv_strerror(r));
		return -1;
	}
	elvf.qos_on = 1;
	return 0;
}

/* A new connection's QoS client and settings; the lock is held. */
static int qos_conn_open(struct elvf_conn *c, uint64_t now)
{
	struct elvf_qos eff;
	char who[64];
	int r;

	if (!elvf.qos_on || !c->has_stream)
		return 0;
	qos_effective(&elvf.ctl_qos, c, &eff);
	(void)snprintf(who, sizeof(who), "connection %" PRIu64 ": ", c->id);
	if (elvf_qos_check(&eff, who) < 0)
		return -1;
	memset(&c->qc, 0, sizeof(c->qc));
	r = elv_qos_stream_attach(elvf.q, &c->stream, &c->qc, now);
	if (r < 0) {
		nbdkit_error("elv_qos_stream_attach: %s", elv_strerror(r));
		return -1;
	}
	c->has_qc = 1;
	return qos_apply_conn(c, &eff, now, "");
}

/* Keep the library's counters of a closing connection for the stats file. */
static void qos_conn_close(struct elvf_conn *c, uint64_t now)
{
	int r;

	if (!c->has_qc)
		return;
	elv_qos_client_stats(elvf.q, &c->qc, &c->qos.lib);
	r = elv_qos_stream_detach(elvf.q, &c->stream, now);
	if (r < 0) {
		nbdkit_error("elv_qos_stream_detach: %s", elv_strerror(r));
		return;
	}
	if (c->qos.drop_mclock) {
		c->qos.drop_mclock = 0;
		elvf.qos_dropping--;
	}
	c->has_qc = 0;
}

int elvf_sched_init(void)
{
	struct elv_config cfg = { 0 };
	struct elvf_settings tun;
	size_t len;
	int r;

	cfg.dev.rotational = (uint8_t)elvf.prm.rotational;
	cfg.dev.queue_depth = (uint16_t)elvf.prm.depth;
	cfg.dev.max_sectors = ELVF_MAX_SPAN >> 9;
	cfg.nr_requests = 256;
	cfg.allow_merge = allow_merge;
	cfg.merge = merge;
	pthread_condattr_init(&elvf.cvattr);
	pthread_condattr_setclock(&elvf.cvattr, CLOCK_MONOTONIC);
	pthread_cond_init(&elvf.timer_cv, &elvf.cvattr);
	cv_ready = 1;
	/* Room for every built-in policy, so that a live switch always fits. */
	len = (elv_queue_size_any(&cfg) + 63) & ~(size_t)63;
	elvf.qmem = aligned_alloc(64, len);
	if (!elvf.qmem) {
		nbdkit_error("cannot allocate %zu bytes for the queue", len);
		return -1;
	}
	r = elv_queue_init(&elvf.q, elvf.qmem, len, elvf.prm.set.policy, &cfg);
	if (r < 0) {
		nbdkit_error("elv_queue_init: %s", elv_strerror(r));
		free(elvf.qmem);
		elvf.qmem = NULL;
		return -1;
	}
	if (qos_init() < 0)
		return -1;
	tun = elvf.prm.set;
	tun.policy = NULL;
	return elvf_apply_locked(&tun, "");
}

int elvf_sched_start(void)
{
	int r;

	if (elvf.timer_started)
		return 0;
	elvf.stopping = 0;
	r = pthread_create(&elvf.timer, NULL, timer_main, NULL);
	if (r) {
		nbdkit_error("cannot start the timer thread: %s", strerror(r));
		return -1;
	}
	elvf.timer_started = 1;
	return 0;
}

void elvf_sched_stop(void)
{
	if (!elvf.timer_started)
		return;
	pthread_mutex_lock(&elvf.lock);
	elvf.stopping = 1;
	pthread_cond_signal(&elvf.timer_cv);
	pthread_mutex_unlock(&elvf.lock);
	pthread_join(elvf.timer, NULL);
	elvf.timer_started = 0;
}

int elvf_conn_open(struct elvf_conn *c)
{
	int r;

	pthread_mutex_lock(&elvf.lock);
	c->id = ++elvf.next_conn_id;
	if (elvf.prm.stream_mode == ELVF_STREAM_CONNECTION) {
		c->stream.ioprio = elvf.prm.ioprio;
		r = elv_stream_init(elvf.q, &c->stream, elvf_now());
		if (r < 0) {
			pthread_mutex_unlock(&elvf.lock);
			nbdkit_error("elv_stream_init: %s", elv_strerror(r));
			return -1;
		}
		c->has_stream = 1;
		if (qos_conn_open(c, elvf_now()) < 0) {
			if (c->has_qc)
				elv_qos_stream_detach(elvf.q, &c->stream, elvf_now());
			elv_stream_exit(elvf.q, &c->stream, elvf_now());
			c->has_qc = c->has_stream = 0;
			elvf.next_conn_id--;
			pthread_mutex_unlock(&elvf.lock);
			return -1;
		}
	}
	c->open = 1;
	c->next = elvf.conns;
	elvf.conns = c;
	pthread_mutex_unlock(&elvf.lock);
	return 0;
}

/* Sum the oldest closed connection into elvf.earlier; caller holds the lock. */
static void fold_oldest_closed(void)
{
	struct elvf_conn **pp, **oldest = NULL;
	struct elvf_conn *c;

	for (pp = &elvf.conns; *pp; pp = &(*pp)->next)
		if (!(*pp)->open)
			oldest = pp;
	if (!oldest)
		return;
	c = *oldest;
	*oldest = c->next;
	elvf_counts_fold(&elvf.earlier, &c->counts);
	elvf.nr_earlier++;
	nr_closed--;
	free(c->export);
	free(c);
}

void elvf_conn_close(struct elvf_conn *c)
{
	uint64_t now;
	int r;

	pthread_mutex_lock(&elvf.lock);
	now = elvf_now();
	qos_conn_close(c, now);
	if (c->has_stream) {
		/* nbdkit closes a connection after its last command returned. */
		r = elv_stream_exit(elvf.q, &c->stream, now);
		if (r < 0)
			nbdkit_error("elv_stream_exit: %s", elv_strerror(r));
		else
			c->has_stream = 0;
	}
	c->open = 0;
	nr_closed++;
	if (nr_closed > ELVF_KEEP_CLOSED)
		fold_oldest_closed();
	elvf_debug_check("close");
	if (elvf.timer_started)
		kick(now);
	pthread_mutex_unlock(&elvf.lock);
}

void elvf_sched_fini(void)
{
	struct elvf_conn *c, *nx;
	int r;

	/* nbdkit may unload while a client that just vanished is still negotiating: its
	 * context was opened but will never be closed. */
	for (c = elvf.conns; c; c = nx) {
		nx = c->next;
		if (c->has_qc && elvf.q)
			elv_qos_stream_detach(elvf.q, &c->stream, elvf_now());
		if (c->has_stream && elvf.q)
			elv_stream_exit(elvf.q, &c->stream, elvf_now());
		free(c->export);
		free(c);
	}
	elvf.conns = NULL;
	if (elvf.qos_on && elvf.q) {
		r = elv_qos_detach(elvf.q, elvf_now());
		if (r < 0)
			nbdkit_error("elv_qos_detach: %s", elv_strerror(r));
		elvf.qos_on = 0;
	}
	if (elvf.q) {
		r = elv_queue_exit(elvf.q);
		if (r < 0)
			nbdkit_error("elv_queue_exit: %s", elv_strerror(r));
		elvf.q = NULL;
	}
	free(elvf.qmem);
	elvf.qmem = NULL;
	if (cv_ready) {
		pthread_cond_destroy(&elvf.timer_cv);
		pthread_condattr_destroy(&elvf.cvattr);
		cv_ready = 0;
	}
	elvf_params_free(&elvf.prm);
}

