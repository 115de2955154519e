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
	size_t bytes;             /* written so far, past the header */
	char tmp[PATH_MAX];       /* DIR/spool/.NAME while it is written */
	char path[PATH_MAX];      /* DIR/spool/NAME */
};

/* Opens a new spool file for (node, pid), its header naming the image's
 * start (image_ns), in the spool of final_addr. False when it has none
 * (not ipc://DIR/final.ipc, no DIR/spool: a collector that takes no
 * spool) or the file cannot be made. */
bool shim_spool_open(struct shim_spool *s, const char *final_addr, uint32_t node, uint32_t pid,
                     uint64_t image_ns);
/* Appends one whole frame; false when it could not (the file is then
 * left as it was: whole frames only) or the spool's size cap is reached. */
bool shim_spool_write(struct shim_spool *s, const uint8_t *frame, size_t len);
/* The frames sent lately, kept for the spool: what the collector's
 * nanomsg had not handed out when the process ended is lost with the
 * connection (fio's 2 ranks, the collector stopped: 6 of 7 frames a
 * process), so the spool holds them too, and the leaf takes those it
 * lacks. Two halves of SHIM_KEEP_HALF bytes, filled in turn: at least the
 * last SHIM_KEEP_HALF bytes less a frame are kept (more than a unix
 * socket's send buffer and nanomsg's hold). Mapped at the first frame. */
#define SHIM_KEEP_HALF (256u << 10)
struct shim_keep {
	uint8_t *half[2];
	size_t used[2];
	unsigned cur;
};
void shim_keep_frame(struct shim_keep *k, const uint8_t *frame, size_t len);
/* Forgets what was kept (a forked child: its parent's frames are not its). */
void shim_keep_reset(struct shim_keep *k);
/* Writes the kept frames, oldest first; false when one could not be. */
bool shim_spool_write_kept(struct shim_spool *s, const struct shim_keep *k);

/* Closes the file and, when it holds a frame, renames it to its name for
 * the leaf to take; otherwise removes it. True when renamed. */
bool shim_spool_close(struct shim_spool *s);

#endif
