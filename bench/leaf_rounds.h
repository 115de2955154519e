/* What the collector benchmarks share (root_bench, tree_bench;
 * implemented in loadgen_leaf.c): a simulated leaf's deltas, made once in
 * simulated time and sent again round after round, as a leaf's steady
 * state; and the collector processes they feed. */
#ifndef IOP_BENCH_LEAF_ROUNDS_H
#define IOP_BENCH_LEAF_ROUNDS_H

#include <stdint.h>
#include <sys/types.h>

#include "auth.h"
#include "delta.h"

#define LG_LEAF_TICKS_MAX 4

struct lg_leaf_made {
	struct coll_delta d[LG_LEAF_TICKS_MAX];
	unsigned n;       /* kept so far */
	unsigned want;    /* ticks to keep: the first, then want - 1 in turn */
	uint64_t tick_ns; /* 0: as made; else each kept delta relabelled with it
	                     (a 1 s tick's load sent as a longer tick) */
};

/* coll_leaf_advance's callback (arg: a struct lg_leaf_made): keeps a copy
 * of each closed tick's delta from the first with events, up to want.
 * False from lg_leaf_made_ok() once a copy failed (out of memory). */
void lg_leaf_keep(void *arg, struct coll_delta *d);
int lg_leaf_made_ok(const struct lg_leaf_made *m);

struct lg_rank;
struct lg_opts;
struct coll_leaf;

/* Feeds n ranks (rank i with opts[i]) into leaf l in simulated time from
 * t0, a step at a time, advancing it after each, until m holds m->want
 * deltas (lg_leaf_keep) or limit_ns of simulated time have passed. The
 * first error of a rank's frames; NOMEM when a delta could not be kept. */
enum iop_err lg_leaf_make(struct coll_leaf *l, struct lg_rank *ranks,
                          const struct lg_opts *const *opts, unsigned n, uint64_t t0,
                          uint64_t step_ns, uint64_t limit_ns, uint8_t *buf,
                          struct lg_leaf_made *m, uint64_t *events);

/* The delta a leaf sends in round k (0: its first) for tick t. Its later
 * ticks go in turn; after their first turn without their names and
 * joins (sent once), and with their counters raised past any value sent
 * before (counters are absolute: the root counts what grew). */
struct coll_delta *lg_leaf_round(struct lg_leaf_made *m, uint64_t k, int64_t t);

/* Starts exe with argv, the job's key and id in its environment
 * (IOPULSE_KEY, IOPULSE_JOB), stdout to /dev/null and stderr to log (NULL:
 * kept); its pid, or -1 when fork failed. */
pid_t lg_spawn_collector(const char *exe, char *const argv[], const struct iop_key *key,
                         uint64_t job_id, const char *log);

#endif
