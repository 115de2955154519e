/* The errno/return-value table (errno_table.c runs it, errno_posix.c,
 * errno_stdio.c, errno_aio.c and errno_exec.c hold the cases). Each case is one call made with errno set
 * to a sentinel beforehand; it prints one line "name ret errno" and checks
 * the outcome the case expects. The driver compares the lines of a run
 * without the shim, a passive one and an active one: they must be equal. */
#ifndef IOP_SAFETY_ERRNO_TABLE_H
#define IOP_SAFETY_ERRNO_TABLE_H

#include <stdint.h>

#include "check.h"

#define SENTINEL 12345

/* How a return value reads: kind of value, how failure shows. */
enum ret_kind {
	K_NUM,   /* int/ssize_t/off_t/long: failure is -1, printed as is */
	K_FD,    /* a descriptor: printed "fd" when >= 0 (numbers differ with nanomsg's) */
	K_PTR,   /* a pointer: failure is NULL, printed 1/0 */
	K_MAP,   /* mmap: failure is MAP_FAILED, printed 1/0 */
	K_COUNT, /* fread/fwrite items: failure is 0, printed as is */
	K_VOID,  /* no value (rewind): only errno counts */
};

/* What a case expects: success, a clean "nothing more" (EOF, NULL, 0 items
 * with errno untouched), EOF with whatever errno libc leaves (scanf sets
 * it to 0), or a failure with this errno. */
#define W_OK_     0
#define W_EOF_    (-1)
#define W_EOFANY_ (-2)

void row(const char *name, enum ret_kind kind, int want, intptr_t ret, int err);
/* A value a call produced (not its return): printed, and must equal want. */
void row_value(const char *name, long got, long want);

#define T(name, kind, want, expr)                                                                  \
	do {                                                                                       \
		errno = SENTINEL;                                                                  \
		intptr_t r_ = (intptr_t)(expr);                                                    \
		row((name), (kind), (want), r_, errno);                                            \
	} while (0)

/* Pointers the compiler must not see through (nonnull arguments). */
extern void *volatile null_ptr;
extern void *volatile bad_ptr; /* (void *)1: the kernel says EFAULT */

/* Fixtures made by errno_table.c in the current (fresh, empty) directory:
 *   data.bin  4096 bytes of pattern      ro.txt  "hello 42\n", mode 0644
 *   dir/      an empty directory         pipe_r, pipe_w  a pipe
 * and CLOSED_FD, a descriptor number nothing has open. */
#define CLOSED_FD 987
extern int pipe_r, pipe_w;

void posix_cases(void);
void posix_meta_cases(void);
void stdio_cases(void);
void aio_cases(void);
void exec_cases(void);

#endif
