import Foundation
@testable import CourierCore

/// The HTTP/2 peers of the suite, started once on first use: nghttpd (Debian's nghttp2-server)
/// speaking h2c with prior knowledge, and the scripted server of `Tests/Servers/h2_server.py`
/// (good and hostile behaviours by path, one port announcing MAX_CONCURRENT_STREAMS 1, one that
/// never sends SETTINGS). nginx with `http2` is in `TestServers` (`tlsPorts["h2"]`).
final class HTTP2Servers: @unchecked Sendable {
    static let shared = HTTP2Servers()

    let nghttpdPort: Int
    let scriptedPort: Int
    let oneStreamPort: Int
    let silentPort: Int
    /// SETTINGS_MAX_CONCURRENT_STREAMS 0 for good, and 0 raised to 100 after 300 ms.
    let zeroStreamsPort: Int
    let raisedStreamsPort: Int
    /// TLS offering h2 and http/1.1 (HTTP/1.1 answers "via http/1.1 PATH").
    let tlsPort: Int
    let root: String

    var nghttpd: String { "http://127.0.0.1:\(nghttpdPort)" }
    var scripted: String { "http://127.0.0.1:\(scriptedPort)" }

    private init() {
        let base = TestServers.shared
        root = base.root + "/h2root"
        try? FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: root + "/small", contents: Data("hello over h2\n".utf8))
        FileManager.default.createFile(atPath: root + "/medium", contents: Data((0..<400_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }))
        FileManager.default.createFile(atPath: root + "/large", contents: Data((0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) }))
        // Debian's interpreter: python3-h2 is a Debian package (`make test` installs it).
        let script = TestServers.guardedServer(TestServers.packageRoot + "/Tests/Servers/h2_server.py",
                                               [base.certs + "/server-chain.pem", base.certs + "/server.key"])
        script.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        let pipe = Pipe()
        script.standardOutput = pipe
        script.standardError = FileHandle.nullDevice
        script.standardInput = FileHandle.nullDevice
        try! script.run()
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = pipe.fileHandleForReading.availableData
            precondition(!chunk.isEmpty, "h2_server.py exited before printing its ports (is python3-h2 installed?)")
            line.append(chunk)
        }
        let ports = String(decoding: line, as: UTF8.self).split(whereSeparator: { $0 == " " || $0 == "\n" }).compactMap { Int($0) }
        (scriptedPort, oneStreamPort, silentPort, tlsPort) = (ports[0], ports[1], ports[2], ports[3])
        (zeroStreamsPort, raisedStreamsPort) = (ports[4], ports[5])
        nghttpdPort = Self.startNghttpd(root: root)
        let children = [script]
        let previous = TestServers.atExit
        TestServers.atExit = {
            for p in children where p.isRunning { p.terminate() }
            previous?()
        }
    }

    /// nghttpd on a free port (retrying when another process took it first), supervised like nginx.
    private static func startNghttpd(root: String) -> Int {
        for _ in 0..<10 {
            let socket = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) } }
            let port = Int(UInt16(bigEndian: address.sin_port))
            close(socket)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: pythonPath)
            process.arguments = [TestServers.packageRoot + "/Tests/Servers/supervise.py", String(getpid()), "--",
                                 "/usr/sbin/nghttpd", "--no-tls", "-a", "127.0.0.1", "-d", root, String(port)]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try! process.run()
            for _ in 0..<100 {
                let probe = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
                var target = sockaddr_in()
                target.sin_family = sa_family_t(AF_INET)
                target.sin_addr.s_addr = inet_addr("127.0.0.1")
                target.sin_port = in_port_t(UInt16(port).bigEndian)
                let connected = withUnsafePointer(to: &target) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(probe, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } } == 0
                close(probe)
                if connected { return port }
                usleep(50_000)
            }
            process.terminate()
        }
        preconditionFailure("nghttpd did not start")
    }
}
