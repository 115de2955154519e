/* Where an alert lands (issue 21): the file system of its subject's files
 * and the state of the device and node under them when it starts, so a
 * user can tell the application from the storage. For straggler,
 * throughput_drop, latency_spike and hung_io alerts:
 *
 *   the file: the alert's own, else the file its rank (any rank, for a
 *             job-wide alert) spent the most time in so far (the latest
 *             counters);
 *   the node: the rank's, else the node whose sample shows that file
 *             system's device busiest;
 *   the figures: that node's latest sample (node/nodes.h): the device's
 *             utilisation and the node's I/O pressure (full).
 *
 * JSON: "context":{"mount","fs_type","device","device_util",
 * "io_pressure_full"} (shares 0 to 1; a figure not sampled is left out),
 * and for an NFS mount "rtt_ms" (its calls' mean round trip) in place of
 * the utilisation. The human line ends with " on /var/tmp (ext4, vda 97%
 * busy, io pressure 60%)", "(ext4, vda idle)" under 1 %, or "(nfs4,
 * srv:/home rtt 4.0 ms)". */
#ifndef COLL_ALERT_WHERE_H
#define COLL_ALERT_WHERE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "alerts.h"
#include "fsmap.h"
#include "state.h"

struct coll_alert_where {
	struct coll_fs fs;
	bool has_util, has_full, has_rtt;
	double util, io_full; /* 0 to 1 */
	double rtt_ms;        /* a network file system's (NFS) mean round trip */
};

/* Whether a's kind says where, and its file system is known: *out. */
bool coll_alert_where(const struct coll_alert *a, const struct coll_state *s,
                      struct coll_alert_where *out);
/* The "context" object. */
json_t *coll_alert_where_json(const struct coll_alert_where *w);
/* Appends " on MOUNT (TYPE, DEVICE ...)" to the line (its length len,
 * room cap); the new length. */
size_t coll_alert_where_line(const struct coll_alert_where *w, char *line, size_t len, size_t cap);
/* An alert about a node (node_pressure): "node" (its host name, else its
 * id in hex) into o; nothing for node 0. */
void coll_alert_json_node(json_t *o, uint32_t node, const struct coll_state *s);

#endif
