/* Unit tests of the dashboard driven by its keys: a synthetic state (synth.c)
 * behind a source, the screen an ncurses terminal written to /dev/null and
 * read back with mvinnstr(). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dash_int.h"
#include "synth.h"

static struct coll_state state;

static FILE *in, *out;

static int setup(void **st_)
{
	if (tui_synth_state(&state, 4, 10, UINT32_MAX) != IOP_OK)
		return -1;
	setenv("TERM", "xterm-256color", 1);
	unsetenv("NO_COLOR");
	out = fopen("/dev/null", "w");
	in = fopen("/dev/null", "r");
	return out && in ? 0 : -1;
}

static int teardown(void **st_)
{
	coll_state_free(&state);
	fclose(out);
	fclose(in);
	return 0;
}

static struct tui_dash *open_dash(int lines, int cols)
{
	struct tui_source src = tui_synth_source(&state);
	char why[128];
	struct tui_dash *d = tui_dash_open(&src, in, out, why, sizeof why);
	assert_non_null(d);
	resize_term(lines, cols);
	tui_dash_redraw(d);
	return d;
}

static bool screen_has(const char *text)
{
	for (int y = 0; y < LINES; y++) {
		char row[256];
		mvinnstr(y, 0, row, COLS);
		if (strstr(row, text))
			return true;
	}
	return false;
}

/* Keys read together (typed ahead, pasted, a slow link) act one after the
 * other on what the previous ones made: `1` Down Enter typed while the
 * Files view is shown drills into the second rank, not the second file. */
static void typed_ahead(void **st_)
{
	struct tui_dash *d = open_dash(40, 120);
	tui_dash_key(d, '2');
	tui_dash_redraw(d);
	assert_int_equal(d->table.list, TUI_LIST_FILES);
	tui_dash_key(d, '1');
	tui_dash_key(d, KEY_DOWN);
	tui_dash_key(d, '\r');
	tui_dash_redraw(d);
	assert_int_equal(d->drill, TUI_DRILL_RANK);
	assert_int_equal(d->table.list, TUI_LIST_RANK_DETAIL);
	tui_dash_key(d, 27); /* Esc */
	tui_dash_redraw(d);
	assert_int_equal(d->table.list, TUI_LIST_RANKS);
	assert_int_equal(d->sel, 1);
	tui_dash_key(d, '5'); /* the data is there, only no alert */
	tui_dash_redraw(d);
	assert_true(screen_has("(no alerts)"));
	tui_dash_close(d);
}

/* The header names the windows as UX.md does: 1 s, 10 s, 60 s, 5 min. */
static void window_names(void **st_)
{
	struct tui_dash *d = open_dash(40, 160);
	static const char *const names[] = {"window 1 s ", "window 10 s ", "window 60 s ",
	                                    "window 5 min "};
	unsigned at = d->window_idx;
	for (unsigned i = 0; i < TUI_WINDOWS; i++, at = (at + 1) % TUI_WINDOWS) {
		if (!screen_has(names[at]))
			fail_msg("the header does not say '%s'", names[at]);
		tui_dash_key(d, 'w');
		tui_dash_redraw(d);
	}
	tui_dash_close(d);
}

/* In replay the header's wall time is the job's time at the tick shown
 * (it was the whole recording's length at every tick). */
static void replay_wall_at_tick(void **st_)
{
	struct tui_source src = tui_synth_source(&state);
	struct tui_source_ops ops = *src.ops;
	ops.mode = TUI_SRC_MODE_REPLAY;
	src.ops = &ops;
	char why[128];
	struct tui_dash *d = tui_dash_open(&src, in, out, why, sizeof why);
	assert_non_null(d);
	resize_term(40, 160);
	tui_dash_redraw(d);
	assert_true(screen_has("wall 00:10 ")); /* 10 ticks of 1 s from the job's start */
	tui_dash_key(d, KEY_LEFT);
	tui_dash_redraw(d);
	assert_true(screen_has("wall 00:09 "));
	tui_dash_close(d);
}

/* The help overlay on the smallest screen: every key's line whole, on its
 * own row (none wraps onto the next, none is cut off at the bottom). */
static void help_fits_80x24(void **st_)
{
	struct tui_dash *d = open_dash(24, 80);
	tui_dash_key(d, '?');
	tui_dash_redraw(d);
	size_t n;
	const struct tui_keyhelp *k = tui_keys_help(&n);
	for (size_t i = 0; i < n; i++) {
		bool found = false;
		for (int y = 0; y < LINES && !found; y++) {
			char row[256];
			mvinnstr(y, 0, row, COLS);
			found = strstr(row, k[i].what) && strstr(row, k[i].keys);
		}
		if (!found)
			fail_msg("the help line of '%s' is not whole on the screen", k[i].keys);
	}
	tui_dash_close(d);
}

static struct coll_alert_record *alerts;

static const struct coll_alert_record *test_alerts(void *self, size_t *n)
{
	*n = 1;
	return alerts;
}

/* The Alerts view, paused, while the source hands out its alerts in a new
 * array (`iopulse top` fetches them once a tick; a live history grows):
 * the rows show the new records, not what is left in the old array. On
 * the way, the flagged rank's flag word has the CRIT colour. */
static void alerts_replaced_while_paused(void **st_)
{
	struct tui_source_ops ops = *tui_synth_source(&state).ops;
	ops.alerts = test_alerts;
	struct tui_source src = {&ops, &state};
	struct coll_alert_record *first = calloc(1, sizeof *first);
	assert_non_null(first);
	*first = (struct coll_alert_record){.kind = COLL_ALERT_STRAGGLER, .severity = COLL_SEV_CRIT,
	                                    .rank = 2, .layer = -1,
	                                    .start_ns = (uint64_t)(state.last_t - 2) * 1000000000ull};
	snprintf(first->message, sizeof first->message, "rank 2 is slow");
	alerts = first;
	char why[128];
	struct tui_dash *d = tui_dash_open(&src, in, out, why, sizeof why);
	assert_non_null(d);
	resize_term(40, 120);
	tui_dash_key(d, '5');
	tui_dash_key(d, ' ');
	tui_dash_update(d);
	assert_true(screen_has("rank 2 "));
	tui_dash_key(d, '1'); /* the straggler's row: its flag word in the CRIT colour */
	tui_dash_update(d);
	int flagged = 0;
	for (int y = 0; y < LINES; y++) {
		char row[256];
		mvinnstr(y, 0, row, COLS);
		if (!strncmp(row, "CRIT ", 5) && strstr(row, " 2 ")) {
			flagged++;
			assert_int_equal(PAIR_NUMBER(mvinch(y, 0) & A_COLOR), TUI_LOOK_CRIT);
		}
	}
	assert_int_equal(flagged, 1);
	tui_dash_key(d, '5');
	tui_dash_update(d);
	struct coll_alert_record *again = malloc(sizeof *again);
	assert_non_null(again);
	*again = *first;
	memset(first, 0x41, sizeof *first); /* what a freed array may hold */
	alerts = again;
	tui_dash_update(d);
	assert_true(screen_has("rank 2 "));
	assert_false(screen_has("rank 1094795585"));
	tui_dash_close(d);
	free(first);
	free(again);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(typed_ahead),
		cmocka_unit_test(window_names),
		cmocka_unit_test(replay_wall_at_tick),
		cmocka_unit_test(help_fits_80x24),
		cmocka_unit_test(alerts_replaced_while_paused),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
