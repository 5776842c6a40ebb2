import CourierCore

/// How a request authenticates: the `Authorization` field Courier writes when the request sets
/// none itself. Like every credential it never follows a redirect to another origin (the core's
/// rule: the field is dropped on a cross-origin hop).
public enum Authorization: Sendable, Hashable {
    /// RFC 7617: `Basic base64(user:password)`. The user may not contain ":".
    case basic(user: String, password: String)
    /// RFC 6750: `Bearer token` (an OAuth 2 access token, curl's --oauth2-bearer).
    case bearer(String)

    /// The credentials a field value names: `Basic <base64 of user:password>` or `Bearer <token>`
    /// (scheme names case-insensitive); nil for anything else (the C ABI and Python pass values).
    public init?(fieldValue: String) {
        let parts = fieldValue.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2 else { return nil }
        let credentials = String(parts[1])
        switch parts[0].lowercased() {
        case "bearer":
            self = .bearer(credentials)
        case "basic":
            guard let decoded = Base64.decode(credentials), let text = String(validating: decoded, as: UTF8.self),
                  let colon = text.firstIndex(of: ":") else { return nil }
            self = .basic(user: String(text[..<colon]), password: String(text[text.index(after: colon)...]))
        default:
            return nil
        }
        if problem != nil { return nil }
    }

    /// The field's value.
    package var fieldValue: String {
        switch self {
        case .basic(let user, let password): return "Basic " + Base64.encode(Array("\(user):\(password)".utf8))
        case .bearer(let token): return "Bearer " + token
        }
    }

    /// Why it cannot be sent, or nil: a line break (or another control character) in a token,
    /// a ":" in a Basic user.
    package var problem: String? {
        switch self {
        case .basic(let user, let password):
            if user.contains(":") { return "a Basic user may not contain ':'" }
            if ByteClass.hasControlCharacter(user) || ByteClass.hasControlCharacter(password) {
                return "a control character in Basic credentials"
            }
        case .bearer(let token):
            if token.isEmpty { return "an empty bearer token" }
            if token.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F }) {
                return "a space or control character in a bearer token"
            }
        }
        return nil
    }
}
