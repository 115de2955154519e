/* The memory backend of rec_io: a growable buffer (or a read-only view of
 * the caller's bytes) with an optional size limit past which appends fail
 * like a full disk, storing the part that fits first, as write(2) does. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rec_io_impl.h"

static const uint8_t *mem_bytes(const struct rec_io *io)
{
	return io->u.mem.view ? io->u.mem.view : io->u.mem.data;
}

static enum iop_err mem_grow(struct rec_io *io, size_t need)
{
	if (need <= io->u.mem.cap)
		return IOP_OK;
	size_t cap = io->u.mem.cap ? io->u.mem.cap : 4096;
	while (cap < need)
		cap = cap > SIZE_MAX / 2 ? need : cap * 2;
	uint8_t *p = realloc(io->u.mem.data, cap);
	if (!p) {
		io->sys_errno = ENOMEM;
		return IOP_ERR_NOMEM;
	}
	io->u.mem.data = p;
	io->u.mem.cap = cap;
	return IOP_OK;
}

static enum iop_err mem_append(struct rec_io *io, const void *buf, size_t len)
{
	if (io->u.mem.view) {
		io->sys_errno = EBADF;
		return IOP_ERR_STATE;
	}
	size_t fits = len;
	if (io->u.mem.len + len > io->u.mem.limit)
		fits =
		    io->u.mem.limit > io->u.mem.len ? (size_t)(io->u.mem.limit - io->u.mem.len) : 0;
	enum iop_err err = mem_grow(io, io->u.mem.len + fits);
	if (err != IOP_OK)
		return err;
	if (fits)
		memcpy(io->u.mem.data + io->u.mem.len, buf, fits);
	io->u.mem.len += fits;
	if (fits < len) {
		io->sys_errno = ENOSPC;
		return IOP_ERR_IO;
	}
	return IOP_OK;
}

static enum iop_err mem_pread(struct rec_io *io, void *buf, size_t len, uint64_t off, size_t *got)
{
	if (off < io->u.mem.len) {
		size_t n = io->u.mem.len - (size_t)off;
		*got = n < len ? n : len;
		memcpy(buf, mem_bytes(io) + off, *got);
	}
	return IOP_OK;
}

static enum iop_err mem_size(struct rec_io *io, uint64_t *size)
{
	*size = io->u.mem.len;
	return IOP_OK;
}

static enum iop_err mem_close(struct rec_io *io)
{
	free(io->u.mem.data);
	return IOP_OK;
}

static const struct rec_io_ops mem_ops = {mem_append, mem_pread, mem_size, mem_close};

enum iop_err rec_io_mem_new(struct rec_io **out)
{
	struct rec_io *io = calloc(1, sizeof *io);
	*out = io;
	if (!io)
		return IOP_ERR_NOMEM;
	io->ops = &mem_ops;
	io->u.mem.limit = UINT64_MAX;
	return IOP_OK;
}

enum iop_err rec_io_mem_view(const void *data, size_t len, struct rec_io **out)
{
	enum iop_err err = rec_io_mem_new(out);
	if (err == IOP_OK) {
		(*out)->u.mem.view = data ? data : (const uint8_t *)"";
		(*out)->u.mem.len = len;
	}
	return err;
}

void rec_io_mem_fail_after(struct rec_io *io, uint64_t limit)
{
	io->u.mem.limit = limit;
}

void rec_io_mem_data(const struct rec_io *io, const uint8_t **data, size_t *len)
{
	*data = mem_bytes(io);
	*len = io->u.mem.len;
}
