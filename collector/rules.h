/* The alert rule table: one row per alert kind with its thresholds, timing
 * and minimum-volume gates, the defaults, and `--rules FILE` overrides.
 *
 * The table is plain data; the alert engine (alerts.h) reads it when it is
 * created, so a table can be built, edited and checked without an engine.
 * Every rule's value grows as things get worse: a condition holds at WARN
 * when value >= warn and at CRIT when value >= crit. Times are in seconds
 * and turned into ticks by the engine (rounded up, so a rule never judges on
 * less than it was asked for); docs/alerts.md gives each rule's formula. */
#ifndef COLL_RULES_H
#define COLL_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

/* Kinds, in the order of DESIGN.md's list, with the scope of their alerts.
 * The names are the "kind" of the alert JSON. */
#define COLL_ALERT_KINDS(X)                                                                        \
	X(STRAGGLER, straggler, RANK)                                                              \
	X(THROUGHPUT_DROP, throughput_drop, LAYER)                                                 \
	X(LATENCY_SPIKE, latency_spike, LAYER) /* and FILE */                                      \
	X(HUNG_IO, hung_io, RANK)                                                                  \
	X(IMBALANCE, imbalance, JOB)                                                               \
	X(SMALL_IO, small_io, LAYER)                                                               \
	X(RANDOM_IO, random_io, LAYER)                                                             \
	X(METADATA, metadata, JOB)                                                                 \
	X(STDIO_SHARE, stdio_share, JOB)                                                           \
	X(NO_COLLECTIVE, no_collective, JOB)                                                       \
	X(FRAGMENTATION, fragmentation, LAYER)                                                     \
	X(MONITOR_LOSS, monitor_loss, JOB)                                                         \
	X(LATE_ARRIVAL, late_arrival, RANK)                                                        \
	X(NODE_PRESSURE, node_pressure, NODE)

enum coll_alert_kind {
#define X(id, name, scope) COLL_ALERT_##id,
	COLL_ALERT_KINDS(X)
#undef X
	    COLL_ALERT__COUNT
};

/* What an alert is about: the whole job, a layer, a rank, a file or a node. */
enum coll_alert_scope {
	COLL_SCOPE_JOB,
	COLL_SCOPE_LAYER,
	COLL_SCOPE_RANK,
	COLL_SCOPE_FILE,
	COLL_SCOPE_NODE
};

/* rules.c's table of defaults lists the fields in this order. */
struct coll_rule {
	bool enabled;
	double warn, crit;     /* thresholds on the value; crit may be HUGE_VAL (never) */
	double min_duration_s; /* the condition holds this long before `start`, and
	                        * is false this long before `end` */
	double min_interval_s; /* between `ongoing` repeats, and from an `end` to
	                        * the next `start` of the same alert */
	double window_s;       /* span the value is computed over */
	uint32_t baseline_n;   /* samples in a rolling baseline */
	/* Gates: below them the rule does not judge (the condition is false). */
	uint64_t min_ops;
	uint64_t min_bytes;
	double min_time_s;
	uint32_t min_ranks;
	double min_z;            /* straggler: robust z-score a rank must also reach */
	double pair_ratio;       /* straggler with 2 ranks: ratio to the other rank */
	uint64_t max_mean_bytes; /* random_io, fragmentation: larger requests are fine */
};

struct coll_rules {
	struct coll_rule rule[COLL_ALERT__COUNT];
	uint32_t max_files; /* files latency_spike keeps a baseline for */
};

/* The defaults (docs/alerts.md lists them): quiet on a healthy job. */
void coll_rules_default(struct coll_rules *r);

/* Applies the overrides of a JSON object keyed by rule name, e.g.
 * {"straggler": {"warn": 4, "min_duration_s": 5}, "small_io": {"enabled": false}}.
 * An unknown rule or key, a value of the wrong type or out of range, or
 * warn > crit is INVAL with a message naming it in errbuf; a file that cannot
 * be read is IO, text that is not JSON is MALFORMED. On any error *r is left
 * as it was. */
enum iop_err coll_rules_parse_json(struct coll_rules *r, const char *text, char *errbuf,
                                   size_t errlen);
enum iop_err coll_rules_load_json(struct coll_rules *r, const char *path, char *errbuf,
                                  size_t errlen);

/* "straggler", ...; "?" out of range. */
const char *coll_alert_kind_name(enum coll_alert_kind kind);
bool coll_alert_kind_from_name(const char *name, enum coll_alert_kind *out);
enum coll_alert_scope coll_alert_kind_scope(enum coll_alert_kind kind);

#endif
