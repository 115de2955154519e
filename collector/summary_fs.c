/* The summary's file systems (summary_fs.h): the calls that reached each file
 * system, from the exact totals and the files' file systems (fsmap.h). */
#include "summary_fs.h"

#include <stdio.h>
#include <stdlib.h>

#include "fsmap.h"

struct fs_sum {
	struct coll_fs fs;
	uint64_t read_bytes, write_bytes, read_ops, write_ops, meta_ops, time_ns;
	uint32_t ranks;
};

struct fs_rank {
	uint32_t fs, rank;
};

static int by_fs_rank(const void *a, const void *b)
{
	const struct fs_rank *x = a, *y = b;
	if (x->fs != y->fs)
		return x->fs < y->fs ? -1 : 1;
	return (x->rank > y->rank) - (x->rank < y->rank);
}

static int by_bytes(const void *a, const void *b)
{
	const struct fs_sum *x = a, *y = b;
	uint64_t bx = x->read_bytes + x->write_bytes, by = y->read_bytes + y->write_bytes;
	if (bx != by)
		return bx < by ? 1 : -1;
	return (x->fs.id > y->fs.id) - (x->fs.id < y->fs.id);
}

/* The index of the file system of file in v[0, *n), added when new;
 * UINT32_MAX when the file has none (or no memory). */
static uint32_t fs_index(const struct coll_state *s, uint64_t file, struct fs_sum **v, size_t *n,
                         size_t *cap)
{
	struct coll_fs fs;
	if (!coll_fs_of(&s->names, file, &fs))
		return UINT32_MAX;
	for (size_t i = 0; i < *n; i++)
		if ((*v)[i].fs.id == fs.id)
			return (uint32_t)i;
	if (*n == *cap) {
		size_t c = *cap ? 2 * *cap : 8;
		struct fs_sum *w = realloc(*v, c * sizeof(*w));
		if (!w)
			return UINT32_MAX;
		*v = w;
		*cap = c;
	}
	(*v)[*n] = (struct fs_sum){.fs = fs};
	return (uint32_t)(*n)++;
}

json_t *coll_summary_filesystems(const struct coll_state *s)
{
	struct fs_sum *v = NULL;
	size_t n = 0, cap = 0, m = 0;
	struct fs_rank *fr = malloc((s->latest.n + 1) * sizeof(*fr));
	/* the calls that reach a file system: POSIX and STDIO (MPI-IO and
	 * HDF5 reach it through POSIX calls, which are counted) */
	for (struct coll_totals_it it = {.s = s}; fr && coll_totals_next(&it);) {
		const struct coll_key *k = &it.key;
		if (!k->id || (k->layer != IOP_LAYER_POSIX && k->layer != IOP_LAYER_STDIO))
			continue;
		uint32_t i = fs_index(s, k->id, &v, &n, &cap);
		if (i == UINT32_MAX)
			continue;
		struct fs_sum *x = &v[i];
		const struct coll_cell *c = &it.cell;
		if (k->cls == IOP_CLASS_READ) {
			x->read_bytes += c->bytes;
			x->read_ops += c->ops;
		} else if (k->cls == IOP_CLASS_WRITE) {
			x->write_bytes += c->bytes;
			x->write_ops += c->ops;
		} else {
			x->meta_ops += c->ops;
		}
		x->time_ns += c->time_ns;
		fr[m++] = (struct fs_rank){i, k->rank};
	}
	if (fr) {
		qsort(fr, m, sizeof(*fr), by_fs_rank);
		for (size_t i = 0; i < m; i++)
			if (!i || by_fs_rank(&fr[i - 1], &fr[i]))
				v[fr[i].fs].ranks++;
	}
	free(fr);
	if (n)
		qsort(v, n, sizeof(*v), by_bytes);
	json_t *a = json_array();
	for (size_t i = 0; i < n; i++) {
		const struct fs_sum *x = &v[i];
		json_array_append_new(
			a, json_pack("{s:s,s:s,s:s,s:I,s:I,s:I,s:I,s:I,s:f,s:I}", "mount", x->fs.point,
			             "type", x->fs.type, "device", x->fs.device, "read_bytes",
			             (json_int_t)x->read_bytes, "write_bytes", (json_int_t)x->write_bytes,
			             "read_ops", (json_int_t)x->read_ops, "write_ops",
			             (json_int_t)x->write_ops, "meta_ops", (json_int_t)x->meta_ops, "time_s",
			             x->time_ns / 1e9,
			             "ranks", (json_int_t)x->ranks));
	}
	free(v);
	return a;
}

const char *coll_summary_mount(const struct coll_state *s, uint64_t file, char *buf, size_t len)
{
	struct coll_fs fs;
	if (!coll_fs_of(&s->names, file, &fs))
		return NULL;
	snprintf(buf, len, "%s", fs.point);
	return buf;
}
