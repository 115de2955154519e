/* `iopulse run`'s options (run_opts.c parses them). */
#ifndef COLL_RUN_OPTS_H
#define COLL_RUN_OPTS_H

#include <stdbool.h>
#include <stdint.h>

struct run_opts {
	bool headless, jsonl;
	bool record_events; /* --record-events: the raw event batches too */
	const char *alerts_path, *summary_path, *record_path, *rules_path, *also_preload;
	const char *listen; /* where other nodes' collectors reach the root (tcp://...) */
	const char *view;   /* where viewers reach the root (docs/viewer.md), or NULL */
	uint64_t tick_ns, status_every_ns;
	uint64_t history_bytes; /* --history-mib; 0: the default */
	uint64_t record_detail_ns; /* --record-detail: 0 view (the default), UINT64_MAX full,
	                              else lean with this period */
	bool record_detail_set;    /* --record-detail was given */
	uint32_t record_rank_cap;  /* --record-ranks; 0: the default (record.h) */
	uint32_t summary_files;    /* --summary-files; 0: the default (summary_files.h) */
	int fail_on; /* 0 none, 1 warn, 2 crit */
	char **cmd;
	/* `iopulse collector` only */
	enum { ROLE_NONE, ROLE_LEAF, ROLE_MID, ROLE_ROOT } role;
	const char *listens[8];
	unsigned n_listens;
	const char *parent, *dir, *card;
	uint64_t exit_idle_ns; /* leaf: exit when its processes ended and this long passed */
};

/* 0 ok, -1 help printed (exit 0), 1 usage error (printed). */
int coll_run_opts_parse(struct run_opts *o, int argc, char **argv);
/* The same for `iopulse collector` (no command; its own options). */
int coll_collector_opts_parse(struct run_opts *o, int argc, char **argv);
/* --format text|jsonl and --fail-on warn|crit (also iopulse replay's):
 * 0, or -1 for any other word. */
int coll_parse_format(const char *s, bool *jsonl);
int coll_parse_fail_on(const char *s, int *fail_on);
/* "30s", "500ms", "2m", "1h"; a bare number is seconds. 0 when invalid. */
uint64_t coll_parse_duration_ns(const char *s);
/* Whether paths a and b (either may be NULL) name one file: the same
 * string, or the same existing file. Two outputs in one file, or an output
 * over the recording being read, would leave nothing readable. */
bool coll_same_file(const char *a, const char *b);

#endif
