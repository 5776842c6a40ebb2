"""The C extension ``courier._speedups`` (``_speedups*.c``): the hot path (a plain request sent,
finished requests collected, a blocking one waited for) in one C call each instead of seven to
nine ctypes calls and their Python. Optional: the package builds it where a compiler and Python's headers are found,
and works the same without it. ``COURIER_PYTHON_SPEEDUPS=0`` turns it off (to compare, or to
rule it out).

``speedups`` is the bound module, or None when it is not there or turned off."""

import ctypes
import os

from . import _consumers, _response, _retry
from ._native import lib
from ._request import _bodies, _progress_hooks
from ._response import Response, _live_handles

#: The library functions the extension calls, in the order of its ``library`` struct.
FUNCTIONS = ("courier_request_create", "courier_request_add_header", "courier_request_remove_header",
             "courier_request_set_cookiejar", "courier_request_enqueue", "courier_request_perform", "courier_request_errmsg",
             "courier_request_free", "courier_engine_next_done", "courier_response_status",
             "courier_response_body", "courier_response_url", "courier_response_free")


def _bound():
    if os.environ.get("COURIER_PYTHON_SPEEDUPS", "1") == "0":
        return None
    try:
        from . import _speedups
    except ImportError:
        return None
    addresses = tuple(ctypes.cast(getattr(lib._cdll, name), ctypes.c_void_p).value for name in FUNCTIONS)
    # The dicts whose requests Python must free itself (bodies, progress, consumers, retry hooks).
    _speedups.bind(addresses, Response, _live_handles, (_bodies, _progress_hooks, _consumers._by_handle, _retry._hooks))
    _response._release = _speedups.release
    return _speedups


speedups = _bound()
