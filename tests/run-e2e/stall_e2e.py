#!/usr/bin/env python3
"""A collector stopped while the job's processes end, under the real `iopulse run`.

Each process's last frame (FINAL) waits for the collector's acknowledgement;
unanswered within 250 ms, the shim leaves the frames it sent lately (which
the collector's nanomsg drops when the connection closes unread) and what
it had not sent, ending in the FINAL frame, in the runtime directory's
spool, which the collector takes when it can (common/spool.h). Before, a
collector off the CPU as the job ended lost those frames, unsaid: `iopulse
run` stopped 2 s over a short fio job summed 0 bytes written, 0 dropped.

fio (a program written by others) under the real launcher: 2 ranks, each
writing 400 files of 16 KiB in 4 KiB blocks in its own directory (as
tests/replay/many_files.py), headless, every file in the summary; with
--thread (one process a rank: the nanomsg sender) and in fio's default
mode (a forked process a job: the hand-written protocol's sender). Each
mode runs twice, `iopulse run` stopped (SIGSTOP) at one of two points of
the job's own progress, not after a fixed delay (fio starts 0.1-0.3 s
after `iopulse run` here and writes for ~0.5 s: a delay that fits this
machine can miss the job on another):
- start: the moment the first fio process of the job is seen (a poll of
  /proc every 10 ms): the collector has had nothing from fio;
- io: once each rank has made 50 of its 400 files: fio is writing, and
  the collector has had its start (or once one has made 200, whatever
  the other has: ranks skewed on a loaded machine).
Either way `iopulse run` stays stopped until every fio process has ended
(at most 10 s: fio may be slow to start or to end), then SIGCONT. A run
whose stop did not cover the ranks' exits (a fio process ended before
it, or none was seen) is run again, up to 3 times.

Each run prints a line of figures (bytes, events, lost, the stop, the
spool) before its checks, each against what was really moved or really
happened:
- the stop covered the ranks' exits: fio processes of both ranks were
  seen, none had ended before the stop and all had ended before SIGCONT
  (else, after 3 runs, the timing did not make the case, and the test
  fails saying so rather than passing on a collector never stalled);
- `iopulse run` exits 0; the 800 files are each 16 KiB on disk and have
  write_bytes 16384 in the summary, and POSIX wrote 800 x 16 KiB;
- monitor: produced = events + dropped + lost, nothing rejected, and
  nothing lost: every call the shims recorded reached the collector;
- the text summary has the 'WARNING: N of the M calls recorded never
  reached the collector' line with the JSON's lost and produced when lost
  is not 0, and no such line when it is;
- the spool was used: in --thread mode, .frames files were in the spool
  while the collector was stopped (before the spool, every run here
  summed 0 bytes written, 0 dropped);
- no runtime directory (iopulse-*) is left in the run's TMPDIR.
Every run goes to its end, its failures said; the test fails after them.

As root, the job runs as the user iopulse-test (made if missing) when it
can reach the build tree (e2e_common.py, ordinary_user), with its own
HOME and TMPDIR; else as root, with a NOTE.

Usage: stall_e2e.py --iopulse IOPULSE --mpirun LAUNCHER [--mode thread|fork]
                    [--stop start|io]
"""
import argparse
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_common import fail, launcher_cmd, ordinary_user  # noqa: E402

TIMEOUT_S = 60   # the job after SIGCONT
RANKS = 2
FILES = 400  # a rank
SIZE = 16384
BLOCK = 4096
STOP_MAX_S = 10   # the longest wait for the stop point, and the longest stop
IO_FILES = 50     # the stop point io: files each rank has made,
IO_AHEAD = 200    # or one rank, whatever the others have
ATTEMPTS = 3      # runs of a case whose stop missed the ranks' exits
POLL_S = 0.01
USER = "iopulse-test"
WARNING = re.compile(r"^  WARNING: (\d+) of the (\d+) calls recorded never reached the collector",
                     re.M)


def fio_procs(data):
    """{pid: (rank, forked)} of the live fio processes writing under data,
    forked when its parent is one of them (fio's job processes); a zombie
    has no command line: it counts as ended."""
    found, parent = {}, {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                argv = f.read().split(b"\0")
            with open("/proc/%s/stat" % pid) as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        if os.path.basename(argv[0]) != b"fio":
            continue
        for a in argv:
            m = re.match(rb"--directory=(.*)/r(\d+)$", a)
            if m and m.group(1) == data.encode():
                found[int(pid)], parent[int(pid)] = int(m.group(2)), ppid
    return {pid: (rank, parent[pid] in found) for pid, rank in found.items()}


def spool_pids(tmpdir):
    """The pids of the spool's files (<time>-<node>-<pid>.frames)."""
    return [int(os.path.basename(f)[26:34], 16)
            for f in glob.glob(os.path.join(tmpdir, "iopulse-*", "spool", "*.frames"))]


def files_made(data):
    """The files each rank's fio has made so far, or None before both
    directories exist."""
    try:
        return [len(os.listdir(os.path.join(data, "r%d" % r))) for r in range(RANKS)]
    except OSError:
        return None


def at_stop_point(stop, data, alive):
    if stop == "start":
        return bool(alive)
    made = files_made(data)
    if made is None:
        return False
    # a rank far ahead of another would end before the other reaches
    # IO_FILES: stop for it then (beside another test suite on the 2 cores,
    # a rank's fio ended first in 4 of 10 runs that waited for both)
    return min(made) >= IO_FILES or max(made) >= IO_AHEAD


def stalled_run(args, name, mode, stop, tmp, user):
    """`iopulse run` over fio in mode, stopped at the stop point until the
    ranks have ended (see the header). Returns the data directory, the
    summary, the text summary and what the stop saw; None when the job did
    not reach the stop point in STOP_MAX_S but ended (slow: run again; one
    that does not end fails the test, hung)."""
    base = os.path.join(tmp, name.replace("/", "-").replace("#", "-"))
    data, home, tmpdir = (os.path.join(base, d) for d in ("data", "home", "tmp"))
    for d in (base, data, home, tmpdir):
        os.mkdir(d)
        if user:
            os.chown(d, user.pw_uid, user.pw_gid)
    live = os.path.join(base, "live.json")
    # each rank its own directory: the launcher's rank variable, then fio
    fio = ("d=%s/r${OMPI_COMM_WORLD_RANK:-$PMI_RANK}; mkdir -p $d && exec fio --name=many "
           "--directory=$d --nrfiles=%d --filesize=%d --bs=%d --rw=write --ioengine=psync "
           "%s--output=/dev/null" % (data, FILES, SIZE, BLOCK,
                                     "--thread " if mode == "thread" else ""))
    cmd = [args.iopulse, "run", "--headless", "--summary-json", live, "--summary-files", "all",
           "--"] + launcher_cmd(args.mpirun, RANKS) + ["sh", "-c", fio]
    # the runtime directory (and its spool) is made under TMPDIR
    env = dict(os.environ, HOME=home, TMPDIR=tmpdir)
    if user:
        # setpriv execs iopulse: the pid signalled below is iopulse's
        cmd = ["setpriv", "--reuid=%d" % user.pw_uid, "--regid=%d" % user.pw_gid,
               "--init-groups", "--"] + cmd
        env.update(USER=user.pw_name, LOGNAME=user.pw_name)
        for k in ("OMPI_ALLOW_RUN_AS_ROOT", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"):
            env.pop(k, None)
    else:
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    err_path = os.path.join(base, "err")
    seen, ended = {}, {}   # fio pid: (rank, forked); fio pid: when it was found gone
    stopped_at = None
    with open(os.path.join(base, "out"), "w") as out, open(err_path, "w") as err:
        p = subprocess.Popen(cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=env)
    try:
        t0 = time.monotonic()
        while True:
            now = time.monotonic() - t0
            alive = fio_procs(data)
            for pid in set(seen) - set(alive):
                ended.setdefault(pid, now)
            seen.update(alive)
            if stopped_at is None:
                if at_stop_point(stop, data, alive):
                    os.kill(p.pid, signal.SIGSTOP)
                    stopped_at = now
                elif now > STOP_MAX_S or p.poll() is not None:
                    # slow (beside other tests), or hung: which, said
                    made = files_made(data)
                    try:
                        p.wait(timeout=TIMEOUT_S)
                    except subprocess.TimeoutExpired:
                        fail("%s: the job did not reach the stop point in %.1f s, nor end in "
                             "%d s more: hung (files made a rank %s, fio processes seen %s)"
                             % (name, now, TIMEOUT_S, made, seen))
                    print("%s: the job did not reach the stop point in %.1f s (files made a "
                          "rank %s, fio processes seen %s); it ended %d"
                          % (name, now, made, seen, p.returncode))
                    return None
            elif len(set(rank for rank, _ in seen.values())) == RANKS and not alive:
                break
            elif now - stopped_at > STOP_MAX_S:
                break
            time.sleep(POLL_S)
        spooled = spool_pids(tmpdir)
        resumed = time.monotonic() - t0
        os.kill(p.pid, signal.SIGCONT)
        stopped_at, stop_s = None, stopped_at
        rc = p.wait(timeout=TIMEOUT_S)
    finally:
        if stopped_at is not None:
            os.kill(p.pid, signal.SIGCONT)
        if p.poll() is None:
            try:
                p.wait(timeout=TIMEOUT_S)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
    with open(err_path) as f:
        text = f.read()
    saw = dict(stop=stop_s, resumed=resumed, seen=seen, ended=ended, spooled=spooled,
               early=sorted(pid for pid, t in ended.items() if t <= stop_s),
               running=sorted(pid for pid in seen if pid not in ended),
               leftover=sorted(os.listdir(tmpdir)))
    if rc != 0:
        fail("%s: `iopulse run` exited %d: %s" % (name, rc, text[-2000:]))
    try:
        with open(live) as f:
            return data, json.load(f), text, saw
    except (OSError, ValueError) as e:
        fail("%s: no summary %s (%s): %s" % (name, live, e, text[-2000:]))


def covered(saw):
    """Why the stop did not cover the ranks' exits, or None when it did."""
    ranks = sorted(set(rank for rank, _ in saw["seen"].values()))
    if ranks != list(range(RANKS)):
        return ("fio processes of ranks %s seen in %.1f s (stopped at %.2f s)"
                % (ranks, saw["resumed"], saw["stop"]))
    if saw["early"]:
        return "fio processes %s had ended before the stop" % saw["early"]
    if saw["running"]:
        return ("fio processes %s still ran %.0f s into the stop (a stopped collector keeps "
                "the job from ending, or the machine is too slow)" % (saw["running"], STOP_MAX_S))
    return None


def figures(name, data, live, saw, user):
    """The run in one line: before the checks, so a failure has it too."""
    mon = live["monitor"]
    mine = [f for f in live["files"] if f["path"].startswith(data + "/") and f["layer"] == "posix"]
    unspooled = [forked for pid, (_, forked) in saw["seen"].items() if pid not in saw["spooled"]]
    ends = sorted(saw["ended"].values()) or [float("nan")]
    print("%s%s: posix wrote %s B, %d B in %d files of the job; %d events, %d dropped, %s lost "
          "of %d produced; stopped %.2f-%.2f s, %d fio processes ended %.2f-%.2f s (stop "
          "covered the exits: %s); %d spool files; without one: %d fio processes, %d forked"
          % (name, " (as %s)" % user.pw_name if user else " (as root)",
             live["layers"].get("posix", {}).get("write_bytes"),
             sum(f["write_bytes"] for f in mine), len(mine), mon["events"], mon["dropped"],
             mon.get("lost"), mon["produced"], saw["stop"], saw["resumed"], len(saw["seen"]),
             ends[0], ends[-1], "no" if covered(saw) else "yes", len(saw["spooled"]),
             len(unspooled), sum(unspooled)), flush=True)


def check_bytes(name, data, live):
    on_disk = [os.path.join(r, n) for r, _, ns in os.walk(data) for n in ns]
    if len(on_disk) != RANKS * FILES or any(os.path.getsize(f) != SIZE for f in on_disk):
        fail("%s: fio made %d files (want %d of %d bytes)" % (name, len(on_disk), RANKS * FILES,
                                                               SIZE))
    # the rank directories (mkdir, fio's stat) are paths of the job too
    mine = {f["path"]: f for f in live["files"] if f["path"].startswith(data + "/")
            and f["layer"] == "posix" and not os.path.isdir(f["path"])}
    missing = sorted(set(on_disk) - set(mine))
    if missing:
        fail("%s: %d of the %d files are not in the summary (e.g. %s): their writes never "
             "reached the collector; monitor %s"
             % (name, len(missing), len(on_disk), missing[0], live["monitor"]))
    bad = [(p, f["write_bytes"]) for p, f in sorted(mine.items()) if f["write_bytes"] != SIZE]
    if bad:
        fail("%s: %d files whose summary bytes are not %d: %s"
             % (name, len(bad), SIZE, bad[:3]))
    want = RANKS * FILES * SIZE
    got = sum(f["write_bytes"] for f in mine.values())
    posix = live["layers"].get("posix", {})
    if got != want or posix.get("write_bytes") != want:
        fail("%s: the files' POSIX writes sum to %d, the layer %s; fio wrote %d"
             % (name, got, posix.get("write_bytes"), want))
    return got


def check_monitor(name, mon, text):
    if "lost" not in mon:
        fail("%s: the summary's monitor has no lost count: %s" % (name, mon))
    if mon["rejected_frames"] or mon["lost"] < 0 or \
            mon["produced"] != mon["events"] + mon["dropped"] + mon["lost"]:
        fail("%s: monitor: %r (want produced = events + dropped + lost, none rejected)"
             % (name, mon))
    lines = WARNING.findall(text)
    if mon["lost"]:
        if lines != [(str(mon["lost"]), str(mon["produced"]))]:
            fail("%s: %d calls lost of %d, the text summary's WARNING lines say %s"
                 % (name, mon["lost"], mon["produced"], lines))
    elif lines:
        fail("%s: nothing lost, yet the text summary warns %s" % (name, lines))
    # every call arrives: the frames each process sent lately are kept and
    # spooled too (this job sends ~70 KB a process while the collector is
    # stopped, within the 256 KiB kept); before they were, 6 300-7 600 of
    # the 9 636 calls of --thread runs were lost (their totals whole)
    if mon["lost"]:
        fail("%s: %d of the %d calls recorded never reached the collector"
             % (name, mon["lost"], mon["produced"]))


def run_and_check(args, name, mode, stop, tmp, user):
    for attempt in range(1, ATTEMPTS + 1):
        got = stalled_run(args, "%s#%d" % (name, attempt), mode, stop, tmp, user)
        if got is None:  # not stopped at all: the machine's timing
            why = "the job did not reach the stop point"
            if attempt < ATTEMPTS:
                print("%s: %s: again" % (name, why))
            continue
        data, live, text, saw = got
        figures(name, data, live, saw, user)
        why = covered(saw)
        if not why:
            break
        # the machine's timing, not iopulse: once more, then fail saying so
        if attempt < ATTEMPTS:
            print("%s: the stop did not cover the ranks' exits (%s): again" % (name, why))
    else:
        fail("%s: in %d runs the stop did not cover the ranks' exits (%s): the case was not "
             "made" % (name, ATTEMPTS, why))
    check_bytes(name, data, live)
    check_monitor(name, live["monitor"], text)
    # the nanomsg sender, stopped over its exit: no acknowledgement came
    if mode == "thread" and not saw["spooled"]:
        fail("%s: no spool file while the collector was stopped over the ranks' exits" % name)
    if [d for d in saw["leftover"] if d.startswith("iopulse-")]:
        fail("%s: the runtime directory is left in TMPDIR: %s" % (name, saw["leftover"]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iopulse", required=True)
    ap.add_argument("--mpirun", required=True)
    ap.add_argument("--mode", choices=("thread", "fork"), action="append")
    ap.add_argument("--stop", choices=("start", "io"), action="append")
    args = ap.parse_args()
    args.iopulse = os.path.abspath(args.iopulse)
    if not shutil.which("fio"):
        fail("fio is not installed (scripts/install-deps installs it)")
    user = ordinary_user(args.iopulse, make=USER)
    tmp = tempfile.mkdtemp(prefix="iop-stall-")
    if user:
        os.chown(tmp, user.pw_uid, user.pw_gid)
    failed = []
    try:
        for mode in args.mode or ["thread", "fork"]:
            for stop in args.stop or ["start", "io"]:
                name = "%s/%s" % (mode, stop)
                # each run to its end, its FAIL line said: which of them fail tells
                try:
                    run_and_check(args, name, mode, stop, tmp, user)
                except SystemExit:
                    failed.append(name)
    finally:
        if not os.environ.get("KEEP_TMP"):
            shutil.rmtree(tmp, ignore_errors=True)
    if failed:
        fail("%d of the runs failed: %s" % (len(failed), ", ".join(failed)))
    print("PASS")


if __name__ == "__main__":
    main()
