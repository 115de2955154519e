/* The byte stream a recording is written to and read from (after redis's
 * rio.h): append at the end, read at an offset, ask the size, flush, close.
 * Two backends: a file (a plain descriptor; every append is a write(2)
 * straight to the kernel, so a writer killed with SIGKILL leaves every
 * finished append readable) and a growable memory buffer, which tests can
 * make fail after N bytes to play a full disk. The recording writer and
 * reader (rec.h) only ever see a struct rec_io.
 *
 * Not thread-safe: one stream, one thread at a time. */
#ifndef REC_IO_H
#define REC_IO_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

struct rec_io;

/* --- backends ---------------------------------------------------------------- */

/* A new file for writing (created, or truncated if it exists; mode 0666
 * before umask), opened O_APPEND and readable too. On failure (IOP_ERR_IO,
 * IOP_ERR_NOT_FOUND) errno is open(2)'s. */
enum iop_err rec_io_file_create(const char *path, struct rec_io **out);

/* An existing file, read-only: appends fail with IOP_ERR_STATE. */
enum iop_err rec_io_file_open(const char *path, struct rec_io **out);

/* An empty, growable memory buffer for writing and reading. */
enum iop_err rec_io_mem_new(struct rec_io **out);

/* A read-only view of len bytes at data, which must outlive the stream. */
enum iop_err rec_io_mem_view(const void *data, size_t len, struct rec_io **out);

/* From now on a memory stream holds at most limit bytes: an append that
 * would pass it stores what fits and fails with IOP_ERR_IO, errno ENOSPC,
 * as a full disk would. */
void rec_io_mem_fail_after(struct rec_io *io, uint64_t limit);

/* The bytes of a memory stream (valid until its next append or close). */
void rec_io_mem_data(const struct rec_io *io, const uint8_t **data, size_t *len);

/* --- operations ----------------------------------------------------------------- */

/* Appends all len bytes at the end, or fails: IOP_ERR_IO (rec_io_errno()
 * says why: ENOSPC, EIO ...), IOP_ERR_NOMEM, IOP_ERR_STATE (read-only).
 * After a failure some of the bytes may have been stored. */
enum iop_err rec_io_append(struct rec_io *io, const void *buf, size_t len);

/* Reads up to len bytes at offset off into buf; *got is less than len only
 * at the end of the stream. */
enum iop_err rec_io_pread(struct rec_io *io, void *buf, size_t len, uint64_t off, size_t *got);

enum iop_err rec_io_size(struct rec_io *io, uint64_t *size);

/* Nothing is ever buffered in user space, so this only reports a failure of
 * an earlier append that the caller may have ignored. */
enum iop_err rec_io_flush(struct rec_io *io);

/* Closes and frees the stream (NULL is fine). A file's close(2) can report
 * a late write error (NFS): it is returned. */
enum iop_err rec_io_close(struct rec_io *io);

/* errno of the last failed operation, 0 if none failed. */
int rec_io_errno(const struct rec_io *io);

#endif
