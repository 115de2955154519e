/* What a multi-node job needs from the host and the launcher: an address
 * other nodes can reach this host at, and the monitoring environment
 * forwarded to the ranks on every node. */
#ifndef COLL_NETENV_H
#define COLL_NETENV_H

#include <stddef.h>

/* The first up, non-loopback IPv4 address of this host, into buf (left
 * as it is when there is none). */
void coll_first_ipv4(char *buf, size_t len);

/* Makes the launcher forward LD_PRELOAD and every IOPULSE_* and IOPFAULT_*
 * variable of the environment to the ranks. MPICH's mpiexec (hydra) and
 * srun forward the whole environment already; Open MPI's mpirun forwards
 * what OMPI_MCA_mca_base_env_list names, so they are added to it (what
 * was there is kept). */
void coll_forward_env(void);
/* The same for an Open MPI command line that already passes variables
 * with -x (Open MPI refuses both ways at once): argv with "-x NAME" for
 * each of them inserted after argv[0], or NULL when argv has no -x (then
 * use coll_forward_env). Allocated; free() the array only. */
char **coll_forward_argv(char **argv);

#endif
