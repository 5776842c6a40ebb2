"""Where a response body goes besides memory, for any call: several consumers at once
(``on_data``, beside ``output=`` if given: the C ABI's fan-out) and a file chosen from the response
head (``destination``). The callables run on Courier's thread; they are kept by request handle
until the request is freed."""
import ctypes
import os
import sys

from . import _native
from ._native import lib
from ._support import _report_unraisable

#: on_data callables by key (each its own, so one request can have several).
_writers = {}
#: Per request handle: its writer keys, and its destination callable with the paths it returned
#: (kept until the request is freed: the library copies them, but only once the call returned).
_by_handle = {}
_next = [0]


@_native.WRITE_FN
def _write(data, length, user):
    consume = _writers.get(user)
    if consume is None:
        return length
    try:
        consume(ctypes.string_at(data, length))
        return length
    except BaseException:
        _report_unraisable(sys.exc_info(), consume)
        return 0  # (not `length`: the request fails with E_FILE_WRITE)


@_native.DESTINATION_FN
def _choose(_request, head, user):
    entry = _by_handle.get(user)
    if entry is None or entry["destination"] is None:
        return None
    from ._response import Response
    try:
        path = entry["destination"](Response._of(head, owned=False))
    except BaseException:
        _report_unraisable(sys.exc_info(), entry["destination"])
        return None
    if path is None:
        return None
    kept = ctypes.create_string_buffer(os.fsencode(path))
    entry["paths"].append(kept)
    return ctypes.addressof(kept)


def apply(handle, on_data, destination, check):
    """Sets `handle`'s consumers (a callable or a list of them) and destination."""
    entry = _by_handle.setdefault(handle.value, {"keys": [], "destination": None, "paths": []})
    consumers = [] if on_data is None else (list(on_data) if isinstance(on_data, (list, tuple)) else [on_data])
    for consume in consumers:
        _next[0] += 1
        _writers[_next[0]] = consume
        entry["keys"].append(_next[0])
        check(lib.courier_request_add_write_callback(handle, _write, _next[0]))
    if destination is not None:
        entry["destination"] = destination
        check(lib.courier_request_set_destination(handle, _choose, handle.value))


def forget(handle):
    entry = _by_handle.pop(handle, None)
    if entry:
        for key in entry["keys"]:
            _writers.pop(key, None)
