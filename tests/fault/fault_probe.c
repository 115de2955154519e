/* fault_probe: a small program for libiopfault.so's tests. It calls the
 * wrapped functions on regular files (and, for contrast, on a pipe and a
 * socket), times each call, and prints one JSON line per call, so a driver
 * (run_fault.py) can see which calls a fault slowed and that each returned
 * what it would have without it:
 *
 *   {"fn":"pwrite","file":"a.dat","t":0.1042,"dur_us":2061.3,"ret":4096,
 *    "ok":true,"errno_kept":true}
 *
 * Functions: write read writev readv pwrite pwrite64 pread pread64 pwritev
 * pwritev64 pwritev2 preadv preadv64 preadv2 fsync fdatasync, and
 * write_rdonly (a write on a read-only fd of the file: fails with EBADF),
 * dup_write (a write through a dup of the fd), pipe_write, sock_write,
 * fwrite, fprintf, fread (stdio, at the start of the file; writes flushed).
 *
 *   fault_probe -d DIR [-f a.dat,b.dat] [-x write,pread,...] [-c ROUNDS]
 *               [-t SECONDS] [-i INTERVAL_MS] [-s BYTES] [-w SECONDS]
 *
 * A round calls every function (-x) on every file (-f); rounds repeat -c
 * times, or until -t seconds have passed, -i ms apart; the first one after
 * -w seconds of nothing. "t" is seconds since
 * main() started (the fault library's clock starts a little earlier, when
 * it is loaded). "ok": the return value (and errno, for the call meant to
 * fail) is the expected one. "errno_kept": a successful call left errno as
 * it was before it (the probe sets a sentinel), so the wrappers restore it.
 * First line: {"ready":true,"pid":N}. Exit status 0, or 2 on bad usage. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define MAX_FILES    4
#define MAX_FNS      32
#define ERRNO_SENTRY 4242 /* no real errno has this value */

struct target {
	const char *name;
	int fd;        /* read-write */
	int rdonly_fd; /* the same file, for the call that must fail */
	int dup_fd;    /* a dup: never seen opened, so resolved on first use */
	FILE *stream;  /* the same file through stdio */
};

struct probe {
	struct target files[MAX_FILES];
	int n_files;
	const char *fns[MAX_FNS];
	int n_fns;
	size_t bytes;
	char *buf;
	int pipe_fd[2], sock_fd[2];
	double t0;
};

static _Noreturn void unknown(const char *fn)
{
	fprintf(stderr, "fault_probe: unknown function %s\n", fn);
	exit(2);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A stream call at the start of the file; a write is flushed (not timed
 * apart: fflush is not faulted) so that each call reaches the file. */
static ssize_t stdio_call(struct probe *p, const char *fn, FILE *f)
{
	ssize_t r = -1;
	rewind(f);
	if (strcmp(fn, "fwrite") == 0)
		r = (ssize_t)fwrite(p->buf, 1, p->bytes, f);
	else if (strcmp(fn, "fprintf") == 0)
		r = fprintf(f, "%0*d", (int)p->bytes, 0);
	else if (strcmp(fn, "fread") == 0)
		return (ssize_t)fread(p->buf, 1, p->bytes, f);
	else
		unknown(fn);
	return fflush(f) == 0 ? r : -1;
}

/* Calls fn once on t; *want is what it must return. */
static ssize_t call(struct probe *p, const char *fn, struct target *t, ssize_t *want,
                    int *want_errno)
{
	struct iovec iov[2] = {{p->buf, p->bytes / 2},
	                       {p->buf + p->bytes / 2, p->bytes - p->bytes / 2}};
	int fd = t->fd;
	*want = (ssize_t)p->bytes;
	*want_errno = 0;
	if (strcmp(fn, "dup_write") == 0)
		fn = "write", fd = t->dup_fd;
	if (strcmp(fn, "write") == 0 || strcmp(fn, "read") == 0 || strcmp(fn, "readv") == 0 ||
	    strcmp(fn, "writev") == 0)
		lseek(fd, 0, SEEK_SET); /* the sequential forms at offset 0 too */
	if (strcmp(fn, "write") == 0)
		return write(fd, p->buf, p->bytes);
	if (strcmp(fn, "read") == 0)
		return read(fd, p->buf, p->bytes);
	if (strcmp(fn, "writev") == 0)
		return writev(fd, iov, 2);
	if (strcmp(fn, "readv") == 0)
		return readv(fd, iov, 2);
	if (strcmp(fn, "pwrite") == 0)
		return pwrite(fd, p->buf, p->bytes, 0);
	if (strcmp(fn, "pwrite64") == 0)
		return pwrite64(fd, p->buf, p->bytes, 0);
	if (strcmp(fn, "pread") == 0)
		return pread(fd, p->buf, p->bytes, 0);
	if (strcmp(fn, "pread64") == 0)
		return pread64(fd, p->buf, p->bytes, 0);
	if (strcmp(fn, "pwritev") == 0)
		return pwritev(fd, iov, 2, 0);
	if (strcmp(fn, "pwritev64") == 0)
		return pwritev64(fd, iov, 2, 0);
	if (strcmp(fn, "pwritev2") == 0)
		return pwritev2(fd, iov, 2, 0, 0);
	if (strcmp(fn, "preadv") == 0)
		return preadv(fd, iov, 2, 0);
	if (strcmp(fn, "preadv64") == 0)
		return preadv64(fd, iov, 2, 0);
	if (strcmp(fn, "preadv2") == 0)
		return preadv2(fd, iov, 2, 0, 0);
	*want = 0;
	if (strcmp(fn, "fsync") == 0)
		return fsync(fd);
	if (strcmp(fn, "fdatasync") == 0)
		return fdatasync(fd);
	*want = -1;
	*want_errno = EBADF;
	if (strcmp(fn, "write_rdonly") == 0) /* a regular file, and a failing call */
		return write(t->rdonly_fd, p->buf, p->bytes);
	*want = (ssize_t)p->bytes;
	*want_errno = 0;
	if (strcmp(fn, "pipe_write") == 0)
		return write(p->pipe_fd[1], p->buf, p->bytes);
	if (strcmp(fn, "sock_write") == 0)
		return write(p->sock_fd[0], p->buf, p->bytes);
	return stdio_call(p, fn, t->stream); /* or unknown */
}

/* Empties the pipe and the socket after a write to them (not timed). */
static void drain(struct probe *p, const char *fn)
{
	int fd = strcmp(fn, "pipe_write") == 0   ? p->pipe_fd[0]
	         : strcmp(fn, "sock_write") == 0 ? p->sock_fd[1]
	                                         : -1;
	for (size_t got = 0; fd >= 0 && got < p->bytes;) {
		ssize_t n = read(fd, p->buf, p->bytes - got);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
}

static void round_of_calls(struct probe *p)
{
	for (int f = 0; f < p->n_files; f++) {
		for (int k = 0; k < p->n_fns; k++) {
			ssize_t want;
			int want_errno;
			double t = now_s();
			errno = ERRNO_SENTRY;
			ssize_t r = call(p, p->fns[k], &p->files[f], &want, &want_errno);
			int e = errno;
			double dur = now_s() - t;
			bool ok = r == want && (want >= 0 || e == want_errno);
			printf("{\"fn\":\"%s\",\"file\":\"%s\",\"t\":%.6f,\"dur_us\":%.1f,"
			       "\"ret\":%zd,\"errno\":%d,\"ok\":%s,\"errno_kept\":%s}\n",
			       p->fns[k], p->files[f].name, t - p->t0, dur * 1e6, r, r < 0 ? e : 0,
			       ok ? "true" : "false",
			       r < 0 || e == ERRNO_SENTRY ? "true" : "false");
			fflush(stdout);
			drain(p, p->fns[k]);
		}
	}
}

static void split(char *list, const char **out, int *n, int max)
{
	for (char *s = strtok(list, ","); s && *n < max; s = strtok(NULL, ","))
		out[(*n)++] = s;
}

static void open_files(struct probe *p, const char *dir, const char **names)
{
	mkdir(dir, 0755);
	for (int f = 0; f < p->n_files; f++) {
		char path[4096];
		struct target *t = &p->files[f];
		snprintf(path, sizeof path, "%s/%s", dir, names[f]);
		t->name = names[f];
		t->fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
		t->rdonly_fd = open(path, O_RDONLY);
		t->dup_fd = dup(t->fd);
		if (t->fd < 0 || t->rdonly_fd < 0 || t->dup_fd < 0 ||
		    ftruncate(t->fd, (off_t)p->bytes) != 0 ||
		    !(t->stream = fdopen(dup(t->fd), "r+"))) {
			fprintf(stderr, "fault_probe: %s: %s\n", path, strerror(errno));
			exit(1);
		}
	}
}

int main(int argc, char **argv)
{
	static struct probe p = {.bytes = 4096};
	const char *dir = NULL, *names[MAX_FILES];
	char files[256] = "a.dat", fns[512] = "write,read";
	long rounds = 1;
	double seconds = 0, interval_ms = 0, wait_s = 0;
	int c;
	p.t0 = now_s();
	while ((c = getopt(argc, argv, "d:f:x:c:t:i:s:w:")) != -1) {
		switch (c) {
		case 'd':
			dir = optarg;
			break;
		case 'f':
			snprintf(files, sizeof files, "%s", optarg);
			break;
		case 'x':
			snprintf(fns, sizeof fns, "%s", optarg);
			break;
		case 'c':
			rounds = atol(optarg);
			break;
		case 't':
			seconds = atof(optarg);
			break;
		case 'i':
			interval_ms = atof(optarg);
			break;
		case 's':
			p.bytes = (size_t)atol(optarg);
			break;
		case 'w':
			wait_s = atof(optarg);
			break;
		default:
			return 2;
		}
	}
	split(files, names, &p.n_files, MAX_FILES);
	split(fns, p.fns, &p.n_fns, MAX_FNS);
	if (!dir || !p.n_files || !p.n_fns || p.bytes < 2 || p.bytes > (1u << 20)) {
		fprintf(stderr, "usage: fault_probe -d DIR [-f FILES] [-x FUNCS] [-c ROUNDS] "
		                "[-t SECONDS] [-i INTERVAL_MS] [-s BYTES] [-w SECONDS]\n");
		return 2;
	}
	p.buf = calloc(1, p.bytes);
	if (!p.buf || pipe(p.pipe_fd) != 0 || socketpair(AF_UNIX, SOCK_STREAM, 0, p.sock_fd) != 0)
		return 1;
	open_files(&p, dir, names);
	printf("{\"ready\":true,\"pid\":%d}\n", (int)getpid());
	fflush(stdout);
	if (wait_s > 0) {
		struct timespec ts = {(time_t)wait_s, (long)((wait_s - (time_t)wait_s) * 1e9)};
		nanosleep(&ts, NULL);
	}
	for (long r = 0; seconds > 0 ? now_s() - p.t0 < seconds : r < rounds; r++) {
		round_of_calls(&p);
		if (interval_ms > 0) {
			struct timespec ts = {(time_t)(interval_ms / 1000),
			                      (long)(interval_ms * 1e6) % 1000000000L};
			nanosleep(&ts, NULL);
		}
	}
	return 0;
}
