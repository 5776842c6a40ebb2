"""httpx's ``Timeout`` over Courier's per-request limits, and the forms ``params=`` takes."""

from ._errors import UsageError
from . import _native

_UNSET = object()

#: httpx's default: 5 s for connect, read, write and the pool wait.
DEFAULT_TIMEOUT_SECONDS = 5.0


class Timeout:
    """Deadlines in seconds; None means no limit.

    ``Timeout(5.0)`` sets connect, read, write and pool to 5 s; keywords override one each:
    ``Timeout(10.0, connect=60.0)``. ``connect``: name, TCP and TLS. ``read``: to the first
    response byte once the request is out, then between two (ReadTimeout). ``write``: between
    two writes of the request body (WriteTimeout: the server stopped reading it). ``pool``: the
    wait for a place in the shared queue. ``total``: the whole request (not in httpx). Without a
    ``Timeout`` Courier's defaults hold: 30 s connect, 60 s read, no others."""

    __slots__ = ("connect", "read", "write", "pool", "total")

    def __init__(self, timeout=_UNSET, *, connect=_UNSET, read=_UNSET, write=_UNSET, pool=_UNSET, total=None):
        if isinstance(timeout, Timeout):
            base = (timeout.connect, timeout.read, timeout.write, timeout.pool)
            total = timeout.total if total is None else total
        elif timeout is _UNSET:
            if _UNSET in (connect, read, write, pool):
                raise UsageError(_native.E_INVALID_ARGUMENT, "Timeout needs a default (Timeout(5.0, connect=...)) "
                                 "or all four of connect, read, write and pool")
            base = (None, None, None, None)
        else:
            base = (timeout,) * 4
        given = (connect, read, write, pool)
        self.connect, self.read, self.write, self.pool = (b if g is _UNSET else g for g, b in zip(given, base))
        self.total = total
        for name in self.__slots__:
            value = getattr(self, name)
            if value is not None and (not isinstance(value, (int, float)) or value < 0):
                raise UsageError(_native.E_INVALID_ARGUMENT, "timeout %s=%r is not a number of seconds" % (name, value))

    def as_limits(self):
        """Courier's per-request limits (``Engine``'s ``timeouts=``): seconds, None for none.
        ``read`` is both the first-byte limit (which starts once the request is out) and the
        silence limit between reads (``idle``); ``write`` is the silence limit between writes
        of the body (``send``)."""
        return {"connect": self.connect, "first_byte": self.read, "idle": self.read, "send": self.write,
                "queue": self.pool, "total": self.total}

    def __eq__(self, other):
        return isinstance(other, Timeout) and all(getattr(self, n) == getattr(other, n) for n in self.__slots__)

    def __repr__(self):
        return "Timeout(connect=%r, read=%r, write=%r, pool=%r, total=%r)" % tuple(getattr(self, n) for n in self.__slots__)


def _limits(timeout):
    """``timeout=`` as Engine limits: a Timeout, a number (every phase), None (no limit at all)."""
    if timeout is _UNSET:
        return None
    if not isinstance(timeout, Timeout):
        timeout = Timeout(timeout)
    return timeout.as_limits()


def _pairs(params):
    """Query parameters as (name, value) pairs: a dict (a list value repeats its key), a list of
    pairs, or a query string; httpx's forms."""
    if params is None:
        return []
    if isinstance(params, str):
        from urllib.parse import parse_qsl
        return parse_qsl(params.lstrip("?"), keep_blank_values=True)
    items = params.items() if hasattr(params, "items") else params
    pairs = []
    for name, value in items:
        values = value if isinstance(value, (list, tuple)) else [value]
        for one in values:
            pairs.append((str(name), "" if one is None else ("true" if one is True else "false" if one is False else str(one))))
    return pairs
