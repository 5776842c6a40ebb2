"""``codes``, httpx's status codes: ``codes.OK == 200``, ``codes.not_found`` (lower-case aliases),
``codes.get_reason_phrase(404)`` and the class tests (``codes.is_success(204)``)."""

from enum import IntEnum
from http import HTTPStatus

_names = {}
for _status in HTTPStatus:
    _names[_status.name] = _status.value
for _status in HTTPStatus:
    _names[_status.name.lower()] = _status.value

codes = IntEnum("codes", _names)
codes.__doc__ = __doc__


def _reason(value):
    try:
        return HTTPStatus(value).phrase
    except ValueError:
        return ""


codes.get_reason_phrase = staticmethod(_reason)
codes.is_informational = staticmethod(lambda value: 100 <= value <= 199)
codes.is_success = staticmethod(lambda value: 200 <= value <= 299)
codes.is_redirect = staticmethod(lambda value: 300 <= value <= 399)
codes.is_client_error = staticmethod(lambda value: 400 <= value <= 499)
codes.is_server_error = staticmethod(lambda value: 500 <= value <= 599)
codes.is_error = staticmethod(lambda value: 400 <= value <= 599)
del _status
