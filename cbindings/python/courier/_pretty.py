"""``pretty_json``: OCNet's JSON pretty printer (the library's ``courier_json_pretty``)."""
import ctypes

from ._native import lib
from ._support import _error


def pretty_json(document):
    """JSON text (``str`` or ``bytes``, a response's ``content``) indented for people: two spaces
    per level, members in document order, numbers as written, non-ASCII characters as themselves
    (``json.dumps`` would need ``ensure_ascii=False`` and would round the numbers it parsed).
    Raises ``ResponseFormatError`` (E_INVALID_JSON) for text that is not JSON."""
    data = document.encode() if isinstance(document, str) else bytes(document)
    needed = ctypes.c_size_t()
    code = lib.courier_json_pretty(data, len(data), None, 0, ctypes.byref(needed))
    if code:
        raise _error(code, "not JSON")
    out = ctypes.create_string_buffer(needed.value + 1)
    code = lib.courier_json_pretty(data, len(data), out, len(out), ctypes.byref(needed))
    if code:
        raise _error(code, "not JSON")
    return out.raw[:needed.value].decode()
