/// scheme + host + port: the unit of connection reuse, of per-host limits and of "same origin".
package struct Origin: Sendable, Hashable, CustomStringConvertible {
    /// `host[:port]` as a Host field or `:authority` names it (IPv6 in brackets, the scheme's
    /// default port left out).
    package var authorityField: String {
        let bracketed = host.utf8.contains(UInt8(ascii: ":")) ? "[\(host)]" : host
        return port == scheme.defaultPort ? bracketed : "\(bracketed):\(port)"
    }

    /// http or https.
    package var scheme: CourierURL.Scheme
    /// Lower-cased host (IPv6 without brackets).
    package var host: String
    /// Port (explicit or default).
    package var port: UInt16

    /// Creates an origin.
    package init(scheme: CourierURL.Scheme, host: String, port: UInt16) {
        self.scheme = scheme
        self.host = host
        self.port = port
    }

    package var description: String { "\(scheme.rawValue)://\(Origin.authority(host: host, port: port))" }

    /// `host:port`, an IPv6 host in brackets (a CONNECT target, a proxy's address).
    package static func authority(host: String, port: UInt16) -> String {
        host.utf8.contains(UInt8(ascii: ":")) ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}
