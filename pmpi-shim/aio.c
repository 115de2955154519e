/* POSIX asynchronous I/O: aio_read, aio_write, lio_listio (and their 64
 * forms), completed by aio_return. Posting notes the start in a table keyed
 * by the aiocb; aio_return records the event: bytes = what it returns,
 * duration = from post to aio_return (what the application waited for), a
 * failure as IOP_EV_ERROR with the operation's error (aio_error), at the
 * post's site. glibc runs the operations in helper threads that call its
 * internal pread/pwrite, not the wrappers, so nothing is counted twice.
 *
 * The table is lock-free and bounded: an operation posted while it is full
 * is counted at once (requested bytes, no duration) as a dropped event, so
 * the totals keep it; one that aio_return never collects stays in its slot
 * until its aiocb is posted again. A failed post is recorded as a failed
 * call. Return values and errno are the real calls'. */
#include <aio.h>

#include "shim.h"

#define AIO_SLOTS   4096 /* operations in flight at once (power of two) */
#define AIO_PROBES  64   /* slots an aiocb may sit in from its home */
#define AIO_CLAIMED 1    /* a slot being filled or emptied */

/* An operation in flight. */
struct aio_op {
	uint64_t t0, offset, nbytes;
	uint32_t file, site;
	uint8_t op;
};

static struct {
	_Atomic uintptr_t cb; /* the aiocb; 0 = free */
	struct aio_op op;
} ops[AIO_SLOTS];
static _Atomic unsigned n_ops; /* slots in use: aio_return looks only if any */

static unsigned home(const void *cb)
{
	return (unsigned)(((uintptr_t)cb * UINT64_C(0x9e3779b97f4a7c15)) >> 52) & (AIO_SLOTS - 1);
}

/* Takes cb's operation out of the table into *out; false when absent. */
static bool take(const void *cb, struct aio_op *out)
{
	unsigned h = home(cb);
	for (unsigned i = 0; i < AIO_PROBES; i++) {
		__typeof__(ops[0]) *o = &ops[(h + i) & (AIO_SLOTS - 1)];
		uintptr_t want = (uintptr_t)cb;
		if (atomic_load_explicit(&o->cb, memory_order_relaxed) != want ||
		    !atomic_compare_exchange_strong(&o->cb, &want, AIO_CLAIMED))
			continue;
		*out = o->op;
		atomic_store_explicit(&o->cb, 0, memory_order_release);
		atomic_fetch_sub_explicit(&n_ops, 1, memory_order_relaxed);
		return true;
	}
	return false;
}

/* Puts an operation of cb in the table; false when it is full around cb.
 * An earlier operation of the same aiocb that nobody collected goes. */
static bool put(const void *cb, const struct aio_op *op)
{
	struct aio_op stale;
	take(cb, &stale);
	unsigned h = home(cb);
	for (unsigned i = 0; i < AIO_PROBES; i++) {
		__typeof__(ops[0]) *o = &ops[(h + i) & (AIO_SLOTS - 1)];
		uintptr_t free_ = 0;
		if (atomic_load_explicit(&o->cb, memory_order_relaxed) != 0 ||
		    !atomic_compare_exchange_strong(&o->cb, &free_, AIO_CLAIMED))
			continue;
		o->op = *op;
		atomic_fetch_add_explicit(&n_ops, 1, memory_order_relaxed);
		atomic_store_explicit(&o->cb, (uintptr_t)cb, memory_order_release);
		return true;
	}
	return false;
}

/* What a post of cb would record; false when it is not to be recorded. */
static bool describe(const struct aiocb *cb, uint8_t op, uint64_t t0, uint32_t site,
                     struct aio_op *out)
{
	if (!cb || atomic_load_explicit(&shim.state, memory_order_relaxed) != SHIM_ON)
		return false;
	uint32_t file = shim_fd_file(cb->aio_fildes);
	if (!file)
		return false;
	*out = (struct aio_op){.t0 = t0,
	                       .offset = (uint64_t)cb->aio_offset,
	                       .nbytes = cb->aio_nbytes,
	                       .file = file,
	                       .site = site,
	                       .op = op};
	return true;
}

/* Records a posted operation now: a failed post (err), or one the table
 * had no room for (counted as dropped). */
static void record_now(const struct aio_op *o, int err)
{
	struct shim_call c;
	if (!shim_begin_from(&c, IOP_LAYER_POSIX, o->op, o->file, NULL, o->site))
		return;
	c.t0 = o->t0;
	struct shim_result r = {
	    .offset = o->offset, .bytes = o->nbytes, .flags = IOP_EV_OFFSET | IOP_EV_BYTES};
	if (err) {
		r = (struct shim_result){
		    .offset = o->offset, .err = err, .flags = IOP_EV_OFFSET | IOP_EV_ERROR};
		shim_end(&c, &r);
	} else {
		shim_end_dropped(&c, &r);
	}
}

typedef int post_fn(struct aiocb *);

static int post(post_fn *real, struct aiocb *cb, uint8_t op, const void *ra)
{
	struct aio_op o;
	if (!describe(cb, op, 0, 0, &o))
		return real(cb);
	o.site = shim_site_here(ra);
	o.t0 = shim_ticks();
	/* in the table before the real call: another thread may collect the
	 * operation as soon as it is queued */
	bool kept = put(cb, &o);
	int r = real(cb);
	if (r != 0) {
		int e = errno;
		struct aio_op gone;
		if (kept)
			take(cb, &gone);
		record_now(&o, e);
		errno = e;
	} else if (!kept) {
		record_now(&o, 0);
	}
	return r;
}

SHIM_EXPORT int aio_read(struct aiocb *cb)
{
	SHIM_REAL(aio_read);
	return post(real_aio_read, cb, IOP_OP_READ, SHIM_CALLER());
}

SHIM_EXPORT int aio_write(struct aiocb *cb)
{
	SHIM_REAL(aio_write);
	return post(real_aio_write, cb, IOP_OP_WRITE, SHIM_CALLER());
}

/* struct aiocb64 is struct aiocb on 64-bit Linux: the same functions */
_Static_assert(sizeof(struct aiocb64) == sizeof(struct aiocb), "aiocb64 is aiocb");

SHIM_EXPORT int aio_read64(struct aiocb64 *cb)
{
	SHIM_REAL(aio_read64);
	return post((post_fn *)real_aio_read64, (struct aiocb *)cb, IOP_OP_READ, SHIM_CALLER());
}

SHIM_EXPORT int aio_write64(struct aiocb64 *cb)
{
	SHIM_REAL(aio_write64);
	return post((post_fn *)real_aio_write64, (struct aiocb *)cb, IOP_OP_WRITE, SHIM_CALLER());
}

typedef ssize_t return_fn(struct aiocb *);

static ssize_t collect(return_fn *real, struct aiocb *cb)
{
	SHIM_REAL(aio_error);
	struct aio_op o;
	if (atomic_load_explicit(&n_ops, memory_order_relaxed) == 0 ||
	    atomic_load_explicit(&shim.state, memory_order_relaxed) != SHIM_ON || !cb ||
	    !take(cb, &o))
		return real(cb);
	int e = errno;
	int op_err = real_aio_error(cb); /* the operation's errno, before its return */
	errno = e;
	ssize_t r = real(cb);
	struct shim_call c;
	if (!shim_begin_from(&c, IOP_LAYER_POSIX, o.op, o.file, NULL, o.site))
		return r;
	c.t0 = o.t0;
	struct shim_result res = {
	    .offset = o.offset, .bytes = (uint64_t)r, .flags = IOP_EV_OFFSET | IOP_EV_BYTES};
	if (r < 0)
		res = (struct shim_result){.offset = o.offset,
		                           .err = op_err > 0 ? op_err : EIO,
		                           .flags = IOP_EV_OFFSET | IOP_EV_ERROR};
	shim_end(&c, &res);
	return r;
}

SHIM_EXPORT ssize_t aio_return(struct aiocb *cb)
{
	SHIM_REAL(aio_return);
	return collect(real_aio_return, cb);
}

SHIM_EXPORT ssize_t aio_return64(struct aiocb64 *cb)
{
	SHIM_REAL(aio_return64);
	return collect((return_fn *)real_aio_return64, (struct aiocb *)cb);
}

typedef int listio_fn(int, struct aiocb *const[], int, struct sigevent *);

/* Each LIO_READ / LIO_WRITE entry is an operation posted now. */
static int listio(listio_fn *real, int mode, struct aiocb *const list[], int n,
                  struct sigevent *sig, const void *ra)
{
	if (atomic_load_explicit(&shim.state, memory_order_relaxed) != SHIM_ON || !list || n <= 0)
		return real(mode, list, n, sig);
	uint32_t site = shim_site_here(ra);
	uint64_t t0 = shim_ticks();
	for (int i = 0; i < n; i++) {
		struct aiocb *cb = list[i];
		struct aio_op o;
		int code = cb ? cb->aio_lio_opcode : LIO_NOP;
		uint8_t op = code == LIO_READ ? IOP_OP_READ : IOP_OP_WRITE;
		if ((code == LIO_READ || code == LIO_WRITE) && describe(cb, op, t0, site, &o) &&
		    !put(cb, &o))
			record_now(&o, 0);
	}
	int r = real(mode, list, n, sig);
	if (r != 0 && errno == EINVAL) {
		/* refused as a whole (mode, count): nothing was queued */
		int e = errno;
		for (int i = 0; i < n; i++) {
			struct aio_op gone;
			if (list[i])
				take(list[i], &gone);
		}
		errno = e;
	}
	return r;
}

SHIM_EXPORT int lio_listio(int mode, struct aiocb *const list[], int n, struct sigevent *sig)
{
	SHIM_REAL(lio_listio);
	return listio(real_lio_listio, mode, list, n, sig, SHIM_CALLER());
}

SHIM_EXPORT int lio_listio64(int mode, struct aiocb64 *const list[], int n, struct sigevent *sig)
{
	SHIM_REAL(lio_listio64);
	return listio((listio_fn *)real_lio_listio64, mode, (struct aiocb *const *)list, n, sig,
	              SHIM_CALLER());
}
