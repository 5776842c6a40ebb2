import Foundation
import Testing

/// Faults between Courier and nginx (Tests/Servers/fault_proxy.py): a relay that fragments
/// responses into single bytes, delays them, resets connections or stalls at random points.
/// Tests/CPrograms/scenarios.c `faults` sends 200 requests through it in its own process, 16 at a
/// time: every one ends with the exact body or a specific error within its deadlines, nothing is
/// left running or queued, and after shutdown no descriptor is left open.
@Suite("Fault injection")
struct FaultInjectionTests {
    let s = TestServers.shared

    @Test(arguments: [("fragment", "/small", "strict"), ("delay", "/medium", "strict"), ("reset", "/medium", "lenient"),
                      ("stall", "/medium", "lenient"), ("mixed", "/medium", "lenient")])
    func everyRequestEndsWholeOrWithItsError(mode: String, path: String, strictness: String) async throws {
        let bin = try await CExamples.shared.directory()
        let (proxy, port) = try startProxy(mode: mode, seed: 20261201)
        defer { proxy.terminate() }
        let run = try await runProcess(bin + "/scenarios", ["faults", "http://127.0.0.1:\(port)", path, s.root + "/html" + path,
                                                            "200", strictness])
        #expect(run.status == 0, "\(mode): \(run.stdout)\(run.stderr)")
        #expect(run.stdout.contains("200 done"), "\(run.stdout)")
    }

    /// The proxy (it dies with the test process, Tests/Servers/parent_guard.py), and the port it
    /// listens on.
    func startProxy(mode: String, seed: Int) throws -> (Process, Int) {
        let process = TestServers.guardedServer(TestServers.packageRoot + "/Tests/Servers/fault_proxy.py",
                                                [String(s.nginxPort), mode, String(seed)])
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = pipe.fileHandleForReading.availableData
            guard !chunk.isEmpty else { throw CocoaError(.fileReadUnknown) }
            line.append(chunk)
        }
        let port = Int(String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))!
        return (process, port)
    }
}
