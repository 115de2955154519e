/* The viewer protocol between a root (viewsrv.h) and viewers (viewer.h):
 * byte layouts shared by both sides. docs/viewer.md describes them.
 *
 * A root address A (tcp://HOST:PORT or ipc://PATH) names two sockets:
 * REQ/REP queries at A, and the PUB of closed ticks at A's pub address
 * (tcp://HOST:PORT+1, ipc://PATH.pub), so a viewer needs one address.
 *
 * Every message ends with a 16-byte MAC with the job key over the bytes
 * before it. Ticks: header (magic "IOPV", version, type, job, instance,
 * sequence, tick) + the tick delta body. Requests: header (magic "IOPQ",
 * version, type, job, request id) + arguments. Replies: header (magic
 * "IOPR", version, type, job, request id, status) + payload. */
#ifndef COLL_VIEWPROTO_H
#define COLL_VIEWPROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "auth.h"
#include "codec.h"
#include "err.h"
#include "tick.h"

#define COLL_VIEW_TICK_MAGIC  0x56504f49u /* "IOPV" */
#define COLL_VIEW_REQ_MAGIC   0x51504f49u /* "IOPQ" */
#define COLL_VIEW_REPLY_MAGIC 0x52504f49u /* "IOPR" */
#define COLL_VIEW_VERSION     4 /* 2: delta bodies of delta version 3; 3: of 4
                                   * and 5; 4: of 6 (rows by column) */

#define COLL_VIEW_TICK_HDR  40 /* magic, version, type, job, instance, seq, tick */
#define COLL_VIEW_REQ_HDR   24 /* magic, version, type, job, request id */
#define COLL_VIEW_REPLY_HDR 28 /* magic, version, type, job, request id, status, reserved */

/* Largest request a root reads, largest message a viewer reads. */
#define COLL_VIEW_REQ_MAX   4096
#define COLL_VIEW_REPLY_MAX ((size_t)2047 << 20) /* nanomsg's limit is an int */

enum coll_view_type {
	COLL_VIEW_TICK = 1,     /* published: one closed tick */
	COLL_VIEW_KEYFRAME = 2, /* the whole state */
	COLL_VIEW_HISTORY = 3,  /* one row key over a tick range */
	COLL_VIEW_RANK = 4,     /* one rank's files and layers */
	COLL_VIEW_FILE = 5,     /* one file's ranks */
	COLL_VIEW_ALERTS = 6,   /* active alerts and the log, JSON */
};

/* Points a history reply holds at most. */
#define COLL_VIEW_HISTORY_MAX 100000

/* The pub address of a root address into out: OVERSIZED when it does not
 * fit, INVAL when addr is neither tcp://HOST:PORT (PORT < 65535) nor
 * ipc://PATH. */
enum iop_err coll_view_pub_addr(const char *addr, char *out, size_t len);

struct coll_view_hdr {
	uint16_t type;
	uint64_t job_id;
	uint64_t instance; /* ticks: the server's random id, new at each start */
	uint64_t seq;      /* ticks: sequence; requests and replies: request id */
	int64_t tick;      /* ticks: the tick number */
	uint16_t status;   /* replies: enum iop_err */
};

/* Starts a message of magic (one of the three) at the cursor: the header
 * fields of that kind. The caller puts the rest, then seals it. */
void coll_view_begin(struct iop_wcur *c, uint32_t magic, const struct coll_view_hdr *h);
/* Appends the MAC over buf[0..c->p) (the cursor must be over buf, with
 * IOP_MAC_BYTES of room left). *len = the whole message. */
enum iop_err coll_view_seal(struct iop_wcur *c, uint8_t *buf, const struct iop_key *key,
                            size_t *len);

/* Checks a message of magic: length, magic, version, MAC with key, job.
 * On success *h is its header and *body is a cursor over what follows
 * the header (the MAC excluded). BAD_MAC for a wrong key or another job;
 * TRUNCATED, BAD_MAGIC, BAD_VERSION. verify = false skips the MAC and
 * job check (a refusal a viewer with a wrong key cannot check). */
enum iop_err coll_view_open(const uint8_t *buf, size_t len, uint32_t magic,
                            const struct iop_key *key, uint64_t job_id, bool verify,
                            struct coll_view_hdr *h, struct iop_rcur *body);

/* A row key in a request: u8 kind, u8 layer << 4 | class, varint rank,
 * u64 id. Get returns false (the cursor's error, or an unknown kind). */
void coll_view_put_key(struct iop_wcur *c, const struct coll_key *k);
bool coll_view_get_key(struct iop_rcur *c, struct coll_key *k);

#endif
