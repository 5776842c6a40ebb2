"""Responses read piece by piece with back-pressure (``StreamedResponse``); the request side
(multipart forms, bodies from iterators) is in _uploads.py.

A response body is not read through callbacks on Courier's loop thread: it is pulled with ``courier_request_read`` (no GIL held while it
waits), out of a bounded buffer in the library that pauses the socket when full, so a slow reader
slows the server through TCP instead of filling memory, and no Python code runs per socket read.
"""

import ctypes
import threading

from . import _native
from ._native import lib
from ._errors import StreamClosed
from ._iterators import BodyIterators
from ._response import Headers, _pairs_of


def _bytes_allocator():
    """CPython's way to fill a new bytes object in place (the C API's PyBytes_FromStringAndSize
    with NULL, then its buffer): a full read lands straight in the piece handed to the caller,
    not in a buffer copied out afterwards (one copy of every body byte fewer). None elsewhere
    (another implementation, or no pythonapi): pieces are then copied out of one buffer."""
    import sys
    api = getattr(ctypes, "pythonapi", None)
    if api is None or sys.implementation.name != "cpython":
        return None
    new = api.PyBytes_FromStringAndSize
    new.restype = ctypes.py_object
    new.argtypes = [ctypes.c_void_p, ctypes.c_ssize_t]
    address = api.PyBytes_AsString
    address.restype = ctypes.c_void_p
    address.argtypes = [ctypes.py_object]
    return new, address


_new_bytes = _bytes_allocator()


#: What courier_request_read answers when nothing has come yet (never seen by users).
_AGAIN = object()


class StreamedResponse(BodyIterators):
    """A response whose body is read as it arrives: ``status``, ``headers`` and ``header()`` as soon
    as the head is in, then ``iter_bytes()`` (or ``async for chunk in aiter_bytes()`` for
    ``Engine.stream_async``). Use as a context manager; leaving early cancels the request.

    The body waits in Courier's buffer (``WAITING`` bytes; beyond it the socket is paused) and is
    pulled by ``courier_request_read`` into this object's buffer: a blocking call without the GIL
    for ``iter_bytes()``; for ``aiter_bytes()`` a call that never waits, and when nothing is there,
    an await on the request's readable descriptor, which asyncio's own poller watches: Courier's
    thread then never runs Python (a callback there would take the GIL once per wait, stalling
    the socket reads behind the coroutines that hold it), and for the rest of a long plain-HTTP
    body the descriptor watches the socket itself, which the read then takes straight into the
    piece (one copy of each byte, as ``iter_bytes()``)."""

    #: The most one piece holds (this object's buffer for courier_request_read).
    BUFFER = 256 << 10
    #: Bytes that wait in the library before the socket is paused (a reader slower than the
    #: network pauses and resumes the transfer once per that many bytes, each a thread hand-off).
    #: iter_bytes() waits in courier_request_read, which lends the piece being made to the socket
    #: reads, and both readers read a long body's socket themselves: what waits in the library
    #: hardly matters then (1 GiB: the same CPU with 256 KiB as with 1 MiB, and 1.4 MiB less
    #: resident for iter_bytes(); aiter_bytes() the same CPU and peak either way).
    WAITING = 256 << 10

    def __init__(self, engine, handle, asynchronous):
        from ._request import _free_request
        self._free = _free_request
        self._handle = handle
        self._head = threading.Event()
        self._finished = False
        self.status = 0
        self.headers = Headers()
        self.reason_phrase = ""
        self.error = None
        self._closed = False
        if asynchronous:
            import asyncio
            self._loop = asyncio.get_running_loop()
            self._head_future = self._loop.create_future()
            self._ready = asyncio.Event()
        else:
            self._loop = self._head_future = self._ready = None
        # Only where pieces cannot be made in place (see _bytes_allocator).
        self._buffer = ctypes.create_string_buffer(self.BUFFER) if _new_bytes is None else None
        self._got = ctypes.c_size_t()
        self._got_ref = ctypes.byref(self._got)
        self._on_head_c = _native.HEAD_FN(self._on_head)
        self._done = _native.DONE_FN(self._on_done)
        self._fd = -1
        engine_check = lib.courier_request_set_body_reader(handle, self.WAITING, _native.READABLE_FN(), None)
        if engine_check == 0 and asynchronous:
            fd = ctypes.c_int(-1)
            engine_check = lib.courier_request_get_readable_fd(handle, ctypes.byref(fd))
            if engine_check == 0:
                self._fd = fd.value
                self._loop.add_reader(self._fd, self._on_readable)
        if engine_check == 0:
            engine_check = lib.courier_request_set_head_callback(handle, self._on_head_c, None)
        if engine_check:
            self._unwatch()
            raise RuntimeError(lib.courier_request_errmsg(handle).decode())

    def _start(self):
        code = lib.courier_request_send(self._handle, self._done, None)
        if code:
            from ._support import _error
            raise _error(code, lib.courier_request_errmsg(self._handle).decode())

    # Loop thread

    def _on_head(self, _request, head, _user):
        self.status = lib.courier_response_status(head)
        self.headers = Headers(_pairs_of(head))
        self.reason_phrase = (lib.courier_response_reason(head) or b"").decode("latin-1")
        self._url = lib.courier_response_url(head).decode()
        self._url_object = None
        self._head.set()
        if self._loop is not None:
            self._tell_loop()

    def _tell_loop(self):
        """Wakes the event loop for the head or the end; a loop already closed (its program
        left the stream behind) has nobody to tell."""
        try:
            self._loop.call_soon_threadsafe(self._resolve_head)
        except RuntimeError:
            pass

    def _resolve_head(self):
        if not self._head_future.done():
            self._head_future.set_result(None)

    # Event loop thread

    def _on_readable(self):
        # (The next read clears the descriptor.)
        self._ready.set()

    def _unwatch(self):
        """Stops watching the descriptor (the request owns it: before the request is freed)."""
        if self._fd >= 0:
            self._loop.remove_reader(self._fd)
            self._fd = -1

    def _on_done(self, _request, response, code, _user):
        from ._support import _error
        message = lib.courier_request_errmsg(self._handle).decode() if code else None
        if response:
            if not self.status:
                self.status = lib.courier_response_status(response)
                self.headers = Headers(_pairs_of(response))
            lib.courier_response_free(response)
        from ._request import _live_streams
        _live_streams.discard(self)
        # The body of an unaccepted status streamed like any other: not an error here.
        self.error = _error(code, message) if code and code != _native.E_HTTP_STATUS else None
        self._head.set()
        if self._loop is not None:
            self._tell_loop()

    # Reader

    def header(self, name, default=None):
        values = self.headers.get_list(name)
        return values[0] if values else default

    def _read(self, timeout_ms):
        """The next piece, None at the end, or _AGAIN; raises the request's error."""
        # Into a new bytes object nobody else has seen yet where CPython allows it: a full piece
        # is returned as it is, a shorter one as its first n bytes (one copy of those, as without).
        piece = _new_bytes[0](None, self.BUFFER) if _new_bytes is not None else None
        target = _new_bytes[1](piece) if piece is not None else self._buffer
        code = lib.courier_request_read(self._handle, target, self.BUFFER, self._got_ref, timeout_ms)
        if code == 0:
            n = self._got.value
            if not n:
                self._finished = True
                return None
            if piece is None:
                return ctypes.string_at(self._buffer, n)
            return piece if n == self.BUFFER else piece[:n]
        if code == _native.E_AGAIN:
            return _AGAIN
        self._finished = True
        from ._support import _error
        raise _error(code, lib.courier_request_errmsg(self._handle).decode())

    #: How long one blocking read waits before Python gets a turn (Ctrl-C and other signals are
    #: handled between calls, never inside one).
    WAIT_MS = 200

    def _pieces(self):
        """The body in pieces, at the reader's pace; raises the request's error at the end."""
        if self._closed:
            raise StreamClosed("Attempted to read or stream content, but the stream has been closed.")
        return self._raw_pieces()

    def _raw_pieces(self):
        while (piece := self._read(self.WAIT_MS)) is not None:
            if piece is not _AGAIN:
                yield piece

    def _apieces(self):
        if self._closed:
            raise StreamClosed("Attempted to read or stream content, but the stream has been closed.")
        return self._raw_apieces()

    async def _raw_apieces(self):
        try:
            while True:
                self._ready.clear()
                piece = self._read(0)
                if piece is _AGAIN:
                    await self._ready.wait()
                    continue
                if piece is None:
                    return
                yield piece
        finally:
            if self._finished:
                self._unwatch()

    # httpx's names for the head

    @property
    def text(self):
        """The body as text, once read (``read()`` first; ResponseNotRead before)."""
        return self.content.decode(self.encoding, errors="replace")

    def json(self, **options):
        import json
        return json.loads(self.content, **options)

    @property
    def is_stream_consumed(self):
        return self._consumed

    @property
    def is_closed(self):
        return self._closed

    @property
    def status_code(self):
        return self.status

    @property
    def is_success(self):
        return 200 <= self.status < 300

    def raise_for_status(self):
        """HTTPStatusError unless the status is 2xx (the body is not read); returns self."""
        if not self.is_success:
            from ._errors import error_for
            raise error_for(_native.E_HTTP_STATUS, "status '%d %s' for url '%s'" % (self.status, self.reason_phrase, self._url),
                            request=self._request)
        return self

    def close(self):
        """Cancels the request if the body was not read to its end, and waits for it to end."""
        self._closed = True
        if not self._finished:
            lib.courier_request_cancel(self._handle)
            if self._loop is None:
                for _ in self.iter_bytes_quietly():
                    pass

    def iter_bytes_quietly(self):
        try:
            yield from self._raw_pieces()
        except Exception:
            return

    def __enter__(self):
        self._head.wait()
        return self

    def __exit__(self, *exc):
        self.close()

    async def __aenter__(self):
        await self._head_future
        return self

    async def aclose(self):
        self._closed = True
        if not self._finished:
            lib.courier_request_cancel(self._handle)
            try:
                async for _ in self._raw_apieces():
                    pass
            except Exception:
                pass
        self._unwatch()

    async def __aexit__(self, *exc):
        await self.aclose()

    def __del__(self):
        # Only once the library is done with the request (the set above holds it until then).
        if getattr(self, "_handle", None):
            if getattr(self, "_fd", -1) >= 0 and not self._loop.is_closed():
                # (Never entered with async with: the descriptor goes with the request.)
                self._unwatch()
            self._free(self._handle)
            self._handle = None
