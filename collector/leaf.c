/* The leaf's intake: checks frames, keeps per-process state (proc.c) and
 * fills the open ticks' deltas. See leaf.h. */
#include "leaf.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "events.h"
#include "frame.h"
#include "fsmap.h"
#include "hash.h"
#include "latlog.h"
#include "probe.h"
#include "proc.h"

#define RING 64 /* open ticks at most; events further ahead are clamped */
#define MEMO_BITS 5
#define MEMO      (1 << MEMO_BITS) /* rows_memo entries (a hash's top MEMO_BITS pick one) */
#define RUN_BUCKETS     256   /* a long run's histogram buckets held (frame.h), on average */
#define RUN_BUCKETS_MAX 65536 /* at most, whatever the frame (256 KiB) */
#define DIRECT 4  /* calls of an entry added to its rows directly, before its acc */

/* What one call adds to each of its rows. */
struct call {
	const struct iop_event *ev;
	uint64_t excl_ns;
	unsigned bucket; /* of its latency in the histograms */
	bool seq_known;           /* a data call with an offset, on a named file: */
	enum coll_pattern pattern; /* its access pattern (pattern.h) */
};

struct coll_leaf {
	struct coll_leaf_cfg cfg;
	struct coll_names names;     /* every name seen; .sent once in a delta */
	struct iop_mounts mounts;    /* the node's, for files' file systems (fsmap.h) */
	struct iop_node_probe *probe; /* the node's own figures each tick (node/probe.h) */
	uint32_t node_id;             /* this host's, as the shim computes it */
	bool node_heard;              /* a process of this host has sent to it */
	struct coll_delta ring[RING]; /* tick t lives in ring[t % RING] */
	struct latlog lat[RING];      /* and its FILE rows' latencies held back */
	int64_t oldest;              /* oldest open tick */
	int64_t memo_t;              /* event_tick(): the last tick found, */
	uint64_t memo_lo;            /* and its start */
	struct coll_delta *ev_d;     /* event_delta(): the last delta found (NULL: */
	uint64_t ev_lo;              /* none since a tick closed), the start of */
	bool ev_late;                /* the tick it was found for, and late */
	struct proc_table procs;
	struct proc_rowc layer_row[4][4]; /* cached_row() entries of the LAYER rows */
	uint32_t frame_gen;               /* frames taken: rows_memo entries' age */
	struct rows_memo {                /* an event's rows, for the next like it */
		struct coll_delta *d;     /* the tick they are in */
		uint32_t gen;             /* frame_gen of its frame (0: none yet) */
		uint32_t file, site;      /* name ids (the frame's process's) */
		uint8_t layer, cls, n;    /* n rows: RANK, FILE?, SITE? */
		bool named;               /* the file id has a name */
		uint32_t row[3];
		uint32_t calls;           /* calls seen since found */
		struct coll_cell acc;     /* calls not yet added to the rows */
		struct proc_counter *pc;  /* the counter its patterns go to (proc.h), */
		const void *pc_of;        /* for the process's counters at */
		uint32_t pc_slots;        /* this place and size; NULL: none yet */
	} memo[MEMO];
	uint32_t *acc_buckets; /* the accs' histograms: IOP_HIST_BUCKETS each */
	struct scratch { /* decoded frame, grown to the largest frame seen */
		struct iop_name *names;
		struct iop_counter *counters;
		struct iop_inflight *inflight;
		struct iop_event *events;
		struct coll_counter *grown; /* take_counters(): the counters that grew */
		struct iop_run_whole *runs; /* long runs decoded whole (frame.h) */
		uint32_t *bk;               /* their histograms' buckets */
		struct iop_event *calls;    /* one of them call by call (add_whole) */
		uint32_t n_names, n_counters, n_inflight, n_events, n_grown, n_runs, n_bk, n_calls;
	} scratch;
	struct iop_runs_out runs; /* the frame's long runs, in order */
	uint32_t slots;           /* entries of scratch.events: calls, a long run one */
};

void coll_leaf_cfg_default(struct coll_leaf_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->tick_ns = 1000000000ull;
	cfg->grace_ns = 250000000ull;
	cfg->gone_ns = 5000000000ull;
	cfg->max_files = COLL_LEAF_MAX_FILES;
}

static int64_t tick_of(const struct coll_leaf *l, uint64_t ns)
{
	return (int64_t)(ns / l->cfg.tick_ns);
}

/* tick_of for events: nearly all fall in the tick of the one before, and
 * a 64-bit division, three an event, was a tenth of the leaf's time. */
static int64_t event_tick(struct coll_leaf *l, uint64_t ns)
{
	if (ns - l->memo_lo < l->cfg.tick_ns) /* also false below memo_lo */
		return l->memo_t;
	l->memo_t = tick_of(l, ns);
	l->memo_lo = (uint64_t)l->memo_t * l->cfg.tick_ns;
	return l->memo_t;
}

enum iop_err coll_leaf_new(const struct coll_leaf_cfg *cfg, uint64_t now_ns,
                           struct coll_leaf **out)
{
	if (cfg->tick_ns == 0)
		return IOP_ERR_INVAL;
	struct coll_leaf *l = calloc(1, sizeof(*l));
	if (!l)
		return IOP_ERR_NOMEM;
	l->cfg = *cfg;
	coll_names_init(&l->names, 1u << 20, (size_t)256 << 20);
	/* without a mount table (unreadable) files have no file system */
	if (!cfg->no_fs && iop_mounts_read(&l->mounts, cfg->mountinfo, NULL) != IOP_OK)
		iop_mounts_free(&l->mounts);
	char host[256] = "";
	if (!cfg->no_fs && !gethostname(host, sizeof host - 1) &&
	    iop_node_probe_new(cfg->proc, &l->probe) == IOP_OK)
		l->node_id = (uint32_t)iop_hash_str(host);
	l->oldest = tick_of(l, now_ns > cfg->grace_ns ? now_ns - cfg->grace_ns : 0);
	l->memo_t = l->oldest;
	l->memo_lo = (uint64_t)l->oldest * cfg->tick_ns;
	for (int i = 0; i < RING; i++)
		coll_delta_init(&l->ring[i], l->oldest + i, cfg->tick_ns);
	for (int64_t t = l->oldest; t < l->oldest + RING; t++)
		l->ring[t % RING].tick.t = t;
	l->acc_buckets = calloc((size_t)MEMO * IOP_HIST_BUCKETS, sizeof(*l->acc_buckets));
	if (!l->acc_buckets) {
		coll_leaf_free(l);
		return IOP_ERR_NOMEM;
	}
	for (int i = 0; i < MEMO; i++) {
		/* every bucket stored: recording into it never allocates */
		struct iop_hist *h = &l->memo[i].acc.hist;
		h->bucket = l->acc_buckets + (size_t)i * IOP_HIST_BUCKETS;
		h->lo = 0;
		h->hi = IOP_HIST_BUCKETS;
		h->borrowed = 1;
	}
	*out = l;
	return IOP_OK;
}

void coll_leaf_free(struct coll_leaf *l)
{
	if (!l)
		return;
	for (int i = 0; i < RING; i++) {
		coll_delta_free(&l->ring[i]);
		latlog_free(&l->lat[i]);
	}
	proc_table_free(&l->procs);
	free(l->scratch.names);
	free(l->scratch.counters);
	free(l->scratch.inflight);
	free(l->scratch.events);
	free(l->scratch.grown);
	free(l->scratch.runs);
	free(l->scratch.bk);
	free(l->scratch.calls);
	free(l->acc_buckets);
	coll_names_free(&l->names);
	iop_mounts_free(&l->mounts);
	iop_node_probe_free(l->probe);
	free(l);
}

/* The delta an event ending at ns goes to; *late when its tick has closed. */
static struct coll_delta *delta_at(struct coll_leaf *l, uint64_t ns, bool *late)
{
	int64_t t = event_tick(l, ns);
	*late = t < l->oldest;
	if (*late)
		t = l->oldest;
	if (t >= l->oldest + RING)
		t = l->oldest + RING - 1; /* a clock far ahead: keep it in range */
	return &l->ring[(uint64_t)t % RING]; /* t >= 0: a mask, not a signed division */
}

/* delta_at for the events of frames: the tick of the event before, with
 * the same delta and lateness, needs one comparison (until a tick closes). */
static struct coll_delta *event_delta(struct coll_leaf *l, uint64_t ns, bool *late)
{
	if (l->ev_d && ns - l->ev_lo < l->cfg.tick_ns) {
		*late = l->ev_late;
		return l->ev_d;
	}
	l->ev_d = delta_at(l, ns, late);
	l->ev_lo = l->memo_lo; /* of ns's tick: any ns in it finds the same */
	l->ev_late = *late;
	return l->ev_d;
}

/* The newest tick that has started by now: where arrivals are counted. */
static struct coll_delta *delta_now(struct coll_leaf *l, uint64_t now_ns)
{
	bool late;
	return delta_at(l, now_ns, &late);
}

/* The oldest open tick's delta: where a new name or a process joining
 * goes, so that it reaches the root with the first tick whose rows can use
 * it (a frame arriving in tick t + 1 often carries events of tick t, still
 * in its grace: put in delta_now(), the name came a tick after its rows,
 * and those rows were shown, replayed and exported without it). */
static struct coll_delta *delta_first(struct coll_leaf *l)
{
	return &l->ring[l->oldest % RING];
}

/* A spooled file's image began this long after the first frame of the
 * image the leaf has: a later image (an exec), not a clock's error between
 * the shim's start and its events' stamps. */
#define SPOOL_IMAGE_SLACK_NS 20000u

/* ---- processes ---- */

static void proc_event(struct coll_leaf *l, const struct proc *p, uint8_t state, uint64_t now_ns)
{
	struct coll_proc rec = {.t_ns = now_ns, .rank = p->rank, .node = p->node, .pid = p->pid,
	                        .state = state};
	(void)coll_delta_add_proc(state == COLL_PROC_JOINED ? delta_first(l) : delta_now(l, now_ns),
	                          &rec);
}

/* Whether this frame comes next for its process. After a FINAL frame (an
 * exec) or a silence taken for death, a frame with sequence 0 is a new
 * program image: its ids and counters start afresh; a later sequence is
 * the same image going on (an exec that failed). Anything else not newer
 * than the last frame is a replay and is refused. */
enum seq_verdict { SEQ_REJECT, SEQ_NEXT, SEQ_OVERTAKEN, SEQ_DUPLICATE };

/* SEQ_NEXT: the process's next frame. SEQ_OVERTAKEN: a frame sent before
 * the process's FINAL one that arrived after it (the FINAL frame goes over
 * its own socket): its content is taken, the process stays ended.
 * SEQ_DUPLICATE: a frame the leaf has already (spooled ones, below; the
 * FINAL frame it ended with, again: the same bytes, so the same MAC; a
 * new image's first frame, also sequence 0 and FINAL, has another).
 * SEQ_REJECT: a frame seen before, or older.
 *
 * A spooled frame (image_ns: its file's image start, else 0) is its
 * process's frame as its file's image says: of a later image than the one
 * the leaf has (begun after that one's first frame) it starts it, whatever
 * its sequence (that image's first frames may have been lost); of an
 * earlier one (begun before the last frame of the image before the
 * current) it is refused; of the same one, not above the last frame taken
 * (and not one a FINAL frame overtook), it is a copy. */
static enum seq_verdict accept_seq(struct coll_leaf *l, struct proc *p,
                                   const struct iop_frame_hdr *h, const uint8_t *mac,
                                   uint64_t image_ns, uint64_t now_ns)
{
	if (p->seq == UINT64_MAX) {
		proc_event(l, p, COLL_PROC_JOINED, now_ns);
		p->image_first_ns = h->base_ns;
		return SEQ_NEXT;
	}
	bool overtaken = p->ended && !p->gone && h->seq >= p->overtaken_from && h->seq < p->seq;
	if (image_ns) {
		if (image_ns > p->image_first_ns + SPOOL_IMAGE_SLACK_NS) {
			p->prev_last_ns = p->base_ns;
			proc_restart(p);
			p->rank = h->rank;
			p->image_first_ns = h->base_ns;
			proc_event(l, p, COLL_PROC_JOINED, now_ns);
			return SEQ_NEXT;
		}
		if (p->image && image_ns <= p->prev_last_ns)
			return SEQ_REJECT;
		if (h->seq <= p->seq && !overtaken)
			return SEQ_DUPLICATE;
	}
	if (p->ended && !p->gone && h->seq == p->seq && (h->flags & IOP_FRAME_FINAL) &&
	    memcmp(mac, p->final_mac, IOP_MAC_BYTES) == 0)
		return SEQ_DUPLICATE;
	if (!p->ended && !p->gone)
		return h->seq > p->seq ? SEQ_NEXT : SEQ_REJECT;
	if (overtaken) {
		p->overtaken_from = h->seq + 1; /* frames of one socket come in order */
		return SEQ_OVERTAKEN;
	}
	if (h->seq == 0) {
		p->prev_last_ns = p->base_ns;
		proc_restart(p);
		p->image_first_ns = h->base_ns;
	} else if (h->seq <= p->seq) {
		return SEQ_REJECT;
	}
	p->ended = p->gone = false;
	p->rank = h->rank;
	proc_event(l, p, COLL_PROC_JOINED, now_ns);
	return SEQ_NEXT;
}

/* ---- events ---- */

/* What a call adds to a cell besides its coll_cell_add_sums and its
 * latency. */
static inline void add_rest(struct coll_cell *c, const struct call *k)
{
	const struct iop_event *ev = k->ev;
	c->excl_ns += k->excl_ns;
	c->coll_ops += ev->op == IOP_OP_READ_COLL || ev->op == IOP_OP_WRITE_COLL;
	if (ev->op == IOP_OP_LOCK)
		c->lock_ns += ev->dur_ns;
	if (ev->flags & IOP_EV_CHILDREN) {
		c->child_ops += ev->child_ops;
		c->child_bytes += ev->child_bytes;
	}
	if (k->seq_known) {
		c->off_ops++;
		c->consec_ops += k->pattern == COLL_PAT_CONSEC;
		c->fwd_ops += k->pattern == COLL_PAT_SEQ;
		c->stride_ops += k->pattern == COLL_PAT_STRIDE;
	}
}

static void add_to_cell(struct coll_cell *c, const struct call *k)
{
	const struct iop_event *ev = k->ev;
	coll_cell_add_call_at(c, ev->dur_ns, k->bucket, ev->bytes, ev->flags & IOP_EV_BYTES,
	                      ev->flags & IOP_EV_ERROR);
	add_rest(c, k);
}

/* add_to_cell for FILE row row of a tick whose latencies g holds back
 * (latlog.h): most such rows are folded away when the tick closes. */
static void add_to_file_cell(struct coll_cell *c, uint32_t row, struct latlog *g,
                             const struct call *k)
{
	const struct iop_event *ev = k->ev;
	coll_cell_add_sums(c, ev->dur_ns, ev->bytes, ev->flags & IOP_EV_BYTES,
	                   ev->flags & IOP_EV_ERROR);
	if (!latlog_add(g, row, ev->dur_ns, k->bucket))
		(void)iop_hist_record_at(&c->hist, ev->dur_ns, k->bucket);
	add_rest(c, k);
}

/* add_to_cell for a memo entry's acc, inline: most calls go there. Its
 * histogram stores every bucket, and it is emptied with every frame,
 * which holds far fewer than UINT32_MAX calls. */
static inline void add_to_acc(struct coll_cell *c, const struct call *k)
{
	const struct iop_event *ev = k->ev;
	coll_cell_add_sums(c, ev->dur_ns, ev->bytes, ev->flags & IOP_EV_BYTES,
	                   ev->flags & IOP_EV_ERROR);
	iop_hist_record_full(&c->hist, ev->dur_ns, k->bucket);
	add_rest(c, k);
}

/* Busy time: the part of [start, end] not yet counted for this process's
 * (layer, class), spread over the open ticks it covers. The row of the
 * event's own tick is given (the usual case: the call fits in it). An open
 * tick that ended while the call ran also counts it in flight then: the
 * shim's in-flight slots, read when the tick closes, no longer show a call
 * that returned in the grace period (hung_io ended a tick early). */
static void add_busy(struct coll_leaf *l, struct proc *p, const struct iop_event *ev, unsigned cls,
                     int64_t end_tick, struct coll_cell *end_cell)
{
	uint64_t *until = &p->busy_until[ev->layer][cls];
	uint64_t began = ev->end_ns - ev->dur_ns, start = began;
	if (start < *until)
		start = *until;
	if (ev->end_ns <= start)
		return;
	*until = ev->end_ns;
	/* The usual call: [start, end] within its own tick (the loop below
	 * then visits that tick alone). */
	uint64_t own = (uint64_t)end_tick * l->cfg.tick_ns;
	if (start >= own && ev->end_ns - own <= l->cfg.tick_ns) {
		if (end_cell)
			end_cell->busy_ns += ev->end_ns - start;
		return;
	}
	struct coll_key key = coll_key_rank(p->rank, ev->layer, cls);
	/* Only the open ticks: a call may claim to have lasted hours (or a
	 * forged one, 2^64 ns), and walking every tick it spans would not end. */
	int64_t first = event_tick(l, start), last = event_tick(l, ev->end_ns - 1);
	if (first < l->oldest)
		first = l->oldest;
	if (last > l->oldest + RING - 1)
		last = l->oldest + RING - 1;
	for (int64_t t = first; t <= last; t++) {
		uint64_t lo = (uint64_t)t * l->cfg.tick_ns, hi = lo + l->cfg.tick_ns;
		uint64_t a = start > lo ? start : lo, b = ev->end_ns < hi ? ev->end_ns : hi;
		struct coll_cell *c = end_cell;
		if (t != end_tick && coll_tick_row(&l->ring[t % RING].tick, &key, &c) != IOP_OK)
			continue;
		if (!c)
			continue;
		c->busy_ns += b - a;
		if (ev->end_ns > hi) {
			c->inflight++;
			if (!c->oldest_ns || began < c->oldest_ns)
				c->oldest_ns = began;
		}
	}
}

/* The row of key in d's tick through a cache entry (proc.h): a hit needs
 * neither the tick's index nor its keys, both cold in a tick of thousands
 * of rows. */
static struct coll_cell *cached_row(struct coll_delta *d, const struct coll_key *key,
                                    struct proc_rowc *e)
{
	/* One word built from the key's bytes: comparing the bytes as the
	 * compiler likes (one wide load over the key just stored byte by
	 * byte) stalled on store forwarding, a sixth of the leaf's time. */
	uint32_t tag = (uint32_t)key->kind | (uint32_t)key->layer << 8 | (uint32_t)key->cls << 16;
	if (e->tag == tag && e->t == d->tick.t && e->id == key->id && e->rank == key->rank &&
	    e->row < d->tick.n)
		return &d->tick.cell[e->row];
	struct coll_cell *c;
	if (coll_tick_row(&d->tick, key, &c) != IOP_OK)
		return NULL;
	*e = (struct proc_rowc){.t = d->tick.t, .id = key->id, .rank = key->rank,
	                        .row = (uint32_t)(c - d->tick.cell), .tag = tag};
	return c;
}

/* p's cache entry of a FILE or SITE row's key. */
static struct proc_rowc *id_rowc(struct proc *p, const struct coll_key *key)
{
	uint64_t h = (key->id ^ (uint64_t)key->kind << 8 ^ (uint64_t)key->layer << 4 ^ key->cls) *
	             UINT64_C(0x9e3779b97f4a7c15);
	return &p->rowc[h >> 58];
}

/* The FILE or SITE row of key, through p's cache. */
static struct coll_cell *id_row(struct coll_delta *d, struct proc *p, const struct coll_key *key)
{
	return cached_row(d, key, id_rowc(p, key));
}

/* Ahead of an event of p, the index slot of its FILE row when p's cache
 * does not know the row: a file new in the tick (a checkpoint's per-rank
 * files, thousands a tick) waited on that slot, out of cache in an index
 * of tens of thousands of slots, a quarter of what such a row cost. The
 * tick is the one of the events before (event_delta). Only a hint. */
static void prefetch_file_row(struct coll_leaf *l, struct proc *p, const struct iop_event *ev)
{
	uint64_t file = ev->file ? proc_hash(p, ev->file) : 0;
	if (!file || !l->ev_d)
		return;
	struct coll_key key = coll_key_file(file, ev->layer, iop_op_class(ev->op));
	const struct proc_rowc *e = id_rowc(p, &key);
	if (e->id != file || e->t != l->ev_d->tick.t)
		coll_tick_prefetch(&l->ev_d->tick, &key);
}

/* A row's index in d's tick, UINT32_MAX for none (a lookup out of memory). */
static uint32_t row_index(const struct coll_delta *d, const struct coll_cell *c)
{
	return c ? (uint32_t)(c - d->tick.cell) : UINT32_MAX;
}

/* The rows of an event of p in d (RANK, LAYER, FILE, SITE: the order new
 * rows take) into m: n, and UINT32_MAX for a row a lookup could not add.
 * The LAYER row is only made to exist, in its place: it is filled when
 * the tick closes (sum_layer_rows). Indexes, not pointers: a lookup may
 * move the rows. False when a lookup failed (no memory). */
static bool find_rows(struct coll_leaf *l, struct proc *p, struct coll_delta *d,
                      const struct iop_event *ev, unsigned cls, struct rows_memo *m)
{
	uint32_t n = 0;
	struct coll_key key = coll_key_rank(p->rank, ev->layer, cls);
	m->row[n++] = row_index(d, cached_row(d, &key, &p->row[ev->layer][cls]));
	key = coll_key_layer(ev->layer, cls);
	bool whole = cached_row(d, &key, &l->layer_row[ev->layer][cls]) != NULL;
	uint64_t file = ev->file ? proc_hash(p, ev->file) : 0;
	if (file) {
		key = coll_key_file(file, ev->layer, cls);
		m->row[n++] = row_index(d, id_row(d, p, &key));
	}
	uint64_t site = ev->site ? proc_hash(p, ev->site) : 0;
	if (site) {
		key = coll_key_site(site, ev->layer, cls);
		m->row[n++] = row_index(d, id_row(d, p, &key));
	}
	m->n = (uint8_t)n;
	m->named = file != 0;
	for (uint32_t i = 0; i < n; i++)
		whole &= m->row[i] != UINT32_MAX;
	return whole;
}

/* Adds the calls m gathered to its rows, and empties it. */
static void flush_memo(struct rows_memo *m)
{
	if (!m->acc.ops)
		return;
	struct coll_cell *cell = m->d->tick.cell;
	for (uint32_t i = 0; i < m->n; i++)
		(void)coll_cell_merge(&cell[m->row[i]], &m->acc);
	struct iop_hist h = m->acc.hist;
	iop_hist_reset(&h);
	memset(&m->acc, 0, sizeof(m->acc));
	m->acc.hist = h;
}

/* Adds what the frame's events left in the memo to their rows: done
 * before the frame is over, so nothing waits in it across frames. */
static void flush_memos(struct coll_leaf *l)
{
	for (int i = 0; i < MEMO; i++)
		flush_memo(&l->memo[i]);
}

/* The rows of an event, through the memo of the frame's events before:
 * a process's calls mostly repeat (layer, class, file, site) (a run of
 * writes, reads over a few files from a few sites), and their four rows,
 * hashes and caches were a sixth of the leaf's time. An entry lives for
 * one frame (its process, its names: take_names() ran before), in which
 * an open tick's rows only grow. */
static struct rows_memo *memo_refill(struct coll_leaf *l, struct proc *p, struct coll_delta *d,
                                     const struct iop_event *ev, unsigned cls,
                                     struct rows_memo *m);

static inline __attribute__((always_inline)) struct rows_memo *
event_rows(struct coll_leaf *l, struct proc *p, struct coll_delta *d, const struct iop_event *ev,
           unsigned cls)
{
	uint32_t h = (ev->file * UINT32_C(0x9e3779b1)) ^ (ev->site * UINT32_C(0x85ebca77)) ^
	             (ev->layer << 2 | cls) * UINT32_C(0xc2b2ae35);
	struct rows_memo *m = &l->memo[h >> (32 - MEMO_BITS)];
	if (__builtin_expect(m->gen == l->frame_gen && m->d == d && m->file == ev->file &&
	                     m->site == ev->site && m->layer == ev->layer && m->cls == cls, 1))
		return m;
	return memo_refill(l, p, d, ev, cls, m);
}

/* event_rows' miss: m emptied into its rows and filled for ev. */
static __attribute__((noinline)) struct rows_memo *
memo_refill(struct coll_leaf *l, struct proc *p, struct coll_delta *d, const struct iop_event *ev,
            unsigned cls, struct rows_memo *m)
{
	flush_memo(m);
	/* a row out of memory: looked up again */
	m->gen = find_rows(l, p, d, ev, cls, m) ? l->frame_gen : 0;
	m->d = d;
	m->file = ev->file;
	m->site = ev->site;
	m->layer = ev->layer;
	m->cls = (uint8_t)cls;
	m->calls = 0;
	m->pc = NULL;
	return m;
}

/* A collective call with its number: the rank's part of that instance,
 * for the root to match (collective.h). A file with no name has no
 * instance (its id was refused). */
#define COLL_EVENT(ev) __builtin_expect(((ev)->flags & IOP_EV_COLL) != 0, 0)

static void add_collective(struct proc *p, struct coll_delta *d, const struct iop_event *ev,
                           uint64_t excl_ns)
{
	uint64_t file = ev->file ? proc_hash(p, ev->file) : 0;
	if (!file)
		return;
	struct coll_arrival a = {.dur_ns = ev->dur_ns, .excl_ns = excl_ns, .rank = p->rank};
	/* out of room: the call is in every row as ever, only not matched */
	(void)coll_instset_add(&d->inst, file, ev->layer, ev->op, ev->coll_seq, ev->coll_size, &a);
}

/* Whether a call of m's rows has an access pattern: a data call with an
 * offset, on a named file. */
static inline bool has_pattern(const struct rows_memo *m, const struct iop_event *ev, unsigned cls)
{
	return m->named && cls != IOP_CLASS_META && (ev->flags & IOP_EV_OFFSET) &&
	       (ev->flags & IOP_EV_BYTES);
}

/* The counter m's calls' patterns go to (NULL when it cannot be made),
 * kept in the memo while the process's counters stay where they are. */
static inline struct proc_counter *memo_counter(struct proc *p, struct rows_memo *m,
                                                const struct iop_event *ev, unsigned cls)
{
	if (!m->pc || m->pc_of != p->ctr || m->pc_slots != p->ctr_slots) {
		m->pc = proc_pattern_counter(p, ev->file, ev->layer, cls);
		m->pc_of = p->ctr;
		m->pc_slots = p->ctr_slots;
	}
	return m->pc;
}

/* Its pattern (pattern.h) into k, through the counter kept in the memo:
 * a lookup per call was a fifth of the leaf's time. */
static inline void take_pattern(struct proc *p, struct rows_memo *m, const struct iop_event *ev,
                                unsigned cls, struct call *k)
{
	k->seq_known = true;
	k->pattern = memo_counter(p, m, ev, cls) ? proc_pattern_at(p, m->pc, ev->offset, ev->bytes)
	                                         : COLL_PAT_RANDOM;
}

static void add_event(struct coll_leaf *l, struct proc *p, const struct iop_event *ev)
{
	bool late;
	struct coll_delta *d = event_delta(l, ev->end_ns, &late);
	d->mon.events++;
	d->mon.late += late;
	unsigned cls = iop_op_class(ev->op);
	struct call k = {.ev = ev, .excl_ns = ev->dur_ns, .bucket = iop_hist_bucket(ev->dur_ns)};
	if ((ev->flags & IOP_EV_CHILDREN) && ev->child_ns < ev->dur_ns)
		k.excl_ns = ev->dur_ns - ev->child_ns;
	else if (ev->flags & IOP_EV_CHILDREN)
		k.excl_ns = 0;
	if (COLL_EVENT(ev))
		add_collective(p, d, ev, k.excl_ns);
	struct rows_memo *m = event_rows(l, p, d, ev, cls);
	if (has_pattern(m, ev, cls))
		take_pattern(p, m, ev, cls, &k);
	/* An entry's first calls go to its rows (RANK, FILE, SITE; the
	 * LAYER row is summed at the tick's close), the cells and histogram
	 * buckets fetched together first: in a tick of thousands of rows
	 * they are cold. Its next calls go to its acc, in cache, and reach
	 * the rows together when the entry is flushed: cold rows were the
	 * leaf's largest cost, and a merge costs a few calls (a file's open,
	 * stat and close add directly). Sums, bucket counts, min and max come
	 * out the same in any order. */
	const uint32_t *row = m->row, n = m->n;
	struct coll_cell *cell = d->tick.cell;
	if (m->calls++ >= DIRECT && m->gen) {
		add_to_acc(&m->acc, &k);
	} else {
		/* the FILE row (find_rows' second) takes no latency now */
		uint32_t file_at = m->named ? 1 : UINT32_MAX;
		for (uint32_t i = 0; i < n; i++)
			if (row[i] != UINT32_MAX) {
				__builtin_prefetch(&cell[row[i]], 1);
				__builtin_prefetch(&cell[row[i]].hist, 1);
			}
		for (uint32_t i = 0; i < n; i++) {
			const struct iop_hist *h = row[i] != UINT32_MAX ? &cell[row[i]].hist : NULL;
			if (h && i != file_at && h->bucket && k.bucket >= h->lo && k.bucket < h->hi)
				__builtin_prefetch(&h->bucket[k.bucket - h->lo], 1);
		}
		for (uint32_t i = 0; i < n; i++)
			if (row[i] != UINT32_MAX && i == file_at)
				add_to_file_cell(&cell[row[i]], row[i], &l->lat[d - l->ring], &k);
			else if (row[i] != UINT32_MAX)
				add_to_cell(&cell[row[i]], &k);
	}
	add_busy(l, p, ev, cls, d->tick.t, row[0] == UINT32_MAX ? NULL : &cell[row[0]]);
}

/* The calls of a run (n of them from ev, decoded from one run record: one
 * thread, layer, op, file, site and size; no error, nesting or collective
 * number) when they lie in one open tick: one look for their rows, their
 * sums and latencies into the memo's acc, and as busy time their total
 * time within the run's span (a thread's calls do not overlap; their ends
 * in between were spread evenly, their starts are not known). The memo
 * entry's first calls go to its rows one by one, as add_event's do. False,
 * nothing done, when the run does not fit: then it goes call by call. */
/* The open tick a run from began to last_end lies in whole; NULL when it
 * lies in none (late, or across ticks). */
static struct coll_delta *run_tick(struct coll_leaf *l, uint64_t began, uint64_t last_end)
{
	bool late;
	struct coll_delta *d = event_delta(l, last_end, &late);
	uint64_t own = (uint64_t)d->tick.t * l->cfg.tick_ns;
	return late || began < own || last_end - own > l->cfg.tick_ns ? NULL : d;
}

/* A run's busy time: busy ns of calls within [began, last_end] not yet
 * counted for the process's (layer, class), into m's RANK row of d. */
static void run_busy(struct proc *p, struct coll_delta *d, const struct rows_memo *m,
                     unsigned layer, unsigned cls, uint64_t began, uint64_t last_end,
                     uint64_t busy)
{
	uint64_t *until = &p->busy_until[layer][cls];
	uint64_t from = began > *until ? began : *until;
	if (last_end > from && m->row[0] != UINT32_MAX) {
		uint64_t span = last_end - from;
		d->tick.cell[m->row[0]].busy_ns += busy < span ? busy : span;
	}
	if (last_end > *until)
		*until = last_end;
}

static bool add_run(struct coll_leaf *l, struct proc *p, const struct iop_event *ev, uint32_t n)
{
	const struct iop_event *last = &ev[n - 1];
	struct coll_delta *d = run_tick(l, ev->end_ns - ev->dur_ns, last->end_ns);
	if (!d)
		return false;
	unsigned cls = iop_op_class(ev->op);
	struct rows_memo *m = event_rows(l, p, d, ev, cls);
	if (!m->gen)
		return false;
	uint32_t i = 0;
	for (; i < n && m->calls < DIRECT; i++)
		add_event(l, p, &ev[i]);
	if (i == n)
		return true;
	uint64_t began = ev[i].end_ns - ev[i].dur_ns, busy = 0;
	bool pattern = has_pattern(m, ev, cls);
	m->calls += n - i;
	d->mon.events += n - i;
	for (; i < n; i++) {
		struct call k = {.ev = &ev[i], .excl_ns = ev[i].dur_ns,
		                 .bucket = iop_hist_bucket(ev[i].dur_ns)};
		if (pattern)
			take_pattern(p, m, &ev[i], cls, &k);
		add_to_acc(&m->acc, &k);
		busy += ev[i].dur_ns;
	}
	run_busy(p, d, m, ev->layer, cls, began, last->end_ns, busy);
	return true;
}

/* The calls of a long run decoded whole (w; ev: its first, IOP_EV_WHOLE)
 * when they lie in one open tick: add_run's sums from the run's own (its
 * count, bytes, histogram, offsets at its stride), no call looked at.
 * False, nothing done, when the run does not fit in one open tick or its
 * rows cannot be had. */
static bool add_run_whole(struct coll_leaf *l, struct proc *p, const struct iop_event *ev,
                          const struct iop_run_whole *w)
{
	const uint64_t last_end = w->first_end + w->span, began = w->first_end - w->hist.min;
	struct coll_delta *d = run_tick(l, began, last_end);
	if (!d)
		return false;
	unsigned cls = iop_op_class(ev->op);
	struct rows_memo *m = event_rows(l, p, d, ev, cls);
	if (!m->gen)
		return false;
	const uint64_t n = w->count;
	m->calls += w->count;
	d->mon.events += n;
	struct coll_cell *a = &m->acc;
	coll_cell_add_sums_n(a, n, w->hist.sum, ev->bytes, ev->flags & IOP_EV_BYTES);
	a->excl_ns += w->hist.sum;
	if (ev->op == IOP_OP_READ_COLL || ev->op == IOP_OP_WRITE_COLL)
		a->coll_ops += n;
	(void)iop_hist_merge(&a->hist, &w->hist); /* an acc holds every bucket */
	if (has_pattern(m, ev, cls)) {
		uint64_t got[COLL_PAT__COUNT] = {0};
		if (!memo_counter(p, m, ev, cls) ||
		    !proc_pattern_run(p, m->pc, w->first_offset, w->stride, ev->bytes, n, got))
			got[COLL_PAT_RANDOM] = n;
		a->off_ops += n;
		a->consec_ops += got[COLL_PAT_CONSEC];
		a->fwd_ops += got[COLL_PAT_SEQ];
		a->stride_ops += got[COLL_PAT_STRIDE];
	}
	run_busy(p, d, m, ev->layer, cls, began, last_end, w->hist.sum);
	return true;
}

/* A long run decoded whole: at once, or (late, across ticks, rows out of
 * memory) call by call as any run (decode() made room for its calls). */
static void add_whole(struct coll_leaf *l, struct proc *p, const struct iop_event *ev,
                      const struct iop_run_whole *w)
{
	if (add_run_whole(l, p, ev, w))
		return;
	struct iop_event *c = l->scratch.calls;
	iop_run_whole_calls(ev, w, c);
	if (add_run(l, p, c, w->count))
		return;
	for (uint32_t i = 0; i < w->count; i++)
		add_event(l, p, &c[i]);
}

/* The events of a frame of p; nothing waits in the memo after. */
static void add_events(struct coll_leaf *l, struct proc *p, const struct iop_frame_out *f)
{
	enum { AHEAD = 4 }; /* events: ~100 ns each, about a cache miss */
	uint32_t n = l->slots, whole = 0;
	const struct iop_event *ev = f->events;
	for (uint32_t i = 0; i < n; i++) {
		if (ev[i].flags & IOP_EV_WHOLE) {
			add_whole(l, p, &ev[i], &l->runs.run[whole++]);
			continue;
		}
		/* a run record's calls at once (the decoder checked its count) */
		uint32_t run = ev[i].run_calls;
		if (run > 1 && run <= n - i && add_run(l, p, &ev[i], run)) {
			i += run - 1;
			continue;
		}
		/* not for a call like the one before it (a run of writes to
		 * a file): its row is the same */
		const struct iop_event *next = i + AHEAD < n ? &ev[i + AHEAD] : NULL;
		if (next && (next->file != next[-1].file || next->op != next[-1].op ||
		             next->layer != next[-1].layer))
			prefetch_file_row(l, p, next);
		add_event(l, p, &ev[i]);
	}
	flush_memos(l);
}

/* ---- frames ---- */

static void take_names(struct coll_leaf *l, struct proc *p, const struct iop_frame_out *f,
                       uint64_t now_ns)
{
	for (uint32_t i = 0; i < f->frame.n_names; i++) {
		const struct iop_name *n = &f->names[i];
		if (proc_set_name(p, n->id, n->hash) != IOP_OK)
			continue; /* id out of range or no memory: its rows keep no name */
		bool added;
		if (coll_names_add(&l->names, n->hash, n->kind, n->text, n->len, &added) == IOP_OK &&
		    added) {
			(void)coll_delta_add_name(delta_first(l), n->hash, n->kind, n->text, n->len);
			if (n->kind == IOP_NAME_FILE && l->mounts.n)
				(void)coll_fs_name_file(&l->names, &l->mounts, n->hash, n->text, n->len,
				                        delta_first(l));
		}
	}
}

static void take_counters(struct coll_leaf *l, struct proc *p, const struct iop_frame_out *f,
                          uint64_t now_ns)
{
	/* Each counter's slot fetched COUNTERS_AHEAD counters before it is
	 * looked up: all of a frame's (~90) at once left most of them
	 * waiting anyway, the core holding only so many misses at a time. */
	enum { COUNTERS_AHEAD = 12 };
	uint32_t n_counters = f->frame.n_counters;
	for (uint32_t i = 0; i < n_counters && i < COUNTERS_AHEAD; i++)
		proc_counter_prefetch(p, &f->counters[i]);
	struct coll_counter *grown = l->scratch.grown;
	uint32_t n = 0;
	for (uint32_t i = 0; i < n_counters; i++) {
		if (i + COUNTERS_AHEAD < n_counters)
			proc_counter_prefetch(p, &f->counters[i + COUNTERS_AHEAD]);
		const struct iop_counter *c = &f->counters[i];
		struct iop_counter now;
		bool changed;
		uint64_t pat[COLL_PAT__COUNT];
		uint64_t file = c->file ? proc_hash(p, c->file) : 0;
		/* A file not named yet: its counter waits (the shim sends every
		 * counter again before its last frame); a counter is absolute, so
		 * one put under no file now would count twice later. */
		if ((c->file && !file) || proc_counter(p, c, &now, &changed, pat) != IOP_OK || !changed)
			continue;
		grown[n++] = (struct coll_counter){.file = file, .ops = now.ops,
		                                   .bytes = now.bytes, .time_ns = now.time_ns,
		                                   .errors = coll_count32(now.errors),
		                                   .rank = p->rank,
		                                   .node = p->node, .pid = p->pid, .image = p->image,
		                                   .layer = c->layer, .cls = c->cls};
		for (unsigned k = 0; k < COLL_PAT__COUNT; k++)
			grown[n - 1].pat[k] = coll_count32(pat[k]);
	}
	(void)coll_delta_add_counters(delta_now(l, now_ns), grown, n);
}

/* After a frame's events: the counters whose pattern counts they changed
 * go up too, though the shim's counts did not grow (its last frame's
 * counters come before its events). */
static void take_patterns(struct coll_leaf *l, struct proc *p, uint64_t now_ns)
{
	struct coll_counter c;
	while (proc_take_pattern(p, &c))
		(void)coll_delta_add_counter(delta_now(l, now_ns), &c);
}

static void take_inflight(struct proc *p, const struct iop_frame_out *f)
{
	p->n_inflight = 0;
	for (uint32_t i = 0; i < f->frame.n_inflight && i < PROC_MAX_INFLIGHT; i++)
		p->inflight[p->n_inflight++] = f->inflight[i];
}

static void take_stats(struct coll_leaf *l, struct proc *p, const struct iop_stats *st,
                       uint64_t now_ns)
{
	struct coll_monitor *m = &delta_now(l, now_ns)->mon;
	m->frames++;
	if (st->events >= p->stats.events)
		m->produced += st->events - p->stats.events;
	if (st->dropped >= p->stats.dropped)
		m->dropped += st->dropped - p->stats.dropped;
	if (st->shim_ns >= p->stats.shim_ns)
		m->shim_ns += st->shim_ns - p->stats.shim_ns;
	p->stats = *st;
}

static enum iop_err reject(struct coll_leaf *l, enum iop_err e, uint64_t now_ns)
{
	delta_now(l, now_ns)->mon.rejected_frames++;
	return e;
}

/* Grows a scratch array to hold n elements. */
static bool scratch(void **v, uint32_t *cap, uint32_t n, size_t size)
{
	if (n <= *cap)
		return true;
	void *p = realloc(*v, (size_t)n * size);
	if (!p)
		return false;
	*v = p;
	*cap = n;
	return true;
}

/* Decodes the whole frame into the scratch arrays: a frame that fails
 * half-way is rejected before any of it is used. */
static enum iop_err decode(struct coll_leaf *l, const uint8_t *buf, size_t len,
                           struct iop_frame_out *out)
{
	enum iop_err e = iop_frame_open(&out->frame, buf, len, &l->cfg.key);
	if (e)
		return e;
	const struct iop_frame *f = &out->frame;
	struct scratch *s = &l->scratch;
	if (!scratch((void **)&s->names, &s->n_names, f->n_names, sizeof(*s->names)) ||
	    !scratch((void **)&s->counters, &s->n_counters, f->n_counters, sizeof(*s->counters)) ||
	    !scratch((void **)&s->inflight, &s->n_inflight, f->n_inflight, sizeof(*s->inflight)) ||
	    !scratch((void **)&s->events, &s->n_events, f->n_events, sizeof(*s->events)) ||
	    !scratch((void **)&s->grown, &s->n_grown, f->n_counters, sizeof(*s->grown)))
		return IOP_ERR_NOMEM;
	out->names = s->names;
	out->counters = s->counters;
	out->inflight = s->inflight;
	out->events = s->events;
	struct iop_frame *fr = &out->frame;
	for (uint32_t i = 0; !e && i < f->n_names; i++)
		e = iop_frame_name(fr, &s->names[i]);
	for (uint32_t i = 0; !e && i < f->n_counters; i++)
		e = iop_frame_counter(fr, &s->counters[i]);
	for (uint32_t i = 0; !e && i < f->n_inflight; i++)
		e = iop_frame_inflight(fr, &s->inflight[i]);
	/* long runs whole (add_whole): room for as many as the frame can
	 * hold, and RUN_BUCKETS buckets each for their durations up to
	 * RUN_BUCKETS_MAX in all; a run past that room comes call by call */
	uint32_t runs = f->n_events / (IOP_RUN_EXACT_MAX + 1) + 1;
	uint32_t bk = runs < RUN_BUCKETS_MAX / RUN_BUCKETS ? runs * RUN_BUCKETS : RUN_BUCKETS_MAX;
	if (!e && (!scratch((void **)&s->runs, &s->n_runs, runs, sizeof(*s->runs)) ||
	           !scratch((void **)&s->bk, &s->n_bk, bk, sizeof(*s->bk))))
		return IOP_ERR_NOMEM;
	l->runs = (struct iop_runs_out){.run = s->runs, .cap = runs, .bk = s->bk, .bk_cap = bk};
	l->slots = 0;
	if (!e)
		e = iop_frame_events_whole(fr, s->events, f->n_events, &l->runs, &l->slots);
	/* a run that cannot be taken whole comes call by call: room for the
	 * longest, now, before anything is taken */
	uint32_t longest = 0;
	for (uint32_t i = 0; !e && i < l->runs.n; i++)
		longest = s->runs[i].count > longest ? s->runs[i].count : longest;
	if (!e && !scratch((void **)&s->calls, &s->n_calls, longest, sizeof(*s->calls)))
		return IOP_ERR_NOMEM;
	return e ? e : iop_frame_close(fr);
}

bool coll_leaf_frame_is_next(const struct coll_leaf *l, const uint8_t *buf, size_t len)
{
	struct iop_frame_hdr h;
	if (iop_frame_peek(buf, len, &h) != IOP_OK)
		return false;
	const struct proc *p = proc_table_get(&l->procs, h.node_id, h.pid);
	if (!p)
		return h.seq == 0;
	return p->seq != UINT64_MAX && !p->ended && !p->gone && h.seq == p->seq + 1;
}

bool coll_leaf_frame_restarts(const struct coll_leaf *l, const uint8_t *buf, size_t len)
{
	struct iop_frame_hdr h;
	if (iop_frame_peek(buf, len, &h) != IOP_OK || h.seq != 0)
		return false;
	const struct proc *p = proc_table_get(&l->procs, h.node_id, h.pid);
	return p && p->seq != UINT64_MAX && !p->ended && !p->gone;
}

static enum iop_err take_frame(struct coll_leaf *l, const uint8_t *buf, size_t len,
                               uint64_t image_ns, uint64_t now_ns);

enum iop_err coll_leaf_frame(struct coll_leaf *l, const uint8_t *buf, size_t len,
                             uint64_t now_ns)
{
	return take_frame(l, buf, len, 0, now_ns);
}

enum iop_err coll_leaf_frame_spooled(struct coll_leaf *l, const uint8_t *buf, size_t len,
                                     uint64_t image_ns, uint64_t now_ns)
{
	return take_frame(l, buf, len, image_ns ? image_ns : 1, now_ns); /* 0 is the sockets' */
}

bool coll_leaf_spool_ready(const struct coll_leaf *l, const uint8_t *buf, size_t len,
                           uint64_t image_ns)
{
	struct iop_frame_hdr h;
	if (iop_frame_peek(buf, len, &h) != IOP_OK)
		return true; /* refused when taken */
	const struct proc *p = proc_table_get(&l->procs, h.node_id, h.pid);
	if (!p || p->seq == UINT64_MAX || image_ns > p->image_first_ns + SPOOL_IMAGE_SLACK_NS)
		return h.seq == 0; /* else its image's first frames may be on their way */
	return (p->image && image_ns <= p->prev_last_ns) || h.seq <= p->seq + 1;
}

static enum iop_err take_frame(struct coll_leaf *l, const uint8_t *buf, size_t len,
                               uint64_t image_ns, uint64_t now_ns)
{
	struct iop_frame_out out;
	if (++l->frame_gen == 0) { /* 0 marks an empty memo entry */
		for (int i = 0; i < MEMO; i++)
			l->memo[i].gen = 0;
		l->frame_gen = 1;
	}
	enum iop_err e = decode(l, buf, len, &out);
	if (e)
		return reject(l, e, now_ns);
	const struct iop_frame_hdr *h = &out.frame.hdr;
	if (h->job_id != l->cfg.job_id)
		return reject(l, IOP_ERR_BAD_MAC, now_ns); /* another job's frame, keyed alike */
	struct proc *p;
	if ((e = proc_table_find(&l->procs, h->node_id, h->pid, h->rank, &p)))
		return reject(l, e, now_ns);
	uint32_t image = p->image;
	uint64_t before = p->seq;
	enum seq_verdict v = accept_seq(l, p, h, buf + len - IOP_MAC_BYTES, image_ns, now_ns);
	if (p->image != image)
		before = UINT64_MAX; /* a new image: its own frames may still come */
	if (v == SEQ_DUPLICATE)
		return IOP_ERR_DUPLICATE;
	if (v == SEQ_REJECT)
		return reject(l, IOP_ERR_STATE, now_ns);
	if (v == SEQ_OVERTAKEN) {
		/* its stats are older than the FINAL frame's, which count it */
		delta_now(l, now_ns)->mon.frames++;
		take_names(l, p, &out, now_ns);
		take_counters(l, p, &out, now_ns);
		add_events(l, p, &out);
		take_patterns(l, p, now_ns);
		return IOP_OK;
	}
	p->seq = h->seq;
	p->base_ns = h->base_ns;
	p->seen_ns = now_ns;
	p->rank = h->rank; /* a process learns its rank at MPI_Init */
	take_stats(l, p, &out.frame.stats, now_ns);
	take_names(l, p, &out, now_ns);
	take_counters(l, p, &out, now_ns);
	take_inflight(p, &out);
	add_events(l, p, &out);
	take_patterns(l, p, now_ns);
	if (h->flags & IOP_FRAME_FINAL) {
		p->ended = true;
		memcpy(p->final_mac, buf + len - IOP_MAC_BYTES, IOP_MAC_BYTES);
		p->overtaken_from = before == UINT64_MAX ? 0 : before + 1;
		p->n_inflight = 0;
		proc_event(l, p, COLL_PROC_ENDED, now_ns);
	}
	return IOP_OK;
}

/* ---- closing ticks ---- */

/* Fills the LAYER rows of a closing tick: each (layer, class)'s is the
 * sum of its RANK rows' calls, since every call went to one RANK row of
 * the tick and to the LAYER row of the same tick. Added there call by
 * call, it was a fourth of each call's cells and histograms. A LAYER row
 * has no busy time and no calls in flight (those are per rank); an empty
 * RANK row (busy time only) adds nothing. */
static void sum_layer_rows(struct coll_tick *t)
{
	uint32_t layer_row[IOP_LAYER__COUNT][IOP_CLASS__COUNT];
	memset(layer_row, 0xff, sizeof(layer_row));
	for (uint32_t i = 0; i < t->n; i++)
		if (t->key[i].kind == COLL_ROW_LAYER)
			layer_row[t->key[i].layer][t->key[i].cls] = i;
	for (uint32_t i = 0; i < t->n; i++) {
		const struct coll_key *k = &t->key[i];
		if (k->kind != COLL_ROW_RANK || !t->cell[i].ops)
			continue;
		uint32_t to = layer_row[k->layer][k->cls];
		if (to != UINT32_MAX)
			(void)coll_cell_merge(&t->cell[to], &t->cell[i]);
	}
	for (unsigned layer = 0; layer < IOP_LAYER__COUNT; layer++)
		for (unsigned cls = 0; cls < IOP_CLASS__COUNT; cls++) {
			uint32_t at = layer_row[layer][cls];
			if (at != UINT32_MAX) {
				struct coll_cell *c = &t->cell[at];
				c->busy_ns = c->inflight = c->oldest_ns = 0;
			}
		}
}

static void add_inflight_rows(struct coll_leaf *l, struct coll_tick *t)
{
	uint64_t end = (uint64_t)(t->t + 1) * l->cfg.tick_ns;
	for (uint32_t i = 0; i < l->procs.n; i++) {
		const struct proc *p = &l->procs.v[i];
		if (p->ended || p->gone)
			continue;
		for (uint32_t j = 0; j < p->n_inflight; j++) {
			const struct iop_inflight *fl = &p->inflight[j];
			if (fl->start_ns >= end || fl->layer >= IOP_LAYER__COUNT || fl->op >= IOP_OP__COUNT)
				continue;
			unsigned cls = iop_op_class(fl->op);
			uint64_t file = fl->file ? proc_hash(p, fl->file) : 0;
			struct coll_key keys[2] = {coll_key_rank(p->rank, fl->layer, cls),
			                           coll_key_file(file, fl->layer, cls)};
			for (int k = 0; k < (file ? 2 : 1); k++) {
				struct coll_cell *c;
				if (coll_tick_row(t, &keys[k], &c) != IOP_OK)
					continue;
				c->inflight++;
				if (!c->oldest_ns || fl->start_ns < c->oldest_ns)
					c->oldest_ns = fl->start_ns;
			}
		}
	}
}

/* Silent processes, and at the end (flush: the job's command has exited,
 * the leaf stops) every process that did not end: a process killed by a
 * signal sends no FINAL frame, and nothing will be heard of it again. */
static void mark_gone(struct coll_leaf *l, uint64_t now_ns, bool all)
{
	for (uint32_t i = 0; i < l->procs.n; i++) {
		struct proc *p = &l->procs.v[i];
		if (p->ended || p->gone || (!all && now_ns < p->seen_ns + l->cfg.gone_ns))
			continue;
		p->gone = true;
		p->n_inflight = 0;
		proc_event(l, p, COLL_PROC_GONE, now_ns);
	}
}

/* The node's sample for the tick closing (node/nodes.h), when a process
 * of this host sends to this leaf: a leaf of a tree serves its own node;
 * one that hears only of other hosts (tests, iop-loadgen) has no figures
 * of theirs. */
static void sample_node(struct coll_leaf *l, struct coll_delta *d, uint64_t now_ns)
{
	if (!l->probe)
		return;
	/* processes stay in the table once seen: once true, it stays */
	for (uint32_t i = 0; i < l->procs.n && !l->node_heard; i++)
		l->node_heard = l->procs.v[i].node == l->node_id;
	if (!l->node_heard)
		return;
	struct coll_node_sample x;
	coll_node_sample_take(l->probe, &l->mounts, l->node_id, d->tick.t, now_ns, &x);
	/* the job's own part: its POSIX and STDIO calls on each file system
	 * from this node (the tick's FS rows, this leaf's node only) */
	for (uint32_t i = 0; i < d->tick.n; i++) {
		const struct coll_key *k = &d->tick.key[i];
		if (k->kind != COLL_ROW_FS || (k->layer != IOP_LAYER_POSIX && k->layer != IOP_LAYER_STDIO))
			continue;
		for (uint32_t j = 0; j < x.n_fs; j++)
			if (x.fs[j].fs == k->id) {
				x.fs[j].job_ops += d->tick.cell[i].ops;
				x.fs[j].job_Bps += d->tick.cell[i].bytes;
			}
	}
	for (uint32_t j = 0; j < x.n_fs; j++)
		x.fs[j].job_Bps = (uint64_t)((double)x.fs[j].job_Bps * 1e9 / (double)d->tick.tick_ns);
	(void)coll_nodeset_put(&d->nodes, &x);
}

uint64_t coll_leaf_next_close_ns(const struct coll_leaf *l)
{
	return (uint64_t)(l->oldest + 1) * l->cfg.tick_ns + l->cfg.grace_ns;
}

void coll_leaf_advance(struct coll_leaf *l, uint64_t now_ns, bool flush, coll_delta_fn *fn,
                       void *arg)
{
	mark_gone(l, now_ns, flush);
	int64_t last = flush ? tick_of(l, now_ns) + 1 : l->oldest - 1;
	while (flush ? l->oldest <= last : coll_leaf_next_close_ns(l) <= now_ns) {
		struct coll_delta *d = &l->ring[l->oldest % RING];
		sum_layer_rows(&d->tick);
		add_inflight_rows(l, &d->tick);
		uint32_t *also = NULL;
		if (l->mounts.n)
			(void)coll_fs_rows(&d->tick, &l->names, &also);
		sample_node(l, d, now_ns);
		(void)latlog_fold(&l->lat[l->oldest % RING], &d->tick, l->cfg.max_files, also);
		free(also);
		fn(arg, d);
		coll_delta_reset(d, l->oldest + RING);
		l->oldest++;
		l->ev_d = NULL; /* events of the tick closed are late now */
		/* its memory to the next ticks to fill, not 64 slots on (its
		 * log is empty now: a swap passes its memory) */
		for (int64_t t = l->oldest; t < l->oldest + 2; t++)
			if (coll_delta_pass_memory(d, &l->ring[t % RING])) {
				struct latlog *a = &l->lat[(l->oldest - 1) % RING], *b = &l->lat[t % RING];
				if (b->n == 0) {
					struct latlog swap = *a;
					*a = *b;
					*b = swap;
				}
				break;
			}
	}
}

void coll_leaf_procs(const struct coll_leaf *l, struct coll_leaf_procs *out)
{
	memset(out, 0, sizeof(*out));
	for (uint32_t i = 0; i < l->procs.n; i++) {
		out->seen++;
		out->ended += l->procs.v[i].ended;
		out->gone += l->procs.v[i].gone;
	}
}
