/* Call sites: which line of the application an I/O call comes from.
 *
 * A wrapper knows its return address for free. When that address is in the
 * application (outside the excluded objects of objects.c) it is the site.
 * When it is inside one (write() issued by libgfortran, MPI_File_write by
 * the MPI Fortran bindings, an MPI-IO call by an HDF5 function the shim does
 * not wrap) the stack is unwound (libunwind) to the first frame outside
 * them. A call nested in another recorded call takes the outermost call's
 * site without looking (shim.h), so the POSIX calls of an MPI-IO call cost
 * nothing here.
 *
 * Addresses are classified once: a lock-free open-addressing cache maps a
 * return address to its slot, and the slot index + 1 is the site key that
 * events carry. The cache is bounded (SHIM_SITE_SLOTS addresses; beyond,
 * site 0). Naming a site (reading symbol tables) is the sender's job, off
 * the application's path, once per key.
 *
 * On the application's path this file does atomic loads and stores, a scan
 * of the object table the first time an address is seen, and, for calls
 * from inside excluded objects, libunwind's local unwinding, which libunwind
 * documents as async-signal-safe (it blocks signals around its own locks);
 * the first unwind through new code looks up its unwind tables with
 * dl_iterate_phdr. libunwind is loaded with RTLD_LOCAL: linked normally it
 * would put its _Unwind_* functions ahead of libgcc's for every C++ program
 * under the shim. */
#define UNW_LOCAL_ONLY
#include <dlfcn.h>
#include <libunwind.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "log.h"
#include "names.h"
#include "sites.h"

#define PROBES        16          /* slots an address may be found in from its home */
#define UNWIND_FRAMES 64          /* frames looked at for one call */
#define MEMO_REACH    (64 * 1024) /* farthest stack word a memo checks */
#define STR_(x)       #x
#define STR(x)        STR_(x)

struct shim_site_slot shim_site_slots[SHIM_SITE_SLOTS];
static _Atomic uint64_t overflow; /* addresses the cache had no room for */
static _Atomic uint64_t unwinds;  /* calls sited by an unwind (no memo held them) */

static struct {
	__typeof__(unw_tdep_getcontext) *getcontext;
	__typeof__(unw_init_local) *init_local;
	__typeof__(unw_step) *step;
	__typeof__(unw_get_reg) *get_reg;
} unw;

/* ------------------------------------------------------------ the cache */

/* The kind of ip, settled in its slot. An address in no known object is
 * UNKNOWN, with the number of object scans completed when it was first
 * seen, until two more scans have completed (the second began after its
 * code ran, so it saw its object if it has one): meanwhile it counts as
 * the application's, and afterwards it is, for good (anonymous or JIT
 * code). */
static unsigned settle(struct shim_site_slot *s, uintptr_t ip, uint32_t state)
{
	unsigned kind = state & 3;
	if (kind == SHIM_SITE_OUTSIDE || kind == SHIM_SITE_EXCLUDED)
		return kind;
	uint32_t scans;
	unsigned now = shim_objects_classify(ip, &scans);
	if (now == SHIM_SITE_UNKNOWN) {
		if (kind == SHIM_SITE_UNKNOWN && scans - (state >> 2) < 2)
			return SHIM_SITE_OUTSIDE;
		if (kind != SHIM_SITE_UNKNOWN) {
			if (s)
				atomic_store_explicit(&s->state, scans << 2 | SHIM_SITE_UNKNOWN,
				                      memory_order_release);
			return SHIM_SITE_OUTSIDE;
		}
		now = SHIM_SITE_OUTSIDE;
	}
	if (s)
		atomic_store_explicit(&s->state, now, memory_order_release);
	return now;
}

/* The slot of ip (added if new) and its kind; *key = 0 when the cache is
 * full around ip. */
static unsigned lookup(uintptr_t ip, uint32_t *key)
{
	uint32_t h = shim_site_hash(ip);
	for (unsigned i = 0; i < PROBES; i++) {
		uint32_t k = (h + i) & (SHIM_SITE_SLOTS - 1);
		struct shim_site_slot *s = &shim_site_slots[k];
		uintptr_t cur = atomic_load_explicit(&s->ip, memory_order_acquire);
		if (cur == 0 && atomic_compare_exchange_strong(&s->ip, &cur, ip))
			cur = ip;
		if (cur == ip) {
			*key = k + 1;
			return settle(s, ip, atomic_load_explicit(&s->state, memory_order_acquire));
		}
	}
	atomic_fetch_add_explicit(&overflow, 1, memory_order_relaxed);
	*key = 0;
	return settle(NULL, ip, SHIM_SITE_NEW);
}

/* The first frame outside the excluded objects, from here up: its return
 * address (0 when there is none: a thread of the MPI library), and where
 * the stack holds it (0 when unknown). */
struct frame {
	uintptr_t ip, slot;
};

static struct frame first_outside(void)
{
	unw_context_t ctx;
	unw_cursor_t cur;
	struct frame f = {0, 0};
	if (!unw.step || unw.getcontext(&ctx) != 0 || unw.init_local(&cur, &ctx) != 0)
		return f;
	for (int i = 0; i < UNWIND_FRAMES && unw.step(&cur) > 0; i++) {
		unw_word_t ip, sp;
		uint32_t key;
		if (unw.get_reg(&cur, UNW_REG_IP, &ip) != 0 || ip == 0)
			return f;
		if (lookup((uintptr_t)ip, &key) == SHIM_SITE_EXCLUDED)
			continue;
		f.ip = (uintptr_t)ip;
		/* a call pushed the return address just below the caller's
		 * stack pointer (not so for a signal frame's interrupted code) */
		if (unw.get_reg(&cur, UNW_REG_SP, &sp) == 0 && *(uintptr_t *)(sp - 8) == ip)
			f.slot = (uintptr_t)sp - 8;
		return f;
	}
	return f;
}

/* A word of this thread's stack above anchor, where a memo says the
 * application's return address was. Read directly when it is sure to be
 * mapped: in the anchor's page (the wrapper runs on it), or on the main
 * thread's stack (anchor a little below where the program started, which
 * nothing else is mapped near: [anchor, __libc_stack_end) is one stack).
 * Elsewhere the stack at anchor may be another one than when the memo was
 * made (user contexts reuse stack memory) and may end, or meet a guard
 * page: the kernel reads it then (one system call, EFAULT, no crash). */
extern void *__libc_stack_end;
#define MAIN_STACK_NEAR (64u << 20)

static bool stack_word(uintptr_t anchor, uintptr_t at, uintptr_t *word)
{
	uintptr_t top = (uintptr_t)__libc_stack_end;
	if ((at >> 12) == (anchor >> 12) ||
	    (anchor < top && top - anchor < MAIN_STACK_NEAR && at + sizeof *word <= top)) {
		*word = *(const uintptr_t *)at;
		return true;
	}
	struct iovec local = {word, sizeof *word}, remote = {(void *)at, sizeof *word};
	return syscall(SYS_process_vm_readv, shim.pid, &local, 1, &remote, 1, 0) ==
	       (long)sizeof *word;
}

/* Memos of unwinds, per thread: a loop calling an I/O library pays for one
 * unwind, then a check that the application's return address is still
 * where it was on the stack. The least recently used memo is replaced, so
 * one-off unwinds (a signal handler's, at a new stack depth each time) do
 * not push out the memos a loop lives on.
 *
 * Looking is done outside busy, so that a signal handler's calls meanwhile
 * are recorded; a handler that replaces a memo (under busy) moves memo_seq
 * on, and a look that saw it move is void (a seqlock within one thread). */
static uint32_t memo_find(struct shim_thread *t, uintptr_t ra, uintptr_t anchor)
{
	unsigned seq = atomic_load_explicit(&t->memo_seq, memory_order_relaxed);
	atomic_signal_fence(memory_order_acquire);
	uint32_t key = 0;
	for (unsigned i = 0; i < SHIM_SITE_MEMOS && !key; i++) {
		struct shim_site_memo *m = &t->memo[i];
		uintptr_t word, app_ra = m->app_ra;
		if (m->ra == ra && m->anchor == anchor &&
		    stack_word(anchor, anchor + m->off, &word) && word == app_ra) {
			key = m->key;
			m->used = ++t->memo_clock;
		}
	}
	atomic_signal_fence(memory_order_acquire);
	return atomic_load_explicit(&t->memo_seq, memory_order_relaxed) == seq ? key : 0;
}

static void memo_put(struct shim_thread *t, uintptr_t ra, uintptr_t anchor, struct frame f,
                     uint32_t key)
{
	if (!f.slot || f.slot < anchor || f.slot - anchor > MEMO_REACH)
		return;
	struct shim_site_memo *m = &t->memo[0];
	for (unsigned i = 1; i < SHIM_SITE_MEMOS; i++)
		if (t->memo[i].used < m->used)
			m = &t->memo[i];
	atomic_fetch_add_explicit(&t->memo_seq, 1, memory_order_relaxed);
	atomic_signal_fence(memory_order_release);
	*m = (struct shim_site_memo){.ra = ra,
	                             .anchor = anchor,
	                             .app_ra = f.ip,
	                             .off = (uint32_t)(f.slot - anchor),
	                             .key = key,
	                             .used = ++t->memo_clock};
	atomic_signal_fence(memory_order_release);
	atomic_fetch_add_explicit(&t->memo_seq, 1, memory_order_relaxed);
}

uint32_t shim_site_slow(struct shim_thread *t, uintptr_t ip)
{
	/* where the memos are anchored: this frame, a fixed step below the
	 * wrapper's (called from the wrapper, or from shim_site_here in it) */
	const void *anchor = __builtin_frame_address(0);
	uint32_t key;
	if (ip == 0) /* no caller known (0 marks a free slot) */
		return 0;
	if (lookup(ip, &key) != SHIM_SITE_EXCLUDED || !unw.step)
		return key;
	uint32_t app_key = memo_find(t, ip, (uintptr_t)anchor);
	if (app_key)
		return app_key;
	/* busy: a signal handler's calls pass through meanwhile, so the
	 * unwinder and the memos are not entered twice on this thread */
	int was = t->busy;
	t->busy = 1;
	atomic_fetch_add_explicit(&unwinds, 1, memory_order_relaxed);
	struct frame f = first_outside();
	if (f.ip && (lookup(f.ip, &app_key), app_key))
		memo_put(t, ip, (uintptr_t)anchor, f, app_key);
	t->busy = was;
	return app_key ? app_key : key; /* nothing outside: the excluded frame */
}

uint32_t shim_site_here(const void *ra)
{
	if (atomic_load_explicit(&shim.state, memory_order_relaxed) != SHIM_ON)
		return 0;
	struct shim_thread *t = shim_self();
	if (!t || t->busy)
		return 0;
	if (t->depth > 0)
		return t->root_site;
	return shim_site_of(t, ra);
}

/* ------------------------------------------------------------ start-up */

/* libunwind is optional at run time: loaded privately, its functions found
 * by their real (architecture-prefixed) names. One unwind here runs its
 * one-time initialisation outside any signal handler. */
static void load_unwinder(void)
{
	void *h = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		iop_info("libunwind not loaded (%s): calls from inside libraries get "
		         "the library's frame as their site",
		         dlerror());
		return;
	}
	unw.getcontext = (__typeof__(unw.getcontext))dlsym(h, STR(unw_tdep_getcontext));
	unw.init_local = (__typeof__(unw.init_local))dlsym(h, STR(unw_init_local));
	unw.get_reg = (__typeof__(unw.get_reg))dlsym(h, STR(unw_get_reg));
	__typeof__(unw.step) step = (__typeof__(unw.step))dlsym(h, STR(unw_step));
	if (unw.getcontext && unw.init_local && unw.get_reg && step) {
		unw.step = step;
		(void)first_outside(); /* libunwind's one-time set-up */
	}
}

uint64_t shim_sites_overflow(void)
{
	return atomic_load_explicit(&overflow, memory_order_relaxed);
}

uint64_t shim_sites_unwinds(void)
{
	return atomic_load_explicit(&unwinds, memory_order_relaxed);
}

int shim_sites_init(void)
{
	if (shim_objects_init() != 0)
		return -1;
	load_unwinder();
	return 0;
}

/* ------------------------------------------------------------ naming */

bool shim_site_text(uintptr_t ip, char *buf, size_t cap)
{
	const struct shim_obj *o = shim_objects_find_named(ip);
	if (!o) {
		snprintf(buf, cap, "[unknown code]");
		return false;
	}
	/* a return address: the call is the instruction before it */
	uint64_t addr = ip - o->bias, start;
	char fn[512];
	if (shim_elf_function(o->path, addr - 1, fn, sizeof fn, &start))
		snprintf(buf, cap, "%s+0x%llx (%s)", fn, (unsigned long long)(addr - start),
		         o->base);
	else
		snprintf(buf, cap, "%s+0x%llx", o->base, (unsigned long long)addr);
	return true;
}

/* key -> name id, filled as keys are met (the sender's, under its lock) */
static uint32_t site_ids[SHIM_SITE_SLOTS];

uint32_t shim_site_name(uint32_t key, bool may_name)
{
	if (key == 0 || key > SHIM_SITE_SLOTS)
		return 0;
	uint32_t id = site_ids[key - 1];
	if (id || !may_name)
		return id;
	struct shim_site_slot *s = &shim_site_slots[key - 1];
	uintptr_t ip = atomic_load_explicit(&s->ip, memory_order_acquire);
	char text[IOP_NAME_MAX];
	bool known = shim_site_text(ip, text, sizeof text);
	if (!known) { /* a library loaded since the last scan of the objects */
		shim_objects_refresh();
		known = shim_site_text(ip, text, sizeof text);
	}
	id = shim_name_text(IOP_NAME_SITE, text);
	/* code in no object yet may be in one the next scan finds: named
	 * again next time, until its slot has settled */
	if (known ||
	    (atomic_load_explicit(&s->state, memory_order_acquire) & 3) != SHIM_SITE_UNKNOWN)
		site_ids[key - 1] = id;
	return id;
}
