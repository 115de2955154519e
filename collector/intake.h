/* A leaf's intake from the ranks of its node: a PULL socket for their
 * frames and a REP socket for their last frames (acknowledged, since
 * nanomsg has no linger), both ipc:// in a runtime directory, feeding a
 * coll_leaf. Used by `iopulse run` (the launching node's leaf) and by
 * `iopulse collector --role leaf`. */
#ifndef COLL_INTAKE_H
#define COLL_INTAKE_H

#include <limits.h>
#include <stdint.h>

#include "leaf.h"
#include "spool_in.h"

struct coll_intake {
	int pull, rep;       /* nanomsg sockets, -1 when closed */
	int pull_fd, rep_fd; /* for poll */
	char dir[PATH_MAX];
	char leaf_url[PATH_MAX + 16], final_url[PATH_MAX + 16];
	struct coll_leaf *leaf;
	struct coll_spool spool; /* last frames left in a file (spool_in.h) */
	uint64_t next_spool_ns;  /* the spool's next look */
	uint64_t last_frame_ns;
	/* Called with each frame the leaf accepted (`--record-events`), or NULL. */
	void (*on_frame)(void *arg, const uint8_t *buf, size_t len, uint64_t now_ns);
	void *on_frame_arg;
};

/* Binds ipc://DIR/leaf.ipc and ipc://DIR/final.ipc and makes the spool
 * DIR/spool. 0, or -1 with the reason in why. */
int coll_intake_open(struct coll_intake *in, const char *dir, struct coll_leaf *leaf, char *why,
                     size_t why_len);
/* Closes the sockets and removes their files and the spool (not the
 * directory). */
void coll_intake_close(struct coll_intake *in);
/* Takes up to max frames waiting on the PULL socket. */
unsigned coll_intake_drain(struct coll_intake *in, unsigned max);
/* Takes a last frame waiting on the REP socket (after what PULL still
 * holds of the same process) and acknowledges it. */
void coll_intake_final(struct coll_intake *in);
/* Takes the frames left in the spool: at most every 100 ms, unless now
 * (the job's command has exited: they are all there). The leaf also looks
 * there before a process's next program image (an exec) is taken. */
void coll_intake_spool(struct coll_intake *in, uint64_t now_ns, bool now);

#endif
