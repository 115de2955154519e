/* The root's viewer server: what `iopulse top` and other viewers read
 * from a running job (docs/viewer.md).
 *
 * Bound to one or more root addresses (viewproto.h), it
 *   - publishes each closed tick (coll_viewsrv_tick): the tick delta's body
 *     in a MAC'd envelope with the server's instance id and a sequence, so
 *     a viewer with the job key applies it to its own copy of the state
 *     and sees a gap (a dropped tick) or a restart (a new instance);
 *   - answers queries (coll_viewsrv_pump), each MAC'd with the job key: a
 *     request without the right MAC (or of another job) gets a refusal and
 *     nothing else, and is counted. Queries: keyframe (the whole state,
 *     for a viewer joining), history of one row key over a tick range, a
 *     rank's totals per file and per layer, a file's totals per rank, and
 *     the alerts (active and log, JSON).
 *
 * It never blocks the root: PUB drops ticks for a subscriber that does not
 * keep up (nanomsg PUB's behaviour, over a bounded send buffer), requests
 * are read and answered without waiting, from the state in memory. A
 * keyframe is encoded at most once per tick however many viewers ask, by
 * a forked child (snapshot.h): it takes long (0.4 s for 1500 files' 130
 * ticks), and the leaf that shares the loop must go on reading frames.
 * Its request is held meanwhile, and no other is read; the fd to poll is
 * then the child's.
 * Single-threaded: call it from the root's loop only. */
#ifndef COLL_VIEWSRV_H
#define COLL_VIEWSRV_H

#include <stddef.h>
#include <stdint.h>

#include "alerts.h"
#include "auth.h"
#include "delta.h"
#include "err.h"
#include "state.h"

struct coll_viewsrv;

/* Binds every address of urls (a NULL-terminated list; each binds REQ/REP
 * at the address and PUB at its pub address). INVAL for an address of
 * another form, IO when a bind fails (the address is in use: errno tells),
 * NOMEM. */
enum iop_err coll_viewsrv_new(const char *const *urls, uint64_t job_id, const struct iop_key *key,
                              struct coll_viewsrv **out);
void coll_viewsrv_free(struct coll_viewsrv *srv);

/* The fds to poll for reading (the query socket's) into fds; returns how
 * many (at most max). Readable means pump has requests to answer. */
size_t coll_viewsrv_fds(const struct coll_viewsrv *srv, int *fds, size_t max);

/* Answers every pending request from s and alerts (which may be NULL: no
 * alerts) without blocking. */
void coll_viewsrv_pump(struct coll_viewsrv *srv, const struct coll_state *s,
                       const struct coll_alerts *alerts);

/* Publishes a tick that just closed (and was applied to s). */
void coll_viewsrv_tick(struct coll_viewsrv *srv, const struct coll_delta *closed,
                       const struct coll_state *s);

struct coll_viewsrv_stats {
	uint64_t published;   /* ticks published */
	uint64_t pub_failed;  /* ticks not published (encoding or send failed) */
	uint64_t unwatched;   /* ticks not encoded: no viewer was connected */
	uint64_t requests;    /* requests answered */
	uint64_t refused;     /* requests refused: wrong MAC, another job, not a request */
	uint64_t bad_requests; /* authentic but malformed or of an unknown type */
	uint64_t reply_failed; /* replies that could not be sent */
	uint64_t keyframes_encoded;
	uint64_t seq;         /* the last tick's sequence */
	uint64_t instance;
};
void coll_viewsrv_stats(const struct coll_viewsrv *srv, struct coll_viewsrv_stats *st);

/* How long a keyframe's child may run before it is taken for stuck,
 * killed, and keyframes are encoded in the loop from then on (default
 * 120 s; tests set it to 0). */
void coll_viewsrv_set_child_max_ns(struct coll_viewsrv *srv, uint64_t ns);

#endif
