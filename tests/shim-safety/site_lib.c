/* libsafety_site_lib.so: an "I/O library" for sites_test. Run with
 * IOPULSE_SITE_SKIP=libsafety_site, its frames are skipped like MPI's or
 * libgfortran's: the calls it makes are sited in its caller. */
#include <unistd.h>

#include "check.h"

void site_lib_write(int fd, int n, size_t size);

/* noinline helpers: more than one skipped frame between the wrapper and
 * the application */
__attribute__((noinline)) static void lib_inner(int fd, size_t size, int i)
{
	PWRITE_ALL(fd, safety_pattern(size), size, (off_t)i * (off_t)size);
}

__attribute__((visibility("default"))) void site_lib_write(int fd, int n, size_t size)
{
	for (int i = 0; i < n; i++)
		lib_inner(fd, size, i);
}
