#!/usr/bin/python3
"""End-to-end test of libiopulse.so: one example program under the shim,
sending to a real nanomsg receiver (iop-sink), with exact totals.

    run_example.py --sink IOP_SINK --shim LIBIOPULSE --mpirun LAUNCHER --ranks N
                   [--mode normal|wrong-key|no-collector] [--check-hdf5]
                   [--expect-children] [--check-sites] [--keep] -- PROGRAM [ARGS...]

The program is started by the MPI launcher (OpenMPI's mpirun or MPICH's
mpiexec, told apart by the launcher's name or --flavor) with the shim
preloaded and `-d DIR` appended, DIR being inside a fresh temporary
directory that also holds the sink's ipc:// socket. Every rank prints one
JSON truth line (examples/README.md); the sink writes a JSON summary
(tests/support/sink_json.c). Both are compared:

  1. the program exited 0, each rank printed one truth line, the sink got
     exactly N FINAL frames, rejected nothing and missed no frame;
  2. per (path, layer) of the truth, summed over ranks, the sink's counters
     have exactly the read/write ops and bytes, and the ranks the sink lists
     for the path are the ranks that reported it;
  3. nothing was dropped, and then events add up to the counters, per file,
     layer and class;
  4. nesting: no orphans or mismatches; MPI-IO examples link every child;
  5. POSIX under MPI-IO: the posix write bytes on an MPI-IO file cover its
     size on disk (on a sparse HDF5 file: its data and its non-zero bytes);
  6. nothing outside the temporary directory but <stdout>/<stderr>/<stdin>
     is reported with write bytes (the MPI runtime's own files are not the
     application's writes);
  7. call sites: every event carries a named site, each site is named the
     same in every rank (one entry, job-wide); with --check-sites, the
     truth's "sites" list (per function: layer, class, ops, bytes, summed
     over ranks) equals the events of the sink's sites named
     "FUNCTION+0x... (PROGRAM)".

The hdf5 layer is not implemented by the shim yet: its totals are skipped
(with a SKIP line) unless --check-hdf5 is given. Two negative modes check
that the application is unharmed: wrong-key (the shim's key differs from
the sink's: every frame is rejected as BAD_MAC) and no-collector (nobody
listens on IOPULSE_ADDR: the run still ends quickly, within twice the run
time of the same job without the shim plus 5 s). Their truth is checked
against what fpp must print, so they expect fpp.

Standard library only, for Debian's /usr/bin/python3. Exit status: 0 pass,
1 fail, 2 bad usage.
"""

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

LAYERS = ("posix", "stdio", "mpiio", "hdf5")
CLASSES = ("read", "write", "meta")
STD_STREAMS = ("<stdout>", "<stderr>", "<stdin>")

PROGRAM_TIMEOUT_S = 60   # the launcher and all ranks
SINK_READY_TIMEOUT_S = 10
SINK_DRAIN_TIMEOUT_S = 15  # after the program: the FINAL frames are already sent
# Without a collector the shim may add its bounded waits (250 ms sends at
# MPI_Finalize and exit) and no more than this, over twice what the same
# job took without the shim just before and after it (a loaded machine
# slows both: CI once took 13 s where an idle one takes 0.8).
NO_COLLECTOR_EXTRA_S = 5
WRONG_KEY_SINK_S = 5


class Checks:
    """Collects the outcome of every check; a failure says expected vs got."""

    def __init__(self):
        self.failures = 0

    def expect(self, check, cond, what, expected=None, got=None):
        if cond:
            return True
        self.failures += 1
        detail = "" if expected is None and got is None else \
            f": expected {expected}, got {got}"
        print(f"FAIL [{check}] {what}{detail}")
        return False

    def equal(self, check, what, expected, got):
        return self.expect(check, expected == got, what, expected, got)


# ------------------------------------------------------------- processes

def kill_group(proc):
    """Ends the process group of a process this script started: SIGTERM
    first (a launcher passes it on to its ranks), SIGKILL if that fails."""
    for sig, grace in ((signal.SIGTERM, 5), (signal.SIGKILL, None)):
        if proc.poll() is not None:
            break
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            pass
    proc.wait()


def start_sink(args, tmp, url, key, expect_final, timeout_s, idle_ms):
    out = os.path.join(tmp, "sink.json")
    ready = os.path.join(tmp, "sink.ready")
    cmd = [args.sink, "--url", url, "--key", key, "--out", out,
           "--expect-final", str(expect_final), "--timeout-s", str(timeout_s),
           "--idle-ms", str(idle_ms), "--ready", ready]
    err = open(os.path.join(tmp, "sink.stderr"), "w")
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err,
                            start_new_session=True)
    err.close()
    deadline = time.monotonic() + SINK_READY_TIMEOUT_S
    while not os.path.exists(ready):
        if proc.poll() is not None or time.monotonic() > deadline:
            kill_group(proc)
            raise RuntimeError(f"iop-sink did not become ready (status {proc.returncode}): "
                               + read_text(os.path.join(tmp, "sink.stderr")))
        time.sleep(0.02)
    return proc, out


def finish_sink(proc, out, tmp):
    """Waits for the sink to stop by itself; asks it to stop (it still
    writes its summary) and then kills it if it does not."""
    try:
        proc.wait(timeout=SINK_DRAIN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        print(f"note: iop-sink still running {SINK_DRAIN_TIMEOUT_S} s after the program: stopping it")
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            kill_group(proc)
    errs = read_text(os.path.join(tmp, "sink.stderr"))
    if errs.strip():
        print("iop-sink stderr:\n" + indent(errs))
    if proc.returncode != 0 or not os.path.exists(out):
        raise RuntimeError(f"iop-sink failed (status {proc.returncode}), no summary")
    with open(out) as f:
        return json.load(f)


def launcher_cmd(args, env):
    """The launcher's command line; env goes to the ranks only."""
    n = str(args.ranks)
    if args.flavor == "mpich":
        cmd = [args.mpirun, "-n", n]
        for k, v in env.items():
            cmd += ["-genv", k, v]
    else:
        cmd = [args.mpirun, "--oversubscribe", "-n", n]
        for k, v in env.items():
            cmd += ["-x", f"{k}={v}"]
    return cmd + args.program


def run_program(args, env):
    """Runs the job; returns (status, stdout, stderr, seconds)."""
    launch_env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
                      OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    launch_env.pop("LD_PRELOAD", None)
    cmd = launcher_cmd(args, env)
    print("run: " + " ".join(cmd))
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=launch_env, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=PROGRAM_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        try:  # a rank that outlived its launcher may still hold the pipes
            out, err = proc.communicate(timeout=5)
        except subprocess.TimeoutExpired:
            out, err = "", ""
        err += f"\n(killed after {PROGRAM_TIMEOUT_S} s)"
        return -1, out, err, time.monotonic() - t0
    return proc.returncode, out, err, time.monotonic() - t0


def read_text(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def indent(text, limit=4000):
    text = text if len(text) <= limit else text[:limit] + "\n..."
    return "\n".join("  | " + line for line in text.rstrip().splitlines())


# ------------------------------------------------------------------ truth

def parse_truth(chk, stdout, ranks):
    """{rank: truth object} from the ranks' lines (check 1)."""
    truth = {}
    for line in stdout.splitlines():
        if not line.strip():
            continue
        try:
            t = json.loads(line)
        except ValueError:
            chk.expect(1, False, f"stdout line is not a truth line: {line[:200]!r}")
            continue
        r = t.get("rank") if isinstance(t, dict) else None
        if not chk.expect(1, isinstance(r, int), f"truth line without a rank: {line[:200]!r}"):
            continue
        chk.expect(1, r not in truth, f"rank {r} printed more than one truth line")
        truth[r] = t
    chk.equal(1, "ranks that printed a truth line", list(range(ranks)), sorted(truth))
    return truth


def truth_sums(truth):
    """{(path, layer): {"write_ops",...}} summed over ranks, and
    {path: set of ranks with non-zero activity on it}."""
    sums, ranks = {}, {}
    for r, t in truth.items():
        for f in t.get("files", []):
            key = (f["path"], f["layer"])
            s = sums.setdefault(key, dict.fromkeys(
                ("write_ops", "write_bytes", "read_ops", "read_bytes"), 0))
            for k in s:
                s[k] += f.get(k, 0)
            if any(f.get(k, 0) for k in s):
                ranks.setdefault(f["path"], set()).add(r)
    return sums, ranks


def fpp_expected(program, datadir, rank):
    """The truth line fpp must print for its options (examples/README.md)."""
    n, s = 64, 1024
    argv = program[1:]
    for i, a in enumerate(argv[:-1]):
        if a == "-n":
            n = int(argv[i + 1])
        elif a == "-s":
            s = int(argv[i + 1])
    path = os.path.join(os.path.realpath(datadir), f"fpp.{rank}")
    return {"path": path, "layer": "posix", "write_bytes": n * s, "write_ops": n,
            "read_bytes": n * s, "read_ops": n}


def check_fpp_truth(chk, args, truth, datadir):
    """The application is unharmed: fpp's truth and files are what they
    must be whatever the shim did."""
    before = chk.failures
    for r in range(args.ranks):
        want = fpp_expected(args.program, datadir, r)
        got = truth.get(r, {}).get("files")
        chk.equal(1, f"fpp rank {r} truth files", [want], got)
        try:
            size = os.stat(want["path"]).st_size
        except OSError as e:
            size = f"missing ({e.strerror})"
        chk.equal(1, f"size of {want['path']}", want["write_bytes"], size)
    if chk.failures == before:
        w = fpp_expected(args.program, datadir, 0)
        print(f"  fpp truth and files as its options say: {args.ranks} ranks x "
              f"w {w['write_ops']} ops {w['write_bytes']} B, r {w['read_ops']} ops "
              f"{w['read_bytes']} B")


# ------------------------------------------------------------- sink view

def cls_get(tree, layer, cls, field):
    return tree.get(layer, {}).get(cls, {}).get(field, 0)


def sink_files(doc):
    """{path: entry} of the FILE names in the summary."""
    return {f["path"]: f for f in doc.get("files", []) if f.get("kind") == "file"}


def hdf5_counters(doc, files, path):
    """The hdf5 counters of a file, per class: the file's own row, or, when
    that has none of the class (the shim keeps transfers per dataset), the
    sum over its "<path>:<dataset>" rows."""
    own = files.get(path, {}).get("counters", {}).get("hdf5", {})
    datasets = {}
    for f in doc.get("files", []):
        if f.get("kind") == "dataset" and f["path"].startswith(path + ":"):
            for cls, v in f.get("counters", {}).get("hdf5", {}).items():
                t = datasets.setdefault(cls, {"ops": 0, "bytes": 0})
                t["ops"] += v.get("ops", 0)
                t["bytes"] += v.get("bytes", 0)
    return {cls: own[cls] if own.get(cls, {}).get("ops") else datasets.get(cls, {})
            for cls in CLASSES}


# ----------------------------------------------------------------- checks

def check_delivery(chk, doc, ranks):
    """Check 1, the sink's side: N FINAL frames, one per rank process."""
    chk.equal(1, "sink stop reason", "expect_final", doc.get("stop_reason"))
    chk.equal(1, "final frames", ranks, doc.get("final_frames"))
    chk.equal(1, "rejected frames", {}, doc.get("rejected"))
    procs = doc.get("processes", [])
    chk.equal(1, "ranks of the processes that sent frames", list(range(ranks)),
              sorted(p["rank"] for p in procs))
    for p in procs:
        who = f"rank {p['rank']} pid {p['pid']}"
        chk.expect(1, p.get("final"), f"{who} sent no FINAL frame")
        chk.equal(1, f"{who} missing_seqs", 0, p.get("missing_seqs"))
        chk.equal(1, f"{who} unknown_ids", 0, p.get("unknown_ids"))
        chk.equal(1, f"{who} duplicate_frames", 0, p.get("duplicate_frames"))


def check_totals(chk, args, doc, truth):
    """Check 2: the truth's totals per (path, layer) and ranks per path."""
    sums, ranks = truth_sums(truth)
    files = sink_files(doc)
    for (path, layer), want in sorted(sums.items()):
        entry = files.get(path)
        if not chk.expect(2, entry is not None, f"{path} is not in the sink's files"):
            continue
        if layer == "hdf5" and not args.check_hdf5:
            print(f"SKIP (--check-hdf5 not given) hdf5 layer: totals of {path} "
                  f"(truth: write {want['write_ops']} ops {want['write_bytes']} B, "
                  f"read {want['read_ops']} ops {want['read_bytes']} B)")
            continue
        tree = {"hdf5": hdf5_counters(doc, files, path)} if layer == "hdf5" \
            else entry.get("counters", {})
        got = {f"{c}_{k}": cls_get(tree, layer, c, k)
               for c in ("write", "read") for k in ("ops", "bytes")}
        print(f"  {path} [{layer}] truth w {want['write_ops']} ops {want['write_bytes']} B, "
              f"r {want['read_ops']} ops {want['read_bytes']} B; "
              f"sink w {got['write_ops']} ops {got['write_bytes']} B, "
              f"r {got['read_ops']} ops {got['read_bytes']} B")
        for k, v in want.items():
            chk.equal(2, f"{path} {layer} {k}", v, got[k])
    for path, want_ranks in sorted(ranks.items()):
        entry = files.get(path)
        if entry is not None:
            chk.equal(2, f"ranks listed for {path}", sorted(want_ranks),
                      sorted(entry.get("ranks", [])))


def check_events(chk, doc):
    """Check 3: nothing dropped, so events add up to the counters."""
    dropped = {p["rank"]: p["stats"]["dropped"] for p in doc.get("processes", [])}
    if not chk.equal(3, "events dropped per rank", {r: 0 for r in dropped}, dropped):
        return
    for f in doc.get("files", []):
        c, e = f.get("counters", {}), f.get("events", {})
        for layer in LAYERS:
            for cls in CLASSES:
                for k in ("ops", "bytes"):
                    chk.equal(3, f"{f['path'] or '(no file)'} {layer} {cls} {k}: "
                              "event sum (got) vs counter (expected)",
                              cls_get(c, layer, cls, k), cls_get(e, layer, cls, k))
    for layer, classes in doc.get("layers", {}).items():
        for cls, v in classes.items():
            for k in ("ops", "bytes"):
                chk.equal(3, f"layer total {layer} {cls} {k}: event sum (got) vs "
                          "counter (expected)",
                          v.get(f"counter_{k}"), v.get(f"event_{k}"))


def check_nesting(chk, args, doc, truth):
    """Check 4: every child has its parent and adds up to what it says."""
    n = doc.get("nesting", {})
    for k in ("orphans", "child_ops_mismatch", "child_bytes_mismatch"):
        chk.equal(4, f"nesting {k}", 0, n.get(k))
    layers = {f["layer"] for t in truth.values() for f in t.get("files", [])}
    if args.expect_children or "mpiio" in layers:
        chk.expect(4, n.get("children", 0) > 0,
                   "MPI-IO example: POSIX children of MPI-IO calls", "> 0", n.get("children"))
        chk.equal(4, "linked children", n.get("children"), n.get("linked"))


def check_posix_under_mpiio(chk, doc, truth):
    """Check 5: whatever collective buffering does, every byte of an MPI-IO
    file reached it through a POSIX write of some rank.

    The examples' MPI-IO files are dense, so the bytes cover the size. An
    HDF5 file is sparse (space HDF5 allocates but never writes reads as
    zeros), so there the bytes must cover what the application wrote
    through HDF5 and every non-zero byte of the file."""
    files = sink_files(doc)
    sums, _ = truth_sums(truth)
    for (path, layer), want in sorted(sums.items()):
        if layer not in ("mpiio", "hdf5"):
            continue
        written = cls_get(files.get(path, {}).get("counters", {}), "posix", "write", "bytes")
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as e:
            chk.expect(5, False, f"cannot read {path}: {e.strerror}")
            continue
        if layer == "mpiio":
            print(f"  {path}: posix write bytes {written}, size on disk {len(data)}")
            chk.expect(5, written >= len(data), f"posix write bytes on {path} cover its size",
                       f">= {len(data)}", written)
            continue
        nonzero = len(data) - data.count(0)
        print(f"  {path}: posix write bytes {written}, hdf5 truth write bytes "
              f"{want['write_bytes']}, non-zero bytes on disk {nonzero} (size {len(data)})")
        chk.expect(5, written >= want["write_bytes"],
                   f"posix write bytes on {path} cover the HDF5 data written",
                   f">= {want['write_bytes']}", written)
        chk.expect(5, written >= nonzero,
                   f"posix write bytes on {path} cover its non-zero bytes", f">= {nonzero}",
                   written)


def check_sites(chk, args, doc, truth):
    """Check 7: sites are named, once job-wide; the truth's per function."""
    sites = doc.get("sites", [])
    chk.equal(7, "events without a named site", 0, doc.get("unnamed_site_events"))
    chk.expect(7, sites, "the sink lists call sites", "some", "none")
    names = [s["name"] for s in sites]
    chk.equal(7, "site names listed twice", [], sorted({n for n in names if names.count(n) > 1}))
    if not args.check_sites:
        return
    program = os.path.basename(args.program[0])
    want = {}
    for t in truth.values():
        for s in t.get("sites", []):
            key = (s["function"], s["layer"], s["class"])
            w = want.setdefault(key, {})
            for k in ("ops", "bytes"):
                if k in s:
                    w[k] = w.get(k, 0) + s[k]
    for (fn, layer, cls), w in sorted(want.items()):
        mine = [s for s in sites if s["name"].startswith(fn + "+0x")
                and s["name"].endswith(f" ({program})")]
        got = {k: sum(cls_get(s.get("events", {}), layer, cls, k) for s in mine) for k in w}
        print(f"  site {fn} [{layer} {cls}]: {[s['name'] for s in mine]}, "
              f"truth {w}, sink {got}")
        chk.expect(7, mine, f"a site named {fn}+0x... ({program})", "present", "absent")
        chk.equal(7, f"events of {fn} {layer} {cls}", w, got)
        for s in mine:
            chk.equal(7, f"ranks of site {s['name']}", list(range(args.ranks)), s.get("ranks"))


def check_foreign_writes(chk, doc, tmp):
    """Check 6: only the test's own files and the std streams are written."""
    roots = {os.path.realpath(tmp) + "/", tmp.rstrip("/") + "/"}
    bad = []
    for f in doc.get("files", []):
        path = f["path"]
        written = sum(cls_get(f.get(view, {}), layer, "write", "bytes")
                      for view in ("counters", "events") for layer in LAYERS)
        if written == 0 or path in STD_STREAMS:
            continue
        if not any(path.startswith(r) for r in roots):
            bad.append(f"{path or '(no file)'} ({f.get('kind')}, ranks {f.get('ranks')}, "
                       f"{json.dumps(f.get('counters'))})")
    if not chk.expect(6, not bad, f"files outside {tmp} reported with write bytes "
                      "(besides <stdout>, <stderr>, <stdin>)", "none", f"{len(bad)} file(s)"):
        print("\n".join("    " + b for b in bad))


# ------------------------------------------------------------------ modes

def shim_env(args, url, key):
    preload = os.path.realpath(args.shim)
    env = {"IOPULSE_ADDR": url, "IOPULSE_KEY": key, "IOPULSE_JOB": os.urandom(8).hex()}
    if args.asan_runtime:
        # a sanitizer build's shim: ASan's runtime must come first, and the
        # MPI runtime's own leaks are not ours to report
        preload = args.asan_runtime + ":" + preload
        env["ASAN_OPTIONS"] = "detect_leaks=0"
    env["LD_PRELOAD"] = preload
    return env


def run_normal(chk, args, tmp, datadir):
    url, key = f"ipc://{tmp}/sink.ipc", os.urandom(16).hex()
    sink, out = start_sink(args, tmp, url, key, args.ranks, PROGRAM_TIMEOUT_S,
                           PROGRAM_TIMEOUT_S * 1000)
    try:
        status, stdout, stderr, secs = run_program(args, shim_env(args, url, key))
    except BaseException:
        kill_group(sink)
        raise
    report_program(chk, status, stderr, secs)
    if status != 0:
        kill_group(sink)
        return
    truth = parse_truth(chk, stdout, args.ranks)
    doc = finish_sink(sink, out, tmp)
    print(f"sink: {doc.get('frames')} frames, {doc.get('final_frames')} final, "
          f"{doc.get('events')} events, {len(doc.get('processes', []))} processes, "
          f"{len(doc.get('files', []))} names, nesting {json.dumps(doc.get('nesting'))}")
    if truth and all(t.get("example") == "fpp" for t in truth.values()):
        check_fpp_truth(chk, args, truth, datadir)
    check_delivery(chk, doc, args.ranks)
    check_totals(chk, args, doc, truth)
    check_events(chk, doc)
    check_nesting(chk, args, doc, truth)
    check_posix_under_mpiio(chk, doc, truth)
    check_foreign_writes(chk, doc, tmp)
    check_sites(chk, args, doc, truth)


def run_wrong_key(chk, args, tmp, datadir):
    url = f"ipc://{tmp}/sink.ipc"
    sink_key, shim_key = os.urandom(16).hex(), os.urandom(16).hex()
    sink, out = start_sink(args, tmp, url, sink_key, args.ranks, WRONG_KEY_SINK_S, 2000)
    try:
        status, stdout, stderr, secs = run_program(args, shim_env(args, url, shim_key))
    except BaseException:
        kill_group(sink)
        raise
    report_program(chk, status, stderr, secs)
    truth = parse_truth(chk, stdout, args.ranks)
    check_fpp_truth(chk, args, truth, datadir)
    doc = finish_sink(sink, out, tmp)
    rejected = doc.get("rejected", {})
    print(f"sink: {doc.get('frames')} frames accepted, rejected {json.dumps(rejected)}")
    chk.expect(1, rejected.get("BAD_MAC", 0) > 0, "frames rejected as BAD_MAC", "> 0",
               rejected.get("BAD_MAC", 0))
    chk.equal(1, "final frames accepted with the wrong key", 0, doc.get("final_frames"))
    chk.equal(1, "frames accepted with the wrong key", 0, doc.get("frames"))


def baseline_secs(args):
    """Seconds the job takes without the shim (its run time here, now)."""
    env = {}
    if args.asan_runtime:
        env = {"LD_PRELOAD": args.asan_runtime, "ASAN_OPTIONS": "detect_leaks=0"}
    status, _, stderr, secs = run_program(args, env)
    if status != 0:
        raise RuntimeError(f"the job without the shim exited {status}:\n{indent(stderr)}")
    return secs


def run_no_collector(chk, args, tmp, datadir):
    url = f"ipc://{tmp}/nobody.ipc"
    before = baseline_secs(args)
    status, stdout, stderr, secs = run_program(
        args, shim_env(args, url, os.urandom(16).hex()))
    report_program(chk, status, stderr, secs)
    truth = parse_truth(chk, stdout, args.ranks)
    check_fpp_truth(chk, args, truth, datadir)
    plain = max(before, baseline_secs(args))
    limit = 2 * plain + NO_COLLECTOR_EXTRA_S
    chk.expect(1, secs < limit, "run time without a collector",
               f"< {limit:.2f} s (without the shim: {plain:.2f} s)", f"{secs:.2f} s")


def report_program(chk, status, stderr, secs):
    print(f"program: status {status}, {secs:.2f} s")
    if not chk.equal(1, "program exit status", 0, status) and stderr.strip():
        print("program stderr:\n" + indent(stderr))


# ------------------------------------------------------------------- main

def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sink", required=True, help="iop-sink executable")
    p.add_argument("--shim", required=True, help="libiopulse.so")
    p.add_argument("--mpirun", required=True, help="MPI launcher (mpirun.openmpi, mpiexec.mpich)")
    p.add_argument("--flavor", choices=("openmpi", "mpich"),
                   help="launcher kind (default: from the launcher's name)")
    p.add_argument("--ranks", type=int, default=2)
    p.add_argument("--mode", choices=("normal", "wrong-key", "no-collector"), default="normal")
    p.add_argument("--check-hdf5", action="store_true",
                   help="also compare the hdf5 layer's totals (once the shim has it)")
    p.add_argument("--expect-children", action="store_true",
                   help="require linked POSIX children even without an mpiio truth entry")
    p.add_argument("--check-sites", action="store_true",
                   help="compare the truth's per-function \"sites\" with the sink's call sites")
    p.add_argument("--keep", action="store_true", help="keep the temporary directory")
    p.add_argument("--asan-runtime", default="",
                   help="libasan.so to preload first (sanitizer builds)")
    p.add_argument("program", nargs="+", help="-- PROGRAM [ARGS...]")
    args = p.parse_args(argv)
    if args.flavor is None:
        name = os.path.basename(args.mpirun)
        args.flavor = "mpich" if "mpich" in name or "hydra" in name else "openmpi"
    return args


def main(argv):
    args = parse_args(argv)
    tmp = tempfile.mkdtemp(prefix="iop-e2e-", dir="/tmp")
    datadir = os.path.join(tmp, "data")
    args.program = args.program + ["-d", datadir]
    chk = Checks()
    script = os.path.basename(args.program[0]).startswith("python")
    name = os.path.basename(args.program[1] if script else args.program[0])
    print(f"== {name} ({args.mode}, {args.ranks} ranks, {args.flavor}) in {tmp}")
    modes = {"normal": run_normal, "wrong-key": run_wrong_key,
             "no-collector": run_no_collector}
    try:
        modes[args.mode](chk, args, tmp, datadir)
    except RuntimeError as e:
        chk.expect(0, False, str(e))
    finally:
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    print(f"== {name}: " + ("ok" if chk.failures == 0 else f"FAILED ({chk.failures} checks)"))
    return 0 if chk.failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
