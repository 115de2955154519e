#!/usr/bin/python3
"""`iopulse top` end to end: a real MPI job (fpp, 4 ranks, rank 2 slowed by
the fault-injection preload) runs under `iopulse run --headless`, and the
real `iopulse top JOBID` watches it from a tmux pane (120x40) through the
root's viewer server, driven with send-keys and read with capture-pane.

    top_tmux.py --iopulse IOPULSE --mpirun LAUNCHER --fault LIBIOPFAULT --fpp FPP

Checks, each by polling with a bounded timeout:
  - errors, outside a terminal: `iopulse top` (no argument: the only
    running job) says there is no terminal, exit 2; `iopulse top ADDRESS`
    with a wrong IOPULSE_KEY says the key was refused, exit 2;
  - the dashboard: header (LIVE, REC: the job records, job id, ranks 4,
    nodes 1), the straggler's row flagged CRIT and a healthy one not, views (2 Files,
    5 Alerts with the straggler, Tab), pause and step back (Space, Left, Z),
    save (S: the JSON parsed, four ranks with bytes);
  - q leaves top (exit 0) while the job goes on (held open after the MPI
    job until the test lets it end), and the job ends: exit 0, its summary
    written, the straggler alert in it;
  - a dead job (its card left behind, its iopulse gone): `iopulse top
    JOBID` says the root cannot be reached, exit 2.
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
from tmux_test import (TIMEOUT_S, Fail, quit_top, rank_rows, row_of,  # noqa: E402
                       shown_time, tmux_main)


def start_job(args, tmp):
    """The job, held open after the MPI job until its stdin is closed
    (job.communicate() closes it; so does the test's end, whatever ends
    it): it must still run when top quits however long the steps take
    (under load they once took longer than the MPI job)."""
    env = dict(os.environ)
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", HOME=tmp,
               TMPDIR=tmp, IOPFAULT_RANK="2", IOPFAULT_DELAY_US="1000")
    # no -x: under a shell iopulse run forwards IOPFAULT_* to Open MPI's
    # ranks through OMPI_MCA_mca_base_env_list, which -x may not be mixed with
    mpi = [args.mpirun, "-n", "4"] + ([] if "mpich" in os.path.basename(args.mpirun) else
                                      ["--oversubscribe"]) + \
        [args.fpp, "-n", "15000", "-s", "1024", "-d", os.path.join(tmp, "data")]
    cmd = [args.iopulse, "run", "--headless", "--summary-json", os.path.join(tmp, "summary.json"),
           "--record", os.path.join(tmp, "job.iop"), "--also-preload", args.fault, "--", "sh", "-c",
           "%s < /dev/null; s=$?; read x; exit $s" % " ".join(shlex.quote(c) for c in mpi)]
    job = subprocess.Popen(cmd, env=env, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True)
    deadline = time.time() + TIMEOUT_S
    while time.time() < deadline:
        cards = [c for c in glob.glob(os.path.join(tmp, ".iopulse", "jobs", "*"))
                 if not os.path.basename(c).startswith(".")]
        if cards:
            time.sleep(0.1)  # written by rename: whole
            return job, cards[0], env
        if job.poll() is not None:
            raise Fail("iopulse run ended before writing its card: " + job.stderr.read())
        time.sleep(0.05)
    raise Fail("no job card")


def top_plain(args, env, *argv, **extra):
    """iopulse top outside a terminal: (status, stderr)."""
    e = dict(env)
    e.update(extra)
    p = subprocess.run([args.iopulse, "top"] + list(argv), env=e, stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60)
    return p.returncode, p.stderr


def check_errors_live(args, env, card):
    rc, err = top_plain(args, env)
    if rc != 2 or "no terminal" not in err:
        raise Fail("top without a terminal: %d %r" % (rc, err))
    wrong = "".join("0" if c != "0" else "1" for c in card["key"])
    rc, err = top_plain(args, env, card["root"], IOPULSE_KEY=wrong, IOPULSE_JOB=card["job"])
    if rc != 2 or "refused" not in err or "wrong job key" not in err:
        raise Fail("top with a wrong key: %d %r" % (rc, err))


def dashboard(args, tmp, pane, card):
    shell = "env HOME=%s TERM=screen LANG=C.UTF-8 IOPULSE_SAVE_DIR=%s %s top %s; " \
            "echo TOP-EXIT=$?; sleep 600" % (shlex.quote(tmp), shlex.quote(tmp),
                                             shlex.quote(args.iopulse), card["job"])
    pane.tmux("new-session", "-d", "-s", "t", "-x", "120", "-y", "40", "-c", tmp, shell)
    s = pane.wait("the straggler's row flagged", lambda s: row_of(s, 2).startswith("CRIT"))
    for text in ("LIVE", "REC", "job " + card["job"], "ranks 4", "nodes 1", "straggler"):
        if text not in s:
            raise Fail("header lacks %r:\n%s" % (text, s))
    if "UNREACHABLE" in s or "STALE" in s:
        raise Fail("the header says the root is not live:\n" + s)
    if sorted(rank_rows(s)) != [0, 1, 2, 3] or row_of(s, 0).startswith("CRIT"):
        raise Fail("ranks table:\n" + s)

    pane.keys("2")
    pane.wait("Files view", lambda s: "FILE" in s and "fpp.2" in s)
    pane.keys("5")
    pane.wait("Alerts view", lambda s: "KIND" in s and "straggler" in s and "rank 2" in s)
    pane.keys("Tab")
    pane.wait("Filesystems view", lambda s: "FILE SYSTEM" in s and "6 Filesystems" in s
              and re.search(r"^\s+/\S* \(\w+, \S+\)", s, re.M))
    pane.keys("Tab")
    pane.wait("Tab back to Ranks", lambda s: len(rank_rows(s)) == 4)

    pane.keys("Space")
    s = pane.wait_text("PAUSED")
    t0 = shown_time(s)
    pane.keys("Left")
    pane.wait("one tick back", lambda s: shown_time(s) < t0)
    pane.keys("Z")
    pane.wait("live again", lambda s: "LIVE" in s and "PAUSED" not in s and shown_time(s) > t0)

    pane.keys("S")
    s = pane.wait_text("saved ")
    m = re.search(r"saved (\S+)\.txt and \.json", s)
    if not m:
        raise Fail("no save notice:\n" + s)
    view = json.load(open(m.group(1) + ".json"))
    if view["type"] != "view" or view["view"] != "ranks":
        raise Fail("JSON save header: %r" % view)
    if sorted(r["rank"] for r in view["rows"]) != [0, 1, 2, 3] or \
            sum(r["bytes"] for r in view["rows"]) <= 0:
        raise Fail("JSON save rows: %r" % view["rows"])

    quit_top(pane)


def run(args, tmp, pane):
    job, card_path, env = start_job(args, tmp)
    try:
        card = json.load(open(card_path))
        saved_card = open(card_path).read()
        check_errors_live(args, env, card)
        dashboard(args, tmp, pane, card)
        if job.poll() is not None:
            raise Fail("the job ended with top (status %d)" % job.returncode)
        _, err = job.communicate(timeout=TIMEOUT_S * 3)  # closes its stdin: it may end
    finally:
        if job.poll() is None:
            job.kill()
    if job.returncode != 0:
        raise Fail("the job exited %d: %s" % (job.returncode, err))
    summary = json.load(open(os.path.join(tmp, "summary.json")))
    if not any(a["kind"] == "straggler" and a.get("rank") == 2 for a in summary["alerts"]):
        raise Fail("the job's summary lacks the straggler: %r" % summary["alerts"])

    # the job is over and its root gone; its card, put back, is stale
    with open(card_path, "w") as f:
        f.write(saved_card)
    rc, err = top_plain(args, env, card["job"])
    if rc != 2 or "cannot reach the root" not in err or "iopulse jobs" not in err:
        raise Fail("top of a dead job: %d %r" % (rc, err))


def main():
    return tmux_main(run, "top_tmux")


if __name__ == "__main__":
    sys.exit(main())
