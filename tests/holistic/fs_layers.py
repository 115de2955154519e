#!/usr/bin/env python3
"""File systems under MPI-IO and HDF5 (issue 21), each layer's bytes against
what was really moved at that layer. 4 ranks of a Python program (mpi4py,
h5py with the mpio driver) under `iopulse run` and the real launcher, as an
ordinary user where one exists; ranks 0-1 work on /var/tmp (the machine's
disk), ranks 2-3 on /dev/shm (tmpfs), each pair with its own communicator:
  - an IOR-like shared file: each rank writes 8 interleaved 64 KiB blocks
    with MPI_File_write_at_all, then reads them back with read_at_all;
  - an HDF5 file: each rank writes its 100 000 float64 slice of a dataset
    collectively, then reads it back.
Every rank runs under strace (without the shim; strace hands the shim to
the program), which records each read and write system call with its
file's path: the truth at the POSIX layer, independent of iopulse.

Checks:
  - POSIX, per data file: the summary's bytes and calls are strace's;
  - MPI-IO: each shared file's bytes are the blocks the program moved, and
    the HDF5 file's are what reached the file system (the mpio driver goes
    through MPI-IO, which adds nothing here);
  - HDF5: each dataset's bytes are the slices the program moved;
  - the summary's "filesystems" rows (ext4 on the disk, tmpfs) hold, of
    the POSIX and STDIO bytes, exactly those of the files on them, and
    each data file's entry names its mount as findmnt does.
Skipped (77) when mpi4py or h5py is missing, when mpi4py is not built for
this launcher's MPI, or when /dev/shm and /var/tmp are one file system."""
import collections
import glob
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "run-e2e"))
from e2e_common import fail, job_args, job_env  # noqa: E402
from holistic_common import findmnt, remove, run_job, scratch  # noqa: E402

BS, BLOCKS, N = 65536, 8, 100000

PROGRAM = r'''
import os, sys
os.environ.setdefault("H5PY_ALWAYS_USE_MPI", "1")
from mpi4py import MPI
import numpy as np
import h5py
w = MPI.COMM_WORLD
launched = os.environ.get("OMPI_COMM_WORLD_SIZE") or os.environ.get("PMI_SIZE")
if launched and int(launched) != w.Get_size():
    sys.exit("mpi4py of another MPI: each rank a singleton")
rank = w.Get_rank()
comm = w.Split(rank // 2, rank)
d = sys.argv[1 + rank // 2]
BS, BLOCKS, N = %d, %d, %d
size, me = comm.Get_size(), comm.Get_rank()
buf = np.full(BS, rank, dtype=np.uint8)
fh = MPI.File.Open(comm, os.path.join(d, "ior.dat"), MPI.MODE_CREATE | MPI.MODE_RDWR)
for i in range(BLOCKS):
    fh.Write_at_all((i * size + me) * BS, buf)
back = np.empty(BS, dtype=np.uint8)
for i in range(BLOCKS):
    fh.Read_at_all((i * size + me) * BS, back)
    assert (back == rank).all()
fh.Close()
with h5py.File(os.path.join(d, "h.h5"), "w", driver="mpio", comm=comm) as f:
    ds = f.create_dataset("x", (size * N,), dtype="f8")
    ds[me * N:(me + 1) * N] = np.arange(N, dtype="f8") + rank
with h5py.File(os.path.join(d, "h.h5"), "r", driver="mpio", comm=comm) as f:
    assert (f["x"][me * N:(me + 1) * N] == np.arange(N, dtype="f8") + rank).all()
comm.Free()
''' % (BS, BLOCKS, N)

WRITES = {"write", "pwrite64", "writev", "pwritev", "pwritev2"}
READS = {"read", "pread64", "readv", "preadv", "preadv2"}


def strace_totals(trace_dir):
    """Per path: [write bytes, write calls, read bytes, read calls] of the
    successful read and write system calls in the traces (strace -y names
    each descriptor's path; a call split by another thread's line is put
    back together)."""
    call = re.compile(r"^(\d+)\s+(\w+)\(\d+<([^>]*)>")
    resumed = re.compile(r"^(\d+)\s+<\.\.\. (\w+) resumed>")
    ret = re.compile(r"\)\s+=\s+(-?\d+)")
    tot = collections.defaultdict(lambda: [0, 0, 0, 0])
    for fn in glob.glob(os.path.join(trace_dir, "t.*")):
        pending = {}
        with open(fn, errors="replace") as f:
            for line in f:
                m = call.match(line)
                if m:
                    pid, name, path = m.groups()
                    if line.rstrip().endswith("<unfinished ...>"):
                        pending[pid] = (name, path)
                        continue
                else:
                    m = resumed.match(line)
                    if not m or m.group(1) not in pending:
                        continue
                    name, path = pending.pop(m.group(1))
                r = ret.search(line)
                if not r or int(r.group(1)) < 0:
                    continue
                if name in WRITES:
                    tot[path][0] += int(r.group(1))
                    tot[path][1] += 1
                elif name in READS:
                    tot[path][2] += int(r.group(1))
                    tot[path][3] += 1
    return tot


def main():
    args = job_args(__doc__)
    if subprocess.run(["/usr/bin/python3", "-c", "import mpi4py, h5py"],
                      capture_output=True).returncode != 0:
        print("SKIP: needs python3-mpi4py and python3-h5py-mpi")
        sys.exit(77)
    lib = subprocess.run(["/usr/bin/python3", "-c",
                          "from mpi4py import MPI; print(MPI.Get_library_version())"],
                         capture_output=True, text=True).stdout
    if ("mpich" in os.path.basename(args.mpirun).lower()) != ("MPICH" in lib):
        print("SKIP: mpi4py is built for %s, not for %s"
              % (lib.strip().splitlines()[0] if lib.strip() else "?", args.mpirun))
        sys.exit(77)
    tmp, disk, shm = scratch("iop-fsl-", "/var/tmp", "/dev/shm")
    try:
        if findmnt(disk) == findmnt(shm):
            print("SKIP: /dev/shm and /var/tmp are one file system here")
            sys.exit(77)
        prog = os.path.join(tmp, "job.py")
        with open(prog, "w") as f:
            f.write(PROGRAM)
        traces = os.path.join(tmp, "tr")
        os.mkdir(traces)
        os.chmod(traces, 0o777)
        # strace without the shim; the program with it
        script = ('r=${OMPI_COMM_WORLD_RANK:-$PMI_RANK}; exec env -u LD_PRELOAD strace -f -qq -y '
                  '-e trace=%%desc -o %s/t.$r -E LD_PRELOAD="$LD_PRELOAD" /usr/bin/python3 %s %s %s'
                  % (traces, prog, disk, shm))
        summary = os.path.join(tmp, "s.json")
        run_job(args, ["--summary-json", summary], 4, ["sh", "-c", script], job_env(tmp), tmp,
                150)
        with open(summary) as f:
            s = json.load(f)
        truth = strace_totals(traces)
        rows = {}
        for f in s["files"]:
            rows[(f["path"], f["layer"])] = f
        report = []
        for d in (disk, shm):
            mnt = findmnt(d)
            for name in ("ior.dat", "h.h5"):
                path = os.path.join(d, name)
                t = truth.get(path)
                if not t or not t[0] or not t[2]:
                    fail("strace saw no reads or writes of %s: %s" % (path, t))
                posix = rows.get((path, "posix"))
                if not posix:
                    fail("no POSIX entry for %s" % path)
                got = [posix["write_bytes"], posix["write_ops"], posix["read_bytes"],
                       posix["read_ops"]]
                if got != t:
                    fail("%s POSIX: iopulse says write %d B in %d calls, read %d B in %d; "
                         "strace %s" % (path, *got, t))
                if posix.get("mount") != mnt[0]:
                    fail("%s: mount %s, findmnt says %s" % (path, posix.get("mount"), mnt[0]))
                mpiio = rows.get((path, "mpiio"))
                moved = 2 * BLOCKS * BS if name == "ior.dat" else None
                want = [moved, moved] if moved else [t[0], t[2]]
                if not mpiio or [mpiio["write_bytes"], mpiio["read_bytes"]] != want:
                    fail("%s MPI-IO: %s, want write and read %s" % (path, mpiio, want))
                report.append("%s POSIX w %d r %d (strace), MPI-IO w %d r %d"
                              % (path, t[0], t[2], want[0], want[1]))
            ds = rows.get((os.path.join(d, "h.h5") + ":/x", "hdf5"))
            if not ds or ds["write_bytes"] != 2 * N * 8 or ds["read_bytes"] != 2 * N * 8:
                fail("%s/h.h5:/x HDF5: %s, want write and read %d" % (d, ds, 2 * N * 8))
            # the file system's row: POSIX and STDIO bytes of its files
            fs = [r for r in s.get("filesystems", [])
                  if (r["mount"], r["type"], r["device"]) == mnt]
            if len(fs) != 1:
                fail("no filesystems row %s in %s" % (mnt, s.get("filesystems")))
            on = [f for f in s["files"] if f.get("mount") == mnt[0] and
                  f["layer"] in ("posix", "stdio")]
            for k in ("write_bytes", "read_bytes", "write_ops", "read_ops"):
                if fs[0][k] != sum(f[k] for f in on):
                    fail("%s %s: the row says %d, its files %d"
                         % (mnt[0], k, fs[0][k], sum(f[k] for f in on)))
            report.append("%s (%s, %s): w %d r %d" % (mnt[0], mnt[1], mnt[2],
                                                      fs[0]["write_bytes"], fs[0]["read_bytes"]))
        print("OK:\n  " + "\n  ".join(report))
    finally:
        remove(disk, shm, tmp)


if __name__ == "__main__":
    main()
