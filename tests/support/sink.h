/* iop-sink's state, shared by its receiver (sink.c: options, socket, frame
 * intake) and its report writer (sink_json.c: totals per file, rank and
 * layer, nesting, JSON). Internal to the tool: nothing else includes it.
 *
 * Everything is kept per process image, identified by (node_id, pid) as
 * frames carry it, and by the exec that started it: after a FINAL frame, a
 * frame of the same pid whose seq is not above the FINAL's and whose time
 * base is later is a new image (the program exec'd another, whose shim
 * counts from seq 0 again); a later seq is the same image (its exec failed).
 * Names map an image's small ids to files, counters are the latest
 * cumulative value per (file id, layer, class), events are summed per the
 * same key and per call site. Ids are resolved to paths only when the
 * report is written, so a name that arrives after its first use still
 * counts. */
#ifndef IOP_SINK_H
#define IOP_SINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "frame.h"
#include "hist.h"

/* Open-addressing map from a 64-bit key to an index + 1 (0: no entry). */
struct sink_map {
	uint64_t *key;
	uint32_t *val;
	size_t cap, n; /* cap is 0 or a power of two */
};

/* Fixed-size records found by key through a sink_map. */
struct sink_table {
	struct sink_map map;
	unsigned char *rec;
	size_t n, cap, size;
};

/* Counter values (c_*: latest cumulative) beside event sums (e_*). */
struct sink_sums {
	uint64_t c_ops, c_bytes, c_time, c_err;
	uint64_t e_ops, e_bytes, e_err;
};

struct sink_tally {
	struct sink_sums v[IOP_LAYER__COUNT][IOP_CLASS__COUNT];
};

/* One (file id, layer, class) of a process; key = id << 4 | layer << 2 | class. */
struct sink_cell {
	uint64_t key;
	struct sink_sums v;
	uint64_t counter_seq; /* frame the counter values came from */
	bool has_counter;
};

/* A call_id seen as a parent (IOP_EV_CHILDREN), as the parent_id of
 * children (IOP_EV_PARENT), or both. */
struct sink_call {
	uint64_t want_bytes, got_bytes;
	uint64_t want_ops, got_ops;
	bool is_parent, dup_parent;
};

struct sink_name {
	uint32_t file; /* index in sink.files */
};

/* Events at one (site id, layer, class) of a process image;
 * key = id << 4 | layer << 2 | class. */
struct sink_site {
	uint64_t key;
	uint64_t ops, bytes, errors;
};

struct sink_proc {
	uint32_t node_id, pid, rank;
	uint32_t image; /* 0, then 1, 2 ... for the programs it exec'd */
	uint64_t frames, dup_frames, first_seq, last_seq;
	uint64_t final_seq, final_base; /* of its latest FINAL frame */
	bool final;
	struct iop_stats stats; /* from the frame of the highest seq */
	uint64_t children, parents;
	struct sink_table cells; /* struct sink_cell */
	struct sink_table calls; /* struct sink_call, by call_id */
	struct sink_table names; /* struct sink_name, by id */
	struct sink_table sites; /* struct sink_site */
	struct sink_map seqs;    /* seqs seen */
};

/* A name of any kind (a FILE path, a DATASET, a SITE, a HOST), job-wide;
 * kind 0 is the "no file" entry (id 0, path ""). */
struct sink_file {
	char *path;
	uint32_t len;
	uint8_t kind;
	uint64_t hash;
	struct sink_tally t;
	uint32_t *ranks; /* unsorted, one entry per process at most */
	size_t n_ranks, cap_ranks;
	size_t last_proc; /* the process that added the last rank */
};

struct sink_opts {
	const char *url, *out, *ready;
	const char *final_url; /* a REP socket for last frames (NULL: none) */
	const char *got; /* made at the first accepted frame (NULL: not asked, or made) */
	uint64_t expect_final, idle_ms, timeout_s;
	bool light; /* counters and stats only: no per-event work */
};

struct sink {
	struct sink_opts opt;
	struct iop_key key;
	struct iop_frame_out out; /* decode arrays, grown to the largest frame */
	struct sink_table procs;  /* struct sink_proc, by order of arrival */
	struct sink_map images;   /* node_id << 32 | pid -> its latest image's index + 1 */
	struct sink_table files;  /* struct sink_file */
	uint64_t frames, final_frames, events, dup_frames;
	uint64_t finals_answered; /* messages answered on --final-url */
	uint64_t run_calls;  /* events decoded from run records (IOP_EV_RUN) */
	uint64_t wire_bytes; /* bytes of the frames accepted */
	uint64_t rejected[IOP_ERR__COUNT], n_rejected;
	uint64_t inflight_reports, inflight_max_age;
	struct iop_hist lat[IOP_LAYER__COUNT]; /* event durations */
	const char *stop_reason;               /* set when receiving ends */
};

static inline void *sink_table_at(const struct sink_table *t, size_t i)
{
	return t->rec + i * t->size;
}

uint32_t sink_map_get(const struct sink_map *m, uint64_t key);
/* val is an index + 1 (0 would mark an empty slot). */
enum iop_err sink_map_put(struct sink_map *m, uint64_t key, uint32_t val);
void sink_map_free(struct sink_map *m);
void *sink_table_get(const struct sink_table *t, uint64_t key);
/* The record of key, added zeroed when new; NULL when out of memory. A
 * record pointer lasts until the next record is added. */
void *sink_table_find(struct sink_table *t, uint64_t key);
void sink_table_free(struct sink_table *t);

/* Index in s->files of the name (kind, text), added when new. */
enum iop_err sink_file_intern(struct sink *s, uint8_t kind, const char *text, uint32_t len,
                              uint64_t hash, uint32_t *idx);

/* Writes the report to path (atomically, through a temporary file) or to
 * stdout when path is NULL. */
enum iop_err sink_write_json(struct sink *s, const char *path);

#endif
