/* sites-prog: call sites under the shim. Each rank
 *   - writes DIR/sites.<rank> with pwrite() from two functions,
 *     posix_writer_a (A writes) and posix_writer_b (B writes);
 *   - logs L lines to DIR/sites.<rank>.log with fprintf() from stdio_logger;
 *   - writes its block of the shared DIR/sites.shared with
 *     MPI_File_write_at() from mpiio_writer (M writes), whose POSIX calls
 *     must carry mpiio_writer's site too;
 * and prints its truth line (examples/README.md) with an extra "sites"
 * list: per function, the layer, class, ops and bytes its calls made.
 * run_example.py --check-sites compares that list with the sink's sites.
 *
 * The functions are noinline and differ in body (identical functions may
 * be folded into one), and each call is followed by a check, so none is a
 * tail call: the return address is in the function that made the call.
 * Their names come from the executable's .symtab (no -g, no -rdynamic
 * needed; a stripped build would show "sites-prog+0x..." instead). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

#include "truth.h"

#define A_WRITES 7
#define B_WRITES 11
#define L_LINES  5
#define M_WRITES 3
#define BLOCK    4096

static char buf[BLOCK];

__attribute__((noinline)) static uint64_t posix_writer_a(int fd)
{
	uint64_t bytes = 0;
	for (int i = 0; i < A_WRITES; i++) {
		ssize_t w = pwrite(fd, buf, 100, (off_t)i * 100);
		if (w != 100)
			ex_die("pwrite a: %s", strerror(errno));
		bytes += (uint64_t)w;
	}
	return bytes;
}

__attribute__((noinline)) static uint64_t posix_writer_b(int fd, off_t base)
{
	uint64_t bytes = 0;
	for (int i = 0; i < B_WRITES; i++) {
		ssize_t w = pwrite(fd, buf + 1, 37, base + (off_t)i * 37);
		if (w != 37)
			ex_die("pwrite b at %lld: %s", (long long)base, strerror(errno));
		bytes += (uint64_t)w;
	}
	return bytes;
}

__attribute__((noinline)) static uint64_t stdio_logger(FILE *f, int rank)
{
	uint64_t bytes = 0;
	for (int i = 0; i < L_LINES; i++) {
		int n = fprintf(f, "rank %d line %d\n", rank, i);
		if (n < 0)
			ex_die("fprintf: %s", strerror(errno));
		bytes += (uint64_t)n;
	}
	return bytes;
}

__attribute__((noinline)) static uint64_t mpiio_writer(MPI_File fh, int rank)
{
	for (int i = 0; i < M_WRITES; i++) {
		MPI_Offset off = ((MPI_Offset)rank * M_WRITES + i) * BLOCK;
		if (MPI_File_write_at(fh, off, buf, BLOCK, MPI_BYTE, MPI_STATUS_IGNORE) !=
		    MPI_SUCCESS)
			ex_die("MPI_File_write_at");
	}
	return (uint64_t)M_WRITES * BLOCK;
}

static json_t *site(const char *fn, const char *layer, const char *cls, long long ops,
                    long long bytes)
{
	json_t *o = json_pack("{s:s,s:s,s:s,s:I}", "function", fn, "layer", layer, "class", cls,
	                      "bytes", (json_int_t)bytes);
	if (o && ops >= 0)
		json_object_set_new(o, "ops", json_integer(ops));
	return o;
}

int main(int argc, char **argv)
{
	int rank;
	const char *dir = ".";
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	ex_init("sites-prog", rank);
	for (int c; (c = getopt(argc, argv, "d:")) != -1;)
		if (c == 'd')
			dir = optarg;
		else
			ex_die("usage: sites-prog [-d DIR]");
	ex_mkdir_p(dir);
	memset(buf, 'x', sizeof buf);

	char name[64], path[PATH_MAX], log[PATH_MAX], shared[PATH_MAX];
	snprintf(name, sizeof name, "sites.%d", rank);
	ex_join(path, dir, name);
	snprintf(name, sizeof name, "sites.%d.log", rank);
	ex_join(log, dir, name);
	ex_join(shared, dir, "sites.shared");

	int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
	if (fd < 0)
		ex_die("open %s: %s", path, strerror(errno));
	uint64_t a = posix_writer_a(fd);
	uint64_t b = posix_writer_b(fd, (off_t)a);
	if (close(fd) != 0)
		ex_die("close: %s", strerror(errno));

	FILE *f = fopen(log, "w");
	if (!f)
		ex_die("fopen %s: %s", log, strerror(errno));
	uint64_t l = stdio_logger(f, rank);
	if (fclose(f) != 0)
		ex_die("fclose: %s", strerror(errno));

	MPI_File fh;
	if (MPI_File_open(MPI_COMM_WORLD, shared, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL,
	                  &fh) != MPI_SUCCESS)
		ex_die("MPI_File_open %s", shared);
	uint64_t m = mpiio_writer(fh, rank);
	if (MPI_File_close(&fh) != MPI_SUCCESS)
		ex_die("MPI_File_close");

	json_t *truth = ex_truth_new();
	ex_truth_add(truth, path, "posix",
	             &(struct ex_io){.write_ops = A_WRITES + B_WRITES, .write_bytes = a + b});
	ex_truth_add(truth, log, "stdio", &(struct ex_io){.write_ops = L_LINES, .write_bytes = l});
	ex_truth_add(truth, shared, "mpiio",
	             &(struct ex_io){.write_ops = M_WRITES, .write_bytes = m});
	/* the POSIX calls under an MPI-IO call: their number is the MPI
	 * library's business, their bytes are the contiguous block's */
	json_t *sites =
	    json_pack("[o,o,o,o,o]", site("posix_writer_a", "posix", "write", A_WRITES, a),
	              site("posix_writer_b", "posix", "write", B_WRITES, b),
	              site("stdio_logger", "stdio", "write", L_LINES, l),
	              site("mpiio_writer", "mpiio", "write", M_WRITES, m),
	              site("mpiio_writer", "posix", "write", -1, m));
	json_object_set_new(truth, "sites", sites);
	ex_truth_print(truth);
	MPI_Finalize();
	return 0;
}
