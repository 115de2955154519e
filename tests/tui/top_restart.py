#!/usr/bin/python3
"""`iopulse top` across a root restart: a collector tree on this host (an
`iopulse collector --role root` serving viewers on ipc, a leaf under it,
and a writer process under the shim sending to the leaf) watched by the real
`iopulse top ADDRESS` in a tmux pane. The root is SIGKILLed mid-run:

  - top stays up and its header says the root is UNREACHABLE (or STALE)
    while it is gone, and
  - once a new root is started on the same addresses, top reconnects by
    itself: LIVE again, without the warning, the writer's rank shown and
    its byte count still growing (the leaf's resync gave the new root the
    totals);
  - q leaves top with exit 0.

    top_restart.py --iopulse IOPULSE --shim LIBIOPULSE (and tmux_main's options)

Standard library only. Exit status: 0 pass, 1 fail.
"""
import os
import re
import secrets
import shlex
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tmux_test import Fail, quit_top, row_of, tmux_main  # noqa: E402

# about 300 s of writing, ended by the test: it must outlast the steps
# (killing and restarting the root) however loaded the machine
WRITES, BLOCK, PAUSE_S = 6000, 4096, 0.05


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Tree:
    def __init__(self, args, tmp):
        self.args, self.tmp = args, tmp
        self.env = dict(os.environ, IOPULSE_KEY=secrets.token_hex(16),
                        IOPULSE_JOB="%016x" % secrets.randbits(63), HOME=tmp, TMPDIR=tmp)
        self.listen = "tcp://127.0.0.1:%d" % free_port()
        self.view_path = os.path.join(tmp, "view.ipc")
        self.leaf_dir = os.path.join(tmp, "leaf")
        os.mkdir(self.leaf_dir, 0o700)
        self.procs = []

    def start(self, argv, log, env=None):
        p = subprocess.Popen(argv, env=env or self.env, stdout=open(os.path.join(self.tmp, log), "ab"),
                             stderr=subprocess.STDOUT)
        self.procs.append(p)
        return p

    def root(self):
        if os.path.exists(self.view_path):
            os.unlink(self.view_path)  # left by a killed root
        return self.start([self.args.iopulse, "collector", "--role", "root", "--listen", self.listen,
                           "--view", "ipc://" + self.view_path], "root.log")

    def leaf(self):
        return self.start([self.args.iopulse, "collector", "--role", "leaf", "--parent", self.listen,
                           "--dir", self.leaf_dir], "leaf.log")

    def writer(self):
        pre = os.environ.get("LD_PRELOAD")  # a sanitizer build's runtime comes first
        env = dict(self.env, LD_PRELOAD=(pre + ":" if pre else "") + self.args.shim, RANK="0",
                   IOPULSE_ADDR="ipc://%s/leaf.ipc" % self.leaf_dir,
                   IOPULSE_FINAL_ADDR="ipc://%s/final.ipc" % self.leaf_dir)
        code = ("import os,time\n"
                "f=os.open('%s/out', os.O_WRONLY|os.O_CREAT|os.O_TRUNC, 0o600)\n"
                "for i in range(%d):\n"
                "    os.write(f, b'x'*%d); time.sleep(%s)\n"
                "os.close(f)\n" % (self.tmp, WRITES, BLOCK, PAUSE_S))
        return self.start(["/usr/bin/python3", "-c", code], "writer.log", env)

    def stop(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait()


def rank0_bytes(screen):
    """The BYTES column of rank 0's row, in bytes: its last size that is
    not a rate (rates end in /s)."""
    sizes = re.findall(r"([\d.]+) ?(KiB|MiB|GiB|B)(?!/s)", row_of(screen, 0) or "")
    if not sizes:
        raise ValueError("no byte count in rank 0's row")
    value, unit = sizes[-1]
    return float(value) * {"B": 1, "KiB": 1024, "MiB": 1 << 20, "GiB": 1 << 30}[unit]


def run(args, tmp, pane):
    if not args.shim:
        raise Fail("--shim is required")
    tree = Tree(args, tmp)
    try:
        root = tree.root()
        tree.leaf()
        deadline = time.time() + 20
        while not os.path.exists(os.path.join(tree.leaf_dir, "leaf.ipc")):
            if time.time() > deadline:
                raise Fail("the leaf does not listen")
            time.sleep(0.05)
        writer = tree.writer()
        shell = "env HOME=%s TERM=screen LANG=C.UTF-8 IOPULSE_KEY=%s IOPULSE_JOB=%s %s top %s; " \
                "echo TOP-EXIT=$?; sleep 600" % (
                    shlex.quote(tmp), tree.env["IOPULSE_KEY"], tree.env["IOPULSE_JOB"],
                    shlex.quote(args.iopulse), shlex.quote("ipc://" + tree.view_path))
        pane.tmux("new-session", "-d", "-s", "t", "-x", "120", "-y", "40", "-c", tmp, shell)
        s = pane.wait("the writer's rank, live",
                      lambda s: "LIVE" in s and row_of(s, 0) and "UNREACHABLE" not in s)
        before = rank0_bytes(s)

        root.send_signal(signal.SIGKILL)  # the root dies ...
        root.wait()
        pane.wait("the header to say the root is gone",
                  lambda s: "UNREACHABLE" in s or "STALE" in s, timeout=30)

        tree.root()  # ... and comes back on the same addresses
        s = pane.wait("live again after the restart",
                      lambda s: "LIVE" in s and "UNREACHABLE" not in s and "STALE" not in s
                      and row_of(s, 0) and rank0_bytes(s) > before, timeout=60)
        if writer.poll() is not None:
            raise Fail("the writer ended before the check (exit %s)" % writer.returncode)
        print("ok: top reconnected by itself; rank 0 %d B before the kill, %d B after"
              % (before, rank0_bytes(s)))

        quit_top(pane)
    finally:
        tree.stop()


def main():
    return tmux_main(run, "top_restart")


if __name__ == "__main__":
    sys.exit(main())
