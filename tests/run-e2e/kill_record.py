#!/usr/bin/python3
"""A whole job killed outright while recording: `iopulse run --record` with
a program still doing I/O, then SIGKILL of every process (iopulse, the
launcher, the ranks). The recording must verify as TRUNCATED (no clean
close) yet hold the ticks written before the kill, and `iopulse summary`
must read it and report the bytes written so far.

    kill_record.py --iopulse IOPULSE --mpirun LAUNCHER --fault LIBIOPFAULT -- PROGRAM [ARGS...]

The fault-injection preload slows every transfer by 200 us, so the job is
still running when it is killed.
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_common import fail  # noqa: E402


def written_so_far(iopulse, rec):
    if not os.path.exists(rec):
        return 0
    s = subprocess.run([iopulse, "summary", "--json", rec], stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL, text=True, timeout=60)
    if s.returncode != 0:
        return 0
    return json.loads(s.stdout)["layers"]["posix"]["write_bytes"]


def kill_session(sid):
    """SIGKILL every process left in the job's session (ranks the launcher
    put in process groups of their own)."""
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            stat = open("/proc/%s/stat" % pid).read()
            if int(stat.rsplit(")", 1)[1].split()[3]) == sid:
                os.kill(int(pid), signal.SIGKILL)
        except (OSError, ValueError, IndexError):
            pass


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--iopulse", required=True)
    p.add_argument("--mpirun", required=True)
    p.add_argument("--fault", required=True)
    p.add_argument("program", nargs="+")
    args = p.parse_args()
    tmp = tempfile.mkdtemp(prefix="iop-kill-")
    try:
        rec = os.path.join(tmp, "job.iop")
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                   HOME=tmp, TMPDIR=tmp, IOPFAULT_DELAY_US="200")
        launcher = [args.mpirun, "-n", "2"] if "mpich" in args.mpirun else \
            [args.mpirun, "--oversubscribe", "-n", "2", "-x", "IOPFAULT_DELAY_US"]
        job = subprocess.Popen([args.iopulse, "run", "--headless", "--tick", "200", "--record",
                                rec, "--also-preload", args.fault, "--"] + launcher + args.program + ["-d", tmp + "/data"],
                               env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               start_new_session=True)
        # Kill once the recording (read while it is written) shows writes,
        # and a second more: the ranks start slowly on a busy machine.
        deadline = time.time() + 60
        while time.time() < deadline and written_so_far(args.iopulse, rec) == 0:
            time.sleep(0.5)
        time.sleep(1)
        if job.poll() is not None:
            fail("the job ended before the kill (make it longer)")
        os.killpg(job.pid, signal.SIGKILL)
        job.wait(timeout=30)
        kill_session(job.pid)
        v = subprocess.run([args.iopulse, "verify", rec], stdout=subprocess.PIPE, text=True,
                           timeout=60)
        print(v.stdout)
        if v.returncode != 2 or "TRUNCATED" not in v.stdout:
            fail("verify of a killed recording: exit %d, no TRUNCATED" % v.returncode)
        deltas = [l for l in v.stdout.splitlines() if l.startswith("frames")]
        n = int(deltas[0].split("DELTA ")[1].split()[0]) if deltas and "DELTA" in deltas[0] else 0
        if n < 5:
            fail("only %d ticks recorded (200 ms ticks)" % n)
        s = subprocess.run([args.iopulse, "summary", "--json", rec], stdout=subprocess.PIPE,
                           text=True, timeout=60)
        if s.returncode != 0:
            fail("summary of the killed recording exited %d" % s.returncode)
        written = json.loads(s.stdout)["layers"]["posix"]["write_bytes"]
        if written <= 0:
            fail("the recording holds no written bytes")
        print("PASS: killed recording verified TRUNCATED with %d ticks; %d bytes written so far"
              % (n, written))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
