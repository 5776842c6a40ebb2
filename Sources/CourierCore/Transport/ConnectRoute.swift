/// Where connections go when not where the URL says, and which address families count: curl's
/// `--connect-to HOST1:PORT1:HOST2:PORT2`, `--resolve HOST:PORT:ADDR[,ADDR]`, `-4`/`-6` and
/// `--unix-socket`/`--abstract-unix-socket`. The request itself is unchanged (its Host field, TLS
/// name and certificate check stay the URL's); only the connection goes elsewhere. Part of the pool key: a connection made by one route
/// never serves a request with another. Pure: `target(for:)` is tested without sockets.
public struct ConnectRoute: Sendable, Hashable {
    /// Which addresses a connection may use.
    public enum Family: Sendable, Hashable {
        case any
        case ipv4
        case ipv6
    }

    /// One `--connect-to` rule: requests for `host:port` (nil matches any) connect to
    /// `toHost:toPort` instead (nil keeps the request's).
    public struct Redirect: Sendable, Hashable {
        public var host: String?
        public var port: UInt16?
        public var toHost: String?
        public var toPort: UInt16?

        public init(host: String?, port: UInt16?, toHost: String?, toPort: UInt16?) {
            self.host = host
            self.port = port
            self.toHost = toHost
            self.toPort = toPort
        }

        /// curl's `HOST1:PORT1:HOST2:PORT2` (each part may be empty; IPv6 addresses in brackets).
        public init(parsing text: String) throws(CourierError) {
            let parts = try ConnectRoute.fields(text, count: 4).map(ConnectRoute.unbracketed)
            host = parts[0].isEmpty ? nil : parts[0].lowercased()
            port = try ConnectRoute.port(parts[1], in: text)
            toHost = parts[2].isEmpty ? nil : parts[2].lowercased()
            toPort = try ConnectRoute.port(parts[3], in: text)
        }
    }

    /// A Unix domain socket every connection goes to instead of a TCP connection (the Docker
    /// Engine's `/var/run/docker.sock`): no name is resolved, and proxies are not used (they are
    /// reached over TCP, as curl's `--unix-socket` ignores them too).
    public enum UnixSocket: Sendable, Hashable {
        /// A socket file's path.
        case path(String)
        /// A name in Linux's abstract namespace (no file; curl's `--abstract-unix-socket`).
        case abstract(String)

        /// The longest path or name a socket address holds (its 108 bytes, less the NUL that ends
        /// a path or starts an abstract name).
        public static let maxLength = 107

        /// The path or the name.
        public var name: String {
            switch self {
            case .path(let path): return path
            case .abstract(let name): return name
            }
        }

        /// Whether a socket address can hold it: 1 to `maxLength` bytes, none of them NUL.
        public var fits: Bool {
            let bytes = name.utf8
            return !bytes.isEmpty && bytes.count <= Self.maxLength && !bytes.contains(0)
        }
    }

    public var family: Family = .any
    /// Connections go to this Unix domain socket (nil: TCP to the host, or where `redirects` say).
    public var unixSocket: UnixSocket?
    /// Connections go to this server inside the process instead (users' tests; HTTP/1.1, no TLS,
    /// no proxy): see `MockServer`.
    public var mock: MockServer?
    /// Where TCP connections come from (curl's --interface and --local-port; nil: anywhere).
    public var local: LocalBinding?
    /// `--resolve`: the addresses of `host:port` (IP literals), used instead of a name lookup.
    public var addresses: [Endpoint: [String]] = [:]
    /// `--connect-to` rules, the first that matches wins.
    public var redirects: [Redirect] = []

    /// A host and port.
    public struct Endpoint: Sendable, Hashable {
        public var host: String
        public var port: UInt16
        public init(host: String, port: UInt16) {
            self.host = host.lowercased()
            self.port = port
        }
    }

    public init(family: Family = .any, addresses: [Endpoint: [String]] = [:], redirects: [Redirect] = [],
                unixSocket: UnixSocket? = nil, local: LocalBinding? = nil) {
        self.family = family
        self.addresses = addresses
        self.redirects = redirects
        self.unixSocket = unixSocket
        self.local = local
    }

    /// A route to the Unix domain socket `socket`; an empty or too long path or name is an error
    /// (a path the kernel cannot hold would otherwise fail every request with a vague message).
    public init(unixSocket socket: UnixSocket) throws(CourierError) {
        guard socket.fits else {
            throw CourierError(.invalidArgument, "a Unix socket's path is 1 to \(UnixSocket.maxLength) bytes without NUL, not \(socket.name.utf8.count)")
        }
        self.init(family: .any, addresses: [:], redirects: [], unixSocket: socket)
    }

    /// Adds curl's `HOST:PORT:ADDR[,ADDR]...` (addresses in brackets or not).
    public mutating func addResolve(_ text: String) throws(CourierError) {
        guard let first = text.firstIndex(of: ":"), let second = text[text.index(after: first)...].firstIndex(of: ":") else {
            throw CourierError(.invalidArgument, "--resolve \(text): expected HOST:PORT:ADDRESS[,ADDRESS]")
        }
        let host = Self.unbracketed(String(text[..<first]))
        guard let port = try Self.port(String(text[text.index(after: first)..<second]), in: text), !host.isEmpty else {
            throw CourierError(.invalidArgument, "--resolve \(text): expected HOST:PORT:ADDRESS[,ADDRESS]")
        }
        let list = text[text.index(after: second)...].split(separator: ",").map { Self.unbracketed(String($0)) }
        guard !list.isEmpty, list.allSatisfy({ SocketAddress(ipLiteral: $0, port: 0) != nil }) else {
            throw CourierError(.invalidArgument, "--resolve \(text): the addresses must be IP addresses")
        }
        addresses[Endpoint(host: host, port: port), default: []] += list
    }

    /// Where a connection for `origin` goes: the host and port to connect to, and the addresses to
    /// use instead of resolving (nil: resolve the host).
    package func target(for origin: Origin) -> (host: String, port: UInt16, addresses: [SocketAddress]?) {
        var host = origin.host
        var port = origin.port
        if let rule = redirects.first(where: { ($0.host == nil || $0.host == origin.host) && ($0.port == nil || $0.port == origin.port) }) {
            host = rule.toHost ?? host
            port = rule.toPort ?? port
        }
        return (host, port, givenAddresses(host: host, port: port))
    }

    /// The addresses given for `host:port` (curl's --resolve), of the chosen family; nil when
    /// none are (the name is looked up).
    package func givenAddresses(host: String, port: UInt16) -> [SocketAddress]? {
        addresses[Endpoint(host: host, port: port)].map { list in filter(list.compactMap { SocketAddress(ipLiteral: $0, port: port) }) }
    }

    /// The addresses of the chosen family, in order.
    package func filter(_ found: [SocketAddress]) -> [SocketAddress] {
        switch family {
        case .any: return found
        case .ipv4: return found.filter { !$0.isIPv6 }
        case .ipv6: return found.filter { $0.isIPv6 }
        }
    }

    /// `count` colon-separated fields, a bracketed IPv6 address being one field.
    static func fields(_ text: String, count: Int) throws(CourierError) -> [String] {
        var fields: [String] = []
        var current = ""
        var bracketed = false
        for character in text {
            if character == "[" { bracketed = true }
            if character == "]" { bracketed = false }
            if character == ":", !bracketed {
                fields.append(current)
                current = ""
            } else {
                current.append(character)
            }
        }
        fields.append(current)
        guard fields.count == count else {
            throw CourierError(.invalidArgument, "\(text): expected \(count) fields separated by ':'")
        }
        return fields
    }

    static func unbracketed(_ text: String) -> String {
        text.hasPrefix("[") && text.hasSuffix("]") ? String(text.dropFirst().dropLast()) : text
    }

    static func port(_ text: String, in whole: String) throws(CourierError) -> UInt16? {
        if text.isEmpty { return nil }
        guard let port = UInt16(text), port > 0 else { throw CourierError(.invalidArgument, "\(whole): bad port \(text)") }
        return port
    }
}
