/* A root's outputs. See rootout.h. */
#include "rootout.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "alert_where.h"
#include "judge.h"
#include "rules.h"

int coll_rootout_open(struct coll_rootout *o, const struct run_opts *opt, const char *who)
{
	memset(o, 0, sizeof(*o));
	o->opt = opt;
	if (opt->alerts_path && !(o->alerts_file = fopen(opt->alerts_path, "a"))) {
		fprintf(stderr, "%s: cannot open the alerts file %s: %s\n", who, opt->alerts_path,
		        strerror(errno));
		return 2;
	}
	/* the summary is written when the job ends: a path it cannot go to is
	 * said now rather than after the job (made now, as the alerts file is) */
	if (opt->summary_path) {
		int fd = open(opt->summary_path, O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
		if (fd < 0) {
			fprintf(stderr, "%s: cannot write the summary to %s: %s\n", who,
			        opt->summary_path, strerror(errno));
			return 2;
		}
		close(fd);
	}
	struct coll_rules rules;
	coll_rules_default(&rules);
	char err[512];
	if (opt->rules_path && coll_rules_load_json(&rules, opt->rules_path, err, sizeof err)) {
		fprintf(stderr, "%s: %s\n", who, err);
		return 1;
	}
	if (coll_alerts_new(&rules, &o->alerts) != IOP_OK) {
		fprintf(stderr, "%s: out of memory\n", who);
		return 2;
	}
	coll_headless_init(&o->out, opt->jsonl ? stdout : NULL, o->alerts_file, !opt->jsonl);
	return 0;
}

int coll_rootout_start(struct coll_rootout *o, const struct coll_job_info *job,
                       const struct coll_state *state)
{
	o->job = *job;
	o->job.history_bytes = state->max_bytes;
	o->state = state;
	coll_headless_meta(&o->out, &o->job);
	struct coll_record_opts ro = {.detail_ns = o->opt->record_detail_ns,
	                              .rank_cap = o->opt->record_rank_cap};
	if (o->opt->record_path &&
	    !(o->rec = coll_record_open_opts(o->opt->record_path, &o->job, &ro)))
		return 2;
	return 0;
}

/* Every state goes to the JSON outputs; the human line is printed when an
 * alert starts, escalates or ends. */
static void on_alert(void *arg, const struct coll_alert *a)
{
	struct coll_rootout *o = arg;
	json_t *rec = coll_alert_json(a, coll_state_name, (void *)o->state);
	coll_alert_json_node(rec, a->node, o->state);
	char line[1024];
	bool show = a->state != COLL_ALERT_ONGOING || a->escalated;
	int len = show ? coll_alert_line(a, line, sizeof line) : -1;
	if (len < 0)
		show = false;
	/* where it starts: the file system, its device and the node's pressure */
	struct coll_alert_where w;
	if (a->state == COLL_ALERT_START && coll_alert_where(a, o->state, &w)) {
		if (rec)
			json_object_set_new(rec, "context", coll_alert_where_json(&w));
		if (show)
			(void)coll_alert_where_line(&w, line, (size_t)len, sizeof line);
	}
	coll_headless_alert(&o->out, rec, show ? line : NULL, (int)a->severity,
	                    a->state == COLL_ALERT_START);
	/* the recording also keeps when the condition began: a replayed
	 * dashboard shows the alert from there, as the live one did */
	if (o->rec && rec)
		json_object_set_new(rec, "start", json_real((double)a->start_ns / 1e9));
	coll_record_alert(o->rec, a->t_ns, rec);
	json_decref(rec);
}

void coll_rootout_tick(void *arg, const struct coll_delta *d, const struct coll_state *s)
{
	struct coll_rootout *o = arg;
	coll_headless_tick(&o->out, d, s);
	if (!o->recorded_alerts)
		(void)coll_judge_tick(o->alerts, d, s, on_alert, o);
	coll_record_tick_state(o->rec, d, s);
	if (o->view)
		coll_viewsrv_tick(o->view, d, s);
}

enum iop_err coll_rootout_serve(struct coll_rootout *o, const char *const *urls, uint64_t job_id,
                                const struct iop_key *key)
{
	return coll_viewsrv_new(urls, job_id, key, &o->view);
}

int coll_rootout_view_fd(const struct coll_rootout *o)
{
	int fd = -1;
	if (!o->view || coll_viewsrv_fds(o->view, &fd, 1) != 1)
		return -1;
	return fd;
}

void coll_rootout_view_pump(struct coll_rootout *o)
{
	if (o->view)
		coll_viewsrv_pump(o->view, o->state, o->alerts);
}

void coll_rootout_alert(struct coll_rootout *o, const struct coll_alert *a)
{
	on_alert(o, a);
}

void coll_rootout_finish_alerts(struct coll_rootout *o, uint64_t end_ns, json_t *alerts)
{
	o->job.end_ns = end_ns;
	coll_headless_summary(&o->out, o->state, &o->job, alerts, o->opt->summary_path);
}

void coll_rootout_finish(struct coll_rootout *o, uint64_t end_ns)
{
	const struct coll_state *st = o->state;
	/* Alerts end with the last tick, as when replaying the recording. */
	coll_alerts_finish(o->alerts,
	                   st->ticks_applied ? (uint64_t)(st->last_t + 1) * st->tick_ns : end_ns,
	                   on_alert, o);
	coll_rootout_finish_alerts(o, end_ns, coll_judge_history_json(o->alerts, st));
}

void coll_rootout_close(struct coll_rootout *o)
{
	coll_viewsrv_free(o->view);
	o->view = NULL;
	coll_alerts_free(o->alerts);
	o->alerts = NULL;
	coll_record_close(o->rec);
	o->rec = NULL;
	coll_headless_free(&o->out);
	if (o->alerts_file)
		fclose(o->alerts_file);
	o->alerts_file = NULL;
}
