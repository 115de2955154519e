/* The shim's own threads and descriptors, kept out of the application's way.
 *
 * Threads created while the creating thread is inside the shim (nanomsg's
 * worker, the sender) are marked internal from their first instruction, so
 * nothing they do is ever recorded.
 *
 * The sender gives itself a descriptor table of its own (unshare
 * CLONE_FILES) before it creates any descriptor, and nanomsg's workers,
 * started from it, share that one: nanomsg's sockets, eventfds and epoll
 * are then out of the application's reach, and the application's threads
 * alone use their table again (the kernel takes no reference on a file per
 * read or write for a table with one user; docs/shim.md, "Cost").
 *
 * Descriptors created in the application's table while a thread is inside
 * the shim (libunwind's pipe, made during an unwind; nanomsg's, when
 * unshare was refused) are remembered, and a program that closes
 * descriptors wholesale (a daemon's close loop, close_range, closefrom)
 * leaves them open: close() of one of them from the application returns 0
 * and keeps it, instead of breaking the monitor (nanomsg aborts on a closed
 * eventfd) or letting it write into a file that reused the number. They
 * are also moved up, out of the numbers the application's own opens get
 * (the lowest free): made at start-up in a program started without stdin
 * or stderr, libunwind's pipe would otherwise be them, and a program's
 * first file would not be 3. What the sender's own table holds needs no
 * such care. */
#include <dirent.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "log.h"
#include "shim.h"

#define GUARD_FDS 65536
static _Atomic uint64_t guarded[GUARD_FDS / 64];
/* This thread uses the sender's own table (the sender, nanomsg's workers):
 * what it opens is not in the application's table, nothing to guard. */
static __thread bool in_sender_table __attribute__((tls_model("initial-exec")));

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

/* dup2/dup3 from the application have put a file of its own on fd: a
 * descriptor of the shim's there is gone, and the number is the
 * application's now (its close must close it: a pipe's reader waits for
 * that end). */
void shim_fd_taken(int fd)
{
	if (shim_fd_guarded(fd) && !internal_thread())
		unguard(fd);
}

/* ------------------------------------------------------------ the sender's table */

/* Closes every descriptor from first up in the calling thread's table. */
static void close_from(int first)
{
	if (syscall(SYS_close_range, (unsigned)first, ~0U, 0U) == 0)
		return;
	/* no close_range (before Linux 5.9): what the table holds, listed */
	int dir = (int)syscall(SYS_openat, AT_FDCWD, "/proc/thread-self/fd",
	                       O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return;
	char buf[4096];
	long n;
	while ((n = syscall(SYS_getdents64, dir, buf, sizeof buf)) > 0) {
		for (long off = 0; off < n;) {
			struct dirent64 *d = (struct dirent64 *)(buf + off);
			char *end;
			long fd = strtol(d->d_name, &end, 10);
			if (*end == 0 && end != d->d_name && fd >= first && fd != dir)
				syscall(SYS_close, (int)fd);
			off += d->d_reclen;
		}
	}
	syscall(SYS_close, dir);
}

/* Whether the object holds addr (one of its loaded segments does). */
static bool holds_address(const struct dl_phdr_info *info, uintptr_t addr)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && addr >= lo && addr - lo < ph->p_memsz)
			return true;
	}
	return false;
}

/* Whether a loaded object other than the shim needs libnanomsg (DT_NEEDED):
 * the application's own nanomsg sockets would then be served by the
 * workers the sender starts, in the sender's table, where their numbers
 * mean nothing. (dl_iterate_phdr, not dladdr: it does not wait for a
 * dlopen in progress.) */
static int needs_nanomsg(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	(void)data;
	if (strstr(info->dlpi_name, "libnanomsg") || strstr(info->dlpi_name, "linux-vdso") ||
	    holds_address(info, (uintptr_t)needs_nanomsg))
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		if (info->dlpi_phdr[i].p_type != PT_DYNAMIC)
			continue;
		const ElfW(Dyn) *dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
		uintptr_t strtab = 0;
		for (const ElfW(Dyn) *d = dyn; d->d_tag != DT_NULL; d++)
			if (d->d_tag == DT_STRTAB)
				strtab = d->d_un.d_ptr; /* relocated in place by the loader */
		if (!strtab)
			return 0;
		if (strtab < info->dlpi_addr)
			strtab += info->dlpi_addr;
		for (const ElfW(Dyn) *d = dyn; d->d_tag != DT_NULL; d++)
			if (d->d_tag == DT_NEEDED &&
			    strstr((const char *)strtab + d->d_un.d_val, "libnanomsg"))
				return 1;
	}
	return 0;
}

/* Whether an object of the application needs nanomsg: looked up once (a
 * forked child's sender takes its parent's answer, and calls no
 * dl_iterate_phdr, whose lock a fork may have left taken: objects.c). */
static int app_uses_nanomsg = -1;

bool shim_fd_table_unshare(void)
{
	if (app_uses_nanomsg < 0)
		app_uses_nanomsg = dl_iterate_phdr(needs_nanomsg, NULL) != 0;
	if (app_uses_nanomsg) {
		iop_debug("the application uses nanomsg: the sender shares its descriptor table");
		return false;
	}
	if (syscall(SYS_unshare, CLONE_FILES) != 0)
		return false; /* the table stays shared: guard what we open */
	in_sender_table = true;
	/* Only copies of the application's descriptors are here: none may
	 * stay open (a pipe whose reader waits for its end, a lock file). 0
	 * and 1 become /dev/null, so that nothing of ours takes their numbers,
	 * and 2 follows once the sender has said what went wrong, if anything. */
	int null = (int)syscall(SYS_openat, AT_FDCWD, "/dev/null", O_RDWR | O_CLOEXEC);
	if (null >= 0) {
		for (int fd = 0; fd <= 1; fd++)
			if (fd != null)
				syscall(SYS_dup3, null, fd, O_CLOEXEC);
		/* A program started without stderr: 2 is free here too, and the
		 * sender's first descriptor (nanomsg's eventfd) took it, which
		 * the seal's dup3 onto 2 then replaced with /dev/null: nanomsg's
		 * worker read its eventfd as /dev/null and aborted the program
		 * (closed_fds_test std: SIGABRT in 5 of ~200 runs). Nothing can
		 * be said to a stderr that is not there: /dev/null now. */
		if (null != 2 && syscall(SYS_fcntl, 2, F_GETFD) < 0)
			syscall(SYS_dup3, null, 2, O_CLOEXEC);
	}
	close_from(3);
	return true;
}

void shim_fd_table_seal(void)
{
	/* 0 is /dev/null by now, unless it could not be opened */
	char link[16];
	long n = syscall(SYS_readlinkat, AT_FDCWD, "/proc/thread-self/fd/0", link, sizeof link);
	if (n == 9 && memcmp(link, "/dev/null", 9) == 0)
		syscall(SYS_dup3, 0, 2, O_CLOEXEC);
}

/* ------------------------------------------------------------ threads */

struct start {
	void *(*fn)(void *);
	void *arg;
	bool in_sender_table; /* the creator's: threads share its table */
};

static void *internal_start(void *p)
{
	struct start s = *(struct start *)p;
	free(p);
	in_sender_table = s.in_sender_table;
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
	s->in_sender_table = in_sender_table;
	int r = real_pthread_create(th, attr, internal_start, s);
	if (r != 0)
		free(s);
	return r;
}

/* ------------------------------------------------------------ descriptors */

/* Where the shim's descriptors in the application's table go: from
 * HIGH_FDS below the descriptor limit (capped at HIGH_FDS_TOP, so that a
 * huge limit does not make the kernel grow the table that far) up. */
#define HIGH_FDS_TOP 1024
#define HIGH_FDS 64

/* fd, or a duplicate of it up high (fd closed), keeping its close-on-exec
 * flag; fd where there is no room up there. */
static int moved_up(int fd)
{
	int saved = errno;
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		rlim_t top = rl.rlim_cur < HIGH_FDS_TOP ? rl.rlim_cur : HIGH_FDS_TOP;
		long flags = syscall(SYS_fcntl, fd, F_GETFD);
		if (top >= 2 * HIGH_FDS && (rlim_t)fd < top - HIGH_FDS && flags >= 0) {
			int cmd = (flags & FD_CLOEXEC) ? F_DUPFD_CLOEXEC : F_DUPFD;
			long high = syscall(SYS_fcntl, fd, cmd, (long)(top - HIGH_FDS));
			if (high >= 0) {
				syscall(SYS_close, fd);
				fd = (int)high;
			}
		}
	}
	errno = saved;
	return fd;
}

static int guarded_result(int fd)
{
	if (fd >= 0 && internal_thread() && !in_sender_table) {
		fd = moved_up(fd);
		guard(fd);
	}
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
	if (r == 0 && internal_thread() && !in_sender_table) {
		fds[0] = moved_up(fds[0]);
		fds[1] = moved_up(fds[1]);
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
