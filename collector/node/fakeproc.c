/* A fake /proc for the probe's tests (fakeproc.h). */
#include "test_util.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fakeproc.h"

const struct fakeproc_counters fakeproc_base = {
	.some_us = 256900521,
	.full_us = 114620612,
	.user = 3746665,
	.iowait = 19820,
	.dirty = 22912,
	.writeback = 128,
	.rd_ios = 1474366,
	.rd_sectors = 37430154,
	.rd_ms = 1546301,
	.wr_ios = 365690,
	.wr_sectors = 172044072,
	.wr_ms = 3673183,
	.io_ms = 677168,
};

void fakeproc_advance(struct fakeproc_counters *c)
{
	c->some_us += 250000;
	c->full_us += 100000;
	c->user += 950;
	c->iowait += 50;
	c->dirty = 4096;
	c->writeback = 512;
	c->rd_ios += 8;
	c->rd_sectors += 1024;
	c->rd_ms += 40;
	c->wr_ios += 16;
	c->wr_sectors += 2048;
	c->wr_ms += 80;
	c->io_ms += 500;
}

static void path_of(char *path, size_t cap, const struct fakeproc *d, const char *name)
{
	int n = snprintf(path, cap, "%s/%s", d->dir, name);
	assert_true(n > 0 && (size_t)n < cap);
}

/* Name's text from fmt (printf's), a whole file. */
static void write_file(const struct fakeproc *d, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void write_file(const struct fakeproc *d, const char *name, const char *fmt, ...)
{
	char path[128];
	path_of(path, sizeof path, d, name);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	va_list ap;
	va_start(ap, fmt);
	assert_true(vfprintf(f, fmt, ap) > 0);
	va_end(ap);
	assert_int_equal(fclose(f), 0);
}

/* The four files as the kernel writes them (a file the probe does not
 * read a line of keeps the capture's other lines, so the parsers find the
 * right one among them). */
void fakeproc_write(const struct fakeproc *d, const struct fakeproc_counters *c)
{
	char path[128];
	if (c->no_psi) {
		path_of(path, sizeof path, d, "pressure/io");
		unlink(path);
	} else if (c->no_full) {
		write_file(d, "pressure/io",
		           "some avg10=0.26 avg60=0.46 avg300=0.80 total=%" PRIu64 "\n",
		           c->some_us);
	} else {
		write_file(d, "pressure/io",
		           "some avg10=0.26 avg60=0.46 avg300=0.80 total=%" PRIu64 "\n"
		           "full avg10=12.50 avg60=0.37 avg300=0.35 total=%" PRIu64 "\n",
		           c->some_us, c->full_us);
	}
	write_file(d, "stat",
	           "cpu  %" PRIu64 " 138557 1772212 4597721 %" PRIu64 " 0 35453 19921 0 0\n"
	           "cpu0 1873332 69278 886106 2298860 9910 0 17726 9960 0 0\n"
	           "intr 1 2 3\n",
	           c->user, c->iowait);
	write_file(d, "meminfo",
	           "MemTotal:       24683656 kB\nDirty:          %" PRIu64 " kB\n"
	           "Writeback:      %" PRIu64 " kB\nWritebackTmp:          0 kB\n",
	           c->dirty, c->writeback);
	char sd[2048] = "";
	for (int i = 0, n = 0; c->many && i < 20; i++) {
		n += snprintf(sd + n, sizeof sd - (size_t)n,
		              "   8 %7d sd%c 1 0 8 1 1 0 8 1 0 1 2 0 0 0 0 0 0\n", i, 'a' + i);
		assert_true(n > 0 && (size_t)n < sizeof sd);
	}
	write_file(d, "diskstats",
	           "   7       0 loop0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
	           " %d       0 vda %" PRIu64 " 82815 %" PRIu64 " %" PRIu64 " %" PRIu64
	           " 483470 %" PRIu64 " %" PRIu64 " 0 %" PRIu64
	           " 5480965 400575 92 228720440 182235 16907 79245\n"
	           " 254       1 vda1 10 0 80 5 2 0 16 3 0 7 8\n"
	           " 254       2 vda2 1 0 8 1 1 0 8 1 0 1 2 0 0 0 0 0 0\n"
	           "   0      45 fake 1 0 8 1 1 0 8 1 0 1 2 0 0 0 0 0 0\n"
	           "%s",
	           c->no_vda ? 253 : 254, c->rd_ios, c->rd_sectors, c->rd_ms, c->wr_ios,
	           c->wr_sectors, c->wr_ms, c->io_ms, sd);
}

struct iop_node_probe *fakeproc_open(struct fakeproc *d, const struct fakeproc_counters *c)
{
	snprintf(d->dir, sizeof d->dir, "/tmp/fakeproc_XXXXXX");
	assert_non_null(mkdtemp(d->dir));
	char path[128];
	path_of(path, sizeof path, d, "pressure");
	assert_int_equal(mkdir(path, 0755), 0);
	fakeproc_write(d, c);
	struct iop_node_probe *p;
	assert_int_equal(iop_node_probe_new(d->dir, &p), IOP_OK);
	return p;
}

void fakeproc_close(const struct fakeproc *d, struct iop_node_probe *p)
{
	iop_node_probe_free(p);
	static const char *const names[] = {"pressure/io", "stat", "meminfo", "diskstats"};
	char path[128];
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		path_of(path, sizeof path, d, names[i]);
		assert_int_equal(unlink(path), 0);
	}
	path_of(path, sizeof path, d, "pressure");
	assert_int_equal(rmdir(path), 0);
	assert_int_equal(rmdir(d->dir), 0); /* Nothing else was left in it. */
}
