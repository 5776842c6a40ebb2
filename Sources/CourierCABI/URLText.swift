import CourierCore
#if canImport(Glibc)
import Glibc
#endif

extension OwnedCString {
    /// `url` as its `description` spells it (`scheme://host[:port]/path[?query]`), written
    /// straight into C memory. courier_response_url is read for every response by the bindings
    /// (Python's Response carries its URL); `description` builds five Swift strings on the way
    /// and strdup copies the last, about 4,400 instructions a response, where this writes each
    /// part once.
    static func url(_ url: CourierURL) -> OwnedCString {
        let scheme: StaticString = url.scheme == .http ? "http://" : "https://"
        let host = url.host, path = url.path, query = url.query
        let bracketed = url.isIPv6Literal
        let port = url.port == url.scheme.defaultPort ? nil : url.port
        let portDigits = port.map { $0 >= 10_000 ? 5 : $0 >= 1_000 ? 4 : $0 >= 100 ? 3 : $0 >= 10 ? 2 : 1 } ?? 0
        let count = scheme.utf8CodeUnitCount + host.utf8.count + (bracketed ? 2 : 0) + (port == nil ? 0 : 1 + portDigits)
            + path.utf8.count + (query.map { 1 + $0.utf8.count } ?? 0)
        let text = malloc(count + 1)!.assumingMemoryBound(to: UInt8.self)
        var at = 0
        func put(_ byte: UInt8) {
            text[at] = byte
            at += 1
        }
        func put(_ part: String) {
            for byte in part.utf8 { put(byte) }
        }
        for index in 0..<scheme.utf8CodeUnitCount { put(scheme.utf8Start[index]) }
        if bracketed { put(UInt8(ascii: "[")) }
        put(host)
        if bracketed { put(UInt8(ascii: "]")) }
        if var port {
            put(UInt8(ascii: ":"))
            at += portDigits
            for index in 1...portDigits {
                text[at - index] = UInt8(ascii: "0") + UInt8(port % 10)
                port /= 10
            }
        }
        put(path)
        if let query {
            put(UInt8(ascii: "?"))
            put(query)
        }
        text[at] = 0
        return OwnedCString(taking: UnsafeMutableRawPointer(text).assumingMemoryBound(to: CChar.self))
    }
}
