/* The dashboard's pure parsers: the row filter typed after `/` and the
 * time typed after `b` (UX.md, "Keys"). No curses here; unit-tested in
 * tui_test.c.
 *
 * Filter: terms separated by `|`, any of which may match (OR); a leading `!`
 * inverts the whole filter. A term is
 *   rank=0-63[,70,80-90]   the row's rank is in one of the ranges
 *   file=GLOB              the row's path matches (fnmatch, `*` matches `/`)
 *   layer=NAME             the row has calls of that layer (posix, stdio,
 *                          mpiio, hdf5; the labels MPI-IO etc. work too)
 *   node=GLOB              the row's node name matches
 *   anything else          a substring of the row's label, path, node or
 *                          rank number (case-insensitive)
 * A term about something a row does not have (file= on a rank row) does
 * not match that row. */
#ifndef TUI_FILTER_H
#define TUI_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TUI_FILTER_TERMS  8
#define TUI_FILTER_RANGES 8
#define TUI_FILTER_TEXT   128

enum tui_term_kind { TUI_TERM_SUB, TUI_TERM_RANK, TUI_TERM_FILE, TUI_TERM_LAYER, TUI_TERM_NODE };

struct tui_term {
	enum tui_term_kind kind;
	char text[TUI_FILTER_TEXT]; /* substring or glob */
	struct {
		uint32_t lo, hi;
	} r[TUI_FILTER_RANGES];
	unsigned n_r;
	unsigned layer;
};

struct tui_filter {
	bool invert;
	unsigned n; /* 0: no filter, every row matches */
	struct tui_term t[TUI_FILTER_TERMS];
};

/* What a row offers to the filter; NULL / COLL_RANK_NONE for what it lacks. */
struct tui_subject {
	uint32_t rank; /* UINT32_MAX: none */
	const char *label, *path, *node;
	uint8_t layers; /* bit per enum iop_layer with calls */
};

/* 0 ok; -1 with a message in err when the text is not a filter (then *f is
 * left as it was). Empty text clears the filter. */
int tui_filter_parse(struct tui_filter *f, const char *text, char *err, size_t errlen);
bool tui_filter_match(const struct tui_filter *f, const struct tui_subject *s);

/* The `b` prompt: "HH:MM[:SS]" (local time, on the day of the tick cur: the
 * tick that ends then, as the header's `at` shows a tick),
 * "+30s" / "-5m" / "-90" (seconds) from cur, or "40%" of [first, last].
 * 0 and the tick in *out (clamped to [first, last]); -1 when not understood. */
int tui_seek_parse(const char *text, int64_t cur, int64_t first, int64_t last, uint64_t tick_ns,
                   int64_t *out);

#endif
