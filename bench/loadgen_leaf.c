/* lg_rank_to_leaf (loadgen.h): iop-loadgen's ranks feeding a leaf in the
 * same process, in simulated time, for the collector benchmarks
 * (root_bench, recsize_bench). Kept apart from loadgen_rank.c so that
 * iop-loadgen itself does not link the collector. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "leaf.h"
#include "leaf_rounds.h"
#include "loadgen.h"

enum iop_err lg_rank_to_leaf(struct lg_rank *r, const struct lg_opts *o, uint64_t now_ns,
                             uint64_t real0_ns, uint8_t *buf, struct coll_leaf *leaf,
                             uint64_t *events)
{
	enum iop_err e = lg_rank_generate(r, o, now_ns, real0_ns);
	while (!e && lg_rank_pending(r)) {
		struct lg_built b;
		if ((e = lg_rank_build(r, o, buf, false, real0_ns + now_ns, real0_ns, &b)))
			break;
		if ((e = coll_leaf_frame(leaf, buf, b.len, real0_ns + now_ns)))
			break;
		lg_rank_commit(r, &b);
		*events += b.events;
	}
	return e;
}

void lg_leaf_keep(void *arg, struct coll_delta *d)
{
	struct lg_leaf_made *m = arg;
	if (m->n == m->want || m->n == LG_LEAF_TICKS_MAX || (m->n == 0 && d->tick.n == 0))
		return; /* the ticks before the first events: nothing to keep */
	struct coll_delta *c = &m->d[m->n];
	coll_delta_init(c, d->tick.t, d->tick.tick_ns);
	if (coll_delta_merge(c, d) != IOP_OK) {
		m->want = 0; /* lg_leaf_made_ok() says so */
		return;
	}
	m->n++;
	c->mon = d->mon;
	if (m->tick_ns)
		c->tick.tick_ns = m->tick_ns;
}

int lg_leaf_made_ok(const struct lg_leaf_made *m)
{
	return m->want != 0;
}

struct coll_delta *lg_leaf_round(struct lg_leaf_made *m, uint64_t k, int64_t t)
{
	unsigned later = m->n - 1;
	struct coll_delta *d = &m->d[k == 0 ? 0 : 1 + (k - 1) % later];
	d->tick.t = t;
	if (k > later) {
		d->n_names = d->n_procs = 0;
		for (uint32_t i = 0; i < d->ctr.n; i++) {
			struct coll_counter *c = &d->ctr.v[i];
			c->ops += 1000000ull * later;
			c->bytes += 1000000000ull * later;
			c->time_ns += 1000000000ull * later;
		}
	}
	return d;
}

pid_t lg_spawn_collector(const char *exe, char *const argv[], const struct iop_key *key,
                         uint64_t job_id, const char *log)
{
	char hex[33], job[24];
	iop_key_to_hex(key, hex);
	snprintf(job, sizeof job, "%" PRIx64, job_id);
	pid_t pid = fork();
	if (pid == 0) {
		setenv("IOPULSE_KEY", hex, 1);
		setenv("IOPULSE_JOB", job, 1);
		FILE *null = freopen("/dev/null", "w", stdout);
		(void)null;
		if (log && !freopen(log, "w", stderr))
			_exit(126);
		execv(exe, argv);
		_exit(127);
	}
	return pid;
}

enum iop_err lg_leaf_make(struct coll_leaf *l, struct lg_rank *ranks,
                          const struct lg_opts *const *opts, unsigned n, uint64_t t0,
                          uint64_t step_ns, uint64_t limit_ns, uint8_t *buf,
                          struct lg_leaf_made *m, uint64_t *events)
{
	for (uint64_t now = step_ns; m->n < m->want && now < limit_ns; now += step_ns) {
		for (unsigned i = 0; i < n; i++) {
			enum iop_err e = lg_rank_to_leaf(&ranks[i], opts[i], now, t0, buf, l, events);
			if (e)
				return e;
		}
		coll_leaf_advance(l, t0 + now, false, lg_leaf_keep, m);
	}
	return lg_leaf_made_ok(m) ? IOP_OK : IOP_ERR_NOMEM;
}
