/* `iopulse export`: a recording's ticks as CSV or JSON lines (export.c). */
#ifndef REC_EXPORT_H
#define REC_EXPORT_H

int rec_cmd_export(int argc, char **argv);

#endif
