/* libFuzzer target: the node's text parsers (collector/node/). Mountinfo
 * text of any shape parses without reading out of bounds or leaking, and
 * every mount it keeps has a mount point starting with '/' that finds
 * itself. The input's first line is also tried as a path. The same text
 * goes to the samplers' parsers (sample.h: PSI, diskstats, meminfo, stat,
 * NFS mountstats of the mount point the first line names, Lustre llite),
 * whose results must be sane: a PSI share not negative, a disk's rates
 * between the sample and itself zero. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mounts.h"
#include "sample.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct iop_mounts m = {0};
	if (iop_mounts_parse(&m, (const char *)data, size) == IOP_OK) {
		for (size_t i = 0; i < m.n; i++) {
			const struct iop_mount *x = &m.v[i];
			if (x->point[0] != '/')
				abort();
			const struct iop_mount *f =
				iop_mounts_find(&m, x->point, strlen(x->point), 1, x->major, x->minor);
			if (!f || strcmp(f->point, x->point) != 0)
				abort();
		}
		const char *nl = memchr(data, '\n', size);
		size_t n = nl ? (size_t)(nl - (const char *)data) : size;
		(void)iop_mounts_find(&m, (const char *)data, n, 0, 0, 0);
	}
	iop_mounts_free(&m);

	const char *t = (const char *)data;
	struct iop_psi psi;
	if (iop_psi_parse(t, size, &psi) == IOP_OK && (psi.some_avg10 < 0 || psi.full_avg10 < 0))
		abort();
	struct iop_diskstat d;
	uint32_t major = size ? data[0] : 0, minor = size > 1 ? data[1] : 0;
	if (iop_diskstats_find(t, size, major, minor, &d) == IOP_OK) {
		if (d.major != major || d.minor != minor || !d.name[0] || strlen(d.name) >= sizeof d.name)
			abort();
		struct iop_disk_rates r;
		iop_disk_rates(&d, &d, 1000000000ull, &r);
		if (r.read_Bps || r.write_Bps || r.util || r.wait_ms)
			abort();
	}
	struct iop_meminfo mi;
	(void)iop_meminfo_parse(t, size, &mi);
	struct iop_cpustat c;
	if (iop_cpustat_parse(t, size, &c) == IOP_OK && c.iowait > c.total)
		abort();
	/* network file systems' client counters: NFS's mountstats section of
	 * the mount point the first line names, Lustre's llite stats; a
	 * sample's rates against itself are nothing */
	char point[256];
	const char *nl = memchr(t, '\n', size);
	size_t pn = nl ? (size_t)(nl - t) : size;
	if (pn >= sizeof point)
		pn = sizeof point - 1;
	memcpy(point, t, pn);
	point[pn] = 0;
	struct iop_netfs_stat n;
	struct iop_disk_rates r;
	if (iop_mountstats_find(t, size, point, &n) == IOP_OK) {
		iop_netfs_rates(&n, &n, 1000000000ull, &r);
		if (r.read_Bps || r.write_Bps || r.wait_ms || !n.has_rtt)
			abort();
	}
	if (iop_llite_parse(t, size, &n) == IOP_OK && n.has_rtt)
		abort();
	return 0;
}
