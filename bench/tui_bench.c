/* Dashboard redraw benchmark:
 *
 *   tui_redraw_ms_4096        one full redraw (tables rebuilt from the window
 *                             state, the screen drawn and written out) of the
 *                             Ranks view, 4096 ranks, 10 s window
 *   tui_heat_redraw_ms_4096   the same with the heatmap (4096 rank rows x 186
 *                             tick columns computed, one screen drawn)
 *
 * The state is built through the engine (coll_state_apply of synthetic tick
 * deltas: tui/synth.c), 20 ticks of 4096 ranks on 64 nodes, one slow rank.
 * The screen is a 200x50 ncurses terminal (xterm-256color) writing to
 * /dev/null. Median of 9 redraws. Target: 50 ms.
 *
 *   tui_redraw_ms_65536       the Ranks view grouped per node (the default
 *                             above 1024 ranks) of 65 536 ranks on 1024
 *                             nodes (issue 22), the same state built the
 *                             same way; and ungrouped beside it
 *   tui_heat_redraw_ms_65536  the heatmap of those 65 536 ranks
 *
 * Usage: tui_bench [NAME...] */
#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "dash.h"
#include "synth.h"

#define TICKS 20
#define RUNS  9

static struct coll_state state;

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median_redraw_ms(struct tui_dash *d)
{
	double v[RUNS];
	for (int i = 0; i < RUNS; i++) {
		uint64_t t0 = iop_mono_ns();
		tui_dash_redraw(d);
		v[i] = (iop_mono_ns() - t0) / 1e6;
	}
	qsort(v, RUNS, sizeof *v, cmp_double);
	return v[RUNS / 2];
}

static bool wanted(int argc, char **argv, const char *name)
{
	if (argc < 2)
		return true;
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], name))
			return true;
	return false;
}

struct redraws {
	double grouped, ranks, heat;
};

static int measure(uint32_t n_ranks, struct redraws *r)
{
	if (tui_synth_state(&state, n_ranks, TICKS, 77) != IOP_OK) {
		fprintf(stderr, "tui_bench: cannot build the state\n");
		return 2;
	}
	setenv("TERM", "xterm-256color", 1);
	FILE *out = fopen("/dev/null", "w"), *in = fopen("/dev/null", "r");
	struct tui_source src = tui_synth_source(&state);
	char why[128];
	struct tui_dash *d = out && in ? tui_dash_open(&src, in, out, why, sizeof why) : NULL;
	if (!d) {
		fprintf(stderr, "tui_bench: no screen: %s\n", out && in ? why : "no /dev/null");
		return 2;
	}
	resize_term(50, 200);
	tui_dash_key(d, '1');
	r->grouped = median_redraw_ms(d); /* per node: the default above 1024 ranks */
	tui_dash_key(d, 'c');
	r->ranks = median_redraw_ms(d);
	tui_dash_key(d, 'H');
	r->heat = median_redraw_ms(d);
	tui_dash_close(d);
	fclose(out);
	fclose(in);
	coll_state_free(&state);
	memset(&state, 0, sizeof state);
	return 0;
}

int main(int argc, char **argv)
{
	struct redraws r;
	int rc;
	if (wanted(argc, argv, "tui_redraw_ms_4096") || wanted(argc, argv, "tui_heat_redraw_ms_4096")) {
		if ((rc = measure(4096, &r)))
			return rc;
		if (wanted(argc, argv, "tui_redraw_ms_4096")) {
			printf("tui_redraw_ms_4096 %.1f ms (Ranks view, %d ranks, 200x50, target 50)\n",
			       r.ranks, 4096);
			printf("tui_redraw_ms_4096_grouped %.1f ms (the same grouped per node, the "
			       "default above 1024 ranks)\n", r.grouped);
		}
		if (wanted(argc, argv, "tui_heat_redraw_ms_4096"))
			printf("tui_heat_redraw_ms_4096 %.1f ms (heatmap, %d ranks x 186 ticks, target "
			       "50)\n", r.heat, 4096);
	}
	/* only when named: building 20 ticks of 65 536 ranks takes a while */
	bool big = argc >= 2 && (wanted(argc, argv, "tui_redraw_ms_65536") ||
	                         wanted(argc, argv, "tui_heat_redraw_ms_65536"));
	if (big) {
		if ((rc = measure(65536, &r)))
			return rc;
		if (wanted(argc, argv, "tui_redraw_ms_65536"))
			printf("tui_redraw_ms_65536 %.1f ms (Ranks view grouped per node, the default "
			       "above 1024 ranks: 65536 ranks on 1024 nodes, 200x50, target 50; "
			       "ungrouped %.1f)\n", r.grouped, r.ranks);
		if (wanted(argc, argv, "tui_heat_redraw_ms_65536"))
			printf("tui_heat_redraw_ms_65536 %.1f ms (heatmap, 65536 ranks x 186 ticks, "
			       "target 50)\n", r.heat);
	}
	return 0;
}
