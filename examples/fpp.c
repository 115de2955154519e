/* fpp: file-per-process POSIX I/O, shaped like HACC-IO. Each rank writes
 * its own file DIR/fpp.<rank> in N transfers of S bytes with write() (or
 * pwrite() with -p), fsyncs and closes it, then reopens it and reads it all
 * back in the same transfer size with read() (pread() with -p), checking
 * every byte. With -t, rank 0 also prints the wall time of the write + read
 * phase on stderr ("fpp_time SECONDS s"), measured between two barriers;
 * benchmarks run it with and without the shim to get the overhead.
 *
 * Truth: one posix entry for the rank's file. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

#include "truth.h"

struct options {
	const char *dir;
	uint64_t transfers;
	uint64_t size;
	bool positional; /* pwrite/pread instead of write/read */
	bool timing;
};

static void usage(void)
{
	fprintf(stderr, "usage: fpp [-d DIR] [-n TRANSFERS] [-s BYTES] [-p] [-t]\n");
}

static struct options parse_options(int argc, char **argv)
{
	struct options o = {.dir = ".", .transfers = 64, .size = 1024};
	int c;

	while ((c = getopt(argc, argv, "d:n:s:pt")) != -1) {
		switch (c) {
		case 'd':
			o.dir = optarg;
			break;
		case 'n':
			o.transfers = ex_parse_count(optarg, 'n', 1, UINT32_MAX);
			break;
		case 's':
			o.size = ex_parse_count(optarg, 's', 1, 1u << 30);
			break;
		case 'p':
			o.positional = true;
			break;
		case 't':
			o.timing = true;
			break;
		default:
			usage();
			ex_die("bad option");
		}
	}
	if (optind != argc) {
		usage();
		ex_die("unexpected argument '%s'", argv[optind]);
	}
	return o;
}

/* The byte at position J of transfer I of RANK's file. */
static unsigned char pattern(int rank, uint64_t i, uint64_t j)
{
	return (unsigned char)(rank * 31 + i * 7 + j);
}

static void fill(unsigned char *buf, int rank, uint64_t i, uint64_t size)
{
	for (uint64_t j = 0; j < size; j++)
		buf[j] = pattern(rank, i, j);
}

static void write_file(const char *path, const struct options *o, int rank, unsigned char *buf,
                       struct ex_io *io)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0)
		ex_die("open %s: %s", path, strerror(errno));
	for (uint64_t i = 0; i < o->transfers; i++) {
		fill(buf, rank, i, o->size);
		ssize_t n = o->positional ? pwrite(fd, buf, o->size, (off_t)(i * o->size))
		                          : write(fd, buf, o->size);
		if (n < 0 || (uint64_t)n != o->size)
			ex_die("write %s transfer %llu: %s", path, (unsigned long long)i,
			       n < 0 ? strerror(errno) : "short write");
		io->write_ops++;
		io->write_bytes += (uint64_t)n;
	}
	if (fsync(fd) != 0 || close(fd) != 0)
		ex_die("fsync/close %s: %s", path, strerror(errno));
}

static void read_file(const char *path, const struct options *o, int rank, unsigned char *buf,
                      struct ex_io *io)
{
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		ex_die("open %s: %s", path, strerror(errno));
	for (uint64_t i = 0; i < o->transfers; i++) {
		ssize_t n = o->positional ? pread(fd, buf, o->size, (off_t)(i * o->size))
		                          : read(fd, buf, o->size);
		if (n < 0 || (uint64_t)n != o->size)
			ex_die("read %s transfer %llu: %s", path, (unsigned long long)i,
			       n < 0 ? strerror(errno) : "short read");
		io->read_ops++;
		io->read_bytes += (uint64_t)n;
		for (uint64_t j = 0; j < o->size; j++)
			if (buf[j] != pattern(rank, i, j))
				ex_die("%s: wrong byte at offset %llu", path,
				       (unsigned long long)(i * o->size + j));
	}
	if (close(fd) != 0)
		ex_die("close %s: %s", path, strerror(errno));
}

int main(int argc, char **argv)
{
	char name[64], path[PATH_MAX];
	struct ex_io io = {0};
	unsigned char *buf;
	double t0, t1;
	int rank;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	ex_init("fpp", rank);
	struct options o = parse_options(argc, argv);

	ex_mkdir_p(o.dir);
	snprintf(name, sizeof name, "fpp.%d", rank);
	ex_join(path, o.dir, name);
	buf = malloc(o.size);
	if (!buf)
		ex_die("cannot allocate %llu bytes", (unsigned long long)o.size);

	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	write_file(path, &o, rank, buf, &io);
	read_file(path, &o, rank, buf, &io);
	MPI_Barrier(MPI_COMM_WORLD);
	t1 = MPI_Wtime();
	if (o.timing && rank == 0)
		fprintf(stderr, "fpp_time %.6f s\n", t1 - t0);

	json_t *truth = ex_truth_new();
	ex_truth_add(truth, path, "posix", &io);
	ex_truth_print(truth);
	free(buf);
	MPI_Finalize();
	return 0;
}
