/* A fake /proc for the tests of a node's sample (probe_test.c,
 * nodes_test.c): captured /proc/pressure/io, stat, meminfo and diskstats
 * text (sample_test.c's capture) written into a temporary directory from a
 * struct of counters, so a test moves a counter by a known amount between
 * two samples and each figure has one right value. Test support only. */
#ifndef IOP_FAKEPROC_H
#define IOP_FAKEPROC_H

#include <stdbool.h>
#include <stdint.h>

#include "probe.h"

/* What the files say. diskstats has vda (254:0), whose counters move;
 * loop0, vda1 (an old kernel's 11 fields), vda2 and a line for 0:45 no
 * kernel writes, which stay; and sd (8:0 to 8:19) when many. */
struct fakeproc_counters {
	uint64_t some_us, full_us; /* pressure/io's totals */
	uint64_t user, iowait;     /* the "cpu" line's user and iowait ticks */
	uint64_t dirty, writeback; /* meminfo, KiB */
	uint64_t rd_ios, rd_sectors, rd_ms, wr_ios, wr_sectors, wr_ms, io_ms; /* vda */
	bool no_psi;  /* no pressure/io (a kernel without PSI) */
	bool no_full; /* pressure/io without its "full" line */
	bool no_vda;  /* vda's line left out (the device went away): 253:0 instead */
	bool many;    /* the 20 sd lines */
};

/* This machine's figures, with writeback not 0 so that a mix-up of the
 * two memory fields shows. */
extern const struct fakeproc_counters fakeproc_base;

/* One second on: some task stalled on I/O a quarter of it, all of them a
 * tenth; 50 of the 1000 CPU ticks in iowait; dirty 4096 KiB, writeback
 * 512; vda read 512 KiB in 8 reads and wrote 1 MiB in 16 writes, 5 ms
 * each on average, busy half the second. */
void fakeproc_advance(struct fakeproc_counters *c);

struct fakeproc {
	char dir[64];
};

/* Makes a temporary directory with c's files in d and a probe reading it. */
struct iop_node_probe *fakeproc_open(struct fakeproc *d, const struct fakeproc_counters *c);

/* Rewrites d's files from c (no_psi removes pressure/io). */
void fakeproc_write(const struct fakeproc *d, const struct fakeproc_counters *c);

/* Frees p and removes d: each of the four files must be there (a test that
 * took pressure/io away writes it back first), and nothing else. */
void fakeproc_close(const struct fakeproc *d, struct iop_node_probe *p);

#endif
