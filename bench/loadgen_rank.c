/* One simulated rank process of iop-loadgen (see loadgen.h): a workload
 * stream from tests/support/workload (its calls, files, sites, nesting and
 * errors), re-timed onto the real clock at the requested rate, and frames
 * built as the shim's sender builds them (pmpi-shim/sender.c): names once,
 * the cumulative counters that changed, the call in flight, the events; a
 * refused frame loses its events (counted as dropped) and everything is
 * announced again; the last frame repeats every name and counter and is
 * FINAL.
 *
 * With lg_opts.coll_per_s, collective calls (coll_generate) go in between
 * the workload's calls, on a schedule of their own shared by every rank.
 *
 * Ids on the wire: the HOST name is id 1, and a workload name of id i goes
 * out as i + 1, so ids stay small and dense like the shim's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "loadgen.h"

static void *grow(void *p, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return p;
	size_t n = *cap ? *cap : 64;
	while (n < need)
		n *= 2;
	void *q = realloc(p, n * size);
	if (q) {
		memset((char *)q + *cap * size, 0, (n - *cap) * size);
		*cap = n;
	}
	return q;
}

static uint32_t wire_id(uint32_t wl_id)
{
	return wl_id ? wl_id + LG_HOST_ID : 0;
}

static void pull_ahead(struct lg_rank *r)
{
	iop_wl_generate(&r->wl, &r->ahead, 1);
	r->ahead.file = wire_id(r->ahead.file);
	r->ahead.site = wire_id(r->ahead.site);
	r->ahead.dur_ns = (uint64_t)((double)r->ahead.dur_ns * r->slow);
	if (r->ahead.flags & IOP_EV_CHILDREN)
		r->ahead.child_ns = (uint64_t)((double)r->ahead.child_ns * r->slow);
}

/* A name of the rank's own (the collective calls' file and site) in the
 * workload's table, so that it is announced, resent and counted as the
 * workload's are; registered before the first call, so the workload's
 * own names only move up by one. 0 when the table is full. */
static uint32_t own_name(struct iop_wl *w, uint8_t kind, const char *text)
{
	if (w->n_names == IOP_WL_MAX_NAMES)
		return 0;
	uint32_t id = w->n_names++;
	struct iop_wl_name *n = &w->names[id];
	snprintf(n->text, sizeof n->text, "%s", text);
	n->name = (struct iop_name){.kind = kind,
	                            .id = id,
	                            .text = n->text,
	                            .len = (uint32_t)strlen(n->text),
	                            .hash = iop_hash64(n->text, strlen(n->text))};
	n->announced = false;
	return id;
}

/* The collective calls' communicator: coll_group consecutive ranks (the
 * last group may be smaller), one shared file each; its late rank is the
 * slow rank when in it, else its last. */
static void coll_init(struct lg_rank *r, const struct lg_opts *o)
{
	uint32_t total = o->rank_base + o->ranks;
	uint32_t group = o->coll_group ? o->coll_group : total;
	uint32_t g = r->rank / group, first = g * group;
	r->coll_size = total - first < group ? total - first : group;
	uint32_t late = first + r->coll_size - 1;
	if (o->slow_rank >= first && o->slow_rank < (int64_t)first + r->coll_size)
		late = (uint32_t)o->slow_rank;
	r->coll_late = r->rank == late;
	char path[64];
	snprintf(path, sizeof path, "/scratch/coll/shared%05u.dat", g);
	r->coll_file = wire_id(own_name(&r->wl, IOP_NAME_FILE, path));
	r->coll_site = wire_id(own_name(&r->wl, IOP_NAME_SITE, "checkpoint_write_all+0x5c"));
}

bool lg_rank_init(struct lg_rank *r, const struct lg_opts *o, uint32_t index)
{
	memset(r, 0, sizeof *r);
	r->rank = o->rank_base + index;
	/* nodes hold consecutive ranks, as a launcher fills them by slot */
	uint32_t per_node = (o->ranks + o->nodes - 1) / o->nodes;
	r->node = r->rank / per_node;
	snprintf(r->host, sizeof r->host, "lgnode%04u", r->node);
	r->node_id = (uint32_t)iop_hash_str(r->host);
	r->pid = 1000 + r->rank;
	r->url = index % o->n_urls;
	r->slow = o->slow_rank == (int64_t)r->rank ? o->slow_factor : 1.0;
	r->announced = 1; /* workload id 0 is "none" */
	if (!iop_wl_init(&r->wl, o->workload, r->rank, o->seed, 0))
		return false;
	if (o->coll_per_s > 0)
		coll_init(r, o);
	pull_ahead(r);
	return true;
}

void lg_rank_free(struct lg_rank *r)
{
	iop_wl_free(&r->wl);
	free(r->stage);
	free(r->cum);
	free(r->dirty);
	r->stage = NULL;
	r->cum = NULL;
	r->dirty = NULL;
}

static enum iop_err count(struct lg_rank *r, const struct iop_event *ev)
{
	uint32_t i = ev->file * LG_CELLS + ev->layer * IOP_CLASS__COUNT + iop_op_class(ev->op);
	size_t cap = (size_t)r->cum_files * LG_CELLS;
	struct lg_cum *cum = grow(r->cum, &cap, (size_t)i + 1, sizeof *cum);
	if (!cum)
		return IOP_ERR_NOMEM;
	r->cum = cum;
	r->cum_files = (uint32_t)(cap / LG_CELLS);
	struct lg_cum *c = &cum[i];
	if (!c->dirty) {
		uint32_t *d = grow(r->dirty, &r->cap_dirty, r->n_dirty + 1, sizeof *d);
		if (!d)
			return IOP_ERR_NOMEM;
		r->dirty = d;
		d[r->n_dirty++] = i;
		c->dirty = true;
	}
	c->ops++;
	c->bytes += ev->flags & IOP_EV_BYTES ? ev->bytes : 0;
	c->time_ns += ev->dur_ns;
	c->errors += (ev->flags & IOP_EV_ERROR) != 0;
	return IOP_OK;
}

static uint64_t due_ns(const struct lg_rank *r, const struct lg_opts *o)
{
	return (uint64_t)((double)r->sched_k * 1e9 / o->events_per_s);
}

/* Collective call k is due at (k + 1/2) / coll_per_s: the same moment on
 * every rank, each rank's duration its own. */
static uint64_t coll_due_ns(const struct lg_rank *r, const struct lg_opts *o)
{
	return (uint64_t)(((double)r->coll_k + 0.5) * 1e9 / o->coll_per_s);
}

static uint64_t mix64(uint64_t z) /* splitmix64's finaliser */
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

/* A synchronising collective: every rank leaves at about the same moment,
 * so a rank's duration is its own work (~150 us, 120-180) plus its wait
 * for the last to arrive (0.1-2 ms), and the late rank's is its work
 * alone, the shortest. No POSIX children (its exclusive time is its
 * duration). Its own random numbers, not the workload's: the workload's
 * events are the same with and without collective calls. */
static void coll_event(const struct lg_rank *r, const struct lg_opts *o, struct iop_event *ev,
                       uint64_t end_ns)
{
	uint64_t x = mix64(o->seed * 0x9e3779b97f4a7c15u ^ (uint64_t)r->rank << 32 ^ r->coll_k);
	double u1 = (double)(x >> 40) * 0x1p-24, u2 = (double)(x & 0xffffff) * 0x1p-24;
	uint64_t dur = (uint64_t)(120000 + 60000 * u1);
	if (!r->coll_late)
		dur += (uint64_t)(100000 + 1900000 * u2);
	uint64_t block = 64 * 1024;
	*ev = (struct iop_event){.end_ns = end_ns,
	                         .dur_ns = dur < end_ns ? dur : end_ns,
	                         .offset =
	                             (r->coll_k * r->coll_size + r->rank % r->coll_size) * block,
	                         .bytes = block,
	                         .file = r->coll_file,
	                         .site = r->coll_site,
	                         .coll_seq = (uint32_t)(r->coll_k + 1),
	                         .coll_size = r->coll_size,
	                         .layer = IOP_LAYER_MPIIO,
	                         .op = IOP_OP_WRITE_COLL,
	                         .flags = IOP_EV_COLL | IOP_EV_BYTES | IOP_EV_OFFSET};
}

static struct iop_event *stage_one(struct lg_rank *r)
{
	struct iop_event *st = grow(r->stage, &r->cap_stage, r->n_stage + 1, sizeof *st);
	if (!st)
		return NULL;
	r->stage = st;
	return &st[r->n_stage++];
}

/* The collective call due before the workload's next (due) and by now,
 * when there is one: staged (true, *err set), or skipped when more than a
 * batch behind. Not inside a nested call (its parent is due first): one
 * held back by it ends with it. */
static bool coll_generate(struct lg_rank *r, const struct lg_opts *o, uint64_t due, uint64_t now_ns,
                          uint64_t real0_ns, enum iop_err *err)
{
	if (o->coll_per_s <= 0 || r->in_group)
		return false;
	uint64_t batch_ns = o->batch_ms * 1000000u;
	uint64_t cdue = coll_due_ns(r, o);
	if (cdue > due || cdue > now_ns)
		return false;
	if (now_ns > batch_ns && cdue < now_ns - batch_ns) {
		r->coll_skipped++; /* numbered all the same: the others made it */
		r->coll_k++;
		return true;
	}
	struct iop_event *ev = stage_one(r);
	if (!ev) {
		*err = IOP_ERR_NOMEM;
		return true;
	}
	uint64_t end = real0_ns + cdue;
	coll_event(r, o, ev, end > r->last_ns ? end : r->last_ns);
	if ((*err = count(r, ev)) != IOP_OK)
		return true;
	if (r->events++ == 0)
		r->first_ns = ev->end_ns;
	r->last_ns = ev->end_ns;
	r->colls++;
	r->coll_k++;
	return true;
}

enum iop_err lg_rank_generate(struct lg_rank *r, const struct lg_opts *o, uint64_t now_ns,
                              uint64_t real0_ns)
{
	uint64_t batch_ns = o->batch_ms * 1000000u;
	uint64_t limit_ns = o->duration_s > 0 ? (uint64_t)(o->duration_s * 1e9) : UINT64_MAX;
	while (!r->done) {
		uint64_t due = due_ns(r, o);
		bool over =
		    r->stopping || (o->max_events && r->events >= o->max_events) || due >= limit_ns;
		if (over && !r->in_group) {
			r->done = true;
			break;
		}
		enum iop_err cerr = IOP_OK;
		if (coll_generate(r, o, due, now_ns, real0_ns, &cerr)) {
			if (cerr != IOP_OK)
				return cerr;
			continue;
		}
		if (due > now_ns && !over)
			break; /* a nested call's parent goes with its children, even late */
		if (now_ns > batch_ns && due < now_ns - batch_ns) {
			/* more than a batch behind: this thread cannot keep the
			 * rate; skip, so the achieved rate says so */
			uint64_t k = (uint64_t)((double)(now_ns - batch_ns) * o->events_per_s / 1e9) + 1;
			if (k <= r->sched_k)
				k = r->sched_k + 1; /* rounding: never stand still */
			r->skipped += k - r->sched_k;
			r->sched_k = k;
			continue;
		}
		struct iop_event *ev = stage_one(r);
		if (!ev)
			return IOP_ERR_NOMEM;
		*ev = r->ahead;
		ev->end_ns = real0_ns + due;
		if (ev->dur_ns > ev->end_ns)
			ev->dur_ns = ev->end_ns;
		enum iop_err err = count(r, ev);
		if (err != IOP_OK)
			return err;
		if (r->events++ == 0)
			r->first_ns = ev->end_ns;
		r->last_ns = ev->end_ns;
		r->in_group = (ev->flags & IOP_EV_PARENT) != 0;
		r->sched_k++;
		pull_ahead(r);
	}
	return IOP_OK;
}

bool lg_rank_pending(const struct lg_rank *r)
{
	return r->n_stage || r->n_dirty || !r->host_announced || r->announced < r->wl.n_names;
}

/* The next call is in flight when it has started and not ended by now. */
static void add_inflight(struct lg_rank *r, const struct lg_opts *o, struct iop_frame_enc *e,
                         uint64_t now_real_ns, uint64_t real0_ns)
{
	uint64_t end = real0_ns + due_ns(r, o);
	if (r->done || end <= now_real_ns || end - r->ahead.dur_ns > now_real_ns)
		return;
	struct iop_inflight f = {.start_ns = end - r->ahead.dur_ns,
	                         .bytes = r->ahead.flags & IOP_EV_BYTES ? r->ahead.bytes : 0,
	                         .thread = r->ahead.thread,
	                         .file = r->ahead.file,
	                         .layer = r->ahead.layer,
	                         .op = r->ahead.op};
	if (iop_enc_inflight(e, &f) == IOP_OK)
		r->inflight++;
}

static enum iop_err add_names(struct lg_rank *r, struct iop_frame_enc *e, struct lg_built *b)
{
	enum iop_err err = IOP_OK;
	if (!r->host_announced) {
		struct iop_name host = {.kind = IOP_NAME_HOST,
		                        .id = LG_HOST_ID,
		                        .hash = iop_hash_str(r->host),
		                        .text = r->host,
		                        .len = (uint32_t)strlen(r->host)};
		err = iop_enc_name(e, &host);
		b->host = err == IOP_OK;
	}
	uint32_t id = r->announced;
	for (; err == IOP_OK && id < r->wl.n_names; id++) {
		struct iop_name n = r->wl.names[id].name;
		n.id = wire_id(id);
		err = iop_enc_name(e, &n);
	}
	b->names_to = err == IOP_OK ? id : id - 1;
	size_t k = 0;
	for (; err == IOP_OK && k < r->n_dirty; k++) {
		uint32_t i = r->dirty[k];
		const struct lg_cum *c = &r->cum[i];
		struct iop_counter rec = {.file = i / LG_CELLS,
		                          .layer = (uint8_t)(i % LG_CELLS / IOP_CLASS__COUNT),
		                          .cls = (uint8_t)(i % IOP_CLASS__COUNT),
		                          .ops = c->ops,
		                          .bytes = c->bytes,
		                          .time_ns = c->time_ns,
		                          .errors = c->errors};
		err = iop_enc_counter(e, &rec);
	}
	b->counters = err == IOP_OK ? k : k - 1;
	return err;
}

enum iop_err lg_rank_build(struct lg_rank *r, const struct lg_opts *o, uint8_t *buf, bool final,
                           uint64_t now_real_ns, uint64_t real0_ns, struct lg_built *b)
{
	struct iop_frame_hdr h = {.job_id = o->job_id,
	                          .seq = r->seq,
	                          .base_ns = r->n_stage ? r->stage[0].end_ns : now_real_ns,
	                          .node_id = r->node_id,
	                          .rank = r->rank,
	                          .pid = r->pid};
	struct iop_stats st = {
	    .events = r->events, .dropped = r->dropped, .send_failures = r->refused};
	struct iop_frame_enc e;
	memset(b, 0, sizeof *b);
	enum iop_err err = iop_enc_begin(&e, buf, LG_FRAME_CAP, &h, &st);
	if (err == IOP_OK)
		err = add_names(r, &e, b);
	if (err == IOP_OK)
		add_inflight(r, o, &e, now_real_ns, real0_ns);
	size_t n = 0;
	while (err == IOP_OK && n < r->n_stage && n < LG_FRAME_EVENTS &&
	       (err = iop_enc_event(&e, &r->stage[n])) == IOP_OK)
		n++;
	b->events = n;
	if (err != IOP_OK && err != IOP_ERR_FULL)
		return err;
	bool everything = (r->host_announced || b->host) && b->names_to == r->wl.n_names &&
	                  b->counters == r->n_dirty && n == r->n_stage;
	b->final = final && everything;
	if (b->final && (err = iop_enc_set_flags(&e, IOP_FRAME_FINAL)) != IOP_OK)
		return err;
	return iop_enc_finish(&e, &o->key, &b->len);
}

static void unstage(struct lg_rank *r, size_t n)
{
	memmove(r->stage, r->stage + n, (r->n_stage - n) * sizeof *r->stage);
	r->n_stage -= n;
}

void lg_rank_commit(struct lg_rank *r, const struct lg_built *b)
{
	r->announced = b->names_to;
	r->host_announced |= b->host;
	for (size_t k = 0; k < b->counters; k++)
		r->cum[r->dirty[k]].dirty = false;
	memmove(r->dirty, r->dirty + b->counters, (r->n_dirty - b->counters) * sizeof *r->dirty);
	r->n_dirty -= b->counters;
	for (size_t i = 0; i < b->events; i++) {
		const struct iop_event *ev = &r->stage[i];
		unsigned l = ev->layer, c = iop_op_class(ev->op);
		r->sent.ops[l][c]++;
		r->sent.bytes[l][c] += ev->flags & IOP_EV_BYTES ? ev->bytes : 0;
		r->sent.errors[l][c] += (ev->flags & IOP_EV_ERROR) != 0;
	}
	r->events_sent += b->events;
	unstage(r, b->events);
	r->seq++;
	r->frames++;
	r->wire_bytes += b->len;
	r->final_sent |= b->final;
}

void lg_rank_resync(struct lg_rank *r)
{
	r->announced = 1;
	r->host_announced = false;
	for (uint32_t i = 0; i < r->cum_files * LG_CELLS; i++) {
		struct lg_cum *c = &r->cum[i];
		if (!c->ops || c->dirty)
			continue;
		uint32_t *d = grow(r->dirty, &r->cap_dirty, r->n_dirty + 1, sizeof *d);
		if (!d)
			return; /* out of memory: those counters wait for the next change */
		r->dirty = d;
		d[r->n_dirty++] = i;
		c->dirty = true;
	}
}

void lg_rank_refused(struct lg_rank *r, const struct lg_built *b)
{
	r->refused++;
	r->dropped += b->events;
	unstage(r, b->events);
	lg_rank_resync(r);
}
