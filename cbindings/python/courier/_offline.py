"""Offline: the network monitor (``network_status()``, ``watch_network(callback)``), the queue
width that follows it, and the outbox of frozen requests (``Outbox(path)``, ``Engine(outbox=...)``
and ``freeze="kind"`` on a request): journaled before sending, kept while the host cannot be
reached, sent when the network returns, removed once answered, with a stable Idempotency-Key."""
import collections
import ctypes
import os

from . import _native
from ._native import lib

#: What ``network_status()`` and watchers report, by the C ABI's COURIER_NETWORK_* value.
KINDS = ("none", "wired", "wifi", "cellular")

# Callbacks stay referenced for the process's life (the loop may call them at any time).
_keep = []


def _raise(code, what):
    if code:
        from ._support import _error
        raise _error(code, what)


def network_status():
    """``(kind, interface)``: "none", "wired", "wifi" or "cellular", and the default route's
    interface ("" for none)."""
    kind = ctypes.c_int()
    interface = ctypes.create_string_buffer(64)
    _raise(lib.courier_network_status(ctypes.byref(kind), interface, len(interface)), "network status")
    return KINDS[kind.value], interface.value.decode()


#: Why a host can or cannot be reached, by the C ABI's COURIER_REACH_* value.
REASONS = ("connected", "routed", "no-route", "unresolvable", "connect-failed", "timed-out")

#: ``host_reachability``'s answer: ``reachable`` is True for "connected" and "routed";
#: ``interface`` is the route's ("" when none).
Reachability = collections.namedtuple("Reachability", "host reachable reason interface")


def host_reachability(host):
    """Whether ``host`` (a name or an IP literal) can be reached now, and why: the kernel's route
    to its addresses (every routing table, as ``ip route get``), then the latest connection attempt
    to it since the network changed (a host that refused within the last minute is
    unreachable). Resolves a name first, so it may block as long as a lookup; from asyncio use
    ``loop.run_in_executor``."""
    reachable, reason = ctypes.c_int(), ctypes.c_int()
    interface = ctypes.create_string_buffer(64)
    _raise(lib.courier_network_reachability(host.encode(), ctypes.byref(reachable), ctypes.byref(reason),
                                            interface, len(interface)), "reachability of %s" % host)
    return Reachability(host, bool(reachable.value), REASONS[reason.value], interface.value.decode())


def watch_network(callback):
    """Calls ``callback(kind, interface)`` with each change, on Courier's thread (keep it short);
    returns an id for ``unwatch_network``. An exception it raises goes to ``sys.unraisablehook``."""
    from ._support import _report_unraisable

    def relay(user, kind, interface):
        try:
            callback(KINDS[kind], interface.decode() if interface else "")
        except BaseException as error:  # noqa: BLE001 - reported, never across C
            _report_unraisable(error, callback)

    function = _native.NETWORK_FN(relay)
    _keep.append(function)
    watch = ctypes.c_int()
    _raise(lib.courier_network_watch(function, None, ctypes.byref(watch)), "watching the network")
    return watch.value


def unwatch_network(watch):
    lib.courier_network_unwatch(int(watch))


def set_network_override(kind):
    """Forces the kind ("none", "wired", "wifi", "cellular") for the whole process; None goes
    back to what the system says (or COURIER_NETWORK)."""
    if kind is not None and kind not in KINDS:
        from . import CourierError
        raise CourierError(_native.E_INVALID_ARGUMENT, "unknown network kind %r" % kind)
    _raise(lib.courier_network_set_override(-1 if kind is None else KINDS.index(kind)), "network override")


def follow_network(wifi=6, wired=6, cellular=2, wifi_only=False):
    """The shared queue's width follows the network from now on (the default until
    ``set_queue_width``)."""
    _raise(lib.courier_queue_follow_network(int(wifi), int(wired), int(cellular), 1 if wifi_only else 0), "widths")


class Outbox:
    """A directory of frozen requests (the same journal as ``courier --outbox``), owned by one
    process at a time (``E_OUTBOX_LOCKED`` otherwise). ``retry``: seconds between attempts while
    nothing changes (default 30). Register ``on_finished`` handlers before creating the engine
    that replays what earlier processes left."""

    def __init__(self, path, retry=None):
        self._handle = _native.outbox_p()
        retry_ms = int(retry * 1000) if retry is not None else 0
        _raise(lib.courier_outbox_open(os.fspath(path).encode(), retry_ms, ctypes.byref(self._handle)), "outbox %s" % path)
        self.path = os.fspath(path)

    def __len__(self):
        """Requests waiting."""
        return max(0, lib.courier_outbox_count(self._handle))

    @property
    def set_aside(self):
        """How many damaged entries were found and set aside (``*.corrupt``) when it opened."""
        return max(0, lib.courier_outbox_set_aside_count(self._handle))

    def flush(self):
        """Tries every waiting request again now."""
        _raise(lib.courier_outbox_flush(self._handle), "flush")

    def on_finished(self, kind, callback):
        """Calls ``callback(id, kind, code, status)`` when a frozen request of ``kind`` ends (code
        0 when answered; status 0 without a response), on Courier's thread."""
        from ._support import _report_unraisable

        def relay(user, entry, entry_kind, code, status):
            try:
                callback(entry.decode(), entry_kind.decode(), code, status)
            except BaseException as error:  # noqa: BLE001 - reported, never across C
                _report_unraisable(error, callback)

        function = _native.OUTBOX_FN(relay)
        _keep.append(function)
        _raise(lib.courier_outbox_on_finished(self._handle, kind.encode(), function, None), "on_finished")

    def close(self):
        """Gives up the directory (entries stay for the next owner). Close engines first."""
        if self._handle:
            lib.courier_outbox_close(self._handle)
            self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
