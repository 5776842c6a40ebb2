import Foundation
import Testing
@testable import Courier
@testable import CourierCore

/// Requests through a SOCKS5 proxy (Tests/Servers/socks_proxy.py, which records every CONNECT it
/// is asked for): names resolved by the proxy (socks5h) or here (socks5), http and https (TLS end
/// to end with the origin, HTTP/2 by ALPN inside), the login, ALL_PROXY, the proxy's refusals as
/// their own errors, and curl's flags and exit codes.
@Suite("SOCKS5 proxies")
struct SocksProxyTests {
    let s = TestServers.shared

    /// What the proxy was asked to connect to: (address type, host, port, user).
    func log(_ proxy: String) async throws -> [(type: String, host: String, port: Int, user: String?)] {
        let (t, _) = await fetch(proxy + "/log") { $0.proxy = .direct }
        let entries = try #require(JSONSerialization.jsonObject(with: Data(t.responseBody)) as? [[String: Any]])
        return entries.map { ($0["type"] as? String ?? "", $0["host"] as? String ?? "", $0["port"] as? Int ?? 0, $0["user"] as? String) }
    }

    func socks(_ proxy: String, _ scheme: String = "socks5h", login: String = "") throws -> ProxySettings {
        .all(try Proxy(parsing: proxy.replacingOccurrences(of: "http://", with: scheme + "://" + login)))
    }

    @Test func socks5hGivesTheProxyTheNameAndKeepsConnectionsAlive() async throws {
        let proxy = await s.privateSocksProxy()
        var configuration = Engine.Configuration()
        configuration.options.tls = s.trustTestCA
        configuration.options.proxy = try socks(proxy)
        let h2 = "https://localhost:\(s.tlsPorts["h2"]!)"
        let api = Engine(host: h2, configuration: configuration)
        var responses: [Response] = []
        for _ in 0..<3 { responses.append(try await api.send(api.operation(path: "/small"))) }
        #expect(responses.allSatisfy { $0.status == 200 && $0.body.count == 100 && $0.httpVersion == "HTTP/2" })
        #expect(responses.map(\.metrics.reusedConnection) == [false, true, true], "one connection through the proxy serves them all")
        let (plain, _) = await fetch(s.nginx + "/small") { $0.proxy = try! socks(proxy) }
        #expect(plain.status == 200 && plain.error == nil, "http goes through SOCKS5 too, never in absolute form")
        let seen = try await log(proxy)
        #expect(seen.map(\.type) == ["name", "ipv4"] && seen.map(\.host) == ["localhost", "127.0.0.1"])
        #expect(seen.first?.port == s.tlsPorts["h2"])
        // TLS runs with the origin: the self-signed server still fails inside.
        let (untrusted, _) = await fetch("https://localhost:\(s.tlsPorts["selfsigned"]!)/small") {
            $0.tls = s.trustTestCA
            $0.proxy = try! socks(proxy)
        }
        #expect(untrusted.error?.code == .tlsUntrusted, "\(String(describing: untrusted.error))")
    }

    @Test func socks5ResolvesHereAndOnlyTheProxyKnowsSomeNames() async throws {
        let proxy = await s.privateSocksProxy()
        let port = s.nginxPort
        let (local, _) = await fetch("http://localhost:\(port)/small") { $0.proxy = try! socks(proxy, "socks5") }
        #expect(local.error == nil && local.status == 200, "\(String(describing: local.error))")
        let (remote, _) = await fetch("http://only.proxy:\(port)/small") { $0.proxy = try! socks(proxy) }
        #expect(remote.error == nil && remote.status == 200, "the proxy resolves what this side cannot")
        let (unresolved, _) = await fetch("http://only.proxy:\(port)/small") { $0.proxy = try! socks(proxy, "socks5") }
        #expect(unresolved.error?.code == .proxySocksConnect, "\(String(describing: unresolved.error))")
        let seen = try await log(proxy)
        #expect(seen.map(\.type) == ["ipv4", "name"] && seen.map(\.host) == ["127.0.0.1", "only.proxy"])
    }

    @Test func theLoginAndItsRefusal() async throws {
        let proxy = await s.privateSocksProxy(credentials: "ann:s3cret")
        let (granted, _) = await fetch(s.nginx + "/small") { $0.proxy = try! socks(proxy, login: "ann:s3cret@") }
        #expect(granted.error == nil && granted.status == 200, "\(String(describing: granted.error))")
        #expect(try await log(proxy).map(\.user) == ["ann"])
        for login in ["", "ann:wrong@"] {
            let (refused, _) = await fetch(s.nginx + "/small") { $0.proxy = try! socks(proxy, login: login) }
            #expect(refused.error?.code == .proxySocksAuth, "\(login): \(String(describing: refused.error))")
        }
    }

    @Test func theProxysFailuresAreItsOwn() async throws {
        let proxy = await s.privateSocksProxy()
        for (host, code) in [("refused.test", CourierError.Code.proxySocksConnect), ("garbage.test", .proxySocksHandshake),
                             ("close.test", .proxySocksHandshake), ("extra.test", .proxySocksHandshake)] {
            let (t, _) = await fetch("http://\(host)/") { $0.proxy = try! socks(proxy) }
            #expect(t.error?.code == code, "\(host): \(String(describing: t.error))")
        }
        let (unreachable, _) = await fetch(s.nginx + "/small") { $0.proxy = .all(Proxy(host: "127.0.0.1", port: 1, kind: .socks5)) }
        #expect(unreachable.error?.code == .proxyConnect, "\(String(describing: unreachable.error))")
    }

    @Test func allProxyFromTheEnvironment() async throws {
        let proxy = await s.privateSocksProxy()
        let settings = ProxySettings.environment { ["ALL_PROXY": proxy.replacingOccurrences(of: "http://", with: "socks5h://")][$0] }
        #expect(settings.http?.kind == .socks5h && settings.https?.kind == .socks5h)
        let (t, _) = await fetch(s.https + "/small") { $0.tls = s.trustTestCA; $0.proxy = settings }
        #expect(t.error == nil && t.status == 200, "\(String(describing: t.error))")
        #expect(try await log(proxy).map(\.host) == ["localhost"])
    }

    /// curl's --socks5, --socks5-hostname, -x socks5h://, -U for the login, ALL_PROXY, and 97
    /// for every failed SOCKS handshake.
    @Test func theCLIsSocksFlags() async throws {
        let proxy = await s.privateSocksProxy(credentials: "cli:pw")
        let address = proxy.replacingOccurrences(of: "http://", with: "")
        let target = "http://localhost:\(s.nginxPort)/small"
        let cli = CLITests.binary
        let write = ["-s", "-o", "/dev/null", "-w", "%{http_code}"]
        for arguments in [["--socks5-hostname", address, "-U", "cli:pw"], ["--socks5", "cli:pw@" + address],
                          ["-x", "socks5h://cli:pw@" + address], ["-x", "http://127.0.0.1:1", "--socks5-hostname", "cli:pw@" + address]] {
            let run = try await runProcess(cli, write + arguments + [target])
            #expect(run.status == 0 && run.stdout == "200", "\(arguments): \(run.stdout)\(run.stderr)")
        }
        #expect(try await log(proxy).map(\.type) == ["name", "ipv4", "name", "name"], "--socks5 resolves here, the others there")
        let environment = try await runProcess(cli, write + [target], environment: ["ALL_PROXY": "socks5h://cli:pw@" + address])
        #expect(environment.stdout == "200", "\(environment.stderr)")
        for arguments in [["--socks5-hostname", address], ["--socks5-hostname", "cli:pw@" + address, "http://refused.test/"]] {
            let run = try await runProcess(cli, ["-sS"] + arguments + (arguments.count == 2 ? [target] : []))
            #expect(run.status == 97, "\(arguments): \(run.stderr)")
        }
    }

    @Test func fromC() async throws {
        let proxy = await s.privateSocksProxy(credentials: "c:pw")
        let bin = try await CExamples.shared.directory()
        let c = try await runProcess(bin + "/socks", [proxy.replacingOccurrences(of: "http://", with: ""), s.nginx, s.https,
                                                      s.certs + "/ca.pem"])
        #expect(c.status == 0, "\(c.stdout)\(c.stderr)")
    }
}
