"""A client's sending when Python has a part in it, as httpx does it: the ``event_hooks``, an
``Auth`` flow, and a ``MockTransport`` (whose redirects the client follows itself, since no
library follows them). Requests with none of these go straight to the library (the fast path
in ``_client.py``); these come here."""

from ._errors import TooManyRedirects, UsageError
from . import _native

#: httpx's default for max_redirects.
DEFAULT_MAX_REDIRECTS = 20


def send(client, request, stream, auth, follow):
    """Sends ``request`` through the client's hooks, ``auth``'s flow and transport."""
    flow = auth.sync_auth_flow(request) if auth is not None else None
    if flow is not None:
        request = next(flow)
    history = []
    while True:
        response = _send_following(client, request, stream, follow)
        if flow is None:
            break
        try:
            next_request = flow.send(response)
        except StopIteration:
            break
        _close(response)
        history.append(response)
        request = next_request
    return _with_hops(response, history)


async def send_async(client, request, stream, auth, follow):
    flow = auth.async_auth_flow(request) if auth is not None else None
    if flow is not None:
        request = await flow.__anext__()
    history = []
    while True:
        response = await _send_following_async(client, request, stream, follow)
        if flow is None:
            break
        try:
            next_request = await flow.asend(response)
        except StopAsyncIteration:
            break
        await _aclose(response)
        history.append(response)
        request = next_request
    return _with_hops(response, history)


def _send_following(client, request, stream, follow):
    """One request with the hooks; through a MockTransport, its redirects followed here."""
    hops = []
    while True:
        for hook in client._event_hooks["request"]:
            hook(request)
        response = client._send_single(request, stream, follow)
        for hook in client._event_hooks["response"]:
            hook(response)
        request = _next_hop(client, response, follow, hops, request)
        if request is None:
            return _with_hops(response, hops)


async def _send_following_async(client, request, stream, follow):
    hops = []
    while True:
        for hook in client._event_hooks["request"]:
            await hook(request)
        response = await client._send_single(request, stream, follow)
        for hook in client._event_hooks["response"]:
            await hook(response)
        request = _next_hop(client, response, follow, hops, request)
        if request is None:
            return _with_hops(response, hops)


def _next_hop(client, response, follow, hops, request):
    """The redirect to follow after ``response`` (only a mock transport's: the library follows
    its own), or None; TooManyRedirects past the client's limit."""
    if not (client._mock and follow and response.next_request is not None):
        return None
    hops.append(response)
    if len(hops) > client._max_redirects():
        raise TooManyRedirects(15, "Exceeded maximum allowed redirects.", request=request)
    return response.next_request


def _with_hops(response, hops):
    if hops:
        response.history = hops + list(response.history)
    return response


def _close(response):
    close = getattr(response, "close", None)
    if close is not None:
        close()


async def _aclose(response):
    close = getattr(response, "aclose", None)
    if close is not None:
        await close()


def event_hooks_of(hooks, asynchronous):
    """``event_hooks=`` checked: "request" and "response" lists of callables (``async def``
    ones for an AsyncClient, as httpx requires)."""
    checked = {"request": [], "response": []}
    if not hooks:
        return checked
    import inspect
    for name, functions in (hooks or {}).items():
        if name not in checked:
            raise UsageError(_native.E_INVALID_ARGUMENT, "event_hooks takes 'request' and 'response', not %r" % (name,))
        for function in functions:
            if asynchronous and not inspect.iscoroutinefunction(function) and not inspect.iscoroutinefunction(
                    getattr(function, "__call__", None)):
                raise UsageError(_native.E_INVALID_ARGUMENT, "an AsyncClient's event hooks are async functions")
            checked[name].append(function)
    return checked
