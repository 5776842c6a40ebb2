"""The C ABI's numbered settings under the names Python callers pass: priorities, timeouts, cache
policies, coalescing, the cache's statistics, TLS versions, the proxy argument."""

from . import _native
from ._errors import CourierError
from ._support import _text

PRIORITIES = {"very_low": 0, "low": 1, "normal": 2, "high": 3, "very_high": 4}
TIMEOUTS = {"queue": 1, "connect": 2, "first_byte": 3, "idle": 4, "total": 5, "send": 6}
#: How a call uses its engine's cache (``cache=`` on a request); the C ABI's COURIER_CACHE_*.
CACHE_POLICIES = {"protocol": 0, "reload": 1, "cache_else_load": 2, "cache_only": 3, "stale_if_error": 4,
                  "cached_then_fresh": 5, "cached_then_network": 6}
COALESCING = {"with_cache": 0, "always": 1, "never": 2}
CACHE_STATS = ["hits", "memory_hits", "disk_hits", "misses", "revalidations", "not_modified", "stale_served", "stores",
               "generated", "memory_bytes", "memory_entries", "disk_bytes", "memory_evictions", "disk_evictions",
               "corrupt_files_removed", "dropped_writes"]


_TLS_VERSIONS = {None: 0, "1.0": 0x0301, "1.1": 0x0302, "1.2": 0x0303, "1.3": 0x0304}


def _tls_version(name):
    """COURIER_TLS_* for "1.0" to "1.3" (None: the default)."""
    if name not in _TLS_VERSIONS:
        raise CourierError(_native.E_INVALID_ARGUMENT, "TLS versions are '1.0', '1.1', '1.2' or '1.3', not %r" % (name,))
    return _TLS_VERSIONS[name]


def _proxy_argument(proxy, trust_env):
    """courier_engine_set_proxy's proxy: the given one, else the environment's (NULL), or none ("")."""
    if proxy is not None:
        return _text(proxy)
    return None if trust_env else b""
