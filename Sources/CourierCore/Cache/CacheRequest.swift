/// What the cache needs to know about a request.
package struct CacheRequest: Sendable {
    package var method: HTTPMethod
    package var directives: CacheDirectives
    package var pragmaNoCache: Bool
    /// The caller sent its own preconditions (If-*): the exchange is the caller's, not the cache's.
    package var isConditional: Bool
    /// The caller sent a Range field at all.
    package var hasRange: Bool
    /// The single byte range it asks for, when it is one the cache can answer from stored parts
    /// (section 3.4); a Range field that is not one (several ranges, another unit) leaves the
    /// exchange to the caller.
    package var range: ByteRangeRequest?
    /// The Authorization the request carries (part of every variant key), if any.
    package var authorization: String?

    /// Reads what matters from `headers` in one pass over the field names (a lookup per name
    /// would scan the list nine times on every request a cache sees).
    package init(method: HTTPMethod, headers: HTTPHeaders) {
        self.method = method
        var cacheControl = false, pragma = false, conditional = false, ranged = false
        var authorizationIndex: Int?
        for index in headers.fields.indices {
            switch Self.classify(headers, index) {
            case .cacheControl: cacheControl = true
            case .pragma: pragma = true
            case .precondition: conditional = true
            case .range: ranged = true
            case .authorization: if authorizationIndex == nil { authorizationIndex = index }
            case .other: break
            }
        }
        directives = cacheControl ? CacheDirectives(headers) : CacheDirectives()
        pragmaNoCache = pragma && !cacheControl && CacheDirectives.pragmaNoCache(headers)
        isConditional = conditional
        hasRange = ranged
        range = ranged && method == .get ? Self.singleRange(headers) : nil
        authorization = authorizationIndex.map { _ in headers.combinedValue(for: "Authorization") ?? "" }
    }

    private enum FieldKind { case cacheControl, pragma, precondition, range, authorization, other }

    private static let preconditions = ["if-none-match", "if-modified-since", "if-match", "if-unmodified-since", "if-range"]

    /// The request's one Range field as a single byte range (several fields: none).
    @inline(never)
    private static func singleRange(_ headers: HTTPHeaders) -> ByteRangeRequest? {
        let values = headers.values(for: "Range")
        return values.count == 1 ? ByteRangeRequest(values[0]) : nil
    }

    private static func classify(_ headers: HTTPHeaders, _ index: Int) -> FieldKind {
        let field = headers.fields[index]
        let length = Int(field.nameEnd &- field.nameStart)
        guard length >= 5, length <= 19 else { return .other }
        let first = HTTPHeaders.asciiLower(headers.storage[Int(field.nameStart)])
        switch first {
        case UInt8(ascii: "c"):
            return HTTPHeaders.nameMatches(headers.storage, field, "cache-control") ? .cacheControl : .other
        case UInt8(ascii: "p"):
            return HTTPHeaders.nameMatches(headers.storage, field, "pragma") ? .pragma : .other
        case UInt8(ascii: "a"):
            return HTTPHeaders.nameMatches(headers.storage, field, "authorization") ? .authorization : .other
        case UInt8(ascii: "r"):
            return HTTPHeaders.nameMatches(headers.storage, field, "range") ? .range : .other
        case UInt8(ascii: "i"):
            return preconditions.contains { HTTPHeaders.nameMatches(headers.storage, field, $0) } ? .precondition : .other
        default:
            return .other
        }
    }

    /// Whether the method may be answered from storage: GET (whole, or one byte range), and HEAD
    /// from a stored GET.
    package var readsCache: Bool {
        (method == .get || method == .head) && !isConditional && (!hasRange || range != nil)
    }
}
