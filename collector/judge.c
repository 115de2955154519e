/* Alerts on closed ticks, shared by live and replay. See judge.h. */
#include "judge.h"

#include "alert_where.h"

const char *coll_state_name(void *state, uint64_t hash)
{
	return coll_names_text(&((const struct coll_state *)state)->names, hash);
}

static const char *state_host(void *state, uint32_t node)
{
	return coll_state_host(state, node);
}

enum iop_err coll_judge_tick(struct coll_alerts *a, const struct coll_delta *d,
                             const struct coll_state *s, coll_alert_fn fn, void *arg)
{
	struct coll_alert_ctx ctx = {.ranks = coll_state_ranks_live(s), .events = d->mon.events,
	                             .dropped = d->mon.dropped, .late = d->mon.late,
	                             .name = coll_state_name, .name_arg = (void *)s,
	                             .nodes = &d->nodes, .host = state_host};
	return coll_alerts_tick(a, &d->tick, &ctx, fn, arg);
}

json_t *coll_judge_history_json(const struct coll_alerts *a, const struct coll_state *s)
{
	json_t *out = json_array();
	size_t n;
	uint64_t not_kept;
	const struct coll_alert_record *v = coll_alerts_history(a, &n, &not_kept);
	for (size_t i = 0; i < n; i++) {
		json_t *o = coll_alert_record_json(&v[i], coll_state_name, (void *)s);
		coll_alert_json_node(o, v[i].node, s);
		json_array_append_new(out, o);
	}
	return out;
}
