/* Shared by the shim-safety programs: every return value is checked, and
 * the first surprise ends the program with a message on stderr and exit
 * status 1, so the driver (shim_safety.py) sees it whatever the shim did.
 * Header-only: each program is a single small file plus this. */
#ifndef IOP_SAFETY_CHECK_H
#define IOP_SAFETY_CHECK_H

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

__attribute__((format(printf, 3, 4), noreturn)) static inline void
safety_die(const char *file, int line, const char *fmt, ...)
{
	int e = errno;
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	fprintf(stderr, "SURPRISE %s:%d: %s (errno %d %s)\n", file, line, msg, e, strerror(e));
	fflush(stderr);
	_exit(1); /* not exit(): a surprise inside an atexit handler must not loop */
}

/* CHECK(cond, "what %d", x): dies unless cond holds. */
#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond))                                                                       \
			safety_die(__FILE__, __LINE__, __VA_ARGS__);                               \
	} while (0)

static inline double safety_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Runs this program again as `argv0 mode` with stdin and stderr closed,
 * as a program started without them is; returns only when the exec fails
 * (1, said on stdout: there is no stderr by then). */
static inline int safety_exec_without_std(const char *argv0, const char *mode)
{
	fflush(stdout);
	close(0);
	close(2);
	execl("/proc/self/exe", argv0, mode, (char *)NULL);
	printf("SURPRISE exec: %s\n", strerror(errno));
	return 1;
}

/* A buffer of n bytes of a recognisable pattern (static: n <= 64 KiB). */
static inline const char *safety_pattern(size_t n)
{
	static char buf[65536];
	if (n > sizeof buf)
		safety_die(__FILE__, __LINE__, "pattern of %zu bytes is too long", n);
	for (size_t i = 0; i < n; i++)
		buf[i] = (char)('a' + i % 26);
	return buf;
}

/* write() of exactly n bytes, checked. */
#define WRITE_ALL(fd, buf, n)                                                                      \
	do {                                                                                       \
		ssize_t w_ = write((fd), (buf), (n));                                              \
		CHECK(w_ == (ssize_t)(n), "write(%d, %zu) returned %zd", (fd), (size_t)(n), w_);   \
	} while (0)

#define PWRITE_ALL(fd, buf, n, off)                                                                \
	do {                                                                                       \
		ssize_t w_ = pwrite((fd), (buf), (n), (off));                                      \
		CHECK(w_ == (ssize_t)(n), "pwrite(%d, %zu, %lld) returned %zd", (fd), (size_t)(n), \
		      (long long)(off), w_);                                                       \
	} while (0)

#define CLOSE_OK(fd)                                                                               \
	do {                                                                                       \
		int c_ = close(fd);                                                                \
		CHECK(c_ == 0, "close(%d) returned %d", (fd), c_);                                 \
	} while (0)

#endif
