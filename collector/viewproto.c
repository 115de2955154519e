/* The viewer protocol's envelopes and addresses. See viewproto.h. */
#include "viewproto.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum iop_err coll_view_pub_addr(const char *addr, char *out, size_t len)
{
	int n;
	if (!strncmp(addr, "ipc://", 6) && addr[6]) {
		n = snprintf(out, len, "%s.pub", addr);
	} else if (!strncmp(addr, "tcp://", 6)) {
		const char *colon = strrchr(addr, ':');
		char *end;
		if (!colon || colon < addr + 6)
			return IOP_ERR_INVAL;
		unsigned long port = strtoul(colon + 1, &end, 10);
		if (*end || end == colon + 1 || port == 0 || port >= 65535)
			return IOP_ERR_INVAL;
		n = snprintf(out, len, "%.*s:%lu", (int)(colon - addr), addr, port + 1);
	} else {
		return IOP_ERR_INVAL;
	}
	return n < 0 || (size_t)n >= len ? IOP_ERR_OVERSIZED : IOP_OK;
}

void coll_view_begin(struct iop_wcur *c, uint32_t magic, const struct coll_view_hdr *h)
{
	iop_put_u32le(c, magic);
	iop_put_u16le(c, COLL_VIEW_VERSION);
	iop_put_u16le(c, h->type);
	iop_put_u64le(c, h->job_id);
	if (magic == COLL_VIEW_TICK_MAGIC) {
		iop_put_u64le(c, h->instance);
		iop_put_u64le(c, h->seq);
		iop_put_u64le(c, (uint64_t)h->tick);
		return;
	}
	iop_put_u64le(c, h->seq);
	if (magic == COLL_VIEW_REPLY_MAGIC) {
		iop_put_u16le(c, h->status);
		iop_put_u16le(c, 0);
	}
}

enum iop_err coll_view_seal(struct iop_wcur *c, uint8_t *buf, const struct iop_key *key,
                            size_t *len)
{
	if (c->err)
		return c->err;
	if (iop_wcur_room(c) < IOP_MAC_BYTES)
		return IOP_ERR_FULL;
	size_t n = (size_t)(c->p - buf);
	enum iop_err e = iop_mac(key, buf, n, c->p);
	c->p += IOP_MAC_BYTES;
	*len = n + IOP_MAC_BYTES;
	return e;
}

static size_t hdr_len(uint32_t magic)
{
	return magic == COLL_VIEW_TICK_MAGIC  ? COLL_VIEW_TICK_HDR
	       : magic == COLL_VIEW_REQ_MAGIC ? COLL_VIEW_REQ_HDR
	                                      : COLL_VIEW_REPLY_HDR;
}

enum iop_err coll_view_open(const uint8_t *buf, size_t len, uint32_t magic,
                            const struct iop_key *key, uint64_t job_id, bool verify,
                            struct coll_view_hdr *h, struct iop_rcur *body)
{
	memset(h, 0, sizeof(*h));
	if (len < hdr_len(magic) + IOP_MAC_BYTES)
		return IOP_ERR_TRUNCATED;
	struct iop_rcur c = iop_rcur_make(buf, len - IOP_MAC_BYTES);
	if (iop_get_u32le(&c) != magic)
		return IOP_ERR_BAD_MAGIC;
	if (iop_get_u16le(&c) != COLL_VIEW_VERSION)
		return IOP_ERR_BAD_VERSION;
	h->type = iop_get_u16le(&c);
	h->job_id = iop_get_u64le(&c);
	if (magic == COLL_VIEW_TICK_MAGIC) {
		h->instance = iop_get_u64le(&c);
		h->seq = iop_get_u64le(&c);
		h->tick = (int64_t)iop_get_u64le(&c);
	} else {
		h->seq = iop_get_u64le(&c);
		if (magic == COLL_VIEW_REPLY_MAGIC) {
			h->status = iop_get_u16le(&c);
			(void)iop_get_u16le(&c);
		}
	}
	if (verify && (!iop_mac_ok(key, buf, len - IOP_MAC_BYTES, buf + len - IOP_MAC_BYTES) ||
	               h->job_id != job_id))
		return IOP_ERR_BAD_MAC;
	*body = c;
	return c.err;
}

void coll_view_put_key(struct iop_wcur *c, const struct coll_key *k)
{
	iop_put_u8(c, k->kind);
	iop_put_u8(c, (uint8_t)(k->layer << 4 | k->cls));
	iop_put_varint(c, k->rank);
	iop_put_u64le(c, k->id);
}

bool coll_view_get_key(struct iop_rcur *c, struct coll_key *k)
{
	k->kind = iop_get_u8(c);
	uint8_t lc = iop_get_u8(c);
	k->layer = lc >> 4;
	k->cls = lc & 15;
	k->rank = (uint32_t)iop_get_varint_max(c, UINT32_MAX);
	k->id = iop_get_u64le(c);
	return !c->err && k->kind >= COLL_ROW_RANK && k->kind <= COLL_ROW_FS;
}
