"""``Request`` as httpx has it: a method, a ``URL``, ``Headers`` and a body, built by the caller
(``courier.Request("GET", url)``, ``client.build_request(...)``) and sent with ``client.send``,
and found again as ``response.request`` and ``exc.request``.

Bodies stay as the caller gave them until the request is sent, so a file part or an iterator is
still streamed from disk by the library; ``content`` is the bytes of a body that has them
(bytes, text, form data, JSON), and raises RequestNotRead for a stream until ``read()``."""

from ._errors import RequestNotRead
from ._response import Headers
from ._urls import URL, QueryParams


class Request:
    """``Request(method, url, *, params=, headers=, cookies=, content=, data=, files=, json=,
    extensions=)``: what ``client.send(request)`` sends."""

    def __init__(self, method, url, *, params=None, headers=None, cookies=None, content=None, data=None, files=None,
                 json=None, stream=None, extensions=None):
        self.method = method.decode("ascii").upper() if isinstance(method, bytes) else str(method).upper()
        url = URL(url)
        if params is not None:
            url = url.copy_merge_params(params)
        self.url = url
        self.headers = Headers(headers or ())
        if cookies:
            pairs = cookies.items() if hasattr(cookies, "items") else cookies
            self.headers["Cookie"] = "; ".join("%s=%s" % (name, value) for name, value in pairs)
        self.extensions = dict(extensions or {})
        #: The body as the library will take it (``content``/``data``/``files``/``json`` of the
        #: calls), kept for sending.
        self._body = {}
        self._content = None
        self.stream = stream
        if content is not None:
            if isinstance(content, str):
                content = content.encode("utf-8")
            if isinstance(content, (bytes, bytearray, memoryview)):
                self._content = bytes(content)
            self._body["content"] = content
        elif json is not None:
            import json as json_module
            self._content = json_module.dumps(json, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
            self._body["content"] = self._content
            self.headers.setdefault("Content-Type", "application/json")
        elif files is not None:
            self._body["files"] = files
            if data is not None:
                self._body["data"] = data
        elif data is not None:
            if isinstance(data, (bytes, str)):
                self._content = data.encode() if isinstance(data, str) else data
                self._body["content"] = self._content
            else:
                self._content = str(QueryParams(data)).encode("ascii")
                self._body["content"] = self._content
                self.headers.setdefault("Content-Type", "application/x-www-form-urlencoded")
        elif stream is not None:
            self._body["content"] = stream
        if self._content is not None:
            self.headers.setdefault("Content-Length", str(len(self._content)))

    @property
    def content(self):
        """The body's bytes; RequestNotRead for a streamed body not read yet."""
        if self._content is None:
            if not self._body:
                return b""
            raise RequestNotRead("Attempted to access streaming request content, without having called `read()`.")
        return self._content

    def read(self):
        """Reads a streamed body into ``content`` (then sent from memory)."""
        if self._content is None:
            body = self._body.get("content")
            if body is None and not self._body:
                self._content = b""
            elif body is not None and not isinstance(body, (bytes, bytearray)):
                self._content = b"".join(bytes(piece) for piece in body)
                self._body["content"] = self._content
            elif body is not None:
                self._content = bytes(body)
            else:
                raise RequestNotRead("a multipart body is streamed from its files when sent")
        return self._content

    async def aread(self):
        if self._content is None and hasattr(self._body.get("content"), "__aiter__"):
            self._content = b"".join([bytes(piece) async for piece in self._body["content"]])
            self._body["content"] = self._content
        return self.read()

    def _send_options(self):
        """The engine call's arguments for this request (its headers, its body as given)."""
        options = dict(self._body)
        options["headers"] = dict(self.headers.items())
        return options

    def __repr__(self):
        return "<Request(%r, %r)>" % (self.method, str(self.url))


def request_of(value):
    """A ``Request`` from what a client recorded: a Request, or (method, url, headers) made into
    one when first asked (most callers never ask, so most requests never pay for it)."""
    if isinstance(value, tuple):
        method, url, headers = value
        return Request(method, url, headers=headers)
    return value
