@_exported import Courier
import CourierCore
@_exported import Foundation
#if canImport(FoundationNetworking)
// URLRequest lives here on Linux (it links libcurl, which the Swift toolchain needs anyway).
@_exported import FoundationNetworking
#endif

// Foundation conveniences for code moving over from URLSession: `URL`, `URLRequest`, `Data` and
// `Date` where Courier speaks `CourierURL`, `RequestBody`, `[UInt8]` and epoch seconds. A module
// of its own, so the library itself stays free of full Foundation (and its ICU data: about
// 6.5 MiB of resident memory per process); import this one instead of `Courier` to get both.

extension Engine {
    /// An engine for `baseURL` (scheme, host, port and an optional API path), as
    /// `Engine(host: baseURL.absoluteString)`.
    public convenience init(baseURL: URL, defaultHeaders: [String: String] = [:], configuration: Configuration = Configuration()) {
        self.init(host: baseURL.absoluteString, defaultHeaders: defaultHeaders, configuration: configuration)
    }

    /// An operation for a full `URL` (which may be on another host than the engine's).
    public func operation(url: URL, method: HTTPMethod = .get) -> Courier.HTTPOperation {
        operation(urlString: url.absoluteString, method: method)
    }

    /// An operation that sends what `request` describes: its method, URL, header fields and body
    /// (`httpBody`; a body stream is not read here), and its `timeoutInterval` as the limit on
    /// silence (URLSession's meaning: between two bytes, and before the first). A request without
    /// a URL makes an operation that fails with `.invalidURL` when sent.
    public func operation(_ request: URLRequest) -> Courier.HTTPOperation {
        let method = HTTPMethod(rawValue: request.httpMethod ?? "GET")
        let operation = operation(urlString: request.url?.absoluteString ?? "", method: method)
        for (name, value) in (request.allHTTPHeaderFields ?? [:]).sorted(by: { $0.key < $1.key }) {
            operation.headers.replaceOrAdd(name: name, value: value)
        }
        if let body = request.httpBody { operation.body = .bytes(Array(body)) }
        if request.timeoutInterval > 0 {
            let limit = Nanoseconds.seconds(request.timeoutInterval)
            operation.timeouts.firstByte = limit
            operation.timeouts.idle = limit
        }
        return operation
    }

    /// Sends `request` and returns the response with its body as `Data` (URLSession's
    /// `data(for:)`); an unaccepted status throws `.httpStatus` with the response in
    /// `CourierError.response`.
    public func data(for request: URLRequest) async throws(CourierError) -> (Data, Response) {
        let response = try await send(operation(request))
        return (response.data, response)
    }
}

extension RequestBody {
    /// A body from `Data` (copied once into the bytes Courier writes from).
    public static func data(_ data: Data) -> RequestBody { .bytes(Array(data)) }
}

extension CourierURL {
    /// The URL as Foundation's `URL` (nil only for a URL Foundation refuses).
    public var foundationURL: URL? { URL(string: description) }

    /// Parses a Foundation `URL`.
    public init(_ url: URL) throws(CourierError) {
        try self.init(parsing: url.absoluteString)
    }
}

extension Response {
    /// The body as `Data`.
    public var data: Data { Data(body) }

    /// The URL that answered, after redirects, as Foundation's `URL`.
    public var foundationURL: URL? { url.foundationURL }

    /// The `Date` header field as a `Date` (nil when absent or not an HTTP date).
    public var date: Date? { headerDate("Date") }

    /// The `Last-Modified` header field as a `Date`.
    public var lastModified: Date? { headerDate("Last-Modified") }

    /// The `Expires` header field as a `Date` (an invalid value such as "0" is nil, which RFC
    /// 9111 reads as "already expired").
    public var expires: Date? { headerDate("Expires") }

    /// A header field parsed as an HTTP date (IMF-fixdate, RFC 850 or asctime).
    public func headerDate(_ name: String) -> Date? {
        guard let text = headers[name], let seconds = HTTPDate.parse(text, now: Int64(Date().timeIntervalSince1970)) else { return nil }
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }
}
