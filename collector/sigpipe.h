/* Signals into a poll loop: a handler writes each signal's number to a
 * non-blocking self-pipe, the loop polls its read end and reads them back.
 * Used by `iopulse run` and `iopulse collector` (one per process). */
#ifndef COLL_SIGPIPE_H
#define COLL_SIGPIPE_H

#include <stddef.h>
#include <sys/types.h>

/* Makes the pipe, routes the n signals to it and ignores SIGPIPE. The
 * read end, or -1 (errno set). */
int coll_sigpipe_open(const int *sigs, size_t n);
/* Reads the signals waiting, up to max, into sig; how many. */
ssize_t coll_sigpipe_read(unsigned char *sig, size_t max);

#endif
