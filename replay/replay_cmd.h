/* `iopulse replay FILE`: the dashboard over the recording when stdin and
 * stdout are terminals (tui/replay_view.c gives it through struct
 * rec_replay_view), headless otherwise: the recording's DELTA frames are
 * fed, in order, to the same window state, alert engine and outputs a live
 * root uses (collector/rootout.h), so alerts (re-run, optionally with
 * other thresholds) and the summary come out as `iopulse run` writes them. */
#ifndef REC_REPLAY_CMD_H
#define REC_REPLAY_CMD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "run_opts.h"

struct rec_replay_opts {
	struct run_opts run; /* the output options, as for iopulse run */
	const char *path;
	double speed;        /* 0: as fast as possible (headless); the dashboard plays at 1x */
	bool follow;         /* the file is still being written: keep up with it */
};

/* The dashboard, lent by tui/. run() returns the exit status, or -1 when
 * there is no dashboard (the reason in why): replay then goes on headless. */
struct rec_replay_view {
	int (*run)(const struct rec_replay_opts *o, char *why, size_t len);
};

int rec_cmd_replay(int argc, char **argv); /* headless only */
int rec_cmd_replay_view(int argc, char **argv, const struct rec_replay_view *view);

/* "TRUNCATED at <time>", damaged regions and undecodable ticks, on stderr
 * for `iopulse <cmd>`, when the recording has any. */
struct rec_reader;
void rec_report_damage(const char *cmd, const char *path, struct rec_reader *r,
                       uint64_t bad_deltas);

#endif
