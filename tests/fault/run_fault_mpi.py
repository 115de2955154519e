#!/usr/bin/python3
"""A slow rank in a real MPI job, seen through the shim: examples/fpp on 2
ranks under LD_PRELOAD=libiopulse.so:libiopfault.so, sending to iop-sink.

    run_fault_mpi.py --sink IOP_SINK --shim LIBIOPULSE --fault LIBIOPFAULT
                     --mpirun LAUNCHER --fpp FPP [--delay-us N] [--asan-runtime LIBASAN]

Rank 1 is slowed (IOPFAULT_RANK=1) on the job's data files only
(IOPFAULT_FILE=<data dir>/*, so the MPI runtime's own files are not), by
--delay-us on every read and write. Checks, from the sink's totals:

  1. the job ran (exit 0, fpp's truth lines), the sink got both FINAL frames
     and rejected nothing;
  2. the shim's counters still have fpp's exact ops and bytes per file (the
     fault changes timing, never results);
  3. rank 1's POSIX read + write time is larger than rank 0's by at least
     delay x the read and write ops rank 1 made on its data file;
  4. rank 0 is not slowed: its time on its data file is under a tenth of
     what the delay would have added to it.

The launcher, sink and process helpers are run_example.py's (tests/shim-e2e).
Exit status: 0 pass, 1 fail, 2 bad usage.
"""

import argparse
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "shim-e2e"))
import run_example as e2e  # noqa: E402

RANKS = 2
SLOW_RANK = 1
TRANSFERS = 64  # fpp -n: writes, then as many reads


def posix_rw(tree, field):
    return sum(e2e.cls_get(tree, "posix", c, field) for c in ("read", "write"))


def check(chk, args, doc, truth, datadir):
    e2e.check_delivery(chk, doc, RANKS)
    e2e.check_totals(chk, args, doc, truth)
    files = e2e.sink_files(doc)
    ranks = {r["rank"]: r for r in doc.get("ranks", [])}
    data = {r: files.get(os.path.join(os.path.realpath(datadir), f"fpp.{r}"), {})
            for r in range(RANKS)}
    if not chk.expect(3, all(data.values()) and set(ranks) == set(range(RANKS)),
                      "the sink has both ranks and both data files"):
        return
    delay_ns = args.delay_us * 1000
    ops = {r: posix_rw(data[r].get("counters", {}), "ops") for r in range(RANKS)}
    file_ns = {r: posix_rw(data[r].get("counters", {}), "time_ns") for r in range(RANKS)}
    rank_ns = {r: posix_rw(ranks[r].get("counters", {}), "time_ns") for r in range(RANKS)}
    injected = delay_ns * ops[SLOW_RANK]
    for r in range(RANKS):
        print(f"  rank {r}: posix read+write {rank_ns[r] / 1e6:.1f} ms in all "
              f"({file_ns[r] / 1e6:.1f} ms over {ops[r]} ops on fpp.{r})")
    print(f"  injected on rank {SLOW_RANK}: {args.delay_us} us x {ops[SLOW_RANK]} ops = "
          f"{injected / 1e6:.1f} ms; rank {SLOW_RANK} - rank 0 = "
          f"{(rank_ns[SLOW_RANK] - rank_ns[0]) / 1e6:.1f} ms")
    chk.equal(3, "read + write ops of the slow rank on its file", 2 * TRANSFERS, ops[SLOW_RANK])
    chk.expect(3, rank_ns[SLOW_RANK] - rank_ns[0] >= injected,
               f"rank {SLOW_RANK}'s I/O time exceeds rank 0's by the injected delay",
               f">= {injected}", rank_ns[SLOW_RANK] - rank_ns[0])
    chk.expect(4, file_ns[0] < delay_ns * ops[0] / 10, "rank 0 is not slowed",
               f"< {delay_ns * ops[0] / 10}", file_ns[0])


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sink", required=True)
    p.add_argument("--shim", required=True)
    p.add_argument("--fault", required=True, help="libiopfault.so")
    p.add_argument("--mpirun", required=True)
    p.add_argument("--fpp", required=True, help="examples/fpp")
    p.add_argument("--flavor", choices=("openmpi", "mpich"))
    p.add_argument("--delay-us", type=int, default=2000)
    p.add_argument("--asan-runtime", default="")
    p.add_argument("--keep", action="store_true")
    args = p.parse_args(argv)
    if args.flavor is None:
        name = os.path.basename(args.mpirun)
        args.flavor = "mpich" if "mpich" in name or "hydra" in name else "openmpi"
    args.ranks, args.check_hdf5 = RANKS, False
    tmp = tempfile.mkdtemp(prefix="iop-fault-mpi-", dir="/tmp")
    datadir = os.path.join(tmp, "data")
    args.program = [args.fpp, "-n", str(TRANSFERS), "-d", datadir]
    chk = e2e.Checks()
    print(f"== fpp, {RANKS} ranks ({args.flavor}), rank {SLOW_RANK} slowed by "
          f"{args.delay_us} us per read/write, in {tmp}")
    try:
        url, key = f"ipc://{tmp}/sink.ipc", os.urandom(16).hex()
        sink, out = e2e.start_sink(args, tmp, url, key, RANKS, e2e.PROGRAM_TIMEOUT_S,
                                   e2e.PROGRAM_TIMEOUT_S * 1000)
        env = e2e.shim_env(args, url, key)
        env["LD_PRELOAD"] += ":" + os.path.realpath(args.fault)
        env.update({"IOPFAULT_RANK": str(SLOW_RANK), "IOPFAULT_DELAY_US": str(args.delay_us),
                    "IOPFAULT_FILE": os.path.realpath(datadir) + "/*", "IOPFAULT_VERBOSE": "1"})
        try:
            status, stdout, stderr, secs = e2e.run_program(args, env)
        except BaseException:
            e2e.kill_group(sink)
            raise
        e2e.report_program(chk, status, stderr, secs)
        print("program stderr:\n" + e2e.indent(stderr))
        if status != 0:
            e2e.kill_group(sink)
        else:
            truth = e2e.parse_truth(chk, stdout, RANKS)
            check(chk, args, e2e.finish_sink(sink, out, tmp), truth, datadir)
    except RuntimeError as e:
        chk.expect(0, False, str(e))
    finally:
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    print("== fault_mpi: " + ("ok" if chk.failures == 0 else f"FAILED ({chk.failures} checks)"))
    return 0 if chk.failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
