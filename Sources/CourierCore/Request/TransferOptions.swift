/// Per-transfer knobs that the core acts on.
///
/// The settings live in one shared copy-on-write box: every operation starts from its engine's
/// options and every transfer from its operation's, so a copy is one retain, and the defaults
/// share one box (a request that changes nothing allocates nothing).
public struct TransferOptions: Sendable, Hashable {
    private struct Values: Sendable, Hashable {
        var timeouts = Timeouts()
        var redirects = RedirectPolicy()
        var limits = ResponseLimits()
        var decompress = true
        var priority = Priority.normal
        var retryStaleConnection = true
        var reuseConnection = true
        var tls = TLSConfiguration()
        var poolIdleTimeout: Nanoseconds = .seconds(60)
        var cachePolicy = CachePolicy.useProtocol
        var coalescing = Coalescing.withCache
        var cache: CacheReference?
        var expectContinue = ExpectContinue.automatic
        var continueTimeout: Nanoseconds = .seconds(1)
        var resumeAttempts = 0
        var receiveRateLimit: UInt64 = 0
        var sendRateLimit: UInt64 = 0
        var httpVersion = HTTPVersionPreference.http2Preferred
        /// The retry policy and the cookie jar, boxed, nil for neither: copying the values (a
        /// request that changes an option) then copies one reference, not a policy's list and set.
        var composition: Composition?
    }

    /// What few requests set: a retry policy (nil: none) and a cookie jar (equal by identity).
    private final class Composition: @unchecked Sendable, Hashable {
        let retry: RetryPolicy?
        let cookies: CookieJar?
        /// Explicit proxy settings; nil for the environment's.
        let proxy: ProxySettings?
        /// Where direct connections go instead (curl's --connect-to, --resolve, -4, -6).
        let route: ConnectRoute?
        /// HTTP/1.0 requests (curl's --http1.0).
        let http10: Bool
        /// Connect-phase choices (Happy Eyeballs delay, tracing, a connection per request).
        let connecting: ConnectChoices?
        /// The login Digest challenges are answered with (curl's --digest).
        let digest: DigestLogin?
        /// The HSTS hosts requests upgrade to https for, and note (equal by identity).
        let hsts: HSTSStore?
        init(retry: RetryPolicy?, cookies: CookieJar?, proxy: ProxySettings?, route: ConnectRoute?, http10: Bool,
             connecting: ConnectChoices?, digest: DigestLogin?, hsts: HSTSStore?) {
            self.retry = retry
            self.cookies = cookies
            self.proxy = proxy
            self.route = route
            self.http10 = http10
            self.connecting = connecting
            self.digest = digest
            self.hsts = hsts
        }
        static func == (a: Composition, b: Composition) -> Bool {
            a.retry == b.retry && a.cookies === b.cookies && a.proxy == b.proxy && a.route == b.route && a.http10 == b.http10
                && a.connecting == b.connecting && a.digest == b.digest && a.hsts === b.hsts
        }
        func hash(into hasher: inout Hasher) {
            hasher.combine(retry)
            hasher.combine(cookies.map(ObjectIdentifier.init))
            hasher.combine(proxy)
            hasher.combine(route)
            hasher.combine(http10)
            hasher.combine(connecting)
            hasher.combine(digest)
            hasher.combine(hsts.map(ObjectIdentifier.init))
        }
    }

    private mutating func setComposition(retry: RetryPolicy?, cookies: CookieJar?, proxy: ProxySettings?,
                                         route: ConnectRoute?? = .none, http10: Bool? = nil,
                                         connecting: ConnectChoices?? = .none, digest: DigestLogin?? = .none,
                                         hsts: HSTSStore?? = .none) {
        let route = route ?? box.values.composition?.route
        let http10 = http10 ?? box.values.composition?.http10 ?? false
        let connecting = connecting ?? box.values.composition?.connecting
        let digest = digest ?? box.values.composition?.digest
        let hsts = hsts ?? box.values.composition?.hsts
        unique().values.composition = retry == nil && cookies == nil && proxy == nil && route == nil && !http10 && connecting == nil
            && digest == nil && hsts == nil
            ? nil : Composition(retry: retry, cookies: cookies, proxy: proxy, route: route, http10: http10, connecting: connecting,
                                digest: digest, hsts: hsts)
    }

    /// The user name and password that answer Digest challenges (RFC 7616: MD5, SHA-256 and
    /// SHA-512-256, their -sess forms, qop auth; curl's `--digest`): nil (the default) for none.
    /// The request goes out without credentials; a 401 offering Digest is answered once, the
    /// request sent again with its body (one that can be read again), the 401 dropped. A
    /// redirect to another path is answered again; one to another origin never carries the
    /// answer.
    /// The HSTS store (RFC 6797) requests consult and feed: an `http://` URL (or redirect) to a
    /// host it knows goes to `https://` instead, and an https response's
    /// `Strict-Transport-Security` is noted in it (not with `insecureAcceptAnyCertificate`: a
    /// connection not verified says nothing). nil (the default): none.
    public var hsts: HSTSStore? {
        get { box.values.composition?.hsts }
        set {
            let composition = box.values.composition
            setComposition(retry: composition?.retry, cookies: composition?.cookies, proxy: composition?.proxy, hsts: .some(newValue))
        }
    }

    public var digest: DigestLogin? {
        get { box.values.composition?.digest }
        set {
            let composition = box.values.composition
            setComposition(retry: composition?.retry, cookies: composition?.cookies, proxy: composition?.proxy, digest: .some(newValue))
        }
    }

    /// Where direct connections go when not to the URL's host and port, and which address
    /// families they use (curl's `--connect-to`, `--resolve`, `-4`, `-6`); nil (the default) for
    /// the URL's, resolved, any family. Connections through a proxy go to the proxy.
    public var route: ConnectRoute? {
        get { box.values.composition?.route }
        set {
            let composition = box.values.composition
            setComposition(retry: composition?.retry, cookies: composition?.cookies, proxy: composition?.proxy, route: .some(newValue))
        }
    }

    /// When a failed attempt is sent again (see `RetryPolicy`); none by default.
    public var retry: RetryPolicy {
        get { box.values.composition?.retry ?? .none }
        set { setComposition(retry: newValue.count > 0 ? newValue : nil, cookies: cookies, proxy: box.values.composition?.proxy) }
    }

    /// The proxies requests go through. By default the environment's, read once per process
    /// with curl's rules (`ProxySettings.environment`: `http_proxy`, `https_proxy`, `all_proxy`,
    /// `no_proxy`); `.direct` ignores it.
    public var proxy: ProxySettings {
        get { box.values.composition?.proxy ?? ProxySettings.processDefault ?? .direct }
        set {
            // The default again (the environment's, or no proxy when it names none) is kept as no
            // setting at all: a request with nothing composed takes the short path to its pool key.
            let isDefault = ProxySettings.processDefault.map { $0 == newValue } ?? (newValue.isDirect && !newValue.tunnelsHTTP && newValue.proxyTLS == ProxySettings.direct.proxyTLS)
            setComposition(retry: box.values.composition?.retry, cookies: cookies, proxy: isDefault ? nil : newValue)
        }
    }

    /// Whether a retry policy, a cookie jar, proxy settings, a route, HTTP/1.0 or connect choices
    /// are set (a nil test, no copy).
    package var hasComposition: Bool { box.values.composition != nil }

    /// The settings to route by, nil when every request goes direct.
    package var proxySettings: ProxySettings? {
        if let explicit = box.values.composition?.proxy { return explicit.isDirect ? nil : explicit }
        return ProxySettings.processDefault
    }

    /// The cookie jar requests send from and store into (nil: none, the default). Every hop of a
    /// redirect gets the cookies of its own URL, and a cookie a redirect set goes with the next
    /// hop. A `Cookie` header set by hand wins over the jar.
    public var cookies: CookieJar? {
        get { box.values.composition?.cookies }
        set { setComposition(retry: box.values.composition?.retry, cookies: newValue, proxy: box.values.composition?.proxy) }
    }

    /// `retry.count`, read without copying the policy (every transfer asks).
    package var retryCount: Int { box.values.composition?.retry?.count ?? 0 }

    /// A cache held in the options, equal by identity (two options are equal when they use the
    /// same cache).
    private struct CacheReference: Hashable, @unchecked Sendable {
        let cache: ResponseCache
        static func == (a: CacheReference, b: CacheReference) -> Bool { a.cache === b.cache }
        func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(cache)) }
    }

    private final class Box: @unchecked Sendable {
        var values: Values
        init(_ values: Values) { self.values = values }
    }

    private static let defaults = Box(Values())
    private var box = TransferOptions.defaults

    @inline(__always)
    private mutating func unique() -> Box {
        if !isKnownUniquelyReferenced(&box) { box = Box(box.values) }
        return box
    }

    /// Phase deadlines.
    public var timeouts: Timeouts {
        get { box.values.timeouts }
        set { unique().values.timeouts = newValue }
    }
    /// Redirect handling.
    public var redirects: RedirectPolicy {
        get { box.values.redirects }
        set { unique().values.redirects = newValue }
    }
    /// Limits on what the server may send.
    public var limits: ResponseLimits {
        get { box.values.limits }
        set { unique().values.limits = newValue }
    }
    /// Ask for gzip, deflate, br and zstd (`Accept-Encoding`) and decode the body. The decoded size is bounded by
    /// `limits.decodedLimit`.
    public var decompress: Bool {
        get { box.values.decompress }
        set { unique().values.decompress = newValue }
    }
    /// Place in the shared queue.
    public var priority: Priority {
        get { box.values.priority }
        set { unique().values.priority = newValue }
    }
    /// Retry once on a fresh connection when a reused keep-alive connection turns out to have been
    /// closed by the server before it answered (idempotent requests only).
    public var retryStaleConnection: Bool {
        get { box.values.retryStaleConnection }
        set { unique().values.retryStaleConnection = newValue }
    }
    /// Whether the connection may serve later requests. false closes it after this exchange
    /// (curl's `CURLOPT_FORBID_REUSE`): the request itself is unchanged, the client just does not
    /// keep the connection.
    public var reuseConnection: Bool {
        get { box.values.reuseConnection }
        set { unique().values.reuseConnection = newValue }
    }
    /// Send the request as HTTP/1.0 (curl's `--http1.0`), for servers or tests that need the old
    /// protocol: the request line says `HTTP/1.0`, the connection closes after the exchange, and a
    /// body of unknown length is refused before any I/O (HTTP/1.0 has no chunked encoding).
    /// Off by default: HTTP/1.1 is what Courier speaks.
    public var sendsHTTP10: Bool {
        get { box.values.composition?.http10 ?? false }
        set {
            let composition = box.values.composition
            setComposition(retry: composition?.retry, cookies: composition?.cookies, proxy: composition?.proxy, http10: newValue)
        }
    }
    /// Which HTTP version the request may use (see `HTTPVersionPreference`): HTTP/2 where an
    /// https server agrees, by default. Part of the pool key.
    public var httpVersion: HTTPVersionPreference {
        get { box.values.httpVersion }
        set { unique().values.httpVersion = newValue }
    }
    /// Certificate checks, trust roots, client certificate, pins and versions for https. Part of
    /// the pool key: connections are shared only between requests with equal configurations.
    public var tls: TLSConfiguration {
        get { box.values.tls }
        set { unique().values.tls = newValue }
    }
    /// How long a connection this request leaves behind may stay idle in the pool.
    public var poolIdleTimeout: Nanoseconds {
        get { box.values.poolIdleTimeout }
        set { unique().values.poolIdleTimeout = newValue }
    }

    /// How the request uses its engine's cache (when it has one).
    public var cachePolicy: CachePolicy {
        get { box.values.cachePolicy }
        set { unique().values.cachePolicy = newValue }
    }
    /// Whether an identical GET or HEAD already in flight may answer this one too (one network
    /// request for both; each caller keeps its own handle and may cancel alone). Applies to
    /// responses collected in memory; downloads to files and streamed bodies always make their own
    /// request.
    public var coalescing: Coalescing {
        get { box.values.coalescing }
        set { unique().values.coalescing = newValue }
    }

    /// The HTTP cache the request may be answered from and stored in (nil: none). Set once on an
    /// engine's options, so its requests share one box and pay nothing per request for it.
    package var cache: ResponseCache? {
        get { box.values.cache?.cache }
        set { unique().values.cache = newValue.map(CacheReference.init) }
    }

    /// When a body waits for the server's `100 Continue` before it is sent.
    public var expectContinue: ExpectContinue {
        get { box.values.expectContinue }
        set { unique().values.expectContinue = newValue }
    }
    /// How long a body held for `100 Continue` waits before it is sent anyway (many servers
    /// never send one). curl waits 1 s too.
    public var continueTimeout: Nanoseconds {
        get { box.values.continueTimeout }
        set { unique().values.continueTimeout = newValue }
    }
    /// How many times a resumable download (`ResponseSink.resumable`) that breaks mid-body
    /// (a reset, a cut, a silence) continues from where it stopped, with `Range`, before failing.
    public var resumeAttempts: Int {
        get { box.values.resumeAttempts }
        set { unique().values.resumeAttempts = max(0, newValue) }
    }
    /// Most response body bytes per second (curl's `--limit-rate`); 0 for no limit. Enforced by
    /// pausing reads, so the server is slowed by TCP flow control, not buffered for.
    public var receiveRateLimit: UInt64 {
        get { box.values.receiveRateLimit }
        set { unique().values.receiveRateLimit = newValue }
    }
    /// Most request body bytes per second; 0 for no limit.
    public var sendRateLimit: UInt64 {
        get { box.values.sendRateLimit }
        set { unique().values.sendRateLimit = newValue }
    }

    /// How long a connection attempt to one address has before the next address (of the other
    /// family first) is tried alongside it (RFC 8305's Connection Attempt Delay, curl's
    /// `--happy-eyeballs-timeout-ms`): 250 ms by default.
    public var happyEyeballsDelay: Nanoseconds {
        get { box.values.composition?.connecting?.happyEyeballsDelay ?? ConnectChoices.defaultDelay }
        set { changeConnecting { $0.happyEyeballsDelay = newValue } }
    }
    /// Whether a connection this request opens records what connecting did (addresses tried, the
    /// TLS handshake message by message, the certificate chain, where a failure stopped) for
    /// `Transfer.connectionTrace`: what curl's `-v` shows. Off by default: nothing is formatted.
    public var tracesConnections: Bool {
        get { box.values.composition?.connecting?.traces ?? false }
        set { changeConnecting { $0.traces = newValue } }
    }
    /// Whether a request that had a connection opened for it waits for that connection rather
    /// than take one another request released meanwhile: curl's way with parallel transfers, where
    /// N transfers started together open (and use) N connections. Off by default: the first
    /// connection ready serves the longest-waiting request.
    public var waitsForOwnConnection: Bool {
        get { box.values.composition?.connecting?.waitsForOwnConnection ?? false }
        set { changeConnecting { $0.waitsForOwnConnection = newValue } }
    }

    /// A PING every interval on the HTTP/2 connections this request opens, busy or idle; one
    /// unanswered within 5 s fails the connection (and its idempotent, unanswered requests go
    /// again on a new one). For long-lived connections behind NATs and load balancers that drop
    /// silent flows, and to find a dead peer while a long response is silent (OkHttp's
    /// `pingInterval`). nil (the default): a PING goes only before reusing a connection that has
    /// been silent for 30 s. Requests with different intervals never share a connection.
    public var http2PingInterval: Nanoseconds? {
        get { box.values.composition?.connecting?.http2PingInterval }
        set { changeConnecting { $0.http2PingInterval = newValue } }
    }

    /// The connect-phase choices, nil for the defaults.
    package var connectChoices: ConnectChoices? { box.values.composition?.connecting }

    private mutating func changeConnecting(_ change: (inout ConnectChoices.Values) -> Void) {
        var values = connectChoices?.values ?? ConnectChoices.Values()
        change(&values)
        let composition = box.values.composition
        setComposition(retry: composition?.retry, cookies: composition?.cookies, proxy: composition?.proxy,
                       connecting: .some(values == ConnectChoices.Values() ? nil : ConnectChoices(values)))
    }

    /// The defaults.
    public init() {}

    public static func == (a: TransferOptions, b: TransferOptions) -> Bool {
        a.box === b.box || a.box.values == b.box.values
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(box.values)
    }
}
