/* The summary's nodes (summary_nodes.c): what the leaves sampled of their
 * nodes over the job (node/nodes.h, docs/holistic.md), their peaks. */
#ifndef COLL_SUMMARY_NODES_H
#define COLL_SUMMARY_NODES_H

#include <stdio.h>

#include <jansson.h>

#include "state.h"

/* "nodes": per node sampled, in the order first sampled: {"node" (its
 * host name, else its id in hex), "io_pressure_some_peak",
 * "io_pressure_full_peak", "iowait_peak" (shares 0 to 1, each when
 * sampled), "filesystems":[{"mount","type","device","kind" ("device" or
 * "network"), "util_peak" (devices), "wait_ms_peak", "read_Bps_peak",
 * "write_Bps_peak"}]}. Empty when no leaf sampled its node. */
json_t *coll_summary_nodes(const struct coll_state *s);
/* The human summary's line per node (at most 4): its busiest device's
 * peak and its peak I/O pressure. */
void coll_summary_nodes_print(FILE *to, const struct coll_state *s);

#endif
