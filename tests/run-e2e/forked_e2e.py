#!/usr/bin/env python3
"""The I/O of processes a rank forks, under the real `iopulse run`.

A forked child records as a process of its own (docs/shim.md, "fork"):
before, its I/O was not counted at all. Two programs written by others,
each under the real launcher with 2 ranks, headless, every file in the
summary (--summary-files all):

- fio in its default mode, which forks a process per job: 2 jobs a rank,
  4 files of 256 KiB each, 4 KiB psync writes;
- Debian's Python with multiprocessing's fork start method: each rank
  writes a file of its own, then a pool of 3 forked workers writes 6 files
  (os.write, sizes known), and the rank reads them all back after the pool
  has ended (its workers leave through os._exit, without atexit).

Checks, against what was really moved (the files on disk, the programs'
own counts):
- every file's POSIX write bytes and calls in the summary equal its size
  and the calls made; the ranks' own files are counted once (a child
  inherits its parent's counters and rings: sending them again would
  count them twice);
- the POSIX layer's write totals are the sums of those files, and the
  Python ranks' read-back equals what the workers wrote;
- nothing dropped.

Usage: forked_e2e.py --iopulse IOPULSE --mpirun LAUNCHER [--case fio|python]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

TIMEOUT_S = 120
RANKS = 2
FIO_JOBS, FIO_FILES, FIO_SIZE, FIO_BS = 2, 4, 256 * 1024, 4096
PY_WORKERS, PY_FILES, PY_WRITES = 3, 6, 40

POOL = r'''
import multiprocessing as mp, os, sys
d, rank = sys.argv[1], os.environ.get("OMPI_COMM_WORLD_RANK") or os.environ.get("PMI_RANK")
files, writes = int(sys.argv[2]), int(sys.argv[3])

def work(i):
    path = os.path.join(d, "r%s_w%d.dat" % (rank, i))
    fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
    size = 1000 + 100 * i
    for _ in range(writes):
        os.write(fd, b"x" * size)
    os.close(fd)
    return path, writes, writes * size

own = os.path.join(d, "r%s_own.dat" % rank)
fd = os.open(own, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
for _ in range(10):
    os.write(fd, b"o" * 512)
os.close(fd)
with mp.get_context("fork").Pool(%(workers)d) as pool:
    done = pool.map(work, range(files))
read = 0
for path, _, _ in done:
    fd = os.open(path, os.O_RDONLY)
    while True:
        b = os.read(fd, 65536)
        if not b:
            break
        read += len(b)
    os.close(fd)
for path, n, nbytes in done:
    print("truth %s %d %d" % (path, n, nbytes))
print("truth %s 10 5120" % own)
print("read_back %s %d" % (rank, read))
'''.replace("%(workers)d", str(PY_WORKERS))


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def run_job(args, tmp, name, argv):
    live = os.path.join(tmp, name + ".json")
    launch = [args.mpirun, "-n", str(RANKS)]
    if "mpich" not in os.path.basename(args.mpirun):
        launch.insert(1, "--oversubscribe")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    p = subprocess.run([args.iopulse, "run", "--headless", "--summary-json", live,
                        "--summary-files", "all", "--"] + launch + argv,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                       text=True, timeout=TIMEOUT_S, env=env)
    if p.returncode != 0:
        fail("%s: the job exited %d: %s" % (name, p.returncode, p.stderr[-2000:]))
    with open(live) as f:
        return p.stdout, json.load(f)


def posix_files(live, under):
    return {f["path"]: f for f in live["files"]
            if f["layer"] == "posix" and f["path"].startswith(under + "/")
            and not os.path.isdir(f["path"])}


def check_files(name, live, under, truth):
    """truth: {path: (write calls, write bytes)}."""
    got = posix_files(live, under)
    if set(got) != set(truth):
        fail("%s: the summary's files %s, the job's %s"
             % (name, sorted(set(got) ^ set(truth))[:6], len(truth)))
    for path, (n, nbytes) in sorted(truth.items()):
        f = got[path]
        if (f["write_ops"], f["write_bytes"]) != (n, nbytes):
            fail("%s: %s: the summary has %d writes, %d bytes; the job made %d, %d"
                 % (name, path, f["write_ops"], f["write_bytes"], n, nbytes))
    mon = live["monitor"]
    if mon["dropped"] or mon["rejected_frames"]:
        fail("%s: dropped or rejected: %s" % (name, mon))
    print("%s: %d files, each exact (%d writes, %d bytes in all); monitor %s"
          % (name, len(truth), sum(n for n, _ in truth.values()),
             sum(b for _, b in truth.values()), mon))


def case_fio(args, tmp):
    data = os.path.join(tmp, "fio")
    os.mkdir(data)
    fio = ("d=%s/r${OMPI_COMM_WORLD_RANK:-$PMI_RANK}; mkdir -p $d && exec fio --name=j "
           "--directory=$d --nrfiles=%d --filesize=%d --bs=%d --rw=write --ioengine=psync "
           "--numjobs=%d --output=/dev/null" % (data, FIO_FILES, FIO_SIZE, FIO_BS, FIO_JOBS))
    _, live = run_job(args, tmp, "fio", ["sh", "-c", fio])
    on_disk = [os.path.join(r, n) for r, _, ns in os.walk(data) for n in ns]
    if len(on_disk) != RANKS * FIO_JOBS * FIO_FILES:
        fail("fio made %d files, not %d" % (len(on_disk), RANKS * FIO_JOBS * FIO_FILES))
    truth = {}
    for path in on_disk:
        size = os.path.getsize(path)
        if size != FIO_SIZE:
            fail("%s holds %d bytes, not %d" % (path, size, FIO_SIZE))
        truth[path] = (size // FIO_BS, size)
    check_files("fio (forked jobs)", live, data, truth)
    posix = live["layers"]["posix"]
    want = sum(b for _, b in truth.values())
    if posix["write_bytes"] != want:
        fail("fio: posix wrote %d bytes, the files hold %d" % (posix["write_bytes"], want))


def case_python(args, tmp):
    data = os.path.join(tmp, "py")
    os.mkdir(data)
    script = os.path.join(tmp, "pool.py")
    with open(script, "w") as f:
        f.write(POOL)
    out, live = run_job(args, tmp, "python",
                        ["/usr/bin/python3", script, data, str(PY_FILES), str(PY_WRITES)])
    truth, read_back = {}, 0
    for line in out.splitlines():
        w = line.split()
        if w and w[0] == "truth":
            truth[w[1]] = (int(w[2]), int(w[3]))
        elif w and w[0] == "read_back":
            read_back += int(w[2])
    if len(truth) != RANKS * (PY_FILES + 1):
        fail("python: %d truth lines, not %d: %s" % (len(truth), RANKS * (PY_FILES + 1), out))
    for path, (_, nbytes) in truth.items():
        if os.path.getsize(path) != nbytes:
            fail("%s holds %d bytes, not %d" % (path, os.path.getsize(path), nbytes))
    check_files("python multiprocessing (fork)", live, data, truth)
    files = posix_files(live, data)
    got_read = sum(f["read_bytes"] for f in files.values())
    workers = sum(b for p, (_, b) in truth.items() if "_w" in os.path.basename(p))
    if got_read != read_back or read_back != workers:
        fail("python: read back %d bytes (the ranks say %d, the workers wrote %d)"
             % (got_read, read_back, workers))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iopulse", required=True)
    ap.add_argument("--mpirun", required=True)
    ap.add_argument("--case", choices=("fio", "python"), action="append")
    args = ap.parse_args()
    cases = args.case or ["fio", "python"]
    if "fio" in cases and not shutil.which("fio"):
        fail("fio is not installed (scripts/install-deps installs it)")
    with tempfile.TemporaryDirectory(prefix="iop-forked-") as tmp:
        if "fio" in cases:
            case_fio(args, tmp)
        if "python" in cases:
            case_python(args, tmp)
    print("PASS")


if __name__ == "__main__":
    main()
