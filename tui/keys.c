/* The key table (UX.md "Keys"): each key maps to an action that changes
 * the dashboard's state and returns what must happen next (htop's
 * Action.c); dash.c rebuilds and draw.c redraws. The help overlay is made
 * from the same table. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "dash_int.h"
#include "events.h"
#include "fsmap.h"

#define CTRL(c) ((c) & 0x1f)
#define KEY_ESC 27

typedef enum tui_act action_fn(struct tui_dash *d, int key);

static void tick_range(const struct tui_dash *d, int64_t *first, int64_t *last)
{
	d->src.ops->range(d->src.self, first, last);
}

static uint64_t tick_ns(const struct tui_dash *d)
{
	uint64_t t = d->src.ops->state(d->src.self)->tick_ns;
	return t ? t : 1000000000ull;
}

/* Moves the time shown to tick t (pausing a live display first). */
static enum tui_act go_to(struct tui_dash *d, int64_t t)
{
	int64_t first, last;
	tick_range(d, &first, &last);
	if (last == INT64_MIN) {
		tui_dash_notice(d, "no tick yet");
		return TUI_ACT_DRAW;
	}
	if (!d->paused) {
		d->paused = true;
		d->cursor = last;
		if (d->src.ops->set_paused)
			d->src.ops->set_paused(d->src.self, true);
	}
	d->cursor = t < first ? first : t > last ? last : t;
	if (d->src.ops->seek)
		d->cursor = d->src.ops->seek(d->src.self, d->cursor);
	return TUI_ACT_REBUILD;
}

static enum tui_act step(struct tui_dash *d, int64_t seconds)
{
	int64_t ticks = seconds * 1000000000ll / (int64_t)tick_ns(d);
	if (!ticks)
		ticks = seconds < 0 ? -1 : 1;
	int64_t from = d->paused ? d->cursor : tui_dash_t_end(d);
	return go_to(d, from + ticks);
}

static enum tui_act a_quit(struct tui_dash *d, int key)
{
	return TUI_ACT_QUIT;
}

static enum tui_act a_help(struct tui_dash *d, int key)
{
	d->help = !d->help;
	return TUI_ACT_DRAW;
}

static enum tui_act a_escape(struct tui_dash *d, int key)
{
	if (d->help) {
		d->help = false;
		return TUI_ACT_DRAW;
	}
	if (d->drill != TUI_DRILL_NONE) {
		d->drill = TUI_DRILL_NONE;
		d->sel = d->drill_sel;
		d->top = d->drill_top;
		d->n_held = 0;
		return TUI_ACT_REBUILD;
	}
	if (d->heat) {
		d->heat = false;
		return TUI_ACT_REBUILD;
	}
	return TUI_ACT_NONE;
}

static enum tui_act set_view(struct tui_dash *d, enum tui_view v)
{
	d->view = v;
	d->drill = TUI_DRILL_NONE;
	d->sel = d->top = 0;
	d->n_held = 0;
	return TUI_ACT_REBUILD;
}

static enum tui_act a_view_next(struct tui_dash *d, int key)
{
	int n = TUI_VIEW__COUNT, step_ = key == KEY_BTAB ? n - 1 : 1;
	return set_view(d, (enum tui_view)((d->view + step_) % n));
}

static enum tui_act a_view_n(struct tui_dash *d, int key)
{
	return set_view(d, (enum tui_view)(key - '1'));
}

static enum tui_act a_move(struct tui_dash *d, int key)
{
	size_t n = d->table.n, page = (size_t)(tui_table_rows(d) > 1 ? tui_table_rows(d) - 1 : 1);
	if (!n)
		return TUI_ACT_NONE;
	switch (key) {
	case KEY_UP:
	case 'k': d->sel = d->sel ? d->sel - 1 : 0; break;
	case KEY_DOWN:
	case 'j': d->sel = d->sel + 1 < n ? d->sel + 1 : n - 1; break;
	case KEY_PPAGE: d->sel = d->sel > page ? d->sel - page : 0; break;
	case KEY_NPAGE: d->sel = d->sel + page < n ? d->sel + page : n - 1; break;
	case KEY_HOME: d->sel = 0; break;
	case KEY_END: d->sel = n - 1; break;
	}
	d->sel_id = d->table.rows[d->sel].id;
	return TUI_ACT_DRAW;
}

static enum tui_act a_enter(struct tui_dash *d, int key)
{
	if (d->sel >= d->table.n || d->drill != TUI_DRILL_NONE)
		return TUI_ACT_NONE;
	const struct tui_row *r = &d->table.rows[d->sel];
	if (r->kind == TUI_ROW_RANK) {
		d->drill = TUI_DRILL_RANK;
		d->drill_rank = r->rank;
		snprintf(d->drill_label, sizeof d->drill_label, "rank %u", r->rank);
	} else if (r->kind == TUI_ROW_FILE) {
		d->drill = TUI_DRILL_FILE;
		d->drill_file = r->id;
		snprintf(d->drill_label, sizeof d->drill_label, "%s", r->name ? r->name : "?");
	} else if (r->kind == TUI_ROW_FS && r->id != COLL_ID_OTHER) {
		d->drill = TUI_DRILL_FS;
		d->drill_file = r->id; /* the file system's id */
		struct coll_fs fs;
		if (r->name && coll_fs_parse(r->name, strlen(r->name), &fs))
			snprintf(d->drill_label, sizeof d->drill_label, "%.60s (%.20s, %.40s)", fs.point,
			         fs.type, fs.device);
		else
			snprintf(d->drill_label, sizeof d->drill_label, "%s", r->name ? r->name : "?");
	} else {
		tui_dash_notice(d, "Enter drills down from a rank, a file or a file system");
		return TUI_ACT_DRAW;
	}
	d->drill_sel = d->sel;
	d->drill_top = d->top;
	d->sel = d->top = 0;
	d->n_held = 0;
	return TUI_ACT_REBUILD;
}

static enum tui_act a_sort(struct tui_dash *d, int key)
{
	enum tui_list l = tui_dash_list(d);
	const struct tui_viewdef *v = tui_viewdef(l);
	if (key == 'I') {
		d->sort_desc[l] = !d->sort_desc[l];
	} else {
		unsigned i = 0;
		while (i < v->n_cols && v->cols[i] != d->sort_col[l])
			i++;
		if (i == v->n_cols)
			i = key == '<' ? 0 : v->n_cols - 1;
		i = key == '<' ? (i + v->n_cols - 1) % v->n_cols : (i + 1) % v->n_cols;
		d->sort_col[l] = v->cols[i];
	}
	d->hold = false;
	tui_dash_notice(d, "sorted by %s, %s", tui_col_label(d->sort_col[l]),
	                d->sort_desc[l] ? "descending" : "ascending");
	return TUI_ACT_REBUILD;
}

static enum tui_act a_hold(struct tui_dash *d, int key)
{
	d->hold = !d->hold;
	tui_dash_notice(d, d->hold ? "row order held (=)" : "row order follows the sort");
	return TUI_ACT_REBUILD;
}

static enum tui_act a_follow(struct tui_dash *d, int key)
{
	d->follow = !d->follow;
	if (d->sel < d->table.n)
		d->sel_id = d->table.rows[d->sel].id;
	tui_dash_notice(d, d->follow ? "following the selected row" : "not following");
	return TUI_ACT_DRAW;
}

static enum tui_act a_filter(struct tui_dash *d, int key)
{
	d->prompt = TUI_PROMPT_FILTER;
	snprintf(d->pbuf, sizeof d->pbuf, "%s", d->filter_text); /* `/` recalls it */
	d->plen = strlen(d->pbuf);
	return TUI_ACT_DRAW;
}

static enum tui_act a_filter_clear(struct tui_dash *d, int key)
{
	memset(&d->filter, 0, sizeof d->filter);
	d->filter_text[0] = 0;
	tui_dash_notice(d, "filter cleared");
	return TUI_ACT_REBUILD;
}

static enum tui_act a_layer(struct tui_dash *d, int key)
{
	d->layer = d->layer + 1 >= IOP_LAYER__COUNT ? -1 : d->layer + 1;
	return TUI_ACT_REBUILD;
}

static enum tui_act a_window(struct tui_dash *d, int key)
{
	d->window_idx = (d->window_idx + 1) % TUI_WINDOWS;
	return TUI_ACT_REBUILD;
}

static enum tui_act a_group(struct tui_dash *d, int key)
{
	d->group = !d->group;
	d->group_chosen = true;
	return set_view(d, TUI_VIEW_RANKS);
}

static enum tui_act a_log(struct tui_dash *d, int key)
{
	if (d->view == TUI_VIEW_ALERTS && d->drill == TUI_DRILL_NONE)
		return set_view(d, d->view_before_log);
	d->view_before_log = d->view;
	return set_view(d, TUI_VIEW_ALERTS);
}

static enum tui_act a_units(struct tui_dash *d, int key)
{
	d->fixed_units = !d->fixed_units;
	return TUI_ACT_DRAW;
}

static enum tui_act a_color(struct tui_dash *d, int key)
{
	d->color = !d->color && has_colors();
	if (d->color)
		tui_scheme_init(true);
	tui_dash_notice(d, d->color ? "colour on" : "colour off (x)");
	return TUI_ACT_DRAW;
}

static enum tui_act a_pause(struct tui_dash *d, int key)
{
	if (d->paused) {
		d->paused = false;
		if (d->src.ops->set_paused)
			d->src.ops->set_paused(d->src.self, false);
		if (d->src.ops->seek && d->src.ops->mode != TUI_SRC_MODE_REPLAY) {
			int64_t first, last; /* live: the newest tick (a replay plays on) */
			tick_range(d, &first, &last);
			d->src.ops->seek(d->src.self, last);
		}
		return TUI_ACT_REBUILD;
	}
	return go_to(d, tui_dash_t_end(d));
}

static enum tui_act a_time(struct tui_dash *d, int key)
{
	switch (key) {
	case KEY_LEFT:
	case 't': return go_to(d, (d->paused ? d->cursor : tui_dash_t_end(d)) - 1);
	case KEY_RIGHT:
	case 'T': return go_to(d, (d->paused ? d->cursor : tui_dash_t_end(d)) + 1);
	case '[': return step(d, -60);
	case ']': return step(d, 60);
	case '{': return step(d, -600);
	case '}': return step(d, 600);
	}
	return TUI_ACT_NONE;
}

static enum tui_act a_rewind(struct tui_dash *d, int key)
{
	int64_t first, last;
	tick_range(d, &first, &last);
	if (key == 'r')
		return go_to(d, first);
	if (d->src.ops->mode == TUI_SRC_MODE_REPLAY)
		return go_to(d, last); /* Z: the recording's end */
	if (d->paused)
		return a_pause(d, key); /* Z: live again */
	return TUI_ACT_NONE;
}

static enum tui_act a_seek(struct tui_dash *d, int key)
{
	d->prompt = TUI_PROMPT_SEEK;
	d->pbuf[0] = 0;
	d->plen = 0;
	return TUI_ACT_DRAW;
}

static enum tui_act a_speed(struct tui_dash *d, int key)
{
	if (!d->src.ops->set_speed) {
		tui_dash_notice(d, "speed: live data comes at one tick per tick");
		return TUI_ACT_DRAW;
	}
	d->speed = key == '+' ? d->speed * 2 : key == '-' ? d->speed / 2 : 1;
	d->src.ops->set_speed(d->src.self, d->speed);
	tui_dash_notice(d, "speed %gx", d->speed);
	return TUI_ACT_DRAW;
}

static enum tui_act a_next_alert(struct tui_dash *d, int key)
{
	size_t n;
	const struct coll_alert_record *a = d->src.ops->alerts(d->src.self, &n);
	int64_t cur = d->paused ? d->cursor : tui_dash_t_end(d);
	uint64_t tns = tick_ns(d);
	long best = -1;
	for (size_t i = 0; i < n; i++) {
		int64_t t = (int64_t)(a[i].start_ns / tns);
		bool later = key == 'n' ? t > cur : t < cur;
		if (!later)
			continue;
		int64_t bt = best < 0 ? 0 : (int64_t)(a[best].start_ns / tns);
		if (best < 0 || (key == 'n' ? t < bt : t > bt))
			best = (long)i;
	}
	if (best < 0) {
		tui_dash_notice(d, "no %s alert", key == 'n' ? "later" : "earlier");
		return TUI_ACT_DRAW;
	}
	tui_dash_notice(d, "%s %s: %s", a[best].severity == COLL_SEV_CRIT ? "CRIT" : "WARN",
	                coll_alert_kind_name(a[best].kind), a[best].message);
	return go_to(d, (int64_t)(a[best].start_ns / tns));
}

static enum tui_act a_save(struct tui_dash *d, int key)
{
	char txt[512], json[512];
	if (tui_save_view(d, txt, json, sizeof txt) == 0)
		tui_dash_notice(d, "saved %.*s.txt and .json", (int)strlen(txt) - 4, txt);
	else
		tui_dash_notice(d, "cannot save the view: %s", strerror(errno));
	return TUI_ACT_DRAW;
}

static enum tui_act a_redraw(struct tui_dash *d, int key)
{
	clearok(curscr, TRUE);
	return TUI_ACT_REBUILD;
}

static enum tui_act a_heat(struct tui_dash *d, int key)
{
	if (key == 'M') {
		d->heat_metric = (d->heat_metric + 1) % TUI_HEAT__COUNT;
		d->heat = true;
	} else {
		d->heat = !d->heat;
	}
	if (d->heat && (d->view != TUI_VIEW_RANKS || d->drill))
		set_view(d, TUI_VIEW_RANKS);
	return TUI_ACT_REBUILD;
}

static enum tui_act a_resize(struct tui_dash *d, int key)
{
	return TUI_ACT_REBUILD;
}

static const struct keydef {
	int key;
	action_fn *fn;
} keys[] = {
	{'q', a_quit}, {KEY_F(10), a_quit}, {CTRL('c'), a_quit},
	{'?', a_help}, {'h', a_help}, {KEY_F(1), a_help}, {KEY_ESC, a_escape},
	{'\t', a_view_next}, {KEY_BTAB, a_view_next},
	{'1', a_view_n}, {'2', a_view_n}, {'3', a_view_n}, {'4', a_view_n}, {'5', a_view_n},
	{'6', a_view_n},
	{KEY_UP, a_move}, {KEY_DOWN, a_move}, {'j', a_move}, {'k', a_move}, {KEY_PPAGE, a_move},
	{KEY_NPAGE, a_move}, {KEY_HOME, a_move}, {KEY_END, a_move},
	{'\n', a_enter}, {'\r', a_enter}, {KEY_ENTER, a_enter},
	{'<', a_sort}, {'>', a_sort}, {KEY_F(6), a_sort}, {'I', a_sort},
	{'=', a_hold}, {'F', a_follow},
	{'/', a_filter}, {KEY_F(4), a_filter}, {KEY_DC, a_filter_clear},
	{'L', a_layer}, {'w', a_window}, {'c', a_group}, {'e', a_log},
	{'U', a_units}, {'x', a_color},
	{' ', a_pause}, {'z', a_pause},
	{KEY_LEFT, a_time}, {KEY_RIGHT, a_time}, {'t', a_time}, {'T', a_time},
	{'[', a_time}, {']', a_time}, {'{', a_time}, {'}', a_time},
	{'b', a_seek}, {'r', a_rewind}, {'Z', a_rewind},
	{'+', a_speed}, {'-', a_speed}, {'0', a_speed},
	{'n', a_next_alert}, {'N', a_next_alert},
	{'S', a_save}, {CTRL('l'), a_redraw},
	{'H', a_heat}, {'M', a_heat},
	{KEY_RESIZE, a_resize},
};

static const struct tui_keyhelp help[] = {
	{"? h F1 / Esc", "help / close, leave drill-down"},
	{"q F10 Ctrl-C", "quit (iopulse run: ends the job as Ctrl-C)"},
	{"Tab S-Tab 1-6", "views: Ranks Files Layers Sites Alerts Filesystems"},
	{"arrows j k PgUp PgDn", "move; Enter drills down"},
	{"< > F6 / I", "sort column / invert"},
	{"= / F", "hold row order / follow the selected row"},
	{"/ F4, Del", "filter a|b !x rank=0-3 file=*.h5 layer=mpiio, clear"},
	{"L", "layer scope"},
	{"w", "window 1s 10s 60s 5min"},
	{"c", "group ranks per node"},
	{"H / M", "heatmap / metric: rate, p99, io pressure, device"},
	{"e", "alert log"},
	{"U / x", "fixed units / no colour"},
	{"Space z", "pause / resume the display"},
	{"left right t T", "one tick back / forward"},
	{"[ ] { }", "-1/+1 min, -10/+10 min"},
	{"b", "seek: HH:MM[:SS] +30s -5m 40%"},
	{"r / Z", "rewind to start / live again (replay: end)"},
	{"+ - 0", "replay speed x2, /2, 1x"},
	{"n N", "next / previous alert"},
	{"S", "save the view (text and JSON)"},
	{"Ctrl-L", "redraw"},
};

const struct tui_keyhelp *tui_keys_help(size_t *n)
{
	*n = sizeof help / sizeof *help;
	return help;
}

static enum tui_act prompt_done(struct tui_dash *d)
{
	enum tui_prompt p = d->prompt;
	d->prompt = TUI_PROMPT_NONE;
	d->pbuf[d->plen] = 0;
	if (p == TUI_PROMPT_FILTER) {
		char err[160];
		if (tui_filter_parse(&d->filter, d->pbuf, err, sizeof err)) {
			tui_dash_notice(d, "filter: %s", err);
			return TUI_ACT_DRAW;
		}
		snprintf(d->filter_text, sizeof d->filter_text, "%s", d->pbuf);
		d->sel = d->top = 0;
		return TUI_ACT_REBUILD;
	}
	int64_t first, last, t;
	tick_range(d, &first, &last);
	int64_t cur = d->paused ? d->cursor : last;
	if (last == INT64_MIN || tui_seek_parse(d->pbuf, cur, first, last, tick_ns(d), &t)) {
		tui_dash_notice(d, "seek: want HH:MM[:SS], +30s, -5m or 40%%");
		return TUI_ACT_DRAW;
	}
	return go_to(d, t);
}

static enum tui_act prompt_key(struct tui_dash *d, int key)
{
	switch (key) {
	case KEY_ESC: d->prompt = TUI_PROMPT_NONE; return TUI_ACT_DRAW;
	case '\n':
	case '\r':
	case KEY_ENTER: return prompt_done(d);
	case KEY_BACKSPACE:
	case 127:
	case 8:
		if (d->plen)
			d->pbuf[--d->plen] = 0;
		return TUI_ACT_DRAW;
	case CTRL('c'): return TUI_ACT_QUIT;
	case CTRL('u'): d->plen = 0; d->pbuf[0] = 0; return TUI_ACT_DRAW;
	}
	if (key >= 32 && key < 127 && d->plen + 1 < sizeof d->pbuf) {
		d->pbuf[d->plen++] = (char)key;
		d->pbuf[d->plen] = 0;
	}
	return TUI_ACT_DRAW;
}

enum tui_act tui_keys_handle(struct tui_dash *d, int key)
{
	if (d->prompt != TUI_PROMPT_NONE)
		return prompt_key(d, key);
	if (d->help && key != 'q' && key != KEY_F(10) && key != CTRL('c') && key != KEY_RESIZE) {
		d->help = false; /* any key closes the overlay */
		return TUI_ACT_DRAW;
	}
	for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
		if (keys[i].key == key)
			return keys[i].fn(d, key);
	return TUI_ACT_NONE;
}
