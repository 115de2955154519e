/* The node_pressure rule (issue 21): a node's device busy, or its tasks
 * stalled on I/O, while the job's ranks there do I/O on that device. The
 * alert names the node and the device, and the job's share of the
 * device's bytes: a low share means another job or process loads it (the
 * noisy neighbour, which a per-job tool cannot see otherwise). From the
 * tick's node samples (node/nodes.h, the leaves' own figures). */
#include <stdio.h>

#include "alert_int.h"
#include "fsmap.h"
#include "nodes.h"

/* The device's name (the file system's name text: mount, type, device). */
static void device_of(const struct coll_alerts *a, uint64_t fs, char *buf, size_t len)
{
	const char *text = a->ctx->name ? a->ctx->name(a->ctx->name_arg, fs) : NULL;
	struct coll_fs f;
	if (text && coll_fs_parse(text, strlen(text), &f))
		fmt_text(buf, len, "%s (%s)", f.device, f.point);
	else
		fmt_text(buf, len, "device 0x%016llx", (unsigned long long)fs);
}

enum iop_err judge_node_pressure(struct coll_alerts *a, const struct rule_rt *rt)
{
	const struct coll_nodeset *ns = a->ctx->nodes;
	for (uint32_t i = 0; ns && i < ns->n; i++) {
		const struct coll_node_sample *x = &ns->v[i];
		const struct coll_node_fs *worst = coll_node_busiest(x, true);
		uint64_t job_ops = 0;
		for (uint32_t j = 0; j < x->n_fs && j < COLL_NODE_FS_MAX; j++)
			job_ops += x->fs[j].job_ops;
		if (job_ops < rt->r.min_ops || job_ops == 0)
			continue; /* the job does no I/O on this node's devices */
		double util = worst ? worst->util_ppm / 1e6 : 0;
		double full = x->flags & COLL_NODE_FULL ? x->psi_full_ppm / 1e6 : 0;
		struct cond c;
		cond_init(&c, COLL_ALERT_NODE_PRESSURE);
		c.node = x->node;
		c.value = util > full ? util : full;
		/* the job's share of the device's bytes (1 when the device moved
		 * none it could see: writes still in the page cache) */
		double dev = worst ? (double)(worst->read_Bps + worst->write_Bps) : 0;
		double share = dev > 0 ? (double)worst->job_Bps / dev : 1;
		c.baseline = share > 1 ? 1 : share;
		const char *host = a->ctx->host ? a->ctx->host(a->ctx->name_arg, x->node) : NULL;
		char name[64], devname[320] = "its devices", busy[64] = "", psi[48] = "";
		if (host)
			fmt_text(name, sizeof(name), "node %s", host);
		else
			fmt_text(name, sizeof(name), "node 0x%08x", x->node);
		fmt_text(c.subject, sizeof(c.subject), "%s", name);
		if (worst) {
			device_of(a, worst->fs, devname, sizeof(devname));
			fmt_text(busy, sizeof(busy), " %.0f%% busy", 100 * util);
		}
		if (x->flags & COLL_NODE_FULL)
			fmt_text(psi, sizeof(psi), ", io pressure %.0f%%", 100 * full);
		fmt_text(c.detail, sizeof(c.detail),
		         "%s%s%s while the job does I/O there: the job's share of its bytes %.0f%%%s",
		         devname, busy, psi, 100 * c.baseline,
		         c.baseline < 0.5 ? " (another job or process loads it)"
		                          : " (mostly the job's own I/O)");
		enum iop_err e = alerts_report(a, rt, &c);
		if (e)
			return e;
	}
	return IOP_OK;
}
