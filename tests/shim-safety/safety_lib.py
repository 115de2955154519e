"""Shared by the shim-safety drivers (shim_safety.py): a fresh temporary
directory with a random job key and an ipc:// address inside it, an iop-sink
started there and read back as JSON, and programs run with or without
libiopulse.so preloaded. Every wait is bounded; whatever is left running
when a test ends is killed, and the directory is removed.

A check that fails raises Fail with a message that says what was expected
and what was found."""

import json
import os
import secrets
import shutil
import signal
import subprocess
import tempfile
import time


class Fail(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Fail(msg)


class Tools:
    """Paths of what the tests run, from the command line."""

    def __init__(self, shim, sink, bin_dir, asan_runtime=""):
        self.shim = os.path.abspath(shim)
        self.sink = os.path.abspath(sink)
        self.bin_dir = os.path.abspath(bin_dir)
        self.asan_runtime = asan_runtime  # preloaded first in sanitizer builds

    def prog(self, name):
        return os.path.join(self.bin_dir, name)

    def preload(self):
        return " ".join(p for p in (self.asan_runtime, self.shim) if p)


class Sink:
    def __init__(self, run, proc, out, tag, got=None):
        self.run, self.proc, self.out, self.tag, self.got = run, proc, out, tag, got

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()

    def wait_got(self, timeout):
        """Waits until the sink has accepted a frame (started with got=True):
        a sender is connected to it."""
        deadline = time.monotonic() + timeout
        while not os.path.exists(self.got):
            check(self.proc.poll() is None, f"{self.tag} exited early ({self.proc.returncode})")
            check(time.monotonic() < deadline, f"{self.tag} got no frame within {timeout} s")
            time.sleep(0.01)

    def wait(self, timeout, stop=False):
        """Waits for the sink to stop on its own (or, with stop, makes it
        stop now with SIGTERM); its JSON report."""
        if stop and self.proc.poll() is None:
            self.proc.terminate()
        try:
            rc = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            # what it got so far says which process's FINAL frame is missing
            self.proc.terminate()
            seen = "nothing"
            try:
                self.proc.wait(timeout=5)
                with open(self.out) as f:
                    seen = ", ".join(f"pid {p['pid']}: {p['frames']} frames, final "
                                     f"{p['final']}" for p in json.load(f)["processes"])
            except (subprocess.TimeoutExpired, OSError, ValueError, KeyError):
                self.kill()
            raise Fail(f"{self.tag} did not stop within {timeout} s; it had {seen}")
        check(rc == 0, f"{self.tag} exited with status {rc}")
        with open(self.out) as f:
            return json.load(f)


class Run:
    """One test's temporary directory, key and address; a context manager."""

    def __init__(self, tools, name):
        self.tools = tools
        self.dir = tempfile.mkdtemp(prefix=f"iop-safety-{name}-")
        self.key = secrets.token_hex(16)
        self.url = f"ipc://{self.dir}/sink.ipc"
        self.final_url = f"ipc://{self.dir}/final.ipc"
        self.sinks = []
        self.procs = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        for s in self.sinks:
            s.kill()
        shutil.rmtree(self.dir, ignore_errors=True)
        return False

    def path(self, *parts):
        return os.path.join(self.dir, *parts)

    def workdir(self, name):
        d = self.path(name)
        os.makedirs(d, exist_ok=True)
        return d

    def start_sink(self, expect_final, timeout_s=60, tag="sink", url=None, got=False,
                   final=False):
        """Starts iop-sink and waits until it has bound its socket. got:
        Sink.wait_got() may then wait for its first frame. final: it also
        answers last frames at self.final_url, as a leaf does (run.env(...,
        final=True) points the shim there)."""
        n = len(self.sinks)
        out, ready = self.path(f"sink{n}.json"), self.path(f"sink{n}.ready")
        argv = [self.tools.sink, "--url", url or self.url, "--key", self.key,
                "--out", out, "--expect-final", str(expect_final),
                "--idle-ms", str(timeout_s * 1000), "--timeout-s", str(timeout_s),
                "--ready", ready]
        if final:
            argv += ["--final-url", self.final_url]
        got_path = self.path(f"sink{n}.got") if got else None
        if got:
            argv += ["--got", got_path]
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL)
        sink = Sink(self, proc, out, tag, got_path)
        self.sinks.append(sink)
        deadline = time.monotonic() + 10
        while not os.path.exists(ready):
            check(proc.poll() is None, f"{tag} exited early ({proc.returncode})")
            check(time.monotonic() < deadline, f"{tag} not ready after 10 s")
            time.sleep(0.01)
        return sink

    def env(self, mode, addr=None, extra=None, final=False):
        """mode: "none" (no shim), "passive" (preloaded, no address) or
        "active" (preloaded, sending to addr or this run's sink). final:
        last frames to the sink's final_url, acknowledged (as under
        `iopulse run`); else over PUSH with the rest, unacknowledged."""
        env = dict(os.environ)
        for k in ("LD_PRELOAD", "IOPULSE_ADDR", "IOPULSE_KEY", "IOPULSE_FINAL_ADDR"):
            env.pop(k, None)
        if mode != "none":
            env["LD_PRELOAD"] = self.tools.preload()
        if mode == "active":
            env["IOPULSE_ADDR"] = addr or self.url
            env["IOPULSE_KEY"] = self.key
            if final:
                env["IOPULSE_FINAL_ADDR"] = self.final_url
        env.update(extra or {})
        return env

    def start(self, argv, env, cwd=None):
        p = subprocess.Popen(argv, env=env, cwd=cwd or self.dir, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        self.procs.append(p)
        return p

    def finish(self, p, timeout, what):
        """Waits for a started program: (status, stdout, stderr, seconds)."""
        t0 = time.monotonic()
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
            raise Fail(f"{what} did not finish within {timeout} s (hang?)\n{err}")
        return p.returncode, out, err, time.monotonic() - t0

    def run_ok(self, argv, env, timeout, what, cwd=None):
        """Runs a program that must exit 0; its stdout."""
        t0 = time.monotonic()
        rc, out, err, _ = self.finish(self.start(argv, env, cwd), timeout, what)
        check(rc == 0, f"{what} exited with status {rc}\n--- stdout ---\n{out}"
                       f"--- stderr ---\n{err}")
        if err.strip():
            print(f"{what} stderr:\n{err.rstrip()}")
        return out, time.monotonic() - t0


def values(stdout):
    """Lines "key value ..." of a program's output as {key: [value, ...]}."""
    got = {}
    for line in stdout.splitlines():
        parts = line.split()
        if parts:
            got[parts[0]] = parts[1:]
    return got


def file_entry(doc, path):
    for f in doc["files"]:
        if f["path"] == path:
            return f
    return None


def counter(doc, path, layer, cls, view="counters"):
    """(ops, bytes, errors) of one file, layer and class in a sink report."""
    f = file_entry(doc, path)
    c = (f or {}).get(view, {}).get(layer, {}).get(cls, {})
    return c.get("ops", 0), c.get("bytes", 0), c.get("errors", 0)


def describe(doc, prefix):
    """One line per file under prefix: what the sink counted."""
    lines = []
    for f in doc["files"]:
        if f["path"].startswith(prefix):
            lines.append(f"  {f['path'][len(prefix):] or '.'}: {json.dumps(f['counters'])}")
    return "\n".join(lines) or "  (nothing)"


def kill_and_reap(proc, sig=signal.SIGKILL):
    if proc.poll() is None:
        proc.send_signal(sig)
    proc.wait()


def ended(p, timeout):
    """The exit status of a started program, or None when it was still
    running after timeout seconds (it is then killed)."""
    try:
        p.communicate(timeout=timeout)
        return p.returncode
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        return None


def status(rc):
    if rc is None:
        return "HUNG (killed)"
    return f"killed by {signal.Signals(-rc).name}" if rc < 0 else f"exit {rc}"
