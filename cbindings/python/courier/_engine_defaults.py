"""An engine's defaults (``Engine.set_defaults``): what every request it makes afterwards starts
with, set once through the library's engine setters rather than per request. A client keeps its
settings there, so a request that changes nothing carries no setter calls of its own."""

import os

from . import _native
from ._native import lib
from ._settings import TIMEOUTS, _tls_version
from ._support import _check

HTTP_VERSIONS = {"1.1": 1, "2": 2, "2-only": 3}


def apply(handle, timeouts=None, follow_redirects=None, max_redirects=None, http_version=None, verify=None, cert=None,
          tls_version=None):
    """``timeouts``: seconds by name (None: no limit); ``verify``: True, False or a CA file (trusted
    alone, as httpx's);
    ``cert``: httpx's forms; ``tls_version``: (minimum, maximum) as "1.2"/"1.3" or None."""
    for which, seconds in (timeouts or {}).items():
        if which not in TIMEOUTS:
            raise ValueError("unknown timeout %r" % (which,))
        _check(lib.courier_engine_set_timeout(handle, TIMEOUTS[which], 0 if seconds is None else max(1, int(seconds * 1000))))
    if follow_redirects is not None or max_redirects is not None:
        _check(lib.courier_engine_set_redirects(handle, 0 if follow_redirects is False else 1,
                                                -1 if max_redirects is None else max_redirects))
    if http_version is not None:
        if http_version not in HTTP_VERSIONS:
            raise ValueError("http_version must be '1.1', '2' or '2-only', not %r" % (http_version,))
        _check(lib.courier_engine_set_http_version(handle, HTTP_VERSIONS[http_version]))
    if isinstance(verify, (str, os.PathLike)):
        path = os.fspath(verify).encode()
        # (A directory is OpenSSL's hashed CA directory, as SSL_CERT_DIR names one.) httpx's
        # verify=path trusts that bundle alone, not the system's as well.
        _check(lib.courier_engine_set_tls_ca(handle, None, path) if os.path.isdir(verify)
               else lib.courier_engine_set_tls_ca(handle, path, None))
        _check(lib.courier_engine_set_tls_system_roots(handle, 0))
    elif verify is not None:
        _check(lib.courier_engine_set_tls_verify(handle, 1 if verify else 0))
    if cert is not None:
        parts = (cert,) if isinstance(cert, (str, os.PathLike)) else tuple(cert)
        certificate, key, passphrase = (list(parts) + [None, None])[:3]
        _check(lib.courier_engine_set_tls_client_certificate(
            handle, os.fspath(certificate).encode(), os.fspath(key).encode() if key else None,
            passphrase.encode() if passphrase else None))
    if tls_version is not None:
        low, high = tls_version
        _check(lib.courier_engine_set_tls_versions(handle, _tls_version(low), _tls_version(high)))
