/* The spool: where a process leaves the last frames no collector
 * acknowledged, for its node's leaf to take when it can (a collector kept
 * off the CPU, stopped, slow to drain as the job ends). It is the
 * directory `spool` beside the leaf's `final.ipc`: a final address
 * ipc://DIR/final.ipc has its spool in DIR/spool, which the leaf makes
 * (mode 0700, in its private runtime directory). One file a process image,
 * named <CLOCK_REALTIME ns, 16 hex digits>-<node id, 8>-<pid, 8>.frames
 * (names sort by time: an exec's two images in order): a 16-byte header
 * (IOP_SPOOL_MAGIC, version, the image's start), then whole frames back
 * to back, each as it was or would have been sent; written under a name
 * starting with '.' and renamed, so a reader never sees half a file.
 * docs/wire-format.md, "Spool". Header only: the shim and the collector
 * must agree, and neither links the other. */
#ifndef IOP_SPOOL_H
#define IOP_SPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "codec.h"
#include "frame.h"

#define IOP_SPOOL_SUBDIR   "spool"
#define IOP_SPOOL_SUFFIX   ".frames"
#define IOP_SPOOL_NAME_LEN (16 + 1 + 8 + 1 + 8 + sizeof IOP_SPOOL_SUFFIX - 1)
/* The most a spool file may hold: what a reader takes of one. */
#define IOP_SPOOL_MAX_BYTES (64u << 20)

/* The header: u32 magic "IOPS", u16 version (1), u16 reserved (0), u64
 * CLOCK_REALTIME ns when the process image began (its shim started, or
 * its fork): a receiver tells its frames from an earlier image's of the
 * same pid by it (an exec). */
#define IOP_SPOOL_MAGIC      0x53504f49u /* "IOPS" */
#define IOP_SPOOL_VERSION    1
#define IOP_SPOOL_HEADER_LEN 16

static inline void iop_spool_header(uint8_t out[IOP_SPOOL_HEADER_LEN], uint64_t image_ns)
{
	iop_store_u32le(out, IOP_SPOOL_MAGIC);
	iop_store_u16le(out + 4, IOP_SPOOL_VERSION);
	iop_store_u16le(out + 6, 0);
	iop_store_u64le(out + 8, image_ns);
}

/* The image's start from a header; false when it is not one. */
static inline bool iop_spool_header_read(const uint8_t *buf, size_t len, uint64_t *image_ns)
{
	if (len < IOP_SPOOL_HEADER_LEN || iop_load_u32le(buf) != IOP_SPOOL_MAGIC ||
	    iop_load_u16le(buf + 4) != IOP_SPOOL_VERSION || iop_load_u16le(buf + 6) != 0)
		return false;
	*image_ns = iop_load_u64le(buf + 8);
	return true;
}

/* DIR/spool for the final address ipc://DIR/final.ipc, into out. False
 * when the address is not of that form (a tcp:// collector has no spool
 * here) or out is too small. */
static inline bool iop_spool_dir(const char *final_url, char *out, size_t out_len)
{
	static const char scheme[] = "ipc://", sock[] = "/final.ipc";
	size_t n = strlen(final_url), s = sizeof scheme - 1, k = sizeof sock - 1;
	if (n <= s + k || memcmp(final_url, scheme, s) != 0 || strcmp(final_url + n - k, sock) != 0)
		return false;
	size_t dir = n - s - k;
	if (dir + 1 + sizeof IOP_SPOOL_SUBDIR > out_len)
		return false;
	memcpy(out, final_url + s, dir);
	out[dir] = '/';
	memcpy(out + dir + 1, IOP_SPOOL_SUBDIR, sizeof IOP_SPOOL_SUBDIR);
	return true;
}

/* The length of the whole frame starting at buf (header, payload, MAC) by
 * its header; 0 when len holds no header or the payload length is above
 * the limit. The frame's content is not checked here. */
static inline size_t iop_frame_len_at(const uint8_t *buf, size_t len)
{
	if (len < IOP_FRAME_HEADER_LEN)
		return 0;
	uint32_t p = iop_load_u32le(buf + 28);
	return p > IOP_FRAME_MAX_PAYLOAD ? 0 : (size_t)IOP_FRAME_OVERHEAD + p;
}

#endif
