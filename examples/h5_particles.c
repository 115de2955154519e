/* h5-particles: particle output through parallel HDF5, shaped like VPIC-IO
 * (write) and BD-CATS-IO (read). Each rank holds P particles with 8 float
 * properties (x, y, z, px, py, pz, id1, id2). For each of STEPS time steps
 * the ranks write group /step_<s> of DIR/particles.h5 with one 1-D dataset
 * per property, each rank its contiguous hyperslab (offset rank * P),
 * through the MPI-IO driver (H5Pset_fapl_mpio) with collective transfers
 * (H5Pset_dxpl_mpio COLLECTIVE). The file is closed and reopened, and each
 * rank reads its part of every dataset back and checks it.
 *
 * Truth: one hdf5 entry; ops = H5Dwrite / H5Dread calls, bytes = points * 4
 * per call. The file also holds HDF5 metadata, so it is larger than the sum
 * of all ranks' write_bytes. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <hdf5.h>
#include <mpi.h>

#include "truth.h"

#define NPROPS 8

static const char *const prop_names[NPROPS] = {"x", "y", "z", "px", "py", "pz", "id1", "id2"};

struct options {
	const char *dir;
	hsize_t particles; /* per rank */
	int steps;
};

/* What every dataset access needs: the rank's slab and transfer property. */
struct slab {
	hid_t filespace; /* whole dataset, with this rank's hyperslab selected */
	hid_t memspace;
	hid_t dxpl;
	hsize_t offset;
};

static void usage(void)
{
	fprintf(stderr, "usage: h5-particles [-d DIR] [-p PARTICLES] [-i STEPS]\n");
}

static struct options parse_options(int argc, char **argv)
{
	struct options o = {.dir = ".", .particles = 4096, .steps = 1};
	int c;

	while ((c = getopt(argc, argv, "d:p:i:")) != -1) {
		switch (c) {
		case 'd':
			o.dir = optarg;
			break;
		case 'p':
			o.particles = ex_parse_count(optarg, 'p', 1, 1u << 28);
			break;
		case 'i':
			o.steps = (int)ex_parse_count(optarg, 'i', 1, 10000);
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

/* Dies when an HDF5 call failed (HDF5 has already printed its error stack). */
static hid_t h5_ok(hid_t rc, const char *what)
{
	if (rc < 0)
		ex_die("HDF5 %s failed", what);
	return rc;
}

static float value(int step, int prop, hsize_t global_index)
{
	return (float)(global_index % 1000003) * 0.5f + (float)(prop * 10 + step);
}

static struct slab make_slab(const struct options *o, int rank, int size)
{
	struct slab s = {.offset = (hsize_t)rank * o->particles};
	hsize_t total = (hsize_t)size * o->particles, count = o->particles;

	s.filespace = h5_ok(H5Screate_simple(1, &total, NULL), "H5Screate_simple");
	s.memspace = h5_ok(H5Screate_simple(1, &count, NULL), "H5Screate_simple");
	h5_ok(H5Sselect_hyperslab(s.filespace, H5S_SELECT_SET, &s.offset, NULL, &count, NULL),
	      "H5Sselect_hyperslab");
	s.dxpl = h5_ok(H5Pcreate(H5P_DATASET_XFER), "H5Pcreate");
	h5_ok(H5Pset_dxpl_mpio(s.dxpl, H5FD_MPIO_COLLECTIVE), "H5Pset_dxpl_mpio");
	return s;
}

static hid_t open_file(const char *path, int create)
{
	hid_t fapl = h5_ok(H5Pcreate(H5P_FILE_ACCESS), "H5Pcreate");
	hid_t file;

	h5_ok(H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL), "H5Pset_fapl_mpio");
	file = create ? H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)
	              : H5Fopen(path, H5F_ACC_RDONLY, fapl);
	h5_ok(file, create ? "H5Fcreate" : "H5Fopen");
	H5Pclose(fapl);
	return file;
}

static void write_step(hid_t file, const struct slab *s, const struct options *o, int step,
                       float *buf, struct ex_io *io)
{
	char name[32];
	hid_t group;

	snprintf(name, sizeof name, "step_%d", step);
	group = h5_ok(H5Gcreate2(file, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "H5Gcreate");
	for (int p = 0; p < NPROPS; p++) {
		hid_t dset = h5_ok(H5Dcreate2(group, prop_names[p], H5T_NATIVE_FLOAT, s->filespace,
		                              H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
		                   "H5Dcreate");
		for (hsize_t i = 0; i < o->particles; i++)
			buf[i] = value(step, p, s->offset + i);
		h5_ok(H5Dwrite(dset, H5T_NATIVE_FLOAT, s->memspace, s->filespace, s->dxpl, buf),
		      "H5Dwrite");
		io->write_ops++;
		io->write_bytes += o->particles * sizeof(float);
		h5_ok(H5Dclose(dset), "H5Dclose");
	}
	h5_ok(H5Gclose(group), "H5Gclose");
}

static void read_step(hid_t file, const struct slab *s, const struct options *o, int step,
                      float *buf, struct ex_io *io)
{
	char name[64];

	for (int p = 0; p < NPROPS; p++) {
		snprintf(name, sizeof name, "step_%d/%s", step, prop_names[p]);
		hid_t dset = h5_ok(H5Dopen2(file, name, H5P_DEFAULT), "H5Dopen");
		h5_ok(H5Dread(dset, H5T_NATIVE_FLOAT, s->memspace, s->filespace, s->dxpl, buf),
		      "H5Dread");
		io->read_ops++;
		io->read_bytes += o->particles * sizeof(float);
		h5_ok(H5Dclose(dset), "H5Dclose");
		for (hsize_t i = 0; i < o->particles; i++)
			if (buf[i] != value(step, p, s->offset + i))
				ex_die("%s: wrong value at particle %llu", name,
				       (unsigned long long)(s->offset + i));
	}
}

int main(int argc, char **argv)
{
	char path[PATH_MAX];
	struct ex_io io = {0};
	int rank, size;
	hid_t file;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	ex_init("h5-particles", rank);
	struct options o = parse_options(argc, argv);
	struct slab s = make_slab(&o, rank, size);
	float *buf = malloc(o.particles * sizeof(float));

	if (!buf)
		ex_die("out of memory");
	ex_mkdir_p(o.dir);
	ex_join(path, o.dir, "particles.h5");

	file = open_file(path, 1);
	for (int step = 0; step < o.steps; step++)
		write_step(file, &s, &o, step, buf, &io);
	h5_ok(H5Fclose(file), "H5Fclose");

	file = open_file(path, 0);
	for (int step = 0; step < o.steps; step++)
		read_step(file, &s, &o, step, buf, &io);
	h5_ok(H5Fclose(file), "H5Fclose");

	json_t *truth = ex_truth_new();
	ex_truth_add(truth, path, "hdf5", &io);
	ex_truth_print(truth);
	H5Sclose(s.filespace);
	H5Sclose(s.memspace);
	H5Pclose(s.dxpl);
	free(buf);
	MPI_Finalize();
	return 0;
}
