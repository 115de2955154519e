/* The ranks' frames into a leaf. See intake.h. */
#include "intake.h"

#include <nanomsg/nn.h>
#include <nanomsg/pipeline.h>
#include <nanomsg/reqrep.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "frame.h"

int coll_intake_open(struct coll_intake *in, const char *dir, struct coll_leaf *leaf, char *why,
                     size_t why_len)
{
	memset(in, 0, sizeof(*in));
	in->pull = in->rep = -1;
	in->leaf = leaf;
	if (strlen(dir) + 16 > 200) {
		snprintf(why, why_len, "the runtime directory's path is too long (set TMPDIR): %s", dir);
		return -1;
	}
	snprintf(in->dir, sizeof in->dir, "%s", dir);
	int maxsize = IOP_FRAME_MAX_LEN + 1, rcvbuf = 4 << 20;
	size_t fdlen = sizeof(int);
	in->pull = nn_socket(AF_SP, NN_PULL);
	in->rep = nn_socket(AF_SP, NN_REP);
	if (in->pull < 0 || in->rep < 0) {
		snprintf(why, why_len, "cannot create sockets: %s", nn_strerror(nn_errno()));
		return -1;
	}
	nn_setsockopt(in->pull, NN_SOL_SOCKET, NN_RCVMAXSIZE, &maxsize, sizeof maxsize);
	nn_setsockopt(in->pull, NN_SOL_SOCKET, NN_RCVBUF, &rcvbuf, sizeof rcvbuf);
	nn_setsockopt(in->rep, NN_SOL_SOCKET, NN_RCVMAXSIZE, &maxsize, sizeof maxsize);
	snprintf(in->leaf_url, sizeof in->leaf_url, "ipc://%s/leaf.ipc", dir);
	snprintf(in->final_url, sizeof in->final_url, "ipc://%s/final.ipc", dir);
	if (nn_bind(in->pull, in->leaf_url) < 0) {
		snprintf(why, why_len, "cannot listen for the ranks at %s: %s", in->leaf_url,
		         nn_strerror(nn_errno()));
		return -1;
	}
	if (nn_bind(in->rep, in->final_url) < 0) {
		snprintf(why, why_len, "cannot listen for last frames at %s: %s", in->final_url,
		         nn_strerror(nn_errno()));
		return -1;
	}
	if (coll_spool_open(&in->spool, in->final_url, why, why_len))
		return -1;
	if (nn_getsockopt(in->pull, NN_SOL_SOCKET, NN_RCVFD, &in->pull_fd, &fdlen) < 0 ||
	    nn_getsockopt(in->rep, NN_SOL_SOCKET, NN_RCVFD, &in->rep_fd, &fdlen) < 0) {
		snprintf(why, why_len, "cannot poll sockets: %s", nn_strerror(nn_errno()));
		return -1;
	}
	return 0;
}

void coll_intake_close(struct coll_intake *in)
{
	if (in->pull >= 0)
		nn_close(in->pull);
	if (in->rep >= 0)
		nn_close(in->rep);
	in->pull = in->rep = -1;
	if (in->leaf_url[0])
		unlink(in->leaf_url + 6);
	if (in->final_url[0])
		unlink(in->final_url + 6);
	coll_spool_close(&in->spool);
}

static void take_spool(struct coll_intake *in, uint64_t now_ns, uint64_t hold_ns);

/* A frame from the sockets (image_ns 0) or the spool (its file's image
 * start, leaf.h coll_leaf_frame_spooled) into the leaf. */
static void take(struct coll_intake *in, const uint8_t *buf, size_t len, uint64_t image_ns)
{
	uint64_t now = iop_real_ns();
	enum iop_err e;
	if (image_ns) {
		e = coll_leaf_frame_spooled(in->leaf, buf, len, image_ns, now);
	} else {
		/* a process's next image: its last one's frames may be spooled */
		if (coll_leaf_frame_restarts(in->leaf, buf, len))
			take_spool(in, now, 0);
		e = coll_leaf_frame(in->leaf, buf, len, now);
	}
	if (e == IOP_OK && in->on_frame)
		in->on_frame(in->on_frame_arg, buf, len, now);
	in->last_frame_ns = now;
}

unsigned coll_intake_drain(struct coll_intake *in, unsigned max)
{
	unsigned n = 0;
	for (; n < max; n++) {
		void *msg;
		int len = nn_recv(in->pull, &msg, NN_MSG, NN_DONTWAIT);
		if (len < 0)
			break;
		take(in, msg, (size_t)len, 0);
		nn_freemsg(msg);
	}
	return n;
}

/* The frames before a last frame went over PUSH and may still be on their
 * way: take what the pull socket has first, and unless the last frame is
 * then the next of its process, wait up to 50 ms for more, so the sequence
 * stays in order. The usual case waits for nothing: every process's exit
 * waits for this reply. */
void coll_intake_final(struct coll_intake *in)
{
	void *msg;
	int len = nn_recv(in->rep, &msg, NN_MSG, NN_DONTWAIT);
	if (len < 0)
		return;
	for (int i = 0; i < 10; i++) {
		coll_intake_drain(in, UINT_MAX);
		if (coll_leaf_frame_is_next(in->leaf, msg, (size_t)len))
			break;
		struct pollfd p = {.fd = in->pull_fd, .events = POLLIN};
		if (poll(&p, 1, 5) <= 0)
			break;
	}
	take(in, msg, (size_t)len, 0);
	nn_freemsg(msg);
	nn_send(in->rep, "ok", 2, NN_DONTWAIT);
}

static void take_spooled(void *arg, const uint8_t *buf, size_t len, uint64_t image_ns)
{
	take(arg, buf, len, image_ns ? image_ns : 1);
}

/* A spooled file waits for the frames sent before it while they may come
 * (SPOOL_HOLD_NS): its first frame is not its process's next. */
#define SPOOL_HOLD_NS 500000000ull

static bool spooled_ready(void *arg, const uint8_t *buf, size_t len, uint64_t image_ns)
{
	const struct coll_intake *in = arg;
	return coll_leaf_spool_ready(in->leaf, buf, len, image_ns);
}

static void take_spool(struct coll_intake *in, uint64_t now_ns, uint64_t hold_ns)
{
	coll_spool_take(&in->spool, now_ns, hold_ns, spooled_ready, take_spooled, in);
}

void coll_intake_spool(struct coll_intake *in, uint64_t now_ns, bool now)
{
	if (!now && now_ns < in->next_spool_ns)
		return;
	in->next_spool_ns = now_ns + 100000000ull;
	/* the frames still on their way over the PULL socket come first */
	coll_intake_drain(in, UINT_MAX);
	take_spool(in, now_ns, now ? 0 : SPOOL_HOLD_NS);
}
