/* The remote live source (source.h): `iopulse top` watching a running job
 * through its root's viewer server (collector/viewer.h, docs/viewer.md).
 *
 * The viewer keeps its own copy of the root's window state (a keyframe,
 * then every published tick), so the dashboard reads it as it reads the
 * in-process root's, and steps back in time through its history tiers.
 * fd() is an epoll descriptor over the viewer's sockets (ticks and the
 * keyframe's reply), so the dashboard's loop waits on one fd. Alerts come
 * from the root's alert engine by query, at most once a tick and only
 * while the root answers (a query waits up to the viewer's timeout). The
 * viewer's status (stale, unreachable, refused) is shown beside the badge;
 * nanomsg reconnects by itself and a restarted root's ticks make the
 * viewer fetch a new keyframe. */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "clock.h"
#include "hash.h"
#include "rules.h"
#include "source.h"
#include "viewer.h"

struct tui_remote {
	struct coll_viewer *v;
	struct tui_job job;
	int epfd;
	struct coll_state empty; /* shown before the first keyframe */
	struct coll_alert_record *alerts;
	size_t n_alerts;
	uint64_t alerts_ns; /* when the alerts were last asked for */
	enum coll_viewer_status st;
	char error[128];
};

/* ---- alerts: the root's JSON records back into coll_alert_record ---- */

static uint64_t ns_of(json_t *secs)
{
	return json_is_number(secs) ? iop_ns_of_secs(json_number_value(secs)) : 0;
}

/* One record of the "log" array (coll_alert_record_json); false when it
 * is not one. */
static bool record_of(json_t *o, struct coll_alert_record *r)
{
	memset(r, 0, sizeof *r);
	const char *kind = json_string_value(json_object_get(o, "kind"));
	const char *sev = json_string_value(json_object_get(o, "severity"));
	if (!kind || !sev || !coll_alert_kind_from_name(kind, &r->kind))
		return false;
	r->severity = !strcmp(sev, "crit") ? COLL_SEV_CRIT : COLL_SEV_WARN;
	json_t *rank = json_object_get(o, "rank");
	r->rank = json_is_integer(rank) ? (uint32_t)json_integer_value(rank) : COLL_RANK_NONE;
	const char *file = json_string_value(json_object_get(o, "file"));
	if (file)
		r->file = !strncmp(file, "0x", 2) ? strtoull(file + 2, NULL, 16) : iop_hash_str(file);
	enum iop_layer layer;
	const char *lname = json_string_value(json_object_get(o, "layer"));
	r->layer = lname && iop_layer_from_name(lname, &layer) ? (int)layer : -1;
	r->start_ns = ns_of(json_object_get(o, "start"));
	r->end_ns = ns_of(json_object_get(o, "end"));
	r->peak_value = json_number_value(json_object_get(o, "peak_value"));
	r->baseline = json_number_value(json_object_get(o, "baseline"));
	snprintf(r->message, sizeof r->message, "%s",
	         json_string_value(json_object_get(o, "message")) ?: "");
	return true;
}

/* Asks the root for its alerts; true when they changed. */
static bool refresh_alerts(struct tui_remote *r)
{
	json_t *o = NULL;
	if (coll_viewer_alerts(r->v, &o) != IOP_OK)
		return false;
	json_t *log = json_object_get(o, "log");
	size_t n = json_array_size(log), k = 0;
	struct coll_alert_record *a = n ? calloc(n, sizeof *a) : NULL;
	for (size_t i = 0; a && i < n; i++)
		k += record_of(json_array_get(log, i), &a[k]);
	json_decref(o);
	if (n && !a)
		return false;
	bool changed = k != r->n_alerts || (k && memcmp(a, r->alerts, k * sizeof *a));
	free(r->alerts);
	r->alerts = a;
	r->n_alerts = k;
	return changed;
}

/* ---- the source ---- */

static const struct coll_state *remote_state(void *self)
{
	struct tui_remote *r = self;
	const struct coll_state *s = coll_viewer_state(r->v);
	return s ? s : &r->empty;
}

static const struct coll_alert_record *remote_alerts(void *self, size_t *n)
{
	struct tui_remote *r = self;
	*n = r->n_alerts;
	return r->alerts;
}

static void remote_job(void *self, struct tui_job *out)
{
	struct tui_remote *r = self;
	*out = r->job;
	const struct coll_state *s = remote_state(self);
	if (!out->start_ns && s->ticks_applied)
		out->start_ns = (uint64_t)s->first_t * s->tick_ns;
	if (!out->tick_ns)
		out->tick_ns = s->tick_ns;
}

static int remote_fd(void *self)
{
	struct tui_remote *r = self;
	return r->epfd;
}

static unsigned remote_pump(void *self, uint64_t now)
{
	struct tui_remote *r = self;
	unsigned got = coll_viewer_pump(r->v, now) ? TUI_SRC_TICK : 0;
	enum coll_viewer_status st = coll_viewer_status(r->v, now);
	if (st != r->st) {
		got |= TUI_SRC_TICK; /* the header shows the status */
		if (st == COLL_VIEWER_UNREACHABLE || st == COLL_VIEWER_REFUSED) {
			snprintf(r->error, sizeof r->error, "%s", coll_viewer_status_text(st));
			got |= TUI_SRC_ERROR;
		}
		r->st = st;
	}
	const struct coll_state *s = coll_viewer_state(r->v);
	uint64_t every = s && s->tick_ns ? s->tick_ns : 1000000000ull;
	if (st == COLL_VIEWER_LIVE && now - r->alerts_ns >= every) {
		r->alerts_ns = now;
		if (refresh_alerts(r))
			got |= TUI_SRC_ALERT;
	}
	return got;
}

static void remote_range(void *self, int64_t *first, int64_t *last)
{
	tui_state_range(remote_state(self), first, last);
}

static const char *remote_error(void *self)
{
	struct tui_remote *r = self;
	return r->error[0] ? r->error : NULL;
}

static const char *remote_status(void *self)
{
	struct tui_remote *r = self;
	switch (r->st) {
	case COLL_VIEWER_LIVE: return NULL;
	case COLL_VIEWER_CONNECTING: return "CONNECTING";
	case COLL_VIEWER_STALE: return "STALE";
	case COLL_VIEWER_UNREACHABLE: return "UNREACHABLE";
	case COLL_VIEWER_REFUSED: return "REFUSED";
	}
	return NULL;
}

static void remote_close(void *self)
{
	struct tui_remote *r = self;
	if (!r)
		return;
	coll_viewer_free(r->v);
	if (r->epfd >= 0)
		close(r->epfd);
	coll_state_free(&r->empty);
	free(r->alerts);
	free(r);
}

static const struct tui_source_ops remote_ops = {
	.name = "remote",
	.mode = TUI_SRC_MODE_LIVE,
	.state = remote_state,
	.alerts = remote_alerts,
	.job = remote_job,
	.fd = remote_fd,
	.pump = remote_pump,
	.range = remote_range,
	.error = remote_error,
	.status = remote_status,
	.close = remote_close,
};

/* Waits for the first keyframe, a refusal or the viewer's timeout. */
static enum coll_viewer_status first_keyframe(struct tui_remote *r, uint64_t wait_ns)
{
	uint64_t until = iop_real_ns() + wait_ns;
	while (true) {
		uint64_t now = iop_real_ns();
		remote_pump(r, now);
		if (coll_viewer_state(r->v) || r->st == COLL_VIEWER_REFUSED ||
		    r->st == COLL_VIEWER_UNREACHABLE || now >= until)
			return coll_viewer_state(r->v) ? COLL_VIEWER_LIVE : r->st;
		struct pollfd p = {.fd = r->epfd, .events = POLLIN};
		(void)poll(&p, 1, 50);
	}
}

struct tui_remote *tui_remote_open(const char *addr, uint64_t job_id, const struct iop_key *key,
                                   const struct tui_job *job, uint64_t wait_ns,
                                   enum coll_viewer_status *st, char *why, size_t whylen)
{
	*st = COLL_VIEWER_CONNECTING;
	struct tui_remote *r = calloc(1, sizeof *r);
	if (!r) {
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	r->job = *job;
	r->epfd = epoll_create1(EPOLL_CLOEXEC);
	coll_state_init(&r->empty, job->tick_ns ? job->tick_ns : 1000000000ull, NULL);
	enum iop_err e = coll_viewer_new(addr, job_id, key, NULL, iop_real_ns(), &r->v);
	if (e != IOP_OK || r->epfd < 0) {
		snprintf(why, whylen, "%s", e == IOP_ERR_INVAL ? "not a root address (tcp://HOST:PORT "
		                                                  "or ipc://PATH)" : iop_strerror(e));
		remote_close(r);
		return NULL;
	}
	int fds[4];
	size_t n = coll_viewer_fds(r->v, fds, 4);
	for (size_t i = 0; i < n; i++) {
		struct epoll_event ev = {.events = EPOLLIN, .data.fd = fds[i]};
		epoll_ctl(r->epfd, EPOLL_CTL_ADD, fds[i], &ev);
	}
	*st = first_keyframe(r, wait_ns);
	if (*st != COLL_VIEWER_LIVE) {
		snprintf(why, whylen, "%s", coll_viewer_status_text(*st));
		remote_close(r);
		return NULL;
	}
	return r;
}

void tui_source_remote(struct tui_source *src, struct tui_remote *r)
{
	src->ops = &remote_ops;
	src->self = r;
}
