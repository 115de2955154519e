/* `iopulse verify` and `iopulse summary`: reading a recording back (inspect.c). */
#ifndef REC_INSPECT_H
#define REC_INSPECT_H

int rec_cmd_verify(int argc, char **argv);
int rec_cmd_summary(int argc, char **argv);

#endif
