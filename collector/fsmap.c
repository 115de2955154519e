/* Files' file systems as names. See fsmap.h. */
#include "fsmap.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"

/* Adds a name to seen and, when new there, to d. */
static enum iop_err add(struct coll_names *seen, struct coll_delta *d, uint64_t hash, uint8_t kind,
                        const char *text, uint32_t len)
{
	bool added = false;
	enum iop_err e = coll_names_add(seen, hash, kind, text, len, &added);
	if (e == IOP_ERR_FULL)
		return IOP_OK; /* the dictionary is full: counted there */
	if (!e && added)
		e = coll_delta_add_name(d, hash, kind, text, len);
	return e;
}

/* Names a mount's file system once: its id in the mount's tag (0: not
 * named yet; UINT64_MAX: it cannot be, a name too long). */
static enum iop_err name_mount(struct coll_names *seen, struct iop_mount *x, struct coll_delta *d)
{
	char text[IOP_NAME_MAX];
	int n = snprintf(text, sizeof text, "%s\t%s\t%s", x->point, x->type, x->device);
	if (n < 0 || (size_t)n >= sizeof text || memchr(text, '\n', (size_t)n)) {
		x->tag = UINT64_MAX;
		return IOP_OK;
	}
	uint64_t id = iop_hash_str(text);
	enum iop_err e = add(seen, d, id, COLL_NAME_FS, text, (uint32_t)n);
	if (!e)
		x->tag = id ? id : 1;
	return e;
}

enum iop_err coll_fs_name_file(struct coll_names *seen, struct iop_mounts *m, uint64_t file,
                               const char *path, uint32_t len, struct coll_delta *d)
{
	struct iop_mount *x = (struct iop_mount *)iop_mounts_find(m, path, len, 0, 0, 0);
	if (!x)
		return IOP_OK;
	enum iop_err e = x->tag ? IOP_OK : name_mount(seen, x, d);
	if (e || x->tag == UINT64_MAX)
		return e;
	char hex[COLL_FILE_FS_HEX + 1];
	coll_names_fs_hex(x->tag, hex);
	return add(seen, d, file ^ COLL_FILE_FS_SALT, COLL_NAME_FILE_FS, hex, COLL_FILE_FS_HEX);
}

/* Copies the field [s, e) into out[cap]. */
static void copy_field(char *out, size_t cap, const char *s, const char *e)
{
	size_t n = (size_t)(e - s) < cap - 1 ? (size_t)(e - s) : cap - 1;
	memcpy(out, s, n);
	out[n] = 0;
}

bool coll_fs_parse(const char *text, size_t len, struct coll_fs *out)
{
	const char *end = text + len;
	const char *t1 = memchr(text, '\t', len);
	const char *t2 = t1 ? memchr(t1 + 1, '\t', (size_t)(end - t1 - 1)) : NULL;
	if (!t2)
		return false;
	out->id = 0;
	copy_field(out->point, sizeof out->point, text, t1);
	copy_field(out->type, sizeof out->type, t1 + 1, t2);
	copy_field(out->device, sizeof out->device, t2 + 1, end);
	return true;
}

bool coll_fs_get(const struct coll_names *names, uint64_t id, struct coll_fs *out)
{
	const struct coll_name *nm = coll_names_get(names, id);
	if (!nm || nm->kind != COLL_NAME_FS || !coll_fs_parse(nm->text, nm->len, out))
		return false;
	out->id = id;
	return true;
}

bool coll_fs_id_of(const struct coll_names *names, uint64_t file, uint64_t *id)
{
	return coll_names_file_fs(names, file, id);
}

bool coll_fs_of(const struct coll_names *names, uint64_t file, struct coll_fs *out)
{
	uint64_t id;
	return coll_fs_id_of(names, file, &id) && coll_fs_get(names, id, out);
}

/* A tick's files' file systems, each file looked up in the names once:
 * open addressing over the tick's FILE rows (the names are a dictionary
 * of up to a million, each look-up a cache miss). */
struct fs_cache {
	uint64_t *file, *fs; /* fs 0: the file has none */
	uint8_t *used;
	uint32_t mask;
};

static bool cache_init(struct fs_cache *c, uint32_t rows)
{
	uint32_t cap = 16;
	while (cap < 2 * rows)
		cap *= 2;
	c->mask = cap - 1;
	c->file = malloc(cap * sizeof(*c->file));
	c->fs = malloc(cap * sizeof(*c->fs));
	c->used = calloc(cap, 1);
	return c->file && c->fs && c->used;
}

static void cache_free(struct fs_cache *c)
{
	free(c->file);
	free(c->fs);
	free(c->used);
}

static bool cache_fs(struct fs_cache *c, const struct coll_names *names, uint64_t file, uint64_t *fs)
{
	uint32_t i = (uint32_t)((file * UINT64_C(0x9e3779b97f4a7c15)) >> 40) & c->mask;
	for (; c->used[i]; i = (i + 1) & c->mask)
		if (c->file[i] == file) {
			*fs = c->fs[i];
			return *fs != 0;
		}
	uint64_t id = 0;
	if (!coll_fs_id_of(names, file, &id))
		id = 0;
	c->used[i] = 1;
	c->file[i] = file;
	c->fs[i] = id;
	*fs = id;
	return id != 0;
}

enum iop_err coll_fs_rows(struct coll_tick *k, const struct coll_names *names, uint32_t **also)
{
	*also = NULL;
	uint32_t n0 = k->n, *map = NULL, files = 0;
	for (uint32_t i = 0; i < n0; i++)
		files += k->key[i].kind == COLL_ROW_FILE;
	if (!files)
		return IOP_OK;
	struct fs_cache cache;
	if (!cache_init(&cache, files)) {
		cache_free(&cache);
		return IOP_ERR_NOMEM;
	}
	enum iop_err e = IOP_OK;
	for (uint32_t i = 0; i < n0 && !e; i++) {
		const struct coll_key key = k->key[i];
		uint64_t fs;
		if (key.kind != COLL_ROW_FILE || key.id == COLL_ID_OTHER ||
		    !cache_fs(&cache, names, key.id, &fs))
			continue;
		if (!map) {
			if (!(map = malloc(n0 * sizeof(*map)))) {
				e = IOP_ERR_NOMEM;
				break;
			}
			memset(map, 0xff, n0 * sizeof(*map));
		}
		struct coll_key fk = coll_key_fs(fs, key.layer, key.cls);
		struct coll_cell *c;
		if (!(e = coll_tick_row(k, &fk, &c))) {
			map[i] = (uint32_t)(c - k->cell);
			/* the sums; the latencies follow in latlog_fold */
			struct coll_cell sums = k->cell[i];
			iop_hist_init(&sums.hist);
			e = coll_cell_merge(c, &sums);
		}
	}
	cache_free(&cache);
	if (e) {
		free(map);
		return e;
	}
	if (map) {
		/* room for the rows added: they map to nothing */
		uint32_t *m = realloc(map, (k->n ? k->n : 1) * sizeof(*m));
		if (!m) {
			free(map);
			return IOP_ERR_NOMEM;
		}
		memset(m + n0, 0xff, (k->n - n0) * sizeof(*m));
		map = m;
	}
	*also = map;
	return IOP_OK;
}
