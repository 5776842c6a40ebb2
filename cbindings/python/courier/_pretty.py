"""``pretty_json``: OCNet's JSON pretty printer (the library's ``courier_json_pretty``)."""
from ._native import lib
from ._support import _text_out


def pretty_json(document):
    """JSON text (``str`` or ``bytes``, a response's ``content``) indented for people: two spaces
    per level, members in document order, numbers as written, non-ASCII characters as themselves
    (``json.dumps`` would need ``ensure_ascii=False`` and would round the numbers it parsed).
    Raises ``ResponseFormatError`` (E_INVALID_JSON) for text that is not JSON."""
    data = document.encode() if isinstance(document, str) else bytes(document)
    return _text_out(lambda out, capacity, needed: lib.courier_json_pretty(data, len(data), out, capacity, needed), "not JSON")
