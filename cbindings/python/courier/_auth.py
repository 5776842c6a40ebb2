"""Credentials and auth challenges: ``auth=`` values and an engine's ``on_challenge``."""

import ctypes
import sys

from . import _native


#: Challenge callbacks handed to C; never freed (one per engine that has one).
keep_alive = []


class Bearer:
    """``auth=courier.Bearer(token)``: an ``Authorization: Bearer`` field (RFC 6750)."""

    def __init__(self, token):
        self.token = token

    def __repr__(self):
        return "Bearer(...)"


class Challenge:
    """A refusal an engine's ``on_challenge`` may answer: ``status`` (401, or 407 from a proxy),
    ``url``, ``schemes`` (the WWW-Authenticate or Proxy-Authenticate values, joined) and
    ``is_proxy``."""

    def __init__(self, status, url, schemes, is_proxy):
        self.status, self.url, self.schemes, self.is_proxy = status, url, schemes, is_proxy

    def __repr__(self):
        return "Challenge(%d, %r)" % (self.status, self.url)


def field_value(credentials):
    """The Authorization value of ``Bearer(token)`` or ``(user, password)``; None for None."""
    if credentials is None:
        return None
    if isinstance(credentials, Bearer):
        return "Bearer " + credentials.token
    if isinstance(credentials, tuple) and len(credentials) == 2:
        pair = ("%s:%s" % credentials).encode()
        import base64
        return "Basic " + base64.b64encode(pair).decode()
    raise TypeError("credentials are (user, password) or courier.Bearer(token)")


def challenge_callback(function, report):
    """The C callback for ``on_challenge=function``: it gets a Challenge and returns new
    credentials or None; an exception is reported (``report``) and declines."""

    def callback(_user, status, url, schemes, is_proxy, out, capacity):
        try:
            answer = function(Challenge(status, url.decode(), schemes.decode(), bool(is_proxy)))
            value = field_value(answer)
            if value is None:
                return 0
            encoded = value.encode()
            if len(encoded) + 1 > capacity:
                return 0
            ctypes.memmove(out, encoded + b"\0", len(encoded) + 1)
            return 1
        except BaseException:
            report(sys.exc_info(), function)
            return 0

    return _native.CHALLENGE_FN(callback)
