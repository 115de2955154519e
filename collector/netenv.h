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
 * was there is kept). A SLURM_EXPORT_ENV that is not ALL gets their names
 * too (coll_srun_export). */
void coll_forward_env(void);
/* The same on the command line, when it must be there (NULL otherwise:
 * then use coll_forward_env). Allocated; free() the array only.
 * - Open MPI, with variables already passed by -x (Open MPI refuses both
 *   ways at once): "-x NAME" for each inserted after argv[0].
 * - srun (argv[0] named srun; its -x is --exclude, left alone) with an
 *   --export list that is not ALL: coll_srun_export's list in its place. */
char **coll_forward_argv(char **argv);
/* An srun --export LIST that lets variables through by name (not ALL):
 * LIST with the name of each variable to forward appended (NONE, which
 * takes no names, replaced by them; srun still sets SLURM_*); NULL for
 * ALL. Allocated. */
char *coll_srun_export(const char *list);

#endif
