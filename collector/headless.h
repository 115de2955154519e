/* Headless output (UX.md "Headless"): alert lines and a status line on
 * stderr, JSON lines (meta, sample, alert, summary) on stdout with
 * --format jsonl, alerts as JSON lines to --alerts FILE, the summary to
 * --summary-json FILE and as a table on stderr. Used by `iopulse run` and
 * by headless replay. */
#ifndef COLL_HEADLESS_H
#define COLL_HEADLESS_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "delta.h"
#include "state.h"
#include "summary.h"

struct coll_headless {
	FILE *jsonl;       /* stdout with --format jsonl, else NULL */
	FILE *alerts;      /* --alerts FILE, or NULL */
	bool text;         /* human lines on stderr */
	size_t n_alerts;   /* alerts started */
	int worst;         /* 0 none, 1 warn, 2 crit: the worst severity that started */
	int write_errors;  /* outputs that failed (reported once) */
};

void coll_headless_init(struct coll_headless *h, FILE *jsonl, FILE *alerts, bool text);
void coll_headless_free(struct coll_headless *h);
void coll_headless_meta(struct coll_headless *h, const struct coll_job_info *job);
/* One "sample" record per closed tick (jsonl only). */
void coll_headless_tick(struct coll_headless *h, const struct coll_delta *d,
                        const struct coll_state *s);
/* An alert as a JSON record (DESIGN.md schema) and its human line;
 * severity 1 warn, 2 crit; started tells whether this is its start. */
void coll_headless_alert(struct coll_headless *h, json_t *record, const char *line, int severity,
                         bool started);
void coll_headless_status(struct coll_headless *h, const struct coll_state *s, uint64_t now_ns);
/* Summary: table on stderr (text), record on stdout (jsonl) and to path;
 * alerts (one record per alert, stolen) goes into it. 0 or -1. */
int coll_headless_summary(struct coll_headless *h, const struct coll_state *s,
                          const struct coll_job_info *job, json_t *alerts, const char *path);

#endif
