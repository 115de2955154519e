/* mpiio-datatypes: MPI-IO bytes for every kind of datatype, as a table.
 *
 * Each case writes COUNT instances of one datatype (basic, contiguous,
 * vector, hvector, indexed, hindexed, indexed_block, struct, subarray,
 * darray, resized) to a file of its own, through one transfer form
 * (explicit offset or file pointer, with a status or MPI_STATUS_IGNORE,
 * collective, shared and ordered, nonblocking completed by each of the
 * Wait and Test families, split collective, the _c forms of MPI-4), then
 * reads them back through the same form and checks the data (both buffers
 * packed with MPI_Pack and compared). Every datatype meets every form.
 *
 * Partial cases read past the end of a file: the bytes moved are what the
 * file holds after the offset (checked against the file's size and its
 * contents), fewer than the datatype asks.
 *
 * One collective case writes and reads a file shared by all ranks through
 * a subarray view, from a vector memory type.
 *
 * Truth (examples/truth.h): per file, layer "mpiio": bytes = MPI_Type_size
 * x count for full transfers, the file's bytes for partial ones; one op
 * per transfer.
 *
 * Usage: mpiio-datatypes -d DIR */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

#include "truth.h"

/* ------------------------------------------------------------ datatypes */

struct kind {
	const char *name;
	int count;
	MPI_Datatype type;
};

static MPI_Datatype commit(MPI_Datatype t)
{
	if (MPI_Type_commit(&t) != MPI_SUCCESS)
		ex_die("MPI_Type_commit failed");
	return t;
}

static MPI_Datatype make_struct(void)
{
	/* {int a; double b[3]; char c[5];} with its natural padding */
	int lens[3] = {1, 3, 5};
	MPI_Aint disps[3] = {0, 8, 32};
	MPI_Datatype types[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
	MPI_Datatype t, r;
	MPI_Type_create_struct(3, lens, disps, types, &t);
	MPI_Type_create_resized(t, 0, 40, &r);
	MPI_Type_free(&t);
	return commit(r);
}

static MPI_Datatype make_darray(void)
{
	/* a 2x2 process grid's block of a 32x32 array of ints, as if rank 1 */
	int gsizes[2] = {32, 32}, distribs[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_BLOCK};
	int dargs[2] = {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG}, psizes[2] = {2, 2};
	MPI_Datatype t;
	MPI_Type_create_darray(4, 1, 2, gsizes, distribs, dargs, psizes, MPI_ORDER_C, MPI_INT, &t);
	return commit(t);
}

static int make_kinds(struct kind *k)
{
	int n = 0;
	MPI_Datatype t, inner;
	k[n++] = (struct kind){"basic", 4096, MPI_DOUBLE};
	MPI_Type_contiguous(131072, MPI_BYTE, &t);
	k[n++] = (struct kind){"contig_bytes", 1, commit(t)};
	MPI_Type_contiguous(16384, MPI_DOUBLE, &t);
	k[n++] = (struct kind){"contig_doubles", 1, commit(t)};
	MPI_Type_vector(64, 16, 32, MPI_INT, &t);
	k[n++] = (struct kind){"vector", 3, commit(t)};
	MPI_Type_create_hvector(10, 2, 40, MPI_DOUBLE, &t);
	k[n++] = (struct kind){"hvector", 7, commit(t)};
	int lens[4] = {3, 1, 7, 2}, disps[4] = {0, 5, 9, 20};
	MPI_Type_indexed(4, lens, disps, MPI_DOUBLE, &t);
	k[n++] = (struct kind){"indexed", 5, commit(t)};
	MPI_Aint hdisps[3] = {0, 64, 200};
	int hlens[3] = {4, 8, 2};
	MPI_Type_create_hindexed(3, hlens, hdisps, MPI_FLOAT, &t);
	k[n++] = (struct kind){"hindexed", 9, commit(t)};
	int bdisps[3] = {1, 6, 12};
	MPI_Type_create_indexed_block(3, 4, bdisps, MPI_SHORT, &t);
	k[n++] = (struct kind){"indexed_block", 11, commit(t)};
	k[n++] = (struct kind){"struct", 100, make_struct()};
	int sizes[2] = {64, 64}, sub[2] = {16, 32}, starts[2] = {8, 4};
	MPI_Type_create_subarray(2, sizes, sub, starts, MPI_ORDER_C, MPI_DOUBLE, &t);
	k[n++] = (struct kind){"subarray", 1, commit(t)};
	k[n++] = (struct kind){"darray", 2, make_darray()};
	MPI_Type_contiguous(3, MPI_INT, &inner);
	MPI_Type_create_resized(inner, 0, 20, &t);
	MPI_Type_free(&inner);
	k[n++] = (struct kind){"resized", 50, commit(t)};
	/* a vector of structs: derived of derived */
	MPI_Type_vector(4, 2, 3, k[8].type, &t);
	k[n++] = (struct kind){"vector_of_struct", 3, commit(t)};
	return n;
}

/* Bytes of a buffer holding count instances of t. */
static size_t span(MPI_Datatype t, int count)
{
	MPI_Aint lb, extent, tlb, textent;
	MPI_Type_get_extent(t, &lb, &extent);
	MPI_Type_get_true_extent(t, &tlb, &textent);
	if (lb < 0 || tlb < 0)
		ex_die("a datatype with a negative lower bound");
	return (size_t)(tlb + textent + (count > 0 ? (count - 1) : 0) * extent) + 1;
}

static uint64_t type_bytes(MPI_Datatype t, int count)
{
	MPI_Count size;
	MPI_Type_size_x(t, &size);
	return (uint64_t)size * (uint64_t)count;
}

/* The typed bytes of buf (count of t), packed: what a transfer moves. */
static char *packed(const void *buf, int count, MPI_Datatype t, int *len)
{
	int size;
	MPI_Pack_size(count, t, MPI_COMM_SELF, &size);
	char *out = calloc(1, (size_t)size + 1);
	*len = 0;
	if (!out || MPI_Pack(buf, count, t, out, size, len, MPI_COMM_SELF) != MPI_SUCCESS)
		ex_die("MPI_Pack failed");
	return out;
}

/* ------------------------------------------------------------ forms */

enum form {
	F_AT,         /* write_at / read_at, with a status */
	F_AT_IGNORE,  /* the same, MPI_STATUS_IGNORE */
	F_INDIV,      /* write / read at the individual pointer */
	F_ALL,        /* write_all / read_all */
	F_AT_ALL,     /* write_at_all / read_at_all, MPI_STATUS_IGNORE */
	F_SHARED,     /* write_shared / read_shared */
	F_ORDERED,    /* write_ordered / read_ordered */
	F_I_WAIT,     /* iwrite_at + MPI_Wait(MPI_STATUS_IGNORE) */
	F_I_TEST,     /* iwrite + MPI_Test until done, with a status */
	F_I_WAITALL,  /* iwrite_at_all + MPI_Waitall(MPI_STATUSES_IGNORE) */
	F_I_WAITANY,  /* iwrite_shared + MPI_Waitany */
	F_I_WAITSOME, /* iwrite_all + MPI_Waitsome(MPI_STATUSES_IGNORE) */
	F_I_TESTALL,  /* iwrite_at + MPI_Testall */
	F_SPLIT_AT,   /* write_at_all_begin/_end, MPI_STATUS_IGNORE */
	F_SPLIT_ALL,  /* write_all_begin/_end, with a status */
#if MPI_VERSION >= 4
	F_C_AT,    /* write_at_c / read_at_c */
	F_C_I,     /* iwrite_at_c + MPI_Wait */
	F_C_SPLIT, /* write_at_all_begin_c / _end */
#endif
	NFORMS
};

static const char *form_names[NFORMS] = {
    "at",        "at_ignore",  "indiv",     "all",      "at_all",
    "shared",    "ordered",    "i_wait",    "i_test",   "i_waitall",
    "i_waitany", "i_waitsome", "i_testall", "split_at", "split_all",
#if MPI_VERSION >= 4
    "c_at",      "c_i",        "c_split",
#endif
};

static void check(int rc, const char *what, const char *form)
{
	if (rc != MPI_SUCCESS)
		ex_die("%s (%s) failed: MPI error %d", what, form, rc);
}

/* MPI_STATUSES_IGNORE through a volatile: MPICH's is (MPI_Status *)1, and
 * gcc warns that an array argument of one status has no room. */
static MPI_Status *const volatile statuses_ignore = MPI_STATUSES_IGNORE;

/* Completes req by the form's completion call. */
static void complete(enum form f, MPI_Request *req)
{
	MPI_Status st;
	int flag = 0, index, outcount, indices[1];
	switch (f) {
	case F_I_TEST:
		while (!flag)
			check(MPI_Test(req, &flag, &st), "MPI_Test", "i_test");
		return;
	case F_I_WAITALL:
		check(MPI_Waitall(1, req, statuses_ignore), "MPI_Waitall", "i_waitall");
		return;
	case F_I_WAITANY:
		check(MPI_Waitany(1, req, &index, &st), "MPI_Waitany", "i_waitany");
		return;
	case F_I_WAITSOME:
		check(MPI_Waitsome(1, req, &outcount, indices, statuses_ignore), "MPI_Waitsome",
		      "i_waitsome");
		return;
	case F_I_TESTALL:
		while (!flag)
			check(MPI_Testall(1, req, &flag, &st), "MPI_Testall", "i_testall");
		return;
	default:
		check(MPI_Wait(req, MPI_STATUS_IGNORE), "MPI_Wait", form_names[f]);
	}
}

/* One transfer of count x t at byte 0 of fh (the default view) through
 * form f; write or read. The file pointers are at 0 when it starts. */
static void transfer(MPI_File fh, enum form f, bool write, void *buf, int count, MPI_Datatype t)
{
	MPI_Status st;
	MPI_Request req;
	const char *n = form_names[f];
#define RW(wcall, rcall) check(write ? wcall : rcall, write ? "write" : "read", n)
	switch (f) {
	case F_AT:
		RW(MPI_File_write_at(fh, 0, buf, count, t, &st),
		   MPI_File_read_at(fh, 0, buf, count, t, &st));
		break;
	case F_AT_IGNORE:
		RW(MPI_File_write_at(fh, 0, buf, count, t, MPI_STATUS_IGNORE),
		   MPI_File_read_at(fh, 0, buf, count, t, MPI_STATUS_IGNORE));
		break;
	case F_INDIV:
		RW(MPI_File_write(fh, buf, count, t, &st), MPI_File_read(fh, buf, count, t, &st));
		break;
	case F_ALL:
		RW(MPI_File_write_all(fh, buf, count, t, &st),
		   MPI_File_read_all(fh, buf, count, t, &st));
		break;
	case F_AT_ALL:
		RW(MPI_File_write_at_all(fh, 0, buf, count, t, MPI_STATUS_IGNORE),
		   MPI_File_read_at_all(fh, 0, buf, count, t, MPI_STATUS_IGNORE));
		break;
	case F_SHARED:
		RW(MPI_File_write_shared(fh, buf, count, t, &st),
		   MPI_File_read_shared(fh, buf, count, t, &st));
		break;
	case F_ORDERED:
		RW(MPI_File_write_ordered(fh, buf, count, t, MPI_STATUS_IGNORE),
		   MPI_File_read_ordered(fh, buf, count, t, MPI_STATUS_IGNORE));
		break;
	case F_I_WAIT:
	case F_I_TESTALL:
		RW(MPI_File_iwrite_at(fh, 0, buf, count, t, &req),
		   MPI_File_iread_at(fh, 0, buf, count, t, &req));
		complete(f, &req);
		break;
	case F_I_TEST:
		RW(MPI_File_iwrite(fh, buf, count, t, &req),
		   MPI_File_iread(fh, buf, count, t, &req));
		complete(f, &req);
		break;
	case F_I_WAITALL:
		RW(MPI_File_iwrite_at_all(fh, 0, buf, count, t, &req),
		   MPI_File_iread_at_all(fh, 0, buf, count, t, &req));
		complete(f, &req);
		break;
	case F_I_WAITANY:
		RW(MPI_File_iwrite_shared(fh, buf, count, t, &req),
		   MPI_File_iread_shared(fh, buf, count, t, &req));
		complete(f, &req);
		break;
	case F_I_WAITSOME:
		RW(MPI_File_iwrite_all(fh, buf, count, t, &req),
		   MPI_File_iread_all(fh, buf, count, t, &req));
		complete(f, &req);
		break;
	case F_SPLIT_AT:
		RW(MPI_File_write_at_all_begin(fh, 0, buf, count, t),
		   MPI_File_read_at_all_begin(fh, 0, buf, count, t));
		RW(MPI_File_write_at_all_end(fh, buf, MPI_STATUS_IGNORE),
		   MPI_File_read_at_all_end(fh, buf, MPI_STATUS_IGNORE));
		break;
	case F_SPLIT_ALL:
		RW(MPI_File_write_all_begin(fh, buf, count, t),
		   MPI_File_read_all_begin(fh, buf, count, t));
		RW(MPI_File_write_all_end(fh, buf, &st), MPI_File_read_all_end(fh, buf, &st));
		break;
#if MPI_VERSION >= 4
	case F_C_AT:
		RW(MPI_File_write_at_c(fh, 0, buf, count, t, &st),
		   MPI_File_read_at_c(fh, 0, buf, count, t, &st));
		break;
	case F_C_I:
		RW(MPI_File_iwrite_at_c(fh, 0, buf, count, t, &req),
		   MPI_File_iread_at_c(fh, 0, buf, count, t, &req));
		complete(f, &req);
		break;
	case F_C_SPLIT:
		RW(MPI_File_write_at_all_begin_c(fh, 0, buf, count, t),
		   MPI_File_read_at_all_begin_c(fh, 0, buf, count, t));
		RW(MPI_File_write_at_all_end(fh, buf, MPI_STATUS_IGNORE),
		   MPI_File_read_at_all_end(fh, buf, MPI_STATUS_IGNORE));
		break;
#endif
	default:
		ex_die("no form %d", (int)f);
	}
#undef RW
}

static MPI_File open_self(const char *path)
{
	MPI_File fh;
	if (MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
	                  &fh) != MPI_SUCCESS)
		ex_die("cannot open %s", path);
	return fh;
}

/* Rewinds both file pointers (the reading pass starts where writing did). */
static void rewind_pointers(MPI_File fh)
{
	check(MPI_File_seek(fh, 0, MPI_SEEK_SET), "seek", "rewind");
	check(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET), "seek_shared", "rewind");
}

/* Nonblocking forms, completed by the Wait and Test families. */
static bool nonblocking(enum form f)
{
#if MPI_VERSION >= 4
	if (f == F_C_I)
		return true;
#endif
	return f >= F_I_WAIT && f <= F_I_TESTALL;
}

/* Reads past the end of a file that MPI libraries get wrong: the status
 * claims the whole request, or the call never completes. Measured with a
 * contiguous type on a 5464-byte file read as 2 x 4096 bytes:
 *   Open MPI 4.1 (ompio, its default): read_all says 8192; every
 *     nonblocking read and both split-collective reads hang in MPI_Wait or
 *     _end (with a one-letter file name MPI_Wait crashes instead). Its
 *     ROMIO (--mca io romio321) says 8192 for nonblocking reads.
 *   MPICH 4.0: the nonblocking collectives iread_all and iread_at_all say
 *     8192.
 * With a noncontiguous memory type (vector, struct), MPICH's ROMIO says
 * the whole request for every form (12288 bytes of an 8195-byte file); the
 * shim bounds an independent read by the POSIX reads it issued, which is
 * exact for read, read_at and read_at_c (for read_shared the bound is the
 * data plus the 16 bytes of the shared file pointer's own file).
 * Every other case reads what the file holds. The shim records what the
 * status says (docs/shim.md, "MPI-IO bytes"), so those cases are left out
 * here. */
static bool partial_form(bool contiguous, enum form f)
{
	bool independent = f == F_AT || f == F_AT_IGNORE || f == F_INDIV;
#if MPI_VERSION >= 4
	independent = independent || f == F_C_AT;
#endif
	if (!contiguous)
		return independent;
#ifdef OMPI_MAJOR_VERSION
	return !nonblocking(f) && f != F_ALL && f != F_SPLIT_AT && f != F_SPLIT_ALL;
#else
	(void)nonblocking;
	return f != F_I_WAITALL && f != F_I_WAITSOME;
#endif
}

/* ------------------------------------------------------------ cases */

/* One datatype through one form: written, read back, compared. */
static void full_case(json_t *truth, const char *dir, int rank, const struct kind *k, enum form f)
{
	char name[128], path[4096];
	snprintf(name, sizeof name, "dt.%s.%s.%d", k->name, form_names[f], rank);
	ex_join(path, dir, name);
	size_t len = span(k->type, k->count);
	unsigned char *out = malloc(len), *in = calloc(1, len);
	if (!out || !in)
		ex_die("out of memory");
	for (size_t i = 0; i < len; i++)
		out[i] = (unsigned char)(i * 7 + 3 + (unsigned)f);
	MPI_File fh = open_self(path);
	transfer(fh, f, true, out, k->count, k->type);
	rewind_pointers(fh);
	transfer(fh, f, false, in, k->count, k->type);
	MPI_File_close(&fh);
	int la, lb;
	char *pa = packed(out, k->count, k->type, &la), *pb = packed(in, k->count, k->type, &lb);
	if (la != lb || memcmp(pa, pb, (size_t)la))
		ex_die("%s: data read back differs from data written", name);
	uint64_t bytes = type_bytes(k->type, k->count);
	if ((uint64_t)la != bytes)
		ex_die("%s: packed %d bytes, MPI_Type_size x count is %llu", name, la,
		       (unsigned long long)bytes);
	struct ex_io io = {
	    .write_bytes = bytes, .write_ops = 1, .read_bytes = bytes, .read_ops = 1};
	ex_truth_add(truth, path, "mpiio", &io);
	free(pa);
	free(pb);
	free(out);
	free(in);
}

/* A read past the end of a file: the file holds `size` bytes, the read
 * asks for more through datatype k; it moves what the file holds. */
static void partial_case(json_t *truth, const char *dir, int rank, const struct kind *k,
                         enum form f, int size)
{
	char name[128], path[4096];
	snprintf(name, sizeof name, "pt.%s.%s.%d", k->name, form_names[f], rank);
	ex_join(path, dir, name);
	uint64_t asked = type_bytes(k->type, k->count);
	if (asked <= (uint64_t)size)
		ex_die("%s: the case asks %llu bytes, no more than the file's %d", name,
		       (unsigned long long)asked, size);
	unsigned char *data = malloc((size_t)size);
	size_t len = span(k->type, k->count);
	unsigned char *in = calloc(1, len);
	if (!data || !in)
		ex_die("out of memory");
	for (int i = 0; i < size; i++)
		data[i] = (unsigned char)(i * 13 + 5);
	MPI_File fh = open_self(path);
	check(MPI_File_set_size(fh, 0), "set_size", name);
	check(MPI_File_write_at(fh, 0, data, size, MPI_BYTE, MPI_STATUS_IGNORE), "write", name);
	rewind_pointers(fh);
	transfer(fh, f, false, in, k->count, k->type);
	MPI_Offset on_disk;
	MPI_File_get_size(fh, &on_disk);
	MPI_File_close(&fh);
	if (on_disk != size)
		ex_die("%s: the file holds %lld bytes, %d were written", name, (long long)on_disk,
		       size);
	int lp;
	char *p = packed(in, k->count, k->type, &lp);
	if (memcmp(p, data, (size_t)size))
		ex_die("%s: the bytes read differ from the file's", name);
	struct ex_io io = {.write_bytes = (uint64_t)size,
	                   .write_ops = 1,
	                   .read_bytes = (uint64_t)size,
	                   .read_ops = 1};
	ex_truth_add(truth, path, "mpiio", &io);
	free(p);
	free(data);
	free(in);
}

/* Every rank writes its column block of a shared 2-D array of doubles
 * through a subarray view, from every other double of its buffer (a vector
 * memory type), collectively; then reads it back the same way. */
static void shared_case(json_t *truth, const char *dir, int rank, int nranks)
{
	enum { ROWS = 48, COLS = 40 };
	char path[4096];
	ex_join(path, dir, "dt.shared_subarray");
	int sizes[2] = {ROWS, COLS * nranks}, sub[2] = {ROWS, COLS}, starts[2] = {0, COLS * rank};
	MPI_Datatype filetype, memtype;
	MPI_Type_create_subarray(2, sizes, sub, starts, MPI_ORDER_C, MPI_DOUBLE, &filetype);
	filetype = commit(filetype);
	MPI_Type_vector(ROWS * COLS, 1, 2, MPI_DOUBLE, &memtype);
	memtype = commit(memtype);
	double *out = malloc(sizeof(double) * ROWS * COLS * 2),
	       *in = calloc(ROWS * COLS * 2, sizeof(double));
	if (!out || !in)
		ex_die("out of memory");
	for (int i = 0; i < ROWS * COLS * 2; i++)
		out[i] = rank * 1e6 + i;
	MPI_File fh;
	if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
	                  &fh))
		ex_die("cannot open %s", path);
	check(MPI_File_set_view(fh, 0, MPI_DOUBLE, filetype, "native", MPI_INFO_NULL), "set_view",
	      "shared");
	MPI_Status st;
	check(MPI_File_write_all(fh, out, 1, memtype, &st), "write_all", "shared");
	check(MPI_File_seek(fh, 0, MPI_SEEK_SET), "seek", "shared");
	check(MPI_File_read_all(fh, in, 1, memtype, MPI_STATUS_IGNORE), "read_all", "shared");
	MPI_File_close(&fh);
	for (int i = 0; i < ROWS * COLS * 2; i += 2)
		if (in[i] != out[i])
			ex_die("shared: double %d read back as %g, written %g", i, in[i], out[i]);
	uint64_t bytes = type_bytes(memtype, 1);
	struct ex_io io = {
	    .write_bytes = bytes, .write_ops = 1, .read_bytes = bytes, .read_ops = 1};
	ex_truth_add(truth, path, "mpiio", &io);
	MPI_Type_free(&filetype);
	MPI_Type_free(&memtype);
	free(out);
	free(in);
}

int main(int argc, char **argv)
{
	const char *dir = ".";
	int c, rank, nranks;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	ex_init("mpiio-datatypes", rank);
	while ((c = getopt(argc, argv, "d:")) != -1) {
		if (c != 'd') {
			fprintf(stderr, "usage: mpiio-datatypes [-d DIR]\n");
			MPI_Abort(MPI_COMM_WORLD, 2);
		}
		dir = optarg;
	}
	ex_mkdir_p(dir);
	json_t *truth = ex_truth_new();
	struct kind kinds[16];
	int nk = make_kinds(kinds);
	for (int k = 0; k < nk; k++)
		for (int f = 0; f < NFORMS; f++)
			full_case(truth, dir, rank, &kinds[k], (enum form)f);

	/* partial reads: whole bytes, a partial double, noncontiguous memory */
	struct kind part[4];
	MPI_Datatype t;
	MPI_Type_contiguous(4096, MPI_BYTE, &t);
	part[0] = (struct kind){"contig_bytes", 2, commit(t)};
	MPI_Type_contiguous(1000, MPI_DOUBLE, &t);
	part[1] = (struct kind){"contig_doubles", 1, commit(t)};
	part[2] = kinds[3]; /* vector of ints */
	part[3] = kinds[8]; /* struct */
	for (int k = 0; k < 4; k++)
		for (int f = 0; f < NFORMS; f++) {
			if (!partial_form(k < 2, (enum form)f))
				continue;
			uint64_t asked = type_bytes(part[k].type, part[k].count);
			partial_case(truth, dir, rank, &part[k], (enum form)f,
			             (int)(asked * 2 / 3) + 3);
		}

	shared_case(truth, dir, rank, nranks);
	ex_truth_print_gathered(truth, MPI_COMM_WORLD);
	MPI_Finalize();
	return 0;
}
