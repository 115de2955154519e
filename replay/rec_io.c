/* rec_io dispatch: every operation goes through the backend's table; the
 * first failed append is remembered so that rec_io_flush() reports it. */
#include <errno.h>
#include <stdlib.h>

#include "rec_io_impl.h"

enum iop_err rec_io_append(struct rec_io *io, const void *buf, size_t len)
{
	if (len == 0)
		return IOP_OK;
	enum iop_err err = io->ops->append(io, buf, len);
	if (err != IOP_OK && io->appended == IOP_OK)
		io->appended = err;
	return err;
}

enum iop_err rec_io_pread(struct rec_io *io, void *buf, size_t len, uint64_t off, size_t *got)
{
	*got = 0;
	return len ? io->ops->pread(io, buf, len, off, got) : IOP_OK;
}

enum iop_err rec_io_size(struct rec_io *io, uint64_t *size)
{
	return io->ops->size(io, size);
}

enum iop_err rec_io_flush(struct rec_io *io)
{
	return io->appended;
}

enum iop_err rec_io_close(struct rec_io *io)
{
	if (!io)
		return IOP_OK;
	enum iop_err err = io->ops->close(io);
	free(io);
	return err;
}

int rec_io_errno(const struct rec_io *io)
{
	return io->sys_errno;
}
