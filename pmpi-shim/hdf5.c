/* HDF5 layer, resolved at run time: no link to libhdf5 and no HDF5 headers
 * at build time (the few types are declared here, as HDF5 1.10+ defines
 * them). Files are rows by path; each dataset is a row of its own named
 * "<file path>:<dataset path>", from its H5Dcreate or H5Dopen to its
 * H5Dclose (groups are on their file's row). Bytes of H5Dread/H5Dwrite are
 * the points of the memory selection times the memory type's size. A
 * transfer is collective when its transfer property list says
 * H5FD_MPIO_COLLECTIVE.
 *
 * Collective calls on a file opened with the MPI-IO driver on more than one
 * rank carry their number (IOP_EV_COLL), as MPI-IO's do (mpiio.c): H5Fcreate,
 * H5Fopen, H5Fclose and the collective H5Dread/H5Dwrite, counted per file
 * (by its row: the datasets of a file share its count), so the n-th is the
 * same call on every rank. The driver and the communicator's size are found
 * with local calls only (H5Pget_driver, then H5Fget_vfd_handle's MPI_File
 * and its group), never with H5Pget_fapl_mpio, whose MPI_Comm_dup is
 * collective: an extra collective on the ranks that record and not on those
 * that do not would hang the job. The size is known once the open returned,
 * so a failed create or open is not numbered.
 *
 * The real functions are found as every layer's are (shim_resolve_opt),
 * which also finds a libhdf5 loaded privately (RTLD_LOCAL, as Python loads
 * h5py's): the shim's wrappers still catch such calls, because a preloaded
 * library comes first in every lookup. The helpers the wrappers call run with
 * HDF5's automatic error printing off, so the application's stderr is never
 * changed by the shim. */
#include <pthread.h>
#include <string.h>

#include <mpi.h> /* declarations only: the PMPI functions are found at run time */

#include "shim.h"

typedef int64_t hid_t;
typedef int herr_t;
typedef int htri_t;
typedef unsigned long long hsize_t;
typedef long long hssize_t;
typedef herr_t (*H5E_auto2_t)(hid_t estack, void *client_data);

#define H5S_ALL     ((hid_t)0)
#define H5P_DEFAULT ((hid_t)0)
#define H5E_DEFAULT ((hid_t)0)
#define H5FD_MPIO_COLLECTIVE 1

/* ------------------------------------------------------------ resolution */

/* A symbol of the HDF5 library the application uses; NULL when absent. */
static void *h5sym(const char *name)
{
	return shim_resolve_opt(name);
}

#define H5_REAL(name, ret, params)                                                         \
	static ret(*real_##name) params;                                                   \
	if (SHIM_UNLIKELY(!real_##name))                                                   \
		real_##name = (ret(*) params)h5sym(#name);

#define H5_FN(name, ret, params)                                                           \
	({                                                                                 \
		static ret(*fn_) params;                                                   \
		if (SHIM_UNLIKELY(!fn_))                                                   \
			fn_ = (ret(*) params)h5sym(#name);                                 \
		fn_;                                                                       \
	})

/* ------------------------------------------------------------ handles */

#define HANDLES     4096
#define NOT_WATCHED UINT32_MAX /* a handle seen, and not to be recorded */

/* name: the handle's row (a file's, a dataset's, or NOT_WATCHED). file:
 * the row of the file it belongs to (its own for a file; 0 unknown) and
 * comm_size the ranks of that file's MPI-IO communicator when it was opened
 * (0: not the MPI-IO driver), for the numbers of collective calls. */
struct handle {
	hid_t hid;
	uint32_t name;
	uint32_t file, comm_size;
};
static struct handle handles[HANDLES];
static pthread_mutex_t handles_lock = PTHREAD_MUTEX_INITIALIZER;

static unsigned hslot(hid_t h)
{
	return (unsigned)(((uint64_t)h * 0x9e3779b97f4a7c15u) >> 52) % HANDLES;
}

static void handle_put(hid_t h, uint32_t name, uint32_t file, uint32_t comm_size)
{
	pthread_mutex_lock(&handles_lock);
	unsigned s = hslot(h);
	for (unsigned i = 0; i < HANDLES; i++) {
		unsigned k = (s + i) % HANDLES;
		if (!handles[k].name || handles[k].hid == h || handles[k].hid == -1) {
			handles[k] = (struct handle){
				.hid = h, .name = name, .file = file, .comm_size = comm_size};
			break;
		}
	}
	pthread_mutex_unlock(&handles_lock);
}

/* The row of h (0: unknown or not recording); its file's row and
 * communicator size in *file and *comm_size when given. */
static uint32_t handle_lookup(hid_t h, uint32_t *file, uint32_t *comm_size)
{
	if (atomic_load_explicit(&shim.state, memory_order_relaxed) != SHIM_ON)
		return 0;
	uint32_t name = 0;
	pthread_mutex_lock(&handles_lock);
	unsigned s = hslot(h);
	for (unsigned i = 0; i < HANDLES; i++) {
		unsigned k = (s + i) % HANDLES;
		if (!handles[k].name)
			break;
		if (handles[k].hid == h) {
			name = handles[k].name;
			if (file)
				*file = handles[k].file;
			if (comm_size)
				*comm_size = handles[k].comm_size;
			break;
		}
	}
	pthread_mutex_unlock(&handles_lock);
	return name;
}

static uint32_t handle_get(hid_t h)
{
	return handle_lookup(h, NULL, NULL);
}

/* HDF5 ids are not reused while open; a closed one is forgotten by
 * marking it with a name that matches nothing (keeps probe chains). */
static void handle_forget(hid_t h)
{
	pthread_mutex_lock(&handles_lock);
	unsigned s = hslot(h);
	for (unsigned i = 0; i < HANDLES; i++) {
		unsigned k = (s + i) % HANDLES;
		if (!handles[k].name)
			break;
		if (handles[k].hid == h) {
			handles[k].hid = -1;
			break;
		}
	}
	pthread_mutex_unlock(&handles_lock);
}

/* ------------------------------------------------------------ collective numbers */

/* A collective call's number (docs/shim.md, "Collective calls"): the
 * process's n-th collective call on the file at this layer, from 1, and the
 * ranks of its communicator. seq = 0: not numbered. */
struct h5_coll {
	uint32_t seq, size;
};
#define NO_COLL ((struct h5_coll){0})

/* Per file row: the collective calls made on it, counted across its opens
 * (as mpiio.c counts per path), and the communicator size of its latest
 * create or open, which the datasets opened then take. Every rank makes the
 * same collective calls on a file in the same order, so the n-th is the
 * same call everywhere. A file beyond the table's room is not numbered. */
static struct file_entry {
	uint32_t file, next, comm_size;
} files[HANDLES];

/* The entry of file (add: a free one for it), under handles_lock; NULL
 * when absent or full. */
static struct file_entry *file_find(uint32_t file, bool add)
{
	unsigned s = (unsigned)((file * 0x9e3779b97f4a7c15u) >> 52) % HANDLES;
	for (unsigned i = 0; i < HANDLES; i++) {
		struct file_entry *e = &files[(s + i) % HANDLES];
		if (e->file == file)
			return e;
		if (!e->file) {
			if (!add)
				return NULL;
			*e = (struct file_entry){.file = file};
			return e;
		}
	}
	return NULL;
}

/* The next number of a file, under handles_lock. */
static struct h5_coll next_seq(struct file_entry *e, uint32_t size)
{
	if (!e || size <= 1)
		return NO_COLL;
	if (++e->next == 0) /* wrapped after 2^32 calls: 0 means none */
		e->next = 1;
	return (struct h5_coll){.seq = e->next, .size = size};
}

/* Numbers a collective call on file (a communicator of size ranks). */
static struct h5_coll number(uint32_t file, uint32_t size)
{
	if (!file || size <= 1)
		return NO_COLL;
	pthread_mutex_lock(&handles_lock);
	struct h5_coll coll = next_seq(file_find(file, true), size);
	pthread_mutex_unlock(&handles_lock);
	return coll;
}

/* A create or open of file on a communicator of size ranks (0: not MPI-IO)
 * returned: numbered when size > 1; its datasets take size from now on. */
static struct h5_coll file_opened(uint32_t file, uint32_t size)
{
	pthread_mutex_lock(&handles_lock);
	struct file_entry *e = file_find(file, size > 1);
	if (e)
		e->comm_size = size;
	struct h5_coll coll = next_seq(e, size);
	pthread_mutex_unlock(&handles_lock);
	return coll;
}

/* The communicator size of file's latest create or open (0: not MPI-IO). */
static uint32_t file_comm_size(uint32_t file)
{
	if (!file)
		return 0;
	pthread_mutex_lock(&handles_lock);
	struct file_entry *e = file_find(file, false);
	uint32_t size = e ? e->comm_size : 0;
	pthread_mutex_unlock(&handles_lock);
	return size;
}

/* ------------------------------------------------------------ quiet helpers */

struct quiet {
	H5E_auto2_t func;
	void *data;
	bool ok;
};

static void quiet_on(struct quiet *q)
{
	herr_t (*get)(hid_t, H5E_auto2_t *, void **) =
		H5_FN(H5Eget_auto2, herr_t, (hid_t, H5E_auto2_t *, void **));
	herr_t (*set)(hid_t, H5E_auto2_t, void *) =
		H5_FN(H5Eset_auto2, herr_t, (hid_t, H5E_auto2_t, void *));
	q->ok = get && set && get(H5E_DEFAULT, &q->func, &q->data) >= 0 &&
		set(H5E_DEFAULT, NULL, NULL) >= 0;
}

static void quiet_off(struct quiet *q)
{
	herr_t (*set)(hid_t, H5E_auto2_t, void *) =
		H5_FN(H5Eset_auto2, herr_t, (hid_t, H5E_auto2_t, void *));
	if (q->ok)
		set(H5E_DEFAULT, q->func, q->data);
}

/* Row id of a dataset: "<absolute file path>:<dataset path>"; its file's
 * row in *file_row when given (0: unknown), even when the dataset has no
 * row. */
static uint32_t dataset_name(hid_t dset, uint32_t *file_row)
{
	ssize_t (*fname)(hid_t, char *, size_t) = H5_FN(H5Fget_name, ssize_t, (hid_t, char *, size_t));
	ssize_t (*iname)(hid_t, char *, size_t) = H5_FN(H5Iget_name, ssize_t, (hid_t, char *, size_t));
	if (file_row)
		*file_row = 0;
	if (!fname || !iname)
		return 0;
	char file[IOP_NAME_MAX], abs[IOP_NAME_MAX + 2], text[IOP_NAME_MAX + 1];
	struct quiet q;
	quiet_on(&q);
	ssize_t fl = fname(dset, file, sizeof file);
	ssize_t il = fl > 0 && fl < (ssize_t)sizeof file ? iname(dset, text, sizeof text) : -1;
	quiet_off(&q);
	if (file_row && fl > 0 && fl < (ssize_t)sizeof file)
		*file_row = shim_name_path(file);
	if (il <= 0 || il >= (ssize_t)sizeof text)
		return 0;
	size_t al = shim_abs_path(file, abs, sizeof abs);
	if (!al || al + 1 + (size_t)il > IOP_NAME_MAX)
		return 0;
	memmove(text + al + 1, text, (size_t)il + 1);
	memcpy(text, abs, al);
	text[al] = ':';
	return shim_name_text(IOP_NAME_DATASET, text);
}

/* Bytes a transfer moves: points selected in memory x memory type size. */
static uint64_t transfer_bytes(hid_t dset, hid_t mem_type, hid_t mem_space, hid_t file_space)
{
	hssize_t (*npoints)(hid_t) = H5_FN(H5Sget_select_npoints, hssize_t, (hid_t));
	size_t (*tsize)(hid_t) = H5_FN(H5Tget_size, size_t, (hid_t));
	hid_t (*get_space)(hid_t) = H5_FN(H5Dget_space, hid_t, (hid_t));
	herr_t (*sclose)(hid_t) = H5_FN(H5Sclose, herr_t, (hid_t));
	if (!npoints || !tsize || !get_space || !sclose)
		return 0;
	struct quiet q;
	quiet_on(&q);
	hid_t space = mem_space != H5S_ALL ? mem_space : file_space;
	hid_t own = space == H5S_ALL ? get_space(dset) : -1;
	hssize_t n = npoints(own >= 0 ? own : space);
	size_t size = tsize(mem_type);
	if (own >= 0)
		sclose(own);
	quiet_off(&q);
	return n > 0 ? (uint64_t)n * size : 0;
}

static bool collective(hid_t dxpl)
{
	herr_t (*get)(hid_t, int *) = H5_FN(H5Pget_dxpl_mpio, herr_t, (hid_t, int *));
	if (dxpl == H5P_DEFAULT || !get)
		return false;
	int mode = 0;
	struct quiet q;
	quiet_on(&q);
	herr_t r = get(dxpl, &mode);
	quiet_off(&q);
	return r >= 0 && mode == H5FD_MPIO_COLLECTIVE;
}

static inline bool may_record(void)
{
	if (atomic_load_explicit(&shim.state, memory_order_relaxed) != SHIM_ON)
		return false;
	struct shim_thread *t = shim_self();
	return t && !t->busy;
}

/* Is fapl's driver MPI-IO? Local calls only (H5Pget_driver peeks at the
 * list; H5FD_mpio_init registers the driver once and returns its id). */
static bool fapl_mpio(hid_t fapl)
{
	hid_t (*driver)(hid_t) = H5_FN(H5Pget_driver, hid_t, (hid_t));
	hid_t (*mpio)(void) = H5_FN(H5FD_mpio_init, hid_t, (void));
	if (fapl == H5P_DEFAULT || !driver || !mpio)
		return false;
	int e = errno;
	struct quiet q;
	quiet_on(&q);
	hid_t d = driver(fapl);
	hid_t m = d >= 0 ? mpio() : -1;
	quiet_off(&q);
	errno = e;
	return d >= 0 && d == m;
}

/* A PMPI function the helpers use, found at run time; NULL when absent. */
#define PMPI_OPT(name)                                                                     \
	({                                                                                 \
		static __typeof__(PMPI_##name) *fn_;                                       \
		if (SHIM_UNLIKELY(!fn_))                                                   \
			fn_ = (__typeof__(PMPI_##name) *)shim_resolve_opt("PMPI_" #name);  \
		fn_;                                                                       \
	})

/* Ranks of the communicator an HDF5 file opened with the MPI-IO driver was
 * opened on (0: unknown): the group of its MPI_File, which the driver hands
 * out as its VFD handle. All local: no collective of the shim's own. */
static uint32_t file_comm_ranks(hid_t fid, hid_t fapl)
{
	herr_t (*vfd)(hid_t, hid_t, void **) =
		H5_FN(H5Fget_vfd_handle, herr_t, (hid_t, hid_t, void **));
	__typeof__(PMPI_File_get_group) *get_group = PMPI_OPT(File_get_group);
	__typeof__(PMPI_Group_size) *group_size = PMPI_OPT(Group_size);
	__typeof__(PMPI_Group_free) *group_free = PMPI_OPT(Group_free);
	if (!vfd || !get_group || !group_size || !group_free)
		return 0;
	int e = errno;
	void *h = NULL;
	struct quiet q;
	quiet_on(&q);
	herr_t r = vfd(fid, fapl, &h);
	quiet_off(&q);
	int n = 0;
	MPI_Group g;
	memset(&g, 0, sizeof g); /* not MPI_GROUP_NULL: a libmpi symbol in Open MPI */
	if (r >= 0 && h && get_group(*(MPI_File *)h, &g) == MPI_SUCCESS) {
		if (group_size(g, &n) != MPI_SUCCESS || n < 0)
			n = 0;
		group_free(&g);
	}
	errno = e;
	return (uint32_t)n;
}

static void end_h5(struct shim_call *c, bool ok, uint64_t bytes, bool transfer,
		   struct h5_coll coll)
{
	struct shim_result res = {.bytes = bytes, .flags = transfer ? IOP_EV_BYTES : 0};
	if (!ok)
		res = (struct shim_result){.err = EIO, .flags = IOP_EV_ERROR};
	if (coll.seq) {
		res.coll_seq = coll.seq;
		res.coll_size = coll.size;
		res.flags |= IOP_EV_COLL;
	}
	shim_end(c, &res);
}

/* ------------------------------------------------------------ files */

/* After H5Fcreate or H5Fopen of file returned r: its handle and its
 * number, whether the call is recorded or not (every rank counts every
 * call; recorded: rec). */
static void end_file_open(struct shim_call *c, bool rec, uint32_t file, hid_t r, bool mpio,
			  hid_t fapl)
{
	struct h5_coll coll = NO_COLL;
	if (r >= 0) {
		uint32_t size = mpio ? file_comm_ranks(r, fapl) : 0;
		coll = file_opened(file, size);
		handle_put(r, file, file, size);
	}
	if (rec)
		end_h5(c, r >= 0, 0, false, coll);
}

SHIM_EXPORT hid_t H5Fcreate(const char *name, unsigned flags, hid_t fcpl, hid_t fapl);
SHIM_EXPORT hid_t H5Fcreate(const char *name, unsigned flags, hid_t fcpl, hid_t fapl)
{
	H5_REAL(H5Fcreate, hid_t, (const char *, unsigned, hid_t, hid_t));
	struct shim_call c;
	uint32_t file = may_record() ? shim_name_path(name) : 0;
	if (!file)
		return real_H5Fcreate(name, flags, fcpl, fapl);
	bool mpio = fapl_mpio(fapl);
	bool rec = shim_begin(&c, IOP_LAYER_HDF5, IOP_OP_CREATE, file);
	hid_t r = real_H5Fcreate(name, flags, fcpl, fapl);
	end_file_open(&c, rec, file, r, mpio, fapl);
	return r;
}

SHIM_EXPORT hid_t H5Fopen(const char *name, unsigned flags, hid_t fapl);
SHIM_EXPORT hid_t H5Fopen(const char *name, unsigned flags, hid_t fapl)
{
	H5_REAL(H5Fopen, hid_t, (const char *, unsigned, hid_t));
	struct shim_call c;
	uint32_t file = may_record() ? shim_name_path(name) : 0;
	if (!file)
		return real_H5Fopen(name, flags, fapl);
	bool mpio = fapl_mpio(fapl);
	bool rec = shim_begin(&c, IOP_LAYER_HDF5, IOP_OP_OPEN, file);
	hid_t r = real_H5Fopen(name, flags, fapl);
	end_file_open(&c, rec, file, r, mpio, fapl);
	return r;
}

#define H5_ID_META(fn, op, forget, params, args)                                           \
	SHIM_EXPORT herr_t fn params;                                                      \
	SHIM_EXPORT herr_t fn params                                                       \
	{                                                                                  \
		H5_REAL(fn, herr_t, params);                                               \
		struct shim_call c;                                                        \
		uint32_t name = handle_get(id);                                            \
		if (forget && name)                                                        \
			handle_forget(id);                                                 \
		if (name == NOT_WATCHED)                                                   \
			name = 0;                                                          \
		if (!name || !shim_begin(&c, IOP_LAYER_HDF5, op, name))                    \
			return real_##fn args;                                             \
		herr_t r = real_##fn args;                                                 \
		end_h5(&c, r >= 0, 0, false, NO_COLL);                                     \
		return r;                                                                  \
	}

H5_ID_META(H5Fflush, IOP_OP_SYNC, false, (hid_t id, int scope), (id, scope))
H5_ID_META(H5Dflush, IOP_OP_SYNC, false, (hid_t id), (id))
H5_ID_META(H5Dclose, IOP_OP_CLOSE, true, (hid_t id), (id))

/* H5Fclose: numbered, recorded or not, when its create or open was. */
SHIM_EXPORT herr_t H5Fclose(hid_t id);
SHIM_EXPORT herr_t H5Fclose(hid_t id)
{
	H5_REAL(H5Fclose, herr_t, (hid_t));
	struct shim_call c;
	uint32_t file = 0, size = 0;
	uint32_t name = handle_lookup(id, &file, &size);
	if (name)
		handle_forget(id);
	if (name == NOT_WATCHED)
		name = 0;
	/* a file's handle is its own file (another id given here is an error) */
	struct h5_coll coll = name && file == name ? number(file, size) : NO_COLL;
	if (!name || !shim_begin(&c, IOP_LAYER_HDF5, IOP_OP_CLOSE, name))
		return real_H5Fclose(id);
	herr_t r = real_H5Fclose(id);
	end_h5(&c, r >= 0, 0, false, coll);
	return r;
}

/* ------------------------------------------------------------ datasets, groups */

/* The file a create or open is begun on: the row of loc's file. */
static uint32_t file_of(hid_t loc)
{
	uint32_t name = handle_get(loc);
	if (name && name != NOT_WATCHED)
		return name;
	ssize_t (*fname)(hid_t, char *, size_t) = H5_FN(H5Fget_name, ssize_t, (hid_t, char *, size_t));
	char path[IOP_NAME_MAX];
	if (!fname || !may_record())
		return 0;
	struct quiet q;
	quiet_on(&q);
	ssize_t n = fname(loc, path, sizeof path);
	quiet_off(&q);
	return n > 0 && n < (ssize_t)sizeof path ? shim_name_path(path) : 0;
}

/* Ends a create or open that returned r. A dataset's whole life, from its
 * create or open to its close, is on its own row; its name is known only
 * once the call returned its id, so the call is begun on the file's row
 * (which the in-flight slot shows while it runs) and moved to the
 * dataset's here, as an open(2) is named once it returned
 * (shim_path_after). A failed call, a group, or a dataset without a name
 * stays on the file's row. */
static void end_opener(struct shim_call *c, hid_t r, bool is_dataset)
{
	int e = errno; /* the HDF5 calls naming it must not change the application's */
	uint32_t file = 0; /* the dataset's file's row, whatever loc was */
	uint32_t ds = r >= 0 && is_dataset ? dataset_name(r, &file) : 0;
	errno = e;
	if (ds) {
		handle_put(r, ds, file, file_comm_size(file));
		c->file = ds;
	}
	end_h5(c, r >= 0, 0, false, NO_COLL);
}

#define H5_OPENER(fn, op, is_dataset, params, args)                                        \
	SHIM_EXPORT hid_t fn params;                                                       \
	SHIM_EXPORT hid_t fn params                                                        \
	{                                                                                  \
		H5_REAL(fn, hid_t, params);                                                \
		struct shim_call c;                                                        \
		uint32_t file = may_record() ? file_of(loc) : 0;                           \
		if (!file || !shim_begin(&c, IOP_LAYER_HDF5, op, file))                    \
			return real_##fn args;                                             \
		hid_t r = real_##fn args;                                                  \
		end_opener(&c, r, is_dataset);                                             \
		return r;                                                                  \
	}

H5_OPENER(H5Dcreate2, IOP_OP_CREATE, true,
	  (hid_t loc, const char *name, hid_t type, hid_t space, hid_t lcpl, hid_t dcpl, hid_t dapl),
	  (loc, name, type, space, lcpl, dcpl, dapl))
H5_OPENER(H5Dcreate1, IOP_OP_CREATE, true,
	  (hid_t loc, const char *name, hid_t type, hid_t space, hid_t dcpl),
	  (loc, name, type, space, dcpl))
H5_OPENER(H5Dopen2, IOP_OP_OPEN, true, (hid_t loc, const char *name, hid_t dapl),
	  (loc, name, dapl))
H5_OPENER(H5Dopen1, IOP_OP_OPEN, true, (hid_t loc, const char *name), (loc, name))
H5_OPENER(H5Gcreate2, IOP_OP_CREATE, false,
	  (hid_t loc, const char *name, hid_t lcpl, hid_t gcpl, hid_t gapl),
	  (loc, name, lcpl, gcpl, gapl))
H5_OPENER(H5Gcreate1, IOP_OP_CREATE, false, (hid_t loc, const char *name, size_t hint),
	  (loc, name, hint))
H5_OPENER(H5Gopen2, IOP_OP_OPEN, false, (hid_t loc, const char *name, hid_t gapl),
	  (loc, name, gapl))
H5_OPENER(H5Gopen1, IOP_OP_OPEN, false, (hid_t loc, const char *name), (loc, name))

SHIM_EXPORT herr_t H5Gclose(hid_t id);
SHIM_EXPORT herr_t H5Gclose(hid_t id)
{
	H5_REAL(H5Gclose, herr_t, (hid_t));
	struct shim_call c;
	uint32_t file = may_record() ? file_of(id) : 0;
	if (!file || !shim_begin(&c, IOP_LAYER_HDF5, IOP_OP_CLOSE, file))
		return real_H5Gclose(id);
	herr_t r = real_H5Gclose(id);
	end_h5(&c, r >= 0, 0, false, NO_COLL);
	return r;
}

/* ------------------------------------------------------------ transfers */

/* Row of a dataset a transfer names (0: not recorded), with its file's
 * communicator size in *comm_size (0: not MPI-IO; set for a dataset without
 * a row too) and its file's row in *file; datasets opened by other means
 * than H5Dcreate/H5Dopen (h5py uses H5Oopen), or while the shim would not
 * record, are named on first sight. One lookup, as before numbering. */
static uint32_t dataset_row(hid_t dset, uint32_t *file, uint32_t *comm_size)
{
	*file = *comm_size = 0;
	uint32_t name = handle_lookup(dset, file, comm_size);
	if (!name) {
		int e = errno;
		name = dataset_name(dset, file);
		errno = e;
		*comm_size = file_comm_size(*file);
		handle_put(dset, name ? name : NOT_WATCHED, *file, *comm_size);
	}
	return name == NOT_WATCHED ? 0 : name;
}

#define H5_XFER(fn, op, coll_op, bufq)                                                     \
	SHIM_EXPORT herr_t fn(hid_t dset, hid_t mtype, hid_t mspace, hid_t fspace, hid_t dxpl, \
			      bufq void *buf);                                             \
	SHIM_EXPORT herr_t fn(hid_t dset, hid_t mtype, hid_t mspace, hid_t fspace, hid_t dxpl, \
			      bufq void *buf)                                              \
	{                                                                                  \
		H5_REAL(fn, herr_t, (hid_t, hid_t, hid_t, hid_t, hid_t, bufq void *));    \
		struct shim_call c;                                                        \
		uint32_t file = 0, size = 0;                                               \
		uint32_t name = may_record() ? dataset_row(dset, &file, &size) : 0;        \
		if (!name && size <= 1)                                                    \
			return real_##fn(dset, mtype, mspace, fspace, dxpl, buf);          \
		bool coll_io = collective(dxpl);                                           \
		/* numbered whether recorded or not: every rank counts every call */      \
		struct h5_coll coll = coll_io ? number(file, size) : NO_COLL;              \
		if (!name)                                                                 \
			return real_##fn(dset, mtype, mspace, fspace, dxpl, buf);          \
		uint64_t bytes = transfer_bytes(dset, mtype, mspace, fspace);              \
		if (!shim_begin(&c, IOP_LAYER_HDF5, coll_io ? coll_op : op, name))         \
			return real_##fn(dset, mtype, mspace, fspace, dxpl, buf);          \
		herr_t r = real_##fn(dset, mtype, mspace, fspace, dxpl, buf);              \
		end_h5(&c, r >= 0, bytes, true, coll);                                     \
		return r;                                                                  \
	}

H5_XFER(H5Dread, IOP_OP_READ, IOP_OP_READ_COLL, )
H5_XFER(H5Dwrite, IOP_OP_WRITE, IOP_OP_WRITE_COLL, const)
