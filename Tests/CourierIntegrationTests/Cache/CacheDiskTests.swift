import Foundation
import Testing
@testable import Courier
@testable import CourierCore

/// The disk tier through the library and the CLI: restarts, `kill -9`, damaged files, caps, and
/// several processes sharing one directory.
@Suite("Cache on disk")
struct CacheDiskTests {
    let s = TestServers.shared

    func directory() -> String {
        let path = s.root + "/cache-\(UUID().uuidString.prefix(8))"
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    func cacheFiles(_ directory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.count == 16 }
    }

    func cli(_ arguments: [String]) async throws -> ProcessResult {
        try await runProcess(CLITests.binary, arguments)
    }

    // MARK: The library

    @Test func aNewCacheOnTheSameDirectoryFindsWhatTheOldOneStored() async throws {
        let resource = ScriptedResource("restart")
        await resource.configure(headers: [("Cache-Control", "max-age=600")], body: "persisted")
        let dir = directory()
        let (first, firstCache) = cachedEngine(Cache.Configuration(directory: dir))
        _ = try await first.get(resource.path)
        firstCache.flush()
        let (second, secondCache) = cachedEngine(Cache.Configuration(directory: dir))
        let hit = try await second.get(resource.path)
        #expect(hit.cachePhase == .cached(stale: false) && hit.bodyText == "persisted")
        #expect(secondCache.statistics.diskHits == 1)
        #expect(await resource.requests() == 1)
    }

    @Test func droppingTheMemoryTierLeavesDiskHits() async throws {
        let resource = ScriptedResource("drop")
        await resource.configure(headers: [("Cache-Control", "max-age=600")], body: "on disk too")
        let (api, cache) = cachedEngine(Cache.Configuration(directory: directory()))
        _ = try await api.get(resource.path)
        cache.flush()
        _ = try await api.get(resource.path)
        #expect(cache.statistics.memoryHits == 1)
        cache.dropMemory()
        #expect(cache.statistics.memoryEntries == 0)
        #expect(try await api.get(resource.path).bodyText == "on disk too")
        #expect(cache.statistics.diskHits == 1)
        // (Cache.dropAllMemory() would drop the caches of tests running beside this one: a
        // registry of its own shows the same thing.)
        #expect(cache.statistics.memoryEntries == 1, "the disk hit went back into memory")
        let registry = CacheRegistry()
        registry.register(cache.core)
        registry.dropMemoryTiers()
        #expect(cache.statistics.memoryEntries == 0)
    }

    @Test func damagedFilesAreMissesNotErrors() async throws {
        let resource = ScriptedResource("damaged")
        await resource.configure(headers: [("Cache-Control", "max-age=600")], body: "whole")
        let dir = directory()
        let (writer, writerCache) = cachedEngine(Cache.Configuration(directory: dir, memoryCapacity: 0))
        _ = try await writer.get(resource.path)
        writerCache.flush()
        for name in cacheFiles(dir) {
            let path = dir + "/" + name
            var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            bytes[bytes.count - 10] ^= 0x55
            try bytes.write(to: URL(fileURLWithPath: path))
        }
        let (reader, readerCache) = cachedEngine(Cache.Configuration(directory: dir, memoryCapacity: 0))
        let response = try await reader.get(resource.path)
        #expect(response.cachePhase == .fresh && response.bodyText == "whole")
        #expect(readerCache.statistics.corruptFilesRemoved == 1)
        readerCache.flush()
        #expect(try await reader.get(resource.path).cachePhase == .cached(stale: false), "stored again, intact")
    }

    @Test func theDiskCapEvictsTheLeastRecentlyUsed() async throws {
        let dir = directory()
        let body = String(repeating: "b", count: 4000)
        var configuration = Cache.Configuration(directory: dir, memoryCapacity: 0, diskCapacity: 20_000)
        configuration.memoryEntryLimit = 0
        let (api, cache) = cachedEngine(configuration)
        var resources: [ScriptedResource] = []
        for index in 0..<10 {
            let resource = ScriptedResource("cap\(index)")
            await resource.configure(headers: [("Cache-Control", "max-age=600")], body: body)
            _ = try await api.get(resource.path)
            cache.flush()
            resources.append(resource)
        }
        #expect(cache.statistics.diskEvictions > 0)
        #expect(cache.statistics.diskBytes <= 20_000)
        let total = cacheFiles(dir).reduce(0) { $0 + ((try? FileManager.default.attributesOfItem(atPath: dir + "/" + $1)[.size] as? Int) ?? 0) }
        #expect(total <= 20_000)
        #expect(try await api.get(resources[9].path).cachePhase == .cached(stale: false), "the newest stayed")
    }

    @Test func aCacheDirectoryThatCannotBeCreatedIsAnError() {
        #expect(throws: CourierError.self) { _ = try Cache(directory: "/proc/no/such/place") }
    }

    // MARK: The CLI across invocations

    @Test func cacheDirMakesInvocationsShareACache() async throws {
        let resource = ScriptedResource("cli")
        await resource.configure(headers: [("Cache-Control", "max-age=600"), ("ETag", "\"c\"")], body: "from the origin")
        let dir = directory()
        var statuses: [String] = []
        for _ in 0..<3 {
            let r = try await cli(["-s", "--cache-dir", dir, "-w", "\n%{cache_status}", resource.url])
            #expect(r.status == 0)
            let lines = r.stdout.split(separator: "\n")
            #expect(lines.first == "from the origin")
            statuses.append(String(lines.last ?? ""))
        }
        #expect(statuses == ["miss", "hit", "hit"])
        #expect(await resource.requests() == 1)
        let forced = try await cli(["-s", "--cache-dir", dir, "-H", "Cache-Control: no-cache", "-o", "/dev/null", "-w", "%{cache_status}", resource.url])
        #expect(forced.stdout == "revalidated")
        let uncached = try await cli(["-s", "-o", "/dev/null", "-w", "%{cache_status}", resource.url])
        #expect(uncached.stdout == "bypass", "without --cache-dir nothing is cached")
        #expect(await resource.requests() == 3)
    }

    /// `-r` with `--cache-dir`: each part is kept on disk, and a range inside the parts two
    /// invocations fetched is a hit, as is the whole they make together (RFC 9111 section 3.4).
    @Test func cliRangesShareTheCachesParts() async throws {
        let resource = ScriptedResource("cli-range")
        await resource.configure(headers: [("Cache-Control", "max-age=600"), ("ETag", "\"r\"")], body: "0123456789abcdefghij", ranges: true)
        let dir = directory()
        var seen: [String] = []
        for range in ["0-9", "10-19", "5-14"] {
            let r = try await cli(["-s", "--cache-dir", dir, "-r", range, "-w", " %{http_code} %{cache_status}", resource.url])
            #expect(r.status == 0)
            seen.append(r.stdout)
        }
        #expect(seen == ["0123456789 206 miss", "abcdefghij 206 miss", "56789abcde 206 hit"])
        let whole = try await cli(["-s", "--cache-dir", dir, "-w", " %{http_code} %{cache_status}", resource.url])
        #expect(whole.stdout == "0123456789abcdefghij 200 hit")
        #expect(await resource.requests() == 2)
    }

    /// `-v` and `--trace-ascii` on a cache hit say nothing was sent, instead of a connection and a
    /// request head that never happened.
    @Test func verboseOnACacheHitShowsNoRequest() async throws {
        let resource = ScriptedResource("verbose-hit")
        await resource.configure(headers: [("Cache-Control", "max-age=600")], body: "v")
        let dir = directory()
        let first = try await cli(["-s", "-v", "--cache-dir", dir, resource.url])
        #expect(first.stderr.contains("> GET ") && first.stderr.contains("* Connected to "), "\(first.stderr)")
        let trace = dir + "/trace.txt"
        let hit = try await cli(["-s", "-v", "--trace-ascii", trace, "--cache-dir", dir, "-w", "%{cache_status}", resource.url])
        #expect(hit.stdout == "vhit")
        #expect(hit.stderr.contains("* No request sent: the response comes from the cache"), "\(hit.stderr)")
        #expect(!hit.stderr.contains("> GET ") && !hit.stderr.contains("Trying"), "\(hit.stderr)")
        #expect(hit.stderr.contains("< HTTP/1.1 200"), "the stored head is shown: \(hit.stderr)")
        let traced = try String(contentsOfFile: trace, encoding: .utf8)
        #expect(traced.contains("== Info: No request sent") && !traced.contains("=> Send header"), "\(traced)")
        #expect(await resource.requests() == 1)
    }

    @Test func dumpHeaderWritesEveryHeadAsReceivedOrServed() async throws {
        let resource = ScriptedResource("dump")
        await resource.configure(headers: [("Cache-Control", "max-age=600"), ("X-Origin", "1")], body: "d")
        let dir = directory()
        let dump = dir + "/heads"
        let redirect = s.scripted + "/redirect?code=302&to=" + resource.path
        let first = try await cli(["-sL", "--cache-dir", dir, "-D", dump, "-o", "/dev/null", redirect])
        #expect(first.status == 0)
        let heads = try String(contentsOfFile: dump, encoding: .utf8)
        #expect(heads.hasPrefix("HTTP/1.1 302 Redirect\r\n"))
        #expect(heads.contains("\r\n\r\nHTTP/1.1 200 Resource\r\n"))
        #expect(heads.contains("X-Origin: 1\r\n") && heads.hasSuffix("\r\n\r\n"))
        let second = try await cli(["-s", "--cache-dir", dir, "-D", dump, "-o", "/dev/null", resource.url])
        #expect(second.status == 0)
        let served = try String(contentsOfFile: dump, encoding: .utf8)
        #expect(served.hasPrefix("HTTP/1.1 200 Resource\r\n") && served.contains("\r\nAge: "))
        let toStdout = try await cli(["-s", "--cache-dir", dir, "-D", "-", "-o", "/dev/null", resource.url])
        #expect(toStdout.stdout.contains("Age: "))
    }

    @Test func aGeneratedGatewayTimeoutIsADeliveredResponse() async throws {
        let resource = ScriptedResource("gw")
        let dir = directory()
        let plain = try await cli(["-s", "--cache-dir", dir, "-H", "Cache-Control: only-if-cached", "-o", "/dev/null",
                                   "-w", "%{http_code} %{cache_status}", resource.url])
        #expect(plain.status == 0 && plain.stdout == "504 miss")
        let failing = try await cli(["-sf", "--cache-dir", dir, "-H", "Cache-Control: only-if-cached", resource.url])
        #expect(failing.status == 22)
        #expect(await resource.requests() == 0)
    }

    @Test func staleIfErrorWhileTheServerIsDownThroughTheCLI() async throws {
        let resource = ScriptedResource("down")
        await resource.configure(headers: [("Cache-Control", "max-age=0, stale-if-error=600"), ("ETag", "\"x\"")], body: "last known")
        let dir = directory()
        _ = try await cli(["-s", "--cache-dir", dir, "-o", "/dev/null", resource.url])
        await resource.configure(fail: "reset")
        let r = try await cli(["-s", "--cache-dir", dir, "-w", "\n%{cache_status}", resource.url])
        #expect(r.status == 0)
        #expect(r.stdout == "last known\nstale")
    }

    @Test func twentyFiveInvocationsAtOnceShareOneDirectory() async throws {
        let resources = (0..<8).map { ScriptedResource("crowd\($0)") }
        for (index, resource) in resources.enumerated() {
            await resource.configure(headers: [("Cache-Control", "max-age=600")], body: "body \(index) " + String(repeating: "x", count: 20_000))
        }
        let dir = directory()
        let urls = resources.map(\.url)
        let results = try await withThrowingTaskGroup(of: ProcessResult.self) { group in
            for _ in 0..<25 { group.addTask { try await self.cli(["-s", "--cache-dir", dir] + urls) } }
            var all: [ProcessResult] = []
            for try await r in group { all.append(r) }
            return all
        }
        let expected = resources.indices.map { "body \($0) " + String(repeating: "x", count: 20_000) }.joined()
        for r in results {
            #expect(r.status == 0, "\(r.stderr)")
            #expect(r.stdout == expected)
        }
        var before = 0
        for resource in resources { before += await resource.requests() }
        let after = try await cli(["-s", "--cache-dir", dir, "-w", "%{cache_status} "] + urls.flatMap { ["-o", "/dev/null", $0] })
        #expect(after.status == 0)
        #expect(after.stdout == String(repeating: "hit ", count: urls.count))
        var total = 0
        for resource in resources { total += await resource.requests() }
        #expect(total == before, "the last run was answered from the directory")
        #expect(!((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).contains { $0.hasPrefix(".courier-tmp-") })
    }

    @Test func killMinus9MidWriteLeavesAUsableCache() async throws {
        let dir = directory()
        let urls = s.nginx + "/small?n=[1-400]"
        for attempt in 0..<3 {
            // URLs of its own each time, too many to finish before the kill (a run over URLs the
            // cache already holds would end before it), then one that never answers: on a loaded
            // machine the sleep below can outlast them all, and the kill must still find the
            // process running (it would otherwise have exited 0).
            let process = Process()
            process.executableURL = URL(fileURLWithPath: CLITests.binary)
            process.arguments = ["-s", "--cache-dir", dir, "-o", "/dev/null", s.nginx + "/small?run=\(attempt)&n=[1-20000]", urls,
                                 s.scripted + "/silence?s=60"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            try await Task.sleep(for: .milliseconds(50 + attempt * 40))
            kill(process.processIdentifier, SIGKILL)
            // waitpid (ProcessRunner's reap), not waitUntilExit: Foundation sometimes misses a
            // child's end.
            #expect(reap(process, within: 60) == 128 + SIGKILL, "killed by SIGKILL")
        }
        // Every file is either a whole entry or refused (and removed); nothing crashes.
        let cache = try Cache(directory: dir, memoryCapacity: 0)
        for name in cacheFiles(dir) {
            let bytes = [UInt8]((try? Data(contentsOf: URL(fileURLWithPath: dir + "/" + name))) ?? Data())
            #expect(CacheFileFormat.decode(bytes) != nil, "a renamed file is always whole")
        }
        // Tear one on purpose, the way a crash without rename would.
        if let victim = cacheFiles(dir).first {
            let path = dir + "/" + victim
            let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: path))
        }
        // (-o applies to the first URL only, as in curl: the other bodies go to stdout.)
        let r = try await cli(["-s", "--cache-dir", dir, "-o", "/dev/null", "-w", "<%{http_code}>", urls])
        #expect(r.status == 0)
        #expect(r.stdout.components(separatedBy: "<200>").count - 1 == 400)
        _ = cache
    }
}
