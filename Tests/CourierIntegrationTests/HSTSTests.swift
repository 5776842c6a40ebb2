import Foundation
import Testing
@testable import Courier
@testable import CourierCore

/// HSTS against nginx (its TLS server's /hsts sends Strict-Transport-Security, /hsts-clear
/// max-age=0): noted over verified https only, then http:// to that host goes https:// (the port
/// kept), redirects too; curl's --hsts file read and written; from Swift, C, Python and the CLI.
@Suite("HSTS")
struct HSTSTests {
    let s = TestServers.shared
    var port: Int { s.tlsPorts["valid"]! }

    @Test func notedOverHTTPSThenHTTPGoesToHTTPS() async throws {
        let store = HSTSStore()
        let (plainFirst, _) = await fetch("http://localhost:\(port)/small") { $0.hsts = store }
        #expect(plainFirst.status == 400, "before: plain HTTP to the TLS port (nginx's 400)")
        let (insecure, _) = await fetch("https://localhost:\(port)/hsts") {
            $0.hsts = store
            $0.tls.verification = .insecureAcceptAnyCertificate
        }
        #expect(insecure.status == 200 && !store.requiresHTTPS("localhost"), "an unverified connection says nothing")
        let (noted, _) = await fetch("https://localhost:\(port)/hsts") { $0.hsts = store; $0.tls = s.trustTestCA }
        #expect(noted.status == 200 && store.requiresHTTPS("localhost") && store.requiresHTTPS("a.localhost"))
        let (upgraded, _) = await fetch("http://localhost:\(port)/small") { $0.hsts = store; $0.tls = s.trustTestCA }
        #expect(upgraded.error == nil && upgraded.status == 200 && upgraded.url.description == "https://localhost:\(port)/small")
        // A redirect to http:// a known host is upgraded too.
        let (redirected, _) = await fetch(s.nginx + "/to-hsts-host") {
            $0.hsts = store
            $0.tls = s.trustTestCA
            $0.redirects.follow = true
        }
        #expect(redirected.error == nil && redirected.status == 200 && redirected.url.description == "https://localhost:\(port)/small")
        // An https redirect to http:// a known host is that host's https URL before the rules
        // judge it: no downgrade to refuse.
        let (downgrade, _) = await fetch("https://localhost:\(port)/to-http") {
            $0.hsts = store
            $0.tls = s.trustTestCA
            $0.redirects.follow = true
        }
        #expect(downgrade.error == nil && downgrade.status == 200 && downgrade.url.description == "https://localhost:\(port)/small",
                "\(String(describing: downgrade.error))")
        let (refused, _) = await fetch("https://localhost:\(port)/to-http") { $0.tls = s.trustTestCA; $0.redirects.follow = true }
        #expect(refused.error?.code == .redirectDowngrade, "without the store, the downgrade is refused as before")
        let (cleared, _) = await fetch("https://localhost:\(port)/hsts-clear") { $0.hsts = store; $0.tls = s.trustTestCA }
        #expect(cleared.status == 200 && !store.requiresHTTPS("localhost"), "max-age=0 forgets")
    }

    @Test func theCLIsHSTSFile() async throws {
        let file = s.root + "/hsts-\(UUID().uuidString.prefix(8)).txt"
        let cli = CLITests.binary
        let ca = s.certs + "/ca.pem"
        let before = try await runProcess(cli, ["-s", "-o", "/dev/null", "-w", "%{http_code}", "--hsts", file, "http://localhost:\(port)/small"])
        #expect(before.stdout == "400")
        let note = try await runProcess(cli, ["-sS", "-o", "/dev/null", "--cacert", ca, "--hsts", file, "https://localhost:\(port)/hsts"])
        #expect(note.status == 0, "\(note.stderr)")
        let saved = try String(contentsOfFile: file, encoding: .utf8)
        #expect(saved.contains(".localhost \"") && !saved.contains("unlimited"), "\(saved)")
        let after = try await runProcess(cli, ["-sS", "-o", "/dev/null", "-w", "%{http_code} %{url_effective}", "--cacert", ca,
                                               "--hsts", file, "http://localhost:\(port)/small"])
        #expect(after.stdout == "200 https://localhost:\(port)/small", "\(after.stdout) \(after.stderr)")
        let memory = try await runProcess(cli, ["-sS", "-o", "/dev/null", "-o", "/dev/null", "-w", "%{http_code} ", "--cacert", ca,
                                                "--hsts", "", "https://localhost:\(port)/hsts", "http://localhost:\(port)/small"])
        #expect(memory.stdout == "200 200 ", "\"\": in memory, across the run's URLs: \(memory.stderr)")
    }

    @Test func fromC() async throws {
        let bin = try await CExamples.shared.directory()
        let file = s.root + "/hsts-c-\(UUID().uuidString.prefix(8)).txt"
        let c = try await runProcess(bin + "/hsts", ["https://localhost:\(port)", "http://localhost:\(port)", s.certs + "/ca.pem", file])
        #expect(c.status == 0, "\(c.stdout)\(c.stderr)")
    }
}
