/* The end-of-job summary, built from the window state: the JSON record of
 * DESIGN.md ("Summary") and the human table headless mode prints. Totals
 * come from the shims' cumulative counters, so they are exact even when
 * events were dropped. Per-rank bytes are those that reached the file
 * system calls (POSIX and STDIO layers: MPI-IO and HDF5 issue POSIX calls,
 * so counting them too would count the same bytes twice). */
#ifndef COLL_SUMMARY_H
#define COLL_SUMMARY_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "state.h"

struct coll_job_info {
	uint64_t id;
	uint64_t start_ns, end_ns; /* CLOCK_REALTIME */
	const char *command;       /* the monitored command line */
	uint64_t tick_ns;
	uint64_t history_bytes;    /* the state's history budget (a recording's META) */
	/* live runs: what ended the command before it finished ("q in the
	 * dashboard", "SIGINT", "SIGTERM", "SIGHUP"), NULL when it finished by
	 * itself; replays do not know (live false) */
	bool live;
	const char *interrupted;
	uint32_t summary_files; /* the summary's files: the top this many by bytes and
	                           by time, the rest in an "other" entry per layer;
	                           0 the default (summary_files.h), UINT32_MAX all */
};

/* The summary object; alerts (a JSON array, may be NULL) is stolen. */
json_t *coll_summary_json(const struct coll_state *s, const struct coll_job_info *job,
                          json_t *alerts);

/* The human table: per layer, top files, slowest ranks, alert count. */
void coll_summary_print(FILE *to, const struct coll_state *s, const struct coll_job_info *job,
                        size_t n_alerts);

/* "2026-11-21T18:03:10.123Z" into buf (at least 32 bytes). */
void coll_iso_time(uint64_t ns, char *buf, size_t len);

#endif
