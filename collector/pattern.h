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

/* coll_pat_next for the n calls of a run (common/frame.h): at offset,
 * offset + stride, ... (wrapping as uint64_t), each moving bytes; the
 * calls of each pattern added to got[]. From the third call on, a run's
 * calls all stand to the call before as the third does, so it takes three
 * steps and a count, unless an offset or its end would wrap (a run no real
 * call makes): then call by call. */
static inline void coll_pat_run(struct coll_pat *s, uint64_t offset, uint64_t stride,
                                uint64_t bytes, uint64_t n, uint64_t got[COLL_PAT__COUNT])
{
	__int128 step = (int64_t)stride, first = offset,
	         last = first + step * (__int128)(n ? n - 1 : 0), top = (__int128)UINT64_MAX - bytes;
	bool wraps = bytes > UINT64_MAX - offset || last < 0 || last > top;
	uint64_t i = 0, at = offset;
	enum coll_pattern p = COLL_PAT_RANDOM;
	for (; i < n && (i < 3 || wraps); i++, at += stride)
		got[p = coll_pat_next(s, at, bytes)]++;
	if (i == n)
		return;
	uint64_t more = n - i, end_at = offset + stride * (n - 1);
	got[p] += more;
	s->n[p] += more;
	s->start = end_at;
	s->end = end_at + bytes;
}

/* The pattern's name in the summary and the docs: "consecutive",
 * "sequential", "strided", "random"; the short one ("cons", "seq",
 * "strd", "rand") in the dashboard. */
const char *coll_pat_name(enum coll_pattern p);
const char *coll_pat_short(enum coll_pattern p);

#endif
