#!/usr/bin/python3
"""`iopulse replay` in the dashboard, end to end: a real job (fpp, 4 ranks,
rank 2 slowed by the fault-injection preload) recorded headless, then the
real binary replaying it in a tmux pane (120x40), driven with send-keys and
read with capture-pane (Pane from tmux_test.py).

    replay_tmux_test.py --iopulse IOPULSE --mpirun LAUNCHER --fault LIBIOPFAULT --fpp FPP

Checks, each by polling the screen with a bounded timeout:
  the badge (REPLAY 1x) and ranks 4 while it plays; Space pauses (PAUSED)
  and plays on; r pauses at the first tick, Z the last; left steps one tick
  back; b 50% lands between them; [ and ] clamp to the ends of a short
  recording; n goes to the straggler alert's start with its notice, N
  finds none earlier; + + - 0 set the badge to 4x, 8x... and back; played
  at 8x from the start, the recording ends in well under its span and no
  sooner than an eighth of it; S at the end saves a view whose per-rank
  bytes equal the live summary's (read + write) and whose tick is the
  last; S after b 50% saves that tick; a truncated copy replays and says
  TRUNCATED at; q exits 0. A recording of mpi-checkpoint (collective
  buffering): the aggregator's row says AGG, the others' do not, and
  BYTES per rank is each rank's MPI-IO bytes. The default recording of a
  steady 12 s job with rank 2 slowed: at b 50% rank 2's write rate is above 0
  and below its peers', and the heatmap (H) flags its row; M cycles its
  metric through p99, io pressure and device busy (the node figures: the
  same cells for the four ranks of one node) back to throughput; the
  header's nodes line names this host's busiest device and pressure.
Standard library only. Exit status: 0 pass, 1 fail.
"""
import glob
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tmux_test import Fail, row_of, shown_time, tmux_main  # noqa: E402


def record(args, tmp):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               IOPFAULT_RANK="2", IOPFAULT_DELAY_US="1000")
    rec, summary = os.path.join(tmp, "job.iop"), os.path.join(tmp, "live.json")
    launcher = [args.mpirun, "-n", "4"]
    if "mpich" not in os.path.basename(args.mpirun):
        launcher.insert(1, "--oversubscribe")
    os.mkdir(os.path.join(tmp, "data"))
    p = subprocess.run([args.iopulse, "run", "--headless", "--record", rec, "--summary-json",
                        summary, "--also-preload", args.fault, "--"] + launcher +
                       [args.fpp, "-n", "3000", "-s", "4096", "-d", os.path.join(tmp, "data")],
                       env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=120)
    if p.returncode != 0:
        raise Fail("recording the job: exit %d: %s" % (p.returncode, p.stderr[-2000:]))
    with open(summary) as f:
        return rec, json.load(f)


def start(args, tmp, pane, rec, name):
    env = {"HOME": tmp, "TMPDIR": tmp, "IOPULSE_SAVE_DIR": tmp, "TERM": "screen",
           "LANG": "C.UTF-8"}
    for k in ("LD_PRELOAD", "ASAN_OPTIONS", "UBSAN_OPTIONS", "IOP_SANITIZED"):
        if k in os.environ:
            env[k] = os.environ[k]
    shell = "env %s %s replay %s; echo IOPULSE-EXIT=$?; sleep 600" % (
        " ".join("%s=%s" % (k, shlex.quote(v)) for k, v in env.items()),
        shlex.quote(args.iopulse), shlex.quote(rec))
    pane.tmux("new-session", "-d", "-s", name, "-x", "120", "-y", "40", "-c", tmp, shell)


def secs(hms):
    h, m, s = (int(x) for x in hms.split(":"))
    return h * 3600 + m * 60 + s


def settled_time(pane, what):
    """The time shown once a key's move has taken effect: the same in
    samples over a second (a loaded machine redraws late; reading the time
    at once could give the one from before the key)."""
    seen = []

    def settled(s):
        seen.append(shown_time(s))
        return len(seen) >= 5 and len(set(seen[-5:])) == 1
    pane.wait(what, settled)
    return seen[-1]


def half_way(pane, first, last):
    """r, then b 50%: the time shown there once settled. From the first
    tick, so that the screen before b 50% takes effect cannot pass for it
    (CI once read that time and then saved the 50% tick, 4 before the end)."""
    pane.keys("r")
    pane.wait("rewound", lambda s: shown_time(s) == first)
    pane.keys("b")
    pane.keys("50%", "Enter")
    pane.wait("50%", lambda s: secs(first) < secs(shown_time(s)) < secs(last))
    return settled_time(pane, "50% settled")


def save(pane, tmp):
    """S, then the saved view's JSON."""
    before = set(glob.glob(os.path.join(tmp, "iopulse-*.json")))
    pane.keys("S")
    # the files, not the notice: an earlier save's "saved ..." may still be
    # on screen when this one has not been written yet (seen under ASan)
    pane.wait("a new saved view", lambda s: "saved " in s and
              set(glob.glob(os.path.join(tmp, "iopulse-*.json"))) - before)
    new = set(glob.glob(os.path.join(tmp, "iopulse-*.json"))) - before
    if len(new) != 1:
        raise Fail("S saved %d JSON files" % len(new))
    with open(new.pop()) as f:
        return json.load(f)


def run(args, tmp, pane):
    rec, live = record(args, tmp)
    start(args, tmp, pane, rec, "t")
    s = pane.wait("the badge and 4 ranks", lambda s: "REPLAY 1x" in s and "ranks 4" in s)

    pane.keys("Space")
    pane.wait_text("PAUSED")
    pane.keys("Space")
    pane.wait_text("REPLAY 1x")  # playing again
    # r pauses too: from a playing screen, so that the one before r takes
    # effect cannot pass for the first tick (paused and still, it could be
    # read as settled when a loaded machine redraws late)
    pane.keys("r")
    pane.wait_text("PAUSED")
    first = settled_time(pane, "the first tick")
    pane.keys("Z")
    pane.wait("a later tick", lambda s: secs(shown_time(s)) > secs(first))
    last = settled_time(pane, "the last tick")
    if secs(last) - secs(first) < 3:
        raise Fail("recording spans %s to %s only" % (first, last))
    end = save(pane, tmp)
    if end["view"] != "ranks":
        raise Fail("saved view %r" % end["view"])
    want = {r["rank"]: r["read_bytes"] + r["write_bytes"] for r in live["ranks"]}
    got = {r["rank"]: r["bytes"] for r in end["rows"]}
    if got != want:
        raise Fail("bytes per rank at the end %s, live summary %s" % (got, want))
    print("end: view's bytes per rank equal the live summary's: %s" % got)

    pane.keys("Left")
    pane.wait("one tick back", lambda s: secs(shown_time(s)) == secs(last) - 1)
    mid = half_way(pane, first, last)  # not the tick one back: from the first
    view = save(pane, tmp)
    back = end["tick"] - view["tick"]  # 1 s ticks
    if view["view"] != "ranks" or abs(back - (secs(last) - secs(mid))) > 1:
        raise Fail("saved at 50%%: tick %s, %d before the end's, shown %s to %s"
                   % (view["tick"], back, mid, last))
    pane.keys("[")
    pane.wait("[ to the start", lambda s: shown_time(s) == first)
    pane.keys("]")
    pane.wait("] to the end", lambda s: shown_time(s) == last)
    print("seek: r %s, Z %s, b 50%% %s, left, [ ] clamp" % (first, last, mid))

    # alerts: from the start, n lands on the straggler
    pane.keys("r")
    pane.wait("rewound", lambda s: shown_time(s) == first)
    # another alert may start before it on a loaded machine (a small_io
    # while the ranks start): n moves on, forward, until the straggler
    at = first
    for _ in range(6):
        pane.keys("n")
        s = pane.wait("the next alert", lambda s: shown_time(s) != at
                      and ("CRIT " in s.splitlines()[-1] or "WARN " in s.splitlines()[-1]))
        if secs(shown_time(s)) <= secs(at):
            raise Fail("n went back: from %s to %s" % (at, shown_time(s)))
        at = shown_time(s)
        if "straggler" in s.splitlines()[-1]:
            break
    else:
        raise Fail("n did not reach the straggler in 6 alerts")
    if not secs(first) < secs(at) <= secs(last) or not row_of(s, 2).startswith(("CRIT", "WARN")):
        raise Fail("n: at %s, rank 2's row %r" % (at, row_of(s, 2)))
    pane.keys("r")
    pane.wait("rewound", lambda s: shown_time(s) == first)
    pane.keys("N")
    pane.wait_text("no earlier alert")
    print("alerts: n goes to the straggler at %s, rank 2 flagged" % at)

    # speed: the badge, then a timed play from the start at 8x
    pane.keys("Space")
    pane.wait_text("REPLAY 1x")
    for k, badge in (("+", "REPLAY 2x"), ("+", "REPLAY 4x"), ("-", "REPLAY 2x"),
                     ("0", "REPLAY 1x"), ("+", "REPLAY 2x"), ("+", "REPLAY 4x"),
                     ("+", "REPLAY 8x")):
        pane.keys(k)
        pane.wait_text(badge)
    pane.keys("r")
    pane.wait("rewound", lambda s: shown_time(s) == first and "PAUSED" in s)
    t0 = time.monotonic()
    pane.keys("Space")
    pane.wait("the end at 8x", lambda s: shown_time(s) == last and "REPLAY 8x" in s)
    took = time.monotonic() - t0
    span = secs(last) - secs(first)
    if not (span - 1) / 8 * 0.8 <= took < span * 0.75:
        raise Fail("8x played a %d s recording in %.2f s" % (span, took))
    print("speed: badges 2x 4x 2x 1x ... 8x; %d s played in %.2f s at 8x" % (span, took))

    pane.keys("q")
    pane.wait_text("IOPULSE-EXIT=0")

    # a truncated copy
    with open(rec, "rb") as f:
        data = f.read()
    cut = os.path.join(tmp, "cut.iop")
    with open(cut, "wb") as f:
        f.write(data[:len(data) * 3 // 4])
    pane.tmux("kill-session", "-t", "t", check=False)
    start(args, tmp, pane, cut, "t")
    s = pane.wait_text("TRUNCATED at")
    print("truncated: %s" % [l for l in s.splitlines() if "TRUNCATED" in l][0].strip())
    pane.keys("q")
    pane.wait_text("IOPULSE-EXIT=0")
    pane.tmux("kill-session", "-t", "t", check=False)
    aggregators(args, tmp, pane)
    pane.tmux("kill-session", "-t", "t", check=False)
    straggler_default(args, tmp, pane)


def straggler_default(args, tmp, pane):
    """The default recording (view) of a steady 12 s job whose rank 2 is
    slowed (25 ms more a write at 100 writes a second): at 50% its row
    shows a write rate above 0 and below its peers' (a lean recording
    showed 0 B/s there), and the heatmap flags its row and not rank 0's."""
    data = os.path.join(tmp, "steady")
    os.mkdir(data)
    rec = os.path.join(tmp, "steady.iop")
    launcher = [args.mpirun, "-n", "4"]
    if "mpich" not in os.path.basename(args.mpirun):
        launcher.insert(1, "--oversubscribe")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               IOPFAULT_RANK="2", IOPFAULT_DELAY_US="25000")
    prog = os.path.join(os.path.dirname(args.fpp), "steady")
    p = subprocess.run([args.iopulse, "run", "--headless", "--record", rec,
                        "--also-preload", args.fault, "--"] + launcher +
                       [prog, "-T", "12", "-n", "100", "-s", "65536", "-d", data], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
    if p.returncode != 0 or "straggler rank 2" not in p.stderr:
        raise Fail("recording steady: exit %d, no straggler on rank 2 live: %s"
                   % (p.returncode, p.stderr[-2000:]))
    start(args, tmp, pane, rec, "t")
    pane.wait("the badge and 4 ranks", lambda s: "REPLAY" in s and "ranks 4" in s)
    # Z first: the whole recording read, so that 50% is of its whole span
    # (a CI run under load pressed b 50% while the replay was still
    # reading, and landed in the ticks before the ranks' first writes)
    pane.keys("r")
    first = settled_time(pane, "the first tick")
    pane.keys("Z")
    pane.wait("a later tick", lambda s: secs(shown_time(s)) > secs(first))
    last = settled_time(pane, "the last tick")
    mid = half_way(pane, first, last)
    view = save(pane, tmp)
    rate = {r["rank"]: r["write_Bps"] for r in view["rows"]}
    peers = [rate[r] for r in (0, 1, 3)]
    if not 0 < rate[2] < 0.8 * min(peers):
        raise Fail("at 50%% (%s, of %s to %s): write rates per rank %s; want rank 2's above 0 "
                   "and below its peers'" % (mid, first, last, rate))
    pane.keys("H")
    s = pane.wait("heatmap", lambda s: "heatmap throughput" in s and row_of(s, 2)
                  and "!" in row_of(s, 2)[14:])
    if "!" in row_of(s, 0)[14:]:
        raise Fail("the heatmap flags a healthy rank:\n" + s)
    # M cycles the metrics; the node ones show each rank its node's
    # figures, so the four ranks of this one node have the same cells
    # (and, not being about a rank, rank 2's alert flags none of them)
    pane.keys("M")
    pane.wait("the p99 heatmap", lambda s: "heatmap p99" in s)
    for metric in ("io pressure", "device busy"):
        pane.keys("M")
        s = pane.wait("the %s heatmap" % metric,
                      lambda s: "heatmap %s" % metric in s and "full = 100%" in s
                      and all(row_of(s, r) for r in range(4)))
        cells = [row_of(s, r)[14:] for r in range(4)]
        if len(set(cells)) != 1 or "!" in cells[0]:
            raise Fail("%s: the ranks of one node show different cells:\n%s" % (metric, s))
    pane.keys("M")
    s = pane.wait("throughput again", lambda s: "heatmap throughput" in s)
    # the recording carries the node's samples: the header's nodes line
    # names this host's busiest device and its I/O pressure
    host = os.uname().nodename
    if not re.search(r"(?m)^ nodes  busiest \S+ \d+%% \(%s\)  io pressure \d+%% \(%s\)"
                     % (re.escape(host), re.escape(host)), s):
        raise Fail("no nodes line for %s in the replay:\n%s" % (host, s))
    print("default recording at 50%% (%s): rank 2 writes %.1f MiB/s, its peers %s; "
          "the heatmap flags its row" % (mid, rate[2] / 2**20,
                                         ["%.1f" % (x / 2**20) for x in peers]))
    pane.keys("q")
    pane.wait_text("IOPULSE-EXIT=0")


def aggregators(args, tmp, pane):
    """Collective buffering (mpi-checkpoint, beside fpp): rank 0 does every
    rank's POSIX writes. Its row says AGG and the others' do not, and the
    view's BYTES per rank (every layer in scope) is what each rank moved
    through MPI-IO, not the file-system bytes the summary's read_bytes
    and write_bytes count (all rank 0's)."""
    data = os.path.join(tmp, "ckpt")
    os.mkdir(data)
    rec, live = os.path.join(tmp, "ckpt.iop"), os.path.join(tmp, "ckpt.json")
    launcher = [args.mpirun, "-n", "4"]
    if "mpich" not in os.path.basename(args.mpirun):
        launcher.insert(1, "--oversubscribe")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    prog = os.path.join(os.path.dirname(args.fpp), "mpi-checkpoint")
    p = subprocess.run([args.iopulse, "run", "--headless", "--record", rec, "--summary-json",
                        live, "--"] + launcher + [prog, "-d", data], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
    if p.returncode != 0:
        raise Fail("recording mpi-checkpoint: exit %d: %s" % (p.returncode, p.stderr[-2000:]))
    with open(live) as f:
        ranks = {r["rank"]: r for r in json.load(f)["ranks"]}
    agg = sorted(r for r in ranks if ranks[r]["aggregator"])
    if not agg or len(agg) == len(ranks):
        raise Fail("aggregators %s of ranks %s: no collective buffering to show" % (agg, sorted(ranks)))
    start(args, tmp, pane, rec, "t")
    pane.wait("the badge and 4 ranks", lambda s: "REPLAY" in s and "ranks 4" in s)
    pane.keys("Z")
    # the rows are there, zero, before the replay has read to the end: wait
    # for the flags (the wait fails with the screen when they never come)
    def flags_right(s):
        rows = {r: row_of(s, r) for r in ranks}
        return all(rows.values()) and all(rows[r].startswith("AGG") == (r in agg) for r in ranks)
    pane.wait("AGG on ranks %s alone" % agg, flags_right)
    settled_time(pane, "the last tick")
    view = save(pane, tmp)
    want = {r: ranks[r]["layers"]["mpiio"]["read_bytes"] + ranks[r]["layers"]["mpiio"]["write_bytes"]
            for r in ranks}
    got = {row["rank"]: row["bytes"] for row in view["rows"]}
    if got != want:
        raise Fail("BYTES per rank %s, their MPI-IO bytes %s" % (got, want))
    print("aggregators: %s flagged AGG; BYTES per rank = MPI-IO bytes %s" % (agg, got))
    pane.keys("q")
    pane.wait_text("IOPULSE-EXIT=0")


def main():
    return tmux_main(run, "replay_tmux_test")


if __name__ == "__main__":
    sys.exit(main())
