#!/usr/bin/env python3
"""Runs of calls coalesced at the source (docs/wire-format.md, "Run
records"), checked against what really happened.

quantiles: stream_prog (N pwrite calls of one block size, each timed by
  the program itself) under the shim, streaming to the real iop-sink, once
  with coalescing (the default) and once with IOPULSE_COALESCE=0. Checks:
  - with coalescing, nearly every call went in a run record (the sink
    counts the calls it decoded from runs), and the frames took less than
    a third of the bytes a call they take without; without, none did;
  - every call arrived (the sink's POSIX write events and bytes are the
    program's), with the exact offsets of a constant stride (the sink's
    per-file bytes);
  - the p50 and p99 the sink computes from the decoded durations are
    within the histogram's error (1/64) of the program's own figures,
    plus what the program's timing holds and the shim's leaves out (its
    entry and exit, up to 4 % below, and calls preempted there: down to
    the program's quantile 0.5 % of the calls lower), never above: a
    run's durations are rebuilt from its histogram;
  - the program's thread took page faults in fewer than 1 % of its calls
    (the shim's sender puts its ring's pages in ahead: a fault is time the
    program's timing holds and the shim's does not).

hang: a program written by others, dd (4 KiB blocks, file to file), under
  the real `iopulse run`, with tests/fault/libiopfault.so hanging one of
  its writes for 5 s in the middle of its stream (50 ms into it), and
  hung_io's warning lowered to 1 s (--rules). Checks:
  - hung_io starts on rank 0 while the call still hangs (its tick ends
    before the hung call returns);
  - the summary's totals are dd's: every write and read, every byte, 0
    dropped (the calls before the hang were in runs: they reached the
    collector before it, each frame closing its run).

Usage: coalesce_e2e.py --iopulse IOPULSE --shim SHIM --sink SINK
                       --prog STREAM_PROG --fault LIBIOPFAULT CASE
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

TIMEOUT_S = 120
RANK_SLACK = 0.005  # of the calls: how far below the program's quantile the sink's may rank


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def quantile(sorted_v, q):
    """The ceil(q * n)-th smallest (the histogram's definition)."""
    import math
    k = max(1, math.ceil(q * len(sorted_v)))
    return sorted_v[k - 1]


def sink_run(args, tmp, name, env_extra, n, size, stride):
    url = "ipc://%s/%s.ipc" % (tmp, name)
    ready, out = os.path.join(tmp, name + ".ready"), os.path.join(tmp, name + ".json")
    key = os.urandom(16).hex()
    sink = subprocess.Popen([args.sink, "--url", url, "--key", key, "--out", out,
                             "--ready", ready, "--expect-final", "1", "--timeout-s", "60"])
    for _ in range(200):
        if os.path.exists(ready):
            break
        time.sleep(0.05)
    data, durs = os.path.join(tmp, name + ".dat"), os.path.join(tmp, name + ".durs")
    env = dict(os.environ, LD_PRELOAD=args.shim, IOPULSE_ADDR=url, IOPULSE_KEY=key,
               **env_extra)
    if os.environ.get("IOP_SANITIZED"):
        env["LD_PRELOAD"] = os.environ["LD_PRELOAD"] + ":" + args.shim
    p = subprocess.run([args.prog, data, str(n), str(size), str(stride), durs], env=env,
                       check=True, timeout=TIMEOUT_S, stdout=subprocess.PIPE, text=True)
    sink.wait(timeout=TIMEOUT_S)
    report = json.load(open(out))
    truth = sorted(int(l) for l in open(durs))
    faults = int(re.search(r"faults (\d+)", p.stdout).group(1))
    return report, truth, data, faults


def case_quantiles(args, tmp):
    # 1 MiB rewritten in place: ~100-300 us a call, so what the program's
    # timing holds and the shim's does not (the shim's entry and exit, a
    # ring page touched for the first time: 256 KiB calls were 5-10 %
    # apart at p99 in 5 of 15 runs, with runs and without alike) is small
    # beside the histogram's error
    n, size = 3000, 1024 * 1024
    on_per_call = None
    # runs within 1 s ticks, as under `iopulse run`
    tick = {"IOPULSE_TICK_MS": "1000"}
    for name, extra, coalesced in (("on", tick, True),
                                   ("off", dict(tick, IOPULSE_COALESCE="0"), False)):
        rep, truth, data, faults = sink_run(args, tmp, name, extra, n, size, 0)
        # The program's thread's page faults in its loop: each is time its
        # timing holds and the shim's does not (a first touch of a page of
        # the shim's ring, after the call's clock read; 35 pages for 3000
        # calls). The sender puts them in ahead (pmpi-shim/thread.c
        # shim_ring_ahead): with 35 faults, more than 1 % of the calls,
        # the program's p99 was a fault's (921 us against the shim's
        # 397 us on a loaded CI host).
        print("%s: the program's thread took %d page faults in its loop" % (name, faults))
        if faults >= n // 100:
            fail("%s: the program's thread took %d page faults in its %d calls (1 %% or "
                 "more: its p99 holds them); the shim's ring pages are not put in ahead"
                 % (name, faults, n))
        files = {f["path"]: f for f in rep["files"]}
        ev = files.get(data, {}).get("events", {}).get("posix", {}).get("write")
        if not ev or ev["ops"] != n or ev["bytes"] != n * size:
            fail("%s: the sink's events of %s: %s; the program made %d writes, %d bytes"
                 % (name, data, ev, n, n * size))
        share = rep["run_calls"] / rep["events"]
        per_call = rep["wire_bytes"] / rep["events"]
        if coalesced and share < 0.9:
            fail("coalescing on: %.3f of the calls in runs" % share)
        if not coalesced and per_call < 3 * on_per_call:
            fail("%.2f bytes a call with runs, %.2f without: not a third" % (on_per_call, per_call))
        on_per_call = per_call
        if not coalesced and rep["run_calls"]:
            fail("IOPULSE_COALESCE=0: %d calls came in runs" % rep["run_calls"])
        lat = rep["latency"]["posix"]
        # under the sanitizers their pwrite interceptor, ahead of the
        # shim in LD_PRELOAD, checks the 1 MiB buffer outside the shim's
        # timing (8 % of a call's p50 here): the memory checks are that
        # build's point, the timing is the other builds'
        quantiles = () if os.environ.get("IOP_SANITIZED") else ((0.5, "p50_ns"), (0.99, "p99_ns"))
        for q, key in quantiles:
            want = quantile(truth, q)
            got = lat[key]
            # The sink's figure: the middle of its bucket (1/64). The
            # program's: the shim's time plus its entry and exit, and
            # whatever befell the thread there (up to -3.1 % in 24 runs
            # here, with runs and without; a share of CI's loaded cores):
            # a call preempted outside the shim's clock reads is slow to
            # the program only, and a few such calls among the slowest
            # move the program's p99 up by their ranks (on a loaded CI
            # host, with its ring's page faults gone: the shim's p99
            # 647 us, the program's 697, -7.1 %). So the sink's quantile
            # may be the program's up to RANK_SLACK below (15 of 3000
            # calls), never above.
            low = quantile(truth, q - RANK_SLACK)
            at = sum(1 for t in truth if t <= got) / len(truth)
            if not low * (1 - 1 / 64 - 0.04) <= got <= want * (1 + 1 / 64 + 0.005):
                fail("%s: sink %s %d ns, the program's own %d ns: off by %.2f %% (the "
                     "program's p%.1f; its p%.1f is %d ns)"
                     % (name, key, got, want, 100.0 * (got - want) / want, 100 * at,
                        100 * (q - RANK_SLACK), low))
            print("ok: %s: %s %d ns against the program's %d ns (%+.2f %%; the program's "
                  "p%.1f)" % (name, key, got, want, 100.0 * (got - want) / want, 100 * at))
        print("ok: %s: %d calls exact, %.3f of them in runs, %.3f bytes a call on the wire"
              % (name, n, share, per_call))


def case_hang(args, tmp):
    count, bs = 20000, 4096
    in_file, out_file = os.path.join(tmp, "dd.in"), os.path.join(tmp, "dd.out")
    with open(in_file, "wb") as f:
        f.write(b"d" * (count * bs))
    summary, alerts = os.path.join(tmp, "summary.json"), os.path.join(tmp, "alerts.jsonl")
    rules = os.path.join(tmp, "rules.json")
    with open(rules, "w") as f:
        json.dump({"hung_io": {"warn": 1, "crit": 30}}, f)
    env = dict(os.environ, HOME=tmp, TMPDIR=tmp, IOPFAULT_VERBOSE="1",
               IOPFAULT_HANG="write", IOPFAULT_HANG_S="5", IOPFAULT_EPOCH_S="first",
               IOPFAULT_AFTER_S="0.05", IOPFAULT_FILE=out_file)
    cmd = [args.iopulse, "run", "--headless", "--format", "jsonl", "--summary-json", summary,
           "--alerts", alerts, "--rules", rules, "--summary-files", "all",
           "--also-preload", args.fault, "--",
           "dd", "if=" + in_file, "of=" + out_file, "bs=%d" % bs, "count=%d" % count]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                       timeout=TIMEOUT_S, text=True)
    sys.stderr.write(p.stderr)
    if p.returncode != 0:
        fail("iopulse run exited %d" % p.returncode)
    began = [float(m) for m in re.findall(r"hangs for [0-9.]+ s .* from ([0-9.]+)", p.stderr)]
    ended = [float(m) for m in re.findall(r"returns at ([0-9.]+)", p.stderr)]
    if len(began) != 1 or len(ended) != 1:
        fail("expected one hang and its return in the fault library's lines")
    if os.path.getsize(out_file) != count * bs:
        fail("dd wrote %d bytes, not %d" % (os.path.getsize(out_file), count * bs))
    lines = [json.loads(l) for l in open(alerts).read().splitlines() if l.strip()]
    hung = [a for a in lines if a["kind"] == "hung_io" and a["state"] == "start"]
    if not hung:
        fail("no hung_io alert; alerts: %s" % [(a["kind"], a["state"]) for a in lines])
    first = hung[0]
    if first.get("rank") != 0 or "posix write call in flight" not in first["message"]:
        fail("hung_io on the wrong subject: %s" % first)
    if first["t"] > ended[0]:
        fail("hung_io started at %.2f, after the hung call returned at %.2f"
             % (first["t"], ended[0]))
    print("ok: hung_io started %.2f s into the hang, %.2f s before the call returned: %s"
          % (first["t"] - began[0], ended[0] - first["t"], first["message"]))
    s = json.load(open(summary))
    files = {(f["path"], f["layer"]): f for f in s["files"]}
    w = files.get((out_file, "posix"))
    r = files.get((in_file, "posix"))
    if not w or w["write_ops"] != count or w["write_bytes"] != count * bs:
        fail("the summary's %s: %s; dd wrote %d blocks of %d" % (out_file, w, count, bs))
    if not r or r["read_ops"] != count or r["read_bytes"] != count * bs:
        fail("the summary's %s: %s; dd read %d blocks of %d" % (in_file, r, count, bs))
    mon = s["monitor"]
    if mon["dropped"] != 0:
        fail("%d events dropped" % mon["dropped"])
    print("ok: dd's %d writes and %d reads of %d bytes exact in the summary, 0 dropped"
          % (count, count, bs))


def main():
    p = argparse.ArgumentParser()
    for a in ("--iopulse", "--shim", "--sink", "--prog", "--fault"):
        p.add_argument(a, required=True)
    p.add_argument("case", choices=("quantiles", "hang"))
    args = p.parse_args()
    tmp = tempfile.mkdtemp(prefix="iop-coalesce-", dir="/dev/shm" if os.path.isdir("/dev/shm")
                           else None)
    try:
        (case_quantiles if args.case == "quantiles" else case_hang)(args, tmp)
        print("PASS: %s" % args.case)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
