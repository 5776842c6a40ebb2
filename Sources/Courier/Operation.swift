import FoundationEssentials

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
    /// The URL as given (the engine's base plus path, or the full URL string).
    public let urlString: String
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

    /// Where the operation stands.
    public enum State: Sendable, Equatable {
        /// Being configured.
        case ready
        /// Handed to the shared queue (queued, connecting or transferring).
        case enqueued
        /// Done: handlers have been (or are being) called.
        case finished
    }

    private let lock = Lock()
    private var _state: State = .ready
    private var _response: Response?
    private var _error: CourierError?
    private var transfer: Transfer?
    private var completionHandlers: [@Sendable (Response) -> Void] = []
    private var errorHandlers: [@Sendable (CourierError, Response?) -> Void] = []
    private var finishHandlers: [@Sendable (Result<Response, CourierError>) -> Void] = []
    private var uploadProgressHandlers: [@Sendable (TransferProgress) -> Void] = []
    private var downloadProgressHandlers: [@Sendable (TransferProgress) -> Void] = []
    private var continuation: CheckedContinuation<Result<Response, CourierError>, Never>?
    private var cancelledEarly = false
    /// A failure known before sending (the engine's host did not parse).
    var presetError: CourierError?
    let callbackQueue: CallbackQueue
    let defaultHeaders: HTTPHeaders

    init(method: HTTPMethod, urlString: String, parameters: [String: String], engineID: Int,
         options: TransferOptions, acceptableStatus: Range<Int>, defaultHeaders: HTTPHeaders, callbackQueue: CallbackQueue) {
        self.method = method
        self.urlString = urlString
        self.parameters = parameters
        self.engineID = engineID
        self.options = options
        self.acceptableStatus = acceptableStatus
        self.defaultHeaders = defaultHeaders
        self.callbackQueue = callbackQueue
    }

    /// Creates a stand-alone operation with default settings, for use without an engine
    /// (`Engine.shared` sends those).
    public convenience init(urlString: String, method: HTTPMethod = .get, parameters: [String: String] = [:]) {
        self.init(method: method, urlString: urlString, parameters: parameters, engineID: 0, options: TransferOptions(),
                  acceptableStatus: 200..<400, defaultHeaders: Engine.standardHeaders, callbackQueue: Engine.shared.callbackQueue)
    }

    // MARK: - Handlers

    /// Adds a handler for success. Handlers added after completion run at once (on the queue).
    @discardableResult
    public func onCompletion(_ handler: @escaping @Sendable (Response) -> Void) -> Operation {
        let done: Response? = lock.withLock {
            if _state == .finished { return _response.flatMap { _error == nil ? $0 : nil } }
            completionHandlers.append(handler)
            return nil
        }
        if let done { callbackQueue.run { handler(done) } }
        return self
    }

    /// Adds a handler for failure; the response is there when the server answered (a 404 body,
    /// for instance).
    @discardableResult
    public func onError(_ handler: @escaping @Sendable (CourierError, Response?) -> Void) -> Operation {
        let done: (CourierError, Response?)? = lock.withLock {
            if _state == .finished, let error = _error { return (error, _response) }
            if _state != .finished { errorHandlers.append(handler) }
            return nil
        }
        if let done { callbackQueue.run { handler(done.0, done.1) } }
        return self
    }

    /// Adds a handler that sees either outcome.
    @discardableResult
    public func onFinish(_ handler: @escaping @Sendable (Result<Response, CourierError>) -> Void) -> Operation {
        let done: Result<Response, CourierError>? = lock.withLock {
            guard _state == .finished else {
                finishHandlers.append(handler)
                return nil
            }
            if let error = _error { return .failure(error) }
            return _response.map { .success($0) }
        }
        if let done { callbackQueue.run { handler(done) } }
        return self
    }

    /// Adds a handler for request-body progress (at most every 50 ms, and at the end).
    @discardableResult
    public func onUploadProgress(_ handler: @escaping @Sendable (TransferProgress) -> Void) -> Operation {
        lock.withLock { uploadProgressHandlers.append(handler) }
        return self
    }

    /// Adds a handler for response-body progress (at most every 50 ms, and at the end).
    @discardableResult
    public func onDownloadProgress(_ handler: @escaping @Sendable (TransferProgress) -> Void) -> Operation {
        lock.withLock { downloadProgressHandlers.append(handler) }
        return self
    }

    // MARK: - Outcome

    /// The current state.
    public var state: State { lock.withLock { _state } }
    /// The response, once finished (also on `.httpStatus` failures).
    public var response: Response? { lock.withLock { _response } }
    /// The error, once finished with one.
    public var error: CourierError? { lock.withLock { _error } }

    /// Cancels the operation wherever it is; its error handlers get `.cancelled`. Cancelling a
    /// finished operation does nothing.
    public func cancel() {
        let target: Transfer? = lock.withLock {
            if _state == .ready { cancelledEarly = true }
            return transfer
        }
        if let target { Runtime.shared.cancel(target) }
    }

    // MARK: - Sending

    /// Builds the core transfer and submits it. Called by the engine.
    func start() {
        let built = lock.withLock { () -> Result<Transfer, CourierError>? in
            guard _state == .ready else { return nil }
            _state = .enqueued
            if cancelledEarly { return .failure(CourierError(.cancelled)) }
            let result = makeTransfer()
            if case .success(let t) = result { transfer = t }
            return result
        }
        switch built {
        case nil:
            return
        case .failure(let error):
            complete(.failure(error), response: nil)
        case .success(let transfer):
            Runtime.shared.submit(transfer)
        }
    }

    /// Registers the continuation `Engine.send` waits on (before `start`).
    func setContinuation(_ continuation: CheckedContinuation<Result<Response, CourierError>, Never>) {
        let done: Result<Response, CourierError>? = lock.withLock {
            if _state == .finished { return _error.map { .failure($0) } ?? _response.map { .success($0) } }
            self.continuation = continuation
            return nil
        }
        if let done { continuation.resume(returning: done) }
    }

    /// The final URL with query parameters, as sent.
    func resolvedURL() throws(CourierError) -> CourierURL {
        var url = try CourierURL(parsing: urlString)
        if !parameters.isEmpty, ParameterEncoding.usesQuery(method) || body != nil {
            let encoded = ParameterEncoding.formEncode(parameters, spaceAsPlus: false)
            url.query = url.query.map { $0.isEmpty ? encoded : $0 + "&" + encoded } ?? encoded
        }
        return url
    }

    /// Headers as sent: the operation's own, then the engine's defaults for names not set.
    func resolvedHeaders(url: CourierURL) -> HTTPHeaders {
        var merged = headers
        for (name, value) in defaultHeaders where !merged.contains(name) {
            merged.add(name: name, value: value)
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

    /// Called with `lock` held.
    private func makeTransfer() -> Result<Transfer, CourierError> {
        if let presetError { return .failure(presetError) }
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
        // Runs under `lock` (from `start`).
        transfer.reportsProgress = !uploadProgressHandlers.isEmpty || !downloadProgressHandlers.isEmpty
        transfer.delegate = self
        return .success(transfer)
    }

    /// Runs the handlers of the outcome once, then drops every handler (breaking cycles through
    /// captured values).
    fileprivate func complete(_ result: Result<Response, CourierError>, response: Response?) {
        let (completions, errors, finishes, waiter, queue) = lock.withLock {
            _state = .finished
            switch result {
            case .success(let r): _response = r
            case .failure(let e): _error = e; _response = response
            }
            transfer = nil
            defer {
                completionHandlers = []
                errorHandlers = []
                finishHandlers = []
                uploadProgressHandlers = []
                downloadProgressHandlers = []
                continuation = nil
            }
            return (completionHandlers, errorHandlers, finishHandlers, continuation, callbackQueue)
        }
        waiter?.resume(returning: result)
        guard !completions.isEmpty || !errors.isEmpty || !finishes.isEmpty else { return }
        queue.run {
            switch result {
            case .success(let r):
                for handler in completions { handler(r) }
            case .failure(let e):
                for handler in errors { handler(e, response) }
            }
            for handler in finishes { handler(result) }
        }
    }

    // MARK: - Description

    /// A curl command line that sends the same request, for logs and bug reports
    /// (MKNetworkKit's `curlCommandLineString`).
    public var curlCommand: String {
        var parts = ["curl"]
        if method != .get || body != nil || (!parameters.isEmpty && !ParameterEncoding.usesQuery(method)) {
            if method == .head { parts.append("-I") } else { parts += ["-X", method.rawValue] }
        }
        let url = (try? resolvedURL()).map { u -> String in
            guard let user = u.user else { return u.description }
            return "\(u.scheme.rawValue)://\(user)\(u.password.map { ":" + $0 } ?? "")@\(u.hostHeader)\(u.target)"
        } ?? urlString
        parts.append(Self.shellQuote(url))
        let resolved = (try? resolvedURL()).map { resolvedHeaders(url: $0) } ?? headers
        let (requestBody, contentType) = resolvedBody()
        for (name, value) in resolved where !(name.lowercased() == "authorization" && (try? resolvedURL())?.user != nil) {
            parts += ["-H", Self.shellQuote("\(name): \(value)")]
        }
        if let contentType, !resolved.contains("Content-Type") { parts += ["-H", Self.shellQuote("Content-Type: \(contentType)")] }
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

extension Operation: TransferDelegate {
    package func transferDidReceiveHead(_ transfer: Transfer) {}

    package func transferDidProgress(_ transfer: Transfer) {
        let (uploads, downloads) = lock.withLock { (uploadProgressHandlers, downloadProgressHandlers) }
        if !uploads.isEmpty, transfer.requestBodyLength > 0 {
            let progress = TransferProgress(completed: transfer.requestBodyBytesSent, expected: transfer.requestBodyLength)
            callbackQueue.run { for handler in uploads { handler(progress) } }
        }
        if !downloads.isEmpty, transfer.head != nil {
            let progress = TransferProgress(completed: transfer.metrics.bodyBytesReceived, expected: transfer.expectedBodyLength)
            callbackQueue.run { for handler in downloads { handler(progress) } }
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
