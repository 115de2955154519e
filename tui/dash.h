/* The dashboard (UX.md "Screen" and "Keys") over a source (source.h).
 *
 * Two ways to drive it:
 *   - hosted: a program with its own poll loop (`iopulse run`) polls
 *     tui_dash_input_fd(), calls tui_dash_input() when it is readable (and
 *     after EINTR: a terminal resize), and tui_dash_update() when its source
 *     has new data;
 *   - standalone: tui_dash_run() polls the terminal and the source's fd
 *     itself and pumps the source (`iopulse top`, `iopulse replay`). */
#ifndef TUI_DASH_H
#define TUI_DASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "source.h"

struct tui_dash;

/* Takes over the terminal on in/out. NULL, with the reason in why, when it
 * cannot: TERM unset, "dumb" or unknown to terminfo (the caller goes on
 * headless). Colour unless NO_COLOR is set; UTF-8 glyphs when the locale's
 * character set is UTF-8, ASCII otherwise. */
struct tui_dash *tui_dash_open(const struct tui_source *src, FILE *in, FILE *out, char *why,
                               size_t whylen);
int tui_dash_input_fd(const struct tui_dash *d);
/* Takes the keys waiting (never blocks) and redraws; false when the user
 * asked to quit. */
bool tui_dash_input(struct tui_dash *d);
/* One key, as if typed; false on quit (tests, benchmark). */
bool tui_dash_key(struct tui_dash *d, int key);
/* The source has new data: rebuild and redraw (a paused display stays). */
void tui_dash_update(struct tui_dash *d);
/* Rebuilds the tables and redraws the whole screen now. */
void tui_dash_redraw(struct tui_dash *d);
/* Restores the terminal and frees; d may be NULL. */
void tui_dash_close(struct tui_dash *d);
/* Standalone: runs until the user quits; 0, or 2 when the source failed. */
int tui_dash_run(struct tui_dash *d);

#endif
