/* Cell formatting (fmt.h). */
#include "fmt.h"

#include <math.h>
#include <stdio.h>
#include <time.h>

#include "pattern.h"
#include "units.h"

void tui_fmt_rate(char *buf, size_t len, double bps, bool fixed)
{
	char b[32];
	if (fixed)
		snprintf(b, sizeof b, "%.1f MiB", bps / (1024.0 * 1024.0));
	else
		coll_fmt_bytes(b, sizeof b, bps);
	snprintf(buf, len, "%s/s", b);
}

void tui_fmt_clock(char *buf, size_t len, double epoch_s)
{
	time_t t = (time_t)epoch_s;
	struct tm tm;
	localtime_r(&t, &tm);
	strftime(buf, len, "%H:%M:%S", &tm);
}

void tui_fmt_elapsed(char *buf, size_t len, double s)
{
	unsigned long x = s > 0 ? (unsigned long)s : 0;
	if (x >= 3600)
		snprintf(buf, len, "%lu:%02lu:%02lu", x / 3600, x / 60 % 60, x % 60);
	else
		snprintf(buf, len, "%02lu:%02lu", x / 60, x % 60);
}

void tui_fmt_cell(char *buf, size_t len, enum tui_col col, double v, bool fixed)
{
	if (isnan(v)) { /* a value the view does not have: blank, not 0 */
		if (len)
			buf[0] = 0;
		return;
	}
	switch (col) {
	case TUI_COL_RD:
	case TUI_COL_WR: tui_fmt_rate(buf, len, v, fixed); break;
	case TUI_COL_BYTES:
	case TUI_COL_RD_BYTES:
	case TUI_COL_WR_BYTES:
		if (fixed)
			snprintf(buf, len, "%.1f MiB", v / (1024.0 * 1024.0));
		else
			coll_fmt_bytes(buf, len, v);
		break;
	case TUI_COL_P50:
	case TUI_COL_P99:
	case TUI_COL_MAX:
	case TUI_COL_TIME:
	case TUI_COL_EXCL:
	case TUI_COL_WAIT:
	case TUI_COL_DUR:
		if (v <= 0)
			snprintf(buf, len, "-");
		else
			coll_fmt_secs(buf, len, v);
		break;
	case TUI_COL_EXCL_PC:
	case TUI_COL_DEV:
	case TUI_COL_PSI: snprintf(buf, len, "%.0f%%", v * 100); break;
	case TUI_COL_FRAG:
		if (v <= 0)
			snprintf(buf, len, "-");
		else
			snprintf(buf, len, "%.1f", v);
		break;
	case TUI_COL_START: tui_fmt_clock(buf, len, v); break;
	case TUI_COL_SEV: {
		int sev = (int)v % 10;
		snprintf(buf, len, "%s", sev == 2 ? "CRIT" : sev == 1 ? "WARN" : "-");
		break;
	}
	case TUI_COL_PATTERN: /* the pattern of most calls, + 1 (tui/model.c) */
		snprintf(buf, len, "%s", v >= 1 ? coll_pat_short((enum coll_pattern)(v - 1)) : "-");
		break;
	case TUI_COL_IOPS:
	case TUI_COL_META:
	case TUI_COL_INFLIGHT:
	case TUI_COL_RANKS:
	case TUI_COL_OPS:
	default: coll_fmt_count(buf, len, v); break;
	}
}
