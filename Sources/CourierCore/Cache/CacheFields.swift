/// The response header fields the freshness rules read, found in one pass over the field names
/// (a lookup per name would scan the list six times for every response stored or read from disk).
/// The first occurrence of each counts (RFC 9111 section 4.2.1).
package struct CacheFields {
    package var date: String?
    package var expires: String?
    package var lastModified: String?
    package var age: String?
    package var etag: String?
    /// Whether any Cache-Control line exists (then `CacheDirectives` parses them).
    package var cacheControl = false

    package init(_ headers: HTTPHeaders) {
        let storage = headers.storage
        for index in headers.fields.indices {
            let field = headers.fields[index]
            let length = Int(field.nameEnd &- field.nameStart)
            guard length >= 3, length <= 13 else { continue }
            switch HTTPHeaders.asciiLower(storage[Int(field.nameStart)]) {
            case UInt8(ascii: "d"):
                if date == nil, HTTPHeaders.nameMatches(storage, field, "date") { date = headers.value(at: index) }
            case UInt8(ascii: "e"):
                if expires == nil, HTTPHeaders.nameMatches(storage, field, "expires") {
                    expires = headers.value(at: index)
                } else if etag == nil, HTTPHeaders.nameMatches(storage, field, "etag") {
                    etag = headers.value(at: index)
                }
            case UInt8(ascii: "l"):
                if lastModified == nil, HTTPHeaders.nameMatches(storage, field, "last-modified") { lastModified = headers.value(at: index) }
            case UInt8(ascii: "a"):
                if age == nil, HTTPHeaders.nameMatches(storage, field, "age") { age = headers.value(at: index) }
            case UInt8(ascii: "c"):
                if HTTPHeaders.nameMatches(storage, field, "cache-control") { cacheControl = true }
            default:
                break
            }
        }
    }
}
