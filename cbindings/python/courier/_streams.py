"""Streamed bodies for the Python binding: multipart forms, bodies from iterators, and responses
read piece by piece with back-pressure.

Callbacks here run on Courier's loop thread (ctypes takes the GIL for them) and do little. A
response body is not one of them: it is pulled with ``courier_request_read`` (no GIL held while it
waits), out of a bounded buffer in the library that pauses the socket when full, so a slow reader
slows the server through TCP instead of filling memory, and no Python code runs per socket read.
"""

import collections
import ctypes
import os
import threading

from . import _native
from ._native import lib
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
        # The chunk being sent, a pointer to its bytes and how far into it: a chunk larger than
        # the library's buffer goes out in several reads, each copied from its place in the chunk
        # (slicing it would copy the rest of the chunk once per read). The pointer object is kept:
        # CPython points it into the bytes object itself, another implementation may point it at
        # a converted copy that lives only as long as the pointer object.
        self._pending = b""
        self._pointer = None
        self._offset = 0
        self.length = -1 if length is None else length
        self.exception = None
        self.callback = _native.READ_FN(self._read)

    def _read(self, buffer, capacity, _user):
        try:
            while self._offset == len(self._pending):
                chunk = next(self._iterator, None)
                if chunk is None:
                    return 0
                # bytes as they are; a str encoded, anything else with the buffer protocol copied once.
                self._pending = chunk.encode() if isinstance(chunk, str) else chunk if type(chunk) is bytes else bytes(chunk)
                self._pointer = ctypes.c_char_p(self._pending)
                self._offset = 0
            n = min(capacity, len(self._pending) - self._offset)
            ctypes.memmove(buffer, ctypes.cast(self._pointer, ctypes.c_void_p).value + self._offset, n)
            self._offset += n
            return n
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


#: What courier_request_read answers when nothing has come yet (never seen by users).
_AGAIN = object()


class StreamedResponse:
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
        self.url = ""
        self.error = None
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
        self.url = lib.courier_response_url(head).decode()
        self._head.set()
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._resolve_head)

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
            self._loop.call_soon_threadsafe(self._resolve_head)

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

    def iter_bytes(self):
        """The body in pieces, at the reader's pace; raises the request's error at the end."""
        while (piece := self._read(self.WAIT_MS)) is not None:
            if piece is not _AGAIN:
                yield piece

    async def aiter_bytes(self):
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
            try:
                async for _ in self.aiter_bytes():
                    pass
            except Exception:
                pass
        self._unwatch()

    def __del__(self):
        # Only once the library is done with the request (the set above holds it until then).
        if getattr(self, "_handle", None):
            if getattr(self, "_fd", -1) >= 0 and not self._loop.is_closed():
                # (Never entered with async with: the descriptor goes with the request.)
                self._unwatch()
            self._free(self._handle)
            self._handle = None
