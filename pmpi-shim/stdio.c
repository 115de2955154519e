/* STDIO layer. A stream is watched when its descriptor is (fileno), so a
 * stream and the fd under it share one file row; writes to stdout and
 * stderr show as "<stdout>" and "<stderr>". glibc's stdio calls the kernel
 * through internal functions, not through the POSIX wrappers, so stdio
 * calls are not double counted; for the same reason fopen and fclose keep
 * the fd table up to date themselves. Offsets are not reported (ftell would
 * cost a lock per call). The _chk forms are what _FORTIFY_SOURCE builds call. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "shim.h"

/* Each transfer, fflush included, has an _unlocked form (the caller holds
 * the stream's lock, or needs none), wrapped alike: programs built with
 * gnulib's unlocked-io (coreutils, sed, grep, tar) do all their stdio
 * through them. The header may define some as macros. (putc_unlocked and
 * getc_unlocked are inline: not seen.) */
#undef fread_unlocked
#undef fwrite_unlocked
#undef fgets_unlocked
#undef fputs_unlocked
#undef fputc_unlocked
#undef fgetc_unlocked
#undef fflush_unlocked

static inline uint32_t stream_file(FILE *f)
{
	if (SHIM_UNLIKELY(!f || atomic_load_explicit(&shim.state, memory_order_relaxed) != SHIM_ON))
		return 0;
	return shim_fd_file(fileno_unlocked(f));
}

/* Records a transfer of bytes (failed when failed, errno then set). */
static inline void end_transfer(struct shim_call *c, uint64_t bytes, bool failed)
{
	struct shim_result res = {.bytes = bytes, .flags = IOP_EV_BYTES};
	if (failed)
		res = (struct shim_result){.err = errno, .flags = IOP_EV_ERROR};
	shim_end(c, &res);
}

#define STREAM_BEGIN(op, passthrough) STREAM_BEGIN_FROM(op, passthrough, SHIM_CALLER())
/* for helpers that record on behalf of a wrapper: its caller's address */
#define STREAM_BEGIN_FROM(op, passthrough, ra)                                             \
	struct shim_call c;                                                                \
	uint32_t file = stream_file(f);                                                    \
	if (!file || !shim_begin_from(&c, IOP_LAYER_STDIO, op, file, ra, 0))               \
		return passthrough;

/* ------------------------------------------------------------ open, close */

static FILE *opened(struct shim_call *c, FILE *f)
{
	if (f)
		shim_fd_set(fileno_unlocked(f), c->file, 0);
	shim_end_meta(c, f != NULL);
	return f;
}

/* An open by path has returned f (path read only now, see shim_path_after). */
static FILE *opened_path(struct shim_call *c, const char *path, FILE *f)
{
	if (!shim_path_after(c, path, f == NULL)) {
		if (f)
			shim_fd_set(fileno_unlocked(f), 0, 0);
		return f;
	}
	return opened(c, f);
}

/* freopen(NULL, ...) changes the mode of the same file: not an open. */
static bool path_given(const char *path)
{
	return path != NULL;
}

#define FOPEN_WRAPPER(name)                                                                \
	SHIM_EXPORT FILE *name(const char *path, const char *mode)                         \
	{                                                                                  \
		SHIM_REAL(name);                                                           \
		struct shim_call c;                                                        \
		if (!shim_begin(&c, IOP_LAYER_STDIO, IOP_OP_OPEN, 0))                      \
			return real_##name(path, mode);                                    \
		return opened_path(&c, path, real_##name(path, mode));                     \
	}

FOPEN_WRAPPER(fopen)
FOPEN_WRAPPER(fopen64)

#define FREOPEN_WRAPPER(name)                                                              \
	SHIM_EXPORT FILE *name(const char *path, const char *mode, FILE *f)                \
	{                                                                                  \
		SHIM_REAL(name);                                                           \
		if (f)                                                                     \
			shim_fd_clear(fileno_unlocked(f));                                 \
		struct shim_call c;                                                        \
		if (!path_given(path) || !shim_begin(&c, IOP_LAYER_STDIO, IOP_OP_OPEN, 0)) \
			return real_##name(path, mode, f);                                 \
		return opened_path(&c, path, real_##name(path, mode, f));                  \
	}

FREOPEN_WRAPPER(freopen)
FREOPEN_WRAPPER(freopen64)

SHIM_EXPORT FILE *fdopen(int fd, const char *mode)
{
	SHIM_REAL(fdopen);
	struct shim_call c;
	uint32_t file = shim_fd_file(fd);
	if (!file || !shim_begin(&c, IOP_LAYER_STDIO, IOP_OP_DUP, file))
		return real_fdopen(fd, mode);
	FILE *f = real_fdopen(fd, mode);
	shim_end_meta(&c, f != NULL);
	return f;
}

SHIM_EXPORT int fclose(FILE *f)
{
	SHIM_REAL(fclose);
	struct shim_call c;
	uint32_t file = stream_file(f);
	if (f)
		shim_fd_clear(fileno_unlocked(f)); /* its close is internal to libc */
	if (!file || !shim_begin(&c, IOP_LAYER_STDIO, IOP_OP_CLOSE, file))
		return real_fclose(f);
	int r = real_fclose(f);
	shim_end_meta(&c, r == 0);
	return r;
}

/* int NAME(FILE *f): fflush, fgetc and their other names; end records the
 * call from its result r. */
#define STREAM_INT_WRAPPER(name, op, end)                                                  \
	SHIM_EXPORT int name(FILE *f)                                                      \
	{                                                                                  \
		SHIM_REAL(name);                                                           \
		STREAM_BEGIN(op, real_##name(f))                                           \
		int r = real_##name(f);                                                    \
		end;                                                                       \
		return r;                                                                  \
	}

#define FFLUSH_WRAPPER(name) STREAM_INT_WRAPPER(name, IOP_OP_SYNC, shim_end_meta(&c, r == 0))

FFLUSH_WRAPPER(fflush)
FFLUSH_WRAPPER(fflush_unlocked)

/* ------------------------------------------------------------ transfers */

#define FREAD_WRAPPER(name)                                                                \
	SHIM_EXPORT size_t name(void *p, size_t size, size_t n, FILE *f)                   \
	{                                                                                  \
		SHIM_REAL(name);                                                           \
		STREAM_BEGIN(IOP_OP_READ, real_##name(p, size, n, f))                      \
		size_t r = real_##name(p, size, n, f);                                     \
		end_transfer(&c, (uint64_t)r * size,                                       \
			     r == 0 && n && size && ferror_unlocked(f));                   \
		return r;                                                                  \
	}

FREAD_WRAPPER(fread)
FREAD_WRAPPER(fread_unlocked)

size_t __fread_chk(void *p, size_t plen, size_t size, size_t n, FILE *f);
SHIM_EXPORT size_t __fread_chk(void *p, size_t plen, size_t size, size_t n, FILE *f)
{
	SHIM_REAL(__fread_chk);
	STREAM_BEGIN(IOP_OP_READ, real___fread_chk(p, plen, size, n, f))
	size_t r = real___fread_chk(p, plen, size, n, f);
	end_transfer(&c, (uint64_t)r * size, r == 0 && n && size && ferror_unlocked(f));
	return r;
}

#define FWRITE_WRAPPER(name)                                                               \
	SHIM_EXPORT size_t name(const void *p, size_t size, size_t n, FILE *f)             \
	{                                                                                  \
		SHIM_REAL(name);                                                           \
		STREAM_BEGIN(IOP_OP_WRITE, real_##name(p, size, n, f))                     \
		size_t r = real_##name(p, size, n, f);                                     \
		end_transfer(&c, (uint64_t)r * size, r < n && size && ferror_unlocked(f)); \
		return r;                                                                  \
	}

FWRITE_WRAPPER(fwrite)
FWRITE_WRAPPER(fwrite_unlocked)

#define FGETS_WRAPPER(name)                                                                \
	SHIM_EXPORT char *name(char *s, int n, FILE *f)                                    \
	{                                                                                  \
		SHIM_REAL(name);                                                           \
		STREAM_BEGIN(IOP_OP_READ, real_##name(s, n, f))                            \
		char *r = real_##name(s, n, f);                                            \
		end_transfer(&c, r ? strlen(r) : 0, !r && ferror_unlocked(f));             \
		return r;                                                                  \
	}

FGETS_WRAPPER(fgets)
FGETS_WRAPPER(fgets_unlocked)

char *__fgets_chk(char *s, size_t size, int n, FILE *f);
SHIM_EXPORT char *__fgets_chk(char *s, size_t size, int n, FILE *f)
{
	SHIM_REAL(__fgets_chk);
	STREAM_BEGIN(IOP_OP_READ, real___fgets_chk(s, size, n, f))
	char *r = real___fgets_chk(s, size, n, f);
	end_transfer(&c, r ? strlen(r) : 0, !r && ferror_unlocked(f));
	return r;
}

#define FGETC_WRAPPER(name)                                                                \
	STREAM_INT_WRAPPER(name, IOP_OP_READ,                                              \
	                   end_transfer(&c, r != EOF, r == EOF && ferror_unlocked(f)))

FGETC_WRAPPER(fgetc)
FGETC_WRAPPER(fgetc_unlocked)

#define FPUTS_WRAPPER(name)                                                                \
	SHIM_EXPORT int name(const char *s, FILE *f)                                       \
	{                                                                                  \
		SHIM_REAL(name);                                                           \
		STREAM_BEGIN(IOP_OP_WRITE, real_##name(s, f))                              \
		int r = real_##name(s, f);                                                 \
		end_transfer(&c, r >= 0 ? strlen(s) : 0, r < 0);                           \
		return r;                                                                  \
	}

FPUTS_WRAPPER(fputs)
FPUTS_WRAPPER(fputs_unlocked)

#define FPUTC_WRAPPER(name)                                                                \
	SHIM_EXPORT int name(int ch, FILE *f)                                              \
	{                                                                                  \
		SHIM_REAL(name);                                                           \
		STREAM_BEGIN(IOP_OP_WRITE, real_##name(ch, f))                             \
		int r = real_##name(ch, f);                                                \
		end_transfer(&c, r != EOF, r == EOF);                                      \
		return r;                                                                  \
	}

FPUTC_WRAPPER(fputc)
FPUTC_WRAPPER(fputc_unlocked)

/* The printf forms share these, with the caller of the wrapper the
 * application called (fprintf's site is its caller, not the shim). */
static int print(FILE *f, const char *fmt, va_list ap, const void *ra)
{
	SHIM_REAL(vfprintf);
	STREAM_BEGIN_FROM(IOP_OP_WRITE, real_vfprintf(f, fmt, ap), ra)
	int r = real_vfprintf(f, fmt, ap);
	end_transfer(&c, r > 0 ? (uint64_t)r : 0, r < 0);
	return r;
}

int __vfprintf_chk(FILE *f, int flag, const char *fmt, va_list ap);
static int print_chk(FILE *f, int flag, const char *fmt, va_list ap, const void *ra)
{
	SHIM_REAL(__vfprintf_chk);
	STREAM_BEGIN_FROM(IOP_OP_WRITE, real___vfprintf_chk(f, flag, fmt, ap), ra)
	int r = real___vfprintf_chk(f, flag, fmt, ap);
	end_transfer(&c, r > 0 ? (uint64_t)r : 0, r < 0);
	return r;
}

SHIM_EXPORT int vfprintf(FILE *f, const char *fmt, va_list ap)
{
	return print(f, fmt, ap, SHIM_CALLER());
}

SHIM_EXPORT int fprintf(FILE *f, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = print(f, fmt, ap, SHIM_CALLER());
	va_end(ap);
	return r;
}

SHIM_EXPORT int __vfprintf_chk(FILE *f, int flag, const char *fmt, va_list ap)
{
	return print_chk(f, flag, fmt, ap, SHIM_CALLER());
}

int __fprintf_chk(FILE *f, int flag, const char *fmt, ...);
SHIM_EXPORT int __fprintf_chk(FILE *f, int flag, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = print_chk(f, flag, fmt, ap, SHIM_CALLER());
	va_end(ap);
	return r;
}

/* fscanf: counted as a read; how many bytes it consumed is not known.
 * Programs call one of two: C99 programs __isoc99_fscanf, GNU-mode ones the
 * old fscanf (where "%as" allocates a string). Each wrapper calls its own
 * vfscanf, named explicitly so that <stdio.h>'s renaming cannot mix them. */
typedef int vfscanf_fn(FILE *, const char *, va_list);

static int scan(vfscanf_fn *real, FILE *f, const char *fmt, va_list ap, const void *ra)
{
	struct shim_call c;
	uint32_t file = stream_file(f);
	bool rec = file && shim_begin_from(&c, IOP_LAYER_STDIO, IOP_OP_READ, file, ra, 0);
	int r = real(f, fmt, ap);
	if (rec)
		shim_end_meta(&c, !(r == EOF && ferror_unlocked(f)));
	return r;
}

#define FSCANF_WRAPPER(cname, symbol, real_symbol)                                         \
	SHIM_EXPORT int cname(FILE *f, const char *fmt, ...) __asm__(symbol);              \
	SHIM_EXPORT int cname(FILE *f, const char *fmt, ...)                               \
	{                                                                                  \
		static vfscanf_fn *real;                                                   \
		if (!real)                                                                 \
			real = (vfscanf_fn *)shim_resolve(real_symbol);                    \
		va_list ap;                                                                \
		va_start(ap, fmt);                                                         \
		int r = scan(real, f, fmt, ap, SHIM_CALLER());                             \
		va_end(ap);                                                                \
		return r;                                                                  \
	}

FSCANF_WRAPPER(shim_fscanf_c99, "__isoc99_fscanf", "__isoc99_vfscanf")
FSCANF_WRAPPER(shim_fscanf_gnu, "fscanf", "vfscanf")

/* ------------------------------------------------------------ positioning */

#define SEEK_LIKE(op, type, call, ok_expr)                                                 \
	STREAM_BEGIN(op, call)                                                             \
	type r = call;                                                                     \
	shim_end_meta(&c, ok_expr);                                                        \
	return r;

SHIM_EXPORT int fseek(FILE *f, long off, int whence)
{
	SHIM_REAL(fseek);
	SEEK_LIKE(IOP_OP_SEEK, int, real_fseek(f, off, whence), r == 0)
}

SHIM_EXPORT int fseeko(FILE *f, off_t off, int whence)
{
	SHIM_REAL(fseeko);
	SEEK_LIKE(IOP_OP_SEEK, int, real_fseeko(f, off, whence), r == 0)
}

SHIM_EXPORT int fseeko64(FILE *f, off64_t off, int whence)
{
	SHIM_REAL(fseeko64);
	SEEK_LIKE(IOP_OP_SEEK, int, real_fseeko64(f, off, whence), r == 0)
}

SHIM_EXPORT long ftell(FILE *f)
{
	SHIM_REAL(ftell);
	SEEK_LIKE(IOP_OP_TELL, long, real_ftell(f), r >= 0)
}

SHIM_EXPORT off_t ftello(FILE *f)
{
	SHIM_REAL(ftello);
	SEEK_LIKE(IOP_OP_TELL, off_t, real_ftello(f), r >= 0)
}

SHIM_EXPORT off64_t ftello64(FILE *f)
{
	SHIM_REAL(ftello64);
	SEEK_LIKE(IOP_OP_TELL, off64_t, real_ftello64(f), r >= 0)
}

SHIM_EXPORT int fsetpos(FILE *f, const fpos_t *pos)
{
	SHIM_REAL(fsetpos);
	SEEK_LIKE(IOP_OP_SEEK, int, real_fsetpos(f, pos), r == 0)
}

SHIM_EXPORT int fsetpos64(FILE *f, const fpos64_t *pos)
{
	SHIM_REAL(fsetpos64);
	SEEK_LIKE(IOP_OP_SEEK, int, real_fsetpos64(f, pos), r == 0)
}

SHIM_EXPORT void rewind(FILE *f)
{
	SHIM_REAL(rewind);
	struct shim_call c;
	uint32_t file = stream_file(f);
	if (!file || !shim_begin(&c, IOP_LAYER_STDIO, IOP_OP_SEEK, file)) {
		real_rewind(f);
		return;
	}
	real_rewind(f);
	shim_end_meta(&c, true);
}
