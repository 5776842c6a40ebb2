"""The exception hierarchy: httpx's, with Courier's own classes placed in it. Every class carries
the library's stable numeric code (``code``, with detail, and ``primary``, its family)::

    HTTPError
    └── CourierError
        ├── RequestError
        │   ├── TransportError
        │   │   ├── TimeoutException: ConnectTimeout, ReadTimeout, WriteTimeout, PoolTimeout, TotalTimeout
        │   │   ├── NetworkError: ConnectError (TLSError), ReadError, WriteError, CloseError
        │   │   ├── ProtocolError: LocalProtocolError, RemoteProtocolError
        │   │   └── ProxyError, UnsupportedProtocol
        │   ├── DecodingError (ResponseFormatError), TooManyRedirects, RedirectRefused,
        │   └── BodyTooLarge, FileError, RangeError, RequestRejected
        ├── HTTPStatusError (with ``.response``)
        └── InvalidURL, OutboxError, Cancelled, Closed, UsageError
    CookieConflict
    StreamError (RuntimeError): StreamConsumed, StreamClosed, ResponseNotRead, RequestNotRead

``exc.request`` is the request that failed (a ``Request``) wherever a client raised it; a TLS
failure (a certificate that does not verify) is a ``ConnectError``, as in httpx. The class is
chosen by the code alone, so an error that crossed from C (or was stored in an outbox) is raised
as the same class whatever path it took.
"""

from . import _native
from ._native import lib

__all__ = ["HTTPError", "RequestError", "CourierError", "TransportError", "TimeoutException", "PoolTimeout",
           "ConnectTimeout", "ReadTimeout", "WriteTimeout", "TotalTimeout", "NetworkError", "ConnectError", "ReadError",
           "WriteError", "CloseError", "ProtocolError", "CookieConflict", "StreamError", "StreamConsumed",
           "StreamClosed", "ResponseNotRead", "RequestNotRead",
           "RemoteProtocolError", "LocalProtocolError", "ProxyError", "TLSError", "UnsupportedProtocol",
           "InvalidURL", "TooManyRedirects", "RedirectRefused", "DecodingError", "ResponseFormatError",
           "BodyTooLarge", "FileError", "RangeError", "RequestRejected", "OutboxError", "Cancelled",
           "Closed", "UsageError", "HTTPStatusError"]

#: Timeout detail codes (COURIER_E_TIMEOUT | n << 8).
_TIMEOUT_QUEUE, _TIMEOUT_CONNECT, _TIMEOUT_FIRST_BYTE, _TIMEOUT_IDLE, _TIMEOUT_TOTAL, _TIMEOUT_SEND = (8 | (n << 8) for n in range(1, 7))


def strerror(code):
    """The library's static text for a result code."""
    return lib.courier_strerror(code).decode()


class HTTPError(Exception):
    """httpx's base of every request failure and of HTTPStatusError (``except HTTPError``)."""

    @property
    def request(self):
        """The request that failed (a ``Request``). As httpx, asking an error that was raised
        outside a request (a bare ``CourierError(code)``) raises RuntimeError."""
        request = getattr(self, "_request", None)
        if request is None:
            raise RuntimeError("The .request property has not been set.")
        if isinstance(request, tuple):
            from ._models import request_of
            request = self._request = request_of(request)
        return request

    @request.setter
    def request(self, request):
        self._request = request


class CourierError(HTTPError):
    """A Courier result code: ``code`` (with detail), ``primary`` (its family), the message, and
    ``response`` when one arrived (a 404 still has a body)."""

    def __init__(self, code, message=None, response=None, *, request=None):
        self.code = code
        self.primary = code & 0xFF
        self.response = response
        self._request = request if request is not None else getattr(response, "_request", None)
        #: The library's words for the failure, without the code.
        self.message = message or strerror(code)
        super().__init__("%s (code %d)" % (self.message, code))


class RequestError(CourierError):
    """The request failed before a response was complete (httpx's RequestError)."""


class TransportError(RequestError):
    """The exchange with the server (or proxy) failed before a complete response."""


class TimeoutException(TransportError):
    """A deadline passed (see ``Timeout``)."""


class PoolTimeout(TimeoutException):
    """The request waited too long for a place in the shared queue (``Timeout(pool=)``)."""


class ConnectTimeout(TimeoutException):
    """The connection (with its TLS handshake) took too long (``Timeout(connect=)``)."""


class ReadTimeout(TimeoutException):
    """The server was silent too long: before the first byte (the request's sending included, so
    ``Timeout(write=)`` ends here too) or between two (``Timeout(read=)``)."""


class WriteTimeout(TimeoutException):
    """Sending the request took too long (httpx's; Courier's silence limit covers both
    directions, and a silence while the body was going out is raised as this)."""


class TotalTimeout(TimeoutException):
    """The whole request took longer than ``Timeout(total=)``."""


class NetworkError(TransportError):
    """The network failed: no connection, or a connection that broke."""


class ConnectError(NetworkError):
    """The name did not resolve, or no address accepted the connection."""


class ReadError(NetworkError):
    """The connection broke while the response was being read (reset)."""


class WriteError(NetworkError):
    """The connection broke while the request was being sent."""


class CloseError(NetworkError):
    """Closing the connection failed (httpx's; Courier closes connections on its own thread and
    never raises it, so it exists for ``except`` clauses)."""


class ProtocolError(TransportError):
    """HTTP itself went wrong."""


class RemoteProtocolError(ProtocolError):
    """The server broke HTTP: a malformed or truncated response, an empty reply, a head too large."""


class LocalProtocolError(ProtocolError):
    """The request could not be sent as given (a header with CR, LF or NUL, a bad method)."""


class ProxyError(TransportError):
    """The proxy failed: its name, its connection, or its answer to CONNECT."""


class TLSError(ConnectError):
    """TLS failed, e.g. the certificate did not verify. ``reason`` says why in words (the
    library's message: what did not verify and OpenSSL's explanation); ``kind`` is the same as a
    stable name to test against: ``"handshake"``, ``"untrusted"``, ``"hostname_mismatch"``,
    ``"expired"``, ``"not_yet_valid"``, ``"pin_mismatch"``, ``"protocol_version"``,
    ``"client_certificate"``, ``"ca_file"``, ``"rejected_by_hook"``, ``"truncated"``, or ``"tls"``
    when the library gave no detail."""

    _KINDS = {1: "handshake", 2: "untrusted", 3: "hostname_mismatch", 4: "expired", 5: "not_yet_valid",
              6: "pin_mismatch", 7: "protocol_version", 8: "client_certificate", 9: "ca_file",
              10: "rejected_by_hook", 11: "truncated"}

    @property
    def reason(self):
        return self.message

    @property
    def kind(self):
        return self._KINDS.get(self.code >> 8, "tls")


class UnsupportedProtocol(TransportError):
    """The URL's scheme is neither http nor https."""


class InvalidURL(CourierError):
    """The URL could not be parsed."""


class TooManyRedirects(RequestError):
    """More redirects than allowed (``max_redirects``)."""


class RedirectRefused(RequestError):
    """A redirect was refused: to another scheme, from https to http, or by ``on_redirect``."""


class DecodingError(RequestError):
    """The body's content coding was corrupt, unsupported or decoded too large; or its text was
    not valid in its charset (``Response.text``)."""


class ResponseFormatError(DecodingError):
    """The body did not fit what was asked of it: its charset, JSON, an expected media type."""


class BodyTooLarge(RequestError):
    """The body was larger than ``max_body``."""


class FileError(RequestError):
    """A file could not be read (an upload) or written (a download)."""


class RangeError(RequestError):
    """A download could not be resumed where it stopped."""


class RequestRejected(RequestError):
    """An engine hook (``on_request``, ``on_response``) failed the request."""


class OutboxError(CourierError):
    """The outbox could not take or keep an entry."""


class Cancelled(CourierError):
    """The request was cancelled."""


class Closed(CourierError):
    """The client or the library was shut down."""


class UsageError(CourierError):
    """The call was wrong: a closed client, an unknown option value."""


class HTTPStatusError(CourierError):
    """The status is not one accepted (``raise_for_status()``, or an Engine's accepted range)."""


class CookieConflict(Exception):
    """``Cookies.get(name)`` found the name set for several domains or paths (httpx's)."""


class StreamError(RuntimeError):
    """A streamed body used the wrong way (httpx's): read twice, after closing, or before
    being read."""


class StreamConsumed(StreamError):
    """The body was already iterated; ``read()`` first to use it again."""


class StreamClosed(StreamError):
    """The response was closed before its body was read."""


class ResponseNotRead(StreamError):
    """``content``, ``text`` or ``json()`` of a streamed response before ``read()``."""


class RequestNotRead(StreamError):
    """``content`` of a request whose body is a stream, before ``read()``."""


_BY_PRIMARY = {
    _native.E_MISUSE: UsageError, _native.E_INVALID_ARGUMENT: UsageError, 3: InvalidURL, 4: UnsupportedProtocol,
    5: LocalProtocolError, 6: ConnectError, 7: ConnectError, 9: ReadError, 10: RemoteProtocolError,
    11: RemoteProtocolError, 12: RemoteProtocolError, 13: RemoteProtocolError, 14: BodyTooLarge,
    15: TooManyRedirects, 16: RedirectRefused, 17: DecodingError, 18: Cancelled, 19: WriteError, 20: FileError,
    21: Closed, 22: TLSError, 23: ResponseFormatError, 24: HTTPStatusError, 25: UsageError, 27: Closed, 28: RangeError,
    29: ProxyError, 30: RequestRejected, 31: OutboxError,
}
_TIMEOUTS = {_TIMEOUT_QUEUE: PoolTimeout, _TIMEOUT_CONNECT: ConnectTimeout, _TIMEOUT_FIRST_BYTE: ReadTimeout,
             _TIMEOUT_IDLE: ReadTimeout, _TIMEOUT_TOTAL: TotalTimeout, _TIMEOUT_SEND: WriteTimeout}


def error_class(code):
    """The exception class for a result code (CourierError for one this version does not know)."""
    if code in (_native.E_DNS_PROXY, _native.E_CONNECT_PROXY):
        return ProxyError
    if code & 0xFF == _native.E_TIMEOUT:
        return _TIMEOUTS.get(code, TimeoutException)
    return _BY_PRIMARY.get(code & 0xFF, CourierError)


def error_for(code, message=None, response=None, request=None):
    """The exception for a result code, with the library's message, the response if any and the
    request that failed when known."""
    return error_class(code)(code, message, response, request=request)
