/// The exchange that opens a connection through a SOCKS5 proxy (RFC 1928), with the user name
/// and password login of RFC 1929 when the proxy has credentials.
///
/// A pure value, as `TunnelHandshake`: the greeting offers "no authentication" (and
/// "user/password" with credentials), the login follows if the proxy chose it, then CONNECT names
/// the origin: by name for `socks5h` (the proxy resolves it, curl's `--socks5-hostname`), by
/// address for `socks5` (Courier resolves it first: `.resolve`). The proxy's reply ends the
/// exchange; bytes after it are an error (the client speaks first inside, in HTTP and TLS alike).
package struct SocksHandshake: ProxyHandshake {
    private enum State { case resolving, choosingMethod, loggingIn, connecting, open }

    /// The origin's host as the request names it, and its port.
    package let host: String
    package let port: UInt16
    private let remoteResolution: Bool
    private let login: (user: [UInt8], password: [UInt8])?
    private var state = State.resolving
    private var answer: [UInt8] = []
    /// The origin's address when Courier resolved it.
    private var address: SocketAddress?

    /// A handshake to `host:port`; `remoteResolution` sends the name (socks5h), otherwise an
    /// address of it; `user` (with `password`, "" when nil) logs in when the proxy asks.
    package init(host: String, port: UInt16, remoteResolution: Bool, user: String?, password: String?) {
        self.host = host
        self.port = port
        self.remoteResolution = remoteResolution
        login = user.map { (Array($0.utf8), Array((password ?? "").utf8)) }
        address = SocketAddress(ipLiteral: host, port: port)
    }

    package var opening: String {
        "SOCKS5 connect to \(Origin.authority(host: host, port: port)) (\(remoteResolution ? "remotely" : "locally") resolved)"
    }
    package var openedNote: String { "SOCKS5 request granted" }

    package mutating func start() -> TunnelStep {
        if let login, login.user.count > 255 || login.password.count > 255 {
            return fail(.proxySocksAuth, "a SOCKS5 user name or password is longer than 255 bytes")
        }
        if remoteResolution, address == nil {
            guard host.utf8.count <= 255 else { return fail(.proxySocksConnect, "the host name is too long for SOCKS5: \(host.prefix(40))...") }
        } else if address == nil {
            return .resolve(host)
        }
        return greet()
    }

    package mutating func resolved(_ addresses: Result<[SocketAddress], CourierError>) -> TunnelStep {
        guard state == .resolving else { return .needMore }
        guard case .success(let found) = addresses, let first = found.first else {
            return fail(.proxySocksConnect, "could not resolve \(host) for the SOCKS5 connect")
        }
        // The proxy gets one address and cannot race the others: an IPv4 one when there is one,
        // which every proxy reaches (curl too names 127.0.0.1 for localhost).
        address = found.first { !$0.isIPv6 } ?? first
        return greet()
    }

    package mutating func receive(_ bytes: UnsafeRawBufferPointer) -> TunnelStep {
        answer.append(contentsOf: bytes)
        switch state {
        case .resolving, .open:
            return fail(.proxySocksHandshake, "the SOCKS5 proxy sent \(answer.count) bytes before being asked")
        case .choosingMethod:
            guard answer.count >= 2 else { return .needMore }
            guard answer[0] == 5 else { return fail(.proxySocksHandshake, "the answer to the SOCKS5 greeting is not SOCKS5") }
            let method = answer[1]
            answer.removeFirst(2)
            switch method {
            case 0: return requestConnect()
            case 2 where login != nil: return logIn()
            case 0xFF:
                return fail(.proxySocksAuth, login == nil ? "the SOCKS5 proxy wants credentials (none were given)"
                                                          : "the SOCKS5 proxy accepts none of the offered authentication methods")
            default: return fail(.proxySocksHandshake, "the SOCKS5 proxy chose method \(method), which was not offered")
            }
        case .loggingIn:
            // (Its first byte is the sub-negotiation's version, 1; some proxies say 5: as curl,
            // only the status counts.)
            guard answer.count >= 2 else { return .needMore }
            guard answer[1] == 0 else { return fail(.proxySocksAuth, "the SOCKS5 proxy rejected the user name and password") }
            answer.removeFirst(2)
            return requestConnect()
        case .connecting:
            return readReply()
        }
    }

    package var closedEarly: CourierError {
        CourierError(.proxySocksHandshake, "the SOCKS5 proxy closed the connection during its handshake")
    }

    package func broken(_ error: CourierError) -> CourierError {
        CourierError(.proxySocksHandshake, "during the SOCKS5 handshake: \(error.detail ?? error.message)")
    }

    // MARK: - Steps

    private mutating func greet() -> TunnelStep {
        state = .choosingMethod
        return .send(login == nil ? [5, 1, 0] : [5, 2, 0, 2])
    }

    private mutating func logIn() -> TunnelStep {
        guard answer.isEmpty, let login else { return extraBytes() }
        state = .loggingIn
        return .send([1, UInt8(login.user.count)] + login.user + [UInt8(login.password.count)] + login.password)
    }

    private mutating func requestConnect() -> TunnelStep {
        guard answer.isEmpty else { return extraBytes() }
        state = .connecting
        var request: [UInt8] = [5, 1, 0]
        if let address {
            let bytes = address.addressBytes
            request.append(bytes.count == 4 ? 1 : 4)
            request += bytes
        } else {
            request += [3, UInt8(host.utf8.count)] + Array(host.utf8)
        }
        request += [UInt8(port >> 8), UInt8(port & 0xFF)]
        return .send(request)
    }

    /// VER REP RSV ATYP BND.ADDR BND.PORT, its length known once ATYP (and a name's length) came.
    private mutating func readReply() -> TunnelStep {
        guard answer.count >= 2 else { return .needMore }
        guard answer[0] == 5 else { return fail(.proxySocksHandshake, "the reply to the SOCKS5 connect is not SOCKS5") }
        let reply = answer[1]
        if reply != 0 {
            return fail(.proxySocksConnect, "the SOCKS5 proxy could not connect to \(Origin.authority(host: host, port: port)): "
                                            + Self.replyText(reply) + " (\(reply))")
        }
        guard answer.count >= 5 else { return .needMore }
        let length: Int
        switch answer[3] {
        case 1: length = 4 + 4 + 2
        case 4: length = 4 + 16 + 2
        case 3: length = 4 + 1 + Int(answer[4]) + 2
        default: return fail(.proxySocksHandshake, "the SOCKS5 reply has address type \(answer[3])")
        }
        guard answer.count >= length else { return .needMore }
        guard answer.count == length else { return extraBytes() }
        answer = []
        state = .open
        return .established
    }

    private func extraBytes() -> TunnelStep {
        fail(.proxySocksHandshake, "the SOCKS5 proxy sent bytes it was not asked for")
    }

    private func fail(_ code: CourierError.Code, _ detail: String) -> TunnelStep {
        .failed(CourierError(code, detail))
    }

    /// RFC 1928 section 6's names for the reply codes.
    private static func replyText(_ code: UInt8) -> String {
        switch code {
        case 1: return "general SOCKS server failure"
        case 2: return "connection not allowed by ruleset"
        case 3: return "network unreachable"
        case 4: return "host unreachable"
        case 5: return "connection refused"
        case 6: return "TTL expired"
        case 7: return "command not supported"
        case 8: return "address type not supported"
        default: return "unassigned reply"
        }
    }
}
