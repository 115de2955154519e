/* Which file system each file lies on, carried as names (names.h) from
 * the leaf that resolved it to the root, recordings and replay:
 *
 *   COLL_NAME_FS       a file system; text "mount point\ttype\tdevice",
 *                      hash coll_fs_id() of that text
 *   COLL_NAME_FILE_FS  a file's file system; hash the file's hash xor
 *                      COLL_FILE_FS_SALT, text the file system's hash in
 *                      16 hex digits; a dictionary holds it in the
 *                      file's entry (names.h), not as an entry
 *
 * A leaf resolves a file when its name first arrives, by its path against
 * the node's mount table (node/mounts.h): the longest mount point that is
 * a prefix of the path. It does not stat the file (a hung NFS server
 * would hang the leaf), so a path through a symbolic link to another file
 * system is placed where its text lies (docs/holistic.md). Names are not
 * on the shims' wire: these kinds come from collectors only. */
#ifndef COLL_FSMAP_H
#define COLL_FSMAP_H

#include <stdbool.h>
#include <stdint.h>

#include "delta.h"
#include "mounts.h"
#include "names.h"

struct coll_fs {
	uint64_t id;
	char point[1024], type[64], device[256];
};

/* A leaf saw the file (hash, path[0, len)) for the first time: adds the
 * names of its file system (once: the mount's tag keeps its id) and of
 * the file's link to it to seen and to d. Nothing when no mount holds the
 * path. NOMEM. */
enum iop_err coll_fs_name_file(struct coll_names *seen, struct iop_mounts *m, uint64_t file,
                               const char *path, uint32_t len, struct coll_delta *d);

/* The id of a file's file system; false when none came. */
bool coll_fs_id_of(const struct coll_names *names, uint64_t file, uint64_t *id);

/* A leaf closing tick k: adds a FS row per (file system, layer, class)
 * summing the FILE rows of the files on it (names: the leaf's), before
 * their latencies (held back, latlog.h) are recorded and files folded;
 * their latencies are left to latlog_fold (also).
 * *also (malloc'd, k->n entries after, or NULL when no FS row was made):
 * for each FILE row the FS row its latencies also go to, else UINT32_MAX.
 * NOMEM leaves the rows made so far. */
enum iop_err coll_fs_rows(struct coll_tick *k, const struct coll_names *names, uint32_t **also);

/* The file system of a file, from the names; false when none came. */
bool coll_fs_of(const struct coll_names *names, uint64_t file, struct coll_fs *out);
/* A file system's name text (len bytes: "mount point\ttype\tdevice") into
 * *out (its id 0); false when it is not of that form. */
bool coll_fs_parse(const char *text, size_t len, struct coll_fs *out);
/* A file system by its id; false when its name did not come. */
bool coll_fs_get(const struct coll_names *names, uint64_t id, struct coll_fs *out);

#endif
