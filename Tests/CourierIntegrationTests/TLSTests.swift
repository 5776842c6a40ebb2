import Foundation
import Synchronization
import Testing
@testable import Courier
@testable import CourierCore

/// HTTPS against nginx and a scripted TLS server, with certificates generated for this run.
@Suite("HTTPS")
struct TLSTests {
    let s = TestServers.shared

    func url(_ name: String, host: String = "localhost", path: String = "/small") -> String {
        "https://\(host):\(s.tlsPorts[name]!)\(path)"
    }

    func pin(_ keyFile: String) -> [UInt8] {
        try! TLSSession.pin(fromKeyFile: s.certs + "/" + keyFile).get()
    }

    /// A configuration trusting the test CA that no other test shares (its own pool key).
    func privateConfiguration() -> TLSConfiguration {
        var tls = s.trustTestCA
        tls.trustEvaluator = TrustEvaluator()
        return tls
    }

    @Test func validChainFromACAFile() async {
        let (t, _) = await fetch(url("valid")) { $0.tls = s.trustTestCA }
        #expect(t.error == nil, "\(String(describing: t.error))")
        #expect(t.status == 200 && t.responseBody.count == 100)
        #expect(t.metrics.tlsVerifyResult == 0)
        let (viaIP, _) = await fetch(url("valid", host: "127.0.0.1")) { $0.tls = s.trustTestCA }
        #expect(viaIP.error == nil, "the valid certificate also names 127.0.0.1")
    }

    @Test func ipAddressCertificate() async {
        let (byIP, _) = await fetch(url("ip", host: "127.0.0.1")) { $0.tls = s.trustTestCA }
        #expect(byIP.error == nil, "\(String(describing: byIP.error))")
        let (byName, _) = await fetch(url("ip")) { $0.tls = s.trustTestCA }
        #expect(byName.error?.code == .tlsHostMismatch)
    }

    @Test func verificationFailuresHaveTheirOwnErrors() async {
        let cases: [(String, CourierError.Code)] = [
            ("selfsigned", .tlsUntrusted),
            ("wronghost", .tlsHostMismatch),
            ("expired", .tlsExpired),
            ("notyet", .tlsNotYetValid),
        ]
        for (name, code) in cases {
            let (t, elapsed) = await fetch(url(name)) { $0.tls = s.trustTestCA }
            #expect(t.error?.code == code, "\(name): \(String(describing: t.error))")
            #expect(t.status == 0, "no response from a rejected server")
            #expect(t.metrics.bytesSent == 0, "\(name): not a byte of the request was sent")
            #expect(elapsed < 5)
        }
        let (untrustedCA, _) = await fetch(url("valid"))
        #expect(untrustedCA.error?.code == .tlsUntrusted, "the test CA is not in the system store")
    }

    /// A server refused by the checks after the handshake leaves no session to resume: a resumed
    /// session skips those checks, so the second attempt would otherwise succeed (TLS 1.2 makes
    /// its session during the handshake, before Courier's checks run).
    @Test func aRefusedServersSessionIsNeverResumed() async {
        for version in [TLSConfiguration.Version.tls12, .tls13] {
            var tls = s.trustTestCA
            if version == .tls12 { tls.maximumVersion = .tls12 } else { tls.minimumVersion = .tls13 }
            tls.trustEvaluator = TrustEvaluator()  // (a pool key and session cache of this test's own)
            for name in ["selfsigned", "wronghost"] {
                for attempt in 1...3 {
                    let (t, _) = await fetch(url(name)) { $0.tls = tls }
                    #expect(t.error != nil && t.status == 0, "\(version) \(name) attempt \(attempt): \(String(describing: t.error)) \(t.status)")
                }
            }
        }
    }

    @Test func insecureModeAcceptsAnythingButStillHonoursPins() async throws {
        var insecure = TLSConfiguration()
        insecure.verification = .insecureAcceptAnyCertificate
        let (t, _) = await fetch(url("selfsigned")) { $0.tls = insecure }
        #expect(t.error == nil && t.status == 200)
        insecure.pins = [PinSet(sha256: [pin("server.pub")])]
        let (pinned, _) = await fetch(url("selfsigned")) { $0.tls = insecure }
        #expect(pinned.error?.code == .tlsPinMismatch)
    }

    @Test func pinsWithBackupsAndOnEveryHop() async throws {
        var tls = s.trustTestCA
        tls.pins = [PinSet(sha256: [pin("server.pub")])]
        let (ok, _) = await fetch(url("valid")) { $0.tls = tls }
        #expect(ok.error == nil)

        tls.pins = [PinSet(sha256: [pin("spare.pub")])]
        let (wrong, _) = await fetch(url("valid")) { $0.tls = tls }
        #expect(wrong.error?.code == .tlsPinMismatch)

        // A backup pin beside the current one: renewal to the spare key would keep working, and
        // today's key still matches.
        tls.pins = [try PinSet(pins: ["sha256//" + Base64.encode(pin("spare.pub")) + ";sha256//" + Base64.encode(pin("server.pub"))])]
        let (backup, _) = await fetch(url("valid")) { $0.tls = tls }
        #expect(backup.error == nil)

        // Pinning the CA's key covers every certificate it issues.
        let caKey = try TLSSession.pin(fromKeyFile: s.certs + "/ca.pem").get()
        tls.pins = [PinSet(sha256: [caKey])]
        let (root, _) = await fetch(url("valid")) { $0.tls = tls }
        #expect(root.error == nil, "\(String(describing: root.error))")

        // The redirect goes to another server (another key): its connection is checked too.
        tls.pins = [PinSet(sha256: [pin("server.pub")])]
        let (hop, _) = await fetch(url("valid", path: "/to-ip")) { $0.tls = tls }
        #expect(hop.error?.code == .tlsPinMismatch, "\(String(describing: hop.error))")
        #expect(hop.metrics.redirects == 1)
        // Pins limited to one host leave the others alone.
        tls.pins = [PinSet(hosts: ["localhost"], sha256: [pin("server.pub")])]
        let (scoped, _) = await fetch(url("valid", path: "/to-ip")) { $0.tls = tls }
        #expect(scoped.error == nil, "\(String(describing: scoped.error))")
    }

    @Test func reportOnlyPinning() async {
        let reports = Mutex<[String]>([])
        var tls = s.trustTestCA
        tls.pins = [PinSet(sha256: [pin("spare.pub")])]
        tls.pinningMode = .reportOnly
        tls.trustEvaluator = TrustEvaluator(pinMismatch: { context in reports.withLock { $0.append(context.host) } })
        let (t, _) = await fetch(url("valid")) { $0.tls = tls }
        #expect(t.error == nil)
        #expect(reports.withLock { $0 } == ["localhost"])
    }

    @Test func applicationTrustHook() async {
        let seen = Mutex<[TrustContext]>([])
        var accepting = s.trustTestCA
        accepting.trustEvaluator = TrustEvaluator { context in
            seen.withLock { $0.append(context) }
            return true
        }
        let (selfSigned, _) = await fetch(url("selfsigned")) { $0.tls = accepting }
        #expect(selfSigned.error == nil, "the hook may accept what Courier would reject")
        let context = seen.withLock { $0.first }
        #expect(context?.verificationError?.code == .tlsUntrusted)
        #expect(context?.chain.isEmpty == false)
        #expect(context?.publicKeySHA256.first?.count == 32)

        var rejecting = s.trustTestCA
        rejecting.trustEvaluator = TrustEvaluator { _ in false }
        let (valid, _) = await fetch(url("valid")) { $0.tls = rejecting }
        #expect(valid.error?.code == .tlsRejectedByHook)
    }

    @Test func clientCertificates() async {
        let (without, _) = await fetch(url("clientauth")) { $0.tls = s.trustTestCA }
        #expect(without.status == 400, "nginx answers 400 to a client without a certificate")

        var tls = s.trustTestCA
        tls.clientCertificateFile = s.certs + "/client.pem"
        tls.clientKeyFile = s.certs + "/client.key"
        let (with, _) = await fetch(url("clientauth")) { $0.tls = tls }
        #expect(with.error == nil && with.status == 200, "\(String(describing: with.error))")

        tls.clientKeyFile = s.certs + "/client-encrypted.key"
        tls.clientKeyPassphrase = "secret"
        let (encrypted, _) = await fetch(url("clientauth")) { $0.tls = tls }
        #expect(encrypted.status == 200, "\(String(describing: encrypted.error))")

        tls.clientKeyPassphrase = "wrong"
        let (badPassphrase, _) = await fetch(url("clientauth")) { $0.tls = tls }
        #expect(badPassphrase.error?.code == .tlsClientCertificate)

        var missingCA = TLSConfiguration()
        missingCA.caFile = s.certs + "/no-such-file.pem"
        let (noCA, _) = await fetch(url("valid")) { $0.tls = missingCA }
        #expect(noCA.error?.code == .tlsCAFile)
    }

    @Test func protocolVersions() async {
        var onlyNew = s.trustTestCA
        onlyNew.minimumVersion = .tls13
        let (t1, _) = await fetch(url("tls12")) { $0.tls = onlyNew }
        #expect(t1.error?.code == .tlsProtocolVersion, "\(String(describing: t1.error))")
        var onlyOld = s.trustTestCA
        onlyOld.maximumVersion = .tls12
        let (t2, _) = await fetch(url("tls13")) { $0.tls = onlyOld }
        #expect(t2.error?.code == .tlsProtocolVersion, "\(String(describing: t2.error))")
        let (t3, _) = await fetch(url("tls12")) { $0.tls = onlyOld }
        #expect(t3.error == nil)
    }

    @Test func sessionsAreResumed() async {
        let tls = privateConfiguration()
        let (first, _) = await fetch(url("valid")) {
            $0.tls = tls
            $0.reuseConnection = false
        }
        #expect(first.error == nil)
        #expect(!first.metrics.tlsResumed)
        let (second, _) = await fetch(url("valid")) { $0.tls = tls }
        #expect(second.error == nil)
        #expect(second.metrics.connectionsOpened == 1, "a new connection")
        #expect(second.metrics.tlsResumed, "with an abbreviated handshake")

        var fresh = tls
        fresh.sessionResumption = false
        let (third, _) = await fetch(url("valid")) {
            $0.tls = fresh
            $0.reuseConnection = false
        }
        #expect(third.error == nil && !third.metrics.tlsResumed)
    }

    @Test func connectionsAreNeverSharedAcrossTLSConfigurations() async {
        let a = privateConfiguration()
        var b = a
        b.pins = [PinSet(sha256: [pin("server.pub")])]
        let (first, _) = await fetch(url("valid")) { $0.tls = a }
        let (other, _) = await fetch(url("valid")) { $0.tls = b }
        let (again, _) = await fetch(url("valid")) { $0.tls = a }
        #expect(first.error == nil && other.error == nil && again.error == nil)
        #expect(!other.metrics.reusedConnection, "pins differ: a connection of its own")
        #expect(other.metrics.connectionsOpened == 1)
        #expect(again.metrics.reusedConnection, "same configuration: the first connection")
    }

    @Test func keepAliveAndLargeBodiesOverTLS() async {
        let tls = privateConfiguration()
        var opened = 0
        for i in 0..<20 {
            let (t, _) = await fetch(url("valid", path: "/small?k=\(i)")) { $0.tls = tls }
            #expect(t.error == nil)
            opened += t.metrics.connectionsOpened
        }
        #expect(opened == 1)
        let (large, _) = await fetch(url("valid", path: "/large")) { $0.tls = tls }
        #expect(large.error == nil)
        #expect(large.responseBody.count == TestServers.largeSize)
        #expect(large.responseBody[TestServers.largeSize / 2] == TestServers.largeFileByte(TestServers.largeSize / 2))
        let (gzip, _) = await fetch(url("valid", path: "/large")) {
            $0.tls = tls
            $0.limits.maxBodyBytes = 1000
        }
        #expect(gzip.error?.code == .bodyTooLarge)
    }

    @Test func uploadOverTLS() async {
        let body = [UInt8](repeating: UInt8(ascii: "u"), count: 300_000)
        let (t, _) = await fetch(url("valid", path: "/small"), method: .post, body: .bytes(body)) { $0.tls = s.trustTestCA }
        // nginx refuses POST to a static file, after reading the body: the exchange itself works.
        #expect(t.status == 405, "\(String(describing: t.error))")
        #expect(t.metrics.bytesSent > 300_000)
    }

    @Test func truncationAndCloseNotify() async {
        let base = "https://localhost:\(s.scriptedTLSPort)"
        let (clean, _) = await fetch(base + "/close-notify") { $0.tls = s.trustTestCA }
        #expect(clean.error == nil)
        #expect(clean.bodyText == "clean end")
        let (cut, _) = await fetch(base + "/truncate") { $0.tls = s.trustTestCA }
        #expect(cut.error?.code == .tlsTruncated, "\(String(describing: cut.error))")
        let (short, _) = await fetch(base + "/truncate-length") { $0.tls = s.trustTestCA }
        #expect(short.error?.code == .truncatedBody)
    }

    @Test func handshakeWithSomethingThatIsNotTLS() async {
        let (t, elapsed) = await fetch("https://localhost:\(s.notTLSPort)/") { $0.tls = s.trustTestCA }
        #expect(t.error?.code == .tlsHandshake, "\(String(describing: t.error))")
        #expect(elapsed < 5)
        let (plain, _) = await fetch("https://127.0.0.1:\(s.nginxPort)/small") {
            $0.tls = s.trustTestCA
            $0.timeouts.connect = .seconds(10)
        }
        #expect(plain.error?.code == .tlsHandshake, "\(String(describing: plain.error))")
    }

    @Test func engineOverHTTPS() async throws {
        var configuration = Engine.Configuration()
        configuration.options.tls = s.trustTestCA
        let engine = Engine(host: s.https, configuration: configuration)
        let response = try await engine.send(engine.operation(path: "/moved"))
        #expect(response.status == 200)
        #expect(response.url.scheme == .https)
        #expect(response.metrics.tlsEnd >= response.metrics.connectEnd)
    }
}

/// The CLI's TLS flags and curl's exit codes for TLS failures.
@Suite("courier CLI over HTTPS")
struct CLITLSTests {
    let s = TestServers.shared
    let cli = CLITests()

    @Test func exitCodesAndFlags() async throws {
        let ca = s.certs + "/ca.pem"
        func run(_ args: [String]) async throws -> CLITests.Run { try await cli.run(["-sS"] + args) }
        let ok = try await run(["--cacert", ca, "-o", "/dev/null", "-w", "%{http_code} %{ssl_verify_result}", s.https + "/small"])
        #expect(ok.status == 0 && ok.stdout == "200 0", "\(ok.stderr)")
        let untrusted = try await run(["-o", "/dev/null", "-w", "%{ssl_verify_result}", s.https + "/small"])
        #expect(untrusted.status == 60)
        #expect(untrusted.stdout != "0", "the X509 verification code is reported")
        #expect(try await run(["--cacert", ca, "https://localhost:\(s.tlsPorts["wronghost"]!)/small"]).status == 60)
        #expect(try await run(["--cacert", ca, "https://localhost:\(s.tlsPorts["expired"]!)/small"]).status == 60)
        #expect(try await run(["-k", "-o", "/dev/null", "https://localhost:\(s.tlsPorts["selfsigned"]!)/small"]).status == 0)
        #expect(try await run(["--insecure", "-o", "/dev/null", "https://localhost:\(s.tlsPorts["selfsigned"]!)/small"]).status == 0)
        #expect(try await run(["--cacert", ca, "--pinnedpubkey", s.certs + "/spare.pub", s.https + "/small"]).status == 90)
        #expect(try await run(["--cacert", ca, "--pinnedpubkey", s.certs + "/server.pub", "-o", "/dev/null", s.https + "/small"]).status == 0)
        #expect(try await run(["--cacert", ca, "--tlsv1.3", "https://localhost:\(s.tlsPorts["tls12"]!)/small"]).status == 35)
        #expect(try await run(["--cacert", ca, "--tls-max", "1.2", "-o", "/dev/null", "https://localhost:\(s.tlsPorts["tls12"]!)/small"]).status == 0)
        #expect(try await run(["--cacert", s.certs + "/missing.pem", s.https + "/small"]).status == 77)
        let client = try await run(["--cacert", ca, "--cert", s.certs + "/client.pem", "--key", s.certs + "/client-encrypted.key",
                                    "--pass", "secret", "-o", "/dev/null", "-w", "%{http_code}", "https://localhost:\(s.tlsPorts["clientauth"]!)/small"])
        #expect(client.stdout == "200", "\(client.stderr)")
        #expect(try await run(["--cacert", ca, "--cert", s.certs + "/client.pem", "--key", s.certs + "/client-encrypted.key",
                                "--pass", "nope", "https://localhost:\(s.tlsPorts["clientauth"]!)/small"]).status == 58)
        #expect(try await run(["--cacert", ca, "https://localhost:\(s.notTLSPort)/"]).status == 35)
        #expect(try await run(["--cacert", ca, "https://localhost:\(s.scriptedTLSPort)/truncate"]).status == 56)
    }

    /// A new connection per URL (Connection: close): the second handshake resumes the first
    /// one's session, unless --no-sessionid asks for full handshakes.
    @Test func sessionResumptionAndNoSessionID() async throws {
        let ca = s.certs + "/ca.pem"
        let common = ["-sS", "--cacert", ca, "-H", "Connection: close", "-w", "%{tls_resumed}", "-o", "/dev/null", "-o", "/dev/null",
                      s.https + "/small?a", s.https + "/small?b"]
        let resumed = try await cli.run(common)
        #expect(resumed.status == 0 && resumed.stdout == "01", "\(resumed.stderr)")
        let full = try await cli.run(["--no-sessionid"] + common)
        #expect(full.status == 0 && full.stdout == "00", "\(full.stderr)")
    }

    /// `-w %{certs}` and `%{num_certs}`: the chain the server sent, leaf first, in curl's
    /// certinfo form, checked against the PEM files nginx serves and what openssl says of them;
    /// also on a resumed session (the chain comes from the session), none over plain HTTP, both
    /// in `%{json}`.
    @Test func certsAndNumCerts() async throws {
        let ca = s.certs + "/ca.pem"
        let run = try await cli.run(["-sS", "--cacert", ca, "-o", "/dev/null", "-w", "%{num_certs}\n%{certs}", s.https + "/small"])
        #expect(run.status == 0, "\(run.stderr)")
        let sent = try String(contentsOfFile: s.certs + "/server-chain.pem", encoding: .utf8)
        func pemBlocks(_ text: String) -> [String] {
            text.components(separatedBy: "-----BEGIN CERTIFICATE-----").dropFirst().map {
                "-----BEGIN CERTIFICATE-----" + $0.components(separatedBy: "-----END CERTIFICATE-----")[0] + "-----END CERTIFICATE-----"
            }
        }
        let lines = run.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.first == String(pemBlocks(sent).count) && pemBlocks(sent).count == 2, "num_certs: \(lines.first ?? "")")
        #expect(pemBlocks(run.stdout) == pemBlocks(sent), "each certificate in PEM, leaf first, as the server sent it")
        // The leaf's fields, in curl's order, with the values openssl gives for the file.
        let leaf = Array(lines.dropFirst().prefix { !$0.hasPrefix("-----BEGIN") })
        let names = leaf.map { String($0.prefix { $0 != ":" }) }
        #expect(names == ["Subject", "Issuer", "Version", "Serial Number", "Signature Algorithm", "Public Key Algorithm",
                          "X509v3 Basic Constraints", "X509v3 Key Usage", "X509v3 Extended Key Usage", "X509v3 Subject Alternative Name",
                          "X509v3 Subject Key Identifier", "X509v3 Authority Key Identifier", "Start date", "Expire date",
                          "RSA Public Key", "rsa(n)", "rsa(e)", "Signature"], "\(names)")
        let facts = try await runProcess("/usr/bin/env", ["openssl", "x509", "-in", s.certs + "/server.pem", "-noout", "-serial", "-startdate",
                                                          "-enddate", "-modulus", "-subject", "-nameopt", "oneline"])
        func fact(_ key: String) -> String {
            facts.stdout.split(separator: "\n").first { $0.hasPrefix(key + "=") }.map { String($0.dropFirst(key.count + 1)) } ?? "?"
        }
        func field(_ name: String) -> String? { leaf.first { $0.hasPrefix(name + ":") }.map { String($0.dropFirst(name.count + 1)) } }
        #expect(field("Subject") == fact("subject") && field("Subject") == "CN = localhost")
        #expect(field("Issuer") == "CN = Courier Test CA" && field("Version") == "2")
        #expect(field("Serial Number") == fact("serial").lowercased())
        #expect(field("Start date") == fact("notBefore") && field("Expire date") == fact("notAfter"))
        #expect(field("rsa(n)") == fact("Modulus") && field("rsa(e)") == "10001" && field("RSA Public Key") == "2048")
        #expect(field("X509v3 Subject Alternative Name") == "DNS:localhost, IP Address:127.0.0.1")
        let signature = field("Signature") ?? ""
        #expect(signature.count == 256 * 3 && signature.hasSuffix(":"), "256 bytes, each as two hex digits and a colon")
        #expect(lines.contains("Subject:CN = Courier Test CA"), "the CA follows the leaf")

        // A resumed session still has the chain; plain HTTP has none; %{json} has both.
        let twice = try await cli.run(["-sS", "--cacert", ca, "-H", "Connection: close", "-w", "%{tls_resumed}:%{num_certs} ",
                                       "-o", "/dev/null", "-o", "/dev/null", s.https + "/small?a", s.https + "/small?b"])
        #expect(twice.stdout == "0:2 1:2 ", "\(twice.stdout)\(twice.stderr)")
        let plain = try await cli.run(["-sS", "-o", "/dev/null", "-w", "%{num_certs}[%{certs}]", s.nginx + "/small"])
        #expect(plain.stdout == "0[]")
        let json = try await cli.run(["-sS", "--cacert", ca, "-o", "/dev/null", "-w", "%{json}", s.https + "/small"])
        let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        #expect(object?["num_certs"] as? Int == 2)
        #expect(pemBlocks(object?["certs"] as? String ?? "") == pemBlocks(sent))
    }
}
