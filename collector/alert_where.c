/* Where an alert lands. See alert_where.h. */
#include "alert_where.h"

#include <stdio.h>

static bool says_where(enum coll_alert_kind k)
{
	return k == COLL_ALERT_STRAGGLER || k == COLL_ALERT_THROUGHPUT_DROP ||
	       k == COLL_ALERT_LATENCY_SPIKE || k == COLL_ALERT_HUNG_IO;
}

/* The file rank (COLL_RANK_NONE: any) spent the most time in, with a
 * known file system; 0 when none. */
static uint64_t busiest_file(const struct coll_state *s, uint32_t rank)
{
	uint64_t best = 0, best_ns = 0, id;
	for (uint32_t i = 0; i < s->latest.n; i++) {
		const struct coll_counter *c = &s->latest.v[i];
		if (!c->file || (rank != COLL_RANK_NONE && c->rank != rank) || c->time_ns < best_ns ||
		    (c->time_ns == best_ns && best) || !coll_fs_id_of(&s->names, c->file, &id))
			continue;
		best = c->file;
		best_ns = c->time_ns;
	}
	return best;
}

bool coll_alert_where(const struct coll_alert *a, const struct coll_state *s,
                      struct coll_alert_where *out)
{
	*out = (struct coll_alert_where){0};
	if (!says_where(a->kind))
		return false;
	uint64_t file = a->file ? a->file : busiest_file(s, a->rank);
	if (!file || !coll_fs_of(&s->names, file, &out->fs))
		return false;
	const struct coll_node_sample *x = NULL;
	const struct coll_node_fs *dev = NULL;
	if (a->rank != COLL_RANK_NONE && a->rank < s->n_ranks && s->ranks[a->rank].state) {
		x = coll_nodeset_find(&s->nodes, (uint32_t)s->ranks[a->rank].node);
		dev = coll_node_fs_find(x, out->fs.id);
	} else {
		for (uint32_t i = 0; i < s->nodes.n; i++) {
			const struct coll_node_fs *f = coll_node_fs_find(&s->nodes.v[i], out->fs.id);
			if (f && (!dev || f->util_ppm > dev->util_ppm)) {
				dev = f;
				x = &s->nodes.v[i];
			}
		}
	}
	if (dev && dev->kind == COLL_NODE_FS_DEVICE) {
		out->has_util = true;
		out->util = dev->util_ppm / 1e6;
	} else if (dev && dev->wait_us) {
		out->has_rtt = true;
		out->rtt_ms = dev->wait_us / 1e3;
	}
	if (x && (x->flags & COLL_NODE_FULL)) {
		out->has_full = true;
		out->io_full = x->psi_full_ppm / 1e6;
	}
	return true;
}

json_t *coll_alert_where_json(const struct coll_alert_where *w)
{
	json_t *o = json_object();
	if (!o)
		return NULL;
	json_object_set_new(o, "mount", json_string(w->fs.point));
	json_object_set_new(o, "fs_type", json_string(w->fs.type));
	json_object_set_new(o, "device", json_string(w->fs.device));
	if (w->has_util)
		json_object_set_new(o, "device_util", json_real(w->util));
	if (w->has_full)
		json_object_set_new(o, "io_pressure_full", json_real(w->io_full));
	if (w->has_rtt)
		json_object_set_new(o, "rtt_ms", json_real(w->rtt_ms));
	return o;
}

size_t coll_alert_where_line(const struct coll_alert_where *w, char *line, size_t len, size_t cap)
{
	char dev[320] = "";
	if (w->has_util && w->util < 0.01)
		snprintf(dev, sizeof dev, ", %s idle", w->fs.device);
	else if (w->has_util)
		snprintf(dev, sizeof dev, ", %s %.0f%% busy", w->fs.device, 100 * w->util);
	else if (w->has_rtt)
		snprintf(dev, sizeof dev, ", %s rtt %.1f ms", w->fs.device, w->rtt_ms);
	char psi[64] = "";
	if (w->has_full)
		snprintf(psi, sizeof psi, ", io pressure %.0f%%", 100 * w->io_full);
	if (len >= cap)
		return len;
	int n = snprintf(line + len, cap - len, " on %s (%s%s%s)", w->fs.point, w->fs.type, dev, psi);
	if (n < 0)
		return len;
	return len + (size_t)n < cap ? len + (size_t)n : cap - 1;
}

void coll_alert_json_node(json_t *o, uint32_t node, const struct coll_state *s)
{
	if (!o || !node)
		return;
	const char *host = coll_state_host(s, node);
	char hex[16];
	snprintf(hex, sizeof hex, "0x%08x", node);
	json_object_set_new(o, "node", json_string(host ? host : hex));
}
