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
  shim_instructions_per_call
                          the same loop counted in instructions, which a
                          shared, noisy host does not move: pwrite_loop
                          under valgrind's callgrind, the loop thread
                          alone (--separate-threads), N and 2N calls with
                          and without the shim (streaming to iop-sink;
                          N 20000, 2N less than a ring, which valgrind's
                          late sender would let fill and drop);
                          ((shim 2N - shim N) - (bare 2N - bare N)) / N.
                          Also printed: the shim's own functions and libc's
                          (pwrite's cancellation bookkeeping, which libc does
                          only once a process has a second thread: the
                          sender) per call. User space only: the kernel's
                          share is not counted
  fpp_overhead_ratio      examples/fpp, 1 KiB transfers, 2 ranks: median wall
                          time of its write+read phase with the shim over the
                          median without, runs alternating
  shim_dropped_events     events the shim dropped during the fpp runs
                          (stats.dropped, all processes, from the receiver)
  fpp_overhead_ratio_clock_floor
                          the same ratio with bench/clock_floor.so preloaded
                          instead of the shim: two TSC reads around each
                          write() and read(), nothing else; the least a
                          monitor that times every call adds on this host
                          (informational; its runs alternate with the
                          others in the same rounds)
  shim_process_added_ms   what the shim adds to each short-lived process: a
                          shell loop of 30 cp of a 64 KiB file under
                          `iopulse run --headless` (the shim in each cp,
                          its last frame acknowledged by the run's leaf)
                          against the same loop without, each less the
                          same command with an empty loop; the median of
                          5 rounds alternating, per process
  dropped_share_busy_node issue 22's busy node: 4 ranks on this host's cores
                          (2 here) writing 4 KiB blocks with
                          MPI_File_write_at to one file in /dev/shm as
                          fast as they can for 10 s (bench/busy_loop.c),
                          under `iopulse run --headless` (a real leaf);
                          the share of the calls made that the shims
                          dropped (monitor.dropped / monitor.produced;
                          IOP_BENCH_BUSY_ROUNDS runs, default 3, each
                          printed, the worst is the figure)
  job_fixed_ms            issue 22's fixed cost per job: a 2-rank MPI job
                          (fpp) making one write, under `iopulse run
                          --headless` against the bare mpirun; the median
                          of 21 pairs, each pair in the other order
  run_job_added_ms        what `iopulse run --headless` adds to a whole job,
                          start-up to exit: `/bin/true` under it against
                          alone, then a 1-rank `mpirun ... true` under it
                          against alone (run_mpi_job_added_ms); the median
                          of 21 rounds alternating (issue 22: "the fixed
                          cost per job")
  wire_bytes_per_call     bytes on the wire a call for an IOR-like stream
                          (examples/fpp, 2 ranks, 200000 sequential 1 KiB
                          writes then reads a rank, each frame counted
                          whole), runs coalesced (the default); beside it
                          the same with IOPULSE_COALESCE=0, and the share
                          of calls that went in run records; median of 3
  pipeline_cpu_ns_per_call
                          CPU a call of the whole pipeline for an IOR-like
                          stream (bench/pwrite_loop: 2 M sequential 1 KiB
                          pwrite calls) under `iopulse run --headless`,
                          each part where it runs: the loop thread's CPU
                          less bare (the shim), the process's other
                          threads (the sender), `iopulse run`'s own process
                          (the collector: leaf and root) less a 1-call
                          run's; median of 7 rounds, with its parts;
                          _uncoalesced with IOPULSE_COALESCE=0
  fpp_overhead_ratio_passive
                          the same ratio with the shim preloaded but no
                          collector address (passive: the wrappers call
                          straight through); what interposition alone adds
                          (informational)
  shim_collective_added_ns
                          what the shim adds to a collective call: 8-byte
                          MPI_File_write_at_all to a tmpfs file on 2 ranks
                          (bench/coll_loop.c: 20000 calls a rank and kind,
                          in blocks taking turns with the independent
                          calls below); each round runs the loop without
                          and with the shim (streaming to iop-sink), in a
                          new order; the median of the per-round
                          differences (IOP_BENCH_COLL_ROUNDS, default 31),
                          each the difference of the loops' median calls
  shim_independent_added_ns
                          the same for MPI_File_write_at (independent),
                          from the same runs
  shim_collective_vs_independent
                          the first over the second: the target is <= 1
                          (shim_collective_minus_independent_added_ns: the
                          median of the per-round differences between the
                          two, which a run's own speed moves less; the
                          _mean_ns figures: the loops' mean call instead of
                          the median one, with the sender's and the
                          collector's share of the ranks' two cores)

Prints "NAME VALUE UNIT" lines. Usage: shim_bench.py BUILD_DIR [NAME...]
IOP_BENCH_ROUNDS: rounds of the fpp runs (default 7); more resolve smaller
differences on a noisy host. IOP_BENCH_COLL_ROUNDS: rounds of the
collective-call runs (default 31); each round's figures go to stderr."""
import json, os, random, re, shutil, statistics, subprocess, sys, tempfile, time

build = sys.argv[1]
wanted = set(sys.argv[2:]) or {"shim_added_ns_per_call", "fpp_overhead_ratio", "shim_dropped_events"}
shim = os.path.join(build, "pmpi-shim/libiopulse.so")
sink = os.path.join(build, "tests/support/iop-sink")
loop = os.path.join(build, "bench/pwrite_loop")
fpp = os.path.join(build, "examples/fpp")
floor_lib = os.path.join(build, "bench/clock_floor.so")
coll_loop = os.path.join(build, "bench/coll_loop")
busy_loop = os.path.join(build, "bench/busy_loop")
iopulse = os.path.abspath(os.path.join(build, "cli/iopulse"))
work = tempfile.mkdtemp(prefix="iop-bench-")
shm = tempfile.mkdtemp(prefix="iop-bench-", dir="/dev/shm")
key = os.urandom(16).hex()
env_mpi = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")


def start_sink(name, finals, light=True):
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
                          "--idle-ms", "120000"] + (["--light"] if light else []))
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


def wire_per_call(coalesce, n=200000, rounds=3):
    """Wire bytes a call and the share of calls sent in run records, for an
    IOR-like stream: examples/fpp on 2 ranks, n sequential 1 KiB writes
    then reads a rank to its own file in /dev/shm, the shim streaming to
    iop-sink (every frame accepted counted whole: header, names, counters,
    MAC), coalescing on or off (IOPULSE_COALESCE=0); the median of rounds."""
    per_call, in_runs = [], []
    for r in range(rounds):
        sinkp, url, out = start_sink("wire-%d-%d" % (coalesce, r), 2, light=False)
        cmd = ["mpirun.openmpi", "--oversubscribe", "-n", "2", "-x", "LD_PRELOAD=" + shim,
               "-x", "IOPULSE_ADDR=" + url, "-x", "IOPULSE_KEY=" + key]
        if not coalesce:
            cmd += ["-x", "IOPULSE_COALESCE=0"]
        cmd += [fpp, "-n", str(n), "-s", "1024", "-d", os.path.join(shm, "wire")]
        subprocess.run(cmd, env=env_mpi, capture_output=True, text=True, timeout=300, check=True)
        summary = read_summary(sinkp, out, 2)
        per_call.append(summary["wire_bytes"] / summary["events"])
        in_runs.append(summary["run_calls"] / summary["events"])
    return statistics.median(per_call), statistics.median(in_runs)


def fpp_times(extra_modes=(), rounds=int(os.environ.get("IOP_BENCH_ROUNDS", "7")), n=50000):
    """fpp_time of each mode, each round running every mode once:
    "off" (nothing preloaded), "on" (the shim, streaming to the sink), and
    any of "floor" (clock_floor.so) and "passive" (the shim, no address)."""
    modes = ("off", "on") + tuple(extra_modes)
    sinkp, url, out = start_sink("fpp", 2 * rounds)
    times = {m: [] for m in modes}
    order = random.Random(1)
    for _ in range(rounds):
        # a new order each round: whatever a run leaves behind (the files
        # it wrote, a warm cache) favours no mode in particular
        for mode in order.sample(modes, len(modes)):
            cmd = ["mpirun.openmpi", "--oversubscribe", "-n", "2"]
            if mode == "on":
                cmd += ["-x", "LD_PRELOAD=" + shim, "-x", "IOPULSE_ADDR=" + url,
                        "-x", "IOPULSE_KEY=" + key]
            elif mode == "floor":
                cmd += ["-x", "LD_PRELOAD=" + floor_lib]
            elif mode == "passive":
                cmd += ["-x", "LD_PRELOAD=" + shim]
            cmd += [fpp, "-t", "-n", str(n), "-s", "1024", "-d", os.path.join(shm, "fpp")]
            r = subprocess.run(cmd, env=env_mpi, capture_output=True, text=True, timeout=300,
                               check=True)
            m = re.search(r"fpp_time ([0-9.]+)", r.stderr)
            times[mode].append(float(m.group(1)))
    summary = read_summary(sinkp, out, 2 * rounds)
    dropped = sum(p["stats"]["dropped"] for p in summary["processes"])
    ratios = {m: statistics.median(times[m]) / statistics.median(times["off"]) for m in modes}
    return ratios, dropped, times


def coll_pairs(rounds=int(os.environ.get("IOP_BENCH_COLL_ROUNDS", "31")), n=20000):
    """What the shim adds to a call of MPI_File_write_at_all ("coll") and of
    MPI_File_write_at ("indep"), both from the same runs (bench/coll_loop.c),
    so a round's load weighs on both: per figure the median over the rounds
    of (with the shim - without). Two figures a kind: "median", the
    difference of the median calls (the call itself, the shim's code in the
    calling thread), and "mean", of the whole loop's time per call (with
    what the sender and the collector take from the ranks' cores now and
    then on a host whose cores they keep busy; a collective call makes
    every rank wait for the one held up). And "excess", per round what the
    shim added to the median collective call minus what it added to the
    median independent one: a launch's state (where its ranks run, the
    host's load) moves both kinds' calls alike, by more than the shim's
    cost, and cancels there. Returns (added, base, excess, dropped):
    added[kind][figure], base[kind][figure] (without the shim)."""
    sinkp, url, out = start_sink("coll", 2 * rounds)
    target = os.path.join(shm, "coll.dat")
    kinds, figures = ("coll", "indep"), ("median", "mean")
    added = {k: {f: [] for f in figures} for k in kinds}
    base = {k: {f: [] for f in figures} for k in kinds}
    excess = []
    order = random.Random(2)
    pat = re.compile(r"coll_ns_per_call ([0-9.]+) indep_ns_per_call ([0-9.]+) "
                     r"coll_median_ns ([0-9.]+) indep_median_ns ([0-9.]+)")
    for i in range(rounds):
        t = {}
        for mode in order.sample(("off", "on"), 2):
            cmd = ["mpirun.openmpi", "--oversubscribe", "-n", "2"]
            if mode == "on":
                cmd += ["-x", "LD_PRELOAD=" + shim, "-x", "IOPULSE_ADDR=" + url,
                        "-x", "IOPULSE_KEY=" + key]
            cmd += [coll_loop, target, str(n), "8"]
            r = subprocess.run(cmd, env=env_mpi, capture_output=True, text=True, timeout=300,
                               check=True)
            v = [float(x) for x in pat.search(r.stdout).groups()]
            t[mode] = {"coll": {"mean": v[0], "median": v[2]},
                       "indep": {"mean": v[1], "median": v[3]}}
        for k in kinds:
            for f in figures:
                added[k][f].append(t["on"][k][f] - t["off"][k][f])
                base[k][f].append(t["off"][k][f])
        excess.append(added["coll"]["median"][-1] - added["indep"]["median"][-1])
        print("shim_bench: collective round %d: median call write_at_all %.0f -> %.0f ns, "
              "write_at %.0f -> %.0f ns; mean write_at_all %.0f -> %.0f ns, write_at %.0f -> "
              "%.0f ns" % (i + 1, t["off"]["coll"]["median"], t["on"]["coll"]["median"],
                           t["off"]["indep"]["median"], t["on"]["indep"]["median"],
                           t["off"]["coll"]["mean"], t["on"]["coll"]["mean"],
                           t["off"]["indep"]["mean"], t["on"]["indep"]["mean"]), file=sys.stderr)
    summary = read_summary(sinkp, out, 2 * rounds)
    dropped = sum(p["stats"]["dropped"] for p in summary["processes"])
    med = lambda d: {k: {f: statistics.median(d[k][f]) for f in figures} for k in kinds}
    return med(added), med(base), statistics.median(excess), dropped


def process_added_ms(rounds=5, n=30):
    """Per short-lived process: (loop of n under iopulse run - empty loop
    under it) - (loop of n - empty loop), over n, median of the rounds."""
    d = tempfile.mkdtemp(prefix="iop-bench-procs-", dir=work)
    with open(os.path.join(d, "src"), "wb") as f:
        f.write(os.urandom(65536))

    def wall(count, under):
        script = "for i in $(seq %d); do cp src dst$i; done" % count
        cmd = ([iopulse, "run", "--headless", "--"] if under else []) + ["sh", "-c", script]
        t0 = time.monotonic()
        subprocess.run(cmd, cwd=d, check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=300)
        return time.monotonic() - t0

    added = []
    for _ in range(rounds):
        on = wall(n, True) - wall(0, True)
        off = wall(n, False) - wall(0, False)
        added.append((on - off) / n * 1000)
    return statistics.median(added)


def job_added_ms(cmd, rounds=21, spread=None):
    """Median over rounds of (cmd under iopulse run - cmd alone), ms; with
    spread (a dict), also the differences' quartiles and the bare run's
    median there."""
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")

    def wall(under):
        full = ([iopulse, "run", "--headless", "--"] if under else []) + cmd
        t0 = time.monotonic()
        subprocess.run(full, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       timeout=120, env=env)
        return time.monotonic() - t0

    added, bare = [], []
    for i in range(rounds):
        pair = (True, False) if i % 2 else (False, True)
        t = {under: wall(under) for under in pair}
        added.append((t[True] - t[False]) * 1000)
        bare.append(t[False] * 1000)
    if spread is not None:
        q = statistics.quantiles(added, n=4)
        spread.update(q1=q[0], q3=q[2], bare=statistics.median(bare))
    return statistics.median(added)


def proc_cpu_s(pid):
    """User + system CPU of process pid itself (not its children), s."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def pipeline_cpu(coalesce=True, rounds=7, n=2000000):
    """CPU a call of the whole pipeline for an IOR-like stream
    (bench/pwrite_loop: n sequential 1 KiB pwrite calls), each part
    measured where it runs: the loop thread's CPU under `iopulse run
    --headless` less bare (the shim's part), the process's other threads
    (the sender, read from /proc by the loop), and `iopulse run`'s own
    process (leaf and root), read from /proc until it exits, less the
    same for a run of 1 call (its start-up). Median of rounds, with the
    parts of the median round."""
    env = dict(os.environ)
    if not coalesce:
        env["IOPULSE_COALESCE"] = "0"
    target = os.path.join(shm, "pipe.dat")

    def under(count):
        p = subprocess.Popen([iopulse, "run", "--headless", "--", loop, target, str(count),
                              "size=1024", "others"], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True)
        coll = 0.0
        while p.poll() is None:
            try:
                coll = proc_cpu_s(p.pid)
            except (OSError, IndexError):
                pass
            time.sleep(0.02)
        out = p.stdout.read().split()
        return float(out[3]), float(out[5]), coll

    parts = []
    for _ in range(rounds):
        bare = subprocess.run([loop, target, str(n), "size=1024"], capture_output=True, text=True,
                              timeout=300, check=True)
        bare_cpu = float(bare.stdout.split()[3])
        loop_cpu, sender, coll = under(n)
        _, _, coll_1 = under(1)
        parts.append((loop_cpu - bare_cpu, sender, (coll - coll_1) / n * 1e9))
    parts.sort(key=sum)
    mid = parts[len(parts) // 2]
    return sum(mid), mid


def busy_node(secs=10, ranks=4):
    """One run of busy_loop under iopulse run: (dropped, produced, calls)."""
    mpirun = shutil.which("mpirun.openmpi") or shutil.which("mpirun")
    summary = os.path.join(work, "busy.json")
    target = os.path.join(shm, "busy")
    out = subprocess.run([iopulse, "run", "--headless", "--summary-json", summary, "--",
                          mpirun, "--oversubscribe", "-n", str(ranks), busy_loop, target,
                          str(secs)], check=True, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True, timeout=secs * 10 + 120,
                         env=env_mpi).stdout
    os.unlink(target)
    calls = int(re.search(r"calls (\d+)", out).group(1))
    mon = json.load(open(summary))["monitor"]
    return mon["dropped"], mon["produced"], calls


def callgrind_ir(n, with_shim, url):
    """Instructions of pwrite_loop's main thread for n calls, in all and by
    object ({basename of the object: Ir})."""
    base = os.path.join(work, "cg.%s.%d" % ("on" if with_shim else "off", n))
    env = shim_env(url) if with_shim else os.environ
    subprocess.run(["valgrind", "--tool=callgrind", "--separate-threads=yes",
                    "--callgrind-out-file=" + base + ".%p", loop, os.path.join(shm, "cg.dat"),
                    str(n)], env=env, capture_output=True, timeout=600, check=True)
    main = sorted(f for f in os.listdir(work) if f.startswith(os.path.basename(base) + ".")
                  and f.endswith("-01"))[-1]
    ann = subprocess.run(["callgrind_annotate", "--inclusive=no", os.path.join(work, main)],
                         capture_output=True, text=True, check=True).stdout
    total = int(re.search(r"^([\d,]+) +\(100\.0%\) +PROGRAM TOTALS", ann, re.M)
                .group(1).replace(",", ""))
    by_obj = {}
    for m in re.finditer(r"^ *([\d,]+) +\([ \d.]+%\) +\S+:\S+ \[(\S+)\]", ann, re.M):
        obj = os.path.basename(m.group(2))
        by_obj[obj] = by_obj.get(obj, 0) + int(m.group(1).replace(",", ""))
    return total, by_obj


def instructions_per_call(n=20000):
    # 2n < SHIM_RING: under valgrind the threads take turns, the sender
    # drains late, and a loop that fills its ring counts the drop path
    if not shutil.which("valgrind"):
        raise SystemExit("shim_instructions_per_call: valgrind is not installed "
                         "(scripts/install-deps installs it)")
    sinkp, url, out = start_sink("callgrind", 2)
    ir = {(w, k): callgrind_ir(k, w, url) for w in (False, True) for k in (n, 2 * n)}
    read_summary(sinkp, out, 2)
    per = lambda w, obj=None: ((ir[(w, 2 * n)][0] - ir[(w, n)][0]) if obj is None else
                               (ir[(w, 2 * n)][1].get(obj, 0) - ir[(w, n)][1].get(obj, 0))) / n
    return per(True) - per(False), per(True, "libiopulse.so"), \
        per(True, "libc.so.6") - per(False, "libc.so.6"), per(False)


try:
    if "shim_instructions_per_call" in wanted:
        added, shim_own, libc_added, bare = instructions_per_call()
        print("shim_instructions_per_call %.1f instructions (1-byte pwrite; bare %.1f: "
              "libiopulse.so's own %.1f, libc's added %.1f)" % (added, bare, shim_own,
                                                                libc_added))
    if "dropped_share_busy_node" in wanted:
        worst = 0.0
        for i in range(int(os.environ.get("IOP_BENCH_BUSY_ROUNDS", "3"))):
            dropped, produced, calls = busy_node()
            share = dropped / produced if produced else 0.0
            worst = max(worst, share)
            print("busy node run %d: %d MPI_File_write_at calls, %d events produced, %d "
                  "dropped (%.4f%%)" % (i + 1, calls, produced, dropped, 100 * share),
                  file=sys.stderr)
        print("dropped_share_busy_node %.6f share (target 0; 4 ranks on %d cores, 4 KiB "
              "MPI_File_write_at for 10 s, the worst of the runs)" % (worst, os.cpu_count()))
    if "job_fixed_ms" in wanted:
        mpirun = shutil.which("mpirun.openmpi") or shutil.which("mpirun")
        d = os.path.join(shm, "fixed")
        os.makedirs(d, exist_ok=True)
        sp = {}
        fixed = job_added_ms([mpirun, "--oversubscribe", "-n", "2", fpp, "-n", "1", "-s", "4096",
                              "-d", d], spread=sp)
        print("job_fixed_ms %.2f ms (target <= 10; a 2-rank fpp making one write under "
              "iopulse run --headless, minus the bare mpirun (median %.1f ms), median of 21 "
              "pairs in turn; quartiles %.2f to %.2f)" % (fixed, sp["bare"], sp["q1"], sp["q3"]))
    if "run_job_added_ms" in wanted:
        print("run_job_added_ms %.2f ms" % job_added_ms(["/bin/true"]))
        mpirun = shutil.which("mpirun.openmpi")
        if mpirun:
            print("run_mpi_job_added_ms %.2f ms" % job_added_ms(
                [mpirun, "--oversubscribe", "-n", "1", "/bin/true"]))
    if "shim_added_ns_per_call" in wanted:
        added, base, dropped, added_cpu = pwrite_pairs()
        print("shim_added_ns_per_call %.1f ns" % added)
        print("shim_added_cpu_ns_per_call %.1f ns" % added_cpu)
        print("pwrite_1byte_ns_per_call %.1f ns" % base)
        print("shim_loop_dropped_events %d events" % dropped)
        added_mt, base_mt, _, _ = pwrite_pairs(extra=("idle-thread",))
        print("shim_added_ns_per_call_threaded %.1f ns" % added_mt)
        print("pwrite_1byte_ns_per_call_threaded %.1f ns" % base_mt)
    coll_names = {"shim_collective_added_ns", "shim_independent_added_ns",
                  "shim_collective_vs_independent"}
    if wanted & coll_names:
        added, base, excess, dropped = coll_pairs()

        def ratio(a, b):
            return a / b if b > 0 else float("nan")
        print("shim_collective_added_ns %.1f ns" % added["coll"]["median"])
        print("shim_independent_added_ns %.1f ns" % added["indep"]["median"])
        print("shim_collective_vs_independent %.2f x" % ratio(added["coll"]["median"],
                                                              added["indep"]["median"]))
        print("shim_collective_minus_independent_added_ns %.1f ns" % excess)
        print("shim_collective_added_mean_ns %.1f ns" % added["coll"]["mean"])
        print("shim_independent_added_mean_ns %.1f ns" % added["indep"]["mean"])
        print("shim_collective_vs_independent_mean %.2f x" % ratio(added["coll"]["mean"],
                                                                   added["indep"]["mean"]))
        print("mpiio_write_at_all_8byte_ns_per_call %.1f ns (median call %.1f)"
              % (base["coll"]["mean"], base["coll"]["median"]))
        print("mpiio_write_at_8byte_ns_per_call %.1f ns (median call %.1f)"
              % (base["indep"]["mean"], base["indep"]["median"]))
        print("shim_collective_dropped_events %d events" % dropped)
    if "wire_bytes_per_call" in wanted:
        on, share = wire_per_call(True)
        off, _ = wire_per_call(False)
        print("wire_bytes_per_call %.3f B" % on)
        print("wire_bytes_per_call_uncoalesced %.3f B" % off)
        print("wire_calls_in_runs_share %.4f ratio" % share)
    if "pipeline_cpu_ns_per_call" in wanted:
        for name, on in (("pipeline_cpu_ns_per_call", True),
                         ("pipeline_cpu_ns_per_call_uncoalesced", False)):
            total, (shim_ns, sender_ns, coll_ns) = pipeline_cpu(coalesce=on)
            print("%s %.1f ns (shim %.1f, sender %.1f, collector %.1f)"
                  % (name, total, shim_ns, sender_ns, coll_ns))
    if "shim_process_added_ms" in wanted:
        print("shim_process_added_ms %.2f ms" % process_added_ms())
    fpp_names = {"fpp_overhead_ratio", "shim_dropped_events",
                 "fpp_overhead_ratio_clock_floor", "fpp_overhead_ratio_passive"}
    if wanted & fpp_names:
        extra = [m for m, name in (("floor", "fpp_overhead_ratio_clock_floor"),
                                   ("passive", "fpp_overhead_ratio_passive")) if name in wanted]
        ratios, dropped, times = fpp_times(extra)
        if "fpp_overhead_ratio" in wanted:
            print("fpp_overhead_ratio %.4f ratio" % ratios["on"])
            print("fpp_time_median_s_without %.4f s" % statistics.median(times["off"]))
            print("fpp_time_median_s_with %.4f s" % statistics.median(times["on"]))
        if "floor" in ratios:
            print("fpp_overhead_ratio_clock_floor %.4f ratio" % ratios["floor"])
        if "passive" in ratios:
            print("fpp_overhead_ratio_passive %.4f ratio" % ratios["passive"])
        if "shim_dropped_events" in wanted:
            print("shim_dropped_events %d events" % dropped)
finally:
    shutil.rmtree(work, ignore_errors=True)
    shutil.rmtree(shm, ignore_errors=True)
