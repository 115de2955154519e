/* The file backend of rec_io: one descriptor, no user-space buffer. Appends
 * are write(2) calls on an O_APPEND descriptor, retried until every byte is
 * written, so what a killed writer had appended is in the kernel and stays
 * readable. Reads are pread(2). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rec_io_impl.h"

static enum iop_err failed(struct rec_io *io)
{
	io->sys_errno = errno;
	return errno == ENOMEM ? IOP_ERR_NOMEM : IOP_ERR_IO;
}

static enum iop_err file_append(struct rec_io *io, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	while (len) {
		ssize_t n = write(io->u.file.fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EBADF) { /* opened read-only */
				io->sys_errno = EBADF;
				return IOP_ERR_STATE;
			}
			return failed(io);
		}
		if (n == 0) { /* no progress and no errno: treat as a full device */
			errno = ENOSPC;
			return failed(io);
		}
		p += n;
		len -= (size_t)n;
	}
	return IOP_OK;
}

static enum iop_err file_pread(struct rec_io *io, void *buf, size_t len, uint64_t off, size_t *got)
{
	uint8_t *p = buf;
	while (*got < len) {
		ssize_t n = pread(io->u.file.fd, p + *got, len - *got, (off_t)(off + *got));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return failed(io);
		}
		if (n == 0)
			break;
		*got += (size_t)n;
	}
	return IOP_OK;
}

static enum iop_err file_size(struct rec_io *io, uint64_t *size)
{
	struct stat st;
	if (fstat(io->u.file.fd, &st) != 0)
		return failed(io);
	*size = (uint64_t)st.st_size;
	return IOP_OK;
}

static enum iop_err file_close(struct rec_io *io)
{
	if (close(io->u.file.fd) != 0 && errno != EINTR)
		return failed(io);
	return IOP_OK;
}

static const struct rec_io_ops file_ops = {file_append, file_pread, file_size, file_close};

static enum iop_err file_new(const char *path, int flags, struct rec_io **out)
{
	*out = NULL;
	struct rec_io *io = calloc(1, sizeof *io);
	if (!io)
		return IOP_ERR_NOMEM;
	int fd = open(path, flags | O_CLOEXEC, 0666);
	if (fd < 0) {
		enum iop_err err = errno == ENOENT ? IOP_ERR_NOT_FOUND : IOP_ERR_IO;
		free(io);
		return err;
	}
	/* a directory opens read-only, and then every read fails with EISDIR,
	 * which a caller would report as damage: refuse it here, by name */
	struct stat st;
	if (!(flags & O_CREAT) && fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		close(fd);
		free(io);
		errno = EISDIR;
		return IOP_ERR_IO;
	}
	io->ops = &file_ops;
	io->u.file.fd = fd;
	*out = io;
	return IOP_OK;
}

enum iop_err rec_io_file_create(const char *path, struct rec_io **out)
{
	return file_new(path, O_RDWR | O_CREAT | O_TRUNC | O_APPEND, out);
}

enum iop_err rec_io_file_open(const char *path, struct rec_io **out)
{
	return file_new(path, O_RDONLY, out);
}
