"""Streamed bodies for the Python binding: multipart forms, bodies from iterators, and responses
read piece by piece with back-pressure.

Every callback here runs on Courier's loop thread (ctypes takes the GIL for it) and does little:
a write callback puts the piece in a bounded queue and, when the queue is full, answers
COURIER_WRITEFUNC_PAUSE, so the library stops reading the socket and offers the piece again after
``courier_request_resume`` — which the reader calls once it has drained the queue. A slow reader
therefore slows the server through TCP instead of filling memory.
"""

import asyncio
import collections
import ctypes
import os
import queue as _queue
import threading

from . import _native
from ._native import lib
from ._response import Headers, _pairs_of


class FilePart:
    """A file for ``files=``, streamed from disk when the request is sent (never read whole)."""

    def __init__(self, path, filename=None, content_type=None):
        self.path = os.fspath(path)
        self.filename = filename
        self.content_type = content_type


def apply_files(handle, files, data, apply):
    """``files=`` (and ``data=`` fields beside them) as a multipart form, httpx's shapes:
    ``{"f": b"..."}``, ``{"f": open(path, "rb")}`` (streamed from its path), ``{"f": FilePart(path)}``,
    ``{"f": ("name.txt", content, "text/plain")}`` with content bytes, a file object or a path."""
    fields = data.items() if isinstance(data, dict) else (data or [])
    for name, value in fields:
        values = value if isinstance(value, (list, tuple)) else [value]
        for item in values:
            apply(lib.courier_request_add_form_field(handle, str(name).encode(), str(item).encode()))
    parts = files.items() if isinstance(files, dict) else files
    for name, value in parts:
        filename, content_type = None, None
        if isinstance(value, tuple):
            filename = value[0]
            content_type = value[2] if len(value) > 2 else None
            value = value[1]
        key = str(name).encode()
        if isinstance(value, FilePart):
            apply(lib.courier_request_add_form_file(handle, key, value.path.encode(), _opt(value.content_type or content_type),
                                                    _opt(value.filename or filename)))
        elif isinstance(value, (bytes, bytearray, memoryview, str)):
            body = value.encode() if isinstance(value, str) else bytes(value)
            apply(lib.courier_request_add_form_data(handle, key, body, len(body), _opt(content_type), _opt(filename or name)))
        elif isinstance(value, (os.PathLike,)):
            apply(lib.courier_request_add_form_file(handle, key, os.fspath(value).encode(), _opt(content_type), _opt(filename)))
        elif hasattr(value, "read"):
            path = getattr(value, "name", None)
            if isinstance(path, str) and os.path.isfile(path) and value.tell() == 0:
                # An open file: streamed from its path, not read into memory.
                apply(lib.courier_request_add_form_file(handle, key, path.encode(), _opt(content_type),
                                                        _opt(filename or os.path.basename(path))))
            else:
                body = value.read()
                body = body.encode() if isinstance(body, str) else bytes(body)
                apply(lib.courier_request_add_form_data(handle, key, body, len(body), _opt(content_type), _opt(filename or name)))
        else:
            raise TypeError("files[%r]: bytes, a file, a path, a FilePart or a (filename, content, type) tuple" % name)


def _opt(text):
    return None if text is None else str(text).encode()


class BodyProducer:
    """An iterable of bytes as a request body through a read callback (chunked unless ``length``)."""

    def __init__(self, iterable, length=None):
        self._iterator = iter(iterable)
        self._pending = b""
        self.length = -1 if length is None else length
        self.exception = None
        self.callback = _native.READ_FN(self._read)

    def _read(self, buffer, capacity, _user):
        try:
            while not self._pending:
                chunk = next(self._iterator, None)
                if chunk is None:
                    return 0
                self._pending = chunk.encode() if isinstance(chunk, str) else bytes(chunk)
            piece, self._pending = self._pending[:capacity], self._pending[capacity:]
            ctypes.memmove(buffer, piece, len(piece))
            return len(piece)
        except BaseException as error:  # never into C
            self.exception = error
            return _native.READFUNC_ABORT


class AsyncBodyProducer:
    """An async iterable of bytes as a request body (``content=`` with ``fetch`` or
    ``stream_async``): the read callback pauses while a task on the event loop fetches the next
    chunk, and the task resumes the request when it has one, so the producer runs at the
    socket's pace and never on Courier's thread."""

    def __init__(self, iterable, loop, length=None):
        self._iterator = iterable.__aiter__()
        self._loop = loop
        self._lock = threading.Lock()
        self._ready = collections.deque()
        self._pending = b""
        self._done = False
        self._fetching = False
        self.handle = None
        self.length = -1 if length is None else length
        self.exception = None
        self.callback = _native.READ_FN(self._read)

    def _read(self, buffer, capacity, _user):
        with self._lock:
            while not self._pending and self._ready:
                self._pending = self._ready.popleft()
            if not self._pending:
                if self.exception is not None:
                    return _native.READFUNC_ABORT
                if self._done:
                    return 0
                if not self._fetching:
                    self._fetching = True
                    self._loop.call_soon_threadsafe(self._start_fetch)
                return _native.READFUNC_PAUSE
            piece, self._pending = self._pending[:capacity], self._pending[capacity:]
        ctypes.memmove(buffer, piece, len(piece))
        return len(piece)

    def _start_fetch(self):
        self._loop.create_task(self._fetch())

    async def _fetch(self):
        try:
            chunk = await self._iterator.__anext__()
            chunk = chunk.encode() if isinstance(chunk, str) else bytes(chunk)
            with self._lock:
                self._ready.append(chunk)
        except StopAsyncIteration:
            with self._lock:
                self._done = True
        except BaseException as error:  # never into C
            with self._lock:
                self.exception = error
        finally:
            with self._lock:
                self._fetching = False
            if self.handle:
                lib.courier_request_resume(self.handle)


class _Pacer:
    """The bounded hand-over between the write callback (loop thread) and a reader."""

    #: Pieces (up to 256 KiB each) waiting before the socket is paused.
    LIMIT = 8

    def __init__(self):
        self.lock = threading.Lock()
        self.count = 0
        self.paused = False
        self.handle = None

    def admit(self):
        """Loop thread: whether one more piece may be queued (else the callback pauses)."""
        with self.lock:
            if self.count >= self.LIMIT:
                self.paused = True
                return False
            self.count += 1
            return True

    def taken(self):
        """Reader: a piece left the queue; resume when half of it is free again."""
        with self.lock:
            self.count -= 1
            resume = self.paused and self.count <= self.LIMIT // 2
            if resume:
                self.paused = False
        if resume and self.handle:
            lib.courier_request_resume(self.handle)


class StreamedResponse:
    """A response whose body is read as it arrives: ``status``, ``headers`` and ``header()`` as soon
    as the head is in, then ``iter_bytes()`` (or ``async for chunk in aiter_bytes()`` for
    ``Engine.stream_async``). Use as a context manager; leaving early cancels the request."""

    def __init__(self, engine, handle, asynchronous):
        from . import _free_request
        self._free = _free_request
        self._handle = handle
        self._pacer = _Pacer()
        self._pacer.handle = handle
        self._head = threading.Event()
        self._finished = False
        self.status = 0
        self.headers = Headers()
        self.reason_phrase = ""
        self.url = ""
        self.error = None
        self._loop = asyncio.get_running_loop() if asynchronous else None
        # SimpleQueue: implemented in C, a fraction of queue.Queue's cost per piece.
        self._queue = asyncio.Queue() if asynchronous else _queue.SimpleQueue()
        self._head_future = self._loop.create_future() if asynchronous else None
        self._write = _native.WRITE_FN(self._on_write)
        self._on_head_c = _native.HEAD_FN(self._on_head)
        self._done = _native.DONE_FN(self._on_done)
        engine_check = lib.courier_request_add_write_callback(handle, self._write, None)
        if engine_check == 0:
            engine_check = lib.courier_request_set_head_callback(handle, self._on_head_c, None)
        if engine_check:
            raise RuntimeError(lib.courier_request_errmsg(handle).decode())

    def _start(self):
        code = lib.courier_request_send(self._handle, self._done, None)
        if code:
            from . import _error
            raise _error(code, lib.courier_request_errmsg(self._handle).decode())

    # Loop thread

    def _deliver(self, item):
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._queue.put_nowait, item)
        else:
            self._queue.put(item)

    def _on_head(self, _request, head, _user):
        self.status = lib.courier_response_status(head)
        self.headers = Headers(_pairs_of(head))
        self.reason_phrase = (lib.courier_response_reason(head) or b"").decode("latin-1")
        self.url = lib.courier_response_url(head).decode()
        self._head.set()
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._resolve_head)

    def _resolve_head(self):
        if not self._head_future.done():
            self._head_future.set_result(None)

    def _on_write(self, data, length, _user):
        if not self._pacer.admit():
            return _native.WRITEFUNC_PAUSE
        self._deliver(ctypes.string_at(data, length))
        return length

    def _on_done(self, _request, response, code, _user):
        from . import _error
        message = lib.courier_request_errmsg(self._handle).decode() if code else None
        if response:
            if not self.status:
                self.status = lib.courier_response_status(response)
                self.headers = Headers(_pairs_of(response))
            lib.courier_response_free(response)
        from . import _live_streams
        _live_streams.discard(self)
        error = None
        # The body of an unaccepted status streamed like any other: not an error here.
        if code and code != _native.E_HTTP_STATUS:
            error = _error(code, message)
        self.error = error
        self._head.set()
        self._deliver((None, error))
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._resolve_head)

    # Reader

    def header(self, name, default=None):
        values = self.headers.get_list(name)
        return values[0] if values else default

    def _taken(self, item):
        """A queue item for the reader: the piece, or None at the end (raising the error)."""
        if isinstance(item, tuple):
            self._finished = True
            if item[1] is not None:
                raise item[1]
            return None
        self._pacer.taken()
        return item

    def iter_bytes(self):
        """The body in pieces, at the reader's pace; raises the request's error at the end."""
        while (piece := self._taken(self._queue.get())) is not None:
            yield piece

    async def aiter_bytes(self):
        while (piece := self._taken(await self._queue.get())) is not None:
            yield piece

    def read(self):
        return b"".join(self.iter_bytes())

    async def aread(self):
        return b"".join([piece async for piece in self.aiter_bytes()])

    # httpx's names for the head

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
            raise error_for(_native.E_HTTP_STATUS, "status '%d %s' for url '%s'" % (self.status, self.reason_phrase, self.url))
        return self

    def close(self):
        """Cancels the request if the body was not read to its end, and waits for it to end."""
        if not self._finished:
            lib.courier_request_cancel(self._handle)
            lib.courier_request_resume(self._handle)
            if self._loop is None:
                for _ in self.iter_bytes_quietly():
                    pass

    def iter_bytes_quietly(self):
        try:
            yield from self.iter_bytes()
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

    async def __aexit__(self, *exc):
        if not self._finished:
            lib.courier_request_cancel(self._handle)
            lib.courier_request_resume(self._handle)
            try:
                async for _ in self.aiter_bytes():
                    pass
            except Exception:
                pass

    def __del__(self):
        # Only once the library is done with the request (the set above holds it until then).
        if getattr(self, "_handle", None):
            self._free(self._handle)
            self._handle = None
