/* Internal: a process's last frames into the spool (common/spool.h), when
 * no collector acknowledged them (sender.c); common/spool.h says where. Raw system calls only: the
 * shim's own I/O is not the application's. */
#ifndef IOP_SHIM_SPOOL_OUT_H
#define IOP_SHIM_SPOOL_OUT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct shim_spool {
	int fd;                   /* -1: not open */
	size_t bytes;             /* written so far */
	char tmp[PATH_MAX];       /* DIR/spool/.NAME while it is written */
	char path[PATH_MAX];      /* DIR/spool/NAME */
};

/* Opens a new spool file for (node, pid) in the spool of final_addr.
 * False when it has none (not ipc://DIR/final.ipc, no DIR/spool: a
 * collector that takes no spool) or the file cannot be made. */
bool shim_spool_open(struct shim_spool *s, const char *final_addr, uint32_t node, uint32_t pid);
/* Appends one whole frame; false when it could not (the file is then
 * left as it was: whole frames only) or the spool's size cap is reached. */
bool shim_spool_write(struct shim_spool *s, const uint8_t *frame, size_t len);
/* Closes the file and, when it holds a frame, renames it to its name for
 * the leaf to take; otherwise removes it. True when renamed. */
bool shim_spool_close(struct shim_spool *s);

#endif
