/* A process's last frames into the spool. See spool_out.h and common/spool.h. */
#include "spool_out.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "clock.h"
#include "spool.h"

static bool write_all(int fd, const uint8_t *buf, size_t len)
{
	size_t done = 0;
	while (done < len) {
		long n = syscall(SYS_write, fd, buf + done, len - done);
		if (n <= 0)
			return false;
		done += (size_t)n;
	}
	return true;
}

bool shim_spool_open(struct shim_spool *s, const char *final_addr, uint32_t node, uint32_t pid,
                     uint64_t image_ns)
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
	uint8_t head[IOP_SPOOL_HEADER_LEN];
	iop_spool_header(head, image_ns);
	if (!write_all(s->fd, head, sizeof head)) {
		(void)syscall(SYS_close, s->fd);
		(void)syscall(SYS_unlinkat, AT_FDCWD, s->tmp, 0);
		s->fd = -1;
		return false;
	}
	return true;
}

bool shim_spool_write(struct shim_spool *s, const uint8_t *frame, size_t len)
{
	if (s->fd < 0 || s->bytes + len > IOP_SPOOL_MAX_BYTES)
		return false;
	if (!write_all(s->fd, frame, len)) {
		/* a frame cut short would spoil the file: back to the last whole one */
		long end = (long)(IOP_SPOOL_HEADER_LEN + s->bytes);
		(void)syscall(SYS_ftruncate, s->fd, end);
		(void)syscall(SYS_lseek, s->fd, end, SEEK_SET);
		return false;
	}
	s->bytes += len;
	return true;
}

void shim_keep_frame(struct shim_keep *k, const uint8_t *frame, size_t len)
{
	if (len > SHIM_KEEP_HALF)
		return;
	if (!k->half[0]) {
		void *m = (void *)syscall(SYS_mmap, NULL, 2 * SHIM_KEEP_HALF, PROT_READ | PROT_WRITE,
		                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED)
			return;
		k->half[0] = m;
		k->half[1] = (uint8_t *)m + SHIM_KEEP_HALF;
		k->used[0] = k->used[1] = 0;
		k->cur = 0;
	}
	if (k->used[k->cur] + len > SHIM_KEEP_HALF) { /* the other half, emptied */
		k->cur ^= 1;
		k->used[k->cur] = 0;
	}
	memcpy(k->half[k->cur] + k->used[k->cur], frame, len);
	k->used[k->cur] += len;
}

void shim_keep_reset(struct shim_keep *k)
{
	k->used[0] = k->used[1] = 0;
	k->cur = 0;
}

bool shim_spool_write_kept(struct shim_spool *s, const struct shim_keep *k)
{
	if (!k->half[0])
		return true;
	unsigned old = k->cur ^ 1;
	/* frame by frame: the file keeps whole frames if one cannot be written */
	for (unsigned h = 0; h < 2; h++) {
		unsigned i = h ? k->cur : old;
		for (size_t at = 0, one; at < k->used[i]; at += one) {
			one = iop_frame_len_at(k->half[i] + at, k->used[i] - at);
			if (!one || one > k->used[i] - at || !shim_spool_write(s, k->half[i] + at, one))
				return false;
		}
	}
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
