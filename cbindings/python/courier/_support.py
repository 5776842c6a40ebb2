"""What every module of the package shares: checking a C result, reporting a callback's exception
(never into C), C string arguments."""

import sys

from . import _native
from ._errors import error_for
from ._native import lib

_error = error_for


def _check(code, request=None):
    if code != _native.OK:
        message = lib.courier_request_errmsg(request).decode() if request else None
        raise _error(code, message)


def _text_out(call, what=None):
    """The text a C function writes snprintf's way (``call(out, capacity, needed)``): sized with
    a first call, then written. A failing code raises (with ``what`` as the message)."""
    import ctypes
    needed = ctypes.c_size_t()
    code = call(None, 0, ctypes.byref(needed))
    if code == _native.OK:
        buffer = ctypes.create_string_buffer(needed.value + 1)
        code = call(buffer, len(buffer), ctypes.byref(needed))
    if code != _native.OK:
        raise _error(code, what)
    return buffer.raw[:needed.value].decode()


class _Unraisable:
    """What sys.unraisablehook expects, for exceptions raised by callbacks."""

    def __init__(self, info, obj):
        self.exc_type, self.exc_value, self.exc_traceback = info
        self.err_msg = "Exception ignored in a Courier callback"
        self.object = obj


def _report_unraisable(info, obj):
    """Reports a callback's exception through sys.unraisablehook (CPython's own hook accepts
    only its internal argument type, so with it the report is printed the same way by hand)."""
    if sys.unraisablehook is sys.__unraisablehook__:
        import traceback
        print("Exception ignored in a Courier callback: %r" % (obj,), file=sys.stderr)
        traceback.print_exception(*info, file=sys.stderr)
    else:
        sys.unraisablehook(_Unraisable(info, obj))


def _text(value):
    """A str for a C string argument (None stays NULL)."""
    return None if value is None else str(value).encode()
