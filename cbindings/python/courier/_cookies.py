"""Cookie jars for the Python binding: ``CookieJar()`` shared by engines and requests
(``Engine(cookies=jar)`` or ``cookies=jar`` on one request). Cookies a response sets are stored
and sent back as RFC 6265bis says; ``load``/``save`` read and write curl's Netscape cookie file.

A jar is also httpx's ``Cookies`` (``courier.Cookies`` is the same class): a mapping by name,
``set(name, value, domain=, path=)``, ``get(name, domain=, path=)`` (CookieConflict when the name
is set for several places), ``delete``, ``update``. Cookies set without a domain go with every
request of the client; the others as their domain and path say. (The cookies themselves live in
the library's jar; the mapping reads and writes them through its cookie file format.)"""
import ctypes
import os
from collections.abc import MutableMapping

from . import _native
from ._native import lib


class CookieJar(MutableMapping):
    def __init__(self, path=None):
        """``path``: a cookie file to read at once (a missing file is an empty jar); or, as
        httpx's ``Cookies(...)``, a dict or list of (name, value) pairs set for every host."""
        #: Cookies set without a domain: sent with every request of the client (httpx's habit),
        #: put in the jar for each host the first time a request goes there (`_seed`).
        self._anywhere = {}
        self._seeded = set()
        self._handle = _native.cookiejar_p()
        code = lib.courier_cookiejar_create(ctypes.byref(self._handle))
        if code:
            from ._support import _error
            raise _error(code)
        if isinstance(path, (dict, list, tuple, CookieJar)):
            self.update(path)
        elif path is not None:
            self.load(path)

    def _call(self, code, what):
        if code:
            from ._support import _error
            raise _error(code, what)

    def load(self, path):
        """Adds the cookies of a Netscape cookie file (curl's -b format)."""
        self._call(lib.courier_cookiejar_load(self._handle, os.fspath(path).encode()), "loading %s" % path)

    def save(self, path):
        """Writes every cookie to a Netscape cookie file (curl's -c format), atomically."""
        self._call(lib.courier_cookiejar_save(self._handle, os.fspath(path).encode()), "saving %s" % path)

    def clear(self, domain=None, path=None):
        """Removes every cookie, or those of ``domain`` (and ``path``)."""
        if domain is None and path is None:
            self._anywhere.clear()
            self._call(lib.courier_cookiejar_clear(self._handle), "clearing the jar")
            return
        self._replace([c for c in self._cookies() if not _matches(c, None, domain, path)])

    # httpx's Cookies

    def _cookies(self):
        """Every cookie as a dict (domain, path, secure, expires, name, value, http_only)."""
        import tempfile
        with tempfile.TemporaryDirectory() as directory:
            path = os.path.join(directory, "cookies")
            self.save(path)
            with open(path, encoding="utf-8") as f:
                lines = f.read().splitlines()
        found = [dict(domain="", path="/", secure=False, expires=0, name=name, value=value, http_only=False)
                 for name, value in self._anywhere.items()]
        for line in lines:
            http_only = line.startswith("#HttpOnly_")
            if http_only:
                line = line[len("#HttpOnly_"):]
            fields = line.split("\t")
            if line.startswith("#") or len(fields) != 7:
                continue
            domain, _, path, secure, expires, name, value = fields
            found.append(dict(domain=domain.lstrip("."), path=path, secure=secure == "TRUE", expires=int(expires or 0),
                              name=name, value=value, http_only=http_only, subdomains=domain.startswith(".")))
        return found

    def _replace(self, cookies):
        """Makes the jar hold exactly ``cookies`` (as ``_cookies`` gives them)."""
        anywhere = {c["name"]: c["value"] for c in cookies if not c["domain"]}
        if anywhere != self._anywhere:
            self._seeded.clear()
        self._anywhere = anywhere
        lines = []
        for c in cookies:
            if not c["domain"]:
                continue
            domain = ("." if c.get("subdomains") else "") + c["domain"]
            lines.append("\t".join([("#HttpOnly_" if c.get("http_only") else "") + domain,
                                    "TRUE" if c.get("subdomains") else "FALSE", c["path"] or "/",
                                    "TRUE" if c["secure"] else "FALSE", str(c["expires"]), c["name"], c["value"]]))
        self._call(lib.courier_cookiejar_clear(self._handle), "clearing the jar")
        if lines:
            import tempfile
            with tempfile.TemporaryDirectory() as directory:
                path = os.path.join(directory, "cookies")
                with open(path, "w", encoding="utf-8") as f:
                    f.write("\n".join(lines) + "\n")
                self.load(path)

    def set(self, name, value, domain="", path="/"):
        """Sets a cookie (replacing one of the same name, domain and path); without a domain it
        goes with every request of the client."""
        if not domain:
            self._anywhere[name] = value
            self._seeded.clear()
            return
        kept = [c for c in self._cookies() if not (c["name"] == name and c["domain"] == domain.lstrip(".") and c["path"] == path)]
        kept.append(dict(domain=domain.lstrip("."), path=path, secure=False, expires=0, name=name, value=value,
                         http_only=False, subdomains=domain.startswith(".")))
        self._replace(kept)

    def get(self, name, default=None, domain=None, path=None):
        """The value of ``name`` (limited to ``domain``/``path`` when given); CookieConflict when
        several places set it to different values."""
        values = {c["value"] for c in self._cookies() if _matches(c, name, domain, path)}
        if len(values) > 1:
            from ._errors import CookieConflict
            raise CookieConflict("Multiple cookies exist with name=%s" % name)
        return values.pop() if values else default

    def delete(self, name, domain=None, path=None):
        self._replace([c for c in self._cookies() if not _matches(c, name, domain, path)])

    def __getitem__(self, name):
        value = self.get(name)
        if value is None:
            raise KeyError(name)
        return value

    def __setitem__(self, name, value):
        self.set(name, value)

    def __delitem__(self, name):
        if self.get(name) is None:
            raise KeyError(name)
        self.delete(name)

    def __iter__(self):
        return iter(list(dict.fromkeys(c["name"] for c in self._cookies())))

    def __contains__(self, name):
        return any(c["name"] == name for c in self._cookies())

    def __bool__(self):
        return len(self) > 0

    def __eq__(self, other):
        return self is other

    __hash__ = object.__hash__

    def __repr__(self):
        return "<Cookies[%s]>" % ", ".join("<Cookie %s=%s for %s>" % (c["name"], c["value"], c["domain"] or "any host")
                                           for c in self._cookies())

    def update(self, cookies=(), **more):
        if isinstance(cookies, CookieJar):
            self._replace(self._cookies() + [c for c in cookies._cookies()])
            return
        items = cookies.items() if hasattr(cookies, "items") else cookies
        for name, value in list(items) + list(more.items()):
            self.set(name, value)

    def _seed(self, host):
        """Puts the cookies set without a domain in the jar for ``host`` (once per host and
        change), so the jar sends them with its own, as the server's."""
        if not self._anywhere or host in self._seeded:
            return
        self._seeded.add(host)
        stored = [c for c in self._cookies() if c["domain"]]
        kept = [c for c in stored if not (c["domain"] == host and c["name"] in self._anywhere and c["path"] == "/")]
        kept += [dict(domain=host, path="/", secure=False, expires=0, name=name, value=value, http_only=False, subdomains=False)
                 for name, value in self._anywhere.items()]
        self._replace(kept + [dict(domain="", path="/", secure=False, expires=0, name=n, value=v)
                              for n, v in self._anywhere.items()])

    def __len__(self):
        return lib.courier_cookiejar_count(self._handle) + len(self._anywhere)

    def close(self):
        if self._handle:
            lib.courier_cookiejar_free(self._handle)
            self._handle = None

    def __del__(self):
        self.close()


def _matches(cookie, name, domain, path):
    return ((name is None or cookie["name"] == name) and (domain is None or cookie["domain"] == domain.lstrip("."))
            and (path is None or cookie["path"] == path))


#: httpx's name for a jar.
Cookies = CookieJar


def from_set_cookie(fields, host):
    """Set-Cookie field values, as set by ``host``, as the cookies ``CookieJar._replace`` takes."""
    import time
    from http.cookies import CookieError, SimpleCookie
    found = []
    for field in fields:
        parsed = SimpleCookie()
        try:
            parsed.load(field)
        except CookieError:
            continue
        for name, morsel in parsed.items():
            expires = 0
            if morsel["max-age"]:
                try:
                    expires = int(time.time()) + int(morsel["max-age"])
                except ValueError:
                    pass
            elif morsel["expires"]:
                from email.utils import parsedate_to_datetime
                try:
                    expires = int(parsedate_to_datetime(morsel["expires"]).timestamp())
                except (TypeError, ValueError):
                    pass
            domain = morsel["domain"] or host
            found.append(dict(domain=domain.lstrip("."), subdomains=bool(morsel["domain"]), path=morsel["path"] or "/",
                              secure=bool(morsel["secure"]), expires=expires, name=name, value=morsel.value,
                              http_only=bool(morsel["httponly"])))
    return found
