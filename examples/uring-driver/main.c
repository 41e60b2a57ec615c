/*
 * uring-driver: a userspace block driver doing real I/O, with libelevator between the threads
 * that submit requests and the kernel.
 *
 * Submitting threads (one struct elv_stream each) hand requests to one queue; whenever the
 * device has a free slot, the policy's next request goes out as an O_DIRECT read or write
 * through io_uring, merged requests as one vectored command. A reaper thread takes completions
 * off the ring, a timer thread wakes the queue at elv_next_event() for policies that idle.
 * When the kernel refuses io_uring_setup (seccomp in some containers) or --no-uring is given,
 * a pool of threads doing preadv/pwritev serves the same commands.
 *
 * Every write carries a pattern stamped with its byte offset and a generation number; every
 * read checks each sector against the generation the driver last wrote there, so a request
 * served at the wrong place, merged wrongly or torn shows up as a verify error.
 */
#define _GNU_SOURCE 1 /* O_DIRECT */
#include <elevator/elevator.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <liburing.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define SECTOR 512u
#define ALIGN 4096u
#define MAX_SEGS 256u      /* most requests joined into one command */
#define STOP_TAG UINT64_MAX /* user_data of the NOP that stops the reaper */

/* ---- options ------------------------------------------------------------------------- */

struct opts {
	const char *path;
	uint64_t size;       /* bytes of the file used */
	unsigned read_pct;   /* share of reads, percent */
	uint32_t min_bs, max_bs;
	unsigned depth;      /* commands at the device at once */
	unsigned threads;    /* submitting threads */
	unsigned thread_qd;  /* requests each thread keeps outstanding */
	unsigned ios;        /* requests per thread and policy */
	int no_uring;
	int sequential;
	uint64_t seed;
	const char *policies; /* comma list or "all" */
};

/* ---- the driver ---------------------------------------------------------------------- */

struct thread_ctx;

/* One I/O: what the library sees, the buffer, and who waits for it. */
struct io {
	struct elv_request rq;
	struct io *joined; /* requests merged into this one: one command serves them all */
	struct io *done_next;
	struct thread_ctx *owner;
	uint8_t *buf;
	uint64_t offset;
	uint32_t len;
	uint32_t gen;  /* generation written, for writes */
	int op;
	int res;       /* 0, or a negative errno */
	uint64_t added; /* ns */
	uint64_t lat;   /* ns */
	uint32_t slot;
};

struct driver {
	pthread_mutex_t lock;
	pthread_cond_t timer_cv; /* CLOCK_MONOTONIC */
	pthread_cond_t work_cv;  /* thread pool */
	struct elv_queue *q;
	unsigned depth, in_flight;
	int use_uring, stop;
	struct io_uring ring;
	struct io *work_head, **work_tail; /* thread pool: commands not yet taken */
	int fd;
	uint64_t timer_at;
};

struct thread_ctx {
	struct driver *drv;
	struct elv_stream stream;
	pthread_t tid;
	pthread_cond_t cv;
	struct io *done;     /* finished, not yet checked */
	struct io *ios;      /* thread_qd descriptors */
	struct io **free_io;
	unsigned nr_free;
	uint64_t region, region_len; /* bytes this thread owns */
	uint8_t *slot_busy;
	unsigned nr_slots;
	uint64_t rng;
	unsigned issued, finished;
	uint64_t *lat[2]; /* per op, ns */
	unsigned nr_lat[2];
	uint64_t bytes;
	unsigned verify_errors, io_errors;
};

static const struct opts *o;
static uint32_t *expect_gen; /* per sector: generation last written there */
static uint32_t next_gen = 1;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* ---- data pattern -------------------------------------------------------------------- */

static uint64_t fill_word(uint64_t offset, uint32_t gen, unsigned i)
{
	uint64_t s = offset * 0x9e3779b97f4a7c15ull ^ ((uint64_t)gen << 32 | i);

	return rng_next(&s);
}

/* Each sector: its byte offset, its generation, then words derived from both. */
static void fill(uint8_t *buf, uint64_t offset, uint32_t len, uint32_t gen)
{
	uint32_t s;
	unsigned i;

	for (s = 0; s < len; s += SECTOR) {
		uint64_t *w = (uint64_t *)(void *)(buf + s);

		w[0] = offset + s;
		w[1] = gen;
		for (i = 2; i < SECTOR / 8; i++)
			w[i] = fill_word(offset + s, gen, i);
	}
}

static unsigned check(const uint8_t *buf, uint64_t offset, uint32_t len)
{
	unsigned bad = 0, i;
	uint32_t s;

	for (s = 0; s < len; s += SECTOR) {
		const uint64_t *w = (const uint64_t *)(const void *)(buf + s);
		uint32_t gen = expect_gen[(offset + s) / SECTOR];
		int ok = w[0] == offset + s && w[1] == gen;

		for (i = 2; ok && i < SECTOR / 8; i++)
			ok = w[i] == fill_word(offset + s, gen, i);
		if (!ok && bad++ == 0)
			fprintf(stderr, "verify: sector at byte %" PRIu64 ": stamp %" PRIu64
				" generation %" PRIu64 ", expected generation %" PRIu32 "\n",
				offset + s, w[0], w[1], gen);
	}
	return bad;
}

/* ---- backends ------------------------------------------------------------------------ */

/* The command's buffers in disk order; 0 when its pieces do not add up to its extent. */
static unsigned build_iov(struct io *head, struct iovec *iov)
{
	struct io *part[MAX_SEGS], *io;
	uint64_t pos = head->rq.sector * SECTOR;
	unsigned n = 0, i, j;

	for (io = head; io; io = io->joined) {
		if (n == MAX_SEGS)
			return 0;
		for (i = n++; i > 0 && part[i - 1]->offset > io->offset; i--)
			part[i] = part[i - 1];
		part[i] = io;
	}
	for (j = 0; j < n; j++) {
		if (part[j]->offset != pos)
			return 0;
		iov[j].iov_base = part[j]->buf;
		iov[j].iov_len = part[j]->len;
		pos += part[j]->len;
	}
	return pos == (head->rq.sector + head->rq.nr_sectors) * SECTOR ? n : 0;
}

/* Whole-command preadv/pwritev for the thread pool; returns 0 or a negative errno. */
static int do_sync(int fd, struct io *head)
{
	struct iovec iov[MAX_SEGS], *v = iov;
	unsigned n = build_iov(head, iov);
	uint64_t off = head->rq.sector * SECTOR;

	if (!n)
		return -EINVAL;
	while (n) {
		ssize_t r = head->op == ELV_OP_READ ? preadv(fd, v, (int)n, (off_t)off)
						    : pwritev(fd, v, (int)n, (off_t)off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -EIO;
		off += (uint64_t)r;
		while (n && (size_t)r >= v->iov_len) {
			r -= (ssize_t)v->iov_len;
			v++;
			n--;
		}
		if (n) {
			v->iov_base = (uint8_t *)v->iov_base + r;
			v->iov_len -= (size_t)r;
		}
	}
	return 0;
}

static void kick(struct driver *d, uint64_t now);

/* A command finished: the queue learns it, every request in it goes back to its thread. */
static void finish_cmd(struct driver *d, struct io *head, int res)
{
	uint64_t now = now_ns();
	struct io *io, *next;
	int r = elv_complete(d->q, &head->rq, now);

	if (r)
		fprintf(stderr, "elv_complete: %s\n", elv_strerror(r));
	d->in_flight--;
	for (io = head; io; io = next) {
		next = io->joined;
		io->joined = NULL;
		io->res = res;
		io->lat = now - io->added;
		io->done_next = io->owner->done;
		io->owner->done = io;
		pthread_cond_signal(&io->owner->cv);
	}
	kick(d, now);
}

static int start_cmd(struct driver *d, struct io *head)
{
	struct iovec iov[MAX_SEGS];
	int r;

	if (d->use_uring) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&d->ring);
		unsigned n;

		if (!sqe)
			return -EAGAIN;
		n = build_iov(head, iov);
		head->res = 0;
		/* The kernel copies the iovec array at submission, which happens below. */
		if (!n) {
			head->res = -EINVAL; /* pieces that do not add up: fail it, in order */
			io_uring_prep_nop(sqe);
		} else if (head->op == ELV_OP_READ)
			io_uring_prep_readv(sqe, d->fd, iov, n, head->rq.sector * SECTOR);
		else
			io_uring_prep_writev(sqe, d->fd, iov, n, head->rq.sector * SECTOR);
		io_uring_sqe_set_data(sqe, head);
		r = io_uring_submit(&d->ring);
		if (r < 0) {
			/* The entry points at this frame's iovecs: it must not wait in the ring. */
			fprintf(stderr, "io_uring_submit: %s\n", strerror(-r));
			exit(1);
		}
	} else {
		head->done_next = NULL;
		*d->work_tail = head;
		d->work_tail = &head->done_next;
		pthread_cond_signal(&d->work_cv);
	}
	d->in_flight++;
	return 0;
}

/* Give the device what the policy lets it have now; lock held. */
static void kick(struct driver *d, uint64_t now)
{
	while (d->in_flight < d->depth) {
		struct elv_request *rq;
		struct elv_stats st;
		int r = elv_dispatch(d->q, now, 0, &rq);

		if (r == ELV_EAGAIN && d->in_flight == 0 && elv_next_event(d->q) == ELV_TIME_NEVER &&
		    elv_stats(d->q, &st) == 0 && st.queued)
			r = elv_dispatch(d->q, now, ELV_DISPATCH_FORCE, &rq); /* insist */
		if (r)
			break;
		r = start_cmd(d, elv_container_of(rq, struct io, rq));
		if (r) {
			elv_requeue(d->q, rq, now);
			break;
		}
	}
	if (elv_next_event(d->q) != d->timer_at)
		pthread_cond_signal(&d->timer_cv);
}

static void *timer_main(void *arg)
{
	struct driver *d = arg;

	pthread_mutex_lock(&d->lock);
	while (!d->stop) {
		uint64_t at = elv_next_event(d->q);

		/* With every slot taken a timer can do nothing; the next completion kicks. */
		if (d->in_flight >= d->depth)
			at = ELV_TIME_NEVER;
		d->timer_at = at;
		if (at == ELV_TIME_NEVER) {
			pthread_cond_wait(&d->timer_cv, &d->lock);
		} else {
			struct timespec ts = { (time_t)(at / 1000000000u), (long)(at % 1000000000u) };

			if (pthread_cond_timedwait(&d->timer_cv, &d->lock, &ts) == ETIMEDOUT)
				kick(d, now_ns());
		}
	}
	pthread_mutex_unlock(&d->lock);
	return NULL;
}

static void *reaper_main(void *arg)
{
	struct driver *d = arg;

	for (;;) {
		struct io_uring_cqe *cqe;
		struct io *head;
		int r = io_uring_wait_cqe(&d->ring, &cqe);
		int res;

		if (r == -EINTR)
			continue;
		if (r < 0) {
			fprintf(stderr, "io_uring_wait_cqe: %s\n", strerror(-r));
			return NULL;
		}
		if (cqe->user_data == STOP_TAG) {
			io_uring_cqe_seen(&d->ring, cqe);
			return NULL;
		}
		head = io_uring_cqe_get_data(cqe);
		res = cqe->res;
		io_uring_cqe_seen(&d->ring, cqe);
		if (head->res < 0)
			res = head->res;
		else if (res >= 0 && (uint64_t)res != (uint64_t)head->rq.nr_sectors * SECTOR)
			res = -EIO; /* short transfer */
		pthread_mutex_lock(&d->lock);
		finish_cmd(d, head, res < 0 ? res : 0);
		pthread_mutex_unlock(&d->lock);
	}
}

static void *worker_main(void *arg)
{
	struct driver *d = arg;

	pthread_mutex_lock(&d->lock);
	for (;;) {
		struct io *head;
		int res;

		while (!d->stop && !d->work_head)
			pthread_cond_wait(&d->work_cv, &d->lock);
		if (!d->work_head)
			break;
		head = d->work_head;
		d->work_head = head->done_next;
		if (!d->work_head)
			d->work_tail = &d->work_head;
		pthread_mutex_unlock(&d->lock);
		res = do_sync(d->fd, head);
		pthread_mutex_lock(&d->lock);
		finish_cmd(d, head, res);
	}
	pthread_mutex_unlock(&d->lock);
	return NULL;
}

/* The library joined @absorbed into @into: one command serves both (sorted at submission). */
static void on_merge(void *ctx, struct elv_request *into, struct elv_request *absorbed,
		     enum elv_merge_kind kind)
{
	struct io **tail = &elv_container_of(into, struct io, rq)->joined;

	(void)ctx;
	(void)kind;
	while (*tail)
		tail = &(*tail)->joined;
	*tail = elv_container_of(absorbed, struct io, rq);
}

/* Do not build commands longer than the iovec array. */
static int allow_merge(void *ctx, const struct elv_request *rq, const struct elv_request *next,
		       enum elv_merge_kind kind)
{
	const struct io *a = elv_container_of(rq, const struct io, rq);
	const struct io *b = elv_container_of(next, const struct io, rq);
	unsigned n = 0;

	(void)ctx;
	(void)kind;
	for (; a; a = a->joined)
		n++;
	for (; b; b = b->joined)
		n++;
	return n <= MAX_SEGS;
}

/* ---- submitting threads -------------------------------------------------------------- */

static uint32_t pick_len(struct thread_ctx *t)
{
	uint32_t steps = (o->max_bs - o->min_bs) / ALIGN + 1;

	return o->min_bs + (uint32_t)(rng_next(&t->rng) % steps) * ALIGN;
}

/* A free slot (max_bs bytes of the thread's region): random, or the next one in order. */
static uint32_t pick_slot(struct thread_ctx *t, int sequential)
{
	uint32_t s = sequential ? (t->issued % t->nr_slots)
				: (uint32_t)(rng_next(&t->rng) % t->nr_slots);

	while (t->slot_busy[s])
		s = (s + 1) % t->nr_slots;
	return s;
}

static struct io *new_io(struct thread_ctx *t)
{
	struct io *io = t->free_io[--t->nr_free];
	uint32_t room;

	elv_request_init(&io->rq);
	io->joined = NULL;
	io->res = 0;
	io->op = (unsigned)(rng_next(&t->rng) % 100) < o->read_pct ? ELV_OP_READ : ELV_OP_WRITE;
	/* Sequential: whole slots one after the other, so queued neighbours can merge. */
	io->len = o->sequential ? o->max_bs : pick_len(t);
	io->slot = pick_slot(t, o->sequential);
	t->slot_busy[io->slot] = 1;
	room = o->max_bs - io->len;
	io->offset = t->region + (uint64_t)io->slot * o->max_bs +
		     (room ? rng_next(&t->rng) % (room / ALIGN + 1) * ALIGN : 0);
	if (io->op == ELV_OP_WRITE) {
		io->gen = __atomic_fetch_add(&next_gen, 1, __ATOMIC_RELAXED);
		fill(io->buf, io->offset, io->len, io->gen);
	}
	io->rq.sector = io->offset / SECTOR;
	io->rq.nr_sectors = io->len / SECTOR;
	io->rq.op = (uint8_t)io->op;
	io->rq.flags = io->op == ELV_OP_READ ? ELV_RQ_SYNC : 0;
	io->rq.stream = &t->stream;
	return io;
}

/* Check a finished request against what this thread last wrote there. */
static void retire(struct thread_ctx *t, struct io *io)
{
	uint32_t s;

	if (io->res < 0) {
		if (t->io_errors++ == 0)
			fprintf(stderr, "%s at byte %" PRIu64 ": %s\n",
				io->op == ELV_OP_READ ? "read" : "write", io->offset,
				strerror(-io->res));
	} else if (io->op == ELV_OP_READ) {
		t->verify_errors += check(io->buf, io->offset, io->len);
	} else {
		for (s = 0; s < io->len; s += SECTOR)
			expect_gen[(io->offset + s) / SECTOR] = io->gen;
	}
	t->lat[io->op == ELV_OP_WRITE][t->nr_lat[io->op == ELV_OP_WRITE]++] = io->lat;
	t->bytes += io->len;
	t->slot_busy[io->slot] = 0;
	t->free_io[t->nr_free++] = io;
	t->finished++;
}

static void *submitter_main(void *arg)
{
	struct thread_ctx *t = arg;
	struct driver *d = t->drv;

	pthread_mutex_lock(&d->lock);
	while (t->finished < o->ios) {
		if (t->done) {
			struct io *io = t->done;

			t->done = io->done_next;
			pthread_mutex_unlock(&d->lock);
			retire(t, io);
			pthread_mutex_lock(&d->lock);
		} else if (t->issued < o->ios && t->nr_free) {
			struct io *io;
			int r;

			pthread_mutex_unlock(&d->lock);
			io = new_io(t);
			t->issued++;
			pthread_mutex_lock(&d->lock);
			io->added = now_ns();
			r = elv_add(d->q, &io->rq, io->added); /* 1: merged into a queued one */
			if (r < 0) {
				fprintf(stderr, "elv_add: %s (%d)\n", elv_strerror(r), r);
				io->res = -EIO;
				io->done_next = t->done;
				t->done = io;
				continue;
			}
			kick(d, io->added);
		} else {
			pthread_cond_wait(&t->cv, &d->lock);
		}
	}
	pthread_mutex_unlock(&d->lock);
	return NULL;
}

/* ---- one run per policy -------------------------------------------------------------- */

struct result {
	uint64_t bytes, ns, merges;
	unsigned ios, verify_errors, io_errors;
	double p50[2], p99[2]; /* ms, [read, write] */
	unsigned n[2];
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static double pct(const uint64_t *v, unsigned n, double p)
{
	size_t i;

	if (!n)
		return 0;
	i = (size_t)(p * (double)(n - 1) + 0.5);
	return (double)v[i] / 1e6;
}

static int start_backend(struct driver *d, pthread_t *tids, unsigned *nr)
{
	unsigned i;

	*nr = 0;
	if (d->use_uring)
		return pthread_create(&tids[(*nr)++], NULL, reaper_main, d);
	for (i = 0; i < d->depth; i++) {
		int r = pthread_create(&tids[*nr], NULL, worker_main, d);

		if (r)
			return r;
		(*nr)++;
	}
	return 0;
}

static void stop_backend(struct driver *d, pthread_t *tids, unsigned nr)
{
	unsigned i;

	pthread_mutex_lock(&d->lock);
	d->stop = 1;
	pthread_cond_broadcast(&d->work_cv);
	pthread_cond_broadcast(&d->timer_cv);
	if (d->use_uring && nr) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&d->ring);

		if (sqe) {
			io_uring_prep_nop(sqe);
			io_uring_sqe_set_data64(sqe, STOP_TAG);
			io_uring_submit(&d->ring);
		}
	}
	pthread_mutex_unlock(&d->lock);
	for (i = 0; i < nr; i++)
		pthread_join(tids[i], NULL);
}

static int run_policy(struct driver *d, const struct elv_policy *p, struct thread_ctx *th,
		      struct result *res)
{
	struct elv_config cfg;
	struct elv_stats st;
	pthread_t backend[1024], timer;
	unsigned i, j, nr_backend = 0;
	uint64_t *all[2], t0;
	int r;

	memset(&cfg, 0, sizeof(cfg));
	cfg.dev.queue_depth = (uint16_t)d->depth;
	cfg.dev.max_sectors = MAX_SEGS * ALIGN / SECTOR;
	cfg.merge = on_merge;
	cfg.allow_merge = allow_merge;
	r = elv_queue_create(&d->q, p, &cfg);
	if (r) {
		fprintf(stderr, "%s: elv_queue_create: %s\n", elv_policy_name(p), elv_strerror(r));
		return 1;
	}
	d->stop = 0;
	d->in_flight = 0;
	d->timer_at = ELV_TIME_NEVER;
	t0 = now_ns();
	for (i = 0; i < o->threads && !r; i++) {
		th[i].finished = th[i].issued = 0;
		th[i].nr_lat[0] = th[i].nr_lat[1] = 0;
		th[i].bytes = 0;
		th[i].verify_errors = th[i].io_errors = 0;
		memset(&th[i].stream, 0, sizeof(th[i].stream));
		th[i].stream.ioprio = ELV_PRIO(ELV_PRIO_BE, ELV_PRIO_DEFAULT_LEVEL);
		r = elv_stream_init(d->q, &th[i].stream, t0);
	}
	if (!r)
		r = start_backend(d, backend, &nr_backend);
	if (!r)
		r = pthread_create(&timer, NULL, timer_main, d);
	if (r) {
		fprintf(stderr, "%s: cannot start: %s\n", elv_policy_name(p),
			r < 0 ? elv_strerror(r) : strerror(r));
		stop_backend(d, backend, nr_backend);
		return 1;
	}
	for (i = 0; i < o->threads; i++)
		if (pthread_create(&th[i].tid, NULL, submitter_main, &th[i])) {
			fprintf(stderr, "cannot start a submitting thread\n");
			exit(1); /* the others never finish */
		}
	for (i = 0; i < o->threads; i++)
		pthread_join(th[i].tid, NULL);
	res->ns = now_ns() - t0;
	stop_backend(d, backend, nr_backend);
	pthread_join(timer, NULL);

	memset(&st, 0, sizeof(st));
	elv_stats(d->q, &st);
	res->merges = st.merged_back + st.merged_front + st.merged_req;
	for (i = 0; i < o->threads; i++)
		elv_stream_exit(d->q, &th[i].stream, now_ns());
	r = elv_queue_destroy(d->q);
	d->q = NULL;
	if (r)
		fprintf(stderr, "%s: elv_queue_destroy: %s\n", elv_policy_name(p), elv_strerror(r));

	for (j = 0; j < 2; j++) {
		unsigned n = 0;

		all[j] = malloc(((size_t)o->ios * o->threads + 1) * sizeof(uint64_t));
		if (!all[j]) {
			fprintf(stderr, "out of memory\n");
			exit(1);
		}
		for (i = 0; i < o->threads; i++) {
			memcpy(all[j] + n, th[i].lat[j], th[i].nr_lat[j] * sizeof(uint64_t));
			n += th[i].nr_lat[j];
		}
		qsort(all[j], n, sizeof(uint64_t), cmp_u64);
		res->n[j] = n;
		res->p50[j] = pct(all[j], n, 0.50);
		res->p99[j] = pct(all[j], n, 0.99);
		free(all[j]);
	}
	res->bytes = 0;
	res->ios = res->verify_errors = res->io_errors = 0;
	for (i = 0; i < o->threads; i++) {
		res->bytes += th[i].bytes;
		res->ios += th[i].finished;
		res->verify_errors += th[i].verify_errors;
		res->io_errors += th[i].io_errors;
	}
	return r ? 1 : 0;
}

/* ---- setup --------------------------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: uring-driver --file PATH [options]\n"
		"  --file PATH      file or block device (its data is overwritten)\n"
		"  --size BYTES     bytes used, K/M/G suffixes (default 64M; created if missing)\n"
		"  --policy LIST    comma-separated policies, or all (default all)\n"
		"  --read-pct N     share of reads in percent (default 70)\n"
		"  --bs MIN[-MAX]   request size, multiples of 4K (default 4K-64K)\n"
		"  --depth N        commands at the device at once (default 32)\n"
		"  --threads N      submitting threads (default 4)\n"
		"  --thread-qd N    requests each thread keeps outstanding (default 8)\n"
		"  --ios N          requests per thread and policy (default 2000)\n"
		"  --sequential     each thread writes and reads its region in order\n"
		"  --no-uring       use the pread/pwrite thread pool even when io_uring works\n"
		"  --seed N         random seed (default 1)\n");
}

static int parse_bytes(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *s == '-')
		return -1;
	switch (*end) {
	case 'k': case 'K': v <<= 10; end++; break;
	case 'm': case 'M': v <<= 20; end++; break;
	case 'g': case 'G': v <<= 30; end++; break;
	default: break;
	}
	if (*end)
		return -1;
	*out = v;
	return 0;
}

static int parse_uint(const char *s, unsigned lo, unsigned hi, unsigned *out)
{
	uint64_t v;

	if (parse_bytes(s, &v) || v < lo || v > hi)
		return -1;
	*out = (unsigned)v;
	return 0;
}

static int parse_opts(int argc, char **argv, struct opts *op)
{
	int i;

	memset(op, 0, sizeof(*op));
	op->size = 64u << 20;
	op->read_pct = 70;
	op->min_bs = 4096;
	op->max_bs = 65536;
	op->depth = 32;
	op->threads = 4;
	op->thread_qd = 8;
	op->ios = 2000;
	op->seed = 1;
	op->policies = "all";
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		int bad = 0;

		if (strcmp(a, "--help") == 0) {
			usage(stdout);
			exit(0);
		} else if (strcmp(a, "--no-uring") == 0) {
			op->no_uring = 1;
			continue;
		} else if (strcmp(a, "--sequential") == 0) {
			op->sequential = 1;
			continue;
		}
		if (!v) {
			fprintf(stderr, "%s: missing value or unknown option\n", a);
			return -1;
		}
		i++;
		if (strcmp(a, "--file") == 0) {
			op->path = v;
		} else if (strcmp(a, "--size") == 0) {
			bad = parse_bytes(v, &op->size) || op->size == 0;
		} else if (strcmp(a, "--policy") == 0) {
			op->policies = v;
		} else if (strcmp(a, "--read-pct") == 0) {
			bad = parse_uint(v, 0, 100, &op->read_pct);
		} else if (strcmp(a, "--bs") == 0) {
			char lo[32];
			const char *dash = strchr(v, '-');
			uint64_t mn, mx;
			size_t l = dash ? (size_t)(dash - v) : strlen(v);

			bad = l >= sizeof(lo);
			if (!bad) {
				memcpy(lo, v, l);
				lo[l] = '\0';
				bad = parse_bytes(lo, &mn) || parse_bytes(dash ? dash + 1 : lo, &mx) ||
				      mn == 0 || mn > mx || mx > (1u << 20) || mn % ALIGN || mx % ALIGN;
			}
			if (!bad) {
				op->min_bs = (uint32_t)mn;
				op->max_bs = (uint32_t)mx;
			}
		} else if (strcmp(a, "--depth") == 0) {
			bad = parse_uint(v, 1, 1024, &op->depth);
		} else if (strcmp(a, "--threads") == 0) {
			bad = parse_uint(v, 1, 256, &op->threads);
		} else if (strcmp(a, "--thread-qd") == 0) {
			bad = parse_uint(v, 1, 1024, &op->thread_qd);
		} else if (strcmp(a, "--ios") == 0) {
			bad = parse_uint(v, 1, 100000000, &op->ios);
		} else if (strcmp(a, "--seed") == 0) {
			uint64_t sd;

			bad = parse_bytes(v, &sd);
			op->seed = sd;
		} else {
			fprintf(stderr, "%s: unknown option\n", a);
			return -1;
		}
		if (bad) {
			fprintf(stderr, "%s %s: bad value\n", a, v);
			return -1;
		}
	}
	if (!op->path) {
		fprintf(stderr, "--file is required\n");
		return -1;
	}
	if (op->size / op->threads / op->max_bs <= op->thread_qd) {
		fprintf(stderr, "--size %" PRIu64 ": too small for %u threads keeping %u requests "
			"of up to %u bytes each\n", op->size, op->threads, op->thread_qd, op->max_bs);
		return -1;
	}
	return 0;
}

static int open_target(struct opts *op)
{
	struct stat st;
	int fd = open(op->path, O_RDWR | O_CREAT | O_DIRECT | O_CLOEXEC, 0644);

	if (fd < 0 || fstat(fd, &st) != 0) {
		fprintf(stderr, "%s: %s (O_DIRECT)\n", op->path, strerror(errno));
		return -1;
	}
	if (S_ISBLK(st.st_mode)) {
		uint64_t dev_size;

		if (ioctl(fd, BLKGETSIZE64, &dev_size) != 0 || dev_size < op->size) {
			fprintf(stderr, "%s: smaller than --size\n", op->path);
			close(fd);
			return -1;
		}
	} else if ((uint64_t)st.st_size < op->size && ftruncate(fd, (off_t)op->size) != 0) {
		fprintf(stderr, "%s: %s\n", op->path, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* Write generation 0 everywhere, so that every later read has something to check. */
static int prefill(int fd, uint64_t size)
{
	uint8_t *buf;
	uint64_t off;
	uint32_t chunk = 1u << 20;

	if (posix_memalign((void **)&buf, ALIGN, chunk))
		return -1;
	for (off = 0; off < size; off += chunk) {
		uint32_t n = size - off < chunk ? (uint32_t)(size - off) : chunk;

		fill(buf, off, n, 0);
		if (pwrite(fd, buf, n, (off_t)off) != (ssize_t)n) {
			fprintf(stderr, "prefill at byte %" PRIu64 ": %s\n", off, strerror(errno));
			free(buf);
			return -1;
		}
	}
	free(buf);
	return fsync(fd);
}

static int setup_threads(struct driver *d, struct thread_ctx *th)
{
	uint64_t region = o->size / o->threads / o->max_bs * o->max_bs;
	unsigned i, j;

	for (i = 0; i < o->threads; i++) {
		struct thread_ctx *t = &th[i];

		t->drv = d;
		t->region = region * i;
		t->region_len = region;
		t->nr_slots = (unsigned)(region / o->max_bs);
		t->rng = o->seed * 1000003u + i;
		if (pthread_cond_init(&t->cv, NULL))
			return -1;
		t->ios = calloc(o->thread_qd, sizeof(*t->ios));
		t->free_io = calloc(o->thread_qd, sizeof(*t->free_io));
		t->slot_busy = calloc(t->nr_slots, 1);
		t->lat[0] = calloc(o->ios, sizeof(uint64_t));
		t->lat[1] = calloc(o->ios, sizeof(uint64_t));
		if (!t->ios || !t->free_io || !t->slot_busy || !t->lat[0] || !t->lat[1])
			return -1;
		for (j = 0; j < o->thread_qd; j++) {
			if (posix_memalign((void **)&t->ios[j].buf, ALIGN, o->max_bs))
				return -1;
			t->ios[j].owner = t;
			t->free_io[t->nr_free++] = &t->ios[j];
		}
	}
	return 0;
}

static void free_threads(struct thread_ctx *th)
{
	unsigned i, j;

	for (i = 0; i < o->threads; i++) {
		for (j = 0; th[i].ios && j < o->thread_qd; j++)
			free(th[i].ios[j].buf);
		free(th[i].ios);
		free(th[i].free_io);
		free(th[i].slot_busy);
		free(th[i].lat[0]);
		free(th[i].lat[1]);
		pthread_cond_destroy(&th[i].cv);
	}
	free(th);
}

/* The policies named by --policy, in order; NULL-terminated. */
static int pick_policies(const struct elv_policy **out, unsigned max)
{
	char list[256], *tok, *save = NULL;
	unsigned n = 0;

	if (strcmp(o->policies, "all") == 0) {
		const struct elv_policy *p;

		while (n < max - 1 && (p = elv_policy_at(n)) != NULL)
			out[n++] = p;
		out[n] = NULL;
		return 0;
	}
	if (strlen(o->policies) >= sizeof(list))
		return -1;
	strcpy(list, o->policies);
	for (tok = strtok_r(list, ",", &save); tok && n < max - 1;
	     tok = strtok_r(NULL, ",", &save)) {
		out[n] = elv_policy_find(tok);
		if (!out[n]) {
			fprintf(stderr, "--policy %s: unknown policy\n", tok);
			return -1;
		}
		n++;
	}
	out[n] = NULL;
	return n ? 0 : -1;
}

int main(int argc, char **argv)
{
	static struct opts op;
	static struct driver drv;
	const struct elv_policy *pols[32];
	struct thread_ctx *th;
	pthread_condattr_t ca;
	unsigned i, failed = 0, total_verify = 0;

	if (parse_opts(argc, argv, &op)) {
		usage(stderr);
		return 2;
	}
	o = &op;
	if (pick_policies(pols, 32))
		return 2;
	drv.fd = open_target(&op);
	if (drv.fd < 0)
		return 1;
	drv.depth = op.depth;
	drv.work_tail = &drv.work_head;
	pthread_mutex_init(&drv.lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&drv.timer_cv, &ca);
	pthread_condattr_destroy(&ca);
	pthread_cond_init(&drv.work_cv, NULL);
	if (op.no_uring) {
		printf("I/O path: pread/pwrite thread pool of %u threads (--no-uring)\n", op.depth);
	} else {
		int r = io_uring_queue_init(op.depth + 1, &drv.ring, 0);

		if (r < 0) {
			printf("I/O path: pread/pwrite thread pool of %u threads (io_uring_setup "
			       "refused: %s)\n", op.depth, strerror(-r));
		} else {
			drv.use_uring = 1;
			printf("I/O path: io_uring (%u entries)\n", drv.ring.sq.ring_entries);
		}
	}
	expect_gen = calloc(op.size / SECTOR, sizeof(*expect_gen));
	th = calloc(op.threads, sizeof(*th));
	if (!expect_gen || !th || setup_threads(&drv, th) || prefill(drv.fd, op.size)) {
		fprintf(stderr, "setup failed\n");
		return 1;
	}
	printf("%s: %" PRIu64 " MiB, %u threads x %u outstanding, depth %u, %u%% reads, ",
	       op.path, op.size >> 20, op.threads, op.thread_qd, op.depth, op.read_pct);
	if (op.sequential)
		printf("%u KiB sequential", op.max_bs >> 10);
	else
		printf("%u-%u KiB random", op.min_bs >> 10, op.max_bs >> 10);
	printf(", %u requests per thread\n\n", op.ios);
	printf("%-14s %8s %9s %9s %11s %11s %12s %12s %7s %8s\n", "policy", "requests",
	       "MB/s", "IOPS", "rd p50 ms", "rd p99 ms", "wr p50 ms", "wr p99 ms", "merges",
	       "bad");
	for (i = 0; pols[i]; i++) {
		struct result res;
		double secs;

		memset(&res, 0, sizeof(res));
		failed += (unsigned)run_policy(&drv, pols[i], th, &res);
		secs = (double)res.ns / 1e9;
		printf("%-14s %8u %9.1f %9.0f %11.3f %11.3f %12.3f %12.3f %7" PRIu64 " %8u\n",
		       elv_policy_name(pols[i]), res.ios, (double)res.bytes / 1e6 / secs,
		       res.ios / secs, res.p50[0], res.p99[0], res.p50[1], res.p99[1], res.merges,
		       res.verify_errors + res.io_errors);
		fflush(stdout);
		total_verify += res.verify_errors + res.io_errors;
		if (res.ios != op.ios * op.threads)
			failed++;
	}
	printf("\npolicies run: %u, sectors failing verification or I/O errors: %u\n", i,
	       total_verify);
	if (drv.use_uring)
		io_uring_queue_exit(&drv.ring);
	free_threads(th);
	free(expect_gen);
	close(drv.fd);
	return failed || total_verify ? 1 : 0;
}
