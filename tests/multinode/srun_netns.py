#!/usr/bin/python3
"""`iopulse run -- srun -N 3 -n 6 steady` on a Slurm cluster of three hosts
made of network namespaces (netns_tree.py's hosts): slurmctld and a slurmd
in the first, a slurmd in each of the others, each under its host's name
(slurm_cluster.py in tests/run-e2e; one munged, its socket a path).
iopulse run and srun are in the first host. The ranks on the other two are
monitored only because srun forwarded iopulse's environment, and their
leaves are started by their first rank. steady's truth lines must equal the
summary, on 3 nodes, ranks 2k and 2k+1 on host k+1 (srun's block
distribution, 2 CPUs a node), one leaf per node (netns_tree.check_spread).

Open MPI's ranks talk over tcp on the namespaces' network
(OMPI_MCA_btl*, passed by srun like every variable).

Exit 77 (a ctest SKIP) with the reason when network namespaces cannot be
made or Slurm cannot start here.
Usage: srun_netns.py --iopulse BIN --shim LIB --steady STEADY [--mpi pmix|pmi2]
                     [--asan-runtime LIBASAN]
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "run-e2e"))
sys.path.insert(0, HERE)
import netns_tree as nt  # noqa: E402
from slurm_cluster import SlurmCluster, SlurmUnavailable  # noqa: E402

RUN_TIMEOUT_S = 40  # ctest: 75 s in all


def on_host(pmix_dir):
    """The command prefix that runs a process on host ns: in its network
    namespace, under its own host name, with pmix_dir/ns bound on pmix_dir
    (slurm_cluster.py) in a mount namespace of its own. nsenter, not `ip
    netns exec`, which mounts a /sys without the cgroup file system that
    slurmd looks for."""
    def on(ns):
        return ["nsenter", "--net=/run/netns/" + ns, "unshare", "--uts", "--mount",
                "--propagation", "private", "sh", "-c",
                'hostname "$0" && mount --bind "$1/$0" "$1" && shift && exec "$@"',
                ns, pmix_dir]
    return on


def srun_job(a, tmp, cluster):
    h1 = list(nt.HOSTS)[0]
    data, summary = os.path.join(tmp, "data"), os.path.join(tmp, "summary.json")
    net = (nt.HOSTS[h1] % nt.NET).rsplit(".", 1)[0] + ".0/24"
    env = cluster.job_env(IOPULSE_SHIM=a.shim, TMPDIR="/tmp", OMPI_MCA_btl="tcp,self",
                          OMPI_MCA_btl_tcp_if_include=net, OMPI_MCA_oob_tcp_if_include=net)
    if a.asan_runtime:
        env.update(LD_PRELOAD=a.asan_runtime, ASAN_OPTIONS="detect_leaks=0")
    cmd = cluster.on(h1) + [a.iopulse, "run", "--headless", "--summary-json", summary, "--",
                    shutil.which("srun"), "-N", "3", "-n", "6",
                    a.steady, "-d", data, "-T", "3", "-n", "50", "-s", "65536"]
    t = time.time()
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
    p.stderr += "\nslurmd logs:\n" + "".join(cluster.log("slurmd-" + n) for n in nt.HOSTS)
    nt.check_spread("srun (--mpi=%s)" % a.mpi, p, summary, "/tmp")
    print("ok: the job took %.1f s" % (time.time() - t))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iopulse", required=True)
    ap.add_argument("--shim", required=True)
    ap.add_argument("--steady", required=True)
    ap.add_argument("--mpi", default="pmix", help="the cluster's MpiDefault")
    ap.add_argument("--asan-runtime", default="")
    a = ap.parse_args()
    why = nt.hosts_up()
    if why:
        print("SKIP: " + why)
        return 77
    tmp = tempfile.mkdtemp(prefix="iop-srun-netns-")
    t0 = time.time()
    try:
        nodes = [(ns, ip % nt.NET) for ns, ip in nt.HOSTS.items()]
        on = on_host(os.path.join(tmp, "slurm", "pmix"))
        with SlurmCluster(tmp, mpi_default=a.mpi, nodes=nodes, on=on) as cluster:
            print("ok: Slurm up on %s in %.1f s" % (", ".join(nt.HOSTS), time.time() - t0))
            srun_job(a, tmp, cluster)
        shutil.rmtree(tmp)
        return 0
    except SlurmUnavailable as e:  # only starting raises it
        print("SKIP: Slurm cannot run here: %s" % e)
        shutil.rmtree(tmp)
        return 77
    finally:
        nt.teardown()


if __name__ == "__main__":
    sys.exit(main())
