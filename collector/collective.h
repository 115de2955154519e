/* Collective calls matched across ranks (docs/collector.md, "Collective
 * calls").
 *
 * The shim numbers each process's collective calls per file and layer
 * (IOP_EV_COLL): the n-th is the same instance on every rank. A leaf puts
 * each rank's part of an instance (its rank, duration and exclusive time)
 * into the tick's instance set, which travels up with the delta; mids merge
 * the sets; the root matches them (coll_match_close) as each tick closes.
 *
 * Every rank leaves a synchronising collective at about the same moment,
 * so the rank with the shortest duration arrived last, and each other
 * rank waited its duration minus that shortest one: durations only, so
 * node clocks need not agree. Of that, only the rank's exclusive time
 * beyond the last rank's counts: time in the calls it issued is its own
 * I/O (an aggregator's POSIX writes) or a wait counted at that call's own
 * layer (an H5Dwrite's MPI_File_write_at_all), so waits at nested layers
 * add up without counting a moment twice, and the work every rank does
 * in the call (the last one's exclusive time) is not waiting.
 *
 * A matched instance adds to the closing tick's rows:
 *   RANK (each rank)   wait_ns, match_ops; the last one also last_ops and
 *                      late_ns (the others' mean wait: how late it came)
 *   FILE and LAYER     the same sums over its ranks
 * An instance is matched once every rank of its communicator has been
 * seen, or COLL_MATCH_WAIT_TICKS ticks after it first was (an event
 * dropped in a shim, a rank not monitored), with what is there. */
#ifndef COLL_COLLECTIVE_H
#define COLL_COLLECTIVE_H

#include <stdbool.h>
#include <stdint.h>

#include "codec.h"
#include "err.h"
#include "tick.h"

/* One rank's part in an instance. */
struct coll_arrival {
	uint64_t dur_ns;  /* its time in the call */
	uint64_t excl_ns; /* of that, not in calls it issued */
	uint32_t rank;
	uint32_t next;    /* the instance's next arrival: index + 1, 0 = none */
};

/* One collective call instance, as far as it is known. */
struct coll_inst {
	uint64_t file;     /* name hash of the event's file (or dataset) */
	int64_t t;         /* the tick it was first seen in (the root's matcher) */
	uint32_t seq;      /* its number on the file */
	uint32_t size;     /* ranks of its communicator */
	uint32_t n;        /* arrivals */
	uint32_t head, tail; /* its arrivals: index + 1 in the set's a[] */
	uint8_t layer, op;
};

/* A set of instances, one per (file, layer, seq), with their arrivals. */
struct coll_instset {
	struct coll_inst *v;
	uint32_t n, cap;
	struct coll_arrival *a;
	uint32_t na, cap_a;
	uint32_t *slot; /* index over v: position + 1, 0 = empty */
	uint32_t n_slots;
};

/* Limits a decoder enforces and a set keeps to (OVERSIZED past them). */
#define COLL_INST_MAX     (1u << 20) /* instances in a set */
#define COLL_ARRIVALS_MAX (1u << 24) /* arrivals in a set */

void coll_instset_free(struct coll_instset *s);
void coll_instset_clear(struct coll_instset *s);
/* One rank's part in instance (file, layer, seq): added to the instance,
 * which is made when new. OVERSIZED past the limits, NOMEM; the set is
 * unchanged then. */
enum iop_err coll_instset_add(struct coll_instset *s, uint64_t file, unsigned layer, unsigned op,
                              uint32_t seq, uint32_t size, const struct coll_arrival *a);
/* dst += src's instances and arrivals. The first error; what could not be
 * added is left out. */
enum iop_err coll_instset_merge(struct coll_instset *dst, const struct coll_instset *src);

/* Encoding (docs/collector.md, "Tick delta", delta version 4): the count,
 * then per instance its file hash, layer and op, number, communicator
 * size, arrivals, their shortest duration and each arrival's rank,
 * duration above the shortest and time in calls it issued. Decode adds to
 * *s; MALFORMED for a layer, op, number, size or arrival count out of
 * range, OVERSIZED past the limits. */
void coll_instset_encode(const struct coll_instset *s, struct iop_wcur *c);
enum iop_err coll_instset_decode(struct coll_instset *s, struct iop_rcur *c);

/* Ticks an instance not seen whole waits at the root before it is matched
 * with the arrivals there are. */
#define COLL_MATCH_WAIT_TICKS 2

/* The root's instances not yet matched. */
struct coll_matcher {
	struct coll_instset pending, spare;
	struct coll_arrival *tmp; /* one instance's arrivals, each rank once */
	uint32_t cap_tmp;
	uint32_t *seen; /* per rank: the generation of the instance it was last in */
	uint32_t n_seen, gen;
	uint64_t matched; /* instances matched so far (2 ranks or more) */
};

void coll_matcher_free(struct coll_matcher *m);
/* As tick k closes: takes the instances of its set (emptied), and
 * matches into k's rows those complete and those that have waited long
 * enough (all of them with flush, the job's end). */
void coll_match_close(struct coll_matcher *m, struct coll_instset *set, struct coll_tick *k,
                      bool flush);

#endif
