"""The HTTP cache engines share (``Cache``)."""

import ctypes

from . import _native
from ._native import lib
from ._settings import CACHE_STATS
from ._support import _check


class Cache:
    """An HTTP cache (RFC 9111, private, like a browser's) engines store GET responses in and are
    answered from: a memory tier of ``memory`` bytes (None: 16 MiB) and, with ``directory``, a disk
    tier of ``disk`` bytes (None: 256 MiB) that other processes may share. Several engines may
    share one cache."""

    def __init__(self, directory=None, memory=None, disk=None):
        handle = _native.cache_p()
        _check(lib.courier_cache_create(str(directory).encode() if directory is not None else None,
                                        -1 if memory is None else int(memory), 0 if disk is None else int(disk),
                                        ctypes.byref(handle)))
        self._handle = handle

    def stats(self):
        """Hits (memory and disk), misses, revalidations, 304s, bytes per tier, evictions."""
        figures = {}
        value = ctypes.c_int64()
        for which, name in enumerate(CACHE_STATS, start=1):
            _check(lib.courier_cache_stat(self._handle, which, ctypes.byref(value)))
            figures[name] = value.value
        return figures

    def drop_memory(self):
        """Empties the memory tier (what memory pressure does); the disk tier keeps everything."""
        _check(lib.courier_cache_drop_memory(self._handle))

    def clear(self):
        _check(lib.courier_cache_clear(self._handle))

    def flush(self):
        """Waits until the disk tier has every response stored so far (before another process reads)."""
        _check(lib.courier_cache_flush(self._handle))

    def close(self):
        """Releases the handle; engines given the cache keep using it."""
        if self._handle:
            lib.courier_cache_destroy(self._handle)
            self._handle = None

    def __del__(self):
        self.close()
