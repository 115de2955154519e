/* iop-loadgen's internals, shared by its three files:
 *
 *   loadgen.c         options, generator threads, pacing, sockets, main
 *   loadgen_rank.c    one simulated process: its events, names, cumulative
 *                     counters, in-flight call, and frames built the way the
 *                     shim's sender builds them (pmpi-shim/sender.c)
 *   loadgen_report.c  the JSON report of what was sent (jansson)
 *
 * Nothing else includes it. docs/testing-tools.md describes the tool. */
#ifndef IOP_LOADGEN_H
#define IOP_LOADGEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "frame.h"
#include "workload.h"

#define LG_MAX_URLS       16
#define LG_FRAME_CAP      (64 * 1024) /* the shim's frame buffer */
#define LG_FRAME_EVENTS   4096        /* the shim's stage: events per frame at most */
#define LG_HOST_ID        1           /* name id of the HOST record; workload ids + 1 */
#define LG_CELLS          (IOP_LAYER__COUNT * IOP_CLASS__COUNT)
#define LG_FINAL_SNDTIMEO 1000 /* ms: a last frame waits at least this long */

struct lg_opts {
	const char *urls[LG_MAX_URLS];
	unsigned n_urls;
	uint32_t ranks, rank_base, nodes, threads;
	double events_per_s, duration_s, slow_factor;
	int64_t slow_rank; /* -1: none */
	uint64_t max_events, batch_ms, job_id;
	int send_timeout_ms; /* 0: NN_DONTWAIT */
	unsigned linger_ms;  /* after the last frame, before closing the sockets */
	enum iop_wl_kind workload;
	struct iop_key key;
	uint64_t seed;
	/* Collective calls (MPI_File_write_at_all-like, IOP_EV_COLL) on top of
	 * the workload's events: coll_per_s a second per rank (0: none), on
	 * the file of the rank's communicator, coll_group consecutive ranks
	 * (0: every rank from 0 to rank_base + ranks). See loadgen_rank.c. */
	double coll_per_s;
	uint32_t coll_group;
};

/* Cumulative totals of one (file, layer, class), as the shim keeps them. */
struct lg_cum {
	uint64_t ops, bytes, time_ns, errors;
	bool dirty;
};

/* Sums of the events that went out in accepted frames, per layer and class. */
struct lg_sent {
	uint64_t ops[IOP_LAYER__COUNT][IOP_CLASS__COUNT];
	uint64_t bytes[IOP_LAYER__COUNT][IOP_CLASS__COUNT];
	uint64_t errors[IOP_LAYER__COUNT][IOP_CLASS__COUNT];
};

struct lg_rank {
	uint32_t rank, node, node_id, pid;
	unsigned url; /* index in lg_opts.urls */
	char host[32];
	double slow; /* duration multiplier: 1, or --slow-factor */
	struct iop_wl wl;
	/* pacing: event k of the schedule ends at start + k / rate */
	uint64_t sched_k;
	struct iop_event ahead;     /* next call, generated but not yet due */
	bool done;                  /* no more events: max reached or time up */
	bool stopping;              /* asked to stop: only the current nested call ends */
	bool in_group;              /* the last event was a child: its parent is due */
	uint64_t first_ns, last_ns; /* end times of its first and last events */
	/* what the next frame must carry */
	struct iop_event *stage;
	size_t n_stage, cap_stage;
	struct lg_cum *cum; /* [wire file id * LG_CELLS + layer * 3 + class] */
	uint32_t cum_files;
	uint32_t *dirty; /* indexes into cum */
	size_t n_dirty, cap_dirty;
	uint32_t announced; /* next workload name id to announce */
	bool host_announced, need_resync, final_sent;
	/* what happened */
	uint64_t seq, events, events_sent, dropped, frames, refused, wire_bytes, inflight;
	uint64_t skipped; /* schedule slots skipped when more than a batch behind */
	/* collective calls (lg_opts.coll_per_s): the next one's index (its
	 * number on the file is that + 1), the file and site (wire ids), the
	 * communicator's size, whether this rank is its late one, how many were
	 * made and how many skipped (numbered all the same, as the shim does) */
	uint64_t coll_k, colls, coll_skipped;
	uint32_t coll_file, coll_site, coll_size;
	bool coll_late;
	struct lg_sent sent;
};

/* What a built frame holds, to commit once the socket took it. */
struct lg_built {
	size_t len;
	uint32_t names_to;
	bool host;
	size_t counters, events;
	bool final;
};

bool lg_rank_init(struct lg_rank *r, const struct lg_opts *o, uint32_t index);
void lg_rank_free(struct lg_rank *r);

/* Moves the events due by now_ns (ns since the run's start) to the stage,
 * timestamped at real0_ns + their due time. */
enum iop_err lg_rank_generate(struct lg_rank *r, const struct lg_opts *o, uint64_t now_ns,
                              uint64_t real0_ns);
/* Whether a frame is worth sending (as the shim: something new to say). */
bool lg_rank_pending(const struct lg_rank *r);
/* Builds the next frame into buf; final asks for the FINAL flag, which is
 * set only when everything pending fits. */
enum iop_err lg_rank_build(struct lg_rank *r, const struct lg_opts *o, uint8_t *buf, bool final,
                           uint64_t now_real_ns, uint64_t real0_ns, struct lg_built *b);
void lg_rank_commit(struct lg_rank *r, const struct lg_built *b);
/* The socket refused the frame: its events are lost (counted), its names
 * and counters go again, and so does everything after a resync. */
void lg_rank_refused(struct lg_rank *r, const struct lg_built *b);
/* Every name and counter again, before the last frame (the shim does it). */
void lg_rank_resync(struct lg_rank *r);

/* For benchmarks in simulated time (no sockets): the events due by now_ns
 * go out in frames (buf: LG_FRAME_CAP bytes), each given to a leaf with
 * coll_leaf_frame at real0_ns + now_ns; *events counts them. */
struct coll_leaf;
enum iop_err lg_rank_to_leaf(struct lg_rank *r, const struct lg_opts *o, uint64_t now_ns,
                             uint64_t real0_ns, uint8_t *buf, struct coll_leaf *leaf,
                             uint64_t *events);

struct lg_run {
	const struct lg_opts *opt;
	struct lg_rank *ranks;
	double wall_s;    /* start to the end of the last frame */
	bool interrupted; /* a signal stopped it early */
};

/* Writes the report to stdout; false when it could not. */
bool lg_report(const struct lg_run *run);

#endif
