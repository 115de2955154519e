/* `iopulse collector --role leaf|mid|root`: one collector of a job's tree. */
#ifndef COLL_CMD_COLLECTOR_H
#define COLL_CMD_COLLECTOR_H

int coll_cmd_collector(int argc, char **argv);

#endif
