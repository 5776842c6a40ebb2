import Foundation
import Testing
@testable import CourierCore

/// The same checks against independent server implementations (nginx, Apache httpd, Caddy on
/// Go's crypto/tls, h2o, lighttpd, uvicorn with Starlette, Go's net/http), each started by the
/// run on loopback (Tests/Interop/launch.py). A cell fails only on Courier's side of an exchange;
/// what a server does not offer is "n/a" with the reason. Each server's row goes to
/// .build/interop/, and Tests/run-tests.sh prints the table after the run.
@Suite("Interop matrix")
struct InteropTests {
    @Test(arguments: InteropServer.Kind.allCases)
    func matrix(_ kind: InteropServer.Kind) async {
        let server: InteropServer
        switch await InteropServer.start(kind) {
        case .success(let started):
            server = started
        case .failure(let unavailable):
            InteropTable.record(kind, version: "", cells: [], unavailable: unavailable.reason)
            // Not installed: the table says so. Installed but broken: that is a failure.
            if !unavailable.missing { Issue.record("\(kind): \(unavailable.reason)") }
            return
        }
        var cells: [(String, InteropOutcome)] = []
        for check in InteropCheck.all {
            let outcome = await check.run(server)
            if case .fail(let why) = outcome { Issue.record("\(kind) \(check.name): \(why)") }
            cells.append((check.name, outcome))
        }
        InteropTable.record(kind, version: server.version, cells: cells, unavailable: nil)
    }

    /// The same checks over HTTP/2 (TLS, h2 by ALPN, `http2Only`) against every server that
    /// offers it; one that does not is "n/a" with the reason, not a failure.
    @Test(arguments: InteropServer.Kind.allCases)
    func matrixOverH2(_ kind: InteropServer.Kind) async {
        let label = "\(kind) h2"
        guard case .success(let server) = await InteropServer.start(kind) else {
            InteropTable.record(kind, label: label, version: "", cells: [], unavailable: "not started (see its HTTP/1 row)")
            return
        }
        await InteropWire.$h2.withValue(true) {
            let probe = await InteropCheck.send(server.url("/small"))
            if let error = probe.error, error.code == .http2NotNegotiated || error.message.contains("no application protocol") {
                InteropTable.record(kind, label: label, version: server.version, cells: [], unavailable: "\(kind) offers no h2 by ALPN",
                                    offersNothing: true)
                return
            }
            var cells: [(String, InteropOutcome)] = []
            for check in InteropCheck.all {
                let outcome = await check.run(server)
                if case .fail(let why) = outcome { Issue.record("\(label) \(check.name): \(why)") }
                cells.append((check.name, outcome))
            }
            InteropTable.record(kind, label: label, version: server.version, cells: cells, unavailable: nil)
        }
    }
}

/// Writes one server's row of the matrix (read back by Tests/Interop/table.py).
enum InteropTable {
    static var directory: String { TestServers.packageRoot + "/.build/interop" }

    /// `label` names the row (the server's name for its HTTP/1 row, "nginx h2" for its HTTP/2
    /// one, which follows the HTTP/1 rows).
    /// `offersNothing`: the server runs but does not offer what the row needs ("n/a"), rather than
    /// being missing.
    static func record(_ kind: InteropServer.Kind, label: String? = nil, version: String, cells: [(String, InteropOutcome)],
                       unavailable: String?, offersNothing: Bool = false) {
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let order = (InteropServer.Kind.allCases.firstIndex(of: kind) ?? 0) + (label == nil ? 0 : 100)
        var row: [String: Any] = ["server": label ?? kind.rawValue, "version": version, "order": order]
        if let unavailable { row["unavailable"] = unavailable }
        if offersNothing { row["absent"] = "n/a" }
        row["checks"] = cells.map { name, outcome -> [String: String] in
            switch outcome {
            case .pass: return ["check": name, "result": "pass"]
            case .fail(let why): return ["check": name, "result": "fail", "why": why]
            case .notApplicable(let why): return ["check": name, "result": "n/a", "why": why]
            }
        }
        if let data = try? JSONSerialization.data(withJSONObject: row, options: [.sortedKeys]) {
            try? data.write(to: URL(fileURLWithPath: directory + "/\((label ?? kind.rawValue).replacingOccurrences(of: " ", with: "-")).json"))
        }
    }
}
