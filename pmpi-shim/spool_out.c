/* A process's last frames into the spool. See spool_out.h and common/spool.h. */
#include "spool_out.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "clock.h"
#include "spool.h"

bool shim_spool_open(struct shim_spool *s, const char *final_addr, uint32_t node, uint32_t pid)
{
	s->fd = -1;
	s->bytes = 0;
	char dir[PATH_MAX];
	if (!iop_spool_dir(final_addr, dir, sizeof dir))
		return false;
	char name[IOP_SPOOL_NAME_LEN + 1];
	snprintf(name, sizeof name, "%016" PRIx64 "-%08" PRIx32 "-%08" PRIx32 "%s", iop_real_ns(),
	         node, pid, IOP_SPOOL_SUFFIX);
	if (snprintf(s->path, sizeof s->path, "%s/%s", dir, name) >= (int)sizeof s->path ||
	    snprintf(s->tmp, sizeof s->tmp, "%s/.%s", dir, name) >= (int)sizeof s->tmp)
		return false;
	long fd = syscall(SYS_openat, AT_FDCWD, s->tmp,
	                  O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return false;
	s->fd = (int)fd;
	return true;
}

bool shim_spool_write(struct shim_spool *s, const uint8_t *frame, size_t len)
{
	if (s->fd < 0 || s->bytes + len > IOP_SPOOL_MAX_BYTES)
		return false;
	size_t done = 0;
	while (done < len) {
		long n = syscall(SYS_write, s->fd, frame + done, len - done);
		if (n <= 0) {
			/* a frame cut short would spoil the file: back to the last whole one */
			(void)syscall(SYS_ftruncate, s->fd, (long)s->bytes);
			(void)syscall(SYS_lseek, s->fd, (long)s->bytes, SEEK_SET);
			return false;
		}
		done += (size_t)n;
	}
	s->bytes += len;
	return true;
}

bool shim_spool_close(struct shim_spool *s)
{
	if (s->fd < 0)
		return false;
	(void)syscall(SYS_close, s->fd);
	s->fd = -1;
	if (s->bytes && syscall(SYS_renameat, AT_FDCWD, s->tmp, AT_FDCWD, s->path) == 0)
		return true;
	(void)syscall(SYS_unlinkat, AT_FDCWD, s->tmp, 0);
	return false;
}
