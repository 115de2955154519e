/* Node samples as the collectors pass them on (nodes.h): a set keeps one
 * sample a node, the latest; its encoding round-trips every field at the
 * edges of its ranges, follows the documented layout, and is refused when
 * cut short or out of range; and a leaf's sample taken from a directory of
 * captured /proc files has the figures the counters moved by. */
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "fakeproc.h"
#include "mounts.h"
#include "nodes.h"
#include "probe.h"

#define SEC 1000000000ull
#define PPM 1000000u

static void same_sample(const struct coll_node_sample *a, const struct coll_node_sample *b)
{
	assert_true(a->t == b->t);
	assert_int_equal(a->node, b->node);
	assert_int_equal(a->flags, b->flags);
	assert_int_equal(a->psi_some_ppm, b->psi_some_ppm);
	assert_int_equal(a->psi_full_ppm, b->psi_full_ppm);
	assert_int_equal(a->iowait_ppm, b->iowait_ppm);
	assert_int_equal(a->dirty_kib, b->dirty_kib);
	assert_int_equal(a->writeback_kib, b->writeback_kib);
	assert_int_equal(a->n_fs, b->n_fs);
	for (uint32_t i = 0; i < a->n_fs; i++) {
		const struct coll_node_fs *x = &a->fs[i], *y = &b->fs[i];
		assert_int_equal(x->fs, y->fs);
		assert_int_equal(x->kind, y->kind);
		assert_int_equal(x->util_ppm, y->util_ppm);
		assert_int_equal(x->wait_us, y->wait_us);
		assert_int_equal(x->read_Bps, y->read_Bps);
		assert_int_equal(x->write_Bps, y->write_Bps);
		assert_int_equal(x->read_iops, y->read_iops);
		assert_int_equal(x->write_iops, y->write_iops);
		assert_int_equal(x->job_Bps, y->job_Bps);
		assert_int_equal(x->job_ops, y->job_ops);
	}
}

/* Three samples at the edges: every file system a node can have, shares
 * of 10^6 (the most) and 1, the largest numbers the other fields hold, a
 * tick before 0; no file system; and a few flags with figures between. */
static void three_samples(struct coll_node_sample x[3])
{
	memset(x, 0, 3 * sizeof(*x));
	x[0] = (struct coll_node_sample){.t = -5,
	                                 .node = 0xdeadbeef,
	                                 .flags = COLL_NODE__FLAGS,
	                                 .psi_some_ppm = PPM,
	                                 .psi_full_ppm = 1,
	                                 .iowait_ppm = 123456,
	                                 .dirty_kib = UINT64_MAX,
	                                 .writeback_kib = 1,
	                                 .n_fs = COLL_NODE_FS_MAX};
	for (uint32_t i = 0; i < COLL_NODE_FS_MAX; i++)
		x[0].fs[i] = (struct coll_node_fs){.fs = UINT64_MAX - i,
		                                   .kind = i % 2 ? COLL_NODE_FS_NET : COLL_NODE_FS_DEVICE,
		                                   .util_ppm = i * (PPM / 15),
		                                   .wait_us = UINT32_MAX - i,
		                                   .read_Bps = (uint64_t)1 << (4 * i),
		                                   .write_Bps = UINT64_MAX >> i,
		                                   .read_iops = i,
		                                   .write_iops = 1000 + i,
		                                   .job_Bps = UINT64_MAX / (i + 1),
		                                   .job_ops = 7 * i};
	x[0].fs[COLL_NODE_FS_MAX - 1].util_ppm = PPM;
	x[1] = (struct coll_node_sample){
		.t = 7, .node = 2, .flags = COLL_NODE_MEM, .dirty_kib = 22912};
	x[2] = (struct coll_node_sample){.t = (int64_t)1 << 40,
	                                 .node = 3,
	                                 .flags = COLL_NODE_PSI | COLL_NODE_IOWAIT,
	                                 .psi_some_ppm = 250000,
	                                 .iowait_ppm = 50000,
	                                 .writeback_kib = 512,
	                                 .n_fs = 1};
	x[2].fs[0] = (struct coll_node_fs){.fs = 0xfeed,
	                                   .util_ppm = 500000,
	                                   .write_Bps = 1048576,
	                                   .job_Bps = 65536,
	                                   .job_ops = 3};
}

static size_t encode(const struct coll_nodeset *s, uint8_t *buf, size_t cap)
{
	struct iop_wcur c = iop_wcur_make(buf, cap);
	coll_nodeset_encode(s, &c);
	assert_int_equal(c.err, IOP_OK);
	return (size_t)(c.p - buf);
}

static void round_trip(void **state)
{
	(void)state;
	struct coll_node_sample x[3];
	three_samples(x);
	struct coll_nodeset s = {0};
	for (int i = 0; i < 3; i++)
		assert_int_equal(coll_nodeset_put(&s, &x[i]), IOP_OK);
	static uint8_t buf[4096];
	size_t len = encode(&s, buf, sizeof buf);

	/* decoding replaces what the set held */
	struct coll_nodeset d = {0};
	struct coll_node_sample old = {.t = 1, .node = 99};
	assert_int_equal(coll_nodeset_put(&d, &old), IOP_OK);
	struct iop_rcur c = iop_rcur_make(buf, len);
	assert_int_equal(coll_nodeset_decode(&d, &c), IOP_OK);
	assert_int_equal(iop_rcur_left(&c), 0);
	assert_int_equal(d.n, 3);
	for (uint32_t i = 0; i < 3; i++)
		same_sample(&d.v[i], &x[i]);
	assert_null(coll_nodeset_find(&d, 99));
	/* a file system past n_fs is not there */
	for (uint32_t i = 1; i < COLL_NODE_FS_MAX; i++)
		assert_int_equal(d.v[2].fs[i].fs, 0);
	coll_nodeset_free(&d);
	assert_null(d.v);
	assert_int_equal(d.n, 0);
	coll_nodeset_free(&s);
}

/* nodes.h's layout, written field by field: what encode writes. */
static void put_sample(struct iop_wcur *c, const struct coll_node_sample *x, uint32_t n_fs)
{
	iop_put_svarint(c, x->t);
	iop_put_u32le(c, x->node);
	iop_put_varint(c, x->flags);
	iop_put_varint(c, x->psi_some_ppm);
	iop_put_varint(c, x->psi_full_ppm);
	iop_put_varint(c, x->iowait_ppm);
	iop_put_varint(c, x->dirty_kib);
	iop_put_varint(c, x->writeback_kib);
	iop_put_varint(c, n_fs);
	for (uint32_t j = 0; j < n_fs; j++) {
		const struct coll_node_fs *f = &x->fs[j % COLL_NODE_FS_MAX];
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

static void layout(void **state)
{
	(void)state;
	struct coll_node_sample x[3];
	three_samples(x);
	struct coll_nodeset s = {.v = x, .n = 3, .cap = 3};
	static uint8_t got[4096], want[4096];
	size_t len = encode(&s, got, sizeof got);
	struct iop_wcur c = iop_wcur_make(want, sizeof want);
	iop_put_varint(&c, 3);
	for (int i = 0; i < 3; i++)
		put_sample(&c, &x[i], x[i].n_fs);
	assert_int_equal(c.err, IOP_OK);
	assert_int_equal(len, (size_t)(c.p - want));
	assert_memory_equal(got, want, len);
}

/* A node's second sample replaces its first; a set merged into another
 * replaces the samples of nodes both have and adds the rest. */
/* The smallest sample (tick 1, node 5, nothing else: 12 bytes) decodes:
 * the decoder's bound on a count by the bytes left is 12 a sample. */
static void smallest_sample(void **state)
{
	(void)state;
	struct coll_nodeset s = {0}, back = {0};
	struct coll_node_sample x = {.t = 1, .node = 5};
	assert_int_equal(coll_nodeset_put(&s, &x), IOP_OK);
	uint8_t buf[64];
	struct iop_wcur w = iop_wcur_make(buf, sizeof buf);
	coll_nodeset_encode(&s, &w);
	assert_int_equal(w.p - buf, 13);
	struct iop_rcur r = iop_rcur_make(buf, (size_t)(w.p - buf));
	assert_int_equal(coll_nodeset_decode(&back, &r), IOP_OK);
	assert_int_equal(back.n, 1);
	assert_int_equal(back.v[0].node, 5);
	coll_nodeset_free(&s);
	coll_nodeset_free(&back);
}

/* Peaks: each figure's largest over the samples put in, file systems by
 * id (one new in the second sample added), flags joined, t the latest. */
static void peaks(void **state)
{
	(void)state;
	struct coll_nodeset p = {0}, a = {0}, b = {0};
	struct coll_node_sample x = {.t = 5, .node = 1, .flags = COLL_NODE_PSI, .psi_some_ppm = 300,
	                             .iowait_ppm = 9, .n_fs = 1};
	x.fs[0] = (struct coll_node_fs){.fs = 10, .util_ppm = 700, .write_Bps = 5};
	assert_int_equal(coll_nodeset_put(&a, &x), IOP_OK);
	struct coll_node_sample y = {.t = 6, .node = 1, .flags = COLL_NODE_FULL, .psi_some_ppm = 100,
	                             .psi_full_ppm = 50, .iowait_ppm = 20, .n_fs = 2};
	y.fs[0] = (struct coll_node_fs){.fs = 11, .kind = COLL_NODE_FS_NET, .wait_us = 4000};
	y.fs[1] = (struct coll_node_fs){.fs = 10, .util_ppm = 200, .write_Bps = 8};
	assert_int_equal(coll_nodeset_put(&b, &y), IOP_OK);
	assert_int_equal(coll_nodeset_peak(&p, &a), IOP_OK);
	assert_int_equal(coll_nodeset_peak(&p, &b), IOP_OK);
	assert_int_equal(p.n, 1);
	const struct coll_node_sample *q = &p.v[0];
	assert_int_equal(q->t, 6);
	assert_int_equal(q->flags, COLL_NODE_PSI | COLL_NODE_FULL);
	assert_int_equal(q->psi_some_ppm, 300);
	assert_int_equal(q->psi_full_ppm, 50);
	assert_int_equal(q->iowait_ppm, 20);
	assert_int_equal(q->n_fs, 2);
	const struct coll_node_fs *f = coll_node_fs_find(q, 10);
	assert_non_null(f);
	assert_int_equal(f->util_ppm, 700);
	assert_int_equal(f->write_Bps, 8);
	f = coll_node_fs_find(q, 11);
	assert_non_null(f);
	assert_int_equal(f->kind, COLL_NODE_FS_NET);
	assert_int_equal(f->wait_us, 4000);
	coll_nodeset_free(&p);
	coll_nodeset_free(&a);
	coll_nodeset_free(&b);
}

static void put_find_merge(void **state)
{
	(void)state;
	struct coll_nodeset s = {0};
	struct coll_node_sample a = {.t = 1, .node = 7, .psi_some_ppm = 10};
	struct coll_node_sample b = {.t = 1, .node = 9, .psi_some_ppm = 90};
	assert_int_equal(coll_nodeset_put(&s, &a), IOP_OK);
	assert_int_equal(coll_nodeset_put(&s, &b), IOP_OK);
	a.t = 2;
	a.psi_some_ppm = 20;
	assert_int_equal(coll_nodeset_put(&s, &a), IOP_OK);
	assert_int_equal(s.n, 2);
	const struct coll_node_sample *x = coll_nodeset_find(&s, 7);
	assert_non_null(x);
	assert_true(x->t == 2);
	assert_int_equal(x->psi_some_ppm, 20);
	x = coll_nodeset_find(&s, 9);
	assert_non_null(x);
	assert_int_equal(x->psi_some_ppm, 90);
	assert_null(coll_nodeset_find(&s, 8));

	/* more nodes than the first allocation holds */
	for (uint32_t i = 100; i < 120; i++) {
		struct coll_node_sample y = {.t = (int64_t)i, .node = i};
		assert_int_equal(coll_nodeset_put(&s, &y), IOP_OK);
	}
	assert_int_equal(s.n, 22);
	assert_true(coll_nodeset_find(&s, 119)->t == 119);

	struct coll_nodeset src = {0};
	struct coll_node_sample c = {.t = 3, .node = 9, .psi_some_ppm = 30};
	struct coll_node_sample d = {.t = 3, .node = 11, .psi_some_ppm = 110};
	assert_int_equal(coll_nodeset_put(&src, &c), IOP_OK);
	assert_int_equal(coll_nodeset_put(&src, &d), IOP_OK);
	assert_int_equal(coll_nodeset_merge(&s, &src), IOP_OK);
	assert_int_equal(s.n, 23);
	assert_int_equal(coll_nodeset_find(&s, 7)->psi_some_ppm, 20);
	assert_int_equal(coll_nodeset_find(&s, 9)->psi_some_ppm, 30);
	assert_int_equal(coll_nodeset_find(&s, 11)->psi_some_ppm, 110);
	assert_int_equal(src.n, 2); /* src is left as it was */
	assert_int_equal(coll_nodeset_find(&src, 9)->psi_some_ppm, 30);
	coll_nodeset_free(&src);
	coll_nodeset_free(&s);
}

static void fs_find(void **state)
{
	(void)state;
	/* what lies after the sample holds the id looked for last, so that a
	 * search past the array would find it there */
	struct {
		struct coll_node_sample x;
		struct coll_node_fs after[8];
	} m;
	memset(&m, 0, sizeof m);
	struct coll_node_sample *x = &m.x;
	x->n_fs = 3;
	for (uint32_t i = 0; i < COLL_NODE_FS_MAX; i++)
		x->fs[i].fs = 50 + i;
	for (uint32_t i = 0; i < 8; i++)
		m.after[i].fs = 50 + COLL_NODE_FS_MAX;
	assert_ptr_equal(coll_node_fs_find(x, 50), &x->fs[0]);
	assert_ptr_equal(coll_node_fs_find(x, 52), &x->fs[2]);
	assert_null(coll_node_fs_find(x, 53)); /* past n_fs */
	assert_null(coll_node_fs_find(x, 7));
	assert_null(coll_node_fs_find(NULL, 50));
	x->n_fs = COLL_NODE_FS_MAX + 5; /* damaged: not read past the array */
	assert_ptr_equal(coll_node_fs_find(x, 50 + COLL_NODE_FS_MAX - 1),
	                 &x->fs[COLL_NODE_FS_MAX - 1]);
	assert_null(coll_node_fs_find(x, 50 + COLL_NODE_FS_MAX));
}

/* Decodes len bytes into a set that held a sample: the error, and the set
 * empty after a failure. */
static enum iop_err decode_into_full(const uint8_t *buf, size_t len)
{
	struct coll_nodeset s = {0};
	struct coll_node_sample old = {.t = 1, .node = 99};
	assert_int_equal(coll_nodeset_put(&s, &old), IOP_OK);
	struct iop_rcur c = iop_rcur_make(buf, len);
	enum iop_err e = coll_nodeset_decode(&s, &c);
	if (e != IOP_OK)
		assert_int_equal(s.n, 0);
	coll_nodeset_free(&s);
	return e;
}

static void prefixes_fail(void **state)
{
	(void)state;
	struct coll_node_sample x[3];
	three_samples(x);
	struct coll_nodeset s = {.v = x, .n = 3, .cap = 3};
	static uint8_t buf[4096];
	size_t len = encode(&s, buf, sizeof buf);
	assert_int_equal(decode_into_full(buf, len), IOP_OK);
	for (size_t n = 0; n < len; n++)
		assert_int_not_equal(decode_into_full(buf, n), IOP_OK);
}

/* One sample, written field by field with n_fs file systems, decoded. */
static enum iop_err decode_one(const struct coll_node_sample *x, uint32_t n_fs)
{
	static uint8_t buf[4096];
	struct iop_wcur c = iop_wcur_make(buf, sizeof buf);
	iop_put_varint(&c, 1);
	put_sample(&c, x, n_fs);
	assert_int_equal(c.err, IOP_OK);
	return decode_into_full(buf, (size_t)(c.p - buf));
}

static void out_of_range(void **state)
{
	(void)state;
	struct coll_node_sample x[3];
	three_samples(x);
	struct coll_node_sample y = x[0];
	assert_int_equal(decode_one(&y, y.n_fs), IOP_OK); /* each at its largest */

	y.psi_some_ppm = PPM + 1;
	assert_int_equal(decode_one(&y, y.n_fs), IOP_ERR_MALFORMED);
	y = x[0];
	y.psi_full_ppm = PPM + 1;
	assert_int_equal(decode_one(&y, y.n_fs), IOP_ERR_MALFORMED);
	y = x[0];
	y.iowait_ppm = PPM + 1;
	assert_int_equal(decode_one(&y, y.n_fs), IOP_ERR_MALFORMED);
	y = x[0];
	y.fs[COLL_NODE_FS_MAX - 1].util_ppm = PPM + 1;
	assert_int_equal(decode_one(&y, y.n_fs), IOP_ERR_MALFORMED);
	y = x[0];
	y.fs[3].kind = COLL_NODE_FS_NET + 1; /* a kind this version does not know */
	assert_int_equal(decode_one(&y, y.n_fs), IOP_ERR_MALFORMED);
	y = x[0];
	y.flags = 16; /* a flag this version does not know */
	assert_int_equal(decode_one(&y, y.n_fs), IOP_ERR_MALFORMED);
	y.flags = COLL_NODE__FLAGS | 16;
	assert_int_equal(decode_one(&y, y.n_fs), IOP_ERR_MALFORMED);
	y = x[0];
	assert_int_equal(decode_one(&y, COLL_NODE_FS_MAX + 1), IOP_ERR_MALFORMED);

	/* a node twice in one list */
	struct coll_node_sample twice[2] = {x[1], x[1]};
	twice[1].t = 8;
	struct coll_nodeset s = {.v = twice, .n = 2, .cap = 2};
	static uint8_t buf[4096];
	size_t len = encode(&s, buf, sizeof buf);
	assert_int_equal(decode_into_full(buf, len), IOP_ERR_MALFORMED);
	twice[1].node = 3; /* the same bytes but for the node: fine */
	len = encode(&s, buf, sizeof buf);
	assert_int_equal(decode_into_full(buf, len), IOP_OK);

	/* more nodes than a set holds, before any is read */
	struct iop_wcur c = iop_wcur_make(buf, sizeof buf);
	iop_put_varint(&c, COLL_NODES_MAX + 1);
	memset(c.p, 0, 64);
	assert_int_equal(decode_into_full(buf, (size_t)(c.p - buf) + 64), IOP_ERR_OVERSIZED);
}

/* Of the mounts, only vda's tagged one has a device with figures: vda1
 * untagged (no file named on it), 0:45 not a block device, vda2 tagged as
 * one that cannot be named, 8:99 not in diskstats. */
static void sample_take(void **state)
{
	(void)state;
	struct fakeproc proc;
	struct fakeproc_counters c = fakeproc_base;
	struct iop_node_probe *p = fakeproc_open(&proc, &c);
	struct iop_mount mt[] = {
		{.major = 254, .minor = 1, .tag = 0},
		{.major = 0, .minor = 45, .tag = 0x4e4653},
		{.major = 254, .minor = 0, .tag = 0xfeed},
		{.major = 254, .minor = 2, .tag = UINT64_MAX},
		{.major = 8, .minor = 99, .tag = 0xbeef},
	};
	size_t n_mt = sizeof mt / sizeof mt[0];
	struct iop_mounts m = {.v = mt, .n = n_mt, .cap = n_mt};
	struct coll_node_sample out;

	coll_node_sample_take(p, &m, 42, 10, 1 * SEC, &out);
	assert_true(out.t == 10);
	assert_int_equal(out.node, 42);
	assert_int_equal(out.flags, COLL_NODE_MEM);
	assert_int_equal(out.dirty_kib, 22912);
	assert_int_equal(out.writeback_kib, 128);
	assert_int_equal(out.n_fs, 0);

	fakeproc_advance(&c);
	fakeproc_write(&proc, &c);
	coll_node_sample_take(p, &m, 42, 11, 2 * SEC, &out);
	assert_true(out.t == 11);
	assert_int_equal(out.node, 42);
	assert_int_equal(out.flags,
	                 COLL_NODE_PSI | COLL_NODE_FULL | COLL_NODE_IOWAIT | COLL_NODE_MEM);
	assert_int_equal(out.psi_some_ppm, 250000);
	assert_int_equal(out.psi_full_ppm, 100000);
	assert_int_equal(out.iowait_ppm, 50000);
	assert_int_equal(out.dirty_kib, 4096);
	assert_int_equal(out.writeback_kib, 512);
	assert_int_equal(out.n_fs, 1);
	const struct coll_node_fs *f = coll_node_fs_find(&out, 0xfeed);
	assert_ptr_equal(f, &out.fs[0]);
	assert_int_equal(f->util_ppm, 500000);
	assert_int_equal(f->wait_us, 5000);
	assert_int_equal(f->read_Bps, 524288);
	assert_int_equal(f->write_Bps, 1048576);
	assert_int_equal(f->read_iops, 8);
	assert_int_equal(f->write_iops, 16);
	/* the job's own part is the leaf's to add (leaf.c): none yet */
	assert_int_equal(f->job_Bps, 0);
	assert_int_equal(f->job_ops, 0);
	assert_null(coll_node_fs_find(&out, 0xbeef));

	/* what it takes encodes and decodes as it was */
	struct coll_nodeset s = {.v = &out, .n = 1, .cap = 1};
	static uint8_t buf[1024];
	size_t len = encode(&s, buf, sizeof buf);
	struct coll_nodeset d = {0};
	struct iop_rcur rc = iop_rcur_make(buf, len);
	assert_int_equal(coll_nodeset_decode(&d, &rc), IOP_OK);
	assert_int_equal(d.n, 1);
	same_sample(&d.v[0], &out);
	coll_nodeset_free(&d);

	/* pressure without its "full" line: some, and no full share */
	c.no_full = true;
	fakeproc_advance(&c);
	fakeproc_write(&proc, &c);
	coll_node_sample_take(p, &m, 42, 12, 3 * SEC, &out);
	assert_int_equal(out.flags, COLL_NODE_PSI | COLL_NODE_IOWAIT | COLL_NODE_MEM);
	assert_int_equal(out.psi_some_ppm, 250000);
	assert_int_equal(out.psi_full_ppm, 0);
	assert_int_equal(out.n_fs, 1);

	fakeproc_close(&proc, p);
}

/* More tagged mounts of block devices than a sample holds: the first
 * COLL_NODE_FS_MAX, in the table's order. */
static void sample_take_at_most(void **state)
{
	(void)state;
	struct fakeproc proc;
	struct fakeproc_counters c = fakeproc_base;
	c.many = true;
	struct iop_node_probe *p = fakeproc_open(&proc, &c);
	struct iop_mount mt[20];
	for (uint32_t i = 0; i < 20; i++)
		mt[i] = (struct iop_mount){.major = 8, .minor = i, .tag = 1000 + i};
	struct iop_mounts m = {.v = mt, .n = 20, .cap = 20};
	struct coll_node_sample out;
	coll_node_sample_take(p, &m, 1, 1, 1 * SEC, &out);
	assert_int_equal(out.n_fs, 0);
	coll_node_sample_take(p, &m, 1, 2, 2 * SEC, &out);
	assert_int_equal(out.n_fs, COLL_NODE_FS_MAX);
	for (uint32_t i = 0; i < COLL_NODE_FS_MAX; i++) {
		assert_int_equal(out.fs[i].fs, 1000 + i);
		assert_int_equal(out.fs[i].util_ppm, 0); /* nothing moved */
	}
	fakeproc_close(&proc, p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(round_trip),
		cmocka_unit_test(layout),
		cmocka_unit_test(smallest_sample),
		cmocka_unit_test(peaks),
		cmocka_unit_test(put_find_merge),
		cmocka_unit_test(fs_find),
		cmocka_unit_test(prefixes_fail),
		cmocka_unit_test(out_of_range),
		cmocka_unit_test(sample_take),
		cmocka_unit_test(sample_take_at_most),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
