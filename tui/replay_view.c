/* `iopulse replay FILE` in the dashboard (replay_view.h). */
#include "replay_view.h"

#include <stdio.h>

#include "dash_int.h"
#include "replay_cmd.h"
#include "source_replay.h"

static int run_dashboard(const struct rec_replay_opts *o, char *why, size_t len)
{
	struct tui_source src;
	char err[1024];
	if (tui_source_replay_open(&src, o->path, o->follow, err, sizeof err)) {
		fprintf(stderr, "iopulse replay: %s\n", err);
		why[0] = 0;
		return -1;
	}
	struct tui_dash *d = tui_dash_open(&src, stdin, stdout, why, len);
	if (!d) {
		src.ops->close(src.self);
		return -1;
	}
	double speed = o->speed > 0 ? o->speed : 1;
	d->speed = speed; /* the badge says what the source plays at */
	src.ops->set_speed(src.self, speed);
	tui_dash_redraw(d);
	int rc = tui_dash_run(d);
	tui_dash_close(d);
	char last[512] = ""; /* said again once the terminal is back: TRUNCATED at ... */
	const char *e = src.ops->error(src.self);
	snprintf(last, sizeof last, "%s", e ? e : "");
	src.ops->close(src.self);
	if (last[0])
		fprintf(stderr, "iopulse replay: %s: %s\n", o->path, last);
	return rc;
}

static const struct rec_replay_view view = {.run = run_dashboard};

int tui_cmd_replay(int argc, char **argv)
{
	return rec_cmd_replay_view(argc, argv, &view);
}
