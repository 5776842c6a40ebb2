#!/usr/bin/env python3
"""peak_rss.py PROGRAM ARGS...: runs PROGRAM, passes its output through, and prints its peak
resident set size on stderr as "peak-rss-kib N" (from wait4's rusage). Exits with its status."""
import os
import sys

pid = os.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
_, status, usage = os.wait4(pid, 0)
sys.stderr.write("peak-rss-kib %d\n" % usage.ru_maxrss)
sys.exit(os.waitstatus_to_exitcode(status))
