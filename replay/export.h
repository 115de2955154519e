/* `iopulse export`: a recording's ticks as CSV or JSON lines (export.c). */
#ifndef REC_EXPORT_H
#define REC_EXPORT_H

#include <stdio.h>

int rec_cmd_export(int argc, char **argv);

/* --format chrome (export_chrome.c): the EVENTS frames of o as a Chrome
 * trace to f; 0, or 2 with the reason printed (no events recorded). */
struct rec_opened;
int rec_export_chrome(struct rec_opened *o, const char *path, FILE *f);

#endif
