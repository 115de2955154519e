/* `iopulse collector --role leaf|mid|root`: one collector of a job's tree,
 * as its own process (docs/collector.md, "The tree"):
 *
 *   leaf  ranks --ipc--> intake -> leaf engine --uplink--> parent
 *   mid   children --downlink--> merge (closes ticks) --uplink--> parent
 *   root  children --downlink--> root engine -> alerts, outputs, recording,
 *                                               viewers (--view, docs/viewer.md)
 *
 * One thread, one poll loop, a self-pipe for signals. SIGTERM or SIGINT
 * (or, for a leaf with --exit-idle, the end of its processes) closes every
 * open tick, sends it up (waiting a bounded time for the acks) or writes
 * the summary, and exits. */
#include "cmd_collector.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "intake.h"
#include "jobcard.h"
#include "leaf.h"
#include "link.h"
#include "root.h"
#include "rootout.h"
#include "sigpipe.h"
#include "run_opts.h"
#include "viewproto.h"

#define SEND_WAIT_NS (3000 * 1000000ull) /* at the end: acks awaited at most this long */

struct node {
	struct run_opts opt;
	uint64_t job_id;
	struct iop_key key;
	char dir[PATH_MAX];
	struct coll_intake in;        /* leaf */
	struct coll_leaf *leaf;       /* leaf */
	struct coll_downlink *down;   /* mid, root */
	struct coll_root *merge;      /* mid, root */
	struct coll_uplink *up;       /* leaf, mid */
	struct coll_rootout out;      /* root */
	char view[PATH_MAX + 16];     /* root: the viewers' default ipc address, to unlink */
	bool out_open, stop;
};

static int sig_fd = -1; /* coll_sigpipe's read end */

static int fail(const char *what, const char *detail)
{
	fprintf(stderr, "iopulse collector: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
	return 2;
}

static int job_from(struct node *n)
{
	char err[512];
	if (coll_jobcard_key(n->opt.card, &n->job_id, &n->key, err, sizeof err) != IOP_OK)
		return fail(err, NULL);
	return 0;
}

/* ---- the engines' callbacks ---- */

static void up_delta(void *arg, struct coll_delta *d)
{
	struct node *n = arg;
	(void)coll_uplink_send(n->up, d);
}

static void up_closed(void *arg, const struct coll_delta *d, const struct coll_state *s)
{
	(void)s;
	struct node *n = arg;
	(void)coll_uplink_send(n->up, d);
}

static void child_delta(void *arg, uint64_t sender, struct coll_delta *d)
{
	struct node *n = arg;
	(void)coll_root_delta_from(n->merge, sender, d); /* d is decoded afresh next */
}

static void advance(struct node *n, uint64_t now, bool flush)
{
	if (n->leaf) {
		coll_intake_spool(&n->in, now, flush); /* common/spool.h */
		coll_leaf_advance(n->leaf, now, flush, up_delta, n);
	}
	if (n->merge)
		coll_root_advance(n->merge, now, flush, n->up ? up_closed : coll_rootout_tick,
		                  n->up ? (void *)n : (void *)&n->out);
}

/* ---- set-up ---- */

static int open_leaf(struct node *n, uint64_t now)
{
	if (n->opt.dir) {
		snprintf(n->dir, sizeof n->dir, "%s", n->opt.dir);
	} else {
		char host[256] = "";
		const char *tmp = getenv("TMPDIR");
		gethostname(host, sizeof host - 1);
		snprintf(n->dir, sizeof n->dir, "%s/iopulse-%016" PRIx64 "-%s",
		         tmp && *tmp ? tmp : "/tmp", n->job_id, host);
	}
	if (mkdir(n->dir, 0700) < 0 && errno != EEXIST)
		return fail("cannot make the socket directory", strerror(errno));
	struct coll_leaf_cfg lc;
	coll_leaf_cfg_default(&lc);
	lc.tick_ns = n->opt.tick_ns;
	lc.job_id = n->job_id;
	lc.key = n->key;
	if (coll_leaf_new(&lc, now, &n->leaf) != IOP_OK)
		return fail("out of memory", NULL);
	char why[PATH_MAX + 128];
	if (coll_intake_open(&n->in, n->dir, n->leaf, why, sizeof why))
		return fail(why, NULL);
	return 0;
}

/* --view, else ipc://$TMPDIR/iopulse-JOB-view.ipc. */
static int serve_viewers(struct node *n)
{
	const char *url = n->opt.view;
	if (!url) {
		const char *tmp = getenv("TMPDIR");
		snprintf(n->view, sizeof n->view, "ipc://%s/iopulse-%016" PRIx64 "-view.ipc",
		         tmp && *tmp ? tmp : "/tmp", n->job_id);
		url = n->view;
	}
	const char *urls[] = {url, NULL};
	if (coll_rootout_serve(&n->out, urls, n->job_id, &n->key) != IOP_OK) {
		n->view[0] = 0;
		return fail("cannot serve viewers at", url);
	}
	return 0;
}

static int open_node(struct node *n)
{
	int rc = job_from(n);
	if (rc)
		return rc;
	uint64_t now = iop_real_ns();
	if (n->opt.role == ROLE_LEAF && (rc = open_leaf(n, now)))
		return rc;
	if (n->opt.role != ROLE_LEAF) {
		const char *bad = NULL;
		if (coll_downlink_new(n->opt.listens, n->opt.n_listens, n->job_id, &n->key, &n->down,
		                      &bad) != IOP_OK)
			return fail("cannot listen", bad);
		struct coll_root_cfg rc_;
		coll_root_cfg_default(&rc_, n->opt.tick_ns);
		if (n->opt.history_bytes)
			rc_.history.max_bytes = n->opt.history_bytes;
		/* each level waits a little longer than the one below */
		rc_.grace_ns += n->opt.role == ROLE_MID ? 150000000ull : COLL_ROOT_REMOTE_SLACK_NS;
		rc_.no_state = n->opt.role == ROLE_MID;
		if (coll_root_new(&rc_, now, &n->merge) != IOP_OK)
			return fail("out of memory", NULL);
	}
	if (n->opt.role != ROLE_ROOT) {
		struct coll_uplink_cfg uc = {.url = n->opt.parent, .job_id = n->job_id, .key = n->key};
		if (coll_uplink_new(&uc, &n->up) != IOP_OK)
			return fail("cannot connect to the parent", n->opt.parent);
	} else {
		if ((rc = coll_rootout_open(&n->out, &n->opt, "iopulse collector")))
			return rc;
		n->out_open = true;
		struct coll_job_info job = {.id = n->job_id, .start_ns = now, .command = "",
		                            .tick_ns = n->opt.tick_ns,
		                            .summary_files = n->opt.summary_files};
		if ((rc = coll_rootout_start(&n->out, &job, coll_root_state(n->merge))))
			return rc;
		if ((rc = serve_viewers(n)))
			return rc;
	}
	static const int sigs[] = {SIGTERM, SIGINT, SIGHUP, SIGUSR1};
	if ((sig_fd = coll_sigpipe_open(sigs, sizeof sigs / sizeof *sigs)) < 0)
		return fail("cannot make a pipe", strerror(errno));
	return 0;
}

static void close_node(struct node *n)
{
	if (n->leaf) {
		coll_intake_close(&n->in);
		if (!n->opt.dir)
			rmdir(n->dir);
	}
	coll_leaf_free(n->leaf);
	coll_downlink_free(n->down);
	coll_root_free(n->merge);
	coll_uplink_free(n->up);
	if (n->out_open)
		coll_rootout_close(&n->out);
	char pub[sizeof n->view + 8];
	if (n->view[0] && coll_view_pub_addr(n->view, pub, sizeof pub) == IOP_OK) {
		unlink(n->view + 6);
		unlink(pub + 6);
	}
}

/* ---- the loop ---- */

static void on_signals(struct node *n, uint64_t now)
{
	unsigned char sig[64];
	ssize_t k = coll_sigpipe_read(sig, sizeof sig);
	for (ssize_t i = 0; i < k; i++) {
		if (sig[i] == SIGUSR1 && n->out_open)
			coll_headless_status(&n->out.out, coll_root_state(n->merge), now);
		else if (sig[i] != SIGUSR1)
			n->stop = true;
	}
}

/* A leaf with --exit-idle: every process it saw has ended (or is gone)
 * and none came for the idle time. */
static bool leaf_done(const struct node *n, uint64_t now)
{
	if (!n->leaf || !n->opt.exit_idle_ns)
		return false;
	struct coll_leaf_procs p;
	coll_leaf_procs(n->leaf, &p);
	return p.seen && p.ended + p.gone >= p.seen && now - n->in.last_frame_ns >= n->opt.exit_idle_ns;
}

static uint64_t next_close(const struct node *n)
{
	uint64_t next = UINT64_MAX;
	if (n->leaf)
		next = coll_leaf_next_close_ns(n->leaf);
	if (n->merge && coll_root_next_close_ns(n->merge) < next)
		next = coll_root_next_close_ns(n->merge);
	return next;
}

static void loop(struct node *n)
{
	while (!n->stop) {
		uint64_t now = iop_real_ns();
		advance(n, now, false);
		if (n->up)
			coll_uplink_pump(n->up, now);
		if (leaf_done(n, now))
			break;
		uint64_t next = next_close(n);
		int timeout = next > now ? (int)((next - now) / 1000000ull) + 1 : 0;
		if (timeout > 100)
			timeout = 100; /* the uplink's pace, the idle check */
		struct pollfd p[6] = {{.fd = sig_fd, .events = POLLIN},
		                      {.fd = n->leaf ? n->in.pull_fd : -1, .events = POLLIN},
		                      {.fd = n->leaf ? n->in.rep_fd : -1, .events = POLLIN},
		                      {.fd = n->down ? coll_downlink_fd(n->down) : -1, .events = POLLIN},
		                      {.fd = n->up ? coll_uplink_fd(n->up) : -1, .events = POLLIN},
		                      {.fd = n->out_open ? coll_rootout_view_fd(&n->out) : -1,
		                       .events = POLLIN}};
		if (poll(p, 6, timeout) < 0 && errno != EINTR)
			break;
		if (p[0].revents & POLLIN)
			on_signals(n, iop_real_ns());
		if (p[1].revents & POLLIN)
			coll_intake_drain(&n->in, 4096);
		if (p[2].revents & POLLIN)
			coll_intake_final(&n->in);
		if (p[3].revents & POLLIN)
			coll_downlink_pump(n->down, 256, child_delta, n);
		if (n->out_open)
			coll_rootout_view_pump(&n->out);
	}
}

/* Closes every open tick and sends it up (bounded wait for the acks), or
 * writes the root's summary. */
static void finish(struct node *n)
{
	uint64_t now = iop_real_ns();
	if (n->down)
		coll_downlink_pump(n->down, UINT32_MAX, child_delta, n);
	advance(n, now, true);
	if (n->up) {
		uint64_t until = now + SEND_WAIT_NS;
		while (!coll_uplink_idle(n->up) && iop_real_ns() < until) {
			coll_uplink_pump(n->up, iop_real_ns());
			struct pollfd p = {.fd = coll_uplink_fd(n->up), .events = POLLIN};
			poll(&p, 1, 20);
		}
		struct coll_uplink_stats st;
		coll_uplink_stats(n->up, &st);
		if (st.waiting)
			fprintf(stderr, "iopulse collector: %u tick deltas not acknowledged by %s\n",
			        st.waiting, n->opt.parent);
	}
	if (n->out_open)
		coll_rootout_finish(&n->out, now);
}

int coll_cmd_collector(int argc, char **argv)
{
	struct node n = {.in = {.pull = -1, .rep = -1}};
	int rc = coll_collector_opts_parse(&n.opt, argc, argv);
	if (rc)
		return rc < 0 ? 0 : rc;
	if ((rc = open_node(&n))) {
		close_node(&n);
		return rc;
	}
	loop(&n);
	finish(&n);
	close_node(&n);
	return 0;
}
