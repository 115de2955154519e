#!/usr/bin/env python3
"""Alerts say where (issue 21, items 2 and 4): 4 ranks of GNU dd in a
loop for 14 s under `iopulse run` and the real launcher; ranks 0-2 write
4 KiB blocks to files under /dev/shm (tmpfs), rank 3 writes 4 KiB blocks
with O_DSYNC to a file under /var/tmp (the machine's disk). Rank 3 is a
straggler, and its alert's "context" names /var/tmp's file system as
findmnt does (mount point, type, block device), with the device's
utilisation from the node's sample (above 0: the O_DSYNC writes keep it
busy) and the node's I/O pressure where the kernel has PSI; the human
line ends with the same, " on MOUNT (TYPE, DEVICE N% busy ...)". A
replay of the recording, judging the recorded ticks again, gives the
same context: the node samples are in its DELTAs. No alert names the
tmpfs with a device utilisation (tmpfs has no device). The job runs as an
ordinary user where one exists."""
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "run-e2e"))
from e2e_common import fail, job_args, job_env  # noqa: E402
from holistic_common import findmnt, remove, loop_script, run_job, scratch  # noqa: E402

SECONDS = 14


def straggler_start(alerts, rank):
    for a in alerts:
        if a.get("state") == "start" and a.get("kind") == "straggler" and a.get("rank") == rank:
            return a
    return None


def check_context(a, want, where):
    c = a.get("context")
    if not c:
        fail("%s: the straggler alert has no context: %s" % (where, a))
    got = (c.get("mount"), c.get("fs_type"), c.get("device"))
    if got != want:
        fail("%s: context names %s, findmnt says %s" % (where, got, want))
    if not c.get("device_util", 0) > 0:
        fail("%s: device_util %s, want above 0 (O_DSYNC writes on %s)"
             % (where, c.get("device_util"), want[2]))
    if os.path.exists("/proc/pressure/io") and "io_pressure_full" not in c:
        fail("%s: no io_pressure_full though the kernel has PSI: %s" % (where, c))
    return c


def main():
    args = job_args(__doc__)
    tmp, shm, disk = scratch("iop-ctx-", "/dev/shm", "/var/tmp")
    dd = args.program[0]
    script = loop_script(SECONDS, 'if [ "$r" = 3 ]; then %s if=/dev/zero of=%s/r$r bs=4096 '
                         'count=200 oflag=dsync status=none; else %s if=/dev/zero of=%s/r$r '
                         'bs=4096 count=200 status=none; sleep 0.02; fi' % (dd, disk, dd, shm))
    alerts_path, rec = os.path.join(tmp, "alerts.jsonl"), os.path.join(tmp, "job.iop")
    want = findmnt(disk)
    if want == findmnt(shm):
        print("SKIP: /dev/shm and /var/tmp are one file system here")
        sys.exit(77)
    try:
        err = run_job(args, ["--headless", "--alerts", alerts_path, "--record", rec], 4,
                      ["sh", "-c", script], job_env(tmp), tmp, 120)
        alerts = [json.loads(l) for l in open(alerts_path) if l.strip()]
        a = straggler_start(alerts, 3)
        if not a:
            fail("no straggler alert on rank 3: %s" % [(x["kind"], x.get("rank")) for x in alerts])
        c = check_context(a, want, "live")
        line = [l for l in err.splitlines() if re.search(r" straggler rank 3 ", l) and
                " END " not in l]
        pat = r" on %s \(%s, %s (\d+%% busy|idle)(, io pressure \d+%%)?\)$" % tuple(
            re.escape(x) for x in want)
        if not line or not re.search(pat, line[0]):
            fail("the straggler's line does not end with where it is (%s): %s" % (pat, line))
        for x in alerts:
            ctx = x.get("context") or {}
            if ctx.get("fs_type") == "tmpfs" and "device_util" in ctx:
                fail("a tmpfs context with a device utilisation: %s" % x)
        # the replay judges the recorded ticks again: the same context
        again = os.path.join(tmp, "again.jsonl")
        p = subprocess.run([args.iopulse, "replay", "--headless", "--alerts", again, rec],
                           capture_output=True, text=True, timeout=60)
        if p.returncode != 0:
            fail("iopulse replay --headless exited %d: %s" % (p.returncode, p.stderr))
        b = straggler_start([json.loads(l) for l in open(again) if l.strip()], 3)
        if not b:
            fail("the replay has no straggler alert on rank 3")
        if check_context(b, want, "replay") != c:
            fail("the replay's context %s differs from the live one %s" % (b["context"], c))
        print("OK: %s" % line[0])
    finally:
        remove(shm, disk, tmp)


if __name__ == "__main__":
    main()
