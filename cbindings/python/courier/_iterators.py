"""httpx's ways of reading a body, shared by ``Response`` (the body already in memory) and
``StreamedResponse`` (the body as it arrives): ``iter_bytes(chunk_size=)``, ``iter_text``,
``iter_lines``, ``iter_raw`` and their ``aiter_*`` forms, ``num_bytes_downloaded``, and
``content``/``text``/``json()`` once the body was read.

A class using it gives ``_pieces()`` (and ``_apieces()``): the body's pieces, once. Read twice
without ``read()`` in between, a stream raises StreamConsumed, as in httpx."""

import codecs

from ._errors import ResponseNotRead, StreamConsumed


class _Chunks:
    """Pieces in, chunks of exactly ``size`` bytes out (the last one shorter), or the pieces as
    they come when ``size`` is None; for the sync and the async readers alike."""

    def __init__(self, size):
        self.size = size
        self.held = bytearray()

    def feed(self, piece):
        if not self.size:
            return [piece] if piece else []
        self.held += piece
        out = []
        while len(self.held) >= self.size:
            out.append(bytes(self.held[:self.size]))
            del self.held[:self.size]
        return out

    def flush(self):
        held, self.held = self.held, bytearray()
        return [bytes(held)] if held else []


def _rechunk(pieces, chunk_size):
    chunks = _Chunks(chunk_size)
    for piece in pieces:
        yield from chunks.feed(piece)
    yield from chunks.flush()


class _Lines:
    """Text in, whole lines out (httpx's line splitting: \\n, \\r\\n and \\r end a line; the ends
    are not kept)."""

    def __init__(self):
        self.held = ""

    def feed(self, text):
        text = self.held + text
        self.held = ""
        lines = text.splitlines(keepends=True)
        # A line not ended yet, or a "\r" whose "\n" may follow, waits for more.
        if lines and (not lines[-1].endswith(("\n", "\r")) or lines[-1].endswith("\r")):
            self.held = lines.pop()
        return [line.rstrip("\r\n") for line in lines]

    def flush(self):
        held, self.held = self.held, ""
        return [line.rstrip("\r\n") for line in held.splitlines()] if held else []


class _Text:
    """Bytes in, text out in an encoding (a character split between two pieces is decoded
    whole): the sync and async text iterators' one decoder."""

    def __init__(self, decoder):
        self.decoder = decoder

    def feed(self, piece):
        text = self.decoder.decode(piece)
        return [text] if text else []

    def flush(self):
        tail = self.decoder.decode(b"", final=True)
        return [tail] if tail else []


class BodyIterators:
    """The reading methods (see the module's notes), and the two facts both kinds of response
    make on first use: the request and the URL."""

    #: The body once read (``read()``, or a response that was never streamed).
    _content = None
    #: What a client recorded of the request: a ``Request``, or (method, url, headers).
    _request = None
    _url = ""
    _url_object = None

    @property
    def request(self):
        """The request this response answers (a ``Request``), when a client sent it; made from
        what the client recorded when first asked (most callers never ask)."""
        if isinstance(self._request, tuple):
            from ._models import request_of
            self._request = request_of(self._request)
        return self._request

    @request.setter
    def request(self, request):
        self._request = request

    @property
    def url(self):
        """The URL that answered, after redirects (a ``URL``, equal to its string)."""
        if self._url_object is None:
            from ._urls import URL
            self._url_object = URL(self._url)
        return self._url_object
    _consumed = False
    _encoding = None
    #: Body bytes handed out so far (after Courier's decoding of content codings).
    num_bytes_downloaded = 0

    # What a class gives

    def _pieces(self):
        raise NotImplementedError

    async def _apieces(self):
        raise NotImplementedError
        yield b""

    # The text's charset

    @property
    def encoding(self):
        """The charset the text is decoded with: the one set here, else Content-Type's, else
        utf-8. Settable, as httpx's (``r.encoding = "latin-1"`` before ``r.text``)."""
        if self._encoding is not None:
            return self._encoding
        from ._response import charset_of
        return charset_of(self.headers.get("content-type")) or "utf-8"

    @encoding.setter
    def encoding(self, value):
        self._encoding = value
        self._text = None

    def _decoder(self):
        try:
            return codecs.getincrementaldecoder(self.encoding)(errors="replace")
        except LookupError:
            return codecs.getincrementaldecoder("utf-8")(errors="replace")

    # Bytes

    def _source(self):
        if self._content is not None:
            return [self._content]
        if self._consumed:
            raise StreamConsumed("Attempted to read or stream content, but the content has already been streamed.")
        self._consumed = True
        return self._counted(self._pieces())

    def _counted(self, pieces):
        for piece in pieces:
            self.num_bytes_downloaded += len(piece)
            yield piece

    def iter_bytes(self, chunk_size=None):
        """The body in pieces as they arrive, or of ``chunk_size`` bytes each."""
        yield from _rechunk(self._source(), chunk_size)

    def iter_raw(self, chunk_size=None):
        """The body's bytes as iter_bytes gives them: Courier decodes content codings (gzip, br,
        zstd, deflate) in the library; a request made with ``decompress=False`` gets them as sent."""
        yield from self.iter_bytes(chunk_size)

    def iter_text(self, chunk_size=None):
        """The body as text in ``encoding``, piece by piece (a character split between two pieces
        is decoded whole)."""
        text = _Text(self._decoder())
        for piece in self.iter_bytes(chunk_size):
            yield from text.feed(piece)
        yield from text.flush()

    def iter_lines(self):
        lines = _Lines()
        for text in self.iter_text():
            yield from lines.feed(text)
        yield from lines.flush()

    # The same for asyncio

    async def _asource(self):
        if self._content is not None:
            yield self._content
            return
        if self._consumed:
            raise StreamConsumed("Attempted to read or stream content, but the content has already been streamed.")
        self._consumed = True
        async for piece in self._apieces():
            self.num_bytes_downloaded += len(piece)
            yield piece

    async def aiter_bytes(self, chunk_size=None):
        chunks = _Chunks(chunk_size)
        async for piece in self._asource():
            for chunk in chunks.feed(piece):
                yield chunk
        for chunk in chunks.flush():
            yield chunk

    async def aiter_raw(self, chunk_size=None):
        async for piece in self.aiter_bytes(chunk_size):
            yield piece

    async def aiter_text(self, chunk_size=None):
        text = _Text(self._decoder())
        async for piece in self.aiter_bytes(chunk_size):
            for part in text.feed(piece):
                yield part
        for part in text.flush():
            yield part

    async def aiter_lines(self):
        lines = _Lines()
        async for text in self.aiter_text():
            for line in lines.feed(text):
                yield line
        for line in lines.flush():
            yield line

    # The whole body

    def read(self):
        """The whole body (kept: ``content``, ``text`` and ``json()`` use it after)."""
        if self._content is None:
            self._content = b"".join(self.iter_bytes())
        return self._content

    async def aread(self):
        if self._content is None:
            self._content = b"".join([piece async for piece in self.aiter_bytes()])
        return self._content

    @property
    def content(self):
        if self._content is None:
            raise ResponseNotRead("Attempted to access streaming response content, without having called `read()`.")
        return self._content
