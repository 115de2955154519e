/* The node's I/O figures parsed from captured text (this machine's
 * /proc/pressure/io, /proc/diskstats, /proc/meminfo and /proc/stat, and
 * older or damaged forms), the disk rates between two samples, and this
 * machine's own files. */
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sample.h"

static const char psi[] = "some avg10=0.26 avg60=0.46 avg300=0.80 total=256900521\n"
                          "full avg10=12.50 avg60=0.37 avg300=0.35 total=114620612\n";

static const char disk[] =
	"   7       0 loop0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
	" 254       0 vda 1474366 82815 37430154 1546301 365690 483470 172044072 3673183 0 677168 "
	"5480965 400575 92 228720440 182235 16907 79245\n"
	" 254       1 vda1 10 0 80 5 2 0 16 3 0 7 8\n" /* an old kernel's 11 fields */
	" 253       0 zram0 0 0 0\n";                    /* cut short */

static const char mem[] = "MemTotal:       24683656 kB\nDirty:             22912 kB\n"
                          "Writeback:             0 kB\nWritebackTmp:          0 kB\n";

static const char stat_[] = "cpu  3746665 138557 1772212 4597721 19820 0 35453 19921 0 0\n"
                            "cpu0 1873332 69278 886106 2298860 9910 0 17726 9960 0 0\n";

static void parses_psi(void **state)
{
	(void)state;
	struct iop_psi p;
	assert_int_equal(iop_psi_parse(psi, strlen(psi), &p), IOP_OK);
	assert_true(p.some_avg10 > 0.259 && p.some_avg10 < 0.261);
	assert_true(p.full_avg10 > 12.49 && p.full_avg10 < 12.51);
	assert_int_equal(p.some_us, 256900521);
	assert_int_equal(p.full_us, 114620612);
	assert_true(p.has_full);
	/* kernels before 5.13 had no "full" line for the CPU; I/O always has
	 * one, but take "some" alone */
	assert_int_equal(iop_psi_parse(psi, 57, &p), IOP_OK);
	assert_false(p.has_full);
	assert_int_equal(iop_psi_parse("some avg10=x total=1\n", 21, &p), IOP_ERR_MALFORMED);
	assert_int_equal(iop_psi_parse("", 0, &p), IOP_ERR_MALFORMED);
	assert_int_equal(iop_psi_parse(psi, 20, &p), IOP_ERR_MALFORMED); /* cut in a line */
}

static void finds_diskstats(void **state)
{
	(void)state;
	struct iop_diskstat d;
	assert_int_equal(iop_diskstats_find(disk, strlen(disk), 254, 0, &d), IOP_OK);
	assert_string_equal(d.name, "vda");
	assert_int_equal(d.rd_ios, 1474366);
	assert_int_equal(d.rd_sectors, 37430154);
	assert_int_equal(d.rd_ms, 1546301);
	assert_int_equal(d.wr_ios, 365690);
	assert_int_equal(d.wr_sectors, 172044072);
	assert_int_equal(d.wr_ms, 3673183);
	assert_int_equal(d.in_flight, 0);
	assert_int_equal(d.io_ms, 677168);
	assert_int_equal(iop_diskstats_find(disk, strlen(disk), 254, 1, &d), IOP_OK);
	assert_string_equal(d.name, "vda1");
	assert_int_equal(d.io_ms, 7);
	assert_int_equal(iop_diskstats_find(disk, strlen(disk), 253, 0, &d), IOP_ERR_MALFORMED);
	assert_int_equal(iop_diskstats_find(disk, strlen(disk), 8, 0, &d), IOP_ERR_NOT_FOUND);
	/* a name with a NUL or a control byte (found by mounts_fuzz) */
	static const char bad[] = " 8 0 s\0a 1 2 3 4 5 6 7 8 9 10\n";
	assert_int_equal(iop_diskstats_find(bad, sizeof bad - 1, 8, 0, &d), IOP_ERR_MALFORMED);
}

static void parses_meminfo_and_stat(void **state)
{
	(void)state;
	struct iop_meminfo m;
	assert_int_equal(iop_meminfo_parse(mem, strlen(mem), &m), IOP_OK);
	assert_int_equal(m.dirty_kib, 22912);
	assert_int_equal(m.writeback_kib, 0); /* not WritebackTmp's */
	assert_int_equal(iop_meminfo_parse(mem, 60, &m), IOP_ERR_MALFORMED); /* no Writeback */
	struct iop_cpustat c;
	assert_int_equal(iop_cpustat_parse(stat_, strlen(stat_), &c), IOP_OK);
	assert_int_equal(c.iowait, 19820);
	assert_int_equal(c.total, 3746665ull + 138557 + 1772212 + 4597721 + 19820 + 0 + 35453 + 19921);
	assert_int_equal(iop_cpustat_parse("cpu  1 2 3\n", 11, &c), IOP_ERR_MALFORMED);
	assert_int_equal(iop_cpustat_parse("cpu0 1 2 3 4 5\n", 15, &c), IOP_ERR_MALFORMED);
}

/* Two samples a second apart: 10 MiB written in 80 writes of 25 ms each,
 * the device busy 970 ms of the 1000. */
static void disk_rates(void **state)
{
	(void)state;
	struct iop_diskstat a = {.wr_ios = 100, .wr_sectors = 1000, .wr_ms = 50, .io_ms = 5000};
	struct iop_diskstat b = a;
	b.wr_ios += 80;
	b.wr_sectors += 10 * 2048;
	b.wr_ms += 80 * 25;
	b.io_ms += 970;
	struct iop_disk_rates r;
	iop_disk_rates(&a, &b, 1000000000ull, &r);
	assert_true(r.write_Bps > 10485759 && r.write_Bps < 10485761);
	assert_true(r.write_iops > 79.9 && r.write_iops < 80.1);
	assert_true(r.util > 0.969 && r.util < 0.971);
	assert_true(r.wait_ms > 24.9 && r.wait_ms < 25.1);
	assert_true(r.read_Bps == 0 && r.read_iops == 0);
	/* a counter that went back (the device came back): nothing, not a
	 * huge number; busy more than the interval: 1 */
	b.wr_sectors = 0;
	b.io_ms = a.io_ms + 5000;
	iop_disk_rates(&a, &b, 1000000000ull, &r);
	assert_true(r.write_Bps == 0);
	assert_true(r.util == 1);
	iop_disk_rates(&a, &b, 0, &r);
	assert_true(r.util == 0);
}

static size_t slurp(const char *path, char *buf, size_t cap)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	size_t n = fread(buf, 1, cap, f);
	fclose(f);
	return n;
}

/* This machine's files parse (PSI when the kernel has it). */
static void own_files(void **state)
{
	(void)state;
	static char buf[1 << 16];
	size_t n = slurp("/proc/meminfo", buf, sizeof buf);
	struct iop_meminfo m;
	assert_int_equal(iop_meminfo_parse(buf, n, &m), IOP_OK);
	n = slurp("/proc/stat", buf, sizeof buf);
	struct iop_cpustat c;
	assert_int_equal(iop_cpustat_parse(buf, n, &c), IOP_OK);
	assert_true(c.total > c.iowait);
	n = slurp("/proc/pressure/io", buf, sizeof buf);
	struct iop_psi p;
	if (n)
		assert_int_equal(iop_psi_parse(buf, n, &p), IOP_OK);
	else
		printf("# no /proc/pressure/io on this kernel\n");
}

/* /proc/self/mountstats of a node with an NFS mount (a kernel 6.1 capture,
 * trimmed): its READ and WRITE lines; another mount's section after it;
 * an escaped mount point; damaged forms. */
static const char mountstats[] =
	"device /dev/vda mounted on / with fstype ext4\n"
	"device srv:/export mounted on /mnt/my\\040data with fstype nfs4 statvers=1.1\n"
	"\topts:\trw,vers=4.2,rsize=1048576,wsize=1048576,proto=tcp\n"
	"\tage:\t120\n"
	"\tbytes:\t10485760 20971520 0 0 10485760 20971520 2560 5120\n"
	"\tRPC iostats version: 1.1  p/v: 100003/4 (nfs)\n"
	"\tper-op statistics\n"
	"\t        NULL: 0 0 0 0 0 0 0 0 0\n"
	"\t        READ: 10 10 0 1520 10487040 3 25 30 0\n"
	"\t       WRITE: 20 20 0 20974080 2720 5 40 50 0\n"
	"device srv:/other mounted on /mnt/other with fstype nfs statvers=1.1\n"
	"\t        READ: 99 99 0 1 1 1 1 1 0\n"
	"\t       WRITE: 99 99 0 1 1 1 1 1 0\n";

static void parses_mountstats(void **state)
{
	(void)state;
	struct iop_netfs_stat n;
	size_t len = strlen(mountstats);
	assert_int_equal(iop_mountstats_find(mountstats, len, "/mnt/my data", &n), IOP_OK);
	assert_int_equal(n.rd_ops, 10);
	assert_int_equal(n.rd_bytes, 10487040);
	assert_int_equal(n.wr_ops, 20);
	assert_int_equal(n.wr_bytes, 20974080);
	assert_int_equal(n.rtt_ms, 65);
	assert_true(n.has_rtt);
	assert_int_equal(iop_mountstats_find(mountstats, len, "/mnt/other", &n), IOP_OK);
	assert_int_equal(n.rd_ops, 99);
	/* not NFS, not there, a prefix of a mount point */
	assert_int_equal(iop_mountstats_find(mountstats, len, "/", &n), IOP_ERR_NOT_FOUND);
	assert_int_equal(iop_mountstats_find(mountstats, len, "/mnt", &n), IOP_ERR_NOT_FOUND);
	assert_int_equal(iop_mountstats_find(mountstats, len, "/mnt/my", &n), IOP_ERR_NOT_FOUND);
	/* cut before its WRITE line; a READ line cut short */
	const char *w = strstr(mountstats, "\t       WRITE: 20");
	assert_int_equal(iop_mountstats_find(mountstats, (size_t)(w - mountstats), "/mnt/my data", &n),
	                 IOP_ERR_MALFORMED);
	assert_int_equal(n.rd_ops, 0);
	static const char cut[] = "device s:/e mounted on /n with fstype nfs\n READ: 1 2 3\n"
	                          " WRITE: 1 1 0 1 1 1 1 1\n";
	assert_int_equal(iop_mountstats_find(cut, strlen(cut), "/n", &n), IOP_ERR_MALFORMED);
}

/* A Lustre client's llite stats (2.15's form), and damaged ones. */
static const char llite[] = "snapshot_time             1700000000.123456789 secs.nsecs\n"
                            "start_time                1699990000.000000000 secs.nsecs\n"
                            "read_bytes                8 samples [bytes] 0 1048576 4194304\n"
                            "write_bytes               4 samples [bytes] 1048576 1048576 4194304\n"
                            "open                      2 samples [usecs] 5 9 14\n";

static void parses_llite(void **state)
{
	(void)state;
	struct iop_netfs_stat n;
	assert_int_equal(iop_llite_parse(llite, strlen(llite), &n), IOP_OK);
	assert_int_equal(n.rd_ops, 8);
	assert_int_equal(n.rd_bytes, 4194304);
	assert_int_equal(n.wr_ops, 4);
	assert_int_equal(n.wr_bytes, 4194304);
	assert_false(n.has_rtt);
	/* a client that has not written yet: no write_bytes line */
	const char *w = strstr(llite, "write_bytes");
	assert_int_equal(iop_llite_parse(llite, (size_t)(w - llite), &n), IOP_OK);
	assert_int_equal(n.wr_ops, 0);
	assert_int_equal(n.rd_ops, 8);
	/* no snapshot_time; a line cut short */
	assert_int_equal(iop_llite_parse(w, strlen(w), &n), IOP_ERR_MALFORMED);
	static const char cut[] = "snapshot_time 1 secs\nread_bytes 8 samples [bytes] 0 1\n";
	assert_int_equal(iop_llite_parse(cut, strlen(cut), &n), IOP_ERR_MALFORMED);
}

/* Rates: NFS's RTT a call; Lustre's without one. */
static void netfs_rates(void **state)
{
	(void)state;
	struct iop_netfs_stat a = {.rd_ops = 10, .rd_bytes = 1000, .wr_ops = 5, .wr_bytes = 500,
	                           .rtt_ms = 100, .has_rtt = true};
	struct iop_netfs_stat b = a;
	b.rd_ops += 30, b.rd_bytes += 3 << 20, b.wr_ops += 10, b.wr_bytes += 1 << 20, b.rtt_ms += 80;
	struct iop_disk_rates r;
	iop_netfs_rates(&a, &b, 2000000000ull, &r);
	assert_true(r.read_Bps > 1572863 && r.read_Bps < 1572865);
	assert_true(r.write_Bps > 524287 && r.write_Bps < 524289);
	assert_true(r.read_iops > 14.9 && r.read_iops < 15.1);
	assert_true(r.write_iops > 4.9 && r.write_iops < 5.1);
	assert_true(r.wait_ms > 1.99 && r.wait_ms < 2.01); /* 80 ms over 40 calls */
	assert_true(r.util == 0);
	b.has_rtt = false;
	iop_netfs_rates(&a, &b, 2000000000ull, &r);
	assert_true(r.wait_ms == 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parses_psi),
		cmocka_unit_test(finds_diskstats),
		cmocka_unit_test(parses_meminfo_and_stat),
		cmocka_unit_test(disk_rates),
		cmocka_unit_test(parses_mountstats),
		cmocka_unit_test(parses_llite),
		cmocka_unit_test(netfs_rates),
		cmocka_unit_test(own_files),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
