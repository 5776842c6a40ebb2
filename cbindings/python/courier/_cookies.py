"""Cookie jars for the Python binding: ``CookieJar()`` shared by engines and requests
(``Engine(cookies=jar)`` or ``cookies=jar`` on one request). Cookies a response sets are stored
and sent back as RFC 6265bis says; ``load``/``save`` read and write curl's Netscape cookie file."""
import ctypes
import os

from . import _native
from ._native import lib


class CookieJar:
    def __init__(self, path=None):
        """``path``: a cookie file to read at once (a missing file is an empty jar)."""
        self._handle = _native.cookiejar_p()
        code = lib.courier_cookiejar_create(ctypes.byref(self._handle))
        if code:
            from ._support import _error
            raise _error(code)
        if path is not None:
            self.load(path)

    def _call(self, code, what):
        if code:
            from ._support import _error
            raise _error(code, what)

    def load(self, path):
        """Adds the cookies of a Netscape cookie file (curl's -b format)."""
        self._call(lib.courier_cookiejar_load(self._handle, os.fspath(path).encode()), "loading %s" % path)

    def save(self, path):
        """Writes every cookie to a Netscape cookie file (curl's -c format), atomically."""
        self._call(lib.courier_cookiejar_save(self._handle, os.fspath(path).encode()), "saving %s" % path)

    def clear(self):
        self._call(lib.courier_cookiejar_clear(self._handle), "clearing the jar")

    def __len__(self):
        return lib.courier_cookiejar_count(self._handle)

    def close(self):
        if self._handle:
            lib.courier_cookiejar_free(self._handle)
            self._handle = None

    def __del__(self):
        self.close()
