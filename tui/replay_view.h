/* `iopulse replay` with the dashboard: the replay source (source_replay.c)
 * under tui_dash_run(); replay/replay_cmd.c does the rest (options,
 * headless). */
#ifndef TUI_REPLAY_VIEW_H
#define TUI_REPLAY_VIEW_H

int tui_cmd_replay(int argc, char **argv);

#endif
