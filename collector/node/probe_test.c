/* A leaf's sample of its own node (probe.h) from a directory of captured
 * /proc files (fakeproc.h), rewritten between samples with counters moved
 * by known amounts, so each rate has one right value: the levels of the
 * first sample, the rates of the second, a file or a line missing,
 * counters that went back; then this machine's own /proc. */
#include "test_util.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fakeproc.h"
#include "probe.h"

#define SEC 1000000000ull

static bool near(double x, double want)
{
	return fabs(x - want) < 1e-9;
}

/* The first sample has only levels; the second, a second later, the
 * rates the counters moved by; a device diskstats has no line of has
 * none, ever, and one whose line went away for a sample has none until
 * two samples see it again. */
static void captured_rates(void **state)
{
	(void)state;
	struct fakeproc d;
	struct iop_node_probe *p = fakeproc_open(&d, &fakeproc_base);
	/* has set by the caller means nothing: the probe says */
	struct iop_probe_dev dev[2] = {{.major = 254, .minor = 0, .has = true},
	                               {.major = 8, .minor = 99, .has = true}};
	struct iop_node_tick t;

	iop_node_probe_sample(p, 1 * SEC, &t, dev, 2);
	assert_false(t.has_psi);
	assert_false(t.has_full);
	assert_false(t.has_iowait);
	assert_true(t.has_mem);
	assert_int_equal(t.dirty_kib, 22912);
	assert_int_equal(t.writeback_kib, 128);
	assert_false(dev[0].has);
	assert_false(dev[1].has);

	struct fakeproc_counters c = fakeproc_base;
	fakeproc_advance(&c);
	fakeproc_write(&d, &c);
	iop_node_probe_sample(p, 2 * SEC, &t, dev, 2);
	assert_true(t.has_psi);
	assert_true(near(t.psi_some, 0.25));
	assert_true(t.has_full);
	assert_true(near(t.psi_full, 0.10));
	assert_true(t.has_iowait);
	assert_true(near(t.iowait, 0.05));
	assert_true(t.has_mem);
	assert_int_equal(t.dirty_kib, 4096);
	assert_int_equal(t.writeback_kib, 512);
	assert_true(dev[0].has);
	const struct iop_disk_rates *r = &dev[0].rates;
	assert_true(near(r->write_Bps, 1048576));
	assert_true(near(r->write_iops, 16));
	assert_true(near(r->read_Bps, 524288));
	assert_true(near(r->read_iops, 8));
	assert_true(near(r->util, 0.5));
	assert_true(near(r->wait_ms, 5)); /* (40 + 80) ms over 24 requests */
	assert_false(dev[1].has);

	/* half a second more with nothing moved: rates of 0, not none; the
	 * CPU counters did not move either, so there is no iowait share */
	iop_node_probe_sample(p, 2 * SEC + SEC / 2, &t, dev, 2);
	assert_true(t.has_psi);
	assert_true(t.psi_some == 0 && t.psi_full == 0);
	assert_false(t.has_iowait);
	assert_true(dev[0].has);
	assert_true(dev[0].rates.write_Bps == 0 && dev[0].rates.util == 0);

	/* vda gone for a sample: none then, and none when it is back, not a
	 * rate across the gap; then one again */
	c.no_vda = true;
	fakeproc_write(&d, &c);
	iop_node_probe_sample(p, 3 * SEC, &t, dev, 2);
	assert_false(dev[0].has);
	c.no_vda = false;
	c.wr_sectors += 2048;
	fakeproc_write(&d, &c);
	iop_node_probe_sample(p, 4 * SEC, &t, dev, 2);
	assert_false(dev[0].has);
	c.wr_sectors += 4096;
	fakeproc_write(&d, &c);
	iop_node_probe_sample(p, 5 * SEC, &t, dev, 2);
	assert_true(dev[0].has);
	assert_true(near(dev[0].rates.write_Bps, 2097152));

	fakeproc_close(&d, p);
}

/* A kernel without PSI (no pressure/io): no pressure figures, the rest as
 * with it; PSI that comes back gives a rate only from its second reading,
 * not one across the time it could not be read. */
static void psi_missing(void **state)
{
	(void)state;
	struct fakeproc_counters c = fakeproc_base;
	c.no_psi = true;
	struct fakeproc d;
	struct iop_node_probe *p = fakeproc_open(&d, &c);
	struct iop_probe_dev dev = {.major = 254, .minor = 0};
	struct iop_node_tick t;
	iop_node_probe_sample(p, 1 * SEC, &t, &dev, 1);
	assert_false(t.has_psi);
	assert_true(t.has_mem);

	fakeproc_advance(&c); /* and still no pressure/io */
	fakeproc_write(&d, &c);
	iop_node_probe_sample(p, 2 * SEC, &t, &dev, 1);
	assert_false(t.has_psi);
	assert_false(t.has_full);
	assert_true(t.psi_some == 0 && t.psi_full == 0);
	assert_true(t.has_iowait);
	assert_true(near(t.iowait, 0.05));
	assert_true(t.has_mem);
	assert_int_equal(t.dirty_kib, 4096);
	assert_true(dev.has);
	assert_true(near(dev.rates.write_Bps, 1048576));
	assert_true(near(dev.rates.util, 0.5));

	c.no_psi = false;
	fakeproc_write(&d, &c);
	iop_node_probe_sample(p, 3 * SEC, &t, &dev, 1);
	assert_false(t.has_psi);
	c.some_us += 500000;
	fakeproc_write(&d, &c);
	iop_node_probe_sample(p, 4 * SEC, &t, &dev, 1);
	assert_true(t.has_psi);
	assert_true(near(t.psi_some, 0.5));

	/* gone for a sample between two that have it: still no rate across
	 * the gap, whose stall cannot be told from the one before it */
	c.no_psi = true;
	fakeproc_write(&d, &c);
	iop_node_probe_sample(p, 5 * SEC, &t, &dev, 1);
	assert_false(t.has_psi);
	c.no_psi = false;
	c.some_us += 500000;
	fakeproc_write(&d, &c);
	iop_node_probe_sample(p, 6 * SEC, &t, &dev, 1);
	assert_false(t.has_psi);

	fakeproc_close(&d, p);
}

/* PSI without its "full" line (kernels before 5.13 for the CPU): "some"
 * alone; and no "full" share when either reading lacks the line. */
static void psi_without_full(void **state)
{
	(void)state;
	struct fakeproc_counters c = fakeproc_base;
	c.no_full = true;
	struct fakeproc d;
	struct iop_node_probe *p = fakeproc_open(&d, &c);
	struct iop_node_tick t;
	iop_node_probe_sample(p, 1 * SEC, &t, NULL, 0);

	fakeproc_advance(&c); /* and still no "full" line */
	fakeproc_write(&d, &c);
	iop_node_probe_sample(p, 2 * SEC, &t, NULL, 0);
	assert_true(t.has_psi);
	assert_true(near(t.psi_some, 0.25));
	assert_false(t.has_full);
	assert_true(t.psi_full == 0);

	/* the line is back: the reading before had none to take it from */
	c.no_full = false;
	c.some_us += 100000;
	c.full_us += 100000;
	fakeproc_write(&d, &c);
	iop_node_probe_sample(p, 3 * SEC, &t, NULL, 0);
	assert_true(t.has_psi);
	assert_true(near(t.psi_some, 0.10));
	assert_false(t.has_full);
	assert_true(t.psi_full == 0);

	/* and gone again after a reading with it */
	c.no_full = true;
	fakeproc_write(&d, &c);
	iop_node_probe_sample(p, 4 * SEC, &t, NULL, 0);
	assert_true(t.has_psi);
	assert_false(t.has_full);

	fakeproc_close(&d, p);
}

/* Counters that went back (a device that went and came back, a counter
 * that wrapped) read as nothing moved, not as a huge share; more stall or
 * busy time than the interval is a share of 1. */
static void counters_back_and_over(void **state)
{
	(void)state;
	struct fakeproc_counters c = fakeproc_base;
	fakeproc_advance(&c);
	struct fakeproc d;
	struct iop_node_probe *p = fakeproc_open(&d, &c);
	struct iop_probe_dev dev = {.major = 254, .minor = 0};
	struct iop_node_tick t;
	iop_node_probe_sample(p, 1 * SEC, &t, &dev, 1);

	c.some_us -= 1000;
	c.full_us -= 1000;
	c.iowait -= 10;
	c.user += 1010; /* the whole still moves on: 1000 ticks */
	c.rd_sectors -= 8;
	c.wr_ios -= 1;
	c.wr_sectors -= 8;
	c.io_ms -= 10;
	fakeproc_write(&d, &c);
	iop_node_probe_sample(p, 2 * SEC, &t, &dev, 1);
	assert_true(t.has_psi);
	assert_true(t.psi_some == 0);
	assert_true(t.has_full);
	assert_true(t.psi_full == 0);
	assert_true(t.has_iowait);
	assert_true(t.iowait == 0);
	assert_true(dev.has);
	assert_true(dev.rates.read_Bps == 0);
	assert_true(dev.rates.write_Bps == 0);
	assert_true(dev.rates.write_iops == 0);
	assert_true(dev.rates.util == 0);

	c.some_us += 3000000; /* 3 s of stall in 1 s */
	c.full_us += 2000000;
	c.user += 500;
	c.iowait += 500; /* half of the 1000 ticks */
	c.io_ms += 5000;
	fakeproc_write(&d, &c);
	iop_node_probe_sample(p, 3 * SEC, &t, &dev, 1);
	assert_true(t.psi_some == 1);
	assert_true(t.psi_full == 1);
	assert_true(near(t.iowait, 0.5));
	assert_true(dev.rates.util == 1);

	fakeproc_close(&d, p);
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * SEC + (uint64_t)ts.tv_nsec;
}

static bool is_share(double x)
{
	return x >= 0 && x <= 1;
}

/* This machine's /proc: two samples 50 ms apart give memory both times,
 * an iowait share the second, pressure when the kernel has PSI, and the
 * first device diskstats lists its rates; every share within 0 to 1. */
static void own_proc(void **state)
{
	(void)state;
	struct iop_probe_dev dev = {0};
	size_t n_dev = 0;
	FILE *f = fopen("/proc/diskstats", "re");
	if (f) {
		unsigned ma, mi;
		if (fscanf(f, "%u %u", &ma, &mi) == 2) {
			dev = (struct iop_probe_dev){.major = ma, .minor = mi};
			n_dev = 1;
		}
		fclose(f);
	}
	bool psi = access("/proc/pressure/io", R_OK) == 0;
	if (!psi)
		printf("# no /proc/pressure/io on this kernel\n");
	struct iop_node_probe *p;
	assert_int_equal(iop_node_probe_new(NULL, &p), IOP_OK);
	struct iop_node_tick t;
	iop_node_probe_sample(p, now_ns(), &t, &dev, n_dev);
	assert_true(t.has_mem);
	assert_false(t.has_psi);
	assert_false(t.has_iowait);
	assert_false(dev.has);

	struct timespec pause = {0, 50000000};
	while (nanosleep(&pause, &pause) != 0 && errno == EINTR)
		;
	iop_node_probe_sample(p, now_ns(), &t, &dev, n_dev);
	assert_true(t.has_mem);
	assert_true(t.has_iowait);
	assert_true(is_share(t.iowait));
	assert_true(t.has_psi == psi);
	assert_true(is_share(t.psi_some));
	assert_true(is_share(t.psi_full));
	if (n_dev) {
		assert_true(dev.has);
		assert_true(is_share(dev.rates.util));
		assert_true(dev.rates.read_Bps >= 0 && dev.rates.write_Bps >= 0);
	}
	iop_node_probe_free(p);
}

/* A device asked for twice in one sample (two bind mounts of one disk):
 * both entries get its rates. */
static void same_device_twice(void **state)
{
	(void)state;
	struct fakeproc d;
	struct iop_node_probe *p = fakeproc_open(&d, &fakeproc_base);
	struct iop_probe_dev dev[2] = {{.major = 254, .minor = 0}, {.major = 254, .minor = 0}};
	struct iop_node_tick t;
	iop_node_probe_sample(p, 1 * SEC, &t, dev, 2);
	struct fakeproc_counters c = fakeproc_base;
	fakeproc_advance(&c);
	fakeproc_write(&d, &c);
	iop_node_probe_sample(p, 2 * SEC, &t, dev, 2);
	for (int i = 0; i < 2; i++) {
		assert_true(dev[i].has);
		assert_true(near(dev[i].rates.util, 0.5));
		assert_true(near(dev[i].rates.write_Bps, 1048576));
	}
	fakeproc_close(&d, p);
}

/* path under d's directory := text */
static void put_text(const struct fakeproc *d, const char *rel, const char *text)
{
	char path[256];
	snprintf(path, sizeof path, "%s/%s", d->dir, rel);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void netfs_text(const struct fakeproc *d, unsigned k)
{
	char ms[1024], ll[512];
	/* NFS: k READs of 1 MiB and k WRITEs of 512 KiB, 4 ms RTT each */
	snprintf(ms, sizeof ms,
	         "device /dev/vda mounted on / with fstype ext4\n"
	         "device srv:/home mounted on /home with fstype nfs4 statvers=1.1\n"
	         "\tper-op statistics\n"
	         "\t        READ: %u %u 0 %u %u 0 %u 0 0\n"
	         "\t       WRITE: %u %u 0 %u %u 0 %u 0 0\n",
	         k, k, k * 100, k << 20, 4 * k, k, k, k << 19, k * 100, 4 * k);
	put_text(d, "self/mountstats", ms);
	/* Lustre: 2k reads of 64 KiB, no writes yet */
	snprintf(ll, sizeof ll,
	         "snapshot_time 1700000000.1 secs.nsecs\n"
	         "read_bytes %u samples [bytes] 65536 65536 %u\n",
	         2 * k, 2 * k * 65536);
	put_text(d, "fs/lustre/llite/scratch-ffff88810a1b2000/stats", ll);
}

/* Network file systems' clients: NFS's READ and WRITE counters from
 * self/mountstats and Lustre's from its llite instance, turned into rates
 * a second apart; NFS's mean RTT; a mount point not in mountstats and a
 * Lustre name without an instance have none; one asked for twice gets
 * its rates both times. */
static void netfs_clients(void **state)
{
	(void)state;
	struct fakeproc d;
	struct iop_node_probe *p = fakeproc_open(&d, &fakeproc_base);
	static const char *const dirs[] = {"self", "fs", "fs/lustre", "fs/lustre/llite",
	                                   "fs/lustre/llite/scratch-ffff88810a1b2000"};
	char path[256];
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
		snprintf(path, sizeof path, "%s/%s", d.dir, dirs[i]);
		assert_int_equal(mkdir(path, 0755), 0);
	}
	netfs_text(&d, 10);
	struct iop_probe_netfs v[4] = {{.point = "/home"},
	                               {.point = "/lus", .lustre = "scratch"},
	                               {.point = "/gone"},
	                               {.point = "/home"}};
	iop_node_probe_netfs(p, 1 * SEC, v, 4);
	for (int i = 0; i < 4; i++)
		assert_false(v[i].has);
	netfs_text(&d, 30);
	iop_node_probe_netfs(p, 2 * SEC, v, 4);
	assert_true(v[0].has);
	assert_true(near(v[0].rates.read_Bps, 20 << 20));
	assert_true(near(v[0].rates.write_Bps, 20 << 19));
	assert_true(near(v[0].rates.read_iops, 20));
	assert_true(near(v[0].rates.wait_ms, 4));
	assert_true(near(v[0].rates.util, 0));
	assert_true(v[1].has);
	assert_true(near(v[1].rates.read_Bps, 40 * 65536));
	assert_true(near(v[1].rates.read_iops, 40));
	assert_true(near(v[1].rates.wait_ms, 0));
	assert_false(v[2].has);
	assert_true(v[3].has);
	assert_true(near(v[3].rates.read_Bps, v[0].rates.read_Bps));
	snprintf(path, sizeof path, "%s/self/mountstats", d.dir);
	assert_int_equal(unlink(path), 0);
	snprintf(path, sizeof path, "%s/fs/lustre/llite/scratch-ffff88810a1b2000/stats", d.dir);
	assert_int_equal(unlink(path), 0);
	for (size_t i = sizeof dirs / sizeof dirs[0]; i-- > 0;) {
		snprintf(path, sizeof path, "%s/%s", d.dir, dirs[i]);
		assert_int_equal(rmdir(path), 0);
	}
	fakeproc_close(&d, p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(captured_rates),
		cmocka_unit_test(same_device_twice),
		cmocka_unit_test(netfs_clients),
		cmocka_unit_test(psi_missing),
		cmocka_unit_test(psi_without_full),
		cmocka_unit_test(counters_back_and_over),
		cmocka_unit_test(own_proc),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
