/* Diagnosis rules: the best-known post-mortem findings (Darshan / Drishti
 * style: small requests, random access, metadata time, STDIO for bulk data,
 * no collective MPI-IO, MPI-IO fragmentation) made live, plus the monitor's
 * own losses. Each looks at the job's sums over its window and speaks only
 * at volume: the gates keep a small or short job quiet. Formulas and
 * defaults: docs/alerts.md. */
#include "alert_int.h"

#include <stdio.h>

static double secs(uint64_t ns)
{
	return (double)ns / 1e9;
}

/* read + write of one layer */
static struct lc_sum data_of(const struct tick_sum *ws, unsigned layer)
{
	const struct lc_sum *r = &ws->lc[layer][IOP_CLASS_READ],
	                    *w = &ws->lc[layer][IOP_CLASS_WRITE];
	return (struct lc_sum){.ops = r->ops + w->ops,
	                       .bytes = r->bytes + w->bytes,
	                       .time_ns = r->time_ns + w->time_ns,
	                       .excl_ns = r->excl_ns + w->excl_ns,
	                       .child_ops = r->child_ops + w->child_ops,
	                       .child_bytes = r->child_bytes + w->child_bytes,
	                       .off_ops = r->off_ops + w->off_ops,
	                       .consec_ops = r->consec_ops + w->consec_ops,
	                       .fwd_ops = r->fwd_ops + w->fwd_ops,
	                       .stride_ops = r->stride_ops + w->stride_ops,
	                       .small_ops = r->small_ops + w->small_ops,
	                       .coll_ops = r->coll_ops + w->coll_ops,
	                       .ranks = r->ranks > w->ranks ? r->ranks : w->ranks};
}

static double mean_bytes(uint64_t bytes, uint64_t ops)
{
	return ops ? (double)bytes / (double)ops : 0;
}

static void job_cond(struct cond *c, enum coll_alert_kind kind, double value, double baseline)
{
	cond_init(c, kind);
	c->value = value;
	c->baseline = baseline;
}

/* A diagnosis of one layer from its data calls over the window: sets the
 * condition's value, baseline and detail; false when a gate does not pass. */
typedef bool (*layer_measure_fn)(const struct rule_rt *rt, const struct lc_sum *d, struct cond *c);

static enum iop_err judge_layers(struct coll_alerts *a, const struct rule_rt *rt,
                                 const unsigned *layers, size_t n, layer_measure_fn measure)
{
	struct tick_sum ws;
	sum_window(a, rt->win, &ws);
	for (size_t i = 0; i < n; i++) {
		struct lc_sum d = data_of(&ws, layers[i]);
		struct cond c;
		cond_init(&c, rt->kind);
		c.layer = c.shown_layer = (int)layers[i];
		fmt_text(c.subject, sizeof(c.subject), "%s",
		         iop_layer_name((enum iop_layer)layers[i]));
		if (!measure(rt, &d, &c))
			continue;
		enum iop_err e = alerts_report(a, rt, &c);
		if (e)
			return e;
	}
	return IOP_OK;
}

/* A list of layers and its length, as judge_layers() takes them. */
#define LAYERS(...)                                                                                \
	(const unsigned[]){__VA_ARGS__}, sizeof((const unsigned[]){__VA_ARGS__}) / sizeof(unsigned)

/* ---------------------------------------------------------------- small_io */

/* Calls with an offset that are random (pattern.h): the rest of them. */
static uint64_t random_ops(const struct lc_sum *d)
{
	uint64_t ordered = d->consec_ops + d->fwd_ops + d->stride_ops;
	return ordered < d->off_ops ? d->off_ops - ordered : 0;
}

static bool measure_small(const struct rule_rt *rt, const struct lc_sum *d, struct cond *c)
{
	if (d->ops == 0 || d->ops < rt->r.min_ops || secs(d->time_ns) < rt->r.min_time_s)
		return false;
	c->value = (double)d->small_ops / (double)d->ops;
	c->baseline = mean_bytes(d->bytes, d->ops);
	char calls[16], mean[24];
	coll_fmt_count(calls, sizeof(calls), (double)d->ops);
	coll_fmt_bytes(mean, sizeof(mean), c->baseline);
	/* Small and strided (each rank a block of an interleaved file, the
	 * HPC pattern): what helps is letting aggregators merge the blocks,
	 * not seeking less. "Most": strided calls are over half of all the
	 * data calls, and small ones are too. */
	bool strided = 2 * d->stride_ops > d->ops && 2 * d->small_ops > d->ops;
	double stride_share = (double)d->stride_ops / (double)d->ops;
	if (strided)
		fmt_text(c->detail, sizeof(c->detail),
		         "%.0f%% of %s data calls under 64 KiB (mean %s per call), %.0f%% strided: "
		         "collective buffering (MPI_File_write_all / romio_cb_write), or larger "
		         "requests",
		         100 * c->value, calls, mean, 100 * stride_share);
	else
		fmt_text(c->detail, sizeof(c->detail),
		         "%.0f%% of %s data calls under 64 KiB (mean %s per call)", 100 * c->value,
		         calls, mean);
	return true;
}

enum iop_err judge_small_io(struct coll_alerts *a, const struct rule_rt *rt)
{
	/* STDIO is left out: libc buffers small fwrite/fprintf calls into
	 * large writes, so small STDIO calls cost little. */
	return judge_layers(a, rt, LAYERS(IOP_LAYER_POSIX, IOP_LAYER_MPIIO, IOP_LAYER_HDF5),
	                    measure_small);
}

/* --------------------------------------------------------------- random_io */

static bool measure_random(const struct rule_rt *rt, const struct lc_sum *d, struct cond *c)
{
	double mean = mean_bytes(d->bytes, d->ops);
	/* large requests amortise a seek; strided large blocks are fine */
	if (d->off_ops == 0 || d->off_ops < rt->r.min_ops || secs(d->time_ns) < rt->r.min_time_s ||
	    mean > (double)rt->r.max_mean_bytes)
		return false;
	c->value = (double)random_ops(d) / (double)d->off_ops;
	c->baseline = mean;
	char calls[16], size[24];
	coll_fmt_count(calls, sizeof(calls), (double)d->off_ops);
	coll_fmt_bytes(size, sizeof(size), mean);
	fmt_text(c->detail, sizeof(c->detail),
	         "%.0f%% of %s data calls at random offsets, not forward of the previous one "
	         "(mean %s)",
	         100 * c->value, calls, size);
	return true;
}

enum iop_err judge_random_io(struct coll_alerts *a, const struct rule_rt *rt)
{
	return judge_layers(a, rt, LAYERS(IOP_LAYER_POSIX, IOP_LAYER_MPIIO), measure_random);
}

/* ---------------------------------------------------------------- metadata */

enum iop_err judge_metadata(struct coll_alerts *a, const struct rule_rt *rt)
{
	struct tick_sum ws;
	sum_window(a, rt->win, &ws);
	/* exclusive times add up across layers without counting a call's
	 * sub-calls twice. Waits for locks are meta calls but no metadata
	 * workload: MPI-IO's data sieving takes fcntl locks around shared-file
	 * writes, and under contention they made a 4-rank MPICH checkpoint
	 * "56% metadata". They count in the I/O time only. Waits for other
	 * ranks in collective opens, closes and syncs are no one's I/O
	 * (late_arrival's): left out of both. */
	uint64_t meta_ns = 0, all_ns = 0, meta_ops = 0, lock_ns = 0;
	for (unsigned l = 0; l < NL; l++) {
		const struct lc_sum *m = &ws.lc[l][IOP_CLASS_META];
		uint64_t own = m->excl_ns > m->wait_ns ? m->excl_ns - m->wait_ns : 0;
		uint64_t locks = m->lock_ns < own ? m->lock_ns : own;
		meta_ns += own - locks;
		lock_ns += locks;
		if (m->ops > meta_ops)
			meta_ops =
			    m->ops; /* the layer with most: an MPI-IO open is a POSIX open too */
		for (unsigned c = 0; c < NC; c++) {
			const struct lc_sum *x = &ws.lc[l][c];
			all_ns += x->excl_ns > x->wait_ns ? x->excl_ns - x->wait_ns : 0;
		}
	}
	/* min_ops is per rank: a few opens, syncs and closes per rank around a
	 * checkpoint are not a metadata problem however many ranks there are */
	uint64_t ranks = ws.io_ranks ? ws.io_ranks : 1;
	if (all_ns == 0 || meta_ops < rt->r.min_ops * ranks || secs(all_ns) < rt->r.min_time_s)
		return IOP_OK;
	struct cond c;
	job_cond(&c, COLL_ALERT_METADATA, (double)meta_ns / (double)all_ns, secs(all_ns));
	char calls[16], meta[16], all[16];
	coll_fmt_count(calls, sizeof(calls), (double)meta_ops);
	coll_fmt_secs(meta, sizeof(meta), secs(meta_ns));
	coll_fmt_secs(all, sizeof(all), secs(all_ns));
	char locks[48] = "";
	if (lock_ns) {
		char l[16];
		coll_fmt_secs(l, sizeof(l), secs(lock_ns));
		fmt_text(locks, sizeof(locks), " (and %s waiting for locks)", l);
	}
	fmt_text(c.detail, sizeof(c.detail),
	         "%.0f%% of I/O time in metadata calls (open, stat, sync, ...): %s of %s%s, %s calls",
	         100 * c.value, meta, all, locks, calls);
	return alerts_report(a, rt, &c);
}

/* ------------------------------------------------------------- stdio_share */

enum iop_err judge_stdio_share(struct coll_alerts *a, const struct rule_rt *rt)
{
	struct tick_sum ws;
	sum_window(a, rt->win, &ws);
	/* STDIO and POSIX are the two layers an application's bytes reach the
	 * kernel through; MPI-IO and HDF5 bytes are in POSIX already */
	uint64_t stdio = data_of(&ws, IOP_LAYER_STDIO).bytes;
	uint64_t total = stdio + data_of(&ws, IOP_LAYER_POSIX).bytes;
	if (total == 0 || total < rt->r.min_bytes)
		return IOP_OK;
	struct cond c;
	job_cond(&c, COLL_ALERT_STDIO_SHARE, (double)stdio / (double)total, (double)total);
	char all[24];
	coll_fmt_bytes(all, sizeof(all), (double)total);
	fmt_text(c.detail, sizeof(c.detail),
	         "STDIO moved %.0f%% of %s of data (fread, fwrite, ...)", 100 * c.value, all);
	return alerts_report(a, rt, &c);
}

/* ----------------------------------------------------------- no_collective */

enum iop_err judge_no_collective(struct coll_alerts *a, const struct rule_rt *rt)
{
	struct tick_sum ws;
	sum_window(a, rt->win, &ws);
	if (!ws.coll_known)
		return IOP_OK; /* the ticks do not say which calls were collective */
	struct lc_sum d = data_of(&ws, IOP_LAYER_MPIIO);
	if (d.ops == 0 || d.ops < rt->r.min_ops || d.bytes < rt->r.min_bytes ||
	    d.ranks < rt->r.min_ranks || d.ranks < 2)
		return IOP_OK;
	uint64_t coll = d.coll_ops < d.ops ? d.coll_ops : d.ops;
	struct cond c;
	job_cond(&c, COLL_ALERT_NO_COLLECTIVE, 1 - (double)coll / (double)d.ops, (double)d.ops);
	c.shown_layer = IOP_LAYER_MPIIO;
	char calls[16], moved[24];
	coll_fmt_count(calls, sizeof(calls), (double)d.ops);
	coll_fmt_bytes(moved, sizeof(moved), (double)d.bytes);
	fmt_text(c.detail, sizeof(c.detail),
	         "%.0f%% of %s MPI-IO data calls (%s) by %llu ranks are independent, "
	         "none collective",
	         100 * c.value, calls, moved, (unsigned long long)d.ranks);
	return alerts_report(a, rt, &c);
}

/* ----------------------------------------------------------- fragmentation */

static bool measure_fragments(const struct rule_rt *rt, const struct lc_sum *d, struct cond *c)
{
	double child_mean = mean_bytes(d->child_bytes, d->child_ops);
	/* many large pieces (a big collective write in buffer-sized chunks)
	 * is how it should be */
	if (d->ops == 0 || d->ops < rt->r.min_ops || secs(d->time_ns) < rt->r.min_time_s ||
	    child_mean > (double)rt->r.max_mean_bytes)
		return false;
	c->value = (double)d->child_ops / (double)d->ops;
	c->baseline = child_mean;
	char calls[16], size[24];
	coll_fmt_count(calls, sizeof(calls), (double)d->ops);
	coll_fmt_bytes(size, sizeof(size), child_mean);
	fmt_text(c->detail, sizeof(c->detail),
	         "%.1f lower-layer calls per data call (%s calls, mean piece %s)", c->value, calls,
	         size);
	return true;
}

enum iop_err judge_fragmentation(struct coll_alerts *a, const struct rule_rt *rt)
{
	return judge_layers(a, rt, LAYERS(IOP_LAYER_MPIIO, IOP_LAYER_HDF5), measure_fragments);
}

/* ------------------------------------------------------------ monitor_loss */

enum iop_err judge_monitor_loss(struct coll_alerts *a, const struct rule_rt *rt)
{
	struct tick_sum ws;
	sum_window(a, rt->win, &ws);
	uint64_t lost = ws.dropped + ws.late, total = ws.events + lost;
	if (total == 0 || total < rt->r.min_ops)
		return IOP_OK;
	struct cond c;
	job_cond(&c, COLL_ALERT_MONITOR_LOSS, (double)lost / (double)total, (double)total);
	char all[16], dropped[16], late[16];
	coll_fmt_count(all, sizeof(all), (double)total);
	coll_fmt_count(dropped, sizeof(dropped), (double)ws.dropped);
	coll_fmt_count(late, sizeof(late), (double)ws.late);
	fmt_text(c.detail, sizeof(c.detail),
	         "monitor missed %.1f%% of %s events (%s dropped by the shims, %s late)",
	         100 * c.value, all, dropped, late);
	return alerts_report(a, rt, &c);
}
