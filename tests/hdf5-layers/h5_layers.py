#!/usr/bin/python3
"""HDF5 through the MPI-IO driver under `iopulse run`: every layer's bytes
against what was really moved at that layer.

    h5_layers.py --iopulse IOPULSE --mpirun LAUNCHER --ranks N -- PROGRAM [ARGS...]

Runs `iopulse run --headless --summary-json S -- LAUNCHER -n N PROGRAM ARGS
-d DIR` (PROGRAM: tests/hdf5-layers/h5_layers.c, whose truth lines say, per
file and per dataset, what each rank asked HDF5 to move) with Open MPI's
ompio and ROMIO told not to sieve data (no read-modify-write: what MPI-IO
is asked to move is what POSIX moves), then checks:

  HDF5   1. each dataset's row ("<file>:<dataset>", kind "dataset"): read
            and write bytes (points x memory type size: 24 a point for
            /fields/mixed, whose file type has 8; a char *, 8, a string for
            the variable-length /names) and ops are the truth's summed over
            ranks, its meta ops are the H5Dcreate, H5Dopen and H5Dclose
            calls, its rank count the ranks that used it;
         2. each file's own HDF5 row: no transfers, and meta ops exactly
            the H5F and H5G calls (no dataset's create or open);
         3. the HDF5 layer's totals are the truth's;
  MPI-IO 4. per file, MPI-IO write and read bytes equal POSIX's on that
            file (a file written serially, vlen.h5, has no MPI-IO writes);
         5. MPI-IO writes are at least the raw data in the file's types
            (points x file type size) and at most that plus each metadata
            byte written twice (HDF5 writes the superblock at create and
            again at close); metadata = size - free space - raw data;
         6. MPI-IO reads are at least the raw data read in the file's
            types (for a variable-length dataset its 16-byte heap
            references and the strings' characters: more than its HDF5
            bytes, which count a char * per string) and at most every rank
            reading the whole file;
  POSIX  7. per file, POSIX writes cover its size on disk but for the
            space HDF5 keeps free in it (H5Fget_freespace before the
            close: the unused tail of its metadata block, never written).

Standard library only, for Debian's /usr/bin/python3. Exit status: 0 pass,
1 fail, 2 bad usage.
"""

import collections
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "run-e2e"))
from e2e_common import fail, iopulse_job, job_args, job_env  # noqa: E402

TIMEOUT_S = 120
XFER = ("read_bytes", "write_bytes", "read_ops", "write_ops")


def run(args, tmp):
    data = os.path.join(tmp, "data")
    summary = os.path.join(tmp, "summary.json")
    env = job_env(tmp,
               # ompio's data sieving (on by default in Open MPI 4.1) would
               # read and rewrite the gaps of a strided access; ROMIO's is
               # off through the program's MPI_Info hints. (HDF5's accesses
               # here are contiguous runs, so today neither changes a byte.)
               OMPI_MCA_fbtl_posix_read_datasieving="0",
               OMPI_MCA_fbtl_posix_write_datasieving="0")
    p = iopulse_job(args, ["--headless", "--summary-json", summary], args.ranks,
                    args.program + ["-d", data], env, TIMEOUT_S)
    truth = [json.loads(line) for line in p.stdout.splitlines() if '"example"' in line]
    if sorted(t["rank"] for t in truth) != list(range(args.ranks)):
        fail("truth lines of ranks %s, expected one per rank of %d"
             % (sorted(t["rank"] for t in truth), args.ranks))
    sizes = {os.path.realpath(os.path.join(data, f)): os.stat(os.path.join(data, f)).st_size
             for f in os.listdir(data) if f.endswith(".h5")}
    return truth, json.load(open(summary)), sizes


def sum_truth(truth, key):
    """Per path, the truth's counters summed over ranks (free_bytes: the
    largest any rank saw), and the ranks that reported it."""
    sums = collections.defaultdict(collections.Counter)
    ranks = collections.defaultdict(set)
    for t in truth:
        for e in t[key]:
            for k, v in e.items():
                if k == "free_bytes":
                    sums[e["path"]][k] = max(sums[e["path"]][k], v)
                elif isinstance(v, int):
                    sums[e["path"]][k] += v
            ranks[e["path"]].add(t["rank"])
    return sums, ranks


def row(summary, path, layer):
    for f in summary["files"]:
        if f["path"] == path and f["layer"] == layer:
            return f
    fail("summary has no %s row for %s" % (layer, path))


def check_hdf5(truth, summary):
    files, _ = sum_truth(truth, "files")
    datasets, ranks = sum_truth(truth, "datasets")
    for path, want in sorted(datasets.items()):
        got = row(summary, path, "hdf5")
        if got["kind"] != "dataset":
            fail("%s: kind %r, not dataset" % (path, got["kind"]))
        for k in XFER + ("meta_ops",):
            if got[k] != want[k]:
                fail("hdf5 %s: %s is %d, the program did %d" % (path, k, got[k], want[k]))
        if got["ranks"] != len(ranks[path]):
            fail("hdf5 %s: %d ranks, %d used it" % (path, got["ranks"], len(ranks[path])))
        print("ok: hdf5 %s: write %d, read %d bytes, %d meta ops (create/open/close)"
              % (path, got["write_bytes"], got["read_bytes"], got["meta_ops"]))
    for path, want in sorted(files.items()):
        got = row(summary, path, "hdf5")
        if got["kind"] != "file" or any(got[k] for k in XFER):
            fail("hdf5 %s: its own row has transfers or kind %r: %s" % (path, got["kind"], got))
        if got["meta_ops"] != want["meta_ops"]:
            fail("hdf5 %s: %d meta ops on the file's row, the program made %d H5F/H5G calls"
                 % (path, got["meta_ops"], want["meta_ops"]))
        print("ok: hdf5 %s: %d meta ops on the file's row (H5F, H5G)" % (path, got["meta_ops"]))
    layer = summary["layers"]["hdf5"]
    for k in XFER + ("meta_ops",):
        want = sum(d[k] for d in datasets.values()) + sum(f[k] for f in files.values())
        if layer[k] != want:
            fail("hdf5 layer: %s is %d, the program did %d" % (k, layer[k], want))
    print("ok: hdf5 layer: write %d, read %d bytes" % (layer["write_bytes"], layer["read_bytes"]))
    return files, datasets


def in_file(datasets, path, key):
    return sum(d[key] for p, d in datasets.items() if p.startswith(path + ":"))


def check_mpiio(files, datasets, summary, sizes, nranks):
    for path in sorted(files):
        mpiio, posix = row(summary, path, "mpiio"), row(summary, path, "posix")
        via_mpiio = files[path]["via_mpiio"] > 0
        for k in ("read_bytes", "write_bytes"):
            want = posix[k] if k == "read_bytes" or via_mpiio else 0
            if mpiio[k] != want:
                fail("mpiio %s: %s is %d, expected %d (POSIX moved %d on it)"
                     % (path, k, mpiio[k], want, posix[k]))
        raw_w = in_file(datasets, path, "file_written")
        metadata = sizes[path] - files[path]["free_bytes"] - raw_w
        if via_mpiio and not raw_w <= mpiio["write_bytes"] <= raw_w + 2 * metadata:
            fail("mpiio %s: wrote %d bytes; raw data in the file's types %d, metadata %d"
                 % (path, mpiio["write_bytes"], raw_w, metadata))
        least = in_file(datasets, path, "file_read") + in_file(datasets, path, "vlen_read")
        if not least <= mpiio["read_bytes"] <= nranks * sizes[path]:
            fail("mpiio %s: read %d bytes; at least %d were needed, at most %d x %d exist"
                 % (path, mpiio["read_bytes"], least, nranks, sizes[path]))
        print("ok: mpiio %s: write %d (raw %d, metadata %d), read %d (at least %d), as POSIX"
              % (path, mpiio["write_bytes"], raw_w, metadata, mpiio["read_bytes"], least)
              if via_mpiio else
              "ok: mpiio %s: no writes (written serially), read %d (at least %d), as POSIX"
              % (path, mpiio["read_bytes"], least))


def check_posix(files, summary, sizes):
    for path in sorted(files):
        posix = row(summary, path, "posix")
        cover = sizes[path] - files[path]["free_bytes"]
        if posix["write_bytes"] < cover:
            fail("posix %s: wrote %d bytes, the file has %d (%d free)"
                 % (path, posix["write_bytes"], sizes[path], files[path]["free_bytes"]))
        print("ok: posix %s: write %d >= size %d - free %d"
              % (path, posix["write_bytes"], sizes[path], files[path]["free_bytes"]))


def main():
    args = job_args(__doc__, ranks=4)
    with tempfile.TemporaryDirectory(prefix="iop-h5layers-") as tmp:
        tmp = os.path.realpath(tmp)
        truth, summary, sizes = run(args, tmp)
        files, datasets = check_hdf5(truth, summary)
        check_mpiio(files, datasets, summary, sizes, args.ranks)
        check_posix(files, summary, sizes)
    print("PASS")


if __name__ == "__main__":
    main()
