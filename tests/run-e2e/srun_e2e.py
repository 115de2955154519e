#!/usr/bin/python3
"""`iopulse run -- srun ...` under a real Slurm: Debian's slurmctld, slurmd
and munged started privately for the test (slurm_cluster.py: one node =
this host, its CPUs, free ports, MpiDefault=--mpi, pmix for Open MPI, pmi2
for MPICH), stopped at the end.

  1. An MPI program, `srun -n 2 fpp`: run_e2e.py's whole check (exit
     status, JSON records, exact bytes and ops per file and per rank, every
     rank on the one node and ended, nothing rejected, no alerts, the
     recording) with --nodes 1.
  2. A program that is not MPI, `srun --mpi=none -n 2 python3 -I -S -c
     WRITER`: the only rank a task has is SLURM_PROCID; ranks 0 and 1, each
     one's written bytes and calls exactly the writer's (Python's own reads
     are under /usr, an excluded path: 0 read), one node, no alerts. Nothing of Slurm's own (srun
     reads slurm.conf; slurmstepd) is in the summary.
     Again with --export=NONE: iopulse adds its variables by name (srun's
     --export takes a list; NONE passes none), so the tasks are monitored.
  3. The exit status passes through: tasks exiting 5 and 6 make srun, and
     so iopulse, exit 6.

Exit 77 (a ctest SKIP) with the reason when Slurm cannot start here: not
root, not installed, or a daemon did not come up (its log is printed).
Usage: srun_e2e.py --iopulse BIN --fpp FPP [--mpi pmix|pmi2]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from e2e_common import fail  # noqa: E402
from slurm_cluster import SlurmCluster, SlurmUnavailable  # noqa: E402

BUDGET_S = 45  # for everything but stopping the daemons (ctest's TIMEOUT is 60)
T0 = time.time()
BLOCKS, BS = 100, 4096
# Not `sh -c 'exec dd ...'`: once, on a loaded machine, dd's image after
# sh's exec went uncounted (the rank ended with 0 bytes). exec is the
# shim's tests' matter (docs/shim.md, "exec"); this one is about srun.
WRITER = ("import os, sys\n"
          "f = os.open('%s/plain.' + os.environ['SLURM_PROCID'], os.O_WRONLY | os.O_CREAT, 0o600)\n"
          "for i in range(%d):\n"
          "    os.write(f, b'x' * %d)\n"
          "os.close(f)\n")


def left():
    """Seconds left of the budget: every wait's timeout."""
    return max(1.0, T0 + BUDGET_S - time.time())


def iopulse_run(a, tmp, env, summary, srun_args):
    cmd = [a.iopulse, "run", "--headless", "--summary-json", summary, "--",
           shutil.which("srun")] + srun_args
    t = time.time()
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=left())
    return p, time.time() - t


def mpi_program(a, tmp, cluster):
    t = time.time()
    p = subprocess.run([sys.executable, os.path.join(HERE, "run_e2e.py"), "--iopulse", a.iopulse,
                        "--mpirun", shutil.which("srun"), "--ranks", "2", "--nodes", "1",
                        "--posix-ranks", "--", a.fpp],
                       env=cluster.job_env(), capture_output=True, text=True,
                       timeout=left())
    sys.stdout.write(p.stdout)
    if p.returncode != 0:
        fail("srun -n 2 fpp (MPI, --mpi=%s) under iopulse run:\n%s\nslurmd log:\n%s"
             % (a.mpi, p.stderr, cluster.log("slurmd-" + cluster.host)))
    print("ok: srun -n 2 fpp (MPI over --mpi=%s): exact (%.1f s)" % (a.mpi, time.time() - t))


def not_mpi(a, tmp, cluster, export=None):
    """srun [--export=EXPORT] --mpi=none -n 2: WRITER in each task (an
    absolute path: with --export=NONE the tasks have no PATH)."""
    stem = export or "plain"
    data = os.path.join(tmp, stem)
    os.mkdir(data)
    summary = os.path.join(tmp, stem + ".json")
    writer = WRITER % (data, BLOCKS, BS)
    what = "srun %s--mpi=none -n 2 python3" % ("--export=%s " % export if export else "")
    p, took = iopulse_run(a, tmp, cluster.job_env(HOME=tmp, TMPDIR=tmp), summary,
                          (["--export=" + export] if export else [])
                          + ["--mpi=none", "-n", "2", "/usr/bin/python3", "-I", "-S", "-c", writer])
    if p.returncode != 0:
        fail("%s: iopulse exited %d\n%s" % (what, p.returncode, p.stderr))
    s = json.load(open(summary))
    want = BLOCKS * BS
    ranks = {r["rank"]: r for r in s["ranks"]}
    if sorted(ranks) != [0, 1] or s["job"]["ranks"] != 2 or s["job"]["nodes"] != 1:
        fail("%s: ranks %s (job.ranks %d), nodes %d: expected ranks 0 and 1 on 1 node"
             % (what, sorted(ranks), s["job"]["ranks"], s["job"]["nodes"]))
    for rank, r in ranks.items():
        if (r["node"], r["state"], r["write_bytes"], r["read_bytes"]) != \
                (cluster.host, "ended", want, 0):
            fail("%s: rank %d: %r; it wrote %d bytes on %s" % (what, rank, r, want, cluster.host))
        path = os.path.join(data, "plain.%d" % rank)
        f = [f for f in s["files"] if f["path"] == path]
        if os.path.getsize(path) != want or len(f) != 1 or \
                (f[0]["write_bytes"], f[0]["write_ops"], f[0]["ranks"]) != (want, BLOCKS, 1):
            fail("%s: %s: %d bytes on disk, summary %r; it wrote %d in %d calls"
                 % (what, path, os.path.getsize(path), f, want, BLOCKS))
    slurm = [f["path"] for f in s["files"] if f["path"].startswith(cluster.dir)]
    if slurm or s["alerts"] or s["monitor"]["rejected_frames"]:
        fail("%s: Slurm's own files %s, alerts %s, monitor %s"
             % (what, slurm, s["alerts"], s["monitor"]))
    print("ok: %s (not MPI, rank from SLURM_PROCID): 2 ranks on %s, %d bytes each exact, "
          "no alerts (%.1f s)" % (what, cluster.host, want, took))


def exit_status(a, tmp, cluster):
    summary = os.path.join(tmp, "exit.json")
    p, took = iopulse_run(a, tmp, cluster.job_env(HOME=tmp, TMPDIR=tmp), summary,
                          ["--mpi=none", "-n", "2", "sh", "-c", "exit $((5 + SLURM_PROCID))"])
    if p.returncode != 6:
        fail("tasks exited 5 and 6: iopulse exited %d, srun exits 6\n%s" % (p.returncode, p.stderr))
    print("ok: tasks exiting 5 and 6: iopulse exited 6, as srun (%.1f s)" % took)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iopulse", required=True)
    ap.add_argument("--fpp", required=True)
    ap.add_argument("--mpi", default="pmix", help="the cluster's MpiDefault")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="iop-srun-")
    cluster = SlurmCluster(tmp, mpi_default=a.mpi)
    try:
        with cluster:
            print("ok: Slurm up (munged, slurmctld, slurmd on %s, %d CPUs) in %.1f s"
                  % (cluster.host, cluster.cpus, time.time() - T0))
            mpi_program(a, tmp, cluster)
            not_mpi(a, tmp, cluster)
            not_mpi(a, tmp, cluster, export="NONE")
            exit_status(a, tmp, cluster)
        print("PASS: iopulse run -- srun, %.1f s" % (time.time() - T0))
        return 0
    except SlurmUnavailable as e:  # only starting raises it
        print("SKIP: Slurm cannot run here: %s" % e)
        return 77
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
