#!/usr/bin/python3
"""Safety tests of libiopulse.so: the shim must never change what a program
sees, hang it or crash it, whatever the program does (signals, fork, exec,
threads, dlopen, I/O before main and at exit) and whatever the collector
does (absent, killed, restarted), and it must count exactly while it runs.

    shim_safety.py TEST --shim libiopulse.so --sink iop-sink --bin-dir DIR
                   [--asan-runtime libasan.so]

TEST is one of the names in TESTS below; ctest runs each as shim_safety_TEST
(tests/shim-safety/CMakeLists.txt). The programs (DIR) check their own
return values and exit 1 on any surprise; this script runs them without the
shim, passively and against a live iop-sink, and checks the sink's report.
Figures are printed whether the test passes or not."""

import argparse
import os
import signal
import sys
import time

from safety_lib import (Fail, Run, Tools, check, counter, describe, file_entry,
                        kill_and_reap, process, values)


# ------------------------------------------------------------ errno table

def test_errno_table(tools, run):
    """Same lines, return values and errno without the shim, passive and
    active; the active run really recorded (probe.dat exactly)."""
    sink = run.start_sink(expect_final=1)
    got = {}
    for mode in ("none", "passive", "active"):
        wd = run.workdir(mode)
        p = run.start([tools.prog("errno_table")], run.env(mode), cwd=wd)
        got[mode] = run.finish(p, 60, f"errno_table ({mode})")[:3]
        rc, out, err = got[mode]
        print(f"{mode}: exit {rc}, {len(out.splitlines())} lines")
        if err.strip():
            print(f"{mode} stderr:\n{err.rstrip()}")
    doc = sink.wait(30)

    rc, base, _ = got["none"]
    check(rc == 0, "errno_table fails even without the shim: its expectations are wrong")
    base_lines = base.splitlines()
    problems = []
    for mode in ("passive", "active"):
        lines = got[mode][1].splitlines()
        diffs = [(i + 1, a, b) for i, (a, b) in enumerate(zip(base_lines, lines)) if a != b]
        for n, a, b in diffs:
            print(f"DIFF {mode} line {n}: without shim '{a}', with shim '{b}'")
        if len(lines) != len(base_lines):
            problems.append(f"{mode}: {len(lines)} lines, {len(base_lines)} without the shim")
        if diffs:
            problems.append(f"{mode}: {len(diffs)} lines differ")
        if got[mode][0] != 0:
            problems.append(f"{mode}: exit status {got[mode][0]}")

    proc = doc["processes"][0] if doc["processes"] else None
    print(f"sink: frames {doc['frames']}, final {doc['final_frames']}, rejected "
          f"{doc['rejected']}, events {proc and proc['stats']}")
    probe = run.path("active", "probe.dat")
    w, m = counter(doc, probe, "posix", "write"), counter(doc, probe, "posix", "meta")
    print(f"probe.dat: posix write {w} (want (7, 700, 0)), meta {m} (want ops 2)")
    if not (len(doc["processes"]) == 1 and proc["final"] and doc["final_frames"] == 1):
        problems.append("the sink did not get exactly one process with its FINAL frame")
    elif proc["stats"]["events"] <= 0:
        problems.append("the active run recorded no events")
    if doc["rejected"]:
        problems.append(f"the sink rejected frames: {doc['rejected']}")
    if w != (7, 700, 0) or m[0] != 2:
        problems.append("probe.dat was not counted exactly")
    check(not problems, "; ".join(problems))


TESTS = {
    "errno_table": test_errno_table,
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("test", choices=sorted(TESTS))
    ap.add_argument("--shim", required=True)
    ap.add_argument("--sink", required=True)
    ap.add_argument("--bin-dir", required=True)
    ap.add_argument("--asan-runtime", default="")
    a = ap.parse_args()
    tools = Tools(a.shim, a.sink, a.bin_dir, a.asan_runtime)
    t0 = time.monotonic()
    try:
        with Run(tools, a.test) as run:
            TESTS[a.test](tools, run)
    except Fail as e:
        print(f"FAIL {a.test}: {e}")
        return 1
    print(f"PASS {a.test} ({time.monotonic() - t0:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
