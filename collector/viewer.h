/* A viewer of a running job: connects to a root's address with the job
 * key, fetches a keyframe, subscribes to the closed ticks and applies them
 * in order to its own copy of the window state (state.h), so the dashboard
 * reads a state equal to the root's. docs/viewer.md.
 *
 * Nothing here blocks but the queries (each waits at most the timeout):
 * coll_viewer_pump() reads what has arrived and moves on. A gap in the
 * tick sequence (the root's PUB dropped ticks for a slow viewer) or a new
 * server instance (the root restarted) makes it fetch a new keyframe;
 * nanomsg reconnects the sockets by itself. coll_viewer_status() tells
 * whether the data is live, stale (no tick for more than 3 ticks), the
 * root unreachable (no answer within the timeout) or the key refused.
 * Single-threaded. */
#ifndef COLL_VIEWER_H
#define COLL_VIEWER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "auth.h"
#include "err.h"
#include "state.h"

struct coll_viewer_opts {
	uint64_t timeout_ns;  /* a request unanswered this long: unreachable; 0: 2 s */
	uint32_t stale_ticks; /* no tick for this many tick lengths: stale; 0: 3 */
	uint32_t buffered;    /* ticks kept while a keyframe is on its way; 0: 256 */
};

enum coll_viewer_status {
	COLL_VIEWER_CONNECTING = 0, /* no keyframe yet, still within the timeout */
	COLL_VIEWER_LIVE,           /* ticks arriving */
	COLL_VIEWER_STALE,          /* a state, but no tick for stale_ticks ticks */
	COLL_VIEWER_UNREACHABLE,    /* no answer within the timeout (it keeps trying) */
	COLL_VIEWER_REFUSED,        /* the root refused the key (it keeps trying) */
};

/* "live", "stale", "unreachable: ...", for a status line. */
const char *coll_viewer_status_text(enum coll_viewer_status st);

struct coll_viewer;

/* Connects to addr (a root address, viewproto.h) and asks for a keyframe;
 * now_ns is the caller's clock (any, used consistently). opts may be NULL.
 * INVAL for a bad address, IO, NOMEM. */
enum iop_err coll_viewer_new(const char *addr, uint64_t job_id, const struct iop_key *key,
                             const struct coll_viewer_opts *opts, uint64_t now_ns,
                             struct coll_viewer **out);
void coll_viewer_free(struct coll_viewer *v);

/* The fds to poll for reading (ticks, the keyframe's reply) into fds;
 * returns how many (at most max). */
size_t coll_viewer_fds(const struct coll_viewer *v, int *fds, size_t max);

/* Reads what has arrived without blocking: applies ticks, takes a
 * keyframe, asks for one again when needed. Returns how many ticks were
 * applied (a new keyframe counts as one). */
unsigned coll_viewer_pump(struct coll_viewer *v, uint64_t now_ns);

enum coll_viewer_status coll_viewer_status(const struct coll_viewer *v, uint64_t now_ns);

/* The viewer's state, NULL before the first keyframe. Valid until the
 * next pump. */
const struct coll_state *coll_viewer_state(const struct coll_viewer *v);

struct coll_viewer_stats {
	uint64_t ticks_applied;  /* published ticks applied */
	uint64_t keyframes;      /* keyframes taken */
	uint64_t gaps;           /* sequence gaps seen (each fetches a keyframe) */
	uint64_t restarts;       /* new server instances seen */
	uint64_t bad_messages;   /* ticks or replies that did not check out */
	uint64_t refused;        /* refusals received */
	uint64_t timeouts;       /* requests unanswered within the timeout */
};
void coll_viewer_stats(const struct coll_viewer *v, struct coll_viewer_stats *st);

/* --- queries: each waits at most the timeout for its answer ---------------
 * Errors: TIMEOUT (no answer), BAD_MAC (refused: wrong key or job),
 * NOT_FOUND (no such rank or file), what the root answered otherwise,
 * MALFORMED (a reply that does not decode), NOMEM. */

/* One history entry: a tick (ticks == 1) or a bin of ticks starting at t. */
struct coll_view_point {
	int64_t t;
	uint32_t ticks;
	bool has_row; /* the key had a row then; cell is zero otherwise */
	struct coll_cell cell;
};
/* The entries answering for ticks from..to (at most COLL_VIEW_HISTORY_MAX),
 * oldest first; free with coll_view_points_free(). */
enum iop_err coll_viewer_history(struct coll_viewer *v, const struct coll_key *key, int64_t from,
                                 int64_t to, struct coll_view_point **pts, size_t *n);
void coll_view_points_free(struct coll_view_point *pts, size_t n);

struct coll_view_rank {
	struct coll_rank rank; /* node, exclusive time, processes, state */
	struct coll_tick files;  /* totals per (file, layer, class): FILE rows with this rank */
	struct coll_tick layers; /* totals per (layer, class): RANK rows */
};
enum iop_err coll_viewer_rank(struct coll_viewer *v, uint32_t rank, struct coll_view_rank *out);
void coll_view_rank_free(struct coll_view_rank *r);

struct coll_view_file {
	char *name;           /* its path, or NULL when unknown */
	struct coll_tick rows; /* totals per (rank, layer, class): FILE rows */
};
enum iop_err coll_viewer_file(struct coll_viewer *v, uint64_t file, struct coll_view_file *out);
void coll_view_file_free(struct coll_view_file *f);

/* {"active":[...],"log":[...],"not_kept":N}, records as in the summary. */
enum iop_err coll_viewer_alerts(struct coll_viewer *v, json_t **out);

#endif
