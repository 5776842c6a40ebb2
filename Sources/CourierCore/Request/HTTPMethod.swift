/// An HTTP request method.
///
/// A struct over a string rather than an enum, because servers define methods of their own
/// (WebDAV's PROPFIND, ...) and RFC 9110 section 9 lets them. The common ones are constants.
public struct HTTPMethod: RawRepresentable, Sendable, Hashable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The method token as sent on the wire (case-sensitive, RFC 9110 section 9.1).
    public let rawValue: String
    /// Which well-known method this is (0 for any other), found once when the value is made.
    /// Why: the core asks "is it HEAD?", "is it idempotent?" several times per request, and each
    /// string comparison costs far more than comparing a byte; the constants below are
    /// classified once per process.
    private let known: UInt8

    /// Wraps a method token; `CourierError.invalidArgument` is raised at send time if it is not a token.
    public init(rawValue: String) {
        self.rawValue = rawValue
        known = Self.classify(rawValue)
    }
    /// Allows `"PROPFIND"` where a method is expected.
    public init(stringLiteral value: String) { self.init(rawValue: value) }

    private static func classify(_ token: String) -> UInt8 {
        switch token {
        case "GET": return 1
        case "HEAD": return 2
        case "POST": return 3
        case "PUT": return 4
        case "DELETE": return 5
        case "PATCH": return 6
        case "OPTIONS": return 7
        case "TRACE": return 8
        case "CONNECT": return 9
        default: return 0
        }
    }

    /// Equal when the tokens are: known methods compare by their byte, others by their text.
    public static func == (a: HTTPMethod, b: HTTPMethod) -> Bool {
        if a.known != 0 || b.known != 0 { return a.known == b.known }
        return a.rawValue == b.rawValue
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }

    /// GET
    public static let get = HTTPMethod(rawValue: "GET")
    /// HEAD: like GET, but the response never has a body.
    public static let head = HTTPMethod(rawValue: "HEAD")
    /// POST
    public static let post = HTTPMethod(rawValue: "POST")
    /// PUT
    public static let put = HTTPMethod(rawValue: "PUT")
    /// PATCH
    public static let patch = HTTPMethod(rawValue: "PATCH")
    /// DELETE
    public static let delete = HTTPMethod(rawValue: "DELETE")
    /// OPTIONS
    public static let options = HTTPMethod(rawValue: "OPTIONS")
    /// TRACE
    public static let trace = HTTPMethod(rawValue: "TRACE")
    /// CONNECT (not supported for requests; listed for completeness).
    public static let connect = HTTPMethod(rawValue: "CONNECT")

    /// Idempotent methods (RFC 9110 section 9.2.2) may be sent again when a reused connection
    /// turns out to have been closed by the server before it answered.
    public var isIdempotent: Bool {
        switch known {
        case 1, 2, 4, 5, 7, 8: return true  // GET, HEAD, PUT, DELETE, OPTIONS, TRACE
        default: return false
        }
    }

    /// Safe methods (RFC 9110 section 9.2.1): a 301/302 may be followed with the same method.
    public var isSafe: Bool {
        switch known {
        case 1, 2, 7, 8: return true  // GET, HEAD, OPTIONS, TRACE
        default: return false
        }
    }

    /// POST, PUT and PATCH announce an empty body with `Content-Length: 0` (RFC 9110 section
    /// 8.6: a user agent should send it when the method defines a meaning for content).
    package var announcesEmptyBody: Bool { known == 3 || known == 4 || known == 6 }

    /// Whether the token is a valid method name.
    public var isValidToken: Bool {
        if known != 0 { return true }
        return !rawValue.isEmpty && rawValue.utf8.allSatisfy(HTTPHeaders.isTokenByte)
    }

    public var description: String { rawValue }
}
