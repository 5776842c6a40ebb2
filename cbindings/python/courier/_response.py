"""Responses as Python values: ``Headers`` (a case-insensitive multi-value mapping) and
``Response``, copied out of the library so the C handle is released at once.

``Response`` answers to httpx's names (``status_code``, ``reason_phrase``, ``content``, ``text``,
``json()``, ``elapsed``, ``history``, ``is_success``, ``raise_for_status()``) and to the older
ones this package had first (``status``, ``body``, ``header()``).
"""

import atexit
import ctypes
import types

from . import _native
from ._native import lib
from . import _retry
from ._errors import ResponseFormatError, error_for
from ._headers import Headers, _pairs_of, _trailers_of, charset_of  # noqa: F401  (re-exported)
from ._iterators import BodyIterators

TIMINGS = {"queue": 1, "dns": 2, "connect": 3, "tls": 4, "first_byte": 5, "total": 6}
#: Where a response came from (``Response.phase``), by COURIER_PHASE_* value.
PHASES = ["fresh", "cached", "cached_stale", "not_modified", "stale_on_error", "generated"]


class Response(BodyIterators):
    """A finished response.

    ``phase`` says where it came from: "fresh" (the origin, now), "cached" (storage, fresh),
    "cached_stale", "not_modified" (the origin confirmed the stored response), "stale_on_error"
    (the origin failed and the stored response stood in) or "generated" (a 504 the cache made).
    ``from_cache`` is true for the phases answered from storage without the origin
    ("cached", "cached_stale", "stale_on_error"); ``is_preview`` marks the first of the two
    responses of ``cache="cached_then_fresh"``."""

    def __init__(self, status_code, *, headers=None, content=None, text=None, html=None, json=None, stream=None,
                 request=None, history=None, extensions=None):
        """httpx's constructor: a response made in Python (a ``MockTransport`` handler's answer, a
        test's). ``content`` bytes (or an iterable of them), ``text``, ``html`` or ``json`` set
        the body and its Content-Type, and Content-Length follows."""
        body, media = _body_of(content, text, html, json, stream)
        self.status = int(status_code)
        self.body = body
        self.size = len(body)
        self._request = request
        self._url = str(request.url) if request is not None else ""
        self._url_object = None
        self.headers = Headers(headers or ())
        if media and "content-type" not in self.headers:
            self.headers["Content-Type"] = media
        if "content-length" not in self.headers and "transfer-encoding" not in self.headers and (body or self.status >= 200):
            self.headers["Content-Length"] = str(len(body))
        from ._status_codes import codes
        self.reason_phrase = codes.get_reason_phrase(self.status)
        self.http_version = "HTTP/1.1"
        self.trailers = Headers()
        self.timings = dict.fromkeys(TIMINGS, 0.0)
        self.reused_connection = False
        self.bytes_sent, self.bytes_received, self.remote_address = 0, len(body), ""
        self.tls_resumed = self.tls_verify_result = None
        self.phase, self.is_preview, self.cache_status = "fresh", False, ""
        self.retries, self.retry_reasons = 0, []
        self.history = list(history or [])
        self.extensions = dict(extensions or {})
        self._text = None

    @classmethod
    def _of(cls, handle, owned=True, request=None, keeper=None):
        """The response a library handle holds. The status, body and URL are copied out at once;
        the rest (headers, timings, TLS and cache facts, history...) the first time it is asked,
        from the handle, which the response keeps until it goes (freed then when ``owned``). A
        borrowed handle (a hook's, gone when the hook returns) is read whole at once, unless
        ``keeper`` (the response whose handle owns it) keeps it alive."""
        self = cls.__new__(cls)
        self.status = lib.courier_response_status(handle)
        length = ctypes.c_size_t()
        pointer = lib.courier_response_body(handle, ctypes.byref(length))
        self.body = ctypes.string_at(pointer, length.value) if length.value else b""
        self._url = lib.courier_response_url(handle).decode()
        self._url_object = None
        self._request = request
        self._text = None
        # The handle's address: the caller's ctypes object may be reused for the next response.
        handle = handle if isinstance(handle, int) else handle.value
        self._handle = handle
        self._owned = owned
        self._keeper = keeper
        if owned:
            self._key = handle
            _live_handles[handle] = handle
        elif keeper is None:
            for name in _LAZY:
                getattr(self, name)
            self._handle = None
        return self

    def _readable_handle(self):
        """The handle to read a field from; RuntimeError once the library's copy is gone (the
        interpreter is exiting: every response's handle is freed then)."""
        owner = self._keeper if self._keeper is not None else self
        handle = owner._handle
        if handle is None or (owner._owned and owner._key not in _live_handles):
            raise RuntimeError("the response's data left with the library (the interpreter is exiting)")
        return self._handle

    def __del__(self):
        handle = getattr(self, "_handle", None)
        if handle is not None and self._owned and _live_handles.pop(self._key, None) is not None:
            _release(handle)

    #: httpx's per-response extensions (none from the library).
    extensions = types.MappingProxyType({})

    # httpx's names

    @property
    def status_code(self):
        return self.status

    @property
    def content(self):
        """The body bytes (decoded from gzip, deflate, br or zstd)."""
        return self.body

    @property
    def elapsed(self):
        """From leaving the queue to the last byte, as a ``datetime.timedelta``."""
        import datetime  # (here: see the json import in courier._build)
        return datetime.timedelta(seconds=max(0.0, self.timings["total"]))

    #: The body, for the reading methods (``iter_bytes``, ``iter_lines``...): always read.
    _content = property(lambda self: self.body)

    @property
    def num_bytes_downloaded(self):
        return len(self.body)

    @property
    def next_request(self):
        """For a redirect that was not followed: the request that would follow it (httpx's),
        else None."""
        location = self.headers.get("location")
        if self.status not in (301, 302, 303, 307, 308) or not location or self.request is None:
            return None
        from ._models import Request
        method, target = self.request.method, self.url.join(location)
        if (self.status == 303 and method != "HEAD") or (self.status in (301, 302) and method == "POST"):
            return Request("GET", target, headers=_without_body_fields(self.request.headers))
        return Request(method, target, headers=self.request.headers, **self.request._body)

    @property
    def cookies(self):
        """The cookies this response sets (its Set-Cookie fields), as ``Cookies``."""
        from ._cookies import Cookies, from_set_cookie
        jar = Cookies()
        jar._replace(from_set_cookie(self.headers.get_list("set-cookie"), self.url.host))
        return jar

    @property
    def text(self):
        """The body as text in ``encoding``. Bytes that are not valid there raise DecodingError
        (nothing is replaced silently); ``decode(errors="replace")`` asks for replacement."""
        if self._text is None:
            self._text = self.decode()
        return self._text

    def decode(self, errors="strict"):
        """The body as text in ``encoding`` with Python's ``errors`` handling."""
        encoding = self.encoding
        try:
            import codecs
            codecs.lookup(encoding)
        except LookupError:
            raise ResponseFormatError(_native.E_RESPONSE_FORMAT, "unknown charset %r" % encoding, self) from None
        try:
            return self.body.decode(encoding, errors=errors)
        except UnicodeDecodeError as error:
            raise ResponseFormatError(_native.E_RESPONSE_FORMAT, "the body is not valid %s at byte %d" % (encoding, error.start),
                                self) from error

    def json(self, **options):
        """The body parsed as JSON (``json.loads`` options pass through)."""
        import json
        return json.loads(self.body, **options)

    @property
    def is_informational(self):
        return 100 <= self.status < 200

    @property
    def is_success(self):
        return 200 <= self.status < 300

    @property
    def is_redirect(self):
        return 300 <= self.status < 400

    @property
    def is_client_error(self):
        return 400 <= self.status < 500

    @property
    def is_server_error(self):
        return 500 <= self.status < 600

    @property
    def is_error(self):
        return 400 <= self.status < 600

    def raise_for_status(self):
        """Raises HTTPStatusError (with this response) unless the status is 2xx; returns the
        response, so ``r.raise_for_status().json()``."""
        if not self.is_success:
            kind = {1: "Informational", 3: "Redirect", 4: "Client error", 5: "Server error"}.get(self.status // 100, "Status")
            raise error_for(_native.E_HTTP_STATUS, "%s '%d %s' for url '%s'" % (kind, self.status, self.reason_phrase, self._url),
                            self)
        return self

    # A finished response has nothing to release; httpx's closing methods are here so code
    # written for streamed responses runs on it too.

    def close(self):
        pass

    async def aclose(self):
        pass

    @property
    def is_closed(self):
        return True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        pass

    # Courier's own

    @property
    def from_cache(self):
        return self.phase in ("cached", "cached_stale", "stale_on_error")

    def header(self, name, default=None):
        """The first value of a header (case-insensitive)."""
        values = self.headers.get_list(name)
        return values[0] if values else default

    @property
    def media_type(self):
        """The Content-Type's ``type/subtype``, lower-cased, without parameters ("" for none)."""
        return self.header("Content-Type", "").split(";", 1)[0].strip().lower()

    def validate(self, statuses=range(200, 300), content_types=None):
        """Opt-in checks, as Swift's ``validating(statuses:contentTypes:)``: the status in
        ``statuses`` (None: any) and, when given, the media type one of ``content_types`` (exact,
        or a whole type as ``"text/*"``). Returns the response, so ``r.validate().json()``; raises
        HTTPStatusError, or CourierError(E_RESPONSE_FORMAT) for an unexpected type."""
        if statuses is not None and self.status not in statuses:
            raise error_for(_native.E_HTTP_STATUS, "status %d is not one accepted" % self.status, self)
        if content_types is not None:
            media = self.media_type

            def matches(pattern):
                pattern = pattern.lower()
                if pattern == "*/*":
                    return bool(media)
                if pattern.endswith("/*"):
                    return media.startswith(pattern[:-1])
                return media == pattern
            if not any(matches(p) for p in content_types):
                raise error_for(_native.E_RESPONSE_FORMAT, "unexpected Content-Type %s (expected %s)"
                                % (media or "(none)", " or ".join(content_types)), self)
        return self

    def __repr__(self):
        return "<Response [%d %s]>" % (self.status, self.reason_phrase) if self.reason_phrase else "<Response [%d]>" % self.status


def _body_of(content, text, html, json, stream):
    """The body bytes and media type of httpx's Response(...) arguments."""
    if content is not None:
        if isinstance(content, str):
            return content.encode("utf-8"), None
        if isinstance(content, (bytes, bytearray, memoryview)):
            return bytes(content), None
        return b"".join(bytes(piece) for piece in content), None
    if text is not None:
        return text.encode("utf-8"), "text/plain; charset=utf-8"
    if html is not None:
        return html.encode("utf-8"), "text/html; charset=utf-8"
    if json is not None:
        import json as json_module
        return json_module.dumps(json, ensure_ascii=False, separators=(",", ":")).encode("utf-8"), "application/json"
    if stream is not None:
        return b"".join(bytes(piece) for piece in stream), None
    return b"", None


def _without_body_fields(headers):
    """A redirect that becomes a GET drops the body's fields."""
    kept = Headers(headers)
    for name in ("content-length", "content-type", "transfer-encoding"):
        if name in kept:
            del kept[name]
    return kept


#: Frees a response's handle as its Response goes: the C extension's function when it is
#: loaded (``_fast`` sets it; a ctypes call costs ten times as much), else ctypes'.
_release = lib.courier_response_free

#: Handles of the responses alive, by address: freed when their response goes, and all at once
#: when the interpreter exits (before the library can go; a response still referenced then
#: would otherwise never be freed).
_live_handles = {}


@atexit.register
def _free_live_handles():
    while _live_handles:
        _, handle = _live_handles.popitem()
        lib.courier_response_free(handle)


class _Lazy:
    """A response field read from its handle the first time it is asked, then kept as a plain
    attribute (a response built in Python sets them directly)."""

    __slots__ = ("read", "name")

    def __init__(self, read):
        self.read = read

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, response, owner=None):
        if response is None:
            return self
        value = self.read(response, response._readable_handle())
        response.__dict__[self.name] = value
        return value


def _tls(response, handle):
    resumed, verify = ctypes.c_int(), ctypes.c_long()
    https = lib.courier_response_tls(handle, ctypes.byref(resumed), ctypes.byref(verify)) == 0
    return (bool(resumed.value) if https else None, verify.value if https else None)


def _history(response, handle):
    hops = []
    for index in range(max(0, lib.courier_response_redirect_count(handle))):
        hop = lib.courier_response_history(handle, index)
        if hop:
            made = Response._of(hop, owned=False, request=None, keeper=response)
            request = response._request
            # A hop answers the request as sent to its own URL.
            made._request = (request[0], made._url, request[2]) if isinstance(request, tuple) else request
            hops.append(made)
    return hops


def _version(handle):
    version = lib.courier_response_http_version(handle)
    return ("HTTP/2" if version == 20 else "HTTP/%d.%d" % divmod(version, 10)) if version else ""


_FIELDS = {
    #: The fields, in the order they came (a mutable ``Headers``).
    "headers": lambda r, h: Headers(_pairs_of(h)),
    #: Body bytes after decoding, also when the body went to a file (``output=``).
    "size": lambda r, h: lib.courier_response_body_size(h),
    #: The status line's reason phrase ("" when the server sent none).
    "reason_phrase": lambda r, h: (lib.courier_response_reason(h) or b"").decode("latin-1"),
    #: "HTTP/1.1", "HTTP/1.0" or "HTTP/2".
    "http_version": lambda r, h: _version(h),
    "trailers": lambda r, h: Headers(_trailers_of(h)),
    "timings": lambda r, h: {key: lib.courier_response_timing(h, which) for key, which in TIMINGS.items()},
    "reused_connection": lambda r, h: bool(lib.courier_response_reused_connection(h)),
    #: Request bytes written (head and body, every exchange) and body bytes read off the wire.
    "bytes_sent": lambda r, h: lib.courier_response_bytes_sent(h),
    "bytes_received": lambda r, h: lib.courier_response_bytes_received(h),
    #: "ip:port" of the connection that answered ("" when none did: a cached response).
    "remote_address": lambda r, h: (lib.courier_response_remote_address(h) or b"").decode(),
    #: For https: whether the handshake resumed a session, and OpenSSL's verification result
    #: (0 is X509_V_OK); None for http.
    "tls_resumed": lambda r, h: _tls(r, h)[0],
    "tls_verify_result": lambda r, h: _tls(r, h)[1],
    "phase": lambda r, h: PHASES[lib.courier_response_cache_phase(h)],
    "is_preview": lambda r, h: bool(lib.courier_response_is_preview(h)),
    "cache_status": lambda r, h: lib.courier_response_cache_status(h).decode(),
    "retries": lambda r, h: lib.courier_response_retries(h),
    "retry_reasons": lambda r, h: _retry.reasons_of(h) if lib.courier_response_retries(h) > 0 else [],
    #: The responses that redirected here, oldest first (each with its status, headers, URL).
    "history": _history,
}
_LAZY = list(_FIELDS)
for _name, _read in _FIELDS.items():
    _field = _Lazy(_read)
    _field.__set_name__(Response, _name)
    setattr(Response, _name, _field)
del _name, _read, _field
