/* iop-sink: a real receiver for the shim's integration tests. It binds a
 * nanomsg PULL socket, decodes every message as a frame with the job key,
 * and when it stops (enough FINAL frames, an idle gap, an overall timeout or
 * a signal) writes one JSON document that says what arrived: per process,
 * per file, per rank and per layer, counters beside event totals, so a test
 * script can check the shim's claims ("counters equal the sum of the events
 * once drained", "every POSIX child links to its MPI-IO parent") with jq or
 * jansson instead of trusting the collector under test.
 *
 *   iop-sink --url URL --key HEX32 [--final-url URL] [--out FILE]
 *            [--expect-final N] [--idle-ms MS] [--timeout-s S]
 *            [--ready FILE] [--got FILE] [--light]
 *
 * With --final-url it also binds a REP socket there and answers each last
 * frame that comes over it, as a leaf's final.ipc does (IOPULSE_FINAL_ADDR):
 * what the PULL socket holds is taken first, so the frames a process sent
 * before its last come before it.
 *
 * Nothing is capped: every table grows with the data, so memory is bounded
 * by what was received (a frame's decode arrays by the largest frame). The
 * JSON writer is in sink_json.c; what both share is in sink.h. Exit status:
 * 0 when the document was written, 1 on a runtime failure, 2 on bad usage. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <nanomsg/nn.h>
#include <nanomsg/pipeline.h>
#include <nanomsg/reqrep.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "hash.h"
#include "sink.h"

#define SLICE_MS 50 /* receive timeout: how often stop conditions are looked at */
/* nanomsg would drop longer messages than its limit without a trace (it
 * closes the sender's connection); unlimited, they arrive and are counted
 * as rejected (OVERSIZED, INCONSISTENT, ...). */
#define RCV_MAX_BYTES (-1)
#define LOG_REJECTS   10 /* rejections logged one by one, then only counted */

/* Smallest record sizes (docs/wire-format.md, "counts need more bytes than
 * P at their smallest"): a frame of P payload bytes holds at most P / size
 * records of a kind, which bounds the decode arrays by the message; calls,
 * by the header's count (at most IOP_FRAME_MAX_EVENTS). */
enum { MIN_NAME_BYTES = 12, MIN_COUNTER_BYTES = 6, MIN_INFLIGHT_BYTES = 5 };

static volatile sig_atomic_t stop_signal;

/* ------------------------------------------------- growable keyed tables */

static void *grow(void *p, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return p;
	size_t n = *cap ? *cap : 8;
	while (n < need)
		n *= 2;
	void *q = reallocarray(p, n, size);
	if (q)
		*cap = n;
	return q;
}

static size_t map_slot(const struct sink_map *m, uint64_t key)
{
	uint64_t h = key * 0x9e3779b97f4a7c15u;
	size_t i = (size_t)(h ^ (h >> 29)) & (m->cap - 1);
	while (m->val[i] && m->key[i] != key)
		i = (i + 1) & (m->cap - 1);
	return i;
}

uint32_t sink_map_get(const struct sink_map *m, uint64_t key)
{
	return m->cap ? m->val[map_slot(m, key)] : 0;
}

static enum iop_err map_rehash(struct sink_map *m)
{
	struct sink_map b = {.cap = m->cap ? 2 * m->cap : 16};
	b.key = calloc(b.cap, sizeof *b.key);
	b.val = calloc(b.cap, sizeof *b.val);
	if (!b.key || !b.val) {
		free(b.key);
		free(b.val);
		return IOP_ERR_NOMEM;
	}
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->val[i])
			continue;
		size_t j = map_slot(&b, m->key[i]);
		b.key[j] = m->key[i];
		b.val[j] = m->val[i];
	}
	b.n = m->n;
	free(m->key);
	free(m->val);
	*m = b;
	return IOP_OK;
}

enum iop_err sink_map_put(struct sink_map *m, uint64_t key, uint32_t val)
{
	if ((m->n + 1) * 4 > m->cap * 3) {
		enum iop_err err = map_rehash(m);
		if (err != IOP_OK)
			return err;
	}
	size_t i = map_slot(m, key);
	m->n += !m->val[i];
	m->key[i] = key;
	m->val[i] = val;
	return IOP_OK;
}

void sink_map_free(struct sink_map *m)
{
	free(m->key);
	free(m->val);
	memset(m, 0, sizeof *m);
}

void *sink_table_get(const struct sink_table *t, uint64_t key)
{
	uint32_t v = sink_map_get(&t->map, key);
	return v ? sink_table_at(t, v - 1) : NULL;
}

void *sink_table_find(struct sink_table *t, uint64_t key)
{
	void *rec = sink_table_get(t, key);
	if (rec || t->n >= UINT32_MAX - 1)
		return rec;
	void *q = grow(t->rec, &t->cap, t->n + 1, t->size);
	if (!q)
		return NULL;
	t->rec = q;
	if (sink_map_put(&t->map, key, (uint32_t)t->n + 1) != IOP_OK)
		return NULL;
	rec = sink_table_at(t, t->n++);
	memset(rec, 0, t->size);
	return rec;
}

void sink_table_free(struct sink_table *t)
{
	sink_map_free(&t->map);
	free(t->rec);
	t->rec = NULL;
	t->n = t->cap = 0;
}

/* ------------------------------------------------------- names and files */

/* Files are keyed by a hash of (kind, text); on the rare collision of two
 * different names the next key is tried, the same way on lookup. */
enum iop_err sink_file_intern(struct sink *s, uint8_t kind, const char *text, uint32_t len,
                              uint64_t hash, uint32_t *idx)
{
	uint64_t key = iop_hash64(text, len) ^ ((uint64_t)kind << 56);
	for (;; key++) {
		uint32_t v = sink_map_get(&s->files.map, key);
		if (!v)
			break;
		struct sink_file *f = sink_table_at(&s->files, v - 1);
		if (f->kind == kind && f->len == len && memcmp(f->path, text, len) == 0) {
			*idx = v - 1;
			return IOP_OK;
		}
	}
	char *copy = strndup(text, len);
	struct sink_file *f = copy ? sink_table_find(&s->files, key) : NULL;
	if (!f) {
		free(copy);
		return IOP_ERR_NOMEM;
	}
	f->path = copy;
	f->len = len;
	f->kind = kind;
	f->hash = hash;
	f->last_proc = SIZE_MAX;
	*idx = (uint32_t)(s->files.n - 1);
	return IOP_OK;
}

static enum iop_err take_names(struct sink *s, struct sink_proc *p, const struct iop_frame_out *o)
{
	for (uint32_t i = 0; i < o->frame.n_names; i++) {
		const struct iop_name *n = &o->names[i];
		struct sink_name *ref;
		uint32_t idx;
		if (sink_file_intern(s, n->kind, n->text, n->len, n->hash, &idx) != IOP_OK ||
		    !(ref = sink_table_find(&p->names, n->id)))
			return IOP_ERR_NOMEM;
		ref->file = idx; /* a later binding of the same id replaces */
	}
	return IOP_OK;
}

/* ------------------------------------------------ counters, events, calls */

static uint64_t cell_key(uint32_t file, unsigned layer, unsigned cls)
{
	return (uint64_t)file << 4 | layer << 2 | cls;
}

static enum iop_err take_counters(struct sink_proc *p, const struct iop_frame_out *o)
{
	uint64_t seq = o->frame.hdr.seq;
	for (uint32_t i = 0; i < o->frame.n_counters; i++) {
		const struct iop_counter *k = &o->counters[i];
		struct sink_cell *c =
		    sink_table_find(&p->cells, cell_key(k->file, k->layer, k->cls));
		if (!c)
			return IOP_ERR_NOMEM;
		if (c->has_counter && c->counter_seq > seq)
			continue; /* cumulative: an older frame's value is stale */
		c->key = cell_key(k->file, k->layer, k->cls);
		c->v.c_ops = k->ops;
		c->v.c_bytes = k->bytes;
		c->v.c_time = k->time_ns;
		c->v.c_err = k->errors;
		c->counter_seq = seq;
		c->has_counter = true;
	}
	return IOP_OK;
}

/* Children name their parent's call_id, parents carry what their children
 * should add up to; both are matched after the last frame. */
static enum iop_err take_nesting(struct sink_proc *p, const struct iop_event *ev, uint64_t bytes)
{
	struct sink_call *call;
	if (ev->flags & IOP_EV_PARENT) {
		if (!(call = sink_table_find(&p->calls, ev->parent_id)))
			return IOP_ERR_NOMEM;
		p->children++;
		call->got_ops++;
		call->got_bytes += bytes;
	}
	if (ev->flags & IOP_EV_CHILDREN) {
		if (!(call = sink_table_find(&p->calls, ev->call_id)))
			return IOP_ERR_NOMEM;
		p->parents++;
		call->dup_parent |= call->is_parent;
		call->is_parent = true;
		call->want_ops += ev->child_ops;
		call->want_bytes += ev->child_bytes;
	}
	return IOP_OK;
}

static enum iop_err take_events(struct sink *s, struct sink_proc *p, const struct iop_frame_out *o,
                                uint64_t *last_end)
{
	for (uint32_t i = 0; i < o->frame.n_events; i++) {
		const struct iop_event *ev = &o->events[i];
		enum iop_class cls = iop_op_class(ev->op);
		uint64_t key = cell_key(ev->file, ev->layer, cls);
		uint64_t bytes = ev->flags & IOP_EV_BYTES ? ev->bytes : 0;
		struct sink_cell *c = sink_table_find(&p->cells, key);
		if (!c)
			return IOP_ERR_NOMEM;
		c->key = key;
		c->v.e_ops++;
		c->v.e_bytes += bytes;
		c->v.e_err += (ev->flags & IOP_EV_ERROR) != 0;
		if (iop_hist_record(&s->lat[ev->layer], ev->dur_ns) == IOP_ERR_NOMEM)
			return IOP_ERR_NOMEM; /* INVAL: a bucket is full; the count says it */
		uint64_t skey = cell_key(ev->site, ev->layer, cls);
		struct sink_site *site = sink_table_find(&p->sites, skey);
		if (!site)
			return IOP_ERR_NOMEM;
		site->key = skey;
		site->ops++;
		site->bytes += bytes;
		site->errors += (ev->flags & IOP_EV_ERROR) != 0;
		if (take_nesting(p, ev, bytes) != IOP_OK)
			return IOP_ERR_NOMEM;
		if (ev->end_ns > *last_end)
			*last_end = ev->end_ns;
		s->run_calls += (ev->flags & IOP_EV_RUN) != 0;
	}
	s->events += o->frame.n_events;
	return IOP_OK;
}

/* An in-flight call's age is measured against the newest time the frame
 * knows: its last event's end, or its base time. */
static void take_inflight(struct sink *s, const struct iop_frame_out *o, uint64_t last_end)
{
	uint64_t ref = last_end > o->frame.hdr.base_ns ? last_end : o->frame.hdr.base_ns;
	for (uint32_t i = 0; i < o->frame.n_inflight; i++) {
		uint64_t start = o->inflight[i].start_ns;
		uint64_t age = ref > start ? ref - start : 0;
		if (age > s->inflight_max_age)
			s->inflight_max_age = age;
	}
	s->inflight_reports += o->frame.n_inflight;
}

/* Header bookkeeping; false for a replayed seq, which is not used. */
static bool take_header(struct sink *s, struct sink_proc *p, const struct iop_frame_out *o,
                        enum iop_err *err)
{
	const struct iop_frame_hdr *h = &o->frame.hdr;
	*err = IOP_OK;
	if (sink_map_get(&p->seqs, h->seq)) {
		p->dup_frames++;
		s->dup_frames++;
		return false;
	}
	if ((*err = sink_map_put(&p->seqs, h->seq, 1)) != IOP_OK)
		return false;
	if (p->frames == 0 || h->seq < p->first_seq)
		p->first_seq = h->seq;
	if (p->frames == 0 || h->seq >= p->last_seq) {
		p->last_seq = h->seq;
		p->rank = h->rank;
		p->stats = o->frame.stats;
	}
	p->frames++;
	s->frames++;
	if (h->flags & IOP_FRAME_FINAL) {
		p->final = true;
		p->final_seq = h->seq;
		p->final_base = h->base_ns;
		s->final_frames++;
	}
	return true;
}

/* The process image a frame belongs to (see sink.h); NULL when out of
 * memory. */
static struct sink_proc *image_of(struct sink *s, const struct iop_frame_hdr *h)
{
	uint64_t who = (uint64_t)h->node_id << 32 | h->pid;
	uint32_t at = sink_map_get(&s->images, who);
	struct sink_proc *p = at ? sink_table_at(&s->procs, at - 1) : NULL;
	if (p && !(p->final && h->seq <= p->final_seq && h->base_ns > p->final_base))
		return p;
	uint32_t image = p ? p->image + 1 : 0;
	if (s->procs.n >= UINT32_MAX - 1 || !(p = sink_table_find(&s->procs, s->procs.n)) ||
	    sink_map_put(&s->images, who, (uint32_t)s->procs.n) != IOP_OK)
		return NULL;
	p->node_id = h->node_id;
	p->pid = h->pid;
	p->image = image;
	p->cells.size = sizeof(struct sink_cell);
	p->calls.size = sizeof(struct sink_call);
	p->names.size = sizeof(struct sink_name);
	p->sites.size = sizeof(struct sink_site);
	return p;
}

static enum iop_err take_frame(struct sink *s, const struct iop_frame_out *o)
{
	struct sink_proc *p = image_of(s, &o->frame.hdr);
	enum iop_err err;
	if (!p)
		return IOP_ERR_NOMEM;
	if (!take_header(s, p, o, &err))
		return err;
	uint64_t last_end = 0;
	if ((err = take_names(s, p, o)) != IOP_OK || (err = take_counters(p, o)) != IOP_OK)
		return err;
	if (s->opt.light) {
		s->events += o->frame.n_events;
		return IOP_OK;
	}
	if ((err = take_events(s, p, o, &last_end)) != IOP_OK)
		return err;
	take_inflight(s, o, last_end);
	return IOP_OK;
}

/* ------------------------------------------------------------- receiving */

/* Makes the decode arrays as large as a message of len bytes could need. */
static enum iop_err fit_decoder(struct sink *s, const uint8_t *msg, size_t len)
{
	struct iop_frame_out *o = &s->out;
	size_t plen = len > IOP_FRAME_OVERHEAD ? len - IOP_FRAME_OVERHEAD : 0;
	if (plen > IOP_FRAME_MAX_PAYLOAD)
		plen = IOP_FRAME_MAX_PAYLOAD; /* the decoder rejects anything longer */
	size_t names = plen / MIN_NAME_BYTES, counters = plen / MIN_COUNTER_BYTES;
	size_t inflight = plen / MIN_INFLIGHT_BYTES, events = plen / IOP_EVENT_MIN_BYTES;
	/* a run record (version 3) holds many calls in a few bytes: as many
	 * as the header says, up to what a frame may carry */
	if (len >= IOP_FRAME_HEADER_LEN) {
		size_t declared = iop_load_u32le(msg + 48);
		events = declared > IOP_FRAME_MAX_EVENTS ? IOP_FRAME_MAX_EVENTS
		         : declared > events             ? declared
		                                         : events;
	}
	names = names > UINT16_MAX ? UINT16_MAX : names;
	counters = counters > UINT16_MAX ? UINT16_MAX : counters;
	inflight = inflight > UINT16_MAX ? UINT16_MAX : inflight;
	/* at least one of each: grow() hands back the old (NULL) array for 0 */
	names += !names;
	counters += !counters;
	inflight += !inflight;
	events += !events;
	void *a = grow(o->names, &o->names_cap, names, sizeof *o->names);
	if (a)
		o->names = a;
	void *b = grow(o->counters, &o->counters_cap, counters, sizeof *o->counters);
	if (b)
		o->counters = b;
	void *c = grow(o->inflight, &o->inflight_cap, inflight, sizeof *o->inflight);
	if (c)
		o->inflight = c;
	void *d = grow(o->events, &o->events_cap, events, sizeof *o->events);
	if (d)
		o->events = d;
	return a && b && c && d ? IOP_OK : IOP_ERR_NOMEM;
}

static enum iop_err take_message(struct sink *s, const uint8_t *msg, size_t len)
{
	if (fit_decoder(s, msg, len) != IOP_OK)
		return IOP_ERR_NOMEM;
	enum iop_err err = iop_frame_decode(msg, len, &s->key, &s->out);
	if (err == IOP_OK) {
		s->wire_bytes += len;
		return take_frame(s, &s->out);
	}
	if (s->rejected[err]++ == 0 || s->n_rejected < LOG_REJECTS) {
		struct iop_frame_hdr h;
		if (iop_frame_peek(msg, len, &h) == IOP_OK)
			fprintf(stderr, "iop-sink: rejected a frame of rank %u pid %u: %s\n",
			        h.rank, h.pid, iop_errname(err));
		else
			fprintf(stderr, "iop-sink: rejected %zu bytes: %s\n", len,
			        iop_errname(err));
	}
	s->n_rejected++;
	return IOP_OK;
}

static bool elapsed(uint64_t since_ns, uint64_t now_ns, uint64_t limit_ms)
{
	return now_ns - since_ns >= limit_ms * 1000000u;
}

static enum iop_err write_marker(const char *path, const char *url);

/* One message of sock (NN_DONTWAIT: false when it has none) taken. */
static bool receive_one(struct sink *s, int sock, int flags, enum iop_err *err)
{
	void *msg = NULL;
	int n = nn_recv(sock, &msg, NN_MSG, flags);
	if (n < 0) {
		int e = nn_errno();
		if (e != ETIMEDOUT && e != EAGAIN && e != EINTR) {
			fprintf(stderr, "iop-sink: receive: %s\n", nn_strerror(e));
			*err = IOP_ERR_IO;
		}
		return false;
	}
	*err = take_message(s, msg, (size_t)n);
	nn_freemsg(msg);
	if (*err != IOP_OK)
		fprintf(stderr, "iop-sink: %s\n", iop_strerror(*err));
	return true;
}

/* A last frame over REP: what PULL holds first, then it, then the reply
 * its sender waits for. */
static bool receive_final(struct sink *s, int pull, int rep, enum iop_err *err)
{
	while (*err == IOP_OK && receive_one(s, pull, NN_DONTWAIT, err))
		;
	if (*err != IOP_OK || !receive_one(s, rep, NN_DONTWAIT, err))
		return false;
	if (*err != IOP_OK)
		return true;
	if (nn_send(rep, "ok", 2, NN_DONTWAIT) == 2)
		s->finals_answered++;
	else
		fprintf(stderr, "iop-sink: cannot answer a last frame: %s\n", nn_strerror(nn_errno()));
	return true;
}

static enum iop_err receive(struct sink *s, int pull, int rep)
{
	uint64_t start = iop_mono_ns(), last = 0;
	for (;;) {
		uint64_t now = iop_mono_ns();
		if (stop_signal)
			s->stop_reason = "signal";
		else if (s->opt.expect_final && s->final_frames >= s->opt.expect_final)
			s->stop_reason = "expect_final";
		else if (last && elapsed(last, now, s->opt.idle_ms))
			s->stop_reason = "idle";
		else if (elapsed(start, now, s->opt.timeout_s * 1000))
			s->stop_reason = "timeout";
		if (s->stop_reason)
			return IOP_OK;
		enum iop_err err = IOP_OK;
		bool got;
		if (rep < 0) {
			got = receive_one(s, pull, 0, &err); /* waits SLICE_MS at most */
		} else {
			struct nn_pollfd p[2] = {{.fd = pull, .events = NN_POLLIN},
			                         {.fd = rep, .events = NN_POLLIN}};
			if (nn_poll(p, 2, SLICE_MS) < 0 && nn_errno() != EINTR) {
				fprintf(stderr, "iop-sink: poll: %s\n", nn_strerror(nn_errno()));
				return IOP_ERR_IO;
			}
			got = (p[1].revents & NN_POLLIN) ? receive_final(s, pull, rep, &err)
			      : (p[0].revents & NN_POLLIN) && receive_one(s, pull, NN_DONTWAIT, &err);
		}
		if (err != IOP_OK)
			return err;
		if (!got)
			continue;
		last = iop_mono_ns();
		if (s->opt.got && s->frames && write_marker(s->opt.got, s->opt.url) == IOP_OK)
			s->opt.got = NULL; /* said once */
	}
}

/* A file holding the sink's URL: the ready file (the socket is bound:
 * senders may start) and the got file (a frame has been accepted: a sender
 * is connected, which a test may wait for before going on). */
static enum iop_err write_marker(const char *path, const char *url)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return IOP_ERR_IO;
	size_t len = strlen(url);
	bool ok = write(fd, url, len) == (ssize_t)len && write(fd, "\n", 1) == 1;
	return close(fd) == 0 && ok ? IOP_OK : IOP_ERR_IO;
}

/* A socket of protocol proto bound at url; -1 when it cannot be. */
static int open_socket(int proto, const char *url)
{
	int s = nn_socket(AF_SP, proto);
	int timeo = SLICE_MS, maxsize = RCV_MAX_BYTES;
	if (s < 0 || nn_setsockopt(s, NN_SOL_SOCKET, NN_RCVTIMEO, &timeo, sizeof timeo) < 0 ||
	    nn_setsockopt(s, NN_SOL_SOCKET, NN_RCVMAXSIZE, &maxsize, sizeof maxsize) < 0 ||
	    nn_bind(s, url) < 0) {
		fprintf(stderr, "iop-sink: cannot bind %s: %s\n", url, nn_strerror(nn_errno()));
		if (s >= 0)
			nn_close(s);
		return -1;
	}
	return s;
}

/* ---------------------------------------------------------------- options */

static void usage(FILE *to)
{
	fprintf(to, "usage: iop-sink --url URL --key HEX32 [--final-url URL] [--out FILE]\n"
	            "                [--expect-final N] [--idle-ms MS] [--timeout-s S]\n"
	            "                [--ready FILE] [--got FILE] [--light]\n"
	            "  --final-url  a REP socket there answers each last frame sent to it\n"
	            "               (the shim's IOPULSE_FINAL_ADDR)\n"
	            "  --ready  a file made once the socket is bound\n"
	            "  --got    a file made once a frame is accepted (a sender is connected)\n"
	            "  --light  decode and check every frame, keep counters and stats, but not\n"
	            "           per-event totals, latency or nesting (a leaf's intake cost)\n");
}

static bool parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || v < min || v > max)
		return false;
	*out = v;
	return true;
}

static bool parse_opts(int argc, char **argv, struct sink_opts *opt, struct iop_key *key)
{
	static const struct option longopts[] = {{"url", required_argument, NULL, 'u'},
	                                         {"key", required_argument, NULL, 'k'},
	                                         {"out", required_argument, NULL, 'o'},
	                                         {"expect-final", required_argument, NULL, 'f'},
	                                         {"idle-ms", required_argument, NULL, 'i'},
	                                         {"timeout-s", required_argument, NULL, 't'},
	                                         {"ready", required_argument, NULL, 'r'},
	                                         {"got", required_argument, NULL, 'g'},
	                                         {"light", no_argument, NULL, 'l'},
	                                         {"final-url", required_argument, NULL, 'F'},
	                                         {"help", no_argument, NULL, 'h'},
	                                         {NULL, 0, NULL, 0}};
	bool have_key = false, ok = true;
	int c;
	*opt = (struct sink_opts){.idle_ms = 2000, .timeout_s = 120};
	while (ok && (c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'u':
			opt->url = optarg;
			break;
		case 'k':
			ok = have_key = iop_key_from_hex(optarg, key) == IOP_OK;
			break;
		case 'o':
			opt->out = optarg;
			break;
		case 'f':
			ok = parse_u64(optarg, 0, UINT32_MAX, &opt->expect_final);
			break;
		case 'i':
			ok = parse_u64(optarg, 1, 86400000, &opt->idle_ms);
			break;
		case 't':
			ok = parse_u64(optarg, 1, 86400 * 365, &opt->timeout_s);
			break;
		case 'r':
			opt->ready = optarg;
			break;
		case 'g':
			opt->got = optarg;
			break;
		case 'l':
			opt->light = true;
			break;
		case 'F':
			opt->final_url = optarg;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			ok = false;
			break;
		}
		if (!ok && c != '?')
			fprintf(stderr, "iop-sink: bad value '%s'%s\n", optarg,
			        c == 'k' ? " (the key is 32 hex digits)" : "");
	}
	if (ok && (!opt->url || !have_key || optind != argc))
		ok = false;
	return ok;
}

/* ------------------------------------------------------------------- main */

static void on_signal(int sig)
{
	stop_signal = sig;
}

static void catch_signals(void)
{
	struct sigaction sa = {.sa_handler = on_signal}; /* no SA_RESTART: wake nn_recv */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
}

static void sink_free(struct sink *s)
{
	for (size_t i = 0; i < s->procs.n; i++) {
		struct sink_proc *p = sink_table_at(&s->procs, i);
		sink_table_free(&p->cells);
		sink_table_free(&p->calls);
		sink_table_free(&p->names);
		sink_table_free(&p->sites);
		sink_map_free(&p->seqs);
	}
	sink_map_free(&s->images);
	for (size_t i = 0; i < s->files.n; i++) {
		struct sink_file *f = sink_table_at(&s->files, i);
		free(f->path);
		free(f->ranks);
	}
	sink_table_free(&s->procs);
	sink_table_free(&s->files);
	for (int l = 0; l < IOP_LAYER__COUNT; l++)
		iop_hist_free(&s->lat[l]);
	free(s->out.names);
	free(s->out.counters);
	free(s->out.inflight);
	free(s->out.events);
}

int main(int argc, char **argv)
{
	static struct sink s = {
	    .procs = {.size = sizeof(struct sink_proc)},
	    .files = {.size = sizeof(struct sink_file)},
	};
	if (!parse_opts(argc, argv, &s.opt, &s.key)) {
		usage(stderr);
		return 2;
	}
	for (int l = 0; l < IOP_LAYER__COUNT; l++)
		iop_hist_init(&s.lat[l]);
	catch_signals();
	int sock = open_socket(NN_PULL, s.opt.url), rep = -1;
	if (sock < 0 || (s.opt.final_url && (rep = open_socket(NN_REP, s.opt.final_url)) < 0)) {
		if (sock >= 0)
			nn_close(sock);
		return 1;
	}
	enum iop_err err = IOP_OK;
	if (s.opt.ready && (err = write_marker(s.opt.ready, s.opt.url)) != IOP_OK)
		fprintf(stderr, "iop-sink: cannot create %s: %s\n", s.opt.ready, strerror(errno));
	if (err == IOP_OK)
		err = receive(&s, sock, rep);
	nn_close(sock);
	if (rep >= 0)
		nn_close(rep);
	if (err == IOP_OK && (err = sink_write_json(&s, s.opt.out)) != IOP_OK)
		fprintf(stderr, "iop-sink: cannot write the summary: %s\n", iop_strerror(err));
	sink_free(&s);
	return err == IOP_OK ? 0 : 1;
}
