import Foundation
import Testing
@testable import Courier
@testable import CourierCore

/// Requests over a Unix domain socket, against a Docker-Engine-shaped server listening on a socket
/// file and another in the abstract namespace (Tests/Servers/uds_server.py): the Swift engine, the
/// CLI's --unix-socket and --abstract-unix-socket with curl's exit codes. (C: Tests/CPrograms/
/// unix_socket.c through CABITests; Python: cbindings/python/tests/test_unix_socket.py.)
@Suite("Unix domain sockets")
struct UnixSocketTests {
    /// The two servers, started once for the suite.
    static let servers = UnixSocketServers()

    @Test func theDockerEngineAPIOverASocketFile() async throws {
        let docker = try Engine(unixSocket: .path(Self.servers.path))
        let ping = try await docker.send(docker.operation(path: "/_ping"))
        let text = try ping.string()
        #expect(ping.status == 200 && text == "OK" && ping.headers["Api-Version"] == "1.43")
        let containers = try await docker.send(docker.operation(path: "/v1.43/containers/json")).json()
        #expect(containers[0]?["Names"]?[0]?.stringValue == "/courier", "\(containers)")
        let host = try await docker.send(docker.operation(path: "/host")).string()
        #expect(host == "localhost", "the Host field is the URL's: \(host)")
    }

    @Test func connectionsAreKeptAliveAndNeverSharedWithTCP() async throws {
        let api = try Engine(unixSocket: .path(Self.servers.path), host: "http://keepalive.test")
        let first = try await api.send(api.operation(path: "/_ping"))
        #expect(!first.metrics.reusedConnection)
        for _ in 0..<4 {
            let next = try await api.send(api.operation(path: "/_ping"))
            #expect(next.metrics.reusedConnection, "the socket's connection is kept alive")
        }
        // The same URL over TCP is not answered by the socket's connections.
        let tcp = Engine(host: "http://keepalive.test")
        await #expect(throws: CourierError.self) { try await tcp.send(tcp.operation(path: "/_ping")) }
    }

    @Test func anAbstractNameAndABodyBack() async throws {
        let api = try Engine(unixSocket: .abstract(Self.servers.abstractName))
        let echo = api.operation(path: "/echo", method: .post)
        echo.body = .bytes(Array("over the abstract namespace".utf8))
        #expect(try await api.send(echo).string() == "over the abstract namespace")
    }

    @Test func aProxyIsNotUsed() async throws {
        var configuration = Engine.Configuration()
        configuration.options.proxy = .all(Proxy(host: "127.0.0.1", port: 9))
        let api = try Engine(unixSocket: .path(Self.servers.path), configuration: configuration)
        #expect(try await api.send(api.operation(path: "/_ping")).string() == "OK")
    }

    @Test func badSocketsFailClearly() async throws {
        #expect(throws: CourierError.self) { try Engine(unixSocket: .path("")) }
        let long = "/tmp/" + String(repeating: "x", count: 200)
        do {
            _ = try Engine(unixSocket: .path(long))
            Issue.record("a path the socket address cannot hold was taken")
        } catch {
            #expect(error.code == .invalidArgument, "\(error)")
        }
        let missing = try Engine(unixSocket: .path(NSTemporaryDirectory() + "courier-no-such-\(getpid()).sock"))
        do {
            _ = try await missing.send(missing.operation(path: "/_ping"))
            Issue.record("a missing socket answered")
        } catch {
            #expect(error.code == .connectFailed && error.message.contains("ENOENT"), "\(error)")
        }
    }

    /// The curl command of a request over the socket names it, and curl itself reaches the same
    /// server with it.
    @Test func theCurlCommandGoesThroughTheSocketToo() async throws {
        let docker = try Engine(unixSocket: .path(Self.servers.path))
        let op = docker.operation(path: "/_ping")
        #expect(op.curlCommand.contains("--unix-socket \(Self.servers.path)"), "\(op.curlCommand)")
        let run = try await runProcess("/bin/sh", ["-c", op.curlCommand + " -s"])
        #expect(run.status == 0 && run.stdout == "OK", "\(op.curlCommand): \(run.stdout)\(run.stderr)")
        var bound = ConnectRoute(local: LocalBinding(source: .address("127.0.0.2"), ports: 4000...4010))
        bound.unixSocket = nil
        op.options.route = bound
        #expect(op.curlCommand.hasSuffix("--interface 'host!127.0.0.2' --local-port 4000-4010"), "\(op.curlCommand)")
    }

    @Test func fromC() async throws {
        let bin = try await CExamples.shared.directory()
        let run = try await runProcess(bin + "/unix_socket", [Self.servers.path, Self.servers.abstractName])
        #expect(run.status == 0 && run.stdout.contains("all checks passed"), "\(run.stdout)\(run.stderr)")
    }

    @Test func theCLIsFlagsAndExitCodes() async throws {
        let ping = try await runProcess(CLITests.binary, ["-s", "--unix-socket", Self.servers.path, "http://localhost/_ping"])
        #expect(ping.status == 0 && ping.stdout == "OK", "\(ping.stdout)\(ping.stderr)")
        let abstract = try await runProcess(CLITests.binary, ["-s", "--abstract-unix-socket", Self.servers.abstractName,
                                                              "http://localhost/v1.43/containers/json"])
        #expect(abstract.status == 0 && abstract.stdout.contains("\"c0ffee\""), "\(abstract.stdout)\(abstract.stderr)")
        // curl's codes: a socket nobody listens on is exit 7, a path too long for one exit 6.
        let missing = try await runProcess(CLITests.binary, ["-sS", "--unix-socket", "/nonexistent/courier.sock", "http://localhost/"])
        #expect(missing.status == 7, "\(missing.status) \(missing.stderr)")
        let long = try await runProcess(CLITests.binary, ["-sS", "--unix-socket", "/tmp/" + String(repeating: "x", count: 200),
                                                          "http://localhost/"])
        #expect(long.status == 6 && long.stderr.contains("Unix socket path too long"), "\(long.status) \(long.stderr)")
        // A proxy is not used (curl's rule).
        let proxied = try await runProcess(CLITests.binary, ["-s", "-x", "http://127.0.0.1:9", "--unix-socket", Self.servers.path,
                                                             "http://localhost/_ping"])
        #expect(proxied.status == 0 && proxied.stdout == "OK", "\(proxied.status) \(proxied.stderr)")
    }
}

/// uds_server.py twice: on a socket file in the temporary directory and on an abstract name,
/// each ending when the test process does.
final class UnixSocketServers: Sendable {
    let path: String
    let abstractName: String

    init() {
        let tag = "courier-uds-\(getpid())"
        path = NSTemporaryDirectory() + tag + ".sock"
        abstractName = tag
        try? FileManager.default.removeItem(atPath: path)
        for where_ in [path, "@" + abstractName] { Self.start(where_) }
    }

    static var script: String { TestServers.packageRoot + "/Tests/Servers/uds_server.py" }

    /// Starts one and waits for its "ready" line (it listens from then on).
    private static func start(_ where_: String) {
        let process = TestServers.guardedServer(script, [where_])
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try! process.run()
        _ = pipe.fileHandleForReading.availableData
    }
}
