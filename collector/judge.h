/* The alerts on closed ticks, one way for the live root and for a
 * recording read back: the context comes from the window state and the
 * tick's monitor counts, names from the state's dictionary. */
#ifndef COLL_JUDGE_H
#define COLL_JUDGE_H

#include <jansson.h>

#include "alerts.h"
#include "delta.h"
#include "state.h"

/* A coll_name_fn over a const struct coll_state *. */
const char *coll_state_name(void *state, uint64_t hash);

/* Runs the rules on a tick just applied to s. */
enum iop_err coll_judge_tick(struct coll_alerts *a, const struct coll_delta *d,
                             const struct coll_state *s, coll_alert_fn fn, void *arg);

/* The summary's alerts: one record per alert, with its peak. */
json_t *coll_judge_history_json(const struct coll_alerts *a, const struct coll_state *s);

#endif
