import Testing
@testable import CourierCore

/// SOCKS5's opening exchange as a pure value (RFC 1928, RFC 1929's login): what is sent at each
/// step, the proxy's answers split anywhere, and each refusal or malformed answer as its own error.
@Suite("SOCKS5 handshake")
struct SocksHandshakeTests {
    /// Feeds `answers` byte by byte; the steps that were not `.needMore`.
    func run(_ handshake: inout SocksHandshake, _ answers: [UInt8]) -> [TunnelStep] {
        var steps: [TunnelStep] = []
        for byte in answers {
            let step = [byte].withUnsafeBytes { handshake.receive($0) }
            if step != .needMore { steps.append(step) }
        }
        return steps
    }

    @Test func aNameGoesToTheProxyWithSocks5h() {
        var handshake = SocksHandshake(host: "example.com", port: 443, remoteResolution: true, user: nil, password: nil)
        #expect(handshake.start() == .send([5, 1, 0]), "only 'no authentication' is offered without credentials")
        let connect: [UInt8] = [5, 1, 0, 3, 11] + Array("example.com".utf8) + [1, 187]
        #expect(run(&handshake, [5, 0]) == [.send(connect)])
        #expect(run(&handshake, [5, 0, 0, 1, 10, 0, 0, 1, 0x1F, 0x90]) == [.established])
    }

    @Test func socks5ResolvesHereAndPrefersIPv4() {
        var handshake = SocksHandshake(host: "localhost", port: 80, remoteResolution: false, user: nil, password: nil)
        #expect(handshake.start() == .resolve("localhost"))
        let answer = [SocketAddress(ipLiteral: "::1", port: 0)!, SocketAddress(ipLiteral: "127.0.0.1", port: 0)!]
        #expect(handshake.resolved(.success(answer)) == .send([5, 1, 0]))
        #expect(run(&handshake, [5, 0]) == [.send([5, 1, 0, 1, 127, 0, 0, 1, 0, 80])])
        var v6 = SocksHandshake(host: "::1", port: 8080, remoteResolution: true, user: nil, password: nil)
        #expect(v6.start() == .send([5, 1, 0]), "an address literal needs no lookup, and goes as an address even for socks5h")
        #expect(run(&v6, [5, 0]) == [.send([5, 1, 0, 4] + [UInt8](repeating: 0, count: 15) + [1, 0x1F, 0x90])])
        var unknown = SocksHandshake(host: "nowhere.invalid", port: 80, remoteResolution: false, user: nil, password: nil)
        _ = unknown.start()
        guard case .failed(let error) = unknown.resolved(.failure(CourierError(.dnsFailure, "nowhere.invalid"))) else {
            Issue.record("a failed lookup"); return
        }
        #expect(error.code == .proxySocksConnect)
    }

    @Test func theLoginWhenTheProxyAsksForIt() {
        var handshake = SocksHandshake(host: "h", port: 1, remoteResolution: true, user: "ann", password: "pw")
        #expect(handshake.start() == .send([5, 2, 0, 2]))
        #expect(run(&handshake, [5, 2]) == [.send([1, 3] + Array("ann".utf8) + [2] + Array("pw".utf8))])
        #expect(run(&handshake, [1, 0]) == [.send([5, 1, 0, 3, 1, UInt8(ascii: "h"), 0, 1])])
        #expect(run(&handshake, [5, 0, 0, 3, 2, 65, 66, 0, 1]) == [.established], "a name in the reply is read whole")
        var rejected = SocksHandshake(host: "h", port: 1, remoteResolution: true, user: "ann", password: "bad")
        _ = rejected.start()
        #expect(failure(run(&rejected, [5, 2, 1, 1])) == .proxySocksAuth)
        var noneAcceptable = SocksHandshake(host: "h", port: 1, remoteResolution: true, user: nil, password: nil)
        _ = noneAcceptable.start()
        #expect(failure(run(&noneAcceptable, [5, 0xFF])) == .proxySocksAuth)
        var long = SocksHandshake(host: "h", port: 1, remoteResolution: true, user: String(repeating: "u", count: 256), password: nil)
        #expect(failure([long.start()]) == .proxySocksAuth)
    }

    @Test func refusalsAndMalformedAnswers() {
        func outcome(_ answers: [UInt8], user: String? = nil) -> CourierError.Code? {
            var handshake = SocksHandshake(host: "h", port: 1, remoteResolution: true, user: user, password: nil)
            _ = handshake.start()
            return failure(run(&handshake, answers))
        }
        #expect(outcome([5, 0, 5, 5, 0, 1]) == .proxySocksConnect, "reply 5: connection refused")
        #expect(outcome([5, 0, 5, 4, 0, 1]) == .proxySocksConnect, "reply 4: host unreachable")
        #expect(outcome(Array("HTTP/1.1 400".utf8)) == .proxySocksHandshake, "not SOCKS5")
        #expect(outcome([5, 2]) == .proxySocksHandshake, "a method that was not offered")
        #expect(outcome([5, 0, 4, 0, 0, 1]) == .proxySocksHandshake, "a reply of another version")
        #expect(outcome([5, 0, 5, 0, 0, 9, 0, 0]) == .proxySocksHandshake, "an unknown address type")
        #expect(outcome([5, 0, 5, 0, 0, 1, 1, 2, 3, 4, 0, 80, 33]) == .proxySocksHandshake, "bytes after the reply")
        let handshake = SocksHandshake(host: "h", port: 1, remoteResolution: true, user: nil, password: nil)
        #expect(handshake.closedEarly.code == .proxySocksHandshake)
        #expect(handshake.broken(CourierError(.connectionReset, "reset")).code == .proxySocksHandshake)
        let name = String(repeating: "a", count: 256)
        var tooLong = SocksHandshake(host: name, port: 1, remoteResolution: true, user: nil, password: nil)
        #expect(failure([tooLong.start()]) == .proxySocksConnect, "a name longer than SOCKS5 can carry")
    }

    private func failure(_ steps: [TunnelStep]) -> CourierError.Code? {
        guard case .failed(let error)? = steps.last else { return nil }
        return error.code
    }
}
