/* The summary's files (summary.h): per (file, layer) the exact totals of
 * the shims' counters. A job that touches many files (mdtest makes
 * thousands, a workflow millions) would write a summary of hundreds of
 * MB, so by default the list keeps the top COLL_SUMMARY_FILES entries by
 * bytes and the top as many by time, and one "other" entry per layer
 * with the rest's sums (so each layer's entries still add up to its
 * totals); `--summary-files all` keeps every one. */
#ifndef COLL_SUMMARY_FILES_H
#define COLL_SUMMARY_FILES_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "pattern.h"
#include "state.h"

#define COLL_SUMMARY_FILES 1000u   /* the default: top 1000 by bytes, and by time */
#define COLL_SUMMARY_FILES_ALL UINT32_MAX

/* One (file, layer) with its totals, its data calls per access pattern
 * (pattern.h) and how many ranks touched it. */
struct coll_file_sum {
	uint64_t file, read_bytes, write_bytes, ops, read_ops, write_ops, time_ns;
	uint64_t pat[COLL_PAT__COUNT];
	uint32_t ranks;
	uint8_t layer;
};

/* Every (file, layer), by bytes moved (read + write) then file and layer;
 * *n set. NULL with *n = 0 when none (or no memory). */
struct coll_file_sum *coll_file_sums(const struct coll_state *s, size_t *n);
/* A file's name, or "<unnamed HASH>" in buf. */
const char *coll_file_text(const struct coll_state *s, uint64_t file, char *buf, size_t len);

/* The summary's "files": the top max entries by bytes and the top max by
 * time (max 0: COLL_SUMMARY_FILES; COLL_SUMMARY_FILES_ALL: every entry),
 * by bytes, then per layer that lost some an entry {"kind":"other",
 * "path":"other","layer","files" (how many), the sums, "ranks" (distinct),
 * "mount":null}. */
json_t *coll_summary_files(const struct coll_state *s, uint32_t max);

/* "all", or a count from 1 to 16777216, into *max: 0, else -1. */
int coll_parse_summary_files(const char *text, uint32_t *max);

#endif
