/* What every command that reads a recording back does first and in its
 * loop (`iopulse verify`, `summary`, `replay`, `export`, the dashboard's
 * replay source): open the file with a message a user can act on, read
 * its META (command, tick length, delta version), and step through its
 * DELTA frames decoded, skipping and counting those that do not decode. */
#ifndef REC_OPEN_H
#define REC_OPEN_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "delta.h"
#include "state.h"
#include "rec.h"

struct rec_opened {
	struct rec_io *io;
	struct rec_reader *r;
	uint64_t job_id, tick_ns, start_ns; /* tick_ns: META's, else 1 s */
	uint64_t history_bytes; /* the root's history budget (META), else the default */
	uint64_t detail_ns;     /* a lean recording's whole ticks' period (META); 0: full */
	uint32_t view_cap;      /* the default recording's files (sites) a tick; 0: full */
	unsigned delta_version; /* of its DELTA payloads (META), COLL_DELTA_VERSION_MIN on */
	char command[1024];
};

/* Opens path for `iopulse <cmd>`; 0, or 2 with the reason printed on
 * stderr ("iopulse replay: x.iop: not a recording ..."). */
int rec_opened_open(const char *cmd, const char *path, struct rec_opened *o);
/* The same into why (no printing): IOP_OK or the error. */
enum iop_err rec_opened_open_why(const char *path, struct rec_opened *o, char *why, size_t len);
void rec_opened_close(struct rec_opened *o);
/* Initialises a state for the recording's ticks of tick_ns, with the
 * history budget the recording's root had (so that replay thins the
 * same ticks as the live state did), and its detail_ticks
 * (rec_opened_detail_ticks). */
void rec_opened_state_init(const struct rec_opened *o, struct coll_state *s, uint64_t tick_ns);
/* A lean recording's whole ticks' period in ticks of tick_ns (state.h,
 * detail_ticks); 0 for a full one. */
uint32_t rec_opened_detail_ticks(const struct rec_opened *o, uint64_t tick_ns);

/* The next DELTA frame from the reader's position (o->r), decoded into d
 * (made with coll_delta_init) by the recording's delta version; its frame
 * in f when f is not NULL. DELTAs that do not decode are skipped and
 * counted in *bad. IOP_ERR_NOT_FOUND at the end of the recording; the
 * reader's errors otherwise. */
enum iop_err rec_next_delta(const struct rec_opened *o, struct coll_delta *d, struct rec_frame *f,
                            uint64_t *bad);

/* --follow: a recording still being written. At its current end,
 * rec_follow_next_delta() waits for it to grow (polling its size every
 * REC_FOLLOW_POLL_MS) until the writer closes it or *stop is set. Without
 * follow it is rec_next_delta(). */
#define REC_FOLLOW_POLL_MS 200
struct rec_follow {
	const struct rec_opened *o;
	bool follow;
};
void rec_follow_init(struct rec_follow *fw, struct rec_opened *o, bool follow);
enum iop_err rec_follow_next_delta(struct rec_follow *fw, struct coll_delta *d, uint64_t *bad,
                                   volatile sig_atomic_t *stop);
static inline void rec_follow_free(struct rec_follow *fw)
{
	(void)fw;
}

/* Why --rules cannot be applied to a lean recording (a line for stderr,
 * in a static buffer). */
const char *rec_lean_rules_msg(const char *cmd, const char *path);

/* The end of a DELTA's tick, its frame time. */
static inline uint64_t rec_tick_end_ns(const struct coll_delta *d)
{
	return (uint64_t)(d->tick.t + 1) * d->tick.tick_ns;
}

#endif
