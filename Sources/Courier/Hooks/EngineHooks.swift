import CourierCore

/// Where an engine's application steps into every request (MKNetworkKit's subclass points,
/// AFNetworking's session hooks), each optional and costing nothing when unset.
///
/// ```swift
/// var configuration = Engine.Configuration()
/// configuration.hooks.adaptRequest = { request in
///     request.headers.replaceOrAdd(name: "X-Signature", value: sign(request.method, request.url, request.body))
/// }
/// configuration.hooks.validateResponse = { response in
///     if let code = try? response.json()["error"]?.intValue { throw APIError(code: code) }
/// }
/// ```
public struct EngineHooks: Sendable {
    /// Changes each request just before it is built for sending (headers, signing, another
    /// URL or method): it sees the final URL, the merged headers and the body. Throwing fails the
    /// request without I/O (`.rejected`, with the error as `underlying`, or the `CourierError`
    /// thrown). Runs on the sending thread, again for a retry after an auth challenge.
    public var adaptRequest: (@Sendable (inout OutgoingRequest) throws -> Void)?
    /// Judges each completed response, of any status: throwing turns it into a failure
    /// (`.rejected` carrying the error; the response stays available), so a 200 with an error
    /// body fails and a business error code becomes a typed error. Runs on the loop thread
    /// before the handlers: keep it quick. Not asked about failures without a response.
    public var validateResponse: (@Sendable (Response) throws -> Void)?
    /// Asked before each redirect is followed: follow, refuse (`.redirectRefused`) or go
    /// elsewhere. On the loop thread.
    public var redirect: (@Sendable (Redirect) -> RedirectVerdict)?
    /// Told about every request of the engine when it ends, success or not, with its metrics.
    /// On the loop thread, before the handlers.
    public var observeMetrics: (@Sendable (CompletedRequest) -> Void)?

    /// No hooks.
    public init() {}

    /// Whether any hook is set.
    public var isEmpty: Bool { adaptRequest == nil && validateResponse == nil && redirect == nil && observeMetrics == nil }
}

/// A request about to be sent, as `EngineHooks.adaptRequest` may change it.
public struct OutgoingRequest: Sendable {
    /// The method.
    public var method: HTTPMethod
    /// The full URL, query included.
    public var url: CourierURL
    /// Every field that will be sent, defaults and credentials merged in (the framing fields
    /// Courier adds itself, Host, Content-Length, Accept-Encoding, are not here).
    public var headers: HTTPHeaders
    /// The body (read it to sign it; `.bytes` and `.file` can be read without consuming them).
    public let body: RequestBody
}

/// A redirect about to be followed.
public struct Redirect: Sendable {
    /// The 3xx status.
    public let status: Int
    /// The URL that answered with it.
    public let from: CourierURL
    /// Where the Location leads.
    public let to: CourierURL
    /// The method the next hop will use (a POST may have become GET).
    public let method: HTTPMethod
}

/// What `EngineHooks.redirect` decides.
public enum RedirectVerdict: Sendable, Equatable {
    /// Follow to `Redirect.to`.
    case follow
    /// Stop: the request fails with `.redirectRefused`.
    case refuse
    /// Go to this URL instead (credentials are dropped if it leaves the origin, and an https to
    /// http change is refused unless downgrades are allowed).
    case rewrite(CourierURL)
}

/// What `EngineHooks.observeMetrics` is told about each request.
public struct CompletedRequest: Sendable {
    /// The method and the final URL (after redirects).
    public let method: HTTPMethod
    public let url: CourierURL
    /// The final status, 0 when no response arrived.
    public let status: Int
    /// The failure, nil on success (after the response hook and status check).
    public let error: CourierError?
    /// Timings, sizes, connection reuse, retries.
    public let metrics: TransferMetrics
}
