/* Per-thread state and the record path. Each thread that does I/O gets a
 * shim_thread, mapped on its first call (mmap through syscall: safe in a
 * signal handler, and no malloc inside someone else's malloc), linked into
 * shim.threads for the sender, and marked dead by a pthread key destructor
 * when the thread exits. Its ring is single-producer (the thread) single-
 * consumer (the sender): the thread writes a slot (two for a nested call)
 * and publishes head with a release store; the sender reads up to head and
 * publishes tail. A full ring drops the event into the thread's drop
 * cells, which the sender folds into the cumulative counters, so totals
 * stay exact. */
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "clock.h"
#include "shim.h"

__thread struct shim_thread *shim_self_tls __attribute__((tls_model("initial-exec")));

static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;

static void thread_exit(void *arg)
{
	struct shim_thread *t = arg;
	shim_self_tls = NULL;
	atomic_store_explicit(&t->dead, 1, memory_order_release);
}

static void make_exit_key(void)
{
	pthread_key_create(&exit_key, thread_exit);
}

struct shim_thread *shim_thread_slow(void)
{
	int saved = errno;
	void *m = (void *)syscall(SYS_mmap, NULL, sizeof(struct shim_thread),
				  PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED) {
		errno = saved;
		return NULL;
	}
	struct shim_thread *t = m; /* zero-filled */
	t->busy = 1; /* nothing below may record */
	t->tid = atomic_fetch_add(&shim.n_threads, 1) + 1;
	t->next_call = (uint64_t)t->tid << 40;
	t->seen_ns = iop_mono_ns(); /* its ring's pages: the rate from now on (shim_ring_ahead) */
	struct shim_thread *head = atomic_load(&shim.threads);
	do
		t->next = head;
	while (!atomic_compare_exchange_weak(&shim.threads, &head, t));
	shim_self_tls = t;
	pthread_once(&exit_key_once, make_exit_key);
	pthread_setspecific(exit_key, t);
	t->busy = 0;
	errno = saved;
	return t;
}

void shim_thread_mark_internal(void)
{
	struct shim_thread *t = shim_self();
	if (t)
		t->busy = 1;
}

/* Cells only the (file 0, layer, class) keys may take: one for each. */
#define DROP_SPARE 16

/* key's cell; a free one is taken while fewer than limit are. */
static struct shim_drop_cell *drop_cell(struct shim_thread *t, uint32_t key, unsigned limit)
{
	unsigned h = (key * 2654435761u) % SHIM_DROP_MAX;
	for (unsigned i = 0; i < SHIM_DROP_MAX; i++) {
		struct shim_drop_cell *d = &t->drops[(h + i) % SHIM_DROP_MAX];
		uint32_t k = atomic_load_explicit(&d->key, memory_order_relaxed);
		if (k == key)
			return d;
		if (k == 0) {
			if (t->drops_taken >= limit)
				return NULL;
			t->drops_taken++;
			atomic_store_explicit(&d->key, key, memory_order_release);
			return d;
		}
	}
	return NULL;
}

/* The ring is full: keep the totals in a drop cell (file 0 when no cell is
 * free, so the layer's totals stay exact even then: the last DROP_SPARE
 * cells are kept for those). */
static void drop(struct shim_thread *t, const struct shim_call *c, uint64_t bytes, uint64_t ticks,
		 bool failed)
{
	_Static_assert(IOP_LAYER__COUNT * IOP_CLASS__COUNT <= DROP_SPARE,
		       "a spare drop cell for each (layer, class)");
	uint32_t cls = iop_op_class(c->op);
	uint32_t key = (c->file << 4 | (uint32_t)c->layer << 2 | cls) + 1;
	struct shim_drop_cell *d = drop_cell(t, key, SHIM_DROP_MAX - DROP_SPARE);
	if (!d)
		d = drop_cell(t, ((uint32_t)c->layer << 2 | cls) + 1, SHIM_DROP_MAX);
	if (d) {
		/* single writer: plain read-modify-write, published for the sender */
		atomic_store_explicit(&d->ops, atomic_load_explicit(&d->ops, memory_order_relaxed) + 1,
				      memory_order_relaxed);
		atomic_store_explicit(&d->bytes,
				      atomic_load_explicit(&d->bytes, memory_order_relaxed) + bytes,
				      memory_order_relaxed);
		atomic_store_explicit(&d->ticks,
				      atomic_load_explicit(&d->ticks, memory_order_relaxed) + ticks,
				      memory_order_relaxed);
		atomic_store_explicit(&d->errors,
				      atomic_load_explicit(&d->errors, memory_order_relaxed) + failed,
				      memory_order_relaxed);
	}
	atomic_store_explicit(&t->dropped, atomic_load_explicit(&t->dropped, memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

/* The call at depth is over: its frame is zero again for the next one. */
void shim_frame_clear(struct shim_thread *t, unsigned depth)
{
	t->stack[depth] = (struct shim_frame){0};
	t->kids &= ~(1u << depth);
}

/* Whether the ring has need free slots from head: the sender's tail is
 * read only when the room seen last time is used up (it moves rarely, and
 * its cache line is the sender's). */
static inline bool ring_room(struct shim_thread *t, uint64_t head, unsigned need)
{
	if (SHIM_LIKELY(head + need <= t->room_end))
		return true;
	t->room_end = atomic_load_explicit(&t->tail, memory_order_acquire) + SHIM_RING;
	return head + need <= t->room_end;
}

/* shim_end_slow(), or with to_ring false shim_end_dropped(): the call
 * ended at t1. busy keeps a signal handler's I/O out while the stack and
 * the ring are half updated (see shim_end()). */
static inline void finish(struct shim_call *c, const struct shim_result *r, uint64_t t1,
			  bool to_ring)
{
	struct shim_thread *t = c->t;
	t->busy = 1;
	atomic_signal_fence(memory_order_seq_cst);
	unsigned depth = --t->depth;
	uint64_t dur = t1 - c->t0;
	uint8_t flags = r->flags;
	uint64_t parent_id = 0;
	if (depth > 0) {
		struct shim_frame *parent = &t->stack[depth - 1];
		if (!parent->call_id)
			parent->call_id = ++t->next_call;
		flags |= IOP_EV_PARENT;
		parent_id = parent->call_id;
		parent->child_ops++;
		parent->child_bytes += r->bytes;
		parent->child_ticks += dur;
		t->kids |= 1u << (depth - 1);
	} else {
		atomic_store_explicit(&t->if_start, 0, memory_order_release);
	}
	bool has_kids = t->kids >> depth & 1;
	if (has_kids)
		flags |= IOP_EV_CHILDREN;
	bool nested = flags & (IOP_EV_PARENT | IOP_EV_CHILDREN | IOP_EV_COLL);
	uint64_t head = atomic_load_explicit(&t->head, memory_order_relaxed);
	if (SHIM_LIKELY(to_ring && ring_room(t, head, 1 + nested))) {
		shim_rec_write(&t->ring[head & (SHIM_RING - 1)].ev, c, r, t1, flags);
		if (nested) {
			const struct shim_frame *self = &t->stack[depth];
			struct shim_rec_nest *n = &t->ring[(head + 1) & (SHIM_RING - 1)].nest;
			n->parent_id = parent_id;
			n->call_id = self->call_id;
			n->child_ops = self->child_ops;
			n->child_bytes = self->child_bytes;
			n->child_ticks = self->child_ticks;
			n->coll_seq = r->coll_seq;
			n->coll_size = r->coll_size;
		}
		atomic_store_explicit(&t->head, head + 1 + nested, memory_order_release);
		shim_prefetch_for_write(&t->ring[(head + 1 + nested) & (SHIM_RING - 1)]);
	} else {
		drop(t, c, r->bytes, dur, flags & IOP_EV_ERROR);
	}
	if (has_kids)
		shim_frame_clear(t, depth);
	shim_sample_cost(t, head, t1);
	atomic_signal_fence(memory_order_seq_cst);
	t->busy = 0;
}

void shim_end_slow(struct shim_call *c, const struct shim_result *r, uint64_t t1)
{
	finish(c, r, t1, true);
}

void shim_end_dropped(struct shim_call *c, const struct shim_result *r)
{
	finish(c, r, shim_ticks(), false);
}

/* In a forked child, from its fork handler: only the thread that forked
 * came along. The others' states are let go, and this one's ring is
 * emptied: what it held is the parent's to send, and the child's counts
 * start from zero (sender.c). */
void shim_threads_after_fork(void)
{
	struct shim_thread *self = shim_self_tls;
	for (struct shim_thread *t = atomic_load(&shim.threads), *next; t; t = next) {
		next = t->next;
		if (t != self)
			syscall(SYS_munmap, t, sizeof *t);
	}
	if (self) {
		uint64_t head = atomic_load_explicit(&self->head, memory_order_relaxed);
		atomic_store_explicit(&self->tail, head, memory_order_relaxed);
		self->room_end = head + SHIM_RING;
		self->drained = 0;
		atomic_store_explicit(&self->dropped, 0, memory_order_relaxed);
		atomic_store_explicit(&self->shim_ticks, 0, memory_order_relaxed);
		memset(self->drops, 0, sizeof self->drops);
		memset(self->drops_seen, 0, sizeof self->drops_seen);
		self->drops_taken = 0;
		self->next = NULL;
		/* its pages are the parent's until written (copy on write) */
		self->ring_base = self->ring_ready = self->head_seen = head;
		self->seen_ns = 0;
	}
	atomic_store(&shim.threads, self);
}

/* ------------------------------------------------------------ ring pages */

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

/* Slots put in ahead of head: twice what the thread would write in a
 * whole interval at the rate it wrote since the sender's last look (the
 * sender's next round comes within an interval, sooner for a busy thread:
 * sender.c next_nap_ns), at least RING_AHEAD_MIN (12 KiB), at most half
 * the ring. A thread that makes a few calls is not given pages it will
 * not use (a burst of 300 calls in a round: 28 KiB, not 1.5 MiB). */
#define RING_AHEAD_MIN 256u

static _Atomic bool ring_ahead_off; /* the kernel has no MADV_POPULATE_WRITE */
static _Atomic uint64_t ring_pages_ahead; /* pages put in so */

uint64_t shim_ring_pages_ahead(void)
{
	return atomic_load_explicit(&ring_pages_ahead, memory_order_relaxed);
}

/* Faults in the pages of ring slots [from, to) (absolute: mod SHIM_RING). */
static bool ring_populate(struct shim_thread *t, uint64_t from, uint64_t to)
{
	const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	while (from < to) {
		uint64_t i = from & (SHIM_RING - 1), n = to - from;
		if (n > SHIM_RING - i)
			n = SHIM_RING - i; /* up to the ring's end, then from its start */
		uintptr_t a = (uintptr_t)&t->ring[i] & ~(page - 1);
		uintptr_t b = ((uintptr_t)&t->ring[i + n] + page - 1) & ~(page - 1);
		/* SYS_madvise: the sender's own, not a call of the application's */
		if (syscall(SYS_madvise, (void *)a, b - a, MADV_POPULATE_WRITE) != 0) {
			if (errno == EINVAL)
				atomic_store_explicit(&ring_ahead_off, true, memory_order_relaxed);
			return false;
		}
		atomic_fetch_add_explicit(&ring_pages_ahead, (b - a) / page, memory_order_relaxed);
		from += n;
	}
	return true;
}

void shim_ring_ahead(struct shim_thread *t, uint64_t head, uint64_t now_ns)
{
	const uint64_t all = t->ring_base + SHIM_RING;
	if (t->ring_ready >= all)
		return;
	uint64_t burst = head - t->head_seen, elapsed = now_ns - t->seen_ns;
	t->head_seen = head;
	t->seen_ns = now_ns;
	if (head >= all || atomic_load_explicit(&ring_ahead_off, memory_order_relaxed)) {
		t->ring_ready = all; /* every page touched, or nothing to do it with */
		return;
	}
	const uint64_t interval_ns = (uint64_t)shim.interval_ms * 1000000u;
	uint64_t ahead = SHIM_RING / 2;
	if (burst < SHIM_RING / 4 && elapsed > 0) {
		uint64_t rate_ahead = 2 * burst * interval_ns / elapsed;
		ahead = rate_ahead < RING_AHEAD_MIN ? RING_AHEAD_MIN
		        : rate_ahead < SHIM_RING / 2 ? rate_ahead : SHIM_RING / 2;
	}
	/* batched: nothing while half of what should be ahead still is */
	if (t->ring_ready >= head + ahead / 2)
		return;
	uint64_t from = t->ring_ready > head ? t->ring_ready : head;
	uint64_t to = head + ahead < all ? head + ahead : all;
	int saved = errno;
	t->ring_ready = ring_populate(t, from, to) ? to : all; /* failed: the thread's own faults */
	errno = saved;
}
