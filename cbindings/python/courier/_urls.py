"""``URL`` and ``QueryParams`` as httpx has them: a parsed URL whose parts are attributes, that
compares equal to its string, and whose changed copies come from ``copy_with``; and the query as
an immutable multi-valued mapping.

Parsing is the standard library's (``urllib.parse``); the library itself parses again, by its
own rules, what is sent."""

from collections.abc import Mapping


def _parse():
    """urllib.parse, loaded on first use (a program that never parses a URL here does not pay
    for it at import)."""
    import urllib.parse
    return urllib.parse

_DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}


def _text(value):
    return "" if value is None else ("true" if value is True else "false" if value is False else str(value))


class QueryParams(Mapping):
    """A URL's query: ``params["a"]`` is the first value of ``a``, ``get_list("a")`` every one,
    ``multi_items()`` the pairs in order. Built from a string, a dict (a list value repeats its
    key), a list of pairs or another QueryParams. Immutable: ``set``, ``add``, ``remove`` and
    ``merge`` return changed copies."""

    __slots__ = ("_pairs",)

    def __init__(self, *args, **kwargs):
        value = args[0] if args else kwargs
        if value is None:
            value = []
        if isinstance(value, (bytes, bytearray)):
            value = value.decode("ascii")
        if isinstance(value, str):
            pairs = _parse().parse_qsl(value.lstrip("?"), keep_blank_values=True)
        elif isinstance(value, QueryParams):
            pairs = value.multi_items()
        else:
            items = value.items() if hasattr(value, "items") else value
            pairs = []
            for name, one in items:
                for each in (one if isinstance(one, (list, tuple)) else [one]):
                    pairs.append((str(name), _text(each)))
        self._pairs = [(str(k), str(v)) for k, v in pairs]

    def keys(self):
        return list(dict.fromkeys(k for k, _ in self._pairs))

    def values(self):
        return [self[k] for k in self.keys()]

    def items(self):
        return [(k, self[k]) for k in self.keys()]

    def multi_items(self):
        return list(self._pairs)

    def get_list(self, key):
        return [v for k, v in self._pairs if k == str(key)]

    def get(self, key, default=None):
        values = self.get_list(key)
        return values[0] if values else default

    def set(self, key, value):
        return QueryParams([(k, v) for k, v in self._pairs if k != str(key)] + [(str(key), _text(value))])

    def add(self, key, value):
        return QueryParams(self._pairs + [(str(key), _text(value))])

    def remove(self, key):
        return QueryParams([(k, v) for k, v in self._pairs if k != str(key)])

    def merge(self, params=None):
        """A copy with ``params``' keys replacing these (httpx's merge)."""
        other = QueryParams(params)
        replaced = set(other.keys())
        return QueryParams([(k, v) for k, v in self._pairs if k not in replaced] + other.multi_items())

    def __getitem__(self, key):
        values = self.get_list(key)
        if not values:
            raise KeyError(key)
        return values[0]

    def __contains__(self, key):
        return any(k == key for k, _ in self._pairs)

    def __iter__(self):
        return iter(self.keys())

    def __len__(self):
        return len(self.keys())

    def __bool__(self):
        return bool(self._pairs)

    def __eq__(self, other):
        if not isinstance(other, QueryParams):
            try:
                other = QueryParams(other)
            except (TypeError, ValueError):
                return NotImplemented
        return sorted(self._pairs) == sorted(other._pairs)

    __hash__ = None

    def __str__(self):
        return _parse().urlencode(self._pairs)

    def __repr__(self):
        return "QueryParams(%r)" % str(self)


class URL:
    """A URL: ``scheme``, ``host`` (lower-cased, IDNA-decoded as given), ``port`` (None for the
    scheme's default), ``path``, ``query`` (bytes), ``params`` (QueryParams), ``fragment``,
    ``raw_path`` (path and query, bytes), ``username``/``password``/``userinfo``. Equal to
    another URL or to its string; ``copy_with(**parts)`` and ``join(relative)`` make others."""

    __slots__ = ("_parts", "_string")

    def __init__(self, url="", *, params=None, **parts):
        if isinstance(url, URL):
            url = str(url)
        elif isinstance(url, bytes):
            url = url.decode("ascii")
        elif not isinstance(url, str):
            raise TypeError("Invalid type for url. Expected str or URL, got %s: %r" % (type(url).__name__, url))
        split = _parse().urlsplit(url)
        self._parts = {"scheme": split.scheme, "netloc": split.netloc, "path": split.path, "query": split.query,
                       "fragment": split.fragment}
        if parts:
            self._apply(parts)
        if params is not None:
            self._parts["query"] = str(QueryParams(params))
        self._string = _parse().urlunsplit((self._parts["scheme"], self._parts["netloc"], self._parts["path"],
                                   self._parts["query"], self._parts["fragment"]))

    def _apply(self, parts):
        known = {"scheme", "host", "port", "path", "query", "fragment", "username", "password", "userinfo",
                 "netloc", "raw_path", "params"}
        unknown = set(parts) - known
        if unknown:
            raise TypeError("%r is an invalid keyword argument for URL()" % sorted(unknown)[0])
        split = _parse().urlsplit(_parse().urlunsplit(("x", self._parts["netloc"], "", "", "")))
        username = parts.get("username", split.username)
        password = parts.get("password", split.password)
        if "userinfo" in parts:
            info = parts["userinfo"]
            info = info.decode() if isinstance(info, bytes) else info
            username, _, password = info.partition(":")
            password = password or None
        host = parts.get("host", split.hostname or "")
        port = parts.get("port", split.port)
        if "netloc" in parts:
            netloc = parts["netloc"].decode() if isinstance(parts["netloc"], bytes) else parts["netloc"]
        else:
            netloc = ("[%s]" % host) if ":" in host else host
            if port is not None:
                netloc += ":%d" % int(port)
            if username:
                netloc = _parse().quote(username, safe="") + (":" + _parse().quote(password, safe="") if password else "") + "@" + netloc
        self._parts["netloc"] = netloc
        if "scheme" in parts:
            self._parts["scheme"] = parts["scheme"]
        if "raw_path" in parts:
            raw = parts["raw_path"].decode() if isinstance(parts["raw_path"], bytes) else parts["raw_path"]
            self._parts["path"], _, self._parts["query"] = raw.partition("?")
        if "path" in parts:
            self._parts["path"] = _parse().quote(parts["path"], safe="/:@!$&'()*+,;=%~-._")
        if "query" in parts:
            query = parts["query"]
            self._parts["query"] = query.decode() if isinstance(query, bytes) else query
        if "params" in parts:
            self._parts["query"] = str(QueryParams(parts["params"]))
        if "fragment" in parts:
            self._parts["fragment"] = parts["fragment"]

    @property
    def scheme(self):
        return self._parts["scheme"].lower()

    @property
    def _split(self):
        return _parse().urlsplit(self._string)

    @property
    def host(self):
        return (self._split.hostname or "").lower()

    @property
    def port(self):
        """The port when the URL names one that is not the scheme's default, else None."""
        port = self._split.port
        return None if port == _DEFAULT_PORTS.get(self.scheme) else port

    @property
    def netloc(self):
        return self._parts["netloc"].encode("ascii")

    @property
    def username(self):
        return self._split.username or ""

    @property
    def password(self):
        return self._split.password or ""

    @property
    def userinfo(self):
        netloc = self._parts["netloc"]
        return netloc.rpartition("@")[0].encode("ascii") if "@" in netloc else b""

    @property
    def path(self):
        return _parse().unquote(self._parts["path"]) or "/"

    @property
    def query(self):
        return self._parts["query"].encode("ascii")

    @property
    def params(self):
        return QueryParams(self._parts["query"])

    @property
    def raw_path(self):
        path = self._parts["path"] or "/"
        return (path + ("?" + self._parts["query"] if self._parts["query"] else "")).encode("ascii")

    @property
    def fragment(self):
        return self._parts["fragment"]

    @property
    def is_absolute_url(self):
        return bool(self._parts["scheme"] and self._parts["netloc"])

    @property
    def is_relative_url(self):
        return not self.is_absolute_url

    def copy_with(self, **parts):
        return URL(self._string, **parts)

    def copy_set_param(self, key, value=None):
        return self.copy_with(params=self.params.set(key, value))

    def copy_add_param(self, key, value=None):
        return self.copy_with(params=self.params.add(key, value))

    def copy_remove_param(self, key):
        return self.copy_with(params=self.params.remove(key))

    def copy_merge_params(self, params):
        return self.copy_with(params=self.params.merge(params))

    def join(self, url):
        """The URL ``url`` (relative or absolute) resolves to from this one (RFC 3986)."""
        return URL(_parse().urljoin(self._string, str(url)))

    def __str__(self):
        return self._string

    def __eq__(self, other):
        return isinstance(other, (URL, str)) and self._string == str(other)

    def __hash__(self):
        return hash(self._string)

    def __repr__(self):
        return "URL(%r)" % self._string
