/* The collective-call cost loop (bench/shim_bench.py,
 * shim_collective_added_ns): N small MPI_File_write_at_all calls and N
 * MPI_File_write_at calls (independent) on one file opened by every rank of
 * MPI_COMM_WORLD, each rank at its own offsets, timed per kind. Run under
 * mpirun -n 2, with and without the shim preloaded.
 *
 *   coll_loop FILE N [BYTES]   (BYTES: each call's transfer, default 8)
 *
 * The two kinds take turns in 8 blocks of N/4 calls, in the order C I I C
 * C I I C (whatever drifts during the run weighs on both alike), after 200
 * untimed calls of each. A block starts after a barrier; its time is each
 * rank's own (a collective block ends on every rank at about the same
 * moment, an independent one does not), and the figure of a kind is the
 * mean over the ranks of their time per call. Each call is timed too, and
 * the median call of each rank and kind (averaged over the ranks) says
 * what a call costs when the host leaves it alone: on a host whose cores
 * the ranks keep busy, the shim's sender and the collector take the
 * ranks' cores now and then, which lengthens a few calls by much (and a
 * collective call on every rank, as they wait for each other), and the
 * mean with them. Rank 0 prints "coll_ns_per_call X indep_ns_per_call Y
 * coll_median_ns Z indep_median_ns W" on stdout. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;
	return (x > y) - (x < y);
}

/* n calls of one kind; each rank writes its own slot of a 512-slot ring.
 * Each call's ns to lat (when given). */
static int run(MPI_File fh, int coll, long n, long from, int rank, int size, char *buf, int bytes,
               float *lat)
{
	for (long i = from; i < from + n; i++) {
		MPI_Offset off = ((MPI_Offset)(i & 511) * size + rank) * bytes;
		double t0 = lat ? now_ns() : 0;
		int rc =
		    coll ? MPI_File_write_at_all(fh, off, buf, bytes, MPI_BYTE, MPI_STATUS_IGNORE)
		         : MPI_File_write_at(fh, off, buf, bytes, MPI_BYTE, MPI_STATUS_IGNORE);
		if (lat)
			lat[i - from] = (float)(now_ns() - t0);
		if (rc != MPI_SUCCESS)
			return rc;
	}
	return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	long n = argc >= 3 ? atol(argv[2]) : 0;
	int bytes = argc >= 4 ? atoi(argv[3]) : 8;
	if (argc < 3 || argc > 4 || n < 4 || bytes < 1 || bytes > 1 << 20) {
		if (rank == 0)
			fprintf(stderr, "usage: coll_loop FILE N [BYTES]\n");
		MPI_Finalize();
		return 2;
	}
	char *buf = malloc((size_t)bytes);
	memset(buf, 'x', (size_t)bytes);
	MPI_File fh;
	if (MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL,
	                  &fh) != MPI_SUCCESS) {
		fprintf(stderr, "coll_loop: cannot open %s\n", argv[1]);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	long done = 0;
	int rc = run(fh, 1, 200, done, rank, size, buf, bytes, NULL);
	if (rc == MPI_SUCCESS)
		rc = run(fh, 0, 200, done, rank, size, buf, bytes, NULL);
	done += 200;
	static const int order[8] = {1, 0, 0, 1, 1, 0, 0, 1};
	long block = n / 4, filled[2] = {0, 0};
	float *lat[2] = {malloc((size_t)block * 4 * sizeof(float)),
	                 malloc((size_t)block * 4 * sizeof(float))};
	if (!lat[0] || !lat[1])
		MPI_Abort(MPI_COMM_WORLD, 1);
	double t[2] = {0, 0};
	for (int b = 0; b < 8 && rc == MPI_SUCCESS; b++) {
		int k = order[b];
		MPI_Barrier(MPI_COMM_WORLD);
		double t0 = now_ns();
		rc = run(fh, k, block, done, rank, size, buf, bytes, lat[k] + filled[k]);
		t[k] += now_ns() - t0;
		filled[k] += block;
		done += block;
	}
	if (rc != MPI_SUCCESS) {
		fprintf(stderr, "coll_loop: a write failed\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_File_close(&fh);
	double mine[4], sum[4];
	for (int k = 0; k < 2; k++) {
		qsort(lat[k], (size_t)filled[k], sizeof(float), cmp_float);
		mine[k] = t[k];
		mine[2 + k] = lat[k][filled[k] / 2];
	}
	MPI_Reduce(mine, sum, 4, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank == 0) {
		double calls = (double)block * 4 * size;
		printf("coll_ns_per_call %.2f indep_ns_per_call %.2f coll_median_ns %.2f "
		       "indep_median_ns %.2f\n",
		       sum[1] / calls, sum[0] / calls, sum[3] / size, sum[2] / size);
		MPI_File_delete(argv[1], MPI_INFO_NULL);
	}
	free(buf);
	free(lat[0]);
	free(lat[1]);
	MPI_Finalize();
	return 0;
}
