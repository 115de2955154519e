/* `iopulse run`'s command line. */
#include "run_opts.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "summary_files.h"

static void usage(FILE *to)
{
	fprintf(to,
	        "usage: iopulse run [OPTIONS] -- COMMAND [ARGS...]\n"
	        "Runs COMMAND (an MPI launcher and its ranks, or any program) with every\n"
	        "process monitored, and reports its I/O while it runs.\n"
	        "\n"
	        "  --headless            no dashboard (also when stdout or stdin is not a\n"
	        "                        terminal, with --format jsonl, or when TERM is unset,\n"
	        "                        dumb or unknown); q in the dashboard ends the run as\n"
	        "                        Ctrl-C does headless (docs/dashboard.md)\n"
	        "  --format text|jsonl   text: alert lines and the summary on stderr (default);\n"
	        "                        jsonl: JSON lines on stdout (meta, sample per tick,\n"
	        "                        alert, summary)\n"
	        "  --alerts FILE         append alerts as JSON lines to FILE\n"
	        "  --summary-json FILE   write the end-of-job summary as JSON to FILE\n"
	        "  --summary-files N|all the summary's files: the top N by bytes and the top N\n"
	        "                        by time, the rest in one 'other' entry per layer\n"
	        "                        (default 1000); all: every file\n"
	        "  --record FILE         record the session to FILE (.iop)\n"
	        "  --record-detail view|full|DUR  with --record: view (default): every tick's\n"
	        "                        rows per rank and layer, and per file and call site up\n"
	        "                        to 256 a tick (beyond: the top 256 by bytes and by\n"
	        "                        time, those an alert names, one 'other' row), so a\n"
	        "                        replay shows what the live views showed; full: every\n"
	        "                        row of every tick; DUR (60s, 5m): lean, the per-layer\n"
	        "                        rows of every tick and the whole tick every DUR and\n"
	        "                        when a process ends (docs/recording.md)\n"
	        "  --record-ranks N      with the default detail: above N ranks a tick (default\n"
	        "                        1024), keep the rows of the ranks an alert names and of\n"
	        "                        the 16 at each end of throughput and of p99, the others\n"
	        "                        summed per node, and the ranks' distribution\n"
	        "  --record-events       with --record: keep every event too (EVENTS frames), for\n"
	        "                        'iopulse export --format chrome'; the file grows with\n"
	        "                        the calls (tens of bytes each)\n"
	        "  --tick MS             tick length in milliseconds, 100 to 60000 (default 1000)\n"
	        "  --history-mib N       memory for the history (default 48): past it, the\n"
	        "                        oldest ticks keep only their per-layer rows\n"
	        "  --rules FILE          alert thresholds (JSON, see docs/alerts.md)\n"
	        "  --fail-on warn|crit   exit 3 when such an alert fired and COMMAND succeeded\n"
	        "  --status-every DUR    a status line on stderr every DUR (e.g. 30s, 2m; default off)\n"
	        "  --also-preload LIB    preload LIB below the shim in every process (tests:\n"
	        "                        the fault-injection library)\n"
	        "  --listen URL          where the leaves of other nodes reach this root\n"
	        "                        (default tcp://*:PORT, the first free port from 7411,\n"
	        "                        announced at this host's first IPv4 address)\n"
	        "  --view URL            where viewers (iopulse top) reach this root, besides\n"
	        "                        ipc://RUNDIR/view.ipc (default with a --listen or\n"
	        "                        default listen address: tcp://*:PORT, the first free\n"
	        "                        port from 7461 whose next one is free too; the job\n"
	        "                        card's root is this address)\n"
	        "  -h, --help            this text\n"
	        "\n"
	        "Exit status: COMMAND's own; 3 with --fail-on when an alert matched and COMMAND\n"
	        "succeeded; 1 usage; 2 runtime error (before COMMAND could run).\n"
	        "SIGUSR1 prints a status line; SIGTERM and SIGINT are passed to COMMAND and\n"
	        "iopulse ends cleanly after it (summary printed, recording closed).\n");
}

/* "30s", "500ms", "2m", "1h", a bare number is seconds; 0 on error. */
uint64_t coll_parse_duration_ns(const char *s)
{
	char *end;
	double v = strtod(s, &end);
	if (end == s || v <= 0)
		return 0;
	double mul = 1e9;
	if (!strcmp(end, "ms"))
		mul = 1e6;
	else if (!strcmp(end, "m") || !strcmp(end, "min"))
		mul = 60e9;
	else if (!strcmp(end, "h"))
		mul = 3600e9;
	else if (*end && strcmp(end, "s"))
		return 0;
	return (uint64_t)(v * mul);
}

int coll_parse_format(const char *s, bool *jsonl)
{
	if (strcmp(s, "jsonl") && strcmp(s, "text"))
		return -1;
	*jsonl = !strcmp(s, "jsonl");
	return 0;
}

int coll_parse_fail_on(const char *s, int *fail_on)
{
	if (strcmp(s, "warn") && strcmp(s, "crit"))
		return -1;
	*fail_on = !strcmp(s, "warn") ? 1 : 2;
	return 0;
}

static void collector_usage(FILE *to)
{
	fprintf(to,
	        "usage: iopulse collector --role leaf|mid|root [OPTIONS]\n"
	        "One collector of a job's tree (docs/collector.md, \"The tree\"). `iopulse run`\n"
	        "starts what a job needs by itself; this is for trees set up by hand.\n"
	        "\n"
	        "  --role leaf|mid|root  leaf: takes the ranks of its node (ipc:// in --dir);\n"
	        "                        mid: merges its children's deltas; root: keeps the\n"
	        "                        windows, runs the alerts, writes outputs\n"
	        "  --listen URL          (mid, root) where children connect, e.g. tcp://*:7411;\n"
	        "                        may be given up to 8 times\n"
	        "  --parent URL          (leaf, mid) the parent's address (default\n"
	        "                        $IOPULSE_PARENT)\n"
	        "  --dir DIR             (leaf) directory of its ipc sockets (default\n"
	        "                        $TMPDIR/iopulse-JOB-HOST)\n"
	        "  --view URL            (root) where viewers (iopulse top URL) reach it\n"
	        "                        (default ipc://$TMPDIR/iopulse-JOB-view.ipc)\n"
	        "  --card FILE           the job card (key and id); default $IOPULSE_KEY and\n"
	        "                        $IOPULSE_JOB\n"
	        "  --exit-idle DUR       (leaf) exit once every process it saw has ended and DUR\n"
	        "                        passed without a new one (default: run until SIGTERM)\n"
	        "  --tick MS             tick length, as for iopulse run (default 1000)\n"
	        "  --format, --alerts, --summary-json, --summary-files, --record, --record-detail,\n"
	        "  --record-ranks, --rules,\n"
	        "  --status-every,       (root) as for iopulse run; the summary is written when\n"
	        "  --history-mib         it ends (SIGTERM or SIGINT)\n"
	        "  -h, --help            this text\n"
	        "\n"
	        "Exit status: 0 after SIGTERM/SIGINT or --exit-idle; 1 usage; 2 runtime error.\n");
}

static const char *who = "iopulse run";

static int bad(const char *msg, const char *arg)
{
	fprintf(stderr, "%s: %s '%s'; see '%s --help'\n", who, msg, arg, who);
	return 1;
}

static int parse(struct run_opts *o, int argc, char **argv, bool collector);

int coll_run_opts_parse(struct run_opts *o, int argc, char **argv)
{
	who = "iopulse run";
	return parse(o, argc, argv, false);
}

int coll_collector_opts_parse(struct run_opts *o, int argc, char **argv)
{
	who = "iopulse collector";
	return parse(o, argc, argv, true);
}

bool coll_same_file(const char *a, const char *b)
{
	struct stat sa, sb;
	return a && b &&
	       (!strcmp(a, b) || (stat(a, &sa) == 0 && stat(b, &sb) == 0 &&
	                          sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino));
}

static int parse(struct run_opts *o, int argc, char **argv, bool collector)
{
	memset(o, 0, sizeof(*o));
	o->tick_ns = 1000000000ull;
	enum { O_FORMAT = 256, O_ALERTS, O_SUMMARY, O_RECORD, O_TICK, O_RULES, O_FAIL, O_STATUS, O_PRELOAD, O_LISTEN, O_ROLE, O_PARENT, O_DIR, O_CARD, O_IDLE, O_VIEW, O_EVENTS, O_HISTORY, O_DETAIL, O_RANKS, O_SUMFILES };
	static const struct option opts[] = {
		{"headless", no_argument, NULL, 'H'},       {"format", required_argument, NULL, O_FORMAT},
		{"alerts", required_argument, NULL, O_ALERTS}, {"summary-json", required_argument, NULL, O_SUMMARY},
		{"record", required_argument, NULL, O_RECORD}, {"tick", required_argument, NULL, O_TICK},
		{"record-events", no_argument, NULL, O_EVENTS},
		{"record-detail", required_argument, NULL, O_DETAIL},
		{"record-ranks", required_argument, NULL, O_RANKS},
		{"summary-files", required_argument, NULL, O_SUMFILES},
		{"rules", required_argument, NULL, O_RULES},   {"fail-on", required_argument, NULL, O_FAIL},
		{"status-every", required_argument, NULL, O_STATUS},
		{"also-preload", required_argument, NULL, O_PRELOAD},
		{"listen", required_argument, NULL, O_LISTEN}, {"view", required_argument, NULL, O_VIEW},
		{"role", required_argument, NULL, O_ROLE},     {"parent", required_argument, NULL, O_PARENT},
		{"dir", required_argument, NULL, O_DIR},       {"card", required_argument, NULL, O_CARD},
		{"exit-idle", required_argument, NULL, O_IDLE},
		{"history-mib", required_argument, NULL, O_HISTORY},
		{"help", no_argument, NULL, 'h'},           {0}};
	optind = 1;
	int ch;
	while ((ch = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		char *end;
		switch (ch) {
		case 'H': o->headless = true; break;
		case O_FORMAT:
			if (coll_parse_format(optarg, &o->jsonl))
				return bad("unknown format (text or jsonl)", optarg);
			break;
		case O_ALERTS: o->alerts_path = optarg; break;
		case O_SUMMARY: o->summary_path = optarg; break;
		case O_SUMFILES:
			if (coll_parse_summary_files(optarg, &o->summary_files))
				return bad("--summary-files takes all or 1 to 16777216 (files), not", optarg);
			break;
		case O_RECORD: o->record_path = optarg; break;
		case O_EVENTS: o->record_events = true; break;
		case O_DETAIL:
			o->record_detail_set = true;
			if (!strcmp(optarg, "view")) {
				o->record_detail_ns = 0;
				break;
			}
			o->record_detail_ns = !strcmp(optarg, "full") ? UINT64_MAX
			                                              : coll_parse_duration_ns(optarg);
			if (!o->record_detail_ns ||
			    (o->record_detail_ns != UINT64_MAX &&
			     o->record_detail_ns > 86400 * 1000000000ull))
				return bad("--record-detail takes view, full or a duration up to 24h (60s, 5m), not",
				           optarg);
			break;
		case O_RULES: o->rules_path = optarg; break;
		case O_PRELOAD: o->also_preload = optarg; break;
		case O_LISTEN:
			if (o->n_listens == sizeof o->listens / sizeof *o->listens)
				return bad("too many --listen", optarg);
			o->listen = o->listens[o->n_listens++] = optarg;
			break;
		case O_ROLE:
			o->role = !strcmp(optarg, "leaf") ? ROLE_LEAF : !strcmp(optarg, "mid") ? ROLE_MID
			        : !strcmp(optarg, "root") ? ROLE_ROOT : ROLE_NONE;
			if (!collector || o->role == ROLE_NONE)
				return bad("--role takes leaf, mid or root (iopulse collector), not", optarg);
			break;
		case O_PARENT: o->parent = optarg; break;
		case O_DIR: o->dir = optarg; break;
		case O_VIEW: o->view = optarg; break;
		case O_CARD: o->card = optarg; break;
		case O_IDLE:
			if (!(o->exit_idle_ns = coll_parse_duration_ns(optarg)))
				return bad("not a duration (e.g. 2s)", optarg);
			break;
		case O_TICK: {
			unsigned long ms = strtoul(optarg, &end, 10);
			if (*end || ms < 100 || ms > 60000)
				return bad("tick must be 100 to 60000 ms, not", optarg);
			o->tick_ns = ms * 1000000ull;
			break;
		}
		case O_RANKS: {
			unsigned long n = strtoul(optarg, &end, 10);
			if (*end || !*optarg || n < 1 || n > (1ul << 24))
				return bad("--record-ranks takes 1 to 16777216 (ranks), not", optarg);
			o->record_rank_cap = (uint32_t)n;
			break;
		}
		case O_HISTORY: {
			unsigned long mib = strtoul(optarg, &end, 10);
			if (*end || !*optarg || mib < 1 || mib > 1048576)
				return bad("--history-mib takes 1 to 1048576 (MiB), not", optarg);
			o->history_bytes = (uint64_t)mib << 20;
			break;
		}
		case O_FAIL:
			if (coll_parse_fail_on(optarg, &o->fail_on))
				return bad("--fail-on takes warn or crit, not", optarg);
			break;
		case O_STATUS:
			if (!(o->status_every_ns = coll_parse_duration_ns(optarg)))
				return bad("not a duration (e.g. 30s, 2m)", optarg);
			break;
		case 'h': (collector ? collector_usage : usage)(stdout); return -1;
		default: (collector ? collector_usage : usage)(stderr); return 1;
		}
	}
	if (coll_same_file(o->record_path, o->summary_path) ||
	    coll_same_file(o->record_path, o->alerts_path) ||
	    coll_same_file(o->summary_path, o->alerts_path))
		return bad("--record, --summary-json and --alerts need a file each, not one",
		           coll_same_file(o->summary_path, o->alerts_path) ? o->summary_path
		                                                           : o->record_path);
	if ((o->record_events || o->record_detail_set || o->record_rank_cap) && !o->record_path) {
		fprintf(stderr, "iopulse %s: %s needs --record FILE\n", collector ? "collector" : "run",
		        o->record_events ? "--record-events"
		        : o->record_detail_set ? "--record-detail" : "--record-ranks");
		return 1;
	}
	if (o->record_rank_cap && o->record_detail_ns) {
		fprintf(stderr, "iopulse %s: --record-ranks is for the default detail (view), not "
		        "--record-detail %s\n", collector ? "collector" : "run",
		        o->record_detail_ns == UINT64_MAX ? "full" : "DUR");
		return 1;
	}
	if (collector) {
		if (optind < argc)
			return bad("unexpected argument", argv[optind]);
		if (o->role == ROLE_NONE) {
			fprintf(stderr, "iopulse collector: --role leaf|mid|root is required\n");
			return 1;
		}
		if (o->role != ROLE_ROOT && !o->parent && !(o->parent = getenv("IOPULSE_PARENT"))) {
			fprintf(stderr, "iopulse collector: a %s needs --parent URL (or IOPULSE_PARENT)\n",
			        o->role == ROLE_LEAF ? "leaf" : "mid");
			return 1;
		}
		if (o->role != ROLE_LEAF && !o->n_listens) {
			fprintf(stderr, "iopulse collector: a %s needs --listen URL\n",
			            o->role == ROLE_MID ? "mid" : "root");
			return 1;
		}
		return 0;
	}
	if (o->role != ROLE_NONE || o->parent || o->dir || o->card || o->exit_idle_ns || o->n_listens > 1)
		return bad("an option of iopulse collector, not of iopulse run:", argv[optind - 1]);
	if (optind >= argc) {
		fprintf(stderr, "iopulse run: no command to run; usage: iopulse run [OPTIONS] -- COMMAND...\n");
		return 1;
	}
	o->cmd = argv + optind;
	return 0;
}
