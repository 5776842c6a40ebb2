"""Streamed request bodies for the Python binding: multipart forms from disk (``files=``,
``FilePart``) and bodies produced by iterators, sync and async.

Callbacks here run on Courier's loop thread (ctypes takes the GIL for them) and do little."""

import collections
import ctypes
import os
import threading

from . import _native
from ._native import lib


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
