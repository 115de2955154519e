/* The dashboard's tables, built from a window state: pure computation, no
 * curses (unit-tested in tui_test.c, timed in bench/tui_bench.c).
 *
 * A query names a list (ranks, nodes, files, layers, call sites, alerts, a
 * rank's detail, a file's ranks), the window (the last `window` ticks up to
 * t_end, from the state's history), a layer scope and a filter. Rates are
 * per second over the ticks of the window that exist; latencies come from
 * the merged histograms of the window; BYTES, RD/WR BYTES, OPS and TIME of
 * the detail lists are the exact cumulative totals (the latest ones, even
 * when the window is in the past). Every value is in base units (bytes,
 * bytes/s, seconds, ops/s). */
#ifndef TUI_MODEL_H
#define TUI_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "alerts.h"
#include "err.h"
#include "filter.h"
#include "state.h"

enum tui_list {
	TUI_LIST_RANKS,
	TUI_LIST_NODES, /* ranks grouped per node (`c`) */
	TUI_LIST_FILES,
	TUI_LIST_LAYERS,
	TUI_LIST_SITES,
	TUI_LIST_ALERTS,
	TUI_LIST_RANK_DETAIL, /* Enter on a rank: its layers (window), then its files (totals) */
	TUI_LIST_FILE_RANKS,  /* Enter on a file: its ranks (totals) */
	TUI_LIST_FS,          /* file systems (FS rows, fsmap.h) */
	TUI_LIST_FS_DETAIL,   /* Enter on a file system: its files, then its ranks (totals) */
	TUI_LIST__COUNT
};

#define TUI_COLS(X)                                                                                \
	X(RD, "rd", "RD/s", "read_Bps")                                                            \
	X(WR, "wr", "WR/s", "write_Bps")                                                           \
	X(IOPS, "iops", "IOPS", "iops")                                                            \
	X(P50, "p50", "p50", "p50_s")                                                              \
	X(P99, "p99", "p99", "p99_s")                                                              \
	X(MAX, "max", "MAX", "max_s")                                                              \
	X(BYTES, "bytes", "BYTES", "bytes")                                                        \
	X(INFLIGHT, "inflight", "INFLIGHT", "inflight")                                            \
	X(TIME, "time", "TIME", "time_s")                                                          \
	X(EXCL, "excl", "EXCL", "excl_time_s")                                                     \
	X(EXCL_PC, "excl%", "EXCL%", "excl_share")                                                 \
	X(FRAG, "frag", "FRAG", "child_ops_per_op")                                                \
	X(META, "meta", "META/s", "meta_ops_per_s")                                                \
	X(RANKS, "ranks", "RANKS", "ranks")                                                        \
	X(RD_BYTES, "rd_bytes", "RD BYTES", "read_bytes")                                          \
	X(WR_BYTES, "wr_bytes", "WR BYTES", "write_bytes")                                         \
	X(OPS, "ops", "OPS", "ops")                                                                \
	X(START, "start", "START", "start")                                                        \
	X(DUR, "dur", "DUR", "duration_s")                                                         \
	X(SEV, "sev", "SEV", "severity")                                                           \
	X(PATTERN, "pattern", "PATT", "pattern")                                                   \
	X(WAIT, "wait", "WAIT", "wait_s")                                                          \
	X(DEV, "dev", "DEV%", "device_util")                                                       \
	X(PSI, "psi", "IO%", "io_pressure")

enum tui_col {
#define X(id, name, label, json) TUI_COL_##id,
	TUI_COLS(X)
#undef X
	TUI_COL__COUNT
};
const char *tui_col_label(enum tui_col c);
const char *tui_col_json(enum tui_col c); /* base-unit key for the JSON save */

enum tui_row_kind { TUI_ROW_RANK, TUI_ROW_NODE, TUI_ROW_FILE, TUI_ROW_LAYER, TUI_ROW_SITE, TUI_ROW_ALERT, TUI_ROW_FS };

#define TUI_SPARK 8 /* ticks in a row's sparkline */

struct tui_row {
	uint8_t kind;   /* enum tui_row_kind */
	uint8_t layers; /* bit per layer with calls */
	int8_t layer;   /* a LAYER row's layer, else -1 */
	uint8_t sev;    /* worst alert on the subject at t_end: 0, 1 WARN, 2 CRIT */
	uint8_t agg;    /* a rank that aggregated other ranks' data (rank_sum.h) */
	uint8_t lat_pending; /* its latency columns are not filled yet (lazy_latency) */
	uint32_t rank;  /* COLL_RANK_NONE when not a rank */
	uint32_t node;  /* node id (hash cut to 32 bits) */
	uint64_t id;    /* unique in the table: rank, node, hash, layer, alert index */
	const char *name;      /* path, site, node name (the state's), or NULL */
	const char *node_name; /* rank rows */
	const struct coll_alert_record *alert;
	double v[TUI_COL__COUNT];
	float spark[TUI_SPARK]; /* bytes per tick, oldest first */
};

struct tui_table {
	enum tui_list list;
	struct tui_row *rows;
	size_t n, cap;
	double window_s; /* seconds the rates are over */
};

struct tui_query {
	enum tui_list list;
	int64_t t_end;   /* last tick of the window */
	uint32_t window; /* ticks, >= 1 */
	int layer;       /* -1: every layer */
	uint32_t rank;   /* RANK_DETAIL */
	uint64_t file;   /* FILE_RANKS */
	const struct tui_filter *filter; /* may be NULL */
	const struct coll_alert_record *alerts;
	size_t n_alerts;
	/* Ranks and Nodes lists: the latency columns (p50, p99, max) are left
	 * out (NaN, lat_pending) unless tui_table_fill_latency() fills them,
	 * for the rows shown (the dashboard, when not sorted by one of them:
	 * merging every rank's latencies over the window was most of a
	 * redraw at 65 536 ranks) */
	bool lazy_latency;
};

/* Fills the latency columns of rows [from, to) of t that a build with
 * q->lazy_latency left pending (q as for that build, lazy or not), from
 * the latencies of their ranks over the window. */
enum iop_err tui_table_fill_latency(struct tui_table *t, const struct coll_state *s,
                                    const struct tui_query *q, size_t from, size_t to);
/* Whether col is a latency column (p50, p99, max). */
bool tui_col_latency(enum tui_col col);

/* The ranks' distribution at tick t (rank_dist.h) the Ranks view draws
 * above its table for a job above the recording's rank cap (1024): the one
 * a recording kept with a tick it folded (the state's, when it is of t),
 * else computed from tick t's rows when the job has more ranks than the
 * cap and the tick holds every rank's rows. d->ranks is 0 otherwise. */
enum iop_err tui_rank_dist(const struct coll_state *s, int64_t t, struct coll_rank_dist *d);

/* The nodes' load at tick t, for the header's nodes line (nodeload.c):
 * "  busiest vda 55% (host)  io pressure 19% (host)", the busiest device
 * under the job's files and the highest I/O pressure (full, else some)
 * among the nodes' samples of the last 5 ticks up to t, appended to buf
 * (room len); nothing without samples. */
void tui_node_load(const struct coll_state *s, int64_t t, char *buf, size_t len);
/* A node's figures for its row in the grouped Ranks view, from its sample
 * of the last 5 ticks up to t: the busiest device under the job's files
 * (*dev) and the I/O pressure, full else some (*psi), shares 0 to 1; NAN
 * when not sampled. */
void tui_node_figures(const struct coll_state *s, uint32_t node, int64_t t, double *dev,
                      double *psi);

enum iop_err tui_table_build(struct tui_table *t, const struct coll_state *s,
                             const struct tui_query *q);
void tui_table_free(struct tui_table *t);
/* Sorts by col (descending when desc); ties by rank, then path / name,
 * then id, so equal values keep a fixed order. Detail lists keep their
 * sections (layers before files, files before ranks). */
void tui_table_sort(struct tui_table *t, enum tui_col col, bool desc);
/* Puts rows in the order of ids (a previous order, `=`); rows not in ids
 * go last, in their current order. */
void tui_table_hold(struct tui_table *t, const uint64_t *ids, size_t n);
/* The label of a file or site hash: the name, "other", "(no file)" or hex. */
const char *tui_name(const struct coll_state *s, uint64_t hash, char *buf, size_t len);
/* Whether an alert covered any part of tick t. */
bool tui_alert_at(const struct coll_alert_record *a, int64_t t, uint64_t tick_ns);

/* What a heatmap cell is (`M` cycles them). */
enum tui_heat_metric {
	TUI_HEAT_BYTES,    /* throughput, bytes/s read + write */
	TUI_HEAT_P99,      /* p99 latency (s) of the row's slowest layer and class */
	TUI_HEAT_PRESSURE, /* the row's node's I/O pressure (full), 0-1 */
	TUI_HEAT_DEVICE,   /* the row's node's busiest block device's utilisation, 0-1 */
	TUI_HEAT__COUNT
};
/* "throughput", "p99", "io pressure", "device busy" */
const char *tui_heat_metric_name(enum tui_heat_metric m);

/* The heatmap: rows are a RANKS or NODES table's rows in its order, columns
 * the `cols` ticks up to t_end; a cell is the metric of that row in that
 * tick (a rank row shows its node's figures for the node metrics; those
 * come from the state's node series, node/series.h, so cells older than
 * its window are blank). A cell is flagged when an alert about the rank
 * covered the tick, or for the node metrics a node_pressure alert about
 * its node (2), or its p99 is over 4x the column's median (1); a tick the
 * history keeps only per layer (state.h, the budget) is 3 in every row
 * for the rank metrics. */
struct tui_heat {
	uint32_t rows, cols;
	int64_t t0; /* tick of column 0 */
	enum tui_heat_metric metric;
	float *v;      /* rows x cols by column (tui_heat_at); < 0: no figure */
	uint8_t *flag; /* the same */
	double vmax;   /* a full cell: the largest value, or 1 for the node metrics */
};
/* Where row r's cell of column c is in v and flag: a column's cells are
 * together (a tick is built a column at a time: by rows, each cell a
 * cache miss at 65 536 rows, tui_bench tui_heat_redraw_ms_65536). */
static inline size_t tui_heat_at(const struct tui_heat *h, uint32_t r, uint32_t c)
{
	return (size_t)c * h->rows + r;
}
enum iop_err tui_heat_build(struct tui_heat *h, const struct coll_state *s,
                            const struct tui_table *t, const struct tui_query *q, uint32_t cols,
                            enum tui_heat_metric metric);
void tui_heat_free(struct tui_heat *h);

#endif
