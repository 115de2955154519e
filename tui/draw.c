/* The screen (UX.md "Screen"): header with the mode badge and job line,
 * per-layer meters, the alert line, the view tabs, the table (or the
 * heatmap) and the key-hint bar; below 80x24 only a notice. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "dash_int.h"
#include "events.h"
#include "fmt.h"
#include "units.h"

#define HEAD_LINES 7 /* job line, 4 meters, alert line, tabs */

static int look(const struct tui_dash *d, enum tui_look l)
{
	return tui_look(l, d->color);
}

/* Writes s at (y, x) cut to w columns; returns the columns used. */
static int put(int y, int x, int w, const char *s)
{
	if (w <= 0 || x >= COLS)
		return 0;
	mvaddnstr(y, x, s, w);
	int n = (int)strlen(s);
	return n < w ? n : w;
}

static int put_look(const struct tui_dash *d, int y, int x, enum tui_look l, const char *s)
{
	attron(look(d, l));
	int n = put(y, x, COLS - x, s);
	attroff(look(d, l));
	return n;
}

static void spark(const struct tui_dash *d, const float *v, int n)
{
	float max = 0;
	for (int i = 0; i < n; i++)
		if (v[i] > max)
			max = v[i];
	for (int i = 0; i < n; i++) {
		int lvl = max > 0 ? (int)(v[i] / max * 7.999f) : 0;
		addstr(v[i] > 0 || !d->utf8 ? d->g->spark[lvl] : " ");
	}
}

static void draw_job_line(struct tui_dash *d)
{
	const struct coll_state *s = d->src.ops->state(d->src.self);
	struct tui_job job;
	d->src.ops->job(d->src.self, &job);
	int x = 0;
	if (d->src.ops->mode == TUI_SRC_MODE_REPLAY) {
		char b[32];
		snprintf(b, sizeof b, " REPLAY %gx ", d->speed);
		x += put_look(d, 0, x, d->paused ? TUI_LOOK_PAUSED : TUI_LOOK_BADGE,
		              d->paused ? " PAUSED " : b);
	} else {
		x += put_look(d, 0, x, d->paused ? TUI_LOOK_PAUSED : TUI_LOOK_BADGE,
		              d->paused ? " PAUSED " : " LIVE ");
	}
	if (job.recording) {
		x++;
		x += put_look(d, 0, x, TUI_LOOK_REC, " REC ");
	}
	const char *status = d->src.ops->status ? d->src.ops->status(d->src.self) : NULL;
	if (status) {
		char b[32];
		snprintf(b, sizeof b, " %s ", status);
		x++;
		x += put_look(d, 0, x, strcmp(status, "STALE") ? TUI_LOOK_CRIT : TUI_LOOK_WARN, b);
	}
	int64_t t_end = tui_dash_t_end(d);
	/* wall: the job's time so far; in replay, at the tick shown */
	uint64_t now = job.end_ns ? job.end_ns : iop_real_ns();
	if (d->src.ops->mode == TUI_SRC_MODE_REPLAY && s->ticks_applied)
		now = (uint64_t)(t_end + 1) * s->tick_ns;
	char wall[32], at[32], tick[32], win[32], line[256];
	tui_fmt_elapsed(wall, sizeof wall,
	                job.start_ns && now > job.start_ns ? (now - job.start_ns) / 1e9 : 0);
	coll_fmt_secs(tick, sizeof tick, s->tick_ns / 1e9);
	unsigned ws = tui_window_s[d->window_idx]; /* as UX.md names them: 1 s ... 5 min */
	if (ws >= 120 && ws % 60 == 0)
		snprintf(win, sizeof win, "%u min", ws / 60);
	else
		snprintf(win, sizeof win, "%u s", ws);
	if (s->ticks_applied)
		tui_fmt_clock(at, sizeof at, (double)(t_end + 1) * (s->tick_ns / 1e9));
	else
		snprintf(at, sizeof at, "--:--:--");
	snprintf(line, sizeof line,
	         " job %016" PRIx64 "  ranks %u (%u live)  nodes %u  wall %s  tick %s  window %s  at %s",
	         job.id, coll_state_ranks_seen(s), coll_state_ranks_live(s), coll_state_nodes(s), wall,
	         tick, win, at);
	if (s->detail_ticks > 1) { /* a lean recording: ranks, files, sites once a period */
		char every[32];
		coll_fmt_secs(every, sizeof every, s->detail_ticks * (s->tick_ns / 1e9));
		size_t n = strlen(line);
		snprintf(line + n, sizeof line - n, "  detail every %s", every);
	}
	put(0, x, COLS - x, line);
}

static void draw_meter(struct tui_dash *d, int y, int x, const char *lbl, double v,
                       enum tui_look l, int bar)
{
	char rate[32];
	tui_fmt_rate(rate, sizeof rate, v, d->fixed_units);
	mvaddstr(y, x, lbl);
	double fill = d->peak_Bps > 0 ? v / d->peak_Bps : 0;
	int n = (int)(fill * bar + 0.5);
	if (v > 0 && n == 0)
		n = 1;
	attron(look(d, l));
	for (int i = 0; i < bar; i++)
		addstr(i < n ? d->g->meter_fill : d->g->meter_empty);
	attroff(look(d, l));
	printw(" %11s", rate);
}

static void draw_meters(struct tui_dash *d)
{
	int bar = (COLS - 8 - 2 * 15 - 10) / 2;
	if (bar < 4)
		bar = 4;
	for (int l = 0; l < IOP_LAYER__COUNT; l++) {
		int y = 1 + l;
		const struct tui_row *r = NULL;
		for (size_t i = 0; i < d->layers.n; i++)
			if (d->layers.rows[i].layer == l)
				r = &d->layers.rows[i];
		mvprintw(y, 0, "%-7s", iop_layer_label((enum iop_layer)l));
		draw_meter(d, y, 8, "R ", r ? r->v[TUI_COL_RD] : 0, TUI_LOOK_READ, bar);
		draw_meter(d, y, 8 + bar + 16, "W ", r ? r->v[TUI_COL_WR] : 0, TUI_LOOK_WRITE, bar);
		if (r && COLS >= 2 * bar + 48) {
			addstr("  ");
			spark(d, r->spark, TUI_SPARK);
		}
	}
}

static void draw_alert_line(struct tui_dash *d, int y)
{
	size_t n;
	const struct coll_alert_record *a = d->src.ops->alerts(d->src.self, &n);
	const struct coll_state *s = d->src.ops->state(d->src.self);
	int64_t t = tui_dash_t_end(d);
	unsigned count[64] = {0};
	int worst = 0;
	for (size_t i = 0; i < n; i++) {
		if (!tui_alert_at(&a[i], t, s->tick_ns ? s->tick_ns : 1000000000ull) ||
		    (unsigned)a[i].kind >= 64)
			continue;
		count[a[i].kind]++;
		if ((int)a[i].severity > worst)
			worst = (int)a[i].severity;
	}
	if (!worst) {
		put_look(d, y, 0, TUI_LOOK_DIM, "  no active alerts");
		return;
	}
	char line[512];
	size_t off = (size_t)snprintf(line, sizeof line, "! %s ", worst == 2 ? "CRIT" : "WARN");
	bool first = true;
	for (unsigned k = 0; k < 64 && off < sizeof line - 64; k++) {
		if (!count[k])
			continue;
		char kind[48];
		snprintf(kind, sizeof kind, "%s", coll_alert_kind_name((enum coll_alert_kind)k));
		for (char *c = kind; *c; c++)
			if (*c == '_')
				*c = ' ';
		off += (size_t)snprintf(line + off, sizeof line - off, "%s%u %s%s", first ? "" : ", ",
		                        count[k], kind, count[k] > 1 ? "s" : "");
		first = false;
	}
	put_look(d, y, 0, worst == 2 ? TUI_LOOK_CRIT : TUI_LOOK_WARN, line);
}

static void draw_tabs(struct tui_dash *d, int y)
{
	static const char *const names[TUI_VIEW__COUNT] = {"Ranks", "Files", "Layers", "Call sites",
	                                                   "Alerts", "Filesystems"};
	int x = 0;
	for (int v = 0; v < TUI_VIEW__COUNT; v++) {
		char b[32];
		snprintf(b, sizeof b, " %d %s ", v + 1, v == 0 && d->group ? "Nodes" : names[v]);
		if (v == (int)d->view)
			x += put_look(d, y, x, TUI_LOOK_SELECTED, b);
		else
			x += put(y, x, COLS - x, b);
	}
	char st[400];
	enum tui_list l = tui_dash_list(d);
	int off = snprintf(st, sizeof st, "%s%s", d->drill ? " > " : "", d->drill ? d->drill_label : "");
	if (d->heat)
		off += snprintf(st + off, sizeof st - (size_t)off, "  heatmap %s",
		                tui_heat_metric_name(d->heat_metric));
	else if (l != TUI_LIST_ALERTS)
		off += snprintf(st + off, sizeof st - (size_t)off, "  sort %s%s",
		                tui_col_label(d->sort_col[l]), d->sort_desc[l] ? "v" : "^");
	if (d->layer >= 0)
		off += snprintf(st + off, sizeof st - (size_t)off, "  layer %s",
		                iop_layer_label((enum iop_layer)d->layer));
	if (d->filter.n)
		off += snprintf(st + off, sizeof st - (size_t)off, "  filter %s", d->filter_text);
	if (d->hold)
		off += snprintf(st + off, sizeof st - (size_t)off, "  [held]");
	if (d->follow)
		snprintf(st + off, sizeof st - (size_t)off, "  [follow]");
	put(y, x, COLS - x, st);
}

static void draw_bottom(struct tui_dash *d)
{
	int y = LINES - 1;
	move(y, 0);
	clrtoeol();
	if (d->prompt != TUI_PROMPT_NONE) {
		char b[300];
		snprintf(b, sizeof b, "%s%s", d->prompt == TUI_PROMPT_FILTER ? "filter: " : "seek to: ",
		         d->pbuf);
		put(y, 0, COLS, b);
		curs_set(1);
		return;
	}
	curs_set(0);
	if (d->notice[0] && iop_mono_ns() < d->notice_until_ns) {
		put(y, 0, COLS, d->notice);
		return;
	}
	static const char *const hint[][2] = {
		{"F1", "Help"}, {"Tab", "View"}, {"Enter", "Drill"}, {"/", "Filter"}, {"<>", "Sort"},
		{"Spc", "Pause"}, {"H", "Heat"}, {"S", "Save"}, {"q", "Quit"},
	};
	int x = 0;
	for (size_t i = 0; i < sizeof hint / sizeof *hint && x < COLS; i++) {
		x += put_look(d, y, x, TUI_LOOK_KEY, hint[i][0]);
		x += put(y, x, COLS - x, hint[i][1]);
		x += put(y, x, COLS - x, " ");
	}
}

/* The Ranks view of a job above the recording's rank cap has a line of
 * the ranks' distribution above its table (model.h, tui_rank_dist). */
static bool dist_shown(const struct tui_dash *d)
{
	return d->dist.ranks &&
	       (d->table.list == TUI_LIST_RANKS || d->table.list == TUI_LIST_NODES);
}

/* The nodes' load (model.h, tui_node_load): a line of its own above the
 * table when any node sent samples in the last ticks, else nothing. */
static bool node_line(const struct tui_dash *d, char *buf, size_t len)
{
	buf[0] = 0;
	tui_node_load(d->src.ops->state(d->src.self), tui_dash_t_end(d), buf, len);
	return buf[0] != 0;
}

static void draw_dist(struct tui_dash *d, int y)
{
	static const char *const q[COLL_Q__N] = {"min", "q1", "med", "q3", "p99", "max"};
	const struct coll_state *s = d->src.ops->state(d->src.self);
	double tick_s = s->tick_ns ? s->tick_ns / 1e9 : 1;
	char b[512];
	size_t off = (size_t)snprintf(b, sizeof b, " ranks %u  rate", d->dist.ranks);
	for (int i = 0; i < COLL_Q__N && off < sizeof b; i++) {
		char v[32];
		tui_fmt_rate(v, sizeof v, (double)d->dist.bytes[i] / tick_s, d->fixed_units);
		off += (size_t)snprintf(b + off, sizeof b - off, " %s %s", q[i], v);
	}
	if (off < sizeof b)
		off += (size_t)snprintf(b + off, sizeof b - off, "  p99 of %u", d->dist.lat_ranks);
	for (int i = 0; i < COLL_Q__N && off < sizeof b; i++) {
		char v[32];
		tui_fmt_cell(v, sizeof v, TUI_COL_P99, (double)d->dist.p99_ns[i] / 1e9, d->fixed_units);
		off += (size_t)snprintf(b + off, sizeof b - off, " %s %s", q[i], v);
	}
	put(y, 0, COLS, b);
}

int tui_table_rows(const struct tui_dash *d)
{
	/* minus the table header, the hint bar, the nodes' load and the
	 * distribution line */
	char load[256];
	int n = LINES - HEAD_LINES - 2 - node_line(d, load, sizeof load) - dist_shown(d);
	return n > 0 ? n : 0;
}

void tui_draw(struct tui_dash *d)
{
	set_term(d->scr);
	erase();
	if (COLS < 80 || LINES < 24) {
		char b[128];
		snprintf(b, sizeof b, "terminal too small: need 80x24, have %dx%d", COLS, LINES);
		put(0, 0, COLS, b);
		put(1, 0, COLS, "q quits");
		refresh();
		return;
	}
	draw_job_line(d);
	draw_meters(d);
	draw_alert_line(d, 5);
	draw_tabs(d, 6);
	int y0 = HEAD_LINES;
	char load[256];
	if (node_line(d, load, sizeof load)) {
		char line[300];
		snprintf(line, sizeof line, " nodes%s", load);
		put_look(d, y0++, 0, TUI_LOOK_DIM, line);
	}
	if (dist_shown(d))
		draw_dist(d, y0++);
	if (d->heat && (d->table.list == TUI_LIST_RANKS || d->table.list == TUI_LIST_NODES))
		tui_draw_heat(d, y0, tui_table_rows(d) + 1);
	else
		tui_draw_table(d, y0, tui_table_rows(d) + 1);
	draw_bottom(d);
	if (d->help)
		tui_draw_help(d);
	refresh();
}
