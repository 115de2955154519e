#!/usr/bin/python3
"""A full disk while recording: `iopulse run --record` writes to a tmpfs of 8 KiB
while a real job (examples/steady, 2 ranks, 8 s) fills no more than
its own directory elsewhere. The recording outgrows the file system within
seconds. Checks:

  1. the job runs on to its end: iopulse exits with the program's status
     (0) and every rank printed its truth line;
  2. the error is reported on stderr once, naming the recording and the
     cause (No space left on device);
  3. nothing else is lost: the summary (--summary-json, on another file
     system) holds the program's exact byte counts;
  4. what was written stays readable: `iopulse verify` reads the file and
     says it is cut short (TRUNCATED, or its last whole frame), and
     `iopulse summary` of it works;
  5. a recording that cannot be created (its directory is missing) is
     said before the job starts (exit 2), and the job is not run.

Needs root (mount); skipped (exit 77) otherwise.
    full_disk.py --iopulse IOPULSE --mpirun LAUNCHER --steady STEADY
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_common import fail, launcher_cmd  # noqa: E402



def main():
    p = argparse.ArgumentParser()
    for a in ("--iopulse", "--mpirun", "--steady"):
        p.add_argument(a, required=True)
    args = p.parse_args()
    if os.geteuid() != 0:
        print("SKIP: needs root to mount a small tmpfs")
        return 77
    tmp = tempfile.mkdtemp(prefix="iop-full-disk-")
    small = os.path.join(tmp, "small")
    os.mkdir(small)
    m = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8k", "tmpfs", small],
                       capture_output=True, text=True)
    if m.returncode != 0:
        shutil.rmtree(tmp)
        print("SKIP: cannot mount a tmpfs here: " + m.stderr.strip())
        return 77
    try:
        rec = os.path.join(small, "job.iop")
        summary = os.path.join(tmp, "summary.json")
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                   HOME=tmp, TMPDIR=tmp)
        cmd = [args.iopulse, "run", "--headless", "--tick", "200", "--record", rec,
               "--summary-json", summary, "--"] + launcher_cmd(args.mpirun, 2) + \
            [args.steady, "-d", os.path.join(tmp, "data"), "-T", "8", "-n", "100", "-s", "4096",
             "-f", "1048576", "-r", "4"]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)
        sys.stderr.write(r.stderr[-3000:])
        if r.returncode != 0:
            fail("iopulse run exited %d, the program's status is 0" % r.returncode)
        truth = [json.loads(l) for l in r.stdout.splitlines() if l.startswith('{"example"')]
        if len(truth) != 2:
            fail("%d truth lines, want 2" % len(truth))
        print("ok: the job ran to its end (exit 0, 2 truth lines)")

        said = [l for l in r.stderr.splitlines() if rec in l and "No space left on device" in l]
        if len(said) != 1:
            fail("expected one line naming %s and ENOSPC on stderr, saw %d" % (rec, len(said)))
        print("ok: reported once: " + said[0].strip())

        s = json.load(open(summary))
        files = {(f["path"], f["layer"]): f for f in s["files"]}
        for t in truth:
            for f in t["files"]:
                g = files.get((f["path"], f["layer"]))
                for k in ("read_bytes", "write_bytes", "read_ops", "write_ops"):
                    if not g or g[k] != f[k]:
                        fail("%s %s: summary %s, program %d" % (f["path"], k, g and g[k], f[k]))
        print("ok: the summary's byte counts are exact")

        size = os.path.getsize(rec)
        v = subprocess.run([args.iopulse, "verify", rec], capture_output=True, text=True,
                           timeout=60)
        print(v.stdout.strip())
        if "closed cleanly" in v.stdout or "DELTA" not in v.stdout:
            fail("verify of the cut recording (%d bytes): %d\n%s%s"
                 % (size, v.returncode, v.stdout, v.stderr))
        sm = subprocess.run([args.iopulse, "summary", "--json", rec], capture_output=True,
                            text=True, timeout=60)
        if sm.returncode != 0 or json.loads(sm.stdout)["type"] != "summary":
            fail("iopulse summary of the cut recording: %d %s" % (sm.returncode, sm.stderr))
        # a recording that cannot be made at all: said before the job starts
        marker = os.path.join(tmp, "ran")
        bad = os.path.join(tmp, "missing", "job.iop")
        b = subprocess.run([args.iopulse, "run", "--headless", "--record", bad, "--",
                            "touch", marker], capture_output=True, text=True, timeout=60, env=env)
        if b.returncode != 2 or "cannot record to %s: No such file or directory" % bad \
                not in b.stderr or os.path.exists(marker):
            fail("--record in a missing directory: exit %d, ran %s, stderr %r"
                 % (b.returncode, os.path.exists(marker), b.stderr))
        print("ok: a recording in a missing directory: exit 2 before the job, " + b.stderr.strip())
        print("PASS: full disk while recording: job unharmed, error said once, "
              "%d bytes of recording readable" % size)
        return 0
    finally:
        subprocess.run(["umount", small], capture_output=True)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
