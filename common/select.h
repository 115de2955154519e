/* Order statistics without a full sort: the k-th smallest of an array,
 * for medians and quantiles taken at every redraw of the dashboard over
 * tens of thousands of ranks (a qsort each was most of the redraw). */
#ifndef IOP_SELECT_H
#define IOP_SELECT_H

#include <stdint.h>

/* Moves v[lo, hi) about so that v[k] (lo <= k < hi) holds what it would
 * sorted, the values before it no larger and those after no smaller
 * (Hoare's selection, median of three). Expected linear time. */
void iop_select_u64(uint64_t *v, uint32_t lo, uint32_t hi, uint32_t k);

#endif
