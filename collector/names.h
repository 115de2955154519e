/* The job-wide name dictionary: 64-bit hash -> kind and text (file paths,
 * datasets, call sites, hosts). Each collector keeps one; a leaf sends each
 * name up once, the root looks names up for output and records them. The
 * number of names and their total text are capped (a hostile or runaway
 * job cannot grow it without bound): past the cap new names are refused
 * and counted, and the rows keep their hashes. */
#ifndef COLL_NAMES_H
#define COLL_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "frame.h"

struct coll_name {
	uint64_t hash;
	char *text; /* NUL-terminated */
	uint32_t len;
	uint8_t kind; /* enum iop_name_kind */
	bool sent;    /* a leaf's mark: already sent upwards */
	uint16_t fs;  /* a file's file system: index + 1 in the dictionary's fs
	                 table (0: none), its COLL_NAME_FILE_FS name held here */
};

struct coll_names_block;

struct coll_names {
	struct coll_name *v;
	struct coll_names_block *text; /* the texts, back to back in blocks */
	uint32_t n, cap;
	uint32_t *slot; /* index + 1, 0 = empty */
	uint32_t n_slots;
	size_t text_bytes;
	uint64_t refused;
	uint32_t max_names;
	size_t max_text;
	uint64_t *fs_ids; /* the file systems names' fs fields point to */
	uint16_t n_fs, cap_fs;
	uint32_t n_file_fs; /* names with an fs (COLL_NAME_FILE_FS records held so) */
};

/* Kinds of names only collectors make (never on the shims' wire), besides
 * enum iop_name_kind: a file system, and the file system of a file
 * (fsmap.h). */
enum { COLL_NAME_FS = 16, COLL_NAME_FILE_FS = 17 };
/* A COLL_NAME_FILE_FS name's hash: its file's hash xor this; its text the
 * file system's id in 16 hex digits (fsmap.h). */
#define COLL_FILE_FS_SALT UINT64_C(0x66732d6f662d6673) /* "fs-of-fs" */
#define COLL_FILE_FS_HEX  16
/* Whether a delta or keyframe may carry a name of this kind. */
static inline bool coll_name_kind_ok(uint8_t kind)
{
	return (kind >= IOP_NAME_FILE && kind <= IOP_NAME_HOST) || kind == COLL_NAME_FS ||
	       kind == COLL_NAME_FILE_FS;
}

void coll_names_init(struct coll_names *d, uint32_t max_names, size_t max_text);
void coll_names_free(struct coll_names *d);

/* Adds hash -> text unless present (the first text wins). FULL past the
 * caps (counted in refused); NOMEM. *added tells whether it was new.
 * A COLL_NAME_FILE_FS name whose file is in the dictionary is held in the
 * file's entry (fs), not as an entry of its own: one a file would double a
 * root's dictionary (docs/collector.md); it is the same name to every
 * reader (coll_names_file_fs, coll_names_fs_record). */
enum iop_err coll_names_add(struct coll_names *d, uint64_t hash, uint8_t kind, const char *text,
                            size_t len, bool *added);
const struct coll_name *coll_names_get(const struct coll_names *d, uint64_t hash);
/* The text of hash, or NULL. */
const char *coll_names_text(const struct coll_names *d, uint64_t hash);
/* The file system id of file (its COLL_NAME_FILE_FS name): false when it
 * has none. */
bool coll_names_file_fs(const struct coll_names *d, uint64_t file, uint64_t *fs_id);
/* A file system id as a COLL_NAME_FILE_FS name's text: 16 lowercase hex
 * digits and a NUL into hex. */
void coll_names_fs_hex(uint64_t id, char *hex);
/* n's COLL_NAME_FILE_FS name when n holds one (text in hex, at least
 * COLL_FILE_FS_HEX + 1 bytes), to be written after n wherever the
 * dictionary is written out name by name; false when it holds none. */
bool coll_names_fs_record(const struct coll_names *d, const struct coll_name *n,
                          struct coll_name *rec, char *hex);

/* Paths and command lines are bytes; JSON strings (summary, export,
 * alerts, job card, recording META) are UTF-8, and jansson refuses a
 * string that is not (a Latin-1 file name, a character cut by a length
 * limit) whole. Each byte of s that is not part of a well-formed UTF-8
 * sequence becomes '?': the length stays, the rest reads as it was.
 * coll_names_add() does it to every name. */
void coll_text_make_utf8(char *s, size_t len);

#endif
