import CourierCore

/// A finished HTTP response: status, headers, body and how the transfer went.
///
/// The accessors for text, JSON and `Decodable` throw a `CourierError` in the `.responseFormat`
/// family that says what did not fit (charset, byte offset, the decoding path), rather than
/// returning nil and leaving the caller to guess; they never look at the Content-Type to refuse
/// work (AFNetworking's "unacceptable content-type" trap).
public struct Response: Sendable {
    // A view of the finished transfer, whose result fields never change again: a Response is one
    // reference, so handing it to several handlers and a continuation copies nothing.
    package let transfer: Transfer

    package init(finished transfer: Transfer) {
        self.transfer = transfer
    }

    /// Creates a response (tests, and serializers that build one).
    public init(head: ResponseHead, body: [UInt8], trailers: HTTPHeaders = HTTPHeaders(), url: CourierURL, metrics: TransferMetrics = TransferMetrics()) {
        transfer = Transfer.finished(url: url, head: head, body: body, trailers: trailers, metrics: metrics)
    }

    /// The status line and headers.
    public var head: ResponseHead { transfer.head ?? ResponseHead() }
    /// The body, decoded from its content coding (gzip, deflate, br, zstd) when that was on. Empty when it went to a file.
    public var body: [UInt8] { transfer.responseBody }
    /// Trailer fields of a chunked HTTP/1.1 response or an HTTP/2 stream (a gRPC-style API's
    /// status).
    public var trailers: HTTPHeaders { transfer.trailers }
    /// The HTTP version the response came over, as httpx and curl's `-w %{http_version}` spell
    /// it: "HTTP/1.1", "HTTP/1.0" or "HTTP/2".
    public var httpVersion: String { "HTTP/" + head.versionText }
    /// The URL that answered, after redirects.
    public var url: CourierURL { transfer.url }
    /// Timings and connection facts.
    public var metrics: TransferMetrics { transfer.metrics }
    /// The redirects followed to get here, oldest first: each one's URL and head (httpx's
    /// `history`); empty when the first URL answered.
    public var history: [RedirectedResponse] { transfer.history }

    /// Where it came from: the origin (`.fresh`), storage (`.cached(stale:)`), a 304 confirming
    /// the stored one (`.notModified`), the stored one standing in for a failing origin
    /// (`.staleOnError`), or the cache itself (`.generated`, a 504).
    public var cachePhase: CachePhase { transfer.cachePhase }
    /// MKNetworkKit's `isCachedResponse`: answered from storage without a successful exchange
    /// with the origin (`.cached` or `.staleOnError`).
    public var isCachedResponse: Bool {
        switch transfer.cachePhase {
        case .cached, .staleOnError: return true
        case .fresh, .notModified, .generated: return false
        }
    }
    /// A cached-then-fresh preview: the final response follows.
    public var isPreview: Bool { transfer.isPreview }
    /// curl's `%{cache_status}`: hit, miss, revalidated, stale or bypass.
    public var cacheStatus: String { transfer.cacheStatus }

    /// The status code.
    public var status: Int { transfer.status }
    /// The header fields.
    public var headers: HTTPHeaders { transfer.head?.headers ?? HTTPHeaders() }
    /// The Content-Type value, if any.
    public var contentType: String? { transfer.head?.headers["Content-Type"] }
    /// The charset parameter of Content-Type, lower-cased.
    public var charset: String? { TextDecoding.charset(ofContentType: contentType) }

    /// The body as text in the charset of Content-Type (UTF-8 when none is named).
    public func string() throws(CourierError) -> String {
        try TextDecoding.decode(body, charset: charset)
    }

    /// The body as text, or nil when it is not valid in its charset (MKNetworkKit's
    /// `responseString`); `string()` says why.
    public var text: String? { try? string() }

    /// The body parsed as JSON.
    public func json() throws(CourierError) -> JSONValue {
        try JSONValue(parsing: body)
    }

    /// The body decoded as JSON into `type` by Courier's own decoder (no Foundation; for
    /// `JSONDecoder`'s date and data strategies, `CourierFoundation` adds `decode(_:using:)` with
    /// one). A body that is not JSON is `.invalidJSON`; one that does not fit is `.decodeMismatch`
    /// naming the path.
    public func decode<T: Decodable>(_ type: T.Type, using decoder: CourierJSONDecoder = CourierJSONDecoder()) throws(CourierError) -> T {
        try decoder.decode(type, from: body)
    }
}

extension CourierError {
    /// The response of a request that failed with one: an unaccepted status (a 404's body and
    /// headers), a response hook's rejection, a download that could not be moved into place.
    /// nil when no response arrived, and for errors not made by a request.
    public var response: Response? { attachment as? Response }
}
