import Testing
@testable import CourierCore

/// The pure parts of proxying: curl's proxy strings, its environment and `no_proxy` rules, and the
/// CONNECT answer, byte by byte.
@Suite("Proxy rules")
struct ProxyRuleTests {
    @Test func proxyStringsInCurlsSyntax() throws {
        let plain = try Proxy(parsing: "proxy.example:3128")
        #expect(plain.host == "proxy.example" && plain.port == 3128 && plain.user == nil)
        #expect(try Proxy(parsing: "Proxy.Example").port == 1080, "curl's default port")
        let full = try Proxy(parsing: "http://us%3Aer:p%40ss@[::1]:8080/ignored")
        #expect(full.host == "::1" && full.port == 8080 && full.user == "us:er" && full.password == "p@ss")
        #expect(full.authority == "[::1]:8080" && full.description == "http://[::1]:8080")
        #expect(full.authorization == "Basic " + Base64.encode(Array("us:er:p@ss".utf8)))
        #expect(try Proxy(parsing: "user@host").password == "")
        let socks = try Proxy(parsing: "SOCKS5h://u:p@10.0.0.1")
        #expect(socks.kind == .socks5h && socks.port == 1080 && socks.user == "u" && socks.description == "socks5h://10.0.0.1:1080")
        #expect(socks.authorization == nil, "a SOCKS5 login is not an HTTP field")
        #expect(try Proxy(parsing: "h:1", kind: .socks5).kind == .socks5, "--socks5's argument without a scheme")
        #expect(try Proxy(parsing: "http://h:1", kind: .socks5).kind == .http, "a scheme in the string wins, as in curl")
        let secure = try Proxy(parsing: "https://u:p@proxy.example")
        #expect(secure.kind == .https && secure.port == 443 && secure.description == "https://proxy.example:443", "curl's 443 for https")
        #expect(secure.authorization == "Basic " + Base64.encode(Array("u:p".utf8)), "its credentials are an HTTP field")
        for unsupported in ["socks4://p:1", "socks4a://p", "ftp://p"] {
            #expect(throws: CourierError(.proxyUnsupported, "proxy scheme \(unsupported.split(separator: ":")[0]) is not supported (http, https, socks5, socks5h): \(unsupported)")) {
                try Proxy(parsing: unsupported)
            }
        }
        for bad in ["", "http://", "host:0", "host:99999", "host:x", "[::1", "u:%zz@h", "bad host", "http://us:1]:8080/x",
                    "::1:8080", "[example.com]:80", "a[b:80"] {
            #expect(throws: CourierError.self, "\(bad)") { try Proxy(parsing: bad) }
        }
    }

    @Test func noProxyNamesMatchOnLabelBoundaries() {
        let list = NoProxy(" Example.com, .internal.test ,localhost.")
        for host in ["example.com", "www.example.com", "A.B.EXAMPLE.COM", "example.com.", "internal.test", "x.internal.test", "localhost"] {
            #expect(list.matches(host: host), "\(host)")
        }
        for host in ["badexample.com", "example.com.evil", "internal.test.evil", "localhost2", "127.0.0.1"] {
            #expect(!list.matches(host: host), "\(host)")
        }
        #expect(NoProxy("*").matches(host: "anything.at.all") && NoProxy("*").matchesAll)
        #expect(!NoProxy("*.example.com").matches(host: "www.example.com"), "no wildcards but * alone (curl)")
        #expect(NoProxy("").isEmpty && NoProxy.none.isEmpty)
        #expect(NoProxy("a.test,\u{0301}b.test").matches(host: "a.test"), "a comma before a combining mark still separates")
        #expect(!NoProxy("test").matches(host: "a\u{0301}.\u{0301}test"), "bytes, not Characters, decide the boundary")
    }

    @Test func noProxyAddressesAndNetworks() {
        let list = NoProxy("10.0.0.0/8, 192.168.1.7, fd00::/8, [::1], 172.16.0.0/33, 1.2.3.4/x")
        for host in ["10.1.2.3", "10.255.255.255", "192.168.1.7", "fd12::1", "::1", "[::1]"] {
            #expect(list.matches(host: host), "\(host)")
        }
        for host in ["11.0.0.1", "192.168.1.8", "fe80::1", "::2", "172.16.0.1", "1.2.3.4", "ten.example"] {
            #expect(!list.matches(host: host), "\(host)")
        }
        #expect(NoProxy("0.0.0.0/0").matches(host: "8.8.8.8"))
        #expect(!NoProxy("0.0.0.0/0").matches(host: "::1"), "an IPv4 network never matches IPv6")
        #expect(NoProxy("192.168.0.0/23").matches(host: "192.168.1.200") && !NoProxy("192.168.0.0/23").matches(host: "192.168.2.1"))
    }

    @Test func theEnvironmentByCurlsRules() throws {
        func settings(_ env: [String: String]) -> ProxySettings { ProxySettings.environment { env[$0] } }
        let http = URLOrigin.http, https = URLOrigin.https
        #expect(try settings([:]).proxy(for: http) == nil && settings([:]).isDirect)
        #expect(try settings(["HTTP_PROXY": "p:1"]).proxy(for: http) == nil, "upper-case HTTP_PROXY is ignored (httpoxy)")
        #expect(try settings(["http_proxy": "p:1"]).proxy(for: http)?.port == 1)
        #expect(try settings(["http_proxy": "p:1"]).proxy(for: https) == nil)
        #expect(try settings(["HTTPS_PROXY": "s:2"]).proxy(for: https)?.port == 2)
        #expect(try settings(["https_proxy": "s:3", "HTTPS_PROXY": "s:2"]).proxy(for: https)?.port == 3, "lower case wins")
        #expect(try settings(["ALL_PROXY": "a:4", "http_proxy": "p:1"]).proxy(for: http)?.port == 1)
        #expect(try settings(["ALL_PROXY": "a:4"]).proxy(for: https)?.port == 4)
        #expect(try settings(["all_proxy": "a:5", "ALL_PROXY": "a:4"]).proxy(for: http)?.port == 5)
        #expect(try settings(["http_proxy": ""]).isDirect, "empty means none")
        #expect(try settings(["http_proxy": "p:1", "NO_PROXY": "example.com"]).proxy(for: http) == nil)
        #expect(try settings(["http_proxy": "p:1", "no_proxy": "other.test", "NO_PROXY": "example.com"]).proxy(for: http) != nil)
        let broken = settings(["http_proxy": "p:notaport"])
        #expect(broken.problem?.code == .invalidArgument && !broken.isDirect)
        #expect(throws: CourierError.self) { try broken.proxy(for: http) }
    }

    /// Setting the proxy back to the default (the environment's, or none when it names none) keeps
    /// nothing composed, so such a request takes the plain pool-key path; anything else is kept.
    @Test func theDefaultProxyIsNoSetting() throws {
        var options = TransferOptions()
        options.proxy = ProxySettings.processDefault ?? .direct
        #expect(!options.hasComposition && options.proxy == (ProxySettings.processDefault ?? .direct))
        let explicit = ProxySettings.all(try Proxy(parsing: "http://proxy.example:3128"))
        options.proxy = explicit
        #expect(options.hasComposition && options.proxy == explicit)
        if ProxySettings.processDefault != nil {
            options.proxy = .direct
            #expect(options.hasComposition && options.proxySettings == nil, "direct over an environment proxy is a choice")
        }
    }

    @Test func connectAnswers() {
        func outcome(_ chunks: [String]) -> TunnelStep {
            var handshake = TunnelHandshake(target: "example.com:443", authorization: nil)
            var last = TunnelStep.needMore
            for chunk in chunks {
                last = Array(chunk.utf8).withUnsafeBytes { handshake.receive($0) }
                if last != .needMore { break }
            }
            return last
        }
        #expect(outcome(["HTTP/1.1 200 Connection established\r\n\r\n"]) == .established)
        #expect(outcome(["HTTP/1.0 200 OK\r\nVia: x\r\n", "\r", "\n"]) == .established, "split anywhere")
        #expect(outcome(["HTTP/1.1 204\n\n"]) == .established)
        #expect(outcome(["HTTP/1.1 200 OK\r\n"]) == .needMore)
        guard case .failed(let refused) = outcome(["HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n"]) else {
            Issue.record("a 407 opens no tunnel"); return
        }
        #expect(refused.code == .proxyTunnelRefused && refused.status == 407)
        for garbage in ["SSH-2.0-OpenSSH\r\n\r\n", "HTTP/2 200\r\n\r\n", "HTTP/1.1 2000 OK\r\n\r\n", "HTTP/1.1 20\r\n\r\n",
                        "HTTP/1.1 200 OK\r\n\r\nextra"] {
            guard case .failed(let error) = outcome([garbage]) else { Issue.record("\(garbage)"); continue }
            #expect(error.code == .proxyHandshake, "\(garbage)")
        }
        guard case .failed(let large) = outcome([String(repeating: "X", count: TunnelHandshake.headLimit + 1)]) else {
            Issue.record("an endless head"); return
        }
        #expect(large.code == .proxyHandshake)
        let request = TunnelHandshake(target: "[::1]:443", authorization: "Basic eDp5").request
        #expect(String(decoding: request, as: UTF8.self) == "CONNECT [::1]:443 HTTP/1.1\r\nHost: [::1]:443\r\nProxy-Authorization: Basic eDp5\r\n\r\n")
        #expect(TunnelHandshake(target: "h:1", authorization: nil).closedEarly.code == .proxyTunnelClosed)
    }

    @Test func absoluteFormForForwardedRequests() {
        var head: [UInt8] = []
        let forward = ForwardProxy(hostHeader: "example.com:8080", proxy: Proxy(host: "p", user: "u", password: "pw"))
        RequestEncoder.encodeHead(method: .get, path: "/a", query: "b=1", hostHeader: "example.com:8080", headers: HTTPHeaders(),
                                  framing: .init(), forward: forward, into: &head)
        #expect(String(decoding: head, as: UTF8.self)
                == "GET http://example.com:8080/a?b=1 HTTP/1.1\r\nHost: example.com:8080\r\nProxy-Authorization: Basic dTpwdw==\r\n\r\n")
        var own: [UInt8] = []
        RequestEncoder.encodeHead(method: .get, path: "/", query: nil, hostHeader: "h", headers: ["Proxy-Authorization": "Custom"],
                                  framing: .init(), forward: forward, into: &own)
        #expect(!String(decoding: own, as: UTF8.self).contains("Basic"), "a field set by hand wins")
    }
}

private enum URLOrigin {
    static let http = Origin(scheme: .http, host: "example.com", port: 80)
    static let https = Origin(scheme: .https, host: "example.com", port: 443)
}
