/* See log.h: stack formatting, raw write(2) through syscall(). */
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "log.h"

static atomic_int log_level = -1; /* -1: not read from the environment yet */
static atomic_int log_fd = 2;
static char log_prefix[32] = "iopulse";

static const char *const level_names[] = {"error", "warn", "info", "debug"};

void iop_log_init(void)
{
	int level = IOP_LOG_WARN;
	const char *env = getenv("IOPULSE_LOG");
	for (int i = 0; env && i < 4; i++)
		if (strcmp(env, level_names[i]) == 0)
			level = i;
	atomic_store(&log_level, level);
}

void iop_log_set_level(enum iop_log_level level)
{
	atomic_store(&log_level, (int)level);
}

enum iop_log_level iop_log_get_level(void)
{
	if (atomic_load(&log_level) < 0)
		iop_log_init();
	return (enum iop_log_level)atomic_load(&log_level);
}

void iop_log_set_fd(int fd)
{
	atomic_store(&log_fd, fd);
}

void iop_log_set_prefix(const char *prefix)
{
	/* Set once at start-up, before threads log. */
	snprintf(log_prefix, sizeof log_prefix, "%s", prefix);
}

static void raw_write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		long w = syscall(SYS_write, fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return; /* nowhere to report a failed log write */
		}
		p += w;
		n -= (size_t)w;
	}
}

void iop_log(enum iop_log_level level, const char *fmt, ...)
{
	if ((int)level > (int)iop_log_get_level())
		return;
	int saved = errno;
	char line[IOP_LOG_LINE_MAX];
	int n = snprintf(line, sizeof line, "%s[%ld] %s: ", log_prefix, (long)syscall(SYS_getpid),
	                 level_names[level]);
	if (n < 0)
		n = 0;
	va_list ap;
	va_start(ap, fmt);
	int m = vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
	va_end(ap);
	size_t len = (size_t)n + (m > 0 ? (size_t)m : 0);
	if (len > sizeof line - 2) { /* cut: mark it, leave room for the newline */
		len = sizeof line - 2;
		memcpy(line + len - 3, "...", 3);
	}
	if (len == 0 || line[len - 1] != '\n')
		line[len++] = '\n';
	raw_write_all(atomic_load(&log_fd), line, len);
	errno = saved;
}
