/* Synthetic ticks for the alert tests: calls are recorded into RANK, FILE
 * and LAYER rows the way a leaf would, with seeded jitter, and a small job
 * model (ranks doing I/O phases through POSIX or collective MPI-IO) gives
 * whole healthy jobs into which a test injects one fault at a time.
 * Also collects the alerts an engine reports. */
#ifndef COLL_ALERT_SYNTH_H
#define COLL_ALERT_SYNTH_H

#include <stdbool.h>
#include <stdint.h>

#include "alerts.h"
#include "tick.h"

#define SYNTH_T0   1700000000 /* first tick: a plausible date at 1 s ticks */
#define SYNTH_TICK 1000000000u
#define MIB        (UINT64_C(1) << 20)

struct synth {
	struct coll_tick tick;
	uint64_t rng;
};

/* n calls of one rank in one layer and class, on a file (0: none). */
struct synth_calls {
	uint32_t rank;
	unsigned layer, cls;
	uint64_t file;
	uint64_t n, bytes;    /* bytes per call (ignored for meta calls) */
	double lat_s;         /* latency per call, */
	double jitter;        /* spread uniformly by +- this fraction */
	double tail_p;        /* share of calls that stall, */
	double tail_factor;   /* taking this much longer */
	double seq;           /* share of the calls that continue the last one; < 0: no offsets */
	double fwd, stride;   /* shares of sequential (forward) and strided calls (pattern.h);
	                         the calls none of the three take are random */
	uint64_t children;    /* calls each issues below it, */
	uint64_t child_bytes; /* of this many bytes each */
	bool collective;      /* read_coll / write_coll calls (counted in coll_ops) */
	bool lock;            /* meta calls that wait for locks (counted in lock_ns) */
};

void synth_init(struct synth *s, uint64_t seed);
void synth_free(struct synth *s);
/* Empties the tick for tick number t. */
void synth_begin(struct synth *s, int64_t t);
void synth_calls(struct synth *s, const struct synth_calls *c);
/* A call of the rank in flight since start_ns when the tick closes. */
void synth_inflight(struct synth *s, uint32_t rank, unsigned layer, unsigned cls,
                    uint64_t start_ns);
double synth_uniform(struct synth *s); /* [0, 1) */

/* A job: every rank does `calls` data calls of `bytes` each per active
 * tick, in `burst` ticks out of every `period` (0: always), to file
 * (rank % files) + 1. MPI-IO jobs write collectively, every 8th rank
 * being an aggregator that issues the POSIX writes. Faults are set by the
 * test between ticks. */
struct synth_job {
	uint32_t ranks;
	bool mpiio;
	unsigned cls; /* IOP_CLASS_WRITE or IOP_CLASS_READ */
	uint64_t calls, bytes;
	double lat_s, jitter;
	double tail_p, tail_factor; /* stalls, as in synth_calls */
	double seq;
	unsigned period, burst;
	unsigned files;
	/* faults */
	uint32_t slow_rank;  /* COLL_RANK_NONE: none */
	double slow_factor;  /* its calls take this much longer (and it makes fewer) */
	double all_factor;   /* every call takes this much longer (and fewer are made) */
	uint64_t spike_file; /* calls on this file id take spike_factor longer */
	double spike_factor;
	uint32_t heavy_rank; /* moves heavy_factor times the bytes */
	double heavy_factor;
};

void synth_job_default(struct synth_job *j, uint32_t ranks);
/* Fills s->tick with tick number SYNTH_T0 + i of the job. */
void synth_job_tick(struct synth *s, const struct synth_job *j, int64_t i);

/* Alerts reported to synth_collect, copied. */
struct synth_alert {
	struct coll_alert a;
	int64_t tick; /* tick number at which it was reported, relative to SYNTH_T0 */
	char message[512];
};
struct synth_log {
	struct synth_alert *v;
	size_t n, cap;
	int64_t now; /* set by the test before each tick */
};
void synth_collect(void *log, const struct coll_alert *a);
void synth_log_free(struct synth_log *l);
/* How many alerts of kind (any when < 0) in state (any when < 0). */
size_t synth_count(const struct synth_log *l, int kind, int state);
/* The first alert of kind in state, or NULL. */
const struct synth_alert *synth_find(const struct synth_log *l, enum coll_alert_kind kind,
                                     int state);
/* Prints every alert (for a failing test's output). */
void synth_dump(const struct synth_log *l);

/* Runs ticks [from, to) of a job through an engine, logging alerts. */
void synth_run(struct synth *s, struct coll_alerts *a, const struct synth_job *j,
               const struct coll_alert_ctx *ctx, struct synth_log *log, int64_t from, int64_t to);

#endif
