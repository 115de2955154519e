/* Start-up, configuration and shut-down of libiopulse.so.
 *
 * Configuration comes from the environment (docs/shim.md):
 *   IOPULSE_ADDR        nanomsg URL of the collector; unset: passive and silent
 *   IOPULSE_KEY         the job key, 32 hex digits (required with ADDR)
 *   IOPULSE_JOB         job id, up to 16 hex digits
 *   IOPULSE_FINAL_ADDR  REQ/REP URL that acknowledges each process's last frame
 *   IOPULSE_INTERVAL_MS how often the sender sends (default 10)
 *   IOPULSE_RANK        rank override; else the launcher's variables
 *   IOPULSE_COALESCE    0: no run records (docs/wire-format.md); runs stay
 *                       within a tick of IOPULSE_TICK_MS (else 1 ms)
 *   IOPULSE_PARENT, IOPULSE_ROOT_HOST, IOPULSE_EXE, IOPULSE_TICK_MS
 *                       a multi-node `iopulse run`: on another host than the
 *                       root's, send to this node's leaf (nodeleaf.c)
 * Launcher processes (mpirun, orted, prted, srun, hydra proxies ...) are never
 * monitored. A forked child records as a process of its own (its sender
 * speaks to the collector through spwire.c: nanomsg does not survive
 * fork); an exec'd program starts afresh from the environment (exec.c sends
 * the last frame of the image it replaces). */
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "hash.h"
#include "log.h"
#include "names.h"
#include "shim.h"
#include "sites.h"

struct shim_global shim;

/* Runs of like calls go out as one record (docs/wire-format.md, "Run
 * records") unless IOPULSE_COALESCE=0. A run's calls are placed evenly
 * between its first and last ends, so a run must not cross a collector's
 * tick: it stays within one tick of IOPULSE_TICK_MS (`iopulse run` sets
 * it), else within 1 ms, which divides every tick (whole milliseconds). */
static uint64_t coalesce_window_ns(void)
{
	const char *on = getenv("IOPULSE_COALESCE");
	if (on && strcmp(on, "0") == 0)
		return 0;
	const char *tick = getenv("IOPULSE_TICK_MS");
	unsigned long ms = tick ? strtoul(tick, NULL, 10) : 0;
	return (ms >= 100 && ms <= 60000 ? ms : 1) * UINT64_C(1000000);
}

static _Atomic int finished;
static pid_t owner_pid; /* the process that started the sender */

struct lookup {
	const char *name;
	const char *self; /* our own file: never resolve to a wrapper */
	void *sym;
};

static int search_object(struct dl_phdr_info *info, size_t size, void *data)
{
	struct lookup *l = data;
	if (!info->dlpi_name[0] || strcmp(info->dlpi_name, l->self) == 0)
		return 0;
	void *h = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
	if (!h)
		return 0;
	void *s = dlsym(h, l->name);
	Dl_info where;
	if (s && dladdr(s, &where) && where.dli_fname && strcmp(where.dli_fname, l->self) != 0)
		l->sym = s;
	dlclose(h);
	return l->sym != NULL;
}

/* RTLD_NEXT finds what the global scope has after us. A library loaded
 * privately (RTLD_LOCAL: Python's extension modules bring libmpi and
 * libhdf5 that way) is not there, but its callers still reach our wrappers,
 * so look through every loaded object too. */
void *shim_resolve_opt(const char *name)
{
	void *p = dlsym(RTLD_NEXT, name);
	if (p)
		return p;
	Dl_info me;
	if (!dladdr((void *)shim_resolve_opt, &me) || !me.dli_fname)
		return NULL;
	struct lookup l = {.name = name, .self = me.dli_fname};
	dl_iterate_phdr(search_object, &l);
	return l.sym;
}

void *shim_resolve(const char *name)
{
	void *p = shim_resolve_opt(name);
	if (!p) {
		iop_error("cannot resolve %s: %s", name, dlerror());
		abort(); /* a wrapper without its real function cannot go on */
	}
	return p;
}

static bool is_launcher(void)
{
	static const char *const launchers[] = {
		"mpirun", "mpiexec", "orterun", "orted", "prted", "prterun", "prte", "srun",
		"slurmstepd", "hydra_pmi_proxy", "hydra_nameserver", "mpiexec.hydra", "mpirun.openmpi",
		"mpiexec.openmpi", "mpirun.mpich", "mpiexec.mpich", "iopulse",
	};
	extern char *program_invocation_short_name;
	for (size_t i = 0; i < sizeof launchers / sizeof *launchers; i++)
		if (strcmp(program_invocation_short_name, launchers[i]) == 0)
			return true;
	return false;
}

static uint32_t env_rank(void)
{
	static const char *const vars[] = {"IOPULSE_RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK",
					   "PMIX_RANK", "SLURM_PROCID", "RANK"};
	for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
		const char *v = getenv(vars[i]);
		char *end;
		if (v && *v) {
			unsigned long r = strtoul(v, &end, 10);
			if (*end == 0 && r <= UINT32_MAX)
				return (uint32_t)r;
		}
	}
	return 0;
}

static bool configure(void)
{
	const char *addr = getenv("IOPULSE_ADDR");
	if (!addr || !*addr || is_launcher())
		return false;
	iop_log_set_prefix("iopulse-shim");
	if (strlen(addr) >= sizeof shim.addr) {
		iop_warn("IOPULSE_ADDR is too long: not monitoring");
		return false;
	}
	if (iop_key_from_hex(getenv("IOPULSE_KEY"), &shim.key) != IOP_OK) {
		iop_warn("IOPULSE_KEY is missing or not 32 hex digits: not monitoring");
		return false;
	}
	strcpy(shim.addr, addr);
	const char *fin = getenv("IOPULSE_FINAL_ADDR");
	if (fin && strlen(fin) < sizeof shim.final_addr)
		strcpy(shim.final_addr, fin);
	const char *job = getenv("IOPULSE_JOB");
	shim.job_id = job ? strtoull(job, NULL, 16) : 0;
	const char *iv = getenv("IOPULSE_INTERVAL_MS");
	shim.interval_ms = iv ? (unsigned)strtoul(iv, NULL, 10) : 10;
	if (shim.interval_ms < 1 || shim.interval_ms > 10000)
		shim.interval_ms = 10;
	shim.split_ns = coalesce_window_ns();
	shim.rank = env_rank();
	gethostname(shim.host, sizeof shim.host - 1);
	shim.node_id = (uint32_t)iop_hash_str(shim.host);
	/* A rank on another node than the root's: its node's leaf (nodeleaf.c). */
	shim_node_leaf(shim.host, shim.addr, sizeof shim.addr, shim.final_addr,
	               sizeof shim.final_addr);
	shim.use_tsc = iop_clock_tsc_wanted();
	return true;
}

static void catch_if_default(int sig);

/* A forked child records as a process of its own (sender.c says how).
 * It is the owner of what it records from here on: its exit, _exit or
 * exec sends its last frame, and so does SIGTERM at its default action
 * (caught in a forked child only). That is how a parent ends the workers
 * it forked once their work is done (Python's multiprocessing Pool, as it
 * leaves its `with` block): right after their last I/O, which a sender
 * that has not had its next round yet would lose whole. The reasons
 * SIGTERM stays at its default in a rank (core.c, fatal_signals) are the
 * launcher's, which does not signal a rank's children. */
static void at_fork_child(void)
{
	owner_pid = getpid();
	shim.pid = owner_pid;
	shim_threads_after_fork();
	shim_objects_after_fork();
	if (shim_sender_after_fork())
		catch_if_default(SIGTERM);
	else
		atomic_store(&shim.state, SHIM_OFF);
}

void shim_set_rank(uint32_t rank)
{
	shim.rank = rank;
}

bool shim_owner_process(void)
{
	return owner_pid != 0 && getpid() == owner_pid;
}

void shim_finish(const char *why)
{
	if (getpid() != owner_pid || atomic_exchange(&finished, 1))
		return;
	struct shim_thread *t = shim_self();
	if (t)
		t->busy = 1; /* the flush's own I/O is not recorded */
	atomic_store(&shim.state, SHIM_OFF);
	iop_debug("finishing (%s); %llu calls sited by an unwind; %llu ring pages put in "
		  "ahead", why, (unsigned long long)shim_sites_unwinds(),
		  (unsigned long long)shim_ring_pages_ahead());
	if (shim_sites_overflow())
		iop_info("%llu lookups found no room in the site cache (their calls "
			 "carry site 0)", (unsigned long long)shim_sites_overflow());
	shim_sender_stop_and_flush(250);
}

static void at_exit(void)
{
	shim_finish("exit");
}

/* _exit and _Exit end the process without its atexit handlers (exit()
 * calls glibc's own _exit, not this): the last frame is sent here, as at
 * exit. Resolved at start-up: a vfork child calls _exit after a failed
 * exec, in its parent's memory, where it must not run dlsym; it and a
 * forked child pass straight through (shim_finish is the owner's only). */
static __typeof__(_exit) *real_exit_now;

SHIM_EXPORT void _exit(int status)
{
	shim_finish("_exit");
	if (!real_exit_now)
		real_exit_now = (__typeof__(_exit) *)shim_resolve("_exit");
	real_exit_now(status);
	__builtin_unreachable(); /* glibc's _exit does not return */
}

SHIM_EXPORT void _Exit(int status)
{
	_exit(status);
}

/* The signals a process brings on itself: its fault, its abort(), its
 * write to a pipe nobody reads any more (`prog | head`). SIGINT
 * and SIGTERM stay at their default action. They come from outside (a
 * terminal's Ctrl-C, a launcher passing it on, a batch system), usually
 * to every process of a job at once, and the sender may be watching:
 * MPICH's hydra proxy SIGKILLs the ranks still alive as soon as one has
 * died. At the default action the kernel settles a process's fate when
 * the signal is sent, so every rank dies of SIGINT however soon that
 * SIGKILL comes; a handler that stays a few milliseconds for the last
 * frame is overtaken by it, the rank dies of SIGKILL and mpiexec reports
 * 9, 11 or 0 instead of 2 (docs/shim.md, "SIGINT and SIGTERM"). */
static const int fatal_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGPIPE};

/* Async-signal-safe: the sender thread sends the last frame while this
 * handler waits a bounded time; then the signal's default action (restored
 * by SA_RESETHAND) ends the process as it would have without the shim. */
static void on_fatal(int sig)
{
	int saved = errno;
	/* a forked child's SIGTERM (at_fork_child) comes right after its
	 * last I/O, maybe before its sender connected: longer */
	unsigned wait_ms = sig == SIGTERM ? 1000 : 250;
	if (getpid() == owner_pid && !atomic_exchange(&finished, 1)) {
		atomic_store(&shim.state, SHIM_OFF);
		shim_sender_fatal(wait_ms);
	} else if (getpid() == owner_pid) {
		/* An exit was waiting for its last frame when the signal came
		 * (a Pool's worker leaving as the Pool ends it): that frame,
		 * not the signal's default action at once, which lost whole
		 * workers when their sender had not had its round yet. */
		shim_sender_await_last(wait_ms);
	}
	errno = saved;
	raise(sig);
}

/* Only where the application left the default action. */
static void catch_if_default(int sig)
{
	struct sigaction old;
	if (sigaction(sig, NULL, &old) == 0 && old.sa_handler == SIG_DFL &&
	    !(old.sa_flags & SA_SIGINFO)) {
		struct sigaction sa = {0};
		sa.sa_handler = on_fatal;
		sa.sa_flags = SA_RESETHAND;
		sigemptyset(&sa.sa_mask);
		sigaction(sig, &sa, NULL);
	}
}

static void catch_fatal_signals(void)
{
	for (size_t i = 0; i < sizeof fatal_signals / sizeof *fatal_signals; i++)
		catch_if_default(fatal_signals[i]);
}

__attribute__((constructor(101))) static void shim_init(void)
{
	int saved = errno;
	iop_log_init();
	shim_exec_init();
	real_exit_now = (__typeof__(_exit) *)shim_resolve("_exit");
	if (configure() && shim_names_init() == 0) {
		owner_pid = getpid();
		shim.pid = owner_pid;
		/* The node id in every frame is this name's hash, cut to 32 bits. */
		shim_name_text(IOP_NAME_HOST, shim.host);
		struct shim_thread *t = shim_self(); /* main thread's state */
		if (t)
			t->busy = 1;
		if (shim_sites_init() != 0)
			iop_warn("call sites unavailable: events carry site 0");
		if (shim_sender_start() == 0) {
			pthread_atfork(NULL, NULL, at_fork_child);
			atexit(at_exit);
			at_quick_exit(at_exit);
			catch_fatal_signals();
			atomic_store(&shim.state, SHIM_ON);
			shim_sender_go();
		}
		if (t)
			t->busy = 0;
	}
	errno = saved;
}

__attribute__((destructor)) static void shim_fini(void)
{
	shim_finish("unload");
}
