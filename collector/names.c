/* Name dictionary: an array of names with an open-addressing index on the
 * hash. See names.h. */
#include "names.h"

#include <stdlib.h>
#include <string.h>

#include "table.h"

void coll_names_init(struct coll_names *d, uint32_t max_names, size_t max_text)
{
	memset(d, 0, sizeof(*d));
	d->max_names = max_names;
	d->max_text = max_text;
}

/* Texts are never removed: they go back to back into blocks (a root
 * holds half a million paths, and a malloc each cost ~16 bytes more than
 * the text and a call each), freed together. */
struct coll_names_block {
	struct coll_names_block *next;
	size_t used, cap;
	char b[];
};

#define TEXT_BLOCK 65536 /* bytes; a longer text gets a block of its own */

static char *text_copy(struct coll_names *d, const char *text, size_t len)
{
	struct coll_names_block *k = d->text;
	if (!k || k->cap - k->used < len + 1) {
		size_t cap = len + 1 > TEXT_BLOCK ? len + 1 : TEXT_BLOCK;
		if (!(k = malloc(sizeof(*k) + cap)))
			return NULL;
		*k = (struct coll_names_block){.next = d->text, .cap = cap};
		d->text = k;
	}
	char *copy = k->b + k->used;
	memcpy(copy, text, len);
	copy[len] = 0;
	k->used += len + 1;
	return copy;
}

void coll_names_free(struct coll_names *d)
{
	while (d->text) {
		struct coll_names_block *next = d->text->next;
		free(d->text);
		d->text = next;
	}
	free(d->v);
	free(d->slot);
	free(d->fs_ids);
	coll_names_init(d, d->max_names, d->max_text);
}

static uint32_t probe(const struct coll_names *d, uint64_t hash)
{
	uint32_t mask = d->n_slots - 1, i = (uint32_t)(hash ^ hash >> 32) & mask;
	while (d->slot[i] && d->v[d->slot[i] - 1].hash != hash)
		i = (i + 1) & mask;
	return i;
}

const struct coll_name *coll_names_get(const struct coll_names *d, uint64_t hash)
{
	if (!d->n_slots)
		return NULL;
	uint32_t s = d->slot[probe(d, hash)];
	return s ? &d->v[s - 1] : NULL;
}

const char *coll_names_text(const struct coll_names *d, uint64_t hash)
{
	const struct coll_name *n = coll_names_get(d, hash);
	return n ? n->text : NULL;
}

static enum iop_err grow(struct coll_names *d)
{
	void *v = d->v;
	enum iop_err e = coll_table_grow(&v, sizeof(*d->v), &d->cap, 256, &d->slot, &d->n_slots);
	d->v = v;
	if (e)
		return e;
	for (uint32_t i = 0; i < d->n; i++)
		d->slot[probe(d, d->v[i].hash)] = i + 1;
	return IOP_OK;
}

/* The length of the well-formed UTF-8 sequence at s (RFC 3629: no
 * overlong forms, surrogates or code points past U+10FFFF), or 0. */
static size_t utf8_len(const unsigned char *s, size_t left)
{
	unsigned c = s[0];
	size_t n = c < 0x80                 ? 1
	           : c >= 0xC2 && c <= 0xDF ? 2
	           : c >= 0xE0 && c <= 0xEF ? 3
	           : c >= 0xF0 && c <= 0xF4 ? 4
	                                    : 0;
	if (!n || n > left)
		return 0;
	for (size_t i = 1; i < n; i++)
		if ((s[i] & 0xC0) != 0x80)
			return 0;
	if ((c == 0xE0 && s[1] < 0xA0) || (c == 0xED && s[1] > 0x9F) ||
	    (c == 0xF0 && s[1] < 0x90) || (c == 0xF4 && s[1] > 0x8F))
		return 0;
	return n;
}

void coll_text_make_utf8(char *s, size_t len)
{
	for (size_t i = 0; i < len;) {
		size_t n = utf8_len((const unsigned char *)s + i, len - i);
		if (!n)
			s[i] = '?';
		i += n ? n : 1;
	}
}

/* A file system id in 16 lowercase hex digits: false when it is not. */
static bool hex_id(const char *text, size_t len, uint64_t *id)
{
	if (len != COLL_FILE_FS_HEX)
		return false;
	uint64_t v = 0;
	for (size_t i = 0; i < len; i++) {
		char c = text[i];
		unsigned x = c >= '0' && c <= '9' ? (unsigned)(c - '0')
		             : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10) : 16;
		if (x > 15)
			return false;
		v = v << 4 | x;
	}
	*id = v;
	return true;
}

/* The index + 1 of file system id in the fs table, added when new; 0 when
 * the table is full (65 535) or out of memory. */
static uint16_t fs_index(struct coll_names *d, uint64_t id)
{
	for (uint16_t i = 0; i < d->n_fs; i++)
		if (d->fs_ids[i] == id)
			return (uint16_t)(i + 1);
	if (d->n_fs == UINT16_MAX)
		return 0;
	if (d->n_fs == d->cap_fs) {
		uint32_t cap = d->cap_fs ? 2u * d->cap_fs : 8;
		cap = cap > UINT16_MAX ? UINT16_MAX : cap;
		uint64_t *v = realloc(d->fs_ids, cap * sizeof(*v));
		if (!v)
			return 0;
		d->fs_ids = v;
		d->cap_fs = (uint16_t)cap;
	}
	d->fs_ids[d->n_fs++] = id;
	return d->n_fs;
}

/* A COLL_NAME_FILE_FS name held in its file's entry: true when it was
 * (*added then tells whether it was new), false when it must be an entry
 * of its own (no such file, or a text that is not an id). */
static bool hold_file_fs(struct coll_names *d, uint64_t hash, const char *text, size_t len,
                         bool *added)
{
	uint64_t id;
	if (!d->n_slots || !hex_id(text, len, &id))
		return false;
	uint32_t s = d->slot[probe(d, hash ^ COLL_FILE_FS_SALT)];
	struct coll_name *f = s ? &d->v[s - 1] : NULL;
	if (!f || f->kind == COLL_NAME_FILE_FS || f->kind == COLL_NAME_FS)
		return false;
	if (f->fs)
		return true; /* present: the first wins */
	uint16_t i = fs_index(d, id);
	if (!i)
		return false;
	f->fs = i;
	d->n_file_fs++;
	*added = true;
	return true;
}

bool coll_names_file_fs(const struct coll_names *d, uint64_t file, uint64_t *fs_id)
{
	const struct coll_name *f = coll_names_get(d, file);
	if (f && f->fs) {
		*fs_id = d->fs_ids[f->fs - 1];
		return true;
	}
	/* a name of its own: it came before its file (or the table was full) */
	const struct coll_name *n = coll_names_get(d, file ^ COLL_FILE_FS_SALT);
	return n && n->kind == COLL_NAME_FILE_FS && hex_id(n->text, n->len, fs_id);
}

void coll_names_fs_hex(uint64_t id, char *hex)
{
	static const char digits[] = "0123456789abcdef";
	for (int i = 0; i < COLL_FILE_FS_HEX; i++)
		hex[i] = digits[(id >> (60 - 4 * i)) & 15];
	hex[COLL_FILE_FS_HEX] = 0;
}

bool coll_names_fs_record(const struct coll_names *d, const struct coll_name *n,
                          struct coll_name *rec, char *hex)
{
	if (!n->fs)
		return false;
	coll_names_fs_hex(d->fs_ids[n->fs - 1], hex);
	*rec = (struct coll_name){.hash = n->hash ^ COLL_FILE_FS_SALT, .text = hex,
	                          .len = COLL_FILE_FS_HEX, .kind = COLL_NAME_FILE_FS};
	return true;
}

enum iop_err coll_names_add(struct coll_names *d, uint64_t hash, uint8_t kind, const char *text,
                            size_t len, bool *added)
{
	*added = false;
	if (coll_names_get(d, hash))
		return IOP_OK;
	if (kind == COLL_NAME_FILE_FS && hold_file_fs(d, hash, text, len, added))
		return IOP_OK;
	if (d->n >= d->max_names || d->text_bytes + len > d->max_text) {
		d->refused++;
		return IOP_ERR_FULL;
	}
	if (d->n == d->cap) {
		enum iop_err e = grow(d);
		if (e)
			return e;
	}
	char *copy = text_copy(d, text, len);
	if (!copy)
		return IOP_ERR_NOMEM;
	coll_text_make_utf8(copy, len);
	d->v[d->n] = (struct coll_name){.hash = hash, .text = copy, .len = (uint32_t)len, .kind = kind};
	d->slot[probe(d, hash)] = ++d->n;
	d->text_bytes += len;
	*added = true;
	return IOP_OK;
}
