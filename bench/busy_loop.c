/* The busy node of issue 22 (bench/shim_bench.py, dropped_share_busy_node):
 * every rank writes 4 KiB blocks with MPI_File_write_at (independent) to
 * one shared file, as fast as it can, for SECS seconds, each rank over its
 * own 64 MiB (then from its start again, so the file stays bounded). Run
 * with more ranks than cores under `iopulse run`: the ranks, their
 * senders and the leaf then compete for the cores, as on a node where
 * every core runs a rank.
 *
 *   busy_loop FILE SECS [BYTES]
 *
 * Rank 0 prints "calls N bytes B" (the sums over the ranks) on stdout. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	if (argc < 3) {
		fprintf(stderr, "usage: busy_loop FILE SECS [BYTES]\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	double secs = atof(argv[2]);
	int bytes = argc > 3 ? atoi(argv[3]) : 4096;
	if (bytes <= 0 || secs <= 0 || secs > 3600) {
		fprintf(stderr, "busy_loop: bad SECS or BYTES\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	char *buf = malloc((size_t)bytes);
	memset(buf, 'a' + rank % 26, (size_t)bytes);
	MPI_File fh;
	if (MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL,
	                  &fh) != MPI_SUCCESS)
		MPI_Abort(MPI_COMM_WORLD, 1);
	const long long span = 64ll << 20, per = span / bytes;
	long long calls = 0;
	MPI_Barrier(MPI_COMM_WORLD);
	double end = now_s() + secs;
	for (;;) {
		MPI_Offset off = (MPI_Offset)rank * span + (MPI_Offset)(calls % per) * bytes;
		if (MPI_File_write_at(fh, off, buf, bytes, MPI_BYTE, MPI_STATUS_IGNORE) != MPI_SUCCESS)
			MPI_Abort(MPI_COMM_WORLD, 1);
		calls++;
		if (calls % 256 == 0 && now_s() >= end)
			break;
	}
	MPI_File_close(&fh);
	long long sum = 0;
	MPI_Reduce(&calls, &sum, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank == 0)
		printf("calls %lld bytes %lld\n", sum, sum * bytes);
	free(buf);
	MPI_Finalize();
	return 0;
}
