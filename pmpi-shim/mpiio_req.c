/* MPI-IO nonblocking transfers: MPI_File_iread/iwrite in every form are
 * remembered when posted (what they asked, offset, site, time) and recorded
 * when MPI_Wait, MPI_Test or one of their any/all/some forms completes
 * them: timed from post to completion, with the bytes of the completion's
 * status (mpiio.h). The completion wrappers pass statuses of their own where
 * the application passed MPI_STATUS(ES)_IGNORE; the return value is the
 * same either way (the MPI standard, and Open MPI and MPICH, return
 * MPI_ERR_IN_STATUS from the all/some forms whether statuses are ignored
 * or not). A request the application frees with MPI_Request_free, or
 * cancels, is never completed through these calls: it is not recorded. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "mpiio.h"

#define REQS 4096 /* pending requests tracked at once */

struct req_entry {
	MPI_Request req;
	uint64_t t0, asked, offset;
	uint32_t file, site;
	uint8_t op, used, has_offset;
};

static struct req_entry reqs[REQS];
static _Atomic unsigned n_reqs;
static pthread_mutex_t reqs_lock = PTHREAD_MUTEX_INITIALIZER;

static unsigned req_slot(MPI_Request req)
{
	uint64_t h = 0;
	memcpy(&h, &req, sizeof req < sizeof h ? sizeof req : sizeof h);
	return (unsigned)((h * 0x9e3779b97f4a7c15u) >> 52) % REQS;
}

static void req_post(MPI_Request req, const struct req_entry *what)
{
	pthread_mutex_lock(&reqs_lock);
	unsigned s = req_slot(req);
	for (unsigned i = 0; i < REQS; i++) {
		struct req_entry *e = &reqs[(s + i) % REQS];
		if (!e->used) {
			*e = *what;
			e->req = req;
			e->used = 1;
			atomic_fetch_add(&n_reqs, 1);
			break;
		}
	}
	pthread_mutex_unlock(&reqs_lock);
}

/* A request completed with rc (st: its status, or NULL when none could be
 * had): if it was one of ours, record it. */
static void req_done(MPI_Request req, int rc, const MPI_Status *st)
{
	pthread_mutex_lock(&reqs_lock);
	struct req_entry found = {0};
	unsigned s = req_slot(req);
	for (unsigned i = 0; i < REQS; i++) {
		struct req_entry *e = &reqs[(s + i) % REQS];
		if (e->used && e->req == req) {
			found = *e;
			e->used = 0;
			atomic_fetch_sub(&n_reqs, 1);
			break;
		}
	}
	pthread_mutex_unlock(&reqs_lock);
	struct shim_call c;
	if (found.used &&
	    shim_begin_from(&c, IOP_LAYER_MPIIO, found.op, found.file, NULL, found.site)) {
		c.t0 = found.t0;
		uint64_t bytes = st ? shim_mpiio_moved(st, found.asked) : found.asked;
		shim_mpiio_end(&c, rc, bytes, found.offset, found.has_offset);
	}
}

/* ------------------------------------------------------------ posts */

#define IXFER(name, kind, ctype, offkind, params, args)                                            \
	MPI_WRAP(name, params)                                                                     \
	{                                                                                          \
		REAL_PMPI(name);                                                                   \
		uint32_t file = shim_mpiio_file(fh);                                               \
		if (!file)                                                                         \
			return real_##name args;                                                   \
		XFER_OFFSET(offkind(fh));                                                          \
		struct req_entry e = {.t0 = shim_ticks(),                                          \
		                      .asked = shim_mpiio_asked(type, count),                      \
		                      .offset = off_,                                              \
		                      .file = file,                                                \
		                      .site = shim_site_here(SHIM_CALLER()),                       \
		                      .op = kind,                                                  \
		                      .has_offset = has_off_};                                     \
		int r = real_##name args;                                                          \
		if (r == MPI_SUCCESS)                                                              \
			req_post(*req, &e);                                                        \
		return r;                                                                          \
	}

#define IRD(ctype) (MPI_File fh, void *buf, ctype count, MPI_Datatype type, MPI_Request *req)
#define IWR(ctype) (MPI_File fh, const void *buf, ctype count, MPI_Datatype type, MPI_Request *req)
#define IRD_AT(ctype)                                                                              \
	(MPI_File fh, MPI_Offset offset, void *buf, ctype count, MPI_Datatype type,                \
	 MPI_Request *req)
#define IWR_AT(ctype)                                                                              \
	(MPI_File fh, MPI_Offset offset, const void *buf, ctype count, MPI_Datatype type,          \
	 MPI_Request *req)
#define IARGS    (fh, buf, count, type, req)
#define IAT_ARGS (fh, offset, buf, count, type, req)

#define IXFER_SET(sfx, ctype)                                                                      \
	IXFER(File_iread##sfx, IOP_OP_READ, ctype, OFF_INDIV, IRD(ctype), IARGS)                   \
	IXFER(File_iwrite##sfx, IOP_OP_WRITE, ctype, OFF_INDIV, IWR(ctype), IARGS)                 \
	IXFER(File_iread_at##sfx, IOP_OP_READ, ctype, OFF_AT, IRD_AT(ctype), IAT_ARGS)             \
	IXFER(File_iwrite_at##sfx, IOP_OP_WRITE, ctype, OFF_AT, IWR_AT(ctype), IAT_ARGS)           \
	IXFER(File_iread_all##sfx, IOP_OP_READ_COLL, ctype, OFF_INDIV, IRD(ctype), IARGS)          \
	IXFER(File_iwrite_all##sfx, IOP_OP_WRITE_COLL, ctype, OFF_INDIV, IWR(ctype), IARGS)        \
	IXFER(File_iread_at_all##sfx, IOP_OP_READ_COLL, ctype, OFF_AT, IRD_AT(ctype), IAT_ARGS)    \
	IXFER(File_iwrite_at_all##sfx, IOP_OP_WRITE_COLL, ctype, OFF_AT, IWR_AT(ctype), IAT_ARGS)  \
	IXFER(File_iread_shared##sfx, IOP_OP_READ, ctype, OFF_SHARED, IRD(ctype), IARGS)           \
	IXFER(File_iwrite_shared##sfx, IOP_OP_WRITE, ctype, OFF_SHARED, IWR(ctype), IARGS)

IXFER_SET(, int)
#if MPI_VERSION >= 4
IXFER_SET(_c, MPI_Count)
#endif

/* ------------------------------------------------------------ completions */

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
	MPI_Status own, *st = status == MPI_STATUS_IGNORE ? &own : status;
	int r = real_Wait(req, st);
	req_done(r0, r, st);
	return r;
}

MPI_WRAP(Test, (MPI_Request * req, int *flag, MPI_Status *status))
{
	REAL_PMPI(Test);
	if (!tracking())
		return real_Test(req, flag, status);
	MPI_Request r0 = *req;
	MPI_Status own, *st = status == MPI_STATUS_IGNORE ? &own : status;
	int r = real_Test(req, flag, st);
	if (r != MPI_SUCCESS || *flag)
		req_done(r0, r, r == MPI_SUCCESS ? st : NULL);
	return r;
}

/* The handles as they were before a completion call changed them, and the
 * statuses it fills: the application's, or ours when it ignores them. On
 * the stack for the usual few, else on the heap. */
struct many {
	MPI_Request *copy;
	MPI_Status *st;
	void *heap;
	_Alignas(16) unsigned char local[2048];
};

static bool many_begin(struct many *m, int n, const MPI_Request *reqs_in, MPI_Status *statuses)
{
	bool own = statuses == MPI_STATUSES_IGNORE;
	size_t handles = ((size_t)n * sizeof(MPI_Request) + 15) & ~(size_t)15;
	size_t need = handles + (own ? (size_t)n * sizeof(MPI_Status) : 0);
	m->heap = need > sizeof m->local ? malloc(need) : NULL;
	unsigned char *block = need > sizeof m->local ? m->heap : m->local;
	if (!block)
		return false;
	m->copy = (MPI_Request *)block;
	memcpy(m->copy, reqs_in, (size_t)n * sizeof(MPI_Request));
	m->st = own ? (MPI_Status *)(block + handles) : statuses;
	return true;
}

/* Waitany and Testany: one status, of request *index. */
MPI_WRAP(Waitany, (int n, MPI_Request reqs_in[], int *index, MPI_Status *status))
{
	REAL_PMPI(Waitany);
	struct many m;
	MPI_Status own, *st = status == MPI_STATUS_IGNORE ? &own : status;
	if (!tracking() || n <= 0 || !many_begin(&m, n, reqs_in, st))
		return real_Waitany(n, reqs_in, index, status);
	int r = real_Waitany(n, reqs_in, index, st);
	if (*index >= 0 && *index < n)
		req_done(m.copy[*index], r, r == MPI_SUCCESS ? st : NULL);
	free(m.heap);
	return r;
}

MPI_WRAP(Testany, (int n, MPI_Request reqs_in[], int *index, int *flag, MPI_Status *status))
{
	REAL_PMPI(Testany);
	struct many m;
	MPI_Status own, *st = status == MPI_STATUS_IGNORE ? &own : status;
	if (!tracking() || n <= 0 || !many_begin(&m, n, reqs_in, st))
		return real_Testany(n, reqs_in, index, flag, status);
	int r = real_Testany(n, reqs_in, index, flag, st);
	if (*flag && *index >= 0 && *index < n)
		req_done(m.copy[*index], r, r == MPI_SUCCESS ? st : NULL);
	free(m.heap);
	return r;
}

/* Request i of a multiple completion that returned r has completed: with
 * MPI_ERR_IN_STATUS each status holds its own outcome, and MPI_ERR_PENDING
 * means it has not completed (it stays ours). */
static void many_done(const struct many *m, int i, int r)
{
	int rc = r == MPI_ERR_IN_STATUS ? m->st[i].MPI_ERROR : r;
	if (rc == MPI_ERR_PENDING)
		return;
	req_done(m->copy[i], rc, rc == MPI_SUCCESS ? &m->st[i] : NULL);
}

MPI_WRAP(Waitall, (int n, MPI_Request reqs_in[], MPI_Status statuses[]))
{
	REAL_PMPI(Waitall);
	struct many m;
	if (!tracking() || n <= 0 || !many_begin(&m, n, reqs_in, statuses))
		return real_Waitall(n, reqs_in, statuses);
	int r = real_Waitall(n, reqs_in, m.st);
	for (int i = 0; i < n; i++)
		many_done(&m, i, r);
	free(m.heap);
	return r;
}

MPI_WRAP(Testall, (int n, MPI_Request reqs_in[], int *flag, MPI_Status statuses[]))
{
	REAL_PMPI(Testall);
	struct many m;
	if (!tracking() || n <= 0 || !many_begin(&m, n, reqs_in, statuses))
		return real_Testall(n, reqs_in, flag, statuses);
	int r = real_Testall(n, reqs_in, flag, m.st);
	for (int i = 0; (r != MPI_SUCCESS || *flag) && i < n; i++)
		many_done(&m, i, r);
	free(m.heap);
	return r;
}

/* Waitsome and Testsome: status k is that of request indices[k]. */
#define SOME_WRAPPER(name)                                                                         \
	MPI_WRAP(name, (int n, MPI_Request reqs_in[], int *outcount, int indices[],                \
	                MPI_Status statuses[]))                                                    \
	{                                                                                          \
		REAL_PMPI(name);                                                                   \
		struct many m;                                                                     \
		if (!tracking() || n <= 0 || !many_begin(&m, n, reqs_in, statuses))                \
			return real_##name(n, reqs_in, outcount, indices, statuses);               \
		int r = real_##name(n, reqs_in, outcount, indices, m.st);                          \
		for (int k = 0; *outcount != MPI_UNDEFINED && k < *outcount; k++) {                \
			int i = indices[k];                                                        \
			if (i < 0 || i >= n)                                                       \
				continue;                                                          \
			int rc = r == MPI_ERR_IN_STATUS ? m.st[k].MPI_ERROR : r;                   \
			req_done(m.copy[i], rc, rc == MPI_SUCCESS ? &m.st[k] : NULL);              \
		}                                                                                  \
		free(m.heap);                                                                      \
		return r;                                                                          \
	}

SOME_WRAPPER(Waitsome)
SOME_WRAPPER(Testsome)
