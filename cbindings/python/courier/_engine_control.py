"""What an ``Engine`` does to its requests as a whole, and how one reads as curl: ``cancel_all``
(MKNetworkKit's cancel of an engine's operations, all or by a predicate) and ``curl_command``
(its ``curlCommandLineString``)."""
import ctypes

from ._native import lib
from ._request import _free_request
from ._support import _check, _text_out

#: courier_select_fn.
SELECT_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_void_p)


class _EngineControl:
    def invalidate(self, cancel_running=False):
        """AFURLSessionManager's invalidation: requests made from the engine afterwards raise
        ``CourierError`` with ``E_INVALIDATED``; those already queued or running are cancelled
        (``cancel_running``, invalidateAndCancel) or left to finish (finishTasksAndInvalidate).
        A second call does nothing."""
        _check(lib.courier_engine_invalidate(self._handle, 1 if cancel_running else 0))

    def cancel_all(self, where=None):
        """Cancels the engine's queued and running requests: every one, or those for which
        ``where(method, url)`` is true (asked on Courier's thread before this returns; keep it
        short, and do not call into Courier from it). Each ends with ``Cancelled``."""
        if where is None:
            _check(lib.courier_engine_cancel_all(self._handle))
            return
        problems = []

        def select(method, url, _user):
            try:
                return 1 if where(method.decode(), url.decode()) else 0
            except BaseException as problem:  # (raised again below, not lost on Courier's thread)
                problems.append(problem)
                return 0
        callback = SELECT_FN(select)
        _check(lib.courier_engine_cancel_where(self._handle, ctypes.cast(callback, ctypes.c_void_p), None))
        if problems:
            raise problems[0]

    def curl_command(self, method, url, **options):
        """The request these arguments make, as a curl command line (for logs and bug reports):
        method, URL, the headers it would send, its body, ``--compressed``. Nothing is sent."""
        handle = self._build(method, url, **options)
        try:
            return _text_out(lambda out, capacity, needed: lib.courier_request_curl_command(handle, out, capacity, needed))
        finally:
            _free_request(handle)
