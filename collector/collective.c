/* Collective calls matched across ranks. See collective.h. */
#include "collective.h"

#include <stdlib.h>
#include <string.h>

#include "events.h"
#include "table.h"

/* ---- the set ---- */

void coll_instset_free(struct coll_instset *s)
{
	free(s->v);
	free(s->a);
	free(s->slot);
	memset(s, 0, sizeof(*s));
}

void coll_instset_clear(struct coll_instset *s)
{
	if (s->n && s->slot)
		memset(s->slot, 0, s->n_slots * sizeof(*s->slot));
	s->n = s->na = 0;
}

static uint32_t hash_key(uint64_t file, unsigned layer, uint32_t seq)
{
	uint64_t h = (file ^ (uint64_t)seq << 32 ^ (uint64_t)layer << 29 ^ seq) *
	             UINT64_C(0x9e3779b97f4a7c15);
	return (uint32_t)(h >> 32);
}

/* The slot of (file, layer, seq): its instance's, or the empty one where
 * it would go. */
static uint32_t probe(const struct coll_instset *s, uint64_t file, unsigned layer, uint32_t seq)
{
	uint32_t mask = s->n_slots - 1;
	for (uint32_t i = hash_key(file, layer, seq) & mask;; i = (i + 1) & mask) {
		uint32_t at = s->slot[i];
		if (!at)
			return i;
		const struct coll_inst *e = &s->v[at - 1];
		if (e->file == file && e->seq == seq && e->layer == layer)
			return i;
	}
}

/* The instance (file, layer, seq), made when new; NULL when the set is
 * full (OVERSIZED) or out of memory (*e says which). */
static struct coll_inst *inst_of(struct coll_instset *s, uint64_t file, unsigned layer,
                                 unsigned op, uint32_t seq, uint32_t size, enum iop_err *e)
{
	*e = IOP_OK;
	if (s->n_slots == 0 || s->n + 1 > s->n_slots / 2) {
		if (s->n >= COLL_INST_MAX)
			goto find; /* full: only instances already there take arrivals */
		*e = coll_table_grow((void **)&s->v, sizeof(*s->v), &s->cap, 64, &s->slot,
		                     &s->n_slots);
		if (*e)
			return NULL;
		for (uint32_t i = 0; i < s->n; i++)
			s->slot[probe(s, s->v[i].file, s->v[i].layer, s->v[i].seq)] = i + 1;
	}
find:;
	uint32_t sl = probe(s, file, layer, seq);
	struct coll_inst *in;
	if (s->slot[sl]) {
		in = &s->v[s->slot[sl] - 1];
	} else {
		if (s->n >= COLL_INST_MAX || s->n >= s->cap) {
			*e = IOP_ERR_OVERSIZED;
			return NULL;
		}
		in = &s->v[s->n];
		*in = (struct coll_inst){.file = file, .seq = seq, .size = size, .layer = (uint8_t)layer,
		                         .op = (uint8_t)op};
		s->slot[sl] = ++s->n;
	}
	if (size > in->size) /* ranks disagree (a forged frame): the larger */
		in->size = size;
	return in;
}

/* Appends arrival a to instance in (of s). */
static enum iop_err arrive(struct coll_instset *s, struct coll_inst *in,
                           const struct coll_arrival *a)
{
	if (s->na >= COLL_ARRIVALS_MAX)
		return IOP_ERR_OVERSIZED;
	/* in points into s->v, which this does not move */
	enum iop_err e = coll_array_room((void **)&s->a, sizeof(*s->a), s->na, &s->cap_a, 256);
	if (e)
		return e;
	struct coll_arrival *na = &s->a[s->na];
	*na = *a;
	na->next = 0;
	if (na->excl_ns > na->dur_ns)
		na->excl_ns = na->dur_ns;
	uint32_t at = ++s->na;
	if (in->tail)
		s->a[in->tail - 1].next = at;
	else
		in->head = at;
	in->tail = at;
	in->n++;
	return IOP_OK;
}

enum iop_err coll_instset_add(struct coll_instset *s, uint64_t file, unsigned layer, unsigned op,
                              uint32_t seq, uint32_t size, const struct coll_arrival *a)
{
	if (s->na >= COLL_ARRIVALS_MAX)
		return IOP_ERR_OVERSIZED;
	enum iop_err e;
	struct coll_inst *in = inst_of(s, file, layer, op, seq, size, &e);
	return in ? arrive(s, in, a) : e;
}

/* Adds instance in of set from (its arrivals) to dst, with one look-up of
 * its instance there; the new instance's tick is in's. */
static enum iop_err add_inst(struct coll_instset *dst, const struct coll_instset *from,
                             const struct coll_inst *in)
{
	enum iop_err e;
	struct coll_inst *to = inst_of(dst, in->file, in->layer, in->op, in->seq, in->size, &e);
	if (!to)
		return e;
	if (!to->n)
		to->t = in->t;
	for (uint32_t at = in->head; at && !e; at = from->a[at - 1].next)
		e = arrive(dst, to, &from->a[at - 1]);
	return e;
}

enum iop_err coll_instset_merge(struct coll_instset *dst, const struct coll_instset *src)
{
	enum iop_err first = IOP_OK;
	for (uint32_t i = 0; i < src->n; i++) {
		enum iop_err e = add_inst(dst, src, &src->v[i]);
		if (e && !first)
			first = e;
	}
	return first;
}

/* ---- encoding ---- */

void coll_instset_encode(const struct coll_instset *s, struct iop_wcur *c)
{
	iop_put_varint(c, s->n);
	for (uint32_t i = 0; i < s->n; i++) {
		const struct coll_inst *in = &s->v[i];
		uint64_t min = UINT64_MAX;
		for (uint32_t at = in->head; at; at = s->a[at - 1].next)
			if (s->a[at - 1].dur_ns < min)
				min = s->a[at - 1].dur_ns;
		iop_put_u64le(c, in->file);
		iop_put_u8(c, (uint8_t)(in->layer << 5 | in->op));
		iop_put_varint(c, in->seq);
		iop_put_varint(c, in->size);
		iop_put_varint(c, in->n);
		iop_put_varint(c, min);
		/* durations above the shortest and time in calls issued: small
		 * numbers where ranks leave together */
		for (uint32_t at = in->head; at; at = s->a[at - 1].next) {
			const struct coll_arrival *a = &s->a[at - 1];
			iop_put_varint(c, a->rank);
			iop_put_varint(c, a->dur_ns - min);
			iop_put_varint(c, a->dur_ns > a->excl_ns ? a->dur_ns - a->excl_ns : 0);
		}
	}
}

enum iop_err coll_instset_decode(struct coll_instset *s, struct iop_rcur *c)
{
	/* an instance takes at least 14 bytes, an arrival 3 */
	uint64_t n = iop_get_varint(c);
	if (c->err)
		return c->err;
	if (n > COLL_INST_MAX)
		return IOP_ERR_OVERSIZED;
	if (n > iop_rcur_left(c) / 14)
		return IOP_ERR_TRUNCATED;
	for (uint64_t i = 0; !c->err && i < n; i++) {
		uint64_t file = iop_get_u64le(c);
		uint8_t lo = iop_get_u8(c);
		uint64_t seq = iop_get_varint(c), size = iop_get_varint(c);
		uint64_t na = iop_get_varint(c), min = iop_get_varint(c);
		if (c->err)
			break;
		unsigned layer = lo >> 5, op = lo & 31;
		if (layer >= IOP_LAYER__COUNT || op >= IOP_OP__COUNT || seq == 0 || seq > UINT32_MAX ||
		    size == 0 || size > UINT32_MAX || na == 0 || na > COLL_ARRIVALS_MAX)
			return IOP_ERR_MALFORMED;
		if (na > iop_rcur_left(c) / 3)
			return IOP_ERR_TRUNCATED;
		for (uint64_t j = 0; j < na; j++) {
			uint64_t rank = iop_get_varint(c), above = iop_get_varint(c);
			uint64_t child = iop_get_varint(c);
			if (c->err)
				break;
			uint64_t dur = min + above;
			if (rank > UINT32_MAX || dur < min || child > dur)
				return IOP_ERR_MALFORMED;
			struct coll_arrival a = {.dur_ns = dur, .excl_ns = dur - child,
			                         .rank = (uint32_t)rank};
			enum iop_err e = coll_instset_add(s, file, layer, op, (uint32_t)seq,
			                                  (uint32_t)size, &a);
			if (e)
				return e;
		}
	}
	return c->err;
}

/* ---- matching ---- */

void coll_matcher_free(struct coll_matcher *m)
{
	coll_instset_free(&m->pending);
	coll_instset_free(&m->spare);
	free(m->tmp);
	free(m->seen);
	memset(m, 0, sizeof(*m));
}

/* Ranks the duplicate check covers with its table (state.c keeps no
 * higher ranks either); a forged higher rank goes unchecked. */
#define SEEN_MAX_RANK (1u << 24)

/* Whether rank was seen already in the instance of generation m->gen
 * (marks it seen). Out of memory: not seen. */
static bool seen_before(struct coll_matcher *m, uint32_t rank)
{
	if (rank >= SEEN_MAX_RANK)
		return false;
	if (rank >= m->n_seen) {
		uint32_t n = m->n_seen ? m->n_seen : 1024;
		while (n <= rank)
			n *= 2;
		uint32_t *v = realloc(m->seen, (size_t)n * sizeof(*v));
		if (!v)
			return false;
		memset(v + m->n_seen, 0, (size_t)(n - m->n_seen) * sizeof(*v));
		m->seen = v;
		m->n_seen = n;
	}
	if (m->seen[rank] == m->gen)
		return true;
	m->seen[rank] = m->gen;
	return false;
}

/* Adds to a row of k (made when new); a row out of memory is left out. */
static void add_wait(struct coll_tick *k, const struct coll_key *key, uint64_t wait,
                     uint64_t match, uint64_t last, uint64_t late)
{
	struct coll_cell *c;
	if (coll_tick_row(k, key, &c) != IOP_OK || !c)
		return;
	c->wait_ns += wait;
	c->match_ops += match;
	c->last_ops += last;
	c->late_ns += late;
}

/* Matches instance in of set s into k's rows; with whole, only when
 * every rank of its communicator is in (false: not matched, kept). */
static bool match(struct coll_matcher *m, const struct coll_instset *s, const struct coll_inst *in,
                  struct coll_tick *k, bool whole)
{
	if (in->n < 2)
		return !whole;
	if (in->n > m->cap_tmp) {
		struct coll_arrival *t = realloc(m->tmp, (size_t)in->n * sizeof(*t));
		if (!t)
			return true; /* out of memory: let it go unmatched */
		m->tmp = t;
		m->cap_tmp = in->n;
	}
	/* a rank counted twice (a delta sent again): its first part only */
	if (++m->gen == 0) { /* wrapped: every mark is old */
		memset(m->seen, 0, (size_t)m->n_seen * sizeof(*m->seen));
		m->gen = 1;
	}
	uint32_t u = 0;
	for (uint32_t at = in->head; at; at = s->a[at - 1].next)
		if (!seen_before(m, s->a[at - 1].rank))
			m->tmp[u++] = s->a[at - 1];
	if (whole && u < in->size)
		return false;
	if (u < 2)
		return true;
	uint32_t last = 0;
	for (uint32_t i = 1; i < u; i++)
		if (m->tmp[i].dur_ns < m->tmp[last].dur_ns)
			last = i;
	uint64_t min = m->tmp[last].dur_ns, own = m->tmp[last].excl_ns, total = 0;
	unsigned cls = iop_op_class(in->op);
	for (uint32_t i = 0; i < u; i++) {
		const struct coll_arrival *a = &m->tmp[i];
		/* the time it came before the last one, but only what of it
		 * is exclusive time beyond the last one's: time in the calls
		 * it issued is its own I/O (or waits counted at their layer) */
		uint64_t wait = a->dur_ns - min;
		uint64_t beyond = a->excl_ns > own ? a->excl_ns - own : 0;
		if (wait > beyond)
			wait = beyond;
		total += wait;
		if (i == last)
			continue;
		struct coll_key key = coll_key_rank(a->rank, in->layer, cls);
		add_wait(k, &key, wait, 1, 0, 0);
	}
	struct coll_key key = coll_key_rank(m->tmp[last].rank, in->layer, cls);
	add_wait(k, &key, 0, 1, 1, total / (u - 1));
	key = coll_key_file(in->file, in->layer, cls);
	add_wait(k, &key, total, u, 1, total / (u - 1));
	key = coll_key_layer(in->layer, cls);
	add_wait(k, &key, total, u, 1, total / (u - 1));
	m->matched++;
	return true;
}

void coll_match_close(struct coll_matcher *m, struct coll_instset *set, struct coll_tick *k,
                      bool flush)
{
	/* the tick's instances join those pending, new ones stamped with it
	 * (none pending, the usual case: the tick's set becomes the pending
	 * one, nothing copied) */
	uint32_t before = m->pending.n;
	if (before == 0) {
		struct coll_instset t = m->pending;
		m->pending = *set;
		*set = t;
	} else {
		(void)coll_instset_merge(&m->pending, set);
	}
	for (uint32_t i = before; i < m->pending.n; i++)
		m->pending.v[i].t = k->t;
	coll_instset_clear(set);
	if (!m->pending.n)
		return;
	/* matched ones go; the others move to spare, which becomes pending */
	struct coll_instset *p = &m->pending, *keep = &m->spare;
	coll_instset_clear(keep);
	bool crowded = p->na > COLL_ARRIVALS_MAX / 2;
	for (uint32_t i = 0; i < p->n; i++) {
		const struct coll_inst *in = &p->v[i];
		bool due = flush || crowded || k->t - in->t >= COLL_MATCH_WAIT_TICKS;
		/* whole when every rank is in (a rank sent twice is not two) */
		if ((due || in->n >= in->size) && match(m, p, in, k, !due))
			continue;
		uint32_t at = keep->n;
		if (add_inst(keep, p, in) == IOP_OK && at < keep->n)
			keep->v[at].t = in->t;
	}
	struct coll_instset t = *p;
	*p = *keep;
	*keep = t;
	coll_instset_clear(keep);
}
