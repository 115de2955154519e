"""What the holistic tests share: where a path's file system is (as
findmnt names it), and running the job under `iopulse run` as an ordinary
user where one exists (HPC users are not root)."""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "run-e2e"))
from e2e_common import fail, iopulse_job, launcher_cmd, ordinary_user  # noqa: E402


def findmnt(path):
    """(mount point, type, device) of the file system path lies on."""
    out = subprocess.run(["findmnt", "-n", "-o", "TARGET,FSTYPE,SOURCE,MAJ:MIN", "-T", path],
                         capture_output=True, text=True, check=True).stdout.split()
    target, fstype, source, majmin = out[0], out[1], out[2], out[3]
    dev = source
    maj = majmin.split(":")[0]
    if maj != "0":
        try:
            with open("/sys/dev/block/%s/uevent" % majmin) as f:
                for line in f:
                    if line.startswith("DEVNAME="):
                        dev = line.strip().split("=", 1)[1]
        except OSError:
            pass
    return target, fstype, dev


def run_job(args, opts, ranks, job, env, tmp, timeout):
    """`iopulse run OPTS -- LAUNCHER -n RANKS JOB`, as an ordinary user
    where one can (HOME in tmp); fails on a non-zero exit. Returns its
    stderr (the alert lines and the summary)."""
    user = ordinary_user(args.iopulse)
    if not user:
        return iopulse_job(args, opts, ranks, job, env, timeout).stderr
    cmd_env = dict(env, HOME=tmp, USER=user.pw_name, LOGNAME=user.pw_name)
    for k in ("OMPI_ALLOW_RUN_AS_ROOT", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"):
        cmd_env.pop(k, None)
    p = subprocess.run(["setpriv", "--reuid=%d" % user.pw_uid, "--regid=%d" % user.pw_gid,
                        "--init-groups", "--", args.iopulse, "run"] + opts + ["--"] +
                       launcher_cmd(args.mpirun, ranks) + job,
                       env=cmd_env, capture_output=True, text=True, timeout=timeout,
                       stdin=subprocess.DEVNULL)
    sys.stderr.write(p.stderr)
    if p.returncode != 0:
        fail("iopulse run as %s exited %d" % (user.pw_name, p.returncode))
    return p.stderr


def scratch(prefix, *parents):
    """A temporary directory (open to every user: the job may run as
    another), and one directory named after it under each of parents
    (/dev/shm, /var/tmp: the file systems a test writes to), made the same
    way. Returns the temporary directory and those."""
    tmp = tempfile.mkdtemp(prefix=prefix)
    os.chmod(tmp, 0o777)
    made = []
    for parent in parents:
        d = os.path.join(parent, os.path.basename(tmp))
        os.mkdir(d)
        os.chmod(d, 0o777)
        made.append(d)
    return (tmp, *made)


def remove(*dirs):
    """The scratch directories gone, whatever the test left in them."""
    for d in dirs:
        shutil.rmtree(d, ignore_errors=True)


def loop_script(seconds, body):
    """A shell line running body (where $r is the rank, from the launcher's
    environment as the shim takes it) again and again for seconds."""
    return ('r=${OMPI_COMM_WORLD_RANK:-$PMI_RANK}; end=$(( $(date +%%s) + %d )); '
            'while [ $(date +%%s) -lt $end ]; do %s; done' % (seconds, body))
