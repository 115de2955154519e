/* The root's viewer server. See viewsrv.h; formats in viewproto.h and
 * docs/viewer.md. */
#include "viewsrv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <nanomsg/nn.h>
#include <nanomsg/pubsub.h>
#include <nanomsg/reqrep.h>

#include "clock.h"
#include "judge.h"
#include "keyframe.h"
#include "snapshot.h"
#include "viewproto.h"

/* A subscriber further behind than about this (plus its own receive
 * buffer) loses ticks; a tick larger than it still goes out whole. */
#define PUB_SNDBUF (1 << 20)

/* A child that has not answered by then is taken for stuck (an allocator
 * lock held at the fork, say): killed, and keyframes are encoded in the
 * loop from then on. A 4096-rank hour is a few seconds' work. */
#define KF_CHILD_MAX_NS (120 * 1000000000ull)

struct coll_viewsrv {
	int pub, rep;
	uint64_t job_id, instance, seq;
	struct iop_key key;
	uint8_t *buf; /* messages are built here */
	size_t cap;
	uint8_t *kf; /* a keyframe payload encoded in place (no child could be started) */
	size_t kf_cap, kf_len;
	const uint8_t *kf_p; /* the keyframe reply's payload (kf or snap's), while valid */
	uint64_t kf_ticks, kf_seq; /* the ticks applied and sequence it was taken at */
	bool kf_valid;
	/* A keyframe being encoded by a child (snapshot.h): the request it
	 * answers is held (REP answers one at a time), and no other is read
	 * until it is answered. */
	struct coll_snapshot snap;
	bool kf_waiting;
	bool no_child; /* a child overran KF_CHILD_MAX_NS: encode in place from then on */
	struct coll_view_hdr kf_req;
	uint64_t snap_ticks, snap_seq, snap_start_ns, child_max_ns;
	struct coll_tick scratch[2];
	struct coll_viewsrv_stats st;
};

static enum iop_err bind_all(struct coll_viewsrv *v, const char *const *urls)
{
	for (size_t i = 0; urls && urls[i]; i++) {
		char pub[1024];
		enum iop_err e = coll_view_pub_addr(urls[i], pub, sizeof pub);
		if (e)
			return e;
		if (nn_bind(v->rep, urls[i]) < 0 || nn_bind(v->pub, pub) < 0)
			return IOP_ERR_IO;
	}
	return IOP_OK;
}

enum iop_err coll_viewsrv_new(const char *const *urls, uint64_t job_id, const struct iop_key *key,
                              struct coll_viewsrv **out)
{
	*out = NULL;
	if (!urls || !urls[0])
		return IOP_ERR_INVAL;
	struct coll_viewsrv *v = calloc(1, sizeof(*v));
	if (!v)
		return IOP_ERR_NOMEM;
	v->job_id = job_id;
	v->key = *key;
	v->snap = (struct coll_snapshot)COLL_SNAPSHOT_INIT;
	v->child_max_ns = KF_CHILD_MAX_NS;
	struct iop_key rnd;
	enum iop_err e = iop_key_generate(&rnd);
	v->instance = iop_load_u64le(rnd.b) | 1; /* never 0: 0 means none to a viewer */
	v->pub = nn_socket(AF_SP, NN_PUB);
	v->rep = nn_socket(AF_SP, NN_REP);
	int sndbuf = PUB_SNDBUF, maxsize = COLL_VIEW_REQ_MAX;
	if (!e && (v->pub < 0 || v->rep < 0 ||
	           nn_setsockopt(v->pub, NN_SOL_SOCKET, NN_SNDBUF, &sndbuf, sizeof sndbuf) < 0 ||
	           nn_setsockopt(v->rep, NN_SOL_SOCKET, NN_RCVMAXSIZE, &maxsize, sizeof maxsize) < 0))
		e = IOP_ERR_IO;
	if (!e)
		e = bind_all(v, urls);
	if (e) {
		int saved = errno;
		coll_viewsrv_free(v);
		errno = saved;
		return e;
	}
	coll_tick_init(&v->scratch[0], 0, 1);
	coll_tick_init(&v->scratch[1], 0, 1);
	v->st.instance = v->instance;
	*out = v;
	return IOP_OK;
}

void coll_viewsrv_free(struct coll_viewsrv *v)
{
	if (!v)
		return;
	/* nanomsg has no linger: the job's last tick, published just before
	 * the end, would go down with the socket. With a viewer connected,
	 * give nanomsg's thread a moment to write it. */
	if (v->pub >= 0 && nn_get_statistic(v->pub, NN_STAT_CURRENT_CONNECTIONS) > 0) {
		struct timespec ts = {0, 200000000};
		nanosleep(&ts, NULL);
	}
	if (v->pub >= 0)
		nn_close(v->pub);
	if (v->rep >= 0)
		nn_close(v->rep);
	coll_snapshot_free(&v->snap);
	coll_tick_free(&v->scratch[0]);
	coll_tick_free(&v->scratch[1]);
	free(v->buf);
	free(v->kf);
	free(v);
}

size_t coll_viewsrv_fds(const struct coll_viewsrv *v, int *fds, size_t max)
{
	int fd;
	size_t len = sizeof fd;
	if (max < 1)
		return 0;
	if (v->kf_waiting) { /* no request is read until the child is done */
		fds[0] = coll_snapshot_fd(&v->snap);
		return 1;
	}
	if (nn_getsockopt(v->rep, NN_SOL_SOCKET, NN_RCVFD, &fd, &len) < 0)
		return 0;
	fds[0] = fd;
	return 1;
}

void coll_viewsrv_set_child_max_ns(struct coll_viewsrv *v, uint64_t ns)
{
	v->child_max_ns = ns;
}

void coll_viewsrv_stats(const struct coll_viewsrv *v, struct coll_viewsrv_stats *st)
{
	*st = v->st;
}

/* ------------------------------------------------------------ messages */

/* A message being built: its header and what writes the rest. */
struct message {
	uint32_t magic;
	struct coll_view_hdr h;
	void (*body)(const void *arg, struct iop_wcur *c);
	const void *arg;
};

static void fill_message(const void *arg, struct iop_wcur *c)
{
	const struct message *m = arg;
	coll_view_begin(c, m->magic, &m->h);
	if (m->body)
		m->body(m->arg, c);
}

/* Builds m in v->buf and MACs it; *len = the whole message. */
static enum iop_err build(struct coll_viewsrv *v, const struct message *m, size_t *len)
{
	size_t n;
	enum iop_err e = coll_encode_grown(&v->buf, &v->cap, COLL_VIEW_REPLY_MAX, IOP_MAC_BYTES,
	                                   fill_message, m, &n);
	if (e)
		return e;
	*len = n + IOP_MAC_BYTES;
	return iop_mac(&v->key, v->buf, n, v->buf + n);
}

static void fill_body(const void *arg, struct iop_wcur *c)
{
	coll_delta_encode_body(arg, c);
}

void coll_viewsrv_tick(struct coll_viewsrv *v, const struct coll_delta *closed,
                       const struct coll_state *s)
{
	(void)s;
	struct message m = {COLL_VIEW_TICK_MAGIC,
	                    {.type = COLL_VIEW_TICK, .job_id = v->job_id, .instance = v->instance,
	                     .seq = v->seq + 1, .tick = closed->tick.t},
	                    fill_body, closed};
	size_t len;
	/* the sequence moves on even when this tick is not sent: a viewer
	 * then sees a gap and fetches a keyframe */
	v->seq++;
	v->st.seq = v->seq;
	if (nn_get_statistic(v->pub, NN_STAT_CURRENT_CONNECTIONS) == 0) {
		v->st.unwatched++; /* nobody to send it to: not even encoded */
		return;
	}
	if (build(v, &m, &len) || nn_send(v->pub, v->buf, len, NN_DONTWAIT) < 0)
		v->st.pub_failed++;
	else
		v->st.published++;
}

/* ------------------------------------------------------------- queries */

struct bytes {
	const uint8_t *p;
	size_t len;
};

static void fill_bytes(const void *arg, struct iop_wcur *c)
{
	const struct bytes *b = arg;
	iop_put_bytes(c, b->p, b->len);
}

static void fill_keyframe(const void *arg, struct iop_wcur *c)
{
	const struct coll_viewsrv *v = ((const void *const *)arg)[0];
	const struct coll_state *s = ((const void *const *)arg)[1];
	iop_put_u64le(c, v->instance);
	iop_put_u64le(c, v->seq);
	coll_state_encode_keyframe_cur(s, c);
}

#define KF_MAX (COLL_VIEW_REPLY_MAX - 64)

/* The keyframe payload (instance, last sequence, keyframe), encoded once
 * per tick. When it is not at hand, a child encodes it (snapshot.h) and
 * this says TIMEOUT: the request is answered when the child is done
 * (keyframe_done). Where no child can be started, it is encoded here. */
static enum iop_err keyframe_payload(struct coll_viewsrv *v, const struct coll_state *s,
                                     struct bytes *out)
{
	if (!v->kf_valid || v->kf_ticks != s->ticks_applied || v->kf_seq != v->seq) {
		const void *arg[2] = {v, s};
		v->kf_valid = false;
		v->snap_ticks = s->ticks_applied;
		v->snap_seq = v->seq;
		v->snap_start_ns = iop_mono_ns();
		if (!v->no_child && !coll_snapshot_start(&v->snap, KF_MAX, fill_keyframe, arg))
			return IOP_ERR_TIMEOUT;
		enum iop_err e = coll_encode_grown(&v->kf, &v->kf_cap, KF_MAX, 0, fill_keyframe,
		                                   arg, &v->kf_len);
		if (e)
			return e;
		v->kf_p = v->kf;
		v->kf_valid = true;
		v->kf_ticks = v->snap_ticks;
		v->kf_seq = v->snap_seq;
		v->st.keyframes_encoded++;
	}
	*out = (struct bytes){v->kf_p, v->kf_len};
	return IOP_OK;
}

struct history {
	const struct coll_state *s;
	struct coll_key key;
	int64_t from, to;
	struct coll_tick *one; /* scratch for a point's row */
};

/* Which tier k is in, or -1. */
static int tier_of(const struct coll_state *s, const struct coll_tick *k)
{
	for (int i = 0; i < 3; i++)
		if (s->tier[i].v && k >= s->tier[i].v && k < s->tier[i].v + s->tier[i].cap)
			return i;
	return -1;
}

/* The start of tier i's first entry starting after t, or INT64_MAX. */
static int64_t tier_next_start(const struct coll_tier *tr, int64_t t)
{
	uint32_t lo = 0, hi = tr->n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (tr->v[(tr->head + mid) % tr->cap].t <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < tr->n ? tr->v[(tr->head + lo) % tr->cap].t : INT64_MAX;
}

/* Walks the history entries that answer for the ticks of [from, to]:
 * the tick or bin coll_state_tick() gives, each once, in time order. */
static void fill_history(const void *arg, struct iop_wcur *c)
{
	const struct history *q = arg;
	const struct coll_state *s = q->s;
	uint8_t *count_at = c->p; /* a fixed-width count, set at the end */
	iop_put_u32le(c, 0);
	uint32_t n = 0;
	int64_t t = q->from;
	while (t <= q->to && n < COLL_VIEW_HISTORY_MAX && !c->err) {
		const struct coll_tick *k = coll_state_tick(s, t);
		int64_t next = INT64_MAX;
		int tier = k ? tier_of(s, k) : 3;
		for (int i = 0; i < tier && i < 3; i++) {
			int64_t st = tier_next_start(&s->tier[i], t);
			next = st < next ? st : next;
		}
		if (k) {
			int64_t end = k->t + (int64_t)s->tier[tier].ticks_per_bin;
			next = end < next ? end : next;
			coll_tick_reset(q->one, k->t);
			q->one->tick_ns = k->tick_ns;
			const struct coll_cell *cell = coll_tick_find(k, &q->key);
			struct coll_cell *dst;
			if (cell && (coll_tick_row(q->one, &q->key, &dst) || coll_cell_merge(dst, cell))) {
				c->err = IOP_ERR_NOMEM;
				return;
			}
			iop_put_varint(c, s->tier[tier].ticks_per_bin);
			coll_tick_encode(q->one, c);
			n++;
		}
		if (next == INT64_MAX || next <= t)
			break;
		t = next;
	}
	if (!c->err)
		iop_store_u32le(count_at, n);
}

struct rows {
	const struct coll_tick *a, *b;
	const char *name; /* file: its path, or NULL */
	const struct coll_rank *rank;
};

static void fill_rows(const void *arg, struct iop_wcur *c)
{
	const struct rows *r = arg;
	if (r->rank) {
		iop_put_u8(c, r->rank->state);
		iop_put_u64le(c, r->rank->node);
		iop_put_varint(c, r->rank->excl_ns);
		iop_put_varint(c, r->rank->procs);
		iop_put_varint(c, r->rank->live);
	} else {
		size_t len = r->name ? strlen(r->name) : 0;
		iop_put_varint(c, len);
		iop_put_bytes(c, r->name, len);
	}
	coll_tick_encode(r->a, c);
	if (r->b)
		coll_tick_encode(r->b, c);
}

/* A rank's totals: per (file, layer, class) and per (layer, class). */
static enum iop_err rank_rows(struct coll_viewsrv *v, const struct coll_state *s, uint32_t rank,
                              struct rows *out)
{
	static const struct coll_rank none;
	struct coll_tick *files = &v->scratch[0], *layers = &v->scratch[1];
	coll_tick_reset(files, 0);
	coll_tick_reset(layers, 0);
	files->tick_ns = layers->tick_ns = s->tick_ns ? s->tick_ns : 1;
	enum iop_err e = IOP_OK;
	for (struct coll_totals_it it = {.s = s}; !e && coll_totals_next(&it);) {
		const struct coll_key *k = &it.key;
		if (k->rank != rank)
			continue;
		struct coll_cell *c;
		struct coll_key lk = coll_key_rank(rank, k->layer, k->cls);
		e = coll_tick_row(files, k, &c);
		if (!e)
			e = coll_cell_merge(c, &it.cell);
		if (!e)
			e = coll_tick_row(layers, &lk, &c);
		if (!e)
			e = coll_cell_merge(c, &it.cell);
	}
	*out = (struct rows){files, layers, NULL, rank < s->n_ranks ? &s->ranks[rank] : &none};
	if (!e && out->rank->state == 0 && files->n == 0)
		e = IOP_ERR_NOT_FOUND;
	return e;
}

/* A file's totals per (rank, layer, class). */
static enum iop_err file_rows(struct coll_viewsrv *v, const struct coll_state *s, uint64_t file,
                              struct rows *out)
{
	struct coll_tick *rows = &v->scratch[0];
	coll_tick_reset(rows, 0);
	rows->tick_ns = s->tick_ns ? s->tick_ns : 1;
	enum iop_err e = IOP_OK;
	for (struct coll_totals_it it = {.s = s}; !e && coll_totals_next(&it);) {
		if (it.key.id != file)
			continue;
		struct coll_cell *c;
		e = coll_tick_row(rows, &it.key, &c);
		if (!e)
			e = coll_cell_merge(c, &it.cell);
	}
	*out = (struct rows){rows, NULL, coll_names_text(&s->names, file), NULL};
	if (!e && !out->name && rows->n == 0)
		e = IOP_ERR_NOT_FOUND;
	return e;
}

static void fill_json(const void *arg, struct iop_wcur *c)
{
	const char *text = arg;
	iop_put_bytes(c, text, strlen(text));
}

/* {"active":[...],"log":[...],"not_kept":N}: records as the summary's. */
static char *alerts_json(const struct coll_alerts *a, const struct coll_state *s)
{
	json_t *active = json_array(), *log = json_array();
	size_t n = 0;
	uint64_t not_kept = 0;
	const struct coll_alert_record *r = a ? coll_alerts_history(a, &n, &not_kept) : NULL;
	for (size_t i = 0; i < n; i++) {
		json_t *j = coll_alert_record_json(&r[i], coll_state_name, (void *)s);
		if (r[i].end_ns == 0)
			json_array_append(active, j);
		json_array_append_new(log, j);
	}
	json_t *o = json_pack("{s:o,s:o,s:I}", "active", active, "log", log, "not_kept",
	                      (json_int_t)not_kept);
	char *text = o ? json_dumps(o, COLL_ALERT_JSON_FLAGS) : NULL;
	json_decref(o);
	return text;
}

/* Answers one authentic request: fills m's status and body. */
static void answer(struct coll_viewsrv *v, struct iop_rcur *args, const struct coll_state *s,
                   const struct coll_alerts *alerts, struct message *m, void *scratch[3])
{
	struct bytes *b = scratch[0];
	struct history *q = scratch[1];
	struct rows *rows = scratch[2];
	enum iop_err e = IOP_OK;
	switch (m->h.type) {
	case COLL_VIEW_KEYFRAME:
		if (!(e = keyframe_payload(v, s, b)))
			*m = (struct message){m->magic, m->h, fill_bytes, b};
		else if (e == IOP_ERR_TIMEOUT) { /* a child encodes it: held */
			v->kf_waiting = true;
			v->kf_req = m->h;
			return;
		}
		break;
	case COLL_VIEW_HISTORY:
		q->s = s;
		q->one = &v->scratch[0];
		if (!coll_view_get_key(args, &q->key))
			e = IOP_ERR_MALFORMED;
		q->from = iop_get_svarint(args);
		q->to = iop_get_svarint(args);
		if (!e && args->err)
			e = IOP_ERR_MALFORMED;
		m->body = fill_history;
		m->arg = q;
		break;
	case COLL_VIEW_RANK: {
		uint32_t rank = (uint32_t)iop_get_varint_max(args, UINT32_MAX);
		e = args->err ? IOP_ERR_MALFORMED : rank_rows(v, s, rank, rows);
		m->body = fill_rows;
		m->arg = rows;
		break;
	}
	case COLL_VIEW_FILE: {
		uint64_t file = iop_get_u64le(args);
		e = args->err ? IOP_ERR_MALFORMED : file_rows(v, s, file, rows);
		m->body = fill_rows;
		m->arg = rows;
		break;
	}
	case COLL_VIEW_ALERTS:
		m->body = fill_json;
		m->arg = alerts_json(alerts, s);
		if (!m->arg)
			e = IOP_ERR_NOMEM;
		break;
	default:
		e = IOP_ERR_INVAL;
	}
	if (!e && iop_rcur_left(args))
		e = IOP_ERR_MALFORMED;
	if (e) {
		if (m->h.type == COLL_VIEW_ALERTS)
			free((void *)m->arg);
		m->body = NULL;
		m->arg = NULL;
		if (e == IOP_ERR_MALFORMED || e == IOP_ERR_INVAL)
			v->st.bad_requests++;
	}
	m->h.status = (uint16_t)e;
}

/* Builds, MACs and sends m, the answer to the request last read. */
static void reply(struct coll_viewsrv *v, struct message *m)
{
	size_t out;
	enum iop_err e = build(v, m, &out);
	if (m->body == fill_json)
		free((void *)m->arg);
	if (e) { /* too large or no memory: say so instead */
		m->body = NULL;
		m->h.status = (uint16_t)e;
		e = build(v, m, &out);
	}
	if (e || nn_send(v->rep, v->buf, out, NN_DONTWAIT) < 0)
		v->st.reply_failed++;
}

static void handle(struct coll_viewsrv *v, const uint8_t *req, size_t len,
                   const struct coll_state *s, const struct coll_alerts *alerts)
{
	struct coll_view_hdr h;
	struct iop_rcur args;
	struct message m = {.magic = COLL_VIEW_REPLY_MAGIC};
	struct bytes b;
	struct history q;
	struct rows rows;
	void *scratch[3] = {&b, &q, &rows};
	enum iop_err e = coll_view_open(req, len, COLL_VIEW_REQ_MAGIC, &v->key, v->job_id, true, &h,
	                                &args);
	m.h = (struct coll_view_hdr){.type = h.type, .job_id = v->job_id, .seq = h.seq};
	if (e) {
		/* a refusal says nothing but that: no type, no data */
		m.h = (struct coll_view_hdr){.job_id = v->job_id, .status = IOP_ERR_BAD_MAC};
		v->st.refused++;
	} else {
		answer(v, &args, s, alerts, &m, scratch);
		if (v->kf_waiting)
			return; /* answered when the child is done */
		v->st.requests++;
	}
	reply(v, &m);
}

/* The held keyframe request's answer, now that its child is done (or was
 * killed: then the answer says IO, and the viewer asks again). A child
 * that overran KF_CHILD_MAX_NS is killed and the keyframe encoded here. */
static void keyframe_done(struct coll_viewsrv *v, const struct coll_state *s)
{
	const uint8_t *p = NULL;
	size_t n = 0;
	enum iop_err e = IOP_OK;
	bool in_place = iop_mono_ns() - v->snap_start_ns >= v->child_max_ns;
	if (!in_place && (e = coll_snapshot_collect(&v->snap, false, &p, &n)) == IOP_ERR_TIMEOUT)
		return;
	v->kf_waiting = false;
	if (in_place) { /* keyframe_payload() keeps it, as for any in place */
		coll_snapshot_free(&v->snap);
		v->no_child = true;
		v->kf_valid = false;
		struct bytes here;
		e = keyframe_payload(v, s, &here);
		p = here.p;
		n = here.len;
	}
	struct message m = {.magic = COLL_VIEW_REPLY_MAGIC, .h = v->kf_req};
	struct bytes b;
	if (!e) {
		if (!in_place) {
			v->kf_p = p;
			v->kf_len = n;
			v->kf_valid = true;
			v->kf_ticks = v->snap_ticks;
			v->kf_seq = v->snap_seq;
			v->st.keyframes_encoded++;
		}
		b = (struct bytes){p, n};
		m.body = fill_bytes;
		m.arg = &b;
	}
	m.h.status = (uint16_t)e;
	v->st.requests++;
	reply(v, &m);
}

void coll_viewsrv_pump(struct coll_viewsrv *v, const struct coll_state *s,
                       const struct coll_alerts *alerts)
{
	if (v->kf_waiting)
		keyframe_done(v, s);
	while (!v->kf_waiting) {
		void *msg;
		int n = nn_recv(v->rep, &msg, NN_MSG, NN_DONTWAIT);
		if (n < 0)
			return;
		handle(v, msg, (size_t)n, s, alerts);
		nn_freemsg(msg);
	}
}
