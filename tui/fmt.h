/* Table cells as text: auto IEC units (B/s, KiB/s ...) or fixed MiB (`U`),
 * latencies in us/ms/s (collector/units.h's formatters), counts, times of
 * day. Pure; unit-tested. */
#ifndef TUI_FMT_H
#define TUI_FMT_H

#include <stdbool.h>
#include <stddef.h>

#include "model.h"

void tui_fmt_cell(char *buf, size_t len, enum tui_col col, double v, bool fixed_units);
void tui_fmt_rate(char *buf, size_t len, double bytes_per_s, bool fixed_units);
/* "12:03:10" local time of a time in seconds since the epoch */
void tui_fmt_clock(char *buf, size_t len, double epoch_s);
/* "1:02:03" or "02:03" */
void tui_fmt_elapsed(char *buf, size_t len, double s);

#endif
