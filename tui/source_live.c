/* The in-process live source (source.h): `iopulse run` hosts the root in its
 * own process, so the dashboard reads the root's window state and the alert
 * engine's history directly. There is nothing to pump: the run loop calls
 * the dashboard after each closed tick. Going back in time uses the state's
 * history tiers only. */
#include <stdint.h>

#include "root.h"
#include "source.h"

void tui_state_range(const struct coll_state *s, int64_t *first, int64_t *last)
{
	if (!s->ticks_applied) {
		*first = *last = INT64_MIN;
		return;
	}
	/* The oldest bin still kept: the last tier with any, else tier 0. */
	int64_t lo = s->last_t;
	for (int i = 0; i < 3; i++) {
		const struct coll_tier *t = &s->tier[i];
		if (t->n && t->v[t->head].t < lo)
			lo = t->v[t->head].t;
	}
	*first = lo < s->first_t ? s->first_t : lo;
	*last = s->last_t;
}

static const struct coll_state *live_state(void *self)
{
	struct tui_live *l = self;
	return coll_root_state(l->root);
}

static const struct coll_alert_record *live_alerts(void *self, size_t *n)
{
	struct tui_live *l = self;
	if (!l->alerts) {
		*n = 0;
		return NULL;
	}
	return coll_alerts_history(l->alerts, n, NULL);
}

static void live_job(void *self, struct tui_job *out)
{
	struct tui_live *l = self;
	*out = l->job;
}

static int live_fd(void *self)
{
	return -1;
}

static void live_range(void *self, int64_t *first, int64_t *last)
{
	tui_state_range(live_state(self), first, last);
}

static const struct tui_source_ops live_ops = {
	.name = "live",
	.mode = TUI_SRC_MODE_LIVE,
	.state = live_state,
	.alerts = live_alerts,
	.job = live_job,
	.fd = live_fd,
	.range = live_range,
};

void tui_source_live(struct tui_source *src, struct tui_live *live)
{
	src->ops = &live_ops;
	src->self = live;
}
