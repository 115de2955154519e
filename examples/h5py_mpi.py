#!/usr/bin/python3
"""h5py_mpi.py: parallel HDF5 from Python (mpi4py + h5py, driver='mpio').

Each rank writes its slice of one float64 dataset (N values per rank) of
DIR/py.h5 collectively, closes the file, reopens it and reads its slice back
collectively, checking it. h5py calls H5Dwrite / H5Dread once per slice
assignment / slice read, so each rank makes one of each.

usage: mpirun -n 4 /usr/bin/python3 h5py_mpi.py [-d DIR] [-n N]

Truth (one stdout line per rank):
  {"example":"h5py_mpi","rank":R,"files":[{"path":"/abs/py.h5","layer":"hdf5",
   "write_bytes":N*8,"write_ops":1,"read_bytes":N*8,"read_ops":1}]}

Runs with Debian's python3-mpi4py and python3-h5py-mpi, both built for
OpenMPI. Debian's h5py picks its MPI build only when it sees an MPI
launcher's environment; H5PY_ALWAYS_USE_MPI makes it do so for a
single-process run too.
"""
import argparse
import json
import os
import sys

os.environ.setdefault("H5PY_ALWAYS_USE_MPI", "1")

from mpi4py import MPI  # noqa: E402  (must come after the environment is set)
import numpy as np  # noqa: E402
import h5py  # noqa: E402


def die(rank, msg):
    sys.stderr.write("h5py_mpi: rank %d: %s\n" % (rank, msg))
    sys.stderr.flush()
    MPI.COMM_WORLD.Abort(1)


def check_launcher(comm):
    """Dies when the launcher started more ranks than MPI sees: mpi4py built
    for OpenMPI, started by MPICH's mpiexec, runs each rank as a singleton
    that would write the same file as "rank 0"."""
    for var in ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE"):
        launched = os.environ.get(var, "")
        if launched.isdigit() and int(launched) != comm.Get_size():
            die(comm.Get_rank(), "%s=%s but MPI sees %d rank(s): this mpi4py is built for "
                "another MPI (Debian's is OpenMPI; use mpirun.openmpi)"
                % (var, launched, comm.Get_size()))


def parse_args(rank):
    parser = argparse.ArgumentParser(description="mpi4py + h5py collective I/O example")
    parser.add_argument("-d", dest="dir", default=".", help="directory for py.h5")
    parser.add_argument("-n", dest="n", type=int, default=10000, help="float64 values per rank")
    args = parser.parse_args()
    if args.n < 1:
        die(rank, "-n must be at least 1")
    return args


def main():
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    args = parse_args(rank)
    check_launcher(comm)
    if not h5py.get_config().mpi:
        die(rank, "this h5py has no MPI support (install python3-h5py-mpi)")

    os.makedirs(args.dir, exist_ok=True)
    path = os.path.join(args.dir, "py.h5")
    n = args.n
    lo, hi = rank * n, (rank + 1) * n
    want = np.arange(lo, hi, dtype=np.float64) + 0.5
    truth = {"write_bytes": 0, "write_ops": 0, "read_bytes": 0, "read_ops": 0}

    with h5py.File(path, "w", driver="mpio", comm=comm) as f:
        dset = f.create_dataset("data", (size * n,), dtype="f8")
        with dset.collective:
            dset[lo:hi] = want
        truth["write_ops"] += 1
        truth["write_bytes"] += want.nbytes

    with h5py.File(path, "r", driver="mpio", comm=comm) as f:
        dset = f["data"]
        with dset.collective:
            back = dset[lo:hi]
        truth["read_ops"] += 1
        truth["read_bytes"] += back.nbytes

    if back.shape != want.shape or not np.array_equal(back, want):
        die(rank, "read back wrong values from %s" % path)

    entry = {"path": os.path.realpath(path), "layer": "hdf5"}
    entry.update(truth)
    line = json.dumps({"example": "h5py_mpi", "rank": rank, "files": [entry]},
                      separators=(",", ":"))
    # One write per line, so the lines of different ranks never interleave.
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
