/* A leaf's sample of its own node each tick (issue 21, docs/holistic.md):
 * the node's I/O pressure, CPU iowait, dirty and writeback memory, and for
 * each block device it is asked about, the device's rates over the time
 * since the last sample. It reads /proc/pressure/io, /proc/stat,
 * /proc/meminfo and /proc/diskstats (proc(5)) with one read(2) each
 * (sample.h parses them): no daemon, no root. A file that cannot be read
 * (a kernel without PSI) or parsed leaves its figures out (the has_
 * flags); the first sample has no rates, only levels. */
#ifndef IOP_NODE_PROBE_H
#define IOP_NODE_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "sample.h"

#define IOP_PROBE_DEVS 32 /* devices a probe follows; more are left out */

struct iop_node_tick {
	bool has_psi, has_full; /* I/O pressure over the interval: */
	double psi_some, psi_full; /* share of it some (all) tasks stalled on I/O, 0 to 1 */
	bool has_iowait;
	double iowait; /* share of all CPU time spent in iowait, 0 to 1 */
	bool has_mem;
	uint64_t dirty_kib, writeback_kib; /* now */
};

struct iop_probe_dev {
	uint32_t major, minor;
	bool has;                    /* rates over the interval below */
	struct iop_disk_rates rates; /* sample.h */
};

/* A network file system's client, followed by its mount point: NFS's in
 * self/mountstats, or (lustre: its file system's name) Lustre's llite
 * instance fs/lustre/llite/NAME-* (sample.h parses them). */
struct iop_probe_netfs {
	const char *point;
	const char *lustre; /* NULL: NFS */
	bool has;                    /* rates over the interval below */
	struct iop_disk_rates rates; /* util 0; wait_ms NFS's mean RTT */
};

struct iop_node_probe;

/* proc: the proc file system's root (NULL: "/proc"; a directory of
 * captured files in tests). NOMEM only. */
enum iop_err iop_node_probe_new(const char *proc, struct iop_node_probe **out);
void iop_node_probe_free(struct iop_node_probe *p);

/* Samples at now_ns (monotonic): the node's figures, and each of the n
 * devices' rates since the last sample that saw it (has false the first
 * time, or when /proc/diskstats has no line of it). */
void iop_node_probe_sample(struct iop_node_probe *p, uint64_t now_ns, struct iop_node_tick *node,
                           struct iop_probe_dev *devs, size_t n);
/* The same for the n network file systems: each one's rates since the
 * last sample that saw it. */
void iop_node_probe_netfs(struct iop_node_probe *p, uint64_t now_ns, struct iop_probe_netfs *v,
                          size_t n);

#endif
