/* POSIX layer: libc's file I/O entry points. Each wrapper looks up the
 * file (by fd or path), and when it is watched times the real call and
 * records it; otherwise it only calls through. Offsets of read/write come
 * from the shim's own per-fd position (kept by read, write and lseek), as
 * Darshan does, so recording costs no extra system call. */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/uio.h>
#include <unistd.h>

#include "shim.h"

/* File id of a path when this call may be recorded; 0 otherwise (shim
 * off, inside the shim, excluded path). Cheap when the shim is off. */
static inline uint32_t watch_path(const char *path)
{
	if (atomic_load_explicit(&shim.state, memory_order_relaxed) != SHIM_ON)
		return 0;
	struct shim_thread *t = shim_self();
	if (!t || t->busy)
		return 0;
	return shim_name_path(path);
}

/* A path that names its file without a directory fd. Not inline in the
 * wrappers: libc declares their path nonnull, but callers may pass NULL. */
static bool plain_path(int dirfd, const char *path)
{
	return dirfd == AT_FDCWD || (path && path[0] == '/');
}

/* ------------------------------------------------------------ open, close */

static int opened(struct shim_call *c, int fd)
{
	if (fd >= 0)
		shim_fd_set(fd, c->file, 0);
	shim_end_meta(c, fd >= 0);
	return fd;
}

/* An open-like call by path has returned fd. */
static int opened_path(struct shim_call *c, const char *path, int fd)
{
	if (!shim_path_after(c, path, fd < 0)) {
		if (fd >= 0)
			shim_fd_set(fd, 0, 0);
		return fd;
	}
	return opened(c, fd);
}

static mode_t mode_arg(int flags, va_list ap)
{
	return (flags & (O_CREAT | O_TMPFILE)) ? (mode_t)va_arg(ap, int) : 0;
}

#define OPEN_WRAPPER(name, op)                                                             \
	SHIM_EXPORT int name(const char *path, int flags, ...)                             \
	{                                                                                  \
		SHIM_REAL(name);                                                           \
		va_list ap;                                                                \
		va_start(ap, flags);                                                       \
		mode_t mode = mode_arg(flags, ap);                                         \
		va_end(ap);                                                                \
		struct shim_call c;                                                        \
		if (!shim_begin(&c, IOP_LAYER_POSIX, op, 0))                               \
			return real_##name(path, flags, mode);                             \
		return opened_path(&c, path, real_##name(path, flags, mode));              \
	}

OPEN_WRAPPER(open, IOP_OP_OPEN)
OPEN_WRAPPER(open64, IOP_OP_OPEN)

#define OPEN2_WRAPPER(name)                                                                \
	int name(const char *path, int flags);                                             \
	SHIM_EXPORT int name(const char *path, int flags)                                  \
	{                                                                                  \
		SHIM_REAL(name);                                                           \
		struct shim_call c;                                                        \
		if (!shim_begin(&c, IOP_LAYER_POSIX, IOP_OP_OPEN, 0))                      \
			return real_##name(path, flags);                                   \
		return opened_path(&c, path, real_##name(path, flags));                    \
	}

OPEN2_WRAPPER(__open_2)
OPEN2_WRAPPER(__open64_2)

/* A path relative to a directory fd: recorded once the fd is open, when its
 * /proc link names it. */
#define OPENAT_WRAPPER(name)                                                               \
	SHIM_EXPORT int name(int dirfd, const char *path, int flags, ...)                  \
	{                                                                                  \
		SHIM_REAL(name);                                                           \
		va_list ap;                                                                \
		va_start(ap, flags);                                                       \
		mode_t mode = mode_arg(flags, ap);                                         \
		va_end(ap);                                                                \
		struct shim_call c;                                                        \
		bool plain = plain_path(dirfd, path);                                      \
		if (!plain || !shim_begin(&c, IOP_LAYER_POSIX, IOP_OP_OPEN, 0)) {          \
			int fd = real_##name(dirfd, path, flags, mode);                    \
			if (fd >= 0 && !plain)                                             \
				shim_fd_clear(fd); /* classify on first use */             \
			return fd;                                                         \
		}                                                                          \
		return opened_path(&c, path, real_##name(dirfd, path, flags, mode));       \
	}

OPENAT_WRAPPER(openat)
OPENAT_WRAPPER(openat64)

#define CREAT_WRAPPER(name)                                                                \
	SHIM_EXPORT int name(const char *path, mode_t mode)                                \
	{                                                                                  \
		SHIM_REAL(name);                                                           \
		struct shim_call c;                                                        \
		if (!shim_begin(&c, IOP_LAYER_POSIX, IOP_OP_CREATE, 0))                    \
			return real_##name(path, mode);                                    \
		return opened_path(&c, path, real_##name(path, mode));                     \
	}

CREAT_WRAPPER(creat)
CREAT_WRAPPER(creat64)

/* mkstemp and friends fill in the name: record after the call (from ra,
 * the caller of the wrapper). */
static int made_temp(int fd, uint64_t t0, const char *tmpl, const void *ra)
{
	struct shim_call c;
	uint32_t file = fd >= 0 ? watch_path(tmpl) : 0;
	if (file && shim_begin_from(&c, IOP_LAYER_POSIX, IOP_OP_CREATE, file, ra, 0)) {
		c.t0 = t0;
		opened(&c, fd);
	} else if (fd >= 0) {
		shim_fd_set(fd, 0, 0);
	}
	return fd;
}

SHIM_EXPORT int mkstemp(char *tmpl)
{
	SHIM_REAL(mkstemp);
	uint64_t t0 = shim_ticks();
	return made_temp(real_mkstemp(tmpl), t0, tmpl, SHIM_CALLER());
}

SHIM_EXPORT int mkostemp(char *tmpl, int flags)
{
	SHIM_REAL(mkostemp);
	uint64_t t0 = shim_ticks();
	return made_temp(real_mkostemp(tmpl, flags), t0, tmpl, SHIM_CALLER());
}

SHIM_EXPORT int mkstemps(char *tmpl, int suffixlen)
{
	SHIM_REAL(mkstemps);
	uint64_t t0 = shim_ticks();
	return made_temp(real_mkstemps(tmpl, suffixlen), t0, tmpl, SHIM_CALLER());
}

SHIM_EXPORT int mkostemps(char *tmpl, int suffixlen, int flags)
{
	SHIM_REAL(mkostemps);
	uint64_t t0 = shim_ticks();
	return made_temp(real_mkostemps(tmpl, suffixlen, flags), t0, tmpl, SHIM_CALLER());
}

SHIM_EXPORT int close(int fd)
{
	SHIM_REAL(close);
	if (SHIM_UNLIKELY(shim_fd_keep_open(fd)))
		return 0; /* the shim's own descriptor: see guard.c */
	struct shim_call c;
	uint32_t file = shim_fd_file(fd);
	shim_fd_clear(fd); /* before: once closed, another thread may reuse fd */
	if (!file || !shim_begin(&c, IOP_LAYER_POSIX, IOP_OP_CLOSE, file))
		return real_close(fd);
	int r = real_close(fd);
	shim_end_meta(&c, r == 0);
	return r;
}

/* ------------------------------------------------------------ transfers */

/* read/write/readv/writev: at the shim's idea of the fd's position. */
#define SEQ_IO(op, call)                                                                   \
	struct shim_call c;                                                                \
	uint32_t file = shim_fd_file(fd);                                                  \
	if (!file || !shim_begin(&c, IOP_LAYER_POSIX, op, file))                           \
		return call;                                                               \
	uint64_t pos_ = shim_fd_offset(fd);                                                \
	ssize_t r = call;                                                                  \
	if (r > 0)                                                                         \
		shim_fd_advance(fd, pos_ + (uint64_t)r);                                   \
	shim_end_io(&c, r, pos_, true);                                                    \
	return r;

/* pread/pwrite and the p*v forms: at an explicit offset. */
#define AT_IO(op, call, offset)                                                            \
	struct shim_call c;                                                                \
	uint32_t file = shim_fd_file(fd);                                                  \
	if (!file || !shim_begin(&c, IOP_LAYER_POSIX, op, file))                           \
		return call;                                                               \
	ssize_t r = call;                                                                  \
	shim_end_io(&c, r, (uint64_t)(offset), true);                                      \
	return r;

SHIM_EXPORT ssize_t read(int fd, void *buf, size_t n)
{
	SHIM_REAL(read);
	SEQ_IO(IOP_OP_READ, real_read(fd, buf, n))
}

SHIM_EXPORT ssize_t write(int fd, const void *buf, size_t n)
{
	SHIM_REAL(write);
	SEQ_IO(IOP_OP_WRITE, real_write(fd, buf, n))
}

SHIM_EXPORT ssize_t readv(int fd, const struct iovec *iov, int n)
{
	SHIM_REAL(readv);
	SEQ_IO(IOP_OP_READ, real_readv(fd, iov, n))
}

SHIM_EXPORT ssize_t writev(int fd, const struct iovec *iov, int n)
{
	SHIM_REAL(writev);
	SEQ_IO(IOP_OP_WRITE, real_writev(fd, iov, n))
}

SHIM_EXPORT ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
	SHIM_REAL(pread);
	AT_IO(IOP_OP_READ, real_pread(fd, buf, n, off), off)
}

SHIM_EXPORT ssize_t pread64(int fd, void *buf, size_t n, off64_t off)
{
	SHIM_REAL(pread64);
	AT_IO(IOP_OP_READ, real_pread64(fd, buf, n, off), off)
}

SHIM_EXPORT ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
	SHIM_REAL(pwrite);
	AT_IO(IOP_OP_WRITE, real_pwrite(fd, buf, n, off), off)
}

SHIM_EXPORT ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t off)
{
	SHIM_REAL(pwrite64);
	AT_IO(IOP_OP_WRITE, real_pwrite64(fd, buf, n, off), off)
}

SHIM_EXPORT ssize_t preadv(int fd, const struct iovec *iov, int n, off_t off)
{
	SHIM_REAL(preadv);
	AT_IO(IOP_OP_READ, real_preadv(fd, iov, n, off), off)
}

SHIM_EXPORT ssize_t preadv64(int fd, const struct iovec *iov, int n, off64_t off)
{
	SHIM_REAL(preadv64);
	AT_IO(IOP_OP_READ, real_preadv64(fd, iov, n, off), off)
}

SHIM_EXPORT ssize_t pwritev(int fd, const struct iovec *iov, int n, off_t off)
{
	SHIM_REAL(pwritev);
	AT_IO(IOP_OP_WRITE, real_pwritev(fd, iov, n, off), off)
}

SHIM_EXPORT ssize_t pwritev64(int fd, const struct iovec *iov, int n, off64_t off)
{
	SHIM_REAL(pwritev64);
	AT_IO(IOP_OP_WRITE, real_pwritev64(fd, iov, n, off), off)
}

/* The v2 forms take offset -1 for "the current position". */
#define V2_IO(op, call, off)                                                               \
	if ((off) == -1) {                                                                 \
		SEQ_IO(op, call)                                                           \
	} else {                                                                           \
		AT_IO(op, call, off)                                                       \
	}

SHIM_EXPORT ssize_t preadv2(int fd, const struct iovec *iov, int n, off_t off, int flags)
{
	SHIM_REAL(preadv2);
	V2_IO(IOP_OP_READ, real_preadv2(fd, iov, n, off, flags), off)
}

SHIM_EXPORT ssize_t preadv64v2(int fd, const struct iovec *iov, int n, off64_t off, int flags)
{
	SHIM_REAL(preadv64v2);
	V2_IO(IOP_OP_READ, real_preadv64v2(fd, iov, n, off, flags), off)
}

SHIM_EXPORT ssize_t pwritev2(int fd, const struct iovec *iov, int n, off_t off, int flags)
{
	SHIM_REAL(pwritev2);
	V2_IO(IOP_OP_WRITE, real_pwritev2(fd, iov, n, off, flags), off)
}

SHIM_EXPORT ssize_t pwritev64v2(int fd, const struct iovec *iov, int n, off64_t off, int flags)
{
	SHIM_REAL(pwritev64v2);
	V2_IO(IOP_OP_WRITE, real_pwritev64v2(fd, iov, n, off, flags), off)
}

/* copy_file_range, sendfile and splice: the kernel moves bytes from one
 * descriptor to another without the application seeing them. Each side
 * that is a watched file is recorded: when both are, a READ of the source
 * nested in a WRITE of the destination (one call, so the rank's time
 * counts once: it is all the read's exclusive time), else the one side
 * that is a file (sockets and pipes are not watched). A side's offset is
 * read from the offset pointer the call was given only after the call
 * succeeded (the kernel moved it on by the bytes moved, so the pointer
 * was good; a bad one fails with EFAULT before the shim looks), else it
 * is the shim's idea of the descriptor's position, moved on likewise. */
_Static_assert(sizeof(off_t) == sizeof(off64_t), "sendfile's off_t is 64 bits");

struct xfer_side {
	int fd;
	const off64_t *off; /* the call's offset pointer, or NULL */
	bool on;            /* recorded */
	uint64_t pos;       /* the descriptor's position before, when !off */
	struct shim_call c;
};

static void xfer_begin(struct xfer_side *in, struct xfer_side *out, const void *ra)
{
	uint32_t fout = shim_fd_file(out->fd), fin = shim_fd_file(in->fd);
	out->on = fout && shim_begin_from(&out->c, IOP_LAYER_POSIX, IOP_OP_WRITE, fout, ra, 0);
	in->on = fin && shim_begin_from(&in->c, IOP_LAYER_POSIX, IOP_OP_READ, fin, ra, 0);
	in->pos = in->on && !in->off ? shim_fd_offset(in->fd) : 0;
	out->pos = out->on && !out->off ? shim_fd_offset(out->fd) : 0;
}

static void xfer_side_end(struct xfer_side *x, ssize_t r)
{
	if (!x->on)
		return;
	bool known = !x->off || r >= 0;
	uint64_t at = x->pos;
	if (x->off && r >= 0)
		at = (uint64_t)*x->off - (uint64_t)r;
	else if (!x->off && r > 0)
		shim_fd_advance(x->fd, x->pos + (uint64_t)r);
	shim_end_io(&x->c, r, at, known);
}

/* The inner call (the read) ends first; a side not recorded is left
 * alone. Keeps errno. */
static ssize_t xfer_end(struct xfer_side *in, struct xfer_side *out, ssize_t r)
{
	xfer_side_end(in, r);
	xfer_side_end(out, r);
	return r;
}

#define XFER(call, in_fd, in_off, out_fd, out_off)                                        \
	struct xfer_side in = {.fd = (in_fd), .off = (in_off)};                            \
	struct xfer_side out = {.fd = (out_fd), .off = (out_off)};                         \
	xfer_begin(&in, &out, SHIM_CALLER());                                              \
	return xfer_end(&in, &out, call);

SHIM_EXPORT ssize_t copy_file_range(int fd_in, off64_t *off_in, int fd_out, off64_t *off_out,
                                    size_t len, unsigned int flags)
{
	SHIM_REAL(copy_file_range);
	XFER(real_copy_file_range(fd_in, off_in, fd_out, off_out, len, flags), fd_in, off_in,
	     fd_out, off_out)
}

SHIM_EXPORT ssize_t sendfile(int out_fd, int in_fd, off_t *offset, size_t count)
{
	SHIM_REAL(sendfile);
	XFER(real_sendfile(out_fd, in_fd, offset, count), in_fd, (const off64_t *)offset, out_fd,
	     NULL)
}

SHIM_EXPORT ssize_t sendfile64(int out_fd, int in_fd, off64_t *offset, size_t count)
{
	SHIM_REAL(sendfile64);
	XFER(real_sendfile64(out_fd, in_fd, offset, count), in_fd, offset, out_fd, NULL)
}

SHIM_EXPORT ssize_t splice(int fd_in, off64_t *off_in, int fd_out, off64_t *off_out, size_t len,
                           unsigned int flags)
{
	SHIM_REAL(splice);
	XFER(real_splice(fd_in, off_in, fd_out, off_out, len, flags), fd_in, off_in, fd_out,
	     off_out)
}

/* ------------------------------------------------------------ fd metadata */

#define FD_META(op, type, call, ok_expr)                                                   \
	struct shim_call c;                                                                \
	uint32_t file = shim_fd_file(fd);                                                  \
	if (!file || !shim_begin(&c, IOP_LAYER_POSIX, op, file))                           \
		return call;                                                               \
	type r = call;                                                                     \
	shim_end_meta(&c, ok_expr);                                                        \
	return r;

#define SEEK_WRAPPER(name, off_type)                                                       \
	SHIM_EXPORT off_type name(int fd, off_type off, int whence)                        \
	{                                                                                  \
		SHIM_REAL(name);                                                           \
		struct shim_call c;                                                        \
		uint32_t file = shim_fd_file(fd);                                          \
		if (!file || !shim_begin(&c, IOP_LAYER_POSIX, IOP_OP_SEEK, file))          \
			return real_##name(fd, off, whence);                               \
		off_type r = real_##name(fd, off, whence);                                 \
		if (r >= 0)                                                                \
			shim_fd_advance(fd, (uint64_t)r);                                  \
		struct shim_result res = {.offset = (uint64_t)r, .flags = IOP_EV_OFFSET};  \
		if (r < 0)                                                                 \
			res = (struct shim_result){.err = errno, .flags = IOP_EV_ERROR};   \
		shim_end(&c, &res);                                                        \
		return r;                                                                  \
	}

SEEK_WRAPPER(lseek, off_t)
SEEK_WRAPPER(lseek64, off64_t)

SHIM_EXPORT int fsync(int fd)
{
	SHIM_REAL(fsync);
	FD_META(IOP_OP_SYNC, int, real_fsync(fd), r == 0)
}

SHIM_EXPORT int fdatasync(int fd)
{
	SHIM_REAL(fdatasync);
	FD_META(IOP_OP_SYNC, int, real_fdatasync(fd), r == 0)
}

SHIM_EXPORT int ftruncate(int fd, off_t len)
{
	SHIM_REAL(ftruncate);
	FD_META(IOP_OP_TRUNCATE, int, real_ftruncate(fd, len), r == 0)
}

SHIM_EXPORT int ftruncate64(int fd, off64_t len)
{
	SHIM_REAL(ftruncate64);
	FD_META(IOP_OP_TRUNCATE, int, real_ftruncate64(fd, len), r == 0)
}

SHIM_EXPORT int fstat(int fd, struct stat *st)
{
	SHIM_REAL(fstat);
	FD_META(IOP_OP_STAT, int, real_fstat(fd, st), r == 0)
}

SHIM_EXPORT int fstat64(int fd, struct stat64 *st)
{
	SHIM_REAL(fstat64);
	FD_META(IOP_OP_STAT, int, real_fstat64(fd, st), r == 0)
}

int __fxstat(int ver, int fd, struct stat *st);
SHIM_EXPORT int __fxstat(int ver, int fd, struct stat *st)
{
	SHIM_REAL(__fxstat);
	FD_META(IOP_OP_STAT, int, real___fxstat(ver, fd, st), r == 0)
}

int __fxstat64(int ver, int fd, struct stat64 *st);
SHIM_EXPORT int __fxstat64(int ver, int fd, struct stat64 *st)
{
	SHIM_REAL(__fxstat64);
	FD_META(IOP_OP_STAT, int, real___fxstat64(ver, fd, st), r == 0)
}

/* dup: the new fd is the same open file, at the same position. */
static int duped(struct shim_call *c, bool rec, int fd, int nfd, uint32_t file)
{
	if (nfd >= 0)
		shim_fd_set(nfd, file, shim_fd_offset(fd));
	if (rec)
		shim_end_meta(c, nfd >= 0);
	return nfd;
}

#define DUP_BEGIN                                                                          \
	struct shim_call c;                                                                \
	uint32_t file = shim_fd_file(fd);                                                  \
	bool rec = file && shim_begin(&c, IOP_LAYER_POSIX, IOP_OP_DUP, file);

SHIM_EXPORT int dup(int fd)
{
	SHIM_REAL(dup);
	DUP_BEGIN
	return duped(&c, rec, fd, real_dup(fd), file);
}

SHIM_EXPORT int dup2(int fd, int nfd)
{
	SHIM_REAL(dup2);
	DUP_BEGIN
	if (nfd != fd)
		shim_fd_clear(nfd);
	int r = real_dup2(fd, nfd);
	if (r >= 0 && nfd != fd)
		shim_fd_taken(nfd);
	return duped(&c, rec, fd, r, file);
}

SHIM_EXPORT int dup3(int fd, int nfd, int flags)
{
	SHIM_REAL(dup3);
	DUP_BEGIN
	shim_fd_clear(nfd);
	int r = real_dup3(fd, nfd, flags);
	if (r >= 0)
		shim_fd_taken(nfd);
	return duped(&c, rec, fd, r, file);
}

/* fcntl's record locks, process-owned and open-file-description-owned: a
 * lock taken, tried or tested. F_SETLKW waits until the lock is granted,
 * and the wait is the call's time (MPI-IO's data sieving and atomic mode
 * take them around shared-file writes). The 64 forms are other numbers
 * only where off_t is 32 bits. */
static bool lock_cmd(int cmd)
{
	switch (cmd) {
	case F_GETLK:
	case F_SETLK:
	case F_SETLKW:
	case F_OFD_GETLK:
	case F_OFD_SETLK:
	case F_OFD_SETLKW:
		return true;
	default:
		break;
	}
#if defined(F_GETLK64) && F_GETLK64 != F_GETLK
	return cmd == F_GETLK64 || cmd == F_SETLK64 || cmd == F_SETLKW64;
#else
	return false;
#endif
}

/* fcntl and fcntl64: the dup commands and the lock commands are recorded,
 * every other command passes straight through. */
#define FCNTL_WRAPPER(name)                                                                \
	SHIM_EXPORT int name(int fd, int cmd, ...)                                         \
	{                                                                                  \
		SHIM_REAL(name);                                                           \
		va_list ap;                                                                \
		va_start(ap, cmd);                                                         \
		void *arg = va_arg(ap, void *); /* every argument fits a pointer */        \
		va_end(ap);                                                                \
		if (lock_cmd(cmd)) {                                                       \
			FD_META(IOP_OP_LOCK, int, real_##name(fd, cmd, arg), r != -1)      \
		}                                                                          \
		if (cmd != F_DUPFD && cmd != F_DUPFD_CLOEXEC)                              \
			return real_##name(fd, cmd, arg);                                  \
		DUP_BEGIN                                                                  \
		return duped(&c, rec, fd, real_##name(fd, cmd, arg), file);                \
	}

FCNTL_WRAPPER(fcntl)
FCNTL_WRAPPER(fcntl64)

SHIM_EXPORT int flock(int fd, int op)
{
	SHIM_REAL(flock);
	FD_META(IOP_OP_LOCK, int, real_flock(fd, op), r == 0)
}

/* The file system a descriptor's file is on (statfs, by path, is with
 * stat below). */
SHIM_EXPORT int fstatfs(int fd, struct statfs *st)
{
	SHIM_REAL(fstatfs);
	FD_META(IOP_OP_STATFS, int, real_fstatfs(fd, st), r == 0)
}

SHIM_EXPORT int fstatfs64(int fd, struct statfs64 *st)
{
	SHIM_REAL(fstatfs64);
	FD_META(IOP_OP_STATFS, int, real_fstatfs64(fd, st), r == 0)
}

#define MMAP_WRAPPER(name, off_type)                                                       \
	SHIM_EXPORT void *name(void *addr, size_t len, int prot, int flags, int fd,        \
			       off_type off)                                               \
	{                                                                                  \
		SHIM_REAL(name);                                                           \
		struct shim_call c;                                                        \
		uint32_t file = fd >= 0 && !(flags & MAP_ANONYMOUS) ? shim_fd_file(fd) : 0; \
		if (!file || !shim_begin(&c, IOP_LAYER_POSIX, IOP_OP_MMAP, file))          \
			return real_##name(addr, len, prot, flags, fd, off);               \
		void *r = real_##name(addr, len, prot, flags, fd, off);                    \
		struct shim_result res = {.bytes = len, .offset = (uint64_t)off,           \
					  .flags = IOP_EV_BYTES | IOP_EV_OFFSET};          \
		if (r == MAP_FAILED)                                                       \
			res = (struct shim_result){.err = errno, .flags = IOP_EV_ERROR};   \
		shim_end(&c, &res);                                                        \
		return r;                                                                  \
	}

MMAP_WRAPPER(mmap, off_t)
MMAP_WRAPPER(mmap64, off64_t)

/* ------------------------------------------------------------ path metadata */

#define PATH_META(op, path, call)                                                          \
	struct shim_call c;                                                                \
	const char *path_ = (path);                                                        \
	if (!path_ || !shim_begin(&c, IOP_LAYER_POSIX, op, 0))                             \
		return call;                                                               \
	int r = call;                                                                      \
	if (shim_path_after(&c, path_, r != 0))                                            \
		shim_end_meta(&c, r == 0);                                                 \
	return r;

SHIM_EXPORT int stat(const char *path, struct stat *st)
{
	SHIM_REAL(stat);
	PATH_META(IOP_OP_STAT, path, real_stat(path, st))
}

SHIM_EXPORT int stat64(const char *path, struct stat64 *st)
{
	SHIM_REAL(stat64);
	PATH_META(IOP_OP_STAT, path, real_stat64(path, st))
}

SHIM_EXPORT int lstat(const char *path, struct stat *st)
{
	SHIM_REAL(lstat);
	PATH_META(IOP_OP_STAT, path, real_lstat(path, st))
}

SHIM_EXPORT int lstat64(const char *path, struct stat64 *st)
{
	SHIM_REAL(lstat64);
	PATH_META(IOP_OP_STAT, path, real_lstat64(path, st))
}

int __xstat(int ver, const char *path, struct stat *st);
SHIM_EXPORT int __xstat(int ver, const char *path, struct stat *st)
{
	SHIM_REAL(__xstat);
	PATH_META(IOP_OP_STAT, path, real___xstat(ver, path, st))
}

int __xstat64(int ver, const char *path, struct stat64 *st);
SHIM_EXPORT int __xstat64(int ver, const char *path, struct stat64 *st)
{
	SHIM_REAL(__xstat64);
	PATH_META(IOP_OP_STAT, path, real___xstat64(ver, path, st))
}

int __lxstat(int ver, const char *path, struct stat *st);
SHIM_EXPORT int __lxstat(int ver, const char *path, struct stat *st)
{
	SHIM_REAL(__lxstat);
	PATH_META(IOP_OP_STAT, path, real___lxstat(ver, path, st))
}

int __lxstat64(int ver, const char *path, struct stat64 *st);
SHIM_EXPORT int __lxstat64(int ver, const char *path, struct stat64 *st)
{
	SHIM_REAL(__lxstat64);
	PATH_META(IOP_OP_STAT, path, real___lxstat64(ver, path, st))
}

/* *at forms: recorded when the path does not depend on a directory fd. */
#define AT_PATH(dirfd, path) (plain_path(dirfd, path) ? (path) : NULL)

SHIM_EXPORT int fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
	SHIM_REAL(fstatat);
	PATH_META(IOP_OP_STAT, AT_PATH(dirfd, path), real_fstatat(dirfd, path, st, flags))
}

SHIM_EXPORT int fstatat64(int dirfd, const char *path, struct stat64 *st, int flags)
{
	SHIM_REAL(fstatat64);
	PATH_META(IOP_OP_STAT, AT_PATH(dirfd, path), real_fstatat64(dirfd, path, st, flags))
}

int __fxstatat(int ver, int dirfd, const char *path, struct stat *st, int flags);
SHIM_EXPORT int __fxstatat(int ver, int dirfd, const char *path, struct stat *st, int flags)
{
	SHIM_REAL(__fxstatat);
	PATH_META(IOP_OP_STAT, AT_PATH(dirfd, path), real___fxstatat(ver, dirfd, path, st, flags))
}

SHIM_EXPORT int statx(int dirfd, const char *path, int flags, unsigned mask, struct statx *st)
{
	SHIM_REAL(statx);
	PATH_META(IOP_OP_STAT, AT_PATH(dirfd, path), real_statx(dirfd, path, flags, mask, st))
}

/* The file system a path is on (excluded paths are not recorded, as for
 * stat). */
SHIM_EXPORT int statfs(const char *path, struct statfs *st)
{
	SHIM_REAL(statfs);
	PATH_META(IOP_OP_STATFS, path, real_statfs(path, st))
}

SHIM_EXPORT int statfs64(const char *path, struct statfs64 *st)
{
	SHIM_REAL(statfs64);
	PATH_META(IOP_OP_STATFS, path, real_statfs64(path, st))
}

SHIM_EXPORT int unlink(const char *path)
{
	SHIM_REAL(unlink);
	PATH_META(IOP_OP_UNLINK, path, real_unlink(path))
}

SHIM_EXPORT int rename(const char *from, const char *to)
{
	SHIM_REAL(rename);
	PATH_META(IOP_OP_RENAME, from, real_rename(from, to))
}

SHIM_EXPORT int mkdir(const char *path, mode_t mode)
{
	SHIM_REAL(mkdir);
	PATH_META(IOP_OP_MKDIR, path, real_mkdir(path, mode))
}

SHIM_EXPORT int rmdir(const char *path)
{
	SHIM_REAL(rmdir);
	PATH_META(IOP_OP_RMDIR, path, real_rmdir(path))
}

SHIM_EXPORT int access(const char *path, int mode)
{
	SHIM_REAL(access);
	PATH_META(IOP_OP_ACCESS, path, real_access(path, mode))
}
