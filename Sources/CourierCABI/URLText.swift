import CourierCore
#if canImport(Glibc)
import Glibc
#endif

extension OwnedCString {
    /// `url` as its `description` spells it (`scheme://host[:port]/path[?query]`), written
    /// straight into C memory. courier_response_url is read for every response by the bindings
    /// (Python's Response carries its URL); `description` builds five Swift strings on the way
    /// and strdup copies the last, about 4,400 instructions a response, where this writes each
    /// part once (the request encoder's buffer and decimal writer) and copies the text out.
    static func url(_ url: CourierURL) -> OwnedCString {
        var text = RawBuffer(capacity: 128)
        defer { text.free() }
        text.append(url.scheme == .http ? "http://" : "https://")
        let bracketed = url.isIPv6Literal
        if bracketed { text.append(UInt8(ascii: "[")) }
        text.append(url.host)
        if bracketed { text.append(UInt8(ascii: "]")) }
        if url.port != url.scheme.defaultPort {
            text.append(UInt8(ascii: ":"))
            RequestEncoder.appendDecimal(UInt64(url.port), to: &text)
        }
        text.append(url.path)
        if let query = url.query {
            text.append(UInt8(ascii: "?"))
            text.append(query)
        }
        return OwnedCString(copying: text.bytes)
    }
}
