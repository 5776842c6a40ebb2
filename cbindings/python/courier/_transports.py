"""httpx's transports: ``MockTransport(handler)`` answers a client's requests from a function
(for users' tests: no network, the client's redirects, auth flows and hooks still run), and
``HTTPTransport`` / ``AsyncHTTPTransport`` carry Courier's own network options where httpx's
take them (``retries=``: connect failures retried; ``verify``, ``cert``, ``http1``, ``http2``,
``proxy``, ``uds``, ``local_address``). What Courier cannot do is refused by name, never ignored:
``socket_options``."""

from ._errors import UsageError
from . import _native


class BaseTransport:
    def handle_request(self, request):
        raise NotImplementedError("The 'handle_request' method must be implemented.")

    def close(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class AsyncBaseTransport:
    async def handle_async_request(self, request):
        raise NotImplementedError("The 'handle_async_request' method must be implemented.")

    async def aclose(self):
        pass

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        await self.aclose()


class MockTransport(BaseTransport, AsyncBaseTransport):
    """``MockTransport(handler)``: each request goes to ``handler(request)``, which returns a
    ``Response`` (an ``async def`` handler for an ``AsyncClient``)."""

    def __init__(self, handler):
        self.handler = handler

    def handle_request(self, request):
        import inspect
        request.read()
        response = self.handler(request)
        if inspect.isawaitable(response):
            raise TypeError("an async handler needs an AsyncClient")
        return _answered(response, request)

    async def handle_async_request(self, request):
        import inspect
        await request.aread()
        response = self.handler(request)
        if inspect.isawaitable(response):
            response = await response
        return _answered(response, request)


def _answered(response, request):
    from ._response import Response
    if not isinstance(response, Response):
        raise TypeError("a MockTransport handler returns a Response, not %r" % (response,))
    response.request = request
    if not response._url:
        response._url = str(request.url)
    return response


class HTTPTransport:
    """Courier's network path with httpx's transport options. ``retries``: how many times a
    request whose connection could not be made goes again (httpx's meaning). ``uds``: every
    connection goes to this Unix domain socket (httpx's; the Docker Engine API's
    ``HTTPTransport(uds="/var/run/docker.sock")`` with ``base_url="http://docker"``).
    ``local_address``: where connections come from ("0.0.0.0" for IPv4 only, an address of this
    machine, or an interface name)."""

    def __init__(self, verify=True, cert=None, trust_env=True, http1=True, http2=False, limits=None, proxy=None,
                 uds=None, local_address=None, retries=0, socket_options=None):
        if socket_options is not None:
            raise UsageError(_native.E_INVALID_ARGUMENT, "HTTPTransport(socket_options=...): Courier sets its sockets itself")
        self.client_options = dict(verify=verify, cert=cert, trust_env=trust_env, http1=http1, http2=http2, proxy=proxy)
        if limits is not None:
            self.client_options["limits"] = limits
        if uds is not None:
            self.client_options["unix_socket"] = uds
        if local_address is not None:
            self.client_options["local_address"] = local_address
        self.retries = int(retries)

    def request_options(self):
        """What each request through the transport carries (``retries`` as Courier's Retry)."""
        if not self.retries:
            return {}
        from ._retry import Retry
        return {"retry": Retry(self.retries, intervals=(0.0,))}

    def close(self):
        pass

    async def aclose(self):
        pass


AsyncHTTPTransport = HTTPTransport
