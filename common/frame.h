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

#define IOP_FRAME_MAGIC       0x46504f49u /* "IOPF" as bytes on the wire */
#define IOP_WIRE_VERSION      2 /* 2: collective calls' numbers (docs/wire-format.md) */
#define IOP_WIRE_VERSION_MIN  1 /* the oldest a decoder reads: 1 is 2 without them */
#define IOP_FRAME_HEADER_LEN  60
#define IOP_FRAME_OVERHEAD    (IOP_FRAME_HEADER_LEN + IOP_MAC_BYTES)
#define IOP_FRAME_MAX_PAYLOAD (1u << 20) /* larger frames are rejected */
#define IOP_FRAME_MAX_LEN     (IOP_FRAME_OVERHEAD + IOP_FRAME_MAX_PAYLOAD)
#define IOP_NAME_MAX          4096                      /* bytes in a name record's text */
#define IOP_ID_MAX            0xffffffu                 /* file, site and thread ids */
#define IOP_EVENT_MAX_BYTES   (2 + 15 * IOP_VARINT_MAX) /* longest encoded event */
#define IOP_EVENT_MIN_BYTES   4                         /* op, flags, end delta, duration */

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

/* Encoder. Fields are private. */
struct iop_frame_enc {
	uint8_t *buf;
	struct iop_wcur c; /* ends IOP_MAC_BYTES before the buffer does */
	uint32_t n_events;
	uint16_t n_names, n_counters, n_inflight;
	uint8_t stage;
	struct iop_ev_pred pred;
};

/* buf must hold at least IOP_FRAME_OVERHEAD + 64 bytes; a frame never grows
 * past IOP_FRAME_MAX_LEN whatever cap is. */
enum iop_err iop_enc_begin(struct iop_frame_enc *e, uint8_t *buf, size_t cap,
                           const struct iop_frame_hdr *hdr, const struct iop_stats *stats);
enum iop_err iop_enc_name(struct iop_frame_enc *e, const struct iop_name *n);
enum iop_err iop_enc_counter(struct iop_frame_enc *e, const struct iop_counter *c);
enum iop_err iop_enc_inflight(struct iop_frame_enc *e, const struct iop_inflight *f);
enum iop_err iop_enc_event(struct iop_frame_enc *e, const struct iop_event *ev);
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
	uint32_t n_events;
	uint16_t n_names, n_counters, n_inflight;
	/* private */
	struct iop_rcur c;
	uint32_t left; /* records left in the current section */
	uint8_t stage;
	struct iop_ev_pred pred;
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
