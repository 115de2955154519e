#!/usr/bin/python3
"""Access patterns under `iopulse run` (docs/alerts.md, random_io and
small_io; pattern.h):

    patterns.py --iopulse IOPULSE --mpirun LAUNCHER --ranks N -- PROGRAM

Runs PROGRAM (tests/patterns/patterns.c) twice under `iopulse run
--headless --summary-json S --alerts A -- LAUNCHER -n N PROGRAM MODE FILE 3`:

  strided  every rank writes interleaved 4 KiB blocks of one shared file
           with MPI_File_write_at for 3 s (a constant forward stride):
           no random_io alert, in A or in the summary;
  random   every rank writes its part of the file, then reads 4 KiB blocks
           at random offsets for 3 s: random_io raised on MPI-IO.

Both times the summary's MPI-IO row of the file has "pattern" counts equal,
exactly, to the sums over ranks of what the program counted itself (its
JSON line per rank), and the monitor lost no event.

Standard library only. Exit status: 0 pass, 1 fail, 2 bad usage.
"""

import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "run-e2e"))
from e2e_common import fail, iopulse_job, job_args, job_env  # noqa: E402

TIMEOUT_S = 120
PATTERNS = ("consecutive", "sequential", "strided", "random")


def run(args, tmp, mode):
    path = os.path.join(tmp, mode + ".dat")
    summary = os.path.join(tmp, mode + ".summary.json")
    alerts = os.path.join(tmp, mode + ".alerts.jsonl")
    p = iopulse_job(args, ["--headless", "--summary-json", summary, "--alerts", alerts],
                    args.ranks, args.program + [mode, path, "3"], job_env(tmp), TIMEOUT_S,
                    what="%s: iopulse run" % mode)
    lines = [json.loads(x) for x in p.stdout.splitlines() if x.startswith('{"patterns"')]
    if sorted(x["rank"] for x in lines) != list(range(args.ranks)):
        fail("%s: lines from ranks %s" % (mode, sorted(x["rank"] for x in lines)))
    want = {k: sum(x[c][k] for x in lines for c in ("read", "write")) for k in PATTERNS}
    s = json.load(open(summary))
    kinds = [json.loads(x)["kind"] for x in open(alerts).read().splitlines() if x.strip()]
    return path, want, s, kinds


def check_counts(mode, path, want, s):
    mon = s["monitor"]
    if mon["dropped"] or mon["rejected_frames"]:
        fail("%s: the monitor lost events (%d dropped, %d rejected frames): counts cannot be "
             "exact" % (mode, mon["dropped"], mon["rejected_frames"]))
    rows = [f for f in s["files"] if f["path"] == path and f["layer"] == "mpiio"]
    if len(rows) != 1:
        fail("%s: the summary has %d mpiio rows for %s" % (mode, len(rows), path))
    got = rows[0].get("pattern")
    if got != want:
        fail("%s: the summary's pattern %s, the program did %s" % (mode, got, want))
    data_ops = rows[0]["read_ops"] + rows[0]["write_ops"]
    if sum(got.values()) != data_ops:
        fail("%s: %d calls in the pattern, %d data calls" % (mode, sum(got.values()), data_ops))
    for f in s["files"]:
        if "pattern" not in f or sorted(f["pattern"]) != sorted(PATTERNS):
            fail("%s: a files entry without its pattern: %s" % (mode, f))
    print("%s: mpiio pattern %s" % (mode, got))


def main():
    args = job_args(__doc__, ranks=4)
    with tempfile.TemporaryDirectory(prefix="iop-patterns-") as tmp:
        path, want, s, kinds = run(args, tmp, "strided")
        check_counts("strided", path, want, s)
        if want["strided"] < 1000 or want["random"]:
            fail("strided: the program did not write strided blocks: %s" % want)
        summary_kinds = [a.get("kind") for a in s["alerts"]]
        if "random_io" in kinds or "random_io" in summary_kinds:
            fail("strided: random_io raised on interleaved strided writes (alerts %s)" % kinds)
        print("strided: alerts %s" % sorted(set(kinds)))
        path, want, s, kinds = run(args, tmp, "random")
        check_counts("random", path, want, s)
        if "random_io" not in kinds:
            fail("random: no random_io on random reads (alerts %s)" % kinds)
        print("random: alerts %s" % sorted(set(kinds)))
    print("patterns: ok")


if __name__ == "__main__":
    main()
