#!/usr/bin/python3
"""PnetCDF under `iopulse run`: the summary's MPI-IO bytes per file equal
what PnetCDF itself says it moved through MPI-IO, exactly.

    pnetcdf_bytes.py --iopulse IOPULSE --mpirun LAUNCHER --ranks N -- PROGRAM [ARGS...]

Runs `iopulse run --headless --summary-json S -- LAUNCHER -n N PROGRAM ARGS
-d DIR` (PROGRAM: tests/pnetcdf/pnetcdf_bytes.c, whose line per rank gives
ncmpi_inq_put_size/ncmpi_inq_get_size taken before each ncmpi_close, the
variable data the rank asked PnetCDF to move, and the header's size and
extent), then checks:

  1. iopulse exited 0 (the job's status) and every rank printed its line;
  2. what PnetCDF reported is what it is defined to be, per rank: put_size
     is the rank's variable data, plus on rank 0 (the one that writes the
     header) the header (ncmpi_inq_header_size) and the 8-byte CDF-5
     record count it rewrites after the records grew; get_size is the
     rank's variable data, plus on rank 0 one read of the header from
     offset 0 of nc_header_read_chunk_size bytes, cut short at the end of
     the file; nothing is put after the reopen (NC_NOWRITE);
  3. the variable data written over all ranks fills the file after the
     header's extent exactly (every element written once);
  4. MPI-IO: per file, the summary's "mpiio" row has write_bytes = the sum
     over ranks of put_size and read_bytes = the sum of get_size, exactly,
     with every rank on it; the MPI-IO layer's totals are that file's;
  5. POSIX: the writes on the file cover its size but for the padding
     between the header and its extent (never written);
  6. monitor: nothing rejected, events + dropped = produced.

Standard library only, for Debian's /usr/bin/python3. Exit status: 0 pass,
1 fail, 2 bad usage.
"""

import collections
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "run-e2e"))
from e2e_common import check_monitor, fail, iopulse_job, job_args, job_env  # noqa: E402

TIMEOUT_S = 120
NUMRECS_BYTES = 8  # CDF-5 (NC_64BIT_DATA) keeps the record count in 8 bytes


def run(args, tmp):
    data = os.path.join(tmp, "data")
    summary = os.path.join(tmp, "summary.json")
    p = iopulse_job(args, ["--headless", "--summary-json", summary], args.ranks,
                    args.program + ["-d", data], job_env(tmp), TIMEOUT_S)
    lines = [json.loads(line) for line in p.stdout.splitlines() if '"example"' in line]
    if sorted(t["rank"] for t in lines) != list(range(args.ranks)):
        fail("lines from ranks %s, expected one from each of %d"
             % (sorted(t["rank"] for t in lines), args.ranks))
    reports = collections.defaultdict(dict)  # path -> rank -> report
    for t in lines:
        for f in t["files"]:
            reports[f["path"]][t["rank"]] = f
    sizes = {path: os.stat(path).st_size for path in reports}
    return reports, json.load(open(summary)), sizes


def row(summary, path, layer):
    for f in summary["files"]:
        if f["path"] == path and f["layer"] == layer:
            return f
    fail("summary has no %s row for %s" % (layer, path))


def check_reports(path, ranks, size):
    """What PnetCDF said each rank moved is its data plus rank 0's header
    I/O, exactly."""
    for rank, r in sorted(ranks.items()):
        header_put = r["header_size"] + NUMRECS_BYTES if rank == 0 else 0
        header_get = min(size, r["header_chunk"]) if rank == 0 else 0
        if r["open_put"] != 0 or r["put_size"] != r["data_written"] + header_put:
            fail("%s rank %d: PnetCDF put %d (%d after the reopen); its data is %d, "
                 "header %d" % (path, rank, r["put_size"], r["open_put"], r["data_written"],
                                header_put))
        if r["get_size"] != r["data_read"] + header_get:
            fail("%s rank %d: PnetCDF got %d; its data is %d, header read %d"
                 % (path, rank, r["get_size"], r["data_read"], header_get))
    extent = ranks[0]["header_extent"]
    data = sum(r["data_written"] for r in ranks.values())
    if size != extent + data:
        fail("%s: %d bytes; header extent %d + data written %d" % (path, size, extent, data))
    print("ok: pnetcdf %s: put = data + header %d + numrecs %d on rank 0, get = data + "
          "header read %d on rank 0; data %d fills the file after the header's extent %d"
          % (path, ranks[0]["header_size"], NUMRECS_BYTES, min(size, ranks[0]["header_chunk"]),
             data, extent))


def check_mpiio(path, ranks, summary):
    got = row(summary, path, "mpiio")
    want = {"write_bytes": sum(r["put_size"] for r in ranks.values()),
            "read_bytes": sum(r["get_size"] for r in ranks.values())}
    bad = ["%s is %d, PnetCDF moved %d (sum of ncmpi_inq_%s_size)"
           % (k, got[k], w, "put" if k == "write_bytes" else "get")
           for k, w in sorted(want.items()) if got[k] != w]
    if bad:
        fail("mpiio %s: %s" % (path, "; ".join(bad)))
    if got["ranks"] != len(ranks):
        fail("mpiio %s: %d ranks in the summary, %d did I/O" % (path, got["ranks"], len(ranks)))
    print("ok: mpiio %s: write %d, read %d bytes, as PnetCDF says"
          % (path, got["write_bytes"], got["read_bytes"]))
    return want


def check_posix(path, ranks, summary, size):
    posix = row(summary, path, "posix")
    padding = ranks[0]["header_extent"] - ranks[0]["header_size"]
    if posix["write_bytes"] < size - padding:
        fail("posix %s: wrote %d bytes, the file has %d (%d of header padding)"
             % (path, posix["write_bytes"], size, padding))
    print("ok: posix %s: write %d >= size %d - header padding %d"
          % (path, posix["write_bytes"], size, padding))


def main():
    args = job_args(__doc__, ranks=4)
    with tempfile.TemporaryDirectory(prefix="iop-pnetcdf-") as tmp:
        tmp = os.path.realpath(tmp)
        reports, summary, sizes = run(args, tmp)
        total = collections.Counter()
        for path, ranks in sorted(reports.items()):
            if sorted(ranks) != list(range(args.ranks)):
                fail("%s: reported by ranks %s" % (path, sorted(ranks)))
            check_reports(path, ranks, sizes[path])
            total.update(check_mpiio(path, ranks, summary))
            check_posix(path, ranks, summary, sizes[path])
        layer = summary["layers"]["mpiio"]
        if (layer["write_bytes"], layer["read_bytes"]) != (total["write_bytes"],
                                                           total["read_bytes"]):
            fail("mpiio layer: write %d, read %d; its files' %d, %d"
                 % (layer["write_bytes"], layer["read_bytes"], total["write_bytes"],
                    total["read_bytes"]))
        check_monitor(summary["monitor"])
    print("PASS")


if __name__ == "__main__":
    main()
