/* Node samples as the collectors pass them on (issue 21): each tick, a
 * leaf's sample of its node (probe.h) goes up in the tick delta with the
 * rates of the devices behind the file systems its files are on; the
 * root keeps each node's latest, recordings carry them in every DELTA and
 * keyframe. Figures are integers: shares in parts per million, rates per
 * second. The layout is in docs/collector.md ("Tick delta", section 8). */
#ifndef IOP_NODES_H
#define IOP_NODES_H

#include <stdbool.h>
#include <stdint.h>

#include "codec.h"
#include "err.h"

#define COLL_NODE_FS_MAX 16 /* file systems with a device, a node */
#define COLL_NODES_MAX   (1u << 20)

enum {
	COLL_NODE_PSI = 1,    /* psi_some_ppm is known */
	COLL_NODE_FULL = 2,   /* psi_full_ppm is known */
	COLL_NODE_IOWAIT = 4, /* iowait_ppm is known */
	COLL_NODE_MEM = 8,    /* dirty and writeback are known */
	COLL_NODE__FLAGS = 15
};

/* What the figures of a file system's entry are of. */
enum {
	COLL_NODE_FS_DEVICE = 0, /* its block device (/proc/diskstats) */
	COLL_NODE_FS_NET = 1     /* its network client (NFS mountstats, Lustre llite): no
	                            utilisation; wait_us NFS's mean RTT, else 0 */
};

/* A file system's device (or network client) on the node, over the tick. */
struct coll_node_fs {
	uint64_t fs;       /* its id (fsmap.h, COLL_NAME_FS) */
	uint8_t kind;      /* COLL_NODE_FS_DEVICE or _NET */
	uint32_t util_ppm; /* share of the tick with a request in progress */
	uint32_t wait_us;  /* mean time a completed request took */
	uint64_t read_Bps, write_Bps, read_iops, write_iops;
	/* the job's own POSIX and STDIO calls on the file system from this
	 * node in the tick (the leaf's FS rows): bytes a second and calls */
	uint64_t job_Bps, job_ops;
};

struct coll_node_sample {
	int64_t t;     /* the tick */
	uint32_t node; /* node id (the host name's hash) */
	uint32_t flags;
	uint32_t psi_some_ppm, psi_full_ppm; /* I/O pressure over the tick */
	uint32_t iowait_ppm;                 /* CPU time in iowait */
	uint64_t dirty_kib, writeback_kib;
	uint32_t n_fs;
	struct coll_node_fs fs[COLL_NODE_FS_MAX];
};

/* One sample a node. */
struct coll_nodeset {
	struct coll_node_sample *v;
	uint32_t n, cap;
};

void coll_nodeset_free(struct coll_nodeset *s);
/* The sample of its node replaced (a later one), or added. NOMEM, or
 * OVERSIZED past COLL_NODES_MAX nodes. */
enum iop_err coll_nodeset_put(struct coll_nodeset *s, const struct coll_node_sample *x);
/* Every sample of src put into dst. */
enum iop_err coll_nodeset_merge(struct coll_nodeset *dst, const struct coll_nodeset *src);
/* dst's sample of each node in src takes the larger of each figure (its
 * flags too; file systems by id, at most COLL_NODE_FS_MAX; t the latest):
 * the job's peaks, for the summary. */
enum iop_err coll_nodeset_peak(struct coll_nodeset *dst, const struct coll_nodeset *src);
/* The node's sample, or NULL. */
const struct coll_node_sample *coll_nodeset_find(const struct coll_nodeset *s, uint32_t node);
/* Its busiest block device (kind COLL_NODE_FS_DEVICE; with job_io, of
 * those the job made calls on), or NULL. */
const struct coll_node_fs *coll_node_busiest(const struct coll_node_sample *x, bool job_io);
/* A node's device of file system fs, or NULL. */
const struct coll_node_fs *coll_node_fs_find(const struct coll_node_sample *x, uint64_t fs);

/* A varint count, then per sample: svarint tick, u32 node, varint flags,
 * varints psi some, psi full, iowait (ppm, at most 10^6), dirty, writeback
 * (KiB), varint file systems (at most COLL_NODE_FS_MAX), then per file
 * system u64 id, varint kind (0 device, 1 network client), varints util (ppm, at most 10^6), wait us, read and
 * write bytes/s, read and write IOPS, the job's bytes/s and calls. Decode replaces *s; MALFORMED for a
 * value out of range, a node twice, unknown flags; *s is empty on
 * failure. */
void coll_nodeset_encode(const struct coll_nodeset *s, struct iop_wcur *c);
enum iop_err coll_nodeset_decode(struct coll_nodeset *s, struct iop_rcur *c);

/* A leaf's sample of its node (id node) for tick t at now_ns: the probe's
 * figures, and the rates of the block devices behind the mounts that
 * files were named on (those with a tag: fsmap.c keeps the file system's
 * id there), then of the NFS and Lustre clients of such mounts; at most
 * COLL_NODE_FS_MAX. */
struct iop_node_probe;
struct iop_mounts;
void coll_node_sample_take(struct iop_node_probe *p, const struct iop_mounts *m, uint32_t node,
                           int64_t t, uint64_t now_ns, struct coll_node_sample *out);

#endif
