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

struct coll_name {
	uint64_t hash;
	char *text; /* NUL-terminated */
	uint32_t len;
	uint8_t kind; /* enum iop_name_kind */
	bool sent;    /* a leaf's mark: already sent upwards */
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
};

void coll_names_init(struct coll_names *d, uint32_t max_names, size_t max_text);
void coll_names_free(struct coll_names *d);

/* Adds hash -> text unless present (the first text wins). FULL past the
 * caps (counted in refused); NOMEM. *added tells whether it was new. */
enum iop_err coll_names_add(struct coll_names *d, uint64_t hash, uint8_t kind, const char *text,
                            size_t len, bool *added);
const struct coll_name *coll_names_get(const struct coll_names *d, uint64_t hash);
/* The text of hash, or NULL. */
const char *coll_names_text(const struct coll_names *d, uint64_t hash);

/* Paths and command lines are bytes; JSON strings (summary, export,
 * alerts, job card, recording META) are UTF-8, and jansson refuses a
 * string that is not (a Latin-1 file name, a character cut by a length
 * limit) whole. Each byte of s that is not part of a well-formed UTF-8
 * sequence becomes '?': the length stays, the rest reads as it was.
 * coll_names_add() does it to every name. */
void coll_text_make_utf8(char *s, size_t len);

#endif
