/* The keyframe: encoding and decoding the whole window state. See
 * keyframe.h; the layout is in docs/collector.md ("Keyframe").
 *
 * What is kept is the state's meaning, not its memory layout: a history
 * ring is written oldest first (it comes back with head 0), the ranks
 * array up to its last rank with anything in it (it comes back sized as
 * state.c would size it), hash indexes are rebuilt. Everything a later
 * delta or a reader can see comes back the same, and so does the
 * encoding. */
#include "keyframe.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "ctr_cols.h"
#include "events.h"
#include "frame.h"

/* ------------------------------------------------------------------ encode */

/* Hosts point into the dictionary: each is written as the index + 1 of
 * its name (0: none). Host names are few, so the dictionary is walked once
 * and only its host names are matched against the hosts. */
static void encode_hosts(const struct coll_state *s, struct iop_wcur *c)
{
	/* Not from the heap: a viewer's keyframe is encoded in a forked child
	 * (snapshot.h), where an allocator lock another thread held at the
	 * fork would never be released (ASan's has no fork handler). */
	uint32_t small[1024], *ref = small;
	size_t bytes = (size_t)s->n_hosts * sizeof(*ref);
	if (s->n_hosts > sizeof small / sizeof *small) {
		ref = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (ref == MAP_FAILED) {
			c->err = IOP_ERR_NOMEM;
			return;
		}
	} else {
		memset(small, 0, sizeof small);
	}
	for (uint32_t i = 0; i < s->names.n; i++) {
		if (s->names.v[i].kind != IOP_NAME_HOST)
			continue;
		for (uint32_t j = 0; j < s->n_hosts; j++)
			if (s->hosts[j].name == s->names.v[i].text)
				ref[j] = i + 1;
	}
	iop_put_varint(c, s->n_hosts);
	for (uint32_t j = 0; j < s->n_hosts; j++) {
		iop_put_u32le(c, s->hosts[j].node);
		iop_put_varint(c, ref[j]);
	}
	if (ref != small)
		munmap(ref, bytes);
}

static bool rank_used(const struct coll_rank *r)
{
	return r->node || r->excl_ns || r->wait_ns || r->procs || r->live || r->state;
}

static void encode_ranks(const struct coll_state *s, struct iop_wcur *c)
{
	uint32_t n = s->n_ranks, used = 0;
	while (n && !rank_used(&s->ranks[n - 1]))
		n--;
	for (uint32_t i = 0; i < n; i++)
		used += rank_used(&s->ranks[i]);
	iop_put_varint(c, n);
	iop_put_varint(c, used);
	for (uint32_t i = 0; i < n; i++) {
		const struct coll_rank *r = &s->ranks[i];
		if (!rank_used(r))
			continue;
		iop_put_varint(c, i);
		iop_put_u64le(c, r->node);
		iop_put_varint(c, r->excl_ns);
		iop_put_varint(c, r->wait_ns); /* version 5 on */
		iop_put_varint(c, r->procs);
		iop_put_varint(c, r->live);
		iop_put_u8(c, r->state);
	}
}

static unsigned delta_version_of(unsigned kv);

void coll_state_encode_keyframe_cur(const struct coll_state *s, struct iop_wcur *c)
{
	coll_state_encode_keyframe_v(s, c, COLL_KEYFRAME_VERSION);
}

void coll_state_encode_keyframe_v(const struct coll_state *s, struct iop_wcur *c, unsigned version)
{
	iop_put_u32le(c, COLL_KEYFRAME_MAGIC);
	iop_put_u16le(c, (uint16_t)version);
	iop_put_u16le(c, 0);
	iop_put_varint(c, s->tick_ns);
	for (int i = 0; i < 3; i++) {
		iop_put_varint(c, s->tier[i].cap);
		iop_put_varint(c, s->tier[i].ticks_per_bin);
	}
	iop_put_varint(c, s->max_bytes); /* version 2 on */
	iop_put_svarint(c, s->first_t);
	iop_put_svarint(c, s->last_t);
	iop_put_varint(c, s->ticks_applied);
	coll_monitor_encode(&s->mon, c);
	iop_put_varint(c, IOP_LAYER__COUNT);
	for (unsigned l = 0; l < IOP_LAYER__COUNT; l++)
		iop_put_varint(c, s->layer_excl_ns[l]);
	for (unsigned l = 0; l < IOP_LAYER__COUNT; l++)
		iop_put_varint(c, s->layer_wait_ns[l]); /* version 5 on */

	iop_put_varint(c, s->names.refused);
	/* each file's file system after it, as the record it came as (names.h) */
	iop_put_varint(c, (uint64_t)s->names.n + s->names.n_file_fs);
	for (uint32_t i = 0; i < s->names.n; i++) {
		struct coll_name rec;
		char hex[COLL_FILE_FS_HEX + 1];
		coll_name_encode(&s->names.v[i], c);
		if (coll_names_fs_record(&s->names, &s->names.v[i], &rec, hex))
			coll_name_encode(&rec, c);
	}
	encode_hosts(s, c);
	encode_ranks(s, c);
	coll_counters_encode(s->latest.v, s->latest.n, c, delta_version_of(version));

	for (int i = 0; i < 3; i++) {
		const struct coll_tier *tr = &s->tier[i];
		iop_put_varint(c, tr->n);
		for (uint32_t j = 0; j < tr->n; j++)
			coll_tick_encode_v(&tr->v[(tr->head + j) % tr->cap], c,
			                   delta_version_of(version));
	}
	if (version >= 6)
		coll_rank_dist_encode(&s->dist, c);
	if (version >= 7) {
		coll_nodeset_encode(&s->nodes, c);
		coll_nodeset_encode(&s->peaks, c);
	}
	if (version >= 8)
		coll_node_series_encode(&s->series, c);
}

static void fill_keyframe(const void *arg, struct iop_wcur *c)
{
	coll_state_encode_keyframe_cur(arg, c);
}

enum iop_err coll_state_encode_keyframe(const struct coll_state *s, size_t max, uint8_t **buf,
                                        size_t *cap, size_t *len)
{
	return coll_encode_grown(buf, cap, max ? max : SIZE_MAX / 2, 0, fill_keyframe, s, len);
}

/* ------------------------------------------------------------------ decode */

/* The cursor's error, or e when the cursor has none. */
static enum iop_err fail(struct iop_rcur *c, enum iop_err e)
{
	if (!c->err)
		c->err = e;
	return c->err;
}

static enum iop_err decode_header(struct coll_state *s, struct iop_rcur *c, unsigned *version)
{
	if (iop_get_u32le(c) != COLL_KEYFRAME_MAGIC)
		return fail(c, IOP_ERR_BAD_MAGIC);
	*version = iop_get_u16le(c);
	if (!c->err && (*version < 1 || *version > COLL_KEYFRAME_VERSION))
		return fail(c, IOP_ERR_BAD_VERSION);
	(void)iop_get_u16le(c);
	uint64_t tick_ns = iop_get_varint(c);
	uint64_t cap[3], per_bin[3];
	for (int i = 0; i < 3; i++) {
		cap[i] = iop_get_varint_max(c, COLL_KEYFRAME_MAX_TIER);
		per_bin[i] = iop_get_varint_max(c, UINT32_MAX);
		if (!c->err && per_bin[i] == 0)
			return fail(c, IOP_ERR_MALFORMED);
	}
	/* version 1 had no budget: its history was kept whole */
	uint64_t max_bytes = *version >= 2 ? iop_get_varint(c) : 0;
	if (c->err)
		return c->err;
	if (tick_ns == 0)
		return fail(c, IOP_ERR_MALFORMED);
	coll_state_init(s, tick_ns, NULL);
	for (int i = 0; i < 3; i++)
		s->tier[i] = (struct coll_tier){.cap = (uint32_t)cap[i],
		                                .ticks_per_bin = (uint32_t)per_bin[i]};
	s->max_bytes = max_bytes;
	coll_node_series_init(&s->series, s->tier[0].cap); /* as the state's (version 8 keeps its own) */
	s->first_t = iop_get_svarint(c);
	s->last_t = iop_get_svarint(c);
	s->ticks_applied = iop_get_varint(c);
	coll_monitor_decode(&s->mon, c);
	if (iop_get_varint(c) != IOP_LAYER__COUNT)
		return fail(c, IOP_ERR_MALFORMED);
	for (unsigned l = 0; l < IOP_LAYER__COUNT; l++)
		s->layer_excl_ns[l] = iop_get_varint(c);
	for (unsigned l = 0; *version >= 5 && l < IOP_LAYER__COUNT; l++)
		s->layer_wait_ns[l] = iop_get_varint(c);
	return c->err;
}

static enum iop_err decode_names(struct coll_state *s, struct iop_rcur *c)
{
	s->names.refused = iop_get_varint(c);
	/* a file's file system is a record of its own (names.h): up to two a name */
	uint64_t n = coll_get_count(c, 2 * (uint64_t)s->names.max_names, 10);
	for (uint64_t i = 0; !c->err && i < n; i++) {
		struct coll_name nm;
		bool added;
		enum iop_err e = coll_name_decode(&nm, c);
		if (!e)
			e = coll_names_add(&s->names, nm.hash, nm.kind, nm.text, nm.len, &added);
		if (e == IOP_ERR_FULL)
			e = IOP_ERR_OVERSIZED; /* more text than a state holds */
		if (!e && !added)
			e = IOP_ERR_MALFORMED; /* the same hash twice */
		if (e)
			return fail(c, e);
	}
	return c->err;
}

static enum iop_err decode_hosts(struct coll_state *s, struct iop_rcur *c)
{
	uint64_t n = coll_get_count(c, COLL_KEYFRAME_MAX_HOSTS, 5);
	if (c->err || n == 0)
		return c->err;
	if (!(s->hosts = calloc(n, sizeof(*s->hosts))))
		return fail(c, IOP_ERR_NOMEM);
	for (uint64_t i = 0; !c->err && i < n; i++) {
		uint32_t node = iop_get_u32le(c);
		uint64_t ref = iop_get_varint_max(c, s->names.n);
		if (c->err)
			break;
		s->hosts[i] = (struct coll_host){node, ref ? s->names.v[ref - 1].text : NULL};
		s->n_hosts++;
	}
	coll_state_index_hosts(s);
	return c->err;
}

static enum iop_err decode_ranks(struct coll_state *s, struct iop_rcur *c, unsigned version)
{
	uint64_t n = iop_get_varint_max(c, COLL_KEYFRAME_MAX_RANK);
	uint64_t used = coll_get_count(c, n, 13);
	if (c->err)
		return c->err;
	if ((n == 0) != (used == 0))
		return fail(c, IOP_ERR_INCONSISTENT);
	if (n == 0)
		return IOP_OK;
	uint32_t alloc = 64; /* as state.c's rank_at sizes the array */
	while (alloc <= n - 1)
		alloc *= 2;
	if (!(s->ranks = calloc(alloc, sizeof(*s->ranks))))
		return fail(c, IOP_ERR_NOMEM);
	s->n_ranks = alloc;
	uint64_t next = 0; /* ranks come in increasing order */
	for (uint64_t i = 0; !c->err && i < used; i++) {
		uint64_t at = iop_get_varint_max(c, n - 1);
		struct coll_rank r;
		r.node = iop_get_u64le(c);
		r.excl_ns = iop_get_varint(c);
		r.wait_ns = version >= 5 ? iop_get_varint(c) : 0;
		r.procs = (uint32_t)iop_get_varint_max(c, UINT32_MAX);
		r.live = (uint32_t)iop_get_varint_max(c, UINT32_MAX);
		r.state = iop_get_u8(c);
		if (c->err)
			break;
		if (at < next || r.state > COLL_RANK_GONE || !rank_used(&r) ||
		    (i == used - 1 && at != n - 1))
			return fail(c, IOP_ERR_MALFORMED);
		s->ranks[at] = r;
		next = at + 1;
	}
	return c->err;
}

/* The delta version (delta.h) of the ticks and counters in a keyframe of
 * version kv. */
static unsigned delta_version_of(unsigned kv)
{
	return kv >= 7 ? 6 : kv >= 6 ? 5 : kv >= 5 ? 4 : kv >= 4 ? 3 : 2;
}

static enum iop_err decode_latest(struct coll_state *s, struct iop_rcur *c, unsigned dv)
{
	struct coll_ctr_reader r;
	enum iop_err e = coll_ctr_reader_open(&r, c, COLL_STATE_MAX_COUNTERS, dv);
	if (e)
		return fail(c, e);
	for (uint64_t i = 0; i < r.n; i++) {
		struct coll_counter k;
		e = coll_ctr_reader_next(&r, &k);
		if (!e)
			e = coll_ctrset_add(&s->latest, &k, COLL_STATE_MAX_COUNTERS, NULL);
		if (!e && s->latest.n != i + 1)
			e = IOP_ERR_MALFORMED; /* the same process and key twice */
		if (e)
			return fail(c, e);
	}
	return fail(c, coll_ctr_reader_done(&r));
}

static enum iop_err decode_tier(struct coll_tier *tr, struct iop_rcur *c, unsigned dv)
{
	/* A tick takes at least 3 bytes (number, length, row count). */
	uint64_t n = coll_get_count(c, tr->cap, 3);
	if (c->err || n == 0)
		return c->err;
	if (!(tr->v = calloc(tr->cap, sizeof(*tr->v))))
		return fail(c, IOP_ERR_NOMEM);
	for (uint64_t j = 0; j < n; j++) {
		tr->n++; /* counted first, so that a failed tick's memory is freed */
		enum iop_err e = coll_tick_decode_v(&tr->v[j], c, dv);
		if (e)
			return fail(c, e);
	}
	return IOP_OK;
}

enum iop_err coll_state_decode_keyframe_cur(struct coll_state *s, struct iop_rcur *c)
{
	memset(s, 0, sizeof(*s));
	unsigned version = 0;
	enum iop_err e = decode_header(s, c, &version);
	if (e && s->tick_ns == 0)
		coll_state_init(s, 1000000000ull, NULL); /* failed before the state existed */
	if (!e)
		e = decode_names(s, c);
	if (!e)
		e = decode_hosts(s, c);
	if (!e)
		e = decode_ranks(s, c, version);
	if (!e && version < 3) { /* totals, now the latest counters' sums */
		struct coll_tick totals;
		coll_tick_init(&totals, 0, s->tick_ns);
		e = fail(c, coll_tick_decode_v(&totals, c, delta_version_of(version)));
		coll_tick_free(&totals);
	}
	if (!e)
		e = decode_latest(s, c, delta_version_of(version));
	for (int i = 0; !e && i < 3; i++)
		e = decode_tier(&s->tier[i], c, delta_version_of(version));
	if (!e && version >= 6)
		e = fail(c, coll_rank_dist_decode(&s->dist, c));
	if (!e && version >= 7)
		e = fail(c, coll_nodeset_decode(&s->nodes, c));
	if (!e && version >= 7)
		e = fail(c, coll_nodeset_decode(&s->peaks, c));
	if (!e && version >= 8)
		e = fail(c, coll_node_series_decode(&s->series, c));
	if (!e)
		coll_state_history_measure(s);
	if (e) {
		uint64_t tick_ns = s->tick_ns;
		coll_state_free(s);
		coll_state_init(s, tick_ns, NULL);
	}
	return e;
}

enum iop_err coll_state_decode_keyframe(struct coll_state *s, const uint8_t *buf, size_t len)
{
	struct iop_rcur c = iop_rcur_make(buf, len);
	enum iop_err e = coll_state_decode_keyframe_cur(s, &c);
	if (!e && iop_rcur_left(&c)) {
		e = IOP_ERR_INCONSISTENT;
		uint64_t tick_ns = s->tick_ns;
		coll_state_free(s);
		coll_state_init(s, tick_ns, NULL);
	}
	return e;
}
