/* The frame: what a rank's shim sends to its leaf collector, and what the
 * recording keeps as raw events. docs/wire-format.md describes it byte by byte.
 *
 *   header (60 bytes, fixed) | payload | MAC (16 bytes)
 *   payload = stats | names | counters | in-flight | events
 *
 * Writing: iop_enc_begin(), then names, counters, in-flight reports and
 * events, in that order (each section may be empty), then iop_enc_finish(),
 * which fills in the counts and the MAC. iop_enc_event() returns IOP_ERR_FULL
 * and leaves the frame as it was when an event does not fit, so a sender can
 * fill a buffer to the brim and send.
 *
 * Reading: iop_frame_open() checks the header, the length and the MAC, and
 * reads the stats; then iop_frame_name(), _counter(), _inflight(), _event()
 * each read the next record of their section (sections in order, every record
 * of a section before the next), and iop_frame_close() checks that the
 * payload ended exactly after the last record. Nothing is trusted: every
 * length and count is checked against the bytes that are there, and each
 * rejection has its own error. iop_frame_decode() does all of it into
 * caller-provided arrays, all or nothing. */
#ifndef IOP_FRAME_H
#define IOP_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "auth.h"
#include "codec.h"
#include "err.h"
#include "events.h"
#include "hist.h"

#define IOP_FRAME_MAGIC       0x46504f49u /* "IOPF" as bytes on the wire */
#define IOP_WIRE_VERSION      3 /* 3: run records; 2: collective calls' numbers (docs/wire-format.md) */
#define IOP_WIRE_VERSION_MIN  1 /* the oldest a decoder reads: 1 is 2 without them */
#define IOP_FRAME_HEADER_LEN  60
#define IOP_FRAME_OVERHEAD    (IOP_FRAME_HEADER_LEN + IOP_MAC_BYTES)
#define IOP_FRAME_MAX_PAYLOAD (1u << 20) /* larger frames are rejected */
#define IOP_FRAME_MAX_LEN     (IOP_FRAME_OVERHEAD + IOP_FRAME_MAX_PAYLOAD)
#define IOP_NAME_MAX          4096                      /* bytes in a name record's text */
#define IOP_ID_MAX            0xffffffu                 /* file, site and thread ids */
#define IOP_EVENT_MAX_BYTES   (2 + 15 * IOP_VARINT_MAX) /* longest encoded event */
#define IOP_EVENT_MIN_BYTES   4                         /* op, flags, end delta, duration */
/* Calls a frame may carry: what 1 MiB of the smallest events held before
 * runs (a run record stands for many calls in a few bytes), so a receiver
 * sizes its arrays as it always could. */
#define IOP_FRAME_MAX_EVENTS  (IOP_FRAME_MAX_PAYLOAD / IOP_EVENT_MIN_BYTES)
#define IOP_RUN_EXACT_MAX     16 /* a run of up to this many calls sends each duration */

/* Header flags. */
enum {
	IOP_FRAME_FINAL = 1u << 0, /* the process's last frame (exit, finalize, fatal signal) */
	IOP_FRAME_ALL_COUNTERS = 1u << 1, /* carries every counter, not only changed ones */
};
#define IOP_FRAME_KNOWN_FLAGS (IOP_FRAME_FINAL | IOP_FRAME_ALL_COUNTERS)

struct iop_frame_hdr {
	uint64_t job_id;
	uint64_t seq;     /* frame sequence of this process, from 0 */
	uint64_t base_ns; /* time origin of the event deltas (ns since epoch) */
	uint32_t node_id; /* hash of the host name (see the HOST name record) */
	uint32_t rank;
	uint32_t pid;
	uint16_t flags; /* IOP_FRAME_* */
};

/* Cumulative per-process counters of the monitor itself. */
struct iop_stats {
	uint64_t events;        /* events produced since the process started */
	uint64_t dropped;       /* of those, dropped (ring full, send refused) */
	uint64_t shim_ns;       /* time spent inside the shim */
	uint64_t send_failures; /* frames the transport refused */
};

enum iop_name_kind {
	IOP_NAME_FILE = 1,    /* absolute path; hash = iop_hash_str(path) */
	IOP_NAME_DATASET = 2, /* "<file path>:<dataset path>" (HDF5) */
	IOP_NAME_SITE = 3,    /* call site: "function+0x1a (object)", "object+0x1a0" */
	IOP_NAME_HOST = 4,    /* host name; hash = node_id's source */
};

/* Binds a small per-process id to a job-wide 64-bit hash and its text. The
 * text points into the frame buffer and is not NUL-terminated. */
struct iop_name {
	uint64_t hash;
	const char *text;
	uint32_t len;
	uint32_t id;
	uint8_t kind; /* enum iop_name_kind */
};

/* Cumulative totals of one (file, layer, op class) since the process started. */
struct iop_counter {
	uint64_t ops;
	uint64_t bytes;
	uint64_t time_ns;
	uint64_t errors;
	uint32_t file;
	uint8_t layer;
	uint8_t cls;
};

/* A call that had not returned when the frame was built. */
struct iop_inflight {
	uint64_t start_ns;
	uint64_t bytes; /* bytes requested, 0 when not a transfer */
	uint32_t thread;
	uint32_t file;
	uint8_t layer;
	uint8_t op;
};

/* What the event codec predicts from the events before (private): events are
 * coded as differences from it, which is what makes them small. */
struct iop_ev_pred {
	uint64_t prev_end;           /* end_ns of the previous event (base_ns at first) */
	uint64_t prev_id;            /* last call_id or parent_id seen */
	uint32_t file, site, thread; /* current values, sent only on change */
	struct {
		uint32_t file;
		uint64_t next; /* where the last access to that file ended */
	} off[16];             /* indexed by file id modulo 16 */
};

/* A run of calls the encoder is coalescing (private; docs/wire-format.md,
 * "Run records"): the first call, and what the calls after it share. */
struct iop_run_w {
	struct iop_event first;
	uint64_t window;      /* first.end_ns / split_ns: a run stays in one */
	uint64_t last_end, last_offset, stride;
	uint32_t count;       /* calls; 0: no run pending */
	uint32_t nonzero;     /* non-empty buckets of hist (count > IOP_RUN_EXACT_MAX) */
	uint64_t dur[IOP_RUN_EXACT_MAX];
	struct iop_hist hist; /* over bk, every bucket */
	uint32_t bk[IOP_HIST_BUCKETS];
};

/* A run record being handed out call by call (private). */
struct iop_run_r {
	struct iop_event ev;  /* the next call but its end, duration and offset */
	uint64_t first_end, span, first_offset, stride;
	uint32_t count, i;    /* calls, and the next one's index */
	/* the next call's end, first_end + span * i / (count - 1), kept
	 * without a division: step = span / (count - 1), and the remainders */
	uint64_t next_end, step, rem, acc;
	/* durations: dur[] (count <= IOP_RUN_EXACT_MAX), else from hist in
	 * bucket order, the middle of each bucket moved within it by what
	 * its sum asks (resid) */
	uint64_t dur[IOP_RUN_EXACT_MAX];
	__int128 resid;
	unsigned b;           /* bucket of the next duration */
	uint32_t b_left;      /* durations left in it */
	uint64_t b_mid, b_lo, b_hi; /* its middle and bounds within [min, max] */
	struct iop_hist hist;
	uint32_t bk[IOP_HIST_BUCKETS];
};

/* Encoder. Fields are private. */
struct iop_frame_enc {
	uint8_t *buf;
	struct iop_wcur c; /* ends IOP_MAC_BYTES before the buffer does */
	uint32_t n_events; /* calls, those of the pending run too */
	uint16_t n_names, n_counters, n_inflight;
	uint8_t stage;
	struct iop_ev_pred pred;
	uint64_t split_ns; /* coalescing on (iop_enc_coalesce) when above 0 */
	uint64_t runs;     /* run records written */
	struct iop_run_w run;
};

/* buf must hold at least IOP_FRAME_OVERHEAD + 64 bytes; a frame never grows
 * past IOP_FRAME_MAX_LEN whatever cap is. */
enum iop_err iop_enc_begin(struct iop_frame_enc *e, uint8_t *buf, size_t cap,
                           const struct iop_frame_hdr *hdr, const struct iop_stats *stats);
enum iop_err iop_enc_name(struct iop_frame_enc *e, const struct iop_name *n);
enum iop_err iop_enc_counter(struct iop_frame_enc *e, const struct iop_counter *c);
enum iop_err iop_enc_inflight(struct iop_frame_enc *e, const struct iop_inflight *f);
enum iop_err iop_enc_event(struct iop_frame_enc *e, const struct iop_event *ev);
/* Coalescing (call after iop_enc_begin; off by default): a thread's
 * consecutive calls with the same layer, op, file and site, the same
 * bytes, offsets at a constant stride (or none), no error, no nesting and
 * no collective number, whose ends fall in the same split_ns window of
 * the epoch, go out as one run record (docs/wire-format.md). split_ns 0
 * turns it off. A reader gets the calls back one by one. */
void iop_enc_coalesce(struct iop_frame_enc *e, uint64_t split_ns);
/* Replaces the header flags given to iop_enc_begin (a sender knows whether
 * a frame is its last only once it has filled it). INVAL for unknown flags. */
enum iop_err iop_enc_set_flags(struct iop_frame_enc *e, uint16_t flags);
/* Writes the counts and the MAC; *len = frame length. */
enum iop_err iop_enc_finish(struct iop_frame_enc *e, const struct iop_key *key, size_t *len);
/* Events in the frame so far. */
static inline uint32_t iop_enc_events(const struct iop_frame_enc *e)
{
	return e->n_events;
}

/* Reader. Counts and header are public; the rest is private. */
struct iop_frame {
	struct iop_frame_hdr hdr;
	struct iop_stats stats;
	uint32_t n_events; /* calls (a run record holds several) */
	uint16_t n_names, n_counters, n_inflight;
	uint16_t version;
	/* private */
	struct iop_rcur c;
	uint32_t left; /* records (events: calls) left in the current section */
	uint8_t stage;
	struct iop_ev_pred pred;
	struct iop_run_r run; /* run.i < run.count: calls of a run still to hand out */
};

/* Reads just the header fields (no MAC check): for routing and for error
 * messages about frames that fail later. Errors as iop_frame_open. */
enum iop_err iop_frame_peek(const uint8_t *buf, size_t len, struct iop_frame_hdr *hdr);

enum iop_err iop_frame_open(struct iop_frame *f, const uint8_t *buf, size_t len,
                            const struct iop_key *key);
enum iop_err iop_frame_name(struct iop_frame *f, struct iop_name *n);
enum iop_err iop_frame_counter(struct iop_frame *f, struct iop_counter *c);
enum iop_err iop_frame_inflight(struct iop_frame *f, struct iop_inflight *fl);
enum iop_err iop_frame_event(struct iop_frame *f, struct iop_event *ev);
/* iop_frame_event n times into ev[0..n), the first error ending it (the
 * same errors, in one call: a leaf reads a thousand events a frame). */
enum iop_err iop_frame_events(struct iop_frame *f, struct iop_event *ev, uint32_t n);
enum iop_err iop_frame_close(struct iop_frame *f);
/* After iop_frame_event handed out a call decoded from a run record
 * (IOP_EV_RUN): its index in the run (from 0) and the run's calls. */
static inline void iop_frame_run_pos(const struct iop_frame *f, uint32_t *i, uint32_t *n)
{
	*i = f->run.i - 1;
	*n = f->run.count;
}

/* A run of more than IOP_RUN_EXACT_MAX calls decoded whole: what its
 * calls are besides what its first call (IOP_EV_WHOLE) shares with them.
 * Handed out call by call (iop_run_whole_calls), call i ends at first_end
 * + span * i / (count - 1), is at first_offset + i * stride (IOP_EV_OFFSET)
 * and lasted a duration of hist (count, sum, min, max and buckets exact;
 * the first min, the last max). */
struct iop_run_whole {
	uint64_t first_end, span, first_offset, stride;
	uint32_t count;
	struct iop_hist hist; /* borrows its buckets from the caller's memory */
};

/* Where iop_frame_events_whole puts long runs: cap runs, and bk_cap
 * bucket counts for their histograms (the caller's; a run that finds no
 * room in either is handed out call by call, as iop_frame_events does). */
struct iop_runs_out {
	struct iop_run_whole *run;
	uint32_t cap, n;
	uint32_t *bk;
	size_t bk_cap, bk_used;
};

/* iop_frame_events for a receiver that takes a long run's calls together
 * (their sums and histogram, not each call): a run record of more than
 * IOP_RUN_EXACT_MAX calls, whole within the n calls asked, takes one
 * entry of ev, its first call flagged IOP_EV_WHOLE (run_calls its count),
 * and out->run[k] has the rest (k counting such runs in order from out->n
 * as it was); every other call one entry. *slots: the entries written.
 * Every check and error is iop_frame_events'. */
enum iop_err iop_frame_events_whole(struct iop_frame *f, struct iop_event *ev, uint32_t n,
                                    struct iop_runs_out *out, uint32_t *slots);
/* The calls of a run decoded whole (first: its IOP_EV_WHOLE event) into
 * ev[0 .. w->count), as iop_frame_events hands them out. */
void iop_run_whole_calls(const struct iop_event *first, const struct iop_run_whole *w,
                         struct iop_event *ev);

/* Caller-provided arrays for iop_frame_decode; *_cap is each array's length.
 * A frame with more records than an array holds is OVERSIZED. */
struct iop_frame_out {
	struct iop_frame frame; /* header, stats and counts */
	struct iop_name *names;
	struct iop_counter *counters;
	struct iop_inflight *inflight;
	struct iop_event *events;
	size_t names_cap, counters_cap, inflight_cap, events_cap;
};

enum iop_err iop_frame_decode(const uint8_t *buf, size_t len, const struct iop_key *key,
                              struct iop_frame_out *out);

#endif
