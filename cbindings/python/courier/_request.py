"""A request sent with ``Engine.send`` (``PendingRequest``), and the one C trampoline every request's
outcome and progress come back through."""

import sys
import threading

from . import _consumers, _native, _retry
from ._native import lib
from ._response import Response
from ._support import _error, _report_unraisable


# Request bodies produced by Python iterators, kept alive (with their ctypes callbacks) until the
# request handle is freed: the library may call them until then.
_bodies = {}


def _free_request(handle):
    if _bodies:
        _bodies.pop(getattr(handle, "value", handle), None)
    if _progress_hooks:
        _progress_hooks.pop(getattr(handle, "value", handle), None)
    if _consumers._by_handle:
        _consumers.forget(getattr(handle, "value", handle))
    _retry.forget(handle)
    lib.courier_request_free(handle)


class PendingRequest:
    """A request sent with ``Engine.send``: ``wait()`` for its outcome, ``cancel()`` it. (Named
    apart from ``Request``, httpx's request object, which a caller builds and a client sends.)"""

    def __init__(self, engine, handle, callback, progress):
        self._engine = engine
        self._handle = handle
        self._callback = callback
        self._progress = progress
        self._done = threading.Event()
        self.response = None
        self.error = None
        self.exception = None

    def cancel(self):
        if not self._done.is_set():
            lib.courier_request_cancel(self._handle)

    def wait(self, timeout=None):
        """The response; raises the request's error, or what the callback raised."""
        if not self._done.wait(timeout):
            raise TimeoutError("the request is still running")
        if self.exception is not None:
            raise self.exception
        if self.error is not None:
            raise self.error
        return self.response

    def _preview(self, response_handle):
        """cached-then-fresh: the stored response, before the final one (the request goes on)."""
        response = Response._of(response_handle)
        try:
            if self._callback is not None:
                self._callback(response, None)
        except BaseException as error:  # never into C
            self.exception = error
            _report_unraisable(sys.exc_info(), self._callback)

    def _finish(self, response_handle, code):
        response = Response._of(response_handle) if response_handle else None
        message = lib.courier_request_errmsg(self._handle).decode() if code else None
        _free_request(self._handle)
        self.response = response
        self.error = _error(code, message, response) if code else None
        try:
            if self._callback is not None:
                self._callback(response, self.error)
        except BaseException as error:  # never into C
            self.exception = error
            _report_unraisable(sys.exc_info(), self._callback)
        finally:
            self._done.set()


# One C trampoline for every request: the user pointer is a key into this table, so no ctypes
# callback object has to outlive an unknown number of requests.
_requests = {}
_requests_lock = threading.Lock()
_next_key = [0]


def _lookup(user, remove):
    with _requests_lock:
        return _requests.pop(user, None) if remove else _requests.get(user)


@_native.DONE_FN
def _done_trampoline(_request, response, code, user):
    preview = bool(response) and lib.courier_response_is_preview(response) == 1
    request = _lookup(user, remove=not preview)
    if request is None:
        if response:
            lib.courier_response_free(response)
    elif preview:
        request._preview(response)
    else:
        request._finish(response, code)


@_native.PROGRESS_FN
def _progress_trampoline(_request, direction, done, total, user):
    request = _lookup(user, remove=False)
    if request is None or request._progress is None:
        return
    try:
        request._progress("upload" if direction == 0 else "download", done, None if total < 0 else total)
    except BaseException as error:
        request.exception = error
        _report_unraisable(sys.exc_info(), request._progress)


# ``progress=`` given to any call (request, get, fetch, stream...): the callable by request
# handle, until the request is freed.
_progress_hooks = {}


@_native.PROGRESS_FN
def _hook_progress(_request, direction, done, total, user):
    progress = _progress_hooks.get(user)
    if progress is None:
        return
    try:
        progress("upload" if direction == 0 else "download", done, None if total < 0 else total)
    except BaseException:
        _report_unraisable(sys.exc_info(), progress)


# Streamed responses in flight: kept alive (their ctypes callbacks with them) until the library's
# done callback says nothing more will be called.
_live_streams = set()
