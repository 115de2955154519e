#!/usr/bin/python3
"""Shim benchmarks, measured side by side in one run (never timed tests):

  shim_added_ns_per_call  1-byte pwrite to a tmpfs file in a loop, runs with
                          and without libiopulse.so alternating, events
                          streaming to a live receiver (iop-sink); the median
                          of the per-pair differences
  shim_added_cpu_ns_per_call
                          the same pairs, the loop thread's CPU time instead
                          of wall time: what the time spent waiting for a
                          core (a loaded machine) leaves out (informational)
  shim_added_ns_per_call_threaded
                          the same with an idle second thread in the loop
                          program in both runs, as every MPI rank has: the
                          shim's own cost, without what the kernel charges
                          each call of a program that has more than one
                          thread (a shared descriptor table), which the
                          sender thread alone brings to a single-threaded
                          program (informational, not a target)
  fpp_overhead_ratio      examples/fpp, 1 KiB transfers, 2 ranks: median wall
                          time of its write+read phase with the shim over the
                          median without, runs alternating
  shim_dropped_events     events the shim dropped during the fpp runs
                          (stats.dropped, all processes, from the receiver)

Prints "NAME VALUE UNIT" lines. Usage: shim_bench.py BUILD_DIR [NAME...]"""
import json, os, re, shutil, statistics, subprocess, sys, tempfile, time

build = sys.argv[1]
wanted = set(sys.argv[2:]) or {"shim_added_ns_per_call", "fpp_overhead_ratio", "shim_dropped_events"}
shim = os.path.join(build, "pmpi-shim/libiopulse.so")
sink = os.path.join(build, "tests/support/iop-sink")
loop = os.path.join(build, "bench/pwrite_loop")
fpp = os.path.join(build, "examples/fpp")
work = tempfile.mkdtemp(prefix="iop-bench-")
shm = tempfile.mkdtemp(prefix="iop-bench-", dir="/dev/shm")
key = os.urandom(16).hex()
env_mpi = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")


def start_sink(name, finals):
    url = "ipc://%s/%s.ipc" % (work, name)
    ready = os.path.join(work, name + ".ready")
    out = os.path.join(work, name + ".json")
    # --light: every frame decoded and checked, counters kept, no per-event
    # bookkeeping: about what a leaf collector's intake costs. --idle-ms: the
    # sink's default (2 s without a frame) ended it between two runs with
    # the shim (an fpp run without it, mpirun's start-up included, takes
    # about that long, and much longer on a loaded host): the runs after
    # it had no collector (their sender rebuilt refused frames, their
    # drops went uncounted). It ends after the expected FINAL frames.
    p = subprocess.Popen([sink, "--url", url, "--key", key, "--out", out, "--ready", ready,
                          "--expect-final", str(finals), "--timeout-s", "600",
                          "--idle-ms", "120000", "--light"])
    for _ in range(100):
        if os.path.exists(ready):
            break
        time.sleep(0.05)
    return p, url, out


def shim_env(url, base=os.environ):
    return dict(base, LD_PRELOAD=shim, IOPULSE_ADDR=url, IOPULSE_KEY=key)


def read_summary(sinkp, out, expected):
    """The sink's summary once it has ended (stopped with SIGTERM, which it
    takes as the end, if a FINAL frame is missing); says so on stderr when
    processes are missing."""
    try:
        sinkp.wait(timeout=60)
    except subprocess.TimeoutExpired:
        sinkp.terminate()
        sinkp.wait(timeout=60)
    summary = json.load(open(out))
    if len(summary["processes"]) != expected:
        print("shim_bench: the sink saw %d processes of %d (%s)"
              % (len(summary["processes"]), expected, summary.get("stop_reason")), file=sys.stderr)
    return summary


def pwrite_pairs(rounds=9, n=1000000, extra=()):
    sinkp, url, out = start_sink("loop" + "-".join(extra), rounds)
    target = os.path.join(shm, "loop.dat")
    diffs, base, cpu_diffs = [], [], []
    for _ in range(rounds):
        t, cpu = {}, {}
        for mode in ("off", "on"):
            env = shim_env(url) if mode == "on" else os.environ
            r = subprocess.run([loop, target, str(n), *extra], env=env, capture_output=True,
                               text=True, timeout=120, check=True)
            t[mode], cpu[mode] = float(r.stdout.split()[1]), float(r.stdout.split()[3])
        diffs.append(t["on"] - t["off"])
        cpu_diffs.append(cpu["on"] - cpu["off"])
        base.append(t["off"])
    summary = read_summary(sinkp, out, rounds)
    dropped = sum(p["stats"]["dropped"] for p in summary["processes"])
    return (statistics.median(diffs), statistics.median(base), dropped,
            statistics.median(cpu_diffs))


def fpp_times(rounds=7, n=50000):
    sinkp, url, out = start_sink("fpp", 2 * rounds)
    times = {"off": [], "on": []}
    for _ in range(rounds):
        for mode in ("off", "on"):
            cmd = ["mpirun.openmpi", "--oversubscribe", "-n", "2"]
            if mode == "on":
                cmd += ["-x", "LD_PRELOAD=" + shim, "-x", "IOPULSE_ADDR=" + url,
                        "-x", "IOPULSE_KEY=" + key]
            cmd += [fpp, "-t", "-n", str(n), "-s", "1024", "-d", os.path.join(shm, "fpp")]
            r = subprocess.run(cmd, env=env_mpi, capture_output=True, text=True, timeout=300,
                               check=True)
            m = re.search(r"fpp_time ([0-9.]+)", r.stderr)
            times[mode].append(float(m.group(1)))
    summary = read_summary(sinkp, out, 2 * rounds)
    dropped = sum(p["stats"]["dropped"] for p in summary["processes"])
    return statistics.median(times["on"]) / statistics.median(times["off"]), dropped, times


try:
    if "shim_added_ns_per_call" in wanted:
        added, base, dropped, added_cpu = pwrite_pairs()
        print("shim_added_ns_per_call %.1f ns" % added)
        print("shim_added_cpu_ns_per_call %.1f ns" % added_cpu)
        print("pwrite_1byte_ns_per_call %.1f ns" % base)
        print("shim_loop_dropped_events %d events" % dropped)
        added_mt, base_mt, _, _ = pwrite_pairs(extra=("idle-thread",))
        print("shim_added_ns_per_call_threaded %.1f ns" % added_mt)
        print("pwrite_1byte_ns_per_call_threaded %.1f ns" % base_mt)
    if wanted & {"fpp_overhead_ratio", "shim_dropped_events"}:
        ratio, dropped, times = fpp_times()
        if "fpp_overhead_ratio" in wanted:
            print("fpp_overhead_ratio %.4f ratio" % ratio)
            print("fpp_time_median_s_without %.4f s" % statistics.median(times["off"]))
            print("fpp_time_median_s_with %.4f s" % statistics.median(times["on"]))
        if "shim_dropped_events" in wanted:
            print("shim_dropped_events %d events" % dropped)
finally:
    shutil.rmtree(work, ignore_errors=True)
    shutil.rmtree(shm, ignore_errors=True)
