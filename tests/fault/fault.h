/* Internal interface of libiopfault.so, the fault-injection preload that
 * sits *below* the shim (LD_PRELOAD=libiopulse.so:libiopfault.so): the
 * shim's dlsym(RTLD_NEXT) finds these wrappers, which may delay or hang a
 * call and then call libc. docs/testing-tools.md describes every variable.
 *
 * fault_config.c reads the environment once into a struct fault_cfg (pure
 * parsing, unit-tested by fault_config_test.c); iopfault.c holds the
 * wrappers and decides, call by call, whether a fault applies. */
#ifndef IOP_FAULT_H
#define IOP_FAULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The wrapped functions, one bit each, so IOPFAULT_OPS and IOPFAULT_HANG
 * select sets of them. The 64-bit and v2 forms share their base's bit. */
enum fault_fn {
	FN_READ = 1u << 0,   /* read */
	FN_PREAD = 1u << 1,  /* pread, pread64 */
	FN_READV = 1u << 2,  /* readv */
	FN_PREADV = 1u << 3, /* preadv, preadv64, preadv2, preadv64v2 */
	FN_WRITE = 1u << 4,
	FN_PWRITE = 1u << 5,
	FN_WRITEV = 1u << 6,
	FN_PWRITEV = 1u << 7,
	FN_FSYNC = 1u << 8,
	FN_FDATASYNC = 1u << 9,
	FN_STDIO_READ = 1u << 10,  /* fread, fgets, fgetc (and _chk forms) */
	FN_STDIO_WRITE = 1u << 11, /* fwrite, fputs, fputc, fprintf, vfprintf (and _chk) */
};
#define FN_STDIO       (FN_STDIO_READ | FN_STDIO_WRITE)
#define FN_READ_CLASS  (FN_READ | FN_PREAD | FN_READV | FN_PREADV | FN_STDIO_READ)
#define FN_WRITE_CLASS (FN_WRITE | FN_PWRITE | FN_WRITEV | FN_PWRITEV | FN_STDIO_WRITE)
#define FN_SYNC_CLASS  (FN_FSYNC | FN_FDATASYNC)
#define FN_ALL         (FN_READ_CLASS | FN_WRITE_CLASS | FN_SYNC_CLASS)

#define FAULT_MAX_GLOBS 8
#define FAULT_NEVER     UINT64_MAX /* an "until" that never comes */

struct fault_cfg {
	bool active;                  /* some fault is configured and applies to this process */
	bool bad;                     /* a variable did not parse: nothing is injected */
	uint32_t rank;                /* this process's rank, from the launcher's variables */
	bool rank_from_env;           /* false: no rank variable, rank 0 assumed */
	const char *ranks;            /* IOPFAULT_RANK as given (NULL: every rank) */
	uint64_t delay_ns;            /* added to every selected call */
	unsigned delay_fns;           /* enum fault_fn bits the delay applies to */
	unsigned hang_fns;            /* the first matching call of these hangs */
	uint64_t hang_ns;             /* how long it hangs; FAULT_NEVER: until killed */
	uint64_t epoch_ns;            /* IOPFAULT_EPOCH_S: the window counts from this Unix
	                                 time (ns), the same for every process; 0: from
	                                 the library's load */
	bool epoch_first;             /* IOPFAULT_EPOCH_S=first: from the process's first
	                                 selected call (its first I/O on IOPFAULT_FILE) */
	uint64_t after_ns;            /* faults start this long after the library loaded
	                                 (or after epoch_ns) */
	uint64_t until_ns;            /* ... and end here (FAULT_NEVER: they do not) */
	char *globs[FAULT_MAX_GLOBS]; /* IOPFAULT_FILE patterns; none: every file */
	unsigned n_globs;
	bool verbose;
	char error[160]; /* what did not parse, when bad */
};

/* Looks a variable up; getenv in the library, a table in the unit test. */
typedef const char *fault_getenv_fn(const char *name);

/* Fills cfg from the environment. A variable that does not parse sets
 * cfg->bad and cfg->error, and leaves cfg->active false. launcher says the
 * process is an MPI launcher or daemon, which is never faulted. */
void fault_cfg_read(struct fault_cfg *cfg, fault_getenv_fn *get, bool launcher);
void fault_cfg_free(struct fault_cfg *cfg);

/* Pieces of fault_cfg_read, exposed for the unit test. */
bool fault_rank_in_list(const char *list, uint32_t rank, bool *match);
bool fault_parse_fns(const char *list, unsigned *fns);
bool fault_parse_seconds(const char *s, uint64_t *ns);
/* A Unix time in seconds (a fraction allowed), after 2001 and before 5138. */
bool fault_parse_epoch(const char *s, uint64_t *ns);

/* One line per active fault, for IOPFAULT_VERBOSE, into buf. */
size_t fault_cfg_describe(const struct fault_cfg *cfg, char *buf, size_t cap);

/* For the wrappers (iopfault.c, fault_stdio.c): libc's function after this
 * library, resolved once (abort when missing: the wrapper cannot go on). */
void *fault_resolve(const char *name);
#define FAULT_REAL(name)                                                                           \
	static __typeof__(name) *real_##name;                                                      \
	if (__builtin_expect(!real_##name, 0))                                                     \
	real_##name = (__typeof__(name) *)fault_resolve(#name)

/* Called by every wrapper before the real function: applies the delay or
 * the hang that is due for a call of fn on fd; errno is kept. */
void fault_point(unsigned fn, const char *name, int fd);

#endif
