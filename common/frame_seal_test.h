/* For the frame tests (frame_test.c, run_test.c): a header and a valid MAC
 * written around any payload, so a malformed frame reaches the check it is
 * built for rather than failing the MAC first. */
#ifndef IOP_FRAME_SEAL_TEST_H
#define IOP_FRAME_SEAL_TEST_H

#include "frame.h"
#include "test_util.h"

/* payload[0..plen) is already at buf + IOP_FRAME_HEADER_LEN; returns the
 * frame's length. */
static inline size_t test_seal(uint8_t *buf, size_t plen, uint16_t version,
                               const struct iop_frame_hdr *hdr, const struct iop_key *key,
                               uint32_t n_events, uint16_t n_names, uint16_t n_counters,
                               uint16_t n_inflight)
{
	iop_store_u32le(buf, IOP_FRAME_MAGIC);
	iop_store_u16le(buf + 4, version);
	iop_store_u16le(buf + 6, 0);
	iop_store_u64le(buf + 8, hdr->job_id);
	iop_store_u32le(buf + 16, hdr->node_id);
	iop_store_u32le(buf + 20, hdr->rank);
	iop_store_u32le(buf + 24, hdr->pid);
	iop_store_u32le(buf + 28, (uint32_t)plen);
	iop_store_u64le(buf + 32, hdr->seq);
	iop_store_u64le(buf + 40, hdr->base_ns);
	iop_store_u32le(buf + 48, n_events);
	iop_store_u16le(buf + 52, n_names);
	iop_store_u16le(buf + 54, n_counters);
	iop_store_u16le(buf + 56, n_inflight);
	iop_store_u16le(buf + 58, 0);
	size_t body = IOP_FRAME_HEADER_LEN + plen;
	assert_int_equal(iop_mac(key, buf, body, buf + body), IOP_OK);
	return body + IOP_MAC_BYTES;
}

#endif
