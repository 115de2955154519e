/* A leaf's spool (common/spool.h): the last frames its ranks left in a
 * file when no collector acknowledged them in time (a collector stopped
 * or kept off the CPU as a process ended). The intake takes them as if
 * they had come over the sockets: the leaf checks each frame (MAC, job,
 * sequence) and takes a copy of a frame it already has once. */
#ifndef COLL_SPOOL_IN_H
#define COLL_SPOOL_IN_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "spool.h"

#define COLL_SPOOL_HELD 64 /* files held back at once; more are taken at once */

struct coll_spool {
	char dir[PATH_MAX]; /* "" when there is none */
	uint64_t files, frames, bad_files; /* taken so far; files cut short or unreadable */
	struct {
		char name[IOP_SPOOL_NAME_LEN + 1];
		uint64_t seen_ns; /* first seen not ready */
	} held[COLL_SPOOL_HELD];
	unsigned n_held;
};

/* Makes the spool of the final address ipc://DIR/final.ipc (DIR/spool,
 * mode 0700; one left by an earlier leaf is used as it is). 0, or -1 with
 * the reason in why. */
int coll_spool_open(struct coll_spool *s, const char *final_url, char *why, size_t why_len);

/* A frame of a file whose header says its process image began at
 * image_ns. */
typedef void coll_spool_frame_fn(void *arg, const uint8_t *buf, size_t len, uint64_t image_ns);
/* Whether a file whose first frame is buf may be taken now. */
typedef bool coll_spool_ready_fn(void *arg, const uint8_t *buf, size_t len, uint64_t image_ns);

/* Hands every frame of every file in the spool to fn, the files in the
 * order of their names (the time they were written), and removes each.
 * A file whose first frame is not ready (ready may be NULL: all are) is
 * held back, from the first look that found it so, for hold_ns: the
 * frames its process sent before it may still be on their way over the
 * sockets (a collector that was stopped finds both at once). A file
 * without its header, or whose frames are cut short or do not add up,
 * gives its whole frames (none without a header) and is counted bad (and
 * named on stderr). The number of frames handed. */
unsigned coll_spool_take(struct coll_spool *s, uint64_t now_ns, uint64_t hold_ns,
                         coll_spool_ready_fn *ready, coll_spool_frame_fn *fn, void *arg);

/* Removes what is left (files of processes that ended after the leaf's
 * last look) and the directory. */
void coll_spool_close(struct coll_spool *s);

#endif
