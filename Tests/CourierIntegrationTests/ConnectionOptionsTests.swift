import Foundation
import Testing
@testable import Courier
@testable import CourierCore

/// curl's connection options as Swift settings (`TLSConfiguration`, `TransferOptions`,
/// `ProxySettings`, `ResponseLimits`), and the connection trace behind `-v`.
@Suite("Connection options")
struct ConnectionOptionsTests {
    let s = TestServers.shared

    var https13: String { "https://localhost:\(s.tlsPorts["tls13"]!)/small" }

    /// A trace of what connecting did, with a private TLS configuration (its own connections):
    /// read while the connection serves the transfer (its head), or from the error of a failure.
    func traced(_ url: String, _ change: (inout TLSConfiguration) -> Void = { _ in }) async -> (Transfer, [String]) {
        var options = TransferOptions()
        var tls = s.trustTestCA
        tls.trustEvaluator = TrustEvaluator()
        change(&tls)
        options.tls = tls
        options.tracesConnections = true
        let transfer = Transfer(url: try! CourierURL(parsing: url), options: options)
        let seen = LockedBox<[String]>([])
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            transfer.delegate = TraceWatcher(seen: seen) { continuation.resume() }
            transfer.reportsHead = true
            Runtime.shared.submit(transfer)
        }
        let lines = seen.withLock { $0 }
        return (transfer, lines.isEmpty ? transfer.connectionTrace?.lines ?? [] : lines)
    }

    final class TraceWatcher: TransferDelegate, @unchecked Sendable {
        let seen: LockedBox<[String]>
        let done: () -> Void
        init(seen: LockedBox<[String]>, done: @escaping () -> Void) {
            self.seen = seen
            self.done = done
        }
        func transferDidReceiveHead(_ transfer: Transfer) {
            let lines = transfer.connectionTrace?.lines ?? []
            seen.withLock { $0 = lines }
        }
        func transferDidProgress(_ transfer: Transfer) {}
        func transferDidComplete(_ transfer: Transfer) { done() }
    }

    @Test func cipherSuitesCurvesAndALPN() async {
        let (chosen, lines) = await traced(https13) {
            $0.tls13CipherSuites = "TLS_AES_128_GCM_SHA256"
            $0.curves = "P-384"
        }
        #expect(chosen.error == nil, "\(String(describing: chosen.error))")
        #expect(lines.contains("SSL connection using TLSv1.3 / TLS_AES_128_GCM_SHA256 / secp384r1 / RSASSA-PSS"), "\(lines)")
        #expect(lines.contains("ALPN: offers h2,http/1.1") && lines.contains("ALPN: server accepted http/1.1"))
        let (noALPN, quiet) = await traced(https13) { $0.offersALPN = false }
        #expect(noALPN.error == nil && !quiet.contains { $0.hasPrefix("ALPN") }, "\(quiet)")
        for change: (inout TLSConfiguration) -> Void in [{ $0.cipherList = "NOPE" }, { $0.tls13CipherSuites = "TLS_NOPE" }, { $0.curves = "nope" }] {
            let (refused, _) = await traced(https13, change)
            #expect(refused.error?.code == .tlsCipher, "\(String(describing: refused.error))")
            #expect(refused.metrics.bytesSent == 0)
        }
        // A minimum below TLS 1.2 still ends on the newest version both sides allow.
        let (old, oldLines) = await traced(https13) { $0.minimumVersion = .tls10 }
        #expect(old.error == nil && oldLines.contains { $0.hasPrefix("SSL connection using TLSv1.3") })
    }

    @Test func theTraceShowsWhereAFailedHandshakeStopped() async {
        let (refused, lines) = await traced("https://localhost:\(s.tlsPorts["selfsigned"]!)/small") { _ in }
        #expect(refused.error?.code == .tlsUntrusted)
        #expect(lines.first?.hasPrefix("  Trying ") == true, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("Connected to localhost (") })
        #expect(lines.contains { $0.hasSuffix("TLS handshake, Client hello (1):") })
        #expect(lines.contains { $0.hasPrefix("  Certificate level 0: Public key type RSA") })
        #expect(lines.contains { $0.hasPrefix("SSL certificate problem: server certificate is not trusted") }, "\(lines)")
        let (plain, plainLines) = await traced("https://127.0.0.1:\(s.notTLSPort)/") { _ in }
        #expect(plain.error?.code.primary == .tls)
        #expect(plainLines.contains { $0.hasPrefix("TLS handshake failed after Client hello (OUT): ") }, "\(plainLines)")
        // Without the option nothing is recorded.
        let (untraced, _) = await fetch(s.nginx + "/small")
        #expect(untraced.connectionTrace == nil)
    }

    @Test func responseHeadLimits() async {
        let (big, _) = await fetch(s.scripted + "/big-head?kib=256")
        #expect(big.error == nil && big.status == 200, "curl's 300 KiB bound by default: \(String(describing: big.error))")
        let (bytes, _) = await fetch(s.scripted + "/big-head?kib=256") { $0.limits.maxHeaderBytes = 64 << 10 }
        #expect(bytes.error?.code == .headerBytesExceeded)
        let (fields, _) = await fetch(s.scripted + "/big-head?kib=256") { $0.limits.maxHeaderCount = 100 }
        #expect(fields.error?.code == .headerCountExceeded)
    }

    @Test func continueTimeoutAndHappyEyeballs() async {
        let body = [UInt8](repeating: 9, count: 1 << 20)
        let (sent, _) = await fetch(s.stream + "/upload?no100=1", method: .put, body: .bytes(body)) {
            $0.expectContinue = .always
            $0.continueTimeout = .milliseconds(50)
        }
        #expect(sent.error == nil && sent.status == 200, "\(String(describing: sent.error))")
        let (waiting, _) = await fetch(s.stream + "/upload?no100=1", method: .put, body: .bytes(body)) {
            $0.expectContinue = .always
            $0.continueTimeout = .seconds(60)
            $0.timeouts.total = .milliseconds(500)
        }
        #expect(waiting.error?.code == .totalTimeout)
        // The scripted server's port hangs on 127.0.0.2 and answers on 127.0.0.1: the delay decides
        // when the second address is tried.
        var route = ConnectRoute()
        try! route.addResolve("he-swift.test:\(s.scriptedPort):127.0.0.2,127.0.0.1")
        let url = "http://he-swift.test:\(s.scriptedPort)/echo"
        let (quick, _) = await fetch(url) {
            $0.route = route
            $0.happyEyeballsDelay = .milliseconds(20)
            $0.reuseConnection = false  // (the next request must connect again)
        }
        #expect(quick.error == nil && quick.status == 200, "\(String(describing: quick.error))")
        let (slow, _) = await fetch(url) {
            $0.route = route
            $0.happyEyeballsDelay = .seconds(30)
            $0.timeouts.connect = .milliseconds(500)
        }
        #expect(slow.error?.code == .connectTimeout, "\(String(describing: slow.error))")
    }

    @Test func httpThroughAProxysTunnel() async {
        let proxy = await s.privateProxy()
        let logURL = proxy + "/log"
        var settings = ProxySettings.all(try! Proxy(parsing: proxy))
        settings.tunnelsHTTP = true
        let (t, _) = await fetch(s.nginx + "/small") { $0.proxy = settings }
        #expect(t.error == nil && t.status == 200, "\(String(describing: t.error))")
        let (log, _) = await fetch(logURL) { $0.proxy = .direct }
        #expect(log.bodyText.contains("CONNECT \(s.nginx.dropFirst("http://".count))"), "\(log.bodyText)")
        #expect(!log.bodyText.contains("GET http://"), "\(log.bodyText)")
    }
}
