/* A scalability-protocols pipe written by hand: what a forked child's
 * sender speaks to the leaf's nanomsg PULL socket (and its REP socket for
 * the last frame), because nanomsg itself does not survive fork: its
 * worker threads stay behind in the parent and its locks may be held.
 *
 * The wire is nanomsg's own (its RFCs sp-tcp-mapping and sp-ipc-mapping):
 * on connecting, each side sends 8 bytes, "\0SP\0", its protocol number
 * (16 bits, big endian) and two zero bytes, and checks the peer's. Then
 * every message is its length (64 bits, big endian) and its bytes; over
 * ipc a message-type byte (1) comes first. A REQ message begins with a
 * 32-bit request id whose top bit is set, and the REP's reply begins with
 * the same id. A PUSH pipe's peer never sends anything after its header.
 *
 * Every wait is bounded, and the descriptors come from socket() (guard.c
 * keeps them out of the application's way when its table is shared). */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "spwire.h"

#define SP_HDR     8
#define MSG_HDR    13 /* type byte, 64-bit length, a REQ id */
#define IPC_NORMAL 1

static uint64_t deadline(unsigned wait_ms)
{
	return iop_mono_ns() + (uint64_t)wait_ms * 1000000u;
}

/* Waits for events on fd until end; false when the time ran out. */
static bool wait_fd(int fd, short events, uint64_t end)
{
	for (;;) {
		uint64_t now = iop_mono_ns();
		if (now >= end)
			return false;
		struct pollfd p = {.fd = fd, .events = events};
		int ms = (int)((end - now + 999999) / 1000000);
		int r = poll(&p, 1, ms);
		if (r > 0)
			return true;
		if (r < 0 && errno != EINTR)
			return false;
	}
}

static void drop(struct shim_sp *p)
{
	if (p->fd >= 0)
		close(p->fd);
	p->fd = -1;
	if (p->pend)
		p->pend->len = p->pend->off = 0;
}

/* Writes the iovecs whole by end (no wait when end is 0); what was written
 * of them in *done. 0, -EAGAIN (time ran out) or the error. */
static int write_all(struct shim_sp *p, struct iovec *iov, int n, uint64_t end, size_t *done)
{
	*done = 0;
	while (n > 0) {
		struct msghdr m = {.msg_iov = iov, .msg_iovlen = (size_t)n};
		ssize_t w = sendmsg(p->fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				return -errno;
			if (!end || !wait_fd(p->fd, POLLOUT, end))
				return -EAGAIN;
			continue;
		}
		*done += (size_t)w;
		while (n > 0 && (size_t)w >= iov->iov_len) {
			w -= (ssize_t)iov->iov_len;
			iov++;
			n--;
		}
		if (n > 0) {
			iov->iov_base = (uint8_t *)iov->iov_base + w;
			iov->iov_len -= (size_t)w;
		}
	}
	return 0;
}

/* Reads exactly len bytes by end. */
static int read_all(struct shim_sp *p, void *buf, size_t len, uint64_t end)
{
	for (size_t got = 0; got < len;) {
		ssize_t r = recv(p->fd, (uint8_t *)buf + got, len - got, MSG_DONTWAIT);
		if (r > 0) {
			got += (size_t)r;
			continue;
		}
		if (r == 0)
			return -ECONNRESET;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return -errno;
		if (!wait_fd(p->fd, POLLIN, end))
			return -ETIMEDOUT;
	}
	return 0;
}

static int open_ipc(const char *path, uint64_t end)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof a.sun_path)
		return -ENAMETOOLONG;
	strcpy(a.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	(void)end; /* a local connect does not wait: a full backlog is EAGAIN */
	if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
		int e = -errno;
		close(fd);
		return e;
	}
	return fd;
}

static int open_tcp(const char *hostport, uint64_t end)
{
	char host[256];
	const char *colon = strrchr(hostport, ':');
	if (!colon || (size_t)(colon - hostport) >= sizeof host || colon == hostport)
		return -EINVAL;
	memcpy(host, hostport, (size_t)(colon - hostport));
	host[colon - hostport] = 0;
	/* nanomsg's "tcp://interface;host:port": the host after the ';' */
	const char *h = strchr(host, ';') ? strchr(host, ';') + 1 : host;
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res;
	if (getaddrinfo(h, colon + 1, &hints, &res) != 0)
		return -EHOSTUNREACH;
	int fd = -ECONNREFUSED;
	for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
		int s = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (s < 0)
			continue;
		int r = connect(s, ai->ai_addr, ai->ai_addrlen);
		if (r != 0 && errno == EINPROGRESS && wait_fd(s, POLLOUT, end)) {
			int err = 0;
			socklen_t el = sizeof err;
			getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &el);
			r = err ? -1 : 0;
		}
		if (r == 0) {
			fd = s;
			break;
		}
		close(s);
	}
	freeaddrinfo(res);
	return fd;
}

int shim_sp_connect(struct shim_sp *p, const char *url, uint16_t proto, struct shim_sp_pend *pend,
		    unsigned wait_ms)
{
	uint64_t end = deadline(wait_ms);
	*p = (struct shim_sp){.fd = -1, .proto = proto, .pend = pend};
	if (pend)
		pend->off = pend->len = 0;
	int fd;
	if (strncmp(url, "ipc://", 6) == 0) {
		fd = open_ipc(url + 6, end);
	} else if (strncmp(url, "tcp://", 6) == 0) {
		p->tcp = true;
		fd = open_tcp(url + 6, end);
	} else {
		return -EPROTONOSUPPORT;
	}
	if (fd < 0)
		return fd;
	p->fd = fd;
	uint8_t mine[SP_HDR] = {0, 'S', 'P', 0, (uint8_t)(proto >> 8), (uint8_t)proto, 0, 0};
	uint8_t peer[SP_HDR];
	struct iovec iov = {mine, sizeof mine};
	size_t done;
	int e = write_all(p, &iov, 1, end, &done);
	if (!e)
		e = read_all(p, peer, sizeof peer, end);
	/* the peer of PUSH (80) is PULL (81), of REQ (48) REP (49) */
	uint16_t want = (uint16_t)(proto + 1);
	if (!e && (memcmp(peer, mine, 4) != 0 || (uint16_t)(peer[4] << 8 | peer[5]) != want))
		e = -EPROTO;
	if (e)
		drop(p);
	return e;
}

/* The message header: ipc's type byte, the length, a REQ's id. */
static size_t header(struct shim_sp *p, uint8_t *h, size_t len)
{
	size_t n = 0;
	if (!p->tcp)
		h[n++] = IPC_NORMAL;
	uint64_t total = len + (p->proto == SHIM_SP_REQ ? 4 : 0);
	for (int i = 7; i >= 0; i--)
		h[n++] = (uint8_t)(total >> (8 * i));
	if (p->proto == SHIM_SP_REQ) {
		uint32_t id = ++p->req_id | 0x80000000u;
		for (int i = 3; i >= 0; i--)
			h[n++] = (uint8_t)(id >> (8 * i));
	}
	return n;
}

/* Writes what a send with no wait left, at most until end. */
static int flush(struct shim_sp *p, uint64_t end)
{
	struct shim_sp_pend *q = p->pend;
	if (!q || q->off == q->len)
		return 0;
	struct iovec iov = {q->buf + q->off, q->len - q->off};
	size_t done;
	int e = write_all(p, &iov, 1, end, &done);
	q->off += done;
	if (q->off == q->len)
		q->off = q->len = 0;
	return e;
}

int shim_sp_send(struct shim_sp *p, const void *msg, size_t len, unsigned wait_ms)
{
	if (p->fd < 0)
		return -ENOTCONN;
	uint64_t end = wait_ms ? deadline(wait_ms) : 0;
	int e = flush(p, end);
	if (e) {
		if (e != -EAGAIN)
			drop(p);
		return e;
	}
	uint8_t h[MSG_HDR];
	size_t hl = header(p, h, len);
	struct iovec iov[2] = {{h, hl}, {(void *)msg, len}};
	size_t done;
	e = write_all(p, iov, 2, end, &done);
	if (e == -EAGAIN && done == 0)
		return -EAGAIN; /* refused whole: nothing of it went out */
	if (e == -EAGAIN && p->pend && hl + len - done <= p->pend->cap) {
		/* taken: the rest goes out before the next message */
		struct shim_sp_pend *q = p->pend;
		size_t rest = hl + len - done, from_h = done < hl ? hl - done : 0;
		memcpy(q->buf, h + (hl - from_h), from_h);
		memcpy(q->buf + from_h, (const uint8_t *)msg + (len - (rest - from_h)), rest - from_h);
		q->off = 0;
		q->len = rest;
		return 0;
	}
	if (e)
		drop(p); /* half a message went out: this stream is done */
	return e;
}

bool shim_sp_writable(struct shim_sp *p)
{
	if (p->fd < 0 || flush(p, 0) != 0)
		return false;
	struct pollfd q = {.fd = p->fd, .events = POLLOUT};
	return poll(&q, 1, 0) == 1 && (q.revents & POLLOUT);
}

long shim_sp_reply(struct shim_sp *p, void *buf, size_t cap, unsigned wait_ms)
{
	if (p->fd < 0)
		return -ENOTCONN;
	uint64_t end = deadline(wait_ms);
	uint8_t h[9];
	size_t hl = p->tcp ? 8 : 9;
	int e = read_all(p, h, hl, end);
	uint64_t len = 0;
	for (size_t i = hl - 8; !e && i < hl; i++)
		len = len << 8 | h[i];
	if (!e && ((!p->tcp && h[0] != IPC_NORMAL) || len < 4 || len > (1u << 20)))
		e = -EPROTO;
	uint8_t id[4];
	if (!e)
		e = read_all(p, id, 4, end);
	if (!e && ((uint32_t)id[0] << 24 | (uint32_t)id[1] << 16 | (uint32_t)id[2] << 8 | id[3]) !=
			  (p->req_id | 0x80000000u))
		e = -EPROTO;
	len -= 4;
	for (uint64_t got = 0; !e && got < len;) {
		uint8_t skip[256];
		size_t n = len - got < sizeof skip ? (size_t)(len - got) : sizeof skip;
		if (!(e = read_all(p, skip, n, end)) && got < cap)
			memcpy((uint8_t *)buf + got, skip, cap - got < n ? cap - got : n);
		got += n;
	}
	if (e) {
		drop(p);
		return e;
	}
	return (long)len;
}

void shim_sp_close(struct shim_sp *p, unsigned wait_ms)
{
	if (p->fd >= 0 && wait_ms)
		flush(p, deadline(wait_ms));
	drop(p);
}
