"""httpx's shape over Courier's engine: ``Client``, ``AsyncClient``, ``Timeout`` and the
module-level ``get``/``post``/... functions.

What differs from ``Engine`` is what an httpx user expects: every status is a response (no
exception unless ``raise_for_status()``), redirects are followed only when asked
(``follow_redirects=True``), cookies persist across the client's requests, ``params`` keep
repeated keys, and ``timeout=`` takes a ``Timeout``. Requests still go through the one queue of
the process, shared with C and Swift code.
"""

import threading

from ._cookies import CookieJar
from ._errors import UsageError
from . import _native

_UNSET = object()


class Timeout:
    """Deadlines in seconds; None means no limit.

    ``Timeout(5.0)`` sets connect, read, write and pool to 5 s; keywords override one each:
    ``Timeout(10.0, connect=60.0)``. ``connect``: name, TCP and TLS. ``read``: to the first
    response byte once the request is out, then between two. ``write``: between two writes of
    the request (see ``as_limits`` for how the two share Courier's silence limit). ``pool``: the
    wait for a place in the shared queue. ``total``: the whole request (not in httpx). Without a
    ``Timeout`` Courier's defaults hold: 30 s connect, 60 s read, no others."""

    __slots__ = ("connect", "read", "write", "pool", "total")

    def __init__(self, timeout=_UNSET, *, connect=_UNSET, read=_UNSET, write=_UNSET, pool=_UNSET, total=None):
        if isinstance(timeout, Timeout):
            base = (timeout.connect, timeout.read, timeout.write, timeout.pool)
            total = timeout.total if total is None else total
        elif timeout is _UNSET:
            if _UNSET in (connect, read, write, pool):
                raise UsageError(_native.E_INVALID_ARGUMENT, "Timeout needs a default (Timeout(5.0, connect=...)) "
                                 "or all four of connect, read, write and pool")
            base = (None, None, None, None)
        else:
            base = (timeout,) * 4
        given = (connect, read, write, pool)
        self.connect, self.read, self.write, self.pool = (b if g is _UNSET else g for g, b in zip(given, base))
        self.total = total
        for name in self.__slots__:
            value = getattr(self, name)
            if value is not None and (not isinstance(value, (int, float)) or value < 0):
                raise UsageError(_native.E_INVALID_ARGUMENT, "timeout %s=%r is not a number of seconds" % (name, value))

    def as_limits(self):
        """Courier's per-request limits (``Engine``'s ``timeouts=``): seconds, None for none.
        Courier has one silence limit for both directions (``idle``: between two writes while
        the body goes out, between two reads while the response comes in) and a first-byte
        limit that starts once the request is out: ``read`` is the first-byte limit, and the
        silence limit is the larger of ``read`` and ``write`` (neither direction is cut shorter
        than asked; None, no limit, when either is None)."""
        silence = None if self.read is None or self.write is None else max(self.read, self.write)
        return {"connect": self.connect, "first_byte": self.read, "idle": silence, "queue": self.pool,
                "total": self.total}

    def __eq__(self, other):
        return isinstance(other, Timeout) and all(getattr(self, n) == getattr(other, n) for n in self.__slots__)

    def __repr__(self):
        return "Timeout(connect=%r, read=%r, write=%r, pool=%r, total=%r)" % tuple(getattr(self, n) for n in self.__slots__)


def _limits(timeout):
    """``timeout=`` as Engine limits: a Timeout, a number (every phase), None (no limit at all)."""
    if timeout is _UNSET:
        return None
    if not isinstance(timeout, Timeout):
        timeout = Timeout(timeout)
    return timeout.as_limits()


def _pairs(params):
    """Query parameters as (name, value) pairs: a dict (a list value repeats its key), a list of
    pairs, or a query string; httpx's forms."""
    if params is None:
        return []
    if isinstance(params, str):
        from urllib.parse import parse_qsl
        return parse_qsl(params.lstrip("?"), keep_blank_values=True)
    items = params.items() if hasattr(params, "items") else params
    pairs = []
    for name, value in items:
        values = value if isinstance(value, (list, tuple)) else [value]
        for one in values:
            pairs.append((str(name), "" if one is None else ("true" if one is True else "false" if one is False else str(one))))
    return pairs


class _Settings:
    """What a client applies to each request, merged with the request's own arguments."""

    def __init__(self, headers, params, cookies, auth, timeout, follow_redirects, max_redirects, verify, cert):
        self.headers = dict(headers or {})
        self.params = _pairs(params)
        self.cookies = cookies
        self.auth = auth
        self.timeout = timeout
        self.follow_redirects = follow_redirects
        self.max_redirects = max_redirects
        self.verify = verify
        self.cert = cert

    def options(self, headers, cookies, auth, timeout, follow_redirects, extra):
        options = dict(extra)
        merged = dict(self.headers)
        for name, value in (headers or {}).items():
            for key in [k for k in merged if k.lower() == name.lower()]:
                del merged[key]
            merged[name] = value
        if isinstance(cookies, dict) and cookies:
            merged["Cookie"] = "; ".join("%s=%s" % item for item in cookies.items())
            cookies = None
        options["headers"] = merged
        jar = cookies if cookies is not None else self.cookies
        if jar is not None:
            options["cookies"] = jar
        chosen = self.auth if auth is _UNSET else auth
        if chosen is not None:
            options["auth"] = chosen
        limits = _limits(self.timeout if timeout is _UNSET else timeout)
        if limits is not None:
            options["timeouts"] = limits
        options["follow_redirects"] = self.follow_redirects if follow_redirects is _UNSET else follow_redirects
        if self.max_redirects is not None:
            options["max_redirects"] = self.max_redirects
        verify = options.pop("verify", self.verify)
        if isinstance(verify, str):
            options["cafile"] = verify
        elif not verify:
            options["verify"] = False
        cert = options.pop("cert", self.cert)
        if cert is not None:
            options["cert"] = cert
        return options


class _Base:
    def __init__(self, base_url, headers, params, cookies, auth, timeout, follow_redirects, max_redirects, verify,
                 cert, proxy, trust_env, engine_options, http1=True, http2=False):
        if not http1 and not http2:
            raise ValueError("http1 and http2 cannot both be False")
        # httpx's switches: HTTP/1.1 only unless http2=True (then h2 where the server agrees by
        # ALPN; with http1=False, HTTP/2 or nothing).
        self._http_version = ("2" if http1 else "2-only") if http2 else "1.1"
        jar = cookies if isinstance(cookies, CookieJar) else CookieJar()
        initial = cookies if isinstance(cookies, dict) else None
        #: The client's CookieJar: what responses set is sent back, as a browser would.
        self.cookies = jar
        self._settings = _Settings(headers, params, jar, auth, timeout, follow_redirects, max_redirects, verify, cert)
        if initial:
            self._settings.headers["Cookie"] = "; ".join("%s=%s" % item for item in initial.items())
        self._engine_arguments = dict(base=str(base_url) if base_url else None, accepted_status=(0, 1000),
                                      proxy=proxy, trust_env=trust_env, **engine_options)
        self._closed = False

    def _make_engine(self):
        from . import Engine
        return Engine(**self._engine_arguments)

    def _checked(self):
        if self._closed:
            raise UsageError(_native.E_MISUSE, "the client is closed")

    def _options(self, headers, cookies, auth, timeout, follow_redirects, extra):
        extra.setdefault("http_version", self._http_version)
        return self._settings.options(headers, cookies, auth, timeout, follow_redirects, extra)

    def _url(self, url, params):
        """The URL with the client's and the call's parameters appended in order (repeated keys
        kept, as httpx sends them)."""
        pairs = self._settings.params + _pairs(params)
        url = str(url)
        if not pairs:
            return url
        from urllib.parse import urlencode
        base, _, fragment = url.partition("#")
        joined = base + ("&" if "?" in base else "?") + urlencode(pairs)
        return joined + ("#" + fragment if fragment else "")

    @property
    def is_closed(self):
        return self._closed


class Client(_Base):
    """A client as httpx's: ``with courier.Client(base_url=..., headers=..., timeout=...) as c:``
    then ``c.get(path)``. Blocking calls wait with the GIL released, so threads may share one
    client. Arguments beyond httpx's (``cache_dir``, ``outbox``, hooks) pass to ``Engine``."""

    def __init__(self, *, base_url=None, headers=None, params=None, cookies=None, auth=None, timeout=_UNSET,
                 follow_redirects=False, max_redirects=None, verify=True, cert=None, proxy=None, trust_env=True,
                 http1=True, http2=False, **engine_options):
        super().__init__(base_url, headers, params, cookies, auth, timeout, follow_redirects, max_redirects, verify,
                         cert, proxy, trust_env, engine_options, http1, http2)
        self._engine = self._make_engine()

    def request(self, method, url, *, params=None, headers=None, cookies=None, auth=_UNSET, timeout=_UNSET,
                follow_redirects=_UNSET, **options):
        """Sends and waits; every status is a Response (``raise_for_status()`` to raise).
        ``content=``, ``data=``, ``files=``, ``json=`` as httpx; Engine's options pass through."""
        self._checked()
        options = self._options(headers, cookies, auth, timeout, follow_redirects, options)
        response = self._engine.request(method, self._url(url, params), **options)
        _mark(response, method, url)
        return response

    def stream(self, method, url, *, params=None, headers=None, cookies=None, auth=_UNSET, timeout=_UNSET,
               follow_redirects=_UNSET, **options):
        """``with client.stream("GET", url) as r: for chunk in r.iter_bytes(): ...``"""
        self._checked()
        options = self._options(headers, cookies, auth, timeout, follow_redirects, options)
        return self._engine.stream(method, self._url(url, params), **options)

    def get(self, url, **options):
        return self.request("GET", url, **options)

    def head(self, url, **options):
        return self.request("HEAD", url, **options)

    def options(self, url, **options):
        return self.request("OPTIONS", url, **options)

    def delete(self, url, **options):
        return self.request("DELETE", url, **options)

    def post(self, url, **options):
        return self.request("POST", url, **options)

    def put(self, url, **options):
        return self.request("PUT", url, **options)

    def patch(self, url, **options):
        return self.request("PATCH", url, **options)

    def close(self):
        """Cancels what is in flight and releases the engine (the shared pool stays warm)."""
        if not self._closed:
            self._closed = True
            self._engine.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class AsyncClient(_Base):
    """``async with courier.AsyncClient() as c: r = await c.get(url)``. Works on any running loop,
    and on several at once (one per thread): each loop gets an engine of its own, whose
    descriptor it watches, so no Courier thread runs Python code. Cancelling the awaiting task
    cancels the request (``asyncio.CancelledError`` as usual)."""

    def __init__(self, *, base_url=None, headers=None, params=None, cookies=None, auth=None, timeout=_UNSET,
                 follow_redirects=False, max_redirects=None, verify=True, cert=None, proxy=None, trust_env=True,
                 http1=True, http2=False, **engine_options):
        super().__init__(base_url, headers, params, cookies, auth, timeout, follow_redirects, max_redirects, verify,
                         cert, proxy, trust_env, engine_options, http1, http2)
        self._engines = {}
        self._lock = threading.Lock()

    def _engine(self):
        import asyncio  # (not at import time: a program without asyncio does not load it)
        loop = asyncio.get_running_loop()
        with self._lock:
            for other in [key for key in self._engines if key.is_closed()]:
                self._engines.pop(other).close()
            engine = self._engines.get(loop)
            if engine is None:
                engine = self._engines[loop] = self._make_engine()
            return engine

    async def request(self, method, url, *, params=None, headers=None, cookies=None, auth=_UNSET, timeout=_UNSET,
                      follow_redirects=_UNSET, **options):
        self._checked()
        options = self._options(headers, cookies, auth, timeout, follow_redirects, options)
        response = await self._engine().fetch(method, self._url(url, params), **options)
        _mark(response, method, url)
        return response

    def stream(self, method, url, *, params=None, headers=None, cookies=None, auth=_UNSET, timeout=_UNSET,
               follow_redirects=_UNSET, **options):
        """``async with client.stream("GET", url) as r: async for chunk in r.aiter_bytes(): ...``"""
        self._checked()
        options = self._options(headers, cookies, auth, timeout, follow_redirects, options)
        return self._engine().stream_async(method, self._url(url, params), **options)

    async def get(self, url, **options):
        return await self.request("GET", url, **options)

    async def head(self, url, **options):
        return await self.request("HEAD", url, **options)

    async def options(self, url, **options):
        return await self.request("OPTIONS", url, **options)

    async def delete(self, url, **options):
        return await self.request("DELETE", url, **options)

    async def post(self, url, **options):
        return await self.request("POST", url, **options)

    async def put(self, url, **options):
        return await self.request("PUT", url, **options)

    async def patch(self, url, **options):
        return await self.request("PATCH", url, **options)

    async def aclose(self):
        if not self._closed:
            self._closed = True
            with self._lock:
                engines, self._engines = list(self._engines.values()), {}
            for engine in engines:
                engine.close()

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        await self.aclose()


def _mark(response, method, url):
    """Tells the response (and its history) which request it answers."""
    response.request = (method.upper(), response.url)
    for hop in response.history:
        hop.request = (method.upper(), hop.url)


def request(method, url, **options):
    """One request with a client of its own (httpx's ``httpx.request``); the process's pool keeps
    connections across calls. Client arguments (``timeout``, ``follow_redirects``, ``verify``...)
    and request arguments both go here."""
    client_keys = ("base_url", "proxy", "trust_env", "verify", "cert", "max_redirects")
    client_options = {key: options.pop(key) for key in client_keys if key in options}
    with Client(**client_options) as client:
        return client.request(method, url, **options)


def get(url, **options):
    return request("GET", url, **options)


def head(url, **options):
    return request("HEAD", url, **options)


def options(url, **options_):
    return request("OPTIONS", url, **options_)


def delete(url, **options):
    return request("DELETE", url, **options)


def post(url, **options):
    return request("POST", url, **options)


def put(url, **options):
    return request("PUT", url, **options)


def patch(url, **options):
    return request("PATCH", url, **options)
