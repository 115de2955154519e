/* The replay source. See source_replay.h and source.h ("Contract").
 *
 * The state always holds every tick up to the one shown (cur), exactly as
 * the live root's did when that tick closed; `pending` is the next DELTA,
 * read and decoded but not applied. Playing maps wall time to ticks from
 * the point (t0 at wall0) where playback last started, sped up, or was
 * sought, so a slow tick does not make later ones late. */
#include "source_replay.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "clock.h"
#include "events.h"
#include "hash.h"
#include "alert_rec.h"
#include "rec_open.h"
#include "rec_state.h"
#include "summary.h"

#define FORWARD_MAX  120        /* ticks a seek forward applies one by one */
#define PUMP_BUDGET_NS 40000000ull /* work per pump before the screen gets a turn */

struct replay {
	struct rec_opened o;
	bool follow;
	struct coll_state st;
	struct coll_delta pending;
	bool have_pending;
	int64_t first_t, last_t; /* the recording's ticks (last_t grows when following) */
	double speed;
	bool paused;
	int64_t t0;
	uint64_t wall0;
	int tfd;
	struct coll_alert_rec *recs; /* every ALERT record, in the file's order */
	size_t n_recs, cap_recs;
	struct coll_alert_list alerts; /* folded as of alerts_upto */
	uint64_t alerts_upto;
	size_t alerts_recs; /* n_recs when folded */
	uint64_t alert_off; /* the last ALERT frame taken in */
	uint64_t bad_deltas, damage_said;
	char err[512];
	bool err_new;
	struct tui_job job;
};

static int64_t cur_tick(const struct replay *p)
{
	return p->st.ticks_applied ? p->st.last_t : p->first_t - 1;
}

static void set_error(struct replay *p, const char *fmt, const char *detail)
{
	snprintf(p->err, sizeof p->err, fmt, detail);
	p->err_new = true;
}

/* ---- alerts: the ALERT frames' JSON records, put back together (alert_rec.h) ---- */

/* The alerts as the live dashboard had them when the tick ending at upto
 * closed: records up to then folded in; of later ones only the starts
 * (so that "next alert" finds them; the views leave out alerts that have
 * not started at the time shown). */
static void fold_alerts(struct replay *p, uint64_t upto)
{
	if (p->alerts_upto == upto && p->alerts_recs == p->n_recs && p->n_recs)
		return;
	p->alerts.n = 0;
	for (size_t i = 0; i < p->n_recs; i++)
		if (p->recs[i].t_ns <= upto || p->recs[i].state == COLL_AREC_START)
			(void)coll_alert_list_fold(&p->alerts, &p->recs[i], NULL);
	p->alerts_upto = upto;
	p->alerts_recs = p->n_recs;
}

/* Takes in the ALERT frames after those already taken (all of them at
 * open; the new ones when a followed file grew). */
static void load_alerts(struct replay *p)
{
	coll_alert_recs_load(p->o.r, p->o.tick_ns, &p->alert_off, &p->recs, &p->n_recs,
	                     &p->cap_recs);
}

/* ---- ticks ---- */

/* Reads the next DELTA into pending; with follow, takes in what the
 * writer appended when the end is reached. */
static void fetch(struct replay *p)
{
	enum iop_err e = rec_next_delta(&p->o, &p->pending, NULL, &p->bad_deltas);
	if (e == IOP_ERR_NOT_FOUND && p->follow) {
		bool grew = false;
		if (rec_refresh(p->o.r, &grew) == IOP_OK && grew) {
			e = rec_next_delta(&p->o, &p->pending, NULL, &p->bad_deltas);
			/* rec_refresh dropped the index: finding the new alerts
			 * rescans the file, so only every 10th tick */
			if (e == IOP_OK && p->pending.tick.t % 10 == 0)
				load_alerts(p);
		}
	}
	p->have_pending = e == IOP_OK;
	if (e == IOP_OK && p->pending.tick.t > p->last_t)
		p->last_t = p->pending.tick.t;
	if (e != IOP_OK && e != IOP_ERR_NOT_FOUND)
		set_error(p, "reading the recording stopped: %s", iop_strerror(e));
	struct rec_info info; /* damage met on the way: said once per new region (not
	                         when following: rec_info would rescan the file) */
	if (!p->follow && rec_info(p->o.r, &info) == IOP_OK && info.corrupt + p->bad_deltas > p->damage_said) {
		char n[32];
		p->damage_said = info.corrupt + p->bad_deltas;
		snprintf(n, sizeof n, "%" PRIu64, p->damage_said);
		set_error(p, "CORRUPT: %s damaged frames skipped so far", n);
	}
}

static void apply_pending(struct replay *p)
{
	if (!p->st.ticks_applied && p->pending.tick.tick_ns != p->st.tick_ns) {
		coll_state_free(&p->st);
		rec_opened_state_init(&p->o, &p->st, p->pending.tick.tick_ns);
	}
	(void)coll_state_apply(&p->st, &p->pending);
	fetch(p);
}

/* Playback starts (again) at the tick shown, now. */
static void restart_clock(struct replay *p)
{
	p->t0 = cur_tick(p);
	p->wall0 = iop_mono_ns();
}

static void arm(struct replay *p, uint64_t in_ns)
{
	struct itimerspec its = {0};
	if (in_ns) {
		its.it_value.tv_sec = (time_t)(in_ns / 1000000000u);
		its.it_value.tv_nsec = (long)(in_ns % 1000000000u);
	}
	(void)timerfd_settime(p->tfd, 0, &its, NULL);
}

/* The timer: when the pending tick is due (or a poll of a followed file). */
static void rearm(struct replay *p)
{
	if (p->paused) {
		arm(p, 0);
		return;
	}
	if (!p->have_pending) {
		arm(p, p->follow && !rec_closed(p->o.r) ? REC_FOLLOW_POLL_MS * 1000000ull : 0);
		return;
	}
	uint64_t tick = p->st.tick_ns ? p->st.tick_ns : p->o.tick_ns;
	double ahead = (double)(p->pending.tick.t - p->t0) * (double)tick / p->speed;
	uint64_t due = p->wall0 + (uint64_t)(ahead > 0 ? ahead : 0), now = iop_mono_ns();
	arm(p, due > now ? due - now : 1);
}

/* Applies the DELTAs up to tick t (or the end); false when the budget ran out. */
static bool forward_to(struct replay *p, int64_t t, uint64_t budget_ns)
{
	uint64_t start = iop_mono_ns();
	while (p->have_pending && p->pending.tick.t <= t) {
		apply_pending(p);
		if (budget_ns && iop_mono_ns() - start > budget_ns)
			return false;
	}
	return true;
}

/* ---- the source's operations ---- */

static const struct coll_state *r_state(void *self)
{
	return &((struct replay *)self)->st;
}

static const struct coll_alert_record *r_alerts(void *self, size_t *n)
{
	struct replay *p = self;
	fold_alerts(p, (uint64_t)(cur_tick(p) + 1) * p->o.tick_ns);
	*n = p->alerts.n;
	return p->alerts.v;
}

static void r_job(void *self, struct tui_job *out)
{
	*out = ((struct replay *)self)->job;
}

static int r_fd(void *self)
{
	return ((struct replay *)self)->tfd;
}

static unsigned r_pump(void *self, uint64_t now_ns)
{
	(void)now_ns; /* playback keeps to the monotonic clock */
	struct replay *p = self;
	uint64_t expirations;
	while (read(p->tfd, &expirations, sizeof expirations) > 0)
		;
	unsigned got = 0;
	if (p->err_new) {
		p->err_new = false;
		got |= TUI_SRC_ERROR;
	}
	if (p->paused) {
		rearm(p);
		return got;
	}
	if (!p->have_pending && p->follow)
		fetch(p);
	int64_t before = cur_tick(p);
	uint64_t tick = p->st.tick_ns ? p->st.tick_ns : p->o.tick_ns;
	double played = (double)(iop_mono_ns() - p->wall0) * p->speed / (double)tick;
	int64_t target = p->t0 + (int64_t)played;
	if (!forward_to(p, target, PUMP_BUDGET_NS) && p->have_pending)
		restart_clock(p); /* behind: play on from here rather than skip */
	if (cur_tick(p) != before)
		got |= TUI_SRC_TICK;
	if (!p->have_pending && (!p->follow || rec_closed(p->o.r)))
		got |= TUI_SRC_ENDED;
	rearm(p);
	return got;
}

static void r_range(void *self, int64_t *first, int64_t *last)
{
	struct replay *p = self;
	*first = p->first_t;
	*last = p->last_t;
}

static int64_t r_seek(void *self, int64_t t)
{
	struct replay *p = self;
	t = t < p->first_t ? p->first_t : t > p->last_t ? p->last_t : t;
	int64_t cur = cur_tick(p);
	if (t >= cur && t - cur <= FORWARD_MAX) {
		forward_to(p, t, 0);
	} else {
		uint64_t tick = p->st.tick_ns ? p->st.tick_ns : p->o.tick_ns;
		uint64_t at = (uint64_t)(t + 1) * tick;
		coll_state_free(&p->st);
		enum iop_err e = coll_rec_state_at(p->o.r, at, &p->st, NULL);
		p->st.detail_ticks = rec_opened_detail_ticks(&p->o, p->st.tick_ns);
		if (!e)
			e = rec_seek_time(p->o.r, at);
		/* the reader goes on from the first DELTA after the tick */
		do
			fetch(p);
		while (!e && p->have_pending && rec_tick_end_ns(&p->pending) <= at);
		if (e)
			set_error(p, "seeking: %s", iop_strerror(e));
	}
	restart_clock(p);
	rearm(p);
	return cur_tick(p);
}

static void r_set_speed(void *self, double x)
{
	struct replay *p = self;
	if (x <= 0)
		return;
	p->speed = x;
	restart_clock(p);
	rearm(p);
}

static void r_set_paused(void *self, bool paused)
{
	struct replay *p = self;
	p->paused = paused;
	restart_clock(p);
	rearm(p);
}

static const char *r_error(void *self)
{
	struct replay *p = self;
	return p->err[0] ? p->err : NULL;
}

static void r_close(void *self)
{
	struct replay *p = self;
	coll_state_free(&p->st);
	coll_delta_free(&p->pending);
	rec_opened_close(&p->o);
	if (p->tfd >= 0)
		close(p->tfd);
	coll_alert_list_free(&p->alerts);
	free(p->recs);
	free(p);
}

static const struct tui_source_ops replay_ops = {
	.name = "replay",
	.mode = TUI_SRC_MODE_REPLAY,
	.state = r_state,
	.alerts = r_alerts,
	.job = r_job,
	.fd = r_fd,
	.pump = r_pump,
	.range = r_range,
	.seek = r_seek,
	.set_speed = r_set_speed,
	.set_paused = r_set_paused,
	.error = r_error,
	.close = r_close,
};

/* What the file's state says at open: truncated or damaged (after the
 * scan that finds its last tick), as the first pump's notice. */
static void note_damage(struct replay *p, const struct rec_info *info)
{
	char t[32], msg[256] = "";
	coll_iso_time(rec_info_read_to_ns(info), t, sizeof t);
	if (info->truncated && !p->follow)
		snprintf(msg, sizeof msg, "TRUNCATED at %s: replays to its last good frame", t);
	if (info->corrupt)
		snprintf(msg + strlen(msg), sizeof msg - strlen(msg),
		         "%s%" PRIu64 " damaged region%s skipped", msg[0] ? "; " : "", info->corrupt,
		         info->corrupt == 1 ? "" : "s");
	if (msg[0])
		set_error(p, "%s", msg);
}

enum iop_err tui_source_replay_open(struct tui_source *src, const char *path, bool follow,
                                    char *why, size_t len)
{
	struct replay *p = calloc(1, sizeof *p);
	if (!p) {
		snprintf(why, len, "out of memory");
		return IOP_ERR_NOMEM;
	}
	p->tfd = -1;
	enum iop_err e = rec_opened_open_why(path, &p->o, why, len);
	if (e) {
		free(p);
		return e;
	}
	p->follow = follow;
	p->speed = 1;
	rec_opened_state_init(&p->o, &p->st, p->o.tick_ns);
	coll_delta_init(&p->pending, 0, p->o.tick_ns);
	p->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	struct rec_info info;
	if (p->tfd < 0 || (e = rec_info(p->o.r, &info)) != IOP_OK) {
		snprintf(why, len, "%s: %s", path, p->tfd < 0 ? strerror(errno) : iop_strerror(e));
		r_close(p);
		return e ? e : IOP_ERR_IO;
	}
	load_alerts(p);
	rec_rewind(p->o.r);
	fetch(p);
	if (!p->have_pending) {
		snprintf(why, len, "%s: no tick recorded%s", path,
		         follow ? " yet" : " (the job ended before its first tick closed)");
		r_close(p);
		return IOP_ERR_NOT_FOUND;
	}
	p->err_new = false; /* nothing to say yet but what note_damage says */
	p->err[0] = 0;
	p->first_t = p->pending.tick.t;
	int64_t last = (int64_t)(info.last_ns / p->o.tick_ns) - 1;
	p->last_t = last > p->first_t ? last : p->first_t;
	p->job = (struct tui_job){.id = p->o.job_id, .start_ns = p->o.start_ns,
	                          .end_ns = info.clean ? (uint64_t)(p->last_t + 1) * p->o.tick_ns : 0,
	                          .command = p->o.command, .tick_ns = p->o.tick_ns};
	note_damage(p, &info);
	apply_pending(p); /* the first tick is shown at once */
	restart_clock(p);
	rearm(p);
	src->ops = &replay_ops;
	src->self = p;
	return IOP_OK;
}
