/* steady: a long-running job with a steady I/O rhythm, for demos and for
 * the alert tests. Each rank writes its own file DIR/steady.<rank> with
 * pwrite() at a fixed pace, RATE calls of S bytes per second, for T
 * seconds, cycling over the first F bytes of the file (so the file stays
 * small however long it runs); every R-th call (-r, 0: none) is instead a
 * pread of the block the last write wrote, checked. A call that comes late (the file system
 * or a fault slowed the rank down) is not made up for: the rank falls
 * behind, as a real rank would, and the pace restarts from there.
 *
 * The ranks start together (a barrier) and do not wait for each other
 * between calls, so one slow rank moves fewer bytes than the others; they
 * meet at a barrier at the end. With -e MS rank r runs r x MS milliseconds
 * longer than T: the ranks end apart, as ranks of a real job wind down.
 *
 * Truth: one posix entry for the rank's file. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "truth.h"

struct options {
	const char *dir;
	uint64_t size;     /* bytes per call */
	uint64_t rate;     /* calls per second */
	uint64_t seconds;  /* how long */
	uint64_t span;     /* bytes of the file the calls cycle over */
	uint64_t read_every;
	uint64_t stagger_ms; /* rank r runs r x this longer */
};

static void usage(void)
{
	fprintf(stderr, "usage: steady [-d DIR] [-s BYTES] [-n CALLS_PER_S] [-T SECONDS] "
	                "[-f FILE_BYTES] [-r READ_EVERY] [-e STAGGER_MS]\n");
}

static struct options parse_options(int argc, char **argv)
{
	struct options o = {.dir = ".", .size = 1 << 20, .rate = 100, .seconds = 10,
	                    .span = 16 << 20, .read_every = 0};
	int c;

	while ((c = getopt(argc, argv, "d:s:n:T:f:r:e:")) != -1) {
		switch (c) {
		case 'd':
			o.dir = optarg;
			break;
		case 's':
			o.size = ex_parse_count(optarg, 's', 1, 1u << 30);
			break;
		case 'n':
			o.rate = ex_parse_count(optarg, 'n', 1, 1000000);
			break;
		case 'T':
			o.seconds = ex_parse_count(optarg, 'T', 1, 7 * 24 * 3600);
			break;
		case 'f':
			o.span = ex_parse_count(optarg, 'f', 1, UINT64_C(1) << 40);
			break;
		case 'r':
			o.read_every = ex_parse_count(optarg, 'r', 0, UINT32_MAX);
			break;
		case 'e':
			o.stagger_ms = ex_parse_count(optarg, 'e', 0, 3600 * 1000);
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
	if (o.span < o.size)
		o.span = o.size;
	return o;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sleep_until(uint64_t t)
{
	struct timespec ts = {.tv_sec = (time_t)(t / 1000000000u), .tv_nsec = (long)(t % 1000000000u)};
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/* Block B of RANK's file: B in its first 8 bytes (when it has 8), then a
 * pattern of the rank: what a read must find. Filled once, stamped per call. */
static void fill(unsigned char *buf, int rank, uint64_t size)
{
	for (uint64_t j = 0; j < size; j++)
		buf[j] = (unsigned char)(rank * 31 + j * 7);
}

static void stamp(unsigned char *buf, uint64_t b, uint64_t size)
{
	memcpy(buf, &b, size < sizeof b ? size : sizeof b);
}

int main(int argc, char **argv)
{
	char name[64], path[PATH_MAX];
	struct ex_io io = {0};
	int rank;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	ex_init("steady", rank);
	struct options o = parse_options(argc, argv);

	ex_mkdir_p(o.dir);
	snprintf(name, sizeof name, "steady.%d", rank);
	ex_join(path, o.dir, name);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		ex_die("open %s: %s", path, strerror(errno));
	unsigned char *buf = malloc(o.size), *back = malloc(o.size);
	if (!buf || !back)
		ex_die("out of memory for %llu-byte buffers", (unsigned long long)o.size);

	fill(buf, rank, o.size);
	uint64_t blocks = o.span / o.size, last = 0; /* the block the last write wrote */
	bool wrote = false;
	MPI_Barrier(MPI_COMM_WORLD); /* one start: no rank writes alone at first, nor last */
	uint64_t period = 1000000000u / o.rate, start = now_ns();
	uint64_t end = start + o.seconds * 1000000000u + (uint64_t)rank * o.stagger_ms * 1000000u;
	uint64_t next = start;
	for (uint64_t i = 0; now_ns() < end; i++) {
		uint64_t b = i % blocks;
		if (o.read_every && i % o.read_every == o.read_every - 1 && wrote) {
			uint64_t rb = last;
			ssize_t n = pread(fd, back, o.size, (off_t)(rb * o.size));
			if (n < 0 || (uint64_t)n != o.size)
				ex_die("pread %s: %s", path, n < 0 ? strerror(errno) : "short read");
			stamp(buf, rb, o.size);
			if (memcmp(back, buf, o.size) != 0)
				ex_die("%s: wrong data in block %llu", path, (unsigned long long)rb);
			io.read_ops++;
			io.read_bytes += (uint64_t)n;
		} else {
			stamp(buf, b, o.size);
			ssize_t n = pwrite(fd, buf, o.size, (off_t)(b * o.size));
			if (n < 0 || (uint64_t)n != o.size)
				ex_die("pwrite %s: %s", path, n < 0 ? strerror(errno) : "short write");
			io.write_ops++;
			io.write_bytes += (uint64_t)n;
			last = b;
			wrote = true;
		}
		next += period;
		uint64_t t = now_ns();
		if (next > t)
			sleep_until(next);
		else
			next = t; /* late: fall behind, do not burst */
	}
	if (close(fd) != 0)
		ex_die("close %s: %s", path, strerror(errno));
	free(buf);
	free(back);
	MPI_Barrier(MPI_COMM_WORLD);

	json_t *truth = ex_truth_new();
	ex_truth_add(truth, path, "posix", &io);
	ex_truth_print(truth);
	MPI_Finalize();
	return 0;
}
