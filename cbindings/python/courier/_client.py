"""httpx's shape over Courier's engine: ``Client`` and ``AsyncClient``.

What differs from ``Engine`` is what an httpx user expects: every status is a response (no
exception unless ``raise_for_status()``), redirects are followed only when asked
(``follow_redirects=True``), cookies persist across the client's requests, ``params`` keep
repeated keys, ``timeout=`` takes a ``Timeout`` (5 s by default, as httpx), and failures carry
the request (``exc.request``). Requests still go through the one queue of the process, shared
with C and Swift code.
"""

import threading

from . import _sending
from ._auth_flows import as_flow, auth_of
from ._client_base import _Base
from ._errors import HTTPError
from ._native import lib
from ._timeouts import _UNSET


class Client(_Base):
    """A client as httpx's: ``with courier.Client(base_url=..., headers=..., timeout=...) as c:``
    then ``c.get(path)``. Blocking calls wait with the GIL released, so threads may share one
    client. Arguments beyond httpx's (``cache_dir``, ``outbox``, hooks) pass to ``Engine``."""

    def __init__(self, *, base_url=None, headers=None, params=None, cookies=None, auth=None, timeout=_UNSET,
                 follow_redirects=False, max_redirects=None, verify=True, cert=None, proxy=None, trust_env=True,
                 http1=True, http2=False, event_hooks=None, transport=None, limits=None, mounts=None, **engine_options):
        super().__init__(base_url, headers, params, cookies, auth, timeout, follow_redirects, max_redirects, verify,
                         cert, proxy, trust_env, engine_options, http1, http2, event_hooks, transport, limits, mounts)
        self._engine = self._make_engine()

    def request(self, method, url, *, params=None, headers=None, cookies=None, auth=_UNSET, timeout=_UNSET,
                follow_redirects=_UNSET, **options):
        """Sends and waits; every status is a Response (``raise_for_status()`` to raise).
        ``content=``, ``data=``, ``files=``, ``json=`` as httpx; Engine's options pass through."""
        self._checked()
        if self._call_sent_by_python(auth):
            return self.send(self._built(method, url, params, headers, cookies, timeout, options), auth=auth,
                             follow_redirects=follow_redirects)
        target = self._url(url, params)
        options = self._options(headers, cookies, auth, timeout, follow_redirects, options, target)
        try:
            response = self._engine.request(method, target, **options)
        except HTTPError as error:
            error._request = (method, target, options["headers"])
            raise
        _mark(response, method, options["headers"])
        return response

    def send(self, request, *, stream=False, auth=_UNSET, follow_redirects=_UNSET):
        """Sends a ``Request`` (``build_request``); with ``stream=True`` the response's body is
        read as it arrives (``iter_bytes()``...; close it, or use ``with``)."""
        self._checked()
        chosen = auth_of(self._settings.auth if auth is _UNSET else auth)
        follow = self._settings.follow_redirects if follow_redirects is _UNSET else follow_redirects
        if self._python_sends(chosen):
            return _sending.send(self, request, stream, as_flow(chosen), follow)
        return self._send_single(request, stream, follow, chosen)

    def _send_single(self, request, stream, follow, auth=None):
        """One request (no hooks, no flow): to the mock transport, or to the library."""
        if self._mock:
            return self._transport.handle_request(request)
        options = self._send_options(request, auth, follow)
        if stream:
            response = self._engine.stream(request.method, str(request.url), **options)
            response.request = request
            # (The head first, as httpx: the response hooks and the caller see its status.)
            return response.__enter__()
        try:
            response = self._engine.request(request.method, str(request.url), **options)
        except HTTPError as error:
            error._request = request
            raise
        response._request = request
        return response

    def stream(self, method, url, *, params=None, headers=None, cookies=None, auth=_UNSET, timeout=_UNSET,
               follow_redirects=_UNSET, **options):
        """``with client.stream("GET", url) as r: for chunk in r.iter_bytes(): ...``"""
        self._checked()
        if self._call_sent_by_python(auth):
            return self.send(self._built(method, url, params, headers, cookies, timeout, options), stream=True, auth=auth,
                             follow_redirects=follow_redirects)
        target = self._url(url, params)
        options = self._options(headers, cookies, auth, timeout, follow_redirects, options, target)
        response = self._engine.stream(method, target, **options)
        response._request = (method, target, options["headers"])
        return response

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

    def _engines_made(self):
        return [self._engine] if getattr(self, "_engine", None) is not None else []

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
                 http1=True, http2=False, event_hooks=None, transport=None, limits=None, mounts=None, **engine_options):
        super().__init__(base_url, headers, params, cookies, auth, timeout, follow_redirects, max_redirects, verify,
                         cert, proxy, trust_env, engine_options, http1, http2, event_hooks, transport, limits, mounts,
                         asynchronous=True)
        self._engines = {}
        self._lock = threading.Lock()

    def _engines_made(self):
        with self._lock:
            return list(self._engines.values())

    def _engine(self, loop=None):
        """The engine of ``loop`` (the running one when not given), made on first use."""
        if loop is None:
            import asyncio  # (not at import time: a program without asyncio does not load it)
            loop = asyncio.get_running_loop()
        engine = self._engines.get(loop)
        if engine is not None:
            return engine
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
        if self._call_sent_by_python(auth):
            return await self.send(self._built(method, url, params, headers, cookies, timeout, options), auth=auth,
                                   follow_redirects=follow_redirects)
        target = self._url(url, params)
        options = self._options(headers, cookies, auth, timeout, follow_redirects, options, target)
        import asyncio  # (not at import time: a program without asyncio does not load it)
        # (Found once and handed to the engine: each ask is a getpid system call in CPython 3.11.)
        loop = asyncio.get_running_loop()
        engine = self._engine(loop)
        handle, future = engine._pending(loop, method, target, options)
        try:
            response = await future
        except HTTPError as error:
            error._request = (method, target, options["headers"])
            raise
        except asyncio.CancelledError:
            lib.courier_request_cancel(handle)
            raise
        _mark(response, method, options["headers"])
        return response

    async def send(self, request, *, stream=False, auth=_UNSET, follow_redirects=_UNSET):
        """As ``Client.send``; a streamed response is used with ``async with`` / ``aiter_*``."""
        self._checked()
        chosen = auth_of(self._settings.auth if auth is _UNSET else auth)
        follow = self._settings.follow_redirects if follow_redirects is _UNSET else follow_redirects
        if self._python_sends(chosen):
            return await _sending.send_async(self, request, stream, as_flow(chosen), follow)
        return await self._send_single(request, stream, follow, chosen)

    async def _send_single(self, request, stream, follow, auth=None):
        if self._mock:
            return await self._transport.handle_async_request(request)
        options = self._send_options(request, auth, follow)
        if stream:
            response = self._engine().stream_async(request.method, str(request.url), **options)
            response.request = request
            return await response.__aenter__()
        try:
            response = await self._engine().fetch(request.method, str(request.url), **options)
        except HTTPError as error:
            error._request = request
            raise
        response._request = request
        return response

    def stream(self, method, url, *, params=None, headers=None, cookies=None, auth=_UNSET, timeout=_UNSET,
               follow_redirects=_UNSET, **options):
        """``async with client.stream("GET", url) as r: async for chunk in r.aiter_bytes(): ...``"""
        self._checked()
        if self._call_sent_by_python(auth):
            return _AwaitedStream(self.send(self._built(method, url, params, headers, cookies, timeout, options), stream=True,
                                            auth=auth, follow_redirects=follow_redirects))
        target = self._url(url, params)
        options = self._options(headers, cookies, auth, timeout, follow_redirects, options, target)
        response = self._engine().stream_async(method, target, **options)
        response._request = (method, target, options["headers"])
        return response

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


def _mark(response, method, headers):
    """Tells the response (and its history) which request it answers: ``response.request`` is
    made from this when asked (most callers never ask)."""
    response._request = (method.upper(), response._url, headers)
    # (The history's hops are made when first asked, and take the request from the response.)


class _AwaitedStream:
    """``async with client.stream(...)`` when the response comes from ``send`` (a coroutine)."""

    def __init__(self, sending):
        self._sending = sending
        self._response = None

    async def __aenter__(self):
        self._response = await self._sending
        enter = getattr(self._response, "__aenter__", None)
        return await enter() if enter is not None else self._response

    async def __aexit__(self, *exc):
        await self._response.aclose()
