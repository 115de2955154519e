/* Access patterns as the field counts them (Darshan, Drishti): each data
 * call with an offset of one process on one file, per layer and class
 * (reads and writes apart, MPI-IO apart from the POSIX calls under it), is
 *   consecutive  it starts where the previous call ended;
 *   sequential   forward: it starts after where the previous call ended,
 *                but not at a constant stride;
 *   strided      forward by a constant stride: offset - previous offset
 *                equals the previous call's (offset - the one before), > 0;
 *   random       anything else: backward, or overlapping the previous call.
 * A file's first call is judged as if a call of 0 bytes at offset 0 came
 * before it: consecutive at offset 0, sequential further on. The leaf
 * keeps a coll_pat per (process, file, layer, class) in its counters
 * (proc.h) and counts the patterns in the tick cells and in the counters
 * it sends up (docs/collector.md, docs/alerts.md). */
#ifndef COLL_PATTERN_H
#define COLL_PATTERN_H

#include <stdbool.h>
#include <stdint.h>

enum coll_pattern {
	COLL_PAT_CONSEC = 0,
	COLL_PAT_SEQ = 1,
	COLL_PAT_STRIDE = 2,
	COLL_PAT_RANDOM = 3,
	COLL_PAT__COUNT = 4,
};

/* Where a stream of calls is, and what it did so far. Zeroed: before the
 * first call. */
struct coll_pat {
	uint64_t end;                /* where the previous call ended */
	uint64_t start;              /* where it started */
	uint64_t stride;             /* its offset - the one before's; 0: none */
	uint64_t n[COLL_PAT__COUNT]; /* calls of each pattern, cumulative */
};

/* The pattern of a call at offset moving bytes, and the state moved past
 * it (its count included). */
static inline enum coll_pattern coll_pat_next(struct coll_pat *s, uint64_t offset, uint64_t bytes)
{
	enum coll_pattern p;
	if (offset == s->end)
		p = COLL_PAT_CONSEC;
	else if (offset > s->end)
		p = s->stride && offset - s->start == s->stride ? COLL_PAT_STRIDE : COLL_PAT_SEQ;
	else
		p = COLL_PAT_RANDOM;
	/* a call before the previous one has no forward stride */
	s->stride = offset > s->start ? offset - s->start : 0;
	s->start = offset;
	s->end = offset + bytes;
	s->n[p]++;
	return p;
}

/* The pattern's name in the summary and the docs: "consecutive",
 * "sequential", "strided", "random"; the short one ("cons", "seq",
 * "strd", "rand") in the dashboard. */
const char *coll_pat_name(enum coll_pattern p);
const char *coll_pat_short(enum coll_pattern p);

#endif
