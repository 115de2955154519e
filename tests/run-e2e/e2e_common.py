"""Shared by the end-to-end drivers of tests/run-e2e: failing a test, and
the launcher command line for N ranks (Open MPI needs --oversubscribe on
2 cores; MPICH's hydra does not take it; srun takes its MPI plugin from
the cluster's MpiDefault, as users' jobs do)."""
import os
import sys


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def launcher_cmd(mpirun, ranks):
    if os.path.basename(mpirun) == "srun":
        return [mpirun, "-n", str(ranks)]
    if "mpich" in os.path.basename(mpirun) or "mpiexec" in os.path.basename(mpirun):
        return [mpirun, "-n", str(ranks)]
    return [mpirun, "--oversubscribe", "-n", str(ranks)]
