/* The growth steps of the collector's arrays: coll_array_room for a plain
 * list, coll_table_grow for the small keyed tables (names, a leaf's
 * processes): an array of entries in insertion order with an
 * open-addressing index of twice as many slots over it (position + 1,
 * 0 = empty). */
#ifndef COLL_TABLE_H
#define COLL_TABLE_H

#include <stdint.h>
#include <stdlib.h>

#include "err.h"

/* Doubles the array *v of *cap entries of size bytes (first entries when
 * empty) and gives it a new, empty index (*slot, *n_slots); the caller
 * then puts each entry back into the index with its own probe. NOMEM
 * leaves the table whole (its array possibly moved and larger). */
static inline enum iop_err coll_table_grow(void **v, size_t size, uint32_t *cap, uint32_t first,
                                           uint32_t **slot, uint32_t *n_slots)
{
	uint32_t c = *cap ? *cap * 2 : first;
	void *nv = realloc(*v, (size_t)c * size);
	if (!nv)
		return IOP_ERR_NOMEM;
	*v = nv;
	uint32_t *ns = calloc((size_t)c * 2, sizeof(*ns));
	if (!ns)
		return IOP_ERR_NOMEM;
	free(*slot);
	*slot = ns;
	*n_slots = c * 2;
	*cap = c;
	return IOP_OK;
}

/* Room for one more entry in the array *v of n used of *cap entries of
 * size bytes, doubling it (first entries when empty). NOMEM leaves it
 * whole. */
static inline enum iop_err coll_array_room(void **v, size_t size, uint32_t n, uint32_t *cap,
                                           uint32_t first)
{
	if (n < *cap)
		return IOP_OK;
	uint32_t c = *cap ? *cap * 2 : first;
	void *nv = realloc(*v, (size_t)c * size);
	if (!nv)
		return IOP_ERR_NOMEM;
	*v = nv;
	*cap = c;
	return IOP_OK;
}

#endif
