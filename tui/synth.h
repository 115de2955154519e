/* A synthetic window state for tui tests and the redraw benchmark, built
 * through the engine (coll_state_apply of made-up tick deltas): ranks
 * spread over nodes of 64, each writing its own file with POSIX writes of
 * 64 KiB; one slow rank (10x the latency, a tenth of the bytes). */
#ifndef TUI_SYNTH_H
#define TUI_SYNTH_H

#include <stdint.h>

#include "source.h"
#include "state.h"

#define TUI_SYNTH_T0 1700000000 /* first tick number, 1 s ticks */

/* slow: the slow rank, or UINT32_MAX for none. */
enum iop_err tui_synth_state(struct coll_state *s, uint32_t ranks, uint32_t ticks, uint32_t slow);
/* The same with the history's budget (state.h) set to max_bytes. */
enum iop_err tui_synth_state_budget(struct coll_state *s, uint32_t ranks, uint32_t ticks,
                                    uint32_t slow, uint64_t max_bytes);
/* The same as a lean recording with whole ticks every detail ticks
 * (record.h) reads back: the other ticks keep their LAYER rows, and the
 * state's detail_ticks is detail (0: every tick whole). */
enum iop_err tui_synth_state_lean(struct coll_state *s, uint32_t ranks, uint32_t ticks,
                                  uint32_t slow, uint64_t max_bytes, uint32_t detail);

/* A live source over s: its range and state, no alerts, no fd, job 42
 * started at TUI_SYNTH_T0; for tests and benchmarks that drive the
 * dashboard itself. */
struct tui_source tui_synth_source(struct coll_state *s);

#endif
