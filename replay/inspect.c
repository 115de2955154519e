/* `iopulse verify FILE` and `iopulse summary FILE [--json] [--rules FILE]`:
 * a recording read back through the same engine the live root uses. The
 * DELTA frames are applied to a window state in order and the alerts are
 * re-run on them, so the summary is the one headless mode printed (with
 * the same rules). Damage is reported and skipped: a truncated file is read
 * to its last whole frame, a corrupt frame is skipped and counted. */
#include "inspect.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alert_rec.h"
#include "alerts.h"
#include "delta.h"
#include "judge.h"
#include "rec.h"
#include "rec_io.h"
#include "rec_open.h"
#include "replay_cmd.h"
#include "rules.h"
#include "state.h"
#include "summary.h"
#include "summary_files.h"

static void print_time(const char *label, uint64_t ns)
{
	char t[32];
	coll_iso_time(ns, t, sizeof t);
	printf("%-10s %s\n", label, ns ? t : "-");
}

int rec_cmd_verify(int argc, char **argv)
{
	if (argc != 2 || argv[1][0] == '-') {
		FILE *to = argc == 2 && !strcmp(argv[1], "--help") ? stdout : stderr;
		fprintf(to, "usage: iopulse verify FILE\n"
		            "Reads every frame of a recording, checks it, and says what it holds.\n"
		            "Exit status: 0 intact and closed cleanly, 2 damaged, truncated or unreadable.\n");
		return to == stdout ? 0 : 1;
	}
	struct rec_opened o;
	int rc = rec_opened_open("verify", argv[1], &o);
	if (rc)
		return rc;
	struct rec_info info;
	enum iop_err e = rec_verify(o.r);
	if (!e)
		e = rec_info(o.r, &info);
	if (e) {
		fprintf(stderr, "iopulse verify: %s: %s\n", argv[1], iop_strerror(e));
		rec_opened_close(&o);
		return 2;
	}
	printf("%-10s %s\n", "file", argv[1]);
	printf("%-10s %u\n", "format", info.version);
	printf("%-10s %016" PRIx64 "\n", "job", info.job_id);
	printf("%-10s %s\n", "command", o.command);
	printf("%-10s %" PRIu64 " MiB (older ticks keep their layer rows only past it)\n",
	       "history", o.history_bytes >> 20);
	if (o.detail_ns)
		printf("%-10s lean: every tick's layer rows; ranks, files and call sites every %g s "
		       "and when a process ended\n", "detail", o.detail_ns / 1e9);
	else if (o.view_cap)
		printf("%-10s view: every tick's rows per rank and layer, and per file and call site "
		       "up to %u a tick (beyond: the top %u by bytes and by time, those an alert "
		       "named, 'other')\n", "detail", o.view_cap, o.view_cap);
	else
		printf("%-10s full: every tick whole\n", "detail");
	print_time("first", info.first_ns);
	print_time("last", info.last_ns);
	printf("%-10s", "frames");
	for (unsigned t = 1; t < REC_TYPE_COUNT; t++)
		if (info.frames[t])
			printf(" %s %" PRIu64, rec_type_name(t), info.frames[t]);
	printf(" (%" PRIu64 " in all, %" PRIu64 " bytes)\n", info.frames_total, info.file_bytes);
	if (info.corrupt)
		printf("%-10s %" PRIu64 " damaged regions skipped (%" PRIu64 " bytes)\n", "CORRUPT",
		       info.corrupt, info.corrupt_bytes);
	if (info.truncated) {
		char t[32];
		coll_iso_time(rec_info_read_to_ns(&info), t, sizeof t);
		printf("%-10s TRUNCATED at %s: no clean close (%" PRIu64
		       " bytes of an unfinished frame at the end); readable up to there\n",
		       "state", t, info.tail_bytes);
	} else {
		printf("%-10s closed cleanly\n", "state");
	}
	rec_opened_close(&o);
	return info.truncated || info.corrupt ? 2 : 0;
}

struct replayed {
	struct coll_state state;
	struct coll_alerts *alerts;
	uint64_t first_ns, last_ns;
	uint64_t bad_deltas;
};

static void ignore_alert(void *arg, const struct coll_alert *a)
{
	(void)arg;
	(void)a;
}

/* Applies every DELTA frame in order and re-runs the alerts on them. */
static int replay_all(struct rec_opened *o, struct replayed *x)
{
	struct coll_delta d;
	coll_delta_init(&d, 0, o->tick_ns);
	enum iop_err e;
	bool first = true;
	while ((e = rec_next_delta(o, &d, NULL, &x->bad_deltas)) == IOP_OK) {
		if (first) {
			rec_opened_state_init(o, &x->state, d.tick.tick_ns);
			first = false;
		}
		(void)coll_state_apply(&x->state, &d);
		if (!o->detail_ns) /* a lean one's alerts are its ALERT frames' */
			(void)coll_judge_tick(x->alerts, &d, &x->state, ignore_alert, NULL);
		if (!x->first_ns)
			x->first_ns = (uint64_t)d.tick.t * d.tick.tick_ns;
		x->last_ns = rec_tick_end_ns(&d);
	}
	coll_delta_free(&d);
	if (first)
		rec_opened_state_init(o, &x->state, o->tick_ns);
	if (e != IOP_ERR_NOT_FOUND) {
		fprintf(stderr, "iopulse summary: reading stopped: %s\n", iop_strerror(e));
		return 2;
	}
	coll_alerts_finish(x->alerts, x->last_ns, ignore_alert, NULL);
	return 0;
}

int rec_cmd_summary(int argc, char **argv)
{
	static const struct option opts[] = {{"json", no_argument, NULL, 'j'},
	                                     {"rules", required_argument, NULL, 'r'},
	                                     {"summary-files", required_argument, NULL, 'f'},
	                                     {"help", no_argument, NULL, 'h'},
	                                     {0}};
	bool as_json = false;
	const char *rules_path = NULL;
	uint32_t files = 0;
	int ch;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (ch == 'j')
			as_json = true;
		else if (ch == 'r')
			rules_path = optarg;
		else if (ch == 'f' && coll_parse_summary_files(optarg, &files)) {
			fprintf(stderr, "iopulse summary: --summary-files takes all or 1 to 16777216 "
			                "(files), not '%s'\n", optarg);
			return 1;
		} else if (ch != 'f') {
			FILE *to = ch == 'h' ? stdout : stderr;
			fprintf(to, "usage: iopulse summary FILE [--json] [--rules FILE] [--summary-files N|all]\n"
			            "Prints the end-of-job summary of a recording (the table headless mode\n"
			            "prints, or with --json the summary record), the alerts re-run on its\n"
			            "ticks with the default thresholds or those of --rules FILE; a lean\n"
			            "recording's (iopulse run --record-detail) are those the live run raised.\n"
			            "\n"
			            "  --json                the summary record (JSON) instead of the table\n"
			            "                        (default: the table)\n"
			            "  --rules FILE          alert thresholds (JSON, see docs/alerts.md;\n"
			            "                        default: the built-in ones)\n"
			            "  --summary-files N|all the JSON's files: the top N by bytes and by\n"
			            "                        time, the rest in an 'other' entry per layer\n"
			            "                        (default 1000); all: every file, each with its\n"
			            "                        exact totals\n"
			            "  -h, --help            this text\n"
			            "\n"
			            "A truncated or damaged recording is read as far as it can be and said so\n"
			            "on stderr (TRUNCATED at, CORRUPT), as by iopulse replay.\n"
			            "Exit status: 0; 1 usage; 2 the file cannot be read, or the output cannot\n"
			            "be written.\n");
			return ch == 'h' ? 0 : 1;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "iopulse summary: give one recording; see 'iopulse summary --help'\n");
		return 1;
	}
	struct coll_rules rules;
	coll_rules_default(&rules);
	char err[512];
	if (rules_path && coll_rules_load_json(&rules, rules_path, err, sizeof err)) {
		fprintf(stderr, "iopulse summary: %s\n", err);
		return 1;
	}
	struct rec_opened o;
	int rc = rec_opened_open("summary", argv[optind], &o);
	if (rc)
		return rc;
	if (o.detail_ns && rules_path) {
		fprintf(stderr, "%s", rec_lean_rules_msg("summary", argv[optind]));
		rec_opened_close(&o);
		return 1;
	}
	struct replayed x = {0};
	if (coll_alerts_new(&rules, &x.alerts) != IOP_OK) {
		rec_opened_close(&o);
		return 2;
	}
	rc = replay_all(&o, &x);
	struct coll_job_info job = {.id = o.job_id, .start_ns = o.start_ns ? o.start_ns : x.first_ns,
	                            .end_ns = x.last_ns, .command = o.command,
	                            .tick_ns = x.state.tick_ns, .summary_files = files};
	size_t n;
	uint64_t not_kept;
	(void)coll_alerts_history(x.alerts, &n, &not_kept);
	struct coll_alert_list lean = {0};
	if (o.detail_ns) {
		coll_alert_list_load(o.r, o.tick_ns, &lean);
		n = lean.n;
	}
	if (as_json) {
		json_t *alerts = o.detail_ns ? coll_alert_list_json(&lean, x.last_ns, &x.state)
		                             : coll_judge_history_json(x.alerts, &x.state);
		json_t *s = coll_summary_json(&x.state, &job, alerts);
		json_dumpf(s, stdout, JSON_INDENT(1) | JSON_REAL_PRECISION(16));
		putchar('\n');
		json_decref(s);
	} else {
		coll_summary_print(stdout, &x.state, &job, n);
	}
	if (fflush(stdout) != 0 || ferror(stdout)) { /* a full disk: say so, as export does */
		fprintf(stderr, "iopulse summary: cannot write output: %s\n", strerror(errno));
		rc = 2;
	}
	rec_report_damage("summary", argv[optind], o.r, x.bad_deltas);
	coll_alert_list_free(&lean);
	coll_alerts_free(x.alerts);
	coll_state_free(&x.state);
	rec_opened_close(&o);
	return rc;
}
