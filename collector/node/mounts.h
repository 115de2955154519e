/* The node's mount table, and the file system a path lies on: mount
 * point, type (tmpfs, ext4, xfs, nfs, lustre, gpfs, beegfs ...) and the
 * device behind it (docs/holistic.md). Read from /proc/self/mountinfo
 * (proc(5)): its fields 3 (major:minor), 5 (mount point, octal escapes),
 * then after the " - " separator the type and the source; a block
 * device's name from /sys/dev/block/MAJOR:MINOR/uevent (DEVNAME), other
 * file systems' device is their source ("tmpfs", "server:/export"). */
#ifndef IOP_MOUNTS_H
#define IOP_MOUNTS_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

struct iop_mount {
	char *point;  /* mount point, unescaped */
	char *type;   /* file system type */
	char *device; /* block device name (vda, nvme0n1) or the source */
	uint32_t major, minor;
	uint32_t point_len; /* strlen(point) */
	uint64_t tag;       /* the caller's (0 after parsing): fsmap.c keeps the
	                       file system's id there once named */
};

struct iop_mounts {
	struct iop_mount *v;
	size_t n, cap;
};

/* Parses mountinfo text (len bytes, not NUL-terminated) into *m (empty
 * before: {0}), in order. A line that does not parse is skipped; at most
 * IOP_MOUNTS_MAX lines are kept. Devices are the sources; iop_mounts_devices
 * names the block devices. NOMEM (m keeps what it had). */
#define IOP_MOUNTS_MAX 65536
enum iop_err iop_mounts_parse(struct iop_mounts *m, const char *text, size_t len);
/* For each mount of a block device (major != 0, a /sys/dev/block entry
 * under sys, NULL: "/sys"), its name from that entry's DEVNAME. */
void iop_mounts_devices(struct iop_mounts *m, const char *sys);
/* Reads and parses path (NULL: /proc/self/mountinfo), then names its
 * block devices. IO (errno set) when it cannot be read. */
enum iop_err iop_mounts_read(struct iop_mounts *m, const char *path, const char *sys);
void iop_mounts_free(struct iop_mounts *m);

/* The mount an absolute path lies on: among the mounts of device
 * major:minor (when has_dev: the path's st_dev; bind mounts share one),
 * else among all, the one whose mount point is the longest prefix of the
 * path at a '/' boundary, the later line when two are equal (a mount
 * over another hides it). NULL when none (a relative path, an empty
 * table). */
const struct iop_mount *iop_mounts_find(const struct iop_mounts *m, const char *path, size_t len,
                                        int has_dev, uint32_t major, uint32_t minor);

#endif
