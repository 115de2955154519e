/* libFuzzer target for the collector's ingest path: frames into a leaf
 * (which keeps per-process state across inputs, as a real leaf does), and
 * tick deltas between collectors into a decoder and a root.
 *
 * Each input is tried as a frame twice: as it is, and with its job id, node
 * and length fixed up and a valid MAC, so mutations reach the leaf's
 * handling of names, counters, in-flight calls, events and sequence numbers
 * behind the MAC. It is also tried as a delta body, and a body that decodes
 * is merged into a root; and as a whole delta message between collectors
 * with a valid MAC and a zstd-compressed body: the input after its first
 * byte compressed (so mutated bodies reach the decoder through zstd), or
 * taken as the compressed bytes themselves (lengths, frames and bounds that
 * lie). Every few hundred inputs the leaf and root close
 * their ticks and are replaced, so memory stays bounded across a run (the
 * sanitizer's leak check sees everything freed). */
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "delta.h"
#include "frame.h"
#include "fuzz_key.h"
#include "leaf.h"
#include "root.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define JOB 0x10b
#define T0  (1700000000ull * 1000000000ull)

static struct coll_leaf *leaf;
static struct coll_root *root;
static unsigned inputs;
static uint64_t now = T0;

static void to_root(void *arg, struct coll_delta *d)
{
	(void)arg;
	(void)coll_root_delta(root, d);
}

/* The input as a compressed delta message (see the top). */
static void as_message(const uint8_t *data, size_t size)
{
	if (size < 1)
		return;
	size_t body = size - 1, cap = 32 + IOP_VARINT_MAX + ZSTD_compressBound(body) + IOP_MAC_BYTES;
	uint8_t *m = malloc(cap);
	if (!m)
		return;
	struct iop_wcur w = iop_wcur_make(m, cap);
	iop_put_u32le(&w, COLL_DELTA_MAGIC);
	iop_put_u16le(&w, COLL_DELTA_VERSION);
	iop_put_u16le(&w, COLL_DELTA_F_ZSTD);
	iop_put_u64le(&w, JOB);
	iop_put_u64le(&w, 1);
	iop_put_u64le(&w, inputs);
	if (data[0] & 1) {
		iop_put_varint(&w, body);
		size_t zn = ZSTD_compress(w.p, ZSTD_compressBound(body), data + 1, body, 1);
		if (ZSTD_isError(zn)) {
			free(m);
			return;
		}
		w.p += zn;
	} else {
		iop_put_bytes(&w, data + 1, body);
	}
	size_t n = (size_t)(w.p - m);
	iop_mac(&fuzz_key, m, n, m + n);
	struct coll_delta d;
	struct coll_delta_hdr h;
	coll_delta_init(&d, 0, 1000000000ull);
	if (coll_delta_decode(&d, &h, m, n + IOP_MAC_BYTES, &fuzz_key, JOB) == IOP_OK &&
	    d.tick.tick_ns)
		(void)coll_root_delta(root, &d);
	coll_delta_free(&d);
	free(m);
}

static void renew(void)
{
	if (leaf) {
		coll_leaf_advance(leaf, now + 100000000000ull, true, to_root, NULL);
		coll_root_advance(root, now + 100000000000ull, true, NULL, NULL);
		coll_leaf_free(leaf);
		coll_root_free(root);
	}
	struct coll_leaf_cfg lc;
	coll_leaf_cfg_default(&lc);
	lc.job_id = JOB;
	lc.key = fuzz_key;
	struct coll_root_cfg rc;
	coll_root_cfg_default(&rc, lc.tick_ns);
	rc.history.full_ticks = 8;
	rc.history.bin1_count = 4;
	rc.history.bin2_count = 4;
	if (coll_leaf_new(&lc, now, &leaf) != IOP_OK || coll_root_new(&rc, now, &root) != IOP_OK)
		abort();
}

__attribute__((destructor)) static void done(void)
{
	coll_leaf_free(leaf);
	coll_root_free(root);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!leaf || ++inputs % 256 == 0)
		renew();
	now += 7000000; /* time moves on: ticks close, processes go silent */
	(void)coll_leaf_frame(leaf, data, size, now);
	if (size >= IOP_FRAME_HEADER_LEN && size <= IOP_FRAME_HEADER_LEN + IOP_FRAME_MAX_PAYLOAD) {
		uint8_t *buf = malloc(size + IOP_MAC_BYTES);
		if (!buf)
			return 0;
		memcpy(buf, data, size);
		iop_store_u64le(buf + 8, JOB);
		iop_store_u32le(buf + 16, buf[16] & 3); /* a few nodes, so processes meet again */
		iop_store_u32le(buf + 28, (uint32_t)(size - IOP_FRAME_HEADER_LEN));
		iop_mac(&fuzz_key, buf, size, buf + size);
		(void)coll_leaf_frame(leaf, buf, size + IOP_MAC_BYTES, now);
		free(buf);
	}
	coll_leaf_advance(leaf, now, false, to_root, NULL);

	struct coll_delta d;
	coll_delta_init(&d, 0, 1000000000ull);
	struct iop_rcur c = iop_rcur_make(data, size);
	if (coll_delta_decode_body(&d, &c) == IOP_OK && d.tick.tick_ns)
		(void)coll_root_delta(root, &d);
	coll_delta_free(&d);
	as_message(data, size);
	coll_root_advance(root, now, false, NULL, NULL);
	return 0;
}
