import Foundation
import Testing
@testable import Courier
@testable import CourierCore

/// Memory pressure drops memory tiers: the watcher on the loop, fed by a file that behaves like a
/// cgroup v2 `memory.events` (the kernel's own files cannot be made to change on demand).
@Suite("Memory pressure")
struct MemoryPressureTests {
    @Test func aRiseOfTheHighCounterDropsTheMemoryTiers() async throws {
        let path = TestServers.shared.root + "/memory.events-\(UUID().uuidString.prefix(8))"
        try "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\n".write(toFile: path, atomically: false, encoding: .utf8)
        let cache = try Cache()
        cache.core.store(storedResponse(key: "http://pressure.example/a"))
        let registry = CacheRegistry()
        registry.register(cache.core)
        let watcher = await withCheckedContinuation { (done: CheckedContinuation<UncheckedSendable<MemoryPressureWatcher>, Never>) in
            Runtime.shared.withUVLoop { loop in
                done.resume(returning: UncheckedSendable(MemoryPressureWatcher(uvLoop: loop, source: .cgroupEvents(path: path), registry: registry)))
            }
        }
        #expect(watcher.value.source == .cgroupEvents(path: path))
        // A change that is not pressure (the low counter) keeps the tier.
        try "low 5\nhigh 0\nmax 0\noom 0\noom_kill 0\n".write(toFile: path, atomically: false, encoding: .utf8)
        #expect(await waitOnLoop { watcher.value.notifications == 0 })
        try "low 5\nhigh 1\nmax 0\noom 0\noom_kill 0\n".write(toFile: path, atomically: false, encoding: .utf8)
        #expect(await waitOnLoop { watcher.value.notifications == 1 })
        #expect(cache.statistics.memoryEntries == 0)
        _ = await onLoop { watcher.value.close(); return 0 }
    }

    @Test func anUnavailableSourceWatchesNothing() async {
        let watcher = await withCheckedContinuation { (done: CheckedContinuation<UncheckedSendable<MemoryPressureWatcher>, Never>) in
            Runtime.shared.withUVLoop { loop in
                done.resume(returning: UncheckedSendable(MemoryPressureWatcher(uvLoop: loop, source: .psi(path: "/nonexistent/pressure"),
                                                                                 registry: CacheRegistry())))
            }
        }
        #expect(watcher.value.source == nil)
    }

    @Test func theLoopWatchesWhatTheSystemOffersOnceACacheExists() async throws {
        _ = try Cache()
        let source = await withCheckedContinuation { (done: CheckedContinuation<UncheckedSendable<MemoryPressureWatcher.Source?>, Never>) in
            Runtime.shared.memoryPressureSource { done.resume(returning: UncheckedSendable($0)) }
        }
        // Which source depends on the kernel and the cgroup setup; this machine's is reported.
        print("memory pressure source: \(String(describing: source.value))")
        if FileManager.default.fileExists(atPath: "/proc/pressure/memory") || FileManager.default.fileExists(atPath: "/sys/fs/cgroup/memory") {
            #expect(source.value != nil)
        }
    }
}

/// A stored response for tests that fill a cache directly.
func storedResponse(key: String, body: String = "b") -> StoredResponse {
    StoredResponse(key: key, varyNames: [], variantKey: "", status: 200, version: 1, reason: "OK",
                   headers: ["Cache-Control": "max-age=60"], body: Array(body.utf8), requestTime: HTTPDate.now(),
                   responseTime: HTTPDate.now(), bodyDecoded: false)
}
