/* Frames: round trip of every part (header, stats, names, counters,
 * in-flight reports, events with every optional field), a realistic mixed
 * stream, the encoder's FULL and STATE behaviour, and every rejection path
 * of the decoder, each with its own error. Malformed frames are built by
 * hand (seal() writes a header and a valid MAC around any payload), so each
 * test reaches the check it names rather than failing the MAC first. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "frame_seal_test.h"
#include "hash.h"
#include "test_util.h"
#include "workload.h"

static const struct iop_key key = {
    {0x10, 0x32, 0x54, 0x76, 0x98, 0xba, 0xdc, 0xfe, 1, 2, 3, 4, 5, 6, 7, 8}};
static const struct iop_frame_hdr hdr = {
    .job_id = 0x1122334455667788u,
    .seq = 99,
    .base_ns = 1700000000000000000u,
    .node_id = 0xabcdef01u,
    .rank = 17,
    .pid = 31337,
    .flags = IOP_FRAME_FINAL,
};

/* Writes header and MAC around payload[0..plen), which is already at
 * buf + IOP_FRAME_HEADER_LEN; returns the frame length. */
static size_t seal(uint8_t *buf, size_t plen, uint32_t n_events, uint16_t n_names,
                   uint16_t n_counters, uint16_t n_inflight)
{
	return test_seal(buf, plen, IOP_WIRE_VERSION, &hdr, &key, n_events, n_names, n_counters,
	                 n_inflight);
}

/* Recomputes the MAC after a test changed header or payload bytes. */
static void remac(uint8_t *buf, size_t len)
{
	size_t body = len - IOP_MAC_BYTES;
	assert_int_equal(iop_mac(&key, buf, body, buf + body), IOP_OK);
}

static struct iop_wcur payload_cursor(uint8_t *buf, size_t cap)
{
	assert_true(cap > IOP_FRAME_OVERHEAD + 4);
	struct iop_wcur c = iop_wcur_make(buf + IOP_FRAME_HEADER_LEN, cap - IOP_FRAME_OVERHEAD);
	for (int i = 0; i < 4; i++) /* stats, all zero */
		iop_put_varint(&c, 0);
	return c;
}

static size_t plen_of(const uint8_t *buf, const struct iop_wcur *c)
{
	return (size_t)(c->p - (buf + IOP_FRAME_HEADER_LEN));
}

static struct iop_name file_name(uint32_t id, const char *path)
{
	struct iop_name n = {.kind = IOP_NAME_FILE,
	                     .id = id,
	                     .text = path,
	                     .len = (uint32_t)strlen(path),
	                     .hash = iop_hash_str(path)};
	return n;
}

/* Events exercising every optional field and awkward values. */
static void sample_events(struct iop_event *ev, unsigned *n)
{
	uint64_t t = hdr.base_ns;
	unsigned i = 0;
	memset(ev, 0, 8 * sizeof *ev);
	/* plain sequential writes */
	ev[i] = (struct iop_event){.end_ns = t + 1000,
	                           .dur_ns = 900,
	                           .offset = 0,
	                           .bytes = 1 << 20,
	                           .file = 1,
	                           .site = 2,
	                           .layer = IOP_LAYER_POSIX,
	                           .op = IOP_OP_WRITE,
	                           .flags = IOP_EV_OFFSET | IOP_EV_BYTES};
	i++;
	ev[i] = ev[i - 1];
	ev[i].end_ns += 2000;
	ev[i].offset = 1 << 20;
	i++;
	/* backwards in time (another thread), backwards offset, huge values */
	ev[i] = (struct iop_event){.end_ns = t + 10,
	                           .dur_ns = 10,
	                           .offset = UINT64_MAX - 5,
	                           .bytes = UINT64_MAX,
	                           .file = IOP_ID_MAX,
	                           .site = 0,
	                           .thread = IOP_ID_MAX,
	                           .layer = IOP_LAYER_STDIO,
	                           .op = IOP_OP_READ,
	                           .flags = IOP_EV_OFFSET | IOP_EV_BYTES};
	i++;
	/* a failed metadata call */
	ev[i] = (struct iop_event){.end_ns = t + 5000,
	                           .dur_ns = 5000,
	                           .file = 3,
	                           .site = 4,
	                           .thread = 2,
	                           .err = ENOENT,
	                           .layer = IOP_LAYER_POSIX,
	                           .op = IOP_OP_STAT,
	                           .flags = IOP_EV_ERROR};
	i++;
	/* a child and its MPI-IO parent */
	ev[i] = (struct iop_event){.end_ns = t + 9000,
	                           .dur_ns = 3000,
	                           .offset = 4096,
	                           .bytes = 512,
	                           .file = 1,
	                           .parent_id = 77,
	                           .layer = IOP_LAYER_POSIX,
	                           .op = IOP_OP_WRITE,
	                           .flags = IOP_EV_OFFSET | IOP_EV_BYTES | IOP_EV_PARENT};
	i++;
	ev[i] = (struct iop_event){.end_ns = t + 9500,
	                           .dur_ns = 6000,
	                           .offset = 4096,
	                           .bytes = 512,
	                           .file = 1,
	                           .call_id = 77,
	                           .child_ops = 1,
	                           .child_bytes = 512,
	                           .child_ns = 3000,
	                           .coll_seq = 3,
	                           .coll_size = 64,
	                           .layer = IOP_LAYER_MPIIO,
	                           .op = IOP_OP_WRITE_COLL,
	                           .flags = IOP_EV_OFFSET | IOP_EV_BYTES | IOP_EV_CHILDREN |
	                                    IOP_EV_COLL};
	i++;
	/* a collective call at the numbers' limits, without children */
	ev[i] = (struct iop_event){.end_ns = t + 9600,
	                           .dur_ns = 100,
	                           .file = 1,
	                           .coll_seq = UINT32_MAX,
	                           .coll_size = UINT32_MAX,
	                           .layer = IOP_LAYER_MPIIO,
	                           .op = IOP_OP_CLOSE,
	                           .flags = IOP_EV_COLL};
	i++;
	/* a nested HDF5 call that is both a child and a parent, ids far apart */
	ev[i] = (struct iop_event){.end_ns = UINT64_MAX,
	                           .dur_ns = UINT64_MAX,
	                           .file = 5,
	                           .parent_id = 1,
	                           .call_id = UINT64_MAX,
	                           .child_ops = UINT32_MAX,
	                           .child_bytes = UINT64_MAX,
	                           .child_ns = 1,
	                           .layer = IOP_LAYER_HDF5,
	                           .op = IOP_OP_META,
	                           .flags = IOP_EV_PARENT | IOP_EV_CHILDREN};
	i++;
	*n = i;
}

static void assert_event_equal(const struct iop_event *a, const struct iop_event *b)
{
	assert_true(a->end_ns == b->end_ns);
	assert_true(a->dur_ns == b->dur_ns);
	assert_true(a->offset == b->offset);
	assert_true(a->bytes == b->bytes);
	assert_true(a->call_id == b->call_id);
	assert_true(a->parent_id == b->parent_id);
	assert_true(a->child_bytes == b->child_bytes);
	assert_true(a->child_ns == b->child_ns);
	assert_int_equal(a->child_ops, b->child_ops);
	assert_int_equal(a->file, b->file);
	assert_int_equal(a->site, b->site);
	assert_int_equal(a->thread, b->thread);
	assert_int_equal(a->err, b->err);
	assert_int_equal(a->coll_seq, b->coll_seq);
	assert_int_equal(a->coll_size, b->coll_size);
	assert_int_equal(a->layer, b->layer);
	assert_int_equal(a->op, b->op);
	assert_int_equal(a->flags, b->flags);
}

struct decoded {
	struct iop_frame_out out;
	struct iop_name names[64];
	struct iop_counter counters[64];
	struct iop_inflight inflight[64];
	struct iop_event events[20000];
};

static struct decoded *decoded_new(void)
{
	struct decoded *d = calloc(1, sizeof *d);
	assert_non_null(d);
	d->out.names = d->names;
	d->out.counters = d->counters;
	d->out.inflight = d->inflight;
	d->out.events = d->events;
	d->out.names_cap = d->out.counters_cap = d->out.inflight_cap = 64;
	d->out.events_cap = 20000;
	return d;
}

/* A frame with one or more records of every kind. */
static size_t full_frame(uint8_t *buf, size_t cap)
{
	struct iop_frame_enc e;
	struct iop_stats st = {
	    .events = 123456789, .dropped = 7, .shim_ns = 1u << 31, .send_failures = 2};
	assert_int_equal(iop_enc_begin(&e, buf, cap, &hdr, &st), IOP_OK);
	struct iop_name n1 = file_name(1, "/scratch/run/out.dat");
	static const char ds[] = "/scratch/run/p.h5:/particles/x";
	struct iop_name n2 = {.kind = IOP_NAME_DATASET,
	                      .id = 5,
	                      .text = ds,
	                      .len = sizeof ds - 1,
	                      .hash = iop_hash64(ds, sizeof ds - 1)};
	struct iop_name n3 = {
	    .kind = IOP_NAME_SITE, .id = 2, .text = "main+0x1c", .len = 9, .hash = 42};
	struct iop_name n4 = {
	    .kind = IOP_NAME_HOST, .id = 0, .text = "n001", .len = 4, .hash = hdr.node_id};
	assert_int_equal(iop_enc_name(&e, &n1), IOP_OK);
	assert_int_equal(iop_enc_name(&e, &n2), IOP_OK);
	assert_int_equal(iop_enc_name(&e, &n3), IOP_OK);
	assert_int_equal(iop_enc_name(&e, &n4), IOP_OK);
	struct iop_counter k1 = {.file = 1,
	                         .layer = IOP_LAYER_POSIX,
	                         .cls = IOP_CLASS_WRITE,
	                         .ops = 3,
	                         .bytes = 3 << 20,
	                         .time_ns = 5000,
	                         .errors = 0};
	struct iop_counter k2 = {.file = IOP_ID_MAX,
	                         .layer = IOP_LAYER_HDF5,
	                         .cls = IOP_CLASS_META,
	                         .ops = UINT64_MAX,
	                         .bytes = 0,
	                         .time_ns = UINT64_MAX,
	                         .errors = 9};
	assert_int_equal(iop_enc_counter(&e, &k1), IOP_OK);
	assert_int_equal(iop_enc_counter(&e, &k2), IOP_OK);
	struct iop_inflight f1 = {.start_ns = hdr.base_ns - 5000000000u,
	                          .bytes = 1 << 30,
	                          .thread = 3,
	                          .file = 1,
	                          .layer = IOP_LAYER_MPIIO,
	                          .op = IOP_OP_WRITE_COLL};
	assert_int_equal(iop_enc_inflight(&e, &f1), IOP_OK);
	struct iop_event ev[8];
	unsigned n;
	sample_events(ev, &n);
	for (unsigned i = 0; i < n; i++)
		assert_int_equal(iop_enc_event(&e, &ev[i]), IOP_OK);
	assert_int_equal(iop_enc_events(&e), n);
	size_t len;
	assert_int_equal(iop_enc_finish(&e, &key, &len), IOP_OK);
	return len;
}

static void every_part_round_trips(void **state)
{
	uint8_t buf[4096];
	size_t len = full_frame(buf, sizeof buf);
	struct decoded *d = decoded_new();
	assert_int_equal(iop_frame_decode(buf, len, &key, &d->out), IOP_OK);
	const struct iop_frame *f = &d->out.frame;
	assert_true(f->hdr.job_id == hdr.job_id);
	assert_true(f->hdr.seq == hdr.seq);
	assert_true(f->hdr.base_ns == hdr.base_ns);
	assert_int_equal(f->hdr.node_id, hdr.node_id);
	assert_int_equal(f->hdr.rank, hdr.rank);
	assert_int_equal(f->hdr.pid, hdr.pid);
	assert_int_equal(f->hdr.flags, IOP_FRAME_FINAL);
	assert_true(f->stats.events == 123456789);
	assert_true(f->stats.dropped == 7);
	assert_true(f->stats.shim_ns == 1u << 31);
	assert_true(f->stats.send_failures == 2);

	assert_int_equal(f->n_names, 4);
	assert_int_equal(d->names[0].kind, IOP_NAME_FILE);
	assert_int_equal(d->names[0].id, 1);
	assert_int_equal(d->names[0].len, strlen("/scratch/run/out.dat"));
	assert_memory_equal(d->names[0].text, "/scratch/run/out.dat", d->names[0].len);
	assert_true(d->names[0].hash == iop_hash_str("/scratch/run/out.dat"));
	assert_int_equal(d->names[1].kind, IOP_NAME_DATASET);
	assert_int_equal(d->names[2].kind, IOP_NAME_SITE);
	assert_true(d->names[2].hash == 42);
	assert_int_equal(d->names[3].kind, IOP_NAME_HOST);
	assert_memory_equal(d->names[3].text, "n001", 4);

	assert_int_equal(f->n_counters, 2);
	assert_true(d->counters[0].bytes == 3 << 20);
	assert_int_equal(d->counters[0].cls, IOP_CLASS_WRITE);
	assert_int_equal(d->counters[1].file, IOP_ID_MAX);
	assert_int_equal(d->counters[1].layer, IOP_LAYER_HDF5);
	assert_true(d->counters[1].ops == UINT64_MAX);
	assert_true(d->counters[1].errors == 9);

	assert_int_equal(f->n_inflight, 1);
	assert_true(d->inflight[0].start_ns == hdr.base_ns - 5000000000u);
	assert_true(d->inflight[0].bytes == 1 << 30);
	assert_int_equal(d->inflight[0].op, IOP_OP_WRITE_COLL);
	assert_int_equal(d->inflight[0].thread, 3);

	struct iop_event ev[8];
	unsigned n;
	sample_events(ev, &n);
	assert_int_equal(f->n_events, n);
	for (unsigned i = 0; i < n; i++)
		assert_event_equal(&d->events[i], &ev[i]);
	free(d);
}

static void empty_frame_round_trips(void **state)
{
	uint8_t buf[256];
	struct iop_frame_enc e;
	size_t len;
	assert_int_equal(iop_enc_begin(&e, buf, sizeof buf, &hdr, NULL), IOP_OK);
	assert_int_equal(iop_enc_finish(&e, &key, &len), IOP_OK);
	assert_int_equal(len, IOP_FRAME_OVERHEAD + 4);
	struct iop_frame f;
	assert_int_equal(iop_frame_open(&f, buf, len, &key), IOP_OK);
	assert_int_equal(f.n_events + f.n_names + f.n_counters + f.n_inflight, 0);
	struct iop_event ev;
	assert_int_equal(iop_frame_event(&f, &ev), IOP_ERR_STATE); /* nothing to read */
	assert_int_equal(iop_frame_close(&f), IOP_OK);
}

static void realistic_stream_round_trips_exactly(void **state)
{
	enum { N = 60000 };
	struct iop_wl *w = malloc(sizeof *w);
	struct iop_event *src = malloc(N * sizeof *src);
	uint8_t *buf = malloc(IOP_FRAME_MAX_LEN);
	struct decoded *d = decoded_new();
	assert_true(w && src && buf);
	assert_true(iop_wl_init(w, IOP_WL_MIXED, 3, 1, hdr.base_ns));
	iop_wl_generate(w, src, N);
	unsigned flags_seen = 0;
	for (unsigned i = 0; i < N; i++)
		flags_seen |= src[i].flags;
	assert_int_equal(flags_seen, 0x1f); /* the stream exercises every field */

	unsigned done = 0, frames = 0;
	while (done < N) {
		struct iop_frame_enc e;
		struct iop_frame_hdr h = hdr;
		h.seq = frames;
		h.base_ns = src[done].end_ns;
		assert_int_equal(iop_enc_begin(&e, buf, 16384, &h, NULL), IOP_OK);
		unsigned first = done;
		while (done < N && iop_enc_event(&e, &src[done]) == IOP_OK)
			done++;
		assert_true(done > first);
		size_t len;
		assert_int_equal(iop_enc_finish(&e, &key, &len), IOP_OK);
		assert_true(len <= 16384);
		assert_int_equal(iop_frame_decode(buf, len, &key, &d->out), IOP_OK);
		assert_int_equal(d->out.frame.n_events, done - first);
		for (unsigned i = first; i < done; i++)
			assert_event_equal(&d->events[i - first], &src[i]);
		frames++;
	}
	assert_true(frames > 10);
	iop_wl_free(w);
	free(w);
	free(src);
	free(buf);
	free(d);
}

static void workload_frames_carry_names_and_counters(void **state)
{
	struct iop_wl *w = malloc(sizeof *w);
	uint8_t *buf = malloc(65536);
	struct decoded *d = decoded_new();
	assert_true(iop_wl_init(w, IOP_WL_IOR_WRITE, 0, 5, hdr.base_ns));
	size_t len;
	unsigned n;
	assert_int_equal(iop_wl_frame(w, buf, 65536, 1000, &key, &len, &n), IOP_OK);
	assert_int_equal(n, 1000);
	assert_int_equal(iop_frame_decode(buf, len, &key, &d->out), IOP_OK);
	assert_true(d->out.frame.n_names >= 2); /* the file and a site */
	assert_true(d->out.frame.n_counters >= 2);
	/* cumulative counters are at least what this frame's events add up to */
	uint64_t posix_bytes = 0;
	for (unsigned i = 0; i < n; i++)
		if (d->events[i].layer == IOP_LAYER_POSIX)
			posix_bytes += d->events[i].bytes;
	uint64_t counted = 0;
	for (unsigned i = 0; i < d->out.frame.n_counters; i++)
		if (d->counters[i].layer == IOP_LAYER_POSIX &&
		    d->counters[i].cls == IOP_CLASS_WRITE)
			counted += d->counters[i].bytes;
	assert_true(counted >= posix_bytes);
	/* the second frame announces nothing new */
	assert_int_equal(iop_wl_frame(w, buf, 65536, 1000, &key, &len, &n), IOP_OK);
	assert_int_equal(iop_frame_decode(buf, len, &key, &d->out), IOP_OK);
	assert_int_equal(d->out.frame.n_names, 0);
	iop_wl_free(w);
	free(w);
	free(buf);
	free(d);
}

static void a_full_buffer_keeps_the_frame_valid(void **state)
{
	uint8_t buf[256];
	struct iop_frame_enc e;
	assert_int_equal(iop_enc_begin(&e, buf, sizeof buf, &hdr, NULL), IOP_OK);
	struct iop_event ev[8];
	unsigned n, accepted = 0;
	sample_events(ev, &n);
	enum iop_err err = IOP_OK;
	for (unsigned round = 0; round < 100 && err == IOP_OK; round++) {
		struct iop_event x = ev[round % 2];
		x.end_ns += round * 100000u;
		x.offset = (uint64_t)round << 40; /* far jumps: long varints */
		if ((err = iop_enc_event(&e, &x)) == IOP_OK)
			accepted++;
	}
	assert_int_equal(err, IOP_ERR_FULL);
	assert_true(accepted > 3);
	/* a name no longer fits either, and is refused for order anyway */
	struct iop_name nm = file_name(9, "/x");
	assert_int_equal(iop_enc_name(&e, &nm), IOP_ERR_STATE);
	size_t len;
	assert_int_equal(iop_enc_finish(&e, &key, &len), IOP_OK);
	assert_true(len <= sizeof buf);
	struct decoded *d = decoded_new();
	assert_int_equal(iop_frame_decode(buf, len, &key, &d->out), IOP_OK);
	assert_int_equal(d->out.frame.n_events, accepted);
	free(d);

	/* names and counters that do not fit are rolled back too */
	char longpath[IOP_NAME_MAX + 1];
	memset(longpath, 'a', IOP_NAME_MAX);
	longpath[0] = '/';
	longpath[IOP_NAME_MAX] = 0;
	assert_int_equal(iop_enc_begin(&e, buf, sizeof buf, &hdr, NULL), IOP_OK);
	struct iop_name big = file_name(1, longpath);
	assert_int_equal(iop_enc_name(&e, &big), IOP_ERR_FULL);
	assert_int_equal(iop_enc_finish(&e, &key, &len), IOP_OK);
	assert_int_equal(len, IOP_FRAME_OVERHEAD + 4);
}

static void the_encoder_refuses_bad_input_and_bad_order(void **state)
{
	uint8_t buf[1024];
	struct iop_frame_enc e;
	struct iop_frame_hdr bad_hdr = hdr;
	bad_hdr.flags = 0x8000;
	assert_int_equal(iop_enc_begin(&e, buf, sizeof buf, &bad_hdr, NULL), IOP_ERR_INVAL);
	assert_int_equal(iop_enc_begin(&e, buf, IOP_FRAME_OVERHEAD, &hdr, NULL), IOP_ERR_INVAL);
	assert_int_equal(iop_enc_begin(&e, buf, sizeof buf, &hdr, NULL), IOP_OK);

	struct iop_name wrong_hash = file_name(1, "/a");
	wrong_hash.hash ^= 1;
	assert_int_equal(iop_enc_name(&e, &wrong_hash), IOP_ERR_INVAL);
	struct iop_name nul = {.kind = IOP_NAME_SITE, .id = 1, .text = "a\0b", .len = 3};
	assert_int_equal(iop_enc_name(&e, &nul), IOP_ERR_INVAL);
	struct iop_name kind = file_name(1, "/a");
	kind.kind = 9;
	assert_int_equal(iop_enc_name(&e, &kind), IOP_ERR_INVAL);
	struct iop_counter k = {.file = 1, .layer = 0, .cls = IOP_CLASS__COUNT};
	assert_int_equal(iop_enc_counter(&e, &k), IOP_ERR_INVAL);

	struct iop_event ev = {.end_ns = 10, .dur_ns = 11};
	assert_int_equal(iop_enc_event(&e, &ev), IOP_ERR_INVAL); /* starts before the epoch */
	ev.dur_ns = 1;
	ev.op = IOP_OP__COUNT;
	assert_int_equal(iop_enc_event(&e, &ev), IOP_ERR_INVAL);
	ev.op = IOP_OP_READ;
	ev.file = IOP_ID_MAX + 1;
	assert_int_equal(iop_enc_event(&e, &ev), IOP_ERR_INVAL);
	ev.file = 1;
	assert_int_equal(iop_enc_event(&e, &ev), IOP_OK);

	struct iop_counter ok = {.file = 1};
	assert_int_equal(iop_enc_counter(&e, &ok), IOP_ERR_STATE); /* after events */
	size_t len;
	assert_int_equal(iop_enc_finish(&e, &key, &len), IOP_OK);
	assert_int_equal(iop_enc_finish(&e, &key, &len), IOP_ERR_STATE);
}

/* ---- rejections ---- */

static enum iop_err open_err(const uint8_t *buf, size_t len)
{
	struct iop_frame f;
	return iop_frame_open(&f, buf, len, &key);
}

static enum iop_err decode_err(const uint8_t *buf, size_t len)
{
	struct decoded *d = decoded_new();
	enum iop_err err = iop_frame_decode(buf, len, &key, &d->out);
	free(d);
	return err;
}

static void bad_magic_and_version(void **state)
{
	uint8_t buf[4096];
	size_t len = full_frame(buf, sizeof buf);
	buf[0] ^= 0x20;
	assert_int_equal(open_err(buf, len), IOP_ERR_BAD_MAGIC);
	buf[0] ^= 0x20;
	iop_store_u16le(buf + 4, IOP_WIRE_VERSION + 1);
	assert_int_equal(open_err(buf, len), IOP_ERR_BAD_VERSION);
	iop_store_u16le(buf + 4, 0);
	assert_int_equal(open_err(buf, len), IOP_ERR_BAD_VERSION);
	struct iop_frame_hdr h;
	assert_int_equal(iop_frame_peek(buf, len, &h), IOP_ERR_BAD_VERSION);
}

static void any_changed_byte_or_another_key_fails_the_mac(void **state)
{
	uint8_t buf[4096];
	size_t len = full_frame(buf, sizeof buf);
	/* header fields after the length checks, every payload byte, the MAC */
	for (size_t i = 6; i < len; i++) {
		if (i >= 28 && i < 32)
			continue; /* the payload length is checked before the MAC */
		buf[i] ^= 0x01;
		assert_int_equal(open_err(buf, len), IOP_ERR_BAD_MAC);
		buf[i] ^= 0x01;
	}
	assert_int_equal(open_err(buf, len), IOP_OK);
	struct iop_key other = key;
	other.b[0] ^= 1; /* a frame from another job */
	struct iop_frame f;
	assert_int_equal(iop_frame_open(&f, buf, len, &other), IOP_ERR_BAD_MAC);
	/* peek still reads the header, to say whose frame it was */
	struct iop_frame_hdr h;
	assert_int_equal(iop_frame_peek(buf, len, &h), IOP_OK);
	assert_true(h.job_id == hdr.job_id);
	assert_int_equal(h.rank, hdr.rank);
}

static void every_truncation_is_reported_as_truncated(void **state)
{
	uint8_t buf[4096];
	size_t len = full_frame(buf, sizeof buf);
	for (size_t k = 0; k < len; k++)
		assert_int_equal(open_err(buf, k), IOP_ERR_TRUNCATED);
}

static void oversized_lengths_and_counts(void **state)
{
	uint8_t buf[IOP_NAME_MAX + 512];
	size_t len = full_frame(buf, sizeof buf);
	/* a payload length above the limit */
	uint8_t tmp[4096];
	memcpy(tmp, buf, len);
	iop_store_u32le(tmp + 28, IOP_FRAME_MAX_PAYLOAD + 1);
	assert_int_equal(open_err(tmp, len), IOP_ERR_OVERSIZED);

	/* a name longer than IOP_NAME_MAX */
	struct iop_wcur c = payload_cursor(buf, sizeof buf);
	iop_put_u8(&c, IOP_NAME_SITE);
	iop_put_varint(&c, 1);
	iop_put_u64le(&c, 0);
	iop_put_varint(&c, IOP_NAME_MAX + 1);
	for (unsigned i = 0; i <= IOP_NAME_MAX; i++)
		iop_put_u8(&c, 'x');
	assert_int_equal(c.err, IOP_OK);
	len = seal(buf, plen_of(buf, &c), 0, 1, 0, 0);
	assert_int_equal(decode_err(buf, len), IOP_ERR_OVERSIZED);

	/* more records than the caller's arrays hold */
	len = full_frame(buf, sizeof buf);
	struct decoded *d = decoded_new();
	d->out.events_cap = 2;
	assert_int_equal(iop_frame_decode(buf, len, &key, &d->out), IOP_ERR_OVERSIZED);
	d->out.events_cap = 20000;
	d->out.names_cap = 3;
	assert_int_equal(iop_frame_decode(buf, len, &key, &d->out), IOP_ERR_OVERSIZED);
	free(d);
}

static void counts_that_do_not_match_the_data(void **state)
{
	uint8_t buf[4096];
	size_t len = full_frame(buf, sizeof buf);
	uint32_t n_events = iop_load_u32le(buf + 48);

	/* one event more than the payload holds */
	iop_store_u32le(buf + 48, n_events + 1);
	remac(buf, len);
	assert_int_equal(decode_err(buf, len), IOP_ERR_INCONSISTENT);
	/* one fewer: bytes left over */
	iop_store_u32le(buf + 48, n_events - 1);
	remac(buf, len);
	assert_int_equal(decode_err(buf, len), IOP_ERR_INCONSISTENT);
	/* absurd counts are caught before any record is read: more calls
	 * than a frame may carry (a run record holds many in a few bytes) */
	iop_store_u32le(buf + 48, 0x80000000u);
	remac(buf, len);
	assert_int_equal(open_err(buf, len), IOP_ERR_OVERSIZED);
	iop_store_u32le(buf + 48, IOP_FRAME_MAX_EVENTS + 1);
	remac(buf, len);
	assert_int_equal(open_err(buf, len), IOP_ERR_OVERSIZED);
	iop_store_u32le(buf + 48, n_events);
	iop_store_u16le(buf + 52, 0xffff);
	remac(buf, len);
	assert_int_equal(open_err(buf, len), IOP_ERR_INCONSISTENT);

	/* a buffer longer than the frame it holds */
	len = full_frame(buf, sizeof buf);
	assert_int_equal(open_err(buf, len + 1), IOP_ERR_INCONSISTENT);

	/* a stats section cut short */
	struct iop_wcur c = iop_wcur_make(buf + IOP_FRAME_HEADER_LEN, 100);
	iop_put_varint(&c, 5);
	iop_put_varint(&c, 5);
	len = seal(buf, plen_of(buf, &c), 0, 0, 0, 0);
	assert_int_equal(open_err(buf, len), IOP_ERR_INCONSISTENT);
}

/* One event whose bytes the caller writes after the stats. */
static size_t frame_with_raw_event(uint8_t *buf, size_t cap, const uint8_t *ev, size_t n)
{
	struct iop_wcur c = payload_cursor(buf, cap);
	iop_put_bytes(&c, ev, n);
	return seal(buf, plen_of(buf, &c), 1, 0, 0, 0);
}

static void malformed_fields(void **state)
{
	uint8_t buf[4096];
	size_t len;
	/* an op beyond the table */
	const uint8_t bad_op[] = {IOP_OP__COUNT, 0, 2, 1};
	len = frame_with_raw_event(buf, sizeof buf, bad_op, sizeof bad_op);
	assert_int_equal(decode_err(buf, len), IOP_ERR_MALFORMED);
	/* a well-formed one decodes (so the test above fails for the op) */
	const uint8_t good[] = {IOP_OP_READ, 0, 2, 1};
	len = frame_with_raw_event(buf, sizeof buf, good, sizeof good);
	assert_int_equal(decode_err(buf, len), IOP_OK);
	/* a duration longer than the time since the epoch */
	const uint8_t early[] = {IOP_OP_READ, 0,    0,    0xff, 0xff, 0xff, 0xff,
	                         0xff,        0xff, 0xff, 0xff, 0xff, 0x01};
	len = frame_with_raw_event(buf, sizeof buf, early, sizeof early);
	assert_int_equal(decode_err(buf, len), IOP_ERR_MALFORMED);
	/* a file id above IOP_ID_MAX */
	const uint8_t big_id[] = {IOP_OP_READ, 0x02, 2, 1, 0x80, 0x80, 0x80, 0x08};
	len = frame_with_raw_event(buf, sizeof buf, big_id, sizeof big_id);
	assert_int_equal(decode_err(buf, len), IOP_ERR_MALFORMED);
	/* an overlong varint inside an event */
	uint8_t overlong[16] = {IOP_OP_READ, 0};
	memset(overlong + 2, 0x80, 11);
	overlong[13] = 0;
	len = frame_with_raw_event(buf, sizeof buf, overlong, 14);
	assert_int_equal(decode_err(buf, len), IOP_ERR_MALFORMED);

	/* name records: unknown kind, a hash that is not the path's, a NUL, empty */
	const char *path = "/scratch/f";
	struct {
		uint8_t kind;
		uint64_t hash;
		const char *text;
		uint32_t len;
	} names[] = {
	    {9, 0, "x", 1},
	    {IOP_NAME_FILE, 12345, path, 10},
	    {IOP_NAME_SITE, 0, "a\0b", 3},
	    {IOP_NAME_SITE, 0, "", 0},
	};
	for (unsigned i = 0; i < 4; i++) {
		struct iop_wcur c = payload_cursor(buf, sizeof buf);
		iop_put_u8(&c, names[i].kind);
		iop_put_varint(&c, 1);
		iop_put_u64le(&c, names[i].hash);
		iop_put_varint(&c, names[i].len);
		iop_put_bytes(&c, names[i].text, names[i].len);
		iop_put_u8(&c, 0); /* padding so the up-front size check passes */
		iop_put_u8(&c, 0);
		len = seal(buf, plen_of(buf, &c) - (names[i].len ? 2 : 0), 0, 1, 0, 0);
		assert_int_equal(decode_err(buf, len), IOP_ERR_MALFORMED);
	}

	/* a counter with a class beyond the table */
	struct iop_wcur c = payload_cursor(buf, sizeof buf);
	iop_put_varint(&c, 1);
	iop_put_u8(&c, IOP_LAYER_POSIX << 2 | 3);
	for (int i = 0; i < 4; i++)
		iop_put_varint(&c, 1);
	len = seal(buf, plen_of(buf, &c), 0, 0, 1, 0);
	assert_int_equal(decode_err(buf, len), IOP_ERR_MALFORMED);

	/* unknown header flags and a non-zero reserved field */
	len = full_frame(buf, sizeof buf);
	iop_store_u16le(buf + 6, 0x4000);
	remac(buf, len);
	assert_int_equal(open_err(buf, len), IOP_ERR_MALFORMED);
	len = full_frame(buf, sizeof buf);
	iop_store_u16le(buf + 58, 1);
	remac(buf, len);
	assert_int_equal(open_err(buf, len), IOP_ERR_MALFORMED);
}

/* Varints of every length (1 to 10 bytes) in events far from the
 * payload's end, where the decoder reads them without a bounds check a
 * byte, and near it; a 10th byte above 1 refused there too. */
static void varints_of_every_length(void **state)
{
	(void)state;
	enum { N = 60 };
	static struct iop_event src[N];
	static uint8_t buf[8192];
	struct iop_frame_enc e;
	size_t len;
	assert_int_equal(iop_enc_begin(&e, buf, sizeof buf, &hdr, NULL), IOP_OK);
	for (unsigned i = 0; i < N; i++) {
		unsigned k = 1 + i % 10; /* the varint's bytes */
		uint64_t most = k == 10 ? UINT64_MAX : (UINT64_C(1) << (7 * k)) - 1;
		uint64_t least = k == 1 ? 1 : UINT64_C(1) << (7 * (k - 1));
		src[i] = (struct iop_event){.end_ns = hdr.base_ns + i, .dur_ns = i % 7,
		                            .offset = i % 2 ? most : least,
		                            .bytes = i % 2 ? least : most, .file = 1,
		                            .layer = IOP_LAYER_POSIX, .op = IOP_OP_READ,
		                            .flags = IOP_EV_OFFSET | IOP_EV_BYTES};
		assert_int_equal(iop_enc_event(&e, &src[i]), IOP_OK);
	}
	assert_int_equal(iop_enc_finish(&e, &key, &len), IOP_OK);
	struct decoded *d = decoded_new();
	assert_int_equal(iop_frame_decode(buf, len, &key, &d->out), IOP_OK);
	for (unsigned i = 0; i < N; i++)
		assert_event_equal(&src[i], &d->events[i]);
	free(d);

	uint8_t raw[200] = {IOP_OP_READ, 0}; /* end delta of 10 bytes, then padding */
	memset(raw + 2, 0xff, 9);
	raw[11] = 1;
	len = frame_with_raw_event(buf, sizeof buf, raw, sizeof raw);
	assert_int_equal(decode_err(buf, len), IOP_ERR_INCONSISTENT); /* read, padding left */
	raw[11] = 2;
	len = frame_with_raw_event(buf, sizeof buf, raw, sizeof raw);
	assert_int_equal(decode_err(buf, len), IOP_ERR_MALFORMED);
}

static void sections_must_be_read_in_order(void **state)
{
	uint8_t buf[4096];
	size_t len = full_frame(buf, sizeof buf);
	struct iop_frame f;
	struct iop_event ev;
	struct iop_name nm;
	struct iop_counter k;
	assert_int_equal(iop_frame_open(&f, buf, len, &key), IOP_OK);
	assert_int_equal(iop_frame_event(&f, &ev), IOP_ERR_STATE); /* names first */
	assert_int_equal(iop_frame_close(&f), IOP_ERR_STATE);      /* not all read */
	for (unsigned i = 0; i < f.n_names; i++)
		assert_int_equal(iop_frame_name(&f, &nm), IOP_OK);
	assert_int_equal(iop_frame_name(&f, &nm), IOP_ERR_STATE);
	assert_int_equal(iop_frame_counter(&f, &k), IOP_OK);
	/* after a failure the frame is done */
	uint8_t bad[128];
	const uint8_t raw[] = {IOP_OP__COUNT, 0, 2, 1};
	size_t blen = frame_with_raw_event(bad, sizeof bad, raw, sizeof raw);
	assert_int_equal(iop_frame_open(&f, bad, blen, &key), IOP_OK);
	assert_int_equal(iop_frame_event(&f, &ev), IOP_ERR_MALFORMED);
	assert_int_equal(iop_frame_event(&f, &ev), IOP_ERR_STATE);
	assert_int_equal(iop_frame_close(&f), IOP_ERR_MALFORMED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(every_part_round_trips),
	    cmocka_unit_test(empty_frame_round_trips),
	    cmocka_unit_test(realistic_stream_round_trips_exactly),
	    cmocka_unit_test(workload_frames_carry_names_and_counters),
	    cmocka_unit_test(a_full_buffer_keeps_the_frame_valid),
	    cmocka_unit_test(the_encoder_refuses_bad_input_and_bad_order),
	    cmocka_unit_test(bad_magic_and_version),
	    cmocka_unit_test(any_changed_byte_or_another_key_fails_the_mac),
	    cmocka_unit_test(every_truncation_is_reported_as_truncated),
	    cmocka_unit_test(oversized_lengths_and_counts),
	    cmocka_unit_test(counts_that_do_not_match_the_data),
	    cmocka_unit_test(malformed_fields),
	    cmocka_unit_test(varints_of_every_length),
	    cmocka_unit_test(sections_must_be_read_in_order),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
