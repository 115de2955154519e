/* libFuzzer target for the histogram decoder. A histogram that decodes must
 * re-encode to bytes that decode to the same histogram (same canonical
 * encoding), answer every quantile within [min, max], and merge with itself
 * into one with twice the count. */
#include <stdlib.h>
#include <string.h>

#include "hist.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(bool ok)
{
	if (!ok)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct iop_hist h, g;
	iop_hist_init(&h);
	iop_hist_init(&g);
	struct iop_rcur c = iop_rcur_make(data, size);
	if (iop_hist_decode(&h, &c) == IOP_OK) {
		static uint8_t a[16384], b[16384];
		struct iop_wcur wa = iop_wcur_make(a, sizeof a);
		iop_hist_encode(&h, &wa);
		check(wa.err == IOP_OK);
		size_t na = (size_t)(wa.p - a);
		struct iop_rcur rc = iop_rcur_make(a, na);
		check(iop_hist_decode(&g, &rc) == IOP_OK && iop_rcur_left(&rc) == 0);
		struct iop_wcur wb = iop_wcur_make(b, sizeof b);
		iop_hist_encode(&g, &wb);
		check(wb.err == IOP_OK && (size_t)(wb.p - b) == na && memcmp(a, b, na) == 0);
		for (int i = 0; i <= 20; i++) {
			uint64_t q = iop_hist_quantile(&h, i / 20.0);
			check(h.count == 0 || (q >= h.min && q <= h.max));
		}
		uint64_t n = h.count;
		if (iop_hist_merge(&h, &g) == IOP_OK)
			check(h.count == 2 * n);
	}
	iop_hist_free(&h);
	iop_hist_free(&g);
	return 0;
}
