/* pnetcdf-bytes: a PnetCDF program, for tests/pnetcdf/pnetcdf_bytes.py,
 * whose MPI-IO bytes PnetCDF itself reports. PnetCDF (a library written by
 * others) does its I/O through MPI-IO with derived datatypes.
 *
 * Every rank of P owns a block of each variable of DIR/pnetcdf.nc (CDF-5,
 * NC_64BIT_DATA):
 *
 *   temp[4P][6]     double; rows 4r, 4r+1 by ncmpi_put_vara_double_all,
 *                   rows 4r+2, 4r+3 by ncmpi_put_vara_all (flexible API)
 *                   from a buffer with padded rows, buftype an
 *                   MPI_Type_vector;
 *   cube[2P][3][8]  int; even x by ncmpi_put_vars_int_all (stride 2), odd x
 *                   by ncmpi_put_vars_all (flexible) from every other int of
 *                   a buffer, buftype an MPI_Type_vector;
 *   rec[NREC][5P]   double along NC_UNLIMITED; one ncmpi_iput_vara_double
 *                   per record, from buffers with gaps between them, then
 *                   ncmpi_wait_all.
 *
 * Then the file is reopened and every rank reads its blocks back the same
 * ways (vara, vars, flexible, and iget + ncmpi_wait_all) and checks every
 * value.
 *
 * What reaches MPI-IO (seen with an interposer on Open MPI 4.1 and PnetCDF
 * 1.12.3): file views of subarray, vector and struct types; as memory
 * types, the blocking calls pass a basic type (PnetCDF packs and byte-swaps
 * the user's buftype into a buffer of its own), the wait_all calls an
 * MPI_Type_create_hindexed joining the requests' buffers, with the hint
 * nc_ibuf_size=0 (below). The header is written by rank 0 alone
 * (MPI_File_write_at, then the 8-byte record count again), and read at the
 * open by rank 0 alone, in one MPI_File_read_at of nc_header_read_chunk_size
 * bytes from offset 0 that stops at the end of the file.
 *
 * Before each ncmpi_close the rank asks ncmpi_inq_put_size and
 * ncmpi_inq_get_size: the bytes PnetCDF moved through MPI-IO on this rank
 * since the file was created or opened (what the statuses of its
 * MPI_File_write_at(_all)/read_at(_all) calls said). Each rank prints one
 * line:
 *   {"example":"pnetcdf","rank":R,"files":[{"path":ABS,"layer":"pnetcdf",
 *    "put_size":W,"get_size":G,"create_put":..,"create_get":..,
 *    "open_put":..,"open_get":..,"data_written":D,"data_read":E,
 *    "header_size":H,"header_extent":X,"header_chunk":C}]}
 * put_size/get_size are the sums of the two opens; data_written/data_read
 * are the bytes of variable data this rank asked PnetCDF to move (elements
 * x the file type's size); header_size/header_extent come from
 * ncmpi_inq_header_size/ncmpi_inq_header_extent; header_chunk is the hint
 * nc_header_read_chunk_size. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <mpi.h>
#include <pnetcdf.h>

#include "truth.h"

#define TEMP_X    6 /* columns of temp */
#define TEMP_PAD  9 /* doubles per row of the padded buffer of the flexible put */
#define CUBE_Y    3
#define CUBE_X    8
#define CUBE_HALF (2 * CUBE_Y * CUBE_X / 2) /* ints per rank, odd (or even) x */
#define REC_X     5                         /* columns of rec per rank */
#define NREC      3
#define REC_GAP   1 /* doubles between the buffers of the nonblocking requests */

/* PnetCDF's hints: nc_ibuf_size 0 makes it hand MPI-IO the hindexed memory
 * type that joins the buffers of the requests a ncmpi_wait_all completes
 * (by default it packs small ones into a contiguous buffer of its own, and
 * MPI-IO sees MPI_BYTE: then iopulse before the fix of issue 17 counted
 * this program right too); nc_header_read_chunk_size is what rank 0 reads
 * of the header at a time (its default, said here so the driver knows it). */
#define HEADER_CHUNK      262144
#define HEADER_CHUNK_TEXT "262144"

#define NC(call)                                                                                   \
	do {                                                                                       \
		int err_ = (call);                                                                 \
		if (err_ != NC_NOERR)                                                              \
			ex_die("%s: %s", #call, ncmpi_strerror(err_));                             \
	} while (0)

struct ctx {
	int rank, size;
	char path[PATH_MAX];
	int ncid, temp, cube, rec;
	MPI_Datatype rows;  /* 2 rows of TEMP_X doubles, TEMP_PAD apart */
	MPI_Datatype every; /* CUBE_HALF ints, every other one */
	MPI_Info info;      /* PnetCDF's hints, see main() */
};

/* What PnetCDF said, and what the rank asked it to move. */
struct sizes {
	MPI_Offset create_put, create_get, open_put, open_get;
	MPI_Offset data_written, data_read, header_size, header_extent;
};

/* The value at element INDEX of variable VAR: distinct everywhere. */
static double value(int var, MPI_Offset index)
{
	return var * 1000000.0 + (double)index;
}

static MPI_Offset temp_index(MPI_Offset y, MPI_Offset x)
{
	return y * TEMP_X + x;
}

static MPI_Offset cube_index(MPI_Offset z, MPI_Offset y, MPI_Offset x)
{
	return (z * CUBE_Y + y) * CUBE_X + x;
}

static MPI_Offset rec_index(const struct ctx *c, MPI_Offset t, MPI_Offset x)
{
	return t * REC_X * c->size + x;
}

static void define_vars(struct ctx *c)
{
	int dims[3], ny, nx, nz, cy, cx, nt, rx;

	NC(ncmpi_def_dim(c->ncid, "y", 4 * (MPI_Offset)c->size, &ny));
	NC(ncmpi_def_dim(c->ncid, "x", TEMP_X, &nx));
	NC(ncmpi_def_dim(c->ncid, "z", 2 * (MPI_Offset)c->size, &nz));
	NC(ncmpi_def_dim(c->ncid, "cy", CUBE_Y, &cy));
	NC(ncmpi_def_dim(c->ncid, "cx", CUBE_X, &cx));
	NC(ncmpi_def_dim(c->ncid, "time", NC_UNLIMITED, &nt));
	NC(ncmpi_def_dim(c->ncid, "rx", REC_X * (MPI_Offset)c->size, &rx));
	dims[0] = ny, dims[1] = nx;
	NC(ncmpi_def_var(c->ncid, "temp", NC_DOUBLE, 2, dims, &c->temp));
	dims[0] = nz, dims[1] = cy, dims[2] = cx;
	NC(ncmpi_def_var(c->ncid, "cube", NC_INT, 3, dims, &c->cube));
	dims[0] = nt, dims[1] = rx;
	NC(ncmpi_def_var(c->ncid, "rec", NC_DOUBLE, 2, dims, &c->rec));
	NC(ncmpi_put_att_text(c->ncid, NC_GLOBAL, "title", 13, "iopulse bytes"));
	NC(ncmpi_enddef(c->ncid));
}

/* temp: two rows through the high-level API, two through the flexible
 * API from a buffer with padded rows. */
static void write_temp(struct ctx *c, struct sizes *s)
{
	double plain[2][TEMP_X], padded[2][TEMP_PAD];
	MPI_Offset y0 = 4 * (MPI_Offset)c->rank;
	MPI_Offset start[2] = {y0, 0}, count[2] = {2, TEMP_X};

	for (int y = 0; y < 2; y++) {
		for (int x = 0; x < TEMP_PAD; x++) {
			if (x < TEMP_X)
				plain[y][x] = value(1, temp_index(y0 + y, x));
			padded[y][x] = x < TEMP_X ? value(1, temp_index(y0 + 2 + y, x)) : -1.0;
		}
	}
	NC(ncmpi_put_vara_double_all(c->ncid, c->temp, start, count, &plain[0][0]));
	start[0] = y0 + 2;
	NC(ncmpi_put_vara_all(c->ncid, c->temp, start, count, &padded[0][0], 1, c->rows));
	s->data_written += 4 * TEMP_X * sizeof(double);
}

/* cube: even x strided, odd x strided through the flexible API from every
 * other int of a buffer. */
static void write_cube(struct ctx *c, struct sizes *s)
{
	int even[CUBE_HALF], sparse[2 * CUBE_HALF];
	MPI_Offset z0 = 2 * (MPI_Offset)c->rank;
	MPI_Offset start[3] = {z0, 0, 0}, count[3] = {2, CUBE_Y, CUBE_X / 2}, stride[3] = {1, 1, 2};

	for (int i = 0; i < CUBE_HALF; i++) {
		MPI_Offset z = z0 + i / (CUBE_Y * CUBE_X / 2), y = i / (CUBE_X / 2) % CUBE_Y;
		MPI_Offset x = 2 * (i % (CUBE_X / 2));
		even[i] = (int)value(0, cube_index(z, y, x));
		sparse[2 * i] = (int)value(0, cube_index(z, y, x + 1));
		sparse[2 * i + 1] = -1;
	}
	NC(ncmpi_put_vars_int_all(c->ncid, c->cube, start, count, stride, even));
	start[2] = 1;
	NC(ncmpi_put_vars_all(c->ncid, c->cube, start, count, stride, sparse, 1, c->every));
	s->data_written += 2 * CUBE_HALF * sizeof(int);
}

/* rec: one nonblocking put per record, all completed by one wait. */
static void write_rec(struct ctx *c, struct sizes *s)
{
	double buf[NREC][REC_X + REC_GAP];
	int req[NREC], st[NREC];
	MPI_Offset x0 = REC_X * (MPI_Offset)c->rank;

	for (int t = 0; t < NREC; t++) {
		MPI_Offset start[2] = {t, x0}, count[2] = {1, REC_X};
		for (int x = 0; x < REC_X; x++)
			buf[t][x] = value(2, rec_index(c, t, x0 + x));
		NC(ncmpi_iput_vara_double(c->ncid, c->rec, start, count, buf[t], &req[t]));
	}
	NC(ncmpi_wait_all(c->ncid, NREC, req, st));
	for (int t = 0; t < NREC; t++)
		NC(st[t]);
	s->data_written += NREC * REC_X * sizeof(double);
}

static void write_file(struct ctx *c, struct sizes *s)
{
	NC(ncmpi_create(MPI_COMM_WORLD, c->path, NC_CLOBBER | NC_64BIT_DATA, c->info, &c->ncid));
	define_vars(c);
	write_temp(c, s);
	write_cube(c, s);
	write_rec(c, s);
	NC(ncmpi_inq_header_size(c->ncid, &s->header_size));
	NC(ncmpi_inq_header_extent(c->ncid, &s->header_extent));
	NC(ncmpi_inq_put_size(c->ncid, &s->create_put));
	NC(ncmpi_inq_get_size(c->ncid, &s->create_get));
	NC(ncmpi_close(c->ncid));
}

static void expect(const char *var, MPI_Offset index, double got, double want)
{
	if (got != want)
		ex_die("%s element %lld: read %.1f, wrote %.1f", var, (long long)index, got, want);
}

static void read_temp(struct ctx *c, struct sizes *s)
{
	double all[4][TEMP_X], padded[2][TEMP_PAD];
	MPI_Offset y0 = 4 * (MPI_Offset)c->rank;
	MPI_Offset start[2] = {y0, 0}, count[2] = {4, TEMP_X};

	for (int x = 0; x < TEMP_PAD; x++)
		padded[0][x] = padded[1][x] = -1.0;
	NC(ncmpi_get_vara_double_all(c->ncid, c->temp, start, count, &all[0][0]));
	start[0] = y0 + 2, count[0] = 2;
	NC(ncmpi_get_vara_all(c->ncid, c->temp, start, count, &padded[0][0], 1, c->rows));
	for (int y = 0; y < 4; y++)
		for (int x = 0; x < TEMP_X; x++)
			expect("temp", temp_index(y0 + y, x), all[y][x],
			       value(1, temp_index(y0 + y, x)));
	for (int y = 0; y < 2; y++)
		for (int x = 0; x < TEMP_PAD; x++)
			expect("temp (flexible)", temp_index(y0 + 2 + y, x), padded[y][x],
			       x < TEMP_X ? value(1, temp_index(y0 + 2 + y, x)) : -1.0);
	s->data_read += 6 * TEMP_X * sizeof(double);
}

static void read_cube(struct ctx *c, struct sizes *s)
{
	int even[CUBE_HALF], sparse[2 * CUBE_HALF];
	MPI_Offset z0 = 2 * (MPI_Offset)c->rank;
	MPI_Offset start[3] = {z0, 0, 0}, count[3] = {2, CUBE_Y, CUBE_X / 2}, stride[3] = {1, 1, 2};

	for (int i = 0; i < 2 * CUBE_HALF; i++)
		sparse[i] = -1;
	NC(ncmpi_get_vars_int_all(c->ncid, c->cube, start, count, stride, even));
	start[2] = 1;
	NC(ncmpi_get_vars_all(c->ncid, c->cube, start, count, stride, sparse, 1, c->every));
	for (int i = 0; i < CUBE_HALF; i++) {
		MPI_Offset z = z0 + i / (CUBE_Y * CUBE_X / 2), y = i / (CUBE_X / 2) % CUBE_Y;
		MPI_Offset x = 2 * (i % (CUBE_X / 2));
		expect("cube", cube_index(z, y, x), even[i], value(0, cube_index(z, y, x)));
		expect("cube (flexible)", cube_index(z, y, x + 1), sparse[2 * i],
		       value(0, cube_index(z, y, x + 1)));
		expect("cube (flexible gap)", cube_index(z, y, x + 1), sparse[2 * i + 1], -1);
	}
	s->data_read += 2 * CUBE_HALF * sizeof(int);
}

static void read_rec(struct ctx *c, struct sizes *s)
{
	double all[NREC][REC_X], again[NREC][REC_X + REC_GAP];
	int req[NREC], st[NREC];
	MPI_Offset x0 = REC_X * (MPI_Offset)c->rank, nrec;
	MPI_Offset start[2] = {0, x0}, count[2] = {NREC, REC_X};
	int time;

	NC(ncmpi_inq_dimid(c->ncid, "time", &time));
	NC(ncmpi_inq_dimlen(c->ncid, time, &nrec));
	if (nrec != NREC)
		ex_die("rec has %lld records, %d were written", (long long)nrec, NREC);
	NC(ncmpi_get_vara_double_all(c->ncid, c->rec, start, count, &all[0][0]));
	for (int t = 0; t < NREC; t++) {
		MPI_Offset one[2] = {t, x0}, n[2] = {1, REC_X};
		NC(ncmpi_iget_vara_double(c->ncid, c->rec, one, n, again[t], &req[t]));
	}
	NC(ncmpi_wait_all(c->ncid, NREC, req, st));
	for (int t = 0; t < NREC; t++) {
		NC(st[t]);
		for (int x = 0; x < REC_X; x++) {
			expect("rec", rec_index(c, t, x0 + x), all[t][x],
			       value(2, rec_index(c, t, x0 + x)));
			expect("rec (iget)", rec_index(c, t, x0 + x), again[t][x],
			       value(2, rec_index(c, t, x0 + x)));
		}
	}
	s->data_read += 2 * NREC * REC_X * sizeof(double);
}

static void read_file(struct ctx *c, struct sizes *s)
{
	NC(ncmpi_open(MPI_COMM_WORLD, c->path, NC_NOWRITE, c->info, &c->ncid));
	NC(ncmpi_inq_varid(c->ncid, "temp", &c->temp));
	NC(ncmpi_inq_varid(c->ncid, "cube", &c->cube));
	NC(ncmpi_inq_varid(c->ncid, "rec", &c->rec));
	read_temp(c, s);
	read_cube(c, s);
	read_rec(c, s);
	NC(ncmpi_inq_put_size(c->ncid, &s->open_put));
	NC(ncmpi_inq_get_size(c->ncid, &s->open_get));
	NC(ncmpi_close(c->ncid));
}

static void print_truth(const struct ctx *c, const struct sizes *s)
{
	char abs[PATH_MAX];
	json_t *truth = ex_truth_new();

	if (!realpath(c->path, abs))
		ex_die("realpath %s failed", c->path);
	json_t *e = json_pack(
	    "{s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:i}", "path", abs,
	    "layer", "pnetcdf", "put_size", (json_int_t)(s->create_put + s->open_put), "get_size",
	    (json_int_t)(s->create_get + s->open_get), "create_put", (json_int_t)s->create_put,
	    "create_get", (json_int_t)s->create_get, "open_put", (json_int_t)s->open_put,
	    "open_get", (json_int_t)s->open_get, "data_written", (json_int_t)s->data_written,
	    "data_read", (json_int_t)s->data_read, "header_size", (json_int_t)s->header_size,
	    "header_extent", (json_int_t)s->header_extent, "header_chunk", HEADER_CHUNK);
	if (!e || json_array_append_new(json_object_get(truth, "files"), e) != 0)
		ex_die("out of memory building the truth line");
	ex_truth_print(truth);
}

static void usage(void)
{
	ex_die("usage: pnetcdf-bytes -d DIR");
}

int main(int argc, char **argv)
{
	struct ctx c = {0};
	struct sizes s = {0};
	const char *dir = NULL;
	int opt;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
	MPI_Comm_size(MPI_COMM_WORLD, &c.size);
	ex_init("pnetcdf", c.rank);
	while ((opt = getopt(argc, argv, "d:")) != -1) {
		if (opt != 'd')
			usage();
		dir = optarg;
	}
	if (!dir || optind != argc)
		usage();
	ex_mkdir_p(dir);
	ex_join(c.path, dir, "pnetcdf.nc");
	MPI_Type_vector(2, TEMP_X, TEMP_PAD, MPI_DOUBLE, &c.rows);
	MPI_Type_vector(CUBE_HALF, 1, 2, MPI_INT, &c.every);
	MPI_Type_commit(&c.rows);
	MPI_Type_commit(&c.every);
	MPI_Info_create(&c.info);
	MPI_Info_set(c.info, "nc_ibuf_size", "0");
	MPI_Info_set(c.info, "nc_header_read_chunk_size", HEADER_CHUNK_TEXT);
	write_file(&c, &s);
	read_file(&c, &s);
	print_truth(&c, &s);
	MPI_Type_free(&c.rows);
	MPI_Type_free(&c.every);
	MPI_Info_free(&c.info);
	MPI_Finalize();
	return 0;
}
