"""httpx's module-level functions: ``courier.get(url)`` and the others, and ``courier.stream``,
each with a client of its own (the process's pool keeps connections across calls)."""

import contextlib

from ._client import Client

_CLIENT_KEYS = ("base_url", "proxy", "trust_env", "verify", "cert", "max_redirects", "http1", "http2")


def request(method, url, **options):
    """One request with a client of its own (httpx's ``httpx.request``); the process's pool keeps
    connections across calls. Client arguments (``timeout``, ``follow_redirects``, ``verify``...)
    and request arguments both go here."""
    client_options = {key: options.pop(key) for key in _CLIENT_KEYS if key in options}
    with Client(**client_options) as client:
        return client.request(method, url, **options)


def get(url, **options):
    return request("GET", url, **options)


def head(url, **options):
    return request("HEAD", url, **options)


def options(url, **options_):
    return request("OPTIONS", url, **options_)


def delete(url, **options):
    return request("DELETE", url, **options)


def post(url, **options):
    return request("POST", url, **options)


def put(url, **options):
    return request("PUT", url, **options)


def patch(url, **options):
    return request("PATCH", url, **options)


@contextlib.contextmanager
def stream(method, url, **options):
    """``with courier.stream("GET", url) as r: for chunk in r.iter_bytes(): ...``"""
    client_options = {key: options.pop(key) for key in _CLIENT_KEYS if key in options}
    with Client(**client_options) as client:
        with client.stream(method, url, **options) as response:
            yield response
