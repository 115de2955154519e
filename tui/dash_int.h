/* The dashboard's state, shared by dash.c (life cycle, data), keys.c (the
 * key table and its actions), draw.c / draw_views.c (the screen) and save.c
 * (`S`). Internal to tui/. */
#ifndef TUI_DASH_INT_H
#define TUI_DASH_INT_H

#include <curses.h>
#include <stdint.h>

#include "dash.h"
#include "filter.h"
#include "model.h"
#include "scheme.h"

/* Above this many ranks the Ranks view groups per node by default (`c`
 * still toggles it): thousands of rank rows say less than one a node. */
#define TUI_GROUP_RANKS 1024

enum tui_view { TUI_VIEW_RANKS, TUI_VIEW_FILES, TUI_VIEW_LAYERS, TUI_VIEW_SITES, TUI_VIEW_ALERTS, TUI_VIEW_FS, TUI_VIEW__COUNT };
enum tui_drill { TUI_DRILL_NONE, TUI_DRILL_RANK, TUI_DRILL_FILE, TUI_DRILL_FS };
enum tui_prompt { TUI_PROMPT_NONE, TUI_PROMPT_FILTER, TUI_PROMPT_SEEK };

/* What an action asks for next (htop's Action.c). */
enum tui_act { TUI_ACT_NONE, TUI_ACT_DRAW, TUI_ACT_REBUILD, TUI_ACT_QUIT };

#define TUI_WINDOWS 4 /* 1 s, 10 s, 60 s, 5 min */
extern const unsigned tui_window_s[TUI_WINDOWS];

/* A view's columns: which list, which value columns, what sorts it first. */
struct tui_viewdef {
	const char *title;
	enum tui_col cols[12];
	unsigned n_cols;
	enum tui_col sort;
	bool spark;
};
const struct tui_viewdef *tui_viewdef(enum tui_list list);
const char *tui_list_name(enum tui_list list); /* "ranks", "files" ... */

struct tui_dash {
	struct tui_source src;
	SCREEN *scr;
	FILE *in, *out;
	bool utf8, color;
	const struct tui_glyphs *g;

	enum tui_view view, view_before_log;
	enum tui_drill drill;
	uint32_t drill_rank;
	uint64_t drill_file;
	char drill_label[256];
	size_t drill_sel, drill_top; /* to restore on Esc */
	enum tui_col sort_col[TUI_LIST__COUNT];
	bool sort_desc[TUI_LIST__COUNT];
	bool hold, follow, group, heat, help, fixed_units;
	bool group_chosen; /* `c` pressed, or the job grew past TUI_GROUP_RANKS:
	                      grouping is no longer the default's to change */
	enum tui_heat_metric heat_metric; /* `M` cycles it */
	int layer; /* -1: all */
	unsigned window_idx;
	bool paused;
	double speed; /* replay */
	int64_t cursor; /* tick shown while paused */

	struct tui_filter filter;
	char filter_text[TUI_FILTER_TEXT];
	enum tui_prompt prompt;
	char pbuf[TUI_FILTER_TEXT];
	size_t plen;

	size_t sel, top;
	uint64_t sel_id;
	struct tui_table table, layers;
	struct tui_heat heatmap;
	struct coll_rank_dist dist; /* the Ranks view's distribution line (tui_rank_dist) */
	uint64_t *held;
	size_t n_held;
	double peak_Bps;
	bool dirty;
	int64_t built_t_end;
	const struct coll_alert_record *built_alerts; /* the source's, the rows point into */
	size_t built_n_alerts;

	char notice[256];
	uint64_t notice_until_ns;
	bool quit;
};

/* dash.c */
enum tui_list tui_dash_list(const struct tui_dash *d);
void tui_dash_query(const struct tui_dash *d, struct tui_query *q);
/* The latency columns of table rows [from, to) that the last rebuild left
 * pending (model.h, lazy_latency): before they are drawn or saved. */
void tui_dash_fill_latency(struct tui_dash *d, size_t from, size_t to);
int64_t tui_dash_t_end(const struct tui_dash *d);
void tui_dash_notice(struct tui_dash *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tui_dash_rebuild(struct tui_dash *d);

/* keys.c */
enum tui_act tui_keys_handle(struct tui_dash *d, int key);
struct tui_keyhelp {
	const char *keys, *what;
};
const struct tui_keyhelp *tui_keys_help(size_t *n);

/* draw.c, draw_views.c */
void tui_draw(struct tui_dash *d);
void tui_draw_table(struct tui_dash *d, int y0, int rows);
void tui_draw_heat(struct tui_dash *d, int y0, int rows);
void tui_draw_help(struct tui_dash *d);
int tui_table_rows(const struct tui_dash *d); /* rows of the table area */
/* A table's header and a row as plain text, width columns at most (the
 * screen and the text save use the same lines). */
void tui_head_text(const struct tui_dash *d, char *buf, size_t len, int width);
void tui_row_text(const struct tui_dash *d, const struct tui_row *r, char *buf, size_t len,
                  int width);

/* save.c: the current view as text and JSON; 0 or -1 (errno). */
int tui_save_view(struct tui_dash *d, char *txt_path, char *json_path, size_t len);

#endif
