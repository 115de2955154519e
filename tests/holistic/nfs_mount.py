#!/usr/bin/env python3
"""NFS (issue 21): a file system of the loopback kernel NFS server,
mounted on this machine (nfs4, 127.0.0.1 only), is seen as what it is:
4 ranks of GNU dd in a loop for 14 s, rank 3 writing 4 KiB blocks with
O_DSYNC to a file on the NFS mount, the others to /dev/shm. Rank 3's
straggler alert names the mount with its type (nfs4) and source, and its
context has the NFS calls' mean round trip ("rtt_ms") from the leaf's node
sample (/proc/self/mountstats), the human line "... rtt N ms".

It needs the kernel's NFS client and server (nfs and nfsd in
/proc/filesystems) and nfs-kernel-server's exportfs, rpc.nfsd and
mount.nfs, and root to export and mount: without them it says which is
missing and exits 77 (skipped). On the development machine (a 6.18
kernel without NFS) it skips: it has not run to the end there."""
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "run-e2e"))
from e2e_common import fail, job_args, job_env  # noqa: E402
from holistic_common import loop_script, remove, run_job, scratch  # noqa: E402

SECONDS = 14


def skip(why):
    print("SKIP: %s" % why)
    sys.exit(77)


def main():
    args = job_args(__doc__)
    with open("/proc/filesystems") as f:
        have = {line.split()[-1] for line in f if line.strip()}
    for fs in ("nfs", "nfsd"):
        if fs not in have:
            skip("the kernel has no %s (not in /proc/filesystems)" % fs)
    for tool in ("exportfs", "rpc.nfsd", "mount.nfs"):
        if not shutil.which(tool) and not os.path.exists("/usr/sbin/" + tool) and \
                not os.path.exists("/sbin/" + tool):
            skip("%s is not installed (nfs-kernel-server, nfs-common)" % tool)
    if os.geteuid() != 0:
        skip("exporting and mounting need root")
    tmp, shm, export = scratch("iop-nfs-", "/dev/shm", "/var/tmp")
    mnt = os.path.join(tmp, "mnt")
    os.mkdir(mnt)
    os.chmod(mnt, 0o777)
    mounted = exported = False
    try:
        subprocess.run(["mount", "-t", "nfsd", "nfsd", "/proc/fs/nfsd"], capture_output=True)
        subprocess.run(["rpc.nfsd", "-N", "2", "-N", "3", "4"], check=True, capture_output=True)
        subprocess.run(["exportfs", "-o", "rw,sync,no_root_squash,fsid=%d" % (os.getpid() % 60000 + 1),
                        "127.0.0.1:%s" % export], check=True, capture_output=True)
        exported = True
        subprocess.run(["mount", "-t", "nfs4", "-o", "vers=4.2,proto=tcp",
                        "127.0.0.1:%s" % export, mnt], check=True, capture_output=True,
                       timeout=30)
        mounted = True
        dd = args.program[0]
        script = loop_script(SECONDS, 'if [ "$r" = 3 ]; then %s if=/dev/zero of=%s/r$r bs=4096 '
                             'count=100 oflag=dsync status=none; else %s if=/dev/zero '
                             'of=%s/r$r bs=4096 count=100 status=none; sleep 0.02; fi'
                             % (dd, mnt, dd, shm))
        alerts = os.path.join(tmp, "alerts.jsonl")
        err = run_job(args, ["--headless", "--alerts", alerts], 4, ["sh", "-c", script],
                      job_env(tmp), tmp, 120)
        starts = [json.loads(l) for l in open(alerts) if l.strip()]
        a = [x for x in starts if x.get("state") == "start" and x.get("kind") == "straggler" and
             x.get("rank") == 3]
        if not a:
            fail("no straggler alert on rank 3 (on NFS): %s" % starts)
        c = a[0].get("context") or {}
        if c.get("mount") != mnt or not c.get("fs_type", "").startswith("nfs") or \
                c.get("device") != "127.0.0.1:%s" % export:
            fail("context %s, want %s nfs4 127.0.0.1:%s" % (c, mnt, export))
        if not c.get("rtt_ms", 0) > 0:
            fail("no NFS round trip in the context (mountstats): %s" % c)
        line = [l for l in err.splitlines() if " straggler rank 3 " in l and " END " not in l]
        if not line or not re.search(r" rtt [0-9.]+ ms", line[0]):
            fail("the straggler's line has no rtt: %s" % line)
        print("OK: %s" % line[0])
    finally:
        if mounted:
            subprocess.run(["umount", "-f", mnt], capture_output=True)
        if exported:
            subprocess.run(["exportfs", "-u", "127.0.0.1:%s" % export], capture_output=True)
        remove(shm, export, tmp)


if __name__ == "__main__":
    main()
