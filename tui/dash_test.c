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
#include "hash.h"
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

/* Above the rank cap (1024) the Ranks view draws the tick's distribution
 * of the ranks above its table (model.h, tui_rank_dist), grouped per node
 * too; the 4-rank job has no such line. The slow rank (a tenth of the
 * bytes) is the minimum of the rate. Above 1024 ranks the view groups per
 * node by default (`c` shows the ranks, and they stay shown); the 4-rank
 * job's shows its ranks. */
static void rank_distribution_line(void **st_)
{
	struct tui_dash *d = open_dash(30, 160);
	assert_false(screen_has(" ranks 4  rate"));
	assert_true(screen_has(" 1 Ranks "));
	tui_dash_close(d);
	struct coll_state big;
	assert_int_equal(tui_synth_state(&big, 2048, 3, 7), IOP_OK);
	struct tui_source src = tui_synth_source(&big);
	char why[128];
	d = tui_dash_open(&src, in, out, why, sizeof why);
	assert_non_null(d);
	resize_term(30, 160);
	tui_dash_redraw(d);
	struct coll_rank_dist want;
	assert_int_equal(coll_rank_dist_tick(coll_state_last(&big), &want), IOP_OK);
	assert_int_equal(want.ranks, 2048);
	assert_true(want.bytes[COLL_Q_MIN] * 5 < want.bytes[COLL_Q_MED]);
	char row[256];
	mvinnstr(7, 0, row, COLS);
	if (!strstr(row, " ranks 2048  rate min ") || !strstr(row, " p99 of 2048 min "))
		fail_msg("no distribution line above the table: '%s'", row);
	assert_true(screen_has(" 1 Nodes ")); /* grouped per node by default */
	mvinnstr(8, 0, row, COLS);
	assert_non_null(strstr(row, "NODE"));
	mvinnstr(9, 0, row, COLS);
	assert_non_null(strstr(row, "node0")); /* node000 .. node031 */
	tui_dash_key(d, 'c');
	tui_dash_redraw(d);
	assert_true(screen_has(" ranks 2048  rate min "));
	assert_true(screen_has(" 1 Ranks "));
	tui_dash_key(d, 'r'); /* a rebuild later, the user's choice stays */
	tui_dash_redraw(d);
	assert_true(screen_has(" 1 Ranks "));
	tui_dash_close(d);
	coll_state_free(&big);
}

/* The header's nodes line: the busiest device under the job's files and
 * the highest I/O pressure, from the nodes' samples (node/nodes.h), whole
 * on an 80x24 terminal, above the table (which gives up a row for it);
 * no line without samples. */
static void node_load_line(void **st_)
{
	(void)st_;
	struct coll_state s;
	assert_int_equal(tui_synth_state(&s, 128, 2, 7), IOP_OK); /* 2 nodes */
	struct tui_source src = tui_synth_source(&s);
	char why[128], row[256];
	struct tui_dash *d = tui_dash_open(&src, in, out, why, sizeof why);
	assert_non_null(d);
	resize_term(24, 80);
	tui_dash_redraw(d);
	assert_false(screen_has("busiest"));
	int rows_without = tui_table_rows(d);
	tui_dash_close(d);
	static const char fs[] = "/scratch\text4\tvda";
	struct coll_delta x;
	coll_delta_init(&x, s.last_t + 1, s.tick_ns);
	assert_int_equal(coll_delta_add_name(&x, iop_hash_str(fs), COLL_NAME_FS, fs, strlen(fs)),
	                 IOP_OK);
	assert_true(s.n_hosts >= 2);
	struct coll_node_sample a = {.t = s.last_t + 1, .node = s.hosts[0].node,
	                             .flags = COLL_NODE_PSI | COLL_NODE_FULL, .psi_some_ppm = 300000,
	                             .psi_full_ppm = 190000, .n_fs = 1},
	                        b = {.t = s.last_t + 1, .node = s.hosts[1].node,
	                             .flags = COLL_NODE_PSI, .psi_some_ppm = 50000, .n_fs = 1};
	a.fs[0] = (struct coll_node_fs){.fs = iop_hash_str(fs), .util_ppm = 120000};
	b.fs[0] = (struct coll_node_fs){.fs = iop_hash_str(fs), .util_ppm = 550000};
	assert_int_equal(coll_nodeset_put(&x.nodes, &a), IOP_OK);
	assert_int_equal(coll_nodeset_put(&x.nodes, &b), IOP_OK);
	assert_int_equal(coll_state_apply(&s, &x), IOP_OK);
	coll_delta_free(&x);
	src = tui_synth_source(&s);
	d = tui_dash_open(&src, in, out, why, sizeof why);
	assert_non_null(d);
	resize_term(24, 80);
	tui_dash_redraw(d);
	mvinnstr(7, 0, row, COLS); /* below the tabs */
	char want[128];
	snprintf(want, sizeof want, " nodes  busiest vda 55%% (%s)  io pressure 19%% (%s)",
	         coll_state_host(&s, s.hosts[1].node), coll_state_host(&s, s.hosts[0].node));
	if (strncmp(row, want, strlen(want)))
		fail_msg("line 7 is not '%s': '%s'", want, row);
	assert_int_equal(tui_table_rows(d), rows_without - 1);
	mvinnstr(8, 0, row, COLS); /* then the table's header */
	assert_non_null(strstr(row, "RANK"));
	resize_term(30, 200);
	tui_dash_redraw(d);
	/* grouped per node: each node's row has its busiest device's
	 * utilisation and its pressure (full, else some) */
	tui_dash_key(d, 'c');
	tui_dash_redraw(d);
	assert_true(screen_has(" DEV% "));
	assert_true(screen_has(" IO% "));
	static const char *const figures[2][2] = {{"12%", "19%"}, {"55%", "5%"}};
	for (int h = 0; h < 2; h++) {
		const char *name = coll_state_host(&s, s.hosts[h].node);
		bool found = false;
		for (int y = 9; y < LINES && !found; y++) { /* below the nodes line and the header */
			mvinnstr(y, 0, row, COLS);
			char *at = strstr(row, name);
			if (!at)
				continue;
			found = true;
			char cells[64];
			snprintf(cells, sizeof cells, "64 %6s %6s ", figures[h][0], figures[h][1]);
			if (!strstr(at, cells))
				fail_msg("node %s's row has not '%s': '%s'", name, cells, row);
		}
		if (!found)
			fail_msg("no row of node %s", name);
	}
	tui_dash_close(d);
	coll_state_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(typed_ahead),
		cmocka_unit_test(window_names),
		cmocka_unit_test(replay_wall_at_tick),
		cmocka_unit_test(help_fits_80x24),
		cmocka_unit_test(rank_distribution_line),
		cmocka_unit_test(node_load_line),
		cmocka_unit_test(alerts_replaced_while_paused),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
