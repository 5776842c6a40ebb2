"""``Engine``: requests to one API (a base URL, default headers, accepted statuses, a cache, TLS and
proxy settings), sent blocking, through asyncio, or with callbacks."""

import ctypes
import os

from . import _auth, _compose, _hooks, _native, _offline, _trust
from ._build import _RequestBuilding
from ._engine_control import _EngineControl
from ._cache import Cache
from ._errors import CourierError
from ._fast import speedups
from ._native import lib
from ._request import (PendingRequest, _done_trampoline, _free_request, _live_streams, _lookup, _next_key, _progress_trampoline, _requests,
                       _requests_lock)
from ._response import Headers, Response
from ._settings import _proxy_argument
from ._streams import StreamedResponse
from ._support import _check, _error, _report_unraisable, _text

#: The options a request sent by the C extension may carry (more go through ``_build``).
_PLAIN = frozenset(("headers", "cookies"))


class Engine(_RequestBuilding, _EngineControl):
    """Requests to one API: a base URL (``"http://127.0.0.1:8080/v1"``), default headers, the
    statuses that count as success. Use as a context manager, or call ``close()``."""

    def __init__(self, base=None, headers=None, accepted_status=None, cache=None, cache_dir=None, cache_memory=None,
                 cookies=None, proxy=None, no_proxy=None, trust_env=True, auth=None, on_challenge=None,
                 challenge_timeout=None, outbox=None, on_request=None, on_response=None, on_redirect=None, on_metrics=None,
                 on_debug=None, unix_socket=None, local_address=None, trust=None, pin_mismatch=None, pin_mode=None,
                 proxy_verify=True, hsts=None, mock=None):
        """``cache``: a Cache to share with other engines; or ``cache_dir`` and/or
        ``cache_memory`` (bytes) for a cache of the engine's own. Without any, nothing is cached.
        ``cookies``: a CookieJar every request of the engine uses (a request's own ``cookies=``
        wins). ``proxy``: a proxy for every scheme, in curl's syntax
        (``"http://user:pass@host:3128"``: https goes through a CONNECT tunnel, still verified
        against the origin; ``"socks5h://user:pass@host:1080"``: everything through SOCKS5, names
        resolved by the proxy, or here with ``socks5://``; ``"https://host"``: TLS with the proxy too,
        its certificate checked by ``proxy_verify``: True, False or a CA file, as curl's
        --proxy-cacert and --proxy-insecure); without one the environment's (``http_proxy``, ``https_proxy``,
        ``all_proxy``, ``no_proxy``, curl's rules) unless ``trust_env=False``. ``no_proxy``: hosts
        reached directly (names, addresses, CIDR networks, ``"*"``), replacing the environment's.
        ``mock``: ``handler(method, target, headers, body) -> (status, headers, body)`` answers the
        engine's requests inside the process, under the library's whole stack (tests without a
        server; httpx's MockTransport is the client's way). ``hsts``: an ``HSTS`` store: http:// to the hosts it knows goes https://, and
        Strict-Transport-Security is noted in it. ``on_challenge``: called with a ``Challenge`` when the origin answers 401 (or a proxy
        407); it returns new credentials (``Bearer(token)`` or ``(user, password)``) and the
        request is sent once more with them, or None to keep the refusal. However many requests
        are refused at once it runs once, on a thread of Courier's (it may block and send
        requests); ``auth`` is what requests send until then, and the refreshed credentials after.
        ``challenge_timeout`` (seconds, default 30): how long refused requests wait for it before
        they get their refusal (what it returns later still serves the requests that follow).
        ``outbox``: an ``Outbox`` where requests sent with ``freeze="kind"`` wait while their host
        cannot be reached (what earlier processes left there is sent now). ``unix_socket``: every
        connection goes to this Unix domain socket instead of over TCP (the Docker Engine's
        ``"/var/run/docker.sock"``; a leading ``"\\0"`` names one in Linux's abstract namespace);
        URLs still name the host, no name is resolved and no proxy is used. ``local_address``:
        where TCP connections come from (httpx's; curl's --interface syntax: an address of this
        machine, an interface name, ``"if!NAME"``). ``trust(context) -> bool``: the application's
        own trust decision during each TLS handshake, after Courier's (a ``TrustContext``: host,
        port, Courier's ``error`` or None, ``pin_matched``, the DER ``chain``); ``pin_mismatch(host,
        port)`` hears of pin mismatches, the only consequence with ``pin_mode="report_only"``.

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
        #: The event loop watching the engine's descriptor (see ``_watch``).
        self._watching = None
        #: Whether a request asked for cached-then-fresh (its preview response is told apart).
        self._previewing = False
        #: The engine's CookieJar, or None.
        self.cookies = cookies
        self._futures = {}
        # courier_engine_next_done's out-parameters, made once: _collect runs for every response.
        done = (_native.request_p(), _native.response_p(), ctypes.c_int())
        self._done_out = done + (tuple(ctypes.byref(value) for value in done),)
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
        try:
            if proxy is not None or no_proxy is not None or not trust_env:
                _check(lib.courier_engine_set_proxy(handle, _proxy_argument(proxy, trust_env), _text(no_proxy)))
            if mock is not None:
                from . import _mock
                #: The mock's ctypes callback, alive as long as the engine.
                self._mock = _mock.install(handle, mock, _report_unraisable)
            if hsts is not None:
                _check(lib.courier_engine_set_hsts(handle, hsts._handle))
                #: Kept alive as long as the engine.
                self._hsts = hsts
            if proxy_verify is not True:
                _check(lib.courier_engine_set_proxy_tls(handle, None if proxy_verify is False else os.fsencode(proxy_verify),
                                                        None, int(proxy_verify is not False)))
            if unix_socket is not None:
                path = os.fsencode(unix_socket)
                abstract = path.startswith(b"\0")
                code = lib.courier_engine_set_unix_socket(handle, path[1:] if abstract else path, int(abstract))
                if code:
                    raise _error(code, "unix_socket %r: a socket's path is 1 to 107 bytes" % (unix_socket,))
            #: The trust hooks' ctypes callbacks, alive as long as the engine.
            self._trust_callbacks = _trust.install(handle, trust, pin_mismatch, pin_mode)
            if local_address is not None:
                code = lib.courier_engine_set_local_address(handle, _text(local_address))
                if code:
                    raise _error(code, "local_address %r: an address of this machine or an interface" % (local_address,))
        except BaseException:
            self.close()
            raise

    def close(self):
        """Cancels the engine's requests in flight and releases it."""
        if self._handle:
            self._unwatch()
            lib.courier_engine_destroy(self._handle)
            self._handle = None

    def set_defaults(self, **defaults):
        """What every request of the engine starts with from now on: ``timeouts`` (a dict of
        seconds by name, None for no limit), ``follow_redirects``, ``max_redirects``,
        ``http_version``, ``verify`` (True, False or a CA file), ``cert``, ``tls_version``. A
        request's own arguments still win."""
        from . import _engine_defaults
        if not self._handle:
            raise CourierError(_native.E_MISUSE, "the engine is closed")
        _engine_defaults.apply(self._handle, **defaults)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()

    # Building

    def request(self, method, url, **options):
        """Sends and waits (the GIL is released meanwhile). Raises CourierError (HTTPStatusError for
        an unaccepted status, with ``.response``)."""
        plain = self._plain(options)
        if plain is not None:
            outcome = speedups.perform(self._handle.value, method, url, *plain)
            if type(outcome) is tuple:
                raise _error(*outcome)
            return outcome
        handle = self._build(method, url, **options)
        response_handle = _native.response_p()
        try:
            code = lib.courier_request_perform(handle, ctypes.byref(response_handle))
            response = Response._of(response_handle) if response_handle.value else None
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
        a PendingRequest (whose ``wait()`` gives the final response)."""
        handle = self._build(method, url, **options)
        request = PendingRequest(self, handle, callback, progress)
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
        handle, future = self._pending(asyncio.get_running_loop(), method, url, options)
        try:
            return await future
        except asyncio.CancelledError:
            lib.courier_request_cancel(handle)
            raise

    def _pending(self, loop, method, url, options):
        """A request sent for ``loop`` (the running one, which the caller has: asking asyncio
        for it costs a getpid system call): its address, to cancel it, and the future its
        response or error resolves."""
        handle = self._enqueue(loop, method, url, options)
        future = loop.create_future()
        self._futures[handle] = future
        return handle, future

    async def responses(self, method, url, **options):
        """Every response of one request, as an async iterator: one, or two with
        ``cache="cached_then_fresh"`` or ``"cached_then_network"`` (the stored response, then the
        network's; the second asks the network even when the stored response is fresh), each with its
        ``phase``. Ends after the final one; raises its error. Leaving early cancels the request."""
        import asyncio  # (not at import time: a program without asyncio does not load it)
        loop = asyncio.get_running_loop()
        handle = self._enqueue(loop, method, url, options)
        queue = asyncio.Queue()
        self._streams[handle] = queue
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
        """Whether anything waits on the engine's descriptor."""
        return bool(self._futures or self._streams or self._network_queues)

    def _watch(self, loop):
        """Has ``loop`` watch the engine's descriptor, and keep watching it while the engine
        serves that loop: registering it per request cost two epoll_ctl calls each."""
        if self._watching is loop:
            return
        self._unwatch()
        loop.add_reader(lib.courier_engine_fd(self._handle), self._collect)
        self._watching = loop

    def _unwatch(self):
        watching, self._watching = self._watching, None
        if watching is not None and not watching.is_closed() and self._handle:
            watching.remove_reader(lib.courier_engine_fd(self._handle))

    def _serve(self, loop):
        if self._loop is not loop:
            if self._loop is not None and self._busy():
                raise RuntimeError("an Engine serves one event loop at a time")
            self._loop = loop

    def _enqueue(self, loop, method, url, options):
        """The address of a request sent for ``loop`` to collect."""
        self._serve(loop)
        plain = self._plain(options)
        if plain is not None:
            handle = speedups.submit(self._handle.value, method, url, *plain)
            if type(handle) is tuple:
                raise _error(*handle)
        else:
            handle = self._submit_built(method, url, options)
        if self._watching is not loop:
            self._watch(loop)
        return handle

    def _plain(self, options):
        """The C extension's arguments for a plain request (headers and cookies only): (name,
        value) pairs or None, and the cookie jar's address or None. None when the extension does
        not send the request (not there, other options, a closed engine)."""
        if speedups is None or not options.keys() <= _PLAIN or not self._handle:
            return None
        headers = options.get("headers")
        if type(headers) is Headers:
            pairs = headers._pairs  # (every field in order, repeats kept: as multi_items(), not copied)
        else:
            pairs = headers.items() if headers else None
        jar = options.get("cookies")
        if jar is None:
            jar = self.cookies
        # (A closed jar has no handle: no jar, as the ctypes path sends it.)
        return pairs, jar._handle.value if jar is not None and jar._handle else None

    def _submit_built(self, method, url, options):
        if options.get("cache") in ("cached_then_fresh", "cached_then_network"):
            # (Only then can a first, preview response come before the final one.)
            self._previewing = True
        handle = self._build(method, url, **options)
        code = lib.courier_request_enqueue(handle)
        if code:
            message = lib.courier_request_errmsg(handle).decode()
            _free_request(handle)
            raise _error(code, message)
        return handle.value

    async def network_changes(self):
        """Each network change as ``(kind, interface)`` (as ``network_status()``), an async
        iterator read from the engine's descriptor: no Courier thread runs Python code for it.
        Changes from when it starts; leaving the loop stops watching."""
        import asyncio  # (not at import time: a program without asyncio does not load it)
        loop = asyncio.get_running_loop()
        self._serve(loop)
        queue = asyncio.Queue()
        self._watch(loop)
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

    def _collect(self):
        if speedups is not None and not self._previewing and not self._streams and self._handle:
            leftovers = []
            try:
                speedups.collect(self._handle.value, self._futures, leftovers)
            finally:
                for request, response, code in leftovers:
                    self._finish(request, response, code)
        else:
            request, response, code, out = self._done_out
            while self._handle and lib.courier_engine_next_done(self._handle, *out) == 0:
                self._finish(request.value, response.value, code.value)
                if not self._futures and not self._streams:
                    # Nothing else can be finishing: skip the call that would find the queue empty
                    # (were something there, the descriptor would still be readable and bring us back).
                    break
        if not self._network_queues:
            return
        kind, interface = ctypes.c_int(), ctypes.create_string_buffer(64)
        while self._handle and lib.courier_engine_next_network(self._handle, ctypes.byref(kind), interface,
                                                               len(interface)) == 0:
            for queue in self._network_queues:
                queue.put_nowait((_offline.KINDS[kind.value], interface.value.decode()))

    def _finish(self, request, response, code):
        """One finished request (addresses, the library's code): its future or stream told."""
        result = Response._of(response) if response else None
        if result is not None and self._previewing and result.is_preview:
            # cached-then-fresh's first response: a stream gets it, fetch() waits for the final.
            stream = self._streams.get(request)
            if stream is not None:
                stream.put_nowait((result, None, False))
            return
        future = self._futures.pop(request, None)
        stream = self._streams.pop(request, None)
        message = lib.courier_request_errmsg(request).decode() if code else None
        _free_request(request)
        error = _error(code, message, result) if code else None
        if future is not None and not future.done():
            if error is not None:
                future.set_exception(error)
            else:
                future.set_result(result)
        if stream is not None:
            stream.put_nowait((result, error, True))

    async def get_async(self, url, **options):
        return await self.fetch("GET", url, **options)
