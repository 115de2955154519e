/* Synthetic but realistic I/O event streams, shaped like what the shim sees
 * in real applications, for unit tests, benchmarks, fuzz seeds and demos:
 *
 *   IOR_WRITE    IOR-like: each rank writes its block of a shared file in
 *                1 MiB transfers; some through MPI-IO write_at_all, which
 *                issues two 512 KiB POSIX pwrites (nested events).
 *   RANDOM_READ  4-16 KiB preads at random aligned offsets of a few big files.
 *   METADATA     checkpoint-directory bursts: create/open, fstat, a small
 *                write, close on many new files; some stats fail with ENOENT.
 *   MIXED        phases of the three above plus STDIO log lines (fprintf).
 *
 * Deterministic for a given seed. The generator also builds whole frames the
 * way a shim's sender does: new names first, then the cumulative counters
 * that changed, then the events. */
#ifndef IOP_WORKLOAD_H
#define IOP_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "frame.h"

enum iop_wl_kind { IOP_WL_IOR_WRITE, IOP_WL_RANDOM_READ, IOP_WL_METADATA, IOP_WL_MIXED };

#define IOP_WL_MAX_NAMES  8192
#define IOP_WL_PENDING    8192
#define IOP_WL_META_FILES 256

struct iop_wl_name {
	struct iop_name name;
	char text[96];
	bool announced;
};

/* Cumulative counter per (name id, layer, class), as a shim keeps them. */
struct iop_wl_counter {
	struct iop_counter k;
	bool dirty;
};

struct iop_wl {
	enum iop_wl_kind kind;
	uint32_t rank;
	uint64_t rng;
	uint64_t now_ns;
	uint64_t next_call_id;
	uint64_t ior_offset;
	unsigned phase, phase_left, meta_step, meta_file;
	uint32_t meta_ids[IOP_WL_META_FILES];
	uint32_t n_names;
	struct iop_wl_name *names;       /* [IOP_WL_MAX_NAMES], index = id */
	struct iop_wl_counter *counters; /* [IOP_WL_MAX_NAMES * 4 * 3] */
	struct iop_event pending[IOP_WL_PENDING];
	unsigned n_pending, pending_pos;
	uint64_t job_id; /* put in frame headers */
	bool draining;   /* set to send what is pending and generate no more */
	uint64_t coalesce_ns; /* above 0: frames carry runs (iop_enc_coalesce) */
	bool final_sent;
	uint64_t events_made;
	uint64_t frames_made;
};

/* Allocates; false when out of memory. */
bool iop_wl_init(struct iop_wl *w, enum iop_wl_kind kind, uint32_t rank, uint64_t seed,
                 uint64_t start_ns);
void iop_wl_free(struct iop_wl *w);

/* Appends the next call(s) to the pending list: one event, or a parent with
 * its children (children first, as the shim emits them). Returns how many. */
unsigned iop_wl_step(struct iop_wl *w);

/* Builds one frame of up to max_events events (fewer when the buffer fills)
 * into buf; *len and *n_events tell what it holds. Once w->draining is set
 * it only sends what was generated (the last such frame is FINAL), then
 * returns IOP_ERR_STATE: the counters then equal the sum of sent events. */
enum iop_err iop_wl_frame(struct iop_wl *w, uint8_t *buf, size_t cap, unsigned max_events,
                          const struct iop_key *key, size_t *len, unsigned *n_events);

/* Copies the next n events of the stream to out (names and counters are
 * kept as for frames, but not sent). Do not mix with iop_wl_frame. */
unsigned iop_wl_generate(struct iop_wl *w, struct iop_event *out, unsigned n);

const char *iop_wl_kind_name(enum iop_wl_kind kind);

#endif
