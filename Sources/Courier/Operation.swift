import FoundationEssentials
import Synchronization

/// One HTTP request and what becomes of it: MKNetworkKit's `MKNetworkOperation`.
///
/// Configure it (method, headers, parameters, body, options, handlers), then hand it to its engine
/// with `enqueue` or `send`. From then on its settings are frozen; its handlers run once, on the
/// engine's callback queue: either every completion handler (with the `Response`) or every error
/// handler (with the `CourierError`, and the response when there was one: a 404 still has a body).
///
/// Thread safety: configuration is for one thread before the operation is enqueued. `cancel`,
/// adding handlers and reading the outcome are safe from any thread at any time.
public final class Operation: @unchecked Sendable, CustomStringConvertible {
    /// The request method.
    public var method: HTTPMethod
    /// Request headers; the engine's defaults are added for names not set here.
    public var headers = HTTPHeaders()
    /// Parameters: the query string for GET/HEAD/DELETE, the body otherwise.
    public var parameters: [String: String]
    /// How body parameters are encoded.
    public var parameterEncoding: ParameterEncoding = .form
    /// An explicit body; when set, `parameters` go to the query string whatever the method.
    public var body: RequestBody?
    /// Timeouts, redirects, limits, decompression, priority.
    public var options: TransferOptions
    /// Statuses that count as success; others end in `.httpStatus` (with the response kept).
    public var acceptableStatus: Range<Int>
    /// Write the body to this file instead of memory (curl's `-o`).
    public var downloadPath: String?
    /// The engine's `id`, for `SharedQueue.cancelAll(where:)`.
    public let engineID: Int

    /// Queue priority (shortcut for `options.priority`).
    public var priority: Priority {
        get { options.priority }
        set { options.priority = newValue }
    }

    /// Phase deadlines (shortcut for `options.timeouts`).
    public var timeouts: Timeouts {
        get { options.timeouts }
        set { options.timeouts = newValue }
    }

    /// The URL as given: the engine's base with the path, or the full URL string.
    public var urlString: String {
        guard let base else { return target }
        return "\(base.scheme.rawValue)://\(base.hostHeader)\(target)"
    }

    /// Where the operation stands.
    public enum State: Sendable, Equatable {
        /// Being configured.
        case ready
        /// Handed to the shared queue (queued, connecting or transferring).
        case enqueued
        /// Done: handlers have been (or are being) called.
        case finished
    }

    /// The engine's parsed base URL (nil for operations made from a URL string).
    private let base: CourierURL?
    /// The request target under `base` ("/v1/items"), or the whole URL string.
    private let target: String
    /// A failure known before sending (the engine's host did not parse).
    let presetError: CourierError?
    let callbackQueue: CallbackQueue
    let defaultHeaders: HTTPHeaders

    /// Everything other threads may touch after the operation is enqueued.
    private struct Shared: Sendable {
        var state: State = .ready
        var response: Response?
        var error: CourierError?
        var transfer: Transfer?
        var cancelRequested = false
        var completions = HandlerList<@Sendable (Response) -> Void>()
        var errors = HandlerList<@Sendable (CourierError, Response?) -> Void>()
        var finishes = HandlerList<@Sendable (Result<Response, CourierError>) -> Void>()
        var uploadProgress = HandlerList<@Sendable (TransferProgress) -> Void>()
        var downloadProgress = HandlerList<@Sendable (TransferProgress) -> Void>()
        var continuation: CheckedContinuation<Result<Response, CourierError>, Never>?

        var outcome: Result<Response, CourierError>? {
            guard state == .finished else { return nil }
            if let error { return .failure(error) }
            return response.map { .success($0) }
        }
    }

    // Inline in the object: no separate allocation, unlike a lock class.
    private let shared = Mutex(Shared())

    init(method: HTTPMethod, base: CourierURL?, target: String, parameters: [String: String], engineID: Int,
         options: TransferOptions, acceptableStatus: Range<Int>, defaultHeaders: HTTPHeaders,
         callbackQueue: CallbackQueue, presetError: CourierError? = nil) {
        self.method = method
        self.base = base
        self.target = target
        self.parameters = parameters
        self.engineID = engineID
        self.options = options
        self.acceptableStatus = acceptableStatus
        self.defaultHeaders = defaultHeaders
        self.callbackQueue = callbackQueue
        self.presetError = presetError
    }

    /// Creates a stand-alone operation with default settings, for use without an engine
    /// (`Engine.shared` sends those).
    public convenience init(urlString: String, method: HTTPMethod = .get, parameters: [String: String] = [:]) {
        self.init(method: method, base: nil, target: urlString, parameters: parameters, engineID: 0, options: TransferOptions(),
                  acceptableStatus: 200..<400, defaultHeaders: Engine.standardHeaders, callbackQueue: Engine.shared.callbackQueue)
    }

    // MARK: - Handlers

    /// Adds a handler for success. Handlers added after completion run at once (on the queue).
    @discardableResult
    public func onCompletion(_ handler: @escaping @Sendable (Response) -> Void) -> Operation {
        let done = shared.withLock { s -> Response? in
            if case .success(let r)? = s.outcome { return r }
            if s.state != .finished { s.completions.append(handler) }
            return nil
        }
        if let done { callbackQueue.run { handler(done) } }
        return self
    }

    /// Adds a handler for failure; the response is there when the server answered (a 404 body,
    /// for instance).
    @discardableResult
    public func onError(_ handler: @escaping @Sendable (CourierError, Response?) -> Void) -> Operation {
        let done = shared.withLock { s -> (CourierError, Response?)? in
            if case .failure(let e)? = s.outcome { return (e, s.response) }
            if s.state != .finished { s.errors.append(handler) }
            return nil
        }
        if let done { callbackQueue.run { handler(done.0, done.1) } }
        return self
    }

    /// Adds a handler that sees either outcome.
    @discardableResult
    public func onFinish(_ handler: @escaping @Sendable (Result<Response, CourierError>) -> Void) -> Operation {
        let done = shared.withLock { s -> Result<Response, CourierError>? in
            if let outcome = s.outcome { return outcome }
            s.finishes.append(handler)
            return nil
        }
        if let done { callbackQueue.run { handler(done) } }
        return self
    }

    /// Adds a handler for request-body progress (at most every 50 ms, and at the end). Add it
    /// before the operation is enqueued.
    @discardableResult
    public func onUploadProgress(_ handler: @escaping @Sendable (TransferProgress) -> Void) -> Operation {
        shared.withLock { $0.uploadProgress.append(handler) }
        return self
    }

    /// Adds a handler for response-body progress (at most every 50 ms, and at the end). Add it
    /// before the operation is enqueued.
    @discardableResult
    public func onDownloadProgress(_ handler: @escaping @Sendable (TransferProgress) -> Void) -> Operation {
        shared.withLock { $0.downloadProgress.append(handler) }
        return self
    }

    // MARK: - Outcome

    /// The current state.
    public var state: State { shared.withLock { $0.state } }
    /// The response, once finished (also on `.httpStatus` failures).
    public var response: Response? { shared.withLock { $0.response } }
    /// The error, once finished with one.
    public var error: CourierError? { shared.withLock { $0.error } }

    /// Cancels the operation wherever it is; its error handlers get `.cancelled`. Cancelling a
    /// finished operation does nothing.
    public func cancel() {
        let target = shared.withLock { s -> Transfer? in
            if s.state != .finished { s.cancelRequested = true }
            return s.transfer
        }
        if let target { Runtime.shared.cancel(target) }
    }

    // MARK: - Sending

    /// Builds the core transfer and submits it. Called by the engine.
    func start() {
        let wantsProgress = shared.withLock { s -> Bool? in
            guard s.state == .ready else { return nil }
            s.state = .enqueued
            return !s.uploadProgress.isEmpty || !s.downloadProgress.isEmpty
        }
        guard let wantsProgress else { return }
        switch makeTransfer(wantsProgress: wantsProgress) {
        case .failure(let error):
            complete(.failure(error), response: nil)
        case .success(let transfer):
            // A cancel that raced with building the transfer is honoured before it is submitted.
            let cancelled = shared.withLock { s -> Bool in
                s.transfer = transfer
                return s.cancelRequested
            }
            if cancelled { transfer.cancelRequested = true }
            Runtime.shared.submit(transfer)
        }
    }

    /// Registers the continuation `Engine.send` waits on (before `start`).
    func setContinuation(_ continuation: CheckedContinuation<Result<Response, CourierError>, Never>) {
        let done = shared.withLock { s -> Result<Response, CourierError>? in
            if let outcome = s.outcome { return outcome }
            s.continuation = continuation
            return nil
        }
        if let done { continuation.resume(returning: done) }
    }

    /// The final URL with query parameters, as sent.
    func resolvedURL() throws(CourierError) -> CourierURL {
        if let presetError { throw presetError }
        var url: CourierURL
        if let base {
            url = base.replacingTarget(target)
        } else {
            url = try CourierURL(parsing: target)
        }
        if !parameters.isEmpty, ParameterEncoding.usesQuery(method) || body != nil {
            let encoded = ParameterEncoding.formEncode(parameters, spaceAsPlus: false)
            url.query = url.query.map { $0.isEmpty ? encoded : $0 + "&" + encoded } ?? encoded
        }
        return url
    }

    /// Headers as sent: the operation's own, then the engine's defaults for names not set. With
    /// no headers of its own an operation shares the engine's (no copy).
    func resolvedHeaders(url: CourierURL) -> HTTPHeaders {
        var merged: HTTPHeaders
        if headers.isEmpty {
            merged = defaultHeaders
        } else {
            merged = headers
            for index in 0..<defaultHeaders.count {
                let name = defaultHeaders.name(at: index)
                if !merged.contains(name) { merged.add(name: name, value: defaultHeaders.value(at: index)) }
            }
        }
        if let user = url.user, !merged.contains("Authorization") {
            let credentials = Array("\(user):\(url.password ?? "")".utf8)
            merged.add(name: "Authorization", value: "Basic " + Base64.encode(credentials))
        }
        return merged
    }

    /// The body as sent, with the Content-Type it implies (nil when the caller set one).
    func resolvedBody() -> (RequestBody, contentType: String?) {
        if let body { return (body, nil) }
        guard !parameters.isEmpty, !ParameterEncoding.usesQuery(method) else { return (.empty, nil) }
        switch parameterEncoding {
        case .form:
            return (.bytes(Array(ParameterEncoding.formEncode(parameters, spaceAsPlus: true).utf8)), "application/x-www-form-urlencoded")
        case .json:
            return (.bytes(ParameterEncoding.jsonEncode(parameters)), "application/json")
        }
    }

    private func makeTransfer(wantsProgress: Bool) -> Result<Transfer, CourierError> {
        let url: CourierURL
        do {
            url = try resolvedURL()
        } catch {
            return .failure(error)
        }
        var requestHeaders = resolvedHeaders(url: url)
        let (requestBody, contentType) = resolvedBody()
        if let contentType, !requestHeaders.contains("Content-Type") {
            requestHeaders.add(name: "Content-Type", value: contentType)
        }
        let transfer = Transfer(url: url, method: method, headers: requestHeaders, body: requestBody, options: options)
        transfer.owner = engineID
        if let downloadPath {
            do {
                transfer.sink = .file(try FileSink(path: downloadPath))
            } catch {
                return .failure(error)
            }
        }
        transfer.reportsProgress = wantsProgress
        transfer.delegate = self
        return .success(transfer)
    }

    /// Runs the handlers of the outcome once, then drops every handler (breaking cycles through
    /// captured values).
    fileprivate func complete(_ result: Result<Response, CourierError>, response: Response?) {
        let (completions, errors, finishes, waiter) = shared.withLock { s in
            s.state = .finished
            switch result {
            case .success(let r): s.response = r
            case .failure(let e): s.error = e; s.response = response
            }
            s.transfer = nil
            let taken = (s.completions, s.errors, s.finishes, s.continuation)
            s.completions = HandlerList()
            s.errors = HandlerList()
            s.finishes = HandlerList()
            s.uploadProgress = HandlerList()
            s.downloadProgress = HandlerList()
            s.continuation = nil
            return taken
        }
        waiter?.resume(returning: result)
        guard !completions.isEmpty || !errors.isEmpty || !finishes.isEmpty else { return }
        switch callbackQueue {
        case .loopThread:
            // Straight from the loop: no closure to allocate, no thread hop.
            Self.deliver(result, response, completions, errors, finishes)
        case .dispatch(let queue):
            queue.async { Self.deliver(result, response, completions, errors, finishes) }
        }
    }

    private static func deliver(_ result: Result<Response, CourierError>, _ response: Response?,
                                _ completions: HandlerList<@Sendable (Response) -> Void>,
                                _ errors: HandlerList<@Sendable (CourierError, Response?) -> Void>,
                                _ finishes: HandlerList<@Sendable (Result<Response, CourierError>) -> Void>) {
        switch result {
        case .success(let r):
            completions.forEach { $0(r) }
        case .failure(let e):
            errors.forEach { $0(e, response) }
        }
        finishes.forEach { $0(result) }
    }

    // MARK: - Description

    /// A curl command line that sends the same request, for logs and bug reports
    /// (MKNetworkKit's `curlCommandLineString`).
    public var curlCommand: String {
        var parts = ["curl"]
        if method != .get || body != nil || (!parameters.isEmpty && !ParameterEncoding.usesQuery(method)) {
            if method == .head { parts.append("-I") } else { parts += ["-X", method.rawValue] }
        }
        let resolved = try? resolvedURL()
        let url = resolved.map { u -> String in
            guard let user = u.user else { return u.description }
            return "\(u.scheme.rawValue)://\(user)\(u.password.map { ":" + $0 } ?? "")@\(u.hostHeader)\(u.target)"
        } ?? urlString
        parts.append(Self.shellQuote(url))
        let sentHeaders = resolved.map { resolvedHeaders(url: $0) } ?? headers
        let (requestBody, contentType) = resolvedBody()
        for (name, value) in sentHeaders where !(name.lowercased() == "authorization" && resolved?.user != nil) {
            parts += ["-H", Self.shellQuote("\(name): \(value)")]
        }
        if let contentType, !sentHeaders.contains("Content-Type") { parts += ["-H", Self.shellQuote("Content-Type: \(contentType)")] }
        switch requestBody {
        case .empty:
            break
        case .bytes(let bytes):
            if let text = String(validating: bytes, as: UTF8.self) {
                parts += ["--data-binary", Self.shellQuote(text)]
            } else {
                parts += ["--data-binary", "@-", "# \(bytes.count) binary bytes on stdin"]
            }
        case .file(let path):
            parts += ["--data-binary", Self.shellQuote("@" + path)]
        }
        if options.decompress { parts.append("--compressed") }
        return parts.joined(separator: " ")
    }

    public var description: String { "Operation(\(method) \(urlString), \(state))" }

    static func shellQuote(_ s: String) -> String {
        if !s.isEmpty, s.utf8.allSatisfy({ b in
            (b >= UInt8(ascii: "a") && b <= UInt8(ascii: "z")) || (b >= UInt8(ascii: "A") && b <= UInt8(ascii: "Z"))
                || (b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9")) || "-_./:=@%+,".utf8.contains(b)
        }) { return s }
        return "'" + s.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'"
    }
}

/// Handlers of one kind: the first is stored inline, so the usual single handler costs no array.
struct HandlerList<Handler: Sendable>: Sendable {
    private var first: Handler?
    private var rest: [Handler] = []

    var isEmpty: Bool { first == nil }

    mutating func append(_ handler: Handler) {
        if first == nil { first = handler } else { rest.append(handler) }
    }

    func forEach(_ body: (Handler) -> Void) {
        guard let first else { return }
        body(first)
        for handler in rest { body(handler) }
    }
}

extension Operation: TransferDelegate {
    package func transferDidReceiveHead(_ transfer: Transfer) {}

    package func transferDidProgress(_ transfer: Transfer) {
        let (uploads, downloads) = shared.withLock { ($0.uploadProgress, $0.downloadProgress) }
        if !uploads.isEmpty, transfer.requestBodyLength > 0 {
            let progress = TransferProgress(completed: transfer.requestBodyBytesSent, expected: transfer.requestBodyLength)
            callbackQueue.run { uploads.forEach { $0(progress) } }
        }
        if !downloads.isEmpty, transfer.head != nil {
            let progress = TransferProgress(completed: transfer.metrics.bodyBytesReceived, expected: transfer.expectedBodyLength)
            callbackQueue.run { downloads.forEach { $0(progress) } }
        }
    }

    package func transferDidComplete(_ transfer: Transfer) {
        var response: Response?
        if let head = transfer.head {
            response = Response(head: head, body: transfer.responseBody, trailers: transfer.trailers,
                                url: transfer.url, metrics: transfer.metrics)
        }
        if transfer.reportsProgress, transfer.error == nil {
            // The last progress report always says "done", whatever the throttle skipped.
            transferDidProgress(transfer)
        }
        if let error = transfer.error {
            complete(.failure(error), response: response)
        } else if let response {
            if acceptableStatus.contains(response.status) {
                complete(.success(response), response: response)
            } else {
                complete(.failure(CourierError(.httpStatus, "\(response.status) \(response.head.reason)", status: response.status)), response: response)
            }
        } else {
            complete(.failure(CourierError(.emptyReply)), response: nil)
        }
    }
}

/// RFC 4648 base64, for Basic credentials.
package enum Base64 {
    package static func encode(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var i = 0
        while i + 2 < bytes.count {
            let n = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2])
            out += [alphabet[Int(n >> 18)], alphabet[Int(n >> 12 & 63)], alphabet[Int(n >> 6 & 63)], alphabet[Int(n & 63)]]
            i += 3
        }
        let rest = bytes.count - i
        if rest == 1 {
            let n = UInt32(bytes[i]) << 16
            out += [alphabet[Int(n >> 18)], alphabet[Int(n >> 12 & 63)], UInt8(ascii: "="), UInt8(ascii: "=")]
        } else if rest == 2 {
            let n = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8
            out += [alphabet[Int(n >> 18)], alphabet[Int(n >> 12 & 63)], alphabet[Int(n >> 6 & 63)], UInt8(ascii: "=")]
        }
        return String(decoding: out, as: UTF8.self)
    }
}
