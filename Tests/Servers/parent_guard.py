"""Ends a test server when the test process that started it goes away.

Test processes can be killed (a timeout, ^C) without running their cleanup; a server would then
outlive them and hold its port. The test process starts each Python server directly, with its own
pid in COURIER_TEST_PARENT, and `start()` polls it from a daemon thread: one interpreter per
server instead of a second one to supervise it (supervise.py, still used for nginx). Run without
the variable (by hand), a server is not guarded.
"""
import os
import threading
import time


def start():
    parent = int(os.environ.get("COURIER_TEST_PARENT", "0") or 0)
    if not parent:
        return

    def watch():
        # Re-parented the moment the parent exits, even while it lingers as a zombie (which
        # still answers kill(pid, 0)).
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(0)

    threading.Thread(target=watch, daemon=True, name="parent-guard").start()
