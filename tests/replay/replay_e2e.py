#!/usr/bin/python3
"""End-to-end tests of reading recordings back: `iopulse replay --headless`,
`iopulse export` and damaged files, on a real recording.

    replay_e2e.py --iopulse IOPULSE --mpirun LAUNCHER --fault LIBIOPFAULT
                  --fpp FPP --checkpoint MPI_CHECKPOINT [--only PART,...]

It records a real job once: `iopulse run --headless --record R` of FPP on
4 ranks with rank 2 slowed by the fault-injection preload (a straggler
alert fires live), 200 ms ticks. Then, each part on that recording:

  headless  `replay --headless --summary-json --alerts`: the summary's
            totals (layers, files, ranks, monitor) and alerts equal the live
            summary's, and the alert records equal the live alerts file;
            --format jsonl gives meta, one sample per recorded tick, the
            summary last; --rules with a lower imbalance threshold fires an
            imbalance alert the live run did not have; --fail-on warn exits 3,
            without it 0; --speed 4 takes at least a quarter of the span
            of its ticks (and the default is faster than real time); bad input
            exits 1 (usage, an output that is the recording itself) or 2
            (missing file, not a recording, a summary path that cannot be
            written, output to a full disk, as `iopulse summary` does) with
            a message naming the problem; --help of replay, summary and
            export lists each option, defaults and the exit status.

  export    `export --format csv` (parsed with the csv module) and `--format
            jsonl` (json module) give the same rows; summed over the ticks,
            the layer, file and rank rows equal `iopulse summary --json`'s
            totals (the job drops no events); bad input exits 1 or 2, and
            -o naming the recording itself leaves it whole.
  damage    copies of the recording cut at many points replay exactly the
            ticks whose frames are whole (counted by walking the frames
            here) and say TRUNCATED at, as `iopulse summary` does (one cut
            before its first tick lasted 0 s; one cut in its first frame is
            TRUNCATED at the header's time, not 1970); a flipped DELTA payload or
            frame header is skipped, counted and reported (CORRUPT, by
            summary too) and the other ticks read; 40 random flips and cuts
            never crash replay or
            export; a header saying format version 2 is refused (exit 2,
            "newer than this reader").
  follow    `replay --follow --format jsonl` started with the recording of a
            running job keeps up with it (most ticks come out before the job
            ends), ends when the recording is closed, and its summary equals
            the live one; a job killed with SIGKILL while recording replays
            to its last tick (TRUNCATED at, bytes written so far).
  events    `run --record-events` of mpi-checkpoint (MPI-IO over POSIX), then
            `export --format chrome` parsed with the json module: a track per
            rank, a slice per event the summary counted, bytes per layer and
            class equal the summary's, POSIX calls nested inside MPI-IO
            writes; a recording without events is refused with the way out.

Standard library only, for Debian's /usr/bin/python3. Exit status: 0 pass,
1 fail, 2 bad usage.
"""
import argparse
import csv
import json
import os
import random
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time

TIMEOUT_S = 120


CHUNK = 4096  # bytes a transfer of the recorded fpp job moves

def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def launcher(args, n):
    cmd = [args.mpirun, "-n", str(n)]
    if "mpich" not in os.path.basename(args.mpirun):
        cmd.insert(1, "--oversubscribe")
    return cmd


def run(cmd, **kw):
    kw.setdefault("stdout", subprocess.PIPE)
    kw.setdefault("stderr", subprocess.PIPE)
    kw.setdefault("stdin", subprocess.DEVNULL)
    return subprocess.run(cmd, text=True, timeout=TIMEOUT_S, **kw)


def record(args, tmp):
    """The job, recorded; returns (recording, live summary, live alert records)."""
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               IOPFAULT_RANK="2", IOPFAULT_DELAY_US="1000")
    rec = os.path.join(tmp, "job.iop")
    live_sum = os.path.join(tmp, "live.json")
    live_alerts = os.path.join(tmp, "live_alerts.jsonl")
    data = os.path.join(tmp, "data")
    os.mkdir(data)
    launch = launcher(args, 4)
    # a history budget of 1 MiB: the replayed states thin as the live one did
    # full: every tick whole, so that --rules can judge it again and the
    # export's rows sum to the totals (the default, view: part follow;
    # lean: part follow's killed job)
    cmd = [args.iopulse, "run", "--headless", "--tick", "200", "--record", rec,
           "--record-detail", "full",
           "--summary-json", live_sum, "--alerts", live_alerts, "--history-mib", "1",
           "--also-preload", args.fault, "--"] + launch + [args.fpp, "-n", "2000", "-s",
                                                            str(CHUNK), "-d", data]
    p = run(cmd, env=env)
    if p.returncode != 0:
        fail("the recorded job exited %d: %s" % (p.returncode, p.stderr[-2000:]))
    with open(live_sum) as f:
        summary = json.load(f)
    with open(live_alerts) as f:
        alerts = [json.loads(l) for l in f if l.strip()]
    if not any(a["kind"] == "straggler" for a in summary["alerts"]):
        fail("no straggler alert in the live run: %s" % summary["alerts"])
    return rec, summary, alerts


TOTALS = ("layers", "files", "ranks", "monitor")


def replay(args, rec, *opts):
    return run([args.iopulse, "replay", rec, *opts])


def part_headless(args, tmp, rec, live, live_alerts):
    out_sum = os.path.join(tmp, "replay.json")
    out_alerts = os.path.join(tmp, "replay_alerts.jsonl")
    p = replay(args, rec, "--headless", "--summary-json", out_sum, "--alerts", out_alerts)
    if p.returncode != 0:
        fail("replay --headless exited %d: %s" % (p.returncode, p.stderr))
    if "alerts:" not in p.stderr:
        fail("no summary table on stderr: %s" % p.stderr)
    with open(out_sum) as f:
        rs = json.load(f)
    for key in TOTALS + ("alerts",):
        if rs[key] != live[key]:
            fail("replayed summary's %s differ from the live one:\n%s\n%s"
                 % (key, json.dumps(rs[key])[:1500], json.dumps(live[key])[:1500]))
    if rs["job"]["id"] != live["job"]["id"] or rs["job"]["command"] != live["job"]["command"]:
        fail("job differs: %s vs %s" % (rs["job"], live["job"]))
    with open(out_alerts) as f:
        ra = [json.loads(l) for l in f if l.strip()]
    if ra != live_alerts:
        fail("replayed alert records differ from the live ones:\n%s\n%s" % (ra, live_alerts))
    print("headless: totals, %d alerts and %d alert records equal the live run's"
          % (len(rs["alerts"]), len(ra)))

    # --format jsonl: meta, a sample per recorded tick, the summary last
    p = replay(args, rec, "--format", "jsonl")
    recs = [json.loads(l) for l in p.stdout.splitlines()]
    if p.returncode != 0 or not recs or recs[0]["type"] != "meta" or recs[-1]["type"] != "summary":
        fail("jsonl: want meta first and summary last, rc %d: %s" % (p.returncode, p.stdout[:500]))
    if any(r.get("v") != 1 for r in recs):
        fail("jsonl: a record without v 1")
    samples = [r for r in recs if r["type"] == "sample"]
    v = run([args.iopulse, "verify", rec])
    deltas = int(v.stdout.split("DELTA ")[1].split()[0])
    if "\nhistory    1 MiB" not in v.stdout:
        fail("verify does not show the recorded history budget (1 MiB): %s" % v.stdout)
    if len(samples) != deltas:
        fail("jsonl: %d samples for %d recorded ticks" % (len(samples), deltas))
    if {k: recs[-1][k] for k in TOTALS} != {k: live[k] for k in TOTALS}:
        fail("jsonl: the last record's totals differ from the live summary")
    print("jsonl: meta, %d samples (one per DELTA), summary" % len(samples))

    # --rules: lower thresholds fire an alert the live run did not have
    rules = os.path.join(tmp, "rules.json")
    with open(rules, "w") as f:
        json.dump({"imbalance": {"min_bytes": 1, "warn": 1.2, "crit": None,
                                 "min_duration_s": 0.2}}, f)
    if any(a["kind"] == "imbalance" for a in live["alerts"]):
        fail("the live run already had imbalance; the --rules check needs a run without")
    low_sum = os.path.join(tmp, "low.json")
    p = replay(args, rec, "--rules", rules, "--summary-json", low_sum)
    with open(low_sum) as f:
        low = json.load(f)
    kinds = sorted({a["kind"] for a in low["alerts"]})
    if p.returncode != 0 or "imbalance" not in kinds or "straggler" not in kinds:
        fail("--rules: want imbalance besides straggler, got %s (rc %d)" % (kinds, p.returncode))
    if "WARN imbalance" not in p.stderr:
        fail("--rules: no human imbalance line on stderr: %s" % p.stderr)
    print("rules: a lower imbalance threshold gives %s" % kinds)

    # --fail-on
    p = replay(args, rec, "--fail-on", "warn")
    if p.returncode != 3:
        fail("--fail-on warn: exit %d, want 3" % p.returncode)
    p = replay(args, rec, "--fail-on", "crit", "--rules", rules)
    want = 3 if any(a["severity"] == "crit" for a in low["alerts"]) else 0
    if p.returncode != want:
        fail("--fail-on crit: exit %d, want %d" % (p.returncode, want))
    print("fail-on: warn exits 3, crit exits %d" % want)

    # --speed: paced against the recording's span
    span = samples[-1]["t"] - samples[0]["t"]
    t = time.monotonic()
    p = replay(args, rec, "--headless", "--speed", "4")
    slow = time.monotonic() - t
    t = time.monotonic()
    replay(args, rec, "--headless")
    fast = time.monotonic() - t
    if p.returncode != 0 or slow < 0.9 * span / 4:
        fail("--speed 4 took %.2f s for a %.2f s recording" % (slow, span))
    print("speed: %.2f s span replayed in %.2f s at 4x, %.2f s as fast as possible"
          % (span, slow, fast))

    # bad input
    text = os.path.join(tmp, "notes.txt")
    with open(text, "w") as f:
        f.write("not a recording\n" * 10)
    for opts, rc, words in [([os.path.join(tmp, "missing.iop")], 2, "No such file"),
                            ([text], 2, "not an iopulse recording"),
                            ([tmp], 2, "Is a directory"),
                            ([rec, "--speed", "0"], 1, "--speed"),
                            ([rec, "--format", "xml"], 1, "unknown format"),
                            ([rec, "--rules", os.path.join(tmp, "none.json")], 1, "none.json"),
                            ([rec, "--summary-json", os.path.join(tmp, "none", "s.json")], 2,
                             "cannot write the summary"),
                            ([rec, "--summary-json", rec], 1, "overwrite the recording"),
                            ([rec, "--alerts", rec], 1, "overwrite the recording"),
                            ([], 1, "which recording")]:
        size = os.path.getsize(rec)
        p = run([args.iopulse, "replay", *opts])
        if p.returncode != rc or words not in p.stderr or os.path.getsize(rec) != size:
            fail("replay %s: exit %d (want %d), stderr %r (want %r), recording %d bytes of %d"
                 % (opts, p.returncode, rc, p.stderr, words, os.path.getsize(rec), size))
    print("bad input: exit codes and messages as documented")

    # --help lists every option with its default, and the exit status (UX.md)
    for cmd, options in (("replay", ("--headless", "--format", "--alerts", "--summary-json",
                                     "--rules", "--fail-on", "--speed", "--follow")),
                         ("summary", ("--json", "--rules")),
                         ("export", ("--format", "--output"))):
        p = run([args.iopulse, cmd, "--help"])
        missing = [o for o in options if "  " + o not in p.stdout and ", " + o not in p.stdout]
        if p.returncode != 0 or missing or "default" not in p.stdout or \
                "Exit status" not in p.stdout:
            fail("%s --help: exit %d, options not listed: %s\n%s"
                 % (cmd, p.returncode, missing, p.stdout))

    # output to a full disk: said, and exit 2 (it was 0, the output lost)
    with open("/dev/full", "w") as full:
        for cmd in (["replay", rec, "--format", "jsonl"], ["summary", rec, "--json"],
                    ["summary", rec]):
            p = run([args.iopulse, *cmd], stdout=full)
            if p.returncode != 2 or "cannot write output" not in p.stderr:
                fail("%s > /dev/full: exit %d (want 2), %r" % (cmd, p.returncode, p.stderr))


def export_sums(rows):
    """Per layer, per (path, layer) and per rank, the summary's keys summed."""
    layers, files, ranks = {}, {}, {}
    for r in rows:
        key = {"read": "read", "write": "write"}.get(r["class"])
        if r["kind"] == "layer":
            l = layers.setdefault(r["layer"], dict.fromkeys(
                ("read_bytes", "write_bytes", "read_ops", "write_ops", "meta_ops"), 0))
            if key:
                l[key + "_bytes"] += int(r["bytes"])
                l[key + "_ops"] += int(r["ops"])
            else:
                l["meta_ops"] += int(r["ops"])
        elif r["kind"] == "file" and key:
            f = files.setdefault((r["file"], r["layer"]), {"read_bytes": 0, "write_bytes": 0})
            f[key + "_bytes"] += int(r["bytes"])
        elif r["kind"] == "rank" and key and r["layer"] in ("posix", "stdio"):
            rk = ranks.setdefault(int(r["rank"]), {"read_bytes": 0, "write_bytes": 0})
            rk[key + "_bytes"] += int(r["bytes"])
    return layers, files, ranks


def sums_match(got, want, late, chunk):
    """Equal, or, when events came late (after their tick closed: counted in
    monitor.late and in the totals, in no tick's rows), short by at most what
    those events can have moved (chunk bytes or one op each)."""
    for k, w in want.items():
        g = got.get(k, 0)
        if g == w:
            continue
        unit = chunk if k.endswith("_bytes") else 1
        if not late or g > w or w - g > late * unit:
            return False
    return True


def part_export(args, tmp, rec, live, live_alerts):
    s = run([args.iopulse, "summary", rec, "--json"])
    summary = json.loads(s.stdout)
    if summary["monitor"]["dropped"]:
        fail("events were dropped: tick rows cannot add up to the totals")
    late = summary["monitor"]["late"]
    if late:
        print("export: %d events came late (a loaded machine): sums may fall short by them"
              % late)
    out_csv = os.path.join(tmp, "ticks.csv")
    p = run([args.iopulse, "export", rec, "--format", "csv", "-o", out_csv])
    if p.returncode != 0:
        fail("export csv exited %d: %s" % (p.returncode, p.stderr))
    with open(out_csv, newline="") as f:
        rows_csv = list(csv.DictReader(f))
    p = run([args.iopulse, "export", rec, "--format", "jsonl"])
    records = [json.loads(l) for l in p.stdout.splitlines()]
    # the JSON lines also have the nodes' samples (docs/replay.md): the
    # job's node (this machine's, its leaf's) sampled at least once
    samples = [r for r in records if r.get("type") == "node_sample"]
    if not samples or any(r["v"] != 1 or not r.get("node") or "filesystems" not in r
                          for r in samples):
        fail("export jsonl: no node samples, or one without its node: %s" % samples[:3])
    rows_json = [r for r in records if r.get("type") != "node_sample"]
    if p.returncode != 0 or len(rows_json) != len(rows_csv) or not rows_csv:
        fail("export: %d csv rows, %d jsonl rows (rc %d)" % (len(rows_csv), len(rows_json),
                                                           p.returncode))
    if any(r["v"] != 1 or r["type"] != "tick_row" for r in rows_json):
        fail("export jsonl: a row without v 1 / type tick_row")
    for name, rows in (("csv", rows_csv), ("jsonl", rows_json)):
        layers, files, ranks = export_sums(rows)
        for layer, want in summary["layers"].items():
            got = layers.get(layer, {})
            if not sums_match(got, {k: want[k] for k in got}, late, CHUNK):
                fail("export %s: layer %s sums to %s, summary %s" % (name, layer, got, want))
        for f in summary["files"]:
            got = files.get((f["path"], f["layer"]), {"read_bytes": 0, "write_bytes": 0})
            if not sums_match(got, {"read_bytes": f["read_bytes"], "write_bytes": f["write_bytes"]},
                              late, CHUNK):
                fail("export %s: file %s %s sums to %s, summary %s" % (name, f["path"],
                                                                      f["layer"], got, f))
        for r in summary["ranks"]:
            want = {"read_bytes": r["read_bytes"], "write_bytes": r["write_bytes"]}
            if not sums_match(ranks.get(r["rank"], {}), want, late, CHUNK):
                fail("export %s: rank %d sums to %s, summary %s" % (name, r["rank"],
                                                                   ranks.get(r["rank"]), want))
    ticks = len({r["tick"] for r in rows_csv})
    print("export: %d rows over %d ticks, csv and jsonl; layer, file and rank sums equal "
          "the summary (%d bytes written in posix)"
          % (len(rows_csv), ticks, summary["layers"]["posix"]["write_bytes"]))
    for opts, rc, words in [([rec], 1, "--format is required"),
                            ([rec, "--format", "xml"], 1, "unknown format"),
                            ([os.path.join(tmp, "missing.iop"), "--format", "csv"], 2,
                             "No such file"),
                            ([rec, "--format", "csv", "-o", "/nonexistent/x.csv"], 2,
                             "cannot write"),
                            ([rec, "--format", "csv", "-o", rec], 1, "the recording itself")]:
        size = os.path.getsize(rec)
        p = run([args.iopulse, "export", *opts])
        if p.returncode != rc or words not in p.stderr or os.path.getsize(rec) != size:
            fail("export %s: exit %d (want %d), stderr %r, recording %d bytes of %d"
                 % (opts, p.returncode, rc, p.stderr, os.path.getsize(rec), size))


HDR = struct.Struct("<4sBBHIIQQQI")  # docs/recording.md, "Frame"
SYNC = bytes([0xA9, 0xF0, 0xE7, 0x5C])


def frames(data):
    """(offset, length, type) of each frame, read independently of iopulse."""
    out, off = [], 64
    while off + HDR.size <= len(data):
        sync, ftype, _, _, stored, _, _, _, _, _ = HDR.unpack_from(data, off)
        if sync != SYNC:
            break
        out.append((off, HDR.size + stored, ftype))
        off += HDR.size + stored
    return out


def replay_copy(args, path, data):
    with open(path, "wb") as f:
        f.write(data)
    p = replay(args, path, "--format", "jsonl")
    if p.returncode < 0 or p.returncode >= 128 or "AddressSanitizer" in p.stderr:
        fail("replay of %s crashed (%d): %s" % (path, p.returncode, p.stderr[-2000:]))
    recs = [json.loads(l) for l in p.stdout.splitlines()]
    return p, recs, sum(1 for r in recs if r["type"] == "sample")


def check_summary_of_damaged(args, path, data, said):
    """`iopulse summary` (table and --json) of a damaged copy: exit 0, the
    damage said on stderr as replay says it; returns the JSON summary."""
    with open(path, "wb") as f:
        f.write(data)
    for opts in ([], ["--json"]):
        p = run([args.iopulse, "summary", path] + opts)
        if p.returncode != 0 or said not in p.stderr:
            fail("summary %s of a damaged copy: exit %d, want %r on stderr: %r"
                 % (opts, p.returncode, said, p.stderr))
    return json.loads(p.stdout)


def part_damage(args, tmp, rec, live, live_alerts):
    with open(rec, "rb") as f:
        data = f.read()
    fr = frames(data)
    deltas = [x for x in fr if x[2] == 3]
    if fr[-1][2] != 7 or len(deltas) < 10:
        fail("unexpected recording layout: %d frames, last type %d" % (len(fr), fr[-1][2]))
    path = os.path.join(tmp, "damaged.iop")

    # cut anywhere: the ticks whose frames are whole are replayed, TRUNCATED said
    cuts = sorted({deltas[i][0] + d for i in range(2, len(deltas), max(1, len(deltas) // 6))
                   for d in (0, 10, 50)})
    for cut in cuts:
        p, recs, samples = replay_copy(args, path, data[:cut])
        whole = sum(1 for (o, n, t) in deltas if o + n <= cut)
        if p.returncode != 0 or samples != whole or "TRUNCATED at " not in p.stderr:
            fail("cut at %d: exit %d, %d samples (want %d): %s"
                 % (cut, p.returncode, samples, whole, p.stderr))
        if recs[-1]["type"] != "summary" or recs[-1]["layers"].get("posix", {}).get(
                "write_bytes", 0) > live["layers"]["posix"]["write_bytes"]:
            fail("cut at %d: no summary, or more bytes than the whole job" % cut)
    print("cut: %d truncations replay their whole ticks and say TRUNCATED at" % len(cuts))

    # `iopulse summary` of a cut copy says so too, and one cut before its first
    # tick is a job that ended as it began (not one of 584 years)
    check_summary_of_damaged(args, path, data[:cuts[len(cuts) // 2]], "TRUNCATED at ")
    s = check_summary_of_damaged(args, path, data[:deltas[0][0] + 10], "TRUNCATED at ")
    # cut inside its first frame: TRUNCATED at the header's time, not at 1970
    with open(path, "wb") as f:
        f.write(data[:fr[0][0] + 10])
    for cmd in (["replay", "--headless"], ["summary"], ["export", "--format", "csv"]):
        p = run([args.iopulse, *cmd, path])
        if p.returncode != 0 or "TRUNCATED at 20" not in p.stderr:
            fail("%s of a copy cut in its first frame: exit %d, %r" % (cmd, p.returncode,
                                                                      p.stderr))
    v = run([args.iopulse, "verify", path])
    if v.returncode != 2 or "TRUNCATED at 20" not in v.stdout:
        fail("verify of a copy cut in its first frame: exit %d, %r" % (v.returncode, v.stdout))
    if s["job"]["duration_s"] != 0 or s["job"]["end"] != s["job"]["start"] or \
            s["layers"]["posix"]["write_bytes"]:
        fail("summary of a copy cut before its first tick: %s" % s["job"])

    # one DELTA's payload flipped: skipped, counted, reported; the rest read
    mid = deltas[len(deltas) // 2]
    bad = bytearray(data)
    bad[mid[0] + HDR.size + mid[1] // 3 - 10] ^= 0x40
    p, recs, samples = replay_copy(args, path, bytes(bad))
    if p.returncode != 0 or samples != len(deltas) - 1 or "CORRUPT: 1 damaged region" not in \
            p.stderr or "payload checksum" not in p.stderr:
        fail("payload flip: exit %d, %d samples of %d: %s" % (p.returncode, samples, len(deltas),
                                                             p.stderr))
    check_summary_of_damaged(args, path, bytes(bad), "CORRUPT: 1 damaged region")
    v = run([args.iopulse, "verify", path])
    if v.returncode != 2 or "CORRUPT" not in v.stdout:
        fail("verify of the flipped copy: exit %d: %s" % (v.returncode, v.stdout))
    # a frame header flipped: resynchronised on the next frame
    bad = bytearray(data)
    bad[mid[0] + 13] ^= 0x01
    p, recs, samples = replay_copy(args, path, bytes(bad))
    if p.returncode != 0 or samples != len(deltas) - 1 or "CORRUPT" not in p.stderr:
        fail("header flip: exit %d, %d samples of %d: %s" % (p.returncode, samples, len(deltas),
                                                            p.stderr))
    print("flip: a corrupt DELTA (payload or header) is skipped and reported, %d ticks read"
          % samples)

    # random flips and cuts: never a crash, never more ticks than there are
    rnd = random.Random(6)
    for i in range(40):
        bad = bytearray(data[:rnd.randrange(64, len(data) + 1)] if i % 2 else data)
        for _ in range(rnd.randrange(1, 6)):
            j = rnd.randrange(len(bad))
            bad[j] ^= 1 << rnd.randrange(8)
        p, recs, samples = replay_copy(args, path, bytes(bad))
        if p.returncode not in (0, 2) or samples > len(deltas):
            fail("random damage %d: exit %d, %d samples: %s" % (i, p.returncode, samples,
                                                               p.stderr[-1000:]))
        e = run([args.iopulse, "export", path, "--format", "csv"])
        if e.returncode not in (0, 2):
            fail("export of random damage %d: exit %d" % (i, e.returncode))
    print("random: 40 damaged copies replayed and exported without a crash")

    # a newer format version: a clear error, exit 2
    newer = bytearray(data)
    newer[8:10] = struct.pack("<H", 2)
    p, _, _ = replay_copy(args, path, bytes(newer))
    if p.returncode != 2 or "newer than this reader" not in p.stderr:
        fail("version 2: exit %d: %s" % (p.returncode, p.stderr))
    print("version: %s" % p.stderr.strip())


def job_card_id(rec):
    """The id of the job card (in this test's HOME) that names rec as its recording."""
    d = os.path.join(os.environ["HOME"], ".iopulse", "jobs")
    for name in os.listdir(d):
        with open(os.path.join(d, name)) as f:
            card = json.load(f)
        if card.get("record") and os.path.realpath(card["record"]) == os.path.realpath(rec):
            return card["job"]
    fail("no job card names the recording %s (cards: %s)" % (rec, os.listdir(d)))


def start_job(args, tmp, name, extra):
    """`iopulse run --record` of a slow job in the background (its own session)."""
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               IOPFAULT_RANK="1", IOPFAULT_DELAY_US="1000")
    rec = os.path.join(tmp, name + ".iop")
    data = os.path.join(tmp, name)
    os.mkdir(data)
    launch = launcher(args, 2)
    cmd = [args.iopulse, "run", "--headless", "--tick", "200", "--record", rec,
           "--also-preload", args.fault] + extra + ["--"] + launch + \
        [args.fpp, "-n", "4000", "-s", "4096", "-d", data]
    job = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           stdin=subprocess.DEVNULL, start_new_session=True, text=True)
    deadline = time.monotonic() + 30
    while not os.path.exists(rec) or os.path.getsize(rec) < 64:
        if time.monotonic() > deadline or job.poll() is not None:
            fail("the recording %s did not start" % rec)
        time.sleep(0.05)
    return job, rec


def part_follow(args, tmp, rec, live, live_alerts):
    live_sum = os.path.join(tmp, "follow_live.json")
    job, rec = start_job(args, tmp, "follow", ["--summary-json", live_sum])
    rep_sum = os.path.join(tmp, "follow_replay.json")
    rep = subprocess.Popen([args.iopulse, "replay", rec, "--follow", "--format", "jsonl",
                            "--summary-json", rep_sum], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    lines = []

    def read():
        for line in rep.stdout:
            lines.append((time.monotonic(), line))
    reader = threading.Thread(target=read)
    reader.start()
    job.wait(timeout=TIMEOUT_S)
    job_end = time.monotonic()
    if job.returncode != 0:
        fail("the followed job exited %d: %s" % (job.returncode, job.stderr.read()[-2000:]))
    try:
        rep.wait(timeout=30)
    except subprocess.TimeoutExpired:
        rep.kill()
        fail("replay --follow did not end after the recording was closed")
    reader.join()
    err = rep.stderr.read()
    if rep.returncode != 0:
        fail("replay --follow exited %d: %s" % (rep.returncode, err))
    samples = [(t, json.loads(l)) for t, l in lines if '"sample"' in l]
    with open(live_sum) as f:
        want = json.load(f)
    with open(rep_sum) as f:
        got = json.load(f)
    for key in TOTALS + ("alerts",):
        if got[key] != want[key]:
            fail("follow: the summary's %s differ from the live run's" % key)
    with open(rec, "rb") as f:
        deltas = sum(1 for x in frames(f.read()) if x[2] == 3)
    if len(samples) != deltas:
        fail("follow: %d samples for %d recorded ticks" % (len(samples), deltas))
    during = sum(1 for t, _ in samples if t < job_end)
    if during < len(samples) // 2:
        fail("follow: only %d of %d ticks came out while the job ran" % (during, len(samples)))
    print("follow: %d of %d ticks replayed while the job ran; the summary equals the live one"
          % (during, len(samples)))

    # that recording is the default ("view"): verify says so; summary
    # reports the live run's totals and alerts, and --rules may judge its
    # ticks again
    p = run([args.iopulse, "verify", rec])
    if p.returncode != 0 or "view: every tick's rows per rank and layer" not in p.stdout:
        fail("verify of a default recording: exit %d: %s" % (p.returncode, p.stdout + p.stderr))
    p = run([args.iopulse, "summary", rec, "--json"])
    got = json.loads(p.stdout)
    for key in TOTALS + ("alerts",):
        if got[key] != want[key]:
            fail("view: iopulse summary's %s differ from the live run's" % key)
    rules = os.path.join(tmp, "view_rules.json")
    with open(rules, "w") as f:
        json.dump({"imbalance": {"warn": 1.01}}, f)
    p = run([args.iopulse, "summary", rec, "--rules", rules])
    if p.returncode != 0:
        fail("view: summary --rules: exit %d: %s" % (p.returncode, p.stderr))
    print("view: verify says so; summary's totals and alerts are the live ones; "
          "--rules judges it again")

    # kill -9 of the whole job while recording, then replay
    job, rec = start_job(args, tmp, "killed", ["--record-detail", "60s"])
    # until the recording holds written bytes (mpirun may take seconds to
    # start the ranks on a loaded machine), then a little more
    deadline = time.monotonic() + 30
    while True:
        s = run([args.iopulse, "summary", rec, "--json"])
        try:
            if json.loads(s.stdout)["layers"].get("posix", {}).get("write_bytes", 0):
                break
        except ValueError:
            pass
        if time.monotonic() > deadline or job.poll() is not None:
            fail("kill -9: the job wrote nothing into its recording in 30 s")
        time.sleep(0.2)
    time.sleep(0.5)
    os.killpg(job.pid, signal.SIGKILL)
    job.wait()
    p = replay(args, rec, "--headless", "--summary-json", os.path.join(tmp, "killed.json"))
    with open(os.path.join(tmp, "killed.json")) as f:
        killed = json.load(f)
    written = killed["layers"].get("posix", {}).get("write_bytes", 0)
    if p.returncode != 0 or "TRUNCATED at " not in p.stderr or not written:
        fail("kill -9: replay exit %d, %d bytes written: %s" % (p.returncode, written, p.stderr))
    print("kill -9: replayed to the last tick written (%d bytes written by then)" % written)
    # that recording is lean (--record-detail 60s): verify says so; its
    # ticks cannot be judged again, and --rules is refused with the way out
    p = run([args.iopulse, "verify", rec])
    if "lean:" not in p.stdout:
        fail("verify of a lean recording: exit %d: %s" % (p.returncode, p.stdout + p.stderr))
    with open(rules, "w") as f:
        json.dump({"imbalance": {"warn": 1.01}}, f)
    for cmd in (["summary", rec, "--rules", rules],
                ["replay", rec, "--headless", "--rules", rules]):
        p = run([args.iopulse] + cmd)
        if p.returncode != 1 or "--record-detail full" not in p.stderr:
            fail("lean: %s: exit %d: %s" % (cmd[0], p.returncode, p.stderr))
    print("lean: verify says so; --rules refused")
    # its card stays behind, stale; --prune removes it
    jid = job_card_id(rec)
    p = run([args.iopulse, "jobs"])
    if p.returncode != 0 or not re.search(r"^%s stale " % jid, p.stdout, re.M):
        fail("kill -9: 'iopulse jobs' does not list job %s as stale: %s" % (jid, p.stdout))
    p = run([args.iopulse, "jobs", "--prune"])
    cards = os.listdir(os.path.join(os.environ["HOME"], ".iopulse", "jobs"))
    if p.returncode != 0 or "removed 1 stale job card" not in p.stdout or jid in cards:
        fail("kill -9: 'iopulse jobs --prune' exit %d, cards left %s: %s"
             % (p.returncode, cards, p.stdout + p.stderr))
    p = run([args.iopulse, "jobs", "--prune", "extra"])
    if p.returncode != 1 or "unexpected argument 'extra'" not in p.stderr:
        fail("'iopulse jobs --prune extra': exit %d: %s" % (p.returncode, p.stderr))
    print("kill -9: its stale job card listed, then pruned; a stray argument refused")


def part_events(args, tmp, rec, live, live_alerts):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    ev, summ, data = (os.path.join(tmp, n) for n in ("events.iop", "events.json", "ckpt"))
    os.mkdir(data)
    launch = launcher(args, 2)
    p = run([args.iopulse, "run", "--headless", "--record", ev, "--record-events",
             "--summary-json", summ, "--"] + launch + [args.checkpoint, "-d", data], env=env)
    if p.returncode != 0:
        fail("the job recorded with events exited %d: %s" % (p.returncode, p.stderr[-2000:]))
    with open(summ) as f:
        s = json.load(f)
    trace = os.path.join(tmp, "trace.json")
    p = run([args.iopulse, "export", ev, "--format", "chrome", "-o", trace])
    if p.returncode != 0:
        fail("export --format chrome exited %d: %s" % (p.returncode, p.stderr))
    with open(trace) as f:
        t = json.load(f)["traceEvents"]
    x = [e for e in t if e["ph"] == "X"]
    names = {e["pid"]: e["args"]["name"] for e in t if e["ph"] == "M" and
             e["name"] == "process_name"}
    if names != {0: "rank 0", 1: "rank 1"} or {e["pid"] for e in x} != {0, 1}:
        fail("chrome: want a track per rank, got %s" % names)
    # a run of like calls sent as one record is one slice that says so
    # (docs/wire-format.md, "Run records"): its args count its calls
    calls = sum(e["args"].get("calls", 1) for e in x)
    runs = [e for e in x if "calls" in e["args"]]
    if s["monitor"]["dropped"] or calls != s["monitor"]["events"]:
        fail("chrome: %d slices of %d calls for %d events (%d dropped)"
             % (len(x), calls, s["monitor"]["events"], s["monitor"]["dropped"]))
    if any(e["args"]["calls"] < 2 or "one record" not in e["args"].get("run", "") or
           e["args"]["busy_us"] > e["dur"] * 1.0001 + 0.001 for e in runs):
        fail("chrome: a run's slice does not say what it is: %s" % runs[:3])
    for layer in ("posix", "mpiio"):
        for cls in ("read", "write"):
            got = sum(e["args"].get("bytes", 0) for e in x
                      if e["cat"] == layer and e["name"].startswith(cls))
            want = s["layers"][layer][cls + "_bytes"]
            if got != want or not want:
                fail("chrome: %s %s slices move %d bytes, summary %d" % (layer, cls, got, want))
    nested = 0
    for m in (e for e in x if e["cat"] == "mpiio" and e["name"].startswith("write")):
        nested += sum(1 for e in x if e["cat"] == "posix" and e["pid"] == m["pid"] and
                      e["tid"] == m["tid"] and m["ts"] <= e["ts"] and
                      e["ts"] + e["dur"] <= m["ts"] + m["dur"] + 0.001)
    if not nested:
        fail("chrome: no POSIX call nested in an MPI-IO write")
    # a stream of like calls (fpp's sequential writes and reads): runs
    ev2, summ2, data2 = (os.path.join(tmp, n) for n in ("events2.iop", "events2.json", "fpp2"))
    p = run([args.iopulse, "run", "--headless", "--record", ev2, "--record-events",
             "--summary-json", summ2, "--"] + launch + [args.fpp, "-n", "4000", "-d", data2],
            env=env)
    if p.returncode != 0:
        fail("fpp recorded with events exited %d: %s" % (p.returncode, p.stderr[-2000:]))
    with open(summ2) as f:
        s2 = json.load(f)
    p = run([args.iopulse, "export", ev2, "--format", "chrome", "-o", trace])
    if p.returncode != 0:
        fail("export --format chrome (fpp) exited %d: %s" % (p.returncode, p.stderr))
    with open(trace) as f:
        x2 = [e for e in json.load(f)["traceEvents"] if e["ph"] == "X"]
    runs2 = [e for e in x2 if "calls" in e["args"]]
    calls2 = sum(e["args"].get("calls", 1) for e in x2)
    if not runs2 or calls2 != s2["monitor"]["events"] or s2["monitor"]["dropped"]:
        fail("chrome (fpp): %d run slices, %d calls for %d events" % (len(runs2), calls2,
                                                                     s2["monitor"]["events"]))
    for cls in ("read", "write"):
        got = sum(e["args"].get("bytes", 0) for e in x2
                  if e["cat"] == "posix" and e["name"].startswith(cls))
        if got != s2["layers"]["posix"][cls + "_bytes"]:
            fail("chrome (fpp): posix %s slices move %d bytes, summary %d"
                 % (cls, got, s2["layers"]["posix"][cls + "_bytes"]))
    if any("one record" not in e["args"].get("run", "") or
           e["args"]["busy_us"] > e["dur"] + 0.001 for e in runs2):
        fail("chrome (fpp): a run's slice does not say what it is: %s" % runs2[:3])
    print("events: fpp's %d calls in %d slices, %d of them runs that say so"
          % (calls2, len(x2), len(runs2)))
    p = run([args.iopulse, "export", rec, "--format", "chrome"])
    if p.returncode != 2 or "--record-events" not in p.stderr:
        fail("chrome of a recording without events: exit %d: %s" % (p.returncode, p.stderr))
    print("events: %d slices (%d of them runs) of %d calls on 2 rank tracks, bytes per layer "
          "equal the summary, %d POSIX calls nested in MPI-IO writes"
          % (len(x), len(runs), calls, nested))


PARTS = {"headless": part_headless, "export": part_export, "damage": part_damage,
         "follow": part_follow, "events": part_events}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iopulse", required=True)
    ap.add_argument("--mpirun", required=True)
    ap.add_argument("--fault", required=True)
    ap.add_argument("--fpp", required=True)
    ap.add_argument("--checkpoint", required=True, help="examples' mpi-checkpoint (MPI-IO)")
    ap.add_argument("--only", default=",".join(PARTS))
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="iop-replay-")
    # job cards go to a HOME of the test's own: the kill -9 part leaves a
    # stale one, which it then prunes
    os.environ["HOME"] = os.path.join(tmp, "home")
    os.mkdir(os.environ["HOME"])
    try:
        rec, live, live_alerts = record(args, tmp)
        for name in args.only.split(","):
            PARTS[name](args, tmp, rec, live, live_alerts)
    finally:
        if not os.environ.get("KEEP_TMP"):
            shutil.rmtree(tmp, ignore_errors=True)
    print("PASS")


if __name__ == "__main__":
    main()
