/* Where the dashboard's data comes from: one small interface, several
 * implementations. The dashboard never touches a collector, a socket or a
 * recording; it only reads a window state (collector/state.h) and alert
 * records (collector/alerts.h) through a source, and asks it to move in time.
 *
 *   live, in-process   `iopulse run`: the root's state in this very process
 *                      (source_live.c); nothing to pump, time is history only
 *   live, remote       `iopulse top`: a root over nanomsg (source_remote.c,
 *                      collector/viewer.h): its fd is readable when the
 *                      viewer's sockets are, pump() applies the ticks received
 *                      to the viewer's coll_state and refreshes the alerts;
 *                      status() says when the data is stale or the root gone
 *   replay             `iopulse replay FILE` (source_replay.c): pump() applies
 *                      the recording's DELTA frames at the playback speed
 *                      (its fd is a timerfd); seek() re-applies from the
 *                      nearest KEYFRAME
 *
 * Contract, for whoever writes a source:
 *   - state() is never NULL once the source is open; its history tiers are
 *     what the dashboard can show. It must stay valid (same pointer or not)
 *     until the next pump(), seek() or close().
 *   - alerts() returns every alert so far, in the order they started, as
 *     coll_alert_record (end_ns == 0 while active): what coll_alerts_history()
 *     gives, so a source that runs the alert engine itself just forwards it.
 *   - fd() is a descriptor to poll for input (POLLIN), or -1 when the source
 *     has nothing to wait on (the in-process live one: its host loop calls
 *     the dashboard after each tick). Then pump(now) takes what is ready
 *     without blocking and says what changed (TUI_SRC_* bits).
 *   - Time: range() gives the first and last tick that can be shown. A live
 *     source shows its newest tick unless the dashboard pauses; paused, the
 *     dashboard picks a tick within range() and calls seek(t) when the
 *     source is not history-only (replay: rebuild the state up to t; its
 *     answer is the tick it reached). set_speed() and set_paused() matter to
 *     replay; live sources leave them NULL.
 *   - The dashboard calls nothing after close(). */
#ifndef TUI_SOURCE_H
#define TUI_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "alerts.h"
#include "state.h"

struct tui_job {
	uint64_t id;
	uint64_t start_ns;   /* CLOCK_REALTIME */
	uint64_t end_ns;     /* 0 while running */
	const char *command; /* may be NULL */
	uint64_t tick_ns;
	bool recording;      /* a recording is being written: `REC` badge */
};

enum tui_src_mode {
	TUI_SRC_MODE_LIVE = 0,   /* badge LIVE / PAUSED */
	TUI_SRC_MODE_REPLAY = 1, /* badge REPLAY <speed>x */
};

/* pump() results */
enum {
	TUI_SRC_TICK = 1u << 0,  /* a tick (or more) was applied: rebuild views */
	TUI_SRC_ALERT = 1u << 1, /* alerts changed */
	TUI_SRC_ENDED = 1u << 2, /* the job or the recording is over */
	TUI_SRC_ERROR = 1u << 3, /* lost the peer or the file; message in error() */
};

struct tui_source_ops {
	const char *name; /* "live", "replay", "remote" */
	enum tui_src_mode mode;
	const struct coll_state *(*state)(void *self);
	const struct coll_alert_record *(*alerts)(void *self, size_t *n);
	void (*job)(void *self, struct tui_job *out);
	int (*fd)(void *self);                          /* -1: none */
	unsigned (*pump)(void *self, uint64_t now_ns);  /* NULL: nothing to pump */
	void (*range)(void *self, int64_t *first, int64_t *last); /* INT64_MIN: no tick yet */
	int64_t (*seek)(void *self, int64_t t);         /* NULL: history-only (live) */
	void (*set_speed)(void *self, double x);        /* NULL: live */
	void (*set_paused)(void *self, bool paused);    /* NULL: live */
	const char *(*error)(void *self);               /* NULL or the last error */
	/* NULL (or a NULL answer): the data is current. Else a word shown
	 * beside the badge: "STALE", "UNREACHABLE", "REFUSED", "CONNECTING". */
	const char *(*status)(void *self);
	void (*close)(void *self);                      /* NULL: nothing to free */
};

struct tui_source {
	const struct tui_source_ops *ops;
	void *self;
};

/* The in-process live source: reads the root's state and the alert engine's
 * history as `iopulse run` updates them (neither is copied). job is copied
 * at open; its strings must outlive the source. */
struct coll_root;
struct coll_alerts;
struct tui_live {
	const struct coll_root *root;
	const struct coll_alerts *alerts;
	struct tui_job job;
};
void tui_source_live(struct tui_source *src, struct tui_live *live);

/* The remote live source (`iopulse top`): a viewer of the root at addr.
 * tui_remote_open connects and waits up to wait_ns for the first keyframe;
 * NULL with *st telling why not (UNREACHABLE, REFUSED; CONNECTING for a
 * bad address or no memory, with why set). job is copied (its strings must
 * outlive the source); a start_ns of 0 is taken from the first tick. */
struct tui_remote;
struct iop_key;
enum coll_viewer_status;
struct tui_remote *tui_remote_open(const char *addr, uint64_t job_id, const struct iop_key *key,
                                   const struct tui_job *job, uint64_t wait_ns,
                                   enum coll_viewer_status *st, char *why, size_t whylen);
/* The source over it; src->ops->close frees it. */
void tui_source_remote(struct tui_source *src, struct tui_remote *r);

/* The range of any source whose ticks are the state's own history tiers. */
void tui_state_range(const struct coll_state *s, int64_t *first, int64_t *last);

#endif
