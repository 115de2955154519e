/* Internal: a scalability-protocols pipe written by hand (spwire.c), for a
 * forked child's sender, which cannot use nanomsg (see sender.c). One
 * connection to a nanomsg socket, PUSH or REQ, over ipc:// or tcp://. */
#ifndef IOP_SHIM_SPWIRE_H
#define IOP_SHIM_SPWIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SHIM_SP_PUSH 80 /* NN_PUSH: its peer is a PULL (81) */
#define SHIM_SP_REQ  48 /* NN_REQ: its peer is a REP (49) */

/* The part of a message that a send with no wait could not write yet. */
struct shim_sp_pend {
	size_t off, len, cap;
	uint8_t *buf;
};

struct shim_sp {
	int fd; /* -1: not connected */
	bool tcp;
	uint16_t proto;
	uint32_t req_id; /* REQ: the last request's id */
	struct shim_sp_pend *pend; /* NULL: sends wait until written or fail */
};

/* Connects to url (ipc://PATH, tcp://HOST:PORT) and exchanges the SP
 * headers, waiting at most wait_ms in all; 0 or a negative errno. pend:
 * where a send with no wait keeps what the socket did not take (cap:
 * the largest message plus 13), or NULL. */
int shim_sp_connect(struct shim_sp *p, const char *url, uint16_t proto, struct shim_sp_pend *pend,
		    unsigned wait_ms);

/* Sends one message. wait_ms 0: refuses (-EAGAIN) when the socket takes
 * nothing, and keeps in pend what it did not take of a message begun (the
 * next send writes it first). Else waits at most wait_ms for the whole
 * message. 0 or a negative errno; a broken connection is closed. */
int shim_sp_send(struct shim_sp *p, const void *msg, size_t len, unsigned wait_ms);

/* Whether a send with no wait would be taken now. */
bool shim_sp_writable(struct shim_sp *p);

/* REQ: waits at most wait_ms for the reply to the last request; its
 * length (the request id taken off), or a negative errno. At most cap
 * bytes of it are kept in buf. */
long shim_sp_reply(struct shim_sp *p, void *buf, size_t cap, unsigned wait_ms);

/* Writes what is pending (at most wait_ms), then closes. */
void shim_sp_close(struct shim_sp *p, unsigned wait_ms);

#endif
