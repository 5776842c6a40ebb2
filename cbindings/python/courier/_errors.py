"""The exception hierarchy: one class per kind of failure, all under CourierError, each carrying
the library's stable numeric code (``code``, with detail, and ``primary``, its family).

Shaped like httpx's so ``except httpx.TimeoutException`` habits carry over::

    CourierError
    ├── TransportError
    │   ├── TimeoutException: PoolTimeout, ConnectTimeout, ReadTimeout, TotalTimeout
    │   ├── NetworkError: ConnectError, ReadError, WriteError
    │   ├── ProtocolError: RemoteProtocolError, LocalProtocolError
    │   ├── ProxyError, TLSError, UnsupportedProtocol
    ├── InvalidURL, TooManyRedirects, RedirectRefused, DecodingError (ResponseFormatError), BodyTooLarge,
    ├── FileError, RangeError, RequestRejected, OutboxError, Cancelled, Closed, UsageError
    └── HTTPStatusError (with ``.response``)

The class is chosen by the code alone, so an error that crossed from C (or was stored in an
outbox) is raised as the same class whatever path it took.
"""

from . import _native
from ._native import lib

__all__ = ["CourierError", "TransportError", "TimeoutException", "PoolTimeout", "ConnectTimeout", "ReadTimeout",
           "TotalTimeout", "NetworkError", "ConnectError", "ReadError", "WriteError", "ProtocolError",
           "RemoteProtocolError", "LocalProtocolError", "ProxyError", "TLSError", "UnsupportedProtocol",
           "InvalidURL", "TooManyRedirects", "RedirectRefused", "DecodingError", "ResponseFormatError",
           "BodyTooLarge", "FileError", "RangeError", "RequestRejected", "OutboxError", "Cancelled",
           "Closed", "UsageError", "HTTPStatusError"]

#: Timeout detail codes (COURIER_E_TIMEOUT | n << 8).
_TIMEOUT_QUEUE, _TIMEOUT_CONNECT, _TIMEOUT_FIRST_BYTE, _TIMEOUT_IDLE, _TIMEOUT_TOTAL = (8 | (n << 8) for n in range(1, 6))


def strerror(code):
    """The library's static text for a result code."""
    return lib.courier_strerror(code).decode()


class CourierError(Exception):
    """A Courier result code: ``code`` (with detail), ``primary`` (its family), the message, and
    ``response`` when one arrived (a 404 still has a body)."""

    def __init__(self, code, message=None, response=None):
        self.code = code
        self.primary = code & 0xFF
        self.response = response
        #: The library's words for the failure, without the code.
        self.message = message or strerror(code)
        super().__init__("%s (code %d)" % (self.message, code))

    @property
    def request(self):
        """The request that failed, as ``(method, url)`` when known (httpx's ``exc.request``)."""
        return getattr(self, "_request", None)


class TransportError(CourierError):
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


class ProtocolError(TransportError):
    """HTTP itself went wrong."""


class RemoteProtocolError(ProtocolError):
    """The server broke HTTP: a malformed or truncated response, an empty reply, a head too large."""


class LocalProtocolError(ProtocolError):
    """The request could not be sent as given (a header with CR, LF or NUL, a bad method)."""


class ProxyError(TransportError):
    """The proxy failed: its name, its connection, or its answer to CONNECT."""


class TLSError(TransportError):
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


class TooManyRedirects(CourierError):
    """More redirects than allowed (``max_redirects``)."""


class RedirectRefused(CourierError):
    """A redirect was refused: to another scheme, from https to http, or by ``on_redirect``."""


class DecodingError(CourierError):
    """The body's content coding was corrupt, unsupported or decoded too large; or its text was
    not valid in its charset (``Response.text``)."""


class ResponseFormatError(DecodingError):
    """The body did not fit what was asked of it: its charset, JSON, an expected media type."""


class BodyTooLarge(CourierError):
    """The body was larger than ``max_body``."""


class FileError(CourierError):
    """A file could not be read (an upload) or written (a download)."""


class RangeError(CourierError):
    """A download could not be resumed where it stopped."""


class RequestRejected(CourierError):
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


_BY_PRIMARY = {
    _native.E_MISUSE: UsageError, _native.E_INVALID_ARGUMENT: UsageError, 3: InvalidURL, 4: UnsupportedProtocol,
    5: LocalProtocolError, 6: ConnectError, 7: ConnectError, 9: ReadError, 10: RemoteProtocolError,
    11: RemoteProtocolError, 12: RemoteProtocolError, 13: RemoteProtocolError, 14: BodyTooLarge,
    15: TooManyRedirects, 16: RedirectRefused, 17: DecodingError, 18: Cancelled, 19: WriteError, 20: FileError,
    21: Closed, 22: TLSError, 23: ResponseFormatError, 24: HTTPStatusError, 25: UsageError, 27: Closed, 28: RangeError,
    29: ProxyError, 30: RequestRejected, 31: OutboxError,
}
_TIMEOUTS = {_TIMEOUT_QUEUE: PoolTimeout, _TIMEOUT_CONNECT: ConnectTimeout, _TIMEOUT_FIRST_BYTE: ReadTimeout,
             _TIMEOUT_IDLE: ReadTimeout, _TIMEOUT_TOTAL: TotalTimeout}


def error_class(code):
    """The exception class for a result code (CourierError for one this version does not know)."""
    if code in (_native.E_DNS_PROXY, _native.E_CONNECT_PROXY):
        return ProxyError
    if code & 0xFF == _native.E_TIMEOUT:
        return _TIMEOUTS.get(code, TimeoutException)
    return _BY_PRIMARY.get(code & 0xFF, CourierError)


def error_for(code, message=None, response=None):
    """The exception for a result code, with the library's message and the response if any."""
    return error_class(code)(code, message, response)
