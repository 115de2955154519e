/* The root's recording (--record FILE): the .iop file of replay/rec.h with
 * a META frame (job metadata as JSON), one DELTA frame per closed tick (the
 * tick delta's body, docs/collector.md), one ALERT frame per alert
 * transition (its JSON record), and every N seconds of ticks (60 by
 * default) a KEYFRAME: the window state after the tick whose DELTA it
 * follows (keyframe.h), in one or more frames (docs/recording.md), so a
 * reader can start there (rec_state.h). Each tick is written through to the file,
 * so a job killed outright leaves a recording readable to its last tick. A
 * write error (a full disk) is reported once; the job runs on and what was
 * written stays readable. */
#ifndef COLL_RECORD_H
#define COLL_RECORD_H

#include <jansson.h>

#include "delta.h"
#include "summary.h"

struct coll_record;

/* A KEYFRAME frame's payload: u8 layout version (1), svarint tick (the
 * state's last tick), varint part (from 0), varint parts, varint the whole
 * keyframe's length, then the part's bytes of it (docs/recording.md). */
#define COLL_REC_KEYFRAME_LAYOUT 1
#define COLL_REC_KEYFRAME_MAX    ((size_t)1 << 30) /* a whole keyframe */
#define COLL_REC_KEYFRAME_PARTS  4096
#define COLL_REC_KEYFRAME_HDR    32 /* at most, before a part's bytes */

/* The default recording ("view") writes every tick's RANK and LAYER rows
 * whole, and its FILE and SITE rows as rec_view.h folds them: all of them
 * up to view_cap files (sites) a tick, beyond that the top view_cap by
 * bytes and by time, the files an alert named and one "other" row per
 * layer and class. A tick of more than rank_cap ranks keeps the RANK rows
 * of the ranks alerts named and of the 16 at each end of throughput and of
 * p99, the others summed per node, and the ranks' distribution (delta.h).
 * Its counters go out every tick, until a tick is above rank_cap: from
 * then on they are held back as a lean recording's are (below), with a
 * period of counters_ns (1 min). Its keyframes are of the state a reader
 * builds from what was written (a second state the recorder keeps), so
 * seeking and playing through agree, spaced to at most a quarter of the
 * DELTAs' bytes or half an hour (docs/recording.md).
 *
 * A lean recording (--record-detail DUR) writes each tick's LAYER rows whole,
 * and the whole tick (RANK, FILE and SITE rows too) every detail_ns of
 * ticks and when a process ends or goes; the counters as soon as they
 * are few (a counter for every two ranks and tick, saved up over
 * counters_ns), else every counters_ns, and with those ends. The RANK
 * rows' exclusive time and wait (collective calls) of the ticks between
 * are added to the next whole tick's, so each rank's I/O time adds up. A
 * lean tick is what the history's budget leaves of a tick (state.h,
 * "thinned"), so every reader takes it as it is. Its keyframes are of the
 * state a reader builds from what was written, spaced to at most an
 * eighth of the DELTAs' bytes or an hour (docs/recording.md). */
#define COLL_RECORD_DETAIL_NS   (60 * 1000000000ull)
#define COLL_RECORD_COUNTERS_NS (600 * 1000000000ull)
/* The default's once a tick went above its rank cap: every rank's
 * counters each tick were most of the file (4096 ranks: 657 KiB of DELTAs
 * a rank and hour); from then on they are held back as a lean recording's
 * are, written at most once a minute (docs/recording.md, "Larger jobs"). */
#define COLL_RECORD_BIG_COUNTERS_NS (60 * 1000000000ull)

struct coll_record_opts {
	uint64_t keyframe_every_ns; /* 0: 60 s, spaced by cost (below); UINT64_MAX:
	                               no keyframes */
	size_t keyframe_part_max;   /* bytes of keyframe per frame; 0: as many as a
	                               frame takes (tests make it small) */
	uint64_t detail_ns;   /* 0: the default ("view", above); UINT64_MAX:
	                         every tick whole ("full"); else lean, the
	                         whole tick every detail_ns */
	uint32_t view_cap;    /* view: files (sites) kept a tick; 0: 256 */
	uint32_t rank_cap;    /* view: above this many ranks a tick, the ranks
	                         rec_view.h names are kept and the others summed
	                         per node, with the ranks' distribution; 0: 1024 */
	double keyframe_share;     /* with the default period: a keyframe waits for
	                              this many times its bytes of DELTAs (0: the
	                              detail's own, record.c) */
	uint32_t keyframe_periods; /* ... or this many periods (0: the detail's own) */
	bool keyframe_in_loop;     /* encode keyframes in the caller's loop, not in a
	                              forked child (benchmarks that time them) */
	uint64_t counters_ns; /* lean: counters every this long (0: 10 min); the
	                         default above its rank cap (0: 1 min) */
};

/* NULL on failure, with the reason printed. opts may be NULL (defaults). */
struct coll_record *coll_record_open_opts(const char *path, const struct coll_job_info *job,
                                          const struct coll_record_opts *opts);
/* coll_record_open_opts with the defaults. */
struct coll_record *coll_record_open(const char *path, const struct coll_job_info *job);

/* Writes the DELTA of a closed tick, then, when its end has crossed a
 * multiple of keyframe_every_ns since the last keyframe (or the first
 * tick), the KEYFRAME of s, the state d was just applied to. With the
 * default period, a keyframe is also spaced by its cost: past a
 * period's multiple, it waits until the DELTAs since the last one are as
 * large as that one, or 10 periods have passed (so keyframes are at most about as many bytes
 * as the DELTAs, and a seek reads at most a keyframe's bytes of DELTAs
 * after it; docs/recording.md); a lean recording's wait for 8 times their
 * bytes or 60 periods, and are of the state built from what was written. A
 * keyframe
 * that cannot be built (out of memory, over COLL_REC_KEYFRAME_MAX) is
 * skipped and counted; the recording goes on.
 *
 * A keyframe is encoded by a forked child while the caller's loop goes on
 * (snapshot.h): the records written meanwhile (DELTAs, ALERTs, EVENTS) are
 * held in memory and follow it into the file once it is done, so the file
 * is the same as if it had been encoded in place. It is written at the
 * first call after the child is done, or at close. */
void coll_record_tick_state(struct coll_record *r, const struct coll_delta *d,
                            const struct coll_state *s);
/* The DELTA alone: no keyframes. */
void coll_record_tick(struct coll_record *r, const struct coll_delta *d);

struct coll_record_stats {
	uint64_t keyframes;         /* written */
	uint64_t keyframe_frames;   /* KEYFRAME frames they took */
	uint64_t keyframes_skipped; /* could not be built */
	uint64_t keyframe_bytes;    /* the last one's size, before compression */
	uint64_t keyframes_beside;  /* of those written, encoded by a forked child */
	uint64_t records_held_max;  /* most records held while one was encoded */
};
void coll_record_stats(const struct coll_record *r, struct coll_record_stats *st);
void coll_record_alert(struct coll_record *r, uint64_t t_ns, json_t *alert);
/* An EVENTS frame at t_ns (when it was received): a wire frame a leaf
 * accepted (docs/wire-format.md), stored whole but with its MAC made again
 * with the all-zero key, so the job's key is not kept in the file
 * (docs/recording.md, "EVENTS payload"). */
void coll_record_events(struct coll_record *r, uint64_t t_ns, const uint8_t *frame, size_t len);
/* Writes END (clean close) and frees. */
void coll_record_close(struct coll_record *r);

#endif
