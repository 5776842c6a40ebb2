"""HSTS stores for the Python binding (RFC 6797; curl's --hsts): ``HSTS(path)`` shared by engines
(``Engine(hsts=store)``). A request or redirect to ``http://`` a host the store knows goes to
``https://`` instead; https responses' Strict-Transport-Security fields are noted in it."""
import ctypes
import os

from . import _native
from ._native import lib


class HSTS:
    def __init__(self, path=None):
        """``path``: curl's HSTS file to read (a missing file is an empty store) and to write back
        with ``save()``; None keeps the store in memory only."""
        self._handle = _native.hsts_p()
        code = lib.courier_hsts_create(None if path is None else os.fsencode(path), ctypes.byref(self._handle))
        if code:
            from ._support import _error
            raise _error(code, "reading %s" % path)
        self.path = path

    def requires_https(self, host):
        """Whether ``host`` is known (itself, or a parent domain with its subdomains)."""
        return lib.courier_hsts_requires_https(self._handle, host.encode()) == 1

    def save(self):
        """Writes the store back to its file, atomically (nothing for a memory-only store)."""
        code = lib.courier_hsts_save(self._handle)
        if code:
            from ._support import _error
            raise _error(code, "saving %s" % self.path)

    def close(self):
        if self._handle:
            lib.courier_hsts_free(self._handle)
            self._handle = None

    def __del__(self):
        self.close()
