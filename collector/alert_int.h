/* Internals of the alert engine, shared by its files:
 *   alerts.c      the engine: tick loop, alert identities, start/ongoing/end
 *   alert_sum.c   what a tick leaves behind: job sums, per-rank windows,
 *                 rolling baselines, per-file state, robust statistics
 *   alert_var.c   variability rules (straggler, throughput_drop,
 *                 latency_spike, hung_io, imbalance)
 *   alert_diag.c  diagnosis rules (small_io ... monitor_loss)
 *   alert_out.c   numbers as text, JSON records, the human line
 * A rule judges its subjects from these summaries and calls alerts_report()
 * for each subject whose gates pass; the engine compares the value with the
 * thresholds and runs the state machine. */
#ifndef COLL_ALERT_INT_H
#define COLL_ALERT_INT_H

#include "alerts.h"
#include "units.h"
#include "events.h"

#define NL           IOP_LAYER__COUNT
#define NC           IOP_CLASS__COUNT
#define DATA_CLASSES 2 /* read and write come first in events.def */
_Static_assert(IOP_CLASS_READ == 0 && IOP_CLASS_WRITE == 1, "data classes are 0 and 1");

#define SUBJECT_LEN 160
#define DETAIL_LEN  224

/* One (layer, class) over one tick, summed over ranks from the RANK rows. */
struct lc_sum {
	uint64_t ops, bytes, time_ns, excl_ns;
	uint64_t child_ops, child_bytes, small_ops;
	uint64_t off_ops, consec_ops, fwd_ops, stride_ops; /* access patterns (pattern.h) */
	uint64_t coll_ops; /* collective calls; see coll_known */
	uint64_t lock_ns;  /* time waiting for locks (meta: lock calls have no sub-calls) */
	uint64_t wait_ns;  /* of excl_ns, waiting for other ranks in collective calls */
	uint64_t ranks;    /* ranks with calls (over a window: the most in a tick) */
};

/* What the job-scope rules need of one tick. */
struct tick_sum {
	int64_t t; /* INT64_MIN: empty slot */
	struct lc_sum lc[NL][NC];
	uint64_t io_ranks; /* ranks with calls (over a window: the most in a tick) */
	uint64_t events, dropped, late;
	bool coll_known; /* the tick said which MPI-IO calls were collective */
};

/* A rolling baseline: the last cap samples offered, but of a run of
 * anomalous samples only the first, so that an anomaly seen now and then
 * becomes part of normal while a lasting one does not. Each sample comes
 * with the mean request size it was measured on, so a rule can tell a
 * slower file system from an application that changed its requests. */
struct baseline {
	double *v; /* cap values, then cap sizes */
	uint32_t cap, n, next;
	uint32_t run; /* anomalous samples in a row */
	double pend_x, pend_size; /* the run's first, entered when the run ends */
};

/* One tick of one rank in one (layer, data class), for straggler. */
struct rank_win {
	int64_t t;
	uint64_t ops, time_ns, bytes;
	uint64_t child_bytes; /* moved by the calls they issued (MPI-IO, HDF5) */
};

/* Slot of tick t in a ring of n slots (ticks may be negative). */
static inline size_t ring_index(int64_t t, uint32_t n)
{
	int64_t i = t % (int64_t)n;
	return (size_t)(i < 0 ? i + n : i);
}

/* The ring's slot of tick t, or NULL when it holds no data of t. */
static inline const struct rank_win *win_at(const struct rank_win *ring, uint32_t n, int64_t t)
{
	const struct rank_win *w = &ring[ring_index(t, n)];
	return w->t == t ? w : NULL;
}

/* One tick of one rank's collective calls, for late_arrival: per layer,
 * its calls matched, the times it came last and how late (collective.h);
 * its wait, and its own time in I/O calls. */
struct coll_win {
	int64_t t;
	uint64_t match[NL], last[NL], late_ns[NL];
	uint64_t wait_ns, own_ns;
};

struct rank_state {
	struct rank_win *grp[NL][DATA_CLASSES]; /* rings of rt.win ticks, on first use */
	struct rank_win *imb;                   /* ring of imbalance ticks (bytes only) */
	struct rank_win *lock;                  /* ring of straggler ticks: time_ns waiting for locks */
	struct coll_win *coll;                  /* ring of late_arrival ticks */
	int64_t seen_t;                         /* last tick with rows of this rank */
	int64_t moved_t, run_from;              /* last tick it moved data; first of that run */
	bool moved_before;                      /* it moved data before that run */
	bool had_ops;                           /* calls ended in this tick */
	uint64_t layer_bytes[NL];               /* this tick's data bytes per layer */
	uint64_t oldest_ns;                     /* this tick's oldest call in flight */
	uint8_t oldest_layer, oldest_cls;
};

struct file_state {
	uint64_t id;
	uint8_t layer, cls;
	int64_t last_t;
	struct baseline b;
};

struct file_table {
	struct file_state *f;
	uint32_t n, cap;
	uint32_t *slot; /* index + 1, 0 = empty */
	uint32_t n_slots;
	int64_t full_at; /* tick in which no file could be forgotten */
};

/* A rule with its times in ticks. */
struct rule_rt {
	struct coll_rule r;
	enum coll_alert_kind kind;
	uint32_t md;  /* min_duration, >= 1 */
	uint32_t mi;  /* min_interval */
	uint32_t win; /* window, >= 1 */
};

/* One subject of one rule whose gates passed in this tick. */
struct cond {
	enum coll_alert_kind kind;
	uint32_t rank;
	uint64_t file;   /* for node_pressure: the device's file system id */
	uint32_t node;   /* node id; 0 when not about a node */
	int layer, cls;  /* -1 when none; cls tells apart alerts of one layer */
	int shown_layer; /* the alert's "layer" (a rank's alert names one too) */
	double value, baseline;
	char subject[SUBJECT_LEN]; /* "rank 12", "mpiio write", "" for the job */
	char detail[DETAIL_LEN];   /* "mpiio write 41 ms/call = 6.2x median ..." */
};

struct ident;

struct coll_alerts {
	struct coll_rules rules;
	struct rule_rt rt[COLL_ALERT__COUNT];
	uint64_t tick_ns;
	int64_t t; /* tick being judged */
	bool started;
	const struct coll_tick *tick;
	const struct coll_alert_ctx *ctx;

	struct tick_sum *ring; /* job sums of the last ring_n ticks */
	uint32_t ring_n;
	struct tick_sum *cur;

	struct rank_state *rank;
	uint32_t n_rank;                           /* entries of rank[] */
	uint32_t *touched, n_touched, cap_touched; /* ranks with rows this tick */
	uint32_t ranks_seen;

	struct baseline tput[NL][DATA_CLASSES], lat[NL][NC];
	/* per layer, the file whose collective calls were waited on most in
	 * the latest tick that had any, and their op class (late_arrival) */
	uint64_t coll_file[NL];
	uint8_t coll_cls[NL];
	struct file_table files;

	struct ident *id;
	uint32_t n_id, cap_id;
	uint32_t *id_slot, n_id_slots;

	struct coll_alert_record *hist;
	size_t n_hist, cap_hist;
	uint64_t hist_dropped;

	double *scratch, *scratch2; /* for medians */
	size_t cap_scratch;

	/* Tests only: called on each tick's job sums before the rules run, to
	 * give no_collective the collective counts tick cells do not carry yet. */
	void (*sum_hook)(struct tick_sum *cur, void *arg);
	void *sum_hook_arg;
};

/* alerts.c */
enum iop_err alerts_report(struct coll_alerts *a, const struct rule_rt *rt, const struct cond *c);
void cond_init(struct cond *c, enum coll_alert_kind kind);

/* alert_sum.c */
enum iop_err sum_setup(struct coll_alerts *a);
void sum_free(struct coll_alerts *a);
enum iop_err sum_tick(struct coll_alerts *a); /* a->tick into the summaries */
/* Sums of the job over the last w ticks (those present). */
void sum_window(const struct coll_alerts *a, uint32_t w, struct tick_sum *out);
enum iop_err scratch_reserve(struct coll_alerts *a, size_t n);
double median(double *v, size_t n); /* reorders v */
double median_without(const double *sorted, size_t n, double x); /* one x left out */
double mad(const double *v, size_t n, double med, double *tmp);
enum iop_err baseline_init(struct baseline *b, uint32_t cap);
void baseline_free(struct baseline *b);
void baseline_offer(struct baseline *b, double x, double size, bool anomalous);
/* The q-quantile of the samples (nearest rank), and the median of their
 * sizes; a negative number when fewer than BASELINE_MIN are in. tmp holds
 * cap values. */
double baseline_value(const struct baseline *b, double q, double *tmp);
double baseline_size(const struct baseline *b, double *tmp);
#define BASELINE_MIN 5
/* The state of (file, layer, class), created (forgetting files long
 * unseen) when absent; NULL when the table is full of active files or out
 * of memory. */
struct file_state *file_get(struct coll_alerts *a, uint64_t id, unsigned layer, unsigned cls);
/* Ticks of s seconds (rounded up); at least lo. */
uint32_t ticks_of(const struct coll_alerts *a, double s, uint32_t lo);

/* alert_var.c, alert_diag.c: one judge per kind, judge_<name> */
typedef enum iop_err (*rule_judge_fn)(struct coll_alerts *a, const struct rule_rt *rt);
extern const rule_judge_fn rule_judges[COLL_ALERT__COUNT];
#define X(id, name, scope)                                                                         \
	enum iop_err judge_##name(struct coll_alerts *a, const struct rule_rt *rt);
COLL_ALERT_KINDS(X)
#undef X

/* alert_out.c: numbers as people read them */
/* snprintf for messages, where cutting a long path or text short is fine */
void fmt_text(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* "file .../run/out.h5" cut to fit, the path from the name lookup. */
void fmt_file(const struct coll_alerts *a, char *buf, size_t len, uint64_t file);

#endif
