/* late-collective: one late rank in a loop of collective writes, the shape of
 * a bulk-synchronous code whose ranks wait for the slowest one inside each
 * collective I/O call. N ranks write blocks of S bytes to ONE shared file in
 * CALLS collective calls; call i writes this rank's block at byte offset
 * (i * N + rank) * S. Before each call every rank "computes" BASE_MS
 * milliseconds (a busy loop on CLOCK_MONOTONIC: CPU time, as real compute
 * is), and LATE_RANK computes LATE_MS longer, so the others wait for it
 * inside the collective.
 *
 * Default: MPI-IO, DIR/late.dat, MPI_File_write_at_all per call. With -H
 * (only in late-collective-h5, built with parallel HDF5): DIR/late.h5, a 1-D
 * dataset "data" of CALLS * N * S bytes (H5T_NATIVE_UCHAR) written through
 * the MPI-IO driver with one collective H5Dwrite of a hyperslab per call.
 * Either way the file is closed, reopened and read back with the same
 * collective calls (no compute in between), and every byte is checked.
 *
 * Each rank times each collective write (the clock around the call only)
 * and sums it (coll_time_s). After each call, outside the timed region, an
 * MPI_Allreduce MINLOC of the durations gives the shortest time in that call
 * and the rank that had it: the last to arrive (ties: the lowest rank). A
 * rank's wait is its time in the call minus that minimum, summed over the
 * calls (wait_s); last_calls counts the calls this rank arrived last at.
 * Every other collective call (the opens, closes and reads) is timed and
 * measured alike: all_wait_s is the rank's wait in all of them, writes
 * included, what a monitor of every collective call should find.
 * (With 2 ranks Open MPI's OMPIO runs this write_at_all as independent
 * writes, fcoll "individual": nobody waits in it; see README.md.)
 *
 * Truth: one entry, mpiio (MPI_File_write_at_all / MPI_File_read_at_all
 * calls) or hdf5 (H5Dwrite / H5Dread calls), ops = CALLS each way, bytes =
 * CALLS * S each way; plus "coll_calls", "coll_time_s", "wait_s",
 * "last_calls" and "late_rank" for the timed collective writes, and
 * "start_s" (CLOCK_REALTIME, seconds) when the first compute phase before
 * them began. */
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <mpi.h>
#ifdef IOP_WITH_HDF5
#include <hdf5.h>
#endif

#include "truth.h"

struct options {
	const char *dir;
	uint64_t calls;
	uint64_t size;    /* bytes per rank per call */
	int late_rank;
	uint64_t late_ms; /* extra compute of the late rank before each call */
	uint64_t base_ms; /* compute of every rank before each call */
	int hdf5;
};

/* The open shared file, through whichever layer this run uses. */
struct shared {
	const struct options *o;
	int rank, size;
	char path[PATH_MAX];
	MPI_File fh;
#ifdef IOP_WITH_HDF5
	hid_t file, dset, filespace, memspace, dxpl;
#endif
};

static void usage(void)
{
	fprintf(stderr, "usage: late-collective [-d DIR] [-n CALLS] [-s BYTES] [-r LATE_RANK] "
	                "[-l LATE_MS] [-c BASE_MS] [-H]\n");
}

static struct options parse_options(int argc, char **argv, int size)
{
	struct options o = {.dir = ".", .calls = 20, .size = 1 << 20, .late_rank = size - 1,
	                    .late_ms = 150, .base_ms = 10};
	int c;

	while ((c = getopt(argc, argv, "d:n:s:r:l:c:H")) != -1) {
		switch (c) {
		case 'd':
			o.dir = optarg;
			break;
		case 'n':
			o.calls = ex_parse_count(optarg, 'n', 1, 1000000);
			break;
		case 's':
			o.size = ex_parse_count(optarg, 's', 1, 1u << 30);
			break;
		case 'r':
			o.late_rank = (int)ex_parse_count(optarg, 'r', 0, (uint64_t)size - 1);
			break;
		case 'l':
			o.late_ms = ex_parse_count(optarg, 'l', 0, 3600 * 1000);
			break;
		case 'c':
			o.base_ms = ex_parse_count(optarg, 'c', 0, 3600 * 1000);
			break;
		case 'H':
#ifdef IOP_WITH_HDF5
			o.hdf5 = 1;
			break;
#else
			ex_die("-H needs parallel HDF5, and this binary was built without it: "
			       "use late-collective-h5");
#endif
		default:
			usage();
			ex_die("bad option");
		}
	}
	if (optind != argc) {
		usage();
		ex_die("unexpected argument '%s'", argv[optind]);
	}
	/* The whole file, CALLS * N * S bytes, must fit in an MPI_Offset. */
	if (o.calls * o.size > (uint64_t)INT64_MAX / (uint64_t)size)
		ex_die("%llu calls of %llu bytes on %d ranks make too big a file",
		       (unsigned long long)o.calls, (unsigned long long)o.size, size);
	return o;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* "Computes" for MS milliseconds: spins on the clock, so it burns CPU. */
static void compute(uint64_t ms)
{
	double end = now_s() + (double)ms * 1e-3;

	while (now_s() < end)
		;
}

/* Block B of the file (B = call * N + rank): B in its first 8 bytes (when it
 * has 8), then a pattern of B. What a read must find. */
static void fill(unsigned char *buf, uint64_t b, uint64_t size)
{
	for (uint64_t j = 0; j < size; j++)
		buf[j] = (unsigned char)(b * 131 + j * 7 + (j >> 10));
	memcpy(buf, &b, size < sizeof b ? size : sizeof b);
}

#ifdef IOP_WITH_HDF5
/* Dies when an HDF5 call failed (HDF5 has already printed its error stack). */
static hid_t h5_ok(hid_t rc, const char *what)
{
	if (rc < 0)
		ex_die("HDF5 %s failed", what);
	return rc;
}

static void h5_open(struct shared *f, int create)
{
	hsize_t total = f->o->calls * (hsize_t)f->size * f->o->size, count = f->o->size;
	hid_t fapl = h5_ok(H5Pcreate(H5P_FILE_ACCESS), "H5Pcreate");

	h5_ok(H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL), "H5Pset_fapl_mpio");
	if (create) {
		hid_t dcpl = h5_ok(H5Pcreate(H5P_DATASET_CREATE), "H5Pcreate");
		/* Every byte gets written: no fill pass over the whole dataset. */
		h5_ok(H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER), "H5Pset_fill_time");
		f->file = h5_ok(H5Fcreate(f->path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl), "H5Fcreate");
		f->filespace = h5_ok(H5Screate_simple(1, &total, NULL), "H5Screate_simple");
		f->dset = h5_ok(H5Dcreate2(f->file, "data", H5T_NATIVE_UCHAR, f->filespace,
		                           H5P_DEFAULT, dcpl, H5P_DEFAULT),
		                "H5Dcreate");
		h5_ok(H5Pclose(dcpl), "H5Pclose");
	} else {
		f->file = h5_ok(H5Fopen(f->path, H5F_ACC_RDONLY, fapl), "H5Fopen");
		f->dset = h5_ok(H5Dopen2(f->file, "data", H5P_DEFAULT), "H5Dopen");
		f->filespace = h5_ok(H5Dget_space(f->dset), "H5Dget_space");
		if (H5Sget_simple_extent_npoints(f->filespace) != (hssize_t)total)
			ex_die("%s: dataset data has %lld bytes, not %llu", f->path,
			       (long long)H5Sget_simple_extent_npoints(f->filespace),
			       (unsigned long long)total);
	}
	h5_ok(H5Pclose(fapl), "H5Pclose");
	f->memspace = h5_ok(H5Screate_simple(1, &count, NULL), "H5Screate_simple");
	f->dxpl = h5_ok(H5Pcreate(H5P_DATASET_XFER), "H5Pcreate");
	h5_ok(H5Pset_dxpl_mpio(f->dxpl, H5FD_MPIO_COLLECTIVE), "H5Pset_dxpl_mpio");
}

static void h5_close(struct shared *f)
{
	h5_ok(H5Pclose(f->dxpl), "H5Pclose");
	h5_ok(H5Sclose(f->memspace), "H5Sclose");
	h5_ok(H5Sclose(f->filespace), "H5Sclose");
	h5_ok(H5Dclose(f->dset), "H5Dclose");
	h5_ok(H5Fclose(f->file), "H5Fclose");
}
#endif

/* Opens the shared file for writing (CREATE) or reading. Collective. */
static void shared_open(struct shared *f, int create)
{
#ifdef IOP_WITH_HDF5
	if (f->o->hdf5) {
		h5_open(f, create);
		return;
	}
#endif
	int amode = create ? MPI_MODE_CREATE | MPI_MODE_RDWR : MPI_MODE_RDONLY;
	ex_check_mpi(MPI_File_open(MPI_COMM_WORLD, f->path, amode, MPI_INFO_NULL, &f->fh), "open",
	          f->path);
}

static void shared_close(struct shared *f)
{
#ifdef IOP_WITH_HDF5
	if (f->o->hdf5) {
		h5_close(f);
		return;
	}
#endif
	ex_check_mpi(MPI_File_close(&f->fh), "close", f->path);
}

/* The one collective call of call I: writes (WRITING) or reads this rank's
 * block of it. Dies on an error or a short transfer. */
static void shared_transfer(struct shared *f, uint64_t i, unsigned char *buf, int writing)
{
	uint64_t offset = (i * (uint64_t)f->size + (uint64_t)f->rank) * f->o->size;
#ifdef IOP_WITH_HDF5
	if (f->o->hdf5) {
		hsize_t start = offset, count = f->o->size;
		h5_ok(H5Sselect_hyperslab(f->filespace, H5S_SELECT_SET, &start, NULL, &count, NULL),
		      "H5Sselect_hyperslab");
		if (writing)
			h5_ok(H5Dwrite(f->dset, H5T_NATIVE_UCHAR, f->memspace, f->filespace,
			               f->dxpl, buf),
			      "H5Dwrite");
		else
			h5_ok(H5Dread(f->dset, H5T_NATIVE_UCHAR, f->memspace, f->filespace, f->dxpl,
			              buf),
			      "H5Dread");
		return;
	}
#endif
	const char *what = writing ? "write_at_all" : "read_at_all";
	MPI_Status st;
	int got;

	if (writing)
		ex_check_mpi(MPI_File_write_at_all(f->fh, (MPI_Offset)offset, buf, (int)f->o->size,
		                                MPI_BYTE, &st),
		          what, f->path);
	else
		ex_check_mpi(MPI_File_read_at_all(f->fh, (MPI_Offset)offset, buf, (int)f->o->size,
		                               MPI_BYTE, &st),
		          what, f->path);
	MPI_Get_count(&st, MPI_BYTE, &got);
	if ((uint64_t)got != f->o->size)
		ex_die("%s %s: %d of %llu bytes at offset %llu", what, f->path, got,
		       (unsigned long long)f->o->size, (unsigned long long)offset);
}

/* After a collective call this rank spent took seconds in, outside the
 * timed region: the shortest time in that call and the rank that had it,
 * the last to arrive (MINLOC: lowest rank on ties). Adds this rank's wait
 * (took - the shortest) to *wait; true when this rank came last. */
static bool account(double took, int rank, double *wait)
{
	struct {
		double took;
		int rank;
	} mine = {took, rank}, least;
	MPI_Allreduce(&mine, &least, 1, MPI_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD);
	*wait += took - least.took;
	return least.rank == rank;
}

/* Runs one collective call, timed, and adds its wait to *all_wait. */
#define TIMED(all_wait, rank, call)                                                                \
	do {                                                                                       \
		double t0_ = now_s();                                                              \
		call;                                                                              \
		(void)account(now_s() - t0_, (rank), (all_wait));                                  \
	} while (0)

int main(int argc, char **argv)
{
	struct shared f = {0};
	struct ex_io io = {0};
	double coll_time = 0, wait = 0, all_wait = 0;
	uint64_t last_calls = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &f.rank);
	MPI_Comm_size(MPI_COMM_WORLD, &f.size);
	ex_init("late-collective", f.rank);
	struct options o = parse_options(argc, argv, f.size);
	f.o = &o;
	unsigned char *buf = malloc(o.size), *want = malloc(o.size);

	if (!buf || !want)
		ex_die("out of memory for %llu-byte buffers", (unsigned long long)o.size);
	ex_mkdir_p(o.dir);
	ex_join(f.path, o.dir, o.hdf5 ? "late.h5" : "late.dat");
	/* Start from an empty file so its size is what this run wrote. */
	if (f.rank == 0 && !o.hdf5)
		MPI_File_delete(f.path, MPI_INFO_NULL);
	MPI_Barrier(MPI_COMM_WORLD);

	TIMED(&all_wait, f.rank, shared_open(&f, 1));
	MPI_Barrier(MPI_COMM_WORLD); /* one start for the first compute phase */
	struct timespec start;
	clock_gettime(CLOCK_REALTIME, &start);
	for (uint64_t i = 0; i < o.calls; i++) {
		fill(buf, i * (uint64_t)f.size + (uint64_t)f.rank, o.size);
		compute(o.base_ms + (f.rank == o.late_rank ? o.late_ms : 0));
		double t0 = now_s();
		shared_transfer(&f, i, buf, 1);
		double took = now_s() - t0;
		io.write_ops++;
		io.write_bytes += o.size;
		coll_time += took;
		double w = 0;
		if (account(took, f.rank, &w))
			last_calls++;
		wait += w;
		all_wait += w;
	}
	TIMED(&all_wait, f.rank, shared_close(&f));

	TIMED(&all_wait, f.rank, shared_open(&f, 0));
	for (uint64_t i = 0; i < o.calls; i++) {
		uint64_t b = i * (uint64_t)f.size + (uint64_t)f.rank;
		memset(buf, 0, o.size);
		TIMED(&all_wait, f.rank, shared_transfer(&f, i, buf, 0));
		io.read_ops++;
		io.read_bytes += o.size;
		fill(want, b, o.size);
		if (memcmp(buf, want, o.size) != 0)
			ex_die("%s: wrong data in block %llu (call %llu)", f.path,
			       (unsigned long long)b, (unsigned long long)i);
	}
	TIMED(&all_wait, f.rank, shared_close(&f));

	json_t *truth = ex_truth_new();
	ex_truth_add(truth, f.path, o.hdf5 ? "hdf5" : "mpiio", &io);
	if (json_object_set_new(truth, "coll_calls", json_integer((json_int_t)o.calls)) != 0 ||
	    json_object_set_new(truth, "coll_time_s", json_real(coll_time)) != 0 ||
	    json_object_set_new(truth, "wait_s", json_real(wait)) != 0 ||
	    json_object_set_new(truth, "all_wait_s", json_real(all_wait)) != 0 ||
	    json_object_set_new(truth, "last_calls", json_integer((json_int_t)last_calls)) != 0 ||
	    json_object_set_new(truth, "late_rank", json_integer(o.late_rank)) != 0 ||
	    json_object_set_new(truth, "start_s",
	                        json_real((double)start.tv_sec + start.tv_nsec / 1e9)) != 0)
		ex_die("out of memory building the truth line");
	ex_truth_print(truth);
	free(buf);
	free(want);
	MPI_Finalize();
	return 0;
}
