"""Courier for Python: the C ABI of libcourier through ctypes, standard library only, with an
optional C extension for the hot path of plain requests (``_speedups*.c``, see ``_fast.py``).

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

# Exports only: every name lives in a module of its own (the Engine in _engine.py, the
# httpx-shaped Client in _client.py, ...); this file says which of them are the package's API.

from . import _errors
from ._errors import *  # noqa: F401,F403  (the exception classes)
from ._errors import CourierError, HTTPStatusError, strerror  # noqa: F401
from ._response import PHASES, TIMINGS, Headers, Response  # noqa: F401
from ._client import AsyncClient, Client
from ._timeouts import Timeout
from ._api import delete, get, head, options, patch, post, put, request, stream
from ._streams import StreamedResponse
from ._uploads import FilePart
from ._urls import URL, QueryParams
from ._retry import Retry, RetryReason
from ._compose import ChainOutcome
from ._cookies import CookieJar, Cookies
from ._auth import Bearer, Challenge
from ._auth_flows import Auth, BasicAuth, DigestAuth, FunctionAuth, NetRCAuth
from ._transports import AsyncBaseTransport, AsyncHTTPTransport, BaseTransport, HTTPTransport, MockTransport
from ._limits import Limits
from ._proxy import Proxy
from ._hsts import HSTS
from ._hooks import OutgoingRequest, Completed
from ._offline import (Outbox, Reachability, follow_network, host_reachability, network_status, set_network_override,
                       unwatch_network, watch_network)
from ._queue import Observation, activity, observe_activity, queue_width, set_host_limit, set_queue_width, shutdown, version
from ._cache import Cache
from ._request import PendingRequest
from ._models import Request
from ._engine import Engine
from ._datacache import DataCache
from ._pretty import pretty_json
from ._trust import TrustContext
from ._settings import CACHE_POLICIES, CACHE_STATS, COALESCING, PRIORITIES, TIMEOUTS  # noqa: F401

__all__ = ["Client", "AsyncClient", "Timeout", "Headers", "request", "get", "head", "options", "delete", "post",
           "put", "patch", "stream", "URL", "QueryParams", "codes", "Cookies", "PendingRequest", "Auth", "BasicAuth",
           "DigestAuth", "FunctionAuth", "NetRCAuth", "BaseTransport", "AsyncBaseTransport", "HTTPTransport",
           "AsyncHTTPTransport", "MockTransport", "Limits", "Proxy", "HSTS"] + list(_errors.__all__) + ["Engine", "Cache", "DataCache", "Request", "Response", "StreamedResponse", "FilePart", "Retry", "RetryReason",
           "ChainOutcome", "CookieJar", "Bearer", "Challenge", "OutgoingRequest", "Completed",
           "E_REJECTED", "E_REDIRECT_REFUSED",
           "Outbox", "network_status", "watch_network", "unwatch_network", "set_network_override", "follow_network",
           "host_reachability", "Reachability",
           "E_OUTBOX", "E_OUTBOX_LOCKED", "E_OUTBOX_FULL", "E_OUTBOX_CORRUPT", "E_FILE_CHANGED", "E_INVALIDATED", "E_UNSUPPORTED_ENCODING",
           "E_HEADER_BYTES", "E_HEADER_COUNT", "E_TLS_CIPHER",
           "CourierError", "E_DNS_PROXY", "E_CONNECT_PROXY", "E_CONNECT_NO_ROUTE", "E_PROXY", "E_PROXY_REFUSED", "E_PROXY_HANDSHAKE",
           "E_PROXY_CLOSED", "E_PROXY_UNSUPPORTED", "E_PROXY_SOCKS_CONNECT", "E_PROXY_SOCKS_AUTH", "E_PROXY_SOCKS_HANDSHAKE",
           "HTTPStatusError", "version", "pretty_json", "TrustContext",
           "queue_width", "set_queue_width", "set_host_limit", "activity", "observe_activity", "shutdown"]

__all__ = list(dict.fromkeys(__all__))

#: The proxy's own failures (CourierError.code): its name did not resolve, it could not be
#: reached, it refused the CONNECT tunnel (the status is in the message), its answer to CONNECT
#: was not HTTP, it closed before answering, or its scheme is none Courier speaks; a SOCKS5
#: proxy could not connect to the origin (or the origin's name did not resolve here for
#: socks5://), refused the login, or did not answer in SOCKS5.
from ._native import (E_DNS_PROXY, E_CONNECT_PROXY, E_CONNECT_NO_ROUTE, E_PROXY, E_PROXY_REFUSED, E_PROXY_HANDSHAKE,  # noqa: E402
                      E_PROXY_CLOSED, E_PROXY_UNSUPPORTED, E_PROXY_SOCKS_CONNECT, E_PROXY_SOCKS_AUTH,
                      E_PROXY_SOCKS_HANDSHAKE)
#: An engine hook failed the request (``on_request`` or ``on_response`` raised or returned
#: False), and a redirect ``on_redirect`` refused.
from ._native import E_REJECTED, E_REDIRECT_REFUSED  # noqa: E402
#: The outbox: another process owns it, it is full, an entry was damaged (set aside), a frozen
#: request's file changed since it was frozen.
from ._native import E_OUTBOX, E_OUTBOX_LOCKED, E_OUTBOX_FULL, E_OUTBOX_CORRUPT, E_FILE_CHANGED  # noqa: E402
#: The engine was invalidated (``Engine.invalidate``): it makes no new requests.
from ._native import E_INVALIDATED  # noqa: E402
#: The response's Content-Encoding is none Courier decodes (gzip, deflate, br and zstd are).
from ._native import E_UNSUPPORTED_ENCODING  # noqa: E402
#: The response head beyond ``max_header_bytes`` or ``max_header_fields``; a ``ciphers``,
#: ``tls13_ciphers`` or ``curves`` list that names nothing OpenSSL has.
from ._native import E_HEADER_BYTES, E_HEADER_COUNT, E_TLS_CIPHER  # noqa: E402


def __getattr__(name):
    # httpx's codes, made when first asked (the enum of every status costs a program that never
    # uses it the import of enum and http).
    if name == "codes":
        from ._status_codes import codes
        return codes
    raise AttributeError("module 'courier' has no attribute %r" % (name,))

