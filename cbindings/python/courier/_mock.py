"""``Engine(mock=handler)``: an engine whose requests a Python function answers inside the
process (the library's own mock server, under Courier's whole stack: redirects, cookies, the
cache, retries run as against a real server). httpx's ``MockTransport`` stays the way for
clients; this one is for engines, and runs the library's wire code too."""
import ctypes
import sys

from . import _native
from ._native import lib

MOCK_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_void_p,
                           ctypes.c_size_t, ctypes.c_void_p)


def install(handle, handler, report):
    """Sets ``handler(method, target, headers, body) -> (status, headers, body)`` as the engine's
    mock (``headers`` in: (name, value) pairs; out: a dict or pairs). Returns the ctypes callback,
    which the engine keeps alive. A handler that raises answers 500, and ``report(exc_info,
    handler)`` gets the exception."""
    def call(_user, method, target, headers, body, length, reply):
        try:
            fields = [tuple(part.strip() for part in line.split(":", 1)) for line in headers.decode("latin-1").split("\r\n") if line]
            status, out_headers, out_body = handler(method.decode(), target.decode(), fields,
                                                    ctypes.string_at(body, length) if length else b"")
            lib.courier_mock_reply_set_status(reply, int(status))
            pairs = out_headers.items() if hasattr(out_headers, "items") else out_headers
            for name, value in pairs:
                lib.courier_mock_reply_add_header(reply, str(name).encode(), str(value).encode())
            data = out_body.encode() if isinstance(out_body, str) else bytes(out_body or b"")
            lib.courier_mock_reply_set_body(reply, data, len(data))
        except BaseException:  # (on Courier's loop thread: reported, never raised there)
            lib.courier_mock_reply_set_status(reply, 500)
            report(sys.exc_info(), handler)
    callback = MOCK_FN(call)
    code = lib.courier_engine_set_mock(handle, callback, None)
    if code:
        from ._support import _error
        raise _error(code, "mock")
    return callback
