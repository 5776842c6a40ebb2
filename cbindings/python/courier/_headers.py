"""``Headers``, httpx's case-insensitive multi-valued fields, and reading a response handle's
fields and trailers out of the library."""

import ctypes
from collections.abc import Mapping, MutableMapping

from ._native import lib


class Headers(MutableMapping):
    """Header fields in the order they came, looked up without regard to case (httpx's Headers).

    ``headers["set-cookie"]`` joins repeated fields with ", " (as httpx does); ``get_list(name)``
    gives each value; ``multi_items()`` the (name, value) pairs as sent. Iterating gives each
    distinct name once (lower-cased), so ``dict(headers)`` works. Setting a name replaces every
    field of that name; ``del`` removes them; ``update``, ``setdefault`` and ``copy`` as a dict's."""

    __slots__ = ("_pairs",)

    def __init__(self, pairs=()):
        if isinstance(pairs, Headers):
            pairs = pairs.multi_items()
        elif isinstance(pairs, Mapping):
            pairs = pairs.items()
        self._pairs = [(str(name), str(value)) for name, value in pairs]

    def get_list(self, name):
        """Every value of ``name``, in order ([] when absent)."""
        lowered = name.lower()
        return [value for key, value in self._pairs if key.lower() == lowered]

    def multi_items(self):
        """The fields as (name, value) pairs, names as the server spelled them."""
        return list(self._pairs)

    @property
    def raw(self):
        """The fields as (name, value) byte pairs."""
        return [(name.encode("latin-1"), value.encode("latin-1")) for name, value in self._pairs]

    def __getitem__(self, name):
        values = self.get_list(name)
        if not values:
            raise KeyError(name)
        return ", ".join(values)

    def __setitem__(self, name, value):
        lowered = str(name).lower()
        kept = [(key, old) for key, old in self._pairs if key.lower() != lowered]
        kept.append((str(name), str(value)))
        self._pairs = kept

    def __delitem__(self, name):
        lowered = str(name).lower()
        kept = [(key, value) for key, value in self._pairs if key.lower() != lowered]
        if len(kept) == len(self._pairs):
            raise KeyError(name)
        self._pairs = kept

    def copy(self):
        return Headers(self._pairs)

    def __contains__(self, name):
        if not isinstance(name, str):
            return False
        lowered = name.lower()
        return any(key.lower() == lowered for key, _ in self._pairs)

    def __iter__(self):
        seen = []
        for key, _ in self._pairs:
            lowered = key.lower()
            if lowered not in seen:
                seen.append(lowered)
        return iter(seen)

    def __len__(self):
        return len({key.lower() for key, _ in self._pairs})

    def __eq__(self, other):
        if isinstance(other, Headers):
            other = other.multi_items()
        elif isinstance(other, Mapping):
            other = list(other.items())
        else:
            return NotImplemented
        normal = sorted((key.lower(), value) for key, value in self._pairs)
        return normal == sorted((str(key).lower(), str(value)) for key, value in other)

    __hash__ = None

    def __repr__(self):
        return "Headers(%r)" % (self._pairs,)


def _pairs_of(handle):
    """A response handle's header fields as (name, value) pairs, in order."""
    pairs = []
    name, value = ctypes.c_void_p(), ctypes.c_void_p()
    name_length, value_length = ctypes.c_size_t(), ctypes.c_size_t()
    for index in range(lib.courier_response_header_count(handle)):
        lib.courier_response_header_at(handle, index, ctypes.byref(name), ctypes.byref(name_length),
                                       ctypes.byref(value), ctypes.byref(value_length))
        pairs.append((ctypes.string_at(name, name_length.value).decode("latin-1"),
                      ctypes.string_at(value, value_length.value).decode("latin-1")))
    return pairs


def _trailers_of(handle):
    pairs = []
    name, value = ctypes.c_char_p(), ctypes.c_char_p()
    for index in range(lib.courier_response_trailer_count(handle)):
        if lib.courier_response_trailer_at(handle, index, ctypes.byref(name), ctypes.byref(value)) == 0:
            pairs.append((name.value.decode("latin-1"), value.value.decode("latin-1")))
    return pairs


def charset_of(content_type):
    """The charset parameter of a Content-Type value, or None."""
    for part in (content_type or "").split(";")[1:]:
        key, _, value = part.strip().partition("=")
        if key.strip().lower() == "charset" and value:
            return value.strip().strip('"')
    return None
