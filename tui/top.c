/* `iopulse top [JOBID|ADDRESS]`: the dashboard attached to a running job
 * through its root's viewer server (source_remote.c, docs/viewer.md).
 *
 * Which job: a JOBID (or a unique prefix of one) names a job card in
 * ~/.iopulse/jobs, which holds the root's address and the job key; an
 * ADDRESS (tcp://HOST:PORT, ipc://PATH) takes the key from --card FILE or
 * IOPULSE_KEY and IOPULSE_JOB; nothing picks the only running job, or asks
 * which one. It reaches the root (or says why not) before taking the
 * terminal. `q` leaves top; the job goes on. */
#include "top.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dash.h"
#include "jobcard.h"
#include "source.h"
#include "viewer.h"

#define FIRST_KEYFRAME_WAIT_NS (10 * 1000000000ull) /* unreachable shows after 2 s */
#define MAX_CHOICES 64

static void usage(FILE *to)
{
	fprintf(to,
	        "usage: iopulse top [OPTIONS] [JOBID|ADDRESS]\n"
	        "Shows the dashboard of a running job (one started by 'iopulse run', or the\n"
	        "root of a tree started with 'iopulse collector --role root'); q leaves top,\n"
	        "the job goes on.\n"
	        "\n"
	        "  JOBID                 a job of 'iopulse jobs' (or a unique prefix of its id):\n"
	        "                        its card gives the root's address and the job key\n"
	        "  ADDRESS               a root's viewer address (tcp://HOST:PORT, ipc://PATH);\n"
	        "                        the key comes from --card, else $IOPULSE_KEY and\n"
	        "                        $IOPULSE_JOB\n"
	        "  (none)                the only running job, or a choice among them\n"
	        "  --card FILE           the job card to take the key from (with ADDRESS)\n"
	        "  -h, --help            this text\n"
	        "\n"
	        "The header says STALE when no tick came for 3 ticks, UNREACHABLE when the\n"
	        "root does not answer (top keeps trying: a restarted root is picked up),\n"
	        "REFUSED when the root refuses the key.\n"
	        "Exit status: 0 after q; 1 usage; 2 no such job, a card it cannot read, root unreachable, key\n"
	        "refused, no terminal.\n");
}

struct choice {
	struct coll_jobcard c[MAX_CHOICES];
	size_t n, matched;
	const char *prefix; /* NULL: running jobs */
};

static int add_card(void *arg, const struct coll_jobcard *c)
{
	struct choice *ch = arg;
	char id[17];
	snprintf(id, sizeof id, "%016" PRIx64, c->job_id);
	if (ch->prefix ? strncmp(id, ch->prefix, strlen(ch->prefix)) != 0
	               : !strcmp(coll_jobcard_state(c), "stale"))
		return 0;
	if (ch->n < MAX_CHOICES)
		ch->c[ch->n++] = *c;
	ch->matched++;
	return 0;
}

/* Asks which of several running jobs; -1 when no answer. */
static int ask(const struct choice *ch)
{
	printf("running jobs:\n");
	for (size_t i = 0; i < ch->n; i++)
		printf("  %zu) %016" PRIx64 " %-16s %s\n", i + 1, ch->c[i].job_id, ch->c[i].host,
		       ch->c[i].command);
	printf("watch which job [1-%zu]? ", ch->n);
	fflush(stdout);
	char line[64];
	if (!fgets(line, sizeof line, stdin))
		return -1;
	char *end;
	unsigned long k = strtoul(line, &end, 10);
	if (end == line || k < 1 || k > ch->n)
		return -1;
	return (int)k - 1;
}

/* The card of the job to watch into *out: 0, or the exit status. */
static int pick_card(const char *jobid, struct coll_jobcard *out)
{
	static struct choice ch; /* 64 cards: not on the stack */
	memset(&ch, 0, sizeof ch);
	ch.prefix = jobid;
	enum iop_err e = coll_jobcard_each("iopulse top", add_card, &ch);
	if (e == IOP_ERR_NOT_FOUND) {
		fprintf(stderr, "iopulse top: HOME is not set: cannot find ~/.iopulse/jobs\n");
		return 2;
	}
	if (jobid && ch.matched != 1) {
		if (ch.matched)
			fprintf(stderr, "iopulse top: '%s' names %zu jobs: give more of the id\n", jobid,
			        ch.matched);
		else
			fprintf(stderr, "iopulse top: no job '%s' in ~/.iopulse/jobs: try 'iopulse jobs'\n",
			        jobid);
		return ch.matched ? 1 : 2;
	}
	if (!jobid && !ch.n) {
		fprintf(stderr, "iopulse top: no running job in ~/.iopulse/jobs: start one with "
		                "'iopulse run', or give the ADDRESS of a root\n");
		return 2;
	}
	int k = 0;
	if (ch.n > 1 && (!isatty(0) || (k = ask(&ch)) < 0)) {
		fprintf(stderr, "iopulse top: %zu running jobs: give a JOBID (see 'iopulse jobs')\n",
		        ch.n);
		return 1;
	}
	*out = ch.c[k];
	if (!strcmp(coll_jobcard_state(out), "stale")) {
		/* its port may serve another job by now: say what is known */
		fprintf(stderr, "iopulse top: cannot reach the root of job %016" PRIx64 ": its iopulse "
		                "run (pid %d) has ended; try 'iopulse jobs'\n", out->job_id, out->pid);
		return 2;
	}
	if (!out->root[0]) {
		fprintf(stderr, "iopulse top: job %016" PRIx64 " has no viewer address in its card "
		                "(started by an older iopulse?)\n", out->job_id);
		return 2;
	}
	return 0;
}

static int watch(const char *addr, uint64_t job_id, const struct iop_key *key,
                 const struct tui_job *job)
{
	enum coll_viewer_status st;
	char why[256];
	struct tui_remote *r = tui_remote_open(addr, job_id, key, job, FIRST_KEYFRAME_WAIT_NS, &st,
	                                       why, sizeof why);
	if (!r) {
		if (st == COLL_VIEWER_UNREACHABLE)
			fprintf(stderr, "iopulse top: cannot reach the root %s (no answer): is the job "
			                "still running? try 'iopulse jobs'\n", addr);
		else if (st == COLL_VIEWER_REFUSED)
			fprintf(stderr, "iopulse top: the root %s refused the key: wrong job key (check "
			                "--card, or IOPULSE_KEY and IOPULSE_JOB)\n", addr);
		else
			fprintf(stderr, "iopulse top: cannot watch %s: %s\n", addr, why);
		return st == COLL_VIEWER_CONNECTING && strstr(why, "address") ? 1 : 2;
	}
	struct tui_source src;
	tui_source_remote(&src, r);
	if (!isatty(0) || !isatty(1)) {
		src.ops->close(src.self);
		fprintf(stderr, "iopulse top: no terminal: top shows the dashboard on a terminal "
		                "(for a batch log, 'iopulse run --headless')\n");
		return 2;
	}
	struct tui_dash *d = tui_dash_open(&src, stdin, stdout, why, sizeof why);
	if (!d) {
		src.ops->close(src.self);
		fprintf(stderr, "iopulse top: no dashboard: %s\n", why);
		return 2;
	}
	int rc = tui_dash_run(d);
	tui_dash_close(d);
	src.ops->close(src.self);
	return rc;
}

int tui_cmd_top(int argc, char **argv)
{
	static const struct option opts[] = {{"card", required_argument, NULL, 'c'},
	                                     {"help", no_argument, NULL, 'h'}, {0}};
	const char *card_path = NULL;
	int ch;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (ch) {
		case 'c': card_path = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 1;
		}
	}
	if (argc - optind > 1) {
		fprintf(stderr, "iopulse top: one JOBID or ADDRESS at most; see 'iopulse top --help'\n");
		return 1;
	}
	const char *arg = optind < argc ? argv[optind] : NULL;
	struct coll_jobcard card = {0};
	struct tui_job job = {0};
	if (arg && strstr(arg, "://")) {
		char err[512];
		enum iop_err e = coll_jobcard_key(card_path, &card.job_id, &card.key, err, sizeof err);
		if (e) {
			fprintf(stderr, "iopulse top: %s\n", err);
			return e == IOP_ERR_IO ? 2 : 1; /* a card it cannot read; no key given */
		}
		snprintf(card.root, sizeof card.root, "%s", arg);
	} else {
		if (card_path) {
			fprintf(stderr, "iopulse top: --card goes with an ADDRESS, not a JOBID\n");
			return 1;
		}
		int rc = pick_card(arg, &card);
		if (rc)
			return rc;
		job.start_ns = card.start_ns;
		job.command = card.command;
		job.recording = card.record[0] != 0; /* its card says so */
	}
	job.id = card.job_id;
	return watch(card.root, card.job_id, &card.key, &job);
}
