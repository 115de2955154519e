/* The sender thread: every interval (10 ms by default) it drains the thread
 * rings, keeps the cumulative counters, and sends frames over a nanomsg PUSH
 * socket with NN_DONTWAIT, so the application never waits on the monitor. A
 * frame the socket refuses is counted (send_failures); its events, counters
 * and names stay pending, and the next frame is built once the socket can
 * take it (every name and counter again), so totals stay exact: only what
 * overflows the rings meanwhile is dropped (counted). The last frame goes
 * out with a short bounded wait,
 * acknowledged over REQ/REP when IOPULSE_FINAL_ADDR is set.
 *
 * This thread has a descriptor table of its own (shim_fd_table_unshare(): the
 * application's threads then do not share theirs with it, which spares
 * every read and write the kernel's reference counting), so it alone makes
 * nanomsg calls: nanomsg's workers, sockets and eventfds are created from
 * it and live in its table. Everyone else only asks and waits a bounded
 * time: exit (shim_finish), MPI_Finalize (a flush), a fatal signal's
 * handler, an exec (this thread then sends the last frame and parks until
 * the exec fails). A request is a flag or a counter, then wake(); answers
 * come back through progress (a futex), so asking and waiting are
 * async-signal-safe. Events carry site keys; draining turns them into SITE
 * names (sites.c), named here, once.
 *
 * A forked child gets a sender of its own (shim_sender_after_fork()), the
 * same rounds over a pipe spwire.c speaks by hand, since nanomsg does not
 * survive fork. */
#include <nanomsg/nn.h>
#include <nanomsg/pipeline.h>
#include <nanomsg/reqrep.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "names.h"
#include "sender_api.h"
#include "shim.h"
#include "sites.h"
#include "spool.h"
#include "spool_out.h"
#include "spwire.h"

#define STAGE     4096
#define FRAME_CAP (64 * 1024)
#define CELLS     (IOP_LAYER__COUNT * IOP_CLASS__COUNT)
#define HEARTBEAT_NS (500 * 1000000ull)
#define SHIM_CONNECT_MS 250 /* a forked child's connection, at most */

struct cum {
	uint64_t ops, bytes, ns, errors;
	uint8_t dirty;
};

static struct {
	int sock;
	pthread_t thread;
	bool running;
	_Atomic int stop;
	unsigned last_wait_ms;          /* each send of the last frame, at exit */
	_Atomic int go;                 /* recording on: rounds may start (once calibrated) */
	_Atomic int gone;               /* the thread ended, or never connected */
	_Atomic unsigned setup_done;    /* the socket is up */
	_Atomic unsigned last_begun, last_done; /* the last frame at exit */
	_Atomic uint32_t wake_seq;      /* a futex: bumped by wake() */
	uint32_t wake_seen;             /* wake_seq when the thread last woke */
	_Atomic uint32_t progress;      /* a futex: bumped when a request is served */
	_Atomic unsigned frames_out;    /* frames nanomsg took */
	_Atomic unsigned work;          /* events drained, frames sent: it is not stuck */
	struct iop_clock clk;
	uint64_t seq;
	uint32_t announced; /* next name id to announce */
	struct cum *cum;    /* [file id * CELLS + layer * 3 + class] */
	uint32_t cum_files;
	uint32_t *dirty;    /* indexes into cum */
	uint32_t n_dirty, dirty_cap;
	struct iop_event stage[STAGE];
	unsigned n_stage;
	bool final_sent;
	uint64_t round_pending; /* most events one ring held this round */
	bool need_resync, resynced_for_final;
	bool rings_left; /* the last collect() left events in a ring */
	bool stage_full; /* ... because the stage was full (not new ones) */
	bool refused;    /* the last frame offered was refused */
	uint64_t last_sent_ns; /* CLOCK_REALTIME of the last frame sent */
	_Atomic int fatal_request;
	_Atomic unsigned fatal_done;
	_Atomic unsigned flush_asked, flush_served; /* MPI_Finalize's flushes */
	_Atomic int exec_pending;             /* threads inside an exec */
	_Atomic unsigned exec_asked, exec_served; /* last frames asked for, sent */
	uint64_t send_failures, retired_events, retired_dropped, retired_ticks;
	bool calibrated;
	/* A forked child's sender (shim_sender_after_fork): nanomsg is not
	 * used, the pipe is spwire.c's, connected once there is something to
	 * send (a child that only execs or exits sends nothing). */
	bool forked;
	bool table_done;        /* forked: its own descriptor table tried */
	struct shim_sp sp;      /* forked: the PUSH pipe (fd -1 while not connected) */
	struct shim_sp *req;    /* forked: the REQ pipe while the last frame goes out */
	unsigned send_ms;       /* forked: how long a send that may wait waits */
	uint64_t next_connect_ns; /* forked: CLOCK_MONOTONIC of the next try */
	struct shim_sp_pend pend;
	uint8_t pend_buf[FRAME_CAP + 16];
	uint8_t frame[FRAME_CAP];
	/* the spool (spool_out.h): whether the final address has one, the
	 * frames sent lately, when this process image began */
	bool may_spool;
	struct shim_keep keep;
	uint64_t image_ns;
} S = {.sock = -1, .announced = 1, .sp = {.fd = -1}};

static void *map(size_t len)
{
	void *m = (void *)syscall(SYS_mmap, NULL, len, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return m == MAP_FAILED ? NULL : m;
}

/* Counter cell for (file, layer, class), grown on demand; NULL when memory
 * runs out (then that file's counters are folded into file 0's). */
static struct cum *cell(uint32_t file, unsigned layer, unsigned cls)
{
	if (file >= S.cum_files) {
		uint32_t n = S.cum_files ? S.cum_files : 1024;
		while (n <= file)
			n *= 2;
		struct cum *c = map((size_t)n * CELLS * sizeof *c);
		if (!c)
			return file ? cell(0, layer, cls) : NULL;
		if (S.cum) {
			memcpy(c, S.cum, (size_t)S.cum_files * CELLS * sizeof *c);
			syscall(SYS_munmap, S.cum, (size_t)S.cum_files * CELLS * sizeof *c);
		}
		S.cum = c;
		S.cum_files = n;
	}
	uint32_t i = file * CELLS + layer * IOP_CLASS__COUNT + cls;
	struct cum *c = &S.cum[i];
	if (!c->dirty) {
		if (S.n_dirty == S.dirty_cap) {
			uint32_t cap = S.dirty_cap ? S.dirty_cap * 2 : 4096;
			uint32_t *d = map(cap * sizeof *d);
			if (!d)
				return c; /* counted, sent with the final frame */
			if (S.dirty) {
				memcpy(d, S.dirty, S.n_dirty * sizeof *d);
				syscall(SYS_munmap, S.dirty, S.dirty_cap * sizeof *d);
			}
			S.dirty = d;
			S.dirty_cap = cap;
		}
		S.dirty[S.n_dirty++] = i;
		c->dirty = 1;
	}
	return c;
}

static void count(uint32_t file, unsigned layer, unsigned cls, uint64_t ops, uint64_t bytes,
		  uint64_t ns, uint64_t errors)
{
	struct cum *c = cell(file, layer, cls);
	if (c) {
		c->ops += ops;
		c->bytes += bytes;
		c->ns += ns;
		c->errors += errors;
	}
}

/* Moves events from one ring to the stage, converting ticks to ns. */
static void drain(struct shim_thread *t, uint64_t now_ns)
{
	uint64_t head = atomic_load_explicit(&t->head, memory_order_acquire);
	uint64_t tail = atomic_load_explicit(&t->tail, memory_order_relaxed);
	if (head - tail > S.round_pending)
		S.round_pending = head - tail;
	const uint32_t tid = t->tid; /* once: the stores below may alias it */
	uint64_t taken = 0;
	while (tail < head && S.n_stage < STAGE) {
		const struct shim_rec *r = &t->ring[tail & (SHIM_RING - 1)].ev;
		struct iop_event *ev = &S.stage[S.n_stage++];
		ev->end_ns = iop_clock_ns(&S.clk, r->end);
		ev->dur_ns = iop_clock_dur_ns(&S.clk, r->dur);
		if (ev->dur_ns > ev->end_ns)
			ev->dur_ns = ev->end_ns;
		ev->offset = r->offset;
		ev->bytes = r->bytes;
		ev->file = r->file;
		ev->err = r->err;
		ev->thread = tid;
		ev->layer = r->layer;
		ev->op = r->op;
		ev->flags = r->flags;
		if (r->flags & (IOP_EV_PARENT | IOP_EV_CHILDREN | IOP_EV_COLL)) {
			const struct shim_rec_nest *n = &t->ring[(tail + 1) & (SHIM_RING - 1)].nest;
			ev->parent_id = n->parent_id;
			ev->call_id = n->call_id;
			ev->child_ops = n->child_ops;
			ev->child_bytes = n->child_bytes;
			ev->child_ns = r->flags & IOP_EV_CHILDREN
					       ? iop_clock_dur_ns(&S.clk, n->child_ticks) : 0;
			ev->coll_seq = n->coll_seq;
			ev->coll_size = n->coll_size;
			tail += 2;
		} else {
			ev->parent_id = ev->call_id = ev->child_bytes = ev->child_ns = 0;
			ev->child_ops = 0;
			ev->coll_seq = ev->coll_size = 0;
			tail++;
		}
		taken++;
		/* not while a fatal signal's handler waits: the thread it stopped
		 * may hold the names lock */
		ev->site = shim_site_name(r->site, !atomic_load(&S.fatal_request));
		count(ev->file, ev->layer, iop_op_class(ev->op), 1, ev->bytes, ev->dur_ns,
		      (ev->flags & IOP_EV_ERROR) != 0);
		/* one writer: a plain store, seen by an exit waiting for us */
		atomic_store_explicit(&S.work,
				      atomic_load_explicit(&S.work, memory_order_relaxed) + 1,
				      memory_order_relaxed);
	}
	t->drained += taken;
	atomic_store_explicit(&t->tail, tail, memory_order_release);
	shim_ring_ahead(t, head, now_ns);
}

/* Adds what full rings dropped since the last look to the counters. */
static void fold_drops(struct shim_thread *t)
{
	for (unsigned i = 0; i < SHIM_DROP_MAX; i++) {
		struct shim_drop_cell *d = &t->drops[i];
		uint32_t key = atomic_load_explicit(&d->key, memory_order_acquire);
		if (!key)
			continue;
		uint64_t v[4] = {atomic_load_explicit(&d->ops, memory_order_relaxed),
				 atomic_load_explicit(&d->bytes, memory_order_relaxed),
				 atomic_load_explicit(&d->ticks, memory_order_relaxed),
				 atomic_load_explicit(&d->errors, memory_order_relaxed)};
		uint64_t *seen = t->drops_seen[i];
		if (v[0] == seen[0])
			continue;
		key--;
		count(key >> 4, (key >> 2) & 3, key & 3, v[0] - seen[0], v[1] - seen[1],
		      iop_clock_dur_ns(&S.clk, v[2] - seen[2]), v[3] - seen[3]);
		memcpy(seen, v, sizeof v);
	}
}

/* Drains every ring; frees the state of threads that exited and are empty
 * (not the list head, which an exiting thread may be racing to replace). */
static void collect(void)
{
	struct shim_thread *prev = NULL;
	S.rings_left = S.stage_full = false;
	const uint64_t now = iop_mono_ns();
	for (struct shim_thread *t = atomic_load(&shim.threads); t;) {
		/* Whether it had exited, read before its ring and drop cells: then
		 * everything it wrote before exiting is visible to what follows. */
		bool dead = atomic_load_explicit(&t->dead, memory_order_acquire);
		drain(t, now);
		fold_drops(t);
		struct shim_thread *next = t->next;
		bool empty = atomic_load(&t->tail) == atomic_load(&t->head);
		S.rings_left |= !empty; /* the stage was full, or new calls came */
		S.stage_full |= !empty && S.n_stage == STAGE;
		if (prev && empty && dead) {
			prev->next = next;
			S.retired_events += t->drained;
			S.retired_dropped += atomic_load(&t->dropped);
			S.retired_ticks += atomic_load(&t->shim_ticks);
			syscall(SYS_munmap, t, sizeof *t);
		} else {
			prev = t;
		}
		t = next;
	}
}

static void stats(struct iop_stats *st)
{
	uint64_t events = S.retired_events, dropped = S.retired_dropped, ticks = S.retired_ticks;
	for (struct shim_thread *t = atomic_load(&shim.threads); t; t = t->next) {
		uint64_t d = atomic_load_explicit(&t->dropped, memory_order_relaxed);
		events += t->drained + d; /* those still in a ring count once drained */
		dropped += d;
		ticks += atomic_load_explicit(&t->shim_ticks, memory_order_relaxed);
	}
	st->events = events;
	st->dropped = dropped;
	st->shim_ns = iop_clock_dur_ns(&S.clk, ticks);
	st->send_failures = S.send_failures;
}

static void add_inflight(struct iop_frame_enc *e)
{
	for (struct shim_thread *t = atomic_load(&shim.threads); t; t = t->next) {
		uint64_t start = atomic_load_explicit(&t->if_start, memory_order_acquire);
		if (!start || atomic_load_explicit(&t->dead, memory_order_relaxed))
			continue;
		uint32_t what = atomic_load_explicit(&t->if_what, memory_order_relaxed);
		struct iop_inflight f = {
			.start_ns = iop_clock_ns(&S.clk, start),
			.bytes = 0, /* not known before the call returns */
			.thread = t->tid, .file = atomic_load_explicit(&t->if_file, memory_order_relaxed),
			.layer = (uint8_t)(what >> 6), .op = (uint8_t)(what & 63)};
		if (iop_enc_inflight(e, &f) != IOP_OK)
			return;
	}
}

/* Builds one frame from what is pending. *names_to and *counters_in say
 * what it holds, to commit once it is sent. */
static enum iop_err build(bool final, size_t *len, uint32_t *names_to, uint32_t *counters_in,
			  unsigned *events_in)
{
	struct iop_frame_hdr h = {.job_id = shim.job_id, .seq = S.seq, .node_id = shim.node_id,
				  .rank = shim.rank, .pid = (uint32_t)getpid(),
				  .base_ns = S.n_stage ? S.stage[0].end_ns : iop_real_ns()};
	struct iop_stats st;
	stats(&st);
	/* static: only the sender builds frames, and the encoder holds a run's
	 * histogram (~5 KiB) */
	static struct iop_frame_enc e;
	enum iop_err err = iop_enc_begin(&e, S.frame, sizeof S.frame, &h, &st);
	iop_enc_coalesce(&e, shim.split_ns);
	uint32_t id = S.announced, n_names = shim_names_count();
	/* Each loop stops at the first record that does not fit: id and k
	 * count what went in (names filling the frame leave room for no
	 * counter at all: k stays 0). */
	for (; err == IOP_OK && id < n_names; id++) {
		const struct shim_name *n = shim_name_get(id);
		struct iop_name rec = {.kind = n->kind, .id = id, .hash = n->hash, .text = n->text,
				       .len = n->len};
		if ((err = iop_enc_name(&e, &rec)) != IOP_OK)
			break;
	}
	*names_to = id;
	uint32_t k = 0;
	for (; err == IOP_OK && k < S.n_dirty; k++) {
		uint32_t i = S.dirty[k];
		struct iop_counter c = {.file = i / CELLS, .layer = (uint8_t)(i % CELLS / IOP_CLASS__COUNT),
					.cls = (uint8_t)(i % IOP_CLASS__COUNT), .ops = S.cum[i].ops,
					.bytes = S.cum[i].bytes, .time_ns = S.cum[i].ns,
					.errors = S.cum[i].errors};
		if ((err = iop_enc_counter(&e, &c)) != IOP_OK)
			break;
	}
	*counters_in = k;
	if (err == IOP_OK)
		add_inflight(&e);
	unsigned n = 0;
	while (err == IOP_OK && n < S.n_stage && (err = iop_enc_event(&e, &S.stage[n])) == IOP_OK)
		n++;
	*events_in = n;
	if (err != IOP_OK && err != IOP_ERR_FULL)
		return err;
	bool everything = *names_to == n_names && *counters_in == S.n_dirty && n == S.n_stage &&
			  !S.rings_left;
	if (final && everything)
		iop_enc_set_flags(&e, IOP_FRAME_FINAL);
	return iop_enc_finish(&e, &shim.key, len);
}

/* What a sent frame held is done with. */
static void commit(uint32_t names_to, uint32_t counters_in, unsigned events_in)
{
	S.announced = names_to;
	for (uint32_t k = 0; k < counters_in; k++)
		S.cum[S.dirty[k]].dirty = 0;
	if (S.n_dirty > counters_in)
		memmove(S.dirty, S.dirty + counters_in, (S.n_dirty - counters_in) * sizeof *S.dirty);
	S.n_dirty -= counters_in;
	memmove(S.stage, S.stage + events_in, (S.n_stage - events_in) * sizeof *S.stage);
	S.n_stage -= events_in;
	S.seq++;
}

/* Everything again: every name, every counter. After a refused send (the
 * collector may have restarted and lost what it had) and before the last
 * frame, so that a receiver that joined late still gets whole totals. */
static void resync(void)
{
	S.announced = 1;
	for (uint32_t i = 0; i < S.cum_files * CELLS; i++)
		if (S.cum[i].ops && !S.cum[i].dirty)
			cell(i / CELLS, i % CELLS / IOP_CLASS__COUNT, i % IOP_CLASS__COUNT);
	S.need_resync = false;
}

/* ------------------------------------------------------------ the link */

/* The pipe a forked child's frames go through now. */
static struct shim_sp *raw_pipe(void)
{
	return S.req ? S.req : &S.sp;
}

/* Whether the socket would take a frame now (a collector is connected and
 * its pipe has room); when nanomsg cannot tell, it may. */
static bool writable(void)
{
	if (S.forked)
		return shim_sp_writable(raw_pipe());
	struct nn_pollfd p = {.fd = S.sock, .events = NN_POLLOUT};
	return nn_poll(&p, 1, 0) != 0;
}

/* Sends the frame built: with no wait, or waiting at most the send
 * timeout (link_timeout()). */
static bool link_send(size_t len, bool wait)
{
	if (S.forked)
		return shim_sp_send(raw_pipe(), S.frame, len, wait ? S.send_ms : 0) == 0;
	return nn_send(S.sock, S.frame, len, wait ? 0 : NN_DONTWAIT) == (int)len;
}

static void link_timeout(int ms)
{
	if (S.forked)
		S.send_ms = (unsigned)ms;
	else
		nn_setsockopt(S.sock, NN_SOL_SOCKET, NN_SNDTIMEO, &ms, sizeof ms);
}

/* The socket is there to send on: always in the process that started the
 * shim; a forked child connects now, or tries again 100 ms later. Its
 * first connection is made from a descriptor table of its own, as the
 * parent's sender's is (shim_fd_table_unshare()). */
static bool link_up(void)
{
	if (!S.forked || S.req || S.sp.fd >= 0)
		return true;
	uint64_t now = iop_mono_ns();
	if (now < S.next_connect_ns)
		return false;
	bool own_table = false;
	if (!S.table_done) {
		own_table = shim_fd_table_unshare();
		S.table_done = true;
	}
	/* 250 ms: a collector that does not answer by then (stopped, starved)
	 * is tried again 100 ms later; at 1 s, an exit found the sender still
	 * connecting when it stopped waiting for the last frame to begin
	 * (run_e2e_stalled_collector: fio's forked jobs left no spool file) */
	int e = shim_sp_connect(&S.sp, shim.addr, SHIM_SP_PUSH, &S.pend, SHIM_CONNECT_MS);
	if (e) {
		iop_debug("forked child: cannot connect to collector %s (%s)", shim.addr, strerror(-e));
		S.next_connect_ns = now + 100000000u;
	} else {
		S.need_resync = true; /* a new pipe: every name and counter on it */
		atomic_fetch_add_explicit(&S.work, 1, memory_order_relaxed); /* not stuck */
	}
	if (own_table)
		shim_fd_table_seal();
	return e == 0;
}

/* The link closed, what it had taken written out first (at most wait_ms). */
static void link_close(unsigned wait_ms)
{
	if (S.forked) {
		shim_sp_close(&S.sp, wait_ms);
		S.need_resync = true;
	} else if (S.sock >= 0) {
		nn_close(S.sock);
		S.sock = -1;
	}
}

/* A forked child that has recorded nothing at all, seen from any thread:
 * every ring empty and nothing dropped, and the sender holds nothing and
 * has sent nothing (it fills the stage and the counters before it
 * publishes a ring's tail). Its exit and its exec need no last frame, and
 * do not wait for the sender: most forks exec or exit at once. The
 * sender asks it too, after a collect(): no frame, not even a heartbeat
 * (the child's inherited names alone are not worth one), while a call
 * in flight (maybe hung) is reported. */
static bool child_recorded_nothing(void)
{
	if (!S.forked)
		return false;
	for (struct shim_thread *t = atomic_load(&shim.threads); t; t = t->next)
		if (atomic_load_explicit(&t->tail, memory_order_acquire) !=
			    atomic_load_explicit(&t->head, memory_order_acquire) ||
		    atomic_load_explicit(&t->dropped, memory_order_relaxed) ||
		    atomic_load_explicit(&t->if_start, memory_order_relaxed))
			return false;
	return !S.n_stage && !S.n_dirty && !S.seq;
}

/* Sends frames until nothing is pending (or max frames); false when the
 * socket refused one, or (flags NN_DONTWAIT) would have. */
static bool cycle(bool final, int flags, unsigned max)
{
	if (S.need_resync || (final && !S.resynced_for_final)) {
		resync();
		S.resynced_for_final = final;
	}
	for (unsigned f = 0; f < max; f++) {
		collect();
		if (child_recorded_nothing())
			return true;
		/* Nothing new: still a frame every HEARTBEAT_NS, so that a call
		 * hung in flight is reported and the collector knows the process
		 * is alive (a silent one is taken for dead). */
		if (!final && !S.n_stage && !S.n_dirty && !S.rings_left &&
		    S.announced == shim_names_count() &&
		    (f > 0 || iop_real_ns() - S.last_sent_ns < HEARTBEAT_NS))
			return true;
		/* After a refusal, a frame is built again only once the socket
		 * can take it: each build encodes and MACs every pending event
		 * (the stage is full by then), and the rounds come every 1 ms
		 * while the rings fill, so without a collector the sender took
		 * three times the CPU it takes with one (docs/shim.md). The
		 * events stay pending, the stage and the rings as before. */
		if (!link_up() || ((flags & NN_DONTWAIT) && S.refused && !writable()))
			return false;
		if (S.need_resync) /* link_up() connected a forked child again */
			resync();
		size_t len;
		uint32_t names_to, counters_in;
		unsigned events_in;
		if (build(final, &len, &names_to, &counters_in, &events_in) != IOP_OK)
			return false;
		if (!link_send(len, !(flags & NN_DONTWAIT))) {
			/* Refused (no collector yet, or a full pipe): everything
			 * stays pending, the events too, and the next round tries
			 * again. While it is refused the stage stays full and the
			 * rings fill behind it: their overflow is what is dropped
			 * (and counted). Dropping the staged events here lost a
			 * round's worth at every start, before the connection was up. */
			S.send_failures++;
			S.need_resync = true;
			S.refused = true;
			return false;
		}
		S.refused = false;
		if (S.may_spool)
			shim_keep_frame(&S.keep, S.frame, len);
		S.last_sent_ns = iop_real_ns();
		atomic_fetch_add_explicit(&S.frames_out, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&S.work, 1, memory_order_relaxed);
		bool last = final && (iop_load_u16le(S.frame + 6) & IOP_FRAME_FINAL);
		commit(names_to, counters_in, events_in);
		if (last) {
			S.final_sent = true;
			return true;
		}
		/* The frame took everything collected, and the stage had room
		 * for all the rings held: the round ends. What the threads
		 * recorded since waits for the next round (the nap keeps the
		 * rings under a quarter full). Going on sent a frame of the
		 * ~200 calls a streaming thread makes while one is sent, up to
		 * 64 a round: 9,785 frames for 2 M pwrites, each with its own
		 * syscalls, MAC and decode. */
		if (!final && !S.n_stage && !S.stage_full && !S.n_dirty &&
		    S.announced == shim_names_count())
			return true;
	}
	return true;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

/* ------------------------------------------------------------ requests */

static void futex_wake(_Atomic uint32_t *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/* Sleeps while *word is still seen, at most ns (it may return sooner). */
static void futex_wait_ns(_Atomic uint32_t *word, uint32_t seen, uint64_t ns)
{
	struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
	syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, seen, &ts, NULL, 0);
}

/* Wakes the sender early (a request): async-signal-safe. */
static void wake(void)
{
	atomic_fetch_add(&S.wake_seq, 1);
	futex_wake(&S.wake_seq);
}

/* The sender served a request, or ended: wakes whoever waits. */
static void served(void)
{
	atomic_fetch_add(&S.progress, 1);
	futex_wake(&S.progress);
}

/* Waits until *count reaches want (counts wrap), at most ms, and no longer
 * once the sender is gone: true when it did. Async-signal-safe. */
static bool wait_count(_Atomic unsigned *count, unsigned want, unsigned ms)
{
	uint64_t end = iop_mono_ns() + (uint64_t)ms * 1000000u;
	for (;;) {
		uint32_t seen = atomic_load(&S.progress);
		if ((int)(atomic_load(count) - want) >= 0)
			return true;
		uint64_t now = iop_mono_ns();
		if (atomic_load(&S.gone) || now >= end)
			return false;
		futex_wait_ns(&S.progress, seen, end - now);
	}
}

/* wait_count(flag, 1, ms), ms after ms for as long as the sender keeps
 * draining events and sending frames (a last frame may follow many: the
 * rings of every thread, each frame's send bounded on its own, sites named
 * on the way), no longer once it stops. */
static bool wait_while_sending(_Atomic unsigned *flag, unsigned ms)
{
	for (;;) {
		unsigned done = atomic_load_explicit(&S.work, memory_order_relaxed);
		if (wait_count(flag, 1, ms))
			return true;
		if (atomic_load(&S.gone) || atomic_load_explicit(&S.work, memory_order_relaxed) == done)
			return false;
	}
}

/* Sleeps ns nanoseconds, or until someone wakes us (a wake() since the
 * last nap ended counts: its request was made after we last looked). */
static void nap_ns(uint64_t ns)
{
	uint32_t seq = atomic_load(&S.wake_seq);
	if (seq == S.wake_seen)
		futex_wait_ns(&S.wake_seq, seq, ns);
	S.wake_seen = atomic_load(&S.wake_seq);
}

static void nap(unsigned ms)
{
	nap_ns((uint64_t)ms * 1000000u);
}

/* How long the sender sleeps before its next round: the interval, or less
 * when a ring fills fast. At the rate the fullest ring filled since the
 * last round (events per elapsed time), it is to be a quarter full when
 * the sender comes back; the rest is slack for a sender kept off the CPU.
 * Never less than 1 ms. A fixed short nap only after a ring was seen over
 * a quarter full (what this replaces) swung between the two: one short
 * round found little, the next long one overflowed the ring (a third of a
 * 1.4 M calls/s loop's events dropped). */
static uint64_t next_nap_ns(uint64_t elapsed_ns, uint64_t pending)
{
	const uint64_t floor_ns = 1000000u, interval_ns = (uint64_t)shim.interval_ms * 1000000u;
	if (pending == 0)
		return interval_ns;
	uint64_t ns = (uint64_t)((unsigned __int128)elapsed_ns * (SHIM_RING / 4) / pending);
	return ns < floor_ns ? floor_ns : ns > interval_ns ? interval_ns : ns;
}

static bool send_final_acked(unsigned wait_ms);

/* The most frames a spool file takes (64 KiB each): more than the rings
 * and the stage hold. */
#define SPOOL_MAX_FRAMES 1024

/* The last frames no collector acknowledged, into the spool of the final
 * address (common/spool.h), for the leaf to take when it can: the frames
 * sent lately (the leaf takes those it lacks), then, when the FINAL frame
 * was not sent, everything pending, every name and counter again, in
 * frames up to a FINAL one. True when the spool holds a FINAL frame.
 * Frames sent before the kept ones and never handed out are not there:
 * their calls are missing and said so (the summary's "lost on the way"),
 * the totals whole (every counter is in the FINAL frame). */
static bool spool_unacked(void)
{
	if (!S.may_spool)
		return false;
	struct shim_spool sp;
	if (!shim_spool_open(&sp, shim.final_addr, shim.node_id, (uint32_t)getpid(), S.image_ns))
		return false;
	bool final = false;
	if (S.final_sent) {
		/* the FINAL frame is the last kept, or (no memory to keep) S.frame */
		final = S.keep.half[0] ? shim_spool_write_kept(&sp, &S.keep)
		                       : shim_spool_write(&sp, S.frame,
		                                          iop_frame_len_at(S.frame, sizeof S.frame));
	} else if (shim_spool_write_kept(&sp, &S.keep)) {
		/* every name and counter again: a frame sent over REQ and not
		 * answered, or over PUSH and never written, may have held them */
		resync();
		S.resynced_for_final = true;
		for (unsigned f = 0; f < SPOOL_MAX_FRAMES && !final; f++) {
			collect();
			size_t len;
			uint32_t names_to, counters_in;
			unsigned events_in;
			if (build(true, &len, &names_to, &counters_in, &events_in) != IOP_OK ||
			    !shim_spool_write(&sp, S.frame, len))
				break;
			final = iop_load_u16le(S.frame + 6) & IOP_FRAME_FINAL;
			commit(names_to, counters_in, events_in);
		}
		S.final_sent = final;
	}
	return shim_spool_close(&sp) && final;
}

/* Everything pending, then the FINAL frame (acknowledged over REQ/REP when
 * IOPULSE_FINAL_ADDR is set, else into the spool), each send waiting at
 * most wait_ms. */
static void send_last(unsigned wait_ms)
{
	collect();
	if (child_recorded_nothing())
		return;
	link_timeout((int)wait_ms);
	if (shim.final_addr[0]) {
		cycle(false, 0, 1024); /* everything but the last frame, over PUSH */
		if (send_final_acked(wait_ms) || spool_unacked())
			return;
	}
	if (S.final_sent)
		return;
	/* A send that waited wait_ms in vain after others went through met a
	 * collector slow to drain (a loaded machine), not an absent one: the
	 * frames it had not taken yet are tried again, a few times. */
	for (int tries = 0; tries < 4; tries++) {
		unsigned sent = atomic_load_explicit(&S.frames_out, memory_order_relaxed);
		if (cycle(true, 0, 1024)) {
			/* nanomsg has no linger: give its I/O thread a moment to
			 * write what was accepted (a refused send means no
			 * collector: no wait). A forked child's pipe has written
			 * it, but the receiving nanomsg drops a message it has
			 * read and not yet handed out when the pipe closes: the
			 * same moment is left to it before the close. */
			sleep_ms(wait_ms < 50 ? wait_ms : 50);
			return;
		}
		if (atomic_load_explicit(&S.frames_out, memory_order_relaxed) == sent)
			return;
	}
}

/* A FINAL frame may be sent again (an exec failed). */
static void rearm_final(void)
{
	S.final_sent = false;
	S.resynced_for_final = false;
}

/* Before an exec: the last frame, then nothing (parked) while an exec is in
 * progress, so that no frame follows the FINAL one of a process image that
 * an exec replaces. When every exec has failed, recording goes on and
 * frames follow with later sequence numbers (docs/shim.md); a thread that
 * asks meanwhile gets a last frame of its own. */
static void final_for_exec(void)
{
	unsigned asked;
	do {
		asked = atomic_load(&S.exec_asked);
		rearm_final();
		send_last(SHIM_EXEC_WAIT_MS);
		if (S.forked) /* its pipe does not survive the exec: written out now */
			link_close(SHIM_EXEC_WAIT_MS);
		atomic_store(&S.exec_served, asked);
		served();
		while (atomic_load(&S.exec_pending) && atomic_load(&S.exec_asked) == asked &&
		       !atomic_load(&S.stop) && !atomic_load(&S.fatal_request))
			nap(shim.interval_ms);
	} while (atomic_load(&S.exec_asked) != asked && !atomic_load(&S.stop) &&
		 !atomic_load(&S.fatal_request));
	rearm_final();
}

/* The last frame, because a signal handler asked. */
static void final_for_signal(void)
{
	if (S.forked) {
		/* A forked child's SIGTERM (core.c): its whole I/O may be in
		 * this last frame (a Pool's worker ends right after its task),
		 * so it goes as at exit, acknowledged when the run has a final
		 * address: a PUSH frame 20 ms before the pipe closed was
		 * dropped by the receiving nanomsg under load (run_e2e_forked,
		 * 2 runs of 6 beside other tests) */
		send_last(200);
		link_close(100);
	} else {
		link_timeout(200);
		if (cycle(true, 0, 1024))
			sleep_ms(20); /* let nanomsg's threads write it and hand it out */
		/* unacknowledged: a copy in the spool, taken once */
		(void)spool_unacked();
	}
	atomic_store(&S.fatal_done, 1);
	served();
}

/* The last frame at exit, then the socket closed. */
static void final_for_exit(void)
{
	atomic_store(&S.last_begun, 1);
	served();
	send_last(S.last_wait_ms);
	link_close(S.last_wait_ms);
	atomic_store(&S.last_done, 1);
	served();
}

/* The rounds, until exit, a fatal signal or an exec ends them. */
static void serve(void)
{
	/* the first round soon: a program may start with a burst of I/O */
	uint64_t wait_ns = 1000000u, last_round = iop_mono_ns();
	while (!atomic_load(&S.stop)) {
		nap_ns(wait_ns);
		uint64_t now = iop_mono_ns();
		if (atomic_load(&S.fatal_request)) {
			final_for_signal();
			return;
		}
		if (atomic_load(&S.exec_asked) != atomic_load(&S.exec_served)) {
			final_for_exec();
			continue;
		}
		/* this may wait for the loader's lock */
		shim_objects_refresh();
		if (atomic_load(&S.stop))
			break;
		unsigned flush = atomic_load(&S.flush_asked);
		bool flushing = flush != atomic_load(&S.flush_served);
		S.round_pending = 0;
		cycle(false, NN_DONTWAIT, flushing ? 1024 : 64);
		if (flushing) {
			atomic_store(&S.flush_served, flush);
			served();
		}
		wait_ns = next_nap_ns(now - last_round, S.round_pending);
		last_round = now;
	}
	final_for_exit();
}

/* The collector's socket, from this thread (its table, when it has its
 * own). Logs why not: stderr is still the application's here. */
static bool open_socket(void)
{
	S.sock = nn_socket(AF_SP, NN_PUSH);
	if (S.sock < 0 || nn_connect(S.sock, shim.addr) < 0) {
		iop_warn("cannot connect to collector %s (%s): not monitoring", shim.addr,
			 nn_strerror(nn_errno()));
		if (S.sock >= 0)
			nn_close(S.sock);
		S.sock = -1;
		return false;
	}
	int sndbuf = 4 << 20;
	nn_setsockopt(S.sock, NN_SOL_SOCKET, NN_SNDBUF, &sndbuf, sizeof sndbuf);
	return true;
}

static void calibrate(void);

static void *sender_main(void *arg)
{
	(void)arg;
	shim_thread_mark_internal();
	/* nanomsg's workers, started from here, inherit the name (and the table) */
	pthread_setname_np(pthread_self(), "iopulse-sender");
	if (S.forked) {
		/* Connects once there is something to send (link_up()), not
		 * at once: a connection a fork (a shell's every command) costs
		 * the collector ~3 ms of CPU on this test host, and most
		 * children exec or exit without I/O. */
		if (!S.calibrated)
			calibrate(); /* the fork came before the parent's ended */
		serve();
		atomic_store(&S.gone, 1);
		served();
		return NULL;
	}
	bool own_table = shim_fd_table_unshare();
	bool connected = open_socket();
	if (connected) {
		atomic_store(&S.setup_done, 1);
		served();
		calibrate(); /* before the seal: a warning still reaches stderr */
	}
	if (own_table)
		shim_fd_table_seal();
	if (connected) {
		/* rounds only once the clock is calibrated and recording is on */
		while (!atomic_load(&S.go) && !atomic_load(&S.stop))
			nap(10);
		if (atomic_load(&S.go))
			serve();
		else
			nn_close(S.sock); /* the start gave up waiting for us */
	}
	atomic_store(&S.gone, 1);
	served();
	return NULL;
}

bool shim_sender_exec_begin(void)
{
	if (!S.running || atomic_load(&S.stop) || atomic_load(&S.gone) ||
	    child_recorded_nothing())
		return false;
	atomic_fetch_add(&S.exec_pending, 1);
	unsigned mine = atomic_fetch_add(&S.exec_asked, 1) + 1;
	wake();
	/* bounded: the exec goes ahead anyway if the sender cannot finish */
	wait_count(&S.exec_served, mine, SHIM_EXEC_WAIT_MS + 250);
	return true;
}

void shim_sender_exec_failed(void)
{
	if (atomic_fetch_sub(&S.exec_pending, 1) == 1)
		wake();
}

void shim_sender_fatal(unsigned wait_ms)
{
	/* not on the sender itself (a fault of its own): nobody to ask */
	if (!S.running || pthread_equal(pthread_self(), S.thread))
		return;
	atomic_store(&S.fatal_request, 1);
	wake();
	/* Bounded: if the sender cannot finish (it may need a lock the
	 * interrupted code holds, such as malloc's), the process dies anyway:
	 * wait_ms, again while it still drains events, connects and sends
	 * frames. */
	wait_while_sending(&S.fatal_done, wait_ms);
}

void shim_sender_await_last(unsigned wait_ms)
{
	if (S.running && atomic_load(&S.stop) && !pthread_equal(pthread_self(), S.thread))
		wait_while_sending(&S.last_done, wait_ms);
}

/* A last frame is wanted: exit, MPI_Finalize, exec or a fatal signal. */
static bool last_frame_wanted(void)
{
	return atomic_load(&S.stop) || atomic_load(&S.fatal_request) ||
	       atomic_load(&S.exec_asked) != atomic_load(&S.exec_served) ||
	       atomic_load(&S.flush_asked) != atomic_load(&S.flush_served);
}

/* Naps until CLOCK_MONOTONIC reaches until_ns; false when a last frame is
 * wanted first. */
static bool calib_nap(uint64_t until_ns)
{
	for (uint64_t now; (now = iop_mono_ns()) < until_ns;) {
		if (last_frame_wanted())
			return false;
		nap_ns(until_ns - now);
	}
	return true;
}

#define SHIM_CALIB_MS 20

/* In the sender, while the application runs (its start-up used to sleep
 * through it): SHIM_CALIB_MS, cut short when the process wants its last
 * frame, so that a short-lived process (cp, a shell's commands) does not
 * wait for it at exit. Ticks stamped before calibration ends are converted
 * after it; the sender's rounds begin once it has. */
static void calibrate(void)
{
	if (!shim.use_tsc) {
		iop_clock_init_mono(&S.clk);
		S.calibrated = true;
		return;
	}
	struct iop_clock_calib k = {0};
	uint64_t end = iop_mono_ns() + SHIM_CALIB_MS * UINT64_C(1000000);
	iop_clock_calib_mark(&k);
	bool full = calib_nap(end - SHIM_CALIB_MS * UINT64_C(500000));
	iop_clock_calib_mark(&k);
	full = full && calib_nap(end);
	iop_clock_calib_mark(&k);
	if (!iop_clock_calib_done(&S.clk, &k, full))
		iop_warn("TSC calibration was inconsistent (%.0f Hz); timings may be off",
			 S.clk.tsc_hz);
	S.calibrated = true;
}

static int start_thread(void)
{
	/* nanomsg's worker threads and ours inherit this mask: signals go to
	 * the application's threads, never to a thread holding the shim's
	 * locks. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	int r = pthread_create(&S.thread, NULL, sender_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return r;
}

int shim_sender_start(void)
{
	char spool[PATH_MAX];
	S.image_ns = iop_real_ns();
	S.may_spool = shim.final_addr[0] && iop_spool_dir(shim.final_addr, spool, sizeof spool);
	if (start_thread() != 0)
		return -1;
	/* Bounded: nn_socket and nn_connect do not wait for the network. */
	if (!wait_count(&S.setup_done, 1, 2000)) {
		atomic_store(&S.stop, 1);
		wake();
		return -1;
	}
	S.running = true;
	return 0;
}

void shim_sender_go(void)
{
	atomic_store(&S.go, 1);
	wake();
}

/* send_final_acked() in a forked child: over spwire.c's REQ pipe. */
static bool send_final_acked_raw(unsigned wait_ms)
{
	struct shim_sp req;
	if (shim_sp_connect(&req, shim.final_addr, SHIM_SP_REQ, NULL, wait_ms) != 0)
		return false;
	S.req = &req;
	bool ok = cycle(true, 0, 1) && S.final_sent;
	S.req = NULL;
	uint8_t reply;
	ok = ok && shim_sp_reply(&req, &reply, 1, wait_ms) >= 0;
	shim_sp_close(&req, 0);
	return ok;
}

/* The last frame over REQ/REP, so that its arrival is known. */
static bool send_final_acked(unsigned wait_ms)
{
	if (S.forked)
		return send_final_acked_raw(wait_ms);
	int req = nn_socket(AF_SP, NN_REQ);
	if (req < 0)
		return false;
	int ms = (int)wait_ms;
	nn_setsockopt(req, NN_SOL_SOCKET, NN_SNDTIMEO, &ms, sizeof ms);
	nn_setsockopt(req, NN_SOL_SOCKET, NN_RCVTIMEO, &ms, sizeof ms);
	bool ok = false;
	if (nn_connect(req, shim.final_addr) >= 0) {
		int saved_sock = S.sock;
		S.sock = req;
		/* one request, one reply: the rest already went over PUSH */
		ok = cycle(true, 0, 1) && S.final_sent;
		S.sock = saved_sock;
		char *reply = NULL;
		ok = ok && nn_recv(req, &reply, NN_MSG, 0) >= 0;
		if (reply)
			nn_freemsg(reply);
	}
	nn_close(req);
	return ok;
}


void shim_sender_stop_and_flush(unsigned wait_ms)
{
	if (!S.running || atomic_load(&S.fatal_done))
		return;
	if (child_recorded_nothing()) {
		atomic_store(&S.stop, 1);
		wake();
		return;
	}
	S.last_wait_ms = wait_ms;
	atomic_store(&S.stop, 1);
	wake();
	/* Bounded: the sender ends its round first, and it may be waiting for
	 * the loader's lock (a refresh of the objects), held by this very
	 * thread if it exits from a library's constructor inside dlopen, or
	 * for a lock of the shim's that this thread holds (an exit from a
	 * signal handler): then there is no last frame. While it sends, it is
	 * not stuck: each window (1 s, then what send_last() may take without
	 * a frame going out: three sends of wait_ms and a pause) starts again. */
	if (!wait_while_sending(&S.last_begun, 1000))
		return;
	wait_while_sending(&S.last_done, 4 * wait_ms + 100);
}

void shim_flush(void)
{
	/* not once recording is off, nor while an exec is in progress */
	if (!S.running || atomic_load(&shim.state) != SHIM_ON || atomic_load(&S.exec_pending))
		return;
	unsigned mine = atomic_fetch_add(&S.flush_asked, 1) + 1;
	wake();
	wait_count(&S.flush_served, mine, 250);
}

/* In a forked child, from its fork handler (one thread: the one that
 * forked; its ring was emptied by shim_threads_after_fork()). The
 * parent's sender did not come along and nanomsg cannot be used here (its
 * worker threads stayed behind, its locks may be held). The child records
 * as a process of its own, the way the leaf sees one (its pid): counters
 * from zero, every name announced again, and a sender of its own, which
 * connects through spwire.c once there is something to send. False when
 * the parent was not recording (or was ending): the child does not. */
bool shim_sender_after_fork(void)
{
	bool was_on = S.running && !atomic_load(&S.stop) && !atomic_load(&S.gone) &&
		      !atomic_load(&S.fatal_request) && !atomic_load(&S.exec_pending);
	if (S.cum)
		syscall(SYS_munmap, S.cum, (size_t)S.cum_files * CELLS * sizeof *S.cum);
	if (S.dirty)
		syscall(SYS_munmap, S.dirty, S.dirty_cap * sizeof *S.dirty);
	/* (had the parent's sender been growing either at the fork, the new
	 * mapping is lost to the child and the old one may be gone already:
	 * both are dropped, not used) */
	S.cum = NULL;
	S.dirty = NULL;
	S.cum_files = S.n_dirty = S.dirty_cap = 0;
	S.n_stage = 0;
	S.seq = 0;
	S.announced = 1;
	S.final_sent = S.need_resync = S.resynced_for_final = S.rings_left = S.refused = false;
	S.round_pending = S.last_sent_ns = 0;
	S.send_failures = S.retired_events = S.retired_dropped = S.retired_ticks = 0;
	shim_keep_reset(&S.keep); /* the parent's frames */
	S.image_ns = iop_real_ns();
	atomic_store(&S.stop, 0);
	atomic_store(&S.gone, 0);
	atomic_store(&S.setup_done, 0);
	atomic_store(&S.last_begun, 0);
	atomic_store(&S.last_done, 0);
	atomic_store(&S.frames_out, 0);
	atomic_store(&S.work, 0);
	atomic_store(&S.fatal_request, 0);
	atomic_store(&S.fatal_done, 0);
	atomic_store(&S.flush_asked, 0);
	atomic_store(&S.flush_served, 0);
	atomic_store(&S.exec_pending, 0);
	atomic_store(&S.exec_asked, 0);
	atomic_store(&S.exec_served, 0);
	S.wake_seen = atomic_load(&S.wake_seq);
	S.sock = -1; /* the parent's; its descriptors are nanomsg's, left alone */
	S.running = false;
	if (!was_on)
		return false;
	S.forked = true;
	S.table_done = false;
	S.sp = (struct shim_sp){.fd = -1};
	S.req = NULL;
	S.next_connect_ns = 0;
	S.pend = (struct shim_sp_pend){.buf = S.pend_buf, .cap = sizeof S.pend_buf};
	if (start_thread() != 0)
		return false;
	S.running = true;
	return true;
}
