/* The nodes' load for the header. See model.h (tui_node_load). */
#include <math.h>
#include <stdio.h>

#include "fsmap.h"
#include "model.h"

#define RECENT_TICKS 5 /* a sample older than this is a node gone quiet */

static bool recent(const struct coll_node_sample *x, int64_t t)
{
	return x->t <= t && x->t + RECENT_TICKS >= t;
}

/* The sample's I/O pressure in ppm: full, else some; false when none. */
static bool pressure(const struct coll_node_sample *x, uint32_t *ppm)
{
	*ppm = x->flags & COLL_NODE_FULL ? x->psi_full_ppm : x->psi_some_ppm;
	return x->flags & (COLL_NODE_FULL | COLL_NODE_PSI);
}

void tui_node_figures(const struct coll_state *s, uint32_t node, int64_t t, double *dev,
                      double *psi)
{
	*dev = *psi = NAN;
	const struct coll_node_sample *x = coll_nodeset_find(&s->nodes, node);
	if (!x || !recent(x, t))
		return;
	const struct coll_node_fs *d = coll_node_busiest(x, false);
	uint32_t p;
	if (d)
		*dev = d->util_ppm / 1e6;
	if (pressure(x, &p))
		*psi = p / 1e6;
}

void tui_node_load(const struct coll_state *s, int64_t t, char *buf, size_t len)
{
	const struct coll_node_sample *dev_x = NULL, *psi_x = NULL;
	const struct coll_node_fs *dev = NULL;
	uint32_t psi = 0;
	for (uint32_t i = 0; i < s->nodes.n; i++) {
		const struct coll_node_sample *x = &s->nodes.v[i];
		if (!recent(x, t))
			continue;
		const struct coll_node_fs *d = coll_node_busiest(x, false);
		if (d && (!dev || d->util_ppm > dev->util_ppm)) {
			dev = d;
			dev_x = x;
		}
		uint32_t p;
		if (pressure(x, &p) && (!psi_x || p > psi)) {
			psi = p;
			psi_x = x;
		}
	}
	size_t off = 0;
	struct coll_fs fs;
	if (dev && coll_fs_get(&s->names, dev->fs, &fs)) {
		const char *host = coll_state_host(s, dev_x->node);
		int n = snprintf(buf, len, "  busiest %s %.0f%% (%s)", fs.device, dev->util_ppm / 1e4,
		                 host ? host : "?");
		off = n > 0 && (size_t)n < len ? (size_t)n : 0;
	}
	if (psi_x && off < len) {
		const char *host = coll_state_host(s, psi_x->node);
		snprintf(buf + off, len - off, "  io pressure %.0f%% (%s)", psi / 1e4,
		         host ? host : "?");
	}
}
