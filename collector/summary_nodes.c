/* The summary's nodes. See summary_nodes.h. */
#include "summary_nodes.h"

#include "fsmap.h"

static void host_of(const struct coll_state *s, uint32_t node, char *buf, size_t len)
{
	const char *host = coll_state_host(s, node);
	if (host)
		snprintf(buf, len, "%s", host);
	else
		snprintf(buf, len, "0x%08x", node);
}

json_t *coll_summary_nodes(const struct coll_state *s)
{
	json_t *out = json_array();
	for (uint32_t i = 0; out && i < s->peaks.n; i++) {
		const struct coll_node_sample *x = &s->peaks.v[i];
		char host[256];
		host_of(s, x->node, host, sizeof host);
		json_t *o = json_object(), *fss = json_array();
		json_object_set_new(o, "node", json_string(host));
		if (x->flags & COLL_NODE_PSI)
			json_object_set_new(o, "io_pressure_some_peak", json_real(x->psi_some_ppm / 1e6));
		if (x->flags & COLL_NODE_FULL)
			json_object_set_new(o, "io_pressure_full_peak", json_real(x->psi_full_ppm / 1e6));
		if (x->flags & COLL_NODE_IOWAIT)
			json_object_set_new(o, "iowait_peak", json_real(x->iowait_ppm / 1e6));
		for (uint32_t j = 0; j < x->n_fs && j < COLL_NODE_FS_MAX; j++) {
			const struct coll_node_fs *f = &x->fs[j];
			struct coll_fs fs;
			json_t *e = json_object();
			if (coll_fs_get(&s->names, f->fs, &fs)) {
				json_object_set_new(e, "mount", json_string(fs.point));
				json_object_set_new(e, "type", json_string(fs.type));
				json_object_set_new(e, "device", json_string(fs.device));
			}
			bool dev = f->kind == COLL_NODE_FS_DEVICE;
			json_object_set_new(e, "kind", json_string(dev ? "device" : "network"));
			if (dev)
				json_object_set_new(e, "util_peak", json_real(f->util_ppm / 1e6));
			json_object_set_new(e, "wait_ms_peak", json_real(f->wait_us / 1e3));
			json_object_set_new(e, "read_Bps_peak", json_integer((json_int_t)f->read_Bps));
			json_object_set_new(e, "write_Bps_peak", json_integer((json_int_t)f->write_Bps));
			json_array_append_new(fss, e);
		}
		json_object_set_new(o, "filesystems", fss);
		json_array_append_new(out, o);
	}
	return out;
}

void coll_summary_nodes_print(FILE *to, const struct coll_state *s)
{
	for (uint32_t i = 0; i < s->peaks.n && i < 4; i++) {
		const struct coll_node_sample *x = &s->peaks.v[i];
		const struct coll_node_fs *dev = coll_node_busiest(x, false);
		char host[256], busy[1400] = "", psi[64] = "";
		host_of(s, x->node, host, sizeof host);
		struct coll_fs fs;
		if (dev && coll_fs_get(&s->names, dev->fs, &fs))
			snprintf(busy, sizeof busy, " %s (%s) peak %.0f%% busy,", fs.device, fs.point,
			         dev->util_ppm / 1e4);
		if (x->flags & (COLL_NODE_FULL | COLL_NODE_PSI))
			snprintf(psi, sizeof psi, " io pressure peak %.0f%% (%s)",
			         (x->flags & COLL_NODE_FULL ? x->psi_full_ppm : x->psi_some_ppm) / 1e4,
			         x->flags & COLL_NODE_FULL ? "full" : "some");
		fprintf(to, "  %s %s:%s%s\n", i ? "     " : "nodes", host, busy, psi);
	}
	if (s->peaks.n > 4)
		fprintf(to, "        ... and %u more\n", s->peaks.n - 4);
}
