/* libiopfault.so: deterministic I/O faults for alert tests, preloaded below
 * the shim (LD_PRELOAD=libiopulse.so:libiopfault.so). The shim's wrappers
 * resolve "the real write" with dlsym(RTLD_NEXT) and so land here; these
 * wrappers decide whether a fault applies, sleep (a delay, or a hang), and
 * then call libc's function, whose return value and errno the caller gets
 * unchanged. The shim times the whole thing, so a slow call looks exactly
 * like a slow file system to it.
 *
 * A call is faulted when: the process's rank is selected (IOPFAULT_RANK),
 * the time since the library loaded (or since IOPFAULT_EPOCH_S: a Unix
 * time, or the process's first selected call) is inside [IOPFAULT_AFTER_S,
 * IOPFAULT_UNTIL_S), the descriptor is a regular file (sockets, pipes and
 * devices never: the shim's sender and nanomsg's workers write to sockets),
 * its path matches IOPFAULT_FILE when that is set, and the function is in
 * IOPFAULT_OPS (delay) or IOPFAULT_HANG (the first such call hangs).
 *
 * Paths come from /proc/self/fd/N, read when a descriptor is opened through
 * one of the open wrappers here, or on its first faultable use otherwise
 * (fopen and friends open inside libc), and cached per fd together with the
 * file's (device, inode): a descriptor number that was closed and reused
 * for another file is re-resolved, whoever closed it. That costs one fstat
 * per call, and only on selected ranks inside the fault window.
 *
 * Nothing here calls a function the shim wraps: libc's fstat, readlink and
 * write are reached through RTLD_NEXT too, so the fault library's own work
 * is never recorded as the application's I/O. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "fault.h"

#define EXPORT   __attribute__((visibility("default")))
#define FD_CACHE 4096 /* descriptors above are resolved on every call */
#define NS       1000000000ull

static struct fault_cfg cfg;
static pthread_once_t cfg_once = PTHREAD_ONCE_INIT;
static uint64_t load_ns;     /* CLOCK_MONOTONIC when the library loaded */
static atomic_int hang_used; /* the one hanging call has been chosen */
static atomic_int window_said; /* 1: the window's opening was reported, 2: its closing too */
static _Atomic uint64_t last_faulted_ns; /* wall time the last delayed call returned */
/* IOPFAULT_EPOCH_S=first: wall time of the first selected call (0: none yet) */
static _Atomic uint64_t first_ns;
/* Per fd: 0 (unknown), or a (device, inode) key with bit 0 = path matches. */
static _Atomic uint64_t fd_match[FD_CACHE];

#define REAL FAULT_REAL

/* ------------------------------------------------------------- plumbing */

/* Straight to the kernel: stderr may be anything, and write() is ours. */
static void say(const char *text, size_t len)
{
	while (len > 0) {
		long n = syscall(SYS_write, 2, text, len);
		if (n <= 0 && errno != EINTR)
			return;
		if (n > 0) {
			text += n;
			len -= (size_t)n;
		}
	}
}

static void sayf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void sayf(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (n > 0)
		say(buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

void *fault_resolve(const char *name)
{
	void *p = dlsym(RTLD_NEXT, name);
	if (!p) {
		sayf("iopfault: cannot resolve %s\n", name);
		abort(); /* a wrapper without its real function cannot go on */
	}
	return p;
}

static uint64_t clock_ns(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * NS + (uint64_t)ts.tv_nsec;
}

static uint64_t mono_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

/* Sleeps ns without busy-waiting; a signal does not cut it short. */
static void sleep_ns(uint64_t ns)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	uint64_t end = (uint64_t)ts.tv_nsec + ns % NS;
	ts.tv_sec += (time_t)(ns / NS + end / NS);
	ts.tv_nsec = (long)(end % NS);
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/* ---------------------------------------------------------------- set-up */

/* The MPI runtime's launchers and daemons (the shim's list): they inherit
 * LD_PRELOAD from some launch paths and must never be slowed. */
static bool is_launcher(void)
{
	static const char *const launchers[] = {
	    "mpirun",
	    "mpiexec",
	    "orterun",
	    "orted",
	    "prted",
	    "prterun",
	    "prte",
	    "srun",
	    "slurmstepd",
	    "hydra_pmi_proxy",
	    "hydra_nameserver",
	    "mpiexec.hydra",
	    "mpirun.openmpi",
	    "mpiexec.openmpi",
	    "mpirun.mpich",
	    "mpiexec.mpich",
	    "iopulse",
	};
	extern char *program_invocation_short_name;
	for (size_t i = 0; i < sizeof launchers / sizeof *launchers; i++)
		if (strcmp(program_invocation_short_name, launchers[i]) == 0)
			return true;
	return false;
}

static const char *env(const char *name)
{
	return getenv(name);
}

static void configure(void)
{
	load_ns = mono_ns();
	bool launcher = is_launcher();
	fault_cfg_read(&cfg, env, launcher);
	if ((cfg.verbose && !launcher) || cfg.bad) {
		char text[1024];
		say(text, fault_cfg_describe(&cfg, text, sizeof text));
	}
}

/* The clock starts here, or at the first wrapped call if another
 * library's constructor does I/O before this one runs. */
__attribute__((constructor)) static void on_load(void)
{
	pthread_once(&cfg_once, configure);
}

/* ------------------------------------------------------------- deciding */

static uint64_t file_key(const struct stat *st)
{
	uint64_t h = (uint64_t)st->st_dev * 0x9e3779b97f4a7c15u ^ (uint64_t)st->st_ino;
	h = (h ^ (h >> 31)) * 0xbf58476d1ce4e5b9u;
	return (h ^ (h >> 29)) | 2; /* never 0, whatever bit 0 holds */
}

static bool path_matches(int fd)
{
	REAL(readlink);
	char link[32], path[PATH_MAX];
	snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
	ssize_t n = real_readlink(link, path, sizeof path - 1);
	if (n <= 0)
		return false;
	path[n] = 0;
	for (unsigned i = 0; i < cfg.n_globs; i++)
		if (fnmatch(cfg.globs[i], path, 0) == 0)
			return true;
	return false;
}

/* A regular file, matching IOPFAULT_FILE when that is set. */
static bool file_selected(int fd)
{
	REAL(fstat);
	struct stat st;
	if (real_fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		return false;
	if (cfg.n_globs == 0)
		return true;
	uint64_t key = file_key(&st);
	_Atomic uint64_t *slot = fd >= 0 && fd < FD_CACHE ? &fd_match[fd] : NULL;
	uint64_t seen = slot ? atomic_load_explicit(slot, memory_order_relaxed) : 0;
	if (seen && seen >> 1 == key >> 1)
		return seen & 1;
	bool match = path_matches(fd);
	if (slot)
		atomic_store_explicit(slot, (key & ~1ull) | match, memory_order_relaxed);
	return match;
}

static bool in_window(void)
{
	uint64_t t, epoch = cfg.epoch_first ? atomic_load(&first_ns) : cfg.epoch_ns;
	if (cfg.epoch_first && !epoch)
		return false; /* no selected call yet */
	/* a Unix time: one clock for every process of the job */
	if (epoch) {
		uint64_t now = clock_ns(CLOCK_REALTIME);
		if (now < epoch)
			return false;
		t = now - epoch;
	} else {
		t = mono_ns() - load_ns;
	}
	return t >= cfg.after_ns && t < cfg.until_ns;
}

static double real_s(void)
{
	return (double)clock_ns(CLOCK_REALTIME) / 1e9;
}

/* With IOPFAULT_VERBOSE, when the first selected call inside the window
 * is faulted and when the first one after it is not, with the wall time:
 * alert tests compare the alerts' times with these. */
static void say_window(int step)
{
	int was = step - 1;
	if (!cfg.verbose || !atomic_compare_exchange_strong(&window_said, &was, step))
		return;
	if (step == 1)
		sayf("iopfault: rank %u pid %d: fault window opens at %.6f\n", cfg.rank,
		     (int)getpid(), real_s());
	else
		sayf("iopfault: rank %u pid %d: fault window closes at %.6f; the last faulted call "
		     "returned at %.6f\n",
		     cfg.rank, (int)getpid(), real_s(),
		     (double)atomic_load(&last_faulted_ns) / 1e9);
}

static void hang(const char *name, int fd)
{
	if (cfg.verbose)
		sayf("iopfault: rank %u pid %d: %s on fd %d hangs for %.3f s (0: until killed) from %.6f\n",
		     cfg.rank, (int)getpid(), name, fd,
		     cfg.hang_ns == FAULT_NEVER ? 0.0 : (double)cfg.hang_ns / 1e9, real_s());
	if (cfg.hang_ns != FAULT_NEVER) {
		sleep_ns(cfg.hang_ns);
		if (cfg.verbose)
			sayf("iopfault: rank %u pid %d: %s on fd %d returns at %.6f\n", cfg.rank,
			     (int)getpid(), name, fd, real_s());
		return;
	}
	for (;;)
		sleep_ns(3600 * NS);
}

void fault_point(unsigned fn, const char *name, int fd)
{
	pthread_once(&cfg_once, configure);
	if (!cfg.active)
		return;
	bool hangs = (fn & cfg.hang_fns) && !atomic_load_explicit(&hang_used, memory_order_relaxed);
	bool delays = (fn & cfg.delay_fns) && cfg.delay_ns;
	if (!hangs && !delays)
		return;
	int saved = errno;
	if (cfg.epoch_first && !atomic_load_explicit(&first_ns, memory_order_relaxed) &&
	    file_selected(fd)) {
		uint64_t none = 0; /* the window's clock starts with the first selected call */
		atomic_compare_exchange_strong(&first_ns, &none, clock_ns(CLOCK_REALTIME));
	}
	if (in_window()) {
		if (file_selected(fd)) {
			say_window(1);
			if (hangs && !atomic_exchange(&hang_used, 1))
				hang(name, fd);
			if (delays) {
				sleep_ns(cfg.delay_ns);
				atomic_store(&last_faulted_ns, clock_ns(CLOCK_REALTIME));
			}
		}
	} else if (cfg.verbose && atomic_load_explicit(&window_said, memory_order_relaxed) == 1 &&
	           file_selected(fd)) {
		say_window(2);
	}
	errno = saved;
}

/* An fd just opened: resolve its path now, while it names what was opened. */
static int opened(int fd)
{
	if (fd >= 0 && cfg.active && cfg.n_globs) {
		int saved = errno;
		file_selected(fd);
		errno = saved;
	}
	return fd;
}

/* ------------------------------------------------------------- wrappers */

#define IO_WRAPPER(fn, name, ret, params, args)                                                    \
	EXPORT ret name params                                                                     \
	{                                                                                          \
		REAL(name);                                                                        \
		fault_point(fn, #name, fd);                                                        \
		return real_##name args;                                                           \
	}

IO_WRAPPER(FN_READ, read, ssize_t, (int fd, void *b, size_t n), (fd, b, n))
IO_WRAPPER(FN_WRITE, write, ssize_t, (int fd, const void *b, size_t n), (fd, b, n))
IO_WRAPPER(FN_READV, readv, ssize_t, (int fd, const struct iovec *v, int n), (fd, v, n))
IO_WRAPPER(FN_WRITEV, writev, ssize_t, (int fd, const struct iovec *v, int n), (fd, v, n))
IO_WRAPPER(FN_PREAD, pread, ssize_t, (int fd, void *b, size_t n, off_t o), (fd, b, n, o))
IO_WRAPPER(FN_PREAD, pread64, ssize_t, (int fd, void *b, size_t n, off64_t o), (fd, b, n, o))
IO_WRAPPER(FN_PWRITE, pwrite, ssize_t, (int fd, const void *b, size_t n, off_t o), (fd, b, n, o))
IO_WRAPPER(FN_PWRITE, pwrite64, ssize_t, (int fd, const void *b, size_t n, off64_t o),
           (fd, b, n, o))
IO_WRAPPER(FN_PREADV, preadv, ssize_t, (int fd, const struct iovec *v, int n, off_t o),
           (fd, v, n, o))
IO_WRAPPER(FN_PREADV, preadv64, ssize_t, (int fd, const struct iovec *v, int n, off64_t o),
           (fd, v, n, o))
IO_WRAPPER(FN_PWRITEV, pwritev, ssize_t, (int fd, const struct iovec *v, int n, off_t o),
           (fd, v, n, o))
IO_WRAPPER(FN_PWRITEV, pwritev64, ssize_t, (int fd, const struct iovec *v, int n, off64_t o),
           (fd, v, n, o))
IO_WRAPPER(FN_PREADV, preadv2, ssize_t, (int fd, const struct iovec *v, int n, off_t o, int flags),
           (fd, v, n, o, flags))
IO_WRAPPER(FN_PREADV, preadv64v2, ssize_t,
           (int fd, const struct iovec *v, int n, off64_t o, int flags), (fd, v, n, o, flags))
IO_WRAPPER(FN_PWRITEV, pwritev2, ssize_t,
           (int fd, const struct iovec *v, int n, off_t o, int flags), (fd, v, n, o, flags))
IO_WRAPPER(FN_PWRITEV, pwritev64v2, ssize_t,
           (int fd, const struct iovec *v, int n, off64_t o, int flags), (fd, v, n, o, flags))
IO_WRAPPER(FN_FSYNC, fsync, int, (int fd), (fd))
IO_WRAPPER(FN_FDATASYNC, fdatasync, int, (int fd), (fd))

static mode_t mode_arg(int flags, va_list ap)
{
	return (flags & (O_CREAT | O_TMPFILE)) ? (mode_t)va_arg(ap, int) : 0;
}

/* open-like calls with a mode argument when they create. */
#define VA_OPEN_WRAPPER(name, params, args)                                                        \
	EXPORT int name params                                                                     \
	{                                                                                          \
		REAL(name);                                                                        \
		va_list ap;                                                                        \
		va_start(ap, flags);                                                               \
		mode_t mode = mode_arg(flags, ap);                                                 \
		va_end(ap);                                                                        \
		pthread_once(&cfg_once, configure);                                                \
		return opened(real_##name args);                                                   \
	}

#define OPEN_WRAPPER(name, params, args)                                                           \
	EXPORT int name params                                                                     \
	{                                                                                          \
		REAL(name);                                                                        \
		pthread_once(&cfg_once, configure);                                                \
		return opened(real_##name args);                                                   \
	}

/* The _FORTIFY_SOURCE entry points, for programs built with it. */
int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);

VA_OPEN_WRAPPER(open, (const char *path, int flags, ...), (path, flags, mode))
VA_OPEN_WRAPPER(open64, (const char *path, int flags, ...), (path, flags, mode))
VA_OPEN_WRAPPER(openat, (int dirfd, const char *path, int flags, ...), (dirfd, path, flags, mode))
VA_OPEN_WRAPPER(openat64, (int dirfd, const char *path, int flags, ...), (dirfd, path, flags, mode))
OPEN_WRAPPER(__open_2, (const char *path, int flags), (path, flags))
OPEN_WRAPPER(__open64_2, (const char *path, int flags), (path, flags))
OPEN_WRAPPER(creat, (const char *path, mode_t mode), (path, mode))
OPEN_WRAPPER(creat64, (const char *path, mode_t mode), (path, mode))
