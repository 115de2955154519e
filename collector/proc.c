/* Per-process state of a leaf, and the table of them. See proc.h. */
#include "proc.h"

#include <stdlib.h>
#include <string.h>

#include "table.h"

void proc_init(struct proc *p, uint32_t node, uint32_t pid, uint32_t rank)
{
	memset(p, 0, sizeof(*p));
	p->node = node;
	p->pid = pid;
	p->rank = rank;
}

void proc_free(struct proc *p)
{
	free(p->id_hash);
	free(p->ctr);
	free(p->dirty);
	p->id_hash = p->dirty = NULL;
	p->ctr = NULL;
	p->n_ids = p->n_ctr = p->ctr_slots = p->n_dirty = p->cap_dirty = 0;
}

static uint32_t table_probe(const struct proc_table *t, uint32_t node, uint32_t pid)
{
	uint64_t h = ((uint64_t)node << 32 | pid) * UINT64_C(0x9e3779b97f4a7c15);
	uint32_t mask = t->n_slots - 1, i = (uint32_t)(h >> 32) & mask;
	while (t->slot[i]) {
		const struct proc *p = &t->v[t->slot[i] - 1];
		if (p->node == node && p->pid == pid)
			break;
		i = (i + 1) & mask;
	}
	return i;
}

static enum iop_err table_grow(struct proc_table *t)
{
	if (t->cap * 2 > (1u << 22))
		return IOP_ERR_OVERSIZED;
	void *v = t->v;
	enum iop_err e = coll_table_grow(&v, sizeof(*t->v), &t->cap, 64, &t->slot, &t->n_slots);
	t->v = v;
	if (e)
		return e;
	for (uint32_t i = 0; i < t->n; i++)
		t->slot[table_probe(t, t->v[i].node, t->v[i].pid)] = i + 1;
	return IOP_OK;
}

enum iop_err proc_table_find(struct proc_table *t, uint32_t node, uint32_t pid, uint32_t rank,
                             struct proc **out)
{
	if (t->n_slots) {
		uint32_t s = t->slot[table_probe(t, node, pid)];
		if (s) {
			*out = &t->v[s - 1];
			return IOP_OK;
		}
	}
	if (t->n == t->cap) {
		enum iop_err e = table_grow(t);
		if (e)
			return e;
	}
	struct proc *p = &t->v[t->n];
	proc_init(p, node, pid, rank);
	p->seq = UINT64_MAX; /* nothing accepted yet */
	t->slot[table_probe(t, node, pid)] = ++t->n;
	*out = p;
	return IOP_OK;
}

const struct proc *proc_table_get(const struct proc_table *t, uint32_t node, uint32_t pid)
{
	if (!t->n_slots)
		return NULL;
	uint32_t s = t->slot[table_probe(t, node, pid)];
	return s ? &t->v[s - 1] : NULL;
}

void proc_table_free(struct proc_table *t)
{
	for (uint32_t i = 0; i < t->n; i++)
		proc_free(&t->v[i]);
	free(t->v);
	free(t->slot);
	memset(t, 0, sizeof(*t));
}

void proc_restart(struct proc *p)
{
	proc_free(p);
	memset(&p->stats, 0, sizeof(p->stats));
	memset(p->busy_until, 0, sizeof(p->busy_until));
	p->n_inflight = 0;
	p->ended = p->gone = false;
	p->image++;
}

enum iop_err proc_set_name(struct proc *p, uint32_t id, uint64_t hash)
{
	if (id >= PROC_MAX_IDS)
		return IOP_ERR_OVERSIZED;
	if (id >= p->n_ids) {
		uint32_t n = p->n_ids ? p->n_ids : 64;
		while (n <= id)
			n *= 2;
		uint64_t *h = realloc(p->id_hash, n * sizeof(*h));
		if (!h)
			return IOP_ERR_NOMEM;
		p->id_hash = h;
		memset(h + p->n_ids, 0, (n - p->n_ids) * sizeof(*h));
		p->n_ids = n;
	}
	p->id_hash[id] = hash;
	return IOP_OK;
}

static uint32_t ctr_probe(const struct proc *p, uint64_t key)
{
	uint32_t mask = p->ctr_slots - 1, i = proc_counter_home(p, key);
	while (p->ctr[i].key && p->ctr[i].key != key)
		i = (i + 1) & mask;
	return i;
}

static enum iop_err ctr_grow(struct proc *p)
{
	uint32_t slots = p->ctr_slots ? p->ctr_slots * 2 : 64;
	if (slots / 2 > PROC_MAX_COUNTERS)
		return IOP_ERR_OVERSIZED;
	struct proc_counter *old = p->ctr;
	uint32_t old_slots = p->ctr_slots;
	p->ctr = calloc(slots, sizeof(*p->ctr));
	if (!p->ctr) {
		p->ctr = old;
		return IOP_ERR_NOMEM;
	}
	p->ctr_slots = slots;
	for (uint32_t i = 0; i < old_slots; i++)
		if (old[i].key)
			p->ctr[ctr_probe(p, old[i].key)] = old[i];
	free(old);
	return IOP_OK;
}

/* The counter of key, made when absent; NULL when it cannot be. */
static struct proc_counter *ctr_slot(struct proc *p, uint64_t key)
{
	if ((p->n_ctr + 1) * 2 > p->ctr_slots && ctr_grow(p) != IOP_OK)
		return NULL;
	struct proc_counter *s = &p->ctr[ctr_probe(p, key)];
	if (!s->key) {
		s->key = key;
		p->n_ctr++;
	}
	return s;
}

enum iop_err proc_counter(struct proc *p, const struct iop_counter *c, struct iop_counter *latest,
                          bool *changed, uint64_t pat[COLL_PAT__COUNT])
{
	uint64_t key = proc_counter_key(c);
	if ((p->n_ctr + 1) * 2 > p->ctr_slots) {
		enum iop_err e = ctr_grow(p);
		if (e)
			return e;
	}
	struct proc_counter *s = ctr_slot(p, key);
	if (!s)
		return IOP_ERR_NOMEM;
	/* A count that went backwards is not trusted: the larger one stays. */
	*changed = c->ops > s->ops ||
	           (c->ops == s->ops &&
	            (c->bytes > s->bytes || c->time_ns > s->time_ns || c->errors > s->errors));
	if (*changed) {
		s->ops = c->ops;
		s->bytes = c->bytes > s->bytes ? c->bytes : s->bytes;
		s->time_ns = c->time_ns > s->time_ns ? c->time_ns : s->time_ns;
		s->errors = c->errors > s->errors ? c->errors : s->errors;
	}
	*latest = *c;
	latest->ops = s->ops;
	latest->bytes = s->bytes;
	latest->time_ns = s->time_ns;
	latest->errors = s->errors;
	memcpy(pat, s->pat.n, sizeof(s->pat.n));
	if (*changed)
		s->pat_dirty = false; /* sent with the counter */
	return IOP_OK;
}

struct proc_counter *proc_pattern_counter(struct proc *p, uint32_t file, unsigned layer,
                                          unsigned cls)
{
	struct iop_counter k = {.file = file, .layer = (uint8_t)layer, .cls = (uint8_t)cls};
	return ctr_slot(p, proc_counter_key(&k));
}

enum coll_pattern proc_pattern(struct proc *p, uint32_t file, unsigned layer, unsigned cls,
                               uint64_t offset, uint64_t bytes)
{
	struct proc_counter *s = proc_pattern_counter(p, file, layer, cls);
	return s ? proc_pattern_at(p, s, offset, bytes) : COLL_PAT_RANDOM;
}

bool proc_pattern_mark(struct proc *p, struct proc_counter *s)
{
	if (!s->pat_dirty) {
		if (coll_array_room((void **)&p->dirty, sizeof(*p->dirty), p->n_dirty,
		                    &p->cap_dirty, 16))
			return false;
		p->dirty[p->n_dirty++] = s->key;
		s->pat_dirty = true;
	}
	return true;
}

bool proc_pattern_run(struct proc *p, struct proc_counter *s, uint64_t offset, uint64_t stride,
                      uint64_t bytes, uint64_t n, uint64_t got[COLL_PAT__COUNT])
{
	if (!proc_pattern_mark(p, s))
		return false;
	coll_pat_run(&s->pat, offset, stride, bytes, n, got);
	return true;
}

bool proc_take_pattern(struct proc *p, struct coll_counter *out)
{
	while (p->n_dirty) {
		uint64_t key = p->dirty[--p->n_dirty];
		struct proc_counter *s = p->ctr_slots ? &p->ctr[ctr_probe(p, key)] : NULL;
		if (!s || s->key != key || !s->pat_dirty)
			continue; /* sent with its counter since */
		s->pat_dirty = false;
		uint64_t k = key - 1;
		*out = (struct coll_counter){.file = proc_hash(p, (uint32_t)(k >> 8)),
		                             .ops = s->ops,
		                             .bytes = s->bytes,
		                             .time_ns = s->time_ns,
		                             .errors = coll_count32(s->errors),
		                             .rank = p->rank,
		                             .node = p->node,
		                             .pid = p->pid,
		                             .image = p->image,
		                             .layer = (uint8_t)(k >> 4 & 15),
		                             .cls = (uint8_t)(k & 15)};
		for (unsigned i = 0; i < COLL_PAT__COUNT; i++)
			out->pat[i] = coll_count32(s->pat.n[i]);
		return true;
	}
	return false;
}
