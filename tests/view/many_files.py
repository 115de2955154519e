#!/usr/bin/python3
"""A job whose ticks are large: it writes 64 bytes to each of N files in
DIR, pausing PAUSE seconds between passes, for SECS seconds and, given
UNTIL, until the file UNTIL exists; then sleeps 3 s. Each pass makes a few
thousand rows in a tick (file x layer x class), so a viewer that stops
reading for a few seconds overflows its buffers.

    many_files.py DIR N SECS PAUSE [UNTIL]
"""
import os
import sys
import time

d, n, secs, pause = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
until = sys.argv[5] if len(sys.argv) > 5 else None
os.makedirs(d, exist_ok=True)
end = time.time() + secs
buf = b"x" * 64
while time.time() < end or (until and not os.path.exists(until)):
    for i in range(n):
        fd = os.open("%s/f%d" % (d, i), os.O_WRONLY | os.O_CREAT, 0o600)
        os.write(fd, buf)
        os.close(fd)
    time.sleep(pause)
time.sleep(3)
