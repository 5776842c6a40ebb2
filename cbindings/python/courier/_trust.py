"""The application's trust decision and report-only pins for an ``Engine`` (the C ABI's
``courier_engine_set_trust`` and ``courier_engine_set_tls_pin_mode``; Swift's TrustEvaluator)."""
import ctypes
import sys
from collections import namedtuple

from ._errors import error_for
from ._native import lib
from ._support import _check, _report_unraisable

TRUST_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                            ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_size_t), ctypes.c_size_t, ctypes.c_void_p)
PIN_REPORT_FN = ctypes.CFUNCTYPE(None, ctypes.c_char_p, ctypes.c_int, ctypes.c_void_p)
PIN_MODES = {"enforce": 0, "report_only": 1}

#: What ``trust`` sees during a handshake: the host and port; ``error``, Courier's verdict (None
#: when the chain and host verified, else the TLSError it would fail with); ``pin_matched`` (None
#: when no pins apply); ``chain``, the server's certificates as DER bytes, leaf first.
TrustContext = namedtuple("TrustContext", ["host", "port", "error", "pin_matched", "chain"])


def install(handle, trust, pin_mismatch, pin_mode):
    """Sets the hooks on the engine `handle`; returns the ctypes callbacks, which the engine keeps
    alive for its life. ``trust(context) -> bool`` trusts or refuses (E_TLS_REJECTED);
    ``pin_mismatch(host, port)`` hears of every pin mismatch. Both run on Courier's thread during
    handshakes (quick, no blocking); one that raises refuses, and is reported."""
    kept = []
    if pin_mode is not None:
        if pin_mode not in PIN_MODES:
            raise ValueError("pin_mode is %s, not %r" % (" or ".join(PIN_MODES), pin_mode))
        _check(lib.courier_engine_set_tls_pin_mode(handle, PIN_MODES[pin_mode]))
    if trust is None and pin_mismatch is None:
        return kept

    def evaluate(host, port, verdict, pinned, chain, lengths, count, _user):
        if trust is None:
            return 1 if verdict == 0 else 0
        certificates = [ctypes.string_at(chain[i], lengths[i]) for i in range(count)]
        context = TrustContext(host.decode(), port, error_for(verdict) if verdict else None,
                               None if pinned < 0 else bool(pinned), certificates)
        try:
            return 1 if trust(context) else 0
        except BaseException:
            _report_unraisable(sys.exc_info(), trust)
            return 0

    def report(host, port, _user):
        try:
            pin_mismatch(host.decode(), port)
        except BaseException:
            _report_unraisable(sys.exc_info(), pin_mismatch)
    kept = [TRUST_FN(evaluate) if trust is not None else None, PIN_REPORT_FN(report) if pin_mismatch is not None else None]
    pointers = [ctypes.cast(callback, ctypes.c_void_p) if callback is not None else None for callback in kept]
    _check(lib.courier_engine_set_trust(handle, pointers[0], pointers[1], None))
    return kept
