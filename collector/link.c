/* Tick deltas up the tree, acknowledged and resent. See link.h. */
#include "link.h"

#include <errno.h>
#include <nanomsg/nn.h>
#include <nanomsg/reqrep.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "names.h"
#include "state.h"

#define ACK_MAGIC   0x4b504f49u /* "IOPK" */
#define ACK_VERSION 1
#define ACK_BODY    (4 + 2 + 2 + 8 + 8 + 8)
#define ACK_LEN     (ACK_BODY + IOP_MAC_BYTES)
enum { ACK_OK = 0, ACK_REFUSED = 1 };

#define RESEND_MS   1000
#define MAX_MESSAGE ((size_t)1 << 30)

struct ack {
	uint16_t status;
	uint64_t job_id, instance, seq;
};

static void ack_encode(const struct ack *a, const struct iop_key *key, uint8_t out[ACK_LEN])
{
	struct iop_wcur c = iop_wcur_make(out, ACK_BODY);
	iop_put_u32le(&c, ACK_MAGIC);
	iop_put_u16le(&c, ACK_VERSION);
	iop_put_u16le(&c, a->status);
	iop_put_u64le(&c, a->job_id);
	iop_put_u64le(&c, a->instance);
	iop_put_u64le(&c, a->seq);
	(void)iop_mac(key, out, ACK_BODY, out + ACK_BODY);
}

static bool ack_decode(const uint8_t *buf, size_t len, const struct iop_key *key, struct ack *a)
{
	if (len != ACK_LEN || !iop_mac_ok(key, buf, ACK_BODY, buf + ACK_BODY))
		return false;
	struct iop_rcur c = iop_rcur_make(buf, ACK_BODY);
	if (iop_get_u32le(&c) != ACK_MAGIC || iop_get_u16le(&c) != ACK_VERSION)
		return false;
	a->status = iop_get_u16le(&c);
	a->job_id = iop_get_u64le(&c);
	a->instance = iop_get_u64le(&c);
	a->seq = iop_get_u64le(&c);
	return !c.err;
}

static uint64_t random_id(void)
{
	struct iop_key k;
	uint64_t id = 0;
	while (!id) {
		if (iop_key_generate(&k) != IOP_OK)
			return 1;
		memcpy(&id, k.b, sizeof id);
	}
	return id;
}

/* ---- uplink ---- */

struct msg {
	uint8_t *buf;
	size_t len;
	uint64_t seq;
};

struct coll_uplink {
	struct coll_uplink_cfg cfg;
	int sock, fd;
	struct msg *q; /* ring of cap */
	uint32_t cap, head, n;
	bool in_flight, need_resync;
	uint64_t next_seq;
	int64_t last_t;
	uint64_t tick_ns;
	/* what has gone up, for a resync */
	struct coll_names names;
	struct coll_ctrset latest;
	struct coll_proc *procs;
	uint32_t n_procs, cap_procs;
	struct coll_uplink_stats st;
	uint8_t *enc;
	size_t enc_cap;
};

enum iop_err coll_uplink_new(const struct coll_uplink_cfg *cfg, struct coll_uplink **out)
{
	struct coll_uplink *u = calloc(1, sizeof(*u));
	if (!u)
		return IOP_ERR_NOMEM;
	u->cfg = *cfg;
	if (!u->cfg.max_queue)
		u->cfg.max_queue = 600;
	if (!u->cfg.sender)
		u->cfg.sender = random_id();
	u->cap = u->cfg.max_queue + 2; /* room for a resync past the bound */
	u->q = calloc(u->cap, sizeof(*u->q));
	u->next_seq = 1;
	u->last_t = INT64_MIN;
	coll_names_init(&u->names, 1u << 20, (size_t)256 << 20);
	size_t fdlen = sizeof(int);
	int resend = RESEND_MS, maxsize = -1;
	u->sock = nn_socket(AF_SP, NN_REQ);
	if (!u->q || u->sock < 0 ||
	    nn_setsockopt(u->sock, NN_REQ, NN_REQ_RESEND_IVL, &resend, sizeof resend) < 0 ||
	    nn_setsockopt(u->sock, NN_SOL_SOCKET, NN_RCVMAXSIZE, &maxsize, sizeof maxsize) < 0 ||
	    nn_connect(u->sock, cfg->url) < 0 ||
	    nn_getsockopt(u->sock, NN_SOL_SOCKET, NN_RCVFD, &u->fd, &fdlen) < 0) {
		enum iop_err e = u->q && u->sock >= 0 ? IOP_ERR_INVAL : IOP_ERR_NOMEM;
		coll_uplink_free(u);
		return e;
	}
	*out = u;
	return IOP_OK;
}

void coll_uplink_free(struct coll_uplink *u)
{
	if (!u)
		return;
	if (u->sock >= 0)
		nn_close(u->sock);
	for (uint32_t i = 0; u->q && i < u->n; i++)
		free(u->q[(u->head + i) % u->cap].buf);
	free(u->q);
	coll_names_free(&u->names);
	coll_ctrset_free(&u->latest);
	free(u->procs);
	free(u->enc);
	free(u);
}

/* Remembers what went up: names, the latest counters, process states. */
static void remember(struct coll_uplink *u, const struct coll_delta *d)
{
	for (uint32_t i = 0; i < d->n_names; i++) {
		bool added;
		(void)coll_names_add(&u->names, d->names[i].hash, d->names[i].kind, d->names[i].text,
		                     d->names[i].len, &added);
	}
	(void)coll_ctrset_add_all(&u->latest, d->ctr.v, d->ctr.n, COLL_STATE_MAX_COUNTERS);
	for (uint32_t i = 0; i < d->n_procs; i++) {
		const struct coll_proc *p = &d->procs[i];
		uint32_t k = u->n_procs;
		while (k-- > 0)
			if (u->procs[k].node == p->node && u->procs[k].pid == p->pid)
				break;
		if (k == UINT32_MAX) {
			if (u->n_procs == u->cap_procs) {
				uint32_t cap = u->cap_procs ? u->cap_procs * 2 : 64;
				struct coll_proc *v = realloc(u->procs, cap * sizeof(*v));
				if (!v)
					continue;
				u->procs = v;
				u->cap_procs = cap;
			}
			k = u->n_procs++;
		}
		u->procs[k] = *p;
	}
	if (d->tick.t > u->last_t)
		u->last_t = d->tick.t;
	u->tick_ns = d->tick.tick_ns;
}

static enum iop_err enqueue(struct coll_uplink *u, const struct coll_delta *d)
{
	struct coll_delta_hdr h = {.job_id = u->cfg.job_id, .sender = u->cfg.sender,
	                           .seq = u->next_seq};
	size_t len;
	enum iop_err e = coll_delta_encode(d, &h, &u->cfg.key, &u->enc, &u->enc_cap, &len);
	if (e)
		return e;
	uint8_t *copy = malloc(len);
	if (!copy)
		return IOP_ERR_NOMEM;
	memcpy(copy, u->enc, len);
	if (u->n == u->cap) {
		/* Past the bound: the oldest waiting delta goes (not the one in
		 * flight); its counters come back with the resync. */
		uint32_t victim = u->in_flight ? 1 : 0;
		struct msg *m = &u->q[(u->head + victim) % u->cap];
		free(m->buf);
		for (uint32_t i = victim; i + 1 < u->n; i++)
			u->q[(u->head + i) % u->cap] = u->q[(u->head + i + 1) % u->cap];
		u->n--;
		u->st.dropped++;
		u->need_resync = true;
	}
	u->q[(u->head + u->n) % u->cap] = (struct msg){copy, len, u->next_seq++};
	u->n++;
	u->st.queued++;
	return IOP_OK;
}

enum iop_err coll_uplink_send(struct coll_uplink *u, const struct coll_delta *d)
{
	remember(u, d);
	return enqueue(u, d);
}

/* Every name, the latest counters and the process states, in one delta
 * of no rows. */
static void queue_resync(struct coll_uplink *u)
{
	struct coll_delta r;
	coll_delta_init(&r, u->last_t == INT64_MIN ? 0 : u->last_t,
	                u->tick_ns ? u->tick_ns : 1000000000ull);
	enum iop_err e = IOP_OK;
	for (uint32_t i = 0; !e && i < u->names.n; i++) {
		const struct coll_name *n = &u->names.v[i];
		struct coll_name rec;
		char hex[COLL_FILE_FS_HEX + 1];
		e = coll_delta_add_name(&r, n->hash, n->kind, n->text, n->len);
		if (!e && coll_names_fs_record(&u->names, n, &rec, hex))
			e = coll_delta_add_name(&r, rec.hash, rec.kind, rec.text, rec.len);
	}
	for (uint32_t i = 0; !e && i < u->latest.n; i++)
		e = coll_delta_add_counter(&r, &u->latest.v[i]);
	for (uint32_t i = 0; !e && i < u->n_procs; i++)
		e = coll_delta_add_proc(&r, &u->procs[i]);
	if (!e && !(e = enqueue(u, &r))) {
		u->st.resyncs++;
		u->need_resync = false;
	}
	coll_delta_free(&r);
}

int coll_uplink_fd(const struct coll_uplink *u)
{
	return u->fd;
}

static void pop(struct coll_uplink *u)
{
	free(u->q[u->head].buf);
	u->head = (u->head + 1) % u->cap;
	u->n--;
	u->in_flight = false;
}

static void take_acks(struct coll_uplink *u, uint64_t now_ns)
{
	void *reply;
	int len;
	while ((len = nn_recv(u->sock, &reply, NN_MSG, NN_DONTWAIT)) >= 0) {
		struct ack a;
		bool ok = ack_decode(reply, (size_t)len, &u->cfg.key, &a) && a.job_id == u->cfg.job_id;
		nn_freemsg(reply);
		if (!ok || !u->in_flight || !u->n || a.seq != u->q[u->head].seq)
			continue; /* not ours, or an old request's */
		if (a.status != ACK_OK)
			u->st.refused++;
		else
			u->st.acked++;
		if (a.instance != u->st.parent) {
			if (u->st.parent)
				u->need_resync = true; /* a new parent: it lost what it had */
			u->st.parent = a.instance;
		}
		u->st.last_ack_ns = now_ns;
		pop(u);
	}
}

void coll_uplink_pump(struct coll_uplink *u, uint64_t now_ns)
{
	take_acks(u, now_ns);
	if (u->need_resync && u->st.parent)
		queue_resync(u);
	if (u->in_flight || !u->n)
		return;
	struct msg *m = &u->q[u->head];
	if (nn_send(u->sock, m->buf, m->len, NN_DONTWAIT) >= 0)
		u->in_flight = true; /* the socket resends it until answered */
}

bool coll_uplink_idle(const struct coll_uplink *u)
{
	return !u->n && !u->in_flight && !u->need_resync;
}

void coll_uplink_stats(const struct coll_uplink *u, struct coll_uplink_stats *out)
{
	*out = u->st;
	out->waiting = u->n;
}

/* ---- downlink ---- */

struct child {
	uint64_t sender, last_seq;
};

struct coll_downlink {
	int sock, fd;
	uint64_t job_id;
	struct iop_key key;
	struct child *kids;
	uint32_t n_kids, cap_kids;
	struct coll_delta d;
	struct coll_downlink_stats st;
};

enum iop_err coll_downlink_new(const char *const *urls, unsigned n, uint64_t job_id,
                               const struct iop_key *key, struct coll_downlink **out,
                               const char **err_url)
{
	struct coll_downlink *dl = calloc(1, sizeof(*dl));
	if (!dl)
		return IOP_ERR_NOMEM;
	dl->job_id = job_id;
	dl->key = *key;
	dl->st.instance = random_id();
	coll_delta_init(&dl->d, 0, 1000000000ull);
	/* the parent takes its histograms (coll_root_delta_from) and gives
	 * back empty ones: memory of their own, not the decode's arena */
	dl->d.tick.own_hists = true;
	int maxsize = -1;
	size_t fdlen = sizeof(int);
	dl->sock = nn_socket(AF_SP, NN_REP);
	if (dl->sock < 0 ||
	    nn_setsockopt(dl->sock, NN_SOL_SOCKET, NN_RCVMAXSIZE, &maxsize, sizeof maxsize) < 0 ||
	    nn_getsockopt(dl->sock, NN_SOL_SOCKET, NN_RCVFD, &dl->fd, &fdlen) < 0) {
		coll_downlink_free(dl);
		return IOP_ERR_NOMEM;
	}
	for (unsigned i = 0; i < n; i++) {
		if (nn_bind(dl->sock, urls[i]) < 0) {
			if (err_url)
				*err_url = urls[i];
			coll_downlink_free(dl);
			return IOP_ERR_INVAL;
		}
	}
	*out = dl;
	return IOP_OK;
}

void coll_downlink_free(struct coll_downlink *dl)
{
	if (!dl)
		return;
	if (dl->sock >= 0)
		nn_close(dl->sock);
	coll_delta_free(&dl->d);
	free(dl->kids);
	free(dl);
}

int coll_downlink_fd(const struct coll_downlink *dl)
{
	return dl->fd;
}

/* The child's record, added when new; NULL when out of memory. */
static struct child *child_of(struct coll_downlink *dl, uint64_t sender)
{
	for (uint32_t i = 0; i < dl->n_kids; i++)
		if (dl->kids[i].sender == sender)
			return &dl->kids[i];
	if (dl->n_kids == dl->cap_kids) {
		uint32_t cap = dl->cap_kids ? dl->cap_kids * 2 : 16;
		struct child *v = realloc(dl->kids, cap * sizeof(*v));
		if (!v)
			return NULL;
		dl->kids = v;
		dl->cap_kids = cap;
	}
	dl->kids[dl->n_kids] = (struct child){sender, 0};
	return &dl->kids[dl->n_kids++];
}

unsigned coll_downlink_pump(struct coll_downlink *dl, unsigned max,
                            void (*fn)(void *arg, uint64_t sender, struct coll_delta *d),
                            void *arg)
{
	unsigned taken = 0;
	for (; taken < max; taken++) {
		void *req;
		int len = nn_recv(dl->sock, &req, NN_MSG, NN_DONTWAIT);
		if (len < 0)
			break;
		dl->st.received++;
		struct coll_delta_hdr h = {0};
		enum iop_err e = coll_delta_decode(&dl->d, &h, req, (size_t)len, &dl->key, dl->job_id);
		nn_freemsg(req);
		struct ack a = {.status = e ? ACK_REFUSED : ACK_OK, .job_id = dl->job_id,
		                .instance = dl->st.instance, .seq = h.seq};
		if (e) {
			dl->st.rejected++;
		} else {
			struct child *k = child_of(dl, h.sender);
			if (k && h.seq <= k->last_seq) {
				dl->st.duplicates++;
			} else {
				if (k)
					k->last_seq = h.seq;
				dl->st.applied++;
				fn(arg, h.sender, &dl->d);
			}
		}
		uint8_t out[ACK_LEN];
		ack_encode(&a, &dl->key, out);
		(void)nn_send(dl->sock, out, sizeof out, NN_DONTWAIT);
	}
	return taken;
}

void coll_downlink_stats(const struct coll_downlink *dl, struct coll_downlink_stats *out)
{
	*out = dl->st;
	out->children = dl->n_kids;
}
