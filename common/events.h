/* Layers, operation classes and operations (from events.def), and the event
 * record every part passes around. */
#ifndef IOP_EVENTS_H
#define IOP_EVENTS_H

#include <stdbool.h>
#include <stdint.h>

enum iop_layer {
#define IOP_LAYER(id, name, label) IOP_LAYER_##id,
#include "events.def"
#undef IOP_LAYER
	IOP_LAYER__COUNT
};

enum iop_class {
#define IOP_CLASS(id, name, label) IOP_CLASS_##id,
#include "events.def"
#undef IOP_CLASS
	IOP_CLASS__COUNT
};

enum iop_op {
#define IOP_OP(id, name, cls, label) IOP_OP_##id,
#include "events.def"
#undef IOP_OP
	IOP_OP__COUNT
};

_Static_assert(IOP_LAYER__COUNT <= 4, "layer must fit 2 bits on the wire");
_Static_assert(IOP_CLASS__COUNT <= 4, "class must fit 2 bits on the wire");
_Static_assert(IOP_OP__COUNT <= 32, "op must fit 5 bits on the wire (bit 5: a collective call)");

/* Names are lower-case identifiers ("mpiio", "write_coll") for JSON, CSV and
 * filters; labels are what the dashboard shows ("MPI-IO"). Out-of-range
 * values give "?". */
const char *iop_layer_name(enum iop_layer layer);
const char *iop_layer_label(enum iop_layer layer);
const char *iop_class_name(enum iop_class cls);
const char *iop_class_label(enum iop_class cls);
const char *iop_op_name(enum iop_op op);
const char *iop_op_label(enum iop_op op);
/* Inline: a leaf asks it for every call it takes. */
static inline enum iop_class iop_op_class(enum iop_op op)
{
	static const unsigned char op_classes[] = {
#define IOP_OP(id, name, cls, label) [IOP_OP_##id] = IOP_CLASS_##cls,
#include "events.def"
#undef IOP_OP
	};
	return (unsigned)op < IOP_OP__COUNT ? (enum iop_class)op_classes[op] : IOP_CLASS_META;
}

/* Reverse lookups by name; false when the name is unknown. */
bool iop_layer_from_name(const char *name, enum iop_layer *out);
bool iop_op_from_name(const char *name, enum iop_op *out);

/* Flags of an event (struct iop_event.flags). */
enum {
	IOP_EV_OFFSET = 1u << 0,   /* .offset is valid */
	IOP_EV_BYTES = 1u << 1,    /* .bytes is valid */
	IOP_EV_ERROR = 1u << 2,    /* the call failed; .err holds its errno */
	IOP_EV_PARENT = 1u << 3,   /* issued inside another call: .parent_id */
	IOP_EV_CHILDREN = 1u << 4, /* issued calls below it: .call_id, child_* */
	IOP_EV_COLL = 1u << 5,     /* a collective call: .coll_seq, .coll_size */
	IOP_EV_RUN = 1u << 6,      /* decoded from a run record: its end is placed
	                              evenly between the run's first and last,
	                              its duration comes from the run's histogram
	                              when the run is long (docs/wire-format.md) */
	IOP_EV_WHOLE = 1u << 7,    /* the first call of a long run decoded whole
	                              (iop_frame_events_whole, common/frame.h):
	                              the run's other calls are not in the events
	                              after it; its struct iop_run_whole says
	                              what they are. Never on the wire. */
};

/* One completed I/O call. Times are nanoseconds since the Unix epoch (the
 * shim maps its own clock onto CLOCK_REALTIME). Ids of files, call sites and
 * threads are small per-process numbers; the frame's name records map them
 * to paths and hashes. */
struct iop_event {
	uint64_t end_ns;      /* when the call returned */
	uint64_t dur_ns;      /* how long it took; start = end_ns - dur_ns */
	uint64_t offset;      /* file offset of the access (IOP_EV_OFFSET) */
	uint64_t bytes;       /* bytes moved, as returned (IOP_EV_BYTES) */
	uint64_t call_id;     /* this call's id, unique in the process (IOP_EV_CHILDREN) */
	uint64_t parent_id;   /* the enclosing call's call_id (IOP_EV_PARENT) */
	uint64_t child_bytes; /* bytes moved by the calls it issued (IOP_EV_CHILDREN) */
	uint64_t child_ns;    /* time spent in those calls: exclusive = dur - child */
	uint32_t child_ops;   /* how many calls it issued (IOP_EV_CHILDREN) */
	uint32_t file;        /* file (or dataset) id, 0 = none */
	uint32_t site;        /* call-site id, 0 = unknown */
	uint32_t thread;      /* thread index within the process */
	uint32_t err;         /* errno of a failed call (IOP_EV_ERROR) */
	uint32_t coll_seq;    /* the process's n-th collective call on this file at
	                         this layer, from 1: the same instance on every rank
	                         (IOP_EV_COLL) */
	uint32_t coll_size;   /* ranks that make the call (the communicator's size) */
	uint32_t run_calls;   /* the first call of a run (IOP_EV_RUN): the run's
	                         calls, this one and the next run_calls - 1 of the
	                         decoded events; 0 otherwise */
	uint8_t layer;        /* enum iop_layer */
	uint8_t op;           /* enum iop_op */
	uint8_t flags;        /* IOP_EV_* */
};

#endif
