/*
 * control=FILE: policy, tunables and per-connection QoS changed while clients are connected.
 *
 * A thread watches the file's directory with inotify and re-reads the file each time it is
 * closed after writing or renamed into place. A version is applied whole or not at all: it
 * is parsed and checked first (policy exists, every tunable exists in the policy that will
 * run and is in range), then applied under the queue lock, so requests see either the old
 * or the new settings. A refused version is logged with its line and leaves everything as
 * it was. Linux-only, as is inotify; nothing polls.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <nbdkit-filter.h>

#include "elvf.h"

#define ELVF_CONTROL_MAX 65536

static int ino_fd = -1;
static int wake_fd = -1;
static pthread_t watcher;
static int watcher_started;
static const char *base_name;

/* The whole file as a string; NULL with errno set when it cannot be read. */
static char *slurp(const char *path)
{
	char *buf;
	ssize_t n;
	size_t len = 0;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	buf = malloc(ELVF_CONTROL_MAX + 1);
	if (!buf) {
		close(fd);
		errno = ENOMEM;
		return NULL;
	}
	while (len < ELVF_CONTROL_MAX && (n = read(fd, buf + len, ELVF_CONTROL_MAX - len)) > 0)
		len += (size_t)n;
	close(fd);
	buf[len] = '\0';
	return buf;
}

/* Read, check and apply the file. @at_start: a refusal stops nbdkit. */
static int control_apply(int at_start)
{
	const char *path = elvf.prm.control_path;
	struct elvf_settings s;
	char where[512];
	char *text;
	int r;

	text = slurp(path);
	if (!text) {
		if (errno == ENOENT)
			return 0;
		nbdkit_error("control=%s: %s", path, strerror(errno));
		return -1;
	}
	r = elvf_control_parse(path, text, &s);
	free(text);
	(void)snprintf(where, sizeof(where), "control=%s: ", path);
	pthread_mutex_lock(&elvf.lock);
	/* QoS is checked before anything changes, and applied after the policy. */
	if (r == 0)
		r = elvf_qos_apply_locked(&s.qos, where, 0);
	if (r == 0)
		r = elvf_apply_locked(&s, where);
	if (r == 0)
		r = elvf_qos_apply_locked(&s.qos, where, 1);
	if (r == 0)
		elvf.control_applied++;
	else
		elvf.control_rejected++;
	pthread_mutex_unlock(&elvf.lock);
	if (r == 0 && !at_start)
		nbdkit_debug("control file applied: policy %s",
			     elv_policy_name(elv_queue_policy(elvf.q)));
	return r;
}

int elvf_control_load(void)
{
	return elvf.prm.control_path ? control_apply(1) : 0;
}

/* True when the buffer holds an event for our file name. */
static int names_our_file(const char *buf, ssize_t len)
{
	const struct inotify_event *ev;
	ssize_t off = 0;

	while (off < len) {
		ev = (const struct inotify_event *)(const void *)(buf + off);
		if (ev->len && strcmp(ev->name, base_name) == 0)
			return 1;
		if (ev->mask & IN_Q_OVERFLOW)
			return 1;
		off += (ssize_t)sizeof(*ev) + ev->len;
	}
	return 0;
}

static void *watch_main(void *arg)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	struct pollfd pfd[2] = { { .fd = ino_fd, .events = POLLIN },
				 { .fd = wake_fd, .events = POLLIN } };
	ssize_t n;

	(void)arg;
	for (;;) {
		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			nbdkit_error("control file watch: %s", strerror(errno));
			break;
		}
		if (pfd[1].revents)
			break;
		n = read(ino_fd, buf, sizeof(buf));
		if (n > 0 && names_our_file(buf, n))
			control_apply(0);
	}
	return NULL;
}

int elvf_control_start(void)
{
	char *dir, *slash;
	int r;

	if (!elvf.prm.control_path || watcher_started)
		return 0;
	dir = strdup(elvf.prm.control_path);
	if (!dir) {
		nbdkit_error("control=%s: out of memory", elvf.prm.control_path);
		return -1;
	}
	slash = strrchr(dir, '/');
	base_name = elvf.prm.control_path + (slash - dir) + 1;
	*(slash == dir ? slash + 1 : slash) = '\0';
	ino_fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	wake_fd = eventfd(0, EFD_CLOEXEC);
	if (ino_fd < 0 || wake_fd < 0 ||
	    inotify_add_watch(ino_fd, dir, IN_CLOSE_WRITE | IN_MOVED_TO) < 0) {
		nbdkit_error("control=%s: cannot watch %s: %s", elvf.prm.control_path, dir,
			     strerror(errno));
		free(dir);
		elvf_control_stop();
		return -1;
	}
	free(dir);
	r = pthread_create(&watcher, NULL, watch_main, NULL);
	if (r) {
		nbdkit_error("control=%s: cannot start its thread: %s", elvf.prm.control_path,
			     strerror(r));
		elvf_control_stop();
		return -1;
	}
	watcher_started = 1;
	return 0;
}

void elvf_control_stop(void)
{
	uint64_t one = 1;

	if (watcher_started) {
		if (write(wake_fd, &one, sizeof(one)) != (ssize_t)sizeof(one))
			nbdkit_error("control file watch: cannot stop it");
		else
			pthread_join(watcher, NULL);
		watcher_started = 0;
	}
	if (ino_fd >= 0)
		close(ino_fd);
	if (wake_fd >= 0)
		close(wake_fd);
	ino_fd = wake_fd = -1;
}
