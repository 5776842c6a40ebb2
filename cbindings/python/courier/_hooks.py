"""An engine's hooks (``Engine(on_request=, on_response=, on_redirect=, on_metrics=)``) as the C
callbacks of courier_engine_set_hooks."""

import ctypes
import sys

from . import _native
from ._native import lib

#: Hook callbacks handed to C; never freed (one set per engine that has hooks).
keep_alive = []


class OutgoingRequest:
    """A request about to be sent, as ``on_request`` sees it: ``method``, ``url``, ``body``
    (bytes, or None when it is not in memory), ``header(name)`` and ``set_header(name, value)``
    (None removes the field)."""

    def __init__(self, handle):
        self._handle = handle
        self.method = lib.courier_outgoing_method(handle).decode()
        self.url = lib.courier_outgoing_url(handle).decode()
        length = ctypes.c_size_t()
        pointer = lib.courier_outgoing_body(handle, ctypes.byref(length))
        self.body = ctypes.string_at(pointer, length.value) if pointer else None

    def header(self, name):
        value = lib.courier_outgoing_header(self._handle, name.encode())
        return value.decode("latin-1") if value is not None else None

    def set_header(self, name, value):
        code = lib.courier_outgoing_set_header(self._handle, name.encode(), None if value is None else str(value).encode())
        if code:
            from ._support import _error
            raise _error(code, "header %r" % name)


class Completed:
    """What ``on_metrics`` is told about each request: ``code`` (0 on success), and when a
    response arrived its ``status``, ``url`` and ``timings`` (else None)."""

    def __init__(self, code, response):
        self.code = code
        self.status = response.status if response else None
        self.url = response._url if response else None
        self.timings = response.timings if response else None


def install(engine_handle, on_request, on_response, on_redirect, on_metrics, report):
    """Sets the hooks; ``report(exc_info, function)`` gets what a hook raised."""
    from . import Response

    def request_hook(handle, _user):
        try:
            on_request(OutgoingRequest(handle))
            return 0
        except BaseException:
            report(sys.exc_info(), on_request)
            return 1

    def response_hook(handle, _user):
        try:
            return 0 if on_response(Response._of(handle, owned=False)) is not False else 1
        except BaseException:
            report(sys.exc_info(), on_response)
            return 1

    def redirect_hook(status, source, target, rewrite, capacity, _user):
        try:
            verdict = on_redirect(status, source.decode(), target.decode())
            if verdict is None or verdict is True:
                return 0
            if isinstance(verdict, str):
                encoded = verdict.encode()
                if len(encoded) + 1 > capacity:
                    return 1
                ctypes.memmove(rewrite, encoded + b"\0", len(encoded) + 1)
                return 2
            return 1
        except BaseException:
            report(sys.exc_info(), on_redirect)
            return 1

    def metrics_hook(_request, response, code, _user):
        try:
            on_metrics(Completed(code, Response._of(response, owned=False) if response else None))
        except BaseException:
            report(sys.exc_info(), on_metrics)

    callbacks = (_native.REQUEST_HOOK_FN(request_hook) if on_request else _native.REQUEST_HOOK_FN(),
                 _native.RESPONSE_HOOK_FN(response_hook) if on_response else _native.RESPONSE_HOOK_FN(),
                 _native.REDIRECT_HOOK_FN(redirect_hook) if on_redirect else _native.REDIRECT_HOOK_FN(),
                 _native.METRICS_HOOK_FN(metrics_hook) if on_metrics else _native.METRICS_HOOK_FN())
    keep_alive.append(callbacks)
    return lib.courier_engine_set_hooks(engine_handle, *callbacks, None)


#: COURIER_DEBUG_* as the names ``on_debug`` gets.
DEBUG_KINDS = {0: "text", 1: "header_out", 2: "header_in"}


def install_debug(engine_handle, on_debug, report):
    """``Engine(on_debug=)``: ``on_debug(kind, data)`` for every exchange of the engine's requests
    when its response head arrives, redirects' included: ``"text"`` once per line about the
    connection, ``"header_out"`` with the request head as sent, ``"header_in"`` with the response
    head, each as bytes (curl's CURLOPT_DEBUGFUNCTION, libcurl's ``-v`` text). On Courier's
    thread; an exception is reported through ``sys.unraisablehook``."""

    def debug(_request, kind, data, length, _user):
        try:
            on_debug(DEBUG_KINDS.get(kind, str(kind)), ctypes.string_at(data, length))
        except BaseException:
            report(sys.exc_info(), on_debug)

    callback = _native.DEBUG_FN(debug)
    keep_alive.append(callback)
    return lib.courier_engine_set_debug(engine_handle, callback, None)
