/* `iopulse run`: makes the job key and card, starts the command with the
 * shim preloaded, and runs the node's leaf and the root in this process:
 *
 *   ranks --PUSH ipc://<dir>/leaf.ipc--> leaf --deltas--> root --> alerts,
 *   ranks --REQ  ipc://<dir>/final.ipc-> (last frames)         headless output,
 *                                                              recording
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
#include "headless.h"
#include "jobcard.h"
#include "judge.h"
#include "leaf.h"
#include "record.h"
#include "root.h"
#include "rules.h"
#include "run_opts.h"

#define DRAIN_IDLE_NS (300 * 1000000ull) /* after the command: quiet this long, done */
#define DRAIN_MAX_NS  (3000 * 1000000ull) /* after the command: at most this long */

struct run {
	struct run_opts opt;
	struct coll_jobcard card;
	char dir[PATH_MAX], card_path[1024];
	char command[1024];
	int pull, rep; /* nanomsg sockets */
	int pull_fd, rep_fd;
	struct coll_leaf *leaf;
	struct coll_root *root;
	struct coll_headless out;
	struct coll_alerts *alerts;
	struct coll_record *rec; /* --record, or NULL */
	FILE *alerts_file;
	struct coll_job_info job;
	pid_t child;
	int child_status;
	bool child_done;
	uint64_t child_done_ns, last_frame_ns, next_status_ns;
	const struct coll_run_view *view; /* the dashboard (tui/), when shown */
	void *v;
};

static int sig_pipe[2] = {-1, -1};

static void on_signal(int sig)
{
	int saved = errno;
	unsigned char c = (unsigned char)sig;
	(void)!write(sig_pipe[1], &c, 1);
	errno = saved;
}

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

static int open_sockets(struct run *r)
{
	char url[PATH_MAX + 16];
	int maxsize = IOP_FRAME_MAX_LEN + 1, rcvbuf = 4 << 20;
	size_t fdlen = sizeof(int);
	r->pull = nn_socket(AF_SP, NN_PULL);
	r->rep = nn_socket(AF_SP, NN_REP);
	if (r->pull < 0 || r->rep < 0)
		return fail("cannot create sockets", nn_strerror(nn_errno()));
	nn_setsockopt(r->pull, NN_SOL_SOCKET, NN_RCVMAXSIZE, &maxsize, sizeof maxsize);
	nn_setsockopt(r->pull, NN_SOL_SOCKET, NN_RCVBUF, &rcvbuf, sizeof rcvbuf);
	nn_setsockopt(r->rep, NN_SOL_SOCKET, NN_RCVMAXSIZE, &maxsize, sizeof maxsize);
	if (strlen(r->dir) + 16 > sizeof r->card.leaf)
		return fail("the runtime directory's path is too long (set TMPDIR)", r->dir);
	snprintf(url, sizeof url, "ipc://%s/leaf.ipc", r->dir);
	if (nn_bind(r->pull, url) < 0)
		return fail("cannot listen for the ranks", nn_strerror(nn_errno()));
	memcpy(r->card.leaf, url, strlen(url) + 1);
	snprintf(url, sizeof url, "ipc://%s/final.ipc", r->dir);
	if (nn_bind(r->rep, url) < 0)
		return fail("cannot listen for last frames", nn_strerror(nn_errno()));
	if (nn_getsockopt(r->pull, NN_SOL_SOCKET, NN_RCVFD, &r->pull_fd, &fdlen) < 0 ||
	    nn_getsockopt(r->rep, NN_SOL_SOCKET, NN_RCVFD, &r->rep_fd, &fdlen) < 0)
		return fail("cannot poll sockets", nn_strerror(nn_errno()));
	return 0;
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
	int rc = open_sockets(r);
	if (rc)
		return rc;
	gethostname(r->card.host, sizeof r->card.host - 1);
	snprintf(r->card.root, sizeof r->card.root, "%s", r->card.leaf);
	snprintf(r->card.command, sizeof r->card.command, "%s", r->command);
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

/* In the child: the ranks' environment, then the command. */
static void exec_command(struct run *r, const char *shim)
{
	char key[IOP_KEY_HEX + 1], job[17], final[PATH_MAX + 16];
	iop_key_to_hex(&r->card.key, key);
	snprintf(job, sizeof job, "%016" PRIx64, r->card.job_id);
	snprintf(final, sizeof final, "ipc://%s/final.ipc", r->dir);
	char *pre = preload_list(shim, r->opt.also_preload, getenv("LD_PRELOAD"));
	setenv("IOPULSE_ADDR", r->card.leaf, 1);
	setenv("IOPULSE_KEY", key, 1);
	setenv("IOPULSE_JOB", job, 1);
	setenv("IOPULSE_FINAL_ADDR", final, 1);
	int out = r->v ? r->view->output_fd(r->v) : -1;
	int in = out >= 0 ? open("/dev/null", O_RDONLY) : -1;
	if (in >= 0) /* the dashboard owns the terminal */
		dup2(in, 0), dup2(out, 1), dup2(out, 2);
	if (pre)
		setenv("LD_PRELOAD", pre, 1);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	execvp(r->opt.cmd[0], r->opt.cmd);
	fprintf(stderr, "iopulse run: cannot run %s: %s\n", r->opt.cmd[0], strerror(errno));
	_exit(errno == ENOENT ? 127 : 126);
}

/* ---- the engine's callbacks ---- */

/* Every state goes to the JSON outputs; the human line is printed when an
 * alert starts, escalates or ends. */
static void on_alert(void *arg, const struct coll_alert *a)
{
	struct run *r = arg;
	const struct coll_state *s = coll_root_state(r->root);
	json_t *rec = coll_alert_json(a, coll_state_name, (void *)s);
	char line[512];
	bool show = a->state != COLL_ALERT_ONGOING || a->escalated;
	if (show && coll_alert_line(a, line, sizeof line) < 0)
		show = false;
	coll_headless_alert(&r->out, rec, show ? line : NULL, (int)a->severity,
	                    a->state == COLL_ALERT_START);
	coll_record_alert(r->rec, a->t_ns, rec);
	json_decref(rec);
}

static void on_root_tick(void *arg, const struct coll_delta *d, const struct coll_state *s)
{
	struct run *r = arg;
	coll_headless_tick(&r->out, d, s);
	(void)coll_judge_tick(r->alerts, d, s, on_alert, r);
	coll_record_tick(r->rec, d);
	if (r->v)
		r->view->tick(r->v);
}

static void on_leaf_delta(void *arg, struct coll_delta *d)
{
	struct run *r = arg;
	(void)coll_root_delta(r->root, d);
}

static void advance(struct run *r, uint64_t now, bool flush)
{
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
	r->out.text = !r->opt.jsonl;
	if (quit && !r->child_done) /* `q` ends the session as Ctrl-C does headless */
		kill(r->child, SIGINT);
}

static void take_frame(struct run *r, const void *buf, int len)
{
	uint64_t now = iop_real_ns();
	(void)coll_leaf_frame(r->leaf, buf, (size_t)len, now);
	r->last_frame_ns = now;
}

static unsigned drain_pull(struct run *r, unsigned max)
{
	unsigned n = 0;
	for (; n < max; n++) {
		void *msg;
		int len = nn_recv(r->pull, &msg, NN_MSG, NN_DONTWAIT);
		if (len < 0)
			break;
		take_frame(r, msg, len);
		nn_freemsg(msg);
	}
	return n;
}

/* A last frame over REQ/REP: the frames before it went over PUSH and may
 * still be on their way; take what the pull socket has (waiting up to
 * 50 ms for more) before it, so the sequence stays in order. */
static void take_final(struct run *r)
{
	void *msg;
	int len = nn_recv(r->rep, &msg, NN_MSG, NN_DONTWAIT);
	if (len < 0)
		return;
	for (int i = 0; i < 10; i++) {
		drain_pull(r, UINT_MAX);
		struct pollfd p = {.fd = r->pull_fd, .events = POLLIN};
		if (poll(&p, 1, 5) <= 0)
			break;
	}
	take_frame(r, msg, len);
	nn_freemsg(msg);
	nn_send(r->rep, "ok", 2, NN_DONTWAIT);
}

static void on_signals(struct run *r, uint64_t now)
{
	unsigned char sig[64];
	ssize_t n = read(sig_pipe[0], sig, sizeof sig);
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
		case SIGUSR1: coll_headless_status(&r->out, coll_root_state(r->root), now); break;
		case SIGTERM:
		case SIGINT:
		case SIGHUP:
			if (!r->child_done)
				kill(r->child, sig[i]);
			break;
		}
	}
}

/* After the command: every process it started has said goodbye (or
 * went silent), or the bounds passed. */
static bool drained(struct run *r, uint64_t now)
{
	if (!r->child_done)
		return false;
	struct coll_leaf_procs p;
	coll_leaf_procs(r->leaf, &p);
	if (now - r->child_done_ns >= DRAIN_MAX_NS)
		return true;
	if (p.ended + p.gone >= p.seen)
		return now - r->child_done_ns >= 20000000ull; /* stragglers of the last send */
	return now - r->last_frame_ns >= DRAIN_IDLE_NS && now - r->child_done_ns >= DRAIN_IDLE_NS;
}

static void loop(struct run *r)
{
	while (true) {
		uint64_t now = iop_real_ns();
		advance(r, now, false);
		if (r->opt.status_every_ns && now >= r->next_status_ns) {
			if (r->next_status_ns)
				coll_headless_status(&r->out, coll_root_state(r->root), now);
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
		struct pollfd p[4] = {{.fd = r->pull_fd, .events = POLLIN},
		                      {.fd = r->rep_fd, .events = POLLIN},
		                      {.fd = sig_pipe[0], .events = POLLIN},
		                      {.fd = r->v ? r->view->input_fd(r->v) : -1, .events = POLLIN}};
		if (poll(p, 4, timeout) < 0 && errno != EINTR)
			return;
		if (r->v && !r->view->input(r->v)) /* keys, and resizes (EINTR) */
			view_close(r, true);
		if (p[0].revents & POLLIN)
			drain_pull(r, 4096);
		if (p[1].revents & POLLIN)
			take_final(r);
		if (p[2].revents & POLLIN)
			on_signals(r, iop_real_ns());
	}
}

static int exit_status(const struct run *r)
{
	int st = r->child_status;
	int rc = WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : 2;
	if (rc == 0 && r->opt.fail_on && r->out.worst >= r->opt.fail_on)
		return 3;
	return rc;
}

static void cleanup(struct run *r)
{
	if (r->pull >= 0)
		nn_close(r->pull);
	if (r->rep >= 0)
		nn_close(r->rep);
	char path[PATH_MAX + 32];
	snprintf(path, sizeof path, "%s/leaf.ipc", r->dir);
	unlink(path);
	snprintf(path, sizeof path, "%s/final.ipc", r->dir);
	unlink(path);
	if (r->dir[0])
		rmdir(r->dir);
	if (r->card_path[0])
		unlink(r->card_path);
	coll_leaf_free(r->leaf);
	coll_root_free(r->root);
	coll_alerts_free(r->alerts);
	coll_record_close(r->rec);
	coll_headless_free(&r->out);
	if (r->alerts_file)
		fclose(r->alerts_file);
}

static int start(struct run *r)
{
	char shim[PATH_MAX];
	if (!find_shim(shim, sizeof shim))
		return fail("cannot find libiopulse.so (set IOPULSE_SHIM to its path)", NULL);
	if (r->opt.alerts_path && !(r->alerts_file = fopen(r->opt.alerts_path, "a")))
		return fail("cannot open the alerts file", strerror(errno));
	struct coll_rules rules;
	coll_rules_default(&rules);
	char err[512];
	if (r->opt.rules_path && coll_rules_load_json(&rules, r->opt.rules_path, err, sizeof err)) {
		fprintf(stderr, "iopulse run: %s\n", err);
		return 1;
	}
	if (coll_alerts_new(&rules, &r->alerts) != IOP_OK)
		return fail("out of memory", NULL);
	join_command(r, r->opt.cmd);
	int rc = setup_job(r);
	if (rc)
		return rc;
	uint64_t now = iop_real_ns();
	struct coll_leaf_cfg lc;
	coll_leaf_cfg_default(&lc);
	lc.tick_ns = r->opt.tick_ns;
	lc.job_id = r->card.job_id;
	lc.key = r->card.key;
	struct coll_root_cfg rc_;
	coll_root_cfg_default(&rc_, r->opt.tick_ns);
	if (rc_.grace_ns < lc.grace_ns + 50000000ull)
		rc_.grace_ns = lc.grace_ns + 50000000ull;
	if (coll_leaf_new(&lc, now, &r->leaf) != IOP_OK || coll_root_new(&rc_, now, &r->root) != IOP_OK)
		return fail("out of memory", NULL);
	coll_headless_init(&r->out, r->opt.jsonl ? stdout : NULL, r->alerts_file, !r->opt.jsonl);
	r->job = (struct coll_job_info){.id = r->card.job_id, .start_ns = now, .command = r->command,
	                                .tick_ns = r->opt.tick_ns};
	coll_headless_meta(&r->out, &r->job);
	if (r->opt.record_path && !(r->rec = coll_record_open(r->opt.record_path, &r->job)))
		return 2;
	if (r->view && !r->opt.headless && !r->opt.jsonl && isatty(1) && isatty(0)) {
		struct coll_run_live live = {r->root, r->alerts, &r->job, r->rec != NULL};
		if ((r->v = r->view->open(&live)))
			r->out.text = false;
	}

	if (pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
		return fail("cannot make a pipe", strerror(errno));
	struct sigaction sa = {.sa_handler = on_signal, .sa_flags = SA_RESTART};
	sigemptyset(&sa.sa_mask);
	int sigs[] = {SIGCHLD, SIGTERM, SIGINT, SIGHUP, SIGUSR1};
	for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++)
		sigaction(sigs[i], &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	fflush(NULL);
	r->child = fork();
	if (r->child < 0)
		return fail("cannot fork", strerror(errno));
	if (r->child == 0)
		exec_command(r, shim);
	return 0;
}

int coll_cmd_run(int argc, char **argv)
{
	return coll_cmd_run_view(argc, argv, NULL);
}

int coll_cmd_run_view(int argc, char **argv, const struct coll_run_view *view)
{
	struct run r = {.pull = -1, .rep = -1, .view = view};
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
	r.job.end_ns = end;
	/* Alerts end with the last tick, as when replaying the recording. */
	const struct coll_state *st = coll_root_state(r.root);
	coll_alerts_finish(r.alerts, st->ticks_applied ? (uint64_t)(st->last_t + 1) * st->tick_ns : end,
	                   on_alert, &r);
	coll_headless_summary(&r.out, coll_root_state(r.root), &r.job,
	                      coll_judge_history_json(r.alerts, coll_root_state(r.root)),
	                      r.opt.summary_path);
	rc = exit_status(&r);
	cleanup(&r);
	return rc;
}
