/* A leaf's CPU per tick spent sampling its node (issue 21):
 *
 *   node_sample_us_per_tick   coll_node_sample_take (collector/node/nodes.h:
 *                             read and parse /proc/pressure/io, /proc/stat,
 *                             /proc/meminfo and /proc/diskstats, and the
 *                             rates of the devices behind the tagged mounts)
 *                             on this machine's /proc; target 200 us
 *
 * The leaf's mount table is this machine's with 4 mounts tagged (as when
 * files were named on them, fsmap.c): its block devices' first. In the same
 * run, the node of the figure: 8 devices and 4 mounts, the files
 * of this machine's /proc copied into a temporary directory with 8 more
 * devices in diskstats (major 8) and 4 mounts on 4 of them; a copy reads
 * faster than /proc, whose text the kernel makes on each read, so the
 * headline is /proc's. CPU time of the thread over SAMPLES ticks (default
 * 2000), and the share of a 1 s tick. Usage: node_bench [NAME...]. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench_util.h"
#include "mounts.h"
#include "nodes.h"
#include "probe.h"

#define DEVS   8
#define MOUNTS 4 /* a device */

static void die(const char *what)
{
	fprintf(stderr, "node_bench: %s\n", what);
	exit(1);
}

static void copy(const char *from, const char *dir, const char *name, const char *extra)
{
	char path[512], buf[1 << 16];
	FILE *in = fopen(from, "r");
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *out = fopen(path, "w");
	if (!out)
		die(path);
	size_t n = in ? fread(buf, 1, sizeof buf, in) : 0;
	fwrite(buf, 1, n, out);
	if (extra)
		fputs(extra, out);
	if (in)
		fclose(in);
	fclose(out);
}

/* CPU us a sample of the node under dir (NULL: /proc), with mounts m. */
static double cost(const char *dir, struct iop_mounts *m, unsigned samples, uint32_t *n_fs)
{
	struct iop_node_probe *p;
	if (iop_node_probe_new(dir, &p))
		die("out of memory");
	struct coll_node_sample x;
	uint64_t c0 = bench_cpu_ns();
	for (unsigned i = 0; i < samples; i++)
		coll_node_sample_take(p, m, 7, i, (uint64_t)(i + 1) * 1000000000u, &x);
	double us = (double)(bench_cpu_ns() - c0) / 1e3 / samples;
	*n_fs = x.n_fs;
	iop_node_probe_free(p);
	return us;
}

int main(int argc, char **argv)
{
	if (!bench_wanted(argc, argv, "node_sample_us_per_tick"))
		return 0;
	unsigned samples = getenv("SAMPLES") ? (unsigned)atoi(getenv("SAMPLES")) : 2000;
	if (!samples)
		die("SAMPLES >= 1");
	char dir[] = "/tmp/node_bench.XXXXXX", path[600];
	if (!mkdtemp(dir))
		die("mkdtemp");
	snprintf(path, sizeof path, "%s/pressure", dir);
	if (mkdir(path, 0700))
		die(path);
	char disks[DEVS * 160] = "", mountinfo[MOUNTS * 160] = "";
	size_t off = 0, moff = 0;
	for (unsigned d = 0; d < DEVS; d++) {
		off += (size_t)snprintf(disks + off, sizeof disks - off,
		                        "   8      %3u sd%c 1474366 82815 37430154 1546301 365690 "
		                        "483470 172044072 3673183 0 677168 5480965 0 0 0 0 0 0\n",
		                        d * 16, 'a' + d);
		if (d < MOUNTS)
			moff += (size_t)snprintf(mountinfo + moff, sizeof mountinfo - moff,
			                         "%u 1 8:%u / /data%u rw - xfs /dev/sd%c rw\n", 100 + d,
			                         d * 16, d, 'a' + d);
	}
	copy("/proc/pressure/io", dir, "pressure/io", NULL);
	copy("/proc/stat", dir, "stat", NULL);
	copy("/proc/meminfo", dir, "meminfo", NULL);
	copy("/proc/diskstats", dir, "diskstats", disks);
	struct iop_mounts m = {0};
	if (iop_mounts_parse(&m, mountinfo, moff) || m.n != MOUNTS)
		die("mount table");
	for (size_t i = 0; i < m.n; i++)
		m.v[i].tag = 0x1000 + i; /* named: a file was placed on it */
	uint32_t n_fs, own_fs;
	double us = cost(dir, &m, samples, &n_fs);
	/* this machine's /proc: its mounts of block devices, tagged */
	struct iop_mounts own = {0};
	if (iop_mounts_read(&own, NULL, NULL))
		die("/proc/self/mountinfo");
	for (size_t i = 0, tagged = 0; i < own.n; i++) /* block devices' first */
		if (own.v[i].major && tagged < MOUNTS)
			own.v[i].tag = 0x2000 + tagged++;
	double own_us = cost(NULL, &own, samples, &own_fs);
	printf("node_sample_us_per_tick %.1f us (target <= 200; this machine's /proc, %u file "
	       "systems with rates a sample, %.4f %% of a 1 s tick; a copy of it with %u more "
	       "devices and %u mounts on them: %.1f us, %u file systems; CPU time over %u "
	       "samples)\n",
	       own_us, own_fs, own_us / 1e4, DEVS, MOUNTS, us, n_fs, samples);
	iop_mounts_free(&m);
	iop_mounts_free(&own);
	const char *names[] = {"pressure/io", "stat", "meminfo", "diskstats"};
	for (int i = 0; i < 4; i++) {
		snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		unlink(path);
	}
	snprintf(path, sizeof path, "%s/pressure", dir);
	rmdir(path);
	rmdir(dir);
	return 0;
}
