import Foundation
import Testing
@testable import Courier
@testable import CourierCore

/// Requests through an HTTP proxy (Tests/Servers/http_proxy.py, which records every request
/// line): http URLs in absolute form, https through CONNECT with TLS verified against the origin
/// (nginx), proxy credentials, the proxy's failures as their own errors, and connections never
/// shared between proxied and direct requests.
@Suite("Proxies")
struct ProxyTests {
    let s = TestServers.shared

    /// What the proxy saw: each request line with the Proxy-Authorization it carried.
    func log(_ proxy: String) async throws -> [(line: String, auth: String?)] {
        let (t, _) = await fetch(proxy + "/log") { $0.proxy = .direct }
        let entries = try #require(JSONSerialization.jsonObject(with: Data(t.responseBody)) as? [[String: Any]])
        return entries.map { ($0["line"] as? String ?? "", $0["auth"] as? String) }
    }

    func settings(_ proxy: String, noProxy: String = "") throws -> ProxySettings {
        .all(try Proxy(parsing: proxy), noProxy: NoProxy(noProxy))
    }

    @Test func httpGoesInAbsoluteFormAndConnectionsAreKeptAlive() async throws {
        let proxy = await s.privateProxy()
        let api = Engine(host: s.nginx)
        var responses: [Response] = []
        for _ in 0..<3 {
            let op = api.operation(path: "/small")
            op.proxy = try settings(proxy)
            responses.append(try await api.send(op))
        }
        #expect(responses.allSatisfy { $0.status == 200 && $0.body.count == 100 })
        #expect(responses.map(\.metrics.reusedConnection) == [false, true, true], "one connection to the proxy serves them all")
        let lines = try await log(proxy).map(\.line)
        #expect(lines == Array(repeating: "GET \(s.nginx)/small", count: 3))
        // The same origin without the proxy: a connection of its own, and the proxy sees nothing.
        let direct = api.operation(path: "/small")
        direct.proxy = .direct
        let answer = try await api.send(direct)
        #expect(answer.status == 200)
        #expect(try await log(proxy).count == 3)
    }

    @Test func httpsGoesThroughATunnelVerifiedAgainstTheOrigin() async throws {
        let proxy = await s.privateProxy()
        let port = s.tlsPorts["valid"]!
        let (first, _) = await fetch(s.https + "/small") { $0.tls = s.trustTestCA; $0.proxy = try! settings(proxy) }
        #expect(first.error == nil && first.status == 200 && first.responseBody.count == 100, "\(String(describing: first.error))")
        let (second, _) = await fetch(s.https + "/small") { $0.tls = s.trustTestCA; $0.proxy = try! settings(proxy) }
        #expect(second.error == nil && second.metrics.reusedConnection, "the tunnel is kept alive")
        #expect(try await log(proxy).map(\.line) == ["CONNECT localhost:\(port)"])
        // The origin's certificate is still checked: the self-signed server fails inside the tunnel.
        let selfSigned = "https://localhost:\(s.tlsPorts["selfsigned"]!)/small"
        let (untrusted, _) = await fetch(selfSigned) { $0.tls = s.trustTestCA; $0.proxy = try! settings(proxy) }
        #expect(untrusted.error?.code == .tlsUntrusted, "\(String(describing: untrusted.error))")
    }

    @Test func credentialsGoToTheProxyOnly() async throws {
        let proxy = await s.privateProxy(credentials: "proxy user:s3cret")
        let withCredentials = try settings(proxy.replacingOccurrences(of: "http://", with: "http://proxy%20user:s3cret@"))
        let expected = "Basic " + Data("proxy user:s3cret".utf8).base64EncodedString()
        let (plain, _) = await fetch(s.nginx + "/small") { $0.proxy = withCredentials }
        #expect(plain.status == 200)
        let (tls, _) = await fetch(s.https + "/small") { $0.tls = s.trustTestCA; $0.proxy = withCredentials }
        #expect(tls.error == nil && tls.status == 200, "\(String(describing: tls.error))")
        #expect(try await log(proxy).map(\.auth) == [expected, expected])
        // Without them: the http request gets the proxy's 407, the tunnel is refused with it.
        let (refused, _) = await fetch(s.nginx + "/small") { $0.proxy = try! settings(proxy) }
        #expect(refused.status == 407)
        let (tunnel, _) = await fetch(s.https + "/small") { $0.tls = s.trustTestCA; $0.proxy = try! settings(proxy) }
        #expect(tunnel.error?.code == .proxyTunnelRefused && tunnel.error?.status == 407, "\(String(describing: tunnel.error))")
    }

    @Test func theProxysFailuresAreItsOwn() async throws {
        let proxy = await s.privateProxy()
        let through = try settings(proxy)
        for (host, code) in [("refused.test", CourierError.Code.proxyTunnelRefused), ("garbage.test", .proxyHandshake),
                             ("close.test", .proxyTunnelClosed), ("extra.test", .proxyHandshake)] {
            let (t, _) = await fetch("https://\(host)/") { $0.proxy = through }
            #expect(t.error?.code == code, "\(host): \(String(describing: t.error))")
        }
        let (unresolvable, _) = await fetch(s.nginx + "/small") { $0.proxy = .all(Proxy(host: "no-such-proxy.invalid", port: 3128)) }
        #expect(unresolvable.error?.code == .proxyResolve, "\(String(describing: unresolvable.error))")
        let (refused, _) = await fetch(s.nginx + "/small") { $0.proxy = .all(Proxy(host: "127.0.0.1", port: 1)) }
        #expect(refused.error?.code == .proxyConnect, "\(String(describing: refused.error))")
        #expect(refused.error?.code.primary == .connectFailed)
    }

    @Test func noProxyHostsGoDirect() async throws {
        let proxy = await s.privateProxy()
        let (direct, _) = await fetch(s.nginx + "/small") { $0.proxy = try! settings(proxy, noProxy: "example.com, 127.0.0.0/8") }
        #expect(direct.status == 200)
        let (proxied, _) = await fetch(s.nginx + "/small") { $0.proxy = try! settings(proxy, noProxy: "example.com,10.0.0.0/8") }
        #expect(proxied.status == 200)
        #expect(try await log(proxy).map(\.line) == ["GET \(s.nginx)/small"])
    }

    @Test func aMalformedEnvironmentProxyFailsRequestsRatherThanGoingDirect() async throws {
        let settings = ProxySettings.environment { ["http_proxy": "socks4://127.0.0.1:1080", "no_proxy": "localhost"][$0] }
        #expect(settings.problem?.code == .proxyUnsupported)
        let (t, _) = await fetch(s.nginx + "/small") { $0.proxy = settings }
        #expect(t.error?.code == .proxyUnsupported, "\(String(describing: t.error))")
        let (excepted, _) = await fetch(s.https + "/small") { $0.tls = s.trustTestCA; $0.proxy = settings }
        #expect(excepted.error == nil, "no_proxy hosts are not affected")
    }

    /// curl's -x, --noproxy, -U and the environment, with curl's exit codes (5 for a proxy that
    /// cannot be resolved or used, 7 for one that cannot be reached, 56 for a refused tunnel).
    @Test func theCLIsProxyFlags() async throws {
        let proxy = await s.privateProxy(credentials: "cli:pw")
        let target = s.nginx + "/small"
        let cli = CLITests.binary
        let withUser = try await runProcess(cli, ["-s", "-o", "/dev/null", "-w", "%{http_code}", "-x", proxy, "-U", "cli:pw", target])
        #expect(withUser.status == 0 && withUser.stdout == "200", "\(withUser.stdout)\(withUser.stderr)")
        let inURL = try await runProcess(cli, ["-s", "-o", "/dev/null", "-w", "%{http_code}",
                                               "--proxy", proxy.replacingOccurrences(of: "http://", with: "http://cli:pw@"), target])
        #expect(inURL.stdout == "200")
        let without = try await runProcess(cli, ["-s", "-o", "/dev/null", "-w", "%{http_code}", "-x", proxy, target])
        #expect(without.status == 0 && without.stdout == "407", "the proxy's 407 is a response, as in curl")
        let environment = ["http_proxy": proxy.replacingOccurrences(of: "http://", with: "http://cli:pw@"), "no_proxy": ""]
        let fromEnvironment = try await runProcess(cli, ["-s", "-o", "/dev/null", "-w", "%{http_code}", target], environment: environment)
        #expect(fromEnvironment.stdout == "200")
        let before = try await log(proxy).count
        for bypass in [["--noproxy", "*"], ["--noproxy", "127.0.0.1"], ["-x", ""]] {
            let direct = try await runProcess(cli, ["-s", "-o", "/dev/null", "-w", "%{http_code}"] + bypass + [target], environment: environment)
            #expect(direct.stdout == "200", "\(bypass)")
        }
        #expect(try await log(proxy).count == before, "--noproxy and -x \"\" go direct")
        let codes: [([String], Int32)] = [
            (["-x", proxy, "https://localhost:\(s.tlsPorts["valid"]!)/small"], 56),
            (["-x", "no-such-proxy.invalid:3128", target], 5),
            (["-x", "socks4://127.0.0.1:1080", target], 5),
            (["-x", "127.0.0.1:notaport", target], 5),
            (["-x", "127.0.0.1:1", target], 7),
        ]
        for (arguments, code) in codes {
            let run = try await runProcess(cli, ["-sS"] + arguments)
            #expect(run.status == code, "\(arguments): \(run.stderr)")
        }
    }

    @Test func fromC() async throws {
        let proxy = await s.privateProxy()
        let bin = try await CExamples.shared.directory()
        let c = try await runProcess(bin + "/proxy", [proxy, s.nginx, s.https, s.certs + "/ca.pem"])
        #expect(c.status == 0, "\(c.stdout)\(c.stderr)")
    }
}
