/* mpi-checkpoint: collective MPI-IO checkpoints of a 3-D block-decomposed
 * field, shaped like S3D-I/O. The ranks form a 3-D process grid
 * (MPI_Dims_create); each holds a local X*Y*Z block of NVARS variables of
 * doubles. For each of C checkpoints the ranks write the shared file
 * DIR/ckpt.<c> collectively: per variable one MPI_File_set_view with a
 * subarray filetype and one MPI_File_write_all. Variable v is stored as a
 * whole global array after variable v-1. The file is closed, reopened and
 * read back the same way with MPI_File_read_all, and every value checked.
 *
 * Truth: one mpiio entry per checkpoint file; ops = write_all / read_all
 * calls, bytes = doubles transferred * 8. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <mpi.h>

#include "truth.h"

struct options {
	const char *dir;
	int local[3]; /* block size per rank in x, y, z */
	int nvars;
	int checkpoints;
};

/* The process grid, this rank's place in it and the subarray it owns. */
struct grid {
	int rank;
	int dims[3];
	int coords[3];
	int global[3];
	MPI_Offset global_count; /* doubles in one variable of the whole array */
	int local_count;
	MPI_Datatype filetype;
};

static void usage(void)
{
	fprintf(stderr, "usage: mpi-checkpoint [-d DIR] [-x X] [-y Y] [-z Z] [-v NVARS] "
	                "[-c CHECKPOINTS]\n");
}

static struct options parse_options(int argc, char **argv)
{
	struct options o = {.dir = ".", .local = {16, 16, 16}, .nvars = 2, .checkpoints = 2};
	int c;

	while ((c = getopt(argc, argv, "d:x:y:z:v:c:")) != -1) {
		switch (c) {
		case 'd':
			o.dir = optarg;
			break;
		case 'x':
			o.local[0] = (int)ex_parse_count(optarg, 'x', 1, 1024);
			break;
		case 'y':
			o.local[1] = (int)ex_parse_count(optarg, 'y', 1, 1024);
			break;
		case 'z':
			o.local[2] = (int)ex_parse_count(optarg, 'z', 1, 1024);
			break;
		case 'v':
			o.nvars = (int)ex_parse_count(optarg, 'v', 1, 64);
			break;
		case 'c':
			o.checkpoints = (int)ex_parse_count(optarg, 'c', 1, 100000);
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
	if ((uint64_t)o.local[0] * o.local[1] * o.local[2] > INT_MAX / 8)
		ex_die("local block of %d x %d x %d is too big", o.local[0], o.local[1],
		       o.local[2]);
	return o;
}

static struct grid make_grid(const struct options *o)
{
	struct grid g = {0};
	int size, periods[3] = {0}, starts[3];
	MPI_Comm cart;

	MPI_Comm_rank(MPI_COMM_WORLD, &g.rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Dims_create(size, 3, g.dims);
	MPI_Cart_create(MPI_COMM_WORLD, 3, g.dims, periods, 0, &cart);
	MPI_Cart_coords(cart, g.rank, 3, g.coords);
	MPI_Comm_free(&cart);
	g.global_count = 1;
	g.local_count = 1;
	for (int d = 0; d < 3; d++) {
		g.global[d] = g.dims[d] * o->local[d];
		starts[d] = g.coords[d] * o->local[d];
		g.global_count *= g.global[d];
		g.local_count *= o->local[d];
	}
	MPI_Type_create_subarray(3, g.global, o->local, starts, MPI_ORDER_C, MPI_DOUBLE,
	                         &g.filetype);
	MPI_Type_commit(&g.filetype);
	return g;
}

/* Value of variable V in checkpoint C at local index (i, j, k): unique per
 * position, variable and checkpoint, and exact in a double. */
static double value(const struct grid *g, const struct options *o, int c, int v, int i, int j,
                    int k)
{
	int64_t gx = (int64_t)g->coords[0] * o->local[0] + i;
	int64_t gy = (int64_t)g->coords[1] * o->local[1] + j;
	int64_t gz = (int64_t)g->coords[2] * o->local[2] + k;
	int64_t lin = (gx * g->global[1] + gy) * g->global[2] + gz;

	return (double)(lin + g->global_count * (v + (int64_t)o->nvars * c));
}

/* Fills (or with CHECK, verifies) the local block of variable V. */
static void fill_or_check(double *buf, const struct grid *g, const struct options *o, int c, int v,
                          int check)
{
	int n = 0;

	for (int i = 0; i < o->local[0]; i++)
		for (int j = 0; j < o->local[1]; j++)
			for (int k = 0; k < o->local[2]; k++, n++) {
				double want = value(g, o, c, v, i, j, k);
				if (!check)
					buf[n] = want;
				else if (buf[n] != want)
					ex_die("checkpoint %d variable %d: wrong value at "
					       "(%d,%d,%d)",
					       c, v, i, j, k);
			}
}

static void check_count(MPI_Status *st, int want, const char *what, const char *path)
{
	int got;

	MPI_Get_count(st, MPI_DOUBLE, &got);
	if (got != want)
		ex_die("%s %s: %d of %d doubles", what, path, got, want);
}

/* Writes (WRITING != 0) or reads and verifies one checkpoint file. */
static void transfer(const char *path, const struct grid *g, const struct options *o, int c,
                     double *buf, int writing, struct ex_io *io)
{
	int amode = writing ? MPI_MODE_CREATE | MPI_MODE_WRONLY : MPI_MODE_RDONLY;
	MPI_Offset var_bytes = g->global_count * (MPI_Offset)sizeof(double);
	MPI_Status st;
	MPI_File fh;

	ex_check_mpi(MPI_File_open(MPI_COMM_WORLD, path, amode, MPI_INFO_NULL, &fh), "open", path);
	for (int v = 0; v < o->nvars; v++) {
		ex_check_mpi(MPI_File_set_view(fh, v * var_bytes, MPI_DOUBLE, g->filetype, "native",
		                            MPI_INFO_NULL),
		          "set_view", path);
		if (writing) {
			fill_or_check(buf, g, o, c, v, 0);
			ex_check_mpi(MPI_File_write_all(fh, buf, g->local_count, MPI_DOUBLE, &st),
			          "write_all", path);
			check_count(&st, g->local_count, "write_all", path);
			io->write_ops++;
			io->write_bytes += (uint64_t)g->local_count * sizeof(double);
		} else {
			ex_check_mpi(MPI_File_read_all(fh, buf, g->local_count, MPI_DOUBLE, &st),
			          "read_all", path);
			check_count(&st, g->local_count, "read_all", path);
			io->read_ops++;
			io->read_bytes += (uint64_t)g->local_count * sizeof(double);
			fill_or_check(buf, g, o, c, v, 1);
		}
	}
	ex_check_mpi(MPI_File_close(&fh), "close", path);
}

int main(int argc, char **argv)
{
	char name[64], path[PATH_MAX];
	int rank;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	ex_init("mpi-checkpoint", rank);
	struct options o = parse_options(argc, argv);
	struct grid g = make_grid(&o);
	double *buf = malloc((size_t)g.local_count * sizeof(double));
	struct ex_io *io = calloc((size_t)o.checkpoints, sizeof *io);
	json_t *truth = ex_truth_new();

	if (!buf || !io)
		ex_die("out of memory");
	ex_mkdir_p(o.dir);
	for (int c = 0; c < o.checkpoints; c++) {
		snprintf(name, sizeof name, "ckpt.%d", c);
		ex_join(path, o.dir, name);
		/* Start from an empty file so its size is what this run wrote. */
		if (rank == 0)
			MPI_File_delete(path, MPI_INFO_NULL);
		MPI_Barrier(MPI_COMM_WORLD);
		transfer(path, &g, &o, c, buf, 1, &io[c]);
		transfer(path, &g, &o, c, buf, 0, &io[c]);
		ex_truth_add(truth, path, "mpiio", &io[c]);
	}
	ex_truth_print(truth);
	MPI_Type_free(&g.filetype);
	free(io);
	free(buf);
	MPI_Finalize();
	return 0;
}
