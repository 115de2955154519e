#!/usr/bin/python3
"""Ctrl-C of an MPICH job under the shim: every rank dies of the SIGINT, as
it does without the shim (docs/shim.md, "Exit").

    ctrlc_e2e.py --iopulse IOPULSE --shim LIBIOPULSE --prog CTRLC_JOB [--runs N] [--ranks N]

MPICH's hydra proxy passes the SIGINT on to every rank and SIGKILLs the
ranks still alive as soon as one has died. At the signal's default action
the kernel settles a process's fate when the signal is sent, so without
the shim every rank dies of SIGINT whenever the SIGKILL comes; a shim that
held the signal to send a last frame let the SIGKILL overtake it, and the
rank died of SIGKILL: mpiexec reported 9 for it and returned 9 or 11 (or 0)
instead of 2.

1. The proxy's sequence without a launcher: ctrlc_job alone under the
   shim (and once without it), SIGINT then SIGTERM, each followed 5 ms
   later by SIGKILL: the process must die of the first signal.
2. The real thing, --runs times (about 3 s each), with the shim and once
   without it: `iopulse run --headless -- mpiexec.mpich -print-all-exitcodes
   -n RANKS ctrlc_job`, interrupted (SIGINT to iopulse, which passes it to
   mpiexec) while the last rank writes and the others wait (in
   MPI_Finalize in the MPICH build). hydra reports 0 for a rank it reaps
   once every output pipe has closed, so a run may say 0 for any rank,
   and then return 0, with or without the shim (more often with it:
   docs/shim.md, "Known bugs"); what it must never report is a rank
   killed by SIGKILL (9), a status other than 0 or 2, or, over all runs,
   no 2 at all.

Exit status: 0 pass, 1 fail, 77 skipped (no mpiexec.mpich).
"""
import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_common import fail  # noqa: E402

KEY = "00112233445566778899aabbccddeeff"
JOB_SECONDS = 20  # the writer's own end: a job not interrupted is seen


def wait_files(paths, proc, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if all(os.path.exists(p) for p in paths):
            return True
        if proc.poll() is not None:
            return False
        time.sleep(0.02)
    return False


def stop(proc):
    """Ends what a failed check left running: the process group."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
        proc.wait()


def libc_path():
    """A library that changes nothing, for `iopulse run` without the shim."""
    with open("/proc/self/maps") as maps:
        for line in maps:
            path = line.split()[-1]
            if re.search(r"/libc[.-][^/]*so", path):
                return path
    fail("libc not found in /proc/self/maps")


def signal_then_kill(args, tmp, mode, sig):
    """ctrlc_job as the writer of a job of one, sig and 5 ms later
    SIGKILL, as hydra's proxy does; returns how it ended."""
    d = tempfile.mkdtemp(dir=tmp, prefix="alone-")
    env = dict(os.environ, PMI_RANK="0", PMI_SIZE="1")
    if mode == "shim":
        # no collector: a last frame would wait its whole timeout
        env.update(IOPULSE_ADDR="ipc://%s/absent.ipc" % d, IOPULSE_KEY=KEY)
        env["LD_PRELOAD"] = ":".join(p for p in (os.environ.get("LD_PRELOAD"), args.shim) if p)
    p = subprocess.Popen([args.prog, d, str(JOB_SECONDS)], env=env, start_new_session=True)
    try:
        if not wait_files([os.path.join(d, "ready.0")], p, 15):
            fail("ctrlc_job (%s) did not start writing (exit %s)" % (mode, p.poll()))
        time.sleep(0.1)
        p.send_signal(sig)
        time.sleep(0.005)
        p.send_signal(signal.SIGKILL)
        return p.wait(timeout=10)
    finally:
        stop(p)


def interrupted_job(args, tmp, mode):
    """One job under `iopulse run`, Ctrl-C'd; (iopulse's exit status,
    mpiexec's per-rank statuses, output)."""
    d = tempfile.mkdtemp(dir=tmp, prefix="job-%s-" % mode)
    env = dict(os.environ)
    env["IOPULSE_SHIM"] = args.shim if mode == "shim" else libc_path()
    cmd = [args.iopulse, "run", "--headless", "--", args.mpiexec, "-print-all-exitcodes",
           "-n", str(args.ranks), args.prog, d, str(JOB_SECONDS)]
    out = open(os.path.join(d, "out"), "w+")
    p = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT,
                         start_new_session=True)
    try:
        ready = [os.path.join(d, "ready.%d" % r) for r in range(args.ranks)]
        if not wait_files(ready, p, 20):
            out.seek(0)
            fail("the job (%s) did not get going (exit %s):\n%s" % (mode, p.poll(), out.read()))
        time.sleep(0.3)  # the writer writing, the others waiting
        p.send_signal(signal.SIGINT)
        rc = p.wait(timeout=20)
    except subprocess.TimeoutExpired:
        fail("iopulse run (%s) did not end within 20 s of the SIGINT" % mode)
    finally:
        stop(p)
    out.seek(0)
    text = out.read()
    m = re.search(r"Exit codes: \[[^]]*\] ([\d,]+)", text)
    if not m:
        fail("no per-rank exit codes from mpiexec (%s, exit %d):\n%s" % (mode, rc, text))
    return rc, [int(c) for c in m.group(1).split(",")], text


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iopulse", required=True)
    ap.add_argument("--shim", required=True)
    ap.add_argument("--prog", required=True)
    ap.add_argument("--mpiexec", default=shutil.which("mpiexec.mpich"))
    ap.add_argument("--runs", type=int, default=8)
    ap.add_argument("--ranks", type=int, default=4)
    args = ap.parse_args()
    if not args.mpiexec:
        print("SKIP: mpiexec.mpich not found (MPICH is not installed)")
        return 77
    # Children inherit an ignored SIGINT (a test run in the background of
    # a shell): the ranks must start with the default action.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    tmp = tempfile.mkdtemp(prefix="iop-ctrlc-")
    problems = []
    for mode in ("none", "shim"):
        for sig in (signal.SIGINT, signal.SIGTERM):
            rc = signal_then_kill(args, tmp, mode, sig)
            print("alone (%s): %s, then SIGKILL 5 ms later: died of %s"
                  % (mode, sig.name, signal.Signals(-rc).name if rc < 0 else "exit %d" % rc))
            if rc != -sig:
                problems.append("alone (%s): %s then SIGKILL: %s, not %s"
                                % (mode, sig.name, rc, -sig))
    reported_2 = False
    for i, mode in enumerate(["none"] + ["shim"] * args.runs):
        rc, codes, text = interrupted_job(args, tmp, mode)
        print("job %d (%s): iopulse run exited %d, ranks %s" % (i, mode, rc, codes))
        reported_2 |= rc == 2
        if "interrupted (SIGINT) before the command finished" not in text:
            problems.append("job %d (%s): the summary does not say the run was interrupted"
                            % (i, mode))
        bad = [(r, c) for r, c in enumerate(codes) if c not in (0, 2)]
        if len(codes) != args.ranks or bad or rc not in (0, 2):
            problems.append("job %d (%s): exit %d, ranks %s (9: killed by SIGKILL)"
                            % (i, mode, rc, codes))
            print(text)
    if not reported_2:
        problems.append("no run reported the SIGINT (exit 2): was the job interrupted?")
    if problems:
        fail("; ".join(problems))
    shutil.rmtree(tmp, ignore_errors=True)
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
