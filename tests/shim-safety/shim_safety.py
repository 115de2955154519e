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
import re
import random
import signal
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from safety_lib import (Fail, Run, Tools, check, counter, describe, ended, file_entry,
                        kill_and_reap, status, values)


# ------------------------------------------------------------ sink checks

def check_final(doc, n, problems):
    """n processes, each with its FINAL frame; nothing rejected."""
    finals = [p for p in doc["processes"] if p["final"]]
    if len(doc["processes"]) != n or len(finals) != n:
        problems.append(f"{len(doc['processes'])} processes, {len(finals)} with a FINAL "
                        f"frame; wanted {n} and {n}")
    if doc["rejected"]:
        problems.append(f"the sink rejected frames: {doc['rejected']}")
    for p in doc["processes"]:
        print(f"process pid {p['pid']}: frames {p['frames']}, final {p['final']}, "
              f"missing seqs {p['missing_seqs']}, unknown ids {p['unknown_ids']}, "
              f"stats {p['stats']}")


def want_counter(doc, path, layer, cls, want, problems):
    """Checks one counter: (ops, bytes, errors) exactly, or (ops,) alone."""
    got = counter(doc, path, layer, cls)
    ok = got == want if len(want) == 3 else got[0] == want[0]
    print(f"{os.path.basename(path)} {layer}/{cls}: sink {got}, want {want}"
          f"{'' if ok else '  <-- WRONG'}")
    if not ok:
        problems.append(f"{os.path.basename(path)} {layer}/{cls} is {got}, not {want}")


# ------------------------------------------------------------ errno table

def test_errno_table(tools, run):
    """Same lines, return values and errno without the shim, passive and
    active; the active run really recorded (probe.dat, unlocked.txt, the
    kernel-copy probe's copy.src and copy.dst and the lock probe's
    lock.dat exactly). Each failed
    exec row sends a FINAL frame before the exec (and recording goes on):
    the sink expects those and the one at exit."""
    sink = None
    got = {}
    # ASan's own interceptors read paths: no invalid path pointers under it
    argv = [tools.prog("errno_table")] + (["no-bad-paths"] if tools.asan_runtime else [])
    for mode in ("none", "passive", "active"):
        if mode == "active":
            execs = [line for line in got["none"][1].splitlines()
                     if line.startswith(("exec", "fexecve"))]
            print(f"{len(execs)} failing exec rows: {1 + len(execs)} FINAL frames expected")
            sink = run.start_sink(expect_final=1 + len(execs))
        wd = run.workdir(mode)
        p = run.start(argv, run.env(mode), cwd=wd)
        got[mode] = run.finish(p, 60, f"errno_table ({mode})")[:3]
        rc, out, err = got[mode]
        print(f"{mode}: exit {rc}, {len(out.splitlines())} lines")
        if err.strip():
            print(f"{mode} stderr:\n{err.rstrip()}")
    # a run that died may not have sent its FINAL frame: then stop the sink
    doc = sink.wait(30) if got["active"][0] == 0 else sink.wait(10, stop=True)

    rc, base, _ = got["none"]
    check(rc == 0, "errno_table fails even without the shim: its expectations are wrong")
    base_lines = base.splitlines()
    problems = []
    for mode in ("passive", "active"):
        lines = got[mode][1].splitlines()
        n = max(len(lines), len(base_lines))
        diffs = [i for i in range(n) if i >= len(lines) or i >= len(base_lines)
                 or lines[i] != base_lines[i]]
        for i in diffs[:20]:
            a = base_lines[i] if i < len(base_lines) else "(no line)"
            b = lines[i] if i < len(lines) else "(no line)"
            print(f"DIFF {mode} line {i + 1}: without shim '{a}', with shim '{b}'")
        if diffs:
            problems.append(f"{mode}: {len(diffs)} lines differ or are missing "
                            f"(first: line {diffs[0] + 1})")
        if got[mode][0] != 0:
            problems.append(f"{mode}: {status(got[mode][0])}")

    check_final(doc, 1, problems)
    if doc["processes"] and doc["processes"][0]["stats"]["events"] <= 0:
        problems.append("the active run recorded no events")
    probe = run.path("active", "probe.dat")
    want_counter(doc, probe, "posix", "write", (7, 700, 0), problems)
    want_counter(doc, probe, "posix", "meta", (2,), problems)
    # the _unlocked forms of STDIO (errno_stdio.c, unlocked_cases)
    unlocked = run.path("active", "unlocked.txt")
    want_counter(doc, unlocked, "stdio", "write", (5, 160, 0), problems)
    want_counter(doc, unlocked, "stdio", "read", (7, 160, 0), problems)
    # the copy probe (errno_table.c, copy_probe): copy_file_range 1000,
    # sendfile 700, splice 300 each way through a pipe
    src, dst = run.path("active", "copy.src"), run.path("active", "copy.dst")
    want_counter(doc, src, "posix", "write", (1, 3000, 0), problems)
    want_counter(doc, src, "posix", "read", (3, 2000, 0), problems)
    want_counter(doc, dst, "posix", "write", (3, 2000, 0), problems)
    # the lock probe (errno_table.c, lock_probe): open, 8 fcntl lock
    # commands (one failed), 2 flock, fstatfs, statfs, close; F_GETFL and
    # F_SETFD not recorded
    want_counter(doc, run.path("active", "lock.dat"), "posix", "meta", (13, 0, 1), problems)
    check(not problems, "; ".join(problems))


# ------------------------------------------------------------ signals

def test_signals(tools, run):
    """A SIGALRM handler doing write() and fprintf() every 100 us while the
    main thread is inside pwrite/fwrite: no deadlock, every call right, the
    main thread's totals exact, the handler's within 90 % (see below)."""
    sink = run.start_sink(expect_final=1)
    out, secs = run.run_ok([tools.prog("sig_test")], run.env("active"), 30, "sig_test")
    doc = sink.wait(30)
    v = {k: int(x[0]) for k, x in values(out).items()}
    print(f"sig_test: {secs:.2f} s, {v}")
    hp = counter(doc, run.path("handler_posix.dat"), "posix", "write")
    hs = counter(doc, run.path("handler_stdio.dat"), "stdio", "write")
    mp = counter(doc, run.path("main.dat"), "posix", "write")
    ms = counter(doc, run.path("main_stdio.dat"), "stdio", "write")
    print(f"handler write():   program counted {v['handler_writes']}, sink {hp}")
    print(f"handler fprintf(): program counted {v['handler_fprintfs']}, sink {hs}")
    print(f"main pwrite():     program counted {v['main_pwrites']}, sink {mp}")
    print(f"main fwrite():     program counted {v['main_fwrites']}, sink {ms}")
    problems = []
    check_final(doc, 1, problems)
    if mp != (v["main_pwrites"], v["main_pwrites"] * 512, 0):
        problems.append("main thread's pwrite totals are not exact")
    if ms != (v["main_fwrites"], v["main_fwrites"] * 64, 0):
        problems.append("main thread's fwrite totals are not exact")
    # A handler call that interrupts the shim's own bookkeeping (the main
    # thread inside shim_end, or interning a name) passes through
    # unrecorded by design (shim.h: "busy"): at most what was counted, at
    # least 90 % of it. An instrumented (sanitizer) shim spends longer in its
    # bookkeeping, so more handler calls land there: at least 75 % then.
    floor = 0.75 if tools.asan_runtime else 0.9
    for what, got, want in (("write()", hp, v["handler_writes"]),
                            ("fprintf()", hs, v["handler_fprintfs"])):
        missed = want - got[0]
        print(f"handler {what}: {missed} of {want} unrecorded "
              f"({100.0 * missed / max(want, 1):.2f} %)")
        if not (floor * want <= got[0] <= want) or got[1] != 16 * got[0] or got[2]:
            problems.append(f"handler {what}: sink {got} for {want} calls of 16 bytes")
    check(not problems, "; ".join(problems))


# ------------------------------------------------------------ fork and friends

def test_fork(tools, run):
    """fork (the child and its own forked grandchild record as processes of
    their own; a child ended by SIGTERM sends its last frame and still dies
    of it), fork+exec, vfork+exec, posix_spawn (their own processes with
    FINAL frames), with a thread writing all along: nothing hangs, every
    status 0, every process's totals exact, none of the parent's I/O
    counted again by a child that inherited its rings and counters.

    Last frames are acknowledged, as under `iopulse run`: unacknowledged, a
    process's last frame is written and its pipe closed 50 ms later, and
    the receiving nanomsg drops a frame it has read and not handed out when
    the pipe closes. A sink kept off the CPU longer than that (a loaded CI
    host, the parent's thread sending ~1 M writes a second) lost the three
    forked children whole (it had their pids from no frame at all); with
    the sink stopped (SIGSTOP) 400 ms, unacknowledged runs lost 3 of 7
    processes, acknowledged ones none (docs/shim.md, "Exit")."""
    sink = run.start_sink(expect_final=7, final=True)
    # Under the sanitizer runtime, LeakSanitizer's check at the forked
    # child's exit() can wait forever for an allocator lock that another
    # thread (the shim's sender, nanomsg's worker) held at fork: GCC 12's
    # libasan does not lock its allocator around fork. Not the shim's to
    # fix; this test's processes skip the leak check.
    extra = {"ASAN_OPTIONS": os.environ.get("ASAN_OPTIONS", "") + ":detect_leaks=0"} \
        if tools.asan_runtime else None
    out, secs = run.run_ok([tools.prog("fork_test"), tools.prog("io_child")],
                           run.env("active", extra=extra, final=True), 60, "fork_test")
    v = {k: [int(x) for x in xs] for k, xs in values(out).items()}
    print(f"fork_test: {secs:.2f} s, {v}", flush=True)  # whose pid is whose, first
    doc = sink.wait(30)
    problems = []
    check_final(doc, 7, problems)
    # each last frame is answered, or (not answered in time) sent again
    # over PUSH: none answered means the acknowledged path was not used
    print(f"last frames answered by the sink: {doc['finals_answered']} of 7")
    if not doc["finals_answered"]:
        problems.append("no last frame came to the sink's final address")
    pids = {p["pid"] for p in doc["processes"]}
    want_pids = {v["parent_pid"][0], v["fork_pid"][0], v["grandchild_pid"][0], v["term_pid"][0],
                 v["exec_pid"][0], v["vfork_pid"][0], v["spawn_pid"][0]}
    if pids != want_pids:
        problems.append(f"sink saw pids {sorted(pids)}, wanted {sorted(want_pids)} "
                        f"(parent, forked child and grandchild, SIGTERMed child, exec'd /bin/true, "
                        f"vfork+exec, posix_spawn)")
    n, size = v["parent_writes"]
    want_counter(doc, run.path("parent.dat"), "posix", "write", (n, n * size, 0), problems)
    want_counter(doc, run.path("parent.dat"), "posix", "meta", (2,), problems)
    n, size = v["thread_writes"]
    want_counter(doc, run.path("thread.dat"), "posix", "write", (n, n * size, 0), problems)
    n = v["vfork_writes"][0]
    want_counter(doc, run.path("vfork_child.dat"), "posix", "write", (n, n * 200, 0), problems)
    n = v["spawn_writes"][0]
    want_counter(doc, run.path("spawn_child.dat"), "posix", "write", (n, n * 200, 0), problems)
    n = v["fork_writes"][0]
    want_counter(doc, run.path("fork_child.dat"), "posix", "write", (n, n * 128, 0), problems)
    want_counter(doc, run.path("fork_child.dat"), "posix", "meta", (2,), problems)
    want_counter(doc, run.path("fork_child.txt"), "stdio", "write", (1, 6, 0), problems)
    n = v["term_writes"][0]
    want_counter(doc, run.path("term_child.dat"), "posix", "write", (n, n * 32, 0), problems)
    n = v["grand_writes"][0]
    want_counter(doc, run.path("fork_grandchild.dat"), "posix", "write", (n, n * 64, 0),
                 problems)
    for name, size in (("fork_child.dat", v["fork_writes"][0] * 128), ("fork_child.txt", 6),
                       ("fork_grandchild.dat", v["grand_writes"][0] * 64)):
        got = os.path.getsize(run.path(name))
        if got != size:
            problems.append(f"{name} holds {got} bytes, not {size}")
    check(not problems, "; ".join(problems))


# ------------------------------------------------------------ threads

THREADS, T_WRITES, T_SIZE = 16, 20000, 256


def test_threads(tools, run):
    """16 threads x T_WRITES pwrite of T_SIZE bytes, each to its own file:
    the counters exact per file whether or not rings overflowed."""
    sink = run.start_sink(expect_final=1, timeout_s=85)
    out, secs = run.run_ok([tools.prog("threads_test"), str(T_WRITES), str(T_SIZE)],
                           run.env("active"), 80, "threads_test")
    doc = sink.wait(30)
    print(f"threads_test: {secs:.2f} s, {out.split()}")
    problems = []
    check_final(doc, 1, problems)
    for i in range(THREADS):
        path = run.path(f"t{i:02d}.dat")
        want_counter(doc, path, "posix", "write", (T_WRITES, T_WRITES * T_SIZE, 0), problems)
        want_counter(doc, path, "posix", "meta", (2,), problems)
        ev = counter(doc, path, "posix", "write", view="events")
        print(f"  events received for t{i:02d}.dat: {ev}")
    if doc["processes"]:
        st = doc["processes"][0]["stats"]
        print(f"dropped {st['dropped']} of {st['events']} events (counters must not care)")
    check(not problems, "; ".join(problems))


# ------------------------------------------------------------ dlopen

DL_WRITES = 77


def test_dlopen(tools, run):
    """I/O in a dlopen'd library (loaded twice, RTLD_LOCAL then
    RTLD_GLOBAL) is recorded exactly; no double counting of STDIO as
    POSIX; its calls are sited in the library by name, although it was
    unloaded before the sender named them (dlclose rescans the objects)."""
    lib = os.path.join(tools.bin_dir, "libsafety_dl_io.so")
    argv = [tools.prog("dlopen_test"), lib, str(DL_WRITES)]
    run.run_ok(argv, run.env("passive"), 30, "dlopen_test (passive)", cwd=run.workdir("p"))
    sink = run.start_sink(expect_final=1)
    run.run_ok(argv, run.env("active"), 30, "dlopen_test")
    doc = sink.wait(30)
    n = 2 * DL_WRITES
    problems = []
    check_final(doc, 1, problems)
    posix, stdio = run.path("dl_posix.dat"), run.path("dl_stdio.dat")
    want_counter(doc, posix, "posix", "write", (n, n * 100, 0), problems)
    want_counter(doc, posix, "posix", "meta", (6,), problems)  # open, fsync, close x 2
    want_counter(doc, stdio, "stdio", "write", (n, n * 50, 0), problems)
    want_counter(doc, stdio, "stdio", "meta", (4,), problems)  # fopen, fclose x 2
    for cls in ("write", "meta"):
        want_counter(doc, stdio, "posix", cls, (0, 0, 0), problems)
    for layer in ("posix", "stdio"):
        got = site_ops(doc, "safety_dl_io+0x", layer=layer)
        print(f"{layer} writes at sites safety_dl_io+0x.. (libsafety_dl_io.so): {got}")
        if got != n:
            problems.append(f"{got} {layer} writes sited in safety_dl_io, not {n}")
    unknown = [s["name"] for s in doc["sites"] if not s["name"].endswith(")")]
    if unknown:
        problems.append(f"sites without a function: {unknown}")
    check(not problems, "; ".join(problems))


# ------------------------------------------------------------ before main, at exit

STAGES = ("preinit", "ctor", "main", "atexit", "dtor")


def test_lifecycle(tools, run):
    """I/O in .preinit_array, a constructor, main, an atexit handler and a
    destructor: no crash, right values, right files, in all three modes;
    prints what the sink recorded of each stage (not asserted: whether the
    shim is up yet or still up is a matter of order)."""
    outs = {}
    for mode in ("none", "passive"):
        outs[mode], _ = run.run_ok([tools.prog("lifecycle_test")], run.env(mode), 30,
                                   f"lifecycle_test ({mode})", cwd=run.workdir(mode))
    sink = run.start_sink(expect_final=1)
    outs["active"], _ = run.run_ok([tools.prog("lifecycle_test")], run.env("active"), 30,
                                   "lifecycle_test")
    doc = sink.wait(30)
    problems = []
    check_final(doc, 1, problems)
    if len(set(outs.values())) != 1:
        problems.append(f"outputs differ between modes: {outs}")
    for mode, d in (("none", run.path("none")), ("passive", run.path("passive")),
                    ("active", run.dir)):
        for st in STAGES:
            sizes = (os.path.getsize(os.path.join(d, f"{st}.dat")),
                     os.path.getsize(os.path.join(d, f"{st}.txt")))
            if sizes != (160, 32 + len(f"{st} 5\n")):
                problems.append(f"{mode}: {st} files hold {sizes} bytes")
    for st in STAGES:
        w = counter(doc, run.path(f"{st}.dat"), "posix", "write")
        m = counter(doc, run.path(f"{st}.dat"), "posix", "meta")
        s = counter(doc, run.path(f"{st}.txt"), "stdio", "write")
        sm = counter(doc, run.path(f"{st}.txt"), "stdio", "meta")
        print(f"{st:8s} recorded: posix write {w}, meta ops {m[0]}; "
              f"stdio write {s}, meta ops {sm[0]}")
    check(not problems, "; ".join(problems))


# ------------------------------------------------------------ the collector

def closed_tcp_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_collector_absent(tools, run):
    """Nothing listens at IOPULSE_ADDR (ipc, tcp) or it is not a URL: the
    program runs normally and exits within 5 s."""
    problems = []
    addrs = [f"ipc://{run.dir}/nobody.ipc", f"tcp://127.0.0.1:{closed_tcp_port()}",
             "bogus://nowhere"]
    for i, addr in enumerate(addrs):
        out, secs = run.run_ok([tools.prog("collector_test"), "1", "200"],
                               run.env("active", addr=addr), 20, f"collector_test ({addr})",
                               cwd=run.workdir(f"a{i}"))
        v = values(out)
        print(f"{addr}: {secs:.2f} s in all, {v['seconds'][0]} s writing, "
              f"{v['writes'][0]} writes")
        if secs >= 5:
            problems.append(f"{addr}: took {secs:.2f} s")
    check(not problems, "; ".join(problems))


def test_collector_killed(tools, run):
    """The sink is SIGKILLed 0.7 s into a 2 s run: the program carries on,
    every call right, and exits promptly."""
    sink = run.start_sink(expect_final=1)
    t0 = time.monotonic()
    p = run.start([tools.prog("collector_test"), "2", "200"], run.env("active"))
    time.sleep(0.7)
    kill_and_reap(sink.proc)
    rc, out, err, _ = run.finish(p, 20, "collector_test")
    secs = time.monotonic() - t0
    print(f"collector_test: exit {rc}, {secs:.2f} s in all, {values(out)}")
    if err.strip():
        print(f"stderr:\n{err.rstrip()}")
    check(rc == 0, f"exit status {rc} after the sink was killed")
    check(secs < 5, f"took {secs:.2f} s for a 2 s run")


def test_collector_restarted(tools, run):
    """A sink killed while the program writes (it has the program's frames,
    and early.dat is written and closed) and another started on the same
    address: once the program's frames reach the second, the program is
    let end (it writes at least 3 s and until then, not a fixed time: a
    loaded machine's steps take longer). The second sink gets the process,
    its FINAL frame and the program's exact cumulative totals: of
    collector.dat and .txt, written all along, and of early.dat (counters
    are cumulative: the last frame can say everything)."""
    stop = run.path("stop")
    first = run.start_sink(expect_final=1, tag="first sink", got=True)
    p = run.start([tools.prog("collector_test"), "3", "200", stop], run.env("active"))
    first.wait_got(30)
    deadline = time.monotonic() + 30
    while not os.path.exists(run.path("collector.dat")) or \
            not os.path.getsize(run.path("collector.dat")):  # early.dat is closed
        check(p.poll() is None, f"collector_test exited early ({p.returncode})")
        check(time.monotonic() < deadline, "collector_test wrote nothing within 30 s")
        time.sleep(0.01)
    kill_and_reap(first.proc)
    second = run.start_sink(expect_final=1, timeout_s=60, tag="second sink", got=True)
    second.wait_got(30)
    open(stop, "w").close()
    rc, out, err, _ = run.finish(p, 30, "collector_test")
    check(rc == 0, f"collector_test exited with {rc}\n{err}")
    doc = second.wait(30)
    v = {k: float(x[0]) for k, x in values(out).items()}
    print(f"collector_test: {v}")
    problems = []
    check_final(doc, 1, problems)
    want_counter(doc, run.path("collector.dat"), "posix", "write",
                 (int(v["writes"]), int(v["bytes"]), 0), problems)
    want_counter(doc, run.path("collector.dat"), "posix", "meta", (2,), problems)
    want_counter(doc, run.path("collector.txt"), "stdio", "write",
                 (int(v["lines"]), int(v["line_bytes"]), 0), problems)
    want_counter(doc, run.path("early.dat"), "posix", "write",
                 (int(v["early_writes"]), int(v["early_bytes"]), 0), problems)
    if problems:
        print("the second sink saw, by file:\n" + describe(doc, run.dir + "/"))
        for r in doc["ranks"]:
            print(f"  rank {r['rank']} in all (files named or not): {r['counters']}")
    check(not problems, "; ".join(problems))


# ------------------------------------------------------------ beyond the brief

TERM_RUNS = 10


def test_fatal_signals(tools, run):
    """A process that dies of a signal dies of it, within 3 s, as without
    the shim: SIGTERM arriving while it is inside malloc (TERM_RUNS times,
    at random moments), and glibc's abort() from inside malloc on a
    corrupted heap. The shim catches the abort to send a last frame;
    SIGTERM it leaves at its default action."""
    run.start_sink(expect_final=1000, timeout_s=100)  # a live collector; not read
    prog, problems = tools.prog("fatal_test"), []
    # with the ASan runtime preloaded, malloc is ASan's: no glibc heap check
    for mode in () if tools.asan_runtime else ("none", "active"):
        p = run.start([prog, "heap"], run.env(mode), cwd=run.workdir(f"heap-{mode}"))
        rc = ended(p, 5)
        print(f"heap overrun ({mode}): {status(rc)}")
        if rc != -signal.SIGABRT:
            problems.append(f"heap overrun ({mode}): {status(rc)}, not killed by SIGABRT")
    if tools.asan_runtime:
        print("heap overrun: skipped (ASan's allocator replaces glibc's)")
    rng = random.Random(os.getpid())
    for mode, runs in (("none", 2), ("active", TERM_RUNS)):
        results = []
        for i in range(runs):
            p = run.start([prog, "term"], run.env(mode), cwd=run.workdir(f"term-{mode}-{i}"))
            time.sleep(rng.uniform(0.15, 0.4))
            t0 = time.monotonic()
            p.send_signal(signal.SIGTERM)
            rc = ended(p, 3)
            results.append(rc)
            print(f"SIGTERM run {i} ({mode}): {status(rc)} after {time.monotonic() - t0:.2f} s")
        bad = [r for r in results if r != -signal.SIGTERM]
        if bad:
            problems.append(f"SIGTERM ({mode}): {len(bad)} of {runs} runs did not die of it "
                            f"within 3 s ({sum(r is None for r in bad)} hung)")
    check(not problems, "; ".join(problems))


def test_closed_fds(tools, run):
    """A program that closes every descriptor above stderr (a close() loop
    or close_range) and carries on must exit 0 as it does without the shim,
    whose nanomsg descriptors it closed, and its next open must get 3. A
    program started without stdin and stderr must find them closed, and
    its first opens must get 0 and 2 (the shim's own descriptors, made at
    its start, take numbers out of the way). A program that dup2s onto a
    descriptor of the shim's owns it: its close closes it."""
    run.start_sink(expect_final=4)
    problems = []
    for how in ("loop", "range", "std", "dup2"):
        for mode in ("none", "active"):
            p = run.start([tools.prog("closed_fds_test"), how], run.env(mode),
                          cwd=run.workdir(f"{how}-{mode}"))
            rc, out, err, secs = run.finish(p, 20, f"closed_fds_test {how} ({mode})")
            print(f"{how} ({mode}): {status(rc)}, {secs:.2f} s, stdout {out.strip()!r}")
            if rc != 0 or not out.startswith("ok "):
                tail = (err.strip() or out.strip()).splitlines()[-1:] or [""]
                problems.append(f"{how} ({mode}): {status(rc)}: {tail[0]}")
    check(not problems, "; ".join(problems))


EXIT_WRITES = 2000


def test_exits(tools, run):
    """_exit, _Exit and quick_exit end a process without its atexit
    handlers, a write to a pipe without a reader with SIGPIPE: the shim
    must still send what it holds and a FINAL frame (exact totals), and
    the status must be the program's (death by SIGPIPE for the last)."""
    ways = {"_exit": 7, "_Exit": 7, "quick_exit": 7, "sigpipe": -signal.SIGPIPE}
    sink = run.start_sink(expect_final=len(ways), timeout_s=15)
    problems = []
    for how, want in ways.items():
        p = run.start([tools.prog("exits_test"), how, str(EXIT_WRITES)], run.env("active"),
                      cwd=run.workdir(how))
        rc, out, err, secs = run.finish(p, 20, f"exits_test {how}")
        print(f"{how}: {status(rc)}, {secs:.2f} s, stdout {out.strip()!r}")
        if rc != want or out.strip() != f"ok {EXIT_WRITES}":
            problems.append(f"{how}: {status(rc)}, stdout {out.strip()!r}, stderr {err.strip()!r}")
    doc = sink.wait(30)
    check_final(doc, len(ways), problems)
    for how in ways:
        want_counter(doc, os.path.join(run.path(how), "out.dat"), "posix", "write",
                     (EXIT_WRITES, EXIT_WRITES * 100, 0), problems)
    check(not problems, "; ".join(problems))


# ------------------------------------------------------------ call sites

SITE_WRITES = 4000


def site_ops(doc, prefix, layer="posix", cls="write"):
    """Event ops of the sites whose name starts with prefix."""
    return sum(s.get("events", {}).get(layer, {}).get(cls, {}).get("ops", 0)
               for s in doc.get("sites", []) if s["name"].startswith(prefix))


def test_sites(tools, run):
    """pwrite() called through libsafety_site_lib, by main, by a thread and
    by a SIGALRM handler: with the library skipped (IOPULSE_SITE_SKIP), every
    call is sited at its caller in sites_test (an unwind per call, in the
    handler too) and none in the library; without, in the library."""
    problems = []
    for mode, skip in (("skip", "libsafety_site"), ("plain", None)):
        sink = run.start_sink(expect_final=1, url=f"ipc://{run.dir}/{mode}.ipc", tag=mode)
        # IOPULSE_LOG=debug: the shim says at exit how many calls took an
        # unwind to be sited (the others found it memoised)
        extra = {"IOPULSE_LOG": "debug"}
        if skip:
            extra["IOPULSE_SITE_SKIP"] = skip
        env = run.env("active", addr=f"ipc://{run.dir}/{mode}.ipc", extra=extra)
        what = f"sites_test ({mode})"
        rc, out, err, secs = run.finish(
            run.start([tools.prog("sites_test"), str(SITE_WRITES)], env, run.workdir(mode)), 50,
            what)
        check(rc == 0, f"{what} exited with status {rc}\n--- stderr ---\n{err}")
        doc = sink.wait(30)
        v = values(out)
        n, handler = int(v["writes"][0]), int(v["handler_writes"][0])
        recorded = counter(doc, run.path(mode, "handler.dat"), "posix", "write")[0]
        said = re.findall(r"(\d+) calls sited by an unwind", err)
        check(len(said) == 1, f"{what}: no (or more than one) unwind count said at exit:\n{err}")
        unwinds = int(said[0])
        print(f"{mode}: {secs:.2f} s; pwrite {v['direct_ns'][0]} ns/call direct, "
              f"{v['library_ns'][0]} ns/call through the library; handler calls {handler}, "
              f"recorded {recorded}; {unwinds} calls sited by an unwind")
        # A loop through the skipped library unwinds once and then finds the
        # memo (main's and the thread's: 2 x SITE_WRITES calls); a handler's
        # call at a new stack depth may unwind each time.
        if unwinds > handler + 16:
            problems.append(f"{mode}: {unwinds} calls sited by an unwind, more than the "
                            f"handler's {handler} + 16: the memos of unwinds do not hold")
        for site in doc["sites"]:
            ops = site_ops({"sites": [site]}, "")
            if ops:
                print(f"  {site['name']}: {ops} posix writes")
        check_final(doc, 1, problems)
        if doc["unnamed_site_events"]:
            problems.append(f"{mode}: {doc['unnamed_site_events']} events without a site")
        # Sites come with events: a full ring drops some (counted), then
        # the sums may fall short by that many.
        dropped = doc["processes"][0]["stats"]["dropped"] if doc["processes"] else 0
        total = site_ops(doc, "")
        if not 3 * n + recorded - dropped <= total <= 3 * n + recorded:
            problems.append(f"{mode}: {total} posix writes at sites, not {3 * n + recorded} "
                            f"({dropped} events dropped)")
        if skip:
            # a handler call that interrupts a pwrite is that call's child,
            # so it carries that call's site: direct and library sites may
            # hold some of the handler's calls, the thread's none
            want = (("thread_writes+0x", n, n), ("direct_writes+0x", n, n + recorded),
                    ("library_writes+0x", n, n + recorded), ("on_alarm+0x", 1, recorded))
            for prefix, low, high in want:
                got = site_ops(doc, prefix)
                if not low - dropped <= got <= high:
                    problems.append(f"skip: site {prefix}.. has {got} writes, not {low}..{high}")
            inside = [s["name"] for s in doc["sites"] if "libsafety_site" in s["name"]]
            if inside:
                problems.append(f"skip: sites in the skipped library: {inside}")
        elif not 0 <= 3 * n + recorded - total <= dropped or \
                site_ops(doc, "lib_inner+0x") + site_ops(doc, "direct_writes+0x") != total:
            problems.append("plain: the library's calls are not all sited in lib_inner")
    check(not problems, "; ".join(problems))


# ------------------------------------------------------------ aio

def test_aio(tools, run):
    """aio_write, lio_listio, aio_read collected in another thread, and a
    burst larger than the shim's table: exact totals on aio.dat (glibc's
    helper threads' pread/pwrite not counted again), the overflow counted
    as dropped events, the posting functions as sites; then overflow to
    more files than a thread has drop cells: the layer's totals exact."""
    sink = run.start_sink(expect_final=1)
    out, secs = run.run_ok([tools.prog("aio_test")], run.env("active"), 50, "aio_test")
    doc = sink.wait(30)
    v = {k: [int(x) for x in xs] for k, xs in values(out).items()}
    print(f"aio_test: {secs:.2f} s, {v}")
    problems = []
    check_final(doc, 1, problems)
    path = run.path("aio.dat")
    n, size = v["writes"]
    want_counter(doc, path, "posix", "write", (n, n * size, 0), problems)
    n, size = v["reads"]
    want_counter(doc, path, "posix", "read", (n, n * size, 0), problems)
    want_counter(doc, path, "posix", "meta", (2,), problems)  # open, close
    # the spread's writes, dropped into more cells than a thread has, are
    # in the layer's totals all the same
    n, size = v["all_writes"]
    got = doc["layers"].get("posix", {}).get("write", {})
    got = (got.get("counter_ops", 0), got.get("counter_bytes", 0))
    print(f"posix writes of all files: sink {got}, want {(n, n * size)}")
    if got != (n, n * size):
        problems.append(f"posix writes of all files: {got}, not {(n, n * size)}")
    dropped = doc["processes"][0]["stats"]["dropped"] if doc["processes"] else 0
    if dropped < v["aio_burst"][0] - 4096:
        problems.append(f"{dropped} events dropped: the burst of {v['aio_burst'][0]} cannot "
                        "all have fitted in a table of 4096")
    for fn, cls in (("aio_writer", "write"), ("lio_writer", "write"), ("aio_reader", "read")):
        got = site_ops(doc, fn + "+0x", cls=cls)
        print(f"site {fn}: {got} {cls} events")
        if got != v[fn][0]:
            problems.append(f"site {fn} has {got} {cls} events, not {v[fn][0]}")
    check(not problems, "; ".join(problems))


# ------------------------------------------------------------ exec

EXEC_N1, EXEC_N2, EXEC_M = 300, 200, 150


def test_exec(tools, run):
    """A program writes, fails to exec a missing program (-1/ENOENT, goes
    on writing), then execs io_child in the same process: the sink sees
    two images of one pid, each with its FINAL frame and its exact totals
    (the failed exec's FINAL frame followed by more frames of the first)."""
    sink = run.start_sink(expect_final=3)  # failed exec, exec, io_child's exit
    argv = [tools.prog("exec_test"), tools.prog("io_child"), str(EXEC_N1), str(EXEC_N2),
            str(EXEC_M)]
    out, secs = run.run_ok(argv, run.env("active"), 30, "exec_test")
    doc = sink.wait(30)
    pid = int(values(out)["pid"][0])
    print(f"exec_test: {secs:.2f} s, pid {pid}")
    problems = []
    images = sorted((p for p in doc["processes"]), key=lambda p: p["image"])
    for p in images:
        print(f"image {p['image']}: pid {p['pid']}, frames {p['frames']}, seqs "
              f"{p['first_seq']}..{p['last_seq']}, final {p['final']}, missing "
              f"{p['missing_seqs']}, stats {p['stats']}")
    if [(p["pid"], p["image"], p["final"]) for p in images] != [(pid, 0, True), (pid, 1, True)]:
        problems.append(f"wanted images 0 and 1 of pid {pid}, each with a FINAL frame")
    if doc["final_frames"] != 3:
        problems.append(f"{doc['final_frames']} FINAL frames, not 3")
    n = EXEC_N1 + EXEC_N2
    want_counter(doc, run.path("a.dat"), "posix", "write", (n, n * 100, 0), problems)
    want_counter(doc, run.path("b.dat"), "posix", "write", (EXEC_M, EXEC_M * 200, 0), problems)
    for name in ("a.dat", "b.dat"):
        ranks = (file_entry(doc, run.path(name)) or {}).get("ranks")
        if ranks != [0]:
            problems.append(f"{name}: ranks {ranks}")
    if doc["rejected"] or any(p["missing_seqs"] or p["duplicate_frames"] for p in images):
        problems.append("frames rejected, missing or duplicated")
    check(not problems, "; ".join(problems))


def test_many_names(tools, run):
    """4000 files with 70-character names, 3 bytes written to each: frames
    full of names alone (as they are at exit, when every name is sent
    again), no crash, and every file's write counted exactly."""
    n = 4000
    sink = run.start_sink(expect_final=1)
    run.run_ok([tools.prog("many_names_test"), str(n)], run.env("active"), 60, "many_names_test")
    doc = sink.wait(30)
    problems = []
    check_final(doc, 1, problems)
    prefix = run.path("file-with-a-long-name")
    files = {f["path"]: f for f in doc["files"] if f["path"].startswith(prefix)}
    if len(files) != n:
        problems.append(f"the sink named {len(files)} of the {n} files")
    bad = [p for p in files if counter(doc, p, "posix", "write")[:2] != (1, 3)]
    if bad:
        problems.append(f"{len(bad)} files not counted as one 3-byte write, e.g. {bad[0]}: "
                        f"{counter(doc, bad[0], 'posix', 'write')}")
    if doc["rejected"]:
        problems.append(f"{doc['rejected']} frames rejected")
    print(f"{len(files)} files named, {n - len(bad)} counted exactly")
    check(not problems, "; ".join(problems))


# ------------------------------------------------------------ descriptor table

BURST_WRITES = 300000


def test_fd_table(tools, run):
    """The sender and nanomsg's workers have a descriptor table of their
    own: they hold nanomsg's socket and not the program's file, the main
    thread holds no socket, eventfd or epoll of the shim's. Then a burst
    of writes and an exit from main straight after it, while the sender
    drains: the last frame still comes, with exact totals (over PUSH;
    run_e2e_* cover the one acknowledged over REQ/REP). A program that
    uses nanomsg itself still can (the sender shares its table then)."""
    problems = []
    out, _ = run.run_ok([tools.prog("fd_table_test"), "table"], run.env("none"), 20,
                        "fd_table_test table (none)", cwd=run.workdir("table-none"))
    print(f"without the shim: {out.split()}")
    sink = run.start_sink(expect_final=1)
    out, _ = run.run_ok([tools.prog("fd_table_test"), "table"], run.env("active"), 20,
                        "fd_table_test table", cwd=run.workdir("table-active"))
    senders = int(values(out)["senders"][0])
    nanomsg = int(values(out)["nanomsg"][0])
    print(f"with the shim: {senders} threads named iopulse-sender, tables not shared, "
          f"{nanomsg} of nanomsg's descriptors in theirs")
    if senders < 2:
        problems.append(f"{senders} threads named iopulse-sender (the sender and nanomsg's "
                        "worker expected)")
    check_final(sink.wait(30), 1, problems)
    # Started without stdin and stderr: the sender's table the same. A
    # /dev/null put on 2 once nanomsg had taken it there replaced its
    # first eventfd, and its worker later aborted the program (SIGABRT in
    # closed_fds_test std, 5 of ~200 runs).
    sink = run.start_sink(expect_final=2, tag="sink-nostd")  # the exec: two images
    out, _ = run.run_ok([tools.prog("fd_table_test"), "nostd"], run.env("active"), 20,
                        "fd_table_test nostd", cwd=run.workdir("table-nostd"))
    nostd, fd2 = int(values(out)["nanomsg"][0]), values(out)["fd2"][0]
    print(f"started without stdin and stderr: {nostd} of nanomsg's descriptors, "
          f"the sender's 2 is {fd2}")
    if fd2 != "/dev/null":
        problems.append(f"started without stdin and stderr, the sender's descriptor 2 is "
                        f"{fd2}, not /dev/null (nanomsg's, replaced once the sender seals "
                        f"its table)")
    elif nostd != nanomsg:
        problems.append(f"started without stdin and stderr, the sender's table holds {nostd} "
                        f"of nanomsg's descriptors, {nanomsg} with them: one was replaced")
    check_final(sink.wait(30), 2, problems)
    sink = run.start_sink(expect_final=1, tag="sink-burst")
    d = run.workdir("burst")
    out, secs = run.run_ok([tools.prog("fd_table_test"), "burst", str(BURST_WRITES)],
                           run.env("active"), 30, "burst", cwd=d)
    doc = sink.wait(30)
    print(f"burst: {secs:.2f} s")
    check_final(doc, 1, problems)
    want_counter(doc, os.path.join(d, "burst.dat"), "posix", "write",
                 (BURST_WRITES, BURST_WRITES, 0), problems)
    # Where unshare is refused (seccomp), the table stays shared and the
    # shim's descriptors are guarded as before: a close loop and
    # close_range, then the table, then the burst.
    launcher = [tools.prog("no_unshare")]
    env = run.env("active", extra={"NO_UNSHARE_PRELOAD": tools.preload()})
    env.pop("LD_PRELOAD")
    p = run.start(launcher + ["/bin/true"], run.env("none"))
    rc, _, err, _ = run.finish(p, 20, "no_unshare /bin/true")
    if rc == 77:
        print(f"no seccomp filter here ({err.strip()}): the refused unshare is not tested")
    else:
        sink = run.start_sink(expect_final=4, tag="sink-no-unshare")
        for argv in (["closed_fds_test", "loop"], ["closed_fds_test", "range"],
                     ["fd_table_test", "shared"]):
            d = run.workdir("no-unshare-" + "-".join(argv))
            out, _ = run.run_ok(launcher + [tools.prog(argv[0])] + argv[1:], env, 30,
                                f"{' '.join(argv)} (unshare refused)", cwd=d)
            print(f"{' '.join(argv)} (unshare refused): {out.split()}")
        d = run.workdir("no-unshare-burst")
        run.run_ok(launcher + [tools.prog("fd_table_test"), "burst", str(BURST_WRITES)], env, 30,
                   "burst (unshare refused)", cwd=d)
        doc = sink.wait(30)
        check_final(doc, 4, problems)
        want_counter(doc, os.path.join(d, "burst.dat"), "posix", "write",
                     (BURST_WRITES, BURST_WRITES, 0), problems)
    # A program linked to nanomsg shares nanomsg's workers with the shim:
    # the sender keeps its table then, and both work.
    sink = run.start_sink(expect_final=1, tag="sink-nn-app")
    d = run.workdir("nn-app")
    out, _ = run.run_ok([tools.prog("nn_app_test")], run.env("active"), 30, "nn_app_test",
                        cwd=d)
    n = int(values(out)["messages"][0])
    doc = sink.wait(30)
    check_final(doc, 1, problems)
    want_counter(doc, os.path.join(d, "echo.dat"), "posix", "write", (n, n * 13, 0), problems)
    check(not problems, "; ".join(problems))


TESTS = {
    "errno_table": test_errno_table,
    "signals": test_signals,
    "fork": test_fork,
    "threads": test_threads,
    "dlopen": test_dlopen,
    "lifecycle": test_lifecycle,
    "collector_absent": test_collector_absent,
    "collector_killed": test_collector_killed,
    "collector_restarted": test_collector_restarted,
    "fatal_signals": test_fatal_signals,
    "closed_fds": test_closed_fds,
    "exits": test_exits,
    "sites": test_sites,
    "aio": test_aio,
    "exec": test_exec,
    "many_names": test_many_names,
    "fd_table": test_fd_table,
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
