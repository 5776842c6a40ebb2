"""What ``Client`` and ``AsyncClient`` share: the settings every request carries (httpx's client
attributes, readable and settable), merging them into a call's arguments, and ``build_request``."""

from ._auth_flows import Auth, auth_of
from ._cookies import CookieJar
from ._errors import UsageError
from ._limits import tls_options_of
from ._models import Request
from ._proxy import Proxy
from ._sending import DEFAULT_MAX_REDIRECTS, event_hooks_of
from ._transports import HTTPTransport
from ._response import Headers
from ._timeouts import _UNSET, DEFAULT_TIMEOUT_SECONDS, Timeout, _limits, _pairs
from ._urls import URL, QueryParams
from . import _native


class _Settings:
    """What a client applies to each request, merged with the request's own arguments."""

    def __init__(self, headers, params, cookies, auth, timeout, follow_redirects, max_redirects, verify, cert):
        self.headers = Headers(headers or ())
        self.params = QueryParams(params)
        self.cookies = cookies
        self.auth = auth
        self.timeout = timeout
        self.follow_redirects = follow_redirects
        self.max_redirects = max_redirects
        self.verify = verify
        self.cert = cert

    def options(self, headers, cookies, auth, timeout, follow_redirects, extra):
        options = dict(extra)
        merged = self.headers
        if headers:
            merged = Headers(merged)
            for name, value in _field_pairs(headers):
                merged[name] = value
        if isinstance(cookies, dict) and cookies:
            merged = Headers(merged)
            merged["Cookie"] = "; ".join("%s=%s" % item for item in cookies.items())
            cookies = None
        jar = cookies if cookies is not None else self.cookies
        if jar is not None:
            options["cookies"] = jar
        options["headers"] = merged
        chosen = self.auth if auth is _UNSET else auth
        if chosen is not None:
            options["auth"] = chosen
        # The client's timeouts, redirect rules, HTTP version and TLS settings are its engine's
        # defaults (`engine_defaults`): a call carries only what it changes.
        if timeout is not _UNSET:
            limits = _limits(timeout)
            options["timeouts"] = limits if limits is not None else dict.fromkeys(("connect", "first_byte", "idle", "send", "queue", "total"))
        if follow_redirects is not _UNSET:
            options["follow_redirects"] = follow_redirects
            if self.max_redirects is not None:
                options["max_redirects"] = self.max_redirects
        verify = options.pop("verify", _UNSET)
        if isinstance(verify, str):
            # httpx's verify=path: that bundle, not the system's as well.
            options["cafile"] = verify
            options["system_roots"] = False
        elif verify is not _UNSET and not verify:
            options["verify"] = False
        return options


def _jar_of(cookies):
    """A client's jar from httpx's ``cookies=``: a CookieJar as it is, else a new one holding
    what was given (a dict, pairs, None)."""
    if isinstance(cookies, CookieJar):
        return cookies
    jar = CookieJar()
    jar.update(cookies or {})
    return jar


def _environment_http_proxy():
    """httpx's proxy for http:// URLs where it differs from curl's: ``(proxy, no_proxy)`` when
    only the upper-case ``HTTP_PROXY`` names one (httpx reads it through urllib, which drops it in
    a CGI program; curl never reads it), else None. Every other variable the engine reads itself,
    the same way as httpx."""
    import os
    if os.environ.get("http_proxy") or not os.environ.get("HTTP_PROXY"):
        return None
    from urllib.request import getproxies_environment
    found = getproxies_environment()
    return (found["http"], found.get("no", "")) if found.get("http") else None


class _Base:
    def __init__(self, base_url, headers, params, cookies, auth, timeout, follow_redirects, max_redirects, verify,
                 cert, proxy, trust_env, engine_options, http1=True, http2=False, event_hooks=None, transport=None,
                 limits=None, mounts=None, asynchronous=False):
        if mounts:
            raise UsageError(_native.E_INVALID_ARGUMENT, "mounts=: a Courier client has one transport (transport=)")
        if isinstance(transport, HTTPTransport):
            # (As httpx: the transport's own options configure the network, not the client's.)
            options = transport.client_options
            verify, cert, trust_env, http1, http2 = (options["verify"], options["cert"], options["trust_env"],
                                                     options["http1"], options["http2"])
            proxy = options["proxy"] if options["proxy"] is not None else proxy
            limits = options.get("limits", limits)
            for name in ("unix_socket", "local_address"):
                if name in options:
                    engine_options = dict(engine_options, **{name: options[name]})
            self._transport_options = transport.request_options()
            transport = None
        else:
            self._transport_options = {}
        if not http1 and not http2:
            raise ValueError("http1 and http2 cannot both be False")
        if isinstance(proxy, Proxy):
            proxy, proxy_verify = proxy.engine_arguments()
            if proxy_verify is not True:
                engine_options = dict(engine_options, proxy_verify=proxy_verify)
        # httpx's switches: HTTP/1.1 only unless http2=True (then h2 where the server agrees by
        # ALPN; with http1=False, HTTP/2 or nothing).
        self._http_version = ("2" if http1 else "2-only") if http2 else "1.1"
        jar = _jar_of(cookies)
        #: httpx's default, as this client's own object (the queue limit is left out of it).
        self._default_timeout = Timeout(DEFAULT_TIMEOUT_SECONDS)
        if timeout is _UNSET:
            timeout = self._default_timeout
        if trust_env and verify is True:
            # httpx's trust_env: SSL_CERT_FILE, else SSL_CERT_DIR, names the trusted certificates.
            # (When it names the system's own bundle, the library looks roots up in the system's
            # hashed directory instead of parsing the bundle: see SystemTrustRoots.)
            import os
            verify = os.environ.get("SSL_CERT_FILE") or os.environ.get("SSL_CERT_DIR") or True
        verify, extra_tls = tls_options_of(verify)
        self._settings = _Settings(headers, params, jar, auth, timeout, follow_redirects, max_redirects, verify, cert)
        self._settings.tls = extra_tls
        self._base_url = URL(base_url) if base_url else None
        self._engine_arguments = dict(base=str(base_url) if base_url else None, accepted_status=(0, 1000),
                                      proxy=proxy, trust_env=trust_env, **engine_options)
        _check_engine_arguments(self._engine_arguments)
        #: A MockTransport (or any object with httpx's handle_request): requests go to it.
        self._transport = transport
        self._mock = transport is not None
        self._event_hooks = event_hooks_of(event_hooks, asynchronous)
        self._asynchronous = asynchronous
        self._limits = limits
        self._limited_hosts = set()
        self._http_proxy = _environment_http_proxy() if trust_env and proxy is None else None
        self._closed = False

    @property
    def event_hooks(self):
        """``{"request": [...], "response": [...]}``: called with each request before it goes and
        each response as it arrives (before the body is read when streamed)."""
        return self._event_hooks

    @event_hooks.setter
    def event_hooks(self, hooks):
        self._event_hooks = event_hooks_of(hooks, self._asynchronous)

    def _call_sent_by_python(self, auth):
        """Whether a call whose ``auth=`` is ``auth`` (``_UNSET``: the client's) goes through
        ``_sending``. The usual answer, no (no auth, hooks or mock), is found without converting
        the auth: this runs for every call."""
        chosen = self._settings.auth if auth is _UNSET else auth
        if chosen is None and not self._mock and not self._event_hooks["request"] and not self._event_hooks["response"]:
            return False
        return self._python_sends(auth_of(chosen))

    def _python_sends(self, auth):
        """Whether a request goes through ``_sending`` (hooks, an Auth flow, a mock transport)."""
        return self._mock or bool(self._event_hooks["request"] or self._event_hooks["response"]) or isinstance(auth, Auth)

    def _max_redirects(self):
        return self._settings.max_redirects if self._settings.max_redirects is not None else DEFAULT_MAX_REDIRECTS

    def _apply_limits(self, url):
        """``Limits(max_connections=)`` as the per-host limit of each host the client talks to
        (the queue is the process's: the limit holds for every caller of that host)."""
        host = self._merge_url(url).host
        if host and host not in self._limited_hosts:
            self._limited_hosts.add(host)
            from ._queue import set_host_limit
            set_host_limit(host, self._limits.max_connections)

    # httpx's client attributes, readable and settable

    @property
    def headers(self):
        """The fields every request carries (a mutable ``Headers``)."""
        return self._settings.headers

    @headers.setter
    def headers(self, headers):
        self._settings.headers = Headers(headers or ())

    @property
    def params(self):
        """The query parameters every request carries (a ``QueryParams``)."""
        return self._settings.params

    @params.setter
    def params(self, params):
        self._settings.params = QueryParams(params)

    @property
    def cookies(self):
        """The client's jar (``Cookies``): what responses set is sent back, as a browser would."""
        return self._settings.cookies

    @cookies.setter
    def cookies(self, cookies):
        self._settings.cookies = _jar_of(cookies)

    @property
    def auth(self):
        return self._settings.auth

    @auth.setter
    def auth(self, auth):
        self._settings.auth = auth

    @property
    def timeout(self):
        return self._settings.timeout

    @timeout.setter
    def timeout(self, timeout):
        self._settings.timeout = timeout if isinstance(timeout, Timeout) or timeout is None else Timeout(timeout)
        self._reconfigure()

    @property
    def base_url(self):
        return self._base_url or URL("")

    @property
    def follow_redirects(self):
        return self._settings.follow_redirects

    @follow_redirects.setter
    def follow_redirects(self, follow):
        self._settings.follow_redirects = bool(follow)
        self._reconfigure()

    def build_request(self, method, url, *, content=None, data=None, files=None, json=None, params=None, headers=None,
                      cookies=None, timeout=_UNSET, extensions=None):
        """A ``Request`` with the client's base URL, parameters and headers merged in, to send
        with ``send``."""
        merged = Headers(self._settings.headers)
        for name, value in _field_pairs(headers):
            merged[name] = value
        extensions = dict(extensions or {})
        if timeout is not _UNSET:
            extensions["timeout"] = timeout
        target = self._merge_url(url).copy_merge_params(self._settings.params.merge(params))
        return Request(method, target, headers=merged, cookies=cookies, content=content, data=data, files=files, json=json,
                       extensions=extensions)

    def _built(self, method, url, params, headers, cookies, timeout, options):
        """A request call's arguments as a built ``Request`` (Courier's own options kept in its
        extensions, for the library)."""
        body = {key: options.pop(key) for key in ("content", "data", "files", "json") if key in options}
        request = self.build_request(method, url, params=params, headers=headers, cookies=cookies, timeout=timeout, **body)
        if options:
            request.extensions["courier"] = options
        return request

    def _merge_url(self, url):
        """``url`` against the base URL as httpx joins them (the base's path is a prefix)."""
        url = URL(url)
        if url.is_relative_url and self._base_url is not None:
            base = str(self._base_url)
            return URL(base.rstrip("/") + "/" + str(url).lstrip("/"))
        return url

    def _send_options(self, request, auth, follow_redirects):
        """The engine call's arguments for a built ``request`` (and the Courier options a call
        gave beside httpx's, kept in its extensions)."""
        body = dict(request._body)
        body.update(request.extensions.get("courier", {}))
        return self._options(request.headers, None, auth, request.extensions.get("timeout", _UNSET), follow_redirects, body,
                             str(request.url))

    def _make_engine(self):
        from . import Engine
        engine = Engine(**self._engine_arguments)
        self._configure(engine)
        return engine

    def _configure(self, engine):
        """The client's settings as the engine's defaults (see ``Engine.set_defaults``)."""
        settings = self._settings
        cert = settings.cert
        timeouts = _limits(settings.timeout) or dict.fromkeys(("connect", "first_byte", "idle", "send", "queue", "total"))
        if settings.timeout is self._default_timeout:
            # httpx's default pool limit (5 s) is a wait for one of its 100 connections; Courier's
            # queue is the process's, a few wide, and a gather of hundreds would fail it: the
            # default sets no queue limit (an explicit Timeout(pool=) does).
            timeouts["queue"] = None
        engine.set_defaults(timeouts=timeouts,
                            follow_redirects=settings.follow_redirects, max_redirects=settings.max_redirects,
                            http_version=self._http_version, verify=settings.verify, cert=cert, **settings.tls)

    def _reconfigure(self):
        """A client attribute the engines hold changed: tell them."""
        for engine in self._engines_made():
            self._configure(engine)

    def _checked(self):
        if self._closed:
            raise UsageError(_native.E_MISUSE, "the client is closed")

    def _options(self, headers, cookies, auth, timeout, follow_redirects, extra, target=None):
        if self._transport_options:
            for key, value in self._transport_options.items():
                extra.setdefault(key, value)
        if self._limits is not None and self._limits.max_connections and target is not None:
            self._apply_limits(target)
        if self._http_proxy is not None and target is not None and self._merge_url(target).scheme == "http":
            extra.setdefault("proxy", self._http_proxy[0])
            extra.setdefault("no_proxy", self._http_proxy[1])
        options = self._settings.options(headers, cookies, auth, timeout, follow_redirects, extra)
        jar = options.get("cookies")
        if jar is not None and jar._anywhere and target is not None:
            # Cookies set without a domain go to this request's host through the jar.
            jar._seed(self._merge_url(target).host)
        return options

    def _url(self, url, params):
        """The URL with the client's and the call's parameters appended in order (repeated keys
        kept, as httpx sends them)."""
        url = str(url)
        if not params and not self._settings.params:
            return url
        pairs = self._settings.params.multi_items() + _pairs(params)
        if not pairs:
            return url
        from urllib.parse import urlencode
        base, _, fragment = url.partition("#")
        joined = base + ("&" if "?" in base else "?") + urlencode(pairs)
        return joined + ("#" + fragment if fragment else "")

    @property
    def is_closed(self):
        return self._closed


def _check_engine_arguments(arguments):
    """A keyword no client or engine takes is a TypeError at once (httpx's), not at the first
    request, and before anything that needs closing was made."""
    from ._engine import Engine
    code = Engine.__init__.__code__
    known = code.co_varnames[1:code.co_argcount + code.co_kwonlyargcount]
    for name in arguments:
        if name not in known:
            raise TypeError("Client() got an unexpected keyword argument %r" % (name,))


def _field_pairs(headers):
    """A call's ``headers=`` as (name, value) pairs, names as the caller spelled them."""
    if not headers:
        return ()
    if isinstance(headers, Headers):
        return headers.multi_items()
    return headers.items() if hasattr(headers, "items") else headers
