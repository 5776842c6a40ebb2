/// The Cache-Control directives of a request or a response (RFC 9111 section 5.2, RFC 5861,
/// RFC 8246), parsed from every Cache-Control field line.
///
/// Names are case-insensitive; arguments may be tokens or quoted strings (recipients accept both,
/// section 5.2). Where the RFC leaves a choice this parser takes the cautious one: the first
/// occurrence of a repeated directive counts (section 4.2.1), a delta-seconds argument that is not
/// a number makes the response stale (max-age 0: "caches are encouraged to consider responses that
/// have invalid freshness information to be stale"), and a value too big to represent becomes 2^31
/// (section 1.2.2). Unknown directives are ignored (section 5.2.3).
package struct CacheDirectives: Sendable, Equatable {
    /// max-age: a response's freshness lifetime, or the oldest response a request accepts.
    package var maxAge: Int64?
    /// s-maxage: for shared caches only; Courier's cache is private, so it gives no freshness. It
    /// still counts as explicit permission to store a response to a request with credentials.
    package var sharedMaxAge: Int64?
    package var noStore = false
    /// Unqualified no-cache: every reuse needs a successful revalidation first.
    package var noCache = false
    /// Qualified no-cache="a, b" (responses): the named fields may not be reused without
    /// revalidation; the cache leaves them out of what it stores.
    package var noCacheFields: [String] = []
    package var mustRevalidate = false
    package var isPublic = false
    /// private (qualified or not): allowed in a private cache such as this one.
    package var isPrivate = false
    /// RFC 8246: the representation never changes while fresh.
    package var immutable = false
    package var mustUnderstand = false
    /// RFC 5861: seconds of staleness during which the stored response may be served while it is
    /// revalidated in the background.
    package var staleWhileRevalidate: Int64?
    /// RFC 5861: seconds of staleness during which the stored response may be served when the
    /// origin fails (on a request: the client's own allowance).
    package var staleIfError: Int64?
    /// Request max-stale: how stale a response the client accepts (`.max` when no limit is given).
    package var maxStale: Int64?
    /// Request min-fresh: the response must stay fresh for at least this long.
    package var minFresh: Int64?
    /// Request only-if-cached: never contact the origin; a 504 when nothing fits.
    package var onlyIfCached = false

    /// The greatest delta-seconds value the cache represents (RFC 9111 section 1.2.2).
    package static let deltaSecondsLimit: Int64 = 1 << 31

    package init() {}

    /// The directives of every Cache-Control line of `headers`.
    package init(_ headers: HTTPHeaders) {
        let storage = headers.storage
        for field in headers.fields where field.nameEnd &- field.nameStart == 13 && HTTPHeaders.nameMatches(storage, field, "cache-control") {
            storage.withUnsafeBytes { raw in
                parse(UnsafeRawBufferPointer(rebasing: raw[Int(field.valueStart)..<Int(field.valueEnd)]))
            }
        }
    }

    /// Whether a request carries `Pragma: no-cache` that counts: only without any Cache-Control
    /// (RFC 9111 section 5.4 keeps it for HTTP/1.0 compatibility).
    package static func pragmaNoCache(_ headers: HTTPHeaders) -> Bool {
        guard !headers.contains("Cache-Control") else { return false }
        return headers.values(for: "Pragma").contains { value in
            value.split(separator: ",").contains { $0.trimmingSpaces.lowercased() == "no-cache" }
        }
    }

    /// Parses one field line's value.
    package mutating func parse(_ value: UnsafeRawBufferPointer) {
        var index = 0
        let count = value.count
        while index < count {
            // Skip list separators and whitespace.
            while index < count, value[index] == UInt8(ascii: ",") || ByteClass.isSpace(value[index]) { index += 1 }
            let nameStart = index
            while index < count, ByteClass.isToken(value[index]) { index += 1 }
            let name = UnsafeRawBufferPointer(rebasing: value[nameStart..<index])
            while index < count, ByteClass.isSpace(value[index]) { index += 1 }
            var argument: [UInt8]?
            if index < count, value[index] == UInt8(ascii: "=") {
                index += 1
                while index < count, ByteClass.isSpace(value[index]) { index += 1 }
                var bytes: [UInt8] = []
                if index < count, value[index] == UInt8(ascii: "\"") {
                    index += 1
                    while index < count, value[index] != UInt8(ascii: "\"") {
                        if value[index] == UInt8(ascii: "\\"), index + 1 < count { index += 1 }
                        bytes.append(value[index])
                        index += 1
                    }
                    if index < count { index += 1 }
                } else {
                    while index < count, ByteClass.isToken(value[index]) {
                        bytes.append(value[index])
                        index += 1
                    }
                }
                argument = bytes
            }
            // Anything else up to the next comma is not this grammar: skip it.
            while index < count, value[index] != UInt8(ascii: ",") { index += 1 }
            if !name.isEmpty { apply(name, argument) }
        }
    }

    private mutating func apply(_ name: UnsafeRawBufferPointer, _ argument: [UInt8]?) {
        // By length, then the bytes compared in place: no string is made for a name (the longest
        // would not even fit a small string), and most names are decided by their length.
        switch name.count {
        case 6:
            if Self.matches(name, "public") { isPublic = true }
        case 7:
            if Self.matches(name, "max-age") {
                if maxAge == nil { maxAge = Self.seconds(argument) }
            } else if Self.matches(name, "private") {
                isPrivate = true
            }
        case 8:
            if Self.matches(name, "no-store") {
                noStore = true
            } else if Self.matches(name, "no-cache") {
                if let argument, !argument.isEmpty {
                    noCacheFields += String(decoding: argument, as: UTF8.self).split(separator: ",")
                        .map { $0.trimmingSpaces.lowercased() }.filter { !$0.isEmpty }
                } else {
                    noCache = true
                }
            } else if Self.matches(name, "s-maxage") {
                if sharedMaxAge == nil { sharedMaxAge = Self.seconds(argument) }
            }
        case 9:
            if Self.matches(name, "immutable") {
                immutable = true
            } else if Self.matches(name, "max-stale") {
                // Without an argument: any staleness is accepted.
                if maxStale == nil { maxStale = argument == nil ? .max : Self.seconds(argument) }
            } else if Self.matches(name, "min-fresh") {
                if minFresh == nil { minFresh = Self.seconds(argument) }
            }
        case 14:
            if Self.matches(name, "stale-if-error") {
                if staleIfError == nil { staleIfError = Self.seconds(argument) }
            } else if Self.matches(name, "only-if-cached") {
                onlyIfCached = true
            }
        case 15:
            if Self.matches(name, "must-revalidate") {
                mustRevalidate = true
            } else if Self.matches(name, "must-understand") {
                mustUnderstand = true
            }
        case 22:
            if Self.matches(name, "stale-while-revalidate"), staleWhileRevalidate == nil {
                staleWhileRevalidate = Self.seconds(argument)
            }
        default:
            break
        }
    }

    /// Whether `name` is `directive` (lower-case ASCII), ignoring case.
    @inline(__always)
    private static func matches(_ name: UnsafeRawBufferPointer, _ directive: StaticString) -> Bool {
        let wanted = directive.utf8Start
        guard name.count == directive.utf8CodeUnitCount else { return false }
        for index in 0..<name.count where HTTPHeaders.asciiLower(name[index]) != wanted[index] { return false }
        return true
    }

    private static func seconds(_ argument: [UInt8]?) -> Int64 {
        guard let argument, !argument.isEmpty else { return 0 }
        var value: Int64 = 0
        for byte in argument {
            guard ByteClass.isDigit(byte) else { return 0 }
            value = min(value * 10 + Int64(byte - UInt8(ascii: "0")), deltaSecondsLimit)
        }
        return value
    }

}

extension Substring {
    /// Without leading and trailing spaces and tabs.
    package var trimmingSpaces: Substring {
        var slice = self
        while let first = slice.utf8.first, ByteClass.isSpace(first) { slice = slice.dropFirst() }
        while let last = slice.utf8.last, ByteClass.isSpace(last) { slice = slice.dropLast() }
        return slice
    }
}
