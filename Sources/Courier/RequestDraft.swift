import CourierCore

/// A request as configured, before it is sent, and the one place that turns it into a core
/// `Transfer`: the URL with its query parameters, the request's own headers over the engine's
/// defaults, the body that parameters imply, the download file.
///
/// Why a value of its own: Swift's `HTTPOperation` and the C ABI's requests are two front ends of
/// the same request, and both must send exactly the same bytes for the same settings. The front
/// ends add only how the outcome is reported.
package struct RequestDraft: Sendable {
    package var method: HTTPMethod
    /// The engine's parsed base URL (nil for requests made from a full URL string).
    package let base: CourierURL?
    /// The request target under `base` ("/v1/items"), or the whole URL string.
    package let target: String
    package var headers = HTTPHeaders()
    package var defaultHeaders: HTTPHeaders
    package var options: TransferOptions
    package let engineID: Int

    /// What most requests leave unset, in a box made only when one of them is set: a request
    /// built and dropped by the thousand then carries (and destroys) one nil reference instead of
    /// seven fields.
    private final class Extras: @unchecked Sendable {
        var suppressedHeaders: [String] = []
        var parameters: [String: String] = [:]
        var parameterEncoding: ParameterEncoding = .form
        var body: RequestBody?
        var downloadPath: String?
        var credentials: String?
        var authorization: Authorization?
        var presetError: CourierError?
        var downloadStreams: [DownloadStreamBox] = []
        var destination: (@Sendable (ResponseHead) -> String?)?
        var resumablePath: String?
        var retryHandler: (@Sendable (RetryReason, Int) -> Bool)?
        var hooks: HookSet?
        var challenge: ChallengeState?
        /// The engine's outbox and, once frozen, the operation's dealings with it (one field:
        /// one reference to destroy for the many drafts that have neither).
        var offline: OfflineParts?

        func copy() -> Extras {
            let copy = Extras()
            copy.suppressedHeaders = suppressedHeaders
            copy.parameters = parameters
            copy.parameterEncoding = parameterEncoding
            copy.body = body
            copy.downloadPath = downloadPath
            copy.credentials = credentials
            copy.authorization = authorization
            copy.presetError = presetError
            copy.downloadStreams = downloadStreams
            copy.destination = destination
            copy.resumablePath = resumablePath
            copy.retryHandler = retryHandler
            copy.hooks = hooks
            copy.challenge = challenge
            copy.offline = offline
            return copy
        }
    }

    private var extras: Extras?

    private mutating func ownExtras() -> Extras {
        if isKnownUniquelyReferenced(&extras) { return extras! }
        if let shared = extras {
            let copy = shared.copy()
            extras = copy
            return copy
        }
        let made = Extras()
        extras = made
        return made
    }

    /// `HTTPOperation.onRetry`'s handler.
    package var retryHandler: (@Sendable (RetryReason, Int) -> Bool)? {
        get { extras?.retryHandler }
        set { ownExtras().retryHandler = newValue }
    }

    /// Header names not to send even though the defaults have them (curl's `-H "Name:"`).
    package var suppressedHeaders: [String] {
        get { extras?.suppressedHeaders ?? [] }
        set { ownExtras().suppressedHeaders = newValue }
    }
    /// Parameters: the query string for GET/HEAD/DELETE, the body otherwise.
    package var parameters: [String: String] {
        get { extras?.parameters ?? [:] }
        set { ownExtras().parameters = newValue }
    }
    /// Whether any parameter is set (without building an empty dictionary when none is).
    package var hasParameters: Bool { extras.map { !$0.parameters.isEmpty } ?? false }
    package var parameterEncoding: ParameterEncoding {
        get { extras?.parameterEncoding ?? .form }
        set { ownExtras().parameterEncoding = newValue }
    }
    package var body: RequestBody? {
        get { extras?.body }
        set { ownExtras().body = newValue }
    }
    package var downloadPath: String? {
        get { extras?.downloadPath }
        set { ownExtras().downloadPath = newValue }
    }
    /// Consumers that get every piece of the body beside the download file (fan-out).
    package var downloadStreams: [DownloadStreamBox] {
        get { extras?.downloadStreams ?? [] }
        set { ownExtras().downloadStreams = newValue }
    }
    /// Chooses the download file from the final response head.
    package var destination: (@Sendable (ResponseHead) -> String?)? {
        get { extras?.destination }
        set { ownExtras().destination = newValue }
    }
    /// A resumable download's destination.
    package var resumablePath: String? {
        get { extras?.resumablePath }
        set { ownExtras().resumablePath = newValue }
    }

    /// "user:password" for HTTP Basic authentication (curl's `-u`), used when the request has no
    /// How the request authenticates (a Basic or Bearer `Authorization` field) when it sets no
    /// Authorization header itself; it wins over `credentials` and the URL's.
    /// The engine's hooks (nil for none).
    package var hooks: HookSet? {
        get { extras?.hooks }
        set {
            ownExtras().hooks = newValue
            if newValue != nil { hasEngineParts = true }
        }
    }
    /// The engine's authenticator as this request deals with it (nil for none).
    package var challenge: ChallengeState? {
        get { extras?.challenge }
        set {
            ownExtras().challenge = newValue
            if newValue != nil { hasEngineParts = true }
        }
    }
    /// The engine's outbox (nil for none), where `freezing` operations are journaled.
    package var outbox: Outbox? {
        get { extras?.offline?.outbox }
        set { offlineParts().outbox = newValue }
    }
    /// Set by `HTTPOperation.freeze`: the operation goes through the outbox.
    package var freezing: FreezeState? {
        get { extras?.offline?.freezing }
        set {
            offlineParts().freezing = newValue
            if newValue != nil { hasEngineParts = true }
        }
    }

    private mutating func offlineParts() -> OfflineParts {
        let extras = ownExtras()
        if let parts = extras.offline { return parts }
        let parts = OfflineParts()
        extras.offline = parts
        return parts
    }
    /// Whether hooks, a challenge state or freezing were set, as a stored flag: the paths every
    /// request takes test it without touching the extras.
    package private(set) var hasEngineParts = false

    package var authorization: Authorization? {
        get { extras?.authorization }
        set { ownExtras().authorization = newValue }
    }

    /// Authorization header of its own; credentials in the URL are used when this is nil.
    package var credentials: String? {
        get { extras?.credentials }
        set { ownExtras().credentials = newValue }
    }
    /// A failure known before sending (the engine's host did not parse).
    package var presetError: CourierError? { extras?.presetError }

    package init(method: HTTPMethod, base: CourierURL?, target: String, parameters: [String: String], engineID: Int,
                 options: TransferOptions, defaultHeaders: HTTPHeaders, presetError: CourierError? = nil) {
        self.method = method
        self.base = base
        self.target = target
        self.engineID = engineID
        self.options = options
        self.defaultHeaders = defaultHeaders
        if !parameters.isEmpty { self.parameters = parameters }
        if let presetError { ownExtras().presetError = presetError }
    }

    /// An engine's base path without its trailing "/": the prefix of every path under it.
    package static func basePath(of base: CourierURL?) -> String {
        var path = base?.path ?? ""
        while path.utf8.last == UInt8(ascii: "/") { path.removeLast() }
        return path
    }

    /// The target for a path under an engine's base path: "items" and "/items" under "/v1" are
    /// both "/v1/items". (utf8.first rather than hasPrefix: hasPrefix is Unicode-aware and costs
    /// hundreds of instructions per call.)
    package static func target(_ path: String, under basePath: String) -> String {
        let rooted = path.utf8.first == UInt8(ascii: "/")
        if basePath.isEmpty, rooted { return path }
        return basePath + (rooted ? path : "/" + path)
    }

    /// Whether a string names a whole URL ("scheme://...") rather than a path or a bare host. A
    /// byte scan: String.contains(String) goes through generic string searching, thousands of
    /// instructions per call.
    package static func isAbsoluteURL(_ string: String) -> Bool {
        var string = string
        return string.withUTF8 { bytes in
            guard bytes.count >= 3 else { return false }
            for i in 0..<(bytes.count - 2)
            where bytes[i] == UInt8(ascii: ":") && bytes[i + 1] == UInt8(ascii: "/") && bytes[i + 2] == UInt8(ascii: "/") {
                return true
            }
            return false
        }
    }

    /// The error for a finished transfer whose status the caller does not accept (the response
    /// stays available beside it), worded the same for Swift operations and C requests.
    package static func unacceptableStatus(of transfer: Transfer) -> CourierError {
        CourierError(.httpStatus, "\(transfer.status) \(transfer.head?.reason ?? "")", status: transfer.status)
    }

    /// The URL as given: the engine's base with the path, or the full URL string.
    package var urlString: String {
        guard let base else { return target }
        return "\(base.scheme.rawValue)://\(base.hostHeader)\(target)"
    }

    /// The final URL with query parameters, as sent.
    package func resolvedURL() throws(CourierError) -> CourierURL {
        let (authority, path, query) = try resolvedTarget()
        return authority.withTarget(path: path, query: query)
    }

    /// Where the request goes: the URL giving scheme, host, port and credentials (the engine's
    /// base itself, shared, when there is one), and the target with the query parameters. Split
    /// so that a request built on an engine allocates no URL of its own.
    package func resolvedTarget() throws(CourierError) -> (authority: CourierURL, path: String, query: String?) {
        if let presetError { throw presetError }
        let authority: CourierURL
        var path: String
        var query: String?
        switch base {
        case .some(let engineBase):
            authority = engineBase
            (path, query) = CourierURL.split(target: target)
        case .none:
            authority = try CourierURL(parsing: target)
            path = authority.path
            query = authority.query
        }
        if hasParameters, ParameterEncoding.usesQuery(method) || body != nil {
            let encoded = ParameterEncoding.formEncode(parameters, spaceAsPlus: false)
            query = query.map { $0.isEmpty ? encoded : $0 + "&" + encoded } ?? encoded
        }
        return (authority, path, query)
    }

    /// Headers as sent: the defaults (User-Agent and Accept first, as curl sends them) except
    /// those the request sets itself, then the request's own in their order; suppressed names
    /// removed; Basic credentials last when no Authorization was given. With no headers of its
    /// own a request shares the engine's (no copy).
    /// `url` gives the credentials (its user and password).
    package func resolvedHeaders(url: CourierURL) -> HTTPHeaders {
        var merged = defaultHeaders
        Self.merge(own: headers, suppressed: suppressedHeaders, into: &merged)
        // (One path and one return: an early return here cost the common request, which has no
        // credentials at all, copies of the merged fields.)
        let explicit = authorization
        let userPassword = explicit == nil ? credentials ?? url.user.map { "\($0):\(url.password ?? "")" } : nil
        if explicit != nil || userPassword != nil, !merged.contains("Authorization") {
            merged.add(name: "Authorization", value: explicit?.fieldValue ?? "Basic " + Base64.encode(Array(userPassword!.utf8)))
        }
        return merged
    }

    /// `merged` (a request's defaults) without the names `own` sets, then `own` in its order, and
    /// without the `suppressed` names: how a request's fields combine with its engine's (or the
    /// CLI's, once for every URL). In place, so the common request copies nothing.
    @inline(__always)
    package static func merge(own: HTTPHeaders, suppressed: [String], into merged: inout HTTPHeaders) {
        if !own.isEmpty {
            for index in 0..<own.count where merged.contains(own.name(at: index)) {
                merged.remove(name: own.name(at: index))
            }
            for index in 0..<own.count { merged.add(name: own.name(at: index), value: own.value(at: index)) }
        }
        for name in suppressed where merged.contains(name) { merged.remove(name: name) }
    }

    /// The body as sent, with the Content-Type it implies (nil when the caller set one).
    package func resolvedBody() -> (RequestBody, contentType: String?) {
        if let body { return (body, nil) }
        guard hasParameters, !ParameterEncoding.usesQuery(method) else { return (.empty, nil) }
        switch parameterEncoding {
        case .form:
            return (.bytes(Array(ParameterEncoding.formEncode(parameters, spaceAsPlus: true).utf8)), "application/x-www-form-urlencoded")
        case .json:
            return (.bytes(ParameterEncoding.jsonEncode(parameters)), "application/json")
        }
    }

    /// The core transfer for this request, owned by its engine; the caller sets the delegate and
    /// progress reporting and submits it. Fails without I/O for a bad URL or an unwritable
    /// download directory. A download is staged (see `FileSink`): the caller's completion path
    /// (`TransferVerdict`) commits or discards it.
    ///
    /// `mutating` although it changes nothing: the drafts live in class instances, and a
    /// non-mutating call on a class's stored struct copies the whole struct first (a retain and a
    /// release of every field, about 2,500 instructions per request); a mutating call works in
    /// place.
    package mutating func makeTransfer() -> Result<Transfer, CourierError> {
        let target: (authority: CourierURL, path: String, query: String?)
        do {
            target = try resolvedTarget()
        } catch {
            return .failure(error)
        }
        var requestHeaders = resolvedHeaders(url: target.authority)
        let (requestBody, contentType) = resolvedBody()
        if let contentType, !requestHeaders.contains("Content-Type") {
            requestHeaders.add(name: "Content-Type", value: contentType)
        }
        let transfer: Transfer
        if hasEngineParts, let adapt = extras?.hooks?.adaptRequest {
            switch adapted(by: adapt, target: target.authority.withTarget(path: target.path, query: target.query),
                           headers: requestHeaders, body: requestBody) {
            case .success(let made): transfer = made
            case .failure(let error): return .failure(error)
            }
        } else {
            transfer = Transfer(authority: target.authority, path: target.path, query: target.query, method: method,
                                headers: consume requestHeaders, body: requestBody, options: options)
        }
        transfer.owner = engineID
        guard extras != nil else { return .success(transfer) }
        if hasEngineParts, extras?.hooks?.observesRedirects == true { transfer.observesRedirects = true }
        if let problem = authorization?.problem { return .failure(CourierError(.invalidArgument, problem)) }
        switch makeSink(extraStream: nil) {
        case .success(let sink?): transfer.sink = sink
        case .success(nil): break
        case .failure(let error): return .failure(error)
        }
        return .success(transfer)
    }

    /// `makeTransfer` through the engine's request hook.
    @inline(never)
    private mutating func adapted(by adapt: @Sendable (inout OutgoingRequest) throws -> Void, target: CourierURL,
                                  headers: HTTPHeaders, body: RequestBody) -> Result<Transfer, CourierError> {
        var outgoing = OutgoingRequest(method: method, url: target, headers: headers, body: body)
        do {
            try adapt(&outgoing)
        } catch {
            return .failure(.rejected(by: error))
        }
        if let bad = outgoing.headers.firstInvalidField() {
            return .failure(CourierError(.invalidHeader, "set by the request hook: \(bad)"))
        }
        return .success(Transfer(url: outgoing.url, method: outgoing.method, headers: outgoing.headers, body: outgoing.body,
                                 options: options))
    }

    /// Where the body goes: a resumable download, a destination chosen from the head, or the
    /// download file and the consumers together (`extraStream` is a front end's own, such as the
    /// async body of `Engine.stream`); nil for memory.
    package func makeSink(extraStream: StreamSink?) -> Result<ResponseSink?, CourierError> {
        if let resumablePath { return .success(.resumable(ResumableDownload(destination: resumablePath))) }
        if let destination { return .success(.destination(DestinationChooser(destination))) }
        var targets: [FanOutSink.Target] = []
        if let downloadPath {
            do {
                targets.append(.file(try FileSink(download: downloadPath)))
            } catch {
                return .failure(error)
            }
        }
        for stream in downloadStreams { targets.append(.stream(stream.sink)) }
        if let extraStream { targets.append(.stream(extraStream)) }
        switch targets.count {
        case 0: return .success(nil)
        case 1:
            switch targets[0] {
            case .file(let file): return .success(.file(file))
            case .stream(let sink): return .success(.stream(sink))
            }
        default: return .success(.fanOut(FanOutSink(targets)))
        }
    }
}
