/* The dashboard's life cycle and data (dash.h): takes the terminal, builds
 * the tables of the view shown from the source, hands keys to keys.c and
 * the screen to draw.c. */
#include "dash_int.h"

#include <errno.h>
#include <langinfo.h>
#include <locale.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"

const unsigned tui_window_s[TUI_WINDOWS] = {1, 10, 60, 300};

#define RATE_COLS TUI_COL_RD, TUI_COL_WR, TUI_COL_IOPS, TUI_COL_P50, TUI_COL_P99
static const struct tui_viewdef defs[TUI_LIST__COUNT] = {
	[TUI_LIST_RANKS] = {"Ranks", {RATE_COLS, TUI_COL_MAX, TUI_COL_BYTES, TUI_COL_WAIT,
	                              TUI_COL_INFLIGHT}, 9, TUI_COL_BYTES, true},
	[TUI_LIST_NODES] = {"Nodes", {TUI_COL_RANKS, TUI_COL_DEV, TUI_COL_PSI, RATE_COLS,
	                               TUI_COL_MAX, TUI_COL_BYTES, TUI_COL_WAIT, TUI_COL_INFLIGHT},
	                    12, TUI_COL_BYTES, true},
	[TUI_LIST_FILES] = {"Files", {RATE_COLS, TUI_COL_BYTES, TUI_COL_PATTERN, TUI_COL_RANKS}, 8,
	                    TUI_COL_BYTES, true},
	[TUI_LIST_LAYERS] = {"Layers", {RATE_COLS, TUI_COL_META, TUI_COL_TIME, TUI_COL_EXCL,
	                                TUI_COL_EXCL_PC, TUI_COL_FRAG, TUI_COL_WAIT}, 11, TUI_COL_TIME,
	                     true},
	[TUI_LIST_SITES] = {"Call sites", {RATE_COLS, TUI_COL_TIME}, 6, TUI_COL_TIME, true},
	[TUI_LIST_ALERTS] = {"Alerts", {TUI_COL_SEV, TUI_COL_START, TUI_COL_DUR}, 3, TUI_COL_SEV,
	                     false},
	[TUI_LIST_RANK_DETAIL] = {"Rank", {TUI_COL_RD, TUI_COL_WR, TUI_COL_P99, TUI_COL_RD_BYTES,
	                                   TUI_COL_WR_BYTES, TUI_COL_OPS, TUI_COL_TIME}, 7,
	                          TUI_COL_BYTES, false},
	[TUI_LIST_FILE_RANKS] = {"File", {TUI_COL_RD_BYTES, TUI_COL_WR_BYTES, TUI_COL_OPS,
	                                  TUI_COL_TIME}, 4, TUI_COL_BYTES, false},
	[TUI_LIST_FS] = {"Filesystems", {RATE_COLS, TUI_COL_META, TUI_COL_TIME}, 7, TUI_COL_TIME, true},
	[TUI_LIST_FS_DETAIL] = {"Filesystem", {TUI_COL_RD_BYTES, TUI_COL_WR_BYTES, TUI_COL_OPS,
	                                       TUI_COL_TIME}, 4, TUI_COL_BYTES, false},
};

static const char *const list_names[TUI_LIST__COUNT] = {
	"ranks", "nodes", "files", "layers", "sites", "alerts", "rank", "file", "filesystems",
	"filesystem",
};

const struct tui_viewdef *tui_viewdef(enum tui_list l)
{
	return &defs[(unsigned)l < TUI_LIST__COUNT ? l : 0];
}

const char *tui_list_name(enum tui_list l)
{
	return list_names[(unsigned)l < TUI_LIST__COUNT ? l : 0];
}

void tui_dash_notice(struct tui_dash *d, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(d->notice, sizeof d->notice, fmt, ap);
	va_end(ap);
	d->notice_until_ns = iop_mono_ns() + 5000000000ull;
}

enum tui_list tui_dash_list(const struct tui_dash *d)
{
	if (d->drill == TUI_DRILL_RANK)
		return TUI_LIST_RANK_DETAIL;
	if (d->drill == TUI_DRILL_FILE)
		return TUI_LIST_FILE_RANKS;
	if (d->drill == TUI_DRILL_FS)
		return TUI_LIST_FS_DETAIL;
	switch (d->view) {
	case TUI_VIEW_RANKS: return d->group ? TUI_LIST_NODES : TUI_LIST_RANKS;
	case TUI_VIEW_FILES: return TUI_LIST_FILES;
	case TUI_VIEW_LAYERS: return TUI_LIST_LAYERS;
	case TUI_VIEW_SITES: return TUI_LIST_SITES;
	case TUI_VIEW_FS: return TUI_LIST_FS;
	default: return TUI_LIST_ALERTS;
	}
}

int64_t tui_dash_t_end(const struct tui_dash *d)
{
	int64_t first, last;
	d->src.ops->range(d->src.self, &first, &last);
	if (last == INT64_MIN)
		return 0;
	if (d->paused)
		return d->cursor;
	/* a replay plays through its range: the tick shown is the state's */
	const struct coll_state *s = d->src.ops->state(d->src.self);
	return d->src.ops->mode == TUI_SRC_MODE_REPLAY && s->ticks_applied ? s->last_t : last;
}

void tui_dash_query(const struct tui_dash *d, struct tui_query *q)
{
	const struct coll_state *s = d->src.ops->state(d->src.self);
	uint64_t tick_ns = s->tick_ns ? s->tick_ns : 1000000000ull;
	uint64_t w = (uint64_t)tui_window_s[d->window_idx] * 1000000000ull / tick_ns;
	memset(q, 0, sizeof *q);
	q->list = tui_dash_list(d);
	q->t_end = tui_dash_t_end(d);
	q->window = w ? (uint32_t)w : 1;
	q->layer = d->layer;
	q->rank = d->drill_rank;
	q->file = d->drill_file;
	q->filter = d->drill ? NULL : &d->filter; /* a drill-down shows all of its subject */
	q->alerts = d->src.ops->alerts(d->src.self, &q->n_alerts);
}

static void keep_order(struct tui_dash *d)
{
	if (d->hold && d->held) {
		tui_table_hold(&d->table, d->held, d->n_held);
	} else {
		enum tui_list l = d->table.list;
		tui_table_sort(&d->table, d->sort_col[l], d->sort_desc[l]);
	}
	uint64_t *ids = realloc(d->held, (d->table.n + 1) * sizeof *ids);
	if (!ids)
		return;
	d->held = ids;
	d->n_held = d->table.n;
	for (size_t i = 0; i < d->table.n; i++)
		ids[i] = d->table.rows[i].id;
}

void tui_dash_rebuild(struct tui_dash *d)
{
	const struct coll_state *s = d->src.ops->state(d->src.self);
	if (!d->group_chosen && coll_state_ranks_seen(s) > TUI_GROUP_RANKS)
		d->group = d->group_chosen = true; /* once: `c` undoes it for good */
	struct tui_query q;
	tui_dash_query(d, &q);
	/* latencies for the rows shown only (tui_dash_fill_latency, as they
	 * are drawn or saved), unless the rows are sorted by one */
	q.lazy_latency = (q.list == TUI_LIST_RANKS || q.list == TUI_LIST_NODES) &&
	                 !tui_col_latency(d->sort_col[q.list]);
	if (d->table.n && d->sel < d->table.n)
		d->sel_id = d->table.rows[d->sel].id;
	if (tui_table_build(&d->table, s, &q) != IOP_OK)
		tui_dash_notice(d, "out of memory: the table is incomplete");
	keep_order(d);
	if (d->follow) {
		for (size_t i = 0; i < d->table.n; i++)
			if (d->table.rows[i].id == d->sel_id)
				d->sel = i;
	}
	if (d->sel >= d->table.n)
		d->sel = d->table.n ? d->table.n - 1 : 0;
	/* the header's meters: every layer, whatever the view */
	struct tui_query lq = q;
	lq.list = TUI_LIST_LAYERS;
	lq.layer = -1;
	lq.filter = NULL;
	(void)tui_table_build(&d->layers, s, &lq);
	for (size_t i = 0; i < d->layers.n; i++) {
		double v = d->layers.rows[i].v[TUI_COL_RD] > d->layers.rows[i].v[TUI_COL_WR]
		                   ? d->layers.rows[i].v[TUI_COL_RD]
		                   : d->layers.rows[i].v[TUI_COL_WR];
		if (v > d->peak_Bps)
			d->peak_Bps = v;
	}
	d->dist = (struct coll_rank_dist){0};
	if ((q.list == TUI_LIST_RANKS || q.list == TUI_LIST_NODES) &&
	    tui_rank_dist(s, q.t_end, &d->dist) != IOP_OK)
		tui_dash_notice(d, "out of memory: no distribution of the ranks");
	if (d->heat && (q.list == TUI_LIST_RANKS || q.list == TUI_LIST_NODES)) {
		int cols = COLS - 14;
		if (cols < 1)
			cols = 1;
		if (tui_heat_build(&d->heatmap, s, &d->table, &q, (uint32_t)cols, d->heat_metric) != IOP_OK)
			tui_dash_notice(d, "out of memory: no heatmap");
	}
	d->built_t_end = q.t_end;
	d->built_alerts = q.alerts;
	d->built_n_alerts = q.n_alerts;
	d->dirty = false;
}

void tui_dash_fill_latency(struct tui_dash *d, size_t from, size_t to)
{
	struct tui_query q;
	tui_dash_query(d, &q);
	if (tui_table_fill_latency(&d->table, d->src.ops->state(d->src.self), &q, from, to) != IOP_OK)
		tui_dash_notice(d, "out of memory: latencies not shown");
}

void tui_dash_redraw(struct tui_dash *d)
{
	tui_dash_rebuild(d);
	tui_draw(d);
}

void tui_dash_update(struct tui_dash *d)
{
	/* Alert rows point into the source's alerts: when it has a new array
	 * (top fetches them again, a live history grows) they are rebuilt,
	 * paused or not. */
	size_t n;
	const struct coll_alert_record *a = d->src.ops->alerts(d->src.self, &n);
	if (!d->paused || a != d->built_alerts || n != d->built_n_alerts)
		d->dirty = true;
	if (d->dirty)
		tui_dash_rebuild(d);
	tui_draw(d);
}

static bool term_usable(char *why, size_t len)
{
	const char *term = getenv("TERM");
	if (!term || !*term) {
		snprintf(why, len, "TERM is not set");
		return false;
	}
	if (!strcmp(term, "dumb")) {
		snprintf(why, len, "TERM is 'dumb'");
		return false;
	}
	return true;
}

struct tui_dash *tui_dash_open(const struct tui_source *src, FILE *in, FILE *out, char *why,
                               size_t whylen)
{
	if (!term_usable(why, whylen))
		return NULL;
	struct tui_dash *d = calloc(1, sizeof *d);
	if (!d) {
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	/* only the character type: numbers in JSON and messages stay C */
	setlocale(LC_CTYPE, "");
	d->utf8 = !strcmp(nl_langinfo(CODESET), "UTF-8");
	d->g = tui_glyphs(d->utf8);
	const char *nc = getenv("NO_COLOR");
	d->color = !(nc && *nc);
	d->scr = newterm(NULL, out, in);
	if (!d->scr) {
		snprintf(why, whylen, "terminal type '%s' is unknown to terminfo", getenv("TERM"));
		free(d);
		return NULL;
	}
	d->src = *src;
	d->in = in;
	d->out = out;
	set_term(d->scr);
	raw();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	set_escdelay(25);
	curs_set(0);
	tui_scheme_init(d->color);
	d->color = d->color && has_colors();
	d->layer = -1;
	d->window_idx = 1;
	d->speed = 1;
	for (int l = 0; l < TUI_LIST__COUNT; l++) {
		d->sort_col[l] = defs[l].sort;
		d->sort_desc[l] = true;
	}
	d->sort_col[TUI_LIST_RANKS] = TUI_COL_BYTES;
	d->dirty = true;
	tui_dash_redraw(d);
	return d;
}

int tui_dash_input_fd(const struct tui_dash *d)
{
	return fileno(d->in);
}

bool tui_dash_key(struct tui_dash *d, int key)
{
	set_term(d->scr);
	/* Keys typed ahead (one read of several) act on what the keys before
	 * them made: `1` Down Enter moves in and drills into the Ranks view,
	 * not into the rows of the view shown before `1`. */
	if (d->dirty)
		tui_dash_rebuild(d);
	enum tui_act a = tui_keys_handle(d, key);
	if (a == TUI_ACT_QUIT)
		d->quit = true;
	else if (a == TUI_ACT_REBUILD)
		d->dirty = true;
	return !d->quit;
}

bool tui_dash_input(struct tui_dash *d)
{
	set_term(d->scr);
	int key, n = 0;
	while (!d->quit && (key = wgetch(stdscr)) != ERR && n++ < 256)
		tui_dash_key(d, key);
	if (d->quit)
		return false;
	if (d->dirty)
		tui_dash_rebuild(d);
	if (n)
		tui_draw(d);
	return true;
}

void tui_dash_close(struct tui_dash *d)
{
	if (!d)
		return;
	set_term(d->scr);
	endwin();
	delscreen(d->scr);
	tui_table_free(&d->table);
	tui_table_free(&d->layers);
	tui_heat_free(&d->heatmap);
	free(d->held);
	free(d);
}

int tui_dash_run(struct tui_dash *d)
{
	const struct tui_source_ops *o = d->src.ops;
	while (true) {
		struct pollfd p[2] = {{.fd = fileno(d->in), .events = POLLIN},
		                      {.fd = o->fd(d->src.self), .events = POLLIN}};
		int rc = poll(p, p[1].fd >= 0 ? 2 : 1, 1000);
		if (rc < 0 && errno != EINTR)
			return 2;
		if (!tui_dash_input(d))
			return 0;
		unsigned got = o->pump ? o->pump(d->src.self, iop_real_ns()) : 0;
		if (got & TUI_SRC_ERROR) {
			const char *e = o->error ? o->error(d->src.self) : NULL;
			tui_dash_notice(d, "source: %s", e ? e : "failed");
		}
		tui_dash_update(d);
	}
}
