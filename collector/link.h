/* The link between a collector and its parent in the tree: tick deltas go
 * up over nanomsg REQ/REP (tcp:// between nodes, ipc:// or inproc:// in
 * tests), one message at a time, each acknowledged:
 *
 *   child (uplink, REQ) --delta message (delta.h, MAC'd)--> parent (downlink, REP)
 *                       <--ack (MAC'd: job, parent instance, seq)--
 *
 * The uplink keeps the deltas not yet acknowledged in a bounded queue and
 * sends them in order; while the parent is away (down, restarting,
 * unreachable) they wait, and past the bound the oldest are dropped and
 * counted (their exact counters are not lost: see resync). The downlink
 * applies each (sender, seq) once, so a request resent after a lost ack
 * changes nothing.
 *
 * Every parent has a random instance id, sent in each ack. An uplink that
 * sees a new instance (the parent restarted and lost what it had) sends a
 * resync: every name and the latest of every counter it has passed up, and
 * its processes' states. Counters are absolute per process (delta.h), so a
 * resync makes the parent's totals whole again and never counts twice.
 * docs/collector.md ("The tree") gives the ack's bytes. */
#ifndef COLL_LINK_H
#define COLL_LINK_H

#include <stdbool.h>
#include <stdint.h>

#include "auth.h"
#include "delta.h"

struct coll_uplink_cfg {
	const char *url;    /* the parent's downlink */
	uint64_t job_id;
	struct iop_key key;
	uint64_t sender;    /* this collector's id (random when 0) */
	uint32_t max_queue; /* deltas kept while unacknowledged (default 600) */
};

struct coll_uplink_stats {
	uint64_t queued, acked, dropped, resyncs, refused;
	uint32_t waiting; /* in the queue now */
	uint64_t parent;  /* instance id of the parent last heard, 0 = none yet */
	uint64_t last_ack_ns;
};

struct coll_uplink;
enum iop_err coll_uplink_new(const struct coll_uplink_cfg *cfg, struct coll_uplink **out);
void coll_uplink_free(struct coll_uplink *u);
/* Queues a closed tick's delta (encoded now; d is not kept). */
enum iop_err coll_uplink_send(struct coll_uplink *u, const struct coll_delta *d);
/* The fd that becomes readable when an ack arrives (for poll). */
int coll_uplink_fd(const struct coll_uplink *u);
/* Takes acks, sends the next delta when none is in flight; never blocks.
 * Call it when the fd is readable and at least every 100 ms. */
void coll_uplink_pump(struct coll_uplink *u, uint64_t now_ns);
/* Nothing queued nor in flight. */
bool coll_uplink_idle(const struct coll_uplink *u);
void coll_uplink_stats(const struct coll_uplink *u, struct coll_uplink_stats *out);

struct coll_downlink_stats {
	uint64_t received, applied, duplicates, rejected;
	uint32_t children; /* senders heard */
	uint64_t instance;
};

struct coll_downlink;
/* Binds a REP socket to each of the urls (n of them). *err_url = the one
 * that failed, if any. */
enum iop_err coll_downlink_new(const char *const *urls, unsigned n, uint64_t job_id,
                               const struct iop_key *key, struct coll_downlink **out,
                               const char **err_url);
void coll_downlink_free(struct coll_downlink *dl);
int coll_downlink_fd(const struct coll_downlink *dl);
/* Takes the requests waiting (at most max), calls fn with each new delta
 * and its sender's id (the link reuses d after fn returns: fn may take its
 * histograms, coll_root_delta_from) and acknowledges it. */
unsigned coll_downlink_pump(struct coll_downlink *dl, unsigned max,
                            void (*fn)(void *arg, uint64_t sender, struct coll_delta *d),
                            void *arg);
void coll_downlink_stats(const struct coll_downlink *dl, struct coll_downlink_stats *out);

#endif
