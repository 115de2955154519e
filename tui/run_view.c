/* The dashboard hosted by `iopulse run` (run.h's struct coll_run_view): the
 * in-process live source over the root and the alerts, keys polled by the
 * run loop, a redraw after each tick.
 *
 * While the dashboard owns the terminal, the command's stdout and stderr go
 * to an unlinked temporary file (and its stdin is /dev/null: mpirun would
 * forward keys to rank 0); what it wrote is printed when the dashboard
 * closes, and what it writes after that when iopulse exits. */
#include "run_view.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "dash.h"
#include "run.h"
#include "summary.h"

struct run_view {
	struct tui_live live;
	struct tui_source src;
	struct tui_dash *d;
	int out_fd;
	off_t shown;
};

static struct run_view *pending; /* output still to print at exit */

static void print_output(struct run_view *v)
{
	char buf[65536];
	ssize_t n;
	while ((n = pread(v->out_fd, buf, sizeof buf, v->shown)) > 0) {
		if (fwrite(buf, 1, (size_t)n, stdout) != (size_t)n)
			break;
		v->shown += n;
	}
	fflush(stdout);
}

static void at_exit(void)
{
	if (pending) {
		print_output(pending);
		close(pending->out_fd);
		free(pending);
		pending = NULL;
	}
}

static int temp_file(void)
{
	const char *dir = getenv("TMPDIR");
	char path[4096];
	snprintf(path, sizeof path, "%s/iopulse-out-XXXXXX", dir && *dir ? dir : "/tmp");
	int fd = mkostemp(path, O_CLOEXEC);
	if (fd >= 0)
		unlink(path);
	return fd;
}

static void *view_open(const struct coll_run_live *live)
{
	struct run_view *v = calloc(1, sizeof *v);
	if (!v)
		return NULL;
	v->live.root = live->root;
	v->live.alerts = live->alerts;
	v->live.job = (struct tui_job){.id = live->job->id, .start_ns = live->job->start_ns,
	                               .command = live->job->command, .tick_ns = live->job->tick_ns,
	                               .recording = live->recording};
	tui_source_live(&v->src, &v->live);
	v->out_fd = temp_file();
	char why[256];
	if (v->out_fd >= 0)
		v->d = tui_dash_open(&v->src, stdin, stdout, why, sizeof why);
	else
		snprintf(why, sizeof why, "cannot make a file for the command's output");
	if (!v->d) {
		fprintf(stderr, "iopulse run: no dashboard (%s); running headless\n", why);
		if (v->out_fd >= 0)
			close(v->out_fd);
		free(v);
		return NULL;
	}
	return v;
}

static int view_output_fd(void *p)
{
	struct run_view *v = p;
	return v->out_fd;
}

static int view_input_fd(void *p)
{
	struct run_view *v = p;
	return tui_dash_input_fd(v->d);
}

static bool view_input(void *p)
{
	struct run_view *v = p;
	return tui_dash_input(v->d);
}

static void view_tick(void *p)
{
	struct run_view *v = p;
	tui_dash_update(v->d);
}

static void view_close(void *p)
{
	struct run_view *v = p;
	tui_dash_close(v->d);
	v->d = NULL;
	print_output(v);
	pending = v;
	atexit(at_exit);
}

static const struct coll_run_view run_view = {
	.open = view_open,
	.output_fd = view_output_fd,
	.input_fd = view_input_fd,
	.input = view_input,
	.tick = view_tick,
	.close = view_close,
};

int tui_cmd_run(int argc, char **argv)
{
	return coll_cmd_run_view(argc, argv, &run_view);
}
