#!/usr/bin/python3
"""`iopulse top` with no argument and two running jobs: it lists them (from
their job cards) and asks which to watch; the answer attaches the dashboard
to that job. Two writers under `iopulse run --headless` share a HOME; the
real `iopulse top` runs in a tmux pane.

Checks: the list shows both job ids and the prompt `watch which job [1-2]?`;
answering 2 shows the dashboard (LIVE) of the job listed second, not the
first; q exits 0. Outside a terminal, with two jobs, `iopulse top` says to
give a JOBID, exit 1.

    top_pick.py (tmux_main's options)
Standard library only. Exit status: 0 pass, 1 fail.
"""
import glob
import json
import os
import re
import shlex
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tmux_test import TIMEOUT_S, Fail, quit_top, tmux_main  # noqa: E402

# About 300 s of writing, ended by the test: both jobs must still run when
# top lists them, however loaded the machine.
WRITER = ("import os,sys,time\n"
          "f=os.open(sys.argv[1], os.O_WRONLY|os.O_CREAT|os.O_TRUNC, 0o600)\n"
          "for i in range(6000):\n"
          "    os.write(f, b'x'*4096); time.sleep(0.05)\n")


def start_jobs(args, tmp, env):
    jobs = []
    for i in range(2):
        cmd = [args.iopulse, "run", "--headless", "--", "/usr/bin/python3", "-c", WRITER,
               os.path.join(tmp, "out.%d" % i)]
        jobs.append(subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL))
    deadline = time.time() + TIMEOUT_S
    while time.time() < deadline:
        cards = [c for c in glob.glob(os.path.join(tmp, ".iopulse", "jobs", "*"))
                 if not os.path.basename(c).startswith(".")]
        if len(cards) == 2:
            time.sleep(0.1)  # written by rename: whole
            return jobs
        time.sleep(0.05)
    raise Fail("the two jobs' cards did not appear")


def run(args, tmp, pane):
    env = dict(os.environ, HOME=tmp, TMPDIR=tmp)
    jobs = start_jobs(args, tmp, env)
    try:
        p = subprocess.run([args.iopulse, "top"], env=env, stdin=subprocess.DEVNULL,
                           capture_output=True, text=True, timeout=60)
        if p.returncode != 1 or "give a JOBID" not in p.stderr:
            raise Fail("top with two jobs and no terminal: %d %r" % (p.returncode, p.stderr))
        shell = "env HOME=%s TERM=screen LANG=C.UTF-8 %s top; echo TOP-EXIT=$?; sleep 600" % (
            shlex.quote(tmp), shlex.quote(args.iopulse))
        pane.tmux("new-session", "-d", "-s", "t", "-x", "120", "-y", "40", "-c", tmp, shell)
        s = pane.wait_text("watch which job [1-2]?")
        listed = re.findall(r"^\s+(\d)\) ([0-9a-f]{16}) ", s, re.M)
        if [n for n, _ in listed] != ["1", "2"]:
            raise Fail("the list of jobs:\n" + s)
        ids = {json.load(open(c))["job"] for c in glob.glob(os.path.join(tmp, ".iopulse", "jobs", "*"))
               if not os.path.basename(c).startswith(".")}
        if {j for _, j in listed} != ids:
            raise Fail("listed %s, the cards say %s" % (listed, ids))
        second = listed[1][1]
        pane.keys("2", "Enter")
        s = pane.wait("the second job's dashboard",
                      lambda s: "LIVE" in s and ("job " + second) in s)
        if ("job " + listed[0][1]) in s:
            raise Fail("the first job shown too:\n" + s)
        print("ok: listed %s; answered 2, watching %s" % ([j for _, j in listed], second))
        quit_top(pane)
    finally:
        for j in jobs:  # iopulse run ends its command on SIGTERM
            j.terminate()
        for j in jobs:
            try:
                j.wait(timeout=30)
            except subprocess.TimeoutExpired:
                j.kill()
                j.wait()


def main():
    return tmux_main(run, "top_pick")


if __name__ == "__main__":
    sys.exit(main())
