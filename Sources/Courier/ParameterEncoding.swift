import CourierCore

/// How an operation's parameters travel.
///
/// For GET, HEAD and DELETE they always go in the query string (MKNetworkKit's rule); for the
/// other methods they form the body, encoded as below.
public enum ParameterEncoding: Sendable, Hashable {
    /// `application/x-www-form-urlencoded` (the default, as in MKNetworkKit and AFNetworking).
    case form
    /// `application/json`, an object of string members.
    case json

    /// Whether parameters of `method` go in the query string rather than the body.
    static func usesQuery(_ method: HTTPMethod) -> Bool {
        method == .get || method == .head || method == .delete
    }

    /// Percent-encodes for `application/x-www-form-urlencoded` and query strings: unreserved bytes
    /// stay, everything else is escaped (space as `%20` in queries, `+` in form bodies).
    static func escape(_ string: String, spaceAsPlus: Bool) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(string.utf8.count)
        for b in string.utf8 {
            switch b {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
                 UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.append(b)
            case UInt8(ascii: " ") where spaceAsPlus:
                out.append(UInt8(ascii: "+"))
            default:
                let hex = Array("0123456789ABCDEF".utf8)
                out += [UInt8(ascii: "%"), hex[Int(b >> 4)], hex[Int(b & 0xf)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// `a=1&b=2`, keys sorted so the same parameters always give the same URL (cache keys and GET
    /// coalescing depend on that).
    static func formEncode(_ parameters: [String: String], spaceAsPlus: Bool) -> String {
        parameters.sorted { $0.key < $1.key }
            .map { escape($0.key, spaceAsPlus: spaceAsPlus) + "=" + escape($0.value, spaceAsPlus: spaceAsPlus) }
            .joined(separator: "&")
    }

    /// A JSON object of the parameters, keys sorted.
    static func jsonEncode(_ parameters: [String: String]) -> [UInt8] {
        JSONValue.object(parameters.sorted { $0.key < $1.key }.map { ($0.key, JSONValue.string($0.value)) }).utf8Bytes
    }
}
