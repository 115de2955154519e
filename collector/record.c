/* The root's recording. See record.h. */
#include "record.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "auth.h"
#include "clock.h"
#include "frame.h"
#include "keyframe.h"
#include "rec.h"
#include "rec_hold.h"
#include "rec_io.h"
#include "rec_view.h"
#include "hash.h"
#include "snapshot.h"

#define KEYFRAME_EVERY_NS (60 * 1000000000ull)
#define KEYFRAME_DELTA_SHARE 1  /* a keyframe waits for its own bytes of DELTAs */
#define KEYFRAME_MAX_PERIODS 10 /* or for 10 periods */
/* A lean recording's DELTAs are cheap to apply: its keyframes wait for
 * 8 times their bytes of DELTAs, or an hour. */
#define LEAN_KEYFRAME_DELTA_SHARE 8
#define LEAN_KEYFRAME_MAX_PERIODS 60
/* The default's (view): 4 times their bytes, or half an hour: 27 % of a
 * 16-rank hour's file (at 1, 53 %; docs/recording.md). */
#define VIEW_KEYFRAME_DELTA_SHARE 4
#define VIEW_KEYFRAME_MAX_PERIODS 30

struct coll_record {
	char *path;
	struct rec_io *io;
	struct rec_writer *w;
	uint8_t *buf;
	size_t cap;
	bool failed;
	struct coll_record_opts opts;
	uint64_t last_key_ns; /* end of the tick of the last keyframe; 0: no tick yet */
	bool spaced;          /* the default period: keyframes spaced by cost too */
	size_t key_bytes;     /* the last keyframe's bytes */
	uint64_t delta_bytes; /* DELTA bytes since */
	uint8_t *kf, *part;   /* a keyframe, and one frame's payload of it */
	size_t kf_cap;
	struct coll_record_stats st;
	/* a lean recording (record.h): detail_every > 1; the default: view_cap */
	uint32_t view_cap;         /* 0: not the default (lean or full) */
	struct rec_named named;    /* files alerts named (view) */
	struct rec_named named_ranks; /* ranks alerts named (view) */
	uint32_t rank_cap;         /* view: ranks a tick kept whole */
	bool big;                  /* view: a tick was above rank_cap; counters held back */
	bool flush_now;            /* a keyframe follows this tick: counters go out */
	struct coll_state shadow;  /* the state a reader builds from what was written */
	uint64_t detail_every, counters_every; /* in ticks */
	uint64_t ctr_tokens;       /* counters that may go out now (lean_view) */
	struct coll_tick lean;     /* the rows written */
	struct coll_tick excl;     /* RANK rows' exclusive time not written yet */
	struct coll_ctrset pend;   /* counters not written yet: each one's latest */
	/* The keyframe being encoded beside the loop (key_start()): of the
	 * state after tick key_t, written at key_time_ns once the child is
	 * done, then every record held meanwhile, in order. */
	struct coll_snapshot snap;
	bool key_pending;
	bool key_in_loop;          /* a child overran, or opts: encode in the loop */
	int64_t key_t;
	uint64_t key_time_ns, key_started_ns;
	struct rec_hold hold;
};

/* A keyframe's child that has not finished in this long is taken for
 * stuck (killed, that keyframe skipped, later ones encoded in the loop);
 * records held past this many bytes end the wait the same way. */
#define KEY_CHILD_MAX_NS (120 * 1000000000ull)
#define HOLD_MAX         ((size_t)256 << 20)

static bool lean(const struct coll_record *r)
{
	return r->detail_every > 1;
}

/* Lean and default ("view") recordings keep the state a reader builds. */
static bool shadowed(const struct coll_record *r)
{
	return lean(r) || r->view_cap;
}

static void report(struct coll_record *r, enum iop_err e)
{
	if (r->failed)
		return;
	r->failed = true;
	struct rec_writer_stats st;
	rec_writer_stats(r->w, &st);
	fprintf(stderr,
	        "iopulse: recording to %s stopped: %s%s%s; the job goes on, and what was recorded "
	        "stays readable\n",
	        r->path, iop_strerror(e), st.sys_errno ? ": " : "",
	        st.sys_errno ? strerror(st.sys_errno) : "");
}

struct coll_record *coll_record_open(const char *path, const struct coll_job_info *job)
{
	return coll_record_open_opts(path, job, NULL);
}

struct coll_record *coll_record_open_opts(const char *path, const struct coll_job_info *job,
                                          const struct coll_record_opts *opts)
{
	struct coll_record *r = calloc(1, sizeof(*r));
	if (!r || !(r->path = strdup(path))) {
		free(r);
		fprintf(stderr, "iopulse: cannot record: out of memory\n");
		return NULL;
	}
	r->snap = (struct coll_snapshot)COLL_SNAPSHOT_INIT;
	if (opts)
		r->opts = *opts;
	r->key_in_loop = r->opts.keyframe_in_loop;
	if (!r->opts.keyframe_every_ns) {
		r->opts.keyframe_every_ns = KEYFRAME_EVERY_NS;
		r->spaced = true;
	}
	if (!r->opts.keyframe_part_max || r->opts.keyframe_part_max > REC_PAYLOAD_MAX - COLL_REC_KEYFRAME_HDR)
		r->opts.keyframe_part_max = REC_PAYLOAD_MAX - COLL_REC_KEYFRAME_HDR;
	uint64_t tick = job->tick_ns ? job->tick_ns : 1000000000ull;
	if (!r->opts.detail_ns) {
		r->view_cap = r->opts.view_cap ? r->opts.view_cap : COLL_REC_VIEW_CAP;
		r->rank_cap = r->opts.rank_cap ? r->opts.rank_cap : COLL_REC_RANK_CAP;
		r->opts.detail_ns = UINT64_MAX;
	}
	if (!r->opts.counters_ns)
		r->opts.counters_ns = r->view_cap ? COLL_RECORD_BIG_COUNTERS_NS : COLL_RECORD_COUNTERS_NS;
	r->detail_every = r->opts.detail_ns == UINT64_MAX ? 1 : r->opts.detail_ns / tick;
	if (r->detail_every < 1)
		r->detail_every = 1;
	r->counters_every = r->opts.counters_ns / tick ? r->opts.counters_ns / tick : 1;
	char id[17], start[32], host[256] = "";
	snprintf(id, sizeof id, "%016" PRIx64, job->id);
	coll_iso_time(job->start_ns, start, sizeof start);
	gethostname(host, sizeof host - 1);
	json_t *meta = json_pack(
		"{s:i,s:i,s:i,s:s,s:s,s:s,s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:s}", "v", 1, "delta_version",
		COLL_DELTA_VERSION, "keyframe_version", COLL_KEYFRAME_VERSION, "job", id, "start",
		start, "command", job->command ? job->command : "", "host", host, "tick_ns",
		(json_int_t)job->tick_ns, "keyframe_every_ns",
		(json_int_t)(r->opts.keyframe_every_ns == UINT64_MAX ? 0 : r->opts.keyframe_every_ns),
		"history_bytes", (json_int_t)job->history_bytes, "detail_ns",
		(json_int_t)(lean(r) ? r->detail_every * tick : 0), "view_cap", (json_int_t)r->view_cap,
		"rank_cap", (json_int_t)r->rank_cap,
		"payloads",
		"DELTA: tick delta body (docs/collector.md); with detail_ns, the ticks between whole ones hold their LAYER rows; with view_cap, FILE and SITE rows beyond that many a tick fold into 'other' rows; with rank_cap, above that many ranks a tick, RANK rows of the ranks not kept fold into per-node rows and the tick carries the ranks' distribution; ALERT: alert JSON; KEYFRAME: the window "
		"state after the DELTA before it, in parts (docs/recording.md)");
	char *text = meta ? json_dumps(meta, JSON_COMPACT) : NULL;
	json_decref(meta);
	errno = 0;
	enum iop_err e = text ? rec_io_file_create(path, &r->io) : IOP_ERR_NOMEM;
	struct rec_writer_opts wopts = {.job_id = job->id, .start_ns = job->start_ns};
	if (!e)
		e = rec_writer_open(r->io, &wopts, text, strlen(text), &r->w);
	int err = errno; /* the system's reason, when there is one, says it best */
	free(text);
	if (e) {
		fprintf(stderr, "iopulse: cannot record to %s: %s\n", path,
		        err ? strerror(err) : iop_strerror(e));
		if (r->io)
			rec_io_close(r->io);
		free(r->path);
		free(r);
		return NULL;
	}
	if (shadowed(r)) {
		struct coll_history_cfg h;
		coll_history_cfg_default(&h, job->tick_ns);
		if (job->history_bytes)
			h.max_bytes = job->history_bytes;
		coll_state_init(&r->shadow, job->tick_ns, &h);
		coll_tick_init(&r->lean, 0, job->tick_ns);
		coll_tick_init(&r->excl, 0, job->tick_ns);
	}
	return r;
}

void coll_record_tick(struct coll_record *r, const struct coll_delta *d)
{
	coll_record_tick_state(r, d, NULL);
}

/* Writes an encoded keyframe (of the state after tick t) as one or more
 * KEYFRAME frames at time_ns. */
static enum iop_err write_keyframe_bytes(struct coll_record *r, const uint8_t *kf, size_t len,
                                         int64_t t, uint64_t time_ns)
{
	size_t per = r->opts.keyframe_part_max;
	size_t parts = (len + per - 1) / per;
	if (parts > COLL_REC_KEYFRAME_PARTS) {
		r->st.keyframes_skipped++;
		return IOP_OK;
	}
	if (!r->part && !(r->part = malloc(per + COLL_REC_KEYFRAME_HDR)))
		return IOP_ERR_NOMEM;
	for (size_t i = 0; i < parts; i++) {
		size_t at = i * per, n = len - at < per ? len - at : per;
		struct iop_wcur c = iop_wcur_make(r->part, per + COLL_REC_KEYFRAME_HDR);
		iop_put_u8(&c, COLL_REC_KEYFRAME_LAYOUT);
		iop_put_svarint(&c, t);
		iop_put_varint(&c, i);
		iop_put_varint(&c, parts);
		iop_put_varint(&c, len);
		iop_put_bytes(&c, kf + at, n);
		enum iop_err e = c.err;
		if (!e)
			e = rec_write(r->w, REC_KEYFRAME, time_ns, r->part, (size_t)(c.p - r->part));
		if (e)
			return e;
	}
	r->st.keyframes++;
	r->st.keyframe_frames += parts;
	r->st.keyframe_bytes = len;
	r->key_bytes = len;
	return IOP_OK;
}

/* A record: written, or held while a keyframe is encoded beside the loop
 * (written after it, in order). What cannot be held waits for the
 * keyframe. */
static enum iop_err put(struct coll_record *r, enum rec_type type, uint64_t time_ns,
                        const void *payload, size_t len);

static void fill_keyframe(const void *arg, struct iop_wcur *c)
{
	coll_state_encode_keyframe_cur(arg, c);
}

/* The keyframe beside the loop, once its child is done (wait: waiting for
 * it): written, then what was held meanwhile. A child that failed, or
 * overran, skips that keyframe: a reader then starts from the one before
 * (docs/recording.md); the recording goes on. */
static enum iop_err key_settle(struct coll_record *r, bool wait)
{
	if (!r->key_pending)
		return IOP_OK;
	const uint8_t *kf = NULL;
	size_t len = 0;
	bool overrun = !wait && (iop_mono_ns() - r->key_started_ns >= KEY_CHILD_MAX_NS ||
	                         r->hold.len > HOLD_MAX);
	enum iop_err e = overrun ? IOP_ERR_TIMEOUT : coll_snapshot_collect(&r->snap, wait, &kf, &len);
	if (e == IOP_ERR_TIMEOUT && !overrun)
		return IOP_OK; /* not done yet */
	r->key_pending = false;
	enum iop_err we = IOP_OK;
	if (!e) {
		r->st.keyframes_beside++;
		we = write_keyframe_bytes(r, kf, len, r->key_t, r->key_time_ns);
	} else {
		r->st.keyframes_skipped++;
		coll_snapshot_free(&r->snap); /* kills it, if it still runs */
		if (overrun)
			r->key_in_loop = true;
	}
	if (r->hold.count > r->st.records_held_max)
		r->st.records_held_max = r->hold.count;
	enum iop_err he = rec_hold_write(&r->hold, r->w);
	return we ? we : he;
}

/* The keyframe of s (the state after tick t), at time_ns: encoded by a
 * forked child (snapshot.h) while the loop goes on, or here when none
 * can be started. Encoding a large state takes long (0.4 s for one
 * process writing 1500 files at 100 ms ticks; seconds at 1024 ranks), and
 * in `iopulse run` the loop is also the leaf's, whose frames would wait
 * (docs/recording.md, "Keyframes beside the loop"). */
static enum iop_err key_start(struct coll_record *r, const struct coll_state *s, int64_t t,
                              uint64_t time_ns)
{
	enum iop_err e = key_settle(r, true); /* one at a time */
	if (e)
		return e;
	if (!r->key_in_loop &&
	    coll_snapshot_start(&r->snap, COLL_REC_KEYFRAME_MAX, fill_keyframe, s) == IOP_OK) {
		r->key_pending = true;
		r->key_t = t;
		r->key_time_ns = time_ns;
		r->key_started_ns = iop_mono_ns();
		return IOP_OK;
	}
	size_t len;
	if (coll_state_encode_keyframe(s, COLL_REC_KEYFRAME_MAX, &r->kf, &r->kf_cap, &len)) {
		r->st.keyframes_skipped++;
		return IOP_OK;
	}
	return write_keyframe_bytes(r, r->kf, len, t, time_ns);
}

static enum iop_err put(struct coll_record *r, enum rec_type type, uint64_t time_ns,
                        const void *payload, size_t len)
{
	enum iop_err e = key_settle(r, false);
	if (!e && r->key_pending && rec_hold_add(&r->hold, type, time_ns, payload, len) == IOP_OK)
		return IOP_OK;
	if (!e)
		e = key_settle(r, true);
	return e ? e : rec_write(r->w, type, time_ns, payload, len);
}

/* Counters held back past this many are written at the next tick. */
#define LEAN_PENDING_MAX (1u << 16)

/* Whether a process ended or went in d: its last rows and counters. */
static bool procs_end(const struct coll_delta *d)
{
	for (uint32_t i = 0; i < d->n_procs; i++)
		if (d->procs[i].state != COLL_PROC_JOINED)
			return true;
	return false;
}

/* The delta a lean or default recording writes for d (record.h), as a
 * view of d: it shares d's names, processes and monitor counts, and r's
 * rows and counters. *flush: it carries the counters held back. */
struct node_of {
	const struct coll_state *s;
	const struct coll_delta *d;
};

/* A rank's node: from the processes the state knows, else from those
 * that joined in this tick's delta; 0 when neither says. */
static uint32_t node_of(void *arg, uint32_t rank)
{
	const struct node_of *x = arg;
	if (rank < x->s->n_ranks && x->s->ranks[rank].procs)
		return (uint32_t)x->s->ranks[rank].node;
	for (uint32_t i = 0; i < x->d->n_procs; i++)
		if (x->d->procs[i].rank == rank)
			return x->d->procs[i].node;
	return 0;
}

/* Whether d's tick may have more than cap ranks: more ranks known (the
 * state's and those joining in d: a rank's rows come from a process that
 * joined) and more RANK rows. Else the fold (a copy of the tick, every
 * rank's histograms merged) is not tried. */
static bool ranks_may_pass(const struct coll_record *r, const struct coll_delta *d, uint32_t cap)
{
	uint32_t known = coll_state_ranks_seen(&r->shadow);
	for (uint32_t i = 0; i < d->n_procs && known <= cap; i++)
		known += d->procs[i].state == COLL_PROC_JOINED;
	if (known <= cap)
		return false;
	uint32_t n = 0;
	for (uint32_t i = 0; i < d->tick.n && n <= cap; i++)
		n += d->tick.key[i].kind == COLL_ROW_RANK;
	return n > cap;
}

/* Counters held back (lean, and the default above its rank cap): each
 * one's latest value waits in r->pend; they all go out as soon as they
 * are few (a counter for every two ranks and tick, saved up over a
 * period), else once a period (r->counters_every ticks), and in a tick
 * where a process ends. v->ctr := what goes out with d. */
static enum iop_err hold_counters(struct coll_record *r, const struct coll_delta *d,
                                  struct coll_delta *v, bool *flush)
{
	int64_t t = d->tick.t;
	enum iop_err e = coll_ctrset_add_all(&r->pend, d->ctr.v, d->ctr.n, COLL_STATE_MAX_COUNTERS);
	uint64_t ranks = coll_state_ranks_seen(&r->shadow), cap = ranks * r->counters_every / 2;
	r->ctr_tokens += ranks > 1 ? ranks / 2 : 1;
	if (r->ctr_tokens > cap)
		r->ctr_tokens = cap;
	*flush = e || r->pend.n >= LEAN_PENDING_MAX || (t + 1) % r->counters_every == 0 ||
	         r->pend.n <= r->ctr_tokens || procs_end(d) || r->flush_now;
	if (*flush)
		r->ctr_tokens -= r->pend.n < r->ctr_tokens ? r->pend.n : r->ctr_tokens;
	v->ctr = *flush ? r->pend : (struct coll_ctrset){0};
	return e;
}

static enum iop_err written_view(struct coll_record *r, const struct coll_delta *d,
                                 struct coll_delta *v, bool *flush)
{
	if (r->view_cap) { /* the default: every tick, files, sites and ranks folded */
		*v = *d;
		bool files = rec_view_over(&d->tick, r->view_cap);
		bool ranks = ranks_may_pass(r, d, r->rank_cap); /* may be: the fold counts */
		enum iop_err e = IOP_OK;
		if (files || ranks) {
			coll_tick_reset(&r->lean, d->tick.t);
			e = coll_tick_copy(&r->lean, &d->tick);
			if (!e && files)
				e = rec_view_fold(&r->lean, r->view_cap, &r->named);
			struct node_of x = {&r->shadow, d};
			if (!e && ranks)
				e = rec_view_fold_ranks(&r->lean, r->rank_cap, &r->named_ranks, node_of, &x,
				                        &v->dist);
			if (!e)
				v->tick = r->lean;
		}
		/* once a tick's ranks were folded (more than the cap), the
		 * counters (every rank's) are held back from then on: written
		 * once a minute at most, or when few */
		r->big = r->big || v->dist.ranks;
		enum iop_err e2 = r->big ? hold_counters(r, d, v, flush) : IOP_OK;
		return e ? e : e2;
	}
	int64_t t = d->tick.t;
	bool whole = procs_end(d) || (t + 1) % r->detail_every == 0;
	*v = *d;
	enum iop_err e = hold_counters(r, d, v, flush);
	coll_tick_reset(&r->lean, t);
	enum iop_err e2 = IOP_OK;
	if (whole && r->excl.n == 0)
		return e; /* d's own rows */
	if (whole)
		e2 = coll_tick_copy(&r->lean, &d->tick);
	/* a lean tick: the LAYER rows; each RANK row's exclusive time and
	 * wait wait for the next whole tick, so that each rank's I/O time
	 * and wait add up */
	struct coll_tick *to = whole ? &r->lean : &r->excl;
	const struct coll_tick *from = whole ? &r->excl : &d->tick;
	for (uint32_t i = 0; !e2 && i < from->n; i++) {
		const struct coll_key *k = &from->key[i];
		struct coll_cell *c;
		if (k->kind == COLL_ROW_RANK &&
		    (from->cell[i].excl_ns || from->cell[i].wait_ns || whole) &&
		    !(e2 = coll_tick_row(to, k, &c))) {
			c->excl_ns += from->cell[i].excl_ns;
			c->wait_ns += from->cell[i].wait_ns;
		}
		if (!whole && k->kind == COLL_ROW_LAYER && !(e2 = coll_tick_row(&r->lean, k, &c)))
			e2 = coll_cell_merge(c, &from->cell[i]);
	}
	if (whole && !e2)
		coll_tick_reset(&r->excl, t);
	v->tick = r->lean;
	return e ? e : e2;
}

/* Whether a keyframe follows the tick ending at end_ns: at every multiple
 * of the period the ticks cross, the first one a period after the first
 * tick; spaced by cost (record.h) by the DELTA bytes written since the
 * last keyframe, before this tick's. */
static bool key_due(const struct coll_record *r, uint64_t end_ns, bool states)
{
	uint64_t every = r->opts.keyframe_every_ns;
	if (!states || every == UINT64_MAX || !r->last_key_ns)
		return false;
	bool due = end_ns / every > r->last_key_ns / every;
	double share = lean(r)       ? LEAN_KEYFRAME_DELTA_SHARE
	               : r->view_cap ? VIEW_KEYFRAME_DELTA_SHARE
	                             : KEYFRAME_DELTA_SHARE;
	uint64_t periods = lean(r)       ? LEAN_KEYFRAME_MAX_PERIODS
	                   : r->view_cap ? VIEW_KEYFRAME_MAX_PERIODS
	                                 : KEYFRAME_MAX_PERIODS;
	if (r->opts.keyframe_share > 0)
		share = r->opts.keyframe_share;
	if (r->opts.keyframe_periods)
		periods = r->opts.keyframe_periods;
	if (due && r->spaced && r->key_bytes && (double)r->delta_bytes < (double)r->key_bytes * share &&
	    end_ns - r->last_key_ns < periods * every)
		due = false;
	return due;
}

void coll_record_tick_state(struct coll_record *r, const struct coll_delta *d,
                            const struct coll_state *s)
{
	if (!r || r->failed)
		return;
	size_t len;
	uint64_t end_ns = (uint64_t)(d->tick.t + 1) * d->tick.tick_ns;
	struct coll_delta view;
	bool flush = false;
	/* a keyframe after this tick? Decided before its DELTA is written, so
	 * that the DELTA carries every counter held back and the keyframe's
	 * totals are exact */
	bool key = key_due(r, end_ns, s != NULL);
	r->flush_now = key && r->view_cap;
	if (shadowed(r)) {
		(void)written_view(r, d, &view, &flush);
		d = &view;
	}
	enum iop_err e = coll_delta_encode_body_buf(d, REC_PAYLOAD_MAX, &r->buf, &r->cap, &len);
	if (!e && shadowed(r)) {
		(void)coll_state_apply(&r->shadow, d);
		s = s ? &r->shadow : NULL;
		if (flush)
			coll_ctrset_clear(&r->pend);
	}
	if (!e)
		e = put(r, REC_DELTA, end_ns, r->buf, len);
	if (!e)
		r->delta_bytes += len;
	if (!e && s && !r->last_key_ns)
		r->last_key_ns = end_ns;
	else if (!e && key) {
		e = key_start(r, s, d->tick.t, end_ns);
		r->last_key_ns = end_ns;
		r->delta_bytes = 0;
	}
	if (!e)
		e = rec_flush(r->w);
	if (e)
		report(r, e);
}

void coll_record_stats(const struct coll_record *r, struct coll_record_stats *st)
{
	*st = r->st;
}

/* The rank and the file an alert names, kept whole in the default
 * recording's ticks from now on: the file by its path, or "0x..." when no
 * name came. */
static void name_subject(struct coll_record *r, json_t *alert)
{
	const char *f = json_string_value(json_object_get(alert, "file"));
	json_t *rank = json_object_get(alert, "rank");
	if (r->view_cap && json_is_integer(rank) && json_integer_value(rank) >= 0 &&
	    json_integer_value(rank) < COLL_RANK_NONE)
		(void)rec_named_add(&r->named_ranks, (uint64_t)json_integer_value(rank));
	if (!r->view_cap || !f)
		return;
	uint64_t id = strncmp(f, "0x", 2) == 0 ? strtoull(f + 2, NULL, 16) : iop_hash_str(f);
	(void)rec_named_add(&r->named, id); /* out of memory: it may fold, totals stay */
}

void coll_record_alert(struct coll_record *r, uint64_t t_ns, json_t *alert)
{
	if (!r || r->failed || !alert)
		return;
	name_subject(r, alert);
	char *text = json_dumps(alert, JSON_COMPACT | JSON_REAL_PRECISION(16));
	enum iop_err e = text ? put(r, REC_ALERT, t_ns, text, strlen(text)) : IOP_ERR_NOMEM;
	free(text);
	if (e)
		report(r, e);
}

void coll_record_events(struct coll_record *r, uint64_t t_ns, const uint8_t *frame, size_t len)
{
	if (!r || r->failed || len < IOP_FRAME_OVERHEAD || len > IOP_FRAME_MAX_LEN)
		return;
	if (r->cap < len) {
		uint8_t *b = realloc(r->buf, len);
		if (!b)
			return;
		r->buf = b;
		r->cap = len;
	}
	memcpy(r->buf, frame, len);
	static const struct iop_key zero;
	size_t body = len - IOP_MAC_BYTES;
	enum iop_err e = iop_mac(&zero, r->buf, body, r->buf + body);
	if (!e)
		e = put(r, REC_EVENTS, t_ns, r->buf, len);
	if (e)
		report(r, e);
}

void coll_record_close(struct coll_record *r)
{
	if (!r)
		return;
	enum iop_err e = r->failed ? IOP_OK : key_settle(r, true);
	if (e)
		report(r, e);
	coll_snapshot_free(&r->snap);
	rec_hold_free(&r->hold);
	e = rec_close(r->w);
	if (e && !r->failed)
		fprintf(stderr, "iopulse: closing the recording %s: %s\n", r->path, iop_strerror(e));
	rec_io_close(r->io);
	free(r->buf);
	free(r->kf);
	free(r->part);
	free(r->path);
	rec_named_free(&r->named);
	rec_named_free(&r->named_ranks);
	if (shadowed(r)) {
		coll_state_free(&r->shadow);
		coll_tick_free(&r->lean);
		coll_tick_free(&r->excl);
	}
	coll_ctrset_free(&r->pend);
	free(r);
}
