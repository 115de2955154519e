/* `iopulse run`: makes the job key and card, starts the command with the
 * shim preloaded, and runs the node's leaf and the root in this process:
 *
 *   ranks --PUSH ipc://<dir>/leaf.ipc--> leaf --deltas--> root --> alerts,
 *   ranks --REQ  ipc://<dir>/final.ipc-> (last frames)         headless output,
 *                                                              recording,
 *   viewers (iopulse top) <--ipc://<dir>/view.ipc, tcp:PORT--  each tick, queries
 *
 * One thread, one poll loop over the two sockets and a self-pipe for
 * signals. When the command has exited, the loop goes on until every
 * process it saw has sent its last frame (or a short bound passes), then
 * closes every tick, prints the summary and exits with the command's
 * status. */
#include "run.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <nanomsg/nn.h>
#include <nanomsg/pipeline.h>
#include <nanomsg/reqrep.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "alerts.h"
#include "auth.h"
#include "clock.h"
#include "frame.h"
#include "intake.h"
#include "jobcard.h"
#include "leaf.h"
#include "link.h"
#include "names.h"
#include "netenv.h"
#include "root.h"
#include "rootout.h"
#include "sigpipe.h"
#include "run_opts.h"
#include "viewproto.h"

#define DRAIN_IDLE_NS (300 * 1000000ull) /* after the command: quiet this long, done */
#define DRAIN_MAX_NS  (3000 * 1000000ull) /* after the command: at most this long */
#define DRAIN_MAX_REMOTE_NS (8000 * 1000000ull) /* the same with leaves on other nodes */
#define REMOTE_IDLE_NS (1500 * 1000000ull)     /* their last deltas: quiet this long, done */

struct run {
	struct run_opts opt;
	struct coll_jobcard card;
	char dir[PATH_MAX], card_path[1024];
	char command[1024];
	struct coll_intake in; /* this node's ranks */
	struct coll_downlink *down; /* leaves of other nodes, or NULL */
	char parent_url[128];       /* where they reach it */
	char view_ipc[PATH_MAX + 16], view_tcp[128]; /* where viewers reach the root */
	struct coll_leaf *leaf;
	struct coll_root *root;
	struct coll_rootout out;
	pid_t child;
	int child_status;
	bool child_done;
	bool spool_after_exit; /* the spool was taken since the command exited */
	uint64_t child_done_ns, next_status_ns, last_remote_ns;
	const struct coll_run_view *view; /* the dashboard (tui/), when shown */
	void *v;
};

static int sig_fd = -1; /* coll_sigpipe's read end */

static int fail(const char *what, const char *detail)
{
	fprintf(stderr, "iopulse run: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
	return 2;
}

/* The shim: $IOPULSE_SHIM, else next to this binary in the build tree
 * (../pmpi-shim/libiopulse.so) or installed (../lib/iopulse/libiopulse.so). */
static bool find_shim(char *out, size_t len)
{
	const char *env = getenv("IOPULSE_SHIM");
	if (env) {
		snprintf(out, len, "%s", env);
		return access(out, R_OK) == 0;
	}
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0)
		return false;
	exe[n] = 0;
	char *slash = strrchr(exe, '/');
	if (!slash)
		return false;
	*slash = 0;
	static const char *const rel[] = {"../pmpi-shim/libiopulse.so", "../lib/iopulse/libiopulse.so",
	                                  "libiopulse.so"};
	for (size_t i = 0; i < sizeof rel / sizeof *rel; i++) {
		char cand[PATH_MAX + 64], real[PATH_MAX];
		snprintf(cand, sizeof cand, "%s/%s", exe, rel[i]);
		if (access(cand, R_OK) == 0 && realpath(cand, real) && strlen(real) < len) {
			memcpy(out, real, strlen(real) + 1);
			return true;
		}
	}
	return false;
}

/* The tcp port leaves on other nodes reach the root at: the first free one
 * from 7411 (or --listen's), announced to the ranks as the host's first
 * non-loopback IPv4 address. Without one, the job is monitored on this
 * node only, with a notice. */
static void open_downlink(struct run *r)
{
	char url[128], host[64] = "127.0.0.1";
	if (r->opt.listen) {
		const char *urls[] = {r->opt.listen};
		const char *bad;
		if (coll_downlink_new(urls, 1, r->card.job_id, &r->card.key, &r->down, &bad) != IOP_OK) {
			fprintf(stderr, "iopulse run: warning: cannot listen at %s for other nodes' "
			                "collectors: %s; monitoring this node only\n", bad ? bad : "",
			        nn_strerror(nn_errno()));
			return;
		}
		snprintf(r->parent_url, sizeof r->parent_url, "%s", r->opt.listen);
		return;
	}
	coll_first_ipv4(host, sizeof host);
	for (int port = 7411; port < 7451 && !r->down; port++) {
		snprintf(url, sizeof url, "tcp://*:%d", port);
		const char *urls[] = {url};
		if (coll_downlink_new(urls, 1, r->card.job_id, &r->card.key, &r->down, NULL) == IOP_OK)
			snprintf(r->parent_url, sizeof r->parent_url, "tcp://%s:%d", host, port);
	}
	if (!r->down)
		fprintf(stderr, "iopulse run: warning: no free tcp port in 7411-7450 for other nodes' "
		                "collectors; monitoring this node only\n");
}

/* Viewers (docs/viewer.md) reach the root at ipc://<dir>/view.ipc on this
 * host and, when other nodes' collectors can reach it, over tcp: --view's
 * address, else the first free port from 7461 whose next one (the ticks)
 * is free too, announced at the downlink's host. The card's root is the
 * tcp address when there is one. Without any, the job runs unwatched. */
static void open_viewsrv(struct run *r)
{
	snprintf(r->view_ipc, sizeof r->view_ipc, "ipc://%s/view.ipc", r->dir);
	const char *urls[] = {r->view_ipc, r->opt.view, NULL};
	if (r->opt.view) {
		if (coll_rootout_serve(&r->out, urls, r->card.job_id, &r->card.key) == IOP_OK)
			snprintf(r->view_tcp, sizeof r->view_tcp, "%s", r->opt.view);
		else
			fprintf(stderr, "iopulse run: warning: cannot serve viewers at %s: %s\n",
			        r->opt.view, nn_strerror(nn_errno()));
	} else if (r->down) {
		char host[64] = "127.0.0.1", any[64];
		coll_first_ipv4(host, sizeof host);
		for (int port = 7461; port < 7499 && !r->out.view; port += 2) {
			snprintf(any, sizeof any, "tcp://*:%d", port);
			urls[1] = any;
			if (coll_rootout_serve(&r->out, urls, r->card.job_id, &r->card.key) == IOP_OK)
				snprintf(r->view_tcp, sizeof r->view_tcp, "tcp://%s:%d", host, port);
		}
	}
	urls[1] = NULL;
	if (!r->out.view && coll_rootout_serve(&r->out, urls, r->card.job_id, &r->card.key) != IOP_OK)
		fprintf(stderr, "iopulse run: warning: cannot serve viewers at %s: %s; "
		                "'iopulse top' cannot watch this job\n", r->view_ipc,
		        nn_strerror(nn_errno()));
}

static int setup_job(struct run *r)
{
	if (iop_auth_init() != IOP_OK || iop_key_generate(&r->card.key) != IOP_OK)
		return fail("cannot make a job key (libsodium)", NULL);
	struct iop_key idsrc;
	if (iop_key_generate(&idsrc) != IOP_OK)
		return fail("cannot make a job id", NULL);
	memcpy(&r->card.job_id, idsrc.b, sizeof r->card.job_id);
	const char *tmp = getenv("TMPDIR");
	snprintf(r->dir, sizeof r->dir, "%s/iopulse-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(r->dir))
		return fail("cannot make a runtime directory", strerror(errno));
	char why[PATH_MAX + 128];
	if (coll_intake_open(&r->in, r->dir, r->leaf, why, sizeof why))
		return fail(why, NULL);
	memcpy(r->card.leaf, r->in.leaf_url, strlen(r->in.leaf_url) + 1);
	open_downlink(r);
	open_viewsrv(r);
	gethostname(r->card.host, sizeof r->card.host - 1);
	const char *root = r->view_tcp[0] ? r->view_tcp : r->out.view ? r->view_ipc : "";
	if (strlen(root) < sizeof r->card.root)
		memcpy(r->card.root, root, strlen(root) + 1);
	snprintf(r->card.command, sizeof r->card.command, "%s", r->command);
	if (r->opt.record_path) /* `iopulse top` shows REC */
		snprintf(r->card.record, sizeof r->card.record, "%s", r->opt.record_path);
	r->card.start_ns = iop_real_ns();
	r->card.pid = getpid();
	if (coll_jobcard_write(&r->card, r->card_path, sizeof r->card_path) != IOP_OK) {
		fprintf(stderr, "iopulse run: warning: cannot write the job card in ~/.iopulse/jobs "
		                "(%s); 'iopulse jobs' will not list this job\n", strerror(errno));
		r->card_path[0] = 0;
	}
	return 0;
}

static void join_command(struct run *r, char **argv)
{
	size_t off = 0;
	for (char **a = argv; *a && off < sizeof r->command - 1; a++)
		off += (size_t)snprintf(r->command + off, sizeof r->command - off, "%s%s",
		                        a == argv ? "" : " ", *a);
	/* it goes into the job card, the recording and the summary, as JSON */
	coll_text_make_utf8(r->command, strlen(r->command));
}

/* LD_PRELOAD for the command: the shim, then also (below it), then what
 * was there; a sanitizer runtime already listed stays first, where it must
 * be (sanitizer builds of the shim, tests). NULL when out of memory. */
static char *preload_list(const char *shim, const char *also, const char *old)
{
	size_t len = strlen(shim) + (also ? strlen(also) : 0) + (old ? strlen(old) : 0) + 4;
	char *out = malloc(len), *rest = malloc(len), *copy = old ? strdup(old) : NULL;
	if (!out || !rest || (old && !copy)) {
		free(out);
		free(rest);
		free(copy);
		return NULL;
	}
	out[0] = rest[0] = 0;
	char *save = NULL;
	for (char *tok = copy ? strtok_r(copy, ": ", &save) : NULL; tok; tok = strtok_r(NULL, ": ", &save)) {
		char *dst = strstr(tok, "libasan") || strstr(tok, "libubsan") ? out : rest;
		if (*dst)
			strcat(dst, ":");
		strcat(dst, tok);
	}
	if (*out)
		strcat(out, ":");
	strcat(out, shim);
	if (also) {
		strcat(out, ":");
		strcat(out, also);
	}
	if (*rest) {
		strcat(out, ":");
		strcat(out, rest);
	}
	free(rest);
	free(copy);
	return out;
}

/* In the parent, before the fork: the ranks' environment, set in this
 * process's own (iopulse starts nothing else), and the command's argv
 * (NULL: r->opt.cmd). Nothing of it is left to the child: a child of a
 * process with threads (nanomsg's) may only call async-signal-safe
 * functions before it execs, and a malloc there waited forever for a
 * lock another thread held at the fork (ASan's allocator, seen twice). */
static char **cmd_argv; /* what command_env made */

static char **command_env(struct run *r, const char *shim)
{
	char key[IOP_KEY_HEX + 1], job[17], exe[PATH_MAX];
	iop_key_to_hex(&r->card.key, key);
	snprintf(job, sizeof job, "%016" PRIx64, r->card.job_id);
	char *pre = preload_list(shim, r->opt.also_preload, getenv("LD_PRELOAD"));
	setenv("IOPULSE_ADDR", r->in.leaf_url, 1);
	setenv("IOPULSE_KEY", key, 1);
	setenv("IOPULSE_JOB", job, 1);
	setenv("IOPULSE_FINAL_ADDR", r->in.final_url, 1);
	if (pre)
		setenv("LD_PRELOAD", pre, 1);
	free(pre);
	/* the shims' runs of calls stay within a tick (docs/shim.md) */
	char tick[32];
	snprintf(tick, sizeof tick, "%" PRIu64, (uint64_t)(r->opt.tick_ns / 1000000u));
	setenv("IOPULSE_TICK_MS", tick, 1);
	/* Ranks on other nodes: the first on each starts the node's leaf
	 * (docs/collector.md, "The tree"), which reaches this root. */
	if (r->down) {
		setenv("IOPULSE_PARENT", r->parent_url, 1);
		setenv("IOPULSE_ROOT_HOST", r->card.host, 1);
		ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
		if (n > 0) {
			exe[n] = 0;
			setenv("IOPULSE_EXE", exe, 1);
		}
	}
	char **argv = r->down ? coll_forward_argv(r->opt.cmd) : NULL;
	if (r->down && !argv)
		coll_forward_env();
	return argv;
}

/* In the child: async-signal-safe calls only, then the command. in and
 * out (or -1): /dev/null and the dashboard's output file. */
static void exec_command(struct run *r, char **argv, int in, int out)
{
	if (in >= 0 && out >= 0) /* the dashboard owns the terminal */
		dup2(in, 0), dup2(out, 1), dup2(out, 2);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	execvp(r->opt.cmd[0], argv ? argv : r->opt.cmd);
	int e = errno;
	static const char what[] = "iopulse run: cannot run the command: ";
	const char *why = e == ENOENT ? "not found\n" : "not executable\n";
	(void)!write(2, what, sizeof what - 1);
	(void)!write(2, r->opt.cmd[0], strlen(r->opt.cmd[0]));
	(void)!write(2, ": ", 2);
	(void)!write(2, why, strlen(why));
	_exit(e == ENOENT ? 127 : 126);
}

/* ---- the engine's callbacks ---- */

static void on_frame(void *arg, const uint8_t *buf, size_t len, uint64_t now_ns)
{
	struct run *r = arg;
	coll_record_events(r->out.rec, now_ns, buf, len);
}

static void on_root_tick(void *arg, const struct coll_delta *d, const struct coll_state *s)
{
	struct run *r = arg;
	coll_rootout_tick(&r->out, d, s);
	if (r->v)
		r->view->tick(r->v);
}

/* The run's own leaf, as a child of sender id 0 (a remote one's is random):
 * with no other child, the root closes each tick as this leaf hands it on. */
static void on_leaf_delta(void *arg, struct coll_delta *d)
{
	struct run *r = arg;
	(void)coll_root_delta_from(r->root, 0, d); /* the leaf resets d next */
}

static void on_remote_delta(void *arg, uint64_t sender, struct coll_delta *d)
{
	struct run *r = arg;
	coll_root_remote_children(r->root); /* wait longer for what crosses the network */
	(void)coll_root_delta_from(r->root, sender, d); /* d is decoded afresh next */
	r->last_remote_ns = iop_real_ns();
}

static void advance(struct run *r, uint64_t now, bool flush)
{
	/* last frames left in the spool (common/spool.h); once the command
	 * has exited, its processes' are all there */
	coll_intake_spool(&r->in, now, flush || (r->child_done && !r->spool_after_exit));
	r->spool_after_exit = r->child_done;
	coll_leaf_advance(r->leaf, now, flush, on_leaf_delta, r);
	coll_root_advance(r->root, now, flush, on_root_tick, r);
}

/* ---- the loop ---- */

/* The dashboard is shown instead of the human lines; quitting it (or the
 * job's end) gives the terminal back. */
static void view_close(struct run *r, bool quit)
{
	if (!r->v)
		return;
	r->view->close(r->v);
	r->v = NULL;
	r->out.out.text = !r->opt.jsonl;
	if (quit && !r->child_done) { /* `q` ends the session as Ctrl-C does headless */
		kill(r->child, SIGINT);
		r->out.job.interrupted = "q in the dashboard";
	}
}

static void on_signals(struct run *r, uint64_t now)
{
	unsigned char sig[64];
	ssize_t n = coll_sigpipe_read(sig, sizeof sig);
	for (ssize_t i = 0; i < n; i++) {
		switch (sig[i]) {
		case SIGCHLD: {
			int st;
			pid_t p;
			while ((p = waitpid(-1, &st, WNOHANG)) > 0) {
				if (p == r->child) {
					r->child_status = st;
					r->child_done = true;
					r->child_done_ns = now;
				}
			}
			break;
		}
		case SIGUSR1: coll_headless_status(&r->out.out, coll_root_state(r->root), now); break;
		case SIGTERM:
		case SIGINT:
		case SIGHUP:
			if (!r->child_done) {
				kill(r->child, sig[i]);
				if (!r->out.job.interrupted)
					r->out.job.interrupted = sig[i] == SIGINT    ? "SIGINT"
					                         : sig[i] == SIGTERM ? "SIGTERM"
					                                             : "SIGHUP";
			}
			break;
		}
	}
}

/* After the command: every process it started has said goodbye (or
 * went silent), other nodes' leaves have gone quiet, or the bounds passed. */
static bool drained(struct run *r, uint64_t now)
{
	if (!r->child_done)
		return false;
	struct coll_leaf_procs p;
	coll_leaf_procs(r->leaf, &p);
	bool remote = r->last_remote_ns != 0;
	if (now - r->child_done_ns >= (remote ? DRAIN_MAX_REMOTE_NS : DRAIN_MAX_NS))
		return true;
	if (remote && now - r->last_remote_ns < REMOTE_IDLE_NS)
		return false;
	/* Every process it saw said goodbye with its FINAL frame, which the
	 * leaf answers only once the frames sent before it are in, and the
	 * command exited 0: nothing is on its way, no timer to wait for. */
	bool clean = WIFEXITED(r->child_status) && WEXITSTATUS(r->child_status) == 0;
	if (!remote && clean && p.ended >= p.seen)
		return true;
	/* else a process killed before its first frame was read may have
	 * frames still on their way: a short grace for them */
	if (p.ended + p.gone >= p.seen)
		return now - r->child_done_ns >= 20000000ull;
	return now - r->in.last_frame_ns >= DRAIN_IDLE_NS && now - r->child_done_ns >= DRAIN_IDLE_NS;
}

static void loop(struct run *r)
{
	while (true) {
		uint64_t now = iop_real_ns();
		advance(r, now, false);
		if (r->opt.status_every_ns && now >= r->next_status_ns) {
			if (r->next_status_ns)
				coll_headless_status(&r->out.out, coll_root_state(r->root), now);
			r->next_status_ns = now + r->opt.status_every_ns;
		}
		if (drained(r, now))
			return;
		uint64_t next = coll_leaf_next_close_ns(r->leaf);
		uint64_t next_root = coll_root_next_close_ns(r->root);
		if (next_root < next)
			next = next_root;
		if (r->opt.status_every_ns && !r->v && r->next_status_ns < next)
			next = r->next_status_ns;
		int timeout = next > now ? (int)((next - now) / 1000000ull) + 1 : 0;
		if (r->child_done && timeout > 20)
			timeout = 20;
		struct pollfd p[6] = {{.fd = r->in.pull_fd, .events = POLLIN},
		                      {.fd = r->in.rep_fd, .events = POLLIN},
		                      {.fd = sig_fd, .events = POLLIN},
		                      {.fd = r->down ? coll_downlink_fd(r->down) : -1, .events = POLLIN},
		                      {.fd = r->v ? r->view->input_fd(r->v) : -1, .events = POLLIN},
		                      {.fd = coll_rootout_view_fd(&r->out), .events = POLLIN}};
		if (poll(p, 6, timeout) < 0 && errno != EINTR)
			return;
		if (r->v && !r->view->input(r->v)) /* keys, and resizes (EINTR) */
			view_close(r, true);
		if (p[0].revents & POLLIN)
			coll_intake_drain(&r->in, 4096);
		if (p[1].revents & POLLIN)
			coll_intake_final(&r->in);
		if (p[2].revents & POLLIN)
			on_signals(r, iop_real_ns());
		if (p[3].revents & POLLIN)
			coll_downlink_pump(r->down, 256, on_remote_delta, r);
		coll_rootout_view_pump(&r->out); /* cheap when nothing is pending */
	}
}

static int exit_status(const struct run *r)
{
	int st = r->child_status;
	int rc = WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : 2;
	if (rc == 0 && r->opt.fail_on && r->out.out.worst >= r->opt.fail_on)
		return 3;
	return rc;
}

static void cleanup(struct run *r)
{
	coll_intake_close(&r->in);
	coll_downlink_free(r->down);
	if (r->card_path[0])
		unlink(r->card_path);
	coll_leaf_free(r->leaf);
	coll_root_free(r->root);
	coll_rootout_close(&r->out);
	if (r->view_ipc[0]) {
		char pub[sizeof r->view_ipc + 8];
		unlink(r->view_ipc + 6);
		if (coll_view_pub_addr(r->view_ipc, pub, sizeof pub) == IOP_OK)
			unlink(pub + 6);
	}
	if (r->dir[0])
		rmdir(r->dir);
}

static int start(struct run *r)
{
	char shim[PATH_MAX];
	if (!find_shim(shim, sizeof shim))
		return fail("cannot find libiopulse.so (set IOPULSE_SHIM to its path)", NULL);
	int rc = coll_rootout_open(&r->out, &r->opt, "iopulse run");
	if (rc)
		return rc;
	join_command(r, r->opt.cmd);
	uint64_t now = iop_real_ns();
	struct coll_leaf_cfg lc;
	coll_leaf_cfg_default(&lc);
	lc.tick_ns = r->opt.tick_ns;
	struct coll_root_cfg rc_;
	coll_root_cfg_default(&rc_, r->opt.tick_ns);
	if (r->opt.history_bytes)
		rc_.history.max_bytes = r->opt.history_bytes;
	/* this leaf's ticks are the job's (one node) or most of it: it
	 * keeps as many files as the root */
	lc.max_files = rc_.max_files;
	if (rc_.grace_ns < lc.grace_ns + 50000000ull)
		rc_.grace_ns = lc.grace_ns + 50000000ull;
	if ((rc = setup_job(r)))
		return rc;
	lc.job_id = r->card.job_id;
	lc.key = r->card.key;
	if (coll_leaf_new(&lc, now, &r->leaf) != IOP_OK || coll_root_new(&rc_, now, &r->root) != IOP_OK)
		return fail("out of memory", NULL);
	r->in.leaf = r->leaf;
	struct coll_job_info job = {.id = r->card.job_id, .start_ns = now, .command = r->command,
	                            .tick_ns = r->opt.tick_ns, .live = true,
	                            .summary_files = r->opt.summary_files};
	if ((rc = coll_rootout_start(&r->out, &job, coll_root_state(r->root))))
		return rc;
	if (r->opt.record_events) {
		r->in.on_frame = on_frame;
		r->in.on_frame_arg = r;
	}
	if (r->view && !r->opt.headless && !r->opt.jsonl && isatty(1) && isatty(0)) {
		struct coll_run_live live = {r->root, r->out.alerts, &r->out.job, r->out.rec != NULL};
		if ((r->v = r->view->open(&live)))
			r->out.out.text = false;
	}

	static const int sigs[] = {SIGCHLD, SIGTERM, SIGINT, SIGHUP, SIGUSR1};
	if ((sig_fd = coll_sigpipe_open(sigs, sizeof sigs / sizeof *sigs)) < 0)
		return fail("cannot make a pipe", strerror(errno));
	char **argv = command_env(r, shim);
	int out = r->v ? r->view->output_fd(r->v) : -1;
	int in = out >= 0 ? open("/dev/null", O_RDONLY | O_CLOEXEC) : -1;
	fflush(NULL);
	r->child = fork();
	if (r->child == 0)
		exec_command(r, argv, in, out);
	int e = errno;
	if (in >= 0)
		close(in);
	cmd_argv = argv; /* kept (and reachable) for the process's life */
	if (r->child < 0)
		return fail("cannot fork", strerror(e));
	return 0;
}

int coll_cmd_run(int argc, char **argv)
{
	return coll_cmd_run_view(argc, argv, NULL);
}

int coll_cmd_run_view(int argc, char **argv, const struct coll_run_view *view)
{
	struct run r = {.in = {.pull = -1, .rep = -1}, .view = view};
	int rc = coll_run_opts_parse(&r.opt, argc, argv);
	if (rc)
		return rc < 0 ? 0 : rc;
	if ((rc = start(&r))) {
		view_close(&r, false);
		cleanup(&r);
		return rc;
	}
	loop(&r);
	view_close(&r, false);
	uint64_t end = iop_real_ns();
	advance(&r, end, true);
	coll_rootout_finish(&r.out, end);
	rc = exit_status(&r);
	cleanup(&r);
	return rc;
}
