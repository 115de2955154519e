/* exec: the process image is about to be replaced, and with it the rings
 * and the sender. Before the real exec the sender sends everything pending
 * and a FINAL frame (a bounded wait, as at exit) and then parks; when the
 * exec fails (same return value and errno as without the shim) recording
 * goes on and the next frames carry later sequence numbers. The program the
 * exec starts inherits LD_PRELOAD and starts a shim of its own: same pid,
 * sequence numbers from 0 again (docs/shim.md says what a receiver sees).
 *
 * Only the process that owns the sender does this (the one that started
 * the shim, or a forked child with a sender of its own, sender.c): a vfork
 * child (sharing the parent's memory, whose getpid() differs) calls
 * straight through. The real functions are resolved at
 * start-up, so that a vfork child never runs dlsym in its parent's memory.
 *
 * glibc's execl* build an argv and call execve internally; a variadic call
 * cannot be passed on, so the wrappers do what glibc does (count, argv on
 * the stack, E2BIG past INT_MAX arguments) and call the matching v form. */
#include <limits.h>
#include <stdarg.h>
#include <unistd.h>

#include "shim.h"

typedef int execve_fn(const char *, char *const[], char *const[]);
typedef int execv_fn(const char *, char *const[]);
typedef int fexecve_fn(int, char *const[], char *const[]);
typedef int execveat_fn(int, const char *, char *const[], char *const[], int);

static struct {
	execve_fn *execve, *execvpe;
	execv_fn *execv, *execvp;
	fexecve_fn *fexecve;
	execveat_fn *execveat;
} real;

void shim_exec_init(void)
{
	real.execve = (execve_fn *)shim_resolve("execve");
	real.execvpe = (execve_fn *)shim_resolve("execvpe");
	real.execv = (execv_fn *)shim_resolve("execv");
	real.execvp = (execv_fn *)shim_resolve("execvp");
	real.fexecve = (fexecve_fn *)shim_resolve("fexecve");
	real.execveat = (execveat_fn *)shim_resolve_opt("execveat");
}

/* Before the real exec: true when the sender was asked for the last frame
 * (then after_exec() must follow). */
static bool before_exec(void)
{
	if (SHIM_UNLIKELY(!real.execve))
		shim_exec_init(); /* an exec before the shim's constructor ran */
	if (atomic_load_explicit(&shim.state, memory_order_relaxed) != SHIM_ON ||
	    !shim_owner_process())
		return false;
	struct shim_thread *t = shim_self_tls;
	if (t && t->busy)
		return false; /* a signal handler inside the shim's own work */
	return shim_sender_exec_begin();
}

/* The exec failed: recording goes on (errno is the exec's). */
static int after_exec(bool asked, int r)
{
	if (asked) {
		int e = errno;
		shim_sender_exec_failed();
		errno = e;
	}
	return r;
}

SHIM_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	bool asked = before_exec();
	return after_exec(asked, real.execve(path, argv, envp));
}

SHIM_EXPORT int execv(const char *path, char *const argv[])
{
	bool asked = before_exec();
	return after_exec(asked, real.execv(path, argv));
}

SHIM_EXPORT int execvp(const char *file, char *const argv[])
{
	bool asked = before_exec();
	return after_exec(asked, real.execvp(file, argv));
}

SHIM_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	bool asked = before_exec();
	return after_exec(asked, real.execvpe(file, argv, envp));
}

SHIM_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	bool asked = before_exec();
	return after_exec(asked, real.fexecve(fd, argv, envp));
}

SHIM_EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[],
                         int flags)
{
	if (!real.execveat && !(real.execveat = (execveat_fn *)shim_resolve_opt("execveat"))) {
		errno = ENOSYS;
		return -1;
	}
	bool asked = before_exec();
	return after_exec(asked, real.execveat(dirfd, path, argv, envp, flags));
}

/* The arguments after arg0 up to the NULL, counted as glibc counts them. */
static long count_args(va_list ap)
{
	va_list c;
	va_copy(c, ap);
	long n = 1;
	while (va_arg(c, const char *) && n < INT_MAX)
		n++;
	va_end(c);
	return n;
}

/* argv[0..n-1] from arg0 and ap (which moves past the NULL). */
static void fill_args(char **argv, long n, const char *arg0, va_list *ap)
{
	argv[0] = (char *)arg0;
	for (long i = 1; i <= n; i++)
		argv[i] = va_arg(*ap, char *);
}

/* Declares argv (on the stack) from arg0 and the arguments after it, and
 * leaves the va_list ap open past their NULL. */
#define EXECL_ARGV(argv, arg0)                                                                     \
	va_list ap;                                                                                \
	va_start(ap, arg0);                                                                        \
	long n_ = count_args(ap);                                                                  \
	if (n_ >= INT_MAX) {                                                                       \
		va_end(ap);                                                                        \
		errno = E2BIG;                                                                     \
		return -1;                                                                         \
	}                                                                                          \
	char *argv[n_ + 1];                                                                        \
	fill_args(argv, n_, arg0, &ap)

SHIM_EXPORT int execl(const char *path, const char *arg0, ...)
{
	EXECL_ARGV(argv, arg0);
	va_end(ap);
	return execv(path, argv);
}

SHIM_EXPORT int execlp(const char *file, const char *arg0, ...)
{
	EXECL_ARGV(argv, arg0);
	va_end(ap);
	return execvp(file, argv);
}

SHIM_EXPORT int execle(const char *path, const char *arg0, ...)
{
	EXECL_ARGV(argv, arg0);
	char *const *envp = va_arg(ap, char *const *);
	va_end(ap);
	return execve(path, argv, envp);
}
