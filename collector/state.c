/* The window state: applying closed ticks, history tiers. See state.h. */
#include "state.h"

#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "table.h"

void coll_history_cfg_default(struct coll_history_cfg *cfg, uint64_t tick_ns)
{
	uint64_t per_s = tick_ns ? 1000000000ull / tick_ns : 1;
	if (per_s == 0)
		per_s = 1;
	uint64_t full = 600 * per_s;                  /* 10 minutes */
	uint64_t b1 = 10 * per_s, b2 = 60 * per_s;     /* 10 s, 1 min */
	cfg->full_ticks = (uint32_t)(full ? full : 1);
	cfg->bin1_ticks = (uint32_t)(b1 ? b1 : 1);
	cfg->bin1_count = 720;                          /* 2 hours */
	cfg->bin2_ticks = (uint32_t)(b2 ? b2 : 1);
	cfg->bin2_count = 1440;                         /* 24 hours */
	cfg->max_bytes = COLL_HISTORY_BYTES;
}

void coll_state_init(struct coll_state *s, uint64_t tick_ns, const struct coll_history_cfg *h)
{
	memset(s, 0, sizeof(*s));
	s->tick_ns = tick_ns;
	coll_names_init(&s->names, 1u << 20, (size_t)256 << 20);
	struct coll_history_cfg def;
	if (!h) {
		coll_history_cfg_default(&def, tick_ns);
		h = &def;
	}
	s->tier[0] = (struct coll_tier){.cap = h->full_ticks, .ticks_per_bin = 1};
	s->tier[1] = (struct coll_tier){.cap = h->bin1_count, .ticks_per_bin = h->bin1_ticks};
	s->tier[2] = (struct coll_tier){.cap = h->bin2_count, .ticks_per_bin = h->bin2_ticks};
	s->max_bytes = h->max_bytes;
	s->first_t = INT64_MIN;
	coll_node_series_init(&s->series, h->full_ticks);
}

void coll_state_free(struct coll_state *s)
{
	for (int i = 0; i < 3; i++) {
		struct coll_tier *tr = &s->tier[i];
		for (uint32_t j = 0; j < tr->n; j++)
			coll_tick_free(&tr->v[(tr->head + j) % tr->cap]);
		free(tr->v);
		free(tr->bytes);
	}
	coll_ctrset_free(&s->latest);
	coll_nodeset_free(&s->nodes);
	coll_nodeset_free(&s->peaks);
	coll_node_series_free(&s->series);
	coll_names_free(&s->names);
	free(s->ranks);
	free(s->hosts);
	free(s->host_slot);
	memset(s, 0, sizeof(*s));
}

static struct coll_rank *rank_at(struct coll_state *s, uint32_t rank)
{
	if (rank >= (1u << 24))
		return NULL; /* ranks beyond 16 M are not tracked individually */
	if (rank >= s->n_ranks) {
		uint32_t n = s->n_ranks ? s->n_ranks : 64;
		while (n <= rank)
			n *= 2;
		struct coll_rank *v = realloc(s->ranks, n * sizeof(*v));
		if (!v)
			return NULL;
		memset(v + s->n_ranks, 0, (n - s->n_ranks) * sizeof(*v));
		s->ranks = v;
		s->n_ranks = n;
	}
	return &s->ranks[rank];
}

static void apply_proc(struct coll_state *s, const struct coll_proc *p)
{
	struct coll_rank *r = rank_at(s, p->rank);
	if (!r)
		return;
	r->node = p->node;
	if (p->state == COLL_PROC_JOINED) {
		r->procs++;
		r->live++;
	} else if (r->live) {
		r->live--;
	}
	if (r->live)
		r->state = COLL_RANK_ACTIVE;
	else
		r->state = p->state == COLL_PROC_GONE ? COLL_RANK_GONE : COLL_RANK_ENDED;
}

/* Puts a tick (or a bin) into a tier; the oldest one leaving a full tier
 * is returned in *evicted (the caller owns it) and *has_evicted is set. */
/* Before a tier takes a new slot: its newest tick or bin is complete,
 * nothing merges into it any more, and it is packed (coll_tick_pack). */
static void seal_newest(struct coll_tier *tr)
{
	if (tr->n)
		(void)coll_tick_pack(&tr->v[(tr->head + tr->n - 1) % tr->cap]);
}

static enum iop_err tier_push(struct coll_tier *tr, const struct coll_tick *k,
                              struct coll_tick *evicted, bool *has_evicted)
{
	*has_evicted = false;
	if (tr->cap == 0) {
		coll_tick_init(evicted, k->t, k->tick_ns);
		*has_evicted = true;
		return coll_tick_copy(evicted, k);
	}
	int64_t bin = k->t / (int64_t)tr->ticks_per_bin;
	if (tr->n) {
		struct coll_tick *newest = &tr->v[(tr->head + tr->n - 1) % tr->cap];
		if (newest->t / (int64_t)tr->ticks_per_bin == bin) {
			/* a thinned bin's other ticks have no detail rows: this
			 * one's would show as the whole bin's */
			bool thinned = coll_tick_thinned(newest);
			enum iop_err e = coll_tick_merge(newest, k);
			return thinned && !e ? coll_tick_thin(newest) : e;
		}
	}
	if (!tr->v) {
		tr->v = calloc(tr->cap, sizeof(*tr->v));
		if (!tr->v)
			return IOP_ERR_NOMEM;
	}
	seal_newest(tr);
	if (tr->n == tr->cap) {
		*evicted = tr->v[tr->head];
		*has_evicted = true;
		tr->head = (tr->head + 1) % tr->cap;
		tr->n--;
	}
	struct coll_tick *slot = &tr->v[(tr->head + tr->n) % tr->cap];
	/* A bin is numbered by its first tick, so lookups by tick find it. */
	coll_tick_init(slot, bin * (int64_t)tr->ticks_per_bin, k->tick_ns);
	tr->n++;
	return coll_tick_copy(slot, k);
}

/* tier_push for a tick the caller gives up (*k is left empty): into a new
 * slot of a tier of single ticks it moves, arrays and all, instead of
 * being copied; otherwise it is pushed as usual. */
static enum iop_err tier_take(struct coll_tier *tr, struct coll_tick *k,
                             struct coll_tick *evicted, bool *has_evicted)
{
	bool new_slot = tr->cap && tr->ticks_per_bin == 1 &&
	                !(tr->n && tr->v[(tr->head + tr->n - 1) % tr->cap].t == k->t);
	if (!new_slot || (!tr->v && !(tr->v = calloc(tr->cap, sizeof(*tr->v)))))
		return tier_push(tr, k, evicted, has_evicted);
	*has_evicted = false;
	seal_newest(tr);
	if (tr->n == tr->cap) {
		*evicted = tr->v[tr->head];
		*has_evicted = true;
		tr->head = (tr->head + 1) % tr->cap;
		tr->n--;
	}
	tr->v[(tr->head + tr->n) % tr->cap] = *k;
	tr->n++;
	coll_tick_init(k, k->t, k->tick_ns);
	return IOP_OK;
}

/* k goes into the history; give (NULL or k itself, given up) may be moved. */
static enum iop_err history_push(struct coll_state *s, const struct coll_tick *k,
                                 struct coll_tick *give)
{
	const struct coll_tick *in = k;
	struct coll_tick out[3];
	enum iop_err e = IOP_OK;
	int held = -1;
	for (int i = 0; i < 3; i++) {
		bool evicted;
		enum iop_err e2 = i == 0 && give ? tier_take(&s->tier[i], give, &out[i], &evicted)
		                                 : tier_push(&s->tier[i], in, &out[i], &evicted);
		if (held >= 0)
			coll_tick_free(&out[held]);
		if (e2 && !e)
			e = e2;
		if (!evicted)
			return e;
		held = i;
		in = &out[i];
	}
	coll_tick_free(&out[held]);
	return e;
}

uint64_t coll_tick_bytes(const struct coll_tick *k)
{
	/* a row: its key, its cell and three index slots (n_slots >= 3 cap),
	 * and its histogram's buckets as packed (coll_tick_pack): what the
	 * contents take, however they are stored now */
	uint64_t b = sizeof(*k) + (uint64_t)k->n * (sizeof(struct coll_key) +
	                                           sizeof(struct coll_cell) + 3 * sizeof(uint32_t));
	for (uint32_t i = 0; i < k->n; i++)
		b += iop_hist_packed_size(&k->cell[i].hist);
	return b;
}

bool coll_tick_thinned(const struct coll_tick *k)
{
	bool layer = false;
	for (uint32_t i = 0; i < k->n; i++) {
		if (k->key[i].kind != COLL_ROW_LAYER)
			return false;
		layer = true;
	}
	return layer;
}

enum iop_err coll_tick_thin(struct coll_tick *k)
{
	struct coll_tick keep;
	coll_tick_init(&keep, k->t, k->tick_ns);
	for (uint32_t i = 0; i < k->n; i++) {
		if (k->key[i].kind != COLL_ROW_LAYER)
			continue;
		struct coll_cell *c;
		enum iop_err e = coll_tick_row(&keep, &k->key[i], &c);
		if (!e)
			e = coll_cell_merge(c, &k->cell[i]);
		if (e) {
			coll_tick_free(&keep);
			return e;
		}
	}
	coll_tick_free(k);
	*k = keep;
	return IOP_OK;
}

static void measure_slot(struct coll_tier *tr, uint32_t pos)
{
	if (!tr->bytes && !(tr->bytes = calloc(tr->cap, sizeof(*tr->bytes))))
		return; /* counted as 0 until the next measure */
	tr->bytes[pos] = coll_tick_bytes(&tr->v[pos]);
}

static void sum_history(struct coll_state *s)
{
	uint64_t total = 0;
	for (int i = 0; i < 3; i++) {
		const struct coll_tier *tr = &s->tier[i];
		for (uint32_t j = 0; tr->bytes && j < tr->n; j++)
			total += tr->bytes[(tr->head + j) % tr->cap];
	}
	s->history_bytes = total;
}

void coll_state_history_measure(struct coll_state *s)
{
	for (int i = 0; i < 3; i++) {
		struct coll_tier *tr = &s->tier[i];
		for (uint32_t j = 0; j < tr->n; j++) {
			/* packed as a live root packs them: all but the newest */
			if (j + 1 < tr->n)
				(void)coll_tick_pack(&tr->v[(tr->head + j) % tr->cap]);
			measure_slot(tr, (tr->head + j) % tr->cap);
		}
	}
	sum_history(s);
}

/* Past the budget, thins the oldest ticks and bins first (tier 2's, then
 * 1's, then 0's), never tier 0's newest COLL_HISTORY_KEEP. */
static void enforce_budget(struct coll_state *s)
{
	for (int i = 2; i >= 0 && s->max_bytes && s->history_bytes > s->max_bytes; i--) {
		struct coll_tier *tr = &s->tier[i];
		uint32_t n = tr->n;
		if (i == 0)
			n = n > COLL_HISTORY_KEEP ? n - COLL_HISTORY_KEEP : 0;
		for (uint32_t j = 0; j < n && s->history_bytes > s->max_bytes; j++) {
			uint32_t pos = (tr->head + j) % tr->cap;
			struct coll_tick *k = &tr->v[pos];
			if (!tr->bytes || coll_tick_thinned(k) || k->n == 0 || coll_tick_thin(k))
				continue;
			uint64_t before = tr->bytes[pos];
			tr->bytes[pos] = coll_tick_bytes(k);
			s->history_bytes -= before - tr->bytes[pos];
			s->thinned++;
		}
	}
}

/* After a push: the newest slot of each tier may have changed. */
static void history_account(struct coll_state *s)
{
	for (int i = 0; i < 3; i++) {
		struct coll_tier *tr = &s->tier[i];
		if (tr->n)
			measure_slot(tr, (tr->head + tr->n - 1) % tr->cap);
	}
	sum_history(s);
	enforce_budget(s);
}

static enum iop_err apply_counters(struct coll_state *s, const struct coll_delta *d)
{
	return coll_ctrset_add_all_n(&s->latest, d->ctr.v, d->ctr.n, COLL_STATE_MAX_COUNTERS,
	                             &s->counters_refused);
}

bool coll_totals_next(struct coll_totals_it *it)
{
	const struct coll_ctrset *l = &it->s->latest;
	if (it->i == 0)
		memset(&it->cell, 0, sizeof(it->cell)); /* an empty histogram too */
	while (it->i < l->n) {
		const struct coll_counter *c = &l->v[it->i++];
		if (!c->ops && !c->bytes && !c->time_ns && !c->errors)
			continue;
		it->key = (struct coll_key){.id = c->file, .rank = c->rank, .kind = COLL_ROW_FILE,
		                            .layer = c->layer, .cls = c->cls};
		it->cell.ops = c->ops;
		it->cell.bytes = c->bytes;
		it->cell.time_ns = c->time_ns;
		it->cell.errors = c->errors;
		it->cell.consec_ops = c->pat[COLL_PAT_CONSEC];
		it->cell.fwd_ops = c->pat[COLL_PAT_SEQ];
		it->cell.stride_ops = c->pat[COLL_PAT_STRIDE];
		it->cell.off_ops = it->cell.consec_ops + it->cell.fwd_ops + it->cell.stride_ops +
		                   c->pat[COLL_PAT_RANDOM];
		return true;
	}
	return false;
}

static void apply_rows(struct coll_state *s, const struct coll_tick *k)
{
	for (uint32_t i = 0; i < k->n; i++) {
		const struct coll_key *key = &k->key[i];
		if (key->kind == COLL_ROW_LAYER && key->layer < IOP_LAYER__COUNT) {
			s->layer_excl_ns[key->layer] += k->cell[i].excl_ns;
			s->layer_wait_ns[key->layer] += k->cell[i].wait_ns;
		}
		if (key->kind == COLL_ROW_RANK) {
			struct coll_rank *r = rank_at(s, key->rank);
			if (r) {
				r->excl_ns += k->cell[i].excl_ns;
				r->wait_ns += k->cell[i].wait_ns;
			}
		}
	}
}

/* Hosts are one per node: an array, kept so that a rank's node is named
 * without searching every name, and indexed by node id, since the
 * dashboard and the summary name every rank's node (a search of 1024
 * hosts for each of 65 536 ranks was 13 % of a redraw: tui_bench). */
/* The slot of node in the hosts' index: its host's, or the empty one it
 * would take (the index is at most half full). */
static uint32_t host_probe(const struct coll_state *s, uint32_t node)
{
	uint32_t at = (uint32_t)(((uint64_t)node * UINT64_C(0x9e3779b97f4a7c15)) >> 32) % s->host_slots;
	while (s->host_slot[at] && s->hosts[s->host_slot[at] - 1].node != node)
		at = (at + 1) % s->host_slots;
	return at;
}

/* Puts hosts[i] in the index, unless its node id is there already (a
 * node id met before keeps its first name, as a search found it). */
static void host_put(struct coll_state *s, uint32_t i)
{
	uint32_t at = host_probe(s, s->hosts[i].node);
	if (!s->host_slot[at])
		s->host_slot[at] = i + 1;
}

static enum iop_err add_host(struct coll_state *s, uint64_t hash)
{
	if (s->n_hosts >= (1u << 20))
		return IOP_OK;
	if (s->n_hosts == s->hosts_cap) {
		void *v = s->hosts;
		enum iop_err e = coll_table_grow(&v, sizeof(*s->hosts), &s->hosts_cap, 64,
		                                 &s->host_slot, &s->host_slots);
		s->hosts = v;
		if (e)
			return e;
		for (uint32_t i = 0; i < s->n_hosts; i++)
			host_put(s, i);
	}
	s->hosts[s->n_hosts] = (struct coll_host){(uint32_t)hash, coll_names_text(&s->names, hash)};
	host_put(s, s->n_hosts++);
	return IOP_OK;
}

void coll_state_index_hosts(struct coll_state *s)
{
	free(s->host_slot);
	s->hosts_cap = s->n_hosts;
	s->host_slots = s->n_hosts * 2;
	s->host_slot = s->host_slots ? calloc(s->host_slots, sizeof(*s->host_slot)) : NULL;
	if (!s->host_slot)
		s->host_slots = 0;
	for (uint32_t i = 0; i < s->host_slots / 2; i++)
		host_put(s, i);
}

const char *coll_state_host(const struct coll_state *s, uint32_t node)
{
	if (s->host_slots) {
		uint32_t at = s->host_slot[host_probe(s, node)];
		return at ? s->hosts[at - 1].name : NULL;
	}
	for (uint32_t i = 0; i < s->n_hosts; i++) /* no index: no memory for one */
		if (s->hosts[i].node == node)
			return s->hosts[i].name;
	return NULL;
}

static enum iop_err apply(struct coll_state *s, const struct coll_delta *d,
                          struct coll_tick *give);

enum iop_err coll_state_apply(struct coll_state *s, const struct coll_delta *d)
{
	return apply(s, d, NULL);
}

enum iop_err coll_state_apply_take(struct coll_state *s, struct coll_delta *d)
{
	return apply(s, d, &d->tick);
}

static enum iop_err apply(struct coll_state *s, const struct coll_delta *d,
                          struct coll_tick *give)
{
	enum iop_err e = IOP_OK;
	for (uint32_t i = 0; i < d->n_names; i++) {
		bool added;
		const struct coll_name *n = &d->names[i];
		enum iop_err e2 = coll_names_add(&s->names, n->hash, n->kind, n->text, n->len, &added);
		if (e2 == IOP_ERR_NOMEM)
			e = e2; /* FULL is counted in names.refused */
		if (added && n->kind == IOP_NAME_HOST && (e2 = add_host(s, n->hash)))
			e = e2;
	}
	for (uint32_t i = 0; i < d->n_procs; i++)
		apply_proc(s, &d->procs[i]);
	enum iop_err e2 = apply_counters(s, d);
	if (e2)
		e = e2;
	apply_rows(s, &d->tick);
	coll_monitor_add(&s->mon, &d->mon);
	s->dist = d->dist;
	if ((e2 = coll_nodeset_merge(&s->nodes, &d->nodes)) ||
	    (e2 = coll_nodeset_peak(&s->peaks, &d->nodes)))
		e = e2;
	int64_t t = d->tick.t;
	if ((e2 = coll_node_series_push(&s->series, t, &d->nodes)))
		e = e2;
	if ((e2 = history_push(s, &d->tick, give)))
		e = e2;
	history_account(s);
	if (s->first_t == INT64_MIN || t < s->first_t)
		s->first_t = t;
	if (t > s->last_t || s->ticks_applied == 0)
		s->last_t = t;
	s->ticks_applied++;
	return e;
}

const struct coll_tick *coll_state_tick(const struct coll_state *s, int64_t t)
{
	for (int i = 0; i < 3; i++) {
		const struct coll_tier *tr = &s->tier[i];
		int64_t bin = t / (int64_t)(tr->ticks_per_bin ? tr->ticks_per_bin : 1);
		for (uint32_t j = tr->n; j-- > 0;) {
			const struct coll_tick *k = &tr->v[(tr->head + j) % tr->cap];
			int64_t kb = k->t / (int64_t)(tr->ticks_per_bin ? tr->ticks_per_bin : 1);
			if (kb == bin)
				return k;
			if (kb < bin)
				break;
		}
	}
	return NULL;
}

const struct coll_tick *coll_state_last(const struct coll_state *s)
{
	const struct coll_tier *tr = &s->tier[0];
	return tr->n ? &tr->v[(tr->head + tr->n - 1) % tr->cap] : NULL;
}

uint32_t coll_state_ranks_live(const struct coll_state *s)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < s->n_ranks; i++)
		n += s->ranks[i].state == COLL_RANK_ACTIVE;
	return n;
}

uint32_t coll_state_ranks_seen(const struct coll_state *s)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < s->n_ranks; i++)
		n += s->ranks[i].state != 0;
	return n;
}

uint32_t coll_state_nodes(const struct coll_state *s)
{
	/* An open-addressing set of the nodes seen (a node is a hash
	 * already), counting at most NODES_MAX as before. It was a linear
	 * one: 65 536 ranks on 1024 nodes made it 33 M comparisons, and the
	 * dashboard's status line asks every redraw (docs/collector.md, "At
	 * 65,536 ranks"). */
	enum { NODES_MAX = 4096, SLOTS = 2 * NODES_MAX };
	uint64_t seen[SLOTS];
	uint64_t used[SLOTS / 64] = {0};
	uint32_t n = 0;
	for (uint32_t i = 0; i < s->n_ranks && n < NODES_MAX; i++) {
		if (!s->ranks[i].state)
			continue;
		uint64_t node = s->ranks[i].node;
		uint32_t j = (uint32_t)((node * 0x9e3779b97f4a7c15ull) >> 51); /* 13 bits */
		while (used[j / 64] >> (j % 64) & 1 && seen[j] != node)
			j = (j + 1) % SLOTS;
		if (!(used[j / 64] >> (j % 64) & 1)) {
			used[j / 64] |= 1ull << (j % 64);
			seen[j] = node;
			n++;
		}
	}
	return n;
}
