import Foundation
import Testing
@testable import Courier
@testable import CourierCore

/// Requests through an HTTPS proxy (Tests/Servers/http_proxy.py behind tls_front.py): TLS with
/// the proxy verified against its name by its own settings, http URLs forwarded inside it, https
/// URLs through CONNECT with TLS inside TLS (the origin still verified end to end), the proxy's
/// credentials never in the clear, and curl's --proxy-cacert and --proxy-insecure.
@Suite("HTTPS proxies")
struct HTTPSProxyTests {
    let s = TestServers.shared

    func lines(_ plain: String) async throws -> [(line: String, auth: String?)] {
        let (t, _) = await fetch(plain + "/log") { $0.proxy = .direct }
        let entries = try #require(JSONSerialization.jsonObject(with: Data(t.responseBody)) as? [[String: Any]])
        return entries.map { ($0["line"] as? String ?? "", $0["auth"] as? String) }
    }

    func settings(_ proxy: String, login: String = "", trusted: Bool = true) throws -> ProxySettings {
        var settings = ProxySettings.all(try Proxy(parsing: proxy.replacingOccurrences(of: "https://", with: "https://" + login)))
        if trusted { settings.proxyTLS = s.trustTestCA }
        return settings
    }

    @Test func httpAndHttpsGoThroughTLSWithTheProxy() async throws {
        let (proxy, plain) = await s.privateHTTPSProxy(credentials: "ann:s3cret")
        let through = try settings(proxy, login: "ann:s3cret@")
        var configuration = Engine.Configuration()
        configuration.options.tls = s.trustTestCA
        configuration.options.proxy = through
        let api = Engine(host: s.https, configuration: configuration)
        var responses: [Response] = []
        for _ in 0..<2 { responses.append(try await api.send(api.operation(path: "/small"))) }
        #expect(responses.allSatisfy { $0.status == 200 && $0.body.count == 100 })
        #expect(responses.map(\.metrics.reusedConnection) == [false, true], "TLS inside TLS, kept alive")
        let (forwarded, _) = await fetch(s.nginx + "/small") { $0.proxy = through }
        #expect(forwarded.error == nil && forwarded.status == 200, "\(String(describing: forwarded.error))")
        let seen = try await lines(plain)
        #expect(seen.map(\.line) == ["CONNECT localhost:\(s.tlsPorts["valid"]!)", "GET \(s.nginx)/small"])
        #expect(seen.allSatisfy { $0.auth == "Basic " + Data("ann:s3cret".utf8).base64EncodedString() })
        // The origin is still checked inside: the self-signed server fails.
        let (untrusted, _) = await fetch("https://localhost:\(s.tlsPorts["selfsigned"]!)/small") {
            $0.tls = s.trustTestCA
            $0.proxy = through
        }
        #expect(untrusted.error?.code == .tlsUntrusted, "\(String(describing: untrusted.error))")
    }

    @Test func theProxysCertificateIsCheckedByItsOwnSettings() async throws {
        let (proxy, _) = await s.privateHTTPSProxy()
        // The origin's CA setting does not cover the proxy: the system's roots do not know the test CA.
        let (unchecked, _) = await fetch(s.https + "/small") { $0.tls = s.trustTestCA; $0.proxy = try! settings(proxy, trusted: false) }
        #expect(unchecked.error?.code == .tlsUntrusted, "\(String(describing: unchecked.error))")
        var insecure = try settings(proxy, trusted: false)
        insecure.proxyTLS.verification = .insecureAcceptAnyCertificate
        let (accepted, _) = await fetch(s.https + "/small") { $0.tls = s.trustTestCA; $0.proxy = insecure }
        #expect(accepted.error == nil && accepted.status == 200, "\(String(describing: accepted.error))")
        var missing = try settings(proxy)
        missing.proxyTLS.caFile = s.root + "/no-such-ca.pem"
        let (unloadable, _) = await fetch(s.nginx + "/small") { $0.proxy = missing }
        #expect(unloadable.error?.code == .tlsCAFile, "\(String(describing: unloadable.error))")
    }

    /// curl's -x https://, --proxy-cacert, --proxy-insecure and its exit codes (60 for a proxy
    /// certificate that is not trusted).
    @Test func theCLIsFlags() async throws {
        let (proxy, _) = await s.privateHTTPSProxy()
        let ca = s.certs + "/ca.pem"
        let cli = CLITests.binary
        let write = ["-sS", "-o", "/dev/null", "-o", "/dev/null", "-w", "%{http_code}"]
        for arguments in [["--proxy-cacert", ca], ["--proxy-insecure"]] {
            let run = try await runProcess(cli, write + ["-x", proxy, "--cacert", ca] + arguments + [s.https + "/small", s.nginx + "/small"])
            #expect(run.status == 0 && run.stdout == "200200", "\(arguments): \(run.stdout)\(run.stderr)")
        }
        let untrusted = try await runProcess(cli, write + ["-x", proxy, "--cacert", ca, s.https + "/small"])
        #expect(untrusted.status == 60, "--cacert is the origin's only: \(untrusted.stderr)")
    }

    @Test func fromC() async throws {
        let (proxy, plain) = await s.privateHTTPSProxy()
        let bin = try await CExamples.shared.directory()
        let c = try await runProcess(bin + "/https_proxy", [proxy, plain, s.nginx, s.https, s.certs + "/ca.pem"])
        #expect(c.status == 0, "\(c.stdout)\(c.stderr)")
    }
}
