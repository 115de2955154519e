/* `iopulse run`: monitors a command (single node: the root and the node's
 * leaf live in this process; nothing else to start). */
#ifndef COLL_RUN_H
#define COLL_RUN_H

#include <stdbool.h>

struct coll_root;
struct coll_alerts;
struct coll_job_info;

/* What the run loop lends a viewer it hosts: read them, never change them. */
struct coll_run_live {
	const struct coll_root *root;
	const struct coll_alerts *alerts;
	const struct coll_job_info *job;
	bool recording;
};

/* A viewer hosted in the run loop (the dashboard: tui/run_view.c). Opened
 * when stdout and stdin are terminals and neither --headless nor
 * --format jsonl is given. */
struct coll_run_view {
	/* Before the command starts; NULL: stay headless (it says why). */
	void *(*open)(const struct coll_run_live *live);
	/* Where the command's stdout and stderr go while it is shown (its
	 * stdin is /dev/null then); -1: the terminal. */
	int (*output_fd)(void *v);
	int (*input_fd)(void *v);
	/* Keys and resizes; false when the user quit: the run then ends as
	 * on SIGINT (passed to the command), headless. */
	bool (*input)(void *v);
	void (*tick)(void *v); /* after each closed tick and its alerts */
	/* Gives the terminal back (the job's end, or quit). */
	void (*close)(void *v);
};

int coll_cmd_run(int argc, char **argv);
int coll_cmd_run_view(int argc, char **argv, const struct coll_run_view *view);

#endif
