"""httpx's authentication classes: ``Auth`` with its ``auth_flow`` generator protocol (a request
goes out, its response comes back in, another request may follow), and ``BasicAuth``,
``DigestAuth`` (RFC 7616: MD5, SHA-256 and their -sess forms, qop "auth"), ``NetRCAuth`` and
``FunctionAuth`` (``auth=callable``) built on it.

A client drives the flow (``_sending.py``); ``(user, password)`` tuples and ``Bearer`` still go
to the library itself, which answers challenges on its own thread."""

import os


class Auth:
    """Subclass and write ``auth_flow(self, request)``: change the request, ``yield`` it to get
    its response, and ``yield`` another request to send that one (a challenge's answer).
    ``requires_request_body`` / ``requires_response_body`` read the bodies before the flow
    sees them, as in httpx."""

    requires_request_body = False
    requires_response_body = False

    def auth_flow(self, request):
        yield request

    def sync_auth_flow(self, request):
        if self.requires_request_body:
            request.read()
        flow = self.auth_flow(request)
        request = next(flow)
        while True:
            response = yield request
            if self.requires_response_body:
                response.read()
            try:
                request = flow.send(response)
            except StopIteration:
                break

    async def async_auth_flow(self, request):
        if self.requires_request_body:
            await request.aread()
        flow = self.auth_flow(request)
        request = next(flow)
        while True:
            response = yield request
            if self.requires_response_body:
                await response.aread()
            try:
                request = flow.send(response)
            except StopIteration:
                break


class FunctionAuth(Auth):
    """``auth=function``: the function gets each request and returns it (changed)."""

    def __init__(self, function):
        self._function = function

    def auth_flow(self, request):
        yield self._function(request)


class BasicAuth(Auth):
    """``Authorization: Basic`` with every request."""

    def __init__(self, username, password=""):
        self._header = _basic(username, password)

    def auth_flow(self, request):
        request.headers["Authorization"] = self._header
        yield request


class NetRCAuth(Auth):
    """Basic credentials for the request's host from a netrc file (``file``, else ``$NETRC``,
    else ``~/.netrc``); a host the file does not name goes without."""

    def __init__(self, file=None):
        import netrc
        self._netrc = netrc.netrc(file or os.environ.get("NETRC") or None)

    def auth_flow(self, request):
        found = self._netrc.authenticators(request.url.host)
        if found is not None and found[2] is not None:
            request.headers["Authorization"] = _basic(found[0], found[2])
        yield request


class DigestAuth(Auth):
    """HTTP Digest (RFC 7616): the request goes without credentials; a 401 with a Digest
    challenge is answered once, with the nonce count kept across requests to the same nonce."""

    _ALGORITHMS = {"MD5": "md5", "MD5-SESS": "md5", "SHA-256": "sha256", "SHA-256-SESS": "sha256", "SHA": "sha1",
                   "SHA-SESS": "sha1"}

    def __init__(self, username, password):
        self._username = username.encode() if isinstance(username, str) else username
        self._password = password.encode() if isinstance(password, str) else password
        self._challenge = None
        self._count = 0

    @property
    def login(self):
        """(user, password) as bytes: what an ``Engine`` request's ``auth=DigestAuth(...)`` gives
        the library, which answers the challenge itself."""
        return self._username, self._password

    def auth_flow(self, request):
        if self._challenge is not None:
            request.headers["Authorization"] = self._authorization(request)
        response = yield request
        if response.status_code != 401:
            return
        fields = [v for v in response.headers.get_list("www-authenticate") if v.lower().startswith("digest ")]
        if not fields:
            return
        challenge = _parse_challenge(fields[0][len("digest "):])
        if not challenge.get("nonce"):
            # (A challenge without a nonce cannot be answered: the 401 is the result.)
            return
        self._challenge = challenge
        self._count = 0
        request.headers["Authorization"] = self._authorization(request)
        yield request

    def _authorization(self, request):
        import hashlib
        import time
        challenge = self._challenge
        algorithm = challenge.get("algorithm", "MD5").upper()
        digest = getattr(hashlib, self._ALGORITHMS.get(algorithm, ""), None)
        if digest is None:
            from ._errors import ProtocolError
            raise ProtocolError(10, "Digest algorithm %s is not supported" % algorithm)

        def hashed(data):
            return digest(data).hexdigest().encode()

        realm, nonce = challenge.get("realm", "").encode(), challenge["nonce"].encode()
        self._count += 1
        count = b"%08x" % self._count
        cnonce = hashlib.sha1(b"%d%s%s" % (self._count, nonce, os.urandom(8) + str(time.time()).encode())).hexdigest()[:16].encode()
        first = hashed(b":".join((self._username, realm, self._password)))
        if algorithm.endswith("-SESS"):
            first = hashed(b":".join((first, nonce, cnonce)))
        path = request.url.raw_path
        second = hashed(b":".join((request.method.encode(), path)))
        qops = [q.strip() for q in challenge.get("qop", "").split(",") if q.strip()]
        if qops and "auth" not in qops:
            from ._errors import ProtocolError
            raise ProtocolError(10, "Digest qop %s is not supported" % challenge.get("qop"))
        if qops:
            answer = hashed(b":".join((first, nonce, count, cnonce, b"auth", second)))
        else:
            answer = hashed(b":".join((first, nonce, second)))
        parts = [("username", self._username.decode()), ("realm", realm.decode()), ("nonce", nonce.decode()),
                 ("uri", path.decode()), ("response", answer.decode()), ("algorithm", challenge.get("algorithm", "MD5"))]
        if "opaque" in challenge:
            parts.append(("opaque", challenge["opaque"]))
        quoted = ", ".join('%s="%s"' % pair for pair in parts)
        if qops:
            quoted += ", qop=auth, nc=%s, cnonce=\"%s\"" % (count.decode(), cnonce.decode())
        return "Digest " + quoted


def _basic(username, password):
    import base64
    user = username.encode("latin-1") if isinstance(username, str) else username
    secret = password.encode("latin-1") if isinstance(password, str) else password
    return "Basic " + base64.b64encode(user + b":" + secret).decode("ascii")


def _parse_challenge(text):
    """A challenge's parameters (``realm="x", nonce="y", qop="auth,auth-int"``) as a dict."""
    found, key, value, quoted, i = {}, "", "", False, 0
    reading_key = True
    while i < len(text):
        c = text[i]
        if reading_key:
            if c == "=":
                reading_key = False
            elif c not in ", ":
                key += c
        elif quoted:
            if c == "\\" and i + 1 < len(text):
                i += 1
                value += text[i]
            elif c == '"':
                quoted = False
            else:
                value += c
        elif c == '"' and not value:
            quoted = True
        elif c == ",":
            found[key.strip().lower()] = value.strip()
            key, value, reading_key = "", "", True
        else:
            value += c
        i += 1
    if key:
        found[key.strip().lower()] = value.strip()
    return found


def auth_of(auth):
    """A client's or call's ``auth=`` as an ``Auth`` (a callable becomes FunctionAuth), or as
    given when the library handles it itself (None, ``(user, password)``, ``Bearer``)."""
    if auth is None or isinstance(auth, (Auth, tuple)):
        return auth
    from ._auth import Bearer
    if isinstance(auth, Bearer):
        return auth
    if callable(auth):
        return FunctionAuth(auth)
    raise TypeError("Invalid 'auth' argument: %r" % (auth,))


def as_flow(auth):
    """Credentials for a request Python sends (hooks, a mock transport): an ``Auth`` as it is;
    ``(user, password)`` as BasicAuth; ``Bearer`` as its header; None as None."""
    if auth is None or isinstance(auth, Auth):
        return auth
    if isinstance(auth, tuple):
        return BasicAuth(*auth)
    from ._auth import field_value
    header = field_value(auth)
    return FunctionAuth(lambda request: (request.headers.__setitem__("Authorization", header), request)[1])
