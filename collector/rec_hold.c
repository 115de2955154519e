/* Records held back in memory. See rec_hold.h. */
#include "rec_hold.h"

#include <stdlib.h>
#include <string.h>

#define HDR (1 + 8 + 8)

enum iop_err rec_hold_add(struct rec_hold *h, enum rec_type type, uint64_t time_ns,
                          const void *payload, size_t len)
{
	size_t need = h->len + HDR + len;
	if (need > h->cap) {
		size_t cap = h->cap ? h->cap : 1 << 16;
		while (cap < need)
			cap *= 2;
		uint8_t *b = realloc(h->buf, cap);
		if (!b)
			return IOP_ERR_NOMEM;
		h->buf = b;
		h->cap = cap;
	}
	uint8_t *p = h->buf + h->len;
	uint64_t n = len;
	p[0] = (uint8_t)type;
	memcpy(p + 1, &time_ns, 8);
	memcpy(p + 9, &n, 8);
	memcpy(p + HDR, payload, len);
	h->len = need;
	h->count++;
	return IOP_OK;
}

enum iop_err rec_hold_write(struct rec_hold *h, struct rec_writer *w)
{
	enum iop_err first = IOP_OK;
	for (size_t at = 0; at < h->len;) {
		uint64_t t, n;
		memcpy(&t, h->buf + at + 1, 8);
		memcpy(&n, h->buf + at + 9, 8);
		enum iop_err e = rec_write(w, (enum rec_type)h->buf[at], t, h->buf + at + HDR, n);
		if (e && !first)
			first = e;
		at += HDR + n;
	}
	h->len = 0;
	h->count = 0;
	return first;
}

void rec_hold_free(struct rec_hold *h)
{
	free(h->buf);
	*h = (struct rec_hold){0};
}
