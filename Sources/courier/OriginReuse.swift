import CourierCore
import Glibc

/// The last URL origin the command line parsed, so the next URL that starts with the same
/// `scheme://authority` is built the way an engine builds a path under its base: only its target
/// is split (a full parse costs about 2,500 instructions per URL; a glob's URLs share one origin).
///
/// Used by whichever thread builds jobs, and jobs are built one at a time (the loop thread while
/// the URLs run, the main thread for --flush), so it needs no lock.
final class OriginReuse: @unchecked Sendable {
    /// `scheme://authority` exactly as the URL spelled it, and what it parsed to.
    private var prefix: [UInt8] = []
    private var origin: CourierURL?

    /// The base and target to build `url` from, or nil when it must be parsed whole (a new
    /// origin is remembered for the next URL). The reuse holds only when the bytes after the
    /// prefix begin the target ("/" or "?") and nothing needs trimming at either end, so the
    /// result is the URL a full parse gives.
    func split(_ url: String) -> (base: CourierURL, target: String)? {
        var url = url
        return url.withUTF8 { bytes in
            guard let first = bytes.first, let last = bytes.last, (first | 0x20) >= UInt8(ascii: "a"), (first | 0x20) <= UInt8(ascii: "z"),
                  last > 0x20, last != 0x7F else { return nil }
            if let origin, let target = Self.target(of: bytes, after: prefix) { return (origin, target) }
            guard let authorityEnd = Self.authorityEnd(bytes), let parsed = try? CourierURL(parsing: String(decoding: bytes, as: UTF8.self)) else {
                return nil
            }
            prefix = Array(bytes[..<authorityEnd])
            origin = parsed
            return Self.target(of: bytes, after: prefix).map { (parsed, $0) }
        }
    }

    /// What follows `prefix` in `bytes` when it starts a target (a byte comparison: the
    /// standard library's `starts(with:)` over a UTF-8 view costs about 30 instructions a byte).
    private static func target(of bytes: UnsafeBufferPointer<UInt8>, after prefix: [UInt8]) -> String? {
        guard !prefix.isEmpty, bytes.count > prefix.count else { return nil }
        let next = bytes[prefix.count]
        guard next == UInt8(ascii: "/") || next == UInt8(ascii: "?"),
              prefix.withUnsafeBufferPointer({ memcmp($0.baseAddress!, bytes.baseAddress!, prefix.count) == 0 }) else { return nil }
        return String(decoding: UnsafeBufferPointer(rebasing: bytes[prefix.count...]), as: UTF8.self)
    }

    /// Where the authority ends: the first "/", "?" or "#" after "://".
    private static func authorityEnd(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        var offset = 0
        var slashes = -1
        for byte in bytes {
            if slashes < 0 {
                if byte == UInt8(ascii: ":") { slashes = 0 }
            } else if slashes < 2 {
                guard byte == UInt8(ascii: "/") else { return nil }
                slashes += 1
            } else if byte == UInt8(ascii: "/") || byte == UInt8(ascii: "?") || byte == UInt8(ascii: "#") {
                return offset
            }
            offset += 1
        }
        return slashes == 2 ? offset : nil
    }
}
