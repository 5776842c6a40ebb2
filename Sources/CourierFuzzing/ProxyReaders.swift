import CourierCore

/// What a proxy or its configuration hands Courier: the answer to CONNECT and a SOCKS5 proxy's
/// answers, fed in pieces the input chooses, and proxy and `no_proxy` strings from the
/// environment. Input: a selector byte, then the bytes. Invariants: the handshake ends at most
/// once and never opens a tunnel on a non-2xx status or with bytes after the head in what it was
/// given; it needs no more than its head limit to decide; a SOCKS5 handshake decides within its
/// longest possible answers, opens only on a success reply, and fails only within the proxy
/// family; a parsed proxy has a host without spaces and a nonzero port, and its authority parses
/// back to the same proxy; `no_proxy` matching never traps and `*` matches everything.
package enum ProxyReading {
    package static func run(_ input: UnsafeRawBufferPointer) {
        guard let selector = input.first else { return }
        let rest = UnsafeRawBufferPointer(rebasing: input[1...])
        // (0xF0 and above: SOCKS5, added after the corpus's other selectors were chosen.)
        if selector >= 0xF0 { return socksAnswers(rest, flags: selector & 0x0F) }
        switch selector % 3 {
        case 0: connectAnswer(rest, pieces: Int(selector / 3) % 7 + 1)
        case 1: proxyString(String(decoding: rest, as: UTF8.self))
        default: noProxy(rest)
        }
    }

    private static func connectAnswer(_ bytes: UnsafeRawBufferPointer, pieces: Int) {
        var handshake = TunnelHandshake(target: "example.com:443", authorization: nil)
        let size = max(1, bytes.count / pieces)
        var offset = 0
        var outcome = TunnelStep.needMore
        while offset < bytes.count {
            let end = min(bytes.count, offset + size)
            outcome = handshake.receive(UnsafeRawBufferPointer(rebasing: bytes[offset..<end]))
            offset = end
            if outcome != .needMore { break }
        }
        switch outcome {
        case .needMore:
            precondition(offset <= TunnelHandshake.headLimit + size, "undecided after \(offset) bytes")
        case .established:
            // What was fed ends exactly with the head's blank line (later bytes belong to the tunnel).
            let fed = Array(bytes[..<offset])
            // (A blank line: LF, then LF or CR LF.)
            precondition(fed.suffix(2) == [0x0A, 0x0A] || fed.suffix(3) == [0x0A, 0x0D, 0x0A], "a tunnel opened with bytes left over")
            precondition(fed.count >= 12 && fed[9] == UInt8(ascii: "2"), "a tunnel opened on a non-2xx answer")
        case .failed(let error):
            precondition(error.code.primary == .proxy, "a CONNECT failure outside the proxy family: \(error)")
        case .send, .resolve:
            preconditionFailure("CONNECT's answer asked for \(outcome)")
        }
    }

    /// Flags: bit 0 credentials, bit 1 remote resolution, bits 2-3 the piece size's exponent.
    private static func socksAnswers(_ bytes: UnsafeRawBufferPointer, flags: UInt8) {
        var handshake = SocksHandshake(host: "example.com", port: 443, remoteResolution: flags & 2 != 0,
                                       user: flags & 1 != 0 ? "user" : nil, password: "secret")
        var step = handshake.start()
        if case .resolve = step { step = handshake.resolved(.success([SocketAddress(ipLiteral: "192.0.2.1", port: 0)!])) }
        guard case .send = step else { preconditionFailure("the greeting is not sent first: \(step)") }
        let size = 1 << (flags >> 2)
        var offset = 0
        while offset < bytes.count {
            let end = min(bytes.count, offset + size)
            step = handshake.receive(UnsafeRawBufferPointer(rebasing: bytes[offset..<end]))
            offset = end
            switch step {
            case .needMore, .send: continue
            case .resolve: preconditionFailure("a second lookup")
            case .established:
                // Only on a success reply (VER 5, REP 0) among what was fed.
                let fed = Array(bytes[..<offset])
                precondition(fed.indices.contains { fed[$0] == 5 && $0 + 1 < fed.count && fed[$0 + 1] == 0 },
                             "opened without a success reply")
                return
            case .failed(let error):
                precondition(error.code.primary == .proxy, "a SOCKS5 failure outside the proxy family: \(error)")
                return
            }
        }
        // Method (2) + login status (2) + the longest reply (4 + 1 + 255 + 2): undecided only short of that.
        precondition(offset < 2 + 2 + 262 + size, "undecided after \(offset) bytes")
    }

    private static func proxyString(_ text: String) {
        guard let proxy = try? Proxy(parsing: text) else { return }
        precondition(!proxy.host.isEmpty && !proxy.host.contains(" ") && proxy.port > 0, "accepted \(text.debugDescription)")
        if proxy.user == nil, !proxy.host.contains("/"), !proxy.host.contains("@"), !proxy.host.contains("[") {
            let again = try? Proxy(parsing: proxy.authority)
            precondition(again?.host == proxy.host && again?.port == proxy.port, "\(proxy.authority) does not read back")
        }
    }

    private static func noProxy(_ bytes: UnsafeRawBufferPointer) {
        let parts = bytes.split(separator: 0x0A, maxSplits: 1, omittingEmptySubsequences: false)
        let list = NoProxy(parts.first.map { String(decoding: $0, as: UTF8.self) } ?? "")
        let host = parts.count > 1 ? String(decoding: parts[1], as: UTF8.self) : "example.com"
        let matched = list.matches(host: host)
        if list.matchesAll { precondition(matched, "* did not match \(host.debugDescription)") }
        precondition(!NoProxy.none.matches(host: host), "an empty list matched")
    }
}
