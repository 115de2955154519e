#!/usr/bin/env python3
"""The noisy neighbour (issue 21, item 5): a healthy 2-rank job (GNU dd
writing and reading back 256 KiB under /var/tmp every 0.2 s for 12 s) runs
under `iopulse run` as an ordinary user while 3 processes outside the job
write 4 KiB blocks with O_DSYNC to the same disk. The node's device is
busy, and the job's share of its bytes is small: a node_pressure alert
starts, names the node (the host) and /var/tmp's device as findmnt names
it, with a value (the device's utilisation or the node's I/O pressure)
at or above its warning and a job share below 50 %, and says another job
or process loads it. (Whether the same job raises none without them is
not asserted: on a shared machine something else may load the disk. Run
beside this project's ASan tests, this machine's vda was 88 % busy with
the job's share 7 %, and node_pressure said so. The warning is lowered to 30 % busy with --rules: how busy 3 O_DSYNC
writers keep a shared CI machine's disk varies; this machine's vda was
66-76 % busy with 2.)"""
import json
import os
import socket
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "run-e2e"))
from e2e_common import fail, job_args, job_env  # noqa: E402
from holistic_common import findmnt, loop_script, remove, run_job, scratch  # noqa: E402

SECONDS = 12


def node_pressure(path):
    return [a for a in (json.loads(l) for l in open(path) if l.strip())
            if a.get("kind") == "node_pressure" and a.get("state") == "start"]


def main():
    args = job_args(__doc__)
    tmp, disk = scratch("iop-nn-", "/var/tmp")
    dd = args.program[0]
    script = loop_script(SECONDS, '%s if=/dev/zero of=%s/job$r bs=65536 count=4 status=none; '
                         '%s if=%s/job$r of=/dev/null bs=65536 status=none; sleep 0.2'
                         % (dd, disk, dd, disk))
    rules = os.path.join(tmp, "rules.json")
    with open(rules, "w") as f:
        json.dump({"node_pressure": {"warn": 0.3}}, f)
    want = findmnt(disk)
    noisy = []
    try:
        # the neighbours: outside the job, not under iopulse; bounded (80 MB
        # each, more than the job's 12 s at this disk's O_DSYNC pace) and
        # killed below, their output not the test's (ctest waits for it)
        for i in range(3):
            noisy.append(subprocess.Popen(
                [dd, "if=/dev/zero", "of=%s/noisy%d" % (disk, i), "bs=4096", "count=20000",
                 "oflag=dsync", "status=none"], stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        alerts = os.path.join(tmp, "alerts.jsonl")
        err = run_job(args, ["--headless", "--rules", rules, "--alerts", alerts], 2,
                      ["sh", "-c", script], job_env(tmp), tmp, 90)
        starts = node_pressure(alerts)
        if not starts:
            fail("no node_pressure alert with 3 O_DSYNC writers on %s" % want[2])
        a = starts[0]
        if a.get("node") != socket.gethostname():
            fail("node_pressure names node %r, the host is %r" % (a.get("node"),
                                                                 socket.gethostname()))
        if not a["value"] >= 0.3:
            fail("value %s under the warning 0.3" % a["value"])
        if not a["baseline"] < 0.5:
            fail("the job's share %s, want below 50 %% with 3 neighbours writing" % a["baseline"])
        dev = "%s (%s)" % (want[2], want[0])
        if dev not in a["message"] or "another job or process loads it" not in a["message"]:
            fail("the message does not name %s and the neighbour: %s" % (dev, a["message"]))
        line = [l for l in err.splitlines() if " node_pressure " in l]
        print("OK: %s" % (line[0] if line else a["message"]))
    finally:
        for p in noisy:
            p.kill()
            p.wait()
        remove(disk, tmp)


if __name__ == "__main__":
    main()
