/* Order statistics. See select.h. */
#include "select.h"

static void swap_u64(uint64_t *a, uint64_t *b)
{
	uint64_t t = *a;
	*a = *b;
	*b = t;
}

void iop_select_u64(uint64_t *v, uint32_t lo, uint32_t hi, uint32_t k)
{
	while (hi - lo > 16) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (v[mid] < v[lo])
			swap_u64(&v[mid], &v[lo]);
		if (v[hi - 1] < v[lo])
			swap_u64(&v[hi - 1], &v[lo]);
		if (v[hi - 1] < v[mid])
			swap_u64(&v[hi - 1], &v[mid]);
		uint64_t pivot = v[mid];
		uint32_t i = lo, j = hi - 1;
		for (;;) {
			while (v[i] < pivot)
				i++;
			while (v[j] > pivot)
				j--;
			if (i >= j)
				break;
			swap_u64(&v[i++], &v[j--]);
		}
		/* v[lo, j] <= pivot <= v[j + 1, hi) */
		if (k <= j)
			hi = j + 1;
		else
			lo = j + 1;
	}
	for (uint32_t i = lo + 1; i < hi; i++) /* a few left: insertion */
		for (uint32_t j = i; j > lo && v[j] < v[j - 1]; j--)
			swap_u64(&v[j], &v[j - 1]);
}
