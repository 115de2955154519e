/* `iopulse run` with the dashboard: the run loop (collector/run.c) hosts
 * it through struct coll_run_view; this is that viewer. */
#ifndef TUI_RUN_VIEW_H
#define TUI_RUN_VIEW_H

/* `iopulse run`, showing the dashboard when stdout is a terminal. */
int tui_cmd_run(int argc, char **argv);

#endif
