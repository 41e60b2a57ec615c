/*
 * Trace scenarios and compressed trace files for elvsim (see trace_scn.h). Decompression
 * runs the system's xz or gzip in a child process, so that the simulator library keeps no
 * compression dependency.
 */
#define _POSIX_C_SOURCE 200809L
#include "trace_scn.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef ELV_TRACE_DIR
#define ELV_TRACE_DIR "traces"
#endif

static const struct trace_scn scns[] = {
	{ "trace-postmark-usb", "postmark-usb.ftrace.xz", "usb-stick",
	  "recorded: PostMark 1.53 (USB-flash parameters) on ext4 -o sync" },
	{ "trace-stream-vs-small-files", "stream-vs-small-files.ftrace.xz", "ide2003",
	  "recorded: a source tree read while a 512 MB file streams" },
	{ "trace-write-bomb", "write-bomb.ftrace.xz", "ide2003",
	  "recorded: a dd write loop against an interactive reader" },
};

const struct trace_scn *trace_scn_at(unsigned i)
{
	return i < sizeof(scns) / sizeof(scns[0]) ? &scns[i] : NULL;
}

const struct trace_scn *trace_scn_find(const char *name)
{
	unsigned i;

	for (i = 0; name && trace_scn_at(i); i++)
		if (strcmp(scns[i].name, name) == 0)
			return &scns[i];
	return NULL;
}

int trace_scn_path(const struct trace_scn *s, char *buf, size_t len)
{
	const char *dir = getenv("ELV_TRACE_DIR");
	int k;

	if (!dir || !*dir)
		dir = ELV_TRACE_DIR;
	k = snprintf(buf, len, "%s/%s", dir, s->file);
	return k < 0 || (size_t)k >= len ? -1 : 0;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* Read all of fd into a malloc'ed buffer. */
static int read_all(int fd, unsigned char **out, size_t *outlen)
{
	unsigned char *buf = NULL, *nb;
	size_t len = 0, cap = 0;
	ssize_t got;

	for (;;) {
		if (len == cap) {
			cap = cap ? cap * 2 : 1u << 20;
			nb = realloc(buf, cap);
			if (!nb) {
				free(buf);
				return ELV_ENOMEM;
			}
			buf = nb;
		}
		got = read(fd, buf + len, cap - len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			free(buf);
			return ELV_EINVAL;
		}
		if (got == 0)
			break;
		len += (size_t)got;
	}
	*out = buf;
	*outlen = len;
	return 0;
}

/* Run "tool -dc -- path" and collect its output. */
static int decompress(const char *tool, const char *path, unsigned char **out, size_t *len,
		      char *err, size_t errlen)
{
	int fds[2], status = 0, r;
	pid_t pid;

	if (access(path, R_OK) != 0) {
		int e = errno;

		snprintf(err, errlen, "%s: cannot open: %s", path, strerror(e));
		return e == ENOENT ? ELV_ENOENT : ELV_EINVAL;
	}
	if (pipe(fds) != 0) {
		snprintf(err, errlen, "%s: cannot make a pipe for %s", path, tool);
		return ELV_EINVAL;
	}
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		snprintf(err, errlen, "%s: cannot start %s", path, tool);
		return ELV_EINVAL;
	}
	if (pid == 0) {
		dup2(fds[1], STDOUT_FILENO);
		close(fds[0]);
		close(fds[1]);
		execlp(tool, tool, "-dc", "--", path, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	r = read_all(fds[0], out, len);
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!r && (!WIFEXITED(status) || WEXITSTATUS(status) != 0)) {
		free(*out);
		*out = NULL;
		snprintf(err, errlen, "%s: %s -dc failed (status %d%s)", path, tool,
			 WIFEXITED(status) ? WEXITSTATUS(status) : -1,
			 WIFEXITED(status) && WEXITSTATUS(status) == 127 ? ": not installed" : "");
		return ELV_EINVAL;
	}
	if (r)
		snprintf(err, errlen, "%s: cannot read the output of %s", path, tool);
	return r;
}

int trace_read_any(const char *path, enum elv_trace_format fmt, struct elv_trace_rec **recs,
		   size_t *n, char *err, size_t errlen)
{
	const char *tool = ends_with(path, ".xz") ? "xz" : ends_with(path, ".gz") ? "gzip" : NULL;
	unsigned char *buf = NULL;
	size_t len = 0;
	int r;

	if (!tool)
		return elv_trace_load(path, fmt, recs, n, err, errlen);
	*recs = NULL;
	*n = 0;
	r = decompress(tool, path, &buf, &len, err, errlen);
	if (r)
		return r;
	r = elv_trace_load_mem(buf, len, path, fmt, recs, n, err, errlen);
	free(buf);
	return r;
}
