/* The table area: rows of any list as text lines (shared with the text
 * save), the heatmap and the help overlay. */
#include <stdio.h>
#include <string.h>

#include "dash_int.h"
#include "events.h"
#include "fmt.h"
#include "fsmap.h"
#include "units.h"

static int colw(enum tui_col c)
{
	switch (c) {
	case TUI_COL_RD:
	case TUI_COL_WR: return 12;
	case TUI_COL_BYTES:
	case TUI_COL_RD_BYTES:
	case TUI_COL_WR_BYTES: return 10;
	case TUI_COL_SEV:
	case TUI_COL_EXCL_PC:
	case TUI_COL_DEV:
	case TUI_COL_PSI:
	case TUI_COL_FRAG:
	case TUI_COL_RANKS: return 6;
	case TUI_COL_PATTERN: return 5;
	default: return 8;
	}
}

/* Columns of list l that fit in width after a prefix of pre columns. */
static unsigned fitting(enum tui_list l, int width, int pre, int min_name, bool *spark)
{
	const struct tui_viewdef *v = tui_viewdef(l);
	int used = pre + min_name;
	unsigned n = 0;
	while (n < v->n_cols && used + 1 + colw(v->cols[n]) <= width)
		used += 1 + colw(v->cols[n++]);
	*spark = v->spark && used + 1 + TUI_SPARK <= width;
	return n;
}

/* Prefix columns before the values: flag, then the row's identity. */
static int prefix_w(enum tui_list l, int width, unsigned *n_cols, bool *spark)
{
	if (l == TUI_LIST_RANKS || l == TUI_LIST_FILE_RANKS) {
		*n_cols = fitting(l, width, 23, 0, spark);
		return 23;
	}
	if (l == TUI_LIST_NODES) {
		*n_cols = fitting(l, width, 20, 0, spark);
		return 20;
	}
	/* named lists: the name takes what the values leave, at least 20 */
	*n_cols = fitting(l, width, 5, 20, spark);
	const struct tui_viewdef *v = tui_viewdef(l);
	int vals = 0;
	for (unsigned i = 0; i < *n_cols; i++)
		vals += 1 + colw(v->cols[i]);
	return width - vals - (*spark ? 1 + TUI_SPARK : 0);
}

/* The end of a long name, with "..." in front. */
static void tail(char *buf, size_t len, const char *s, int w)
{
	int n = (int)strlen(s);
	if (w <= 3 || n <= w)
		snprintf(buf, len, "%.*s", w > 0 ? w : 0, s);
	else
		snprintf(buf, len, "...%s", s + n - (w - 3));
}

/* The flag column: the worst alert, else AGG for an aggregator rank. */
static const char *flag_word(const struct tui_row *r)
{
	return r->sev == 2 ? "CRIT" : r->sev == 1 ? "WARN" : r->agg ? "AGG" : "";
}

static void alert_text(const struct tui_dash *d, const struct tui_row *r, char *buf, size_t len,
                       int width, bool head)
{
	if (head) {
		snprintf(buf, len, "%-4s %-6s %-8s %7s %-15s %-10s %s", "SEV", "STATE", "START", "DUR",
		         "KIND", "SUBJECT", "MESSAGE");
	} else {
		const struct coll_alert_record *a = r->alert;
		char start[16], dur[16], subj[64];
		tui_fmt_cell(start, sizeof start, TUI_COL_START, r->v[TUI_COL_START], false);
		tui_fmt_cell(dur, sizeof dur, TUI_COL_DUR, r->v[TUI_COL_DUR], false);
		if (a->rank != COLL_RANK_NONE)
			snprintf(subj, sizeof subj, "rank %u", a->rank);
		else if (a->file)
			tail(subj, sizeof subj, r->name ? r->name : "?", 10);
		else if (a->layer >= 0)
			snprintf(subj, sizeof subj, "%s", iop_layer_label((enum iop_layer)a->layer));
		else
			snprintf(subj, sizeof subj, "job");
		snprintf(buf, len, "%-4s %-6s %-8s %7s %-15s %-10s %s",
		         a->severity == COLL_SEV_CRIT ? "CRIT" : "WARN", r->sev ? "active" : "ended",
		         start, dur, coll_alert_kind_name(a->kind), subj, a->message);
	}
	if ((int)strlen(buf) > width && width >= 0)
		buf[width] = 0;
}

void tui_head_text(const struct tui_dash *d, char *buf, size_t len, int width)
{
	enum tui_list l = d->table.list;
	if (l == TUI_LIST_ALERTS) {
		alert_text(d, NULL, buf, len, width, true);
		return;
	}
	unsigned n;
	bool sp;
	int pre = prefix_w(l, width, &n, &sp);
	int off;
	if (l == TUI_LIST_RANKS || l == TUI_LIST_FILE_RANKS)
		off = snprintf(buf, len, "%-4s %6s %-11s", "", "RANK", "NODE");
	else if (l == TUI_LIST_NODES)
		off = snprintf(buf, len, "%-4s %-15s", "", "NODE");
	else
		off = snprintf(buf, len, "%-4s %-*s", "",
		               pre - 5, l == TUI_LIST_FILES ? "FILE" : l == TUI_LIST_SITES ? "SITE"
		                        : l == TUI_LIST_FS ? "FILE SYSTEM"
		                        : l == TUI_LIST_FS_DETAIL ? "FILE / RANK"
		                        : l == TUI_LIST_LAYERS ? "LAYER" : "LAYER / FILE");
	const struct tui_viewdef *v = tui_viewdef(l);
	for (unsigned i = 0; i < n && off < (int)len; i++) {
		char lab[24];
		snprintf(lab, sizeof lab, "%s%s", tui_col_label(v->cols[i]),
		         v->cols[i] == d->sort_col[l] ? (d->sort_desc[l] ? "v" : "^") : "");
		off += snprintf(buf + off, len - (size_t)off, " %*s", colw(v->cols[i]), lab);
	}
	if (sp && off < (int)len)
		snprintf(buf + off, len - (size_t)off, " %-*s", TUI_SPARK, "HISTORY");
}

void tui_row_text(const struct tui_dash *d, const struct tui_row *r, char *buf, size_t len,
                  int width)
{
	enum tui_list l = d->table.list;
	if (l == TUI_LIST_ALERTS) {
		alert_text(d, r, buf, len, width, false);
		return;
	}
	unsigned n;
	bool sp;
	int pre = prefix_w(l, width, &n, &sp);
	int off;
	char name[512];
	if (r->kind == TUI_ROW_RANK && l == TUI_LIST_FS_DETAIL) {
		/* among the file system's files: a name as theirs */
		char who[300];
		snprintf(who, sizeof who, "rank %u on %.200s", r->rank,
		         r->node_name ? r->node_name : "?");
		tail(name, sizeof name, who, pre - 5);
		off = snprintf(buf, len, "%-4s %-*s", flag_word(r), pre - 5, name);
	} else if (r->kind == TUI_ROW_RANK) {
		tail(name, sizeof name, r->node_name ? r->node_name : "?", 11);
		off = snprintf(buf, len, "%-4s %6u %-11s", flag_word(r), r->rank, name);
	} else if (r->kind == TUI_ROW_NODE) {
		tail(name, sizeof name, r->name ? r->name : "?", 15);
		off = snprintf(buf, len, "%-4s %-15s", flag_word(r), name);
	} else {
		char hex[24], full[300];
		const char *nm = r->name;
		if (!nm) {
			snprintf(hex, sizeof hex, "0x%016llx", (unsigned long long)r->id);
			nm = hex;
		}
		if (r->kind == TUI_ROW_LAYER && l == TUI_LIST_RANK_DETAIL)
			snprintf(full, sizeof full, "[%s]", nm);
		else
			snprintf(full, sizeof full, "%s", nm);
		struct coll_fs fs;
		if (r->kind == TUI_ROW_FS && coll_fs_parse(nm, strlen(nm), &fs))
			snprintf(full, sizeof full, "%.200s (%.40s, %.50s)", fs.point, fs.type, fs.device);
		tail(name, sizeof name, full, pre - 5);
		off = snprintf(buf, len, "%-4s %-*s", flag_word(r), pre - 5, name);
	}
	const struct tui_viewdef *v = tui_viewdef(l);
	for (unsigned i = 0; i < n && off < (int)len; i++) {
		char cell[32];
		tui_fmt_cell(cell, sizeof cell, v->cols[i], r->v[v->cols[i]], d->fixed_units);
		off += snprintf(buf + off, len - (size_t)off, " %*.*s", colw(v->cols[i]),
		                colw(v->cols[i]), cell);
	}
}

static bool spark_on(const struct tui_dash *d)
{
	unsigned n;
	bool sp;
	prefix_w(d->table.list, COLS, &n, &sp);
	return sp;
}

static void spark_cells(const struct tui_dash *d, const float *v)
{
	float max = 0;
	for (int i = 0; i < TUI_SPARK; i++)
		if (v[i] > max)
			max = v[i];
	addch(' ');
	for (int i = 0; i < TUI_SPARK; i++)
		addstr(max > 0 && v[i] > 0 ? d->g->spark[(int)(v[i] / max * 7.999f)] : " ");
}

/* Colours the flag word at the start of row y. chgat takes the colour pair
 * apart: a pair left in the attributes is replaced by the one given. */
static void colour_flag(const struct tui_dash *d, int y, uint8_t sev)
{
	attr_t a = (attr_t)tui_look(sev == 2 ? TUI_LOOK_CRIT : TUI_LOOK_WARN, d->color);
	mvchgat(y, 0, 4, a & ~A_COLOR, (short)PAIR_NUMBER(a), NULL);
}

void tui_draw_table(struct tui_dash *d, int y0, int rows)
{
	char buf[1024];
	tui_head_text(d, buf, sizeof buf, COLS);
	attron(tui_look(TUI_LOOK_HEAD, d->color));
	mvprintw(y0, 0, "%-*.*s", COLS, COLS, buf);
	attroff(tui_look(TUI_LOOK_HEAD, d->color));
	int body = rows - 1;
	if (body <= 0)
		return;
	if (d->sel < d->top)
		d->top = d->sel;
	if (d->sel >= d->top + (size_t)body)
		d->top = d->sel - (size_t)body + 1;
	if (!d->table.n) {
		mvaddstr(y0 + 1, 5, d->table.list == TUI_LIST_ALERTS ? "(no alerts)"
		                    : d->filter.n                    ? "(no row matches the filter)"
		                                                     : "(no data yet)");
		return;
	}
	bool sp = spark_on(d);
	tui_dash_fill_latency(d, d->top, d->top + (size_t)body);
	for (int i = 0; i < body && d->top + (size_t)i < d->table.n; i++) {
		const struct tui_row *r = &d->table.rows[d->top + (size_t)i];
		tui_row_text(d, r, buf, sizeof buf, COLS);
		bool selected = d->top + (size_t)i == d->sel;
		int y = y0 + 1 + i;
		if (selected)
			attron(tui_look(TUI_LOOK_SELECTED, d->color));
		mvaddnstr(y, 0, buf, COLS);
		if (sp && r->kind != TUI_ROW_ALERT)
			spark_cells(d, r->spark);
		if (selected) {
			int cy, cx;
			getyx(stdscr, cy, cx);
			(void)cy;
			for (; cx < COLS; cx++)
				addch(' ');
			attroff(tui_look(TUI_LOOK_SELECTED, d->color));
		}
		if (r->sev) /* the word is already there; colour it */
			colour_flag(d, y, r->sev);
	}
}

void tui_draw_heat(struct tui_dash *d, int y0, int rows)
{
	const struct tui_heat *h = &d->heatmap;
	char lab[64];
	attron(tui_look(TUI_LOOK_HEAD, d->color));
	snprintf(lab, sizeof lab, "%-13s", d->group ? "NODE" : "RANK");
	mvprintw(y0, 0, "%-*.*s", COLS, COLS, lab);
	char legend[128], top[32];
	if (h->metric == TUI_HEAT_P99)
		coll_fmt_secs(top, sizeof top, h->vmax);
	else if (h->metric == TUI_HEAT_BYTES)
		tui_fmt_rate(top, sizeof top, h->vmax, d->fixed_units);
	else
		snprintf(top, sizeof top, "100%%");
	snprintf(legend, sizeof legend, "%s per tick, full = %s, %s = alert%s, blank = %s",
	         tui_heat_metric_name(h->metric), top, d->g->flag,
	         h->metric == TUI_HEAT_P99 ? " or outlier" : "",
	         h->metric >= TUI_HEAT_PRESSURE ? "0 or no sample" : "not kept");
	mvaddnstr(y0, 14, legend, COLS - 14);
	attroff(tui_look(TUI_LOOK_HEAD, d->color));
	int body = rows - 1;
	if (d->sel < d->top)
		d->top = d->sel;
	if (body > 0 && d->sel >= d->top + (size_t)body)
		d->top = d->sel - (size_t)body + 1;
	for (int i = 0; i < body && d->top + (size_t)i < h->rows && d->top + (size_t)i < d->table.n; i++) {
		size_t r = d->top + (size_t)i;
		const struct tui_row *row = &d->table.rows[r];
		int y = y0 + 1 + i;
		if (row->kind == TUI_ROW_NODE)
			snprintf(lab, sizeof lab, "%-4s %-8.8s", flag_word(row), row->name ? row->name : "?");
		else
			snprintf(lab, sizeof lab, "%-4s %8u", flag_word(row), row->rank);
		if (r == d->sel)
			attron(tui_look(TUI_LOOK_SELECTED, d->color));
		mvprintw(y, 0, "%-13s ", lab);
		if (r == d->sel)
			attroff(tui_look(TUI_LOOK_SELECTED, d->color));
		if (row->sev)
			colour_flag(d, y, row->sev);
		move(y, 14);
		for (uint32_t c = 0; c < h->cols && 14 + (int)c < COLS; c++) {
			size_t k = tui_heat_at(h, (uint32_t)r, c);
			if (h->flag[k] == 3 || h->v[k] < 0) {
				addstr(" "); /* not kept per rank; no node sample */
				continue;
			}
			if (h->flag[k]) {
				attron(tui_look(TUI_LOOK_CRIT, d->color));
				addstr(d->g->flag);
				attroff(tui_look(TUI_LOOK_CRIT, d->color));
				continue;
			}
			double f = h->vmax > 0 ? h->v[k] / h->vmax : 0;
			int lvl = h->v[k] <= 0 ? 0 : 1 + (int)(f * 3.999);
			enum tui_look lk = lvl <= 1 ? TUI_LOOK_HEAT_LOW : lvl <= 3 ? TUI_LOOK_HEAT_MID : TUI_LOOK_HEAT_HIGH;
			attron(tui_look(lk, d->color));
			addstr(d->g->heat[lvl > 4 ? 4 : lvl]);
			attroff(tui_look(lk, d->color));
		}
	}
}

void tui_draw_help(struct tui_dash *d)
{
	size_t n;
	const struct tui_keyhelp *k = tui_keys_help(&n);
	int w = 76, hgt = (int)n + 4;
	int y0 = (LINES - hgt) / 2, x0 = (COLS - w) / 2;
	if (y0 < 0)
		y0 = 0;
	for (int y = 0; y < hgt && y0 + y < LINES; y++)
		mvprintw(y0 + y, x0, "%-*s", w, "");
	attron(A_BOLD);
	mvaddstr(y0, x0 + 2, "iopulse keys (any key closes; docs/dashboard.md)");
	attroff(A_BOLD);
	/* clipped to the box: a line that wrapped would spill onto the next */
	for (size_t i = 0; i < n && y0 + 2 + (int)i < LINES; i++) {
		char line[128];
		snprintf(line, sizeof line, "%-20s %s", k[i].keys, k[i].what);
		mvaddnstr(y0 + 2 + (int)i, x0 + 2, line, w - 2);
	}
}
