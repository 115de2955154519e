/* The shim's own threads and descriptors, kept out of the application's way.
 *
 * Threads created while the creating thread is inside the shim (nanomsg's
 * worker, the sender) are marked internal from their first instruction, so
 * nothing they do is ever recorded. Descriptors they create (nanomsg's
 * sockets, eventfds, epoll and pipes) are remembered, and a program that
 * closes descriptors wholesale (a daemon's close loop, close_range,
 * closefrom) leaves them open: close() of one of them from the application
 * returns 0 and keeps it, instead of breaking the monitor (nanomsg aborts on
 * a closed eventfd) or letting it write into a file that reused the number. */
#include <pthread.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "shim.h"

#define GUARD_FDS 65536
static _Atomic uint64_t guarded[GUARD_FDS / 64];

static inline bool internal_thread(void)
{
	struct shim_thread *t = shim_self_tls;
	return t && t->busy;
}

void shim_fd_guard(int fd);
static void guard(int fd)
{
	if (fd >= 0 && fd < GUARD_FDS)
		atomic_fetch_or(&guarded[fd / 64], UINT64_C(1) << (fd % 64));
}

void shim_fd_guard(int fd)
{
	guard(fd);
}

static void unguard(int fd)
{
	if (fd >= 0 && fd < GUARD_FDS)
		atomic_fetch_and(&guarded[fd / 64], ~(UINT64_C(1) << (fd % 64)));
}

bool shim_fd_guarded(int fd)
{
	return fd >= 0 && fd < GUARD_FDS &&
	       (atomic_load_explicit(&guarded[fd / 64], memory_order_relaxed) >> (fd % 64) & 1);
}

/* close() asks this first: true when the application must not close fd
 * (close() then reports success and leaves it); an internal close forgets it. */
bool shim_fd_keep_open(int fd)
{
	if (!shim_fd_guarded(fd))
		return false;
	if (internal_thread()) {
		unguard(fd);
		return false;
	}
	return true;
}

/* ------------------------------------------------------------ threads */

struct start {
	void *(*fn)(void *);
	void *arg;
};

static void *internal_start(void *p)
{
	struct start s = *(struct start *)p;
	free(p);
	shim_thread_mark_internal();
	return s.fn(s.arg);
}

SHIM_EXPORT int pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *),
			       void *arg)
{
	SHIM_REAL(pthread_create);
	struct start *s;
	if (!internal_thread() || !(s = malloc(sizeof *s)))
		return real_pthread_create(th, attr, fn, arg);
	s->fn = fn;
	s->arg = arg;
	int r = real_pthread_create(th, attr, internal_start, s);
	if (r != 0)
		free(s);
	return r;
}

/* ------------------------------------------------------------ descriptors */

static int guarded_result(int fd)
{
	if (fd >= 0 && internal_thread())
		guard(fd);
	return fd;
}

SHIM_EXPORT int socket(int domain, int type, int protocol)
{
	SHIM_REAL(socket);
	return guarded_result(real_socket(domain, type, protocol));
}

SHIM_EXPORT int accept(int fd, struct sockaddr *addr, socklen_t *len)
{
	SHIM_REAL(accept);
	return guarded_result(real_accept(fd, addr, len));
}

SHIM_EXPORT int accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags)
{
	SHIM_REAL(accept4);
	return guarded_result(real_accept4(fd, addr, len, flags));
}

SHIM_EXPORT int eventfd(unsigned int initval, int flags)
{
	SHIM_REAL(eventfd);
	return guarded_result(real_eventfd(initval, flags));
}

SHIM_EXPORT int epoll_create(int size)
{
	SHIM_REAL(epoll_create);
	return guarded_result(real_epoll_create(size));
}

SHIM_EXPORT int epoll_create1(int flags)
{
	SHIM_REAL(epoll_create1);
	return guarded_result(real_epoll_create1(flags));
}

static int guarded_pair(int r, int fds[2])
{
	if (r == 0 && internal_thread()) {
		guard(fds[0]);
		guard(fds[1]);
	}
	return r;
}

SHIM_EXPORT int socketpair(int domain, int type, int protocol, int fds[2])
{
	SHIM_REAL(socketpair);
	return guarded_pair(real_socketpair(domain, type, protocol, fds), fds);
}

SHIM_EXPORT int pipe(int fds[2])
{
	SHIM_REAL(pipe);
	return guarded_pair(real_pipe(fds), fds);
}

SHIM_EXPORT int pipe2(int fds[2], int flags)
{
	SHIM_REAL(pipe2);
	return guarded_pair(real_pipe2(fds, flags), fds);
}

/* close_range and closefrom skip guarded descriptors (setting close-on-exec
 * on them is harmless: they have it already). */
SHIM_EXPORT int close_range(unsigned first, unsigned last, int flags)
{
	SHIM_REAL(close_range);
	if ((flags & CLOSE_RANGE_CLOEXEC) || first > last || internal_thread())
		return real_close_range(first, last, flags);
	unsigned from = first, stop = last < GUARD_FDS ? last : GUARD_FDS - 1;
	for (unsigned fd = first; fd <= stop; fd++) {
		if (!shim_fd_guarded((int)fd))
			continue;
		if (fd > from && real_close_range(from, fd - 1, flags) != 0)
			return -1;
		from = fd + 1;
	}
	return from > last ? 0 : real_close_range(from, last, flags);
}

SHIM_EXPORT void closefrom(int lowfd)
{
	close_range(lowfd < 0 ? 0 : (unsigned)lowfd, ~0U, 0);
}
