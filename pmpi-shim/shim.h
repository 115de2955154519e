/* Internal interface of libiopulse.so, shared by the core (core.c, thread.c,
 * names.c, sender.c) and the layers (posix.c, stdio.c, mpiio.c, hdf5.c).
 *
 * A wrapper is boring on purpose:
 *
 *	ssize_t write(int fd, const void *buf, size_t n)
 *	{
 *		SHIM_REAL(write);
 *		struct shim_call c;
 *		uint32_t file = shim_fd_file(fd);
 *		if (!shim_begin(&c, IOP_LAYER_POSIX, IOP_OP_WRITE, file))
 *			return real_write(fd, buf, n);
 *		ssize_t r = real_write(fd, buf, n);
 *		shim_end_io(&c, r, ...);
 *		return r;
 *	}
 *
 * shim_begin() says whether to record (the shim is active, this thread is
 * not inside the shim already, the file is one we watch) and stamps the
 * start; shim_end_*() stamps the end and puts the event in the thread's ring.
 * Neither changes errno. Nothing here takes a lock or allocates on the way
 * of an I/O call, except the first call of a thread (its state is mapped)
 * and opening a file not seen before (its name is interned).
 *
 * shim_begin() also notes where the call came from (its return address:
 * the call site, see sites.c); it is a macro so that the address is the
 * wrapper's own. A helper function that begins a call for a wrapper takes
 * the wrapper's SHIM_CALLER() and uses shim_begin_from(). */
#ifndef IOP_SHIM_H
#define IOP_SHIM_H

#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "clock.h"
#include "events.h"
#include "frame.h"

#define SHIM_EXPORT __attribute__((visibility("default")))
#define SHIM_LIKELY(x)   __builtin_expect(!!(x), 1)
#define SHIM_UNLIKELY(x) __builtin_expect(!!(x), 0)
/* the record path, inlined into every wrapper whatever the compiler's
 * size heuristics say */
#define SHIM_INLINE      static inline __attribute__((always_inline))

/* Declares real_NAME, resolved on first use with dlsym(RTLD_NEXT). The type
 * is the wrapper's own: __typeof__(NAME) needs a prior declaration, which
 * the libc / MPI / HDF5 headers give. */
#define SHIM_REAL(name)                                                                    \
	static __typeof__(name) *real_##name;                                              \
	if (SHIM_UNLIKELY(!real_##name))                                                   \
		real_##name = (__typeof__(name) *)shim_resolve(#name)

/* Looks a symbol up in the libraries after the shim; never NULL for libc
 * symbols. For optional symbols use shim_resolve_opt (NULL when absent). */
void *shim_resolve(const char *name);
void *shim_resolve_opt(const char *name);

/* ------------------------------------------------------------ state */

#define SHIM_RING     65536 /* slots per thread ring (power of two) */
#define SHIM_DEPTH    8    /* nested calls tracked per thread */
#define SHIM_DROP_MAX 64   /* (file, layer, class) cells for dropped events */

enum { SHIM_OFF = 0, SHIM_ON = 1 };

/* One nested call in progress: what its children add up to. All zero
 * unless the call has had a child (its bit in shim_thread.kids): a call
 * without children, the common case, never touches its frame. */
struct shim_frame {
	uint64_t call_id; /* 0 until a child needs it */
	uint64_t child_bytes;
	uint64_t child_ticks;
	uint32_t child_ops;
};

/* A completed call as its thread leaves it in the ring, in ticks; the
 * sender makes an iop_event of it. 48 bytes, written with a few plain
 * stores straight into the slot: four records fill three cache lines. A
 * nested call (IOP_EV_PARENT or IOP_EV_CHILDREN in flags) or a collective
 * one (IOP_EV_COLL) takes the next slot too, for its nesting and number. */
struct shim_rec {
	uint64_t end, dur; /* ticks */
	uint64_t offset, bytes;
	uint32_t file, site; /* site: a site key, named by the sender */
	uint32_t err;
	uint8_t layer, op, flags, unused;
};

struct shim_rec_nest {
	uint64_t call_id, parent_id, child_bytes, child_ticks;
	uint32_t child_ops;
	uint32_t coll_seq, coll_size; /* IOP_EV_COLL: a collective call's number and ranks */
	uint32_t unused;
};

union shim_slot {
	struct shim_rec ev;
	struct shim_rec_nest nest;
};
_Static_assert(sizeof(union shim_slot) == 48, "ring slots are 48 bytes");

/* Totals of events a full ring could not take: still counted exactly. */
struct shim_drop_cell {
	_Atomic uint32_t key; /* file << 4 | layer << 2 | class, +1; 0 = free */
	_Atomic uint64_t ops, bytes, ticks, errors; /* ticks: durations, unconverted */
};

/* An unwind's result, kept for the next call from the same place: a call
 * from return address ra, with the wrapper's frame at anchor, whose stack
 * still holds app_ra at anchor + off, comes from the same application
 * frame (sites.c). */
struct shim_site_memo {
	uintptr_t ra, anchor, app_ra;
	uint32_t off, key;
	uint64_t used; /* when it last served: the least recent one is replaced */
};
#define SHIM_SITE_MEMOS 8

#define SHIM_CACHE_LINE 64

struct shim_thread {
	/* Producer side. This first cache line is all that a call without
	 * children touches of it, besides its ring slot. */
	int busy;           /* inside the shim (or a thread of the shim): pass through */
	unsigned depth;     /* calls in progress on this thread */
	uint32_t kids;      /* bit d: stack[d] has had a child */
	uint32_t root_site; /* site key of the outermost call in progress */
	_Atomic uint64_t head; /* next slot to write, published to the sender */
	uint64_t room_end;  /* head may reach this without a look at tail */
	/* in-flight slot: the outermost call in progress */
	_Atomic uint64_t if_start; /* ticks, 0 = idle */
	_Atomic uint32_t if_what;  /* layer << 6 | op */
	_Atomic uint32_t if_file;
	_Atomic uint64_t shim_ticks; /* sampled time spent in the shim */
	uint64_t next_call;
	uint32_t tid; /* index, from 1; off the first line, which the sender must not read per event */
	struct shim_frame stack[SHIM_DEPTH];
	uint64_t memo_clock;
	_Atomic unsigned memo_seq; /* odd while a memo is being replaced */
	struct shim_site_memo memo[SHIM_SITE_MEMOS];
	_Atomic uint64_t dropped; /* events a full ring could not take */
	unsigned drops_taken;     /* drop cells with a key */
	struct shim_drop_cell drops[SHIM_DROP_MAX];
	/* consumer side (the sender's), away from the producer's lines */
	_Alignas(SHIM_CACHE_LINE) _Atomic uint64_t tail;
	uint64_t drained; /* events taken from the ring */
	uint64_t drops_seen[SHIM_DROP_MAX][4]; /* drop cell values already counted */
	_Atomic int dead; /* the thread exited; the sender frees it once drained */
	struct shim_thread *next;
	/* the ring's pages put in ahead of head (shim_ring_ahead): slots
	 * [ring_base, ring_ready) have theirs; all do at ring_base + SHIM_RING */
	uint64_t ring_base, ring_ready, head_seen, seen_ns;
	_Alignas(SHIM_CACHE_LINE) union shim_slot ring[SHIM_RING];
};
_Static_assert(offsetof(struct shim_thread, shim_ticks) + sizeof(uint64_t) <= SHIM_CACHE_LINE,
	       "what a call touches of its thread's state fits one cache line");

/* The fd table (names.c): an fd's file id (0 until classified,
 * SHIM_FD_IGNORED when not watched) and the shim's idea of its offset. */
#define SHIM_FD_MAX     65536
#define SHIM_FD_IGNORED UINT32_MAX
struct shim_fd_entry {
	_Atomic uint32_t file;
	_Atomic uint64_t offset;
};

struct shim_global {
	/* what every call reads, in one cache line */
	_Atomic int state;   /* SHIM_ON while recording */
	bool use_tsc;        /* ticks are TSC cycles (else CLOCK_MONOTONIC ns) */
	struct shim_fd_entry *fds; /* [SHIM_FD_MAX], names.c */
	uint32_t rank, node_id;
	char host[256]; /* gethostname(); its HOST name record gives the node id */
	int pid; /* of the process that records */
	uint64_t job_id;
	struct iop_key key;
	char addr[256];      /* where frames go (nanomsg URL) */
	char final_addr[256];/* REQ/REP address for the acknowledged last frame, or "" */
	unsigned interval_ms;
	uint64_t split_ns; /* runs of calls coalesced within these windows; 0: off */
	_Atomic(struct shim_thread *) threads;
	_Atomic uint32_t n_threads;
};

extern struct shim_global shim;

SHIM_INLINE uint64_t shim_ticks(void)
{
#if defined(__x86_64__)
	if (SHIM_LIKELY(shim.use_tsc))
		return __rdtsc();
#endif
	return iop_mono_ns();
}

/* This thread's state, created on first use; NULL when it cannot be. */
struct shim_thread *shim_thread_slow(void);
extern __thread struct shim_thread *shim_self_tls __attribute__((tls_model("initial-exec")));

static inline struct shim_thread *shim_self(void)
{
	struct shim_thread *t = shim_self_tls;
	return SHIM_LIKELY(t != NULL) ? t : shim_thread_slow();
}

/* Marks the calling thread as the shim's own: never recorded. */
void shim_thread_mark_internal(void);

/* ------------------------------------------------------------ names */

/* Id of a file by path (made absolute and normalised lexically), interned
 * on first sight; 0 when the path is excluded (system directories, see
 * docs/shim.md) or cannot be made absolute. */
uint32_t shim_name_path(const char *path);
/* path made absolute and normalised into buf; its length, 0 when it cannot be. */
size_t shim_abs_path(const char *path, char *buf, size_t cap);
/* Id of a name of another kind (dataset, pseudo-file like "<stdout>"). */
uint32_t shim_name_text(uint8_t kind, const char *text);

uint32_t shim_fd_file_slow(int fd);

/* File id of a file descriptor: classified on first use (regular files and
 * block devices by path, fds 0-2 as "<stdin>"/"<stdout>"/"<stderr>"), 0
 * when the fd is not watched (sockets, pipes, excluded paths). Inline: a
 * known fd costs two loads. */
static inline uint32_t shim_fd_file(int fd)
{
	if (SHIM_LIKELY((unsigned)fd < SHIM_FD_MAX && shim.fds != NULL)) {
		uint32_t f = atomic_load_explicit(&shim.fds[fd].file, memory_order_relaxed);
		if (SHIM_LIKELY(f != 0))
			return f == SHIM_FD_IGNORED ? 0 : f;
	}
	return shim_fd_file_slow(fd);
}
/* After open/creat/dup: fd now means file (0 = not watched), at offset. */
void shim_fd_set(int fd, uint32_t file, uint64_t offset);
/* After close. */
void shim_fd_clear(int fd);
/* The shim's idea of an fd's offset (for read/write without one). */
static inline uint64_t shim_fd_offset(int fd)
{
	if ((unsigned)fd >= SHIM_FD_MAX || !shim.fds)
		return 0;
	return atomic_load_explicit(&shim.fds[fd].offset, memory_order_relaxed);
}

static inline void shim_fd_advance(int fd, uint64_t to)
{
	if ((unsigned)fd < SHIM_FD_MAX && shim.fds)
		atomic_store_explicit(&shim.fds[fd].offset, to, memory_order_relaxed);
}

/* The shim's own descriptors (guard.c): close() must keep them open. */
bool shim_fd_guarded(int fd);
void shim_fd_guard(int fd);
bool shim_fd_keep_open(int fd);
void shim_fd_taken(int fd); /* dup2/dup3 put the application's file there */
/* In the sender, before it opens anything: a descriptor table of its own
 * (false: refused, the table stays shared and what it opens is guarded).
 * Leaves it 0 and 1 (/dev/null) and 2 (the application's stderr, to say
 * why it cannot connect); shim_fd_table_seal() then puts /dev/null on 2. */
bool shim_fd_table_unshare(void);
void shim_fd_table_seal(void);

/* ------------------------------------------------------------ call sites */

/* The address cache of sites.c: return address -> site key (slot + 1),
 * filled lock-free. Events carry site keys; the sender turns each into a
 * SITE name id the first time it meets it. */
#define SHIM_SITE_SLOTS 16384 /* distinct return addresses (power of two) */
enum { SHIM_SITE_NEW, SHIM_SITE_OUTSIDE, SHIM_SITE_EXCLUDED, SHIM_SITE_UNKNOWN };

struct shim_site_slot {
	_Atomic uintptr_t ip;     /* 0 = free */
	_Atomic uint32_t state;   /* SHIM_SITE_* in bits 0-1, a generation above */
};
extern struct shim_site_slot shim_site_slots[SHIM_SITE_SLOTS];

static inline uint32_t shim_site_hash(uintptr_t ip)
{
	return (uint32_t)((ip * UINT64_C(0x9e3779b97f4a7c15)) >> 50) & (SHIM_SITE_SLOTS - 1);
}

uint32_t shim_site_slow(struct shim_thread *t, uintptr_t ip);

/* Site key of a call whose wrapper returns to ra: the slot of ra itself when
 * ra lies outside the excluded objects (the shim, libc, MPI, HDF5 ...), else
 * that of the first frame outside them (an unwind). 0 when unknown. */
SHIM_INLINE uint32_t shim_site_of(struct shim_thread *t, const void *ra)
{
	uintptr_t ip = (uintptr_t)ra;
	uint32_t h = shim_site_hash(ip);
	struct shim_site_slot *s = &shim_site_slots[h];
	if (SHIM_LIKELY(atomic_load_explicit(&s->ip, memory_order_relaxed) == ip &&
			(atomic_load_explicit(&s->state, memory_order_acquire) & 3) ==
				SHIM_SITE_OUTSIDE))
		return h + 1;
	return shim_site_slow(t, ip);
}

/* For calls completed later (MPI requests, split collectives, aio): the
 * site of a call made now from ra, to pass to shim_begin_from() at
 * completion. Inside another recorded call it is that call's site. */
uint32_t shim_site_here(const void *ra);

/* ------------------------------------------------------------ calls */

struct shim_call {
	struct shim_thread *t;
	uint64_t t0;
	uint32_t file;
	uint32_t site; /* site key (0 = unknown) */
	uint8_t layer, op;
};

#define SHIM_CALLER() __builtin_return_address(0)
#define shim_begin(c, layer, op, file) shim_begin_from((c), (layer), (op), (file), SHIM_CALLER(), 0)

/* shim_begin() for a call from ra, or of a known site (site != 0). A call
 * nested in another takes the outermost call's site: an MPI-IO call's POSIX
 * calls carry the line of the application that made the MPI-IO call. */
SHIM_INLINE bool shim_begin_from(struct shim_call *c, unsigned layer, unsigned op, uint32_t file,
				   const void *ra, uint32_t site)
{
	if (SHIM_UNLIKELY(atomic_load_explicit(&shim.state, memory_order_relaxed) != SHIM_ON))
		return false;
	struct shim_thread *t = shim_self();
	if (SHIM_UNLIKELY(!t || t->busy))
		return false;
	/* read once: a signal handler's calls meanwhile leave it as it was */
	unsigned depth = t->depth;
	if (SHIM_UNLIKELY(depth >= SHIM_DEPTH))
		return false;
	c->t = t;
	c->file = file;
	c->layer = (uint8_t)layer;
	c->op = (uint8_t)op;
	/* before the start time: an unwind is not the call's time */
	if (SHIM_LIKELY(depth == 0)) /* kept in c too: a signal handler's call may reset it */
		t->root_site = c->site = site ? site : shim_site_of(t, ra);
	else
		c->site = t->root_site;
	c->t0 = shim_ticks();
	t->depth = depth + 1;
	if (SHIM_LIKELY(depth == 0)) {
		atomic_store_explicit(&t->if_what, layer << 6 | op, memory_order_relaxed);
		atomic_store_explicit(&t->if_file, file, memory_order_relaxed);
		atomic_store_explicit(&t->if_start, c->t0, memory_order_release);
	}
	return true;
}

void shim_frame_clear(struct shim_thread *t, unsigned depth);

/* Forgets a call begun with shim_begin(): nothing is recorded. */
static inline void shim_cancel(struct shim_call *c)
{
	struct shim_thread *t = c->t;
	unsigned depth = --t->depth;
	if (SHIM_UNLIKELY(t->kids >> depth & 1))
		shim_frame_clear(t, depth);
	if (depth == 0)
		atomic_store_explicit(&t->if_start, 0, memory_order_release);
}

/* For calls that name a file by path: the path is read only once the real
 * call has accepted it (a bad pointer fails with EFAULT there, never with a
 * crash in the shim). Sets c->file and returns true when the call is to be
 * recorded; otherwise cancels it (excluded path, EFAULT). Keeps errno. */
static inline bool shim_path_after(struct shim_call *c, const char *path, bool failed)
{
	int e = errno;
	uint32_t file = failed && e == EFAULT ? 0 : shim_name_path(path);
	errno = e;
	if (!file) {
		shim_cancel(c);
		return false;
	}
	c->file = file;
	if (c->t->depth == 1)
		atomic_store_explicit(&c->t->if_file, file, memory_order_relaxed);
	return true;
}

/* What a call did, for shim_end(). */
struct shim_result {
	uint64_t bytes;  /* with IOP_EV_BYTES */
	uint64_t offset; /* with IOP_EV_OFFSET */
	int err;         /* errno when the call failed (IOP_EV_ERROR) */
	uint32_t coll_seq, coll_size; /* with IOP_EV_COLL (mpiio.h) */
	uint8_t flags;   /* IOP_EV_BYTES, IOP_EV_OFFSET, IOP_EV_ERROR, IOP_EV_COLL */
};

/* The record of a call that ended at t1, written in place in its slot. */
SHIM_INLINE void shim_rec_write(struct shim_rec *ev, const struct shim_call *c,
				  const struct shim_result *r, uint64_t t1, uint8_t flags)
{
	ev->end = t1;
	ev->dur = t1 - c->t0;
	ev->offset = r->offset;
	ev->bytes = r->bytes;
	ev->file = c->file;
	ev->site = c->site;
	ev->err = (uint32_t)r->err;
	ev->layer = c->layer;
	ev->op = c->op;
	ev->flags = flags;
}

/* PREFETCHW where there is one (x86-64 CPUs without it take it for a
 * NOP): the line comes to be written, not shared with the sender's copy.
 * __builtin_prefetch emits it only when the target allows it (-mprfchw). */
static inline void shim_prefetch_for_write(const void *p)
{
#if defined(__x86_64__)
	__asm__ volatile("prefetchw %0" : : "m"(*(const char *)p));
#else
	__builtin_prefetch(p, 1, 3);
#endif
}

/* Samples the shim's own cost on one call in 16 (one more clock read):
 * from the end of the real call at t1 to now, with busy set. */
SHIM_INLINE void shim_sample_cost(struct shim_thread *t, uint64_t head, uint64_t t1)
{
	if ((head & 15) == 0) {
		uint64_t t2 = shim_ticks();
		atomic_store_explicit(&t->shim_ticks,
				      atomic_load_explicit(&t->shim_ticks, memory_order_relaxed) +
					      16 * (t2 - t1),
				      memory_order_relaxed);
	}
}

/* shim_end() of every other case (thread.c), with busy set, the call having
 * ended at t1. */
void shim_end_slow(struct shim_call *c, const struct shim_result *r, uint64_t t1);

/* Stamps the end of a call begun with shim_begin() and puts its event in
 * the thread's ring. Inline for the common case: the thread's outermost
 * call, which had no children, with room in the ring as last seen; the
 * rest is shim_end_slow(). Touches no errno: nothing here can set it (the
 * clock is rdtsc or the vDSO's clock_gettime, which does not fail). busy is set
 * before the thread's state is read: a signal handler's I/O passes through
 * while the ring and the stack are half updated, and cannot move head
 * under us; the signal fences keep the compiler from moving those reads
 * and updates outside it. */
SHIM_INLINE void shim_end(struct shim_call *c, const struct shim_result *r)
{
	uint64_t t1 = shim_ticks();
	struct shim_thread *t = c->t;
	t->busy = 1;
	atomic_signal_fence(memory_order_seq_cst);
	uint64_t head = atomic_load_explicit(&t->head, memory_order_relaxed);
	if (SHIM_UNLIKELY(t->depth != 1 || (t->kids & 1) || head + 1 > t->room_end ||
			  (r->flags & IOP_EV_COLL))) {
		/* copies: the fast path's c and r stay in registers */
		struct shim_call cc = *c;
		struct shim_result rr = *r;
		shim_end_slow(&cc, &rr, t1);
		return;
	}
	t->depth = 0;
	atomic_store_explicit(&t->if_start, 0, memory_order_release);
	shim_rec_write(&t->ring[head & (SHIM_RING - 1)].ev, c, r, t1, r->flags);
	atomic_store_explicit(&t->head, head + 1, memory_order_release);
	/* The next call's slot, for writing: its line is likely in the
	 * sender's cache (it read it a ring ago), and fetching it now,
	 * while the application runs, keeps that off the next call. */
	shim_prefetch_for_write(&t->ring[(head + 1) & (SHIM_RING - 1)]);
	shim_sample_cost(t, head, t1);
	atomic_signal_fence(memory_order_seq_cst);
	t->busy = 0;
}

/* A call the shim cannot follow to its end (the aio table is full): in the
 * totals (and stats.dropped) as if its event had been dropped. */
void shim_end_dropped(struct shim_call *c, const struct shim_result *r);

/* The common cases. A transfer that returned r (< 0: failed with errno). */
SHIM_INLINE void shim_end_io(struct shim_call *c, int64_t r, uint64_t offset, bool has_offset)
{
	struct shim_result res = {.offset = offset, .flags = has_offset ? IOP_EV_OFFSET : 0};
	if (r < 0) {
		res.err = errno;
		res.flags |= IOP_EV_ERROR;
	} else {
		res.bytes = (uint64_t)r;
		res.flags |= IOP_EV_BYTES;
	}
	shim_end(c, &res);
}

/* A call that succeeded when ok (else failed with errno); no bytes. */
static inline void shim_end_meta(struct shim_call *c, bool ok)
{
	struct shim_result res = {.err = ok ? 0 : errno, .flags = ok ? 0 : IOP_EV_ERROR};
	shim_end(c, &res);
}

/* ------------------------------------------------------------ lifecycle */

/* Sends what is pending and a FINAL frame, then stops recording. Called at
 * exit, MPI_Finalize and fatal signals; idempotent. */
void shim_finish(const char *why);
/* MPI_Init told us our rank. */
void shim_set_rank(uint32_t rank);
/* This process owns the sender: it started the shim, or it is a forked
 * child with a sender of its own (not a vfork child). */
bool shim_owner_process(void);
/* Resolves the real exec functions (exec.c), at start-up. */
void shim_exec_init(void);

/* Sender (sender.c). */
/* Starts the sender, which connects from its own descriptor table, and
 * calibrates the clock meanwhile; 0 when it is connected. Then
 * shim_sender_go() once recording is on: the rounds begin. */
int shim_sender_start(void);
/* A forked child's state (its fork handler, in this order): threads and
 * objects, then the sender, which says whether the child records. */
void shim_threads_after_fork(void);
/* From the sender, with the head it read at now_ns: faults in the pages of t's ring
 * that the thread will write before the next round, so that its calls do
 * not (each first touch of a page costs the thread a fault after its
 * call's clock read, ~1 us, and much more on a host short of free pages). */
void shim_ring_ahead(struct shim_thread *t, uint64_t head, uint64_t now_ns);
/* Pages shim_ring_ahead() put in, in this process (IOPULSE_LOG=debug says
 * it at exit). */
uint64_t shim_ring_pages_ahead(void);
void shim_objects_after_fork(void);
bool shim_sender_after_fork(void);
void shim_sender_go(void);
/* At exit: has the sender send the last frame and waits for it while
 * frames go out (1 s, then 4 wait_ms + 100 ms, without one: it gives
 * up). Async-signal-safe. */
void shim_sender_stop_and_flush(unsigned wait_ms);
/* From a signal handler: has the sender send the last frame, waits for it
 * wait_ms, again while the sender makes progress. Async-signal-safe. */
void shim_sender_fatal(unsigned wait_ms);
/* From a signal handler that interrupted an exit's wait for its last
 * frame: waits for that frame as shim_sender_fatal() does. */
void shim_sender_await_last(unsigned wait_ms);
/* Before an exec: has the sender send the last frame and park, waits for
 * it a bounded time (about SHIM_EXEC_WAIT_MS); true when the caller must
 * call shim_sender_exec_failed() if the exec returns. Async-signal-safe. */
#define SHIM_EXEC_WAIT_MS 250
bool shim_sender_exec_begin(void);
void shim_sender_exec_failed(void);

/* nodeleaf.c: on another node than a multi-node job's root, points addr
 * and final at this node's leaf (starting it when first) and returns true. */
bool shim_node_leaf(const char *host, char *addr, size_t addr_len, char *final, size_t final_len);

#endif
