/* `iopulse export FILE --format chrome`: the raw events a recording keeps
 * (`iopulse run --record-events`: EVENTS frames, each a wire frame a leaf
 * accepted, MAC'd with the zero key) as a Chrome trace-event JSON object
 * that Perfetto (ui.perfetto.dev) and chrome://tracing open: one process
 * track per rank ("rank N"), one thread per thread of the rank's
 * processes, each call a complete ("X") slice named by its op, in the
 * category of its layer, with its file, bytes, offset and errno as args.
 * A call's sub-calls (the POSIX writes of an MPI-IO write) lie inside it
 * on the same thread, so the viewers draw them nested. Times are
 * microseconds since the recording started. Names (paths, sites) come from
 * the frames' own name records, per process. A run of like calls the shim
 * sent as one record (docs/wire-format.md, "Run records") is one slice,
 * from its first call's start to its last call's end, that says so: its
 * args hold the calls, their bytes and their total time (busy_us). */
#include "export.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "events.h"
#include "frame.h"
#include "names.h"
#include "rec_open.h"
#include "replay_cmd.h"

/* A process's name id as one 64-bit key (splitmix64 of node, pid, id). */
static uint64_t name_key(const struct iop_frame_hdr *h, uint32_t id)
{
	uint64_t z = ((uint64_t)h->node_id << 32 | h->pid) ^ ((uint64_t)id * 0x9e3779b97f4a7c15u);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

struct chrome {
	FILE *f;
	uint64_t t0_ns;
	struct coll_names names;
	uint8_t *ranks_seen; /* a bit per rank: its process_name record written */
	uint32_t n_ranks_seen;
	uint64_t events, frames, bad_frames;
	bool first;
	struct {
		struct iop_event first; /* the run's first call, bytes summed */
		uint64_t end_ns, busy_ns;
	} run; /* the run being read, call by call */
};

static void put(struct chrome *c, json_t *o)
{
	if (!o)
		return;
	fputs(c->first ? "\n" : ",\n", c->f);
	c->first = false;
	json_dumpf(o, c->f, JSON_COMPACT | JSON_REAL_PRECISION(15));
	json_decref(o);
}

static void rank_track(struct chrome *c, uint32_t rank)
{
	if (rank >= c->n_ranks_seen) {
		uint32_t n = rank + 1024;
		uint8_t *v = realloc(c->ranks_seen, n);
		if (!v)
			return;
		memset(v + c->n_ranks_seen, 0, n - c->n_ranks_seen);
		c->ranks_seen = v;
		c->n_ranks_seen = n;
	}
	if (c->ranks_seen[rank])
		return;
	c->ranks_seen[rank] = 1;
	char name[32];
	snprintf(name, sizeof name, "rank %u", rank);
	put(c, json_pack("{s:s,s:s,s:I,s:{s:s}}", "name", "process_name", "ph", "M", "pid",
	                 (json_int_t)rank, "args", "name", name));
	put(c, json_pack("{s:s,s:s,s:I,s:{s:I}}", "name", "process_sort_index", "ph", "M", "pid",
	                 (json_int_t)rank, "args", "sort_index", (json_int_t)rank));
}

/* A call's slice; a run's (calls > 1) from its first call's start to end_ns. */
static void put_slice(struct chrome *c, const struct iop_frame_hdr *h, const struct iop_event *ev,
                      uint64_t end_ns, uint32_t calls, uint64_t busy_ns)
{
	/* a run's first call's duration may be its histogram's min: the
	 * slice holds the run's total time at least */
	uint64_t start = ev->end_ns - ev->dur_ns;
	if (calls > 1 && end_ns - start < busy_ns)
		start = end_ns - busy_ns;
	json_t *args = json_object();
	if (calls > 1) {
		json_object_set_new(args, "calls", json_integer(calls));
		json_object_set_new(args, "busy_us", json_real(busy_ns / 1e3));
		json_object_set_new(args, "run", json_string("like calls sent as one record: one "
		                                             "slice, the calls' own times not kept; "
		                                             "bytes are theirs, busy_us their total time"));
	}
	if (ev->file) {
		const char *path = coll_names_text(&c->names, name_key(h, ev->file));
		if (path)
			json_object_set_new(args, "file", json_string(path));
	}
	if (ev->site) {
		const char *site = coll_names_text(&c->names, name_key(h, ev->site));
		if (site)
			json_object_set_new(args, "site", json_string(site));
	}
	if (ev->flags & IOP_EV_BYTES)
		json_object_set_new(args, "bytes", json_integer((json_int_t)ev->bytes));
	if (ev->flags & IOP_EV_OFFSET)
		json_object_set_new(args, "offset", json_integer((json_int_t)ev->offset));
	if (ev->flags & IOP_EV_ERROR)
		json_object_set_new(args, "errno", json_integer(ev->err));
	json_object_set_new(args, "pid", json_integer(h->pid));
	rank_track(c, h->rank);
	put(c, json_pack("{s:s,s:s,s:s,s:f,s:f,s:I,s:I,s:o}", "name",
	                 iop_op_name((enum iop_op)ev->op), "cat",
	                 iop_layer_name((enum iop_layer)ev->layer), "ph", "X", "ts",
	                 start >= c->t0_ns ? (start - c->t0_ns) / 1e3 : 0.0, "dur",
	                 (end_ns - start) / 1e3,
	                 "pid", (json_int_t)h->rank, "tid",
	                 (json_int_t)((uint64_t)h->pid << 8 | (ev->thread & 0xff)), "args", args));
	c->events += calls;
}

static void put_event(struct chrome *c, const struct iop_frame *f, const struct iop_event *ev)
{
	if (!(ev->flags & IOP_EV_RUN)) {
		put_slice(c, &f->hdr, ev, ev->end_ns, 1, ev->dur_ns);
		return;
	}
	uint32_t i, n;
	iop_frame_run_pos(f, &i, &n);
	if (i == 0) {
		c->run.first = *ev;
		c->run.busy_ns = 0;
	} else {
		c->run.first.bytes += ev->bytes;
	}
	c->run.busy_ns += ev->dur_ns;
	if (i + 1 == n)
		put_slice(c, &f->hdr, &c->run.first, ev->end_ns, n, c->run.busy_ns);
}

/* One EVENTS frame: its names, then its events (counters and in-flight
 * reports are read past). */
static void take_frame(struct chrome *c, const uint8_t *buf, size_t len)
{
	static const struct iop_key zero;
	struct iop_frame f;
	enum iop_err e = iop_frame_open(&f, buf, len, &zero);
	for (uint32_t i = 0; !e && i < f.n_names; i++) {
		struct iop_name n;
		bool added;
		if (!(e = iop_frame_name(&f, &n)))
			(void)coll_names_add(&c->names, name_key(&f.hdr, n.id), n.kind, n.text, n.len,
			                     &added);
	}
	for (uint32_t i = 0; !e && i < f.n_counters; i++) {
		struct iop_counter k;
		e = iop_frame_counter(&f, &k);
	}
	for (uint32_t i = 0; !e && i < f.n_inflight; i++) {
		struct iop_inflight fl;
		e = iop_frame_inflight(&f, &fl);
	}
	for (uint32_t i = 0; !e && i < f.n_events; i++) {
		struct iop_event ev;
		if (!(e = iop_frame_event(&f, &ev)))
			put_event(c, &f, &ev);
	}
	c->frames++;
	if (e)
		c->bad_frames++;
}

int rec_export_chrome(struct rec_opened *o, const char *path, FILE *f)
{
	struct chrome c = {.f = f, .t0_ns = o->start_ns, .first = true};
	coll_names_init(&c.names, 1u << 22, (size_t)1 << 30);
	fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"source\":\"iopulse\"},\"traceEvents\":[", f);
	struct rec_frame fr;
	enum iop_err e;
	while ((e = rec_next(o->r, &fr, NULL, 0)) == IOP_OK)
		if (fr.type == REC_EVENTS)
			take_frame(&c, fr.payload, fr.len);
	fputs("\n]}\n", f);
	int rc = 0;
	if (e != IOP_ERR_NOT_FOUND) {
		fprintf(stderr, "iopulse export: %s: reading stopped: %s\n", path, iop_strerror(e));
		rc = 2;
	} else if (!c.frames) {
		fprintf(stderr, "iopulse export: %s holds no events (EVENTS frames): record with "
		                "'iopulse run --record FILE --record-events' for a Chrome trace\n", path);
		rc = 2;
	}
	if (c.bad_frames)
		fprintf(stderr, "iopulse export: %s: %" PRIu64 " event batches did not decode "
		                "(skipped from where they went wrong)\n", path, c.bad_frames);
	coll_names_free(&c.names);
	free(c.ranks_seen);
	return rc;
}
