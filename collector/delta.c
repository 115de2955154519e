/* Tick deltas: building, merging and the message between collectors. See
 * delta.h; the byte layout is in docs/collector.md. */
#include "delta.h"

#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "ctr_cols.h"
#include "events.h"
#include "frame.h"

#define MAX_NAMES    (1u << 20)
#define MAX_COUNTERS (1u << 22)
#define MAX_PROCS    (1u << 20)

void coll_delta_init(struct coll_delta *d, int64_t t, uint64_t tick_ns)
{
	memset(d, 0, sizeof(*d));
	coll_tick_init(&d->tick, t, tick_ns);
}

static void free_names(struct coll_delta *d)
{
	for (uint32_t i = 0; i < d->n_names; i++)
		free(d->names[i].text);
	d->n_names = 0;
}

void coll_delta_free(struct coll_delta *d)
{
	free_names(d);
	free(d->names);
	coll_ctrset_free(&d->ctr);
	free(d->procs);
	coll_instset_free(&d->inst);
	coll_nodeset_free(&d->nodes);
	coll_tick_free(&d->tick);
	coll_delta_init(d, 0, d->tick.tick_ns);
}

void coll_delta_reset(struct coll_delta *d, int64_t t)
{
	free_names(d);
	coll_ctrset_clear(&d->ctr);
	d->n_procs = 0;
	coll_instset_clear(&d->inst);
	memset(&d->mon, 0, sizeof(d->mon));
	d->dist = (struct coll_rank_dist){0};
	d->nodes.n = 0;
	coll_tick_reset(&d->tick, t);
}

static bool delta_empty(const struct coll_delta *d)
{
	static const struct coll_monitor zero;
	return d->tick.n == 0 && d->n_names == 0 && d->ctr.n == 0 && d->n_procs == 0 &&
	       d->inst.n == 0 && d->dist.ranks == 0 && d->nodes.n == 0 &&
	       memcmp(&d->mon, &zero, sizeof(zero)) == 0;
}

bool coll_delta_pass_memory(struct coll_delta *from, struct coll_delta *to)
{
	if (from == to || !delta_empty(from) || !delta_empty(to))
		return false;
	int64_t t_from = from->tick.t, t_to = to->tick.t;
	struct coll_delta tmp = *from;
	*from = *to;
	*to = tmp;
	from->tick.t = t_from;
	to->tick.t = t_to;
	return true;
}

/* Makes room for one more element of a growable array: doubling it while
 * small, a quarter more past 64 Ki elements (the root's million counters:
 * doubled, a tenth of the array stood empty, 7 MiB at 4096 ranks; glibc
 * moves large blocks by remapping them, so growing more often costs no
 * copies). */
static enum iop_err reserve(void **v, uint32_t n, uint32_t *cap, size_t size, uint32_t max)
{
	if (n < *cap)
		return IOP_OK;
	if (n >= max)
		return IOP_ERR_OVERSIZED;
	uint32_t c = !*cap ? 64 : *cap < (1u << 16) ? *cap * 2 : *cap + *cap / 4;
	if (c > max)
		c = max;
	void *p = realloc(*v, (size_t)c * size);
	if (!p)
		return IOP_ERR_NOMEM;
	*v = p;
	*cap = c;
	return IOP_OK;
}

enum iop_err coll_delta_add_name(struct coll_delta *d, uint64_t hash, uint8_t kind,
                                 const char *text, uint32_t len)
{
	enum iop_err e = reserve((void **)&d->names, d->n_names, &d->cap_names, sizeof(*d->names),
	                         MAX_NAMES);
	if (e)
		return e;
	char *copy = malloc((size_t)len + 1);
	if (!copy)
		return IOP_ERR_NOMEM;
	memcpy(copy, text, len);
	copy[len] = 0;
	d->names[d->n_names++] =
		(struct coll_name){.hash = hash, .text = copy, .len = len, .kind = kind};
	return IOP_OK;
}

static bool counter_same(const struct coll_counter *a, const struct coll_counter *b)
{
	return a->file == b->file && a->rank == b->rank && a->node == b->node && a->pid == b->pid &&
	       a->image == b->image && a->layer == b->layer && a->cls == b->cls;
}

static uint64_t counter_hash(const struct coll_counter *c)
{
	uint64_t h = c->file * UINT64_C(0x9e3779b97f4a7c15);
	h ^= ((uint64_t)c->node << 32 | c->pid) + UINT64_C(0x632be59bd9b4e019) + (h << 6) + (h >> 2);
	h ^= ((uint64_t)c->image << 40 | (uint64_t)c->rank << 8 | (uint64_t)c->layer << 4 | c->cls) +
	     UINT64_C(0x9e3779b97f4a7c15) + (h << 6) + (h >> 2);
	return h * UINT64_C(0xff51afd7ed558ccd);
}

void coll_ctrset_free(struct coll_ctrset *s)
{
	free(s->v);
	free(s->slot);
	memset(s, 0, sizeof(*s));
}

void coll_ctrset_clear(struct coll_ctrset *s)
{
	if (s->n)
		memset(s->slot, 0, s->n_slots * sizeof(*s->slot));
	s->n = 0;
}

/* A slot holds the counter's position + 1 (at most MAX_COUNTERS) in its
 * low CTR_BITS and a tag from its hash above, as a tick's index does
 * (tick.c): a probe reads another counter only when the tags match, and
 * adding a new counter reads none. */
#define CTR_BITS 23
#define CTR_MASK ((UINT32_C(1) << CTR_BITS) - 1)
_Static_assert(MAX_COUNTERS <= CTR_MASK, "a position + 1 must fit in a slot");

/* The set's index takes at most 2 * MAX_COUNTERS slots: the hash's bits
 * [32, 55) place a counter, its top 9 bits are the tag. */
static uint32_t ctr_tag(uint64_t h)
{
	return (uint32_t)(h >> (64 - (32 - CTR_BITS))) << CTR_BITS;
}

/* The slot of c (h = counter_hash(c)), or the empty one it would take. */
static uint32_t ctr_probe(const struct coll_ctrset *s, const struct coll_counter *c, uint64_t h)
{
	uint32_t mask = s->n_slots - 1, i = (uint32_t)(h >> 32) & mask, tag = ctr_tag(h);
	for (uint32_t k; (k = s->slot[i]); i = (i + 1) & mask)
		if ((k & ~CTR_MASK) == tag && counter_same(&s->v[(k & CTR_MASK) - 1], c))
			break;
	return i;
}

static enum iop_err ctr_index_grow(struct coll_ctrset *s)
{
	uint32_t n_slots = s->n_slots ? s->n_slots * 2 : 128;
	uint32_t *v = calloc(n_slots, sizeof(*v));
	if (!v)
		return IOP_ERR_NOMEM;
	free(s->slot);
	s->slot = v;
	s->n_slots = n_slots;
	for (uint32_t k = 0; k < s->n; k++) {
		uint64_t h = counter_hash(&s->v[k]);
		s->slot[ctr_probe(s, &s->v[k], h)] = ctr_tag(h) | (k + 1);
	}
	return IOP_OK;
}

static uint64_t lift(uint64_t *dst, uint64_t v)
{
	uint64_t up = v > *dst ? v - *dst : 0;
	*dst += up;
	return up;
}

static uint32_t lift32(uint32_t *dst, uint32_t v)
{
	uint32_t up = v > *dst ? v - *dst : 0;
	*dst += up;
	return up;
}

/* coll_ctrset_add with c's hash (counter_hash) given. */
static enum iop_err ctr_add(struct coll_ctrset *s, const struct coll_counter *c, uint64_t h,
                            uint32_t max, struct coll_counter *grew)
{
	struct coll_counter scratch;
	if (!grew)
		grew = &scratch;
	*grew = *c;
	if (max > MAX_COUNTERS)
		max = MAX_COUNTERS; /* what a slot can hold */
	if ((s->n + 1) * 2 > s->n_slots) {
		if (s->n >= max)
			return IOP_ERR_OVERSIZED;
		enum iop_err e = ctr_index_grow(s);
		if (e)
			return e;
	}
	uint32_t i = ctr_probe(s, c, h);
	if (s->slot[i]) {
		struct coll_counter *d = &s->v[(s->slot[i] & CTR_MASK) - 1];
		grew->ops = lift(&d->ops, c->ops);
		grew->bytes = lift(&d->bytes, c->bytes);
		grew->time_ns = lift(&d->time_ns, c->time_ns);
		grew->errors = lift32(&d->errors, c->errors);
		for (unsigned k = 0; k < COLL_PAT__COUNT; k++)
			grew->pat[k] = lift32(&d->pat[k], c->pat[k]);
		return IOP_OK;
	}
	enum iop_err e = reserve((void **)&s->v, s->n, &s->cap, sizeof(*s->v), max);
	if (e)
		return e;
	s->v[s->n++] = *c;
	s->slot[i] = ctr_tag(h) | s->n;
	return IOP_OK;
}

enum iop_err coll_ctrset_add(struct coll_ctrset *s, const struct coll_counter *c, uint32_t max,
                             struct coll_counter *grew)
{
	return ctr_add(s, c, counter_hash(c), max, grew);
}

enum iop_err coll_delta_add_counter(struct coll_delta *d, const struct coll_counter *c)
{
	return coll_ctrset_add(&d->ctr, c, MAX_COUNTERS, NULL);
}

enum iop_err coll_delta_add_counters(struct coll_delta *d, const struct coll_counter *v, uint32_t n)
{
	return coll_ctrset_add_all(&d->ctr, v, n, MAX_COUNTERS);
}

enum iop_err coll_delta_add_proc(struct coll_delta *d, const struct coll_proc *p)
{
	enum iop_err e =
		reserve((void **)&d->procs, d->n_procs, &d->cap_procs, sizeof(*d->procs), MAX_PROCS);
	if (!e)
		d->procs[d->n_procs++] = *p;
	return e;
}

void coll_monitor_add(struct coll_monitor *dst, const struct coll_monitor *src)
{
	dst->frames += src->frames;
	dst->events += src->events;
	dst->produced += src->produced;
	dst->dropped += src->dropped;
	dst->late += src->late;
	dst->rejected_frames += src->rejected_frames;
	dst->shim_ns += src->shim_ns;
}

/* Before adding counter i of v to s, the index slot of counter
 * i + 2 * CTR_AHEAD and the counter behind the slot of i + CTR_AHEAD are
 * fetched: the root adds its leaves' hundreds of thousands of counters to
 * a set of as many, and each add waited on memory twice. Hints only. */
#define CTR_AHEAD 8

/* Each counter's hash is computed once, when it is 2 * CTR_AHEAD ahead,
 * and kept until it is added. */
#define CTR_RING 32 /* a power of two > 2 * CTR_AHEAD */
_Static_assert(CTR_RING > 2 * CTR_AHEAD && (CTR_RING & (CTR_RING - 1)) == 0, "CTR_RING");

enum iop_err coll_ctrset_add_all(struct coll_ctrset *s, const struct coll_counter *v, uint32_t n,
                                 uint32_t max)
{
	return coll_ctrset_add_all_n(s, v, n, max, NULL);
}

enum iop_err coll_ctrset_add_all_n(struct coll_ctrset *s, const struct coll_counter *v, uint32_t n,
                                   uint32_t max, uint64_t *refused)
{
	uint64_t h[CTR_RING];
	for (uint32_t j = 0; j < n && j < 2 * CTR_AHEAD; j++)
		h[j % CTR_RING] = counter_hash(&v[j]);
	enum iop_err first = IOP_OK;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t far = i + 2 * CTR_AHEAD, near = i + CTR_AHEAD;
		if (far < n)
			h[far % CTR_RING] = counter_hash(&v[far]);
		/* hints only (the mask may change as the set grows) */
		if (s->n_slots) {
			uint32_t mask = s->n_slots - 1;
			if (far < n)
				__builtin_prefetch(&s->slot[(uint32_t)(h[far % CTR_RING] >> 32) & mask]);
			if (near < n) {
				uint32_t k = s->slot[(uint32_t)(h[near % CTR_RING] >> 32) & mask];
				if (k)
					__builtin_prefetch(&s->v[(k & CTR_MASK) - 1]);
			}
		}
		enum iop_err e = ctr_add(s, &v[i], h[i % CTR_RING], max, NULL);
		if (e && !first)
			first = e;
		if (e && refused)
			(*refused)++;
	}
	return first;
}

static enum iop_err merge(struct coll_delta *dst, struct coll_delta *src, bool take)
{
	enum iop_err e = take ? coll_tick_merge_take(&dst->tick, &src->tick)
	                      : coll_tick_merge(&dst->tick, &src->tick);
	for (uint32_t i = 0; !e && i < src->n_names; i++)
		e = coll_delta_add_name(dst, src->names[i].hash, src->names[i].kind,
		                        src->names[i].text, src->names[i].len);
	if (!e)
		e = coll_ctrset_add_all(&dst->ctr, src->ctr.v, src->ctr.n, MAX_COUNTERS);
	for (uint32_t i = 0; !e && i < src->n_procs; i++)
		e = coll_delta_add_proc(dst, &src->procs[i]);
	if (!e)
		e = coll_instset_merge(&dst->inst, &src->inst);
	if (!e)
		coll_monitor_add(&dst->mon, &src->mon);
	if (!e && !dst->dist.ranks)
		dst->dist = src->dist;
	if (!e)
		e = coll_nodeset_merge(&dst->nodes, &src->nodes);
	return e;
}

enum iop_err coll_delta_merge(struct coll_delta *dst, const struct coll_delta *src)
{
	/* src is only read when take is false */
	return merge(dst, (struct coll_delta *)src, false);
}

enum iop_err coll_delta_merge_take(struct coll_delta *dst, struct coll_delta *src)
{
	return merge(dst, src, true);
}

void coll_name_encode(const struct coll_name *n, struct iop_wcur *c)
{
	iop_put_u64le(c, n->hash);
	iop_put_u8(c, n->kind);
	iop_put_varint(c, n->len);
	iop_put_bytes(c, n->text, n->len);
}

enum iop_err coll_name_decode(struct coll_name *n, struct iop_rcur *c)
{
	memset(n, 0, sizeof(*n));
	n->hash = iop_get_u64le(c);
	n->kind = iop_get_u8(c);
	n->len = (uint32_t)iop_get_varint_max(c, IOP_NAME_MAX);
	const uint8_t *text = iop_get_bytes(c, n->len);
	if (c->err)
		return c->err;
	if (!coll_name_kind_ok(n->kind) || memchr(text, 0, n->len))
		return IOP_ERR_MALFORMED;
	n->text = (char *)text;
	return IOP_OK;
}

/* The monitor counts in wire order. */
#define MON_FIELDS(X) X(frames) X(events) X(produced) X(dropped) X(late) X(rejected_frames) X(shim_ns)

void coll_monitor_encode(const struct coll_monitor *m, struct iop_wcur *c)
{
#define PUT(f) iop_put_varint(c, m->f);
	MON_FIELDS(PUT)
#undef PUT
}

void coll_monitor_decode(struct coll_monitor *m, struct iop_rcur *c)
{
#define GET(f) m->f = iop_get_varint(c);
	MON_FIELDS(GET)
#undef GET
}

void coll_delta_encode_body(const struct coll_delta *d, struct iop_wcur *c)
{
	coll_delta_encode_body_v(d, c, COLL_DELTA_VERSION);
}

void coll_delta_encode_body_v(const struct coll_delta *d, struct iop_wcur *c, unsigned version)
{
	coll_monitor_encode(&d->mon, c);
	iop_put_varint(c, d->n_names);
	for (uint32_t i = 0; i < d->n_names; i++)
		coll_name_encode(&d->names[i], c);
	coll_counters_encode(d->ctr.v, d->ctr.n, c, version);
	iop_put_varint(c, d->n_procs);
	for (uint32_t i = 0; i < d->n_procs; i++) {
		const struct coll_proc *p = &d->procs[i];
		iop_put_u64le(c, p->t_ns);
		iop_put_varint(c, p->rank);
		iop_put_u32le(c, p->node);
		iop_put_varint(c, p->pid);
		iop_put_u8(c, p->state);
	}
	coll_tick_encode_v(&d->tick, c, version);
	coll_instset_encode(&d->inst, c);
	if (version >= 5)
		coll_rank_dist_encode(&d->dist, c);
	if (version >= 6)
		coll_nodeset_encode(&d->nodes, c);
}

static enum iop_err decode_names(struct coll_delta *d, struct iop_rcur *c)
{
	uint64_t n = coll_get_count(c, MAX_NAMES, 10);
	for (uint64_t i = 0; !c->err && i < n; i++) {
		struct coll_name nm;
		enum iop_err e = coll_name_decode(&nm, c);
		if (e == IOP_ERR_MALFORMED && !c->err)
			return e;
		if (e)
			break;
		e = coll_delta_add_name(d, nm.hash, nm.kind, nm.text, nm.len);
		if (e)
			return e;
	}
	return c->err;
}

static enum iop_err decode_counters(struct coll_delta *d, struct iop_rcur *c, unsigned version)
{
	struct coll_ctr_reader r;
	enum iop_err e = coll_ctr_reader_open(&r, c, MAX_COUNTERS, version);
	for (uint64_t i = 0; !e && i < r.n; i++) {
		struct coll_counter k;
		if (!(e = coll_ctr_reader_next(&r, &k)))
			e = coll_delta_add_counter(d, &k);
	}
	return e ? e : coll_ctr_reader_done(&r);
}

static enum iop_err decode_procs(struct coll_delta *d, struct iop_rcur *c)
{
	uint64_t n = coll_get_count(c, MAX_PROCS, 16);
	for (uint64_t i = 0; !c->err && i < n; i++) {
		struct coll_proc p = {0};
		p.t_ns = iop_get_u64le(c);
		p.rank = (uint32_t)iop_get_varint_max(c, UINT32_MAX);
		p.node = iop_get_u32le(c);
		p.pid = (uint32_t)iop_get_varint_max(c, UINT32_MAX);
		p.state = iop_get_u8(c);
		if (c->err)
			break;
		if (p.state < COLL_PROC_JOINED || p.state > COLL_PROC_GONE)
			return IOP_ERR_MALFORMED;
		enum iop_err e = coll_delta_add_proc(d, &p);
		if (e)
			return e;
	}
	return c->err;
}

enum iop_err coll_delta_decode_body(struct coll_delta *d, struct iop_rcur *c)
{
	return coll_delta_decode_body_v(d, c, COLL_DELTA_VERSION);
}

enum iop_err coll_delta_decode_body_v(struct coll_delta *d, struct iop_rcur *c, unsigned version)
{
	coll_delta_reset(d, 0);
	if (version < COLL_DELTA_VERSION_MIN || version > COLL_DELTA_VERSION)
		return IOP_ERR_BAD_VERSION;
	coll_monitor_decode(&d->mon, c);
	enum iop_err e = c->err;
	if (!e)
		e = decode_names(d, c);
	if (!e)
		e = decode_counters(d, c, version);
	if (!e)
		e = decode_procs(d, c);
	if (!e)
		e = coll_tick_decode_v(&d->tick, c, version);
	if (!e && version >= 4)
		e = coll_instset_decode(&d->inst, c);
	if (!e && version >= 5)
		e = coll_rank_dist_decode(&d->dist, c);
	if (!e && version >= 6)
		e = coll_nodeset_decode(&d->nodes, c);
	if (e)
		coll_delta_reset(d, 0);
	return e;
}

#define HDR_LEN 32 /* magic, version, flags, job, sender, seq */

enum iop_err coll_encode_grown(uint8_t **buf, size_t *cap, size_t max, size_t tail,
                                 void (*fill)(const void *arg, struct iop_wcur *c),
                                 const void *arg, size_t *len)
{
	if (!*buf || *cap < 65536) {
		uint8_t *b = realloc(*buf, 65536);
		if (!b)
			return IOP_ERR_NOMEM;
		*buf = b;
		*cap = 65536;
	}
	for (;;) {
		struct iop_wcur c = iop_wcur_make(*buf, *cap - tail);
		fill(arg, &c);
		if (c.err == IOP_OK) {
			*len = (size_t)(c.p - *buf);
			return IOP_OK;
		}
		if (*cap >= max)
			return IOP_ERR_OVERSIZED;
		uint8_t *b = realloc(*buf, *cap * 2);
		if (!b)
			return IOP_ERR_NOMEM;
		*buf = b;
		*cap *= 2;
	}
}

static void fill_body(const void *arg, struct iop_wcur *c)
{
	coll_delta_encode_body(arg, c);
}

enum iop_err coll_delta_encode_body_buf(const struct coll_delta *d, size_t max, uint8_t **buf,
                                        size_t *cap, size_t *len)
{
	return coll_encode_grown(buf, cap, max, 0, fill_body, d, len);
}

struct message {
	const struct coll_delta *d;
	const struct coll_delta_hdr *h;
};

static void fill_message(const void *arg, struct iop_wcur *c)
{
	const struct message *m = arg;
	iop_put_u32le(c, COLL_DELTA_MAGIC);
	iop_put_u16le(c, COLL_DELTA_VERSION);
	iop_put_u16le(c, 0);
	iop_put_u64le(c, m->h->job_id);
	iop_put_u64le(c, m->h->sender);
	iop_put_u64le(c, m->h->seq);
	coll_delta_encode_body(m->d, c);
}

/* A message's body compressed in place (zstd), when that makes it shorter
 * and the decoder's bound on expansion holds: the flag, the body's length,
 * the zstd frame. The message's new length; n when it stays as it was (too
 * short to gain, no memory, or no gain). */
static size_t squeeze(uint8_t *buf, size_t n)
{
	size_t raw = n - HDR_LEN;
	if (raw < COLL_DELTA_Z_MIN)
		return n;
	size_t bound = ZSTD_compressBound(raw);
	uint8_t *z = malloc(bound);
	if (!z)
		return n;
	size_t zn = ZSTD_compress(z, bound, buf + HDR_LEN, raw, COLL_DELTA_Z_LEVEL);
	uint8_t len[IOP_VARINT_MAX];
	struct iop_wcur lc = iop_wcur_make(len, sizeof len);
	iop_put_varint(&lc, raw);
	size_t ln = (size_t)(lc.p - len);
	if (ZSTD_isError(zn) || ln + zn >= raw || raw > COLL_DELTA_Z_RATIO * zn) {
		free(z);
		return n;
	}
	memcpy(buf + HDR_LEN, len, ln);
	memcpy(buf + HDR_LEN + ln, z, zn);
	free(z);
	iop_store_u16le(buf + 6, COLL_DELTA_F_ZSTD);
	return HDR_LEN + ln + zn;
}

enum iop_err coll_delta_encode(const struct coll_delta *d, const struct coll_delta_hdr *h,
                               const struct iop_key *key, uint8_t **buf, size_t *cap,
                               size_t *len)
{
	struct message m = {d, h};
	size_t n;
	enum iop_err e = coll_encode_grown(buf, cap, COLL_DELTA_MAX_BODY, IOP_MAC_BYTES, fill_message,
	                                   &m, &n);
	if (e)
		return e;
	n = squeeze(*buf, n);
	*len = n + IOP_MAC_BYTES;
	return iop_mac(key, *buf, n, *buf + n);
}

/* The compressed body of an authenticated message, expanded into *raw
 * (malloc'd; free() it) with c reading it. */
static enum iop_err unsqueeze(struct iop_rcur *c, uint8_t **raw)
{
	uint64_t rn = iop_get_varint(c);
	if (c->err)
		return c->err;
	size_t zn = iop_rcur_left(c);
	if (rn > COLL_DELTA_MAX_BODY || rn > COLL_DELTA_Z_RATIO * zn)
		return IOP_ERR_MALFORMED;
	*raw = malloc(rn ? rn : 1);
	if (!*raw)
		return IOP_ERR_NOMEM;
	size_t got = ZSTD_decompress(*raw, rn, c->p, zn);
	if (ZSTD_isError(got) || got != rn)
		return IOP_ERR_MALFORMED;
	*c = iop_rcur_make(*raw, rn);
	return IOP_OK;
}

enum iop_err coll_delta_decode(struct coll_delta *d, struct coll_delta_hdr *h, const uint8_t *buf,
                               size_t len, const struct iop_key *key, uint64_t job_id)
{
	coll_delta_reset(d, 0);
	if (len < HDR_LEN + IOP_MAC_BYTES)
		return IOP_ERR_TRUNCATED;
	struct iop_rcur c = iop_rcur_make(buf, len - IOP_MAC_BYTES);
	if (iop_get_u32le(&c) != COLL_DELTA_MAGIC)
		return IOP_ERR_BAD_MAGIC;
	if (iop_get_u16le(&c) != COLL_DELTA_VERSION)
		return IOP_ERR_BAD_VERSION;
	uint16_t flags = iop_get_u16le(&c);
	h->job_id = iop_get_u64le(&c);
	h->sender = iop_get_u64le(&c);
	h->seq = iop_get_u64le(&c);
	if (!iop_mac_ok(key, buf, len - IOP_MAC_BYTES, buf + len - IOP_MAC_BYTES))
		return IOP_ERR_BAD_MAC;
	if (h->job_id != job_id)
		return IOP_ERR_BAD_MAC; /* a frame of another job keyed alike: foreign */
	if (flags & ~COLL_DELTA_F_ZSTD)
		return IOP_ERR_MALFORMED;
	uint8_t *raw = NULL;
	enum iop_err e = flags & COLL_DELTA_F_ZSTD ? unsqueeze(&c, &raw) : IOP_OK;
	if (!e)
		e = coll_delta_decode_body(d, &c);
	if (!e && iop_rcur_left(&c))
		e = IOP_ERR_INCONSISTENT;
	free(raw);
	if (e)
		coll_delta_reset(d, 0);
	return e;
}
