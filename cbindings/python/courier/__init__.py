"""Courier for Python: the C ABI of libcourier through ctypes, standard library only.

Requests from Python go through the same process-wide queue (width, per-host limits, keep-alive
pool) as requests from C or Swift code in the same process.

Three ways to wait for a response:

* Blocking: ``Engine.get/post/request``. The calling thread waits inside the C library with the
  GIL released, so other Python threads keep running and several threads can wait at once.
* asyncio: ``await Engine.fetch(...)``. Finished requests are collected from the engine's
  completion queue when its descriptor becomes readable (``loop.add_reader``); no Python code
  ever runs on Courier's thread.
* Callbacks: ``Engine.send(..., callback=...)``. The callback runs on Courier's loop thread, the
  one thread that moves every byte for the process; ctypes takes the GIL for it. Keep callbacks
  short (hand work to a queue). An exception raised by a callback is caught, stored on the
  ``Request`` (``request.exception``) and reported through ``sys.unraisablehook``; it never
  reaches C.
"""

import ctypes
import os as _os
import sys
import threading

from . import _native
from ._native import lib
from . import _errors
from ._errors import *  # noqa: F401,F403  (the exception classes)
from ._errors import CourierError, HTTPStatusError, error_for, strerror
from ._response import PHASES, TIMINGS, Headers, Response
from ._client import AsyncClient, Client, Timeout, delete, get, head, options, patch, post, put, request
from ._streams import AsyncBodyProducer, BodyProducer, FilePart, StreamedResponse, apply_files
from . import _retry
from ._retry import Retry, RetryReason
from . import _compose
from ._compose import ChainOutcome
from ._cookies import CookieJar
from . import _auth
from ._auth import Bearer, Challenge
from . import _hooks
from ._hooks import OutgoingRequest, Completed
from . import _offline
from ._offline import (Outbox, Reachability, follow_network, host_reachability, network_status, set_network_override,
                       unwatch_network, watch_network)

__all__ = ["Client", "AsyncClient", "Timeout", "Headers", "request", "get", "head", "options", "delete", "post",
           "put", "patch"] + list(_errors.__all__) + ["Engine", "Cache", "DataCache", "Request", "Response", "StreamedResponse", "FilePart", "Retry", "RetryReason",
           "ChainOutcome", "CookieJar", "Bearer", "Challenge", "OutgoingRequest", "Completed",
           "E_REJECTED", "E_REDIRECT_REFUSED",
           "Outbox", "network_status", "watch_network", "unwatch_network", "set_network_override", "follow_network",
           "host_reachability", "Reachability",
           "E_OUTBOX", "E_OUTBOX_LOCKED", "E_OUTBOX_FULL", "E_OUTBOX_CORRUPT", "E_FILE_CHANGED", "E_UNSUPPORTED_ENCODING",
           "E_HEADER_BYTES", "E_HEADER_COUNT", "E_TLS_CIPHER",
           "CourierError", "E_DNS_PROXY", "E_CONNECT_PROXY", "E_PROXY", "E_PROXY_REFUSED", "E_PROXY_HANDSHAKE",
           "E_PROXY_CLOSED", "E_PROXY_UNSUPPORTED",
           "HTTPStatusError", "version",
           "queue_width", "set_queue_width", "set_host_limit", "activity", "observe_activity", "shutdown"]

__all__ = list(dict.fromkeys(__all__))

#: The proxy's own failures (CourierError.code): its name did not resolve, it could not be
#: reached, it refused the CONNECT tunnel (the status is in the message), its answer to CONNECT
#: was not HTTP, it closed before answering, or it is not an http:// proxy.
from ._native import (E_DNS_PROXY, E_CONNECT_PROXY, E_PROXY, E_PROXY_REFUSED, E_PROXY_HANDSHAKE,  # noqa: E402
                      E_PROXY_CLOSED, E_PROXY_UNSUPPORTED)
#: An engine hook failed the request (``on_request`` or ``on_response`` raised or returned
#: False), and a redirect ``on_redirect`` refused.
from ._native import E_REJECTED, E_REDIRECT_REFUSED  # noqa: E402
#: The outbox: another process owns it, it is full, an entry was damaged (set aside), a frozen
#: request's file changed since it was frozen.
from ._native import E_OUTBOX, E_OUTBOX_LOCKED, E_OUTBOX_FULL, E_OUTBOX_CORRUPT, E_FILE_CHANGED  # noqa: E402
#: The response's Content-Encoding is none Courier decodes (gzip, deflate, br and zstd are).
from ._native import E_UNSUPPORTED_ENCODING  # noqa: E402
#: The response head beyond ``max_header_bytes`` or ``max_header_fields``; a ``ciphers``,
#: ``tls13_ciphers`` or ``curves`` list that names nothing OpenSSL has.
from ._native import E_HEADER_BYTES, E_HEADER_COUNT, E_TLS_CIPHER  # noqa: E402

PRIORITIES = {"very_low": 0, "low": 1, "normal": 2, "high": 3, "very_high": 4}
TIMEOUTS = {"queue": 1, "connect": 2, "first_byte": 3, "idle": 4, "total": 5}
#: How a call uses its engine's cache (``cache=`` on a request); the C ABI's COURIER_CACHE_*.
CACHE_POLICIES = {"protocol": 0, "reload": 1, "cache_else_load": 2, "cache_only": 3, "stale_if_error": 4,
                  "cached_then_fresh": 5}
COALESCING = {"with_cache": 0, "always": 1, "never": 2}
CACHE_STATS = ["hits", "memory_hits", "disk_hits", "misses", "revalidations", "not_modified", "stale_served", "stores",
               "generated", "memory_bytes", "memory_entries", "disk_bytes", "memory_evictions", "disk_evictions",
               "corrupt_files_removed", "dropped_writes"]


_error = error_for


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


def _check(code, request=None):
    if code != _native.OK:
        message = lib.courier_request_errmsg(request).decode() if request else None
        raise _error(code, message)


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


class Cache:
    """An HTTP cache (RFC 9111, private, like a browser's) engines store GET responses in and are
    answered from: a memory tier of ``memory`` bytes (None: 16 MiB) and, with ``directory``, a disk
    tier of ``disk`` bytes (None: 256 MiB) that other processes may share. Several engines may
    share one cache."""

    def __init__(self, directory=None, memory=None, disk=None):
        handle = _native.cache_p()
        _check(lib.courier_cache_create(str(directory).encode() if directory is not None else None,
                                        -1 if memory is None else int(memory), 0 if disk is None else int(disk),
                                        ctypes.byref(handle)))
        self._handle = handle

    def stats(self):
        """Hits (memory and disk), misses, revalidations, 304s, bytes per tier, evictions."""
        figures = {}
        value = ctypes.c_int64()
        for which, name in enumerate(CACHE_STATS, start=1):
            _check(lib.courier_cache_stat(self._handle, which, ctypes.byref(value)))
            figures[name] = value.value
        return figures

    def drop_memory(self):
        """Empties the memory tier (what memory pressure does); the disk tier keeps everything."""
        _check(lib.courier_cache_drop_memory(self._handle))

    def clear(self):
        _check(lib.courier_cache_clear(self._handle))

    def flush(self):
        """Waits until the disk tier has every response stored so far (before another process reads)."""
        _check(lib.courier_cache_flush(self._handle))

    def close(self):
        """Releases the handle; engines given the cache keep using it."""
        if self._handle:
            lib.courier_cache_destroy(self._handle)
            self._handle = None

    def __del__(self):
        self.close()


# Request bodies produced by Python iterators, kept alive (with their ctypes callbacks) until the
# request handle is freed: the library may call them until then.
_bodies = {}


def _free_request(handle):
    _bodies.pop(getattr(handle, "value", handle), None)
    _retry.forget(handle)
    lib.courier_request_free(handle)


class Request:
    """A request sent with ``Engine.send``: ``wait()`` for its outcome, ``cancel()`` it."""

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
        response = Response(response_handle)
        try:
            if self._callback is not None:
                self._callback(response, None)
        except BaseException as error:  # never into C
            self.exception = error
            _report_unraisable(sys.exc_info(), self._callback)

    def _finish(self, response_handle, code):
        response = Response(response_handle) if response_handle else None
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


# Streamed responses in flight: kept alive (their ctypes callbacks with them) until the library's
# done callback says nothing more will be called.
_live_streams = set()


def _text(value):
    """A str for a C string argument (None stays NULL)."""
    return None if value is None else str(value).encode()


_TLS_VERSIONS = {None: 0, "1.0": 0x0301, "1.1": 0x0302, "1.2": 0x0303, "1.3": 0x0304}


def _tls_version(name):
    """COURIER_TLS_* for "1.0" to "1.3" (None: the default)."""
    if name not in _TLS_VERSIONS:
        raise CourierError(_native.E_INVALID_ARGUMENT, "TLS versions are '1.0', '1.1', '1.2' or '1.3', not %r" % (name,))
    return _TLS_VERSIONS[name]


def _proxy_argument(proxy, trust_env):
    """courier_engine_set_proxy's proxy: the given one, else the environment's (NULL), or none ("")."""
    if proxy is not None:
        return _text(proxy)
    return None if trust_env else b""


class Engine:
    """Requests to one API: a base URL (``"http://127.0.0.1:8080/v1"``), default headers, the
    statuses that count as success. Use as a context manager, or call ``close()``."""

    def __init__(self, base=None, headers=None, accepted_status=None, cache=None, cache_dir=None, cache_memory=None,
                 cookies=None, proxy=None, no_proxy=None, trust_env=True, auth=None, on_challenge=None,
                 challenge_timeout=None, outbox=None, on_request=None, on_response=None, on_redirect=None, on_metrics=None,
                 on_debug=None):
        """``cache``: a Cache to share with other engines; or ``cache_dir`` and/or
        ``cache_memory`` (bytes) for a cache of the engine's own. Without any, nothing is cached.
        ``cookies``: a CookieJar every request of the engine uses (a request's own ``cookies=``
        wins). ``proxy``: an HTTP proxy for every scheme, in curl's syntax
        (``"http://user:pass@host:3128"``; https goes through a CONNECT tunnel, still verified
        against the origin); without one the environment's (``http_proxy``, ``https_proxy``,
        ``all_proxy``, ``no_proxy``, curl's rules) unless ``trust_env=False``. ``no_proxy``: hosts
        reached directly (names, addresses, CIDR networks, ``"*"``), replacing the environment's.
        ``on_challenge``: called with a ``Challenge`` when the origin answers 401 (or a proxy
        407); it returns new credentials (``Bearer(token)`` or ``(user, password)``) and the
        request is sent once more with them, or None to keep the refusal. However many requests
        are refused at once it runs once, on a thread of Courier's (it may block and send
        requests); ``auth`` is what requests send until then, and the refreshed credentials after.
        ``challenge_timeout`` (seconds, default 30): how long refused requests wait for it before
        they get their refusal (what it returns later still serves the requests that follow).
        ``outbox``: an ``Outbox`` where requests sent with ``freeze="kind"`` wait while their host
        cannot be reached (what earlier processes left there is sent now).

        Hooks, for every request of the engine: ``on_request(OutgoingRequest)`` just before it is
        sent (final method, URL, headers and body; ``set_header`` to sign it); ``on_response(Response)``
        for each response that arrived, on Courier's thread: raising or returning False fails the
        request with ``E_REJECTED`` (a 200 carrying an error body); ``on_redirect(status, from, to)``
        returns None to follow, False to refuse (``E_REDIRECT_REFUSED``) or another URL;
        ``on_metrics(Completed)`` when each request that reached the network ends;
        ``on_debug(kind, data)`` sees each exchange's connection lines (``"text"``), request head
        (``"header_out"``) and response head (``"header_in"``) as bytes, the text of the CLI's
        ``-v`` (curl's CURLOPT_DEBUGFUNCTION). A hook's exception is reported through
        ``sys.unraisablehook``."""
        self._handle = None
        #: The engine's CookieJar, or None.
        self.cookies = cookies
        self._futures = {}
        self._streams = {}
        self._network_queues = []
        self._loop = None
        handle = _native.engine_p()
        _check(lib.courier_engine_create(base.encode() if base else None, ctypes.byref(handle)))
        self._handle = handle
        if cache is None and (cache_dir is not None or cache_memory is not None):
            try:
                cache = Cache(cache_dir, cache_memory)
            except BaseException:
                self.close()
                raise
        #: The engine's Cache, or None.
        self.cache = cache
        if cache is not None:
            _check(lib.courier_engine_set_cache(handle, cache._handle))
        for name, value in (headers or {}).items():
            code = lib.courier_engine_add_header(handle, name.encode(), value.encode())
            if code:
                self.close()
                raise _error(code, "header %r" % name)
        if accepted_status is not None:
            low, high = accepted_status
            _check(lib.courier_engine_set_accepted_status(handle, low, high))
        #: The engine's Outbox, or None.
        self.outbox = outbox
        if outbox is not None:
            _check(lib.courier_engine_set_outbox(handle, outbox._handle))
        if on_challenge is not None:
            callback = _auth.challenge_callback(on_challenge, _report_unraisable)
            # Kept for the process's life: a refresh may still be running when the engine goes.
            _auth.keep_alive.append(callback)
            initial = _auth.field_value(auth)
            code = 0
            if challenge_timeout is not None:
                code = lib.courier_engine_set_challenge_timeout(handle, int(challenge_timeout * 1000))
            if not code:
                code = lib.courier_engine_set_authenticator(handle, initial.encode() if initial else None, callback, None)
            if code:
                self.close()
                raise _error(code, "auth")
        elif auth is not None:
            self.close()
            raise CourierError(_native.E_INVALID_ARGUMENT, "an engine's auth= goes with on_challenge= (a request takes auth= alone)")
        if on_request or on_response or on_redirect or on_metrics:
            code = _hooks.install(handle, on_request, on_response, on_redirect, on_metrics, _report_unraisable)
            if code:
                self.close()
                raise _error(code, "hooks")
        if on_debug is not None:
            code = _hooks.install_debug(handle, on_debug, _report_unraisable)
            if code:
                self.close()
                raise _error(code, "on_debug")
        if proxy is not None or no_proxy is not None or not trust_env:
            try:
                _check(lib.courier_engine_set_proxy(handle, _proxy_argument(proxy, trust_env), _text(no_proxy)))
            except BaseException:
                self.close()
                raise

    def close(self):
        """Cancels the engine's requests in flight and releases it."""
        if self._handle:
            if self._loop is not None and not self._loop.is_closed():
                self._loop.remove_reader(lib.courier_engine_fd(self._handle))
            lib.courier_engine_destroy(self._handle)
            self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()

    # Building

    def _build(self, method, url, params=None, headers=None, data=None, json=None, timeout=None,
               timeouts=None, priority=None, follow_redirects=True, max_redirects=None, decompress=True,
               max_body=None, output=None, verify=True, cafile=None, pins=None, cache=None, coalesce=None,
               files=None, content=None, content_length=None, resume=None, resume_attempts=0, expect_continue=None,
               rate_limit=None, retry=None, cookies=None, auth=None, proxy=None, no_proxy=None, freeze=None,
               resolve=None, connect_to=None, ip_family=None, cert=None, auto_referer=False, tls_version=None,
               ciphers=None, tls13_ciphers=None, curves=None, alpn=True, happy_eyeballs=None, continue_timeout=None,
               max_header_bytes=None, max_header_fields=None, proxy_tunnel=None):
        """Options beyond httpx's: ``files=`` a multipart form streamed from disk (see
        ``apply_files``); ``content=`` bytes, a str, a path-backed file (streamed from disk), any
        iterable of bytes, or an async iterable with ``fetch``/``stream_async`` (sent chunked
        unless ``content_length``); ``resume=path`` a resumable
        download (continued from ``<path>.courier-partial`` by any later call, up to
        ``resume_attempts`` times within this one); ``expect_continue`` "auto", "always" or
        "never"; ``rate_limit`` most bytes per second each way; ``retry`` a ``Retry`` (or a count);
        ``cookies`` a CookieJar; ``auth`` ``(user, password)`` for Basic or ``Bearer(token)``;
        ``proxy`` this request's proxy (``""`` for none) and ``no_proxy`` its exceptions, as on
        the engine; ``freeze`` a kind (or True) to send it through the engine's outbox;
        ``resolve`` curl's ``["host:port:addr[,addr]"]``, ``connect_to`` its
        ``["host1:port1:host2:port2"]`` and ``ip_family`` "ipv4" or "ipv6": where the connection
        goes (the request keeps its URL's Host and TLS name). curl's connection options:
        ``tls_version`` ``(minimum, maximum)`` as "1.0" to "1.3" (None for either default);
        ``ciphers`` and ``tls13_ciphers`` (OpenSSL lists, curl's --ciphers and --tls13-ciphers),
        ``curves`` ("X25519:P-256"), ``alpn=False`` (--no-alpn); ``happy_eyeballs`` and
        ``continue_timeout`` in seconds (--happy-eyeballs-timeout-ms, --expect100-timeout);
        ``max_header_bytes``/``max_header_fields``, the response head's bounds (300 KiB and
        10000 by default); ``proxy_tunnel=True`` sends http URLs through a CONNECT tunnel too."""
        if not self._handle:
            raise CourierError(_native.E_MISUSE, "the engine is closed")
        handle = _native.request_p()
        _check(lib.courier_request_create(self._handle, method.encode(), url.encode(), ctypes.byref(handle)))
        try:
            def apply(code):
                _check(code, handle)
            for name, value in (headers or {}).items():
                if value is None:
                    apply(lib.courier_request_remove_header(handle, name.encode()))
                else:
                    apply(lib.courier_request_add_header(handle, name.encode(), str(value).encode()))
            for name, value in (params.items() if hasattr(params, "items") else params or ()):
                apply(lib.courier_request_add_param(handle, str(name).encode(), str(value).encode()))
            if json is not None:
                if isinstance(json, dict) and all(isinstance(v, str) for v in json.values()) and not params:
                    apply(lib.courier_request_set_param_encoding(handle, 1))
                    for name, value in json.items():
                        apply(lib.courier_request_add_param(handle, name.encode(), value.encode()))
                else:
                    import json as _json  # (imported here, not at import time: json, urllib and datetime cost a program that does not use them 3 MiB and 25 ms)
                    data = _json.dumps(json).encode()
                    if not (headers and any(k.lower() == "content-type" for k in headers)):
                        apply(lib.courier_request_add_header(handle, b"Content-Type", b"application/json"))
            if files is not None:
                apply_files(handle, files, data, apply)
                data = None
            if content is not None:
                if isinstance(content, (bytes, bytearray, memoryview, str)):
                    data = content
                elif hasattr(content, "read") and isinstance(getattr(content, "name", None), str) \
                        and _os.path.isfile(content.name) and content.tell() == 0:
                    apply(lib.courier_request_set_body_file(handle, content.name.encode()))
                elif hasattr(content, "__aiter__"):
                    # An async iterable: only from a running event loop (fetch, stream_async).
                    import asyncio
                    producer = AsyncBodyProducer(content, asyncio.get_running_loop(), content_length)
                    producer.handle = handle
                    _bodies[handle.value] = producer
                    apply(lib.courier_request_set_body_callback(handle, producer.callback, producer.length, None))
                else:
                    producer = BodyProducer(content, content_length)
                    _bodies[handle.value] = producer
                    apply(lib.courier_request_set_body_callback(handle, producer.callback, producer.length, None))
            if isinstance(data, (dict, list, tuple)):
                # A form, as httpx sends data=: order and repeated names kept (doseq for lists).
                from urllib.parse import urlencode
                data = urlencode(data, doseq=True)
                if not (headers and any(k.lower() == "content-type" for k in headers)):
                    apply(lib.courier_request_add_header(handle, b"Content-Type", b"application/x-www-form-urlencoded"))
            if data is not None:
                body = data.encode() if isinstance(data, str) else bytes(data)
                apply(lib.courier_request_set_body(handle, body, len(body)))
            if resume is not None:
                apply(lib.courier_request_set_resume_file(handle, _os.fspath(resume).encode(), int(resume_attempts)))
            if expect_continue is not None:
                modes = {"auto": 0, "always": 1, "never": 2}
                if expect_continue not in modes:
                    raise CourierError(_native.E_INVALID_ARGUMENT, "unknown expect_continue %r" % expect_continue)
                apply(lib.courier_request_set_expect_continue(handle, modes[expect_continue]))
            if rate_limit is not None:
                apply(lib.courier_request_set_rate_limit(handle, int(rate_limit), int(rate_limit)))
            if retry is not None:
                _retry.apply_retry(handle, retry, apply)
            if auth is not None:
                if isinstance(auth, Bearer):
                    apply(lib.courier_request_set_bearer(handle, auth.token.encode()))
                elif isinstance(auth, tuple) and len(auth) == 2:
                    apply(lib.courier_request_set_basic_auth(handle, str(auth[0]).encode(), str(auth[1]).encode()))
                else:
                    raise CourierError(_native.E_INVALID_ARGUMENT, "auth is (user, password) or courier.Bearer(token)")
            if proxy is not None or no_proxy is not None:
                apply(lib.courier_request_set_proxy(handle, _text(proxy), _text(no_proxy)))
            if freeze:
                apply(lib.courier_request_freeze(handle, (freeze if isinstance(freeze, str) else "").encode()))
            jar = cookies if cookies is not None else self.cookies
            if jar is not None:
                apply(lib.courier_request_set_cookiejar(handle, jar._handle))
            limits = dict(timeouts or {})
            if timeout is not None:
                limits["total"] = timeout
            for which, seconds in limits.items():
                if which not in TIMEOUTS:
                    raise CourierError(_native.E_INVALID_ARGUMENT, "unknown timeout %r" % which)
                # None: no limit (0); a positive limit is at least 1 ms.
                apply(lib.courier_request_set_timeout(handle, TIMEOUTS[which], 0 if seconds is None else max(1, int(seconds * 1000))))
            if priority is not None:
                if priority not in PRIORITIES:
                    raise CourierError(_native.E_INVALID_ARGUMENT, "unknown priority %r" % priority)
                apply(lib.courier_request_set_priority(handle, PRIORITIES[priority]))
            if not follow_redirects or max_redirects is not None or auto_referer:
                # auto_referer: each redirect hop sends the URL it came from as Referer (curl's -e ';auto').
                follow = (_native.FOLLOW_AUTO_REFERER if auto_referer else 1) if follow_redirects else 0
                apply(lib.courier_request_set_redirects(handle, follow, -1 if max_redirects is None else max_redirects))
            if not decompress:
                apply(lib.courier_request_set_decompress(handle, 0))
            for entry in resolve or ():
                apply(lib.courier_request_add_resolve(handle, entry.encode()))
            for entry in connect_to or ():
                apply(lib.courier_request_add_connect_to(handle, entry.encode()))
            if ip_family is not None:
                if ip_family not in ("any", "ipv4", "ipv6"):
                    raise CourierError(_native.E_INVALID_ARGUMENT, "ip_family is 'any', 'ipv4' or 'ipv6'")
                apply(lib.courier_request_set_ip_family(handle, ("any", "ipv4", "ipv6").index(ip_family)))
            if max_body is not None:
                apply(lib.courier_request_set_max_body(handle, max_body))
            if output is not None:
                apply(lib.courier_request_set_output_file(handle, str(output).encode()))
            if not verify:
                apply(lib.courier_request_set_tls_verify(handle, 0))
            if cafile is not None:
                apply(lib.courier_request_set_tls_ca(handle, str(cafile).encode(), None))
            if cert is not None:
                # httpx's cert=: "both.pem", ("cert.pem", "key.pem") or (cert, key, passphrase).
                parts = (cert,) if isinstance(cert, (str, _os.PathLike)) else tuple(cert)
                certificate, key, passphrase = (list(parts) + [None, None])[:3]
                apply(lib.courier_request_set_tls_client_certificate(handle, _os.fspath(certificate).encode(),
                                                                     _os.fspath(key or certificate).encode(), _text(passphrase)))
            if pins is not None:
                apply(lib.courier_request_set_tls_pins(handle, pins.encode()))
            if tls_version is not None:
                low, high = tls_version
                apply(lib.courier_request_set_tls_versions(handle, _tls_version(low), _tls_version(high)))
            if ciphers is not None or tls13_ciphers is not None:
                apply(lib.courier_request_set_tls_ciphers(handle, _text(ciphers), _text(tls13_ciphers)))
            if curves is not None:
                apply(lib.courier_request_set_tls_curves(handle, curves.encode()))
            if not alpn:
                apply(lib.courier_request_set_tls_alpn(handle, 0))
            if happy_eyeballs is not None:
                apply(lib.courier_request_set_happy_eyeballs(handle, int(happy_eyeballs * 1000)))
            if continue_timeout is not None:
                apply(lib.courier_request_set_continue_timeout(handle, int(continue_timeout * 1000)))
            if max_header_bytes is not None or max_header_fields is not None:
                apply(lib.courier_request_set_header_limits(handle, int(max_header_bytes or 0), int(max_header_fields or 0)))
            if proxy_tunnel is not None:
                apply(lib.courier_request_set_proxy_tunnel(handle, 1 if proxy_tunnel else 0))
            if cache is not None:
                if cache not in CACHE_POLICIES:
                    raise CourierError(_native.E_INVALID_ARGUMENT, "unknown cache policy %r" % cache)
                apply(lib.courier_request_set_cache_policy(handle, CACHE_POLICIES[cache]))
            if coalesce is not None:
                if coalesce not in COALESCING:
                    raise CourierError(_native.E_INVALID_ARGUMENT, "unknown coalescing %r" % coalesce)
                apply(lib.courier_request_set_coalescing(handle, COALESCING[coalesce]))
        except BaseException:
            _free_request(handle)
            raise
        return handle

    # Blocking

    def request(self, method, url, **options):
        """Sends and waits (the GIL is released meanwhile). Raises CourierError (HTTPStatusError for
        an unaccepted status, with ``.response``)."""
        handle = self._build(method, url, **options)
        response_handle = _native.response_p()
        try:
            code = lib.courier_request_perform(handle, ctypes.byref(response_handle))
            response = Response(response_handle) if response_handle.value else None
            if code:
                raise _error(code, lib.courier_request_errmsg(handle).decode(), response)
            return response
        finally:
            _free_request(handle)

    def get(self, url, **options):
        return self.request("GET", url, **options)

    # Composition

    def group(self, requests, fail_fast=False):
        """Sends requests together through the shared queue and waits for all of them (the GIL is
        released meanwhile). ``requests``: ``(method, url)`` or ``(method, url, options)`` items.
        Returns one entry per request, in order: its Response, or its CourierError as a value
        (an HTTPStatusError keeps ``.response``). ``fail_fast`` cancels the others at the first
        failure (they end as CourierError with the cancelled code)."""
        return _compose.group(self, requests, fail_fast)

    def chain(self, steps, on_next=None):
        """Sends requests one after another, each once the previous succeeded. A step is
        ``(method, url[, options])`` or a callable that gets the previous Response and returns a
        step (or None to stop). ``on_next(index, previous, step)`` runs between steps and returns
        the step to send (changed or not) or None to stop. Returns a ChainOutcome: ``results``
        (Response or CourierError per step that ran), ``failed_step``, ``stopped_early``."""
        return _compose.chain(self, steps, on_next)

    # Streaming

    def stream(self, method, url, **options):
        """A StreamedResponse: use ``with engine.stream("GET", url) as r:`` then
        ``for chunk in r.iter_bytes()``. The head is there when the ``with`` block starts; the body
        comes at the reader's pace (a slow reader pauses the socket, memory stays flat)."""
        return self._open_stream(method, url, False, options)

    def stream_async(self, method, url, **options):
        """``async with engine.stream_async("GET", url) as r:`` then ``async for chunk in
        r.aiter_bytes()``; call from a running event loop."""
        return self._open_stream(method, url, True, options)

    def _open_stream(self, method, url, asynchronous, options):
        handle = self._build(method, url, **options)
        streamed = None
        try:
            streamed = StreamedResponse(self, handle, asynchronous=asynchronous)
            _live_streams.add(streamed)
            streamed._start()
        except BaseException:
            _live_streams.discard(streamed)
            _free_request(handle)
            raise
        return streamed

    def download(self, url, path, attempts=3, **options):
        """A resumable download of ``url`` to ``path`` (see ``resume=``); the Response (its
        ``size``) when the file is complete."""
        return self.request("GET", url, resume=path, resume_attempts=attempts, **options)

    def post(self, url, **options):
        return self.request("POST", url, **options)

    def put(self, url, **options):
        return self.request("PUT", url, **options)

    def delete(self, url, **options):
        return self.request("DELETE", url, **options)

    # Callbacks

    def send(self, method, url, callback=None, progress=None, **options):
        """Sends without waiting. ``callback(response, error)`` and ``progress(direction, done,
        total)`` run on Courier's thread (keep them short). With ``cache="cached_then_fresh"`` the
        callback may run twice: first with the stored response (``response.is_preview``). Returns
        a Request (whose ``wait()`` gives the final response)."""
        handle = self._build(method, url, **options)
        request = Request(self, handle, callback, progress)
        with _requests_lock:
            _next_key[0] += 1
            key = _next_key[0]
            _requests[key] = request
        try:
            if progress is not None:
                _check(lib.courier_request_set_progress(handle, _progress_trampoline, key), handle)
            _check(lib.courier_request_send(handle, _done_trampoline, key), handle)
        except BaseException:
            _lookup(key, remove=True)
            _free_request(handle)
            raise
        return request

    # asyncio

    async def fetch(self, method, url, **options):
        """Sends and awaits the response without blocking the event loop: completions are
        collected when the engine's descriptor is readable. Cancelling the task cancels the
        request."""
        import asyncio  # (not at import time: a program without asyncio does not load it)
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            if self._loop is not None and self._futures:
                raise RuntimeError("an Engine serves one event loop at a time")
            self._loop = loop
        handle = self._enqueue(loop, method, url, options)
        future = loop.create_future()
        self._futures[handle.value] = future
        try:
            return await future
        except asyncio.CancelledError:
            lib.courier_request_cancel(handle)
            raise

    async def responses(self, method, url, **options):
        """Every response of one request, as an async iterator: one, or two with
        ``cache="cached_then_fresh"`` (the stored response, then the network's), each with its
        ``phase``. Ends after the final one; raises its error. Leaving early cancels the request."""
        import asyncio  # (not at import time: a program without asyncio does not load it)
        loop = asyncio.get_running_loop()
        handle = self._enqueue(loop, method, url, options)
        queue = asyncio.Queue()
        self._streams[handle.value] = queue
        finished = False
        try:
            while True:
                response, error, final = await queue.get()
                if error is not None:
                    finished = True
                    raise error
                yield response
                if final:
                    finished = True
                    return
        finally:
            if not finished:
                lib.courier_request_cancel(handle)

    def _busy(self):
        """Whether anything waits on the engine's descriptor (its reader stays registered)."""
        return bool(self._futures or self._streams or self._network_queues)

    def _serve(self, loop):
        if self._loop is not loop:
            if self._loop is not None and self._busy():
                raise RuntimeError("an Engine serves one event loop at a time")
            self._loop = loop

    def _enqueue(self, loop, method, url, options):
        self._serve(loop)
        handle = self._build(method, url, **options)
        code = lib.courier_request_enqueue(handle)
        if code:
            message = lib.courier_request_errmsg(handle).decode()
            _free_request(handle)
            raise _error(code, message)
        if not self._busy():
            loop.add_reader(lib.courier_engine_fd(self._handle), self._collect)
        return handle

    async def network_changes(self):
        """Each network change as ``(kind, interface)`` (as ``network_status()``), an async
        iterator read from the engine's descriptor: no Courier thread runs Python code for it.
        Changes from when it starts; leaving the loop stops watching."""
        import asyncio  # (not at import time: a program without asyncio does not load it)
        loop = asyncio.get_running_loop()
        self._serve(loop)
        queue = asyncio.Queue()
        if not self._busy():
            loop.add_reader(lib.courier_engine_fd(self._handle), self._collect)
        if not self._network_queues:
            _check(lib.courier_engine_watch_network(self._handle, 1))
        self._network_queues.append(queue)
        try:
            while True:
                yield await queue.get()
        finally:
            self._network_queues.remove(queue)
            if self._handle and not self._network_queues:
                lib.courier_engine_watch_network(self._handle, 0)
            if self._handle and not self._busy() and not self._loop.is_closed():
                self._loop.remove_reader(lib.courier_engine_fd(self._handle))

    def _collect(self):
        request, response, code = _native.request_p(), _native.response_p(), ctypes.c_int()
        while self._handle and lib.courier_engine_next_done(self._handle, ctypes.byref(request),
                                                            ctypes.byref(response), ctypes.byref(code)) == 0:
            result = Response(response) if response.value else None
            if result is not None and result.is_preview:
                # cached-then-fresh's first response: a stream gets it, fetch() waits for the final.
                stream = self._streams.get(request.value)
                if stream is not None:
                    stream.put_nowait((result, None, False))
                continue
            future = self._futures.pop(request.value, None)
            stream = self._streams.pop(request.value, None)
            message = lib.courier_request_errmsg(request).decode() if code.value else None
            _free_request(request)
            error = _error(code.value, message, result) if code.value else None
            if future is not None and not future.done():
                if error is not None:
                    future.set_exception(error)
                else:
                    future.set_result(result)
            if stream is not None:
                stream.put_nowait((result, error, True))
        kind, interface = ctypes.c_int(), ctypes.create_string_buffer(64)
        while self._handle and lib.courier_engine_next_network(self._handle, ctypes.byref(kind), interface,
                                                               len(interface)) == 0:
            for queue in self._network_queues:
                queue.put_nowait((_offline.KINDS[kind.value], interface.value.decode()))
        if not self._busy() and self._handle:
            self._loop.remove_reader(lib.courier_engine_fd(self._handle))

    async def get_async(self, url, **options):
        return await self.fetch("GET", url, **options)


class DataCache:
    """MKNetworkKit's image cache for any blob (thumbnails, avatars): the bytes of a URL through
    an HTTP cache of their own, kept in a directory and in memory, answered from storage whatever
    their age (``cache_else_load``) and fetched once otherwise. Decoding images is the caller's."""

    def __init__(self, directory, memory=None, disk=None, headers=None):
        self._cache = Cache(directory, memory, disk)
        self._engine = Engine(None, headers=headers, cache=self._cache)

    def get(self, url, **options):
        """The bytes of ``url``."""
        options.setdefault("cache", "cache_else_load")
        return self._engine.get(url, **options).body

    async def get_async(self, url, **options):
        options.setdefault("cache", "cache_else_load")
        return (await self._engine.fetch("GET", url, **options)).body

    @property
    def cache(self):
        return self._cache

    def close(self):
        """Waits for what the disk tier is still writing, then releases the engine and the cache:
        once closed, nothing more is written to the directory (it can be removed at once)."""
        if self._cache._handle:
            self._cache.flush()
        self._engine.close()
        self._cache.close()
