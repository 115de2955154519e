/* `iopulse run`: monitors a command (single node: the root and the node's
 * leaf live in this process; nothing else to start). */
#ifndef COLL_RUN_H
#define COLL_RUN_H

int coll_cmd_run(int argc, char **argv);

#endif
