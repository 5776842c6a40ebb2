"""Retries for the Python binding: ``retry=Retry(...)`` (or ``retry=3``) on any request.

Mirrors the library's RetryPolicy: ``count`` retries at most, waiting ``intervals`` seconds before
each (the last repeats; none at all is a second, OCNet's default; ``backoff`` doubles past the list up to ``max_interval``; ``jitter``
draws each wait between half of it and all of it); idempotent methods, or any with an
``Idempotency-Key`` header or ``non_idempotent=True``; failures before a response head and the
``statuses`` (408, 429, 502, 503, 504 by default), every failure with ``all_errors=True``;
``Retry-After`` waited for up to ``retry_after_limit`` seconds; none started after ``max_time``
seconds. ``on_retry(retry, reason)`` is asked before each one (on Courier's loop thread: keep it
short) and returns False to stop. Each origin has a retry budget shared by the whole process
(``budget=False`` opts out). A connect that failed because the link is down (``E_CONNECT_NO_ROUTE``)
takes nothing from the budget, and its retry waits for the network to come back (at most 60 s,
or to the total timeout) instead of failing again at once.
"""
import ctypes
from collections import namedtuple

from . import _native
from ._native import lib

_FLAGS = {"backoff": 1, "jitter": 2, "all_errors": 4, "non_idempotent": 8}
_NO_BUDGET = 16

#: Why a retry happened: ``status`` (the retried response's, else 0) or ``code`` (the failure's
#: COURIER_E_* code, else 0).
RetryReason = namedtuple("RetryReason", ["status", "code"])

# Callbacks kept alive while their request exists (keyed by the request handle).
_hooks = {}


class Retry:
    def __init__(self, count=3, intervals=(1.0,), backoff=False, jitter=False, all_errors=False,
                 non_idempotent=False, max_time=None, retry_after_limit=None, max_interval=None,
                 statuses=None, on_retry=None, budget=True):
        if count < 0:
            raise ValueError("count must be >= 0")
        if any(i < 0 for i in intervals):
            raise ValueError("intervals must be >= 0")
        self.count = int(count)
        self.intervals = [float(i) for i in intervals]
        self.backoff, self.jitter, self.all_errors, self.non_idempotent = backoff, jitter, all_errors, non_idempotent
        self.max_time, self.retry_after_limit, self.max_interval = max_time, retry_after_limit, max_interval
        self.statuses = None if statuses is None else [int(s) for s in statuses]
        self.on_retry = on_retry
        self.budget = budget

    def __repr__(self):
        return "Retry(count=%d, intervals=%r)" % (self.count, self.intervals)


def _milliseconds(seconds):
    return 0 if seconds is None else max(1, int(round(seconds * 1000)))


def apply_retry(handle, retry, apply):
    """Configures `handle` (a request being built) with `retry` (a Retry or a count)."""
    if isinstance(retry, int):
        retry = Retry(count=retry)
    intervals = (ctypes.c_int64 * len(retry.intervals))(*[int(round(i * 1000)) for i in retry.intervals])
    flags = sum(bit for name, bit in _FLAGS.items() if getattr(retry, name)) | (0 if retry.budget else _NO_BUDGET)
    apply(lib.courier_request_set_retry(handle, retry.count, intervals, len(retry.intervals), flags))
    if retry.count == 0:
        return
    if retry.max_time is not None or retry.retry_after_limit is not None or retry.max_interval is not None:
        apply(lib.courier_request_set_retry_limits(handle, _milliseconds(retry.max_time),
                                                   _milliseconds(retry.retry_after_limit),
                                                   _milliseconds(retry.max_interval)))
    if retry.statuses is not None:
        statuses = (ctypes.c_int * len(retry.statuses))(*retry.statuses)
        apply(lib.courier_request_set_retry_statuses(handle, statuses, len(retry.statuses)))
    if retry.on_retry is not None:
        hook = retry.on_retry

        def ask(_request, number, code, status, _user):
            try:
                return 1 if hook(number, RetryReason(status, code)) else 0
            except BaseException:  # an exception in the hook stops retrying rather than crashing
                return 0
        trampoline = _native.RETRY_FN(ask)
        _hooks[handle.value] = trampoline
        apply(lib.courier_request_set_retry_callback(handle, trampoline, None))


def forget(handle):
    """The request is freed: its hook may go."""
    if _hooks:
        _hooks.pop(getattr(handle, "value", handle), None)


def reasons_of(response_handle):
    """The reasons of a response's retries, in order."""
    reasons = []
    status = ctypes.c_int(0)
    for index in range(max(0, lib.courier_response_retries(response_handle))):
        code = lib.courier_response_retry_reason(response_handle, index, ctypes.byref(status))
        reasons.append(RetryReason(status.value if code == 0 else 0, code if code > 0 else 0))
    return reasons
