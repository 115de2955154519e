"""Shared by the end-to-end drivers of tests/run-e2e and the suites beside
it (mpiio-bytes, hdf5-layers, pnetcdf, locks, patterns): failing a test,
their command line, the launcher command line for N ranks (Open MPI needs
--oversubscribe on 2 cores; MPICH's hydra does not take it; srun takes its
MPI plugin from the cluster's MpiDefault, as users' jobs do), a job's
environment, running `iopulse run`, and the summary's monitor counts."""
import argparse
import os
import pwd
import subprocess
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


def job_args(doc, ranks=None):
    """--iopulse IOPULSE --mpirun LAUNCHER [--ranks N] [--] PROGRAM [ARGS...];
    --ranks only when ranks (its default) is given."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--iopulse", required=True)
    ap.add_argument("--mpirun", required=True)
    if ranks is not None:
        ap.add_argument("--ranks", type=int, default=ranks)
    ap.add_argument("program", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    if args.program[:1] == ["--"]:
        args.program = args.program[1:]
    if not args.program:
        ap.error("no program")
    return args


def job_env(tmp, **extra):
    """A test job's environment: Open MPI may run as root and oversubscribe
    the 2 cores; HOME (the job card) and TMPDIR are the test's directory."""
    env = dict(os.environ)
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1", HOME=tmp, TMPDIR=tmp)
    env.update(extra)
    return env


def iopulse_job(args, opts, ranks, job, env, timeout, what="iopulse run"):
    """`iopulse run OPTS -- LAUNCHER -n RANKS JOB...`: its stderr passed on,
    a failure unless it exits 0; the finished process."""
    cmd = [args.iopulse, "run"] + opts + ["--"] + launcher_cmd(args.mpirun, ranks) + job
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                       stdin=subprocess.DEVNULL, timeout=timeout, text=True)
    sys.stderr.write(p.stderr)
    if p.returncode != 0:
        fail("%s exited %d" % (what, p.returncode))
    return p


def check_monitor(mon, dropped_ok=True):
    """Nothing rejected, some events, and every event the shims produced
    received or counted as dropped (none dropped unless dropped_ok)."""
    if mon["rejected_frames"] or not mon["events"] or \
            mon["events"] + mon["dropped"] != mon["produced"] or \
            (mon["dropped"] and not dropped_ok):
        fail("monitor: %r" % mon)


def ordinary_user(iopulse, make=None):
    """As root, an ordinary user that can reach iopulse and the shim beside
    it (HPC users are not root): iopulse-test or iopuser, or the user
    make, made with useradd when missing; else None (root then runs the
    job, and the test says so): a clone under a mode-700 directory, as
    mktemp -d makes, is not reachable."""
    if os.geteuid() != 0:
        return None
    user = None
    for name in ((make,) if make else ("iopulse-test", "iopuser")):
        try:
            user = pwd.getpwnam(name)
            break
        except KeyError:
            pass
    if not user and make:
        if subprocess.run(["useradd", "--create-home", make], capture_output=True).returncode:
            print("NOTE: no user %s and useradd failed: the job runs as root" % make)
            return None
        user = pwd.getpwnam(make)
    if not user:
        return None
    lib = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(iopulse))),
                       "pmpi-shim", "libiopulse.so")
    probe = subprocess.run(["setpriv", "--reuid=%d" % user.pw_uid, "--regid=%d" % user.pw_gid,
                            "--init-groups", "--", "sh", "-c", 'test -x "$1" && test -r "$2"',
                            "sh", iopulse, lib], capture_output=True)
    if probe.returncode != 0:
        print("NOTE: %s cannot reach the build tree (%s): the job runs as root"
              % (user.pw_name, iopulse))
        return None
    return user
