import Glibc

/// Hosts reached directly even when a proxy is configured: curl's `no_proxy` / `--noproxy` rules.
///
/// A comma-separated list (spaces allowed). `*` alone matches every host. A name matches itself
/// and every name under it (`example.com` and `.example.com` both match `example.com` and
/// `www.example.com`, never `badexample.com`), case-insensitively, a trailing dot ignored. An IP
/// address matches an IP host exactly, and `address/bits` (CIDR) matches a whole network, IPv4
/// or IPv6 (`10.0.0.0/8`, `fd00::/8`). Names never match IP hosts, nor addresses names: curl
/// does not resolve to decide.
public struct NoProxy: Sendable, Hashable {
    /// Every host goes direct (`*`).
    public private(set) var matchesAll = false
    private var names: [String] = []
    private var networks: [Network] = []

    /// An IP network: its address bytes (4 or 16) and how many leading bits must match.
    private struct Network: Sendable, Hashable {
        var bytes: [UInt8]
        var bits: Int
    }

    /// No exceptions.
    public static let none = NoProxy()

    private init() {}

    /// Parses a list in curl's syntax; entries it cannot use (a bad CIDR) are skipped, as curl does.
    public init(_ list: String) {
        // Split on the ASCII separators byte by byte (as Characters, a comma followed by a
        // combining mark would not separate).
        for entry in Array(list.utf8).split(whereSeparator: { $0 == UInt8(ascii: ",") || $0 == 0x20 || $0 == 0x09 }) {
            let token = String(decoding: entry, as: UTF8.self).lowercased()
            if token == "*" {
                matchesAll = true
                continue
            }
            var address = Substring(token), bits: Int?
            if let slash = token.firstIndex(of: "/") {
                address = token[..<slash]
                guard let value = Int(token[token.index(after: slash)...]) else { continue }
                bits = value
            }
            if address.first == "[", address.last == "]" { address = address.dropFirst().dropLast() }
            if let bytes = Self.ipBytes(String(address)) {
                let limit = bytes.count * 8
                guard let bits = bits ?? limit as Int?, bits >= 0, bits <= limit else { continue }
                networks.append(Network(bytes: bytes, bits: bits))
                continue
            }
            guard bits == nil else { continue }
            var name = Substring(token)
            while name.first == "." { name = name.dropFirst() }
            while name.last == "." { name = name.dropLast() }
            if !name.isEmpty { names.append(String(name)) }
        }
    }

    /// Whether nothing is excepted.
    public var isEmpty: Bool { !matchesAll && names.isEmpty && networks.isEmpty }

    /// Whether `host` (a name or an IP literal, IPv6 with or without brackets) goes direct.
    public func matches(host: String) -> Bool {
        if matchesAll { return true }
        var candidate = Substring(host.lowercased())
        if candidate.first == "[", candidate.last == "]" { candidate = candidate.dropFirst().dropLast() }
        if let bytes = Self.ipBytes(String(candidate)) {
            return networks.contains { network in network.bytes.count == bytes.count && Self.prefix(network.bits, of: network.bytes, equals: bytes) }
        }
        while candidate.utf8.last == UInt8(ascii: ".") { candidate = candidate.dropLast() }
        // Compared as bytes: a name matches itself, or a suffix that starts after a dot.
        let bytes = Array(candidate.utf8)
        return names.contains { name in
            let suffix = Array(name.utf8)
            guard bytes.count >= suffix.count, bytes.suffix(suffix.count).elementsEqual(suffix) else { return false }
            return bytes.count == suffix.count || bytes[bytes.count - suffix.count - 1] == UInt8(ascii: ".")
        }
    }

    private static func prefix(_ bits: Int, of network: [UInt8], equals address: [UInt8]) -> Bool {
        var left = bits
        for index in network.indices where left > 0 {
            let take = min(8, left)
            let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - take))
            if network[index] & mask != address[index] & mask { return false }
            left -= take
        }
        return true
    }

    /// The bytes of an IPv4 or IPv6 literal, nil for a name.
    static func ipBytes(_ text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            return withUnsafeBytes(of: &v4) { Array($0) }
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 {
            return withUnsafeBytes(of: &v6) { Array($0) }
        }
        return nil
    }
}
