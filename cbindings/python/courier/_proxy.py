"""httpx's ``Proxy``: a proxy URL with its own credentials and the TLS settings for an HTTPS
proxy's certificate, as ``Client(proxy=Proxy(...))`` takes it.

Courier speaks http://, https:// (TLS with the proxy, then CONNECT or forwarding inside it),
socks5:// and socks5h:// proxies. What it cannot take over is refused by name: extra fields for
the proxy (``headers=``) and TLS versions for the proxy's connection."""

from ._errors import UsageError
from ._limits import tls_options_of
from ._urls import URL
from . import _native


class Proxy:
    """A proxy: ``url`` (``http://``, ``https://``, ``socks5://``, ``socks5h://``; credentials in
    it or as ``auth=(user, password)``), and ``ssl_context`` for an ``https://`` proxy's
    certificate (its CA certificates, or no verification with ``verify_mode`` CERT_NONE)."""

    def __init__(self, url, *, ssl_context=None, auth=None, headers=None):
        url = URL(url)
        if url.scheme not in ("http", "https", "socks5", "socks5h"):
            raise ValueError("Unknown scheme for proxy URL %r" % (str(url),))
        if headers:
            raise UsageError(_native.E_INVALID_ARGUMENT, "Proxy(headers=): Courier sends no fields of the caller's to a proxy")
        if url.username or url.password:
            auth = (url.username, url.password)
            url = url.copy_with(username=None, password=None)
        self.url = url
        self.auth = auth
        self.headers = {}
        self.ssl_context = ssl_context

    @property
    def raw_auth(self):
        """``(user, password)`` as bytes, or None (httpx's spelling)."""
        return None if self.auth is None else (self.auth[0].encode(), self.auth[1].encode())

    def engine_arguments(self):
        """``(proxy string, proxy_verify)`` for an ``Engine``."""
        text = str(self.url)
        if self.auth is not None:
            from urllib.parse import quote
            scheme, rest = text.split("://", 1)
            text = "%s://%s:%s@%s" % (scheme, quote(self.auth[0], safe=""), quote(self.auth[1], safe=""), rest)
        verify = True
        if self.ssl_context is not None:
            verify, options = tls_options_of(self.ssl_context)
            # (TLS 1.2 at least is Courier's own floor, and ssl.create_default_context's.)
            if options.get("tls_version", (None, None)) not in ((None, None), ("1.2", None)):
                raise UsageError(_native.E_INVALID_ARGUMENT, "Proxy(ssl_context=) with TLS versions other than 1.2 and "
                                 "later: Courier takes only the CA certificates (or CERT_NONE) for the proxy's connection")
        return text, verify

    def __repr__(self):
        auth = ", auth=(%r, '********')" % (self.auth[0],) if self.auth else ""
        return "Proxy('%s'%s)" % (self.url, auth)
