/* `S`: the current view saved twice, as the text shown (every row, not just
 * those on screen) and as JSON with base units, in $IOPULSE_SAVE_DIR or the
 * current directory: iopulse-<view>-<YYYYmmdd-HHMMSS>.txt and .json. The
 * JSON object:
 *   {"v":1,"type":"view","view","job","t","tick","window_s","layer",
 *    "filter","sort":{"column","descending"},"columns":[...],"rows":[...]}
 * Each row has its identity ("rank", "node", "path", "site", "layer",
 * "kind", "severity") and the view's columns under their JSON keys
 * (model.h TUI_COLS: read_Bps, p99_s, bytes ...). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dash_int.h"
#include "events.h"
#include "fmt.h"

static FILE *create(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	return fd < 0 ? NULL : fdopen(fd, "w");
}

static json_t *row_json(const struct tui_dash *d, const struct tui_row *r)
{
	json_t *o = json_object();
	static const char *const kinds[] = {"rank", "node", "file", "layer", "site", "alert"};
	json_object_set_new(o, "kind", json_string(kinds[r->kind]));
	if (r->rank != COLL_RANK_NONE)
		json_object_set_new(o, "rank", json_integer(r->rank));
	if (r->kind == TUI_ROW_RANK && r->node_name)
		json_object_set_new(o, "node", json_string(r->node_name));
	if (r->kind == TUI_ROW_NODE && r->name)
		json_object_set_new(o, "node", json_string(r->name));
	if (r->kind == TUI_ROW_FILE)
		json_object_set_new(o, "path", r->name ? json_string(r->name) : json_null());
	if (r->kind == TUI_ROW_SITE)
		json_object_set_new(o, "site", r->name ? json_string(r->name) : json_null());
	if (r->layer >= 0)
		json_object_set_new(o, "layer", json_string(iop_layer_name((enum iop_layer)r->layer)));
	if (r->sev)
		json_object_set_new(o, "severity", json_string(r->sev == 2 ? "crit" : "warn"));
	if (r->kind == TUI_ROW_ALERT) {
		const struct coll_alert_record *a = r->alert;
		json_object_set_new(o, "alert", json_string(coll_alert_kind_name(a->kind)));
		json_object_set_new(o, "severity", json_string(a->severity == COLL_SEV_CRIT ? "crit" : "warn"));
		json_object_set_new(o, "active", json_boolean(r->sev != 0));
		json_object_set_new(o, "start", json_real(a->start_ns / 1e9));
		json_object_set_new(o, "duration_s", json_real(r->v[TUI_COL_DUR]));
		json_object_set_new(o, "message", json_string(a->message));
		return o;
	}
	const struct tui_viewdef *v = tui_viewdef(d->table.list);
	for (unsigned i = 0; i < v->n_cols; i++)
		if (v->cols[i] == TUI_COL_PATTERN) { /* the name, not its code */
			char b[16];
			tui_fmt_cell(b, sizeof b, TUI_COL_PATTERN, r->v[TUI_COL_PATTERN], false);
			json_object_set_new(o, tui_col_json(v->cols[i]), json_string(b));
		} else {
			double x = r->v[v->cols[i]]; /* NaN: the view has no value */
			json_object_set_new(o, tui_col_json(v->cols[i]), isnan(x) ? json_null() : json_real(x));
		}
	if (v->spark) {
		json_t *sp = json_array();
		for (int i = 0; i < TUI_SPARK; i++)
			json_array_append_new(sp, json_real(r->spark[i]));
		json_object_set_new(o, "history_bytes", sp);
	}
	return o;
}

static json_t *view_json(const struct tui_dash *d)
{
	const struct coll_state *s = d->src.ops->state(d->src.self);
	struct tui_job job;
	d->src.ops->job(d->src.self, &job);
	char id[24];
	snprintf(id, sizeof id, "%016" PRIx64, job.id);
	enum tui_list l = d->table.list;
	int64_t t = d->built_t_end;
	json_t *cols = json_array(), *rows = json_array();
	const struct tui_viewdef *v = tui_viewdef(l);
	for (unsigned i = 0; i < v->n_cols && l != TUI_LIST_ALERTS; i++)
		json_array_append_new(cols, json_string(tui_col_json(v->cols[i])));
	for (size_t i = 0; i < d->table.n; i++)
		json_array_append_new(rows, row_json(d, &d->table.rows[i]));
	json_t *o = json_pack("{s:i,s:s,s:s,s:s,s:f,s:I,s:f,s:s,s:s,s:{s:s,s:b},s:o,s:o}", "v", 1,
	                      "type", "view", "view", tui_list_name(l), "job", id, "t",
	                      (double)(t + 1) * (s->tick_ns / 1e9), "tick", (json_int_t)t, "window_s",
	                      d->table.window_s, "layer",
	                      d->layer < 0 ? "all" : iop_layer_name((enum iop_layer)d->layer),
	                      "filter", d->filter_text, "sort", "column",
	                      tui_col_json(d->sort_col[l]), "descending", d->sort_desc[l], "columns",
	                      cols, "rows", rows);
	if (o && d->drill)
		json_object_set_new(o, "subject", json_string(d->drill_label));
	return o;
}

int tui_save_view(struct tui_dash *d, char *txt_path, char *json_path, size_t len)
{
	tui_dash_fill_latency(d, 0, d->table.n); /* every row's, not only those shown */
	const char *dir = getenv("IOPULSE_SAVE_DIR");
	char stamp[32];
	time_t now = time(NULL);
	struct tm tm;
	localtime_r(&now, &tm);
	strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
	FILE *txt = NULL;
	for (int i = 1; i < 100 && !txt; i++) {
		char suffix[8] = "";
		if (i > 1)
			snprintf(suffix, sizeof suffix, "-%d", i);
		snprintf(txt_path, len, "%s%siopulse-%s-%s%s.txt", dir && *dir ? dir : "",
		         dir && *dir ? "/" : "", tui_list_name(d->table.list), stamp, suffix);
		snprintf(json_path, len, "%.*s.json", (int)strlen(txt_path) - 4, txt_path);
		txt = create(txt_path);
		if (!txt && errno != EEXIST)
			return -1;
	}
	if (!txt)
		return -1;
	char line[1024];
	tui_head_text(d, line, sizeof line, 200);
	fprintf(txt, "%s\n", line);
	for (size_t i = 0; i < d->table.n; i++) {
		tui_row_text(d, &d->table.rows[i], line, sizeof line, 200);
		fprintf(txt, "%s\n", line);
	}
	int rc = fclose(txt) ? -1 : 0;
	json_t *o = view_json(d);
	FILE *js = o ? create(json_path) : NULL;
	if (!js) {
		json_decref(o);
		return -1;
	}
	if (json_dumpf(o, js, JSON_INDENT(1) | JSON_REAL_PRECISION(16)) || fputc('\n', js) == EOF)
		rc = -1;
	if (fclose(js))
		rc = -1;
	json_decref(o);
	return rc;
}
