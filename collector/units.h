/* Numbers as people read them: IEC bytes, durations, counts. One set of
 * formatters for alert messages, the summary table and status lines. */
#ifndef COLL_UNITS_H
#define COLL_UNITS_H

#include <stddef.h>

void coll_fmt_bytes(char *buf, size_t len, double bytes); /* "512 B", "12.0 MiB" */
void coll_fmt_secs(char *buf, size_t len, double s);      /* "850 us", "41 ms", "1.2 s" */
void coll_fmt_count(char *buf, size_t len, double n);     /* "950", "4.1k", "12M" */

#endif
