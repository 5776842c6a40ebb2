/// An HTTP request method.
///
/// A struct over a string rather than an enum, because servers define methods of their own
/// (WebDAV's PROPFIND, ...) and RFC 9110 section 9 lets them. The common ones are constants.
public struct HTTPMethod: RawRepresentable, Sendable, Hashable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The method token as sent on the wire (case-sensitive, RFC 9110 section 9.1).
    public let rawValue: String

    /// Wraps a method token; `CourierError.invalidArgument` is raised at send time if it is not a token.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// Allows `"PROPFIND"` where a method is expected.
    public init(stringLiteral value: String) { self.rawValue = value }

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
        switch rawValue {
        case "GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE": return true
        default: return false
        }
    }

    /// Safe methods (RFC 9110 section 9.2.1): a 301/302 may be followed with the same method.
    public var isSafe: Bool {
        switch rawValue {
        case "GET", "HEAD", "OPTIONS", "TRACE": return true
        default: return false
        }
    }

    /// Whether the token is a valid method name.
    public var isValidToken: Bool {
        switch rawValue {
        case "GET", "POST", "PUT", "HEAD", "DELETE", "PATCH", "OPTIONS", "TRACE":
            return true
        default:
            return !rawValue.isEmpty && rawValue.utf8.allSatisfy(HTTPHeaders.isTokenByte)
        }
    }

    public var description: String { rawValue }
}
