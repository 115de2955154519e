/* See workload.h. Durations are log-normal around a typical value for each
 * kind of call (a 1 MiB write to a parallel file system ~0.5 ms, a 4 KiB
 * random read ~100 us, a metadata call ~10-30 us), gaps between calls short. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "workload.h"

#define KIB UINT64_C(1024)
#define MIB (KIB * KIB)

static uint64_t rnd(struct iop_wl *w) /* splitmix64 */
{
	uint64_t z = (w->rng += 0x9e3779b97f4a7c15u);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

static double unif(struct iop_wl *w)
{
	return (double)(rnd(w) >> 11) * 0x1p-53;
}

/* Log-normal around median m with shape s. */
static uint64_t lognorm(struct iop_wl *w, double m, double s)
{
	double u1 = unif(w) + 1e-12, u2 = unif(w);
	double z = sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
	double v = m * exp(s * z);
	return v < 1 ? 1 : (uint64_t)v;
}

const char *iop_wl_kind_name(enum iop_wl_kind kind)
{
	static const char *const n[] = {"ior_write", "random_read", "metadata", "mixed"};
	return (unsigned)kind < 4 ? n[kind] : "?";
}

bool iop_wl_init(struct iop_wl *w, enum iop_wl_kind kind, uint32_t rank, uint64_t seed,
                 uint64_t start_ns)
{
	memset(w, 0, sizeof *w);
	w->names = calloc(IOP_WL_MAX_NAMES, sizeof *w->names);
	w->counters = calloc((size_t)IOP_WL_MAX_NAMES * IOP_LAYER__COUNT * IOP_CLASS__COUNT,
	                     sizeof *w->counters);
	if (!w->names || !w->counters) {
		iop_wl_free(w);
		return false;
	}
	w->kind = kind;
	w->rank = rank;
	w->rng = seed * 0x2545f4914f6cdd1du + rank;
	w->now_ns = start_ns;
	w->next_call_id = 1;
	w->n_names = 1; /* id 0 means "none" */
	w->job_id = 0x10b5eed5u;
	return true;
}

void iop_wl_free(struct iop_wl *w)
{
	free(w->names);
	free(w->counters);
	w->names = NULL;
	w->counters = NULL;
}

/* Id of a name, registering it on first use (linear search: few names are
 * looked up by text; per-file metadata bursts register new ones). */
static uint32_t name_id(struct iop_wl *w, uint8_t kind, const char *text)
{
	for (uint32_t i = w->n_names; i-- > 1;)
		if (w->names[i].name.kind == kind && strcmp(w->names[i].text, text) == 0)
			return i;
	if (w->n_names == IOP_WL_MAX_NAMES)
		return 1; /* table full: reuse the first (tests never get here) */
	uint32_t id = w->n_names++;
	struct iop_wl_name *n = &w->names[id];
	snprintf(n->text, sizeof n->text, "%s", text);
	n->name.kind = kind;
	n->name.id = id;
	n->name.text = n->text;
	n->name.len = (uint32_t)strlen(n->text);
	n->name.hash = iop_hash64(n->text, n->name.len);
	n->announced = false;
	return id;
}

static void count(struct iop_wl *w, const struct iop_event *ev)
{
	enum iop_class cls = iop_op_class(ev->op);
	struct iop_wl_counter *k =
	    &w->counters[(ev->file * IOP_LAYER__COUNT + ev->layer) * IOP_CLASS__COUNT + cls];
	k->k.file = ev->file;
	k->k.layer = ev->layer;
	k->k.cls = (uint8_t)cls;
	k->k.ops++;
	k->k.bytes += ev->bytes;
	k->k.time_ns += ev->dur_ns;
	k->k.errors += (ev->flags & IOP_EV_ERROR) != 0;
	k->dirty = true;
}

/* Appends one call that starts after a gap and lasts dur. */
static struct iop_event *emit(struct iop_wl *w, enum iop_layer layer, enum iop_op op, uint32_t file,
                              uint32_t site, uint64_t gap, uint64_t dur)
{
	struct iop_event *ev = &w->pending[w->n_pending++];
	memset(ev, 0, sizeof *ev);
	w->now_ns += gap + dur;
	ev->end_ns = w->now_ns;
	ev->dur_ns = dur;
	ev->layer = (uint8_t)layer;
	ev->op = (uint8_t)op;
	ev->file = file;
	ev->site = site;
	w->events_made++;
	return ev;
}

static void set_io(struct iop_event *ev, uint64_t offset, uint64_t bytes)
{
	ev->offset = offset;
	ev->bytes = bytes;
	ev->flags |= IOP_EV_OFFSET | IOP_EV_BYTES;
}

static unsigned step_ior(struct iop_wl *w)
{
	uint32_t file = name_id(w, IOP_NAME_FILE, "/scratch/ior/testFile");
	uint64_t base = (uint64_t)w->rank * 4096 * MIB;
	unsigned first = w->n_pending;
	if (rnd(w) % 10 < 3) { /* MPI_File_write_at_all -> 2 x pwrite of 512 KiB */
		uint32_t site = name_id(w, IOP_NAME_SITE, "ior_mpiio_xfer+0x8c");
		uint64_t start = w->now_ns + lognorm(w, 20000, 0.3);
		w->now_ns = start;
		uint64_t call = w->next_call_id++, child_ns = 0;
		for (int i = 0; i < 2; i++) {
			struct iop_event *c = emit(w, IOP_LAYER_POSIX, IOP_OP_WRITE, file, site,
			                           lognorm(w, 2000, 0.3), lognorm(w, 250000, 0.25));
			set_io(c, base + w->ior_offset, 512 * KIB);
			c->flags |= IOP_EV_PARENT;
			c->parent_id = call;
			w->ior_offset += 512 * KIB;
			child_ns += c->dur_ns;
		}
		w->now_ns += lognorm(w, 3000, 0.3);
		struct iop_event *p = &w->pending[w->n_pending++];
		memset(p, 0, sizeof *p);
		p->end_ns = w->now_ns;
		p->dur_ns = w->now_ns - start;
		p->layer = IOP_LAYER_MPIIO;
		p->op = IOP_OP_WRITE_COLL;
		p->file = file;
		p->site = site;
		set_io(p, base + w->ior_offset - MIB, MIB);
		p->flags |= IOP_EV_CHILDREN;
		p->call_id = call;
		p->child_ops = 2;
		p->child_bytes = MIB;
		p->child_ns = child_ns;
		w->events_made++;
	} else {
		uint32_t site = name_id(w, IOP_NAME_SITE, "ior_posix_xfer+0x44");
		struct iop_event *ev = emit(w, IOP_LAYER_POSIX, IOP_OP_WRITE, file, site,
		                            lognorm(w, 15000, 0.3), lognorm(w, 500000, 0.25));
		set_io(ev, base + w->ior_offset, MIB);
		w->ior_offset += MIB;
	}
	if (w->ior_offset >= 4096 * MIB)
		w->ior_offset = 0;
	return w->n_pending - first;
}

static unsigned step_random(struct iop_wl *w)
{
	static const char *const files[] = {"/data/db/shard0.bin", "/data/db/shard1.bin",
	                                    "/data/db/shard2.bin", "/data/db/shard3.bin"};
	uint32_t file = name_id(w, IOP_NAME_FILE, files[rnd(w) % 4]);
	uint32_t site =
	    name_id(w, IOP_NAME_SITE, rnd(w) % 4 ? "lookup_block+0x31" : "scan_index+0x9a");
	uint64_t size = 4 * KIB << (rnd(w) % 3);
	uint64_t offset = (rnd(w) % (16u * MIB)) * 4 * KIB; /* 64 GiB files */
	struct iop_event *ev = emit(w, IOP_LAYER_POSIX, IOP_OP_READ, file, site,
	                            lognorm(w, 3000, 0.5), lognorm(w, 90000, 0.6));
	set_io(ev, offset, size);
	return 1;
}

static unsigned step_meta(struct iop_wl *w)
{
	/* 4 checkpoint steps of 64 files each, then the same paths again. */
	unsigned slot = w->meta_file % IOP_WL_META_FILES;
	if (!w->meta_ids[slot]) {
		char path[96];
		snprintf(path, sizeof path, "/scratch/ckpt/step%04u/rank%05u.part%03u", slot / 64,
		         w->rank, slot % 64);
		w->meta_ids[slot] = name_id(w, IOP_NAME_FILE, path);
	}
	uint32_t file = w->meta_ids[slot];
	uint32_t site = name_id(w, IOP_NAME_SITE, "write_checkpoint+0x120");
	uint64_t gap = lognorm(w, 2000, 0.5);
	struct iop_event *ev;
	switch (w->meta_step++) {
	case 0:
		emit(w, IOP_LAYER_POSIX, rnd(w) % 2 ? IOP_OP_CREATE : IOP_OP_OPEN, file, site, gap,
		     lognorm(w, 30000, 0.5));
		break;
	case 1:
		ev = emit(w, IOP_LAYER_POSIX, IOP_OP_STAT, file, site, gap, lognorm(w, 8000, 0.5));
		if (rnd(w) % 16 == 0) {
			ev->flags |= IOP_EV_ERROR;
			ev->err = ENOENT;
		}
		break;
	case 2:
		ev =
		    emit(w, IOP_LAYER_POSIX, IOP_OP_WRITE, file, site, gap, lognorm(w, 20000, 0.4));
		set_io(ev, 0, 4 * KIB);
		break;
	default:
		emit(w, IOP_LAYER_POSIX, IOP_OP_CLOSE, file, site, gap, lognorm(w, 12000, 0.5));
		w->meta_step = 0;
		w->meta_file++;
		break;
	}
	return 1;
}

static unsigned step_stdio(struct iop_wl *w)
{
	uint32_t file = name_id(w, IOP_NAME_FILE, "/home/user/run/app.log");
	uint32_t site = name_id(w, IOP_NAME_SITE, "log_progress+0x2f");
	struct iop_event *ev = emit(w, IOP_LAYER_STDIO, IOP_OP_WRITE, file, site,
	                            lognorm(w, 40000, 0.5), lognorm(w, 900, 0.3));
	ev->bytes = 60 + rnd(w) % 60;
	ev->flags |= IOP_EV_BYTES;
	ev->thread = 1; /* a logging thread */
	return 1;
}

unsigned iop_wl_step(struct iop_wl *w)
{
	if (w->n_pending + 4 > IOP_WL_PENDING)
		return 0;
	unsigned kind = w->kind;
	if (kind == IOP_WL_MIXED) {
		if (w->phase_left == 0) { /* phases of a few hundred calls */
			unsigned r = (unsigned)(rnd(w) % 100);
			w->phase = r < 35 ? 0 : r < 70 ? 1 : r < 90 ? 2 : 3;
			w->phase_left = 200 + (unsigned)(rnd(w) % 400);
		}
		w->phase_left--;
		kind = w->phase;
	}
	unsigned first = w->n_pending, n;
	switch (kind) {
	case IOP_WL_IOR_WRITE:
		n = step_ior(w);
		break;
	case IOP_WL_RANDOM_READ:
		n = step_random(w);
		break;
	case IOP_WL_METADATA:
		n = step_meta(w);
		break;
	default:
		n = step_stdio(w);
		break;
	}
	for (unsigned i = first; i < w->n_pending; i++)
		count(w, &w->pending[i]);
	return n;
}

enum iop_err iop_wl_frame(struct iop_wl *w, uint8_t *buf, size_t cap, unsigned max_events,
                          const struct iop_key *key, size_t *len, unsigned *n_events)
{
	if (max_events > IOP_WL_PENDING - 8)
		max_events = IOP_WL_PENDING - 8;
	/* Keep unsent events at the front, then top up. */
	memmove(w->pending, w->pending + w->pending_pos,
	        (w->n_pending - w->pending_pos) * sizeof *w->pending);
	w->n_pending -= w->pending_pos;
	w->pending_pos = 0;
	while (!w->draining && w->n_pending < max_events)
		iop_wl_step(w);
	if (w->final_sent)
		return IOP_ERR_STATE; /* drained: nothing left to send */

	struct iop_frame_hdr hdr = {
	    .job_id = w->job_id,
	    .seq = w->frames_made,
	    .base_ns = w->pending[0].end_ns,
	    .node_id = 7,
	    .rank = w->rank,
	    .pid = 4242 + w->rank,
	};
	struct iop_stats st = {.events = w->events_made, .shim_ns = w->events_made * 30};
	static _Thread_local struct iop_frame_enc e; /* a run's histogram: ~5 KiB */
	enum iop_err err = iop_enc_begin(&e, buf, cap, &hdr, &st);
	if (err == IOP_OK && w->coalesce_ns)
		iop_enc_coalesce(&e, w->coalesce_ns);
	for (uint32_t i = 1; i < w->n_names && err == IOP_OK; i++) {
		if (w->names[i].announced)
			continue;
		err = iop_enc_name(&e, &w->names[i].name);
		w->names[i].announced = err == IOP_OK;
	}
	size_t n_counters = (size_t)w->n_names * IOP_LAYER__COUNT * IOP_CLASS__COUNT;
	for (size_t i = 0; i < n_counters && err == IOP_OK; i++) {
		if (!w->counters[i].dirty)
			continue;
		err = iop_enc_counter(&e, &w->counters[i].k);
		w->counters[i].dirty = err != IOP_OK;
	}
	if (err == IOP_ERR_FULL)
		err = IOP_OK; /* what did not fit goes in the next frame */
	unsigned n = 0;
	while (err == IOP_OK && n < max_events && n < w->n_pending) {
		err = iop_enc_event(&e, &w->pending[n]);
		if (err == IOP_OK)
			n++;
	}
	if (err == IOP_ERR_FULL)
		err = IOP_OK;
	bool final = w->draining && n == w->n_pending;
	if (err == IOP_OK && final)
		err = iop_enc_set_flags(&e, IOP_FRAME_FINAL);
	if (err == IOP_OK)
		err = iop_enc_finish(&e, key, len);
	if (err != IOP_OK)
		return err;
	w->pending_pos = n;
	w->frames_made++;
	w->final_sent = final;
	*n_events = n;
	return IOP_OK;
}

unsigned iop_wl_generate(struct iop_wl *w, struct iop_event *out, unsigned n)
{
	unsigned done = 0;
	while (done < n) {
		if (w->pending_pos == w->n_pending) {
			w->pending_pos = w->n_pending = 0;
			iop_wl_step(w);
		}
		unsigned k = w->n_pending - w->pending_pos;
		if (k > n - done)
			k = n - done;
		memcpy(out + done, w->pending + w->pending_pos, k * sizeof *out);
		w->pending_pos += k;
		done += k;
	}
	return done;
}
