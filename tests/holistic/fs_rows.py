#!/usr/bin/env python3
"""File systems in the summary (issue 21, item 1): 4 ranks of GNU dd under
`iopulse run` and the real launcher. Ranks 0-2 write 64 KiB blocks to a
file under /dev/shm (tmpfs); rank 3 writes 4 KiB blocks with O_DSYNC to a
file under /var/tmp (the machine's disk). The summary's "filesystems" has
a row for each, named as findmnt names the file system (mount point, type,
and the block device or the source), with exactly the bytes and write
calls dd made there and the ranks that made calls there; each file's entry names
its mount, and the recording's summary says the same; the recording's
per-tick file-system rows (export, kind fs) add up to the summary's. The job runs as an ordinary user where one exists (HPC users
are not root)."""
import csv
import io
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "run-e2e"))
from e2e_common import fail, job_args, job_env  # noqa: E402
from holistic_common import findmnt, remove, run_job, scratch  # noqa: E402

SHM_BLOCKS, SHM_BS = 40, 65536
DISK_BLOCKS, DISK_BS = 60, 4096


def main():
    args = job_args(__doc__)
    tmp, shm, disk = scratch("iop-fs-", "/dev/shm", "/var/tmp")
    # rank from the launcher's environment, as the shim takes it
    script = ('r=${OMPI_COMM_WORLD_RANK:-$PMI_RANK}; '
              'if [ "$r" = 3 ]; then %s if=/dev/zero of=%s/r$r bs=%d count=%d oflag=dsync status=none; '
              'else %s if=/dev/zero of=%s/r$r bs=%d count=%d status=none; fi'
              % (args.program[0], disk, DISK_BS, DISK_BLOCKS, args.program[0], shm, SHM_BS,
                 SHM_BLOCKS))
    summary = os.path.join(tmp, "s.json")
    job = ["sh", "-c", script]
    env = job_env(tmp)
    rec = os.path.join(tmp, "job.iop")
    opts = ["--summary-json", summary, "--record", rec]
    try:
        run_job(args, opts, 4, job, env, tmp, 90)
        with open(summary) as f:
            s = json.load(f)
        want = {
            findmnt(shm): {"write_bytes": 3 * SHM_BLOCKS * SHM_BS, "write_ops": 3 * SHM_BLOCKS,
                           "ranks": 3},
            # every rank makes metadata calls on the disk's file system
            # (the shell finding dd, its working directory): all 4 are there
            findmnt(disk): {"write_bytes": DISK_BLOCKS * DISK_BS, "write_ops": DISK_BLOCKS,
                            "ranks": 4},
        }
        if len(want) != 2:
            print("SKIP: /dev/shm and /var/tmp are one file system here")
            sys.exit(77)
        rows = {(r["mount"], r["type"], r["device"]): r for r in s.get("filesystems", [])}
        print("filesystems:", json.dumps(s.get("filesystems")))
        for key, w in want.items():
            r = rows.get(key)
            if r is None:
                fail("no filesystems row for %s; rows: %s" % (key, sorted(rows)))
            # the file systems' writes are the job's writes to its files
            # there: dd's own; the rows may also hold reads and metadata
            # calls of other files (dd's binary, the shell's)
            for k, v in w.items():
                if r[k] != v:
                    fail("%s: %s %s, dd made %s" % (key[0], k, r[k], v))
        # each data file's entry names its mount
        for f in s["files"]:
            if f["path"].startswith(shm + "/"):
                if f["mount"] != findmnt(shm)[0]:
                    fail("%s: mount %s" % (f["path"], f["mount"]))
            if f["path"].startswith(disk + "/"):
                if f["mount"] != findmnt(disk)[0]:
                    fail("%s: mount %s" % (f["path"], f["mount"]))
        # a recording keeps them: its summary's file systems are the live ones
        rs = json.loads(subprocess.run([args.iopulse, "summary", rec, "--json"], check=True,
                                       capture_output=True, text=True).stdout)
        if rs.get("filesystems") != s["filesystems"]:
            fail("the recording's file systems differ: %s" % rs.get("filesystems"))
        if [f.get("mount") for f in rs["files"]] != [f.get("mount") for f in s["files"]]:
            fail("the recording's files' mounts differ")
        # per tick, a row per file system (layer, class): over the ticks,
        # their POSIX and STDIO bytes and calls are the summary's
        csv_text = subprocess.run([args.iopulse, "export", rec, "--format", "csv"], check=True,
                                  capture_output=True, text=True).stdout
        got = {}
        for row in csv.DictReader(io.StringIO(csv_text)):
            if row["kind"] == "fs" and row["layer"] in ("posix", "stdio"):
                g = got.setdefault(row["file"], {"read_bytes": 0, "write_bytes": 0,
                                                 "read_ops": 0, "write_ops": 0})
                if row["class"] in ("read", "write"):
                    g[row["class"] + "_bytes"] += int(row["bytes"])
                    g[row["class"] + "_ops"] += int(row["ops"])
        for r in s["filesystems"]:
            g = got.get(r["mount"])
            if g is None:
                fail("no fs rows for %s in the export" % r["mount"])
            for k, v in g.items():
                if r[k] != v:
                    fail("%s: the fs rows' %s sum to %d, the summary says %d"
                         % (r["mount"], k, v, r[k]))
        names = [f["path"] for f in s["files"]]
        for r in range(4):
            p = "%s/r%d" % (disk if r == 3 else shm, r)
            if p not in names:
                fail("no file entry for %s" % p)
        print("OK: %s" % ", ".join("%s (%s, %s) %d B by %d ranks"
                                   % (k[0], k[1], k[2], w["write_bytes"], w["ranks"])
                                   for k, w in want.items()))
    finally:
        remove(shm, disk, tmp)


if __name__ == "__main__":
    main()
