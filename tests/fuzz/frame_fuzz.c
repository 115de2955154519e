/* libFuzzer target for the frame decoder.
 *
 * Each input is tried twice: as it is (header checks, MAC rejection), and
 * as header + payload with its length field set to fit and a valid MAC
 * appended, so mutations reach every record decoder behind the MAC. A frame
 * that decodes must re-encode, and decode again to the very same records:
 * a decoder that accepts what the encoder cannot produce, or reads a field
 * differently, fails here. Sanitizers catch reads out of bounds, leaks and UB. */
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "fuzz_key.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { CAP_NAMES = 256, CAP_COUNTERS = 256, CAP_INFLIGHT = 256, CAP_EVENTS = 65536 };

struct decoded {
	struct iop_frame_out out;
	struct iop_name names[CAP_NAMES];
	struct iop_counter counters[CAP_COUNTERS];
	struct iop_inflight inflight[CAP_INFLIGHT];
	struct iop_event events[CAP_EVENTS];
};

static struct decoded *decoded_get(int which)
{
	static struct decoded *d[2];
	if (!d[which]) {
		d[which] = calloc(1, sizeof *d[which]);
		if (!d[which])
			abort();
	}
	struct decoded *x = d[which];
	x->out.names = x->names;
	x->out.counters = x->counters;
	x->out.inflight = x->inflight;
	x->out.events = x->events;
	x->out.names_cap = CAP_NAMES;
	x->out.counters_cap = CAP_COUNTERS;
	x->out.inflight_cap = CAP_INFLIGHT;
	x->out.events_cap = CAP_EVENTS;
	return x;
}

static void check(bool ok)
{
	if (!ok)
		abort();
}

/* Field by field: structs have padding that memcmp would compare. */
static bool same_counter(const struct iop_counter *x, const struct iop_counter *y)
{
	return x->ops == y->ops && x->bytes == y->bytes && x->time_ns == y->time_ns &&
	       x->errors == y->errors && x->file == y->file && x->layer == y->layer &&
	       x->cls == y->cls;
}

static bool same_inflight(const struct iop_inflight *x, const struct iop_inflight *y)
{
	return x->start_ns == y->start_ns && x->bytes == y->bytes && x->thread == y->thread &&
	       x->file == y->file && x->layer == y->layer && x->op == y->op;
}

static bool same_event(const struct iop_event *x, const struct iop_event *y)
{
	return x->end_ns == y->end_ns && x->dur_ns == y->dur_ns && x->offset == y->offset &&
	       x->bytes == y->bytes && x->call_id == y->call_id && x->parent_id == y->parent_id &&
	       x->child_bytes == y->child_bytes && x->child_ns == y->child_ns &&
	       x->child_ops == y->child_ops && x->file == y->file && x->site == y->site &&
	       x->thread == y->thread && x->err == y->err && x->layer == y->layer &&
	       x->op == y->op && (x->flags & ~IOP_EV_RUN) == (y->flags & ~IOP_EV_RUN);
}

/* Re-encodes what a decode produced and checks the second decode agrees.
 * The calls of run records go out as events (their IOP_EV_RUN mark is
 * the decoder's): when they do not fit in a frame that way (a run holds
 * many calls in a few bytes), there is nothing to compare. */
static void round_trip(const struct decoded *a)
{
	static uint8_t buf[IOP_FRAME_MAX_LEN];
	const struct iop_frame *f = &a->out.frame;
	struct iop_frame_enc e;
	check(iop_enc_begin(&e, buf, sizeof buf, &f->hdr, &f->stats) == IOP_OK);
	for (unsigned i = 0; i < f->n_names; i++)
		check(iop_enc_name(&e, &a->names[i]) == IOP_OK);
	for (unsigned i = 0; i < f->n_counters; i++)
		check(iop_enc_counter(&e, &a->counters[i]) == IOP_OK);
	for (unsigned i = 0; i < f->n_inflight; i++)
		check(iop_enc_inflight(&e, &a->inflight[i]) == IOP_OK);
	bool runs = false;
	for (unsigned i = 0; i < f->n_events; i++) {
		runs |= (a->events[i].flags & IOP_EV_RUN) != 0;
		enum iop_err err = iop_enc_event(&e, &a->events[i]);
		if (err == IOP_ERR_FULL && runs)
			return;
		check(err == IOP_OK);
	}
	size_t len;
	check(iop_enc_finish(&e, &fuzz_key, &len) == IOP_OK);

	struct decoded *b = decoded_get(1);
	check(iop_frame_decode(buf, len, &fuzz_key, &b->out) == IOP_OK);
	const struct iop_frame *g = &b->out.frame;
	check(f->hdr.job_id == g->hdr.job_id && f->hdr.seq == g->hdr.seq &&
	      f->hdr.base_ns == g->hdr.base_ns && f->hdr.node_id == g->hdr.node_id &&
	      f->hdr.rank == g->hdr.rank && f->hdr.pid == g->hdr.pid &&
	      f->hdr.flags == g->hdr.flags);
	check(f->stats.events == g->stats.events && f->stats.dropped == g->stats.dropped &&
	      f->stats.shim_ns == g->stats.shim_ns &&
	      f->stats.send_failures == g->stats.send_failures);
	check(f->n_names == g->n_names && f->n_counters == g->n_counters &&
	      f->n_inflight == g->n_inflight && f->n_events == g->n_events);
	for (unsigned i = 0; i < f->n_names; i++) {
		const struct iop_name *x = &a->names[i], *y = &b->names[i];
		check(x->kind == y->kind && x->id == y->id && x->hash == y->hash &&
		      x->len == y->len && memcmp(x->text, y->text, x->len) == 0);
	}
	for (unsigned i = 0; i < f->n_counters; i++)
		check(same_counter(&a->counters[i], &b->counters[i]));
	for (unsigned i = 0; i < f->n_inflight; i++)
		check(same_inflight(&a->inflight[i], &b->inflight[i]));
	for (unsigned i = 0; i < f->n_events; i++)
		check(same_event(&a->events[i], &b->events[i]));
}

/* The same frame read with long runs whole (iop_frame_events_whole, as
 * the leaf reads): the same verdict, and each run decoded whole gives
 * back (iop_run_whole_calls) the calls the call-by-call reader gave. Room
 * for fewer buckets than a frame's runs can hold, so some runs come call
 * by call in the same read. */
static void whole_agrees(const uint8_t *buf, size_t len, enum iop_err verdict,
                         const struct decoded *d)
{
	enum { RUNS = CAP_EVENTS / (IOP_RUN_EXACT_MAX + 1) + 1, BK = 1 << 16 };
	static struct iop_run_whole run[RUNS];
	static uint32_t bk[BK];
	static struct iop_event ev[CAP_EVENTS], calls[CAP_EVENTS];
	struct iop_frame f;
	enum iop_err err = iop_frame_open(&f, buf, len, &fuzz_key);
	if (err == IOP_OK && (f.n_names > CAP_NAMES || f.n_counters > CAP_COUNTERS ||
	                      f.n_inflight > CAP_INFLIGHT || f.n_events > CAP_EVENTS))
		err = IOP_ERR_OVERSIZED;
	struct iop_name nm;
	struct iop_counter ct;
	struct iop_inflight fl;
	for (uint32_t i = 0; err == IOP_OK && i < f.n_names; i++)
		err = iop_frame_name(&f, &nm);
	for (uint32_t i = 0; err == IOP_OK && i < f.n_counters; i++)
		err = iop_frame_counter(&f, &ct);
	for (uint32_t i = 0; err == IOP_OK && i < f.n_inflight; i++)
		err = iop_frame_inflight(&f, &fl);
	struct iop_runs_out out = {.run = run, .cap = RUNS, .bk = bk, .bk_cap = BK};
	uint32_t slots = 0;
	if (err == IOP_OK)
		err = iop_frame_events_whole(&f, ev, f.n_events, &out, &slots);
	if (err == IOP_OK)
		err = iop_frame_close(&f);
	check(err == verdict);
	if (err != IOP_OK)
		return;
	uint32_t at = 0, k = 0;
	for (uint32_t s = 0; s < slots; s++) {
		if (!(ev[s].flags & IOP_EV_WHOLE)) {
			check(at < f.n_events && same_event(&ev[s], &d->events[at]) &&
			      ev[s].run_calls == d->events[at].run_calls);
			at++;
			continue;
		}
		check(k < out.n && run[k].count == ev[s].run_calls &&
		      ev[s].run_calls > IOP_RUN_EXACT_MAX && ev[s].run_calls <= f.n_events - at);
		iop_run_whole_calls(&ev[s], &run[k++], calls);
		for (uint32_t j = 0; j < ev[s].run_calls; j++)
			check(same_event(&calls[j], &d->events[at + j]) &&
			      calls[j].run_calls == d->events[at + j].run_calls);
		at += ev[s].run_calls;
	}
	check(at == f.n_events && k == out.n);
}

static void try_decode(const uint8_t *buf, size_t len)
{
	struct decoded *d = decoded_get(0);
	enum iop_err verdict = iop_frame_decode(buf, len, &fuzz_key, &d->out);
	whole_agrees(buf, len, verdict, d);
	if (verdict == IOP_OK)
		round_trip(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	try_decode(data, size);

	if (size < IOP_FRAME_HEADER_LEN || size > IOP_FRAME_HEADER_LEN + IOP_FRAME_MAX_PAYLOAD)
		return 0;
	uint8_t *buf = malloc(size + IOP_MAC_BYTES);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	iop_store_u32le(buf + 28, (uint32_t)(size - IOP_FRAME_HEADER_LEN)); /* payload length */
	iop_mac(&fuzz_key, buf, size, buf + size);
	try_decode(buf, size + IOP_MAC_BYTES);
	free(buf);
	return 0;
}
