/* Numbers as people read them, for every human output of the collector
 * (alert messages, the summary table, status lines). See units.h. */
#include "units.h"

#include <stdio.h>

void coll_fmt_bytes(char *buf, size_t len, double bytes)
{
	static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
	unsigned u = 0;
	while (bytes >= 1024 && u + 1 < sizeof(unit) / sizeof(unit[0])) {
		bytes /= 1024;
		u++;
	}
	snprintf(buf, len, u ? "%.1f %s" : "%.0f %s", bytes, unit[u]);
}

void coll_fmt_secs(char *buf, size_t len, double s)
{
	if (s < 1e-3)
		snprintf(buf, len, "%.0f us", s * 1e6);
	else if (s < 10e-3)
		snprintf(buf, len, "%.1f ms", s * 1e3);
	else if (s < 1)
		snprintf(buf, len, "%.0f ms", s * 1e3);
	else if (s < 10)
		snprintf(buf, len, "%.1f s", s);
	else if (s < 600)
		snprintf(buf, len, "%.0f s", s);
	else if (s < 7200)
		snprintf(buf, len, "%.0f min", s / 60);
	else
		snprintf(buf, len, "%.1f h", s / 3600);
}

void coll_fmt_count(char *buf, size_t len, double n)
{
	if (n < 1000)
		snprintf(buf, len, "%.0f", n);
	else if (n < 1e6)
		snprintf(buf, len, "%.1fk", n / 1e3);
	else if (n < 1e9)
		snprintf(buf, len, "%.1fM", n / 1e6);
	else
		snprintf(buf, len, "%.1fG", n / 1e9);
}
