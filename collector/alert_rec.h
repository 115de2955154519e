/* A recording's alerts read back: each ALERT frame's JSON record (the
 * root's transition: start, ongoing, end) parsed, and records folded into
 * alerts as the live root's alert history kept them. The replay
 * dashboard shows them; a lean recording's headless replay and summary
 * report them instead of judging its ticks again (record.h: a lean tick
 * has not the rows the rules read). */
#ifndef COLL_ALERT_REC_H
#define COLL_ALERT_REC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "alerts.h"
#include "state.h"
#include "rec.h"

enum { COLL_AREC_START, COLL_AREC_ONGOING, COLL_AREC_END };

/* One ALERT record: the alert as that record states it, and when. */
struct coll_alert_rec {
	struct coll_alert_record a;
	uint64_t t_ns;
	uint8_t state; /* COLL_AREC_* */
};

/* Parses an ALERT frame's payload; false when it is not an alert record.
 * A record without "start" (before iopulse 0.1) started a tick (tick_ns)
 * before its time. */
bool coll_alert_rec_parse(const char *json, size_t len, uint64_t tick_ns,
                          struct coll_alert_rec *r);

/* Alerts as the live root's history has them (alerts.h). */
struct coll_alert_list {
	struct coll_alert_record *v;
	size_t n, cap;
};
void coll_alert_list_free(struct coll_alert_list *l);
/* Folds one record in: a start opens an alert; ongoing records raise its
 * severity and peak; the end closes it. *escalated (may be NULL): an
 * ongoing record raised the severity. False when out of memory. */
bool coll_alert_list_fold(struct coll_alert_list *l, const struct coll_alert_rec *r,
                          bool *escalated);

/* The records of the ALERT frames after offset *after (0: all) in file
 * order, appended to *v (n, cap: a growable array; free() it); *after
 * becomes the last one's offset. Every ALERT frame is in the index. */
void coll_alert_recs_load(struct rec_reader *r, uint64_t tick_ns, uint64_t *after,
                          struct coll_alert_rec **v, size_t *n, size_t *cap);

/* Every ALERT frame of the recording folded (coll_alert_list_fold). */
void coll_alert_list_load(struct rec_reader *r, uint64_t tick_ns, struct coll_alert_list *l);
/* The alerts as the summary's JSON array (alerts.h, coll_alert_record_json),
 * names from s; those still open end at end_ns, as the live root's end
 * them with the last tick. */
json_t *coll_alert_list_json(const struct coll_alert_list *l, uint64_t end_ns,
                             const struct coll_state *s);
/* The record as the alert transition it was (r's message: valid while r is). */
void coll_alert_rec_alert(const struct coll_alert_rec *r, bool escalated, struct coll_alert *a);

/* Room for element n of a growable array; false when out of memory. */
bool coll_grow_room(void **v, size_t *cap, size_t n, size_t size);

#endif
