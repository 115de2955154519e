/* A state encoded beside the loop, not in it. Encoding a whole state (a
 * keyframe: every tick of the history) takes long: 0.4 s for a 1-rank job
 * writing 1500 files at 100 ms ticks, seconds at 1024 ranks. Done in the
 * loop, that stops the leaf that shares it: frames stay unread, the
 * ranks' rings fill and their events are dropped (view_e2e_slow saw 2953
 * under a loaded CI run).
 *
 * coll_snapshot_start() forks. The child has the state as it was at that
 * moment (copy on write), encodes it into a mapping it shares with the
 * parent, writes one byte on a pipe and exits; the parent's loop goes on,
 * polls coll_snapshot_fd() and takes the bytes with
 * coll_snapshot_collect(). The child calls nothing but the encoder (no
 * nanomsg, no stdio, no malloc in the keyframe encoder) and dies with the
 * parent. Single-threaded callers; one snapshot at a time per struct. */
#ifndef COLL_SNAPSHOT_H
#define COLL_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "codec.h"
#include "err.h"

struct coll_snapshot {
	uint8_t *map;   /* shared with the child: a header, then the bytes */
	size_t map_len; /* 0: not mapped yet */
	int fd;         /* the pipe's read end while a child runs; -1 otherwise */
	pid_t pid;
};

#define COLL_SNAPSHOT_INIT {NULL, 0, -1, 0}

/* Starts a child that runs fill(arg, cursor) over at most max bytes.
 * IOP_OK: it runs (poll coll_snapshot_fd()). STATE: one already runs. NOMEM or IO:
 * no child (no mapping, no pipe, fork failed): the caller encodes in
 * place instead. */
enum iop_err coll_snapshot_start(struct coll_snapshot *s, size_t max,
                                 void (*fill)(const void *arg, struct iop_wcur *c),
                                 const void *arg);

/* The fd that turns readable when the child is done; -1 when none runs. */
int coll_snapshot_fd(const struct coll_snapshot *s);

/* The child's bytes, once it is done: *out points into the mapping and
 * stays valid until the next start or coll_snapshot_free(). With wait
 * false and the child not done yet: TIMEOUT (ask again later). The
 * encoder's own error (OVERSIZED: more than max), or IO when the child
 * died without finishing (killed). STATE when none was started. */
enum iop_err coll_snapshot_collect(struct coll_snapshot *s, bool wait, const uint8_t **out,
                                   size_t *len);

/* Kills a running child and unmaps. */
void coll_snapshot_free(struct coll_snapshot *s);

#endif
