/* A viewer of a running job. See viewer.h; formats in viewproto.h and
 * docs/viewer.md.
 *
 * Three sockets: SUB for the ticks, one REQ for keyframes (driven by the
 * pump, never waited on) and one REQ for the caller's queries (waited on
 * up to the timeout), so a query never cancels a keyframe on its way. */
#include "viewer.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <nanomsg/nn.h>
#include <nanomsg/pubsub.h>
#include <nanomsg/reqrep.h>

#include "frame.h"
#include "keyframe.h"
#include "viewproto.h"

#define DEFAULT_TIMEOUT_NS 2000000000ull

struct held {
	void *msg; /* a tick message (nanomsg's), kept while a keyframe comes */
	size_t len;
};

struct coll_viewer {
	int sub, req_kf, req_q;
	uint64_t job_id;
	struct iop_key key;
	struct coll_viewer_opts opts;
	bool have_state;
	struct coll_state state;
	uint64_t instance, next_seq; /* of the ticks being applied */
	bool kf_wanted, kf_inflight;
	uint64_t kf_req_id, kf_sent_ns;
	uint64_t next_req_id;
	uint64_t started_ns, last_tick_ns;
	bool refused, unreachable;
	struct held *held;
	uint32_t n_held;
	struct coll_delta d;
	uint8_t req[COLL_VIEW_REQ_MAX];
	struct coll_viewer_stats st;
};

const char *coll_viewer_status_text(enum coll_viewer_status st)
{
	switch (st) {
	case COLL_VIEWER_CONNECTING: return "connecting";
	case COLL_VIEWER_LIVE: return "live";
	case COLL_VIEWER_STALE: return "stale: no tick from the root for a while";
	case COLL_VIEWER_UNREACHABLE: return "unreachable: the root does not answer";
	case COLL_VIEWER_REFUSED: return "refused: wrong job key";
	}
	return "?";
}

static int sock(int domain_type)
{
	int s = nn_socket(AF_SP, domain_type);
	int max = (int)COLL_VIEW_REPLY_MAX;
	if (s >= 0 && nn_setsockopt(s, NN_SOL_SOCKET, NN_RCVMAXSIZE, &max, sizeof max) < 0) {
		nn_close(s);
		s = -1;
	}
	return s;
}

enum iop_err coll_viewer_new(const char *addr, uint64_t job_id, const struct iop_key *key,
                             const struct coll_viewer_opts *opts, uint64_t now_ns,
                             struct coll_viewer **out)
{
	*out = NULL;
	char pub[1024];
	enum iop_err e = coll_view_pub_addr(addr, pub, sizeof pub);
	if (e)
		return e;
	struct coll_viewer *v = calloc(1, sizeof(*v));
	if (!v)
		return IOP_ERR_NOMEM;
	if (opts)
		v->opts = *opts;
	if (!v->opts.timeout_ns)
		v->opts.timeout_ns = DEFAULT_TIMEOUT_NS;
	if (!v->opts.stale_ticks)
		v->opts.stale_ticks = 3;
	if (!v->opts.buffered)
		v->opts.buffered = 256;
	v->job_id = job_id;
	v->key = *key;
	v->started_ns = now_ns;
	v->kf_wanted = true;
	v->next_req_id = 1;
	coll_delta_init(&v->d, 0, 1);
	v->sub = sock(NN_SUB);
	v->req_kf = sock(NN_REQ);
	v->req_q = sock(NN_REQ);
	v->held = calloc(v->opts.buffered, sizeof(*v->held));
	if (!v->held)
		e = IOP_ERR_NOMEM;
	else if (v->sub < 0 || v->req_kf < 0 || v->req_q < 0 ||
	         nn_setsockopt(v->sub, NN_SUB, NN_SUB_SUBSCRIBE, "", 0) < 0 ||
	         nn_connect(v->sub, pub) < 0 || nn_connect(v->req_kf, addr) < 0 ||
	         nn_connect(v->req_q, addr) < 0)
		e = IOP_ERR_IO;
	if (e) {
		coll_viewer_free(v);
		return e;
	}
	*out = v;
	(void)coll_viewer_pump(v, now_ns); /* sends the keyframe request */
	return IOP_OK;
}

static void drop_held(struct coll_viewer *v)
{
	for (uint32_t i = 0; i < v->n_held; i++)
		nn_freemsg(v->held[i].msg);
	v->n_held = 0;
}

void coll_viewer_free(struct coll_viewer *v)
{
	if (!v)
		return;
	if (v->held)
		drop_held(v);
	free(v->held);
	if (v->sub >= 0)
		nn_close(v->sub);
	if (v->req_kf >= 0)
		nn_close(v->req_kf);
	if (v->req_q >= 0)
		nn_close(v->req_q);
	if (v->have_state)
		coll_state_free(&v->state);
	coll_delta_free(&v->d);
	free(v);
}

size_t coll_viewer_fds(const struct coll_viewer *v, int *fds, size_t max)
{
	int s[2] = {v->sub, v->req_kf};
	size_t n = 0;
	for (int i = 0; i < 2 && n < max; i++) {
		size_t len = sizeof(int);
		if (nn_getsockopt(s[i], NN_SOL_SOCKET, NN_RCVFD, &fds[n], &len) == 0)
			n++;
	}
	return n;
}

const struct coll_state *coll_viewer_state(const struct coll_viewer *v)
{
	return v->have_state ? &v->state : NULL;
}

void coll_viewer_stats(const struct coll_viewer *v, struct coll_viewer_stats *st)
{
	*st = v->st;
}

static bool stale(const struct coll_viewer *v, uint64_t now_ns)
{
	uint64_t limit = (uint64_t)v->opts.stale_ticks * v->state.tick_ns;
	return now_ns > v->last_tick_ns && now_ns - v->last_tick_ns > limit;
}

enum coll_viewer_status coll_viewer_status(const struct coll_viewer *v, uint64_t now_ns)
{
	if (v->refused)
		return COLL_VIEWER_REFUSED;
	if (v->unreachable)
		return COLL_VIEWER_UNREACHABLE;
	if (!v->have_state)
		return now_ns - v->started_ns > v->opts.timeout_ns ? COLL_VIEWER_UNREACHABLE
		                                                   : COLL_VIEWER_CONNECTING;
	return stale(v, now_ns) ? COLL_VIEWER_STALE : COLL_VIEWER_LIVE;
}

/* ---------------------------------------------------------------- requests */

/* Sends a request of type with args on socket s; *id = its request id. */
static enum iop_err send_request(struct coll_viewer *v, int s, uint16_t type, const void *args,
                                 size_t args_len, uint64_t *id)
{
	*id = v->next_req_id++;
	struct coll_view_hdr h = {.type = type, .job_id = v->job_id, .seq = *id};
	struct iop_wcur c = iop_wcur_make(v->req, sizeof v->req);
	coll_view_begin(&c, COLL_VIEW_REQ_MAGIC, &h);
	iop_put_bytes(&c, args, args_len);
	size_t len;
	enum iop_err e = coll_view_seal(&c, v->req, &v->key, &len);
	if (e)
		return e;
	return nn_send(s, v->req, len, NN_DONTWAIT) < 0 ? IOP_ERR_IO : IOP_OK;
}

/* Checks a reply to request id: BAD_MAC for a refusal (which a viewer
 * with the wrong key cannot check: it carries nothing), STATE for the
 * answer to another request, the root's status otherwise. */
static enum iop_err open_reply(struct coll_viewer *v, const uint8_t *buf, size_t len, uint64_t id,
                               struct iop_rcur *body)
{
	struct coll_view_hdr h;
	enum iop_err e = coll_view_open(buf, len, COLL_VIEW_REPLY_MAGIC, &v->key, v->job_id, false,
	                                &h, body);
	if (e)
		return IOP_ERR_MALFORMED;
	if (h.status == IOP_ERR_BAD_MAC) {
		v->st.refused++;
		v->refused = true;
		return IOP_ERR_BAD_MAC;
	}
	if (coll_view_open(buf, len, COLL_VIEW_REPLY_MAGIC, &v->key, v->job_id, true, &h, body))
		return IOP_ERR_MALFORMED; /* not from our root */
	if (h.seq != id)
		return IOP_ERR_STATE;
	v->refused = v->unreachable = false;
	return (enum iop_err)h.status;
}

/* ------------------------------------------------------------------ ticks */

static void want_keyframe(struct coll_viewer *v)
{
	v->kf_wanted = true;
}

static void hold(struct coll_viewer *v, void *msg, size_t len)
{
	if (v->n_held == v->opts.buffered) { /* the oldest goes: a gap, if it mattered */
		nn_freemsg(v->held[0].msg);
		memmove(v->held, v->held + 1, (v->n_held - 1) * sizeof(*v->held));
		v->n_held--;
	}
	v->held[v->n_held++] = (struct held){msg, len};
}

enum tick_fate { TICK_APPLIED, TICK_OLD, TICK_HOLD, TICK_BAD };

static enum tick_fate take_tick(struct coll_viewer *v, const uint8_t *buf, size_t len,
                                uint64_t now_ns)
{
	struct coll_view_hdr h;
	struct iop_rcur body;
	if (coll_view_open(buf, len, COLL_VIEW_TICK_MAGIC, &v->key, v->job_id, true, &h, &body) ||
	    h.type != COLL_VIEW_TICK)
		return TICK_BAD;
	if (!v->have_state || v->kf_wanted || v->kf_inflight)
		return TICK_HOLD;
	if (h.instance != v->instance) {
		v->st.restarts++;
		want_keyframe(v);
		return TICK_HOLD;
	}
	if (h.seq < v->next_seq)
		return TICK_OLD;
	if (h.seq > v->next_seq) {
		v->st.gaps++;
		want_keyframe(v);
		return TICK_HOLD;
	}
	if (coll_delta_decode_body(&v->d, &body) || iop_rcur_left(&body)) {
		want_keyframe(v); /* authentic but unreadable: start again */
		return TICK_BAD;
	}
	v->next_seq++;
	if (v->state.ticks_applied && v->d.tick.t <= v->state.last_t)
		return TICK_OLD; /* in the keyframe already */
	(void)coll_state_apply(&v->state, &v->d);
	v->last_tick_ns = now_ns;
	v->unreachable = false; /* ticks come: the root is there */
	v->st.ticks_applied++;
	return TICK_APPLIED;
}

/* Applies the held ticks that follow the keyframe; the rest go. */
static unsigned take_held(struct coll_viewer *v, uint64_t now_ns)
{
	unsigned applied = 0;
	uint32_t n = v->n_held, i = 0;
	struct held *h = v->held;
	for (; i < n && !v->kf_wanted; i++) {
		struct coll_view_hdr hd;
		struct iop_rcur body;
		if (coll_view_open(h[i].msg, h[i].len, COLL_VIEW_TICK_MAGIC, &v->key, v->job_id, false,
		                   &hd, &body) ||
		    hd.instance != v->instance || hd.seq < v->next_seq) {
			nn_freemsg(h[i].msg); /* another instance's, or in the keyframe */
			continue;
		}
		enum tick_fate f = take_tick(v, h[i].msg, h[i].len, now_ns);
		if (f == TICK_HOLD)
			break; /* a gap or another instance: a new keyframe is wanted */
		applied += f == TICK_APPLIED;
		nn_freemsg(h[i].msg);
	}
	memmove(h, h + i, (n - i) * sizeof(*h));
	v->n_held = n - i;
	return applied;
}

static bool take_keyframe(struct coll_viewer *v, struct iop_rcur *body, uint64_t now_ns)
{
	uint64_t instance = iop_get_u64le(body), seq = iop_get_u64le(body);
	struct coll_state s;
	if (body->err || coll_state_decode_keyframe(&s, body->p, iop_rcur_left(body))) {
		if (!body->err)
			coll_state_free(&s);
		return false;
	}
	bool newer = !v->have_state || s.last_t > v->state.last_t || instance != v->instance;
	if (v->have_state)
		coll_state_free(&v->state);
	v->state = s;
	v->have_state = true;
	v->instance = instance;
	v->next_seq = seq + 1;
	if (newer)
		v->last_tick_ns = now_ns;
	v->st.keyframes++;
	/* held ticks of an earlier instance, or already in the keyframe, go */
	return true;
}

/* The keyframe request: sent when wanted, its reply taken, resent after
 * the timeout. Returns 1 when a keyframe was taken. */
static unsigned pump_keyframe(struct coll_viewer *v, uint64_t now_ns)
{
	unsigned taken = 0;
	if (v->kf_inflight) {
		void *msg;
		int n;
		while ((n = nn_recv(v->req_kf, &msg, NN_MSG, NN_DONTWAIT)) >= 0) {
			struct iop_rcur body;
			enum iop_err e = open_reply(v, msg, (size_t)n, v->kf_req_id, &body);
			if (e == IOP_OK && take_keyframe(v, &body, now_ns)) {
				v->kf_inflight = v->kf_wanted = false;
				taken = 1;
			} else if (e == IOP_ERR_BAD_MAC) {
				v->kf_inflight = false; /* asked again after the timeout */
			} else if (e != IOP_ERR_STATE) {
				v->st.bad_messages++;
			}
			nn_freemsg(msg);
		}
		if (v->kf_inflight && now_ns - v->kf_sent_ns >= v->opts.timeout_ns) {
			v->st.timeouts++;
			v->unreachable = true;
			v->kf_inflight = false;
		}
	}
	bool due = !v->kf_sent_ns || now_ns - v->kf_sent_ns >= v->opts.timeout_ns;
	if (v->kf_wanted && !v->kf_inflight && (due || !v->refused)) {
		if (send_request(v, v->req_kf, COLL_VIEW_KEYFRAME, NULL, 0, &v->kf_req_id) == IOP_OK) {
			v->kf_inflight = true;
			v->kf_sent_ns = now_ns ? now_ns : 1;
		}
	}
	return taken;
}

unsigned coll_viewer_pump(struct coll_viewer *v, uint64_t now_ns)
{
	unsigned applied = pump_keyframe(v, now_ns);
	if (applied)
		applied += take_held(v, now_ns);
	void *msg;
	int n;
	while ((n = nn_recv(v->sub, &msg, NN_MSG, NN_DONTWAIT)) >= 0) {
		enum tick_fate f = take_tick(v, msg, (size_t)n, now_ns);
		if (f == TICK_HOLD) {
			hold(v, msg, (size_t)n);
			continue;
		}
		v->st.bad_messages += f == TICK_BAD;
		applied += f == TICK_APPLIED;
		nn_freemsg(msg);
	}
	/* a live viewer whose ticks stopped asks whether the root is there */
	if (v->have_state && !v->kf_inflight && stale(v, now_ns) &&
	    now_ns - v->kf_sent_ns >= v->opts.timeout_ns)
		want_keyframe(v);
	if (v->kf_wanted && !v->kf_inflight)
		applied += pump_keyframe(v, now_ns);
	return applied;
}

/* ---------------------------------------------------------------- queries */

/* Sends a query on the query socket and waits up to the timeout for its
 * reply; on success *msg (nn_freemsg() it) holds it and *body its payload. */
static enum iop_err query(struct coll_viewer *v, uint16_t type, const void *args, size_t len,
                          void **msg, struct iop_rcur *body)
{
	uint64_t id;
	*msg = NULL;
	enum iop_err e = send_request(v, v->req_q, type, args, len, &id);
	if (e)
		return e;
	int ms = (int)(v->opts.timeout_ns / 1000000);
	if (nn_setsockopt(v->req_q, NN_SOL_SOCKET, NN_RCVTIMEO, &ms, sizeof ms) < 0)
		return IOP_ERR_IO;
	for (;;) {
		int n = nn_recv(v->req_q, msg, NN_MSG, 0);
		if (n < 0) {
			*msg = NULL;
			if (errno != ETIMEDOUT && errno != EAGAIN)
				return IOP_ERR_IO;
			v->st.timeouts++;
			v->unreachable = true;
			return IOP_ERR_TIMEOUT;
		}
		e = open_reply(v, *msg, (size_t)n, id, body);
		if (e == IOP_ERR_OK)
			return IOP_OK;
		nn_freemsg(*msg);
		*msg = NULL;
		if (e != IOP_ERR_STATE)
			return e;
	}
}

void coll_view_points_free(struct coll_view_point *pts, size_t n)
{
	for (size_t i = 0; pts && i < n; i++)
		iop_hist_free(&pts[i].cell.hist);
	free(pts);
}

static enum iop_err decode_points(struct iop_rcur *c, struct coll_view_point **pts, size_t *n)
{
	uint32_t count = iop_get_u32le(c);
	if (c->err || count > COLL_VIEW_HISTORY_MAX || count > iop_rcur_left(c) / 4)
		return IOP_ERR_MALFORMED;
	struct coll_view_point *p = calloc(count ? count : 1, sizeof(*p));
	if (!p)
		return IOP_ERR_NOMEM;
	struct coll_tick k;
	coll_tick_init(&k, 0, 1);
	enum iop_err e = IOP_OK;
	uint32_t i = 0;
	for (; !e && i < count; i++) {
		coll_cell_init(&p[i].cell);
		p[i].ticks = (uint32_t)iop_get_varint_max(c, UINT32_MAX);
		e = c->err ? IOP_ERR_MALFORMED : coll_tick_decode(&k, c);
		if (!e && k.n > 1)
			e = IOP_ERR_MALFORMED;
		if (!e) {
			p[i].t = k.t;
			p[i].has_row = k.n == 1;
			if (k.n == 1)
				e = coll_cell_merge(&p[i].cell, &k.cell[0]);
		}
	}
	coll_tick_free(&k);
	if (e) {
		coll_view_points_free(p, i);
		return e;
	}
	*pts = p;
	*n = count;
	return IOP_OK;
}

enum iop_err coll_viewer_history(struct coll_viewer *v, const struct coll_key *key, int64_t from,
                                 int64_t to, struct coll_view_point **pts, size_t *n)
{
	*pts = NULL;
	*n = 0;
	uint8_t args[64];
	struct iop_wcur c = iop_wcur_make(args, sizeof args);
	coll_view_put_key(&c, key);
	iop_put_svarint(&c, from);
	iop_put_svarint(&c, to);
	void *msg;
	struct iop_rcur body;
	enum iop_err e = query(v, COLL_VIEW_HISTORY, args, (size_t)(c.p - args), &msg, &body);
	if (e)
		return e;
	e = decode_points(&body, pts, n);
	nn_freemsg(msg);
	return e;
}

void coll_view_rank_free(struct coll_view_rank *r)
{
	coll_tick_free(&r->files);
	coll_tick_free(&r->layers);
}

enum iop_err coll_viewer_rank(struct coll_viewer *v, uint32_t rank, struct coll_view_rank *out)
{
	memset(out, 0, sizeof(*out));
	coll_tick_init(&out->files, 0, 1);
	coll_tick_init(&out->layers, 0, 1);
	uint8_t args[16];
	struct iop_wcur c = iop_wcur_make(args, sizeof args);
	iop_put_varint(&c, rank);
	void *msg;
	struct iop_rcur body;
	enum iop_err e = query(v, COLL_VIEW_RANK, args, (size_t)(c.p - args), &msg, &body);
	if (e)
		return e;
	out->rank.state = iop_get_u8(&body);
	out->rank.node = iop_get_u64le(&body);
	out->rank.excl_ns = iop_get_varint(&body);
	out->rank.procs = (uint32_t)iop_get_varint_max(&body, UINT32_MAX);
	out->rank.live = (uint32_t)iop_get_varint_max(&body, UINT32_MAX);
	e = body.err ? IOP_ERR_MALFORMED : coll_tick_decode(&out->files, &body);
	if (!e)
		e = coll_tick_decode(&out->layers, &body);
	nn_freemsg(msg);
	return e;
}

void coll_view_file_free(struct coll_view_file *f)
{
	free(f->name);
	coll_tick_free(&f->rows);
}

enum iop_err coll_viewer_file(struct coll_viewer *v, uint64_t file, struct coll_view_file *out)
{
	memset(out, 0, sizeof(*out));
	coll_tick_init(&out->rows, 0, 1);
	uint8_t args[8];
	iop_store_u64le(args, file);
	void *msg;
	struct iop_rcur body;
	enum iop_err e = query(v, COLL_VIEW_FILE, args, sizeof args, &msg, &body);
	if (e)
		return e;
	uint64_t len = iop_get_varint_max(&body, IOP_NAME_MAX);
	const uint8_t *text = iop_get_bytes(&body, len);
	e = body.err ? IOP_ERR_MALFORMED : IOP_OK;
	if (!e && len && !(out->name = strndup((const char *)text, len)))
		e = IOP_ERR_NOMEM;
	if (!e)
		e = coll_tick_decode(&out->rows, &body);
	nn_freemsg(msg);
	return e;
}

enum iop_err coll_viewer_alerts(struct coll_viewer *v, json_t **out)
{
	*out = NULL;
	void *msg;
	struct iop_rcur body;
	enum iop_err e = query(v, COLL_VIEW_ALERTS, NULL, 0, &msg, &body);
	if (e)
		return e;
	*out = json_loadb((const char *)body.p, iop_rcur_left(&body), 0, NULL);
	nn_freemsg(msg);
	return *out ? IOP_OK : IOP_ERR_MALFORMED;
}
