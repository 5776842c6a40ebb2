import CourierCore
import Dispatch
import Synchronization

/// The requests of one API, sharing a host, default headers and settings: MKNetworkKit's
/// `MKNetworkEngine` (the YahooEngine pattern).
///
/// An application subclasses nothing; it wraps an engine in its own type that builds URLs and maps
/// JSON to models, so callers never see paths or status codes. Every engine feeds the one
/// process-wide `SharedQueue`, whose width bounds all of them together.
///
/// ```swift
/// let api = Engine(host: "https://api.example.com/v1", defaultHeaders: ["Accept": "application/json"])
/// let op = api.operation(path: "items", params: ["page": "2"])
/// let items = try await api.send(op).decode([Item].self)
/// ```
public final class Engine: Sendable {
    /// Engine-wide settings.
    public struct Configuration: Sendable {
        /// Options every operation starts with (timeouts, redirects, limits, decompression).
        public var options = TransferOptions()
        /// Statuses that count as success; others fail with `.httpStatus` (MKNetworkKit calls its
        /// error handler for 4xx and 5xx too). Use `0..<1000` to accept everything.
        public var acceptableStatus: Range<Int> = 200..<400
        /// Where handlers run; nil means a serial dispatch queue of the engine's own.
        public var callbackQueue: CallbackQueue? = nil
        /// Scheme used when `host` names none.
        public var defaultScheme: CourierURL.Scheme = .https
        /// The HTTP cache GET responses are stored in and answered from; nil (the default) caches
        /// nothing. Engines may share one.
        public var cache: Cache? = nil
        /// Credentials for the engine's requests, refreshed once for all of them when the origin
        /// answers 401 (or a proxy 407); nil: a refusal is the result.
        public var authenticator: Authenticator? = nil
        /// Where freezable operations wait (`HTTPOperation.freeze`); the engine replays what earlier
        /// processes left there when it is created.
        public var outbox: Outbox? = nil
        /// Where the application steps into every request of the engine (see `EngineHooks`).
        public var hooks = EngineHooks()
        /// Told once, on the callback queue, when the engine stops taking requests: `invalidate`
        /// was called, or its TLS configuration cannot be used (AFURLSessionManager's
        /// session-did-become-invalid).
        public var onInvalidated: (@Sendable (EngineInvalidation) -> Void)? = nil

        /// The defaults.
        public init() {}
    }

    /// Headers every Courier engine sends unless told otherwise.
    public static let standardHeaders: HTTPHeaders = ["User-Agent": "courier/\(CourierVersion.string)", "Accept": "*/*"]

    /// A process-wide engine with no host, for `operation(urlString:)` one-offs.
    public static let shared = Engine(baseURL: nil, defaultHeaders: standardHeaders, configuration: Configuration())

    private static let ids = Atomic<Int>(0)

    /// Identifies this engine's operations (`OperationInfo.engineID`).
    public let id: Int
    /// The base URL operations' paths are appended to; nil for `shared`.
    public let baseURL: CourierURL?
    /// Headers added to every request unless it sets the same name.
    public let defaultHeaders: HTTPHeaders
    /// The settings.
    public let configuration: Configuration
    let callbackQueue: CallbackQueue
    /// The configuration's hooks, nil when none is set (operations then carry nothing).
    private let hooks: HookSet?
    /// Whether operations get an authenticator or hooks (a flag the common engine tests).
    private let composed: Bool
    private let invalidationState = InvalidationState()

    /// An engine for `host`, which may be a bare host ("api.example.com", "localhost:8080") or a
    /// URL with scheme, port and API path ("http://127.0.0.1:8080/v1").
    public convenience init(host: String, defaultHeaders: [String: String] = [:], configuration: Configuration = Configuration()) {
        var headers = Engine.standardHeaders
        for (name, value) in defaultHeaders.sorted(by: { $0.key < $1.key }) { headers.replaceOrAdd(name: name, value: value) }
        let spec = RequestDraft.isAbsoluteURL(host) ? host : "\(configuration.defaultScheme.rawValue)://\(host)"
        var base: CourierURL?
        var error: CourierError?
        do {
            base = try CourierURL(parsing: spec)
        } catch let e {
            error = e
        }
        self.init(baseURL: base, defaultHeaders: headers, configuration: configuration, baseURLError: error)
    }

    /// An engine whose connections all go to a Unix domain socket instead of over TCP: the Docker
    /// Engine API's `try Engine(unixSocket: .path("/var/run/docker.sock"))`. `host` names the
    /// API in URLs, the Host field and TLS ("http://localhost" by default); no name is resolved
    /// and proxies are not used. Throws `.invalidArgument` for an empty path or one longer than
    /// `ConnectRoute.UnixSocket.maxLength` bytes; a socket that is missing or not listening fails
    /// each request with `.connectFailed`.
    public convenience init(unixSocket socket: ConnectRoute.UnixSocket, host: String = "http://localhost",
                            defaultHeaders: [String: String] = [:], configuration: Configuration = Configuration()) throws(CourierError) {
        var configuration = configuration
        var route = configuration.options.route ?? ConnectRoute()
        route.unixSocket = try ConnectRoute(unixSocket: socket).unixSocket
        configuration.options.route = route
        self.init(host: host, defaultHeaders: defaultHeaders, configuration: configuration)
    }

    /// An engine whose requests are answered by `mock` inside the process (users' own tests: see
    /// `MockServer`); `host` names the API in URLs as for any engine. The cache, redirects,
    /// retries, cookies, authentication and hooks run as against a real server.
    public convenience init(host: String, mock: MockServer, defaultHeaders: [String: String] = [:],
                            configuration: Configuration = Configuration()) {
        var configuration = configuration
        var route = configuration.options.route ?? ConnectRoute()
        route.mock = mock
        configuration.options.route = route
        self.init(host: host, defaultHeaders: defaultHeaders, configuration: configuration)
    }

    /// Why `host` did not parse, for engines whose operations can only fail.
    private let baseURLError: CourierError?
    /// The base URL's path without a trailing "/" ("" for a bare host): the prefix of every path.
    private let basePath: String

    init(baseURL: CourierURL?, defaultHeaders: HTTPHeaders, configuration: Configuration, baseURLError: CourierError? = nil) {
        id = Engine.ids.add(1, ordering: .relaxed).newValue
        self.baseURL = baseURL
        var prepared = defaultHeaders
        // Validated once here; operations that add no headers of their own send these as they are.
        prepared.prepareForSending()
        self.defaultHeaders = prepared
        // The cache rides in the options every operation starts from: one box for the engine,
        // nothing per request.
        var configuration = configuration
        if let cache = configuration.cache { configuration.options.cache = cache.core }
        self.configuration = configuration
        self.baseURLError = baseURLError
        basePath = RequestDraft.basePath(of: baseURL)
        hooks = HookSet.make(configuration.hooks)
        composed = hooks != nil || configuration.authenticator != nil || configuration.outbox != nil
        callbackQueue = configuration.callbackQueue ?? .dispatch(DispatchQueue(label: "courier.engine.\(id)"))
        configuration.outbox?.attach(self)
        if let problem = InvalidationState.tlsProblem(configuration.options.tls) {
            invalidate(because: .tlsConfigurationRejected(problem))
        }
    }

    /// Why the engine takes no requests, nil while it does.
    public var invalidation: EngineInvalidation? { invalidationState.current }

    /// Stops the engine taking requests: operations made from now on fail with
    /// `.engineInvalidated` when sent; those already queued or running are cancelled
    /// (`cancellingRunning`, AFNetworking's invalidateAndCancel) or left to finish
    /// (finishTasksAndInvalidate, the default). The observer (`Configuration.onInvalidated`) is
    /// told once; calling again does nothing.
    public func invalidate(cancellingRunning: Bool = false) {
        guard invalidate(because: .invalidated(cancelledRunning: cancellingRunning)) else { return }
        if cancellingRunning { cancelAll() }
    }

    @discardableResult
    private func invalidate(because reason: EngineInvalidation) -> Bool {
        guard invalidationState.invalidate(reason) else { return false }
        if let observer = configuration.onInvalidated { callbackQueue.run { observer(reason) } }
        return true
    }

    /// An operation for `path` under the engine's base URL. Parameters go to the query string for
    /// GET, HEAD and DELETE and to the body otherwise. An engine whose host did not parse makes
    /// operations that fail with `.invalidURL` when sent.
    public func operation(path: String, params: [String: String] = [:], method: HTTPMethod = .get) -> HTTPOperation {
        if _slowPath(invalidationState.isSet) { return refused(method: method, target: path, params: params) }
        let target = RequestDraft.target(path, under: basePath)
        guard let baseURL else {
            return HTTPOperation(method: method, base: nil, target: path, parameters: params, engineID: id,
                             options: configuration.options, acceptableStatus: configuration.acceptableStatus,
                             defaultHeaders: defaultHeaders, callbackQueue: callbackQueue,
                             presetError: baseURLError ?? CourierError(.invalidURL, "the engine has no host; use operation(urlString:)"))
        }
        return prepared(HTTPOperation(method: method, base: baseURL, target: target, parameters: params, engineID: id,
                                  options: configuration.options, acceptableStatus: configuration.acceptableStatus,
                                  defaultHeaders: defaultHeaders, callbackQueue: callbackQueue))
    }

    /// An operation of an invalidated engine: it fails with the invalidation's error when sent.
    @inline(never)
    private func refused(method: HTTPMethod, target: String, params: [String: String]) -> HTTPOperation {
        HTTPOperation(method: method, base: nil, target: target, parameters: params, engineID: id, options: configuration.options,
                      acceptableStatus: configuration.acceptableStatus, defaultHeaders: defaultHeaders, callbackQueue: callbackQueue,
                      presetError: invalidationState.current?.error ?? CourierError(.engineInvalidated))
    }

    /// An operation with the engine's authenticator and hooks, when it has any.
    @inline(__always)
    private func prepared(_ operation: HTTPOperation) -> HTTPOperation {
        if composed { operation.attach(authenticator: configuration.authenticator, hooks: hooks, outbox: configuration.outbox) }
        return operation
    }

    /// An operation for a full URL (which may be on another host than the engine's).
    public func operation(urlString: String, params: [String: String] = [:], method: HTTPMethod = .get) -> HTTPOperation {
        if _slowPath(invalidationState.isSet) { return refused(method: method, target: urlString, params: params) }
        return prepared(HTTPOperation(method: method, base: nil, target: urlString, parameters: params, engineID: id,
                                      options: configuration.options, acceptableStatus: configuration.acceptableStatus,
                                      defaultHeaders: defaultHeaders, callbackQueue: callbackQueue))
    }

    /// Puts an operation in the shared queue; its handlers report the outcome. Enqueueing the same
    /// operation twice does nothing the second time.
    public func enqueue(_ operation: HTTPOperation) {
        operation.start()
    }

    /// Sends an operation and waits for its response. Cancelling the calling task cancels the
    /// operation. Throws what the error handlers would get.
    ///
    /// An operation is sent once: sending it again (or after `enqueue`) waits for the same
    /// transfer and returns the same outcome to every caller; cancelling any of those callers'
    /// tasks cancels the operation for all of them.
    public func send(_ operation: HTTPOperation) async throws(CourierError) -> Response {
        try await operation.sendAndWait()
    }

    /// Sends an operation and returns as soon as the response head arrives, with the body as an
    /// `AsyncSequence` read at the caller's pace (see `ResponseBody`). Throws when no head came
    /// (the operation's error). A download file or streams set on the operation get the body too.
    public func stream(_ operation: HTTPOperation) async throws(CourierError) -> StreamedResponse {
        let channel = BodyChannel()
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                operation.streamBody(into: channel, headWaiter: continuation)
                operation.start()
            }
        } onCancel: {
            operation.cancel()
        }
        return try result.get()
    }

    /// Waits for an operation already started.
    static func waitFor(_ operation: HTTPOperation) async throws(CourierError) -> Response {
        let result = await withCheckedContinuation { continuation in operation.addWaiter(continuation) }
        return try result.get()
    }

    /// Sends an operation and yields every response it delivers: one, or two for
    /// `CachePolicy.cachedThenFresh` (the stored response, then the network's), each with its
    /// `cachePhase`, so the two can never be mistaken for each other. The sequence ends after the
    /// final response and throws what the error handlers would get. Ending the iteration early,
    /// or cancelling the iterating task, cancels the operation.
    public func responses(_ operation: HTTPOperation) -> ResponseSequence {
        let channel = ResponseChannel()
        operation.addChannel(channel)
        operation.start()
        return ResponseSequence(channel: channel, operation: operation)
    }

    /// Cancels every queued and running operation of this engine.
    public func cancelAll() {
        let id = self.id
        Runtime.shared.cancelAll { $0.owner == id }
    }
}

/// Courier's version.
public enum CourierVersion {
    /// Semantic version of the library.
    public static let string = "0.5.0"
    /// The same as numbers (`string` is made of them; a test keeps the two together): the C ABI's
    /// version check reads these without parsing text at every program's start.
    public static let major: Int32 = 0
    public static let minor: Int32 = 5
    public static let patch: Int32 = 0
}
