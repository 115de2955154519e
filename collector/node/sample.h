/* The node's own I/O figures, parsed from what every Linux node has
 * (proc(5)), for the leaf's node samples (issue 21, docs/holistic.md):
 *
 *   /proc/pressure/io    I/O pressure: the share of time some (or all)
 *                        runnable tasks were stalled on I/O
 *   /proc/diskstats      per block device: reads and writes completed,
 *                        sectors, ms spent, in flight, ms busy
 *   /proc/meminfo        dirty and writeback memory
 *   /proc/stat           the "cpu" line's iowait among all CPU time
 *
 * Each parser takes the file's text (not NUL-terminated), never reads past
 * it, and says MALFORMED when the line it needs is not there or does not
 * parse: a kernel without PSI has no /proc/pressure/io, which the reader
 * reports as IO. iop_node_rates turns two samples into rates. */
#ifndef IOP_NODE_SAMPLE_H
#define IOP_NODE_SAMPLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

struct iop_psi {
	double some_avg10, full_avg10; /* percent of the last 10 s */
	uint64_t some_us, full_us;     /* stalled time since boot */
	bool has_full;
};
enum iop_err iop_psi_parse(const char *text, size_t len, struct iop_psi *out);

struct iop_diskstat {
	uint32_t major, minor;
	char name[32];
	uint64_t rd_ios, rd_sectors, rd_ms; /* completed reads, 512-byte sectors, ms */
	uint64_t wr_ios, wr_sectors, wr_ms;
	uint64_t in_flight, io_ms;          /* in progress now; ms with any in progress */
};
/* The line of device major:minor. NOT_FOUND when there is none. */
enum iop_err iop_diskstats_find(const char *text, size_t len, uint32_t major, uint32_t minor,
                                struct iop_diskstat *out);

struct iop_meminfo {
	uint64_t dirty_kib, writeback_kib;
};
enum iop_err iop_meminfo_parse(const char *text, size_t len, struct iop_meminfo *out);

struct iop_cpustat {
	uint64_t total, iowait; /* clock ticks of all CPUs since boot */
};
enum iop_err iop_cpustat_parse(const char *text, size_t len, struct iop_cpustat *out);

/* A device's rates between two samples dt_ns apart (b after a). */
struct iop_disk_rates {
	double read_Bps, write_Bps, read_iops, write_iops;
	double util;    /* share of the time with I/O in progress, 0 to 1 */
	double wait_ms; /* mean time a completed request took */
};
void iop_disk_rates(const struct iop_diskstat *a, const struct iop_diskstat *b, uint64_t dt_ns,
                    struct iop_disk_rates *out);

/* A network file system's client counters (cumulative): calls and bytes
 * read and written, and for NFS the round-trip time of those calls. */
struct iop_netfs_stat {
	uint64_t rd_ops, rd_bytes, wr_ops, wr_bytes;
	uint64_t rtt_ms; /* NFS: the READ and WRITE calls' cumulative RTT */
	bool has_rtt;
};
/* NFS: the READ and WRITE lines of the mount at point (unescaped) in
 * /proc/self/mountstats text (its "per-op statistics": ops, transmissions,
 * timeouts, bytes sent, bytes received, queue, RTT and execute ms); the
 * bytes are those received for READ and sent for WRITE, headers included.
 * NOT_FOUND when no NFS mount is there; MALFORMED when its lines are
 * missing or do not parse. */
enum iop_err iop_mountstats_find(const char *text, size_t len, const char *point,
                                 struct iop_netfs_stat *out);
/* Lustre: a client's llite stats file (/proc/fs/lustre/llite/NAME/stats,
 * or under /sys/kernel/debug): "read_bytes N samples [bytes] MIN MAX SUM"
 * and write_bytes (a line left out: none yet). MALFORMED without its
 * snapshot_time line, or when those lines do not parse. */
enum iop_err iop_llite_parse(const char *text, size_t len, struct iop_netfs_stat *out);
/* Rates between two samples dt_ns apart (b after a), as a device's: util
 * 0 (not measured), wait_ms the mean RTT of the calls completed (0 when
 * unknown). */
void iop_netfs_rates(const struct iop_netfs_stat *a, const struct iop_netfs_stat *b,
                     uint64_t dt_ns, struct iop_disk_rates *out);

#endif
