"""How an engine turns a call's arguments into a configured C request handle."""

import ctypes
import os as _os

from . import _consumers, _native, _retry
from ._auth import Bearer
from ._auth_flows import DigestAuth
from ._errors import CourierError, error_for
from ._native import lib
from ._request import _bodies, _free_request, _hook_progress, _progress_hooks
from ._settings import CACHE_POLICIES, COALESCING, PRIORITIES, TIMEOUTS, _tls_version
from ._uploads import AsyncBodyProducer, BodyProducer, apply_files
from ._support import _check, _text


class _RequestBuilding:
    """``Engine``'s request building: every keyword argument a call accepts, onto a C handle."""

    def _build(self, method, url, headers=None, cookies=None, **options):
        """A configured request handle for ``method`` and ``url``: ``headers``, ``cookies`` (a
        CookieJar; the engine's by default) and ``_configure_request``'s options. Most calls
        carry only headers and cookies, so they are applied here and the long tail is walked
        only when there is more."""
        if not self._handle:
            raise CourierError(_native.E_MISUSE, "the engine is closed")
        handle = _native.request_p()
        _check(lib.courier_request_create(self._handle, method.encode(), url.encode(), ctypes.byref(handle)))
        try:
            if headers:
                for name, value in (headers.multi_items() if hasattr(headers, "multi_items") else headers.items()):
                    if value is None:
                        _check(lib.courier_request_remove_header(handle, name.encode()), handle)
                    else:
                        _check(lib.courier_request_add_header(handle, name.encode(), str(value).encode()), handle)
            jar = cookies if cookies is not None else self.cookies
            if jar is not None:
                _check(lib.courier_request_set_cookiejar(handle, jar._handle), handle)
            if options:
                self._configure_request(handle, headers, **options)
        except BaseException:
            _free_request(handle)
            raise
        return handle

    def _configure_request(self, handle, headers=None, params=None, data=None, json=None, timeout=None,
                           timeouts=None, priority=None, follow_redirects=None, max_redirects=None, decompress=True,
                           max_body=None, output=None, verify=True, cafile=None, system_roots=None, pins=None, cache=None, coalesce=None,
                           files=None, content=None, content_length=None, resume=None, resume_attempts=0, expect_continue=None,
                           rate_limit=None, retry=None, auth=None, proxy=None, no_proxy=None, freeze=None,
                           resolve=None, connect_to=None, ip_family=None, cert=None, auto_referer=False, tls_version=None,
                           ciphers=None, tls13_ciphers=None, curves=None, alpn=True, happy_eyeballs=None, continue_timeout=None,
                           max_header_bytes=None, max_header_fields=None, proxy_tunnel=None, http_version=None,
                           http2_ping_interval=None, time_condition=None, progress=None, on_data=None,
                           destination=None):
        """Options beyond httpx's: ``priority`` "very_low" to "very_high" ("normal" by default;
        "low" and "very_low" are background work, whose uploads pause while requests of higher
        priority run: see courier.h); ``files=`` a multipart form streamed from disk (see
        ``apply_files``); ``content=`` bytes, a str, a path-backed file (streamed from disk), any
        iterable of bytes, or an async iterable with ``fetch``/``stream_async`` (sent chunked
        unless ``content_length``); ``resume=path`` a resumable
        download (continued from ``<path>.courier-partial`` by any later call, up to
        ``resume_attempts`` times within this one); ``expect_continue`` "auto", "always" or
        "never"; ``rate_limit`` most bytes per second each way; ``retry`` a ``Retry`` (or a count);
        ``auth`` ``(user, password)`` for Basic or ``Bearer(token)``;
        ``proxy`` this request's proxy (``""`` for none) and ``no_proxy`` its exceptions, as on
        the engine; ``freeze`` a kind (or True) to send it through the engine's outbox;
        ``resolve`` curl's ``["host:port:addr[,addr]"]``, ``connect_to`` its
        ``["host1:port1:host2:port2"]`` and ``ip_family`` "ipv4" or "ipv6": where the connection
        goes (the request keeps its URL's Host and TLS name). ``cafile`` adds trusted roots
        (curl's --cacert); ``system_roots=False`` trusts none of the system's beside them (httpx's
        ``verify=path``). curl's connection options:
        ``tls_version`` ``(minimum, maximum)`` as "1.0" to "1.3" (None for either default);
        ``ciphers`` and ``tls13_ciphers`` (OpenSSL lists, curl's --ciphers and --tls13-ciphers),
        ``curves`` ("X25519:P-256"), ``alpn=False`` (--no-alpn); ``happy_eyeballs`` and
        ``continue_timeout`` in seconds (--happy-eyeballs-timeout-ms, --expect100-timeout);
        ``max_header_bytes``/``max_header_fields``, the response head's bounds (300 KiB and
        10000 by default); ``proxy_tunnel=True`` sends http URLs through a CONNECT tunnel too;
        ``http_version`` "1.1", "2" (HTTP/2 where an https server agrees: the library's default) or
        "2-only" (h2c with prior knowledge on http://, curl's --http2-prior-knowledge);
        ``http2_ping_interval`` seconds between PINGs on the HTTP/2 connections it opens (none by
        default; an unanswered one within 5 s fails the connection); ``time_condition``
        ``("modified_since" | "unmodified_since" | "last_modified", when)``, ``when`` a datetime
        (naive: UTC) or epoch seconds: curl's -z (the server answers 304, or 412, when the
        condition does not hold); ``progress(direction, done, total)`` on any call ("upload" or
        "download", bytes so far, the total or None), on Courier's thread (keep it short);
        ``on_data`` a callable (or a list) given every piece of the body as it arrives, beside
        ``output=`` if set (a consumer that raises fails the request with ``E_FILE_WRITE``; the
        body is then not kept in the response); ``destination(response) -> path or None`` picks
        the file from the final response head (staged, moved into place on success)."""
        def apply(code):
            _check(code, handle)
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
            elif isinstance(auth, DigestAuth):
                # (Answered by the library itself: the 401 never comes back up to Python.)
                apply(lib.courier_request_set_digest_auth(handle, *auth.login))
            else:
                raise CourierError(_native.E_INVALID_ARGUMENT,
                                   "auth is (user, password), courier.Bearer(token) or courier.DigestAuth(user, password)")
        if proxy is not None or no_proxy is not None:
            apply(lib.courier_request_set_proxy(handle, _text(proxy), _text(no_proxy)))
        if freeze:
            apply(lib.courier_request_freeze(handle, (freeze if isinstance(freeze, str) else "").encode()))
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
        if follow_redirects is not None or max_redirects is not None or auto_referer:
            # auto_referer: each redirect hop sends the URL it came from as Referer (curl's -e ';auto').
            # (None: the engine's rule, which follows unless a client said otherwise.)
            follow = (_native.FOLLOW_AUTO_REFERER if auto_referer else 1) if follow_redirects is not False else 0
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
        if system_roots is not None:
            apply(lib.courier_request_set_tls_system_roots(handle, 1 if system_roots else 0))
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
        if http_version is not None:
            versions = {"1.1": 1, "2": 2, "2-only": 3}
            if http_version not in versions:
                raise ValueError("http_version must be '1.1', '2' or '2-only', not %r" % (http_version,))
            apply(lib.courier_request_set_http_version(handle, versions[http_version]))
        if http2_ping_interval is not None:
            apply(lib.courier_request_set_http2_ping_interval(handle, int(http2_ping_interval * 1000)))
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
        if on_data is not None or destination is not None:
            _consumers.apply(handle, on_data, destination, apply)
        if progress is not None:
            _progress_hooks[handle.value] = progress
            apply(lib.courier_request_set_progress(handle, _hook_progress, handle.value))
        if time_condition is not None:
            apply(lib.courier_request_set_time_condition(handle, *_time_condition(time_condition)))
        if coalesce is not None:
            if coalesce not in COALESCING:
                raise CourierError(_native.E_INVALID_ARGUMENT, "unknown coalescing %r" % coalesce)
            apply(lib.courier_request_set_coalescing(handle, COALESCING[coalesce]))

    # Blocking


_TIME_CONDITIONS = {"modified_since": 1, "unmodified_since": 2, "last_modified": 3}


def _time_condition(condition):
    """``(kind, when)`` as courier_request_set_time_condition's two arguments."""
    kind, when = condition
    if kind not in _TIME_CONDITIONS:
        raise error_for(_native.E_INVALID_ARGUMENT, "time_condition %r: %s" % (kind, ", ".join(_TIME_CONDITIONS)))
    if hasattr(when, "timestamp"):
        import datetime
        if when.tzinfo is None:
            when = when.replace(tzinfo=datetime.timezone.utc)
        when = when.timestamp()
    when = int(when)
    if not -(1 << 63) <= when < (1 << 63):
        raise error_for(_native.E_INVALID_ARGUMENT, "time_condition: %d is outside the years 0000 to 9999" % when)
    return _TIME_CONDITIONS[kind], when
