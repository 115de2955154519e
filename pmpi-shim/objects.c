/* The loaded objects, as call-site classification needs them: the address
 * range of each object's code, and whether the object is one a call site is
 * never in (the shim, libc, the dynamic loader, MPI, HDF5, the Fortran and
 * C++ runtimes, Python's libpython: their frames are skipped to find the
 * application's).
 *
 * The table is append-only and lock-free for readers: an entry is written
 * whole before n_objs moves past it, and never changes afterwards except
 * for its dead flag. Application threads only read it on their I/O path
 * (classifying a return address is a scan, done once per address thanks to
 * the cache in sites.c); it is filled at start-up and rescanned, when a
 * thread met an address in no known object (a library dlopen'd since), by
 * the sender before it names sites, and by dlclose() before an object goes
 * (so that sites in a library loaded and unloaded between two of the
 * sender's rounds can still be named: entries of unloaded objects stay,
 * marked dead). Rescans take the loader's lock (dl_iterate_phdr), never on
 * an I/O call; one writer at a time, the others skip. */
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "sites.h"

#define OBJ_MAX     4096         /* objects ever seen by a process */
#define ARENA_BYTES (512 * 1024) /* their paths */

static struct shim_obj *objs;
static _Atomic uint32_t n_objs;
static _Atomic uint32_t gen; /* completed scans */
static _Atomic int refresh_wanted;
static pthread_mutex_t writer = PTHREAD_MUTEX_INITIALIZER;
static char *arena;
static size_t arena_used;
static char exe_base[256] = "exe";
static void before_fork(void);
static void after_fork_parent(void);
static bool no_scan; /* a forked child that must not scan (shim_objects_after_fork) */

/* Basename prefixes of the objects call sites skip (docs/shim.md). The
 * sanitizers' runtimes interpose libc's functions as the shim does: their
 * interceptors are not the application either. */
static const char skipped[] = "libc.so:libc-:ld-linux:ld64.so:libpthread:libdl.so:librt.so:"
                              "libmpi:libopen-:libpmix:libprrte:libmca_:mca_:libhdf5:"
                              "libgfortran:libstdc++:libpython:libnanomsg:libunwind:"
                              "libasan:libtsan:liblsan:libubsan:libhwasan:libclang_rt";
static char extra_skipped[1024]; /* IOPULSE_SITE_SKIP: colon-separated prefixes */

static const char *base_of(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

static bool has_prefix_in(const char *base, const char *list)
{
	for (const char *p = list; *p;) {
		const char *end = strchr(p, ':');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		if (n && strncmp(base, p, n) == 0)
			return true;
		p += n + (end != NULL);
	}
	return false;
}

static bool is_skipped(const char *base, uintptr_t lo, uintptr_t hi)
{
	uintptr_t self = (uintptr_t)&shim_objects_init; /* the shim, whatever its file's name */
	if (self >= lo && self < hi)
		return true;
	return has_prefix_in(base, skipped) || has_prefix_in(base, extra_skipped);
}

static const char *keep(const char *s)
{
	size_t n = strlen(s) + 1;
	if (arena_used + n > ARENA_BYTES)
		return "?";
	char *p = memcpy(arena + arena_used, s, n);
	arena_used += n;
	return p;
}

/* One object from dl_iterate_phdr: its code range is the span of its
 * executable PT_LOAD segments. Known objects are marked seen; new ones are
 * appended (published by the release store of n_objs). */
static int scan_one(struct dl_phdr_info *info, size_t size, void *data)
{
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	for (unsigned i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		uintptr_t a = info->dlpi_addr + ph->p_vaddr;
		if (a < lo)
			lo = a;
		if (a + ph->p_memsz > hi)
			hi = a + ph->p_memsz;
	}
	if (lo >= hi)
		return 0;
	uint32_t n = atomic_load_explicit(&n_objs, memory_order_relaxed);
	for (uint32_t i = 0; i < n; i++) {
		if (objs[i].lo == lo && objs[i].hi == hi &&
		    !atomic_load_explicit(&objs[i].dead, memory_order_relaxed)) {
			objs[i].seen = true;
			return 0;
		}
	}
	if (n >= OBJ_MAX)
		return 0; /* its addresses stay unknown, then count as the application's */
	bool main_program = info->dlpi_name[0] == 0 && n == 0;
	const char *path = main_program ? "/proc/self/exe" : info->dlpi_name;
	struct shim_obj *o = &objs[n];
	o->lo = lo;
	o->hi = hi;
	o->bias = info->dlpi_addr;
	o->path = keep(path);
	o->base = main_program ? exe_base : keep(base_of(path));
	o->excluded = is_skipped(o->base, lo, hi);
	o->seen = true;
	atomic_store_explicit(&o->dead, false, memory_order_relaxed);
	atomic_store_explicit(&n_objs, n + 1, memory_order_release);
	(void)size;
	(void)data;
	return 0;
}

static void scan(void)
{
	uint32_t n = atomic_load_explicit(&n_objs, memory_order_relaxed);
	for (uint32_t i = 0; i < n; i++)
		objs[i].seen = false;
	dl_iterate_phdr(scan_one, NULL);
	for (uint32_t i = 0; i < n; i++)
		if (!objs[i].seen) /* unloaded: a new object may take its addresses */
			atomic_store_explicit(&objs[i].dead, true, memory_order_release);
	atomic_fetch_add_explicit(&gen, 1, memory_order_release);
}

int shim_objects_init(void)
{
	const char *extra = getenv("IOPULSE_SITE_SKIP");
	if (extra && strlen(extra) < sizeof extra_skipped)
		strcpy(extra_skipped, extra);
	char exe[4096];
	long len = syscall(SYS_readlinkat, AT_FDCWD, "/proc/self/exe", exe, sizeof exe - 1);
	if (len > 0) {
		exe[len] = 0;
		const char *b = base_of(exe);
		if (strlen(b) < sizeof exe_base)
			strcpy(exe_base, b);
	}
	void *t = (void *)syscall(SYS_mmap, NULL, OBJ_MAX * sizeof *objs, PROT_READ | PROT_WRITE,
	                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	void *a = (void *)syscall(SYS_mmap, NULL, ARENA_BYTES, PROT_READ | PROT_WRITE,
	                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (t == MAP_FAILED || a == MAP_FAILED)
		return -1;
	objs = t;
	arena = a;
	scan();
	pthread_atfork(before_fork, after_fork_parent, NULL); /* the child's: at_fork_child */
	return 0;
}

unsigned shim_objects_classify(uintptr_t ip, uint32_t *scan_gen)
{
	*scan_gen = atomic_load_explicit(&gen, memory_order_acquire);
	const struct shim_obj *o = shim_objects_find(ip);
	if (o)
		return o->excluded ? SHIM_SITE_EXCLUDED : SHIM_SITE_OUTSIDE;
	atomic_store_explicit(&refresh_wanted, 1, memory_order_relaxed);
	return SHIM_SITE_UNKNOWN;
}

const struct shim_obj *shim_objects_find(uintptr_t ip)
{
	uint32_t n = objs ? atomic_load_explicit(&n_objs, memory_order_acquire) : 0;
	for (uint32_t i = 0; i < n; i++) {
		const struct shim_obj *o = &objs[i];
		if (ip >= o->lo && ip < o->hi &&
		    !atomic_load_explicit(&o->dead, memory_order_relaxed))
			return o;
	}
	return NULL;
}

const struct shim_obj *shim_objects_find_named(uintptr_t ip)
{
	const struct shim_obj *o = shim_objects_find(ip);
	uint32_t n = objs ? atomic_load_explicit(&n_objs, memory_order_acquire) : 0;
	for (uint32_t i = n; !o && i-- > 0;) /* the latest unloaded one */
		if (ip >= objs[i].lo && ip < objs[i].hi)
			o = &objs[i];
	return o;
}

uint32_t shim_objects_gen(void)
{
	return atomic_load_explicit(&gen, memory_order_acquire);
}

void shim_objects_refresh(void)
{
	if (!objs || !atomic_load_explicit(&refresh_wanted, memory_order_relaxed))
		return;
	/* Never waits for another writer, which may itself wait for the
	 * loader's lock that this thread holds (a dlclose inside a
	 * dl_iterate_phdr callback, an exit inside a dlopen): that writer's
	 * scan will do. */
	if (no_scan || pthread_mutex_trylock(&writer) != 0)
		return;
	if (atomic_exchange_explicit(&refresh_wanted, 0, memory_order_relaxed))
		scan();
	pthread_mutex_unlock(&writer);
}

/* A scan walks the loaded objects with dl_iterate_phdr, under the
 * loader's lock, and glibc does not take that lock across fork: a child
 * forked while the parent's sender scanned finds it taken for good, and
 * its first dl_iterate_phdr or dlopen, the application's or its own
 * sender's, never returns (bench: 200 of 200 children of a process with
 * a thread in dl_iterate_phdr hung in theirs). So a fork waits for a scan
 * in progress to end, and none starts until the fork is done: the writer's
 * lock is held across it. At most 100 ms: the scan may itself wait for the
 * loader's lock that the forking thread holds (a fork from a library's
 * constructor, inside dlopen); then the child does not scan at all. */
static bool fork_held;

static void before_fork(void)
{
	uint64_t end = iop_mono_ns() + 100000000u;
	while (!(fork_held = pthread_mutex_trylock(&writer) == 0) && iop_mono_ns() < end) {
		struct timespec ts = {0, 100000};
		nanosleep(&ts, NULL);
	}
}

static void after_fork_parent(void)
{
	if (fork_held)
		pthread_mutex_unlock(&writer);
}

void shim_objects_after_fork(void)
{
	if (fork_held)
		pthread_mutex_unlock(&writer);
	else
		no_scan = true; /* the parent's scan held it: the loader's lock may be held */
}

/* Before an object is unloaded: its code may be the site of calls not
 * named yet. */
SHIM_EXPORT int dlclose(void *handle)
{
	SHIM_REAL(dlclose);
	struct shim_thread *t = shim_self_tls;
	if (atomic_load_explicit(&shim.state, memory_order_relaxed) == SHIM_ON && t && !t->busy &&
	    atomic_load_explicit(&refresh_wanted, memory_order_relaxed)) {
		int saved = errno;
		t->busy = 1;
		shim_objects_refresh();
		t->busy = 0;
		errno = saved;
	}
	return real_dlclose(handle);
}
