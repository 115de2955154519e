/* iopulse: one binary, one subcommand per part (DESIGN.md "Components").
 * This file only dispatches; each subcommand lives with the part it drives. */
#include <malloc.h>
#include <stdio.h>
#include <string.h>

#include "cmd_collector.h"
#include "export.h"
#include "frame.h"
#include "inspect.h"
#include "jobcard.h"
#include "rec.h"
#include "replay_cmd.h"
#include "replay_view.h"
#include "run.h"
#include "run_view.h"
#include "top.h"

struct subcommand {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
};

static const struct subcommand commands[] = {
	{"run", tui_cmd_run, "run a command with every process monitored"},
	{"top", tui_cmd_top, "watch a running job's dashboard (q leaves, the job goes on)"},
	{"jobs", coll_cmd_jobs, "list this user's running jobs"},
	{"collector", coll_cmd_collector, "run one collector of a job's tree (leaf, mid or root)"},
	{"verify", rec_cmd_verify, "check a recording and say what it holds"},
	{"summary", rec_cmd_summary, "print the end-of-job summary of a recording"},
	{"replay", tui_cmd_replay, "replay a recording in the dashboard, or headless"},
	{"export", rec_cmd_export, "write a recording's ticks as CSV or JSON lines, or its events as a Chrome trace"},
};

static void usage(FILE *to)
{
	fprintf(to, "usage: iopulse SUBCOMMAND [OPTIONS] [ARGS]\n"
	            "iopulse: a live I/O monitor for MPI jobs.\n\nsubcommands:\n");
	for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
		fprintf(to, "  %-10s %s\n", commands[i].name, commands[i].help);
	fprintf(to, "\n'iopulse SUBCOMMAND --help' lists its options; --version prints versions.\n");
}

int main(int argc, char **argv)
{
	/* glibc raises its mmap threshold to the largest block freed (up to
	 * 32 MiB), after which the collectors' large passing blocks (a
	 * leaf's delta, a tick's arrays) come from the heap and stay
	 * resident there; fixed at its usual start they are returned when
	 * freed (root_rss_mib_4096: ~8 MiB less, docs/collector.md). */
	(void)mallopt(M_MMAP_THRESHOLD, 128 * 1024);
	if (argc < 2) {
		usage(stderr);
		return 1;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("iopulse %s (wire format %d, recording format %d)\n", IOP_VERSION,
		       IOP_WIRE_VERSION, REC_VERSION);
		return 0;
	}
	for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "iopulse: unknown subcommand '%s'; see 'iopulse --help'\n", argv[1]);
	return 1;
}
