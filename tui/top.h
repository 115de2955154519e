/* `iopulse top`: the dashboard of a running job, over its root's viewer
 * server (top.c, source_remote.c). */
#ifndef TUI_TOP_H
#define TUI_TOP_H

int tui_cmd_top(int argc, char **argv);

#endif
