#!/usr/bin/python3
"""Tests libiopfault.so with fault_probe: each fault kind applies exactly
where it is configured and nowhere else, and the faulted calls still return
what they would have.

    run_fault.py --lib LIBIOPFAULT --probe FAULT_PROBE [--asan-runtime LIBASAN]

Each scenario runs the probe (one JSON line per call, see fault_probe.c)
with the library preloaded and some IOPFAULT_* variables, and checks:

  slow rank     every read/write-class function of a selected rank (a rank
                list with a range) takes at least the delay; fsync and
                fdatasync do not (IOPFAULT_OPS defaults to read,write), nor
                do writes to a pipe or a socket; a rank outside the list,
                and a run without the library, are not slowed
  ops           IOPFAULT_OPS=sync slows fsync/fdatasync and not writes
  slow file     only the file matching IOPFAULT_FILE is slowed, including
                through a dup'd fd the library never saw opened
  window        with IOPFAULT_AFTER_S / IOPFAULT_UNTIL_S, calls are slowed
                inside the window only (so an alert can be seen to end)
  epoch first   with IOPFAULT_EPOCH_S=first the window counts from the
                first selected call, made 1 s after the probe started
  hang for S    the first matching call after IOPFAULT_AFTER_S takes S
                seconds, then returns its value (a failing call its errno);
                no other call hangs
  hang forever  the call does not return; the process sleeps (no CPU)
                until it is killed
  bad value     a variable that does not parse injects nothing and says so

Every call must return the right value and keep errno (a successful call
leaves the probe's sentinel errno as it was). The probe's files live on
/dev/shm when there is one, where calls take microseconds, so a delay of a
few milliseconds stands out without relying on the disk.

Standard library only. Exit status: 0 pass, 1 fail, 2 bad usage.
"""

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

DELAY_US = 3000
RUN_TIMEOUT_S = 30
RW_FNS = ["write", "read", "writev", "readv", "pwrite", "pwrite64", "pread", "pread64",
          "pwritev", "pwritev64", "pwritev2", "preadv", "preadv64", "preadv2",
          "write_rdonly", "dup_write", "fwrite", "fprintf", "fread"]
RANK_VARS = ("IOPULSE_RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID",
             "RANK")
OTHER_FNS = ["fsync", "fdatasync", "pipe_write", "sock_write"]


class Checks:
    def __init__(self):
        self.failures = 0

    def expect(self, cond, what):
        if not cond:
            self.failures += 1
            print(f"FAIL {what}")
        return cond


def probe_env(args, faults):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("IOPFAULT_") and k not in ("LD_PRELOAD",) + RANK_VARS}
    if faults is not None:
        env["LD_PRELOAD"] = ":".join(p for p in (args.asan_runtime, args.lib) if p)
        env.update(faults)
    return env


def run_probe(args, tmp, faults, opts, name):
    """Runs the probe to its end; returns (calls, stderr)."""
    cmd = [args.probe, "-d", os.path.join(tmp, name)] + opts
    proc = subprocess.run(cmd, env=probe_env(args, faults), capture_output=True, text=True,
                          timeout=RUN_TIMEOUT_S)
    if proc.returncode != 0:
        raise RuntimeError(f"{name}: probe exited {proc.returncode}: {proc.stderr}")
    lines = [json.loads(l) for l in proc.stdout.splitlines() if l.strip()]
    return [l for l in lines if "fn" in l], proc.stderr


def by_fn(calls, file=None):
    out = {}
    for c in calls:
        if file is None or c["file"] == file:
            out.setdefault(c["fn"], []).append(c["dur_us"])
    return out


def check_returns(chk, calls, name):
    bad = [c for c in calls if not c["ok"] or not c["errno_kept"]]
    chk.expect(not bad, f"{name}: calls with a wrong return value or errno: {bad[:3]}")


def slowed(chk, durs, name, fn):
    """Every call took the delay (sleeping never ends early)."""
    chk.expect(min(durs) >= DELAY_US, f"{name}: {fn} min {min(durs):.0f} us < {DELAY_US} us")


def not_slowed(chk, durs, name, fn):
    """The median is far below the delay (one call may be preempted)."""
    med = statistics.median(durs)
    chk.expect(med < DELAY_US / 2, f"{name}: {fn} median {med:.0f} us, not < {DELAY_US / 2} us")


def summary(name, calls, fns):
    d = by_fn(calls)
    parts = [f"{fn} {statistics.median(d[fn]):.0f}" for fn in fns if fn in d]
    print(f"  {name}: median us: " + ", ".join(parts))


def slow_rank(chk, args, tmp):
    opts = ["-x", ",".join(RW_FNS + OTHER_FNS), "-c", "3"]
    base = {"IOPFAULT_RANK": "0,2-3", "IOPFAULT_DELAY_US": str(DELAY_US)}
    for name, faults, rw_slow in (("no preload", None, False),
                                  ("rank 2 of 0,2-3", dict(base, PMI_RANK="2"), True),
                                  ("rank 1 of 0,2-3", dict(base, PMI_RANK="1"), False)):
        calls, _ = run_probe(args, tmp, faults, opts, name.replace(" ", "_"))
        check_returns(chk, calls, name)
        d = by_fn(calls)
        summary(name, calls, ["write", "pread", "pwritev2", "fwrite", "fsync", "pipe_write"])
        for fn in RW_FNS:
            (slowed if rw_slow else not_slowed)(chk, d[fn], name, fn)
        for fn in OTHER_FNS:
            not_slowed(chk, d[fn], name, fn)


def ops_sync(chk, args, tmp):
    name = "IOPFAULT_OPS=sync"
    faults = {"IOPFAULT_OPS": "sync", "IOPFAULT_DELAY_US": str(DELAY_US)}
    calls, _ = run_probe(args, tmp, faults, ["-x", "write,pread,fsync,fdatasync", "-c", "3"],
                         "ops")
    check_returns(chk, calls, name)
    d = by_fn(calls)
    summary(name, calls, ["write", "pread", "fsync", "fdatasync"])
    for fn in ("fsync", "fdatasync"):
        slowed(chk, d[fn], name, fn)
    for fn in ("write", "pread"):
        not_slowed(chk, d[fn], name, fn)


def slow_file(chk, args, tmp):
    name = "IOPFAULT_FILE=*/b.dat"
    faults = {"IOPFAULT_FILE": "*/nothing:*/b.dat", "IOPFAULT_DELAY_US": str(DELAY_US)}
    fns = ["write", "pread", "pwritev", "dup_write"]
    calls, _ = run_probe(args, tmp, faults,
                         ["-f", "a.dat,b.dat", "-x", ",".join(fns), "-c", "3"], "file")
    check_returns(chk, calls, name)
    a, b = by_fn(calls, "a.dat"), by_fn(calls, "b.dat")
    print(f"  {name}: a.dat write median {statistics.median(a['write']):.0f} us, "
          f"b.dat write median {statistics.median(b['write']):.0f} us")
    for fn in fns:
        slowed(chk, b[fn], name + " b.dat", fn)
        not_slowed(chk, a[fn], name + " a.dat", fn)


def window(chk, args, tmp):
    """Slow in [0.6, 1.2) s after load only; the probe's t starts a little
    after the library loaded, so calls near an edge are left out."""
    after, until = 0.6, 1.2
    faults = {"IOPFAULT_AFTER_S": str(after), "IOPFAULT_UNTIL_S": str(until),
              "IOPFAULT_DELAY_US": str(DELAY_US)}
    calls, _ = run_probe(args, tmp, faults, ["-x", "pwrite", "-t", "1.8", "-i", "20"], "window")
    slowed_inside(chk, calls, f"window {after}..{until} s", after, until)


def epoch_first(chk, args, tmp):
    """IOPFAULT_EPOCH_S=first: the probe makes its first call 1 s after it
    started; slow in [0.3, 0.8) s after that call, where from the load the
    window would have passed unseen."""
    wait, after, until = 1.0, 0.3, 0.8
    faults = {"IOPFAULT_EPOCH_S": "first", "IOPFAULT_AFTER_S": str(after),
              "IOPFAULT_UNTIL_S": str(until), "IOPFAULT_DELAY_US": str(DELAY_US)}
    calls, _ = run_probe(args, tmp, faults,
                         ["-x", "pwrite", "-w", str(wait), "-t", "2.6", "-i", "20"], "first")
    first = min(c["t"] for c in calls)
    slowed_inside(chk, calls, f"window {after}..{until} s after the first call at {first:.2f} s",
                  first + after, first + until)


def slowed_inside(chk, calls, name, after, until, margin=0.1):
    """Calls slowed between after and until (probe seconds), not before
    or after; calls within margin of an edge are left out."""
    check_returns(chk, calls, name)
    before = [c["dur_us"] for c in calls if c["t"] < after - margin]
    inside = [c["dur_us"] for c in calls if after + margin <= c["t"] < until - margin]
    later = [c["dur_us"] for c in calls if c["t"] >= until + margin]
    print(f"  {name}: calls before/inside/after: {len(before)}/{len(inside)}/{len(later)}; "
          f"medians {statistics.median(before):.0f}/{statistics.median(inside):.0f}/"
          f"{statistics.median(later):.0f} us")
    chk.expect(len(before) >= 5 and len(inside) >= 5 and len(later) >= 5,
               f"{name}: too few calls in a phase")
    not_slowed(chk, before, name + " before", "pwrite")
    slowed(chk, inside, name + " inside", "pwrite")
    not_slowed(chk, later, name + " after", "pwrite")


def hang_for(chk, args, tmp):
    after, hang_s = 0.3, 1.0
    name = f"hang pwrite {hang_s} s after {after} s"
    faults = {"IOPFAULT_HANG": "pwrite", "IOPFAULT_HANG_S": str(hang_s),
              "IOPFAULT_AFTER_S": str(after)}
    calls, _ = run_probe(args, tmp, faults, ["-x", "pwrite,write", "-t", "2.0", "-i", "20"],
                         "hang")
    check_returns(chk, calls, name)
    hung = [c for c in calls if c["dur_us"] >= hang_s * 1e6]
    print(f"  {name}: {len(calls)} calls, hung: {hung}")
    if chk.expect(len(hung) == 1, f"{name}: {len(hung)} calls hung, expected 1"):
        h = hung[0]
        chk.expect(h["fn"] == "pwrite" and h["ret"] == 4096 and h["t"] >= after - 0.1,
                   f"{name}: wrong call hung: {h}")
        chk.expect(not any(c["fn"] == "pwrite" and c["t"] < h["t"] and c["t"] >= after
                           for c in calls), f"{name}: an earlier pwrite after {after} s ran")
    chk.expect(all(c["dur_us"] < hang_s * 1e6 / 2 for c in calls if c not in hung),
               f"{name}: another call was slow")
    # a failing call hangs too, then fails as it would have
    name = "hang write for 0.5 s on a read-only fd"
    calls, _ = run_probe(args, tmp, {"IOPFAULT_HANG": "write", "IOPFAULT_HANG_S": "0.5"},
                         ["-x", "write_rdonly", "-c", "3"], "hang_err")
    check_returns(chk, calls, name)
    durs = [c["dur_us"] for c in calls]
    print(f"  {name}: durations {[round(d) for d in durs]} us, "
          f"returns {[(c['ret'], c['errno']) for c in calls]}")
    chk.expect(durs[0] >= 0.5e6 and max(durs[1:]) < 0.25e6, f"{name}: durations {durs}")
    chk.expect(calls[0]["ret"] == -1 and calls[0]["errno"] == 9, f"{name}: {calls[0]}")


def proc_cpu_s(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return fields[0], (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def hang_forever(chk, args, tmp):
    name = "hang fsync until killed"
    cmd = [args.probe, "-d", os.path.join(tmp, "forever"), "-x", "fsync", "-c", "2"]
    env = probe_env(args, {"IOPFAULT_HANG": "fsync"})
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        ready = json.loads(proc.stdout.readline() or "{}")
        chk.expect(ready.get("ready"), f"{name}: no ready line")
        time.sleep(2.0)
        alive = proc.poll() is None
        state, cpu = proc_cpu_s(proc.pid) if alive else ("gone", 0)
        print(f"  {name}: after 2 s alive={alive}, state {state}, cpu {cpu:.2f} s")
        chk.expect(alive, f"{name}: the probe ended (status {proc.returncode})")
        chk.expect(state == "S", f"{name}: state {state}, expected S (sleeping)")
        chk.expect(cpu < 0.5, f"{name}: used {cpu:.2f} s of CPU: busy-waiting?")
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
        out, _ = proc.communicate(timeout=10)
    chk.expect(not any('"fn"' in l for l in out.splitlines()),
               f"{name}: a call returned: {out[:200]}")


def bad_value(chk, args, tmp):
    name = "bad IOPFAULT_RANK"
    faults = {"IOPFAULT_RANK": "1-", "IOPFAULT_DELAY_US": str(DELAY_US)}
    calls, err = run_probe(args, tmp, faults, ["-x", "write", "-c", "3"], "bad")
    check_returns(chk, calls, name)
    not_slowed(chk, by_fn(calls)["write"], name, "write")
    chk.expect("bad IOPFAULT_RANK='1-'" in err and "no fault injected" in err,
               f"{name}: stderr does not say so: {err!r}")
    name = "IOPFAULT_VERBOSE"
    faults = {"IOPFAULT_VERBOSE": "1", "IOPFAULT_DELAY_US": "10", "IOPFAULT_FILE": "*/x"}
    _, err = run_probe(args, tmp, faults, ["-x", "write", "-c", "1"], "verbose")
    chk.expect("delay 10 us on read,write" in err and "'*/x'" in err,
               f"{name}: stderr {err!r}")


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--lib", required=True, help="libiopfault.so")
    p.add_argument("--probe", required=True, help="fault_probe")
    p.add_argument("--asan-runtime", default="", help="libasan.so to preload first")
    p.add_argument("--keep", action="store_true")
    args = p.parse_args(argv)
    args.lib = os.path.realpath(args.lib)
    base = "/dev/shm" if os.path.isdir("/dev/shm") else None
    tmp = tempfile.mkdtemp(prefix="iop-fault-", dir=base)
    chk = Checks()
    try:
        for scenario in (slow_rank, ops_sync, slow_file, window, epoch_first, hang_for,
                         hang_forever, bad_value):
            print(f"== {scenario.__name__}")
            before = chk.failures
            try:
                scenario(chk, args, tmp)
            except (RuntimeError, subprocess.TimeoutExpired, KeyError, ValueError) as e:
                chk.expect(False, f"{scenario.__name__}: {e}")
            print(f"== {scenario.__name__}: " + ("ok" if chk.failures == before else "FAILED"))
    finally:
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    print("fault_probe: " + ("ok" if chk.failures == 0 else f"FAILED ({chk.failures} checks)"))
    return 0 if chk.failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
