/* MPI-IO layer, through PMPI: files, their metadata calls, blocking and
 * split-collective transfers (nonblocking ones: mpiio_req.c; what both
 * share: mpiio.h). Each wrapper is exported under its MPI_ and its PMPI_
 * name (Fortran bindings of some MPIs call PMPI_ directly) and calls the
 * library's PMPI_ function found with dlsym(RTLD_NEXT), so the shim needs
 * no link to libmpi and works in programs without MPI.
 *
 * Bytes are what the transfer's status says it moved (mpiio.h), for any
 * datatype. Offsets are in bytes from the start of the file for the
 * explicit-offset and individual-pointer forms, through the file's view;
 * shared-pointer forms carry none. The POSIX calls an MPI-IO call issues
 * are its children (shim.h). Split collectives are timed from _begin to
 * _end. A failed MPI call is recorded with err = EIO; errno is never
 * touched. Collective calls on a communicator of more than one rank carry
 * their number on the file (IOP_EV_COLL), so the collectors can match the
 * same call across ranks. */
#include <pthread.h>
#include <string.h>

#include "mpiio.h"
#include "sender_api.h"

/* ------------------------------------------------------------ handle tables */

#define HANDLES 4096 /* open files tracked at once */

struct fh_entry {
	MPI_File fh;
	uint32_t file;
	uint32_t comm_size; /* ranks of the communicator it was opened on */
	uint32_t split_seq; /* the split collective's number (0: none) */
	/* a split collective in progress */
	uint64_t split_t0, split_bytes, split_offset;
	uint32_t split_site;
	uint8_t split_op;
	bool split_has_offset;
};

static struct fh_entry fhs[HANDLES];
static pthread_mutex_t tables = PTHREAD_MUTEX_INITIALIZER;

/* Collective calls made on each file (by its id: per path, so a file
 * opened again goes on counting), for their numbers. Every rank makes
 * the same collective calls on a file in the same order, so the n-th is
 * the same call everywhere. A file beyond the table's room is not
 * numbered: its calls are not matched, nothing else changes. */
static struct seq_entry {
	uint32_t file, next;
} seqs[HANDLES];

/* The next number on file, under tables; 0 when the table is full. */
static uint32_t next_seq(uint32_t file)
{
	unsigned s = (unsigned)((file * 0x9e3779b97f4a7c15u) >> 52) % HANDLES;
	for (unsigned i = 0; i < HANDLES; i++) {
		struct seq_entry *e = &seqs[(s + i) % HANDLES];
		if (e->file == file || !e->file) {
			e->file = file;
			if (++e->next == 0) /* wrapped after 2^32 calls: 0 means none */
				e->next = 1;
			return e->next;
		}
	}
	return 0;
}

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

uint32_t shim_mpiio_file(MPI_File fh)
{
	if (atomic_load_explicit(&shim.state, memory_order_relaxed) != SHIM_ON)
		return 0;
	pthread_mutex_lock(&tables);
	struct fh_entry *e = fh_find(fh, false);
	uint32_t file = e ? e->file : 0;
	pthread_mutex_unlock(&tables);
	return file;
}

uint32_t shim_mpiio_file_coll(MPI_File fh, struct shim_coll *coll)
{
	*coll = (struct shim_coll){0};
	if (atomic_load_explicit(&shim.state, memory_order_relaxed) != SHIM_ON)
		return 0;
	pthread_mutex_lock(&tables);
	struct fh_entry *e = fh_find(fh, false);
	uint32_t file = e ? e->file : 0;
	if (e && e->comm_size > 1 && (coll->seq = next_seq(file)) != 0)
		coll->size = e->comm_size;
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
				if ((j > i && (home <= i || home > j)) ||
				    (j < i && home <= i && home > j))
					break;
			}
			fhs[i] = fhs[j];
			i = j;
		}
	}
out:
	pthread_mutex_unlock(&tables);
}

uint64_t shim_mpiio_asked(MPI_Datatype type, MPI_Count count)
{
	MPI_Count size = 0;
	if (PMPI_FN(Type_size_x)(type, &size) != MPI_SUCCESS || size < 0 || count < 0)
		return 0;
	return (uint64_t)size * (uint64_t)count;
}

/* MPI_BYTE without a link-time reference: in Open MPI the address of a
 * data symbol of libmpi (found as comm_world() finds its own), in MPICH a
 * constant. */
static MPI_Datatype mpi_byte(void)
{
#ifdef OMPI_MAJOR_VERSION
	static MPI_Datatype byte;
	if (SHIM_UNLIKELY(!byte))
		byte = (MPI_Datatype)dlsym(RTLD_DEFAULT, "ompi_mpi_byte");
	return byte;
#else
	return MPI_BYTE;
#endif
}

uint64_t shim_mpiio_moved(const MPI_Status *st, uint64_t asked)
{
	MPI_Count n = 0;
	MPI_Datatype byte = mpi_byte();
	if (byte && PMPI_FN(Get_elements_x)(st, byte, &n) == MPI_SUCCESS && n != MPI_UNDEFINED &&
	    n >= 0 && (uint64_t)n <= asked)
		return (uint64_t)n;
	return asked;
}

uint64_t shim_mpiio_byte_offset(MPI_File fh, MPI_Offset off)
{
	MPI_Offset disp = 0;
	return PMPI_FN(File_get_byte_offset)(fh, off, &disp) == MPI_SUCCESS && disp >= 0
	           ? (uint64_t)disp
	           : 0;
}

uint64_t shim_mpiio_position(MPI_File fh)
{
	MPI_Offset off = 0;
	return PMPI_FN(File_get_position)(fh, &off) == MPI_SUCCESS ? shim_mpiio_byte_offset(fh, off)
	                                                           : 0;
}

/* A collective call's number into its result. */
static void with_coll(struct shim_result *res, struct shim_coll coll)
{
	if (coll.seq) {
		res->coll_seq = coll.seq;
		res->coll_size = coll.size;
		res->flags |= IOP_EV_COLL;
	}
}

void shim_mpiio_end_coll(struct shim_call *c, int rc, uint64_t bytes, uint64_t offset,
                         bool has_offset, struct shim_coll coll)
{
	struct shim_result res = {.bytes = bytes,
	                          .offset = offset,
	                          .flags = IOP_EV_BYTES | (has_offset ? IOP_EV_OFFSET : 0)};
	if (rc != MPI_SUCCESS)
		res = (struct shim_result){.err = EIO, .flags = IOP_EV_ERROR};
	with_coll(&res, coll);
	shim_end(c, &res);
}

void shim_mpiio_end(struct shim_call *c, int rc, uint64_t bytes, uint64_t offset, bool has_offset)
{
	shim_mpiio_end_coll(c, rc, bytes, offset, has_offset, (struct shim_coll){0});
}

static void end_mpi_meta(struct shim_call *c, int rc, struct shim_coll coll)
{
	struct shim_result res = {.err = rc == MPI_SUCCESS ? 0 : EIO,
	                          .flags = rc == MPI_SUCCESS ? 0 : IOP_EV_ERROR};
	with_coll(&res, coll);
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
	if (!file)
		return real_File_open(comm, name, amode, info, fh);
	/* numbered whether recorded or not: every rank counts every call */
	int size = 1;
	if (PMPI_FN(Comm_size)(comm, &size) != MPI_SUCCESS || size < 1)
		size = 1;
	struct shim_coll coll = {0};
	if (size > 1) {
		pthread_mutex_lock(&tables);
		if ((coll.seq = next_seq(file)) != 0)
			coll.size = (uint32_t)size;
		pthread_mutex_unlock(&tables);
	}
	bool rec = shim_begin(&c, IOP_LAYER_MPIIO, IOP_OP_OPEN, file);
	int r = real_File_open(comm, name, amode, info, fh);
	if (r == MPI_SUCCESS) {
		pthread_mutex_lock(&tables);
		struct fh_entry *e = fh_find(*fh, true);
		if (e)
			*e = (struct fh_entry){.fh = *fh, .file = file, .comm_size = (uint32_t)size};
		pthread_mutex_unlock(&tables);
	}
	if (rec)
		end_mpi_meta(&c, r, coll);
	return r;
}

MPI_WRAP(File_close, (MPI_File * fh))
{
	REAL_PMPI(File_close);
	struct shim_call c;
	MPI_File h = *fh;
	struct shim_coll coll;
	uint32_t file = shim_mpiio_file_coll(h, &coll);
	if (!file || !shim_begin(&c, IOP_LAYER_MPIIO, IOP_OP_CLOSE, file)) {
		fh_remove(h);
		return real_File_close(fh);
	}
	int r = real_File_close(fh);
	fh_remove(h);
	end_mpi_meta(&c, r, coll);
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
	end_mpi_meta(&c, r, (struct shim_coll){0});
	return r;
}

/* The file of a call, numbered when the call is collective (a constant:
 * the other branch folds away). */
#define FILE_OF(fh, collective, coll)                                                              \
	((collective) ? shim_mpiio_file_coll((fh), (coll))                                        \
	              : (*(coll) = (struct shim_coll){0}, shim_mpiio_file(fh)))

#define FH_META(name, op, collective, params, args)                                                \
	MPI_WRAP(name, params)                                                                     \
	{                                                                                          \
		REAL_PMPI(name);                                                                   \
		struct shim_call c;                                                                \
		struct shim_coll coll;                                                             \
		uint32_t file = FILE_OF(fh, collective, &coll);                                    \
		if (!file || !shim_begin(&c, IOP_LAYER_MPIIO, op, file))                           \
			return real_##name args;                                                   \
		int r = real_##name args;                                                          \
		end_mpi_meta(&c, r, coll);                                                         \
		return r;                                                                          \
	}

FH_META(File_sync, IOP_OP_SYNC, true, (MPI_File fh), (fh))
FH_META(File_set_size, IOP_OP_TRUNCATE, true, (MPI_File fh, MPI_Offset size), (fh, size))
FH_META(File_preallocate, IOP_OP_TRUNCATE, true, (MPI_File fh, MPI_Offset size), (fh, size))
FH_META(File_seek, IOP_OP_SEEK, false, (MPI_File fh, MPI_Offset off, int whence),
        (fh, off, whence))
FH_META(File_seek_shared, IOP_OP_SEEK, true, (MPI_File fh, MPI_Offset off, int whence),
        (fh, off, whence))
FH_META(File_set_view, IOP_OP_SET_VIEW, true,
        (MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
         const char *datarep, MPI_Info info),
        (fh, disp, etype, filetype, datarep, info))

/* ------------------------------------------------------------ blocking transfers */

/* The status the call fills: the application's, or ours when it passed
 * MPI_STATUS_IGNORE (a partial transfer's bytes are known only from it). */
#define OWN_STATUS(status)                                                                         \
	MPI_Status own_st_;                                                                        \
	MPI_Status *st_ = (status) == MPI_STATUS_IGNORE ? &own_st_ : (status)

/* An independent read moves no more than the POSIX reads it issued moved,
 * when it issued any: its bytes are the smaller of the two. MPICH's ROMIO
 * says in the status that a strided read past the end of the file read the
 * whole request (3300 bytes of a 2203-byte file); its preads say 2203.
 * Data sieving reads more than is asked, never less, so the bound never
 * cuts a true count. (A collective read's POSIX reads are its aggregator's,
 * for every rank: no bound.) */
static uint64_t read_bound(const struct shim_call *c, unsigned op, uint64_t bytes)
{
	const struct shim_thread *t = c->t;
	unsigned d = t->depth - 1;
	if (op != IOP_OP_READ || !(t->kids >> d & 1) || t->stack[d].child_bytes >= bytes)
		return bytes;
	return t->stack[d].child_bytes;
}

#define XFER(name, op, ctype, offkind, params, args, own_args)                                     \
	MPI_WRAP(name, params)                                                                     \
	{                                                                                          \
		REAL_PMPI(name);                                                                   \
		struct shim_call c;                                                                \
		struct shim_coll coll;                                                             \
		uint32_t file =                                                                    \
			FILE_OF(fh, op == IOP_OP_READ_COLL || op == IOP_OP_WRITE_COLL, &coll);     \
		if (!file)                                                                         \
			return real_##name args;                                                   \
		XFER_OFFSET(offkind(fh));                                                          \
		if (!shim_begin(&c, IOP_LAYER_MPIIO, op, file))                                    \
			return real_##name args;                                                   \
		OWN_STATUS(status);                                                                \
		int r = real_##name own_args;                                                      \
		uint64_t moved_ = shim_mpiio_moved(st_, shim_mpiio_asked(type, count));            \
		shim_mpiio_end_coll(&c, r, read_bound(&c, op, moved_), off_, has_off_, coll);      \
		return r;                                                                          \
	}

#define RD_PARAMS(ctype)                                                                           \
	(MPI_File fh, void *buf, ctype count, MPI_Datatype type, MPI_Status *status)
#define WR_PARAMS(ctype)                                                                           \
	(MPI_File fh, const void *buf, ctype count, MPI_Datatype type, MPI_Status *status)
#define RD_AT_PARAMS(ctype)                                                                        \
	(MPI_File fh, MPI_Offset offset, void *buf, ctype count, MPI_Datatype type,                \
	 MPI_Status *status)
#define WR_AT_PARAMS(ctype)                                                                        \
	(MPI_File fh, MPI_Offset offset, const void *buf, ctype count, MPI_Datatype type,          \
	 MPI_Status *status)
#define ARGS(st)    (fh, buf, count, type, st)
#define AT_ARGS(st) (fh, offset, buf, count, type, st)

#define XFER_SET(sfx, ctype)                                                                       \
	XFER(File_read##sfx, IOP_OP_READ, ctype, OFF_INDIV, RD_PARAMS(ctype), ARGS(status),        \
	     ARGS(st_))                                                                            \
	XFER(File_write##sfx, IOP_OP_WRITE, ctype, OFF_INDIV, WR_PARAMS(ctype), ARGS(status),      \
	     ARGS(st_))                                                                            \
	XFER(File_read_at##sfx, IOP_OP_READ, ctype, OFF_AT, RD_AT_PARAMS(ctype), AT_ARGS(status),  \
	     AT_ARGS(st_))                                                                         \
	XFER(File_write_at##sfx, IOP_OP_WRITE, ctype, OFF_AT, WR_AT_PARAMS(ctype),                 \
	     AT_ARGS(status), AT_ARGS(st_))                                                        \
	XFER(File_read_all##sfx, IOP_OP_READ_COLL, ctype, OFF_INDIV, RD_PARAMS(ctype),             \
	     ARGS(status), ARGS(st_))                                                              \
	XFER(File_write_all##sfx, IOP_OP_WRITE_COLL, ctype, OFF_INDIV, WR_PARAMS(ctype),           \
	     ARGS(status), ARGS(st_))                                                              \
	XFER(File_read_at_all##sfx, IOP_OP_READ_COLL, ctype, OFF_AT, RD_AT_PARAMS(ctype),          \
	     AT_ARGS(status), AT_ARGS(st_))                                                        \
	XFER(File_write_at_all##sfx, IOP_OP_WRITE_COLL, ctype, OFF_AT, WR_AT_PARAMS(ctype),        \
	     AT_ARGS(status), AT_ARGS(st_))                                                        \
	XFER(File_read_shared##sfx, IOP_OP_READ, ctype, OFF_SHARED, RD_PARAMS(ctype),              \
	     ARGS(status), ARGS(st_))                                                              \
	XFER(File_write_shared##sfx, IOP_OP_WRITE, ctype, OFF_SHARED, WR_PARAMS(ctype),            \
	     ARGS(status), ARGS(st_))                                                              \
	XFER(File_read_ordered##sfx, IOP_OP_READ_COLL, ctype, OFF_SHARED, RD_PARAMS(ctype),        \
	     ARGS(status), ARGS(st_))                                                              \
	XFER(File_write_ordered##sfx, IOP_OP_WRITE_COLL, ctype, OFF_SHARED, WR_PARAMS(ctype),      \
	     ARGS(status), ARGS(st_))

XFER_SET(, int)
#if MPI_VERSION >= 4
XFER_SET(_c, MPI_Count)
#endif

/* ------------------------------------------------------------ split collectives */

/* A split collective from its _begin (site: where _begin was called): what
 * it asked, its offset, kept on the file's entry until its _end. */
static void split_begin(MPI_File fh, uint8_t op, uint64_t asked, bool has_offset, uint64_t offset,
                        uint32_t site)
{
	pthread_mutex_lock(&tables);
	struct fh_entry *e = fh_find(fh, false);
	if (e) {
		e->split_seq = e->comm_size > 1 ? next_seq(e->file) : 0;
		e->split_t0 = shim_ticks();
		e->split_bytes = asked;
		e->split_offset = offset;
		e->split_has_offset = has_offset;
		e->split_op = op;
		e->split_site = site;
	}
	pthread_mutex_unlock(&tables);
}

/* The _end: bytes from its status (st: never MPI_STATUS_IGNORE here). */
static void split_end(MPI_File fh, int rc, const MPI_Status *st)
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
		struct shim_coll coll = {.seq = copy.split_seq,
		                         .size = copy.split_seq ? copy.comm_size : 0};
		shim_mpiio_end_coll(&c, rc, shim_mpiio_moved(st, copy.split_bytes), copy.split_offset,
		                    copy.split_has_offset, coll);
	}
}

/* _begin (int and _c counts: BEGIN_AS) and _end of one split collective. */
#define SPLIT_BEGIN(name, op, ctype, offkind, params, args)                                        \
	MPI_WRAP(name, params)                                                                     \
	{                                                                                          \
		REAL_PMPI(name);                                                                   \
		if (shim_mpiio_file(fh)) {                                                         \
			XFER_OFFSET(offkind(fh));                                                  \
			split_begin(fh, op, shim_mpiio_asked(type, count), has_off_, off_,         \
			            shim_site_here(SHIM_CALLER()));                                \
		}                                                                                  \
		return real_##name args;                                                           \
	}
#define SPLIT_END(name, bufq)                                                                      \
	MPI_WRAP(name, (MPI_File fh, bufq void *buf, MPI_Status *status))                          \
	{                                                                                          \
		REAL_PMPI(name);                                                                   \
		if (!shim_mpiio_file(fh))                                                          \
			return real_##name(fh, buf, status);                                       \
		OWN_STATUS(status);                                                                \
		int r = real_##name(fh, buf, st_);                                                 \
		split_end(fh, r, st_);                                                             \
		return r;                                                                          \
	}

#define SPLIT_RD(ctype) (MPI_File fh, void *buf, ctype count, MPI_Datatype type)
#define SPLIT_WR(ctype) (MPI_File fh, const void *buf, ctype count, MPI_Datatype type)
#define SPLIT_RD_AT(ctype)                                                                         \
	(MPI_File fh, MPI_Offset offset, void *buf, ctype count, MPI_Datatype type)
#define SPLIT_WR_AT(ctype)                                                                         \
	(MPI_File fh, MPI_Offset offset, const void *buf, ctype count, MPI_Datatype type)
#define SPLIT_ARGS    (fh, buf, count, type)
#define SPLIT_AT_ARGS (fh, offset, buf, count, type)

#define SPLIT_SET(sfx, ctype)                                                                      \
	SPLIT_BEGIN(File_read_all_begin##sfx, IOP_OP_READ_COLL, ctype, OFF_INDIV, SPLIT_RD(ctype), \
	            SPLIT_ARGS)                                                                    \
	SPLIT_BEGIN(File_write_all_begin##sfx, IOP_OP_WRITE_COLL, ctype, OFF_INDIV,                \
	            SPLIT_WR(ctype), SPLIT_ARGS)                                                   \
	SPLIT_BEGIN(File_read_at_all_begin##sfx, IOP_OP_READ_COLL, ctype, OFF_AT,                  \
	            SPLIT_RD_AT(ctype), SPLIT_AT_ARGS)                                             \
	SPLIT_BEGIN(File_write_at_all_begin##sfx, IOP_OP_WRITE_COLL, ctype, OFF_AT,                \
	            SPLIT_WR_AT(ctype), SPLIT_AT_ARGS)                                             \
	SPLIT_BEGIN(File_read_ordered_begin##sfx, IOP_OP_READ_COLL, ctype, OFF_SHARED,             \
	            SPLIT_RD(ctype), SPLIT_ARGS)                                                   \
	SPLIT_BEGIN(File_write_ordered_begin##sfx, IOP_OP_WRITE_COLL, ctype, OFF_SHARED,           \
	            SPLIT_WR(ctype), SPLIT_ARGS)

SPLIT_SET(, int)
#if MPI_VERSION >= 4
SPLIT_SET(_c, MPI_Count)
#endif
SPLIT_END(File_read_all_end, )
SPLIT_END(File_write_all_end, const)
SPLIT_END(File_read_at_all_end, )
SPLIT_END(File_write_at_all_end, const)
SPLIT_END(File_read_ordered_end, )
SPLIT_END(File_write_ordered_end, const)
