/* Node samples as the collectors pass them on. See nodes.h. */
#include "nodes.h"

#include <stdlib.h>
#include <string.h>

#include "mounts.h"
#include "probe.h"

#define PPM 1000000u

void coll_nodeset_free(struct coll_nodeset *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}

const struct coll_node_sample *coll_nodeset_find(const struct coll_nodeset *s, uint32_t node)
{
	for (uint32_t i = 0; i < s->n; i++)
		if (s->v[i].node == node)
			return &s->v[i];
	return NULL;
}

const struct coll_node_fs *coll_node_fs_find(const struct coll_node_sample *x, uint64_t fs)
{
	for (uint32_t i = 0; x && i < x->n_fs && i < COLL_NODE_FS_MAX; i++)
		if (x->fs[i].fs == fs)
			return &x->fs[i];
	return NULL;
}

const struct coll_node_fs *coll_node_busiest(const struct coll_node_sample *x, bool job_io)
{
	const struct coll_node_fs *dev = NULL;
	for (uint32_t j = 0; x && j < x->n_fs && j < COLL_NODE_FS_MAX; j++) {
		const struct coll_node_fs *f = &x->fs[j];
		if (f->kind == COLL_NODE_FS_DEVICE && (!job_io || f->job_ops) &&
		    (!dev || f->util_ppm > dev->util_ppm))
			dev = f;
	}
	return dev;
}

enum iop_err coll_nodeset_put(struct coll_nodeset *s, const struct coll_node_sample *x)
{
	struct coll_node_sample *at = (struct coll_node_sample *)coll_nodeset_find(s, x->node);
	if (!at) {
		if (s->n >= COLL_NODES_MAX)
			return IOP_ERR_OVERSIZED;
		if (s->n == s->cap) {
			uint32_t cap = s->cap ? s->cap * 2 : 8;
			struct coll_node_sample *v = realloc(s->v, (size_t)cap * sizeof(*v));
			if (!v)
				return IOP_ERR_NOMEM;
			s->v = v;
			s->cap = cap;
		}
		at = &s->v[s->n++];
	}
	*at = *x;
	return IOP_OK;
}

enum iop_err coll_nodeset_merge(struct coll_nodeset *dst, const struct coll_nodeset *src)
{
	for (uint32_t i = 0; i < src->n; i++) {
		enum iop_err e = coll_nodeset_put(dst, &src->v[i]);
		if (e)
			return e;
	}
	return IOP_OK;
}

#define MAX(a, b) ((a) > (b) ? (a) : (b))

static void fs_peak(struct coll_node_fs *p, const struct coll_node_fs *x)
{
	p->util_ppm = MAX(p->util_ppm, x->util_ppm);
	p->wait_us = MAX(p->wait_us, x->wait_us);
	p->read_Bps = MAX(p->read_Bps, x->read_Bps);
	p->write_Bps = MAX(p->write_Bps, x->write_Bps);
	p->read_iops = MAX(p->read_iops, x->read_iops);
	p->write_iops = MAX(p->write_iops, x->write_iops);
	p->job_Bps = MAX(p->job_Bps, x->job_Bps);
	p->job_ops = MAX(p->job_ops, x->job_ops);
}

enum iop_err coll_nodeset_peak(struct coll_nodeset *dst, const struct coll_nodeset *src)
{
	for (uint32_t i = 0; i < src->n; i++) {
		const struct coll_node_sample *x = &src->v[i];
		struct coll_node_sample *p = (struct coll_node_sample *)coll_nodeset_find(dst, x->node);
		if (!p) {
			enum iop_err e = coll_nodeset_put(dst, x);
			if (e)
				return e;
			continue;
		}
		p->t = MAX(p->t, x->t);
		p->flags |= x->flags;
		p->psi_some_ppm = MAX(p->psi_some_ppm, x->psi_some_ppm);
		p->psi_full_ppm = MAX(p->psi_full_ppm, x->psi_full_ppm);
		p->iowait_ppm = MAX(p->iowait_ppm, x->iowait_ppm);
		p->dirty_kib = MAX(p->dirty_kib, x->dirty_kib);
		p->writeback_kib = MAX(p->writeback_kib, x->writeback_kib);
		for (uint32_t j = 0; j < x->n_fs && j < COLL_NODE_FS_MAX; j++) {
			struct coll_node_fs *f = (struct coll_node_fs *)coll_node_fs_find(p, x->fs[j].fs);
			if (f)
				fs_peak(f, &x->fs[j]);
			else if (p->n_fs < COLL_NODE_FS_MAX)
				p->fs[p->n_fs++] = x->fs[j];
		}
	}
	return IOP_OK;
}

void coll_nodeset_encode(const struct coll_nodeset *s, struct iop_wcur *c)
{
	iop_put_varint(c, s->n);
	for (uint32_t i = 0; i < s->n; i++) {
		const struct coll_node_sample *x = &s->v[i];
		iop_put_svarint(c, x->t);
		iop_put_u32le(c, x->node);
		iop_put_varint(c, x->flags);
		iop_put_varint(c, x->psi_some_ppm);
		iop_put_varint(c, x->psi_full_ppm);
		iop_put_varint(c, x->iowait_ppm);
		iop_put_varint(c, x->dirty_kib);
		iop_put_varint(c, x->writeback_kib);
		iop_put_varint(c, x->n_fs);
		for (uint32_t j = 0; j < x->n_fs; j++) {
			const struct coll_node_fs *f = &x->fs[j];
			iop_put_u64le(c, f->fs);
			iop_put_varint(c, f->kind);
			iop_put_varint(c, f->util_ppm);
			iop_put_varint(c, f->wait_us);
			iop_put_varint(c, f->read_Bps);
			iop_put_varint(c, f->write_Bps);
			iop_put_varint(c, f->read_iops);
			iop_put_varint(c, f->write_iops);
			iop_put_varint(c, f->job_Bps);
			iop_put_varint(c, f->job_ops);
		}
	}
}

static enum iop_err decode_one(struct coll_node_sample *x, struct iop_rcur *c)
{
	memset(x, 0, sizeof(*x));
	x->t = iop_get_svarint(c);
	x->node = iop_get_u32le(c);
	x->flags = (uint32_t)iop_get_varint_max(c, COLL_NODE__FLAGS);
	x->psi_some_ppm = (uint32_t)iop_get_varint_max(c, PPM);
	x->psi_full_ppm = (uint32_t)iop_get_varint_max(c, PPM);
	x->iowait_ppm = (uint32_t)iop_get_varint_max(c, PPM);
	x->dirty_kib = iop_get_varint(c);
	x->writeback_kib = iop_get_varint(c);
	x->n_fs = (uint32_t)iop_get_varint_max(c, COLL_NODE_FS_MAX);
	for (uint32_t j = 0; !c->err && j < x->n_fs; j++) {
		struct coll_node_fs *f = &x->fs[j];
		f->fs = iop_get_u64le(c);
		f->kind = (uint8_t)iop_get_varint_max(c, COLL_NODE_FS_NET);
		f->util_ppm = (uint32_t)iop_get_varint_max(c, PPM);
		f->wait_us = (uint32_t)iop_get_varint_max(c, UINT32_MAX);
		f->read_Bps = iop_get_varint(c);
		f->write_Bps = iop_get_varint(c);
		f->read_iops = iop_get_varint(c);
		f->write_iops = iop_get_varint(c);
		f->job_Bps = iop_get_varint(c);
		f->job_ops = iop_get_varint(c);
	}
	return c->err;
}

enum iop_err coll_nodeset_decode(struct coll_nodeset *s, struct iop_rcur *c)
{
	s->n = 0;
	/* a sample takes at least 12 bytes: tick, node (4), 7 varints */
	uint64_t n = iop_get_varint(c);
	enum iop_err e = c->err;
	if (!e && n > COLL_NODES_MAX)
		e = IOP_ERR_OVERSIZED;
	if (!e && n > iop_rcur_left(c) / 12)
		e = IOP_ERR_TRUNCATED;
	for (uint64_t i = 0; !e && i < n; i++) {
		struct coll_node_sample x;
		if ((e = decode_one(&x, c)))
			break;
		uint32_t had = s->n;
		if (!(e = coll_nodeset_put(s, &x)) && s->n == had)
			e = IOP_ERR_MALFORMED; /* a node twice */
	}
	if (e)
		s->n = 0;
	return e;
}

static uint32_t ppm(double share)
{
	return share <= 0 ? 0 : share >= 1 ? PPM : (uint32_t)(share * PPM + 0.5);
}

/* A file system's entry from its rates (a network client's util is 0). */
static void put_fs(struct coll_node_sample *out, uint64_t fs, uint8_t kind,
                   const struct iop_disk_rates *r)
{
	out->fs[out->n_fs++] = (struct coll_node_fs){
		.fs = fs,
		.kind = kind,
		.util_ppm = ppm(r->util),
		.wait_us = r->wait_ms * 1000 < UINT32_MAX ? (uint32_t)(r->wait_ms * 1000) : UINT32_MAX,
		.read_Bps = (uint64_t)r->read_Bps,
		.write_Bps = (uint64_t)r->write_Bps,
		.read_iops = (uint64_t)r->read_iops,
		.write_iops = (uint64_t)r->write_iops};
}

void coll_node_sample_take(struct iop_node_probe *p, const struct iop_mounts *m, uint32_t node,
                           int64_t t, uint64_t now_ns, struct coll_node_sample *out)
{
	memset(out, 0, sizeof(*out));
	out->t = t;
	out->node = node;
	struct iop_probe_dev dev[COLL_NODE_FS_MAX];
	struct iop_probe_netfs net[COLL_NODE_FS_MAX];
	uint64_t fs[COLL_NODE_FS_MAX], net_fs[COLL_NODE_FS_MAX];
	uint32_t n = 0, n_net = 0;
	for (size_t i = 0; i < m->n && n + n_net < COLL_NODE_FS_MAX; i++) {
		const struct iop_mount *mt = &m->v[i];
		if (!mt->tag || mt->tag == UINT64_MAX)
			continue; /* no file named on it */
		if (mt->major) {
			dev[n] = (struct iop_probe_dev){.major = mt->major, .minor = mt->minor};
			fs[n++] = mt->tag;
		} else if (mt->type && mt->device &&
		           (!strncmp(mt->type, "nfs", 3) || !strcmp(mt->type, "lustre"))) {
			/* Lustre's source is "MGS@net:/NAME" */
			const char *name = strstr(mt->device, ":/");
			if (mt->type[0] == 'l' && !name)
				continue;
			net[n_net] = (struct iop_probe_netfs){.point = mt->point,
			                                      .lustre = mt->type[0] == 'l' ? name + 2 : NULL};
			net_fs[n_net++] = mt->tag;
		}
	}
	struct iop_node_tick x;
	iop_node_probe_sample(p, now_ns, &x, dev, n);
	if (n_net)
		iop_node_probe_netfs(p, now_ns, net, n_net);
	out->flags = (x.has_psi ? COLL_NODE_PSI : 0) | (x.has_full ? COLL_NODE_FULL : 0) |
	             (x.has_iowait ? COLL_NODE_IOWAIT : 0) | (x.has_mem ? COLL_NODE_MEM : 0);
	out->psi_some_ppm = ppm(x.psi_some);
	out->psi_full_ppm = ppm(x.psi_full);
	out->iowait_ppm = ppm(x.iowait);
	out->dirty_kib = x.dirty_kib;
	out->writeback_kib = x.writeback_kib;
	for (uint32_t i = 0; i < n; i++)
		if (dev[i].has)
			put_fs(out, fs[i], COLL_NODE_FS_DEVICE, &dev[i].rates);
	for (uint32_t i = 0; i < n_net; i++)
		if (net[i].has)
			put_fs(out, net_fs[i], COLL_NODE_FS_NET, &net[i].rates);
}
