#!/usr/bin/python3
"""Variability alerts, live and on time: a real job (examples/steady, ranks
writing at a steady pace) under `iopulse run --headless`, with a fault
below the shim (tests/fault/libiopfault.so) that starts and stops while the
job runs. Each case names the alerts the fault must raise; for each:

  1. it starts on the right subject (rank, file, or layer and class),
     within 3 ticks of the fault: the alert's tick (its "t", the tick's end)
     is less than 4 ticks after the moment the fault began, as the fault
     library reports it (IOPFAULT_VERBOSE: "fault window opens at T"; for
     hung_io, the moment the hanging call's age reached the rule's warn
     threshold, 10 s);
  2. it ends after the fault ended (its "end" record is later than the
     first call the fault left alone, or than the hung call's return), and
     not long after (within 12 ticks);
  3. it is in the summary, and no alert of its kind fired on another subject
     before the fault began;
  4. the byte counts are still exact: the summary's per-file totals equal
     the ranks' truth lines.

    alert_timing.py --iopulse IOPULSE --mpirun LAUNCHER --fault LIBIOPFAULT
                    --steady STEADY CASE

Cases: slow_file, collapse, hang, slow_rank (see CASES). Standard library
only, for Debian's /usr/bin/python3. Exit status: 0 pass, 1 fail, 2 usage.
"""

import argparse
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_common import fail, launcher_cmd  # noqa: E402

TICK_S = 1.0          # iopulse run's default tick
WITHIN_TICKS = 4      # the alert's tick end - fault start < this: within 3 ticks
END_WITHIN_TICKS = 12
TIMEOUT_S = 150
HUNG_WARN_S = 10.0    # hung_io's default warn threshold

# Each case: ranks, steady's arguments, the fault's variables, and the
# alerts expected: (kind, subject, words its message must hold), subject one
# of rank=N, file=NAME (the file's base name), layer=LAYER, job. A fault
# begins 12 s into the ranks' writing: latency_spike's baseline is the 90th
# percentile of the p99s before it, with fewer than ten of them their
# largest, and one loaded tick among 6-8 hid the fault's spike (ASan, load
# 6 and three jobs at once: 'latency_spike on file=steady.2 never started').
STEADY = ["-s", "1048576", "-n", "200", "-f", "16777216"]
CASES = {
    # One rank's file slows down (file-per-process: that rank too), 40 ms a
    # call: well above the p99 a loaded 2-core machine gives healthy calls,
    # and still 25 calls a tick, over latency_spike's min_ops.
    "slow_file": dict(ranks=3, seconds=24, fault={
        "IOPFAULT_FILE": "*/steady.2", "IOPFAULT_DELAY_US": "40000",
        "IOPFAULT_AFTER_S": "12", "IOPFAULT_UNTIL_S": "18"},
        expect=[("straggler", "rank=2", "rank 2 posix write"),
                ("latency_spike", "file=steady.2", "posix write p99")]),
    # Every call of every rank gets 50 ms slower for 6 s (20 ms was 5-14x a
    # p99 baseline of 1.5-4 ms, and once too little for the 5x warn level).
    "collapse": dict(ranks=2, seconds=24, fault={
        "IOPFAULT_DELAY_US": "50000", "IOPFAULT_AFTER_S": "12", "IOPFAULT_UNTIL_S": "18"},
        expect=[("throughput_drop", "layer=posix", "posix write"),
                ("latency_spike", "layer=posix", "posix write p99")]),
    # One call of rank 1 hangs for 14 s.
    "hang": dict(ranks=2, seconds=24, fault={
        "IOPFAULT_RANK": "1", "IOPFAULT_HANG": "pwrite", "IOPFAULT_HANG_S": "14",
        "IOPFAULT_AFTER_S": "4"},
        expect=[("hung_io", "rank=1", "rank 1 posix write call in flight")]),
    # Of two ranks that do not wait for each other, one slows down: it is a
    # straggler, and its partner moves far more bytes (imbalance).
    "slow_rank": dict(ranks=2, seconds=24, fault={
        "IOPFAULT_RANK": "1", "IOPFAULT_DELAY_US": "50000",
        "IOPFAULT_AFTER_S": "12", "IOPFAULT_UNTIL_S": "18"},
        expect=[("straggler", "rank=1", "rank 1 posix write"),
                ("imbalance", "job", "rank 0 moved")]),
}



def run(args, case, tmp):
    data = os.path.join("/dev/shm" if os.path.isdir("/dev/shm") else tmp,
                        "iop-alert-timing-%d" % os.getpid())
    summary = os.path.join(tmp, "summary.json")
    alerts = os.path.join(tmp, "alerts.jsonl")
    env = dict(os.environ)
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1", HOME=tmp, TMPDIR=tmp,
               IOPFAULT_VERBOSE="1")
    env.update(case["fault"])  # iopulse run forwards IOPFAULT_* through the launcher
    # Every rank's window counts from its first call on its steady file,
    # not from its library's load nor from the launch: on a loaded machine
    # the ranks started seconds apart (a layer-wide fault was whole only
    # when the last one's window opened), and wrote their first block 5-7 s
    # after the launch, when a fault 8 s after it found the rules with
    # fewer than the 5 baseline samples they judge from (throughput_drop
    # and latency_spike never started). The ranks leave steady's start
    # barrier together.
    env.setdefault("IOPFAULT_FILE", "*/steady.*")
    env["IOPFAULT_EPOCH_S"] = "first"
    cmd = [args.iopulse, "run", "--headless", "--format", "jsonl", "--summary-json", summary,
           "--alerts", alerts, "--also-preload", args.fault, "--"]
    cmd += launcher_cmd(args.mpirun, case["ranks"])
    cmd += [args.steady, "-d", data, "-T", str(case["seconds"])] + STEADY
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                           timeout=TIMEOUT_S, text=True)
    except subprocess.TimeoutExpired as t:
        # what the job said before it stopped answering: which rank, which call
        for part in (t.stdout, t.stderr):
            if part:
                sys.stderr.write(part if isinstance(part, str) else part.decode(errors="replace"))
        fail("iopulse run did not end within %d s" % TIMEOUT_S)
    finally:
        shutil.rmtree(data, ignore_errors=True)
    sys.stderr.write(p.stderr)
    if p.returncode != 0:
        fail("iopulse run exited %d" % p.returncode)
    lines = [json.loads(l) for l in open(alerts).read().splitlines() if l.strip()]
    return p.stdout, p.stderr, json.load(open(summary)), lines


def writes_began(out):
    """The start of the first tick in which the job wrote (seconds since
    the epoch), from the JSON lines' samples; None when none did."""
    for line in out.splitlines():
        o = json.loads(line) if line.startswith('{"v"') else {}
        if o.get("type") == "sample" and o["layers"].get("posix", {}).get("write_ops"):
            return o["t"] - TICK_S
    return None


def fault_times(stderr, case):
    """The fault's start and end (seconds since the epoch) from the fault
    library's lines: the earliest opening and the latest closing over the
    ranks; for a hang, when the rule can first see it and its return."""
    def times(pattern):
        return [float(m) for m in re.findall(pattern, stderr)]
    if "IOPFAULT_HANG" in case["fault"]:
        began, ended = times(r"hangs for [0-9.]+ s .* from ([0-9.]+)"), times(r"returns at ([0-9.]+)")
        if len(began) != 1 or len(ended) != 1:
            fail("expected one hang and its return in the fault library's lines: %s %s"
                 % (began, ended))
        return began[0] + HUNG_WARN_S, ended[0]
    # The fault's effect ends when the last delayed call returns; the
    # library notices the window closed only at the next call, which under
    # load can come much later.
    opens = times(r"fault window opens at ([0-9.]+)")
    returned = times(r"the last faulted call returned at ([0-9.]+)")
    if not opens or not returned:
        fail("the fault library did not report its window (opens %s, last faulted call %s)"
             % (opens, returned))
    return min(opens), max(returned)


def subject_of(a):
    if "file" in a:
        return "file=" + os.path.basename(a["file"])
    if "rank" in a:
        return "rank=%d" % a["rank"]
    if "layer" in a:
        return "layer=" + a["layer"]
    return "job"


def check_alert(kind, subject, words, lines, summary, began, ended):
    mine = [a for a in lines if a["kind"] == kind and subject_of(a) == subject]
    starts = [a for a in mine if a["state"] == "start"]
    ends = [a for a in mine if a["state"] == "end"]
    seen = [(a["kind"], subject_of(a), a["state"], round(a["t"] - began, 1)) for a in lines]
    if not starts:
        fail("%s on %s never started; alerts seen (kind, subject, state, t - fault): %s"
             % (kind, subject, seen))
    first = starts[0]
    late = first["t"] - began
    if late >= WITHIN_TICKS * TICK_S:
        fail("%s on %s started %.2f s after the fault: more than 3 ticks (%s)"
             % (kind, subject, late, first["message"]))
    # A tick is judged whole: the alert may end with the tick in which the
    # last slow call returned (a few slow calls among many), not before it.
    if not ends or ends[-1]["t"] < math.floor(ended / TICK_S) * TICK_S:
        fail("%s on %s ended before the tick in which the fault ended (%.2f): ends %s"
             % (kind, subject, ended, [a["t"] for a in ends]))
    if words not in first["message"]:
        fail("%s on %s: the message %r does not say %r" % (kind, subject, first["message"], words))
    if ends[-1]["t"] - ended > END_WITHIN_TICKS * TICK_S:
        fail("%s on %s ended %.1f s after the fault did" % (kind, subject, ends[-1]["t"] - ended))
    early = [a for a in lines if a["kind"] == kind and a["state"] == "start" and a["t"] < began]
    if early:
        fail("%s fired before the fault: %s" % (kind, [a["message"] for a in early]))
    if not any(a["kind"] == kind and subject_of(a) == subject for a in summary["alerts"]):
        fail("%s on %s is not in the summary's alerts" % (kind, subject))
    print("ok: %s on %s started %.2f s (tick %d) after the fault, ended %.2f s after it: %s"
          % (kind, subject, late, int(late // TICK_S), ends[-1]["t"] - ended, first["message"]))


def check_totals(out, summary):
    truth = [json.loads(l) for l in out.splitlines() if l.startswith('{"example"')]
    got = {(f["path"], f["layer"]): f for f in summary["files"]}
    for t in truth:
        for f in t["files"]:
            g = got.get((f["path"], f["layer"]))
            for k in ("read_bytes", "write_bytes", "read_ops", "write_ops"):
                if g is None or g[k] != f[k]:
                    fail("%s: %s is %s, the program did %d"
                         % (f["path"], k, g and g[k], f[k]))
    if not truth:
        fail("no truth lines from the ranks")
    print("ok: %d ranks' byte counts exact under the fault" % len(truth))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--iopulse", required=True)
    p.add_argument("--mpirun", required=True)
    p.add_argument("--fault", required=True)
    p.add_argument("--steady", required=True)
    p.add_argument("case", choices=sorted(CASES))
    args = p.parse_args()
    case = CASES[args.case]
    tmp = tempfile.mkdtemp(prefix="iop-alert-timing-")
    try:
        out, err, summary, lines = run(args, case, tmp)
        began, ended = fault_times(err, case)
        first = writes_began(out)
        print("the ranks' writes began %s before the fault" %
              ("%.1f s" % (began - first) if first is not None else "(never)"))
        for kind, subject, words in case["expect"]:
            check_alert(kind, subject, words, lines, summary, began, ended)
        check_totals(out, summary)
        print("PASS: %s" % args.case)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
