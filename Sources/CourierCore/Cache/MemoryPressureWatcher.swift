import CUV
import Glibc

/// Watches, on the loop, for Linux reporting memory pressure, and then drops the memory tiers of
/// every cache (MKNetworkKit dropped its memory cache on iOS's memory warning; this is Linux's).
///
/// Sources, the first available wins:
/// 1. A PSI trigger on `/proc/pressure/memory`: "some" tasks stalled on memory for 300 ms within
///    2 s (the kernel's own notification, pollable; windows that are a multiple of 2 s are
///    allowed to unprivileged processes).
/// 2. The process's cgroup v2 `memory.events`: the kernel signals a change of the file, and a
///    rise of its `high`, `max` or `oom` counters means the group hit its limits.
/// 3. The process's cgroup v1 `memory.pressure_level`, through an eventfd registered in
///    `cgroup.event_control` at the "medium" level.
/// With none (a kernel without PSI, in a cgroup without a memory controller) nothing is dropped
/// automatically; `Cache.dropMemory()` is the application's to call.
package final class MemoryPressureWatcher {
    package enum Source: Equatable, Sendable {
        case psi(path: String)
        case cgroupEvents(path: String)
        case cgroupPressureLevel(directory: String)
    }

    /// The source in use, or nil when none was available.
    package private(set) var source: Source?
    private let registry: CacheRegistry
    private var poll: UnsafeMutablePointer<uv_poll_t>?
    private var fileEvent: UnsafeMutablePointer<uv_fs_event_t>?
    private var fd: Int32 = -1
    private var eventFD: Int32 = -1
    private var counters: [String: UInt64] = [:]
    /// Times pressure was seen (tests).
    package private(set) var notifications = 0

    /// Watches `source` (nil: the first the system offers) and drops `registry`'s memory tiers.
    package init(uvLoop: UnsafeMutablePointer<uv_loop_t>, source requested: Source? = nil, registry: CacheRegistry = .shared) {
        self.registry = registry
        for candidate in requested.map({ [$0] }) ?? Self.systemSources() {
            source = candidate
            if start(candidate, uvLoop: uvLoop) { break }
            source = nil
            stop()
        }
    }

    /// Closes what it opened (loop thread).
    package func close() { stop() }

    // MARK: Sources

    /// What this system offers, in order of preference.
    private static func systemSources() -> [Source] {
        var sources: [Source] = [.psi(path: "/proc/pressure/memory")]
        guard let file = fopen("/proc/self/cgroup", "r") else { return sources }
        defer { fclose(file) }
        var line = [CChar](repeating: 0, count: 4096)
        while fgets(&line, Int32(line.count), file) != nil {
            let text = String(cString: line).trimmingCharacters(in: "\n")
            let parts = text.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count == 3 else { continue }
            if parts[0] == "0", parts[1].isEmpty {
                sources.append(.cgroupEvents(path: "/sys/fs/cgroup" + parts[2] + "/memory.events"))
            } else if parts[1].split(separator: ",").contains("memory") {
                sources.append(.cgroupPressureLevel(directory: "/sys/fs/cgroup/memory" + parts[2]))
            }
        }
        return sources
    }

    private func start(_ source: Source, uvLoop: UnsafeMutablePointer<uv_loop_t>) -> Bool {
        switch source {
        case .psi(let path):
            fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC)
            guard fd >= 0 else { return false }
            let trigger = Array("some 300000 2000000\0".utf8)
            guard write(fd, trigger, trigger.count) == trigger.count else { return false }
            return startPoll(fd, events: Int32(UV_PRIORITIZED.rawValue), uvLoop: uvLoop)
        case .cgroupEvents(let path):
            guard access(path, R_OK) == 0 else { return false }
            counters = Self.readCounters(path)
            let handle = UnsafeMutablePointer<uv_fs_event_t>.allocate(capacity: 1)
            uv_fs_event_init(uvLoop, handle)
            handle.pointee.data = Unmanaged.passUnretained(self).toOpaque()
            fileEvent = handle
            return uv_fs_event_start(handle, { handle, _, _, _ in
                Unmanaged<MemoryPressureWatcher>.fromOpaque(handle!.pointee.data).takeUnretainedValue().eventsFileChanged()
            }, path, 0) == 0
        case .cgroupPressureLevel(let directory):
            fd = open(directory + "/memory.pressure_level", O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { return false }
            eventFD = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
            guard eventFD >= 0 else { return false }
            let control = open(directory + "/cgroup.event_control", O_WRONLY | O_CLOEXEC)
            guard control >= 0 else { return false }
            defer { Glibc.close(control) }
            let registration = Array("\(eventFD) \(fd) medium".utf8)
            guard write(control, registration, registration.count) == registration.count else { return false }
            return startPoll(eventFD, events: Int32(UV_READABLE.rawValue), uvLoop: uvLoop)
        }
    }

    private func startPoll(_ descriptor: Int32, events: Int32, uvLoop: UnsafeMutablePointer<uv_loop_t>) -> Bool {
        let handle = UnsafeMutablePointer<uv_poll_t>.allocate(capacity: 1)
        guard uv_poll_init(uvLoop, handle, descriptor) == 0 else {
            handle.deallocate()
            return false
        }
        handle.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        poll = handle
        return uv_poll_start(handle, events) { handle, status, _ in
            let watcher = Unmanaged<MemoryPressureWatcher>.fromOpaque(handle!.pointee.data).takeUnretainedValue()
            if status >= 0 { watcher.pollFired() }
        } == 0
    }

    private func stop() {
        if let poll {
            uv_poll_stop(poll)
            uv_close(UnsafeMutablePointer<uv_handle_t>(OpaquePointer(poll))) { UnsafeMutableRawPointer($0!).deallocate() }
            self.poll = nil
        }
        if let fileEvent {
            uv_fs_event_stop(fileEvent)
            uv_close(UnsafeMutablePointer<uv_handle_t>(OpaquePointer(fileEvent))) { UnsafeMutableRawPointer($0!).deallocate() }
            self.fileEvent = nil
        }
        if fd >= 0 { Glibc.close(fd) }
        if eventFD >= 0 { Glibc.close(eventFD) }
        fd = -1
        eventFD = -1
    }

    // MARK: Events

    private func pollFired() {
        if eventFD >= 0 {
            var value: UInt64 = 0
            _ = read(eventFD, &value, 8)
        }
        pressure()
    }

    private func eventsFileChanged() {
        guard case .cgroupEvents(let path)? = source else { return }
        let now = Self.readCounters(path)
        let rose = ["high", "max", "oom"].contains { (now[$0] ?? 0) > (counters[$0] ?? 0) }
        counters = now
        if rose { pressure() }
    }

    private func pressure() {
        notifications += 1
        registry.dropMemoryTiers()
    }

    /// "name value" lines of a cgroup v2 events file.
    private static func readCounters(_ path: String) -> [String: UInt64] {
        guard let file = fopen(path, "r") else { return [:] }
        defer { fclose(file) }
        var counters: [String: UInt64] = [:]
        var line = [CChar](repeating: 0, count: 256)
        while fgets(&line, Int32(line.count), file) != nil {
            let parts = String(cString: line).split(separator: " ")
            if parts.count == 2, let value = UInt64(parts[1].trimmingCharacters(in: "\n")) { counters[String(parts[0])] = value }
        }
        return counters
    }
}

extension StringProtocol {
    /// Without the given characters at either end.
    fileprivate func trimmingCharacters(in set: String) -> String {
        var slice = Substring(self)
        while let first = slice.first, set.contains(first) { slice = slice.dropFirst() }
        while let last = slice.last, set.contains(last) { slice = slice.dropLast() }
        return String(slice)
    }
}
