import Foundation
@testable import CourierCore

/// One independent server implementation serving the interop site (Tests/Interop/launch.py), on
/// loopback for the rest of the test process.
struct InteropServer: Sendable {
    enum Kind: String, CaseIterable, Sendable, CustomStringConvertible {
        case nginx, apache, caddy, h2o, lighttpd, uvicorn, go

        var description: String { rawValue }
    }

    let kind: Kind
    let version: String
    /// Plain HTTP.
    let http: Int
    /// TLS 1.2 and 1.3, certificates for localhost and other.test chosen by SNI.
    let https: Int
    /// TLS requiring a client certificate from the test CA; nil where the server cannot.
    let mtls: Int?
    /// Plain HTTP where the server closes each connection after a few exchanges; nil where it
    /// cannot.
    let closing: Int?

    /// Why a server could not be used: not installed here, or it would not start.
    struct Unavailable: Error {
        var reason: String
        /// Not installed: the matrix says so; any other reason is a failure.
        var missing: Bool
    }

    /// Starts `kind` once (blocking until its listeners accept or it gave up; the HTTP/1 and
    /// the HTTP/2 rows share it), kept running until the test process exits: its stdin is a
    /// pipe only this process holds.
    static func start(_ kind: Kind) async -> Result<InteropServer, Unavailable> {
        let launching = launches.withLock { tasks in
            if let task = tasks[kind] { return task }
            let task = Task {
                await withCheckedContinuation { continuation in
                    Thread.detachNewThread { continuation.resume(returning: launch(kind)) }
                }
            }
            tasks[kind] = task
            return task
        }
        return await launching.value
    }

    private static let launches = LockedBox<[Kind: Task<Result<InteropServer, Unavailable>, Never>]>([:])

    private static func launch(_ kind: Kind) -> Result<InteropServer, Unavailable> {
        let servers = TestServers.shared
        let work = servers.root + "/interop-" + kind.rawValue
        let html = servers.root + "/html"
        writeFixtures(html)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: pythonPath)
        process.arguments = [TestServers.packageRoot + "/Tests/Interop/launch.py", kind.rawValue, work, html, servers.certs]
        var environment = ProcessInfo.processInfo.environment
        let build = TestServers.packageRoot + "/.build"
        environment["COURIER_INTEROP_PYTHON"] = environment["COURIER_INTEROP_PYTHON"] ?? build + "/interop-venv/bin/python"
        environment["COURIER_INTEROP_GO_SERVER"] = environment["COURIER_INTEROP_GO_SERVER"] ?? build + "/interop-go-server"
        process.environment = environment
        let output = Pipe()
        let input = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = input
        do { try process.run() } catch { return .failure(Unavailable(reason: "launch.py: \(error)", missing: false)) }
        keepOpen.withLock { $0.append(input) }
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { return .failure(Unavailable(reason: "launch.py exited without a word", missing: false)) }
            line.append(chunk)
        }
        guard let json = try? JSONSerialization.jsonObject(with: line) as? [String: Any] else {
            return .failure(Unavailable(reason: "launch.py said: \(String(decoding: line, as: UTF8.self))", missing: false))
        }
        if let missing = json["missing"] as? String { return .failure(Unavailable(reason: missing, missing: true)) }
        if let failed = json["failed"] as? String { return .failure(Unavailable(reason: failed, missing: false)) }
        return .success(InteropServer(kind: kind, version: json["version"] as? String ?? "",
                                      http: json["http"] as! Int, https: json["https"] as! Int,
                                      mtls: json["mtls"] as? Int, closing: json["closing"] as? Int))
    }

    /// Stdin pipes of the launchers: closed (and the servers stopped) when the process exits.
    private static let keepOpen = LockedBox<[Pipe]>([])

    /// The static files the shared fixtures lack (the others are TestServers'): /bighead, and
    /// /digest/secret behind Apache's mod_auth_digest.
    private static func writeFixtures(_ html: String) {
        let path = html + "/bighead"
        if !FileManager.default.fileExists(atPath: path) {
            try? Data("bighead\n".utf8).write(to: URL(fileURLWithPath: path))
        }
        let secret = html + "/digest/secret"
        if !FileManager.default.fileExists(atPath: secret) {
            try? FileManager.default.createDirectory(atPath: html + "/digest", withIntermediateDirectories: true,
                                                     attributes: [.posixPermissions: 0o755])
            try? Data("behind mod_auth_digest\n".utf8).write(to: URL(fileURLWithPath: secret))
        }
    }

    /// A URL of the site; in the HTTP/2 rows (`InteropWire.h2`) the plain listener's URLs are the
    /// TLS listener's (h2 is offered by ALPN only, as every server here does).
    func url(_ path: String, port: Int? = nil, host: String = "127.0.0.1", tls: Bool = false) -> String {
        if InteropWire.h2, !tls, port == nil { return "https://localhost:\(https)\(path)" }
        return "\(tls ? "https" : "http")://\(host):\(port ?? (tls ? https : http))\(path)"
    }
}

/// A value behind a lock, for the few shared bits of the interop suite.
final class LockedBox<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func withLock<T>(_ body: (inout Value) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}
