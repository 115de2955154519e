/* A viewer of a running job for the end-to-end viewer tests
 * (view_e2e.py): connects to the root named by a job card with
 * coll_viewer, applies the ticks it publishes, and after each one writes
 * the summary of its own copy of the state to a file, so the test can
 * compare it with the summary the job's `iopulse run` writes at the end.
 *
 *   view_probe --card FILE --out SUMMARY.json [--stall-after N --stall-s S
 *              [--stall-done FILE]] [--max-s S]
 *
 * --stall-after N --stall-s S: after N ticks applied, reads nothing for S
 * seconds (a slow viewer), then goes on; --stall-done FILE: creates FILE
 * once it has applied a tick again after the stall (the job may end: the
 * stall happened while it ran, and the probe has caught up). It stops when the root has gone
 * (its card removed, and the root unreachable or refusing after having
 * been live) or after --max-s (default 120), and
 * prints its counters as one JSON object on stdout:
 *   {"ticks","keyframes","gaps","restarts","bad","refused","timeouts",
 *    "live_seen","last_status"}
 * Exit status: 0 when it saw the root live, 1 otherwise, 2 on bad usage. */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "jobcard.h"
#include "summary.h"
#include "viewer.h"

static void write_summary(const struct coll_state *s, const struct coll_jobcard *card,
                          const char *path)
{
	struct coll_job_info job = {.id = card->job_id, .start_ns = card->start_ns,
	                            .command = card->command, .tick_ns = s->tick_ns};
	json_t *o = coll_summary_json(s, &job, NULL);
	char tmp[4096];
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	if (o && json_dump_file(o, tmp, JSON_COMPACT) == 0)
		rename(tmp, path);
	json_decref(o);
}

int main(int argc, char **argv)
{
	const char *card_path = NULL, *out = NULL, *stall_done = NULL;
	unsigned long stall_after = 0;
	double stall_s = 0, max_s = 120;
	static const struct option opts[] = {{"card", required_argument, NULL, 'c'},
	                                     {"out", required_argument, NULL, 'o'},
	                                     {"stall-after", required_argument, NULL, 'a'},
	                                     {"stall-s", required_argument, NULL, 's'},
	                                     {"stall-done", required_argument, NULL, 'd'},
	                                     {"max-s", required_argument, NULL, 'm'},
	                                     {0}};
	int ch;
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (ch) {
		case 'c': card_path = optarg; break;
		case 'o': out = optarg; break;
		case 'a': stall_after = strtoul(optarg, NULL, 10); break;
		case 's': stall_s = atof(optarg); break;
		case 'd': stall_done = optarg; break;
		case 'm': max_s = atof(optarg); break;
		default: return 2;
		}
	}
	struct coll_jobcard card;
	char err[512];
	if (!card_path || !out || coll_jobcard_read(card_path, &card, err, sizeof err) != IOP_OK) {
		fprintf(stderr, "view_probe: --card FILE --out FILE (%s)\n", card_path ? err : "");
		return 2;
	}
	struct coll_viewer *v;
	uint64_t start = iop_real_ns();
	if (coll_viewer_new(card.root, card.job_id, &card.key, NULL, start, &v) != IOP_OK) {
		fprintf(stderr, "view_probe: cannot connect to %s\n", card.root);
		return 2;
	}
	bool live_seen = false, stalled = false;
	uint64_t applied_at_stall = 0;
	enum coll_viewer_status st = COLL_VIEWER_CONNECTING;
	while (iop_real_ns() - start < (uint64_t)(max_s * 1e9)) {
		int fds[4];
		size_t n = coll_viewer_fds(v, fds, 4);
		struct pollfd p[4];
		for (size_t i = 0; i < n; i++)
			p[i] = (struct pollfd){.fd = fds[i], .events = POLLIN};
		if (poll(p, n, 100) < 0 && errno != EINTR)
			break;
		uint64_t now = iop_real_ns();
		if (coll_viewer_pump(v, now) && coll_viewer_state(v))
			write_summary(coll_viewer_state(v), &card, out);
		st = coll_viewer_status(v, now);
		live_seen |= st == COLL_VIEWER_LIVE;
		/* The job is over: its card is gone (iopulse run removes it at
		 * the end) and its root no longer answers (or its tcp port
		 * already serves another job, which refuses our key). A root
		 * merely slow to answer on a loaded machine is waited for. */
		if (live_seen && (st == COLL_VIEWER_UNREACHABLE || st == COLL_VIEWER_REFUSED) &&
		    access(card_path, F_OK) != 0)
			break;
		struct coll_viewer_stats vs;
		coll_viewer_stats(v, &vs);
		if (stall_after && !stalled && vs.ticks_applied >= stall_after) {
			stalled = true;
			applied_at_stall = vs.ticks_applied;
			struct timespec ts = {(time_t)stall_s, (long)((stall_s - (time_t)stall_s) * 1e9)};
			nanosleep(&ts, NULL);
		} else if (stalled && stall_done && vs.ticks_applied > applied_at_stall) {
			FILE *f = fopen(stall_done, "w");
			if (f && fclose(f) == 0)
				stall_done = NULL; /* said once */
		}
	}
	struct coll_viewer_stats vs;
	coll_viewer_stats(v, &vs);
	printf("{\"ticks\":%llu,\"keyframes\":%llu,\"gaps\":%llu,\"restarts\":%llu,\"bad\":%llu,"
	       "\"refused\":%llu,\"timeouts\":%llu,\"live_seen\":%s,\"last_status\":\"%s\"}\n",
	       (unsigned long long)vs.ticks_applied, (unsigned long long)vs.keyframes,
	       (unsigned long long)vs.gaps, (unsigned long long)vs.restarts,
	       (unsigned long long)vs.bad_messages, (unsigned long long)vs.refused,
	       (unsigned long long)vs.timeouts, live_seen ? "true" : "false",
	       coll_viewer_status_text(st));
	coll_viewer_free(v);
	return live_seen ? 0 : 1;
}
