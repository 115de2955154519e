#!/usr/bin/python3
"""Three hosts made of network namespaces on one machine, real tcp between
them: the root collector in iop-h1, a leaf and two writer processes in each
of iop-h2 and iop-h3 (each leaf behind a mid in iop-h1 for h3, directly
under the root for h2). Every writer is a long-lived process under the shim
writing 4 KiB blocks with pauses. During the run the h2 leaf is killed
(SIGKILL) and started again, and so is the root. At the end the root's
summary must hold exactly the bytes and write calls every writer made.

Part 2: `iopulse run` over a launcher script starting one writer on each
host; part 3 (with --mpirun): `iopulse run -- mpirun` (Open MPI) or
`mpiexec` (MPICH's hydra) across the three hosts, the launcher's remote
daemons started by an ssh stand-in (LAUNCH_AGENT) that gives them the
clean environment ssh would: the ranks on h2 and h3 are monitored only
because iopulse run forwarded its variables through the launcher, and their
leaves are started by their first rank. examples/steady's truth lines must
equal the summary, on 3 nodes, each rank on the host the launcher chose.

Part 4 (with --mpirun and --late): `iopulse run --alerts` over the same
launcher, 6 ranks, of examples/late-collective, whose last rank (5, on h3)
comes 150 ms late to each of 30 MPI_File_write_at_all on one shared file:
the root matches the collective calls across hosts from durations only, so
a late_arrival alert starts on rank 5 (and neither late_arrival nor
straggler on another rank), the summary puts rank 5 on h3 (3 nodes), and
every other rank's summary wait_s is within 15 % of the wait it measured
(check_late).

Needs root (ip netns, veth, a bridge); skipped (exit 77) otherwise.
Usage: netns_tree.py --iopulse BIN --shim LIB [--asan-runtime LIBASAN]
                     [--mpirun LAUNCHER [--steady STEADY] [--late LATE_COLLECTIVE]]
"""
import argparse
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time

P = "iop%d" % (os.getpid() % 10000)  # namespace prefix: parallel runs stay apart
HOSTS = {f"{P}h1": "10.88.%d.1", f"{P}h2": "10.88.%d.2", f"{P}h3": "10.88.%d.3"}
NET = os.getpid() % 200 + 20
WRITES, BLOCK = 120, 4096


def sh(*cmd, check=True):
    return subprocess.run(cmd, check=check, capture_output=True, text=True)


def setup():
    sh("ip", "netns", "add", f"{P}sw")
    sh("ip", "netns", "exec", f"{P}sw", "ip", "link", "add", "br0", "type", "bridge")
    sh("ip", "netns", "exec", f"{P}sw", "ip", "link", "set", "br0", "up")
    for i, (ns, ip) in enumerate(HOSTS.items()):
        sh("ip", "netns", "add", ns)
        a, b = f"{P}v{i}a", f"{P}v{i}b"
        sh("ip", "link", "add", a, "type", "veth", "peer", "name", b)
        sh("ip", "link", "set", a, "netns", ns)
        sh("ip", "link", "set", b, "netns", f"{P}sw")
        sh("ip", "netns", "exec", f"{P}sw", "ip", "link", "set", b, "master", "br0", "up")
        sh("ip", "netns", "exec", ns, "ip", "addr", "add", (ip % NET) + "/24", "dev", a)
        sh("ip", "netns", "exec", ns, "ip", "link", "set", a, "up")
        sh("ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up")


def hosts_up():
    """Makes the hosts (setup); the reason why not, or None."""
    if os.geteuid() != 0 or not shutil.which("ip"):
        return "needs root and iproute2 (ip netns)"
    try:
        setup()
    except subprocess.CalledProcessError as e:
        teardown()
        return f"cannot make network namespaces here: {e.stderr.strip()}"
    return None


def teardown():
    for ns in list(HOSTS) + [f"{P}sw"]:
        sh("ip", "netns", "del", ns, check=False)


def addr(ns, port):
    return "tcp://%s:%d" % (HOSTS[ns] % NET, port)


class Job:
    def __init__(self, a, tmp):
        self.a, self.tmp = a, tmp
        self.env = dict(os.environ, IOPULSE_KEY=secrets.token_hex(16),
                        IOPULSE_JOB="%016x" % secrets.randbits(63))
        self.procs = []

    def start(self, ns, args, log, env=None):
        p = subprocess.Popen(["ip", "netns", "exec", ns] + args, env=env or self.env,
                             stdout=open(os.path.join(self.tmp, log), "ab"),
                             stderr=subprocess.STDOUT)
        self.procs.append(p)
        return p

    def collector(self, ns, role, log, *more):
        return self.start(ns, [self.a.iopulse, "collector", "--role", role] + list(more), log)

    def root(self):
        return self.collector(f"{P}h1", "root", "root.log", "--listen", addr(f"{P}h1", 7411),
                              "--summary-json", os.path.join(self.tmp, "summary.json"))

    def leaf(self, ns, parent):
        return self.collector(ns, "leaf", f"leaf-{ns}.log", "--parent", parent,
                              "--dir", os.path.join(self.tmp, ns))

    def writer(self, ns, rank):
        d = os.path.join(self.tmp, ns)
        pre = f"{self.a.asan_runtime}:{self.a.shim}" if self.a.asan_runtime else self.a.shim
        env = dict(self.env, LD_PRELOAD=pre, RANK=str(rank), ASAN_OPTIONS="detect_leaks=0",
                   IOPULSE_ADDR=f"ipc://{d}/leaf.ipc", IOPULSE_FINAL_ADDR=f"ipc://{d}/final.ipc")
        code = ("import os,time\n"
                f"f=os.open('{self.tmp}/out.{rank}', os.O_WRONLY|os.O_CREAT|os.O_TRUNC, 0o600)\n"
                f"for i in range({WRITES}):\n"
                f"    os.write(f, b'x'*{BLOCK}); time.sleep(0.05)\n"
                "os.close(f)\n")
        # each host its own host name (a UTS namespace), as real nodes have
        return self.start(ns, ["unshare", "--uts", "sh", "-c", 'hostname "$0" && exec "$@"', ns,
                               "/usr/bin/python3", "-c", code], f"writer{rank}.log", env)


def inexact(s, tmp, stem, ranks, writes):
    """The files stem.0 .. stem.<ranks-1> whose size or summary row is not
    writes x BLOCK bytes in writes calls."""
    files = {f["path"]: f for f in s["files"]}
    bad = []
    for rank in range(ranks):
        path = os.path.join(tmp, f"{stem}.{rank}")
        size = os.path.getsize(path)
        f = files.get(path)
        got = (f["write_bytes"], f["write_ops"]) if f else None
        if size != writes * BLOCK or got != (size, writes):
            bad.append(f"{path}: file {size} B, summary {got}")
    return bad


def run_job(a, tmp):
    """`iopulse run` in iop-h1 over a launcher that starts one writer on its
    own host and one on each of the two others: the first rank on each
    other host starts that node's leaf, which reaches the root over tcp."""
    h1, h2, h3 = list(HOSTS)
    summary = os.path.join(tmp, "run-summary.json")
    code = ("import os,sys,time\n"
            "f=os.open(sys.argv[1], os.O_WRONLY|os.O_CREAT|os.O_TRUNC, 0o600)\n"
            f"for i in range({WRITES // 2}):\n"
            f"    os.write(f, b'y'*{BLOCK}); time.sleep(0.02)\n"
            "os.close(f)\n")
    launch = ["sh", "-c",
              f'RANK=0 /usr/bin/python3 -c "$0" {tmp}/run.0 & '
              f'RANK=1 ip netns exec {h2} unshare --uts sh -c \'hostname {h2} && exec "$@"\' x '
              f'/usr/bin/python3 -c "$0" {tmp}/run.1 & '
              f'RANK=2 ip netns exec {h3} unshare --uts sh -c \'hostname {h3} && exec "$@"\' x '
              f'/usr/bin/python3 -c "$0" {tmp}/run.2 & wait', code]
    env = dict(os.environ)
    if a.asan_runtime:
        env.update(LD_PRELOAD=a.asan_runtime, ASAN_OPTIONS="detect_leaks=0")
    env["IOPULSE_SHIM"] = a.shim
    p = subprocess.run(["ip", "netns", "exec", h1, a.iopulse, "run", "--headless", "--listen",
                        addr(h1, 7421), "--summary-json", summary, "--"] + launch,
                       env=env, capture_output=True, text=True, timeout=90)
    if p.returncode != 0:
        raise SystemExit(f"FAIL: iopulse run exited {p.returncode}:\n{p.stderr}")
    s = json.load(open(summary))
    bad = inexact(s, tmp, "run", 3, WRITES // 2)
    bad += one_leaf_each(s, os.environ.get("TMPDIR") or "/tmp")  # the ranks' TMPDIR is ours
    nodes = s["job"]["nodes"]
    if bad or nodes != 3:
        raise SystemExit("FAIL: iopulse run across 3 hosts:\n  " + "\n  ".join(bad)
                         + f"\n  nodes {nodes} (want 3)\n{p.stderr}")
    print(f"PASS: iopulse run across 3 namespace hosts, a leaf started by the first rank "
          f"on each other host; totals exact, {nodes} nodes")


# The ssh stand-in: "AGENT [-opts] HOST COMMAND..." runs COMMAND with sh in
# HOST's namespace and host name, with the environment ssh would give it
# (and ASAN_OPTIONS, as a sanitizer build's user would set on every node:
# the MPI runtime's own leaks are not ours to report).
LAUNCH_AGENT = """#!/bin/sh
while [ "${1#-}" != "$1" ]; do shift; done  # ssh options (hydra passes -x)
host=$1; shift
case $host in
%s
  *) echo "agent: unknown host $host" >&2; exit 255;;
esac
exec env -i PATH="$PATH" HOME="$HOME" OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \\
  ASAN_OPTIONS="${ASAN_OPTIONS:-}" \\
  ip netns exec "$ns" unshare --uts sh -c 'hostname "$0" && exec sh -c "$1"' "$ns" "$*"
"""


def launcher(a, tmp):
    """The real MPI launcher run from h1, 2 ranks on each host (6 in all),
    its remote daemons started by the ssh stand-in: the command line to put
    the program after, and the environment of `iopulse run` over it."""
    h1 = list(HOSTS)[0]
    agent = os.path.join(tmp, "agent.sh")
    with open(agent, "w") as f:
        f.write(LAUNCH_AGENT % "\n".join(f"  {ip % NET}) ns={ns};;" for ns, ip in HOSTS.items()))
    os.chmod(agent, 0o755)
    hosts = ",".join(f"{ip % NET}:2" for ip in HOSTS.values())
    net = (HOSTS[h1] % NET).rsplit(".", 1)[0] + ".0/24"
    if "mpich" in os.path.basename(a.mpirun) or "mpiexec" in os.path.basename(a.mpirun):
        launch = [a.mpirun, "-launcher", "ssh", "-launcher-exec", agent, "-hosts", hosts, "-n", "6"]
    else:
        # The 3 hosts' 6 slots are one machine's 2 cores: ranks that poll
        # for messages at full speed starve each other (a collective call of
        # part 4 then took ~170 ms of its own instead of ~2 ms, and its ranks
        # waited in the reads too): yield when idle, as an oversubscribed
        # Open MPI job that knows it is does.
        launch = [a.mpirun, "--oversubscribe", "--host", hosts, "-n", "6", "--mca", "plm_rsh_agent",
                  agent, "--mca", "btl", "tcp,self", "--mca", "btl_tcp_if_include", net,
                  "--mca", "oob_tcp_if_include", net, "--mca", "mpi_yield_when_idle", "1"]
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               IOPULSE_SHIM=a.shim)
    if a.asan_runtime:
        env.update(LD_PRELOAD=a.asan_runtime, ASAN_OPTIONS="detect_leaks=0")
    return launch, env


def iopulse_run_h1(a, opts):
    """`iopulse run OPTS` in h1, under h1's host name."""
    h1 = list(HOSTS)[0]
    return ["ip", "netns", "exec", h1, "unshare", "--uts", "sh", "-c",
            'hostname "$0" && exec "$@"', h1, a.iopulse, "run"] + opts


def launcher_job(a, tmp):
    """`iopulse run` in h1 over the real MPI launcher, 2 ranks on each host."""
    launch, env = launcher(a, tmp)
    data, summary = os.path.join(tmp, "mpi-data"), os.path.join(tmp, "mpi-summary.json")
    cmd = iopulse_run_h1(a, ["--headless", "--summary-json", summary, "--"]) + launch + \
        [a.steady, "-d", data, "-T", "3", "-n", "50", "-s", "65536"]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    check_spread(os.path.basename(a.mpirun), p, summary, "/tmp")


def placement():
    """Where the launcher puts each of the 6 ranks: 2 on each host, in
    order (--host/-hosts H1:2,H2:2,H3:2)."""
    return {r: list(HOSTS)[r // 2] for r in range(6)}


def one_leaf_each(s, tmpdir):
    """One leaf per other node: a second one (the lock not held) fails to
    listen and says so in the node's leaf.log. Removes the leaves'
    directories (under the remote ranks' TMPDIR); what was wrong."""
    bad = []
    for ns in list(HOSTS)[1:]:
        d = f"{tmpdir}/iopulse-{s['job']['id']}-{ns}"
        log = os.path.join(d, "leaf.log")
        said = open(log).read() if os.path.exists(log) else ""
        shutil.rmtree(d, ignore_errors=True)
        if "cannot listen" in said:
            bad.append(f"{ns}: a second leaf was started: {said.strip()}")
    return bad


def check_spread(launcher, p, summary, tmpdir):
    """`iopulse run` of examples/steady over LAUNCHER, 2 ranks on each
    host: exited 0, steady's truth lines equal the summary, 3 nodes, each
    rank on the host the launcher chose, one leaf per node (the leaves'
    directories are under the remote ranks' TMPDIR)."""
    if p.returncode != 0:
        raise SystemExit(f"FAIL: iopulse run -- {launcher} exited {p.returncode}:\n{p.stderr}")
    truth = [json.loads(l) for l in p.stdout.splitlines() if l.startswith('{"example"')]
    s = json.load(open(summary))
    files = {f["path"]: f for f in s["files"]}
    bad = []
    for t in truth:
        for f in t["files"]:
            g = files.get(f["path"])
            if not g or (g["write_bytes"], g["write_ops"]) != (f["write_bytes"], f["write_ops"]):
                bad.append(f"{f['path']}: program {f['write_bytes']} B in {f['write_ops']} "
                           f"writes, summary {g and (g['write_bytes'], g['write_ops'])}")
    nodes = {r["rank"]: r["node"] for r in s["ranks"]}
    want = placement()
    bad += one_leaf_each(s, tmpdir)
    if len(truth) != 6 or bad or s["job"]["nodes"] != 3 or nodes != want:
        raise SystemExit(f"FAIL: {launcher} across 3 hosts: {len(truth)} truth "
                         f"lines; nodes {s['job']['nodes']} (want 3); ranks on {nodes}, want "
                         f"{want}\n  " + "\n  ".join(bad) + f"\n{p.stderr}")
    print(f"PASS: iopulse run -- {launcher} across 3 namespace hosts: 6 ranks exact, each on "
          f"its host; monitor {s['monitor']}")


LATE_CALLS, LATE_MS = 30, 150  # late-collective -n, and its default -l


def late_job(a, tmp):
    """Part 4: `iopulse run --alerts` over the same launcher (6 ranks, 2 per
    host) of examples/late-collective: its last rank, on h3, comes LATE_MS
    late to each of LATE_CALLS MPI_File_write_at_all on one shared file."""
    launch, env = launcher(a, tmp)
    data = os.path.join(tmp, "late-data")  # one path for every rank: the hosts share the fs
    summary, alerts = os.path.join(tmp, "late-summary.json"), os.path.join(tmp, "late-alerts.jsonl")
    cmd = iopulse_run_h1(a, ["--headless", "--summary-json", summary, "--alerts", alerts, "--"]) \
        + launch + [a.late, "-d", data, "-n", str(LATE_CALLS)]
    t0 = time.time()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        out, err = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        # Seen once in CI (stop 30), not since: say where every process of
        # the job is before failing, for the next one to read.
        stuck(proc, a.late)
        raise SystemExit(f"FAIL: iopulse run -- {os.path.basename(a.mpirun)} of "
                         f"late-collective did not end in 120 s (above: where it was)")
    p = subprocess.CompletedProcess(cmd, proc.returncode, out, err)
    check_late(os.path.basename(a.mpirun), p, summary, alerts, "/tmp", time.time() - t0)
    shutil.rmtree(data, ignore_errors=True)


def stuck(proc, program):
    """Prints the state of a job that did not end: its processes (state,
    kernel wait channel, command), every thread's stack of the program's
    and of iopulse's (gdb), then kills it and prints what it had written."""
    ps = subprocess.run(["ps", "-e", "-o", "pid,ppid,stat,etime,wchan:24,args"],
                        capture_output=True, text=True).stdout.splitlines()
    mine = [line for line in ps[1:] if program in line or "iopulse" in line
            or "orted" in line or "prted" in line or "mpirun" in line]
    print("still running:\n  " + "\n  ".join([ps[0]] + mine), file=sys.stderr)
    gdb = shutil.which("gdb")
    for line in mine:
        pid, args = line.split()[0], line.split(None, 5)[-1]
        if gdb and (args.startswith(program) or "iopulse" in args.split()[0]):
            bt = subprocess.run([gdb, "-p", pid, "-batch", "-ex", "thread apply all bt 12"],
                                capture_output=True, text=True, timeout=60).stdout
            print(f"--- pid {pid}: {args[:80]}\n{bt[-6000:]}", file=sys.stderr)
    proc.kill()
    out, err = proc.communicate()
    print(f"--- its stdout:\n{out[-4000:]}\n--- its stderr:\n{err[-4000:]}", file=sys.stderr)


def check_late(launcher, p, summary, alerts, tmpdir, took):
    """Part 4's checks: exited 0 with 6 truth lines; a late_arrival starts
    on the late rank (the last, 5) at mpiio on the shared file, and neither
    late_arrival nor straggler starts on another rank; the summary puts rank
    5 (all ranks) on the host the launcher chose, on 3 nodes; the late
    rank's summary wait_s is under a third of any other's; each other
    rank's summary wait_s is within 15 % of the wait it measured (cross-host
    tcp MPI between namespaces of a 2-core machine is slow and uneven: 15 %,
    not late_collective.py's 10 %), and that wait is near LATE_CALLS x
    LATE_MS (the collective synchronises)."""
    def bad(why):
        raise SystemExit(f"FAIL: late-collective over {launcher} across 3 hosts: {why}\n"
                         f"{p.stderr}")

    if p.returncode != 0:
        bad(f"iopulse run exited {p.returncode}")
    truth = {}
    for line in p.stdout.splitlines():
        if line.startswith('{"example"'):
            d = json.loads(line)
            truth[d["rank"]] = d
    if sorted(truth) != list(range(6)):
        bad(f"truth lines of ranks {sorted(truth)}, want 0..5:\n{p.stdout}")
    late = truth[0]["late_rank"]
    if late != 5 or any(d["late_rank"] != late for d in truth.values()):
        bad(f"late ranks {[d['late_rank'] for d in truth.values()]}, want 5 everywhere")
    path = truth[late]["files"][0]["path"]
    if any(d["files"][0]["path"] != path for d in truth.values()):
        bad(f"not one shared file: {[d['files'][0]['path'] for d in truth.values()]}")
    starts = [x for x in (json.loads(l) for l in open(alerts) if l.strip())
              if x.get("state") == "start"]
    la = [x for x in starts if x["kind"] == "late_arrival"]
    mine = [x for x in la if x.get("rank") == late]
    if not mine:
        bad(f"no late_arrival start on rank {late}; alert starts: {starts}")
    alert = mine[0]
    if alert.get("layer") != "mpiio" or not alert.get("file", "").startswith(path):
        bad(f"late_arrival names layer {alert.get('layer')!r} file {alert.get('file')!r}, "
            f"want mpiio {path}")
    wrong = [x for x in la if x.get("rank") != late] + \
        [x for x in starts if x["kind"] == "straggler" and x.get("rank") != late]
    if wrong:
        bad(f"late_arrival or straggler on a rank other than {late}: {wrong}")
    s = json.load(open(summary))
    ranks = {r["rank"]: r for r in s["ranks"]}
    nodes = {r: ranks[r]["node"] for r in ranks}
    if s["job"]["nodes"] != 3 or nodes != placement():
        bad(f"nodes {s['job']['nodes']} (want 3); ranks on {nodes}, want {placement()} "
            f"(the late rank on {placement()[late]})")
    leaves = one_leaf_each(s, tmpdir)
    if leaves:
        bad("\n  ".join(leaves))
    # each host's leaf sampled its own node (issue 21): a "nodes" entry per
    # host, each with the shared data file's file system and its device's
    # figures (the namespaces share this machine's disk)
    sampled = {n["node"]: n for n in s.get("nodes", [])}
    if set(sampled) != set(HOSTS):
        bad(f"the summary's nodes sampled are {sorted(sampled)}, want each host {sorted(HOSTS)}")
    for host, n in sampled.items():
        fss = [f for f in n.get("filesystems", []) if f.get("kind") == "device"]
        if not fss or "util_peak" not in fss[0]:
            bad(f"host {host}'s node sample has no device figures: {n}")
    # The summary's wait_s is the wait in every collective call: it is
    # compared with all_wait_s, the program's own measure over every
    # collective call (opens, closes and reads besides the late writes).
    waits = ", ".join(f"{r} {ranks[r]['wait_s']:.2f}/{truth[r]['all_wait_s']:.2f}"
                      for r in range(6))
    others = [ranks[r]["wait_s"] for r in range(6) if r != late]
    if ranks[late]["wait_s"] * 3 > min(others):
        bad(f"the late rank {late} waited {ranks[late]['wait_s']:.3f} s by the summary, over a "
            f"third of the least another rank waited (wait_s summary/measured: {waits})")
    due = LATE_CALLS * LATE_MS / 1000
    for r, d in sorted(truth.items()):
        if r == late:
            continue
        got, want = ranks[r]["wait_s"], d["all_wait_s"]
        # the program's wait is its time in the call less the shortest;
        # iopulse counts an aggregator's POSIX writes inside the call as its
        # own I/O, not waiting (under ASan beside other tests 1.8 s of rank
        # 0's 8.0 s: summary 6.25, measured 8.03), as late_collective.py does
        below = ranks[r]["layers"].get("posix", {}).get("time_s", 0.0)
        if d["wait_s"] < 0.7 * due:
            bad(f"rank {r} measured a wait of {d['wait_s']:.3f} s in the writes, want about "
                f"{due:.1f} s: the collective write did not synchronise (OMPIO's fcoll "
                f"individual?)")
        if abs(got - want) > 0.15 * want + below:
            bad(f"rank {r}: summary wait_s {got:.3f}, measured {want:.3f} (more than 15 % "
                f"+ its POSIX time {below:.3f} apart; wait_s summary/measured: {waits})")
    print(f"PASS: late-collective over {launcher} across 3 namespace hosts in {took:.1f} s: "
          f"late_arrival on rank {late} on {nodes[late]}: {alert.get('message')}; wait_s "
          f"summary/measured: {waits}")


def wait_for(cond, seconds, what):
    end = time.time() + seconds
    while time.time() < end:
        if cond():
            return
        time.sleep(0.05)
    raise SystemExit(f"FAIL: {what} within {seconds} s")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iopulse", required=True)
    ap.add_argument("--shim", required=True)
    ap.add_argument("--asan-runtime", default="")
    ap.add_argument("--mpirun", default="")
    ap.add_argument("--steady", default="")
    ap.add_argument("--late", default="")
    a = ap.parse_args()
    why = hosts_up()
    if why:
        print("SKIP: " + why)
        return 77
    tmp = tempfile.mkdtemp(prefix="iop-netns-")
    job = Job(a, tmp)
    try:
        h1, h2, h3 = list(HOSTS)
        for ns in (h2, h3):
            os.mkdir(os.path.join(tmp, ns), 0o700)
        root = job.root()
        mid = job.collector(h1, "mid", "mid.log", "--listen", addr(h1, 7412), "--parent",
                            addr(h1, 7411))
        leaf2 = job.leaf(h2, addr(h1, 7411))
        leaf3 = job.leaf(h3, addr(h1, 7412))
        wait_for(lambda: all(os.path.exists(os.path.join(tmp, ns, "leaf.ipc")) for ns in (h2, h3)),
                 10, "the leaves listen")
        writers = [job.writer(h2, 0), job.writer(h2, 1), job.writer(h3, 2), job.writer(h3, 3)]
        time.sleep(1.5)
        leaf2.send_signal(signal.SIGKILL)  # a leaf dies mid-run ...
        leaf2.wait()
        time.sleep(0.5)
        os.unlink(os.path.join(tmp, h2, "leaf.ipc"))
        os.unlink(os.path.join(tmp, h2, "final.ipc"))
        leaf2 = job.leaf(h2, addr(h1, 7411))  # ... and comes back
        time.sleep(1.5)
        root.send_signal(signal.SIGKILL)  # the root dies ...
        root.wait()
        time.sleep(0.5)
        root = job.root()  # ... and comes back
        for w in writers:
            if w.wait(timeout=60) != 0:
                raise SystemExit(f"FAIL: a writer failed; see {tmp}")
        time.sleep(5)  # the leaves' last ticks reach the root (a loaded machine is slow)
        # Ended from the leaves up, each once the one below it has: a node
        # ends by sending its last ticks up and waiting for their
        # acknowledgement (a fixed 3 s before the root, with the mid ended
        # with the leaves, was a guess at how long that takes).
        for level in ((leaf2, leaf3), (mid,), (root,)):
            for p in level:
                p.send_signal(signal.SIGTERM)
            for p in level:
                if p.wait(timeout=30) != 0:
                    raise SystemExit(f"FAIL: the {p.args[7]} in {p.args[3]} did not end cleanly; "
                                     f"logs in {tmp}")
        s = json.load(open(os.path.join(tmp, "summary.json")))
        bad = inexact(s, tmp, "out", 4, WRITES)
        nodes = s["job"]["nodes"]
        print(f"ok: nodes {nodes}, monitor {s['monitor']}")
        if bad or nodes != 2:
            raise SystemExit("FAIL: totals not exact after a leaf and the root restarted:\n  "
                             + "\n  ".join(bad) + f"\n  nodes {nodes} (want 2); logs in {tmp}")
        print("PASS: 3 namespace hosts, leaf -> (mid ->) root over tcp; a leaf and the root "
              "killed and restarted; totals exact")
        run_job(a, tmp)
        if a.mpirun and a.steady:
            launcher_job(a, tmp)
        if a.mpirun and a.late:
            late_job(a, tmp)
        shutil.rmtree(tmp)
        return 0
    finally:
        for p in job.procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        teardown()


if __name__ == "__main__":
    sys.exit(main())
