/* `iopulse replay`. See replay_cmd.h; options and keys in docs/replay.md.
 *
 * Headless replay is `iopulse run`'s root with a recording for its leaves:
 * each DELTA frame is applied to a window state and handed to
 * coll_rootout_tick() (JSON samples, alerts judged with the rules given,
 * alert lines and records), and at the end coll_rootout_finish() ends the
 * alerts with the last tick and writes the summary. Nothing is recorded
 * again. Without --speed it goes as fast as it can read. */
#include "replay_cmd.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "alert_rec.h"
#include "clock.h"
#include "rec_open.h"
#include "rootout.h"
#include "state.h"
#include "summary_files.h"

static void usage(FILE *to)
{
	fprintf(to,
	        "usage: iopulse replay FILE [OPTIONS]\n"
	        "Replays a recording (iopulse run --record FILE): in the dashboard when stdin and\n"
	        "stdout are terminals, headless otherwise (docs/replay.md).\n"
	        "\n"
	        "  --headless            no dashboard: re-run the alerts on the recorded ticks and\n"
	        "                        write alerts and the summary as iopulse run does (also\n"
	        "                        when stdout or stdin is not a terminal, with --format\n"
	        "                        jsonl, --alerts, --summary-json, --rules or --fail-on);\n"
	        "                        a lean recording's alerts (iopulse run --record-detail)\n"
	        "                        are those the live run raised\n"
	        "  --format text|jsonl   text: alert lines and the summary on stderr (default);\n"
	        "                        jsonl: JSON lines on stdout (meta, sample per tick,\n"
	        "                        alert, summary)\n"
	        "  --alerts FILE         append the alerts as JSON lines to FILE\n"
	        "  --summary-json FILE   write the summary as JSON to FILE\n"
	        "  --summary-files N|all its files: the top N by bytes and by time (default\n"
	        "                        1000), or all\n"
	        "  --rules FILE          alert thresholds (JSON, see docs/alerts.md; default: the\n"
	        "                        built-in ones)\n"
	        "  --fail-on warn|crit   exit 3 when such an alert fired\n"
	        "  --speed X             times real time (headless default: as fast as possible;\n"
	        "                        dashboard default 1)\n"
	        "  --follow              the recording is still being written: keep up with it\n"
	        "                        until it is closed (or Ctrl-C)\n"
	        "  -h, --help            this text\n"
	        "\n"
	        "Dashboard keys (besides those of iopulse run, '?' lists them): Space pause,\n"
	        "left/right one tick, [ ] -/+1 min, { } -/+10 min, b seek (HH:MM[:SS], +30s,\n"
	        "-5m, 40%%), r start, Z end, + - 0 speed x2 /2 1x, n N next/previous alert,\n"
	        "S save the view.\n"
	        "\n"
	        "A truncated recording replays to its last good frame (TRUNCATED at <time> is\n"
	        "said); damaged frames are skipped, counted and reported.\n"
	        "Exit status: 0; 3 with --fail-on when an alert matched; 1 usage; 2 the file\n"
	        "cannot be read (missing, not a recording, a newer format), or the alerts or\n"
	        "summary file cannot be written.\n");
}

static int bad(const char *msg, const char *arg)
{
	fprintf(stderr, "iopulse replay: %s '%s'; see 'iopulse replay --help'\n", msg, arg);
	return 1;
}

/* 0 ok, -1 help printed, 1 usage error (printed). */
static int parse(struct rec_replay_opts *o, int argc, char **argv)
{
	memset(o, 0, sizeof(*o));
	struct run_opts *r = &o->run;
	enum { O_FORMAT = 256, O_ALERTS, O_SUMMARY, O_RULES, O_FAIL, O_SPEED, O_FOLLOW, O_SUMFILES };
	static const struct option opts[] = {
		{"headless", no_argument, NULL, 'H'},
		{"format", required_argument, NULL, O_FORMAT},
		{"alerts", required_argument, NULL, O_ALERTS},
		{"summary-json", required_argument, NULL, O_SUMMARY},
		{"summary-files", required_argument, NULL, O_SUMFILES},
		{"rules", required_argument, NULL, O_RULES},
		{"fail-on", required_argument, NULL, O_FAIL},
		{"speed", required_argument, NULL, O_SPEED},
		{"follow", no_argument, NULL, O_FOLLOW},
		{"help", no_argument, NULL, 'h'},
		{0}};
	optind = 1;
	int ch;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		char *end;
		switch (ch) {
		case 'H': r->headless = true; break;
		case O_FORMAT:
			if (coll_parse_format(optarg, &r->jsonl))
				return bad("unknown format (text or jsonl)", optarg);
			break;
		case O_ALERTS: r->alerts_path = optarg; break;
		case O_SUMMARY: r->summary_path = optarg; break;
		case O_SUMFILES:
			if (coll_parse_summary_files(optarg, &r->summary_files))
				return bad("--summary-files takes all or 1 to 16777216 (files), not", optarg);
			break;
		case O_RULES: r->rules_path = optarg; break;
		case O_FAIL:
			if (coll_parse_fail_on(optarg, &r->fail_on))
				return bad("--fail-on takes warn or crit, not", optarg);
			break;
		case O_SPEED:
			o->speed = strtod(optarg, &end);
			if (end == optarg || *end || !isfinite(o->speed) || o->speed < 0.01 ||
			    o->speed > 1e6)
				return bad("--speed takes a factor from 0.01 to 1000000, not", optarg);
			break;
		case O_FOLLOW: o->follow = true; break;
		case 'h': usage(stdout); return -1;
		default: usage(stderr); return 1;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, optind >= argc ? "iopulse replay: which recording? usage: iopulse "
		                                 "replay FILE [OPTIONS]\n"
		                               : "iopulse replay: give one recording; see 'iopulse "
		                                 "replay --help'\n");
		return 1;
	}
	o->path = argv[optind];
	const char *out = coll_same_file(o->path, r->summary_path)  ? r->summary_path
	                  : coll_same_file(o->path, r->alerts_path) ? r->alerts_path
	                                                            : NULL;
	if (out)
		return bad("an output would overwrite the recording itself:", out);
	if (r->jsonl || r->alerts_path || r->summary_path || r->rules_path || r->fail_on)
		r->headless = true;
	return 0;
}

void rec_report_damage(const char *cmd, const char *path, struct rec_reader *r,
                       uint64_t bad_deltas)
{
	struct rec_info info;
	if (rec_info(r, &info) != IOP_OK)
		return;
	const struct rec_damage *dmg;
	size_t n;
	rec_damage_log(r, &dmg, &n);
	if (info.corrupt) {
		fprintf(stderr,
		        "iopulse %s: %s: CORRUPT: %" PRIu64 " damaged region%s skipped (%" PRIu64
		        " bytes); the frames around them were read\n",
		        cmd, path, info.corrupt, info.corrupt == 1 ? "" : "s", info.corrupt_bytes);
		for (size_t i = 0; i < n && i < 5; i++) {
			char t[32] = "time unknown";
			if (dmg[i].time_known)
				coll_iso_time(dmg[i].time_ns, t, sizeof t);
			fprintf(stderr, "  at byte %" PRIu64 ": %" PRIu64 " bytes, %s (%s)\n",
			        dmg[i].offset, dmg[i].bytes, rec_damage_name(dmg[i].kind), t);
		}
		if (n > 5)
			fprintf(stderr, "  ... and %zu more\n", n - 5);
	}
	if (bad_deltas)
		fprintf(stderr, "iopulse %s: %s: %" PRIu64 " tick record%s could not be decoded "
		                "(skipped)\n", cmd, path, bad_deltas, bad_deltas == 1 ? "" : "s");
	if (info.truncated) {
		char t[32];
		coll_iso_time(rec_info_read_to_ns(&info), t, sizeof t);
		fprintf(stderr, "iopulse %s: %s: TRUNCATED at %s: no clean close (the writer was "
		                "killed or the disk filled); read up to its last good frame\n",
		        cmd, path, t);
	}
}

static volatile sig_atomic_t stop;

static void on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

/* Waits until the tick ending at end_ns is due at speed x. */
static void pace(double speed, uint64_t t0_ns, uint64_t wall0_ns, uint64_t end_ns)
{
	if (speed <= 0 || end_ns < t0_ns)
		return;
	uint64_t wait = iop_sat_u64((double)(end_ns - t0_ns) / speed);
	uint64_t due = wall0_ns + (wait < UINT64_MAX - wall0_ns ? wait : UINT64_MAX - wall0_ns);
	for (uint64_t now = iop_mono_ns(); now < due && !stop; now = iop_mono_ns()) {
		uint64_t ns = due - now;
		struct timespec ts = {.tv_sec = (time_t)(ns / 1000000000u),
		                      .tv_nsec = (long)(ns % 1000000000u)};
		nanosleep(&ts, NULL);
	}
}

/* A lean recording's alerts (record.h): its ticks have not the rows the
 * rules read, so the ALERT records the live root wrote are what it
 * reports, each when its tick is replayed. */
struct lean_alerts {
	struct rec_opened *o;
	struct coll_rootout *out;
	struct coll_alert_rec *v; /* in file order */
	size_t n, cap, next;
	uint64_t after;
	struct coll_alert_list list; /* folded so far: the summary's */
};

static void lean_alerts_load(struct lean_alerts *la)
{
	coll_alert_recs_load(la->o->r, la->o->tick_ns, &la->after, &la->v, &la->n, &la->cap);
}

/* Writes out the records up to the tick ending at end_ns. */
static void lean_alerts_upto(struct lean_alerts *la, uint64_t end_ns)
{
	for (; la->next < la->n && la->v[la->next].t_ns <= end_ns; la->next++) {
		const struct coll_alert_rec *r = &la->v[la->next];
		bool escalated;
		(void)coll_alert_list_fold(&la->list, r, &escalated);
		struct coll_alert a;
		coll_alert_rec_alert(r, escalated, &a);
		coll_rootout_alert(la->out, &a);
	}
}

static int headless(const struct rec_replay_opts *opt)
{
	struct rec_opened o;
	int rc = rec_opened_open("replay", opt->path, &o);
	if (rc)
		return rc;
	if (o.detail_ns && opt->run.rules_path) {
		fprintf(stderr, "%s", rec_lean_rules_msg("replay", opt->path));
		rec_opened_close(&o);
		return 1;
	}
	struct coll_rootout out;
	if ((rc = coll_rootout_open(&out, &opt->run, "iopulse replay"))) {
		coll_rootout_close(&out);
		rec_opened_close(&o);
		return rc;
	}
	struct coll_state state;
	rec_opened_state_init(&o, &state, o.tick_ns);
	struct coll_job_info job = {.id = o.job_id, .start_ns = o.start_ns, .command = o.command,
	                            .tick_ns = o.tick_ns, .summary_files = opt->run.summary_files};
	(void)coll_rootout_start(&out, &job, &state);
	struct sigaction sa = {.sa_handler = on_stop}, old_int, old_term;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);

	struct coll_delta d;
	coll_delta_init(&d, 0, o.tick_ns);
	struct rec_follow fw;
	rec_follow_init(&fw, &o, opt->follow);
	uint64_t bad_deltas = 0, t0 = 0, wall0 = 0, end_ns = 0;
	/* a lean recording's alerts: those the live root recorded */
	struct lean_alerts la = {.o = &o, .out = &out};
	out.recorded_alerts = o.detail_ns != 0;
	if (out.recorded_alerts)
		lean_alerts_load(&la);
	enum iop_err e = IOP_OK; /* read only once the loop ran */
	while (!stop && (e = rec_follow_next_delta(&fw, &d, &bad_deltas, &stop)) == IOP_OK) {
		if (!state.ticks_applied && d.tick.tick_ns != state.tick_ns) {
			coll_state_free(&state); /* the ticks say otherwise than META */
			rec_opened_state_init(&o, &state, d.tick.tick_ns);
		}
		end_ns = rec_tick_end_ns(&d);
		if (!wall0) {
			t0 = end_ns;
			wall0 = iop_mono_ns();
		}
		pace(opt->speed, t0, wall0, end_ns);
		(void)coll_state_apply(&state, &d);
		if (out.recorded_alerts) {
			if (opt->follow && d.tick.t % 10 == 0)
				lean_alerts_load(&la);
			lean_alerts_upto(&la, end_ns);
		}
		coll_rootout_tick(&out, &d, &state);
	}
	coll_delta_free(&d);
	if (!stop && e != IOP_ERR_NOT_FOUND) {
		fprintf(stderr, "iopulse replay: %s: reading stopped: %s\n", opt->path,
		        iop_strerror(e));
		rc = 2;
	}
	if (out.recorded_alerts) {
		if (!stop) {
			lean_alerts_load(&la);
			lean_alerts_upto(&la, UINT64_MAX);
		}
		coll_rootout_finish_alerts(&out, end_ns ? end_ns : o.start_ns,
		                           coll_alert_list_json(&la.list, end_ns, &state));
		free(la.v);
		coll_alert_list_free(&la.list);
	} else {
		coll_rootout_finish(&out, end_ns ? end_ns : o.start_ns);
	}
	rec_report_damage("replay", opt->path, o.r, bad_deltas);
	if (!rc && out.out.write_errors) /* said once when it happened */
		rc = 2;
	if (!rc && opt->run.fail_on && out.out.worst >= opt->run.fail_on)
		rc = 3;
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	rec_follow_free(&fw);
	coll_rootout_close(&out);
	coll_state_free(&state);
	rec_opened_close(&o);
	return rc;
}

int rec_cmd_replay_view(int argc, char **argv, const struct rec_replay_view *view)
{
	struct rec_replay_opts opt;
	int rc = parse(&opt, argc, argv);
	if (rc)
		return rc < 0 ? 0 : rc;
	if (view && !opt.run.headless && isatty(0) && isatty(1)) {
		char why[256] = "";
		rc = view->run(&opt, why, sizeof why);
		if (rc >= 0)
			return rc;
		if (why[0])
			fprintf(stderr, "iopulse replay: no dashboard (%s); replaying headless\n", why);
		else
			return 2;
	}
	return headless(&opt);
}

int rec_cmd_replay(int argc, char **argv)
{
	return rec_cmd_replay_view(argc, argv, NULL);
}
