/* hdf5-layers: a parallel HDF5 program whose I/O is known at every layer,
 * for tests/hdf5-layers/h5_layers.py. The ranks form a 2-D grid
 * (MPI_Dims_create); each owns a ROWS x COLS block of two 2-D datasets of
 * DIR/layers.h5, written and read through the MPI-IO driver
 * (H5Pset_fapl_mpio) with H5FD_MPIO_COLLECTIVE transfer lists:
 *
 *   /particles      a compound {int64 id; double x, y, z; float w}, the same
 *                   type in memory and in the file (40 bytes); in memory
 *                   each block sits inside a one-cell halo, so the memory
 *                   selection is not contiguous (HDF5 hands MPI-IO a
 *                   derived datatype for it);
 *   /fields/mixed   memory {double a; char pad[8]; double b} (24 bytes),
 *                   file packed {float a; float b} (8 bytes): HDF5 converts,
 *                   and its layer moves three times what reaches the file
 *                   (HDF5 1.10 then does the transfer independently, one
 *                   MPI-IO call per row: H5D_MPIO_DATATYPE_CONVERSION).
 *
 * DIR/vlen.h5 holds /names, NSTR variable-length strings per rank. Parallel
 * HDF5 1.10 cannot write variable-length data, so rank 0 writes them all
 * with the default (sec2) driver; then every rank reads its own strings
 * through the MPI-IO driver.
 *
 * Everything read is checked. Each rank has one truth line
 * (examples/README.md), which rank 0 prints. Per file, at layer "hdf5": no
 * transfers of its own (they are its datasets'), "meta_ops", the H5F and
 * H5G calls the rank made on it, "free_bytes", H5Fget_freespace before the
 * rank closed it after writing, "via_mpiio", 1 when the rank wrote it
 * through the MPI-IO driver. An extra "datasets" list, per dataset
 * ("<file>:<dataset>"): its H5Dwrite/H5Dread calls and their bytes (points
 * selected in memory x memory type size), its H5Dcreate/H5Dopen/H5Dclose
 * calls as "meta_ops", "file_written"/"file_read", the same points in the
 * file's type (for a variable-length type, its 16-byte heap references),
 * and "vlen_written"/"vlen_read", the characters of the strings. */
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hdf5.h>
#include <mpi.h>

#include "truth.h"

struct particle {
	int64_t id;
	double x, y, z;
	float w;
};

struct mixed_mem {
	double a;
	char pad[8]; /* never reaches the file */
	double b;
};

/* A variable-length element in the dataset's own storage: a 4-byte length,
 * an 8-byte global heap collection address and a 4-byte object index (HDF5
 * file format); the data itself goes to the global heap. */
#define VLEN_REF_BYTES 16

/* Rows of the summary this program does I/O on. */
enum { ROW_LAYERS, ROW_VLEN, ROW_PARTICLES, ROW_MIXED, ROW_NAMES, NROWS };

/* What this rank did on one row: a file's own HDF5 row, or a dataset's. */
struct row {
	struct ex_io io;
	uint64_t meta_ops;                /* create, open, close calls */
	uint64_t file_written, file_read; /* raw data, in the file's type */
	uint64_t vlen_written, vlen_read; /* characters of the strings */
	int64_t free_bytes;               /* a file's: H5Fget_freespace before it was closed */
	int via_mpiio;                    /* a file's: written through the MPI-IO driver */
};

struct ctx {
	int rank, size;
	hsize_t dims[2];  /* whole datasets */
	hsize_t block[2]; /* this rank's block */
	hsize_t start[2]; /* its first row and column */
	unsigned nstr;    /* strings per rank in /names */
	char layers[PATH_MAX], vlen[PATH_MAX];
	struct row rows[NROWS];
};

/* Each row's file (vlen.h5 or layers.h5) and dataset (NULL: the file's own). */
static const int row_in_vlen[NROWS] = {0, 1, 0, 0, 1};
static const char *const row_datasets[NROWS] = {NULL, NULL, "/particles", "/fields/mixed",
                                                "/names"};

/* Dies when an HDF5 call failed (HDF5 has already printed its error stack). */
static hid_t h5_ok(hid_t rc, const char *what)
{
	if (rc < 0)
		ex_die("HDF5 %s failed", what);
	return rc;
}

/* h5_ok for a create, open or close, counted on row r. */
static hid_t meta(struct ctx *c, int r, hid_t rc, const char *what)
{
	c->rows[r].meta_ops++;
	return h5_ok(rc, what);
}

static void usage(void)
{
	fprintf(stderr, "usage: hdf5-layers [-d DIR] [-r ROWS=48] [-c COLS=64] [-n NSTR=400]\n");
}

static const char *parse_options(struct ctx *c, int argc, char **argv)
{
	const char *dir = ".";
	int o;

	c->block[0] = 48;
	c->block[1] = 64;
	c->nstr = 400;
	while ((o = getopt(argc, argv, "d:r:c:n:")) != -1) {
		if (o == 'd')
			dir = optarg;
		else if (o == 'r' || o == 'c')
			c->block[o == 'c'] = ex_parse_count(optarg, (char)o, 1, 4096);
		else if (o == 'n')
			c->nstr = (unsigned)ex_parse_count(optarg, 'n', 1, 100000);
		else {
			usage();
			ex_die("bad option");
		}
	}
	if (optind != argc) {
		usage();
		ex_die("unexpected argument '%s'", argv[optind]);
	}
	return dir;
}

static void setup_grid(struct ctx *c)
{
	int dims[2] = {0, 0};

	MPI_Dims_create(c->size, 2, dims);
	for (int d = 0; d < 2; d++)
		c->dims[d] = (hsize_t)dims[d] * c->block[d];
	c->start[0] = (hsize_t)(c->rank / dims[1]) * c->block[0];
	c->start[1] = (hsize_t)(c->rank % dims[1]) * c->block[1];
}

/* ------------------------------------------------------------ types, values */

static hid_t particle_type(void)
{
	hid_t t = h5_ok(H5Tcreate(H5T_COMPOUND, sizeof(struct particle)), "H5Tcreate");

	H5Tinsert(t, "id", offsetof(struct particle, id), H5T_NATIVE_INT64);
	H5Tinsert(t, "x", offsetof(struct particle, x), H5T_NATIVE_DOUBLE);
	H5Tinsert(t, "y", offsetof(struct particle, y), H5T_NATIVE_DOUBLE);
	H5Tinsert(t, "z", offsetof(struct particle, z), H5T_NATIVE_DOUBLE);
	h5_ok(H5Tinsert(t, "w", offsetof(struct particle, w), H5T_NATIVE_FLOAT), "H5Tinsert");
	return t;
}

/* The memory type of /fields/mixed (file = 0) or its packed file type. */
static hid_t mixed_type(int file)
{
	hid_t t;

	if (!file) {
		t = h5_ok(H5Tcreate(H5T_COMPOUND, sizeof(struct mixed_mem)), "H5Tcreate");
		H5Tinsert(t, "a", offsetof(struct mixed_mem, a), H5T_NATIVE_DOUBLE);
		h5_ok(H5Tinsert(t, "b", offsetof(struct mixed_mem, b), H5T_NATIVE_DOUBLE),
		      "H5Tinsert");
		return t;
	}
	t = h5_ok(H5Tcreate(H5T_COMPOUND, 8), "H5Tcreate");
	H5Tinsert(t, "a", 0, H5T_IEEE_F32LE);
	h5_ok(H5Tinsert(t, "b", 4, H5T_IEEE_F32LE), "H5Tinsert");
	return t;
}

static struct particle particle_at(const struct ctx *c, hsize_t gy, hsize_t gx)
{
	int64_t id = (int64_t)(gy * c->dims[1] + gx);

	return (struct particle){.id = id,
	                         .x = (double)gy + 0.25,
	                         .y = (double)gx + 0.5,
	                         .z = (double)id * 0.125,
	                         .w = (float)c->rank + 0.5f};
}

/* Values exactly representable as floats, so /fields/mixed reads back equal. */
static struct mixed_mem mixed_at(const struct ctx *c, hsize_t gy, hsize_t gx)
{
	struct mixed_mem m = {.a = (double)(gy * c->dims[1] + gx) * 0.5, .b = -(double)gx};

	memset(m.pad, 0x5a, sizeof m.pad);
	return m;
}

/* Room for a string of /names: name_len() is at most 61, and its NUL. */
#define NAME_CAP 62

/* Characters of string g of /names (without its NUL). */
static size_t name_len(uint64_t g)
{
	return 1 + (size_t)(g * 7 % 61);
}

static void name_fill(char *s, uint64_t g)
{
	size_t n = name_len(g);

	for (size_t k = 0; k < n; k++)
		s[k] = (char)('a' + (g + k) % 26);
	s[n] = '\0';
}

/* ------------------------------------------------------------ spaces, lists */

/* The whole 2-D dataset with this rank's block selected. */
static hid_t file_space(const struct ctx *c)
{
	hid_t s = h5_ok(H5Screate_simple(2, c->dims, NULL), "H5Screate_simple");

	h5_ok(H5Sselect_hyperslab(s, H5S_SELECT_SET, c->start, NULL, c->block, NULL),
	      "H5Sselect_hyperslab");
	return s;
}

/* The block in memory, inside a halo of `halo` cells on every side. */
static hid_t mem_space(const struct ctx *c, hsize_t halo)
{
	hsize_t dims[2] = {c->block[0] + 2 * halo, c->block[1] + 2 * halo};
	hsize_t start[2] = {halo, halo};
	hid_t s = h5_ok(H5Screate_simple(2, dims, NULL), "H5Screate_simple");

	h5_ok(H5Sselect_hyperslab(s, H5S_SELECT_SET, start, NULL, c->block, NULL),
	      "H5Sselect_hyperslab");
	return s;
}

static hid_t collective_dxpl(void)
{
	hid_t dxpl = h5_ok(H5Pcreate(H5P_DATASET_XFER), "H5Pcreate");

	h5_ok(H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE), "H5Pset_dxpl_mpio");
	return dxpl;
}

/* A file through the MPI-IO driver, with ROMIO's data sieving off, so that
 * what MPI-IO is asked to move is what reaches POSIX (Open MPI's ompio is
 * told the same by the test's environment). */
static hid_t open_parallel(struct ctx *c, int r, const char *path, int create)
{
	hid_t fapl = h5_ok(H5Pcreate(H5P_FILE_ACCESS), "H5Pcreate");
	MPI_Info info;
	hid_t file;

	MPI_Info_create(&info);
	MPI_Info_set(info, "romio_ds_write", "disable");
	MPI_Info_set(info, "romio_ds_read", "disable");
	h5_ok(H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, info), "H5Pset_fapl_mpio");
	file = create ? H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)
	              : H5Fopen(path, H5F_ACC_RDONLY, fapl);
	meta(c, r, file, create ? "H5Fcreate" : "H5Fopen");
	c->rows[r].via_mpiio |= create;
	H5Pclose(fapl);
	MPI_Info_free(&info);
	return file;
}

/* Counts one transfer of `points` elements on row r: mem_size bytes each
 * in memory (what the HDF5 layer moves), file_size in the file. */
static void count_xfer(struct ctx *c, int r, int write, hsize_t points, size_t mem_size,
                       size_t file_size)
{
	struct row *w = &c->rows[r];

	if (write) {
		w->io.write_ops++;
		w->io.write_bytes += points * mem_size;
		w->file_written += points * file_size;
	} else {
		w->io.read_ops++;
		w->io.read_bytes += points * mem_size;
		w->file_read += points * file_size;
	}
}

/* Closes a file, having noted the space in it that HDF5 keeps free: never
 * written, so POSIX writes need not cover it (the unused tail of its
 * metadata block). */
static void close_file(struct ctx *c, int r, hid_t file, int written)
{
	if (written)
		c->rows[r].free_bytes = h5_ok(H5Fget_freespace(file), "H5Fget_freespace");
	meta(c, r, H5Fclose(file), "H5Fclose");
}

/* ------------------------------------------------------------ layers.h5 */

/* The block read back, in its halo (which must be as it was: id -1). */
static void particles_check(const struct ctx *c, const struct particle *buf)
{
	hsize_t rows = c->block[0], cols = c->block[1], width = cols + 2;

	for (hsize_t y = 0; y < rows + 2; y++)
		for (hsize_t x = 0; x < width; x++) {
			const struct particle *p = &buf[y * width + x];
			struct particle want = {.id = -1};
			if (y && x && y <= rows && x <= cols)
				want = particle_at(c, c->start[0] + y - 1, c->start[1] + x - 1);
			if (p->id != want.id || p->x != want.x || p->y != want.y ||
			    p->z != want.z || p->w != want.w)
				ex_die("particles: wrong element at (%llu, %llu) of the block",
				       (unsigned long long)y, (unsigned long long)x);
		}
}

/* Writes (or reads back and checks) this rank's block of /particles. */
static void particles_io(struct ctx *c, hid_t file, hid_t dxpl, int write)
{
	hsize_t rows = c->block[0], cols = c->block[1], width = cols + 2;
	struct particle *buf = calloc((rows + 2) * width, sizeof *buf);
	hid_t type = particle_type(), fs = file_space(c), ms = mem_space(c, 1), dset;

	if (!buf)
		ex_die("out of memory");
	for (hsize_t i = 0; i < (rows + 2) * width; i++)
		buf[i].id = -1; /* the halo: HDF5 must leave it alone */
	if (write) {
		for (hsize_t y = 0; y < rows; y++)
			for (hsize_t x = 0; x < cols; x++)
				buf[(y + 1) * width + x + 1] =
				    particle_at(c, c->start[0] + y, c->start[1] + x);
		dset =
		    H5Dcreate2(file, "particles", type, fs, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	} else {
		dset = H5Dopen2(file, "particles", H5P_DEFAULT);
	}
	meta(c, ROW_PARTICLES, dset, "H5Dcreate2/H5Dopen2 particles");
	h5_ok(write ? H5Dwrite(dset, type, ms, fs, dxpl, buf)
	            : H5Dread(dset, type, ms, fs, dxpl, buf),
	      "H5Dwrite/H5Dread particles");
	count_xfer(c, ROW_PARTICLES, write, rows * cols, sizeof *buf, H5Tget_size(type));
	meta(c, ROW_PARTICLES, H5Dclose(dset), "H5Dclose particles");
	if (!write)
		particles_check(c, buf);
	H5Tclose(type), H5Sclose(fs), H5Sclose(ms);
	free(buf);
}

/* Writes (or reads back and checks) this rank's block of /fields/mixed:
 * memory doubles with padding, the file packed floats. */
static void mixed_io(struct ctx *c, hid_t group, hid_t dxpl, int write)
{
	hsize_t rows = c->block[0], cols = c->block[1], n = rows * cols;
	struct mixed_mem *buf = calloc(n, sizeof *buf);
	hid_t mtype = mixed_type(0), ftype = mixed_type(1), fs = file_space(c);
	hid_t ms = mem_space(c, 0), dset;

	if (!buf)
		ex_die("out of memory");
	for (hsize_t i = 0; write && i < n; i++)
		buf[i] = mixed_at(c, c->start[0] + i / cols, c->start[1] + i % cols);
	dset = write ? H5Dcreate2(group, "mixed", ftype, fs, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)
	             : H5Dopen2(group, "mixed", H5P_DEFAULT);
	meta(c, ROW_MIXED, dset, "H5Dcreate2/H5Dopen2 mixed");
	h5_ok(write ? H5Dwrite(dset, mtype, ms, fs, dxpl, buf)
	            : H5Dread(dset, mtype, ms, fs, dxpl, buf),
	      "H5Dwrite/H5Dread mixed");
	count_xfer(c, ROW_MIXED, write, n, sizeof *buf, H5Tget_size(ftype));
	meta(c, ROW_MIXED, H5Dclose(dset), "H5Dclose mixed");
	for (hsize_t i = 0; !write && i < n; i++) {
		struct mixed_mem want = mixed_at(c, c->start[0] + i / cols, c->start[1] + i % cols);
		if (buf[i].a != want.a || buf[i].b != want.b)
			ex_die("mixed: wrong element %llu of the block", (unsigned long long)i);
	}
	H5Tclose(mtype), H5Tclose(ftype), H5Sclose(fs), H5Sclose(ms);
	free(buf);
}

static void layers_io(struct ctx *c, int write)
{
	hid_t file = open_parallel(c, ROW_LAYERS, c->layers, write), dxpl = collective_dxpl();
	hid_t group;

	particles_io(c, file, dxpl, write);
	group = write ? H5Gcreate2(file, "fields", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)
	              : H5Gopen2(file, "fields", H5P_DEFAULT);
	meta(c, ROW_LAYERS, group, "H5Gcreate2/H5Gopen2");
	mixed_io(c, group, dxpl, write);
	meta(c, ROW_LAYERS, H5Gclose(group), "H5Gclose");
	H5Pclose(dxpl);
	close_file(c, ROW_LAYERS, file, write);
}

/* ------------------------------------------------------------ vlen.h5 */

static hid_t string_type(void)
{
	hid_t t = h5_ok(H5Tcopy(H5T_C_S1), "H5Tcopy");

	h5_ok(H5Tset_size(t, H5T_VARIABLE), "H5Tset_size");
	return t;
}

/* Rank 0 writes every rank's strings, serially: parallel HDF5 1.10 refuses
 * to write variable-length data ("Parallel IO does not support writing VL
 * ... datatypes yet"). */
static void vlen_write(struct ctx *c)
{
	hsize_t n = (hsize_t)c->size * c->nstr;
	char **ptrs = malloc(n * sizeof *ptrs), *text = malloc(n * NAME_CAP);
	hid_t type = string_type(), space = h5_ok(H5Screate_simple(1, &n, NULL), "H5Screate");

	if (!ptrs || !text)
		ex_die("out of memory");
	for (hsize_t g = 0; g < n; g++) {
		ptrs[g] = text + g * NAME_CAP;
		name_fill(ptrs[g], g);
		c->rows[ROW_NAMES].vlen_written += name_len(g);
	}
	hid_t file = meta(c, ROW_VLEN, H5Fcreate(c->vlen, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT),
	                  "H5Fcreate vlen");
	hid_t dset =
	    meta(c, ROW_NAMES,
	         H5Dcreate2(file, "names", type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
	         "H5Dcreate2 names");
	h5_ok(H5Dwrite(dset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, ptrs), "H5Dwrite names");
	count_xfer(c, ROW_NAMES, 1, n, H5Tget_size(type), VLEN_REF_BYTES);
	meta(c, ROW_NAMES, H5Dclose(dset), "H5Dclose names");
	close_file(c, ROW_VLEN, file, 1);
	H5Tclose(type), H5Sclose(space);
	free(ptrs), free(text);
}

/* Every rank reads its own strings back through the MPI-IO driver. */
static void vlen_read(struct ctx *c)
{
	hsize_t n = (hsize_t)c->size * c->nstr, first = (hsize_t)c->rank * c->nstr, count = c->nstr;
	char **ptrs = calloc(count, sizeof *ptrs), want[NAME_CAP];
	hid_t type = string_type(), fs = h5_ok(H5Screate_simple(1, &n, NULL), "H5Screate");
	hid_t ms = h5_ok(H5Screate_simple(1, &count, NULL), "H5Screate");

	if (!ptrs)
		ex_die("out of memory");
	h5_ok(H5Sselect_hyperslab(fs, H5S_SELECT_SET, &first, NULL, &count, NULL), "H5Sselect");
	hid_t file = open_parallel(c, ROW_VLEN, c->vlen, 0);
	hid_t dset = meta(c, ROW_NAMES, H5Dopen2(file, "names", H5P_DEFAULT), "H5Dopen2 names");
	h5_ok(H5Dread(dset, type, ms, fs, H5P_DEFAULT, ptrs), "H5Dread names");
	count_xfer(c, ROW_NAMES, 0, count, H5Tget_size(type), VLEN_REF_BYTES);
	for (hsize_t i = 0; i < count; i++) {
		name_fill(want, first + i);
		if (!ptrs[i] || strcmp(ptrs[i], want) != 0)
			ex_die("names: wrong string %llu", (unsigned long long)(first + i));
		c->rows[ROW_NAMES].vlen_read += strlen(ptrs[i]);
	}
	h5_ok(H5Dvlen_reclaim(type, ms, H5P_DEFAULT, ptrs), "H5Dvlen_reclaim");
	meta(c, ROW_NAMES, H5Dclose(dset), "H5Dclose names");
	close_file(c, ROW_VLEN, file, 0);
	H5Tclose(type), H5Sclose(fs), H5Sclose(ms);
	free(ptrs);
}

/* ------------------------------------------------------------ truth */

/* A file's own row: the standard truth entry, with its H5F/H5G calls and
 * free space. */
static void truth_file(json_t *truth, const char *path, const struct row *w)
{
	ex_truth_add(truth, path, "hdf5", &w->io);
	json_t *files = json_object_get(truth, "files");
	json_t *entry = json_array_get(files, json_array_size(files) - 1);
	json_object_set_new(entry, "meta_ops", json_integer((json_int_t)w->meta_ops));
	json_object_set_new(entry, "free_bytes", json_integer((json_int_t)w->free_bytes));
	json_object_set_new(entry, "via_mpiio", json_integer(w->via_mpiio));
}

static json_t *truth_dataset(const char *path, const char *dataset, const struct row *w)
{
	char abs[PATH_MAX], name[PATH_MAX + 64];

	if (!realpath(path, abs))
		ex_die("realpath %s failed", path);
	snprintf(name, sizeof name, "%s:%s", abs, dataset);
	json_t *o =
	    json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:I}", "path", name, "layer", "hdf5",
	              "write_bytes", (json_int_t)w->io.write_bytes, "write_ops",
	              (json_int_t)w->io.write_ops, "read_bytes", (json_int_t)w->io.read_bytes,
	              "read_ops", (json_int_t)w->io.read_ops, "meta_ops", (json_int_t)w->meta_ops);
	json_t *more =
	    json_pack("{s:I, s:I, s:I, s:I}", "file_written", (json_int_t)w->file_written,
	              "file_read", (json_int_t)w->file_read, "vlen_written",
	              (json_int_t)w->vlen_written, "vlen_read", (json_int_t)w->vlen_read);
	if (!o || !more || json_object_update(o, more) != 0)
		ex_die("out of memory building the truth line");
	json_decref(more);
	return o;
}

static void print_truth(const struct ctx *c)
{
	json_t *truth = ex_truth_new(), *datasets = json_array();

	for (int r = 0; r < NROWS; r++) {
		const struct row *w = &c->rows[r];
		const char *path = row_in_vlen[r] ? c->vlen : c->layers;
		if (!w->meta_ops && !w->io.read_ops && !w->io.write_ops)
			continue;
		if (!row_datasets[r])
			truth_file(truth, path, w);
		else
			json_array_append_new(datasets, truth_dataset(path, row_datasets[r], w));
	}
	json_object_set_new(truth, "datasets", datasets);
	/* over 1 KiB: Open MPI's mpirun forwards stdout in pieces of 1024 bytes,
	 * and two ranks' lines came out interleaved */
	ex_truth_print_gathered(truth, MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
	struct ctx c = {0};

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
	MPI_Comm_size(MPI_COMM_WORLD, &c.size);
	ex_init("hdf5-layers", c.rank);
	const char *dir = parse_options(&c, argc, argv);
	setup_grid(&c);
	ex_mkdir_p(dir);
	ex_join(c.layers, dir, "layers.h5");
	ex_join(c.vlen, dir, "vlen.h5");

	layers_io(&c, 1);
	if (c.rank == 0)
		vlen_write(&c);
	MPI_Barrier(MPI_COMM_WORLD);
	layers_io(&c, 0);
	vlen_read(&c);

	print_truth(&c);
	MPI_Finalize();
	return 0;
}
