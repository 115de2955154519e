/* The summary's file systems (summary_fs.c). */
#ifndef COLL_SUMMARY_FS_H
#define COLL_SUMMARY_FS_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "state.h"

/* The summary's "filesystems": per file system the files' names placed
 * (fsmap.h), the POSIX and STDIO calls on its files: mount, type, device,
 * read and write bytes and calls, metadata calls, time and ranks; most
 * bytes first. */
json_t *coll_summary_filesystems(const struct coll_state *s);
/* The mount point of a file's file system into buf, or NULL when none came. */
const char *coll_summary_mount(const struct coll_state *s, uint64_t file, char *buf, size_t len);

#endif
