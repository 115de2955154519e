#!/usr/bin/python3
"""Lock waits under `iopulse run`: a rank's time blocked on a file lock is
recorded, as a "lock" call of the POSIX layer's meta class, on its file.

    lock_wait.py --iopulse IOPULSE --mpirun LAUNCHER -- PROGRAM [ARGS...]

Runs `iopulse run --headless --summary-json S --record R --record-events
--record-detail full -- LAUNCHER -n 2 PROGRAM ARGS -d DIR` (PROGRAM:
tests/locks/lock_wait.c: rank 0 holds an fcntl F_SETLKW lock, then a
flock, then an F_OFD_SETLKW lock, each on a file of its own, while rank 1
waits for it and measures its wait with CLOCK_MONOTONIC), exports R as a
Chrome trace (every event) and as JSON lines (rows per tick), and checks:

  1. iopulse exited 0 and both ranks printed their line;
  2. events (chrome export): on each lock file, each rank made exactly 2
     calls named "lock" (take, release), in the "posix" category; rank
     1's take lasted what it measured, within 5 %; rank 0's takes (no
     one held the lock) and every release take under a quarter of it; rank 1's statfs and
     fstatfs of the fcntl file are 2 calls named "statfs" there;
  3. rows (jsonl export): rank 1's POSIX meta time over the ticks equals
     its POSIX meta events' time (within 1 % + 2 ms), and is at least 95 %
     of its measured waits; each lock file's POSIX meta row holds at
     least 95 % of the wait on it; the POSIX layer's meta rows too;
  4. summary: rank 1's I/O time (io_time_s: the summary has no per-rank
     layers) and the POSIX layer's time are at least 95 % of its measured
     waits; nothing dropped or rejected (so the events are all the calls).

With an iopulse whose shim does not record lock calls, 2 fails: no "lock"
call on the files. Standard library only, for Debian's /usr/bin/python3.
Exit status: 0 pass, 1 fail, 2 bad usage.
"""

import collections
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "run-e2e"))
from e2e_common import check_monitor, fail, iopulse_job, job_args, job_env  # noqa: E402

TIMEOUT_S = 90
RANKS = 2
TOLERANCE = 0.05  # recorded lock wait vs the rank's own measure
SHORT = 0.25      # an uncontended lock or unlock: under a quarter of the wait
META_OPS = {"open", "create", "close", "seek", "tell", "sync", "stat", "truncate", "unlink",
            "rename", "mkdir", "rmdir", "access", "dup", "mmap", "set_view", "meta", "lock",
            "statfs"}


def run(args, tmp):
    data = os.path.join(tmp, "data")
    summary = os.path.join(tmp, "summary.json")
    rec = os.path.join(tmp, "rec.iop")
    p = iopulse_job(args, ["--headless", "--summary-json", summary, "--record", rec,
                           "--record-events", "--record-detail", "full"], RANKS,
                    args.program + ["-d", data], job_env(tmp), TIMEOUT_S)
    lines = [json.loads(line.split(" ", 1)[1]) for line in p.stdout.splitlines()
             if line.startswith("lock-wait ")]
    if sorted(t["rank"] for t in lines) != list(range(RANKS)):
        fail("lines from ranks %s, expected one from each of %d"
             % (sorted(t["rank"] for t in lines), RANKS))
    truth = {t["rank"]: t for t in lines}
    exports = {}
    for fmt in ("chrome", "jsonl"):
        out = os.path.join(tmp, "export." + fmt)
        e = subprocess.run([args.iopulse, "export", rec, "--format", fmt, "-o", out],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=TIMEOUT_S)
        if e.returncode != 0:
            fail("iopulse export --format %s exited %d: %s" % (fmt, e.returncode, e.stderr))
        with open(out) as f:
            exports[fmt] = json.load(f) if fmt == "chrome" else [json.loads(x) for x in f]
    with open(summary) as f:
        return truth, json.load(f), exports


def slices(chrome):
    """The calls of the chrome export: (rank, op, layer, file, seconds)."""
    events = chrome["traceEvents"] if isinstance(chrome, dict) else chrome
    return [(e["pid"], e["name"], e["cat"], e["args"].get("file"), e["dur"] / 1e6)
            for e in events if e.get("ph") == "X"]


def check_events(truth, calls):
    waited = {}
    for w in truth[1]["waits"]:
        path, want = w["path"], w["blocked_s"]
        on_file = [c for c in calls if c[3] == path]
        for rank in range(RANKS):
            locks = sorted(c[4] for c in on_file if c[0] == rank and c[1] == "lock")
            if len(locks) != 2:
                ops = sorted(set(c[1] for c in on_file if c[0] == rank))
                fail("%s: rank %d made %d calls named \"lock\" on %s, expected 2 (take, "
                     "release); its calls there: %s" % (w["kind"], rank, len(locks), path, ops))
            cats = set(c[2] for c in on_file if c[1] == "lock")
            if cats != {"posix"}:
                fail("%s: lock calls in categories %s, expected posix" % (w["kind"], cats))
            if locks[0] >= SHORT * want:
                fail("%s: rank %d's release (or uncontended take) took %.3f s"
                     % (w["kind"], rank, locks[0]))
            if rank == 0 and locks[1] >= SHORT * want:
                fail("%s: rank 0's uncontended take took %.3f s" % (w["kind"], locks[1]))
        got = max(c[4] for c in on_file if c[0] == 1 and c[1] == "lock")
        if abs(got - want) > TOLERANCE * want:
            fail("%s: rank 1 measured %.6f s blocked, iopulse recorded %.6f s (%+.2f %%)"
                 % (w["kind"], want, got, 100 * (got / want - 1)))
        print("ok: %s: rank 1 blocked %.6f s (its own clock), recorded lock call %.6f s "
              "(%+.3f %%)" % (w["kind"], want, got, 100 * (got / want - 1)))
        waited[path] = want
        if w["kind"] == "fcntl":
            n = sum(1 for c in on_file if c[0] == 1 and c[1] == "statfs")
            if n != 2:
                fail("rank 1 made %d calls named \"statfs\" on %s, expected 2" % (n, path))
            print("ok: statfs and fstatfs of %s: 2 calls named \"statfs\"" % path)
    return waited


def check_rows(rows, calls, waited):
    meta = collections.Counter()
    for r in rows:
        if r.get("type") != "tick_row" or r["layer"] != "posix" or r["class"] != "meta":
            continue
        key = (r["kind"], r.get("rank"), r.get("file"))
        meta[key] += r["time_s"]
    total = sum(waited.values())
    rank1 = meta[("rank", 1, None)]
    events = sum(c[4] for c in calls if c[0] == 1 and c[2] == "posix" and c[1] in META_OPS)
    if abs(rank1 - events) > 0.01 * events + 0.002:
        fail("rank 1's posix meta rows hold %.6f s, its posix meta events %.6f s"
             % (rank1, events))
    if rank1 < (1 - TOLERANCE) * total:
        fail("rank 1's posix meta rows hold %.6f s; it waited %.6f s on locks" % (rank1, total))
    print("ok: rank 1's posix meta rows: %.6f s = its meta events' %.6f s >= its lock waits "
          "%.6f s" % (rank1, events, total))
    for path, want in sorted(waited.items()):
        got = meta[("file", None, path)]
        if got < (1 - TOLERANCE) * want:
            fail("%s: posix meta rows hold %.6f s, rank 1 waited %.6f s there"
                 % (path, got, want))
        print("ok: %s: posix meta rows %.6f s >= rank 1's wait %.6f s" % (path, got, want))
    layer = meta[("layer", None, None)]
    if layer < rank1:
        fail("the posix layer's meta rows hold %.6f s, rank 1's alone %.6f s" % (layer, rank1))
    print("ok: the posix layer's meta rows: %.6f s" % layer)


def check_summary(summary, waited):
    """The summary's ranks have their I/O time (io_time_s, exclusive), not
    per layer: rank 1's holds its waits, and so does the posix layer."""
    total = sum(waited.values())
    ranks = {r["rank"]: r for r in summary["ranks"]}
    io = ranks[1]["io_time_s"]
    if io < (1 - TOLERANCE) * total:
        fail("summary: rank 1's io_time_s is %.6f s; it waited %.6f s on locks" % (io, total))
    posix = summary["layers"]["posix"]["time_s"]
    if posix < (1 - TOLERANCE) * total:
        fail("summary: the posix layer's time is %.6f s; rank 1 waited %.6f s on locks"
             % (posix, total))
    print("ok: summary: rank 1's io_time_s %.6f s, the posix layer's time %.6f s >= rank 1's "
          "lock waits %.6f s" % (io, posix, total))
    check_monitor(summary["monitor"], dropped_ok=False)


def main():
    args = job_args(__doc__)
    with tempfile.TemporaryDirectory(prefix="iop-locks-") as tmp:
        tmp = os.path.realpath(tmp)
        truth, summary, exports = run(args, tmp)
        calls = slices(exports["chrome"])
        waited = check_events(truth, calls)
        check_rows(exports["jsonl"], calls, waited)
        check_summary(summary, waited)
    print("PASS")


if __name__ == "__main__":
    main()
