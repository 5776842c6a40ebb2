"""The process-wide queue: its width, per-host limits, activity and observers, and shutdown. One
queue serves Python, C and Swift callers in the process together."""

import ctypes
import sys

from . import _native
from ._native import lib
from ._support import _check, _report_unraisable


def version():
    return lib.courier_version().decode()


def queue_width():
    """Operations running at once in the whole process (Python, C and Swift callers together)."""
    return lib.courier_queue_width()


def set_queue_width(width):
    _check(lib.courier_queue_set_width(width))


def set_host_limit(host, limit):
    """Per-host operation and connection limit; host None sets the default, limit 0 clears."""
    _check(lib.courier_queue_set_host_limit(host.encode() if host is not None else None, limit))


def activity():
    """(running, queued) operations, process-wide."""
    running, queued = ctypes.c_int(), ctypes.c_int()
    lib.courier_queue_activity(ctypes.byref(running), ctypes.byref(queued))
    return running.value, queued.value


class Observation:
    """A registered activity observer; ``cancel()`` stops it."""

    def __init__(self, function):
        def trampoline(running, queued, _user):
            try:
                function(running, queued)
            except BaseException:  # never into C
                _report_unraisable(sys.exc_info(), function)
        self._trampoline = _native.ACTIVITY_FN(trampoline)  # must outlive the registration
        token = ctypes.c_int()
        _check(lib.courier_queue_observe(self._trampoline, None, ctypes.byref(token)))
        self._token = token.value

    def cancel(self):
        # The trampoline lives until courier_queue_unobserve returns, after which C never calls
        # it again (the call waits for a notification in progress, with the GIL released).
        if self._token:
            lib.courier_queue_unobserve(self._token)
            self._token = 0

    def __del__(self):
        self.cancel()


def observe_activity(function):
    """Calls ``function(running, queued)`` on Courier's thread when the queue's activity changes."""
    return Observation(function)


def shutdown():
    """Fails what is in flight, closes connections and stops Courier's thread (it restarts on the
    next request). Not from a callback."""
    _check(lib.courier_shutdown())
