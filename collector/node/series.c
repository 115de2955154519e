/* Nodes' figures tick by tick. See series.h. */
#include "series.h"

#include <stdlib.h>
#include <string.h>

#define PPM 1000000u

void coll_node_series_init(struct coll_node_series *s, uint32_t cap_ticks)
{
	memset(s, 0, sizeof(*s));
	s->cap = cap_ticks < COLL_NODE_SERIES_MAX ? cap_ticks : COLL_NODE_SERIES_MAX;
}

static struct coll_node_tick *at(const struct coll_node_series *s, uint32_t i)
{
	return &s->v[(s->head + i) % s->cap];
}

static void drop_oldest(struct coll_node_series *s)
{
	free(at(s, 0)->v);
	s->head = (s->head + 1) % s->cap;
	s->n--;
}

void coll_node_series_free(struct coll_node_series *s)
{
	while (s->n)
		drop_oldest(s);
	free(s->v);
	coll_node_series_init(s, s->cap);
}

static int point_cmp(const void *a, const void *b)
{
	uint32_t x = ((const struct coll_node_point *)a)->node;
	uint32_t y = ((const struct coll_node_point *)b)->node;
	return (x > y) - (x < y);
}

static struct coll_node_point point_of(const struct coll_node_sample *x)
{
	const struct coll_node_fs *dev = coll_node_busiest(x, false);
	return (struct coll_node_point){
		.node = x->node,
		.full_ppm = x->flags & COLL_NODE_FULL ? x->psi_full_ppm : COLL_NODE_UNKNOWN,
		.util_ppm = dev ? dev->util_ppm : COLL_NODE_UNKNOWN};
}

/* The slot for tick t (newer than every kept one), made room for. */
static enum iop_err slot(struct coll_node_series *s, int64_t t, struct coll_node_tick **out)
{
	if (!s->v) {
		s->v = calloc(s->cap, sizeof(*s->v));
		if (!s->v)
			return IOP_ERR_NOMEM;
	}
	while (s->n && (s->n == s->cap || at(s, 0)->t <= t - (int64_t)s->cap))
		drop_oldest(s);
	*out = at(s, s->n);
	return IOP_OK;
}

enum iop_err coll_node_series_push(struct coll_node_series *s, int64_t t,
                                   const struct coll_nodeset *x)
{
	if (!s->cap || !x->n)
		return IOP_OK;
	struct coll_node_tick *newest = s->n ? at(s, s->n - 1) : NULL;
	if (newest && t < newest->t)
		return IOP_OK;
	struct coll_node_point *v = malloc((size_t)x->n * sizeof(*v));
	if (!v)
		return IOP_ERR_NOMEM;
	for (uint32_t i = 0; i < x->n; i++)
		v[i] = point_of(&x->v[i]);
	qsort(v, x->n, sizeof(*v), point_cmp);
	struct coll_node_tick *k = newest;
	if (!newest || t > newest->t) {
		enum iop_err e = slot(s, t, &k);
		if (e) {
			free(v);
			return e;
		}
		s->n++;
	} else {
		free(k->v);
	}
	*k = (struct coll_node_tick){t, x->n, v};
	return IOP_OK;
}

const struct coll_node_point *coll_node_series_at(const struct coll_node_series *s, int64_t t,
                                                  uint32_t node)
{
	uint32_t lo = 0, hi = s->n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (at(s, mid)->t < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == s->n || at(s, lo)->t != t)
		return NULL;
	const struct coll_node_tick *k = at(s, lo);
	struct coll_node_point want = {.node = node};
	return bsearch(&want, k->v, k->n, sizeof(*k->v), point_cmp);
}

static uint64_t opt_ppm(uint32_t v)
{
	return v == COLL_NODE_UNKNOWN ? 0 : (uint64_t)v + 1;
}

void coll_node_series_encode(const struct coll_node_series *s, struct iop_wcur *c)
{
	iop_put_varint(c, s->cap);
	iop_put_varint(c, s->n);
	for (uint32_t i = 0; i < s->n; i++) {
		const struct coll_node_tick *k = at(s, i);
		iop_put_svarint(c, k->t);
		iop_put_varint(c, k->n);
		for (uint32_t j = 0; j < k->n; j++) {
			iop_put_u32le(c, k->v[j].node);
			iop_put_varint(c, opt_ppm(k->v[j].full_ppm));
			iop_put_varint(c, opt_ppm(k->v[j].util_ppm));
		}
	}
}

static uint32_t get_opt_ppm(struct iop_rcur *c)
{
	uint64_t v = iop_get_varint_max(c, PPM + 1);
	return v ? (uint32_t)(v - 1) : COLL_NODE_UNKNOWN;
}

/* A count of at most max, of items of at least min_bytes each. */
static uint64_t get_count(struct iop_rcur *c, uint64_t max, size_t min_bytes)
{
	uint64_t n = iop_get_varint(c);
	if (!c->err && n > max)
		c->err = IOP_ERR_OVERSIZED;
	else if (!c->err && n > iop_rcur_left(c) / min_bytes)
		c->err = IOP_ERR_TRUNCATED;
	return c->err ? 0 : n;
}

static enum iop_err decode_tick(struct coll_node_tick *k, struct iop_rcur *c)
{
	k->t = iop_get_svarint(c);
	uint64_t n = get_count(c, COLL_NODES_MAX, 6); /* node (4), 2 varints */
	if (!c->err && n == 0)
		c->err = IOP_ERR_MALFORMED;
	if (c->err)
		return c->err;
	k->v = malloc(n * sizeof(*k->v));
	if (!k->v)
		return IOP_ERR_NOMEM;
	k->n = (uint32_t)n;
	for (uint32_t j = 0; j < k->n && !c->err; j++) {
		k->v[j].node = iop_get_u32le(c);
		k->v[j].full_ppm = get_opt_ppm(c);
		k->v[j].util_ppm = get_opt_ppm(c);
		if (!c->err && j && k->v[j].node <= k->v[j - 1].node)
			c->err = IOP_ERR_MALFORMED; /* out of order, or twice */
	}
	return c->err;
}

enum iop_err coll_node_series_decode(struct coll_node_series *s, struct iop_rcur *c)
{
	coll_node_series_free(s);
	uint64_t cap = iop_get_varint_max(c, COLL_NODE_SERIES_MAX);
	coll_node_series_init(s, (uint32_t)cap);
	/* a tick takes at least 8 bytes: t, count, one point */
	uint64_t n = get_count(c, cap, 8);
	if (!c->err && n && !(s->v = calloc(s->cap, sizeof(*s->v))))
		c->err = IOP_ERR_NOMEM;
	for (uint64_t i = 0; i < n && !c->err; i++) {
		struct coll_node_tick *k = at(s, (uint32_t)i);
		decode_tick(k, c);
		s->n++; /* freed with the rest, whole or not */
		if (!c->err && i && k->t <= at(s, (uint32_t)i - 1)->t)
			c->err = IOP_ERR_MALFORMED;
	}
	enum iop_err e = c->err;
	if (e)
		coll_node_series_free(s);
	return e;
}
