import Foundation
import Testing
@testable import CourierCore

/// Running out of a resource gives a clear error, corrupts nothing, and service recovers when the
/// resource returns: a full disk under downloads and the cache (a file-size limit, `ulimit -f`,
/// makes every write past it fail as a full disk does), descriptors (`RLIMIT_NOFILE`, in a C
/// program of its own), a name that does not resolve.
@Suite("Resource exhaustion")
struct ResourceExhaustionTests {
    let s = TestServers.shared

    /// The CLI with writes limited to `kilobytes` per file (SIGXFSZ ignored, so a write fails
    /// with EFBIG instead of killing the process).
    func cliWithFullDisk(kilobytes: Int, _ arguments: [String]) async throws -> ProcessResult {
        let quoted = ([CLITests.binary] + arguments).map { "'" + $0 + "'" }.joined(separator: " ")
        return try await runProcess("/bin/sh", ["-c", "trap '' XFSZ; ulimit -f \(kilobytes); exec \(quoted)"])
    }

    func directory(_ label: String) -> String {
        let path = s.root + "/exhaust-\(label)-\(UUID().uuidString.prefix(8))"
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test func aDownloadOntoAFullDiskFailsAndLeavesTheDestinationAlone() async throws {
        let dir = directory("download")
        let destination = dir + "/out.bin"
        let full = try await cliWithFullDisk(kilobytes: 8, ["-s", "-S", "-o", destination, s.nginx + "/medium"])
        #expect(full.status == 23, "curl's write error: \(full.stderr)")
        #expect(!FileManager.default.fileExists(atPath: destination), "no partial file at the destination")
        try Data("before".utf8).write(to: URL(fileURLWithPath: destination))
        let again = try await cliWithFullDisk(kilobytes: 8, ["-s", "-o", destination, s.nginx + "/medium"])
        #expect(again.status == 23)
        #expect(try String(contentsOfFile: destination, encoding: .utf8) == "before", "the old file is untouched")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir) == ["out.bin"], "no temporary file left")
        // Space again: the download succeeds.
        let ok = try await cliWithFullDisk(kilobytes: 1024, ["-s", "-o", destination, s.nginx + "/medium"])
        #expect(ok.status == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: destination)).count == 16_384)
    }

    @Test func aCacheOnAFullDiskStillDeliversAndStoresWhenSpaceReturns() async throws {
        let dir = directory("cache")
        let url = s.nginx + "/medium?full-disk"
        let arguments = ["-s", "--cache-dir", dir, "-o", "/dev/null", "-w", "%{http_code} %{size_download} %{cache_status}", url]
        let full = try await cliWithFullDisk(kilobytes: 8, arguments)
        #expect(full.status == 0, "a store that fails is not the request's failure: \(full.stderr)")
        #expect(full.stdout == "200 16384 miss")
        // Nothing half-written was left where a reader could take it for an entry.
        let left = (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []
        for name in left {
            let bytes = [UInt8]((try? Data(contentsOf: URL(fileURLWithPath: dir + "/" + name))) ?? Data())
            #expect(name.hasPrefix(".courier-tmp-") == false, "temporary file \(name) left behind")
            #expect(bytes.isEmpty || CacheFileFormat.decode(bytes) != nil || name.hasSuffix(".lock"), "\(name) is not a whole entry")
        }
        let stillMiss = try await cliWithFullDisk(kilobytes: 8, arguments)
        #expect(stillMiss.stdout == "200 16384 miss", "nothing was stored")
        // Space again: stored, then answered from the directory.
        let stored = try await cliWithFullDisk(kilobytes: 1024, arguments)
        #expect(stored.stdout == "200 16384 miss")
        let hit = try await cliWithFullDisk(kilobytes: 1024, arguments)
        #expect(hit.status == 0)
        #expect(hit.stdout.hasSuffix(" hit") || hit.stdout.hasSuffix(" revalidated"), "\(hit.stdout)")
    }

    @Test func runningOutOfDescriptorsFailsSomeRequestsAndServiceRecovers() async throws {
        let bin = try await CExamples.shared.directory()
        // Each answer held a second, so the sixteen are in flight at once and each needs a
        // connection of its own (from nginx's instant answers a loaded run could send them one
        // after another through the one kept-alive connection, and none needed a descriptor);
        // exactly three descriptors are left to open (scenarios.c fills the gaps below the limit).
        let run = try await runProcess(bin + "/scenarios", ["descriptors", s.scripted + "/slow?ms=1000"])
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
    }

    @Test func aNameThatDoesNotResolveIsADNSError() async throws {
        let run = try await runProcess(CLITests.binary, ["-s", "http://no-such-host.invalid/"])
        #expect(run.status == 6)
        let (t, _) = await fetch("http://no-such-host.invalid/")
        #expect(t.error?.code == .dnsFailure, "\(String(describing: t.error))")
        // The next request to a name that does resolve goes through.
        let (ok, _) = await fetch("http://localhost:\(s.nginxPort)/small")
        #expect(ok.error == nil && ok.responseBody.count == 100)
    }
}
