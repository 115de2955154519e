/* Names and file descriptors.
 *
 * Every file the shim reports gets a small id, interned once per process
 * from its absolute path (lexically normalised: no symlink resolution, which
 * would cost system calls on every open). The sender announces each id once
 * (names with id > what it has announced). Ids index a table the sender
 * reads without a lock: a name is written fully before n_names moves past it.
 *
 * The fd table maps descriptors to file ids. A descriptor the shim did not
 * see opened (inherited, or opened by code that bypasses the wrappers) is
 * classified on first use: regular files and block devices by their
 * /proc/self/fd link, fds 0-2 as <stdin>/<stdout>/<stderr>; sockets, pipes,
 * eventfds and excluded paths are not watched, which also keeps nanomsg's
 * and MPI's own descriptors out of the picture. */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "hash.h"
#include "names.h"
#include "shim.h"

#define FD_MAX      SHIM_FD_MAX
#define FD_IGNORED  SHIM_FD_IGNORED
#define ARENA_CHUNK (1u << 20)

static struct shim_name **names; /* [IOP_ID_MAX + 1], reserved, touched as used */
static _Atomic uint32_t n_names = 1; /* next id; 0 is "no file" */
static struct {
	uint64_t hash;
	uint32_t id;
} *index_tab;
static uint32_t index_cap, index_used;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char *arena;
static size_t arena_left;
static char excluded[1024] = "/dev/:/proc/:/sys/:/etc/:/usr/:/lib/:/lib64/:/bin/:/sbin/:/boot/:/run/";

static void *map(size_t len)
{
	void *m = (void *)syscall(SYS_mmap, NULL, len, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	return m == MAP_FAILED ? NULL : m;
}

/* The MPI runtime's session directories (Open MPI, PMIx): its own files,
 * such as the shared-file-pointer helpers MPI_File_open makes there. */
static void exclude_runtime_dirs(void)
{
	static const char *const vars[] = {"OMPI_MCA_orte_top_session_dir", "PMIX_SERVER_TMPDIR",
					   "OMPI_MCA_prte_top_session_dir"};
	for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
		const char *dir = getenv(vars[i]);
		size_t have = strlen(excluded), n = dir ? strlen(dir) : 0;
		if (n > 1 && dir[0] == '/' && have + n + 3 < sizeof excluded) {
			snprintf(excluded + have, sizeof excluded - have, "%s%s/", have ? ":" : "", dir);
		}
	}
}

/* Held across fork, so that a forked child (which records, sender.c)
 * finds the table whole and its lock free: another thread may be interning
 * a name when one forks. The forking thread is busy meanwhile: a signal
 * handler's I/O passes through instead of waiting for the lock. */
static int fork_was_busy, fork_locked;

static void before_fork(void)
{
	struct shim_thread *t = shim_self_tls;
	fork_was_busy = t ? t->busy : 0;
	if (t)
		t->busy = 1;
	/* A fork from a signal handler that interrupted this very thread
	 * inside the shim (busy) may find the lock this thread's own: only
	 * tried then, never waited for. */
	fork_locked = fork_was_busy ? pthread_mutex_trylock(&lock) == 0
	                            : pthread_mutex_lock(&lock) == 0;
}

static void after_fork(void)
{
	if (fork_locked)
		pthread_mutex_unlock(&lock);
	struct shim_thread *t = shim_self_tls;
	if (t)
		t->busy = fork_was_busy;
}

int shim_names_init(void)
{
	pthread_atfork(before_fork, after_fork, after_fork);
	const char *ex = getenv("IOPULSE_EXCLUDE");
	if (ex)
		snprintf(excluded, sizeof excluded, "%s", ex);
	exclude_runtime_dirs();
	names = map((IOP_ID_MAX + 1) * sizeof *names);
	shim.fds = map(FD_MAX * sizeof *shim.fds);
	index_cap = 4096;
	index_tab = map(index_cap * sizeof *index_tab);
	return names && shim.fds && index_tab ? 0 : -1;
}

uint32_t shim_names_count(void)
{
	return atomic_load_explicit(&n_names, memory_order_acquire);
}

const struct shim_name *shim_name_get(uint32_t id)
{
	return id && id < shim_names_count() ? names[id] : NULL;
}

static bool is_excluded(const char *path, size_t len)
{
	if (len >= 9 && memcmp(path, "/dev/shm/", 9) == 0)
		return false; /* tmpfs data is application data */
	const char *p = excluded;
	while (*p) {
		const char *end = strchr(p, ':');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		if (n && n <= len && memcmp(path, p, n) == 0)
			return true;
		p += n + (end != NULL);
	}
	return false;
}

/* Lexical normalisation in place: "//" and "/./" collapse, "/x/.." goes. */
static size_t normalise(char *s, size_t len)
{
	size_t o = 0;
	for (size_t i = 0; i < len;) {
		while (i < len && s[i] == '/')
			i++;
		size_t j = i;
		while (j < len && s[j] != '/')
			j++;
		size_t n = j - i;
		if (n == 1 && s[i] == '.') {
			/* skip */
		} else if (n == 2 && s[i] == '.' && s[i + 1] == '.') {
			while (o > 0 && s[--o] != '/')
				;
		} else if (n > 0) {
			s[o++] = '/';
			memmove(s + o, s + i, n);
			o += n;
		}
		i = j;
	}
	if (o == 0)
		s[o++] = '/';
	s[o] = 0;
	return o;
}

static void *arena_alloc(size_t n)
{
	n = (n + 7) & ~(size_t)7;
	if (n > arena_left) {
		size_t chunk = n > ARENA_CHUNK ? n : ARENA_CHUNK;
		arena = map(chunk);
		if (!arena) {
			arena_left = 0;
			return NULL;
		}
		arena_left = chunk;
	}
	void *p = arena;
	arena += n;
	arena_left -= n;
	return p;
}

static bool index_grow(void)
{
	uint32_t cap = index_cap * 2;
	__typeof__(index_tab) t = map(cap * sizeof *t);
	if (!t)
		return false;
	for (uint32_t i = 0; i < index_cap; i++) {
		if (!index_tab[i].id)
			continue;
		uint32_t h = (uint32_t)index_tab[i].hash & (cap - 1);
		while (t[h].id)
			h = (h + 1) & (cap - 1);
		t[h] = index_tab[i];
	}
	syscall(SYS_munmap, index_tab, index_cap * sizeof *index_tab);
	index_tab = t;
	index_cap = cap;
	return true;
}

/* Interns (kind, text); caller holds the lock. */
static uint32_t intern_locked(uint8_t kind, const char *text, size_t len)
{
	uint64_t hash = iop_hash64(text, len) ^ (kind == IOP_NAME_FILE ? 0 : (uint64_t)kind << 56);
	uint32_t h = (uint32_t)hash & (index_cap - 1);
	for (; index_tab[h].id; h = (h + 1) & (index_cap - 1))
		if (index_tab[h].hash == hash && names[index_tab[h].id]->kind == kind)
			return index_tab[h].id;
	uint32_t id = atomic_load_explicit(&n_names, memory_order_relaxed);
	if (id > IOP_ID_MAX || len > IOP_NAME_MAX || len == 0)
		return 0;
	if ((index_used + 1) * 2 > index_cap) {
		if (!index_grow())
			return 0;
		return intern_locked(kind, text, len);
	}
	struct shim_name *n = arena_alloc(sizeof *n + len + 1);
	if (!n)
		return 0;
	n->hash = iop_hash64(text, len); /* what the wire says: XXH3 of the text */
	n->kind = kind;
	n->len = (uint32_t)len;
	memcpy(n->text, text, len);
	n->text[len] = 0;
	names[id] = n;
	index_tab[h].hash = hash;
	index_tab[h].id = id;
	index_used++;
	atomic_store_explicit(&n_names, id + 1, memory_order_release);
	return id;
}

static uint32_t intern(uint8_t kind, const char *text, size_t len)
{
	struct shim_thread *t = shim_self();
	int was_busy = t ? t->busy : 0;
	if (t)
		t->busy = 1; /* a signal handler's I/O passes through meanwhile */
	pthread_mutex_lock(&lock);
	uint32_t id = intern_locked(kind, text, len);
	pthread_mutex_unlock(&lock);
	if (t)
		t->busy = was_busy;
	return id;
}

uint32_t shim_name_text(uint8_t kind, const char *text)
{
	return intern(kind, text, strlen(text));
}

size_t shim_abs_path(const char *path, char *buf, size_t cap)
{
	if (!path || !*path || cap < 2)
		return 0;
	size_t len = strlen(path), at = 0;
	if (path[0] != '/') {
		int saved = errno;
		long r = syscall(SYS_getcwd, buf, cap);
		errno = saved;
		if (r <= 0)
			return 0;
		at = strlen(buf);
		buf[at++] = '/';
	}
	if (at + len >= cap)
		return 0;
	memcpy(buf + at, path, len + 1);
	return normalise(buf, at + len);
}

uint32_t shim_name_path(const char *path)
{
	char buf[IOP_NAME_MAX + 2];
	size_t len = shim_abs_path(path, buf, sizeof buf);
	if (!len || is_excluded(buf, len))
		return 0;
	return intern(IOP_NAME_FILE, buf, len);
}

/* ------------------------------------------------------------ fds */

static uint32_t classify(int fd)
{
	static const char *const std[] = {"<stdin>", "<stdout>", "<stderr>"};
	if (fd <= 2)
		return shim_name_text(IOP_NAME_FILE, std[fd]);
	struct stat st;
	if (syscall(SYS_fstat, fd, &st) != 0 || !(S_ISREG(st.st_mode) || S_ISBLK(st.st_mode)))
		return 0;
	char link[40], path[IOP_NAME_MAX + 1];
	snprintf(link, sizeof link, "/proc/thread-self/fd/%d", fd);
	long n = syscall(SYS_readlinkat, AT_FDCWD, link, path, sizeof path - 1);
	if (n <= 0 || path[0] != '/')
		return 0;
	path[n] = 0;
	return shim_name_path(path);
}

/* shim_fd_file() of an fd not classified yet (or out of the table). */
uint32_t shim_fd_file_slow(int fd)
{
	if (fd < 0 || fd >= FD_MAX || !shim.fds)
		return 0;
	uint32_t f = atomic_load_explicit(&shim.fds[fd].file, memory_order_relaxed);
	if (f != 0)
		return f == FD_IGNORED ? 0 : f;
	if (atomic_load_explicit(&shim.state, memory_order_relaxed) != SHIM_ON)
		return 0;
	struct shim_thread *t = shim_self();
	if (!t || t->busy)
		return 0;
	int saved = errno;
	t->busy = 1;
	f = classify(fd);
	uint64_t off = 0;
	if (f) {
		long pos = syscall(SYS_lseek, fd, 0, SEEK_CUR);
		off = pos > 0 ? (uint64_t)pos : 0;
	}
	t->busy = 0;
	errno = saved;
	shim_fd_set(fd, f, off);
	return f;
}

void shim_fd_set(int fd, uint32_t file, uint64_t offset)
{
	if (fd < 0 || fd >= FD_MAX || !shim.fds)
		return;
	atomic_store_explicit(&shim.fds[fd].offset, offset, memory_order_relaxed);
	atomic_store_explicit(&shim.fds[fd].file, file ? file : FD_IGNORED, memory_order_relaxed);
}

void shim_fd_clear(int fd)
{
	if (fd >= 0 && fd < FD_MAX && shim.fds)
		atomic_store_explicit(&shim.fds[fd].file, 0, memory_order_relaxed);
}
