/* stdio-log: heavy STDIO logging. Each rank opens DIR/log.<rank> with
 * fopen, writes N fixed-width lines with fprintf and M lines to stderr with
 * fprintf(stderr, ...), flushes and closes the log, then reopens it with
 * fopen "r" and reads it back line by line with fgets, checking each line.
 *
 * Truth: two stdio entries. The log file: write_ops = fprintf calls,
 * write_bytes = sum of their return values, read_ops = fgets calls that
 * returned a line, read_bytes = sum of those lines' lengths. "<stderr>":
 * the fprintf(stderr) calls and bytes. (The truth line itself, one fputs to
 * stdout, is not counted.) */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

#include "truth.h"

/* Fixed width: every log line is 64 bytes including its newline. */
#define LOG_FORMAT   "rank %6d line %10llu value %016llx state:normal\n"
#define LINE_MAX_LEN 128

struct options {
	const char *dir;
	uint64_t lines;
	uint64_t stderr_lines;
};

static void usage(void)
{
	fprintf(stderr, "usage: stdio-log [-d DIR] [-n LINES] [-e STDERR_LINES]\n");
}

static struct options parse_options(int argc, char **argv)
{
	struct options o = {.dir = ".", .lines = 10000, .stderr_lines = 10};
	int c;

	while ((c = getopt(argc, argv, "d:n:e:")) != -1) {
		switch (c) {
		case 'd':
			o.dir = optarg;
			break;
		case 'n':
			o.lines = ex_parse_count(optarg, 'n', 0, 9999999999ull);
			break;
		case 'e':
			o.stderr_lines = ex_parse_count(optarg, 'e', 0, UINT32_MAX);
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

static unsigned long long line_value(int rank, uint64_t i)
{
	return (unsigned long long)(i * 0x9e3779b97f4a7c15ull) ^ (unsigned long long)rank;
}

static void write_log(const char *path, const struct options *o, int rank, struct ex_io *io,
                      struct ex_io *err)
{
	FILE *fp = fopen(path, "w");

	if (!fp)
		ex_die("fopen %s: %s", path, strerror(errno));
	for (uint64_t i = 0; i < o->lines; i++) {
		int n = fprintf(fp, LOG_FORMAT, rank, (unsigned long long)i, line_value(rank, i));
		if (n < 0)
			ex_die("fprintf %s: %s", path, strerror(errno));
		io->write_ops++;
		io->write_bytes += (uint64_t)n;
	}
	for (uint64_t i = 0; i < o->stderr_lines; i++) {
		int n = fprintf(stderr, "stdio-log: rank %d stderr line %llu\n", rank,
		                (unsigned long long)i);
		if (n < 0)
			ex_die("fprintf stderr: %s", strerror(errno));
		err->write_ops++;
		err->write_bytes += (uint64_t)n;
	}
	if (fflush(fp) != 0 || fclose(fp) != 0)
		ex_die("fflush/fclose %s: %s", path, strerror(errno));
}

static void read_log(const char *path, const struct options *o, int rank, struct ex_io *io)
{
	char line[LINE_MAX_LEN], want[LINE_MAX_LEN];
	uint64_t i = 0;
	FILE *fp = fopen(path, "r");

	if (!fp)
		ex_die("fopen %s: %s", path, strerror(errno));
	while (fgets(line, sizeof line, fp)) {
		io->read_ops++;
		io->read_bytes += strlen(line);
		snprintf(want, sizeof want, LOG_FORMAT, rank, (unsigned long long)i,
		         line_value(rank, i));
		if (i >= o->lines || strcmp(line, want) != 0)
			ex_die("%s: line %llu is not what was written", path,
			       (unsigned long long)i + 1);
		i++;
	}
	io->read_ops++; /* the fgets that met the end of the file is a call too */
	if (ferror(fp))
		ex_die("fgets %s: %s", path, strerror(errno));
	if (i != o->lines)
		ex_die("%s: read %llu lines, wrote %llu", path, (unsigned long long)i,
		       (unsigned long long)o->lines);
	if (fclose(fp) != 0)
		ex_die("fclose %s: %s", path, strerror(errno));
}

int main(int argc, char **argv)
{
	char name[64], path[PATH_MAX];
	struct ex_io io = {0}, err = {0};
	int rank;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	ex_init("stdio-log", rank);
	struct options o = parse_options(argc, argv);

	ex_mkdir_p(o.dir);
	snprintf(name, sizeof name, "log.%d", rank);
	ex_join(path, o.dir, name);
	write_log(path, &o, rank, &io, &err);
	read_log(path, &o, rank, &io);

	json_t *truth = ex_truth_new();
	ex_truth_add(truth, path, "stdio", &io);
	ex_truth_add(truth, "<stderr>", "stdio", &err);
	ex_truth_print(truth);
	MPI_Finalize();
	return 0;
}
