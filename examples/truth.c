/* Shared helpers for the C examples: truth lines, option parsing, directory
 * creation and fatal errors. See truth.h. */
#include "truth.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <mpi.h>

static const char *example_name = "example";
static int example_rank = -1;

void ex_init(const char *example, int rank)
{
	example_name = example;
	example_rank = rank;
	/* A buffer larger than any truth line, so that fflush() hands the
	 * whole line to the kernel in one write(). */
	setvbuf(stdout, NULL, _IOFBF, 1 << 20);
}

void ex_die(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s: rank %d: %s\n", example_name, example_rank, msg);
	fflush(stderr);
	MPI_Abort(MPI_COMM_WORLD, 1);
	exit(1); /* MPI_Abort should not return; never continue if it does */
}

void ex_check_mpi(int rc, const char *what, const char *path)
{
	char msg[MPI_MAX_ERROR_STRING];
	int len;

	if (rc == MPI_SUCCESS)
		return;
	MPI_Error_string(rc, msg, &len);
	ex_die("%s %s: %s", what, path, msg);
}

uint64_t ex_parse_count(const char *text, char opt, uint64_t min, uint64_t max)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(text, &end, 10);
	if (errno || end == text || *end || text[0] == '-' || v < min || v > max)
		ex_die("-%c wants a whole number from %llu to %llu, not '%s'", opt,
		       (unsigned long long)min, (unsigned long long)max, text);
	return v;
}

/* mkdir that accepts a directory made meanwhile by another rank. */
static void mkdir_one(const char *path)
{
	struct stat st;

	if (mkdir(path, 0777) != 0 && errno != EEXIST)
		ex_die("mkdir %s: %s", path, strerror(errno));
	if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
		ex_die("%s is not a directory", path);
}

void ex_mkdir_p(const char *dir)
{
	char path[PATH_MAX];
	size_t len = strlen(dir);

	if (len == 0 || len >= sizeof path)
		ex_die("bad directory name '%s'", dir);
	memcpy(path, dir, len + 1);
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		mkdir_one(path);
		*p = '/';
	}
	mkdir_one(path);
}

void ex_join(char *out, const char *dir, const char *name)
{
	int n = snprintf(out, PATH_MAX, "%s/%s", dir, name);

	if (n < 0 || n >= PATH_MAX)
		ex_die("path %s/%s is too long", dir, name);
}

json_t *ex_truth_new(void)
{
	json_t *truth =
	    json_pack("{s:s, s:i, s:[]}", "example", example_name, "rank", example_rank, "files");

	if (!truth)
		ex_die("out of memory building the truth line");
	return truth;
}

void ex_truth_add(json_t *truth, const char *path, const char *layer, const struct ex_io *io)
{
	char abs[PATH_MAX];
	json_t *entry;

	if (path[0] != '<' && !realpath(path, abs))
		ex_die("realpath %s: %s", path, strerror(errno));
	entry = json_pack("{s:s, s:s, s:I, s:I, s:I, s:I}", "path", path[0] == '<' ? path : abs,
	                  "layer", layer, "write_bytes", (json_int_t)io->write_bytes, "write_ops",
	                  (json_int_t)io->write_ops, "read_bytes", (json_int_t)io->read_bytes,
	                  "read_ops", (json_int_t)io->read_ops);
	if (!entry || json_array_append_new(json_object_get(truth, "files"), entry) != 0)
		ex_die("out of memory building the truth line");
}

/* The truth as text with its newline; dies when it cannot be encoded. */
static char *truth_line(json_t *truth)
{
	char *text = json_dumps(truth, JSON_COMPACT);
	if (!text)
		ex_die("cannot encode the truth line");
	size_t len = strlen(text);
	char *line = malloc(len + 2);
	if (!line)
		ex_die("out of memory printing the truth line");
	memcpy(line, text, len);
	memcpy(line + len, "\n", 2);
	free(text);
	json_decref(truth);
	return line;
}

static void print_all(const char *text)
{
	if (fputs(text, stdout) == EOF || fflush(stdout) == EOF)
		ex_die("cannot print the truth line");
}

void ex_truth_print(json_t *truth)
{
	/* One stdout write per line, so the lines of different ranks never
	 * interleave: the text plus its newline go out in a single fputs. */
	char *line = truth_line(truth);
	print_all(line);
	free(line);
}

void ex_truth_print_gathered(json_t *truth, MPI_Comm comm)
{
	char *line = truth_line(truth);
	int len = (int)strlen(line), rank, n;
	MPI_Comm_rank(comm, &rank);
	MPI_Comm_size(comm, &n);
	int *lens = rank == 0 ? calloc((size_t)n, sizeof *lens) : NULL;
	int *disps = rank == 0 ? calloc((size_t)n, sizeof *disps) : NULL;
	if (rank == 0 && (!lens || !disps))
		ex_die("out of memory gathering the truth lines");
	MPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, comm);
	char *all = NULL;
	if (rank == 0) {
		size_t total = 0;
		for (int i = 0; i < n; i++) {
			disps[i] = (int)total;
			total += (size_t)lens[i];
		}
		all = malloc(total + 1);
		if (!all || total > INT_MAX)
			ex_die("out of memory gathering the truth lines");
		all[total] = '\0';
	}
	MPI_Gatherv(line, len, MPI_CHAR, all, lens, disps, MPI_CHAR, 0, comm);
	if (rank == 0)
		print_all(all);
	free(all);
	free(lens);
	free(disps);
	free(line);
}
