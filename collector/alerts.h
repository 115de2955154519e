/* The alert engine: runs the rule table (rules.h) over closed ticks and
 * reports alerts as they start, go on and end.
 *
 * The root collector calls coll_alerts_tick() once per closed tick, in tick
 * order; replay does the same with recorded ticks. The engine reads no clock
 * and keeps no state but what the ticks gave it, so the same ticks, context
 * and rules give the same alerts. Times in alerts are tick boundaries.
 *
 * An alert is one rule about one subject (the job, a layer, a rank or a
 * file). Its condition must hold for the rule's min_duration before it
 * `start`s; while it holds, `ongoing` repeats at most every min_interval
 * (at once when the severity rises from WARN to CRIT); after it has been
 * false for min_duration it `end`s, and the same alert does not start
 * again within min_interval of that end.
 *
 * Memory: per-rank state grows with the highest rank seen (up to
 * COLL_ALERTS_MAX_RANKS), per-file baselines are capped by rules.max_files
 * (least recently seen files are forgotten), the history by
 * COLL_ALERTS_MAX_HISTORY records. */
#ifndef COLL_ALERTS_H
#define COLL_ALERTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "err.h"
#include "rules.h"
#include "tick.h"

struct coll_nodeset;

#define COLL_ALERTS_MAX_RANKS   (1u << 20) /* rows of higher ranks are ignored */
#define COLL_ALERTS_MAX_HISTORY 65536      /* further alerts are counted only */

enum coll_alert_state { COLL_ALERT_START, COLL_ALERT_ONGOING, COLL_ALERT_END };
enum coll_alert_sev { COLL_SEV_NONE, COLL_SEV_WARN, COLL_SEV_CRIT };

/* Path of a file hash, for messages and JSON; NULL when unknown. */
typedef const char *(*coll_name_fn)(void *arg, uint64_t file);

/* What the root knows about a tick besides its rows. */
struct coll_alert_ctx {
	uint32_t ranks;    /* ranks in the job (alive); 0 = those seen in the ticks */
	uint64_t events;   /* monitor counts of this tick: events placed in it, */
	uint64_t dropped;  /* events the shims dropped, */
	uint64_t late;     /* and events that came after the tick had closed */
	coll_name_fn name; /* may be NULL */
	void *name_arg;
	const struct coll_nodeset *nodes; /* the tick's node samples (node/nodes.h); may be NULL */
	const char *(*host)(void *name_arg, uint32_t node); /* a node's host name; may be NULL */
};

/* One alert state change, valid during the callback only. */
struct coll_alert {
	enum coll_alert_state state;
	enum coll_alert_kind kind;
	enum coll_alert_sev severity; /* now (start, ongoing); the peak (end) */
	bool escalated;               /* an ongoing sent because WARN became CRIT */
	uint64_t start_ns;            /* when the condition began to hold */
	uint64_t t_ns;                /* time of this state (a tick's end) */
	uint32_t rank;                /* COLL_RANK_NONE when not about a rank */
	uint64_t file;                /* path hash; 0 when not about a file (node_pressure:
	                                 the device's file system id) */
	uint32_t node;                /* node id; 0 when not about a node */
	int layer;                    /* enum iop_layer; -1 when not about a layer */
	double value;                 /* what the thresholds apply to (the peak at end) */
	double baseline;              /* what it was measured against (docs/alerts.md) */
	const char *message;          /* concrete, with units; no time, no kind */
};

typedef void (*coll_alert_fn)(void *arg, const struct coll_alert *alert);

struct coll_alerts;

/* The rules are copied. INVAL when a threshold or time is negative or NaN. */
enum iop_err coll_alerts_new(const struct coll_rules *rules, struct coll_alerts **out);
void coll_alerts_free(struct coll_alerts *a);

/* Judges one closed tick and calls cb for each alert that starts, goes on
 * or ends with it. STATE when t is not after the previous tick's or the
 * tick length changed, INVAL for a first tick of length 0; NOMEM leaves
 * the alerts of this tick unreported.
 * Ticks may be skipped (an empty tick need not be passed). */
enum iop_err coll_alerts_tick(struct coll_alerts *a, const struct coll_tick *tick,
                              const struct coll_alert_ctx *ctx, coll_alert_fn cb, void *arg);

/* Ends every active alert at t_end_ns (the job's end). */
void coll_alerts_finish(struct coll_alerts *a, uint64_t t_end_ns, coll_alert_fn cb, void *arg);

/* Every alert so far, in the order they started, for the summary. */
struct coll_alert_record {
	enum coll_alert_kind kind;
	enum coll_alert_sev severity; /* the peak */
	uint32_t rank;
	uint64_t file;
	uint32_t node; /* 0: none */
	int layer;
	uint64_t start_ns;
	uint64_t end_ns; /* 0 while active */
	double peak_value;
	double baseline;   /* at the peak */
	char message[256]; /* at the peak */
};
const struct coll_alert_record *coll_alerts_history(const struct coll_alerts *a, size_t *n,
                                                    uint64_t *not_kept);

/* ---------------------------------------------------------------- output */

/* json_dumps() flags for alert records: one line, and reals with 16
 * digits, enough for t to the microsecond without printing 6.2 as
 * 6.2000000000000002 (jansson's default of 17). */
#define COLL_ALERT_JSON_FLAGS (JSON_COMPACT | JSON_REAL_PRECISION(16))

/* The alert as DESIGN.md's JSON record:
 * {"v":1,"type":"alert","state","kind","severity","t","rank"?,"file"?,
 *  "layer"?,"value","baseline","message"}
 * t is seconds since the Unix epoch with a fractional part; "file" is the
 * path (name may be NULL), or "0x" and 16 hex digits when it is unknown.
 * NULL when out of memory. */
json_t *coll_alert_json(const struct coll_alert *a, coll_name_fn name, void *name_arg);

/* A history record for the summary's "alerts" array:
 * {"kind","severity","rank"?,"file"?,"layer"?,"start","end","peak_value",
 *  "baseline","message"}, end null while active. */
json_t *coll_alert_record_json(const struct coll_alert_record *r, coll_name_fn name,
                               void *name_arg);

/* The headless human line (UX.md), local time, no newline:
 *   12:03:10 CRIT straggler rank 12 mpiio write 41 ms/call = 6.2x median of 63 peers (12 s)
 *   12:03:40 END  straggler rank 12 ended after 42 s, peak CRIT: mpiio write ...
 * Returns what snprintf would; the line is cut to fit len. */
int coll_alert_line(const struct coll_alert *a, char *buf, size_t len);

#endif
