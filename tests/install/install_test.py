#!/usr/bin/env python3
"""iopulse installed into a prefix and used as an ordinary user would.

As root: `cmake --install BUILD --prefix P` into a temporary prefix, then,
in a mount namespace where the source and build trees are hidden under
empty tmpfs mounts (as if deleted: the installed copy must need nothing
from them), as an ordinary user (created with useradd when missing) with
only P/bin and the system's directories on PATH:

- `iopulse --version` prints the project's version;
- `iopulse run --headless --record R --summary-json S -- LAUNCHER -n 4
  P/libexec/iopulse/examples/fpp ...`: the installed shim is found beside
  the binary, and the totals are exact (4 ranks x 200 writes and reads of
  4 KiB, what fpp says it did);
- `iopulse replay --headless R` and `iopulse summary R --json` of that
  recording: the same layers;
- the installed demo (P/libexec/iopulse/demo): its slowed rank's straggler
  alert replayed from its recording, and the recording exported;
- the modulefile (Environment Modules' `module use P/share/modulefiles;
  module load iopulse`) puts P/bin on PATH and P/share/man on MANPATH, and
  `man -w iopulse-run` finds the installed page;
- every installed man page renders with no groff warning (-ww);
- the bash completion, sourced: `complete -p iopulse` is defined, and it
  completes the subcommands, `export --format` values and options;
- `iopulse top JOBID` shows a running job of theirs in tmux; then, as a
  second ordinary user, `iopulse top JOBID` (no such job of theirs),
  `iopulse top ADDRESS --card` with the first user's card (unreadable) and
  with a guessed key (refused by the root) each exit 2 with a clear
  message, and the first user's job card cannot be read.

Nothing in P names the source or build tree (no RPATH, no path). Skipped
(77) when not root (useradd, mounts).

With --deb: the Debian package (cpack -G DEB of BUILD, as scripts/package
makes it) instead of cmake --install: lintian reports no error, `dpkg -i`
puts it in /usr, the same checks run from /usr/bin/iopulse, and `dpkg -r`
leaves none of its files behind.

Usage: install_test.py --build BUILD --source SRC --mpirun LAUNCHER --version V [--deb]
"""
import argparse
import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile

USER = "iopulse-test"
USER2 = "iopulse-test2"  # another ordinary user: the first one's job is not theirs
RANKS, N, SIZE = 4, 200, 4096


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def sh(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=kw.pop("timeout", 240), **kw)


USER_SCRIPT = r'''
set -u
P=$1 DATA=$2 LAUNCH=$3 VERSION=$4 HIDDEN=$5
step() { echo "== $*"; }
die() { echo "FAILED: $*"; exit 1; }
[[ -d $HIDDEN && -z $(ls -A "$HIDDEN") ]] || die "$HIDDEN is not hidden"
cd "$DATA"
step "version"
v=$(iopulse --version) || die "iopulse --version"
[[ $v == "iopulse $VERSION "* ]] || die "version said: $v"
[[ $(command -v iopulse) == "$P/bin/iopulse" ]] || die "iopulse is $(command -v iopulse)"
step "run"
iopulse run --headless --record job.iop --summary-json live.json -- \
    $LAUNCH -n 4 "$P/libexec/iopulse/examples/fpp" -n 200 -s 4096 -d "$DATA/d" > truth.jsonl 2> run.err \
    || die "iopulse run exited $?: $(tail -5 run.err)"
step "replay"
iopulse replay --headless --summary-json replayed.json job.iop 2> replay.err || die "replay exited $?"
iopulse summary job.iop --json > summary.json || die "summary exited $?"
step "demo"
LAUNCHER=${LAUNCH%% *} "$P/libexec/iopulse/demo" > demo.out 2> demo.err || die "the demo exited $?: $(tail -5 demo.err)"
grep -q "detail     view" demo.out || die "the demo's recording: $(cat demo.out)"
grep -q "straggler rank 2" demo.err || die "the demo's replay has no straggler on rank 2: $(tail -20 demo.err)"
grep -q "tick  rank 0  rank 1  rank 2  rank 3" demo.out || die "the demo's table: $(cat demo.out)"
echo "demo: the slowed rank's straggler alert replayed, its recording exported"
step "module"
source /usr/share/modules/init/bash || die "no Environment Modules"
PATH=/usr/bin:/bin MANPATH=
module use "$P/share/modulefiles" && module load iopulse || die "module load"
[[ $(command -v iopulse) == "$P/bin/iopulse" ]] || die "after module load: $(command -v iopulse)"
m=$(env -u LD_PRELOAD man -w iopulse-run) || die "man -w iopulse-run"
[[ $m == "$P/share/man/man1/iopulse-run.1"* ]] || die "man -w iopulse-run: $m"
step "man pages"
for page in "$P"/share/man/man1/iopulse*.1.gz; do
    w=$(zcat "$page" | env -u LD_PRELOAD groff -man -ww -z 2>&1)  # (a sanitizer build's runtime is not groff's)
    [[ -z $w ]] || die "groff warns on $page: $w"
done
ls "$P"/share/man/man1/iopulse* | tr '\n' ' '; echo
step "completion"
source "$P/share/bash-completion/completions/iopulse" || die "sourcing the completion"
complete -p iopulse | grep -q _iopulse || die "complete -p iopulse: $(complete -p iopulse 2>&1)"
COMP_WORDS=(iopulse ""); COMP_CWORD=1; _iopulse
echo "subcommands: ${COMPREPLY[*]}"
for s in run top jobs replay export verify summary; do
    [[ " ${COMPREPLY[*]} " == *" $s "* ]] || die "no $s among ${COMPREPLY[*]}"
done
COMP_WORDS=(iopulse export job.iop --format ""); COMP_CWORD=4; _iopulse
[[ "${COMPREPLY[*]}" == "csv jsonl chrome" ]] || die "export --format: ${COMPREPLY[*]}"
COMP_WORDS=(iopulse run --rec); COMP_CWORD=2; _iopulse
[[ " ${COMPREPLY[*]} " == *" --record "* && " ${COMPREPLY[*]} " == *" --record-detail "* ]] \
    || die "run --rec: ${COMPREPLY[*]}"
COMP_WORDS=(iopulse replay j); COMP_CWORD=2; _iopulse
[[ " ${COMPREPLY[*]} " == *" job.iop "* ]] || die "replay j: ${COMPREPLY[*]}"
step "top"
iopulse run --headless -- $LAUNCH -n 2 "$P/libexec/iopulse/examples/steady" -d "$DATA/long" \
    -T 120 -n 100 -s 4096 > long.out 2> long.err &
runpid=$!
mkdir -p "$DATA/long"
id=""
for i in $(seq 150); do
    id=$(iopulse jobs | awk '$1 ~ /^[0-9a-f]+$/ && $2 == "running" { print $1; exit }')
    [[ -n $id ]] && break
    sleep 0.2
done
[[ -n $id ]] || die "iopulse jobs does not list the running job: $(iopulse jobs)"
addr=$(iopulse jobs | awk -v id="$id" '$1 == id { print $5 }')
COMP_WORDS=(iopulse top ""); COMP_CWORD=2; _iopulse
[[ " ${COMPREPLY[*]} " == *" $id "* ]] || die "completion of top: ${COMPREPLY[*]} (job $id)"
tmux -L iop new-session -d -s top -x 120 -y 40 "iopulse top $id; sleep 30"
seen=""
for i in $(seq 100); do
    s=$(tmux -L iop capture-pane -p -t top 2>/dev/null)
    [[ $s == *LIVE*"ranks 2"* && $s == *"$id"* ]] && { seen=1; break; }
    sleep 0.2
done
tmux -L iop send-keys -t top q
[[ -n $seen ]] || die "iopulse top $id did not show the live job:\n$s"
echo "top: the live job $id shown"
echo "$id $addr" > "$DATA/job.txt"   # the second user's turn (install_test.py)
for i in $(seq 600); do [[ -e $DATA/second.done ]] && break; sleep 0.2; done
kill -INT $runpid
wait $runpid
tmux -L iop kill-server 2>/dev/null
echo "ALL-DONE"
'''

# As the second user: the first user's running job is not theirs to watch.
SECOND_SCRIPT = r'''
set -u
DATA=$1 U1HOME=$2
die() { echo "FAILED: $*"; exit 1; }
read -r id addr < "$DATA/job.txt"
out=$(iopulse top "$id" 2>&1 </dev/null); rc=$?
[[ $rc == 2 && $out == *"no job '$id'"* ]] || die "top JOBID: exit $rc: $out"
echo "top JOBID: exit 2: $out"
out=$(iopulse top "$addr" --card "$U1HOME/.iopulse/jobs/$id" 2>&1 </dev/null); rc=$?
[[ $rc == 2 && $out == *"Permission denied"* ]] || die "top ADDRESS --card (theirs): exit $rc: $out"
echo "top ADDRESS --card theirs: exit 2: $out"
out=$(IOPULSE_KEY=0123456789abcdef0123456789abcdef IOPULSE_JOB=$id TERM=screen \
      timeout 60 script -qec "iopulse top $addr" /dev/null </dev/null 2>&1); rc=$?
[[ $rc == 2 && $out == *"refused the key"* ]] || die "top ADDRESS with a guessed key: exit $rc: $out"
echo "top ADDRESS with a guessed key: exit 2: refused"
cat "$U1HOME/.iopulse/jobs/$id" > /dev/null 2>&1 && die "the first user's job card is readable"
echo "SECOND-DONE"
'''


def package_status():
    """dpkg's status of the package iopulse, "" when it has none."""
    p = subprocess.run(["dpkg-query", "-W", "-f=${Status}", "iopulse"], stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL, text=True, timeout=60)
    return p.stdout.strip() if p.returncode == 0 else ""


def package_files():
    """The regular files dpkg says the installed package holds."""
    p = sh(["dpkg", "-L", "iopulse"])
    return [f for f in p.stdout.splitlines() if os.path.isfile(f)]


def install_deb(args, tmp):
    """cpack's package of the build, checked by lintian and installed; the
    list of its files."""
    if package_status().endswith(" installed"):
        fail("a package iopulse is installed already: this test installs and removes its own")
    out = os.path.join(tmp, "pkg")
    p = sh(["cpack", "-G", "DEB", "--config", os.path.join(args.build, "CPackConfig.cmake"),
            "-B", out], timeout=600)
    deb = os.path.join(out, "iopulse_%s_amd64.deb" % args.version)
    if p.returncode != 0 or not os.path.exists(deb):
        fail("cpack: %s" % p.stdout[-2000:])
    control = sh(["dpkg-deb", "-f", deb, "Depends"]).stdout
    if "-dev" in control or "libnanomsg5" not in control or "libunwind8" not in control:
        fail("the package's dependencies: %s" % control)
    lint = sh(["lintian", "--no-tag-display-limit", deb], timeout=600)
    errors = [l for l in lint.stdout.splitlines() if l.startswith("E:")]
    if errors:
        fail("lintian errors:\n" + "\n".join(errors))
    p = sh(["dpkg", "-i", deb])
    if p.returncode != 0:
        fail("dpkg -i: " + p.stdout[-2000:])
    files = package_files()
    print("package %s: depends %s; lintian: no error; %d files installed"
          % (os.path.basename(deb), control.strip(), len(files)))
    return files


def remove_deb(files):
    p = sh(["dpkg", "-r", "iopulse"])
    if p.returncode != 0:
        fail("dpkg -r: " + p.stdout[-2000:])
    sh(["dpkg", "-P", "iopulse"])  # dpkg's own record of it too
    left = [f for f in files if os.path.lexists(f)]
    left += [d for d in ("/usr/lib/iopulse", "/usr/libexec/iopulse", "/usr/share/doc/iopulse",
                         "/usr/share/modulefiles/iopulse") if os.path.lexists(d)]
    if left or package_status() not in ("", "unknown ok not-installed"):
        fail("dpkg -r left: %s (status %r)" % (left[:10], package_status()))
    print("dpkg -r: none of the package's %d files left" % len(files))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--mpirun", required=True)
    ap.add_argument("--version", required=True)
    ap.add_argument("--deb", action="store_true", help="the Debian package, not a prefix")
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("SKIP: needs root (useradd, a mount namespace)")
        return 77
    for tool in ("unshare", "runuser", "useradd", "groff", "man"):
        if not shutil.which(tool):
            fail("%s is missing" % tool)
    if not os.path.exists("/usr/share/modules/init/bash"):
        fail("Environment Modules is missing (scripts/install-deps installs it)")
    for u in (USER, USER2):
        try:
            pwd.getpwnam(u)
        except KeyError:
            p = sh(["useradd", "--create-home", "--shell", "/bin/bash", u])
            if p.returncode != 0:
                fail("useradd: " + p.stdout)
    pw, pw2 = pwd.getpwnam(USER), pwd.getpwnam(USER2)
    tmp = tempfile.mkdtemp(prefix="iop-install-")
    os.chmod(tmp, 0o755)
    installed = False
    try:
        if args.deb:
            prefix = "/usr"
            installed = install_deb(args, tmp)
        else:
            prefix = os.path.join(tmp, "prefix")
            p = sh(["cmake", "--install", args.build, "--prefix", prefix])
            if p.returncode != 0:
                fail("cmake --install: " + p.stdout[-2000:])
        mine = package_files() if args.deb else [prefix]
        leaks = sh(["grep", "-rl", "-e", os.path.realpath(args.source), "-e",
                    os.path.realpath(args.build)] + mine)
        # (a sanitizer build's instrumentation names each source file as
        # compiled, which -ffile-prefix-map does not reach: not a build to
        # install)
        if leaks.stdout.strip() and not os.environ.get("IOP_SANITIZED"):
            fail("installed files name the source or build tree:\n" + leaks.stdout)
        for f in ("bin/iopulse", "lib/iopulse/libiopulse.so"):
            d = sh(["readelf", "-d", os.path.join(prefix, f)]).stdout
            if "RPATH" in d or "RUNPATH" in d:
                fail("%s has an RPATH:\n%s" % (f, d))
        data = os.path.join(tmp, "data")
        os.mkdir(data)
        os.chown(data, pw.pw_uid, pw.pw_gid)
        script = os.path.join(tmp, "as_user.sh")
        with open(script, "w") as f:
            f.write(USER_SCRIPT)
        os.chmod(script, 0o755)
        launch = args.mpirun if "mpich" in os.path.basename(args.mpirun) else \
            args.mpirun + " --oversubscribe"
        env = ["HOME=" + pw.pw_dir, "USER=" + USER, "PATH=%s/bin:/usr/bin:/bin" % prefix,
               "LANG=C.UTF-8", "TMPDIR=" + data]
        for k in ("LD_PRELOAD", "ASAN_OPTIONS", "UBSAN_OPTIONS", "IOP_SANITIZED"):
            if k in os.environ:
                env.append("%s=%s" % (k, os.environ[k]))
        hide = " && ".join("mount -t tmpfs -o size=1m,mode=0755 none %s" % d
                           for d in sorted({os.path.realpath(args.source),
                                            os.path.realpath(args.build)},
                                           key=len, reverse=True))  # inner first
        second = os.path.join(tmp, "as_second.sh")
        with open(second, "w") as f:
            f.write(SECOND_SCRIPT)
        os.chmod(second, 0o755)
        env2 = ["HOME=" + pw2.pw_dir, "USER=" + USER2, "PATH=%s/bin:/usr/bin:/bin" % prefix,
                "LANG=C.UTF-8"] + env[4:]
        # as root in the namespace: the first user's script, and the second
        # user's checks once the first has a job running (job.txt)
        inner = """set -u
mount --make-rprivate / && %s || exit 3
runuser -u %s -- env -i %s bash %s %s %s '%s' %s %s &
u1=$!
i=0
while [ ! -e %s/job.txt ] && [ $i -lt 900 ] && kill -0 $u1 2>/dev/null; do sleep 0.2; i=$((i+1)); done
if [ -e %s/job.txt ]; then
    runuser -u %s -- env -i %s bash %s %s %s > %s/second.log 2>&1
fi
touch %s/second.done
wait $u1
""" % (hide, USER, " ".join(env), script, prefix, data, launch, args.version,
       os.path.realpath(args.source), data, data, USER2, " ".join(env2), second, data,
       pw.pw_dir, data, data)
        p = sh(["unshare", "--mount", "--", "sh", "-c", inner])
        print(p.stdout)
        log2 = os.path.join(data, "second.log")
        said2 = open(log2).read() if os.path.exists(log2) else "(the second user did not run)"
        print(said2)
        if "SECOND-DONE" not in said2:
            fail("as %s, the first user's running job: %s" % (USER2, said2))
        if p.returncode != 0 or "ALL-DONE" not in p.stdout:
            err = ""
            for name in ("run.err", "replay.err"):
                path = os.path.join(data, name)
                if os.path.exists(path):
                    err += "\n%s:\n%s" % (name, open(path).read()[-3000:])
            fail("as %s with the trees hidden (exit %d)%s" % (USER, p.returncode, err))
        with open(os.path.join(data, "live.json")) as f:
            live = json.load(f)
        posix = live["layers"]["posix"]
        want = RANKS * N * SIZE
        if (posix["write_bytes"], posix["read_bytes"], posix["write_ops"], posix["read_ops"]) != \
                (want, want, RANKS * N, RANKS * N):
            fail("the installed run's posix totals %s, fpp moved %d bytes each way in %d calls"
                 % (posix, want, RANKS * N))
        if live["job"]["ranks"] != RANKS or live["job"].get("interrupted") is not False:
            fail("the installed run's job: %s" % live["job"])
        for name in ("replayed.json", "summary.json"):
            with open(os.path.join(data, name)) as f:
                other = json.load(f)
            if other["layers"] != live["layers"]:
                fail("%s's layers differ from the live run's" % name)
        print("installed, used as %s with the source and build trees hidden: posix %d bytes "
              "written and read in %d calls each way, as fpp did; replay and summary equal"
              % (USER, want, RANKS * N))
        if args.deb:
            remove_deb(installed)
            installed = []
    finally:
        if installed:
            sh(["dpkg", "-P", "iopulse"])
        if not os.environ.get("KEEP_TMP"):
            shutil.rmtree(tmp, ignore_errors=True)
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
