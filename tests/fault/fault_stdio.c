/* libiopfault.so's STDIO wrappers. glibc's streams reach the kernel through
 * internal aliases of write and read that no preload can interpose, so a
 * fault on write() alone never slows fwrite or fprintf. These wrappers put
 * the same fault point in front of the stream calls the shim records as the
 * STDIO layer (docs/shim.md), on the stream's descriptor: every recorded
 * STDIO read or write of a selected rank and file takes the delay, as its
 * POSIX calls do. fflush, fseek and friends are left alone.
 *
 * Below the shim, fprintf arrives here as vfprintf (the shim's fprintf
 * calls its own vfprintf); without the shim, fprintf itself does. Each
 * calls libc's v-form directly, so a call is delayed once. */
#include <stdarg.h>
#include <stdio.h>

#include "fault.h"

#define EXPORT __attribute__((visibility("default")))

static int stream_fd(FILE *f)
{
	return f ? fileno_unlocked(f) : -1;
}

#define STREAM_WRAPPER(fn, name, ret, params, args)                                                \
	EXPORT ret name params                                                                     \
	{                                                                                          \
		FAULT_REAL(name);                                                                  \
		fault_point(fn, #name, stream_fd(f));                                              \
		return real_##name args;                                                           \
	}

size_t __fread_chk(void *p, size_t plen, size_t size, size_t n, FILE *f);
char *__fgets_chk(char *s, size_t size, int n, FILE *f);
int __vfprintf_chk(FILE *f, int flag, const char *fmt, va_list ap);
int __fprintf_chk(FILE *f, int flag, const char *fmt, ...);

STREAM_WRAPPER(FN_STDIO_READ, fread, size_t, (void *p, size_t size, size_t n, FILE *f),
               (p, size, n, f))
STREAM_WRAPPER(FN_STDIO_READ, __fread_chk, size_t,
               (void *p, size_t plen, size_t size, size_t n, FILE *f), (p, plen, size, n, f))
STREAM_WRAPPER(FN_STDIO_READ, fgets, char *, (char *s, int n, FILE *f), (s, n, f))
STREAM_WRAPPER(FN_STDIO_READ, __fgets_chk, char *, (char *s, size_t size, int n, FILE *f),
               (s, size, n, f))
STREAM_WRAPPER(FN_STDIO_READ, fgetc, int, (FILE * f), (f))
STREAM_WRAPPER(FN_STDIO_WRITE, fwrite, size_t, (const void *p, size_t size, size_t n, FILE *f),
               (p, size, n, f))
STREAM_WRAPPER(FN_STDIO_WRITE, fputs, int, (const char *s, FILE *f), (s, f))
STREAM_WRAPPER(FN_STDIO_WRITE, fputc, int, (int ch, FILE *f), (ch, f))
STREAM_WRAPPER(FN_STDIO_WRITE, vfprintf, int, (FILE * f, const char *fmt, va_list ap), (f, fmt, ap))
STREAM_WRAPPER(FN_STDIO_WRITE, __vfprintf_chk, int,
               (FILE * f, int flag, const char *fmt, va_list ap), (f, flag, fmt, ap))

EXPORT int fprintf(FILE *f, const char *fmt, ...)
{
	FAULT_REAL(vfprintf);
	fault_point(FN_STDIO_WRITE, "fprintf", stream_fd(f));
	va_list ap;
	va_start(ap, fmt);
	int r = real_vfprintf(f, fmt, ap);
	va_end(ap);
	return r;
}

EXPORT int __fprintf_chk(FILE *f, int flag, const char *fmt, ...)
{
	FAULT_REAL(__vfprintf_chk);
	fault_point(FN_STDIO_WRITE, "__fprintf_chk", stream_fd(f));
	va_list ap;
	va_start(ap, fmt);
	int r = real___vfprintf_chk(f, flag, fmt, ap);
	va_end(ap);
	return r;
}
