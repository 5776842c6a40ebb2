/// A proxy: where a request's connection goes instead of its origin.
///
/// Through an HTTP proxy an http URL is sent in absolute form (`GET http://host/path`); an https
/// URL goes through a `CONNECT` tunnel, inside which TLS runs end to end with the origin and is
/// verified against the origin's name (the proxy sees only the target `host:port`). Credentials,
/// when given, are sent to the proxy as `Proxy-Authorization: Basic`, never to the origin.
/// An HTTPS proxy is the same spoken over TLS with the proxy (its certificate verified against its
/// name, by `tls`): with an https URL, TLS inside TLS. Through a SOCKS5 proxy every URL goes
/// through its connection (RFC 1928), credentials as its user name and password login (RFC 1929).
public struct Proxy: Sendable, Hashable, CustomStringConvertible {
    /// The protocol spoken with the proxy (the scheme of curl's proxy strings).
    public enum Kind: String, Sendable, Hashable {
        /// `http://`: CONNECT tunnels, and http URLs forwarded in absolute form.
        case http
        /// `https://`: as `http`, over TLS with the proxy (curl's HTTPS proxy): the proxy's
        /// credentials and the request lines of http URLs are never on the wire in the clear.
        case https
        /// `socks5://`: Courier resolves the origin's name and gives the proxy an address
        /// (curl's `--socks5`).
        case socks5
        /// `socks5h://`: the proxy resolves the origin's name (curl's `--socks5-hostname`): the
        /// way to reach names only the proxy's side knows, and to keep lookups off this machine.
        case socks5h
    }

    /// Lower-cased host name or IP literal (IPv6 without brackets).
    public var host: String
    /// The proxy's port (curl's default, 1080, when a proxy string names none).
    public var port: UInt16
    /// Credentials for the proxy, if it asks for them.
    public var user: String?
    public var password: String?
    /// The protocol spoken with the proxy.
    public var kind: Kind
    /// How an HTTPS proxy's own certificate is checked: `ProxySettings.proxyTLS`, set by the
    /// settings the proxy was chosen from (part of the pool key).
    package var tls = TLSConfiguration()
    /// Whether this connection tunnels an http URL with CONNECT (`ProxySettings.tunnelsHTTP`):
    /// part of the pool key, so a tunnel never serves a forwarded request.
    package var tunnel = false

    /// The port a proxy string without one means (curl's rule; 443 for https://).
    public static let defaultPort: UInt16 = 1080

    /// A proxy at `host:port`.
    public init(host: String, port: UInt16 = Proxy.defaultPort, user: String? = nil, password: String? = nil,
                kind: Kind = .http) {
        self.host = host.lowercased()
        self.port = port
        self.user = user
        self.password = password
        self.kind = kind
    }

    /// Parses curl's proxy syntax, `[scheme://][user[:password]@]host[:port]` (user and password
    /// percent-decoded, IPv6 hosts in brackets); the scheme is `http`, `socks5` or `socks5h`
    /// (`kind` when the string names none, as curl's `--socks5` reads its argument), or `https`
    /// (then port 443 by default). Another
    /// scheme fails with `.proxyUnsupported` (curl's 5 for a scheme it lacks).
    public init(parsing text: String, kind: Kind = .http) throws(CourierError) {
        var kind = kind
        // Split on the ASCII delimiters byte by byte: as Characters, a delimiter followed by a
        // combining mark would not be found at all.
        var rest = Array(Substring(text).trimmingSpaces.utf8)[...]
        let colon = UInt8(ascii: ":")
        if let at = rest.firstIndex(of: colon), rest[at...].starts(with: Array("://".utf8)) {
            let scheme = String(decoding: rest[..<at], as: UTF8.self).lowercased()
            guard let named = Kind(rawValue: scheme) else {
                throw CourierError(.proxyUnsupported, "proxy scheme \(scheme) is not supported (http, https, socks5, socks5h): \(text)")
            }
            kind = named
            rest = rest[(at + 3)...]
        }
        // Anything after the authority (a path, "/") is ignored, as curl does.
        if let slash = rest.firstIndex(of: UInt8(ascii: "/")) { rest = rest[..<slash] }
        var user: String?, password: String?
        if let at = rest.lastIndex(of: UInt8(ascii: "@")) {
            let credentials = rest[..<at]
            rest = rest[(at + 1)...]
            if let split = credentials.firstIndex(of: colon) {
                user = try Self.percentDecoded(credentials[..<split], in: text)
                password = try Self.percentDecoded(credentials[(split + 1)...], in: text)
            } else {
                user = try Self.percentDecoded(credentials, in: text)
                password = ""
            }
        }
        var host: ArraySlice<UInt8>
        var portText: ArraySlice<UInt8> = []
        let bracketed = rest.first == UInt8(ascii: "[")
        if bracketed {
            guard let close = rest.firstIndex(of: UInt8(ascii: "]")) else { throw CourierError(.invalidArgument, "bad proxy IPv6 address: \(text)") }
            host = rest[(rest.startIndex + 1)..<close]
            let after = rest[(close + 1)...]
            if !after.isEmpty {
                guard after.first == colon else { throw CourierError(.invalidArgument, "bad proxy address: \(text)") }
                portText = after.dropFirst()
            }
        } else if let split = rest.lastIndex(of: colon) {
            host = rest[..<split]
            portText = rest[(split + 1)...]
        } else {
            host = rest
        }
        guard !host.isEmpty, !host.contains(where: { $0 <= 0x20 || $0 == 0x7F }) else {
            throw CourierError(.invalidArgument, "no proxy host in \(text)")
        }
        // A colon or bracket belongs only to an IPv6 address, and that only inside brackets.
        let hostText = String(decoding: host, as: UTF8.self)
        if bracketed ? NoProxy.ipBytes(hostText)?.count != 16
                     : host.contains(where: { $0 == colon || $0 == UInt8(ascii: "[") || $0 == UInt8(ascii: "]") }) {
            throw CourierError(.invalidArgument, "bad proxy host in \(text)")
        }
        var port = kind == .https ? 443 : Self.defaultPort
        if !portText.isEmpty {
            guard portText.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let value = UInt16(String(decoding: portText, as: UTF8.self)),
                  value > 0 else { throw CourierError(.invalidArgument, "bad proxy port in \(text)") }
            port = value
        }
        self.init(host: hostText, port: port, user: user, password: password, kind: kind)
    }

    /// `host:port` as a request target or a `Host` field (IPv6 bracketed).
    package var authority: String { Origin.authority(host: host, port: port) }

    /// Whether the proxy speaks HTTP (over TCP or TLS), not SOCKS5.
    package var speaksHTTP: Bool { kind == .http || kind == .https }

    /// The `Proxy-Authorization` value of an HTTP proxy, nil without credentials.
    package var authorization: String? {
        guard let user, speaksHTTP else { return nil }
        return "Basic " + Base64.encode(Array("\(user):\(password ?? "")".utf8))
    }

    /// Whether requests to `scheme` pass through a tunnel (a CONNECT, or SOCKS5's connection)
    /// rather than going to the proxy in absolute form.
    package func tunnels(_ scheme: CourierURL.Scheme) -> Bool {
        !speaksHTTP || scheme == .https || tunnel
    }

    /// `scheme://host:port`, without credentials (safe for logs).
    public var description: String { "\(kind.rawValue)://\(authority)" }

    private static func percentDecoded(_ text: ArraySlice<UInt8>, in whole: String) throws(CourierError) -> String {
        var bytes: [UInt8] = []
        var iterator = text
        while let byte = iterator.popFirst() {
            if byte == UInt8(ascii: "%") {
                guard iterator.count >= 2, let high = hexValue(iterator.popFirst()!), let low = hexValue(iterator.popFirst()!) else {
                    throw CourierError(.invalidArgument, "bad percent-encoding in the proxy credentials of \(whole)")
                }
                bytes.append(high << 4 | low)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
