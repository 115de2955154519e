#!/usr/bin/env python3
"""The summary's files capped (issue 22, item 5): 2 ranks under `iopulse
run` and the real launcher each write 600 files of distinct sizes (Python,
os.write), recorded. Checks:
  - `iopulse summary REC --json --summary-files all` has every data file
    with exactly the bytes written to it;
  - with --summary-files 50 (live, and the recording's summary the same),
    the entries kept are exactly the top 50 by bytes and the top 50 by
    time of the whole list, in its order, and one "other" entry per layer
    that lost some holds the rest: how many, their bytes and calls summed,
    and the distinct ranks (2);
  - in both, each layer's entries add up to the layer's totals;
  - the default (1000) keeps the top 1000 by bytes and by time, and the
    size of each summary is printed;
  - `iopulse export REC --format csv --totals` has every file too: its
    rows summed per (file, layer) equal the `all` summary's entries
    (bytes and calls each way, metadata calls), rank by rank the data
    files' writes are the bytes written, and the JSON lines say the same.
"""
import csv
import io
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_common import fail, iopulse_job, job_args, job_env  # noqa: E402

FILES, CAP = 600, 50

PROGRAM = r'''
import os, sys
r = int(os.environ.get("OMPI_COMM_WORLD_RANK") or os.environ.get("PMI_RANK") or 0)
d = os.path.join(sys.argv[1], "r%%d" %% r)
os.makedirs(d, exist_ok=True)
for i in range(%d):
    fd = os.open(os.path.join(d, "f%%04d" %% i), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.write(fd, b"x" * (10000 + 3 * r + 7 * i))
    os.close(fd)
''' % FILES


def summary(args, rec, files):
    cmd = [args.iopulse, "summary", rec, "--json"]
    if files:
        cmd += ["--summary-files", files]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return json.loads(out), len(out)


def key(e):
    return (e["path"], e["layer"])


def check_layers(s, what):
    for layer, tot in s["layers"].items():
        for k in ("read_bytes", "write_bytes", "read_ops", "write_ops"):
            got = sum(e[k] for e in s["files"] if e["layer"] == layer)
            if got != tot[k]:
                fail("%s: %s entries' %s add up to %d, the layer's total is %d"
                     % (what, layer, k, got, tot[k]))


def check_cap(s, whole, cap, what):
    """s's files: the top cap of whole by bytes and by time, then the rest
    in an "other" entry per layer."""
    by_bytes = [key(e) for e in whole[:cap]]
    by_time = [key(e) for e in sorted(whole, key=lambda e: -e["time_s"])[:cap]]
    want = set(by_bytes) | set(by_time)
    kept = [e for e in s["files"] if e["kind"] != "other"]
    if [key(e) for e in kept] != [key(e) for e in whole if key(e) in want]:
        fail("%s: kept %d entries, not the top %d by bytes and by time of %d (%d)"
             % (what, len(kept), cap, len(whole), len(want)))
    others = {e["layer"]: e for e in s["files"] if e["kind"] == "other"}
    for layer in sorted({e["layer"] for e in whole}):
        rest = [e for e in whole if e["layer"] == layer and key(e) not in want]
        o = others.get(layer)
        if not rest:
            if o:
                fail("%s: an other entry for %s, with nothing folded" % (what, layer))
            continue
        if not o or o["files"] != len(rest) or o["path"] != "other" or o["mount"] is not None:
            fail("%s: %s's other entry %s, %d entries folded" % (what, layer, o, len(rest)))
        for k in ("read_bytes", "write_bytes", "read_ops", "write_ops", "meta_ops"):
            if o[k] != sum(e[k] for e in rest):
                fail("%s: %s other %s %d, the folded entries' %d"
                     % (what, layer, k, o[k], sum(e[k] for e in rest)))
    return kept, others


def check_totals(args, rec, whole):
    out = subprocess.run([args.iopulse, "export", rec, "--format", "csv", "--totals"],
                         capture_output=True, text=True, check=True).stdout
    rows = list(csv.DictReader(io.StringIO(out)))
    if not rows or any(r["kind"] != "total" or r["excl_s"] != "" for r in rows):
        fail("export --totals: %d rows, or rows not of kind total" % len(rows))
    got = {}
    for r in rows:
        g = got.setdefault((r["file"], r["layer"]), {})
        cls = r["class"]
        if cls == "meta":
            g["meta_ops"] = g.get("meta_ops", 0) + int(r["ops"])
        else:
            g[cls + "_ops"] = g.get(cls + "_ops", 0) + int(r["ops"])
            g[cls + "_bytes"] = g.get(cls + "_bytes", 0) + int(r["bytes"])
        if r["file"].startswith(os.path.dirname(rec)) and r["layer"] == "posix" and \
                cls == "write":
            rank, name = int(r["rank"]), os.path.basename(r["file"])
            want = 10000 + 3 * rank + 7 * int(name[1:])
            if "/r%d/" % rank not in r["file"] or int(r["bytes"]) != want:
                fail("export --totals: rank %d wrote %s bytes to %s, want %d"
                     % (rank, r["bytes"], r["file"], want))
    for e in whole:
        g = got.get(key(e), {})
        for k in ("read_bytes", "write_bytes", "read_ops", "write_ops", "meta_ops"):
            if g.get(k, 0) != e[k]:
                fail("export --totals: %s %s %s %d, the summary's %d"
                     % (e["path"], e["layer"], k, g.get(k, 0), e[k]))
    if len(got) != len(whole):
        fail("export --totals: %d (file, layer) pairs, the summary %d" % (len(got), len(whole)))
    lines = subprocess.run([args.iopulse, "export", rec, "--format", "jsonl", "--totals"],
                           capture_output=True, text=True, check=True).stdout.splitlines()
    js = [json.loads(line) for line in lines]
    if len(js) != len(rows) or any(j["type"] != "total_row" or "excl_s" in j for j in js) or \
            sum(j["bytes"] for j in js) != sum(int(r["bytes"]) for r in rows):
        fail("export --totals: the JSON lines differ from the CSV rows")
    return len(rows)


def main():
    args = job_args(__doc__)
    with tempfile.TemporaryDirectory(prefix="iop-sumfiles-") as tmp:
        prog = os.path.join(tmp, "many.py")
        with open(prog, "w") as f:
            f.write(PROGRAM)
        rec, live = os.path.join(tmp, "job.iop"), os.path.join(tmp, "live.json")
        iopulse_job(args, ["--headless", "--record", rec, "--summary-json", live,
                           "--summary-files", str(CAP)], 2,
                    ["/usr/bin/python3", prog, tmp], job_env(tmp), 180)
        whole, whole_len = summary(args, rec, "all")
        if any(e["kind"] == "other" for e in whole["files"]):
            fail("--summary-files all has an other entry")
        sizes = {}
        for e in whole["files"]:
            if e["layer"] == "posix":
                sizes[e["path"]] = e["write_bytes"]
        for r in range(2):
            for i in range(FILES):
                p = os.path.join(tmp, "r%d" % r, "f%04d" % i)
                if sizes.get(p) != 10000 + 3 * r + 7 * i:
                    fail("%s: %s bytes written, want %d" % (p, sizes.get(p), 10000 + 3 * r + 7 * i))
        check_layers(whole, "all")
        total_rows = check_totals(args, rec, whole["files"])
        with open(live) as f:
            capped_live = json.load(f)
        capped, capped_len = summary(args, rec, str(CAP))
        if capped_live["files"] != capped["files"]:
            fail("the live summary's files differ from the recording's")
        kept, others = check_cap(capped, whole["files"], CAP, "--summary-files %d" % CAP)
        if others.get("posix", {}).get("ranks") != 2:
            fail("posix other: ranks %s, want 2" % others.get("posix"))
        check_layers(capped, "--summary-files %d" % CAP)
        dflt, dflt_len = summary(args, rec, None)
        check_cap(dflt, whole["files"], 1000, "default")
        check_layers(dflt, "default")
        print("OK: %d entries, %d bytes of JSON with all; %d kept + %d other, %d bytes with %d; "
              "%d entries, %d bytes by default; export --totals: %d rows"
              % (len(whole["files"]), whole_len, len(kept), len(others), capped_len, CAP,
                 len(dflt["files"]), dflt_len, total_rows))


if __name__ == "__main__":
    main()
