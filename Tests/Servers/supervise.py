#!/usr/bin/env python3
"""Runs a server for the tests and stops it when the test process goes away.

Usage: supervise.py PARENT_PID -- command args...

Test processes can be killed (a timeout, ^C) without running their cleanup; a server started
directly would then outlive them and hold its port. This wrapper polls the parent and terminates
the child as soon as the parent is gone. It forwards the child's output untouched.
"""
import os
import signal
import subprocess
import sys
import time


def main():
    parent = int(sys.argv[1])
    command = sys.argv[sys.argv.index("--") + 1:]
    child = subprocess.Popen(command)

    def stop(*_):
        child.terminate()
        try:
            child.wait(timeout=3)
        except subprocess.TimeoutExpired:
            child.kill()
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    while child.poll() is None:
        # When the parent exits we are re-parented at once, even while it lingers as a zombie
        # (a zombie still answers kill(pid, 0), so that test would wait forever).
        if os.getppid() != parent:
            stop()
        time.sleep(0.5)
    sys.exit(child.returncode)


if __name__ == "__main__":
    main()
