/* MPI-IO layer, through PMPI. Each wrapper is exported under its MPI_ and
 * its PMPI_ name (Fortran bindings of some MPIs call PMPI_ directly) and
 * calls the library's PMPI_ function found with dlsym(RTLD_NEXT), so the
 * shim needs no link to libmpi and works in programs without MPI.
 *
 * Bytes are count x datatype size (elements actually moved when a status
 * says so). Offsets are in bytes from the start of the file for the
 * explicit-offset and individual-pointer forms; shared-pointer forms carry
 * none. The POSIX calls an MPI-IO call issues are its children (shim.h).
 * Nonblocking calls are timed from post to completion in the MPI_Wait and
 * MPI_Test families, and their site is where they were posted;
 * split collectives from _begin to _end. A failed MPI call is recorded with
 * err = EIO; errno is never touched. */
#include <mpi.h>
#include <pthread.h>
#include <string.h>

#include "sender_api.h"
#include "shim.h"

#define REAL_PMPI(name)                                                                     \
	static __typeof__(MPI_##name) *real_##name;                                        \
	if (SHIM_UNLIKELY(!real_##name))                                                   \
	real_##name = (__typeof__(MPI_##name) *)shim_resolve("PMPI_" #name)

/* A PMPI function the wrappers use as a helper, found at run time too. */
#define PMPI_FN(name)                                                                      \
	({                                                                                 \
		static __typeof__(PMPI_##name) *fn_;                                       \
		if (SHIM_UNLIKELY(!fn_))                                                   \
			fn_ = (__typeof__(PMPI_##name) *)shim_resolve("PMPI_" #name);      \
		fn_;                                                                       \
	})

/* Defines MPI_name and exports PMPI_name as the same function. */
#define MPI_WRAP(name, params)                                                             \
	int PMPI_##name params __attribute__((alias("MPI_" #name), visibility("default"))); \
	SHIM_EXPORT int MPI_##name params

/* ------------------------------------------------------------ handle tables */

#define HANDLES 4096 /* open files and pending requests tracked at once */

struct fh_entry {
	MPI_File fh;
	uint32_t file;
	/* a split collective in progress */
	uint64_t split_t0, split_bytes;
	uint32_t split_site;
	uint8_t split_op;
};

struct req_entry {
	MPI_Request req;
	uint64_t t0, bytes, offset;
	uint32_t file, site;
	uint8_t op, used, has_offset;
};

static struct fh_entry fhs[HANDLES];
static struct req_entry reqs[HANDLES];
static _Atomic unsigned n_reqs;
static pthread_mutex_t tables = PTHREAD_MUTEX_INITIALIZER;

static unsigned slot_of(const void *key, size_t len)
{
	uint64_t h = 0;
	memcpy(&h, key, len < sizeof h ? len : sizeof h);
	return (unsigned)((h * 0x9e3779b97f4a7c15u) >> 52) % HANDLES;
}

/* The entry of fh (add: a free one for it); NULL when absent or full. */
static struct fh_entry *fh_find(MPI_File fh, bool add)
{
	unsigned s = slot_of(&fh, sizeof fh);
	for (unsigned i = 0; i < HANDLES; i++) {
		struct fh_entry *e = &fhs[(s + i) % HANDLES];
		if (e->file && e->fh == fh)
			return e;
		if (!e->file)
			return add ? e : NULL;
	}
	return NULL;
}

static uint32_t fh_file(MPI_File fh)
{
	if (atomic_load_explicit(&shim.state, memory_order_relaxed) != SHIM_ON)
		return 0;
	pthread_mutex_lock(&tables);
	struct fh_entry *e = fh_find(fh, false);
	uint32_t file = e ? e->file : 0;
	pthread_mutex_unlock(&tables);
	return file;
}

static void fh_remove(MPI_File fh)
{
	pthread_mutex_lock(&tables);
	struct fh_entry *e = fh_find(fh, false);
	if (e) {
		/* backward-shift deletion keeps probe chains intact */
		unsigned i = (unsigned)(e - fhs);
		for (;;) {
			fhs[i].file = 0;
			unsigned j = i;
			for (;;) {
				j = (j + 1) % HANDLES;
				if (!fhs[j].file)
					goto out;
				unsigned home = slot_of(&fhs[j].fh, sizeof fhs[j].fh);
				if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j))
					break;
			}
			fhs[i] = fhs[j];
			i = j;
		}
	}
out:
	pthread_mutex_unlock(&tables);
}

static uint64_t type_bytes(MPI_Datatype type, MPI_Count count)
{
	MPI_Count size = 0;
	if (PMPI_FN(Type_size_x)(type, &size) != MPI_SUCCESS || size < 0 || count < 0)
		return 0;
	return (uint64_t)size * (uint64_t)count;
}

/* Bytes moved: what the status says when there is one, else what was asked. */
static uint64_t moved(MPI_Status *st, MPI_Datatype type, MPI_Count count)
{
	MPI_Count elements;
	if (st != MPI_STATUS_IGNORE && PMPI_FN(Get_elements_x)(st, type, &elements) == MPI_SUCCESS &&
	    elements != MPI_UNDEFINED)
		return type_bytes(type, elements);
	return type_bytes(type, count);
}

static uint64_t byte_offset(MPI_File fh, MPI_Offset off)
{
	MPI_Offset disp = 0;
	return PMPI_FN(File_get_byte_offset)(fh, off, &disp) == MPI_SUCCESS && disp >= 0 ? (uint64_t)disp : 0;
}

static uint64_t position(MPI_File fh)
{
	MPI_Offset off = 0;
	return PMPI_FN(File_get_position)(fh, &off) == MPI_SUCCESS ? byte_offset(fh, off) : 0;
}

static void end_mpi(struct shim_call *c, int rc, uint64_t bytes, uint64_t offset, bool has_offset)
{
	struct shim_result res = {.bytes = bytes, .offset = offset,
				  .flags = IOP_EV_BYTES | (has_offset ? IOP_EV_OFFSET : 0)};
	if (rc != MPI_SUCCESS)
		res = (struct shim_result){.err = EIO, .flags = IOP_EV_ERROR};
	shim_end(c, &res);
}

static void end_mpi_meta(struct shim_call *c, int rc)
{
	struct shim_result res = {.err = rc == MPI_SUCCESS ? 0 : EIO,
				  .flags = rc == MPI_SUCCESS ? 0 : IOP_EV_ERROR};
	shim_end(c, &res);
}

/* ------------------------------------------------------------ lifecycle */

/* MPI_COMM_WORLD without a link-time reference: in Open MPI it is the
 * address of a data symbol of libmpi, in MPICH a constant. RTLD_DEFAULT,
 * not RTLD_NEXT: an executable linked to libmpi holds a copy-relocated
 * ompi_mpi_comm_world that everyone uses, and libmpi's own is stale. */
static MPI_Comm comm_world(void)
{
#ifdef OMPI_MAJOR_VERSION
	return (MPI_Comm)dlsym(RTLD_DEFAULT, "ompi_mpi_comm_world");
#else
	return MPI_COMM_WORLD;
#endif
}

static void learn_rank(void)
{
	int rank;
	MPI_Comm world = comm_world();
	if (world && PMPI_FN(Comm_rank)(world, &rank) == MPI_SUCCESS && rank >= 0)
		shim_set_rank((uint32_t)rank);
}

/* The MPI runtime's own I/O during MPI_Init and MPI_Finalize (session
 * directories, shared-memory segments, its configuration files) is not the
 * application's: the thread passes through meanwhile. */
static int quiet_begin(void)
{
	struct shim_thread *t = shim.state == SHIM_ON ? shim_self() : NULL;
	int was = t ? t->busy : 0;
	if (t)
		t->busy = 1;
	return was;
}

static void quiet_end(int was)
{
	struct shim_thread *t = shim.state == SHIM_ON ? shim_self() : NULL;
	if (t)
		t->busy = was;
}

MPI_WRAP(Init, (int *argc, char ***argv))
{
	REAL_PMPI(Init);
	int was = quiet_begin();
	int r = real_Init(argc, argv);
	quiet_end(was);
	if (r == MPI_SUCCESS)
		learn_rank();
	return r;
}

MPI_WRAP(Init_thread, (int *argc, char ***argv, int required, int *provided))
{
	REAL_PMPI(Init_thread);
	int was = quiet_begin();
	int r = real_Init_thread(argc, argv, required, provided);
	quiet_end(was);
	if (r == MPI_SUCCESS)
		learn_rank();
	return r;
}

MPI_WRAP(Finalize, (void))
{
	REAL_PMPI(Finalize);
	shim_flush(); /* before the runtime goes; the FINAL frame goes at exit */
	int was = quiet_begin();
	int r = real_Finalize();
	quiet_end(was);
	return r;
}

/* ------------------------------------------------------------ open, close, metadata */

/* ROMIO accepts "fstype:path"; the file is the path. */
static const char *strip_prefix(const char *name)
{
	const char *colon = strchr(name, ':');
	if (colon && colon > name && !memchr(name, '/', (size_t)(colon - name)))
		return colon + 1;
	return name;
}

static uint32_t watch_path(const char *path)
{
	if (!path || atomic_load_explicit(&shim.state, memory_order_relaxed) != SHIM_ON)
		return 0;
	struct shim_thread *t = shim_self();
	return t && !t->busy ? shim_name_path(strip_prefix(path)) : 0;
}

MPI_WRAP(File_open, (MPI_Comm comm, const char *name, int amode, MPI_Info info, MPI_File *fh))
{
	REAL_PMPI(File_open);
	struct shim_call c;
	uint32_t file = watch_path(name);
	if (!file || !shim_begin(&c, IOP_LAYER_MPIIO, IOP_OP_OPEN, file))
		return real_File_open(comm, name, amode, info, fh);
	int r = real_File_open(comm, name, amode, info, fh);
	if (r == MPI_SUCCESS) {
		pthread_mutex_lock(&tables);
		struct fh_entry *e = fh_find(*fh, true);
		if (e)
			*e = (struct fh_entry){.fh = *fh, .file = file};
		pthread_mutex_unlock(&tables);
	}
	end_mpi_meta(&c, r);
	return r;
}

MPI_WRAP(File_close, (MPI_File *fh))
{
	REAL_PMPI(File_close);
	struct shim_call c;
	MPI_File h = *fh;
	uint32_t file = fh_file(h);
	if (!file || !shim_begin(&c, IOP_LAYER_MPIIO, IOP_OP_CLOSE, file)) {
		fh_remove(h);
		return real_File_close(fh);
	}
	int r = real_File_close(fh);
	fh_remove(h);
	end_mpi_meta(&c, r);
	return r;
}

MPI_WRAP(File_delete, (const char *name, MPI_Info info))
{
	REAL_PMPI(File_delete);
	struct shim_call c;
	uint32_t file = watch_path(name);
	if (!file || !shim_begin(&c, IOP_LAYER_MPIIO, IOP_OP_UNLINK, file))
		return real_File_delete(name, info);
	int r = real_File_delete(name, info);
	end_mpi_meta(&c, r);
	return r;
}

#define FH_META(name, op, params, args)                                                    \
	MPI_WRAP(name, params)                                                             \
	{                                                                                  \
		REAL_PMPI(name);                                                            \
		struct shim_call c;                                                        \
		uint32_t file = fh_file(fh);                                               \
		if (!file || !shim_begin(&c, IOP_LAYER_MPIIO, op, file))                   \
			return real_##name args;                                           \
		int r = real_##name args;                                                  \
		end_mpi_meta(&c, r);                                                       \
		return r;                                                                  \
	}

FH_META(File_sync, IOP_OP_SYNC, (MPI_File fh), (fh))
FH_META(File_set_size, IOP_OP_TRUNCATE, (MPI_File fh, MPI_Offset size), (fh, size))
FH_META(File_preallocate, IOP_OP_TRUNCATE, (MPI_File fh, MPI_Offset size), (fh, size))
FH_META(File_seek, IOP_OP_SEEK, (MPI_File fh, MPI_Offset off, int whence), (fh, off, whence))
FH_META(File_seek_shared, IOP_OP_SEEK, (MPI_File fh, MPI_Offset off, int whence),
	(fh, off, whence))
FH_META(File_set_view, IOP_OP_SET_VIEW,
	(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
	 const char *datarep, MPI_Info info),
	(fh, disp, etype, filetype, datarep, info))

/* ------------------------------------------------------------ blocking transfers */

/* how the offset of a transfer is known */
#define OFF_AT(fh)     true, byte_offset(fh, offset)
#define OFF_INDIV(fh)  true, position(fh)
#define OFF_SHARED(fh) false, 0

#define XFER(name, op, ctype, offkind, params, args)                                       \
	MPI_WRAP(name, params)                                                             \
	{                                                                                  \
		REAL_PMPI(name);                                                            \
		struct shim_call c;                                                        \
		uint32_t file = fh_file(fh);                                               \
		if (!file)                                                                 \
			return real_##name args;                                           \
		XFER_OFFSET(offkind(fh));                                                  \
		if (!shim_begin(&c, IOP_LAYER_MPIIO, op, file))                            \
			return real_##name args;                                           \
		int r = real_##name args;                                                  \
		end_mpi(&c, r, moved(status, type, count), off_, has_off_);                \
		return r;                                                                  \
	}
#define XFER_OFFSET(...) XFER_OFFSET_(__VA_ARGS__)
#define XFER_OFFSET_(has, value)                                                           \
	bool has_off_ = (has);                                                             \
	uint64_t off_ = (value)

#define RD_PARAMS(ctype) (MPI_File fh, void *buf, ctype count, MPI_Datatype type, MPI_Status *status)
#define WR_PARAMS(ctype)                                                                   \
	(MPI_File fh, const void *buf, ctype count, MPI_Datatype type, MPI_Status *status)
#define RD_AT_PARAMS(ctype)                                                                \
	(MPI_File fh, MPI_Offset offset, void *buf, ctype count, MPI_Datatype type,        \
	 MPI_Status *status)
#define WR_AT_PARAMS(ctype)                                                                \
	(MPI_File fh, MPI_Offset offset, const void *buf, ctype count, MPI_Datatype type,  \
	 MPI_Status *status)
#define ARGS    (fh, buf, count, type, status)
#define AT_ARGS (fh, offset, buf, count, type, status)

#define XFER_SET(sfx, ctype)                                                               \
	XFER(File_read##sfx, IOP_OP_READ, ctype, OFF_INDIV, RD_PARAMS(ctype), ARGS)        \
	XFER(File_write##sfx, IOP_OP_WRITE, ctype, OFF_INDIV, WR_PARAMS(ctype), ARGS)      \
	XFER(File_read_at##sfx, IOP_OP_READ, ctype, OFF_AT, RD_AT_PARAMS(ctype), AT_ARGS)  \
	XFER(File_write_at##sfx, IOP_OP_WRITE, ctype, OFF_AT, WR_AT_PARAMS(ctype), AT_ARGS) \
	XFER(File_read_all##sfx, IOP_OP_READ_COLL, ctype, OFF_INDIV, RD_PARAMS(ctype), ARGS) \
	XFER(File_write_all##sfx, IOP_OP_WRITE_COLL, ctype, OFF_INDIV, WR_PARAMS(ctype), ARGS) \
	XFER(File_read_at_all##sfx, IOP_OP_READ_COLL, ctype, OFF_AT, RD_AT_PARAMS(ctype),  \
	     AT_ARGS)                                                                      \
	XFER(File_write_at_all##sfx, IOP_OP_WRITE_COLL, ctype, OFF_AT, WR_AT_PARAMS(ctype), \
	     AT_ARGS)                                                                      \
	XFER(File_read_shared##sfx, IOP_OP_READ, ctype, OFF_SHARED, RD_PARAMS(ctype), ARGS) \
	XFER(File_write_shared##sfx, IOP_OP_WRITE, ctype, OFF_SHARED, WR_PARAMS(ctype), ARGS) \
	XFER(File_read_ordered##sfx, IOP_OP_READ_COLL, ctype, OFF_SHARED, RD_PARAMS(ctype), \
	     ARGS)                                                                         \
	XFER(File_write_ordered##sfx, IOP_OP_WRITE_COLL, ctype, OFF_SHARED, WR_PARAMS(ctype), \
	     ARGS)

XFER_SET(, int)
#if MPI_VERSION >= 4
XFER_SET(_c, MPI_Count)
#endif

/* ------------------------------------------------------------ split collectives */

/* A split collective from its _begin (site: where _begin was called). */
static void split_begin(MPI_File fh, uint8_t op, uint64_t bytes, uint32_t site)
{
	pthread_mutex_lock(&tables);
	struct fh_entry *e = fh_find(fh, false);
	if (e) {
		e->split_t0 = shim_ticks();
		e->split_bytes = bytes;
		e->split_op = op;
		e->split_site = site;
	}
	pthread_mutex_unlock(&tables);
}

static void split_end(MPI_File fh, int rc)
{
	pthread_mutex_lock(&tables);
	struct fh_entry *e = fh_find(fh, false);
	struct fh_entry copy = e ? *e : (struct fh_entry){0};
	if (e)
		e->split_t0 = 0;
	pthread_mutex_unlock(&tables);
	struct shim_call c;
	if (copy.file && copy.split_t0 &&
	    shim_begin_from(&c, IOP_LAYER_MPIIO, copy.split_op, copy.file, NULL, copy.split_site)) {
		c.t0 = copy.split_t0;
		end_mpi(&c, rc, copy.split_bytes, 0, false);
	}
}

#define SPLIT(name, op, params, args, bytes_expr)                                          \
	MPI_WRAP(name##_begin, params)                                                     \
	{                                                                                  \
		REAL_PMPI(name##_begin);                                                    \
		if (fh_file(fh))                                                           \
			split_begin(fh, op, bytes_expr, shim_site_here(SHIM_CALLER()));    \
		return real_##name##_begin args;                                           \
	}                                                                                  \
	MPI_WRAP(name##_end, (MPI_File fh, SPLIT_BUF_##op buf, MPI_Status * status))       \
	{                                                                                  \
		REAL_PMPI(name##_end);                                                      \
		int r = real_##name##_end(fh, buf, status);                                \
		split_end(fh, r);                                                          \
		return r;                                                                  \
	}
#define SPLIT_BUF_IOP_OP_READ_COLL  void *
#define SPLIT_BUF_IOP_OP_WRITE_COLL const void *

SPLIT(File_read_all, IOP_OP_READ_COLL, (MPI_File fh, void *buf, int count, MPI_Datatype type),
      (fh, buf, count, type), type_bytes(type, count))
SPLIT(File_write_all, IOP_OP_WRITE_COLL,
      (MPI_File fh, const void *buf, int count, MPI_Datatype type), (fh, buf, count, type),
      type_bytes(type, count))
SPLIT(File_read_at_all, IOP_OP_READ_COLL,
      (MPI_File fh, MPI_Offset off, void *buf, int count, MPI_Datatype type),
      (fh, off, buf, count, type), type_bytes(type, count))
SPLIT(File_write_at_all, IOP_OP_WRITE_COLL,
      (MPI_File fh, MPI_Offset off, const void *buf, int count, MPI_Datatype type),
      (fh, off, buf, count, type), type_bytes(type, count))
SPLIT(File_read_ordered, IOP_OP_READ_COLL, (MPI_File fh, void *buf, int count, MPI_Datatype type),
      (fh, buf, count, type), type_bytes(type, count))
SPLIT(File_write_ordered, IOP_OP_WRITE_COLL,
      (MPI_File fh, const void *buf, int count, MPI_Datatype type), (fh, buf, count, type),
      type_bytes(type, count))

/* ------------------------------------------------------------ nonblocking */

static void req_post(MPI_Request req, uint32_t file, uint8_t op, uint64_t t0, uint64_t bytes,
		     bool has_offset, uint64_t offset, uint32_t site)
{
	pthread_mutex_lock(&tables);
	unsigned s = slot_of(&req, sizeof req);
	for (unsigned i = 0; i < HANDLES; i++) {
		struct req_entry *e = &reqs[(s + i) % HANDLES];
		if (!e->used) {
			*e = (struct req_entry){.req = req, .t0 = t0, .bytes = bytes, .offset = offset,
						.file = file, .site = site, .op = op, .used = 1,
						.has_offset = has_offset};
			atomic_fetch_add(&n_reqs, 1);
			break;
		}
	}
	pthread_mutex_unlock(&tables);
}

/* A request completed: if it was one of ours, record it. */
static void req_done(MPI_Request req, int rc)
{
	pthread_mutex_lock(&tables);
	struct req_entry found = {0};
	unsigned s = slot_of(&req, sizeof req);
	for (unsigned i = 0; i < HANDLES; i++) {
		struct req_entry *e = &reqs[(s + i) % HANDLES];
		if (e->used && e->req == req) {
			found = *e;
			e->used = 0;
			atomic_fetch_sub(&n_reqs, 1);
			break;
		}
	}
	pthread_mutex_unlock(&tables);
	struct shim_call c;
	if (found.used && shim_begin_from(&c, IOP_LAYER_MPIIO, found.op, found.file, NULL, found.site)) {
		c.t0 = found.t0;
		end_mpi(&c, rc, found.bytes, found.offset, found.has_offset);
	}
}

#define IXFER(name, op, offkind, params, args)                                             \
	MPI_WRAP(name, params)                                                             \
	{                                                                                  \
		REAL_PMPI(name);                                                            \
		uint32_t file = fh_file(fh);                                               \
		if (!file)                                                                 \
			return real_##name args;                                           \
		XFER_OFFSET(offkind(fh));                                                  \
		uint32_t site = shim_site_here(SHIM_CALLER());                             \
		uint64_t t0 = shim_ticks();                                                \
		int r = real_##name args;                                                  \
		if (r == MPI_SUCCESS)                                                      \
			req_post(*req, file, op, t0, type_bytes(type, count), has_off_, off_, \
				 site);                                                    \
		return r;                                                                  \
	}

#define IRD_PARAMS (MPI_File fh, void *buf, int count, MPI_Datatype type, MPI_Request *req)
#define IWR_PARAMS (MPI_File fh, const void *buf, int count, MPI_Datatype type, MPI_Request *req)
#define IRD_AT_PARAMS                                                                      \
	(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype type, MPI_Request *req)
#define IWR_AT_PARAMS                                                                      \
	(MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype type,    \
	 MPI_Request *req)
#define IARGS    (fh, buf, count, type, req)
#define IAT_ARGS (fh, offset, buf, count, type, req)

IXFER(File_iread, IOP_OP_READ, OFF_INDIV, IRD_PARAMS, IARGS)
IXFER(File_iwrite, IOP_OP_WRITE, OFF_INDIV, IWR_PARAMS, IARGS)
IXFER(File_iread_at, IOP_OP_READ, OFF_AT, IRD_AT_PARAMS, IAT_ARGS)
IXFER(File_iwrite_at, IOP_OP_WRITE, OFF_AT, IWR_AT_PARAMS, IAT_ARGS)
IXFER(File_iread_all, IOP_OP_READ_COLL, OFF_INDIV, IRD_PARAMS, IARGS)
IXFER(File_iwrite_all, IOP_OP_WRITE_COLL, OFF_INDIV, IWR_PARAMS, IARGS)
IXFER(File_iread_at_all, IOP_OP_READ_COLL, OFF_AT, IRD_AT_PARAMS, IAT_ARGS)
IXFER(File_iwrite_at_all, IOP_OP_WRITE_COLL, OFF_AT, IWR_AT_PARAMS, IAT_ARGS)
IXFER(File_iread_shared, IOP_OP_READ, OFF_SHARED, IRD_PARAMS, IARGS)
IXFER(File_iwrite_shared, IOP_OP_WRITE, OFF_SHARED, IWR_PARAMS, IARGS)

/* Requests are looked at only while recording: a forked child (recording
 * off) never touches the table, whose lock another thread may have held. */
static inline bool tracking(void)
{
	return atomic_load_explicit(&n_reqs, memory_order_relaxed) != 0 &&
	       atomic_load_explicit(&shim.state, memory_order_relaxed) == SHIM_ON;
}

MPI_WRAP(Wait, (MPI_Request * req, MPI_Status *status))
{
	REAL_PMPI(Wait);
	if (!tracking())
		return real_Wait(req, status);
	MPI_Request r0 = *req;
	int r = real_Wait(req, status);
	req_done(r0, r);
	return r;
}

MPI_WRAP(Test, (MPI_Request * req, int *flag, MPI_Status *status))
{
	REAL_PMPI(Test);
	if (!tracking())
		return real_Test(req, flag, status);
	MPI_Request r0 = *req;
	int r = real_Test(req, flag, status);
	if (r != MPI_SUCCESS || *flag)
		req_done(r0, r);
	return r;
}

/* Copies of the handles, taken before the call changes them. */
#define REQ_COPY_MAX 1024
#define WITH_COPIES(n, reqs_in)                                                            \
	MPI_Request copy_[REQ_COPY_MAX];                                                   \
	int ncopy_ = (n) > REQ_COPY_MAX ? REQ_COPY_MAX : (n);                              \
	if (ncopy_ > 0)                                                                    \
		memcpy(copy_, reqs_in, (size_t)ncopy_ * sizeof *copy_);

MPI_WRAP(Waitall, (int n, MPI_Request reqs_in[], MPI_Status statuses[]))
{
	REAL_PMPI(Waitall);
	if (!tracking())
		return real_Waitall(n, reqs_in, statuses);
	WITH_COPIES(n, reqs_in)
	int r = real_Waitall(n, reqs_in, statuses);
	for (int i = 0; i < ncopy_; i++)
		req_done(copy_[i], r);
	return r;
}

MPI_WRAP(Testall, (int n, MPI_Request reqs_in[], int *flag, MPI_Status statuses[]))
{
	REAL_PMPI(Testall);
	if (!tracking())
		return real_Testall(n, reqs_in, flag, statuses);
	WITH_COPIES(n, reqs_in)
	int r = real_Testall(n, reqs_in, flag, statuses);
	for (int i = 0; (r != MPI_SUCCESS || *flag) && i < ncopy_; i++)
		req_done(copy_[i], r);
	return r;
}

MPI_WRAP(Waitany, (int n, MPI_Request reqs_in[], int *index, MPI_Status *status))
{
	REAL_PMPI(Waitany);
	if (!tracking())
		return real_Waitany(n, reqs_in, index, status);
	WITH_COPIES(n, reqs_in)
	int r = real_Waitany(n, reqs_in, index, status);
	if (*index >= 0 && *index < ncopy_)
		req_done(copy_[*index], r);
	return r;
}

MPI_WRAP(Testany, (int n, MPI_Request reqs_in[], int *index, int *flag, MPI_Status *status))
{
	REAL_PMPI(Testany);
	if (!tracking())
		return real_Testany(n, reqs_in, index, flag, status);
	WITH_COPIES(n, reqs_in)
	int r = real_Testany(n, reqs_in, index, flag, status);
	if (*flag && *index >= 0 && *index < ncopy_)
		req_done(copy_[*index], r);
	return r;
}

#define SOME_WRAPPER(name)                                                                 \
	MPI_WRAP(name, (int n, MPI_Request reqs_in[], int *outcount, int indices[],        \
			MPI_Status statuses[]))                                            \
	{                                                                                  \
		REAL_PMPI(name);                                                            \
		if (!tracking())                                                           \
			return real_##name(n, reqs_in, outcount, indices, statuses);       \
		WITH_COPIES(n, reqs_in)                                                    \
		int r = real_##name(n, reqs_in, outcount, indices, statuses);              \
		for (int i = 0; *outcount != MPI_UNDEFINED && i < *outcount; i++)          \
			if (indices[i] >= 0 && indices[i] < ncopy_)                        \
				req_done(copy_[indices[i]], r);                            \
		return r;                                                                  \
	}

SOME_WRAPPER(Waitsome)
SOME_WRAPPER(Testsome)
