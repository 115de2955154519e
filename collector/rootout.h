/* What a root does with each closed tick: headless output (alert lines,
 * JSON lines, status), the alerts, the recording, the viewers (viewsrv.h:
 * the tick published, their queries answered from the root's loop); and at
 * the end the alerts' close and the summary. Used by `iopulse run` and by
 * `iopulse collector --role root`. */
#ifndef COLL_ROOTOUT_H
#define COLL_ROOTOUT_H

#include <stdio.h>

#include "alerts.h"
#include "headless.h"
#include "record.h"
#include "run_opts.h"
#include "state.h"
#include "summary.h"
#include "viewsrv.h"

struct coll_rootout {
	const struct run_opts *opt;
	struct coll_headless out;
	struct coll_alerts *alerts;
	struct coll_record *rec; /* --record, or NULL */
	struct coll_viewsrv *view; /* serving viewers (coll_rootout_serve), or NULL */
	FILE *alerts_file;
	struct coll_job_info job;
	const struct coll_state *state; /* the root's, for names */
	bool recorded_alerts; /* the alerts come from a recording (coll_rootout_alert):
	                         the ticks are not judged */
};

/* Loads the rules and opens the outputs; 0, or the exit status to give
 * (1 bad rules file, 2 runtime error), the reason printed with who. */
int coll_rootout_open(struct coll_rootout *o, const struct run_opts *opt, const char *who);
/* Starts the outputs for a job (meta record, recording). 0 or 2. */
int coll_rootout_start(struct coll_rootout *o, const struct coll_job_info *job,
                       const struct coll_state *state);
/* Serves viewers at urls (NULL-terminated; docs/viewer.md) from now on.
 * The error of coll_viewsrv_new (nothing served) or IOP_OK. */
enum iop_err coll_rootout_serve(struct coll_rootout *o, const char *const *urls, uint64_t job_id,
                                const struct iop_key *key);
/* The fd to poll for viewers' requests, -1 when not serving. */
int coll_rootout_view_fd(const struct coll_rootout *o);
/* Answers the viewers' pending requests without blocking. */
void coll_rootout_view_pump(struct coll_rootout *o);
/* A coll_tick_fn: output, alerts, recording and viewers of a closed tick. */
void coll_rootout_tick(void *o, const struct coll_delta *d, const struct coll_state *s);
/* Ends the alerts with the last tick and writes the summary. */
void coll_rootout_finish(struct coll_rootout *o, uint64_t end_ns);
/* An alert transition read from a recording, written to the outputs as the
 * live root wrote it (with recorded_alerts). */
void coll_rootout_alert(struct coll_rootout *o, const struct coll_alert *a);
/* coll_rootout_finish with the alerts given (the summary's JSON array,
 * stolen) instead of the judged ones. */
void coll_rootout_finish_alerts(struct coll_rootout *o, uint64_t end_ns, json_t *alerts);
void coll_rootout_close(struct coll_rootout *o);

#endif
