/* Access patterns under iopulse (tests/patterns/patterns.py): every rank
 * moves 4 KiB blocks of one shared file with MPI_File_write_at /
 * MPI_File_read_at for about SECONDS s, and prints what it did as one JSON
 * line: its calls per access pattern, counted here by pattern.h's words
 * (consecutive, sequential, strided, random), per class.
 *
 *   patterns strided FILE SECONDS   each rank writes blocks i * ranks + rank
 *                                   (interleaved, a constant forward stride)
 *   patterns random FILE SECONDS    each rank writes its part of the file
 *                                   (consecutive), then reads blocks at
 *                                   random offsets */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BLOCK  4096
#define BLOCKS 4096 /* the random mode's file: 16 MiB */

/* The previous call of a stream and its counts, as pattern.h defines them. */
struct stream {
	uint64_t start, end, stride;
	unsigned long long n[4]; /* consecutive, sequential, strided, random */
};

static void count(struct stream *s, uint64_t off, uint64_t len)
{
	int p;
	if (off == s->end)
		p = 0;
	else if (off < s->end)
		p = 3;
	else
		p = s->stride > 0 && off - s->start == s->stride ? 2 : 1;
	s->stride = off > s->start ? off - s->start : 0;
	s->start = off;
	s->end = off + len;
	s->n[p]++;
}

/* Appends a stream's counts to the line at *off. */
static void print_stream(char *line, size_t len, size_t *off, const char *cls,
                         const struct stream *s, const char *sep)
{
	int n = snprintf(
	    line + *off, len - *off,
	    "\"%s\":{\"consecutive\":%llu,\"sequential\":%llu,\"strided\":%llu,\"random\":%llu}%s",
	    cls, s->n[0], s->n[1], s->n[2], s->n[3], sep);
	if (n > 0 && (size_t)n < len - *off)
		*off += (size_t)n;
}

/* A pause every 16 calls: a rank moving 4 KiB blocks in the page cache
 * at full speed outruns the shim's rings (events dropped), and the counts
 * would not be exact. */
static void pace(uint64_t i)
{
	if (i % 16 == 15)
		usleep(1000);
}

static int check(int rc, const char *what)
{
	if (rc != MPI_SUCCESS) {
		fprintf(stderr, "patterns: %s failed\n", what);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	return rc;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, ranks;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &ranks);
	if (argc != 4 || (strcmp(argv[1], "strided") && strcmp(argv[1], "random"))) {
		if (rank == 0)
			fprintf(stderr, "usage: patterns strided|random FILE SECONDS\n");
		MPI_Finalize();
		return 2;
	}
	int strided = strcmp(argv[1], "strided") == 0;
	double seconds = atof(argv[3]);
	MPI_File fh;
	check(MPI_File_open(MPI_COMM_WORLD, argv[2], MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
	                    &fh),
	      "open");
	static char buf[BLOCK];
	memset(buf, 'a' + rank, sizeof buf);
	struct stream wr = {0}, rd = {0};
	MPI_Status st;
	if (strided) {
		double until = MPI_Wtime() + seconds;
		for (uint64_t i = 0; MPI_Wtime() < until; i++) {
			uint64_t off = (i * (uint64_t)ranks + (uint64_t)rank) * BLOCK;
			check(MPI_File_write_at(fh, (MPI_Offset)off, buf, BLOCK, MPI_BYTE, &st),
			      "write");
			count(&wr, off, BLOCK);
			pace(i);
		}
	} else {
		uint64_t part = BLOCKS / (uint64_t)ranks;
		for (uint64_t i = 0; i < part; i++) {
			uint64_t off = (rank * part + i) * BLOCK;
			check(MPI_File_write_at(fh, (MPI_Offset)off, buf, BLOCK, MPI_BYTE, &st),
			      "write");
			count(&wr, off, BLOCK);
		}
		MPI_Barrier(MPI_COMM_WORLD);
		srand(7 + (unsigned)rank);
		double until = MPI_Wtime() + seconds;
		for (uint64_t i = 0; MPI_Wtime() < until; i++) {
			uint64_t off = (uint64_t)(rand() % BLOCKS) * BLOCK;
			check(MPI_File_read_at(fh, (MPI_Offset)off, buf, BLOCK, MPI_BYTE, &st),
			      "read");
			count(&rd, off, BLOCK);
			pace(i);
		}
	}
	check(MPI_File_close(&fh), "close");
	/* one write of the whole line: MPICH makes stdout unbuffered, so a line
	 * printed in pieces can be cut by another rank's (seen in CI) */
	char line[512];
	size_t off = (size_t)snprintf(line, sizeof line, "{\"patterns\":1,\"rank\":%d,", rank);
	print_stream(line, sizeof line, &off, "write", &wr, ",");
	print_stream(line, sizeof line, &off, "read", &rd, "}\n");
	fputs(line, stdout);
	fflush(stdout);
	MPI_Finalize();
	return 0;
}
