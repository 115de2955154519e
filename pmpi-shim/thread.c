/* Per-thread state and the record path. Each thread that does I/O gets a
 * shim_thread, mapped on its first call (mmap through syscall: safe in a
 * signal handler, and no malloc inside someone else's malloc), linked into
 * shim.threads for the sender, and marked dead by a pthread key destructor
 * when the thread exits. Its ring is single-producer (the thread) single-
 * consumer (the sender): the thread writes a slot and publishes head with a
 * release store; the sender reads up to head and publishes tail. A full ring
 * drops the event into the thread's drop cells, which the sender folds into
 * the cumulative counters, so totals stay exact. */
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

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

static struct shim_drop_cell *drop_cell(struct shim_thread *t, uint32_t key)
{
	unsigned h = (key * 2654435761u) % SHIM_DROP_MAX;
	for (unsigned i = 0; i < SHIM_DROP_MAX; i++) {
		struct shim_drop_cell *d = &t->drops[(h + i) % SHIM_DROP_MAX];
		uint32_t k = atomic_load_explicit(&d->key, memory_order_relaxed);
		if (k == key)
			return d;
		if (k == 0) {
			atomic_store_explicit(&d->key, key, memory_order_release);
			return d;
		}
	}
	return NULL;
}

/* The ring is full: keep the totals in a drop cell (file 0 when no cell is
 * free, so the layer's totals stay exact even then). */
static void drop(struct shim_thread *t, const struct iop_event *ev)
{
	uint32_t cls = iop_op_class(ev->op);
	uint32_t key = (ev->file << 4 | (uint32_t)ev->layer << 2 | cls) + 1;
	struct shim_drop_cell *d = drop_cell(t, key);
	if (!d)
		d = drop_cell(t, ((uint32_t)ev->layer << 2 | cls) + 1);
	if (d) {
		/* single writer: plain read-modify-write, published for the sender */
		atomic_store_explicit(&d->ops, atomic_load_explicit(&d->ops, memory_order_relaxed) + 1,
				      memory_order_relaxed);
		atomic_store_explicit(&d->bytes,
				      atomic_load_explicit(&d->bytes, memory_order_relaxed) + ev->bytes,
				      memory_order_relaxed);
		atomic_store_explicit(&d->ticks,
				      atomic_load_explicit(&d->ticks, memory_order_relaxed) + ev->dur_ns,
				      memory_order_relaxed);
		atomic_store_explicit(&d->errors,
				      atomic_load_explicit(&d->errors, memory_order_relaxed) +
					      ((ev->flags & IOP_EV_ERROR) != 0),
				      memory_order_relaxed);
	}
	atomic_store_explicit(&t->dropped, atomic_load_explicit(&t->dropped, memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

/* shim_end(), or with to_ring false shim_end_dropped(). */
static inline void finish(struct shim_call *c, const struct shim_result *r, bool to_ring)
{
	uint64_t t1 = shim_ticks();
	int saved = errno;
	struct shim_thread *t = c->t;
	t->busy = 1;
	struct shim_frame *self = &t->stack[--t->depth];

	struct iop_event ev;
	ev.end_ns = t1; /* ticks until the sender converts them */
	ev.dur_ns = t1 - c->t0;
	ev.offset = r->offset;
	ev.bytes = r->bytes;
	ev.err = (uint32_t)r->err;
	ev.file = c->file;
	ev.site = c->site; /* a site key: the sender names it */
	ev.thread = t->tid;
	ev.layer = c->layer;
	ev.op = c->op;
	ev.flags = r->flags;
	ev.parent_id = 0;
	if (self->child_ops) {
		ev.flags |= IOP_EV_CHILDREN;
		ev.call_id = self->call_id;
		ev.child_ops = self->child_ops;
		ev.child_bytes = self->child_bytes;
		ev.child_ns = self->child_ticks;
	} else {
		ev.call_id = ev.child_bytes = ev.child_ns = 0;
		ev.child_ops = 0;
	}
	if (t->depth > 0) {
		struct shim_frame *parent = self - 1;
		if (!parent->call_id)
			parent->call_id = ++t->next_call;
		ev.flags |= IOP_EV_PARENT;
		ev.parent_id = parent->call_id;
		parent->child_ops++;
		parent->child_bytes += ev.bytes;
		parent->child_ticks += ev.dur_ns;
	} else {
		atomic_store_explicit(&t->if_start, 0, memory_order_release);
	}

	uint64_t head = t->head;
	if (to_ring && head - atomic_load_explicit(&t->tail, memory_order_acquire) < SHIM_RING) {
		t->ring[head & (SHIM_RING - 1)] = ev;
		t->head = head + 1;
		atomic_store_explicit(&t->pub_head, head + 1, memory_order_release);
	} else {
		drop(t, &ev);
	}
	/* Sample the shim's own cost on one call in 16 (one more clock read). */
	if ((head & 15) == 0) {
		uint64_t t2 = shim_ticks();
		atomic_store_explicit(&t->shim_ticks,
				      atomic_load_explicit(&t->shim_ticks, memory_order_relaxed) +
					      16 * (t2 - t1),
				      memory_order_relaxed);
	}
	t->busy = 0;
	errno = saved;
}

void shim_end(struct shim_call *c, const struct shim_result *r)
{
	finish(c, r, true);
}

void shim_end_dropped(struct shim_call *c, const struct shim_result *r)
{
	finish(c, r, false);
}
