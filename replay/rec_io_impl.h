/* What a rec_io backend provides: a table of operations over its own state.
 * Only the backends (rec_io_file.c, rec_io_mem.c) and the dispatch in
 * rec_io.c include this. */
#ifndef REC_IO_IMPL_H
#define REC_IO_IMPL_H

#include "rec_io.h"

struct rec_io_ops {
	enum iop_err (*append)(struct rec_io *io, const void *buf, size_t len);
	enum iop_err (*pread)(struct rec_io *io, void *buf, size_t len, uint64_t off, size_t *got);
	enum iop_err (*size)(struct rec_io *io, uint64_t *size);
	enum iop_err (*close)(struct rec_io *io); /* releases the backend's state */
};

struct rec_io {
	const struct rec_io_ops *ops;
	int sys_errno;         /* of the last failure */
	enum iop_err appended; /* first append failure, reported by flush */
	union {
		struct {
			int fd;
		} file;
		struct {
			uint8_t *data;
			size_t len, cap;
			uint64_t limit;      /* appends past this fail with ENOSPC */
			const uint8_t *view; /* read-only view, or NULL */
		} mem;
	} u;
};

#endif
